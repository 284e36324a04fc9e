//! `TemporalSort`: `ORDER BY` a time attribute (ascending, then any other keys) without a
//! LIMIT in streaming mode, as Flink's `StreamPhysicalTemporalSort`: all rows through one
//! instance; on rowtime each row waits until the watermark passes it and rows leave in time
//! order (ties by the other keys, then arrival), a row already behind the watermark dropped;
//! on proctime rows leave at the next tick, sorted by the other keys. Insert-only, over an
//! insert-only input (`exec/temporal_sort.rs` runs it; in batch mode it is a sort).

use super::{ChangelogMode, StreamPlan};
use crate::plan::logical::OrderKey;
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamTemporalSort {
    pub input: Box<StreamPlan>,
    /// The first key is the time attribute, ascending.
    pub order: Vec<OrderKey>,
    pub schema: Schema,
}

impl StreamTemporalSort {
    pub fn changelog_mode(&self) -> ChangelogMode {
        ChangelogMode::INSERT_ONLY
    }

    /// `TemporalSort(orderBy=[ts ASC, s DESC])`.
    pub fn explain(&self) -> String {
        let fields = &self.input.schema().fields;
        let order: Vec<String> = self
            .order
            .iter()
            .map(|o| super::rank::order_key_text(&fields[o.column].name, o))
            .collect();
        format!("TemporalSort(orderBy=[{}])", order.join(", "))
    }
}
