//! CAST and TRY_CAST between Flink types. A value that cannot be converted fails the query
//! under CAST and becomes NULL under TRY_CAST (Flink ≥ 1.15 semantics). TIMESTAMP ↔
//! TIMESTAMP_LTZ goes through the session zone.

use std::sync::Arc;

use arrow_array::builder::*;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, StringArray, new_null_array};
use arrow_schema::DataType as ArrowType;

use super::{EvalContext, EvalError};
use crate::types::decimal::{pow10_saturating, rescale};
use crate::types::text::{fit_chars, format_column, parse_column, parse_decimal};
use crate::types::time::truncate_to_precision;
use crate::types::{DataType, NANOS_PER_DAY, TypeKind};

/// Whether Flink allows `CAST(from AS to)` at all (checked when binding).
pub fn can_cast(from: &TypeKind, to: &TypeKind) -> bool {
    use TypeKind::*;
    if from == to || *from == Null {
        return true;
    }
    let numeric_like = |k: &TypeKind| k.is_numeric() || *k == Boolean;
    match (from, to) {
        (f, t) if numeric_like(f) && numeric_like(t) => true,
        (f, t) if f.is_string() || t.is_string() => !matches!(f, Map(..) | Row(_)) || t.is_string(),
        (f, t) if f.is_binary() && t.is_binary() => true,
        (Timestamp(_) | TimestampLtz(_) | Date, Timestamp(_) | TimestampLtz(_) | Date) => true,
        (Timestamp(_) | TimestampLtz(_), Time(_)) => true,
        // TIME becomes that time of 1970-01-01.
        (Time(_), Timestamp(_) | TimestampLtz(_)) => true,
        (Time(_), Time(_)) => true,
        (f, TimestampLtz(_)) if f.is_integer() => false,
        (TimestampLtz(_), t) if t.is_numeric() => false,
        (Array(a), Array(b)) => can_cast(&a.kind, &b.kind),
        (Row(a), Row(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((_, x), (_, y))| can_cast(&x.kind, &y.kind))
        }
        (Map(ka, va), Map(kb, vb)) => can_cast(&ka.kind, &kb.kind) && can_cast(&va.kind, &vb.kind),
        _ => false,
    }
}

pub fn cast(
    array: &ArrayRef,
    from: &DataType,
    to: &DataType,
    ctx: &EvalContext,
    try_cast: bool,
) -> Result<ArrayRef, EvalError> {
    cast_in(array, from, to, ctx, try_cast, false)
}

/// `cast`; `nested`: the values are elements of an ARRAY, MAP or ROW being cast, which
/// Flink casts through its TimestampData (a TIMESTAMP to precision 0–2 drops the last digits
/// of its epoch milliseconds toward zero: 1969-12-31 23:59:59.4 becomes 1970-01-01 00:00:00,
/// where a TIMESTAMP alone is floored to 23:59:59).
fn cast_in(
    array: &ArrayRef,
    from: &DataType,
    to: &DataType,
    ctx: &EvalContext,
    try_cast: bool,
    nested: bool,
) -> Result<ArrayRef, EvalError> {
    if from.kind == to.kind {
        return Ok(array.clone());
    }
    if from.kind == TypeKind::Null
        || array.null_count() == array.len() && array.data_type() == &ArrowType::Null
    {
        return Ok(new_null_array(&to.to_arrow(), array.len()));
    }
    use TypeKind::*;
    let out: ArrayRef = match (&from.kind, &to.kind) {
        (f, t) if f.is_string() && t.is_string() => fit_length(array, t),
        (f, _) if f.is_string() => {
            let (parsed, errors) = parse_column(array.as_string::<i32>(), to, &ctx.zone);
            if let (false, Some((row, message))) = (try_cast, errors.first()) {
                let text = array.as_string::<i32>().value(*row);
                // The parser's message may already name the value and the type.
                return Err(EvalError::Invalid(if message.starts_with("cannot cast") {
                    message.clone()
                } else {
                    format!("cannot cast '{text}' to {}: {message}", to.kind)
                }));
            }
            parsed
        }
        (_, t) if t.is_string() => fit_length(
            &(Arc::new(format_column(array, from, &ctx.zone)) as ArrayRef),
            t,
        ),
        (f, t) if f.is_binary() && t.is_binary() => fit_binary_length(array, t),
        (Timestamp(_) | TimestampLtz(_) | Date, Timestamp(p) | TimestampLtz(p)) => {
            let ltz_out = matches!(to.kind, TimestampLtz(_));
            let n = array.len();
            let mut b = TimestampNanosecondBuilder::with_capacity(n);
            for i in 0..n {
                if array.is_null(i) {
                    b.append_null();
                    continue;
                }
                let (value, ltz_in) = match &from.kind {
                    Date => {
                        let days = i64::from(array.as_primitive::<Date32Type>().value(i));
                        match days.checked_mul(NANOS_PER_DAY) {
                            Some(nanos) => (nanos, false),
                            None if try_cast => {
                                b.append_null();
                                continue;
                            }
                            None => return Err(super::temporal::out_of_range()),
                        }
                    }
                    TimestampLtz(_) => (
                        array.as_primitive::<TimestampNanosecondType>().value(i),
                        true,
                    ),
                    _ => (
                        array.as_primitive::<TimestampNanosecondType>().value(i),
                        false,
                    ),
                };
                let converted = match (ltz_in, ltz_out) {
                    (false, true) => ctx.zone.from_local(value),
                    (true, false) => ctx.zone.to_local(value),
                    _ => value,
                };
                b.append_value(if nested && *p < 3 {
                    let unit = 10i64.pow(3 - u32::from(*p));
                    // Epoch milliseconds (floored, as TimestampData holds them), their last
                    // digits dropped toward zero.
                    converted.div_euclid(1_000_000) / unit * unit * 1_000_000
                } else {
                    truncate_to_precision(converted, *p)
                });
            }
            let out = b.finish();
            if ltz_out {
                Arc::new(out.with_timezone("UTC"))
            } else {
                Arc::new(out)
            }
        }
        (Timestamp(_) | TimestampLtz(_), Date | Time(_)) => {
            let ltz = matches!(from.kind, TimestampLtz(_));
            let ts = array.as_primitive::<TimestampNanosecondType>();
            let wall = |v: i64| if ltz { ctx.zone.to_local(v) } else { v };
            match &to.kind {
                Date => Arc::new(ts.unary_opt::<_, Date32Type>(|v| {
                    Some(wall(v).div_euclid(NANOS_PER_DAY) as i32)
                })),
                Time(p) => Arc::new(ts.unary_opt::<_, Time64NanosecondType>(|v| {
                    Some(truncate_to_precision(wall(v).rem_euclid(NANOS_PER_DAY), *p))
                })),
                _ => unreachable_kind(to)?,
            }
        }
        (Time(_), Timestamp(p) | TimestampLtz(p)) => {
            // The time of day on 1970-01-01, a wall-clock time in the session zone for LTZ.
            let ltz = matches!(to.kind, TimestampLtz(_));
            let time = array.as_primitive::<Time64NanosecondType>();
            let out = time.unary::<_, TimestampNanosecondType>(|v| {
                let wall = truncate_to_precision(v, *p);
                if ltz { ctx.zone.from_local(wall) } else { wall }
            });
            if ltz {
                Arc::new(out.with_timezone("UTC"))
            } else {
                Arc::new(out)
            }
        }
        // An integer cast to an interval is its internal count (see the binder's
        // `cast_to_interval`, which admits only integers here).
        (f, IntervalDayTime) if f.is_integer() => {
            let millis = numeric_cast(array, f, &BigInt, try_cast)?;
            Arc::new(
                millis
                    .as_primitive::<Int64Type>()
                    .unary::<_, DurationMillisecondType>(|v| v),
            )
        }
        (f, IntervalYearMonth) if f.is_integer() => {
            let months = numeric_cast(array, f, &Int, try_cast)?;
            Arc::new(
                months
                    .as_primitive::<Int32Type>()
                    .unary::<_, IntervalYearMonthType>(|v| v),
            )
        }
        (Time(_), Time(p)) => Arc::new(
            array
                .as_primitive::<Time64NanosecondType>()
                .unary::<_, Time64NanosecondType>(|v| truncate_to_precision(v, *p)),
        ),
        (f, t) if (f.is_numeric() || *f == Boolean) && (t.is_numeric() || *t == Boolean) => {
            numeric_cast(array, &from.kind, &to.kind, try_cast)?
        }
        (Row(from_fields), Row(to_fields)) if from_fields.len() == to_fields.len() => {
            // Cast field by field and keep the rows' nulls.
            let row = array.as_struct();
            let columns = row
                .columns()
                .iter()
                .zip(from_fields.iter().zip(to_fields))
                .map(|(c, ((_, f), (_, t)))| {
                    // Values under a NULL row are placeholders: null them so they cannot fail.
                    let c = match row.nulls() {
                        Some(parent) => {
                            let nulls = arrow_buffer::NullBuffer::union(Some(parent), c.nulls());
                            let data = c.to_data().into_builder().nulls(nulls).build();
                            arrow_array::make_array(
                                data.map_err(|e| EvalError::Internal(e.to_string()))?,
                            )
                        }
                        None => c.clone(),
                    };
                    cast_in(&c, f, t, ctx, try_cast, true)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let fields: Vec<_> = to_fields
                .iter()
                .map(|(name, t)| t.to_arrow_field(name))
                .collect();
            Arc::new(
                arrow_array::StructArray::try_new(fields.into(), columns, row.nulls().cloned())
                    .map_err(|e| EvalError::Invalid(format!("cannot cast to {}: {e}", to.kind)))?,
            )
        }
        (Map(from_key, from_value), Map(to_key, to_value)) => {
            // Cast keys and values as columns and keep the maps' shape.
            let map = array.as_map();
            let keys = cast_in(map.keys(), from_key, to_key, ctx, try_cast, true)?;
            let values = cast_in(map.values(), from_value, to_value, ctx, try_cast, true)?;
            let ArrowType::Map(entries, sorted) = to.to_arrow() else {
                return Err(EvalError::Internal(format!("MAP typed as {}", to.kind)));
            };
            let ArrowType::Struct(fields) = entries.data_type().clone() else {
                return Err(EvalError::Internal("MAP entries are not a struct".into()));
            };
            let invalid = |e: arrow_schema::ArrowError| {
                EvalError::Invalid(format!("cannot cast to {}: {e}", to.kind))
            };
            let entries_array = arrow_array::StructArray::try_new(fields, vec![keys, values], None)
                .map_err(invalid)?;
            Arc::new(
                arrow_array::MapArray::try_new(
                    entries,
                    map.offsets().clone(),
                    entries_array,
                    map.nulls().cloned(),
                    sorted,
                )
                .map_err(invalid)?,
            )
        }
        (Array(from_element), Array(to_element)) => {
            // Cast the elements as one column and keep the lists' shape.
            let list = array.as_list::<i32>();
            let values = cast_in(list.values(), from_element, to_element, ctx, try_cast, true)?;
            Arc::new(
                arrow_array::ListArray::try_new(
                    Arc::new(to_element.to_arrow_field("element")),
                    list.offsets().clone(),
                    values,
                    list.nulls().cloned(),
                )
                .map_err(|e| EvalError::Invalid(format!("cannot cast to {}: {e}", to.kind)))?,
            )
        }
        _ => {
            return Err(EvalError::Invalid(format!(
                "cannot cast {} to {}",
                from.kind, to.kind
            )));
        }
    };
    Ok(out)
}

/// The name Calcite gives a type in its messages (`INTEGER`, not `INT`).
pub fn calcite_type_name(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Int => "INTEGER".to_string(),
        TypeKind::VarChar(n) if *n == crate::types::MAX_LENGTH => {
            format!("VARCHAR({n})")
        }
        other => other.to_string(),
    }
}

fn unreachable_kind(to: &DataType) -> Result<ArrayRef, EvalError> {
    Err(EvalError::Internal(format!(
        "unexpected cast target {}",
        to.kind
    )))
}

/// CHAR(n)/VARCHAR(n) targets: Flink truncates longer strings and pads CHAR with spaces.
fn fit_length(array: &ArrayRef, to: &TypeKind) -> ArrayRef {
    let (limit, pad) = match to {
        TypeKind::Char(n) => (*n as usize, true),
        TypeKind::VarChar(n) => (*n as usize, false),
        _ => return array.clone(),
    };
    let strings = array.as_string::<i32>();
    let fits = strings.iter().flatten().all(|s| {
        let len = s.chars().count();
        len <= limit && (!pad || len == limit)
    });
    if fits {
        return array.clone();
    }
    let out: StringArray = strings
        .iter()
        .map(|v| v.map(|s| fit_chars(s, limit, pad)))
        .collect();
    Arc::new(out)
}

/// BINARY(n)/VARBINARY(n) targets: longer values are cut to `n` bytes (`BINARY(0)` holds
/// only the empty value).
fn fit_binary_length(array: &ArrayRef, to: &TypeKind) -> ArrayRef {
    let limit = match to {
        TypeKind::Binary(n) | TypeKind::VarBinary(n) => *n as usize,
        _ => return array.clone(),
    };
    let bytes = array.as_binary::<i32>();
    if bytes.iter().flatten().all(|b| b.len() <= limit) {
        return array.clone();
    }
    let out: arrow_array::BinaryArray = bytes
        .iter()
        .map(|v| v.map(|b| &b[..b.len().min(limit)]))
        .collect();
    Arc::new(out)
}

/// A numeric value in transit: exact (unscaled, scale) or approximate.
#[derive(Clone, Copy)]
enum Num {
    Exact(i128, u8),
    Approx(f64),
}

fn read_num(array: &ArrayRef, kind: &TypeKind, i: usize) -> Num {
    match kind {
        TypeKind::Boolean => Num::Exact(array.as_boolean().value(i) as i128, 0),
        TypeKind::TinyInt => Num::Exact(array.as_primitive::<Int8Type>().value(i) as i128, 0),
        TypeKind::SmallInt => Num::Exact(array.as_primitive::<Int16Type>().value(i) as i128, 0),
        TypeKind::Int => Num::Exact(array.as_primitive::<Int32Type>().value(i) as i128, 0),
        TypeKind::BigInt => Num::Exact(array.as_primitive::<Int64Type>().value(i) as i128, 0),
        TypeKind::Decimal { scale, .. } => {
            Num::Exact(array.as_primitive::<Decimal128Type>().value(i), *scale)
        }
        TypeKind::Float => Num::Approx(array.as_primitive::<Float32Type>().value(i) as f64),
        _ => Num::Approx(array.as_primitive::<Float64Type>().value(i)),
    }
}

fn to_f64(n: Num) -> f64 {
    match n {
        Num::Exact(v, s) => v as f64 / pow10_saturating(s as u32) as f64,
        Num::Approx(f) => f,
    }
}

/// An exact integer cast to an integer or approximate type, a column at a time: Java's
/// widening, and its narrowing, which wraps into the width as Rust's `as` does (the general
/// path reads each value through `Num`).
fn integer_cast(array: &ArrayRef, from: &TypeKind, to: &TypeKind) -> Option<ArrayRef> {
    macro_rules! to_type {
        ($from:ty) => {{
            let values = array.as_primitive::<$from>();
            Some(match to {
                TypeKind::TinyInt => Arc::new(values.unary::<_, Int8Type>(|v| v as i8)) as ArrayRef,
                TypeKind::SmallInt => Arc::new(values.unary::<_, Int16Type>(|v| v as i16)),
                TypeKind::Int => Arc::new(values.unary::<_, Int32Type>(|v| v as i32)),
                TypeKind::BigInt => Arc::new(values.unary::<_, Int64Type>(|v| v as i64)),
                TypeKind::Float => Arc::new(values.unary::<_, Float32Type>(|v| v as f32)),
                TypeKind::Double => Arc::new(values.unary::<_, Float64Type>(|v| v as f64)),
                _ => return None,
            })
        }};
    }
    match from {
        TypeKind::TinyInt => to_type!(Int8Type),
        TypeKind::SmallInt => to_type!(Int16Type),
        TypeKind::Int => to_type!(Int32Type),
        TypeKind::BigInt => to_type!(Int64Type),
        _ => None,
    }
}

fn numeric_cast(
    array: &ArrayRef,
    from: &TypeKind,
    to: &TypeKind,
    try_cast: bool,
) -> Result<ArrayRef, EvalError> {
    if let Some(cast) = integer_cast(array, from, to) {
        return Ok(cast);
    }
    let n = array.len();
    let get = |i: usize| (!array.is_null(i)).then(|| read_num(array, from, i));
    // Java's narrowing: an exact value wraps into the width; an approximate one saturates at
    // INT (BIGINT for BIGINT) first, so (byte) of 1e10 is (byte) 2147483647 = -1.
    macro_rules! ints {
        ($builder:ty, $t:ty, $approx:ty) => {{
            let mut b = <$builder>::with_capacity(n);
            for i in 0..n {
                b.append_option(get(i).and_then(|v| match v {
                    Num::Approx(f) => Some(f as $approx as $t),
                    // Truncated toward zero, then wrapped.
                    Num::Exact(v, s) => Some((v / pow10_saturating(s as u32)) as i64 as $t),
                }));
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    Ok(match to {
        TypeKind::Boolean => {
            let mut b = BooleanBuilder::with_capacity(n);
            for i in 0..n {
                b.append_option(get(i).map(|v| to_f64(v) != 0.0));
            }
            Arc::new(b.finish())
        }
        TypeKind::TinyInt => ints!(Int8Builder, i8, i32),
        TypeKind::SmallInt => ints!(Int16Builder, i16, i32),
        TypeKind::Int => ints!(Int32Builder, i32, i32),
        TypeKind::BigInt => ints!(Int64Builder, i64, i64),
        TypeKind::Float => {
            let mut b = Float32Builder::with_capacity(n);
            for i in 0..n {
                b.append_option(get(i).map(|v| to_f64(v) as f32));
            }
            Arc::new(b.finish())
        }
        TypeKind::Double => {
            let mut b = Float64Builder::with_capacity(n);
            for i in 0..n {
                b.append_option(get(i).map(to_f64));
            }
            Arc::new(b.finish())
        }
        TypeKind::Decimal { precision, scale } => {
            let limit = pow10_saturating(*precision as u32);
            let mut b = Decimal128Builder::with_capacity(n);
            for i in 0..n {
                let v = get(i).and_then(|v| match v {
                    Num::Exact(v, s) => rescale(v, i32::from(s), i32::from(*scale)),
                    // Flink goes through the double's shortest decimal text
                    // (`Double.toString`), so 1e20 is exactly 10^20 and 0.1 is 0.1.
                    Num::Approx(f) if f.is_finite() => {
                        parse_decimal(&format!("{f}"), *precision, *scale).ok()
                    }
                    Num::Approx(_) => None,
                });
                match v {
                    Some(v) if v.abs() < limit => b.append_value(v),
                    _ if array.is_null(i) || try_cast => b.append_null(),
                    // Flink gives NULL when a value overflows the target DECIMAL.
                    _ => b.append_null(),
                }
            }
            Arc::new(
                b.finish()
                    .with_precision_and_scale(*precision, *scale as i8)
                    .map_err(|e| EvalError::Internal(e.to_string()))?,
            )
        }
        other => return Err(EvalError::Invalid(format!("cannot cast {from} to {other}"))),
    })
}
