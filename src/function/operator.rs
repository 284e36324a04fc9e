//! SQL operators: comparison, three-valued logic, NULL tests and arithmetic.
//!
//! Integer arithmetic wraps on overflow, as Flink's generated Java code does; DECIMAL
//! arithmetic is exact at the result scale Flink derives and gives NULL when the result does
//! not fit its precision (Flink's `DecimalData` overflow rule).

use std::sync::Arc;

use arrow_arith::boolean::{and_kleene, is_not_null, is_null, not, or_kleene};
use arrow_arith::numeric;
use arrow_array::builder::{BooleanBuilder, Decimal128Builder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Int8Type, Int16Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, BooleanArray, PrimitiveArray};
use arrow_buffer::i256;
use arrow_ord::cmp;

use super::{EvalContext, EvalError, FunctionDef, Signature};
use crate::types::coercion::{arithmetic_kind, as_decimal};
use crate::types::decimal::{pow10_saturating, remainder, rescale};
use crate::types::{DataType, TypeKind};

pub const FUNCTIONS: &[FunctionDef] = &[
    def!("=", resolve_comparison, eq),
    def!("<>", resolve_comparison, neq),
    def!("<", resolve_comparison, lt),
    def!("<=", resolve_comparison, lt_eq),
    def!(">", resolve_comparison, gt),
    def!(">=", resolve_comparison, gt_eq),
    def!("IS DISTINCT FROM", resolve_distinct, distinct),
    def!("IS NOT DISTINCT FROM", resolve_distinct, not_distinct),
    def!("AND", resolve_logic, and),
    def!("OR", resolve_logic, or),
    def!("NOT", resolve_logic, negate),
    def!("IS NULL", resolve_null_test, null_test),
    def!("IS NOT NULL", resolve_null_test, not_null_test),
    def!("IS TRUE", resolve_truth_test, is_true),
    def!("IS NOT TRUE", resolve_truth_test, is_not_true),
    def!("IS FALSE", resolve_truth_test, is_false),
    def!("IS NOT FALSE", resolve_truth_test, is_not_false),
    def!("+", |a| resolve_arithmetic("+", a), add),
    def!("-", |a| resolve_arithmetic("-", a), sub),
    def!("*", |a| resolve_arithmetic("*", a), mul),
    def!("/", |a| resolve_arithmetic("/", a), div),
    def!("%", |a| resolve_arithmetic("%", a), rem),
    def!("NEGATE", resolve_negate, negate_number),
    def!("COALESCE", resolve_coalesce, coalesce),
    def!("IFNULL", resolve_coalesce, coalesce),
    def!("GREATEST", resolve_extreme, greatest),
    def!("LEAST", resolve_extreme, least),
];

fn boolean(nullable: bool) -> DataType {
    DataType {
        kind: TypeKind::Boolean,
        nullable,
    }
}

fn comparable(kind: &TypeKind) -> bool {
    !matches!(
        kind,
        TypeKind::Array(_) | TypeKind::Map(..) | TypeKind::Row(_)
    )
}

fn resolve_comparison(args: &[DataType]) -> Result<Signature, String> {
    let [a, b] = args else {
        return Err("expects 2 operands".into());
    };
    let common = crate::types::coercion::comparison_type(a, b)
        .filter(|t| comparable(&t.kind))
        .ok_or_else(|| format!("cannot compare {} with {}", a.kind, b.kind))?;
    Ok(Signature::new(
        vec![
            common.with_nullable(a.nullable),
            common.with_nullable(b.nullable),
        ],
        boolean(a.nullable || b.nullable),
    ))
}

/// GREATEST / LEAST: the arguments' common type; NULL when any argument is.
fn resolve_extreme(args: &[DataType]) -> Result<Signature, String> {
    if args.is_empty() {
        return Err("expects at least one argument".into());
    }
    let common = crate::types::coercion::common_type_of(args)
        .filter(|t| comparable(&t.kind) && t.kind != TypeKind::Null)
        .ok_or_else(|| {
            let shown: Vec<String> = args.iter().map(|a| a.kind.to_string()).collect();
            format!("cannot compare {}", shown.join(" with "))
        })?;
    Ok(Signature::new(
        args.iter()
            .map(|a| common.with_nullable(a.nullable))
            .collect(),
        common,
    ))
}

/// Column-wise maximum (or minimum) of the arguments, NULL where any is NULL.
fn extreme(args: &[ArrayRef], greater: bool) -> Result<ArrayRef, EvalError> {
    let mut result = args[0].clone();
    for next in &args[1..] {
        let better = if greater {
            cmp::gt(next, &result)
        } else {
            cmp::lt(next, &result)
        }
        .map_err(err)?;
        result = arrow_select::zip::zip(&better, next, &result).map_err(err)?;
    }
    let nulls = args.iter().fold(None, |acc, a| {
        arrow_buffer::NullBuffer::union(acc.as_ref(), a.nulls())
    });
    let data = result.into_data().into_builder().nulls(nulls);
    Ok(arrow_array::make_array(data.build().map_err(err)?))
}

fn greatest(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    extreme(a, true)
}

fn least(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    extreme(a, false)
}

/// COALESCE / IFNULL: the arguments' common type, NULL only when every argument can be
/// (Calcite's COALESCE). Unlike CASE, Flink evaluates every argument on every row (a
/// division by zero in a later argument fails even where an earlier one is not NULL).
fn resolve_coalesce(args: &[DataType]) -> Result<Signature, String> {
    let common = crate::types::coercion::common_type_of(args).ok_or_else(|| {
        let shown: Vec<String> = args.iter().map(|a| a.kind.to_string()).collect();
        format!("the arguments have no common type: {}", shown.join(", "))
    })?;
    let nullable = args.iter().all(|a| a.nullable);
    Ok(Signature::new(
        args.iter()
            .map(|a| common.with_nullable(a.nullable))
            .collect(),
        common.with_nullable(nullable),
    ))
}

/// The first non-NULL argument of each row.
fn coalesce(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let Some((last, rest)) = args.split_last() else {
        return Err(EvalError::Internal("COALESCE without arguments".into()));
    };
    let mut result = last.clone();
    for arg in rest.iter().rev() {
        if arg.null_count() == 0 {
            result = arg.clone();
            continue;
        }
        let present = is_not_null(arg).map_err(err)?;
        result = arrow_select::zip::zip(&present, arg, &result).map_err(err)?;
    }
    Ok(result)
}

/// `value IN (items)` for a column of values and the list's items (of the same type, the
/// constants of the list): TRUE where one item equals the value, else NULL where the value or
/// an item is NULL, else FALSE. Long lists are looked up in a hash set rather than compared
/// one by one.
pub fn in_list(value: &ArrayRef, items: &ArrayRef) -> Result<ArrayRef, EvalError> {
    use arrow_array::types::*;
    use arrow_schema::{DataType as Arrow, IntervalUnit, TimeUnit};
    let found = match value.data_type() {
        Arrow::Int8 => found_in_set::<Int8Type>(value, items),
        Arrow::Int16 => found_in_set::<Int16Type>(value, items),
        Arrow::Int32 => found_in_set::<Int32Type>(value, items),
        Arrow::Int64 => found_in_set::<Int64Type>(value, items),
        Arrow::Date32 => found_in_set::<Date32Type>(value, items),
        Arrow::Time64(TimeUnit::Nanosecond) => found_in_set::<Time64NanosecondType>(value, items),
        Arrow::Timestamp(TimeUnit::Nanosecond, _) => {
            found_in_set::<TimestampNanosecondType>(value, items)
        }
        Arrow::Decimal128(..) => found_in_set::<Decimal128Type>(value, items),
        Arrow::Interval(IntervalUnit::YearMonth) => {
            found_in_set::<IntervalYearMonthType>(value, items)
        }
        Arrow::Duration(TimeUnit::Millisecond) => {
            found_in_set::<DurationMillisecondType>(value, items)
        }
        Arrow::Utf8 => {
            let set: std::collections::HashSet<&str> =
                items.as_string::<i32>().iter().flatten().collect();
            let v = value.as_string::<i32>();
            (0..v.len()).map(|i| set.contains(v.value(i))).collect()
        }
        Arrow::Binary => {
            let set: std::collections::HashSet<&[u8]> =
                items.as_binary::<i32>().iter().flatten().collect();
            let v = value.as_binary::<i32>();
            (0..v.len()).map(|i| set.contains(v.value(i))).collect()
        }
        // The other types (floating point, BOOLEAN, nested) compare item by item, with `=`'s
        // own kernel.
        _ => {
            let mut found = vec![false; value.len()];
            for k in (0..items.len()).filter(|k| items.is_valid(*k)) {
                let item = arrow_array::Scalar::new(items.slice(k, 1));
                let equal = cmp::eq(value, &item).map_err(err)?;
                for (f, e) in found.iter_mut().zip(equal.values().iter()) {
                    *f |= e;
                }
            }
            found
        }
    };
    let list_has_null = items.null_count() > 0;
    let result: BooleanArray = found
        .iter()
        .enumerate()
        .map(|(i, &hit)| {
            if value.is_null(i) {
                None
            } else if hit {
                Some(true)
            } else if list_has_null {
                None
            } else {
                Some(false)
            }
        })
        .collect();
    boxed(result)
}

/// For each value (NULL or not), whether the items hold it.
fn found_in_set<T: arrow_array::ArrowPrimitiveType>(value: &ArrayRef, items: &ArrayRef) -> Vec<bool>
where
    T::Native: std::hash::Hash + Eq,
{
    let set: std::collections::HashSet<T::Native> =
        items.as_primitive::<T>().iter().flatten().collect();
    value
        .as_primitive::<T>()
        .values()
        .iter()
        .map(|v| set.contains(v))
        .collect()
}

fn resolve_distinct(args: &[DataType]) -> Result<Signature, String> {
    let sig = resolve_comparison(args)?;
    Ok(Signature::new(sig.args, boolean(false)))
}

fn resolve_logic(args: &[DataType]) -> Result<Signature, String> {
    for a in args {
        if !matches!(a.kind, TypeKind::Boolean | TypeKind::Null) {
            return Err(format!("expects BOOLEAN operands, got {}", a.kind));
        }
    }
    let nullable = args.iter().any(|a| a.nullable);
    Ok(Signature::new(
        args.iter().map(|a| boolean(a.nullable)).collect(),
        boolean(nullable),
    ))
}

fn resolve_null_test(args: &[DataType]) -> Result<Signature, String> {
    let [a] = args else {
        return Err("expects 1 operand".into());
    };
    Ok(Signature::new(vec![a.clone()], boolean(false)))
}

fn resolve_truth_test(args: &[DataType]) -> Result<Signature, String> {
    let sig = resolve_logic(args)?;
    Ok(Signature::new(sig.args, boolean(false)))
}

/// Numbers with numbers; TIMESTAMP/DATE ± INTERVAL; INTERVAL ± INTERVAL.
fn resolve_arithmetic(op: &str, args: &[DataType]) -> Result<Signature, String> {
    let [a, b] = args else {
        return Err("expects 2 operands".into());
    };
    let approximate = |t: &DataType| matches!(t.kind, TypeKind::Float | TypeKind::Double);
    if op == "%" && (approximate(a) || approximate(b)) {
        return Err("Supported form(s): '<EXACT_NUMERIC> % <EXACT_NUMERIC>'".into());
    }
    arith_sig(op, a, b, a.nullable || b.nullable)
}

fn arith_sig(op: &str, a: &DataType, b: &DataType, nullable: bool) -> Result<Signature, String> {
    use TypeKind::*;
    let temporal = match (&a.kind, &b.kind) {
        (Timestamp(_) | TimestampLtz(_) | Date | Time(_), IntervalDayTime | IntervalYearMonth)
            if op == "+" || op == "-" =>
        {
            Some(a.kind.clone())
        }
        (IntervalDayTime | IntervalYearMonth, Timestamp(_) | TimestampLtz(_) | Date | Time(_))
            if op == "+" =>
        {
            return Err("write the interval on the right: ts + INTERVAL …".into());
        }
        (IntervalDayTime, IntervalDayTime) | (IntervalYearMonth, IntervalYearMonth)
            if op == "+" || op == "-" =>
        {
            Some(a.kind.clone())
        }
        // An interval times a whole number, either way round (the number as BIGINT).
        (IntervalDayTime | IntervalYearMonth, k) if op == "*" && k.is_integer() => {
            let count = DataType {
                kind: BigInt,
                nullable: b.nullable,
            };
            return Ok(Signature::new(
                vec![a.clone(), count],
                DataType {
                    kind: a.kind.clone(),
                    nullable,
                },
            ));
        }
        (k, IntervalDayTime | IntervalYearMonth) if op == "*" && k.is_integer() => {
            let count = DataType {
                kind: BigInt,
                nullable: a.nullable,
            };
            return Ok(Signature::new(
                vec![count, b.clone()],
                DataType {
                    kind: b.kind.clone(),
                    nullable,
                },
            ));
        }
        _ => None,
    };
    if let Some(kind) = temporal {
        return Ok(Signature::new(
            vec![a.clone(), b.clone()],
            DataType { kind, nullable },
        ));
    }
    let kind = arithmetic_kind(op, &a.kind, &b.kind)
        .ok_or_else(|| format!("cannot apply '{op}' to {} and {}", a.kind, b.kind))?;
    let operand = |t: &DataType| match (&kind, &t.kind) {
        (Decimal { .. }, k) if k.is_integer() => {
            let (p, s) = as_decimal(k).unwrap_or((19, 0));
            DataType {
                kind: Decimal {
                    precision: p,
                    scale: s,
                },
                nullable: t.nullable,
            }
        }
        (Decimal { .. }, _) => t.clone(),
        _ => DataType {
            kind: kind.clone(),
            nullable: t.nullable,
        },
    };
    // DECIMAL division by zero and overflow give NULL in Flink, yet the type stays NOT NULL
    // for NOT NULL operands, as Flink derives it.
    Ok(Signature::new(
        vec![operand(a), operand(b)],
        DataType { kind, nullable },
    ))
}

fn resolve_negate(args: &[DataType]) -> Result<Signature, String> {
    let [a] = args else {
        return Err("expects 1 operand".into());
    };
    if !a.is_numeric()
        && !matches!(
            a.kind,
            TypeKind::IntervalDayTime | TypeKind::IntervalYearMonth
        )
    {
        return Err(format!("cannot negate {}", a.kind));
    }
    Ok(Signature::new(vec![a.clone()], a.clone()))
}

fn err(e: impl std::fmt::Display) -> EvalError {
    EvalError::Internal(e.to_string())
}

fn boxed(b: BooleanArray) -> Result<ArrayRef, EvalError> {
    Ok(Arc::new(b))
}

fn eq(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    boxed(cmp::eq(&a[0], &a[1]).map_err(err)?)
}
fn neq(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    boxed(cmp::neq(&a[0], &a[1]).map_err(err)?)
}
fn lt(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    boxed(cmp::lt(&a[0], &a[1]).map_err(err)?)
}
fn lt_eq(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    boxed(cmp::lt_eq(&a[0], &a[1]).map_err(err)?)
}
fn gt(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    boxed(cmp::gt(&a[0], &a[1]).map_err(err)?)
}
fn gt_eq(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    boxed(cmp::gt_eq(&a[0], &a[1]).map_err(err)?)
}
fn distinct(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    boxed(cmp::distinct(&a[0], &a[1]).map_err(err)?)
}
fn not_distinct(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    boxed(cmp::not_distinct(&a[0], &a[1]).map_err(err)?)
}
/// `a AND b AND …` over operands evaluated in full (the executor evaluates them lazily,
/// `exec/eval.rs`; this is the same logic for callers holding every operand).
fn and(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    fold_logic(a, and_kleene)
}
fn or(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    fold_logic(a, or_kleene)
}

fn fold_logic(
    args: &[ArrayRef],
    op: fn(&BooleanArray, &BooleanArray) -> Result<BooleanArray, arrow_schema::ArrowError>,
) -> Result<ArrayRef, EvalError> {
    let Some((first, rest)) = args.split_first() else {
        return Err(EvalError::Internal(
            "a logical operator without operands".into(),
        ));
    };
    let mut acc = first.as_boolean().clone();
    for next in rest {
        acc = op(&acc, next.as_boolean()).map_err(err)?;
    }
    boxed(acc)
}
fn negate(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    boxed(not(a[0].as_boolean()).map_err(err)?)
}
fn null_test(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    boxed(is_null(&a[0]).map_err(err)?)
}
fn not_null_test(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    boxed(is_not_null(&a[0]).map_err(err)?)
}

fn truth(a: &ArrayRef, f: impl Fn(Option<bool>) -> bool) -> Result<ArrayRef, EvalError> {
    let b = a.as_boolean();
    let mut out = BooleanBuilder::with_capacity(b.len());
    for v in b.iter() {
        out.append_value(f(v));
    }
    boxed(out.finish())
}
fn is_true(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    truth(&a[0], |v| v == Some(true))
}
fn is_not_true(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    truth(&a[0], |v| v != Some(true))
}
fn is_false(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    truth(&a[0], |v| v == Some(false))
}
fn is_not_false(a: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    truth(&a[0], |v| v != Some(false))
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

fn add(a: &[ArrayRef], ctx: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    arithmetic(Op::Add, a, ctx, t)
}
fn sub(a: &[ArrayRef], ctx: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    arithmetic(Op::Sub, a, ctx, t)
}
fn mul(a: &[ArrayRef], ctx: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    arithmetic(Op::Mul, a, ctx, t)
}
fn div(a: &[ArrayRef], ctx: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    arithmetic(Op::Div, a, ctx, t)
}
fn rem(a: &[ArrayRef], ctx: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    arithmetic(Op::Rem, a, ctx, t)
}

fn arithmetic(
    op: Op,
    args: &[ArrayRef],
    ctx: &EvalContext,
    result: &DataType,
) -> Result<ArrayRef, EvalError> {
    let (l, r) = (&args[0], &args[1]);
    match &result.kind {
        TypeKind::Decimal { precision, scale } => decimal_arithmetic(op, l, r, *precision, *scale),
        TypeKind::Float | TypeKind::Double => {
            let dyn_op = match op {
                Op::Add => numeric::add(l, r),
                Op::Sub => numeric::sub(l, r),
                Op::Mul => numeric::mul(l, r),
                Op::Div => numeric::div(l, r),
                Op::Rem => numeric::rem(l, r),
            };
            dyn_op.map_err(err)
        }
        kind if kind.is_integer() => {
            if matches!(op, Op::Div | Op::Rem) && has_zero(r) {
                return Err(EvalError::Invalid("/ by zero".into()));
            }
            match op {
                Op::Add => numeric::add_wrapping(l, r),
                Op::Sub => numeric::sub_wrapping(l, r),
                Op::Mul => numeric::mul_wrapping(l, r),
                // Java's division wraps MIN / -1 (and its remainder is 0). A zero divisor
                // here sits under a NULL (valid zeros were refused above): its slot is NULL.
                Op::Div => wrapping_int(l, r, |x, y| if y == 0 { 0 } else { x.wrapping_div(y) }),
                Op::Rem => wrapping_int(l, r, |x, y| if y == 0 { 0 } else { x.wrapping_rem(y) }),
            }
            .map_err(err)
        }
        TypeKind::IntervalDayTime | TypeKind::IntervalYearMonth if op == Op::Mul => {
            super::temporal::interval_times(l, r, result)
        }
        _ => super::temporal::interval_arithmetic(op == Op::Sub, l, r, ctx, result),
    }
}

/// `f` over two integer columns of one type; `f` also sees the values under NULL slots.
fn wrapping_int(
    l: &ArrayRef,
    r: &ArrayRef,
    f: fn(i64, i64) -> i64,
) -> Result<ArrayRef, arrow_schema::ArrowError> {
    fn typed<T: arrow_array::ArrowPrimitiveType>(
        l: &ArrayRef,
        r: &ArrayRef,
        f: impl Fn(T::Native, T::Native) -> T::Native,
    ) -> Result<ArrayRef, arrow_schema::ArrowError> {
        let out: PrimitiveArray<T> =
            arrow_arith::arity::binary(l.as_primitive::<T>(), r.as_primitive::<T>(), f)?;
        Ok(Arc::new(out))
    }
    // Narrow types wrap at their own width: (byte) (-128 / -1) is -128.
    match l.data_type() {
        arrow_schema::DataType::Int8 => typed::<Int8Type>(l, r, |x, y| f(x.into(), y.into()) as i8),
        arrow_schema::DataType::Int16 => {
            typed::<Int16Type>(l, r, |x, y| f(x.into(), y.into()) as i16)
        }
        arrow_schema::DataType::Int32 => {
            typed::<Int32Type>(l, r, |x, y| f(x.into(), y.into()) as i32)
        }
        _ => typed::<Int64Type>(l, r, f),
    }
}

fn has_zero(a: &ArrayRef) -> bool {
    fn zero<T: arrow_array::ArrowPrimitiveType>(a: &ArrayRef) -> bool
    where
        T::Native: Default + PartialEq,
    {
        let p: &PrimitiveArray<T> = a.as_primitive();
        (0..p.len()).any(|i| p.is_valid(i) && p.value(i) == T::Native::default())
    }
    match a.data_type() {
        arrow_schema::DataType::Int8 => zero::<Int8Type>(a),
        arrow_schema::DataType::Int16 => zero::<Int16Type>(a),
        arrow_schema::DataType::Int32 => zero::<Int32Type>(a),
        arrow_schema::DataType::Int64 => zero::<Int64Type>(a),
        _ => false,
    }
}

fn decimal_arithmetic(
    op: Op,
    l: &ArrayRef,
    r: &ArrayRef,
    precision: u8,
    scale: u8,
) -> Result<ArrayRef, EvalError> {
    let (ls, rs) = (decimal_scale(l), decimal_scale(r));
    let la: &PrimitiveArray<Decimal128Type> = l.as_primitive();
    let ra: &PrimitiveArray<Decimal128Type> = r.as_primitive();
    let limit = pow10_saturating(precision as u32);
    let (ls, rs, scale) = (i32::from(ls), i32::from(rs), i32::from(scale));
    let mut out = Decimal128Builder::with_capacity(la.len());
    for i in 0..la.len() {
        if la.is_null(i) || ra.is_null(i) {
            out.append_null();
            continue;
        }
        let (x, y) = (la.value(i), ra.value(i));
        let value = match op {
            Op::Add | Op::Sub => {
                let (x, y) = (rescale(x, ls, scale), rescale(y, rs, scale));
                match (x, y) {
                    (Some(x), Some(y)) if op == Op::Add => x.checked_add(y),
                    (Some(x), Some(y)) => x.checked_sub(y),
                    _ => None,
                }
            }
            // Exact in 256 bits, then rounded to the result scale: a product of two
            // 38-digit values needs up to 76 digits before the scale is cut.
            Op::Mul => wide_rescale(
                i256::from_i128(x).wrapping_mul(i256::from_i128(y)),
                ls + rs,
                scale,
            ),
            Op::Div => {
                if y == 0 {
                    return Err(EvalError::Invalid("Division by zero".into()));
                } else {
                    // x / y at `scale`: (x * 10^(scale + rs - ls + 1)) / y, then round.
                    let shift = scale + rs - ls + 1;
                    let x = i256::from_i128(x);
                    let num = if shift >= 0 {
                        wide_pow10(shift).and_then(|p| x.checked_mul(p))
                    } else {
                        Some(wide_pow10(-shift).map_or(i256::ZERO, |p| x.wrapping_div(p)))
                    };
                    num.and_then(|n| n.checked_div(i256::from_i128(y)))
                        .and_then(|q| wide_rescale(q, scale + 1, scale))
                }
            }
            Op::Rem => {
                if y == 0 {
                    None
                } else {
                    remainder(x, ls, y, rs, scale)
                }
            }
        };
        match value {
            Some(v) if v.abs() < limit => out.append_value(v),
            _ => out.append_null(),
        }
    }
    let array = out
        .finish()
        .with_precision_and_scale(precision, scale as i8)
        .map_err(err)?;
    Ok(Arc::new(array))
}

fn wide_pow10(n: i32) -> Option<i256> {
    i256::from_i128(10).checked_pow(u32::try_from(n).ok()?)
}

/// A 256-bit value at scale `from` rounded HALF_UP to scale `to ≤ from`, if it fits an i128.
fn wide_rescale(v: i256, from: i32, to: i32) -> Option<i128> {
    if from <= to {
        return rescale(v.to_i128()?, from, to);
    }
    let Some(d) = wide_pow10(from - to) else {
        return Some(0);
    };
    let (q, r) = (v.wrapping_div(d), v.wrapping_rem(d));
    let twice = r.wrapping_abs().wrapping_mul(i256::from_i128(2));
    let q = if twice >= d {
        q.wrapping_add(if v.is_negative() {
            i256::MINUS_ONE
        } else {
            i256::ONE
        })
    } else {
        q
    };
    q.to_i128()
}

fn decimal_scale(a: &ArrayRef) -> u8 {
    match a.data_type() {
        arrow_schema::DataType::Decimal128(_, s) => (*s).max(0) as u8,
        _ => 0,
    }
}

fn negate_number(a: &[ArrayRef], _: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    match t.kind {
        TypeKind::Decimal { .. } | TypeKind::Float | TypeKind::Double => {
            numeric::neg(&a[0]).map_err(err)
        }
        _ => numeric::neg_wrapping(&a[0]).map_err(err),
    }
}
