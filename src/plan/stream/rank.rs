//! `Rank`: a Top-N, `ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)` kept within a range of
//! ranks by the filter above it (`WHERE rownum <= N`), over any input, insert-only or
//! retracting (Flink's `AppendFastStrategy` / `RetractStrategy`). Its input arrives through an
//! exchange on the partition keys (all to one instance without keys); it emits its input's
//! columns, then the rank when the query reads it, and updates them as ranks change
//! (`exec/rank.rs` runs it). In batch mode it also computes RANK and DENSE_RANK, and every
//! rank when no filter bounds them (a batch OVER).

use super::{ChangelogMode, StreamPlan};
use crate::plan::logical::{OrderKey, RankFunction};
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamRank {
    pub input: Box<StreamPlan>,
    pub function: RankFunction,
    /// Input columns.
    pub partition: Vec<usize>,
    pub order: Vec<OrderKey>,
    /// First and last rank kept; `None`: every rank (only a batch OVER has no bound).
    pub range: Option<(u64, u64)>,
    /// Whether the rank is an output column (the last).
    pub with_rank: bool,
    /// Whether a changed rank's old row is retracted (`-U`) before the new one comes, as
    /// the consumer asks (set by [`super::require_update_before`]).
    pub update_before: bool,
    pub schema: Schema,
}

impl StreamRank {
    pub fn changelog_mode(&self) -> ChangelogMode {
        ChangelogMode {
            insert: true,
            update_before: self.update_before,
            update_after: true,
            delete: true,
        }
    }

    /// `Rank(strategy=[RetractStrategy], rankType=[ROW_NUMBER], rankRange=[rankStart=1,
    /// rankEnd=10], partitionBy=[], orderBy=[lastAction ASC], select=[user, lastAction,
    /// w0$o0])`; the same in both plan sections.
    pub fn explain(&self) -> String {
        let input = &self.input.schema().fields;
        let strategy = if self.input.changelog_mode().retracts() {
            "RetractStrategy"
        } else {
            "AppendFastStrategy"
        };
        let range = match self.range {
            Some((start, end)) => format!("rankStart={start}, rankEnd={end}"),
            None => "rankStart=1".to_string(),
        };
        let partition: Vec<&str> = self
            .partition
            .iter()
            .map(|&k| input[k].name.as_str())
            .collect();
        let order: Vec<String> = self
            .order
            .iter()
            .map(|o| {
                let direction = if o.descending { "DESC" } else { "ASC" };
                let mut text = format!("{} {direction}", input[o.column].name);
                // Flink writes the NULL order only when it is not the direction's default.
                if o.nulls_first == o.descending {
                    text.push_str(if o.nulls_first {
                        " NULLS FIRST"
                    } else {
                        " NULLS LAST"
                    });
                }
                text
            })
            .collect();
        let select: Vec<&str> = self.schema.fields.iter().map(|f| f.name.as_str()).collect();
        format!(
            "Rank(strategy=[{strategy}], rankType=[{}], rankRange=[{range}], partitionBy=[{}], orderBy=[{}], select=[{}])",
            self.function.name(),
            partition.join(", "),
            order.join(", "),
            select.join(", ")
        )
    }
}
