//! Formats: text lines ↔ Arrow columns.
