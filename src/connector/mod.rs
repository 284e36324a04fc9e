//! Connectors: sources and sinks by Flink's option names, and the formats they share.
//!
//! Formats (`format/`) turn text lines into Arrow columns and back; transports (`source/`,
//! `sink/`) move bytes. A format never knows where its bytes come from.

pub mod format;
pub mod option_value;
pub mod partition;
pub mod sink;
pub mod source;

use arrow_array::RecordBatch;

/// A connector that cannot be created from its options.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ConnectorError(pub String);

/// Turns text lines into batches (one per `flush`).
pub trait LineDecoder: Send {
    /// Decodes one line; a malformed line is an error unless the format was told to skip
    /// (and count) such lines.
    fn push_line(&mut self, line: &str, line_number: u64) -> Result<(), String>;
    fn flush(&mut self) -> Result<RecordBatch, String>;
    /// The input has ended: a record left open (a CSV quoted field holding line breaks) is an
    /// error now, not earlier; `flush` keeps such a record for the next batch.
    fn end_of_input(&mut self) -> Result<(), String>;
    fn rows_skipped(&self) -> u64;
    /// Bytes of text the largest column holds for the next batch: a batch's string column
    /// addresses at most `i32::MAX` bytes, so the sources end a batch before that.
    fn buffered_bytes(&self) -> usize;
}
