//! Evaluating a [`ScalarExpr`] over a batch, a column at a time.
//!
//! CASE (and so IF and NULLIF), AND and OR evaluate an operand only on the rows that reach it,
//! left to right, as Flink's generated code does: `CASE WHEN a = 0 THEN 0 ELSE 10 / a END`
//! never divides by zero, nor does `a <> 0 AND 10 / a > 1`. The rows that reach an operand
//! are picked by a mask, the operand is evaluated on that smaller batch, and the results are
//! put back in row order. An operand that cannot fail skips all this and is evaluated on the
//! whole batch: for cheap operands (columns, literals, comparisons) filtering would cost more
//! than it saves, and the result is the same.

use std::sync::Arc;

use arrow_arith::boolean::{and_kleene, and_not, or_kleene};
use arrow_array::builder::*;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, new_null_array};
use arrow_buffer::BooleanBufferBuilder;
use arrow_select::concat::concat;
use arrow_select::filter::filter;
use arrow_select::interleave::interleave;
use arrow_select::zip::zip;

use crate::function::cast::cast;
use crate::function::operator::in_list;
use crate::function::{EvalContext, EvalError, FunctionDef};
use crate::plan::expr::ScalarExpr;
use crate::plan::expr::{STACK_RED_ZONE, STACK_SEGMENT};
use crate::types::chunk::batch_with_rows;
use crate::types::value::Value;
use crate::types::{DataType, TypeKind};

pub fn evaluate(
    expr: &ScalarExpr,
    batch: &RecordBatch,
    ctx: &EvalContext,
) -> Result<ArrayRef, EvalError> {
    // One level of recursion per level of nesting, which the binder bounded
    // (`MAX_EXPR_DEPTH`), not the thread's stack: grow it as needed.
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
        evaluate_nested(expr, batch, ctx)
    })
}

fn evaluate_nested(
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
        ScalarExpr::Call { function, args, .. } if is_logic(function) => {
            evaluate_logic(function.name == "AND", args, batch, ctx)
        }
        ScalarExpr::Call {
            function,
            args,
            data_type,
        } => {
            let args = args
                .iter()
                .map(|a| evaluate(a, batch, ctx))
                .collect::<Result<Vec<_>, _>>()?;
            function.evaluate(&args, &ctx.with_rows(n), data_type)
        }
        ScalarExpr::Cast {
            expr,
            data_type,
            try_cast,
            ..
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
        ScalarExpr::InList { expr, list, .. } => {
            let value = evaluate(expr, batch, ctx)?;
            if n == 0 {
                return Ok(Arc::new(BooleanArray::from(Vec::<bool>::new())));
            }
            // The items are constants: computed once on one row, then looked up.
            let one_row = batch.slice(0, 1);
            let items = list
                .iter()
                .map(|item| evaluate(item, &one_row, ctx))
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<&dyn Array> = items.iter().map(|i| i.as_ref()).collect();
            let items = concat(&refs).map_err(internal)?;
            in_list(&value, &items)
        }
        ScalarExpr::Case {
            branches,
            otherwise,
            data_type,
            ..
        } => {
            let safe = branches
                .iter()
                .all(|(c, r)| cannot_fail(c) && cannot_fail(r))
                && otherwise.as_deref().is_none_or(cannot_fail);
            if safe {
                evaluate_case_whole(branches, otherwise.as_deref(), data_type, batch, ctx)
            } else {
                evaluate_case_lazily(branches, otherwise.as_deref(), data_type, batch, ctx)
            }
        }
    }
}

fn is_logic(function: &FunctionDef) -> bool {
    matches!(function.name, "AND" | "OR")
}

/// A CASE whose operands cannot fail: every operand over the whole batch, then the values
/// picked from the last branch to the first.
fn evaluate_case_whole(
    branches: &[(ScalarExpr, ScalarExpr)],
    otherwise: Option<&ScalarExpr>,
    data_type: &DataType,
    batch: &RecordBatch,
    ctx: &EvalContext,
) -> Result<ArrayRef, EvalError> {
    let mut result = match otherwise {
        Some(e) => evaluate(e, batch, ctx)?,
        None => new_null_array(&data_type.to_arrow(), batch.num_rows()),
    };
    for (condition, value) in branches.iter().rev() {
        let mask = evaluate(condition, batch, ctx)?;
        let mask = true_mask(as_condition(&mask, "a CASE condition")?);
        let value = evaluate(value, batch, ctx)?;
        result = zip(&mask, &value, &result).map_err(internal)?;
    }
    Ok(result)
}

/// A CASE evaluated as Flink runs it: each condition on the rows no earlier condition took,
/// each value on the rows its condition took, the ELSE on the rows left.
fn evaluate_case_lazily(
    branches: &[(ScalarExpr, ScalarExpr)],
    otherwise: Option<&ScalarExpr>,
    data_type: &DataType,
    batch: &RecordBatch,
    ctx: &EvalContext,
) -> Result<ArrayRef, EvalError> {
    let n = batch.num_rows();
    // The values computed so far, and for each row the (value, index in it) it takes.
    let mut pieces: Vec<ArrayRef> = Vec::new();
    let mut picks: Vec<(usize, usize)> = vec![(0, 0); n];
    let mut take = |rows: &BooleanArray, value: ArrayRef, pieces: &mut Vec<ArrayRef>| {
        for (k, row) in rows.values().set_indices().enumerate() {
            picks[row] = (pieces.len(), k);
        }
        pieces.push(value);
    };
    // The rows no condition has taken yet.
    let mut pending = BooleanArray::from(vec![true; n]);
    for (condition, value) in branches {
        if pending.true_count() == 0 {
            break;
        }
        let test = evaluate_on(condition, batch, &pending, ctx)?;
        let test = true_mask(as_condition(&test, "a CASE condition")?);
        let taken = spread_mask(&pending, &test);
        if taken.true_count() > 0 {
            let value = evaluate_on(value, batch, &taken, ctx)?;
            take(&taken, value, &mut pieces);
        }
        pending = and_not(&pending, &taken).map_err(internal)?;
    }
    let left = pending.true_count();
    if left > 0 {
        let value = match otherwise {
            Some(e) => evaluate_on(e, batch, &pending, ctx)?,
            None => new_null_array(&data_type.to_arrow(), left),
        };
        take(&pending, value, &mut pieces);
    }
    if pieces.len() == 1 {
        return Ok(pieces.remove(0));
    }
    if pieces.is_empty() {
        return Ok(new_null_array(&data_type.to_arrow(), 0));
    }
    let refs: Vec<&dyn Array> = pieces.iter().map(|p| p.as_ref()).collect();
    interleave(&refs, &picks).map_err(internal)
}

/// `a AND b AND …` (or OR) with three-valued logic, each operand evaluated only on the rows
/// the operands before it left open: not yet FALSE for AND, not yet TRUE for OR.
fn evaluate_logic(
    is_and: bool,
    args: &[ScalarExpr],
    batch: &RecordBatch,
    ctx: &EvalContext,
) -> Result<ArrayRef, EvalError> {
    let what = if is_and {
        "an AND operand"
    } else {
        "an OR operand"
    };
    let Some((first, rest)) = args.split_first() else {
        return Err(EvalError::Internal(format!("{what} is missing")));
    };
    let first = evaluate(first, batch, ctx)?;
    let mut result = as_condition(&first, what)?.clone();
    for arg in rest {
        let next = if cannot_fail(arg) {
            evaluate(arg, batch, ctx)?
        } else {
            // A row is decided once it holds the dominating value (FALSE for AND).
            let dominating = if is_and {
                !result.values()
            } else {
                result.values().clone()
            };
            let decided = match result.nulls() {
                Some(valid) => &dominating & valid.inner(),
                None => dominating,
            };
            let open = BooleanArray::new(!&decided, None);
            match open.true_count() {
                0 => break,
                k if k == batch.num_rows() => evaluate(arg, batch, ctx)?,
                // The rows not evaluated get NULL, which the dominating value absorbs.
                _ => {
                    let sub = evaluate_on(arg, batch, &open, ctx)?;
                    Arc::new(spread_booleans(as_condition(&sub, what)?, &open))
                }
            }
        };
        let next = as_condition(&next, what)?;
        result = if is_and {
            and_kleene(&result, next)
        } else {
            or_kleene(&result, next)
        }
        .map_err(internal)?;
    }
    Ok(Arc::new(result))
}

/// `expr` evaluated on the rows of `batch` that `rows` selects, in order: an array of
/// `rows.true_count()` values.
fn evaluate_on(
    expr: &ScalarExpr,
    batch: &RecordBatch,
    rows: &BooleanArray,
    ctx: &EvalContext,
) -> Result<ArrayRef, EvalError> {
    let k = rows.true_count();
    if k == batch.num_rows() {
        return evaluate(expr, batch, ctx);
    }
    // Only the columns the expression reads are filtered; the others keep their place with
    // a zero-copy slice of the right length that nothing reads.
    let mut read = vec![false; batch.num_columns()];
    columns_read(expr, &mut read);
    let columns = batch
        .columns()
        .iter()
        .zip(&read)
        .map(|(c, &used)| {
            if used {
                filter(c.as_ref(), rows).map_err(internal)
            } else {
                Ok(c.slice(0, k))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let subset = batch_with_rows(batch.schema(), columns, k).map_err(internal)?;
    evaluate(expr, &subset, ctx)
}

/// Marks the input columns `expr` reads.
fn columns_read(expr: &ScalarExpr, read: &mut [bool]) {
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        if let ScalarExpr::Column { index, .. } = e
            && let Some(r) = read.get_mut(*index)
        {
            *r = true;
        }
        stack.extend(e.children());
    }
}

/// A mask over the whole batch from one over the rows `within` selects: TRUE where `within`
/// and `sub` both are, FALSE elsewhere.
fn spread_mask(within: &BooleanArray, sub: &BooleanArray) -> BooleanArray {
    let mut bits = BooleanBufferBuilder::new(within.len());
    bits.append_n(within.len(), false);
    for (k, row) in within.values().set_indices().enumerate() {
        if sub.value(k) {
            bits.set_bit(row, true);
        }
    }
    BooleanArray::new(bits.finish(), None)
}

/// Booleans computed on the rows `rows` selects, placed back at those rows, NULL elsewhere.
fn spread_booleans(values: &BooleanArray, rows: &BooleanArray) -> BooleanArray {
    let n = rows.len();
    let mut bits = BooleanBufferBuilder::new(n);
    bits.append_n(n, false);
    let mut valid = BooleanBufferBuilder::new(n);
    valid.append_n(n, false);
    for (k, row) in rows.values().set_indices().enumerate() {
        if values.is_valid(k) {
            valid.set_bit(row, true);
            bits.set_bit(row, values.value(k));
        }
    }
    BooleanArray::new(
        bits.finish(),
        Some(arrow_buffer::NullBuffer::new(valid.finish())),
    )
}

fn as_condition<'a>(array: &'a ArrayRef, what: &str) -> Result<&'a BooleanArray, EvalError> {
    array.as_boolean_opt().ok_or_else(|| {
        EvalError::Internal(format!(
            "{what} evaluated to {}, not BOOLEAN",
            array.data_type()
        ))
    })
}

fn internal(e: impl std::fmt::Display) -> EvalError {
    EvalError::Internal(e.to_string())
}

/// Whether evaluating `expr` can never fail, so that it may run on rows a CASE branch or a
/// logical operator would not have let through. Conservative: what is not known to be safe
/// is evaluated lazily, which gives the same result, only slower.
fn cannot_fail(expr: &ScalarExpr) -> bool {
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        let safe = match e {
            ScalarExpr::Column { .. }
            | ScalarExpr::Literal { .. }
            | ScalarExpr::Field { .. }
            | ScalarExpr::InList { .. }
            | ScalarExpr::Case { .. } => true,
            ScalarExpr::Cast {
                expr,
                data_type,
                try_cast,
                ..
            } => *try_cast || widening(expr.data_type(), data_type),
            ScalarExpr::Call {
                function,
                data_type,
                ..
            } => infallible_call(function.name, data_type),
        };
        if !safe {
            return false;
        }
        stack.extend(e.children());
    }
    true
}

/// Comparisons, logic, NULL tests, GREATEST/LEAST, concatenation, and arithmetic other than
/// division on numbers (integers wrap, DECIMAL overflow is NULL, floating point saturates).
fn infallible_call(name: &str, result: &DataType) -> bool {
    match name {
        "="
        | "<>"
        | "<"
        | "<="
        | ">"
        | ">="
        | "IS DISTINCT FROM"
        | "IS NOT DISTINCT FROM"
        | "AND"
        | "OR"
        | "NOT"
        | "IS NULL"
        | "IS NOT NULL"
        | "IS TRUE"
        | "IS NOT TRUE"
        | "IS FALSE"
        | "IS NOT FALSE"
        | "GREATEST"
        | "LEAST"
        | "||" => true,
        "+" | "-" | "*" | "NEGATE" => result.is_numeric(),
        _ => false,
    }
}

/// A cast that only widens a number: every value has an image, so it cannot fail.
fn widening(from: &DataType, to: &DataType) -> bool {
    use TypeKind::*;
    let rank = |k: &TypeKind| match k {
        TinyInt => Some(1),
        SmallInt => Some(2),
        Int => Some(3),
        BigInt => Some(4),
        _ => None,
    };
    match (&from.kind, &to.kind) {
        (f, Float | Double) => f.is_integer() || matches!(f, Float | Double),
        (f, t) => matches!((rank(f), rank(t)), (Some(a), Some(b)) if a <= b),
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
        // An integer literal typed as its FLOAT or DOUBLE operand's (a CASE branch).
        (Value::Int(v), TypeKind::Float) => fill!(Float32Builder, *v as f32),
        (Value::Int(v), TypeKind::Double) => fill!(Float64Builder, *v as f64),
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
        (Value::IntervalMonths(v, _), TypeKind::IntervalYearMonth) => {
            fill!(IntervalYearMonthBuilder, *v)
        }
        (Value::IntervalMillis(v, _), TypeKind::IntervalDayTime) => {
            fill!(DurationMillisecondBuilder, *v)
        }
        _ => return Err(mismatch()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::function::lookup;
    use arrow_array::Int32Array;
    use arrow_schema::{Field, Schema};

    fn int(nullable: bool) -> DataType {
        DataType {
            kind: TypeKind::Int,
            nullable,
        }
    }

    fn boolean() -> DataType {
        DataType::nullable(TypeKind::Boolean)
    }

    fn column(index: usize) -> ScalarExpr {
        ScalarExpr::Column {
            index,
            data_type: int(true),
        }
    }

    fn literal(v: i64) -> ScalarExpr {
        ScalarExpr::Literal {
            value: Value::Int(v),
            data_type: int(false),
        }
    }

    fn call(name: &str, args: Vec<ScalarExpr>, data_type: DataType) -> ScalarExpr {
        ScalarExpr::Call {
            function: lookup(name).expect("a built-in"),
            args,
            data_type,
        }
    }

    /// A batch of one nullable INT column `a` and one unread INT column.
    fn batch(values: Vec<Option<i32>>) -> RecordBatch {
        let n = values.len();
        let schema = Schema::new(vec![
            Field::new("a", arrow_schema::DataType::Int32, true),
            Field::new("unread", arrow_schema::DataType::Int32, false),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int32Array::from(values)),
                Arc::new(Int32Array::from(vec![7; n])),
            ],
        )
        .unwrap()
    }

    fn ints(a: &ArrayRef) -> Vec<Option<i32>> {
        a.as_primitive::<arrow_array::types::Int32Type>()
            .iter()
            .collect()
    }

    fn bools(a: &ArrayRef) -> Vec<Option<bool>> {
        a.as_boolean().iter().collect()
    }

    /// `CASE WHEN a = 0 THEN -1 WHEN a < 0 THEN a ELSE 100 / a END`, zeros spread over a batch
    /// larger than a source's.
    #[test]
    fn case_divides_only_the_rows_of_its_branch() {
        let values: Vec<Option<i32>> = (0..20_000)
            .map(|i| if i % 11 == 3 { None } else { Some(i % 7 - 2) })
            .collect();
        let expr = ScalarExpr::Case {
            branches: vec![
                (
                    call("=", vec![column(0), literal(0)], boolean()),
                    literal(-1),
                ),
                (call("<", vec![column(0), literal(0)], boolean()), column(0)),
            ],
            otherwise: Some(Box::new(call(
                "/",
                vec![literal(100), column(0)],
                int(true),
            ))),
            data_type: int(true),
            written_as_if: false,
        };
        let out = evaluate(&expr, &batch(values.clone()), &EvalContext::for_tests(0)).unwrap();
        let expected: Vec<Option<i32>> = values
            .iter()
            .map(|v| match v {
                None => None,
                Some(0) => Some(-1),
                Some(x) if *x < 0 => Some(*x),
                Some(x) => Some(100 / x),
            })
            .collect();
        assert_eq!(ints(&out), expected);
    }

    #[test]
    fn and_or_skip_the_rows_already_decided() {
        let values = vec![Some(0), None, Some(5), Some(0), Some(-5)];
        let divides = call(
            ">",
            vec![
                call("/", vec![literal(10), column(0)], int(true)),
                literal(0),
            ],
            boolean(),
        );
        let nonzero = call("<>", vec![column(0), literal(0)], boolean());
        let and = call("AND", vec![nonzero.clone(), divides.clone()], boolean());
        let out = evaluate(&and, &batch(values.clone()), &EvalContext::for_tests(0)).unwrap();
        assert_eq!(
            bools(&out),
            vec![Some(false), None, Some(true), Some(false), Some(false)]
        );
        let zero = call("=", vec![column(0), literal(0)], boolean());
        let or = call("OR", vec![zero, divides.clone()], boolean());
        let out = evaluate(&or, &batch(values.clone()), &EvalContext::for_tests(0)).unwrap();
        assert_eq!(
            bools(&out),
            vec![Some(true), None, Some(true), Some(true), Some(false)]
        );
        // Written the other way round, the division sees the zeros.
        let reversed = call("AND", vec![divides, nonzero], boolean());
        let err = evaluate(&reversed, &batch(values), &EvalContext::for_tests(0)).unwrap_err();
        assert_eq!(err, EvalError::Invalid("/ by zero".into()));
    }

    #[test]
    fn lazy_operands_on_an_empty_batch() {
        let expr = ScalarExpr::Case {
            branches: vec![(
                call("=", vec![column(0), literal(0)], boolean()),
                call("/", vec![literal(1), column(0)], int(true)),
            )],
            otherwise: None,
            data_type: int(true),
            written_as_if: false,
        };
        let out = evaluate(&expr, &batch(vec![]), &EvalContext::for_tests(0)).unwrap();
        assert_eq!(out.len(), 0);
    }

    #[test]
    fn in_list_is_three_valued() {
        let items = vec![literal(1), literal(3)];
        let list = |items: Vec<ScalarExpr>| ScalarExpr::InList {
            expr: Box::new(column(0)),
            list: items,
            data_type: boolean(),
        };
        let values = vec![Some(1), Some(2), None, Some(3)];
        let out = evaluate(
            &list(items.clone()),
            &batch(values.clone()),
            &EvalContext::for_tests(0),
        );
        assert_eq!(
            bools(&out.unwrap()),
            vec![Some(true), Some(false), None, Some(true)]
        );
        let mut with_null = items;
        with_null.push(ScalarExpr::Literal {
            value: Value::Null,
            data_type: int(true),
        });
        let out = evaluate(&list(with_null), &batch(values), &EvalContext::for_tests(0));
        assert_eq!(
            bools(&out.unwrap()),
            vec![Some(true), None, None, Some(true)]
        );
    }
}
