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
    /// Whether a checkpoint can record where the split is and a restored job go on from
    /// there ([`SourceSplit::position`]); a split that cannot (a socket) is at-most-once.
    fn replayable(&self) -> bool {
        false
    }
    /// Where the split is: what [`SourceSplit::seek`] takes back so that the next rows are
    /// those that would have followed. `None` when it cannot replay.
    fn position(&self) -> Option<Vec<u8>> {
        None
    }
    /// Goes on from a position `position` returned (before the first read).
    fn seek(&mut self, _position: &[u8]) -> Result<(), ExecError> {
        Err(ExecError::Checkpoint(format!(
            "{} cannot go back to a checkpointed position",
            self.describe()
        )))
    }
    /// A checkpoint that recorded `position` for this split has completed: a split that
    /// tells an outside system how far its reader is (Kafka's group offsets) does so now.
    fn position_completed(&mut self, _position: &[u8]) {}
}

/// A boxed split is a split, so that wrappers stack (a file's metadata over its lines).
impl SourceSplit for Box<dyn SourceSplit> {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
        (**self).next_batch()
    }
    fn next(&mut self) -> Result<SplitEvent, ExecError> {
        (**self).next()
    }
    fn describe(&self) -> String {
        (**self).describe()
    }
    fn is_bounded(&self) -> bool {
        (**self).is_bounded()
    }
    fn replayable(&self) -> bool {
        (**self).replayable()
    }
    fn position(&self) -> Option<Vec<u8>> {
        (**self).position()
    }
    fn seek(&mut self, position: &[u8]) -> Result<(), ExecError> {
        (**self).seek(position)
    }
    fn position_completed(&mut self, position: &[u8]) {
        (**self).position_completed(position)
    }
}

/// A position of little-endian `u64` words (files: offset and line; datagen: rows produced,
/// rows remaining, random state).
pub fn words_position(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The `N` words of a position [`words_position`] made; `None` for any other length.
pub fn position_words<const N: usize>(position: &[u8]) -> Option<[u64; N]> {
    if position.len() != N * 8 {
        return None;
    }
    let mut words = [0u64; N];
    for (word, bytes) in words.iter_mut().zip(position.chunks_exact(8)) {
        *word = u64::from_le_bytes(bytes.try_into().ok()?);
    }
    Some(words)
}

/// Opens a [`DeferredSplit`]'s split.
pub type OpenSplit = Box<dyn FnOnce() -> Result<Box<dyn SourceSplit>, ExecError> + Send>;

/// A split made when it is first read, so a pending split holds no file or socket open.
pub struct DeferredSplit {
    name: String,
    open: Option<OpenSplit>,
    split: Option<Box<dyn SourceSplit>>,
    replayable: bool,
    /// Whether the split it opens ends by itself.
    bounded: bool,
    /// A position to seek to once opened.
    seek_to: Option<Vec<u8>>,
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
            replayable: false,
            bounded: true,
            seek_to: None,
        }
    }

    /// The split it opens never ends by itself (it is then never queued behind others).
    pub fn unbounded(mut self) -> Self {
        self.bounded = false;
        self
    }

    /// The split it opens can replay from a position.
    pub fn replayable(mut self) -> Self {
        self.replayable = true;
        self
    }

    fn opened(&mut self) -> Result<Option<&mut Box<dyn SourceSplit>>, ExecError> {
        if let Some(open) = self.open.take() {
            let mut split = open()?;
            if let Some(position) = self.seek_to.take() {
                split.seek(&position)?;
            }
            self.split = Some(split);
        }
        Ok(self.split.as_mut())
    }
}

impl SourceSplit for DeferredSplit {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
        match self.opened()? {
            Some(split) => split.next_batch(),
            None => Ok(None),
        }
    }
    fn next(&mut self) -> Result<SplitEvent, ExecError> {
        match self.opened()? {
            Some(split) => split.next(),
            None => Ok(SplitEvent::End),
        }
    }
    fn describe(&self) -> String {
        self.name.clone()
    }
    fn replayable(&self) -> bool {
        self.replayable
    }
    fn is_bounded(&self) -> bool {
        self.bounded
    }
    fn position(&self) -> Option<Vec<u8>> {
        match &self.split {
            Some(split) => split.position(),
            // Not opened: at its start, or where it was told to go.
            None if self.replayable => Some(self.seek_to.clone().unwrap_or_default()),
            None => None,
        }
    }
    fn position_completed(&mut self, position: &[u8]) {
        if let Some(split) = &mut self.split {
            split.position_completed(position);
        }
    }
    fn seek(&mut self, position: &[u8]) -> Result<(), ExecError> {
        match &mut self.split {
            Some(split) => split.seek(position),
            None => {
                // An empty position is the start.
                self.seek_to = (!position.is_empty()).then(|| position.to_vec());
                Ok(())
            }
        }
    }
}

/// A split and the stateless operators its rows pass through (the calcs and the watermark
/// assigner of the source's vertex, fused into the split's thread).
pub struct Pipeline {
    pub split: Box<dyn SourceSplit>,
    pub operators: Vec<Box<dyn Operator>>,
    /// When several consumers read the split (a reused sub-plan): each one's own stateless
    /// operators, which the rows leaving `operators` pass through in turn. Empty: the
    /// split has one consumer, fed by `operators`.
    pub branches: Vec<Vec<Box<dyn Operator>>>,
}
