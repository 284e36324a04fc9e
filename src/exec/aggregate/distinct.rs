//! `SUM(DISTINCT x)`, `AVG(DISTINCT x)`: a set of the values each group has seen (as
//! `arrow-row` bytes) in front of the plain accumulator, which gets a row only the first time
//! its group sees the value. Merging two session windows feeds the plain accumulator of the
//! surviving one the values only the other had seen, so no value counts twice.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, new_null_array};
use arrow_row::SortField;
use arrow_schema::SchemaRef;
use hashbrown::HashSet;

use super::encoded::EncodedArguments;
use super::{GroupsAccumulator, StateReader, filter_column, passes, put_bytes, put_u32};
use crate::exec::error::ExecError;

pub struct DistinctAccumulator {
    /// The plain accumulator, without the call's FILTER (applied here, before a value counts
    /// as seen).
    inner: Box<dyn GroupsAccumulator>,
    column: usize,
    filter: Option<usize>,
    input: SchemaRef,
    encoded: EncodedArguments,
    seen: Vec<HashSet<Box<[u8]>>>,
    /// The rows and slots that reach `inner`, reused from batch to batch.
    rows: Vec<u32>,
    slots: Vec<u32>,
}

impl DistinctAccumulator {
    pub fn new(
        inner: Box<dyn GroupsAccumulator>,
        input: SchemaRef,
        column: usize,
        filter: Option<usize>,
    ) -> Result<Self, ExecError> {
        let encoded = EncodedArguments::new(vec![SortField::new(
            input.field(column).data_type().clone(),
        )])?;
        Ok(DistinctAccumulator {
            inner,
            column,
            filter,
            input,
            encoded,
            seen: Vec::new(),
            rows: Vec::new(),
            slots: Vec::new(),
        })
    }
}

impl GroupsAccumulator for DistinctAccumulator {
    fn resize(&mut self, slots: usize) {
        self.inner.resize(slots);
        if self.seen.len() < slots {
            self.seen.resize_with(slots, HashSet::new);
        }
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let filter = filter_column(batch, self.filter)?;
        let column = batch.column(self.column);
        let values = self.encoded.encode(std::slice::from_ref(column))?;
        self.rows.clear();
        self.slots.clear();
        for (&row, &slot) in rows.iter().zip(slots) {
            let r = row as usize;
            // NULLs are not aggregated; the plain accumulator skips them itself.
            if !passes(filter, r) || column.is_null(r) {
                continue;
            }
            let value = values.row(r);
            let seen = &mut self.seen[slot as usize];
            if !seen.contains(value.as_ref()) {
                seen.insert(value.as_ref().into());
                self.rows.push(row);
                self.slots.push(slot);
            }
        }
        self.inner.update(batch, &self.rows, &self.slots)
    }

    fn merge(&mut self, into: u32, from: u32) {
        let new: Vec<Box<[u8]>> = self.seen[from as usize]
            .iter()
            .filter(|v| !self.seen[into as usize].contains(*v))
            .cloned()
            .collect();
        if new.is_empty() {
            return;
        }
        // The values only `from` had, as a batch of the input's shape (the other columns
        // NULL), into `into`'s plain accumulator.
        let converter = self.encoded.converter();
        let parser = converter.parser();
        let decoded = converter.convert_rows(new.iter().map(|v| parser.parse(v)));
        let Ok(mut decoded) = decoded else {
            return;
        };
        let n = new.len();
        let columns: Vec<ArrayRef> = self
            .input
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if i == self.column {
                    decoded.remove(0)
                } else {
                    new_null_array(f.data_type(), n)
                }
            })
            .collect();
        if let Ok(batch) = RecordBatch::try_new(Arc::clone(&self.input), columns) {
            let rows: Vec<u32> = (0..n as u32).collect();
            let _ = self.inner.update(&batch, &rows, &vec![into; n]);
        }
        self.seen[into as usize].extend(new);
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        self.inner.evaluate(slots)
    }

    fn free(&mut self, slot: u32) {
        self.inner.free(slot);
        self.seen[slot as usize] = HashSet::new();
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        self.inner.write_slot(slot, out);
        let seen = &self.seen[slot as usize];
        put_u32(out, seen.len() as u32);
        for value in seen {
            put_bytes(out, value);
        }
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        self.inner.read_slot(slot, input)?;
        let n = input.u32()?;
        let seen = &mut self.seen[slot as usize];
        for _ in 0..n {
            seen.insert(input.bytes()?.into());
        }
        Ok(())
    }
}
