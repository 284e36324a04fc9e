//! Evaluating a [`ScalarExpr`] over a batch, a column at a time.

use std::sync::Arc;

use arrow_array::builder::*;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, new_null_array};
use arrow_select::zip::zip;

use crate::function::cast::cast;
use crate::function::{EvalContext, EvalError};
use crate::plan::expr::ScalarExpr;
use crate::types::value::Value;
use crate::types::{DataType, TypeKind};

pub fn evaluate(
    expr: &ScalarExpr,
    batch: &RecordBatch,
    ctx: &EvalContext,
) -> Result<ArrayRef, EvalError> {
    let n = batch.num_rows();
    match expr {
        ScalarExpr::Column { index, .. } => batch
            .columns()
            .get(*index)
            .cloned()
            .ok_or_else(|| EvalError::Internal(format!("column {index} out of range"))),
        ScalarExpr::Literal { value, data_type } => literal_array(value, data_type, n),
        ScalarExpr::Call {
            function,
            args,
            data_type,
        } => {
            let args = args
                .iter()
                .map(|a| evaluate(a, batch, ctx))
                .collect::<Result<Vec<_>, _>>()?;
            (function.kernel)(&args, &ctx.with_rows(n), data_type)
        }
        ScalarExpr::Cast {
            expr,
            data_type,
            try_cast,
        } => {
            let value = evaluate(expr, batch, ctx)?;
            cast(
                &value,
                expr.data_type(),
                data_type,
                &ctx.with_rows(n),
                *try_cast,
            )
        }
        ScalarExpr::Field { expr, index, .. } => {
            let row = evaluate(expr, batch, ctx)?;
            let field = row
                .as_struct_opt()
                .and_then(|s| s.columns().get(*index))
                .ok_or_else(|| EvalError::Internal(format!("field {index} of a non-row")))?;
            // A NULL row has NULL fields, whatever its children hold.
            let nulls = arrow_buffer::NullBuffer::union(row.nulls(), field.nulls());
            let data = field.to_data().into_builder().nulls(nulls).build();
            Ok(arrow_array::make_array(
                data.map_err(|e| EvalError::Internal(e.to_string()))?,
            ))
        }
        ScalarExpr::Case {
            branches,
            otherwise,
            data_type,
        } => {
            let mut result = match otherwise {
                Some(e) => evaluate(e, batch, ctx)?,
                None => new_null_array(&data_type.to_arrow(), n),
            };
            for (condition, value) in branches.iter().rev() {
                let mask = evaluate(condition, batch, ctx)?;
                let Some(mask) = mask.as_boolean_opt() else {
                    return Err(EvalError::Internal(format!(
                        "a CASE condition evaluated to {}, not BOOLEAN",
                        mask.data_type()
                    )));
                };
                let mask = true_mask(mask);
                let value = evaluate(value, batch, ctx)?;
                result =
                    zip(&mask, &value, &result).map_err(|e| EvalError::Internal(e.to_string()))?;
            }
            Ok(result)
        }
    }
}

/// TRUE where the condition is TRUE; NULL counts as FALSE.
fn true_mask(b: &BooleanArray) -> BooleanArray {
    match b.nulls() {
        None => b.clone(),
        Some(_) => b.iter().map(|v| Some(v == Some(true))).collect(),
    }
}

/// An array of `n` copies of a literal.
pub fn literal_array(value: &Value, data_type: &DataType, n: usize) -> Result<ArrayRef, EvalError> {
    macro_rules! fill {
        ($builder:ty, $v:expr) => {{
            let mut b = <$builder>::with_capacity(n);
            for _ in 0..n {
                b.append_value($v);
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    let mismatch =
        || EvalError::Internal(format!("literal {value:?} does not fit {}", data_type.kind));
    Ok(match (value, &data_type.kind) {
        (Value::Null, _) => new_null_array(&data_type.to_arrow(), n),
        (Value::Boolean(v), TypeKind::Boolean) => fill!(BooleanBuilder, *v),
        (Value::Int(v), TypeKind::TinyInt) => fill!(Int8Builder, *v as i8),
        (Value::Int(v), TypeKind::SmallInt) => fill!(Int16Builder, *v as i16),
        (Value::Int(v), TypeKind::Int) => fill!(Int32Builder, *v as i32),
        (Value::Int(v), TypeKind::BigInt) => fill!(Int64Builder, *v),
        (Value::Float(v), TypeKind::Float) => fill!(Float32Builder, *v as f32),
        (Value::Float(v), TypeKind::Double) => fill!(Float64Builder, *v),
        (Value::Decimal(v), TypeKind::Decimal { precision, scale }) => {
            let mut b = Decimal128Builder::with_capacity(n);
            for _ in 0..n {
                b.append_value(*v);
            }
            Arc::new(
                b.finish()
                    .with_precision_and_scale(*precision, *scale as i8)
                    .map_err(|e| EvalError::Internal(e.to_string()))?,
            )
        }
        (Value::String(s), k) if k.is_string() => {
            let mut b = StringBuilder::with_capacity(n, s.len() * n);
            for _ in 0..n {
                b.append_value(s);
            }
            Arc::new(b.finish())
        }
        (Value::Bytes(v), k) if k.is_binary() => {
            let mut b = BinaryBuilder::with_capacity(n, v.len() * n);
            for _ in 0..n {
                b.append_value(v);
            }
            Arc::new(b.finish())
        }
        (Value::Date(v), TypeKind::Date) => fill!(Date32Builder, *v),
        (Value::Time(v), TypeKind::Time(_)) => fill!(Time64NanosecondBuilder, *v),
        (Value::Timestamp(v), TypeKind::Timestamp(_)) => fill!(TimestampNanosecondBuilder, *v),
        (Value::Timestamp(v), TypeKind::TimestampLtz(_)) => {
            let mut b = TimestampNanosecondBuilder::with_capacity(n);
            for _ in 0..n {
                b.append_value(*v);
            }
            Arc::new(b.finish().with_timezone("UTC"))
        }
        (Value::IntervalMonths(v), TypeKind::IntervalYearMonth) => {
            fill!(IntervalYearMonthBuilder, *v)
        }
        (Value::IntervalMillis(v), TypeKind::IntervalDayTime) => {
            fill!(DurationMillisecondBuilder, *v)
        }
        _ => return Err(mismatch()),
    })
}
