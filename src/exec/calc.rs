//! `CalcOperator`: filter and projection, Flink's Calc.

use arrow_array::cast::AsArray;
use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;
use arrow_select::filter::filter_record_batch;

use super::chunk::StreamChunk;
use super::eval::evaluate;
use super::operator::{ExecError, Operator, Output};
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;

pub struct CalcOperator {
    filter: Option<ScalarExpr>,
    exprs: Vec<ScalarExpr>,
    schema: SchemaRef,
    ctx: EvalContext,
}

impl CalcOperator {
    pub fn new(
        filter: Option<ScalarExpr>,
        exprs: Vec<ScalarExpr>,
        schema: SchemaRef,
        ctx: EvalContext,
    ) -> Self {
        CalcOperator {
            filter,
            exprs,
            schema,
            ctx,
        }
    }
}

impl Operator for CalcOperator {
    fn process(&mut self, chunk: StreamChunk, out: &mut dyn Output) -> Result<(), ExecError> {
        let StreamChunk {
            mut batch,
            mut kinds,
        } = chunk;
        if let Some(predicate) = &self.filter {
            let mask = evaluate(predicate, &batch, &self.ctx)?;
            let Some(mask) = mask.as_boolean_opt() else {
                return Err(ExecError::Internal(format!(
                    "a filter evaluated to {}, not BOOLEAN",
                    mask.data_type()
                )));
            };
            if mask.true_count() == 0 {
                return Ok(());
            }
            if mask.true_count() < batch.num_rows() {
                batch = filter_record_batch(&batch, mask)?;
                if let Some(k) = &kinds {
                    let keep: Vec<_> = k
                        .iter()
                        .zip(mask.iter())
                        .filter(|(_, m)| *m == Some(true))
                        .map(|(k, _)| *k)
                        .collect();
                    kinds = Some(keep);
                }
            }
        }
        let columns = self
            .exprs
            .iter()
            .map(|e| evaluate(e, &batch, &self.ctx))
            .collect::<Result<Vec<_>, _>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        let projected = RecordBatch::try_new_with_options(self.schema.clone(), columns, &options)?;
        out.emit(StreamChunk {
            batch: projected,
            kinds,
        })
    }
}
