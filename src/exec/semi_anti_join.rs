//! `SemiAntiJoinOperator`: a regular SEMI or ANTI join (`[NOT] EXISTS`, `[NOT] IN` over a
//! subquery), as Flink's `StreamingSemiAntiJoinOperator` runs it. Only the left's columns
//! leave; each left row is emitted while it has a match (SEMI) or while it has none (ANTI):
//!
//! - A left row arriving is counted against the right rows of its key that the residual
//!   passes; it is emitted with its own kind (`+I`/`+U`, or `-U`/`-D` for a retraction) when
//!   it qualifies, and kept (or taken back) with its number of matches.
//! - A right row arriving changes the count of each left row it matches: a left row reaching
//!   its first match is emitted with the right row's kind (SEMI) or `-D` (ANTI), one losing
//!   its last with the right row's kind (SEMI) or `+I` (ANTI), once per copy.
//! - A key holding a NULL matches nothing.
//!
//! In batch mode (`final_only`) nothing is taken back: SEMI emits a left row at its first
//! match, ANTI the left rows that never matched when the input ends. Both sides are kept
//! as the regular join keeps them (`state/join_side.rs`: rows by key with their counts and,
//! on the left, their matches), snapshotted per key group.

use arrow_array::Array;
use arrow_buffer::NullBuffer;
use arrow_schema::SchemaRef;

use super::state::join_side::{JoinState, KeyedRow, Side, pair_schema, verdicts_in_rounds};
use super::state::key::key_bytes;
use super::state::key_group::KeyGroupRange;
use super::state::ttl::StateTtl;
use crate::exec::error::ExecError;
use crate::exec::operator::{FrozenState, Operator, OperatorContext, Output};
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;
use crate::types::chunk::{RowKind, StreamChunk, batch_with_rows};

pub struct SemiAntiJoinOperator {
    /// Left, right.
    /// Both inputs: left, right.
    state: JoinState,
    anti: bool,
    residual: Option<ScalarExpr>,
    output: SchemaRef,
    /// Both sides' columns, which the residual reads.
    pairs: SchemaRef,
    ctx: EvalContext,
    final_only: bool,
    key_groups: KeyGroupRange,
}

impl SemiAntiJoinOperator {
    /// A SEMI (ANTI, `anti`) join of `left` and `right` rows on `keys` (columns of each
    /// side), `residual` over both sides' columns (the left's, then the right's); `output`
    /// is the left's columns.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        left: &SchemaRef,
        right: &SchemaRef,
        output: SchemaRef,
        keys: (Vec<usize>, Vec<usize>),
        anti: bool,
        residual: Option<ScalarExpr>,
        ctx: EvalContext,
        final_only: bool,
    ) -> Result<Self, ExecError> {
        let pairs = pair_schema(left, right);
        Ok(SemiAntiJoinOperator {
            state: JoinState::new([
                Side::new(left, keys.0, false)?,
                Side::new(right, keys.1, false)?,
            ]),
            anti,
            residual,
            output,
            pairs,
            ctx,
            final_only,
            key_groups: OperatorContext::default().key_groups,
        })
    }

    /// The residual's verdict on each (left row, right row) pair (all pass without one).
    fn verdicts(&self, pairs: &[[KeyedRow<'_>; 2]]) -> Result<Vec<bool>, ExecError> {
        let Some(residual) = &self.residual else {
            return Ok(vec![true; pairs.len()]);
        };
        let mut verdicts = Vec::with_capacity(pairs.len());
        let build = |range: std::ops::Range<usize>| {
            let pairs = &pairs[range];
            let mut columns = Vec::with_capacity(self.pairs.fields().len());
            for (s, side) in self.state.sides.iter().enumerate() {
                let rows: Vec<KeyedRow<'_>> = pairs.iter().map(|p| p[s]).collect();
                columns.extend(side.decode(&rows)?);
            }
            Ok(batch_with_rows(self.pairs.clone(), columns, pairs.len())?)
        };
        verdicts_in_rounds(residual, &self.ctx, pairs.len(), build, &mut verdicts)?;
        Ok(verdicts)
    }

    /// Emits left rows with their kinds.
    fn emit(&self, rows: &Emitted, out: &mut dyn Output) -> Result<(), ExecError> {
        if rows.kinds.is_empty() {
            return Ok(());
        }
        let columns = self.state.sides[0].decode(&rows.rows())?;
        let batch = batch_with_rows(self.output.clone(), columns, rows.kinds.len())?;
        let inserts = rows.kinds.iter().all(|k| *k == RowKind::Insert);
        out.emit(StreamChunk {
            batch,
            kinds: (!inserts).then(|| rows.kinds.clone()),
        })
    }

    /// Left rows arriving: counted against the right's, emitted when they qualify, kept.
    fn process_left(
        &mut self,
        chunk: &StreamChunk,
        keys: Option<&arrow_row::Rows>,
        nulls: Option<&NullBuffer>,
        rows: Option<&arrow_row::Rows>,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let n = chunk.num_rows();
        // Every candidate pair: (row, right record's key id and place).
        let mut candidates: Vec<(usize, u32, usize)> = Vec::new();
        for i in 0..n {
            if nulls.is_some_and(|b| b.is_null(i)) {
                continue;
            }
            if let Some(id) = self.state.keys.find(key_bytes(keys, i)) {
                let records = self.state.records(1, id);
                candidates.extend((0..records.len()).map(|r| (i, id, r)));
            }
        }
        let pairs: Vec<[KeyedRow<'_>; 2]> = candidates
            .iter()
            .map(|&(i, id, r)| {
                [
                    (key_bytes(keys, i), Side::stored_bytes(rows, i)),
                    self.state.row(1, (id, r as u32)),
                ]
            })
            .collect();
        let verdicts = self.verdicts(&pairs)?;
        let mut matches = vec![0u32; n];
        for (&(i, id, r), ok) in candidates.iter().zip(verdicts) {
            if ok {
                matches[i] += self.state.records(1, id).get(r).count;
            }
        }
        let mut emitted = Emitted::default();
        for (i, &matched) in matches.iter().enumerate() {
            let kind = chunk.kind(i);
            let (key, row) = (key_bytes(keys, i), Side::stored_bytes(rows, i));
            let qualifies = (matched > 0) != self.anti;
            let accumulate = matches!(kind, RowKind::Insert | RowKind::UpdateAfter);
            let null_key = nulls.is_some_and(|b| b.is_null(i));
            // Batch mode: ANTI waits for the end of the input, but for a NULL key, which
            // never matches.
            if qualifies && (!(self.final_only && self.anti) || null_key) {
                emitted.push((key, row), kind);
            }
            if null_key {
                continue;
            }
            if accumulate {
                self.state
                    .add(0, key, None, row, matched, 0, StateTtl::default());
            } else {
                self.state.retract(0, key, row, 0, StateTtl::default());
            }
        }
        self.emit(&emitted, out)
    }

    /// Right rows arriving: each left row they match gains (loses) one, and is emitted as
    /// it reaches its first match (loses its last); then they are kept (taken back).
    fn process_right(
        &mut self,
        chunk: &StreamChunk,
        keys: Option<&arrow_row::Rows>,
        nulls: Option<&NullBuffer>,
        rows: Option<&arrow_row::Rows>,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let n = chunk.num_rows();
        let mut emitted = Emitted::default();
        for i in 0..n {
            if nulls.is_some_and(|b| b.is_null(i)) {
                continue;
            }
            let key = key_bytes(keys, i);
            let row = Side::stored_bytes(rows, i);
            let kind = chunk.kind(i);
            let accumulate = matches!(kind, RowKind::Insert | RowKind::UpdateAfter);
            let id = self.state.keys.find(key);
            if let Some(id) = id {
                let records = self.state.records(0, id).len() as u32;
                let pairs: Vec<[KeyedRow<'_>; 2]> = (0..records)
                    .map(|r| [self.state.row(0, (id, r)), (key, row)])
                    .collect();
                let verdicts = self.verdicts(&pairs)?;
                for (r, ok) in (0..records).zip(verdicts) {
                    if !ok {
                        continue;
                    }
                    let record = self.state.record(0, (id, r));
                    let left = &mut self.state.sides[0];
                    let before = left.associations(record.row);
                    // SEMI passes the right row's kind on (`+U` for an update that brings
                    // the first match), as Flink's operator does.
                    let change = if accumulate {
                        left.set_associations(record.row, before + 1);
                        (before == 0).then_some(if self.anti { RowKind::Delete } else { kind })
                    } else {
                        left.set_associations(record.row, before.saturating_sub(1));
                        (before == 1).then_some(if self.anti { RowKind::Insert } else { kind })
                    };
                    // Batch mode: nothing is taken back, ANTI waits for the end.
                    if let Some(kind) = change
                        && !(self.final_only && (self.anti || kind == RowKind::Delete))
                    {
                        for _ in 0..record.count {
                            emitted.push(self.state.row(0, (id, r)), kind);
                        }
                    }
                }
            }
            // The key stays while the left holds rows under it.
            let id = id.filter(|&id| !self.state.records(0, id).is_empty());
            if accumulate {
                self.state.add(1, key, id, row, 0, 0, StateTtl::default());
            } else {
                self.state.retract(1, key, row, 0, StateTtl::default());
            }
        }
        self.emit(&emitted, out)
    }
}

impl Operator for SemiAntiJoinOperator {
    fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.state.keys.set_max_parallelism(ctx.max_parallelism);
        self.key_groups = ctx.key_groups;
        Ok(())
    }

    fn process(
        &mut self,
        input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        if input > 1 {
            return Err(ExecError::Internal(format!("a join has no input {input}")));
        }
        let batch = &chunk.batch;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let side = &self.state.sides[input];
        let keys = side.keys.as_ref().map(|e| e.encode(batch)).transpose()?;
        let nulls = side
            .key_columns
            .iter()
            .fold(None::<NullBuffer>, |acc, &c| {
                NullBuffer::union(acc.as_ref(), batch.column(c).logical_nulls().as_ref())
            })
            .filter(|b| b.null_count() > 0);
        let rows = side.encode(batch)?;
        if input == 0 {
            self.process_left(&chunk, keys.as_ref(), nulls.as_ref(), rows.as_ref(), out)
        } else {
            self.process_right(&chunk, keys.as_ref(), nulls.as_ref(), rows.as_ref(), out)
        }
    }

    /// Batch mode's ANTI join: the left rows that never matched.
    fn finish(&mut self, out: &mut dyn Output) -> Result<(), ExecError> {
        if !(self.final_only && self.anti) {
            return Ok(());
        }
        let mut emitted = Emitted::default();
        let left = &self.state.sides[0];
        for (record, row) in self.state.all_records(0) {
            if left.associations(record.row) == 0 {
                for _ in 0..record.count {
                    emitted.push(row, RowKind::Insert);
                }
            }
        }
        self.emit(&emitted, out)
    }

    /// Per key group: per side and key, the key's bytes and its rows with their counts and
    /// matches.
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        self.state.snapshot()
    }

    /// The state's pages shared with the checkpoint's writer (docs/design/0008 §7).
    fn freeze(&self) -> Option<Box<dyn FrozenState>> {
        Some(Box::new(self.state.freeze()))
    }

    fn restore(&mut self, key_group: u32, state: &[u8]) -> Result<(), ExecError> {
        self.key_groups.check_owned(key_group)?;
        self.state.restore(state)
    }
}

/// Left rows to emit, each row's key and stored bytes copied side by side.
#[derive(Default)]
struct Emitted {
    bytes: Vec<u8>,
    /// Per row, where its key's bytes end and where its stored bytes end.
    ends: Vec<(usize, usize)>,
    kinds: Vec<RowKind>,
}

impl Emitted {
    fn push(&mut self, (key, row): KeyedRow<'_>, kind: RowKind) {
        self.bytes.extend_from_slice(key);
        let key_end = self.bytes.len();
        self.bytes.extend_from_slice(row);
        self.ends.push((key_end, self.bytes.len()));
        self.kinds.push(kind);
    }

    fn rows(&self) -> Vec<KeyedRow<'_>> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&(key_end, end)| {
                let row = (&self.bytes[start..key_end], &self.bytes[key_end..end]);
                start = end;
                row
            })
            .collect()
    }
}

#[cfg(test)]
#[path = "semi_anti_join_tests.rs"]
mod tests;
