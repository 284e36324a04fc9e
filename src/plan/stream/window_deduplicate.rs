//! `WindowDeduplicate`: `ROW_NUMBER() OVER (PARTITION BY window_start, window_end [, keys]
//! ORDER BY <rowtime> ASC|DESC)` kept at rank 1 right over a windowing TVF (seed 002): per
//! window and key the first (ASC) or last (DESC) row by event time, emitted once when the
//! watermark passes the window's end. Its input arrives through an exchange on the keys (all
//! to one instance without keys); it emits its input's columns (`exec/window_deduplicate.rs`
//! runs it).

use super::StreamPlan;
use super::window_table_function::window_text;
use crate::plan::aggregate::GroupWindow;
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamWindowDeduplicate {
    pub input: Box<StreamPlan>,
    /// The TVF's windows (for EXPLAIN; rows carry their window in the columns below).
    pub window: GroupWindow,
    /// Input columns: `window_start`, `window_end`.
    pub window_start: usize,
    pub window_end: usize,
    /// The partition keys besides the window, input columns.
    pub keys: Vec<usize>,
    /// The rowtime column ordering the rows.
    pub order_key: usize,
    /// Keep the last row (ORDER BY … DESC), else the first.
    pub keep_last: bool,
    /// The input's.
    pub schema: Schema,
}

impl StreamWindowDeduplicate {
    /// `WindowDeduplicate(window=[TUMBLE(win_start=[window_start], win_end=[window_end],
    /// size=[10 min])], keep=[LastRow], partitionKeys=[], orderKey=[bidtime], order=[ROWTIME])`;
    /// the same in both plan sections.
    pub fn explain(&self) -> String {
        let name = |i: usize| self.schema.fields[i].name.clone();
        let bounds = format!(
            "win_start=[{}], win_end=[{}]",
            name(self.window_start),
            name(self.window_end)
        );
        let keys: Vec<String> = self.keys.iter().map(|&k| name(k)).collect();
        format!(
            "WindowDeduplicate(window=[{}], keep=[{}], partitionKeys=[{}], orderKey=[{}], order=[ROWTIME])",
            window_text(&self.window, &bounds),
            if self.keep_last {
                "LastRow"
            } else {
                "FirstRow"
            },
            keys.join(", "),
            name(self.order_key)
        )
    }
}
