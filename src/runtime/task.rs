//! A task: one parallel instance of a vertex after an exchange, on a thread of its own. It
//! reads its input queue with a deadline (its operators' next processing time, or the poll
//! interval for the job's stop flag), combines its channels' watermarks in a valve, and
//! ends once every channel has: the valve then yields the final watermark, which fires
//! every window and timer, and the chain finishes.
//!
//! With checkpointing on, the task aligns its channels' barriers (`checkpoint/barrier.rs`),
//! snapshots its chain when they have aligned, and sends the barrier on; a restored task
//! takes its operators' state back after `open` and gives its chain the restored watermark
//! before any input.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use super::chain::Chain;
use super::channel::{Envelope, Message, Router};
use super::checkpoint::barrier::{BarrierAligner, Received};
use super::checkpoint::coordinator::CheckpointHandle;
use super::checkpoint::{
    Participant, ParticipantState, RestoredState, TaskSnapshot, snapshot_chain, vertex_key,
};
use super::run::JobState;
use super::watermark_valve::WatermarkValve;
use crate::exec::error::ExecError;
use crate::exec::operator::OperatorContext;
use crate::plan::stream::uid::NodeUid;

/// The longest a task waits before it looks at the job's stop flag again.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

pub struct Task {
    pub chain: Chain,
    pub input: Receiver<Envelope>,
    /// The input (edge) index of each channel, for operators with several inputs.
    pub input_of_channel: Vec<usize>,
    pub output: Router,
    pub ctx: OperatorContext,
    /// With checkpointing on: the coordinator and who this task is to it.
    pub checkpoints: Option<(CheckpointHandle, Participant)>,
    /// The state to start from, and the uids of the chain's operators it is matched by.
    pub restore: Option<(Arc<RestoredState>, Vec<NodeUid>)>,
}

/// What a task's loop keeps between messages.
struct Inputs {
    valve: WatermarkValve,
    ended: usize,
}

impl Task {
    pub fn run(&mut self, job: &JobState) -> Result<(), ExecError> {
        self.chain.open(&self.ctx)?;
        let channels = self.input_of_channel.len();
        let mut inputs = Inputs {
            valve: WatermarkValve::new(channels),
            ended: 0,
        };
        if let Some((state, uids)) = &self.restore {
            let range = self.ctx.key_groups;
            state.restore_chain(self.chain.operators_mut(), uids, |g| range.contains(g))?;
            let vertex = match self.checkpoints {
                Some((_, Participant::Task { vertex, .. })) => vertex,
                _ => 0,
            };
            if let Some(&w) = state.watermarks.get(&vertex_key(uids, vertex))
                && w > i64::MIN
            {
                inputs.valve = WatermarkValve::restored(channels, w);
                self.chain.on_watermark(w, &mut self.output)?;
            }
        }
        let mut aligner = BarrierAligner::new(channels);
        while inputs.ended < channels {
            if job.stopped() {
                return Err(ExecError::Cancelled);
            }
            let now = self.ctx.now_millis();
            let wait = match self.chain.next_processing_time() {
                Some(at) => {
                    Duration::from_millis(at.saturating_sub(now).max(0) as u64).min(POLL_INTERVAL)
                }
                None => POLL_INTERVAL,
            };
            match self.input.recv_timeout(wait) {
                Ok(Envelope { channel, message }) => {
                    let channel = channel as usize;
                    match aligner.receive(channel, message) {
                        Received::Process(message) => {
                            let end = matches!(message, Message::End);
                            self.handle(channel, message, &mut inputs)?;
                            if end && let Received::Aligned(id) = aligner.check() {
                                self.aligned(id, &mut aligner, &mut inputs)?;
                            }
                        }
                        Received::Held => {}
                        Received::Aligned(id) => self.aligned(id, &mut aligner, &mut inputs)?,
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                // Every sender is gone without ending: a failure upstream, recorded there.
                Err(RecvTimeoutError::Disconnected) => return Err(ExecError::Cancelled),
            }
            // Operators whose processing time has come (the chain calls only those).
            self.chain
                .on_processing_time(self.ctx.now_millis(), &mut self.output)?;
        }
        self.chain.finish(&mut self.output)?;
        if let Some((handle, participant)) = &self.checkpoints {
            let state = TaskSnapshot {
                watermark: i64::MAX,
                sync_micros: 0,
                chain: Vec::new(),
            };
            handle.finished(*participant, ParticipantState::Task(state));
        }
        self.output.end()
    }

    /// Every channel has delivered checkpoint `id`'s barrier: the chain's state goes to the
    /// coordinator, the barrier on, and what was held is processed.
    fn aligned(
        &mut self,
        id: u64,
        aligner: &mut BarrierAligner,
        inputs: &mut Inputs,
    ) -> Result<(), ExecError> {
        if let Some((handle, participant)) = &self.checkpoints {
            let started = std::time::Instant::now();
            let chain = snapshot_chain(self.chain.operators());
            let state = TaskSnapshot {
                watermark: inputs.valve.output(),
                sync_micros: started.elapsed().as_micros() as u64,
                chain,
            };
            handle.ack(id, *participant, ParticipantState::Task(state));
        }
        self.output.barrier(id)?;
        for (channel, message) in aligner.release() {
            self.handle(channel, message, inputs)?;
        }
        Ok(())
    }

    fn handle(
        &mut self,
        channel: usize,
        message: Message,
        inputs: &mut Inputs,
    ) -> Result<(), ExecError> {
        let valve = &mut inputs.valve;
        match message {
            Message::Chunk(chunk) => {
                let input = self.input_of_channel[channel];
                self.chain.process(input, chunk, &mut self.output)?;
            }
            Message::Watermark(w) => {
                if let Some(w) = valve.on_watermark(channel, w).watermark {
                    self.chain.on_watermark(w, &mut self.output)?;
                }
            }
            Message::Status(status) => {
                let changed = valve.on_status(channel, status);
                if let Some(w) = changed.watermark {
                    self.chain.on_watermark(w, &mut self.output)?;
                }
                if let Some(status) = changed.status {
                    self.chain.on_watermark_status(status, &mut self.output)?;
                }
            }
            Message::End => {
                inputs.ended += 1;
                let changed = valve.on_end(channel);
                if let Some(status) = changed.status {
                    self.chain.on_watermark_status(status, &mut self.output)?;
                }
                if let Some(w) = changed.watermark {
                    self.chain.on_watermark(w, &mut self.output)?;
                }
            }
            // Barriers are the aligner's; one released here is a stale one.
            Message::Barrier(_) => {}
        }
        Ok(())
    }
}
