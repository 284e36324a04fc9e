//! The session's jobs (docs/design/0008 §8): with `table.dml-sync` false (Flink's default)
//! an INSERT's job runs on a thread of its own while the client goes on; `SHOW JOBS` lists
//! the session's jobs, `STOP JOB '<id>' [WITH SAVEPOINT] [WITH DRAIN]` stops one, and a
//! script waits for its jobs at its end.
//!
//! A job runs in the background only where the client has said where its printed rows go
//! ([`Background`]): the binary does (stdout, or the REPL's printer above its prompt); an
//! embedding that reads the output itself runs INSERTs to their end, as `table.dml-sync`
//! true.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::result::{PlannedInsert, run_into, table_names};
use super::{Session, StatementError, StatementResult};
use crate::catalog::CatalogEntry;
use crate::runtime::checkpoint::{SavepointRequest, StopRequest};
use crate::types::time::format_timestamp;

/// `table.dml-sync`: whether an INSERT waits for its job (Flink's default: false).
pub const DML_SYNC: &str = "table.dml-sync";

/// Where a client runs jobs in the background.
#[derive(Clone)]
pub struct Background {
    /// A writer for a job's printed rows (the print connector), made on the job's thread.
    pub output: Arc<dyn Fn() -> Box<dyn Write> + Send + Sync>,
    /// A script's statements see its earlier INSERTs: a statement that reads a table a
    /// running job writes waits for that job first (the REPL does not, as Flink's client).
    pub in_order: bool,
}

/// A job's state, in Flink's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobStatus {
    Running,
    Finished,
    Failed,
    Canceled,
}

impl JobStatus {
    fn name(self) -> &'static str {
        match self {
            JobStatus::Running => "RUNNING",
            JobStatus::Finished => "FINISHED",
            JobStatus::Failed => "FAILED",
            JobStatus::Canceled => "CANCELED",
        }
    }
}

/// What a job's thread shares with the session.
struct Shared {
    status: Mutex<JobStatus>,
    failure: Mutex<Option<String>>,
}

/// One job of the session.
struct Job {
    id: String,
    name: String,
    /// When it was submitted (the session clock's nanoseconds).
    started: i64,
    /// The tables its INSERTs write.
    tables: Vec<String>,
    checkpointing: bool,
    cancel: Arc<AtomicBool>,
    stop: Arc<StopRequest>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Job {
    fn status(&self) -> JobStatus {
        self.shared
            .status
            .lock()
            .map_or(JobStatus::Failed, |status| *status)
    }

    /// Waits for the job's thread to end.
    fn join(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The session's jobs, in the order they were submitted.
#[derive(Default)]
pub(super) struct Jobs {
    list: Vec<Job>,
}

impl Session {
    /// Whether an INSERT runs in the background: `table.dml-sync` is not true and the
    /// client runs jobs in the background.
    pub fn inserts_in_background(&self) -> bool {
        self.background.is_some()
            && !self
                .options
                .get(DML_SYNC)
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }

    /// Starts an INSERT's job on a thread of its own; returns its id.
    pub fn submit(&mut self, insert: PlannedInsert) -> Result<String, StatementError> {
        let Some(background) = self.background.clone() else {
            return Err(StatementError::Job(
                "this client runs no job in the background".into(),
            ));
        };
        let PlannedInsert { graph, targets } = insert;
        let launch = self.launch(&graph, &table_names(&targets))?;
        let checkpointing = launch.options.checkpoint.is_some();
        let request_batch = self.batch_mode();
        let clock = self.clock.clone();
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = launch.options.stop.clone();
        let shared = Arc::new(Shared {
            status: Mutex::new(JobStatus::Running),
            failure: Mutex::new(None),
        });
        let (id, name) = (launch.id.clone(), launch.name.clone());
        let tables: Vec<String> = table_names(&targets)
            .into_iter()
            .map(String::from)
            .collect();
        let thread = {
            let (cancel, shared) = (cancel.clone(), shared.clone());
            std::thread::Builder::new()
                .name(format!("job-{}", &id[..8]))
                .spawn(move || {
                    let id = launch.id.clone();
                    let mut out = (background.output)();
                    let result = run_into(
                        launch,
                        graph,
                        &targets,
                        request_batch,
                        clock,
                        &mut *out,
                        cancel.clone(),
                    );
                    let _ = out.flush();
                    let status = match &result {
                        Ok(()) => JobStatus::Finished,
                        Err(_) if cancel.load(Ordering::Relaxed) => JobStatus::Canceled,
                        Err(e) => {
                            eprintln!("[ERROR] Job {id} failed:\n{e}");
                            if let Ok(mut failure) = shared.failure.lock() {
                                *failure = Some(e.to_string());
                            }
                            JobStatus::Failed
                        }
                    };
                    if let Ok(mut s) = shared.status.lock() {
                        *s = status;
                    }
                })
                .map_err(|e| StatementError::Job(format!("cannot start the job: {e}")))?
        };
        self.jobs.list.push(Job {
            id: id.clone(),
            name,
            started: self.clock.now_nanos(),
            tables,
            checkpointing,
            cancel,
            stop,
            shared,
            thread: Some(thread),
        });
        Ok(id)
    }

    /// `SHOW JOBS`: the session's jobs, with Flink's columns (the start time in the session
    /// zone, as Flink prints a TIMESTAMP_LTZ(3)); `DESCRIBE JOB`: the job `only`.
    pub(super) fn show_jobs(&self, only: Option<&str>) -> StatementResult {
        let zone = self.zone();
        let rows = self
            .jobs
            .list
            .iter()
            .filter(|job| only.is_none_or(|id| job.id == id))
            .map(|job| {
                vec![
                    job.id.clone(),
                    job.name.clone(),
                    job.status().name().to_string(),
                    format_timestamp(zone.to_local(job.started), 3),
                ]
            })
            .collect();
        StatementResult::rows(&["job id", "job name", "status", "start time"], rows)
    }

    /// `STOP JOB '<id>' [WITH SAVEPOINT] [WITH DRAIN]`: with a savepoint, the job takes one
    /// into `state.savepoints.dir` (draining its event time first when asked) and stops;
    /// without, it is cancelled (with checkpoints, after a final one, as on Ctrl-C). Waits
    /// for the job to end.
    pub(super) fn stop_job(
        &mut self,
        id: &str,
        savepoint: bool,
        drain: bool,
    ) -> Result<StatementResult, StatementError> {
        let savepoint_dir = if savepoint {
            Some(self.savepoint_dir().map_err(|key| {
                StatementError::Job(format!(
                    "Could not stop job {id} with savepoint: no savepoint directory is configured. Configure a default via key '{key}'."
                ))
            })?)
        } else {
            None
        };
        let Some(job) = self.jobs.list.iter_mut().find(|j| j.id == id) else {
            return Err(StatementError::Job(format!(
                "Could not stop job {id}: no job with this id runs in this session (SHOW JOBS lists them)."
            )));
        };
        if job.status() != JobStatus::Running {
            return Err(StatementError::Job(format!(
                "Could not stop job {id}: it is {} already.",
                job.status().name()
            )));
        }
        if let Some(dir) = &savepoint_dir {
            if !job.checkpointing {
                return Err(StatementError::Job(format!(
                    "Could not stop job {id} with savepoint: the job takes no checkpoints. A savepoint needs '{}' set before the INSERT.",
                    super::checkpoint::CHECKPOINT_INTERVAL
                )));
            }
            job.stop.with_savepoint(SavepointRequest {
                dir: dir.clone(),
                drain,
            });
        }
        job.cancel.store(true, Ordering::Relaxed);
        job.join();
        if savepoint_dir.is_none() {
            return Ok(StatementResult::Done);
        }
        match job.stop.written() {
            Some(path) => Ok(StatementResult::rows(
                &["savepoint path"],
                vec![vec![format!("file:{}", path.display())]],
            )),
            None => Err(StatementError::Job(format!(
                "Could not stop job {id} with savepoint: {}",
                job.shared
                    .failure
                    .lock()
                    .ok()
                    .and_then(|f| f.clone())
                    .unwrap_or_else(|| "it ended before its savepoint completed".into())
            ))),
        }
    }

    /// Waits for the running jobs that write one of `tables` (a script's statement reads
    /// what its earlier INSERTs wrote), or a table stored where one of them is (two
    /// filesystem tables over one path), before the statement's job is built (a directory
    /// is listed then).
    pub(super) fn wait_for_writers(&self, tables: &[String]) {
        if !self.background.as_ref().is_some_and(|b| b.in_order) {
            return;
        }
        // A filesystem table's directory (Path equality ignores a trailing slash).
        let path_of = |table: &str| match self.catalog.get(table) {
            Some(CatalogEntry::Table(t)) if t.option("connector") == Some("filesystem") => {
                t.option("path").map(super::checkpoint::local_path)
            }
            _ => None,
        };
        let read: Vec<_> = tables.iter().filter_map(|t| path_of(t)).collect();
        for job in &self.jobs.list {
            let writes = |table: &String| {
                tables.contains(table) || path_of(table).is_some_and(|path| read.contains(&path))
            };
            if job.tables.iter().any(writes) {
                while job.status() == JobStatus::Running {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            }
        }
    }

    /// Waits for every job to end (a script's end); Ctrl-C or SIGTERM meanwhile (the
    /// session's cancel flag) stops them, each with a final checkpoint when it takes them.
    /// Returns the ids of the jobs that failed (each printed its failure as it ended).
    pub fn wait_for_jobs(&mut self) -> Vec<String> {
        while self.has_running_jobs() {
            if self.cancel.load(Ordering::Relaxed) {
                self.stop_all_jobs();
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let mut failed = Vec::new();
        for job in &mut self.jobs.list {
            job.join();
            if job.status() == JobStatus::Failed {
                failed.push(job.id.clone());
            }
        }
        failed
    }

    /// Cancels every running job (QUIT, a signal) and waits for them: a job with
    /// checkpoints takes a final one first and says where it is.
    pub fn stop_all_jobs(&mut self) {
        for job in &self.jobs.list {
            job.cancel.store(true, Ordering::Relaxed);
        }
        for job in &mut self.jobs.list {
            job.join();
        }
    }

    /// Whether a job of the session still runs.
    pub fn has_running_jobs(&self) -> bool {
        self.jobs
            .list
            .iter()
            .any(|j| j.thread.as_ref().is_some_and(|t| !t.is_finished()))
    }
}
