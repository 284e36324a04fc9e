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

/// The encoder of a keyed operator's key columns, or `None` when it has none (a global
/// aggregate, an unpartitioned Top-N): every row then has the empty key.
pub fn optional_encoder(
    schema: &arrow_schema::Schema,
    columns: Vec<usize>,
) -> Result<Option<KeyEncoder>, ArrowError> {
    if columns.is_empty() {
        return Ok(None);
    }
    KeyEncoder::new(schema, columns).map(Some)
}

/// Row `row`'s key bytes from a batch's encoded keys (`None`: the empty key).
pub fn key_bytes(keys: Option<&Rows>, row: usize) -> &[u8] {
    keys.map_or(&[], |k| k.row(row).data())
}

/// A converter of whole rows of `schema`, for operators that keep rows as bytes.
pub fn whole_row_converter(schema: &arrow_schema::Schema) -> Result<RowConverter, ArrowError> {
    RowConverter::new(
        schema
            .fields()
            .iter()
            .map(|f| SortField::new(f.data_type().clone()))
            .collect(),
    )
}
