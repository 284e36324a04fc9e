//! `$WELFORD_M2$1`: the sum of squared deviations from the mean (M2) that Flink 2.3 computes
//! for STDDEV_POP, STDDEV_SAMP, VAR_POP and VAR_SAMP. The binder writes each of those as M2
//! and COUNT of the same argument, and the quotient and square root above the aggregate, as
//! Flink's plan does.
//!
//! Every value is taken as a DOUBLE (a DECIMAL correctly rounded to the nearest one) and
//! folded in by Welford's online update, in arrival order; a retraction runs the update
//! backwards. The result is NULL for a group without values, and also when rounding left M2
//! below zero after retractions (as Flink's is: a variance cannot be negative). Merging two
//! groups (session windows) uses Chan's pairwise formula.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
};
use arrow_array::{Array, ArrayRef, Float64Array, RecordBatch};
use arrow_schema::DataType as ArrowType;

use super::{
    FrozenSlots, GroupsAccumulator, StateReader, filter_column, nulls_of, passes, put_i64,
};
use crate::exec::error::ExecError;
use crate::exec::state::pages::{FrozenVec, PagedVec};

/// Count, mean and M2 of one group.
#[derive(Debug, Clone, Copy, Default)]
struct Moments {
    count: i64,
    mean: f64,
    m2: f64,
}

impl Moments {
    /// The moments in a snapshot.
    fn put(&self, out: &mut Vec<u8>) {
        put_i64(out, self.count);
        put_i64(out, self.mean.to_bits() as i64);
        put_i64(out, self.m2.to_bits() as i64);
    }

    #[inline]
    fn add(&mut self, x: f64) {
        self.count += 1;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
    }

    #[inline]
    fn remove(&mut self, x: f64) {
        self.count -= 1;
        if self.count == 0 {
            *self = Moments::default();
            return;
        }
        let delta = x - self.mean;
        self.mean -= delta / self.count as f64;
        self.m2 -= delta * (x - self.mean);
    }

    fn absorb(&mut self, other: Moments) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other;
            return;
        }
        let count = self.count + other.count;
        let delta = other.mean - self.mean;
        let (a, b, n) = (self.count as f64, other.count as f64, count as f64);
        self.mean += delta * b / n;
        self.m2 += other.m2 + delta * delta * a * b / n;
        self.count = count;
    }
}

/// How the argument column's values become DOUBLEs.
#[derive(Debug, Clone, Copy)]
enum Argument {
    Int8,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    Decimal { scale: i8 },
}

/// M2 over a numeric argument, a DOUBLE result.
pub struct WelfordM2Accumulator {
    column: usize,
    filter: Option<usize>,
    argument: Argument,
    groups: PagedVec<Moments>,
}

impl WelfordM2Accumulator {
    pub fn new(
        column: usize,
        filter: Option<usize>,
        arg_type: &ArrowType,
    ) -> Result<Self, ExecError> {
        let argument = match arg_type {
            ArrowType::Int8 => Argument::Int8,
            ArrowType::Int16 => Argument::Int16,
            ArrowType::Int32 => Argument::Int32,
            ArrowType::Int64 => Argument::Int64,
            ArrowType::Float32 => Argument::Float32,
            ArrowType::Float64 => Argument::Float64,
            ArrowType::Decimal128(_, scale) => Argument::Decimal { scale: *scale },
            other => {
                return Err(ExecError::Internal(format!(
                    "$WELFORD_M2$1 of {other} is not supported"
                )));
            }
        };
        Ok(WelfordM2Accumulator {
            column,
            filter,
            argument,
            groups: PagedVec::new(),
        })
    }

    /// Calls `f(slot, x)` for every pair whose row passes the FILTER and has a value.
    fn walk(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
        f: impl Fn(&mut Moments, f64),
    ) -> Result<(), ExecError> {
        let filter = filter_column(batch, self.filter)?;
        let column = batch.column(self.column);
        let groups = &mut self.groups;
        macro_rules! walk {
            ($t:ty, $convert:expr) => {{
                let values = column.as_primitive_opt::<$t>().ok_or_else(|| {
                    ExecError::Internal(format!(
                        "$WELFORD_M2$1's argument is {}, not {}",
                        column.data_type(),
                        <$t as arrow_array::ArrowPrimitiveType>::DATA_TYPE
                    ))
                })?;
                let raw = values.values();
                for (&row, &slot) in rows.iter().zip(slots) {
                    let row = row as usize;
                    if passes(filter, row) && values.is_valid(row) {
                        f(&mut groups[slot as usize], $convert(raw[row]));
                    }
                }
            }};
        }
        match self.argument {
            Argument::Int8 => walk!(Int8Type, f64::from),
            Argument::Int16 => walk!(Int16Type, f64::from),
            Argument::Int32 => walk!(Int32Type, f64::from),
            Argument::Int64 => walk!(Int64Type, |x: i64| x as f64),
            Argument::Float32 => walk!(Float32Type, f64::from),
            Argument::Float64 => walk!(Float64Type, |x: f64| x),
            Argument::Decimal { scale } => {
                walk!(Decimal128Type, |x: i128| decimal_to_f64(x, scale))
            }
        }
        Ok(())
    }
}

/// The DOUBLE nearest to the decimal `unscaled · 10^-scale`, as Java's
/// `BigDecimal.doubleValue` gives it: one correctly rounded division when both operands are
/// exact doubles, else the decimal text parsed (correctly rounded).
fn decimal_to_f64(unscaled: i128, scale: i8) -> f64 {
    const EXACT: i128 = 1 << 53;
    if (-EXACT..=EXACT).contains(&unscaled) && (0..=22).contains(&scale) {
        return unscaled as f64 / 10f64.powi(i32::from(scale));
    }
    format!("{unscaled}e{}", -i32::from(scale))
        .parse()
        .unwrap_or(f64::NAN)
}

impl GroupsAccumulator for WelfordM2Accumulator {
    fn resize(&mut self, slots: usize) {
        self.groups.grow(slots, Moments::default());
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        self.walk(batch, rows, slots, |m, x| m.add(x))
    }

    fn retract(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        self.walk(batch, rows, slots, |m, x| m.remove(x))
    }

    fn merge(&mut self, into: u32, from: u32) {
        let from = self.groups[from as usize];
        self.groups[into as usize].absorb(from);
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        let values = slots.iter().map(|&s| self.groups[s as usize].m2).collect();
        let valid = slots
            .iter()
            .map(|&s| {
                let m = &self.groups[s as usize];
                m.count > 0 && m.m2 >= 0.0
            })
            .collect();
        Ok(Arc::new(Float64Array::new(values, nulls_of(valid))))
    }

    fn free(&mut self, slot: u32) {
        self.groups[slot as usize] = Moments::default();
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        self.groups[slot as usize].put(out);
    }

    fn freeze(&self, _slots: usize, _live: &dyn Fn(u32) -> bool) -> Box<dyn FrozenSlots> {
        Box::new(FrozenMoments(self.groups.freeze()))
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        self.groups[slot as usize] = Moments {
            count: input.i64()?,
            mean: f64::from_bits(input.i64()? as u64),
            m2: f64::from_bits(input.i64()? as u64),
        };
        Ok(())
    }
}

/// The moments' slots at a barrier.
struct FrozenMoments(FrozenVec<Moments>);

impl FrozenSlots for FrozenMoments {
    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        self.0[slot as usize].put(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_round_to_the_nearest_double() {
        assert_eq!(decimal_to_f64(15, 1), 1.5);
        assert_eq!(decimal_to_f64(-1, 20), -1e-20);
        assert_eq!(
            decimal_to_f64(10_000_000_000_000_000_000_000_000_001, 2),
            1e26
        );
        assert_eq!(decimal_to_f64(123_456_789, 30), 1.23456789e-22);
    }

    #[test]
    fn retraction_runs_the_update_backwards() {
        let mut m = Moments::default();
        m.add(0.1);
        m.add(0.2);
        m.remove(0.1);
        // Flink prints NULL here: rounding left M2 just below zero.
        assert!(m.m2 < 0.0 && m.count == 1);
        m.add(0.5);
        assert_eq!(m.m2 / 2.0, 0.022499999999999996);
        m.remove(0.2);
        m.remove(0.5);
        assert_eq!((m.count, m.mean, m.m2), (0, 0.0, 0.0));
    }

    #[test]
    fn merging_equals_adding() {
        let (mut a, mut b, mut all) = (Moments::default(), Moments::default(), Moments::default());
        for x in [1.0, 2.0, 4.0] {
            a.add(x);
            all.add(x);
        }
        for x in [8.0, 16.0] {
            b.add(x);
            all.add(x);
        }
        a.absorb(b);
        assert_eq!(a.count, all.count);
        assert!((a.m2 - all.m2).abs() < 1e-9 && (a.mean - all.mean).abs() < 1e-12);
    }
}
