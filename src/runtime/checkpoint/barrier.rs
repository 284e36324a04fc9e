//! `BarrierAligner`: a consumer's alignment of checkpoint barriers over its input channels
//! (Flink's aligned checkpoints, docs/design/0008 §1), used by tasks and by the sink alike.
//!
//! The first barrier `n` on any channel starts aligning `n`. From then on, what a channel
//! that has delivered `n` sends is held, in arrival order, while the other channels go on
//! being processed. When every channel that has not ended has delivered `n`, the consumer is
//! aligned: it snapshots, sends the barrier on, and processes what was held as if it had just
//! arrived. A channel that ends before its barrier counts as arrived.

use std::collections::VecDeque;

use crate::runtime::channel::Message;

/// What to do with a message the consumer received.
#[derive(Debug)]
pub enum Received {
    /// Process it now.
    Process(Message),
    /// Held until the alignment ends; nothing to do now.
    Held,
    /// Every channel has delivered checkpoint `n`'s barrier: snapshot, forward the barrier,
    /// then process [`BarrierAligner::release`]'s messages.
    Aligned(u64),
}

#[derive(Debug)]
pub struct BarrierAligner {
    ended: Vec<bool>,
    /// The checkpoint being aligned, and which channels have delivered its barrier.
    aligning: Option<u64>,
    arrived: Vec<bool>,
    held: VecDeque<(usize, Message)>,
    /// The last checkpoint aligned: a later barrier of it or of an earlier one is stale.
    last: u64,
}

impl BarrierAligner {
    pub fn new(channels: usize) -> Self {
        BarrierAligner {
            ended: vec![false; channels],
            aligning: None,
            arrived: vec![false; channels],
            held: VecDeque::new(),
            last: 0,
        }
    }

    /// Messages held while aligning.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// A message arrived on `channel`.
    pub fn receive(&mut self, channel: usize, message: Message) -> Received {
        if self.aligning.is_some() && self.arrived[channel] {
            self.held.push_back((channel, message));
            return Received::Held;
        }
        match message {
            Message::Barrier(id) => {
                if id <= self.last {
                    return Received::Held;
                }
                if self.aligning.is_none_or(|n| id > n) {
                    // A newer checkpoint replaces one still aligning only if the coordinator
                    // gave the older up; the older's barriers then never complete it.
                    self.aligning = Some(id);
                    self.arrived.copy_from_slice(&self.ended);
                }
                self.arrived[channel] = true;
                self.check()
            }
            Message::End => {
                self.ended[channel] = true;
                if self.aligning.is_some() {
                    self.arrived[channel] = true;
                }
                Received::Process(Message::End)
            }
            other => Received::Process(other),
        }
    }

    /// After an `End` was processed while aligning: the alignment may be complete now.
    pub fn check(&mut self) -> Received {
        match self.aligning {
            Some(id) if self.arrived.iter().all(|&a| a) => {
                self.aligning = None;
                self.last = id;
                Received::Aligned(id)
            }
            _ => Received::Held,
        }
    }

    /// The messages held during the alignment that just ended, in arrival order, for the
    /// consumer to process (an `End` among them ends its channel here too).
    pub fn release(&mut self) -> VecDeque<(usize, Message)> {
        self.arrived.iter_mut().for_each(|a| *a = false);
        for (channel, message) in &self.held {
            if matches!(message, Message::End) {
                self.ended[*channel] = true;
            }
        }
        std::mem::take(&mut self.held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(r: &Received) -> String {
        match r {
            Received::Process(Message::Watermark(w)) => format!("process wm {w}"),
            Received::Process(Message::End) => "process end".into(),
            Received::Process(_) => "process".into(),
            Received::Held => "held".into(),
            Received::Aligned(n) => format!("aligned {n}"),
        }
    }

    #[test]
    fn a_channel_past_its_barrier_is_held_until_every_channel_delivered_it() {
        let mut a = BarrierAligner::new(2);
        assert_eq!(kind(&a.receive(0, Message::Watermark(1))), "process wm 1");
        assert_eq!(kind(&a.receive(0, Message::Barrier(1))), "held");
        assert_eq!(kind(&a.receive(0, Message::Watermark(2))), "held");
        assert_eq!(kind(&a.receive(1, Message::Watermark(3))), "process wm 3");
        assert_eq!(kind(&a.receive(0, Message::Watermark(4))), "held");
        assert_eq!(kind(&a.receive(1, Message::Barrier(1))), "aligned 1");
        let released: Vec<(usize, String)> = a
            .release()
            .into_iter()
            .map(|(c, m)| (c, format!("{m:?}")))
            .collect();
        assert_eq!(
            released,
            vec![(0, "Watermark(2)".into()), (0, "Watermark(4)".into())]
        );
        // The next checkpoint aligns afresh.
        assert_eq!(kind(&a.receive(1, Message::Barrier(2))), "held");
        assert_eq!(kind(&a.receive(1, Message::Watermark(5))), "held");
        assert_eq!(kind(&a.receive(0, Message::Barrier(2))), "aligned 2");
        assert_eq!(a.release().len(), 1);
    }

    #[test]
    fn a_channel_that_ends_counts_as_arrived() {
        let mut a = BarrierAligner::new(3);
        assert_eq!(kind(&a.receive(2, Message::End)), "process end");
        assert_eq!(kind(&a.receive(0, Message::Barrier(1))), "held");
        assert_eq!(kind(&a.receive(1, Message::End)), "process end");
        assert_eq!(kind(&a.check()), "aligned 1");
        assert_eq!(a.release().len(), 0);
        // With one channel left, its barrier aligns at once.
        assert_eq!(kind(&a.receive(0, Message::Barrier(2))), "aligned 2");
    }

    #[test]
    fn a_single_channel_aligns_on_its_barrier() {
        let mut a = BarrierAligner::new(1);
        assert_eq!(kind(&a.receive(0, Message::Barrier(7))), "aligned 7");
        assert_eq!(kind(&a.receive(0, Message::Watermark(1))), "process wm 1");
    }
}
