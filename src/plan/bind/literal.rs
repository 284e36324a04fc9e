//! Literals: numbers (exact and approximate), strings, typed DATE / TIME / TIMESTAMP
//! literals and INTERVALs, with Flink's types and ranges.

use super::*;

use sqlparser::ast::{self, Expr, UnaryOperator};
use sqlparser::tokenizer::Span;

use super::super::expr::ScalarExpr;
use crate::function::{self};
use crate::sql::SqlError;
use crate::sql::types::parse_type_text;
use crate::sql::unparse::type_text;
use crate::types::coercion::string_literal_kind;
use crate::types::interval::{IntervalQualifier, IntervalValue};
use crate::types::time::{parse_date, parse_time, parse_timestamp};
use crate::types::value::Value;
use crate::types::{DataType, TypeKind};

pub(super) fn unit_literal(unit: &str) -> ScalarExpr {
    let text = unit.to_uppercase();
    ScalarExpr::Literal {
        data_type: DataType::not_null(string_literal_kind(&text)),
        value: Value::String(text),
    }
}

pub(super) fn literal(value: &ast::Value, span: Span) -> Result<ScalarExpr, SqlError> {
    let (value, kind) = match value {
        ast::Value::Number(text, _) => return number_literal(text, span),
        ast::Value::SingleQuotedString(s) => (Value::String(s.clone()), string_literal_kind(s)),
        ast::Value::Boolean(b) => (Value::Boolean(*b), TypeKind::Boolean),
        ast::Value::Null => {
            return Ok(ScalarExpr::Literal {
                value: Value::Null,
                data_type: DataType::nullable(TypeKind::Null),
            });
        }
        ast::Value::HexStringLiteral(h) => {
            if h.len() % 2 == 1 {
                return Err(error(
                    span,
                    "Binary literal string must contain an even number of hexits",
                ));
            }
            let bytes = (0..h.len() / 2)
                .map(|i| u8::from_str_radix(h.get(2 * i..2 * i + 2).unwrap_or("zz"), 16))
                .collect::<Result<Vec<u8>, _>>()
                .map_err(|_| error(span, "invalid binary literal"))?;
            // `X''` is BINARY(0), as in Flink.
            let n = bytes.len() as u32;
            (Value::Bytes(bytes), TypeKind::Binary(n))
        }
        other => return Err(error(span, format!("unsupported literal {other}"))),
    };
    Ok(ScalarExpr::Literal {
        value,
        data_type: DataType::not_null(kind),
    })
}

/// The text of a number literal, under any parentheses (`-(2147483648)` is an INT too).
pub(super) fn unparenthesized_number(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Nested(inner) => unparenthesized_number(inner),
        Expr::Value(v) => match &v.value {
            ast::Value::Number(text, _) => Some(text),
            _ => None,
        },
        _ => None,
    }
}

/// A numeric literal typed as Calcite types it: a whole number is INT when it fits, else
/// BIGINT; a number with a point is DECIMAL with a precision of its digits as written (leading
/// zeros included: `0.001` is DECIMAL(4, 3)) and a scale of the digits after the point; one
/// with an exponent is DOUBLE. Calcite refuses an exact literal whose digits, without the
/// point, do not fit a BIGINT ("out of range"). `text` may start with a minus.
pub(super) fn number_literal(text: &str, span: Span) -> Result<ScalarExpr, SqlError> {
    let negative = text.starts_with('-');
    let unsigned = text.trim_start_matches('-');
    let out_of_range = |shown: &str| error(span, format!("Numeric literal '{shown}' out of range"));
    if unsigned.contains(['e', 'E']) {
        let v: f64 = text
            .parse()
            .map_err(|_| error(span, format!("invalid number {text}")))?;
        if !v.is_finite() {
            return Err(out_of_range(&text.to_uppercase()));
        }
        // Flink's parser reads `-0.0e0` as one decimal literal, whose zero has no sign (a
        // negated expression keeps Java's -0.0).
        let v = if v == 0.0 { 0.0 } else { v };
        return Ok(ScalarExpr::Literal {
            value: Value::Float(v),
            data_type: DataType::not_null(TypeKind::Double),
        });
    }
    // `5.` is the whole number 5.
    let (int, frac) = match unsigned.split_once('.') {
        Some((int, frac)) => (int, frac),
        None => (unsigned, ""),
    };
    // The number as Java's BigDecimal prints it, for the message.
    let shown = {
        let int = int.trim_start_matches('0');
        let int = if int.is_empty() { "0" } else { int };
        let sign = if negative { "-" } else { "" };
        if frac.is_empty() {
            format!("{sign}{int}")
        } else {
            format!("{sign}{int}.{frac}")
        }
    };
    let digits = format!("{int}{frac}");
    let unscaled = digits
        .parse::<i128>()
        .ok()
        .map(|v| if negative { -v } else { v })
        .and_then(|v| i64::try_from(v).ok())
        .ok_or_else(|| out_of_range(&shown))?;
    let (value, kind) = if frac.is_empty() {
        match i32::try_from(unscaled) {
            Ok(i) => (Value::Int(i64::from(i)), TypeKind::Int),
            Err(_) => (Value::Int(unscaled), TypeKind::BigInt),
        }
    } else {
        (
            Value::Decimal(i128::from(unscaled)),
            TypeKind::Decimal {
                precision: digits.len().clamp(1, 38) as u8,
                scale: frac.len().min(38) as u8,
            },
        )
    };
    Ok(ScalarExpr::Literal {
        value,
        data_type: DataType::not_null(kind),
    })
}

/// The finest TIME Flink computes with: milliseconds.
pub(super) const MAX_TIME_PRECISION: u8 = 3;

/// `t`, with a TIME finer than milliseconds made TIME(3), as Flink types casts and columns.
pub(super) fn millisecond_time(t: &DataType) -> DataType {
    match t.kind {
        TypeKind::Time(p) if p > MAX_TIME_PRECISION => DataType {
            kind: TypeKind::Time(MAX_TIME_PRECISION),
            nullable: t.nullable,
        },
        _ => t.clone(),
    }
}

/// Whether an expression is a number as written (`5`, `-5.5`), which Calcite folds when it is
/// cast to an interval.
pub(super) fn is_number_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Value(v) => matches!(v.value, ast::Value::Number(..)),
        Expr::UnaryOp {
            op: UnaryOperator::Minus | UnaryOperator::Plus,
            expr,
        } => is_number_literal(expr),
        Expr::Nested(inner) => is_number_literal(inner),
        _ => false,
    }
}

/// `CAST(number AS INTERVAL unit)`. A number as written is that many units (Calcite folds it,
/// truncating below the interval's millisecond or month); any other exact integer is the
/// interval's internal count — milliseconds or months — as Flink's runtime cast has it. Only
/// single-unit qualifiers take a number, and only exact numbers.
pub(super) fn cast_to_interval(
    value: ScalarExpr,
    literal: bool,
    qualifier: IntervalQualifier,
    try_cast: bool,
    span: Span,
) -> Result<ScalarExpr, SqlError> {
    let from = value.data_type().clone();
    let refuse = || {
        error(
            span,
            format!(
                "Cast function cannot convert value of type {} to type {}",
                function::cast::calcite_type_name(&from.kind),
                qualifier.sql()
            ),
        )
    };
    let exact = from.kind.is_integer() || matches!(from.kind, TypeKind::Decimal { .. });
    if !qualifier.is_single_unit() || !exact {
        return Err(refuse());
    }
    let kind = if qualifier.is_year_month() {
        TypeKind::IntervalYearMonth
    } else {
        TypeKind::IntervalDayTime
    };
    if literal && let ScalarExpr::Literal { value: v, .. } = &value {
        let (unscaled, scale) = match (v, &from.kind) {
            (Value::Int(i), _) => (i128::from(*i), 0),
            (Value::Decimal(d), TypeKind::Decimal { scale, .. }) => (*d, u32::from(*scale)),
            _ => return Err(refuse()),
        };
        let count = unscaled * i128::from(qualifier.unit_size()) / 10i128.pow(scale);
        let overflow = || error(span, format!("interval value {count} is out of range"));
        let value = if qualifier.is_year_month() {
            Value::IntervalMonths(i32::try_from(count).map_err(|_| overflow())?, qualifier)
        } else {
            Value::IntervalMillis(i64::try_from(count).map_err(|_| overflow())?, qualifier)
        };
        return Ok(ScalarExpr::Literal {
            value,
            data_type: DataType::not_null(kind),
        });
    }
    let target = DataType {
        kind,
        nullable: from.nullable || try_cast,
    };
    if !from.kind.is_integer() {
        return Err(error(
            span,
            format!("Unsupported cast from '{from}' to '{target}'."),
        ));
    }
    Ok(ScalarExpr::Cast {
        expr: Box::new(value),
        data_type: target,
        try_cast,
        implicit: false,
    })
}

pub(super) fn flink_type(data_type: &ast::DataType, span: Span) -> Result<DataType, SqlError> {
    let text = type_text(data_type);
    parse_type_text(&text).map_err(|_| error(span, format!("unsupported type {text}")))
}

pub(super) fn fraction_digits(text: &str) -> u8 {
    text.rsplit_once('.')
        .map_or(0, |(_, f)| f.trim().len().min(9) as u8)
}

pub(super) fn typed_literal(
    data_type: &ast::DataType,
    text: &str,
    span: Span,
) -> Result<ScalarExpr, SqlError> {
    let ty = flink_type(data_type, span)?;
    let bad = || error(span, format!("invalid {} literal '{text}'", ty.kind));
    let (value, kind) = match ty.kind {
        TypeKind::Date => (
            Value::Date(parse_date(text).ok_or_else(bad)? as i32),
            TypeKind::Date,
        ),
        // Flink keeps TIME to the millisecond: `TIME '01:02:03.123456'` is TIME(3).
        TypeKind::Time(_) => {
            let nanos = parse_time(text).ok_or_else(bad)?;
            (
                Value::Time(nanos - nanos % 1_000_000),
                TypeKind::Time(fraction_digits(text).min(MAX_TIME_PRECISION)),
            )
        }
        TypeKind::Timestamp(_) => (
            Value::Timestamp(parse_timestamp(text).ok_or_else(bad)?),
            TypeKind::Timestamp(fraction_digits(text)),
        ),
        _ => {
            return Err(error(
                span,
                format!("{} literals are not supported", ty.kind),
            ));
        }
    };
    Ok(ScalarExpr::Literal {
        value,
        data_type: DataType::not_null(kind),
    })
}

pub(super) fn interval_literal(
    interval: &ast::Interval,
    span: Span,
) -> Result<ScalarExpr, SqlError> {
    let text = match interval.value.as_ref() {
        Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => s.clone(),
            ast::Value::Number(n, _) => n.clone(),
            other => other.to_string(),
        },
        other => {
            return Err(error(
                span,
                format!("interval value must be a literal, got {other}"),
            ));
        }
    };
    let unit = |f: &Option<ast::DateTimeField>| f.as_ref().map(|f| f.to_string());
    let leading =
        unit(&interval.leading_field).ok_or_else(|| error(span, "interval needs a unit"))?;
    let last = unit(&interval.last_field);
    let qualifier = IntervalQualifier::new(&leading, last.as_deref(), interval.leading_precision)
        .map_err(|m| error(span, m))?;
    Ok(
        match qualifier.evaluate(&text).map_err(|m| error(span, m))? {
            IntervalValue::Months(months) => ScalarExpr::Literal {
                value: Value::IntervalMonths(months, qualifier),
                data_type: DataType::not_null(TypeKind::IntervalYearMonth),
            },
            IntervalValue::Millis(millis) => ScalarExpr::Literal {
                value: Value::IntervalMillis(millis, qualifier),
                data_type: DataType::not_null(TypeKind::IntervalDayTime),
            },
        },
    )
}
