//! AVG: NULL for a group without a non-NULL value. As Flink's `AvgAggFunction`s compute it:
//! integers sum in BIGINT (wrapping) and the average is the BIGINT quotient, truncated
//! toward zero, narrowed to the argument's type as a Java cast narrows; FLOAT and DOUBLE sum
//! in DOUBLE; DECIMAL(p, s) sums exactly in DECIMAL(38, s) and the average is Flink's decimal
//! division into DECIMAL(38, max(6, s)): the quotient rounded HALF_UP to 38 significant
//! digits, then HALF_UP to the result scale, NULL past 38 digits.

use std::sync::Arc;

use arrow_array::types::{
    Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
};
use arrow_array::{ArrayRef, ArrowPrimitiveType, PrimitiveArray, RecordBatch};
use arrow_buffer::ArrowNativeType;
use arrow_schema::DataType as ArrowType;

use super::{
    FrozenSlots, GroupsAccumulator, StateReader, for_each_value, nulls_of, put_i64, put_i128,
};
use crate::exec::error::ExecError;
use crate::exec::state::pages::{FrozenVec, PagedVec};
use crate::types::decimal::pow10_saturating;

/// The BIGINT quotients of `slots` narrowed to the result type.
fn narrowed(quotients: Vec<i64>, valid: Vec<bool>, result: &ArrowType) -> ArrayRef {
    let nulls = nulls_of(valid);
    macro_rules! narrow {
        ($t:ty, $n:ty) => {
            Arc::new(PrimitiveArray::<$t>::new(
                quotients.iter().map(|&q| q as $n).collect(),
                nulls,
            ))
        };
    }
    match result {
        ArrowType::Int8 => narrow!(Int8Type, i8),
        ArrowType::Int16 => narrow!(Int16Type, i16),
        ArrowType::Int32 => narrow!(Int32Type, i32),
        _ => narrow!(Int64Type, i64),
    }
}

/// AVG over TINYINT, SMALLINT, INT or BIGINT.
pub struct IntegerAvgAccumulator<T: ArrowPrimitiveType> {
    column: usize,
    filter: Option<usize>,
    result: ArrowType,
    sums: PagedVec<i64>,
    counts: PagedVec<i64>,
    _type: std::marker::PhantomData<fn() -> T>,
}

impl<T: ArrowPrimitiveType> IntegerAvgAccumulator<T> {
    pub fn boxed(
        column: usize,
        filter: Option<usize>,
        result: &ArrowType,
    ) -> Option<Box<dyn GroupsAccumulator>> {
        matches!(
            result,
            ArrowType::Int8 | ArrowType::Int16 | ArrowType::Int32 | ArrowType::Int64
        )
        .then(|| {
            Box::new(IntegerAvgAccumulator::<T> {
                column,
                filter,
                result: result.clone(),
                sums: PagedVec::new(),
                counts: PagedVec::new(),
                _type: std::marker::PhantomData,
            }) as Box<dyn GroupsAccumulator>
        })
    }
}

impl<T: ArrowPrimitiveType> GroupsAccumulator for IntegerAvgAccumulator<T> {
    fn resize(&mut self, slots: usize) {
        self.sums.grow(slots, 0);
        self.counts.grow(slots, 0);
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        for_each_value::<T>(batch, self.column, self.filter, rows, slots, |slot, x| {
            let x = x.to_i64().unwrap_or_default();
            self.sums[slot] = self.sums[slot].wrapping_add(x);
            self.counts[slot] += 1;
        })
    }

    fn retract(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        for_each_value::<T>(batch, self.column, self.filter, rows, slots, |slot, x| {
            let x = x.to_i64().unwrap_or_default();
            self.sums[slot] = self.sums[slot].wrapping_sub(x);
            self.counts[slot] -= 1;
        })
    }

    fn merge(&mut self, into: u32, from: u32) {
        let (into, from) = (into as usize, from as usize);
        self.sums[into] = self.sums[into].wrapping_add(self.sums[from]);
        self.counts[into] += self.counts[from];
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        let quotients = slots
            .iter()
            .map(|&s| {
                let (sum, count) = (self.sums[s as usize], self.counts[s as usize]);
                if count == 0 {
                    0
                } else {
                    sum.wrapping_div(count)
                }
            })
            .collect();
        let valid = slots.iter().map(|&s| self.counts[s as usize] > 0).collect();
        Ok(narrowed(quotients, valid, &self.result))
    }

    fn free(&mut self, slot: u32) {
        self.sums[slot as usize] = 0;
        self.counts[slot as usize] = 0;
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        put_i64(out, self.sums[slot as usize]);
        put_i64(out, self.counts[slot as usize]);
    }

    fn freeze(&self, _slots: usize, _live: &dyn Fn(u32) -> bool) -> Box<dyn FrozenSlots> {
        Box::new(FrozenAverages {
            sums: self.sums.freeze(),
            counts: self.counts.freeze(),
            put: |out, sum, count| {
                put_i64(out, sum);
                put_i64(out, count);
            },
        })
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        self.sums[slot as usize] = input.i64()?;
        self.counts[slot as usize] = input.i64()?;
        Ok(())
    }
}

/// AVG over FLOAT or DOUBLE: a DOUBLE sum, the quotient cast to the argument's type.
pub struct FloatAvgAccumulator<T: ArrowPrimitiveType> {
    column: usize,
    filter: Option<usize>,
    sums: PagedVec<f64>,
    counts: PagedVec<i64>,
    _type: std::marker::PhantomData<fn() -> T>,
}

/// Floating-point natives widened to f64.
pub trait Widen: Copy {
    fn widen(self) -> f64;
}

impl Widen for f32 {
    fn widen(self) -> f64 {
        f64::from(self)
    }
}

impl Widen for f64 {
    fn widen(self) -> f64 {
        self
    }
}

impl<T: ArrowPrimitiveType> FloatAvgAccumulator<T>
where
    T::Native: Widen,
{
    pub fn boxed(
        column: usize,
        filter: Option<usize>,
        result: &ArrowType,
    ) -> Option<Box<dyn GroupsAccumulator>> {
        (result == &T::DATA_TYPE).then(|| {
            Box::new(FloatAvgAccumulator::<T> {
                column,
                filter,
                sums: PagedVec::new(),
                counts: PagedVec::new(),
                _type: std::marker::PhantomData,
            }) as Box<dyn GroupsAccumulator>
        })
    }
}

impl<T: ArrowPrimitiveType> GroupsAccumulator for FloatAvgAccumulator<T>
where
    T::Native: Widen,
{
    fn resize(&mut self, slots: usize) {
        self.sums.grow(slots, 0.0);
        self.counts.grow(slots, 0);
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        for_each_value::<T>(batch, self.column, self.filter, rows, slots, |slot, x| {
            self.sums[slot] += x.widen();
            self.counts[slot] += 1;
        })
    }

    fn retract(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        for_each_value::<T>(batch, self.column, self.filter, rows, slots, |slot, x| {
            self.sums[slot] -= x.widen();
            self.counts[slot] -= 1;
            if self.counts[slot] == 0 {
                self.sums[slot] = 0.0;
            }
        })
    }

    fn merge(&mut self, into: u32, from: u32) {
        let (into, from) = (into as usize, from as usize);
        self.sums[into] += self.sums[from];
        self.counts[into] += self.counts[from];
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        let valid: Vec<bool> = slots.iter().map(|&s| self.counts[s as usize] > 0).collect();
        let quotient = |s: &u32| self.sums[*s as usize] / self.counts[*s as usize] as f64;
        Ok(if T::DATA_TYPE == ArrowType::Float32 {
            Arc::new(PrimitiveArray::<Float32Type>::new(
                slots.iter().map(|s| quotient(s) as f32).collect(),
                nulls_of(valid),
            ))
        } else {
            Arc::new(PrimitiveArray::<Float64Type>::new(
                slots.iter().map(quotient).collect(),
                nulls_of(valid),
            ))
        })
    }

    fn free(&mut self, slot: u32) {
        self.sums[slot as usize] = 0.0;
        self.counts[slot as usize] = 0;
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        put_i64(out, self.sums[slot as usize].to_bits() as i64);
        put_i64(out, self.counts[slot as usize]);
    }

    fn freeze(&self, _slots: usize, _live: &dyn Fn(u32) -> bool) -> Box<dyn FrozenSlots> {
        Box::new(FrozenAverages {
            sums: self.sums.freeze(),
            counts: self.counts.freeze(),
            put: |out, sum: f64, count| {
                put_i64(out, sum.to_bits() as i64);
                put_i64(out, count);
            },
        })
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        self.sums[slot as usize] = f64::from_bits(input.i64()? as u64);
        self.counts[slot as usize] = input.i64()?;
        Ok(())
    }
}

/// AVG over DECIMAL(p, s) into DECIMAL(precision, scale).
pub struct DecimalAvgAccumulator {
    column: usize,
    filter: Option<usize>,
    /// The argument's scale, the sum's.
    arg_scale: i8,
    precision: u8,
    scale: i8,
    /// The sum in DECIMAL(38, s); `None` once it overflowed (Flink's sum is then NULL).
    sums: PagedVec<Option<i128>>,
    counts: PagedVec<i64>,
}

const SUM_LIMIT: i128 = 99_999_999_999_999_999_999_999_999_999_999_999_999;

impl DecimalAvgAccumulator {
    pub fn new(
        column: usize,
        filter: Option<usize>,
        arg_scale: i8,
        precision: u8,
        scale: i8,
    ) -> Self {
        DecimalAvgAccumulator {
            column,
            filter,
            arg_scale,
            precision,
            scale,
            sums: PagedVec::new(),
            counts: PagedVec::new(),
        }
    }

    #[inline]
    fn add(&mut self, slot: usize, x: Option<i128>) {
        self.sums[slot] = match (self.sums[slot], x) {
            (Some(a), Some(b)) => a
                .checked_add(b)
                .filter(|s| s.unsigned_abs() <= SUM_LIMIT as u128),
            _ => None,
        };
    }
}

impl GroupsAccumulator for DecimalAvgAccumulator {
    fn resize(&mut self, slots: usize) {
        self.sums.grow(slots, Some(0));
        self.counts.grow(slots, 0);
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        for_each_value::<Decimal128Type>(batch, self.column, self.filter, rows, slots, |slot, x| {
            self.add(slot, Some(x));
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
                self.sums[slot] = Some(0);
            } else {
                self.add(slot, Some(-x));
            }
        })
    }

    fn merge(&mut self, into: u32, from: u32) {
        let (into, from) = (into as usize, from as usize);
        self.add(into, self.sums[from]);
        self.counts[into] += self.counts[from];
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        let averages: Vec<Option<i128>> = slots
            .iter()
            .map(|&s| {
                let (sum, count) = (self.sums[s as usize], self.counts[s as usize]);
                if count == 0 {
                    return None;
                }
                decimal_quotient(
                    sum?,
                    count,
                    self.arg_scale as i32,
                    self.scale as i32,
                    self.precision,
                )
            })
            .collect();
        Ok(Arc::new(
            PrimitiveArray::<Decimal128Type>::from(averages)
                .with_data_type(ArrowType::Decimal128(self.precision, self.scale)),
        ))
    }

    fn free(&mut self, slot: u32) {
        self.sums[slot as usize] = Some(0);
        self.counts[slot as usize] = 0;
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        put_decimal_average(out, self.sums[slot as usize], self.counts[slot as usize]);
    }

    fn freeze(&self, _slots: usize, _live: &dyn Fn(u32) -> bool) -> Box<dyn FrozenSlots> {
        Box::new(FrozenAverages {
            sums: self.sums.freeze(),
            counts: self.counts.freeze(),
            put: put_decimal_average,
        })
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        let some = input.u8()? != 0;
        let sum = input.i128()?;
        self.sums[slot as usize] = some.then_some(sum);
        self.counts[slot as usize] = input.i64()?;
        Ok(())
    }
}

/// `sum / count` for `sum` at scale `from`, as Flink's `DecimalDataUtils.divide` computes it:
/// the exact quotient rounded HALF_UP to 38 significant digits, then HALF_UP to scale `to`
/// (≥ `from`); `None` past `precision` digits.
pub fn decimal_quotient(sum: i128, count: i64, from: i32, to: i32, precision: u8) -> Option<i128> {
    const SIGNIFICANT: usize = 38;
    let (a, c) = (sum.unsigned_abs(), u128::from(count.unsigned_abs()));
    let negative = (sum < 0) != (count < 0);
    let (mut q, mut r) = (a / c, a % c);
    // A leading 0 takes the carry of rounding 9…9 up.
    let mut digits: Vec<u8> = Vec::with_capacity(128);
    let mut int_digits = Vec::with_capacity(40);
    while q > 0 {
        int_digits.push((q % 10) as u8);
        q /= 10;
    }
    digits.push(0);
    digits.extend(int_digits.iter().rev());
    let whole = digits.len();
    // Enough fraction digits for both roundings and a guard digit.
    let fraction = (to - from).max(0) as usize + SIGNIFICANT + 2;
    for _ in 0..fraction {
        r *= 10;
        digits.push((r / c) as u8);
        r %= c;
    }
    let round_at = |digits: &mut Vec<u8>, keep: usize| {
        let up = digits.get(keep).is_some_and(|d| *d >= 5);
        for d in digits.iter_mut().skip(keep) {
            *d = 0;
        }
        if up {
            let mut i = keep;
            while i > 0 {
                i -= 1;
                if digits[i] == 9 {
                    digits[i] = 0;
                } else {
                    digits[i] += 1;
                    break;
                }
            }
        }
    };
    if let Some(first) = digits.iter().position(|d| *d != 0) {
        round_at(&mut digits, first + SIGNIFICANT);
    }
    round_at(&mut digits, whole + (to - from).max(0) as usize);
    let limit = pow10_saturating(u32::from(precision));
    let mut unscaled: i128 = 0;
    for &d in &digits[..whole + (to - from).max(0) as usize] {
        unscaled = unscaled.checked_mul(10)?.checked_add(i128::from(d))?;
        if unscaled >= limit {
            return None;
        }
    }
    Some(if negative { -unscaled } else { unscaled })
}

/// A DECIMAL AVG's slot in a snapshot: whether its sum is defined, the sum, the count.
fn put_decimal_average(out: &mut Vec<u8>, sum: Option<i128>, count: i64) {
    out.push(u8::from(sum.is_some()));
    put_i128(out, sum.unwrap_or_default());
    put_i64(out, count);
}

/// An AVG's slots at a barrier: its sums and counts, written by `put` as its `write_slot`
/// writes them (the two write the same slot bytes; `put` keeps the format in one place for
/// the DECIMAL AVG, and is the same two lines for the others).
struct FrozenAverages<S> {
    sums: FrozenVec<S>,
    counts: FrozenVec<i64>,
    put: fn(&mut Vec<u8>, S, i64),
}

impl<S: Copy + Send + Sync> FrozenSlots for FrozenAverages<S> {
    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        let slot = slot as usize;
        (self.put)(out, self.sums[slot], self.counts[slot]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values Flink 2.3 printed for AVG over DECIMAL(10, 2) and DECIMAL(38, 10).
    #[test]
    fn decimal_averages_are_flinks() {
        // (1.00 + 2.00 + 2.00) / 3 = 1.666667 in DECIMAL(38, 6).
        assert_eq!(decimal_quotient(500, 3, 2, 6, 38), Some(1_666_667));
        // (1.00 + 2.00 + 0.07) / 3 = 1.023333.
        assert_eq!(decimal_quotient(307, 3, 2, 6, 38), Some(1_023_333));
        // (-0.07 + 1.00) / 2 = 0.465000.
        assert_eq!(decimal_quotient(93, 2, 2, 6, 38), Some(465_000));
        // DECIMAL(38, 10): 5 / 3 = 1.6666666667.
        assert_eq!(
            decimal_quotient(50_000_000_000, 3, 10, 10, 38),
            Some(16_666_666_667)
        );
        // Negative quotients round away from zero; 2 / 2 of DECIMAL(5, 0) is 1.000000.
        assert_eq!(decimal_quotient(-500, 3, 2, 6, 38), Some(-1_666_667));
        assert_eq!(decimal_quotient(2, 2, 0, 6, 38), Some(1_000_000));
        assert_eq!(decimal_quotient(0, 5, 2, 6, 38), Some(0));
    }

    /// Large quotients keep every digit the result type holds.
    #[test]
    fn large_quotients_are_exact() {
        // 2·10^31 / 3 = 6666666666666666666666666666666.666666|666… → …666.666667.
        let expected: i128 = format!("{}666667", "6".repeat(31)).parse().unwrap();
        assert_eq!(
            decimal_quotient(2 * 10i128.pow(31), 3, 0, 6, 38),
            Some(expected)
        );
        // Past 38 digits the average is NULL.
        assert_eq!(decimal_quotient(SUM_LIMIT, 1, 0, 6, 38), None);
    }
}
