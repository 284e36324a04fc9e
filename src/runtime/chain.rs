//! An operator chain: operators fused where data flows one to one, run on one thread. What
//! an operator emits is handed to the next one in the order it was emitted (a watermark must
//! not overtake the rows before it, nor rows the watermark before them).

use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, OperatorContext, Output, WatermarkStatus};
use crate::types::chunk::StreamChunk;

pub struct Chain {
    operators: Vec<Box<dyn Operator>>,
}

/// What an operator emitted, in the order it emitted it.
enum Emitted {
    Chunk(StreamChunk),
    Watermark(i64),
    Status(WatermarkStatus),
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
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), ExecError> {
        self.0.push(Emitted::Status(status));
        Ok(())
    }
}

impl Chain {
    pub fn new(operators: Vec<Box<dyn Operator>>) -> Self {
        Chain { operators }
    }

    /// The chain's operators, first to last (what a checkpoint snapshots and restores).
    pub fn operators(&self) -> &[Box<dyn Operator>] {
        &self.operators
    }

    pub fn operators_mut(&mut self) -> &mut [Box<dyn Operator>] {
        &mut self.operators
    }

    pub fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.operators.iter_mut().try_for_each(|op| op.open(ctx))
    }

    /// A chunk from the chain's input `input`.
    pub fn process(
        &mut self,
        input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        push(&mut self.operators, input, Emitted::Chunk(chunk), out)
    }

    pub fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        push(&mut self.operators, 0, Emitted::Watermark(watermark), out)
    }

    pub fn on_watermark_status(
        &mut self,
        status: WatermarkStatus,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        push(&mut self.operators, 0, Emitted::Status(status), out)
    }

    /// The earliest processing time any operator of the chain waits for.
    pub fn next_processing_time(&self) -> Option<i64> {
        self.operators
            .iter()
            .filter_map(|op| op.next_processing_time())
            .min()
    }

    /// Calls every operator whose processing time has come, first to last.
    pub fn on_processing_time(&mut self, now: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        self.each_in_turn(out, |op, collected| {
            if op.next_processing_time().is_some_and(|t| t <= now) {
                op.on_processing_time(now, collected)?;
            }
            Ok(())
        })
    }

    /// The chain's source was busy until now (see `Operator::on_input_active`).
    pub fn on_input_active(&mut self) {
        for op in &mut self.operators {
            op.on_input_active();
        }
    }

    /// Whether the chain's source must stop reading for now, and for how long (ms).
    pub fn pauses_input(&self) -> Option<i64> {
        self.operators
            .iter()
            .filter_map(|op| op.pauses_input())
            .min()
    }

    /// The late rows the chain's operators dropped.
    pub fn late_rows(&self) -> u64 {
        self.operators.iter().map(|op| op.late_rows()).sum()
    }

    /// The input has ended: each operator finishes in turn, what it emits passing through
    /// the rest.
    pub fn finish(&mut self, out: &mut dyn Output) -> Result<(), ExecError> {
        self.each_in_turn(out, |op, collected| op.finish(collected))
    }

    /// Runs `step` on each operator, first to last, what it emits passing through the rest.
    fn each_in_turn(
        &mut self,
        out: &mut dyn Output,
        mut step: impl FnMut(&mut dyn Operator, &mut dyn Output) -> Result<(), ExecError>,
    ) -> Result<(), ExecError> {
        for i in 0..self.operators.len() {
            let (head, rest) = self.operators.split_at_mut(i + 1);
            let mut collected = Collected::default();
            step(head[i].as_mut(), &mut collected)?;
            forward(rest, collected, out)?;
        }
        Ok(())
    }
}

impl Emitted {
    /// Hands the element to the end of the chain.
    fn emit_to(self, out: &mut dyn Output) -> Result<(), ExecError> {
        match self {
            Emitted::Chunk(c) => out.emit(c),
            Emitted::Watermark(w) => out.emit_watermark(w),
            Emitted::Status(s) => out.emit_watermark_status(s),
        }
    }

    /// Hands the element to `op` (a chunk as from input `input`).
    fn apply_to(
        self,
        op: &mut dyn Operator,
        input: usize,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        match self {
            Emitted::Chunk(c) => op.process(input, c, out),
            Emitted::Watermark(w) => op.on_watermark(w, out),
            Emitted::Status(s) => op.on_watermark_status(s, out),
        }
    }
}

/// Passes an element through `operators` in order, what each emits going to the next.
fn push(
    operators: &mut [Box<dyn Operator>],
    input: usize,
    item: Emitted,
    out: &mut dyn Output,
) -> Result<(), ExecError> {
    match operators.split_first_mut() {
        None => item.emit_to(out),
        Some((first, rest)) => {
            let mut collected = Collected::default();
            item.apply_to(first.as_mut(), input, &mut collected)?;
            forward(rest, collected, out)
        }
    }
}

/// Hands what one operator emitted to the rest of the chain, in order; operators after the
/// first have one input.
fn forward(
    rest: &mut [Box<dyn Operator>],
    collected: Collected,
    out: &mut dyn Output,
) -> Result<(), ExecError> {
    for emitted in collected.0 {
        push(rest, 0, emitted, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::RecordBatch;
    use std::sync::Arc;

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
        fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), ExecError> {
            self.0.push(format!("{status:?}"));
            Ok(())
        }
    }

    /// A pass-through operator after one that interleaves rows and watermarks must see (and
    /// forward) them interleaved: a watermark overtaking rows would make them late.
    #[test]
    fn a_chain_keeps_the_order_an_operator_emitted_in() {
        let mut chain = Chain::new(vec![Box::new(RowThenWatermark), Box::new(PassThrough)]);
        let column = arrow_array::Int32Array::from(vec![5, 7]);
        let batch = RecordBatch::try_from_iter([("id", Arc::new(column) as _)]).unwrap();
        let mut out = Recorded::default();
        chain
            .process(0, StreamChunk::inserts(batch), &mut out)
            .unwrap();
        assert_eq!(out.0, ["rows 1", "watermark 5", "rows 1", "watermark 7"]);
    }
}
