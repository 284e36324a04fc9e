//! ROW_NUMBER, RANK and DENSE_RANK as OVER aggregates (`BIGINT NOT NULL`). The over
//! operator hands each update call at most one step per slot: one row under ROWS
//! (ROW_NUMBER's frame), all the rows of one time under RANGE (RANK's and DENSE_RANK's).
//!
//! Streaming, as Flink 2.3's OverAggregate computes them over an unbounded frame ordered by
//! time: its ranking functions compare no order key there (the OverAggregate passes them
//! none), so each counts the rows so far: RANK and DENSE_RANK of rows sharing a time are the
//! count up to the last of them (two rows after a first at 2024-01-01 10:00:02 both rank 3,
//! not 2, in Flink 2.3). Batch mode ranks truly, as Flink's sort-based batch OverAggregate:
//! RANK is one more than the rows of earlier times, DENSE_RANK one more than their times.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};

use super::{GroupsAccumulator, StateReader, put_i64};
use crate::exec::error::ExecError;
use crate::exec::state::pages::PagedVec;
use crate::plan::aggregate::AggregateFunction;

/// What a slot's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Ranking {
    /// The rows so far (streaming's three functions, batch's ROW_NUMBER).
    #[default]
    Rows,
    /// One more than the rows of earlier steps.
    Rank,
    /// One more than the earlier steps.
    DenseRank,
}

/// The rows counted per slot, and for true ranks the rank of its last step.
#[derive(Default)]
pub struct RankingAccumulator {
    ranking: Ranking,
    rows: PagedVec<i64>,
    rank: PagedVec<i64>,
}

impl RankingAccumulator {
    /// `function`'s accumulator in batch mode, if it is a ranking function.
    pub fn batch(function: AggregateFunction) -> Option<Self> {
        let ranking = match function {
            AggregateFunction::RowNumber => Ranking::Rows,
            AggregateFunction::Rank => Ranking::Rank,
            AggregateFunction::DenseRank => Ranking::DenseRank,
            _ => return None,
        };
        Some(RankingAccumulator {
            ranking,
            ..RankingAccumulator::default()
        })
    }
}

impl GroupsAccumulator for RankingAccumulator {
    fn resize(&mut self, slots: usize) {
        self.rows.grow(slots, 0);
        if self.ranking != Ranking::Rows {
            self.rank.grow(slots, 0);
        }
    }

    /// `slots` holds each slot's step as one run.
    fn update(
        &mut self,
        _batch: &RecordBatch,
        _rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let mut rest = slots;
        while let Some(&slot) = rest.first() {
            let n = rest.iter().take_while(|&&s| s == slot).count();
            rest = &rest[n..];
            let slot = slot as usize;
            match self.ranking {
                Ranking::Rows => {}
                Ranking::Rank => self.rank[slot] = self.rows[slot] + 1,
                Ranking::DenseRank => self.rank[slot] += 1,
            }
            self.rows[slot] += n as i64;
        }
        Ok(())
    }

    fn merge(&mut self, into: u32, from: u32) {
        let (into, from) = (into as usize, from as usize);
        let rows = self.rows[from];
        self.rows[into] += rows;
        if self.ranking != Ranking::Rows {
            let rank = self.rank[from];
            self.rank[into] = self.rank[into].max(rank);
        }
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        let values = match self.ranking {
            Ranking::Rows => &self.rows,
            Ranking::Rank | Ranking::DenseRank => &self.rank,
        };
        Ok(Arc::new(Int64Array::from_iter_values(
            slots.iter().map(|&s| values[s as usize]),
        )))
    }

    fn free(&mut self, slot: u32) {
        self.rows[slot as usize] = 0;
        if self.ranking != Ranking::Rows {
            self.rank[slot as usize] = 0;
        }
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        put_i64(out, self.rows[slot as usize]);
        if self.ranking != Ranking::Rows {
            put_i64(out, self.rank[slot as usize]);
        }
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        self.rows[slot as usize] = input.i64()?;
        if self.ranking != Ranking::Rows {
            self.rank[slot as usize] = input.i64()?;
        }
        Ok(())
    }
}
