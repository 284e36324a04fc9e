//! `Sink`: an `INSERT INTO`'s target table.

use super::StreamPlan;
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamSink {
    pub input: Box<StreamPlan>,
    /// The target table's name in the session's catalog.
    pub table: String,
    pub schema: Schema,
}

impl StreamSink {
    pub fn explain(&self) -> String {
        format!(
            "Sink(table=[default_catalog.default_database.{}], fields=[{}])",
            self.table,
            super::names(&self.schema)
        )
    }
}
