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

/// A converter of the ORDER BY columns of rows of `schema`, whose bytes sort as the ORDER BY
/// asks (directions and NULL places included).
pub fn order_converter(
    schema: &arrow_schema::Schema,
    order: &[crate::plan::logical::OrderKey],
) -> Result<RowConverter, ArrowError> {
    RowConverter::new(
        order
            .iter()
            .map(|o| {
                SortField::new_with_options(
                    schema.field(o.column).data_type().clone(),
                    arrow_schema::SortOptions {
                        descending: o.descending,
                        nulls_first: o.nulls_first,
                    },
                )
            })
            .collect(),
    )
}

/// The bytes of a row of NULLs of `schema` under `rows` (a whole-row converter): an outer
/// join's padding. Empty for a schema of no columns.
pub fn null_row(
    rows: &RowConverter,
    schema: &arrow_schema::Schema,
) -> Result<Box<[u8]>, ArrowError> {
    let nulls: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .map(|f| arrow_array::new_null_array(f.data_type(), 1))
        .collect();
    if nulls.is_empty() {
        return Ok(Box::default());
    }
    Ok(rows.convert_columns(&nulls)?.row(0).as_ref().into())
}

/// Whether two keys' bytes are equal. Most keys are a few to 16 bytes (a BIGINT's is 9):
/// compared as two overlapping words, inline, instead of through a `memcmp` call, which
/// dominated the key table's probes.
#[inline(always)]
pub fn same_key(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if (8..=16).contains(&n) {
        let word =
            |s: &[u8], at: usize| u64::from_ne_bytes(s[at..at + 8].try_into().unwrap_or([0; 8]));
        return word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8);
    }
    if (4..8).contains(&n) {
        let word =
            |s: &[u8], at: usize| u32::from_ne_bytes(s[at..at + 4].try_into().unwrap_or([0; 4]));
        return word(a, 0) == word(b, 0) && word(a, n - 4) == word(b, n - 4);
    }
    a == b
}

#[cfg(test)]
mod tests {
    use super::same_key;

    #[test]
    fn keys_differing_in_any_byte_or_length_are_not_the_same() {
        for n in 0..40usize {
            let a: Vec<u8> = (0..n as u8).collect();
            assert!(same_key(&a, &a.clone()), "{n} bytes");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x80;
                assert!(!same_key(&a, &b), "{n} bytes, byte {at}");
            }
            let mut longer = a.clone();
            longer.push(0);
            assert!(!same_key(&a, &longer), "{n} bytes against {}", n + 1);
        }
    }
}
