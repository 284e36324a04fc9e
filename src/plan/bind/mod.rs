//! The binder: resolves names against the catalog and types against Flink's rules, turning
//! `sqlparser` queries into [`LogicalPlan`]s and `CREATE TABLE` into [`TableDef`]s.
//!
//! Flink syntax that parses but that Tideline cannot run yet (windowing TVFs, joins, OVER)
//! is rejected here by name, with the position of the construct. GROUP BY binds into a
//! [`LogicalAggregate`] (Flink's legacy group windows `TUMBLE`, `HOP`, `SESSION`, or none)
//! between a Calc below computing keys and arguments and a Calc above for the SELECT list
//! and HAVING, as Calcite converts it.

use std::collections::HashMap;

use sqlparser::ast::{self, Expr};
use sqlparser::tokenizer::Span;

use super::aggregate::{AggregateCall, GroupWindow, WindowProperty};
use super::expr::ScalarExpr;
use super::logical::*;
use crate::catalog::Catalog;
use crate::sql::SqlError;
use crate::sql::ast::TableHint;
use crate::types::value::Value;
use crate::types::{DataType, Field, Schema, TypeKind};

mod aggregate;
mod ddl;
mod expr;
mod from;
mod insert;
mod join;
mod literal;
mod over;
mod query;
mod scalar_subquery;
mod select;
mod unnest;
mod window_tvf;
use aggregate::*;
pub use expr::MAX_EXPR_DEPTH;
use from::*;
use join::*;
use literal::*;
pub use query::output_names;
pub use query::repeated_name;
use query::*;

fn error(span: Span, message: impl Into<String>) -> SqlError {
    SqlError::new(message, span.start.line, span.start.column)
}

/// A column visible to expressions: its qualifier (table name or alias) and field.
#[derive(Debug, Clone)]
struct ScopeColumn {
    qualifier: Option<String>,
    field: Field,
}

pub struct Binder<'a> {
    catalog: &'a Catalog,
    hints: &'a [TableHint],
    ctes: HashMap<String, LogicalPlan>,
    /// The views being expanded, outermost first, each with where it is named (only the
    /// first position is in the statement, the others are in view texts). A view met again
    /// is a cycle: temporary views shadow permanent ones, so a view can come to read itself.
    expanding: Vec<(String, Span)>,
    /// How deep `bind_expr` is in the expression being bound.
    nesting: usize,
    /// The aggregation the SELECT list and HAVING being bound feed.
    aggregation: Option<Aggregation>,
    /// The clause being bound where aggregates are illegal (`WHERE`, `GROUP BY`).
    no_aggregates_in: Option<&'static str>,
    /// The ranking call of the SELECT list being bound (where it is written) and the column
    /// of the Over node below that holds its value.
    over_column: Option<(Span, usize)>,
    /// The OVER aggregate calls of the SELECT list being bound.
    over_aggregation: Option<over::OverAggregation>,
    /// The STATE_TTL hint of the SELECT being bound: each name with its TTL, and whether an
    /// input of a join or the aggregate took it.
    state_ttl: Vec<(String, TtlHint, bool)>,
    /// Calcite's correlation ids (an UNNEST's `$cor0`): the session's counter, as Flink's
    /// planner draws them for the session's life, else this binder's own.
    correlations: Option<&'a std::cell::Cell<u32>>,
    own_correlations: u32,
    /// The scalar subqueries of the SELECT whose WHERE or SELECT list is binding.
    scalar_subqueries: Option<scalar_subquery::ScalarSubqueries>,
}

/// Column indices that stand, in expressions bound over a GROUP BY's input, for the
/// aggregate calls and window properties they read, until they are placed on the
/// aggregate's output ([`Binder::place`]).
const AGGREGATE_MARK: usize = usize::MAX / 4;

const PROPERTY_MARK: usize = usize::MAX / 2;

/// A GROUP BY while its SELECT list and HAVING are bound: the Calc below the aggregate and
/// the calls met so far.
struct Aggregation {
    /// The Calc below: GROUP BY items in order (the window's is its time column), then
    /// the arguments and filters of the calls.
    below: Vec<ScalarExpr>,
    below_names: Vec<String>,
    /// The GROUP BY items other than the window, positions in `below`.
    keys: Vec<usize>,
    window: Option<BoundWindow>,
    calls: Vec<AggregateCall>,
    /// The aggregate call whose arguments are being bound.
    inside: Option<Span>,
    properties_used: bool,
    /// Input columns read outside aggregate calls, with where: the place of an error.
    column_spans: Vec<(usize, Span)>,
    /// The names of the input columns, for errors.
    input_names: Vec<String>,
    /// GROUPING SETS, ROLLUP, CUBE: each grouping set's slots, in Calcite's order (empty
    /// for a plain GROUP BY).
    sets: Vec<Vec<usize>>,
}

impl Aggregation {
    /// The mark of `call`'s result: one call computes each distinct aggregate, however
    /// often it is written.
    fn add_call(&mut self, call: AggregateCall) -> ScalarExpr {
        let j = match self.calls.iter().position(|c| {
            c.function == call.function
                && c.args == call.args
                && c.distinct == call.distinct
                && c.filter == call.filter
        }) {
            Some(j) => j,
            None => {
                self.calls.push(call);
                self.calls.len() - 1
            }
        };
        ScalarExpr::Column {
            index: AGGREGATE_MARK + j,
            data_type: self.calls[j].data_type.clone(),
        }
    }
}

/// The order of [`PROPERTY_MARK`]s.
const PROPERTIES: [WindowProperty; 4] = [
    WindowProperty::Start,
    WindowProperty::End,
    WindowProperty::Rowtime,
    WindowProperty::Proctime,
];

/// `TUMBLE(ts, …)`, `HOP`, `SESSION` in GROUP BY.
struct BoundWindow {
    function: &'static str,
    window: GroupWindow,
    position: usize,
    /// The interval arguments as EXPLAIN's AST writes them.
    intervals: Vec<String>,
    /// The bound arguments, to match a window property's against.
    arguments: String,
}

impl Aggregation {
    /// The position in the Calc below of `expr`, added unless it is there.
    fn below_slot(&mut self, expr: ScalarExpr, name: Option<String>) -> usize {
        // The window's item is its time column only as far as the aggregate reads it; for
        // Calcite it is the window call, equal to no other item.
        let window = self.window.as_ref().map(|w| w.position);
        let key = format!("{expr:?}");
        if let Some(i) = (0..self.below.len())
            .find(|&i| Some(i) != window && format!("{:?}", self.below[i]) == key)
        {
            return i;
        }
        let i = self.below.len();
        self.below_names
            .push(name.unwrap_or_else(|| format!("$f{i}")));
        self.below.push(expr);
        i
    }
}

impl<'a> Binder<'a> {
    pub fn new(catalog: &'a Catalog, hints: &'a [TableHint]) -> Self {
        Binder {
            catalog,
            hints,
            ctes: HashMap::new(),
            expanding: Vec::new(),
            nesting: 0,
            aggregation: None,
            no_aggregates_in: None,
            over_column: None,
            over_aggregation: None,
            state_ttl: Vec::new(),
            correlations: None,
            own_correlations: 0,
            scalar_subqueries: None,
        }
    }

    /// Draws correlation ids from `counter` (the session's).
    pub fn with_correlations(mut self, counter: &'a std::cell::Cell<u32>) -> Self {
        self.correlations = Some(counter);
        self
    }

    fn next_correlation(&mut self) -> u32 {
        match self.correlations {
            Some(counter) => {
                let id = counter.get();
                counter.set(id + 1);
                id
            }
            None => {
                self.own_correlations += 1;
                self.own_correlations - 1
            }
        }
    }
}

/// The conjuncts of an AND chain (a parenthesized one included), left to right.
/// References to columns `0..` of the given types, in order.
fn column_refs<'a>(types: impl IntoIterator<Item = &'a DataType>) -> Vec<ScalarExpr> {
    types
        .into_iter()
        .enumerate()
        .map(|(index, data_type)| ScalarExpr::Column {
            index,
            data_type: data_type.clone(),
        })
        .collect()
}

/// `input`'s rows that pass `filter` (all of them without one), its columns (`scope`) as
/// they are.
fn filtered(input: LogicalPlan, scope: &[ScopeColumn], filter: Option<ScalarExpr>) -> LogicalPlan {
    LogicalPlan::Calc(LogicalCalc {
        exprs: column_refs(scope.iter().map(|c| &c.field.data_type)),
        schema: input.schema().clone(),
        input: Box::new(input),
        filter,
    })
}

fn flatten_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::And,
            right,
        } => {
            flatten_and(left, out);
            flatten_and(right, out);
        }
        Expr::Nested(inner)
            if matches!(
                inner.as_ref(),
                Expr::BinaryOp {
                    op: ast::BinaryOperator::And,
                    ..
                }
            ) =>
        {
            flatten_and(inner, out)
        }
        other => out.push(other),
    }
}

fn true_literal() -> ScalarExpr {
    ScalarExpr::Literal {
        value: Value::Boolean(true),
        data_type: DataType::not_null(TypeKind::Boolean),
    }
}

/// `plan` with its columns renamed by a table alias's column list (`AS t (a, b)`), if any.
fn renamed_by_alias(
    plan: LogicalPlan,
    alias: Option<&ast::TableAlias>,
) -> Result<LogicalPlan, SqlError> {
    match alias {
        Some(a) if !a.columns.is_empty() => {
            let names: Vec<String> = a.columns.iter().map(|c| c.name.value.clone()).collect();
            rename(plan, &names, a.name.span)
        }
        _ => Ok(plan),
    }
}

fn scoped(plan: LogicalPlan, qualifier: Option<String>) -> (LogicalPlan, Vec<ScopeColumn>) {
    let scope = scope_of(plan.schema(), qualifier);
    (plan, scope)
}

/// The columns of `schema` as names resolve against them.
fn scope_of(schema: &Schema, qualifier: Option<String>) -> Vec<ScopeColumn> {
    schema
        .fields
        .iter()
        .map(|f| ScopeColumn {
            qualifier: qualifier.clone(),
            field: f.clone(),
        })
        .collect()
}
