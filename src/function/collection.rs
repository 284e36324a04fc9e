//! Value constructors and collection functions: `ARRAY[…]`, `ROW(…)`, CARDINALITY. A
//! constructor builds its nested column from whole argument columns (one interleave for an
//! array, the columns themselves for a row), never row by row.

use std::sync::Arc;

use arrow_array::builder::Int32Builder;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, ListArray, StructArray};
use arrow_buffer::OffsetBuffer;

use super::{EvalContext, EvalError, FunctionDef, Signature};
use crate::types::coercion::common_type_of;
use crate::types::{DataType, TypeKind};

pub const FUNCTIONS: &[FunctionDef] = &[
    def!("ARRAY", resolve_array, array),
    def!("ROW", resolve_row, row),
    def!("CARDINALITY", resolve_cardinality, cardinality),
];

/// `ARRAY[a, b, …]`: the elements' common type; the array itself is never NULL.
fn resolve_array(args: &[DataType]) -> Result<Signature, String> {
    if args.is_empty() {
        return Err("ARRAY needs at least one element".into());
    }
    let element = common_type_of(args).ok_or_else(|| {
        let shown: Vec<String> = args.iter().map(|a| a.kind.to_string()).collect();
        format!("ARRAY elements have no common type: {}", shown.join(", "))
    })?;
    Ok(Signature::new(
        vec![element.clone(); args.len()],
        DataType::not_null(TypeKind::Array(Box::new(element))),
    ))
}

fn array(args: &[ArrayRef], ctx: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let TypeKind::Array(element) = &t.kind else {
        return Err(EvalError::Internal(format!("ARRAY typed as {}", t.kind)));
    };
    let width = args.len();
    let indices: Vec<(usize, usize)> = (0..ctx.num_rows)
        .flat_map(|row| (0..width).map(move |arg| (arg, row)))
        .collect();
    let columns: Vec<&dyn Array> = args.iter().map(|a| a.as_ref()).collect();
    let values = arrow_select::interleave::interleave(&columns, &indices)
        .map_err(|e| EvalError::Internal(e.to_string()))?;
    let offsets = OffsetBuffer::from_lengths(std::iter::repeat_n(width, ctx.num_rows));
    let list = ListArray::try_new(
        Arc::new(element.to_arrow_field("element")),
        offsets,
        values,
        None,
    )
    .map_err(|e| EvalError::Invalid(format!("ARRAY: {e}")))?;
    Ok(Arc::new(list))
}

/// `ROW(a, b, …)`: fields named `EXPR$0`, `EXPR$1`, … as Flink names them.
fn resolve_row(args: &[DataType]) -> Result<Signature, String> {
    if args.is_empty() {
        return Err("ROW needs at least one field".into());
    }
    let fields = args
        .iter()
        .enumerate()
        .map(|(i, a)| (format!("EXPR${i}"), a.clone()))
        .collect();
    Ok(Signature::new(
        args.to_vec(),
        DataType::not_null(TypeKind::Row(fields)),
    ))
}

fn row(args: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let TypeKind::Row(fields) = &t.kind else {
        return Err(EvalError::Internal(format!("ROW typed as {}", t.kind)));
    };
    let arrow_fields: Vec<_> = fields
        .iter()
        .map(|(name, ty)| ty.to_arrow_field(name))
        .collect();
    let row = StructArray::try_new(arrow_fields.into(), args.to_vec(), None)
        .map_err(|e| EvalError::Invalid(format!("ROW: {e}")))?;
    Ok(Arc::new(row))
}

fn resolve_cardinality(args: &[DataType]) -> Result<Signature, String> {
    let [value] = args else {
        return Err("CARDINALITY expects one argument".into());
    };
    if !matches!(value.kind, TypeKind::Array(_) | TypeKind::Map(..)) {
        return Err(format!(
            "CARDINALITY expects an ARRAY or a MAP, got {}",
            value.kind
        ));
    }
    Ok(Signature::new(
        args.to_vec(),
        DataType {
            kind: TypeKind::Int,
            nullable: value.nullable,
        },
    ))
}

/// CARDINALITY(array | map): the number of elements or entries.
fn cardinality(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let value = &args[0];
    let mut b = Int32Builder::with_capacity(value.len());
    let lengths: Box<dyn Fn(usize) -> i32> = match value.data_type() {
        arrow_schema::DataType::Map(..) => {
            let map = value.as_map();
            Box::new(move |i| map.value_length(i))
        }
        _ => {
            let list = value.as_list::<i32>();
            Box::new(move |i| list.value_length(i))
        }
    };
    for i in 0..value.len() {
        if value.is_null(i) {
            b.append_null();
        } else {
            b.append_value(lengths(i));
        }
    }
    Ok(Arc::new(b.finish()))
}
