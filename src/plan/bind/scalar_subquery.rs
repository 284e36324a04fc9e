//! Scalar subqueries (`WHERE v > (SELECT AVG(w) FROM t)`, `SELECT (SELECT MAX(w) FROM t) …`)
//! not correlated with the outer query, as Calcite removes them: the subquery's one row
//! joined to the outer rows — an inner join when it is met in the WHERE (whose condition the
//! join then takes), a left join when met in the SELECT list (a subquery without rows gives
//! NULL). A subquery that is no global aggregate (which has one row) gets Calcite's
//! SINGLE_VALUE aggregate over its rows, which fails the job on a second row.

use sqlparser::ast::{Query, Spanned};

use super::*;

/// The scalar subqueries met while one SELECT's WHERE and SELECT list bind.
#[derive(Default)]
pub(super) struct ScalarSubqueries {
    /// Columns of the SELECT's input: the subqueries' columns come after them.
    base: usize,
    /// Whether the SELECT list is binding (else the WHERE).
    in_select: bool,
    /// Each subquery's plan, and whether the SELECT list reads it.
    joined: Vec<(LogicalPlan, bool)>,
}

impl ScalarSubqueries {
    pub(super) fn new(base: usize) -> Self {
        ScalarSubqueries {
            base,
            ..ScalarSubqueries::default()
        }
    }

    pub(super) fn selecting(&mut self) {
        self.in_select = true;
    }

    pub(super) fn is_empty(&self) -> bool {
        self.joined.is_empty()
    }

    /// Whether the SELECT list reads one (else only the WHERE does).
    pub(super) fn in_select_list(&self) -> bool {
        self.joined.iter().any(|(_, in_select)| *in_select)
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
        for (plan, in_select) in self.joined {
            let right_scope = scope_of(plan.schema(), None);
            let join_type = if in_select {
                JoinType::Left
            } else {
                JoinType::Inner
            };
            bound = joined(bound, (plan, right_scope), join_type, true_literal(), None);
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
        let span = query.span();
        let Some(mut subqueries) = self.scalar_subqueries.take() else {
            return Err(error(
                span,
                "subqueries are supported in a WHERE clause and a SELECT list only (for now)",
            ));
        };
        // The subquery binds a SELECT of its own: the outer one's state waits.
        let saved = (
            self.aggregation.take(),
            self.over_column.take(),
            self.over_aggregation.take(),
            self.no_aggregates_in.take(),
        );
        let bound = self.bind_query(query);
        (
            self.aggregation,
            self.over_column,
            self.over_aggregation,
            self.no_aggregates_in,
        ) = saved;
        let plan = match bound {
            Ok(plan) => plan,
            // The outer query's columns are not in the subquery's scope.
            Err(e) if e.message.contains("not found") => {
                self.scalar_subqueries = Some(subqueries);
                return Err(error(
                    span,
                    format!(
                        "scalar subqueries correlated with the outer query are not supported yet ({})",
                        e.message
                    ),
                ));
            }
            Err(e) => {
                self.scalar_subqueries = Some(subqueries);
                return Err(e);
            }
        };
        let checked = if plan.schema().len() != 1 {
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
            Err(error(
                span,
                format!(
                    "Cannot apply '$SCALAR_QUERY' to arguments of type '$SCALAR_QUERY(<RECORDTYPE({})>)'. Supported form(s): '$SCALAR_QUERY(<RECORDTYPE(SINGLE FIELD)>)'",
                    fields.join(", ")
                ),
            ))
        } else {
            Ok(())
        };
        if let Err(e) = checked {
            self.scalar_subqueries = Some(subqueries);
            return Err(e);
        }
        // Rows that may be many: Calcite's SINGLE_VALUE over them (a second row fails).
        let plan = if is_one_row(&plan) {
            plan
        } else {
            single_value(plan, span)
        };
        let mut data_type = plan.schema().fields[0].data_type.clone();
        let in_select = subqueries.in_select;
        let index = subqueries.base + subqueries.joined.len();
        if in_select {
            data_type.nullable = true;
        }
        subqueries.joined.push((plan, in_select));
        self.scalar_subqueries = Some(subqueries);
        Ok(ScalarExpr::Column { index, data_type })
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
