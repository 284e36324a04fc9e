//! The operator contract (docs/design/0003 §4).

use std::sync::Arc;

use super::error::ExecError;
use super::state::key_group::{DEFAULT_MAX_PARALLELISM, KeyGroupRange};
use crate::clock::{Clock, SystemClock};
use crate::types::chunk::StreamChunk;

/// Whether an input currently holds event time back: an idle one (a split silent for its
/// idle timeout) leaves the minimum watermark of the task it feeds until it is active again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatermarkStatus {
    Active,
    Idle,
}

/// At most this many rows in one emitted chunk, for an operator whose one input row or
/// watermark can release an unbounded number of rows (a HOP over a long size, a watermark
/// firing a million timers).
pub const PIECE_ROWS: usize = 64 * 1024;

/// Where an operator puts what it emits.
pub trait Output {
    fn emit(&mut self, chunk: StreamChunk) -> Result<(), ExecError>;
    fn emit_watermark(&mut self, watermark: i64) -> Result<(), ExecError>;
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), ExecError>;
}

/// What an operator instance is told when it opens: which instance it is, the key groups it
/// owns, and the clock processing time is read from.
#[derive(Debug, Clone)]
pub struct OperatorContext {
    /// This instance's index among `parallelism`.
    pub index: u32,
    pub parallelism: u32,
    /// `pipeline.max-parallelism`: the number of key groups.
    pub max_parallelism: u32,
    /// The key groups this instance owns (all of them at parallelism 1).
    pub key_groups: KeyGroupRange,
    pub clock: Arc<dyn Clock>,
}

impl OperatorContext {
    /// Instance `index` of `parallelism`, with `max_parallelism` key groups.
    pub fn instance(
        index: u32,
        parallelism: u32,
        max_parallelism: u32,
        clock: Arc<dyn Clock>,
    ) -> Self {
        OperatorContext {
            index,
            parallelism,
            max_parallelism,
            key_groups: KeyGroupRange::of_instance(max_parallelism, parallelism, index),
            clock,
        }
    }

    /// Milliseconds since the epoch on the context's clock.
    pub fn now_millis(&self) -> i64 {
        self.clock.now_nanos().div_euclid(1_000_000)
    }
}

impl Default for OperatorContext {
    /// The only instance, on the system clock.
    fn default() -> Self {
        OperatorContext::instance(0, 1, DEFAULT_MAX_PARALLELISM, Arc::new(SystemClock))
    }
}

/// A synchronous state machine over a stream. The runtime calls `open` once, `process` for
/// each chunk in arrival order (with the index of the input it came from: 0 unless the
/// operator has two inputs), `on_watermark` when event time advances, `on_processing_time`
/// once the clock reaches `next_processing_time`, and `finish` once after the last input.
/// Stateless operators keep the defaults of everything but `process`.
pub trait Operator: Send {
    fn open(&mut self, _ctx: &OperatorContext) -> Result<(), ExecError> {
        Ok(())
    }

    fn process(
        &mut self,
        input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError>;

    fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        out.emit_watermark(watermark)
    }

    /// The input went idle or became active again.
    fn on_watermark_status(
        &mut self,
        status: WatermarkStatus,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        out.emit_watermark_status(status)
    }

    /// The earliest processing time (milliseconds since the epoch) at which the operator
    /// wants `on_processing_time`: its first processing-time timer, or a periodic duty.
    fn next_processing_time(&self) -> Option<i64> {
        None
    }

    /// The clock reached `now` (milliseconds since the epoch), at or after
    /// `next_processing_time`.
    fn on_processing_time(&mut self, _now: i64, _out: &mut dyn Output) -> Result<(), ExecError> {
        Ok(())
    }

    fn finish(&mut self, _out: &mut dyn Output) -> Result<(), ExecError> {
        Ok(())
    }

    /// In a source split's chain: the split was busy until now — its last batch has gone
    /// downstream (however long the sends waited on a full queue), or it waited on watermark
    /// alignment. Idleness counts only the time the source itself had nothing, as Flink's
    /// pausable input-activity clock does.
    fn on_input_active(&mut self) {}

    /// In a source split's chain: `Some(ms)` while the split must stop reading (watermark
    /// alignment), looking again after `ms` milliseconds.
    fn pauses_input(&self) -> Option<i64> {
        None
    }

    /// Rows dropped so far because they came too late for every window they belong to
    /// (Flink drops them silently; Tideline reports how many).
    fn late_rows(&self) -> u64 {
        0
    }

    /// The operator's keyed state, one entry per non-empty key group it owns, to be written
    /// into a checkpoint; restoring at another parallelism hands each instance the groups it
    /// now owns.
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        Vec::new()
    }

    /// The keyed state as it is now, frozen for the checkpoint's writer to write on its own
    /// thread while the operator goes on (docs/design/0008 §7): the same bytes `snapshot`
    /// would give. `None`: the state is not kept in pages, and `snapshot` is taken at the
    /// barrier instead.
    fn freeze(&self) -> Option<Box<dyn FrozenState>> {
        None
    }

    /// Before the `restore` calls of a restore: how many bytes of keyed state they will
    /// hand over. `restored` follows them.
    fn restoring(&mut self, _bytes: usize) {}

    /// After the `restore` calls that `restoring` announced: an operator that deferred work
    /// over its restored keys (indexing them at once) does it now.
    fn restored(&mut self) -> Result<(), ExecError> {
        Ok(())
    }

    /// Takes back one key group's state from `snapshot`.
    fn restore(&mut self, _key_group: u32, _state: &[u8]) -> Result<(), ExecError> {
        Ok(())
    }

    /// The instance's state that belongs to no key (Flink's operator state), to be written
    /// into a checkpoint; `None` when it has none.
    fn snapshot_instance(&self) -> Option<Vec<u8>> {
        None
    }

    /// Takes back the instance state from the parts every instance of the snapshotted job
    /// wrote (Flink's union list state: each new instance sees all of them and takes what it
    /// needs).
    fn restore_instance(&mut self, _parts: &[&[u8]]) -> Result<(), ExecError> {
        Ok(())
    }
}

/// Where a [`FrozenState`] hands each part of a key group's state.
pub type PartSink<'a> = dyn FnMut(u32, &[u8]) -> Result<(), ExecError> + 'a;

/// An operator's keyed state as it was at a barrier ([`Operator::freeze`]).
pub trait FrozenState: Send + Sync {
    /// Gives the state key group by key group, one part at a time: a key group's state may
    /// come in several parts, in any order between groups, and is their concatenation in the
    /// order given (restoring each part in turn restores the group).
    fn write(&self, out: &mut PartSink<'_>) -> Result<(), ExecError>;

    /// Every key group's state at once, ascending, as `Operator::snapshot` returns them.
    fn to_snapshot(&self) -> Result<Vec<(u32, Vec<u8>)>, ExecError> {
        let mut groups: std::collections::BTreeMap<u32, Vec<u8>> = Default::default();
        self.write(&mut |group, bytes| {
            groups.entry(group).or_default().extend_from_slice(bytes);
            Ok(())
        })?;
        Ok(groups.into_iter().collect())
    }
}
