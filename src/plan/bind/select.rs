//! One SELECT: its FROM, WHERE (with IN / EXISTS subqueries as semi and anti joins), the
//! STATE_TTL hint, the ranking call of ROW_NUMBER / RANK / DENSE_RANK and the SELECT list.

use super::*;

use sqlparser::ast::{
    self, Distinct, Expr, FunctionArguments, GroupByExpr, Query, Select, SelectItem, SetExpr,
    Spanned,
};
use sqlparser::tokenizer::Span;

use super::super::expr::ScalarExpr;
use super::super::stream::translate::{and, joins_windows};
use crate::sql::SqlError;
use crate::sql::parser::object_name_last;
use crate::types::{DataType, Field, Schema, TimeAttribute, TypeKind};

impl<'a> Binder<'a> {
    pub(super) fn bind_select(&mut self, select: &Select) -> Result<LogicalPlan, SqlError> {
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
    pub(super) fn bind_select_all(&mut self, select: &Select) -> Result<LogicalPlan, SqlError> {
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
    pub(super) fn state_ttl_hint(
        &self,
        select: &Select,
    ) -> Result<Vec<(String, TtlHint, bool)>, SqlError> {
        let end = select.select_token.0.span.end;
        let mut out = Vec::new();
        for hint in self.hints.iter().filter(|h| {
            h.name == "STATE_TTL" && h.follows.line == end.line && h.follows.column == end.column
        }) {
            for (name, text) in &hint.options {
                let millis = crate::types::option_value::parse_duration(text)
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
    pub(super) fn take_state_ttl(&mut self, scope: &[ScopeColumn]) -> Option<TtlHint> {
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

    pub(super) fn bind_select_body(&mut self, select: &Select) -> Result<LogicalPlan, SqlError> {
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
        // Scalar subqueries met from here to the SELECT list's end join the input then.
        let outer_subqueries = self
            .scalar_subqueries
            .replace(scalar_subquery::ScalarSubqueries::new(&scope));
        self.no_aggregates_in = Some("WHERE");
        let filter = self.bind_where(select, &scope);
        self.no_aggregates_in = None;
        let filter = match filter {
            Ok(filter) => filter,
            Err(e) => {
                self.scalar_subqueries = outer_subqueries;
                return Err(e);
            }
        };
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
        // OVER aggregates are met while the SELECT list binds (a subquery of it binds its
        // own); a ranking call above takes the place of all of them.
        let outer_over = self.over_aggregation.take();
        if over_plan.is_none() {
            self.over_aggregation = Some(over::OverAggregation::new(
                scope.len(),
                &select.named_window,
            ));
        }
        if let Some(s) = self.scalar_subqueries.as_mut() {
            s.selecting();
        }
        let items = self.bind_select_items(select, &scope, &input_attrs);
        let subqueries =
            std::mem::replace(&mut self.scalar_subqueries, outer_subqueries).unwrap_or_default();
        let over_aggregation = std::mem::replace(&mut self.over_aggregation, outer_over);
        let having = match (&items, &select.having) {
            (Ok(_), Some(having)) => Some(self.bind_expr(having, &scope).map(|e| (e, having))),
            _ => None,
        }
        .transpose();
        let aggregation = self.aggregation.take().expect("set above");
        let over = self.over_column.take();
        let (exprs, mut fields) = items?;
        let having = having?;
        // The input joined with the scalar subqueries' rows (a regular join: time
        // attributes do not pass it).
        let (input, scope) = if subqueries.is_empty() {
            (input, scope)
        } else {
            let aggregating =
                !group_items.is_empty() || !aggregation.calls.is_empty() || having.is_some();
            // The WHERE's subqueries join below an aggregate or OVER; the SELECT list's
            // would have to join above it.
            let over_calls = over.is_some()
                || over_aggregation
                    .as_ref()
                    .is_some_and(|o| o.first_call().is_some());
            if subqueries.in_select_list() && (aggregating || over_calls) {
                return Err(error(
                    select.span(),
                    "scalar subqueries in the SELECT list of an aggregating or OVER query are not supported yet",
                ));
            }
            for f in &mut fields {
                f.time_attribute = None;
            }
            subqueries.join(input, scope)
        };
        let over_call = over_aggregation.as_ref().and_then(|o| o.first_call());
        if let (Some(span), false) = (
            over_call,
            group_items.is_empty() && aggregation.calls.is_empty() && having.is_none(),
        ) {
            return Err(error(
                span,
                "OVER windows in an aggregating query are not supported yet",
            ));
        }
        if let Some(over) = over_aggregation.filter(|_| over_call.is_some()) {
            let input = match filter {
                Some(filter) => filtered(input, &scope, Some(filter)),
                None => input,
            };
            let over = over.into_plan(input, &scope).expect("a call was met");
            return Ok(LogicalPlan::Calc(LogicalCalc {
                input: Box::new(over),
                filter: None,
                exprs,
                schema: Schema::new(fields),
            }));
        }
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
    pub(super) fn bind_subquery_conjuncts(
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
    pub(super) fn bind_semi_join(
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
        let Some(sub) = plain_subquery(query) else {
            return Err(unsupported());
        };
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
            scalar_query: false,
            schema: Schema::new(kept.iter().map(|c| c.field.clone()).collect()),
        });
        Ok((plan, kept))
    }

    /// The ranking call of the SELECT list (`ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)`,
    /// RANK, DENSE_RANK), as an Over node still without its input; the call then reads the
    /// node's rank column (`over_column`). Partition and order items are columns.
    pub(super) fn bind_over(
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
            // Aggregates with OVER bind where they are met (`over.rs`).
            .filter(|(f, _)| {
                let name = object_name_last(&f.name).to_uppercase();
                matches!(name.as_str(), "ROW_NUMBER" | "RANK" | "DENSE_RANK")
            })
            .collect();
        let Some(&(f, span)) = calls.first() else {
            return Ok(None);
        };
        // Several ranking calls, or one beside OVER aggregates, are OVER aggregates
        // (`over.rs`), as Flink plans them.
        let aggregates_over = select.projection.iter().any(|item| match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                has_aggregate_over(e)
            }
            _ => false,
        });
        if calls.len() > 1 || aggregates_over {
            return Ok(None);
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
        let spec = match &f.over {
            Some(ast::WindowType::WindowSpec(spec)) => spec,
            Some(ast::WindowType::NamedWindow(name)) => {
                let found = select
                    .named_window
                    .iter()
                    .find(|d| d.0.value.eq_ignore_ascii_case(&name.value));
                match found.map(|d| &d.1) {
                    Some(ast::NamedWindowExpr::WindowSpec(spec)) => spec,
                    _ => {
                        return Err(error(
                            name.span,
                            format!("Window '{}' not found", name.value),
                        ));
                    }
                }
            }
            None => unreachable!("an OVER call"),
        };
        if spec.window_frame.is_some() {
            return Err(error(span, super::over::RANKING_FRAME_REFUSED));
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
    pub(super) fn bind_where(
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
    pub(super) fn bind_select_items(
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
                    refuse_untyped_null(e, &bound)?;
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
                    refuse_untyped_null(expr, &bound)?;
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
    pub(super) fn name_aggregate(&mut self, bound: &ScalarExpr, name: &str) {
        if let (Some(agg), ScalarExpr::Column { index, .. }) = (&mut self.aggregation, bound)
            && (AGGREGATE_MARK..PROPERTY_MARK).contains(index)
            && agg.calls[index - AGGREGATE_MARK].name.is_empty()
        {
            agg.calls[index - AGGREGATE_MARK].name = name.to_string();
        }
    }
}

/// A SELECT item whose type is (or holds) an untyped NULL, as a bare `NULL`, `IF(c, NULL,
/// NULL)`, `COALESCE(NULL, NULL)` or `ROW(NULL, a)`: Calcite's refusal, at the first bare
/// NULL written in it.
fn refuse_untyped_null(expr: &Expr, bound: &ScalarExpr) -> Result<(), SqlError> {
    fn untyped(t: &TypeKind) -> bool {
        match t {
            TypeKind::Null => true,
            TypeKind::Row(fields) => fields.iter().any(|(_, f)| untyped(&f.kind)),
            _ => false,
        }
    }
    if !untyped(&bound.data_type().kind) {
        return Ok(());
    }
    Err(error(
        first_null(expr).unwrap_or(expr.span()),
        "Illegal use of 'NULL'",
    ))
}

/// Where the first bare `NULL` is written in `expr` (through parentheses, function
/// arguments, CASE and ROW), if anywhere.
fn first_null(expr: &Expr) -> Option<Span> {
    match expr {
        Expr::Value(v) if matches!(v.value, ast::Value::Null) => Some(expr.span()),
        Expr::Nested(inner) => first_null(inner),
        Expr::Tuple(items) => items.iter().find_map(first_null),
        Expr::Function(f) => match &f.args {
            FunctionArguments::List(list) => list.args.iter().find_map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => first_null(e),
                _ => None,
            }),
            _ => None,
        },
        Expr::Case {
            conditions,
            else_result,
            ..
        } => conditions
            .iter()
            .find_map(|w| first_null(&w.result))
            .or_else(|| else_result.as_deref().and_then(first_null)),
        _ => None,
    }
}

/// The name Flink gives an unaliased select item: the column's name for a column reference,
/// the function's name for a niladic time function (`LOCALTIME`), else `EXPR$<position>`.
pub(super) fn derived_name(expr: &Expr, position: usize) -> String {
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

/// Whether an expression holds an OVER call of an aggregate (not a ranking function), in the
/// forms a SELECT item computes with (a form not looked into counts as none).
fn has_aggregate_over(e: &Expr) -> bool {
    match e {
        Expr::Function(f) if f.over.is_some() => {
            let name = object_name_last(&f.name).to_uppercase();
            !matches!(name.as_str(), "ROW_NUMBER" | "RANK" | "DENSE_RANK")
        }
        Expr::Function(f) => match &f.args {
            FunctionArguments::List(list) => list.args.iter().any(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => has_aggregate_over(e),
                _ => false,
            }),
            _ => false,
        },
        Expr::BinaryOp { left, right, .. } => has_aggregate_over(left) || has_aggregate_over(right),
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::Cast { expr, .. }
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr) => has_aggregate_over(expr),
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            operand.as_deref().is_some_and(has_aggregate_over)
                || conditions
                    .iter()
                    .any(|w| has_aggregate_over(&w.condition) || has_aggregate_over(&w.result))
                || else_result.as_deref().is_some_and(has_aggregate_over)
        }
        _ => false,
    }
}

/// `query`'s SELECT when it is a plain `SELECT … FROM … [WHERE …]`: no GROUP BY, HAVING,
/// DISTINCT, ORDER BY, LIMIT or WITH (the subqueries decorrelated into joins).
pub(super) fn plain_subquery(query: &Query) -> Option<&Select> {
    let SetExpr::Select(sub) = query.body.as_ref() else {
        return None;
    };
    let plain_group =
        matches!(&sub.group_by, GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty());
    let plain = query.order_by.is_none()
        && query.limit_clause.is_none()
        && query.with.is_none()
        && plain_group
        && sub.having.is_none()
        && sub.distinct.is_none()
        && !sub.from.is_empty();
    plain.then_some(sub.as_ref())
}
