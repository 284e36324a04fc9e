//! Formats: text lines ↔ Arrow columns.

pub mod csv;
pub mod json;
