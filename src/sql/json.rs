//! Flink's SQL/JSON function syntax, which `sqlparser` does not read: the `RETURNING`,
//! wrapper and `ON EMPTY` / `ON ERROR` clauses of JSON_VALUE, JSON_QUERY and JSON_EXISTS, and
//! the `[KEY] k VALUE v` pairs and `ON NULL` clause of JSON_OBJECT and JSON_ARRAY.
//!
//! Each call becomes an ordinary function call whose extra arguments spell the clauses, so the
//! binder and the function registry need nothing special (see `function/json.rs`):
//!
//! ```text
//! JSON_VALUE(json, path, CAST(NULL AS returning), on_empty, empty_default, on_error, error_default)
//! JSON_QUERY(json, path, wrapper, on_empty, on_error)
//! JSON_EXISTS(json, path, on_error)
//! JSON_OBJECT(on_null, key1, nested1, value1, …)      nested: whether the value is itself a
//! JSON_ARRAY(on_null, nested1, value1, …)             JSON_OBJECT/JSON_ARRAY call
//! JSON_STRING(value [, TRUE])                         TRUE: value is such a call
//! JSON_ARRAYAGG_<ABSENT|NULL>_ON_NULL(JSON_STRING(value))
//! JSON_OBJECTAGG_<NULL|ABSENT>_ON_NULL(key, JSON_STRING(value))
//! ```
//!
//! The behaviours (`'NULL'`, `'ERROR'`, `'DEFAULT'`, `'EMPTY ARRAY'`, …) are string literals;
//! a JSON_VALUE or JSON_EXISTS clause not written is `''` (its default behaviour), because
//! Flink prints those clauses back only when they were written.

use sqlparser::ast::{
    CastKind, DataType as SqlDataType, Expr, Function, FunctionArg, FunctionArgExpr,
    FunctionArgumentList, FunctionArguments, Ident, ObjectName, Value,
};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// The JSON call at the parser's position, if the next tokens are `JSON_xxx (`.
pub fn parse_json_call(parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
    let Token::Word(word) = &parser.peek_token_ref().token else {
        return None;
    };
    if word.quote_style.is_some() || parser.peek_nth_token_ref(1).token != Token::LParen {
        return None;
    }
    let name = word.value.to_ascii_uppercase();
    let parse: fn(&mut Parser) -> Result<Vec<Expr>, ParserError> = match name.as_str() {
        "JSON_VALUE" => json_value,
        "JSON_QUERY" => json_query,
        "JSON_EXISTS" => json_exists,
        "JSON_OBJECT" => json_object,
        "JSON_ARRAY" => json_array,
        "JSON_STRING" => json_string,
        "JSON_ARRAYAGG" => json_arrayagg,
        "JSON_OBJECTAGG" => json_objectagg,
        _ => return None,
    };
    parser.next_token();
    parser.next_token();
    Some(parse(parser).and_then(|args| {
        parser.expect_token(&Token::RParen)?;
        // The aggregates are named by their ON NULL behaviour, as Flink's plans name them.
        let name = match (name.as_str(), &args[..]) {
            ("JSON_ARRAYAGG" | "JSON_OBJECTAGG", [Expr::Value(mode), ..]) => {
                let mode = match &mode.value {
                    Value::SingleQuotedString(m) => m.clone(),
                    _ => String::new(),
                };
                format!("{name}_{mode}_ON_NULL")
            }
            _ => name,
        };
        let args = match name.as_str() {
            n if n.starts_with("JSON_ARRAYAGG") || n.starts_with("JSON_OBJECTAGG") => {
                args.into_iter().skip(1).collect()
            }
            _ => args,
        };
        Ok(call(&name, args))
    }))
}

/// A plain call `name(args…)`, as the dialect hands constructs to the binder.
pub(super) fn call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function(Function {
        name: ObjectName::from(vec![Ident::new(name)]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e)))
                .collect(),
            clauses: vec![],
        }),
        within_group: vec![],
        filter: None,
        null_treatment: None,
        over: None,
    })
}

pub(super) fn text(s: &str) -> Expr {
    Expr::value(Value::SingleQuotedString(s.to_string()))
}

fn null() -> Expr {
    Expr::value(Value::Null)
}

fn boolean(b: bool) -> Expr {
    Expr::value(Value::Boolean(b))
}

/// Consumes the unquoted word `w` if it is next.
fn word(parser: &mut Parser, w: &str) -> bool {
    match &parser.peek_token_ref().token {
        Token::Word(t) if t.quote_style.is_none() && t.value.eq_ignore_ascii_case(w) => {
            parser.next_token();
            true
        }
        _ => false,
    }
}

/// Consumes the words `ws` if they are all next, and nothing otherwise.
fn words(parser: &mut Parser, ws: &[&str]) -> bool {
    let all = |p: &mut Parser| {
        for w in ws {
            if !word(p, w) {
                return Err(ParserError::ParserError(String::new()));
            }
        }
        Ok(())
    };
    matches!(parser.maybe_parse(all), Ok(Some(())))
}

fn expected(parser: &Parser, what: &str) -> ParserError {
    let found = parser.peek_token_ref();
    crate::sql::parser::error_at(
        found.span,
        format!("expected {what}, found {}", found.token),
    )
}

/// `json, path` — the first two arguments of the query functions.
fn json_and_path(parser: &mut Parser) -> Result<(Expr, Expr), ParserError> {
    let json = parser.parse_expr()?;
    parser.expect_token(&Token::Comma)?;
    let path = parser.parse_expr()?;
    Ok((json, path))
}

/// A behaviour before `ON <clause>`: one of `choices` (multi-word ones as written), or
/// `DEFAULT expr` when allowed. Returns `None` when the next tokens are not one.
fn behaviour(
    parser: &mut Parser,
    clause: &str,
    choices: &[&str],
    default_allowed: bool,
) -> Result<Option<(String, Expr)>, ParserError> {
    parser.maybe_parse(|p| {
        let mut found = None;
        for choice in choices {
            let parts: Vec<&str> = choice.split(' ').collect();
            if words(p, &parts) {
                found = Some((choice.to_string(), null()));
                break;
            }
        }
        if found.is_none() && default_allowed && word(p, "DEFAULT") {
            found = Some(("DEFAULT".to_string(), p.parse_expr()?));
        }
        match found {
            Some(b) if words(p, &["ON", clause]) => Ok(b),
            _ => Err(ParserError::ParserError(String::new())),
        }
    })
}

fn json_value(parser: &mut Parser) -> Result<Vec<Expr>, ParserError> {
    let (json, path) = json_and_path(parser)?;
    let returning = if word(parser, "RETURNING") {
        parser.parse_data_type()?
    } else {
        SqlDataType::String(None)
    };
    let choices = ["NULL", "ERROR"];
    let empty = behaviour(parser, "EMPTY", &choices, true)?;
    let error = behaviour(parser, "ERROR", &choices, true)?;
    // An unwritten clause is the empty behaviour: NULL, but not printed back (`DESC`).
    let (empty_mode, empty_default) = empty.unwrap_or((String::new(), null()));
    let (error_mode, error_default) = error.unwrap_or((String::new(), null()));
    Ok(vec![
        json,
        path,
        Expr::Cast {
            kind: CastKind::Cast,
            expr: Box::new(null()),
            data_type: returning,
            format: None,
        },
        text(&empty_mode),
        empty_default,
        text(&error_mode),
        error_default,
    ])
}

fn json_query(parser: &mut Parser) -> Result<Vec<Expr>, ParserError> {
    let (json, path) = json_and_path(parser)?;
    if word(parser, "RETURNING") {
        let at = parser.peek_token_ref().span;
        let ty = parser.parse_data_type()?;
        let shown = ty.to_string().to_ascii_uppercase();
        if !(shown.contains("STRING") || shown.contains("VARCHAR")) {
            return Err(crate::sql::parser::error_at(
                at,
                format!("JSON_QUERY RETURNING {ty} is not supported (only STRING)"),
            ));
        }
    }
    let wrapper = if words(parser, &["WITHOUT", "ARRAY", "WRAPPER"])
        || words(parser, &["WITHOUT", "WRAPPER"])
    {
        "WITHOUT"
    } else if words(parser, &["WITH", "CONDITIONAL", "ARRAY", "WRAPPER"])
        || words(parser, &["WITH", "CONDITIONAL", "WRAPPER"])
    {
        "CONDITIONAL"
    } else if words(parser, &["WITH", "UNCONDITIONAL", "ARRAY", "WRAPPER"])
        || words(parser, &["WITH", "UNCONDITIONAL", "WRAPPER"])
        || words(parser, &["WITH", "ARRAY", "WRAPPER"])
        || words(parser, &["WITH", "WRAPPER"])
    {
        "UNCONDITIONAL"
    } else {
        "WITHOUT"
    };
    let choices = ["NULL", "ERROR", "EMPTY ARRAY", "EMPTY OBJECT"];
    let empty = behaviour(parser, "EMPTY", &choices, false)?;
    let error = behaviour(parser, "ERROR", &choices, false)?;
    Ok(vec![
        json,
        path,
        text(wrapper),
        text(&empty.map_or("NULL".into(), |b| b.0)),
        text(&error.map_or("NULL".into(), |b| b.0)),
    ])
}

fn json_exists(parser: &mut Parser) -> Result<Vec<Expr>, ParserError> {
    let (json, path) = json_and_path(parser)?;
    let error = behaviour(
        parser,
        "ERROR",
        &["TRUE", "FALSE", "UNKNOWN", "ERROR"],
        false,
    )?;
    Ok(vec![
        json,
        path,
        // Unwritten: the empty behaviour, FALSE, not printed back.
        text(&error.map_or(String::new(), |b| b.0)),
    ])
}

/// `NULL ON NULL` or `ABSENT ON NULL`, if next.
fn on_null(parser: &mut Parser) -> Option<&'static str> {
    if words(parser, &["NULL", "ON", "NULL"]) {
        Some("NULL")
    } else if words(parser, &["ABSENT", "ON", "NULL"]) {
        Some("ABSENT")
    } else {
        None
    }
}

fn is_json_constructor(e: &Expr) -> bool {
    matches!(e, Expr::Function(f) if {
        let name = f.name.to_string().to_ascii_uppercase();
        name == "JSON_OBJECT" || name == "JSON_ARRAY"
    })
}

fn json_object(parser: &mut Parser) -> Result<Vec<Expr>, ParserError> {
    let mut pairs = Vec::new();
    let mut mode = None;
    while parser.peek_token_ref().token != Token::RParen {
        if let Some(m) = on_null(parser) {
            mode = Some(m);
            break;
        }
        if !pairs.is_empty() {
            parser.expect_token(&Token::Comma)?;
        }
        word(parser, "KEY");
        let key = parser.parse_expr()?;
        if !word(parser, "VALUE") {
            return Err(expected(parser, "VALUE"));
        }
        let value = parser.parse_expr()?;
        pairs.push(key);
        pairs.push(boolean(is_json_constructor(&value)));
        pairs.push(value);
    }
    let mut args = vec![text(mode.unwrap_or("NULL"))];
    args.extend(pairs);
    Ok(args)
}

/// JSON_STRING(value): a JSON_OBJECT or JSON_ARRAY call's text is JSON already, which a
/// second argument `TRUE` says (Flink's code generation looks at the operand the same way).
fn json_string(parser: &mut Parser) -> Result<Vec<Expr>, ParserError> {
    let value = parser.parse_expr()?;
    if is_json_constructor(&value) {
        return Ok(vec![value, boolean(true)]);
    }
    Ok(vec![value])
}

/// A JSON aggregate's value, as Flink's `WrapJsonAggFunctionArgumentsRule` hands it over: its
/// JSON text (`JSON_STRING`, raw for a nested constructor).
fn json_text(value: Expr) -> Expr {
    let nested = is_json_constructor(&value);
    let mut args = vec![value];
    if nested {
        args.push(boolean(true));
    }
    call("JSON_STRING", args)
}

/// JSON_ARRAYAGG(value [NULL | ABSENT ON NULL]): `(mode, JSON_STRING(value))`; ABSENT by
/// default.
fn json_arrayagg(parser: &mut Parser) -> Result<Vec<Expr>, ParserError> {
    let value = parser.parse_expr()?;
    let mode = on_null(parser).unwrap_or("ABSENT");
    Ok(vec![text(mode), json_text(value)])
}

/// JSON_OBJECTAGG([KEY] key VALUE value [NULL | ABSENT ON NULL]): `(mode, key,
/// JSON_STRING(value))`; NULL by default.
fn json_objectagg(parser: &mut Parser) -> Result<Vec<Expr>, ParserError> {
    word(parser, "KEY");
    let key = parser.parse_expr()?;
    if !word(parser, "VALUE") {
        return Err(expected(parser, "VALUE"));
    }
    let value = parser.parse_expr()?;
    let mode = on_null(parser).unwrap_or("NULL");
    Ok(vec![text(mode), key, json_text(value)])
}

fn json_array(parser: &mut Parser) -> Result<Vec<Expr>, ParserError> {
    let mut values = Vec::new();
    let mut mode = None;
    while parser.peek_token_ref().token != Token::RParen {
        if let Some(m) = on_null(parser) {
            mode = Some(m);
            break;
        }
        if !values.is_empty() {
            parser.expect_token(&Token::Comma)?;
        }
        let value = parser.parse_expr()?;
        values.push(boolean(is_json_constructor(&value)));
        values.push(value);
    }
    let mut args = vec![text(mode.unwrap_or("ABSENT"))];
    args.extend(values);
    Ok(args)
}
