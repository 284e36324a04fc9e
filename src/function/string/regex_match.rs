//! The counting and listing regular-expression functions: REGEXP_COUNT, REGEXP_INSTR,
//! REGEXP_SUBSTR and REGEXP_EXTRACT_ALL. Like the others (REGEXP, REGEXP_EXTRACT,
//! REGEXP_REPLACE in the parent module) they compile a pattern once while it repeats and give
//! NULL for a NULL argument or an invalid pattern.

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{Array, ArrayRef};

use super::{
    RegexCache, build_ints, build_strings, compile, int_result, ints, resolve_params, strs,
};
use crate::function::{EvalContext, EvalError, FunctionDef, Signature};
use crate::types::{DataType, MAX_LENGTH, TypeKind};

pub const FUNCTIONS: &[FunctionDef] = &[
    def!(
        "REGEXP_COUNT",
        |a| resolve_count("REGEXP_COUNT", a),
        regexp_count
    ),
    def!(
        "REGEXP_INSTR",
        |a| resolve_count("REGEXP_INSTR", a),
        regexp_instr
    ),
    def!("REGEXP_SUBSTR", resolve_substr, regexp_substr),
    def!(
        "REGEXP_EXTRACT_ALL",
        resolve_extract_all,
        regexp_extract_all
    ),
];

fn resolve_count(name: &str, args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params(name, args, "ss", 2)?;
    Ok(Signature::new(params, int_result(true)))
}

/// REGEXP_COUNT(s, regex): the number of non-overlapping matches.
fn regexp_count(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (s, p) = (strs(&args[0]), strs(&args[1]));
    let mut cache = RegexCache::new();
    build_ints(args, ctx.num_rows, |i| {
        let pattern = p.value(i);
        Ok(match cache.get(pattern, || compile(pattern)) {
            Ok(re) => {
                let mut count = 0usize;
                re.for_each_match(s.value(i), |_, _| {
                    count += 1;
                    true
                })?;
                i32::try_from(count).ok()
            }
            Err(_) => None,
        })
    })
}

/// REGEXP_INSTR(s, regex): the 1-based character position of the first match, 0 for none.
fn regexp_instr(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (s, p) = (strs(&args[0]), strs(&args[1]));
    let mut cache = RegexCache::new();
    build_ints(args, ctx.num_rows, |i| {
        let pattern = p.value(i);
        let text = s.value(i);
        Ok(match cache.get(pattern, || compile(pattern)) {
            Ok(re) => Some(match re.find(text)? {
                Some((start, _)) => text[..start].chars().count() as i32 + 1,
                None => 0,
            }),
            Err(_) => None,
        })
    })
}

fn resolve_substr(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("REGEXP_SUBSTR", args, "ss", 2)?;
    Ok(Signature::new(
        params,
        DataType::nullable(TypeKind::VarChar(MAX_LENGTH)),
    ))
}

/// REGEXP_SUBSTR(s, regex): the first match, NULL for none.
fn regexp_substr(
    args: &[ArrayRef],
    ctx: &EvalContext,
    _: &DataType,
) -> Result<ArrayRef, EvalError> {
    let (s, p) = (strs(&args[0]), strs(&args[1]));
    let mut cache = RegexCache::new();
    build_strings(args, ctx.num_rows, |i, out| {
        let pattern = p.value(i);
        let Ok(re) = cache.get(pattern, || compile(pattern)) else {
            return Ok(false);
        };
        let text = s.value(i);
        match re.find(text)? {
            Some((start, end)) => {
                out.push_str(&text[start..end]);
                Ok(true)
            }
            None => Ok(false),
        }
    })
}

fn resolve_extract_all(args: &[DataType]) -> Result<Signature, String> {
    let params = resolve_params("REGEXP_EXTRACT_ALL", args, "ssi", 2)?;
    Ok(Signature::new(
        params,
        DataType {
            kind: TypeKind::Array(Box::new(DataType::nullable(TypeKind::VarChar(MAX_LENGTH)))),
            nullable: true,
        },
    ))
}

/// REGEXP_EXTRACT_ALL(s, regex [, group]): group `group` (default 1; 0 is the whole match) of
/// every match, as an array; NULL for an invalid regex or a group the regex does not have.
fn regexp_extract_all(
    args: &[ArrayRef],
    ctx: &EvalContext,
    _: &DataType,
) -> Result<ArrayRef, EvalError> {
    let (s, p) = (strs(&args[0]), strs(&args[1]));
    let group = args.get(2).map(ints);
    let mut cache = RegexCache::new();
    let element = DataType::nullable(TypeKind::VarChar(MAX_LENGTH)).to_arrow_field("element");
    let mut b = ListBuilder::new(StringBuilder::new()).with_field(Arc::new(element));
    for i in 0..ctx.num_rows {
        if args.iter().any(|a| a.is_null(i)) {
            b.append_null();
            continue;
        }
        let pattern = p.value(i);
        let g = group.map_or(1, |g| g.value(i));
        let re = match cache.get(pattern, || compile(pattern)) {
            Ok(re) => re,
            Err(_) => {
                b.append_null();
                continue;
            }
        };
        let Some(g) = usize::try_from(g).ok().filter(|g| *g < re.captures_len()) else {
            b.append_null();
            continue;
        };
        let text = s.value(i);
        re.for_each_group(text, g, |m| {
            b.values()
                .append_option(m.map(|(start, end)| &text[start..end]));
        })?;
        b.append(true);
    }
    Ok(Arc::new(b.finish()))
}
