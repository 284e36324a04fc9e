//! String functions: `||`, CONCAT, UPPER, LOWER, CHAR_LENGTH, … with Flink's semantics
//! (NULL in, NULL out unless documented otherwise; positions are 1-based and count
//! characters, not bytes).

use std::sync::Arc;

use arrow_array::builder::{Int32Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, StringArray};

use super::{EvalContext, EvalError, Evaluation, FunctionDef, Signature};
use crate::types::{DataType, MAX_LENGTH, TypeKind};

pub const FUNCTIONS: &[FunctionDef] = &[
    FunctionDef { name: "||", resolve: resolve_concat, kernel: concat, evaluation: Evaluation::Deterministic },
    FunctionDef { name: "CONCAT", resolve: resolve_concat, kernel: concat, evaluation: Evaluation::Deterministic },
    FunctionDef { name: "UPPER", resolve: resolve_string_to_string, kernel: upper, evaluation: Evaluation::Deterministic },
    FunctionDef { name: "LOWER", resolve: resolve_string_to_string, kernel: lower, evaluation: Evaluation::Deterministic },
    FunctionDef { name: "CHAR_LENGTH", resolve: resolve_length, kernel: char_length, evaluation: Evaluation::Deterministic },
    FunctionDef { name: "CHARACTER_LENGTH", resolve: resolve_length, kernel: char_length, evaluation: Evaluation::Deterministic },
];

/// Nullable if any argument is.
pub fn any_nullable(args: &[DataType]) -> bool {
    args.iter().any(|a| a.nullable)
}

/// Checks that every argument is a character string (CHAR/VARCHAR/STRING or an untyped NULL).
pub fn expect_strings(name: &str, args: &[DataType]) -> Result<(), String> {
    for a in args {
        if !a.kind.is_string() && a.kind != TypeKind::Null {
            return Err(format!("{name} expects character string arguments, got {}", a.kind));
        }
    }
    Ok(())
}

fn string_arg(nullable: bool) -> DataType {
    DataType { kind: TypeKind::VarChar(MAX_LENGTH), nullable }
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
    Ok(Signature::new(args.iter().map(|a| string_arg(a.nullable)).collect(), DataType { kind, nullable }))
}

fn resolve_string_to_string(args: &[DataType]) -> Result<Signature, String> {
    one_string_arg(args)?;
    Ok(Signature::new(vec![args[0].clone()], args[0].clone()))
}

fn resolve_length(args: &[DataType]) -> Result<Signature, String> {
    one_string_arg(args)?;
    Ok(Signature::new(vec![args[0].clone()], DataType { kind: TypeKind::Int, nullable: args[0].nullable }))
}

fn one_string_arg(args: &[DataType]) -> Result<(), String> {
    if args.len() != 1 {
        return Err(format!("expects 1 argument, got {}", args.len()));
    }
    expect_strings("function", args)
}

/// Applies `f` to every non-null string of a string array.
pub fn map_strings(array: &ArrayRef, mut f: impl FnMut(&str, &mut String)) -> ArrayRef {
    let input = array.as_string::<i32>();
    let mut builder = StringBuilder::with_capacity(input.len(), input.values().len());
    let mut buf = String::new();
    for i in 0..input.len() {
        if input.is_null(i) {
            builder.append_null();
        } else {
            buf.clear();
            f(input.value(i), &mut buf);
            builder.append_value(&buf);
        }
    }
    Arc::new(builder.finish())
}

fn concat(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let strings: Vec<&StringArray> = args.iter().map(|a| a.as_string::<i32>()).collect();
    let mut builder = StringBuilder::with_capacity(ctx.num_rows, 0);
    let mut buf = String::new();
    for i in 0..ctx.num_rows {
        if strings.iter().any(|s| s.is_null(i)) {
            builder.append_null();
            continue;
        }
        buf.clear();
        for s in &strings {
            buf.push_str(s.value(i));
        }
        builder.append_value(&buf);
    }
    Ok(Arc::new(builder.finish()))
}

fn upper(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    Ok(map_strings(&args[0], |s, out| out.extend(s.chars().flat_map(char::to_uppercase))))
}

fn lower(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    Ok(map_strings(&args[0], |s, out| out.extend(s.chars().flat_map(char::to_lowercase))))
}

fn char_length(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let input = args[0].as_string::<i32>();
    let mut builder = Int32Builder::with_capacity(input.len());
    for v in input.iter() {
        builder.append_option(v.map(|s| s.chars().count() as i32));
    }
    Ok(Arc::new(builder.finish()))
}
