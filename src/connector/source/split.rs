//! Source splits: the units a source's rows come in (a file, a socket, a generator, a
//! program's stream), each read on a thread of the runtime with the stateless operators above
//! it. A split hands over batches; a split whose input carries its own watermarks (a stream a
//! program feeds through `api::StreamWriter`) hands those over too, in order, through
//! [`SourceSplit::next`].

use arrow_array::RecordBatch;

use crate::exec::error::ExecError;
use crate::exec::operator::Operator;

/// What a split hands the runtime next.
#[derive(Debug)]
pub enum SplitEvent {
    /// Rows (an empty batch: nothing yet).
    Batch(RecordBatch),
    /// A watermark the split's input carries: no later row is expected at or below it. The
    /// runtime passes it through the split's operators, as a chunk, in order.
    Watermark(i64),
    /// The split is exhausted; the runtime follows with the final watermark.
    End,
}

/// One split of a source: yields batches until exhausted (`None`). A split must not block in
/// `next_batch` (or `next`) for long while no data arrives: it returns an empty batch after a
/// short wait (the runtime checks for cancellation and processing time between calls).
pub trait SourceSplit: Send {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError>;
    /// What the runtime reads: by default the batches of `next_batch`. A split whose input
    /// carries watermarks overrides it to return them between its batches.
    fn next(&mut self) -> Result<SplitEvent, ExecError> {
        Ok(match self.next_batch()? {
            Some(batch) => SplitEvent::Batch(batch),
            None => SplitEvent::End,
        })
    }
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
    fn next(&mut self) -> Result<SplitEvent, ExecError> {
        if let Some(open) = self.open.take() {
            self.split = Some(open()?);
        }
        match &mut self.split {
            Some(split) => split.next(),
            None => Ok(SplitEvent::End),
        }
    }
    fn describe(&self) -> String {
        self.name.clone()
    }
}

/// A split and the stateless operators its rows pass through (the calcs and the watermark
/// assigner of the source's vertex, fused into the split's thread).
pub struct Pipeline {
    pub split: Box<dyn SourceSplit>,
    pub operators: Vec<Box<dyn Operator>>,
}
