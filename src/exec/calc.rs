//! `CalcOperator`: filter and projection, Flink's Calc.

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_schema::SchemaRef;
use arrow_select::filter::filter_record_batch;

use super::eval::evaluate;
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, Output};
use crate::function::string::too_large;
use crate::function::{EvalContext, EvalError};
use crate::plan::expr::ScalarExpr;
use crate::types::chunk::batch_with_rows;
use crate::types::chunk::{RowKind, StreamChunk};

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

impl CalcOperator {
    /// Emits the projection of `batch`. Results too large for one Arrow column (2 GiB of
    /// text) are computed and emitted half a batch at a time, so no row is lost.
    fn project(&mut self, chunk: StreamChunk, out: &mut dyn Output) -> Result<(), ExecError> {
        let StreamChunk { batch, kinds } = chunk;
        let columns = self
            .exprs
            .iter()
            .map(|e| evaluate(e, &batch, &self.ctx))
            .collect::<Result<Vec<_>, _>>();
        let columns = match columns {
            Err(EvalError::TooLarge) => {
                return self.in_halves(StreamChunk { batch, kinds }, out, Self::project);
            }
            other => other?,
        };
        let projected = batch_with_rows(self.schema.clone(), columns, batch.num_rows())?;
        out.emit(StreamChunk {
            batch: projected,
            kinds,
        })
    }
}

impl CalcOperator {
    /// `step` on the first half of `chunk`, then on the second: its results did not fit one
    /// Arrow column. A single row cannot be split: its value itself is too large.
    fn in_halves(
        &mut self,
        chunk: StreamChunk,
        out: &mut dyn Output,
        step: fn(&mut Self, StreamChunk, &mut dyn Output) -> Result<(), ExecError>,
    ) -> Result<(), ExecError> {
        if chunk.batch.num_rows() <= 1 {
            return Err(too_large().into());
        }
        let (first, rest) = halves(chunk.batch, chunk.kinds);
        step(self, first, out)?;
        step(self, rest, out)
    }
}

/// The first and second half of a batch's rows, with their row kinds.
fn halves(batch: RecordBatch, kinds: Option<Vec<RowKind>>) -> (StreamChunk, StreamChunk) {
    let half = batch.num_rows() / 2;
    let rest = batch.num_rows() - half;
    let (first_kinds, rest_kinds) = match kinds {
        Some(mut k) => {
            let tail = k.split_off(half);
            (Some(k), Some(tail))
        }
        None => (None, None),
    };
    (
        StreamChunk {
            batch: batch.slice(0, half),
            kinds: first_kinds,
        },
        StreamChunk {
            batch: batch.slice(half, rest),
            kinds: rest_kinds,
        },
    )
}

impl Operator for CalcOperator {
    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let StreamChunk {
            mut batch,
            mut kinds,
        } = chunk;
        if let Some(predicate) = &self.filter {
            let mask = match evaluate(predicate, &batch, &self.ctx) {
                Err(EvalError::TooLarge) => {
                    let chunk = StreamChunk { batch, kinds };
                    return self.in_halves(chunk, out, |op, c, o| op.process(0, c, o));
                }
                mask => mask?,
            };
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
        self.project(StreamChunk { batch, kinds }, out)
    }
}
