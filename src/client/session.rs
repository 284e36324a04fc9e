//! A client session: the catalog, the `SET` options, and the execution of each statement
//! with Flink SQL client's messages and result printing.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::catalog::{Catalog, CatalogEntry, ViewDef};
use crate::clock::{Clock, SystemClock};
use crate::connector::registry::SinkRequest;
use crate::connector::sink::Sink;
use crate::exec::error::ExecError;
use crate::exec::not_null::NotNullEnforcer;
use crate::function::EvalContext;
use crate::function::string::like_to_regex;
use crate::job::{JobOptions, build_job};
use crate::plan::bind::{Binder, output_names, repeated_name};
use crate::plan::explain::Spelling;
use crate::plan::logical::LogicalPlan;
use crate::plan::stream::translate::{PlannerOptions, translate_insert};
use crate::plan::stream::{StreamPlan, require_update_before, translate};
use crate::runtime::graph::JobGraph;
use crate::runtime::run::{self, RunOptions};
use crate::sql::SqlError;
use crate::sql::ast::{
    AlterTableAction, ColumnDef, ColumnKind, CreateTable, CreateView, LikeMode, LikePart,
    ObjectKind, ParsedStatement, Position, ShowLike, Statement, TableLike, WatermarkDef,
};
use crate::sql::parser::{object_name_last, session_object_name};
use crate::types::Schema;
use crate::types::chunk::{RowKind, StreamChunk};
use crate::types::text::format_value;
use crate::types::time::SessionZone;
use sqlparser::ast::ObjectName;

use super::tableau::{self, NULL_TEXT, border, row_line, widths_by_type};

pub const LOCAL_TIME_ZONE: &str = "table.local-time-zone";
pub const NOT_NULL_ENFORCER: &str = "table.exec.sink.not-null-enforcer";
const RUNTIME_MODE: &str = "execution.runtime-mode";
const AUTO_WATERMARK_INTERVAL: &str = "pipeline.auto-watermark-interval";
const PARALLELISM: &str = "parallelism.default";
const IDLE_TIMEOUT: &str = "table.exec.source.idle-timeout";
/// Idle state retention of the operators that keep state per key (0: for ever).
const STATE_TTL: &str = "table.exec.state.ttl";
const CDC_EVENTS_DUPLICATE: &str = "table.exec.source.cdc-events-duplicate";
const MAX_PARALLELISM: &str = "pipeline.max-parallelism";
pub const RESULT_MODE: &str = "sql-client.execution.result-mode";
/// The SQL client's column cap. Flink 2.3 reads only this key: the older
/// `sql-client.display.max-column-width` is gone from it and, set, changes nothing.
pub const MAX_COLUMN_WIDTH: &str = "table.display.max-column-width";
/// Rows a `table`-mode result keeps (Flink's default 1,000,000; 0 or less: no bound).
const MAX_TABLE_RESULT_ROWS: &str = "sql-client.execution.max-table-result.rows";

/// An error of one statement: bad SQL (with position) or a failed job.
#[derive(Debug, thiserror::Error)]
pub enum StatementError {
    #[error(transparent)]
    Sql(#[from] SqlError),
    #[error("{0}")]
    Job(String),
    /// The user cancelled a query (Ctrl-C): the rows printed so far stand, followed by Flink's
    /// "Query terminated" line.
    #[error("the query was cancelled")]
    Interrupted,
}

impl From<ExecError> for StatementError {
    fn from(e: ExecError) -> Self {
        StatementError::Job(e.to_string())
    }
}

impl From<crate::connector::ConnectorError> for StatementError {
    fn from(e: crate::connector::ConnectorError) -> Self {
        StatementError::Job(e.0)
    }
}

pub struct Session {
    catalog: Catalog,
    options: BTreeMap<String, String>,
    clock: Arc<dyn Clock>,
    host_zone: SessionZone,
    pub cancel: Arc<AtomicBool>,
}

impl Default for Session {
    fn default() -> Self {
        Self::new(Arc::new(SystemClock))
    }
}

impl Session {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Session {
            catalog: Catalog::default(),
            options: BTreeMap::new(),
            clock,
            host_zone: SessionZone::system(),
            cancel: Arc::new(AtomicBool::new(false)),
        }
    }

    fn zone(&self) -> SessionZone {
        match self.options.get(LOCAL_TIME_ZONE).map(String::as_str) {
            None | Some("default") => self.host_zone.clone(),
            Some(name) => SessionZone::new(name).unwrap_or_else(|_| self.host_zone.clone()),
        }
    }

    /// Runs a job; in batch mode its rows reach the sink in a fixed order (split by split).
    fn run_job(
        &self,
        graph: JobGraph,
        sink: &mut dyn Sink,
        cancel: Arc<AtomicBool>,
    ) -> Result<(), ExecError> {
        let options = RunOptions {
            ordered: self.batch_mode(),
            clock: self.clock.clone(),
            metrics: Arc::default(),
        };
        let result = run::run(graph, sink, cancel, &options);
        // Beyond Flink, which drops late rows silently: say how many were dropped, and where.
        for (task, late) in options.metrics.late_rows() {
            eprintln!("[WARNING] {late} late row(s) dropped by {task}");
        }
        result
    }

    /// The options planning reads (a value other than `true` is false, as Flink's boolean
    /// options read).
    fn planner_options(&self) -> PlannerOptions {
        PlannerOptions {
            cdc_events_duplicate: self
                .options
                .get(CDC_EVENTS_DUPLICATE)
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
        }
    }

    /// The options a job is built with, checked as Flink checks them when a job starts.
    fn job_options(&self) -> Result<JobOptions, StatementError> {
        let mut options = JobOptions::default();
        if let Some(text) = self.options.get(AUTO_WATERMARK_INTERVAL) {
            options.auto_watermark_interval = crate::connector::option_value::parse_duration(text)
                .map(|nanos| nanos / 1_000_000)
                .ok_or_else(|| {
                    StatementError::Job(format!(
                        "Could not parse value '{text}' for key '{AUTO_WATERMARK_INTERVAL}'."
                    ))
                })?;
        }
        if let Some(text) = self.options.get(STATE_TTL) {
            options.state_ttl = crate::connector::option_value::parse_duration(text)
                .map(|nanos| nanos / 1_000_000)
                .ok_or_else(|| {
                    StatementError::Job(format!(
                        "Could not parse value '{text}' for key '{STATE_TTL}'."
                    ))
                })?;
        }
        if let Some(text) = self.options.get(IDLE_TIMEOUT) {
            options.idle_timeout = crate::connector::option_value::parse_duration(text)
                .map(|nanos| nanos / 1_000_000)
                .ok_or_else(|| {
                    StatementError::Job(format!(
                        "Could not parse value '{text}' for key '{IDLE_TIMEOUT}'."
                    ))
                })?;
        }
        let integer = |key: &str| -> Result<Option<i64>, StatementError> {
            self.options
                .get(key)
                .map(|text| {
                    text.trim().parse::<i64>().map_err(|_| {
                        StatementError::Job(format!(
                            "Could not parse value '{text}' for key '{key}'."
                        ))
                    })
                })
                .transpose()
        };
        // -1 is Flink's "the default".
        match integer(PARALLELISM)? {
            None | Some(-1) => {}
            Some(p) if p >= 1 => options.parallelism = p.min(i64::from(u32::MAX)) as u32,
            Some(_) => {
                return Err(StatementError::Job(
                    "Parallelism must be at least one, or ExecutionConfig.PARALLELISM_DEFAULT (use system default).".into(),
                ));
            }
        }
        match integer(MAX_PARALLELISM)? {
            None | Some(-1) => {}
            Some(m) if (1..=32768).contains(&m) && m >= i64::from(options.parallelism) => {
                options.max_parallelism = m as u32
            }
            Some(m) => {
                return Err(StatementError::Job(format!(
                    "The maximum parallelism must be between the parallelism ({}) and 32768, got {m} for key '{MAX_PARALLELISM}'.",
                    options.parallelism
                )));
            }
        }
        Ok(options)
    }

    fn batch_mode(&self) -> bool {
        self.options
            .get(RUNTIME_MODE)
            .is_some_and(|m| m.eq_ignore_ascii_case("batch"))
    }

    fn eval_context(&self) -> EvalContext {
        EvalContext {
            zone: self.zone(),
            clock: self.clock.clone(),
            query_start: self.clock.now_nanos(),
            batch_mode: self.batch_mode(),
            num_rows: 0,
        }
    }

    /// Executes one statement, printing its result on `out`.
    pub fn execute(
        &mut self,
        parsed: &ParsedStatement,
        out: &mut dyn Write,
    ) -> Result<(), StatementError> {
        // Like Flink, SET takes any zone id; each statement that plans a query checks it.
        if matches!(
            parsed.statement,
            Statement::Query(_) | Statement::Insert(_) | Statement::Explain { .. }
        ) && let Some(zone) = self.options.get(LOCAL_TIME_ZONE)
            && zone != "default"
            && !flink_session_zone_id(zone)
        {
            return Err(position_error(
                parsed,
                "Invalid time zone. The value should be a Time Zone Database (TZDB) ID such as 'America/Los_Angeles' to include daylight saving time. Fixed offsets are supported using 'GMT-03:00' or 'GMT+03:00'. Or use 'UTC' without time zone and daylight saving time.",
            ));
        }
        match &parsed.statement {
            Statement::Set { key: None, .. } => {
                let rows: Vec<Vec<String>> = self
                    .options
                    .iter()
                    .map(|(k, v)| vec![k.clone(), v.clone()])
                    .collect();
                print_rows(out, &["key", "value"], rows, None)?;
            }
            Statement::Set {
                key: Some(key),
                value,
            } => {
                let value = value.clone().unwrap_or_default();
                validate_option(key, &value, parsed)?;
                self.options.insert(key.clone(), value);
                succeeded(out)?;
            }
            Statement::Reset { key } => {
                match key {
                    Some(k) => {
                        self.options.remove(k);
                    }
                    None => self.options.clear(),
                }
                succeeded(out)?;
            }
            Statement::CreateTable(create) => {
                let name =
                    session_object_name(&create.name).map_err(|m| position_error(parsed, m))?;
                if self.is_new(
                    &name,
                    create.temporary,
                    create.if_not_exists,
                    "table",
                    parsed,
                )? {
                    let merged;
                    let create = match &create.like {
                        Some(like) => {
                            merged = self.merge_like(create, like)?;
                            &merged
                        }
                        None => create,
                    };
                    let table =
                        Binder::new(&self.catalog, &parsed.hints).bind_create_table(create)?;
                    self.catalog.insert(
                        name,
                        CatalogEntry::Table(Arc::new(table)),
                        create.temporary,
                    );
                }
                succeeded(out)?;
            }
            Statement::CreateView(create) => {
                let name =
                    session_object_name(&create.name).map_err(|m| position_error(parsed, m))?;
                if self.is_new(
                    &name,
                    create.temporary,
                    create.if_not_exists,
                    "view",
                    parsed,
                )? {
                    let view = self.define_view(create, parsed)?;
                    self.catalog
                        .insert(name, CatalogEntry::View(Arc::new(view)), create.temporary);
                }
                succeeded(out)?;
            }
            Statement::Drop(drop) => {
                let name =
                    session_object_name(&drop.name).map_err(|m| position_error(parsed, m))?;
                let what = if drop.kind == ObjectKind::Table {
                    "table"
                } else {
                    "view"
                };
                if !drop.temporary && self.catalog.get_in(&name, true).is_some() {
                    // Flink will not drop a permanent object a temporary one shadows.
                    return Err(position_error(
                        parsed,
                        format!(
                            "Temporary {what} with identifier '`default_catalog`.`default_database`.`{name}`' exists. Drop it first before removing the permanent {what}."
                        ),
                    ));
                }
                let matches = match (self.catalog.get_in(&name, drop.temporary), drop.kind) {
                    (Some(CatalogEntry::Table(_)), ObjectKind::Table)
                    | (Some(CatalogEntry::View(_)), ObjectKind::View) => true,
                    // IF EXISTS never fails, not even on an object of the other kind.
                    _ if drop.if_exists => false,
                    (None, _) if drop.temporary => {
                        return Err(position_error(
                            parsed,
                            format!(
                                "Temporary table or view with identifier 'default_catalog.default_database.{name}' does not exist."
                            ),
                        ));
                    }
                    _ => {
                        return Err(position_error(
                            parsed,
                            format!("{what} '{name}' does not exist"),
                        ));
                    }
                };
                if matches {
                    self.catalog.remove(&name, drop.temporary);
                }
                succeeded(out)?;
            }
            Statement::ShowTables { database, like } | Statement::ShowViews { database, like } => {
                let views_only = matches!(parsed.statement, Statement::ShowViews { .. });
                if let Some(db) = database {
                    show_database(db, "TABLES").map_err(|m| position_error(parsed, m))?;
                }
                let names = self
                    .catalog
                    .names()
                    .filter(|(_, e)| !views_only || matches!(e, CatalogEntry::View(_)))
                    .map(|(n, _)| n.clone());
                let rows = show_filter(like.as_ref(), names)
                    .map_err(|m| position_error(parsed, m))?
                    .into_iter()
                    .map(|n| vec![n])
                    .collect();
                let header = if views_only {
                    "view name"
                } else {
                    "table name"
                };
                print_rows(out, &[header], rows, None)?;
            }
            Statement::ShowFunctions {
                user_only,
                database,
                like,
            } => {
                if let Some(db) = database {
                    show_database(db, "FUNCTIONS").map_err(|m| position_error(parsed, m))?;
                }
                // The session has no user-defined functions.
                let names = crate::function::names()
                    .into_iter()
                    .filter(|_| !user_only)
                    .map(str::to_string);
                let rows = show_filter(like.as_ref(), names)
                    .map_err(|m| position_error(parsed, m))?
                    .into_iter()
                    .map(|n| vec![n])
                    .collect();
                print_rows(out, &["function name"], rows, None)?;
            }
            Statement::ShowSingle {
                header,
                value,
                scope,
                like,
            } => {
                if let Some(catalog) = scope {
                    let catalog = object_name_last(catalog);
                    if catalog != "default_catalog" {
                        return Err(position_error(
                            parsed,
                            format!("Catalog {catalog} does not exist"),
                        ));
                    }
                }
                let rows = show_filter(like.as_ref(), std::iter::once(value.to_string()))
                    .map_err(|m| position_error(parsed, m))?
                    .into_iter()
                    .map(|n| vec![n])
                    .collect();
                print_rows(out, &[header], rows, None)?;
            }
            Statement::ShowFixed { header, rows } => {
                let rows = rows
                    .iter()
                    .map(|r| r.iter().map(|c| c.to_string()).collect())
                    .collect();
                print_rows(out, header, rows, None)?;
            }
            Statement::ShowCreateTable(name) | Statement::ShowCreateView(name) => {
                let name = session_object_name(name).map_err(|m| position_error(parsed, m))?;
                // The object a query sees is the temporary one when both exist.
                let temporary = self.catalog.get_in(&name, true).is_some();
                let text = match self.catalog.get(&name) {
                    Some(CatalogEntry::Table(t))
                        if matches!(parsed.statement, Statement::ShowCreateTable(_)) =>
                    {
                        t.show_create(temporary)
                    }
                    Some(CatalogEntry::View(v))
                        if matches!(parsed.statement, Statement::ShowCreateView(_)) =>
                    {
                        v.show_create(temporary, &self.catalog)
                    }
                    found => {
                        let (asked, other) = match parsed.statement {
                            Statement::ShowCreateTable(_) => ("TABLE", "VIEW"),
                            _ => ("VIEW", "TABLE"),
                        };
                        let id = format!("`default_catalog`.`default_database`.`{name}`");
                        return Err(position_error(
                            parsed,
                            match found {
                                None => format!(
                                    "Could not execute SHOW CREATE {asked}. {} with identifier {id} does not exist.",
                                    if asked == "TABLE" { "Table" } else { "View" }
                                ),
                                Some(_) => format!(
                                    "SHOW CREATE {asked} is only supported for {}s, but {id} is a {}. Please use SHOW CREATE {other} instead.",
                                    asked.to_ascii_lowercase(),
                                    other.to_ascii_lowercase()
                                ),
                            },
                        ));
                    }
                };
                print_rows(out, &["result"], vec![vec![text]], None)?;
            }
            Statement::Describe { name, like } => {
                let name = session_object_name(name).map_err(|m| position_error(parsed, m))?;
                if self.catalog.get(&name).is_none() {
                    return Err(position_error(
                        parsed,
                        format!(
                            "Tables or views with the identifier 'default_catalog.default_database.{name}' doesn't exist."
                        ),
                    ));
                }
                let (schema, pk, watermark) = match self.catalog.get(&name) {
                    Some(CatalogEntry::Table(t)) => {
                        (t.schema(), t.primary_key.clone(), t.watermark.clone())
                    }
                    Some(CatalogEntry::View(v)) => (v.schema.clone(), None, None),
                    None => {
                        return Err(position_error(
                            parsed,
                            format!("table or view '{name}' does not exist"),
                        ));
                    }
                };
                let extras: Vec<String> = match self.catalog.get(&name) {
                    // A program's stream (`api/`): Flink describes it as the view it is, its
                    // proctime column without the PROCTIME() it is computed by here.
                    Some(CatalogEntry::Table(t)) if t.provided_source.is_none() => t
                        .columns
                        .iter()
                        .map(|c| match &c.source {
                            crate::catalog::ColumnSource::Computed { text, .. } => {
                                format!("AS {text}")
                            }
                            crate::catalog::ColumnSource::Metadata {
                                key: Some(k),
                                is_virtual,
                            } => {
                                format!(
                                    "METADATA FROM '{k}'{}",
                                    if *is_virtual { " VIRTUAL" } else { "" }
                                )
                            }
                            crate::catalog::ColumnSource::Metadata {
                                key: None,
                                is_virtual,
                            } => {
                                format!("METADATA{}", if *is_virtual { " VIRTUAL" } else { "" })
                            }
                            crate::catalog::ColumnSource::Physical => String::new(),
                        })
                        .collect(),
                    _ => vec![String::new(); schema.len()],
                };
                // Flink adds a `comment` column when some column has a comment.
                let comments: Vec<Option<String>> = match self.catalog.get(&name) {
                    Some(CatalogEntry::Table(t)) => {
                        t.columns.iter().map(|c| c.comment.clone()).collect()
                    }
                    _ => vec![None; schema.len()],
                };
                let with_comments = comments.iter().any(Option::is_some);
                let rows: Vec<Vec<String>> = schema
                    .fields
                    .iter()
                    .zip(extras)
                    .zip(comments)
                    .map(|((f, extra), comment)| {
                        let key = match &pk {
                            Some(cols) if cols.contains(&f.name) => {
                                format!("PRI({})", cols.join(", "))
                            }
                            _ => String::new(),
                        };
                        let wm = match &watermark {
                            Some(w) if w.column == f.name => w.text.clone(),
                            _ => String::new(),
                        };
                        let mut row = vec![
                            f.name.clone(),
                            f.describe_type(),
                            if f.data_type.nullable {
                                "TRUE"
                            } else {
                                "FALSE"
                            }
                            .to_string(),
                            key,
                            extra,
                            wm,
                        ];
                        if with_comments {
                            row.push(comment.unwrap_or_default());
                        }
                        row
                    })
                    .collect();
                let header = [
                    "name",
                    "type",
                    "null",
                    "key",
                    "extras",
                    "watermark",
                    "comment",
                ];
                let header = if with_comments {
                    &header[..]
                } else {
                    &header[..6]
                };
                let keep = show_matcher(like.as_ref()).map_err(|m| position_error(parsed, m))?;
                let rows = rows.into_iter().filter(|r| keep(&r[0])).collect();
                print_rows(out, header, rows, None)?;
            }
            Statement::AlterTable {
                name,
                if_exists,
                action,
            } => {
                let name = session_object_name(name).map_err(|m| position_error(parsed, m))?;
                let table = match self.catalog.get_in(&name, false) {
                    Some(CatalogEntry::Table(t)) => t.clone(),
                    _ if *if_exists => return succeeded(out),
                    _ => {
                        return Err(position_error(
                            parsed,
                            format!(
                                "Table `default_catalog`.`default_database`.`{name}` doesn't exist or is a temporary table."
                            ),
                        ));
                    }
                };
                let mut altered = (*table).clone();
                match action {
                    AlterTableAction::RenameTo(new_name) => {
                        let new_name =
                            session_object_name(new_name).map_err(|m| position_error(parsed, m))?;
                        if self.catalog.get_in(&new_name, false).is_some() {
                            return Err(position_error(
                                parsed,
                                format!(
                                    "Could not execute ALTER TABLE default_catalog.default_database.{name} RENAME TO default_catalog.default_database.{new_name}: a table or view named {new_name} already exists"
                                ),
                            ));
                        }
                        self.catalog.remove(&name, false);
                        altered.name = new_name.clone();
                        self.catalog.insert(
                            new_name,
                            CatalogEntry::Table(Arc::new(altered)),
                            false,
                        );
                        return succeeded(out);
                    }
                    AlterTableAction::SetOptions(options) => {
                        for (key, value) in options {
                            match altered.options.iter_mut().find(|(k, _)| k == key) {
                                Some(existing) => existing.1 = value.clone(),
                                None => altered.options.push((key.clone(), value.clone())),
                            }
                        }
                    }
                    AlterTableAction::ResetOptions(keys) => {
                        altered.options.retain(|(k, _)| !keys.contains(k));
                    }
                    AlterTableAction::AddColumns(_)
                    | AlterTableAction::ModifyColumns(_)
                    | AlterTableAction::DropColumns(_)
                    | AlterTableAction::RenameColumn { .. } => {
                        // Column changes rebuild the table from its definition and bind it again,
                        // so computed column types and the watermark are checked anew.
                        let mut create = table_as_create(&table);
                        match action {
                            AlterTableAction::AddColumns(added) => {
                                for c in added {
                                    if create.columns.iter().any(|e| e.name == c.name) {
                                        return Err(position_error(
                                            parsed,
                                            format!(
                                                "Try to add a column `{}` which already exists in the table.",
                                                c.name
                                            ),
                                        ));
                                    }
                                    create.columns.push(c.clone());
                                }
                            }
                            AlterTableAction::ModifyColumns(modified) => {
                                for c in modified {
                                    let Some(slot) =
                                        create.columns.iter_mut().find(|e| e.name == c.name)
                                    else {
                                        return Err(position_error(
                                            parsed,
                                            format!(
                                                "Try to modify a column `{}` which does not exist in the table.",
                                                c.name
                                            ),
                                        ));
                                    };
                                    *slot = c.clone();
                                }
                            }
                            AlterTableAction::DropColumns(names) => {
                                for n in names {
                                    if !create.columns.iter().any(|e| &e.name == n) {
                                        return Err(position_error(
                                            parsed,
                                            format!(
                                                "The column `{n}` does not exist in the base table."
                                            ),
                                        ));
                                    }
                                    if create.watermark.as_ref().is_some_and(|w| &w.column == n)
                                        || create
                                            .primary_key
                                            .as_ref()
                                            .is_some_and(|k| k.contains(n))
                                    {
                                        return Err(position_error(
                                            parsed,
                                            format!(
                                                "The column `{n}` is referenced by the watermark or the primary key and cannot be dropped."
                                            ),
                                        ));
                                    }
                                    create.columns.retain(|e| &e.name != n);
                                }
                            }
                            AlterTableAction::RenameColumn { from, to } => {
                                if create.columns.iter().any(|e| &e.name == to) {
                                    return Err(position_error(
                                        parsed,
                                        format!("Try to rename to an existing column `{to}`."),
                                    ));
                                }
                                // Expressions keep the old name; a column they read is not renamed.
                                let quoted = format!("`{}`", from.replace('`', "``"));
                                let referenced = table.columns.iter().any(|c| {
                                    matches!(&c.source, crate::catalog::ColumnSource::Computed { text, .. } if text.contains(&quoted))
                                }) || table.watermark.as_ref().is_some_and(|w| w.text.contains(&quoted));
                                if referenced {
                                    return Err(position_error(
                                        parsed,
                                        format!(
                                            "The column `{from}` is referenced by a computed column or the watermark and cannot be renamed."
                                        ),
                                    ));
                                }
                                let Some(slot) =
                                    create.columns.iter_mut().find(|e| &e.name == from)
                                else {
                                    return Err(position_error(
                                        parsed,
                                        format!(
                                            "The column `{from}` does not exist in the base table."
                                        ),
                                    ));
                                };
                                slot.name = to.clone();
                                if let Some(w) =
                                    create.watermark.as_mut().filter(|w| &w.column == from)
                                {
                                    w.column = to.clone();
                                }
                                if let Some(pk) = create.primary_key.as_mut() {
                                    for k in pk.iter_mut().filter(|k| *k == from) {
                                        *k = to.clone();
                                    }
                                }
                            }
                            _ => {}
                        }
                        altered =
                            Binder::new(&self.catalog, &parsed.hints).bind_create_table(&create)?;
                    }
                }
                self.catalog
                    .insert(name, CatalogEntry::Table(Arc::new(altered)), false);
                succeeded(out)?;
            }
            Statement::AlterViewAs { name, query } => {
                let view_name = session_object_name(name).map_err(|m| position_error(parsed, m))?;
                let Some(CatalogEntry::View(old)) = self.catalog.get_in(&view_name, false).cloned()
                else {
                    return Err(position_error(
                        parsed,
                        format!(
                            "View `default_catalog`.`default_database`.`{view_name}` doesn't exist or is a temporary view."
                        ),
                    ));
                };
                let create = CreateView {
                    name: name.clone(),
                    temporary: false,
                    if_not_exists: false,
                    columns: Vec::new(),
                    comment: old.comment.clone(),
                    query: query.clone(),
                };
                let view = self.define_view(&create, parsed)?;
                self.catalog
                    .insert(view_name, CatalogEntry::View(Arc::new(view)), false);
                succeeded(out)?;
            }
            Statement::AlterViewRename { name, new_name } => {
                let name = session_object_name(name).map_err(|m| position_error(parsed, m))?;
                let new_name =
                    session_object_name(new_name).map_err(|m| position_error(parsed, m))?;
                let Some(CatalogEntry::View(view)) = self.catalog.get_in(&name, false).cloned()
                else {
                    return Err(position_error(
                        parsed,
                        format!(
                            "View `default_catalog`.`default_database`.`{name}` doesn't exist or is a temporary view."
                        ),
                    ));
                };
                if self.catalog.get_in(&new_name, false).is_some() {
                    return Err(position_error(
                        parsed,
                        format!("a table or view named {new_name} already exists"),
                    ));
                }
                self.catalog.remove(&name, false);
                let mut renamed = (*view).clone();
                renamed.name = new_name.clone();
                self.catalog
                    .insert(new_name, CatalogEntry::View(Arc::new(renamed)), false);
                succeeded(out)?;
            }
            Statement::Use { catalog, name } => {
                let parts: Vec<String> = name
                    .0
                    .iter()
                    .map(|p| p.as_ident().map(|i| i.value.clone()).unwrap_or_default())
                    .collect();
                let known = match (catalog, parts.as_slice()) {
                    (true, [c]) => c == "default_catalog",
                    (false, [db]) => db == "default_database",
                    (false, [c, db]) => c == "default_catalog" && db == "default_database",
                    _ => false,
                };
                if !known {
                    let shown = parts.last().cloned().unwrap_or_default();
                    return Err(position_error(
                        parsed,
                        if *catalog {
                            format!("A catalog with name [{shown}] does not exist.")
                        } else {
                            format!(
                                "A database with name [{shown}] does not exist in the catalog: [default_catalog]."
                            )
                        },
                    ));
                }
                succeeded(out)?;
            }
            Statement::Explain {
                statement,
                changelog_mode,
            } => {
                let binder = || Binder::new(&self.catalog, &parsed.hints);
                let (ast, plan) = match statement.as_ref() {
                    Statement::Query(q) => {
                        let logical = output_names(binder().bind_query(q)?);
                        let mut plan =
                            translate(&logical, &self.planner_options()).map_err(SqlError::from)?;
                        // An explained query has no consumer asking for `-U` (Flink plans
                        // it for a sink that takes updates as upserts).
                        require_update_before(&mut plan, false);
                        (logical.explain_ast(), plan)
                    }
                    Statement::Insert(insert) => {
                        let name = session_object_name(&insert.table)
                            .map_err(|m| position_error(parsed, m))?;
                        let Some(CatalogEntry::Table(table)) = self.catalog.get(&name) else {
                            return Err(position_error(
                                parsed,
                                format!("table '{name}' does not exist"),
                            ));
                        };
                        let logical = binder().bind_insert(
                            &insert.query,
                            &name,
                            &table.physical_schema(),
                            &insert.columns,
                        )?;
                        let plan = translate_insert(&logical, &name, &self.planner_options())
                            .map_err(SqlError::from)?;
                        let mut ast = format!(
                            "LogicalSink(table=[default_catalog.default_database.{name}], fields=[{}])\n",
                            plan.schema()
                                .fields
                                .iter()
                                .map(|f| f.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        );
                        // The query as written, without the Calc that fits it to the sink
                        // when that changes nothing (Calcite's tree has none).
                        let query = match &logical {
                            LogicalPlan::Calc(c) if c.passes_columns_through() => &c.input,
                            other => other,
                        };
                        for (i, line) in query.explain_ast().lines().enumerate() {
                            ast.push_str(if i == 0 { "+- " } else { "   " });
                            ast.push_str(line);
                            ast.push('\n');
                        }
                        (ast, plan)
                    }
                    _ => {
                        return Err(position_error(
                            parsed,
                            "EXPLAIN supports queries and INSERT statements",
                        ));
                    }
                };
                write!(
                    out,
                    "== Abstract Syntax Tree ==\n{ast}\n== Optimized Physical Plan ==\n{}\n== Optimized Execution Plan ==\n{}\n",
                    plan.explain(Spelling::Physical, *changelog_mode),
                    plan.explain(Spelling::Execution, false)
                )
                .map_err(write_failed)?;
            }
            Statement::Query(query) => {
                let plan = Binder::new(&self.catalog, &parsed.hints).bind_query(query)?;
                let logical = output_names(plan);
                let plan = translate(&logical, &self.planner_options()).map_err(SqlError::from)?;
                self.run_query(&plan, logical.schema(), out)?;
            }
            Statement::Insert(insert) => {
                let name =
                    session_object_name(&insert.table).map_err(|m| position_error(parsed, m))?;
                let table = match self.catalog.get(&name) {
                    Some(CatalogEntry::Table(t)) => t.clone(),
                    _ => {
                        return Err(position_error(
                            parsed,
                            format!("table '{name}' does not exist"),
                        ));
                    }
                };
                let table = Binder::new(&self.catalog, &parsed.hints)
                    .sink_table(&table, sqlparser::ast::Spanned::span(&insert.table))?;
                // `PARTITION (k = 'v')` names columns the query then does not provide.
                let physical = table.physical_schema();
                for (key, _) in &insert.static_partitions {
                    if !physical.fields.iter().any(|f| &f.name == key) {
                        return Err(position_error(
                            parsed,
                            format!("Unknown target column '{key}'"),
                        ));
                    }
                    if !table.partition_keys.contains(key) {
                        return Err(position_error(
                            parsed,
                            format!(
                                "Static partition column '{key}' should be in the partition keys list [{}] for table 'default_catalog.default_database.{name}'.",
                                table.partition_keys.join(", ")
                            ),
                        ));
                    }
                }
                let sink_schema = crate::types::Schema::new(
                    physical
                        .fields
                        .iter()
                        .filter(|f| !insert.static_partitions.iter().any(|(k, _)| k == &f.name))
                        .cloned()
                        .collect(),
                );
                let plan = Binder::new(&self.catalog, &parsed.hints).bind_insert(
                    &insert.query,
                    &name,
                    &sink_schema,
                    &insert.columns,
                )?;
                let ctx = self.eval_context();
                let stream = translate_insert(&plan, &name, &self.planner_options())
                    .map_err(SqlError::from)?;
                let mut graph = build_job(&stream, &ctx, &self.job_options()?)?;
                // NULLs bound for NOT NULL sink columns: Flink's enforcer.
                let not_null: Vec<(usize, String)> = sink_schema
                    .fields
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| !f.data_type.nullable)
                    .map(|(i, f)| (i, f.name.clone()))
                    .collect();
                if !not_null.is_empty() {
                    let drop = match self
                        .options
                        .get(NOT_NULL_ENFORCER)
                        .map(|v| v.to_ascii_uppercase())
                    {
                        None => false,
                        Some(v) if v == "ERROR" => false,
                        Some(v) if v == "DROP" => true,
                        Some(v) => {
                            return Err(StatementError::Job(format!(
                                "Could not parse value '{v}' for key '{NOT_NULL_ENFORCER}': expected one of [ERROR, DROP]"
                            )));
                        }
                    };
                    graph.push_before_sink(&|| {
                        Box::new(NotNullEnforcer::new(not_null.clone(), drop))
                    });
                }
                // What the sink refuses, and its options, are checked before the job is
                // submitted.
                let factory = crate::connector::registry::sink(&table)?;
                let request = SinkRequest {
                    name: &name,
                    table: &table,
                    physical: &physical,
                    written: plan.schema(),
                    static_partitions: &insert.static_partitions,
                    batch: self.batch_mode(),
                    overwrite: insert.overwrite,
                    clock: self.clock.clone(),
                };
                factory
                    .check(&request)
                    .map_err(|message| position_error(parsed, message))?;
                if !factory.accepts_updates(&request)
                    && let Some(message) = stream.append_only_refusal(&name)
                {
                    return Err(position_error(parsed, message));
                }
                factory.validate(&request)?;
                writeln!(
                    out,
                    "[INFO] Submitting SQL update statement to the cluster..."
                )
                .map_err(write_failed)?;
                out.flush().map_err(write_failed)?;
                let cancel = self.cancel.clone();
                let mut sink = factory.create(&request, &mut *out)?;
                self.run_job(graph, sink.as_mut(), cancel)?;
                drop(sink);
                writeln!(
                    out,
                    "[INFO] Complete execution of the SQL update statement."
                )
                .map_err(write_failed)?;
            }
        }
        Ok(())
    }

    /// Whether `name` is free for a CREATE; `false` when it is taken and IF NOT EXISTS was
    /// written, an error when it is taken without it.
    /// Whether `name` is free in its namespace (temporary objects may shadow permanent ones).
    fn is_new(
        &self,
        name: &str,
        temporary: bool,
        if_not_exists: bool,
        what: &str,
        parsed: &ParsedStatement,
    ) -> Result<bool, StatementError> {
        match (
            self.catalog.get_in(name, temporary).is_some(),
            if_not_exists,
        ) {
            (false, _) => Ok(true),
            (true, true) => Ok(false),
            (true, false) => Err(position_error(
                parsed,
                format!("{what} '{name}' already exists"),
            )),
        }
    }

    /// `table.display.max-column-width`, read when a result is printed (as Flink reads it: a
    /// bad value is accepted by SET and fails the query that would print).
    fn max_column_width(&self) -> Result<usize, StatementError> {
        let Some(value) = self.options.get(MAX_COLUMN_WIDTH) else {
            return Ok(tableau::MAX_COLUMN_WIDTH);
        };
        let width: i32 = value.trim().parse().map_err(|_| {
            StatementError::Job(format!(
                "Could not parse value '{value}' for key '{MAX_COLUMN_WIDTH}'."
            ))
        })?;
        if width <= 0 {
            return Err(StatementError::Job(
                "maxColumnWidth should be greater than 0".into(),
            ));
        }
        Ok(width as usize)
    }

    /// `CREATE TABLE t (…) WITH (…) LIKE src (…)`: the source's columns, watermark, primary
    /// key and options merged with the new ones under Flink's rules — by default everything
    /// is included, a new option overwrites the source's, a new column or a second watermark
    /// or primary key is an error.
    fn merge_like(
        &self,
        create: &CreateTable,
        like: &TableLike,
    ) -> Result<CreateTable, StatementError> {
        let at = |message: String| {
            StatementError::Sql(SqlError::new(
                message,
                like.position.line,
                like.position.column,
            ))
        };
        let source_name = session_object_name(&like.source).map_err(at)?;
        let Some(CatalogEntry::Table(source)) = self.catalog.get(&source_name) else {
            return Err(at(format!(
                "Source table '`default_catalog`.`default_database`.`{source_name}`' of the LIKE clause not found in the catalog, at line {}, column {}",
                like.position.line, like.position.column
            )));
        };
        // Flink's defaults, then the clause's options in order.
        let mode = |part: LikePart| {
            let default = if part == LikePart::Options {
                LikeMode::Overwriting
            } else {
                LikeMode::Including
            };
            like.options.iter().fold(default, |current, (m, p)| {
                if *p == part || (*p == LikePart::All && part != LikePart::Partitions) {
                    *m
                } else {
                    current
                }
            })
        };
        let (generated, metadata) = (mode(LikePart::Generated), mode(LikePart::Metadata));
        let mut merged = create.clone();
        merged.like = None;
        let mut columns = Vec::new();
        for c in &source.columns {
            let kind = match &c.source {
                crate::catalog::ColumnSource::Physical => ColumnKind::Physical(c.data_type.clone()),
                crate::catalog::ColumnSource::Computed { expr, .. } => {
                    if generated == LikeMode::Excluding {
                        continue;
                    }
                    ColumnKind::Computed(expr.clone())
                }
                crate::catalog::ColumnSource::Metadata { key, is_virtual } => {
                    if metadata == LikeMode::Excluding {
                        continue;
                    }
                    ColumnKind::Metadata {
                        data_type: c.data_type.clone(),
                        key: key.clone(),
                        is_virtual: *is_virtual,
                    }
                }
            };
            if create.columns.iter().any(|n| n.name == c.name) {
                return Err(at(format!(
                    "A column named '{}' already exists in the base table.",
                    c.name
                )));
            }
            columns.push(ColumnDef {
                name: c.name.clone(),
                kind,
                comment: c.comment.clone(),
                position: Position::default(),
            });
        }
        columns.extend(create.columns.iter().cloned());
        merged.columns = columns;
        match (
            mode(LikePart::Watermarks),
            &source.watermark,
            &create.watermark,
        ) {
            (LikeMode::Excluding, _, _) | (_, None, _) => {}
            (LikeMode::Overwriting, Some(_), Some(_)) => {}
            (_, Some(wm), None) => {
                merged.watermark = Some(WatermarkDef {
                    column: wm.column.clone(),
                    expr: wm.expr.clone(),
                    position: Position::default(),
                })
            }
            (LikeMode::Including, Some(wm), Some(_)) => {
                return Err(at(format!(
                    "There already exists a watermark spec for column '{}' in the base table. You might want to specify EXCLUDING WATERMARKS or OVERWRITING WATERMARKS.",
                    wm.column
                )));
            }
        }
        if mode(LikePart::Constraints) != LikeMode::Excluding
            && let Some(pk) = &source.primary_key
        {
            if create.primary_key.is_some() {
                return Err(at(
                    "The base table already has a primary key. You might want to specify EXCLUDING CONSTRAINTS."
                        .to_string(),
                ));
            }
            merged.primary_key = Some(pk.clone());
        }
        let options_mode = mode(LikePart::Options);
        if options_mode != LikeMode::Excluding {
            let mut options = source.options.clone();
            for (key, value) in &create.options {
                match options.iter_mut().find(|(k, _)| k == key) {
                    Some(existing) if options_mode == LikeMode::Overwriting => {
                        existing.1 = value.clone()
                    }
                    Some(existing) => {
                        return Err(at(format!(
                            "There already exists an option ['{key}' -> '{}']  in the base table. You might want to specify EXCLUDING OPTIONS or OVERWRITING OPTIONS.",
                            existing.1
                        )));
                    }
                    None => options.push((key.clone(), value.clone())),
                }
            }
            merged.options = options;
        }
        Ok(merged)
    }

    /// A view from its definition: the query bound, the column list checked against it, and
    /// the text SHOW CREATE VIEW prints.
    fn define_view(
        &self,
        create: &CreateView,
        parsed: &ParsedStatement,
    ) -> Result<ViewDef, StatementError> {
        let plan = Binder::new(&self.catalog, &parsed.hints).bind_query(&create.query)?;
        let input = plan.schema();
        if !create.columns.is_empty() && create.columns.len() != input.len() {
            let names: Vec<&str> = input.fields.iter().map(|f| f.name.as_str()).collect();
            return Err(position_error(
                parsed,
                format!(
                    "VIEW definition and input fields not match:\n\tDef fields: [{}].\n\tInput fields: [{}].",
                    create.columns.join(", "),
                    names.join(", ")
                ),
            ));
        }
        let repeated = if create.columns.is_empty() {
            repeated_name(input)
        } else {
            repeated_column(&create.columns)
        };
        if let Some(name) = repeated {
            return Err(position_error(
                parsed,
                format!("A column with the same name `{name}` has been defined"),
            ));
        }
        let schema = plan
            .schema()
            .renamed(&create.columns)
            .map_err(|message| position_error(parsed, message))?;
        Ok(ViewDef {
            name: session_object_name(&create.name).map_err(|m| position_error(parsed, m))?,
            query: create.query.clone(),
            schema,
            comment: create.comment.clone(),
            temporary: create.temporary,
        })
    }

    /// Runs a query's plan, printing its rows under the names of `result` (the logical
    /// plan's, which the stream plan's root need not keep, as Calcite's does not).
    fn run_query(
        &mut self,
        plan: &StreamPlan,
        result: &Schema,
        out: &mut dyn Write,
    ) -> Result<(), StatementError> {
        let ctx = self.eval_context();
        let graph = build_job(plan, &ctx, &self.job_options()?)?;
        let schema = result_schema(plan, result);
        let cap = self.max_column_width()?;
        let mode = self
            .options
            .get(RESULT_MODE)
            .map_or("tableau".to_string(), |m| m.to_ascii_lowercase());
        if mode == "changelog" && self.batch_mode() {
            return Err(StatementError::Job(
                "Results of batch queries can only be served in table or tableau mode.".into(),
            ));
        }
        // Batch tableau and table mode print the final, materialized result; streaming
        // tableau and changelog mode print every change as it arrives.
        if self.batch_mode() || mode == "table" {
            let mut sink = MaterializeSink::new(schema.clone(), ctx.zone.clone());
            // Flink bounds the table view (keeping the newest rows), not batch tableau.
            if mode == "table" {
                let max = self
                    .options
                    .get(MAX_TABLE_RESULT_ROWS)
                    .map_or(1_000_000, |v| v.parse::<i64>().unwrap_or(1_000_000));
                sink.limit = usize::try_from(max).ok().filter(|&m| m > 0);
            }
            // Nothing was printed yet: Flink reports a cancelled batch result as 0 rows.
            self.run_job(graph, &mut sink, self.cancel.clone())
                .map_err(|e| terminated(e, 0, out))?;
            let names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
            return print_rows(out, &names, sink.rows(), Some(cap));
        }
        let mut sink = StreamingTableauSink::new(schema, ctx.zone.clone(), cap, out);
        let result = self.run_job(graph, &mut sink, self.cancel.clone());
        let rows = sink.rows;
        result.map_err(|e| terminated(e, rows, out))
    }
}

// The embedded API's entry points (`api/`): tables whose rows a program provides, and
// queries whose job the program runs and reads itself.
impl Session {
    /// Registers a table made by the program (`fromDataStream`) as a temporary object, as
    /// Flink's `createTemporaryView` does.
    pub fn register_temporary_table(
        &mut self,
        table: crate::catalog::TableDef,
    ) -> Result<(), StatementError> {
        if self.catalog.get_in(&table.name, true).is_some() {
            return Err(StatementError::Job(format!(
                "Temporary table '`default_catalog`.`default_database`.`{}`' already exists",
                table.name
            )));
        }
        let name = table.name.clone();
        self.catalog
            .insert(name, CatalogEntry::Table(Arc::new(table)), true);
        Ok(())
    }

    /// The job of one `SELECT` (bound, planned and built as `execute` would run it), for the
    /// caller to run with a sink of its own.
    pub fn plan_query(&mut self, parsed: &ParsedStatement) -> Result<PlannedQuery, StatementError> {
        let Statement::Query(query) = &parsed.statement else {
            return Err(position_error(
                parsed,
                "only a SELECT query can be read as a changelog stream",
            ));
        };
        let plan = Binder::new(&self.catalog, &parsed.hints).bind_query(query)?;
        let logical = output_names(plan);
        let plan = translate(&logical, &self.planner_options()).map_err(SqlError::from)?;
        let ctx = self.eval_context();
        let graph = build_job(&plan, &ctx, &self.job_options()?)?;
        Ok(PlannedQuery {
            graph,
            schema: result_schema(&plan, logical.schema()),
            zone: ctx.zone,
            run_options: RunOptions {
                ordered: self.batch_mode(),
                clock: self.clock.clone(),
                metrics: Arc::default(),
            },
        })
    }
}

/// A query ready to run: its job graph, result schema, session zone and run options.
pub struct PlannedQuery {
    pub graph: JobGraph,
    pub schema: Schema,
    pub zone: SessionZone,
    pub run_options: RunOptions,
}

/// A query's failure; a cancel (the user's Ctrl-C) ends the printed rows with Flink's line.
fn terminated(e: ExecError, rows: u64, out: &mut dyn Write) -> StatementError {
    match e {
        ExecError::Cancelled => {
            let unit = if rows > 1 { "rows" } else { "row" };
            let _ = writeln!(out, "Query terminated, received a total of {rows} {unit}");
            let _ = out.flush();
            StatementError::Interrupted
        }
        e => e.into(),
    }
}

fn write_failed(e: std::io::Error) -> StatementError {
    StatementError::Job(format!("cannot write output: {e}"))
}

fn succeeded(out: &mut dyn Write) -> Result<(), StatementError> {
    writeln!(out, "[INFO] Execute statement succeeded.").map_err(write_failed)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A materialized result: `Empty set`, or the table and `N row(s) in set`.
fn print_rows(
    out: &mut dyn Write,
    header: &[&str],
    rows: Vec<Vec<String>>,
    cap: Option<usize>,
) -> Result<(), StatementError> {
    if rows.is_empty() {
        return writeln!(out, "Empty set").map_err(write_failed);
    }
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    write!(out, "{}", tableau::table(&header, &rows, cap)).map_err(write_failed)?;
    writeln!(out, "{} row{} in set", rows.len(), plural(rows.len())).map_err(write_failed)
}

/// A table's definition as the `CREATE TABLE` that would make it again.
fn table_as_create(table: &crate::catalog::TableDef) -> CreateTable {
    use crate::catalog::ColumnSource;
    let columns = table
        .columns
        .iter()
        .map(|c| ColumnDef {
            name: c.name.clone(),
            kind: match &c.source {
                ColumnSource::Physical => ColumnKind::Physical(c.data_type.clone()),
                ColumnSource::Computed { expr, .. } => ColumnKind::Computed(expr.clone()),
                ColumnSource::Metadata { key, is_virtual } => ColumnKind::Metadata {
                    data_type: c.data_type.clone(),
                    key: key.clone(),
                    is_virtual: *is_virtual,
                },
            },
            comment: c.comment.clone(),
            position: Position::default(),
        })
        .collect();
    CreateTable {
        name: ObjectName::from(vec![sqlparser::ast::Ident::new(table.name.clone())]),
        temporary: false,
        if_not_exists: false,
        columns,
        watermark: table.watermark.as_ref().map(|w| WatermarkDef {
            column: w.column.clone(),
            expr: w.expr.clone(),
            position: Position::default(),
        }),
        primary_key: table.primary_key.clone(),
        primary_key_at: Vec::new(),
        comment: table.comment.clone(),
        partition_keys: table.partition_keys.clone(),
        options: table.options.clone(),
        like: None,
    }
}

/// The first name written twice in a view's column list.
fn repeated_column(names: &[String]) -> Option<&str> {
    (1..names.len())
        .find(|&i| names[..i].contains(&names[i]))
        .map(|i| names[i].as_str())
}

/// Whether a listed name is kept.
type NameFilter = Box<dyn Fn(&str) -> bool>;

/// Whether a name passes the `[NOT] LIKE` / `[NOT] ILIKE` of a `SHOW` statement; a bad pattern
/// is Flink's error.
fn show_matcher(like: Option<&ShowLike>) -> Result<NameFilter, String> {
    let Some(like) = like else {
        return Ok(Box::new(|_| true));
    };
    let regex = like_to_regex(&like.pattern, Some('\\'))
        .map_err(|_| invalid_escape_message(&like.pattern))?;
    let regex = if like.case_insensitive {
        format!("(?i){regex}")
    } else {
        regex
    };
    let regex = regex::Regex::new(&regex).map_err(|e| e.to_string())?;
    let negated = like.negated;
    Ok(Box::new(move |name| regex.is_match(name) != negated))
}

/// Flink's `Invalid escape sequence '<pattern>', <index>`: the index of the escape character
/// that is not followed by `_`, `%` or itself.
fn invalid_escape_message(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\\' {
            match chars.get(i + 1) {
                Some('_' | '%' | '\\') => i += 2,
                _ => break,
            }
        } else {
            i += 1;
        }
    }
    format!("Invalid escape sequence '{pattern}', {i}")
}

/// The names of a `SHOW` listing that pass its `LIKE`, in their order.
fn show_filter(
    like: Option<&ShowLike>,
    names: impl Iterator<Item = String>,
) -> Result<Vec<String>, String> {
    let keep = show_matcher(like)?;
    Ok(names.filter(|n| keep(n)).collect())
}

/// Checks the `FROM|IN [catalog.]database` of `SHOW TABLES|VIEWS|FUNCTIONS` against the
/// session's one catalog and database, with Flink's errors.
fn show_database(name: &ObjectName, what: &str) -> Result<(), String> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| p.as_ident().map(|i| i.value.clone()).unwrap_or_default())
        .collect();
    let (catalog, database) = match parts.as_slice() {
        [db] => ("default_catalog", db.as_str()),
        [cat, db] => (cat.as_str(), db.as_str()),
        _ => {
            return Err(format!(
                "SHOW {what} from/in identifier [ {} ] format error, it should be [catalog_name.]database_name.",
                parts.join(".")
            ));
        }
    };
    if catalog != "default_catalog" {
        return Err(format!("Catalog {catalog} does not exist"));
    }
    if database != "default_database" {
        return Err(format!("Database '{catalog}'.'{database}' doesn't exist."));
    }
    Ok(())
}

fn position_error(parsed: &ParsedStatement, message: impl Into<String>) -> StatementError {
    StatementError::Sql(SqlError::new(
        message,
        parsed.position.line,
        parsed.position.column,
    ))
}

/// Whether Flink takes a `table.local-time-zone` value. Flink wants an id that
/// `java.util.TimeZone` and `java.time.ZoneId` read alike: a tz database name spelled as the
/// database spells it (but not EST, MST or HST, which `TimeZone` turns into fixed offsets),
/// `UTC`, `GMT`, or `GMT` with an offset `±h`, `±hh`, `±hhmm` or `±hh:mm` of at most 18 hours.
/// `UTC+8`, `+08:00`, `Z`, `PST` and `utc` are refused.
fn flink_session_zone_id(name: &str) -> bool {
    if name == "UTC" || name == "GMT" {
        return true;
    }
    if let Some(offset) = name.strip_prefix("GMT") {
        let Some(digits) = offset.strip_prefix(['+', '-']) else {
            return false;
        };
        let (hours, minutes) = match digits.split_once(':') {
            Some((h, m)) if h.len() == 2 && m.len() == 2 => (h, m),
            Some(_) => return false,
            None if digits.len() == 4 => digits.split_at(2),
            None if (1..=2).contains(&digits.len()) => (digits, "0"),
            None => return false,
        };
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        return match (hours.parse::<u32>(), minutes.parse::<u32>()) {
            (Ok(h), Ok(m)) if all_digits(hours) && all_digits(minutes) => {
                m < 60 && h * 60 + m <= 18 * 60
            }
            _ => false,
        };
    }
    if matches!(name, "EST" | "MST" | "HST") {
        return false;
    }
    jiff::tz::TimeZone::get(name).is_ok_and(|zone| zone.iana_name() == Some(name))
}

/// Rejects values Flink would reject for the options Tideline reads.
fn validate_option(key: &str, value: &str, parsed: &ParsedStatement) -> Result<(), StatementError> {
    let bad = |what: &str| {
        position_error(
            parsed,
            format!("invalid value '{value}' for option '{key}': {what}"),
        )
    };
    match key {
        RUNTIME_MODE
            if !["streaming", "batch", "automatic"]
                .contains(&value.to_ascii_lowercase().as_str()) =>
        {
            return Err(bad("expected 'streaming', 'batch' or 'automatic'"));
        }
        RESULT_MODE
            if !["table", "tableau", "changelog"]
                .contains(&value.to_ascii_lowercase().as_str()) =>
        {
            return Err(bad("expected 'table', 'tableau' or 'changelog'"));
        }
        "parallelism.default" if value.parse::<u32>().map_or(true, |p| p == 0) => {
            return Err(bad("expected a positive integer"));
        }
        MAX_TABLE_RESULT_ROWS if value.parse::<i32>().is_err() => {
            return Err(bad("expected an integer"));
        }
        _ => {}
    }
    Ok(())
}

/// Cells of every row, as printed.
fn cells(chunk: &StreamChunk, row: usize, schema: &Schema, zone: &SessionZone) -> Vec<String> {
    chunk
        .batch
        .columns()
        .iter()
        .zip(&schema.fields)
        .map(|(c, f)| {
            format_value(c, row, &f.data_type, zone).unwrap_or_else(|| NULL_TEXT.to_string())
        })
        .collect()
}

/// The result as a table: inserts add a row, retractions (-U, -D) remove the latest equal
/// one, as Flink's materialized result view does. A removal leaves a hole that
/// [`Self::rows`] skips, and the holes are compacted away once they are the majority. An
/// index from a row's hash to its places is built at the first retraction, so an insert-only
/// result pays nothing for it, and a retraction costs a hash lookup. With a `limit`, the
/// oldest rows give way to new ones past it, as in Flink's table view.
struct MaterializeSink {
    schema: Schema,
    zone: SessionZone,
    slots: Vec<Option<Vec<String>>>,
    holes: usize,
    positions: Option<std::collections::HashMap<u64, Vec<usize>>>,
    limit: Option<usize>,
    /// No row lives before this slot.
    oldest: usize,
}

fn row_hash(row: &[String]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    row.hash(&mut h);
    h.finish()
}

impl MaterializeSink {
    fn new(schema: Schema, zone: SessionZone) -> Self {
        MaterializeSink {
            schema,
            zone,
            slots: Vec::new(),
            holes: 0,
            positions: None,
            limit: None,
            oldest: 0,
        }
    }

    /// Removes the row in slot `at` (which holds one).
    fn remove(&mut self, at: usize) {
        if let (Some(positions), Some(row)) = (&mut self.positions, &self.slots[at])
            && let Some(places) = positions.get_mut(&row_hash(row))
        {
            places.retain(|&p| p != at);
        }
        self.slots[at] = None;
        self.holes += 1;
        if self.holes > 1024 && self.holes * 2 > self.slots.len() {
            self.slots.retain(Option::is_some);
            self.holes = 0;
            self.oldest = 0;
            if self.positions.is_some() {
                self.positions = Some(Self::index(&self.slots));
            }
        }
    }

    /// Drops the oldest rows while more than `limit` live.
    fn enforce_limit(&mut self) {
        let Some(limit) = self.limit else { return };
        while self.slots.len() - self.holes > limit {
            while self.slots[self.oldest].is_none() {
                self.oldest += 1;
            }
            let at = self.oldest;
            self.remove(at);
        }
    }

    /// The rows still in the table, in arrival order.
    fn rows(self) -> Vec<Vec<String>> {
        self.slots.into_iter().flatten().collect()
    }

    fn index(slots: &[Option<Vec<String>>]) -> std::collections::HashMap<u64, Vec<usize>> {
        let mut index = std::collections::HashMap::<u64, Vec<usize>>::new();
        for (at, row) in slots.iter().enumerate() {
            if let Some(row) = row {
                index.entry(row_hash(row)).or_default().push(at);
            }
        }
        index
    }

    fn retract(&mut self, values: &[String]) {
        let slots = &self.slots;
        let positions = self.positions.get_or_insert_with(|| Self::index(slots));
        let Some(places) = positions.get_mut(&row_hash(values)) else {
            return;
        };
        let Some(i) = places
            .iter()
            .rposition(|&at| self.slots[at].as_deref() == Some(values))
        else {
            return;
        };
        let at = places[i];
        self.remove(at);
    }
}

impl Sink for MaterializeSink {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        for row in 0..chunk.num_rows() {
            let values = cells(&chunk, row, &self.schema, &self.zone);
            match chunk.kind(row) {
                RowKind::Insert | RowKind::UpdateAfter => {
                    if let Some(positions) = &mut self.positions {
                        positions
                            .entry(row_hash(&values))
                            .or_default()
                            .push(self.slots.len());
                    }
                    self.slots.push(Some(values));
                    self.enforce_limit();
                }
                RowKind::UpdateBefore | RowKind::Delete => self.retract(&values),
            }
        }
        Ok(())
    }
    fn finish(&mut self) -> Result<(), ExecError> {
        Ok(())
    }
}

/// Streaming tableau: header first, each row as it arrives with its `op`, then the count.
struct StreamingTableauSink<'a> {
    schema: Schema,
    zone: SessionZone,
    widths: Vec<usize>,
    out: &'a mut dyn Write,
    rows: u64,
}

impl<'a> StreamingTableauSink<'a> {
    fn new(schema: Schema, zone: SessionZone, max_width: usize, out: &'a mut dyn Write) -> Self {
        let mut names = vec!["op".to_string()];
        names.extend(schema.fields.iter().map(|f| f.name.clone()));
        let mut types = vec![crate::types::DataType::not_null(
            crate::types::TypeKind::Char(2),
        )];
        types.extend(schema.fields.iter().map(|f| f.data_type.clone()));
        let mut widths = widths_by_type(&names, &types, max_width);
        widths[0] = 2;
        let _ = writeln!(out, "{}", border(&widths));
        let _ = writeln!(out, "{}", row_line(&widths, &names));
        let _ = writeln!(out, "{}", border(&widths));
        let _ = out.flush();
        StreamingTableauSink {
            schema,
            zone,
            widths,
            out,
            rows: 0,
        }
    }
}

impl Sink for StreamingTableauSink<'_> {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        for row in 0..chunk.num_rows() {
            let mut line = vec![chunk.kind(row).short_string().to_string()];
            line.extend(cells(&chunk, row, &self.schema, &self.zone));
            writeln!(self.out, "{}", row_line(&self.widths, &line))
                .map_err(|e| ExecError::Sink(e.to_string()))?;
            self.rows += 1;
        }
        self.out.flush().map_err(|e| ExecError::Sink(e.to_string()))
    }

    fn finish(&mut self) -> Result<(), ExecError> {
        let w = |e: std::io::Error| ExecError::Sink(e.to_string());
        if self.rows > 0 {
            writeln!(self.out, "{}", border(&self.widths)).map_err(w)?;
        }
        let unit = if self.rows > 1 { "rows" } else { "row" };
        writeln!(self.out, "Received a total of {} {unit}", self.rows).map_err(w)?;
        self.out.flush().map_err(w)
    }
}

/// A query's result columns: the stream plan's root, named as the logical plan names them.
fn result_schema(plan: &StreamPlan, logical: &Schema) -> Schema {
    let mut schema = plan.schema().clone();
    for (field, named) in schema.fields.iter_mut().zip(&logical.fields) {
        field.name = named.name.clone();
    }
    schema
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int32Array, RecordBatch};

    use super::*;
    use crate::types::{DataType, Field, TypeKind};

    #[test]
    fn table_mode_applies_retractions() {
        let schema = Schema::new(vec![Field::new("v", DataType::nullable(TypeKind::Int))]);
        let batch = RecordBatch::try_new(
            crate::types::chunk::runtime_schema(&schema),
            vec![Arc::new(Int32Array::from(vec![1, 2, 1, 3, 2, 9]))],
        )
        .unwrap();
        use RowKind::*;
        let chunk = StreamChunk {
            batch,
            kinds: Some(vec![
                Insert,
                Insert,
                UpdateBefore,
                UpdateAfter,
                Delete,
                Delete,
            ]),
        };
        let mut sink = MaterializeSink::new(schema.clone(), SessionZone::utc());
        let first = StreamChunk::inserts(chunk.batch.slice(0, 2));
        let rest = StreamChunk {
            batch: chunk.batch.slice(2, 4),
            kinds: chunk.kinds.as_ref().map(|k| k[2..].to_vec()),
        };
        sink.write(first).unwrap();
        sink.write(rest).unwrap();
        assert_eq!(sink.rows(), vec![vec!["3".to_string()]]);
        let mut whole = MaterializeSink::new(schema, SessionZone::utc());
        whole.write(chunk).unwrap();
        assert_eq!(whole.rows(), vec![vec!["3".to_string()]]);
    }
}
