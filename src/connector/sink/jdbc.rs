//! Flink's `jdbc` connector as a sink, for PostgreSQL (`url` = `jdbc:postgresql://host[:port]/db`).
//!
//! - With a `PRIMARY KEY … NOT ENFORCED` it writes upserts: `+I`/`+U` rows become
//!   `INSERT … ON CONFLICT (key) DO UPDATE`, `-U`/`-D` rows `DELETE … WHERE key`, as Flink's
//!   reduced buffer does (`-U` deletes; the `+U` after it writes the row again). Rows are
//!   buffered by key, the last change of a key winning, and written when the buffer holds
//!   `sink.buffer-flush.max-rows` keys (Flink's default 100), when
//!   `sink.buffer-flush.interval` (default 1 s) has passed since the first buffered change,
//!   and when the input ends. Each flush is one transaction.
//! - Without a primary key it appends (`INSERT`), and an updating query is refused when it is
//!   planned, with Flink's message.
//!
//! A failed flush is tried again `sink.max-retries` times (default 3), a second apart times
//! the attempt, reconnecting when the connection is gone, unless the server refused the rows
//! themselves (a constraint or a value it cannot hold): those fail at once, naming the table.
//! The job fails rather than lose a change it took.
//!
//! Values travel as SQL literals of Flink's text for them (the server casts each to its
//! column's type); the session runs in UTC, so a `TIMESTAMP_LTZ` is written as its instant.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use arrow_array::{Array, ArrayRef, BinaryArray};

use super::check_plain_sink;
use crate::connector::ConnectorError;
use crate::connector::jdbc::{JdbcTarget, error_text, quoted};
use crate::connector::registry::{SinkFactory, SinkRequest};
use crate::connector::sink::Sink;
use crate::exec::error::ExecError;
use crate::types::chunk::{RowKind, StreamChunk};
use crate::types::option_value::parse_duration;
use crate::types::text::format_value;
use crate::types::time::SessionZone;
use crate::types::{DataType, Schema, TypeKind};

/// The `jdbc` connector's sink.
pub struct JdbcSinkFactory;

impl SinkFactory for JdbcSinkFactory {
    fn identifier(&self) -> &'static str {
        "jdbc"
    }

    fn check(&self, request: &SinkRequest) -> Result<(), String> {
        check_plain_sink(request, self.identifier())
    }

    /// Updates need a key to apply them by.
    fn accepts_updates(&self, request: &SinkRequest) -> bool {
        request.table.primary_key.is_some()
    }

    fn validate(&self, request: &SinkRequest) -> Result<(), ConnectorError> {
        JdbcOptions::of(request).map(|_| ())
    }

    fn create<'a>(
        &self,
        request: &SinkRequest,
        _out: &'a mut dyn std::io::Write,
    ) -> Result<Box<dyn Sink + 'a>, ConnectorError> {
        let options = JdbcOptions::of(request)?;
        let client = options.server.connect().map_err(ConnectorError)?;
        Ok(Box::new(JdbcSink {
            client,
            options,
            schema: request.written.clone(),
            zone: SessionZone::utc(),
            upserts: HashMap::new(),
            appends: Vec::new(),
            first_buffered: None,
        }))
    }
}

/// A `jdbc` sink table's options, checked.
struct JdbcOptions {
    server: JdbcTarget,
    columns: Vec<String>,
    /// The primary key's columns (positions in `columns`), when the table has one.
    key: Option<Vec<usize>>,
    max_rows: usize,
    interval: Option<Duration>,
    max_retries: u32,
}

impl JdbcOptions {
    fn of(request: &SinkRequest) -> Result<Self, ConnectorError> {
        let table = request.table;
        let server = JdbcTarget::of(table, request.name)?;
        let fail = |m: String| ConnectorError(format!("table '{}': {m}", request.name));
        let schema = request.written;
        for f in &schema.fields {
            if !holds(&f.data_type.kind) {
                return Err(fail(format!(
                    "PostgreSQL cannot hold column '{}' of type {} through this sink",
                    f.name, f.data_type
                )));
            }
        }
        let columns: Vec<String> = schema.fields.iter().map(|f| f.name.clone()).collect();
        let key = match &table.primary_key {
            Some(pk) => Some(
                pk.iter()
                    .map(|c| {
                        columns.iter().position(|n| n == c).ok_or_else(|| {
                            fail(format!("the primary key column '{c}' is not written"))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            None => None,
        };
        let number = |key: &str, default: u64| -> Result<u64, ConnectorError> {
            match table.option(key) {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse()
                    .map_err(|_| fail(format!("'{key}' must be a number, got '{v}'"))),
            }
        };
        let max_rows = number("sink.buffer-flush.max-rows", 100)? as usize;
        let max_retries = number("sink.max-retries", 3)? as u32;
        let interval = match table.option("sink.buffer-flush.interval") {
            None => Some(Duration::from_secs(1)),
            Some(v) => match parse_duration(v) {
                Some(0) => None,
                Some(nanos) if nanos > 0 => Some(Duration::from_nanos(nanos as u64)),
                _ => {
                    return Err(fail(format!(
                        "'sink.buffer-flush.interval' must be a duration, got '{v}'"
                    )));
                }
            },
        };
        Ok(JdbcOptions {
            server,
            columns,
            key,
            max_rows: max_rows.max(1),
            interval,
            max_retries,
        })
    }
}

/// Whether the sink can write a column of this kind.
fn holds(kind: &TypeKind) -> bool {
    !matches!(
        kind,
        TypeKind::Null
            | TypeKind::Array(_)
            | TypeKind::Map(..)
            | TypeKind::Row(_)
            | TypeKind::IntervalYearMonth
            | TypeKind::IntervalDayTime
    )
}

/// Whether trying again cannot help: the server refused the rows themselves (SQLSTATE class
/// 22, data exception, or 23, integrity constraint violation), or the statement (42).
fn refused_rows(e: &postgres::Error) -> bool {
    e.code().is_some_and(|c| {
        ["22", "23", "42"]
            .iter()
            .any(|class| c.code().starts_with(class))
    })
}

/// A row's values (or a key's) as SQL literals, `None` for NULL.
type Literals = Vec<Option<String>>;

pub struct JdbcSink {
    client: postgres::Client,
    options: JdbcOptions,
    schema: Schema,
    zone: SessionZone,
    /// With a key: the last change of each key, `true` to write the row, `false` to delete it.
    upserts: HashMap<Literals, (bool, Literals)>,
    /// Without a key: the rows to append.
    appends: Vec<Literals>,
    first_buffered: Option<Instant>,
}

impl JdbcSink {
    /// A value as a SQL literal: Flink's text of it, quoted (the server casts it to the
    /// column's type); bytes in PostgreSQL's hex form.
    fn literal(
        column: &ArrayRef,
        row: usize,
        data_type: &DataType,
        zone: &SessionZone,
    ) -> Option<String> {
        if column.is_null(row) {
            return None;
        }
        if let Some(bytes) = column.as_any().downcast_ref::<BinaryArray>() {
            let hex: String = bytes
                .value(row)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            return Some(format!("'\\x{hex}'"));
        }
        let text = format_value(column, row, data_type, zone)?;
        Some(format!("'{}'", text.replace('\'', "''")))
    }

    fn buffered(&self) -> usize {
        self.upserts.len() + self.appends.len()
    }

    /// The statements writing what is buffered, in one transaction.
    fn statements(&self) -> String {
        let options = &self.options;
        let columns: Vec<String> = options.columns.iter().map(|c| quoted(c)).collect();
        let row_text = |values: &[Option<String>]| {
            let cells: Vec<&str> = values
                .iter()
                .map(|v| v.as_deref().unwrap_or("NULL"))
                .collect();
            format!("({})", cells.join(", "))
        };
        let mut sql = String::from("BEGIN;\n");
        let insert = |rows: &mut dyn Iterator<Item = &Vec<Option<String>>>| {
            let values: Vec<String> = rows.map(|r| row_text(r)).collect();
            (!values.is_empty()).then(|| {
                format!(
                    "INSERT INTO {} ({}) VALUES {}",
                    options.server.target,
                    columns.join(", "),
                    values.join(", ")
                )
            })
        };
        match &options.key {
            None => {
                if let Some(text) = insert(&mut self.appends.iter()) {
                    sql.push_str(&text);
                    sql.push_str(";\n");
                }
            }
            Some(key) => {
                let mut writes = self.upserts.values().filter(|(w, _)| *w).map(|(_, r)| r);
                if let Some(text) = insert(&mut writes) {
                    let key_columns: Vec<&str> = key.iter().map(|&k| columns[k].as_str()).collect();
                    let others: Vec<String> = (0..columns.len())
                        .filter(|i| !key.contains(i))
                        .map(|i| format!("{0} = EXCLUDED.{0}", columns[i]))
                        .collect();
                    let action = if others.is_empty() {
                        "DO NOTHING".to_string()
                    } else {
                        format!("DO UPDATE SET {}", others.join(", "))
                    };
                    sql.push_str(&format!(
                        "{text} ON CONFLICT ({}) {action};\n",
                        key_columns.join(", ")
                    ));
                }
                let deletes: Vec<String> = self
                    .upserts
                    .iter()
                    .filter(|(_, (w, _))| !*w)
                    .map(|(k, _)| row_text(k))
                    .collect();
                if !deletes.is_empty() {
                    let key_columns: Vec<&str> = key.iter().map(|&k| columns[k].as_str()).collect();
                    sql.push_str(&format!(
                        "DELETE FROM {} WHERE ({}) IN ({});\n",
                        options.server.target,
                        key_columns.join(", "),
                        deletes.join(", ")
                    ));
                }
            }
        }
        sql.push_str("COMMIT;");
        sql
    }

    fn flush(&mut self) -> Result<(), ExecError> {
        if self.buffered() == 0 {
            return Ok(());
        }
        let sql = self.statements();
        let mut attempt = 0;
        loop {
            match self.client.batch_execute(&sql) {
                Ok(()) => break,
                Err(e) => {
                    let _ = self.client.batch_execute("ROLLBACK");
                    if refused_rows(&e) || attempt >= self.options.max_retries {
                        return Err(ExecError::Sink(format!(
                            "table '{}': writing {} row(s) to {} failed: {}",
                            self.options.server.name,
                            self.buffered(),
                            self.options.server.target,
                            error_text(&e)
                        )));
                    }
                    attempt += 1;
                    std::thread::sleep(Duration::from_secs(u64::from(attempt)));
                    if self.client.is_closed() {
                        self.client = self.options.server.connect().map_err(ExecError::Sink)?;
                    }
                }
            }
        }
        self.upserts.clear();
        self.appends.clear();
        self.first_buffered = None;
        Ok(())
    }
}

impl Sink for JdbcSink {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        let batch = &chunk.batch;
        for row in 0..batch.num_rows() {
            let values: Vec<Option<String>> = batch
                .columns()
                .iter()
                .zip(&self.schema.fields)
                .map(|(c, f)| Self::literal(c, row, &f.data_type, &self.zone))
                .collect();
            match &self.options.key {
                Some(key) => {
                    let key_values: Vec<Option<String>> =
                        key.iter().map(|&k| values[k].clone()).collect();
                    let write = matches!(chunk.kind(row), RowKind::Insert | RowKind::UpdateAfter);
                    self.upserts.insert(key_values, (write, values));
                }
                None => {
                    if chunk.kind(row) != RowKind::Insert {
                        return Err(ExecError::Sink(format!(
                            "table '{}' has no primary key and takes inserts only",
                            self.options.server.name
                        )));
                    }
                    self.appends.push(values);
                }
            }
            self.first_buffered.get_or_insert_with(Instant::now);
            if self.buffered() >= self.options.max_rows {
                self.flush()?;
            }
        }
        // A steady stream is flushed on time too, not only a quiet one.
        self.on_idle()
    }

    fn on_idle(&mut self) -> Result<(), ExecError> {
        match (self.first_buffered, self.options.interval) {
            (Some(first), Some(interval)) if first.elapsed() >= interval => self.flush(),
            _ => Ok(()),
        }
    }

    /// Flink's flush on `snapshotState`: what the barrier follows is in the database before
    /// the checkpoint completes. Upserts by key replay idempotently after a restore.
    fn pre_commit(&mut self, _checkpoint: u64) -> Result<Vec<u8>, ExecError> {
        self.flush()?;
        Ok(Vec::new())
    }

    fn finish(&mut self) -> Result<(), ExecError> {
        self.flush()
    }
}
