//! Formats: text lines ↔ Arrow columns.

pub mod csv;
pub mod json;

use std::collections::HashMap;

use super::{ConnectorError, LineDecoder};
use crate::types::Schema;
use crate::types::time::SessionZone;

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
