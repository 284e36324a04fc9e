//! Where a split's rows go: one consumer's router, or, when several consumers read the split
//! (a reused sub-plan), a fork: each branch's own stateless chain, then its router. Every
//! element leaving the split's chain passes through each branch in turn, so each consumer
//! sees the rows, watermarks, barriers and the end in the split's order.

use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, OperatorContext, Output, WatermarkStatus};
use crate::runtime::chain::Chain;
use crate::runtime::channel::Router;
use crate::types::chunk::StreamChunk;

pub enum SplitOutput {
    One(Router),
    Fork(Fork),
}

/// The branches of a forked split, and what the split last sent into them.
pub struct Fork {
    branches: Vec<(Chain, Router)>,
    last_watermark: i64,
    last_status: WatermarkStatus,
}

impl Fork {
    /// Each branch's operators with the router of its consumer.
    pub fn new(branches: Vec<(Vec<Box<dyn Operator>>, Router)>) -> Fork {
        Fork {
            branches: branches
                .into_iter()
                .map(|(operators, router)| (Chain::new(operators), router))
                .collect(),
            last_watermark: i64::MIN,
            last_status: WatermarkStatus::Active,
        }
    }
}

impl SplitOutput {
    /// Opens the branches' operators (the split's own chain is opened by the split).
    pub fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        match self {
            SplitOutput::One(_) => Ok(()),
            SplitOutput::Fork(f) => f.branches.iter_mut().try_for_each(|(c, _)| c.open(ctx)),
        }
    }

    /// The last watermark and status the split sent: what a checkpoint records of it.
    pub fn last_sent(&self) -> (i64, WatermarkStatus) {
        match self {
            SplitOutput::One(r) => r.last_sent(),
            SplitOutput::Fork(f) => (f.last_watermark, f.last_status),
        }
    }

    /// Sends checkpoint `id`'s barrier to every consumer.
    pub fn barrier(&self, id: u64) -> Result<(), ExecError> {
        match self {
            SplitOutput::One(r) => r.barrier(id),
            SplitOutput::Fork(f) => f.branches.iter().try_for_each(|(_, r)| r.barrier(id)),
        }
    }

    /// Every operator the split runs: its own chain's, then each branch's in turn — the
    /// order its checkpointed state lists them in (as `SourceUids::all` lists their uids).
    pub fn checkpointed<'a>(&'a self, chain: &'a Chain) -> Vec<&'a dyn Operator> {
        let mut operators: Vec<&dyn Operator> =
            chain.operators().iter().map(|op| op.as_ref()).collect();
        if let SplitOutput::Fork(f) = self {
            for (c, _) in &f.branches {
                operators.extend(c.operators().iter().map(|op| op.as_ref()));
            }
        }
        operators
    }

    /// [`checkpointed`](Self::checkpointed), to restore.
    pub fn checkpointed_mut<'a>(
        &'a mut self,
        chain: &'a mut Chain,
    ) -> Vec<&'a mut Box<dyn Operator>> {
        let mut operators: Vec<&mut Box<dyn Operator>> = chain.operators_mut().iter_mut().collect();
        if let SplitOutput::Fork(f) = self {
            for (c, _) in &mut f.branches {
                operators.extend(c.operators_mut().iter_mut());
            }
        }
        operators
    }

    /// Calls the branches' operators whose processing time has come.
    pub fn on_processing_time(&mut self, now: i64) -> Result<(), ExecError> {
        if let SplitOutput::Fork(f) = self {
            for (chain, router) in &mut f.branches {
                chain.on_processing_time(now, router)?;
            }
        }
        Ok(())
    }

    /// The split's input has ended: the branches' operators finish, then every consumer is
    /// told.
    pub fn finish(&mut self) -> Result<(), ExecError> {
        if let SplitOutput::Fork(f) = self {
            for (chain, router) in &mut f.branches {
                chain.finish(router)?;
            }
        }
        Ok(())
    }

    /// The split's channel has ended, for every consumer.
    pub fn end(&self) -> Result<(), ExecError> {
        match self {
            SplitOutput::One(r) => r.end(),
            SplitOutput::Fork(f) => f.branches.iter().try_for_each(|(_, r)| r.end()),
        }
    }
}

impl Output for SplitOutput {
    fn emit(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        match self {
            SplitOutput::One(r) => r.emit(chunk),
            SplitOutput::Fork(f) => {
                if chunk.num_rows() == 0 {
                    return Ok(());
                }
                for (chain, router) in &mut f.branches {
                    chain.process(0, chunk.clone(), router)?;
                }
                Ok(())
            }
        }
    }

    fn emit_watermark(&mut self, watermark: i64) -> Result<(), ExecError> {
        match self {
            SplitOutput::One(r) => r.emit_watermark(watermark),
            SplitOutput::Fork(f) => {
                f.last_watermark = f.last_watermark.max(watermark);
                for (chain, router) in &mut f.branches {
                    chain.on_watermark(watermark, router)?;
                }
                Ok(())
            }
        }
    }

    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), ExecError> {
        match self {
            SplitOutput::One(r) => r.emit_watermark_status(status),
            SplitOutput::Fork(f) => {
                f.last_status = status;
                for (chain, router) in &mut f.branches {
                    chain.on_watermark_status(status, router)?;
                }
                Ok(())
            }
        }
    }
}
