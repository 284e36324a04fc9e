//! `ExpandOperator`: each input row once per projection, the projections of a row one after
//! another (Flink's `ExpandFunction` order), each with the row's kind. Stateless.

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;

use super::eval::evaluate;
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, Output};
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;
use crate::types::chunk::{StreamChunk, batch_with_rows};

pub struct ExpandOperator {
    projects: Vec<Vec<ScalarExpr>>,
    schema: SchemaRef,
    ctx: EvalContext,
}

impl ExpandOperator {
    pub fn new(projects: Vec<Vec<ScalarExpr>>, schema: SchemaRef, ctx: EvalContext) -> Self {
        ExpandOperator {
            projects,
            schema,
            ctx,
        }
    }
}

impl Operator for ExpandOperator {
    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let rows = chunk.num_rows();
        if rows == 0 {
            return Ok(());
        }
        let m = self.projects.len();
        // Each projection over the whole batch, then the rows interleaved: row r's
        // projection p lands at r * m + p.
        let projected: Vec<Vec<ArrayRef>> = self
            .projects
            .iter()
            .map(|project| {
                project
                    .iter()
                    .map(|e| evaluate(e, &chunk.batch, &self.ctx))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<_, _>>()?;
        let order: Vec<(usize, usize)> = (0..rows)
            .flat_map(|r| (0..m).map(move |p| (p, r)))
            .collect();
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.schema.fields().len());
        for c in 0..self.schema.fields().len() {
            let sources: Vec<&dyn arrow_array::Array> =
                projected.iter().map(|p| p[c].as_ref()).collect();
            // A projection's NULL literal is typed as its column is: the sources agree.
            columns.push(arrow_select::interleave::interleave(&sources, &order)?);
        }
        let batch: RecordBatch = batch_with_rows(self.schema.clone(), columns, rows * m)?;
        let kinds = chunk.kinds.map(|kinds| {
            kinds
                .iter()
                .flat_map(|&k| std::iter::repeat_n(k, m))
                .collect()
        });
        out.emit(StreamChunk { batch, kinds })
    }
}
