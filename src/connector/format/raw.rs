//! The `raw` format, as Flink's: a record's bytes are the one physical column's value, with
//! no framing. Strings are the bytes in `raw.charset` (UTF-8, the only one here); BINARY and
//! VARBINARY the bytes themselves; BOOLEAN one byte (0 is false); the numbers their fixed
//! width in `raw.endianness` (`big-endian`, the default, or `little-endian`). A missing
//! record (a Kafka tombstone) is NULL, and NULL writes a missing record. Records, not lines:
//! the Kafka connectors use it, each record a message.

use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Float32Builder, Float64Builder, Int8Builder, Int16Builder,
    Int32Builder, Int64Builder, StringBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef};

use crate::types::{Schema, TypeKind};

/// A `raw` table's options, checked against its one column.
#[derive(Debug, Clone)]
pub struct RawFormat {
    kind: TypeKind,
    big_endian: bool,
}

impl RawFormat {
    pub fn from_options(
        options: &[(String, String)],
        schema: &Schema,
    ) -> Result<RawFormat, String> {
        let get = |k: &str| options.iter().find(|(key, _)| key == k).map(|(_, v)| v);
        for (key, _) in options {
            if key != "format" && !matches!(key.as_str(), "raw.charset" | "raw.endianness") {
                return Err(format!(
                    "Unsupported options found for 'raw'.\n\nUnsupported options:\n\n{key}"
                ));
            }
        }
        if let Some(charset) = get("raw.charset")
            && !charset.trim().eq_ignore_ascii_case("UTF-8")
        {
            return Err(format!(
                "'raw.charset' = '{charset}' is not supported (UTF-8 only)"
            ));
        }
        let big_endian = match get("raw.endianness").map(|e| e.trim()) {
            None | Some("big-endian") => true,
            Some("little-endian") => false,
            Some(other) => {
                return Err(format!(
                    "Unsupported endianness name: {other}. Valid values of 'raw.endianness' option are 'big-endian' and 'little-endian'."
                ));
            }
        };
        let [field] = &schema.fields[..] else {
            return Err(format!(
                "The 'raw' format only supports single physical column. However the defined schema contains multiple physical columns: [{}]",
                schema
                    .fields
                    .iter()
                    .map(|f| format!("`{}` {}", f.name, f.data_type.kind))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        };
        let kind = field.data_type.kind.clone();
        match kind {
            TypeKind::Char(_)
            | TypeKind::VarChar(_)
            | TypeKind::Binary(_)
            | TypeKind::VarBinary(_)
            | TypeKind::Boolean
            | TypeKind::TinyInt
            | TypeKind::SmallInt
            | TypeKind::Int
            | TypeKind::BigInt
            | TypeKind::Float
            | TypeKind::Double => Ok(RawFormat { kind, big_endian }),
            other => Err(format!(
                "The 'raw' format doesn't supports '{other}' as column type."
            )),
        }
    }

    pub fn decoder(&self) -> RawDecoder {
        let column = match self.kind {
            TypeKind::Char(_) | TypeKind::VarChar(_) => Column::Text(StringBuilder::new()),
            TypeKind::Binary(_) | TypeKind::VarBinary(_) => Column::Bytes(BinaryBuilder::new()),
            TypeKind::Boolean => Column::Boolean(BooleanBuilder::new()),
            TypeKind::TinyInt => Column::I8(Int8Builder::new()),
            TypeKind::SmallInt => Column::I16(Int16Builder::new()),
            TypeKind::Int => Column::I32(Int32Builder::new()),
            TypeKind::BigInt => Column::I64(Int64Builder::new()),
            TypeKind::Float => Column::F32(Float32Builder::new()),
            _ => Column::F64(Float64Builder::new()),
        };
        RawDecoder {
            column,
            big_endian: self.big_endian,
        }
    }

    /// Row `row` of `column` as a record's bytes; `None` for NULL. `out` is cleared first.
    pub fn encode(&self, column: &dyn Array, row: usize, out: &mut Vec<u8>) -> Option<()> {
        out.clear();
        if column.is_null(row) {
            return None;
        }
        macro_rules! number {
            ($t:ty) => {{
                let v = column.as_primitive::<$t>().value(row);
                out.extend_from_slice(&if self.big_endian {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                });
            }};
        }
        match self.kind {
            TypeKind::Char(_) | TypeKind::VarChar(_) => {
                out.extend_from_slice(column.as_string::<i32>().value(row).as_bytes())
            }
            TypeKind::Binary(_) | TypeKind::VarBinary(_) => {
                out.extend_from_slice(column.as_binary::<i32>().value(row))
            }
            TypeKind::Boolean => out.push(u8::from(column.as_boolean().value(row))),
            TypeKind::TinyInt => number!(Int8Type),
            TypeKind::SmallInt => number!(Int16Type),
            TypeKind::Int => number!(Int32Type),
            TypeKind::BigInt => number!(Int64Type),
            TypeKind::Float => number!(Float32Type),
            _ => number!(Float64Type),
        }
        Some(())
    }
}

enum Column {
    Text(StringBuilder),
    Bytes(BinaryBuilder),
    Boolean(BooleanBuilder),
    I8(Int8Builder),
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    F32(Float32Builder),
    F64(Float64Builder),
}

/// Records' bytes into the column's values.
pub struct RawDecoder {
    column: Column,
    big_endian: bool,
}

impl RawDecoder {
    /// Appends one record's value (`None`: a missing record, NULL).
    pub fn push(&mut self, value: Option<&[u8]>) -> Result<(), String> {
        macro_rules! number {
            ($builder:expr, $t:ty) => {{
                match value {
                    None => $builder.append_null(),
                    Some(bytes) => {
                        let array: [u8; std::mem::size_of::<$t>()] =
                            bytes.try_into().map_err(|_| {
                                format!(
                                    "Size of the given bytes ({}) is not equal to the size of the {} type ({})",
                                    bytes.len(),
                                    stringify!($t),
                                    std::mem::size_of::<$t>()
                                )
                            })?;
                        $builder.append_value(if self.big_endian {
                            <$t>::from_be_bytes(array)
                        } else {
                            <$t>::from_le_bytes(array)
                        })
                    }
                }
            }};
        }
        match &mut self.column {
            Column::Text(b) => match value {
                None => b.append_null(),
                Some(bytes) => b.append_value(std::str::from_utf8(bytes).map_err(|e| {
                    format!("the value is not UTF-8 (at byte {})", e.valid_up_to())
                })?),
            },
            Column::Bytes(b) => b.append_option(value),
            Column::Boolean(b) => match value {
                None => b.append_null(),
                Some([byte]) => b.append_value(*byte != 0),
                Some(bytes) => {
                    return Err(format!(
                        "Size of the given bytes ({}) is not equal to the size of the boolean type (1)",
                        bytes.len()
                    ));
                }
            },
            Column::I8(b) => number!(b, i8),
            Column::I16(b) => number!(b, i16),
            Column::I32(b) => number!(b, i32),
            Column::I64(b) => number!(b, i64),
            Column::F32(b) => number!(b, f32),
            Column::F64(b) => number!(b, f64),
        }
        Ok(())
    }

    /// The values pushed since the last call.
    pub fn finish(&mut self) -> ArrayRef {
        match &mut self.column {
            Column::Text(b) => Arc::new(b.finish()),
            Column::Bytes(b) => Arc::new(b.finish()),
            Column::Boolean(b) => Arc::new(b.finish()),
            Column::I8(b) => Arc::new(b.finish()),
            Column::I16(b) => Arc::new(b.finish()),
            Column::I32(b) => Arc::new(b.finish()),
            Column::I64(b) => Arc::new(b.finish()),
            Column::F32(b) => Arc::new(b.finish()),
            Column::F64(b) => Arc::new(b.finish()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{DataType, Field};

    fn format(kind: TypeKind, endianness: Option<&str>) -> RawFormat {
        let mut options = vec![("format".to_string(), "raw".to_string())];
        if let Some(e) = endianness {
            options.push(("raw.endianness".into(), e.into()));
        }
        RawFormat::from_options(
            &options,
            &Schema::new(vec![Field::new("v", DataType::nullable(kind))]),
        )
        .unwrap()
    }

    #[test]
    fn numbers_round_trip_in_both_byte_orders() {
        for endianness in [None, Some("little-endian")] {
            let raw = format(TypeKind::BigInt, endianness);
            let mut decoder = raw.decoder();
            let big = endianness.is_none();
            let bytes = if big {
                258i64.to_be_bytes()
            } else {
                258i64.to_le_bytes()
            };
            decoder.push(Some(&bytes)).unwrap();
            decoder.push(None).unwrap();
            let column = decoder.finish();
            assert_eq!(column.as_primitive::<Int64Type>().value(0), 258);
            assert!(column.is_null(1));
            let mut out = Vec::new();
            assert!(raw.encode(column.as_ref(), 0, &mut out).is_some());
            assert_eq!(out, bytes);
            assert!(raw.encode(column.as_ref(), 1, &mut out).is_none());
        }
        let mut decoder = format(TypeKind::Int, None).decoder();
        let error = decoder.push(Some(b"abc")).unwrap_err();
        assert!(error.contains("(3)"), "{error}");
    }

    #[test]
    fn one_column_of_a_supported_type() {
        let two = Schema::new(vec![
            Field::new("a", DataType::string()),
            Field::new("b", DataType::string()),
        ]);
        let options = vec![("format".to_string(), "raw".to_string())];
        let error = RawFormat::from_options(&options, &two).unwrap_err();
        assert!(
            error.contains("only supports single physical column"),
            "{error}"
        );
        let mut text = format(TypeKind::VarChar(10), None).decoder();
        text.push(Some("line\nbreak".as_bytes())).unwrap();
        assert_eq!(text.finish().as_string::<i32>().value(0), "line\nbreak");
        assert!(text.push(Some(&[0xff])).unwrap_err().contains("UTF-8"));
    }
}
