//! A running query's result as a changelog stream: the job runs on a thread of its own and
//! sends its chunks through a bounded channel, so a program that reads slowly slows the job
//! rather than buffering its whole result.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use super::ApiError;
use crate::connector::sink::Sink;
use crate::exec::error::ExecError;
use crate::runtime::run::{self, JobMetrics};
use crate::session::PlannedQuery;
use crate::types::Schema;
use crate::types::chunk::{RowKind, StreamChunk};
use crate::types::text::format_value;
use crate::types::time::SessionZone;

/// Chunks the result holds before the job waits for the program.
const RESULT_CAPACITY: usize = 64;

/// One change of the result: its kind and its fields as Flink prints them (`None`: NULL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangelogRow {
    pub kind: RowKind,
    pub fields: Vec<Option<String>>,
}

enum Delivery {
    Chunk(StreamChunk),
    /// The job ended: successfully, or with its failure.
    End(Result<(), ExecError>),
}

/// The result of a running query.
pub struct TableResult {
    schema: Schema,
    zone: SessionZone,
    receiver: Receiver<Delivery>,
    cancel: Arc<AtomicBool>,
    metrics: Arc<JobMetrics>,
    job: Option<JoinHandle<()>>,
    ended: bool,
}

/// The sink of the job: every chunk into the result's channel.
struct ChannelSink(SyncSender<Delivery>);

impl Sink for ChannelSink {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        self.0
            .send(Delivery::Chunk(chunk))
            .map_err(|_| ExecError::Cancelled)
    }
    fn finish(&mut self) -> Result<(), ExecError> {
        Ok(())
    }
}

impl TableResult {
    pub(super) fn start(planned: PlannedQuery) -> Result<TableResult, ApiError> {
        let PlannedQuery {
            graph,
            schema,
            zone,
            run_options,
        } = planned;
        let (sender, receiver) = sync_channel(RESULT_CAPACITY);
        let cancel = Arc::new(AtomicBool::new(false));
        let metrics = run_options.metrics.clone();
        let job_cancel = cancel.clone();
        let job = std::thread::Builder::new()
            .name("query".into())
            .spawn(move || {
                let mut sink = ChannelSink(sender.clone());
                let result = run::run(graph, &mut sink, job_cancel, &run_options);
                let _ = sender.send(Delivery::End(result));
            })
            .map_err(|e| {
                ApiError::Job(ExecError::Internal(format!("cannot start a thread: {e}")))
            })?;
        Ok(TableResult {
            schema,
            zone,
            receiver,
            cancel,
            metrics,
            job: Some(job),
            ended: false,
        })
    }

    /// The result's columns.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The next chunk of changes (`None`: the job has ended); the job's failure is the
    /// last item.
    pub fn next_chunk(&mut self) -> Option<Result<StreamChunk, ApiError>> {
        if self.ended {
            return None;
        }
        match self.receiver.recv() {
            Ok(Delivery::Chunk(chunk)) => Some(Ok(chunk)),
            Ok(Delivery::End(result)) => {
                self.ended = true;
                self.join();
                result.err().map(|e| Err(ApiError::Job(e)))
            }
            Err(_) => {
                self.ended = true;
                self.join();
                Some(Err(ApiError::Job(ExecError::Internal(
                    "the query's thread ended without a result".into(),
                ))))
            }
        }
    }

    /// The changes as chunks: Arrow batches with a row kind per row.
    pub fn chunks(&mut self) -> impl Iterator<Item = Result<StreamChunk, ApiError>> + '_ {
        std::iter::from_fn(move || self.next_chunk())
    }

    /// The changes one row at a time, fields rendered as Flink prints them.
    pub fn rows(&mut self) -> impl Iterator<Item = Result<ChangelogRow, ApiError>> + '_ {
        let result = self;
        let mut pending = std::collections::VecDeque::new();
        std::iter::from_fn(move || {
            loop {
                if let Some(row) = pending.pop_front() {
                    return Some(Ok(row));
                }
                match result.next_chunk()? {
                    Ok(chunk) => pending.extend(result.render(&chunk)),
                    Err(e) => return Some(Err(e)),
                }
            }
        })
    }

    /// Every change until the job ends.
    pub fn collect_rows(mut self) -> Result<Vec<ChangelogRow>, ApiError> {
        self.rows().collect()
    }

    /// Rows the job's window operators dropped as late (behind the watermark), counted
    /// when the job ends.
    pub fn late_rows(&self) -> u64 {
        self.metrics.total_late_rows()
    }

    /// A handle that stops the job (its result then ends with `ExecError::Cancelled`).
    pub fn canceller(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }

    fn render(&self, chunk: &StreamChunk) -> Vec<ChangelogRow> {
        (0..chunk.num_rows())
            .map(|row| ChangelogRow {
                kind: chunk.kind(row),
                fields: self
                    .schema
                    .fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        format_value(chunk.batch.column(i), row, &f.data_type, &self.zone)
                    })
                    .collect(),
            })
            .collect()
    }

    fn join(&mut self) {
        if let Some(job) = self.job.take() {
            let _ = job.join();
        }
    }
}

/// A result dropped before its end stops its job.
impl Drop for TableResult {
    fn drop(&mut self) {
        if !self.ended {
            self.cancel.store(true, Ordering::Relaxed);
            // Unblock a job waiting to send, then let it see the flag.
            while let Ok(delivery) = self.receiver.recv() {
                if matches!(delivery, Delivery::End(_)) {
                    break;
                }
            }
            self.join();
        }
    }
}
