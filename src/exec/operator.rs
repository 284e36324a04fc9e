//! The operator contract.

use super::chunk::StreamChunk;
use crate::function::EvalError;

/// Where an operator puts what it emits.
pub trait Output {
    fn emit(&mut self, chunk: StreamChunk) -> Result<(), ExecError>;
    fn emit_watermark(&mut self, watermark: i64) -> Result<(), ExecError>;
}

/// A synchronous state machine over a stream. The runtime calls `process` for each chunk in
/// arrival order, `on_watermark` when event time advances, and `finish` once after the last
/// input. Stateless operators keep the default `snapshot`/`restore`.
pub trait Operator: Send {
    fn process(&mut self, chunk: StreamChunk, out: &mut dyn Output) -> Result<(), ExecError>;

    fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        out.emit_watermark(watermark)
    }

    fn finish(&mut self, _out: &mut dyn Output) -> Result<(), ExecError> {
        Ok(())
    }

    /// The operator's state, to be written into a checkpoint.
    fn snapshot(&self) -> Vec<u8> {
        Vec::new()
    }

    fn restore(&mut self, _state: &[u8]) -> Result<(), ExecError> {
        Ok(())
    }
}

/// A failure of a running job.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error(transparent)]
    Eval(#[from] EvalError),
    #[error("{0}")]
    Source(String),
    #[error("{0}")]
    Sink(String),
    #[error("the job was cancelled")]
    Cancelled,
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<arrow_schema::ArrowError> for ExecError {
    fn from(e: arrow_schema::ArrowError) -> Self {
        ExecError::Internal(e.to_string())
    }
}
