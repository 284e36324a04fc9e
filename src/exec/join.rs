//! `JoinOperator`: a regular join of two streams (INNER, LEFT, RIGHT, FULL OUTER) on equal
//! keys, with an optional residual condition over each pair, as Flink's
//! `StreamingJoinOperator` runs it:
//!
//! - Each side keeps its rows by join key, each distinct row with a count and, on an outer
//!   side, the number of rows of the other side it currently joins with.
//! - A row arriving on one side is joined with the matching rows of the other side's state
//!   (the residual condition decides, pair by pair), then added to (or, for `-U`/`-D`, taken
//!   from) its own side's state.
//! - An inner join forwards the arriving row's kind (`+I`/`+U`, `-U`/`-D`); a row of an
//!   outer side without a match is emitted padded with NULLs (`+I`), and deleted (`-D`) once
//!   a match arrives; when the other side loses a row's last match, the padded row comes back.
//! - A row whose key holds a NULL matches nothing (SQL's `=`): it is only ever padded.
//!
//! In batch mode (`final_only`) the inputs are insert-only and nothing is taken back: pairs
//! are emitted as they are found, and the rows of outer sides that never matched are
//! emitted padded when the input ends.
//!
//! Rows are stored as the key table's key and `arrow-row` bytes of their other columns
//! (`state/join_side.rs`); output is built columnar (the arriving batch taken by row index,
//! stored rows decoded in one call). State is snapshotted per key group.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, UInt32Array};
use arrow_buffer::NullBuffer;
use arrow_schema::SchemaRef;

use super::eval::evaluate;
use super::state::join_side::{JoinState, RecordAt, Side};
use super::state::key::key_bytes;
use super::state::key_group::KeyGroupRange;
use super::state::ttl::StateTtl;
use crate::exec::error::ExecError;
use crate::exec::operator::{FrozenState, Operator, OperatorContext, Output};
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::JoinType;
use crate::types::chunk::{RowKind, StreamChunk, batch_with_rows};

/// Pairs gathered before the residual condition is evaluated and output is emitted: bounds
/// what one call holds when keys match many rows.
const PAIRS_PER_ROUND: usize = 16 * 1024;

/// One output row: which input row, which stored row of the other side, or both.
#[derive(Clone, Copy)]
enum Pair {
    Joined(u32, RecordAt),
    /// The arriving row, the other side NULL.
    InputPadded(u32),
    /// A stored row of the other side, the arriving side NULL.
    OtherPadded(RecordAt),
}

pub struct JoinOperator {
    /// Both inputs: left, right.
    state: JoinState,
    residual: Option<ScalarExpr>,
    output: SchemaRef,
    ctx: EvalContext,
    final_only: bool,
    key_groups: KeyGroupRange,
    /// Per side, `table.exec.state.ttl` or its STATE_TTL hint: a row not written for this
    /// long is gone.
    ttl: [StateTtl; 2],
    operator: OperatorContext,
}

impl JoinOperator {
    /// A join of inputs shaped `left` and `right` on `left_keys[i] = right_keys[i]` (key
    /// columns of equal types), keeping the pairs `residual` (over the output's columns: the
    /// left's, then the right's) holds for.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        left: &SchemaRef,
        right: &SchemaRef,
        output: SchemaRef,
        left_keys: Vec<usize>,
        right_keys: Vec<usize>,
        join_type: JoinType,
        residual: Option<ScalarExpr>,
        ctx: EvalContext,
        final_only: bool,
    ) -> Result<Self, ExecError> {
        Ok(JoinOperator {
            state: JoinState::new([
                Side::new(left, left_keys, join_type.left_outer())?,
                Side::new(right, right_keys, join_type.right_outer())?,
            ]),
            residual,
            output,
            ctx,
            final_only,
            key_groups: OperatorContext::default().key_groups,
            ttl: [StateTtl::default(); 2],
            operator: OperatorContext::default(),
        })
    }

    /// Drops rows not written for `ttl` milliseconds (streaming only; 0: never).
    pub fn with_state_ttl(self, ttl: i64) -> Self {
        self.with_state_ttls([ttl, ttl])
    }

    /// [`Self::with_state_ttl`] per side (a STATE_TTL hint names each input).
    pub fn with_state_ttls(mut self, ttls: [i64; 2]) -> Self {
        if !self.final_only {
            self.ttl = ttls.map(StateTtl::new);
        }
        self
    }

    /// For the input rows of `batch` (arriving on side `s`) whose key the other side holds
    /// (`found`: row and key id, in row order), the other side's stored rows under it that
    /// the residual condition passes: `(row, record)` pairs in row order.
    fn matches(
        &self,
        s: usize,
        batch: &RecordBatch,
        found: &[(usize, u32)],
        now: i64,
    ) -> Result<Vec<(u32, RecordAt)>, ExecError> {
        let other = &self.state.sides[1 - s];
        let mut pairs = Vec::new();
        for &(i, id) in found {
            let records = self.state.records(1 - s, id);
            pairs.extend(
                (0..records.len() as u32)
                    .filter(|&r| !other.expired(&records.get(r as usize), now, self.ttl[1 - s]))
                    .map(|r| (i as u32, (id, r))),
            );
        }
        let Some(residual) = &self.residual else {
            return Ok(pairs);
        };
        if pairs.is_empty() {
            return Ok(pairs);
        }
        let candidates: Vec<Pair> = pairs.iter().map(|&(i, r)| Pair::Joined(i, r)).collect();
        let joined = self.build(s, batch, &candidates)?;
        let passed = evaluate(residual, &joined, &self.ctx)?;
        let passed = passed.as_boolean();
        Ok(pairs
            .into_iter()
            .enumerate()
            .filter(|&(p, _)| passed.is_valid(p) && passed.value(p))
            .map(|(_, pair)| pair)
            .collect())
    }

    /// The output rows `pairs` for rows arriving on side `s` in `batch`.
    fn build(
        &self,
        s: usize,
        batch: &RecordBatch,
        pairs: &[Pair],
    ) -> Result<RecordBatch, ExecError> {
        let other = &self.state.sides[1 - s];
        let indices: UInt32Array = pairs
            .iter()
            .map(|p| match p {
                Pair::Joined(i, _) | Pair::InputPadded(i) => Some(*i),
                Pair::OtherPadded(_) => None,
            })
            .collect();
        let arriving: Vec<ArrayRef> = batch
            .columns()
            .iter()
            .map(|c| arrow_select::take::take(c.as_ref(), &indices, None))
            .collect::<Result<_, _>>()?;
        let stored: Vec<_> = pairs
            .iter()
            .map(|p| match p {
                Pair::Joined(_, r) | Pair::OtherPadded(r) => self.state.row(1 - s, *r),
                Pair::InputPadded(_) => other.nulls(),
            })
            .collect();
        let stored = other.decode(&stored)?;
        let columns = if s == 0 {
            arriving.into_iter().chain(stored).collect()
        } else {
            stored.into_iter().chain(arriving).collect()
        };
        Ok(batch_with_rows(self.output.clone(), columns, pairs.len())?)
    }

    fn emit(
        &self,
        s: usize,
        batch: &RecordBatch,
        pairs: &mut Vec<Pair>,
        kinds: &mut Vec<RowKind>,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        if pairs.is_empty() {
            return Ok(());
        }
        let built = self.build(s, batch, pairs)?;
        pairs.clear();
        let kinds = std::mem::take(kinds);
        let all_inserts = kinds.iter().all(|k| *k == RowKind::Insert);
        out.emit(StreamChunk {
            batch: built,
            kinds: (!all_inserts).then_some(kinds),
        })
    }
}

impl Operator for JoinOperator {
    fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.state.keys.set_max_parallelism(ctx.max_parallelism);
        self.key_groups = ctx.key_groups;
        self.operator = ctx.clone();
        for ttl in &mut self.ttl {
            ttl.start(ctx.now_millis());
        }
        Ok(())
    }

    fn next_processing_time(&self) -> Option<i64> {
        self.ttl.iter().filter_map(StateTtl::next_sweep).min()
    }

    /// Sweeps out the rows the state TTL expired (they are already invisible).
    fn on_processing_time(&mut self, now: i64, _out: &mut dyn Output) -> Result<(), ExecError> {
        for (s, ttl) in self.ttl.iter_mut().enumerate() {
            if ttl.sweep_due(now) {
                self.state.sweep(s, now, *ttl);
            }
        }
        Ok(())
    }

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
        let batch = &chunk.batch;
        let n = batch.num_rows();
        if n == 0 {
            return Ok(());
        }
        let side = &self.state.sides[s];
        let keys = side.keys.as_ref().map(|e| e.encode(batch)).transpose()?;
        let null_keys = side
            .key_columns
            .iter()
            .fold(None::<NullBuffer>, |acc, &c| {
                NullBuffer::union(acc.as_ref(), batch.column(c).logical_nulls().as_ref())
            })
            .filter(|n| n.null_count() > 0);
        let rows = side.encode(batch)?;
        let (s_outer, o_outer) = (self.state.sides[s].outer, self.state.sides[1 - s].outer);
        let (now, ttl) = (self.operator.now_millis(), self.ttl[s]);
        let mut pairs: Vec<Pair> = Vec::new();
        let mut kinds: Vec<RowKind> = Vec::new();
        let mut start = 0;
        let mut found: Vec<(usize, u32)> = Vec::new();
        while start < n {
            // A round of input rows whose candidate pairs stay within PAIRS_PER_ROUND.
            // Each row's key is looked up once: the other side's state does not change while
            // this side's rows are applied.
            let mut end = start;
            let mut candidates = 0;
            found.clear();
            while end < n && (end == start || candidates < PAIRS_PER_ROUND) {
                if !null_keys.as_ref().is_some_and(|nk| nk.is_null(end))
                    && let Some(id) = self.state.keys.find(key_bytes(keys.as_ref(), end))
                {
                    candidates += self.state.records(1 - s, id).len();
                    found.push((end, id));
                }
                end += 1;
            }
            let matches = self.matches(s, batch, &found, now)?;
            let (mut next, mut next_found) = (0, 0);
            for i in start..end {
                let from = next;
                while next < matches.len() && matches[next].0 as usize == i {
                    next += 1;
                }
                let matched = &matches[from..next];
                // The key's id when the other side holds rows under it: then the key stays
                // while this side's rows come and go.
                let mut id = None;
                if next_found < found.len() && found[next_found].0 == i {
                    let found = found[next_found].1;
                    next_found += 1;
                    id = Some(found).filter(|&f| !self.state.records(1 - s, f).is_empty());
                }
                let kind = chunk.kind(i);
                let key = key_bytes(keys.as_ref(), i);
                let row = Side::stored_bytes(rows.as_ref(), i);
                let has_null_key = null_keys.as_ref().is_some_and(|nk| nk.is_null(i));
                let i = i as u32;
                let accumulate = matches!(kind, RowKind::Insert | RowKind::UpdateAfter);
                if self.final_only {
                    // Batch: pairs now, rows that never matched at the end.
                    for &(_, r) in matched {
                        let record = self.state.record(1 - s, r);
                        if o_outer {
                            self.associate(1 - s, record.row, 1);
                        }
                        for _ in 0..record.count {
                            pairs.push(Pair::Joined(i, r));
                            kinds.push(RowKind::Insert);
                        }
                    }
                    if has_null_key {
                        if s_outer {
                            pairs.push(Pair::InputPadded(i));
                            kinds.push(RowKind::Insert);
                        }
                    } else {
                        let copies = if s_outer { self.copies(s, matched) } else { 0 };
                        self.state.add(s, key, id, row, copies, now, ttl);
                    }
                } else if accumulate {
                    if matched.is_empty() && s_outer {
                        pairs.push(Pair::InputPadded(i));
                        kinds.push(RowKind::Insert);
                    } else {
                        if o_outer {
                            for &(_, r) in matched {
                                let record = self.state.record(1 - s, r);
                                if self.associate(1 - s, record.row, 1) == 1 {
                                    for _ in 0..record.count {
                                        pairs.push(Pair::OtherPadded(r));
                                        kinds.push(RowKind::Delete);
                                    }
                                }
                            }
                        }
                        // Only an inner join forwards the arriving kind.
                        let joined = if s_outer || o_outer {
                            RowKind::Insert
                        } else {
                            kind
                        };
                        for &(_, r) in matched {
                            for _ in 0..self.state.record(1 - s, r).count {
                                pairs.push(Pair::Joined(i, r));
                                kinds.push(joined);
                            }
                        }
                    }
                    if !has_null_key {
                        let copies = if s_outer { self.copies(s, matched) } else { 0 };
                        self.state.add(s, key, id, row, copies, now, ttl);
                    }
                } else {
                    if !has_null_key {
                        self.state.retract(s, key, row, now, ttl);
                    }
                    if matched.is_empty() {
                        if s_outer {
                            pairs.push(Pair::InputPadded(i));
                            kinds.push(RowKind::Delete);
                        }
                    } else {
                        let joined = if s_outer { RowKind::Delete } else { kind };
                        for &(_, r) in matched {
                            for _ in 0..self.state.record(1 - s, r).count {
                                pairs.push(Pair::Joined(i, r));
                                kinds.push(joined);
                            }
                        }
                        if o_outer {
                            for &(_, r) in matched {
                                let record = self.state.record(1 - s, r);
                                let before = self.state.sides[1 - s].associations(record.row);
                                if before == 1 {
                                    for _ in 0..record.count {
                                        pairs.push(Pair::OtherPadded(r));
                                        kinds.push(RowKind::Insert);
                                    }
                                }
                                self.associate(1 - s, record.row, -1);
                            }
                        }
                    }
                }
            }
            if pairs.len() >= PAIRS_PER_ROUND {
                self.emit(s, batch, &mut pairs, &mut kinds, out)?;
            }
            start = end;
        }
        self.emit(s, batch, &mut pairs, &mut kinds, out)
    }

    /// Batch mode: the rows of outer sides that never matched, padded.
    fn finish(&mut self, out: &mut dyn Output) -> Result<(), ExecError> {
        if !self.final_only {
            return Ok(());
        }
        for s in 0..2 {
            if !self.state.sides[s].outer {
                continue;
            }
            let (side, other) = (&self.state.sides[s], &self.state.sides[1 - s]);
            let mut padded = Vec::new();
            for (record, row) in self.state.all_records(s) {
                if side.associations(record.row) == 0 {
                    padded.extend(std::iter::repeat_n(row, record.count as usize));
                }
            }
            for piece in padded.chunks(PAIRS_PER_ROUND) {
                let own = side.decode(piece)?;
                let nulls = other.decode(&vec![other.nulls(); piece.len()])?;
                let columns: Vec<ArrayRef> = if s == 0 {
                    own.into_iter().chain(nulls).collect()
                } else {
                    nulls.into_iter().chain(own).collect()
                };
                out.emit(StreamChunk::inserts(batch_with_rows(
                    self.output.clone(),
                    columns,
                    piece.len(),
                )?))?;
            }
        }
        Ok(())
    }

    /// Per key group: for each side (a byte), each key with its rows (bytes, count,
    /// associations, when written).
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

impl JoinOperator {
    /// How many rows of the other side a row of side `s` joins with: its matches, each as
    /// many times as it is there.
    fn copies(&self, s: usize, matched: &[(u32, RecordAt)]) -> u32 {
        matched
            .iter()
            .map(|&(_, r)| self.state.record(1 - s, r).count)
            .sum()
    }

    /// Changes how many rows row `row` of side `s` joins with by `by`, giving the new count.
    fn associate(&mut self, s: usize, row: u32, by: i32) -> u32 {
        let side = &mut self.state.sides[s];
        let associations = side.associations(row).saturating_add_signed(by);
        side.set_associations(row, associations);
        associations
    }
}

#[cfg(test)]
#[path = "join_tests.rs"]
mod tests;
