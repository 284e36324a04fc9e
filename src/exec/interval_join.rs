//! `IntervalJoinOperator`: an event-time interval join of two insert-only streams, as Flink's
//! `RowTimeIntervalJoin` runs it. A left row at time `l` joins the right rows at times `r`
//! with `l − r` in `[lower, upper]` (and equal keys, and the residual condition):
//!
//! - An arriving row is joined with the other side's kept rows of its key within its bounds
//!   (`+I` pairs), then kept while rows of the other side can still come for it: a left row
//!   while the watermark is below `l − lower`, a right row while it is below `r + upper`.
//! - The watermark frees the rows it passes; a row of an outer side that never matched is
//!   then emitted padded with NULLs, as is an arriving one that matched nothing and is not
//!   kept (a late row). A row whose key or time is NULL matches nothing.
//! - The output watermark is held back by the larger bound, as Flink's operator holds it,
//!   since a pair can carry a time that far behind the input's watermark.
//!
//! Rows are `arrow-row` bytes by key, with an index by expiry time so a watermark visits only
//! the keys it frees rows of.
//!
//! State is snapshotted per key group: per key both sides' rows (time, bytes, whether each
//! joined) and cleanup timers, which go back into the index on restore. Operator time is not
//! in it: the runtime replays the restored watermark. The expiration times, which Flink
//! keeps per instance (and forgets on restore), are instance state, so that a row arriving
//! after a restore is joined or skipped as it would have been.

use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, UInt32Array};
use arrow_buffer::NullBuffer;
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;

use super::aggregate::{StateReader, put_bytes, put_i64, put_u32};
use super::eval::evaluate;
use super::state::instance::{INSTANCE_STATE_VERSION, finished, instance_part};
use super::state::key::{KeyEncoder, key_bytes, null_row, optional_encoder, whole_row_converter};
use super::state::key_group::KeyGroupRange;
use super::state::key_table::KeyTable;
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, OperatorContext, Output};
use crate::exec::time_column::timestamp_column;
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::JoinType;
use crate::types::chunk::{StreamChunk, batch_with_rows};

/// One key's kept rows of one side, by event time (milliseconds): each row's bytes and
/// whether it joined anything.
type Cache = BTreeMap<i64, Vec<(Box<[u8]>, bool)>>;

/// One key's state: both sides' caches and the cleanup timer of each.
#[derive(Default)]
struct KeyState {
    caches: [Cache; 2],
    timers: [Option<i64>; 2],
}

struct Side {
    keys: Option<KeyEncoder>,
    key_columns: Vec<usize>,
    time_column: usize,
    rows: RowConverter,
    null_row: Box<[u8]>,
    outer: bool,
}

impl Side {
    fn new(
        schema: &SchemaRef,
        key_columns: Vec<usize>,
        time_column: usize,
        outer: bool,
    ) -> Result<Self, ExecError> {
        let rows = whole_row_converter(schema)?;
        Ok(Side {
            keys: optional_encoder(schema, key_columns.clone())?,
            key_columns,
            time_column,
            null_row: null_row(&rows, schema)?,
            rows,
            outer,
        })
    }
}

pub struct IntervalJoinOperator {
    sides: [Side; 2],
    /// Flink's relative sizes: a left row at `l` joins right rows in
    /// `[l − relative[1], l + relative[0]]`, a right row at `r` left rows in
    /// `[r − relative[0], r + relative[1]]`.
    relative: [i64; 2],
    /// Half the window's length: how much later than needed a cleanup timer fires.
    min_cleanup_interval: i64,
    residual: Option<ScalarExpr>,
    output: SchemaRef,
    ctx: EvalContext,
    keys: KeyTable<KeyState>,
    /// Keys with a cleanup timer at each time.
    timers: BTreeMap<i64, Vec<u32>>,
    /// The watermark (0 before the first), Flink's operator time of both sides.
    operator_time: i64,
    /// Per side: rows at or before this time are expired (Flink keeps it per instance).
    expiration: [i64; 2],
    key_groups: KeyGroupRange,
    /// This instance's index and the parallelism (restoring the expiration times needs them).
    instance: (u32, u32),
}

impl IntervalJoinOperator {
    /// `keys`, `times`: the key and time columns of each side; `bounds`: `left − right`
    /// within `[lower, upper]` milliseconds.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        left: &SchemaRef,
        right: &SchemaRef,
        output: SchemaRef,
        keys: (Vec<usize>, Vec<usize>),
        times: (usize, usize),
        bounds: (i64, i64),
        join_type: JoinType,
        residual: Option<ScalarExpr>,
        ctx: EvalContext,
    ) -> Result<Self, ExecError> {
        // Saturating: a bound at i64's end must not overflow (no bound panics).
        let relative = [bounds.0.checked_neg().unwrap_or(i64::MAX), bounds.1];
        Ok(IntervalJoinOperator {
            sides: [
                Side::new(left, keys.0, times.0, join_type.left_outer())?,
                Side::new(right, keys.1, times.1, join_type.right_outer())?,
            ],
            min_cleanup_interval: relative[0] / 2 + relative[1] / 2,
            relative,
            residual,
            output,
            ctx,
            keys: KeyTable::new(OperatorContext::default().max_parallelism),
            timers: BTreeMap::new(),
            operator_time: 0,
            expiration: [0, 0],
            key_groups: OperatorContext::default().key_groups,
            instance: (0, 1),
        })
    }

    /// Flink's `calExpirationTime`: rows of a side whose other side's time is `operator_time`
    /// and whose relative size is `size` are expired at or before the result.
    fn expiration_time(&self, size: i64) -> i64 {
        if self.operator_time == i64::MAX {
            i64::MAX
        } else {
            self.operator_time.saturating_sub(size).saturating_sub(1)
        }
    }

    /// A cleanup timer for side `s`'s cache of `key`, for a row at `time`, firing after
    /// `watermark` at the earliest. Flink's time can come out at or before the watermark
    /// that fired the last timer (when the bounds are inverted, `minCleanUpInterval` is
    /// negative; near i64's ends the sums saturate), which would fire it again at once, for
    /// ever; waiting for the next watermark expires the same rows one watermark later.
    fn register_cleanup(&mut self, key: u32, s: usize, time: i64, watermark: i64) {
        let at = time
            .saturating_add(self.relative[s])
            .saturating_add(self.min_cleanup_interval)
            .saturating_add(1)
            .max(watermark.saturating_add(1));
        self.keys.value_mut(key).timers[s] = Some(at);
        self.timers.entry(at).or_default().push(key);
    }

    /// Drops side `s`'s rows of `key` at or before `expiration`, an outer side's unmatched
    /// ones into `padded`.
    fn expire(&mut self, key: u32, s: usize, expiration: i64, padded: &mut Vec<Box<[u8]>>) {
        let outer = self.sides[s].outer;
        let cache = &mut self.keys.value_mut(key).caches[s];
        let rest = cache.split_off(&expiration.saturating_add(1));
        let gone = std::mem::replace(cache, rest);
        if outer {
            for (_, rows) in gone {
                padded.extend(rows.into_iter().filter(|(_, m)| !m).map(|(r, _)| r));
            }
        }
    }

    /// The output rows for rows of side `s` (`own` taken from `batch` by index, or `None`
    /// for a padded stored row) with the other side's (`other` bytes, or NULLs).
    fn build(
        &self,
        s: usize,
        batch: Option<&RecordBatch>,
        own: &[Option<u32>],
        own_rows: &[&[u8]],
        other: &[Option<&[u8]>],
    ) -> Result<RecordBatch, ExecError> {
        let (side, other_side) = (&self.sides[s], &self.sides[1 - s]);
        let mine: Vec<ArrayRef> = match batch {
            Some(batch) => {
                let indices: UInt32Array = own.iter().copied().collect();
                batch
                    .columns()
                    .iter()
                    .map(|c| arrow_select::take::take(c.as_ref(), &indices, None))
                    .collect::<Result<_, _>>()?
            }
            None => {
                let parser = side.rows.parser();
                side.rows
                    .convert_rows(own_rows.iter().map(|r| parser.parse(r)))?
            }
        };
        let parser = other_side.rows.parser();
        let theirs = other_side.rows.convert_rows(
            other
                .iter()
                .map(|r| parser.parse(r.unwrap_or(&other_side.null_row))),
        )?;
        let n = other.len();
        let columns = if s == 0 {
            mine.into_iter().chain(theirs).collect()
        } else {
            theirs.into_iter().chain(mine).collect()
        };
        Ok(batch_with_rows(self.output.clone(), columns, n)?)
    }

    /// Forgets a key that keeps no rows and waits for no timer.
    fn forget_if_empty(&mut self, key: u32) {
        let state = &self.keys.value(key);
        if state.caches.iter().all(BTreeMap::is_empty) && state.timers.iter().all(Option::is_none) {
            self.keys.remove(key);
        }
    }

    /// Emits rows of side `s` alone, the other side NULL.
    fn emit_padded(
        &self,
        s: usize,
        rows: &[Box<[u8]>],
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        if rows.is_empty() {
            return Ok(());
        }
        let own: Vec<&[u8]> = rows.iter().map(|r| &r[..]).collect();
        let nulls = vec![None; rows.len()];
        out.emit(StreamChunk::inserts(self.build(
            s,
            None,
            &[],
            &own,
            &nulls,
        )?))
    }
}

impl Operator for IntervalJoinOperator {
    fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.keys.set_max_parallelism(ctx.max_parallelism);
        self.key_groups = ctx.key_groups;
        self.instance = (ctx.index, ctx.parallelism.max(1));
        Ok(())
    }

    /// Per row, as Flink's `TimeIntervalJoin.processElement1/2`: join with the other side's
    /// cached rows in range (cleaning out its expired ones on the way), then cache the row
    /// while the other side can still bring matches, or pad it (outer) if it matched nothing.
    fn process(
        &mut self,
        input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let s = input;
        if s > 1 {
            return Err(ExecError::Internal(format!("a join has no input {s}")));
        }
        if !chunk.is_insert_only() {
            return Err(ExecError::Internal(
                "an interval join takes inserts only".into(),
            ));
        }
        let batch = &chunk.batch;
        let n = batch.num_rows();
        if n == 0 {
            return Ok(());
        }
        let o = 1 - s;
        let side = &self.sides[s];
        let keys = side.keys.as_ref().map(|e| e.encode(batch)).transpose()?;
        let times = timestamp_column(batch, side.time_column, "an interval join's time")?.clone();
        let unmatchable = side
            .key_columns
            .iter()
            .fold(times.logical_nulls(), |acc, &c| {
                NullBuffer::union(acc.as_ref(), batch.column(c).logical_nulls().as_ref())
            });
        let rows = side.rows.convert_columns(batch.columns())?;
        let (other_outer, own_outer) = (self.sides[o].outer, self.sides[s].outer);
        // Output: (arriving row or none, other side's row bytes or none).
        let mut own: Vec<Option<u32>> = Vec::new();
        let mut other: Vec<Option<Box<[u8]>>> = Vec::new();
        let mut padded_other: Vec<Box<[u8]>> = Vec::new();
        for i in 0..n {
            if unmatchable.as_ref().is_some_and(|u| u.is_null(i)) {
                if own_outer {
                    own.push(Some(i as u32));
                    other.push(None);
                }
                continue;
            }
            let time = times.value(i).div_euclid(1_000_000);
            // The other side's qualified range, and the bound past which this row waits.
            let (from, to) = if s == 0 {
                (
                    time.saturating_sub(self.relative[1]),
                    time.saturating_add(self.relative[0]),
                )
            } else {
                (
                    time.saturating_sub(self.relative[0]),
                    time.saturating_add(self.relative[1]),
                )
            };
            let (key, _) = self.keys.intern(key_bytes(keys.as_ref(), i));
            let mut matched = false;
            if self.expiration[o] < to {
                self.expiration[o] = self.expiration_time(self.relative[o]);
                let expiration = self.expiration[o];
                // Candidates in range, then the residual over them.
                // A lower bound above the upper one (Flink accepts it) qualifies nothing.
                let candidates: Vec<(i64, usize)> = if from <= to {
                    self.keys.value(key).caches[o]
                        .range(from..=to)
                        .flat_map(|(&t, rows)| (0..rows.len()).map(move |r| (t, r)))
                        .collect()
                } else {
                    Vec::new()
                };
                let passed: Vec<bool> = match (&self.residual, candidates.is_empty()) {
                    (Some(residual), false) => {
                        let cache = &self.keys.value(key).caches[o];
                        let theirs: Vec<Option<&[u8]>> = candidates
                            .iter()
                            .map(|&(t, r)| Some(&cache[&t][r].0[..]))
                            .collect();
                        let mine = vec![Some(i as u32); candidates.len()];
                        let joined = self.build(s, Some(batch), &mine, &[], &theirs)?;
                        let result = evaluate(residual, &joined, &self.ctx)?;
                        let result = result.as_boolean();
                        (0..candidates.len())
                            .map(|p| result.is_valid(p) && result.value(p))
                            .collect()
                    }
                    _ => vec![true; candidates.len()],
                };
                let cache = &mut self.keys.value_mut(key).caches[o];
                for (&(t, r), &ok) in candidates.iter().zip(&passed) {
                    if !ok {
                        continue;
                    }
                    matched = true;
                    let entry = &mut cache.get_mut(&t).expect("a candidate's time")[r];
                    entry.1 = true;
                    own.push(Some(i as u32));
                    other.push(Some(entry.0.clone()));
                }
                // Flink cleans the other side's expired rows while it joins.
                let rest = cache.split_off(&expiration.saturating_add(1));
                let gone = std::mem::replace(cache, rest);
                if other_outer {
                    for (_, rows) in gone {
                        padded_other.extend(rows.into_iter().filter(|(_, m)| !m).map(|(r, _)| r));
                    }
                }
            }
            if self.operator_time < to {
                let state = self.keys.value_mut(key);
                state.caches[s]
                    .entry(time)
                    .or_default()
                    .push((rows.row(i).as_ref().into(), matched));
                if state.timers[s].is_none() {
                    self.register_cleanup(key, s, time, self.operator_time);
                }
            } else if !matched && own_outer {
                own.push(Some(i as u32));
                other.push(None);
            }
            self.forget_if_empty(key);
        }
        if !own.is_empty() {
            let theirs: Vec<Option<&[u8]>> = other.iter().map(|r| r.as_deref()).collect();
            out.emit(StreamChunk::inserts(self.build(
                s,
                Some(batch),
                &own,
                &[],
                &theirs,
            )?))?;
        }
        self.emit_padded(o, &padded_other, out)
    }

    /// Fires the cleanup timers the watermark reached (Flink's `onTimer`: each side's rows
    /// expired by the other side's time go, outer ones padded, and a new timer is set for
    /// what remains), then forwards the watermark held back by the larger relative size.
    fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        self.operator_time = watermark.max(0);
        while let Some((&at, _)) = self.timers.first_key_value() {
            if at > watermark {
                break;
            }
            let ids = self.timers.remove(&at).unwrap_or_default();
            for key in ids {
                for s in 0..2 {
                    if self.keys.value(key).timers[s] != Some(at) {
                        continue;
                    }
                    self.expiration[s] = self.expiration_time(self.relative[s]);
                    let mut padded = Vec::new();
                    self.expire(key, s, self.expiration[s], &mut padded);
                    self.emit_padded(s, &padded, out)?;
                    let state = self.keys.value_mut(key);
                    state.timers[s] = None;
                    match state.caches[s].first_key_value().map(|(&t, _)| t) {
                        Some(earliest) => self.register_cleanup(key, s, earliest, watermark),
                        None => self.forget_if_empty(key),
                    }
                }
            }
        }
        let delay = self.relative[0].max(self.relative[1]).max(0);
        let held = if watermark == i64::MAX {
            watermark
        } else {
            watermark.saturating_sub(delay)
        };
        out.emit_watermark(held)
    }

    /// Per key group: for each key its bytes, then per side its cleanup timer (a flag and
    /// the time) and its cache (the count of times; per time the time, the count of rows,
    /// and per row its bytes and whether it joined).
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        let mut groups: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
        for (_, key) in self.keys.iter() {
            let out = groups.entry(key.key_group()).or_default();
            put_bytes(out, key.bytes);
            for s in 0..2 {
                out.push(u8::from(key.value.timers[s].is_some()));
                put_i64(out, key.value.timers[s].unwrap_or(0));
                let cache = &key.value.caches[s];
                put_u32(out, cache.len() as u32);
                for (&time, rows) in cache {
                    put_i64(out, time);
                    put_u32(out, rows.len() as u32);
                    for (row, matched) in rows {
                        put_bytes(out, row);
                        out.push(u8::from(*matched));
                    }
                }
            }
        }
        groups.into_iter().collect()
    }

    fn restore(&mut self, key_group: u32, state: &[u8]) -> Result<(), ExecError> {
        self.key_groups.check_owned(key_group)?;
        let mut input = StateReader::new(state);
        while !input.is_empty() {
            let mut restored = KeyState::default();
            let bytes = input.bytes()?;
            for s in 0..2 {
                let timed = flag(&mut input)?;
                let at = input.i64()?;
                restored.timers[s] = timed.then_some(at);
                for _ in 0..input.u32()? {
                    let time = input.i64()?;
                    let rows = restored.caches[s].entry(time).or_default();
                    for _ in 0..input.u32()? {
                        rows.push((input.bytes()?.into(), flag(&mut input)?));
                    }
                }
            }
            let (key, new) = self.keys.intern(bytes);
            if !new {
                return Err(ExecError::Internal(
                    "an interval join's snapshot holds a key twice".into(),
                ));
            }
            for at in restored.timers.iter().flatten() {
                self.timers.entry(*at).or_default().push(key);
            }
            *self.keys.value_mut(key) = restored;
        }
        Ok(())
    }

    /// The expiration time of each side.
    fn snapshot_instance(&self) -> Option<Vec<u8>> {
        let mut out = vec![INSTANCE_STATE_VERSION];
        put_i64(&mut out, self.expiration[0]);
        put_i64(&mut out, self.expiration[1]);
        Some(out)
    }

    /// Instance `j` of `p` takes the latest expiration times of the old instances `i` with
    /// `i % p == j` (its own at the same parallelism); one taking over none starts from the
    /// latest of all, where the old instances that held its keys had come to.
    fn restore_instance(&mut self, parts: &[&[u8]]) -> Result<(), ExecError> {
        let (index, parallelism) = self.instance;
        let latest = |taken: Option<[i64; 2]>, expiration: [i64; 2]| {
            let [a, b] = taken.unwrap_or([i64::MIN; 2]);
            Some([a.max(expiration[0]), b.max(expiration[1])])
        };
        let (mut own, mut all) = (None, None);
        for (old, part) in parts.iter().enumerate() {
            let mut input = instance_part(part)?;
            let expiration = [input.i64()?, input.i64()?];
            finished(&input)?;
            all = latest(all, expiration);
            if old % parallelism as usize == index as usize {
                own = latest(own, expiration);
            }
        }
        // No part at all: a fresh start, as `new` has it.
        self.expiration = own.or(all).unwrap_or([0, 0]);
        Ok(())
    }
}

/// A flag byte of a snapshot: 0 or 1.
fn flag(input: &mut StateReader<'_>) -> Result<bool, ExecError> {
    match input.u8()? {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(ExecError::Internal(format!(
            "a flag of {other} in an interval join's snapshot"
        ))),
    }
}

#[cfg(test)]
#[path = "interval_join_tests.rs"]
mod tests;
