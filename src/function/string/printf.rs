//! PRINTF: Java's `String.format` over the SQL values as Flink hands them to it. A format
//! that does not suit an argument (`%d` of a string, `%f` of a DECIMAL, which Flink passes as
//! its own decimal class) gives NULL, as Flink turns Java's format exception into NULL; a NULL
//! argument prints `null` (`false` under `%b`); a NULL format gives NULL.

use std::fmt::Write;
use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType as ArrowType;

use super::{expect_strings, strs};
use crate::function::{EvalContext, EvalError, FunctionDef, Signature, string_type};
use crate::types::java_text::group_thousands;
use crate::types::text::{format_value, write_decimal, write_java_double, write_java_float};
use crate::types::time::SessionZone;
use crate::types::{DataType, TypeKind};

pub const FUNCTIONS: &[FunctionDef] = &[def!("PRINTF", resolve_printf, printf)];

fn resolve_printf(args: &[DataType]) -> Result<Signature, String> {
    let (format, rest) = args.split_first().ok_or("PRINTF expects (format, args…)")?;
    expect_strings("PRINTF", std::slice::from_ref(format))?;
    let mut sig = vec![string_type(format.nullable)];
    sig.extend(rest.iter().map(|a| {
        if a.kind == TypeKind::Null {
            string_type(true)
        } else {
            a.clone()
        }
    }));
    Ok(Signature::new(sig, string_type(true)))
}

/// One argument as Java sees it.
enum Arg {
    Null,
    /// An integer and its width in bits (for `%x` of negatives).
    Int(i64, u32),
    Float(f64, bool),
    Bool(bool),
    /// Text that only `%s` accepts (strings, decimals, other objects).
    Text(String),
}

fn arg(array: &ArrayRef, row: usize, zone: &SessionZone) -> Arg {
    if array.is_null(row) {
        return Arg::Null;
    }
    match array.data_type() {
        ArrowType::Int8 => Arg::Int(array.as_primitive::<Int8Type>().value(row) as i64, 8),
        ArrowType::Int16 => Arg::Int(array.as_primitive::<Int16Type>().value(row) as i64, 16),
        ArrowType::Int32 => Arg::Int(array.as_primitive::<Int32Type>().value(row) as i64, 32),
        ArrowType::Int64 => Arg::Int(array.as_primitive::<Int64Type>().value(row), 64),
        // Flink passes a DATE as its day number.
        ArrowType::Date32 => Arg::Int(array.as_primitive::<Date32Type>().value(row) as i64, 32),
        ArrowType::Float32 => {
            Arg::Float(array.as_primitive::<Float32Type>().value(row) as f64, true)
        }
        ArrowType::Float64 => Arg::Float(array.as_primitive::<Float64Type>().value(row), false),
        ArrowType::Boolean => Arg::Bool(array.as_boolean().value(row)),
        ArrowType::Utf8 => Arg::Text(array.as_string::<i32>().value(row).to_string()),
        ArrowType::Decimal128(_, scale) => {
            let mut s = String::new();
            write_decimal(
                &mut s,
                array.as_primitive::<Decimal128Type>().value(row),
                (*scale).max(0) as u8,
            );
            Arg::Text(s)
        }
        other => {
            let ty = DataType::nullable(TypeKind::from_arrow(other));
            Arg::Text(format_value(array, row, &ty, zone).unwrap_or_else(|| "null".into()))
        }
    }
}

/// `%[index$][flags][width][.precision]conversion`.
struct Spec {
    index: Option<usize>,
    left: bool,
    plus: bool,
    space: bool,
    zero: bool,
    group: bool,
    /// `(`: a negative number in parentheses.
    paren: bool,
    width: usize,
    precision: Option<usize>,
    conversion: char,
}

fn parse_spec(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<Spec> {
    let mut digits = String::new();
    while let Some(&c) = chars.peek() {
        if c.is_ascii_digit() {
            digits.push(c);
            chars.next();
        } else {
            break;
        }
    }
    let mut index = None;
    if chars.peek() == Some(&'$') {
        chars.next();
        index = Some(digits.parse::<usize>().ok()?.checked_sub(1)?);
        digits.clear();
    }
    let mut spec = Spec {
        index,
        left: false,
        plus: false,
        space: false,
        zero: false,
        group: false,
        paren: false,
        width: 0,
        precision: None,
        conversion: ' ',
    };
    if digits.is_empty() {
        while let Some(&c) = chars.peek() {
            match c {
                '-' => spec.left = true,
                '+' => spec.plus = true,
                ' ' => spec.space = true,
                '0' => spec.zero = true,
                ',' => spec.group = true,
                '(' => spec.paren = true,
                _ => break,
            }
            chars.next();
        }
        while let Some(&c) = chars.peek() {
            if c.is_ascii_digit() {
                digits.push(c);
                chars.next();
            } else {
                break;
            }
        }
    } else if digits.starts_with('0') {
        spec.zero = true;
    }
    spec.width = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    if chars.peek() == Some(&'.') {
        chars.next();
        let mut p = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_ascii_digit() {
                p.push(c);
                chars.next();
            } else {
                break;
            }
        }
        spec.precision = Some(p.parse().ok()?);
    }
    spec.conversion = chars.next()?;
    // Java's conversions; only some have an upper-case form.
    if !"bBhHsScCdoxXeEfgGaA".contains(spec.conversion) {
        return None;
    }
    // Java takes `(` for decimal integers and floating point only.
    if spec.paren && !"deEfgG".contains(spec.conversion) {
        return None;
    }
    // Wider or more precise than this is a runaway format; NULL rather than gigabytes.
    if spec.width > MAX_FIELD || spec.precision.is_some_and(|p| p > MAX_FIELD) {
        return None;
    }
    Some(spec)
}

/// The largest width or precision PRINTF honours.
const MAX_FIELD: usize = 10_000;

/// `v` in fixed notation with `p` fraction digits, rounded HALF_UP from its shortest decimal
/// form, as Java's Formatter does (`%.0f` of 2.5 is `3`).
fn fixed(v: f64, p: usize) -> String {
    if !v.is_finite() {
        return non_finite(v);
    }
    // Shortest round-trip digits d.ddd and exponent: the value is 0.d1d2… × 10^(exp + 1).
    let sci = format!("{:e}", v.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let digits: Vec<u8> = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    // Keep the digits down to the p-th fraction digit, rounding half up on the next one.
    let keep = exp + 1 + p as i64;
    let mut kept: Vec<u8> = if keep <= 0 {
        Vec::new()
    } else {
        let mut k: Vec<u8> = digits.iter().copied().take(keep as usize).collect();
        k.resize(keep as usize, 0);
        k
    };
    let round_up = keep >= 0 && digits.get(keep as usize).is_some_and(|&d| d >= 5);
    let mut int_len = exp + 1;
    if round_up {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, 1);
                int_len += 1;
                break;
            }
            i -= 1;
            if kept[i] == 9 {
                kept[i] = 0;
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    let digit = |d: &u8| (b'0' + d) as char;
    let int_digits: String = if int_len > 0 {
        kept.iter().take(int_len as usize).map(digit).collect()
    } else {
        "0".to_string()
    };
    let mut frac: String = "0".repeat(((-int_len).max(0) as usize).min(p));
    frac.extend(kept.iter().skip(int_len.max(0) as usize).map(digit));
    frac.truncate(p);
    while frac.len() < p {
        frac.push('0');
    }
    let sign = if v.is_sign_negative() && kept.iter().any(|&d| d != 0) {
        "-"
    } else {
        ""
    };
    if p == 0 {
        format!("{sign}{int_digits}")
    } else {
        format!("{sign}{int_digits}.{frac}")
    }
}

/// `%e`: one digit, `p` fraction digits, and a signed exponent of at least two digits.
fn scientific(v: f64, p: usize) -> String {
    if !v.is_finite() {
        return non_finite(v);
    }
    let raw = format!("{v:.p$e}");
    let (m, e) = raw.split_once('e').unwrap_or((&raw, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

fn non_finite(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v > 0.0 {
        "Infinity".into()
    } else {
        "-Infinity".into()
    }
}

/// The text of one conversion, or `None` when the argument does not suit it.
fn convert(spec: &Spec, arg: &Arg) -> Option<String> {
    let upper = spec.conversion.is_ascii_uppercase();
    let mut text = match (spec.conversion.to_ascii_lowercase(), arg) {
        ('s', a) => {
            let mut s = match a {
                Arg::Null => "null".to_string(),
                Arg::Int(v, _) => v.to_string(),
                Arg::Float(v, true) => {
                    let mut s = String::new();
                    write_java_float(&mut s, *v as f32);
                    s
                }
                Arg::Float(v, false) => {
                    let mut s = String::new();
                    write_java_double(&mut s, *v);
                    s
                }
                Arg::Bool(b) => b.to_string(),
                Arg::Text(t) => t.clone(),
            };
            if let Some(p) = spec.precision {
                s = s.chars().take(p).collect();
            }
            s
        }
        ('b', a) => match a {
            Arg::Null => "false".into(),
            Arg::Bool(b) => b.to_string(),
            _ => "true".into(),
        },
        // Java prints a null argument as the text "null" under any conversion, cut to the
        // precision like `%s` (`%.2f` of NULL is `nu`).
        (_, Arg::Null) => match spec.precision {
            Some(p) => "null".chars().take(p).collect(),
            None => "null".into(),
        },
        ('d', Arg::Int(v, _)) => {
            let digits = v.unsigned_abs().to_string();
            let digits = if spec.group {
                group_thousands(&digits)
            } else {
                digits
            };
            let sign = if *v < 0 && spec.paren {
                "("
            } else if *v < 0 {
                "-"
            } else if spec.plus {
                "+"
            } else if spec.space {
                " "
            } else {
                ""
            };
            let close = if sign == "(" { ")" } else { "" };
            let pad = spec
                .width
                .saturating_sub(sign.len() + digits.len() + close.len());
            if spec.zero && !spec.left {
                format!("{sign}{}{digits}{close}", "0".repeat(pad))
            } else {
                format!("{sign}{digits}{close}")
            }
        }
        ('x' | 'o', Arg::Int(v, bits)) => {
            let mask = if *bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            let u = (*v as u64) & mask;
            let s = if spec.conversion.eq_ignore_ascii_case(&'x') {
                format!("{u:x}")
            } else {
                format!("{u:o}")
            };
            let pad = spec.width.saturating_sub(s.len());
            if spec.zero && !spec.left {
                format!("{}{s}", "0".repeat(pad))
            } else {
                s
            }
        }
        ('c', Arg::Int(v, _)) => char::from_u32(u32::try_from(*v).ok()?)?.to_string(),
        ('f' | 'e' | 'g', Arg::Float(v, _)) => {
            let p = spec.precision.unwrap_or(6);
            let mut s = match spec.conversion.to_ascii_lowercase() {
                'f' => fixed(*v, p),
                'e' => scientific(*v, p),
                _ => {
                    // %g: p significant digits; fixed for 10^-4 <= |v| < 10^p, else %e.
                    let p = p.max(1);
                    let magnitude = v.abs();
                    if !v.is_finite()
                        || magnitude != 0.0
                            && (magnitude < 1e-4 || magnitude >= 10f64.powi(p as i32))
                    {
                        scientific(*v, p - 1)
                    } else {
                        let exp = if magnitude == 0.0 {
                            0
                        } else {
                            magnitude.log10().floor() as i64
                        };
                        fixed(*v, (p as i64 - 1 - exp).max(0) as usize)
                    }
                }
            };
            if spec.group {
                let (int, frac) = s
                    .split_once('.')
                    .map_or((s.as_str(), None), |(i, f)| (i, Some(f)));
                let (sign, int) = int.strip_prefix('-').map_or(("", int), |i| ("-", i));
                let grouped = group_thousands(int);
                s = match frac {
                    Some(f) => format!("{sign}{grouped}.{f}"),
                    None => format!("{sign}{grouped}"),
                };
            }
            if spec.plus && *v >= 0.0 {
                s.insert(0, '+');
            }
            if spec.paren
                && let Some(magnitude) = s.strip_prefix('-')
            {
                s = format!("({magnitude})");
            }
            let pad = spec.width.saturating_sub(s.len());
            if spec.zero && !spec.left {
                let at = usize::from(s.starts_with(['-', '+', '(']));
                s.insert_str(at, &"0".repeat(pad));
            }
            s
        }
        _ => return None,
    };
    if upper {
        text = text.to_uppercase();
    }
    let pad = spec.width.saturating_sub(text.chars().count());
    if pad > 0 {
        if spec.left {
            text.push_str(&" ".repeat(pad));
        } else {
            text.insert_str(0, &" ".repeat(pad));
        }
    }
    Some(text)
}

/// Formats one row; `None` when Java would throw.
fn format_row(format: &str, args: &[Arg], out: &mut String) -> Option<()> {
    let mut chars = format.chars().peekable();
    let mut next = 0;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('%') => {
                chars.next();
                out.push('%');
                continue;
            }
            Some('n') => {
                chars.next();
                out.push('\n');
                continue;
            }
            _ => {}
        }
        let spec = parse_spec(&mut chars)?;
        let index = match spec.index {
            Some(i) => i,
            None => {
                next += 1;
                next - 1
            }
        };
        let text = convert(&spec, args.get(index)?)?;
        let _ = write!(out, "{text}");
    }
    Some(())
}

fn printf(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let formats = strs(&args[0]);
    let mut b = StringBuilder::with_capacity(ctx.num_rows, 0);
    let mut out = String::new();
    let mut row_args = Vec::with_capacity(args.len() - 1);
    for i in 0..ctx.num_rows {
        if formats.is_null(i) {
            b.append_null();
            continue;
        }
        row_args.clear();
        row_args.extend(args[1..].iter().map(|a| arg(a, i, &ctx.zone)));
        out.clear();
        match format_row(formats.value(i), &row_args, &mut out) {
            Some(()) => b.append_value(&out),
            None => b.append_null(),
        }
    }
    Ok(Arc::new(b.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(format: &str, args: &[Arg]) -> Option<String> {
        let mut out = String::new();
        format_row(format, args, &mut out).map(|()| out)
    }

    #[test]
    fn java_format_subset() {
        assert_eq!(
            fmt("%s-%d", &[Arg::Text("a".into()), Arg::Int(5, 32)]).as_deref(),
            Some("a-5")
        );
        assert_eq!(
            fmt("%s-%d", &[Arg::Null, Arg::Null]).as_deref(),
            Some("null-null")
        );
        assert_eq!(fmt("%d", &[Arg::Text("a".into())]), None);
        assert_eq!(
            fmt("%5.2f", &[Arg::Float(std::f64::consts::PI, false)]).as_deref(),
            Some(" 3.14")
        );
        assert_eq!(fmt("%x", &[Arg::Int(255, 32)]).as_deref(), Some("ff"));
        assert_eq!(fmt("%x", &[Arg::Int(-1, 32)]).as_deref(), Some("ffffffff"));
        assert_eq!(fmt("%s %s", &[Arg::Text("a".into())]), None);
        assert_eq!(fmt("%b", &[Arg::Bool(true)]).as_deref(), Some("true"));
        assert_eq!(fmt("nofmt", &[]).as_deref(), Some("nofmt"));
        assert_eq!(
            fmt(
                "%-4s|%04d|%,d",
                &[
                    Arg::Text("a".into()),
                    Arg::Int(7, 32),
                    Arg::Int(1234567, 64)
                ]
            )
            .as_deref(),
            Some("a   |0007|1,234,567")
        );
        assert_eq!(
            fmt("%2$s %1$s", &[Arg::Text("a".into()), Arg::Text("b".into())]).as_deref(),
            Some("b a")
        );
        let floats = [
            Arg::Float(2.5, false),
            Arg::Float(0.125, false),
            Arg::Float(-0.05, false),
        ];
        assert_eq!(
            fmt("%.0f %.2f %.1f", &floats).as_deref(),
            Some("3 0.13 -0.1")
        );
        let odd = [
            Arg::Float(f64::INFINITY, false),
            Arg::Float(f64::NAN, false),
        ];
        assert_eq!(fmt("%f %e", &odd).as_deref(), Some("Infinity NaN"));
        let g = [Arg::Float(2.5, false), Arg::Float(1e-5, false)];
        assert_eq!(fmt("%g %g", &g).as_deref(), Some("2.50000 1.00000e-05"));
        assert_eq!(
            fmt("%.3f", &[Arg::Float(99.9996, false)]).as_deref(),
            Some("100.000")
        );
        assert_eq!(
            fmt("%.3f", &[Arg::Float(0.0004, false)]).as_deref(),
            Some("0.000")
        );
        assert_eq!(fmt("%D", &[Arg::Int(1, 32)]), None);
        assert_eq!(fmt("%q", &[Arg::Null]), None);
        assert_eq!(
            fmt("%.2f|%5.1f|%S", &[Arg::Null, Arg::Null, Arg::Null]).as_deref(),
            Some("nu|    n|NULL")
        );
        assert_eq!(fmt("%.70000f", &[Arg::Float(1.0, false)]), None);
        assert_eq!(fmt("%2000000000s", &[Arg::Null]), None);
    }
}
