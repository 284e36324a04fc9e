//! Execution: operators as synchronous state machines over [`chunk::StreamChunk`]s, and the
//! runtime that drives them.
//!
//! An operator ([`operator::Operator`]) reacts to chunks, watermarks and the end of input and
//! pushes what it emits into an [`operator::Output`]; it knows nothing of threads or I/O. The
//! [`runtime`] runs each source split on its own thread with its chain of operators, and
//! sends the results over a bounded channel (backpressure) to the single sink.

pub mod aggregate;
pub mod calc;
pub mod chunk;
pub mod eval;
pub mod group_window_aggregate;
pub mod not_null;
pub mod operator;
pub mod runtime;
pub mod state;
#[cfg(test)]
pub mod test_harness;
pub mod values;
pub mod watermark_assigner;
