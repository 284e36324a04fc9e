//! SINGLE_VALUE(x): the one value of a group (NULL without rows), as Flink's
//! `SingleValueAggFunction`, which Calcite puts under a scalar subquery that may have more
//! than one row; a second row fails the job with Flink's message. A retraction takes the row
//! back. Values are kept as `arrow-row` bytes of the argument (NULL included).

use super::encoded::EncodedArguments;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_row::SortField;
use arrow_schema::DataType as ArrowType;

use super::{GroupsAccumulator, StateReader, grow, put_bytes, put_i64};
use crate::exec::error::ExecError;
use crate::function::EvalError;

/// Flink's failure when a second row comes.
const MORE_THAN_ONE: &str = "SingleValueAggFunction received more than one element.";

pub struct SingleValueAccumulator {
    column: usize,
    argument: ArrowType,
    encoded: EncodedArguments,
    /// Per slot: its rows, and the value's bytes (empty without rows).
    slots: Vec<(i64, Box<[u8]>)>,
}

impl SingleValueAccumulator {
    pub fn new(column: usize, argument: &ArrowType) -> Result<Self, ExecError> {
        Ok(SingleValueAccumulator {
            column,
            argument: argument.clone(),
            encoded: EncodedArguments::new(vec![SortField::new(argument.clone())])?,
            slots: Vec::new(),
        })
    }
}

impl GroupsAccumulator for SingleValueAccumulator {
    fn resize(&mut self, slots: usize) {
        grow(&mut self.slots, slots, (0, Box::default()));
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
            let (count, value) = &mut self.slots[slot as usize];
            if *count >= 1 {
                return Err(EvalError::Invalid(MORE_THAN_ONE.into()).into());
            }
            *count += 1;
            *value = encoded.row(row as usize).as_ref().into();
        }
        Ok(())
    }

    fn retract(
        &mut self,
        _batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        for (_, &slot) in rows.iter().zip(slots) {
            let (count, value) = &mut self.slots[slot as usize];
            *count -= 1;
            if *count <= 0 {
                *count = 0;
                *value = Box::default();
            }
        }
        Ok(())
    }

    fn merge(&mut self, into: u32, from: u32) {
        let from = self.slots[from as usize].clone();
        let into = &mut self.slots[into as usize];
        if into.0 == 0 {
            *into = from;
        } else {
            into.0 += from.0;
        }
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        if slots.iter().any(|&s| self.slots[s as usize].0 > 1) {
            return Err(EvalError::Invalid(MORE_THAN_ONE.into()).into());
        }
        // A slot without rows is NULL: the encoding of a NULL value stands for it.
        let converter = self.encoded.converter();
        let null = converter.convert_columns(&[arrow_array::new_null_array(&self.argument, 1)])?;
        let parser = converter.parser();
        let rows = slots.iter().map(|&s| {
            let (count, value) = &self.slots[s as usize];
            if *count == 0 {
                null.row(0)
            } else {
                parser.parse(value)
            }
        });
        let mut columns = converter.convert_rows(rows)?;
        Ok(columns.remove(0))
    }

    fn free(&mut self, slot: u32) {
        self.slots[slot as usize] = (0, Box::default());
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        let (count, value) = &self.slots[slot as usize];
        put_i64(out, *count);
        put_bytes(out, value);
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        let count = input.i64()?;
        let value = input.bytes()?.into();
        self.slots[slot as usize] = (count, value);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;
    use arrow_array::{Array, Int32Array};
    use arrow_schema::{Field, Schema};

    use super::*;

    fn batch(values: &[Option<i32>]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("x", ArrowType::Int32, true)]));
        RecordBatch::try_new(schema, vec![Arc::new(Int32Array::from(values.to_vec()))]).unwrap()
    }

    fn values(acc: &SingleValueAccumulator, slots: &[u32]) -> Vec<Option<i32>> {
        let out = acc.evaluate(slots).unwrap();
        let out = out.as_primitive::<Int32Type>();
        (0..out.len())
            .map(|i| out.is_valid(i).then(|| out.value(i)))
            .collect()
    }

    #[test]
    fn one_row_is_the_value_a_second_fails_and_a_retraction_empties() {
        let mut acc = SingleValueAccumulator::new(0, &ArrowType::Int32).unwrap();
        acc.resize(3);
        let b = batch(&[Some(7), None, Some(9)]);
        acc.update(&b, &[0, 1], &[0, 1]).unwrap();
        assert_eq!(values(&acc, &[0, 1, 2]), [Some(7), None, None]);
        let err = acc.update(&b, &[2], &[0]).unwrap_err();
        assert_eq!(err.to_string(), MORE_THAN_ONE);
        let mut snapshot = Vec::new();
        acc.write_slot(0, &mut snapshot);
        acc.retract(&b, &[0], &[0]).unwrap();
        assert_eq!(values(&acc, &[0]), [None]);
        acc.update(&b, &[2], &[0]).unwrap();
        assert_eq!(values(&acc, &[0]), [Some(9)]);
        let mut restored = SingleValueAccumulator::new(0, &ArrowType::Int32).unwrap();
        restored.resize(1);
        restored
            .read_slot(0, &mut StateReader::new(&snapshot))
            .unwrap();
        assert_eq!(values(&restored, &[0]), [Some(7)]);
    }
}
