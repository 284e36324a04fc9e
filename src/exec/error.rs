//! How a running job fails: the one error type of operators, sources, sinks and the runtime.

use crate::function::EvalError;

/// A failure of a running job.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error(transparent)]
    Eval(#[from] EvalError),
    #[error("{0}")]
    Source(String),
    #[error("{0}")]
    Sink(String),
    /// A checkpoint could not be taken, written or restored.
    #[error("{0}")]
    Checkpoint(String),
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
