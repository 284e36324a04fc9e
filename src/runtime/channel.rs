//! What flows between the threads of a job, and the sending side of an edge.
//!
//! Every consumer (a task instance, the sink) reads one bounded queue; each message carries
//! the input channel it came on (a split, or an upstream instance), so messages of one channel
//! stay in order and the consumer's watermark valve can tell channels apart. The bound gives
//! backpressure: a sender waits while its consumer is behind.

use std::sync::mpsc::SyncSender;

use super::graph::Partitioning;
use super::partitioner::Partitioner;
use crate::exec::error::ExecError;
use crate::exec::operator::{Output, WatermarkStatus};
use crate::exec::state::key::KeyEncoder;
use crate::types::chunk::StreamChunk;

/// Messages in flight per consumer before senders wait.
pub const CHANNEL_BOUND: usize = 16;

#[derive(Debug, Clone)]
pub enum Message {
    Chunk(StreamChunk),
    /// Event time on this channel has reached this instant (milliseconds since the epoch).
    Watermark(i64),
    /// The channel went idle or became active again.
    Status(WatermarkStatus),
    /// Checkpoint `n`'s barrier: everything before it on the channel belongs to the
    /// checkpoint, everything after to the next (docs/design/0008 §1).
    Barrier(u64),
    /// The channel is exhausted.
    End,
}

#[derive(Debug)]
pub struct Envelope {
    pub channel: u32,
    pub message: Message,
}

pub type Sender = SyncSender<Envelope>;

/// The sending side of one channel of an edge: spreads chunks over the consumer's instances
/// with the edge's partitioner, and sends watermarks and the end to every instance.
pub struct Router {
    senders: Vec<Sender>,
    partitioner: Partitioner,
    channel: u32,
    /// This sender's instance index (the `Forward` partitioner's target).
    index: usize,
    /// The last watermark and status sent: what a checkpoint records of the channel, and
    /// what a restored sender sends first.
    last_watermark: i64,
    last_status: WatermarkStatus,
}

impl Router {
    pub fn new(
        senders: Vec<Sender>,
        partitioning: &Partitioning,
        channel: u32,
        index: usize,
        max_parallelism: u32,
    ) -> Result<Self, ExecError> {
        let partitioner = match partitioning {
            Partitioning::Hash { columns, schema } => Partitioner::Hash {
                keys: KeyEncoder::new(schema, columns.clone())?,
                max_parallelism,
            },
            Partitioning::Global => Partitioner::Global,
            Partitioning::Rebalance => Partitioner::Rebalance(index),
        };
        Ok(Router {
            senders,
            partitioner,
            channel,
            index,
            last_watermark: i64::MIN,
            last_status: WatermarkStatus::Active,
        })
    }

    /// The last watermark and status this channel sent.
    pub fn last_sent(&self) -> (i64, WatermarkStatus) {
        (self.last_watermark, self.last_status)
    }

    /// Sends checkpoint `id`'s barrier to every instance.
    pub fn barrier(&self, id: u64) -> Result<(), ExecError> {
        self.broadcast(Message::Barrier(id))
    }

    fn send(&self, to: usize, message: Message) -> Result<(), ExecError> {
        self.senders[to]
            .send(Envelope {
                channel: self.channel,
                message,
            })
            .map_err(|_| ExecError::Cancelled)
    }

    fn broadcast(&self, message: Message) -> Result<(), ExecError> {
        for to in 0..self.senders.len() {
            self.send(to, message.clone())?;
        }
        Ok(())
    }

    /// The channel has ended.
    pub fn end(&self) -> Result<(), ExecError> {
        self.broadcast(Message::End)
    }
}

impl Output for Router {
    fn emit(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        if chunk.num_rows() == 0 {
            return Ok(());
        }
        if self.senders.len() == 1 {
            return self.send(0, Message::Chunk(chunk));
        }
        for (to, part) in self
            .partitioner
            .partition(chunk, self.index, self.senders.len())?
        {
            self.send(to, Message::Chunk(part))?;
        }
        Ok(())
    }

    fn emit_watermark(&mut self, watermark: i64) -> Result<(), ExecError> {
        self.last_watermark = self.last_watermark.max(watermark);
        self.broadcast(Message::Watermark(watermark))
    }

    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), ExecError> {
        self.last_status = status;
        self.broadcast(Message::Status(status))
    }
}
