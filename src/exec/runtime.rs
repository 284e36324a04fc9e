//! The runtime: one thread per source split running the split's operator chain, a bounded
//! channel into the sink, which runs on the caller's thread (in batch mode one channel per
//! split, drained in turn, for a fixed output order).
//!
//! Backpressure comes from the channel bound; a failure anywhere cancels every split and is
//! returned to the caller; the end of every split's input ends the job.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use arrow_array::RecordBatch;

use super::chunk::{Message, StreamChunk};
use super::operator::{ExecError, Operator, Output};

/// Chunks in flight per job before producers wait.
const CHANNEL_BOUND: usize = 16;

/// One split of a source: yields batches until exhausted (`None`). A split of an unbounded
/// source blocks in `next_batch` until data arrives; it must check its cancel flag between
/// reads.
pub trait SourceSplit: Send {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError>;
    /// For error messages: the source and split (`file /tmp/a.csv`).
    fn describe(&self) -> String;
}

/// Where the job's results go.
pub trait Sink {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError>;
    fn finish(&mut self) -> Result<(), ExecError>;
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

/// Collects what an operator emits, for the next operator of a chain.
#[derive(Default)]
struct Collected {
    chunks: Vec<StreamChunk>,
    watermarks: Vec<i64>,
}

impl Output for Collected {
    fn emit(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        self.chunks.push(chunk);
        Ok(())
    }
    fn emit_watermark(&mut self, watermark: i64) -> Result<(), ExecError> {
        self.watermarks.push(watermark);
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
            first.process(chunk, &mut collected)?;
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

/// Hands what one operator emitted to the rest of the chain, chunks before watermarks.
fn forward(
    rest: &mut [Box<dyn Operator>],
    collected: Collected,
    out: &mut dyn Output,
) -> Result<(), ExecError> {
    for c in collected.chunks {
        push_chunk(rest, c, out)?;
    }
    for w in collected.watermarks {
        push_watermark(rest, w, out)?;
    }
    Ok(())
}

fn run_pipeline(
    mut pipeline: Pipeline,
    tx: SyncSender<Result<Message, ExecError>>,
    cancel: Arc<AtomicBool>,
) {
    let result = (|| -> Result<(), ExecError> {
        let mut out = ChannelOutput { tx: &tx };
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
                    return Ok(());
                }
            }
        }
        Err(ExecError::Cancelled)
    })();
    let _ = match result {
        Ok(()) => tx.send(Ok(Message::End)),
        Err(e) => tx.send(Err(e)),
    };
}

/// Runs the pipelines to completion (or to the first error, or until `cancel` is set) and
/// writes every chunk into `sink`, in the order chunks arrive. The flag is cleared when the job
/// starts: a failure sets it to stop the job's other splits, and must not cancel the session's
/// next job.
pub fn run(
    pipelines: Vec<Pipeline>,
    sink: &mut dyn Sink,
    cancel: Arc<AtomicBool>,
) -> Result<(), ExecError> {
    run_with(pipelines, sink, cancel, false)
}

/// [`run`] for bounded input in batch mode: the splits still run at once, but the sink takes
/// the first split's rows, then the second's, … — the order Flink gives at parallelism 1 (a
/// directory's files in order, UNION ALL inputs left to right), the same on every run.
pub fn run_in_order(
    pipelines: Vec<Pipeline>,
    sink: &mut dyn Sink,
    cancel: Arc<AtomicBool>,
) -> Result<(), ExecError> {
    run_with(pipelines, sink, cancel, true)
}

/// The stack of a pipeline thread (reserved, not committed, until used).
const PIPELINE_STACK: usize = 64 << 20;

fn run_with(
    pipelines: Vec<Pipeline>,
    sink: &mut dyn Sink,
    cancel: Arc<AtomicBool>,
    ordered: bool,
) -> Result<(), ExecError> {
    type Channel = Receiver<Result<Message, ExecError>>;
    cancel.store(false, Ordering::Relaxed);
    // One channel for all splits, or one per split to drain in turn.
    let mut receivers: Vec<Channel> = Vec::new();
    let mut shared: Option<SyncSender<Result<Message, ExecError>>> = None;
    let mut handles = Vec::new();
    for pipeline in pipelines {
        let tx = match &shared {
            Some(tx) if !ordered => tx.clone(),
            _ => {
                let (tx, rx) = sync_channel(CHANNEL_BOUND);
                receivers.push(rx);
                if !ordered {
                    shared = Some(tx.clone());
                }
                tx
            }
        };
        let stop = cancel.clone();
        // Expressions nest up to `MAX_EXPR_DEPTH` levels; evaluating one grows the stack on
        // the heap, but dropping one recurses on the thread's own stack.
        let spawned = std::thread::Builder::new()
            .name("pipeline".into())
            .stack_size(PIPELINE_STACK)
            .spawn(move || run_pipeline(pipeline, tx, stop));
        match spawned {
            Ok(handle) => handles.push(handle),
            Err(e) => {
                cancel.store(true, Ordering::Relaxed);
                return Err(ExecError::Internal(format!(
                    "cannot start a pipeline thread: {e}"
                )));
            }
        }
    }
    let running = handles.len();
    drop(shared);
    let mut result = Ok(());
    let mut ended = 0;
    'drain: for rx in &receivers {
        // Shared: every split's End arrives here; ordered: this split's only.
        let ends_here = if ordered { 1 } else { running };
        let mut ends = 0;
        while ends < ends_here {
            match rx.recv() {
                Ok(Ok(Message::Chunk(chunk))) => {
                    if let Err(e) = sink.write(chunk) {
                        result = Err(e);
                        break 'drain;
                    }
                }
                Ok(Ok(Message::Watermark(_))) => {}
                Ok(Ok(Message::End)) => ends += 1,
                Ok(Err(e)) => {
                    result = Err(e);
                    break 'drain;
                }
                Err(_) => break 'drain,
            }
        }
        ended += ends;
    }
    if result.is_err() {
        cancel.store(true, Ordering::Relaxed);
        drop(receivers);
    }
    for h in handles {
        // A split that panicked ends the job with an error: its rows would be missing.
        if let Err(panic) = h.join()
            && result.is_ok()
        {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            result = Err(ExecError::Internal(format!("a split failed: {what}")));
        }
    }
    if result.is_ok() && ended < running {
        result = Err(ExecError::Internal("a split stopped without ending".into()));
    }
    result?;
    sink.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let column = arrow_array::Int32Array::from(vec![self.id]);
            Ok(Some(RecordBatch::try_from_iter([(
                "id",
                Arc::new(column) as _,
            )])?))
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
}
