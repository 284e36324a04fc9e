//! SUM: NULL for a group without a non-NULL value. Integers sum in their own type and wrap
//! as Java's do (`SUM(INT)` is INT); FLOAT and DOUBLE sum in their type; DECIMAL(p, s) sums
//! exactly into DECIMAL(38, s), and a sum past 38 digits is NULL, as Flink's decimal `+`
//! gives, after which the next value starts the sum afresh (Flink's
//! `IF(sum IS NULL, x, sum + x)`).

use std::sync::Arc;

use arrow_array::ArrowNativeTypeOp;
use arrow_array::types::Decimal128Type;
use arrow_array::{ArrayRef, ArrowPrimitiveType, PrimitiveArray, RecordBatch};
use arrow_schema::DataType as ArrowType;

use super::{
    FrozenHeld, FrozenSlots, GroupsAccumulator, HeldCount, StateReader, for_each_value, nulls_of,
    put_i64, put_i128, put_native,
};
use crate::exec::error::ExecError;
use crate::exec::state::pages::{FrozenVec, PagedVec};
use crate::types::decimal::pow10_saturating;

/// SUM over integers (wrapping) or floating point, in the argument's type.
pub struct SumAccumulator<T: ArrowPrimitiveType> {
    column: usize,
    filter: Option<usize>,
    sums: PagedVec<T::Native>,
    /// Whether a slot's sum is over any value (NULL when not).
    held: HeldCount,
}

impl<T: ArrowPrimitiveType> SumAccumulator<T> {
    /// `retracts`: the input takes values back.
    pub fn new(column: usize, filter: Option<usize>, retracts: bool) -> Self {
        SumAccumulator {
            column,
            filter,
            sums: PagedVec::new(),
            held: HeldCount::new(retracts),
        }
    }
}

impl<T: ArrowPrimitiveType> GroupsAccumulator for SumAccumulator<T> {
    fn resize(&mut self, slots: usize) {
        self.sums.grow(slots, T::Native::default());
        self.held.resize(slots);
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let (sums, held) = (&mut self.sums, &mut self.held);
        match held {
            HeldCount::Counted(counts) => {
                for_each_value::<T>(batch, self.column, self.filter, rows, slots, |slot, x| {
                    sums[slot] = sums[slot].add_wrapping(x);
                    counts[slot] += 1;
                })
            }
            HeldCount::Seen(seen) => {
                for_each_value::<T>(batch, self.column, self.filter, rows, slots, |slot, x| {
                    sums[slot] = sums[slot].add_wrapping(x);
                    seen.set(slot, true);
                })
            }
        }
    }

    fn retract(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let HeldCount::Counted(counts) = &mut self.held else {
            return Err(ExecError::Internal(
                "a retraction reached a SUM made for an insert-only input".into(),
            ));
        };
        let sums = &mut self.sums;
        for_each_value::<T>(batch, self.column, self.filter, rows, slots, |slot, x| {
            sums[slot] = sums[slot].sub_wrapping(x);
            counts[slot] -= 1;
            if counts[slot] == 0 {
                sums[slot] = T::Native::default();
            }
        })
    }

    fn merge(&mut self, into: u32, from: u32) {
        let (into, from) = (into as usize, from as usize);
        let from_sum = self.sums[from];
        self.sums[into] = self.sums[into].add_wrapping(from_sum);
        let held = self.held.get(into) + self.held.get(from);
        self.held.set(into, held);
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        let values: Vec<T::Native> = slots.iter().map(|&s| self.sums[s as usize]).collect();
        let valid = slots
            .iter()
            .map(|&s| self.held.get(s as usize) > 0)
            .collect();
        Ok(Arc::new(PrimitiveArray::<T>::new(
            values.into(),
            nulls_of(valid),
        )))
    }

    fn free(&mut self, slot: u32) {
        self.sums[slot as usize] = T::Native::default();
        self.held.set(slot as usize, 0);
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        put_i64(out, self.held.get(slot as usize));
        put_native(out, self.sums[slot as usize]);
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        self.held.set(slot as usize, input.i64()?);
        self.sums[slot as usize] = input.native()?;
        Ok(())
    }

    fn freeze(&self, _slots: usize, _live: &dyn Fn(u32) -> bool) -> Box<dyn FrozenSlots> {
        Box::new(FrozenSums::<T> {
            sums: self.sums.freeze(),
            held: self.held.freeze(),
        })
    }
}

/// A SUM's slots at a barrier, written as `write_slot` writes them.
struct FrozenSums<T: ArrowPrimitiveType> {
    sums: FrozenVec<T::Native>,
    held: FrozenHeld,
}

impl<T: ArrowPrimitiveType> FrozenSlots for FrozenSums<T> {
    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        put_i64(out, self.held.get(slot as usize));
        put_native(out, self.sums[slot as usize]);
    }
}

/// SUM over DECIMAL(p, s) into DECIMAL(precision, s): the unscaled digits add as they are.
pub struct DecimalSumAccumulator {
    column: usize,
    filter: Option<usize>,
    /// The largest unscaled magnitude the result type holds (10^precision − 1).
    limit: i128,
    result: ArrowType,
    sums: PagedVec<i128>,
    seen: PagedVec<bool>,
    /// Values added per slot less those retracted: NULL at zero.
    counts: PagedVec<i64>,
}

impl DecimalSumAccumulator {
    pub fn new(column: usize, filter: Option<usize>, precision: u8, result: ArrowType) -> Self {
        DecimalSumAccumulator {
            column,
            filter,
            limit: pow10_saturating(u32::from(precision)) - 1,
            result,
            sums: PagedVec::new(),
            seen: PagedVec::new(),
            counts: PagedVec::new(),
        }
    }

    /// `IF(sum IS NULL, x, sum + x)`, a sum past the precision being NULL.
    #[inline]
    fn add(&mut self, slot: usize, x: i128) {
        if !self.seen[slot] {
            self.sums[slot] = x;
            self.seen[slot] = true;
            return;
        }
        match self.sums[slot].checked_add(x) {
            Some(s) if s.unsigned_abs() <= self.limit as u128 => self.sums[slot] = s,
            _ => {
                self.sums[slot] = 0;
                self.seen[slot] = false;
            }
        }
    }
}

impl GroupsAccumulator for DecimalSumAccumulator {
    fn resize(&mut self, slots: usize) {
        self.sums.grow(slots, 0);
        self.seen.grow(slots, false);
        self.counts.grow(slots, 0);
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        for_each_value::<Decimal128Type>(batch, self.column, self.filter, rows, slots, |slot, x| {
            self.add(slot, x);
            self.counts[slot] += 1;
        })
    }

    fn retract(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        for_each_value::<Decimal128Type>(batch, self.column, self.filter, rows, slots, |slot, x| {
            self.counts[slot] -= 1;
            if self.counts[slot] == 0 {
                self.sums[slot] = 0;
                self.seen[slot] = false;
            } else {
                self.add(slot, -x);
            }
        })
    }

    fn merge(&mut self, into: u32, from: u32) {
        if self.seen[from as usize] {
            self.add(into as usize, self.sums[from as usize]);
        }
        self.counts[into as usize] += self.counts[from as usize];
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        let values: Vec<i128> = slots.iter().map(|&s| self.sums[s as usize]).collect();
        let valid = slots.iter().map(|&s| self.seen[s as usize]).collect();
        Ok(Arc::new(
            PrimitiveArray::<Decimal128Type>::new(values.into(), nulls_of(valid))
                .with_data_type(self.result.clone()),
        ))
    }

    fn free(&mut self, slot: u32) {
        self.sums[slot as usize] = 0;
        self.seen[slot as usize] = false;
        self.counts[slot as usize] = 0;
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        let slot = slot as usize;
        put_decimal_sum(out, self.seen[slot], self.counts[slot], self.sums[slot]);
    }

    fn freeze(&self, _slots: usize, _live: &dyn Fn(u32) -> bool) -> Box<dyn FrozenSlots> {
        Box::new(FrozenDecimalSums {
            seen: self.seen.freeze(),
            counts: self.counts.freeze(),
            sums: self.sums.freeze(),
        })
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        self.seen[slot as usize] = input.u8()? != 0;
        self.counts[slot as usize] = input.i64()?;
        self.sums[slot as usize] = input.i128()?;
        Ok(())
    }
}

/// A DECIMAL SUM's slot in a snapshot.
fn put_decimal_sum(out: &mut Vec<u8>, seen: bool, count: i64, sum: i128) {
    out.push(u8::from(seen));
    put_i64(out, count);
    put_i128(out, sum);
}

/// A DECIMAL SUM's slots at a barrier.
struct FrozenDecimalSums {
    seen: FrozenVec<bool>,
    counts: FrozenVec<i64>,
    sums: FrozenVec<i128>,
}

impl FrozenSlots for FrozenDecimalSums {
    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        let slot = slot as usize;
        put_decimal_sum(out, self.seen[slot], self.counts[slot], self.sums[slot]);
    }
}
