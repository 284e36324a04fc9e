//! `GroupAggregate`: an unbounded `GROUP BY` (or a global aggregate without one) over a
//! stream, whose result rows are updated as rows arrive: `+I` for a new group, `-U`/`+U` when
//! a group's result changes, `-D` when a group loses its last row (possible only when the
//! input retracts). Its input arrives through an exchange on the keys (all to one instance
//! without keys). `exec/group_aggregate.rs` runs it; in batch mode it emits each group's
//! final row once.

use super::{ChangelogMode, StreamPlan};
use crate::plan::aggregate::{AggregateCall, AggregateFunction, call_text};
use crate::plan::explain::Spelling;
use crate::plan::logical::TtlHint;
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamGroupAggregate {
    pub input: Box<StreamPlan>,
    /// The key columns, input column indices.
    pub grouping: Vec<usize>,
    pub aggregates: Vec<AggregateCall>,
    /// Whether a changed result is preceded by its old row (`-U`): what the consumer asks
    /// for (Flink's `UpdateKindTrait`); set by [`super::changelog::infer_update_kinds`].
    pub update_before: bool,
    /// The keys, then the aggregates.
    pub schema: Schema,
    /// A STATE_TTL hint naming the input (over `table.exec.state.ttl`).
    pub state_ttl: Option<TtlHint>,
}

impl StreamGroupAggregate {
    /// Whether the input updates or deletes rows (then every aggregate retracts, and a group
    /// can disappear).
    pub fn input_retracts(&self) -> bool {
        self.input.changelog_mode().retracts()
    }

    pub fn changelog_mode(&self) -> ChangelogMode {
        ChangelogMode {
            insert: true,
            update_before: self.update_before,
            update_after: true,
            delete: self.input_retracts(),
        }
    }

    /// `GroupAggregate(groupBy=[user], select=[user, COUNT(url) AS cnt])`; without keys no
    /// `groupBy`; over a retracting input the calls are Flink's retracting functions
    /// (`COUNT_RETRACT`). The same in both plan sections.
    pub fn explain(&self, spelling: Spelling) -> String {
        let input = &self.input.schema().fields;
        let name = |i: usize| input[i].name.clone();
        let mut attributes = Vec::new();
        let keys: Vec<String> = self.grouping.iter().map(|&k| name(k)).collect();
        if !keys.is_empty() {
            attributes.push(format!("groupBy=[{}]", keys.join(", ")));
        }
        let retract = self.input_retracts();
        let mut select = keys;
        for call in &self.aggregates {
            let function = match call.function {
                // Flink sums a NOT NULL column with `$SUM0` once it must retract.
                AggregateFunction::Sum
                    if retract
                        && call
                            .args
                            .first()
                            .is_some_and(|&a| !input[a].data_type.nullable) =>
                {
                    "$SUM0"
                }
                f => f.name(),
            };
            let suffix = if retract { "_RETRACT" } else { "" };
            select.push(call_text(
                call,
                &format!("{function}{suffix}"),
                &call.name,
                &name,
            ));
        }
        attributes.push(format!("select=[{}]", select.join(", ")));
        // The physical plan shows a STATE_TTL hint, as Flink's does.
        if let (Some(ttl), Spelling::Physical) = (&self.state_ttl, spelling) {
            attributes.push(format!(
                "stateTtlHints=[[[STATE_TTL options:[{}]]]]",
                ttl.text
            ));
        }
        format!("GroupAggregate({})", attributes.join(", "))
    }
}
