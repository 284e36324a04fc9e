//! `LAG(x [, offset])` OVER a window from the partition's first row, as Flink's
//! `LagAggFunction`: each slot (a partition) keeps its last `offset + 1` values in arrival
//! order, NULLs included (a lagged NULL is NULL), and the result is the one `offset` rows
//! before the newest, NULL while the partition has fewer rows. Values are `arrow-row` bytes
//! of the argument. No retractions: Calcite allows no frame for LAG.

use std::collections::VecDeque;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_row::SortField;
use arrow_schema::DataType as ArrowType;

use super::encoded::EncodedArguments;
use super::{GroupsAccumulator, StateReader, grow, put_bytes, put_u32};
use crate::exec::error::ExecError;

pub struct LagAccumulator {
    column: usize,
    offset: usize,
    encoded: EncodedArguments,
    values: Vec<VecDeque<Box<[u8]>>>,
}

impl LagAccumulator {
    pub fn new(column: usize, offset: u32, arg_type: &ArrowType) -> Result<Self, ExecError> {
        Ok(LagAccumulator {
            column,
            offset: offset as usize,
            encoded: EncodedArguments::new(vec![SortField::new(arg_type.clone())])?,
            values: Vec::new(),
        })
    }
}

impl GroupsAccumulator for LagAccumulator {
    fn resize(&mut self, slots: usize) {
        grow(&mut self.values, slots, VecDeque::new());
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let encoded = self
            .encoded
            .encode(std::slice::from_ref(batch.column(self.column)))?;
        for (&row, &slot) in rows.iter().zip(slots) {
            let kept = &mut self.values[slot as usize];
            kept.push_back(encoded.row(row as usize).as_ref().into());
            if kept.len() > self.offset + 1 {
                kept.pop_front();
            }
        }
        Ok(())
    }

    fn merge(&mut self, into: u32, from: u32) {
        let from = self.values[from as usize].clone();
        let into = &mut self.values[into as usize];
        into.extend(from);
        while into.len() > self.offset + 1 {
            into.pop_front();
        }
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        // Each slot's lagged value, or `None` (NULL) while it has too few rows.
        let picked: Vec<Option<&[u8]>> = slots
            .iter()
            .map(|&s| {
                let kept = &self.values[s as usize];
                (kept.len() > self.offset).then(|| &kept[kept.len() - 1 - self.offset][..])
            })
            .collect();
        self.encoded.decode_each(&picked)
    }

    fn free(&mut self, slot: u32) {
        self.values[slot as usize] = VecDeque::new();
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        let kept = &self.values[slot as usize];
        put_u32(out, kept.len() as u32);
        for v in kept {
            put_bytes(out, v);
        }
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        let n = input.u32()?;
        let mut kept = VecDeque::with_capacity((n as usize).min(self.offset + 1));
        for _ in 0..n {
            kept.push_back(input.bytes()?.into());
        }
        self.values[slot as usize] = kept;
        Ok(())
    }
}
