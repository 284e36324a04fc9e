//! The checkpoint coordinator of a job (docs/design/0008 §1): one thread that triggers
//! checkpoint `n` when the interval (and the minimum pause after the last completion) has
//! passed, one at a time, collects each participant's state, writes the checkpoint once every
//! participant has acknowledged it or finished, and then tells the sink it may commit.
//!
//! Barriers start at the splits: a running split's thread sees the newer triggered id at the
//! top of its loop ([`CheckpointHandle::due`]) and injects the barrier itself, after its
//! position; for the splits still queued for a worker the coordinator injects under the
//! queue's lock (a worker pops under the same lock), recording them as not started.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::storage::{self, CheckpointInfo, GraphUids};
use super::{CheckpointConfig, Participant, ParticipantState, SplitSnapshot, StopRequest};
use crate::clock::{Clock, SystemClock};
use crate::exec::error::ExecError;

enum Event {
    Ack(u64, Participant, ParticipantState),
    /// The participant has ended; its state in every later checkpoint.
    Finished(Participant, ParticipantState),
}

/// What the job's threads share with the coordinator.
pub struct Coordinator {
    triggered: AtomicU64,
    completed: AtomicU64,
    events: Mutex<Sender<Event>>,
    /// `<dir>/<job-id>/`.
    job_dir: PathBuf,
    /// The checkpoint that ends the job (a stop), 0 while none: splits stop reading once
    /// they have sent its barrier.
    last: AtomicU64,
    /// The last checkpoint is a savepoint with drain: splits send the final watermark first.
    drain: AtomicBool,
}

/// A participant's handle on the coordinator.
#[derive(Clone)]
pub struct CheckpointHandle(Arc<Coordinator>);

impl CheckpointHandle {
    /// The checkpoint to take part in now, when one newer than `last` has been triggered.
    pub fn due(&self, last: u64) -> Option<u64> {
        let id = self.0.triggered.load(Ordering::Acquire);
        (id > last).then_some(id)
    }

    /// Whether checkpoint `id` ends the job: after its barrier a split reads no more.
    pub fn ends_job(&self, id: u64) -> bool {
        self.0.last.load(Ordering::Acquire) == id
    }

    /// Whether checkpoint `id` is a savepoint taken `WITH DRAIN`: before its barrier, a
    /// split ends its event time (the final watermark), firing every window and timer.
    pub fn drains(&self, id: u64) -> bool {
        self.ends_job(id) && self.0.drain.load(Ordering::Acquire)
    }

    /// The newest checkpoint triggered.
    pub fn triggered(&self) -> u64 {
        self.0.triggered.load(Ordering::Acquire)
    }

    /// The newest checkpoint completed (durable): what a sink may commit.
    pub fn completed(&self) -> u64 {
        self.0.completed.load(Ordering::Acquire)
    }

    pub fn ack(&self, id: u64, participant: Participant, state: ParticipantState) {
        self.send(Event::Ack(id, participant, state));
    }

    pub fn finished(&self, participant: Participant, state: ParticipantState) {
        self.send(Event::Finished(participant, state));
    }

    fn send(&self, event: Event) {
        if let Ok(events) = self.0.events.lock() {
            // The coordinator has stopped with the job: nothing to record.
            let _ = events.send(event);
        }
    }

    /// The job's checkpoint directory.
    pub fn job_dir(&self) -> &std::path::Path {
        &self.0.job_dir
    }
}

/// The splits waiting for a worker, for which the coordinator injects barriers.
pub trait QueuedSplits: Send + Sync {
    /// Under the queue's lock: calls `mark_triggered` (so that a split popped afterwards
    /// knows the barrier was sent for it), sends checkpoint `id`'s barrier for every queued
    /// split, and returns their participants and states.
    fn inject(
        &self,
        id: u64,
        mark_triggered: &dyn Fn(),
    ) -> Result<Vec<(Participant, SplitSnapshot)>, ExecError>;
}

/// The coordinator's loop and what it keeps.
pub struct CoordinatorRun {
    handle: CheckpointHandle,
    events: Receiver<Event>,
    config: CheckpointConfig,
    job_id: String,
    graph: GraphUids,
    participants: Vec<Participant>,
    next_id: u64,
}

struct Pending {
    id: u64,
    started: Instant,
    triggered_at_ms: i64,
    states: BTreeMap<Participant, ParticipantState>,
}

impl CoordinatorRun {
    /// A coordinator for a job with these participants; its first checkpoint is `first_id`
    /// (one past a restored checkpoint's).
    pub fn new(
        config: CheckpointConfig,
        graph: GraphUids,
        participants: Vec<Participant>,
        first_id: u64,
    ) -> Self {
        let (tx, rx) = channel();
        let job_id = config.job_id.clone();
        let job_dir = config.dir.join(&job_id);
        let coordinator = Coordinator {
            triggered: AtomicU64::new(first_id - 1),
            completed: AtomicU64::new(first_id - 1),
            events: Mutex::new(tx),
            job_dir,
            last: AtomicU64::new(0),
            drain: AtomicBool::new(false),
        };
        CoordinatorRun {
            handle: CheckpointHandle(Arc::new(coordinator)),
            events: rx,
            config,
            job_id,
            graph,
            participants,
            next_id: first_id,
        }
    }

    pub fn handle(&self) -> CheckpointHandle {
        self.handle.clone()
    }

    /// Runs until `stopped` says so: triggers, collects, writes. A checkpoint that cannot
    /// be written or does not complete within the timeout fails the job (Flink's default of
    /// no tolerated checkpoint failure). Once `cancelled` (the client's Ctrl-C, SIGTERM), it
    /// takes a final checkpoint at once (after the one in flight, if any) and then stops
    /// the job (`Err(Cancelled)`), so that a restart loses nothing read before the signal.
    /// When `stop` asks for a savepoint, the final checkpoint is triggered anew after the
    /// one in flight and written as a savepoint (`STOP JOB … WITH SAVEPOINT`).
    pub fn run(
        mut self,
        queued: &dyn QueuedSplits,
        stopped: &dyn Fn() -> bool,
        cancelled: &dyn Fn() -> bool,
        stop: &StopRequest,
    ) -> Result<(), ExecError> {
        let mut last_trigger = Instant::now();
        let mut last_completion: Option<Instant> = None;
        let mut pending: Option<Pending> = None;
        let mut finished: HashMap<Participant, ParticipantState> = HashMap::new();
        let poll = Duration::from_millis(20);
        // The checkpoint that ends a cancelled job, and where a savepoint goes.
        let mut last_one: Option<u64> = None;
        let mut savepoint: Option<PathBuf> = None;
        while !stopped() {
            match self.events.recv_timeout(poll) {
                Ok(Event::Ack(id, participant, state)) => {
                    if let Some(p) = pending.as_mut().filter(|p| p.id == id) {
                        p.states.insert(participant, state);
                    }
                }
                Ok(Event::Finished(participant, state)) => {
                    finished.insert(participant, state);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
            if let Some(p) = pending.take() {
                let complete = self
                    .participants
                    .iter()
                    .all(|q| p.states.contains_key(q) || finished.contains_key(q));
                if complete {
                    let id = p.id;
                    let target = savepoint.as_ref().filter(|_| last_one == Some(id));
                    self.complete(p, &finished, target)?;
                    last_completion = Some(Instant::now());
                    if last_one == Some(id) {
                        if let Some(path) = target {
                            stop.record(path.clone());
                        }
                        return Err(ExecError::Cancelled);
                    }
                } else if p.started.elapsed() > self.config.timeout {
                    let waiting: Vec<String> = self
                        .participants
                        .iter()
                        .filter(|q| !p.states.contains_key(q) && !finished.contains_key(q))
                        .map(|q| self.describe(*q))
                        .collect();
                    return Err(ExecError::Checkpoint(format!(
                        "checkpoint {} expired after {} ms before completing; still waiting for {}",
                        p.id,
                        self.config.timeout.as_millis(),
                        waiting.join(", ")
                    )));
                } else {
                    pending = Some(p);
                }
            }
            if last_one.is_none() && cancelled() {
                let request = stop.savepoint();
                // A savepoint is a checkpoint of its own, after the one in flight.
                if pending.is_some() && request.is_some() {
                    continue;
                }
                if request.is_none() {
                    eprintln!(
                        "[INFO] stopping job {}: taking a final checkpoint",
                        self.job_id
                    );
                }
                match &pending {
                    Some(p) => {
                        last_one = Some(p.id);
                        self.handle.0.last.store(p.id, Ordering::Release);
                    }
                    // The interval and the pause do not hold back the last checkpoint.
                    None => {
                        if let Some(request) = &request {
                            self.handle.0.drain.store(request.drain, Ordering::Release);
                            savepoint = Some(request.dir.join(savepoint_name(&self.job_id)));
                        }
                        // Before the trigger: a split that sees the barrier knows it ends.
                        self.handle.0.last.store(self.next_id, Ordering::Release);
                        let p = self.trigger(queued)?;
                        last_one = Some(p.id);
                        pending = Some(p);
                    }
                }
                continue;
            }
            let paused = last_completion.is_some_and(|t| t.elapsed() < self.config.min_pause);
            if pending.is_none() && !paused && last_trigger.elapsed() >= self.config.interval {
                last_trigger = Instant::now();
                pending = Some(self.trigger(queued)?);
            }
        }
        Ok(())
    }

    fn trigger(&mut self, queued: &dyn QueuedSplits) -> Result<Pending, ExecError> {
        let id = self.next_id;
        self.next_id += 1;
        let triggered_at_ms = SystemClock.now_nanos().div_euclid(1_000_000);
        let mut states = BTreeMap::new();
        let coordinator = &self.handle.0;
        let mark = || coordinator.triggered.store(id, Ordering::Release);
        for (participant, state) in queued.inject(id, &mark)? {
            states.insert(participant, ParticipantState::Split(state));
        }
        Ok(Pending {
            id,
            started: Instant::now(),
            triggered_at_ms,
            states,
        })
    }

    /// Writes the checkpoint (finished participants with their final state) under the job's
    /// directory, or as the savepoint `savepoint`, marks it completed and applies retention.
    fn complete(
        &self,
        mut p: Pending,
        finished: &HashMap<Participant, ParticipantState>,
        savepoint: Option<&PathBuf>,
    ) -> Result<(), ExecError> {
        for q in &self.participants {
            if p.states.contains_key(q) {
                continue;
            }
            if let Some(state) = finished.get(q) {
                p.states.insert(*q, clone_state(state));
            }
        }
        let info = CheckpointInfo {
            job_id: self.job_id.clone(),
            job_name: self.config.job_name.clone(),
            id: p.id,
            triggered_at_ms: p.triggered_at_ms,
        };
        let job_dir = self.handle.job_dir().to_path_buf();
        match savepoint {
            Some(dir) => storage::write_checkpoint(dir, &info, &p.states, &self.graph, true)?,
            None => {
                let dir = job_dir.join(format!("chk-{}", p.id));
                storage::write_checkpoint(&dir, &info, &p.states, &self.graph, false)?
            }
        };
        self.handle.0.completed.store(p.id, Ordering::Release);
        if savepoint.is_none() {
            storage::apply_retention(&job_dir, p.id, self.config.num_retained);
        }
        Ok(())
    }

    fn describe(&self, participant: Participant) -> String {
        match participant {
            Participant::Split { group, index } => format!("split {index} of source {group}"),
            Participant::Task { vertex, instance } => {
                let name = self.graph.tasks.get(vertex).map_or("task", |(n, _)| n);
                format!("{name} ({}/…)", instance + 1)
            }
            Participant::Sink => "the sink".into(),
        }
    }
}

/// Finished participants' states go into every later checkpoint.
fn clone_state(state: &ParticipantState) -> ParticipantState {
    match state {
        ParticipantState::Split(s) => ParticipantState::Split(s.clone()),
        ParticipantState::Task(t) => ParticipantState::Task(t.clone()),
        ParticipantState::Sink(s) => ParticipantState::Sink(s.clone()),
    }
}

/// A savepoint's directory name, as Flink's: `savepoint-<first 6 digits of the job id>-<12
/// random hex digits>`.
fn savepoint_name(job_id: &str) -> String {
    let random = random_hex(1);
    format!(
        "savepoint-{}-{}",
        &job_id[..job_id.len().min(6)],
        &random[..12]
    )
}

/// A random job id: 32 lowercase hex digits, as Flink's `JobID`.
pub fn new_job_id() -> String {
    random_hex(2)
}

/// `words` × 16 random lowercase hex digits.
fn random_hex(words: usize) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::with_capacity(16 * words);
    for _ in 0..words {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.write_u32(std::process::id());
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out
}
