//! ENCODE and DECODE: text to bytes and back in a named charset, as Java's
//! `String.getBytes(charset)` / `new String(bytes, charset)` do — a character the charset
//! cannot hold becomes `?`, bytes that do not decode become U+FFFD.

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};

use super::{expect_strings, strs};
use crate::function::{EvalContext, EvalError, FunctionDef, Signature, any_nullable, string_type};
use crate::types::{DataType, MAX_LENGTH, TypeKind};

pub const FUNCTIONS: &[FunctionDef] = &[
    def!("ENCODE", resolve_encode, encode),
    def!("DECODE", resolve_decode, decode),
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Charset {
    Utf8,
    Ascii,
    Latin1,
    Utf16Be,
    Utf16Le,
    /// UTF-16 with a byte-order mark: written big-endian after `FE FF`, read by its mark.
    Utf16,
}

fn charset(name: &str) -> Result<Charset, EvalError> {
    Ok(match name.to_ascii_uppercase().replace('_', "-").as_str() {
        "UTF-8" | "UTF8" => Charset::Utf8,
        "US-ASCII" | "ASCII" => Charset::Ascii,
        "ISO-8859-1" | "ISO8859-1" | "LATIN1" => Charset::Latin1,
        "UTF-16BE" => Charset::Utf16Be,
        "UTF-16LE" => Charset::Utf16Le,
        "UTF-16" => Charset::Utf16,
        _ => return Err(EvalError::Invalid(format!("Unsupported charset: {name}"))),
    })
}

fn resolve_encode(args: &[DataType]) -> Result<Signature, String> {
    let [_, _] = args else {
        return Err("ENCODE expects (string, charset)".into());
    };
    expect_strings("ENCODE", args)?;
    Ok(Signature::new(
        args.iter().map(|a| string_type(a.nullable)).collect(),
        DataType {
            kind: TypeKind::VarBinary(MAX_LENGTH),
            nullable: any_nullable(args),
        },
    ))
}

fn encode(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (texts, names) = (strs(&args[0]), strs(&args[1]));
    let mut b = BinaryBuilder::with_capacity(ctx.num_rows, 0);
    let mut bytes = Vec::new();
    for i in 0..ctx.num_rows {
        if texts.is_null(i) || names.is_null(i) {
            b.append_null();
            continue;
        }
        bytes.clear();
        let text = texts.value(i);
        match charset(names.value(i))? {
            Charset::Utf8 => bytes.extend_from_slice(text.as_bytes()),
            Charset::Ascii => bytes.extend(
                text.chars()
                    .map(|c| if c.is_ascii() { c as u8 } else { b'?' }),
            ),
            Charset::Latin1 => {
                bytes.extend(text.chars().map(|c| u8::try_from(c as u32).unwrap_or(b'?')))
            }
            Charset::Utf16Be => bytes.extend(text.encode_utf16().flat_map(u16::to_be_bytes)),
            Charset::Utf16Le => bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes)),
            // Java writes no byte-order mark for an empty string.
            Charset::Utf16 if text.is_empty() => {}
            Charset::Utf16 => {
                bytes.extend([0xFE, 0xFF]);
                bytes.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
            }
        }
        b.append_value(&bytes);
    }
    Ok(Arc::new(b.finish()))
}

fn resolve_decode(args: &[DataType]) -> Result<Signature, String> {
    let [bytes, name] = args else {
        return Err("DECODE expects (bytes, charset)".into());
    };
    if !bytes.kind.is_binary() && bytes.kind != TypeKind::Null {
        return Err(format!("DECODE expects binary data, got {}", bytes.kind));
    }
    expect_strings("DECODE", std::slice::from_ref(name))?;
    Ok(Signature::new(
        vec![
            DataType {
                kind: TypeKind::VarBinary(MAX_LENGTH),
                nullable: bytes.nullable,
            },
            string_type(name.nullable),
        ],
        string_type(any_nullable(args)),
    ))
}

fn decode(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (data, names) = (args[0].as_binary::<i32>(), strs(&args[1]));
    let mut b = StringBuilder::with_capacity(ctx.num_rows, 0);
    let mut text = String::new();
    for i in 0..ctx.num_rows {
        if data.is_null(i) || names.is_null(i) {
            b.append_null();
            continue;
        }
        let bytes = data.value(i);
        text.clear();
        let units = |pair: &[u8], big: bool| {
            if big {
                u16::from_be_bytes([pair[0], pair[1]])
            } else {
                u16::from_le_bytes([pair[0], pair[1]])
            }
        };
        let utf16 = |text: &mut String, bytes: &[u8], big: bool| {
            let decoded = char::decode_utf16(bytes.chunks_exact(2).map(|p| units(p, big)));
            text.extend(decoded.map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)));
            if bytes.len() % 2 == 1 {
                text.push(char::REPLACEMENT_CHARACTER);
            }
        };
        match charset(names.value(i))? {
            Charset::Utf8 => text.push_str(&String::from_utf8_lossy(bytes)),
            Charset::Ascii => text.extend(bytes.iter().map(|&b| {
                if b.is_ascii() {
                    b as char
                } else {
                    char::REPLACEMENT_CHARACTER
                }
            })),
            Charset::Latin1 => text.extend(bytes.iter().map(|&b| b as char)),
            Charset::Utf16Be => utf16(&mut text, bytes, true),
            Charset::Utf16Le => utf16(&mut text, bytes, false),
            Charset::Utf16 => match bytes {
                [0xFF, 0xFE, rest @ ..] => utf16(&mut text, rest, false),
                [0xFE, 0xFF, rest @ ..] => utf16(&mut text, rest, true),
                _ => utf16(&mut text, bytes, true),
            },
        }
        b.append_value(&text);
    }
    Ok(Arc::new(b.finish()))
}
