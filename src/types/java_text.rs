//! Values as the `toString` of the Java objects Flink hands to the `print` connector (its
//! `Row.toString`): `true`, `null`, `[1, 2, -1]` for bytes, `java.time` text for dates and
//! times (`2021-01-02T03:04:05.100`, an `Instant` in UTC with `Z`), `Period`/`Duration` for
//! intervals, `BigDecimal.toString`, maps in `HashMap` order and nested rows as `+I[…]`.

use std::fmt::Write;

use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::*;

use super::java_hash::{hash_map_order, java_string_hash};
use super::text::{write_java_double, write_java_float};
use super::time::civil_from_days;
use super::{DataType, NANOS_PER_DAY, NANOS_PER_SECOND, TypeKind};

/// Appends the Java text of row `row` of `array` (`null` for NULL).
pub fn write_java_value(out: &mut String, array: &dyn Array, row: usize, data_type: &DataType) {
    if row >= array.len() || array.is_null(row) {
        out.push_str("null");
        return;
    }
    macro_rules! prim {
        ($t:ty) => {
            match array.as_primitive_opt::<$t>() {
                Some(a) => a.value(row),
                None => {
                    out.push_str("null");
                    return;
                }
            }
        };
    }
    match &data_type.kind {
        TypeKind::Null => out.push_str("null"),
        TypeKind::Boolean => match array.as_boolean_opt() {
            Some(a) => out.push_str(if a.value(row) { "true" } else { "false" }),
            None => out.push_str("null"),
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
        TypeKind::Decimal { scale, .. } => write_big_decimal(out, prim!(Decimal128Type), *scale),
        TypeKind::Char(_) | TypeKind::VarChar(_) => match array.as_string_opt::<i32>() {
            Some(a) => out.push_str(a.value(row)),
            None => out.push_str("null"),
        },
        TypeKind::Binary(_) | TypeKind::VarBinary(_) => match array.as_binary_opt::<i32>() {
            Some(a) => {
                out.push('[');
                for (n, b) in a.value(row).iter().enumerate() {
                    if n > 0 {
                        out.push_str(", ");
                    }
                    let _ = write!(out, "{}", *b as i8);
                }
                out.push(']');
            }
            None => out.push_str("null"),
        },
        TypeKind::Date => write_local_date(out, i64::from(prim!(Date32Type))),
        TypeKind::Time(_) => write_local_time(out, prim!(Time64NanosecondType), false),
        TypeKind::Timestamp(_) => {
            let nanos = prim!(TimestampNanosecondType);
            write_local_date(out, nanos.div_euclid(NANOS_PER_DAY));
            out.push('T');
            write_local_time(out, nanos.rem_euclid(NANOS_PER_DAY), false);
        }
        TypeKind::TimestampLtz(_) => {
            let nanos = prim!(TimestampNanosecondType);
            write_local_date(out, nanos.div_euclid(NANOS_PER_DAY));
            out.push('T');
            write_local_time(out, nanos.rem_euclid(NANOS_PER_DAY), true);
            out.push('Z');
        }
        TypeKind::IntervalYearMonth => write_period(out, prim!(IntervalYearMonthType)),
        TypeKind::IntervalDayTime => write_duration(out, prim!(DurationMillisecondType)),
        TypeKind::Array(element) => {
            let Some(list) = array.as_list_opt::<i32>() else {
                out.push_str("null");
                return;
            };
            let offsets = list.value_offsets();
            let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
            out.push('[');
            for (n, i) in (start..end).enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                write_java_value(out, list.values().as_ref(), i, element);
            }
            out.push(']');
        }
        TypeKind::Map(key_type, value_type) => {
            let Some(map) = array.as_map_opt() else {
                out.push_str("null");
                return;
            };
            let offsets = map.value_offsets();
            let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
            let (keys, values) = (map.keys(), map.values());
            out.push('{');
            for (n, i) in hash_map_iteration(keys.as_ref(), start, end, key_type)
                .into_iter()
                .enumerate()
            {
                if n > 0 {
                    out.push_str(", ");
                }
                write_java_value(out, keys.as_ref(), i, key_type);
                out.push('=');
                write_java_value(out, values.as_ref(), i, value_type);
            }
            out.push('}');
        }
        TypeKind::Row(fields) => {
            let Some(st) = array.as_struct_opt() else {
                out.push_str("null");
                return;
            };
            out.push_str("+I[");
            for (j, (_, ty)) in fields.iter().enumerate() {
                if j > 0 {
                    out.push_str(", ");
                }
                match st.columns().get(j) {
                    Some(col) => write_java_value(out, col.as_ref(), row, ty),
                    None => out.push_str("null"),
                }
            }
            out.push(']');
        }
    }
}

/// The entries `start..end` in the order a `java.util.HashMap` filled with them iterates, for
/// key types whose Java hash is known (strings, integers, booleans); the stored order otherwise.
fn hash_map_iteration(keys: &dyn Array, start: usize, end: usize, key: &DataType) -> Vec<usize> {
    let hash = |i: usize| -> Option<i32> {
        if keys.is_null(i) {
            return Some(0);
        }
        Some(match key.kind {
            TypeKind::Char(_) | TypeKind::VarChar(_) => {
                java_string_hash(keys.as_string_opt::<i32>()?.value(i))
            }
            TypeKind::TinyInt => i32::from(keys.as_primitive_opt::<Int8Type>()?.value(i)),
            TypeKind::SmallInt => i32::from(keys.as_primitive_opt::<Int16Type>()?.value(i)),
            TypeKind::Int => keys.as_primitive_opt::<Int32Type>()?.value(i),
            TypeKind::BigInt => {
                let v = keys.as_primitive_opt::<Int64Type>()?.value(i);
                (v ^ ((v as u64) >> 32) as i64) as i32
            }
            TypeKind::Boolean => {
                if keys.as_boolean_opt()?.value(i) {
                    1231
                } else {
                    1237
                }
            }
            _ => return None,
        })
    };
    match (start..end).map(hash).collect::<Option<Vec<i32>>>() {
        // `new HashMap<>()`: sixteen buckets, doubling as it fills.
        Some(hashes) => hash_map_order(&hashes, 16)
            .into_iter()
            .map(|k| start + k)
            .collect(),
        None => (start..end).collect(),
    }
}

/// `LocalDate.toString`: `yyyy-MM-dd`, a `+` before years past 9999.
fn write_local_date(out: &mut String, days: i64) {
    let (y, m, d) = civil_from_days(days);
    if y > 9999 {
        out.push('+');
    }
    if y < 0 {
        let _ = write!(out, "-{:04}", -y);
    } else {
        let _ = write!(out, "{y:04}");
    }
    let _ = write!(out, "-{m:02}-{d:02}");
}

/// `LocalTime.toString`: `HH:mm`, then `:ss` unless seconds and fraction are zero, then the
/// fraction in groups of three digits. An `Instant` always shows the seconds.
fn write_local_time(out: &mut String, nanos_of_day: i64, always_seconds: bool) {
    let secs = nanos_of_day / NANOS_PER_SECOND;
    let nano = nanos_of_day % NANOS_PER_SECOND;
    let _ = write!(out, "{:02}:{:02}", secs / 3600, secs / 60 % 60);
    if secs % 60 == 0 && nano == 0 && !always_seconds {
        return;
    }
    let _ = write!(out, ":{:02}", secs % 60);
    if nano == 0 {
    } else if nano % 1_000_000 == 0 {
        let _ = write!(out, ".{:03}", nano / 1_000_000);
    } else if nano % 1000 == 0 {
        let _ = write!(out, ".{:06}", nano / 1000);
    } else {
        let _ = write!(out, ".{nano:09}");
    }
}

/// `Period.toString` of a year-month interval: `P1Y2M`, `P-1Y-1M`, `P0D`.
fn write_period(out: &mut String, months: i32) {
    let (years, months) = (months / 12, months % 12);
    if years == 0 && months == 0 {
        out.push_str("P0D");
        return;
    }
    out.push('P');
    if years != 0 {
        let _ = write!(out, "{years}Y");
    }
    if months != 0 {
        let _ = write!(out, "{months}M");
    }
}

/// `Duration.toString` of a day-time interval in milliseconds: `PT26H3M`, `PT0.5S`, `PT-1.5S`.
fn write_duration(out: &mut String, millis: i64) {
    if millis == 0 {
        out.push_str("PT0S");
        return;
    }
    let (seconds, nanos) = (millis.div_euclid(1000), millis.rem_euclid(1000) * 1_000_000);
    let total = if seconds < 0 && nanos > 0 {
        seconds + 1
    } else {
        seconds
    };
    let (hours, minutes, secs) = (total / 3600, (total % 3600) / 60, total % 60);
    out.push_str("PT");
    if hours != 0 {
        let _ = write!(out, "{hours}H");
    }
    if minutes != 0 {
        let _ = write!(out, "{minutes}M");
    }
    if secs == 0 && nanos == 0 && (hours != 0 || minutes != 0) {
        return;
    }
    if seconds < 0 && nanos > 0 && secs == 0 {
        out.push_str("-0");
    } else {
        let _ = write!(out, "{secs}");
    }
    if nanos > 0 {
        let fraction = if seconds < 0 {
            2 * NANOS_PER_SECOND - nanos
        } else {
            nanos + NANOS_PER_SECOND
        };
        let digits = fraction.to_string();
        out.push('.');
        out.push_str(digits[1..].trim_end_matches('0'));
    }
    out.push('S');
}

/// `BigDecimal.toString`: plain when the scale is positive and the exponent not below -6,
/// scientific (`1E-7`, `1.5E+3`) otherwise.
fn write_big_decimal(out: &mut String, unscaled: i128, scale: u8) {
    let digits = unscaled.unsigned_abs().to_string();
    let adjusted = digits.len() as i64 - 1 - i64::from(scale);
    if unscaled < 0 {
        out.push('-');
    }
    if adjusted >= -6 {
        let scale = scale as usize;
        if scale == 0 {
            out.push_str(&digits);
        } else if digits.len() > scale {
            let (int, frac) = digits.split_at(digits.len() - scale);
            let _ = write!(out, "{int}.{frac}");
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', scale - digits.len()));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "E{adjusted}");
    }
}

/// Decimal digits with Java's `NumberFormat` grouping (`1234567` → `1,234,567`), as
/// `%,d` and Calcite's and commons-math's messages print numbers.
pub fn group_thousands(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_time_and_number_text() {
        let text = |f: &dyn Fn(&mut String)| {
            let mut s = String::new();
            f(&mut s);
            s
        };
        assert_eq!(text(&|s| write_local_time(s, 0, false)), "00:00");
        assert_eq!(
            text(&|s| write_local_time(s, 3_723_100_000_000, false)),
            "01:02:03.100"
        );
        assert_eq!(
            text(&|s| write_local_time(s, 1_000, true)),
            "00:00:00.000001"
        );
        assert_eq!(text(&|s| write_period(s, 14)), "P1Y2M");
        assert_eq!(text(&|s| write_period(s, -13)), "P-1Y-1M");
        assert_eq!(text(&|s| write_duration(s, 93_780_000)), "PT26H3M");
        assert_eq!(text(&|s| write_duration(s, -1_500)), "PT-1.5S");
        assert_eq!(text(&|s| write_duration(s, 500)), "PT0.5S");
        assert_eq!(text(&|s| write_duration(s, 3_600_000)), "PT1H");
        assert_eq!(text(&|s| write_big_decimal(s, 1230, 2)), "12.30");
        assert_eq!(text(&|s| write_big_decimal(s, 1, 8)), "1E-8");
        assert_eq!(text(&|s| write_big_decimal(s, -5, 2)), "-0.05");
        assert_eq!(text(&|s| write_local_date(s, 2_932_897)), "+10000-01-01");
    }
}
