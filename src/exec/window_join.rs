//! `WindowJoinOperator`: a window join (Flink's `WindowJoinOperator`): two windowed inputs
//! joined on equal `window_start` and `window_end` (and keys), each window's rows of both
//! sides kept until the watermark passes its end, then joined once and forgotten. INNER,
//! LEFT, RIGHT and FULL OUTER, in Flink's order within a window: for an inner, left or full
//! join each left row with the right rows it matches in arrival order (a left row without
//! one padded right after it), the full join's unmatched right rows last; for a right join
//! each right row with its left matches; SEMI (ANTI) emits each left row that has a match
//! (none), with the left's columns only. Insert-only in and out.
//!
//! A row whose window has fired (its trigger time, the window end's last millisecond,
//! DST-corrected on TIMESTAMP_LTZ, not after the watermark) is late: dropped and counted,
//! as Flink drops it. A key holding a NULL matches nothing (Flink's null-filtering join
//! condition): its rows are kept and, on an outer side, padded when the window fires.
//! Windows fire in trigger-time order, then key bytes, then end.
//!
//! Rows are `arrow-row` bytes of the whole input row; a residual condition is evaluated over
//! the candidate pairs of the windows firing together, at most [`ROUND`] pairs at a time.
//! State is snapshotted per key group: per window its key, end, and both sides' rows. The
//! late-row count is instance state.

use std::collections::BTreeMap;

use arrow_array::Array;
use arrow_buffer::NullBuffer;
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;
use hashbrown::HashMap;

use super::aggregate::{StateReader, put_bytes, put_i64, put_u32};
use super::state::instance::{LateRows, restore_late_rows, snapshot_late_rows};
use super::state::join_side::{Decoders, RowPair, pair_schema, pair_verdicts, pairs_batch};
use super::state::key::{KeyEncoder, key_bytes, null_row, optional_encoder, whole_row_converter};
use super::state::key_group::KeyGroupRange;
use super::state::key_table::KeyTable;
use super::state::timer::EventTimers;
use super::window_assigner::{WindowClock, close_window, restored_window_time};
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, OperatorContext, Output};
use crate::exec::time_column::timestamp_column;
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::JoinType;
use crate::types::DataType;
use crate::types::chunk::StreamChunk;
use crate::types::time::SessionZone;

/// Candidate pairs whose residual is evaluated at once, and rows emitted in one chunk.
const ROUND: usize = 16 * 1024;

const NANOS_PER_MILLI: i64 = 1_000_000;

struct Side {
    keys: Option<KeyEncoder>,
    key_columns: Vec<usize>,
    window_end: usize,
    rows: RowConverter,
    null_row: Box<[u8]>,
}

impl Side {
    fn new(
        schema: &SchemaRef,
        key_columns: Vec<usize>,
        window_end: usize,
    ) -> Result<Self, ExecError> {
        let rows = whole_row_converter(schema)?;
        Ok(Side {
            keys: optional_encoder(schema, key_columns.clone())?,
            key_columns,
            window_end,
            null_row: null_row(&rows, schema)?,
            rows,
        })
    }
}

/// One key's window: both sides' rows in arrival order, and whether the key can match (it
/// holds no NULL).
struct Window {
    rows: [Vec<Box<[u8]>>; 2],
    matchable: bool,
}

pub struct WindowJoinOperator {
    sides: [Side; 2],
    join_type: JoinType,
    residual: Option<ScalarExpr>,
    output: SchemaRef,
    /// Both sides' columns, which the residual reads (a semi or anti join emits the left's
    /// only).
    pairs: SchemaRef,
    ctx: EvalContext,
    window_clock: WindowClock,
    daylight_time: bool,
    key_groups: KeyGroupRange,
    /// Keys with open windows, each with how many.
    keys: KeyTable<u32>,
    windows: HashMap<(u32, i64), Window>,
    /// (trigger time, key, window end) of every open window.
    timers: EventTimers,
    watermark: i64,
    late_rows: LateRows,
}

impl WindowJoinOperator {
    /// A join of `left` and `right` rows on `keys` (column lists of each side) and the window
    /// ending at `window_ends` (a column of each side, of the windows' time type
    /// `time_type`), with `residual` over the output's columns (the left's, then the right's).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        left: &SchemaRef,
        right: &SchemaRef,
        output: SchemaRef,
        keys: (Vec<usize>, Vec<usize>),
        window_ends: (usize, usize),
        join_type: JoinType,
        residual: Option<ScalarExpr>,
        time_type: &DataType,
        zone: SessionZone,
        ctx: EvalContext,
    ) -> Result<Self, ExecError> {
        let context = OperatorContext::default();
        Ok(WindowJoinOperator {
            pairs: pair_schema(left, right),
            sides: [
                Side::new(left, keys.0, window_ends.0)?,
                Side::new(right, keys.1, window_ends.1)?,
            ],
            join_type,
            residual,
            output,
            ctx,
            window_clock: WindowClock::new(time_type, zone),
            daylight_time: false,
            key_groups: context.key_groups,
            keys: KeyTable::new(context.max_parallelism),
            windows: HashMap::new(),
            timers: EventTimers::new(),
            watermark: i64::MIN,
            late_rows: LateRows::default(),
        })
    }

    /// Adds a row of side `s` to `key`'s window ending at `end` (opening it).
    fn add(&mut self, s: usize, key: u32, end: i64, matchable: bool, row: Box<[u8]>) {
        let window = match self.windows.get_mut(&(key, end)) {
            Some(window) => window,
            None => {
                let trigger = self.window_clock.trigger_time(end, self.daylight_time);
                self.timers.register(trigger, key, end);
                *self.keys.value_mut(key) += 1;
                self.windows.entry((key, end)).or_insert(Window {
                    rows: [Vec::new(), Vec::new()],
                    matchable,
                })
            }
        };
        window.rows[s].push(row);
    }

    /// Joins and emits the windows whose trigger time is at or before `time`.
    fn fire(&mut self, time: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        let due = self.timers.take_due(time, &self.keys);
        if due.is_empty() {
            return Ok(());
        }
        let mut fired = Vec::with_capacity(due.len());
        for &(_, key, end) in &due {
            if let Some(window) = self.windows.remove(&(key, end)) {
                fired.push(window);
            }
            close_window(&mut self.keys, key);
        }
        let passed = self.residual_verdicts(&fired)?;
        let mut pairs: Vec<RowPair<'_>> = Vec::new();
        let mut offset = 0;
        for window in &fired {
            let [left, right] = &window.rows;
            let candidates = if window.matchable {
                left.len() * right.len()
            } else {
                0
            };
            let passes = |l: usize, r: usize| {
                window.matchable
                    && passed
                        .as_ref()
                        .is_none_or(|p| p[offset + l * right.len() + r])
            };
            join_window(self.join_type, left, right, passes, &mut pairs);
            offset += candidates;
        }
        let sides = if self.join_type.keeps_right() { 2 } else { 1 };
        for round in pairs.chunks(ROUND) {
            out.emit(StreamChunk::inserts(pairs_batch(
                self.decoders(),
                round,
                &self.output,
                sides,
            )?))?;
        }
        Ok(())
    }

    /// The residual's verdict on every candidate pair of `fired` (each matchable window's
    /// left rows by its right rows, row-major, windows in order), or `None` without one.
    fn residual_verdicts(&self, fired: &[Window]) -> Result<Option<Vec<bool>>, ExecError> {
        let Some(residual) = &self.residual else {
            return Ok(None);
        };
        let mut verdicts = Vec::new();
        let mut round: Vec<RowPair<'_>> = Vec::new();
        for window in fired.iter().filter(|w| w.matchable) {
            let [left, right] = &window.rows;
            for l in left {
                for r in right {
                    round.push((Some(l), Some(r)));
                    if round.len() == ROUND {
                        self.judge(residual, &round, &mut verdicts)?;
                        round.clear();
                    }
                }
            }
        }
        self.judge(residual, &round, &mut verdicts)?;
        Ok(Some(verdicts))
    }

    fn judge(
        &self,
        residual: &ScalarExpr,
        pairs: &[RowPair<'_>],
        verdicts: &mut Vec<bool>,
    ) -> Result<(), ExecError> {
        pair_verdicts(
            residual,
            &self.ctx,
            self.decoders(),
            pairs,
            &self.pairs,
            verdicts,
        )
    }

    /// Each side's row converter and row of NULLs.
    fn decoders(&self) -> Decoders<'_> {
        self.sides.each_ref().map(|s| (&s.rows, &*s.null_row))
    }
}

/// The output of one window, in Flink's order, `passes(l, r)` judging each candidate pair.
fn join_window<'a>(
    join_type: JoinType,
    left: &'a [Box<[u8]>],
    right: &'a [Box<[u8]>],
    passes: impl Fn(usize, usize) -> bool,
    pairs: &mut Vec<RowPair<'a>>,
) {
    match join_type {
        JoinType::Semi | JoinType::Anti => {
            let semi = join_type == JoinType::Semi;
            for (l, left_row) in left.iter().enumerate() {
                if (0..right.len()).any(|r| passes(l, r)) == semi {
                    pairs.push((Some(left_row), None));
                }
            }
        }
        JoinType::Right => {
            for (r, right_row) in right.iter().enumerate() {
                let mut matched = false;
                for (l, left_row) in left.iter().enumerate() {
                    if passes(l, r) {
                        matched = true;
                        pairs.push((Some(left_row), Some(right_row)));
                    }
                }
                if !matched {
                    pairs.push((None, Some(right_row)));
                }
            }
        }
        JoinType::Inner | JoinType::Left | JoinType::Full => {
            let pad_left = join_type.left_outer();
            let mut right_matched = vec![false; right.len()];
            for (l, left_row) in left.iter().enumerate() {
                let mut matched = false;
                for (r, right_row) in right.iter().enumerate() {
                    if passes(l, r) {
                        matched = true;
                        right_matched[r] = true;
                        pairs.push((Some(left_row), Some(right_row)));
                    }
                }
                if !matched && pad_left {
                    pairs.push((Some(left_row), None));
                }
            }
            if join_type == JoinType::Full {
                for (right_row, _) in right.iter().zip(&right_matched).filter(|(_, m)| !**m) {
                    pairs.push((None, Some(right_row)));
                }
            }
        }
    }
}

impl Operator for WindowJoinOperator {
    fn late_rows(&self) -> u64 {
        self.late_rows.count()
    }

    fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.key_groups = ctx.key_groups;
        self.late_rows.open(ctx);
        self.keys.set_max_parallelism(ctx.max_parallelism);
        self.daylight_time = self.window_clock.observes_daylight_time(ctx.now_millis());
        Ok(())
    }

    fn process(
        &mut self,
        input: usize,
        chunk: StreamChunk,
        _out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let s = input;
        if s > 1 {
            return Err(ExecError::Internal(format!("a join has no input {s}")));
        }
        if !chunk.is_insert_only() {
            return Err(ExecError::Internal(
                "a window join takes inserts only".into(),
            ));
        }
        let batch = &chunk.batch;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let side = &self.sides[s];
        let ends = timestamp_column(batch, side.window_end, "the window end")?.clone();
        if ends.null_count() > 0 {
            return Err(ExecError::Source(
                "the window end of a window join is NULL".into(),
            ));
        }
        let keys = side.keys.as_ref().map(|e| e.encode(batch)).transpose()?;
        let unmatchable = side.key_columns.iter().fold(None, |acc, &c| {
            NullBuffer::union(acc.as_ref(), batch.column(c).logical_nulls().as_ref())
        });
        let rows = side.rows.convert_columns(batch.columns())?;
        for row in 0..batch.num_rows() {
            let end = ends.value(row).div_euclid(NANOS_PER_MILLI);
            let trigger = self.window_clock.trigger_time(end, self.daylight_time);
            if trigger <= self.watermark {
                self.late_rows.add();
                continue;
            }
            let (key, _) = self.keys.intern(key_bytes(keys.as_ref(), row));
            let matchable = unmatchable.as_ref().is_none_or(|u| u.is_valid(row));
            self.add(s, key, end, matchable, rows.row(row).as_ref().into());
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        self.watermark = self.watermark.max(watermark);
        self.fire(watermark, out)?;
        out.emit_watermark(watermark)
    }

    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        let mut groups: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
        for (&(key, end), window) in &self.windows {
            let out = groups.entry(self.keys.key_group(key)).or_default();
            put_bytes(out, self.keys.bytes(key));
            put_i64(out, end);
            out.push(u8::from(window.matchable));
            for rows in &window.rows {
                put_u32(out, rows.len() as u32);
                for row in rows {
                    put_bytes(out, row);
                }
            }
        }
        groups.into_iter().collect()
    }

    fn restore(&mut self, key_group: u32, state: &[u8]) -> Result<(), ExecError> {
        self.key_groups.check_owned(key_group)?;
        let mut input = StateReader::new(state);
        while !input.is_empty() {
            let (key, _) = self.keys.intern(input.bytes()?);
            let end = restored_window_time(input.i64()?)?;
            let matchable = input.u8()? != 0;
            for s in 0..2 {
                for _ in 0..input.u32()? {
                    let row = input.bytes()?.into();
                    self.add(s, key, end, matchable, row);
                }
            }
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
#[path = "window_join_tests.rs"]
mod tests;
