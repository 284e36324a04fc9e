//! `OverAggregateOperator`: aggregates over each row's preceding rows in its partition, as
//! Flink's over functions compute them (`RowTime…PrecedingFunction`, `ProcTime…`), every
//! input row emitted once with the calls' values appended.
//!
//! Event time: a row waits (by partition key and time) until the watermark passes it; then
//! the rows of each (time, key) are taken in order of time, then key:
//! - UNBOUNDED PRECEDING (Flink's default, `table.exec.unbounded-over.version` 2): a row at or
//!   behind the watermark when it comes is late, dropped and counted. RANGE adds all rows of
//!   one time before any leaves (they share their values); ROWS adds and emits one by one.
//! - RANGE `offset` PRECEDING: late is at or before the last time the key fired (not the
//!   watermark), and the key's rows before `time − offset` are taken back first. A key quiet
//!   for 1.5 × offset after its last row forgets everything (Flink's event-time cleanup),
//!   so a row older than its last one is then taken again, over an empty window.
//! - ROWS `n` PRECEDING: late as RANGE; each row adds itself and, once `n + 1` rows are in,
//!   takes the oldest back. (As in Flink, a bounded frame drops every row at or before 1970.)
//!
//! Batch mode (a bounded input ordered by its rowtime): every row waits for the end of input
//! and none is late (NULL times first, times before 1970 in bounded frames too); partitions
//! leave in key order, then time, as Flink's sort-based batch OverAggregate emits them, and
//! RANK and DENSE_RANK are the real ranks.
//!
//! Processing time: rows leave at once — UNBOUNDED adds each row, ROWS `n` takes back the
//! oldest beyond `n + 1`, RANGE adds a chunk's rows of a key together after taking back
//! those older than now − offset, and forgets a key quiet for 1.5 × offset.
//!
//! Each partition key's accumulators sit in one slot of the call's [`GroupsAccumulator`]
//! (the key's id); bounded frames use accumulators that take rows back. Rows wait and stay
//! as `arrow-row` bytes. State is snapshotted per key group with each key's pending timers;
//! the late-row count and the watermark are instance state. A watermark firing many timers
//! emits its rows in chunks of at most [`PIECE_ROWS`].

use std::collections::{BTreeMap, BTreeSet, HashMap};

use arrow_array::{Array, ArrayRef, RecordBatch, UInt32Array};
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;
use arrow_select::concat::concat;
use arrow_select::take::take;

use super::aggregate::ranking::RankingAccumulator;
use super::aggregate::{
    GroupsAccumulator, StateReader, create_accumulator_for, put_bytes, put_i64, put_u32,
};
use super::state::instance::{INSTANCE_STATE_VERSION, LateRows, finished, instance_part};
use super::state::key::{KeyEncoder, key_bytes, optional_encoder, whole_row_converter};
use super::state::key_group::KeyGroupRange;
use super::state::key_table::KeyTable;
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, OperatorContext, Output, PIECE_ROWS};
use crate::exec::time_column::timestamp_column;
use crate::plan::aggregate::AggregateCall;
use crate::types::chunk::StreamChunk;

/// The frame of the window: the rows before each row that its values cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// ROWS, else RANGE.
    pub rows: bool,
    /// `None`: UNBOUNDED PRECEDING; else the row count (ROWS) or milliseconds (RANGE).
    pub preceding: Option<i64>,
}

/// What orders the rows, and so when they leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverTime {
    /// A rowtime in streaming mode: rows wait for the watermark, late ones are dropped.
    Rowtime,
    /// A proctime: rows leave as they come.
    Proctime,
    /// A rowtime in batch mode: rows wait for the end of input, none is late.
    Batch,
}

/// One partition key's state.
#[derive(Debug, Default)]
struct KeyState {
    /// Rows by time (arrival order within a time): waiting ones, and for a bounded frame
    /// those still inside it.
    rows: BTreeMap<i64, Vec<Box<[u8]>>>,
    /// Bounded frames: the last time the key fired (Flink's `lastTriggeringTs`, 0 at first).
    last_fired: i64,
    /// RANGE bounded: when the key forgets everything.
    cleanup: Option<i64>,
    /// ROWS bounded: how many rows are in the frame.
    in_frame: i64,
}

/// Output rows being gathered: each input row's bytes and where its values are among the
/// values evaluated so far.
#[derive(Default)]
struct Gathered {
    rows: Vec<Box<[u8]>>,
    value_of: Vec<u32>,
    /// Per call, its evaluated values, one array per evaluation.
    values: Vec<Vec<ArrayRef>>,
    evaluated: u32,
}

pub struct OverAggregateOperator {
    input: SchemaRef,
    output: SchemaRef,
    keys_encoder: Option<KeyEncoder>,
    order: usize,
    time: OverTime,
    frame: Frame,
    accumulators: Vec<Box<dyn GroupsAccumulator>>,
    rows: RowConverter,
    keys: KeyTable<KeyState>,
    /// Pending timers: (time, key). Event time: a key's row times and cleanup times;
    /// processing time: cleanup times.
    timers: BTreeSet<(i64, u32)>,
    watermark: i64,
    late: LateRows,
    key_groups: KeyGroupRange,
    ctx: OperatorContext,
    /// Scratch: the slot of each row an update or retraction hands the accumulators.
    slots: Vec<u32>,
}

impl OverAggregateOperator {
    /// `partition`, `order`: input columns; `time`: what the order column is; `calls` over
    /// input columns.
    pub fn new(
        input: SchemaRef,
        output: SchemaRef,
        partition: Vec<usize>,
        order: usize,
        time: OverTime,
        frame: Frame,
        calls: Vec<AggregateCall>,
    ) -> Result<Self, ExecError> {
        let bounded = frame.preceding.is_some();
        let accumulators = calls
            .iter()
            .map(|call| match RankingAccumulator::batch(call.function) {
                Some(ranks) if time == OverTime::Batch => Ok(Box::new(ranks) as _),
                _ => create_accumulator_for(call, &input, bounded),
            })
            .collect::<Result<_, _>>()?;
        let ctx = OperatorContext::default();
        Ok(OverAggregateOperator {
            keys_encoder: optional_encoder(&input, partition)?,
            rows: whole_row_converter(&input)?,
            input,
            output,
            order,
            time,
            frame,
            accumulators,
            keys: KeyTable::new(ctx.max_parallelism),
            timers: BTreeSet::new(),
            watermark: i64::MIN,
            late: LateRows::default(),
            key_groups: ctx.key_groups,
            ctx,
            slots: Vec::new(),
        })
    }

    fn intern(&mut self, bytes: &[u8]) -> u32 {
        let (key, new) = self.keys.intern(bytes);
        if new {
            for a in &mut self.accumulators {
                a.resize(key as usize + 1);
            }
        }
        key
    }

    /// Rows wait for time to pass them (all but processing time).
    fn waits(&self) -> bool {
        self.time != OverTime::Proctime
    }

    /// Forgets a key and its accumulators.
    fn forget(&mut self, key: u32) {
        for a in &mut self.accumulators {
            a.free(key);
        }
        self.keys.remove(key);
    }

    /// `rows` (bytes) as a batch of the input's columns.
    fn batch_of<'r>(
        &self,
        rows: impl Iterator<Item = &'r Box<[u8]>>,
    ) -> Result<RecordBatch, ExecError> {
        let parser = self.rows.parser();
        let columns = self.rows.convert_rows(rows.map(|r| parser.parse(r)))?;
        Ok(RecordBatch::try_new(self.input.clone(), columns)?)
    }

    fn update(&mut self, batch: &RecordBatch, rows: &[u32], key: u32) -> Result<(), ExecError> {
        self.slots.clear();
        self.slots.resize(rows.len(), key);
        for a in &mut self.accumulators {
            a.update(batch, rows, &self.slots)?;
        }
        Ok(())
    }

    fn retract(&mut self, rows: &[Box<[u8]>], key: u32) -> Result<(), ExecError> {
        if rows.is_empty() {
            return Ok(());
        }
        let batch = self.batch_of(rows.iter())?;
        let indices: Vec<u32> = (0..rows.len() as u32).collect();
        self.slots.clear();
        self.slots.resize(rows.len(), key);
        for a in &mut self.accumulators {
            a.retract(&batch, &indices, &self.slots)?;
        }
        Ok(())
    }

    /// Evaluates `key`'s values once, for the rows `emitted` (bytes) that leave with them.
    fn evaluate(
        &self,
        key: u32,
        emitted: impl Iterator<Item = Box<[u8]>>,
        out: &mut Gathered,
    ) -> Result<(), ExecError> {
        if out.values.is_empty() {
            out.values = vec![Vec::new(); self.accumulators.len()];
        }
        for (a, values) in self.accumulators.iter().zip(&mut out.values) {
            values.push(a.evaluate(&[key])?);
        }
        for row in emitted {
            out.rows.push(row);
            out.value_of.push(out.evaluated);
        }
        out.evaluated += 1;
        Ok(())
    }

    /// Bounded frames: the rows of `key` at `time` leave with their values, by the frame's
    /// rule.
    fn fire(&mut self, key: u32, time: i64, out: &mut Gathered) -> Result<(), ExecError> {
        let state = self.keys.value_mut(key);
        if self.frame.preceding.is_some() && state.cleanup.is_some_and(|c| c <= time) {
            self.forget(key);
            return Ok(());
        }
        match (self.frame.rows, self.frame.preceding) {
            (_, None) => {
                return Err(ExecError::Internal(
                    "an unbounded frame fires in rounds".into(),
                ));
            }
            (false, Some(offset)) => {
                if let Some(arrived) = state.rows.get(&time).cloned() {
                    // Rows before `time − offset` leave the frame.
                    let rest = state.rows.split_off(&time.saturating_sub(offset));
                    let gone: Vec<Box<[u8]>> = std::mem::replace(&mut state.rows, rest)
                        .into_values()
                        .flatten()
                        .collect();
                    self.retract(&gone, key)?;
                    let batch = self.batch_of(arrived.iter())?;
                    let all: Vec<u32> = (0..arrived.len() as u32).collect();
                    self.update(&batch, &all, key)?;
                    self.evaluate(key, arrived.into_iter(), out)?;
                }
            }
            (true, Some(n)) => {
                if let Some(arrived) = state.rows.get(&time).cloned() {
                    let batch = self.batch_of(arrived.iter())?;
                    for (i, row) in arrived.into_iter().enumerate() {
                        self.slide_rows(key, n)?;
                        self.update(&batch, &[i as u32], key)?;
                        self.evaluate(key, std::iter::once(row), out)?;
                    }
                }
            }
        }
        if self.frame.preceding.is_some() {
            self.keys.value_mut(key).last_fired = time;
        }
        Ok(())
    }

    /// Fires the timers at or before `time`, in order of time, then key.
    fn fire_until(&mut self, time: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        let rest = match time.checked_add(1) {
            Some(after) => self.timers.split_off(&(after, 0)),
            None => BTreeSet::new(),
        };
        let mut fired: Vec<(i64, u32)> = std::mem::replace(&mut self.timers, rest)
            .into_iter()
            .collect();
        if self.time == OverTime::Batch {
            // Partition by partition, as a sort by key, then time, gives them.
            let keys = &self.keys;
            let bytes = |key: u32| {
                if keys.is_live(key) {
                    keys.bytes(key)
                } else {
                    &[]
                }
            };
            fired.sort_by(|a, b| bytes(a.1).cmp(bytes(b.1)).then(a.0.cmp(&b.0)));
        }
        if self.frame.preceding.is_none() {
            // In pieces of at most PIECE_ROWS rows (or one step's, if more).
            let (mut piece, mut rows) = (Vec::new(), 0);
            for (time, key) in fired {
                let step = self.keys.value(key).rows.get(&time).map_or(0, Vec::len);
                if rows + step > PIECE_ROWS && !piece.is_empty() {
                    self.fire_unbounded(std::mem::take(&mut piece), out)?;
                    rows = 0;
                }
                rows += step;
                piece.push((time, key));
            }
            return self.fire_unbounded(piece, out);
        }
        let mut gathered = Gathered::default();
        for (time, key) in fired {
            self.fire(key, time, &mut gathered)?;
            if gathered.rows.len() >= PIECE_ROWS {
                self.emit(std::mem::take(&mut gathered), out)?;
            }
        }
        self.emit(gathered, out)
    }

    /// UNBOUNDED frames, many timers at once: their rows converted once, and the steps
    /// (RANGE: a key's rows of one time; ROWS: one row) taken in rounds, the `r`-th step of
    /// every key in round `r`, each round one update and one evaluation of all its keys. Rows
    /// leave in the order of `fired`, as one timer at a time would emit them.
    fn fire_unbounded(
        &mut self,
        fired: Vec<(i64, u32)>,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let mut rows: Vec<Box<[u8]>> = Vec::new();
        // Steps: (key, first row, rows), in emission order.
        let mut steps: Vec<(u32, u32, u32)> = Vec::new();
        for (time, key) in fired {
            let Some(arrived) = self.keys.value_mut(key).rows.remove(&time) else {
                continue;
            };
            let first = rows.len() as u32;
            let n = arrived.len() as u32;
            rows.extend(arrived);
            if self.frame.rows {
                steps.extend((0..n).map(|i| (key, first + i, 1)));
            } else {
                steps.push((key, first, n));
            }
        }
        if rows.is_empty() {
            return Ok(());
        }
        let batch = self.batch_of(rows.iter())?;
        // Each step's round: how many steps of its key come before it.
        let mut seen: HashMap<u32, u32> = HashMap::new();
        let mut rounds: Vec<Vec<usize>> = Vec::new();
        for (i, &(key, _, _)) in steps.iter().enumerate() {
            let round = seen.entry(key).or_insert(0);
            if rounds.len() <= *round as usize {
                rounds.push(Vec::new());
            }
            rounds[*round as usize].push(i);
            *round += 1;
        }
        let mut value_of_step = vec![0u32; steps.len()];
        let mut values: Vec<Vec<ArrayRef>> = vec![Vec::new(); self.accumulators.len()];
        let mut evaluated = 0u32;
        let (mut round_rows, mut round_slots, mut round_keys) =
            (Vec::new(), Vec::new(), Vec::new());
        for round in rounds {
            round_rows.clear();
            round_slots.clear();
            round_keys.clear();
            for &i in &round {
                let (key, first, n) = steps[i];
                round_rows.extend(first..first + n);
                round_slots.extend(std::iter::repeat_n(key, n as usize));
                round_keys.push(key);
                value_of_step[i] = evaluated + round_keys.len() as u32 - 1;
            }
            for (a, values) in self.accumulators.iter_mut().zip(&mut values) {
                a.update(&batch, &round_rows, &round_slots)?;
                values.push(a.evaluate(&round_keys)?);
            }
            evaluated += round_keys.len() as u32;
        }
        let value_of: Vec<u32> = steps
            .iter()
            .zip(&value_of_step)
            .flat_map(|(&(_, _, n), &v)| std::iter::repeat_n(v, n as usize))
            .collect();
        let at = UInt32Array::from(value_of);
        let mut columns = batch.columns().to_vec();
        for parts in &values {
            let parts: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
            columns.push(take(concat(&parts)?.as_ref(), &at, None)?);
        }
        out.emit(StreamChunk::inserts(RecordBatch::try_new(
            self.output.clone(),
            columns,
        )?))
    }

    /// ROWS `n` PRECEDING, before a row is added: the oldest row leaves once the frame is
    /// full (`n + 1` rows with the new one).
    fn slide_rows(&mut self, key: u32, n: i64) -> Result<(), ExecError> {
        let state = self.keys.value_mut(key);
        if state.in_frame <= n {
            state.in_frame += 1;
            return Ok(());
        }
        let Some(mut oldest) = state.rows.first_entry() else {
            return Ok(());
        };
        let row = oldest.get_mut().remove(0);
        if oldest.get().is_empty() {
            oldest.remove();
        }
        self.retract(&[row], key)
    }

    /// A cleanup timer for a RANGE bounded frame after a row at `time` (Flink's
    /// `registerCleanupTimer`: moved only when the row would outlive the current one).
    fn register_cleanup(&mut self, key: u32, time: i64, offset: i64) {
        let state = self.keys.value_mut(key);
        if state
            .cleanup
            .is_none_or(|c| c < time.saturating_add(offset).saturating_add(1))
        {
            let at = time
                .saturating_add((offset as f64 * 1.5) as i64)
                .saturating_add(1);
            state.cleanup = Some(at);
            self.timers.insert((at, key));
        }
    }

    /// Emits the gathered rows with their values.
    fn emit(&self, gathered: Gathered, out: &mut dyn Output) -> Result<(), ExecError> {
        if gathered.rows.is_empty() {
            return Ok(());
        }
        let mut columns = self.batch_of(gathered.rows.iter())?.columns().to_vec();
        let at = UInt32Array::from(gathered.value_of);
        for parts in &gathered.values {
            let parts: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
            let values = concat(&parts)?;
            columns.push(take(values.as_ref(), &at, None)?);
        }
        out.emit(StreamChunk::inserts(RecordBatch::try_new(
            self.output.clone(),
            columns,
        )?))
    }

    /// Processing time: a chunk's rows leave at once, in arrival order per key.
    fn process_now(
        &mut self,
        batch: &RecordBatch,
        keys: Option<&arrow_row::Rows>,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let now = self.ctx.now_millis();
        let rows = self.rows.convert_columns(batch.columns())?;
        // The chunk's rows by key, in arrival order.
        let mut by_key: Vec<(u32, Vec<u32>)> = Vec::new();
        let mut index: HashMap<u32, usize> = HashMap::new();
        for i in 0..batch.num_rows() {
            let key = self.intern(key_bytes(keys, i));
            let at = *index.entry(key).or_insert_with(|| {
                by_key.push((key, Vec::new()));
                by_key.len() - 1
            });
            by_key[at].1.push(i as u32);
        }
        let mut gathered = Gathered::default();
        for (key, members) in by_key {
            let own = |i: u32| -> Box<[u8]> { rows.row(i as usize).as_ref().into() };
            match (self.frame.rows, self.frame.preceding) {
                (false, Some(offset)) => {
                    let state = self.keys.value_mut(key);
                    let rest = state.rows.split_off(&now.saturating_sub(offset));
                    let gone: Vec<Box<[u8]>> = std::mem::replace(&mut state.rows, rest)
                        .into_values()
                        .flatten()
                        .collect();
                    state
                        .rows
                        .entry(now)
                        .or_default()
                        .extend(members.iter().map(|&i| own(i)));
                    self.retract(&gone, key)?;
                    self.update(batch, &members, key)?;
                    self.evaluate(key, members.iter().map(|&i| own(i)), &mut gathered)?;
                    self.register_cleanup(key, now, offset);
                }
                (true, Some(n)) => {
                    for &i in &members {
                        self.slide_rows(key, n)?;
                        self.keys
                            .value_mut(key)
                            .rows
                            .entry(now)
                            .or_default()
                            .push(own(i));
                        self.update(batch, &[i], key)?;
                        self.evaluate(key, std::iter::once(own(i)), &mut gathered)?;
                    }
                }
                (_, None) => {
                    for &i in &members {
                        self.update(batch, &[i], key)?;
                        self.evaluate(key, std::iter::once(own(i)), &mut gathered)?;
                    }
                }
            }
        }
        self.emit(gathered, out)
    }
}

impl Operator for OverAggregateOperator {
    fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.keys.set_max_parallelism(ctx.max_parallelism);
        self.key_groups = ctx.key_groups;
        self.late.open(ctx);
        self.ctx = ctx.clone();
        Ok(())
    }

    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        if !chunk.is_insert_only() {
            return Err(ExecError::Internal(
                "an over aggregate takes inserts only".into(),
            ));
        }
        let batch = &chunk.batch;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let keys = self
            .keys_encoder
            .as_ref()
            .map(|e| e.encode(batch))
            .transpose()?;
        if !self.waits() {
            return self.process_now(batch, keys.as_ref(), out);
        }
        let times = timestamp_column(batch, self.order, "an over aggregate's time")?.clone();
        let rows = self.rows.convert_columns(batch.columns())?;
        for i in 0..batch.num_rows() {
            // A NULL time orders first: kept in batch mode, late in streaming (behind every
            // watermark and fired time).
            let time = if times.is_valid(i) {
                times.value(i).div_euclid(1_000_000)
            } else {
                i64::MIN
            };
            let bytes = key_bytes(keys.as_ref(), i);
            let late = self.time == OverTime::Rowtime
                && match self.frame.preceding {
                    None => time <= self.watermark,
                    Some(_) => {
                        self.keys
                            .find(bytes)
                            .map_or(0, |k| self.keys.value(k).last_fired)
                            >= time
                    }
                };
            if late {
                self.late.add();
                continue;
            }
            let key = self.intern(bytes);
            let state = self.keys.value_mut(key);
            let waiting = state.rows.entry(time).or_default();
            if waiting.is_empty() {
                self.timers.insert((time, key));
            }
            waiting.push(rows.row(i).as_ref().into());
            if let (false, Some(offset)) = (self.frame.rows, self.frame.preceding) {
                self.register_cleanup(key, time, offset);
            }
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        if self.waits() && watermark > self.watermark {
            self.watermark = watermark;
            self.fire_until(watermark, out)?;
        }
        out.emit_watermark(watermark)
    }

    fn next_processing_time(&self) -> Option<i64> {
        if self.waits() {
            return None;
        }
        self.timers.first().map(|&(time, _)| time)
    }

    /// Processing time: RANGE bounded keys quiet past their cleanup time are forgotten.
    fn on_processing_time(&mut self, now: i64, _out: &mut dyn Output) -> Result<(), ExecError> {
        while let Some(&(time, key)) = self.timers.first() {
            if self.waits() || time > now {
                break;
            }
            self.timers.pop_first();
            // A forgotten key's stale timer may name a dead id, or one given to a new key.
            if self.keys.is_live(key) && self.keys.value(key).cleanup.is_some_and(|c| c <= time) {
                self.forget(key);
            }
        }
        Ok(())
    }

    /// The end of input fires what waits (a bounded input's final watermark does it first).
    fn finish(&mut self, out: &mut dyn Output) -> Result<(), ExecError> {
        if self.waits() {
            self.fire_until(i64::MAX, out)?;
        }
        Ok(())
    }

    fn late_rows(&self) -> u64 {
        self.late.count()
    }

    /// Per key group, per key: its bytes, last fired time, cleanup (a flag and a time),
    /// rows in the frame, its accumulators' slot, its rows (the count of times; per time
    /// the time, the count and each row's bytes) and its pending timers (count, times).
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        let mut timers: HashMap<u32, Vec<i64>> = HashMap::new();
        for &(time, key) in &self.timers {
            timers.entry(key).or_default().push(time);
        }
        let mut groups: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
        for (id, key) in self.keys.iter() {
            let out = groups.entry(key.key_group()).or_default();
            let state = key.value;
            put_bytes(out, key.bytes);
            put_i64(out, state.last_fired);
            out.push(u8::from(state.cleanup.is_some()));
            put_i64(out, state.cleanup.unwrap_or(0));
            put_i64(out, state.in_frame);
            for a in &self.accumulators {
                a.write_slot(id, out);
            }
            put_u32(out, state.rows.len() as u32);
            for (&time, rows) in &state.rows {
                put_i64(out, time);
                put_u32(out, rows.len() as u32);
                for row in rows {
                    put_bytes(out, row);
                }
            }
            let pending = timers.get(&id).map_or(&[][..], Vec::as_slice);
            put_u32(out, pending.len() as u32);
            for &time in pending {
                put_i64(out, time);
            }
        }
        groups.into_iter().collect()
    }

    fn restore(&mut self, key_group: u32, state: &[u8]) -> Result<(), ExecError> {
        self.key_groups.check_owned(key_group)?;
        let mut input = StateReader::new(state);
        while !input.is_empty() {
            let bytes = input.bytes()?;
            let (key, new) = self.keys.intern(bytes);
            if !new {
                return Err(ExecError::Internal(
                    "an over aggregate's snapshot holds a key twice".into(),
                ));
            }
            for a in &mut self.accumulators {
                a.resize(key as usize + 1);
            }
            let mut restored = KeyState {
                last_fired: input.i64()?,
                ..KeyState::default()
            };
            let cleanup = match input.u8()? {
                0 => None,
                1 => Some(input.i64()?),
                other => {
                    return Err(ExecError::Internal(format!(
                        "a flag of {other} in an over aggregate's snapshot"
                    )));
                }
            };
            if cleanup.is_none() {
                input.i64()?;
            }
            restored.cleanup = cleanup;
            restored.in_frame = input.i64()?;
            for a in &mut self.accumulators {
                a.read_slot(key, &mut input)?;
            }
            for _ in 0..input.u32()? {
                let time = input.i64()?;
                let rows = restored.rows.entry(time).or_default();
                for _ in 0..input.u32()? {
                    rows.push(input.bytes()?.into());
                }
            }
            for _ in 0..input.u32()? {
                self.timers.insert((input.i64()?, key));
            }
            *self.keys.value_mut(key) = restored;
        }
        Ok(())
    }

    /// The late-row count and the watermark (a bounded frame's row may wait at or behind
    /// it, for the next one: the same watermark again after a restore must not fire it).
    fn snapshot_instance(&self) -> Option<Vec<u8>> {
        let mut out = vec![INSTANCE_STATE_VERSION];
        self.late.write(&mut out);
        put_i64(&mut out, self.watermark);
        Some(out)
    }

    /// The late rows of the parts this instance takes over, and their latest watermark (of
    /// all parts when it takes none: a new instance at a higher parallelism).
    fn restore_instance(&mut self, parts: &[&[u8]]) -> Result<(), ExecError> {
        let (mut own, mut all) = (None::<i64>, None::<i64>);
        for (old, part) in parts.iter().enumerate() {
            let mut input = instance_part(part)?;
            self.late.read(old, &mut input)?;
            let watermark = input.i64()?;
            finished(&input)?;
            all = Some(all.map_or(watermark, |w| w.max(watermark)));
            if self.late.takes(old) {
                own = Some(own.map_or(watermark, |w| w.max(watermark)));
            }
        }
        self.watermark = own.or(all).unwrap_or(i64::MIN);
        Ok(())
    }
}

#[cfg(test)]
#[path = "over_aggregate_tests.rs"]
mod tests;
