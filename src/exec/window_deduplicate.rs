//! `WindowDeduplicateOperator`: per window and key, the first or last row by event time
//! (Flink's `RowTimeWindowDeduplicateProcessor`), emitted once when the watermark passes the
//! window's end. Rows arrive with their window in two columns (`window_start`, `window_end`,
//! computed by the windowing TVF upstream), as the plan's window deduplication reads them.
//!
//! Keep-first replaces the kept row only by a strictly earlier one; keep-last by one at the
//! same time or later, so the later arrival wins a tie, as Flink's processors compare. A row
//! whose window has fired is late and dropped (and counted in [`late_rows`]).
//!
//! Each (key, window end) owns one kept row, stored as `arrow-row` bytes of all its columns
//! (decoded into a batch when the window fires). Windows fire in order of trigger time, then
//! key bytes. On a TIMESTAMP_LTZ time attribute the window columns are wall-clock times in
//! the session zone, and the trigger time the UTC instant of the window's last millisecond,
//! DST-corrected as the group window aggregate's.
//!
//! State is snapshotted per key group: for each kept row, its key, window end, time and row.
//! The late-row count is instance state.
//!
//! [`late_rows`]: WindowDeduplicateOperator::late_rows

use arrow_array::{Array, RecordBatch};
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;
use hashbrown::HashMap;

use super::aggregate::{StateReader, put_bytes, put_i64};
use super::state::instance::{LateRows, restore_late_rows, snapshot_late_rows};
use super::state::key::{KeyEncoder, key_bytes, optional_encoder, whole_row_converter};
use super::state::key_group::GroupBuffers;
use super::state::key_group::KeyGroupRange;
use super::state::key_table::KeyTable;
use super::state::timer::EventTimers;
use super::window_assigner::{WindowClock, close_window, restored_window_time};
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, OperatorContext, Output};
use crate::exec::time_column::timestamp_column;
use crate::types::DataType;
use crate::types::chunk::StreamChunk;
use crate::types::time::SessionZone;

const NANOS_PER_MILLI: i64 = 1_000_000;

/// The row kept for a key's window.
struct Kept {
    /// Event time (ms) of the row.
    time: i64,
    row: Box<[u8]>,
}

pub struct WindowDeduplicateOperator {
    schema: SchemaRef,
    window_end: usize,
    order_key: usize,
    keep_last: bool,
    encoder: Option<KeyEncoder>,
    rows: RowConverter,
    window_clock: WindowClock,
    daylight_time: bool,
    /// Keys with kept rows, each with how many windows it has open.
    keys: KeyTable<u32>,
    kept: HashMap<(u32, i64), Kept>,
    /// (trigger time, key, window end) of every kept row.
    timers: EventTimers,
    watermark: i64,
    late_rows: LateRows,
    key_groups: KeyGroupRange,
}

impl WindowDeduplicateOperator {
    /// Deduplication of rows of `schema` by `keys` and the window ending at column
    /// `window_end`, ordered by the rowtime column `order_key` (of type `time_type`); `zone`
    /// is the session zone.
    pub fn new(
        schema: SchemaRef,
        keys: Vec<usize>,
        window_end: usize,
        order_key: usize,
        keep_last: bool,
        time_type: &DataType,
        zone: SessionZone,
    ) -> Result<Self, ExecError> {
        let encoder = optional_encoder(&schema, keys)?;
        let rows = whole_row_converter(&schema)?;
        let ctx = OperatorContext::default();
        Ok(WindowDeduplicateOperator {
            window_end,
            order_key,
            keep_last,
            encoder,
            rows,
            window_clock: WindowClock::new(time_type, zone),
            daylight_time: false,
            keys: KeyTable::new(ctx.max_parallelism),
            kept: HashMap::new(),
            timers: EventTimers::new(),
            watermark: i64::MIN,
            late_rows: LateRows::default(),
            key_groups: ctx.key_groups,
            schema,
        })
    }

    fn millis_column<'a>(
        batch: &'a RecordBatch,
        column: usize,
        what: &str,
    ) -> Result<&'a arrow_array::TimestampNanosecondArray, ExecError> {
        let array = batch.column(column);
        if array.null_count() > 0 {
            return Err(ExecError::Source(format!(
                "the {what} of a window deduplication is NULL"
            )));
        }
        timestamp_column(batch, column, &format!("the {what}"))
    }

    /// Keeps `row` (its bytes) for `key`'s window ending at `end` if it wins.
    fn offer(&mut self, key: u32, end: i64, time: i64, row: &[u8]) {
        let keep_last = self.keep_last;
        match self.kept.get_mut(&(key, end)) {
            Some(kept) => {
                let wins = if keep_last {
                    time >= kept.time
                } else {
                    time < kept.time
                };
                if wins {
                    kept.time = time;
                    kept.row = row.into();
                }
            }
            None => {
                let trigger = self.window_clock.trigger_time(end, self.daylight_time);
                self.kept.insert(
                    (key, end),
                    Kept {
                        time,
                        row: row.into(),
                    },
                );
                self.timers.register(trigger, key, end);
                *self.keys.value_mut(key) += 1;
            }
        }
    }

    /// Emits the rows of windows whose trigger time is at or before `time`, in trigger
    /// order, then key bytes, and forgets them.
    fn fire(&mut self, time: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        let due = self.timers.take_due(time, &self.keys);
        if due.is_empty() {
            return Ok(());
        }
        let mut rows = Vec::with_capacity(due.len());
        for &(_, key, end) in &due {
            if let Some(kept) = self.kept.remove(&(key, end)) {
                rows.push(kept.row);
            }
            close_window(&mut self.keys, key);
        }
        let parser = self.rows.parser();
        let columns = self
            .rows
            .convert_rows(rows.iter().map(|r| parser.parse(r)))?;
        let batch = RecordBatch::try_new(self.schema.clone(), columns)?;
        out.emit(StreamChunk::inserts(batch))
    }
}

impl Operator for WindowDeduplicateOperator {
    /// Rows dropped because their window had fired.
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
                "a window deduplication takes inserts only".into(),
            ));
        }
        let batch = &chunk.batch;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let ends = Self::millis_column(batch, self.window_end, "window end")?.clone();
        let times = Self::millis_column(batch, self.order_key, "time attribute")?.clone();
        let keys = self.encoder.as_ref().map(|e| e.encode(batch)).transpose()?;
        let rows = self.rows.convert_columns(batch.columns())?;
        for row in 0..batch.num_rows() {
            let end = ends.value(row).div_euclid(NANOS_PER_MILLI);
            let trigger = self.window_clock.trigger_time(end, self.daylight_time);
            if trigger <= self.watermark {
                self.late_rows.add();
                continue;
            }
            let bytes = key_bytes(keys.as_ref(), row);
            let (key, _) = self.keys.intern(bytes);
            let time = times.value(row).div_euclid(NANOS_PER_MILLI);
            self.offer(key, end, time, rows.row(row).as_ref());
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        self.watermark = self.watermark.max(watermark);
        self.fire(watermark, out)?;
        out.emit_watermark(watermark)
    }

    /// Per key group: for each kept row, its key bytes, window end, time and row bytes.
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        let mut groups = GroupBuffers::default();
        for (&(key, end), kept) in &self.kept {
            let out = groups.group(self.keys.key_group(key));
            put_bytes(out, self.keys.bytes(key));
            put_i64(out, end);
            put_i64(out, kept.time);
            put_bytes(out, &kept.row);
        }
        groups.into_snapshot()
    }

    fn restore(&mut self, key_group: u32, state: &[u8]) -> Result<(), ExecError> {
        self.key_groups.check_owned(key_group)?;
        let mut input = StateReader::new(state);
        while !input.is_empty() {
            let (key, _) = self.keys.intern(input.bytes()?);
            let end = restored_window_time(input.i64()?)?;
            let time = input.i64()?;
            let row = input.bytes()?;
            self.offer(key, end, time, row);
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
#[path = "window_deduplicate_tests.rs"]
mod tests;
