//! Scalar subqueries (`WHERE v > (SELECT AVG(w) FROM t)`, `SELECT (SELECT MAX(w) FROM t) …`)
//! not correlated with the outer query, as Calcite removes them: the subquery's one row
//! joined to the outer rows — an inner join when it is met in the WHERE (whose condition the
//! join then takes), a left join when met in the SELECT list (a subquery without rows gives
//! NULL). A subquery that is no global aggregate (which has one row) gets Calcite's
//! SINGLE_VALUE aggregate over its rows, which fails the job on a second row. One correlated
//! with the outer query by equalities in its WHERE is decorrelated (`bind_correlated`).

use sqlparser::ast::{Query, Spanned};

use super::*;
use crate::plan::stream::translate::and;

/// The scalar subqueries met while one SELECT's WHERE and SELECT list bind.
#[derive(Default)]
pub(super) struct ScalarSubqueries {
    /// The SELECT's input columns: the subqueries' columns come after them.
    scope: Vec<ScopeColumn>,
    /// The columns so far: the input's and the subqueries' met.
    width: usize,
    /// Whether the SELECT list is binding (else the WHERE).
    in_select: bool,
    /// Each subquery's plan, whether the SELECT list reads it, and the condition joining it
    /// (a correlated one's keys, over the columns so far).
    joined: Vec<(LogicalPlan, bool, Option<ScalarExpr>)>,
}

impl ScalarSubqueries {
    pub(super) fn new(scope: &[ScopeColumn]) -> Self {
        ScalarSubqueries {
            scope: scope.to_vec(),
            width: scope.len(),
            ..ScalarSubqueries::default()
        }
    }

    pub(super) fn selecting(&mut self) {
        self.in_select = true;
    }

    pub(super) fn is_empty(&self) -> bool {
        self.joined.is_empty()
    }

    /// Joins `plan` (keys, then the value; `condition` on the keys, for a correlated one)
    /// and gives the value's column: NULL where the join may leave it missing.
    fn push(&mut self, plan: LogicalPlan, condition: Option<ScalarExpr>) -> ScalarExpr {
        let width = plan.schema().len();
        let mut data_type = plan.schema().fields[width - 1].data_type.clone();
        data_type.nullable |= self.in_select || condition.is_some();
        let index = self.width + width - 1;
        self.width += width;
        self.joined.push((plan, self.in_select, condition));
        ScalarExpr::Column { index, data_type }
    }

    /// Whether the SELECT list reads one (else only the WHERE does).
    pub(super) fn in_select_list(&self) -> bool {
        self.joined.iter().any(|(_, in_select, _)| *in_select)
    }

    /// `input` (of columns `scope`) joined with each subquery's row, in the order they were
    /// met: the columns the bound expressions read. The WHERE stays above (the translation
    /// takes its conjuncts into the joins, as Calcite's FilterJoinRule).
    pub(super) fn join(
        self,
        input: LogicalPlan,
        scope: Vec<ScopeColumn>,
    ) -> (LogicalPlan, Vec<ScopeColumn>) {
        let mut bound = (input, scope);
        for (plan, in_select, condition) in self.joined {
            let right_scope = scope_of(plan.schema(), None);
            let join_type = if in_select {
                JoinType::Left
            } else {
                JoinType::Inner
            };
            let condition = condition.unwrap_or_else(true_literal);
            bound = joined(bound, (plan, right_scope), join_type, condition, None);
            if let LogicalPlan::Join(j) = &mut bound.0 {
                j.scalar_query = true;
            }
        }
        bound
    }
}

impl<'a> Binder<'a> {
    /// A scalar subquery met in an expression: its column among those the SELECT's input
    /// will have once joined with it.
    pub(super) fn bind_scalar_subquery(&mut self, query: &Query) -> Result<ScalarExpr, SqlError> {
        let Some(mut subqueries) = self.scalar_subqueries.take() else {
            return Err(error(
                query.span(),
                "subqueries are supported in a WHERE clause and a SELECT list only (for now)",
            ));
        };
        let bound = self.scalar_subquery_into(query, &mut subqueries);
        self.scalar_subqueries = Some(subqueries);
        bound
    }

    /// [`Binder::bind_scalar_subquery`] with the SELECT's subqueries at hand.
    fn scalar_subquery_into(
        &mut self,
        query: &Query,
        subqueries: &mut ScalarSubqueries,
    ) -> Result<ScalarExpr, SqlError> {
        let span = query.span();
        let (plan, condition, count) = match self.in_own_select(|b| b.bind_query(query)) {
            Ok(plan) => {
                if plan.schema().len() != 1 {
                    return Err(not_one_column(&plan, span));
                }
                // Rows that may be many: Calcite's SINGLE_VALUE over them (a second row
                // fails).
                let plan = if is_one_row(&plan) {
                    plan
                } else {
                    single_value(plan, span)
                };
                (plan, None, false)
            }
            // The outer query's columns are not in the subquery's scope: a correlation.
            Err(e) if e.message.contains("not found") => {
                let correlated = self.in_own_select(|b| b.bind_correlated(query, subqueries))?;
                let Some((plan, keys, count)) = correlated else {
                    return Err(error(
                        span,
                        format!(
                            "scalar subqueries correlated with the outer query other than by equalities (inner = outer) in their WHERE are not supported yet ({})",
                            e.message
                        ),
                    ));
                };
                let mut conditions = Vec::new();
                for (i, outer) in keys.into_iter().enumerate() {
                    let key = ScalarExpr::Column {
                        index: subqueries.width + i,
                        data_type: plan.schema().fields[i].data_type.clone(),
                    };
                    conditions.push(self.call("=", vec![outer, key], span)?);
                }
                (plan, conditions.into_iter().reduce(and), count)
            }
            Err(e) => return Err(e),
        };
        let value = subqueries.push(plan, condition);
        // A group without rows counts 0, not NULL (Calcite's CASE over the join).
        if count {
            let zero = ScalarExpr::Literal {
                value: crate::types::value::Value::Int(0),
                data_type: DataType::not_null(TypeKind::BigInt),
            };
            let missing = self.call("IS NULL", vec![value.clone()], span)?;
            let mut data_type = value.data_type().clone();
            data_type.nullable = false;
            return Ok(ScalarExpr::Case {
                branches: vec![(missing, zero)],
                otherwise: Some(Box::new(value)),
                data_type,
                written_as_if: false,
            });
        }
        Ok(value)
    }

    /// Runs `f` as a SELECT of its own: the state of the SELECT being bound waits.
    fn in_own_select<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = (
            self.aggregation.take(),
            self.over_column.take(),
            self.over_aggregation.take(),
            self.no_aggregates_in.take(),
        );
        let out = f(self);
        (
            self.aggregation,
            self.over_column,
            self.over_aggregation,
            self.no_aggregates_in,
        ) = saved;
        out
    }
}

/// Calcite's refusal of a scalar subquery of several columns.
fn not_one_column(plan: &LogicalPlan, span: sqlparser::tokenizer::Span) -> SqlError {
    let fields: Vec<String> = plan
        .schema()
        .fields
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                crate::plan::explain::calcite_type_name(&f.data_type.kind),
                f.name.to_uppercase()
            )
        })
        .collect();
    error(
        span,
        format!(
            "Cannot apply '$SCALAR_QUERY' to arguments of type '$SCALAR_QUERY(<RECORDTYPE({})>)'. Supported form(s): '$SCALAR_QUERY(<RECORDTYPE(SINGLE FIELD)>)'",
            fields.join(", ")
        ),
    )
}

impl<'a> Binder<'a> {
    /// A subquery correlated by equalities of its columns with the outer query's in its
    /// WHERE (`SELECT MAX(x) FROM w WHERE w.k = v.id AND …`), decorrelated as Calcite does:
    /// its aggregate grouped by those columns (NULL keys left out), its plan's columns the
    /// keys then the value; with the outer side of each equality, and whether the value is a
    /// COUNT (0 for a missing group). `None`: another shape.
    #[allow(clippy::type_complexity)]
    fn bind_correlated(
        &mut self,
        query: &Query,
        subqueries: &ScalarSubqueries,
    ) -> Result<Option<(LogicalPlan, Vec<ScalarExpr>, bool)>, SqlError> {
        use sqlparser::ast::{BinaryOperator, GroupByExpr, SelectItem, SetExpr};
        let Some(sub) = super::select::plain_subquery(query) else {
            return Ok(None);
        };
        let [item] = sub.projection.as_slice() else {
            return Ok(None);
        };
        let Some(selection) = &sub.selection else {
            return Ok(None);
        };
        let (_, inner_scope) = self.bind_from(&sub.from)?;
        let mut conjuncts = Vec::new();
        flatten_and(selection, &mut conjuncts);
        let (mut inner, mut keys, mut outer) = (Vec::new(), Vec::new(), Vec::new());
        for c in conjuncts {
            if self.bind_expr(c, &inner_scope).is_ok() {
                inner.push(c.clone());
                continue;
            }
            let Expr::BinaryOp {
                left,
                op: BinaryOperator::Eq,
                right,
            } = c
            else {
                return Ok(None);
            };
            let sides = [(left, right), (right, left)];
            let Some((key, other)) = sides.into_iter().find_map(|(a, b)| {
                let key = self.bind_expr(a, &inner_scope).ok()?;
                let other = self.bind_expr(b, &subqueries.scope).ok()?;
                Some(((a.as_ref().clone(), key), other))
            }) else {
                return Ok(None);
            };
            keys.push(key.0);
            outer.push(other);
        }
        if keys.is_empty() {
            return Ok(None);
        }
        // The decorrelated query: grouped by the keys, which may not be NULL.
        let mut filters = inner;
        filters.extend(keys.iter().map(|k| Expr::IsNotNull(Box::new(k.clone()))));
        let selection = filters.into_iter().reduce(|a, b| Expr::BinaryOp {
            left: Box::new(a),
            op: BinaryOperator::And,
            right: Box::new(b),
        });
        let mut projection: Vec<SelectItem> = keys
            .iter()
            .map(|k| SelectItem::UnnamedExpr(k.clone()))
            .collect();
        // The value keeps the name it has alone (`EXPR$0`, not its place after the keys).
        projection.push(match item {
            SelectItem::UnnamedExpr(e) => SelectItem::ExprWithAlias {
                expr: e.clone(),
                alias: sqlparser::ast::Ident::new("EXPR$0"),
            },
            other => other.clone(),
        });
        let decorrelated = sqlparser::ast::Select {
            projection,
            selection,
            group_by: GroupByExpr::Expressions(keys.clone(), Vec::new()),
            ..sub.clone()
        };
        let rewritten = Query {
            body: Box::new(SetExpr::Select(Box::new(decorrelated))),
            ..query.clone()
        };
        let plan = self.bind_query(&rewritten)?;
        let count = matches!(
            item,
            SelectItem::UnnamedExpr(Expr::Function(f)) | SelectItem::ExprWithAlias { expr: Expr::Function(f), .. }
                if crate::sql::parser::object_name_last(&f.name).eq_ignore_ascii_case("COUNT")
        );
        Ok(Some((plan, outer, count)))
    }
}

/// A global SINGLE_VALUE aggregate of `plan`'s one column (`$f0`).
fn single_value(plan: LogicalPlan, span: sqlparser::tokenizer::Span) -> LogicalPlan {
    let mut data_type = plan.schema().fields[0].data_type.clone();
    data_type.nullable = true;
    let call = crate::plan::aggregate::AggregateCall {
        function: crate::plan::aggregate::AggregateFunction::SingleValue,
        args: vec![0],
        distinct: false,
        filter: None,
        data_type: data_type.clone(),
        name: "$f0".into(),
    };
    LogicalPlan::Aggregate(LogicalAggregate {
        input: Box::new(plan),
        grouping: Vec::new(),
        window: None,
        window_call: None,
        aggregates: vec![call],
        properties: Vec::new(),
        schema: Schema::new(vec![Field::new("$f0", data_type)]),
        position: (span.start.line, span.start.column),
        state_ttl: None,
        grouping_sets: Vec::new(),
    })
}

/// Whether `plan` has exactly one row: a global aggregate, under Calcs that filter nothing.
fn is_one_row(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Calc(c) => c.filter.is_none() && is_one_row(&c.input),
        LogicalPlan::Aggregate(a) => {
            a.grouping.is_empty() && a.window.is_none() && a.grouping_sets.is_empty()
        }
        _ => false,
    }
}
