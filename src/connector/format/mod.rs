//! Formats: text lines ↔ Arrow columns.

pub mod csv;
pub mod json;

use super::{ConnectorError, LineDecoder};
use crate::types::Schema;
use crate::types::time::SessionZone;

/// The decoder for a table's `format` option (`csv`, `json`).
pub fn new_decoder(options: &[(String, String)], _schema: &Schema, _zone: &SessionZone) -> Result<Box<dyn LineDecoder>, ConnectorError> {
    let format = options.iter().find(|(k, _)| k == "format").map(|(_, v)| v.as_str());
    Err(ConnectorError(format!("format {format:?} is not supported yet")))
}
