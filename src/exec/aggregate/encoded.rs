//! Aggregate arguments as `arrow-row` bytes, encoded once per batch. The group aggregate
//! hands a batch's rows over in rounds — a hot key's rows one round each — so encoding the
//! argument columns afresh per call made one hot key's batch cost its length squared.

use arrow_array::ArrayRef;
use arrow_row::{RowConverter, Rows, SortField};

use crate::exec::error::ExecError;

pub struct EncodedArguments {
    converter: RowConverter,
    /// The columns `rows` were encoded from, held so that no other array can take their
    /// address while the encoding is kept.
    columns: Vec<ArrayRef>,
    rows: Option<Rows>,
}

impl EncodedArguments {
    pub fn new(fields: Vec<SortField>) -> Result<Self, ExecError> {
        Ok(EncodedArguments {
            converter: RowConverter::new(fields)?,
            columns: Vec::new(),
            rows: None,
        })
    }

    /// The rows of `columns`, encoded unless they are the columns encoded last.
    pub fn encode(&mut self, columns: &[ArrayRef]) -> Result<&Rows, ExecError> {
        let same = self.rows.is_some()
            && self.columns.len() == columns.len()
            && self
                .columns
                .iter()
                .zip(columns)
                .all(|(a, b)| std::sync::Arc::ptr_eq(a, b));
        if !same {
            self.rows = None;
            self.columns = columns.to_vec();
        }
        match &mut self.rows {
            Some(rows) => Ok(rows),
            slot => Ok(slot.insert(self.converter.convert_columns(columns)?)),
        }
    }

    pub fn converter(&self) -> &RowConverter {
        &self.converter
    }

    /// One value per slot from the encoded ones `picked` (`None`: NULL), as the argument's
    /// column: the present ones decoded in one call, then placed.
    pub fn decode_each(&self, picked: &[Option<&[u8]>]) -> Result<ArrayRef, ExecError> {
        let parser = self.converter.parser();
        let present = picked.iter().flatten().map(|v| parser.parse(v));
        let decoded = self.converter.convert_rows(present)?.remove(0);
        let mut next = 0u32;
        let indices: arrow_array::UInt32Array = picked
            .iter()
            .map(|p| {
                p.map(|_| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        Ok(arrow_select::take::take(decoded.as_ref(), &indices, None)?)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::Int64Array;

    use super::*;

    #[test]
    fn the_same_columns_are_encoded_once() {
        let mut encoded =
            EncodedArguments::new(vec![SortField::new(arrow_schema::DataType::Int64)]).unwrap();
        let a: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
        let b: ArrayRef = Arc::new(Int64Array::from(vec![2, 1]));
        let first = encoded
            .encode(std::slice::from_ref(&a))
            .unwrap()
            .row(0)
            .owned();
        let again = encoded
            .encode(std::slice::from_ref(&a))
            .unwrap()
            .row(0)
            .owned();
        assert_eq!(first, again);
        // Equal values in another array are encoded from that array.
        let other = encoded
            .encode(std::slice::from_ref(&b))
            .unwrap()
            .row(0)
            .owned();
        assert!(other > first);
    }
}
