//! `CorrelateOperator`: an UNNEST's rows — each input row once per element of its
//! collection (an array, a map's entries, an array of rows' fields), the element's columns
//! and its ordinality appended, each with the input row's kind; a left correlate keeps a row
//! whose collection is empty or NULL once, with NULL elements. A condition over the element's
//! columns drops the rows it does not hold. An input column its consumer does not read is
//! left NULL rather than repeated per element. Stateless; a row of a long collection emits
//! its elements in chunks of at most [`PIECE_ROWS`].

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, Int32Array, RecordBatch, UInt32Array, make_array, new_null_array,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType as ArrowType, SchemaRef};
use arrow_select::filter::filter_record_batch;
use arrow_select::take::take;

use super::eval::evaluate;
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, Output, PIECE_ROWS};
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;
use crate::types::chunk::{RowKind, StreamChunk, batch_with_rows};

pub struct CorrelateOperator {
    collection: ScalarExpr,
    with_ordinality: bool,
    /// A row without elements is kept once (a left correlate).
    keeps_empty: bool,
    /// Over the element's columns.
    condition: Option<ScalarExpr>,
    schema: SchemaRef,
    /// Per input column, whether the consumer reads it.
    read: Vec<bool>,
    /// The element's columns (and ordinality), as the condition reads them.
    element_schema: SchemaRef,
    ctx: EvalContext,
}

impl CorrelateOperator {
    pub fn new(
        collection: ScalarExpr,
        with_ordinality: bool,
        keeps_empty: bool,
        condition: Option<ScalarExpr>,
        schema: SchemaRef,
        read: Vec<bool>,
        ctx: EvalContext,
    ) -> Self {
        let element_schema = Arc::new(arrow_schema::Schema::new(
            schema.fields()[read.len()..].to_vec(),
        ));
        CorrelateOperator {
            collection,
            with_ordinality,
            keeps_empty,
            condition,
            schema,
            read,
            element_schema,
            ctx,
        }
    }

    /// The rows `rows` (input row, element index or `None` for a padded row, ordinality)
    /// as one chunk.
    fn emit_piece(
        &self,
        input: &RecordBatch,
        kinds: Option<&[RowKind]>,
        elements: &Elements,
        rows: &Piece,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let n = rows.input.len();
        if n == 0 {
            return Ok(());
        }
        let at = UInt32Array::from(rows.input.clone());
        let mut columns: Vec<ArrayRef> = input
            .columns()
            .iter()
            .zip(&self.read)
            .map(|(c, &read)| match read {
                true => take(c.as_ref(), &at, None),
                false => Ok(new_null_array(c.data_type(), n)),
            })
            .collect::<Result<_, _>>()?;
        let mut element_columns: Vec<ArrayRef> = Vec::new();
        let element_at = UInt32Array::from(rows.element.clone());
        match elements {
            Elements::Scalar(values) => {
                element_columns.push(take(values.as_ref(), &element_at, None)?)
            }
            Elements::Fields(values) => {
                let taken = take(values.as_ref(), &element_at, None)?;
                let row = taken.as_struct();
                for child in row.columns() {
                    element_columns.push(with_nulls_of(child, row.nulls())?);
                }
            }
        }
        if self.with_ordinality {
            element_columns.push(Arc::new(Int32Array::from(rows.ordinality.clone())));
        }
        let mut kinds: Option<Vec<RowKind>> =
            kinds.map(|k| rows.input.iter().map(|&r| k[r as usize]).collect());
        let batch = if let Some(condition) = &self.condition {
            let elements_batch =
                batch_with_rows(self.element_schema.clone(), element_columns.clone(), n)?;
            let mask = evaluate(condition, &elements_batch, &self.ctx)?;
            let Some(mask) = mask.as_boolean_opt() else {
                return Err(ExecError::Internal(format!(
                    "a correlate's condition evaluated to {}, not BOOLEAN",
                    mask.data_type()
                )));
            };
            columns.extend(element_columns);
            let batch = batch_with_rows(self.schema.clone(), columns, n)?;
            if mask.true_count() == 0 {
                return Ok(());
            }
            if let Some(k) = &kinds {
                kinds = Some(
                    k.iter()
                        .zip(mask.iter())
                        .filter(|(_, m)| *m == Some(true))
                        .map(|(k, _)| *k)
                        .collect(),
                );
            }
            filter_record_batch(&batch, mask)?
        } else {
            columns.extend(element_columns);
            batch_with_rows(self.schema.clone(), columns, n)?
        };
        out.emit(StreamChunk { batch, kinds })
    }
}

/// The elements of a batch's collections, flattened: one array of values, or of rows whose
/// fields become columns (a map's entries, an array of rows).
enum Elements {
    Scalar(ArrayRef),
    Fields(ArrayRef),
}

/// Output rows being gathered.
#[derive(Default)]
struct Piece {
    input: Vec<u32>,
    element: Vec<Option<u32>>,
    /// From 1; `None` for a padded row.
    ordinality: Vec<Option<i32>>,
}

impl Piece {
    fn clear(&mut self) {
        self.input.clear();
        self.element.clear();
        self.ordinality.clear();
    }
}

/// `child` NULL where its row is NULL too.
fn with_nulls_of(child: &ArrayRef, row: Option<&NullBuffer>) -> Result<ArrayRef, ExecError> {
    let Some(row) = row else {
        return Ok(child.clone());
    };
    let nulls = NullBuffer::union(Some(row), child.logical_nulls().as_ref());
    let data = child.to_data().into_builder().nulls(nulls).build()?;
    Ok(make_array(data))
}

impl Operator for CorrelateOperator {
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
        let collections = evaluate(&self.collection, batch, &self.ctx)?;
        let (offsets, elements): (&[i32], Elements) = match collections.data_type() {
            ArrowType::List(_) => {
                let list = collections.as_list::<i32>();
                let values = list.values().clone();
                let elements = if matches!(values.data_type(), ArrowType::Struct(_)) {
                    Elements::Fields(values)
                } else {
                    Elements::Scalar(values)
                };
                (list.value_offsets(), elements)
            }
            ArrowType::Map(_, _) => {
                let map = collections.as_map();
                let entries: ArrayRef = Arc::new(map.entries().clone());
                (map.value_offsets(), Elements::Fields(entries))
            }
            other => {
                return Err(ExecError::Internal(format!(
                    "an UNNEST of {other}, not a collection"
                )));
            }
        };
        let kinds = chunk.kinds.as_deref();
        let mut piece = Piece::default();
        for row in 0..batch.num_rows() {
            let (start, end) = if collections.is_valid(row) {
                (offsets[row] as u32, offsets[row + 1] as u32)
            } else {
                (0, 0)
            };
            if start == end && self.keeps_empty {
                piece.input.push(row as u32);
                piece.element.push(None);
                piece.ordinality.push(None);
            }
            for (i, element) in (start..end).enumerate() {
                piece.input.push(row as u32);
                piece.element.push(Some(element));
                piece.ordinality.push(Some(i as i32 + 1));
                if piece.input.len() == PIECE_ROWS {
                    self.emit_piece(batch, kinds, &elements, &piece, out)?;
                    piece.clear();
                }
            }
        }
        self.emit_piece(batch, kinds, &elements, &piece, out)
    }
}

#[cfg(test)]
#[path = "correlate_tests.rs"]
mod tests;
