//! Connectors: sources and sinks by Flink's option names, and the formats they share.
//!
//! Formats (`format/`) turn text lines into Arrow columns and back; transports (`source/`,
//! `sink/`) move bytes. A format never knows where its bytes come from.

pub mod format;
pub mod jdbc;
pub mod kafka;
pub mod partition;
pub mod registry;
pub mod sink;
pub mod source;

use arrow_array::RecordBatch;

/// A connector that cannot be created from its options.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ConnectorError(pub String);

/// Flink's error for options a connector or format does not take (`FactoryUtil`'s
/// validation), listing those it does.
pub fn unsupported_options(
    identifier: &str,
    mut unsupported: Vec<&str>,
    supported: &[impl AsRef<str>],
) -> ConnectorError {
    unsupported.sort_unstable();
    let mut supported: Vec<&str> = supported.iter().map(AsRef::as_ref).collect();
    supported.sort_unstable();
    ConnectorError(format!(
        "Unsupported options found for '{identifier}'.\n\nUnsupported options:\n\n{}\n\nSupported options:\n\n{}",
        unsupported.join("\n"),
        supported.join("\n")
    ))
}

/// Turns text lines into batches (one per `flush`).
///
/// The sources hand over many lines at once, straight from their read buffers, so that the
/// per-line work is the format's alone (no call through the trait, no copy of the line).
pub trait LineDecoder: Send {
    /// Decodes lines from the start of `text`, the first numbered `first_line`. Every line
    /// ends with `\n` except, at the end of the input, the last; a `\r` before the `\n` is the
    /// format's (inside a quoted CSV field the CRLF is kept). Stops after `limit.lines` lines,
    /// or before a line that could take a column past `limit.bytes` (never before the first
    /// line of a batch: a value too long for any batch is the decoder's error), and says how
    /// far it got. A malformed line is an error naming its line unless the format was told to
    /// skip (and count) such lines; what the batch holds after an error is not defined.
    fn decode(&mut self, text: &str, first_line: u64, limit: BatchLimit)
    -> Result<Decoded, String>;
    fn flush(&mut self) -> Result<RecordBatch, String>;
    /// The input has ended: a record left open (a CSV quoted field holding line breaks) is an
    /// error now, not earlier; `flush` keeps such a record for the next batch.
    fn end_of_input(&mut self) -> Result<(), String>;
    fn rows_skipped(&self) -> u64;
    /// Rows decoded since the last `flush` (a changelog record may give two).
    fn buffered_rows(&self) -> usize;
    /// The line a record still open after `decode` started on (a CSV quoted field holding
    /// line breaks): a checkpoint's position is before it.
    fn open_record_line(&self) -> Option<u64> {
        None
    }
}

/// How much more a batch may take, for [`LineDecoder::decode`].
#[derive(Debug, Clone, Copy)]
pub struct BatchLimit {
    /// Lines, at most.
    pub lines: usize,
    /// Text bytes in any one column: Arrow's string columns address at most `i32::MAX`.
    pub bytes: usize,
    /// Whether the batch already holds lines (then the byte limit may end it before the next).
    pub started: bool,
}

/// How far [`LineDecoder::decode`] got: the bytes of `text` it took (whole lines with their
/// `\n`) and how many lines they were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    pub bytes: usize,
    pub lines: usize,
}
