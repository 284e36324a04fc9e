//! Numeric functions: ABS, MOD, ROUND, TRUNCATE, FLOOR, CEIL, POWER, the logarithms and
//! trigonometric functions, SIGN, PI, E, RAND, RAND_INTEGER, BIN, HEX and UUID, with Flink's
//! semantics and return types.
//!
//! Kernels read integers as `i64` (the binder casts integer arguments to BIGINT) or as the
//! argument's own type where the result keeps it, approximate numbers as `f64`, and DECIMAL as
//! Decimal128 at the argument type's scale; the result's type is the resolved return type.

use std::fmt::Write;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::builder::{Float64Builder, Int32Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
};
use arrow_array::{Array, ArrayRef, Decimal128Array, Float64Array, PrimitiveArray};
use arrow_schema::DataType as ArrowType;

use super::{
    EvalContext, EvalError, Evaluation, FunctionDef, Signature, any_nullable, expect_arg_count,
};
use crate::types::coercion::as_decimal;
use crate::types::decimal::{pow10, remainder, rescale};
use crate::types::{DataType, MAX_LENGTH, TypeKind};

pub const FUNCTIONS: &[FunctionDef] = &[
    def!("ABS", resolve_same_numeric, abs),
    def!("SIGN", resolve_same_numeric, sign),
    def!("MOD", resolve_mod, modulo),
    def!("ROUND", resolve_round, round),
    def!("TRUNCATE", resolve_round, truncate),
    def!("FLOOR", resolve_floor_ceil, floor),
    def!("CEIL", resolve_floor_ceil, ceil),
    def!("CEILING", resolve_floor_ceil, ceil),
    def!("POWER", resolve_double2, power),
    def!("SQRT", resolve_double1, sqrt),
    def!("LN", resolve_double1, ln),
    def!("LOG", resolve_log, log),
    def!("LOG10", resolve_double1, log10),
    def!("LOG2", resolve_double1, log2),
    def!("EXP", resolve_double1, exp),
    def!("SIN", resolve_double1, sin),
    def!("COS", resolve_double1, cos),
    def!("TAN", resolve_double1, tan),
    def!("COT", resolve_double1, cot),
    def!("ASIN", resolve_double1, asin),
    def!("ACOS", resolve_double1, acos),
    def!("ATAN", resolve_double1, atan),
    def!("ATAN2", resolve_double2, atan2),
    def!("SINH", resolve_double1, sinh),
    def!("COSH", resolve_double1, cosh),
    def!("TANH", resolve_double1, tanh),
    def!("DEGREES", resolve_double1, degrees),
    def!("RADIANS", resolve_double1, radians),
    def!("PI", resolve_constant, pi),
    def!("E", resolve_constant, e),
    def!("RAND", resolve_rand, rand, Evaluation::NonDeterministic),
    def!(
        "RAND_INTEGER",
        resolve_rand_integer,
        rand_integer,
        Evaluation::NonDeterministic
    ),
    def!("BIN", resolve_bin, bin),
    def!("HEX", resolve_hex, hex),
    def!("UNHEX", resolve_unhex, unhex),
    def!("UUID", resolve_uuid, uuid, Evaluation::NonDeterministic),
];

// ---------------------------------------------------------------------------------------------
// Type helpers
// ---------------------------------------------------------------------------------------------

fn double(nullable: bool) -> DataType {
    DataType {
        kind: TypeKind::Double,
        nullable,
    }
}

fn bigint(nullable: bool) -> DataType {
    DataType {
        kind: TypeKind::BigInt,
        nullable,
    }
}

fn numeric(name: &str, arg: &DataType) -> Result<(), String> {
    if arg.kind.is_numeric() || arg.kind == TypeKind::Null {
        Ok(())
    } else {
        Err(format!(
            "{name} expects a numeric argument, got {}",
            arg.kind
        ))
    }
}

fn integer(name: &str, arg: &DataType) -> Result<DataType, String> {
    if arg.kind.is_integer() || arg.kind == TypeKind::Null {
        Ok(bigint(arg.nullable))
    } else {
        Err(format!(
            "{name} expects an integer argument, got {}",
            arg.kind
        ))
    }
}

/// An argument's own type, INT for an untyped NULL.
fn own_type(arg: &DataType) -> DataType {
    if arg.kind == TypeKind::Null {
        DataType {
            kind: TypeKind::Int,
            nullable: true,
        }
    } else {
        arg.clone()
    }
}

/// The DECIMAL type an exact numeric type converts to without loss.
/// Flink's `LogicalTypeMerging.findRoundDecimalType`: the type of ROUND/TRUNCATE of a
/// DECIMAL(p, s) to `round` digits.
pub fn round_decimal_type(precision: u8, scale: u8, round: i32) -> (u8, u8) {
    let (p, s) = (i32::from(precision), i32::from(scale));
    if round >= s {
        (precision, scale)
    } else if round < 0 {
        ((1 + p - s).min(38) as u8, 0)
    } else {
        ((1 + p - s + round).min(38) as u8, round as u8)
    }
}

fn resolve_same_numeric(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("function", args, 1, 1)?;
    numeric("function", &args[0])?;
    let t = own_type(&args[0]);
    Ok(Signature::new(vec![t.clone()], t))
}

fn resolve_double1(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("function", args, 1, 1)?;
    numeric("function", &args[0])?;
    Ok(Signature::new(
        vec![double(args[0].nullable)],
        double(args[0].nullable),
    ))
}

fn resolve_double2(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("function", args, 2, 2)?;
    numeric("function", &args[0])?;
    numeric("function", &args[1])?;
    Ok(Signature::new(
        args.iter().map(|a| double(a.nullable)).collect(),
        double(any_nullable(args)),
    ))
}

fn resolve_log(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("LOG", args, 1, 2)?;
    for a in args {
        numeric("LOG", a)?;
    }
    Ok(Signature::new(
        args.iter().map(|a| double(a.nullable)).collect(),
        double(any_nullable(args)),
    ))
}

fn resolve_constant(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("function", args, 0, 0)?;
    Ok(Signature::new(vec![], double(false)))
}

/// MOD: exact numerics only. Integers: the result has the divisor's type. DECIMAL: Flink's
/// `findModuloDecimalType`.
fn resolve_mod(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("MOD", args, 2, 2)?;
    let (a, b) = (&args[0], &args[1]);
    let exact = |t: &DataType| {
        t.kind.is_integer() || matches!(t.kind, TypeKind::Decimal { .. } | TypeKind::Null)
    };
    if !exact(a) || !exact(b) {
        return Err(format!(
            "MOD expects exact numeric arguments, got {} and {}",
            a.kind, b.kind
        ));
    }
    let nullable = a.nullable || b.nullable;
    let is_dec = |t: &DataType| matches!(t.kind, TypeKind::Decimal { .. });
    if is_dec(a) || is_dec(b) {
        let dec = |t: &DataType| {
            let (p, s) = as_decimal(&t.kind).unwrap_or((10, 0));
            DataType {
                kind: TypeKind::Decimal {
                    precision: p,
                    scale: s,
                },
                nullable: t.nullable,
            }
        };
        let (da, db) = (dec(a), dec(b));
        let (
            TypeKind::Decimal {
                precision: p1,
                scale: s1,
            },
            TypeKind::Decimal {
                precision: p2,
                scale: s2,
            },
        ) = (&da.kind, &db.kind)
        else {
            return Err("MOD: internal type error".into());
        };
        let scale = (*s1).max(*s2);
        let precision = ((p1 - s1).min(p2 - s2) + scale).clamp(1, 38);
        return Ok(Signature::new(
            vec![da.clone(), db.clone()],
            DataType {
                kind: TypeKind::Decimal { precision, scale },
                nullable,
            },
        ));
    }
    let ret_kind = if b.kind == TypeKind::Null {
        TypeKind::Int
    } else {
        b.kind.clone()
    };
    Ok(Signature::new(
        vec![bigint(a.nullable), bigint(b.nullable)],
        DataType {
            kind: ret_kind,
            nullable,
        },
    ))
}

/// ROUND/TRUNCATE(x[, d]): integers and approximate numbers keep their type; DECIMAL(p, s)
/// becomes `findRoundDecimalType(p, s, d)`. The binder passes only types, so with a second
/// argument the digits are unknown here and the result keeps DECIMAL(p, s), which is what Flink
/// does when `d` is not a literal; the kernel honours whatever scale the return type has.
fn resolve_round(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("ROUND", args, 1, 2)?;
    let x = &args[0];
    numeric("ROUND", x)?;
    let mut params = vec![match &x.kind {
        k if k.is_integer() => bigint(x.nullable),
        TypeKind::Float | TypeKind::Double => double(x.nullable),
        TypeKind::Null => double(true),
        _ => x.clone(),
    }];
    if let Some(d) = args.get(1) {
        let d = integer("ROUND", d)?;
        params.push(DataType {
            kind: TypeKind::Int,
            nullable: d.nullable,
        });
    }
    let ret = match &x.kind {
        TypeKind::Decimal { precision, scale } if args.len() == 1 => {
            let (p, s) = round_decimal_type(*precision, *scale, 0);
            DataType {
                kind: TypeKind::Decimal {
                    precision: p,
                    scale: s,
                },
                nullable: x.nullable,
            }
        }
        TypeKind::Null => double(true),
        _ => x.with_nullable(any_nullable(args)),
    };
    Ok(Signature::new(params, ret))
}

/// FLOOR/CEIL of a number: the argument's type, DECIMAL(p, 0) for DECIMAL(p, s).
fn resolve_floor_ceil(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("FLOOR", args, 1, 1)?;
    let x = &args[0];
    numeric("FLOOR", x)?;
    let param = own_type(x);
    let ret = match x.kind {
        TypeKind::Decimal { precision, .. } => DataType {
            kind: TypeKind::Decimal {
                precision,
                scale: 0,
            },
            nullable: x.nullable,
        },
        _ => param.clone(),
    };
    Ok(Signature::new(vec![param], ret))
}

fn resolve_rand(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("RAND", args, 0, 1)?;
    let params = args
        .iter()
        .map(|a| integer("RAND", a).map(|t| t.with_nullable(a.nullable)))
        .collect::<Result<_, _>>()?;
    Ok(Signature::new(params, double(false)))
}

fn resolve_rand_integer(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("RAND_INTEGER", args, 1, 2)?;
    let params = args
        .iter()
        .map(|a| integer("RAND_INTEGER", a))
        .collect::<Result<_, _>>()?;
    Ok(Signature::new(
        params,
        DataType {
            kind: TypeKind::Int,
            nullable: false,
        },
    ))
}

fn resolve_bin(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("BIN", args, 1, 1)?;
    let p = integer("BIN", &args[0])?;
    Ok(Signature::new(
        vec![p],
        DataType {
            kind: TypeKind::VarChar(MAX_LENGTH),
            nullable: args[0].nullable,
        },
    ))
}

fn resolve_hex(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("HEX", args, 1, 1)?;
    let a = &args[0];
    let p = if a.kind.is_string() {
        a.clone()
    } else {
        integer("HEX", a).map_err(|_| {
            format!(
                "HEX expects an integer or character string argument, got {}",
                a.kind
            )
        })?
    };
    Ok(Signature::new(
        vec![p],
        DataType {
            kind: TypeKind::VarChar(MAX_LENGTH),
            nullable: a.nullable,
        },
    ))
}

fn resolve_uuid(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("UUID", args, 0, 0)?;
    Ok(Signature::new(
        vec![],
        DataType {
            kind: TypeKind::Char(36),
            nullable: false,
        },
    ))
}

// ---------------------------------------------------------------------------------------------
// Array helpers
// ---------------------------------------------------------------------------------------------

fn f64s(a: &ArrayRef) -> &Float64Array {
    a.as_primitive::<Float64Type>()
}

fn unsupported(a: &ArrayRef) -> EvalError {
    EvalError::Internal(format!("unexpected argument type {}", a.data_type()))
}

fn decimal_scale(t: &ArrowType) -> Option<(u8, i8)> {
    match t {
        ArrowType::Decimal128(p, s) => Some((*p, *s)),
        _ => None,
    }
}

/// Builds a Decimal128 array of `ret`'s precision and scale; values that do not fit the
/// precision become NULL (Flink's DecimalData overflow rule).
fn decimal_result(values: Vec<Option<i128>>, ret: &DataType) -> Result<ArrayRef, EvalError> {
    let TypeKind::Decimal { precision, scale } = ret.kind else {
        return Err(EvalError::Internal(format!(
            "expected a DECIMAL return type, got {}",
            ret.kind
        )));
    };
    let limit = pow10(u32::from(precision)).unwrap_or(i128::MAX);
    let values: Decimal128Array = values
        .into_iter()
        .map(|v| v.filter(|v| v.unsigned_abs() < limit.unsigned_abs()))
        .collect();
    let values = values
        .with_precision_and_scale(precision, scale as i8)
        .map_err(|e| EvalError::Internal(e.to_string()))?;
    Ok(Arc::new(values))
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    HalfUp,
    Down,
    Floor,
    Ceil,
}

/// Rounds `v` to a multiple of 10^k (at the same scale); None on overflow.
fn round_unscaled(v: i128, k: u32, mode: Mode) -> Option<i128> {
    if k == 0 {
        return Some(v);
    }
    let Some(p) = pow10(k) else {
        // 10^k exceeds every i128: the result is 0, or ±10^k which does not fit.
        return match mode {
            Mode::Floor if v < 0 => None,
            Mode::Ceil if v > 0 => None,
            _ => Some(0),
        };
    };
    let q = v / p;
    let r = v % p;
    let q = match mode {
        Mode::Down => q,
        Mode::HalfUp if r.unsigned_abs() >= p.unsigned_abs() - r.unsigned_abs() => q + v.signum(),
        Mode::HalfUp => q,
        Mode::Floor if r < 0 => q - 1,
        Mode::Ceil if r > 0 => q + 1,
        Mode::Floor | Mode::Ceil => q,
    };
    q.checked_mul(p)
}

/// Rounds a double to `d` decimal digits as Flink does: through `BigDecimal.valueOf(x)` (the
/// digits of Java 17's `Double.toString`), then back to the nearest double. NaN and infinities
/// are returned unchanged; a zero result has no sign, as a `BigDecimal` zero has none.
fn round_double(x: f64, d: i32, mode: Mode) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if x == 0.0 {
        return 0.0;
    }
    // Java's text of |x|: `ddd.ddd` or `d.dddE±n`; x = digits × 10^-scale.
    let repr = crate::types::text::java_double_to_string(x.abs());
    let (mantissa, exp) = repr.split_once('E').unwrap_or((&repr, "0"));
    let Ok(exp) = exp.parse::<i32>() else {
        return x;
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{int_part}{frac_part}");
    let Ok(unscaled) = digits.parse::<i128>() else {
        return x;
    };
    let scale = frac_part.len() as i32 - exp;
    if d >= scale {
        return x;
    }
    let k = (scale - d) as u32;
    let signed = if x < 0.0 { -unscaled } else { unscaled };
    let Some(rounded) = round_unscaled(signed, k, mode) else {
        return x;
    };
    let Some(q) = pow10(k).map(|p| rounded / p) else {
        return 0.0;
    };
    format!("{q}e{}", -d).parse::<f64>().map_or(x, |r| r + 0.0)
}

/// Reads an integer column of any width as i64 values.
fn int_values(a: &ArrayRef) -> Result<Vec<Option<i64>>, EvalError> {
    Ok(match a.data_type() {
        ArrowType::Int8 => a
            .as_primitive::<Int8Type>()
            .iter()
            .map(|v| v.map(i64::from))
            .collect(),
        ArrowType::Int16 => a
            .as_primitive::<Int16Type>()
            .iter()
            .map(|v| v.map(i64::from))
            .collect(),
        ArrowType::Int32 => a
            .as_primitive::<Int32Type>()
            .iter()
            .map(|v| v.map(i64::from))
            .collect(),
        ArrowType::Int64 => a.as_primitive::<Int64Type>().iter().collect(),
        _ => return Err(unsupported(a)),
    })
}

/// Builds an integer column of `ret`'s width from i64 values, wrapping like Java's narrowing.
fn int_result(
    values: impl Iterator<Item = Option<i64>>,
    ret: &DataType,
) -> Result<ArrayRef, EvalError> {
    Ok(match ret.kind {
        TypeKind::TinyInt => Arc::new(
            values
                .map(|v| v.map(|v| v as i8))
                .collect::<PrimitiveArray<Int8Type>>(),
        ),
        TypeKind::SmallInt => Arc::new(
            values
                .map(|v| v.map(|v| v as i16))
                .collect::<PrimitiveArray<Int16Type>>(),
        ),
        TypeKind::Int => Arc::new(
            values
                .map(|v| v.map(|v| v as i32))
                .collect::<PrimitiveArray<Int32Type>>(),
        ),
        TypeKind::BigInt => Arc::new(values.collect::<PrimitiveArray<Int64Type>>()),
        _ => {
            return Err(EvalError::Internal(format!(
                "expected an integer return type, got {}",
                ret.kind
            )));
        }
    })
}

fn unary_f64(args: &[ArrayRef], f: impl Fn(f64) -> f64) -> Result<ArrayRef, EvalError> {
    let a = f64s(&args[0]);
    Ok(Arc::new(
        a.iter().map(|v| v.map(&f)).collect::<Float64Array>(),
    ))
}

fn binary_f64(args: &[ArrayRef], f: impl Fn(f64, f64) -> f64) -> Result<ArrayRef, EvalError> {
    let (a, b) = (f64s(&args[0]), f64s(&args[1]));
    Ok(Arc::new(
        a.iter()
            .zip(b.iter())
            .map(|(x, y)| Some(f(x?, y?)))
            .collect::<Float64Array>(),
    ))
}

// ---------------------------------------------------------------------------------------------
// ABS, SIGN
// ---------------------------------------------------------------------------------------------

/// Applies per-type functions to a numeric column, keeping its type.
fn map_numeric(
    a: &ArrayRef,
    int: impl Fn(i64) -> i64,
    float: impl Fn(f64) -> f64,
    dec: impl Fn(i128, i8) -> Option<i128>,
    ret: &DataType,
) -> Result<ArrayRef, EvalError> {
    match a.data_type() {
        ArrowType::Int8 | ArrowType::Int16 | ArrowType::Int32 | ArrowType::Int64 => {
            int_result(int_values(a)?.into_iter().map(|v| v.map(&int)), ret)
        }
        ArrowType::Float32 => Ok(Arc::new(
            a.as_primitive::<Float32Type>()
                .iter()
                .map(|v| v.map(|v| float(f64::from(v)) as f32))
                .collect::<PrimitiveArray<Float32Type>>(),
        )),
        ArrowType::Float64 => Ok(Arc::new(
            f64s(a)
                .iter()
                .map(|v| v.map(&float))
                .collect::<Float64Array>(),
        )),
        ArrowType::Decimal128(_, s) => {
            let s = *s;
            let values = a
                .as_primitive::<Decimal128Type>()
                .iter()
                .map(|v| v.and_then(|v| dec(v, s)))
                .collect();
            decimal_result(values, ret)
        }
        ArrowType::Null => Ok(arrow_array::new_null_array(&ret.to_arrow(), a.len())),
        _ => Err(unsupported(a)),
    }
}

/// ABS: Java's `Math.abs`, so the most negative integer stays negative.
fn abs(args: &[ArrayRef], _: &EvalContext, ret: &DataType) -> Result<ArrayRef, EvalError> {
    let wrap_abs = |v: i64| match ret.kind {
        TypeKind::TinyInt => i64::from((v as i8).wrapping_abs()),
        TypeKind::SmallInt => i64::from((v as i16).wrapping_abs()),
        TypeKind::Int => i64::from((v as i32).wrapping_abs()),
        _ => v.wrapping_abs(),
    };
    map_numeric(&args[0], wrap_abs, f64::abs, |v, _| Some(v.abs()), ret)
}

fn float_signum(v: f64) -> f64 {
    if v.is_nan() || v == 0.0 {
        v
    } else {
        v.signum()
    }
}

/// SIGN: -1, 0 or 1 in the argument's type (-1.00, 0.00, 1.00 for DECIMAL(p, 2)).
fn sign(args: &[ArrayRef], _: &EvalContext, ret: &DataType) -> Result<ArrayRef, EvalError> {
    map_numeric(
        &args[0],
        i64::signum,
        float_signum,
        |v, s| pow10(s.max(0) as u32).map(|p| v.signum() * p),
        ret,
    )
}

// ---------------------------------------------------------------------------------------------
// MOD, ROUND, TRUNCATE, FLOOR, CEIL
// ---------------------------------------------------------------------------------------------

/// MOD(a, b): the remainder with the dividend's sign; MOD(a, 0) is an error, as Java's `%`.
fn modulo(args: &[ArrayRef], _: &EvalContext, ret: &DataType) -> Result<ArrayRef, EvalError> {
    let by_zero = || EvalError::Invalid("division by zero in MOD".into());
    if let (Some((_, s1)), Some((_, s2))) = (
        decimal_scale(args[0].data_type()),
        decimal_scale(args[1].data_type()),
    ) {
        let TypeKind::Decimal { scale, .. } = ret.kind else {
            return Err(EvalError::Internal(
                "MOD: expected a DECIMAL return type".into(),
            ));
        };
        let (a, b) = (
            args[0].as_primitive::<Decimal128Type>(),
            args[1].as_primitive::<Decimal128Type>(),
        );
        let mut values = Vec::with_capacity(a.len());
        for (x, y) in a.iter().zip(b.iter()) {
            let (Some(x), Some(y)) = (x, y) else {
                values.push(None);
                continue;
            };
            if y == 0 {
                return Err(by_zero());
            }
            values.push(remainder(
                x,
                i32::from(s1),
                y,
                i32::from(s2),
                i32::from(scale),
            ));
        }
        return decimal_result(values, ret);
    }
    let (a, b) = (
        args[0].as_primitive::<Int64Type>(),
        args[1].as_primitive::<Int64Type>(),
    );
    let mut values = Vec::with_capacity(a.len());
    for (x, y) in a.iter().zip(b.iter()) {
        values.push(match (x, y) {
            (Some(_), Some(0)) => return Err(by_zero()),
            (Some(x), Some(y)) => Some(x.wrapping_rem(y)),
            _ => None,
        });
    }
    int_result(values.into_iter(), ret)
}

fn round_like(args: &[ArrayRef], ret: &DataType, mode: Mode) -> Result<ArrayRef, EvalError> {
    let x = &args[0];
    let n = x.len();
    let digits: Vec<Option<i32>> = match args.get(1) {
        Some(d) => d.as_primitive::<Int32Type>().iter().collect(),
        None => vec![Some(0); n],
    };
    match x.data_type() {
        ArrowType::Int64 => {
            let values = x
                .as_primitive::<Int64Type>()
                .iter()
                .zip(&digits)
                .map(|(v, d)| {
                    let (v, d) = (v?, (*d)?);
                    if d >= 0 {
                        return Some(v);
                    }
                    // Through BigDecimal, then Java's narrowing `longValue()`/`intValue()`.
                    round_unscaled(i128::from(v), d.unsigned_abs(), mode)
                        .map(|r| r as i64)
                        .or(Some(0))
                });
            int_result(values, ret)
        }
        ArrowType::Float64 => {
            let values = f64s(x)
                .iter()
                .zip(&digits)
                .map(|(v, d)| Some(round_double(v?, (*d)?, mode)));
            match ret.kind {
                TypeKind::Float => Ok(Arc::new(
                    values
                        .map(|v| v.map(|v| v as f32))
                        .collect::<PrimitiveArray<Float32Type>>(),
                )),
                _ => Ok(Arc::new(values.collect::<Float64Array>())),
            }
        }
        ArrowType::Decimal128(_, s) => {
            let s = i32::from(*s);
            let out_scale = match ret.kind {
                TypeKind::Decimal { scale, .. } => i32::from(scale),
                _ => s,
            };
            let values = x
                .as_primitive::<Decimal128Type>()
                .iter()
                .zip(&digits)
                .map(|(v, d)| {
                    let (v, d) = (v?, (*d)?);
                    let rounded = if d >= s {
                        v
                    } else {
                        round_unscaled(v, (s - d).unsigned_abs(), mode)?
                    };
                    rescale(rounded, s, out_scale)
                })
                .collect();
            decimal_result(values, ret)
        }
        ArrowType::Null => Ok(arrow_array::new_null_array(&ret.to_arrow(), n)),
        _ => Err(unsupported(x)),
    }
}

/// ROUND(x[, d]): half away from zero (Java's HALF_UP) at `d` decimal digits (default 0;
/// negative rounds to tens, hundreds, …).
fn round(args: &[ArrayRef], _: &EvalContext, ret: &DataType) -> Result<ArrayRef, EvalError> {
    round_like(args, ret, Mode::HalfUp)
}

/// TRUNCATE(x[, d]): toward zero at `d` decimal digits.
fn truncate(args: &[ArrayRef], _: &EvalContext, ret: &DataType) -> Result<ArrayRef, EvalError> {
    round_like(args, ret, Mode::Down)
}

fn floor_ceil(args: &[ArrayRef], ret: &DataType, mode: Mode) -> Result<ArrayRef, EvalError> {
    let float: fn(f64) -> f64 = if mode == Mode::Floor {
        f64::floor
    } else {
        f64::ceil
    };
    let a = &args[0];
    if let Some((_, s)) = decimal_scale(a.data_type()) {
        let s = i32::from(s);
        let values = a
            .as_primitive::<Decimal128Type>()
            .iter()
            .map(|v| {
                let v = v?;
                if s <= 0 {
                    return Some(v);
                }
                round_unscaled(v, s as u32, mode)?.checked_div(pow10(s as u32)?)
            })
            .collect();
        return decimal_result(values, ret);
    }
    map_numeric(a, |v| v, float, |v, _| Some(v), ret)
}

fn floor(args: &[ArrayRef], _: &EvalContext, ret: &DataType) -> Result<ArrayRef, EvalError> {
    floor_ceil(args, ret, Mode::Floor)
}

fn ceil(args: &[ArrayRef], _: &EvalContext, ret: &DataType) -> Result<ArrayRef, EvalError> {
    floor_ceil(args, ret, Mode::Ceil)
}

// ---------------------------------------------------------------------------------------------
// DOUBLE functions (Java's Math semantics: NaN and infinities rather than errors)
// ---------------------------------------------------------------------------------------------

fn power(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    binary_f64(args, java_pow)
}

/// Java's `Math.pow` differs from IEEE `pow` for a base of ±1 with an infinite or NaN exponent.
fn java_pow(x: f64, y: f64) -> f64 {
    if y.is_nan() || (x.abs() == 1.0 && y.is_infinite()) {
        f64::NAN
    } else {
        x.powf(y)
    }
}

fn sqrt(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::sqrt)
}
fn ln(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::ln)
}
/// LOG(x) is the natural logarithm; LOG(b, x) is `ln(x) / ln(b)`.
fn log(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    if args.len() == 1 {
        unary_f64(args, f64::ln)
    } else {
        binary_f64(args, |b, x| x.ln() / b.ln())
    }
}
fn log10(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::log10)
}
/// LOG2(x) is `ln(x) / ln(2)`, as Flink computes it.
fn log2(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, |x| x.ln() / std::f64::consts::LN_2)
}
fn exp(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::exp)
}
fn sin(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::sin)
}
fn cos(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::cos)
}
fn tan(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::tan)
}
fn cot(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, |x| 1.0 / x.tan())
}
fn asin(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::asin)
}
fn acos(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::acos)
}
fn atan(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::atan)
}
fn atan2(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    binary_f64(args, f64::atan2)
}
fn sinh(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::sinh)
}
fn cosh(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::cosh)
}
fn tanh(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::tanh)
}
fn degrees(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::to_degrees)
}
fn radians(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    unary_f64(args, f64::to_radians)
}

fn constant(ctx: &EvalContext, v: f64) -> Result<ArrayRef, EvalError> {
    Ok(Arc::new(Float64Array::from(vec![v; ctx.num_rows])))
}
fn pi(_: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    constant(ctx, std::f64::consts::PI)
}
fn e(_: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    constant(ctx, std::f64::consts::E)
}

// ---------------------------------------------------------------------------------------------
// RAND, RAND_INTEGER, UUID
// ---------------------------------------------------------------------------------------------

/// `java.util.Random`, so that RAND(seed) gives Flink's sequence for a seed.
pub struct JavaRandom {
    seed: u64,
}

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const MASK: u64 = (1 << 48) - 1;

impl JavaRandom {
    pub fn new(seed: i64) -> Self {
        JavaRandom {
            seed: (seed as u64 ^ MULTIPLIER) & MASK,
        }
    }

    /// An unpredictable generator.
    pub fn unseeded() -> Self {
        JavaRandom::new(random_u64() as i64)
    }

    fn next(&mut self, bits: u32) -> i32 {
        self.seed = self.seed.wrapping_mul(MULTIPLIER).wrapping_add(0xB) & MASK;
        (self.seed >> (48 - bits)) as i32
    }

    pub fn next_double(&mut self) -> f64 {
        let hi = i64::from(self.next(26)) << 27;
        let lo = i64::from(self.next(27));
        (hi + lo) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `nextInt(bound)` for a positive bound.
    pub fn next_int(&mut self, bound: i32) -> i32 {
        let mut r = self.next(31);
        let m = bound.wrapping_sub(1);
        if bound & m == 0 {
            return ((i64::from(bound) * i64::from(r)) >> 31) as i32;
        }
        let mut u = r;
        loop {
            r = u % bound;
            if u.wrapping_sub(r).wrapping_add(m) >= 0 {
                return r;
            }
            u = self.next(31);
        }
    }
}

/// A fresh unpredictable 64-bit value (process-random hasher keys, a counter and the clock).
fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    h.finish()
}

/// A generator per distinct seed value along the column (a literal seed is one generator
/// advancing row by row); NULL seeds draw from an unseeded generator.
struct SeededRandoms {
    current: Option<(i64, JavaRandom)>,
    unseeded: Option<JavaRandom>,
}

impl SeededRandoms {
    fn new() -> Self {
        SeededRandoms {
            current: None,
            unseeded: None,
        }
    }
    fn get(&mut self, seed: Option<i64>) -> &mut JavaRandom {
        match seed {
            None => self.unseeded.get_or_insert_with(JavaRandom::unseeded),
            Some(s) => {
                if !matches!(&self.current, Some((c, _)) if *c == s) {
                    self.current = Some((s, JavaRandom::new(s)));
                }
                match &mut self.current {
                    Some((_, r)) => r,
                    None => self.unseeded.get_or_insert_with(JavaRandom::unseeded),
                }
            }
        }
    }
}

/// RAND([seed]): a double in [0, 1). With a seed, Java's `Random(seed)` sequence from the
/// start of each batch (a Tideline kernel keeps no state between batches).
fn rand(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let mut builder = Float64Builder::with_capacity(ctx.num_rows);
    match args.first() {
        None => {
            let mut rng = JavaRandom::unseeded();
            for _ in 0..ctx.num_rows {
                builder.append_value(rng.next_double());
            }
        }
        Some(seed) => {
            let seeds = seed.as_primitive::<Int64Type>();
            let mut rngs = SeededRandoms::new();
            for i in 0..ctx.num_rows {
                let s = seeds.is_valid(i).then(|| seeds.value(i));
                builder.append_value(rngs.get(s).next_double());
            }
        }
    }
    Ok(Arc::new(builder.finish()))
}

/// RAND_INTEGER([seed, ]bound): an integer in [0, bound); a bound that is not positive is an
/// error, as in Java.
fn rand_integer(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (seeds, bounds) = match args {
        [b] => (None, b.as_primitive::<Int64Type>()),
        [s, b] => (
            Some(s.as_primitive::<Int64Type>()),
            b.as_primitive::<Int64Type>(),
        ),
        _ => {
            return Err(EvalError::Internal(
                "RAND_INTEGER expects 1 or 2 arguments".into(),
            ));
        }
    };
    let mut builder = Int32Builder::with_capacity(ctx.num_rows);
    let mut rngs = SeededRandoms::new();
    for i in 0..ctx.num_rows {
        if bounds.is_null(i) {
            builder.append_null();
            continue;
        }
        let bound = bounds.value(i) as i32;
        if bound <= 0 {
            return Err(EvalError::Invalid("bound must be positive".into()));
        }
        let seed = seeds.and_then(|s| s.is_valid(i).then(|| s.value(i)));
        builder.append_value(rngs.get(seed).next_int(bound));
    }
    Ok(Arc::new(builder.finish()))
}

/// UUID(): a random (version 4) UUID, lower-case.
fn uuid(_: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let mut builder = StringBuilder::with_capacity(ctx.num_rows, ctx.num_rows * 36);
    let mut buf = String::with_capacity(36);
    let mut state = random_u64();
    for _ in 0..ctx.num_rows {
        buf.clear();
        write_uuid(&mut buf, &mut state);
        builder.append_value(&buf);
    }
    Ok(Arc::new(builder.finish()))
}

/// A fresh random version-4 UUID in its lower-case text form.
pub fn random_uuid() -> String {
    let mut buf = String::with_capacity(36);
    write_uuid(&mut buf, &mut random_u64());
    buf
}

/// Appends a version-4 UUID drawn from a splitmix64 generator whose state is `state`.
fn write_uuid(buf: &mut String, state: &mut u64) {
    let mut next = || {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let hi = (next() & !0xF000) | 0x4000;
    let lo = (next() & !(0xC << 60)) | (0x8 << 60);
    let v = (u128::from(hi) << 64) | u128::from(lo);
    let _ = write!(
        buf,
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        v >> 96,
        (v >> 80) & 0xFFFF,
        (v >> 64) & 0xFFFF,
        (v >> 48) & 0xFFFF,
        v & 0xFFFF_FFFF_FFFF
    );
}

// ---------------------------------------------------------------------------------------------
// BIN, HEX
// ---------------------------------------------------------------------------------------------

/// BIN(n): `Long.toBinaryString`, two's complement for negatives.
fn bin(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let a = args[0].as_primitive::<Int64Type>();
    let mut builder = StringBuilder::with_capacity(ctx.num_rows, 0);
    let mut buf = String::new();
    for v in a.iter() {
        match v {
            None => builder.append_null(),
            Some(v) => {
                buf.clear();
                use std::fmt::Write;
                let _ = write!(buf, "{:b}", v as u64);
                builder.append_value(&buf);
            }
        }
    }
    Ok(Arc::new(builder.finish()))
}

fn resolve_unhex(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("UNHEX", args, 1, 1)?;
    if !args[0].kind.is_string() && args[0].kind != TypeKind::Null {
        return Err(format!(
            "UNHEX expects a character string, got {}",
            args[0].kind
        ));
    }
    Ok(Signature::new(
        vec![DataType {
            kind: TypeKind::VarChar(MAX_LENGTH),
            nullable: args[0].nullable,
        }],
        DataType::nullable(TypeKind::VarBinary(MAX_LENGTH)),
    ))
}

/// UNHEX(s): the bytes the hex digits spell, NULL for any other character. An odd count
/// loses its first digit and gets a leading zero byte, as in Flink.
fn unhex(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let s = args[0].as_string::<i32>();
    let mut builder = arrow_array::builder::BinaryBuilder::with_capacity(ctx.num_rows, 0);
    let mut bytes = Vec::new();
    for i in 0..s.len() {
        if s.is_null(i) {
            builder.append_null();
            continue;
        }
        let digits: Option<Vec<u8>> = s
            .value(i)
            .chars()
            .map(|c| c.to_digit(16).map(|d| d as u8))
            .collect();
        let Some(mut digits) = digits else {
            builder.append_null();
            continue;
        };
        bytes.clear();
        if digits.len() % 2 == 1 {
            // Flink drops the first digit of an odd count and pads with a zero byte.
            digits.remove(0);
            bytes.push(0);
        }
        bytes.extend(digits.chunks(2).map(|p| p[0] * 16 + p[1]));
        builder.append_value(&bytes);
    }
    Ok(Arc::new(builder.finish()))
}

/// HEX(n) is `Long.toHexString` upper-cased; HEX(s) the upper-case hex of its UTF-8 bytes.
fn hex(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    use std::fmt::Write;
    let a = &args[0];
    let mut builder = StringBuilder::with_capacity(ctx.num_rows, 0);
    let mut buf = String::new();
    match a.data_type() {
        ArrowType::Int64 => {
            for v in a.as_primitive::<Int64Type>().iter() {
                match v {
                    None => builder.append_null(),
                    Some(v) => {
                        buf.clear();
                        let _ = write!(buf, "{:X}", v as u64);
                        builder.append_value(&buf);
                    }
                }
            }
        }
        ArrowType::Utf8 => {
            for v in a.as_string::<i32>().iter() {
                match v {
                    None => builder.append_null(),
                    Some(s) => {
                        buf.clear();
                        for b in s.as_bytes() {
                            let _ = write!(buf, "{b:02X}");
                        }
                        builder.append_value(&buf);
                    }
                }
            }
        }
        ArrowType::Null => return Ok(arrow_array::new_null_array(&ArrowType::Utf8, a.len())),
        _ => return Err(unsupported(a)),
    }
    Ok(Arc::new(builder.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, Int64Array, StringArray};

    fn ctx(n: usize) -> EvalContext {
        EvalContext::for_tests(n)
    }

    fn dec_type(p: u8, s: u8) -> DataType {
        DataType::nullable(TypeKind::Decimal {
            precision: p,
            scale: s,
        })
    }

    fn dec(values: &[Option<i128>], p: u8, s: u8) -> ArrayRef {
        Arc::new(
            Decimal128Array::from(values.to_vec())
                .with_precision_and_scale(p, s as i8)
                .unwrap(),
        )
    }

    fn f(values: &[Option<f64>]) -> ArrayRef {
        Arc::new(Float64Array::from(values.to_vec()))
    }

    fn i64a(values: &[Option<i64>]) -> ArrayRef {
        Arc::new(Int64Array::from(values.to_vec()))
    }

    fn i32a(values: &[Option<i32>]) -> ArrayRef {
        Arc::new(Int32Array::from(values.to_vec()))
    }

    fn run(name: &str, args: &[ArrayRef], ret: &DataType) -> Result<ArrayRef, EvalError> {
        let def = crate::function::lookup(name).expect("registered");
        let n = args.first().map_or(3, |a| a.len());
        (def.kernel)(args, &ctx(n), ret)
    }

    fn decs(a: &ArrayRef) -> Vec<Option<i128>> {
        a.as_primitive::<Decimal128Type>().iter().collect()
    }

    fn doubles(a: &ArrayRef) -> Vec<Option<f64>> {
        f64s(a).iter().collect()
    }

    #[test]
    fn round_doubles_half_up_through_decimal_text() {
        assert_eq!(round_double(2.5, 0, Mode::HalfUp), 3.0);
        assert_eq!(round_double(-2.5, 0, Mode::HalfUp), -3.0);
        assert_eq!(round_double(1.005, 2, Mode::HalfUp), 1.01);
        assert_eq!(round_double(0.125, 2, Mode::HalfUp), 0.13);
        assert_eq!(round_double(1234.5678, -2, Mode::HalfUp), 1200.0);
        assert_eq!(round_double(1.23, 5, Mode::HalfUp), 1.23);
        assert_eq!(round_double(-0.4, 0, Mode::HalfUp), 0.0);
        assert_eq!(round_double(1e-300, 2, Mode::HalfUp), 0.0);
        assert!(round_double(f64::NAN, 2, Mode::HalfUp).is_nan());
        assert_eq!(round_double(-1.99, 1, Mode::Down), -1.9);
        assert_eq!(round_double(123.456, -1, Mode::Down), 120.0);
        let out = run(
            "ROUND",
            &[f(&[Some(1.23456), None]), i32a(&[Some(2), Some(2)])],
            &double(true),
        )
        .unwrap();
        assert_eq!(doubles(&out), vec![Some(1.23), None]);
    }

    #[test]
    fn round_and_truncate_decimals() {
        // ROUND(DECIMAL(6, 2)) → DECIMAL(5, 0).
        let sig = resolve_round(&[dec_type(6, 2)]).unwrap();
        assert_eq!(sig.return_type, dec_type(5, 0));
        let x = dec(&[Some(123_456), Some(-123_450), Some(-123_449), None], 6, 2);
        let out = run("ROUND", std::slice::from_ref(&x), &sig.return_type).unwrap();
        assert_eq!(decs(&out), vec![Some(1235), Some(-1235), Some(-1234), None]);
        // With digits: the resolved type keeps the scale; values are rounded at d.
        let sig = resolve_round(&[dec_type(6, 2), DataType::not_null(TypeKind::Int)]).unwrap();
        assert_eq!(sig.return_type, dec_type(6, 2));
        let d = i32a(&[Some(1), Some(-2), Some(5), Some(1)]);
        let out = run("ROUND", &[x.clone(), d.clone()], &sig.return_type).unwrap();
        assert_eq!(
            decs(&out),
            vec![Some(123_460), Some(-120_000), Some(-123_449), None]
        );
        // A binder that knows the literal passes findRoundDecimalType's type: DECIMAL(6, 1).
        assert_eq!(round_decimal_type(6, 2, 1), (6, 1));
        assert_eq!(round_decimal_type(6, 2, -1), (5, 0));
        assert_eq!(round_decimal_type(6, 2, 3), (6, 2));
        let out = run("ROUND", &[x.clone(), i32a(&[Some(1); 4])], &dec_type(6, 1)).unwrap();
        assert_eq!(
            decs(&out),
            vec![Some(12_346), Some(-12_345), Some(-12_345), None]
        );
        let out = run("TRUNCATE", &[x, d], &dec_type(6, 2)).unwrap();
        assert_eq!(
            decs(&out),
            vec![Some(123_450), Some(-120_000), Some(-123_449), None]
        );
    }

    #[test]
    fn round_integers_and_floats() {
        let sig = resolve_round(&[
            DataType::not_null(TypeKind::Int),
            DataType::not_null(TypeKind::Int),
        ])
        .unwrap();
        assert_eq!(sig.return_type, DataType::not_null(TypeKind::Int));
        let out = run(
            "ROUND",
            &[
                i64a(&[Some(15), Some(-15), Some(14), Some(7)]),
                i32a(&[Some(-1), Some(-1), Some(-1), Some(2)]),
            ],
            &sig.return_type,
        )
        .unwrap();
        let out: Vec<_> = out.as_primitive::<Int32Type>().iter().collect();
        assert_eq!(out, vec![Some(20), Some(-20), Some(10), Some(7)]);
        let out = run(
            "TRUNCATE",
            &[i64a(&[Some(19), Some(-19)]), i32a(&[Some(-1), Some(-1)])],
            &bigint(true),
        )
        .unwrap();
        let out: Vec<_> = out.as_primitive::<Int64Type>().iter().collect();
        assert_eq!(out, vec![Some(10), Some(-10)]);
        let out = run(
            "ROUND",
            &[f(&[Some(1.25)])],
            &DataType::nullable(TypeKind::Float),
        )
        .unwrap();
        assert_eq!(out.as_primitive::<Float32Type>().value(0), 1.0);
    }

    #[test]
    fn modulo_integers_and_decimals() {
        let sig = resolve_mod(&[
            DataType::not_null(TypeKind::BigInt),
            DataType::not_null(TypeKind::Int),
        ])
        .unwrap();
        assert_eq!(sig.return_type, DataType::not_null(TypeKind::Int));
        let out = run(
            "MOD",
            &[
                i64a(&[Some(7), Some(-7), Some(7), None, Some(i64::MIN)]),
                i64a(&[Some(3), Some(3), Some(-3), Some(1), Some(-1)]),
            ],
            &sig.return_type,
        )
        .unwrap();
        let out: Vec<_> = out.as_primitive::<Int32Type>().iter().collect();
        assert_eq!(out, vec![Some(1), Some(-1), Some(1), None, Some(0)]);
        assert!(
            run(
                "MOD",
                &[i64a(&[Some(1)]), i64a(&[Some(0)])],
                &sig.return_type
            )
            .is_err()
        );
        assert!(resolve_mod(&[double(false), double(false)]).is_err());
        // MOD(DECIMAL(5, 2), INT) → DECIMAL(3, 2)... min(3, 10) + 2.
        let sig = resolve_mod(&[dec_type(5, 2), DataType::nullable(TypeKind::Int)]).unwrap();
        assert_eq!(sig.return_type, dec_type(5, 2));
        assert_eq!(sig.args[1], dec_type(10, 0));
        let out = run(
            "MOD",
            &[
                dec(&[Some(750), Some(-750)], 5, 2),
                dec(&[Some(2), Some(2)], 10, 0),
            ],
            &sig.return_type,
        )
        .unwrap();
        assert_eq!(decs(&out), vec![Some(150), Some(-150)]);
    }

    #[test]
    fn abs_sign_floor_ceil() {
        let int_t = DataType::nullable(TypeKind::Int);
        let out = run("ABS", &[i32a(&[Some(-3), Some(i32::MIN), None])], &int_t).unwrap();
        let out: Vec<_> = out.as_primitive::<Int32Type>().iter().collect();
        assert_eq!(out, vec![Some(3), Some(i32::MIN), None]);
        let out = run(
            "SIGN",
            &[dec(&[Some(-250), Some(0), Some(1)], 5, 2)],
            &dec_type(5, 2),
        )
        .unwrap();
        assert_eq!(decs(&out), vec![Some(-100), Some(0), Some(100)]);
        let sig = resolve_floor_ceil(&[dec_type(5, 2)]).unwrap();
        assert_eq!(sig.return_type, dec_type(5, 0));
        let x = dec(&[Some(-250), Some(250), Some(200), None], 5, 2);
        assert_eq!(
            decs(&run("FLOOR", std::slice::from_ref(&x), &sig.return_type).unwrap()),
            vec![Some(-3), Some(2), Some(2), None]
        );
        assert_eq!(
            decs(&run("CEIL", &[x], &sig.return_type).unwrap()),
            vec![Some(-2), Some(3), Some(2), None]
        );
        let out = run("CEILING", &[f(&[Some(1.2), Some(-1.2)])], &double(true)).unwrap();
        assert_eq!(doubles(&out), vec![Some(2.0), Some(-1.0)]);
    }

    #[test]
    fn double_functions() {
        let d = double(true);
        assert_eq!(
            doubles(
                &run(
                    "POWER",
                    &[f(&[Some(2.0), None]), f(&[Some(10.0), Some(1.0)])],
                    &d
                )
                .unwrap()
            ),
            vec![Some(1024.0), None]
        );
        assert!(
            doubles(&run("SQRT", &[f(&[Some(-1.0)])], &d).unwrap())[0]
                .unwrap()
                .is_nan()
        );
        assert_eq!(
            doubles(&run("LOG", &[f(&[Some(2.0)]), f(&[Some(8.0)])], &d).unwrap()),
            vec![Some(8f64.ln() / 2f64.ln())]
        );
        assert_eq!(
            doubles(&run("LOG10", &[f(&[Some(1000.0)])], &d).unwrap()),
            vec![Some(3.0)]
        );
        assert_eq!(
            doubles(&run("LN", &[f(&[Some(0.0)])], &d).unwrap()),
            vec![Some(f64::NEG_INFINITY)]
        );
        assert_eq!(
            doubles(&run("DEGREES", &[f(&[Some(std::f64::consts::PI)])], &d).unwrap()),
            vec![Some(180.0)]
        );
        assert_eq!(
            doubles(&run("ATAN2", &[f(&[Some(1.0)]), f(&[Some(1.0)])], &d).unwrap()),
            vec![Some(std::f64::consts::FRAC_PI_4)]
        );
        let pi = run("PI", &[], &double(false)).unwrap();
        assert_eq!(pi.len(), 3);
        assert_eq!(doubles(&pi)[2], Some(std::f64::consts::PI));
        assert_eq!(
            resolve_double1(&[dec_type(5, 2)]).unwrap().args,
            vec![double(true)]
        );
    }

    #[test]
    fn java_random_matches_java() {
        // new java.util.Random(42): nextInt(10) → 0, 3, 8; nextDouble() → 0.7275636800328681.
        let mut r = JavaRandom::new(42);
        assert_eq!((r.next_int(10), r.next_int(10), r.next_int(10)), (0, 3, 8));
        assert_eq!(JavaRandom::new(42).next_double(), 0.7275636800328681);
        let out = run("RAND", &[i64a(&[Some(42), Some(42)])], &double(false)).unwrap();
        let v = doubles(&out);
        assert_eq!(v[0], Some(0.7275636800328681));
        assert_ne!(v[0], v[1]);
        let out = run(
            "RAND_INTEGER",
            &[i64a(&[Some(5); 50])],
            &DataType::not_null(TypeKind::Int),
        )
        .unwrap();
        assert!(
            out.as_primitive::<Int32Type>()
                .iter()
                .all(|v| (0..5).contains(&v.unwrap()))
        );
        assert!(
            run(
                "RAND_INTEGER",
                &[i64a(&[Some(0)])],
                &DataType::not_null(TypeKind::Int)
            )
            .is_err()
        );
        let out = run("RAND", &[], &double(false)).unwrap();
        assert!(
            doubles(&out)
                .iter()
                .all(|v| (0.0..1.0).contains(&v.unwrap()))
        );
    }

    #[test]
    fn uuid_bin_hex() {
        let out = run("UUID", &[], &DataType::not_null(TypeKind::Char(36))).unwrap();
        let u = out.as_string::<i32>();
        assert_eq!(u.len(), 3);
        let first = u.value(0);
        assert_eq!(first.len(), 36);
        assert_eq!(&first[14..15], "4");
        assert!(matches!(&first[19..20], "8" | "9" | "a" | "b"));
        assert_ne!(u.value(0), u.value(1));
        let out = run(
            "BIN",
            &[i64a(&[Some(12), Some(0), Some(-1), None])],
            &DataType::string(),
        )
        .unwrap();
        let out: Vec<_> = out.as_string::<i32>().iter().collect();
        assert_eq!(
            out,
            vec![Some("1100"), Some("0"), Some(&*"1".repeat(64)), None]
        );
        let out = run("HEX", &[i64a(&[Some(255), Some(-1)])], &DataType::string()).unwrap();
        let out: Vec<_> = out.as_string::<i32>().iter().collect();
        assert_eq!(out, vec![Some("FF"), Some("FFFFFFFFFFFFFFFF")]);
        let s: ArrayRef = Arc::new(StringArray::from(vec![Some("hé"), None]));
        let out = run("HEX", &[s], &DataType::string()).unwrap();
        let out: Vec<_> = out.as_string::<i32>().iter().collect();
        assert_eq!(out, vec![Some("68C3A9"), None]);
    }
}
