//! The SQL/JSON functions: JSON_VALUE, JSON_QUERY, JSON_EXISTS, `IS JSON`, JSON_STRING,
//! JSON_OBJECT and JSON_ARRAY, with Flink's (Calcite's) semantics: a path without a mode is
//! `strict`, so a missing member is an error and ON ERROR decides; `lax` makes it empty and
//! ON EMPTY decides. The clauses arrive as extra literal arguments (see `sql/json.rs`).
//! A document is parsed once per row; the path is compiled once while it repeats.

use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, StringArray};
use serde_json::Value as Json;

use super::{EvalContext, EvalError, FunctionDef, Signature, string_type};
use crate::types::json_text::{JsonWriter, TimestampStandard, write_json_string};
use crate::types::{DataType, TypeKind};

pub const FUNCTIONS: &[FunctionDef] = &[
    def!("JSON_VALUE", resolve_json_value, json_value),
    def!("JSON_QUERY", resolve_json_query, json_query),
    def!("JSON_EXISTS", resolve_json_exists, json_exists),
    def!("IS JSON", resolve_is_json, is_json),
    def!("JSON_STRING", resolve_json_string, json_string),
    def!("JSON_OBJECT", resolve_json_object, json_object),
    def!("JSON_ARRAY", resolve_json_array, json_array),
    def!("JSON_QUOTE", resolve_text_to_text, json_quote),
    def!("JSON_UNQUOTE", resolve_text_to_text, json_unquote),
];

fn strings(a: &ArrayRef) -> &StringArray {
    a.as_string::<i32>()
}

/// A literal clause argument (the same on every row).
fn clause(a: &ArrayRef) -> &str {
    let s = strings(a);
    if s.is_empty() || s.is_null(0) {
        ""
    } else {
        s.value(0)
    }
}

fn expect_text(name: &str, args: &[DataType], positions: &[usize]) -> Result<(), String> {
    for &i in positions {
        let a = &args[i];
        if !a.kind.is_string() && a.kind != TypeKind::Null {
            return Err(format!("{name} expects a character string, got {}", a.kind));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Member(String),
    Index(usize),
    AnyMember,
    AnyIndex,
}

#[derive(Debug, Clone, PartialEq)]
struct JsonPath {
    strict: bool,
    steps: Vec<Step>,
}

impl JsonPath {
    /// `[lax|strict] $ (.name | .* | ['name'] | [n] | [*])*`; `None` when malformed.
    fn parse(text: &str) -> Option<JsonPath> {
        let text = text.trim();
        // An optional mode word, in any case, before the `$`.
        let (mode, rest) = match text.find('$') {
            Some(at) => (text[..at].trim(), &text[at..]),
            None => return None,
        };
        let strict = match mode.to_ascii_lowercase().as_str() {
            "" | "strict" => true,
            "lax" => false,
            _ => return None,
        };
        let mut chars = rest.strip_prefix('$')?.chars().peekable();
        let mut steps = Vec::new();
        while let Some(c) = chars.next() {
            match c {
                '.' if chars.peek() == Some(&'*') => {
                    chars.next();
                    steps.push(Step::AnyMember);
                }
                '.' => {
                    let mut name = String::new();
                    while let Some(&c) = chars.peek() {
                        if c == '.' || c == '[' {
                            break;
                        }
                        name.push(c);
                        chars.next();
                    }
                    if name.is_empty() {
                        return None;
                    }
                    steps.push(Step::Member(name));
                }
                '[' => {
                    let mut inside = String::new();
                    for c in chars.by_ref() {
                        if c == ']' {
                            break;
                        }
                        inside.push(c);
                    }
                    let inside = inside.trim();
                    if inside == "*" {
                        steps.push(Step::AnyIndex);
                    } else if let Some(name) = inside
                        .strip_prefix('\'')
                        .and_then(|s| s.strip_suffix('\''))
                        .or_else(|| inside.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
                    {
                        steps.push(Step::Member(name.to_string()));
                    } else {
                        steps.push(Step::Index(inside.parse().ok()?));
                    }
                }
                c if c.is_whitespace() => {}
                _ => return None,
            }
        }
        Some(JsonPath { strict, steps })
    }

    /// The path as Flink prints it in errors: `$['a'][0]`.
    fn canonical(&self) -> String {
        let mut s = String::from("$");
        for step in &self.steps {
            match step {
                Step::Member(m) => s.push_str(&format!("['{m}']")),
                Step::Index(i) => s.push_str(&format!("[{i}]")),
                Step::AnyMember | Step::AnyIndex => s.push_str("[*]"),
            }
        }
        s
    }

    /// What the path selects: `Ok(None)` when nothing (lax), an error when a step does not
    /// apply (strict). A wildcard selects an array of what it matched.
    fn eval(&self, doc: &Json) -> Result<Option<Json>, String> {
        let missing = || format!("No results for path: {}", self.canonical());
        let mut current = doc.clone();
        let mut wildcard = false;
        for step in &self.steps {
            let next = if wildcard {
                // Apply the step to every element matched so far.
                let items = current.as_array().cloned().unwrap_or_default();
                let mut out = Vec::new();
                for item in &items {
                    if let Some(v) = apply(step, item, false) {
                        match v {
                            Json::Array(vs) if matches!(step, Step::AnyMember | Step::AnyIndex) => {
                                out.extend(vs)
                            }
                            v => out.push(v),
                        }
                    }
                }
                Some(Json::Array(out))
            } else {
                apply(step, &current, !self.strict)
            };
            match next {
                Some(v) => current = v,
                None if self.strict => return Err(missing()),
                None => return Ok(None),
            }
            if matches!(step, Step::AnyMember | Step::AnyIndex) {
                wildcard = true;
            }
        }
        if wildcard && current.as_array().is_some_and(|a| a.is_empty()) {
            return if self.strict {
                Err(missing())
            } else {
                Ok(None)
            };
        }
        Ok(Some(current))
    }
}

/// One step from `value`; in lax mode a member step reaches into each element of an array and
/// an index step treats a non-array as a one-element array.
fn apply(step: &Step, value: &Json, lax: bool) -> Option<Json> {
    match (step, value) {
        (Step::Member(m), Json::Object(o)) => o.get(m).cloned(),
        (Step::Member(_), Json::Array(items)) if lax => {
            let found: Vec<Json> = items.iter().filter_map(|i| apply(step, i, lax)).collect();
            (!found.is_empty()).then_some(Json::Array(found))
        }
        (Step::Index(i), Json::Array(items)) => items.get(*i).cloned(),
        (Step::Index(0), other) if lax => Some(other.clone()),
        (Step::AnyMember, Json::Object(o)) => Some(Json::Array(o.values().cloned().collect())),
        (Step::AnyIndex, Json::Array(items)) => Some(Json::Array(items.clone())),
        (Step::AnyIndex, other) if lax => Some(Json::Array(vec![other.clone()])),
        _ => None,
    }
}

/// The last compiled path, reused while the path text repeats.
#[derive(Default)]
struct PathCache {
    text: String,
    path: Option<Option<JsonPath>>,
}

impl PathCache {
    fn get(&mut self, text: &str) -> Option<&JsonPath> {
        if self.path.is_none() || self.text != text {
            self.text = text.to_string();
            self.path = Some(JsonPath::parse(text));
        }
        self.path.as_ref().and_then(|p| p.as_ref())
    }
}

/// The error of a JSON null where a strict path wants a value.
const STRICT_NULL: &str =
    "Strict jsonpath mode requires a non-null value, and the actual value is: 'null'";

/// What a query function found in row `i`.
enum Found {
    Value(Json),
    Empty,
    Error(String),
}

/// Parses row `i`'s document and evaluates its path.
fn find(docs: &StringArray, paths: &StringArray, i: usize, cache: &mut PathCache) -> Found {
    let doc: Json = match serde_json::from_str(docs.value(i)) {
        Ok(d) => d,
        Err(e) => return Found::Error(e.to_string()),
    };
    let Some(path) = cache.get(paths.value(i)) else {
        return Found::Error(format!("invalid JSON path '{}'", paths.value(i)));
    };
    match path.eval(&doc) {
        Ok(Some(v)) => Found::Value(v),
        Ok(None) => Found::Empty,
        Err(e) => Found::Error(e),
    }
}

/// JSON text of a value as Java's maps and lists print it in Flink's messages.
fn shown(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// JSON_VALUE
// ---------------------------------------------------------------------------------------------

fn resolve_json_value(args: &[DataType]) -> Result<Signature, String> {
    let [
        json,
        path,
        returning,
        on_empty,
        empty_default,
        on_error,
        error_default,
    ] = args
    else {
        return Err(
            "JSON_VALUE expects (json, path [RETURNING type] [… ON EMPTY] [… ON ERROR])".into(),
        );
    };
    expect_text("JSON_VALUE", args, &[0, 1])?;
    let result = match &returning.kind {
        k if k.is_string() => string_type(true),
        TypeKind::Int | TypeKind::Boolean | TypeKind::Double => returning.with_nullable(true),
        other => {
            return Err(format!(
                "Unsupported type '{other}' for RETURNING in JSON_VALUE()"
            ));
        }
    };
    Ok(Signature::new(
        vec![
            string_type(json.nullable),
            string_type(path.nullable),
            result.clone(),
            on_empty.clone(),
            result.clone(),
            on_error.clone(),
            result.clone(),
        ]
        .into_iter()
        .zip([
            json,
            path,
            returning,
            on_empty,
            empty_default,
            on_error,
            error_default,
        ])
        .map(|(t, a)| {
            if t.kind.is_string() && a.kind.is_string() {
                t.with_nullable(a.nullable)
            } else {
                t
            }
        })
        .collect(),
        result,
    ))
}

/// A scalar as the RETURNING type wants it, or the error Flink's cast raises.
fn scalar_text(v: &Json) -> Option<String> {
    match v {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(number_text(n)),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn json_value(args: &[ArrayRef], ctx: &EvalContext, t: &DataType) -> Result<ArrayRef, EvalError> {
    let (docs, paths) = (strings(&args[0]), strings(&args[1]));
    let (on_empty, on_error) = (clause(&args[3]), clause(&args[5]));
    let mut cache = PathCache::default();
    // Per row: the value found, or which default column to take it from.
    let mut values: Vec<Option<Json>> = Vec::with_capacity(ctx.num_rows);
    let mut use_empty = BooleanBuilder::with_capacity(ctx.num_rows);
    let mut use_error = BooleanBuilder::with_capacity(ctx.num_rows);
    for i in 0..ctx.num_rows {
        let (mut empty, mut error) = (false, false);
        let value = if docs.is_null(i) || paths.is_null(i) {
            None
        } else {
            let strict = cache.get(paths.value(i)).is_some_and(|p| p.strict);
            let found = match find(docs, paths, i, &mut cache) {
                // A JSON null is an empty result in lax mode and, as not a scalar, an error in
                // strict mode (Flink 2.3).
                Found::Value(Json::Null) if strict => Found::Error(STRICT_NULL.to_string()),
                Found::Value(Json::Null) => Found::Empty,
                Found::Value(Json::Array(_) | Json::Object(_))
                    if cache.get(paths.value(i)).is_some_and(|p| !p.strict) =>
                {
                    Found::Empty
                }
                Found::Value(v @ (Json::Array(_) | Json::Object(_))) => Found::Error(format!(
                    "Strict jsonpath mode requires scalar value, and the actual value is: ''{}''",
                    shown(&v)
                )),
                other => other,
            };
            match found {
                Found::Value(v) => Some(v),
                Found::Empty => match on_empty {
                    "ERROR" => {
                        return Err(EvalError::Invalid(
                            "Empty result of JSON_VALUE function is not allowed".into(),
                        ));
                    }
                    "DEFAULT" => {
                        empty = true;
                        None
                    }
                    _ => None,
                },
                Found::Error(e) => match on_error {
                    "ERROR" => return Err(EvalError::Invalid(e)),
                    "DEFAULT" => {
                        error = true;
                        None
                    }
                    _ => None,
                },
            }
        };
        values.push(value.filter(|v| !v.is_null()));
        use_empty.append_value(empty);
        use_error.append_value(error);
    }
    let found = typed_column(&values, t)?;
    let with_empty = arrow_select::zip::zip(&use_empty.finish(), &args[4], &found)
        .map_err(|e| EvalError::Internal(e.to_string()))?;
    arrow_select::zip::zip(&use_error.finish(), &args[6], &with_empty)
        .map_err(|e| EvalError::Internal(e.to_string()))
}

/// The found scalars as a column of the RETURNING type; a value of the wrong JSON kind fails
/// the query, as Flink's cast does.
fn typed_column(values: &[Option<Json>], t: &DataType) -> Result<ArrayRef, EvalError> {
    let wrong =
        |v: &Json| EvalError::Invalid(format!("JSON_VALUE cannot return {} as {}", v, t.kind));
    Ok(match &t.kind {
        TypeKind::Int => {
            let mut b = arrow_array::builder::Int32Builder::with_capacity(values.len());
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(v) => b.append_value(
                        v.as_i64()
                            .and_then(|n| i32::try_from(n).ok())
                            .ok_or_else(|| wrong(v))?,
                    ),
                }
            }
            Arc::new(b.finish())
        }
        TypeKind::Double => {
            let mut b = arrow_array::builder::Float64Builder::with_capacity(values.len());
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(v) if v.is_f64() => b.append_value(v.as_f64().unwrap_or_default()),
                    Some(v) => return Err(wrong(v)),
                }
            }
            Arc::new(b.finish())
        }
        TypeKind::Boolean => {
            let mut b = BooleanBuilder::with_capacity(values.len());
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(v) => b.append_value(v.as_bool().ok_or_else(|| wrong(v))?),
                }
            }
            Arc::new(b.finish())
        }
        _ => {
            let mut b = StringBuilder::with_capacity(values.len(), values.len() * 8);
            for v in values {
                b.append_option(v.as_ref().and_then(scalar_text));
            }
            Arc::new(b.finish())
        }
    })
}

// ---------------------------------------------------------------------------------------------
// JSON_QUERY, JSON_EXISTS, IS JSON
// ---------------------------------------------------------------------------------------------

fn resolve_json_query(args: &[DataType]) -> Result<Signature, String> {
    if args.len() != 5 {
        return Err("JSON_QUERY expects (json, path [wrapper] [… ON EMPTY] [… ON ERROR])".into());
    }
    expect_text("JSON_QUERY", args, &[0, 1])?;
    Ok(Signature::new(
        args.iter().map(|a| string_type(a.nullable)).collect(),
        string_type(true),
    ))
}

fn json_query(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (docs, paths) = (strings(&args[0]), strings(&args[1]));
    let (wrapper, on_empty, on_error) = (clause(&args[2]), clause(&args[3]), clause(&args[4]));
    let mut cache = PathCache::default();
    let mut b = StringBuilder::with_capacity(ctx.num_rows, 0);
    let mut buf = String::new();
    let behave = |mode: &str, what: String| -> Result<Option<&'static str>, EvalError> {
        match mode {
            "ERROR" => Err(EvalError::Invalid(what)),
            "EMPTY ARRAY" => Ok(Some("[]")),
            "EMPTY OBJECT" => Ok(Some("{}")),
            _ => Ok(None),
        }
    };
    for i in 0..ctx.num_rows {
        if docs.is_null(i) || paths.is_null(i) {
            b.append_null();
            continue;
        }
        let strict = cache.get(paths.value(i)).is_none_or(|p| p.strict);
        let found = match find(docs, paths, i, &mut cache) {
            // As for JSON_VALUE: empty in lax mode (so never wrapped), an error in strict mode.
            Found::Value(Json::Null) if strict => Found::Error(STRICT_NULL.to_string()),
            Found::Value(Json::Null) => Found::Empty,
            Found::Value(v) => {
                let structured = v.is_array() || v.is_object();
                match wrapper {
                    "UNCONDITIONAL" => Found::Value(Json::Array(vec![v])),
                    "CONDITIONAL" if !structured => Found::Value(Json::Array(vec![v])),
                    _ if structured => Found::Value(v),
                    _ if strict => Found::Error(format!(
                        "Strict jsonpath mode requires array or object value, and the actual value is: ''{}''",
                        shown(&v)
                    )),
                    _ => Found::Empty,
                }
            }
            other => other,
        };
        match found {
            Found::Value(v) => {
                buf.clear();
                write_query_result(&mut buf, &v);
                b.append_value(&buf);
            }
            Found::Empty => b.append_option(behave(
                on_empty,
                "Empty result of JSON_QUERY function is not allowed".into(),
            )?),
            Found::Error(e) => b.append_option(behave(on_error, e)?),
        }
    }
    Ok(Arc::new(b.finish()))
}

/// JSON_QUERY's result as Flink writes it: every object's keys in Java `String` order (UTF-16
/// code units), at every depth, and numbers in `BigDecimal` text.
fn write_query_result(out: &mut String, v: &Json) {
    match v {
        Json::Object(map) => {
            let mut entries: Vec<(&String, &Json)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(out, k);
                out.push(':');
                write_query_result(out, v);
            }
            out.push('}');
        }
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_query_result(out, item);
            }
            out.push(']');
        }
        Json::Number(n) => out.push_str(&number_text(n)),
        other => out.push_str(&other.to_string()),
    }
}

/// A number of a parsed document as Flink writes it back: an integer as written, any other
/// number as Java's `BigDecimal` of its text (`1e2` → `1E+2`, `1.50` stays, `-0.0` → `0.0`).
fn number_text(n: &serde_json::Number) -> String {
    let text = n.to_string();
    if n.is_i64() || n.is_u64() || !text.contains(['.', 'e', 'E']) {
        return text;
    }
    crate::types::text::big_decimal_text(&text).unwrap_or(text)
}

fn resolve_json_exists(args: &[DataType]) -> Result<Signature, String> {
    if args.len() != 3 {
        return Err("JSON_EXISTS expects (json, path [… ON ERROR])".into());
    }
    expect_text("JSON_EXISTS", args, &[0, 1])?;
    Ok(Signature::new(
        args.iter().map(|a| string_type(a.nullable)).collect(),
        DataType::nullable(TypeKind::Boolean),
    ))
}

/// JSON_EXISTS: whether the path selects a non-null value; ON ERROR (default FALSE) decides
/// for a missing member in strict mode and for a document that does not parse.
fn json_exists(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let (docs, paths) = (strings(&args[0]), strings(&args[1]));
    let on_error = clause(&args[2]);
    let mut cache = PathCache::default();
    let mut b = BooleanBuilder::with_capacity(ctx.num_rows);
    for i in 0..ctx.num_rows {
        if docs.is_null(i) || paths.is_null(i) {
            b.append_null();
            continue;
        }
        match find(docs, paths, i, &mut cache) {
            Found::Value(v) => b.append_value(!v.is_null()),
            Found::Empty => b.append_value(false),
            Found::Error(e) => match on_error {
                "ERROR" => return Err(EvalError::Invalid(e)),
                "TRUE" => b.append_value(true),
                "UNKNOWN" => b.append_null(),
                _ => b.append_value(false),
            },
        }
    }
    Ok(Arc::new(b.finish()))
}

fn resolve_is_json(args: &[DataType]) -> Result<Signature, String> {
    let [value, kind] = args else {
        return Err("IS JSON expects a value".into());
    };
    expect_text("IS JSON", args, &[0])?;
    Ok(Signature::new(
        vec![string_type(value.nullable), kind.clone()],
        DataType::not_null(TypeKind::Boolean),
    ))
}

/// `s IS JSON [VALUE | SCALAR | ARRAY | OBJECT]`: FALSE for NULL.
fn is_json(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let texts = strings(&args[0]);
    let kind = clause(&args[1]).to_string();
    let result: BooleanArray = (0..texts.len())
        .map(|i| {
            Some(
                !texts.is_null(i)
                    && serde_json::from_str::<Json>(texts.value(i)).is_ok_and(|v| {
                        match kind.as_str() {
                            "SCALAR" => !v.is_array() && !v.is_object(),
                            "ARRAY" => v.is_array(),
                            "OBJECT" => v.is_object(),
                            _ => true,
                        }
                    }),
            )
        })
        .collect();
    Ok(Arc::new(result))
}

// ---------------------------------------------------------------------------------------------
// JSON_STRING, JSON_OBJECT, JSON_ARRAY
// ---------------------------------------------------------------------------------------------

/// How the constructors print values: Flink keeps a DECIMAL's scale here (`1.50`) and writes a
/// DOUBLE as a `BigDecimal` (`1.0E+20`); a TIMESTAMP is ISO text with its fraction trimmed
/// (`2024-01-02T03:00:00.5`), a TIMESTAMP_LTZ the UTC instant with `Z`.
fn value_writer() -> JsonWriter {
    JsonWriter {
        encode_decimal_as_plain_number: true,
        encode_double_as_big_decimal: true,
        timestamp_standard: TimestampStandard::Iso8601,
        ..JsonWriter::default()
    }
}

/// An untyped NULL argument becomes a NULL STRING, so kernels see real nulls.
fn typed(t: &DataType) -> DataType {
    if t.kind == TypeKind::Null {
        string_type(true)
    } else {
        t.clone()
    }
}

/// Types the JSON constructors can print (Flink rejects the date-time ones).
fn check_json_type(name: &str, t: &DataType) -> Result<(), String> {
    let bad = |k: &TypeKind| {
        matches!(
            k,
            TypeKind::Date
                | TypeKind::Time(_)
                | TypeKind::IntervalDayTime
                | TypeKind::IntervalYearMonth
        )
    };
    if bad(&t.kind) {
        return Err(format!(
            "{name}: type '{}' is not scalar or cannot be converted into JSON",
            t
        ));
    }
    Ok(())
}

fn resolve_json_string(args: &[DataType]) -> Result<Signature, String> {
    match args {
        [value] => {
            check_json_type("JSON_STRING", value)?;
            Ok(Signature::new(
                vec![typed(value)],
                string_type(value.nullable),
            ))
        }
        // A JSON_OBJECT or JSON_ARRAY call's text, JSON already (see `sql/json.rs`).
        [value, nested] => Ok(Signature::new(
            vec![value.clone(), nested.clone()],
            string_type(value.nullable),
        )),
        _ => Err("JSON_STRING expects one argument".into()),
    }
}

fn json_string(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let value = &args[0];
    if args.len() == 2 {
        return Ok(value.clone());
    }
    let ty = DataType::nullable(TypeKind::from_arrow(value.data_type()));
    let writer = value_writer();
    let mut b = StringBuilder::with_capacity(ctx.num_rows, 0);
    let mut buf = String::new();
    for i in 0..ctx.num_rows {
        if value.is_null(i) {
            b.append_null();
            continue;
        }
        buf.clear();
        writer.write_json_value(&mut buf, value.as_ref(), i, &ty);
        b.append_value(&buf);
    }
    Ok(Arc::new(b.finish()))
}

/// JSON_OBJECT(on_null, key, nested, value, …): keys must be character strings, never NULL.
fn resolve_json_object(args: &[DataType]) -> Result<Signature, String> {
    let (mode, rest) = args.split_first().ok_or("JSON_OBJECT is malformed")?;
    if rest.len() % 3 != 0 {
        return Err("JSON_OBJECT expects KEY … VALUE … pairs".into());
    }
    let mut sig = vec![mode.clone()];
    for triple in rest.chunks(3) {
        let (key, nested, value) = (&triple[0], &triple[1], &triple[2]);
        if !key.kind.is_string() {
            return Err(format!(
                "JSON_OBJECT keys must be character strings, got {}",
                key.kind
            ));
        }
        check_json_type("JSON_OBJECT", value)?;
        sig.extend([string_type(key.nullable), nested.clone(), typed(value)]);
    }
    Ok(Signature::new(sig, string_type(false)))
}

/// JSON_ARRAY(on_null, nested, value, …).
fn resolve_json_array(args: &[DataType]) -> Result<Signature, String> {
    let (mode, rest) = args.split_first().ok_or("JSON_ARRAY is malformed")?;
    if rest.len() % 2 != 0 {
        return Err("JSON_ARRAY is malformed".into());
    }
    let mut sig = vec![mode.clone()];
    for pair in rest.chunks(2) {
        check_json_type("JSON_ARRAY", &pair[1])?;
        sig.extend([pair[0].clone(), typed(&pair[1])]);
    }
    Ok(Signature::new(sig, string_type(false)))
}

/// Appends a constructor's value: a nested JSON_OBJECT/JSON_ARRAY as JSON, anything else
/// printed as a JSON value (strings quoted and escaped).
fn write_member(out: &mut String, value: &ArrayRef, nested: bool, i: usize, writer: &JsonWriter) {
    if nested {
        out.push_str(strings(value).value(i));
    } else {
        let ty = DataType::nullable(TypeKind::from_arrow(value.data_type()));
        writer.write_json_value(out, value.as_ref(), i, &ty);
    }
}

fn flag(a: &ArrayRef) -> bool {
    let b = a.as_boolean();
    !b.is_empty() && b.is_valid(0) && b.value(0)
}

/// JSON_OBJECT: keys in sorted order, the last of a repeated key kept; NULL values written as
/// `null` or left out (ABSENT ON NULL).
fn json_object(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let absent = clause(&args[0]) == "ABSENT";
    let triples: Vec<&[ArrayRef]> = args[1..].chunks(3).collect();
    let writer = value_writer();
    let mut b = StringBuilder::with_capacity(ctx.num_rows, 0);
    let mut members: Vec<(&str, usize)> = Vec::with_capacity(triples.len());
    let mut buf = String::new();
    for i in 0..ctx.num_rows {
        members.clear();
        for (t, triple) in triples.iter().enumerate() {
            let keys = strings(&triple[0]);
            if keys.is_null(i) {
                return Err(EvalError::Invalid(
                    "JSON_OBJECT: a key must not be NULL".into(),
                ));
            }
            if absent && triple[2].is_null(i) {
                continue;
            }
            let key = keys.value(i);
            members.retain(|(k, _)| *k != key);
            members.push((key, t));
        }
        members.sort_by(|a, b| a.0.cmp(b.0));
        buf.clear();
        buf.push('{');
        for (n, (key, t)) in members.iter().enumerate() {
            if n > 0 {
                buf.push(',');
            }
            write_json_string(&mut buf, key);
            buf.push(':');
            let triple = triples[*t];
            write_member(&mut buf, &triple[2], flag(&triple[1]), i, &writer);
        }
        buf.push('}');
        b.append_value(&buf);
    }
    Ok(Arc::new(b.finish()))
}

/// JSON_ARRAY: NULLs left out (the default, ABSENT ON NULL) or written as `null`.
fn json_array(args: &[ArrayRef], ctx: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    let absent = clause(&args[0]) != "NULL";
    let pairs: Vec<&[ArrayRef]> = args[1..].chunks(2).collect();
    let writer = value_writer();
    let mut b = StringBuilder::with_capacity(ctx.num_rows, 0);
    let mut buf = String::new();
    for i in 0..ctx.num_rows {
        buf.clear();
        buf.push('[');
        let mut first = true;
        for pair in &pairs {
            if absent && pair[1].is_null(i) {
                continue;
            }
            if !first {
                buf.push(',');
            }
            first = false;
            write_member(&mut buf, &pair[1], flag(&pair[0]), i, &writer);
        }
        buf.push(']');
        b.append_value(&buf);
    }
    Ok(Arc::new(b.finish()))
}

// ---------------------------------------------------------------------------------------------
// JSON_QUOTE, JSON_UNQUOTE
// ---------------------------------------------------------------------------------------------

fn resolve_text_to_text(args: &[DataType]) -> Result<Signature, String> {
    let [text] = args else {
        return Err("expects one character string".into());
    };
    expect_text("JSON_QUOTE", args, &[0])?;
    Ok(Signature::new(
        vec![string_type(text.nullable)],
        string_type(true),
    ))
}

fn map_text(args: &[ArrayRef], f: impl Fn(&str, &mut String)) -> Result<ArrayRef, EvalError> {
    let texts = strings(&args[0]);
    let mut b = StringBuilder::with_capacity(texts.len(), 0);
    let mut buf = String::new();
    for i in 0..texts.len() {
        if texts.is_null(i) {
            b.append_null();
            continue;
        }
        buf.clear();
        f(texts.value(i), &mut buf);
        b.append_value(&buf);
    }
    Ok(Arc::new(b.finish()))
}

/// JSON_QUOTE: the string as a JSON string literal, as Flink writes it — `"`, `\`, `/` and
/// the control characters escaped, and every non-ASCII character as `\uXXXX`.
fn json_quote(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    map_text(args, |s, out| {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '/' => out.push_str("\\/"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
                c => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
            }
        }
        out.push('"');
    })
}

/// JSON_UNQUOTE: a `"…"` value with its escapes resolved; anything else unchanged.
fn json_unquote(args: &[ArrayRef], _: &EvalContext, _: &DataType) -> Result<ArrayRef, EvalError> {
    map_text(args, |s, out| {
        let inner = s
            .strip_prefix('"')
            .and_then(|rest| rest.strip_suffix('"'))
            .filter(|_| s.len() >= 2);
        let Some(inner) = inner else {
            out.push_str(s);
            return;
        };
        let mut chars = inner.chars().peekable();
        let mut pending_high: Option<u16> = None;
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('b') => out.push('\u{8}'),
                Some('f') => out.push('\u{c}'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    match u16::from_str_radix(&hex, 16) {
                        Ok(unit) if (0xD800..0xDC00).contains(&unit) => pending_high = Some(unit),
                        Ok(unit) => {
                            let decoded = match pending_high.take() {
                                Some(high) => char::decode_utf16([high, unit]).next(),
                                None => char::decode_utf16([unit]).next(),
                            };
                            out.push(
                                decoded
                                    .and_then(Result::ok)
                                    .unwrap_or(char::REPLACEMENT_CHARACTER),
                            );
                        }
                        Err(_) => {
                            out.push_str("\\u");
                            out.push_str(&hex);
                        }
                    }
                }
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(path: &str, doc: &str) -> Result<Option<String>, String> {
        let p = JsonPath::parse(path).ok_or("bad path")?;
        let doc: Json = serde_json::from_str(doc).unwrap();
        p.eval(&doc).map(|v| v.map(|v| v.to_string()))
    }

    #[test]
    fn strict_and_lax_paths() {
        let doc = r#"{"a":{"b":[1,2]},"n":null,"l":[{"x":1},{"x":2}]}"#;
        assert_eq!(eval("$.a.b[1]", doc), Ok(Some("2".into())));
        assert_eq!(eval("$['a']['b'][0]", doc), Ok(Some("1".into())));
        assert_eq!(
            eval("$.zz", doc),
            Err("No results for path: $['zz']".into())
        );
        assert_eq!(eval("lax $.zz", doc), Ok(None));
        assert_eq!(eval("$.a.b[*]", doc), Ok(Some("[1,2]".into())));
        assert_eq!(eval("lax $.l.x", doc), Ok(Some("[1,2]".into())));
        assert_eq!(eval("$.n", doc), Ok(Some("null".into())));
        assert!(JsonPath::parse("bogus").is_none());
    }
}
