//! MIN and MAX: NULL for a group without a non-NULL value, else the least (greatest) value in
//! the argument's type. A value replaces the current one only when strictly less (greater),
//! as Flink's `IF(x < min, x, min)`, so with floating point a NaN seen first stays and a NaN
//! seen later never wins. Strings and bytes compare bytewise, as Flink's
//! `BinaryStringData.compareTo`.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, PrimitiveArray, RecordBatch,
    StringArray,
};
use arrow_schema::DataType as ArrowType;

use super::{
    FrozenSlots, GroupsAccumulator, StateReader, filter_column, for_each_value, nulls_of, passes,
    put_bytes, put_native,
};
use crate::exec::error::ExecError;
use crate::exec::state::pages::{FrozenVec, PagedVec};

/// Whether `x` should replace `current` for MIN (`MAX == false`) or MAX.
#[inline]
fn better<N: PartialOrd, const MAX: bool>(x: &N, current: &N) -> bool {
    if MAX { x > current } else { x < current }
}

/// MIN or MAX over a primitive column: integers, floating point, DECIMAL, DATE, TIME,
/// TIMESTAMP and TIMESTAMP_LTZ.
pub struct PrimitiveMinMax<T: ArrowPrimitiveType, const MAX: bool> {
    column: usize,
    filter: Option<usize>,
    result: ArrowType,
    values: PagedVec<T::Native>,
    seen: PagedVec<bool>,
}

impl<T: ArrowPrimitiveType, const MAX: bool> PrimitiveMinMax<T, MAX> {
    pub fn new(column: usize, filter: Option<usize>, result: ArrowType) -> Self {
        PrimitiveMinMax {
            column,
            filter,
            result,
            values: PagedVec::new(),
            seen: PagedVec::new(),
        }
    }

    #[inline]
    fn offer(&mut self, slot: usize, x: T::Native) {
        if !self.seen[slot] || better::<_, MAX>(&x, &self.values[slot]) {
            self.values[slot] = x;
            self.seen[slot] = true;
        }
    }
}

impl<T: ArrowPrimitiveType, const MAX: bool> GroupsAccumulator for PrimitiveMinMax<T, MAX> {
    fn resize(&mut self, slots: usize) {
        self.values.grow(slots, T::Native::default());
        self.seen.grow(slots, false);
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        for_each_value::<T>(batch, self.column, self.filter, rows, slots, |slot, x| {
            self.offer(slot, x);
        })
    }

    fn merge(&mut self, into: u32, from: u32) {
        if self.seen[from as usize] {
            self.offer(into as usize, self.values[from as usize]);
        }
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        let values: Vec<T::Native> = slots.iter().map(|&s| self.values[s as usize]).collect();
        let valid = slots.iter().map(|&s| self.seen[s as usize]).collect();
        Ok(Arc::new(
            PrimitiveArray::<T>::new(values.into(), nulls_of(valid))
                .with_data_type(self.result.clone()),
        ))
    }

    fn free(&mut self, slot: u32) {
        self.values[slot as usize] = T::Native::default();
        self.seen[slot as usize] = false;
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        put_extreme(out, self.seen[slot as usize], self.values[slot as usize]);
    }

    fn freeze(&self, _slots: usize, _live: &dyn Fn(u32) -> bool) -> Box<dyn FrozenSlots> {
        Box::new(FrozenExtremes::<T> {
            seen: self.seen.freeze(),
            values: self.values.freeze(),
        })
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        self.seen[slot as usize] = input.u8()? != 0;
        self.values[slot as usize] = input.native()?;
        Ok(())
    }
}

/// MIN or MAX over BOOLEAN (FALSE < TRUE).
pub struct BooleanMinMax {
    column: usize,
    filter: Option<usize>,
    max: bool,
    /// 0 for no value yet, 1 for FALSE, 2 for TRUE.
    values: PagedVec<u8>,
}

impl BooleanMinMax {
    pub fn new(column: usize, filter: Option<usize>, max: bool) -> Self {
        BooleanMinMax {
            column,
            filter,
            max,
            values: PagedVec::new(),
        }
    }

    #[inline]
    fn offer(&mut self, slot: usize, x: u8) {
        let current = self.values[slot];
        if current == 0 || (self.max && x > current) || (!self.max && x < current) {
            self.values[slot] = x;
        }
    }
}

impl GroupsAccumulator for BooleanMinMax {
    fn resize(&mut self, slots: usize) {
        self.values.grow(slots, 0);
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let filter = filter_column(batch, self.filter)?;
        let values: &BooleanArray = batch
            .column(self.column)
            .as_boolean_opt()
            .ok_or_else(|| ExecError::Internal("MIN/MAX argument is not BOOLEAN".into()))?;
        for (&row, &slot) in rows.iter().zip(slots) {
            let row = row as usize;
            if passes(filter, row) && values.is_valid(row) {
                self.offer(slot as usize, 1 + u8::from(values.value(row)));
            }
        }
        Ok(())
    }

    fn merge(&mut self, into: u32, from: u32) {
        let x = self.values[from as usize];
        if x != 0 {
            self.offer(into as usize, x);
        }
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        Ok(Arc::new(BooleanArray::from_iter(slots.iter().map(
            |&s| match self.values[s as usize] {
                0 => None,
                v => Some(v == 2),
            },
        ))))
    }

    fn free(&mut self, slot: u32) {
        self.values[slot as usize] = 0;
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        out.push(self.values[slot as usize]);
    }

    fn freeze(&self, _slots: usize, _live: &dyn Fn(u32) -> bool) -> Box<dyn FrozenSlots> {
        Box::new(FrozenBooleans(self.values.freeze()))
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        self.values[slot as usize] = input.u8()?;
        Ok(())
    }
}

/// MIN or MAX over strings or bytes. Each group keeps its current value in a buffer of its
/// own, reused as the value changes (an allocation only when it must grow).
pub struct BytesMinMax {
    column: usize,
    filter: Option<usize>,
    max: bool,
    result: ArrowType,
    values: Vec<Vec<u8>>,
    seen: PagedVec<bool>,
}

impl BytesMinMax {
    pub fn new(column: usize, filter: Option<usize>, max: bool, result: ArrowType) -> Self {
        BytesMinMax {
            column,
            filter,
            max,
            result,
            values: Vec::new(),
            seen: PagedVec::new(),
        }
    }

    #[inline]
    fn offer(&mut self, slot: usize, x: &[u8]) {
        let current = &mut self.values[slot];
        let replace = !self.seen[slot]
            || if self.max {
                x > current.as_slice()
            } else {
                x < current.as_slice()
            };
        if replace {
            current.clear();
            current.extend_from_slice(x);
            self.seen[slot] = true;
        }
    }

    fn update_with<'a>(
        &mut self,
        filter: Option<&BooleanArray>,
        values: &dyn Array,
        value: impl Fn(usize) -> &'a [u8],
        rows: &[u32],
        slots: &[u32],
    ) {
        for (&row, &slot) in rows.iter().zip(slots) {
            let row = row as usize;
            if passes(filter, row) && values.is_valid(row) {
                self.offer(slot as usize, value(row));
            }
        }
    }
}

impl GroupsAccumulator for BytesMinMax {
    fn resize(&mut self, slots: usize) {
        if self.values.len() < slots {
            self.values.resize_with(slots, Vec::new);
        }
        self.seen.grow(slots, false);
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let filter = filter_column(batch, self.filter)?;
        let column = batch.column(self.column).clone();
        if let Some(strings) = column.as_string_opt::<i32>() {
            self.update_with(
                filter,
                strings,
                |r| strings.value(r).as_bytes(),
                rows,
                slots,
            );
        } else if let Some(bytes) = column.as_binary_opt::<i32>() {
            self.update_with(filter, bytes, |r| bytes.value(r), rows, slots);
        } else {
            return Err(ExecError::Internal(format!(
                "MIN/MAX over {} is not supported",
                column.data_type()
            )));
        }
        Ok(())
    }

    fn merge(&mut self, into: u32, from: u32) {
        if self.seen[from as usize] {
            let x = std::mem::take(&mut self.values[from as usize]);
            self.offer(into as usize, &x);
            self.values[from as usize] = x;
        }
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        let value = |s: &u32| {
            let s = *s as usize;
            self.seen[s].then(|| self.values[s].as_slice())
        };
        Ok(match self.result {
            ArrowType::Binary => Arc::new(BinaryArray::from_iter(slots.iter().map(value))),
            _ => Arc::new(StringArray::from_iter(slots.iter().map(|s| {
                value(s).map(|b| std::str::from_utf8(b).unwrap_or_default())
            }))),
        })
    }

    fn free(&mut self, slot: u32) {
        self.values[slot as usize] = Vec::new();
        self.seen[slot as usize] = false;
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        out.push(u8::from(self.seen[slot as usize]));
        put_bytes(out, &self.values[slot as usize]);
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        self.seen[slot as usize] = input.u8()? != 0;
        self.values[slot as usize] = input.bytes()?.to_vec();
        Ok(())
    }
}

/// MIN or MAX over an input that retracts (Flink's `MinWithRetractAggFunction`): each group
/// keeps every value it holds with its count, ordered, as `arrow-row` bytes of the argument
/// (whose order is the value's: bytewise for strings, total order for floating point), so
/// the extreme is the first (last) entry and a retracted extreme gives way to the next.
pub struct RetractMinMax {
    column: usize,
    filter: Option<usize>,
    max: bool,
    argument: ArrowType,
    encoded: super::encoded::EncodedArguments,
    values: Vec<std::collections::BTreeMap<Box<[u8]>, u64>>,
}

impl RetractMinMax {
    pub fn new(
        column: usize,
        filter: Option<usize>,
        max: bool,
        argument: ArrowType,
    ) -> Result<Self, ExecError> {
        Ok(RetractMinMax {
            column,
            filter,
            max,
            encoded: super::encoded::EncodedArguments::new(vec![arrow_row::SortField::new(
                argument.clone(),
            )])?,
            argument,
            values: Vec::new(),
        })
    }

    /// Calls `f(slot, value bytes)` for the rows the FILTER passes whose argument is set.
    fn walk(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
        mut f: impl FnMut(&mut std::collections::BTreeMap<Box<[u8]>, u64>, &[u8]),
    ) -> Result<(), ExecError> {
        let filter = filter_column(batch, self.filter)?;
        let column = batch.column(self.column);
        let encoded = self.encoded.encode(std::slice::from_ref(column))?;
        for (&row, &slot) in rows.iter().zip(slots) {
            let row = row as usize;
            if passes(filter, row) && column.is_valid(row) {
                f(&mut self.values[slot as usize], encoded.row(row).as_ref());
            }
        }
        Ok(())
    }
}

impl GroupsAccumulator for RetractMinMax {
    fn resize(&mut self, slots: usize) {
        if self.values.len() < slots {
            self.values.resize_with(slots, Default::default);
        }
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        self.walk(batch, rows, slots, |values, value| {
            match values.get_mut(value) {
                Some(count) => *count += 1,
                None => {
                    values.insert(value.into(), 1);
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
        self.walk(batch, rows, slots, |values, value| {
            if let Some(count) = values.get_mut(value) {
                *count -= 1;
                if *count == 0 {
                    values.remove(value);
                }
            }
        })
    }

    fn merge(&mut self, into: u32, from: u32) {
        let from = self.values[from as usize].clone();
        let into = &mut self.values[into as usize];
        for (value, count) in from {
            *into.entry(value).or_insert(0) += count;
        }
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        // A group without values gives NULL: the encoding of a NULL argument.
        let converter = self.encoded.converter();
        let null = converter.convert_columns(&[arrow_array::new_null_array(&self.argument, 1)])?;
        let parser = converter.parser();
        let rows: Vec<arrow_row::Row<'_>> = slots
            .iter()
            .map(|&s| {
                let values = &self.values[s as usize];
                let extreme = if self.max {
                    values.keys().next_back()
                } else {
                    values.keys().next()
                };
                match extreme {
                    Some(bytes) => parser.parse(bytes),
                    None => null.row(0),
                }
            })
            .collect();
        let mut columns = converter.convert_rows(rows)?;
        Ok(columns.remove(0))
    }

    fn free(&mut self, slot: u32) {
        self.values[slot as usize] = Default::default();
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        let values = &self.values[slot as usize];
        super::put_u32(out, values.len() as u32);
        for (value, &count) in values {
            put_bytes(out, value);
            super::put_i64(out, count as i64);
        }
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        let n = input.u32()?;
        let values = &mut self.values[slot as usize];
        for _ in 0..n {
            let value: Box<[u8]> = input.bytes()?.into();
            values.insert(value, input.i64()? as u64);
        }
        Ok(())
    }
}

/// A primitive MIN's or MAX's slot in a snapshot: whether it holds a value, and the value.
fn put_extreme<N: arrow_buffer::ArrowNativeType>(out: &mut Vec<u8>, seen: bool, value: N) {
    out.push(u8::from(seen));
    put_native(out, value);
}

/// A primitive MIN's or MAX's slots at a barrier.
struct FrozenExtremes<T: ArrowPrimitiveType> {
    seen: FrozenVec<bool>,
    values: FrozenVec<T::Native>,
}

impl<T: ArrowPrimitiveType> FrozenSlots for FrozenExtremes<T> {
    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        put_extreme(out, self.seen[slot as usize], self.values[slot as usize]);
    }
}

/// A BOOLEAN MIN's or MAX's slots at a barrier (a byte each, as `write_slot` writes it).
struct FrozenBooleans(FrozenVec<u8>);

impl FrozenSlots for FrozenBooleans {
    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        out.push(self.0[slot as usize]);
    }
}
