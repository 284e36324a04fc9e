//! `WindowRankOperator`: a window Top-N (Flink's `WindowRankProcessor` with ROW_NUMBER): per
//! window and key the rows ranked by the ORDER BY, ties to the earlier arrival, kept up to
//! the last rank wanted; when the watermark passes a window's end its rows in range are
//! emitted once, with their rank when the query reads it. A row whose window has fired is
//! late: dropped and counted. Windows fire in trigger-time order, then key bytes (the
//! trigger time as the window deduplication's, DST-corrected on TIMESTAMP_LTZ).
//!
//! Rows are `arrow-row` bytes: the order key (sorting as the ORDER BY asks) and the whole
//! row.
//!
//! State is snapshotted per key group: per (key, window end) its ranked rows, in rank order;
//! restoring a window sets its timer again. The late-row count is instance state.

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch};
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;
use hashbrown::HashMap;

use super::aggregate::{StateReader, put_bytes, put_i64, put_u32};
use super::state::instance::{LateRows, restore_late_rows, snapshot_late_rows};
use super::state::key::{
    KeyEncoder, key_bytes, optional_encoder, order_converter, whole_row_converter,
};
use super::state::key_group::GroupBuffers;
use super::state::key_group::KeyGroupRange;
use super::state::key_table::KeyTable;
use super::state::timer::EventTimers;
use super::window_assigner::{WindowClock, close_window, restored_window_time};
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, OperatorContext, Output};
use crate::exec::time_column::timestamp_column;
use crate::plan::logical::OrderKey;
use crate::types::DataType;
use crate::types::chunk::{StreamChunk, batch_with_rows};
use crate::types::time::SessionZone;

/// A ranked row: its order key and bytes.
struct Ranked {
    order: Box<[u8]>,
    row: Box<[u8]>,
}

pub struct WindowRankOperator {
    output: SchemaRef,
    window_end: usize,
    range: (u64, u64),
    with_rank: bool,
    encoder: Option<KeyEncoder>,
    order_columns: Vec<usize>,
    order: RowConverter,
    rows: RowConverter,
    window_clock: WindowClock,
    daylight_time: bool,
    /// Keys with open windows, each with how many.
    keys: KeyTable<u32>,
    windows: HashMap<(u32, i64), Vec<Ranked>>,
    /// (trigger time, key, window end) of every open window.
    timers: EventTimers,
    watermark: i64,
    late_rows: LateRows,
    key_groups: KeyGroupRange,
}

impl WindowRankOperator {
    /// A Top-N of rows of `input` per `keys` and the window ending at column `window_end`
    /// (of the window's time type `time_type`), ordered by `order`, ranks `range` kept;
    /// `output` is the input's columns, then the rank when `with_rank`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        input: SchemaRef,
        output: SchemaRef,
        keys: Vec<usize>,
        window_end: usize,
        order: &[OrderKey],
        range: (u64, u64),
        with_rank: bool,
        time_type: &DataType,
        zone: SessionZone,
    ) -> Result<Self, ExecError> {
        let ctx = OperatorContext::default();
        Ok(WindowRankOperator {
            encoder: optional_encoder(&input, keys)?,
            order_columns: order.iter().map(|o| o.column).collect(),
            order: order_converter(&input, order)?,
            rows: whole_row_converter(&input)?,
            output,
            window_end,
            range,
            with_rank,
            window_clock: WindowClock::new(time_type, zone),
            daylight_time: false,
            keys: KeyTable::new(ctx.max_parallelism),
            windows: HashMap::new(),
            timers: EventTimers::new(),
            watermark: i64::MIN,
            late_rows: LateRows::default(),
            key_groups: ctx.key_groups,
        })
    }

    /// Emits the windows whose trigger time is at or before `time`.
    fn fire(&mut self, time: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        let due = self.timers.take_due(time, &self.keys);
        if due.is_empty() {
            return Ok(());
        }
        let (first, last) = (self.range.0 as usize, self.range.1 as usize);
        let mut rows: Vec<Box<[u8]>> = Vec::new();
        let mut ranks: Vec<i64> = Vec::new();
        for &(_, key, end) in &due {
            if let Some(ranked) = self.windows.remove(&(key, end)) {
                for (i, r) in ranked.into_iter().enumerate() {
                    let rank = i + 1;
                    if rank >= first && rank <= last {
                        rows.push(r.row);
                        ranks.push(rank as i64);
                    }
                }
            }
            close_window(&mut self.keys, key);
        }
        if rows.is_empty() {
            return Ok(());
        }
        let parser = self.rows.parser();
        let mut columns: Vec<ArrayRef> = self
            .rows
            .convert_rows(rows.iter().map(|r| parser.parse(r)))?;
        if self.with_rank {
            columns.push(std::sync::Arc::new(Int64Array::from(ranks)));
        }
        let n = rows.len();
        out.emit(StreamChunk::inserts(batch_with_rows(
            self.output.clone(),
            columns,
            n,
        )?))
    }
}

impl Operator for WindowRankOperator {
    fn late_rows(&self) -> u64 {
        self.late_rows.count()
    }

    fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.keys.set_max_parallelism(ctx.max_parallelism);
        self.key_groups = ctx.key_groups;
        self.late_rows.open(ctx);
        self.daylight_time = self.window_clock.observes_daylight_time(ctx.now_millis());
        Ok(())
    }

    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        _out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        if !chunk.is_insert_only() {
            return Err(ExecError::Internal(
                "a window Top-N takes inserts only".into(),
            ));
        }
        let batch: &RecordBatch = &chunk.batch;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let ends = timestamp_column(batch, self.window_end, "the window end")?.clone();
        let keys = self.encoder.as_ref().map(|e| e.encode(batch)).transpose()?;
        let order_columns: Vec<ArrayRef> = self
            .order_columns
            .iter()
            .map(|&c| batch.column(c).clone())
            .collect();
        let orders = self.order.convert_columns(&order_columns)?;
        let rows = self.rows.convert_columns(batch.columns())?;
        let last = self.range.1 as usize;
        for row in 0..batch.num_rows() {
            if ends.is_null(row) {
                return Err(ExecError::Source(
                    "the window end of a window Top-N is NULL".into(),
                ));
            }
            let end = ends.value(row).div_euclid(1_000_000);
            let trigger = self.window_clock.trigger_time(end, self.daylight_time);
            if trigger <= self.watermark {
                self.late_rows.add();
                continue;
            }
            let (key, _) = self.keys.intern(key_bytes(keys.as_ref(), row));
            let order = orders.row(row);
            let ranked = match self.windows.get_mut(&(key, end)) {
                Some(ranked) => ranked,
                None => {
                    self.timers.register(trigger, key, end);
                    *self.keys.value_mut(key) += 1;
                    self.windows.entry((key, end)).or_default()
                }
            };
            // After every row of an equal order key: the earlier arrival ranks first.
            let at = ranked.partition_point(|r| *r.order <= *order.as_ref());
            if at >= last {
                continue;
            }
            ranked.insert(
                at,
                Ranked {
                    order: order.as_ref().into(),
                    row: rows.row(row).as_ref().into(),
                },
            );
            ranked.truncate(last);
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        self.watermark = self.watermark.max(watermark);
        self.fire(watermark, out)?;
        out.emit_watermark(watermark)
    }

    /// Per key group: for each window its key bytes, end, and count of rows, then per row
    /// (in rank order) its order key and bytes.
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        let mut groups = GroupBuffers::default();
        for (&(key, end), ranked) in &self.windows {
            let out = groups.group(self.keys.key_group(key));
            put_bytes(out, self.keys.bytes(key));
            put_i64(out, end);
            put_u32(out, ranked.len() as u32);
            for r in ranked {
                put_bytes(out, &r.order);
                put_bytes(out, &r.row);
            }
        }
        groups.into_snapshot()
    }

    fn restore(&mut self, key_group: u32, state: &[u8]) -> Result<(), ExecError> {
        self.key_groups.check_owned(key_group)?;
        let mut input = StateReader::new(state);
        while !input.is_empty() {
            let bytes = input.bytes()?;
            let end = restored_window_time(input.i64()?)?;
            let mut restored = Vec::new();
            for _ in 0..input.u32()? {
                let order = input.bytes()?.into();
                let row = input.bytes()?.into();
                restored.push(Ranked { order, row });
            }
            let (key, _) = self.keys.intern(bytes);
            if self.windows.contains_key(&(key, end)) {
                return Err(ExecError::Internal(
                    "a window Top-N's snapshot holds a window twice".into(),
                ));
            }
            let trigger = self.window_clock.trigger_time(end, self.daylight_time);
            self.timers.register(trigger, key, end);
            *self.keys.value_mut(key) += 1;
            self.windows.insert((key, end), restored);
        }
        Ok(())
    }

    /// The late-row count (see `state::instance`).
    fn snapshot_instance(&self) -> Option<Vec<u8>> {
        Some(snapshot_late_rows(&self.late_rows))
    }

    fn restore_instance(&mut self, parts: &[&[u8]]) -> Result<(), ExecError> {
        restore_late_rows(&mut self.late_rows, parts)
    }
}

#[cfg(test)]
#[path = "window_rank_tests.rs"]
mod tests;
