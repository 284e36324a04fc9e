//! What a statement results in: done, a listing, a plan's text, or a job ready to run.

use std::io::Write;
use std::sync::Arc;

use super::{Session, StatementError};
use crate::catalog::TableDef;
use crate::clock::Clock;
use crate::connector::registry::{SinkFactory, SinkRequest};
use crate::runtime::graph::JobGraph;
use crate::runtime::run::RunOptions;
use crate::types::Schema;
use crate::types::time::SessionZone;

/// The result of [`Session::execute`].
pub enum StatementResult {
    /// The statement changed the session or the catalog (Flink: `OK`).
    Done,
    /// A listing (`SET`, `SHOW`, `DESCRIBE`): the column names and the rows' text.
    Rows {
        header: Vec<String>,
        rows: Vec<Vec<String>>,
    },
    /// `EXPLAIN`'s text.
    Explain(String),
    /// A `SELECT`, planned and built, for the caller to run with a sink of its own.
    Query(PlannedQuery),
    /// An `INSERT`, checked against its sink, ready to submit.
    Insert(PlannedInsert),
}

impl StatementResult {
    pub(super) fn rows(header: &[&str], rows: Vec<Vec<String>>) -> Self {
        StatementResult::Rows {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows,
        }
    }
}

/// A query ready to run: its job graph, result schema, session zone and run options.
pub struct PlannedQuery {
    pub graph: JobGraph,
    pub schema: Schema,
    pub zone: SessionZone,
    pub run_options: RunOptions,
}

/// An INSERT's job and the sink it writes to.
pub struct PlannedInsert {
    pub(super) graph: JobGraph,
    pub(super) target: SinkTarget,
}

/// What an INSERT's sink is made from.
pub(super) struct SinkTarget {
    pub(super) factory: &'static dyn SinkFactory,
    pub(super) name: String,
    pub(super) table: Arc<TableDef>,
    /// The table's physical columns.
    pub(super) physical: Schema,
    /// The columns the query writes (the physical ones but the static partitions, then the
    /// persisted metadata columns).
    pub(super) written: Schema,
    /// The metadata keys of the last columns of `written`.
    pub(super) metadata: Vec<String>,
    pub(super) static_partitions: Vec<(String, String)>,
    pub(super) overwrite: bool,
}

impl SinkTarget {
    pub(super) fn request(
        &self,
        batch: bool,
        clock: Arc<dyn Clock>,
        checkpointing: bool,
    ) -> SinkRequest<'_> {
        SinkRequest {
            name: &self.name,
            table: &self.table,
            physical: &self.physical,
            written: &self.written,
            metadata: &self.metadata,
            static_partitions: &self.static_partitions,
            batch,
            overwrite: self.overwrite,
            clock,
            checkpointing,
        }
    }
}

impl PlannedInsert {
    /// Runs the job into the table's sink, which writes to `out` where it prints (the print
    /// connector).
    pub fn run(self, session: &Session, out: &mut dyn Write) -> Result<(), StatementError> {
        let PlannedInsert { graph, target } = self;
        let launch = session.launch(&graph, &target.name)?;
        let checkpointing = launch.options.checkpoint.is_some();
        let request = target.request(session.batch_mode(), session.clock.clone(), checkpointing);
        let mut sink = target.factory.create(&request, out)?;
        Ok(launch.run(graph, sink.as_mut(), session.cancel.clone())?)
    }

    /// The table the INSERT writes.
    pub fn table(&self) -> &str {
        &self.target.name
    }
}
