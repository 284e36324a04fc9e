//! `ChangelogKindsOperator`: the first operator of a scan whose format is a changelog format
//! (`connector/format/changelog.rs`): the decoder puts each row's kind in a last column,
//! which this operator takes off the batch and makes the chunk's kinds.

use arrow_array::Int8Array;
use arrow_array::RecordBatch;

use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, Output};
use crate::types::chunk::{RowKind, StreamChunk, batch_with_rows};

#[derive(Default)]
pub struct ChangelogKindsOperator;

impl Operator for ChangelogKindsOperator {
    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let batch: RecordBatch = chunk.batch;
        let width = batch.num_columns();
        let codes = (width > 0)
            .then(|| batch.column(width - 1).as_any().downcast_ref::<Int8Array>())
            .flatten()
            .ok_or_else(|| ExecError::Internal("a changelog batch has no kind column".into()))?;
        let kinds = codes
            .values()
            .iter()
            .map(|&c| u8::try_from(c).ok().and_then(RowKind::from_byte))
            .collect::<Option<Vec<RowKind>>>()
            .ok_or_else(|| ExecError::Internal("a changelog row has no kind".into()))?;
        let rows = batch.num_rows();
        let schema = std::sync::Arc::new(
            batch
                .schema()
                .project(&(0..width - 1).collect::<Vec<_>>())?,
        );
        let columns = batch.columns()[..width - 1].to_vec();
        let all_inserts = kinds.iter().all(|k| *k == RowKind::Insert);
        out.emit(StreamChunk {
            batch: batch_with_rows(schema, columns, rows)?,
            kinds: (!all_inserts).then_some(kinds),
        })
    }
}
