//! Formats: text lines ↔ Arrow columns.

pub mod csv;
pub mod json;
mod json_scan;

use std::collections::HashMap;

use super::{ConnectorError, LineDecoder};
use crate::types::Schema;
use crate::types::time::SessionZone;

/// The text of one column of the batch being decoded, as Arrow's string layout (bytes,
/// offsets, validity): decoders append each row's text, then the shared text parser reads
/// the column at the end of the batch.
#[derive(Debug, Default)]
pub(crate) struct ColumnText {
    data: String,
    offsets: Vec<i32>,
    valid: Vec<bool>,
    /// The text passed `i32::MAX` bytes, which Arrow's offsets cannot address.
    overflow: bool,
}

impl ColumnText {
    pub(crate) fn push(&mut self, s: Option<&str>) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        match s {
            Some(s) => {
                self.data.push_str(s);
                self.valid.push(true);
            }
            None => self.valid.push(false),
        }
        let end = i32::try_from(self.data.len()).unwrap_or_else(|_| {
            self.overflow = true;
            i32::MAX
        });
        self.offsets.push(end);
    }

    /// Bytes of text so far.
    pub(crate) fn bytes(&self) -> usize {
        self.data.len()
    }

    /// The column so far as a string array, leaving this one empty. Text past `i32::MAX`
    /// bytes is an error: the sources end a batch well before (see `LineDecoder::flush`).
    pub(crate) fn take(&mut self) -> Result<arrow_array::StringArray, String> {
        let offsets = std::mem::take(&mut self.offsets);
        let offsets = if offsets.is_empty() { vec![0] } else { offsets };
        let data = std::mem::take(&mut self.data);
        let valid = std::mem::take(&mut self.valid);
        if std::mem::take(&mut self.overflow) {
            return Err(format!(
                "the column's text in one batch is {} bytes, more than a string column holds (2 GiB)",
                data.len()
            ));
        }
        let nulls = arrow_buffer::NullBuffer::from(valid);
        let nulls = (nulls.null_count() > 0).then_some(nulls);
        arrow_array::StringArray::try_new(
            arrow_buffer::OffsetBuffer::new(arrow_buffer::ScalarBuffer::from(offsets)),
            arrow_buffer::Buffer::from(data.into_bytes()),
            nulls,
        )
        .map_err(|e| format!("cannot build a string column: {e}"))
    }
}

/// The decoder for a table's `format` option (`csv`, `json`).
pub fn new_decoder(
    options: &[(String, String)],
    schema: &Schema,
    zone: &SessionZone,
) -> Result<Box<dyn LineDecoder>, ConnectorError> {
    let map: HashMap<String, String> = options.iter().cloned().collect();
    match map.get("format").map(String::as_str) {
        Some("csv") => {
            let format = csv::CsvFormat::from_options(&map).map_err(ConnectorError)?;
            Ok(Box::new(
                format.decoder(schema, zone).map_err(ConnectorError)?,
            ))
        }
        Some("json") => {
            let format = json::JsonFormat::from_options(&map).map_err(ConnectorError)?;
            Ok(Box::new(
                format.decoder(schema, zone).map_err(ConnectorError)?,
            ))
        }
        Some(other) => Err(ConnectorError(format!(
            "format '{other}' is not supported (supported: csv, json)"
        ))),
        None => Err(ConnectorError("option 'format' is required".into())),
    }
}

/// A table's `format` as a writer of lines.
pub enum LineEncoder {
    Csv(csv::CsvFormat),
    Json(json::JsonFormat),
}

impl LineEncoder {
    /// Appends the batch's rows, one line each, ended by `\n`.
    pub fn encode_batch(
        &self,
        batch: &arrow_array::RecordBatch,
        schema: &Schema,
        out: &mut String,
    ) {
        match self {
            LineEncoder::Csv(f) => f.encode_batch(batch, schema, out),
            LineEncoder::Json(f) => f.encode_batch(batch, schema, out),
        }
    }
}

/// The encoder for a table's `format` option (`csv`, `json`).
pub fn new_encoder(
    options: &[(String, String)],
    schema: &Schema,
) -> Result<LineEncoder, ConnectorError> {
    let map: HashMap<String, String> = options.iter().cloned().collect();
    match map.get("format").map(String::as_str) {
        Some("csv") => {
            let format = csv::CsvFormat::from_options(&map).map_err(ConnectorError)?;
            format.check_schema(schema).map_err(ConnectorError)?;
            Ok(LineEncoder::Csv(format))
        }
        Some("json") => Ok(LineEncoder::Json(
            json::JsonFormat::from_options(&map).map_err(ConnectorError)?,
        )),
        Some(other) => Err(ConnectorError(format!(
            "format '{other}' is not supported (supported: csv, json)"
        ))),
        None => Err(ConnectorError("option 'format' is required".into())),
    }
}

/// Both formats' decoders have the same inherent methods; this adapts them to the trait.
macro_rules! line_decoder {
    ($decoder:ty) => {
        impl LineDecoder for $decoder {
            fn push_line(&mut self, line: &str, line_number: u64) -> Result<(), String> {
                <$decoder>::push_line(self, line, line_number).map_err(|e| e.to_string())
            }
            fn flush(&mut self) -> Result<arrow_array::RecordBatch, String> {
                self.finish_batch().map_err(|e| e.to_string())
            }
            fn end_of_input(&mut self) -> Result<(), String> {
                <$decoder>::end_of_input(self).map_err(|e| e.to_string())
            }
            fn rows_skipped(&self) -> u64 {
                <$decoder>::rows_skipped(self)
            }
        }
    };
}

line_decoder!(csv::CsvDecoder);
line_decoder!(json::JsonDecoder);
