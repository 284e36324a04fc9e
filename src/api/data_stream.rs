//! A program's stream: the writer it pushes rows, timestamps and watermarks with, and the
//! [`DataStream`] it registers as a table.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;

use super::ApiError;
use crate::connector::source::stream::StreamElement;
use crate::exec::eval::literal_array;
use crate::sql::types::parse_type_text;
use crate::types::value::Value;
use crate::types::{Field, Schema};

/// Elements a stream holds before its writer waits for the job: enough to keep the job
/// busy between the program's pushes, few enough to bound the memory a slow job costs.
pub const DEFAULT_CAPACITY: usize = 1024;

/// The reading end of a program's stream and its fields, until it becomes a table.
pub struct DataStream {
    pub(super) schema: Schema,
    pub(super) receiver: Receiver<StreamElement>,
}

impl DataStream {
    /// A stream of rows of `fields` (name and Flink type text, `("user_name", "STRING")`),
    /// every field nullable, and the writer that feeds it.
    pub fn channel(fields: &[(&str, &str)]) -> Result<(StreamWriter, DataStream), ApiError> {
        Self::with_capacity(fields, DEFAULT_CAPACITY)
    }

    /// [`DataStream::channel`] holding at most `capacity` pushed elements (batches, rows or
    /// watermarks) before the writer waits.
    pub fn with_capacity(
        fields: &[(&str, &str)],
        capacity: usize,
    ) -> Result<(StreamWriter, DataStream), ApiError> {
        let mut schema = Vec::with_capacity(fields.len());
        for (name, type_text) in fields {
            let data_type = parse_type_text(type_text)
                .map_err(|e| ApiError::Validation(format!("field '{name}': {e}")))?;
            schema.push(Field::new(*name, data_type.with_nullable(true)));
        }
        let schema = Schema::new(schema);
        let (sender, receiver) = sync_channel(capacity.max(1));
        let writer = StreamWriter {
            sender,
            arrow: crate::types::chunk::runtime_schema(&schema),
            schema: schema.clone(),
        };
        Ok((writer, DataStream { schema, receiver }))
    }

    /// The stream's fields.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }
}

/// The program's end of a stream. Each push waits while the stream is full (the job reads
/// slower than the program pushes). Dropping the writer ends the stream: the job then sees
/// the final watermark, which fires every window still open.
pub struct StreamWriter {
    sender: SyncSender<StreamElement>,
    schema: Schema,
    arrow: SchemaRef,
}

impl StreamWriter {
    /// The stream's fields.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Rows of the stream's fields, with their event timestamps (milliseconds since the
    /// epoch, UTC; one per row).
    pub fn send_batch(&self, batch: RecordBatch, timestamps: &[i64]) -> Result<(), ApiError> {
        if timestamps.len() != batch.num_rows() {
            return Err(ApiError::BadRows(format!(
                "{} timestamps for {} rows",
                timestamps.len(),
                batch.num_rows()
            )));
        }
        self.send_rows(batch, Some(timestamps.to_vec()))
    }

    /// Rows without event timestamps: a table declaring a rowtime attribute on this stream
    /// fails when it reads them, as in Flink.
    pub fn send_batch_without_timestamps(&self, batch: RecordBatch) -> Result<(), ApiError> {
        self.send_rows(batch, None)
    }

    /// One row of values in the stream's fields, with its event timestamp.
    pub fn send_row(&self, timestamp: i64, values: Vec<Value>) -> Result<(), ApiError> {
        if values.len() != self.schema.len() {
            return Err(ApiError::BadRows(format!(
                "a row of {} values for a stream of {} fields",
                values.len(),
                self.schema.len()
            )));
        }
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(values.len());
        for (value, field) in values.iter().zip(&self.schema.fields) {
            let array = literal_array(value, &field.data_type, 1)
                .map_err(|e| ApiError::BadRows(format!("field '{}': {e}", field.name)))?;
            // A literal's array may be of a narrower Arrow type than the field's.
            columns.push(arrow_cast(
                &array,
                self.arrow.field(columns.len()).data_type(),
            )?);
        }
        let batch = RecordBatch::try_new(self.arrow.clone(), columns)
            .map_err(|e| ApiError::BadRows(e.to_string()))?;
        self.send_rows(batch, Some(vec![timestamp]))
    }

    /// A watermark: the program's promise that no later row has a timestamp at or below
    /// it. One that does not advance the stream's watermark is ignored.
    pub fn send_watermark(&self, watermark: i64) -> Result<(), ApiError> {
        self.send(StreamElement::Watermark(watermark))
    }

    /// Ends the stream (as dropping the writer does).
    pub fn close(self) {}

    fn send_rows(&self, batch: RecordBatch, timestamps: Option<Vec<i64>>) -> Result<(), ApiError> {
        let fits = batch.num_columns() == self.arrow.fields().len()
            && batch
                .schema()
                .fields()
                .iter()
                .zip(self.arrow.fields())
                .all(|(a, b)| a.data_type() == b.data_type());
        if !fits {
            return Err(ApiError::BadRows(format!(
                "a batch of columns {:?} for a stream of fields {:?}",
                batch
                    .schema()
                    .fields()
                    .iter()
                    .map(|f| f.data_type().to_string())
                    .collect::<Vec<_>>(),
                self.arrow
                    .fields()
                    .iter()
                    .map(|f| f.data_type().to_string())
                    .collect::<Vec<_>>()
            )));
        }
        let batch = RecordBatch::try_new(self.arrow.clone(), batch.columns().to_vec())
            .map_err(|e| ApiError::BadRows(e.to_string()))?;
        self.send(StreamElement::Rows { batch, timestamps })
    }

    fn send(&self, element: StreamElement) -> Result<(), ApiError> {
        self.sender
            .send(element)
            .map_err(|_| ApiError::StreamClosed)
    }
}

fn arrow_cast(array: &ArrayRef, to: &arrow_schema::DataType) -> Result<ArrayRef, ApiError> {
    if array.data_type() == to {
        return Ok(array.clone());
    }
    // A literal's array has its type's Arrow type: a mismatch is a value of the wrong kind.
    Err(ApiError::BadRows(format!(
        "a value of Arrow type {} for a field of Arrow type {to}",
        array.data_type()
    )))
}

impl Clone for StreamWriter {
    /// Another writer onto the same stream (a second producer thread); the stream ends when
    /// every writer is dropped.
    fn clone(&self) -> Self {
        StreamWriter {
            sender: self.sender.clone(),
            schema: self.schema.clone(),
            arrow: Arc::clone(&self.arrow),
        }
    }
}
