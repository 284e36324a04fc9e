//! The embedded Rust API: a program turns a stream of its own rows into a table, queries it
//! with SQL and reads the result as a changelog stream, as Flink's
//! `StreamTableEnvironment.fromDataStream` / `toChangelogStream` do.
//!
//! Data enters through a [`StreamWriter`]: the program pushes rows (Arrow batches or rows of
//! [`Value`](crate::types::value::Value)s) with their event timestamps, and watermarks, into
//! a bounded channel; the table reads it as one unbounded source split
//! (`connector/source/stream.rs`), whose watermarks pass through to the runtime as the
//! split's own. The table's schema is declared with Flink's expressions
//! (`col("t").rowtime()`, `col("p").proctime()`, resolved by `from_data_stream.rs` with
//! Flink's rules). Results leave through a [`TableResult`]: the job runs on a background
//! thread and sends its chunks, with their row kinds, through another bounded channel.
//!
//! ```no_run
//! use tideline::api::{StreamTableEnvironment, DataStream, col};
//! use tideline::types::value::Value;
//!
//! let mut env = StreamTableEnvironment::new();
//! let (writer, stream) = DataStream::channel(&[("user_name", "STRING"), ("data", "STRING")])?;
//! env.create_temporary_view(
//!     "user_actions",
//!     stream,
//!     &[col("user_name"), col("data"), col("user_action_time").rowtime()],
//! )?;
//! let mut result = env.execute_query(
//!     "SELECT TUMBLE_START(user_action_time, INTERVAL '10' MINUTE), COUNT(DISTINCT user_name)
//!      FROM user_actions GROUP BY TUMBLE(user_action_time, INTERVAL '10' MINUTE)",
//! )?;
//! std::thread::spawn(move || -> Result<(), tideline::api::ApiError> {
//!     writer.send_row(0, vec![Value::String("alice".into()), Value::String("a".into())])?;
//!     writer.send_watermark(0)?;
//!     Ok(()) // dropping the writer ends the stream
//! });
//! for row in result.rows() {
//!     let row = row?;
//!     println!("{} {:?}", row.kind.short_string(), row.fields);
//! }
//! # Ok::<(), tideline::api::ApiError>(())
//! ```

mod data_stream;
mod environment;
mod expression;
mod from_data_stream;
mod table_result;

pub use crate::function::Signature;
pub use crate::function::user::{
    ScalarFunction, TableFunction, TableRows, TableSignature, UserAccumulator,
    UserAggregateFunction,
};
pub use data_stream::{DataStream, StreamWriter};
pub use environment::StreamTableEnvironment;
pub use expression::{Expression, col};
pub use table_result::{ChangelogRow, TableResult};

use crate::exec::error::ExecError;
use crate::session::StatementError;

/// An error of the embedded API.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The schema declaration does not fit the stream (Flink's `ValidationException` text).
    #[error("{0}")]
    Validation(String),
    /// A statement failed: bad SQL (with its position) or a job that could not start.
    #[error(transparent)]
    Statement(#[from] StatementError),
    /// The running job failed.
    #[error(transparent)]
    Job(#[from] ExecError),
    /// Rows pushed do not have the stream's fields.
    #[error("{0}")]
    BadRows(String),
    /// The job reading the stream has ended (it failed or was cancelled): nothing reads
    /// what is pushed any more.
    #[error("the job reading the stream has ended")]
    StreamClosed,
}
