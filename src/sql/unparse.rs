//! Writing expressions back as Flink prints them in `DESC` and `SHOW CREATE TABLE`: identifiers
//! in backticks, function names in backticks unless they take no arguments, interval units
//! singular (`INTERVAL '5' SECOND`).

use sqlparser::ast::{
    BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Interval, UnaryOperator,
    Value,
};

pub fn unparse(expr: &Expr) -> String {
    let mut out = String::new();
    write_expr(&mut out, expr);
    out
}

fn quoted(out: &mut String, name: &str) {
    out.push('`');
    out.push_str(&name.replace('`', "``"));
    out.push('`');
}

fn write_expr(out: &mut String, expr: &Expr) {
    match expr {
        Expr::Identifier(ident) => quoted(out, &ident.value),
        Expr::CompoundIdentifier(parts) => {
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    out.push('.');
                }
                quoted(out, &p.value);
            }
        }
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => {
                out.push('\'');
                out.push_str(&s.replace('\'', "''"));
                out.push('\'');
            }
            Value::Boolean(b) => out.push_str(if *b { "TRUE" } else { "FALSE" }),
            Value::Null => out.push_str("NULL"),
            other => out.push_str(&other.to_string()),
        },
        Expr::BinaryOp { left, op, right } => {
            write_expr(out, left);
            out.push(' ');
            out.push_str(&binary_operator(op));
            out.push(' ');
            write_expr(out, right);
        }
        Expr::UnaryOp { op, expr } => {
            match op {
                UnaryOperator::Not => out.push_str("NOT "),
                UnaryOperator::Minus => out.push('-'),
                UnaryOperator::Plus => out.push('+'),
                other => out.push_str(&other.to_string()),
            }
            write_expr(out, expr);
        }
        Expr::Nested(inner) => {
            out.push('(');
            write_expr(out, inner);
            out.push(')');
        }
        Expr::Interval(Interval {
            value,
            leading_field,
            last_field,
            ..
        }) => {
            out.push_str("INTERVAL ");
            write_expr(out, value);
            if let Some(field) = leading_field {
                out.push(' ');
                out.push_str(singular(&field.to_string()));
            }
            if let Some(field) = last_field {
                out.push_str(" TO ");
                out.push_str(singular(&field.to_string()));
            }
        }
        Expr::Cast {
            expr, data_type, ..
        } => {
            out.push_str("CAST(");
            write_expr(out, expr);
            out.push_str(" AS ");
            out.push_str(&type_text(data_type));
            out.push(')');
        }
        Expr::Function(f) => {
            let name = f.name.to_string();
            match &f.args {
                FunctionArguments::List(list) if !list.args.is_empty() => {
                    quoted(out, &name.to_uppercase());
                    out.push('(');
                    for (i, arg) in list.args.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        match arg {
                            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => write_expr(out, e),
                            other => out.push_str(&other.to_string()),
                        }
                    }
                    out.push(')');
                }
                FunctionArguments::None => out.push_str(&name.to_uppercase()),
                _ => {
                    out.push_str(&name.to_uppercase());
                    out.push_str("()");
                }
            }
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The text of a data type as written by our dialect (custom Flink types carry it verbatim).
pub fn type_text(data_type: &sqlparser::ast::DataType) -> String {
    match data_type {
        sqlparser::ast::DataType::Custom(name, modifiers)
            if name.to_string() == super::dialect::FLINK_TYPE && !modifiers.is_empty() =>
        {
            modifiers[0].to_string().trim_matches('\'').to_string()
        }
        other => other.to_string(),
    }
}

/// The interval qualifier an interval type was written with (`CAST(x AS INTERVAL DAY)`).
pub fn interval_qualifier(
    data_type: &sqlparser::ast::DataType,
) -> Option<super::interval::IntervalQualifier> {
    match data_type {
        sqlparser::ast::DataType::Custom(name, modifiers)
            if name.to_string() == super::dialect::FLINK_TYPE && modifiers.len() == 2 =>
        {
            let text = modifiers[1].to_string();
            let dialect = super::dialect::FlinkDialect;
            let mut parser = sqlparser::parser::Parser::new(&dialect)
                .try_with_sql(text.trim_matches('\''))
                .ok()?;
            super::types::parse_cast_type(&mut parser).ok()?.1
        }
        _ => None,
    }
}

fn binary_operator(op: &BinaryOperator) -> String {
    match op {
        BinaryOperator::StringConcat => "||".to_string(),
        other => other.to_string(),
    }
}

fn singular(unit: &str) -> &str {
    match unit {
        "YEARS" => "YEAR",
        "MONTHS" => "MONTH",
        "DAYS" => "DAY",
        "HOURS" => "HOUR",
        "MINUTES" => "MINUTE",
        "SECONDS" => "SECOND",
        other => other,
    }
}
