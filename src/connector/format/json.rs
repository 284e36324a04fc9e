//! Flink's `json` format: one JSON object per line ↔ Arrow batches.
//!
//! Fields are matched by name (case-sensitive); a missing field is NULL unless
//! `json.fail-on-missing-field`. Values convert as Flink's JSON converters do: a JSON string
//! holding a number is read as the number, a number read into a STRING column is its text, a
//! nested object or array read into a STRING column is its JSON text, BYTES are base64,
//! TIMESTAMP follows `json.timestamp-format.standard` (both `SQL` and `ISO-8601` forms are
//! accepted on input), TIMESTAMP_LTZ is UTC with a trailing `Z`. A line that is not a JSON
//! object, or a value that does not convert, is an error naming the line (and the column);
//! with `json.ignore-parse-errors` the value becomes NULL and a malformed line is skipped and
//! counted.

use std::collections::HashMap;

use crate::types::java_hash::{flink_string_hash, hash_map_order};
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BinaryArray, ListArray, MapArray, RecordBatch, StringArray, StructArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType as ArrowType;
use std::borrow::Cow;

use super::TextColumn;
use super::json_scan::{Kind, Node, Scanner, SyntaxError, is_floating};
use crate::types::json_text::{JsonWriter, TimestampStandard};

use super::csv::{FormatError, bool_option, build_batch};
use crate::types::text::{TemporalText, TextDialect, base64_decode, parse_column_as};
use crate::types::time::SessionZone;
use crate::types::{DataType, Schema, TypeKind};

/// The `json` format's options: how lines are read, and the writer that encodes rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonFormat {
    pub fail_on_missing_field: bool,
    pub ignore_parse_errors: bool,
    pub writer: JsonWriter,
}

impl JsonFormat {
    /// Reads the `json.*` options of a table; other keys are ignored.
    pub fn from_options(options: &HashMap<String, String>) -> Result<Self, String> {
        let fail_on_missing_field = bool_option(options, "json.fail-on-missing-field", false)?;
        let ignore_parse_errors = bool_option(options, "json.ignore-parse-errors", false)?;
        if fail_on_missing_field && ignore_parse_errors {
            return Err(
                "'json.fail-on-missing-field' and 'json.ignore-parse-errors' shouldn't \
                        both be true"
                    .into(),
            );
        }
        let timestamp_standard = match options
            .get("json.timestamp-format.standard")
            .map(String::as_str)
        {
            None => TimestampStandard::Sql,
            Some("SQL") => TimestampStandard::Sql,
            Some("ISO-8601") => TimestampStandard::Iso8601,
            Some(v) => {
                return Err(format!(
                    "Unsupported value '{v}' for timestamp-format.standard. Supported values are [SQL, ISO-8601]."
                ));
            }
        };
        if let Some(v) = options.get("json.map-null-key.mode")
            && !["FAIL", "DROP", "LITERAL"]
                .iter()
                .any(|m| v.eq_ignore_ascii_case(m))
        {
            return Err(format!(
                "unsupported value '{v}' for option 'json.map-null-key.mode'; \
                 supported values are 'FAIL', 'DROP' and 'LITERAL'"
            ));
        }
        bool_option(options, "json.decode.json-parser.enabled", true)?;
        Ok(JsonFormat {
            fail_on_missing_field,
            ignore_parse_errors,
            writer: JsonWriter {
                timestamp_standard,
                encode_decimal_as_plain_number: bool_option(
                    options,
                    "json.encode.decimal-as-plain-number",
                    false,
                )?,
                encode_ignore_null_fields: bool_option(
                    options,
                    "json.encode.ignore-null-fields",
                    false,
                )?,
                encode_double_as_big_decimal: false,
            },
        })
    }

    /// Appends a batch as JSON lines (see [`JsonWriter::encode_batch`]).
    pub fn encode_batch(&self, batch: &RecordBatch, schema: &Schema, out: &mut Vec<u8>) {
        self.writer.encode_batch(batch, schema, out);
    }

    /// How the decoder reads scalar text: temporal values in the format's timestamp standard.
    fn text_dialect(&self) -> TextDialect {
        TextDialect::Format(match self.writer.timestamp_standard {
            TimestampStandard::Sql => TemporalText::JsonSql,
            TimestampStandard::Iso8601 => TemporalText::JsonIso,
        })
    }

    pub fn decoder(&self, schema: &Schema, zone: &SessionZone) -> Result<JsonDecoder, String> {
        Ok(JsonDecoder {
            format: self.clone(),
            schema: schema.clone(),
            zone: zone.clone(),
            columns: schema
                .fields
                .iter()
                .map(|f| ColumnValues::new(&f.data_type, self.text_dialect()))
                .collect(),
            members: Members::new(
                &schema
                    .fields
                    .iter()
                    .map(|f| (f.name.as_str(), &f.data_type))
                    .collect::<Vec<_>>(),
            ),
            lines: Vec::new(),
            skipped: 0,
            scratch: String::new(),
        })
    }
}

/// Where one column's (or one nested field's) values wait for the end of the batch.
#[derive(Debug)]
enum ColumnValues {
    /// A scalar column: each row's text, parsed by the shared text parser at the end of the
    /// batch (as the CSV format's columns are), and the first value that had no text form.
    Text {
        text: TextColumn,
        error: Option<(usize, String)>,
    },
    /// A ROW: its fields' values, each kept as a column of its own, and which rows are
    /// objects. A nested object is scanned with the line's object, without a tree.
    Row(Box<RowValues>),
    /// ARRAY, MAP and BYTES columns: each row's value as a tree.
    Tree(Vec<Node<'static>>),
}

#[derive(Debug)]
struct RowValues {
    fields: Vec<ColumnValues>,
    valid: Vec<bool>,
    /// The first row whose value was neither an object nor null.
    error: Option<(usize, String)>,
}

impl RowValues {
    /// [`ColumnValues::push`] for a ROW (out of line: it recurses into the fields).
    #[inline(never)]
    fn push(
        &mut self,
        ty: &DataType,
        text: &str,
        span: Option<Span>,
        nested: Option<&Members>,
        row: usize,
        scratch: &mut String,
    ) {
        let TypeKind::Row(fields) = &ty.kind else {
            unreachable!("a ROW column's values are kept for a ROW type");
        };
        let RowValues {
            fields: columns,
            valid,
            error,
        } = self;
        let members = match span {
            // The line's scan noted the object's members.
            Some(span) if span.kind == Kind::Object => nested,
            None => None,
            Some(span) => {
                if span.kind != Kind::Null {
                    error.get_or_insert((
                        row,
                        format!("expected an object but was {}", span.kind.describe()),
                    ));
                }
                None
            }
        };
        valid.push(members.is_some());
        for (i, (column, (_, fty))) in columns.iter_mut().zip(fields).enumerate() {
            match members {
                Some(m) => {
                    let inner = m.nested[i].as_deref();
                    column.push(fty, text, m.spans[i], inner, row, scratch)
                }
                None => column.push(fty, "", None, None, row, scratch),
            }
        }
    }
}

impl ColumnValues {
    fn new(ty: &DataType, dialect: TextDialect) -> ColumnValues {
        match &ty.kind {
            TypeKind::Row(fields) => ColumnValues::Row(Box::new(RowValues {
                fields: fields
                    .iter()
                    .map(|(_, fty)| ColumnValues::new(fty, dialect))
                    .collect(),
                valid: Vec::new(),
                error: None,
            })),
            TypeKind::Array(_)
            | TypeKind::Map(..)
            | TypeKind::Binary(_)
            | TypeKind::VarBinary(_) => ColumnValues::Tree(Vec::new()),
            _ => ColumnValues::Text {
                text: TextColumn::new(ty, dialect),
                error: None,
            },
        }
    }

    /// Bytes of text held by the largest scalar column within.
    fn bytes(&self) -> usize {
        match self {
            ColumnValues::Text { text, .. } => text.bytes(),
            ColumnValues::Row(row) => row
                .fields
                .iter()
                .map(ColumnValues::bytes)
                .max()
                .unwrap_or(0),
            ColumnValues::Tree(_) => 0,
        }
    }

    /// Adds row `row`'s value: the member of `text` at `span` (`None`: no member); a ROW's
    /// fields are those `nested` found when the line was scanned.
    #[inline]
    fn push(
        &mut self,
        ty: &DataType,
        text: &str,
        span: Option<Span>,
        nested: Option<&Members>,
        row: usize,
        scratch: &mut String,
    ) {
        match self {
            ColumnValues::Tree(values) => values.push(match span {
                None => Node::Null,
                Some(span) => parse_span(text, span).into_owned(),
            }),
            ColumnValues::Text {
                text: column,
                error,
            } => {
                let Some(span) = span else {
                    column.push(None);
                    return;
                };
                let raw = &text[span.start..span.end];
                match span.kind {
                    Kind::Null => column.push(None),
                    Kind::Bool => column.push(Some(raw)),
                    Kind::Number => column.push(Some(&number_text(raw, ty))),
                    Kind::String if !span.escaped => column.push(raw.get(1..raw.len() - 1)),
                    Kind::String => {
                        scratch.clear();
                        // The line's scan has checked the string already.
                        match Scanner::new(raw).string_into(scratch) {
                            Ok(()) => column.push(Some(scratch)),
                            Err(_) => column.push(None),
                        }
                    }
                    Kind::Array | Kind::Object if ty.kind.is_string() => {
                        scratch.clear();
                        parse_span(text, span).write_compact(scratch);
                        column.push(Some(scratch));
                    }
                    Kind::Array | Kind::Object => {
                        if error.is_none() {
                            *error = Some((
                                row,
                                format!(
                                    "expected a {} value but was {}",
                                    ty.kind,
                                    span.kind.describe()
                                ),
                            ));
                        }
                        column.push(None);
                    }
                }
            }
            ColumnValues::Row(values) => values.push(ty, text, span, nested, row, scratch),
        }
    }

    /// The values so far as an array of `ty`, leaving the column empty, and the first row
    /// whose value did not convert (with the message).
    fn finish(
        &mut self,
        conv: &Converter<'_>,
        ty: &DataType,
    ) -> Result<(ArrayRef, Option<(usize, String)>), String> {
        Ok(match self {
            ColumnValues::Tree(values) => {
                let values = std::mem::take(values);
                let refs: Vec<&Node<'static>> = values.iter().collect();
                let (array, errors) = conv.column(&refs, ty);
                (array, errors.into_iter().min_by_key(|e| e.0))
            }
            ColumnValues::Text { text, error } => {
                let error = error.take();
                let (array, errors) =
                    text.finish(|strings| parse_column_as(strings, ty, conv.zone, conv.dialect))?;
                (array, first_of(errors.into_iter().next(), error))
            }
            ColumnValues::Row(values) => {
                let TypeKind::Row(fields) = &ty.kind else {
                    unreachable!("a ROW column's values are kept for a ROW type");
                };
                let mut first = values.error.take();
                let valid = {
                    let capacity = values.valid.len();
                    std::mem::replace(&mut values.valid, Vec::with_capacity(capacity))
                };
                let n = valid.len();
                let mut arrays = Vec::with_capacity(fields.len());
                for (column, (_, fty)) in values.fields.iter_mut().zip(fields) {
                    let (array, error) = column.finish(conv, fty)?;
                    first = first_of(first, error);
                    arrays.push(array);
                }
                let ArrowType::Struct(arrow_fields) = ty.to_arrow() else {
                    unreachable!("a ROW type is an Arrow struct");
                };
                let built = StructArray::try_new(arrow_fields, arrays, nulls(valid))
                    .map(|s| Arc::new(s) as ArrayRef);
                let (array, errors) = finish(built, ty, n, Vec::new());
                (array, first_of(first, errors.into_iter().next()))
            }
        })
    }
}

/// The earlier of two rows' errors.
fn first_of(a: Option<(usize, String)>, b: Option<(usize, String)>) -> Option<(usize, String)> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// A member's value in the object being scanned: its byte span and kind.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    kind: Kind,
    /// A string with an escape, whose text is not its bytes between the quotes.
    escaped: bool,
}

/// The names an object's members are looked up by (the columns of the line, or the fields of
/// a nested ROW), and where each one's value was in the object scanned last.
#[derive(Debug)]
struct Members {
    names: Vec<String>,
    /// Per name, whether it has no character JSON must escape (then a member name written
    /// without escapes is this one when its raw text is the name).
    raw: Vec<bool>,
    /// Index by name, for objects too wide to scan the names.
    by_name: Option<HashMap<String, usize>>,
    /// Each name's value in the object scanned last (a repeated name: the last one).
    spans: Vec<Option<Span>>,
    /// Per name of a ROW, the members of its object, scanned with this one (its value's
    /// span is then an object's).
    nested: Vec<Option<Box<Members>>>,
}

/// Whether two member names are equal, compared in line: names are short, and a call to
/// `memcmp` per member cost more than the comparison.
fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| x == y)
}

/// Objects up to this many names find a member's name by comparing names in order.
const NAME_SCAN_LIMIT: usize = 16;

impl Members {
    /// The members of an object holding `fields` (names and types).
    fn new(fields: &[(&str, &DataType)]) -> Members {
        let (names, nested): (Vec<String>, Vec<Option<Box<Members>>>) = fields
            .iter()
            .map(|(name, ty)| {
                let nested = match &ty.kind {
                    TypeKind::Row(fields) => Some(Box::new(Members::new(
                        &fields
                            .iter()
                            .map(|(name, ty)| (name.as_str(), ty))
                            .collect::<Vec<_>>(),
                    ))),
                    _ => None,
                };
                (name.to_string(), nested)
            })
            .unzip();
        Members {
            nested,
            raw: names
                .iter()
                .map(|n| !n.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20))
                .collect(),
            by_name: (names.len() > NAME_SCAN_LIMIT).then(|| {
                let mut map = HashMap::new();
                // A repeated name: the first one takes the member.
                for (i, name) in names.iter().enumerate().rev() {
                    map.insert(name.clone(), i);
                }
                map
            }),
            spans: vec![None; names.len()],
            names,
        }
    }

    fn index_of(&self, name: &str) -> Option<usize> {
        match &self.by_name {
            Some(map) => map.get(name).copied(),
            None => self.names.iter().position(|n| same_name(n, name)),
        }
    }

    /// Scans the object at the scanner's position (its `{` next; `depth`: the arrays and
    /// objects around it), noting the span of each name's member in `spans`, and the members
    /// of a ROW's object in its `nested` members.
    #[inline]
    fn scan(&mut self, scanner: &mut Scanner<'_>, depth: usize) -> Result<(), String> {
        self.spans.fill(None);
        let syntax = |e: SyntaxError| format!("malformed json: {e}");
        scanner.nested(depth).map_err(syntax)?;
        scanner.expect(b'{', "expected `{`").map_err(syntax)?;
        scanner.skip_whitespace();
        if scanner.eat(b'}') {
            return Ok(());
        }
        let mut next = 0;
        loop {
            scanner.skip_whitespace();
            if scanner.peek() != Some(b'"') {
                return Err(syntax(scanner.error("expected a member name")));
            }
            // Members mostly come in the names' order: first try the name after the last,
            // compared in place (when written without escapes, its raw text is the name).
            let j = if self.raw.get(next).copied().unwrap_or(false)
                && scanner.eat_quoted(self.names[next].as_bytes())
            {
                Some(next)
            } else {
                let unescaped;
                let name = match scanner.plain_string() {
                    Some(name) => name,
                    None => {
                        unescaped = scanner.string().map_err(syntax)?;
                        &*unescaped
                    }
                };
                match self.names.get(next) {
                    Some(n) if same_name(n, name) => Some(next),
                    _ => self.index_of(name),
                }
            };
            scanner.expect(b':', "expected `:`").map_err(syntax)?;
            scanner.skip_whitespace();
            let start = scanner.position();
            let nested = j.and_then(|j| self.nested.get_mut(j)?.as_deref_mut());
            let (kind, escaped) = match (scanner.peek(), nested) {
                (Some(b'"'), _) => (Kind::String, scanner.skip_string().map_err(syntax)?),
                (Some(b'{'), Some(nested)) => {
                    nested.scan(scanner, depth + 1)?;
                    (Kind::Object, false)
                }
                _ => (scanner.skip_value(depth + 1).map_err(syntax)?, false),
            };
            if let Some(j) = j {
                next = j + 1;
                self.spans[j] = Some(Span {
                    start,
                    end: scanner.position(),
                    kind,
                    escaped,
                });
            }
            scanner.skip_whitespace();
            if scanner.eat(b',') {
                continue;
            }
            if scanner.eat(b'}') {
                return Ok(());
            }
            return Err(syntax(scanner.error("expected `,` or `}`")));
        }
    }
}

/// Turns JSON lines into batches.
///
/// A line's top-level object is scanned once ([`Members::scan`]); a member of a scalar column
/// goes straight into that column's text, a nested object into its fields' columns the same
/// way, an array or map becomes a tree, and an unknown member is only checked.
#[derive(Debug)]
pub struct JsonDecoder {
    format: JsonFormat,
    schema: Schema,
    zone: SessionZone,
    columns: Vec<ColumnValues>,
    members: Members,
    lines: Vec<u64>,
    skipped: u64,
    scratch: String,
}

/// Whether a column of `ty` needs its value's tree to check `json.fail-on-missing-field`.
fn is_nested_type(ty: &DataType) -> bool {
    matches!(
        ty.kind,
        TypeKind::Array(_) | TypeKind::Map(..) | TypeKind::Row(_)
    )
}
impl JsonDecoder {
    /// Lines skipped so far because they were not JSON objects (with `json.ignore-parse-errors`).
    /// Records never span lines in this format.
    pub fn open_record_line(&self) -> Option<u64> {
        None
    }

    pub fn rows_skipped(&self) -> u64 {
        self.skipped
    }

    pub fn buffered_rows(&self) -> usize {
        self.lines.len()
    }

    /// Bytes of text buffered for the next batch in the largest column.
    pub fn buffered_bytes(&self) -> usize {
        self.columns
            .iter()
            .map(ColumnValues::bytes)
            .max()
            .unwrap_or(0)
    }
    /// Adds the lines of `text`, as [`crate::connector::LineDecoder::decode`] describes.
    pub fn push_lines(
        &mut self,
        text: &str,
        first_line: u64,
        limit: crate::connector::BatchLimit,
    ) -> Result<crate::connector::Decoded, FormatError> {
        super::decode_lines(self, text, first_line, limit)
    }

    /// Adds one line holding a JSON object; blank lines are skipped.
    pub fn push_line(&mut self, line: &str, line_number: u64) -> Result<(), FormatError> {
        // A byte-order mark opens the file, not the first value.
        let line = if line_number == 1 {
            line.strip_prefix('\u{feff}').unwrap_or(line)
        } else {
            line
        };
        let mut scanner = Scanner::new(line);
        scanner.skip_whitespace();
        if scanner.peek().is_none() {
            return Ok(());
        }
        if let Err(e) = self.scan_object(&mut scanner) {
            return self.malformed(line_number, e);
        }
        if self.format.fail_on_missing_field {
            self.check_missing(line, line_number)?;
        }
        let row = self.lines.len();
        let members = &self.members;
        for (i, (column, field)) in self.columns.iter_mut().zip(&self.schema.fields).enumerate() {
            let nested = members.nested[i].as_deref();
            column.push(
                &field.data_type,
                line,
                members.spans[i],
                nested,
                row,
                &mut self.scratch,
            );
        }
        self.lines.push(line_number);
        Ok(())
    }

    /// Scans a line's object, noting the span of each column's member.
    fn scan_object(&mut self, scanner: &mut Scanner<'_>) -> Result<(), String> {
        let syntax = |e: SyntaxError| format!("malformed json: {e}");
        if scanner.peek() != Some(b'{') {
            let kind = scanner.skip_value(0).map_err(syntax)?;
            scanner.expect_end().map_err(syntax)?;
            return Err(format!(
                "expected a json object but was {}",
                kind.describe()
            ));
        }
        self.members.scan(scanner, 0)?;
        scanner.expect_end().map_err(syntax)
    }
    /// `json.fail-on-missing-field`: every column's member, and every field of nested rows.
    fn check_missing(&self, line: &str, line_number: u64) -> Result<(), FormatError> {
        for (f, span) in self.schema.fields.iter().zip(&self.members.spans) {
            let missing = match span {
                None => Some(f.name.clone()),
                // Nested rows are checked too, as Flink's converters do.
                Some(span) if is_nested_type(&f.data_type) => {
                    missing_nested_field(&parse_span(line, *span), &f.data_type)
                        .map(|path| format!("{}.{path}", f.name))
                }
                Some(_) => None,
            };
            if let Some(path) = missing {
                return Err(FormatError {
                    line: line_number,
                    column: Some(path),
                    message: "field is missing".into(),
                });
            }
        }
        Ok(())
    }

    /// The input has ended; a JSON record never spans lines, so nothing is left open.
    pub fn end_of_input(&mut self) -> Result<(), FormatError> {
        Ok(())
    }

    fn malformed(&mut self, line: u64, message: String) -> Result<(), FormatError> {
        if self.format.ignore_parse_errors {
            self.skipped += 1;
            Ok(())
        } else {
            Err(FormatError {
                line,
                column: None,
                message,
            })
        }
    }

    /// Converts the buffered rows into a batch of the schema (possibly empty).
    pub fn finish_batch(&mut self) -> Result<RecordBatch, FormatError> {
        let lines = {
            let capacity = self.lines.len();
            std::mem::replace(&mut self.lines, Vec::with_capacity(capacity))
        };
        let mut columns = std::mem::take(&mut self.columns);
        let conv = Converter {
            zone: &self.zone,
            dialect: self.format.text_dialect(),
        };
        // The columns go back for the next batch, keeping their buffers' capacity.
        let arrays = self.convert_columns(&conv, &mut columns, &lines);
        self.columns = columns;
        let arrays = arrays?;
        let (batch, dropped) = build_batch(
            &self.schema,
            arrays,
            &lines,
            self.format.ignore_parse_errors,
        )?;
        self.skipped += dropped;
        Ok(batch)
    }

    /// Each column's buffered values as an array of its type, leaving the column empty.
    fn convert_columns(
        &self,
        conv: &Converter<'_>,
        columns: &mut [ColumnValues],
        lines: &[u64],
    ) -> Result<Vec<ArrayRef>, FormatError> {
        let mut arrays = Vec::with_capacity(columns.len());
        for (values, field) in columns.iter_mut().zip(&self.schema.fields) {
            let (array, first_error) =
                values
                    .finish(conv, &field.data_type)
                    .map_err(|message| FormatError {
                        line: lines.first().copied().unwrap_or(0),
                        column: Some(field.name.clone()),
                        message,
                    })?;
            if let Some((row, message)) = first_error
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
}

/// The tree of a member's value, whose span the scanner has already checked.
fn parse_span(line: &str, span: Span) -> Node<'_> {
    Scanner::new(&line[span.start..span.end])
        .parse_value(1)
        .unwrap_or(Node::Null)
}

/// A number's text for a column of `ty`, exact: the literal text, except that an INT or
/// BIGINT column cuts the fraction of a floating number as Jackson's `getIntValue` and
/// `getLongValue` do (through a double; out of the range of BIGINT it stays as written, and
/// then fails to parse). TINYINT and SMALLINT parse the text (`Byte.parseByte`), so `2.9`
/// is an error there.
fn number_text<'a>(number: &'a str, ty: &DataType) -> Cow<'a, str> {
    if matches!(ty.kind, TypeKind::Int | TypeKind::BigInt) && is_floating(number) {
        // 2^63 as a double: the doubles in [-2^63, 2^63) convert to a long.
        const LIMIT: f64 = 9_223_372_036_854_775_808.0;
        if let Ok(f) = number.parse::<f64>()
            && (-LIMIT..LIMIT).contains(&f)
        {
            return Cow::Owned((f.trunc() as i64).to_string());
        }
    }
    Cow::Borrowed(number)
}

/// The path of the first field of a nested ROW (inside rows, arrays and maps) that `value`
/// lacks.
fn missing_nested_field(value: &Node<'_>, ty: &DataType) -> Option<String> {
    match (&ty.kind, value) {
        (TypeKind::Row(fields), Node::Object(_)) => {
            fields.iter().find_map(|(name, fty)| match value.get(name) {
                None => Some(name.clone()),
                Some(v) => missing_nested_field(v, fty).map(|path| format!("{name}.{path}")),
            })
        }
        (TypeKind::Array(element), Node::Array(items)) => {
            items.iter().find_map(|v| missing_nested_field(v, element))
        }
        (TypeKind::Map(_, value_type), Node::Object(members)) => members
            .iter()
            .find_map(|(_, v)| missing_nested_field(v, value_type)),
        _ => None,
    }
}

struct Converter<'a> {
    zone: &'a SessionZone,
    dialect: TextDialect,
}

type Errors = Vec<(usize, String)>;

impl Converter<'_> {
    /// Converts one column of JSON values; errors carry the index of the value.
    fn column(&self, values: &[&Node<'_>], ty: &DataType) -> (ArrayRef, Errors) {
        let n = values.len();
        match &ty.kind {
            TypeKind::Array(element) => {
                let mut items: Vec<&Node<'_>> = Vec::new();
                let mut offsets: Vec<i32> = vec![0];
                let mut valid = Vec::with_capacity(n);
                let mut errors = Vec::new();
                for (i, v) in values.iter().enumerate() {
                    match v {
                        Node::Array(a) => {
                            items.extend(a.iter());
                            valid.push(true);
                        }
                        Node::Null => valid.push(false),
                        other => {
                            errors.push((
                                i,
                                format!("expected an array but was {}", other.kind().describe()),
                            ));
                            valid.push(false);
                        }
                    }
                    offsets.push(i32::try_from(items.len()).unwrap_or(i32::MAX));
                }
                let (child, child_errors) = self.column(&items, element);
                errors.extend(remap(child_errors, &offsets));
                let field = Arc::new(element.to_arrow_field("element"));
                let list = ListArray::try_new(
                    field,
                    OffsetBuffer::new(ScalarBuffer::from(offsets)),
                    child,
                    nulls(valid),
                );
                finish(list.map(|l| Arc::new(l) as ArrayRef), ty, n, errors)
            }
            TypeKind::Map(kt, vt) => {
                let mut keys: Vec<String> = Vec::new();
                let mut vals: Vec<&Node<'_>> = Vec::new();
                let mut offsets: Vec<i32> = vec![0];
                let mut valid = Vec::with_capacity(n);
                let mut errors = Vec::new();
                let string_keys = kt.kind.is_string();
                let mut hashes = Vec::new();
                for (i, v) in values.iter().enumerate() {
                    match v {
                        Node::Object(o) if string_keys => {
                            // Flink fills a HashMap keyed by its StringData, so the map comes
                            // out in that map's order.
                            hashes.clear();
                            hashes.extend(o.iter().map(|(k, _)| flink_string_hash(k)));
                            for at in hash_map_order(&hashes, 16) {
                                keys.push(o[at].0.to_string());
                                vals.push(&o[at].1);
                            }
                            valid.push(true);
                        }
                        Node::Object(o) => {
                            for (k, v) in o {
                                keys.push(k.to_string());
                                vals.push(v);
                            }
                            valid.push(true);
                        }
                        Node::Null => valid.push(false),
                        other => {
                            errors.push((
                                i,
                                format!("expected an object but was {}", other.kind().describe()),
                            ));
                            valid.push(false);
                        }
                    }
                    offsets.push(i32::try_from(keys.len()).unwrap_or(i32::MAX));
                }
                let key_text = StringArray::from_iter_values(keys.iter());
                let (key_array, key_errors) =
                    parse_column_as(&key_text, &kt.with_nullable(false), self.zone, self.dialect);
                let (value_array, value_errors) = self.column(&vals, vt);
                errors.extend(remap(key_errors, &offsets));
                errors.extend(remap(value_errors, &offsets));
                let ArrowType::Map(entries_field, _) = ty.to_arrow() else {
                    return (arrow_array::new_null_array(&ty.to_arrow(), n), errors);
                };
                let ArrowType::Struct(entry_fields) = entries_field.data_type().clone() else {
                    return (arrow_array::new_null_array(&ty.to_arrow(), n), errors);
                };
                if key_array.null_count() > 0 {
                    // Keys that did not parse: the whole map is unusable.
                    return (arrow_array::new_null_array(&ty.to_arrow(), n), errors);
                }
                let entries =
                    StructArray::try_new(entry_fields, vec![key_array, value_array], None);
                let map = entries.and_then(|e| {
                    MapArray::try_new(
                        entries_field,
                        OffsetBuffer::new(ScalarBuffer::from(offsets)),
                        e,
                        nulls(valid),
                        false,
                    )
                });
                finish(map.map(|m| Arc::new(m) as ArrayRef), ty, n, errors)
            }
            TypeKind::Row(fields) => {
                let mut errors = Vec::new();
                let mut valid = Vec::with_capacity(n);
                let mut per_field: Vec<Vec<&Node<'_>>> =
                    fields.iter().map(|_| Vec::with_capacity(n)).collect();
                for (i, v) in values.iter().enumerate() {
                    let object = match v {
                        Node::Object(_) => Some(*v),
                        Node::Null => None,
                        other => {
                            errors.push((
                                i,
                                format!("expected an object but was {}", other.kind().describe()),
                            ));
                            None
                        }
                    };
                    valid.push(object.is_some());
                    for ((name, _), col) in fields.iter().zip(per_field.iter_mut()) {
                        col.push(object.and_then(|o| o.get(name)).unwrap_or(&Node::Null));
                    }
                }
                let mut arrays = Vec::new();
                for ((_, fty), col) in fields.iter().zip(&per_field) {
                    let (a, e) = self.column(col, fty);
                    errors.extend(e);
                    arrays.push(a);
                }
                let ArrowType::Struct(arrow_fields) = ty.to_arrow() else {
                    return (arrow_array::new_null_array(&ty.to_arrow(), n), errors);
                };
                let st = StructArray::try_new(arrow_fields, arrays, nulls(valid));
                finish(st.map(|s| Arc::new(s) as ArrayRef), ty, n, errors)
            }
            TypeKind::Binary(_) | TypeKind::VarBinary(_) => {
                let mut errors = Vec::new();
                let out: BinaryArray = values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| match v {
                        Node::Null => None,
                        Node::String(s) => match base64_decode(s) {
                            Some(b) => Some(b),
                            None => {
                                errors.push((i, format!("cannot decode '{s}' as base64")));
                                None
                            }
                        },
                        other => {
                            errors.push((
                                i,
                                format!(
                                    "expected a base64 string but was {}",
                                    other.kind().describe()
                                ),
                            ));
                            None
                        }
                    })
                    .collect();
                (Arc::new(out), errors)
            }
            _ => {
                // Scalars: to text, then the shared parser.
                let mut errors = Vec::new();
                let texts: StringArray = values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| match self.scalar_text(v, ty) {
                        Ok(t) => t,
                        Err(e) => {
                            errors.push((i, e));
                            None
                        }
                    })
                    .collect();
                let (array, parse_errors) = parse_column_as(&texts, ty, self.zone, self.dialect);
                errors.extend(parse_errors);
                errors.sort_by_key(|e| e.0);
                (array, errors)
            }
        }
    }

    fn scalar_text(&self, v: &Node<'_>, ty: &DataType) -> Result<Option<String>, String> {
        Ok(match v {
            Node::Null => None,
            Node::Bool(b) => Some(b.to_string()),
            Node::String(s) => Some(s.to_string()),
            Node::Number(n) => Some(number_text(n, ty).into_owned()),
            Node::Array(_) | Node::Object(_) => {
                if ty.kind.is_string() {
                    let mut text = String::new();
                    v.write_compact(&mut text);
                    Some(text)
                } else {
                    return Err(format!(
                        "expected a {} value but was {}",
                        ty.kind,
                        v.kind().describe()
                    ));
                }
            }
        })
    }
}

fn nulls(valid: Vec<bool>) -> Option<NullBuffer> {
    let n = NullBuffer::from(valid);
    (n.null_count() > 0).then_some(n)
}

/// Maps errors on flattened child values back to the rows owning them.
fn remap(errors: Errors, offsets: &[i32]) -> Errors {
    errors
        .into_iter()
        .map(|(i, m)| {
            (
                offsets
                    .partition_point(|&o| o as usize <= i)
                    .saturating_sub(1),
                m,
            )
        })
        .collect()
}

fn finish(
    built: Result<ArrayRef, arrow_schema::ArrowError>,
    ty: &DataType,
    n: usize,
    mut errors: Errors,
) -> (ArrayRef, Errors) {
    match built {
        Ok(a) => (a, errors),
        Err(e) => {
            errors.push((0, format!("cannot build {} column: {e}", ty.kind)));
            (arrow_array::new_null_array(&ty.to_arrow(), n), errors)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::text::format_value;
    use crate::types::{Field, MAX_LENGTH};
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;

    fn opts(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("id", DataType::nullable(TypeKind::BigInt)),
            Field::new("name", DataType::string()),
            Field::new(
                "price",
                DataType::nullable(TypeKind::Decimal {
                    precision: 10,
                    scale: 2,
                }),
            ),
            Field::new("ts", DataType::nullable(TypeKind::Timestamp(3))),
            Field::new(
                "tags",
                DataType::nullable(TypeKind::Array(Box::new(DataType::string()))),
            ),
            Field::new(
                "m",
                DataType::nullable(TypeKind::Map(
                    Box::new(DataType::string()),
                    Box::new(DataType::nullable(TypeKind::Int)),
                )),
            ),
            Field::new(
                "r",
                DataType::nullable(TypeKind::Row(vec![
                    ("a".into(), DataType::nullable(TypeKind::Int)),
                    ("b".into(), DataType::nullable(TypeKind::Double)),
                ])),
            ),
            Field::new("bin", DataType::nullable(TypeKind::VarBinary(MAX_LENGTH))),
            Field::new("ok", DataType::nullable(TypeKind::Boolean)),
        ])
    }

    #[test]
    fn missing_nested_fields_fail_when_asked() {
        let row = TypeKind::Row(vec![
            ("x".into(), DataType::nullable(TypeKind::Int)),
            ("z".into(), DataType::nullable(TypeKind::Int)),
        ]);
        let s = Schema::new(vec![Field::new("r", DataType::nullable(row))]);
        let f = JsonFormat::from_options(&opts(&[("json.fail-on-missing-field", "true")])).unwrap();
        let mut d = f.decoder(&s, &SessionZone::utc()).unwrap();
        d.push_line(r#"{"r": {"x": 1, "z": 2}}"#, 1).unwrap();
        let e = d.push_line(r#"{"r": {"x": 1}}"#, 2).unwrap_err();
        assert_eq!(e.column.as_deref(), Some("r.z"));
        let mut d = JsonFormat::default()
            .decoder(&s, &SessionZone::utc())
            .unwrap();
        d.push_line(r#"{"r": {"x": 1}}"#, 1).unwrap();
    }

    #[test]
    fn options() {
        assert!(
            JsonFormat::from_options(&opts(&[("json.timestamp-format.standard", "ISO-8601")]))
                .is_ok()
        );
        let e = JsonFormat::from_options(&opts(&[("json.timestamp-format.standard", "X")]))
            .unwrap_err();
        assert!(e.contains("timestamp-format.standard"), "{e}");
        // Flink reads the value case-sensitively.
        assert!(
            JsonFormat::from_options(&opts(&[("json.timestamp-format.standard", "iso-8601")]))
                .is_err()
        );
        let e = JsonFormat::from_options(&opts(&[
            ("json.fail-on-missing-field", "true"),
            ("json.ignore-parse-errors", "true"),
        ]))
        .unwrap_err();
        assert!(e.contains("fail-on-missing-field"), "{e}");
        let e = JsonFormat::from_options(&opts(&[("json.ignore-parse-errors", "1")])).unwrap_err();
        assert!(e.contains("json.ignore-parse-errors"), "{e}");
    }

    #[test]
    fn decodes_and_encodes() {
        let s = schema();
        let f = JsonFormat::default();
        let z = SessionZone::utc();
        let mut d = f.decoder(&s, &z).unwrap();
        d.push_line(r#"{"id": 1, "name": "a\"b", "price": 12.345, "ts": "2021-01-01 00:00:00.5", "tags": ["x", null], "m": {"k": 1}, "r": {"a": 2, "b": 1e10}, "bin": "aGk=", "ok": true, "extra": 0}"#, 1).unwrap();
        d.push_line(r#"{"id": "7", "name": 1.0, "price": "99999999999", "ts": "2021-01-01 01:02:03", "r": null, "ok": "TRUE"}"#, 2).unwrap();
        d.push_line("", 3).unwrap();
        d.push_line(r#"{"id": 2.9, "name": {"x": [1]}}"#, 4)
            .unwrap();
        let b = d.finish_batch().unwrap();
        assert_eq!(b.num_rows(), 3);
        let cell = |c: usize, r| format_value(b.column(c), r, &s.fields[c].data_type, &z);
        assert_eq!(cell(1, 0).as_deref(), Some("a\"b"));
        assert_eq!(cell(2, 0).as_deref(), Some("12.35"));
        assert_eq!(cell(3, 0).as_deref(), Some("2021-01-01 00:00:00.500"));
        assert_eq!(cell(4, 0).as_deref(), Some("[x, NULL]"));
        assert_eq!(cell(5, 0).as_deref(), Some("{k=1}"));
        assert_eq!(cell(6, 0).as_deref(), Some("(2, 1.0E10)"));
        assert_eq!(cell(7, 0).as_deref(), Some("x'6869'"));
        assert_eq!(cell(0, 1).as_deref(), Some("7"));
        assert_eq!(cell(1, 1).as_deref(), Some("1.0"));
        assert_eq!(cell(2, 1), None);
        assert_eq!(cell(3, 1).as_deref(), Some("2021-01-01 01:02:03.000"));
        assert_eq!(cell(6, 1), None);
        assert_eq!(cell(8, 1).as_deref(), Some("TRUE"));
        assert_eq!(cell(0, 2).as_deref(), Some("2"));
        assert_eq!(cell(1, 2).as_deref(), Some(r#"{"x":[1]}"#));

        let lines = encoded(&f, &b, &s);
        assert_eq!(
            lines[0],
            r#"{"id":1,"name":"a\"b","price":12.35,"ts":"2021-01-01 00:00:00.5","tags":["x",null],"m":{"k":1},"r":{"a":2,"b":1.0E10},"bin":"aGk=","ok":true}"#
        );
        let mut d2 = f.decoder(&s, &z).unwrap();
        for (i, l) in lines.iter().enumerate() {
            d2.push_line(l, i as u64).unwrap();
        }
        let b2 = d2.finish_batch().unwrap();
        assert_eq!(b2.num_rows(), 3);
        for c in 0..s.len() {
            assert_eq!(b2.column(c), b.column(c), "column {c}");
        }
    }

    fn encoded(f: &JsonFormat, b: &RecordBatch, s: &Schema) -> Vec<String> {
        let mut out = Vec::new();
        f.encode_batch(b, s, &mut out);
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn escaped_names_and_values_take_the_slow_path_alike() {
        let s = Schema::new(vec![
            Field::new("id", DataType::nullable(TypeKind::Int)),
            Field::new("s", DataType::string()),
        ]);
        let mut d = JsonFormat::default()
            .decoder(&s, &SessionZone::utc())
            .unwrap();
        // Names with escapes still find their columns, in order or not.
        d.push_line(r#"{"i\u0064": 1, "s": "a\"b"}"#, 1).unwrap();
        d.push_line(r#"{"\u0073": "\u00e9x", "id": 2}"#, 2).unwrap();
        d.push_line(r#"{"id": 3, "s": "plain", "s\u0000": "other"}"#, 3)
            .unwrap();
        let b = d.finish_batch().unwrap();
        let text = |r| format_value(b.column(1), r, &s.fields[1].data_type, &SessionZone::utc());
        let ids = b.column(0).as_primitive::<Int32Type>();
        assert_eq!((ids.value(0), ids.value(1), ids.value(2)), (1, 2, 3));
        assert_eq!(text(0).as_deref(), Some("a\"b"));
        assert_eq!(text(1).as_deref(), Some("éx"));
        assert_eq!(text(2).as_deref(), Some("plain"));
        // A control character or an unterminated string is malformed, name or value.
        for line in [
            "{\"id\": 1, \"s\": \"a\u{1}\"}",
            "{\"i\u{1}d\": 1}",
            r#"{"s": "open"#,
        ] {
            let e = d.push_line(line, 4).unwrap_err();
            assert!(e.to_string().contains("malformed json"), "{line}: {e}");
        }
    }

    #[test]
    fn errors_and_ignoring() {
        let s = Schema::new(vec![Field::new("id", DataType::nullable(TypeKind::Int))]);
        let f = JsonFormat::default();
        let mut d = f.decoder(&s, &SessionZone::utc()).unwrap();
        let e = d.push_line("{not json", 5).unwrap_err();
        assert!(e.to_string().starts_with("line 5: malformed json"), "{e}");
        let e = d.push_line("[1]", 6).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 6: expected a json object but was an array"
        );
        d.push_line(r#"{"id": "abc"}"#, 7).unwrap();
        let e = d.finish_batch().unwrap_err();
        assert!(
            e.to_string()
                .starts_with("line 7, column 'id': cannot cast 'abc' to INT"),
            "{e}"
        );

        let f = JsonFormat::from_options(&opts(&[("json.ignore-parse-errors", "true")])).unwrap();
        let mut d = f.decoder(&s, &SessionZone::utc()).unwrap();
        d.push_line("{not json", 1).unwrap();
        d.push_line(r#"{"id": "abc"}"#, 2).unwrap();
        d.push_line(r#"{"id": 3}"#, 3).unwrap();
        let b = d.finish_batch().unwrap();
        assert_eq!(b.num_rows(), 2);
        assert!(b.column(0).is_null(0));
        assert_eq!(d.rows_skipped(), 1);

        let f = JsonFormat::from_options(&opts(&[("json.fail-on-missing-field", "true")])).unwrap();
        let mut d = f.decoder(&s, &SessionZone::utc()).unwrap();
        let e = d.push_line(r#"{"other": 1}"#, 9).unwrap_err();
        assert_eq!(e.to_string(), "line 9, column 'id': field is missing");
    }

    #[test]
    fn ltz_and_iso() {
        let s = Schema::new(vec![
            Field::new("t", DataType::nullable(TypeKind::TimestampLtz(3))),
            Field::new("d", DataType::nullable(TypeKind::Double)),
        ]);
        let f = JsonFormat::from_options(&opts(&[("json.timestamp-format.standard", "ISO-8601")]))
            .unwrap();
        let z = SessionZone::new("Asia/Shanghai").unwrap();
        let mut d = f.decoder(&s, &z).unwrap();
        d.push_line(r#"{"t": "2021-01-01T00:00:00.123Z", "d": "NaN"}"#, 1)
            .unwrap();
        let b = d.finish_batch().unwrap();
        assert_eq!(
            format_value(b.column(0), 0, &s.fields[0].data_type, &z).as_deref(),
            Some("2021-01-01 08:00:00.123")
        );
        assert_eq!(
            encoded(&f, &b, &s),
            vec![r#"{"t":"2021-01-01T00:00:00.123Z","d":"NaN"}"#]
        );
    }

    /// JSON text of a value for the ROW of `nested_rows_scan_as_their_trees_convert`: null,
    /// a scalar or array where an object belongs, or an object whose members come in any
    /// order, repeated, escaped, unknown, and of the wrong kinds.
    fn row_value() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let scalar = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            (-3i64..3).prop_map(|n| n.to_string()),
            Just("2.5".to_string()),
            Just("1e40".to_string()),
            Just("\"7\"".to_string()),
            Just("\"x\\u00e9\\n\"".to_string()),
            Just("\"2024-01-01 00:00:00.5\"".to_string()),
            Just("\"not a time\"".to_string()),
            Just("[1, null, \"2\"]".to_string()),
            Just("[]".to_string()),
        ];
        let inner = prop_oneof![
            scalar.clone(),
            proptest::collection::vec(
                (
                    prop_oneof![Just("x"), Just("t"), Just("\\u0078"), Just("y")],
                    scalar.clone()
                ),
                0..4,
            )
            .prop_map(|members| object(&members)),
        ];
        let member = prop_oneof![
            (Just("a"), scalar.clone()),
            (Just("s"), scalar.clone()),
            (Just("arr"), scalar.clone()),
            (Just("inner"), inner),
            (Just("\\u0061"), scalar.clone()),
            (Just("zz"), scalar.clone()),
        ];
        prop_oneof![
            scalar,
            proptest::collection::vec(member, 0..6).prop_map(|members| object(&members)),
        ]
    }

    fn object(members: &[(&str, String)]) -> String {
        let members: Vec<String> = members
            .iter()
            .map(|(name, value)| format!("\"{name}\": {value}"))
            .collect();
        format!("{{{}}}", members.join(", "))
    }

    proptest::proptest! {
        /// A nested ROW decoded by scanning its object gives the array (and the first error)
        /// that converting its value's tree gives.
        #[test]
        fn nested_rows_scan_as_their_trees_convert(values in proptest::collection::vec(row_value(), 1..8)) {
            use proptest::prop_assert_eq;
            let inner = DataType::nullable(TypeKind::Row(vec![
                ("x".into(), DataType::nullable(TypeKind::BigInt)),
                ("t".into(), DataType::nullable(TypeKind::Timestamp(3))),
            ]));
            let ty = DataType::nullable(TypeKind::Row(vec![
                ("a".into(), DataType::nullable(TypeKind::Int)),
                ("s".into(), DataType::string()),
                ("inner".into(), inner),
                ("arr".into(), DataType::nullable(TypeKind::Array(Box::new(DataType::nullable(TypeKind::Int))))),
            ]));
            let s = Schema::new(vec![Field::new("r", ty.clone())]);
            let f = JsonFormat::from_options(&HashMap::new()).unwrap();
            let zone = SessionZone::utc();
            let mut d = f.decoder(&s, &zone).unwrap();
            let mut trees = Vec::new();
            for (n, v) in values.iter().enumerate() {
                d.push_line(&format!("{{\"r\": {v}}}"), n as u64 + 1).unwrap();
                trees.push(Scanner::new(v).parse_value(1).unwrap());
            }
            let conv = Converter { zone: &zone, dialect: f.text_dialect() };
            let refs: Vec<&Node<'_>> = trees.iter().collect();
            let (expected, errors) = conv.column(&refs, &ty);
            match d.finish_batch() {
                Ok(batch) => {
                    proptest::prop_assert!(errors.is_empty(), "{:?}", errors);
                    prop_assert_eq!(batch.column(0).to_data(), expected.to_data());
                }
                Err(e) => {
                    let (row, message) = errors.into_iter().min_by_key(|e| e.0).expect("an error");
                    prop_assert_eq!(e.line, row as u64 + 1);
                    prop_assert_eq!(e.message, message);
                }
            }
        }

        #[test]
        fn random_lines_never_panic(lines in proptest::collection::vec("\\PC{0,40}|[{}\\[\\]\":,0-9a-z.\\- ]{0,40}", 1..6)) {
            let s = schema();
            for ignore in [false, true] {
                let mut o = HashMap::new();
                if ignore {
                    o.insert("json.ignore-parse-errors".to_string(), "true".to_string());
                }
                let f = JsonFormat::from_options(&o).unwrap();
                let mut d = f.decoder(&s, &SessionZone::utc()).unwrap();
                for (n, l) in lines.iter().enumerate() {
                    let _ = d.push_line(l, n as u64);
                    let _ = d.push_line(&format!("{{\"id\": {l}, \"tags\": [{l}], \"r\": {{\"a\": \"{l}\"}}}}"), n as u64);
                }
                if let Ok(b) = d.finish_batch() {
                    f.encode_batch(&b, &s, &mut Vec::new());
                }
            }
        }
    }
}
