//! `Limit`: `LIMIT n [OFFSET m]` without ORDER BY: the first rows to arrive, after the
//! offset (Flink's `StreamPhysicalLimit`), through a single instance; insert-only, over an
//! insert-only input. `exec/limit.rs` runs it.

use super::{ChangelogMode, StreamPlan};
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamLimit {
    pub input: Box<StreamPlan>,
    pub offset: u64,
    pub fetch: Option<u64>,
    pub schema: Schema,
}

impl StreamLimit {
    pub fn changelog_mode(&self) -> ChangelogMode {
        ChangelogMode::INSERT_ONLY
    }

    /// `Limit(offset=[0], fetch=[2])`.
    pub fn explain(&self) -> String {
        match self.fetch {
            Some(fetch) => format!("Limit(offset=[{}], fetch=[{fetch}])", self.offset),
            None => format!("Limit(offset=[{}], fetch=[unlimited])", self.offset),
        }
    }
}
