//! Time functions: the clock readers of the seed's table (LOCALTIME … PROCTIME()),
//! TO_TIMESTAMP_LTZ, EXTRACT and its shorthands, FLOOR/CEIL to a unit, and interval
//! arithmetic. TIMESTAMP values are wall clocks and need no zone; TIMESTAMP_LTZ values are
//! instants and go through the session zone wherever a calendar field is involved.

use std::sync::Arc;

use arrow_array::builder::{Int64Builder, PrimitiveBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, DurationMillisecondType, Int32Type, Int64Type, IntervalYearMonthType,
    Time64NanosecondType, TimestampNanosecondType,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, PrimitiveArray, TimestampNanosecondArray};

use super::{EvalContext, EvalError, Evaluation, FunctionDef, Signature};
use crate::types::coercion::common_kind;
use crate::types::time::{
    CivilDateTime, civil_from_days, days_from_civil, days_in_month, truncate_to_precision,
};
use crate::types::{DataType, NANOS_PER_DAY, NANOS_PER_MILLI, NANOS_PER_SECOND, TypeKind};

pub const FUNCTIONS: &[FunctionDef] = &[
    def!(
        "LOCALTIME",
        |a| clock_type(a, TypeKind::Time(0)),
        localtime,
        Evaluation::QueryTime
    ),
    def!(
        "CURRENT_TIME",
        |a| clock_type(a, TypeKind::Time(0)),
        localtime,
        Evaluation::QueryTime
    ),
    def!(
        "LOCALTIMESTAMP",
        |a| clock_type(a, TypeKind::Timestamp(3)),
        localtimestamp,
        Evaluation::QueryTime
    ),
    def!(
        "CURRENT_DATE",
        |a| clock_type(a, TypeKind::Date),
        current_date,
        Evaluation::QueryTime
    ),
    def!(
        "CURRENT_TIMESTAMP",
        |a| clock_type(a, TypeKind::TimestampLtz(3)),
        query_now,
        Evaluation::QueryTime
    ),
    def!(
        "NOW",
        |a| clock_type(a, TypeKind::TimestampLtz(3)),
        query_now,
        Evaluation::QueryTime
    ),
    def!(
        "CURRENT_ROW_TIMESTAMP",
        |a| clock_type(a, TypeKind::TimestampLtz(3)),
        row_now,
        Evaluation::RowTime
    ),
    def!(
        "PROCTIME",
        |a| clock_type(a, TypeKind::TimestampLtz(3)),
        row_now,
        Evaluation::RowTime
    ),
    def!(
        "TO_TIMESTAMP_LTZ",
        resolve_to_timestamp_ltz,
        to_timestamp_ltz
    ),
    def!("EXTRACT", resolve_extract, extract),
    def!("FLOOR_TO", resolve_round_to, floor_to),
    def!("CEIL_TO", resolve_round_to, ceil_to),
    def!("TIMESTAMPADD", resolve_timestamp_add, timestamp_add),
    def!("TIMESTAMPDIFF", resolve_timestamp_diff, timestamp_diff),
    def!(
        "TIMESTAMPDIFF_NANOS",
        resolve_timestamp_diff_nanos,
        timestamp_diff_nanos
    ),
    def!(
        "DATETIME_MINUS_MILLIS",
        |a| resolve_datetime_minus(a, TypeKind::IntervalDayTime),
        datetime_minus_millis
    ),
    def!(
        "DATETIME_MINUS_MONTHS",
        |a| resolve_datetime_minus(a, TypeKind::IntervalYearMonth),
        datetime_minus_months
    ),
];

fn clock_type(args: &[DataType], kind: TypeKind) -> Result<Signature, String> {
    if !args.is_empty() {
        return Err("takes no arguments".into());
    }
    Ok(Signature::new(vec![], DataType::not_null(kind)))
}

/// The instant a clock-reading function sees for row `i`: the query start in batch mode for
/// QueryTime functions, the clock otherwise.
fn now(ctx: &EvalContext, per_query: bool) -> i64 {
    if per_query && ctx.batch_mode {
        ctx.query_start
    } else {
        ctx.clock.now_nanos()
    }
}

fn millis(nanos: i64) -> i64 {
    nanos - nanos.rem_euclid(NANOS_PER_MILLI)
}

/// One clock reading per row (see [`now`] for which reading), mapped to the column's value.
fn clock_column<T: ArrowPrimitiveType>(
    ctx: &EvalContext,
    per_query: bool,
    value: impl Fn(i64) -> T::Native,
) -> PrimitiveArray<T> {
    (0..ctx.num_rows)
        .map(|_| Some(value(now(ctx, per_query))))
        .collect()
}

fn localtime(_: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    Ok(Arc::new(clock_column::<Time64NanosecondType>(
        ctx,
        true,
        |t| millis(ctx.zone.to_local(t)).rem_euclid(NANOS_PER_DAY),
    )))
}

fn localtimestamp(_: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    Ok(Arc::new(clock_column::<TimestampNanosecondType>(
        ctx,
        true,
        |t| millis(ctx.zone.to_local(t)),
    )))
}

fn current_date(_: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    Ok(Arc::new(clock_column::<Date32Type>(ctx, true, |t| {
        ctx.zone.to_local(t).div_euclid(NANOS_PER_DAY) as i32
    })))
}

/// CURRENT_TIMESTAMP and NOW(): once per query in batch mode.
fn query_now(_: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let column = clock_column::<TimestampNanosecondType>(ctx, true, millis);
    Ok(Arc::new(column.with_timezone("UTC")))
}

/// PROCTIME() and CURRENT_ROW_TIMESTAMP(): the clock for every row, in both modes.
fn row_now(_: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let column = clock_column::<TimestampNanosecondType>(ctx, false, millis);
    Ok(Arc::new(column.with_timezone("UTC")))
}

/// TO_TIMESTAMP_LTZ(numeric, precision): epoch seconds (0) or milliseconds (3).
fn resolve_to_timestamp_ltz(args: &[DataType]) -> Result<Signature, String> {
    if args.first().is_some_and(|a| a.kind.is_string()) {
        return super::datetime::resolve_to_timestamp_ltz_text(args);
    }
    let (value, precision_given) = match args {
        [v] => (v, false),
        [v, p] if p.kind.is_integer() => (v, true),
        _ => return Err("expects (numeric, precision)".into()),
    };
    if !value.is_numeric() {
        return Err(format!("expects a numeric epoch value, got {}", value.kind));
    }
    let mut sig_args = vec![DataType {
        kind: TypeKind::Double,
        nullable: value.nullable,
    }];
    if value.kind.is_integer() {
        sig_args[0] = DataType {
            kind: TypeKind::BigInt,
            nullable: value.nullable,
        };
    }
    if precision_given {
        sig_args.push(DataType::not_null(TypeKind::Int));
    }
    Ok(Signature::new(
        sig_args,
        DataType::nullable(TypeKind::TimestampLtz(3)),
    ))
}

fn to_timestamp_ltz(
    args: &[ArrayRef],
    _: &EvalContext,
    _: &DataType,
) -> Result<ArrayRef, EvalError> {
    if args[0].data_type() == &arrow_schema::DataType::Utf8 {
        return super::datetime::to_timestamp_ltz_text(args);
    }
    let precision: Option<&PrimitiveArray<Int32Type>> = args.get(1).map(|p| p.as_primitive());
    let n = args[0].len();
    let mut b = PrimitiveBuilder::<TimestampNanosecondType>::with_capacity(n);
    for i in 0..n {
        let p = precision.map_or(Some(3), |p| p.is_valid(i).then(|| p.value(i)));
        let unit = match p {
            Some(0) => NANOS_PER_SECOND as f64,
            Some(3) => NANOS_PER_MILLI as f64,
            Some(other) => {
                return Err(EvalError::Invalid(format!(
                    "TO_TIMESTAMP_LTZ supports precision 0 or 3, got {other}"
                )));
            }
            None => {
                b.append_null();
                continue;
            }
        };
        let value = if args[0].is_null(i) {
            None
        } else if let Some(ints) = args[0].as_primitive_opt::<Int64Type>() {
            (ints.value(i) as i128 * unit as i128).try_into().ok()
        } else {
            let v = args[0]
                .as_primitive::<arrow_array::types::Float64Type>()
                .value(i)
                * unit;
            (v.is_finite() && v.abs() < i64::MAX as f64).then_some(v as i64)
        };
        b.append_option(value.map(|v: i64| truncate_to_precision(v, 3)));
    }
    Ok(Arc::new(b.finish().with_timezone("UTC")))
}

/// Units for EXTRACT / FLOOR / CEIL, passed as an upper-case string literal first argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeUnit {
    Millennium,
    Century,
    Decade,
    Year,
    Quarter,
    Month,
    Week,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
    Nanosecond,
    DayOfWeek,
    DayOfYear,
    Epoch,
    IsoDayOfWeek,
    IsoYear,
}

pub fn parse_unit(name: &str) -> Option<TimeUnit> {
    Some(match name.to_ascii_uppercase().trim_end_matches('S') {
        "MILLENNIUM" | "MILLENNIA" | "MILLENNIUMS" => TimeUnit::Millennium,
        "CENTURY" | "CENTURIE" => TimeUnit::Century,
        "DECADE" => TimeUnit::Decade,
        "YEAR" => TimeUnit::Year,
        "QUARTER" => TimeUnit::Quarter,
        "MONTH" => TimeUnit::Month,
        "WEEK" => TimeUnit::Week,
        "DAY" | "DAYOFMONTH" => TimeUnit::Day,
        "HOUR" => TimeUnit::Hour,
        "MINUTE" => TimeUnit::Minute,
        "SECOND" => TimeUnit::Second,
        "MILLISECOND" => TimeUnit::Millisecond,
        "MICROSECOND" => TimeUnit::Microsecond,
        "NANOSECOND" => TimeUnit::Nanosecond,
        "DOW" | "DAYOFWEEK" => TimeUnit::DayOfWeek,
        "DOY" | "DAYOFYEAR" => TimeUnit::DayOfYear,
        "EPOCH" => TimeUnit::Epoch,
        "ISODOW" => TimeUnit::IsoDayOfWeek,
        "ISOYEAR" => TimeUnit::IsoYear,
        _ => return None,
    })
}

fn resolve_extract(args: &[DataType]) -> Result<Signature, String> {
    let [unit, value] = args else {
        return Err("expects (unit, value)".into());
    };
    if !matches!(
        value.kind,
        TypeKind::Date
            | TypeKind::Time(_)
            | TypeKind::Timestamp(_)
            | TypeKind::TimestampLtz(_)
            | TypeKind::IntervalDayTime
            | TypeKind::IntervalYearMonth
    ) {
        return Err(format!("cannot extract from {}", value.kind));
    }
    Ok(Signature::new(
        vec![unit.clone(), value.clone()],
        DataType {
            kind: TypeKind::BigInt,
            nullable: value.nullable,
        },
    ))
}

/// Wall-clock nanoseconds of a date/time value (LTZ through the session zone); an error for a
/// DATE beyond the nanosecond range (functions that can work on days take them first).
fn wall_clock(
    array: &ArrayRef,
    i: usize,
    kind: &arrow_schema::DataType,
    ctx: &EvalContext,
) -> Result<i64, EvalError> {
    Ok(match kind {
        arrow_schema::DataType::Date32 => i64::from(array.as_primitive::<Date32Type>().value(i))
            .checked_mul(NANOS_PER_DAY)
            .ok_or_else(out_of_range)?,
        arrow_schema::DataType::Time64(_) => array.as_primitive::<Time64NanosecondType>().value(i),
        arrow_schema::DataType::Timestamp(_, Some(_)) => ctx
            .zone
            .to_local(array.as_primitive::<TimestampNanosecondType>().value(i)),
        _ => array.as_primitive::<TimestampNanosecondType>().value(i),
    })
}

fn unit_arg(args: &[ArrayRef]) -> Result<TimeUnit, EvalError> {
    let units = args[0].as_string::<i32>();
    if units.is_empty() {
        // An empty batch: any unit gives the same empty result.
        return Ok(TimeUnit::Day);
    }
    let name = if units.is_null(0) { "" } else { units.value(0) };
    parse_unit(name).ok_or_else(|| EvalError::Invalid(format!("unknown time unit '{name}'")))
}

fn extract(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let unit = unit_arg(args)?;
    let value = &args[1];
    let kind = value.data_type().clone();
    let mut b = Int64Builder::with_capacity(value.len());
    for i in 0..value.len() {
        if value.is_null(i) {
            b.append_null();
            continue;
        }
        let v = match &kind {
            arrow_schema::DataType::Interval(_) => {
                let months = value.as_primitive::<IntervalYearMonthType>().value(i) as i64;
                match unit {
                    TimeUnit::Year => months / 12,
                    TimeUnit::Month => months % 12,
                    _ => {
                        return Err(EvalError::Invalid(format!(
                            "cannot extract {unit:?} from a year-month interval"
                        )));
                    }
                }
            }
            arrow_schema::DataType::Duration(_) => {
                let ms = value.as_primitive::<DurationMillisecondType>().value(i);
                match unit {
                    TimeUnit::Day => ms / 86_400_000,
                    TimeUnit::Hour => ms / 3_600_000 % 24,
                    TimeUnit::Minute => ms / 60_000 % 60,
                    TimeUnit::Second => ms / 1000 % 60,
                    TimeUnit::Millisecond => ms % 60_000,
                    _ => {
                        return Err(EvalError::Invalid(format!(
                            "cannot extract {unit:?} from a day-time interval"
                        )));
                    }
                }
            }
            arrow_schema::DataType::Date32 => {
                let seconds = i64::from(value.as_primitive::<Date32Type>().value(i)) * 86_400;
                extract_civil(unit, &CivilDateTime::from_seconds(seconds, 0), seconds)
            }
            _ => extract_field(unit, wall_clock(value, i, &kind, ctx)?),
        };
        b.append_value(v);
    }
    Ok(Arc::new(b.finish()))
}

/// A calendar field of a wall-clock timestamp.
pub fn extract_field(unit: TimeUnit, wall: i64) -> i64 {
    extract_civil(
        unit,
        &CivilDateTime::from_nanos(wall),
        wall.div_euclid(NANOS_PER_SECOND),
    )
}

/// A calendar field of civil fields whose epoch second is `seconds`. The sub-second units are
/// the fraction only, as Flink has them (58.987 s has MILLISECOND 987).
fn extract_civil(unit: TimeUnit, c: &CivilDateTime, seconds: i64) -> i64 {
    match unit {
        TimeUnit::Millennium => (c.year + 999).div_euclid(1000),
        TimeUnit::Century => (c.year + 99).div_euclid(100),
        TimeUnit::Decade => c.year.div_euclid(10),
        TimeUnit::Year => c.year,
        TimeUnit::Quarter => (c.month as i64 - 1) / 3 + 1,
        TimeUnit::Month => c.month as i64,
        TimeUnit::Week => iso_week(c),
        TimeUnit::Day => c.day as i64,
        TimeUnit::Hour => c.hour as i64,
        TimeUnit::Minute => c.minute as i64,
        TimeUnit::Second => c.second as i64,
        TimeUnit::Millisecond => c.nano as i64 / 1_000_000,
        TimeUnit::Microsecond => c.nano as i64 / 1000,
        TimeUnit::Nanosecond => c.nano as i64,
        // Sunday = 1 … Saturday = 7, as Flink (Calcite).
        TimeUnit::DayOfWeek => c.day_of_week_iso() as i64 % 7 + 1,
        TimeUnit::DayOfYear => c.day_of_year() as i64,
        TimeUnit::Epoch => seconds,
        TimeUnit::IsoDayOfWeek => c.day_of_week_iso() as i64,
        // The year the ISO week belongs to: early January days of week 52/53 belong to the
        // year before, late December days of week 1 to the year after.
        TimeUnit::IsoYear => match (c.month, iso_week(c)) {
            (1, w) if w >= 52 => c.year - 1,
            (12, 1) => c.year + 1,
            _ => c.year,
        },
    }
}

fn iso_week(c: &CivilDateTime) -> i64 {
    let doy = c.day_of_year() as i64;
    let dow = c.day_of_week_iso() as i64;
    let week = (doy - dow + 10) / 7;
    if week < 1 {
        let prev = CivilDateTime {
            year: c.year - 1,
            month: 12,
            day: 31,
            ..*c
        };
        iso_week(&prev)
    } else if week == 53 {
        let jan1_next = days_from_civil(c.year + 1, 1, 1);
        let dow_next = (jan1_next + 3).rem_euclid(7) + 1;
        if dow_next <= 4 { 1 } else { 53 }
    } else {
        week
    }
}

fn resolve_round_to(args: &[DataType]) -> Result<Signature, String> {
    let [unit, value] = args else {
        return Err("expects (unit, value)".into());
    };
    if !matches!(
        value.kind,
        TypeKind::Date | TypeKind::Time(_) | TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_)
    ) {
        return Err(format!("cannot round {} to a time unit", value.kind));
    }
    Ok(Signature::new(
        vec![unit.clone(), value.clone()],
        value.clone(),
    ))
}

fn floor_to(args: &[ArrayRef], ctx: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    round_to(args, ctx, t, false)
}

fn ceil_to(args: &[ArrayRef], ctx: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    round_to(args, ctx, t, true)
}

/// A unit of fixed length (DAY and below), for FLOOR/CEIL of a wall clock.
fn fixed_unit(unit: TimeUnit) -> Result<i64, EvalError> {
    Ok(match unit {
        TimeUnit::Millisecond => NANOS_PER_MILLI,
        TimeUnit::Second => NANOS_PER_SECOND,
        TimeUnit::Minute => 60 * NANOS_PER_SECOND,
        TimeUnit::Hour => 3600 * NANOS_PER_SECOND,
        TimeUnit::Day => NANOS_PER_DAY,
        other => return Err(EvalError::Invalid(format!("cannot round to {other:?}"))),
    })
}

fn round_to(
    args: &[ArrayRef],
    ctx: &EvalContext,
    t: &DataType,
    ceil: bool,
) -> Result<ArrayRef, EvalError> {
    let unit = unit_arg(args)?;
    let value = &args[1];
    let kind = value.data_type().clone();
    let mut out: Vec<Option<i64>> = Vec::with_capacity(value.len());
    // A TIMESTAMP_LTZ is rounded on its wall clock and turned back into an instant with the
    // offset of the input instant, as Flink does, not with the offset at the result: on a
    // DST-change day FLOOR(… TO DAY) can be 01:00 or 23:00 local time.
    let ltz = matches!(kind, arrow_schema::DataType::Timestamp(_, Some(_)));
    let mut offsets: Vec<i64> = Vec::with_capacity(if ltz { value.len() } else { 0 });
    for i in 0..value.len() {
        if ltz {
            offsets.push(if value.is_null(i) {
                0
            } else {
                ctx.zone
                    .offset_nanos_at(value.as_primitive::<TimestampNanosecondType>().value(i))
            });
        }
        if value.is_null(i) {
            out.push(None);
            continue;
        }
        let date = matches!(kind, arrow_schema::DataType::Date32)
            .then(|| i64::from(value.as_primitive::<Date32Type>().value(i)));
        if let Some(days) = calendar_unit(unit)
            .map(|u| -> Result<i64, EvalError> {
                let days = match date {
                    Some(d) => d,
                    None => wall_clock(value, i, &kind, ctx)?.div_euclid(NANOS_PER_DAY),
                };
                Ok(calendar_round(u, days, ceil))
            })
            .transpose()?
        {
            out.push(Some(if date.is_some() {
                days
            } else {
                days.checked_mul(NANOS_PER_DAY).ok_or_else(out_of_range)?
            }));
            continue;
        }
        if let Some(days) = date {
            // A DATE is already whole days.
            out.push(Some(days));
            continue;
        }
        let wall = wall_clock(value, i, &kind, ctx)?;
        let step = fixed_unit(unit)?;
        let mut r = wall - wall.rem_euclid(step);
        if ceil && r != wall {
            r = r.checked_add(step).ok_or_else(out_of_range)?;
        }
        out.push(Some(r));
    }
    Ok(match t.kind {
        TypeKind::Date => Arc::new(
            out.into_iter()
                .map(|v| v.map(|days| days as i32))
                .collect::<PrimitiveArray<Date32Type>>(),
        ),
        TypeKind::Time(_) => Arc::new(
            out.into_iter()
                .collect::<PrimitiveArray<Time64NanosecondType>>(),
        ),
        TypeKind::TimestampLtz(_) => Arc::new(
            out.into_iter()
                .enumerate()
                .map(|(i, v)| v.map(|n| n.saturating_sub(offsets.get(i).copied().unwrap_or(0))))
                .collect::<TimestampNanosecondArray>()
                .with_timezone("UTC"),
        ),
        _ => Arc::new(out.into_iter().collect::<TimestampNanosecondArray>()),
    })
}

/// The units FLOOR/CEIL round on the date alone (Calcite's `julianDateFloor`).
#[derive(Clone, Copy)]
enum CalendarUnit {
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
}

fn calendar_unit(unit: TimeUnit) -> Option<CalendarUnit> {
    Some(match unit {
        TimeUnit::Week => CalendarUnit::Week,
        TimeUnit::Month => CalendarUnit::Month,
        TimeUnit::Quarter => CalendarUnit::Quarter,
        TimeUnit::Year => CalendarUnit::Year,
        TimeUnit::Decade => CalendarUnit::Decade,
        TimeUnit::Century => CalendarUnit::Century,
        TimeUnit::Millennium => CalendarUnit::Millennium,
        _ => return None,
    })
}

/// FLOOR/CEIL of a day number to a calendar unit, as Flink 2.3 computes it: on the date only
/// (the time of day is dropped, so CEIL('2024-07-01 12:00' TO MONTH) is July 1st), and with
/// Flink's quirks (oracle, Q11): CEIL TO QUARTER moves on from every day but January 1st, and
/// CEIL TO DECADE/CENTURY/MILLENNIUM always moves on, even from the first day.
fn calendar_round(unit: CalendarUnit, days: i64, ceil: bool) -> i64 {
    let (year, month, day) = civil_from_days(days);
    let first = |y: i64, m: i64| {
        days_from_civil(
            y + (m - 1).div_euclid(12),
            ((m - 1).rem_euclid(12) + 1) as u32,
            1,
        )
    };
    let m = i64::from(month);
    match unit {
        CalendarUnit::Week => {
            let dow = (days + 4).rem_euclid(7); // Sunday = 0
            if ceil && dow > 0 {
                days - dow + 7
            } else {
                days - dow
            }
        }
        CalendarUnit::Month if ceil && day > 1 => first(year, m + 1),
        CalendarUnit::Month => first(year, m),
        CalendarUnit::Quarter => {
            let start = (m - 1) / 3 * 3 + 1;
            if ceil && (month > 1 || day > 1) {
                first(year, start + 3)
            } else {
                first(year, start)
            }
        }
        CalendarUnit::Year if ceil && (month > 1 || day > 1) => first(year + 1, 1),
        CalendarUnit::Year => first(year, 1),
        CalendarUnit::Decade => first(10 * (year / 10 + i64::from(ceil)), 1),
        CalendarUnit::Century => {
            let c = 100 * ((year + 99) / 100);
            first(if ceil { c + 1 } else { c - 99 }, 1)
        }
        CalendarUnit::Millennium => {
            let c = 1000 * ((year + 999) / 1000);
            first(if ceil { c + 1 } else { c - 999 }, 1)
        }
    }
}

/// The error for a result outside the nanosecond timestamp range (see
/// docs/design/0002-timestamp-range.md).
pub fn out_of_range() -> EvalError {
    EvalError::Invalid(
        "timestamp out of range: Tideline supports TIMESTAMP values from 1677-09-21 to 2262-04-11"
            .into(),
    )
}

/// Adds months to a wall clock, clamping the day to the target month's length.
pub fn add_months(wall: i64, months: i64) -> Result<i64, EvalError> {
    if months == 0 {
        return Ok(wall);
    }
    let c = CivilDateTime::from_nanos(wall);
    let total = (c.year * 12 + c.month as i64 - 1)
        .checked_add(months)
        .ok_or_else(out_of_range)?;
    let (y, m) = (total.div_euclid(12), (total.rem_euclid(12) + 1) as u32);
    if y.abs() > 1_000_000_000 {
        return Err(out_of_range());
    }
    let d = c.day.min(days_in_month(y, m));
    let in_day = wall.rem_euclid(NANOS_PER_DAY);
    days_from_civil(y, m, d)
        .checked_mul(NANOS_PER_DAY)
        .and_then(|n| n.checked_add(in_day))
        .ok_or_else(out_of_range)
}

/// `interval * n` and `n * interval` (n a BIGINT): months or milliseconds times n.
pub fn interval_times(
    l: &ArrayRef,
    r: &ArrayRef,
    result: &DataType,
) -> Result<ArrayRef, EvalError> {
    let (interval, count) = if matches!(l.data_type(), arrow_schema::DataType::Int64) {
        (r, l.as_primitive::<Int64Type>())
    } else {
        (l, r.as_primitive::<Int64Type>())
    };
    let overflow = || EvalError::Invalid("interval value out of range".into());
    let mut out: Vec<Option<i64>> = Vec::with_capacity(interval.len());
    for i in 0..interval.len() {
        if interval.is_null(i) || count.is_null(i) {
            out.push(None);
            continue;
        }
        let n = count.value(i);
        out.push(Some(match result.kind {
            TypeKind::IntervalYearMonth => {
                let months = i64::from(interval.as_primitive::<IntervalYearMonthType>().value(i));
                months
                    .checked_mul(n)
                    .filter(|m| i32::try_from(*m).is_ok())
                    .ok_or_else(overflow)?
            }
            _ => interval
                .as_primitive::<DurationMillisecondType>()
                .value(i)
                .checked_mul(n)
                .ok_or_else(overflow)?,
        }));
    }
    Ok(temporal_column(out, &result.kind))
}

/// `temporal ± interval` and `interval ± interval`.
pub fn interval_arithmetic(
    subtract: bool,
    l: &ArrayRef,
    r: &ArrayRef,
    ctx: &EvalContext,
    result: &DataType,
) -> Result<ArrayRef, EvalError> {
    let sign = if subtract { -1 } else { 1 };
    let n = l.len();
    let mut out: Vec<Option<i64>> = Vec::with_capacity(n);
    for i in 0..n {
        if l.is_null(i) || r.is_null(i) {
            out.push(None);
            continue;
        }
        let (months, millis) = match r.data_type() {
            arrow_schema::DataType::Interval(_) => {
                (r.as_primitive::<IntervalYearMonthType>().value(i) as i64, 0)
            }
            _ => (0, r.as_primitive::<DurationMillisecondType>().value(i)),
        };
        let v = match &result.kind {
            TypeKind::IntervalDayTime => {
                l.as_primitive::<DurationMillisecondType>().value(i) + sign * millis
            }
            TypeKind::IntervalYearMonth => {
                l.as_primitive::<IntervalYearMonthType>().value(i) as i64 + sign * months
            }
            _ => {
                let nanos = millis
                    .checked_mul(sign * NANOS_PER_MILLI)
                    .ok_or_else(out_of_range)?;
                shift(l, i, ctx, sign * months, nanos)?
            }
        };
        out.push(Some(v));
    }
    Ok(temporal_column(out, &result.kind))
}

/// Row `i` of a date/time column moved by calendar months and then by elapsed nanoseconds.
/// Returns the wall clock, or the instant for TIMESTAMP_LTZ, in nanoseconds. As in Flink, a
/// TIMESTAMP_LTZ moves on its UTC fields, not the session zone's (a day is 24 physical hours
/// and a month moves the UTC date), and a TIME has no months to move.
fn shift(
    value: &ArrayRef,
    i: usize,
    ctx: &EvalContext,
    months: i64,
    nanos: i64,
) -> Result<i64, EvalError> {
    let kind = value.data_type();
    let start = match kind {
        arrow_schema::DataType::Date32 => {
            // Days, not nanoseconds: a DATE spans years 0000–9999.
            let days = i64::from(value.as_primitive::<Date32Type>().value(i));
            return shift_date(days, months, nanos);
        }
        arrow_schema::DataType::Timestamp(_, Some(_)) => {
            value.as_primitive::<TimestampNanosecondType>().value(i)
        }
        arrow_schema::DataType::Time64(_) => {
            return Ok(wall_clock(value, i, kind, ctx)?.wrapping_add(nanos % NANOS_PER_DAY));
        }
        _ => wall_clock(value, i, kind, ctx)?,
    };
    add_months(start, months)?
        .checked_add(nanos)
        .ok_or_else(out_of_range)
}

/// A DATE (a day number) moved by calendar months, clamping the day to the month's length,
/// then by the whole days in `nanos`.
fn shift_date(days: i64, months: i64, nanos: i64) -> Result<i64, EvalError> {
    let (y, m, d) = civil_from_days(days);
    let total = (y * 12 + i64::from(m) - 1)
        .checked_add(months)
        .ok_or_else(date_out_of_range)?;
    let (y, m) = (total.div_euclid(12), (total.rem_euclid(12) + 1) as u32);
    if y.abs() > 5_000_000 {
        return Err(date_out_of_range());
    }
    let days = days_from_civil(y, m, d.min(days_in_month(y, m))) + nanos.div_euclid(NANOS_PER_DAY);
    i32::try_from(days)
        .map(i64::from)
        .map_err(|_| date_out_of_range())
}

fn date_out_of_range() -> EvalError {
    EvalError::Invalid("DATE value out of range".into())
}

/// A column of `kind` from nanoseconds (wall clocks; instants for TIMESTAMP_LTZ), day numbers
/// for DATE, or milliseconds / months for the interval kinds.
fn temporal_column(out: Vec<Option<i64>>, kind: &TypeKind) -> ArrayRef {
    match kind {
        TypeKind::IntervalDayTime => Arc::new(
            out.into_iter()
                .collect::<PrimitiveArray<DurationMillisecondType>>(),
        ),
        TypeKind::IntervalYearMonth => Arc::new(
            out.into_iter()
                .map(|v| v.map(|m| m as i32))
                .collect::<PrimitiveArray<IntervalYearMonthType>>(),
        ),
        TypeKind::Date => Arc::new(
            out.into_iter()
                .map(|v| v.map(|days| days as i32))
                .collect::<PrimitiveArray<Date32Type>>(),
        ),
        TypeKind::Time(_) => Arc::new(
            out.into_iter()
                .map(|v| v.map(|n| n.rem_euclid(NANOS_PER_DAY)))
                .collect::<PrimitiveArray<Time64NanosecondType>>(),
        ),
        TypeKind::TimestampLtz(_) => Arc::new(
            out.into_iter()
                .collect::<TimestampNanosecondArray>()
                .with_timezone("UTC"),
        ),
        _ => Arc::new(out.into_iter().collect::<TimestampNanosecondArray>()),
    }
}

/// A TIMESTAMPADD / TIMESTAMPDIFF unit as calendar months or as a fixed length.
enum Step {
    Months(i64),
    Nanos(i64),
}

fn step(unit: TimeUnit) -> Result<Step, EvalError> {
    Ok(match unit {
        TimeUnit::Year => Step::Months(12),
        TimeUnit::Quarter => Step::Months(3),
        TimeUnit::Month => Step::Months(1),
        TimeUnit::Week => Step::Nanos(7 * NANOS_PER_DAY),
        TimeUnit::Day => Step::Nanos(NANOS_PER_DAY),
        TimeUnit::Hour => Step::Nanos(3600 * NANOS_PER_SECOND),
        TimeUnit::Minute => Step::Nanos(60 * NANOS_PER_SECOND),
        TimeUnit::Second => Step::Nanos(NANOS_PER_SECOND),
        TimeUnit::Millisecond => Step::Nanos(NANOS_PER_MILLI),
        other => {
            return Err(EvalError::Invalid(format!(
                "{other:?} is not a unit of TIMESTAMPADD/TIMESTAMPDIFF"
            )));
        }
    })
}

fn is_datetime(kind: &TypeKind) -> bool {
    matches!(
        kind,
        TypeKind::Date | TypeKind::Time(_) | TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_)
    )
}

/// TIMESTAMPADD(unit, count, datetime): the datetime's type. (The binder has already turned a
/// DATE into TIMESTAMP(6) for units smaller than a day, as Flink types it.)
fn resolve_timestamp_add(args: &[DataType]) -> Result<Signature, String> {
    let [unit, count, value] = args else {
        return Err("TIMESTAMPADD expects (unit, count, datetime)".into());
    };
    if !count.kind.is_integer() {
        return Err(format!(
            "TIMESTAMPADD expects an integer count, got {}",
            count.kind
        ));
    }
    if !is_datetime(&value.kind) {
        return Err(format!("TIMESTAMPADD cannot add to {}", value.kind));
    }
    let count = DataType {
        kind: TypeKind::BigInt,
        nullable: count.nullable,
    };
    Ok(Signature::new(
        vec![unit.clone(), count.clone(), value.clone()],
        DataType {
            kind: value.kind.clone(),
            nullable: count.nullable || value.nullable,
        },
    ))
}

fn timestamp_add(
    args: &[ArrayRef],
    ctx: &EvalContext,
    t: &DataType,
) -> Result<ArrayRef, EvalError> {
    let step = step(unit_arg(args)?)?;
    let counts = args[1].as_primitive::<Int64Type>();
    let value = &args[2];
    let mut out: Vec<Option<i64>> = Vec::with_capacity(value.len());
    for i in 0..value.len() {
        if counts.is_null(i) || value.is_null(i) {
            out.push(None);
            continue;
        }
        let k = counts.value(i);
        out.push(Some(match step {
            Step::Months(m) => shift(value, i, ctx, k.saturating_mul(m), 0)?,
            Step::Nanos(n) => {
                let nanos = k.checked_mul(n).ok_or_else(out_of_range)?;
                shift(value, i, ctx, 0, nanos)?
            }
        }));
    }
    Ok(temporal_column(out, &t.kind))
}

/// TIMESTAMPDIFF(unit, start, end): INT. DATE, TIMESTAMP and TIME mix (brought to one type
/// first); TIMESTAMP_LTZ only pairs with itself, as in Flink.
fn resolve_timestamp_diff(args: &[DataType]) -> Result<Signature, String> {
    let [unit, a, b] = args else {
        return Err("TIMESTAMPDIFF expects (unit, start, end)".into());
    };
    if !is_datetime(&a.kind) || !is_datetime(&b.kind) {
        return Err(format!(
            "TIMESTAMPDIFF expects two datetime values, got {} and {}",
            a.kind, b.kind
        ));
    }
    let is_ltz = |k: &TypeKind| matches!(k, TypeKind::TimestampLtz(_));
    if is_ltz(&a.kind) != is_ltz(&b.kind) {
        return Err("TIMESTAMP_LTZ only supports diff between the same type".into());
    }
    let common = match (&a.kind, &b.kind) {
        (x, y) if std::mem::discriminant(x) == std::mem::discriminant(y) => {
            common_kind(x, y).unwrap_or_else(|| x.clone())
        }
        (TypeKind::Time(_), _) | (_, TypeKind::Time(_)) => {
            return Err(format!(
                "TIMESTAMPDIFF cannot compare {} with {}",
                a.kind, b.kind
            ));
        }
        (x, y) => {
            common_kind(x, y).ok_or_else(|| format!("TIMESTAMPDIFF cannot compare {x} with {y}"))?
        }
    };
    let side = |d: &DataType| DataType {
        kind: common.clone(),
        nullable: d.nullable,
    };
    Ok(Signature::new(
        vec![unit.clone(), side(a), side(b)],
        DataType {
            kind: TypeKind::Int,
            nullable: a.nullable || b.nullable,
        },
    ))
}

/// Row `i`'s two sides of a TIMESTAMPDIFF in milliseconds (Flink's resolution here):
/// instants for TIMESTAMP_LTZ, wall clocks otherwise; a DATE from its day number, so every
/// DATE fits.
fn diff_points(
    a: &ArrayRef,
    b: &ArrayRef,
    i: usize,
    ctx: &EvalContext,
) -> Result<(i64, i64), EvalError> {
    let instants = matches!(a.data_type(), arrow_schema::DataType::Timestamp(_, Some(_)));
    let point = |array: &ArrayRef| -> Result<i64, EvalError> {
        let nanos = match array.data_type() {
            arrow_schema::DataType::Date32 => {
                return Ok(i64::from(array.as_primitive::<Date32Type>().value(i)) * 86_400_000);
            }
            _ if instants => array.as_primitive::<TimestampNanosecondType>().value(i),
            kind => wall_clock(array, i, kind, ctx)?,
        };
        Ok(nanos.div_euclid(NANOS_PER_MILLI))
    };
    Ok((point(a)?, point(b)?))
}

/// TIMESTAMPDIFF(NANOSECOND, …): BIGINT (the binder routes the unit here).
fn resolve_timestamp_diff_nanos(args: &[DataType]) -> Result<Signature, String> {
    let sig = resolve_timestamp_diff(args)?;
    Ok(Signature::new(
        sig.args,
        DataType {
            kind: TypeKind::BigInt,
            nullable: sig.return_type.nullable,
        },
    ))
}

/// Whole seconds of the difference times 10^9, as Flink computes NANOSECOND (sub-second
/// parts are lost).
fn timestamp_diff_nanos(
    args: &[ArrayRef],
    ctx: &EvalContext,
    _: &DataType,
) -> Result<ArrayRef, EvalError> {
    let (a, b) = (&args[1], &args[2]);
    let mut out = Int64Builder::with_capacity(a.len());
    for i in 0..a.len() {
        if a.is_null(i) || b.is_null(i) {
            out.append_null();
            continue;
        }
        let (start, end) = diff_points(a, b, i, ctx)?;
        out.append_value(((end - start) / 1000).wrapping_mul(NANOS_PER_SECOND));
    }
    Ok(Arc::new(out.finish()))
}

/// Flink computes the difference as an interval in milliseconds and converts it with Calcite's
/// rules, quirks included: SECOND, MILLISECOND, MICROSECOND and WEEK go through the seconds
/// as a 32-bit integer (so sub-second parts are lost and large spans wrap), MINUTE, HOUR and
/// DAY divide the milliseconds, and the month-based units count calendar months.
fn timestamp_diff(
    args: &[ArrayRef],
    ctx: &EvalContext,
    _: &DataType,
) -> Result<ArrayRef, EvalError> {
    let unit = unit_arg(args)?;
    let (a, b) = (&args[1], &args[2]);
    let mut out = arrow_array::builder::Int32Builder::with_capacity(a.len());
    for i in 0..a.len() {
        if a.is_null(i) || b.is_null(i) {
            out.append_null();
            continue;
        }
        let (start, end) = diff_points(a, b, i, ctx)?;
        let millis = end - start;
        let seconds = (millis / 1000) as i32;
        let units = match unit {
            TimeUnit::Second => seconds,
            TimeUnit::Millisecond => seconds.wrapping_mul(1000),
            TimeUnit::Microsecond => seconds.wrapping_mul(1_000_000),
            TimeUnit::Week => seconds / 604_800,
            TimeUnit::Minute => (millis / 60_000) as i32,
            TimeUnit::Hour => (millis / 3_600_000) as i32,
            TimeUnit::Day => (millis / 86_400_000) as i32,
            TimeUnit::Month => months_between(end, start) as i32,
            TimeUnit::Quarter => (months_between(end, start) / 3) as i32,
            TimeUnit::Year => (months_between(end, start) / 12) as i32,
            other => {
                return Err(EvalError::Invalid(format!(
                    "{other:?} is not a unit of TIMESTAMPDIFF"
                )));
            }
        };
        out.append_value(units);
    }
    Ok(Arc::new(out.finish()))
}

/// `(a - b) <qualifier>` (the dialect's `DATETIME_MINUS_*(a, b, 'INTERVAL …')`): two values
/// of one datetime type (TIMESTAMPs of any precision pair), an interval of `kind`.
fn resolve_datetime_minus(args: &[DataType], kind: TypeKind) -> Result<Signature, String> {
    let [a, b, qualifier] = args else {
        return Err("expects (datetime, datetime, qualifier)".into());
    };
    if !is_datetime(&a.kind) || !is_datetime(&b.kind) {
        return Err(
            "Supported form(s): '-(<DATETIME>, <DATETIME>, <DATETIME_INTERVAL>)'".to_string(),
        );
    }
    if std::mem::discriminant(&a.kind) != std::mem::discriminant(&b.kind) {
        return Err("Parameters must be of the same type".into());
    }
    let common = common_kind(&a.kind, &b.kind).unwrap_or_else(|| a.kind.clone());
    let side = |d: &DataType| DataType {
        kind: common.clone(),
        nullable: d.nullable,
    };
    Ok(Signature::new(
        vec![side(a), side(b), qualifier.clone()],
        DataType {
            kind,
            nullable: a.nullable || b.nullable,
        },
    ))
}

/// `(a - b) DAY` and the other day-time qualifiers: the whole difference in milliseconds,
/// whatever the unit (Flink does not truncate it to the unit).
fn datetime_minus_millis(
    args: &[ArrayRef],
    ctx: &EvalContext,
    _: &DataType,
) -> Result<ArrayRef, EvalError> {
    let (a, b) = (&args[0], &args[1]);
    let mut out = PrimitiveBuilder::<DurationMillisecondType>::with_capacity(a.len());
    for i in 0..a.len() {
        if a.is_null(i) || b.is_null(i) {
            out.append_null();
            continue;
        }
        let (end, start) = diff_points(a, b, i, ctx)?;
        out.append_value(end - start);
    }
    Ok(Arc::new(out.finish()))
}

/// `(a - b) MONTH`, `YEAR`, `YEAR TO MONTH`: whole calendar months from `b` to `a`.
fn datetime_minus_months(
    args: &[ArrayRef],
    ctx: &EvalContext,
    _: &DataType,
) -> Result<ArrayRef, EvalError> {
    let (a, b) = (&args[0], &args[1]);
    let mut out = PrimitiveBuilder::<IntervalYearMonthType>::with_capacity(a.len());
    for i in 0..a.len() {
        if a.is_null(i) || b.is_null(i) {
            out.append_null();
            continue;
        }
        let (end, start) = diff_points(a, b, i, ctx)?;
        let months = i32::try_from(months_between(end, start))
            .map_err(|_| EvalError::Invalid("interval out of range".into()))?;
        out.append_value(months);
    }
    Ok(Arc::new(out.finish()))
}

/// Whole months from `t1` to `t0` (both milliseconds), negative when `t0` is earlier: the
/// largest count that, added to `t1` as calendar months (the day clamped to the month's
/// length), does not pass `t0`.
fn months_between(t0: i64, t1: i64) -> i64 {
    if t0 < t1 {
        return -months_between(t1, t0);
    }
    let civil = |ms: i64| {
        let (y, m, d) = civil_from_days(ms.div_euclid(86_400_000));
        (y, m, d, ms.rem_euclid(86_400_000))
    };
    let (y0, m0, d0, time0) = civil(t0);
    let (y1, m1, d1, time1) = civil(t1);
    let mut months = (y0 - y1) * 12 + i64::from(m0) - i64::from(m1);
    if (d1.min(days_in_month(y0, m0)), time1) > (d0, time0) {
        months -= 1;
    }
    months
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicI64, Ordering};

    use super::*;
    use crate::clock::Clock;
    use crate::types::time::SessionZone;

    /// A clock that moves one second forward at every reading.
    #[derive(Debug, Default)]
    struct TickingClock(AtomicI64);

    impl Clock for TickingClock {
        fn now_nanos(&self) -> i64 {
            self.0.fetch_add(NANOS_PER_SECOND, Ordering::SeqCst)
        }
    }

    fn batch_context() -> EvalContext {
        EvalContext {
            zone: SessionZone::utc(),
            clock: Arc::new(TickingClock::default()),
            query_start: 42 * NANOS_PER_SECOND,
            batch_mode: true,
            num_rows: 3,
        }
    }

    fn instants(a: ArrayRef) -> Vec<i64> {
        a.as_primitive::<TimestampNanosecondType>()
            .values()
            .to_vec()
    }

    #[test]
    fn batch_mode_reads_the_clock_once_per_query_except_for_row_functions() {
        let ctx = batch_context();
        let ltz = DataType::not_null(TypeKind::TimestampLtz(3));
        let start = 42 * NANOS_PER_SECOND;
        assert_eq!(
            instants(query_now(&[], &ctx, &ltz).unwrap()),
            vec![start; 3]
        );
        let per_row = instants(row_now(&[], &ctx, &ltz).unwrap());
        assert_eq!(per_row, vec![0, NANOS_PER_SECOND, 2 * NANOS_PER_SECOND]);
    }

    #[test]
    fn streaming_mode_reads_the_clock_per_row() {
        let ctx = EvalContext {
            batch_mode: false,
            ..batch_context()
        };
        let ltz = DataType::not_null(TypeKind::TimestampLtz(3));
        let values = instants(query_now(&[], &ctx, &ltz).unwrap());
        assert_eq!(values, vec![0, NANOS_PER_SECOND, 2 * NANOS_PER_SECOND]);
    }
}
