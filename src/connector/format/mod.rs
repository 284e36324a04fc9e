//! Formats: text lines ↔ Arrow columns.

pub mod changelog;
pub mod csv;
pub mod json;
mod json_scan;
pub mod raw;

use std::collections::HashMap;

use super::{BatchLimit, ConnectorError, Decoded, LineDecoder};
use crate::types::text::{CellColumn, TextDialect};
use crate::types::time::SessionZone;
use crate::types::{DataType, Schema};

/// The text of one column of the batch being decoded, as Arrow's string layout (bytes,
/// offsets, validity): decoders append each row's text, then the shared text parser reads
/// the column at the end of the batch.
#[derive(Debug, Default)]
pub(crate) struct ColumnText {
    data: String,
    offsets: Vec<i32>,
    valid: Vec<bool>,
    /// How many of `valid` are false.
    nulls: usize,
    /// The text passed `i32::MAX` bytes, which Arrow's offsets cannot address.
    overflow: bool,
    /// A lower limit than `i32::MAX`, for tests of the overflow (0: none).
    #[cfg(test)]
    limit: usize,
}

impl ColumnText {
    fn max_bytes(&self) -> usize {
        #[cfg(test)]
        if self.limit > 0 {
            return self.limit;
        }
        i32::MAX as usize
    }

    #[cfg(test)]
    pub(crate) fn with_limit(limit: usize) -> Self {
        ColumnText {
            limit,
            ..ColumnText::default()
        }
    }

    pub(crate) fn push(&mut self, s: Option<&str>) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        match s {
            Some(s) => {
                self.data.push_str(s);
                self.valid.push(true);
            }
            None => {
                self.valid.push(false);
                self.nulls += 1;
            }
        }
        let end = match i32::try_from(self.data.len()) {
            Ok(end) if self.data.len() <= self.max_bytes() => end,
            _ => {
                self.overflow = true;
                i32::MAX
            }
        };
        self.offsets.push(end);
    }

    /// Bytes of text so far.
    pub(crate) fn bytes(&self) -> usize {
        self.data.len()
    }

    /// The column so far as a string array, leaving this one empty. Text past `i32::MAX`
    /// bytes is an error: the sources end a batch well before (see `LineDecoder::flush`).
    /// The buffers left behind are as large as the ones taken, so that a column's next batch
    /// of the same size grows none of them.
    pub(crate) fn take(&mut self) -> Result<arrow_array::StringArray, String> {
        let offsets = {
            let capacity = self.offsets.len();
            std::mem::replace(&mut self.offsets, Vec::with_capacity(capacity))
        };
        let offsets = if offsets.is_empty() { vec![0] } else { offsets };
        let data = {
            let capacity = self.data.len();
            std::mem::replace(&mut self.data, String::with_capacity(capacity))
        };
        let valid = {
            let capacity = self.valid.len();
            std::mem::replace(&mut self.valid, Vec::with_capacity(capacity))
        };
        let nulls = std::mem::take(&mut self.nulls);
        if std::mem::take(&mut self.overflow) {
            return Err(format!(
                "the column's text in one batch is {} bytes, more than a string column holds \
                 ({} bytes)",
                data.len(),
                self.max_bytes()
            ));
        }
        let nulls = (nulls > 0).then(|| arrow_buffer::NullBuffer::from(valid));
        arrow_array::StringArray::try_new(
            arrow_buffer::OffsetBuffer::new(arrow_buffer::ScalarBuffer::from(offsets)),
            arrow_buffer::Buffer::from(data.into_bytes()),
            nulls,
        )
        .map_err(|e| format!("cannot build a string column: {e}"))
    }
}

/// A scalar column of the batch being decoded: numbers, DECIMAL and TIMESTAMP are parsed as
/// each row's text is read ([`CellColumn`]); any other type keeps the text for the shared
/// text parser at the end of the batch.
#[derive(Debug)]
pub(crate) enum TextColumn {
    Text(ColumnText),
    Cells(CellColumn),
}

impl TextColumn {
    pub(crate) fn new(ty: &DataType, dialect: TextDialect) -> TextColumn {
        match CellColumn::new(ty, dialect) {
            Some(cells) => TextColumn::Cells(cells),
            None => TextColumn::Text(ColumnText::default()),
        }
    }

    pub(crate) fn push(&mut self, s: Option<&str>) {
        match self {
            TextColumn::Text(text) => text.push(s),
            TextColumn::Cells(cells) => cells.push(s),
        }
    }

    /// Bytes of text held (parsed cells hold none).
    pub(crate) fn bytes(&self) -> usize {
        match self {
            TextColumn::Text(text) => text.bytes(),
            TextColumn::Cells(_) => 0,
        }
    }

    /// Drops what the column holds.
    pub(crate) fn clear(&mut self) {
        match self {
            TextColumn::Text(text) => {
                let _ = text.take();
            }
            TextColumn::Cells(cells) => {
                let _ = cells.finish();
            }
        }
    }

    /// The column so far and its cells' errors by row, leaving it empty; `parse` turns held
    /// text into the column's type.
    pub(crate) fn finish(
        &mut self,
        parse: impl FnOnce(&arrow_array::StringArray) -> (arrow_array::ArrayRef, Vec<(usize, String)>),
    ) -> Result<(arrow_array::ArrayRef, Vec<(usize, String)>), String> {
        match self {
            TextColumn::Text(text) => Ok(parse(&text.take()?)),
            TextColumn::Cells(cells) => Ok(cells.finish()),
        }
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
        Some(f) if changelog::Flavor::of_format(f).is_some() => {
            changelog::check_schema(schema).map_err(ConnectorError)?;
            let format =
                changelog::ChangelogFormat::from_options(f, &map).map_err(ConnectorError)?;
            Ok(Box::new(
                format.decoder(schema, zone).map_err(ConnectorError)?,
            ))
        }
        Some("raw") => Err(ConnectorError(
            "format 'raw' is read and written by the kafka and upsert-kafka connectors only".into(),
        )),
        Some(other) => Err(ConnectorError(format!(
            "format '{other}' is not supported (supported: {SUPPORTED})"
        ))),
        None => Err(ConnectorError("option 'format' is required".into())),
    }
}

/// The formats a table may name.
const SUPPORTED: &str = "csv, json, debezium-json, canal-json, maxwell-json";

/// Whether a table's `format` (or `value.format`) is a changelog format (its rows carry kinds:
/// `+I`, `-U`, `+U`, `-D`).
pub fn is_changelog_format(options: &[(String, String)]) -> bool {
    // `value.format`: the Kafka connectors' name for the value's format.
    options.iter().any(|(k, v)| {
        (k == "format" || k == "value.format") && changelog::Flavor::of_format(v.trim()).is_some()
    })
}

/// A table's `format` as a writer of lines.
pub enum LineEncoder {
    Csv(csv::CsvFormat),
    Json(json::JsonFormat),
    Changelog(changelog::ChangelogFormat),
}

impl LineEncoder {
    /// Appends the batch's rows, one line each, ended by `\n`, as UTF-8; `kinds`: the rows'
    /// kinds (`None`: inserts), which only a changelog format writes.
    pub fn encode_batch(
        &self,
        batch: &arrow_array::RecordBatch,
        kinds: Option<&[crate::types::chunk::RowKind]>,
        schema: &Schema,
        out: &mut Vec<u8>,
    ) {
        match self {
            LineEncoder::Csv(f) => f.encode_batch(batch, schema, out),
            LineEncoder::Json(f) => f.encode_batch(batch, schema, out),
            LineEncoder::Changelog(f) => f.encode_batch(batch, kinds, schema, out),
        }
    }

    /// Whether the format writes updates and deletes (a changelog format).
    pub fn writes_changes(&self) -> bool {
        matches!(self, LineEncoder::Changelog(_))
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
        Some(f) if changelog::Flavor::of_format(f).is_some() => Ok(LineEncoder::Changelog(
            changelog::ChangelogFormat::from_options(f, &map).map_err(ConnectorError)?,
        )),
        Some("raw") => Err(ConnectorError(
            "format 'raw' is read and written by the kafka and upsert-kafka connectors only".into(),
        )),
        Some(other) => Err(ConnectorError(format!(
            "format '{other}' is not supported (supported: {SUPPORTED})"
        ))),
        None => Err(ConnectorError("option 'format' is required".into())),
    }
}

/// What [`decode_lines`] needs of a format's decoder.
pub(crate) trait LineFormat {
    fn push_line(&mut self, line: &str, line_number: u64) -> Result<(), csv::FormatError>;
    fn buffered_bytes(&self) -> usize;
}

/// The lines of `text` through a format's `push_line`, as [`LineDecoder::decode`] takes them:
/// one loop for both formats, the format's own line code called directly.
pub(crate) fn decode_lines(
    decoder: &mut impl LineFormat,
    text: &str,
    first_line: u64,
    limit: BatchLimit,
) -> Result<Decoded, csv::FormatError> {
    let bytes = text.as_bytes();
    let mut room = limit.bytes.saturating_sub(decoder.buffered_bytes());
    let mut at = 0;
    let mut lines = 0;
    while at < bytes.len() && lines < limit.lines {
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |p| at + p);
        // A column's text never holds more than the lines it came from.
        if (limit.started || lines > 0) && end - at > room {
            break;
        }
        room -= (end - at).min(room);
        // `\n` is ASCII, so `at` and `end` are character boundaries.
        decoder.push_line(&text[at..end], first_line + lines as u64)?;
        at = (end + 1).min(bytes.len());
        lines += 1;
    }
    Ok(Decoded { bytes: at, lines })
}

/// Both formats' decoders have the same inherent methods; this adapts them to the trait.
macro_rules! line_decoder {
    ($decoder:ty) => {
        impl LineFormat for $decoder {
            fn push_line(&mut self, line: &str, line_number: u64) -> Result<(), csv::FormatError> {
                <$decoder>::push_line(self, line, line_number)
            }
            fn buffered_bytes(&self) -> usize {
                <$decoder>::buffered_bytes(self)
            }
        }

        impl LineDecoder for $decoder {
            fn decode(
                &mut self,
                text: &str,
                first_line: u64,
                limit: BatchLimit,
            ) -> Result<Decoded, String> {
                self.push_lines(text, first_line, limit)
                    .map_err(|e| e.to_string())
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
            fn buffered_rows(&self) -> usize {
                <$decoder>::buffered_rows(self)
            }
            fn open_record_line(&self) -> Option<u64> {
                <$decoder>::open_record_line(self)
            }
        }
    };
}

line_decoder!(csv::CsvDecoder);
line_decoder!(json::JsonDecoder);
line_decoder!(changelog::ChangelogDecoder);

#[cfg(test)]
mod tests {
    use super::ColumnText;
    use arrow_array::Array;

    #[test]
    fn column_text_past_its_limit_is_an_error_not_a_cut() {
        let mut text = ColumnText::with_limit(8);
        text.push(Some("abcd"));
        text.push(None);
        text.push(Some("efgh"));
        let a = text.take().unwrap();
        assert_eq!((a.len(), a.value(2), a.null_count()), (3, "efgh", 1));
        let mut text = ColumnText::with_limit(8);
        text.push(Some("abcd"));
        text.push(Some("efghi"));
        let e = text.take().unwrap_err();
        assert!(e.contains("9 bytes"), "{e}");
        // The column is usable again after the error.
        text.push(Some("x"));
        assert_eq!(text.take().unwrap().value(0), "x");
    }
}
