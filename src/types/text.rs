//! Values ↔ text, a column at a time.
//!
//! [`format_column`] is Flink's `CAST(x AS STRING)`; [`format_value`] renders one cell the way
//! Flink prints results (the tableau and the `print` sink: the same text as CAST, except that
//! BYTES print as `x'0102ff'`). [`parse_column`] is `CAST(STRING AS T)`; it never fails as a
//! whole: rows that do not parse come back NULL with a message, and the caller decides whether
//! that is an error (CAST), a NULL (TRY_CAST) or a skipped row (formats). The formats read
//! through [`parse_column_as`] with their own [`TextDialect`], because Flink's CSV and JSON
//! converters accept slightly different text than CAST does.
//!
//! Rendering rules (checked against Flink 2.3's sql-client):
//! - BOOLEAN `TRUE` / `FALSE`; FLOAT and DOUBLE as Java 17's `Float.toString` / `Double.toString`
//!   (`1.0`, `0.1`, `1.0E10`, `1.0E-4`, `NaN`, `Infinity`); DECIMAL plain with exactly its scale.
//! - DATE `yyyy-MM-dd`; TIME(p) `HH:mm:ss` and, for p > 0, the milliseconds without trailing
//!   zeros but at least one digit (`01:02:03.1`, `00:00:00.0`); TIMESTAMP(p) and
//!   TIMESTAMP_LTZ(p) (in the session zone) `yyyy-MM-dd HH:mm:ss` plus exactly p digits.
//! - INTERVAL DAY TO SECOND `+1 02:03:00.000`, INTERVAL YEAR TO MONTH `+1-02`.
//! - ARRAY `[1, NULL]`, MAP `{a=1, b=NULL}`, ROW `(1, x)`; nested NULL is `NULL`.

use std::fmt::Write;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, NullArray, PrimitiveArray,
    StringArray,
};
use arrow_buffer::{NullBuffer, ScalarBuffer};

use super::time::{
    SessionZone, days_from_civil, days_in_month, parse_date, parse_digits, truncate_to_precision,
    write_date, write_time, write_timestamp,
};
use super::{DataType, MILLIS_PER_DAY, NANOS_PER_DAY, NANOS_PER_MILLI, NANOS_PER_SECOND, TypeKind};

// ------------------------------------------------------------------------------------------
// Formatting
// ------------------------------------------------------------------------------------------

/// How a value becomes text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextStyle {
    /// `CAST(x AS STRING)`: BYTES decode as UTF-8.
    Cast,
    /// Printed results (tableau, `print` sink): BYTES as `x'0102ff'`.
    Print,
}

/// `CAST(x AS STRING)` of a whole column; NULL stays NULL.
pub fn format_column(array: &ArrayRef, data_type: &DataType, zone: &SessionZone) -> StringArray {
    format_column_with(array, data_type, zone, TextStyle::Cast)
}

/// [`format_column`] in a chosen style.
pub fn format_column_with(
    array: &ArrayRef,
    data_type: &DataType,
    zone: &SessionZone,
    style: TextStyle,
) -> StringArray {
    let len = array.len();
    let mut values = String::with_capacity(len * 8);
    let mut offsets: Vec<i32> = Vec::with_capacity(len + 1);
    offsets.push(0);
    let mut valid = Vec::with_capacity(len);
    for row in 0..len {
        if array.is_null(row) {
            valid.push(false);
        } else {
            write_cell(&mut values, array.as_ref(), row, data_type, zone, style);
            valid.push(true);
        }
        // Offsets are i32: a column of more than 2 GiB of text is cut rather than panicking.
        let end = i32::try_from(values.len()).unwrap_or(i32::MAX);
        offsets.push(end);
    }
    let nulls = NullBuffer::from(valid);
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    StringArray::try_new(
        arrow_buffer::OffsetBuffer::new(ScalarBuffer::from(offsets)),
        arrow_buffer::Buffer::from(values.into_bytes()),
        nulls,
    )
    .unwrap_or_else(|_| StringArray::new_null(len))
}

/// One cell as Flink prints it (tableau, `print` sink); `None` for NULL.
pub fn format_value(
    array: &ArrayRef,
    row: usize,
    data_type: &DataType,
    zone: &SessionZone,
) -> Option<String> {
    format_value_with(array.as_ref(), row, data_type, zone, TextStyle::Print)
}

/// One cell in a chosen style; `None` for NULL or a row out of range.
pub fn format_value_with(
    array: &dyn Array,
    row: usize,
    data_type: &DataType,
    zone: &SessionZone,
    style: TextStyle,
) -> Option<String> {
    if row >= array.len() || array.is_null(row) {
        return None;
    }
    let mut s = String::new();
    write_cell(&mut s, array, row, data_type, zone, style);
    Some(s)
}

/// Appends the text of a non-NULL cell (a NULL cell appends `NULL`, as nested NULLs print).
pub fn write_cell(
    out: &mut String,
    array: &dyn Array,
    row: usize,
    data_type: &DataType,
    zone: &SessionZone,
    style: TextStyle,
) {
    if row >= array.len() || array.is_null(row) {
        out.push_str("NULL");
        return;
    }
    macro_rules! prim {
        ($t:ty) => {
            match array.as_primitive_opt::<$t>() {
                Some(a) => a.value(row),
                None => {
                    out.push_str("NULL");
                    return;
                }
            }
        };
    }
    match &data_type.kind {
        TypeKind::Null => out.push_str("NULL"),
        TypeKind::Boolean => match array.as_boolean_opt() {
            Some(a) => out.push_str(if a.value(row) { "TRUE" } else { "FALSE" }),
            None => out.push_str("NULL"),
        },
        TypeKind::TinyInt => {
            let _ = write!(out, "{}", prim!(Int8Type));
        }
        TypeKind::SmallInt => {
            let _ = write!(out, "{}", prim!(Int16Type));
        }
        TypeKind::Int => {
            let _ = write!(out, "{}", prim!(Int32Type));
        }
        TypeKind::BigInt => {
            let _ = write!(out, "{}", prim!(Int64Type));
        }
        TypeKind::Float => write_java_float(out, prim!(Float32Type)),
        TypeKind::Double => write_java_double(out, prim!(Float64Type)),
        TypeKind::Decimal { scale, .. } => write_decimal(out, prim!(Decimal128Type), *scale),
        TypeKind::Char(_) | TypeKind::VarChar(_) => match array.as_string_opt::<i32>() {
            Some(a) => out.push_str(a.value(row)),
            None => out.push_str("NULL"),
        },
        TypeKind::Binary(_) | TypeKind::VarBinary(_) => {
            let Some(a) = array.as_binary_opt::<i32>() else {
                out.push_str("NULL");
                return;
            };
            let bytes = a.value(row);
            match style {
                TextStyle::Cast => out.push_str(&String::from_utf8_lossy(bytes)),
                TextStyle::Print => {
                    out.push_str("x'");
                    write_hex(out, bytes);
                    out.push('\'');
                }
            }
        }
        TypeKind::Date => write_date(out, prim!(Date32Type) as i64),
        TypeKind::Time(p) => write_flink_time(out, prim!(Time64NanosecondType), *p),
        TypeKind::Timestamp(p) => write_timestamp(out, prim!(TimestampNanosecondType), *p),
        TypeKind::TimestampLtz(p) => {
            let instant = prim!(TimestampNanosecondType);
            write_timestamp(out, zone.to_local(instant), *p)
        }
        TypeKind::IntervalYearMonth => write_interval_months(out, prim!(IntervalYearMonthType)),
        TypeKind::IntervalDayTime => write_interval_millis(out, prim!(DurationMillisecondType)),
        TypeKind::Array(element) => {
            let Some(list) = array.as_list_opt::<i32>() else {
                out.push_str("NULL");
                return;
            };
            let offsets = list.value_offsets();
            let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
            let values = list.values();
            out.push('[');
            for (n, i) in (start..end).enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                write_cell(out, values.as_ref(), i, element, zone, style);
            }
            out.push(']');
        }
        TypeKind::Map(key_type, value_type) => {
            let Some(map) = array.as_map_opt() else {
                out.push_str("NULL");
                return;
            };
            let offsets = map.value_offsets();
            let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
            let (keys, values) = (map.keys(), map.values());
            out.push('{');
            for (n, i) in (start..end).enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                write_cell(out, keys.as_ref(), i, key_type, zone, style);
                out.push('=');
                write_cell(out, values.as_ref(), i, value_type, zone, style);
            }
            out.push('}');
        }
        TypeKind::Row(fields) => {
            let Some(st) = array.as_struct_opt() else {
                out.push_str("NULL");
                return;
            };
            out.push('(');
            for (j, (_, ty)) in fields.iter().enumerate() {
                if j > 0 {
                    out.push_str(", ");
                }
                match st.columns().get(j) {
                    Some(col) => write_cell(out, col.as_ref(), row, ty, zone, style),
                    None => out.push_str("NULL"),
                }
            }
            out.push(')');
        }
    }
}

fn write_hex(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 15) as usize] as char);
    }
}

/// Flink's TIME text: `HH:mm:ss`, and for p > 0 the milliseconds with trailing zeros dropped
/// (at least one digit): `01:02:03.1`, `00:00:00.0`, `12:34:56.789`.
pub fn write_flink_time(out: &mut String, nanos_of_day: i64, precision: u8) {
    let nanos = nanos_of_day.rem_euclid(NANOS_PER_DAY);
    write_time(out, nanos - nanos % NANOS_PER_SECOND, 0);
    if precision > 0 {
        let millis = (nanos % NANOS_PER_SECOND) / NANOS_PER_MILLI;
        let digits = format!("{millis:03}");
        let trimmed = digits.trim_end_matches('0');
        out.push('.');
        out.push_str(if trimmed.is_empty() { "0" } else { trimmed });
    }
}

/// `+1-02` / `-10-11`.
pub fn write_interval_months(out: &mut String, months: i32) {
    let sign = if months < 0 { '-' } else { '+' };
    let m = (months as i64).unsigned_abs();
    let _ = write!(out, "{sign}{}-{:02}", m / 12, m % 12);
}

/// `+1 02:03:00.000` / `-100 00:00:00.500`.
pub fn write_interval_millis(out: &mut String, millis: i64) {
    let sign = if millis < 0 { '-' } else { '+' };
    let ms = millis.unsigned_abs();
    let day_ms = MILLIS_PER_DAY as u64;
    let (days, rest) = (ms / day_ms, ms % day_ms);
    let secs = rest / 1000;
    let _ = write!(
        out,
        "{sign}{days} {:02}:{:02}:{:02}.{:03}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        rest % 1000
    );
}

/// A DECIMAL's unscaled value as plain text with exactly `scale` fraction digits.
pub fn write_decimal(out: &mut String, unscaled: i128, scale: u8) {
    if unscaled < 0 {
        out.push('-');
    }
    let digits = unscaled.unsigned_abs().to_string();
    let scale = scale as usize;
    if scale == 0 {
        out.push_str(&digits);
    } else if digits.len() > scale {
        let (int, frac) = digits.split_at(digits.len() - scale);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else {
        out.push_str("0.");
        for _ in digits.len()..scale {
            out.push('0');
        }
        out.push_str(&digits);
    }
}

pub fn format_decimal(unscaled: i128, scale: u8) -> String {
    let mut s = String::new();
    write_decimal(&mut s, unscaled, scale);
    s
}

/// A decimal as Flink's CSV and JSON writers print it (Jackson's normalized big decimals):
/// trailing zeros stripped (`12.30` → `12.3`, `0.00` → `0`, `100` → `1E+2`), then Java's
/// `BigDecimal.toString` when `scientific`, else `toPlainString`.
pub fn write_decimal_normalized(out: &mut String, unscaled: i128, scale: u8, scientific: bool) {
    if unscaled == 0 {
        out.push('0');
        return;
    }
    let (mut u, mut s) = (unscaled, scale as i32);
    while u % 10 == 0 {
        u /= 10;
        s -= 1;
    }
    if u < 0 {
        out.push('-');
    }
    let digits = u.unsigned_abs().to_string();
    let len = digits.len() as i32;
    let adjusted = len - 1 - s;
    if scientific && (s < 0 || adjusted < -6) {
        out.push_str(&digits[..1]);
        if len > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "E{}{adjusted}", if adjusted >= 0 { "+" } else { "" });
    } else if s <= 0 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (-s) as usize));
    } else if len > s {
        let (int, frac) = digits.split_at((len - s) as usize);
        let _ = write!(out, "{int}.{frac}");
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (s - len) as usize));
        out.push_str(&digits);
    }
}

/// Where the number printers write: a `String`, or a format encoder's byte buffer, which
/// takes their ASCII text without a UTF-8 check (one costs about as much as printing an
/// integer).
pub trait TextOut {
    fn push_text(&mut self, s: &str);
    /// ASCII bytes only (a `String` drops bytes that are not UTF-8).
    fn push_ascii(&mut self, bytes: &[u8]);
    /// An ASCII byte (a `String` takes a byte above 127 as the character of that number).
    fn push_byte(&mut self, b: u8);
}

impl TextOut for String {
    fn push_text(&mut self, s: &str) {
        self.push_str(s);
    }
    fn push_ascii(&mut self, bytes: &[u8]) {
        self.push_str(std::str::from_utf8(bytes).unwrap_or_default());
    }
    fn push_byte(&mut self, b: u8) {
        self.push(char::from(b));
    }
}

impl TextOut for Vec<u8> {
    fn push_text(&mut self, s: &str) {
        self.extend_from_slice(s.as_bytes());
    }
    fn push_ascii(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    fn push_byte(&mut self, b: u8) {
        self.push(b);
    }
}

/// Java's `Double.toString` (as of Java 17, which Flink 2.3 runs on).
pub fn write_java_double(out: &mut impl TextOut, v: f64) {
    super::floating_decimal::double_to_string(out, v);
}

/// Java's `Float.toString` (as of Java 17).
pub fn write_java_float(out: &mut impl TextOut, v: f32) {
    super::floating_decimal::float_to_string(out, v);
}

/// `BigDecimal.valueOf(v).toString()` — Java 17's `Double.toString` digits with their scale,
/// in `BigDecimal`'s notation (`1.0E+20`, `0.000010`, `100.0`), as Flink's JSON functions write
/// a DOUBLE. NaN and infinities keep `Double.toString`'s text.
pub fn write_java_double_as_big_decimal(out: &mut String, v: f64) {
    let text = java_double_to_string(v);
    match big_decimal_text(&text) {
        Some(t) if v.is_finite() => out.push_str(&t),
        _ => out.push_str(&text),
    }
}

/// `new BigDecimal(text).toString()` for a decimal number's text (`1e2` → `1E+2`, `-0.0` →
/// `0.0`, `1.50` stays); `None` when the text is not a number.
pub fn big_decimal_text(text: &str) -> Option<String> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i32>().ok()?),
        None => (body, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty() && frac_part.is_empty()
        || !int_part
            .bytes()
            .chain(frac_part.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let all = format!("{int_part}{frac_part}");
    let trimmed = all.trim_start_matches('0');
    let digits = if trimmed.is_empty() { "0" } else { trimmed };
    let scale = frac_part.len() as i32 - exp;
    let adjusted = digits.len() as i32 - 1 - scale;
    let mut out = String::new();
    if negative && digits != "0" {
        out.push('-');
    }
    if scale >= 0 && adjusted >= -6 {
        let len = digits.len() as i32;
        if scale == 0 {
            out.push_str(digits);
        } else if len > scale {
            let (i, f) = digits.split_at((len - scale) as usize);
            let _ = write!(out, "{i}.{f}");
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (scale - len) as usize));
            out.push_str(digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "E{}{adjusted}", if adjusted >= 0 { "+" } else { "" });
    }
    Some(out)
}

pub fn java_double_to_string(v: f64) -> String {
    let mut s = String::new();
    write_java_double(&mut s, v);
    s
}

pub fn java_float_to_string(v: f32) -> String {
    let mut s = String::new();
    write_java_float(&mut s, v);
    s
}

// ------------------------------------------------------------------------------------------
// Parsing
// ------------------------------------------------------------------------------------------

/// Which text a parse accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextDialect {
    /// `CAST(STRING AS T)`: booleans `true/t/yes/y/1` and `false/f/no/n/0`; integers allow a
    /// fraction that is cut (`'1.5'` → 1); DECIMAL overflow is an error; CHAR(n)/VARCHAR(n)
    /// are cut to n and CHAR padded; TIMESTAMP_LTZ text is a wall clock in the session zone.
    Cast,
    /// Flink's CSV and JSON converters: booleans as Java's `Boolean.parseBoolean` (anything
    /// but `true` is FALSE); strict integers; DECIMAL overflow is NULL without error; strings
    /// as they are; dates and times in the format's own forms; TIMESTAMP_LTZ text is UTC.
    Format(TemporalText),
}

/// The date/time forms a format reads (Flink's `CsvToRowDataConverters` and
/// `JsonToRowDataConverters`); anything else is a parse error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemporalText {
    /// DATE as `java.sql.Date.valueOf` (`yyyy-[m]m-[d]d`), TIME as ISO (`HH:mm[:ss[.f]]`),
    /// TIMESTAMP `yyyy-MM-dd HH:mm:ss[.f]`, TIMESTAMP_LTZ the same with `Z`.
    Csv,
    /// `json.timestamp-format.standard` = SQL: DATE `yyyy-MM-dd`, TIME `HH:mm:ss[.f]`,
    /// TIMESTAMP `yyyy-MM-dd HH:mm:ss[.f]`, TIMESTAMP_LTZ the same with `Z`.
    JsonSql,
    /// … = ISO-8601: TIMESTAMP `yyyy-MM-ddTHH:mm[:ss[.f]]`, TIMESTAMP_LTZ with `Z`.
    JsonIso,
}

impl TextDialect {
    fn is_format(self) -> bool {
        matches!(self, TextDialect::Format(_))
    }
}

/// `CAST(STRING AS target)` for a whole column.
pub fn parse_column(
    strings: &StringArray,
    target: &DataType,
    zone: &SessionZone,
) -> (ArrayRef, Vec<(usize, String)>) {
    parse_column_as(strings, target, zone, TextDialect::Cast)
}

/// Parses a column of text into `target`. Rows whose text is not a valid value are NULL in the
/// result and listed with a message.
pub fn parse_column_as(
    strings: &StringArray,
    target: &DataType,
    zone: &SessionZone,
    dialect: TextDialect,
) -> (ArrayRef, Vec<(usize, String)>) {
    let mut errors = Vec::new();
    let array: ArrayRef = match &target.kind {
        TypeKind::Null => Arc::new(NullArray::new(strings.len())),
        TypeKind::Boolean => {
            let mut values = Vec::with_capacity(strings.len());
            for (i, s) in strings.iter().enumerate() {
                values.push(match s {
                    None => None,
                    Some(s) => match parse_bool(s, dialect) {
                        Some(b) => Some(b),
                        None => {
                            errors.push((i, cast_error(s, target)));
                            None
                        }
                    },
                });
            }
            Arc::new(BooleanArray::from(values))
        }
        TypeKind::TinyInt
        | TypeKind::SmallInt
        | TypeKind::Int
        | TypeKind::BigInt
        | TypeKind::Float
        | TypeKind::Double
        | TypeKind::Decimal { .. }
        | TypeKind::Timestamp(_) => {
            let mut cells = CellColumn::new(target, dialect).expect("a cell type");
            for s in strings.iter() {
                cells.push(s);
            }
            let (array, cell_errors) = cells.finish();
            errors = cell_errors;
            array
        }
        TypeKind::Char(n) | TypeKind::VarChar(n) => {
            if dialect.is_format() || *n == super::MAX_LENGTH {
                Arc::new(strings.clone())
            } else {
                let pad = matches!(target.kind, TypeKind::Char(_));
                let n = *n as usize;
                let out: StringArray = strings
                    .iter()
                    .map(|s| s.map(|s| fit_chars(s, n, pad)))
                    .collect();
                Arc::new(out)
            }
        }
        TypeKind::Binary(n) | TypeKind::VarBinary(n) => {
            let fixed = matches!(target.kind, TypeKind::Binary(_));
            let n = *n as usize;
            let out: BinaryArray = strings
                .iter()
                .map(|s| {
                    s.map(|s| {
                        let mut b = s.as_bytes().to_vec();
                        if dialect == TextDialect::Cast && n != super::MAX_LENGTH as usize {
                            b.truncate(n);
                            if fixed {
                                b.resize(n, 0);
                            }
                        }
                        b
                    })
                })
                .collect();
            Arc::new(out)
        }
        TypeKind::Date => parse_prim::<Date32Type>(strings, target, &mut errors, |s| {
            let days = match dialect {
                TextDialect::Cast => cast_date(s),
                TextDialect::Format(TemporalText::Csv) => {
                    parse_date_text(s).filter(|_| s.split('-').next().is_some_and(|y| y.len() == 4))
                }
                TextDialect::Format(_) => parse_iso_date(s),
            };
            i32::try_from(days.ok_or("invalid date")?).map_err(|_| "out of range")
        }),
        TypeKind::Time(p) => {
            let p = (*p).min(3);
            parse_prim::<Time64NanosecondType>(strings, target, &mut errors, |s| {
                let t = match dialect {
                    TextDialect::Cast => cast_time(s),
                    TextDialect::Format(TemporalText::Csv) => parse_strict_time(s, false),
                    TextDialect::Format(_) => parse_strict_time(s, true),
                };
                Ok(truncate_to_precision(t.ok_or("invalid time")?, p))
            })
        }
        TypeKind::TimestampLtz(p) => {
            let p = *p;
            parse_prim::<TimestampNanosecondType>(strings, target, &mut errors, |s| {
                let instant = match dialect {
                    TextDialect::Cast => cast_timestamp(s).map(|l| zone.from_local(l)),
                    // Written in UTC with a `Z`, which the formats require.
                    TextDialect::Format(text) => s
                        .strip_suffix('Z')
                        .and_then(|s| parse_format_timestamp(s, text)),
                };
                Ok(truncate_to_precision(
                    instant.ok_or("invalid timestamp")?,
                    p,
                ))
            })
        }
        TypeKind::IntervalYearMonth => {
            parse_prim::<IntervalYearMonthType>(strings, target, &mut errors, |s| {
                parse_interval_months(s.trim()).ok_or("invalid interval")
            })
        }
        TypeKind::IntervalDayTime => {
            parse_prim::<DurationMillisecondType>(strings, target, &mut errors, |s| {
                parse_interval_millis(s.trim()).ok_or("invalid interval")
            })
        }
        TypeKind::Array(_) | TypeKind::Map(..) | TypeKind::Row(_) => {
            for (i, s) in strings.iter().enumerate() {
                if let Some(s) = s {
                    errors.push((i, format!("cannot cast '{s}' to {}", target.kind)));
                }
            }
            arrow_array::new_null_array(&target.to_arrow(), strings.len())
        }
    };
    (array, errors)
}

/// A column of one numeric or timestamp type built from text one cell at a time, with
/// [`parse_column_as`]'s rules: a format's decoder parses each value as it reads it, without
/// gathering the text first. `parse_column_as` goes through it too, so the two cannot differ.
#[derive(Debug)]
pub struct CellColumn {
    target: DataType,
    dialect: TextDialect,
    values: CellValues,
    valid: Vec<bool>,
    nulls: usize,
    errors: Vec<(usize, String)>,
}

#[derive(Debug)]
enum CellValues {
    TinyInt(Vec<i8>),
    SmallInt(Vec<i16>),
    Int(Vec<i32>),
    BigInt(Vec<i64>),
    Float(Vec<f32>),
    Double(Vec<f64>),
    Decimal(Vec<i128>, u8, u8),
    Timestamp(Vec<i64>, u8),
}

impl CellColumn {
    /// A builder for `target`, or `None` when the type is not one it builds.
    pub fn new(target: &DataType, dialect: TextDialect) -> Option<CellColumn> {
        let values = match target.kind {
            TypeKind::TinyInt => CellValues::TinyInt(Vec::new()),
            TypeKind::SmallInt => CellValues::SmallInt(Vec::new()),
            TypeKind::Int => CellValues::Int(Vec::new()),
            TypeKind::BigInt => CellValues::BigInt(Vec::new()),
            TypeKind::Float => CellValues::Float(Vec::new()),
            TypeKind::Double => CellValues::Double(Vec::new()),
            TypeKind::Decimal { precision, scale } => {
                CellValues::Decimal(Vec::new(), precision, scale)
            }
            TypeKind::Timestamp(p) => CellValues::Timestamp(Vec::new(), p),
            _ => return None,
        };
        Some(CellColumn {
            target: target.clone(),
            dialect,
            values,
            valid: Vec::new(),
            nulls: 0,
            errors: Vec::new(),
        })
    }

    /// Cells so far.
    pub fn len(&self) -> usize {
        self.valid.len()
    }

    pub fn is_empty(&self) -> bool {
        self.valid.is_empty()
    }

    /// Adds one cell: NULL, or text to parse; text that does not parse is NULL and an error.
    pub fn push(&mut self, text: Option<&str>) {
        let row = self.valid.len();
        let dialect = self.dialect;
        let ok = match &mut self.values {
            CellValues::TinyInt(v) => push_cell(v, text, |s| {
                i8::try_from(parse_integer(s, dialect)?).map_err(|_| "overflow")
            }),
            CellValues::SmallInt(v) => push_cell(v, text, |s| {
                i16::try_from(parse_integer(s, dialect)?).map_err(|_| "overflow")
            }),
            CellValues::Int(v) => push_cell(v, text, |s| {
                i32::try_from(parse_integer(s, dialect)?).map_err(|_| "overflow")
            }),
            CellValues::BigInt(v) => push_cell(v, text, |s| parse_integer(s, dialect)),
            CellValues::Float(v) => push_cell(v, text, |s| {
                parse_java_float::<f32>(s).ok_or("invalid number")
            }),
            CellValues::Double(v) => push_cell(v, text, |s| {
                parse_java_float::<f64>(s).ok_or("invalid number")
            }),
            CellValues::Decimal(v, p, sc) => {
                let (p, sc) = (*p, *sc);
                push_cell(v, text, |s| match parse_decimal(s, p, sc) {
                    Ok(d) => Ok(Some(d)),
                    // A format reads a value too wide for its column as NULL, as Flink does.
                    Err(DecimalError::Overflow) if dialect.is_format() => Ok(None),
                    Err(e) => Err(e.reason()),
                })
            }
            CellValues::Timestamp(v, p) => {
                let p = *p;
                push_cell(v, text, |s| {
                    let ts = match dialect {
                        TextDialect::Cast => cast_timestamp(s),
                        TextDialect::Format(text) => parse_format_timestamp(s, text),
                    };
                    Ok(truncate_to_precision(ts.ok_or("invalid timestamp")?, p))
                })
            }
        };
        match ok {
            Ok(valid) => {
                self.valid.push(valid);
                self.nulls += usize::from(!valid);
            }
            Err(why) => {
                let s = text.unwrap_or_default();
                self.errors
                    .push((row, cast_error_why(s, &self.target, why)));
                self.valid.push(false);
                self.nulls += 1;
            }
        }
    }

    /// The column so far and the errors of its cells (by row), leaving the builder empty with
    /// room for as many cells again.
    pub fn finish(&mut self) -> (ArrayRef, Vec<(usize, String)>) {
        let capacity = self.valid.len();
        let valid = std::mem::replace(&mut self.valid, Vec::with_capacity(capacity));
        let nulls = (std::mem::take(&mut self.nulls) > 0).then(|| NullBuffer::from(valid));
        let errors = std::mem::take(&mut self.errors);
        fn array<T: ArrowPrimitiveType>(
            values: &mut Vec<T::Native>,
            nulls: Option<NullBuffer>,
            target: &DataType,
        ) -> ArrayRef {
            let capacity = values.len();
            let values = std::mem::replace(values, Vec::with_capacity(capacity));
            Arc::new(
                PrimitiveArray::<T>::new(ScalarBuffer::from(values), nulls)
                    .with_data_type(target.to_arrow()),
            )
        }
        let target = &self.target;
        let array = match &mut self.values {
            CellValues::TinyInt(v) => array::<Int8Type>(v, nulls, target),
            CellValues::SmallInt(v) => array::<Int16Type>(v, nulls, target),
            CellValues::Int(v) => array::<Int32Type>(v, nulls, target),
            CellValues::BigInt(v) => array::<Int64Type>(v, nulls, target),
            CellValues::Float(v) => array::<Float32Type>(v, nulls, target),
            CellValues::Double(v) => array::<Float64Type>(v, nulls, target),
            CellValues::Decimal(v, ..) => array::<Decimal128Type>(v, nulls, target),
            CellValues::Timestamp(v, _) => array::<TimestampNanosecondType>(v, nulls, target),
        };
        (array, errors)
    }
}

/// Pushes one parsed cell (a default value where it is NULL); whether it is valid, or why
/// its text does not parse.
fn push_cell<T: Default, V: CellValue<T>>(
    values: &mut Vec<T>,
    text: Option<&str>,
    parse: impl FnOnce(&str) -> Result<V, &'static str>,
) -> Result<bool, &'static str> {
    let parsed = match text {
        None => None,
        Some(s) => match parse(s) {
            Ok(v) => v.into_cell(),
            Err(why) => {
                values.push(T::default());
                return Err(why);
            }
        },
    };
    let valid = parsed.is_some();
    values.push(parsed.unwrap_or_default());
    Ok(valid)
}

/// A parsed value, or a parse that gave NULL without an error.
trait CellValue<T> {
    fn into_cell(self) -> Option<T>;
}

impl<T> CellValue<T> for T {
    fn into_cell(self) -> Option<T> {
        Some(self)
    }
}

impl<T> CellValue<T> for Option<T> {
    fn into_cell(self) -> Option<T> {
        self
    }
}

fn parse_prim<T: ArrowPrimitiveType>(
    strings: &StringArray,
    target: &DataType,
    errors: &mut Vec<(usize, String)>,
    parse: impl Fn(&str) -> Result<T::Native, &'static str>,
) -> ArrayRef {
    let n = strings.len();
    let mut values: Vec<T::Native> = Vec::with_capacity(n);
    let mut valid: Vec<bool> = Vec::with_capacity(n);
    let mut any_null = false;
    for i in 0..n {
        if strings.is_null(i) {
            values.push(T::Native::default());
            valid.push(false);
            any_null = true;
            continue;
        }
        let s = strings.value(i);
        match parse(s) {
            Ok(v) => {
                values.push(v);
                valid.push(true);
            }
            Err(why) => {
                errors.push((i, cast_error_why(s, target, why)));
                values.push(T::Native::default());
                valid.push(false);
                any_null = true;
            }
        }
    }
    let nulls = if any_null {
        Some(NullBuffer::from(valid))
    } else {
        None
    };
    Arc::new(
        PrimitiveArray::<T>::new(ScalarBuffer::from(values), nulls)
            .with_data_type(target.to_arrow()),
    )
}

fn cast_error(s: &str, target: &DataType) -> String {
    format!("cannot cast '{}' to {}", shorten(s), target.kind)
}

fn cast_error_why(s: &str, target: &DataType, why: &str) -> String {
    format!("cannot cast '{}' to {}: {why}", shorten(s), target.kind)
}

/// At most 100 characters of a value, for messages.
fn shorten(s: &str) -> String {
    match s.char_indices().nth(100) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

fn trim(s: &str) -> &str {
    // What is trimmed is ASCII at or below the space, or DEL: most values have neither end
    // to trim, which two bytes tell without decoding characters.
    let kept = |b: u8| b > b' ' && b != 0x7f;
    match s.as_bytes() {
        [first, .., last] if kept(*first) && kept(*last) => s,
        [only] if kept(*only) => s,
        _ => s.trim_matches(|c: char| c.is_ascii_whitespace() || c.is_ascii_control()),
    }
}

/// Cuts to `n` characters; pads with spaces to `n` when `pad` (CHAR).
pub fn fit_chars(s: &str, n: usize, pad: bool) -> String {
    let mut out = match s.char_indices().nth(n) {
        Some((i, _)) => s[..i].to_string(),
        None => s.to_string(),
    };
    if pad {
        let count = out.chars().count();
        for _ in count..n {
            out.push(' ');
        }
    }
    out
}

/// Boolean text. CAST accepts `true t yes y 1` / `false f no n 0` in any case, untrimmed
/// (`' true'` is NULL in Flink 2.3); the formats read as Java's `Boolean.parseBoolean`.
pub fn parse_bool(s: &str, dialect: TextDialect) -> Option<bool> {
    match dialect {
        TextDialect::Cast => {
            let l = s.to_ascii_lowercase();
            match l.as_str() {
                "true" | "t" | "yes" | "y" | "1" => Some(true),
                "false" | "f" | "no" | "n" | "0" => Some(false),
                _ => None,
            }
        }
        TextDialect::Format(_) => Some(trim(s).eq_ignore_ascii_case("true")),
    }
}

/// An integer, checked against i64. CAST cuts a fraction (`'1.5'` → 1).
pub fn parse_integer(s: &str, dialect: TextDialect) -> Result<i64, &'static str> {
    let t = trim(s).as_bytes();
    let (neg, digits) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() {
        return Err("invalid character");
    }
    let mut v: i64 = 0;
    let mut seen_digit = false;
    let mut i = 0;
    while i < digits.len() {
        let b = digits[i];
        if b.is_ascii_digit() {
            seen_digit = true;
            let d = (b - b'0') as i64;
            v = v
                .checked_mul(10)
                .and_then(|v| {
                    if neg {
                        v.checked_sub(d)
                    } else {
                        v.checked_add(d)
                    }
                })
                .ok_or("overflow")?;
        } else if b == b'.' && dialect == TextDialect::Cast {
            if !digits[i + 1..].iter().all(|b| b.is_ascii_digit()) {
                return Err("invalid character");
            }
            seen_digit |= i + 1 < digits.len();
            break;
        } else {
            return Err("invalid character");
        }
        i += 1;
    }
    if !seen_digit {
        return Err("invalid character");
    }
    Ok(v)
}

/// Numbers as Java's `Double.parseDouble` / `Float.parseFloat` read them: decimal text with an
/// optional exponent and `d`/`f` suffix, `NaN`, `Infinity`.
pub fn parse_java_float<F: std::str::FromStr + JavaSpecial>(s: &str) -> Option<F> {
    let t = trim(s);
    let (neg, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    match rest {
        "NaN" => return Some(F::nan()),
        "Infinity" => {
            return Some(if neg {
                F::neg_infinity()
            } else {
                F::infinity()
            });
        }
        _ => {}
    }
    let body = rest.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(rest);
    if body.is_empty()
        || !body.bytes().any(|b| b.is_ascii_digit())
        || !body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    let v: F = body.parse().ok()?;
    Some(if neg { v.negate() } else { v })
}

/// The special values [`parse_java_float`] needs.
pub trait JavaSpecial: Sized {
    fn nan() -> Self;
    fn infinity() -> Self;
    fn neg_infinity() -> Self;
    fn negate(self) -> Self;
}
impl JavaSpecial for f64 {
    fn nan() -> Self {
        f64::NAN
    }
    fn infinity() -> Self {
        f64::INFINITY
    }
    fn neg_infinity() -> Self {
        f64::NEG_INFINITY
    }
    fn negate(self) -> Self {
        -self
    }
}
impl JavaSpecial for f32 {
    fn nan() -> Self {
        f32::NAN
    }
    fn infinity() -> Self {
        f32::INFINITY
    }
    fn neg_infinity() -> Self {
        f32::NEG_INFINITY
    }
    fn negate(self) -> Self {
        -self
    }
}

/// Why a decimal did not parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecimalError {
    Invalid,
    Overflow,
}

impl DecimalError {
    pub fn reason(self) -> &'static str {
        match self {
            DecimalError::Invalid => "invalid character",
            DecimalError::Overflow => "overflow",
        }
    }
}

/// Decimal text (`-12.345`, `1.5e3`) to the unscaled value at `scale`, rounding HALF_UP;
/// `Overflow` when it needs more than `precision` digits.
pub fn parse_decimal(s: &str, precision: u8, scale: u8) -> Result<i128, DecimalError> {
    let t = trim(s).as_bytes();
    let (neg, rest) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if let Some(v) = parse_plain_decimal(rest, precision, scale) {
        return v.map(|v| if neg { -v } else { v });
    }
    let (mantissa, exp) = match rest.iter().position(|&b| b == b'e' || b == b'E') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let exp: i64 = match exp {
        None => 0,
        Some(e) => {
            let (eneg, ed) = match e.first() {
                Some(b'-') => (true, &e[1..]),
                Some(b'+') => (false, &e[1..]),
                _ => (false, e),
            };
            if ed.is_empty() || !ed.iter().all(|b| b.is_ascii_digit()) {
                return Err(DecimalError::Invalid);
            }
            let mut v: i64 = 0;
            for b in ed {
                v = (v * 10 + (b - b'0') as i64).min(1_000_000);
            }
            if eneg { -v } else { v }
        }
    };
    // All mantissa digits, and how many of them follow the point.
    let mut digits: Vec<u8> = Vec::with_capacity(mantissa.len());
    let mut frac_len: i64 = 0;
    let mut seen_point = false;
    for &b in mantissa {
        if b.is_ascii_digit() {
            digits.push(b - b'0');
            if seen_point {
                frac_len += 1;
            }
        } else if b == b'.' && !seen_point {
            seen_point = true;
        } else {
            return Err(DecimalError::Invalid);
        }
    }
    if digits.is_empty() {
        return Err(DecimalError::Invalid);
    }
    // value = digits × 10^(exp − frac_len); we want round(value × 10^scale).
    let shift = exp - frac_len + scale as i64;
    let first_nonzero = digits.iter().position(|&d| d != 0);
    let Some(first_nonzero) = first_nonzero else {
        return Ok(0);
    };
    let digits = &digits[first_nonzero..];
    let limit = 10i128.pow(precision.min(38) as u32);
    let mut v: i128 = 0;
    if shift >= 0 {
        if digits.len() as i64 + shift > 39 {
            return Err(DecimalError::Overflow);
        }
        for &d in digits {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add(d as i128))
                .ok_or(DecimalError::Overflow)?;
        }
        for _ in 0..shift {
            v = v.checked_mul(10).ok_or(DecimalError::Overflow)?;
        }
    } else {
        let drop = (-shift) as usize;
        if drop > digits.len() {
            // Everything is below half a unit of the last place.
            return Ok(0);
        }
        let keep = digits.len() - drop;
        if keep > 39 {
            return Err(DecimalError::Overflow);
        }
        for &d in &digits[..keep] {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add(d as i128))
                .ok_or(DecimalError::Overflow)?;
        }
        if digits.get(keep).is_some_and(|&d| d >= 5) {
            v = v.checked_add(1).ok_or(DecimalError::Overflow)?;
        }
    }
    if v >= limit {
        return Err(DecimalError::Overflow);
    }
    Ok(if neg { -v } else { v })
}

/// The common case of [`parse_decimal`] without its digit buffer: unsigned digits with at most
/// one point, no exponent, and no more fraction digits than the scale (nothing to round).
/// `None` when the text is not of that form (the general path decides).
fn parse_plain_decimal(
    digits: &[u8],
    precision: u8,
    scale: u8,
) -> Option<Result<i128, DecimalError>> {
    // 38 digits and a point: more is the general path's (which skips leading zeros).
    if digits.is_empty() || digits.len() > 39 {
        return None;
    }
    // Up to 18 digits accumulate in a u64 (the usual case), the rest in an i128.
    let mut small: u64 = 0;
    let mut v: i128 = 0;
    let mut count = 0;
    let mut fraction: Option<u32> = None;
    for &b in digits {
        if b.is_ascii_digit() {
            if count == 38 {
                return None;
            }
            if count < 18 {
                small = small * 10 + u64::from(b - b'0');
            } else {
                if count == 18 {
                    v = i128::from(small);
                }
                v = v * 10 + i128::from(b - b'0');
            }
            count += 1;
            if let Some(f) = fraction.as_mut() {
                *f += 1;
            }
        } else if b == b'.' && fraction.is_none() {
            fraction = Some(0);
        } else {
            return None;
        }
    }
    if count <= 18 {
        v = i128::from(small);
    }
    let fraction = fraction.unwrap_or(0);
    if count == 0 || fraction > u32::from(scale) {
        return None;
    }
    let v = v.checked_mul(POWERS_OF_TEN[usize::from(scale) - fraction as usize])?;
    if v >= POWERS_OF_TEN[usize::from(precision.min(38))] {
        return Some(Err(DecimalError::Overflow));
    }
    Some(Ok(v))
}

/// 10^0 to 10^38.
const POWERS_OF_TEN: [i128; 39] = {
    let mut powers = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        powers[i] = powers[i - 1] * 10;
        i += 1;
    }
    powers
};

/// `yyyy-[m]m-[d]d`, the year of 1 to 4 digits, a date that exists (Flink's CAST).
fn parse_date_text(s: &str) -> Option<i64> {
    if !s.bytes().all(|c| c.is_ascii_digit() || c == b'-') {
        return None;
    }
    parse_date(s)
}

/// `H[H]:m[m][:s[s][.f…]]` to nanoseconds of the day.
fn parse_time_text(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if !b
        .iter()
        .all(|c| c.is_ascii_digit() || *c == b':' || *c == b'.')
    {
        return None;
    }
    let (hms, frac) = match s.split_once('.') {
        Some((a, f)) => (a, Some(f)),
        None => (s, None),
    };
    let mut parts = hms.split(':');
    let h = parse_digits(parts.next()?, 1, 2)?;
    let m = parse_digits(parts.next()?, 1, 2)?;
    let sec = match parts.next() {
        Some(p) => parse_digits(p, 1, 2)?,
        None => {
            if frac.is_some() {
                return None;
            }
            0
        }
    };
    if parts.next().is_some() || h > 23 || m > 59 || sec > 59 {
        return None;
    }
    let nanos = match frac {
        Some(f) => {
            if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let v: i64 = f.parse().ok()?;
            v * 10i64.pow(9 - f.len() as u32)
        }
        None => 0,
    };
    Some(((h * 60 + m) * 60 + sec) * NANOS_PER_SECOND + nanos)
}

/// CAST(STRING AS DATE) as Flink's `parseDate`: the text before a (non-leading) space, then
/// `y[-m[-d]]`, each part a number with spaces around it allowed (`'1'` is 0001-01-01).
fn cast_date(s: &str) -> Option<i64> {
    let s = match s.find(' ') {
        Some(i) if i > 0 => &s[..i],
        _ => s,
    };
    let mut parts = s.splitn(3, '-');
    let y = cast_int(parts.next()?)?;
    let m = parts.next().map_or(Some(1), cast_int)?;
    let d = parts.next().map_or(Some(1), cast_int)?;
    if y > 9999 || !(1..=12).contains(&m) || d < 1 || d > i64::from(days_in_month(y, m as u32)) {
        return None;
    }
    Some(days_from_civil(y, m as u32, d as u32))
}

/// CAST(STRING AS TIME) as Calcite's `timeStringToUnixDate`: `h[:m[:s[.f]]]`, each part a
/// number with spaces around it allowed, the fraction read to milliseconds (rounding on the
/// next digit).
fn cast_time(s: &str) -> Option<i64> {
    let (hour, minute, second, millis) = match s.split_once(':') {
        None => (cast_int(s)?, 0, 0, 0),
        Some((h, rest)) => match rest.split_once(':') {
            None => (cast_int(h)?, cast_int(rest)?, 0, 0),
            Some((m, rest)) => {
                let (sec, millis) = match rest.split_once('.') {
                    None => (cast_int(rest)?, 0),
                    Some((sec, fraction)) => (cast_int(sec)?, fraction_millis(fraction.trim())),
                };
                (cast_int(h)?, cast_int(m)?, sec, millis)
            }
        },
    };
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    Some(((hour * 60 + minute) * 60 + second) * NANOS_PER_SECOND + millis * NANOS_PER_MILLI)
}

/// A decimal part of CAST text: digits, spaces around allowed.
fn cast_int(part: &str) -> Option<i64> {
    let t = part.trim();
    if t.is_empty() || t.len() > 9 || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// Calcite's `parseFraction(v, 1000)`: three digits of milliseconds, rounded up when the
/// fourth is 5 or more.
fn fraction_millis(f: &str) -> i64 {
    let digit = |i: usize| {
        f.as_bytes()
            .get(i)
            .filter(|b| b.is_ascii_digit())
            .map_or(0, |b| i64::from(b - b'0'))
    };
    let mut millis = digit(0) * 100 + digit(1) * 10 + digit(2);
    if f.len() > 3 && f.as_bytes()[3] >= b'5' {
        millis += 1;
    }
    millis
}

/// CAST(STRING AS TIMESTAMP) as Flink's `parseTimestampData`: `yyyy-M[M]-d[d]`, optionally
/// ` H[H]:m[m]:s[s][.f…]`, nothing around it; resolved as java.time's SMART style does (a day past
/// the month's end is its last day, `24:00:00` the next midnight).
fn cast_timestamp(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let digits = |from: usize, len: usize| -> Option<i64> {
        let d = b.get(from..from + len)?;
        d.iter()
            .all(u8::is_ascii_digit)
            .then(|| d.iter().fold(0, |v, x| v * 10 + i64::from(x - b'0')))
    };
    // One or two digits, as `[MM][M]` reads them; the position after them.
    let one_or_two = |from: usize| -> Option<(i64, usize)> {
        match digits(from, 2) {
            Some(v) => Some((v, from + 2)),
            None => digits(from, 1).map(|v| (v, from + 1)),
        }
    };
    let year = digits(0, 4)?;
    if b.get(4) != Some(&b'-') {
        return None;
    }
    let (month, at) = one_or_two(5)?;
    if b.get(at) != Some(&b'-') {
        return None;
    }
    let (day, at) = one_or_two(at + 1)?;
    let mut nanos = 0;
    if at < b.len() {
        if b[at] != b' ' {
            return None;
        }
        let (h, at) = one_or_two(at + 1)?;
        if b.get(at) != Some(&b':') {
            return None;
        }
        let (m, at) = one_or_two(at + 1)?;
        if b.get(at) != Some(&b':') {
            return None;
        }
        let (sec, at) = one_or_two(at + 1)?;
        let mut fraction = 0;
        match &b[at..] {
            [] => {}
            [b'.', f @ ..] if f.len() <= 9 && f.iter().all(u8::is_ascii_digit) => {
                fraction = f.iter().fold(0, |v, x| v * 10 + i64::from(x - b'0'))
                    * 10i64.pow(9 - f.len() as u32);
            }
            _ => return None,
        }
        let end_of_day = h == 24 && m == 0 && sec == 0 && fraction == 0;
        if (h > 23 && !end_of_day) || m > 59 || sec > 59 {
            return None;
        }
        nanos = ((h * 60 + m) * 60 + sec) * NANOS_PER_SECOND + fraction;
    }
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let day = day.min(i64::from(days_in_month(year, month as u32)));
    days_from_civil(year, month as u32, day as u32)
        .checked_mul(NANOS_PER_DAY)?
        .checked_add(nanos)
}

/// A format's TIMESTAMP text: `yyyy-MM-dd HH:mm:ss[.f]`, or for ISO-8601 JSON
/// `yyyy-MM-ddTHH:mm[:ss[.f]]`.
fn parse_format_timestamp(s: &str, text: TemporalText) -> Option<i64> {
    let (sep, seconds_required) = match text {
        TemporalText::JsonIso => ('T', false),
        TemporalText::Csv | TemporalText::JsonSql => (' ', true),
    };
    // The separator is ASCII: a byte search, not a character one.
    let at = s.bytes().position(|b| b == sep as u8)?;
    let (date, time) = (&s[..at], &s[at + 1..]);
    let days = parse_iso_date(date)?;
    let nanos = parse_strict_time(time, seconds_required)?;
    days.checked_mul(NANOS_PER_DAY)?.checked_add(nanos)
}

/// java.time's ISO_LOCAL_DATE: `yyyy-MM-dd` with two-digit month and day.
fn parse_iso_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    if b.len() != 10
        || b[4] != b'-'
        || b[7] != b'-'
        || !digits(0..4)
        || !digits(5..7)
        || !digits(8..10)
    {
        return None;
    }
    // The digits are checked: the fields are read in place (no split, no trim).
    let number =
        |r: std::ops::Range<usize>| b[r].iter().fold(0u32, |v, d| v * 10 + u32::from(d - b'0'));
    let (y, m, d) = (i64::from(number(0..4)), number(5..7), number(8..10));
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

/// `HH:mm:ss[.f…]` with two-digit fields (ISO_LOCAL_TIME also takes `HH:mm`).
fn parse_strict_time(s: &str, seconds_required: bool) -> Option<i64> {
    let b = s.as_bytes();
    let two = |at: usize| -> Option<i64> {
        let d = b.get(at..at + 2)?;
        d.iter()
            .all(u8::is_ascii_digit)
            .then(|| i64::from(d[0] - b'0') * 10 + i64::from(d[1] - b'0'))
    };
    let (h, m) = (two(0)?, two(3)?);
    if b.get(2) != Some(&b':') || h > 23 || m > 59 {
        return None;
    }
    let mut nanos = (h * 60 + m) * 60 * NANOS_PER_SECOND;
    if b.len() == 5 {
        return (!seconds_required).then_some(nanos);
    }
    let sec = two(6)?;
    if b.get(5) != Some(&b':') || sec > 59 {
        return None;
    }
    nanos += sec * NANOS_PER_SECOND;
    match &b[8..] {
        [] => Some(nanos),
        [b'.', fraction @ ..]
            if (1..=9).contains(&fraction.len()) && fraction.iter().all(u8::is_ascii_digit) =>
        {
            let mut f = 0i64;
            for d in fraction {
                f = f * 10 + i64::from(d - b'0');
            }
            Some(nanos + f * 10i64.pow(9 - fraction.len() as u32))
        }
        _ => None,
    }
}

/// `[+-]y-m` or a number of months.
fn parse_interval_months(s: &str) -> Option<i32> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let months: i64 = match rest.split_once('-') {
        Some((y, m)) => {
            let y = parse_digits(y, 1, 9)?;
            let m = parse_digits(m, 1, 2)?;
            if m > 11 {
                return None;
            }
            y * 12 + m
        }
        None => parse_digits(rest, 1, 10)?,
    };
    i32::try_from(if neg { -months } else { months }).ok()
}

/// `[+-]d HH:mm:ss[.fff]` or `[+-]HH:mm:ss[.fff]` to milliseconds.
fn parse_interval_millis(s: &str) -> Option<i64> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (days, time) = match rest.split_once(' ') {
        Some((d, t)) => (parse_digits(d, 1, 9)?, trim(t)),
        None => (0, rest),
    };
    let nanos = parse_time_text(time)?;
    let ms = days * MILLIS_PER_DAY + nanos / NANOS_PER_MILLI;
    Some(if neg { -ms } else { ms })
}

// ------------------------------------------------------------------------------------------
// Base64, for BYTES in JSON and CSV.
// ------------------------------------------------------------------------------------------

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding, as Jackson writes binary.
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = ((b[0] as u32) << 16) | ((b[1] as u32) << 8) | b[2] as u32;
        out.push(B64[(n >> 18) as usize & 63] as char);
        out.push(B64[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            B64[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            B64[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

/// Standard or URL-safe base64, padding optional; `None` on any other character.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let mut acc: u32 = 0;
    let mut bits = 0;
    let mut padding = 0;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => {
                padding += 1;
                continue;
            }
            b'\r' | b'\n' => continue,
            _ => return None,
        };
        if padding > 0 {
            return None;
        }
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if bits >= 6 {
        return None;
    }
    Some(out)
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
