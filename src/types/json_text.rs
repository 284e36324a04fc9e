//! JSON text written from Arrow values, as Flink writes it: the `json` format's rows and the
//! JSON functions' values (`JSON_OBJECT`, `JSON_ARRAY`, `JSON_STRING`) share this writer.

use std::fmt::Write;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::NullBuffer;

use crate::types::cell_writer::{CellWriter, push_integer};
use crate::types::text::{
    TextStyle, base64_encode, write_cell, write_decimal, write_decimal_normalized,
    write_java_double, write_java_double_as_big_decimal, write_java_float,
};
use crate::types::time::{SessionZone, write_date, write_iso_timestamp, write_time_trimmed};
use crate::types::{DataType, NANOS_PER_DAY, Schema, TypeKind};

/// `json.timestamp-format.standard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampStandard {
    /// `yyyy-MM-dd HH:mm:ss.s{precision}`.
    Sql,
    /// `yyyy-MM-ddTHH:mm:ss.s{precision}`.
    Iso8601,
}

/// How rows and values are written as JSON: the `json.encode.*` and
/// `json.timestamp-format.standard` options.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonWriter {
    pub timestamp_standard: TimestampStandard,
    pub encode_decimal_as_plain_number: bool,
    pub encode_ignore_null_fields: bool,
    /// DOUBLE as `BigDecimal.valueOf(d).toString()` (`1.0E+20`), as Flink's JSON functions
    /// write it; the format itself writes `Double.toString` (`1.0E20`).
    pub encode_double_as_big_decimal: bool,
}

impl Default for JsonWriter {
    fn default() -> Self {
        JsonWriter {
            timestamp_standard: TimestampStandard::Sql,
            encode_decimal_as_plain_number: false,
            encode_ignore_null_fields: false,
            encode_double_as_big_decimal: false,
        }
    }
}

impl JsonWriter {
    /// Appends a batch as JSON lines, each ended by `\n`, fields in schema order, as Flink's
    /// JSON serializer writes them.
    pub fn encode_batch(&self, batch: &RecordBatch, schema: &Schema, out: &mut Vec<u8>) {
        /// A column and the text before its value: `{"name":` as the line's first member,
        /// `,"name":` after another, escaped once per batch.
        struct Member<'a> {
            field: &'a crate::types::Field,
            col: &'a ArrayRef,
            nulls: Option<&'a NullBuffer>,
            first: Vec<u8>,
            later: Vec<u8>,
            writer: CellWriter<'a>,
        }
        let members: Vec<Member<'_>> = schema
            .fields
            .iter()
            .zip(batch.columns())
            .map(|(field, col)| {
                let mut key = String::from("{");
                write_json_string(&mut key, &field.name);
                key.push(':');
                let first = key.clone().into_bytes();
                key.replace_range(..1, ",");
                Member {
                    field,
                    col,
                    nulls: col.nulls(),
                    first,
                    later: key.into_bytes(),
                    writer: CellWriter::new(col.as_ref(), &field.data_type),
                }
            })
            .collect();
        let doubles_as_text = self.encode_double_as_big_decimal;
        let mut cell = String::new();
        for row in 0..batch.num_rows() {
            let mut first = true;
            for m in &members {
                // The null buffer taken once per batch: `is_null` asks the array for it.
                let null = m.nulls.is_some_and(|n| n.is_null(row));
                if null && self.encode_ignore_null_fields {
                    continue;
                }
                out.extend_from_slice(if first { &m.first } else { &m.later });
                first = false;
                if null {
                    out.extend_from_slice(b"null");
                    continue;
                }
                match &m.writer {
                    CellWriter::Int32(a) => push_integer(out, a.value(row).into()),
                    CellWriter::Int64(a) => push_integer(out, a.value(row)),
                    CellWriter::Float64(a) if a.value(row).is_finite() && !doubles_as_text => {
                        write_java_double(out, a.value(row))
                    }
                    CellWriter::Text(a) => {
                        cell.clear();
                        write_json_string(&mut cell, a.value(row));
                        out.extend_from_slice(cell.as_bytes());
                    }
                    _ => {
                        cell.clear();
                        self.write_json_value(&mut cell, m.col.as_ref(), row, &m.field.data_type);
                        out.extend_from_slice(cell.as_bytes());
                    }
                }
            }
            // Every member skipped (all NULL, `encode.ignore-null-fields`): `{}`.
            if first {
                out.push(b'{');
            }
            out.extend_from_slice(b"}\n");
        }
    }

    pub fn write_json_value(&self, out: &mut String, array: &dyn Array, row: usize, ty: &DataType) {
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
        match &ty.kind {
            TypeKind::Null => out.push_str("null"),
            TypeKind::Boolean => {
                let v = array.as_boolean_opt().is_some_and(|a| a.value(row));
                out.push_str(if v { "true" } else { "false" });
            }
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
            TypeKind::Float => {
                let v = prim!(Float32Type);
                if v.is_finite() {
                    write_java_float(out, v);
                } else {
                    out.push('"');
                    write_java_float(out, v);
                    out.push('"');
                }
            }
            TypeKind::Double => {
                let v = prim!(Float64Type);
                if v.is_finite() && self.encode_double_as_big_decimal {
                    write_java_double_as_big_decimal(out, v);
                } else if v.is_finite() {
                    write_java_double(out, v);
                } else {
                    out.push('"');
                    write_java_double(out, v);
                    out.push('"');
                }
            }
            TypeKind::Decimal { scale, .. } => {
                let v = prim!(Decimal128Type);
                if self.encode_decimal_as_plain_number {
                    write_decimal(out, v, *scale);
                } else {
                    write_decimal_normalized(out, v, *scale, true);
                }
            }
            TypeKind::Char(_) | TypeKind::VarChar(_) => match array.as_string_opt::<i32>() {
                Some(a) => write_json_string(out, a.value(row)),
                None => out.push_str("null"),
            },
            TypeKind::Binary(_) | TypeKind::VarBinary(_) => match array.as_binary_opt::<i32>() {
                Some(a) => write_json_string(out, &base64_encode(a.value(row))),
                None => out.push_str("null"),
            },
            TypeKind::Date => {
                out.push('"');
                write_date(out, prim!(Date32Type) as i64);
                out.push('"');
            }
            TypeKind::Time(_) => {
                out.push('"');
                write_time_trimmed(out, prim!(Time64NanosecondType).rem_euclid(NANOS_PER_DAY));
                out.push('"');
            }
            TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_) => {
                let sep = match self.timestamp_standard {
                    TimestampStandard::Sql => ' ',
                    TimestampStandard::Iso8601 => 'T',
                };
                out.push('"');
                write_iso_timestamp(out, prim!(TimestampNanosecondType), sep);
                if matches!(ty.kind, TypeKind::TimestampLtz(_)) {
                    out.push('Z');
                }
                out.push('"');
            }
            TypeKind::IntervalYearMonth => {
                let _ = write!(out, "{}", prim!(IntervalYearMonthType));
            }
            TypeKind::IntervalDayTime => {
                let _ = write!(out, "{}", prim!(DurationMillisecondType));
            }
            TypeKind::Array(element) => {
                let Some(list) = array.as_list_opt::<i32>() else {
                    out.push_str("null");
                    return;
                };
                let offsets = list.value_offsets();
                let values = list.values();
                out.push('[');
                for (n, i) in (offsets[row] as usize..offsets[row + 1] as usize).enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    self.write_json_value(out, values.as_ref(), i, element);
                }
                out.push(']');
            }
            TypeKind::Map(kt, vt) => {
                let Some(map) = array.as_map_opt() else {
                    out.push_str("null");
                    return;
                };
                let offsets = map.value_offsets();
                let (keys, values) = (map.keys(), map.values());
                out.push('{');
                for (n, i) in (offsets[row] as usize..offsets[row + 1] as usize).enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    let mut key = String::new();
                    write_cell(
                        &mut key,
                        keys.as_ref(),
                        i,
                        kt,
                        &SessionZone::utc(),
                        TextStyle::Cast,
                    );
                    write_json_string(out, &key);
                    out.push(':');
                    self.write_json_value(out, values.as_ref(), i, vt);
                }
                out.push('}');
            }
            TypeKind::Row(fields) => {
                let Some(st) = array.as_struct_opt() else {
                    out.push_str("null");
                    return;
                };
                out.push('{');
                let mut first = true;
                for (j, (name, fty)) in fields.iter().enumerate() {
                    let Some(c) = st.columns().get(j) else {
                        continue;
                    };
                    if c.is_null(row) && self.encode_ignore_null_fields {
                        continue;
                    }
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    write_json_string(out, name);
                    out.push(':');
                    self.write_json_value(out, c.as_ref(), row, fty);
                }
                out.push('}');
            }
        }
    }
}

/// A JSON string literal: `"` and `\` escaped, control characters as `\b \t \n \f \r` or
/// `\u00XX` (upper-case hex), everything else raw: Jackson's default escaping.
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xf) as usize] as char);
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}
