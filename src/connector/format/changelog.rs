//! Flink's changelog formats over JSON lines: `debezium-json`, `canal-json`, `maxwell-json`.
//! Each line is one change (canal: one or more) of a table's rows, read as Flink's
//! deserializers read it:
//!
//! - Debezium: `{"before": {…}, "after": {…}, "op": "c" | "r" | "u" | "d"}` (inside
//!   `"payload"` with `debezium-json.schema-include`): `c`/`r` insert `after`, `u` is `-U`
//!   `before` then `+U` `after`, `d` deletes `before`.
//! - Canal: `{"data": [{…}, …], "old": [{…}, …], "type": "INSERT" | "UPDATE" | "DELETE"}`: each
//!   row of `data` inserted, updated (its old row is the row with the fields of `old`) or
//!   deleted; other types (DDL) carry no rows.
//! - Maxwell: `{"data": {…}, "old": {…}, "type": "insert" | "update" | "delete"}`, alike.
//!
//! The rows themselves are decoded by the `json` format (a row object is one line for it), so
//! values convert as there. The decoder puts each row's kind in a last column, `$row_kind`
//! (the code of [`RowKind`]), which the scan's first operator turns into the chunk's kinds
//! (`exec/changelog_kinds.rs`). A line that is not such a change is an error naming it, or,
//! with `<format>.ignore-parse-errors`, skipped and counted.
//!
//! Writing (the filesystem sink): Debezium writes an insert or update-after as
//! `{"before":null,"after":{…},"op":"c"}` and a delete or update-before as
//! `{"before":{…},"after":null,"op":"d"}`; Canal `{"data":[{…}],"type":"INSERT"|"DELETE"}`;
//! Maxwell `{"data":{…},"type":"insert"|"delete"}` — as Flink's serializers do.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Int8Array, RecordBatch};
use arrow_schema::Field as ArrowField;
use serde_json::{Map, Value};

use super::csv::{FormatError, bool_option};
use super::decode_lines;
use super::json::{JsonDecoder, JsonFormat};
use crate::types::chunk::RowKind;
use crate::types::time::SessionZone;
use crate::types::{DataType, Schema, TypeKind};

/// The name of the kind column a changelog decoder appends.
pub const ROW_KIND_COLUMN: &str = "$row_kind";

/// Which changelog format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Debezium { schema_include: bool },
    Canal,
    Maxwell,
}

impl Flavor {
    /// The flavor of a `format` option's value, if it is a changelog format.
    pub fn of_format(format: &str) -> Option<&'static str> {
        ["debezium-json", "canal-json", "maxwell-json"]
            .into_iter()
            .find(|f| *f == format)
    }

    fn name(self) -> &'static str {
        match self {
            Flavor::Debezium { .. } => "debezium-json",
            Flavor::Canal => "canal-json",
            Flavor::Maxwell => "maxwell-json",
        }
    }
}

/// A changelog format's options, and its rows' `json` format.
#[derive(Debug, Clone)]
pub struct ChangelogFormat {
    pub flavor: Flavor,
    ignore_parse_errors: bool,
    rows: JsonFormat,
}

impl ChangelogFormat {
    /// `format`: `debezium-json`, `canal-json` or `maxwell-json`; options as Flink names them
    /// (`debezium-json.schema-include`, `<format>.ignore-parse-errors`,
    /// `<format>.timestamp-format.standard`, …).
    pub fn from_options(format: &str, options: &HashMap<String, String>) -> Result<Self, String> {
        let prefix = format!("{format}.");
        let ignore_parse_errors =
            bool_option(options, &format!("{prefix}ignore-parse-errors"), false)?;
        let flavor = match format {
            "debezium-json" => Flavor::Debezium {
                schema_include: bool_option(options, &format!("{prefix}schema-include"), false)?,
            },
            "canal-json" => Flavor::Canal,
            "maxwell-json" => Flavor::Maxwell,
            other => return Err(format!("'{other}' is not a changelog format")),
        };
        // The rows' own options, under the json format's names.
        let mut row_options: HashMap<String, String> = options
            .iter()
            .filter_map(|(k, v)| {
                let key = k.strip_prefix(&prefix)?;
                matches!(
                    key,
                    "timestamp-format.standard"
                        | "map-null-key.mode"
                        | "map-null-key.literal"
                        | "encode.decimal-as-plain-number"
                )
                .then(|| (format!("json.{key}"), v.clone()))
            })
            .collect();
        row_options.insert("format".into(), "json".into());
        Ok(ChangelogFormat {
            flavor,
            ignore_parse_errors,
            rows: JsonFormat::from_options(&row_options)?,
        })
    }

    pub fn decoder(&self, schema: &Schema, zone: &SessionZone) -> Result<ChangelogDecoder, String> {
        Ok(ChangelogDecoder {
            format: self.clone(),
            rows: self.rows.decoder(schema, zone)?,
            kinds: Vec::new(),
            skipped: 0,
            line: String::new(),
        })
    }

    /// Appends a chunk's rows as change lines, each ended by `\n`.
    pub fn encode_batch(
        &self,
        batch: &RecordBatch,
        kinds: Option<&[RowKind]>,
        schema: &Schema,
        out: &mut Vec<u8>,
    ) {
        let mut rows = Vec::new();
        self.rows.encode_batch(batch, schema, &mut rows);
        let lines = rows.split(|b| *b == b'\n');
        for (i, row) in lines.take(batch.num_rows()).enumerate() {
            let kind = kinds.map_or(RowKind::Insert, |k| k[i]);
            let adds = matches!(kind, RowKind::Insert | RowKind::UpdateAfter);
            let (head, tail): (&[u8], &[u8]) = match (self.flavor, adds) {
                (Flavor::Debezium { .. }, true) => {
                    (b"{\"before\":null,\"after\":", b",\"op\":\"c\"}")
                }
                (Flavor::Debezium { .. }, false) => {
                    (b"{\"before\":", b",\"after\":null,\"op\":\"d\"}")
                }
                (Flavor::Canal, true) => (b"{\"data\":[", b"],\"type\":\"INSERT\"}"),
                (Flavor::Canal, false) => (b"{\"data\":[", b"],\"type\":\"DELETE\"}"),
                (Flavor::Maxwell, true) => (b"{\"data\":", b",\"type\":\"insert\"}"),
                (Flavor::Maxwell, false) => (b"{\"data\":", b",\"type\":\"delete\"}"),
            };
            out.extend_from_slice(head);
            out.extend_from_slice(row);
            out.extend_from_slice(tail);
            out.push(b'\n');
        }
    }
}

/// Whether a table's columns can be written and read by a changelog format.
pub fn check_schema(schema: &Schema) -> Result<(), String> {
    match schema.fields.iter().find(|f| f.name == ROW_KIND_COLUMN) {
        Some(f) => Err(format!("a column may not be named '{}'", f.name)),
        None => Ok(()),
    }
}

/// A row as its JSON object.
type JsonRow = Map<String, Value>;

pub struct ChangelogDecoder {
    format: ChangelogFormat,
    rows: JsonDecoder,
    /// The kind of each row pushed to `rows` this batch.
    kinds: Vec<RowKind>,
    skipped: u64,
    line: String,
}

/// `data` with the members of `old` in place of its own: the row before an update (canal,
/// maxwell).
fn with_old(data: &Map<String, Value>, old: Option<&Value>) -> Map<String, Value> {
    let mut before = data.clone();
    if let Some(Value::Object(old)) = old {
        for (k, v) in old {
            before.insert(k.clone(), v.clone());
        }
    }
    before
}

impl ChangelogDecoder {
    /// The changes of one line, in order.
    fn changes(&self, value: &Value) -> Result<Vec<(RowKind, JsonRow)>, String> {
        let object = |v: Option<&Value>, what: &str| match v {
            Some(Value::Object(m)) => Ok(m.clone()),
            _ => Err(format!("'{what}' is not an object")),
        };
        let Value::Object(top) = value else {
            return Err("the line is not a JSON object".into());
        };
        Ok(match self.format.flavor {
            Flavor::Debezium { schema_include } => {
                let change = if schema_include {
                    match top.get("payload") {
                        Some(Value::Object(p)) => p,
                        _ => {
                            return Err("there is no 'payload' object; with 'debezium-json.schema-include' every record carries one".into());
                        }
                    }
                } else {
                    top
                };
                let op = change.get("op").and_then(Value::as_str).unwrap_or_default();
                match op {
                    "c" | "r" => vec![(RowKind::Insert, object(change.get("after"), "after")?)],
                    "u" => {
                        let before = match change.get("before") {
                            Some(Value::Object(m)) => m.clone(),
                            _ => {
                                return Err("the update's 'before' is null; with PostgreSQL, set the table's REPLICA IDENTITY to FULL".into());
                            }
                        };
                        vec![
                            (RowKind::UpdateBefore, before),
                            (RowKind::UpdateAfter, object(change.get("after"), "after")?),
                        ]
                    }
                    "d" => vec![(RowKind::Delete, object(change.get("before"), "before")?)],
                    other => return Err(format!("unknown operation '{other}'")),
                }
            }
            Flavor::Canal => {
                let kind = top.get("type").and_then(Value::as_str).unwrap_or_default();
                let rows = match top.get("data") {
                    Some(Value::Array(rows)) => rows.as_slice(),
                    _ => &[],
                };
                let olds = match top.get("old") {
                    Some(Value::Array(olds)) => olds.as_slice(),
                    _ => &[],
                };
                let mut changes = Vec::new();
                for (i, row) in rows.iter().enumerate() {
                    let Value::Object(row) = row else {
                        return Err("a row of 'data' is not an object".into());
                    };
                    match kind {
                        "INSERT" => changes.push((RowKind::Insert, row.clone())),
                        "UPDATE" => {
                            changes.push((RowKind::UpdateBefore, with_old(row, olds.get(i))));
                            changes.push((RowKind::UpdateAfter, row.clone()));
                        }
                        "DELETE" => changes.push((RowKind::Delete, row.clone())),
                        // DDL and other events carry no rows of the table.
                        _ => {}
                    }
                }
                changes
            }
            Flavor::Maxwell => {
                let kind = top.get("type").and_then(Value::as_str).unwrap_or_default();
                let data = || object(top.get("data"), "data");
                match kind {
                    "insert" => vec![(RowKind::Insert, data()?)],
                    "update" => {
                        let row = data()?;
                        vec![
                            (RowKind::UpdateBefore, with_old(&row, top.get("old"))),
                            (RowKind::UpdateAfter, row),
                        ]
                    }
                    "delete" => vec![(RowKind::Delete, data()?)],
                    _ => Vec::new(),
                }
            }
        })
    }

    pub fn push_line(&mut self, line: &str, line_number: u64) -> Result<(), FormatError> {
        let line = if line_number == 1 {
            line.strip_prefix('\u{feff}').unwrap_or(line)
        } else {
            line
        };
        if line.trim().is_empty() {
            return Ok(());
        }
        let changes = serde_json::from_str::<Value>(line)
            .map_err(|e| e.to_string())
            .and_then(|v| self.changes(&v));
        let changes = match changes {
            Ok(changes) => changes,
            Err(_) if self.format.ignore_parse_errors => {
                self.skipped += 1;
                return Ok(());
            }
            Err(message) => {
                return Err(FormatError {
                    line: line_number,
                    column: None,
                    message: format!(
                        "not a {} change record: {message}",
                        self.format.flavor.name()
                    ),
                });
            }
        };
        for (kind, row) in changes {
            self.line.clear();
            self.line.push_str(&Value::Object(row).to_string());
            self.rows.push_line(&self.line, line_number)?;
            self.kinds.push(kind);
        }
        Ok(())
    }

    pub fn buffered_bytes(&self) -> usize {
        self.rows.buffered_bytes()
    }

    /// The rows so far with their kinds in a last column.
    pub fn finish_batch(&mut self) -> Result<RecordBatch, FormatError> {
        let batch = self.rows.finish_batch()?;
        let kinds = std::mem::take(&mut self.kinds);
        let codes = Int8Array::from_iter_values(kinds.iter().map(|&k| k.to_byte() as i8));
        let mut fields: Vec<ArrowField> = batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.push(DataType::not_null(TypeKind::TinyInt).to_arrow_field(ROW_KIND_COLUMN));
        let mut columns = batch.columns().to_vec();
        columns.push(Arc::new(codes));
        RecordBatch::try_new_with_options(
            Arc::new(arrow_schema::Schema::new(fields)),
            columns,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(kinds.len())),
        )
        .map_err(|e| FormatError {
            line: 0,
            column: None,
            message: e.to_string(),
        })
    }

    pub fn end_of_input(&mut self) -> Result<(), FormatError> {
        self.rows.end_of_input()
    }

    /// Records never span lines in this format.
    pub fn open_record_line(&self) -> Option<u64> {
        None
    }

    pub fn rows_skipped(&self) -> u64 {
        self.skipped + self.rows.rows_skipped()
    }

    /// Rows buffered for the next batch.
    pub fn buffered_rows(&self) -> usize {
        self.kinds.len()
    }

    pub fn push_lines(
        &mut self,
        text: &str,
        first_line: u64,
        limit: crate::connector::BatchLimit,
    ) -> Result<crate::connector::Decoded, FormatError> {
        decode_lines(self, text, first_line, limit)
    }
}
