//! A view's query as Flink's `SHOW CREATE VIEW` prints it: Calcite's expanded SQL, with every
//! column qualified by its table's alias (`` `t`.`a` ``), `*` spelled out, tables named in
//! full (`` `default_catalog`.`default_database`.`t` AS `t` ``), clauses on their own lines and
//! `VALUES` rows as `ROW(…)`. The expander knows the shapes Tideline binds into a view — one
//! table or `VALUES`, a select list, `WHERE` — and answers `None` for anything else, where the
//! caller keeps the query's own text.

use sqlparser::ast::{
    BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Query, Select,
    SelectItem, SetExpr, TableFactor, UnaryOperator, Value,
};

use super::unparse::type_text;

/// The expanded text of `query`; `columns` gives the column names of a table or view.
pub fn expand_query(
    query: &Query,
    columns: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Option<String> {
    if query.with.is_some()
        || query.order_by.is_some()
        || query.limit_clause.is_some()
        || query.fetch.is_some()
    {
        return None;
    }
    match query.body.as_ref() {
        SetExpr::Select(select) => expand_select(select, columns),
        SetExpr::Values(values) => {
            let rows: Option<Vec<String>> = values
                .rows
                .iter()
                .map(|row| {
                    let cells: Option<Vec<String>> =
                        row.iter().map(|e| expression(e, &Scope::none())).collect();
                    Some(format!("ROW({})", cells?.join(", ")))
                })
                .collect();
            Some(format!("VALUES {}", rows?.join(",\n")))
        }
        _ => None,
    }
}

/// The table a select reads and the columns it has.
struct Scope {
    alias: String,
    columns: Vec<String>,
}

impl Scope {
    fn none() -> Self {
        Scope {
            alias: String::new(),
            columns: Vec::new(),
        }
    }
}

fn quoted(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn expand_select(select: &Select, columns: &dyn Fn(&str) -> Option<Vec<String>>) -> Option<String> {
    if select.distinct.is_some()
        || select.having.is_some()
        || select.qualify.is_some()
        || !matches!(&select.group_by, sqlparser::ast::GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty())
        || select.from.len() > 1
        || select.from.first().is_some_and(|f| !f.joins.is_empty())
    {
        return None;
    }
    if select.from.is_empty() {
        // `SELECT 1 AS x`: no table, nothing to qualify.
        let items: Option<Vec<String>> = select
            .projection
            .iter()
            .map(|item| match item {
                SelectItem::UnnamedExpr(e) => expression(e, &Scope::none()),
                SelectItem::ExprWithAlias { expr, alias } => Some(format!(
                    "{} AS {}",
                    expression(expr, &Scope::none())?,
                    quoted(&alias.value)
                )),
                _ => None,
            })
            .collect();
        return Some(format!("SELECT {}", items?.join(", ")));
    }
    let TableFactor::Table { name, alias, .. } = &select.from[0].relation else {
        return None;
    };
    let table = super::parser::session_object_name(name).ok()?;
    if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
        return None;
    }
    let scope = Scope {
        alias: alias
            .as_ref()
            .map_or_else(|| table.clone(), |a| a.name.value.clone()),
        columns: columns(&table)?,
    };
    let mut items = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::UnnamedExpr(e) => items.push(expression(e, &scope)?),
            SelectItem::ExprWithAlias { expr, alias } => items.push(format!(
                "{} AS {}",
                expression(expr, &scope)?,
                quoted(&alias.value)
            )),
            SelectItem::Wildcard(_) => {
                for c in &scope.columns {
                    items.push(format!("{}.{}", quoted(&scope.alias), quoted(c)));
                }
            }
            _ => return None,
        }
    }
    let mut out = format!(
        "SELECT {}\nFROM `default_catalog`.`default_database`.{} AS {}",
        items.join(", "),
        quoted(&table),
        quoted(&scope.alias)
    );
    if let Some(selection) = &select.selection {
        out.push_str("\nWHERE ");
        out.push_str(&expression(selection, &scope)?);
    }
    Some(out)
}

fn expression(expr: &Expr, scope: &Scope) -> Option<String> {
    Some(match expr {
        Expr::Identifier(ident) if scope.columns.contains(&ident.value) => {
            format!("{}.{}", quoted(&scope.alias), quoted(&ident.value))
        }
        Expr::Identifier(ident) => quoted(&ident.value),
        Expr::CompoundIdentifier(parts) => parts
            .iter()
            .map(|p| quoted(&p.value))
            .collect::<Vec<_>>()
            .join("."),
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => format!("'{}'", s.replace('\'', "''")),
            Value::Boolean(b) => if *b { "TRUE" } else { "FALSE" }.to_string(),
            Value::Null => "NULL".to_string(),
            Value::Number(n, _) => n.clone(),
            _ => return None,
        },
        Expr::BinaryOp { left, op, right } => {
            let op = match op {
                BinaryOperator::Plus => "+",
                BinaryOperator::Minus => "-",
                BinaryOperator::Multiply => "*",
                BinaryOperator::Divide => "/",
                BinaryOperator::Modulo => "%",
                BinaryOperator::Eq => "=",
                BinaryOperator::NotEq => "<>",
                BinaryOperator::Lt => "<",
                BinaryOperator::LtEq => "<=",
                BinaryOperator::Gt => ">",
                BinaryOperator::GtEq => ">=",
                BinaryOperator::And => "AND",
                BinaryOperator::Or => "OR",
                BinaryOperator::StringConcat => "||",
                _ => return None,
            };
            format!(
                "{} {op} {}",
                expression(left, scope)?,
                expression(right, scope)?
            )
        }
        Expr::UnaryOp { op, expr } => match op {
            UnaryOperator::Not => format!("NOT {}", expression(expr, scope)?),
            UnaryOperator::Minus => format!("- {}", expression(expr, scope)?),
            _ => return None,
        },
        // Calcite writes the parentheses an operator needs, not the ones around a lone term.
        Expr::Nested(inner)
            if matches!(
                inner.as_ref(),
                Expr::Identifier(_)
                    | Expr::CompoundIdentifier(_)
                    | Expr::Value(_)
                    | Expr::Function(_)
            ) =>
        {
            expression(inner, scope)?
        }
        Expr::Nested(inner) => format!("({})", expression(inner, scope)?),
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => format!(
            "{} {}BETWEEN ASYMMETRIC {} AND {}",
            expression(expr, scope)?,
            if *negated { "NOT " } else { "" },
            expression(low, scope)?,
            expression(high, scope)?
        ),
        Expr::IsNull(e) => format!("{} IS NULL", expression(e, scope)?),
        Expr::IsNotNull(e) => format!("{} IS NOT NULL", expression(e, scope)?),
        Expr::Like {
            negated,
            expr,
            pattern,
            escape_char: None,
            any: false,
        } => format!(
            "{} {}LIKE {}",
            expression(expr, scope)?,
            if *negated { "NOT " } else { "" },
            expression(pattern, scope)?
        ),
        Expr::In {
            expr,
            target: sqlparser::ast::InTarget::List(list),
            negated,
            global: false,
        } => {
            let items: Option<Vec<String>> = list.iter().map(|e| expression(e, scope)).collect();
            format!(
                "{} {}IN ({})",
                expression(expr, scope)?,
                if *negated { "NOT " } else { "" },
                items?.join(", ")
            )
        }
        Expr::Cast {
            kind: sqlparser::ast::CastKind::Cast,
            expr,
            data_type,
            ..
        } => format!(
            "CAST({} AS {})",
            expression(expr, scope)?,
            type_text(data_type)
        ),
        Expr::Case {
            operand: None,
            conditions,
            else_result,
            ..
        } => {
            let mut out = String::from("CASE");
            for when in conditions {
                out.push_str(&format!(
                    " WHEN {} THEN {}",
                    expression(&when.condition, scope)?,
                    expression(&when.result, scope)?
                ));
            }
            if let Some(e) = else_result {
                out.push_str(&format!(" ELSE {}", expression(e, scope)?));
            }
            out.push_str(" END");
            out
        }
        Expr::Function(f) if f.over.is_none() && f.filter.is_none() => {
            let name = f.name.to_string().to_uppercase();
            let FunctionArguments::List(list) = &f.args else {
                return None;
            };
            if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
                return None;
            }
            let args: Option<Vec<String>> = list
                .args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => expression(e, scope),
                    _ => None,
                })
                .collect();
            format!("{name}({})", args?.join(", "))
        }
        _ => return None,
    })
}
