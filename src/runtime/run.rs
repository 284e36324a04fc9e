//! Running a job graph: a thread per task instance, split threads for the sources, and the
//! sink on the caller's thread (the client prints from there).
//!
//! A failure anywhere (an error or a panic in a split or a task, an error in the sink) or a
//! cancel from the client (Ctrl-C) ends the job at once: the first failure is kept in the
//! job's state and raises its stop flag, every thread waits with a timeout and looks at the
//! flag, and a sender blocked on a full queue fails once its consumer has gone.
//!
//! Bounded splits are read by a few worker threads taking them in order (a directory of
//! 25,000 files must not open 25,000 files or threads); unbounded ones (a socket, an endless
//! datagen) each get a thread at once, since each may never end and would starve the splits
//! queued behind it.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::chain::Chain;
use super::channel::{CHANNEL_BOUND, Envelope, Message, Router, Sender};
use super::checkpoint::barrier::{BarrierAligner, Received};
use super::checkpoint::coordinator::{CheckpointHandle, CoordinatorRun, QueuedSplits};
use super::checkpoint::storage::GraphUids;
use super::checkpoint::{
    CheckpointConfig, OperatorSnapshot, Participant, ParticipantState, RestoredState,
    SplitSnapshot, SplitStatus, StopRequest,
};
use super::fork::{Fork, SplitOutput};
use super::graph::{Edge, JobGraph, Partitioning, Upstream};
use super::task::Task;
use crate::clock::{Clock, SystemClock};
use crate::connector::sink::Sink;
use crate::connector::source::split::{Pipeline, SplitEvent};
use crate::exec::error::ExecError;
use crate::exec::operator::{OperatorContext, Output, WatermarkStatus};
use crate::runtime::sinks::JobSinks;
use crate::types::chunk::StreamChunk;

/// How long the sink waits for a message before it looks at the stop flag and wakes the sink.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// How long the sink waits, after its senders are gone, for their failure to be recorded.
const FAILURE_GRACE: Duration = Duration::from_secs(5);

/// The stack of a job thread (reserved, not committed, until used). Expressions nest up to
/// `MAX_EXPR_DEPTH` levels; evaluating one grows the stack on the heap, but dropping one
/// recurses on the thread's own stack.
const THREAD_STACK: usize = 64 << 20;

/// How a job runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Batch mode: the sink takes the first split's rows, then the second's, … — the order
    /// Flink gives at parallelism 1 (a directory's files in order, UNION ALL inputs left to
    /// right), the same on every run. Applies where splits feed the sink directly.
    pub ordered: bool,
    /// Processing time, for operators' timers.
    pub clock: Arc<dyn Clock>,
    /// Where the tasks report what their operators counted, when they stop.
    pub metrics: Arc<JobMetrics>,
    /// Checkpointing, when on (streaming jobs only).
    pub checkpoint: Option<CheckpointConfig>,
    /// The checkpoint the job starts from, already matched against its graph
    /// (`checkpoint::check_restore`).
    pub restore: Option<Arc<RestoredState>>,
    /// How the client stops the job with a savepoint (`STOP JOB … WITH SAVEPOINT`), before
    /// it sets the cancel flag.
    pub stop: Arc<StopRequest>,
}

/// What a job's operators counted, by task name (`GroupWindowAggregate`), summed over the
/// task's instances.
#[derive(Debug, Default)]
pub struct JobMetrics {
    late_rows: Mutex<std::collections::BTreeMap<String, u64>>,
}

impl JobMetrics {
    fn add_late_rows(&self, task: &str, rows: u64) {
        if rows > 0
            && let Ok(mut late) = self.late_rows.lock()
        {
            *late.entry(task.to_string()).or_default() += rows;
        }
    }

    /// Rows dropped as late, per task that dropped any.
    pub fn late_rows(&self) -> Vec<(String, u64)> {
        self.late_rows
            .lock()
            .map(|late| late.iter().map(|(k, v)| (k.clone(), *v)).collect())
            .unwrap_or_default()
    }

    /// Rows dropped as late by the whole job.
    pub fn total_late_rows(&self) -> u64 {
        self.late_rows().iter().map(|(_, n)| n).sum()
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            ordered: false,
            clock: Arc::new(SystemClock),
            metrics: Arc::default(),
            checkpoint: None,
            restore: None,
            stop: Arc::default(),
        }
    }
}

/// What every thread of a job shares: the first failure and the stop flag.
pub struct JobState {
    stop: AtomicBool,
    cancel: Arc<AtomicBool>,
    failure: Mutex<Option<ExecError>>,
    /// With checkpoints, the client's cancel does not stop the job at once: the coordinator
    /// first takes a final checkpoint, then stops it (`CoordinatorRun::run`).
    checkpoints_on_cancel: bool,
}

impl JobState {
    /// Whether the job must stop: it failed, or the client cancelled it (with checkpoints:
    /// once the final checkpoint is taken).
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
            || (!self.checkpoints_on_cancel && self.cancel.load(Ordering::Relaxed))
    }

    /// The client asked the job to stop.
    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Records `e` unless an earlier failure was recorded, and stops the job. A thread that
    /// stopped because the job stopped (`Cancelled`) records nothing.
    fn fail(&self, e: ExecError) {
        if !matches!(e, ExecError::Cancelled)
            && let Ok(mut first) = self.failure.lock()
            && first.is_none()
        {
            *first = Some(e);
        }
        // After what the stopping thread did (a completed checkpoint) is visible.
        self.stop.store(true, Ordering::SeqCst);
    }

    fn take_failure(&self) -> Option<ExecError> {
        self.failure.lock().ok().and_then(|mut f| f.take())
    }

    /// Why the job stopped. A thread whose consumer's queue closed stops the job
    /// (`Cancelled`, recording nothing) a moment before that consumer, whose work has
    /// returned and dropped its queue, records its failure: unless the client cancelled,
    /// wait a little for that record.
    fn stop_reason(&self) -> ExecError {
        let waited = std::time::Instant::now();
        loop {
            if let Some(e) = self.take_failure() {
                return e;
            }
            if self.cancel.load(Ordering::Relaxed) || waited.elapsed() >= FAILURE_GRACE {
                return ExecError::Cancelled;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn panic_text(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// Runs `work` on a thread of its own; its error or panic becomes the job's failure (just
/// after what it owns, its senders, is dropped: a consumer that sees its queue close without
/// an end waits a moment for the failure, and the job reports the recorded failure once
/// every thread has stopped). A thread that cannot start is the job's failure.
fn spawn(
    name: &str,
    job: &Arc<JobState>,
    what: &'static str,
    work: impl FnOnce(&JobState) -> Result<(), ExecError> + Send + 'static,
) -> Option<JoinHandle<()>> {
    let here = job.clone();
    let spawned = std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(THREAD_STACK)
        .spawn(move || {
            match std::panic::catch_unwind(AssertUnwindSafe(|| work(&here))) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => here.fail(e),
                // A thread that panicked ends the job with an error: its rows would be missing.
                Err(panic) => here.fail(ExecError::Internal(format!(
                    "{what} failed: {}",
                    panic_text(panic)
                ))),
            }
        });
    match spawned {
        Ok(handle) => Some(handle),
        Err(e) => {
            job.fail(ExecError::Internal(format!("cannot start a thread: {e}")));
            None
        }
    }
}

/// A split's part in checkpoints: the coordinator and who the split is to it, the last
/// barrier it sent, and the state it starts from.
struct SplitCheckpoints {
    handle: Option<(CheckpointHandle, Participant)>,
    last: u64,
    restore: Option<SplitSnapshot>,
}

/// Reads a split through its operators into its router until it ends (with the final
/// watermark, which fires everything downstream) or the job stops. Watermarks the split
/// carries itself go through the chain between its batches, in order. With checkpointing on,
/// the split injects each newly triggered barrier at the top of its loop, after recording
/// its position and its chain's state: the rows before the barrier are exactly those read.
fn run_split(
    mut pipeline: Pipeline,
    mut out: SplitOutput,
    job: &JobState,
    clock: &Arc<dyn Clock>,
    mut checkpoints: SplitCheckpoints,
) -> Result<(), ExecError> {
    let ctx = OperatorContext {
        clock: clock.clone(),
        ..OperatorContext::default()
    };
    if let Some(restored) = checkpoints
        .restore
        .take_if(|r| r.status == SplitStatus::Finished)
    {
        // Read to its end before the checkpoint: its channel ends at once, and its chain is
        // not opened (an opened watermark assigner would join its alignment group, never to
        // leave it, and hold the group's other splits back for good).
        if let Some((handle, participant)) = &checkpoints.handle {
            handle.finished(*participant, ParticipantState::Split(restored));
        }
        return out.end();
    }
    let mut chain = Chain::new(std::mem::take(&mut pipeline.operators));
    chain.open(&ctx)?;
    out.open(&ctx)?;
    if let Some(restored) = checkpoints.restore.take() {
        match restored.status {
            // A finished split returned above.
            SplitStatus::Finished | SplitStatus::Pending => {}
            SplitStatus::Running => {
                let operators = out.checkpointed_mut(&mut chain);
                for (op, state) in operators.into_iter().zip(&restored.chain) {
                    for (group, bytes) in &state.keyed {
                        op.restore(*group, bytes)?;
                    }
                    if let Some(part) = &state.instance {
                        op.restore_instance(&[part])?;
                    }
                }
                if let Some(position) = &restored.position {
                    pipeline.split.seek(position)?;
                }
                // The consumers' valves were restored at what this channel had sent.
                if restored.watermark > i64::MIN {
                    out.emit_watermark(restored.watermark)?;
                }
                if restored.idle {
                    out.emit_watermark_status(WatermarkStatus::Idle)?;
                }
            }
        }
    }
    // Positions acknowledged in checkpoints not yet known complete.
    let mut acked: std::collections::VecDeque<(u64, Vec<u8>)> = Default::default();
    while !job.stopped() {
        if let Some((handle, _)) = &checkpoints.handle
            && acked
                .front()
                .is_some_and(|(id, _)| *id <= handle.completed())
        {
            let completed = handle.completed();
            let mut newest = None;
            while acked.front().is_some_and(|(id, _)| *id <= completed) {
                newest = acked.pop_front().map(|(_, position)| position);
            }
            if let Some(position) = newest {
                pipeline.split.position_completed(&position);
            }
        }
        if let Some((handle, participant)) = &checkpoints.handle
            && let Some(id) = handle.due(checkpoints.last)
        {
            if handle.drains(id) {
                chain.on_watermark(i64::MAX, &mut out)?;
            }
            let (watermark, status) = out.last_sent();
            let operators = out.checkpointed(&chain);
            let state = SplitSnapshot {
                name: pipeline.split.describe(),
                status: SplitStatus::Running,
                position: pipeline.split.position(),
                watermark,
                idle: status == WatermarkStatus::Idle,
                chain: operators.into_iter().map(OperatorSnapshot::of).collect(),
            };
            if let Some(position) = &state.position {
                acked.push_back((id, position.clone()));
            }
            handle.ack(id, *participant, ParticipantState::Split(state));
            out.barrier(id)?;
            checkpoints.last = id;
            if handle.ends_job(id) {
                // Stopping with a savepoint: what comes after it would not be in it.
                while !job.stopped() {
                    std::thread::sleep(Duration::from_millis(5));
                }
                break;
            }
        }
        if let Some(ms) = chain.pauses_input() {
            // Aligned and ahead of its group: wait without reading (the clock still runs,
            // but a paused split is not idle).
            std::thread::sleep(Duration::from_millis(ms.clamp(1, 50) as u64));
            chain.on_input_active();
            chain.on_processing_time(ctx.now_millis(), &mut out)?;
            out.on_processing_time(ctx.now_millis())?;
            continue;
        }
        match pipeline.split.next()? {
            SplitEvent::Batch(batch) if batch.num_rows() == 0 => {}
            SplitEvent::Batch(batch) => {
                chain.process(0, StreamChunk::inserts(batch), &mut out)?;
                chain.on_input_active();
            }
            SplitEvent::Watermark(wm) => chain.on_watermark(wm, &mut out)?,
            SplitEvent::End => {
                chain.on_watermark(i64::MAX, &mut out)?;
                chain.finish(&mut out)?;
                out.finish()?;
                if let Some((handle, participant)) = &checkpoints.handle {
                    let state = SplitSnapshot::without_state(
                        pipeline.split.describe(),
                        SplitStatus::Finished,
                    );
                    handle.finished(*participant, ParticipantState::Split(state));
                }
                return out.end();
            }
        }
        // Operators whose processing time has come (the chain calls only those).
        chain.on_processing_time(ctx.now_millis(), &mut out)?;
        out.on_processing_time(ctx.now_millis())?;
    }
    Err(ExecError::Cancelled)
}

/// A bounded split waiting for a worker.
struct Queued {
    pipeline: Pipeline,
    router: SplitOutput,
    checkpoints: SplitCheckpoints,
}

impl QueuedSplits for Mutex<VecDeque<Queued>> {
    fn inject(
        &self,
        id: u64,
        mark_triggered: &dyn Fn(),
    ) -> Result<Vec<(Participant, SplitSnapshot)>, ExecError> {
        let mut queue = self
            .lock()
            .map_err(|_| ExecError::Internal("the split queue's lock is poisoned".into()))?;
        mark_triggered();
        let mut out = Vec::new();
        for q in queue.iter_mut() {
            let Some((_, participant)) = &q.checkpoints.handle else {
                continue;
            };
            q.router.barrier(id)?;
            q.checkpoints.last = id;
            // A split restored but not started yet keeps the state it was restored with.
            let state = q.checkpoints.restore.clone().unwrap_or_else(|| {
                SplitSnapshot::without_state(q.pipeline.split.describe(), SplitStatus::Pending)
            });
            out.push((*participant, state));
        }
        Ok(out)
    }
}

/// Bounded splits read at once: enough to keep the cores busy, few enough that their queues
/// and open files stay small.
fn split_workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()) + 1
}

/// Where an upstream sends: its consumer's queues, the edge's partitioning, and the first
/// channel number of the upstream on the consumer's side.
struct Target {
    senders: Vec<Sender>,
    partitioning: Partitioning,
    first_channel: u32,
}

/// The consumer side of the sinks: one queue for every channel (with the sink of each
/// channel), or in ordered runs one per channel, drained in turn (with its sink).
enum SinkInput {
    Shared(Receiver<Envelope>, Vec<usize>),
    InOrder(VecDeque<(Receiver<Envelope>, usize)>),
}

/// Runs `graph` to completion (or to the first failure, or until `cancel` is set: the
/// client's Ctrl-C) and writes every chunk reaching the sink into `sink`. The job only reads
/// `cancel`; its own failures stop it through a flag of its own, which cannot cancel the
/// session's next job.
pub fn run(
    graph: JobGraph,
    sink: &mut dyn Sink,
    cancel: Arc<AtomicBool>,
    options: &RunOptions,
) -> Result<(), ExecError> {
    run_sinks(graph, &mut [sink], cancel, options)
}

/// [`run`] for a job of several sinks (a statement set): `sinks[i]` takes the rows of the
/// sink edges whose `input` is `i`.
pub fn run_sinks(
    graph: JobGraph,
    sinks: &mut [&mut dyn Sink],
    cancel: Arc<AtomicBool>,
    options: &RunOptions,
) -> Result<(), ExecError> {
    let mut sinks = JobSinks::new(sinks);
    if graph.sink_inputs.iter().any(|e| e.input >= sinks.count()) {
        return Err(ExecError::Internal(
            "the job feeds a sink it was not given".into(),
        ));
    }
    let job = Arc::new(JobState {
        stop: AtomicBool::new(false),
        cancel,
        failure: Mutex::new(None),
        checkpoints_on_cancel: options.checkpoint.is_some() && !options.ordered,
    });
    // What the sink staged for the restored checkpoint is committed before anything runs.
    if let Some(state) = options.restore.as_ref().and_then(|r| r.sink.as_ref()) {
        sinks.restore(state)?;
    }
    let max_parallelism = graph.max_parallelism;
    let mut handles = Vec::new();
    let mut targets: Vec<(Upstream, Target)> = Vec::new();
    // Each task instance's queue, and the channels it reads.
    let mut task_inputs = Vec::new();
    for task in &graph.tasks {
        let mut receivers = Vec::new();
        let mut senders = Vec::new();
        for _ in 0..task.instances.len() {
            let (tx, rx) = sync_channel(CHANNEL_BOUND);
            senders.push(tx);
            receivers.push(rx);
        }
        let input_of_channel = connect(&graph, &task.inputs, &senders, &mut targets);
        task_inputs.push((receivers, input_of_channel));
    }
    let sink_channels: usize = graph.sink_inputs.iter().map(|e| graph.width(e.from)).sum();
    let in_order = options.ordered
        && graph
            .sink_inputs
            .iter()
            .all(|e| matches!(e.from, Upstream::Source(_)));
    // In ordered runs, each split's own queue to the sink, by source.
    let mut split_senders: Vec<VecDeque<Sender>> =
        graph.sources.iter().map(|_| VecDeque::new()).collect();
    let sink_input = if in_order {
        let mut receivers = VecDeque::new();
        for edge in &graph.sink_inputs {
            let Upstream::Source(s) = edge.from else {
                continue;
            };
            for _ in 0..graph.width(edge.from) {
                let (tx, rx) = sync_channel(CHANNEL_BOUND);
                split_senders[s].push_back(tx);
                receivers.push_back((rx, edge.input));
            }
        }
        SinkInput::InOrder(receivers)
    } else {
        let (tx, rx) = sync_channel(CHANNEL_BOUND);
        let sink_of_channel = connect(&graph, &graph.sink_inputs, &[tx], &mut targets);
        SinkInput::Shared(rx, sink_of_channel)
    };
    let target_of = |upstream: Upstream, targets: &[(Upstream, Target)]| {
        targets.iter().position(|(u, _)| *u == upstream)
    };

    // Checkpoints: a coordinator knowing every participant (streaming jobs only; an ordered
    // run is a batch job).
    let coordinator = match &options.checkpoint {
        Some(config) if !in_order => {
            let mut participants = vec![Participant::Sink];
            for (group, pipelines) in graph.sources.iter().enumerate() {
                for (index, pipeline) in pipelines.iter().enumerate() {
                    participants.push(Participant::Split { group, index });
                    if !pipeline.split.replayable() {
                        let what = if pipeline.split.is_bounded() {
                            "a restored job reads it again from its start (at-least-once)"
                        } else {
                            "after a restore, what it delivered after the last completed checkpoint is lost (at-most-once)"
                        };
                        eprintln!(
                            "[WARNING] {} cannot go back to a checkpointed position: {what}",
                            pipeline.split.describe()
                        );
                    }
                }
            }
            for (vertex, task) in graph.tasks.iter().enumerate() {
                for instance in 0..task.instances.len() {
                    participants.push(Participant::Task { vertex, instance });
                }
            }
            let uids = GraphUids {
                tasks: graph
                    .tasks
                    .iter()
                    .map(|t| (t.name.clone(), t.uids.clone()))
                    .collect(),
                sources: graph.source_uids.clone(),
                max_parallelism,
            };
            let first = options.restore.as_ref().map_or(1, |r| r.checkpoint + 1);
            Some(CoordinatorRun::new(
                config.clone(),
                uids,
                participants,
                first,
            ))
        }
        _ => None,
    };
    let handle = coordinator.as_ref().map(CoordinatorRun::handle);
    let first_barrier = handle.as_ref().map_or(0, CheckpointHandle::triggered);
    let restore = options.restore.clone();
    let source_uids = graph.source_uids.clone();

    // Tasks first, so that splits find their consumers running.
    let JobGraph { sources, tasks, .. } = graph;
    for ((t, task), (receivers, input_of_channel)) in tasks.into_iter().enumerate().zip(task_inputs)
    {
        let parallelism = task.instances.len() as u32;
        let Some(target) = target_of(Upstream::Task(t), &targets).map(|i| &targets[i].1) else {
            return Err(ExecError::Internal(format!(
                "task {} feeds nothing",
                task.name
            )));
        };
        for (i, (operators, input)) in task.instances.into_iter().zip(receivers).enumerate() {
            let output = Router::new(
                target.senders.clone(),
                &target.partitioning,
                target.first_channel + i as u32,
                i,
                max_parallelism,
            )?;
            let ctx = OperatorContext::instance(
                i as u32,
                parallelism,
                max_parallelism,
                options.clock.clone(),
            );
            let mut run = Task {
                chain: Chain::new(operators),
                input,
                input_of_channel: input_of_channel.clone(),
                output,
                ctx,
                checkpoints: handle.clone().map(|h| {
                    let participant = Participant::Task {
                        vertex: t,
                        instance: i,
                    };
                    (h, participant)
                }),
                restore: restore.clone().map(|r| (r, task.uids.clone())),
            };
            let name = format!("{} ({}/{parallelism})", task.name, i + 1);
            let (metrics, task_name) = (options.metrics.clone(), task.name.clone());
            handles.extend(spawn(&name, &job, "a task", move |job| {
                let result = run.run(job);
                metrics.add_late_rows(&task_name, run.chain.late_rows());
                result
            }));
        }
    }

    // Splits: unbounded ones on threads of their own, bounded ones queued for the workers.
    let mut queued: VecDeque<Queued> = VecDeque::new();
    for (s, pipelines) in sources.into_iter().enumerate() {
        let target = target_of(Upstream::Source(s), &targets).map(|i| &targets[i].1);
        let scan = source_uids.get(s).map(|u| u.scan.uid.to_string());
        for (i, pipeline) in pipelines.into_iter().enumerate() {
            let checkpoints = SplitCheckpoints {
                handle: handle
                    .clone()
                    .map(|h| (h, Participant::Split { group: s, index: i })),
                last: first_barrier,
                restore: restore.as_ref().and_then(|r| {
                    let key = (scan.clone().unwrap_or_default(), pipeline.split.describe());
                    r.splits.get(&key).cloned()
                }),
            };
            let router_to = |target: &Target| {
                Router::new(
                    target.senders.clone(),
                    &target.partitioning,
                    target.first_channel + i as u32,
                    i,
                    max_parallelism,
                )
            };
            let mut pipeline = pipeline;
            let router = if !pipeline.branches.is_empty() {
                let mut branches = Vec::new();
                for (b, operators) in std::mem::take(&mut pipeline.branches)
                    .into_iter()
                    .enumerate()
                {
                    let upstream = Upstream::Branch {
                        source: s,
                        branch: b,
                    };
                    let target = target_of(upstream, &targets)
                        .map(|t| &targets[t].1)
                        .ok_or_else(|| ExecError::Internal("a branch feeds nothing".into()))?;
                    branches.push((operators, router_to(target)?));
                }
                SplitOutput::Fork(Fork::new(branches))
            } else {
                SplitOutput::One(match target {
                    Some(target) => router_to(target)?,
                    None => {
                        let sender = split_senders[s]
                            .pop_front()
                            .ok_or_else(|| ExecError::Internal("a source feeds nothing".into()))?;
                        Router::new(vec![sender], &Partitioning::Global, 0, 0, max_parallelism)?
                    }
                })
            };
            if pipeline.split.is_bounded() {
                queued.push_back(Queued {
                    pipeline,
                    router,
                    checkpoints,
                });
            } else {
                let clock = options.clock.clone();
                handles.extend(spawn("source", &job, "a split", move |job| {
                    run_split(pipeline, router, job, &clock, checkpoints)
                }));
            }
        }
    }
    drop(split_senders);
    drop(targets);
    let queue = Arc::new(Mutex::new(queued));
    for _ in 0..split_workers() {
        let queue = queue.clone();
        let clock = options.clock.clone();
        handles.extend(spawn("source", &job, "a split", move |job| {
            loop {
                let next = queue.lock().ok().and_then(|mut q| q.pop_front());
                let Some(Queued {
                    pipeline,
                    router,
                    checkpoints,
                }) = next
                else {
                    return Ok(());
                };
                if job.stopped() {
                    // Drop what is left, so that the consumers' queues close.
                    if let Ok(mut q) = queue.lock() {
                        q.clear();
                    }
                    return Err(ExecError::Cancelled);
                }
                run_split(pipeline, router, job, &clock, checkpoints)?;
            }
        }));
    }
    // The coordinator, once every split is running or queued.
    let over = Arc::new(AtomicBool::new(false));
    if let Some(coordinator) = coordinator {
        let (queue, over, stop) = (queue.clone(), over.clone(), options.stop.clone());
        handles.extend(spawn(
            "checkpoints",
            &job,
            "the checkpoint coordinator",
            move |job| {
                coordinator.run(
                    queue.as_ref(),
                    &|| job.stopped() || over.load(Ordering::Relaxed),
                    &|| job.cancelled(),
                    &stop,
                )
            },
        ));
    }
    drop(queue);

    let result = drive_sink(sink_input, sink_channels, &mut sinks, &job, handle);
    over.store(true, Ordering::Relaxed);
    if result.is_err() {
        job.stop.store(true, Ordering::SeqCst);
    }
    for h in handles {
        let _ = h.join();
    }
    // A thread that stopped because another failed can be seen first; once every thread
    // is done, the failure that stopped the job is recorded, and is the one reported.
    match result {
        Err(ExecError::Cancelled) => Err(job.take_failure().unwrap_or(ExecError::Cancelled)),
        Err(e) => Err(e),
        Ok(()) => sinks.finish(),
    }
}

/// Creates the targets of a consumer's input edges (its instances' `senders`), returning
/// the input index of each of its channels.
fn connect(
    graph: &JobGraph,
    inputs: &[Edge],
    senders: &[Sender],
    targets: &mut Vec<(Upstream, Target)>,
) -> Vec<usize> {
    let mut input_of_channel = Vec::new();
    for edge in inputs {
        targets.push((
            edge.from,
            Target {
                senders: senders.to_vec(),
                partitioning: edge.partitioning.clone(),
                first_channel: input_of_channel.len() as u32,
            },
        ));
        input_of_channel.extend(std::iter::repeat_n(edge.input, graph.width(edge.from)));
    }
    input_of_channel
}

/// What the sinks do with a message on a channel of sink `sink`: write a chunk, count an
/// end.
fn sink_message(
    sinks: &mut JobSinks,
    sink: usize,
    job: &JobState,
    message: Message,
    ended: &mut usize,
) {
    match message {
        Message::Chunk(chunk) => {
            if let Err(e) = sinks.get(sink).and_then(|s| s.write(chunk)) {
                job.fail(e);
            }
        }
        Message::End => *ended += 1,
        Message::Watermark(_) | Message::Status(_) | Message::Barrier(_) => {}
    }
}

/// The sink's loop: writes chunks as they come until every channel has ended, waking the
/// sink while nothing comes. When the job stops, rows already queued are still written:
/// they were accepted before the failure (Flink prints the rows before a bad one), and what
/// is queued is bounded by the queues' bounds. With checkpointing on, the sink aligns its
/// channels' barriers, hands the coordinator what it staged, and commits each checkpoint
/// once the coordinator has completed it.
fn drive_sink(
    input: SinkInput,
    channels: usize,
    sinks: &mut JobSinks,
    job: &JobState,
    checkpoints: Option<CheckpointHandle>,
) -> Result<(), ExecError> {
    let (mut queues, sink_of_channel, in_order) = match input {
        SinkInput::Shared(rx, sink_of_channel) => {
            (VecDeque::from([(rx, 0)]), sink_of_channel, false)
        }
        SinkInput::InOrder(receivers) => (receivers, Vec::new(), true),
    };
    let mut ended = 0;
    let mut aligner = BarrierAligner::new(channels);
    let mut committed = checkpoints.as_ref().map_or(0, CheckpointHandle::completed);
    // The sink acts on time alone (closing parts) every poll interval, whatever arrives:
    // a stream of watermarks alone must not keep it from it.
    let mut woken = std::time::Instant::now();
    let result = loop {
        if ended == channels {
            break Ok(());
        }
        if let Some(handle) = &checkpoints {
            let completed = handle.completed();
            if completed > committed {
                committed = completed;
                if let Err(e) = sinks.commit(completed) {
                    job.fail(e);
                }
            }
        }
        if woken.elapsed() >= POLL_INTERVAL {
            woken = std::time::Instant::now();
            if let Err(e) = sinks.on_idle() {
                job.fail(e);
            }
        }
        if job.stopped() {
            // A final checkpoint completed just before the job stopped commits.
            if let Some(handle) = &checkpoints
                && handle.completed() > committed
                && let Err(e) = sinks.commit(handle.completed())
            {
                job.fail(e);
            }
            'drain: for (rx, queue_sink) in &queues {
                while let Ok(Envelope { channel, message }) = rx.try_recv() {
                    let sink = if in_order {
                        *queue_sink
                    } else {
                        sink_of_channel.get(channel as usize).copied().unwrap_or(0)
                    };
                    if let Message::Chunk(chunk) = message
                        && sinks.get(sink).and_then(|s| s.write(chunk)).is_err()
                    {
                        break 'drain;
                    }
                }
            }
            break Err(job.stop_reason());
        }
        let Some((rx, queue_sink)) = queues.front() else {
            break Err(ExecError::Internal("a split stopped without ending".into()));
        };
        match rx.recv_timeout(POLL_INTERVAL) {
            Ok(Envelope { channel, message }) => {
                let channel = channel as usize;
                if in_order {
                    // A batch job: no barriers; each queue is one channel, drained in turn.
                    let end = matches!(message, Message::End);
                    sink_message(sinks, *queue_sink, job, message, &mut ended);
                    if end {
                        queues.pop_front();
                    }
                    continue;
                }
                let sink_of = |channel: usize| sink_of_channel.get(channel).copied().unwrap_or(0);
                let aligned = match aligner.receive(channel, message) {
                    Received::Process(message) => {
                        let end = matches!(message, Message::End);
                        sink_message(sinks, sink_of(channel), job, message, &mut ended);
                        match end.then(|| aligner.check()) {
                            Some(Received::Aligned(id)) => Some(id),
                            _ => None,
                        }
                    }
                    Received::Held => None,
                    Received::Aligned(id) => Some(id),
                };
                if let Some(id) = aligned {
                    if let Some(handle) = &checkpoints {
                        if handle.drains(id)
                            && let Err(e) = sinks.end_input()
                        {
                            job.fail(e);
                        }
                        match sinks.pre_commit(id) {
                            Ok(state) => {
                                handle.ack(id, Participant::Sink, ParticipantState::Sink(state))
                            }
                            Err(e) => job.fail(e),
                        }
                    }
                    for (channel, message) in aligner.release() {
                        sink_message(sinks, sink_of(channel), job, message, &mut ended);
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            // Every sender is gone without an end: the thread that failed records why (and
            // stops the job) just after it let go of its senders.
            Err(RecvTimeoutError::Disconnected) => {
                let waited = std::time::Instant::now();
                while !job.stopped() && waited.elapsed() < FAILURE_GRACE {
                    std::thread::sleep(Duration::from_millis(1));
                }
                if !job.stopped() {
                    break Err(ExecError::Internal("a split stopped without ending".into()));
                }
            }
        }
    };
    // Senders blocked on a full queue fail once the queues are gone.
    drop(queues);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connector::source::split::SourceSplit;
    use arrow_array::RecordBatch;

    fn graph(pipelines: Vec<Pipeline>) -> JobGraph {
        JobGraph {
            sources: vec![pipelines],
            sink_inputs: vec![Edge {
                input: 0,
                from: Upstream::Source(0),
                partitioning: Partitioning::Global,
            }],
            ..JobGraph::default()
        }
    }

    fn run_with(
        pipelines: Vec<Pipeline>,
        sink: &mut dyn Sink,
        cancel: Arc<AtomicBool>,
        ordered: bool,
    ) -> Result<(), ExecError> {
        let options = RunOptions {
            ordered,
            ..RunOptions::default()
        };
        super::run(graph(pipelines), sink, cancel, &options)
    }

    fn run(
        pipelines: Vec<Pipeline>,
        sink: &mut dyn Sink,
        cancel: Arc<AtomicBool>,
    ) -> Result<(), ExecError> {
        run_with(pipelines, sink, cancel, false)
    }

    fn run_in_order(
        pipelines: Vec<Pipeline>,
        sink: &mut dyn Sink,
        cancel: Arc<AtomicBool>,
    ) -> Result<(), ExecError> {
        run_with(pipelines, sink, cancel, true)
    }

    /// A batch of one `id` column.
    fn ids(values: Vec<i32>) -> Result<Option<RecordBatch>, ExecError> {
        let column = arrow_array::Int32Array::from(values);
        Ok(Some(RecordBatch::try_from_iter([(
            "id",
            Arc::new(column) as _,
        )])?))
    }

    struct Exploding;

    impl SourceSplit for Exploding {
        fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
            panic!("boom")
        }
        fn describe(&self) -> String {
            "exploding split".into()
        }
    }

    struct Counting(usize);

    impl Sink for Counting {
        fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
            self.0 += chunk.num_rows();
            Ok(())
        }
        fn finish(&mut self) -> Result<(), ExecError> {
            Ok(())
        }
    }

    #[test]
    fn a_panicking_split_fails_the_job() {
        let pipelines = vec![Pipeline {
            branches: Vec::new(),
            split: Box::new(Exploding),
            operators: vec![],
        }];
        let err = run(
            pipelines,
            &mut Counting(0),
            Arc::new(AtomicBool::new(false)),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "internal error: a split failed: boom");
    }

    /// Yields `batches` one-row batches holding `id`, sleeping `delay_ms` before each.
    struct Numbered {
        id: i32,
        batches: usize,
        delay_ms: u64,
    }

    impl SourceSplit for Numbered {
        fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
            if self.batches == 0 {
                return Ok(None);
            }
            self.batches -= 1;
            std::thread::sleep(std::time::Duration::from_millis(self.delay_ms));
            ids(vec![self.id])
        }
        fn describe(&self) -> String {
            format!("split {}", self.id)
        }
    }

    struct Collecting(Vec<i32>);

    impl Sink for Collecting {
        fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
            let ids = chunk
                .batch
                .column(0)
                .as_any()
                .downcast_ref::<arrow_array::Int32Array>();
            self.0.extend(ids.into_iter().flatten().flatten());
            Ok(())
        }
        fn finish(&mut self) -> Result<(), ExecError> {
            Ok(())
        }
    }

    #[test]
    fn in_order_runs_take_the_splits_one_after_another() {
        // The first split is the slowest, and more batches than the channel holds wait behind it.
        let pipelines: Vec<Pipeline> = (0..4)
            .map(|id| Pipeline {
                branches: Vec::new(),
                split: Box::new(Numbered {
                    id,
                    batches: CHANNEL_BOUND + 3,
                    delay_ms: if id == 0 { 2 } else { 0 },
                }),
                operators: vec![],
            })
            .collect();
        let mut sink = Collecting(Vec::new());
        run_in_order(pipelines, &mut sink, Arc::new(AtomicBool::new(false))).unwrap();
        let expected: Vec<i32> = (0..4)
            .flat_map(|id| std::iter::repeat_n(id, CHANNEL_BOUND + 3))
            .collect();
        assert_eq!(sink.0, expected);
    }

    /// An endless split: a one-row batch every `delay_ms`, or an empty one (a quiet socket).
    struct Endless {
        rows: bool,
        delay_ms: u64,
    }

    impl SourceSplit for Endless {
        fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
            std::thread::sleep(std::time::Duration::from_millis(self.delay_ms));
            ids(if self.rows { vec![7] } else { vec![] })
        }
        fn describe(&self) -> String {
            "endless".into()
        }
        fn is_bounded(&self) -> bool {
            false
        }
    }

    /// Fails (by panic or by error) on its `after`-th call.
    struct FailsAfter {
        after: usize,
        panics: bool,
    }

    impl SourceSplit for FailsAfter {
        fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
            if self.after == 0 {
                if self.panics {
                    panic!("boom");
                }
                return Err(ExecError::Source("bad row".into()));
            }
            self.after -= 1;
            std::thread::sleep(std::time::Duration::from_millis(5));
            ids(vec![1])
        }
        fn describe(&self) -> String {
            "failing".into()
        }
    }

    fn pipeline(split: impl SourceSplit + 'static) -> Pipeline {
        Pipeline {
            branches: Vec::new(),
            split: Box::new(split),
            operators: vec![],
        }
    }

    // Each of these hung before: the job waited for its unbounded (or slow, or quiet) sibling.
    #[test]
    fn a_panicking_split_ends_the_job_beside_an_endless_one() {
        let pipelines = vec![
            pipeline(Endless {
                rows: true,
                delay_ms: 1,
            }),
            pipeline(FailsAfter {
                after: 3,
                panics: true,
            }),
        ];
        let err = run(pipelines, &mut Counting(0), Arc::default()).unwrap_err();
        assert_eq!(err.to_string(), "internal error: a split failed: boom");
    }

    #[test]
    fn a_failing_split_ends_the_job_beside_a_quiet_one() {
        let pipelines = vec![
            pipeline(Endless {
                rows: false,
                delay_ms: 20,
            }),
            pipeline(FailsAfter {
                after: 2,
                panics: false,
            }),
        ];
        let err = run(pipelines, &mut Counting(0), Arc::default()).unwrap_err();
        assert_eq!(err.to_string(), "bad row");
    }

    #[test]
    fn in_order_a_later_split_failing_ends_the_job_at_once() {
        // The first split would take 10^6 batches; the second fails while it is drained.
        let pipelines = vec![
            pipeline(Numbered {
                id: 0,
                batches: 1_000_000,
                delay_ms: 1,
            }),
            pipeline(FailsAfter {
                after: 1,
                panics: false,
            }),
        ];
        let mut sink = Collecting(Vec::new());
        let err = run_in_order(pipelines, &mut sink, Arc::default()).unwrap_err();
        assert_eq!(err.to_string(), "bad row");
        assert!(sink.0.len() < 1_000_000);
    }

    #[test]
    fn cancelling_from_outside_ends_a_quiet_job() {
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        let canceller = std::thread::spawn(move || {
            // Cancel once the job runs (its splits are quiet, never ending by themselves).
            std::thread::sleep(std::time::Duration::from_millis(200));
            flag.store(true, Ordering::Relaxed);
        });
        let pipelines = vec![pipeline(Endless {
            rows: false,
            delay_ms: 10,
        })];
        let err = run(pipelines, &mut Counting(0), cancel).unwrap_err();
        assert!(matches!(err, ExecError::Cancelled), "{err}");
        canceller.join().unwrap();
    }

    /// Counts the idle calls it gets.
    struct Idle(usize);

    impl Sink for Idle {
        fn write(&mut self, _: StreamChunk) -> Result<(), ExecError> {
            Ok(())
        }
        fn finish(&mut self) -> Result<(), ExecError> {
            Ok(())
        }
        fn on_idle(&mut self) -> Result<(), ExecError> {
            self.0 += 1;
            if self.0 == 3 {
                return Err(ExecError::Sink("idle three times".into()));
            }
            Ok(())
        }
    }

    #[test]
    fn a_quiet_job_wakes_its_sink() {
        let pipelines = vec![pipeline(Endless {
            rows: false,
            delay_ms: 10,
        })];
        let mut sink = Idle(0);
        let err = run(pipelines, &mut sink, Arc::default()).unwrap_err();
        assert_eq!(err.to_string(), "idle three times");
    }

    /// A bounded split that counts how many of its kind are open at once.
    struct Tracked {
        id: i32,
        open: Arc<std::sync::atomic::AtomicUsize>,
        most: Arc<std::sync::atomic::AtomicUsize>,
        batches: usize,
        started: bool,
    }

    impl SourceSplit for Tracked {
        fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
            if !self.started {
                self.started = true;
                let now = self.open.fetch_add(1, Ordering::SeqCst) + 1;
                self.most.fetch_max(now, Ordering::SeqCst);
            }
            if self.batches == 0 {
                self.open.fetch_sub(1, Ordering::SeqCst);
                return Ok(None);
            }
            self.batches -= 1;
            std::thread::sleep(std::time::Duration::from_millis(1));
            ids(vec![self.id])
        }
        fn describe(&self) -> String {
            format!("tracked {}", self.id)
        }
    }

    #[test]
    fn bounded_splits_run_a_few_at_a_time_in_both_modes() {
        for ordered in [false, true] {
            let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let pipelines: Vec<Pipeline> = (0..40)
                .map(|id| {
                    pipeline(Tracked {
                        id,
                        open: open.clone(),
                        most: most.clone(),
                        batches: 3,
                        started: false,
                    })
                })
                .collect();
            let mut sink = Collecting(Vec::new());
            run_with(pipelines, &mut sink, Arc::default(), ordered).unwrap();
            assert!(most.load(Ordering::SeqCst) <= split_workers());
            assert_eq!(sink.0.len(), 120);
            if ordered {
                let expected: Vec<i32> = (0..40).flat_map(|id| [id; 3]).collect();
                assert_eq!(sink.0, expected);
            }
        }
    }
}

#[cfg(test)]
mod task_tests {
    use super::*;
    use crate::connector::source::split::SourceSplit;
    use crate::exec::operator::{Operator, Output};
    use crate::exec::state::key_group::DEFAULT_MAX_PARALLELISM;
    use crate::runtime::graph::SourceUids;
    use crate::runtime::graph::TaskVertex;
    use arrow_array::{Int32Array, Int64Array, RecordBatch};

    /// `batches` batches of the ids `first..first + rows`, then the end.
    struct Ids {
        next: i32,
        rows: i32,
        batches: usize,
    }

    impl SourceSplit for Ids {
        fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
            if self.batches == 0 {
                return Ok(None);
            }
            self.batches -= 1;
            let ids: Vec<i32> = (self.next..self.next + self.rows).collect();
            self.next += self.rows;
            let column = Int32Array::from(ids);
            Ok(Some(RecordBatch::try_from_iter([(
                "id",
                Arc::new(column) as _,
            )])?))
        }
        fn describe(&self) -> String {
            "ids".into()
        }
    }

    /// After each chunk, a watermark at its largest id.
    struct WatermarkAtMax;

    impl Operator for WatermarkAtMax {
        fn process(
            &mut self,
            _input: usize,
            chunk: StreamChunk,
            out: &mut dyn Output,
        ) -> Result<(), ExecError> {
            let ids = chunk.batch.column(0).as_any().downcast_ref::<Int32Array>();
            let max = ids.and_then(|ids| ids.iter().flatten().max()).unwrap_or(0);
            out.emit(chunk)?;
            out.emit_watermark(i64::from(max))
        }
    }

    /// Emits, at the end, one row per instance: its index, its row count, and (negated,
    /// in a second row) each watermark it saw — here as the rows `(index, -watermark)`.
    #[derive(Default)]
    struct Tally {
        index: u32,
        rows: i64,
        ids: Vec<i32>,
        watermarks: Vec<i64>,
    }

    impl Operator for Tally {
        fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
            self.index = ctx.index;
            Ok(())
        }
        fn process(
            &mut self,
            _input: usize,
            chunk: StreamChunk,
            _out: &mut dyn Output,
        ) -> Result<(), ExecError> {
            self.rows += chunk.num_rows() as i64;
            if let Some(ids) = chunk.batch.column(0).as_any().downcast_ref::<Int32Array>() {
                self.ids.extend(ids.iter().flatten());
            }
            Ok(())
        }
        fn on_watermark(&mut self, w: i64, _out: &mut dyn Output) -> Result<(), ExecError> {
            self.watermarks.push(w);
            Ok(())
        }
        fn finish(&mut self, out: &mut dyn Output) -> Result<(), ExecError> {
            // Every watermark this instance saw, in order, then its row count.
            let mut values = self.watermarks.clone();
            values.push(self.rows);
            let index = Int64Array::from(vec![i64::from(self.index); values.len()]);
            let values = Int64Array::from(values);
            let batch = RecordBatch::try_from_iter([
                ("index", Arc::new(index) as _),
                ("value", Arc::new(values) as _),
            ])?;
            TALLIES.lock().unwrap().push((self.index, self.ids.clone()));
            out.emit(StreamChunk::inserts(batch))
        }
    }

    static TALLIES: Mutex<Vec<(u32, Vec<i32>)>> = Mutex::new(Vec::new());

    struct Rows(Vec<(i64, i64)>);

    impl Sink for Rows {
        fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
            let col = |i: usize| {
                chunk
                    .batch
                    .column(i)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .clone()
            };
            let (a, b) = (col(0), col(1));
            self.0.extend(a.iter().flatten().zip(b.iter().flatten()));
            Ok(())
        }
        fn finish(&mut self) -> Result<(), ExecError> {
            Ok(())
        }
    }

    /// Three splits hash-partitioned by id over two task instances: every row reaches the
    /// instance owning its key group, and each instance's watermarks (the valve's minimum
    /// over the splits) rise and end at the final one.
    #[test]
    fn a_hash_exchange_feeds_each_key_to_its_instance_with_the_minimum_watermark() {
        let split = |first: i32| Pipeline {
            branches: Vec::new(),
            split: Box::new(Ids {
                next: first,
                rows: 100,
                batches: 5,
            }),
            operators: vec![Box::new(WatermarkAtMax)],
        };
        let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
            "id",
            arrow_schema::DataType::Int32,
            true,
        )]));
        let mut graph = JobGraph::default();
        let source = graph.add_source(
            vec![split(0), split(10_000), split(20_000)],
            SourceUids::default(),
        );
        let task = graph.add_task(TaskVertex {
            uids: vec![],
            name: "Tally".into(),
            instances: vec![
                vec![Box::new(Tally::default())],
                vec![Box::new(Tally::default())],
            ],
            inputs: vec![Edge {
                input: 0,
                from: source,
                partitioning: Partitioning::Hash {
                    columns: vec![0],
                    schema: schema.clone(),
                },
            }],
        });
        graph.sink_inputs = vec![Edge {
            input: 0,
            from: Upstream::Task(task),
            partitioning: Partitioning::Global,
        }];
        let mut sink = Rows(Vec::new());
        TALLIES.lock().unwrap().clear();
        super::run(graph, &mut sink, Arc::default(), &RunOptions::default()).unwrap();
        let mut total = 0;
        for index in [0, 1] {
            let values: Vec<i64> = sink
                .0
                .iter()
                .filter(|(i, _)| *i == index)
                .map(|(_, v)| *v)
                .collect();
            let (rows, watermarks) = values.split_last().unwrap();
            total += rows;
            assert!(watermarks.windows(2).all(|w| w[0] < w[1]), "{watermarks:?}");
            assert_eq!(watermarks.last(), Some(&i64::MAX));
        }
        assert_eq!(total, 1500);
        // Each id went to the instance owning its key group.
        let encoder = crate::exec::state::key::KeyEncoder::new(&schema, vec![0]).unwrap();
        for (index, ids) in TALLIES.lock().unwrap().iter() {
            let column = Int32Array::from(ids.clone());
            let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(column)]).unwrap();
            let range = crate::exec::state::key_group::KeyGroupRange::of_instance(
                DEFAULT_MAX_PARALLELISM,
                2,
                *index,
            );
            for row in encoder.encode(&batch).unwrap().iter() {
                let group = crate::exec::state::key_group::key_group_of(
                    row.as_ref(),
                    DEFAULT_MAX_PARALLELISM,
                );
                assert!(range.contains(group));
            }
        }
    }

    /// Never ends; an empty batch every few milliseconds (a quiet socket).
    struct Quiet;

    impl SourceSplit for Quiet {
        fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
            std::thread::sleep(std::time::Duration::from_millis(5));
            Ok(Some(RecordBatch::new_empty(Arc::new(
                arrow_schema::Schema::empty(),
            ))))
        }
        fn describe(&self) -> String {
            "quiet".into()
        }
        fn is_bounded(&self) -> bool {
            false
        }
    }

    struct OneBatchThenQuiet(bool);

    impl SourceSplit for OneBatchThenQuiet {
        fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
            if std::mem::replace(&mut self.0, true) {
                return Quiet.next_batch();
            }
            let column = Int32Array::from((0..100).collect::<Vec<i32>>());
            Ok(Some(RecordBatch::try_from_iter([(
                "id",
                Arc::new(column) as _,
            )])?))
        }
        fn describe(&self) -> String {
            "one batch".into()
        }
        fn is_bounded(&self) -> bool {
            false
        }
    }

    /// Declares its split idle at the first chance.
    struct GoesIdle(bool);

    impl Operator for GoesIdle {
        fn process(
            &mut self,
            _input: usize,
            chunk: StreamChunk,
            out: &mut dyn Output,
        ) -> Result<(), ExecError> {
            out.emit(chunk)
        }
        fn next_processing_time(&self) -> Option<i64> {
            (!self.0).then_some(0)
        }
        fn on_processing_time(&mut self, _now: i64, out: &mut dyn Output) -> Result<(), ExecError> {
            self.0 = true;
            out.emit_watermark_status(crate::exec::operator::WatermarkStatus::Idle)
        }
    }

    /// Records the watermarks it sees.
    struct Watermarks(Arc<Mutex<Vec<i64>>>);

    impl Operator for Watermarks {
        fn process(
            &mut self,
            _input: usize,
            _chunk: StreamChunk,
            _out: &mut dyn Output,
        ) -> Result<(), ExecError> {
            Ok(())
        }
        fn on_watermark(&mut self, w: i64, _out: &mut dyn Output) -> Result<(), ExecError> {
            self.0.lock().unwrap().push(w);
            Ok(())
        }
    }

    /// A quiet split holds a task's event time back until it goes idle; then the other
    /// split's watermark passes.
    #[test]
    fn an_idle_split_stops_holding_the_watermark_back() {
        for idles in [false, true] {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let quiet = Pipeline {
                branches: Vec::new(),
                split: Box::new(Quiet),
                operators: if idles {
                    vec![Box::new(GoesIdle(false))]
                } else {
                    vec![]
                },
            };
            // One batch, then quiet too (but never idle).
            let busy = Pipeline {
                branches: Vec::new(),
                split: Box::new(OneBatchThenQuiet(false)),
                operators: vec![Box::new(WatermarkAtMax)],
            };
            let mut graph = JobGraph::default();
            let source = graph.add_source(vec![quiet, busy], SourceUids::default());
            let task = graph.add_task(TaskVertex {
                uids: vec![],
                name: "Watermarks".into(),
                instances: vec![vec![Box::new(Watermarks(seen.clone()))]],
                inputs: vec![Edge {
                    input: 0,
                    from: source,
                    partitioning: Partitioning::Global,
                }],
            });
            graph.sink_inputs = vec![Edge {
                input: 0,
                from: Upstream::Task(task),
                partitioning: Partitioning::Global,
            }];
            let cancel = Arc::new(AtomicBool::new(false));
            let flag = cancel.clone();
            let canceller = std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(400));
                flag.store(true, Ordering::Relaxed);
            });
            let result = super::run(graph, &mut Rows(Vec::new()), cancel, &RunOptions::default());
            canceller.join().unwrap();
            assert!(matches!(result, Err(ExecError::Cancelled)));
            let seen = seen.lock().unwrap().clone();
            if idles {
                assert_eq!(seen, [99]);
            } else {
                assert_eq!(seen, Vec::<i64>::new());
            }
        }
    }

    /// `batches` batches of 100 rows one second apart from `start` (seconds), each row
    /// `(split, ts)`, sleeping `delay_ms` before each batch.
    struct Timed {
        split: i32,
        next: i64,
        batches: usize,
        delay_ms: u64,
    }

    impl SourceSplit for Timed {
        fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
            if self.batches == 0 {
                return Ok(None);
            }
            self.batches -= 1;
            std::thread::sleep(std::time::Duration::from_millis(self.delay_ms));
            let ts: Vec<i64> = (0..100).map(|i| (self.next + i) * 1_000_000_000).collect();
            self.next += 100;
            let split = Int32Array::from(vec![self.split; 100]);
            let ts = arrow_array::TimestampNanosecondArray::from(ts);
            Ok(Some(RecordBatch::try_from_iter([
                ("split", Arc::new(split) as _),
                ("ts", Arc::new(ts) as _),
            ])?))
        }
        fn describe(&self) -> String {
            "timed".into()
        }
    }

    /// Rows in arrival order: (split, seconds).
    struct Arrivals(Vec<(i32, i64)>);

    impl Sink for Arrivals {
        fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
            let split = chunk
                .batch
                .column(0)
                .as_any()
                .downcast_ref::<Int32Array>()
                .unwrap();
            let ts = chunk
                .batch
                .column(1)
                .as_any()
                .downcast_ref::<arrow_array::TimestampNanosecondArray>()
                .unwrap();
            for i in 0..chunk.num_rows() {
                self.0.push((split.value(i), ts.value(i) / 1_000_000_000));
            }
            Ok(())
        }
        fn finish(&mut self) -> Result<(), ExecError> {
            Ok(())
        }
    }

    /// Two splits of one alignment group, the second an hour ahead and fast: it waits while
    /// it is more than the drift (10 minutes) ahead of the slow one, so no row arrives much
    /// further ahead of the slow split than that (window state stays bounded). Without the
    /// group it runs through at once.
    #[test]
    fn alignment_pauses_a_split_far_ahead_of_its_group() {
        use crate::exec::state::alignment::AlignmentGroup;
        use crate::exec::watermark_assigner::{WatermarkAssignerOperator, WatermarkEmission};
        use crate::plan::expr::ScalarExpr;
        use crate::types::{DataType, TypeKind};
        for aligned in [false, true] {
            let group = AlignmentGroup::new(600_000, 5);
            let assigner = || {
                let ts = ScalarExpr::Column {
                    index: 1,
                    data_type: DataType::nullable(TypeKind::Timestamp(3)),
                };
                let emission = WatermarkEmission {
                    interval: 0,
                    on_event: false,
                    idle_timeout: 0,
                    exact: false,
                };
                let op = WatermarkAssignerOperator::new(
                    1,
                    ts,
                    emission,
                    crate::function::EvalContext::for_tests(0),
                );
                Box::new(if aligned {
                    op.with_alignment(group.join())
                } else {
                    op
                }) as Box<dyn Operator>
            };
            let slow = Pipeline {
                branches: Vec::new(),
                split: Box::new(Timed {
                    split: 0,
                    next: 0,
                    batches: 60,
                    delay_ms: 3,
                }),
                operators: vec![assigner()],
            };
            let fast = Pipeline {
                branches: Vec::new(),
                split: Box::new(Timed {
                    split: 1,
                    next: 3_600,
                    batches: 30,
                    delay_ms: 0,
                }),
                operators: vec![assigner()],
            };
            let mut sink = Arrivals(Vec::new());
            let mut graph = JobGraph::default();
            let source = graph.add_source(vec![slow, fast], SourceUids::default());
            graph.sink_inputs = vec![Edge {
                input: 0,
                from: source,
                partitioning: Partitioning::Global,
            }];
            super::run(graph, &mut sink, Arc::default(), &RunOptions::default()).unwrap();
            assert_eq!(sink.0.len(), 9_000);
            // How far ahead of the slow split's latest row the fast split's rows arrived.
            // How far ahead of the slow split's latest row the fast split's rows arrived,
            // from the slow split's first row on (a split counts in its group once it has
            // started, so the fast one may read a batch or two before), and where the slow
            // split was when the fast one ended.
            let mut slow_at = None;
            let mut furthest = 0;
            let mut slow_at_fast_end = -1;
            for (split, ts) in &sink.0 {
                if *split == 0 {
                    slow_at = Some(*ts);
                    continue;
                }
                if let Some(at) = slow_at.filter(|at| *at < 5_999) {
                    furthest = furthest.max(ts - at);
                }
                if *ts == 3_600 + 2_999 {
                    slow_at_fast_end = slow_at.unwrap_or(-1);
                }
            }
            if aligned {
                // The drift, a batch of the fast split and of the slow one.
                assert!(furthest <= 600 + 100 + 100, "{furthest}");
                assert!(slow_at_fast_end >= 5_000, "{slow_at_fast_end}");
            } else {
                assert!(slow_at_fast_end < 4_000, "{slow_at_fast_end}");
            }
        }
    }
}

#[cfg(test)]
mod idleness_tests {
    use super::*;
    use crate::connector::source::split::SourceSplit;
    use crate::exec::operator::{Operator, Output};
    use crate::exec::watermark_assigner::{WatermarkAssignerOperator, WatermarkEmission};
    use crate::plan::expr::ScalarExpr;
    use crate::runtime::graph::SourceUids;
    use crate::runtime::graph::TaskVertex;
    use crate::types::{DataType, TypeKind};
    use arrow_array::{Int32Array, RecordBatch, TimestampNanosecondArray};
    use std::sync::atomic::AtomicUsize;

    /// `batches` batches of `rows` rows `(split, ts)`, ts one second apart from `next`
    /// (seconds), in order; then `quiet_ms` of empty batches; then the end.
    struct InOrder {
        split: i32,
        next: i64,
        rows: i64,
        batches: usize,
        quiet_until: Option<std::time::Instant>,
        quiet_ms: u64,
    }

    impl SourceSplit for InOrder {
        fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
            if self.batches == 0 {
                let until = *self.quiet_until.get_or_insert_with(|| {
                    std::time::Instant::now() + Duration::from_millis(self.quiet_ms)
                });
                if std::time::Instant::now() >= until {
                    return Ok(None);
                }
                std::thread::sleep(Duration::from_millis(5));
                let split = Int32Array::from(Vec::<i32>::new());
                let ts = TimestampNanosecondArray::from(Vec::<i64>::new());
                return Ok(Some(RecordBatch::try_from_iter([
                    ("split", Arc::new(split) as _),
                    ("ts", Arc::new(ts) as _),
                ])?));
            }
            self.batches -= 1;
            let ts: Vec<i64> = (0..self.rows)
                .map(|i| (self.next + i) * 1_000_000_000)
                .collect();
            self.next += self.rows;
            let split = Int32Array::from(vec![self.split; self.rows as usize]);
            let ts = TimestampNanosecondArray::from(ts);
            Ok(Some(RecordBatch::try_from_iter([
                ("split", Arc::new(split) as _),
                ("ts", Arc::new(ts) as _),
            ])?))
        }
        fn describe(&self) -> String {
            "in order".into()
        }
    }

    fn assigner(idle_timeout: i64) -> Box<dyn Operator> {
        let ts = ScalarExpr::Column {
            index: 1,
            data_type: DataType::nullable(TypeKind::Timestamp(3)),
        };
        let emission = WatermarkEmission {
            interval: 0,
            on_event: false,
            idle_timeout,
            exact: false,
        };
        Box::new(WatermarkAssignerOperator::new(
            1,
            ts,
            emission,
            crate::function::EvalContext::for_tests(0),
        ))
    }

    /// A slow consumer: sleeps per chunk of split 0 and counts split 0's rows that arrive at
    /// or behind the watermark it has seen (rows a window operator would drop as late).
    struct SlowLateCounter {
        watermark: i64,
        sleep_ms: u64,
        late: Arc<AtomicUsize>,
    }

    impl Operator for SlowLateCounter {
        fn process(
            &mut self,
            _input: usize,
            chunk: StreamChunk,
            _out: &mut dyn Output,
        ) -> Result<(), ExecError> {
            let split = chunk
                .batch
                .column(0)
                .as_any()
                .downcast_ref::<Int32Array>()
                .unwrap();
            let ts = chunk
                .batch
                .column(1)
                .as_any()
                .downcast_ref::<TimestampNanosecondArray>()
                .unwrap();
            if split.value(0) == 0 {
                std::thread::sleep(Duration::from_millis(self.sleep_ms));
            }
            for i in 0..chunk.num_rows() {
                if split.value(i) == 0 && ts.value(i) / 1_000_000 <= self.watermark {
                    self.late.fetch_add(1, Ordering::SeqCst);
                }
            }
            Ok(())
        }
        fn on_watermark(&mut self, w: i64, out: &mut dyn Output) -> Result<(), ExecError> {
            self.watermark = self.watermark.max(w);
            out.emit_watermark(w)
        }
    }

    /// Split 0 is read without pause, its rows in time order; it is only slowed down by its
    /// consumer (backpressure). Split 1 is a batch far ahead, then quiet (not idle). No row of
    /// split 0 can be late: its own watermark never passes its next row. An idle timer that
    /// ran while split 0 was blocked on the full queue would declare it idle, the valve
    /// would move to split 1's watermark, and split 0's remaining rows would arrive behind it.
    #[test]
    fn a_backpressured_split_is_not_idle() {
        let late = Arc::new(AtomicUsize::new(0));
        let busy = Pipeline {
            branches: Vec::new(),
            split: Box::new(InOrder {
                split: 0,
                next: 0,
                rows: 10,
                batches: 24,
                quiet_until: None,
                quiet_ms: 0,
            }),
            operators: vec![assigner(40)],
        };
        let ahead = Pipeline {
            branches: Vec::new(),
            split: Box::new(InOrder {
                split: 1,
                next: 1_000_000,
                rows: 1,
                batches: 1,
                quiet_until: None,
                quiet_ms: 4_000,
            }),
            operators: vec![assigner(0)],
        };
        let mut graph = JobGraph::default();
        let source = graph.add_source(vec![busy, ahead], SourceUids::default());
        let task = graph.add_task(TaskVertex {
            uids: vec![],
            name: "Slow".into(),
            instances: vec![vec![Box::new(SlowLateCounter {
                watermark: i64::MIN,
                sleep_ms: 100,
                late: late.clone(),
            })]],
            inputs: vec![Edge {
                input: 0,
                from: source,
                partitioning: Partitioning::Global,
            }],
        });
        graph.sink_inputs = vec![Edge {
            input: 0,
            from: Upstream::Task(task),
            partitioning: Partitioning::Global,
        }];
        struct Nothing;
        impl Sink for Nothing {
            fn write(&mut self, _: StreamChunk) -> Result<(), ExecError> {
                Ok(())
            }
            fn finish(&mut self) -> Result<(), ExecError> {
                Ok(())
            }
        }
        super::run(graph, &mut Nothing, Arc::default(), &RunOptions::default()).unwrap();
        assert_eq!(late.load(Ordering::SeqCst), 0, "rows of split 0 made late");
    }

    /// A watermark at every chance, never a row.
    struct Ticks(i64);

    impl Operator for Ticks {
        fn process(
            &mut self,
            _input: usize,
            chunk: StreamChunk,
            out: &mut dyn Output,
        ) -> Result<(), ExecError> {
            out.emit(chunk)
        }
        fn next_processing_time(&self) -> Option<i64> {
            Some(0)
        }
        fn on_processing_time(&mut self, _now: i64, out: &mut dyn Output) -> Result<(), ExecError> {
            self.0 += 1;
            out.emit_watermark(self.0)
        }
    }

    /// Counts its wake-ups.
    struct Wakes(Arc<AtomicUsize>);

    impl Sink for Wakes {
        fn write(&mut self, _: StreamChunk) -> Result<(), ExecError> {
            Ok(())
        }
        fn finish(&mut self) -> Result<(), ExecError> {
            Ok(())
        }
        fn on_idle(&mut self) -> Result<(), ExecError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }

    /// A stream of watermarks without rows (a busy source into long windows) still wakes the
    /// sink on time, so the filesystem sink closes its parts when their time is up.
    #[test]
    fn watermarks_alone_do_not_keep_the_sink_from_waking() {
        struct Quiet;
        impl SourceSplit for Quiet {
            fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
                std::thread::sleep(Duration::from_millis(1));
                Ok(Some(RecordBatch::new_empty(Arc::new(
                    arrow_schema::Schema::empty(),
                ))))
            }
            fn describe(&self) -> String {
                "quiet".into()
            }
            fn is_bounded(&self) -> bool {
                false
            }
        }
        let mut graph = JobGraph::default();
        let source = graph.add_source(
            vec![Pipeline {
                branches: Vec::new(),
                split: Box::new(Quiet),
                operators: vec![Box::new(Ticks(0))],
            }],
            SourceUids::default(),
        );
        graph.sink_inputs = vec![Edge {
            input: 0,
            from: source,
            partitioning: Partitioning::Global,
        }];
        let wakes = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            flag.store(true, Ordering::Relaxed);
        });
        let result = super::run(
            graph,
            &mut Wakes(wakes.clone()),
            cancel,
            &RunOptions::default(),
        );
        canceller.join().unwrap();
        assert!(matches!(result, Err(ExecError::Cancelled)));
        // About every 50 ms over half a second.
        assert!(wakes.load(Ordering::SeqCst) >= 5, "{wakes:?}");
    }
}
