//! What a statement results in: done, a listing, a plan's text, or a job ready to run.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::{Launch, Session, StatementError};
use crate::catalog::TableDef;
use crate::clock::Clock;
use crate::connector::registry::{SinkFactory, SinkRequest};
use crate::connector::sink::Sink;
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
    Query(Box<PlannedQuery>),
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

/// An INSERT's job and the sink it writes to (a statement set's: one per INSERT).
pub struct PlannedInsert {
    pub(super) graph: JobGraph,
    pub(super) targets: Vec<SinkTarget>,
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
    /// Runs the job into the tables' sinks, which write to `out` where they print (the
    /// print connector).
    pub fn run(self, session: &Session, out: &mut dyn Write) -> Result<(), StatementError> {
        let PlannedInsert { graph, targets } = self;
        let launch = session.launch(&graph, &table_names(&targets))?;
        run_into(
            launch,
            graph,
            &targets,
            session.batch_mode(),
            session.clock.clone(),
            out,
            session.cancel.clone(),
        )
    }
}

/// The names of the tables `targets` write.
pub(super) fn table_names(targets: &[SinkTarget]) -> Vec<&str> {
    targets.iter().map(|t| t.name.as_str()).collect()
}

/// Creates the sinks of `targets`, each printing to `out`, and runs `launch`'s job into them.
pub(super) fn run_into(
    launch: Launch,
    graph: JobGraph,
    targets: &[SinkTarget],
    batch: bool,
    clock: Arc<dyn Clock>,
    out: &mut dyn Write,
    cancel: Arc<AtomicBool>,
) -> Result<(), StatementError> {
    let checkpointing = launch.options.checkpoint.is_some();
    let shared = SharedOut(Rc::new(RefCell::new(out)));
    let mut outs: Vec<SharedOut> = targets.iter().map(|_| shared.clone()).collect();
    let requests: Vec<SinkRequest> = targets
        .iter()
        .map(|t| t.request(batch, clock.clone(), checkpointing))
        .collect();
    let mut sinks = Vec::new();
    for ((target, request), out) in targets.iter().zip(&requests).zip(outs.iter_mut()) {
        sinks.push(target.factory.create(request, out)?);
    }
    let mut sinks: Vec<&mut dyn Sink> = sinks
        .iter_mut()
        .map(|s| &mut **s as &mut dyn Sink)
        .collect();
    Ok(launch.run(graph, &mut sinks, cancel)?)
}

/// The client's output, written by each sink of a job (a statement set's print sinks print
/// to the same place). The sinks run on one thread, one call at a time.
#[derive(Clone)]
struct SharedOut<'o>(Rc<RefCell<&'o mut dyn Write>>);

impl Write for SharedOut<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.0.borrow_mut().write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.borrow_mut().flush()
    }
}
