//! A task: one parallel instance of a vertex after an exchange, on a thread of its own. It
//! reads its input queue with a deadline (its operators' next processing time, or the poll
//! interval for the job's stop flag), combines its channels' watermarks in a valve, and
//! ends once every channel has: the valve then yields the final watermark, which fires
//! every window and timer, and the chain finishes.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use super::chain::Chain;
use super::channel::{Envelope, Message, Router};
use super::run::JobState;
use super::watermark_valve::WatermarkValve;
use crate::exec::error::ExecError;
use crate::exec::operator::OperatorContext;

/// The longest a task waits before it looks at the job's stop flag again.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

pub struct Task {
    pub chain: Chain,
    pub input: Receiver<Envelope>,
    /// The input (edge) index of each channel, for operators with several inputs.
    pub input_of_channel: Vec<usize>,
    pub output: Router,
    pub ctx: OperatorContext,
}

impl Task {
    pub fn run(&mut self, job: &JobState) -> Result<(), ExecError> {
        self.chain.open(&self.ctx)?;
        let channels = self.input_of_channel.len();
        let mut valve = WatermarkValve::new(channels);
        let mut ended = 0;
        while ended < channels {
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
                            ended += 1;
                            let changed = valve.on_end(channel);
                            if let Some(status) = changed.status {
                                self.chain.on_watermark_status(status, &mut self.output)?;
                            }
                            if let Some(w) = changed.watermark {
                                self.chain.on_watermark(w, &mut self.output)?;
                            }
                        }
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
        self.output.end()
    }
}
