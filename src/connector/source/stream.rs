//! A stream a program provides (`api::StreamWriter`) as a source split: rows and watermarks
//! arrive in order through a bounded channel, so a program that pushes faster than the job
//! reads waits (backpressure); the stream ends when the program drops its writer.
//!
//! The split lays out the table's physical columns from the stream's fields and fills its
//! rowtime column, if any, with the rows' event timestamps. The watermarks pass through as
//! the split's own ([`SplitEvent::Watermark`]): the table has no WATERMARK clause, as a
//! table made by Flink's `fromDataStream` has none.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow_array::{ArrayRef, RecordBatch, TimestampNanosecondArray};
use arrow_schema::SchemaRef;

use crate::connector::source::split::{SourceSplit, SplitEvent};
use crate::exec::error::ExecError;
use crate::types::chunk::batch_with_rows;

/// How long the split waits for the program before it lets the runtime look at its stop
/// flag and its operators' processing time.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// What a program pushes onto its stream.
#[derive(Debug)]
pub enum StreamElement {
    /// Rows in the stream's fields, each with its event timestamp (milliseconds since the
    /// epoch, UTC) when the program assigned them.
    Rows {
        batch: RecordBatch,
        timestamps: Option<Vec<i64>>,
    },
    /// The program's watermark, in milliseconds.
    Watermark(i64),
}

/// Where a physical column of the table comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamColumn {
    /// A field of the stream, by position.
    Field(usize),
    /// The row's event timestamp, as `TIMESTAMP(3)`.
    Rowtime,
}

/// The stream behind a table registered from a program: the receiving end of its channel,
/// taken by the first job that reads the table.
#[derive(Debug)]
pub struct ProvidedStream {
    pub table: String,
    /// The table's physical columns, in order.
    pub columns: Vec<StreamColumn>,
    receiver: Mutex<Option<Receiver<StreamElement>>>,
}

impl ProvidedStream {
    pub fn new(
        table: String,
        columns: Vec<StreamColumn>,
        receiver: Receiver<StreamElement>,
    ) -> Self {
        ProvidedStream {
            table,
            columns,
            receiver: Mutex::new(Some(receiver)),
        }
    }

    /// The split of a job reading the table; `schema` is what the scan produces. A channel
    /// has one reader: a second job over the same stream is refused.
    pub fn open(&self, schema: SchemaRef) -> Result<StreamSplit, String> {
        let receiver = self
            .receiver
            .lock()
            .ok()
            .and_then(|mut r| r.take())
            .ok_or_else(|| {
                format!(
                    "the stream of table '{}' is read by an earlier query; a stream can be read by one query",
                    self.table
                )
            })?;
        Ok(StreamSplit {
            name: format!("stream of table {}", self.table),
            columns: self.columns.clone(),
            schema,
            receiver,
            watermark: i64::MIN,
            rows: 0,
        })
    }
}

/// The split reading a [`ProvidedStream`].
pub struct StreamSplit {
    name: String,
    columns: Vec<StreamColumn>,
    schema: SchemaRef,
    receiver: Receiver<StreamElement>,
    /// The last watermark handed over: one that does not advance it is dropped.
    watermark: i64,
    /// Rows read so far, for error messages.
    rows: u64,
}

impl StreamSplit {
    fn rows(
        &mut self,
        batch: RecordBatch,
        timestamps: Option<Vec<i64>>,
    ) -> Result<RecordBatch, ExecError> {
        let n = batch.num_rows();
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.columns.len());
        for column in &self.columns {
            columns.push(match column {
                StreamColumn::Field(i) => batch.column(*i).clone(),
                StreamColumn::Rowtime => {
                    let Some(timestamps) = &timestamps else {
                        // Flink fails the same way when a stream without timestamps
                        // declares a rowtime attribute.
                        return Err(ExecError::Source(format!(
                            "{}, row {}: Rowtime timestamp is not defined. Please make sure that a proper TimestampAssigner is defined and the stream environment uses the EventTime time characteristic.",
                            self.name,
                            self.rows + 1
                        )));
                    };
                    let nanos = timestamps
                        .iter()
                        .enumerate()
                        .map(|(row, ms)| {
                            ms.checked_mul(1_000_000).ok_or_else(|| {
                                ExecError::Source(format!(
                                    "{}, row {}: event timestamp {ms} is out of the TIMESTAMP range",
                                    self.name,
                                    self.rows + row as u64 + 1
                                ))
                            })
                        })
                        .collect::<Result<Vec<i64>, ExecError>>()?;
                    std::sync::Arc::new(TimestampNanosecondArray::from(nanos))
                }
            });
        }
        self.rows += n as u64;
        Ok(batch_with_rows(self.schema.clone(), columns, n)?)
    }
}

impl SourceSplit for StreamSplit {
    /// The rows alone (the runtime reads [`SourceSplit::next`], which keeps the watermarks).
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
        loop {
            match self.next()? {
                SplitEvent::Batch(batch) => return Ok(Some(batch)),
                SplitEvent::Watermark(_) => {}
                SplitEvent::End => return Ok(None),
            }
        }
    }

    fn next(&mut self) -> Result<SplitEvent, ExecError> {
        match self.receiver.recv_timeout(POLL_INTERVAL) {
            Ok(StreamElement::Rows { batch, timestamps }) => {
                Ok(SplitEvent::Batch(self.rows(batch, timestamps)?))
            }
            Ok(StreamElement::Watermark(wm)) if wm > self.watermark => {
                self.watermark = wm;
                Ok(SplitEvent::Watermark(wm))
            }
            Ok(StreamElement::Watermark(_)) | Err(RecvTimeoutError::Timeout) => Ok(
                SplitEvent::Batch(RecordBatch::new_empty(self.schema.clone())),
            ),
            Err(RecvTimeoutError::Disconnected) => Ok(SplitEvent::End),
        }
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn is_bounded(&self) -> bool {
        false
    }
}

/// The provided stream behind a table, if `source` is one.
pub fn provided_stream(source: &Arc<dyn std::any::Any + Send + Sync>) -> Option<&ProvidedStream> {
    source.downcast_ref::<ProvidedStream>()
}
