//! Joins: regular, interval and window joins as one LogicalJoin, temporal joins
//! (`FOR SYSTEM_TIME AS OF`), and the state TTL each input keeps.

use super::*;

use sqlparser::ast::{self, Select, Spanned, TableFactor};
use sqlparser::tokenizer::Span;

use super::super::explain::calcite_type_name;
use super::super::expr::ScalarExpr;
use super::super::stream::translate::joins_windows;
use crate::sql::SqlError;
use crate::sql::ast::TableHint;
use crate::types::{DataType, Field, Schema, TimeAttribute, TypeKind};

impl<'a> Binder<'a> {
    /// `left <kind> JOIN right ON condition` (or `CROSS JOIN right`), with the STATE_TTL
    /// hint's TTLs of its inputs.
    pub(super) fn bind_join(
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

    pub(super) fn bind_join_of(
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
                self.bind_period(version, &left.1, &right.0)?,
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

    /// `FOR SYSTEM_TIME AS OF left.time`: the left's column, its rowtime (an event-time
    /// temporal join), or its proctime when the right is a table that can be looked up (a
    /// lookup join; Flink runs a processing-time temporal join against a lookup source only).
    pub(super) fn bind_period(
        &mut self,
        version: &ast::TableVersion,
        left: &[ScopeColumn],
        right: &LogicalPlan,
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
                Some(TimeAttribute::Proctime) if looked_up(right) => Ok(index),
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
}

/// Whether `plan` scans a table whose source can be looked up (through the projects a
/// table's columns bind to).
fn looked_up(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Scan(scan) => crate::connector::registry::source_abilities(&scan.table).lookup,
        LogicalPlan::Calc(c) if c.filter.is_none() => looked_up(&c.input),
        _ => false,
    }
}

/// Flink's refusal of a STATE_TTL hint naming no input of the query.
pub(super) fn unmatched_ttl(
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
pub(super) fn joined(
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
        scalar_query: false,
        schema: Schema::new(fields),
    });
    (plan, scope)
}
