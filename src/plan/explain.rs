//! The text of plans as Flink's EXPLAIN prints them: trees drawn with `+-` and `:-`, and
//! expressions in Calcite's three spellings.
//!
//! The abstract syntax tree names input columns by position (`$0`), the optimized physical
//! plan by name with Calcite's prefix calls (`>(id, 1)`), the optimized execution plan by
//! name with infix operators (`(id > 1)`) and plain string literals.

use std::fmt::Write;

use super::expr::ScalarExpr;
use crate::types::value::Value;
use crate::types::{DataType, MAX_LENGTH, TypeKind};

/// Which of EXPLAIN's sections an expression is printed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    Ast,
    Physical,
    Execution,
}

/// An expression over an input whose columns are `names` ([`Spelling::Ast`] writes `$i` for
/// column `i` unless `names` is given, where a column stands for an expression of the node
/// below, as an aggregate's window properties do).
pub fn expr_text(expr: &ScalarExpr, names: &[String], spelling: Spelling) -> String {
    let mut out = String::new();
    stacker::maybe_grow(
        crate::plan::expr::STACK_RED_ZONE,
        crate::plan::expr::STACK_SEGMENT,
        || write_expr(&mut out, expr, names, spelling),
    );
    out
}

/// Operators Flink's execution plan writes between their operands.
fn infix(name: &str) -> bool {
    matches!(
        name,
        "=" | "<>" | "<" | "<=" | ">" | ">=" | "+" | "-" | "*" | "/" | "AND" | "OR"
    )
}

/// A DECIMAL literal's unscaled value at the scale of the DECIMAL `data_type` it is cast
/// to, when that scale is no smaller and the value fits.
fn decimal_literal_as(expr: &ScalarExpr, data_type: &DataType) -> Option<i128> {
    let (
        ScalarExpr::Literal {
            value: Value::Decimal(unscaled),
            data_type:
                DataType {
                    kind: TypeKind::Decimal { scale: from, .. },
                    ..
                },
        },
        TypeKind::Decimal { scale: to, .. },
    ) = (expr, &data_type.kind)
    else {
        return None;
    };
    let up = u32::from(to.checked_sub(*from)?);
    unscaled.checked_mul(10i128.checked_pow(up)?)
}

fn write_expr(out: &mut String, expr: &ScalarExpr, names: &[String], spelling: Spelling) {
    match expr {
        ScalarExpr::Column { index, .. } => match spelling {
            Spelling::Ast if names.is_empty() => {
                let _ = write!(out, "${index}");
            }
            _ => out.push_str(names.get(*index).map_or("?", String::as_str)),
        },
        ScalarExpr::Literal { value, data_type } => write_literal(out, value, data_type, spelling),
        ScalarExpr::Call { function, args, .. } => {
            let name = function.name;
            // Calcite keeps AND and OR flat: `AND(a, b, c)`, not `AND(AND(a, b), c)`.
            let flat;
            let args = if matches!(name, "AND" | "OR") {
                flat = flatten(name, args);
                &flat
            } else {
                args
            };
            // The optimizer's simplification types an integer literal compared for equality
            // as the other operand (`=(price, 3:BIGINT)`); the syntax tree keeps `3`, and
            // the execution plan writes literals without types.
            if spelling == Spelling::Physical
                && matches!(name, "=" | "<>")
                && let [a, b] = &args[..]
                && (widened_literal(a).is_some() || widened_literal(b).is_some())
            {
                let _ = write!(out, "{name}(");
                for (i, arg) in [a, b].into_iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    match widened_literal(arg) {
                        Some((value, data_type)) => write_literal(out, value, data_type, spelling),
                        None => write_expr(out, arg, names, spelling),
                    }
                }
                out.push(')');
                return;
            }
            if spelling == Spelling::Execution && infix(name) && args.len() >= 2 {
                out.push('(');
                write_list(out, args, &format!(" {name} "), names, spelling);
                out.push(')');
                return;
            }
            if spelling == Spelling::Execution
                && matches!(name, "IS NULL" | "IS NOT NULL" | "IS TRUE" | "IS FALSE")
                && args.len() == 1
            {
                write_expr(out, &args[0], names, spelling);
                let _ = write!(out, " {name}");
                return;
            }
            // The JSON constructors' ON NULL clause is Calcite's flag; the arguments that
            // mark nested constructors are the parser's own (`sql/json.rs`).
            if matches!(name, "JSON_OBJECT" | "JSON_ARRAY")
                && let Some((
                    ScalarExpr::Literal {
                        value: Value::String(mode),
                        ..
                    },
                    rest,
                )) = args.split_first()
            {
                let flag = format!("{mode}_ON_NULL");
                let _ = write!(out, "{name}(");
                if spelling == Spelling::Execution {
                    out.push_str(&flag);
                } else {
                    let _ = write!(out, "FLAG({flag})");
                }
                let stride = if name == "JSON_OBJECT" { 3 } else { 2 };
                for member in rest.chunks(stride) {
                    for (i, arg) in member.iter().enumerate() {
                        // JSON_OBJECT: key, nested, value; JSON_ARRAY: nested, value.
                        if (stride == 3 && i == 1) || (stride == 2 && i == 0) {
                            continue;
                        }
                        out.push_str(", ");
                        write_expr(out, arg, names, spelling);
                    }
                }
                out.push(')');
                return;
            }
            // JSON_STRING's second argument only marks a JSON constructor's text.
            let args = match (name, &args[..]) {
                ("JSON_STRING", [value, _]) => std::slice::from_ref(value),
                _ => args,
            };
            let _ = write!(out, "{name}(");
            write_list(out, args, ", ", names, spelling);
            out.push(')');
        }
        // Calcite folds a literal cast within its family (a string to a string type, a
        // timestamp to another precision) into the literal.
        ScalarExpr::Cast {
            expr, data_type, ..
        } if match expr.as_ref() {
            ScalarExpr::Literal {
                value: Value::String(_),
                ..
            } => matches!(data_type.kind, TypeKind::Char(_) | TypeKind::VarChar(_)),
            ScalarExpr::Literal {
                value: Value::Timestamp(_),
                ..
            } => matches!(data_type.kind, TypeKind::Timestamp(_)),
            // An integer literal widened to its operand's type (`COUNT(*) > 1`): Calcite
            // compares and computes across numeric types without a cast.
            ScalarExpr::Literal {
                value: Value::Int(_),
                data_type: from,
            } => {
                from.kind.is_integer()
                    && (data_type.kind.is_integer()
                        || matches!(
                            data_type.kind,
                            TypeKind::Float | TypeKind::Double | TypeKind::Decimal { .. }
                        ))
            }
            _ => false,
        } =>
        {
            write_expr(out, expr, names, spelling)
        }
        // A DECIMAL literal cast to a DECIMAL of no smaller scale: Calcite's literal of the
        // target type (`1.5:DECIMAL(11, 1)` where `=` compares it with a DECIMAL(11, 1)).
        ScalarExpr::Cast {
            expr,
            data_type,
            try_cast: false,
            implicit: false,
        } if decimal_literal_as(expr, data_type).is_some() => {
            let rescaled = decimal_literal_as(expr, data_type).expect("checked by the guard");
            // The abstract syntax tree leaves out the type its operand implies.
            let spelling = match spelling {
                Spelling::Ast => Spelling::Execution,
                other => other,
            };
            write_literal(out, &Value::Decimal(rescaled), data_type, spelling);
        }
        // A cast NULL is Calcite's NULL of the cast's type (`null:INTEGER`).
        ScalarExpr::Cast {
            expr, data_type, ..
        } if matches!(
            expr.as_ref(),
            ScalarExpr::Literal {
                value: Value::Null,
                ..
            }
        ) =>
        {
            write_literal(out, &Value::Null, data_type, spelling)
        }
        // A widening the binder inserted where Calcite needs none: the operand alone.
        ScalarExpr::Cast {
            expr,
            implicit: true,
            ..
        } => write_expr(out, expr, names, spelling),
        ScalarExpr::Cast {
            expr,
            data_type,
            try_cast,
            ..
        } => {
            let name = if *try_cast { "TRY_CAST" } else { "CAST" };
            let _ = write!(out, "{name}(");
            // A DECIMAL literal cast to another type is written without its own type.
            match expr.as_ref() {
                ScalarExpr::Literal {
                    value: value @ Value::Decimal(_),
                    data_type,
                } => write_literal(out, value, data_type, Spelling::Execution),
                _ => write_expr(out, expr, names, spelling),
            }
            match spelling {
                Spelling::Ast => {
                    let _ = write!(out, "):{}", calcite_type(data_type));
                }
                _ => {
                    let _ = write!(out, " AS {})", calcite_type_name(&data_type.kind));
                }
            }
        }
        ScalarExpr::Field { expr, name, .. } => {
            write_expr(out, expr, names, spelling);
            let _ = write!(out, ".{name}");
        }
        ScalarExpr::InList { expr, list, .. } => {
            out.push_str("SEARCH(");
            write_expr(out, expr, names, spelling);
            out.push_str(", Sarg[");
            write_list(out, list, ", ", names, spelling);
            out.push_str("])");
        }
        // IF(c, r, e) as the query wrote it.
        ScalarExpr::Case {
            branches,
            otherwise: Some(otherwise),
            written_as_if: true,
            ..
        } if branches.len() == 1 => {
            out.push_str("IF(");
            let (condition, then) = &branches[0];
            write_list(out, [condition, then, &**otherwise], ", ", names, spelling);
            out.push(')');
        }
        ScalarExpr::Case {
            branches,
            otherwise,
            data_type,
            ..
        } => {
            out.push_str("CASE(");
            for (c, r) in branches {
                write_expr(out, c, names, spelling);
                out.push_str(", ");
                write_expr(out, r, names, spelling);
                out.push_str(", ");
            }
            match otherwise {
                Some(e) => write_expr(out, e, names, spelling),
                // No ELSE: Calcite's NULL of the CASE's type.
                None => write_literal(out, &Value::Null, data_type, spelling),
            }
            out.push(')');
        }
    }
}

/// An integer literal the binder cast to a numeric operand's type, and that type.
fn widened_literal(e: &ScalarExpr) -> Option<(&Value, &DataType)> {
    let ScalarExpr::Cast {
        expr,
        data_type,
        implicit: false,
        ..
    } = e
    else {
        return None;
    };
    match expr.as_ref() {
        ScalarExpr::Literal {
            value: value @ Value::Int(_),
            data_type: from,
        } if from.kind.is_integer()
            && from.kind != data_type.kind
            && (data_type.kind.is_integer()
                || matches!(data_type.kind, TypeKind::Float | TypeKind::Double)) =>
        {
            Some((value, data_type))
        }
        _ => None,
    }
}

/// Expressions one after another, `separator` between them.
fn write_list<'e>(
    out: &mut String,
    exprs: impl IntoIterator<Item = &'e ScalarExpr>,
    separator: &str,
    names: &[String],
    spelling: Spelling,
) {
    for (i, e) in exprs.into_iter().enumerate() {
        if i > 0 {
            out.push_str(separator);
        }
        write_expr(out, e, names, spelling);
    }
}

/// The operands of nested calls of the same AND or OR, in order.
fn flatten<'a>(name: &str, args: &'a [ScalarExpr]) -> Vec<ScalarExpr> {
    let mut flat = Vec::new();
    let mut stack: Vec<&'a ScalarExpr> = args.iter().rev().collect();
    while let Some(e) = stack.pop() {
        match e {
            ScalarExpr::Call { function, args, .. } if function.name == name => {
                stack.extend(args.iter().rev());
            }
            other => flat.push(other.clone()),
        }
    }
    flat
}

fn write_literal(out: &mut String, value: &Value, data_type: &DataType, spelling: Spelling) {
    let kind = &data_type.kind;
    match value {
        Value::Null => {
            let _ = write!(out, "null:{}", calcite_type_name(kind));
        }
        Value::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => match kind {
            // The execution plan writes an integer literal without its type (also one typed
            // as a FLOAT or DOUBLE operand's).
            _ if *kind == TypeKind::Int || spelling == Spelling::Execution => {
                let _ = write!(out, "{i}");
            }
            other => {
                let _ = write!(out, "{i}:{}", calcite_type_name(other));
            }
        },
        Value::String(s) => {
            let quoted = s.replace('\'', "''");
            match spelling {
                Spelling::Execution => {
                    let _ = write!(out, "'{quoted}'");
                }
                _ => {
                    let _ = write!(out, "_UTF-16LE'{quoted}'");
                }
            }
        }
        Value::IntervalMillis(ms, qualifier) => {
            let _ = write!(out, "{ms}:{}", qualifier.sql());
        }
        Value::IntervalMonths(m, qualifier) => {
            let _ = write!(out, "{m}:{}", qualifier.sql());
        }
        Value::Decimal(unscaled) => {
            let scale = match kind {
                TypeKind::Decimal { scale, .. } => *scale,
                _ => 0,
            };
            crate::types::text::write_decimal(out, *unscaled, scale);
            // Calcite's digest types a DECIMAL literal (`1.1:DECIMAL(2, 1)`); the execution
            // plan does not.
            if spelling != Spelling::Execution {
                let _ = write!(out, ":{}", calcite_type_name(kind));
            }
        }
        Value::Timestamp(nanos) if matches!(kind, TypeKind::Timestamp(_)) => {
            let precision = match kind {
                TypeKind::Timestamp(p) => *p,
                _ => 0,
            };
            crate::types::time::write_timestamp(out, *nanos, precision);
        }
        Value::Date(days) => crate::types::time::write_date(out, i64::from(*days)),
        Value::Float(v) => {
            crate::types::text::write_java_double(out, *v);
            let _ = write!(out, ":{}", calcite_type_name(kind));
        }
        other => {
            let _ = write!(out, "{other:?}:{}", calcite_type_name(kind));
        }
    }
}

/// A type as Calcite prints it after a cast in the abstract syntax tree (`INTEGER`,
/// `VARCHAR(2147483647) CHARACTER SET "UTF-16LE"`, `INTEGER NOT NULL`).
fn calcite_type(data_type: &DataType) -> String {
    let mut text = calcite_type_name(&data_type.kind);
    if matches!(data_type.kind, TypeKind::Char(_) | TypeKind::VarChar(_)) {
        text.push_str(" CHARACTER SET \"UTF-16LE\"");
    }
    if !data_type.nullable {
        text.push_str(" NOT NULL");
    }
    text
}

/// A row type as Calcite writes it whole (`RecordType(INTEGER id, VARCHAR(2147483647)
/// ARRAY tags, (VARCHAR(2147483647), INTEGER) MAP m, RecordType:peek_no_expand(INTEGER a)
/// ARRAY rs, INTEGER NOT NULL ORDINALITY)`).
pub fn calcite_row_type(schema: &crate::types::Schema) -> String {
    let fields: Vec<String> = schema
        .fields
        .iter()
        .map(|f| format!("{} {}", calcite_full_type(&f.data_type), f.name))
        .collect();
    format!("RecordType({})", fields.join(", "))
}

/// A type with its nested types and nullability, as Calcite's `getFullTypeString`.
fn calcite_full_type(data_type: &DataType) -> String {
    let mut text = match &data_type.kind {
        TypeKind::Array(element) => format!("{} ARRAY", calcite_full_type(element)),
        TypeKind::Map(key, value) => format!(
            "({}, {}) MAP",
            calcite_full_type(key),
            calcite_full_type(value)
        ),
        TypeKind::Row(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(name, t)| format!("{} {name}", calcite_full_type(t)))
                .collect();
            format!("RecordType:peek_no_expand({})", fields.join(", "))
        }
        other => calcite_type_name(other),
    };
    if !data_type.nullable {
        text.push_str(" NOT NULL");
    }
    text
}

/// Calcite's name of a type (`INTEGER`, `TIMESTAMP_WITH_LOCAL_TIME_ZONE(3)`).
/// An argument's type as Calcite's "No match found for function signature" names it: a
/// scalar type's family (`<NUMERIC>`, `<CHARACTER>`, …), a composite type's text without
/// nullability (`<INTEGER ARRAY>`, `<(CHAR(1), INTEGER) MAP>`).
pub fn calcite_signature_type(data_type: &DataType) -> String {
    fn text(kind: &TypeKind) -> String {
        match kind {
            TypeKind::Array(element) => format!("{} ARRAY", text(&element.kind)),
            TypeKind::Map(key, value) => {
                format!("({}, {}) MAP", text(&key.kind), text(&value.kind))
            }
            TypeKind::Row(fields) => {
                let fields: Vec<String> = fields
                    .iter()
                    .map(|(name, t)| format!("{} {name}", text(&t.kind)))
                    .collect();
                format!("RecordType:peek_no_expand({})", fields.join(", "))
            }
            other => calcite_type_name(other),
        }
    }
    match &data_type.kind {
        k if k.is_numeric() => "NUMERIC".into(),
        TypeKind::Char(_) | TypeKind::VarChar(_) => "CHARACTER".into(),
        TypeKind::Binary(_) | TypeKind::VarBinary(_) => "BINARY".into(),
        TypeKind::Boolean => "BOOLEAN".into(),
        TypeKind::Date => "DATE".into(),
        TypeKind::Time(_) => "TIME".into(),
        TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_) => "TIMESTAMP".into(),
        TypeKind::IntervalDayTime => "INTERVAL_DAY_TIME".into(),
        TypeKind::IntervalYearMonth => "INTERVAL_YEAR_MONTH".into(),
        TypeKind::Null => "NULL".into(),
        other => text(other),
    }
}

pub fn calcite_type_name(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Int => "INTEGER".into(),
        TypeKind::VarChar(n) if *n == MAX_LENGTH => format!("VARCHAR({MAX_LENGTH})"),
        TypeKind::VarBinary(n) if *n == MAX_LENGTH => format!("VARBINARY({MAX_LENGTH})"),
        TypeKind::TimestampLtz(p) => format!("TIMESTAMP_WITH_LOCAL_TIME_ZONE({p})"),
        TypeKind::IntervalDayTime => "INTERVAL SECOND".into(),
        other => other.to_string(),
    }
}

/// Draws a tree as Flink does: each child under its parent, `:- ` before every child but the
/// last, `+- ` before the last, and `:  ` / `   ` continuing the lines of the levels above.
pub struct TreeWriter {
    out: String,
}

impl TreeWriter {
    pub fn new() -> Self {
        TreeWriter { out: String::new() }
    }

    /// Writes `line` at the depth `prefix` describes: one flag per level above, true where
    /// that level's node was the last child.
    pub fn line(&mut self, prefix: &[bool], line: &str) {
        if let Some((last, above)) = prefix.split_last() {
            for &was_last in above {
                self.out.push_str(if was_last { "   " } else { ":  " });
            }
            self.out.push_str(if *last { "+- " } else { ":- " });
        }
        self.out.push_str(line);
        self.out.push('\n');
    }

    pub fn finish(self) -> String {
        self.out
    }
}

impl Default for TreeWriter {
    fn default() -> Self {
        Self::new()
    }
}
