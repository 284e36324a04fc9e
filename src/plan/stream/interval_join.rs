//! `IntervalJoin`: a join of two insert-only streams on equal keys whose event times lie
//! within bounds of each other (`a.ts BETWEEN b.ts - INTERVAL '1' HOUR AND b.ts`, or two
//! comparisons of the time attributes with constant intervals), as Flink's
//! `StreamPhysicalIntervalJoin`: each side's rows are kept only until the watermark says no
//! row of the other side can still match them, the output is insert-only and keeps both time
//! attributes (`exec/interval_join.rs` runs it). INNER, LEFT, RIGHT and FULL OUTER; a row of
//! an outer side that never matched is emitted padded with NULLs when it expires.

use super::{ChangelogMode, StreamPlan};
use crate::plan::explain::{Spelling, expr_text};
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::JoinType;
use crate::types::value::Value;
use crate::types::{Schema, TimeAttribute};

/// The interval of a left row's time around a right row's: `left − right` within
/// `[lower, upper]` milliseconds, both inclusive (Flink's `leftLowerBound`, `leftUpperBound`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowBounds {
    pub lower: i64,
    pub upper: i64,
    /// The time columns, in the left input and in the right input.
    pub left_time: usize,
    pub right_time: usize,
}

#[derive(Debug, Clone)]
pub struct StreamIntervalJoin {
    pub left: Box<StreamPlan>,
    pub right: Box<StreamPlan>,
    pub join_type: JoinType,
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    pub bounds: WindowBounds,
    /// The whole condition over the output's columns, as Flink's plan prints it.
    pub condition: ScalarExpr,
    /// What is left of it besides the key equalities and the time bounds, evaluated per pair.
    pub residual: Option<ScalarExpr>,
    pub schema: Schema,
}

/// A time attribute column plus a constant interval (milliseconds): `ts`, `ts + INTERVAL …`,
/// `ts - INTERVAL …`.
fn time_term(e: &ScalarExpr, attributes: &[Option<TimeAttribute>]) -> Option<(usize, i64)> {
    let rowtime = |c: usize| attributes.get(c).copied().flatten() == Some(TimeAttribute::Rowtime);
    match e {
        ScalarExpr::Column { index, .. } if rowtime(*index) => Some((*index, 0)),
        ScalarExpr::Call { function, args, .. }
            if (function.name == "+" || function.name == "-") && args.len() == 2 =>
        {
            let (ScalarExpr::Column { index, .. }, ScalarExpr::Literal { value, .. }) =
                (&args[0], &args[1])
            else {
                return None;
            };
            let Value::IntervalMillis(ms, _) = value else {
                return None;
            };
            if !rowtime(*index) {
                return None;
            }
            Some((*index, if function.name == "+" { *ms } else { -*ms }))
        }
        _ => None,
    }
}

/// The window bounds a join's conditions (over the left's columns then the right's, with
/// their time attributes) set on event time, and which conditions set them: one lower and
/// one upper bound between the same two rowtime columns (Flink's
/// `IntervalJoinUtil.extractWindowBoundsFromPredicate`). `None`: not an interval join.
pub fn window_bounds(
    conditions: &[ScalarExpr],
    left_width: usize,
    attributes: &[Option<TimeAttribute>],
) -> Option<(WindowBounds, Vec<usize>)> {
    let (mut lower, mut upper): (Option<i64>, Option<i64>) = (None, None);
    let mut columns: Option<(usize, usize)> = None;
    let mut used = Vec::new();
    for (i, c) in conditions.iter().enumerate() {
        let ScalarExpr::Call { function, args, .. } = c else {
            continue;
        };
        let op = function.name;
        if !matches!(op, ">=" | ">" | "<=" | "<") || args.len() != 2 {
            continue;
        }
        let (Some(a), Some(b)) = (
            time_term(&args[0], attributes),
            time_term(&args[1], attributes),
        ) else {
            continue;
        };
        // As `left − right OP constant`.
        let (left, right, op) = match (a.0 < left_width, b.0 < left_width) {
            (true, false) => (a, b, op),
            (false, true) => (
                b,
                a,
                match op {
                    ">=" => "<=",
                    ">" => "<",
                    "<=" => ">=",
                    _ => ">",
                },
            ),
            _ => continue,
        };
        let pair = (left.0, right.0 - left_width);
        if columns.is_some_and(|p| p != pair) {
            return None;
        }
        columns = Some(pair);
        let constant = right.1 - left.1;
        match op {
            ">=" => lower = Some(lower.map_or(constant, |l| l.max(constant))),
            ">" => lower = Some(lower.map_or(constant + 1, |l| l.max(constant + 1))),
            "<=" => upper = Some(upper.map_or(constant, |u| u.min(constant))),
            _ => upper = Some(upper.map_or(constant - 1, |u| u.min(constant - 1))),
        }
        used.push(i);
    }
    let ((left_time, right_time), lower, upper) = (columns?, lower?, upper?);
    Some((
        WindowBounds {
            lower,
            upper,
            left_time,
            right_time,
        },
        used,
    ))
}

impl StreamIntervalJoin {
    pub fn changelog_mode(&self) -> ChangelogMode {
        ChangelogMode::INSERT_ONLY
    }

    /// `IntervalJoin(joinType=[InnerJoin], windowBounds=[isRowTime=true,
    /// leftLowerBound=-1200000, leftUpperBound=0, leftTimeIndex=2, rightTimeIndex=2],
    /// where=[…], select=[…])`.
    pub fn explain(&self, spelling: Spelling) -> String {
        let names: Vec<String> = self.schema.fields.iter().map(|f| f.name.clone()).collect();
        format!(
            "IntervalJoin(joinType=[{}], windowBounds=[isRowTime=true, leftLowerBound={}, leftUpperBound={}, leftTimeIndex={}, rightTimeIndex={}], where=[{}], select=[{}])",
            self.join_type.flink_name(),
            self.bounds.lower,
            self.bounds.upper,
            self.bounds.left_time,
            self.bounds.right_time,
            expr_text(&self.condition, &names, spelling),
            names.join(", "),
        )
    }
}
