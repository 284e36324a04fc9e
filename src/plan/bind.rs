//! The binder: resolves names against the catalog and types against Flink's rules, turning
//! `sqlparser` queries into [`LogicalPlan`]s and `CREATE TABLE` into [`TableDef`]s.
//!
//! Flink syntax that parses but that Tideline cannot run yet (windowing TVFs, joins, OVER)
//! is rejected here by name, with the position of the construct. GROUP BY binds into a
//! [`LogicalAggregate`] (Flink's legacy group windows `TUMBLE`, `HOP`, `SESSION`, or none)
//! between a Calc below computing keys and arguments and a Calc above for the SELECT list
//! and HAVING, as Calcite converts it.

use std::collections::HashMap;
use std::sync::Arc;

use sqlparser::ast::{
    self, BinaryOperator, CastKind, CeilFloorKind, Distinct, Expr, FunctionArg, FunctionArgExpr,
    FunctionArguments, GroupByExpr, Query, Select, SelectItem, SetExpr, SetOperator, SetQuantifier,
    Spanned, TableFactor, TrimWhereField, UnaryOperator,
};
use sqlparser::tokenizer::Span;

use super::aggregate::{
    AggregateCall, AggregateFunction, GroupWindow, GroupWindowKind, WindowProperty,
};
use super::explain::calcite_type_name;
use super::expr::ScalarExpr;
use super::logical::*;
use super::stream::group_window_aggregate::{property_name, window_properties};
use super::stream::translate::{and, joins_windows};
use crate::catalog::{Catalog, CatalogEntry, ColumnSource, TableColumn, TableDef, WatermarkSpec};
use crate::function::{self, cast::can_cast, temporal};
use crate::sql::SqlError;
use crate::sql::ast::{ColumnKind, CreateTable, TableHint};
use crate::sql::interval::{IntervalQualifier, IntervalValue};
use crate::sql::parser::{object_name_last, session_object_name};
use crate::sql::types::parse_type_text;
use crate::sql::unparse::{interval_qualifier, type_text, unparse};
use crate::types::coercion::{can_assign, common_type_of, string_literal_kind};
use crate::types::time::{parse_date, parse_time, parse_timestamp};
use crate::types::value::Value;
use crate::types::{DataType, Field, MAX_LENGTH, Schema, TimeAttribute, TypeKind};

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
    /// The STATE_TTL hint of the SELECT being bound: each name with its TTL, and whether an
    /// input of a join or the aggregate took it.
    state_ttl: Vec<(String, TtlHint, bool)>,
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
            state_ttl: Vec::new(),
        }
    }

    pub fn bind_query(&mut self, query: &Query) -> Result<LogicalPlan, SqlError> {
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                let plan = self.bind_query(&cte.query)?;
                let plan = rename(
                    plan,
                    &cte.alias
                        .columns
                        .iter()
                        .map(|c| c.name.value.clone())
                        .collect::<Vec<_>>(),
                    cte.alias.name.span,
                )?;
                self.ctes.insert(cte.alias.name.value.clone(), plan);
            }
        }
        let plan = self.bind_set_expr(&query.body)?;
        if query.order_by.is_none() && query.limit_clause.is_none() {
            return Ok(plan);
        }
        self.bind_sort(plan, query)
    }

    /// `ORDER BY` (output columns, by name or position) and `LIMIT n [OFFSET m]` over a
    /// query's rows.
    fn bind_sort(&mut self, mut plan: LogicalPlan, query: &Query) -> Result<LogicalPlan, SqlError> {
        let width = plan.schema().len();
        let mut order = Vec::new();
        if let Some(order_by) = &query.order_by {
            let ast::OrderByKind::Expressions(items) = &order_by.kind else {
                return Err(error(order_by.span(), "ORDER BY ALL is not supported"));
            };
            for item in items {
                let span = item.expr.span();
                let schema = plan.schema().clone();
                let column = match &item.expr {
                    Expr::Identifier(id) => {
                        let found: Vec<usize> = (0..width)
                            .filter(|&i| schema.fields[i].name == id.value)
                            .collect();
                        match found.as_slice() {
                            [i] => *i,
                            // A column of the SELECT's input it does not select: sorted on,
                            // then projected away (Calcite's plan of it).
                            [] => match hidden_sort_column(&mut plan, &id.value) {
                                Some(i) => i,
                                None => {
                                    return Err(error(
                                        span,
                                        format!("Column '{}' not found in any table", id.value),
                                    ));
                                }
                            },
                            _ => {
                                return Err(error(
                                    span,
                                    format!("Column '{}' is ambiguous", id.value),
                                ));
                            }
                        }
                    }
                    Expr::Value(v) => match &v.value {
                        ast::Value::Number(n, _) => match n.parse::<usize>() {
                            Ok(i) if i >= 1 && i <= width => i - 1,
                            _ => {
                                return Err(error(
                                    span,
                                    format!(
                                        "Ordinal out of range: {n} (the query has {width} columns)"
                                    ),
                                ));
                            }
                        },
                        _ => {
                            return Err(error(span, "ORDER BY needs a column"));
                        }
                    },
                    _ => {
                        return Err(error(
                            span,
                            "ORDER BY an expression is not supported yet: name an output column",
                        ));
                    }
                };
                let descending = matches!(item.options.sort, Some(ast::OrderBySort::Desc));
                order.push(OrderKey {
                    column,
                    descending,
                    // Flink's default: NULLs first ascending, last descending.
                    nulls_first: item.options.nulls_first.unwrap_or(!descending),
                });
            }
        }
        let count = |e: &Expr, what: &str| -> Result<u64, SqlError> {
            match e {
                Expr::Value(v) => match &v.value {
                    ast::Value::Number(n, _) => n.parse::<u64>().map_err(|_| {
                        error(e.span(), format!("{what} must be a non-negative integer"))
                    }),
                    _ => Err(error(
                        e.span(),
                        format!("{what} must be a non-negative integer"),
                    )),
                },
                _ => Err(error(
                    e.span(),
                    format!("{what} must be a non-negative integer"),
                )),
            }
        };
        let (mut offset, mut fetch) = (0, None);
        match &query.limit_clause {
            Some(ast::LimitClause::LimitOffset {
                limit,
                offset: o,
                limit_by,
            }) => {
                if let Some(first) = limit_by.first() {
                    return Err(error(first.span(), "LIMIT BY is not supported"));
                }
                if let Some(limit) = limit {
                    fetch = Some(count(limit, "LIMIT")?);
                }
                if let Some(o) = o {
                    offset = count(&o.value, "OFFSET")?;
                }
            }
            Some(ast::LimitClause::OffsetCommaLimit { offset: o, limit }) => {
                offset = count(o, "OFFSET")?;
                fetch = Some(count(limit, "LIMIT")?);
            }
            None => {}
        }
        let mut schema = plan.schema().clone();
        for f in &mut schema.fields {
            // A sorted query's rows carry no time attribute on (Flink materializes it).
            if fetch.is_some() {
                f.time_attribute = None;
            }
        }
        let sorted = LogicalPlan::Sort(LogicalSort {
            input: Box::new(plan),
            order,
            offset,
            fetch,
            schema: schema.clone(),
        });
        if schema.len() == width {
            return Ok(sorted);
        }
        // The columns sorted on but not selected go.
        Ok(LogicalPlan::Calc(LogicalCalc {
            exprs: column_refs(schema.fields[..width].iter().map(|f| &f.data_type)),
            schema: Schema::new(schema.fields[..width].to_vec()),
            input: Box::new(sorted),
            filter: None,
        }))
    }

    /// Binds the query of `INSERT INTO table …` and casts its columns to the sink's types,
    /// where Flink casts implicitly; other mismatches fail as Flink words them.
    /// `INSERT INTO table [(columns)] query`: the query's columns placed on the sink's (a
    /// column list names where each goes; the others get NULL), checked and cast as Flink does.
    pub fn bind_insert(
        &mut self,
        query: &Query,
        table: &str,
        sink: &Schema,
        columns: &[String],
    ) -> Result<LogicalPlan, SqlError> {
        let mut plan = self.bind_query(query)?;
        if !columns.is_empty() {
            plan = place_columns(plan, sink, columns).map_err(|m| error(query.span(), m))?;
        }
        let show = |schema: &Schema| {
            let fields: Vec<String> = schema
                .fields
                .iter()
                .map(|f| format!("{}: {}", f.name, f.data_type))
                .collect();
            format!("[{}]", fields.join(", "))
        };
        let mismatch = |cause: String| {
            error(
                query.span(),
                format!(
                    "Column types of query result and sink for 'default_catalog.default_database.{table}' do not match.\nCause: {cause}\n\nQuery schema: {}\nSink schema:  {}",
                    show(plan.schema()),
                    show(sink)
                ),
            )
        };
        if plan.schema().len() != sink.len() {
            return Err(mismatch("Different number of columns.".into()));
        }
        for (i, (from, to)) in plan.schema().fields.iter().zip(&sink.fields).enumerate() {
            if !can_assign(&from.data_type.kind, &to.data_type.kind) {
                return Err(mismatch(format!(
                    "Incompatible types for sink column '{}' at position {}.",
                    to.name,
                    i + 1
                )));
            }
        }
        let fields = sink
            .fields
            .iter()
            .map(|f| Field::new(&f.name, f.data_type.clone()))
            .collect::<Vec<_>>();
        Ok(cast_columns(plan, &fields))
    }

    fn bind_set_expr(&mut self, body: &SetExpr) -> Result<LogicalPlan, SqlError> {
        match body {
            SetExpr::Select(select) => self.bind_select(select),
            SetExpr::Query(query) => self.bind_query(query),
            SetExpr::Values(values) => self.bind_values(values),
            SetExpr::SetOperation {
                op,
                set_quantifier,
                left,
                right,
            } => {
                if *op != SetOperator::Union || *set_quantifier != SetQuantifier::All {
                    return Err(error(
                        body.span(),
                        format!("{op} {set_quantifier} is not supported yet; UNION ALL is"),
                    ));
                }
                let left = self.bind_set_expr(left)?;
                let right = self.bind_set_expr(right)?;
                union(vec![left, right], body.span())
            }
            other => Err(error(other.span(), "this kind of query is not supported")),
        }
    }

    fn bind_values(&mut self, values: &ast::Values) -> Result<LogicalPlan, SqlError> {
        let mut rows = Vec::new();
        for row in &values.rows {
            let exprs = row
                .iter()
                .map(|e| self.bind_expr(e, &[]))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(first) = rows.first().map(|r: &Vec<ScalarExpr>| r.len())
                && first != exprs.len()
            {
                return Err(error(
                    values.span(),
                    "all VALUES rows must have the same number of columns",
                ));
            }
            rows.push(exprs);
        }
        let width = rows.first().map_or(0, Vec::len);
        let mut fields = Vec::new();
        for col in 0..width {
            let types: Vec<DataType> = rows.iter().map(|r| r[col].data_type().clone()).collect();
            let ty = common_type_of(&types).ok_or_else(|| {
                error(
                    values.span(),
                    format!("VALUES column {} has no common type", col + 1),
                )
            })?;
            fields.push(Field::new(format!("EXPR${col}"), ty));
        }
        for row in &mut rows {
            for (col, e) in row.iter_mut().enumerate() {
                *e = coerce(e.clone(), &fields[col].data_type);
            }
        }
        Ok(LogicalPlan::Values(LogicalValues {
            rows,
            schema: Schema::new(fields),
        }))
    }

    fn bind_select(&mut self, select: &Select) -> Result<LogicalPlan, SqlError> {
        match &select.distinct {
            None | Some(Distinct::All) => self.bind_select_all(select),
            Some(Distinct::Distinct) => {
                // An aggregate grouping by every selected column (Calcite's plan of it).
                let plan = self.bind_select_all(select)?;
                let mut schema = plan.schema().clone();
                for f in &mut schema.fields {
                    f.time_attribute = None;
                }
                let span = select.span();
                Ok(LogicalPlan::Aggregate(LogicalAggregate {
                    grouping: (0..schema.len()).collect(),
                    input: Box::new(plan),
                    window: None,
                    window_call: None,
                    aggregates: Vec::new(),
                    properties: Vec::new(),
                    schema,
                    position: (span.start.line, span.start.column),
                    state_ttl: None,
                    grouping_sets: Vec::new(),
                }))
            }
            Some(Distinct::On(_)) => {
                Err(error(select.span(), "SELECT DISTINCT ON is not supported"))
            }
        }
    }

    /// A SELECT, with the STATE_TTL hint written after its keyword applied to its joins'
    /// inputs and its aggregate, each name in the hint naming one of them (Flink 2.3's hint).
    fn bind_select_all(&mut self, select: &Select) -> Result<LogicalPlan, SqlError> {
        let hint = self.state_ttl_hint(select)?;
        let saved = std::mem::replace(&mut self.state_ttl, hint);
        let bound = self.bind_select_body(select);
        let hint = std::mem::replace(&mut self.state_ttl, saved);
        let mut plan = bound?;
        // The aggregate takes the name of its one FROM table.
        if let [item] = select.from.as_slice()
            && item.joins.is_empty()
            && let Some(name) = factor_name(&item.relation)
            && let Some(aggregate) = aggregate_of(&mut plan)
            && let Some(entry) = hint
                .iter()
                .position(|(n, _, _)| n.eq_ignore_ascii_case(&name))
        {
            aggregate.state_ttl = Some(hint[entry].1.clone());
            let mut hint = hint;
            hint[entry].2 = true;
            return unmatched_ttl(&hint, self.hints, select).map(|()| plan);
        }
        unmatched_ttl(&hint, self.hints, select)?;
        Ok(plan)
    }

    /// The `/*+ STATE_TTL('name' = 'ttl', …) */` written right after `select`'s keyword.
    fn state_ttl_hint(&self, select: &Select) -> Result<Vec<(String, TtlHint, bool)>, SqlError> {
        let end = select.select_token.0.span.end;
        let mut out = Vec::new();
        for hint in self.hints.iter().filter(|h| {
            h.name == "STATE_TTL" && h.follows.line == end.line && h.follows.column == end.column
        }) {
            for (name, text) in &hint.options {
                let millis = crate::connector::option_value::parse_duration(text)
                    .map(|nanos| nanos / 1_000_000)
                    .ok_or_else(|| {
                        SqlError::new(
                            format!(
                                "Invalid STATE_TTL hint value: text does not start with a number, and is not a valid ISO-8601 duration format: {text}"
                            ),
                            hint.position.line,
                            hint.position.column,
                        )
                    })?;
                out.push((
                    name.clone(),
                    TtlHint {
                        text: text.clone(),
                        millis,
                    },
                    false,
                ));
            }
        }
        Ok(out)
    }

    /// The STATE_TTL hint's TTL for a join input named by `scope`'s one qualifier.
    fn take_state_ttl(&mut self, scope: &[ScopeColumn]) -> Option<TtlHint> {
        let name = scope.first()?.qualifier.clone()?;
        if scope.iter().any(|c| c.qualifier.as_deref() != Some(&name)) {
            return None;
        }
        let entry = self
            .state_ttl
            .iter_mut()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(&name))?;
        entry.2 = true;
        Some(entry.1.clone())
    }

    fn bind_select_body(&mut self, select: &Select) -> Result<LogicalPlan, SqlError> {
        let group_items = match &select.group_by {
            GroupByExpr::Expressions(exprs, modifiers) if modifiers.is_empty() => exprs.as_slice(),
            group_by => {
                return Err(error(
                    group_by.span(),
                    "this form of GROUP BY is not supported yet",
                ));
            }
        };
        let (input, scope) = match select.from.as_slice() {
            [] => (
                LogicalPlan::Values(LogicalValues {
                    rows: vec![vec![]],
                    schema: Schema::default(),
                }),
                vec![],
            ),
            from => self.bind_from(from)?,
        };
        // `[NOT] EXISTS (…)` and `x [NOT] IN (SELECT …)` conjuncts of the WHERE: semi and
        // anti joins below it.
        let (input, scope, rest) = self.bind_subquery_conjuncts(input, scope, select)?;
        let narrowed;
        let select = match rest {
            Some(selection) => {
                narrowed = Select {
                    selection,
                    ..select.clone()
                };
                &narrowed
            }
            None => select,
        };
        self.no_aggregates_in = Some("WHERE");
        let filter = self.bind_where(select, &scope);
        self.no_aggregates_in = None;
        let filter = filter?;
        let input_attrs: Vec<Option<TimeAttribute>> =
            scope.iter().map(|c| c.field.time_attribute).collect();
        self.no_aggregates_in = Some("GROUP BY");
        let aggregation = self.bind_group_by(group_items, &scope, &input_attrs);
        self.no_aggregates_in = None;
        self.aggregation = Some(aggregation?);
        let over_plan = match self.bind_over(select, &scope) {
            Ok(over) => over,
            Err(e) => {
                self.aggregation = None;
                return Err(e);
            }
        };
        let items = self.bind_select_items(select, &scope, &input_attrs);
        let having = match (&items, &select.having) {
            (Ok(_), Some(having)) => Some(self.bind_expr(having, &scope).map(|e| (e, having))),
            _ => None,
        }
        .transpose();
        let aggregation = self.aggregation.take().expect("set above");
        let over = self.over_column.take();
        let (exprs, fields) = items?;
        let having = having?;
        if group_items.is_empty() && aggregation.calls.is_empty() && having.is_none() {
            // A ranking call: an Over node between the WHERE and the SELECT list.
            let input = match (over, over_plan) {
                (Some(_), Some(mut over)) => {
                    over.input = Box::new(match filter {
                        Some(filter) => filtered(input, &scope, Some(filter)),
                        None => input,
                    });
                    return Ok(LogicalPlan::Calc(LogicalCalc {
                        input: Box::new(LogicalPlan::Over(over)),
                        filter: None,
                        exprs,
                        schema: Schema::new(fields),
                    }));
                }
                _ => input,
            };
            // Names stay as written (a later reference to a repeated one is ambiguous); the
            // result of a query makes them unique (`output_names`).
            return Ok(LogicalPlan::Calc(LogicalCalc {
                input: Box::new(input),
                filter,
                exprs,
                schema: Schema::new(fields),
            }));
        }
        if let Some((span, _)) = over {
            return Err(error(
                span,
                "OVER windows in an aggregating query are not supported yet",
            ));
        }
        // Where later stages point: the GROUP BY, or the SELECT list of a global aggregate.
        let position = if group_items.is_empty() {
            select
                .projection
                .first()
                .map_or(select.span(), |i| i.span())
        } else {
            select.group_by.span()
        };
        self.aggregate_plan(
            input,
            filter,
            aggregation,
            (exprs, fields),
            having,
            select,
            position,
        )
    }

    /// The WHERE's conjuncts that are `[NOT] EXISTS (subquery)` or `x [NOT] IN (subquery)`,
    /// each a semi (anti) join of `input` with the subquery's rows, its conditions on outer
    /// columns (correlations) moved into the join's condition, as Calcite decorrelates them,
    /// the other conjuncts filtering `input` below them; and the WHERE that is left
    /// (`Some(None)`: none; `None`: unchanged, there being no subquery).
    #[allow(clippy::type_complexity)]
    fn bind_subquery_conjuncts(
        &mut self,
        mut input: LogicalPlan,
        mut scope: Vec<ScopeColumn>,
        select: &Select,
    ) -> Result<(LogicalPlan, Vec<ScopeColumn>, Option<Option<Expr>>), SqlError> {
        let Some(selection) = &select.selection else {
            return Ok((input, scope, None));
        };
        let mut conjuncts = Vec::new();
        flatten_and(selection, &mut conjuncts);
        let is_subquery = |e: &Expr| match e {
            Expr::Exists { .. } => true,
            Expr::In {
                target: ast::InTarget::Subquery(_),
                ..
            } => true,
            Expr::UnaryOp {
                op: ast::UnaryOperator::Not,
                expr,
            } => matches!(expr.as_ref(), Expr::Exists { .. }),
            _ => false,
        };
        if !conjuncts.iter().any(|c| is_subquery(c)) {
            return Ok((input, scope, None));
        }
        // The other conjuncts filter the outer rows first (a semi or anti join passes its
        // left rows through, so they may as well), as Flink's plan pushes them down.
        let rest = conjuncts
            .iter()
            .filter(|c| !is_subquery(c))
            .map(|c| (*c).clone())
            .reduce(|a, b| Expr::BinaryOp {
                left: Box::new(a),
                op: ast::BinaryOperator::And,
                right: Box::new(b),
            });
        if rest.is_some() {
            let narrowed = Select {
                selection: rest,
                ..select.clone()
            };
            self.no_aggregates_in = Some("WHERE");
            let filter = self.bind_where(&narrowed, &scope);
            self.no_aggregates_in = None;
            input = filtered(input, &scope, filter?);
        }
        for conjunct in conjuncts {
            let (query, negated, tested) = match conjunct {
                Expr::Exists { subquery, negated } => (subquery.as_ref(), *negated, None),
                Expr::UnaryOp {
                    op: ast::UnaryOperator::Not,
                    expr,
                } if matches!(expr.as_ref(), Expr::Exists { .. }) => match expr.as_ref() {
                    Expr::Exists { subquery, negated } => (subquery.as_ref(), !*negated, None),
                    _ => unreachable!("matched above"),
                },
                Expr::In {
                    expr,
                    target: ast::InTarget::Subquery(subquery),
                    negated,
                    ..
                } => (subquery.as_ref(), *negated, Some(expr.as_ref())),
                _ => continue,
            };
            let (plan, kept) =
                self.bind_semi_join(input, scope, query, negated, tested, conjunct.span())?;
            input = plan;
            scope = kept;
        }
        Ok((input, scope, Some(None)))
    }

    /// One semi (anti, `negated`) join of `input` with a subquery: `SELECT … FROM … [WHERE
    /// …]`, whose WHERE conjuncts reading only its own columns filter it and the others
    /// (correlated with the outer query) join; for IN, `tested` equals the subquery's one
    /// column (NOT IN: or either is NULL, as Calcite writes NOT IN's null-aware condition).
    fn bind_semi_join(
        &mut self,
        input: LogicalPlan,
        scope: Vec<ScopeColumn>,
        query: &Query,
        negated: bool,
        tested: Option<&Expr>,
        span: Span,
    ) -> Result<(LogicalPlan, Vec<ScopeColumn>), SqlError> {
        let unsupported = || {
            error(
                query.span(),
                "this form of subquery (only SELECT … FROM … [WHERE …]) is not supported yet",
            )
        };
        let SetExpr::Select(sub) = query.body.as_ref() else {
            return Err(unsupported());
        };
        let plain_group =
            matches!(&sub.group_by, GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty());
        if query.order_by.is_some()
            || query.limit_clause.is_some()
            || query.with.is_some()
            || !plain_group
            || sub.having.is_some()
            || sub.distinct.is_some()
            || sub.from.is_empty()
        {
            return Err(unsupported());
        }
        let (right, right_scope) = self.bind_from(&sub.from)?;
        let nl = scope.len();
        let nr = right_scope.len();
        let combined: Vec<ScopeColumn> = right_scope.iter().chain(&scope).cloned().collect();
        let mut inner_filters = Vec::new();
        let mut correlated = Vec::new();
        if let Some(where_) = &sub.selection {
            let mut parts = Vec::new();
            flatten_and(where_, &mut parts);
            for part in parts {
                match self.bind_expr(part, &right_scope) {
                    Ok(e) => inner_filters.push(e),
                    Err(_) => correlated.push(self.bind_expr(part, &combined)?),
                }
            }
        }
        // Over the join's columns: the outer (left) ones, then the subquery's.
        let onto_join = |e: &ScalarExpr| {
            e.map_columns(&mut |i, data_type| ScalarExpr::Column {
                index: if i < nr { nl + i } else { i - nr },
                data_type: data_type.clone(),
            })
        };
        let mut conditions: Vec<ScalarExpr> = correlated.iter().map(onto_join).collect();
        let mut right_exprs = column_refs(right_scope.iter().map(|c| &c.field.data_type));
        let mut right_fields: Vec<Field> = right_scope.iter().map(|c| c.field.clone()).collect();
        if let Some(tested) = tested {
            let [SelectItem::UnnamedExpr(item) | SelectItem::ExprWithAlias { expr: item, .. }] =
                sub.projection.as_slice()
            else {
                return Err(error(
                    query.span(),
                    "the subquery of IN must select exactly one column",
                ));
            };
            let selected = self.bind_expr(item, &right_scope)?;
            let at = match &selected {
                ScalarExpr::Column { index, .. } => *index,
                _ => {
                    right_fields.push(Field::new(
                        format!("$f{}", right_exprs.len()),
                        selected.data_type().clone(),
                    ));
                    right_exprs.push(selected.clone());
                    right_exprs.len() - 1
                }
            };
            let outer = self.bind_expr(tested, &scope)?;
            let inner = ScalarExpr::Column {
                index: nl + at,
                data_type: selected.data_type().clone(),
            };
            let equal = self.call("=", vec![outer.clone(), inner.clone()], span)?;
            // Calcite's decorrelation puts IN's own condition first.
            conditions.insert(
                0,
                if negated {
                    let outer_null = self.call("IS NULL", vec![outer], span)?;
                    let inner_null = self.call("IS NULL", vec![inner], span)?;
                    let either = self.call("OR", vec![outer_null, inner_null], span)?;
                    self.call("OR", vec![either, equal], span)?
                } else {
                    equal
                },
            );
        }
        let right = LogicalPlan::Calc(LogicalCalc {
            input: Box::new(right),
            filter: inner_filters.into_iter().reduce(and),
            exprs: right_exprs,
            schema: Schema::new(right_fields),
        });
        let condition = conditions
            .into_iter()
            .reduce(and)
            .unwrap_or_else(true_literal);
        // The output is the left's columns; time attributes pass a window join only.
        let windowed = joins_windows(&input, &right, &condition);
        let mut kept = scope;
        if !windowed {
            for c in &mut kept {
                c.field.time_attribute = None;
            }
        }
        let join_type = if negated {
            JoinType::Anti
        } else {
            JoinType::Semi
        };
        let plan = LogicalPlan::Join(LogicalJoin {
            left: Box::new(input),
            right: Box::new(right),
            join_type,
            condition,
            temporal: None,
            state_ttl: [None, None],
            schema: Schema::new(kept.iter().map(|c| c.field.clone()).collect()),
        });
        Ok((plan, kept))
    }

    /// The ranking call of the SELECT list (`ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)`,
    /// RANK, DENSE_RANK), as an Over node still without its input; the call then reads the
    /// node's rank column (`over_column`). Partition and order items are columns.
    fn bind_over(
        &mut self,
        select: &Select,
        scope: &[ScopeColumn],
    ) -> Result<Option<LogicalOver>, SqlError> {
        let calls: Vec<(&ast::Function, Span)> = select
            .projection
            .iter()
            .filter_map(|item| match item {
                SelectItem::UnnamedExpr(Expr::Function(f))
                | SelectItem::ExprWithAlias {
                    expr: Expr::Function(f),
                    ..
                } if f.over.is_some() => Some((f, f.span())),
                _ => None,
            })
            .collect();
        let Some(&(f, span)) = calls.first() else {
            return Ok(None);
        };
        if let Some(&(_, second)) = calls.get(1) {
            return Err(error(
                second,
                "more than one OVER call is not supported yet",
            ));
        }
        let name = object_name_last(&f.name).to_uppercase();
        let function = match name.as_str() {
            "ROW_NUMBER" => RankFunction::RowNumber,
            "RANK" => RankFunction::Rank,
            "DENSE_RANK" => RankFunction::DenseRank,
            _ => {
                return Err(error(
                    span,
                    format!("OVER windows ({name} … OVER) are not supported yet"),
                ));
            }
        };
        let Some(ast::WindowType::WindowSpec(spec)) = &f.over else {
            return Err(error(span, "named windows are not supported yet"));
        };
        if spec.window_frame.is_some() {
            return Err(error(
                span,
                format!("a window frame is not allowed with {name}"),
            ));
        }
        let column = |binder: &mut Binder, e: &Expr| -> Result<usize, SqlError> {
            match binder.bind_expr(e, scope)? {
                ScalarExpr::Column { index, .. } => Ok(index),
                _ => Err(error(
                    e.span(),
                    "OVER partitions and orders by columns only (for now)",
                )),
            }
        };
        let mut partition = Vec::new();
        for e in &spec.partition_by {
            partition.push(column(self, e)?);
        }
        let mut order = Vec::new();
        for o in &spec.order_by {
            let descending = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            order.push(OrderKey {
                column: column(self, &o.expr)?,
                descending,
                // Flink's default: NULLs first ascending, last descending.
                nulls_first: o.options.nulls_first.unwrap_or(!descending),
            });
        }
        if order.is_empty() {
            return Err(error(
                span,
                format!("{name} requires an ORDER BY in its OVER clause"),
            ));
        }
        self.over_column = Some((span, scope.len()));
        let mut fields: Vec<Field> = scope.iter().map(|c| c.field.clone()).collect();
        fields.push(Field::new("w0$o0", DataType::not_null(TypeKind::BigInt)));
        Ok(Some(LogicalOver {
            input: Box::new(LogicalPlan::Values(LogicalValues {
                rows: Vec::new(),
                schema: Schema::default(),
            })),
            function,
            partition,
            order,
            position: (span.start.line, span.start.column),
            schema: Schema::new(fields),
        }))
    }

    /// The WHERE condition, a BOOLEAN.
    fn bind_where(
        &mut self,
        select: &Select,
        scope: &[ScopeColumn],
    ) -> Result<Option<ScalarExpr>, SqlError> {
        Ok(match &select.selection {
            Some(predicate) => {
                let mut bound = self.bind_expr(predicate, scope)?;
                // `WHERE NULL`: Flink types the bare NULL as BOOLEAN here.
                if bound.data_type().kind == TypeKind::Null {
                    bound = coerce(bound, &DataType::nullable(TypeKind::Boolean));
                }
                if bound.data_type().kind != TypeKind::Boolean {
                    return Err(error(
                        predicate.span(),
                        format!(
                            "WHERE needs a BOOLEAN condition, got {}",
                            bound.data_type().kind
                        ),
                    ));
                }
                Some(bound)
            }
            None => None,
        })
    }

    /// The SELECT list: expressions over the input (reading aggregates and window
    /// properties through their marks) and their fields.
    fn bind_select_items(
        &mut self,
        select: &Select,
        scope: &[ScopeColumn],
        input_attrs: &[Option<TimeAttribute>],
    ) -> Result<(Vec<ScalarExpr>, Vec<Field>), SqlError> {
        let scope = scope.to_vec();
        let mut exprs = Vec::new();
        let mut fields: Vec<Field> = Vec::new();
        for item in &select.projection {
            match item {
                SelectItem::Wildcard(_) => {
                    // `*` over an input with two columns of one name is ambiguous in Flink.
                    for (i, c) in scope.iter().enumerate() {
                        if scope[..i]
                            .iter()
                            .any(|o| o.field.name == c.field.name && o.qualifier == c.qualifier)
                        {
                            return Err(error(
                                item.span(),
                                format!("Column '{}' is ambiguous", c.field.name),
                            ));
                        }
                    }
                    // Calcite's star expansion names a repeated column `id0`, `id1`, ….
                    for (i, c) in scope.iter().enumerate() {
                        exprs.push(ScalarExpr::Column {
                            index: i,
                            data_type: c.field.data_type.clone(),
                        });
                        let mut field = c.field.clone();
                        if fields.iter().any(|f| f.name == field.name) {
                            let base = field.name.clone();
                            let mut n = 0;
                            while fields.iter().any(|f| f.name == format!("{base}{n}")) {
                                n += 1;
                            }
                            field.name = format!("{base}{n}");
                        }
                        fields.push(field);
                    }
                }
                SelectItem::QualifiedWildcard(kind, _) => {
                    let qualifier = match kind {
                        ast::SelectItemQualifiedWildcardKind::ObjectName(name) => {
                            object_name_last(name)
                        }
                        ast::SelectItemQualifiedWildcardKind::Expr(e) => {
                            return Err(error(e.span(), "a star needs a table name before it"));
                        }
                    };
                    let qualifier = qualifier.as_str();
                    let mut any = false;
                    for (i, c) in scope.iter().enumerate() {
                        if c.qualifier.as_deref() == Some(qualifier) {
                            any = true;
                            exprs.push(ScalarExpr::Column {
                                index: i,
                                data_type: c.field.data_type.clone(),
                            });
                            fields.push(c.field.clone());
                        }
                    }
                    if !any {
                        return Err(error(
                            item.span(),
                            format!("Unknown identifier '{qualifier}'"),
                        ));
                    }
                }
                SelectItem::UnnamedExpr(e) => {
                    let bound = self.bind_expr(e, &scope)?;
                    let name = derived_name(e, fields.len());
                    self.name_aggregate(&bound, &name);
                    let time_attribute = bound.time_attribute(input_attrs);
                    fields.push(Field {
                        name,
                        data_type: bound.data_type().clone(),
                        time_attribute,
                    });
                    exprs.push(bound);
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    let bound = self.bind_expr(expr, &scope)?;
                    self.name_aggregate(&bound, &alias.value);
                    let time_attribute = bound.time_attribute(input_attrs);
                    fields.push(Field {
                        name: alias.value.clone(),
                        data_type: bound.data_type().clone(),
                        time_attribute,
                    });
                    exprs.push(bound);
                }
                other => return Err(error(other.span(), "unsupported select item")),
            }
        }
        Ok((exprs, fields))
    }

    /// A SELECT item that is an aggregate call names it (`COUNT(*) AS c`), the first time.
    fn name_aggregate(&mut self, bound: &ScalarExpr, name: &str) {
        if let (Some(agg), ScalarExpr::Column { index, .. }) = (&mut self.aggregation, bound)
            && (AGGREGATE_MARK..PROPERTY_MARK).contains(index)
            && agg.calls[index - AGGREGATE_MARK].name.is_empty()
        {
            agg.calls[index - AGGREGATE_MARK].name = name.to_string();
        }
    }

    /// The GROUP BY items: keys over the input, and at most one group window.
    fn bind_group_by(
        &mut self,
        items: &[Expr],
        scope: &[ScopeColumn],
        input_attrs: &[Option<TimeAttribute>],
    ) -> Result<Aggregation, SqlError> {
        let mut aggregation = Aggregation {
            below: Vec::new(),
            below_names: Vec::new(),
            keys: Vec::new(),
            window: None,
            calls: Vec::new(),
            inside: None,
            properties_used: false,
            column_spans: Vec::new(),
            input_names: scope.iter().map(|c| c.field.name.clone()).collect(),
            sets: Vec::new(),
        };
        // Per GROUP BY item, the choices of slots it offers a grouping set: a plain item one
        // (itself), GROUPING SETS each listed set, ROLLUP its prefixes, CUBE its subsets.
        let mut choices: Vec<Vec<Vec<usize>>> = Vec::new();
        let has_sets = items
            .iter()
            .any(|i| matches!(i, Expr::GroupingSets(_) | Expr::Rollup(_) | Expr::Cube(_)));
        for item in items {
            let (elements, form): (&Vec<Vec<Expr>>, &str) = match item {
                Expr::GroupingSets(sets) => (sets, "GROUPING SETS"),
                Expr::Rollup(elements) => (elements, "ROLLUP"),
                Expr::Cube(elements) => (elements, "CUBE"),
                _ => {
                    let choice =
                        self.bind_group_item(&mut aggregation, item, has_sets, scope, input_attrs)?;
                    choices.push(choice);
                    continue;
                }
            };
            let mut bound: Vec<Vec<usize>> = Vec::new();
            for element in elements {
                let mut slots = Vec::new();
                for e in element {
                    let expr = self.bind_expr(e, scope)?;
                    let name = match &expr {
                        ScalarExpr::Column { index, .. } => Some(scope[*index].field.name.clone()),
                        _ => None,
                    };
                    let slot = aggregation.below_slot(expr, name);
                    if !aggregation.keys.contains(&slot) {
                        aggregation.keys.push(slot);
                    }
                    slots.push(slot);
                }
                bound.push(slots);
            }
            let offered: Vec<Vec<usize>> = match form {
                "GROUPING SETS" => bound,
                "ROLLUP" => (0..=bound.len())
                    .rev()
                    .map(|n| bound[..n].concat())
                    .collect(),
                _ => (0..1usize << bound.len())
                    .map(|mask| {
                        (0..bound.len())
                            .filter(|i| mask & (1 << i) != 0)
                            .flat_map(|i| bound[i].clone())
                            .collect()
                    })
                    .collect(),
            };
            choices.push(offered);
        }
        if has_sets {
            // The cross product of the items' choices, each set sorted and listed once,
            // enclosing sets before the sets they enclose (Calcite's order).
            let mut sets: Vec<Vec<usize>> = vec![Vec::new()];
            for choice in choices.iter().filter(|c| !c.is_empty()) {
                sets = sets
                    .iter()
                    .flat_map(|set| {
                        choice.iter().map(move |c| {
                            let mut s = set.clone();
                            s.extend(c);
                            s
                        })
                    })
                    .collect();
            }
            for set in &mut sets {
                set.sort_unstable();
                set.dedup();
            }
            sets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
            sets.dedup();
            aggregation.sets = sets;
        }
        Ok(aggregation)
    }

    /// A plain GROUP BY item (a key, or a group window call): its slot, as the one choice
    /// it offers a grouping set (none for the window).
    fn bind_group_item(
        &mut self,
        aggregation: &mut Aggregation,
        item: &Expr,
        has_sets: bool,
        scope: &[ScopeColumn],
        input_attrs: &[Option<TimeAttribute>],
    ) -> Result<Vec<Vec<usize>>, SqlError> {
        if has_sets && matches!(item, Expr::Function(_)) {
            let name = match item {
                Expr::Function(f) => object_name_last(&f.name).to_uppercase(),
                _ => String::new(),
            };
            if matches!(name.as_str(), "TUMBLE" | "HOP" | "SESSION") {
                return Err(error(
                    item.span(),
                    "a group window function with GROUPING SETS, ROLLUP or CUBE is not supported yet",
                ));
            }
        }
        let position = aggregation.below.len();
        if let Expr::Function(f) = item {
            let name = object_name_last(&f.name).to_uppercase();
            let function = match name.as_str() {
                "TUMBLE" => Some("TUMBLE"),
                "HOP" => Some("HOP"),
                "SESSION" => Some("SESSION"),
                _ => None,
            };
            if let Some(function) = function {
                if aggregation.window.is_some() {
                    return Err(error(
                        item.span(),
                        "Only a single window group function may be used in GROUP BY",
                    ));
                }
                let window =
                    self.bind_group_window(function, f, item.span(), position, scope, input_attrs)?;
                aggregation.below.push(ScalarExpr::Column {
                    index: window.window.time_column,
                    data_type: scope[window.window.time_column].field.data_type.clone(),
                });
                aggregation.below_names.push(format!("$f{position}"));
                aggregation.window = Some(window);
                return Ok(Vec::new());
            }
        }
        let bound = self.bind_expr(item, scope)?;
        let name = match &bound {
            ScalarExpr::Column { index, .. } => Some(scope[*index].field.name.clone()),
            _ => None,
        };
        let slot = aggregation.below_slot(bound, name);
        if slot == position || (has_sets && !aggregation.keys.contains(&slot)) {
            aggregation.keys.push(slot);
        }
        Ok(vec![vec![slot]])
    }

    /// `TUMBLE(ts, size)`, `HOP(ts, slide, size)`, `SESSION(ts, gap)` over a time attribute,
    /// with positive intervals of days to milliseconds.
    fn bind_group_window(
        &mut self,
        function: &'static str,
        f: &ast::Function,
        span: Span,
        position: usize,
        scope: &[ScopeColumn],
        input_attrs: &[Option<TimeAttribute>],
    ) -> Result<BoundWindow, SqlError> {
        let args: Vec<&Expr> = match &f.args {
            FunctionArguments::List(list) => list
                .args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e),
                    other => Err(error(
                        other.span(),
                        format!("unsupported argument to {function}"),
                    )),
                })
                .collect::<Result<_, _>>()?,
            _ => Vec::new(),
        };
        let expected = if function == "HOP" { 3 } else { 2 };
        if args.len() != expected {
            return Err(error(
                span,
                format!(
                    "Invalid number of arguments to function '${function}'. Was expecting {expected} arguments"
                ),
            ));
        }
        let time = self.bind_expr(args[0], scope)?;
        let mut intervals = Vec::new();
        let mut millis = Vec::new();
        let mut bound_args = vec![time.clone()];
        for arg in &args[1..] {
            let (ms, text, bound) = self.interval_argument(arg, scope, function)?;
            intervals.push(text);
            millis.push(ms);
            bound_args.push(bound);
        }
        let attribute = match &time {
            ScalarExpr::Column { index, .. } => input_attrs[*index].map(|a| (*index, a)),
            _ => None,
        };
        let Some((time_column, time_attribute)) = attribute else {
            let kind = &time.data_type().kind;
            if !matches!(kind, TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_)) {
                let shown: Vec<String> = std::iter::once(format!("<{}>", calcite_type_name(kind)))
                    .chain(args[1..].iter().map(|_| "<INTERVAL SECOND>".to_string()))
                    .collect();
                let intervals = if function == "HOP" {
                    "<DATETIME_INTERVAL>, <DATETIME_INTERVAL>"
                } else {
                    "<DATETIME_INTERVAL>"
                };
                return Err(error(
                    span,
                    format!(
                        "Cannot apply '${function}' to arguments of type '${function}({})'. Supported form(s): '${function}(<DATETIME>, {intervals})'\n'${function}(<DATETIME>, {intervals}, <TIME>)'",
                        shown.join(", ")
                    ),
                ));
            }
            return Err(error(
                span,
                format!(
                    "Window aggregate can only be defined over a time attribute column, but {} encountered.",
                    time.data_type().with_nullable(true)
                ),
            ));
        };
        let kind = match (function, millis.as_slice()) {
            ("TUMBLE", &[size]) => {
                if size <= 0 {
                    return Err(error(
                        span,
                        "TumblingWindowAssigner parameters must satisfy size > 0",
                    ));
                }
                GroupWindowKind::Tumble { size }
            }
            ("HOP", &[slide, size]) => {
                if slide <= 0 || size <= 0 {
                    return Err(error(
                        span,
                        "SlidingWindowAssigner parameters must satisfy slide > 0 and size > 0",
                    ));
                }
                GroupWindowKind::Hop { slide, size }
            }
            (_, &[gap]) => {
                if gap <= 0 {
                    return Err(error(
                        span,
                        "SessionWindowAssigner parameters must satisfy 0 < size",
                    ));
                }
                GroupWindowKind::Session { gap }
            }
            _ => return Err(error(span, format!("invalid arguments to {function}"))),
        };
        let time_type = time.data_type().clone();
        Ok(BoundWindow {
            function,
            window: GroupWindow {
                kind,
                time_column,
                time_attribute,
                time_type,
                offset: 0,
            },
            position,
            intervals,
            arguments: format!("{bound_args:?}"),
        })
    }

    /// `GROUPING(k, …)` and `GROUPING_ID(k, …)`: the keys (GROUP BY items) the row's grouping
    /// set leaves out, as Calcite types them (BIGINT NOT NULL).
    fn bind_grouping_call(
        &mut self,
        f: &ast::Function,
        name: &str,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        let list = match &f.args {
            FunctionArguments::List(list) => list.args.as_slice(),
            _ => &[][..],
        };
        let mut args = Vec::new();
        for arg in list {
            let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = arg else {
                return Err(error(arg.span(), format!("unsupported argument to {name}")));
            };
            let bound = self.bind_expr(e, scope)?;
            let aggregation = self
                .aggregation
                .as_mut()
                .expect("called with an aggregation");
            let key = format!("{bound:?}");
            let Some(&slot) = aggregation
                .keys
                .iter()
                .find(|&&k| format!("{:?}", aggregation.below[k]) == key)
            else {
                return Err(error(
                    e.span(),
                    "Argument to GROUPING operator must be a grouped expression",
                ));
            };
            args.push(slot);
        }
        if args.is_empty() {
            return Err(error(
                span,
                format!(
                    "Invalid number of arguments to function '{name}'. Was expecting 1 arguments"
                ),
            ));
        }
        let aggregation = self
            .aggregation
            .as_mut()
            .expect("called with an aggregation");
        let function = if name == "GROUPING" && args.len() == 1 {
            AggregateFunction::Grouping
        } else {
            AggregateFunction::GroupingId
        };
        Ok(aggregation.add_call(AggregateCall {
            function,
            args,
            distinct: false,
            filter: None,
            data_type: DataType::not_null(TypeKind::BigInt),
            name: String::new(),
        }))
    }

    /// An aggregate call in the SELECT list or HAVING: its arguments (and filter) go to the
    /// Calc below; the call stands as a mark until placed.
    fn bind_aggregate_call(
        &mut self,
        f: &ast::Function,
        name: &str,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        if matches!(name, "GROUPING" | "GROUPING_ID") {
            return self.bind_grouping_call(f, name, scope, span);
        }
        let function = match name {
            "COUNT" => AggregateFunction::Count,
            "SUM" => AggregateFunction::Sum,
            "MIN" => AggregateFunction::Min,
            "MAX" => AggregateFunction::Max,
            "AVG" => AggregateFunction::Avg,
            "FIRST_VALUE" => AggregateFunction::FirstValue,
            "LAST_VALUE" => AggregateFunction::LastValue,
            "LISTAGG" => AggregateFunction::ListAgg,
            "STDDEV_POP" | "STDDEV_SAMP" | "STDDEV" | "VAR_POP" | "VAR_SAMP" | "VARIANCE" => {
                AggregateFunction::WelfordM2
            }
            _ => {
                return Err(error(
                    span,
                    format!("aggregate function {name} is not supported yet"),
                ));
            }
        };
        let aggregation = self
            .aggregation
            .as_mut()
            .expect("called with an aggregation");
        if let Some(outer) = aggregation.inside {
            return Err(error(outer, "Aggregate expressions cannot be nested"));
        }
        let (list, distinct) = match &f.args {
            FunctionArguments::List(list) => (
                list.args.as_slice(),
                matches!(
                    list.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                ),
            ),
            _ => (&[][..], false),
        };
        aggregation.inside = Some(span);
        let bound = self.bind_aggregate_arguments(list, f.filter.as_deref(), name, scope, span);
        let aggregation = self
            .aggregation
            .as_mut()
            .expect("called with an aggregation");
        aggregation.inside = None;
        let (args, filter) = bound?;
        let arg_types: Vec<DataType> = args.iter().map(|a| a.data_type().clone()).collect();
        let grouped = !aggregation.keys.is_empty() || aggregation.window.is_some();
        let data_type =
            aggregate_type(function, name, &arg_types, grouped).map_err(|m| error(span, m))?;
        // COUNT of values that cannot be NULL counts rows, and Calcite writes it `COUNT(*)`.
        let counts_rows = !distinct && arg_types.iter().all(|t| !t.nullable);
        let args = if function == AggregateFunction::Count && counts_rows {
            Vec::new()
        } else {
            args
        };
        let args: Vec<usize> = args
            .into_iter()
            .map(|a| {
                let name = match &a {
                    ScalarExpr::Column { index, .. } => Some(scope[*index].field.name.clone()),
                    _ => None,
                };
                aggregation.below_slot(a, name)
            })
            .collect();
        let filter = filter.map(|f| aggregation.below_slot(f, None));
        let call = AggregateCall {
            function,
            args,
            distinct,
            filter,
            data_type: data_type.clone(),
            name: String::new(),
        };
        if function != AggregateFunction::WelfordM2 {
            return Ok(aggregation.add_call(call));
        }
        // STDDEV_POP(x) and its kin, as Flink 2.3 plans them: M2 and COUNT of x below,
        // the quotient (and its square root) above, cast to the type of AVG(x).
        let m2 = aggregation.add_call(AggregateCall {
            data_type: DataType::nullable(TypeKind::Double),
            ..call.clone()
        });
        let count = aggregation.add_call(AggregateCall {
            function: AggregateFunction::Count,
            args: if counts_rows { Vec::new() } else { call.args },
            data_type: DataType::not_null(TypeKind::BigInt),
            ..call
        });
        let sample = matches!(name, "STDDEV_SAMP" | "STDDEV" | "VAR_SAMP" | "VARIANCE");
        let denominator = if sample {
            let one = ScalarExpr::Literal {
                value: Value::Int(1),
                data_type: DataType::not_null(TypeKind::Int),
            };
            let single = self.call("=", vec![count.clone(), one.clone()], span)?;
            let less = self.call("-", vec![count, one], span)?;
            let bigint = DataType::nullable(TypeKind::BigInt);
            ScalarExpr::Case {
                branches: vec![(
                    single,
                    ScalarExpr::Literal {
                        value: Value::Null,
                        data_type: bigint.clone(),
                    },
                )],
                otherwise: Some(Box::new(less)),
                data_type: bigint,
            }
        } else {
            count
        };
        let mut result = self.call("/", vec![m2, denominator], span)?;
        if name.starts_with("STDDEV") {
            let half = ScalarExpr::Literal {
                value: Value::Decimal(5),
                data_type: DataType::not_null(TypeKind::Decimal {
                    precision: 2,
                    scale: 1,
                }),
            };
            result = self.call("POWER", vec![result, half], span)?;
        }
        if result.data_type().kind == data_type.kind {
            return Ok(result);
        }
        Ok(ScalarExpr::Cast {
            expr: Box::new(result),
            data_type,
            try_cast: false,
        })
    }

    /// The arguments of an aggregate call (none for `COUNT(*)`) and its filter, `IS TRUE`
    /// of the condition as Calcite writes it.
    fn bind_aggregate_arguments(
        &mut self,
        list: &[FunctionArg],
        filter: Option<&Expr>,
        name: &str,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<(Vec<ScalarExpr>, Option<ScalarExpr>), SqlError> {
        let mut args = Vec::new();
        for arg in list {
            match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Wildcard) if name == "COUNT" => {}
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => {
                    args.push(self.bind_expr(e, scope)?)
                }
                other => {
                    return Err(error(
                        other.span(),
                        format!("unsupported argument to {name}"),
                    ));
                }
            }
        }
        let filter = match filter {
            Some(condition) => {
                let bound = self.bind_expr(condition, scope)?;
                if !matches!(bound.data_type().kind, TypeKind::Boolean | TypeKind::Null) {
                    return Err(error(
                        condition.span(),
                        format!(
                            "FILTER needs a BOOLEAN condition, got {}",
                            bound.data_type().kind
                        ),
                    ));
                }
                let bound = coerce(bound, &DataType::nullable(TypeKind::Boolean));
                Some(self.call("IS TRUE", vec![bound], span)?)
            }
            None => None,
        };
        Ok((args, filter))
    }

    /// `TUMBLE_START(ts, …)` and the other window properties: they must name the window of
    /// the GROUP BY, as written there.
    fn bind_window_property(
        &mut self,
        f: &ast::Function,
        function: &str,
        name: &str,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        let mut args = Vec::new();
        if let FunctionArguments::List(list) = &f.args {
            for arg in &list.args {
                match arg {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => {
                        let saved = self
                            .aggregation
                            .as_mut()
                            .and_then(|a| a.inside.replace(span));
                        let bound = self.bind_expr(e, scope);
                        if let Some(a) = self.aggregation.as_mut() {
                            a.inside = saved;
                        }
                        args.push(bound?);
                    }
                    other => {
                        return Err(error(
                            other.span(),
                            format!("unsupported argument to {name}"),
                        ));
                    }
                }
            }
        }
        let arguments = format!("{args:?}");
        let mismatch = || {
            error(
                span,
                format!(
                    "Call to auxiliary group function '{name}' must have matching call to group function '${function}' in GROUP BY clause"
                ),
            )
        };
        let Some(aggregation) = self.aggregation.as_mut() else {
            return Err(mismatch());
        };
        // Without GROUP BY the call reaches Flink's code generator, which has none.
        if aggregation.keys.is_empty() && aggregation.window.is_none() {
            let types: Vec<String> = args.iter().map(|a| a.data_type().to_string()).collect();
            return Err(error(
                span,
                format!(
                    "Unsupported call: {name}({}) \nIf you think this function should be supported, you can create an issue and start a discussion for it.",
                    types.join(", ")
                ),
            ));
        }
        let Some(window) = &aggregation.window else {
            return Err(mismatch());
        };
        if window.function != function || window.arguments != arguments {
            return Err(mismatch());
        }
        let rowtime = window.window.time_attribute == TimeAttribute::Rowtime;
        // Flink types `_ROWTIME` of a proctime window as its proctime, and `_PROCTIME` of an
        // event-time window as its rowtime.
        let property = match &name[function.len() + 1..] {
            "START" => WindowProperty::Start,
            "END" => WindowProperty::End,
            _ if rowtime => WindowProperty::Rowtime,
            _ => WindowProperty::Proctime,
        };
        let (data_type, _) = property_type(property, &window.window);
        aggregation.properties_used = true;
        Ok(ScalarExpr::Column {
            index: PROPERTY_MARK + PROPERTIES.iter().position(|p| *p == property).unwrap_or(0),
            data_type,
        })
    }

    /// The aggregate over the Calc below, and the Calc above projecting the SELECT list and
    /// filtering on HAVING.
    #[allow(clippy::too_many_arguments)]
    fn aggregate_plan(
        &mut self,
        input: LogicalPlan,
        filter: Option<ScalarExpr>,
        mut aggregation: Aggregation,
        (exprs, mut fields): (Vec<ScalarExpr>, Vec<Field>),
        having: Option<(ScalarExpr, &Expr)>,
        select: &Select,
        position: Span,
    ) -> Result<LogicalPlan, SqlError> {
        let properties = match (&aggregation.window, aggregation.properties_used) {
            (Some(w), true) => window_properties(w.window.time_attribute),
            _ => Vec::new(),
        };
        let keys = aggregation.keys.len();
        let mut placed = Vec::new();
        for (i, e) in exprs.iter().enumerate() {
            let span = select.projection.get(i).map_or(select.span(), |p| p.span());
            placed.push(place(e, &aggregation, &properties, span)?);
        }
        let mut having = match having {
            Some((e, written)) => {
                let placed = place(&e, &aggregation, &properties, written.span())?;
                let placed = if placed.data_type().kind == TypeKind::Null {
                    coerce(placed, &DataType::nullable(TypeKind::Boolean))
                } else {
                    placed
                };
                if placed.data_type().kind != TypeKind::Boolean {
                    return Err(error(
                        written.span(),
                        format!(
                            "HAVING needs a BOOLEAN condition, got {}",
                            placed.data_type().kind
                        ),
                    ));
                }
                Some(placed)
            }
            None => None,
        };
        // A computed key is named after the SELECT item that is the key.
        for (e, f) in placed.iter().zip(&fields) {
            if let ScalarExpr::Column { index, .. } = e
                && *index < keys
            {
                let slot = aggregation.keys[*index];
                if !matches!(aggregation.below[slot], ScalarExpr::Column { .. })
                    && aggregation.below_names[slot].starts_with("$f")
                {
                    aggregation.below_names[slot] = f.name.clone();
                }
            }
        }
        for (j, call) in aggregation.calls.iter_mut().enumerate() {
            if call.name.is_empty() {
                call.name = format!("$f{}", keys + j);
            }
        }
        let input_attrs: Vec<Option<TimeAttribute>> = input
            .schema()
            .fields
            .iter()
            .map(|f| f.time_attribute)
            .collect();
        let below_fields: Vec<Field> = aggregation
            .below
            .iter()
            .zip(&aggregation.below_names)
            .map(|(e, name)| Field {
                name: name.clone(),
                data_type: e.data_type().clone(),
                time_attribute: e.time_attribute(&input_attrs),
            })
            .collect();
        let mut output: Vec<Field> = aggregation
            .keys
            .iter()
            .map(|&k| Field::new(&below_fields[k].name, below_fields[k].data_type.clone()))
            .collect();
        output.extend(
            aggregation
                .calls
                .iter()
                .map(|c| Field::new(&c.name, c.data_type.clone())),
        );
        if let Some(w) = &aggregation.window {
            for &p in &properties {
                let (data_type, time_attribute) = property_type(p, &w.window);
                output.push(Field {
                    name: property_name(p).to_string(),
                    data_type,
                    time_attribute,
                });
            }
        }
        // A key some grouping set leaves out is NULL in that set's rows.
        if !aggregation.sets.is_empty() {
            for (i, &k) in aggregation.keys.iter().enumerate() {
                if aggregation.sets.iter().any(|set| !set.contains(&k)) {
                    output[i].data_type.nullable = true;
                }
            }
            let retyped = |e: &ScalarExpr| {
                e.map_columns(&mut |index, data_type| ScalarExpr::Column {
                    index,
                    data_type: if index < keys {
                        output[index].data_type.clone()
                    } else {
                        data_type.clone()
                    },
                })
            };
            placed = placed.iter().map(retyped).collect();
            having = having.as_ref().map(retyped);
        }
        let output_attrs: Vec<Option<TimeAttribute>> =
            output.iter().map(|f| f.time_attribute).collect();
        for (e, f) in placed.iter().zip(fields.iter_mut()) {
            f.data_type = e.data_type().clone();
            f.time_attribute = e.time_attribute(&output_attrs);
        }
        let window_call = aggregation.window.as_ref().map(|w| WindowCall {
            position: w.position,
            intervals: w.intervals.clone(),
        });
        let aggregate = LogicalAggregate {
            input: Box::new(LogicalPlan::Calc(LogicalCalc {
                input: Box::new(input),
                filter,
                exprs: aggregation.below,
                schema: Schema::new(below_fields),
            })),
            grouping: aggregation.keys,
            // The window reads its item of the Calc below.
            window: aggregation.window.map(|w| GroupWindow {
                time_column: w.position,
                ..w.window
            }),
            window_call,
            aggregates: aggregation.calls,
            properties,
            schema: Schema::new(output),
            position: (position.start.line, position.start.column),
            state_ttl: None,
            grouping_sets: aggregation.sets,
        };
        Ok(LogicalPlan::Calc(LogicalCalc {
            input: Box::new(LogicalPlan::Aggregate(aggregate)),
            filter: having,
            exprs: placed,
            schema: Schema::new(fields),
        }))
    }

    /// The FROM items: each a table with its joins, items separated by commas joined as a
    /// cross join (Calcite's `condition=[true]`, the WHERE staying above).
    fn bind_from(
        &mut self,
        from: &[ast::TableWithJoins],
    ) -> Result<(LogicalPlan, Vec<ScopeColumn>), SqlError> {
        let mut bound: Option<(LogicalPlan, Vec<ScopeColumn>)> = None;
        for item in from {
            let mut side = self.bind_table_factor(&item.relation)?;
            for join in &item.joins {
                let right = self.bind_table_factor(&join.relation)?;
                side = self.bind_join(side, right, join)?;
            }
            bound = Some(match bound {
                None => side,
                Some(left) => joined(left, side, JoinType::Inner, true_literal(), None),
            });
        }
        Ok(bound.expect("a FROM clause has an item"))
    }

    /// `left <kind> JOIN right ON condition` (or `CROSS JOIN right`), with the STATE_TTL
    /// hint's TTLs of its inputs.
    fn bind_join(
        &mut self,
        left: (LogicalPlan, Vec<ScopeColumn>),
        right: (LogicalPlan, Vec<ScopeColumn>),
        join: &ast::Join,
    ) -> Result<(LogicalPlan, Vec<ScopeColumn>), SqlError> {
        let ttl = [self.take_state_ttl(&left.1), self.take_state_ttl(&right.1)];
        let (mut plan, scope) = self.bind_join_of(left, right, join)?;
        if let LogicalPlan::Join(j) = &mut plan {
            j.state_ttl = ttl;
        }
        Ok((plan, scope))
    }

    fn bind_join_of(
        &mut self,
        left: (LogicalPlan, Vec<ScopeColumn>),
        right: (LogicalPlan, Vec<ScopeColumn>),
        join: &ast::Join,
    ) -> Result<(LogicalPlan, Vec<ScopeColumn>), SqlError> {
        use ast::{JoinConstraint, JoinOperator};
        let span = join.relation.span();
        let temporal = match &join.relation {
            TableFactor::Table {
                version: Some(version),
                ..
            } => Some((
                self.bind_period(version, &left.1)?,
                (span.start.line, span.start.column),
            )),
            _ => None,
        };
        let (join_type, constraint) = match &join.join_operator {
            JoinOperator::Join(c) | JoinOperator::Inner(c) => (JoinType::Inner, c),
            JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (JoinType::Left, c),
            JoinOperator::Right(c) | JoinOperator::RightOuter(c) => (JoinType::Right, c),
            JoinOperator::FullOuter(c) => (JoinType::Full, c),
            JoinOperator::CrossJoin(JoinConstraint::None) if temporal.is_none() => {
                return Ok(joined(left, right, JoinType::Inner, true_literal(), None));
            }
            _ => return Err(error(span, "this kind of join is not supported")),
        };
        let on = match constraint {
            JoinConstraint::On(on) => on,
            JoinConstraint::None => {
                return Err(error(
                    span,
                    "INNER, LEFT, RIGHT or FULL join requires a condition (NATURAL keyword or ON or USING clause)",
                ));
            }
            _ => {
                return Err(error(
                    span,
                    "joins with USING or NATURAL are not supported yet",
                ));
            }
        };
        let scope: Vec<ScopeColumn> = left.1.iter().chain(&right.1).cloned().collect();
        let mut condition = self.bind_expr(on, &scope)?;
        if condition.data_type().kind == TypeKind::Null {
            condition = coerce(condition, &DataType::nullable(TypeKind::Boolean));
        }
        if condition.data_type().kind != TypeKind::Boolean {
            return Err(error(
                on.span(),
                format!(
                    "JOIN ON needs a BOOLEAN condition, got {}",
                    condition.data_type().kind
                ),
            ));
        }
        if let Some(period) = temporal {
            if !matches!(join_type, JoinType::Inner | JoinType::Left) {
                return Err(error(
                    span,
                    format!(
                        "Unsupported join type for temporal join: {}. Only INNER JOIN and LEFT JOIN are supported.",
                        join_type.calcite_name().to_uppercase()
                    ),
                ));
            }
            return Ok(joined(
                left,
                right,
                join_type,
                condition,
                Some(Some(period)),
            ));
        }
        // Bounds on both sides' event times make an interval join, whose output keeps them.
        let attributes: Vec<Option<TimeAttribute>> =
            scope.iter().map(|c| c.field.time_attribute).collect();
        let interval = crate::plan::stream::interval_join::window_bounds(
            &crate::plan::stream::translate::conjuncts(&condition),
            left.1.len(),
            &attributes,
        )
        .is_some();
        // So does a window join (both inputs windowed alike, on equal window bounds).
        let windowed = !interval && joins_windows(&left.0, &right.0, &condition);
        Ok(joined(
            left,
            right,
            join_type,
            condition,
            (interval || windowed).then_some(None),
        ))
    }

    /// `FOR SYSTEM_TIME AS OF left.rowtime`: the left's column, which must be its rowtime
    /// (Flink runs a processing-time temporal join only against a lookup source).
    fn bind_period(
        &mut self,
        version: &ast::TableVersion,
        left: &[ScopeColumn],
    ) -> Result<usize, SqlError> {
        let ast::TableVersion::ForSystemTimeAsOf(period) = version else {
            return Err(error(
                Span::empty(),
                "only FOR SYSTEM_TIME AS OF is supported",
            ));
        };
        let bound = self.bind_expr(period, left)?;
        if !matches!(
            bound.data_type().kind,
            TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_)
        ) {
            return Err(error(
                period.span(),
                format!(
                    "The system time period specification expects Timestamp type but is '{}'",
                    calcite_type_name(&bound.data_type().kind)
                ),
            ));
        }
        match bound {
            ScalarExpr::Column { index, .. } => match left[index].field.time_attribute {
                Some(TimeAttribute::Rowtime) => Ok(index),
                Some(TimeAttribute::Proctime) => Err(error(
                    period.span(),
                    "Processing-time temporal join is not supported yet.",
                )),
                None => Err(error(
                    period.span(),
                    "Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' left table's time attribute field",
                )),
            },
            _ => Err(error(
                period.span(),
                "Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' left table's time attribute field",
            )),
        }
    }

    fn bind_table_factor(
        &mut self,
        factor: &TableFactor,
    ) -> Result<(LogicalPlan, Vec<ScopeColumn>), SqlError> {
        match factor {
            TableFactor::Table {
                name, alias, args, ..
            } => {
                if args.is_some() {
                    return Err(error(name.span(), "table functions are not supported yet"));
                }
                let (table_name, plan) = self.bind_relation_name(name)?;
                let qualifier = alias
                    .as_ref()
                    .map_or(table_name.clone(), |a| a.name.value.clone());
                let plan = renamed_by_alias(plan, alias.as_ref())?;
                Ok(scoped(plan, Some(qualifier)))
            }
            TableFactor::Derived {
                subquery,
                alias,
                lateral,
                ..
            } => {
                if *lateral {
                    return Err(error(factor.span(), "LATERAL is not supported yet"));
                }
                let plan = self.bind_query(subquery)?;
                let plan = renamed_by_alias(plan, alias.as_ref())?;
                Ok(scoped(plan, alias.as_ref().map(|a| a.name.value.clone())))
            }
            TableFactor::TableFunction {
                expr: Expr::Function(f),
                alias,
            } if matches!(
                object_name_last(&f.name).to_uppercase().as_str(),
                "TUMBLE" | "HOP" | "CUMULATE" | "SESSION"
            ) =>
            {
                let plan = self.bind_window_table_function(f, factor.span())?;
                let plan = renamed_by_alias(plan, alias.as_ref())?;
                Ok(scoped(plan, alias.as_ref().map(|a| a.name.value.clone())))
            }
            TableFactor::TableFunction { expr, .. } => {
                let name = match expr {
                    Expr::Function(f) => object_name_last(&f.name).to_uppercase(),
                    _ => "TABLE".to_string(),
                };
                Err(error(
                    factor.span(),
                    format!("table function {name} is not supported yet"),
                ))
            }
            other => Err(error(
                other.span(),
                "this kind of FROM item is not supported yet",
            )),
        }
    }

    /// `TUMBLE(TABLE t, DESCRIPTOR(c), size [, offset])`, `HOP(…, slide, size [, offset])`,
    /// `CUMULATE(…, step, size [, offset])`, arguments by position or all by name: the input's
    /// columns plus `window_start`, `window_end` and `window_time`.
    fn bind_window_table_function(
        &mut self,
        f: &ast::Function,
        span: Span,
    ) -> Result<LogicalPlan, SqlError> {
        let function: &'static str = match object_name_last(&f.name).to_uppercase().as_str() {
            "TUMBLE" => "TUMBLE",
            "HOP" => "HOP",
            "SESSION" => "SESSION",
            _ => "CUMULATE",
        };
        let (parameters, signature): (&[&str], &str) = match function {
            "TUMBLE" => (
                &["DATA", "TIMECOL", "SIZE", "OFFSET"],
                "TUMBLE(TABLE table_name, DESCRIPTOR(timecol), datetime interval[, datetime interval])",
            ),
            "HOP" => (
                &["DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"],
                "HOP(TABLE table_name, DESCRIPTOR(timecol), datetime interval, datetime interval[, datetime interval])",
            ),
            "SESSION" => (
                &["DATA", "TIMECOL", "GAP"],
                "SESSION(TABLE table_name [PARTITION BY (key, …)], DESCRIPTOR(timecol), datetime interval)",
            ),
            _ => (
                &["DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"],
                "CUMULATE(TABLE table_name, DESCRIPTOR(timecol), datetime interval, datetime interval[, datetime interval])",
            ),
        };
        // Every window but SESSION takes an optional offset last.
        let has_offset = parameters.last() == Some(&"OFFSET");
        let list: &[FunctionArg] = match &f.args {
            FunctionArguments::List(list) => &list.args,
            _ => &[],
        };
        let mut given: Vec<Option<&Expr>> = vec![None; parameters.len()];
        let named = list.iter().any(|a| !matches!(a, FunctionArg::Unnamed(_)));
        for (i, arg) in list.iter().enumerate() {
            let (slot, e) = match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) if !named => (Some(i), e),
                FunctionArg::Named {
                    name,
                    arg: FunctionArgExpr::Expr(e),
                    ..
                } => (
                    parameters
                        .iter()
                        .position(|p| p.eq_ignore_ascii_case(&name.value)),
                    e,
                ),
                other => {
                    return Err(error(
                        other.span(),
                        format!(
                            "the arguments of {function} are either all positional or all named"
                        ),
                    ));
                }
            };
            match slot {
                Some(slot) if slot < parameters.len() && given[slot].is_none() => {
                    given[slot] = Some(e)
                }
                _ => {
                    return Err(error(
                        arg.span(),
                        format!("Invalid arguments to {signature}"),
                    ));
                }
            }
        }
        let required = parameters.len() - usize::from(has_offset);
        if given[..required].iter().any(Option::is_none) {
            return Err(error(
                span,
                format!(
                    "Invalid number of arguments to function '{function}'. Was expecting {} arguments",
                    required
                ),
            ));
        }
        let mut partition_by: &[Expr] = &[];
        let table = match given[0] {
            Some(Expr::Prefixed { prefix, value })
                if prefix.value.eq_ignore_ascii_case("TABLE") =>
            {
                let mut value = value.as_ref();
                if let Expr::Prefixed {
                    prefix,
                    value: keyed,
                } = value
                    && prefix.value == "PARTITION BY"
                    && let Expr::Tuple(items) = keyed.as_ref()
                    && let [table, keys @ ..] = items.as_slice()
                {
                    if function != "SESSION" {
                        return Err(error(
                            prefix.span,
                            format!("{function} takes no PARTITION BY"),
                        ));
                    }
                    value = table;
                    partition_by = keys;
                }
                match value {
                    Expr::Identifier(ident) => ast::ObjectName::from(vec![ident.clone()]),
                    Expr::CompoundIdentifier(idents) => ast::ObjectName::from(idents.clone()),
                    other => return Err(error(other.span(), "expected a table name")),
                }
            }
            Some(other) => {
                return Err(error(
                    other.span(),
                    format!("the first argument of {function} must be TABLE name"),
                ));
            }
            None => unreachable!("checked above"),
        };
        let (_, input) = self.bind_relation_name(&table)?;
        let scope = scope_of(input.schema(), None);
        let mut partition = Vec::new();
        for key in partition_by {
            match self.bind_expr(key, &scope)? {
                ScalarExpr::Column { index, .. } => partition.push(index),
                _ => {
                    return Err(error(
                        key.span(),
                        "SESSION's PARTITION BY takes columns of its table",
                    ));
                }
            }
        }
        let descriptor = given[1].expect("checked above");
        let column = match descriptor {
            Expr::Function(d) if object_name_last(&d.name).eq_ignore_ascii_case("DESCRIPTOR") => {
                match &d.args {
                    FunctionArguments::List(l) => match l.args.as_slice() {
                        [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Identifier(c)))] => c,
                        _ => {
                            return Err(error(
                                descriptor.span(),
                                format!("{function} takes one column in DESCRIPTOR"),
                            ));
                        }
                    },
                    _ => {
                        return Err(error(
                            descriptor.span(),
                            format!("{function} takes one column in DESCRIPTOR"),
                        ));
                    }
                }
            }
            // Not a descriptor: Calcite resolves it as a column of no table.
            Expr::Identifier(c) => {
                return Err(error(
                    descriptor.span(),
                    format!("Column '{}' not found in any table", c.value),
                ));
            }
            other => {
                return Err(error(
                    other.span(),
                    format!("the time column of {function} must be given as DESCRIPTOR(column)"),
                ));
            }
        };
        let Some(time_column) = input.schema().index_of(&column.value) else {
            return Err(error(
                column.span,
                format!("Column '{}' not found in table", column.value),
            ));
        };
        let time_field = input.schema().fields[time_column].clone();
        if !matches!(
            time_field.data_type.kind,
            TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_)
        ) {
            return Err(error(
                span,
                format!(
                    "The window function {signature} requires the timecol to be TIMESTAMP or TIMESTAMP_LTZ, but is {}.",
                    calcite_type_name(&time_field.data_type.kind)
                ),
            ));
        }
        let Some(time_attribute) = time_field.time_attribute else {
            return Err(error(
                span,
                format!(
                    "The window function {signature} requires the timecol is a time attribute type, but is {}.",
                    time_field.data_type.with_nullable(true)
                ),
            ));
        };
        let mut millis = Vec::new();
        let mut intervals = Vec::new();
        for e in given[2..].iter().flatten() {
            let (ms, text, _) = self.interval_argument(e, &scope, function)?;
            millis.push(ms);
            intervals.push(text);
        }
        let offset = if has_offset && given[parameters.len() - 1].is_some() {
            millis[millis.len() - 1]
        } else {
            0
        };
        let kind = match (function, millis.as_slice()) {
            ("TUMBLE", &[size, ..]) => {
                if size <= 0 {
                    return Err(error(
                        span,
                        format!(
                            "TUMBLE table function based aggregate requires size to be positive, but got {size} ms."
                        ),
                    ));
                }
                GroupWindowKind::Tumble { size }
            }
            ("HOP", &[slide, size, ..]) => {
                if slide <= 0 || size <= 0 {
                    return Err(error(
                        span,
                        format!(
                            "HOP table function based aggregate requires slide and size to be positive, but got slide {slide} ms and size {size} ms."
                        ),
                    ));
                }
                GroupWindowKind::Hop { slide, size }
            }
            ("SESSION", &[gap]) => {
                if gap <= 0 {
                    return Err(error(
                        span,
                        format!(
                            "SESSION table function based aggregate requires gap to be positive, but got gap {gap} ms."
                        ),
                    ));
                }
                GroupWindowKind::Session { gap }
            }
            ("CUMULATE", &[step, size, ..]) => {
                if step <= 0 || size <= 0 {
                    return Err(error(
                        span,
                        format!(
                            "CUMULATE table function based aggregate requires maxSize and step to be positive, but got maxSize {size} ms and step {step} ms."
                        ),
                    ));
                }
                if size % step != 0 {
                    return Err(error(
                        span,
                        format!(
                            "CUMULATE table function based aggregate requires maxSize must be an integral multiple of step, but got maxSize {size} ms and step {step} ms."
                        ),
                    ));
                }
                GroupWindowKind::Cumulate { step, size }
            }
            _ => return Err(error(span, format!("invalid arguments to {function}"))),
        };
        let window = GroupWindow {
            kind,
            time_column,
            time_attribute,
            time_type: time_field.data_type.clone(),
            offset,
        };
        let mut fields = input.schema().fields.clone();
        fields.push(Field::new(
            "window_start",
            DataType::not_null(TypeKind::Timestamp(3)),
        ));
        fields.push(Field::new(
            "window_end",
            DataType::not_null(TypeKind::Timestamp(3)),
        ));
        let time_kind = match time_field.data_type.kind {
            TypeKind::TimestampLtz(_) => TypeKind::TimestampLtz(3),
            _ => TypeKind::Timestamp(3),
        };
        fields.push(Field {
            name: "window_time".into(),
            data_type: DataType::not_null(time_kind),
            time_attribute: Some(time_attribute),
        });
        Ok(LogicalPlan::WindowTableFunction(
            LogicalWindowTableFunction {
                input: Box::new(input),
                function,
                partition,
                window,
                column: column.value.clone(),
                intervals,
                schema: Schema::new(fields),
            },
        ))
    }

    /// An interval literal argument of a window function (a group window or a windowing
    /// TVF): its milliseconds, its text in the abstract syntax tree (`5000:INTERVAL SECOND`),
    /// and the bound literal.
    fn interval_argument(
        &mut self,
        arg: &Expr,
        scope: &[ScopeColumn],
        function: &str,
    ) -> Result<(i64, String, ScalarExpr), SqlError> {
        let bound = self.bind_expr(arg, scope)?;
        match (&bound, arg) {
            (
                ScalarExpr::Literal {
                    value: Value::IntervalMillis(ms),
                    ..
                },
                Expr::Interval(interval),
            ) => {
                let unit = |f: &Option<ast::DateTimeField>| {
                    f.as_ref()
                        .map(|f| f.to_string().trim_end_matches('S').to_string())
                };
                let qualifier = match (unit(&interval.leading_field), unit(&interval.last_field)) {
                    (Some(leading), Some(last)) => format!("{leading} TO {last}"),
                    (Some(leading), None) => leading,
                    _ => "SECOND".to_string(),
                };
                let text = format!("{ms}:INTERVAL {qualifier}");
                Ok((*ms, text, bound.clone()))
            }
            (
                ScalarExpr::Literal {
                    value: Value::IntervalMonths(_),
                    ..
                },
                _,
            ) => Err(error(
                arg.span(),
                "Window aggregate only support SECOND, MINUTE, HOUR, DAY as the time unit. MONTH and YEAR time unit are not supported yet.",
            )),
            _ => Err(error(
                arg.span(),
                format!("the size of a {function} window must be an interval literal"),
            )),
        }
    }

    /// A table, view or CTE by name: its name as the session resolves it, and its plan.
    fn bind_relation_name(
        &mut self,
        name: &ast::ObjectName,
    ) -> Result<(String, LogicalPlan), SqlError> {
        // A catalog or database other than the session's: not found.
        let table_name = session_object_name(name)
            .map_err(|_| error(name.span(), format!("Object '{name}' not found")))?;
        let plan = if let Some(plan) = self.ctes.get(&table_name) {
            plan.clone()
        } else {
            match self.catalog.get(&table_name) {
                Some(CatalogEntry::Table(table)) => {
                    let hint = self.hint_after(name.span());
                    self.scan_table(table, hint)?
                }
                Some(CatalogEntry::View(view)) => {
                    if self.expanding.iter().any(|(v, _)| v == &table_name) {
                        return Err(view_cycle(&self.expanding, &table_name));
                    }
                    let mut binder = Binder::new(self.catalog, &[]);
                    binder.expanding = self.expanding.clone();
                    binder.expanding.push((table_name.clone(), name.span()));
                    let plan = binder.bind_query(&view.query)?;
                    rename(
                        plan,
                        &view
                            .schema
                            .fields
                            .iter()
                            .map(|f| f.name.clone())
                            .collect::<Vec<_>>(),
                        name.span(),
                    )?
                }
                None => {
                    return Err(error(
                        name.span(),
                        format!("Object '{table_name}' not found"),
                    ));
                }
            }
        };
        Ok((table_name, plan))
    }

    /// The `/*+ OPTIONS(…) */` hint written right after a table name.
    fn hint_after(&self, name: Span) -> Option<&'a TableHint> {
        self.hints.iter().find(|h| {
            h.name == "OPTIONS"
                && (h.follows.line, h.follows.column) == (name.end.line, name.end.column)
        })
    }

    /// A sink table with the `OPTIONS` hint written right after its name in an `INSERT`
    /// applied, as Flink applies sink hints.
    pub fn sink_table(&self, table: &Arc<TableDef>, name: Span) -> Result<Arc<TableDef>, SqlError> {
        with_hint(table, self.hint_after(name))
    }

    /// A table as a query sees it: the connector's physical columns, then the computed
    /// columns evaluated over them, in declared order.
    fn scan_table(
        &self,
        table: &Arc<TableDef>,
        hint: Option<&TableHint>,
    ) -> Result<LogicalPlan, SqlError> {
        let table = with_hint(table, hint)?;
        let physical = table.physical_schema();
        let physical_scope = scope_of(&physical, None);
        // Metadata columns read their key's value after the physical columns.
        let mut metadata: Vec<String> = Vec::new();
        let mut scan_fields = physical.fields.clone();
        for column in &table.columns {
            if let ColumnSource::Metadata { key, .. } = &column.source {
                let key = key.clone().unwrap_or_else(|| column.name.clone());
                if !metadata.contains(&key) {
                    let kind = metadata_kind(&table, &key, &column.name)?;
                    scan_fields.push(Field::new(&key, DataType::not_null(kind)));
                    metadata.push(key);
                }
            }
        }
        let scan = LogicalPlan::Scan(LogicalScan {
            table: table.clone(),
            schema: Schema::new(scan_fields.clone()),
            metadata: metadata.clone(),
        });
        let plan = if table
            .columns
            .iter()
            .all(|c| matches!(c.source, ColumnSource::Physical))
        {
            scan
        } else {
            self.computed_columns(
                &table,
                scan,
                &physical,
                &physical_scope,
                &metadata,
                &scan_fields,
            )?
        };
        let Some(spec) = &table.watermark else {
            return Ok(with_provided_rowtime(plan, &table));
        };
        // The watermark sees the table's columns; the rowtime attribute starts at the
        // assigner (the columns below it are plain timestamps).
        let scope = scope_of(plan.schema(), None);
        let watermark = Binder::new(self.catalog, &[]).bind_expr(&spec.expr, &scope)?;
        let mut schema = plan.schema().clone();
        let rowtime = schema.index_of(&spec.column).ok_or_else(|| {
            SqlError::new(
                format!("watermark column '{}' does not exist", spec.column),
                0,
                0,
            )
        })?;
        schema.fields[rowtime].time_attribute = Some(TimeAttribute::Rowtime);
        Ok(LogicalPlan::WatermarkAssigner(LogicalWatermarkAssigner {
            input: Box::new(plan),
            rowtime,
            watermark,
            schema,
        }))
    }

    /// The Calc that evaluates a table's computed and metadata columns over its physical
    /// ones, every column in declared order.
    fn computed_columns(
        &self,
        table: &TableDef,
        scan: LogicalPlan,
        physical: &Schema,
        physical_scope: &[ScopeColumn],
        metadata: &[String],
        scan_fields: &[Field],
    ) -> Result<LogicalPlan, SqlError> {
        let mut exprs = Vec::new();
        let mut fields = Vec::new();
        let mut binder = Binder::new(self.catalog, &[]);
        for column in &table.columns {
            let expr = match &column.source {
                ColumnSource::Physical => {
                    let index = physical.index_of(&column.name).unwrap_or(0);
                    ScalarExpr::Column {
                        index,
                        data_type: column.data_type.clone(),
                    }
                }
                ColumnSource::Computed { expr, .. } => binder.bind_expr(expr, physical_scope)?,
                ColumnSource::Metadata { key, .. } => {
                    let key = key.as_deref().unwrap_or(&column.name);
                    let at = metadata.iter().position(|k| k == key).unwrap_or(0);
                    let index = physical.len() + at;
                    coerce(
                        ScalarExpr::Column {
                            index,
                            data_type: scan_fields[index].data_type.clone(),
                        },
                        &column.data_type,
                    )
                }
            };
            exprs.push(expr);
            fields.push(Field {
                name: column.name.clone(),
                data_type: column.data_type.clone(),
                time_attribute: column
                    .time_attribute
                    .filter(|a| *a == TimeAttribute::Proctime),
            });
        }
        Ok(LogicalPlan::Calc(LogicalCalc {
            input: Box::new(scan),
            filter: None,
            exprs,
            schema: Schema::new(fields),
        }))
    }

    /// Validates a CREATE TABLE and derives the types of its computed columns.
    pub fn bind_create_table(&mut self, create: &CreateTable) -> Result<TableDef, SqlError> {
        let name = object_name_last(&create.name);
        let mut columns: Vec<TableColumn> = Vec::new();
        // Computed columns see the physical ones, primary key columns as NOT NULL.
        let in_key = |name: &str| {
            create
                .primary_key
                .as_ref()
                .is_some_and(|pk| pk.iter().any(|k| k == name))
        };
        let physical_scope: Vec<ScopeColumn> = create
            .columns
            .iter()
            .filter_map(|c| match &c.kind {
                ColumnKind::Physical(t) => Some(ScopeColumn {
                    qualifier: None,
                    field: Field::new(
                        c.name.clone(),
                        if in_key(&c.name) {
                            millisecond_time(t).with_nullable(false)
                        } else {
                            millisecond_time(t)
                        },
                    ),
                }),
                _ => None,
            })
            .collect();
        for column in &create.columns {
            if columns.iter().any(|c| c.name == column.name) {
                return Err(SqlError::new(
                    format!("duplicate column '{}'", column.name),
                    column.position.line,
                    column.position.column,
                ));
            }
            let (data_type, source, time_attribute) = match &column.kind {
                ColumnKind::Physical(t) => (millisecond_time(t), ColumnSource::Physical, None),
                ColumnKind::Computed(expr) => {
                    let bound = self.bind_expr(expr, &physical_scope)?;
                    let attr = bound.time_attribute(&[]);
                    (
                        bound.data_type().clone(),
                        ColumnSource::Computed {
                            expr: expr.clone(),
                            text: unparse(expr),
                        },
                        attr,
                    )
                }
                ColumnKind::Metadata {
                    data_type,
                    key,
                    is_virtual,
                } => (
                    data_type.clone(),
                    ColumnSource::Metadata {
                        key: key.clone(),
                        is_virtual: *is_virtual,
                    },
                    None,
                ),
            };
            columns.push(TableColumn {
                name: column.name.clone(),
                data_type,
                source,
                time_attribute,
                comment: column.comment.clone(),
            });
        }
        if let Some(pk) = &create.primary_key {
            // Flink's messages, each at the key column it is about.
            for (i, key) in pk.iter().enumerate() {
                let at = |message: String| match create.primary_key_at.get(i) {
                    Some(p) => SqlError::new(message, p.line, p.column),
                    None => SqlError::without_position(message),
                };
                match columns.iter_mut().find(|c| &c.name == key) {
                    Some(c) if matches!(c.source, ColumnSource::Physical) => {
                        c.data_type.nullable = false
                    }
                    Some(_) => {
                        return Err(at(format!(
                            "Could not create a PRIMARY KEY with column '{key}'"
                        )));
                    }
                    None => {
                        return Err(at(format!(
                            "Primary key column '{key}' is not defined in the schema"
                        )));
                    }
                }
            }
            let mut seen = std::collections::HashSet::new();
            let repeated: Vec<&str> = pk
                .iter()
                .filter(|k| !seen.insert(k.as_str()))
                .map(String::as_str)
                .collect();
            if !repeated.is_empty() {
                let mut repeated = repeated;
                repeated.dedup();
                return Err(SqlError::new(
                    format!(
                        "Invalid primary key 'PK_{}'. A primary key must not contain duplicate columns. Found: [{}]",
                        pk.join("_"),
                        repeated.join(", ")
                    ),
                    create.primary_key_at.first().map_or(0, |p| p.line),
                    create.primary_key_at.first().map_or(0, |p| p.column),
                ));
            }
        }
        let watermark = match &create.watermark {
            Some(wm) => {
                let at = |m: String| SqlError::new(m, wm.position.line, wm.position.column);
                let index = columns
                    .iter()
                    .position(|c| c.name == wm.column)
                    .ok_or_else(|| {
                        at(format!("watermark column '{}' does not exist", wm.column))
                    })?;
                if !matches!(columns[index].data_type.kind, TypeKind::Timestamp(p) | TypeKind::TimestampLtz(p) if p <= 3)
                {
                    return Err(at(format!(
                        "the rowtime attribute '{}' must be TIMESTAMP(p) or TIMESTAMP_LTZ(p) with p <= 3, got {}",
                        wm.column, columns[index].data_type.kind
                    )));
                }
                let scope: Vec<ScopeColumn> = columns
                    .iter()
                    .map(|c| ScopeColumn {
                        qualifier: None,
                        field: Field::new(c.name.clone(), c.data_type.clone()),
                    })
                    .collect();
                let bound = self.bind_expr(&wm.expr, &scope)?;
                if !bound.data_type().kind.is_timestamp() {
                    return Err(at(format!(
                        "the watermark expression must return a timestamp, got {}",
                        bound.data_type().kind
                    )));
                }
                columns[index].time_attribute = Some(TimeAttribute::Rowtime);
                Some(WatermarkSpec {
                    column: wm.column.clone(),
                    expr: wm.expr.clone(),
                    text: unparse(&wm.expr),
                })
            }
            None => None,
        };
        // Flink's two checks of `PARTITIONED BY`: the key names a column, and a physical one.
        for key in &create.partition_keys {
            match columns.iter().find(|c| &c.name == key) {
                None => {
                    let names: Vec<String> =
                        columns.iter().map(|c| format!("'{}'", c.name)).collect();
                    return Err(SqlError::without_position(format!(
                        "Partition column '{key}' not defined in the table schema. Available columns: [{}]",
                        names.join(", ")
                    )));
                }
                Some(c) if !matches!(c.source, ColumnSource::Physical) => {
                    let physical: Vec<&str> = columns
                        .iter()
                        .filter(|c| matches!(c.source, ColumnSource::Physical))
                        .map(|c| c.name.as_str())
                        .collect();
                    return Err(SqlError::without_position(format!(
                        "Invalid partition key '{key}'. A partition key must reference a physical column in the schema. Available columns are: [{}]",
                        physical.join(", ")
                    )));
                }
                Some(_) => {}
            }
        }
        Ok(TableDef {
            name,
            columns,
            watermark,
            primary_key: create.primary_key.clone(),
            comment: create.comment.clone(),
            partition_keys: create.partition_keys.clone(),
            options: create.options.clone(),
            provided_source: None,
        })
    }

    /// Binds an expression. The recursion follows the expression's nesting, which has no
    /// bound in the text, so the stack grows on the heap as needed (`stacker`); a bound
    /// expression deeper than [`MAX_EXPR_DEPTH`] is refused, as evaluating and printing it
    /// would recurse as deep again.
    fn bind_expr(&mut self, expr: &Expr, scope: &[ScopeColumn]) -> Result<ScalarExpr, SqlError> {
        self.nesting += 1;
        let bound = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            self.bind_expr_nested(expr, scope)
        });
        self.nesting -= 1;
        let bound = bound?;
        if self.nesting == 0 {
            let depth = bound.depth();
            if depth > MAX_EXPR_DEPTH {
                return Err(error(
                    expr.span(),
                    format!(
                        "expression is nested too deeply: {depth} levels, at most {MAX_EXPR_DEPTH} are supported"
                    ),
                ));
            }
        }
        Ok(bound)
    }

    fn bind_expr_nested(
        &mut self,
        expr: &Expr,
        scope: &[ScopeColumn],
    ) -> Result<ScalarExpr, SqlError> {
        // Before `span()`, which recurses through the whole chain.
        if let Expr::BinaryOp { .. } = expr {
            return self.bind_operator_chain(expr, scope);
        }
        let span = expr.span();
        match expr {
            Expr::Identifier(ident) => {
                let column = resolve_column(scope, None, &ident.value, span)?;
                if let (Some(agg), ScalarExpr::Column { index, .. }) =
                    (&mut self.aggregation, &column)
                    && agg.inside.is_none()
                {
                    agg.column_spans.push((*index, span));
                }
                Ok(column)
            }
            Expr::CompoundIdentifier(parts) => {
                let names: Vec<&str> = parts.iter().map(|p| p.value.as_str()).collect();
                // The readings, in order: `t.c.f…` (a qualified column, then fields),
                // `c.f…` (a column, then fields), then `db.t.c…` and `cat.db.t.c…` (prefixes
                // before the table).
                let mut first_error = None;
                for skip in 0..names.len().saturating_sub(1) {
                    let (q, c, rest) = (names[skip], names[skip + 1], &names[skip + 2..]);
                    match resolve_column(scope, Some(q), c, span) {
                        Ok(column) => {
                            if let (Some(agg), ScalarExpr::Column { index, .. }) =
                                (&mut self.aggregation, &column)
                                && agg.inside.is_none()
                            {
                                agg.column_spans.push((*index, span));
                            }
                            return rest
                                .iter()
                                .try_fold(column, |value, name| field_access(value, name, span));
                        }
                        Err(e) => {
                            first_error.get_or_insert(e);
                        }
                    }
                    if skip == 0
                        && let Ok(column) = resolve_column(scope, None, q, span)
                    {
                        return names[1..]
                            .iter()
                            .try_fold(column, |value, name| field_access(value, name, span));
                    }
                }
                Err(first_error.unwrap_or_else(|| error(span, "invalid column reference")))
            }
            Expr::Value(v) => literal(&v.value, span),
            Expr::TypedString(ts) => {
                let text = match &ts.value.value {
                    ast::Value::SingleQuotedString(s) => s.clone(),
                    other => other.to_string(),
                };
                typed_literal(&ts.data_type, &text, span)
            }
            Expr::Interval(interval) => interval_literal(interval, span),
            Expr::Nested(inner) => self.bind_expr(inner, scope),
            // A minus written before a number is part of the literal, as in Calcite:
            // `-2147483648` is an INT, `-9223372036854775809` out of range.
            Expr::UnaryOp {
                op: UnaryOperator::Minus,
                expr: inner,
            } if unparenthesized_number(inner).is_some() => {
                let text = unparenthesized_number(inner).unwrap_or_default();
                number_literal(&format!("-{text}"), span)
            }
            Expr::UnaryOp { op, expr: inner } => {
                let arg = self.bind_expr(inner, scope)?;
                match op {
                    UnaryOperator::Not => self.call("NOT", vec![arg], span),
                    UnaryOperator::Plus => Ok(arg),
                    UnaryOperator::Minus => match arg {
                        ScalarExpr::Literal {
                            value: Value::Int(v),
                            data_type,
                        } => Ok(ScalarExpr::Literal {
                            value: Value::Int(v.wrapping_neg()),
                            data_type,
                        }),
                        ScalarExpr::Literal {
                            value: Value::Decimal(v),
                            data_type,
                        } => Ok(ScalarExpr::Literal {
                            value: Value::Decimal(-v),
                            data_type,
                        }),
                        ScalarExpr::Literal {
                            value: Value::Float(v),
                            data_type,
                        } => Ok(ScalarExpr::Literal {
                            // Flink's parser reads `-0.0e0` as one decimal literal, whose
                            // zero has no sign; a negated expression keeps Java's -0.0.
                            value: Value::Float(if v == 0.0 && matches!(**inner, Expr::Value(_)) {
                                0.0
                            } else {
                                -v
                            }),
                            data_type,
                        }),
                        other => self.call("NEGATE", vec![other], span),
                    },
                    other => Err(error(span, format!("operator {other} is not supported"))),
                }
            }
            Expr::IsNull(e) => self.unary_call("IS NULL", e, scope, span),
            Expr::IsNotNull(e) => self.unary_call("IS NOT NULL", e, scope, span),
            Expr::IsTrue(e) => self.unary_call("IS TRUE", e, scope, span),
            Expr::IsNotTrue(e) => self.unary_call("IS NOT TRUE", e, scope, span),
            Expr::IsFalse(e) => self.unary_call("IS FALSE", e, scope, span),
            Expr::IsNotFalse(e) => self.unary_call("IS NOT FALSE", e, scope, span),
            Expr::IsUnknown(e) => self.unary_call("IS NULL", e, scope, span),
            Expr::IsNotUnknown(e) => self.unary_call("IS NOT NULL", e, scope, span),
            Expr::IsDistinctFrom(a, b) => {
                let args = vec![self.bind_expr(a, scope)?, self.bind_expr(b, scope)?];
                self.call("IS DISTINCT FROM", args, span)
            }
            Expr::IsNotDistinctFrom(a, b) => {
                let args = vec![self.bind_expr(a, scope)?, self.bind_expr(b, scope)?];
                self.call("IS NOT DISTINCT FROM", args, span)
            }
            Expr::Between {
                expr: e,
                negated,
                low,
                high,
            } => {
                let value = self.bind_expr(e, scope)?;
                let low = self.bind_expr(low, scope)?;
                let high = self.bind_expr(high, scope)?;
                let ge = self.call(">=", vec![value.clone(), low], span)?;
                let le = self.call("<=", vec![value, high], span)?;
                let both = self.call("AND", vec![ge, le], span)?;
                self.negate_if(*negated, both, span)
            }
            Expr::In {
                expr: e,
                target,
                negated,
                ..
            } => {
                let ast::InTarget::List(list) = target else {
                    return Err(error(span, "IN with a subquery is not supported yet"));
                };
                let value = self.bind_expr(e, scope)?;
                let items = list
                    .iter()
                    .map(|item| self.bind_expr(item, scope))
                    .collect::<Result<Vec<_>, _>>()?;
                let test = self.in_list(value, items, span)?;
                self.negate_if(*negated, test, span)
            }
            Expr::Like {
                negated,
                expr: e,
                pattern,
                escape_char,
                any,
            } => {
                if *any {
                    return Err(error(span, "LIKE ANY is not supported"));
                }
                let like =
                    self.pattern_match("LIKE", e, pattern, escape_char.as_deref(), scope, span)?;
                self.negate_if(*negated, like, span)
            }
            Expr::SimilarTo {
                negated,
                expr: e,
                pattern,
                escape_char,
            } => {
                let similar = self.pattern_match(
                    "SIMILAR TO",
                    e,
                    pattern,
                    escape_char.as_deref(),
                    scope,
                    span,
                )?;
                self.negate_if(*negated, similar, span)
            }
            Expr::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let operand = operand
                    .as_ref()
                    .map(|o| self.bind_expr(o, scope))
                    .transpose()?;
                let mut branches = Vec::new();
                for when in conditions {
                    let cond = self.bind_expr(&when.condition, scope)?;
                    let cond = match &operand {
                        Some(op) => {
                            self.call("=", vec![op.clone(), cond], when.condition.span())?
                        }
                        None => cond,
                    };
                    if !matches!(cond.data_type().kind, TypeKind::Boolean | TypeKind::Null) {
                        return Err(error(
                            when.condition.span(),
                            "CASE WHEN needs a BOOLEAN condition",
                        ));
                    }
                    branches.push((cond, self.bind_expr(&when.result, scope)?));
                }
                let otherwise = else_result
                    .as_ref()
                    .map(|e| self.bind_expr(e, scope))
                    .transpose()?;
                case(branches, otherwise, span)
            }
            Expr::Cast {
                kind,
                expr: e,
                data_type,
                ..
            } => {
                let value = self.bind_expr(e, scope)?;
                let target = flink_type(data_type, span)?;
                // Flink plans a cast to TIME(p) for p > 3 as one to TIME(3).
                let target = millisecond_time(&target);
                let try_cast = matches!(kind, CastKind::TryCast | CastKind::SafeCast);
                if let Some(qualifier) = interval_qualifier(data_type)
                    && value.data_type().kind != TypeKind::Null
                    && !matches!(
                        value.data_type().kind,
                        TypeKind::IntervalDayTime | TypeKind::IntervalYearMonth
                    )
                    && !value.data_type().kind.is_string()
                {
                    return cast_to_interval(
                        value,
                        is_number_literal(e),
                        qualifier,
                        try_cast,
                        span,
                    );
                }
                if !can_cast(&value.data_type().kind, &target.kind) {
                    return Err(error(
                        span,
                        format!("cannot cast {} to {}", value.data_type().kind, target.kind),
                    ));
                }
                let target = DataType {
                    nullable: value.data_type().nullable
                        || try_cast
                        || target.nullable && value.is_literal_null(),
                    ..target
                };
                if value.data_type().kind == target.kind {
                    return Ok(value);
                }
                Ok(ScalarExpr::Cast {
                    expr: Box::new(value),
                    data_type: target,
                    try_cast,
                })
            }
            // `MAP[k, v, …]` arrives from the dialect as `MAP` prefixing an array literal.
            Expr::Prefixed { prefix, value } if prefix.value.eq_ignore_ascii_case("MAP") => {
                let Expr::Array(array) = value.as_ref() else {
                    return Err(error(span, "MAP expects [key, value, …]"));
                };
                let entries = array
                    .elem
                    .iter()
                    .map(|e| self.bind_expr(e, scope))
                    .collect::<Result<Vec<_>, _>>()?;
                self.call("MAP", entries, span)
            }
            Expr::CompoundFieldAccess { root, access_chain } => {
                let mut value = self.bind_expr(root, scope)?;
                for access in access_chain {
                    if let ast::AccessExpr::Dot(Expr::Identifier(name)) = access {
                        value = field_access(value, &name.value, span)?;
                        continue;
                    }
                    let ast::AccessExpr::Subscript(ast::Subscript::Index { index }) = access else {
                        return Err(error(span, format!("unsupported field access: {expr}")));
                    };
                    let index = self.bind_expr(index, scope)?;
                    if let (
                        TypeKind::Array(_),
                        ScalarExpr::Literal {
                            value: Value::Int(i),
                            ..
                        },
                    ) = (&value.data_type().kind, &index)
                        && *i < 1
                    {
                        return Err(error(
                            span,
                            format!(
                                "Array element access needs an index starting at 1 but was {i}."
                            ),
                        ));
                    }
                    value = self.call("ITEM", vec![value, index], span)?;
                }
                Ok(value)
            }
            Expr::IsJson {
                expr: e,
                kind,
                negated,
                ..
            } => {
                let value = self.bind_expr(e, scope)?;
                let kind = kind.map_or("VALUE".to_string(), |k| k.to_string());
                let test = self.call("IS JSON", vec![value, unit_literal(&kind)], span)?;
                if *negated {
                    self.call("NOT", vec![test], span)
                } else {
                    Ok(test)
                }
            }
            Expr::Array(array) => {
                let elements = array
                    .elem
                    .iter()
                    .map(|e| self.bind_expr(e, scope))
                    .collect::<Result<Vec<_>, _>>()?;
                self.call("ARRAY", elements, span)
            }
            Expr::Extract { field, expr: e, .. } => {
                let unit_name = field.to_string().to_ascii_uppercase();
                let unit = unit_literal(&unit_name);
                let value = self.bind_expr(e, scope)?;
                // A TIME has only the units of a time of day down to milliseconds (Flink's
                // validator says so, in two wordings).
                if matches!(value.data_type().kind, TypeKind::Time(_)) {
                    match unit_name.as_str() {
                        "HOUR" | "MINUTE" | "SECOND" | "MILLISECOND" => {}
                        "MICROSECOND" | "NANOSECOND" => {
                            return Err(error(
                                span,
                                format!(
                                    "unit {unit_name} can not be applied to {} variable",
                                    value.data_type()
                                ),
                            ));
                        }
                        _ => {
                            return Err(error(
                                span,
                                format!("unit {unit_name} can not be applied to time variable"),
                            ));
                        }
                    }
                }
                self.call("EXTRACT", vec![unit, value], span)
            }
            Expr::Floor { expr: e, field } | Expr::Ceil { expr: e, field } => {
                let is_floor = matches!(expr, Expr::Floor { .. });
                let value = self.bind_expr(e, scope)?;
                match field {
                    CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime) => {
                        self.call(if is_floor { "FLOOR" } else { "CEIL" }, vec![value], span)
                    }
                    CeilFloorKind::DateTimeField(unit) => {
                        let unit = unit_literal(&unit.to_string());
                        self.call(
                            if is_floor { "FLOOR_TO" } else { "CEIL_TO" },
                            vec![unit, value],
                            span,
                        )
                    }
                    CeilFloorKind::Scale(scale) => {
                        let scale = literal(&scale.value, span)?;
                        self.call(
                            if is_floor { "FLOOR" } else { "CEIL" },
                            vec![value, scale],
                            span,
                        )
                    }
                }
            }
            Expr::Overlay {
                expr: e,
                overlay_what,
                overlay_from,
                overlay_for,
            } => {
                let mut args = vec![
                    self.bind_expr(e, scope)?,
                    self.bind_expr(overlay_what, scope)?,
                    self.bind_expr(overlay_from, scope)?,
                ];
                if let Some(length) = overlay_for {
                    args.push(self.bind_expr(length, scope)?);
                }
                self.call("OVERLAY", args, span)
            }
            Expr::Position { expr: needle, r#in } => {
                let args = vec![self.bind_expr(needle, scope)?, self.bind_expr(r#in, scope)?];
                self.call("POSITION", args, span)
            }
            Expr::Substring {
                expr: e,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.bind_expr(e, scope)?];
                if let Some(from) = substring_from {
                    args.push(self.bind_expr(from, scope)?);
                }
                if let Some(len) = substring_for {
                    args.push(self.bind_expr(len, scope)?);
                }
                self.call("SUBSTRING", args, span)
            }
            Expr::Trim {
                trim_where,
                trim_what,
                expr: e,
                trim_characters,
            } => {
                let name = match trim_where {
                    Some(TrimWhereField::Leading) => "LTRIM",
                    Some(TrimWhereField::Trailing) => "RTRIM",
                    _ => "TRIM",
                };
                let mut args = vec![self.bind_expr(e, scope)?];
                if let Some(what) = trim_what {
                    args.push(self.bind_expr(what, scope)?);
                } else if let Some(chars) = trim_characters.as_ref().and_then(|c| c.first()) {
                    args.push(self.bind_expr(chars, scope)?);
                }
                self.call(name, args, span)
            }
            Expr::Function(f) => self.bind_function(f, scope, span),
            Expr::Prefixed { prefix, .. } if prefix.value == "ARRAY" => {
                Err(error(prefix.span, "Require at least 1 argument"))
            }
            Expr::Prefixed { prefix, .. } if prefix.value.eq_ignore_ascii_case("TABLE") => {
                Err(error(
                    span,
                    "TABLE arguments are only allowed in table function calls",
                ))
            }
            Expr::Subquery(_) | Expr::Exists { .. } => Err(error(
                span,
                "subqueries in expressions are not supported yet",
            )),
            other => Err(error(span, format!("unsupported expression: {other}"))),
        }
    }

    /// A chain of binary operators (`a + b - c …`, `p AND q AND …`), which the parser nests
    /// to the left. Bound walking down the left spine in a loop, so that a chain of
    /// thousands of operands costs no recursion; runs of AND, OR and `||` become one call
    /// over all their operands, as Calcite flattens them.
    fn bind_operator_chain(
        &mut self,
        expr: &Expr,
        scope: &[ScopeColumn],
    ) -> Result<ScalarExpr, SqlError> {
        let mut spine = Vec::new();
        let mut leftmost = expr;
        while let Expr::BinaryOp { left, op, right } = leftmost {
            spine.push((op, right.as_ref()));
            leftmost = left;
        }
        // `span()` of a node recurses over the chain below it: each node's span is built
        // from the leftmost operand's and its right operand's instead.
        let start = leftmost.span();
        // The levels the chain adds: one per operator, but one per run of a flattened one.
        let mut levels = 0;
        let mut previous = None;
        for (op, _) in spine.iter().rev() {
            let name = binary_operator_name(op);
            if !(matches!(name, Some("AND" | "OR" | "||")) && name == previous) {
                levels += 1;
            }
            previous = name;
        }
        if levels >= MAX_EXPR_DEPTH {
            return Err(error(
                start,
                format!(
                    "expression is nested too deeply: {levels} levels of operators, at most {} are supported",
                    MAX_EXPR_DEPTH - 1
                ),
            ));
        }
        let mut acc = self.bind_expr(leftmost, scope)?;
        // The operands of the run of one flattening operator being collected.
        let mut run: Option<(&'static str, Vec<ScalarExpr>, Span)> = None;
        for (op, right) in spine.into_iter().rev() {
            let span = start.union(&right.span());
            let name = binary_operator_name(op)
                .ok_or_else(|| error(span, format!("operator {op} is not supported")))?;
            let r = self.bind_expr(right, scope)?;
            if matches!(name, "AND" | "OR" | "||") {
                match &mut run {
                    Some((current, operands, run_span)) if *current == name => {
                        operands.push(r);
                        *run_span = span;
                    }
                    _ => {
                        if let Some((current, operands, run_span)) = run.take() {
                            acc = self.call(current, operands, run_span)?;
                        }
                        run = Some((name, vec![acc_placeholder(&mut acc), r], span));
                    }
                }
                continue;
            }
            if let Some((current, operands, run_span)) = run.take() {
                acc = self.call(current, operands, run_span)?;
            }
            // Flink folds constant expressions while planning: a constant division by zero
            // fails there; with a runtime operand it fails (or gives ±Infinity/NaN for
            // DOUBLE) when it runs.
            if (name == "/" || name == "%") && matches!(acc, ScalarExpr::Literal { .. }) {
                check_constant_zero(&r, right.span())?;
            }
            let left = acc_placeholder(&mut acc);
            acc = self.call(name, vec![left, r], span)?;
        }
        if let Some((current, operands, run_span)) = run.take() {
            acc = self.call(current, operands, run_span)?;
        }
        Ok(acc)
    }

    /// `value IN (items)`: with constant items one lookup ([`ScalarExpr::InList`]); otherwise
    /// `value = i1 OR value = i2 …`, evaluated left to right as Flink does (an item is only
    /// computed for the rows no earlier item matched). The items are typed as each
    /// comparison `value = item` would type them.
    fn in_list(
        &mut self,
        value: ScalarExpr,
        items: Vec<ScalarExpr>,
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        if items.is_empty() {
            return Err(error(span, "IN needs at least one value"));
        }
        let mut comparisons = items
            .into_iter()
            .map(|item| self.call("=", vec![value.clone(), item], span))
            .collect::<Result<Vec<_>, _>>()?;
        if comparisons.len() == 1 {
            return Ok(comparisons.remove(0));
        }
        // One lookup needs the value typed alike in every comparison and constant items.
        let mut lookup = Vec::with_capacity(comparisons.len());
        let mut probe: Option<ScalarExpr> = None;
        let mut nullable = false;
        for c in &comparisons {
            let ScalarExpr::Call {
                args, data_type, ..
            } = c
            else {
                break;
            };
            let [left, item] = args.as_slice() else { break };
            if !item.is_constant()
                || probe
                    .as_ref()
                    .is_some_and(|p| p.data_type().kind != left.data_type().kind)
            {
                break;
            }
            probe.get_or_insert_with(|| left.clone());
            nullable |= data_type.nullable;
            lookup.push(item.clone());
        }
        match probe {
            Some(probe) if lookup.len() == comparisons.len() => Ok(ScalarExpr::InList {
                expr: Box::new(probe),
                list: lookup,
                data_type: DataType {
                    kind: TypeKind::Boolean,
                    nullable,
                },
            }),
            _ => self.call("OR", comparisons, span),
        }
    }

    /// `value LIKE pattern [ESCAPE e]` and `value SIMILAR TO pattern [ESCAPE e]`.
    fn pattern_match(
        &mut self,
        name: &str,
        value: &Expr,
        pattern: &Expr,
        escape: Option<&Expr>,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        let mut args = vec![
            self.bind_expr(value, scope)?,
            self.bind_expr(pattern, scope)?,
        ];
        if let Some(escape) = escape {
            args.push(self.bind_expr(escape, scope)?);
        }
        self.call(name, args, span)
    }

    fn negate_if(
        &mut self,
        negated: bool,
        expr: ScalarExpr,
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        if negated {
            self.call("NOT", vec![expr], span)
        } else {
            Ok(expr)
        }
    }

    fn unary_call(
        &mut self,
        name: &str,
        e: &Expr,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        let arg = self.bind_expr(e, scope)?;
        self.call(name, vec![arg], span)
    }

    fn bind_function(
        &mut self,
        f: &ast::Function,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        let name = object_name_last(&f.name).to_uppercase();
        if f.over.is_some() {
            if let Some((at, column)) = self.over_column
                && at == span
            {
                return Ok(ScalarExpr::Column {
                    index: column,
                    data_type: DataType::not_null(TypeKind::BigInt),
                });
            }
            return Err(error(
                span,
                format!("OVER windows ({name} … OVER) are not supported yet"),
            ));
        }
        if AGGREGATES.contains(&name.as_str()) {
            if let Some(clause) = self.no_aggregates_in {
                return Err(error(
                    span,
                    format!("Aggregate expression is illegal in {clause} clause"),
                ));
            }
            if self.aggregation.is_some() {
                return self.bind_aggregate_call(f, &name, scope, span);
            }
            return Err(error(
                span,
                format!("aggregate function {name} is not supported yet"),
            ));
        }
        if let Some((function, _)) = name.rsplit_once('_')
            && matches!(function, "TUMBLE" | "HOP" | "SESSION")
            && matches!(
                &name[function.len() + 1..],
                "START" | "END" | "ROWTIME" | "PROCTIME"
            )
        {
            return self.bind_window_property(f, function, &name, scope, span);
        }
        let mut args = Vec::new();
        match &f.args {
            FunctionArguments::None => {}
            FunctionArguments::Subquery(_) => {
                return Err(error(span, "subqueries are not supported yet"));
            }
            FunctionArguments::List(list) => {
                let takes_unit = matches!(name.as_str(), "TIMESTAMPADD" | "TIMESTAMPDIFF");
                for (i, arg) in list.args.iter().enumerate() {
                    match arg {
                        // TIMESTAMPADD(DAY, …): the unit is a keyword, not a column.
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Identifier(unit)))
                            if takes_unit && i == 0 =>
                        {
                            let unit = unit.value.to_uppercase();
                            let unit = unit.strip_prefix("SQL_TSI_").unwrap_or(&unit);
                            if temporal::parse_unit(unit).is_none() {
                                return Err(error(
                                    arg.span(),
                                    format!("{name} does not know the time unit {unit}"),
                                ));
                            }
                            args.push(unit_literal(unit));
                        }
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => {
                            args.push(self.bind_expr(e, scope)?)
                        }
                        other => {
                            return Err(error(
                                other.span(),
                                format!("unsupported argument to {name}"),
                            ));
                        }
                    }
                }
            }
        }
        match name.as_str() {
            "IF" => {
                let [cond, then, otherwise]: [ScalarExpr; 3] = args
                    .try_into()
                    .map_err(|_| error(span, "IF expects 3 arguments"))?;
                // Unlike CASE, Flink's IF is nullable when its condition is.
                let nullable_condition = cond.data_type().nullable;
                let mut result = case(vec![(cond, then)], Some(otherwise), span)?;
                if let ScalarExpr::Case { data_type, .. } = &mut result {
                    data_type.nullable |= nullable_condition;
                }
                Ok(result)
            }
            "COALESCE" | "IFNULL" => {
                if args.is_empty() || (name == "IFNULL" && args.len() != 2) {
                    let expected = if name == "IFNULL" {
                        "2"
                    } else {
                        "at least one"
                    };
                    return Err(error(span, format!("{name} expects {expected} arguments")));
                }
                self.call(&name, args, span)
            }
            // The session has one catalog and one database, named as Flink's defaults.
            "CURRENT_DATABASE" if args.is_empty() => Ok(ScalarExpr::Literal {
                data_type: DataType::not_null(TypeKind::VarChar(MAX_LENGTH)),
                value: Value::String("default_database".into()),
            }),
            "TYPEOF" => {
                let Some(value) = args.first().filter(|_| (1..=2).contains(&args.len())) else {
                    return Err(error(span, "TYPEOF expects (expr [, force_serializable])"));
                };
                let mut text = value.data_type().to_string();
                // The serializable form spells out what the summary abbreviates.
                if matches!(
                    args.get(1),
                    Some(ScalarExpr::Literal {
                        value: Value::Boolean(true),
                        ..
                    })
                ) {
                    text = crate::types::serializable_type_text(&text);
                }
                Ok(ScalarExpr::Literal {
                    data_type: DataType::nullable(TypeKind::VarChar(MAX_LENGTH)),
                    value: Value::String(text),
                })
            }
            "NULLIF" => {
                let [a, b]: [ScalarExpr; 2] = args
                    .try_into()
                    .map_err(|_| error(span, "NULLIF expects 2 arguments"))?;
                let eq = self.call("=", vec![a.clone(), b], span)?;
                let null = ScalarExpr::Literal {
                    value: Value::Null,
                    data_type: a.data_type().with_nullable(true),
                };
                case(vec![(eq, null)], Some(a), span)
            }
            "YEAR" | "QUARTER" | "MONTH" | "WEEK" | "DAYOFYEAR" | "DAYOFMONTH" | "DAYOFWEEK"
            | "HOUR" | "MINUTE" | "SECOND" => {
                let mut all = vec![unit_literal(&name)];
                all.extend(args);
                self.call("EXTRACT", all, span)
            }
            "CEILING" => self.call("CEIL", args, span),
            "TIMESTAMPADD" | "TIMESTAMPDIFF" => {
                let unit = match args.first() {
                    Some(ScalarExpr::Literal {
                        value: Value::String(u),
                        ..
                    }) => u.clone(),
                    _ => return Err(error(span, format!("{name} expects a time unit first"))),
                };
                if name == "TIMESTAMPADD" && matches!(unit.as_str(), "MICROSECOND" | "NANOSECOND") {
                    // Flink validates these and then fails to plan them.
                    return Err(error(
                        span,
                        format!("{name} with unit {unit} is not supported"),
                    ));
                }
                if name == "TIMESTAMPDIFF" && unit == "NANOSECOND" {
                    // The one unit whose difference is a BIGINT.
                    return self.call("TIMESTAMPDIFF_NANOS", args, span);
                }
                if name == "TIMESTAMPADD"
                    && let Some(value) = args.get(2)
                    && value.data_type().kind == TypeKind::Date
                {
                    match unit.as_str() {
                        // Flink types DATE plus a unit shorter than a day as TIMESTAMP(6).
                        "HOUR" | "MINUTE" | "SECOND" => {
                            let target = DataType::nullable(TypeKind::Timestamp(6));
                            args[2] = coerce(args[2].clone(), &target);
                        }
                        "MILLISECOND" => {
                            return Err(error(
                                span,
                                "TIMESTAMPADD cannot add MILLISECOND to a DATE",
                            ));
                        }
                        _ => {}
                    }
                }
                self.call(&name, args, span)
            }
            _ => self.call(&name, args, span),
        }
    }

    /// Resolves a built-in function and casts its arguments to the signature's types.
    fn call(
        &mut self,
        name: &str,
        args: Vec<ScalarExpr>,
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        let function = function::lookup(name).ok_or_else(|| {
            let shown: Vec<String> = args
                .iter()
                .map(|a| a.data_type().kind.to_string())
                .collect();
            error(
                span,
                format!(
                    "No match found for function signature {name}({})",
                    shown.join(", ")
                ),
            )
        })?;
        let types: Vec<DataType> = args.iter().map(|a| a.data_type().clone()).collect();
        let signature = (function.resolve)(&types).map_err(|m| {
            // Flink's (Calcite's) wording, then what exactly is wrong.
            let shown: Vec<String> = types.iter().map(|t| format!("<{}>", t.kind)).collect();
            error(
                span,
                format!(
                    "Cannot apply '{name}' to arguments of type '{name}({})': {m}",
                    shown.join(", ")
                ),
            )
        })?;
        let mut data_type = signature.return_type;
        // ROUND/TRUNCATE(decimal, d) with a literal d: Flink types the result by d.
        if let (
            "ROUND" | "TRUNCATE",
            Some(TypeKind::Decimal { precision, scale }),
            Some(ScalarExpr::Literal {
                value: Value::Int(d),
                ..
            }),
        ) = (name, types.first().map(|t| &t.kind), args.get(1))
        {
            let (precision, scale) = function::math::round_decimal_type(
                *precision,
                *scale,
                i32::try_from(*d).unwrap_or(i32::MAX),
            );
            data_type.kind = TypeKind::Decimal { precision, scale };
        }
        let args = args
            .into_iter()
            .zip(&signature.args)
            .map(|(a, t)| coerce(a, t))
            .collect();
        Ok(ScalarExpr::Call {
            function,
            args,
            data_type,
        })
    }
}

const AGGREGATES: &[&str] = &[
    "COUNT",
    "SUM",
    "MIN",
    "MAX",
    "AVG",
    "STDDEV_POP",
    "STDDEV_SAMP",
    "VAR_POP",
    "VAR_SAMP",
    "STDDEV",
    "VARIANCE",
    "COLLECT",
    "LISTAGG",
    "GROUPING",
    "GROUPING_ID",
    "FIRST_VALUE",
    "LAST_VALUE",
    "ARRAY_AGG",
    "ROW_NUMBER",
    "RANK",
    "DENSE_RANK",
    "LEAD",
    "LAG",
];

/// Wraps an expression in a CAST when its kind differs from `target`'s.
fn coerce(expr: ScalarExpr, target: &DataType) -> ScalarExpr {
    if expr.data_type().kind == target.kind {
        return expr;
    }
    if let ScalarExpr::Literal {
        value: Value::Null, ..
    } = expr
    {
        return ScalarExpr::Literal {
            value: Value::Null,
            data_type: target.with_nullable(true),
        };
    }
    let nullable = expr.data_type().nullable;
    ScalarExpr::Cast {
        expr: Box::new(expr),
        data_type: target.with_nullable(nullable),
        try_cast: false,
    }
}

/// How deep a bound expression may nest. The evaluator and EXPLAIN recurse once per level
/// (with the stack grown as needed); the limit keeps a runaway expression from taking
/// unbounded memory and time, and is far above what Flink itself plans (see
/// `tests/deep_expressions.rs`).
pub const MAX_EXPR_DEPTH: usize = 20_000;

/// When less than this much stack is left, a recursion step continues on a new segment ...
pub const STACK_RED_ZONE: usize = 256 * 1024;
/// ... of this size, allocated on the heap.
pub const STACK_SEGMENT: usize = 4 * 1024 * 1024;

/// An expression bound over a GROUP BY's input, over the aggregate's output instead: a
/// key's expression reads the key, a mark its aggregate or property; any other input column
/// is an error (at its place when it was written outside an aggregate call).
fn place(
    e: &ScalarExpr,
    aggregation: &Aggregation,
    properties: &[WindowProperty],
    span: Span,
) -> Result<ScalarExpr, SqlError> {
    let keys: Vec<String> = aggregation
        .keys
        .iter()
        .map(|&k| format!("{:?}", aggregation.below[k]))
        .collect();
    let calls = aggregation.calls.len();
    let mut ungrouped = None;
    let placed = e.rewrite(&mut |sub| {
        if !keys.is_empty() {
            let text = format!("{sub:?}");
            if let Some(k) = keys.iter().position(|key| *key == text) {
                return Some(ScalarExpr::Column {
                    index: k,
                    data_type: sub.data_type().clone(),
                });
            }
        }
        match sub {
            ScalarExpr::Column { index, data_type } if *index >= PROPERTY_MARK => {
                let property = PROPERTIES[index - PROPERTY_MARK];
                let at = properties.iter().position(|p| *p == property)?;
                Some(ScalarExpr::Column {
                    index: aggregation.keys.len() + calls + at,
                    data_type: data_type.clone(),
                })
            }
            ScalarExpr::Column { index, data_type } if *index >= AGGREGATE_MARK => {
                Some(ScalarExpr::Column {
                    index: aggregation.keys.len() + index - AGGREGATE_MARK,
                    data_type: data_type.clone(),
                })
            }
            ScalarExpr::Column { index, .. } => {
                ungrouped.get_or_insert(*index);
                Some(sub.clone())
            }
            _ => None,
        }
    });
    if let Some(column) = ungrouped {
        let written = aggregation.column_spans.iter().find(|(i, _)| *i == column);
        return Err(error(
            written.map_or(span, |(_, s)| *s),
            format!(
                "Expression '{}' is not being grouped",
                aggregation.input_names[column]
            ),
        ));
    }
    Ok(placed)
}

/// A window property's type and time attribute: start and end are wall-clock timestamps;
/// the rowtime has the type of the window's time column (nullable, as Flink derives it); the
/// proctime is `TIMESTAMP_LTZ(3)`.
fn property_type(
    property: WindowProperty,
    window: &GroupWindow,
) -> (DataType, Option<TimeAttribute>) {
    match property {
        WindowProperty::Start | WindowProperty::End => {
            (DataType::not_null(TypeKind::Timestamp(3)), None)
        }
        WindowProperty::Rowtime => {
            let kind = match window.time_type.kind {
                TypeKind::TimestampLtz(_) => TypeKind::TimestampLtz(3),
                _ => TypeKind::Timestamp(3),
            };
            (DataType::nullable(kind), Some(TimeAttribute::Rowtime))
        }
        WindowProperty::Proctime => (
            DataType::not_null(TypeKind::TimestampLtz(3)),
            Some(TimeAttribute::Proctime),
        ),
    }
}

/// The result type of an aggregate as Flink derives it: COUNT is `BIGINT NOT NULL`; SUM,
/// AVG, MIN and MAX keep their argument's type (SUM of a DECIMAL widens to precision 38,
/// AVG of one also to scale 6 at least), nullable when it is or when there is no group
/// (`grouped`: a GROUP BY item exists).
fn aggregate_type(
    function: AggregateFunction,
    name: &str,
    args: &[DataType],
    grouped: bool,
) -> Result<DataType, String> {
    if function == AggregateFunction::Count {
        return Ok(DataType::not_null(TypeKind::BigInt));
    }
    // LISTAGG(x [, separator]) of strings, typed as its argument (Calcite's).
    if function == AggregateFunction::ListAgg {
        let string = |t: &DataType| matches!(t.kind, TypeKind::Char(_) | TypeKind::VarChar(_));
        return match args {
            [arg] | [arg, _] if string(arg) && args.iter().all(string) => Ok(DataType {
                kind: match arg.kind {
                    TypeKind::Char(n) => TypeKind::VarChar(n),
                    ref other => other.clone(),
                },
                nullable: true,
            }),
            [_] | [_, _] => Err(format!(
                "Cannot apply 'LISTAGG' to arguments of type 'LISTAGG({})'. Supported form(s): 'LISTAGG(<CHARACTER>)' 'LISTAGG(<CHARACTER>, <CHARACTER>)'",
                args.iter()
                    .map(|a| format!("<{}>", calcite_type_name(&a.kind)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            _ => Err(
                "Invalid number of arguments to function 'LISTAGG'. Was expecting 1 or 2 arguments"
                    .into(),
            ),
        };
    }
    let [arg] = args else {
        return Err(format!(
            "Invalid number of arguments to function '{name}'. Was expecting 1 arguments"
        ));
    };
    let nullable = arg.nullable || !grouped;
    // FIRST_VALUE and LAST_VALUE keep their argument's type; NULL without a value.
    if matches!(
        function,
        AggregateFunction::FirstValue | AggregateFunction::LastValue
    ) {
        return Ok(DataType {
            kind: arg.kind.clone(),
            nullable: true,
        });
    }
    let kind = match (function, &arg.kind) {
        (AggregateFunction::Min | AggregateFunction::Max, kind) => kind.clone(),
        (_, TypeKind::Decimal { scale, .. }) => TypeKind::Decimal {
            precision: 38,
            scale: if matches!(
                function,
                AggregateFunction::Avg | AggregateFunction::WelfordM2
            ) {
                (*scale).max(6)
            } else {
                *scale
            },
        },
        (
            _,
            kind @ (TypeKind::TinyInt
            | TypeKind::SmallInt
            | TypeKind::Int
            | TypeKind::BigInt
            | TypeKind::Float
            | TypeKind::Double),
        ) => kind.clone(),
        (_, kind) => {
            return Err(format!(
                "Cannot apply '{name}' to arguments of type '{name}(<{}>)'. Supported form(s): '{name}(<NUMERIC>)'",
                calcite_type_name(kind)
            ));
        }
    };
    Ok(DataType { kind, nullable })
}

fn binary_operator_name(op: &BinaryOperator) -> Option<&'static str> {
    Some(match op {
        BinaryOperator::Plus => "+",
        BinaryOperator::Minus => "-",
        BinaryOperator::Multiply => "*",
        BinaryOperator::Divide => "/",
        BinaryOperator::Modulo => "%",
        BinaryOperator::StringConcat => "||",
        BinaryOperator::Eq => "=",
        BinaryOperator::NotEq => "<>",
        BinaryOperator::Lt => "<",
        BinaryOperator::LtEq => "<=",
        BinaryOperator::Gt => ">",
        BinaryOperator::GtEq => ">=",
        BinaryOperator::And => "AND",
        BinaryOperator::Or => "OR",
        _ => return None,
    })
}

/// Takes the expression out of `slot`, leaving a cheap placeholder behind.
fn acc_placeholder(slot: &mut ScalarExpr) -> ScalarExpr {
    std::mem::replace(
        slot,
        ScalarExpr::Literal {
            value: Value::Null,
            data_type: DataType::nullable(TypeKind::Null),
        },
    )
}

/// Flink's planner overflows its stack on a view that reads itself and reports it as a
/// failed parse; Tideline names the cycle instead.
/// The error points at the statement's reference to the outermost view.
/// `table` with an `OPTIONS` hint's pairs over its own options.
fn with_hint(table: &Arc<TableDef>, hint: Option<&TableHint>) -> Result<Arc<TableDef>, SqlError> {
    let Some(h) = hint else {
        return Ok(table.clone());
    };
    if h.options.is_empty() {
        return Err(SqlError::new(
            "Hint [OPTIONS] only support non empty key value options",
            h.position.line,
            h.position.column,
        ));
    }
    let mut t = (**table).clone();
    for (k, v) in &h.options {
        match t.options.iter_mut().find(|(key, _)| key == k) {
            Some(entry) => entry.1 = v.clone(),
            None => t.options.push((k.clone(), v.clone())),
        }
    }
    Ok(Arc::new(t))
}

fn view_cycle(expanding: &[(String, Span)], name: &str) -> SqlError {
    let start = expanding.iter().position(|(v, _)| v == name).unwrap_or(0);
    let mut path: Vec<&str> = expanding[start..].iter().map(|(v, _)| v.as_str()).collect();
    path.push(name);
    let message = format!(
        "View '{name}' is defined through itself: {}",
        path.join(" -> ")
    );
    match expanding.first() {
        Some((_, span)) => error(*span, message),
        None => SqlError::without_position(message),
    }
}

fn case(
    branches: Vec<(ScalarExpr, ScalarExpr)>,
    otherwise: Option<ScalarExpr>,
    span: Span,
) -> Result<ScalarExpr, SqlError> {
    let mut types: Vec<DataType> = branches
        .iter()
        .map(|(_, r)| r.data_type().clone())
        .collect();
    match &otherwise {
        Some(e) => types.push(e.data_type().clone()),
        None => types.push(DataType::nullable(TypeKind::Null)),
    }
    let mixes_date_and_timestamp = types.iter().any(|t| t.kind == TypeKind::Date)
        && types
            .iter()
            .any(|t| matches!(t.kind, TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_)));
    let mut result = common_type_of(&types)
        .filter(|_| !mixes_date_and_timestamp)
        .ok_or_else(|| {
            error(
                span,
                "Illegal mixing of types in CASE or COALESCE statement",
            )
        })?;
    // Calcite's CASE keeps the first floating-point type it meets among FLOAT and DOUBLE
    // (`CASE … THEN f ELSE d END` is FLOAT, the other way round DOUBLE); a DECIMAL branch
    // still makes it DOUBLE.
    if result.kind == TypeKind::Double
        && !types
            .iter()
            .any(|t| matches!(t.kind, TypeKind::Decimal { .. }))
        && types
            .iter()
            .find(|t| matches!(t.kind, TypeKind::Float | TypeKind::Double))
            .is_some_and(|t| t.kind == TypeKind::Float)
    {
        result.kind = TypeKind::Float;
    }
    // A bare NULL condition is a BOOLEAN one, never true.
    let boolean = DataType::nullable(TypeKind::Boolean);
    let branches = branches
        .into_iter()
        .map(|(c, r)| {
            let c = if c.data_type().kind == TypeKind::Null {
                coerce(c, &boolean)
            } else {
                c
            };
            (c, coerce(r, &result))
        })
        .collect();
    let otherwise = otherwise.map(|e| Box::new(coerce(e, &result)));
    Ok(ScalarExpr::Case {
        branches,
        otherwise,
        data_type: result,
    })
}

fn check_constant_zero(divisor: &ScalarExpr, span: Span) -> Result<(), SqlError> {
    let zero = match divisor {
        ScalarExpr::Literal {
            value: Value::Int(0) | Value::Decimal(0),
            ..
        } => true,
        ScalarExpr::Literal {
            value: Value::Float(f),
            ..
        } => *f == 0.0,
        _ => false,
    };
    if zero {
        Err(error(span, "Division by zero"))
    } else {
        Ok(())
    }
}

fn unit_literal(unit: &str) -> ScalarExpr {
    let text = unit.to_uppercase();
    ScalarExpr::Literal {
        data_type: DataType::not_null(string_literal_kind(&text)),
        value: Value::String(text),
    }
}

/// `value.name` for a ROW value: the field's type, nullable when the row is.
fn field_access(value: ScalarExpr, name: &str, span: Span) -> Result<ScalarExpr, SqlError> {
    let TypeKind::Row(fields) = &value.data_type().kind else {
        return Err(error(
            span,
            format!("{} has no field '{name}'", value.data_type().kind),
        ));
    };
    let Some(index) = fields.iter().position(|(n, _)| n == name) else {
        return Err(error(
            span,
            format!("field '{name}' not found in {}", value.data_type().kind),
        ));
    };
    let field_type = fields[index].1.clone();
    let nullable = field_type.nullable || value.data_type().nullable;
    Ok(ScalarExpr::Field {
        expr: Box::new(value),
        index,
        name: name.to_string(),
        data_type: field_type.with_nullable(nullable),
    })
}

fn resolve_column(
    scope: &[ScopeColumn],
    qualifier: Option<&str>,
    name: &str,
    span: Span,
) -> Result<ScalarExpr, SqlError> {
    let mut found = None;
    for (i, c) in scope.iter().enumerate() {
        if c.field.name == name && (qualifier.is_none() || c.qualifier.as_deref() == qualifier) {
            if found.is_some() {
                return Err(error(span, format!("Column '{name}' is ambiguous")));
            }
            found = Some(i);
        }
    }
    match found {
        Some(index) => Ok(ScalarExpr::Column {
            index,
            data_type: scope[index].field.data_type.clone(),
        }),
        None => {
            let shown = match qualifier {
                Some(q) => format!("{q}.{name}"),
                None => name.to_string(),
            };
            Err(error(
                span,
                format!("Column '{shown}' not found in any table"),
            ))
        }
    }
}

fn literal(value: &ast::Value, span: Span) -> Result<ScalarExpr, SqlError> {
    let (value, kind) = match value {
        ast::Value::Number(text, _) => return number_literal(text, span),
        ast::Value::SingleQuotedString(s) => (Value::String(s.clone()), string_literal_kind(s)),
        ast::Value::Boolean(b) => (Value::Boolean(*b), TypeKind::Boolean),
        ast::Value::Null => {
            return Ok(ScalarExpr::Literal {
                value: Value::Null,
                data_type: DataType::nullable(TypeKind::Null),
            });
        }
        ast::Value::HexStringLiteral(h) => {
            if h.len() % 2 == 1 {
                return Err(error(
                    span,
                    "Binary literal string must contain an even number of hexits",
                ));
            }
            let bytes = (0..h.len() / 2)
                .map(|i| u8::from_str_radix(h.get(2 * i..2 * i + 2).unwrap_or("zz"), 16))
                .collect::<Result<Vec<u8>, _>>()
                .map_err(|_| error(span, "invalid binary literal"))?;
            // `X''` is BINARY(0), as in Flink.
            let n = bytes.len() as u32;
            (Value::Bytes(bytes), TypeKind::Binary(n))
        }
        other => return Err(error(span, format!("unsupported literal {other}"))),
    };
    Ok(ScalarExpr::Literal {
        value,
        data_type: DataType::not_null(kind),
    })
}

/// The text of a number literal, under any parentheses (`-(2147483648)` is an INT too).
fn unparenthesized_number(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Nested(inner) => unparenthesized_number(inner),
        Expr::Value(v) => match &v.value {
            ast::Value::Number(text, _) => Some(text),
            _ => None,
        },
        _ => None,
    }
}

/// A numeric literal typed as Calcite types it: a whole number is INT when it fits, else
/// BIGINT; a number with a point is DECIMAL with a precision of its digits as written (leading
/// zeros included: `0.001` is DECIMAL(4, 3)) and a scale of the digits after the point; one
/// with an exponent is DOUBLE. Calcite refuses an exact literal whose digits, without the
/// point, do not fit a BIGINT ("out of range"). `text` may start with a minus.
fn number_literal(text: &str, span: Span) -> Result<ScalarExpr, SqlError> {
    let negative = text.starts_with('-');
    let unsigned = text.trim_start_matches('-');
    let out_of_range = |shown: &str| error(span, format!("Numeric literal '{shown}' out of range"));
    if unsigned.contains(['e', 'E']) {
        let v: f64 = text
            .parse()
            .map_err(|_| error(span, format!("invalid number {text}")))?;
        if !v.is_finite() {
            return Err(out_of_range(&text.to_uppercase()));
        }
        // Flink's parser reads `-0.0e0` as one decimal literal, whose zero has no sign (a
        // negated expression keeps Java's -0.0).
        let v = if v == 0.0 { 0.0 } else { v };
        return Ok(ScalarExpr::Literal {
            value: Value::Float(v),
            data_type: DataType::not_null(TypeKind::Double),
        });
    }
    // `5.` is the whole number 5.
    let (int, frac) = match unsigned.split_once('.') {
        Some((int, frac)) => (int, frac),
        None => (unsigned, ""),
    };
    // The number as Java's BigDecimal prints it, for the message.
    let shown = {
        let int = int.trim_start_matches('0');
        let int = if int.is_empty() { "0" } else { int };
        let sign = if negative { "-" } else { "" };
        if frac.is_empty() {
            format!("{sign}{int}")
        } else {
            format!("{sign}{int}.{frac}")
        }
    };
    let digits = format!("{int}{frac}");
    let unscaled = digits
        .parse::<i128>()
        .ok()
        .map(|v| if negative { -v } else { v })
        .and_then(|v| i64::try_from(v).ok())
        .ok_or_else(|| out_of_range(&shown))?;
    let (value, kind) = if frac.is_empty() {
        match i32::try_from(unscaled) {
            Ok(i) => (Value::Int(i64::from(i)), TypeKind::Int),
            Err(_) => (Value::Int(unscaled), TypeKind::BigInt),
        }
    } else {
        (
            Value::Decimal(i128::from(unscaled)),
            TypeKind::Decimal {
                precision: digits.len().clamp(1, 38) as u8,
                scale: frac.len().min(38) as u8,
            },
        )
    };
    Ok(ScalarExpr::Literal {
        value,
        data_type: DataType::not_null(kind),
    })
}

/// The finest TIME Flink computes with: milliseconds.
const MAX_TIME_PRECISION: u8 = 3;

/// `t`, with a TIME finer than milliseconds made TIME(3), as Flink types casts and columns.
fn millisecond_time(t: &DataType) -> DataType {
    match t.kind {
        TypeKind::Time(p) if p > MAX_TIME_PRECISION => DataType {
            kind: TypeKind::Time(MAX_TIME_PRECISION),
            nullable: t.nullable,
        },
        _ => t.clone(),
    }
}

/// Whether an expression is a number as written (`5`, `-5.5`), which Calcite folds when it is
/// cast to an interval.
fn is_number_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Value(v) => matches!(v.value, ast::Value::Number(..)),
        Expr::UnaryOp {
            op: UnaryOperator::Minus | UnaryOperator::Plus,
            expr,
        } => is_number_literal(expr),
        Expr::Nested(inner) => is_number_literal(inner),
        _ => false,
    }
}

/// `CAST(number AS INTERVAL unit)`. A number as written is that many units (Calcite folds it,
/// truncating below the interval's millisecond or month); any other exact integer is the
/// interval's internal count — milliseconds or months — as Flink's runtime cast has it. Only
/// single-unit qualifiers take a number, and only exact numbers.
fn cast_to_interval(
    value: ScalarExpr,
    literal: bool,
    qualifier: IntervalQualifier,
    try_cast: bool,
    span: Span,
) -> Result<ScalarExpr, SqlError> {
    let from = value.data_type().clone();
    let refuse = || {
        error(
            span,
            format!(
                "Cast function cannot convert value of type {} to type {}",
                function::cast::calcite_type_name(&from.kind),
                qualifier.sql()
            ),
        )
    };
    let exact = from.kind.is_integer() || matches!(from.kind, TypeKind::Decimal { .. });
    if !qualifier.is_single_unit() || !exact {
        return Err(refuse());
    }
    let kind = if qualifier.is_year_month() {
        TypeKind::IntervalYearMonth
    } else {
        TypeKind::IntervalDayTime
    };
    if literal && let ScalarExpr::Literal { value: v, .. } = &value {
        let (unscaled, scale) = match (v, &from.kind) {
            (Value::Int(i), _) => (i128::from(*i), 0),
            (Value::Decimal(d), TypeKind::Decimal { scale, .. }) => (*d, u32::from(*scale)),
            _ => return Err(refuse()),
        };
        let count = unscaled * i128::from(qualifier.unit_size()) / 10i128.pow(scale);
        let overflow = || error(span, format!("interval value {count} is out of range"));
        let value = if qualifier.is_year_month() {
            Value::IntervalMonths(i32::try_from(count).map_err(|_| overflow())?)
        } else {
            Value::IntervalMillis(i64::try_from(count).map_err(|_| overflow())?)
        };
        return Ok(ScalarExpr::Literal {
            value,
            data_type: DataType::not_null(kind),
        });
    }
    let target = DataType {
        kind,
        nullable: from.nullable || try_cast,
    };
    if !from.kind.is_integer() {
        return Err(error(
            span,
            format!("Unsupported cast from '{from}' to '{target}'."),
        ));
    }
    Ok(ScalarExpr::Cast {
        expr: Box::new(value),
        data_type: target,
        try_cast,
    })
}

fn flink_type(data_type: &ast::DataType, span: Span) -> Result<DataType, SqlError> {
    let text = type_text(data_type);
    parse_type_text(&text).map_err(|_| error(span, format!("unsupported type {text}")))
}

fn fraction_digits(text: &str) -> u8 {
    text.rsplit_once('.')
        .map_or(0, |(_, f)| f.trim().len().min(9) as u8)
}

fn typed_literal(
    data_type: &ast::DataType,
    text: &str,
    span: Span,
) -> Result<ScalarExpr, SqlError> {
    let ty = flink_type(data_type, span)?;
    let bad = || error(span, format!("invalid {} literal '{text}'", ty.kind));
    let (value, kind) = match ty.kind {
        TypeKind::Date => (
            Value::Date(parse_date(text).ok_or_else(bad)? as i32),
            TypeKind::Date,
        ),
        // Flink keeps TIME to the millisecond: `TIME '01:02:03.123456'` is TIME(3).
        TypeKind::Time(_) => {
            let nanos = parse_time(text).ok_or_else(bad)?;
            (
                Value::Time(nanos - nanos % 1_000_000),
                TypeKind::Time(fraction_digits(text).min(MAX_TIME_PRECISION)),
            )
        }
        TypeKind::Timestamp(_) => (
            Value::Timestamp(parse_timestamp(text).ok_or_else(bad)?),
            TypeKind::Timestamp(fraction_digits(text)),
        ),
        _ => {
            return Err(error(
                span,
                format!("{} literals are not supported", ty.kind),
            ));
        }
    };
    Ok(ScalarExpr::Literal {
        value,
        data_type: DataType::not_null(kind),
    })
}

fn interval_literal(interval: &ast::Interval, span: Span) -> Result<ScalarExpr, SqlError> {
    let text = match interval.value.as_ref() {
        Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => s.clone(),
            ast::Value::Number(n, _) => n.clone(),
            other => other.to_string(),
        },
        other => {
            return Err(error(
                span,
                format!("interval value must be a literal, got {other}"),
            ));
        }
    };
    let unit = |f: &Option<ast::DateTimeField>| f.as_ref().map(|f| f.to_string());
    let leading =
        unit(&interval.leading_field).ok_or_else(|| error(span, "interval needs a unit"))?;
    let last = unit(&interval.last_field);
    let qualifier = IntervalQualifier::new(&leading, last.as_deref(), interval.leading_precision)
        .map_err(|m| error(span, m))?;
    Ok(
        match qualifier.evaluate(&text).map_err(|m| error(span, m))? {
            IntervalValue::Months(months) => ScalarExpr::Literal {
                value: Value::IntervalMonths(months),
                data_type: DataType::not_null(TypeKind::IntervalYearMonth),
            },
            IntervalValue::Millis(millis) => ScalarExpr::Literal {
                value: Value::IntervalMillis(millis),
                data_type: DataType::not_null(TypeKind::IntervalDayTime),
            },
        },
    )
}

/// The name Flink gives an unaliased select item: the column's name for a column reference,
/// the function's name for a niladic time function (`LOCALTIME`), else `EXPR$<position>`.
fn derived_name(expr: &Expr, position: usize) -> String {
    match expr {
        Expr::Identifier(ident) => ident.value.clone(),
        Expr::CompoundIdentifier(parts) => {
            parts.last().map_or_else(String::new, |p| p.value.clone())
        }
        Expr::Function(f) if matches!(f.args, FunctionArguments::None) => {
            object_name_last(&f.name).to_uppercase()
        }
        Expr::Nested(inner) => derived_name(inner, position),
        _ => format!("EXPR${position}"),
    }
}

/// The type of metadata `key` of `table`'s connector.
fn metadata_kind(table: &TableDef, key: &str, column: &str) -> Result<TypeKind, SqlError> {
    let known = crate::connector::registry::metadata_keys(table);
    match known.iter().find(|(k, _)| *k == key) {
        Some((_, kind)) => Ok(kind.clone()),
        None if known.is_empty() => Err(SqlError::without_position(format!(
            "metadata column '{column}' of table '{}' is not supported by its connector",
            table.name
        ))),
        None => {
            let keys: Vec<&str> = known.iter().map(|(k, _)| *k).collect();
            Err(SqlError::without_position(format!(
                "Invalid metadata key '{key}' in column '{column}' of table 'default_catalog.default_database.{}'. The connector supports the following metadata keys for reading:\n{}",
                table.name,
                keys.join("\n")
            )))
        }
    }
}

/// A query's result with duplicate column names made unique as Calcite does (`a`, `a0`, …).
pub fn output_names(plan: LogicalPlan) -> LogicalPlan {
    let mut fields = plan.schema().fields.clone();
    uniquify(&mut fields);
    if fields
        .iter()
        .zip(&plan.schema().fields)
        .all(|(a, b)| a.name == b.name)
    {
        return plan;
    }
    // A Calc on top is renamed in place (Calcite's project names its columns uniquely).
    if let LogicalPlan::Calc(mut calc) = plan {
        calc.schema.fields = fields;
        return LogicalPlan::Calc(calc);
    }
    let names: Vec<String> = fields.into_iter().map(|f| f.name).collect();
    rename(plan, &names, Span::empty()).expect("as many names as columns")
}

/// The first name that two columns share.
pub fn repeated_name(schema: &Schema) -> Option<&str> {
    let fields = &schema.fields;
    (1..fields.len())
        .find(|&i| fields[..i].iter().any(|f| f.name == fields[i].name))
        .map(|i| fields[i].name.as_str())
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

fn uniquify(fields: &mut [Field]) {
    for i in 1..fields.len() {
        if fields[..i].iter().any(|f| f.name == fields[i].name) {
            let base = fields[i].name.clone();
            let mut n = 0;
            while fields.iter().any(|f| f.name == format!("{base}{n}")) {
                n += 1;
            }
            fields[i].name = format!("{base}{n}");
        }
    }
}

/// An ORDER BY column a plain SELECT (a Calc over its FROM) does not select: appended to
/// the Calc, its index returned; `None` when the query is not one or has no such column.
fn hidden_sort_column(plan: &mut LogicalPlan, name: &str) -> Option<usize> {
    let LogicalPlan::Calc(calc) = plan else {
        return None;
    };
    if matches!(
        calc.input.as_ref(),
        LogicalPlan::Aggregate(_) | LogicalPlan::Over(_)
    ) {
        return None;
    }
    let index = calc.input.schema().index_of(name)?;
    let field = calc.input.schema().fields[index].clone();
    calc.exprs.push(ScalarExpr::Column {
        index,
        data_type: field.data_type.clone(),
    });
    calc.schema.fields.push(field);
    Some(calc.exprs.len() - 1)
}

/// The name a FROM item's columns are qualified by: its alias, or its table's name.
fn factor_name(factor: &TableFactor) -> Option<String> {
    match factor {
        TableFactor::Table { alias: Some(a), .. } | TableFactor::Derived { alias: Some(a), .. } => {
            Some(a.name.value.clone())
        }
        TableFactor::Table { name, .. } => Some(object_name_last(name)),
        _ => None,
    }
}

/// The aggregate a SELECT's plan reads (under its SELECT list and HAVING).
fn aggregate_of(plan: &mut LogicalPlan) -> Option<&mut LogicalAggregate> {
    match plan {
        LogicalPlan::Aggregate(a) => Some(a),
        LogicalPlan::Calc(c) => aggregate_of(&mut c.input),
        _ => None,
    }
}

/// Flink's refusal of a STATE_TTL hint naming no input of the query.
fn unmatched_ttl(
    hint: &[(String, TtlHint, bool)],
    hints: &[TableHint],
    select: &Select,
) -> Result<(), SqlError> {
    let unmatched: Vec<String> = hint
        .iter()
        .filter(|(_, _, used)| !used)
        .map(|(n, _, _)| format!("`{n}`"))
        .collect();
    if unmatched.is_empty() {
        return Ok(());
    }
    let end = select.select_token.0.span.end;
    let at = hints
        .iter()
        .find(|h| h.follows.line == end.line && h.follows.column == end.column)
        .map_or((end.line, end.column), |h| {
            (h.position.line, h.position.column)
        });
    Err(SqlError::new(
        format!(
            "The options of following hints cannot match the name of input tables or views: \n{} in `STATE_TTL`",
            unmatched.join(", ")
        ),
        at.0,
        at.1,
    ))
}

/// The join of two bound FROM items: the left's columns, then the right's, a side that may
/// be missing made nullable, time attributes materialized unless `keeps_time` is given (an
/// interval join, or with the left's period column a temporal join).
fn joined(
    left: (LogicalPlan, Vec<ScopeColumn>),
    right: (LogicalPlan, Vec<ScopeColumn>),
    join_type: JoinType,
    condition: ScalarExpr,
    keeps_time: Option<Option<(usize, (u64, u64))>>,
) -> (LogicalPlan, Vec<ScopeColumn>) {
    let keep_time = keeps_time.is_some();
    let side = |scope: Vec<ScopeColumn>, nullable: bool| {
        scope.into_iter().map(move |mut c| {
            if !keep_time {
                c.field.time_attribute = None;
            }
            if nullable {
                c.field.data_type.nullable = true;
            }
            c
        })
    };
    let scope: Vec<ScopeColumn> = side(left.1, join_type.right_outer())
        .chain(side(right.1, join_type.left_outer()))
        .collect();
    let mut fields: Vec<Field> = scope.iter().map(|c| c.field.clone()).collect();
    uniquify(&mut fields);
    let plan = LogicalPlan::Join(LogicalJoin {
        left: Box::new(left.0),
        right: Box::new(right.0),
        join_type,
        condition,
        temporal: keeps_time.flatten(),
        state_ttl: [None, None],
        schema: Schema::new(fields),
    });
    (plan, scope)
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

/// A table whose rows a program provides (`api::StreamTableEnvironment`) has no WATERMARK:
/// its rowtime column carries the stream's own event timestamps and watermarks, so it is a
/// rowtime attribute from the scan up, as in Flink's `fromDataStream(…, $("t").rowtime())`.
fn with_provided_rowtime(mut plan: LogicalPlan, table: &TableDef) -> LogicalPlan {
    if table.provided_source.is_none() {
        return plan;
    }
    let rowtime = table
        .columns
        .iter()
        .filter(|c| c.time_attribute == Some(TimeAttribute::Rowtime))
        .map(|c| c.name.as_str());
    for name in rowtime {
        let mut node = &mut plan;
        loop {
            let (schema, input) = match node {
                LogicalPlan::Scan(s) => (&mut s.schema, None),
                LogicalPlan::Calc(c) => (&mut c.schema, Some(&mut c.input)),
                _ => break,
            };
            if let Some(i) = schema.index_of(name) {
                schema.fields[i].time_attribute = Some(TimeAttribute::Rowtime);
            }
            match input {
                Some(input) => node = input,
                None => break,
            }
        }
    }
    plan
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

/// Renames a plan's output columns (view column lists, `AS t(a, b)` aliases).
fn rename(plan: LogicalPlan, names: &[String], span: Span) -> Result<LogicalPlan, SqlError> {
    if names.is_empty() {
        return Ok(plan);
    }
    let schema = plan.schema().renamed(names).map_err(|m| error(span, m))?;
    let exprs = schema
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| ScalarExpr::Column {
            index: i,
            data_type: f.data_type.clone(),
        })
        .collect();
    Ok(LogicalPlan::Calc(LogicalCalc {
        input: Box::new(plan),
        filter: None,
        exprs,
        schema,
    }))
}

/// The query's columns moved to the sink positions `columns` names, NULL in the others.
fn place_columns(
    plan: LogicalPlan,
    sink: &Schema,
    columns: &[String],
) -> Result<LogicalPlan, String> {
    let mut positions: Vec<usize> = Vec::with_capacity(columns.len());
    for name in columns {
        let at = sink
            .fields
            .iter()
            .position(|f| f.name == *name)
            .ok_or_else(|| format!("Unknown target column '{name}'"))?;
        if positions.contains(&at) {
            return Err(format!("Target column '{name}' is assigned more than once"));
        }
        positions.push(at);
    }
    if plan.schema().len() != columns.len() {
        return Err("Number of columns must match number of query columns".into());
    }
    let mut exprs = Vec::with_capacity(sink.len());
    let mut fields = Vec::with_capacity(sink.len());
    for (j, target) in sink.fields.iter().enumerate() {
        let expr = match positions.iter().position(|&p| p == j) {
            Some(k) => ScalarExpr::Column {
                index: k,
                data_type: plan.schema().fields[k].data_type.clone(),
            },
            None if !target.data_type.nullable => {
                return Err(format!(
                    "Column '{}' has no default value and does not allow NULLs",
                    target.name
                ));
            }
            None => ScalarExpr::Literal {
                data_type: target.data_type.clone(),
                value: Value::Null,
            },
        };
        fields.push(Field::new(&target.name, expr.data_type().clone()));
        exprs.push(expr);
    }
    Ok(LogicalPlan::Calc(LogicalCalc {
        input: Box::new(plan),
        filter: None,
        exprs,
        schema: Schema::new(fields),
    }))
}

/// A Calc over `plan` casting each column to the kind of the matching field of `targets`
/// (nullability kept from the input) and naming it after it.
fn cast_columns(plan: LogicalPlan, targets: &[Field]) -> LogicalPlan {
    let exprs: Vec<ScalarExpr> = plan
        .schema()
        .fields
        .iter()
        .enumerate()
        .zip(targets)
        .map(|((i, f), target)| {
            coerce(
                ScalarExpr::Column {
                    index: i,
                    data_type: f.data_type.clone(),
                },
                &target.data_type,
            )
        })
        .collect();
    let fields = targets
        .iter()
        .zip(&exprs)
        .map(|(t, e)| Field {
            data_type: e.data_type().clone(),
            ..t.clone()
        })
        .collect();
    LogicalPlan::Calc(LogicalCalc {
        input: Box::new(plan),
        filter: None,
        exprs,
        schema: Schema::new(fields),
    })
}

fn union(inputs: Vec<LogicalPlan>, span: Span) -> Result<LogicalPlan, SqlError> {
    let width = inputs[0].schema().len();
    if inputs.iter().any(|i| i.schema().len() != width) {
        return Err(error(
            span,
            "UNION ALL inputs must have the same number of columns",
        ));
    }
    let mut fields = inputs[0].schema().fields.clone();
    for (col, field) in fields.iter_mut().enumerate() {
        let types: Vec<DataType> = inputs
            .iter()
            .map(|i| i.schema().fields[col].data_type.clone())
            .collect();
        field.data_type = common_type_of(&types).ok_or_else(|| {
            error(
                span,
                format!("UNION ALL column {} has no common type", col + 1),
            )
        })?;
        if inputs
            .iter()
            .any(|i| i.schema().fields[col].time_attribute != field.time_attribute)
        {
            field.time_attribute = None;
        }
    }
    let inputs = inputs
        .into_iter()
        .map(|input| {
            if input
                .schema()
                .fields
                .iter()
                .zip(&fields)
                .all(|(a, b)| a.data_type.kind == b.data_type.kind)
            {
                return input;
            }
            cast_columns(input, &fields)
        })
        .collect();
    Ok(LogicalPlan::Union(LogicalUnion {
        inputs,
        schema: Schema::new(fields),
    }))
}
