//! `WindowRank`: a window Top-N, `ROW_NUMBER() OVER (PARTITION BY window_start, window_end
//! [, keys] ORDER BY …)` kept within a range of ranks, over a windowing TVF or a window
//! aggregate (Flink's `StreamPhysicalWindowRank`): each window's rows ranked once, when the
//! watermark passes the window's end; insert-only. `exec/window_rank.rs` runs it.

use super::window_table_function::window_text;
use super::{ChangelogMode, StreamPlan};
use crate::plan::aggregate::GroupWindow;
use crate::plan::logical::OrderKey;
use crate::types::{DataType, Schema};

#[derive(Debug, Clone)]
pub struct StreamWindowRank {
    pub input: Box<StreamPlan>,
    /// The windows the rows are in, for EXPLAIN.
    pub window: GroupWindow,
    /// The input's `window_start` and `window_end` columns.
    pub window_start: usize,
    pub window_end: usize,
    /// The other partition columns.
    pub keys: Vec<usize>,
    pub order: Vec<OrderKey>,
    /// First and last rank kept (1-based, inclusive).
    pub range: (u64, u64),
    /// Whether the rank is an output column (the last).
    pub with_rank: bool,
    /// The windows' time attribute type (`window_time`'s: TIMESTAMP or TIMESTAMP_LTZ), which
    /// says how a window's end becomes a trigger time.
    pub time_type: DataType,
    pub schema: Schema,
}

impl StreamWindowRank {
    pub fn changelog_mode(&self) -> ChangelogMode {
        ChangelogMode::INSERT_ONLY
    }

    /// `WindowRank(window=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[10
    /// min])], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=2], partitionBy=[],
    /// orderBy=[price DESC], select=[…, w0$o0])`.
    pub fn explain(&self) -> String {
        let input = &self.input.schema().fields;
        let name = |i: usize| input[i].name.clone();
        let order: Vec<String> = self
            .order
            .iter()
            .map(|o| super::rank::order_key_text(&name(o.column), o))
            .collect();
        let keys: Vec<String> = self.keys.iter().map(|&k| name(k)).collect();
        let select: Vec<&str> = self.schema.fields.iter().map(|f| f.name.as_str()).collect();
        format!(
            "WindowRank(window=[{}], rankType=[ROW_NUMBER], rankRange=[rankStart={}, rankEnd={}], partitionBy=[{}], orderBy=[{}], select=[{}])",
            window_text(
                &self.window,
                &format!(
                    "win_start=[{}], win_end=[{}]",
                    name(self.window_start),
                    name(self.window_end)
                )
            ),
            self.range.0,
            self.range.1,
            keys.join(", "),
            order.join(", "),
            select.join(", ")
        )
    }
}
