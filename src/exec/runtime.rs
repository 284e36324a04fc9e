//! The runtime: one thread per running source split, each running the split's operator
//! chain into a bounded channel to the sink, which runs on the caller's thread (in batch mode
//! one channel per split, drained in turn, for a fixed output order).
//!
//! Backpressure comes from the channel bound. A failure anywhere (an error or a panic in a
//! split, an error in the sink) or a cancel from the client (Ctrl-C) ends the job at once: the
//! sink side waits on its channel with a timeout and checks the job's cancel flag, so neither a
//! quiet unbounded split nor a split blocked behind a full channel can hold the job open.
//!
//! Bounded splits run a few at a time (a directory of 25,000 files must not open 25,000 files
//! or threads); unbounded ones (a socket, an endless datagen) start at once, since each may
//! never end and would starve the splits queued behind it.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use arrow_array::RecordBatch;

use super::chunk::{Message, StreamChunk};
use super::operator::{ExecError, Operator, Output};

/// Chunks in flight per job before producers wait.
const CHANNEL_BOUND: usize = 16;

/// How long the sink side waits for a message before it looks at the cancel flag again.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// One split of a source: yields batches until exhausted (`None`). A split must not block in
/// `next_batch` for long while no data arrives: it returns an empty batch after a short wait
/// (the runtime checks for cancellation between calls).
pub trait SourceSplit: Send {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError>;
    /// For error messages: the source and split (`file /tmp/a.csv`).
    fn describe(&self) -> String;
    /// Whether the split ends by itself. Unbounded splits are never queued behind others.
    fn is_bounded(&self) -> bool {
        true
    }
}

/// Opens a [`DeferredSplit`]'s split.
pub type OpenSplit = Box<dyn FnOnce() -> Result<Box<dyn SourceSplit>, ExecError> + Send>;

/// A split made when it is first read, so a pending split holds no file or socket open.
pub struct DeferredSplit {
    name: String,
    open: Option<OpenSplit>,
    split: Option<Box<dyn SourceSplit>>,
}

impl DeferredSplit {
    pub fn new(
        name: String,
        open: impl FnOnce() -> Result<Box<dyn SourceSplit>, ExecError> + Send + 'static,
    ) -> Self {
        DeferredSplit {
            name,
            open: Some(Box::new(open)),
            split: None,
        }
    }
}

impl SourceSplit for DeferredSplit {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
        if let Some(open) = self.open.take() {
            self.split = Some(open()?);
        }
        match &mut self.split {
            Some(split) => split.next_batch(),
            None => Ok(None),
        }
    }
    fn describe(&self) -> String {
        self.name.clone()
    }
}

/// Where the job's results go.
pub trait Sink {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError>;
    fn finish(&mut self) -> Result<(), ExecError>;
    /// Called while no chunk arrives (about every `POLL_INTERVAL`), so a sink can act on time
    /// alone: the filesystem sink finishes parts whose rollover or inactivity time is up.
    fn on_idle(&mut self) -> Result<(), ExecError> {
        Ok(())
    }
}

/// A split and the operators its rows pass through before the sink.
pub struct Pipeline {
    pub split: Box<dyn SourceSplit>,
    pub operators: Vec<Box<dyn Operator>>,
}

struct ChannelOutput<'a> {
    tx: &'a SyncSender<Result<Message, ExecError>>,
}

impl Output for ChannelOutput<'_> {
    fn emit(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        self.tx
            .send(Ok(Message::Chunk(chunk)))
            .map_err(|_| ExecError::Cancelled)
    }
    fn emit_watermark(&mut self, watermark: i64) -> Result<(), ExecError> {
        self.tx
            .send(Ok(Message::Watermark(watermark)))
            .map_err(|_| ExecError::Cancelled)
    }
}

/// What an operator emitted, in the order it emitted it.
enum Emitted {
    Chunk(StreamChunk),
    Watermark(i64),
}

/// Collects what an operator emits, for the next operator of a chain.
#[derive(Default)]
struct Collected(Vec<Emitted>);

impl Output for Collected {
    fn emit(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        self.0.push(Emitted::Chunk(chunk));
        Ok(())
    }
    fn emit_watermark(&mut self, watermark: i64) -> Result<(), ExecError> {
        self.0.push(Emitted::Watermark(watermark));
        Ok(())
    }
}

fn push_chunk(
    operators: &mut [Box<dyn Operator>],
    chunk: StreamChunk,
    out: &mut dyn Output,
) -> Result<(), ExecError> {
    match operators.split_first_mut() {
        None => out.emit(chunk),
        Some((first, rest)) => {
            let mut collected = Collected::default();
            first.process(0, chunk, &mut collected)?;
            forward(rest, collected, out)
        }
    }
}

fn push_watermark(
    operators: &mut [Box<dyn Operator>],
    watermark: i64,
    out: &mut dyn Output,
) -> Result<(), ExecError> {
    match operators.split_first_mut() {
        None => out.emit_watermark(watermark),
        Some((first, rest)) => {
            let mut collected = Collected::default();
            first.on_watermark(watermark, &mut collected)?;
            forward(rest, collected, out)
        }
    }
}

/// Hands what one operator emitted to the rest of the chain, in the order it was emitted: a
/// watermark must not overtake the rows before it, nor rows the watermark before them.
fn forward(
    rest: &mut [Box<dyn Operator>],
    collected: Collected,
    out: &mut dyn Output,
) -> Result<(), ExecError> {
    for emitted in collected.0 {
        match emitted {
            Emitted::Chunk(c) => push_chunk(rest, c, out)?,
            Emitted::Watermark(w) => push_watermark(rest, w, out)?,
        }
    }
    Ok(())
}

/// The first failure of a job, kept until the sink side reports it.
#[derive(Default)]
struct Failure(Mutex<Option<ExecError>>);

impl Failure {
    /// Records `e` unless an earlier failure was recorded, and cancels the job's splits.
    fn record(&self, e: ExecError, cancel: &AtomicBool) {
        if let Ok(mut first) = self.0.lock()
            && first.is_none()
        {
            *first = Some(e);
        }
        cancel.store(true, Ordering::Relaxed);
    }
    fn take(&self) -> Option<ExecError> {
        self.0.lock().ok().and_then(|mut f| f.take())
    }
}

type Channel = Receiver<Result<Message, ExecError>>;

fn panic_text(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

fn run_pipeline(
    mut pipeline: Pipeline,
    tx: &SyncSender<Result<Message, ExecError>>,
    cancel: &AtomicBool,
) -> Result<(), ExecError> {
    let mut out = ChannelOutput { tx };
    while !cancel.load(Ordering::Relaxed) {
        match pipeline.split.next_batch()? {
            Some(batch) if batch.num_rows() == 0 => continue,
            Some(batch) => push_chunk(
                &mut pipeline.operators,
                StreamChunk::inserts(batch),
                &mut out,
            )?,
            None => {
                // A bounded input ends with the final watermark, which fires everything.
                push_watermark(&mut pipeline.operators, i64::MAX, &mut out)?;
                for i in 0..pipeline.operators.len() {
                    let (head, rest) = pipeline.operators.split_at_mut(i + 1);
                    let mut collected = Collected::default();
                    head[i].finish(&mut collected)?;
                    forward(rest, collected, &mut out)?;
                }
                return tx.send(Ok(Message::End)).map_err(|_| ExecError::Cancelled);
            }
        }
    }
    Err(ExecError::Cancelled)
}

/// The stack of a pipeline thread (reserved, not committed, until used).
const PIPELINE_STACK: usize = 64 << 20;

/// Starts a split's thread. Its error or panic is recorded as the job's failure at once (the
/// sink side may be draining another split's channel), before its channel closes: a channel
/// that closes without an `End` always has a failure behind it. A thread that cannot start
/// is the job's failure too.
fn spawn(
    pipeline: Pipeline,
    tx: SyncSender<Result<Message, ExecError>>,
    stop: Arc<AtomicBool>,
    failure: Arc<Failure>,
) -> Option<JoinHandle<()>> {
    let (stop_here, failure_here) = (stop.clone(), failure.clone());
    // Expressions nest up to `MAX_EXPR_DEPTH` levels; evaluating one grows the stack on the
    // heap, but dropping one recurses on the thread's own stack.
    let spawned = std::thread::Builder::new()
        .name("pipeline".into())
        .stack_size(PIPELINE_STACK)
        .spawn(move || {
            let result =
                std::panic::catch_unwind(AssertUnwindSafe(|| run_pipeline(pipeline, &tx, &stop)));
            match result {
                Ok(Ok(())) | Ok(Err(ExecError::Cancelled)) => {}
                Ok(Err(e)) => failure.record(e, &stop),
                // A split that panicked ends the job with an error: its rows would be missing.
                Err(panic) => failure.record(
                    ExecError::Internal(format!("a split failed: {}", panic_text(panic))),
                    &stop,
                ),
            }
            drop(tx);
        });
    match spawned {
        Ok(handle) => Some(handle),
        Err(e) => {
            failure_here.record(
                ExecError::Internal(format!("cannot start a pipeline thread: {e}")),
                &stop_here,
            );
            None
        }
    }
}

/// Runs the pipelines to completion (or to the first error, or until `cancel` is set: the
/// client's Ctrl-C) and writes every chunk into `sink`, in the order chunks arrive. The job
/// only reads `cancel`; its own failures stop its splits through a flag of its own, which
/// cannot cancel the session's next job.
pub fn run(
    pipelines: Vec<Pipeline>,
    sink: &mut dyn Sink,
    cancel: Arc<AtomicBool>,
) -> Result<(), ExecError> {
    run_with(pipelines, sink, cancel, false)
}

/// [`run`] for bounded input in batch mode: the sink takes the first split's rows, then the
/// second's, … — the order Flink gives at parallelism 1 (a directory's files in order, UNION
/// ALL inputs left to right), the same on every run. The next few splits run ahead meanwhile.
pub fn run_in_order(
    pipelines: Vec<Pipeline>,
    sink: &mut dyn Sink,
    cancel: Arc<AtomicBool>,
) -> Result<(), ExecError> {
    run_with(pipelines, sink, cancel, true)
}

/// Bounded splits running at once: enough to keep the cores busy, few enough that their
/// channels (`CHANNEL_BOUND` chunks each in batch mode) and open files stay small.
fn bounded_window() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()) + 1
}

fn run_with(
    pipelines: Vec<Pipeline>,
    sink: &mut dyn Sink,
    cancel: Arc<AtomicBool>,
    ordered: bool,
) -> Result<(), ExecError> {
    // What the splits watch: set by a failure, or passed on from `cancel`.
    let stop = Arc::new(AtomicBool::new(false));
    let failure = Arc::new(Failure::default());
    let total = pipelines.len();
    let mut pending: VecDeque<Pipeline> = VecDeque::new();
    let mut handles: Vec<JoinHandle<()>> = Vec::new();
    // Unordered: one channel for every split; ordered: one per split, in split order.
    let (shared_tx, shared_rx) = sync_channel(CHANNEL_BOUND);
    let mut receivers: VecDeque<Channel> = VecDeque::new();
    let start = |pipeline: Pipeline,
                 receivers: &mut VecDeque<Channel>,
                 handles: &mut Vec<JoinHandle<()>>| {
        let tx = if ordered {
            let (tx, rx) = sync_channel(CHANNEL_BOUND);
            receivers.push_back(rx);
            tx
        } else {
            shared_tx.clone()
        };
        // A finished thread keeps its stack until it is joined: reap them as splits end
        // (25,000 files are 25,000 threads over a job).
        for h in std::mem::take(handles) {
            if h.is_finished() {
                let _ = h.join();
            } else {
                handles.push(h);
            }
        }
        handles.extend(spawn(pipeline, tx, stop.clone(), failure.clone()));
    };
    let mut running_bounded = 0;
    for pipeline in pipelines {
        // Ordered runs start splits strictly in order (their channels are drained in order).
        if !ordered && !pipeline.split.is_bounded() {
            start(pipeline, &mut receivers, &mut handles);
        } else if running_bounded < bounded_window() {
            running_bounded += 1;
            start(pipeline, &mut receivers, &mut handles);
        } else {
            pending.push_back(pipeline);
        }
    }
    if !ordered {
        receivers.push_back(shared_rx);
    }
    let mut ended = 0;
    let result = loop {
        if ended == total {
            break Ok(());
        }
        if cancel.load(Ordering::Relaxed) {
            break Err(failure.take().unwrap_or(ExecError::Cancelled));
        }
        if stop.load(Ordering::Relaxed) {
            // A split failed after sending rows the sink has not taken yet: they were
            // accepted before the failure and are written (Flink prints the rows before a
            // bad one). What is queued is bounded by the channels' bounds.
            for rx in &receivers {
                loop {
                    match rx.try_recv() {
                        Ok(Ok(Message::Chunk(chunk))) => {
                            if sink.write(chunk).is_err() {
                                break;
                            }
                        }
                        Ok(Ok(_)) => {}
                        _ => break,
                    }
                }
            }
            break Err(failure.take().unwrap_or(ExecError::Cancelled));
        }
        let Some(rx) = receivers.front() else {
            break Err(ExecError::Internal("a split stopped without ending".into()));
        };
        match rx.recv_timeout(POLL_INTERVAL) {
            Ok(Ok(Message::Chunk(chunk))) => {
                if let Err(e) = sink.write(chunk) {
                    failure.record(e, &stop);
                }
            }
            Ok(Ok(Message::Watermark(_))) => {}
            Ok(Ok(Message::End)) => {
                ended += 1;
                if ordered {
                    receivers.pop_front();
                }
                if let Some(next) = pending.pop_front() {
                    start(next, &mut receivers, &mut handles);
                }
            }
            Ok(Err(e)) => failure.record(e, &stop),
            Err(RecvTimeoutError::Timeout) => {
                if let Err(e) = sink.on_idle() {
                    failure.record(e, &stop);
                }
            }
            // Every sender is gone without an End: the split's thread recorded why (and set
            // the cancel flag) before it closed the channel.
            Err(RecvTimeoutError::Disconnected) => {
                if !stop.load(Ordering::Relaxed) {
                    break Err(ExecError::Internal("a split stopped without ending".into()));
                }
            }
        }
    };
    if result.is_err() {
        stop.store(true, Ordering::Relaxed);
    }
    // Senders blocked on a full channel fail once the receivers are gone.
    drop(receivers);
    drop(pending);
    for h in handles {
        let _ = h.join();
    }
    result?;
    sink.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Emits each chunk's rows one at a time, a watermark after each (the row's id).
    struct RowThenWatermark;

    impl Operator for RowThenWatermark {
        fn process(
            &mut self,
            _input: usize,
            chunk: StreamChunk,
            out: &mut dyn Output,
        ) -> Result<(), ExecError> {
            let ids = chunk
                .batch
                .column(0)
                .as_any()
                .downcast_ref::<arrow_array::Int32Array>()
                .cloned()
                .unwrap_or_else(|| arrow_array::Int32Array::from(Vec::<i32>::new()));
            for (i, id) in ids.iter().enumerate() {
                out.emit(StreamChunk::inserts(chunk.batch.slice(i, 1)))?;
                out.emit_watermark(i64::from(id.unwrap_or_default()))?;
            }
            Ok(())
        }
    }

    /// What reaches the end of a chain, in order.
    #[derive(Default)]
    struct Recorded(Vec<String>);

    impl Output for Recorded {
        fn emit(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
            self.0.push(format!("rows {}", chunk.num_rows()));
            Ok(())
        }
        fn emit_watermark(&mut self, watermark: i64) -> Result<(), ExecError> {
            self.0.push(format!("watermark {watermark}"));
            Ok(())
        }
    }

    /// A pass-through operator after one that interleaves rows and watermarks must see (and
    /// forward) them interleaved: a watermark overtaking rows would make them late.
    #[test]
    fn a_chain_keeps_the_order_an_operator_emitted_in() {
        struct PassThrough;
        impl Operator for PassThrough {
            fn process(
                &mut self,
                _input: usize,
                chunk: StreamChunk,
                out: &mut dyn Output,
            ) -> Result<(), ExecError> {
                out.emit(chunk)
            }
        }
        let mut chain: Vec<Box<dyn Operator>> =
            vec![Box::new(RowThenWatermark), Box::new(PassThrough)];
        let batch = ids(vec![5, 7]).unwrap().unwrap();
        let mut out = Recorded::default();
        push_chunk(&mut chain, StreamChunk::inserts(batch), &mut out).unwrap();
        assert_eq!(out.0, ["rows 1", "watermark 5", "rows 1", "watermark 7"]);
    }

    #[test]
    fn a_panicking_split_fails_the_job() {
        let pipelines = vec![Pipeline {
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
            assert!(most.load(Ordering::SeqCst) <= bounded_window());
            assert_eq!(sink.0.len(), 120);
            if ordered {
                let expected: Vec<i32> = (0..40).flat_map(|id| [id; 3]).collect();
                assert_eq!(sink.0, expected);
            }
        }
    }
}
