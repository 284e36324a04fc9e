//! `Join`: a regular join (INNER, LEFT, RIGHT, FULL OUTER) of two streams on equal keys,
//! with a residual condition over each pair. Each input arrives through an exchange on its
//! keys (all to one instance without keys); the output is the left input's columns, then the
//! right's. Both sides are kept in state for ever (Flink's regular join); `exec/join.rs` runs
//! it, in batch mode emitting only final rows.

use super::{ChangelogMode, StreamPlan};
use crate::plan::explain::{Spelling, expr_text};
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::{JoinType, TtlHint};
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamJoin {
    pub left: Box<StreamPlan>,
    pub right: Box<StreamPlan>,
    pub join_type: JoinType,
    /// Equal keys: `left_keys[i]` (a left column) = `right_keys[i]` (a right column).
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    /// The whole condition over the output's columns, the key equalities included, as
    /// Flink's plan prints it (`None`: TRUE).
    pub condition: Option<ScalarExpr>,
    /// The part of the condition that is not a key equality, evaluated per pair.
    pub residual: Option<ScalarExpr>,
    /// Whether the join emits `-U` (set by [`super::changelog::infer_update_kinds`]).
    pub update_before: bool,
    pub schema: Schema,
    /// A STATE_TTL hint's TTL per input (over `table.exec.state.ttl`).
    pub state_ttl: [Option<TtlHint>; 2],
}

/// The names a join's condition reads its columns by: the left's, then the right's, a name
/// met before suffixed as Calcite's (`id0`) — the output's, unless a semi or anti join keeps
/// the left's only.
pub fn pair_names(left: &Schema, right: &Schema) -> Vec<String> {
    let mut fields: Vec<_> = left.fields.iter().chain(&right.fields).cloned().collect();
    super::translate::uniquify(&mut fields);
    fields.into_iter().map(|f| f.name).collect()
}

/// What Flink's join knows of an input's rows by key (`JoinInputSideSpec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputSpec {
    /// A unique key lies within the join key: one row per join key.
    JoinKeyContainsUniqueKey,
    HasUniqueKey,
    NoUniqueKey,
}

impl StreamJoin {
    /// The input on side `s` (0: left).
    pub fn input(&self, s: usize) -> &StreamPlan {
        if s == 0 { &self.left } else { &self.right }
    }

    pub fn keys(&self, s: usize) -> &[usize] {
        if s == 0 {
            &self.left_keys
        } else {
            &self.right_keys
        }
    }

    pub fn input_spec(&self, s: usize) -> InputSpec {
        let keys = self.input(s).unique_keys();
        let join_key = self.keys(s);
        if keys.iter().any(|k| k.iter().all(|c| join_key.contains(c))) {
            InputSpec::JoinKeyContainsUniqueKey
        } else if keys.is_empty() {
            InputSpec::NoUniqueKey
        } else {
            InputSpec::HasUniqueKey
        }
    }

    /// Whether the join can take `+U` without `-U` from side `s`: its rows are unique by
    /// join key, so a new one replaces the old (Flink's `inputUniqueKeyContainsJoinKey`).
    pub fn takes_upserts(&self, s: usize) -> bool {
        self.input_spec(s) == InputSpec::JoinKeyContainsUniqueKey
    }

    /// An inner join forwards its inputs' kinds; an outer join may insert, update and
    /// delete (Flink's `ModifyKindSetTrait.ALL_CHANGES`).
    pub fn changelog_mode(&self) -> ChangelogMode {
        // An inner or semi join forwards its inputs' kinds; outer and anti joins may make
        // any (Flink's `ModifyKindSetTrait.ALL_CHANGES`).
        let mode = if matches!(self.join_type, JoinType::Inner | JoinType::Semi) {
            self.left
                .changelog_mode()
                .union(self.right.changelog_mode())
        } else {
            ChangelogMode {
                insert: true,
                update_before: true,
                update_after: true,
                delete: true,
            }
        };
        // A semi join passes the right's `-U` on (the kind of the row that takes a match).
        let forwarded =
            self.join_type == JoinType::Semi && self.right.changelog_mode().update_before;
        ChangelogMode {
            update_before: (self.update_before && mode.update_after) || forwarded,
            ..mode
        }
    }

    /// `Join(joinType=[InnerJoin], where=[=(k0, k1)], select=[k, v, k0, k1, w],
    /// leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey])`.
    pub fn explain(&self, spelling: Spelling) -> String {
        let pairs = pair_names(self.left.schema(), self.right.schema());
        let condition = match &self.condition {
            Some(c) => expr_text(c, &pairs, spelling),
            None => "true".into(),
        };
        let names: Vec<String> = self.schema.fields.iter().map(|f| f.name.clone()).collect();
        let mut line = format!(
            "Join(joinType=[{}], where=[{condition}], select=[{}], leftInputSpec=[{:?}], rightInputSpec=[{:?}]",
            self.join_type.flink_name(),
            names.join(", "),
            self.input_spec(0),
            self.input_spec(1),
        );
        // The physical plan shows a STATE_TTL hint, as Flink's does.
        let hinted: Vec<String> = ["LEFT", "RIGHT"]
            .iter()
            .zip(&self.state_ttl)
            .filter_map(|(side, ttl)| ttl.as_ref().map(|t| format!("{side}={}", t.text)))
            .collect();
        if !hinted.is_empty() && spelling == Spelling::Physical {
            line.push_str(&format!(
                ", stateTtlHints=[[[STATE_TTL options:{{{}}}]]]",
                hinted.join(", ")
            ));
        }
        line.push(')');
        line
    }
}
