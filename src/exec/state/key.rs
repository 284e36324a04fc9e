//! Keys as bytes: a batch's key columns encoded once per batch with `arrow-row` (compact,
//! comparable, no per-row `String`), the form keyed state and the hash exchange both use.

use arrow_array::{ArrayRef, RecordBatch};
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::ArrowError;

pub struct KeyEncoder {
    columns: Vec<usize>,
    converter: RowConverter,
}

impl KeyEncoder {
    /// An encoder of columns `columns` of batches shaped like `schema`.
    pub fn new(schema: &arrow_schema::Schema, columns: Vec<usize>) -> Result<Self, ArrowError> {
        let fields = columns
            .iter()
            .map(|&c| SortField::new(schema.field(c).data_type().clone()))
            .collect();
        Ok(KeyEncoder {
            columns,
            converter: RowConverter::new(fields)?,
        })
    }

    /// Every row's key.
    pub fn encode(&self, batch: &RecordBatch) -> Result<Rows, ArrowError> {
        let columns: Vec<ArrayRef> = self
            .columns
            .iter()
            .map(|&c| batch.column(c).clone())
            .collect();
        self.converter.convert_columns(&columns)
    }

    /// The key columns back from encoded keys (bytes `encode` produced), one row per key.
    pub fn decode<'a>(
        &self,
        keys: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<Vec<ArrayRef>, ArrowError> {
        let parser = self.converter.parser();
        self.converter
            .convert_rows(keys.into_iter().map(|k| parser.parse(k)))
    }
}
