//! COUNT(*), COUNT(x, …) and COUNT(DISTINCT x, …): `BIGINT NOT NULL`, 0 for a group that
//! counted nothing.

use super::encoded::EncodedArguments;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch};
use arrow_row::SortField;
use arrow_schema::Schema as ArrowSchema;
use hashbrown::HashMap;

use super::{
    FrozenSlots, GroupsAccumulator, StateReader, all_valid, columns_of, filter_column, passes,
    put_bytes, put_i64, put_u32,
};
use crate::exec::error::ExecError;
use crate::exec::state::pages::{FrozenVec, PagedVec};

/// Calls `f(row, slot)` for every (row, slot) pair whose row the call's FILTER lets through
/// and whose arguments (`columns`) are all non-NULL: the rows a COUNT counts.
pub(super) fn for_each_counted(
    batch: &RecordBatch,
    filter: Option<usize>,
    columns: &[ArrayRef],
    rows: &[u32],
    slots: &[u32],
    mut f: impl FnMut(usize, usize),
) -> Result<(), ExecError> {
    let filter = filter_column(batch, filter)?;
    let nullable: Vec<&dyn Array> = columns
        .iter()
        .filter(|c| c.null_count() > 0)
        .map(|c| c.as_ref())
        .collect();
    for (&row, &slot) in rows.iter().zip(slots) {
        let row = row as usize;
        if passes(filter, row) && all_valid(&nullable, row) {
            f(row, slot as usize);
        }
    }
    Ok(())
}

/// COUNT(*) (no arguments) or COUNT of the rows whose arguments are all non-NULL.
pub struct CountAccumulator {
    args: Vec<usize>,
    filter: Option<usize>,
    counts: PagedVec<i64>,
}

impl CountAccumulator {
    pub fn new(args: Vec<usize>, filter: Option<usize>) -> Self {
        CountAccumulator {
            args,
            filter,
            counts: PagedVec::new(),
        }
    }
}

impl GroupsAccumulator for CountAccumulator {
    fn resize(&mut self, slots: usize) {
        self.counts.grow(slots, 0);
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let columns = columns_of(batch, &self.args);
        let counts = &mut self.counts;
        for_each_counted(batch, self.filter, &columns, rows, slots, |_, slot| {
            counts[slot] += 1;
        })
    }

    fn retract(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let columns = columns_of(batch, &self.args);
        let counts = &mut self.counts;
        for_each_counted(batch, self.filter, &columns, rows, slots, |_, slot| {
            counts[slot] -= 1;
        })
    }

    fn merge(&mut self, into: u32, from: u32) {
        let from = self.counts[from as usize];
        self.counts[into as usize] += from;
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        Ok(Arc::new(Int64Array::from_iter_values(
            slots.iter().map(|&s| self.counts[s as usize]),
        )))
    }

    fn free(&mut self, slot: u32) {
        self.counts[slot as usize] = 0;
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        put_i64(out, self.counts[slot as usize]);
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        self.counts[slot as usize] = input.i64()?;
        Ok(())
    }

    fn freeze(&self, _slots: usize, _live: &dyn Fn(u32) -> bool) -> Box<dyn FrozenSlots> {
        Box::new(FrozenCounts(self.counts.freeze()))
    }
}

/// A COUNT's slots at a barrier.
struct FrozenCounts(FrozenVec<i64>);

impl FrozenSlots for FrozenCounts {
    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        put_i64(out, self.0[slot as usize]);
    }
}

/// COUNT(DISTINCT x, …): each group keeps its argument tuples, as `arrow-row` bytes (encoded
/// once per batch; a tuple allocates only the first time its group sees it), each with how
/// many rows hold it, so that a retracted row takes its tuple away only with the last.
pub struct CountDistinctAccumulator {
    args: Vec<usize>,
    filter: Option<usize>,
    encoded: EncodedArguments,
    sets: Vec<HashMap<Box<[u8]>, u64>>,
}

impl CountDistinctAccumulator {
    pub fn new(
        input: &ArrowSchema,
        args: Vec<usize>,
        filter: Option<usize>,
    ) -> Result<Self, ExecError> {
        let fields = args
            .iter()
            .map(|&c| SortField::new(input.field(c).data_type().clone()))
            .collect();
        Ok(CountDistinctAccumulator {
            args,
            filter,
            encoded: EncodedArguments::new(fields)?,
            sets: Vec::new(),
        })
    }
}

impl GroupsAccumulator for CountDistinctAccumulator {
    fn resize(&mut self, slots: usize) {
        if self.sets.len() < slots {
            self.sets.resize_with(slots, HashMap::new);
        }
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let columns = columns_of(batch, &self.args);
        let values = self.encoded.encode(&columns)?;
        let sets = &mut self.sets;
        for_each_counted(batch, self.filter, &columns, rows, slots, |row, slot| {
            let value = values.row(row);
            let set = &mut sets[slot];
            match set.get_mut(value.as_ref()) {
                Some(count) => *count += 1,
                None => {
                    set.insert(value.as_ref().into(), 1);
                }
            }
        })
    }

    fn retract(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let columns = columns_of(batch, &self.args);
        let values = self.encoded.encode(&columns)?;
        let sets = &mut self.sets;
        for_each_counted(batch, self.filter, &columns, rows, slots, |row, slot| {
            let set = &mut sets[slot];
            let value = values.row(row);
            if let Some(count) = set.get_mut(value.as_ref()) {
                *count -= 1;
                if *count == 0 {
                    set.remove(value.as_ref());
                }
            }
        })
    }

    fn merge(&mut self, into: u32, from: u32) {
        let from = self.sets[from as usize].clone();
        let into = &mut self.sets[into as usize];
        for (value, count) in from {
            *into.entry(value).or_insert(0) += count;
        }
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        Ok(Arc::new(Int64Array::from_iter_values(
            slots.iter().map(|&s| self.sets[s as usize].len() as i64),
        )))
    }

    fn free(&mut self, slot: u32) {
        self.sets[slot as usize] = HashMap::new();
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        let set = &self.sets[slot as usize];
        put_u32(out, set.len() as u32);
        for (value, &count) in set {
            put_bytes(out, value);
            put_i64(out, count as i64);
        }
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        let n = input.u32()?;
        let set = &mut self.sets[slot as usize];
        for _ in 0..n {
            let value = input.bytes()?.into();
            set.insert(value, input.i64()? as u64);
        }
        Ok(())
    }
}
