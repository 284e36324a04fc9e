//! `RankOperator`: a Top-N (`ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)` kept within a
//! range of ranks) over a stream that may retract, as Flink's retractable Top-N keeps it:
//! each partition holds all its rows, ordered, and after every input row the ranks in range
//! are compared with those before it. With the rank column in the output, a position whose
//! row changed emits `-U` of the old row and `+U` of the new one at that rank (`+I` for a
//! rank newly filled, `-D` for one emptied); without it, rows that left the range are
//! deleted and rows that entered it inserted.
//!
//! In batch mode (`final_only`) nothing is emitted until the input ends; then each partition's
//! rows in range are emitted with their rank, computed by ROW_NUMBER, RANK or DENSE_RANK (a
//! range of everything when the query keeps every rank, as a batch OVER not ordered by time does).
//!
//! Rows are kept as `arrow-row` bytes: the order key (whose bytes sort as the ORDER BY asks,
//! directions and NULL places included) followed by the row's other columns (neither the
//! partition key, which the partition's key holds, nor the ORDER BY columns, which the order
//! key holds). Over an insert-only stream a row's arrival number comes between the two, so
//! that ties in the order key rank in arrival order, a later row after the earlier ones, as
//! Flink's Top-N lists a sort key's rows; over a retracting stream (where a retraction must
//! find its row by its values) and in batch mode ties fall to the other columns in schema
//! order. Emitted rows are put together again from the partition's key, the order key and
//! the rest.
//!
//! State is snapshotted per key group: for each partition, its key and its rows with counts.

use std::collections::BTreeMap;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;

use super::aggregate::{StateReader, put_bytes, put_i64, put_u32};
use super::state::key::{KeyEncoder, key_bytes, optional_encoder, order_converter};
use super::state::key_table::FrozenKeys;
use super::state::keyed::Keyed;
use super::state::sorted_rows::{Evicted, FrozenPartitions, Partitions, SortedRows};
use super::state::ttl::{FrozenWrittenAt, NEVER_WRITTEN, StateTtl, WrittenAt};
use crate::exec::error::ExecError;
use crate::exec::operator::{FrozenState, Operator, OperatorContext, Output, PartSink};
use crate::plan::logical::{OrderKey, RankFunction};
use crate::types::chunk::{RowKind, StreamChunk, batch_with_rows};

/// The bytes of a row's arrival number (big-endian, so that numbers sort as bytes).
const ARRIVAL_BYTES: usize = 8;

pub struct RankOperator {
    output: SchemaRef,
    function: RankFunction,
    /// First and last rank kept (1-based, inclusive).
    range: (u64, u64),
    with_rank: bool,
    /// Whether a changed rank's old row is retracted (`-U`) before its new one.
    update_before: bool,
    final_only: bool,
    encoder: Option<KeyEncoder>,
    order: RowConverter,
    order_columns: Vec<usize>,
    /// The columns neither in the partition key nor in the ORDER BY, in schema order, and
    /// their converter (none when there are none).
    rest_columns: Vec<usize>,
    rest: Option<RowConverter>,
    /// Where each input column comes from when a row is emitted.
    sources: Vec<Source>,
    /// Partitions; a partition's id indexes `partitions`.
    keyed: Keyed<()>,
    partitions: Partitions,
    /// Whether the input retracts rows (then every row is kept: any may come back).
    retracting: bool,
    /// Over an insert-only stream, the arrival number of the next row (ties rank in arrival
    /// order); `None` otherwise.
    arrival: Option<u64>,
    /// Per partition, when it was last written (processing time, milliseconds).
    written: WrittenAt,
    ctx: OperatorContext,
}

/// Where an emitted row's column comes from: the partition key's, the order key's or the
/// rest's column at that position.
#[derive(Clone, Copy)]
enum Source {
    Key(usize),
    Order(usize),
    Rest(usize),
}

/// A row of a partition with its rank: its entry (order key, then the rest) and the order
/// key's length.
#[derive(Clone, PartialEq)]
struct Ranked {
    entry: Box<[u8]>,
    order_len: u32,
    rank: u64,
}

impl Ranked {
    fn at(entry: (&[u8], u32), rank: u64) -> Self {
        Ranked {
            entry: entry.0.into(),
            order_len: entry.1,
            rank,
        }
    }
}

/// A partition's entries by position, with the one an insert just evicted still at its old
/// position past the partition's end.
struct PositionedRows<'a> {
    partition: SortedRows<'a>,
    evicted: Option<(usize, &'a Evicted)>,
}

impl PositionedRows<'_> {
    fn entry_at(&self, position: usize) -> (&[u8], u32) {
        match self.evicted {
            Some((at, e)) if at == position => (&e.entry, e.order_len),
            _ => self.partition.entry_at(position).unwrap_or_default(),
        }
    }
}

/// A change to emit: the partition, the row with its rank (when output), its kind.
struct Change {
    partition: u32,
    row: Ranked,
    kind: RowKind,
}

impl RankOperator {
    /// The partitions, their keys and write times as they are now (docs/design/0008 §7).
    fn frozen(&self) -> FrozenRank {
        FrozenRank {
            keys: self.keyed.keys.freeze(),
            written: self.written.freeze(),
            partitions: self.partitions.freeze(),
        }
    }

    /// Ranks of `function` over rows of `input` by `partition` and `order`, keeping ranks
    /// `range`; `output` is the input's columns, then the rank when `with_rank`;
    /// `update_before`: a changed rank's old row is retracted first; `retracting`: the input
    /// updates or deletes rows.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        input: SchemaRef,
        output: SchemaRef,
        partition: Vec<usize>,
        order: &[OrderKey],
        function: RankFunction,
        range: (u64, u64),
        with_rank: bool,
        update_before: bool,
        retracting: bool,
        final_only: bool,
    ) -> Result<Self, ExecError> {
        let order_columns: Vec<usize> = order.iter().map(|o| o.column).collect();
        let rest_columns: Vec<usize> = (0..input.fields().len())
            .filter(|c| !partition.contains(c) && !order_columns.contains(c))
            .collect();
        let rest = match rest_columns.is_empty() {
            true => None,
            false => Some(RowConverter::new(
                rest_columns
                    .iter()
                    .map(|&c| arrow_row::SortField::new(input.field(c).data_type().clone()))
                    .collect(),
            )?),
        };
        let sources = (0..input.fields().len())
            .map(|c| {
                if let Some(i) = partition.iter().position(|&p| p == c) {
                    Source::Key(i)
                } else if let Some(i) = order_columns.iter().position(|&o| o == c) {
                    Source::Order(i)
                } else {
                    Source::Rest(rest_columns.iter().position(|&r| r == c).unwrap_or(0))
                }
            })
            .collect();
        let encoder = optional_encoder(&input, partition)?;
        let ctx = OperatorContext::default();
        Ok(RankOperator {
            output,
            function,
            range,
            with_rank,
            final_only,
            encoder,
            order: order_converter(&input, order)?,
            order_columns,
            rest_columns,
            rest,
            sources,
            keyed: Keyed::new(),
            // A Top-N over inserts keeps a few rows per partition; anything else may keep
            // many.
            partitions: Partitions::new(!retracting && !final_only && range.1 <= 64),
            retracting,
            arrival: (!retracting && !final_only).then_some(0),
            written: WrittenAt::default(),
            ctx,
            update_before,
        })
    }

    /// The rows of a partition in range, with their ranks, in order.
    fn ranked(&self, rows: SortedRows<'_>) -> Vec<Ranked> {
        let (first, last) = self.range;
        let mut out = Vec::new();
        let mut position = 0u64;
        let mut rank = 0u64;
        let mut dense = 0u64;
        let mut previous: Option<&[u8]> = None;
        for (order, row, count) in rows.iter() {
            for _ in 0..count {
                position += 1;
                if previous != Some(order) {
                    rank = position;
                    dense += 1;
                    previous = Some(order);
                }
                let r = match self.function {
                    RankFunction::RowNumber => position,
                    RankFunction::Rank => rank,
                    RankFunction::DenseRank => dense,
                };
                if r > last {
                    return out;
                }
                if r >= first {
                    let entry: Box<[u8]> = [order, row].concat().into();
                    out.push(Ranked {
                        entry,
                        order_len: order.len() as u32,
                        rank: r,
                    });
                }
            }
        }
        out
    }

    /// What changed in partition `p`'s ranks in range.
    fn diff(&self, p: u32, before: &[Ranked], after: &[Ranked], out: &mut Vec<Change>) {
        let mut push = |row: &Ranked, kind| {
            out.push(Change {
                partition: p,
                row: row.clone(),
                kind,
            })
        };
        if self.positional() {
            let n = before.len().max(after.len());
            for i in 0..n {
                match (before.get(i), after.get(i)) {
                    (Some(b), Some(a)) if b == a => {}
                    (Some(b), Some(a)) => {
                        if self.update_before {
                            push(b, RowKind::UpdateBefore);
                        }
                        push(a, RowKind::UpdateAfter);
                    }
                    (Some(b), None) => push(b, RowKind::Delete),
                    (None, Some(a)) => push(a, RowKind::Insert),
                    (None, None) => {}
                }
            }
            return;
        }
        // Without ranks: the multiset difference, deletes first.
        let mut left: BTreeMap<(&[u8], u32), i64> = BTreeMap::new();
        for r in before {
            *left.entry((&r.entry, r.order_len)).or_insert(0) += 1;
        }
        for r in after {
            *left.entry((&r.entry, r.order_len)).or_insert(0) -= 1;
        }
        for (&(entry, order_len), &n) in &left {
            for _ in 0..n.max(0) {
                push(&Ranked::at((entry, order_len), 0), RowKind::Delete);
            }
        }
        for (&(entry, order_len), &n) in &left {
            for _ in 0..(-n).max(0) {
                push(&Ranked::at((entry, order_len), 0), RowKind::Insert);
            }
        }
    }

    /// The changes of a row inserted at position `at` (0-based) of partition `p`, whose rows
    /// are each there once (Flink's AppendFast path, without recomputing the ranks): the
    /// rows from `at` on move down one rank, and one past the last rank kept leaves.
    /// `evicted`: that row, already taken out by the insert (a full partition).
    fn inserted_at(
        &mut self,
        p: usize,
        at: usize,
        evicted: Option<&Evicted>,
        out: &mut Vec<Change>,
    ) {
        let last = self.range.1 as usize;
        let first = self.range.0.saturating_sub(1) as usize;
        let partition = self.partitions.get(p);
        let rows = PositionedRows {
            partition,
            evicted: evicted.map(|e| (last, e)),
        };
        let len = partition.total() as usize + usize::from(evicted.is_some());
        let mut push = |position: usize, rank: u64, kind| {
            out.push(Change {
                partition: p as u32,
                row: Ranked::at(rows.entry_at(position), rank),
                kind,
            })
        };
        if self.positional() {
            for position in at.max(first)..len.min(last) {
                let rank = position as u64 + 1;
                if position + 1 < len {
                    if self.update_before {
                        push(position + 1, rank, RowKind::UpdateBefore);
                    }
                    push(position, rank, RowKind::UpdateAfter);
                } else {
                    push(position, rank, RowKind::Insert);
                }
            }
        } else if at < last {
            if len > last {
                push(last, 0, RowKind::Delete);
            }
            push(at, 0, RowKind::Insert);
        }
        if len > last && evicted.is_none() {
            // The row that fell past the last rank goes for good.
            self.partitions.remove_last_one(p);
        }
    }

    /// Whether changes are per position (`-U`/`+U` of the row a rank held), as Flink's Top-N
    /// emits them with the rank in the output, a range after an offset, or a range of one
    /// rank (whose rank number Flink's plan turns into a constant above); else rows that
    /// left the range are deleted and rows that entered it inserted.
    fn positional(&self) -> bool {
        self.with_rank || self.range.0 > 1 || self.range.0 == self.range.1
    }

    /// Forgets partitions not written for `ttl` milliseconds (streaming only; 0: never).
    pub fn with_state_ttl(mut self, ttl: i64) -> Self {
        if !self.final_only {
            self.keyed.ttl = StateTtl::new(ttl);
        }
        self
    }

    fn partition(&mut self, bytes: &[u8]) -> usize {
        let (id, mut new) = self.keyed.keys.intern(bytes);
        let id = id as usize;
        if self.keyed.ttl.is_on() {
            // An expired partition is gone, whether or not a sweep has freed it yet.
            let now = self.ctx.now_millis();
            new |= self.written.expired(&self.keyed.ttl, id, now);
            self.written.touch(id, now);
        }
        if new {
            self.partitions.clear(id);
        }
        id
    }

    /// The changes as rows: each put together from its partition's key, its order key and
    /// the rest of its columns.
    fn emit(&self, changes: Vec<Change>, out: &mut dyn Output) -> Result<(), ExecError> {
        if changes.is_empty() {
            return Ok(());
        }
        let keys = match &self.encoder {
            Some(encoder) => {
                encoder.decode(changes.iter().map(|c| self.keyed.keys.bytes(c.partition)))?
            }
            None => Vec::new(),
        };
        let parser = self.order.parser();
        let orders = self.order.convert_rows(
            changes
                .iter()
                .map(|c| parser.parse(&c.row.entry[..c.row.order_len as usize])),
        )?;
        // (After an arrival number, when rows have one.)
        let skip = if self.arrival.is_some() {
            ARRIVAL_BYTES
        } else {
            0
        };
        let rests = match &self.rest {
            Some(rest) => {
                let parser = rest.parser();
                rest.convert_rows(
                    changes
                        .iter()
                        .map(|c| parser.parse(&c.row.entry[c.row.order_len as usize + skip..])),
                )?
            }
            None => Vec::new(),
        };
        let mut columns: Vec<ArrayRef> = self
            .sources
            .iter()
            .map(|source| match *source {
                Source::Key(i) => keys[i].clone(),
                Source::Order(i) => orders[i].clone(),
                Source::Rest(i) => rests[i].clone(),
            })
            .collect();
        if self.with_rank {
            columns.push(std::sync::Arc::new(Int64Array::from_iter_values(
                changes.iter().map(|c| c.row.rank as i64),
            )));
        }
        let n = changes.len();
        let batch = batch_with_rows(self.output.clone(), columns, n)?;
        let inserts = changes.iter().all(|c| c.kind == RowKind::Insert);
        out.emit(StreamChunk {
            batch,
            kinds: (!inserts).then(|| changes.into_iter().map(|c| c.kind).collect()),
        })
    }
}

impl Operator for RankOperator {
    fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.keyed.open(ctx);
        self.ctx = ctx.clone();
        Ok(())
    }

    fn next_processing_time(&self) -> Option<i64> {
        self.keyed.ttl.next_sweep()
    }

    /// Sweeps out the partitions the state TTL expired (they are already invisible).
    fn on_processing_time(&mut self, now: i64, _out: &mut dyn Output) -> Result<(), ExecError> {
        if !self.keyed.ttl.sweep_due(now) {
            return Ok(());
        }
        let expired: Vec<u32> = self
            .keyed
            .keys
            .iter()
            .map(|(id, _)| id)
            .filter(|&id| self.written.expired(&self.keyed.ttl, id as usize, now))
            .collect();
        for id in expired {
            self.partitions.clear(id as usize);
            self.keyed.keys.remove(id);
        }
        Ok(())
    }

    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let batch: &RecordBatch = &chunk.batch;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let keys = self.encoder.as_ref().map(|e| e.encode(batch)).transpose()?;
        let order_columns: Vec<ArrayRef> = self
            .order_columns
            .iter()
            .map(|&c| batch.column(c).clone())
            .collect();
        let order = self.order.convert_columns(&order_columns)?;
        // The rest of each row's columns (empty rows when there are none).
        let rest_columns: Vec<ArrayRef> = self
            .rest_columns
            .iter()
            .map(|&c| batch.column(c).clone())
            .collect();
        let rows = self
            .rest
            .as_ref()
            .map(|rest| rest.convert_columns(&rest_columns))
            .transpose()?;
        let mut changes = Vec::new();
        // Partitions emptied by this batch, forgotten after its changes are emitted (which
        // read their keys).
        let mut emptied = Vec::new();
        // Over inserts only (Flink's AppendFastStrategy), a row past the last rank kept can
        // never come back: partitions keep only their top rows, and a row that would fall
        // past them changes nothing.
        let append_fast = !self.final_only
            && self.function == RankFunction::RowNumber
            && chunk.is_insert_only()
            && !self.retracting;
        let last = self.range.1;
        let mut numbered = Vec::new();
        for i in 0..batch.num_rows() {
            let bytes = key_bytes(keys.as_ref(), i);
            let p = self.partition(bytes);
            let order_bytes = order.row(i);
            let order_bytes = order_bytes.as_ref();
            let mut row_bytes: &[u8] = rows.as_ref().map_or(&[], |r| r.row(i).data());
            if let Some(next) = &mut self.arrival {
                numbered.clear();
                numbered.extend_from_slice(&next.to_be_bytes());
                numbered.extend_from_slice(row_bytes);
                *next += 1;
                row_bytes = &numbered;
            }
            let partition = self.partitions.get(p);
            let full = append_fast && partition.total() >= last;
            if full && partition.at_or_after_last(order_bytes, row_bytes) {
                continue;
            }
            if append_fast && partition.all_single() {
                // A full partition takes the row in and lets its last go in one step.
                if full {
                    if let Some((at, evicted)) =
                        self.partitions
                            .insert_evicting_last(p, order_bytes, row_bytes)
                    {
                        self.inserted_at(p, at, Some(&evicted), &mut changes);
                        continue;
                    }
                } else if let Some(at) =
                    self.partitions
                        .insert_new(p, order_bytes, row_bytes, last as usize)
                {
                    self.inserted_at(p, at, None, &mut changes);
                    continue;
                }
            }
            let retract = matches!(chunk.kind(i), RowKind::UpdateBefore | RowKind::Delete);
            let before = if self.final_only {
                Vec::new()
            } else {
                self.ranked(self.partitions.get(p))
            };
            let rows_of = &mut self.partitions;
            if retract {
                // A retraction of a row never seen: nothing to take back (and a partition
                // made for it goes again).
                if !rows_of.remove_one(p, order_bytes, row_bytes) {
                    if rows_of.get(p).is_empty() {
                        emptied.push(p as u32);
                    }
                    continue;
                }
            } else {
                rows_of.add(p, order_bytes, row_bytes, 1);
                if append_fast && rows_of.get(p).total() > last {
                    // The row that fell past the last rank goes for good.
                    rows_of.remove_last_one(p);
                }
            }
            if !self.final_only {
                let after = self.ranked(self.partitions.get(p));
                self.diff(p as u32, &before, &after, &mut changes);
            }
            if self.partitions.get(p).is_empty() {
                emptied.push(p as u32);
            }
        }
        self.emit(changes, out)?;
        for p in emptied {
            // A later row of the batch may have filled it again.
            if self.partitions.get(p as usize).is_empty() && self.keyed.keys.is_live(p) {
                self.keyed.keys.remove(p);
            }
        }
        Ok(())
    }

    /// Batch mode: every partition's rows in range, with their ranks, partitions in key
    /// order.
    fn finish(&mut self, out: &mut dyn Output) -> Result<(), ExecError> {
        if !self.final_only {
            return Ok(());
        }
        let mut partitions: Vec<(u32, &[u8])> = self
            .keyed
            .keys
            .iter()
            .map(|(id, e)| (id, e.bytes))
            .collect();
        partitions.sort_by(|a, b| a.1.cmp(b.1));
        let mut changes = Vec::new();
        for (id, _) in partitions {
            for row in self.ranked(self.partitions.get(id as usize)) {
                changes.push(Change {
                    partition: id,
                    row,
                    kind: RowKind::Insert,
                });
            }
        }
        self.emit(changes, out)
    }

    /// Per key group: for each partition, its key's bytes, when it was written and its rows
    /// (order key, row, count); what [`FrozenRank`] writes.
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        self.frozen()
            .to_snapshot()
            .expect("writing into memory does not fail")
    }

    fn freeze(&self) -> Option<Box<dyn FrozenState>> {
        Some(Box::new(self.frozen()))
    }

    fn restore(&mut self, key_group: u32, state: &[u8]) -> Result<(), ExecError> {
        self.keyed.check_owned(key_group)?;
        let mut input = StateReader::new(state);
        while !input.is_empty() {
            let p = self.partition(input.bytes()?);
            let written = input.i64()?;
            if written != NEVER_WRITTEN {
                self.written.touch(p, written);
            }
            for _ in 0..input.u32()? {
                let order = input.bytes()?;
                let row = input.bytes()?;
                let count = input.i64()? as u64;
                if let Some(next) = &mut self.arrival
                    && let Some(number) = row.first_chunk::<ARRIVAL_BYTES>()
                {
                    *next = (*next).max(u64::from_be_bytes(*number) + 1);
                }
                self.partitions.add(p, order, row, count);
            }
        }
        Ok(())
    }
}

/// A partition's rows as a snapshot holds them: how many, then each one's order key, bytes
/// and count.
fn put_rows(out: &mut Vec<u8>, rows: SortedRows<'_>) {
    put_u32(out, rows.len() as u32);
    rows.for_each(|(order, row, count)| {
        put_bytes(out, order);
        put_bytes(out, row);
        put_i64(out, count as i64);
    });
}

/// A ranking operator's partitions as they were at a barrier.
struct FrozenRank {
    keys: FrozenKeys,
    written: FrozenWrittenAt,
    partitions: FrozenPartitions,
}

impl FrozenState for FrozenRank {
    fn write(&self, out: &mut PartSink<'_>) -> Result<(), ExecError> {
        self.keys.write_each(out, |id, key, bytes| {
            put_bytes(bytes, key);
            put_i64(bytes, self.written.get(id as usize));
            put_rows(bytes, self.partitions.get(id as usize));
        })
    }
}

#[cfg(test)]
#[path = "rank_tests.rs"]
mod tests;
