//! `LookupJoinOperator`: each input row joined with the rows of a looked-up table that hold
//! its key, each output row with the input row's kind; a left join keeps a row without a
//! match once, the table's columns NULL. A NULL key matches nothing. The residual condition
//! decides each pair (a left row whose pairs it all refuses is then unmatched). The table
//! is read whole when the job is built ([`LookupTable`]), shared by the instances, and
//! indexed by the `arrow-row` bytes of its key columns. Stateless.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, UInt32Array};
use arrow_row::{RowConverter, SortField};
use arrow_schema::SchemaRef;
use arrow_select::take::take;
use hashbrown::HashMap;

use super::eval::evaluate;
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, Output};
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;
use crate::types::chunk::{StreamChunk, batch_with_rows};

/// A table's rows, and where the rows of each key are.
pub struct LookupTable {
    rows: RecordBatch,
    by_key: HashMap<Box<[u8]>, Vec<u32>>,
    key_fields: Vec<SortField>,
}

impl LookupTable {
    /// Indexes `rows` by the columns `keys` (rows with a NULL key are never found).
    pub fn new(rows: RecordBatch, keys: &[usize]) -> Result<Self, ExecError> {
        let key_fields: Vec<SortField> = keys
            .iter()
            .map(|&k| SortField::new(rows.schema().field(k).data_type().clone()))
            .collect();
        let columns: Vec<ArrayRef> = keys.iter().map(|&k| rows.column(k).clone()).collect();
        let encoded = RowConverter::new(key_fields.clone())?.convert_columns(&columns)?;
        let mut by_key: HashMap<Box<[u8]>, Vec<u32>> = HashMap::new();
        for row in 0..rows.num_rows() {
            if columns.iter().any(|c| c.is_null(row)) {
                continue;
            }
            by_key
                .entry(encoded.row(row).as_ref().into())
                .or_default()
                .push(row as u32);
        }
        Ok(LookupTable {
            rows,
            by_key,
            key_fields,
        })
    }
}

pub struct LookupJoinOperator {
    table: Arc<LookupTable>,
    converter: RowConverter,
    left_keys: Vec<usize>,
    /// A row without a match is kept once (a left join).
    keeps_unmatched: bool,
    /// Over the output's columns.
    residual: Option<ScalarExpr>,
    output: SchemaRef,
    ctx: EvalContext,
}

impl LookupJoinOperator {
    pub fn new(
        table: Arc<LookupTable>,
        left_keys: Vec<usize>,
        keeps_unmatched: bool,
        residual: Option<ScalarExpr>,
        output: SchemaRef,
        ctx: EvalContext,
    ) -> Result<Self, ExecError> {
        Ok(LookupJoinOperator {
            converter: RowConverter::new(table.key_fields.clone())?,
            table,
            left_keys,
            keeps_unmatched,
            residual,
            output,
            ctx,
        })
    }

    /// The output rows of pairs (input row, table row or none for padding).
    fn pairs(
        &self,
        batch: &RecordBatch,
        left: &[u32],
        right: &[Option<u32>],
    ) -> Result<Vec<ArrayRef>, ExecError> {
        let left = UInt32Array::from(left.to_vec());
        let right = UInt32Array::from(right.to_vec());
        let mut columns = Vec::with_capacity(self.output.fields().len());
        for column in batch.columns() {
            columns.push(take(column.as_ref(), &left, None)?);
        }
        for column in self.table.rows.columns() {
            columns.push(take(column.as_ref(), &right, None)?);
        }
        Ok(columns)
    }
}

impl Operator for LookupJoinOperator {
    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let batch = &chunk.batch;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let keys: Vec<ArrayRef> = self
            .left_keys
            .iter()
            .map(|&k| batch.column(k).clone())
            .collect();
        let encoded = self.converter.convert_columns(&keys)?;
        let (mut left, mut right) = (Vec::new(), Vec::new());
        for row in 0..batch.num_rows() {
            let found = if keys.iter().any(|k| k.is_null(row)) {
                None
            } else {
                self.table.by_key.get(encoded.row(row).as_ref())
            };
            match found {
                Some(matches) => {
                    for &m in matches {
                        left.push(row as u32);
                        right.push(Some(m));
                    }
                }
                None if self.keeps_unmatched => {
                    left.push(row as u32);
                    right.push(None);
                }
                None => {}
            }
        }
        if let Some(residual) = &self.residual {
            // Pairs the residual refuses go; a left row left without any is padded.
            let columns = self.pairs(batch, &left, &right)?;
            let candidates = batch_with_rows(self.output.clone(), columns, left.len())?;
            let verdict = evaluate(residual, &candidates, &self.ctx.with_rows(left.len()))?;
            let verdict = verdict.as_boolean_opt().ok_or_else(|| {
                ExecError::Internal("a lookup join's condition is not BOOLEAN".into())
            })?;
            let (mut kept_left, mut kept_right) = (Vec::new(), Vec::new());
            let mut i = 0;
            while i < left.len() {
                let row = left[i];
                let start = kept_left.len();
                while i < left.len() && left[i] == row {
                    if right[i].is_some() && verdict.is_valid(i) && verdict.value(i) {
                        kept_left.push(row);
                        kept_right.push(right[i]);
                    }
                    i += 1;
                }
                if kept_left.len() == start && self.keeps_unmatched {
                    kept_left.push(row);
                    kept_right.push(None);
                }
            }
            left = kept_left;
            right = kept_right;
        }
        if left.is_empty() {
            return Ok(());
        }
        let columns = self.pairs(batch, &left, &right)?;
        let kinds = chunk
            .kinds
            .as_ref()
            .map(|kinds| left.iter().map(|&l| kinds[l as usize]).collect());
        out.emit(StreamChunk {
            batch: batch_with_rows(self.output.clone(), columns, left.len())?,
            kinds,
        })
    }
}

#[cfg(test)]
#[path = "lookup_join_tests.rs"]
mod tests;
