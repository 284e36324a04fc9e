//! Hive-style partition directories of the `filesystem` connector, as Flink writes and reads
//! them (`PartitionPathUtils`, `RowDataPartitionComputer`): a partitioned table's files live in
//! `k1=v1/k2=v2/` below the table's path, keys in `PARTITIONED BY` order, values escaped, and a
//! NULL or empty value spelled by `partition.default-name`. The sink asks this module for the
//! directory of a row; the source asks it for the values of a file's directory.

use arrow_array::{Array, ArrayRef, StringArray};

use crate::types::text::{TemporalText, TextDialect, parse_column_as};
use crate::types::time::{SessionZone, civil_from_days};
use crate::types::{DataType, NANOS_PER_DAY, TypeKind};

/// Flink's default `partition.default-name`.
pub const DEFAULT_PARTITION_NAME: &str = "__DEFAULT_PARTITION__";

/// The characters Flink writes as `%XX` in a partition directory: the ASCII controls, and
/// those that mean something in a path, a URI or a glob.
fn needs_escaping(c: char) -> bool {
    matches!(c, '\u{1}'..='\u{1f}' | '\u{7f}')
        || matches!(
            c,
            '"' | '#'
                | '%'
                | '\''
                | '*'
                | '/'
                | ':'
                | '='
                | '?'
                | '\\'
                | '{'
                | '}'
                | '['
                | ']'
                | '^'
        )
}

/// A key or value as a path component (`a/b` → `a%2Fb`).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if needs_escaping(c) {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The inverse of [`escape`], as lenient as Flink's: a `%` not followed by two characters that
/// Java's `Integer.parseInt(…, 16)` reads as a non-negative number stays as it is.
pub fn unescape(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '%' && i + 2 < chars.len() {
            let pair: String = chars[i + 1..i + 3].iter().collect();
            let digits = pair.strip_prefix('+').unwrap_or(&pair);
            if !digits.is_empty()
                && digits.chars().all(|c| c.is_ascii_hexdigit())
                && let Ok(code) = u32::from_str_radix(digits, 16)
                && let Some(c) = char::from_u32(code)
            {
                out.push(c);
                i += 3;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// The `k=v` pairs of the directories between a table's root and one of its files, outermost
/// first; components without `=` are skipped, as Flink skips them.
pub fn spec_of_path(relative_dir: &std::path::Path) -> Vec<(String, String)> {
    relative_dir
        .components()
        .filter_map(|c| {
            let name = c.as_os_str().to_string_lossy();
            let (k, v) = name.split_once('=')?;
            (!k.is_empty()).then(|| (unescape(k), unescape(v)))
        })
        .collect()
}

/// `k1=v1/k2=v2` for the values of one row (NULL and empty values are the default name; a
/// value of spaces is kept, as Flink 2.3 keeps it).
pub fn directory_of(keys: &[String], values: &[Option<String>], default_name: &str) -> String {
    let mut path = String::new();
    for (key, value) in keys.iter().zip(values) {
        if !path.is_empty() {
            path.push('/');
        }
        let value = match value {
            Some(v) if !v.is_empty() => v.as_str(),
            _ => default_name,
        };
        path.push_str(&escape(key));
        path.push('=');
        path.push_str(&escape(value));
    }
    path
}

/// Whether Flink can name a partition after a value of this type (the `toString` of its
/// internal value is taken; for other types that is an object's identity).
pub fn is_partition_type(kind: &TypeKind) -> bool {
    kind.is_numeric()
        || kind.is_string()
        || matches!(
            kind,
            TypeKind::Boolean
                | TypeKind::Date
                | TypeKind::Time(_)
                | TypeKind::Timestamp(_)
                | TypeKind::TimestampLtz(_)
        )
}

/// The text Flink names a partition with: the `toString` of the value's internal form. That
/// is the plain number, `true`, the string itself, `BigDecimal.toPlainString`; for a DATE the
/// day number and for a TIME the millisecond of the day (Flink's internal ints, which its own
/// reader then cannot parse); for timestamps `LocalDateTime.toString` (`2021-01-02T03:04:05.500`).
pub fn value_text(array: &dyn Array, row: usize, data_type: &DataType) -> Option<String> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    if array.is_null(row) {
        return None;
    }
    let mut out = String::new();
    match &data_type.kind {
        TypeKind::Date => {
            let days = array.as_primitive::<Date32Type>().value(row);
            out = days.to_string();
        }
        TypeKind::Time(_) => {
            let nanos = array.as_primitive::<Time64NanosecondType>().value(row);
            out = (nanos / 1_000_000).to_string();
        }
        TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_) => {
            let nanos = array.as_primitive::<TimestampNanosecondType>().value(row);
            write_local_date_time(&mut out, nanos);
        }
        TypeKind::Decimal { scale, .. } => {
            let unscaled = array.as_primitive::<Decimal128Type>().value(row);
            crate::types::text::write_decimal(&mut out, unscaled, *scale);
        }
        _ => crate::types::java_text::write_java_value(&mut out, array, row, data_type),
    }
    Some(out)
}

/// `java.time.LocalDateTime.toString`: seconds only when not zero (or a fraction is), the
/// fraction in groups of three digits.
fn write_local_date_time(out: &mut String, nanos: i64) {
    let days = nanos.div_euclid(NANOS_PER_DAY);
    let of_day = nanos.rem_euclid(NANOS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    if (0..=9999).contains(&y) {
        out.push_str(&format!("{y:04}-{m:02}-{d:02}"));
    } else {
        out.push_str(&format!("{y:+05}-{m:02}-{d:02}"));
    }
    let (h, rest) = (of_day / 3_600_000_000_000, of_day % 3_600_000_000_000);
    let (min, rest) = (rest / 60_000_000_000, rest % 60_000_000_000);
    let (s, frac) = (rest / 1_000_000_000, rest % 1_000_000_000);
    out.push_str(&format!("T{h:02}:{min:02}"));
    if s > 0 || frac > 0 {
        out.push_str(&format!(":{s:02}"));
        if frac > 0 {
            if frac % 1_000_000 == 0 {
                out.push_str(&format!(".{:03}", frac / 1_000_000));
            } else if frac % 1_000 == 0 {
                out.push_str(&format!(".{:06}", frac / 1_000));
            } else {
                out.push_str(&format!(".{frac:09}"));
            }
        }
    }
}

/// A column of `rows` copies of a partition value read from a path, in the column's type, as
/// Flink's `convertStringToInternalValue` reads it (`Integer.parseInt`, `Boolean.parseBoolean`,
/// `LocalDate.parse`, `LocalDateTime.parse`); the default name is NULL.
pub fn value_column(
    text: Option<&str>,
    rows: usize,
    data_type: &DataType,
) -> Result<ArrayRef, String> {
    let supported = data_type.kind.is_string()
        || data_type.kind.is_integer()
        || matches!(
            data_type.kind,
            TypeKind::Boolean
                | TypeKind::Float
                | TypeKind::Double
                | TypeKind::Date
                | TypeKind::Timestamp(_)
        );
    if let Some(text) = text
        && !supported
    {
        return Err(format!(
            "Can not convert {text} to type {} for partition value",
            data_type.kind
        ));
    }
    let strings = StringArray::from(vec![text; rows]);
    let (array, errors) = parse_column_as(
        &strings,
        &data_type.with_nullable(true),
        &SessionZone::utc(),
        TextDialect::Format(TemporalText::JsonIso),
    );
    match errors.first() {
        Some(_) => Err(format!(
            "For input string: \"{}\" (partition value of type {})",
            text.unwrap_or_default(),
            data_type.kind
        )),
        None => Ok(array),
    }
}

/// A static partition's literal (`PARTITION (k = '012')`) as the key's type names it: Flink
/// casts the literal to the column's type first, so `'012'` of an INT key is `12`, and a
/// literal the type cannot hold fails the job.
pub fn static_value_text(literal: &str, data_type: &DataType) -> Result<String, String> {
    if data_type.kind.is_string() {
        return Ok(literal.to_string());
    }
    let strings = StringArray::from(vec![Some(literal)]);
    let (array, errors) = parse_column_as(
        &strings,
        &data_type.with_nullable(true),
        &SessionZone::utc(),
        TextDialect::Cast,
    );
    if !errors.is_empty() || array.is_null(0) {
        return Err(format!(
            "For input string: '{literal}'. Invalid character found. (static partition value of type {})",
            data_type.kind
        ));
    }
    value_text(array.as_ref(), 0, data_type).ok_or_else(|| format!("not a literal: {literal}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_flink() {
        // Flink 2.3 wrote these directories (docs/flink-2.3-oracle-findings.md).
        assert_eq!(escape("a/b=c d%e"), "a%2Fb%3Dc d%25e");
        assert_eq!(
            escape("a:b#c?d*\"e'<>|\\^x"),
            "a%3Ab%23c%3Fd%2A%22e%27<>|%5C%5Ex"
        );
        assert_eq!(escape("ü{}[]"), "ü%7B%7D%5B%5D");
        assert_eq!(escape("\n"), "%0A");
        for s in ["a/b=c d%e", "ü{}[]", "%", "%4", "a%2Fb", "\u{1}x"] {
            assert_eq!(unescape(&escape(s)), s);
        }
        assert_eq!(unescape("%zz%4"), "%zz%4");
        assert_eq!(unescape("%41"), "A");
    }

    #[test]
    fn directories_and_specs() {
        let keys = vec!["k2".to_string(), "k1".to_string()];
        let dir = directory_of(&keys, &[Some("a/b".into()), None], DEFAULT_PARTITION_NAME);
        assert_eq!(dir, "k2=a%2Fb/k1=__DEFAULT_PARTITION__");
        assert_eq!(
            directory_of(&keys, &[Some(" ".into()), Some("".into())], "NONE"),
            "k2= /k1=NONE"
        );
        assert_eq!(
            spec_of_path(std::path::Path::new(&dir)),
            vec![
                ("k2".to_string(), "a/b".to_string()),
                ("k1".to_string(), DEFAULT_PARTITION_NAME.to_string())
            ]
        );
    }

    #[test]
    fn timestamps_as_local_date_time() {
        let mut s = String::new();
        write_local_date_time(&mut s, 1_609_556_645_500_000_000);
        assert_eq!(s, "2021-01-02T03:04:05.500");
        s.clear();
        write_local_date_time(&mut s, 0);
        assert_eq!(s, "1970-01-01T00:00");
    }
}
