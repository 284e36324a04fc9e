//! `CorrelateOperator`: an UNNEST's rows — each input row once per element of its
//! collection (an array, a map's entries, an array of rows' fields), the element's columns
//! and its ordinality appended, each with the input row's kind; a left correlate keeps a row
//! whose collection is empty or NULL once, with NULL elements. A table function's rows
//! (`LATERAL TABLE`) join their input rows the same way, the function called once a batch;
//! rows that break its promise (out of order, of other types) fail the job by its name. A condition over the element's
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
use crate::function::{EvalContext, EvalError};
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::Generator;
use crate::types::chunk::{RowKind, StreamChunk, batch_with_rows};

pub struct CorrelateOperator {
    generator: Generator,
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
        generator: Generator,
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
            generator,
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
            Elements::Columns(columns) => {
                for column in columns {
                    element_columns.push(take(column.as_ref(), &element_at, None)?);
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
    /// A table function's columns.
    Columns(Vec<ArrayRef>),
}

impl CorrelateOperator {
    /// Each input row's range of elements, and the elements.
    fn elements(&self, batch: &RecordBatch) -> Result<(Vec<(u32, u32)>, Elements), ExecError> {
        let (function, args) = match &self.generator {
            Generator::Unnest(collection) => return unnest(collection, batch, &self.ctx),
            Generator::Function { function, args } => (function, args),
        };
        let rows = batch.num_rows();
        let args = args
            .iter()
            .map(|a| evaluate(a, batch, &self.ctx))
            .collect::<Result<Vec<_>, _>>()?;
        let made = function
            .function
            .eval(&args, rows)
            .map_err(|m| ExecError::Eval(EvalError::Invalid(format!("{}: {m}", function.name))))?;
        let broken = |what: String| {
            ExecError::Eval(EvalError::Invalid(format!(
                "table function {} {what}",
                function.name
            )))
        };
        let expected = &self.element_schema.fields()
            [..made.columns.len().min(self.element_schema.fields().len())];
        if made.columns.len() != self.element_schema.fields().len() {
            return Err(broken(format!(
                "returned {} columns, not the {} of its signature",
                made.columns.len(),
                self.element_schema.fields().len()
            )));
        }
        for (column, field) in made.columns.iter().zip(expected) {
            if column.len() != made.input_rows.len() || column.data_type() != field.data_type() {
                return Err(broken(format!(
                    "returned a column of {} {} values for {} rows of {}",
                    column.len(),
                    column.data_type(),
                    made.input_rows.len(),
                    field.data_type()
                )));
            }
        }
        let mut ranges = vec![(0u32, 0u32); rows];
        let mut previous = 0u32;
        for (i, &row) in made.input_rows.iter().enumerate() {
            if row < previous || row as usize >= rows {
                return Err(broken(format!(
                    "returned input row {row} after row {previous} of {rows}: rows go in input order"
                )));
            }
            previous = row;
            let range = &mut ranges[row as usize];
            if range.0 == range.1 {
                *range = (i as u32, i as u32);
            }
            range.1 = i as u32 + 1;
        }
        Ok((ranges, Elements::Columns(made.columns)))
    }
}

/// Each row's range of elements of an UNNEST's collection (none for a NULL one), and the
/// elements.
fn unnest(
    collection: &ScalarExpr,
    batch: &RecordBatch,
    ctx: &EvalContext,
) -> Result<(Vec<(u32, u32)>, Elements), ExecError> {
    let collections = evaluate(collection, batch, ctx)?;
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
    let ranges = (0..batch.num_rows())
        .map(|row| {
            if collections.is_valid(row) {
                (offsets[row] as u32, offsets[row + 1] as u32)
            } else {
                (0, 0)
            }
        })
        .collect();
    Ok((ranges, elements))
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
        let (ranges, elements) = self.elements(batch)?;
        let kinds = chunk.kinds.as_deref();
        let mut piece = Piece::default();
        for (row, &(start, end)) in ranges.iter().enumerate() {
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
