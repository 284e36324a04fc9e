//! The unit of data between operators: an Arrow batch plus one Flink row kind per row.

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{ArrowError, SchemaRef};

/// A batch of `rows` rows: its row count stated, so that a batch of no columns (a projection
/// of constants, `SELECT` without `FROM`) still carries it.
pub fn batch_with_rows(
    schema: SchemaRef,
    columns: Vec<ArrayRef>,
    rows: usize,
) -> Result<RecordBatch, ArrowError> {
    RecordBatch::try_new_with_options(
        schema,
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
}

/// Flink's `RowKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowKind {
    Insert,
    UpdateBefore,
    UpdateAfter,
    Delete,
}

impl RowKind {
    /// `+I`, `-U`, `+U`, `-D`.
    pub fn short_string(self) -> &'static str {
        match self {
            RowKind::Insert => "+I",
            RowKind::UpdateBefore => "-U",
            RowKind::UpdateAfter => "+U",
            RowKind::Delete => "-D",
        }
    }

    /// Flink's byte value of the kind (0 to 3), as snapshots store it.
    pub fn to_byte(self) -> u8 {
        self as u8
    }

    /// The kind of a byte [`RowKind::to_byte`] gave.
    pub fn from_byte(byte: u8) -> Option<RowKind> {
        [
            RowKind::Insert,
            RowKind::UpdateBefore,
            RowKind::UpdateAfter,
            RowKind::Delete,
        ]
        .get(usize::from(byte))
        .copied()
    }
}

/// A batch of rows with their kinds. `kinds: None` means every row is an insert, the common
/// case of append-only streams, which then carries no per-row overhead.
#[derive(Debug, Clone)]
pub struct StreamChunk {
    pub batch: RecordBatch,
    pub kinds: Option<Vec<RowKind>>,
}

impl StreamChunk {
    pub fn inserts(batch: RecordBatch) -> Self {
        StreamChunk { batch, kinds: None }
    }

    pub fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// Rows `offset..offset + len`, without copying.
    pub fn slice(&self, offset: usize, len: usize) -> Self {
        StreamChunk {
            batch: self.batch.slice(offset, len),
            kinds: self
                .kinds
                .as_ref()
                .map(|k| k[offset..offset + len].to_vec()),
        }
    }

    /// Whether every row is an insert.
    pub fn is_insert_only(&self) -> bool {
        self.kinds
            .as_ref()
            .is_none_or(|k| k.iter().all(|k| *k == RowKind::Insert))
    }

    pub fn kind(&self, row: usize) -> RowKind {
        self.kinds.as_ref().map_or(RowKind::Insert, |k| k[row])
    }
}

/// A chunk of stored rows (`arrow-row` bytes of every column under `rows`), each with its
/// kind, decoded in one call; `None` for no rows.
pub fn chunk_of_rows(
    rows: &arrow_row::RowConverter,
    schema: SchemaRef,
    emitted: Vec<(RowKind, Box<[u8]>)>,
) -> Result<Option<StreamChunk>, ArrowError> {
    if emitted.is_empty() {
        return Ok(None);
    }
    let parser = rows.parser();
    let columns = rows.convert_rows(emitted.iter().map(|(_, r)| parser.parse(r)))?;
    Ok(Some(StreamChunk {
        batch: RecordBatch::try_new(schema, columns)?,
        kinds: Some(emitted.into_iter().map(|(k, _)| k).collect()),
    }))
}

/// The Arrow schema operators produce: every field nullable, so that a type derivation that
/// is stricter than the data never fails a batch.
pub fn runtime_schema(schema: &super::Schema) -> arrow_schema::SchemaRef {
    std::sync::Arc::new(arrow_schema::Schema::new(
        schema
            .fields
            .iter()
            .map(|f| f.data_type.with_nullable(true).to_arrow_field(&f.name))
            .collect::<Vec<_>>(),
    ))
}
