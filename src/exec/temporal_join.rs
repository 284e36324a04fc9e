//! `TemporalJoinOperator`: an event-time temporal join (`JOIN r FOR SYSTEM_TIME AS OF
//! l.rowtime ON l.k = r.pk`), as Flink's `TemporalRowTimeJoinOperator` runs it. Each row of
//! the left stream joins the version of the right's row of its key that was current at the
//! left row's time: the right row of that key with the latest time at or before it. A left
//! input that updates (a changelog source) has each of its rows joined so, its kind kept:
//! a `-U` or `-D` of a left row takes back the row joined with the version current at the
//! taken-back row's time.
//!
//! - Left rows wait, per key in arrival order, until the watermark reaches their time.
//!   Right rows are kept per key as versions by their time (a later row at the same time
//!   replaces the earlier); `-U` rows are dropped (the join reads its right input as
//!   upserts, as Flink's plan asks), and a `-D` is a version that matches nothing.
//! - Each key has one event-time timer, at the smallest time of a row it received since the
//!   last firing. When the watermark reaches it, every waiting left row at or before the
//!   watermark is emitted: joined with its version when the version is not a delete and the
//!   residual condition holds, else (LEFT JOIN) padded with NULLs, else dropped. Then the
//!   versions older than the latest one at or before the watermark are dropped, and the timer
//!   is set again for the earliest left row still waiting.
//! - A key holding a NULL matches nothing. The output has the left's row kinds (insert-only
//!   over an insert-only left); at the end of input (the final watermark, or `finish` in
//!   batch mode) every waiting left row is emitted.
//!
//! Rows are `arrow-row` bytes of all their columns; output is built columnar in one call
//! per watermark. State is snapshotted per key group.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::NullBuffer;
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;

use super::aggregate::{StateReader, put_bytes, put_i64, put_u32};
use super::eval::evaluate;
use super::state::key::{KeyEncoder, key_bytes, null_row, optional_encoder, whole_row_converter};
use super::state::key_group::GroupBuffers;
use super::state::key_group::KeyGroupRange;
use super::state::key_table::KeyTable;
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, OperatorContext, Output};
use crate::exec::time_column::timestamp_column;
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;
use crate::types::chunk::{RowKind, StreamChunk, batch_with_rows};

/// A left row waiting for the watermark: its time, whether its key can match at all, its
/// kind and its bytes.
struct Waiting {
    time: i64,
    matchable: bool,
    kind: RowKind,
    row: Box<[u8]>,
}

/// A version of the right's row of a key: its bytes (shared with the pairs it joins), or a
/// delete.
struct Version {
    row: Arc<[u8]>,
    live: bool,
}

/// A left row's kind, the row, and the version it joins, if any.
type Pair = (RowKind, Box<[u8]>, Option<Arc<[u8]>>);

/// One key's state.
#[derive(Default)]
struct KeyState {
    /// In arrival order.
    waiting: Vec<Waiting>,
    /// By event time (milliseconds).
    versions: BTreeMap<i64, Version>,
    /// The registered timer, if any.
    timer: Option<i64>,
}

/// One input's layout.
struct Side {
    keys: Option<KeyEncoder>,
    key_columns: Vec<usize>,
    time_column: usize,
    rows: RowConverter,
}

impl Side {
    fn new(
        schema: &SchemaRef,
        key_columns: Vec<usize>,
        time_column: usize,
    ) -> Result<Self, ExecError> {
        Ok(Side {
            keys: optional_encoder(schema, key_columns.clone())?,
            key_columns,
            time_column,
            rows: whole_row_converter(schema)?,
        })
    }
}

pub struct TemporalJoinOperator {
    sides: [Side; 2],
    /// The bytes of a right row of NULLs, for padding.
    null_right: Box<[u8]>,
    left_outer: bool,
    residual: Option<ScalarExpr>,
    output: SchemaRef,
    ctx: EvalContext,
    keys: KeyTable<KeyState>,
    /// Keys with a timer at each time, in registration order.
    timers: BTreeMap<i64, Vec<u32>>,
    key_groups: KeyGroupRange,
}

impl TemporalJoinOperator {
    /// `keys`, `times`: the key and event-time columns of the left and the right input;
    /// `left_outer`: a LEFT JOIN.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        left: &SchemaRef,
        right: &SchemaRef,
        output: SchemaRef,
        keys: (Vec<usize>, Vec<usize>),
        times: (usize, usize),
        left_outer: bool,
        residual: Option<ScalarExpr>,
        ctx: EvalContext,
    ) -> Result<Self, ExecError> {
        let right_side = Side::new(right, keys.1, times.1)?;
        Ok(TemporalJoinOperator {
            null_right: null_row(&right_side.rows, right)?,
            sides: [Side::new(left, keys.0, times.0)?, right_side],
            left_outer,
            residual,
            output,
            ctx,
            keys: KeyTable::new(OperatorContext::default().max_parallelism),
            timers: BTreeMap::new(),
            key_groups: OperatorContext::default().key_groups,
        })
    }

    /// Flink's `registerSmallestTimer`: a timer for `key` at `time` unless an earlier one is
    /// set.
    fn register(&mut self, key: u32, time: i64) {
        let state = self.keys.value_mut(key);
        if state.timer.is_some_and(|t| t <= time) {
            return;
        }
        if let Some(old) = state.timer.replace(time)
            && let Some(ids) = self.timers.get_mut(&old)
        {
            ids.retain(|&k| k != key);
            if ids.is_empty() {
                self.timers.remove(&old);
            }
        }
        self.timers.entry(time).or_default().push(key);
    }

    /// Flink's `emitResultAndCleanUpState` for `key` at `watermark`: the waiting left rows
    /// at or before it, each with its version (or none), into `pairs`; older versions go.
    fn fire(&mut self, key: u32, watermark: i64, pairs: &mut Vec<Pair>) {
        let state = self.keys.value_mut(key);
        state.timer = None;
        let mut next: Option<i64> = None;
        let waiting = std::mem::take(&mut state.waiting);
        for w in waiting {
            if w.time > watermark {
                next = Some(next.map_or(w.time, |n| n.min(w.time)));
                state.waiting.push(w);
                continue;
            }
            let version = state
                .versions
                .range(..=w.time)
                .next_back()
                .map(|(_, v)| v)
                .filter(|v| v.live && w.matchable);
            pairs.push((w.kind, w.row, version.map(|v| v.row.clone())));
        }
        // Keep the latest version at or before the watermark, and every later one.
        if let Some((&keep, _)) = state.versions.range(..=watermark).next_back() {
            state.versions = state.versions.split_off(&keep);
        }
        match next {
            Some(time) => self.register(key, time),
            None if self.keys.value(key).versions.is_empty() => self.keys.remove(key),
            None => {}
        }
    }

    /// The output rows of `pairs`: each left row with its version where the residual holds,
    /// padded (LEFT JOIN) or dropped otherwise.
    fn emit(&self, pairs: Vec<Pair>, out: &mut dyn Output) -> Result<(), ExecError> {
        if pairs.is_empty() {
            return Ok(());
        }
        let batch = self.build(&pairs)?;
        // Whether each left row joins its version (there is one and the residual holds).
        let keep: Vec<bool> = match &self.residual {
            Some(residual) => {
                let result = evaluate(residual, &batch, &self.ctx)?;
                let result = result.as_boolean();
                pairs
                    .iter()
                    .enumerate()
                    .map(|(i, (_, _, right))| {
                        right.is_some() && result.is_valid(i) && result.value(i)
                    })
                    .collect()
            }
            None => pairs.iter().map(|(_, _, r)| r.is_some()).collect(),
        };
        if keep.iter().all(|&k| k) {
            return out.emit(with_kinds(batch, &pairs));
        }
        // Pad or drop the rows without a (passing) version.
        let pairs: Vec<Pair> = pairs
            .into_iter()
            .zip(keep)
            .filter_map(|((kind, left, right), joined)| match joined {
                true => Some((kind, left, right)),
                false if self.left_outer => Some((kind, left, None)),
                false => None,
            })
            .collect();
        if pairs.is_empty() {
            return Ok(());
        }
        out.emit(with_kinds(self.build(&pairs)?, &pairs))
    }

    fn build(&self, pairs: &[Pair]) -> Result<RecordBatch, ExecError> {
        let (left, right) = (&self.sides[0].rows, &self.sides[1].rows);
        let (lp, rp) = (left.parser(), right.parser());
        let mut columns: Vec<ArrayRef> =
            left.convert_rows(pairs.iter().map(|(_, l, _)| lp.parse(l)))?;
        columns.extend(
            right.convert_rows(
                pairs
                    .iter()
                    .map(|(_, _, r)| rp.parse(r.as_deref().unwrap_or(&self.null_right))),
            )?,
        );
        Ok(batch_with_rows(self.output.clone(), columns, pairs.len())?)
    }

    /// Fires every timer at or before `watermark`.
    fn advance(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        let mut pairs = Vec::new();
        while let Some((&at, _)) = self.timers.first_key_value() {
            if at > watermark {
                break;
            }
            for key in self.timers.remove(&at).unwrap_or_default() {
                self.fire(key, watermark, &mut pairs);
            }
        }
        self.emit(pairs, out)
    }
}

/// The joined rows of `pairs` with their left rows' kinds.
fn with_kinds(batch: RecordBatch, pairs: &[Pair]) -> StreamChunk {
    if pairs.iter().all(|(kind, _, _)| *kind == RowKind::Insert) {
        return StreamChunk::inserts(batch);
    }
    StreamChunk {
        batch,
        kinds: Some(pairs.iter().map(|(kind, _, _)| *kind).collect()),
    }
}

/// The event times (milliseconds) of `column`, NULL as the earliest.
fn times_of(batch: &RecordBatch, column: usize) -> Result<Vec<i64>, ExecError> {
    let times = timestamp_column(batch, column, "a temporal join's time")?;
    Ok((0..times.len())
        .map(|i| {
            if times.is_valid(i) {
                times.value(i).div_euclid(1_000_000)
            } else {
                i64::MIN
            }
        })
        .collect())
}

impl Operator for TemporalJoinOperator {
    fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.keys.set_max_parallelism(ctx.max_parallelism);
        self.key_groups = ctx.key_groups;
        Ok(())
    }

    fn process(
        &mut self,
        input: usize,
        chunk: StreamChunk,
        _out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        if input > 1 {
            return Err(ExecError::Internal(format!("a join has no input {input}")));
        }
        let batch = &chunk.batch;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let side = &self.sides[input];
        let keys = side.keys.as_ref().map(|e| e.encode(batch)).transpose()?;
        let times = times_of(batch, side.time_column)?;
        let rows = side.rows.convert_columns(batch.columns())?;
        if input == 0 {
            let unmatchable = side.key_columns.iter().fold(None, |acc, &c| {
                NullBuffer::union(acc.as_ref(), batch.column(c).logical_nulls().as_ref())
            });
            for (i, &time) in times.iter().enumerate() {
                let (key, _) = self.keys.intern(key_bytes(keys.as_ref(), i));
                self.keys.value_mut(key).waiting.push(Waiting {
                    time,
                    matchable: unmatchable.as_ref().is_none_or(|u| u.is_valid(i)),
                    kind: chunk.kind(i),
                    row: rows.row(i).as_ref().into(),
                });
                self.register(key, time);
            }
        } else {
            for (i, &time) in times.iter().enumerate() {
                let kind = chunk.kind(i);
                if kind == RowKind::UpdateBefore {
                    continue;
                }
                let (key, _) = self.keys.intern(key_bytes(keys.as_ref(), i));
                self.keys.value_mut(key).versions.insert(
                    time,
                    Version {
                        row: rows.row(i).as_ref().into(),
                        live: kind != RowKind::Delete,
                    },
                );
                self.register(key, time);
            }
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        self.advance(watermark, out)?;
        out.emit_watermark(watermark)
    }

    /// The end of input (batch mode has no final watermark): everything waiting goes.
    fn finish(&mut self, out: &mut dyn Output) -> Result<(), ExecError> {
        self.advance(i64::MAX, out)
    }

    /// Per key group: each key's bytes, timer, waiting rows and versions.
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        let mut groups = GroupBuffers::default();
        for (_, key) in self.keys.iter() {
            let out = groups.group(key.key_group());
            let state = &key.value;
            put_bytes(out, key.bytes);
            put_i64(out, state.timer.unwrap_or(i64::MIN));
            out.push(u8::from(state.timer.is_some()));
            put_u32(out, state.waiting.len() as u32);
            for w in &state.waiting {
                put_i64(out, w.time);
                out.push(u8::from(w.matchable));
                out.push(w.kind.to_byte());
                put_bytes(out, &w.row);
            }
            put_u32(out, state.versions.len() as u32);
            for (&time, v) in &state.versions {
                put_i64(out, time);
                out.push(u8::from(v.live));
                put_bytes(out, &v.row);
            }
        }
        groups.into_snapshot()
    }

    fn restore(&mut self, key_group: u32, state: &[u8]) -> Result<(), ExecError> {
        self.key_groups.check_owned(key_group)?;
        let mut input = StateReader::new(state);
        while !input.is_empty() {
            let (key, _) = self.keys.intern(input.bytes()?);
            let timer = input.i64()?;
            let has_timer = input.u8()? != 0;
            let n = input.u32()?;
            for _ in 0..n {
                let time = input.i64()?;
                let matchable = input.u8()? != 0;
                let kind = RowKind::from_byte(input.u8()?)
                    .ok_or_else(|| ExecError::Internal("a bad row kind in a snapshot".into()))?;
                let row = input.bytes()?.into();
                self.keys.value_mut(key).waiting.push(Waiting {
                    time,
                    matchable,
                    kind,
                    row,
                });
            }
            let n = input.u32()?;
            for _ in 0..n {
                let time = input.i64()?;
                let live = input.u8()? != 0;
                let row = input.bytes()?.into();
                self.keys
                    .value_mut(key)
                    .versions
                    .insert(time, Version { row, live });
            }
            if has_timer {
                self.register(key, timer);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "temporal_join_tests.rs"]
mod tests;
