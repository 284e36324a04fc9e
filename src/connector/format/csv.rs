//! Flink's `csv` format: text lines ↔ Arrow batches.
//!
//! Options as Flink names them (`csv.field-delimiter`, `csv.quote-character`, ...). Decoding is
//! column-wise: each line is split into per-column text buffers, and a batch is parsed one
//! column at a time by [`parse_column_as`]. Semantics follow Flink's CSV converters: extra
//! fields are ignored, missing fields are an error; a value that does not parse is an error
//! naming the line and column. With `csv.ignore-parse-errors`, as in Flink, an unparsable value
//! becomes NULL, missing fields are NULL, and a line that is not CSV at all (an unterminated
//! quote) is skipped and counted.

use std::collections::HashMap;
use std::fmt;
use std::fmt::Write;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, BooleanArray, ListArray, RecordBatch, StringArray, StructArray,
};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType as ArrowType;

use super::{ColumnText, TextColumn};
use crate::connector::{BatchLimit, Decoded};
use crate::types::cell_writer::{CellWriter, push_integer};
use crate::types::chunk::batch_with_rows;
use crate::types::text::{
    TemporalText, TextDialect, base64_decode, base64_encode, parse_column_as,
    write_decimal_normalized, write_java_double, write_java_float,
};
use crate::types::time::{SessionZone, write_date};
use crate::types::time::{write_iso_timestamp, write_time_trimmed};
use crate::types::{DataType, NANOS_PER_DAY, Schema, TypeKind};

/// A row that cannot be decoded: the line, the column when known, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub line: u64,
    pub column: Option<String>,
    pub message: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.column {
            Some(c) => write!(f, "line {}, column '{}': {}", self.line, c, self.message),
            None => write!(f, "line {}: {}", self.line, self.message),
        }
    }
}

impl std::error::Error for FormatError {}

/// The `csv` format's options.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvFormat {
    pub field_delimiter: char,
    /// `None` when `csv.disable-quote-character` is set.
    pub quote_character: Option<char>,
    pub allow_comments: bool,
    pub ignore_parse_errors: bool,
    pub array_element_delimiter: String,
    pub escape_character: Option<char>,
    pub null_literal: Option<String>,
    pub write_bigdecimal_in_scientific_notation: bool,
}

impl Default for CsvFormat {
    fn default() -> Self {
        CsvFormat {
            field_delimiter: ',',
            quote_character: Some('"'),
            allow_comments: false,
            ignore_parse_errors: false,
            array_element_delimiter: ";".into(),
            escape_character: None,
            null_literal: None,
            write_bigdecimal_in_scientific_notation: true,
        }
    }
}

/// `true`/`false` in any case, else an error naming the option.
pub(crate) fn bool_option(
    options: &HashMap<String, String>,
    key: &str,
    default: bool,
) -> Result<bool, String> {
    match options.get(key) {
        None => Ok(default),
        Some(v) if v.trim().eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.trim().eq_ignore_ascii_case("false") => Ok(false),
        Some(v) => Err(format!(
            "invalid value for option '{key}': expected 'true' or 'false' but was '{v}'"
        )),
    }
}

/// Java's escapes in a delimiter option (`\t`, `\n`, `\\`, `\u0001`), as Flink unescapes them.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('b') => out.push('\x08'),
            Some('0') => out.push('\0'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(c) if hex.len() == 4 => out.push(c),
                    _ => {
                        out.push_str("\\u");
                        out.push_str(&hex);
                    }
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn char_option(options: &HashMap<String, String>, key: &str) -> Result<Option<char>, String> {
    let Some(v) = options.get(key) else {
        return Ok(None);
    };
    let u = unescape(v);
    let mut chars = u.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Ok(Some(c)),
        _ => Err(format!(
            "option '{key}' must be a single character, but was '{v}'"
        )),
    }
}

impl CsvFormat {
    /// Reads the `csv.*` options of a table; other keys are ignored.
    pub fn from_options(options: &HashMap<String, String>) -> Result<Self, String> {
        let mut f = CsvFormat::default();
        if let Some(c) = char_option(options, "csv.field-delimiter")? {
            f.field_delimiter = c;
        }
        let disable_quote = bool_option(options, "csv.disable-quote-character", false)?;
        let quote = char_option(options, "csv.quote-character")?;
        if disable_quote && quote.is_some() {
            return Err("format cannot define a quote character ('csv.quote-character') and \
                        disable the quote character ('csv.disable-quote-character') at the same time"
                .into());
        }
        f.quote_character = if disable_quote {
            None
        } else {
            quote.or(Some('"'))
        };
        f.allow_comments = bool_option(options, "csv.allow-comments", false)?;
        f.ignore_parse_errors = bool_option(options, "csv.ignore-parse-errors", false)?;
        if let Some(d) = options.get("csv.array-element-delimiter") {
            if d.is_empty() {
                return Err("option 'csv.array-element-delimiter' must not be empty".into());
            }
            f.array_element_delimiter = unescape(d);
        }
        f.escape_character = char_option(options, "csv.escape-character")?;
        f.null_literal = options.get("csv.null-literal").cloned();
        f.write_bigdecimal_in_scientific_notation =
            bool_option(options, "csv.write-bigdecimal-in-scientific-notation", true)?;
        if Some(f.field_delimiter) == f.quote_character
            || Some(f.field_delimiter) == f.escape_character
        {
            return Err(format!(
                "option 'csv.field-delimiter' ('{}') must differ from the quote and escape characters",
                f.field_delimiter.escape_default()
            ));
        }
        if matches!(f.field_delimiter, '\n' | '\r') {
            return Err("option 'csv.field-delimiter' must not be a line break".into());
        }
        Ok(f)
    }

    /// Checks that every column can be written as CSV (MAP columns cannot).
    pub fn check_schema(&self, schema: &Schema) -> Result<(), String> {
        for field in &schema.fields {
            check_csv_type(&field.data_type, &field.name)?;
        }
        Ok(())
    }

    /// A decoder for rows of `schema`. MAP columns are not supported by the CSV format.
    pub fn decoder(&self, schema: &Schema, zone: &SessionZone) -> Result<CsvDecoder, String> {
        self.check_schema(schema)?;
        Ok(CsvDecoder {
            format: self.clone(),
            schema: schema.clone(),
            zone: zone.clone(),
            columns: schema
                .fields
                .iter()
                .map(|f| TextColumn::new(&f.data_type, TextDialect::Format(TemporalText::Csv)))
                .collect(),
            lines: Vec::new(),
            pending: None,
            skipped: 0,
            fields: Vec::new(),
            field: String::new(),
            block_delimiters: (self.field_delimiter.is_ascii()
                && self.quote_character.is_some_and(|q| q.is_ascii())
                && self.escape_character.is_none()
                && !self.allow_comments)
                .then_some(self.field_delimiter as u8),
        })
    }

    /// Appends a batch as CSV lines, each ended by `\n`, as Flink's CSV serializer writes
    /// them: booleans `true`/`false`, FLOAT/DOUBLE as Java prints them, TIMESTAMP as
    /// `yyyy-MM-dd HH:mm:ss[.fff]` (trailing zeros dropped), TIMESTAMP_LTZ in UTC with `Z`,
    /// BYTES as base64, arrays joined by the element delimiter, NULL as the null literal
    /// (empty by default). Text is quoted as Jackson does.
    pub fn encode_batch(&self, batch: &RecordBatch, schema: &Schema, out: &mut Vec<u8>) {
        let mut cell = String::new();
        let mut delim = [0u8; 4];
        let delim = self.field_delimiter.encode_utf8(&mut delim).as_bytes();
        let null_literal = self.null_literal.as_deref().unwrap_or_default().as_bytes();
        let columns: Vec<_> = schema
            .fields
            .iter()
            .zip(batch.columns())
            .map(|(f, c)| (f, c, c.nulls(), CellWriter::new(c.as_ref(), &f.data_type)))
            .collect();
        for row in 0..batch.num_rows() {
            for (j, (field, col, nulls, writer)) in columns.iter().enumerate() {
                if j > 0 {
                    out.extend_from_slice(delim);
                }
                // The null buffer taken once per batch: `is_null` asks the array for it.
                if nulls.is_some_and(|n| n.is_null(row)) {
                    out.extend_from_slice(null_literal);
                    continue;
                }
                match writer {
                    CellWriter::Int32(a) => push_integer(out, a.value(row).into()),
                    CellWriter::Int64(a) => push_integer(out, a.value(row)),
                    CellWriter::Float64(a) if a.value(row).is_finite() => {
                        write_java_double(out, a.value(row))
                    }
                    CellWriter::Text(a) => {
                        let s = a.value(row);
                        if self.needs_quotes(s) {
                            cell.clear();
                            self.push_quoted(&mut cell, s);
                            out.extend_from_slice(cell.as_bytes());
                        } else {
                            out.extend_from_slice(s.as_bytes());
                        }
                    }
                    _ => {
                        cell.clear();
                        let textual =
                            self.write_csv_value(&mut cell, col.as_ref(), row, &field.data_type);
                        if textual && self.needs_quotes(&cell) {
                            let quoted = std::mem::take(&mut cell);
                            self.push_quoted(&mut cell, &quoted);
                        }
                        out.extend_from_slice(cell.as_bytes());
                    }
                }
            }
            out.push(b'\n');
        }
    }

    /// Appends a value's CSV text; returns whether it is text (and may need quotes) rather
    /// than a number or boolean.
    fn write_csv_value(
        &self,
        out: &mut String,
        array: &dyn Array,
        row: usize,
        ty: &DataType,
    ) -> bool {
        if array.is_null(row) {
            // Only inside arrays and rows; Jackson writes an empty element.
            return false;
        }
        macro_rules! prim {
            ($t:ty) => {
                match array.as_primitive_opt::<$t>() {
                    Some(a) => a.value(row),
                    None => return false,
                }
            };
        }
        match &ty.kind {
            TypeKind::Null => false,
            TypeKind::Boolean => {
                let v = array.as_boolean_opt().is_some_and(|a| a.value(row));
                out.push_str(if v { "true" } else { "false" });
                false
            }
            TypeKind::TinyInt => {
                let _ = write!(out, "{}", prim!(Int8Type));
                false
            }
            TypeKind::SmallInt => {
                let _ = write!(out, "{}", prim!(Int16Type));
                false
            }
            TypeKind::Int => {
                let _ = write!(out, "{}", prim!(Int32Type));
                false
            }
            TypeKind::BigInt => {
                let _ = write!(out, "{}", prim!(Int64Type));
                false
            }
            TypeKind::Float => {
                let v = prim!(Float32Type);
                write_java_float(out, v);
                !v.is_finite()
            }
            TypeKind::Double => {
                let v = prim!(Float64Type);
                write_java_double(out, v);
                !v.is_finite()
            }
            TypeKind::Decimal { scale, .. } => {
                let v = prim!(Decimal128Type);
                write_decimal_normalized(
                    out,
                    v,
                    *scale,
                    self.write_bigdecimal_in_scientific_notation,
                );
                false
            }
            TypeKind::Char(_) | TypeKind::VarChar(_) => {
                if let Some(a) = array.as_string_opt::<i32>() {
                    out.push_str(a.value(row));
                }
                true
            }
            TypeKind::Binary(_) | TypeKind::VarBinary(_) => {
                if let Some(a) = array.as_binary_opt::<i32>() {
                    out.push_str(&base64_encode(a.value(row)));
                }
                true
            }
            TypeKind::Date => {
                write_date(out, prim!(Date32Type) as i64);
                true
            }
            TypeKind::Time(_) => {
                write_time_trimmed(out, prim!(Time64NanosecondType).rem_euclid(NANOS_PER_DAY));
                true
            }
            TypeKind::Timestamp(_) => {
                write_iso_timestamp(out, prim!(TimestampNanosecondType), ' ');
                true
            }
            TypeKind::TimestampLtz(_) => {
                write_iso_timestamp(out, prim!(TimestampNanosecondType), ' ');
                out.push('Z');
                true
            }
            TypeKind::IntervalYearMonth => {
                let _ = write!(out, "{}", prim!(IntervalYearMonthType));
                false
            }
            TypeKind::IntervalDayTime => {
                let _ = write!(out, "{}", prim!(DurationMillisecondType));
                false
            }
            TypeKind::Array(element) => {
                let Some(list) = array.as_list_opt::<i32>() else {
                    return true;
                };
                let offsets = list.value_offsets();
                let values = list.values();
                for (n, i) in (offsets[row] as usize..offsets[row + 1] as usize).enumerate() {
                    if n > 0 {
                        out.push_str(&self.array_element_delimiter);
                    }
                    self.write_csv_value(out, values.as_ref(), i, element);
                }
                true
            }
            TypeKind::Row(fields) => {
                let Some(st) = array.as_struct_opt() else {
                    return true;
                };
                for (j, (_, fty)) in fields.iter().enumerate() {
                    if j > 0 {
                        out.push_str(&self.array_element_delimiter);
                    }
                    if let Some(c) = st.columns().get(j) {
                        self.write_csv_value(out, c.as_ref(), row, fty);
                    }
                }
                true
            }
            TypeKind::Map(..) => {
                let mut s = String::new();
                crate::types::text::write_cell(
                    &mut s,
                    array,
                    row,
                    ty,
                    &SessionZone::utc(),
                    crate::types::text::TextStyle::Cast,
                );
                out.push_str(&s);
                true
            }
        }
    }

    /// Jackson's loose check: quote text longer than 24 characters, or holding a character
    /// below the highest of the delimiter, quote, escape and line feed, or a quote, escape or
    /// backslash.
    fn needs_quotes(&self, s: &str) -> bool {
        let Some(quote) = self.quote_character else {
            return false;
        };
        let mut min_safe = (self.field_delimiter as u32)
            .max(quote as u32)
            .max('\n' as u32);
        if let Some(e) = self.escape_character {
            min_safe = min_safe.max(e as u32);
        }
        let min_safe = min_safe + 1;
        // Up to 24 bytes are at most 24 characters; longer text is counted.
        if s.len() > 24 && s.chars().count() > 24 {
            return true;
        }
        let special = |c: u32| {
            c < min_safe
                || c == quote as u32
                || c == '\\' as u32
                || Some(c) == self.escape_character.map(|e| e as u32)
        };
        if s.is_ascii() {
            return s.bytes().any(|b| special(b as u32));
        }
        s.chars().any(|c| special(c as u32))
    }

    fn push_quoted(&self, line: &mut String, s: &str) {
        let Some(quote) = self.quote_character else {
            line.push_str(s);
            return;
        };
        line.push(quote);
        for c in s.chars() {
            if c == quote {
                line.push(self.escape_character.unwrap_or(quote));
            } else if Some(c) == self.escape_character {
                line.push(c);
            }
            line.push(c);
        }
        line.push(quote);
    }
}

fn check_csv_type(ty: &DataType, name: &str) -> Result<(), String> {
    match &ty.kind {
        TypeKind::Map(..) => Err(format!(
            "the csv format does not support the type {} of column '{name}'",
            ty.kind
        )),
        TypeKind::Array(e) => match &e.kind {
            TypeKind::Array(_) | TypeKind::Map(..) | TypeKind::Row(_) => Err(format!(
                "the csv format does not support the type {} of column '{name}'",
                ty.kind
            )),
            _ => Ok(()),
        },
        TypeKind::Row(fields) => {
            for (n, t) in fields {
                if !matches!(
                    t.kind,
                    TypeKind::Array(_) | TypeKind::Map(..) | TypeKind::Row(_)
                ) {
                    continue;
                }
                return Err(format!(
                    "the csv format does not support the type {} of field '{n}' in column '{name}'",
                    t.kind
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Where the splitting of a record stands when its line ends inside a quoted field: the
/// record continues on the next line, from this state. Kept instead of the record's text so
/// that a long multi-line record is scanned once, not once per line.
#[derive(Debug, Clone, Copy)]
struct OpenRecord {
    /// The line the record starts on (the row's line number).
    first_line: u64,
    /// Byte offset in `CsvDecoder::field` where the open field starts.
    field_start: usize,
    /// The line and the 1-based character position of the quote that opened the field.
    quote_line: u64,
    quote_position: usize,
    /// The line that left the record open ended with `\r\n`: Flink keeps the break as it
    /// was written inside a quoted field.
    crlf: bool,
}

/// Turns CSV lines into batches; see the module documentation for the error rules.
///
/// A quoted field may hold line breaks: such a record stays open across `push_line` calls and
/// across batches (`finish_batch` emits only complete records), and only the end of the input
/// ([`CsvDecoder::end_of_input`]) makes a still-open record an error.
#[derive(Debug)]
pub struct CsvDecoder {
    format: CsvFormat,
    schema: Schema,
    zone: SessionZone,
    columns: Vec<TextColumn>,
    /// Line number of each buffered row.
    lines: Vec<u64>,
    /// The record whose quoted field continues on the next line.
    pending: Option<OpenRecord>,
    skipped: u64,
    /// The fields of the current record: byte ranges into `field`.
    fields: Vec<(usize, usize)>,
    /// The unquoted text of the current record's fields, concatenated.
    field: String,
    /// The delimiter as a byte when the options allow [`CsvDecoder::push_lines`] its one
    /// pass over many lines (ASCII delimiter and quote, no escape character, no comments).
    block_delimiters: Option<u8>,
}

impl CsvDecoder {
    /// Rows dropped so far because they were not CSV (only with `csv.ignore-parse-errors`).
    /// The line a record still open across lines started on (a quoted field holding line
    /// breaks).
    pub fn open_record_line(&self) -> Option<u64> {
        self.pending.map(|open| open.first_line)
    }

    pub fn rows_skipped(&self) -> u64 {
        self.skipped
    }

    /// Rows buffered for the next batch.
    pub fn buffered_rows(&self) -> usize {
        self.lines.len()
    }

    /// Bytes of text buffered for the next batch in the largest column.
    pub fn buffered_bytes(&self) -> usize {
        self.columns
            .iter()
            .map(TextColumn::bytes)
            .max()
            .unwrap_or(0)
    }

    /// Adds the lines of `text`, as [`crate::connector::LineDecoder::decode`] describes.
    ///
    /// With the usual options (ASCII delimiter and quote, no escape character, no comments)
    /// one pass over the whole text finds the delimiters and line ends of records without
    /// quotes; a record with a quote goes through [`CsvDecoder::push_line`].
    pub fn push_lines(
        &mut self,
        text: &str,
        first_line: u64,
        limit: BatchLimit,
    ) -> Result<Decoded, FormatError> {
        let (Some(delim), Some(quote)) = (self.block_delimiters, self.format.quote_character)
        else {
            return super::decode_lines(self, text, first_line, limit);
        };
        let quote = quote as u8;
        let bytes = text.as_bytes();
        let mut room = limit.bytes.saturating_sub(self.buffered_bytes());
        let mut at = 0;
        let mut lines = 0;
        // One search over the whole text; the lines given to `push_line` skip their hits.
        let mut hits = memchr::memchr3_iter(delim, b'\n', quote, bytes);
        while at < bytes.len() && lines < limit.lines {
            let line_number = first_line + lines as u64;
            // Where the next line ends, and whether the record is quoted (or continues one).
            let mut end = None;
            let mut quoted = self.pending.is_some() || line_number == 1;
            if !quoted {
                self.fields.clear();
                let mut field_start = at;
                for i in hits.by_ref() {
                    if i < at {
                        continue;
                    }
                    if bytes[i] == delim {
                        self.fields.push((field_start, i));
                        field_start = i + 1;
                    } else {
                        quoted = bytes[i] == quote;
                        if !quoted {
                            self.fields.push((field_start, i));
                        }
                        end = Some(i);
                        break;
                    }
                }
                if end.is_none() {
                    self.fields.push((field_start, bytes.len()));
                }
            }
            let end = match end {
                Some(end) if !quoted => end,
                _ => memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |p| at + p),
            };
            // A column's text never holds more than the lines it came from.
            let len = end - at;
            if (limit.started || lines > 0) && len > room {
                break;
            }
            room -= len.min(room);
            if quoted {
                self.push_line(&text[at..end], line_number)?;
            } else {
                // The `\r` of a CRLF line end is the line's, not the last field's.
                if let Some(last) = self.fields.last_mut()
                    && last.1 > last.0
                    && bytes[last.1 - 1] == b'\r'
                {
                    last.1 -= 1;
                }
                self.add_record(line_number, Some(text))?;
            }
            at = (end + 1).min(bytes.len());
            lines += 1;
        }
        Ok(Decoded { bytes: at, lines })
    }

    /// Adds one line (without its `\n`; a `\r` before it is the rest of a CRLF break). A
    /// quoted field may continue on later lines.
    pub fn push_line(&mut self, line: &str, line_number: u64) -> Result<(), FormatError> {
        let crlf = line.ends_with('\r');
        let line = line.strip_suffix('\r').unwrap_or(line);
        // A byte-order mark opens the file, not the first field.
        let line = if line_number == 1 {
            line.strip_prefix('\u{feff}').unwrap_or(line)
        } else {
            line
        };
        let (state, continued) = match self.pending.take() {
            Some(open) => {
                // The line break belongs to the quoted field.
                self.field.push_str(if open.crlf { "\r\n" } else { "\n" });
                (open, true)
            }
            None => {
                // An empty line is a record of one empty field, as Flink (Jackson) reads it;
                // a comment may follow leading spaces.
                if self.format.allow_comments && line.trim_start_matches(' ').starts_with('#') {
                    return Ok(());
                }
                self.fields.clear();
                self.field.clear();
                if self.split_plain(line) {
                    return self.add_record(line_number, Some(line));
                }
                let fresh = OpenRecord {
                    first_line: line_number,
                    field_start: 0,
                    quote_line: line_number,
                    quote_position: 0,
                    crlf,
                };
                (fresh, false)
            }
        };
        match self.split(line, line_number, state, continued) {
            Some(open) => {
                self.pending = Some(OpenRecord { crlf, ..open });
                Ok(())
            }
            None => self.add_record(state.first_line, None),
        }
    }

    /// Splits a line without quote or escape characters into `self.fields` (ranges into the
    /// line itself, which needs no unquoting); returns false (and does nothing) when the line
    /// has one.
    fn split_plain(&mut self, record: &str) -> bool {
        let delim = self.format.field_delimiter;
        // The usual options, all ASCII: one pass over the bytes finds the delimiters and
        // gives up at a quote or escape.
        if delim.is_ascii()
            && self.format.quote_character.is_none_or(|q| q.is_ascii())
            && self.format.escape_character.is_none_or(|e| e.is_ascii())
        {
            let delim = delim as u8;
            let quote = self.format.quote_character.map(|q| q as u8);
            let escape = self.format.escape_character.map(|e| e as u8);
            let mut start = 0;
            for (i, &b) in record.as_bytes().iter().enumerate() {
                if b == delim {
                    self.fields.push((start, i));
                    start = i + 1;
                } else if Some(b) == quote || Some(b) == escape {
                    self.fields.clear();
                    return false;
                }
            }
            self.fields.push((start, record.len()));
            return true;
        }
        let plain = self
            .format
            .quote_character
            .is_none_or(|q| !record.contains(q))
            && self
                .format
                .escape_character
                .is_none_or(|e| !record.contains(e));
        if !plain {
            return false;
        }
        let mut start = 0;
        for (i, _) in record.match_indices(delim) {
            self.fields.push((start, i));
            start = i + delim.len_utf8();
        }
        self.fields.push((start, record.len()));
        true
    }

    /// Continues splitting the current record with `line`, appending unquoted text to
    /// `self.field` and field ranges to `self.fields`. `in_quotes` says whether the line
    /// starts inside the quoted field of `state`. Returns the state to continue from when the
    /// line ends inside a quoted field, `None` when the record is complete.
    fn split(
        &mut self,
        line: &str,
        line_number: u64,
        mut state: OpenRecord,
        mut in_quotes: bool,
    ) -> Option<OpenRecord> {
        let delim = self.format.field_delimiter;
        let quote = self.format.quote_character;
        let escape = self.format.escape_character;
        let mut at_field_start = !in_quotes;
        let mut chars = line.chars().enumerate().peekable();
        while let Some((position, c)) = chars.next() {
            if in_quotes {
                if Some(c) == escape {
                    // An escape at the end of the line escapes the line break, which the next
                    // line adds.
                    if let Some((_, n)) = chars.next() {
                        self.field.push(n);
                    }
                } else if Some(c) == quote {
                    if chars.peek().map(|&(_, n)| n) == quote {
                        chars.next();
                        self.field.push(c);
                    } else {
                        in_quotes = false;
                    }
                } else {
                    self.field.push(c);
                }
            } else if c == delim {
                self.fields.push((state.field_start, self.field.len()));
                state.field_start = self.field.len();
                at_field_start = true;
                continue;
            } else if Some(c) == quote && at_field_start {
                in_quotes = true;
                state.quote_line = line_number;
                state.quote_position = position + 1;
            } else if Some(c) == escape {
                if let Some((_, n)) = chars.next() {
                    self.field.push(n);
                }
            } else {
                self.field.push(c);
            }
            at_field_start = false;
        }
        if in_quotes {
            return Some(state);
        }
        self.fields.push((state.field_start, self.field.len()));
        None
    }

    /// Adds the split record as a row; its field ranges index `plain` (a line split by
    /// `split_plain`) or else `self.field`.
    fn add_record(&mut self, line_number: u64, plain: Option<&str>) -> Result<(), FormatError> {
        let source: &str = plain.unwrap_or(&self.field);
        let expected = self.schema.len();
        if self.fields.len() > expected {
            // Flink fails the row (or skips it when ignoring parse errors), never cuts it.
            if self.format.ignore_parse_errors {
                self.skipped += 1;
                return Ok(());
            }
            let &(a, b) = &self.fields[expected];
            let extra = source.get(a..b).unwrap_or("");
            return Err(FormatError {
                line: line_number,
                column: None,
                message: format!(
                    "Too many entries: expected at most {expected} (value #{expected} ({} chars) \"{extra}\")",
                    extra.chars().count()
                ),
            });
        }
        if self.fields.len() < expected && !self.format.ignore_parse_errors {
            return Err(FormatError {
                line: line_number,
                column: None,
                message: format!(
                    "row length mismatch: {expected} fields expected but was {}",
                    self.fields.len()
                ),
            });
        }
        for (j, col) in self.columns.iter_mut().enumerate() {
            match self.fields.get(j) {
                None => col.push(None),
                Some(&(a, b)) => {
                    let text = source.get(a..b).unwrap_or("");
                    if self.format.null_literal.as_deref() == Some(text) {
                        col.push(None);
                    } else {
                        col.push(Some(text));
                    }
                }
            }
        }
        self.lines.push(line_number);
        Ok(())
    }

    /// The input has ended: a record still inside a quoted field is an error naming where
    /// the quote opened (or, when ignoring parse errors, is skipped and counted).
    pub fn end_of_input(&mut self) -> Result<(), FormatError> {
        let Some(open) = self.pending.take() else {
            return Ok(());
        };
        if self.format.ignore_parse_errors {
            self.skipped += 1;
            return Ok(());
        }
        let column = self.fields.len();
        Err(FormatError {
            line: open.quote_line,
            column: Some(
                self.schema
                    .fields
                    .get(column)
                    .map_or_else(|| format!("#{}", column + 1), |f| f.name.clone()),
            ),
            // Flink's (Jackson's) words, then where the field opened.
            message: format!(
                "Missing closing quote for value: the quote at character {} is not closed before the end of the input",
                open.quote_position
            ),
        })
    }

    /// Parses the buffered complete rows into a batch of the schema (possibly empty); a
    /// record still open in a quoted field stays for the next batch.
    pub fn finish_batch(&mut self) -> Result<RecordBatch, FormatError> {
        let lines = {
            let capacity = self.lines.len();
            std::mem::replace(&mut self.lines, Vec::with_capacity(capacity))
        };
        // The columns go back for the next batch, keeping their buffers' capacity.
        let mut columns = std::mem::take(&mut self.columns);
        let arrays = self.convert_columns(&mut columns, &lines);
        self.columns = columns;
        let arrays = match arrays {
            Ok(arrays) => arrays,
            Err(e) => {
                self.clear();
                return Err(e);
            }
        };
        let (batch, dropped) = build_batch(
            &self.schema,
            arrays,
            &lines,
            self.format.ignore_parse_errors,
        )?;
        self.skipped += dropped;
        Ok(batch)
    }

    /// Each column's rows as an array of its type, leaving the column empty; the first error.
    fn convert_columns(
        &self,
        columns: &mut [TextColumn],
        lines: &[u64],
    ) -> Result<Vec<ArrayRef>, FormatError> {
        let mut arrays = Vec::with_capacity(columns.len());
        for (column, field) in columns.iter_mut().zip(&self.schema.fields) {
            let (array, errors) = column
                .finish(|text| self.parse_field(text, &field.data_type))
                .map_err(|message| FormatError {
                    line: lines.first().copied().unwrap_or(0),
                    column: Some(field.name.clone()),
                    message,
                })?;
            if let Some((row, message)) = errors.into_iter().next()
                && !self.format.ignore_parse_errors
            {
                return Err(FormatError {
                    line: lines.get(row).copied().unwrap_or(0),
                    column: Some(field.name.clone()),
                    message,
                });
            }
            arrays.push(array);
        }
        Ok(arrays)
    }

    fn clear(&mut self) {
        for c in &mut self.columns {
            c.clear();
        }
        self.lines.clear();
    }

    fn parse_field(&self, text: &StringArray, ty: &DataType) -> (ArrayRef, Vec<(usize, String)>) {
        match &ty.kind {
            TypeKind::Array(element) => {
                // Split every cell on the element delimiter, parse all elements at once.
                let delim = self.format.array_element_delimiter.as_str();
                let mut elements = ColumnText::default();
                let mut offsets: Vec<i32> = vec![0];
                let mut count: i32 = 0;
                for s in text.iter() {
                    if let Some(s) = s
                        && !s.is_empty()
                    {
                        for e in s.split(delim) {
                            let null = self.format.null_literal.as_deref() == Some(e);
                            elements.push(if null { None } else { Some(e) });
                            count = count.saturating_add(1);
                        }
                    }
                    offsets.push(count);
                }
                // The elements are shorter than the cells they come from, which fit.
                let element_text = match elements.take() {
                    Ok(t) => t,
                    Err(e) => {
                        return (
                            arrow_array::new_null_array(&ty.to_arrow(), text.len()),
                            vec![(0, e)],
                        );
                    }
                };
                let (values, element_errors) = self.parse_field(&element_text, element);
                let mut errors = Vec::new();
                if let Some((i, msg)) = element_errors.into_iter().next() {
                    // Map the element back to its row.
                    let row = offsets
                        .partition_point(|&o| o as usize <= i)
                        .saturating_sub(1);
                    errors.push((row, msg));
                }
                let field = Arc::new(element.to_arrow_field("element"));
                let nulls = text.nulls().cloned();
                match ListArray::try_new(
                    field,
                    OffsetBuffer::new(ScalarBuffer::from(offsets)),
                    values,
                    nulls,
                ) {
                    Ok(list) => (Arc::new(list), errors),
                    Err(e) => (
                        arrow_array::new_null_array(&ty.to_arrow(), text.len()),
                        vec![(0, format!("cannot build array column: {e}"))],
                    ),
                }
            }
            TypeKind::Row(fields) => {
                let delim = self.format.array_element_delimiter.as_str();
                let mut parts: Vec<ColumnText> =
                    fields.iter().map(|_| ColumnText::default()).collect();
                for s in text.iter() {
                    let mut it = s.map(|s| s.split(delim));
                    for p in parts.iter_mut() {
                        let v = it.as_mut().and_then(|i| i.next());
                        let null =
                            v.is_some_and(|v| self.format.null_literal.as_deref() == Some(v));
                        p.push(if null { None } else { v });
                    }
                }
                let mut arrays = Vec::new();
                let mut errors = Vec::new();
                for (p, (_, fty)) in parts.iter_mut().zip(fields) {
                    let part = match p.take() {
                        Ok(t) => t,
                        Err(e) => {
                            return (
                                arrow_array::new_null_array(&ty.to_arrow(), text.len()),
                                vec![(0, e)],
                            );
                        }
                    };
                    let (a, e) = self.parse_field(&part, fty);
                    errors.extend(e.into_iter().take(1));
                    arrays.push(a);
                }
                let ArrowType::Struct(arrow_fields) = ty.to_arrow() else {
                    return (
                        arrow_array::new_null_array(&ty.to_arrow(), text.len()),
                        errors,
                    );
                };
                match StructArray::try_new(arrow_fields, arrays, text.nulls().cloned()) {
                    Ok(st) => (Arc::new(st), errors),
                    Err(e) => (
                        arrow_array::new_null_array(&ty.to_arrow(), text.len()),
                        vec![(0, format!("cannot build row column: {e}"))],
                    ),
                }
            }
            // BYTES are base64 text, as the CSV sink writes them.
            TypeKind::Binary(_) | TypeKind::VarBinary(_) => {
                let mut errors = Vec::new();
                let values: arrow_array::BinaryArray = text
                    .iter()
                    .enumerate()
                    .map(|(i, s)| {
                        let decoded = base64_decode(s?);
                        if decoded.is_none() {
                            errors.push((i, format!("cannot decode '{}' as base64", s?)));
                        }
                        decoded
                    })
                    .collect();
                (Arc::new(values), errors)
            }
            _ => parse_column_as(text, ty, &self.zone, TextDialect::Format(TemporalText::Csv)),
        }
    }
}

/// Assembles a batch; NULLs in NOT NULL columns are an error, or (when ignoring parse errors)
/// drop their rows. Returns the batch and the number of rows dropped.
pub(crate) fn build_batch(
    schema: &Schema,
    mut arrays: Vec<ArrayRef>,
    lines: &[u64],
    ignore_errors: bool,
) -> Result<(RecordBatch, u64), FormatError> {
    let rows = lines.len();
    let mut keep: Option<Vec<bool>> = None;
    for (j, field) in schema.fields.iter().enumerate() {
        if field.data_type.nullable {
            continue;
        }
        let Some(a) = arrays.get(j) else { continue };
        if a.null_count() == 0 {
            continue;
        }
        if !ignore_errors {
            let row = (0..a.len()).find(|&i| a.is_null(i)).unwrap_or(0);
            return Err(FormatError {
                line: lines.get(row).copied().unwrap_or(0),
                column: Some(field.name.clone()),
                message: "null value in a NOT NULL column".into(),
            });
        }
        let k = keep.get_or_insert_with(|| vec![true; rows]);
        for (i, slot) in k.iter_mut().enumerate() {
            if a.is_null(i) {
                *slot = false;
            }
        }
    }
    let mut dropped = 0;
    if let Some(k) = keep {
        dropped = k.iter().filter(|&&b| !b).count() as u64;
        let mask = BooleanArray::from(k);
        for a in arrays.iter_mut() {
            *a = arrow_select::filter::filter(a.as_ref(), &mask).map_err(|e| FormatError {
                line: lines.first().copied().unwrap_or(0),
                column: None,
                message: format!("cannot filter rows: {e}"),
            })?;
        }
    }
    let arrow_schema = schema.to_arrow();
    batch_with_rows(arrow_schema, arrays, rows - dropped as usize)
        .map(|b| (b, dropped))
        .map_err(|e| FormatError {
            line: lines.first().copied().unwrap_or(0),
            column: None,
            message: format!("cannot build batch: {e}"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::text::format_value;
    use crate::types::{Field, MAX_LENGTH};

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("id", DataType::nullable(TypeKind::Int)),
            Field::new("name", DataType::string()),
            Field::new(
                "price",
                DataType::nullable(TypeKind::Decimal {
                    precision: 10,
                    scale: 2,
                }),
            ),
        ])
    }

    fn opts(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn cell(batch: &RecordBatch, col: usize, row: usize, schema: &Schema) -> Option<String> {
        format_value(
            batch.column(col),
            row,
            &schema.fields[col].data_type,
            &SessionZone::utc(),
        )
    }

    #[test]
    fn options() {
        let f =
            CsvFormat::from_options(&opts(&[("csv.field-delimiter", "\\t"), ("format", "csv")]))
                .unwrap();
        assert_eq!(f.field_delimiter, '\t');
        let f = CsvFormat::from_options(&opts(&[("csv.field-delimiter", "\t")])).unwrap();
        assert_eq!(f.field_delimiter, '\t');
        let e = CsvFormat::from_options(&opts(&[("csv.field-delimiter", ";;")])).unwrap_err();
        assert!(e.contains("csv.field-delimiter"), "{e}");
        let e = CsvFormat::from_options(&opts(&[("csv.allow-comments", "yes")])).unwrap_err();
        assert!(e.contains("csv.allow-comments"), "{e}");
        // Flink's csv factory ignores keys of its prefix it does not know.
        assert!(CsvFormat::from_options(&opts(&[("csv.bogus", "1")])).is_ok());
        let e = CsvFormat::from_options(&opts(&[
            ("csv.disable-quote-character", "true"),
            ("csv.quote-character", "'"),
        ]))
        .unwrap_err();
        assert!(e.contains("quote"), "{e}");
        let f = CsvFormat::from_options(&opts(&[("csv.disable-quote-character", "true")])).unwrap();
        assert_eq!(f.quote_character, None);
    }

    #[test]
    fn decodes_quotes_nulls_and_comments() {
        let s = schema();
        let f = CsvFormat::from_options(&opts(&[
            ("csv.null-literal", "NULL"),
            ("csv.allow-comments", "true"),
        ]))
        .unwrap();
        let mut d = f.decoder(&s, &SessionZone::utc()).unwrap();
        d.push_line("# comment", 1).unwrap();
        d.push_line("1,plain,1.5", 2).unwrap();
        d.push_line("2,\"with, comma\",NULL", 3).unwrap();
        d.push_line("3,\"say \"\"hi\"\"\",  2.005 \r", 4).unwrap();
        d.push_line("4,\"multi", 5).unwrap();
        d.push_line("line\",0", 6).unwrap();
        d.push_line("  # a comment after spaces", 7).unwrap();
        d.push_line("NULL,,-1", 8).unwrap();
        let b = d.finish_batch().unwrap();
        assert_eq!(b.num_rows(), 5);
        let col = |c, r| cell(&b, c, r, &s);
        assert_eq!(col(1, 1).as_deref(), Some("with, comma"));
        assert_eq!(col(2, 1), None);
        assert_eq!(col(1, 2).as_deref(), Some("say \"hi\""));
        assert_eq!(col(2, 2).as_deref(), Some("2.01"));
        assert_eq!(col(1, 3).as_deref(), Some("multi\nline"));
        assert_eq!(col(0, 4), None);
        assert_eq!(col(1, 4).as_deref(), Some(""));
        assert_eq!(col(2, 0).as_deref(), Some("1.50"));
    }

    #[test]
    fn dates_and_times_take_flinks_csv_forms_only() {
        let s = Schema::new(vec![
            Field::new("d", DataType::nullable(TypeKind::Date)),
            Field::new("t", DataType::nullable(TypeKind::Time(3))),
            Field::new("ts", DataType::nullable(TypeKind::Timestamp(3))),
            Field::new("ltz", DataType::nullable(TypeKind::TimestampLtz(3))),
        ]);
        let f = CsvFormat::from_options(&opts(&[("csv.ignore-parse-errors", "true")])).unwrap();
        let mut d = f.decoder(&s, &SessionZone::utc()).unwrap();
        d.push_line(
            "2021-1-2,01:02,2021-01-02 03:04:05.1234567,2021-01-02 03:04:05Z",
            1,
        )
        .unwrap();
        d.push_line(
            "2021-01-02 ,1:2:3,2021-01-02T03:04:05,2021-01-02 03:04:05",
            2,
        )
        .unwrap();
        d.push_line("21-01-02,01:02:03.5,2021-01-02,2021-01-02T03:04:05Z", 3)
            .unwrap();
        let b = d.finish_batch().unwrap();
        let cells: Vec<Vec<Option<String>>> = (0..3)
            .map(|r| (0..4).map(|c| cell(&b, c, r, &s)).collect())
            .collect();
        let some = |v: &str| Some(v.to_string());
        assert_eq!(
            cells[0],
            [
                some("2021-01-02"),
                some("01:02:00.0"),
                some("2021-01-02 03:04:05.123"),
                some("2021-01-02 03:04:05.000")
            ]
        );
        assert_eq!(cells[1], [None, None, None, None]);
        assert_eq!(cells[2], [None, some("01:02:03.5"), None, None]);
    }

    #[test]
    fn rows_of_the_wrong_length_fail_or_are_skipped() {
        let s = schema();
        let mut d = CsvFormat::default()
            .decoder(&s, &SessionZone::utc())
            .unwrap();
        let e = d.push_line("1,a,1.5,extra", 1).unwrap_err();
        assert!(
            e.message
                .starts_with("Too many entries: expected at most 3"),
            "{e:?}"
        );
        // An empty line is one empty field: too few.
        assert!(d.push_line("", 2).is_err());
        let f = CsvFormat::from_options(&opts(&[("csv.ignore-parse-errors", "true")])).unwrap();
        let mut d = f.decoder(&s, &SessionZone::utc()).unwrap();
        d.push_line("\u{feff}1,a,1.5", 1).unwrap();
        d.push_line("2,b,2.5,extra", 2).unwrap();
        d.push_line("", 3).unwrap();
        let b = d.finish_batch().unwrap();
        assert_eq!((b.num_rows(), d.rows_skipped()), (2, 1));
        assert_eq!(cell(&b, 0, 0, &s).as_deref(), Some("1"));
        assert_eq!(cell(&b, 0, 1, &s), None);
    }

    #[test]
    fn errors_name_line_and_column() {
        let s = schema();
        let f = CsvFormat::default();
        let mut d = f.decoder(&s, &SessionZone::utc()).unwrap();
        d.push_line("1,a,1", 1).unwrap();
        d.push_line("x,b,2", 2).unwrap();
        let e = d.finish_batch().unwrap_err();
        assert_eq!(e.line, 2);
        assert_eq!(e.column.as_deref(), Some("id"));
        assert!(
            e.to_string()
                .starts_with("line 2, column 'id': cannot cast 'x' to INT"),
            "{e}"
        );
        let e = d.push_line("1,a", 3).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 3: row length mismatch: 3 fields expected but was 2"
        );
        // The decoder is usable after an error.
        d.push_line("5,e,5", 4).unwrap();
        assert_eq!(d.finish_batch().unwrap().num_rows(), 1);
        // A record open in a quoted field waits for its next line, across batches; only the
        // end of the input makes it an error, naming where the quote opened.
        d.push_line("6,\"open", 9).unwrap();
        assert_eq!(d.finish_batch().unwrap().num_rows(), 0);
        d.push_line("still open", 10).unwrap();
        let e = d.end_of_input().unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 9, column 'name': Missing closing quote for value: the quote at character 3 \
             is not closed before the end of the input"
        );
    }

    /// Decoded rows, every cell as text.
    type Rows = Vec<Vec<Option<String>>>;

    /// Splits `text` into lines as the filesystem source does (`\n` ends a line).
    fn decode_text(
        f: &CsvFormat,
        s: &Schema,
        text: &str,
        batch_lines: usize,
    ) -> Result<(Rows, u64), FormatError> {
        let mut d = f.decoder(s, &SessionZone::utc()).unwrap();
        let mut rows = Vec::new();
        let mut collect = |b: RecordBatch| {
            for r in 0..b.num_rows() {
                rows.push((0..s.len()).map(|c| cell(&b, c, r, s)).collect::<Vec<_>>());
            }
        };
        let mut lines = text.split_inclusive('\n').peekable();
        let mut n = 0;
        while lines.peek().is_some() {
            for line in lines.by_ref().take(batch_lines) {
                n += 1;
                d.push_line(line.strip_suffix('\n').unwrap_or(line), n)?;
            }
            collect(d.finish_batch()?);
        }
        d.end_of_input()?;
        collect(d.finish_batch()?);
        Ok((rows, d.rows_skipped()))
    }

    /// Decodes `text` through `push_lines`, at most `lines` lines a call, a batch a call.
    fn decode_block(
        f: &CsvFormat,
        s: &Schema,
        text: &str,
        lines: usize,
    ) -> Result<(Rows, u64), FormatError> {
        let mut d = f.decoder(s, &SessionZone::utc()).unwrap();
        let mut rows = Vec::new();
        let mut collect = |b: RecordBatch| {
            for r in 0..b.num_rows() {
                rows.push((0..s.len()).map(|c| cell(&b, c, r, s)).collect::<Vec<_>>());
            }
        };
        let (mut at, mut line) = (0, 1);
        while at < text.len() {
            let limit = BatchLimit {
                lines,
                bytes: usize::MAX,
                started: false,
            };
            let done = d.push_lines(&text[at..], line, limit)?;
            assert!(done.lines > 0);
            at += done.bytes;
            line += done.lines as u64;
            collect(d.finish_batch()?);
        }
        d.end_of_input()?;
        collect(d.finish_batch()?);
        Ok((rows, d.rows_skipped()))
    }

    #[test]
    fn many_lines_at_once_decode_as_one_at_a_time() {
        let s = schema();
        // A byte-order mark, CRLF and LF ends, a CR alone in a field, empty lines and fields,
        // quotes (opening a field, inside one, over lines), the null literal, too many and too
        // few fields, a value that does not parse, a last line without its newline.
        let text = "\u{feff}1,a,1.5\r\n2,\"b,\"\"c\"\"\",2\n\n3,x\"y,3\r\n4,\"multi\r\nline\",4\n\
                    5,,\r\n6,N,N\n7,a\rb,7\n8,a,8,extra\n9,a\nz,a,9\n10,\"\",\r\n11,last,11";
        let lenient = [
            ("csv.ignore-parse-errors", "true"),
            ("csv.null-literal", "N"),
        ];
        for f in [
            CsvFormat::from_options(&opts(&lenient)).unwrap(),
            CsvFormat::from_options(&opts(&lenient[..1])).unwrap(),
            CsvFormat::from_options(&opts(&[("csv.field-delimiter", ";")])).unwrap(),
        ] {
            for lines in 1..=text.matches('\n').count() + 1 {
                let by_line = decode_text(&f, &s, text, lines);
                let by_block = decode_block(&f, &s, text, lines);
                assert_eq!(by_block, by_line, "{lines} lines a call, {f:?}");
            }
        }
        let (rows, skipped) = decode_block(
            &CsvFormat::from_options(&opts(&lenient)).unwrap(),
            &s,
            text,
            64,
        )
        .unwrap();
        assert_eq!((rows.len(), skipped), (12, 1));
        assert_eq!(rows[0][1].as_deref(), Some("a"));
        assert_eq!(rows[1][1].as_deref(), Some("b,\"c\""));
        assert_eq!(rows[2], [None, None, None]);
        assert_eq!(rows[4][1].as_deref(), Some("multi\r\nline"));
        assert_eq!(
            (rows[5][1].as_deref(), rows[5][2].as_deref()),
            (Some(""), None)
        );
        assert_eq!((rows[6][1].as_deref(), rows[6][2].as_deref()), (None, None));
        assert_eq!(rows[7][1].as_deref(), Some("a\rb"));
        assert_eq!(rows[11][2].as_deref(), Some("11.00"));
        // Without ignoring, the first bad line is the error, with its number.
        let e = decode_block(&CsvFormat::default(), &s, text, 64).unwrap_err();
        assert_eq!(e.line, 3, "{e}");
    }

    #[test]
    fn quoted_line_breaks_carry_over_batch_boundaries() {
        let s = Schema::new(vec![
            Field::new("id", DataType::nullable(TypeKind::Int)),
            Field::new("s", DataType::string()),
        ]);
        // Records of one to four lines, a break at a field's first and last character, an
        // empty continuation line, CRLF breaks inside and after a field.
        let text =
            "1,\"a\nb\"\n2,plain\n3,\"\nx\n\n\"\n4,\"c\r\nd\"\r\n5,\"e\"\"\nf\"\"\"\n6,\"\"\n";
        let expected: Rows = [
            (1, "a\nb"),
            (2, "plain"),
            (3, "\nx\n\n"),
            (4, "c\r\nd"),
            (5, "e\"\nf\""),
            (6, ""),
        ]
        .iter()
        .map(|(i, v)| vec![Some(i.to_string()), Some(v.to_string())])
        .collect();
        let lines = text.matches('\n').count();
        // Every batch size puts the boundary at every position, including right after the line
        // whose break is inside the quotes.
        for batch_lines in 1..=lines + 1 {
            for f in [
                CsvFormat::default(),
                CsvFormat::from_options(&opts(&[("csv.ignore-parse-errors", "true")])).unwrap(),
            ] {
                let (rows, skipped) = decode_text(&f, &s, text, batch_lines).unwrap();
                assert_eq!(rows, expected, "batch of {batch_lines} lines");
                assert_eq!(skipped, 0);
            }
        }
    }

    #[test]
    fn input_ending_in_a_quoted_field_fails_or_is_skipped() {
        let s = Schema::new(vec![
            Field::new("id", DataType::nullable(TypeKind::Int)),
            Field::new("s", DataType::string()),
        ]);
        let text = "1,a\n2,x\n3,\"open\nmore\n";
        for batch_lines in 1..=4 {
            let e = decode_text(&CsvFormat::default(), &s, text, batch_lines).unwrap_err();
            assert_eq!((e.line, e.column.as_deref()), (3, Some("s")));
            assert!(e.message.contains("character 3"), "{e}");
            let lenient =
                CsvFormat::from_options(&opts(&[("csv.ignore-parse-errors", "true")])).unwrap();
            let (rows, skipped) = decode_text(&lenient, &s, text, batch_lines).unwrap();
            assert_eq!(rows.len(), 2, "{rows:?}");
            assert_eq!(skipped, 1);
        }
    }

    #[test]
    fn ignore_parse_errors_nulls_fields() {
        let s = Schema::new(vec![
            Field::new("id", DataType::not_null(TypeKind::Int)),
            Field::new("v", DataType::nullable(TypeKind::Double)),
        ]);
        let f = CsvFormat::from_options(&opts(&[("csv.ignore-parse-errors", "true")])).unwrap();
        let mut d = f.decoder(&s, &SessionZone::utc()).unwrap();
        d.push_line("1,abc", 1).unwrap();
        d.push_line("x,2.5", 2).unwrap();
        d.push_line("3", 3).unwrap();
        d.push_line("4,\"unterminated", 4).unwrap();
        d.end_of_input().unwrap();
        let b = d.finish_batch().unwrap();
        assert_eq!(b.num_rows(), 2);
        assert_eq!(cell(&b, 0, 0, &s).as_deref(), Some("1"));
        assert_eq!(cell(&b, 1, 0, &s), None);
        assert_eq!(cell(&b, 0, 1, &s).as_deref(), Some("3"));
        assert_eq!(d.rows_skipped(), 2);
    }

    #[test]
    fn arrays_and_types() {
        let s = Schema::new(vec![
            Field::new(
                "a",
                DataType::nullable(TypeKind::Array(Box::new(DataType::nullable(TypeKind::Int)))),
            ),
            Field::new("ts", DataType::nullable(TypeKind::Timestamp(3))),
            Field::new("ltz", DataType::nullable(TypeKind::TimestampLtz(3))),
            Field::new("b", DataType::nullable(TypeKind::Boolean)),
            Field::new("d", DataType::nullable(TypeKind::Date)),
            Field::new("bytes", DataType::nullable(TypeKind::VarBinary(MAX_LENGTH))),
        ]);
        let f = CsvFormat::default();
        let mut d = f
            .decoder(&s, &SessionZone::new("Asia/Shanghai").unwrap())
            .unwrap();
        d.push_line(
            "1;2;3,2021-01-01 00:00:00.5,2021-01-01 00:00:00Z,TRUE,2021-01-02,aGk=",
            1,
        )
        .unwrap();
        d.push_line(
            ",2021-01-01 01:02:03,2021-01-01 00:00:00Z,nope,2021-1-2,",
            2,
        )
        .unwrap();
        let b = d.finish_batch().unwrap();
        let z = SessionZone::new("Asia/Shanghai").unwrap();
        let cellz = |c: usize, r| format_value(b.column(c), r, &s.fields[c].data_type, &z);
        assert_eq!(cellz(0, 0).as_deref(), Some("[1, 2, 3]"));
        assert_eq!(cellz(0, 1).as_deref(), Some("[]"));
        assert_eq!(cellz(1, 0).as_deref(), Some("2021-01-01 00:00:00.500"));
        assert_eq!(cellz(1, 1).as_deref(), Some("2021-01-01 01:02:03.000"));
        assert_eq!(cellz(2, 0).as_deref(), Some("2021-01-01 08:00:00.000"));
        assert_eq!(cellz(3, 0).as_deref(), Some("TRUE"));
        assert_eq!(cellz(3, 1).as_deref(), Some("FALSE"));
        assert_eq!(cellz(4, 1).as_deref(), Some("2021-01-02"));
        assert_eq!(cellz(5, 0).as_deref(), Some("x'6869'"));

        let lines = encoded(&f, &b, &s);
        assert_eq!(
            lines[0],
            "1;2;3,\"2021-01-01 00:00:00.5\",\"2021-01-01 00:00:00Z\",true,2021-01-02,aGk="
        );
        let mut d = f.decoder(&s, &z).unwrap();
        d.push_line(&lines[0], 1).unwrap();
        let b2 = d.finish_batch().unwrap();
        assert_eq!(b2.column(1), &b.column(1).slice(0, 1));
        assert_eq!(b2.column(2), &b.column(2).slice(0, 1));
    }

    fn encoded(f: &CsvFormat, b: &RecordBatch, s: &Schema) -> Vec<String> {
        let mut out = Vec::new();
        f.encode_batch(b, s, &mut out);
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn encodes_like_flink() {
        let s = schema();
        let f = CsvFormat::from_options(&opts(&[("csv.null-literal", "NULL")])).unwrap();
        let mut d = f.decoder(&s, &SessionZone::utc()).unwrap();
        d.push_line("1,\"a,b\",1.5", 1).unwrap();
        d.push_line("NULL,\"q\"\"\",NULL", 2).unwrap();
        d.push_line("3,plain,0", 3).unwrap();
        let b = d.finish_batch().unwrap();
        let lines = encoded(&f, &b, &s);
        assert_eq!(
            lines,
            vec!["1,\"a,b\",1.5", "NULL,\"q\"\"\",NULL", "3,plain,0"]
        );
    }

    #[test]
    fn decodes_fast() {
        let s = schema();
        let f = CsvFormat::default();
        let mut d = f.decoder(&s, &SessionZone::utc()).unwrap();
        let lines: Vec<String> = (0..200_000)
            .map(|i| format!("{i},name{i},{}.25", i % 1000))
            .collect();
        let start = std::time::Instant::now();
        for (i, l) in lines.iter().enumerate() {
            d.push_line(l, i as u64 + 1).unwrap();
        }
        let b = d.finish_batch().unwrap();
        let elapsed = start.elapsed();
        assert_eq!(b.num_rows(), 200_000);
        eprintln!("csv decode: {:.2} M rows/s", 0.2 / elapsed.as_secs_f64());
    }

    proptest::proptest! {
        #[test]
        fn random_lines_never_panic(lines in proptest::collection::vec("\\PC{0,30}|[,\"#;\\\\ 0-9a-z.\\-:]{0,30}", 1..8),
                                    ignore in proptest::bool::ANY) {
            let s = Schema::new(vec![
                Field::new("i", DataType::not_null(TypeKind::Int)),
                Field::new("s", DataType::nullable(TypeKind::Char(3))),
                Field::new("a", DataType::nullable(TypeKind::Array(Box::new(DataType::nullable(TypeKind::Double))))),
                Field::new("t", DataType::nullable(TypeKind::TimestampLtz(3))),
                Field::new("r", DataType::nullable(TypeKind::Row(vec![("x".into(), DataType::nullable(TypeKind::Date))]))),
            ]);
            let mut o = opts(&[("csv.escape-character", "\\\\"), ("csv.allow-comments", "true"), ("csv.null-literal", "")]);
            if ignore {
                o.insert("csv.ignore-parse-errors".into(), "true".into());
            }
            let f = CsvFormat::from_options(&o).unwrap();
            let mut d = f.decoder(&s, &SessionZone::utc()).unwrap();
            for (n, l) in lines.iter().enumerate() {
                let _ = d.push_line(l, n as u64);
            }
            let _ = d.end_of_input();
            if let Ok(b) = d.finish_batch() {
                f.encode_batch(&b, &s, &mut Vec::new());
            }
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let text = String::from_utf8_lossy(&bytes);
            let s = schema();
            let f = CsvFormat::default();
            let mut d = f.decoder(&s, &SessionZone::utc()).unwrap();
            for (n, l) in text.split('\n').enumerate() {
                let _ = d.push_line(l, n as u64);
            }
            let _ = d.finish_batch();
        }
    }
}
