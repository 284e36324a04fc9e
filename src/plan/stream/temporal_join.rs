//! `TemporalJoin`: `left JOIN right FOR SYSTEM_TIME AS OF left.rowtime ON left.k = right.pk`,
//! an event-time temporal join as Flink's `StreamPhysicalTemporalJoin`. The left is a
//! stream with a rowtime, insert-only or updating (each change joined, its kind kept); the
//! right is a versioned table: a primary key (a
//! table's, or the key a deduplication or an aggregate leaves) that the equalities cover,
//! and a rowtime, its versions' times. Each left row joins the right row that was current at
//! its time, once the watermark reaches it; INNER or LEFT; the output changes as the left
//! does and keeps both time attributes (`exec/temporal_join.rs` runs it).

use super::{ChangelogMode, StreamPlan};
use crate::plan::explain::{Spelling, expr_text};
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::JoinType;
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamTemporalJoin {
    pub left: Box<StreamPlan>,
    pub right: Box<StreamPlan>,
    pub join_type: JoinType,
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    /// The left's time attribute (`AS OF`), in the left input.
    pub left_time: usize,
    /// The right's rowtime, in the right input.
    pub right_time: usize,
    /// The right's primary key, in the right input.
    pub primary_key: Vec<usize>,
    /// The key equalities and the residual, over the output's columns, as the plan prints
    /// them (before the temporal condition).
    pub conditions: Vec<ScalarExpr>,
    /// Evaluated per pair: what is left besides the key equalities.
    pub residual: Option<ScalarExpr>,
    pub schema: Schema,
}

impl StreamTemporalJoin {
    /// The left's: each left change is joined and keeps its kind.
    pub fn changelog_mode(&self) -> ChangelogMode {
        self.left.changelog_mode()
    }

    /// `TemporalJoin(joinType=[InnerJoin], where=[AND(=(currency, currency0),
    /// __TEMPORAL_JOIN_CONDITION(order_time, update_time,
    /// __TEMPORAL_JOIN_CONDITION_PRIMARY_KEY(currency0), __TEMPORAL_JOIN_LEFT_KEY(currency),
    /// __TEMPORAL_JOIN_RIGHT_KEY(currency0)))], select=[…])`.
    pub fn explain(&self, spelling: Spelling) -> String {
        let names: Vec<String> = self.schema.fields.iter().map(|f| f.name.clone()).collect();
        let nl = self.left.schema().len();
        let list = |columns: &[usize], offset: usize| -> String {
            columns
                .iter()
                .map(|&c| names[c + offset].clone())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let temporal = format!(
            "__TEMPORAL_JOIN_CONDITION({}, {}, __TEMPORAL_JOIN_CONDITION_PRIMARY_KEY({}), __TEMPORAL_JOIN_LEFT_KEY({}), __TEMPORAL_JOIN_RIGHT_KEY({}))",
            names[self.left_time],
            names[nl + self.right_time],
            list(&self.primary_key, nl),
            list(&self.left_keys, 0),
            list(&self.right_keys, nl),
        );
        let mut parts: Vec<String> = self
            .conditions
            .iter()
            .map(|c| expr_text(c, &names, spelling))
            .collect();
        parts.push(temporal);
        let condition = match spelling {
            Spelling::Physical => format!("AND({})", parts.join(", ")),
            _ => format!("({})", parts.join(" AND ")),
        };
        format!(
            "TemporalJoin(joinType=[{}], where=[{condition}], select=[{}])",
            self.join_type.flink_name(),
            names.join(", "),
        )
    }
}
