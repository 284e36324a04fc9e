//! Literal rows as a source split (`VALUES …`, `SELECT` without `FROM`).

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use arrow_select::concat::concat;

use super::split::SourceSplit;
use crate::exec::error::ExecError;
use crate::exec::eval::evaluate;
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;
use crate::types::chunk::batch_with_rows;

pub struct ValuesSplit {
    rows: Option<Vec<Vec<ScalarExpr>>>,
    schema: SchemaRef,
    ctx: EvalContext,
}

impl ValuesSplit {
    pub fn new(rows: Vec<Vec<ScalarExpr>>, schema: SchemaRef, ctx: EvalContext) -> Self {
        ValuesSplit {
            rows: Some(rows),
            schema,
            ctx,
        }
    }
}

impl SourceSplit for ValuesSplit {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
        let Some(rows) = self.rows.take() else {
            return Ok(None);
        };
        let one_row = batch_with_rows(
            std::sync::Arc::new(arrow_schema::Schema::empty()),
            vec![],
            1,
        )?;
        let width = self.schema.fields().len();
        let mut columns = Vec::with_capacity(width);
        for col in 0..width {
            let cells = rows
                .iter()
                .map(|r| evaluate(&r[col], &one_row, &self.ctx))
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<&dyn arrow_array::Array> = cells.iter().map(|c| c.as_ref()).collect();
            columns.push(concat(&refs)?);
        }
        Ok(Some(batch_with_rows(
            self.schema.clone(),
            columns,
            rows.len(),
        )?))
    }

    fn describe(&self) -> String {
        "VALUES".into()
    }

    fn replayable(&self) -> bool {
        true
    }

    /// One byte: whether the rows have gone out.
    fn position(&self) -> Option<Vec<u8>> {
        Some(vec![u8::from(self.rows.is_none())])
    }

    fn seek(&mut self, position: &[u8]) -> Result<(), ExecError> {
        match position {
            [] | [0] => Ok(()),
            [1] => {
                self.rows = None;
                Ok(())
            }
            _ => Err(ExecError::Checkpoint(
                "VALUES: a checkpointed position does not read back".into(),
            )),
        }
    }
}
