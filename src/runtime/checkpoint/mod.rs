//! Checkpoints (docs/design/0008-checkpoints.md): aligned barriers injected at every source
//! split, state snapshots of every chain when its barriers have aligned, a checkpoint written
//! under `<dir>/<job-id>/chk-<n>/` once every participant has acknowledged, and restore from
//! such a directory.
//!
//! The coordinator ([`coordinator`]) triggers checkpoints and collects what the participants
//! hand it: each source split (its position and its chain's instance state), each task
//! instance (its operators' keyed and instance state, and its input watermark), the sink
//! (what it must commit). A task or the sink aligns its channels with a
//! [`barrier::BarrierAligner`]. [`storage`] writes and reads the directories.

pub mod barrier;
pub mod coordinator;
pub mod storage;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::exec::error::ExecError;
use crate::exec::operator::{FrozenState, Operator, WatermarkStatus};
use crate::plan::stream::uid::NodeUid;

/// A job's checkpointing options (Flink's `execution.checkpointing.*`).
#[derive(Debug, Clone)]
pub struct CheckpointConfig {
    /// `execution.checkpointing.interval`.
    pub interval: Duration,
    /// `execution.checkpointing.dir`: the job's checkpoints go to `<dir>/<job-id>/`.
    pub dir: PathBuf,
    /// `execution.checkpointing.num-retained`: completed checkpoints kept.
    pub num_retained: usize,
    /// `execution.checkpointing.timeout`: a checkpoint not complete by then fails the job.
    pub timeout: Duration,
    /// `execution.checkpointing.min-pause`: from one completion to the next trigger.
    pub min_pause: Duration,
    /// `pipeline.name`: written into each checkpoint's metadata.
    pub job_name: String,
    /// The job's id (32 hex digits, `coordinator::new_job_id`): its directory's name.
    pub job_id: String,
}

/// How the client stops a running job with checkpoints (`STOP JOB '<id>' WITH SAVEPOINT`):
/// set before the job's cancel flag, read by the coordinator, which then writes its final
/// checkpoint as a savepoint under `dir` and records where.
#[derive(Debug, Default)]
pub struct StopRequest {
    savepoint: Mutex<Option<SavepointRequest>>,
    written: Mutex<Option<PathBuf>>,
}

/// Where a stopping job's savepoint goes, and whether the sources drain first (`WITH
/// DRAIN`: every split sends the final watermark before the savepoint's barrier, firing
/// every timer, as Flink's drain).
#[derive(Debug, Clone)]
pub struct SavepointRequest {
    /// `state.savepoints.dir`: the savepoint is `<dir>/savepoint-<job>-<random>/`.
    pub dir: PathBuf,
    pub drain: bool,
}

impl StopRequest {
    pub fn with_savepoint(&self, request: SavepointRequest) {
        if let Ok(mut s) = self.savepoint.lock() {
            *s = Some(request);
        }
    }

    pub fn savepoint(&self) -> Option<SavepointRequest> {
        self.savepoint.lock().ok().and_then(|s| s.clone())
    }

    /// The savepoint written, once the coordinator has completed it.
    pub fn written(&self) -> Option<PathBuf> {
        self.written.lock().ok().and_then(|w| w.clone())
    }

    fn record(&self, path: PathBuf) {
        if let Ok(mut w) = self.written.lock() {
            *w = Some(path);
        }
    }
}

/// One operator's state at a barrier: its key groups and its instance part.
#[derive(Clone, Default)]
pub struct OperatorSnapshot {
    pub keyed: Vec<(u32, Vec<u8>)>,
    /// The keyed state frozen at the barrier ([`Operator::freeze`]), for the coordinator to
    /// write key group by key group (`keyed` is empty then).
    pub frozen: Option<Arc<dyn FrozenState>>,
    pub instance: Option<Vec<u8>>,
}

impl std::fmt::Debug for OperatorSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OperatorSnapshot")
            .field("keyed", &self.keyed.len())
            .field("frozen", &self.frozen.is_some())
            .field("instance", &self.instance.as_ref().map(Vec::len))
            .finish()
    }
}

impl OperatorSnapshot {
    /// The operator's state: its keyed state frozen where it can be, else written now.
    pub fn of(operator: &dyn Operator) -> Self {
        let frozen = operator.freeze().map(Arc::from);
        OperatorSnapshot {
            keyed: if frozen.is_some() {
                Vec::new()
            } else {
                operator.snapshot()
            },
            frozen,
            instance: operator.snapshot_instance(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.keyed.is_empty() && self.frozen.is_none() && self.instance.is_none()
    }
}

/// Where a split stood at a barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitStatus {
    /// Queued behind other splits: it starts from its beginning.
    Pending,
    /// Being read: it goes on from its position.
    Running,
    /// Read to its end: a restored job skips it.
    Finished,
}

impl SplitStatus {
    pub fn name(self) -> &'static str {
        match self {
            SplitStatus::Pending => "pending",
            SplitStatus::Running => "running",
            SplitStatus::Finished => "finished",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "pending" => SplitStatus::Pending,
            "running" => SplitStatus::Running,
            "finished" => SplitStatus::Finished,
            _ => return None,
        })
    }
}

/// Who takes part in a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Participant {
    /// Split `index` of source group `group`.
    Split {
        group: usize,
        index: usize,
    },
    /// Instance `instance` of task vertex `vertex`.
    Task {
        vertex: usize,
        instance: usize,
    },
    Sink,
}

/// What a participant hands the coordinator at a barrier.
#[derive(Debug)]
pub enum ParticipantState {
    Split(SplitSnapshot),
    Task(TaskSnapshot),
    Sink(Vec<u8>),
}

#[derive(Debug, Clone)]
pub struct SplitSnapshot {
    /// The split's `describe()`: what a restored job finds it by.
    pub name: String,
    pub status: SplitStatus,
    /// The source's position (`SourceSplit::position`); `None` for a split that cannot
    /// replay or has none (pending, finished).
    pub position: Option<Vec<u8>>,
    /// The last watermark and status its channel sent.
    pub watermark: i64,
    pub idle: bool,
    pub chain: Vec<OperatorSnapshot>,
}

impl SplitSnapshot {
    /// A split that has not started, or has finished: nothing but its status.
    pub fn without_state(name: String, status: SplitStatus) -> Self {
        SplitSnapshot {
            name,
            status,
            position: None,
            watermark: i64::MIN,
            idle: false,
            chain: Vec::new(),
        }
    }

    pub fn watermark_status(&self) -> WatermarkStatus {
        if self.idle {
            WatermarkStatus::Idle
        } else {
            WatermarkStatus::Active
        }
    }
}

#[derive(Debug, Clone)]
pub struct TaskSnapshot {
    /// The watermark the instance's chain had last been given (its valve's output).
    pub watermark: i64,
    /// How long the task took to snapshot its chain at the barrier, in microseconds: the
    /// time it stopped processing for the checkpoint (Flink's synchronous duration).
    pub sync_micros: u64,
    pub chain: Vec<OperatorSnapshot>,
}

/// Snapshots every operator of a chain.
pub fn snapshot_chain(operators: &[Box<dyn Operator>]) -> Vec<OperatorSnapshot> {
    operators
        .iter()
        .map(|op| OperatorSnapshot::of(op.as_ref()))
        .collect()
}

/// What a job restores from: the state each operator, split and the sink get back, matched
/// by uid (docs/design/0008 §6). Built by [`storage::read_checkpoint`].
#[derive(Debug, Default)]
pub struct RestoredState {
    /// The checkpoint it was read from, for messages.
    pub path: PathBuf,
    pub checkpoint: u64,
    pub max_parallelism: u32,
    /// By operator key ([`operator_key`]).
    pub operators: std::collections::HashMap<String, RestoredOperator>,
    /// Task vertices' input watermarks, by vertex key ([`vertex_key`]).
    pub watermarks: std::collections::HashMap<String, i64>,
    /// By (scan uid, split name).
    pub splits: std::collections::HashMap<(String, String), SplitSnapshot>,
    pub sink: Option<Vec<u8>>,
}

#[derive(Debug, Default, Clone)]
pub struct RestoredOperator {
    pub line: String,
    pub keyed: Vec<(u32, storage::Segment)>,
    pub instance_parts: Vec<Vec<u8>>,
}

/// The key an operator's state is stored and found under: its uid, and its place among the
/// operators of its chain with the same uid (a scan's decoding steps share the scan's).
pub fn operator_key(uids: &[NodeUid], position: usize) -> String {
    let uid = &uids[position];
    let occurrence = uids[..position].iter().filter(|u| u.uid == uid.uid).count();
    format!("{}-{occurrence}", uid.uid)
}

/// The key of a task vertex's watermark: its first operator's, or its place in the graph
/// when its chain is empty.
pub fn vertex_key(uids: &[NodeUid], vertex: usize) -> String {
    match uids.first() {
        Some(u) => format!("{}", u.uid),
        None => format!("vertex-{vertex}"),
    }
}

impl RestoredState {
    /// Gives each operator of a task instance's chain its state: the key groups it owns
    /// (by `open`'s range, so `open` comes first) and every old instance's part.
    pub fn restore_chain(
        &self,
        operators: &mut [Box<dyn Operator>],
        uids: &[NodeUid],
        owns: impl Fn(u32) -> bool,
    ) -> Result<(), ExecError> {
        for (position, op) in operators.iter_mut().enumerate() {
            let Some(state) = uids
                .get(position)
                .and_then(|_| self.operators.get(&operator_key(uids, position)))
            else {
                continue;
            };
            let owned = state.keyed.iter().filter(|(group, _)| owns(*group));
            op.restoring(owned.clone().map(|(_, bytes)| bytes.len()).sum());
            for (group, bytes) in owned {
                op.restore(*group, bytes)
                    .map_err(|e| self.corrupt(&state.line, e))?;
            }
            op.restored().map_err(|e| self.corrupt(&state.line, e))?;
            if !state.instance_parts.is_empty() {
                let parts: Vec<&[u8]> = state.instance_parts.iter().map(Vec::as_slice).collect();
                op.restore_instance(&parts)
                    .map_err(|e| self.corrupt(&state.line, e))?;
            }
        }
        Ok(())
    }

    fn corrupt(&self, line: &str, e: ExecError) -> ExecError {
        ExecError::Checkpoint(format!(
            "cannot restore from '{}': the state of {line} does not read back: {e}",
            self.path.display()
        ))
    }
}

/// Checks that a job can start from `restored` (docs/design/0008 §6): the same number of
/// key groups, and every piece of state claimed by an operator or split of the new graph,
/// unless `ignore_unclaimed` (`execution.state-recovery.ignore-unclaimed-state`) drops it.
pub fn check_restore(
    graph: &crate::runtime::graph::JobGraph,
    restored: &RestoredState,
    ignore_unclaimed: bool,
) -> Result<(), ExecError> {
    let refuse = |why: String| {
        ExecError::Checkpoint(format!(
            "cannot restore from '{}': {why}",
            restored.path.display()
        ))
    };
    if restored.max_parallelism != graph.max_parallelism {
        return Err(refuse(format!(
            "it was taken with 'pipeline.max-parallelism' = {}, this job has {} (key groups cannot be cut anew)",
            restored.max_parallelism, graph.max_parallelism
        )));
    }
    let mut claimed = std::collections::HashSet::new();
    for task in &graph.tasks {
        for position in 0..task.uids.len() {
            claimed.insert(operator_key(&task.uids, position));
        }
    }
    let mut unclaimed: Vec<String> = restored
        .operators
        .iter()
        .filter(|(key, state)| {
            !claimed.contains(*key) && (!state.keyed.is_empty() || !state.instance_parts.is_empty())
        })
        .map(|(_, state)| state.line.clone())
        .collect();
    let mut splits = std::collections::HashSet::new();
    for (group, pipelines) in graph.sources.iter().enumerate() {
        let scan = graph
            .source_uids
            .get(group)
            .map(|u| u.scan.uid.to_string())
            .unwrap_or_default();
        for p in pipelines {
            splits.insert((scan.clone(), p.split.describe()));
        }
    }
    for (key, split) in &restored.splits {
        if split.status == SplitStatus::Running && !splits.contains(key) {
            unclaimed.push(format!("the source split {}", split.name));
        }
    }
    unclaimed.sort();
    match unclaimed.first() {
        Some(first) if !ignore_unclaimed => Err(refuse(format!(
            "the new plan has no operator for the state of {first}{} (the query changed at or below it, or it is gone).\nSET 'execution.state-recovery.ignore-unclaimed-state' = 'true' to start without that state.",
            if unclaimed.len() > 1 {
                format!(" and {} more", unclaimed.len() - 1)
            } else {
                String::new()
            }
        ))),
        _ => Ok(()),
    }
}
