//! ROW_NUMBER, RANK and DENSE_RANK as OVER aggregates (`BIGINT NOT NULL`), as Flink 2.3's
//! streaming OverAggregate computes them over an unbounded frame ordered by time. The over
//! operator hands each update call the rows of one step of a slot: one row under ROWS
//! (ROW_NUMBER's frame), all the rows of one time under RANGE (RANK's and DENSE_RANK's).
//! Flink's ranking functions compare no order key there (the OverAggregate passes them
//! none), so each counts the rows so far: RANK and DENSE_RANK of rows sharing a time are
//! the count up to the last of them (two rows after a first at 2024-01-01 10:00:02 both rank
//! 3, not 2, in Flink 2.3).

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};

use super::{GroupsAccumulator, StateReader, put_i64};
use crate::exec::error::ExecError;
use crate::exec::state::pages::PagedVec;

/// The rows counted per slot.
#[derive(Default)]
pub struct RankingAccumulator {
    rows: PagedVec<i64>,
}

impl GroupsAccumulator for RankingAccumulator {
    fn resize(&mut self, slots: usize) {
        self.rows.grow(slots, 0);
    }

    fn update(
        &mut self,
        _batch: &RecordBatch,
        _rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        for &slot in slots {
            self.rows[slot as usize] += 1;
        }
        Ok(())
    }

    fn merge(&mut self, into: u32, from: u32) {
        let from = self.rows[from as usize];
        self.rows[into as usize] += from;
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        Ok(Arc::new(Int64Array::from_iter_values(
            slots.iter().map(|&s| self.rows[s as usize]),
        )))
    }

    fn free(&mut self, slot: u32) {
        self.rows[slot as usize] = 0;
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        put_i64(out, self.rows[slot as usize]);
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        self.rows[slot as usize] = input.i64()?;
        Ok(())
    }
}
