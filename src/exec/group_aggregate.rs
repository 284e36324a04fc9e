//! `GroupAggregateOperator`: an unbounded GROUP BY (or a global aggregate) whose results are
//! updated as rows arrive, as Flink's `GroupAggFunction` (without mini-batch) emits them:
//! per input row, `+I` when the row's group is new, `-U` (when asked for) and `+U` when the
//! group's result changed (an unchanged result emits nothing), `-D` with the old result when
//! the group lost its last row. A retraction (`-U`/`-D`) of a group that holds nothing is
//! ignored, as Flink ignores it.
//!
//! Rows are handled per batch, columnar: the key columns are encoded once with `arrow-row`,
//! each key has an id in a [`KeyTable`] (the accumulators' slot) and a count of the rows it
//! holds. Flink's per-row semantics come from *rounds*: the first occurrence of every key in
//! the batch forms round 0, the second round 1, and so on. Within a round keys are distinct,
//! so one `evaluate` before and one after the round's `update`/`retract` give every row's
//! old and new result at once; the emitted rows are then put back in input order. A batch of
//! distinct keys is a single round. A round of the same keys as the last (a hot key's rows,
//! a round each) takes the last round's results after as its own before.
//!
//! In batch mode (`final_only`) nothing is emitted until the input ends; then each group's
//! final row is inserted, and a global aggregate over no rows inserts its one row of empty
//! results (`COUNT` 0, others NULL), as Flink's batch aggregate does.
//!
//! State is snapshotted per key group: for each key, its bytes, its row count and every
//! accumulator's state.

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, UInt32Array};
use arrow_ord::ord::{DynComparator, make_comparator};
use arrow_schema::{Schema as ArrowSchema, SchemaRef, SortOptions};

use super::aggregate::{
    FrozenHeld, FrozenSlots, GroupsAccumulator, HeldCount, StateReader, create_accumulator_for,
    put_bytes, put_i64,
};
use super::state::key::{KeyEncoder, key_bytes, optional_encoder};
use super::state::key_table::FrozenKeys;
use super::state::keyed::Keyed;
use super::state::ttl::{FrozenWrittenAt, NEVER_WRITTEN, StateTtl, WrittenAt};
use crate::exec::error::ExecError;
use crate::exec::operator::{FrozenState, Operator, OperatorContext, Output, PartSink};
use crate::plan::aggregate::AggregateCall;
use crate::types::chunk::{RowKind, StreamChunk, batch_with_rows};

pub struct GroupAggregateOperator {
    grouping: Vec<usize>,
    output: SchemaRef,
    encoder: Option<KeyEncoder>,
    accumulators: Vec<Box<dyn GroupsAccumulator>>,
    keyed: Keyed<()>,
    /// Per key id, the rows it holds (inserted less retracted; for an insert-only input,
    /// whether it holds any).
    rows: HeldCount,
    /// The input retracts rows (`-U`, `-D`).
    retracts: bool,
    update_before: bool,
    final_only: bool,
    /// Per key id seen in the batch at hand, how often so far: a row's round. A batch's
    /// keys only, so no memory per key is spent on it.
    occurrences: hashbrown::HashMap<u32, u32>,
    /// Keys whose count reached zero in this batch, to forget at its end.
    emptied: Vec<u32>,
    /// Per key id, when it was last written (processing time, milliseconds).
    written: WrittenAt,
    ctx: OperatorContext,
    /// Between `restoring` and `restored`: restored keys are added to the key table
    /// unindexed, and indexed at once at the end.
    restoring: bool,
}

/// A row of a round: the input row, its key and whether the input retracts it.
#[derive(Clone, Copy)]
struct RoundRow {
    row: u32,
    key: u32,
    retract: bool,
}

/// An emitted row before assembly: its input row, its kind, and where its results are
/// (which round's before/after arrays, and the position there).
struct Emitted {
    row: u32,
    kind: RowKind,
    results: usize,
    index: usize,
}

impl GroupAggregateOperator {
    /// The aggregates of `aggregates` per `grouping` key over batches shaped like `input`,
    /// emitting rows of `output` (the keys, then the aggregates). `retracts`: the input
    /// updates or deletes rows. `update_before`: changed results are preceded by `-U`.
    /// `final_only`: batch mode.
    pub fn new(
        input: &ArrowSchema,
        grouping: Vec<usize>,
        aggregates: &[AggregateCall],
        output: SchemaRef,
        retracts: bool,
        update_before: bool,
        final_only: bool,
    ) -> Result<Self, ExecError> {
        if output.fields().len() != grouping.len() + aggregates.len() {
            return Err(ExecError::Internal(format!(
                "a group aggregate of {} columns given an output of {}",
                grouping.len() + aggregates.len(),
                output.fields().len()
            )));
        }
        let accumulators = aggregates
            .iter()
            .map(|call| create_accumulator_for(call, input, retracts))
            .collect::<Result<_, _>>()?;
        let encoder = optional_encoder(input, grouping.clone())?;
        let ctx = OperatorContext::default();
        Ok(GroupAggregateOperator {
            grouping,
            output,
            encoder,
            accumulators,
            keyed: Keyed::new(),
            rows: HeldCount::new(retracts),
            retracts,
            update_before,
            final_only,
            occurrences: hashbrown::HashMap::new(),
            emptied: Vec::new(),
            written: WrittenAt::default(),
            ctx,
            restoring: false,
        })
    }

    /// Forgets keys not written for `ttl` milliseconds (streaming only; 0: never).
    pub fn with_state_ttl(mut self, ttl: i64) -> Self {
        if !self.final_only {
            self.keyed.ttl = StateTtl::new(ttl);
        }
        self
    }

    /// Whether key `id` has outlived the state TTL at `now`.
    fn expired(&self, id: u32, now: i64) -> bool {
        self.written.expired(&self.keyed.ttl, id as usize, now)
    }

    /// The keyed state as it is now (docs/design/0008 §7).
    fn frozen(&self) -> FrozenGroups {
        let keys = &self.keyed.keys;
        let live = |id: u32| (id as usize) < keys.capacity() && keys.is_live(id);
        FrozenGroups {
            keys: keys.freeze(),
            rows: self.rows.freeze(),
            written: self.written.freeze(),
            accumulators: self
                .accumulators
                .iter()
                .map(|a| a.freeze(keys.capacity(), &live))
                .collect(),
        }
    }

    /// Forgets a key and its accumulators.
    fn forget(&mut self, id: u32) {
        for a in &mut self.accumulators {
            a.free(id);
        }
        self.rows.set(id as usize, 0);
        self.keyed.keys.remove(id);
    }

    /// Marks the keys of a round written now.
    fn touch(&mut self, round: &[RoundRow]) {
        if !self.keyed.ttl.is_on() {
            return;
        }
        // The clock is read only with a TTL: a batch of one hot key has a round per row.
        let now = self.ctx.now_millis();
        for r in round {
            self.written.touch(r.key as usize, now);
        }
    }

    /// The id of a key for a row, made when new; `None` for a retraction of a key that
    /// holds nothing.
    fn key_for(&mut self, bytes: &[u8], retract: bool) -> Option<u32> {
        let id = if retract {
            self.keyed.keys.find(bytes)?
        } else {
            let (id, new) = self.keyed.keys.intern(bytes);
            if new {
                self.new_key(id);
            }
            id
        };
        Some(id)
    }

    /// Slots for a new key `id`, which is written now (its id may be an expired one's).
    fn new_key(&mut self, id: u32) {
        let capacity = self.keyed.keys.capacity();
        self.rows.resize(capacity);
        for a in &mut self.accumulators {
            a.resize(capacity);
        }
        if self.keyed.ttl.is_on() {
            self.written.touch(id as usize, self.ctx.now_millis());
        }
    }

    fn results(&self, slots: &[u32]) -> Result<Vec<ArrayRef>, ExecError> {
        self.accumulators
            .iter()
            .map(|a| a.evaluate(slots))
            .collect()
    }

    /// Accumulates and retracts one round's rows.
    fn apply(&mut self, batch: &RecordBatch, round: &[RoundRow]) -> Result<(), ExecError> {
        let mut rows = Vec::with_capacity(round.len());
        let mut slots = Vec::with_capacity(round.len());
        for retract in [false, true] {
            rows.clear();
            slots.clear();
            for r in round.iter().filter(|r| r.retract == retract) {
                rows.push(r.row);
                slots.push(r.key);
                let count = self.rows.add(r.key as usize, if retract { -1 } else { 1 });
                if count <= 0 {
                    self.emptied.push(r.key);
                }
            }
            if rows.is_empty() {
                continue;
            }
            for a in &mut self.accumulators {
                if retract {
                    a.retract(batch, &rows, &slots)?;
                } else {
                    a.update(batch, &rows, &slots)?;
                }
            }
        }
        Ok(())
    }

    /// A batch in batch mode: accumulate only.
    fn accumulate(&mut self, chunk: &StreamChunk) -> Result<(), ExecError> {
        let batch = &chunk.batch;
        let keys = self.encoder.as_ref().map(|e| e.encode(batch)).transpose()?;
        let mut round = Vec::with_capacity(batch.num_rows());
        for row in 0..batch.num_rows() {
            let retract = self.retraction(chunk, row)?;
            let bytes = key_bytes(keys.as_ref(), row);
            if let Some(key) = self.key_for(bytes, retract) {
                round.push(RoundRow {
                    row: row as u32,
                    key,
                    retract,
                });
            }
        }
        // Rows of a key accumulate in any order in batch mode; the rounds only matter for
        // what is emitted on the way.
        self.apply(batch, &round)?;
        self.forget_empty();
        Ok(())
    }

    /// Frees the keys whose rows were all retracted in this batch (unless a later row
    /// brought them back).
    fn forget_empty(&mut self) {
        let mut emptied = std::mem::take(&mut self.emptied);
        emptied.sort_unstable();
        emptied.dedup();
        for &id in &emptied {
            if self.rows.get(id as usize) > 0 {
                continue;
            }
            self.forget(id);
        }
        emptied.clear();
        self.emptied = emptied;
    }

    /// Whether row `row` retracts (an insert-only input never does: its plan said so).
    fn retraction(&self, chunk: &StreamChunk, row: usize) -> Result<bool, ExecError> {
        let retract = matches!(chunk.kind(row), RowKind::UpdateBefore | RowKind::Delete);
        if retract && !self.retracts {
            return Err(ExecError::Internal(
                "a retraction reached a group aggregate planned for an insert-only input".into(),
            ));
        }
        Ok(retract)
    }

    /// The rows of `batch` in rounds (see the module's comment).
    fn rounds(
        &mut self,
        chunk: &StreamChunk,
        keys: Option<&arrow_row::Rows>,
    ) -> Result<Vec<Vec<RoundRow>>, ExecError> {
        let now = self.ctx.now_millis();
        self.occurrences.clear();
        let mut rounds: Vec<Vec<RoundRow>> = Vec::new();
        for row in 0..chunk.num_rows() {
            let retract = self.retraction(chunk, row)?;
            let bytes = key_bytes(keys, row);
            // An expired key is gone, whether or not a sweep has freed it yet.
            if self.keyed.ttl.is_on()
                && let Some(id) = self.keyed.keys.find(bytes)
                && self.expired(id, now)
            {
                self.forget(id);
            }
            // A retraction of an unknown key may still meet the key made by an earlier
            // row of this batch: look it up, and decide when its round runs. Any other row
            // finds or makes its key in one probe.
            let Some(key) = self.key_for(bytes, retract) else {
                continue;
            };
            let count = self.occurrences.entry(key).or_insert(0);
            let round = *count as usize;
            *count += 1;
            if rounds.len() <= round {
                rounds.push(Vec::new());
            }
            rounds[round].push(RoundRow {
                row: row as u32,
                key,
                retract,
            });
        }
        Ok(rounds)
    }

    /// A streaming batch: per row, the change to its group's result.
    fn update_results(
        &mut self,
        chunk: &StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let batch = &chunk.batch;
        let keys = self.encoder.as_ref().map(|e| e.encode(batch)).transpose()?;
        let rounds = self.rounds(chunk, keys.as_ref())?;
        let mut emitted: Vec<Emitted> = Vec::new();
        // Per round: the results before it, then after it.
        let mut results: Vec<Vec<ArrayRef>> = Vec::new();
        // The keys of the last round: a round of the same keys (one hot key's rows, a round
        // each) starts from the results the last one ended with.
        let mut last_slots: Vec<u32> = Vec::new();
        for round in rounds {
            // A retraction of a group that holds nothing (now) is ignored.
            let round: Vec<RoundRow> = round
                .into_iter()
                .filter(|r| !(r.retract && self.rows.get(r.key as usize) <= 0))
                .collect();
            if round.is_empty() {
                continue;
            }
            let counts_before: Vec<i64> = round
                .iter()
                .map(|r| self.rows.get(r.key as usize))
                .collect();
            let slots: Vec<u32> = round.iter().map(|r| r.key).collect();
            // (A group emptied by the last round was freed since, but then its row here
            // finds it empty and reads only the results after.) The results it starts from
            // are then the last ones kept, not kept again.
            let same_keys = !results.is_empty() && slots == last_slots;
            let before = match results.last() {
                Some(after) if same_keys => after.clone(),
                _ => self.results(&slots)?,
            };
            self.apply(batch, &round)?;
            self.touch(&round);
            let after = self.results(&slots)?;
            let comparators: Vec<Changed<'_>> = before
                .iter()
                .zip(&after)
                .map(|(b, a)| Changed::new(b.as_ref(), a.as_ref()))
                .collect::<Result<_, _>>()?;
            let before_at = if same_keys {
                results.len() - 1
            } else {
                results.len()
            };
            let after_at = before_at + 1;
            for (i, r) in round.iter().enumerate() {
                let was = counts_before[i] > 0;
                let is = self.rows.get(r.key as usize) > 0;
                let mut emit = |kind, results| {
                    emitted.push(Emitted {
                        row: r.row,
                        kind,
                        results,
                        index: i,
                    })
                };
                match (was, is) {
                    (false, true) => emit(RowKind::Insert, after_at),
                    (true, true) => {
                        let changed = comparators.iter().any(|c| c.at(i));
                        if changed {
                            if self.update_before {
                                emit(RowKind::UpdateBefore, before_at);
                            }
                            emit(RowKind::UpdateAfter, after_at);
                        }
                    }
                    (true, false) => emit(RowKind::Delete, before_at),
                    (false, false) => {}
                }
                if !is {
                    // The group is gone: its state starts afresh if a later row brings it back.
                    for a in &mut self.accumulators {
                        a.free(r.key);
                    }
                }
            }
            if !same_keys {
                results.push(before);
            }
            results.push(after);
            last_slots = slots;
        }
        self.forget_empty();
        if emitted.is_empty() {
            return Ok(());
        }
        // Rounds reorder rows across keys; put them back in input order (a row's -U before
        // its +U, as emitted).
        if results.len() > 2 {
            emitted.sort_by_key(|e| e.row);
        }
        let rows = UInt32Array::from_iter_values(emitted.iter().map(|e| e.row));
        let mut columns: Vec<ArrayRef> = self
            .grouping
            .iter()
            .map(|&g| arrow_select::take::take(batch.column(g).as_ref(), &rows, None))
            .collect::<Result<_, _>>()?;
        let picks: Vec<(usize, usize)> = emitted.iter().map(|e| (e.results, e.index)).collect();
        for a in 0..self.accumulators.len() {
            let arrays: Vec<&dyn Array> = results.iter().map(|r| r[a].as_ref()).collect();
            columns.push(arrow_select::interleave::interleave(&arrays, &picks)?);
        }
        let n = emitted.len();
        let output = batch_with_rows(self.output.clone(), columns, n)?;
        out.emit(StreamChunk {
            batch: output,
            kinds: Some(emitted.into_iter().map(|e| e.kind).collect()),
        })
    }
}

/// Whether a group's result changed in a round: row `i` of the results before it against row
/// `i` of those after. BIGINT results (counts, most sums) compare in place; other types
/// through Arrow's comparator, which costs an allocation and type checks per round.
enum Changed<'a> {
    BigInt(&'a Int64Array, &'a Int64Array),
    Any(DynComparator),
}

impl<'a> Changed<'a> {
    fn new(before: &'a dyn Array, after: &'a dyn Array) -> Result<Self, ExecError> {
        if let (Some(b), Some(a)) = (
            before.as_primitive_opt::<Int64Type>(),
            after.as_primitive_opt::<Int64Type>(),
        ) {
            return Ok(Changed::BigInt(b, a));
        }
        Ok(Changed::Any(make_comparator(
            before,
            after,
            SortOptions::default(),
        )?))
    }

    fn at(&self, i: usize) -> bool {
        match self {
            Changed::BigInt(b, a) => {
                b.is_valid(i) != a.is_valid(i) || (b.is_valid(i) && b.value(i) != a.value(i))
            }
            Changed::Any(compare) => compare(i, i).is_ne(),
        }
    }
}

impl Operator for GroupAggregateOperator {
    fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.keyed.open(ctx);
        self.ctx = ctx.clone();
        Ok(())
    }

    fn next_processing_time(&self) -> Option<i64> {
        self.keyed.ttl.next_sweep()
    }

    /// Sweeps out the keys the state TTL expired (they are already invisible).
    fn on_processing_time(&mut self, now: i64, _out: &mut dyn Output) -> Result<(), ExecError> {
        if !self.keyed.ttl.sweep_due(now) {
            return Ok(());
        }
        let expired: Vec<u32> = self
            .keyed
            .keys
            .iter()
            .map(|(id, _)| id)
            .filter(|&id| self.expired(id, now))
            .collect();
        for id in expired {
            self.forget(id);
        }
        Ok(())
    }

    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        if chunk.num_rows() == 0 {
            return Ok(());
        }
        if self.final_only {
            self.accumulate(&chunk)
        } else {
            self.update_results(&chunk, out)
        }
    }

    /// Batch mode: every group's final row, in key order (a global aggregate's one row even
    /// over no input).
    fn finish(&mut self, out: &mut dyn Output) -> Result<(), ExecError> {
        if !self.final_only {
            return Ok(());
        }
        if self.grouping.is_empty() && self.keyed.keys.is_empty() {
            // The one group of a global aggregate, empty.
            self.key_for(&[], false);
        }
        let mut live: Vec<(u32, &[u8])> = self
            .keyed
            .keys
            .iter()
            .map(|(id, e)| (id, e.bytes))
            .collect();
        if live.is_empty() {
            return Ok(());
        }
        live.sort_by(|a, b| a.1.cmp(b.1));
        let slots: Vec<u32> = live.iter().map(|&(id, _)| id).collect();
        let mut columns = match &self.encoder {
            Some(encoder) => encoder.decode(live.iter().map(|&(_, bytes)| bytes))?,
            None => Vec::new(),
        };
        columns.extend(self.results(&slots)?);
        let n = slots.len();
        out.emit(StreamChunk::inserts(batch_with_rows(
            self.output.clone(),
            columns,
            n,
        )?))
    }

    /// Per key group: for each key, its bytes, its row count and every accumulator's state
    /// (what [`FrozenGroups`] writes).
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        self.frozen()
            .to_snapshot()
            .expect("writing into memory does not fail")
    }

    fn freeze(&self) -> Option<Box<dyn FrozenState>> {
        Some(Box::new(self.frozen()))
    }

    fn restoring(&mut self, _bytes: usize) {
        self.restoring = true;
    }

    fn restore(&mut self, key_group: u32, state: &[u8]) -> Result<(), ExecError> {
        self.keyed.check_owned(key_group)?;
        let mut input = StateReader::new(state);
        while !input.is_empty() {
            let bytes = input.bytes()?;
            let id = if self.restoring {
                let id = self.keyed.keys.add_unindexed(bytes);
                self.new_key(id);
                id
            } else {
                self.key_for(bytes, false)
                    .ok_or_else(|| ExecError::Internal("a restored key is missing".into()))?
            };
            self.rows.set(id as usize, input.i64()?);
            let written = input.i64()?;
            if written != NEVER_WRITTEN {
                self.written.touch(id as usize, written);
            }
            for a in &mut self.accumulators {
                a.read_slot(id, &mut input)?;
            }
        }
        Ok(())
    }

    fn restored(&mut self) -> Result<(), ExecError> {
        if std::mem::take(&mut self.restoring) {
            self.keyed
                .keys
                .index_added()
                .map_err(|_| ExecError::Internal("the restored state holds a key twice".into()))?;
        }
        Ok(())
    }
}

/// A group aggregate's keyed state as it was at a barrier.
struct FrozenGroups {
    keys: FrozenKeys,
    rows: FrozenHeld,
    written: FrozenWrittenAt,
    accumulators: Vec<Box<dyn FrozenSlots>>,
}

impl FrozenState for FrozenGroups {
    /// Per key group, in parts: for each key in id order, its bytes, its row count, when it
    /// was written and every accumulator's state.
    fn write(&self, out: &mut PartSink<'_>) -> Result<(), ExecError> {
        self.keys.write_each(out, |id, key, bytes| {
            put_bytes(bytes, key);
            put_i64(bytes, self.rows.get(id as usize));
            put_i64(bytes, self.written.get(id as usize));
            for a in &self.accumulators {
                a.write_slot(id, bytes);
            }
        })
    }
}

#[cfg(test)]
#[path = "group_aggregate_tests.rs"]
mod tests;
