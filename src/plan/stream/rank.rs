//! `Rank`: a Top-N, `ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)` kept within a range of
//! ranks by the filter above it (`WHERE rownum <= N`), over any input, insert-only or
//! retracting (Flink's `AppendFastStrategy` / `RetractStrategy`). Its input arrives through an
//! exchange on the partition keys (all to one instance without keys); it emits its input's
//! columns, then the rank when the query reads it, and updates them as ranks change
//! (`exec/rank.rs` runs it). In batch mode it also computes RANK and DENSE_RANK, and every
//! rank when no filter bounds them (a batch OVER ordered by other than a time attribute;
//! one ordered by time is an `OverAggregate`, as in streaming).

use super::{ChangelogMode, StreamPlan};
use crate::plan::explain::Spelling;
use crate::plan::logical::{OrderKey, RankFunction};
use crate::types::{Schema, TimeAttribute};

#[derive(Debug, Clone)]
pub struct StreamRank {
    pub input: Box<StreamPlan>,
    pub function: RankFunction,
    /// Input columns.
    pub partition: Vec<usize>,
    pub order: Vec<OrderKey>,
    /// First and last rank kept; `None`: every rank (only a batch OVER not ordered by time has no bound).
    pub range: Option<(u64, u64)>,
    /// Whether the rank is an output column (the last).
    pub with_rank: bool,
    /// Whether a changed rank's old row is retracted (`-U`) before the new one comes, as
    /// the consumer asks (set by [`super::changelog::infer_update_kinds`]).
    pub update_before: bool,
    /// A deduplication (rank 1 by a time attribute over inserts), which Flink's execution
    /// plan shows as a Deduplicate and runs apart (`exec/deduplicate.rs`).
    pub deduplicate: Option<Deduplication>,
    /// A query's `ORDER BY … [LIMIT]` (Flink's `SortLimit`, or `Sort` without a limit).
    pub sort: bool,
    pub schema: Schema,
}

/// How a deduplication keeps a row per key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deduplication {
    /// Keep the last row (ORDER BY … DESC), else the first.
    pub keep_last: bool,
    /// Ordered by event time, else by processing time.
    pub rowtime: bool,
}

impl StreamRank {
    pub fn changelog_mode(&self) -> ChangelogMode {
        if self.deduplicate.is_some_and(|d| !d.keep_last) {
            return ChangelogMode::INSERT_ONLY;
        }
        ChangelogMode {
            insert: true,
            update_before: self.update_before,
            update_after: true,
            delete: true,
        }
    }

    /// `Rank(strategy=[RetractStrategy], rankType=[ROW_NUMBER], rankRange=[rankStart=1,
    /// rankEnd=10], partitionBy=[], orderBy=[lastAction ASC], select=[user, lastAction,
    /// w0$o0])`; a deduplication's execution plan shows
    /// `Deduplicate(keep=[FirstRow], key=[user], order=[PROCTIME], outputInsertOnly=[true])`.
    pub fn explain(&self, spelling: Spelling) -> String {
        let input = &self.input.schema().fields;
        if let (Some(d), Spelling::Execution) = (self.deduplicate, spelling) {
            let keys: Vec<&str> = self
                .partition
                .iter()
                .map(|&k| input[k].name.as_str())
                .collect();
            return format!(
                "Deduplicate(keep=[{}], key=[{}], order=[{}], outputInsertOnly=[{}])",
                if d.keep_last { "LastRow" } else { "FirstRow" },
                keys.join(", "),
                if d.rowtime { "ROWTIME" } else { "PROCTIME" },
                !d.keep_last
            );
        }
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
                // A rowtime sort key is named as such.
                let rowtime = if input[o.column].time_attribute == Some(TimeAttribute::Rowtime) {
                    "ROWTIME "
                } else {
                    ""
                };
                format!("{rowtime}{}", order_key_text(&input[o.column].name, o))
            })
            .collect();
        if self.sort {
            return match self.range {
                Some((start, end)) if end < u64::MAX => format!(
                    "SortLimit(orderBy=[{}], offset=[{}], fetch=[{}], strategy=[{strategy}])",
                    order.join(", "),
                    start - 1,
                    end - start + 1
                ),
                _ => format!("Sort(orderBy=[{}])", order.join(", ")),
            };
        }
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

/// A sort key as Flink's plans print it: `v DESC`, with the NULL order only when it is not
/// the direction's default (`v ASC NULLS LAST`).
pub fn order_key_text(name: &str, o: &crate::plan::logical::OrderKey) -> String {
    let mut text = format!("{name} {}", if o.descending { "DESC" } else { "ASC" });
    if o.nulls_first == o.descending {
        text.push_str(if o.nulls_first {
            " NULLS FIRST"
        } else {
            " NULLS LAST"
        });
    }
    text
}
