//! Conversions between time values and text or epoch numbers: DATE_FORMAT, TO_TIMESTAMP,
//! TO_DATE, UNIX_TIMESTAMP, FROM_UNIXTIME and CONVERT_TZ. Each follows the Java class Flink
//! calls for it (see [`crate::types::pattern`]): formats are compiled once and reused while
//! the format argument stays the same, which is every row when it is a literal.

use std::sync::Arc;

use arrow_array::builder::{
    Date32Builder, Int64Builder, StringBuilder, TimestampNanosecondBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, TimestampNanosecondType};
use arrow_array::{Array, ArrayRef, StringArray};

use super::string::expect_strings;
use super::{
    EvalContext, EvalError, Evaluation, FunctionDef, Signature, any_nullable, string_type,
};
use crate::types::pattern::{DateTimePattern, Parsed, PatternStyle, ZoneInfo};
use crate::types::time::{
    CivilDateTime, SessionZone, days_from_civil, days_in_month, parse_digits, parse_fraction,
};
use crate::types::{DataType, NANOS_PER_DAY, NANOS_PER_MILLI, NANOS_PER_SECOND, TypeKind};

pub const FUNCTIONS: &[FunctionDef] = &[
    def!("DATE_FORMAT", resolve_date_format, date_format),
    def!("TO_TIMESTAMP", resolve_to_timestamp, to_timestamp),
    def!("TO_DATE", resolve_to_date, to_date),
    def!(
        "UNIX_TIMESTAMP",
        resolve_unix_timestamp,
        unix_timestamp,
        Evaluation::RowTime
    ),
    def!("FROM_UNIXTIME", resolve_from_unixtime, from_unixtime),
    def!("CONVERT_TZ", resolve_convert_tz, convert_tz),
];

/// SimpleDateFormat's `yyyy-MM-dd HH:mm:ss`, the default of the legacy functions.
const LEGACY_DEFAULT: &str = "yyyy-MM-dd HH:mm:ss";

fn strings(n: usize, nullable: bool) -> Vec<DataType> {
    vec![string_type(nullable); n]
}

/// The last compiled pattern, recompiled only when the format text changes.
struct PatternCache {
    style: PatternStyle,
    text: Option<String>,
    pattern: Option<DateTimePattern>,
}

impl PatternCache {
    fn new(style: PatternStyle) -> Self {
        PatternCache {
            style,
            text: None,
            pattern: None,
        }
    }

    fn get(&mut self, format: &str) -> Result<&DateTimePattern, EvalError> {
        if self.text.as_deref() != Some(format) || self.pattern.is_none() {
            let compiled = DateTimePattern::compile(format, self.style).map_err(|e| {
                EvalError::Invalid(format!("invalid date-time pattern '{format}': {e}"))
            })?;
            self.text = Some(format.to_string());
            self.pattern = Some(compiled);
        }
        Ok(self.pattern.as_ref().expect("compiled above"))
    }
}

/// The string of row `i` of an optional string argument; `None` when the row is NULL.
fn text_at<'a>(array: Option<&'a StringArray>, i: usize, default: &'static str) -> Option<&'a str> {
    match array {
        None => Some(default),
        Some(a) if a.is_null(i) => None,
        Some(a) => Some(a.value(i)),
    }
}

/// The current year in the session zone, for two-digit legacy years.
fn pivot_year(ctx: &EvalContext) -> i64 {
    CivilDateTime::from_nanos(ctx.zone.to_local(ctx.query_start)).year
}

/// Parses with a legacy pattern in `zone` and returns the instant, as
/// `SimpleDateFormat.parse` does: lenient fields, a parsed offset wins over the zone, a wall
/// clock in a fold takes the later offset.
fn legacy_parse(
    pattern: &DateTimePattern,
    text: &str,
    zone: &SessionZone,
    pivot: i64,
) -> Option<i64> {
    let parsed: Parsed = pattern.parse(text, pivot)?;
    let wall = parsed.resolve_lenient()?;
    Some(match parsed.offset_seconds {
        Some(offset) => wall.checked_sub(offset * NANOS_PER_SECOND)?,
        None => zone.from_local_later(wall),
    })
}

/// Formats an instant (nanoseconds since the epoch) with a legacy pattern in `zone`.
fn legacy_format(
    out: &mut String,
    pattern: &DateTimePattern,
    instant: i64,
    zone: &SessionZone,
) -> Result<(), EvalError> {
    let seconds = instant.div_euclid(NANOS_PER_SECOND);
    let nano = instant.rem_euclid(NANOS_PER_SECOND) as u32;
    legacy_format_seconds(out, pattern, seconds, nano, zone)
}

/// Formats an instant given in seconds, which reaches past the nanosecond range (year 2262)
/// that FROM_UNIXTIME's argument can exceed.
fn legacy_format_seconds(
    out: &mut String,
    pattern: &DateTimePattern,
    seconds: i64,
    nano: u32,
    zone: &SessionZone,
) -> Result<(), EvalError> {
    let offset = zone.offset_seconds_at(seconds);
    let abbreviation = if pattern.uses_zone_name {
        zone.abbreviation_at(seconds)
    } else {
        String::new()
    };
    let wall = CivilDateTime::from_seconds(seconds.saturating_add(offset), nano);
    let info = ZoneInfo {
        offset_seconds: offset,
        abbreviation: &abbreviation,
    };
    pattern
        .format(out, &wall, Some(info))
        .map_err(EvalError::Invalid)
}

fn resolve_date_format(args: &[DataType]) -> Result<Signature, String> {
    let [value, format] = args else {
        return Err("DATE_FORMAT expects (timestamp, format)".into());
    };
    expect_strings("DATE_FORMAT", std::slice::from_ref(format))?;
    let value = match &value.kind {
        TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_) => value.clone(),
        k if k.is_string() || *k == TypeKind::Null => string_type(value.nullable),
        other => {
            return Err(format!(
                "cannot apply DATE_FORMAT to {other}; supported forms: DATE_FORMAT(TIMESTAMP, STRING), DATE_FORMAT(STRING, STRING)"
            ));
        }
    };
    Ok(Signature::new(
        vec![value, string_type(format.nullable)],
        string_type(true),
    ))
}

/// DATE_FORMAT(timestamp, format) formats the wall clock with `DateTimeFormatter`;
/// DATE_FORMAT(string, format) reads the string as `yyyy-MM-dd HH:mm:ss` and reformats it with
/// `SimpleDateFormat`, both in UTC whatever the session zone, NULL when it does not parse.
fn date_format(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let formats = args[1].as_string::<i32>();
    let n = formats.len();
    let mut b = StringBuilder::with_capacity(n, n * 16);
    let mut buf = String::new();
    if let Some(texts) = args[0].as_string_opt::<i32>() {
        let mut input = PatternCache::new(PatternStyle::Legacy);
        let mut output = PatternCache::new(PatternStyle::Legacy);
        let input = input.get(LEGACY_DEFAULT)?.clone();
        let pivot = pivot_year(ctx);
        let utc = SessionZone::utc();
        for i in 0..n {
            if texts.is_null(i) || formats.is_null(i) {
                b.append_null();
                continue;
            }
            let Some(instant) = legacy_parse(&input, texts.value(i), &utc, pivot) else {
                b.append_null();
                continue;
            };
            buf.clear();
            legacy_format(&mut buf, output.get(formats.value(i))?, instant, &utc)?;
            b.append_value(&buf);
        }
    } else {
        let values = args[0].as_primitive::<TimestampNanosecondType>();
        let local = matches!(
            args[0].data_type(),
            arrow_schema::DataType::Timestamp(_, Some(_))
        );
        let mut cache = PatternCache::new(PatternStyle::Modern);
        for i in 0..n {
            if values.is_null(i) || formats.is_null(i) {
                b.append_null();
                continue;
            }
            let mut v = values.value(i);
            if local {
                v = ctx.zone.to_local(v);
            }
            buf.clear();
            cache
                .get(formats.value(i))?
                .format(&mut buf, &CivilDateTime::from_nanos(v), None)
                .map_err(EvalError::Invalid)?;
            b.append_value(&buf);
        }
    }
    Ok(Arc::new(b.finish()))
}

fn resolve_to_timestamp(args: &[DataType]) -> Result<Signature, String> {
    resolve_parse("TO_TIMESTAMP", args, TypeKind::Timestamp(3))
}

/// `name(string [, format])` returning a nullable `result`.
fn resolve_parse(name: &str, args: &[DataType], result: TypeKind) -> Result<Signature, String> {
    if args.is_empty() || args.len() > 2 {
        return Err(format!("{name} expects (string [, format])"));
    }
    expect_strings(name, args)?;
    Ok(Signature::new(
        strings(args.len(), any_nullable(args)),
        DataType::nullable(result),
    ))
}

/// TO_TIMESTAMP(string [, format]): `DateTimeFormatter` parsing, with Flink's fall-back to
/// `java.sql.Timestamp`'s form; NULL when neither reads the string. Precision 3, truncated.
fn to_timestamp(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let texts = args[0].as_string::<i32>();
    let formats = args.get(1).map(|a| a.as_string::<i32>());
    let mut cache = PatternCache::new(PatternStyle::Modern);
    let mut b = TimestampNanosecondBuilder::with_capacity(texts.len());
    for i in 0..texts.len() {
        let value = match (texts.is_null(i), formats) {
            (true, _) => None,
            (false, None) => parse_default_timestamp(texts.value(i)),
            (false, Some(f)) if f.is_null(i) => None,
            // An invalid pattern gives NULL, like a string that does not match.
            (false, Some(f)) => match cache.get(f.value(i)) {
                Ok(pattern) => pattern
                    .parse(texts.value(i), 0)
                    .and_then(|p| p.resolve_strict())
                    .or_else(|| parse_sql_timestamp(texts.value(i))),
                Err(_) => None,
            },
        };
        b.append_option(value.map(|v| v - v.rem_euclid(NANOS_PER_MILLI)));
    }
    Ok(Arc::new(b.finish()))
}

/// Flink's default TO_TIMESTAMP form: `yyyy-[M]M-[d]d[ [H]H:[m]m:[s]s[.fraction]]`, resolved
/// as `DateTimeFormatter` does (a day past the month's end is clamped to it).
fn parse_default_timestamp(s: &str) -> Option<i64> {
    let (date, time) = match s.split_once(' ') {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let mut parts = date.split('-');
    let y = parse_digits(parts.next()?, 4, 4)?;
    let m = parse_digits(parts.next()?, 1, 2)?;
    let d = parse_digits(parts.next()?, 1, 2)?;
    if parts.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let d = d.min(days_in_month(y, m as u32) as i64);
    let days = days_from_civil(y, m as u32, d as u32);
    let nanos = match time {
        None => 0,
        Some(t) => {
            let (hms, fraction) = match t.split_once('.') {
                Some((a, f)) => (a, Some(f)),
                None => (t, None),
            };
            let mut parts = hms.split(':');
            let mut next = |max: i64| -> Option<i64> {
                let v = parse_digits(parts.next()?, 1, 2)?;
                (v <= max).then_some(v)
            };
            let (h, m, sec) = (next(23)?, next(59)?, next(59)?);
            if parts.next().is_some() {
                return None;
            }
            let frac = match fraction {
                None => 0,
                Some(f) => parse_fraction(f)?,
            };
            ((h * 60 + m) * 60 + sec) * NANOS_PER_SECOND + frac
        }
    };
    days.checked_mul(NANOS_PER_DAY)?.checked_add(nanos)
}

/// `yyyy-[m]m-[d]d` as `java.sql.Date.valueOf` reads it: a four-digit year, a month of 1–12,
/// a day of 1–31 that may run into the next month (February 30th is March 2nd).
fn parse_sql_date(s: &str) -> Option<i64> {
    let mut parts = s.split('-');
    let y = parse_digits(parts.next()?, 4, 4)?;
    let m = parse_digits(parts.next()?, 1, 2)?;
    let d = parse_digits(parts.next()?, 1, 2)?;
    if parts.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    Some(days_from_civil(y, m as u32, 1) + d - 1)
}

/// `java.sql.Timestamp.valueOf` (`yyyy-[m]m-[d]d h:m:s[.f…]`, lenient: hour 25 is the next
/// day) or, without a space, `java.sql.Date.valueOf`: Flink's fall-back when a TO_TIMESTAMP
/// format does not match.
fn parse_sql_timestamp(s: &str) -> Option<i64> {
    let s = s.trim();
    let Some((date, time)) = s.split_once(' ') else {
        return Some(parse_sql_date(s)? * NANOS_PER_DAY);
    };
    let days = parse_sql_date(date)?;
    let (hms, fraction) = match time.split_once('.') {
        Some((a, f)) => (a, Some(f)),
        None => (time, None),
    };
    let mut parts = hms.split(':');
    let mut next = || parse_digits(parts.next()?, 1, 9);
    let (h, m, sec) = (next()?, next()?, next()?);
    if parts.next().is_some() {
        return None;
    }
    let frac = match fraction {
        None => 0,
        Some(f) => parse_fraction(f)?,
    };
    let seconds = days
        .checked_mul(86_400)?
        .checked_add(h * 3600 + m * 60 + sec)?;
    seconds.checked_mul(NANOS_PER_SECOND)?.checked_add(frac)
}

/// TO_TIMESTAMP_LTZ(string [, format [, zone]]): the text read as a wall clock in `zone`
/// (UTC by default, not the session zone), with Flink's default form or a
/// `DateTimeFormatter` pattern; text that does not parse fails the query, as in Flink.
pub fn resolve_to_timestamp_ltz_text(args: &[DataType]) -> Result<Signature, String> {
    if args.is_empty() || args.len() > 3 {
        return Err("TO_TIMESTAMP_LTZ expects (string [, format [, time zone]])".into());
    }
    expect_strings("TO_TIMESTAMP_LTZ", args)?;
    Ok(Signature::new(
        strings(args.len(), any_nullable(args)),
        DataType::nullable(TypeKind::TimestampLtz(3)),
    ))
}

pub fn to_timestamp_ltz_text(args: &[ArrayRef]) -> Result<ArrayRef, EvalError> {
    let texts = args[0].as_string::<i32>();
    let formats = args.get(1).map(|a| a.as_string::<i32>());
    let zones = args.get(2).map(|a| a.as_string::<i32>());
    let mut cache = PatternCache::new(PatternStyle::Modern);
    let mut zone: Option<(String, SessionZone)> = None;
    let mut b = TimestampNanosecondBuilder::with_capacity(texts.len());
    for i in 0..texts.len() {
        let null = |a: Option<&StringArray>| a.is_some_and(|a| a.is_null(i));
        if texts.is_null(i) || null(formats) || null(zones) {
            b.append_null();
            continue;
        }
        let text = texts.value(i);
        let wall = match formats {
            None => parse_default_timestamp(text),
            Some(f) => cache
                .get(f.value(i))?
                .parse(text, 0)
                .and_then(|p| p.resolve_strict()),
        }
        .ok_or_else(|| EvalError::Invalid(format!("Text '{text}' could not be parsed")))?;
        let name = zones.map_or("UTC", |z| z.value(i));
        if zone.as_ref().is_none_or(|(n, _)| n != name) {
            let resolved = SessionZone::new(name).map_err(EvalError::Invalid)?;
            zone = Some((name.to_string(), resolved));
        }
        let (_, z) = zone.as_ref().expect("resolved above");
        let instant = z.from_local(wall);
        b.append_value(instant - instant.rem_euclid(NANOS_PER_MILLI));
    }
    Ok(Arc::new(b.finish().with_timezone("UTC")))
}

fn resolve_to_date(args: &[DataType]) -> Result<Signature, String> {
    resolve_parse("TO_DATE", args, TypeKind::Date)
}

/// TO_DATE(string): `y[-m[-d]]` before the first space, NULL when not a valid date.
/// TO_DATE(string, format): `SimpleDateFormat` in UTC.
fn to_date(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let texts = args[0].as_string::<i32>();
    let formats = args.get(1).map(|a| a.as_string::<i32>());
    let mut cache = PatternCache::new(PatternStyle::Legacy);
    let pivot = pivot_year(ctx);
    let utc = SessionZone::utc();
    // Flink turns a failed parse into Long.MIN_VALUE milliseconds and that, through an
    // overflowing day computation, into this date; it prints it, so we do too.
    let failed_parse = days_from_civil(5471, 9, 27);
    let mut b = Date32Builder::with_capacity(texts.len());
    for i in 0..texts.len() {
        let days = match (texts.is_null(i), formats) {
            (true, _) => None,
            (false, None) => parse_flink_date(texts.value(i)),
            (false, Some(f)) if f.is_null(i) => None,
            (false, Some(f)) => Some(
                legacy_parse(cache.get(f.value(i))?, texts.value(i), &utc, pivot)
                    .map_or(failed_parse, |instant| instant.div_euclid(NANOS_PER_DAY)),
            ),
        };
        b.append_option(days.and_then(|d| i32::try_from(d).ok()));
    }
    Ok(Arc::new(b.finish()))
}

/// Flink's one-argument TO_DATE: the text before the first space (unless it starts with
/// one), split on `-` into year, month (default 1) and day (default 1), each trimmed; the
/// date must exist and the year lie in 0–9999.
fn parse_flink_date(s: &str) -> Option<i64> {
    let s = match s.find(' ') {
        Some(i) if i > 0 => &s[..i],
        _ => s,
    };
    let mut parts = s.splitn(3, '-');
    let mut next = |default: i64| match parts.next() {
        None => Some(default),
        Some(p) => {
            let p = p.trim();
            if p.is_empty() || p.len() > 9 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            p.parse::<i64>().ok()
        }
    };
    let (y, m, d) = (next(1)?, next(1)?, next(1)?);
    if !(0..=9999).contains(&y)
        || !(1..=12).contains(&m)
        || d < 1
        || d > days_in_month(y, m as u32) as i64
    {
        return None;
    }
    Some(days_from_civil(y, m as u32, d as u32))
}

fn resolve_unix_timestamp(args: &[DataType]) -> Result<Signature, String> {
    if args.len() > 2 {
        return Err("UNIX_TIMESTAMP expects ([string [, format]])".into());
    }
    expect_strings("UNIX_TIMESTAMP", args)?;
    Ok(Signature::new(
        strings(args.len(), any_nullable(args)),
        DataType {
            kind: TypeKind::BigInt,
            nullable: any_nullable(args),
        },
    ))
}

/// UNIX_TIMESTAMP(): the clock in epoch seconds. UNIX_TIMESTAMP(string [, format]): the
/// string read by `SimpleDateFormat` in the session zone, in epoch seconds; a string that
/// does not parse gives Long.MIN_VALUE, as in Flink.
fn unix_timestamp(
    args: &[ArrayRef],
    ctx: &EvalContext,
    _: &DataType,
) -> Result<ArrayRef, EvalError> {
    if args.is_empty() {
        let values: arrow_array::Int64Array = (0..ctx.num_rows)
            .map(|_| Some(ctx.clock.now_nanos().div_euclid(NANOS_PER_SECOND)))
            .collect();
        return Ok(Arc::new(values));
    }
    let texts = args[0].as_string::<i32>();
    let formats = args.get(1).map(|a| a.as_string::<i32>());
    let mut cache = PatternCache::new(PatternStyle::Legacy);
    let pivot = pivot_year(ctx);
    let mut b = Int64Builder::with_capacity(texts.len());
    for i in 0..texts.len() {
        let (Some(text), Some(format)) = (
            text_at(Some(texts), i, ""),
            text_at(formats, i, LEGACY_DEFAULT),
        ) else {
            b.append_null();
            continue;
        };
        let seconds = match legacy_parse(cache.get(format)?, text, &ctx.zone, pivot) {
            // Java divides the milliseconds toward zero.
            Some(instant) => instant / NANOS_PER_MILLI / 1000,
            None => i64::MIN,
        };
        b.append_value(seconds);
    }
    Ok(Arc::new(b.finish()))
}

fn resolve_from_unixtime(args: &[DataType]) -> Result<Signature, String> {
    let (seconds, format) = match args {
        [s] => (s, None),
        [s, f] => (s, Some(f)),
        _ => return Err("FROM_UNIXTIME expects (seconds [, format])".into()),
    };
    if !seconds.kind.is_integer() && seconds.kind != TypeKind::Null {
        return Err(format!(
            "FROM_UNIXTIME expects an integer number of seconds, got {}",
            seconds.kind
        ));
    }
    let mut sig = vec![DataType {
        kind: TypeKind::BigInt,
        nullable: seconds.nullable,
    }];
    if let Some(f) = format {
        expect_strings("FROM_UNIXTIME", std::slice::from_ref(f))?;
        sig.push(string_type(f.nullable));
    }
    Ok(Signature::new(sig, string_type(true)))
}

/// FROM_UNIXTIME(seconds [, format]): `SimpleDateFormat` in the session zone.
fn from_unixtime(
    args: &[ArrayRef],
    ctx: &EvalContext,
    _: &DataType,
) -> Result<ArrayRef, EvalError> {
    let seconds = args[0].as_primitive::<Int64Type>();
    let formats = args.get(1).map(|a| a.as_string::<i32>());
    let mut cache = PatternCache::new(PatternStyle::Legacy);
    let mut b = StringBuilder::with_capacity(seconds.len(), seconds.len() * 19);
    let mut buf = String::new();
    for i in 0..seconds.len() {
        let Some(format) = text_at(formats, i, LEGACY_DEFAULT) else {
            b.append_null();
            continue;
        };
        if seconds.is_null(i) {
            b.append_null();
            continue;
        }
        buf.clear();
        legacy_format_seconds(&mut buf, cache.get(format)?, seconds.value(i), 0, &ctx.zone)?;
        b.append_value(&buf);
    }
    Ok(Arc::new(b.finish()))
}

fn resolve_convert_tz(args: &[DataType]) -> Result<Signature, String> {
    if args.len() != 3 {
        return Err("CONVERT_TZ expects (string, from_zone, to_zone)".into());
    }
    expect_strings("CONVERT_TZ", args)?;
    Ok(Signature::new(
        strings(3, any_nullable(args)),
        string_type(true),
    ))
}

/// CONVERT_TZ(string, from, to): reads `yyyy-MM-dd HH:mm:ss` in `from` and prints it in `to`,
/// with `java.util.TimeZone`'s reading of zone ids (an unknown id is GMT); NULL when the string
/// does not parse.
fn convert_tz(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let [texts, from, to] = [0, 1, 2].map(|k| args[k].as_string::<i32>());
    let mut cache = PatternCache::new(PatternStyle::Legacy);
    let pattern = cache.get(LEGACY_DEFAULT)?.clone();
    let pivot = pivot_year(ctx);
    let mut zones: Option<(String, SessionZone, String, SessionZone)> = None;
    let mut b = StringBuilder::with_capacity(texts.len(), texts.len() * 19);
    let mut buf = String::new();
    for i in 0..texts.len() {
        if texts.is_null(i) || from.is_null(i) || to.is_null(i) {
            b.append_null();
            continue;
        }
        let (f, t) = (from.value(i), to.value(i));
        if !matches!(&zones, Some((zf, _, zt, _)) if zf == f && zt == t) {
            zones = Some((
                f.to_string(),
                SessionZone::java_legacy(f),
                t.to_string(),
                SessionZone::java_legacy(t),
            ));
        }
        let (_, from_zone, _, to_zone) = zones.as_ref().expect("set above");
        match legacy_parse(&pattern, texts.value(i), from_zone, pivot) {
            Some(instant) => {
                buf.clear();
                legacy_format(&mut buf, &pattern, instant, to_zone)?;
                b.append_value(&buf);
            }
            None => b.append_null(),
        }
    }
    Ok(Arc::new(b.finish()))
}
