//! Flink's implicit type widening and the result types of arithmetic.

use super::{DataType, TypeKind};

/// Digits before the point that an integer type needs as a DECIMAL (Flink's
/// `getPrecision` of TINYINT/SMALLINT/INT/BIGINT).
fn integer_digits(kind: &TypeKind) -> Option<u8> {
    match kind {
        TypeKind::TinyInt => Some(3),
        TypeKind::SmallInt => Some(5),
        TypeKind::Int => Some(10),
        TypeKind::BigInt => Some(19),
        _ => None,
    }
}

/// An exact numeric type as DECIMAL(p, s).
pub fn as_decimal(kind: &TypeKind) -> Option<(u8, u8)> {
    match kind {
        TypeKind::Decimal { precision, scale } => Some((*precision, *scale)),
        other => integer_digits(other).map(|p| (p, 0)),
    }
}

fn numeric_rank(kind: &TypeKind) -> u8 {
    match kind {
        TypeKind::TinyInt => 1,
        TypeKind::SmallInt => 2,
        TypeKind::Int => 3,
        TypeKind::BigInt => 4,
        TypeKind::Decimal { .. } => 5,
        TypeKind::Float => 6,
        TypeKind::Double => 7,
        _ => 0,
    }
}

pub fn decimal(precision: u8, scale: u8) -> TypeKind {
    let precision = precision.clamp(1, 38);
    TypeKind::Decimal {
        precision,
        scale: scale.min(precision),
    }
}

/// The least restrictive kind of two kinds (Flink's `LogicalTypeMerging.findCommonType`), or
/// `None` when they have none.
pub fn common_kind(a: &TypeKind, b: &TypeKind) -> Option<TypeKind> {
    use TypeKind::*;
    if a == b {
        return Some(a.clone());
    }
    match (a, b) {
        (Null, other) | (other, Null) => Some(other.clone()),
        // FLOAT has too few digits for a DECIMAL: they meet in a DOUBLE.
        (Float, Decimal { .. }) | (Decimal { .. }, Float) => Some(Double),
        _ if a.is_numeric() && b.is_numeric() => {
            if let (Some((p1, s1)), Some((p2, s2))) = (as_decimal(a), as_decimal(b))
                && (matches!(a, Decimal { .. }) || matches!(b, Decimal { .. }))
            {
                let scale = s1.max(s2);
                let digits = (p1 - s1).max(p2 - s2);
                return Some(decimal(digits.saturating_add(scale), scale));
            }
            Some(if numeric_rank(a) >= numeric_rank(b) {
                a.clone()
            } else {
                b.clone()
            })
        }
        // CHARs of different lengths meet in a VARCHAR (Flink pads nothing): VALUES ('a'),
        // ('abc') is VARCHAR(3).
        (Char(x) | VarChar(x), Char(y) | VarChar(y)) => Some(VarChar(*x.max(y))),
        (Binary(x) | VarBinary(x), Binary(y) | VarBinary(y)) => Some(VarBinary(*x.max(y))),
        (Timestamp(p), Timestamp(q)) => Some(Timestamp(*p.max(q))),
        (TimestampLtz(p), TimestampLtz(q)) => Some(TimestampLtz(*p.max(q))),
        (Timestamp(p), TimestampLtz(q)) | (TimestampLtz(q), Timestamp(p)) => {
            Some(TimestampLtz(*p.max(q)))
        }
        (Date, Timestamp(p)) | (Timestamp(p), Date) => Some(Timestamp(*p)),
        (Time(p), Time(q)) => Some(Time(*p.max(q))),
        (Array(x), Array(y)) => Some(Array(Box::new(common_type(x, y)?))),
        (Map(kx, vx), Map(ky, vy)) => Some(Map(
            Box::new(common_type(kx, ky)?),
            Box::new(common_type(vx, vy)?),
        )),
        // Rows meet field by field; the names are the first row's.
        (Row(x), Row(y)) if x.len() == y.len() => Some(Row(x
            .iter()
            .zip(y)
            .map(|((name, a), (_, b))| Some((name.clone(), common_type(a, b)?)))
            .collect::<Option<Vec<_>>>()?)),
        _ => None,
    }
}

/// Whether a value of kind `from` may be written into a column of kind `to` without an
/// explicit CAST (Flink's implicit casts for INSERT): widening within the numbers, any
/// length within the character strings and within the binary strings, and between the
/// date-time kinds.
pub fn can_assign(from: &TypeKind, to: &TypeKind) -> bool {
    use TypeKind::*;
    let datetime = |k: &TypeKind| matches!(k, Date | Timestamp(_) | TimestampLtz(_));
    match (from, to) {
        _ if from == to || *from == Null => true,
        // A VARCHAR is not implicitly a CHAR (Flink's sink check refuses VARCHAR(4) → CHAR(3)).
        (VarChar(_), Char(_)) => false,
        _ if from.is_string() && to.is_string() => true,
        _ if from.is_binary() && to.is_binary() => true,
        (Timestamp(_) | TimestampLtz(_), t) if datetime(t) && *t != Date => true,
        (Date, Timestamp(_) | TimestampLtz(_)) => true,
        (Time(_), Time(_)) => true,
        (Array(a), Array(b)) => can_assign(&a.kind, &b.kind),
        (Map(ka, va), Map(kb, vb)) => {
            can_assign(&ka.kind, &kb.kind) && can_assign(&va.kind, &vb.kind)
        }
        (Row(a), Row(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((_, x), (_, y))| can_assign(&x.kind, &y.kind))
        }
        _ if from.is_numeric() && to.is_numeric() => common_kind(from, to)
            .is_some_and(|c| std::mem::discriminant(&c) == std::mem::discriminant(to)),
        _ => false,
    }
}

/// The common type of several types (nullable if any is).
pub fn common_type(a: &DataType, b: &DataType) -> Option<DataType> {
    Some(DataType {
        kind: common_kind(&a.kind, &b.kind)?,
        nullable: a.nullable || b.nullable,
    })
}

/// The type both sides of a comparison are brought to: their common type, or — Calcite's
/// comparison coercion — the datetime type when a DATE, TIME or TIMESTAMP meets a character
/// string (`d < '2020-06-01'` reads the string as a DATE). Numbers never meet strings.
pub fn comparison_type(a: &DataType, b: &DataType) -> Option<DataType> {
    use TypeKind::*;
    let datetime = |k: &TypeKind| matches!(k, Date | Time(_) | Timestamp(_) | TimestampLtz(_));
    let kind = match (&a.kind, &b.kind) {
        (x, y) if datetime(x) && y.is_string() => x.clone(),
        (x, y) if x.is_string() && datetime(y) => y.clone(),
        (x, y) => common_kind(x, y)?,
    };
    Some(DataType {
        kind,
        nullable: a.nullable || b.nullable,
    })
}

pub fn common_type_of(types: &[DataType]) -> Option<DataType> {
    let mut iter = types.iter();
    let first = iter.next()?.clone();
    iter.try_fold(first, |acc, t| common_type(&acc, t))
}

/// The result type of `a op b` for `+ - * / %` on numbers (Flink's
/// `LogicalTypeMerging.findAdditionDecimalType` and friends).
pub fn arithmetic_kind(op: &str, a: &TypeKind, b: &TypeKind) -> Option<TypeKind> {
    if !a.is_numeric() || !b.is_numeric() {
        return None;
    }
    let approximate = matches!(a, TypeKind::Float | TypeKind::Double)
        || matches!(b, TypeKind::Float | TypeKind::Double);
    let has_decimal =
        matches!(a, TypeKind::Decimal { .. }) || matches!(b, TypeKind::Decimal { .. });
    let both_approximate = matches!(a, TypeKind::Float | TypeKind::Double)
        && matches!(b, TypeKind::Float | TypeKind::Double);
    if both_approximate && op != "%" {
        // Flink types FLOAT op DOUBLE by its left operand: FLOAT + DOUBLE is FLOAT.
        return Some(a.clone());
    }
    if approximate && has_decimal {
        // … and FLOAT op DECIMAL is DOUBLE.
        return Some(TypeKind::Double);
    }
    if approximate || !has_decimal {
        if op == "%" && !approximate {
            // MOD returns the type of the divisor.
            return Some(b.clone());
        }
        return common_kind(a, b);
    }
    let (p1, s1) = as_decimal(a)?;
    let (p2, s2) = as_decimal(b)?;
    let (p1, s1, p2, s2) = (p1 as i32, s1 as i32, p2 as i32, s2 as i32);
    let (precision, scale) = match op {
        "+" | "-" => {
            let scale = s1.max(s2);
            ((p1 - s1).max(p2 - s2) + scale + 1, scale)
        }
        "*" => (p1 + p2 + 1, s1 + s2),
        "/" => {
            let int_digits = p1 - s1 + s2;
            let scale = 6.max(s1 + p2 + 1);
            (int_digits + scale, scale)
        }
        "%" => {
            let scale = s1.max(s2);
            ((p1 - s1).min(p2 - s2) + scale, scale)
        }
        _ => return None,
    };
    Some(adjust_precision_scale(precision, scale))
}

/// Fits (precision, scale) into 38 digits, keeping at least 6 digits of scale (Flink's
/// `adjustPrecisionScale`).
fn adjust_precision_scale(precision: i32, scale: i32) -> TypeKind {
    if precision <= 38 {
        return decimal(precision.max(1) as u8, scale.max(0) as u8);
    }
    let int_digits = precision - scale;
    let min_scale = scale.min(6);
    let scale = (38 - int_digits).max(min_scale);
    decimal(38, scale.max(0) as u8)
}

/// Flink's type of a character literal: CHAR(n) NOT NULL (CHAR(1)… for the empty string,
/// whose length 0 Flink shows as CHAR(0)).
pub fn string_literal_kind(text: &str) -> TypeKind {
    TypeKind::Char(text.chars().count() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_arithmetic_types() {
        let d = |p, s| TypeKind::Decimal {
            precision: p,
            scale: s,
        };
        assert_eq!(arithmetic_kind("+", &d(10, 2), &d(5, 3)), Some(d(12, 3)));
        assert_eq!(
            arithmetic_kind("*", &d(10, 2), &TypeKind::Int),
            Some(d(21, 2))
        );
        assert_eq!(arithmetic_kind("*", &d(38, 20), &d(38, 20)), Some(d(38, 6)));
        // Flink's FLOAT quirks: typed by the left operand against DOUBLE, DOUBLE with DECIMAL.
        assert_eq!(
            arithmetic_kind("+", &TypeKind::Float, &TypeKind::Double),
            Some(TypeKind::Float)
        );
        assert_eq!(
            arithmetic_kind("+", &TypeKind::Double, &TypeKind::Float),
            Some(TypeKind::Double)
        );
        assert_eq!(
            arithmetic_kind("/", &TypeKind::Float, &d(5, 2)),
            Some(TypeKind::Double)
        );
        assert_eq!(arithmetic_kind("/", &d(38, 10), &d(38, 10)), Some(d(38, 6)));
        assert_eq!(
            arithmetic_kind("+", &TypeKind::Int, &TypeKind::BigInt),
            Some(TypeKind::BigInt)
        );
        assert_eq!(
            arithmetic_kind("+", &TypeKind::Int, &TypeKind::Double),
            Some(TypeKind::Double)
        );
        assert_eq!(common_kind(&d(10, 2), &TypeKind::Int), Some(d(12, 2)));
    }
}
