//! String functions: `||`, CONCAT, UPPER, LOWER, CHAR_LENGTH, … with Flink's semantics
//! (NULL in, NULL out unless documented otherwise; positions are 1-based and count
//! characters, not bytes).

mod charset;
pub(crate) mod java_regex;
mod printf;
mod regex_match;
mod url;

use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Int32Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, BinaryArray, Int64Array, StringArray};
use md5::Digest;
use regex::Regex;

use java_regex::JavaRegex;

use super::{
    EvalContext, EvalError, FunctionDef, Signature, any_nullable, expect_arg_count, string_type,
};
use crate::types::{DataType, MAX_LENGTH, TypeKind};

pub use charset::FUNCTIONS as CHARSET_FUNCTIONS;
pub use printf::FUNCTIONS as PRINTF_FUNCTIONS;
pub use regex_match::FUNCTIONS as REGEX_FUNCTIONS;
pub use url::FUNCTIONS as URL_FUNCTIONS;

pub const FUNCTIONS: &[FunctionDef] = &[
    def!("||", resolve_concat, concat),
    def!("CONCAT", resolve_concat_function, concat),
    def!("UPPER", resolve_string_to_string, upper),
    def!("LOWER", resolve_string_to_string, lower),
    def!("CHAR_LENGTH", resolve_length, char_length),
    def!("CHARACTER_LENGTH", resolve_length, char_length),
    def!("TRIM", resolve_trim, trim),
    def!("BTRIM", resolve_trim, trim),
    def!("LTRIM", resolve_trim, ltrim),
    def!("RTRIM", resolve_trim, rtrim),
    def!("SUBSTRING", resolve_substring, substring),
    def!("SUBSTR", resolve_substring, substring),
    def!("LEFT", resolve_left_right, left),
    def!("RIGHT", resolve_left_right, right),
    def!("CONCAT_WS", resolve_concat_ws, concat_ws),
    def!("REPLACE", resolve_replace, replace),
    def!("REPEAT", resolve_repeat, repeat),
    def!("REVERSE", resolve_string_force_nullable, reverse),
    def!("LPAD", resolve_pad, lpad),
    def!("RPAD", resolve_pad, rpad),
    def!("INITCAP", resolve_initcap, initcap),
    def!("SPLIT_INDEX", resolve_split_index, split_index),
    def!("POSITION", resolve_position, position),
    def!("LOCATE", resolve_locate, locate),
    def!("INSTR", resolve_instr, instr),
    def!("ASCII", resolve_ascii, ascii),
    def!("CHR", resolve_chr, chr),
    def!("REGEXP", resolve_regexp, regexp),
    def!("REGEXP_EXTRACT", resolve_regexp_extract, regexp_extract),
    def!("REGEXP_REPLACE", resolve_regexp_replace, regexp_replace),
    def!("LIKE", resolve_like, like),
    def!("SIMILAR TO", resolve_like, similar_to),
    def!("MD5", resolve_md5, md5),
    def!("SHA1", resolve_sha1, sha1),
    def!("SHA224", resolve_sha224, sha224),
    def!("SHA256", resolve_sha256, sha256),
    def!("SHA384", resolve_sha384, sha384),
    def!("SHA512", resolve_sha512, sha512),
    def!("SHA2", resolve_sha2, sha2),
    def!("TO_BASE64", resolve_to_base64, to_base64),
    def!("FROM_BASE64", resolve_from_base64, from_base64),
    def!(
        "STARTSWITH",
        |a| resolve_affix("STARTSWITH", a),
        starts_with
    ),
    def!("ENDSWITH", |a| resolve_affix("ENDSWITH", a), ends_with),
    def!("TRANSLATE", resolve_translate, translate),
    def!("OVERLAY", resolve_overlay, overlay),
    def!("SPLIT", resolve_split, split),
    def!("ELT", resolve_elt, elt),
    def!("IS_ALPHA", resolve_is_class, is_alpha),
    def!("IS_DIGIT", resolve_is_class, is_digit),
    def!("IS_DECIMAL", resolve_is_class, is_decimal),
];

/// Checks that every argument is a character string (CHAR/VARCHAR/STRING or an untyped NULL).
pub fn expect_strings(name: &str, args: &[DataType]) -> Result<(), String> {
    for a in args {
        if !a.kind.is_string() && a.kind != TypeKind::Null {
            return Err(format!(
                "{name} expects character string arguments, got {}",
                a.kind
            ));
        }
    }
    Ok(())
}

fn resolve_concat(args: &[DataType]) -> Result<Signature, String> {
    if args.is_empty() {
        return Err("CONCAT expects at least one argument".into());
    }
    expect_strings("CONCAT", args)?;
    let nullable = any_nullable(args);
    let length = args.iter().try_fold(0u32, |acc, a| match a.kind {
        TypeKind::Char(n) | TypeKind::VarChar(n) => acc.checked_add(n).filter(|l| *l <= MAX_LENGTH),
        _ => Some(acc),
    });
    let all_char = args.iter().all(|a| matches!(a.kind, TypeKind::Char(_)));
    let kind = match length {
        Some(n) if all_char => TypeKind::Char(n),
        Some(n) => TypeKind::VarChar(n),
        None => TypeKind::VarChar(MAX_LENGTH),
    };
    Ok(Signature::new(
        args.iter().map(|a| string_type(a.nullable)).collect(),
        DataType { kind, nullable },
    ))
}

/// CONCAT(…) is STRING, where `||` sums the lengths.
fn resolve_concat_function(args: &[DataType]) -> Result<Signature, String> {
    let mut signature = resolve_concat(args)?;
    signature.return_type.kind = TypeKind::VarChar(MAX_LENGTH);
    Ok(signature)
}

fn resolve_string_to_string(args: &[DataType]) -> Result<Signature, String> {
    one_string_type(args)?;
    Ok(Signature::new(vec![args[0].clone()], args[0].clone()))
}

fn resolve_length(args: &[DataType]) -> Result<Signature, String> {
    one_string_type(args)?;
    Ok(Signature::new(
        vec![args[0].clone()],
        DataType {
            kind: TypeKind::Int,
            nullable: args[0].nullable,
        },
    ))
}

fn one_string_type(args: &[DataType]) -> Result<(), String> {
    if args.len() != 1 {
        return Err(format!("expects 1 argument, got {}", args.len()));
    }
    expect_strings("function", args)
}

/// Applies `f` to every non-null string of a string array.
pub fn map_strings(
    array: &ArrayRef,
    mut f: impl FnMut(&str, &mut String),
) -> Result<ArrayRef, EvalError> {
    let input = array.as_string::<i32>();
    let mut builder = StringBuilder::with_capacity(input.len(), input.values().len());
    let mut buf = String::new();
    let mut bytes = 0;
    for i in 0..input.len() {
        if input.is_null(i) {
            builder.append_null();
        } else {
            buf.clear();
            f(input.value(i), &mut buf);
            bytes = fits_column(bytes, buf.len(), input.len())?;
            builder.append_value(&buf);
        }
    }
    Ok(Arc::new(builder.finish()))
}

/// The text bytes of a string column after adding a value of `len` bytes, if one Arrow
/// column (i32 offsets) still holds them: else `TooLarge` (the caller evaluates fewer of the
/// batch's `rows` at a time) or, for a single value that long, Flink's "too large" error.
fn fits_column(bytes: usize, len: usize, rows: usize) -> Result<usize, EvalError> {
    let total = bytes.saturating_add(len);
    if total <= i32::MAX as usize {
        Ok(total)
    } else if len > i32::MAX as usize || rows == 1 {
        Err(too_large())
    } else {
        Err(EvalError::TooLarge)
    }
}

fn concat(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let strings: Vec<&StringArray> = args.iter().map(|a| a.as_string::<i32>()).collect();
    let mut builder = StringBuilder::with_capacity(ctx.num_rows, 0);
    let mut buf = String::new();
    let mut bytes = 0;
    for i in 0..ctx.num_rows {
        if strings.iter().any(|s| s.is_null(i)) {
            builder.append_null();
            continue;
        }
        buf.clear();
        for s in &strings {
            buf.push_str(s.value(i));
        }
        bytes = fits_column(bytes, buf.len(), ctx.num_rows)?;
        builder.append_value(&buf);
    }
    Ok(Arc::new(builder.finish()))
}

fn upper(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    map_strings(&args[0], |s, out| {
        out.extend(s.chars().flat_map(char::to_uppercase))
    })
}

fn lower(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    map_strings(&args[0], |s, out| {
        if s.contains('Σ') {
            // A capital sigma that ends a word becomes ς (Java's and Rust's string rule).
            out.push_str(&s.to_lowercase());
        } else {
            out.extend(s.chars().flat_map(char::to_lowercase));
        }
    })
}

fn char_length(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let input = args[0].as_string::<i32>();
    let mut builder = Int32Builder::with_capacity(input.len());
    for v in input.iter() {
        builder.append_option(v.map(|s| s.chars().count() as i32));
    }
    Ok(Arc::new(builder.finish()))
}

// ---------------------------------------------------------------------------------------------
// Argument and result helpers shared by the functions below.
// ---------------------------------------------------------------------------------------------

/// The type a character-string argument is cast to: itself, or STRING for an untyped NULL.
fn string_param(arg: &DataType) -> DataType {
    if arg.kind.is_string() {
        arg.clone()
    } else {
        string_type(arg.nullable)
    }
}

/// The type an integer argument is cast to: BIGINT (kernels read `i64`).
fn int_param(name: &str, arg: &DataType) -> Result<DataType, String> {
    if arg.kind.is_integer() || arg.kind == TypeKind::Null {
        Ok(DataType {
            kind: TypeKind::BigInt,
            nullable: arg.nullable,
        })
    } else {
        Err(format!(
            "{name} expects an integer argument, got {}",
            arg.kind
        ))
    }
}

fn is_string_or_null(arg: &DataType) -> bool {
    arg.kind.is_string() || arg.kind == TypeKind::Null
}

/// `VARCHAR(n)` of a string argument's length (Calcite's TO_VARYING), STRING otherwise.
fn varying(arg: &DataType, nullable: bool) -> DataType {
    let kind = match arg.kind {
        TypeKind::Char(n) | TypeKind::VarChar(n) => TypeKind::VarChar(n),
        _ => TypeKind::VarChar(MAX_LENGTH),
    };
    DataType { kind, nullable }
}

fn boolean(nullable: bool) -> DataType {
    DataType {
        kind: TypeKind::Boolean,
        nullable,
    }
}

fn int_result(nullable: bool) -> DataType {
    DataType {
        kind: TypeKind::Int,
        nullable,
    }
}

/// Resolves a function whose parameters are strings (`s`) and integers (`i`), per `pattern`;
/// trailing parameters beyond `min` are optional.
fn resolve_params(
    name: &str,
    args: &[DataType],
    pattern: &str,
    min: usize,
) -> Result<Vec<DataType>, String> {
    expect_arg_count(name, args, min, pattern.len())?;
    args.iter()
        .zip(pattern.bytes())
        .map(|(a, p)| match p {
            b's' if is_string_or_null(a) => Ok(string_param(a)),
            b's' => Err(format!(
                "{name} expects a character string argument, got {}",
                a.kind
            )),
            _ => int_param(name, a),
        })
        .collect()
}

fn any_null(args: &[ArrayRef], i: usize) -> bool {
    args.iter().any(|a| a.is_null(i))
}

fn strs(a: &ArrayRef) -> &StringArray {
    a.as_string::<i32>()
}

fn ints(a: &ArrayRef) -> &Int64Array {
    a.as_primitive::<Int64Type>()
}

/// Builds a string column: `f` writes row `i` into the buffer and says whether it is non-null.
/// Rows where any argument is NULL are NULL without calling `f`.
fn build_strings(
    args: &[ArrayRef],
    n: usize,
    mut f: impl FnMut(usize, &mut String) -> Result<bool, EvalError>,
) -> Result<ArrayRef, EvalError> {
    let mut builder = StringBuilder::with_capacity(n, 0);
    let mut buf = String::new();
    let mut bytes = 0;
    for i in 0..n {
        if any_null(args, i) {
            builder.append_null();
            continue;
        }
        buf.clear();
        if f(i, &mut buf)? {
            bytes = fits_column(bytes, buf.len(), n)?;
            builder.append_value(&buf);
        } else {
            builder.append_null();
        }
    }
    Ok(Arc::new(builder.finish()))
}

fn build_ints(
    args: &[ArrayRef],
    n: usize,
    mut f: impl FnMut(usize) -> Result<Option<i32>, EvalError>,
) -> Result<ArrayRef, EvalError> {
    let mut builder = Int32Builder::with_capacity(n);
    for i in 0..n {
        if any_null(args, i) {
            builder.append_null();
        } else {
            builder.append_option(f(i)?);
        }
    }
    Ok(Arc::new(builder.finish()))
}

fn build_bools(
    args: &[ArrayRef],
    n: usize,
    mut f: impl FnMut(usize) -> Result<Option<bool>, EvalError>,
) -> Result<ArrayRef, EvalError> {
    let mut builder = BooleanBuilder::with_capacity(n);
    for i in 0..n {
        if any_null(args, i) {
            builder.append_null();
        } else {
            builder.append_option(f(i)?);
        }
    }
    Ok(Arc::new(builder.finish()))
}

pub(crate) fn too_large() -> EvalError {
    EvalError::Invalid("string result too large".into())
}

/// Byte offset of character `n` (0-based) of `s`, or `s.len()` past the end.
fn char_offset(s: &str, n: usize) -> usize {
    if s.is_ascii() {
        return n.min(s.len());
    }
    s.char_indices().nth(n).map_or(s.len(), |(b, _)| b)
}

fn char_count(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// Characters `[start, end)` of `s`.
fn char_slice(s: &str, start: usize, end: usize) -> &str {
    let b = char_offset(s, start);
    let rest = &s[b..];
    &rest[..char_offset(rest, end.saturating_sub(start))]
}

/// Flink's `BinaryStringData.indexOf`: the 0-based character index of the first occurrence of
/// `needle` in `s` at or after character `from` (negative counts as 0), -1 if none; an empty
/// needle is found at 0 whatever `from` is.
fn index_of(s: &str, needle: &str, from: i64) -> i64 {
    if needle.is_empty() {
        return 0;
    }
    let from = from.max(0);
    let start = char_offset(s, usize::try_from(from).unwrap_or(usize::MAX));
    match s[start..].find(needle) {
        Some(b) => from + char_count(&s[start..start + b]) as i64,
        None => -1,
    }
}

// ---------------------------------------------------------------------------------------------
// TRIM, LTRIM, RTRIM, BTRIM
// ---------------------------------------------------------------------------------------------

fn resolve_trim(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("TRIM", args, "ss", 1)?;
    Ok(Signature::new(
        params,
        varying(&args[0], any_nullable(args)),
    ))
}

fn trim_with(
    args: &[ArrayRef],
    ctx: &EvalContext,
    leading: bool,
    trailing: bool,
) -> Result<ArrayRef, EvalError> {
    let s = strs(&args[0]);
    let chars = args.get(1).map(strs);
    build_strings(args, ctx.num_rows, |i, out| {
        let v = s.value(i);
        let set = chars.map_or(" ", |c| c.value(i));
        let matches = |c: char| set.contains(c);
        let mut t = v;
        if leading {
            t = t.trim_start_matches(matches);
        }
        if trailing {
            t = t.trim_end_matches(matches);
        }
        out.push_str(t);
        Ok(true)
    })
}

fn trim(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    trim_with(args, ctx, true, true)
}

fn ltrim(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    trim_with(args, ctx, true, false)
}

fn rtrim(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    trim_with(args, ctx, false, true)
}

// ---------------------------------------------------------------------------------------------
// SUBSTRING, SUBSTR, LEFT, RIGHT
// ---------------------------------------------------------------------------------------------

fn resolve_substring(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("SUBSTRING", args, "sii", 2)?;
    Ok(Signature::new(params, varying(&args[0], true)))
}

fn substring(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let s = strs(&args[0]);
    let start = ints(&args[1]);
    let len = args.get(2).map(ints);
    build_strings(args, ctx.num_rows, |i, out| {
        let v = s.value(i);
        let pos = start.value(i);
        let length = len.map_or(i32::MAX as i64, |l| l.value(i));
        // Flink: a negative length, or a start or length beyond INT, gives NULL.
        if length < 0 || length > i32::MAX as i64 || pos > i32::MAX as i64 {
            return Ok(false);
        }
        if v.is_empty() {
            return Ok(true);
        }
        let num_chars = char_count(v) as i64;
        let start_pos = if pos > 0 {
            pos - 1
        } else if pos < 0 {
            num_chars + pos
        } else {
            0
        };
        if start_pos < 0 || start_pos >= num_chars {
            return Ok(true);
        }
        let end_pos = if num_chars - start_pos < length {
            num_chars
        } else {
            start_pos + length
        };
        out.push_str(char_slice(v, start_pos as usize, end_pos as usize));
        Ok(true)
    })
}

fn resolve_left_right(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("LEFT", args, "si", 2)?;
    Ok(Signature::new(params, varying(&args[0], true)))
}

fn left(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let s = strs(&args[0]);
    let len = ints(&args[1]);
    build_strings(args, ctx.num_rows, |i, out| {
        let n = len.value(i);
        if n > 0 {
            let v = s.value(i);
            out.push_str(&v[..char_offset(v, usize::try_from(n).unwrap_or(usize::MAX))]);
        }
        Ok(true)
    })
}

fn right(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let s = strs(&args[0]);
    let len = ints(&args[1]);
    build_strings(args, ctx.num_rows, |i, out| {
        let n = len.value(i);
        if n > 0 {
            let v = s.value(i);
            let count = char_count(v) as i64;
            let skip = (count - n).max(0) as usize;
            out.push_str(&v[char_offset(v, skip)..]);
        }
        Ok(true)
    })
}

// ---------------------------------------------------------------------------------------------
// CONCAT_WS, REPLACE, REPEAT, REVERSE, LPAD, RPAD, INITCAP, SPLIT_INDEX
// ---------------------------------------------------------------------------------------------

fn resolve_concat_ws(args: &[DataType]) -> Result<Signature, String> {
    if args.is_empty() {
        return Err("CONCAT_WS expects at least one argument".into());
    }
    expect_strings("CONCAT_WS", args)?;
    Ok(Signature::new(
        args.iter().map(string_param).collect(),
        DataType {
            kind: TypeKind::VarChar(MAX_LENGTH),
            nullable: any_nullable(args),
        },
    ))
}

/// CONCAT_WS(sep, s1, …): NULL only if the separator is; NULL strings are skipped.
fn concat_ws(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let sep = strs(&args[0]);
    let parts: Vec<&StringArray> = args[1..].iter().map(strs).collect();
    build_strings(&args[..1], ctx.num_rows, |i, out| {
        let mut first = true;
        for p in &parts {
            if p.is_null(i) {
                continue;
            }
            if !first {
                out.push_str(sep.value(i));
            }
            first = false;
            out.push_str(p.value(i));
        }
        Ok(true)
    })
}

fn resolve_replace(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("REPLACE", args, "sss", 3)?;
    Ok(Signature::new(
        params,
        DataType {
            kind: TypeKind::VarChar(MAX_LENGTH),
            nullable: any_nullable(args),
        },
    ))
}

/// Java's `String.replace`: every non-overlapping occurrence, left to right; an empty search
/// string inserts the replacement around every character.
fn replace(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (s, from, to) = (strs(&args[0]), strs(&args[1]), strs(&args[2]));
    build_strings(args, ctx.num_rows, |i, out| {
        let (v, f, t) = (s.value(i), from.value(i), to.value(i));
        let mut last = 0;
        for (at, m) in v.match_indices(f) {
            out.push_str(&v[last..at]);
            out.push_str(t);
            last = at + m.len();
        }
        out.push_str(&v[last..]);
        Ok(true)
    })
}

fn resolve_repeat(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("REPEAT", args, "si", 2)?;
    Ok(Signature::new(
        params,
        DataType {
            kind: TypeKind::VarChar(MAX_LENGTH),
            nullable: any_nullable(args),
        },
    ))
}

fn repeat(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let s = strs(&args[0]);
    let times = ints(&args[1]);
    build_strings(args, ctx.num_rows, |i, out| {
        let (v, n) = (s.value(i), times.value(i));
        if n > 0 && !v.is_empty() {
            let total = (v.len() as u64)
                .checked_mul(n as u64)
                .filter(|t| *t <= i32::MAX as u64);
            if total.is_none() {
                return Err(too_large());
            }
            for _ in 0..n {
                out.push_str(v);
            }
        }
        Ok(true)
    })
}

fn resolve_string_force_nullable(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("function", args, "s", 1)?;
    Ok(Signature::new(
        params,
        DataType {
            kind: TypeKind::VarChar(MAX_LENGTH),
            nullable: true,
        },
    ))
}

fn reverse(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    map_strings(&args[0], |s, out| out.extend(s.chars().rev()))
}

fn resolve_pad(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("LPAD", args, "sis", 3)?;
    Ok(Signature::new(
        params,
        DataType {
            kind: TypeKind::VarChar(MAX_LENGTH),
            nullable: any_nullable(args),
        },
    ))
}

/// LPAD/RPAD: NULL for a negative length or an empty pad; the string is cut to `len`
/// characters when longer.
fn pad(args: &[ArrayRef], ctx: &EvalContext, left: bool) -> Result<ArrayRef, EvalError> {
    let (s, len, pad) = (strs(&args[0]), ints(&args[1]), strs(&args[2]));
    build_strings(args, ctx.num_rows, |i, out| {
        let (v, n, p) = (s.value(i), len.value(i), pad.value(i));
        if n < 0 || p.is_empty() {
            return Ok(false);
        }
        let n = n as u64;
        let max_char = v.len().max(p.len()) as u64;
        if n.saturating_mul(max_char.min(4)) > i32::MAX as u64 {
            return Err(too_large());
        }
        let n = n as usize;
        let base_len = char_count(v);
        let fill = n.saturating_sub(base_len);
        let base = &v[..char_offset(v, n)];
        if !left {
            out.push_str(base);
        }
        out.extend(p.chars().cycle().take(fill));
        if left {
            out.push_str(base);
        }
        Ok(true)
    })
}

fn lpad(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    pad(args, ctx, true)
}

fn rpad(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    pad(args, ctx, false)
}

fn resolve_initcap(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("INITCAP", args, "s", 1)?;
    let ret = if args[0].kind.is_string() {
        args[0].clone()
    } else {
        DataType::string()
    };
    Ok(Signature::new(params, ret))
}

/// Calcite's INITCAP (which Flink calls): words are runs of ASCII letters and digits; the first
/// letter of a word is upper-cased and the rest lower-cased; other characters are kept.
fn initcap(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    map_strings(&args[0], |s, out| {
        let mut start = true;
        for c in s.chars() {
            if c.is_ascii_alphanumeric() {
                out.push(if start {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                });
                start = false;
            } else {
                out.push(c);
                start = true;
            }
        }
    })
}

fn resolve_split_index(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("SPLIT_INDEX", args, 3, 3)?;
    let pattern = if args[1].kind.is_integer() {
        "sii"
    } else {
        "ssi"
    };
    let params = resolve_params("SPLIT_INDEX", args, pattern, 3)?;
    Ok(Signature::new(params, DataType::string()))
}

/// Java's `Character.isWhitespace`.
fn is_java_whitespace(c: char) -> bool {
    matches!(c, '\t'..='\r' | '\u{1c}'..='\u{1f}')
        || (c.is_whitespace() && !matches!(c, '\u{a0}' | '\u{2007}' | '\u{202f}' | '\u{85}'))
}

/// SPLIT_INDEX(s, sep, i): the `i`-th (0-based) token of `s` split on the whole separator,
/// keeping empty tokens; NULL for a negative or too large index or an empty `s`. An empty
/// separator splits on whitespace; an integer separator is a character code in 1..=255.
fn split_index(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let s = strs(&args[0]);
    let index = ints(&args[2]);
    let by_code = args[1].data_type() == &arrow_schema::DataType::Int64;
    let mut sep_buf = String::new();
    build_strings(args, ctx.num_rows, |i, out| {
        let (v, idx) = (s.value(i), index.value(i));
        let Ok(idx) = usize::try_from(idx) else {
            return Ok(false);
        };
        if v.is_empty() {
            return Ok(false);
        }
        let token = if by_code {
            let code = ints(&args[1]).value(i);
            if !(1..=255).contains(&code) {
                return Ok(false);
            }
            sep_buf.clear();
            sep_buf.push(char::from(code as u8));
            v.split(sep_buf.as_str()).nth(idx)
        } else {
            let sep = strs(&args[1]).value(i);
            if sep.is_empty() {
                v.split(is_java_whitespace).nth(idx)
            } else {
                v.split(sep).nth(idx)
            }
        };
        match token {
            Some(t) => {
                out.push_str(t);
                Ok(true)
            }
            None => Ok(false),
        }
    })
}

// ---------------------------------------------------------------------------------------------
// POSITION, LOCATE, INSTR, ASCII, CHR
// ---------------------------------------------------------------------------------------------

fn resolve_position(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("POSITION", args, "ss", 2)?;
    Ok(Signature::new(params, int_result(any_nullable(args))))
}

/// POSITION(needle, haystack): 1-based character position of the first occurrence, 0 if none.
fn position(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (needle, s) = (strs(&args[0]), strs(&args[1]));
    build_ints(args, ctx.num_rows, |i| {
        Ok(Some((index_of(s.value(i), needle.value(i), 0) + 1) as i32))
    })
}

fn resolve_locate(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("LOCATE", args, "ssi", 2)?;
    Ok(Signature::new(params, int_result(any_nullable(args))))
}

/// LOCATE(needle, haystack[, from]): like POSITION, searching from character `from` (1-based).
fn locate(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (needle, s) = (strs(&args[0]), strs(&args[1]));
    let from = args.get(2).map(ints);
    build_ints(args, ctx.num_rows, |i| {
        let from = from.map_or(1, |f| f.value(i));
        Ok(Some(
            (index_of(s.value(i), needle.value(i), from.saturating_sub(1)) + 1) as i32,
        ))
    })
}

fn resolve_instr(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("INSTR", args, "ssii", 2)?;
    Ok(Signature::new(params, int_result(any_nullable(args))))
}

fn instr_forward(s: &str, sub: &str, start: i64, nth: i64) -> i64 {
    let mut start = start;
    let mut index = 0;
    for _ in 0..nth {
        index = index_of(s, sub, start - 1) + 1;
        if index == 0 {
            return 0;
        }
        start = index + 1;
    }
    index
}

/// INSTR(s, sub[, start[, nth]]): position of the `nth` occurrence of `sub` in `s` searching
/// from `start`; a negative `start` counts from the end and searches backwards.
fn instr(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (s, sub) = (strs(&args[0]), strs(&args[1]));
    let start = args.get(2).map(ints);
    let nth = args.get(3).map(ints);
    build_ints(args, ctx.num_rows, |i| {
        let (v, t) = (s.value(i), sub.value(i));
        let start = start.map_or(1, |a| a.value(i));
        let nth = nth.map_or(1, |a| a.value(i));
        if nth <= 0 {
            return Err(EvalError::Invalid("nthAppearance must be positive".into()));
        }
        let pos = if start == 0 {
            0
        } else if start > 0 {
            instr_forward(v, t, start, nth)
        } else {
            let rv: String = v.chars().rev().collect();
            let rt: String = t.chars().rev().collect();
            match instr_forward(&rv, &rt, start.saturating_neg(), nth) {
                0 => 0,
                p => char_count(v) as i64 + 2 - p - char_count(t) as i64,
            }
        };
        Ok(Some(pos as i32))
    })
}

fn resolve_ascii(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("ASCII", args, "s", 1)?;
    Ok(Signature::new(params, int_result(any_nullable(args))))
}

/// ASCII(s): Flink returns the first UTF-8 byte as a signed byte (0 for an empty string).
fn ascii(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let s = strs(&args[0]);
    build_ints(args, ctx.num_rows, |i| {
        Ok(Some(
            s.value(i).as_bytes().first().map_or(0, |b| *b as i8 as i32),
        ))
    })
}

fn resolve_chr(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("CHR", args, "i", 1)?;
    Ok(Signature::new(params, DataType::string()))
}

/// CHR(n): the character with code `n & 0xFF`; empty for a negative `n`.
fn chr(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let n = ints(&args[0]);
    build_strings(args, ctx.num_rows, |i, out| {
        let v = n.value(i);
        if v >= 0 {
            out.push(char::from((v & 0xFF) as u8));
        }
        Ok(true)
    })
}

// ---------------------------------------------------------------------------------------------
// Regular expressions: REGEXP, REGEXP_EXTRACT, REGEXP_REPLACE, LIKE, SIMILAR TO
// ---------------------------------------------------------------------------------------------

/// The last compiled pattern, reused while the pattern text repeats (literal patterns).
struct RegexCache<R = JavaRegex> {
    key: String,
    compiled: Option<Result<R, String>>,
}

impl<R> RegexCache<R> {
    fn new() -> Self {
        RegexCache {
            key: String::new(),
            compiled: None,
        }
    }

    /// The regex for `key`, built by `build` unless it is the one cached.
    fn get(&mut self, key: &str, build: impl FnOnce() -> Result<R, String>) -> &Result<R, String> {
        if self.key != key {
            self.compiled = None;
        }
        if self.compiled.is_none() {
            self.key.clear();
            self.key.push_str(key);
        }
        self.compiled.get_or_insert_with(build)
    }
}

/// A pattern as Java reads it (the REGEXP functions).
fn compile(pattern: &str) -> Result<JavaRegex, String> {
    JavaRegex::new(pattern)
}

fn resolve_regexp(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("REGEXP", args, "ss", 2)?;
    Ok(Signature::new(params, boolean(any_nullable(args))))
}

/// REGEXP(s, regex): whether some substring matches; FALSE for an empty or invalid regex.
fn regexp(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (s, p) = (strs(&args[0]), strs(&args[1]));
    let mut cache = RegexCache::new();
    build_bools(args, ctx.num_rows, |i| {
        let pattern = p.value(i);
        if pattern.is_empty() {
            return Ok(Some(false));
        }
        Ok(Some(match cache.get(pattern, || compile(pattern)) {
            Ok(re) => re.is_match(s.value(i))?,
            Err(_) => false,
        }))
    })
}

fn resolve_regexp_extract(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("REGEXP_EXTRACT", args, "ssi", 2)?;
    Ok(Signature::new(params, DataType::string()))
}

/// REGEXP_EXTRACT(s, regex[, group]): the group (default 0, the whole match, as Flink's
/// two-argument form) of the first match; NULL for no match, an invalid regex, or a group that
/// does not exist or did not participate.
fn regexp_extract(
    args: &[ArrayRef],
    ctx: &EvalContext,
    _: &DataType,
) -> Result<ArrayRef, EvalError> {
    let (s, p) = (strs(&args[0]), strs(&args[1]));
    let group = args.get(2).map(ints);
    let mut cache = RegexCache::new();
    build_strings(args, ctx.num_rows, |i, out| {
        let pattern = p.value(i);
        let Ok(re) = cache.get(pattern, || compile(pattern)) else {
            return Ok(false);
        };
        let g = group.map_or(0, |g| g.value(i));
        let Ok(g) = usize::try_from(g) else {
            return Ok(false);
        };
        if g >= re.captures_len() {
            return Ok(false);
        }
        let text = s.value(i);
        match re.first_group(text, g)? {
            Some((start, end)) => {
                out.push_str(&text[start..end]);
                Ok(true)
            }
            None => Ok(false),
        }
    })
}

fn resolve_regexp_replace(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("REGEXP_REPLACE", args, "sss", 3)?;
    Ok(Signature::new(
        params,
        DataType {
            kind: TypeKind::VarChar(MAX_LENGTH),
            nullable: any_nullable(args),
        },
    ))
}

/// REGEXP_REPLACE(s, regex, replacement): every match replaced by the literal replacement
/// (Flink quotes it: `$1` is not a group reference); NULL for an invalid regex.
fn regexp_replace(
    args: &[ArrayRef],
    ctx: &EvalContext,
    _: &DataType,
) -> Result<ArrayRef, EvalError> {
    let (s, p, r) = (strs(&args[0]), strs(&args[1]), strs(&args[2]));
    let mut cache = RegexCache::new();
    build_strings(args, ctx.num_rows, |i, out| {
        let pattern = p.value(i);
        let Ok(re) = cache.get(pattern, || compile(pattern)) else {
            return Ok(false);
        };
        let v = s.value(i);
        let replacement = r.value(i);
        let mut last = 0;
        re.for_each_match(v, |start, end| {
            out.push_str(&v[last..start]);
            out.push_str(replacement);
            last = end;
            true
        })?;
        out.push_str(&v[last..]);
        Ok(true)
    })
}

fn resolve_like(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("LIKE", args, "sss", 2)?;
    Ok(Signature::new(params, boolean(any_nullable(args))))
}

fn escape_char(escape: Option<&str>) -> Result<Option<char>, EvalError> {
    match escape {
        None => Ok(None),
        Some(e) => {
            let mut chars = e.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Ok(Some(c)),
                _ => Err(EvalError::Invalid(format!(
                    "invalid escape character '{e}'"
                ))),
            }
        }
    }
}

/// Java's `.`: any character but a line terminator (SQL `_` in LIKE, as Flink translates it).
const JAVA_DOT: &str = "[^\\n\\r\\u{85}\\u{2028}\\u{2029}]";

/// Translates a LIKE pattern to an anchored regex: `%` any run of characters, `_` any single
/// character; the escape character makes the next `%`, `_` or itself literal.
pub fn like_to_regex(pattern: &str, escape: Option<char>) -> Result<String, EvalError> {
    let mut out = String::with_capacity(pattern.len() * 2 + 8);
    out.push_str("\\A(?:");
    let mut chars = pattern.chars().enumerate().peekable();
    let mut tmp = [0u8; 4];
    while let Some((i, c)) = chars.next() {
        if Some(c) == escape {
            match chars.next() {
                Some((_, n)) if n == '_' || n == '%' || Some(n) == escape => {
                    out.push_str(&regex::escape(n.encode_utf8(&mut tmp)));
                }
                _ => {
                    return Err(EvalError::Invalid(format!(
                        "invalid escape sequence '{pattern}', {i}"
                    )));
                }
            }
        } else if c == '_' {
            out.push_str(JAVA_DOT);
        } else if c == '%' {
            out.push_str("(?s:.*)");
        } else {
            out.push_str(&regex::escape(c.encode_utf8(&mut tmp)));
        }
    }
    out.push_str(")\\z");
    Ok(out)
}

/// Translates a SIMILAR TO pattern to an anchored regex as Flink (Calcite) does: `%` any run of
/// characters, `_` and `.` any one but a line terminator (Java's `.`); `|`, `*`, `+`, `?`,
/// `{m,n}`, `(…)`, `[…]` and a `^` anchor (which never matches inside) as in regular
/// expressions; everything else literal.
pub fn similar_to_regex(pattern: &str, escape: Option<char>) -> Result<String, EvalError> {
    let invalid = || EvalError::Invalid(format!("invalid SIMILAR TO pattern '{pattern}'"));
    let mut out = String::with_capacity(pattern.len() * 2 + 8);
    out.push_str("\\A(?:");
    let mut chars = pattern.chars().peekable();
    let mut tmp = [0u8; 4];
    while let Some(c) = chars.next() {
        if Some(c) == escape {
            let n = chars.next().ok_or_else(invalid)?;
            out.push_str(&regex::escape(n.encode_utf8(&mut tmp)));
            continue;
        }
        match c {
            '%' => out.push_str("(?s:.*)"),
            '_' | '.' => out.push_str(JAVA_DOT),
            '|' | '*' | '+' | '?' | '(' | ')' | '{' | '}' | '^' => out.push(c),
            '[' => {
                out.push('[');
                if chars.peek() == Some(&'^') {
                    chars.next();
                    out.push('^');
                }
                let mut closed = false;
                let mut empty = true;
                while let Some(b) = chars.next() {
                    if b == ']' && !empty {
                        closed = true;
                        break;
                    }
                    empty = false;
                    if Some(b) == escape {
                        let n = chars.next().ok_or_else(invalid)?;
                        out.push_str(&regex::escape(n.encode_utf8(&mut tmp)));
                    } else if b == '-' {
                        out.push('-');
                    } else {
                        out.push_str(&regex::escape(b.encode_utf8(&mut tmp)));
                    }
                }
                if !closed {
                    return Err(invalid());
                }
                out.push(']');
            }
            _ => out.push_str(&regex::escape(c.encode_utf8(&mut tmp))),
        }
    }
    out.push_str(")\\z");
    Ok(out)
}

fn pattern_match(
    args: &[ArrayRef],
    ctx: &EvalContext,
    translate: fn(&str, Option<char>) -> Result<String, EvalError>,
) -> Result<ArrayRef, EvalError> {
    let (s, p) = (strs(&args[0]), strs(&args[1]));
    let escape = args.get(2).map(strs);
    let mut cache = RegexCache::<Regex>::new();
    let mut key = String::new();
    build_bools(args, ctx.num_rows, |i| {
        let pattern = p.value(i);
        let esc = escape.map(|e| e.value(i));
        key.clear();
        key.push_str(pattern);
        if let Some(e) = esc {
            key.push('\0');
            key.push_str(e);
        }
        let compiled = cache.get(&key, || {
            let esc = escape_char(esc).map_err(|e| e.to_string())?;
            let regex = translate(pattern, esc).map_err(|e| e.to_string())?;
            Regex::new(&regex).map_err(|e| e.to_string())
        });
        match compiled {
            Ok(re) => Ok(Some(re.is_match(s.value(i)))),
            Err(e) => Err(EvalError::Invalid(e.clone())),
        }
    })
}

fn like(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    pattern_match(args, ctx, like_to_regex)
}

fn similar_to(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    pattern_match(args, ctx, similar_to_regex)
}

// ---------------------------------------------------------------------------------------------
// Hashes and encodings: MD5, SHA1, SHA2 family, TO_BASE64, FROM_BASE64
// ---------------------------------------------------------------------------------------------

/// The bytes of a string or binary column.
enum Bytes<'a> {
    Str(&'a StringArray),
    Bin(&'a BinaryArray),
}

impl<'a> Bytes<'a> {
    fn of(a: &'a ArrayRef) -> Result<Self, EvalError> {
        match a.data_type() {
            arrow_schema::DataType::Utf8 => Ok(Bytes::Str(a.as_string::<i32>())),
            arrow_schema::DataType::Binary => Ok(Bytes::Bin(a.as_binary::<i32>())),
            other => Err(EvalError::Internal(format!(
                "expected a string or binary column, got {other}"
            ))),
        }
    }
    fn value(&self, i: usize) -> &'a [u8] {
        match self {
            Bytes::Str(s) => s.value(i).as_bytes(),
            Bytes::Bin(b) => b.value(i),
        }
    }
}

fn string_or_binary_param(name: &str, arg: &DataType) -> Result<DataType, String> {
    if arg.kind.is_string() || arg.kind.is_binary() {
        Ok(arg.clone())
    } else if arg.kind == TypeKind::Null {
        Ok(string_type(true))
    } else {
        Err(format!(
            "{name} expects a character or binary string argument, got {}",
            arg.kind
        ))
    }
}

fn resolve_hash(name: &str, args: &[DataType], chars: u32) -> Result<Signature, String> {
    expect_arg_count(name, args, 1, 1)?;
    let param = string_or_binary_param(name, &args[0])?;
    Ok(Signature::new(
        vec![param],
        DataType {
            kind: TypeKind::Char(chars),
            nullable: args[0].nullable,
        },
    ))
}

fn resolve_md5(args: &[DataType]) -> Result<Signature, String> {
    resolve_hash("MD5", args, 32)
}
fn resolve_sha1(args: &[DataType]) -> Result<Signature, String> {
    resolve_hash("SHA1", args, 40)
}
fn resolve_sha224(args: &[DataType]) -> Result<Signature, String> {
    resolve_hash("SHA224", args, 56)
}
fn resolve_sha256(args: &[DataType]) -> Result<Signature, String> {
    resolve_hash("SHA256", args, 64)
}
fn resolve_sha384(args: &[DataType]) -> Result<Signature, String> {
    resolve_hash("SHA384", args, 96)
}
fn resolve_sha512(args: &[DataType]) -> Result<Signature, String> {
    resolve_hash("SHA512", args, 128)
}

fn push_hex_lower(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 0xF) as usize] as char);
    }
}

fn digest_kernel<D: Digest>(args: &[ArrayRef], ctx: &EvalContext) -> Result<ArrayRef, EvalError> {
    let input = Bytes::of(&args[0])?;
    build_strings(args, ctx.num_rows, |i, out| {
        push_hex_lower(out, &D::digest(input.value(i)));
        Ok(true)
    })
}

fn md5(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    digest_kernel::<md5::Md5>(args, ctx)
}
fn sha1(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    digest_kernel::<sha1::Sha1>(args, ctx)
}
fn sha224(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    digest_kernel::<sha2::Sha224>(args, ctx)
}
fn sha256(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    digest_kernel::<sha2::Sha256>(args, ctx)
}
fn sha384(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    digest_kernel::<sha2::Sha384>(args, ctx)
}
fn sha512(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    digest_kernel::<sha2::Sha512>(args, ctx)
}

fn resolve_sha2(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("SHA2", args, 2, 2)?;
    let param = string_or_binary_param("SHA2", &args[0])?;
    let bits = int_param("SHA2", &args[1])?;
    Ok(Signature::new(
        vec![param, bits],
        DataType {
            kind: TypeKind::VarChar(128),
            nullable: any_nullable(args),
        },
    ))
}

/// SHA2(s, bits) for bits 224, 256, 384 or 512 (0 means 256); NULL for other lengths.
fn sha2(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let input = Bytes::of(&args[0])?;
    let bits = ints(&args[1]);
    build_strings(args, ctx.num_rows, |i, out| {
        let v = input.value(i);
        match bits.value(i) {
            224 => push_hex_lower(out, &sha2::Sha224::digest(v)),
            0 | 256 => push_hex_lower(out, &sha2::Sha256::digest(v)),
            384 => push_hex_lower(out, &sha2::Sha384::digest(v)),
            512 => push_hex_lower(out, &sha2::Sha512::digest(v)),
            _ => return Ok(false),
        }
        Ok(true)
    })
}

fn resolve_to_base64(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("TO_BASE64", args, 1, 1)?;
    let param = string_or_binary_param("TO_BASE64", &args[0])?;
    Ok(Signature::new(
        vec![param],
        DataType {
            kind: TypeKind::VarChar(MAX_LENGTH),
            nullable: args[0].nullable,
        },
    ))
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (Java's `Base64.getEncoder()`).
pub fn base64_encode(out: &mut String, bytes: &[u8]) {
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(BASE64[((n >> (18 - 6 * k)) & 0x3F) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
}

/// Java's basic `Base64.getDecoder()`: the standard alphabet, padding optional but correct if
/// present, nothing after it.
pub fn base64_decode(input: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let mut acc: u32 = 0;
    let mut bits = 0;
    let mut n = 0usize;
    let mut i = 0;
    while i < input.len() {
        let c = input[i];
        if c == b'=' {
            // Padding: allowed after 2 or 3 characters of a quantum, and must complete it.
            let needed = match n % 4 {
                2 => 2,
                3 => 1,
                _ => return Err("illegal base64 padding".into()),
            };
            if input.len() - i != needed || input[i..].iter().any(|b| *b != b'=') {
                return Err("illegal base64 padding".into());
            }
            break;
        }
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(format!("illegal base64 character {c:#x}")),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        n += 1;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
        i += 1;
    }
    if n % 4 == 1 {
        return Err("last unit does not have at least two base64 characters".into());
    }
    Ok(())
}

fn to_base64(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let input = Bytes::of(&args[0])?;
    build_strings(args, ctx.num_rows, |i, out| {
        base64_encode(out, input.value(i));
        Ok(true)
    })
}

fn resolve_from_base64(args: &[DataType]) -> Result<Signature, String> {
    expect_arg_count("FROM_BASE64", args, 1, 1)?;
    let param = string_or_binary_param("FROM_BASE64", &args[0])?;
    Ok(Signature::new(
        vec![param],
        DataType {
            kind: TypeKind::VarChar(MAX_LENGTH),
            nullable: args[0].nullable,
        },
    ))
}

/// FROM_BASE64(s): the decoded bytes as a UTF-8 string (invalid sequences replaced); invalid
/// base64 is an error, as in Flink.
fn from_base64(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let input = Bytes::of(&args[0])?;
    let mut bytes = Vec::new();
    build_strings(args, ctx.num_rows, |i, out| {
        bytes.clear();
        base64_decode(input.value(i), &mut bytes).map_err(EvalError::Invalid)?;
        out.push_str(&String::from_utf8_lossy(&bytes));
        Ok(true)
    })
}

// ---------------------------------------------------------------------------------------------
// STARTSWITH, ENDSWITH, TRANSLATE, OVERLAY, SPLIT, ELT
// ---------------------------------------------------------------------------------------------

fn resolve_affix(name: &str, args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params(name, args, "ss", 2)?;
    Ok(Signature::new(params, boolean(any_nullable(args))))
}

/// STARTSWITH(s, prefix): TRUE for an empty prefix.
fn starts_with(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (s, p) = (strs(&args[0]), strs(&args[1]));
    build_bools(args, ctx.num_rows, |i| {
        Ok(Some(s.value(i).starts_with(p.value(i))))
    })
}

/// ENDSWITH(s, suffix): TRUE for an empty suffix.
fn ends_with(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (s, p) = (strs(&args[0]), strs(&args[1]));
    build_bools(args, ctx.num_rows, |i| {
        Ok(Some(s.value(i).ends_with(p.value(i))))
    })
}

fn resolve_translate(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("TRANSLATE", args, "sss", 3)?;
    Ok(Signature::new(params, string_type(args[0].nullable)))
}

/// TRANSLATE(s, from, to): each character of `from` in `s` becomes the character at the same
/// place in `to`, or disappears when `to` is shorter; the first occurrence in `from` rules.
/// A NULL `from` leaves `s` as it is and a NULL `to` deletes, as in Flink.
fn translate(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (s, from, to) = (strs(&args[0]), strs(&args[1]), strs(&args[2]));
    build_strings(&args[..1], ctx.num_rows, |i, out| {
        let v = s.value(i);
        if from.is_null(i) {
            out.push_str(v);
            return Ok(true);
        }
        let from = from.value(i);
        let to = if to.is_null(i) { "" } else { to.value(i) };
        for c in v.chars() {
            match from.chars().position(|f| f == c) {
                Some(at) => {
                    if let Some(r) = to.chars().nth(at) {
                        out.push(r);
                    }
                }
                None => out.push(c),
            }
        }
        Ok(true)
    })
}

fn resolve_overlay(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("OVERLAY", args, "ssii", 3)?;
    Ok(Signature::new(params, string_type(any_nullable(args))))
}

/// OVERLAY(s PLACING r FROM start [FOR length]), as Flink computes it: `s` unchanged when
/// `start` is outside it; otherwise the characters before `start`, then `r`, then — only
/// when `length` (default: the length of `r`) is positive and ends inside `s` — the rest
/// after the replaced span.
fn overlay(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (s, r, start) = (strs(&args[0]), strs(&args[1]), ints(&args[2]));
    let length = args.get(3).map(ints);
    build_strings(args, ctx.num_rows, |i, out| {
        let (v, r) = (s.value(i), r.value(i));
        let total = char_count(v) as i64;
        let start = start.value(i);
        if start <= 0 || start > total {
            out.push_str(v);
            return Ok(true);
        }
        let len = length.map_or(char_count(r) as i64, |l| l.value(i));
        out.push_str(char_slice(v, 0, (start - 1) as usize));
        out.push_str(r);
        if len > 0 && start.saturating_add(len) <= total {
            out.push_str(char_slice(v, (start - 1 + len) as usize, total as usize));
        }
        Ok(true)
    })
}

fn resolve_split(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("SPLIT", args, "ss", 2)?;
    Ok(Signature::new(
        params,
        DataType {
            kind: TypeKind::Array(Box::new(string_type(true))),
            nullable: true,
        },
    ))
}

/// SPLIT(s, delimiter): the pieces between delimiters, empty pieces included; every
/// character when the delimiter is empty.
fn split(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (s, d) = (strs(&args[0]), strs(&args[1]));
    let element = string_type(true).to_arrow_field("element");
    let mut b =
        arrow_array::builder::ListBuilder::new(StringBuilder::new()).with_field(Arc::new(element));
    let mut buf = [0u8; 4];
    for i in 0..ctx.num_rows {
        if any_null(args, i) {
            b.append_null();
            continue;
        }
        let (v, delimiter) = (s.value(i), d.value(i));
        if v.is_empty() {
            // An empty string has no pieces.
        } else if delimiter.is_empty() {
            for c in v.chars() {
                b.values().append_value(c.encode_utf8(&mut buf));
            }
        } else {
            for piece in v.split(delimiter) {
                b.values().append_value(piece);
            }
        }
        b.append(true);
    }
    Ok(Arc::new(b.finish()))
}

/// ELT(n, a, b, …): the n-th of the string arguments, NULL when n is out of range.
fn resolve_elt(args: &[DataType]) -> Result<Signature, String> {
    let (index, rest) = args.split_first().ok_or("ELT expects (index, expr, …)")?;
    if rest.is_empty() {
        return Err("ELT expects (index, expr, …)".into());
    }
    let mut params = vec![int_param("ELT", index)?];
    let common = crate::types::coercion::common_type_of(rest)
        .filter(|c| c.kind.is_string() || c.kind == TypeKind::Null)
        .ok_or("ELT expects character string expressions")?;
    let common = string_param(&common);
    params.extend(rest.iter().map(|r| common.with_nullable(r.nullable)));
    Ok(Signature::new(params, common.with_nullable(true)))
}

fn elt(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let index = ints(&args[0]);
    let choices: Vec<&StringArray> = args[1..].iter().map(strs).collect();
    let mut b = StringBuilder::with_capacity(ctx.num_rows, 0);
    for i in 0..ctx.num_rows {
        let chosen = (!index.is_null(i))
            .then(|| index.value(i))
            .and_then(|n| usize::try_from(n).ok())
            .and_then(|n| n.checked_sub(1))
            .and_then(|n| choices.get(n))
            .filter(|c| !c.is_null(i));
        match chosen {
            Some(c) => b.append_value(c.value(i)),
            None => b.append_null(),
        }
    }
    Ok(Arc::new(b.finish()))
}

// ---------------------------------------------------------------------------------------------
// IS_ALPHA, IS_DIGIT, IS_DECIMAL
// ---------------------------------------------------------------------------------------------

/// The character-class tests take any value (read as its string) and are FALSE, never NULL,
/// for a NULL.
fn resolve_is_class(args: &[DataType]) -> Result<Signature, String> {
    let [value] = args else {
        return Err("expects one argument".into());
    };
    Ok(Signature::new(
        vec![string_type(value.nullable)],
        boolean(false),
    ))
}

fn test_strings(args: &[ArrayRef], test: impl Fn(&str) -> bool) -> Result<ArrayRef, EvalError> {
    let s = strs(&args[0]);
    let mut b = BooleanBuilder::with_capacity(s.len());
    for i in 0..s.len() {
        b.append_value(!s.is_null(i) && test(s.value(i)));
    }
    Ok(Arc::new(b.finish()))
}

/// Every character a letter, and at least one.
fn is_alpha(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    test_strings(args, |s| {
        !s.is_empty() && s.chars().all(char::is_alphabetic)
    })
}

/// Every character a decimal digit (of any script), and at least one. Numeric characters
/// that are not digits (superscripts, fractions, Roman numerals, circled numbers) do not count.
fn is_digit(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let digit = |c: char| {
        c.is_numeric()
            && !matches!(c,
                '\u{B2}' | '\u{B3}' | '\u{B9}' | '\u{BC}'..='\u{BE}'
                | '\u{2070}'..='\u{209F}'
                | '\u{2150}'..='\u{218F}'
                | '\u{2460}'..='\u{24FF}'
                | '\u{2776}'..='\u{2793}')
    };
    test_strings(args, |s| !s.is_empty() && s.chars().all(digit))
}

/// Whether Java's `Double.parseDouble` reads the string: surrounding whitespace, a sign,
/// digits with an optional point and exponent, an optional `d`/`f` suffix, `NaN`, `Infinity`.
fn is_decimal(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    test_strings(args, |s| {
        let s = s.trim_matches(|c: char| c <= ' ');
        let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
        if unsigned == "NaN" || unsigned == "Infinity" {
            return true;
        }
        let body = unsigned
            .strip_suffix(['d', 'D', 'f', 'F'])
            .unwrap_or(unsigned);
        let (mantissa, exponent) = match body.split_once(['e', 'E']) {
            Some((m, e)) => (m, Some(e)),
            None => (body, None),
        };
        let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let mantissa_ok = digits(int) && digits(frac) && !(int.is_empty() && frac.is_empty());
        let exponent_ok = exponent.is_none_or(|e| {
            let e = e.strip_prefix(['+', '-']).unwrap_or(e);
            !e.is_empty() && digits(e)
        });
        mantissa_ok && exponent_ok
    })
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
