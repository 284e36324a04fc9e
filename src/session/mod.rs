//! The engine's session: the catalog, the `SET` options, and the execution of each
//! statement to a typed result ([`StatementResult`]). The SQL client (`client/`) prints the
//! results and runs the jobs with its sinks; the embedded API (`api/`) reads them.

mod alter;
mod checkpoint;
mod explain;
mod insert;
mod jobs;
pub mod options;
mod result;
mod show;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::catalog::{Catalog, CatalogEntry, ViewDef};
use crate::clock::{Clock, SystemClock};
use crate::connector::sink::Sink;
use crate::exec::error::ExecError;
use crate::function::EvalContext;
use crate::plan::bind::{Binder, output_names, repeated_name};
use crate::plan::stream::changelog::RootConsumer;
use crate::plan::stream::translate::{EmitOptions, PlannerOptions};
use crate::plan::stream::{StreamPlan, translate};
use crate::runtime::build::{JobOptions, build_job};
use crate::runtime::checkpoint::coordinator::new_job_id;
use crate::runtime::graph::JobGraph;
use crate::runtime::run::{self, RunOptions};
use crate::sql::SqlError;
use crate::sql::ast::{CreateView, ObjectKind, ParsedStatement, Statement};
use crate::sql::parser::{object_name_last, session_object_name};
use crate::types::Schema;
use crate::types::time::SessionZone;
use sqlparser::ast::ObjectName;

pub use jobs::{Background, DML_SYNC};
pub use options::*;
pub use result::{PlannedInsert, PlannedQuery, StatementResult};

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

impl From<crate::runtime::build::BuildError> for StatementError {
    fn from(e: crate::runtime::build::BuildError) -> Self {
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
    /// Calcite's correlation ids, drawn for the session's life as Flink's planner does.
    correlations: std::cell::Cell<u32>,
    options: BTreeMap<String, String>,
    clock: Arc<dyn Clock>,
    host_zone: SessionZone,
    pub cancel: Arc<AtomicBool>,
    /// `tideline --resume` (beyond Flink): an INSERT with checkpoints and no
    /// `execution.state-recovery.path` restores from the newest completed checkpoint of a job
    /// of the same name.
    pub resume: bool,
    /// Where INSERTs run in the background (`table.dml-sync` false), when the client runs
    /// them there.
    pub background: Option<Background>,
    jobs: jobs::Jobs,
    /// The INSERTs gathered since `BEGIN STATEMENT SET`, while one is open.
    statement_set: Option<Vec<insert::InsertPlan>>,
}

impl Default for Session {
    fn default() -> Self {
        Self::new(Arc::new(SystemClock))
    }
}

impl Session {
    /// A binder over the session's catalog, drawing correlation ids from the session.
    fn binder<'s>(&'s self, hints: &'s [crate::sql::ast::TableHint]) -> Binder<'s> {
        Binder::new(&self.catalog, hints).with_correlations(&self.correlations)
    }

    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Session {
            catalog: Catalog::default(),
            correlations: std::cell::Cell::new(0),
            options: BTreeMap::new(),
            clock,
            host_zone: SessionZone::system(),
            cancel: Arc::new(AtomicBool::new(false)),
            resume: false,
            background: None,
            jobs: jobs::Jobs::default(),
            statement_set: None,
        }
    }

    fn zone(&self) -> SessionZone {
        match self.options.get(LOCAL_TIME_ZONE).map(String::as_str) {
            None | Some("default") => self.host_zone.clone(),
            Some(name) => SessionZone::new(name).unwrap_or_else(|_| self.host_zone.clone()),
        }
    }

    /// Runs a job; in batch mode its rows reach the sink in a fixed order (split by split).
    pub fn run_job(&self, graph: JobGraph, sink: &mut dyn Sink) -> Result<(), ExecError> {
        let options = RunOptions {
            ordered: self.batch_mode(),
            clock: self.clock.clone(),
            ..RunOptions::default()
        };
        self.run_with(graph, sink, options)
    }

    /// An INSERT's job into `table`, ready to run: its id and name, its checkpoints when
    /// they are on, and the checkpoint `execution.state-recovery.path` names when it is set.
    pub(super) fn launch(
        &self,
        graph: &JobGraph,
        tables: &[&str],
    ) -> Result<Launch, StatementError> {
        let id = new_job_id();
        let name = self.job_name(tables);
        let checkpoint = self.checkpoint_config(&id, &name)?;
        let restore = self.restore_state(graph, checkpoint.as_ref())?;
        if let Some(config) = &checkpoint {
            eprintln!(
                "[INFO] Job ID: {id}; its checkpoints go to {}",
                config.dir.join(&id).display()
            );
        }
        Ok(Launch {
            id,
            name,
            options: RunOptions {
                ordered: self.batch_mode(),
                clock: self.clock.clone(),
                checkpoint,
                restore,
                ..RunOptions::default()
            },
        })
    }

    fn run_with(
        &self,
        graph: JobGraph,
        sink: &mut dyn Sink,
        options: RunOptions,
    ) -> Result<(), ExecError> {
        let result = run::run(graph, sink, self.cancel.clone(), &options);
        report_late_rows(&options);
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
            emit: self.emit_options(),
        }
    }

    /// The `table.exec.emit.*` options (a delay that does not parse is no delay, which the
    /// planner refuses with Flink's message).
    fn emit_options(&self) -> EmitOptions {
        // Flink's batch windows have no emit strategy.
        if self.batch_mode() {
            return EmitOptions::default();
        }
        let millis = |key: &str| {
            self.options
                .get(key)
                .and_then(|v| crate::types::option_value::parse_duration(v))
                .map(|nanos| nanos / 1_000_000)
        };
        let enabled = |key: &str| {
            self.options
                .get(key)
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        };
        EmitOptions {
            early: enabled(EARLY_FIRE).then(|| millis(EARLY_FIRE_DELAY)),
            late: enabled(LATE_FIRE).then(|| millis(LATE_FIRE_DELAY)),
            allow_lateness: millis(ALLOW_LATENESS),
            state_ttl: millis(STATE_TTL).unwrap_or(0),
        }
    }

    /// The options a job is built with, checked as Flink checks them when a job starts.
    fn job_options(&self) -> Result<JobOptions, StatementError> {
        let mut options = JobOptions::default();
        // A duration option in milliseconds, with Flink's message when it does not parse.
        let millis = |key: &str| -> Result<Option<i64>, StatementError> {
            self.options
                .get(key)
                .map(|text| {
                    crate::types::option_value::parse_duration(text)
                        .map(|nanos| nanos / 1_000_000)
                        .ok_or_else(|| {
                            StatementError::Job(format!(
                                "Could not parse value '{text}' for key '{key}'."
                            ))
                        })
                })
                .transpose()
        };
        if let Some(ms) = millis(AUTO_WATERMARK_INTERVAL)? {
            options.auto_watermark_interval = ms;
        }
        if let Some(ms) = millis(STATE_TTL)? {
            options.state_ttl = ms;
        }
        if let Some(ms) = millis(IDLE_TIMEOUT)? {
            options.idle_timeout = ms;
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

    pub fn batch_mode(&self) -> bool {
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
    /// Runs one statement as far as the engine goes: a catalog or session change is done, a
    /// listing or EXPLAIN is computed, and a query or INSERT is planned and built into its
    /// job, which the caller runs (the client prints it, the embedded API reads it).
    pub fn execute(&mut self, parsed: &ParsedStatement) -> Result<StatementResult, StatementError> {
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
        if self.statement_set.is_some() {
            return self.in_statement_set(parsed);
        }
        match &parsed.statement {
            Statement::Set { key: None, .. } => {
                let rows: Vec<Vec<String>> = self
                    .options
                    .iter()
                    .map(|(k, v)| vec![k.clone(), v.clone()])
                    .collect();
                Ok(StatementResult::rows(&["key", "value"], rows))
            }
            Statement::Set {
                key: Some(key),
                value,
            } => {
                let value = value.clone().unwrap_or_default();
                validate_option(key, &value, parsed)?;
                self.options.insert(key.clone(), value);
                Ok(StatementResult::Done)
            }
            Statement::Reset { key } => {
                match key {
                    Some(k) => {
                        self.options.remove(k);
                    }
                    None => self.options.clear(),
                }
                Ok(StatementResult::Done)
            }
            Statement::CreateTable(create) => {
                let name =
                    session_object_name(&create.name).map_err(|m| position_error(parsed, m))?;
                if self.is_new(&name, create.temporary, create.if_not_exists, parsed)? {
                    let merged;
                    let create = match &create.like {
                        Some(like) => {
                            merged = crate::catalog::ddl::merge_like(&self.catalog, create, like)?;
                            &merged
                        }
                        None => create,
                    };
                    let table = self.binder(&parsed.hints).bind_create_table(create)?;
                    self.catalog.insert(
                        name,
                        CatalogEntry::Table(Arc::new(table)),
                        create.temporary,
                    );
                }
                Ok(StatementResult::Done)
            }
            Statement::CreateTableAs { table, query } => self.create_table_as(parsed, table, query),
            Statement::CreateView(create) => {
                let name =
                    session_object_name(&create.name).map_err(|m| position_error(parsed, m))?;
                if self.is_new(&name, create.temporary, create.if_not_exists, parsed)? {
                    let view = self.define_view(create, parsed)?;
                    self.catalog
                        .insert(name, CatalogEntry::View(Arc::new(view)), create.temporary);
                }
                Ok(StatementResult::Done)
            }
            Statement::CreateFunction {
                name,
                class,
                language,
                system,
                if_not_exists,
            } => self.create_function(parsed, name, class, language, *system, *if_not_exists),
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
                Ok(StatementResult::Done)
            }
            Statement::ShowTables { database, like } | Statement::ShowViews { database, like } => {
                self.show_tables(parsed, database, like)
            }
            Statement::ShowFunctions {
                user_only,
                database,
                like,
            } => self.show_functions(parsed, user_only, database, like),
            Statement::ShowSingle {
                header,
                value,
                scope,
                like,
            } => self.show_single(parsed, header, value, scope, like),
            Statement::ShowFixed { header, rows } => Ok(StatementResult::rows(
                header,
                rows.iter()
                    .map(|r| r.iter().map(|c| c.to_string()).collect())
                    .collect(),
            )),
            Statement::ShowCreateTable(name) | Statement::ShowCreateView(name) => {
                self.show_create(parsed, name)
            }
            Statement::Describe { name, like } => self.describe(parsed, name, like),
            Statement::AlterTable {
                name,
                if_exists,
                action,
            } => self.alter_table(parsed, name, if_exists, action),
            Statement::AlterViewAs { name, query } => self.alter_view_as(parsed, name, query),
            Statement::AlterViewRename { name, new_name } => {
                self.alter_view_rename(parsed, name, new_name)
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
                Ok(StatementResult::Done)
            }
            Statement::Explain {
                statement,
                changelog_mode,
            } => self.explain(parsed, statement, changelog_mode),
            Statement::Query(query) => {
                let (plan, names) = self.plan_select(query, parsed)?;
                Ok(StatementResult::Query(Box::new(
                    self.planned_query(&plan, &names)?,
                )))
            }
            Statement::Insert(insert) => self.insert(parsed, insert),
            Statement::StatementSet(inserts) => {
                let plans = inserts
                    .iter()
                    .map(|insert| self.plan_insert(parsed, insert))
                    .collect::<Result<Vec<_>, _>>()?;
                self.insert_job(plans)
            }
            Statement::BeginStatementSet => {
                self.statement_set = Some(Vec::new());
                Ok(StatementResult::Done)
            }
            Statement::EndStatementSet => Err(position_error(
                parsed,
                "No Statement Set to submit. 'END' statement should be used after 'BEGIN STATEMENT SET'.",
            )),
            Statement::ShowJobs => Ok(self.show_jobs(None)),
            Statement::DescribeJob(id) => match self.show_jobs(Some(id)) {
                StatementResult::Rows { rows, .. } if rows.is_empty() => Err(position_error(
                    parsed,
                    format!("No job with id '{id}' runs or ran in this session."),
                )),
                rows => Ok(rows),
            },
            Statement::StopJob {
                id,
                savepoint,
                drain,
            } => self.stop_job(id, *savepoint, *drain),
        }
    }

    /// Whether `name` is free for a CREATE in its namespace (temporary objects may shadow
    /// permanent ones); `false` when it is taken and IF NOT EXISTS was written, an error when
    /// it is taken without it.
    fn is_new(
        &self,
        name: &str,
        temporary: bool,
        if_not_exists: bool,
        parsed: &ParsedStatement,
    ) -> Result<bool, StatementError> {
        match (
            self.catalog.get_in(name, temporary).is_some(),
            if_not_exists,
        ) {
            (false, _) => Ok(true),
            (true, true) => Ok(false),
            // Flink's messages (a view's name clashes as a table's does).
            (true, false) if temporary => Err(position_error(
                parsed,
                format!(
                    "Temporary table '`default_catalog`.`default_database`.`{name}`' already exists"
                ),
            )),
            (true, false) => Err(position_error(
                parsed,
                format!(
                    "Could not execute CreateTable in path `default_catalog`.`default_database`.`{name}`"
                ),
            )),
        }
    }

    /// A view from its definition: the query bound, the column list checked against it, and
    /// the text SHOW CREATE VIEW prints.
    fn define_view(
        &self,
        create: &CreateView,
        parsed: &ParsedStatement,
    ) -> Result<ViewDef, StatementError> {
        let plan = self.binder(&parsed.hints).bind_query(&create.query)?;
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

    /// A query's job, built from its stream plan, with its rows named as `result` (the logical
    /// plan's names, which the stream plan's root need not keep, as Calcite's does not).
    fn planned_query(
        &self,
        plan: &StreamPlan,
        result: &Schema,
    ) -> Result<PlannedQuery, StatementError> {
        self.wait_for_writers(&plan.scanned_tables());
        let ctx = self.eval_context();
        let mut graph = build_job(plan, &ctx, &self.job_options()?)?;
        let schema = result_schema(plan, result);
        // Flink's collect sink enforces NOT NULL as a table sink does: a NULL in a NOT NULL
        // result column (a DECIMAL cast that overflows) fails the query.
        let not_null: Vec<(usize, String)> = schema
            .fields
            .iter()
            .enumerate()
            .filter(|(_, f)| !f.data_type.nullable)
            .map(|(i, f)| (i, f.name.clone()))
            .collect();
        if !not_null.is_empty() {
            let drop = self.not_null_enforcer_drops()?;
            graph.push_before_sink(0, &|| {
                Box::new(crate::exec::not_null::NotNullEnforcer::new(
                    not_null.clone(),
                    drop,
                ))
            });
        }
        Ok(PlannedQuery {
            graph,
            schema,
            zone: ctx.zone,
            run_options: RunOptions {
                ordered: self.batch_mode(),
                clock: self.clock.clone(),
                ..RunOptions::default()
            },
        })
    }

    /// `table.exec.sink.not-null-enforcer`: whether a row with a NULL in a NOT NULL column
    /// is dropped (DROP) rather than failing the job (ERROR, the default).
    fn not_null_enforcer_drops(&self) -> Result<bool, StatementError> {
        match self
            .options
            .get(NOT_NULL_ENFORCER)
            .map(|v| v.to_ascii_uppercase())
        {
            None => Ok(false),
            Some(v) if v == "ERROR" => Ok(false),
            Some(v) if v == "DROP" => Ok(true),
            Some(v) => Err(StatementError::Job(format!(
                "Could not parse value '{v}' for key '{NOT_NULL_ENFORCER}': expected one of [ERROR, DROP]"
            ))),
        }
    }

    /// A `SET` option's value, as set.
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options.get(key).map(String::as_str)
    }
}

// The embedded API's entry points (`api/`): tables whose rows a program provides, and
// queries whose job the program runs and reads itself.
impl Session {
    /// Registers a table made by the program (`fromDataStream`) as a temporary object, as
    /// Flink's `createTemporaryView` does.
    /// Registers `function`, written in Rust, as the temporary system function `name`:
    /// SQL calls it by name before any built-in of that name, as Flink resolves a temporary
    /// system function first.
    pub fn register_function(
        &mut self,
        name: &str,
        function: Arc<dyn crate::function::user::ScalarFunction>,
    ) -> Result<(), StatementError> {
        self.check_new_function(name)?;
        self.catalog
            .register_function(crate::function::user::define(name, function));
        Ok(())
    }

    /// Registers a table function written in Rust under `name`, which `LATERAL TABLE(name(…))`
    /// calls.
    pub fn register_table_function(
        &mut self,
        name: &str,
        function: Arc<dyn crate::function::user::TableFunction>,
    ) -> Result<(), StatementError> {
        self.check_new_function(name)?;
        self.catalog
            .register_table_function(crate::function::user::UserTableFunction {
                name: name.to_lowercase(),
                function,
            });
        Ok(())
    }

    /// Registers an aggregate function written in Rust under `name`, which SQL calls as any
    /// aggregate (GROUP BY, group windows, OVER).
    pub fn register_aggregate_function(
        &mut self,
        name: &str,
        function: Arc<dyn crate::function::user::UserAggregateFunction>,
    ) -> Result<(), StatementError> {
        self.check_new_function(name)?;
        self.catalog
            .register_aggregate_function(crate::function::user::UserAggregateRef::define(
                name, function,
            ));
        Ok(())
    }

    /// A name a program may register a function under: a valid one, not taken.
    fn check_new_function(&self, name: &str) -> Result<(), StatementError> {
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_alphanumeric() || c == '_');
        if !valid {
            return Err(StatementError::Job(format!(
                "'{name}' is not a function name: letters, digits and '_', not starting with a digit"
            )));
        }
        if self.catalog.function(name).is_some()
            || self.catalog.table_function(name).is_some()
            || self.catalog.aggregate_function(name).is_some()
        {
            return Err(StatementError::Job(format!(
                "Could not register temporary system function. A function named '{name}' does already exist."
            )));
        }
        Ok(())
    }

    /// `CREATE FUNCTION name AS 'class'`: a JVM class cannot run here. A function the program
    /// registered under that name (in Rust) serves its calls — Flink too resolves a temporary
    /// system function before a catalog function — so a script written for Flink runs
    /// unchanged once the program provides the function.
    fn create_function(
        &mut self,
        parsed: &ParsedStatement,
        name: &ObjectName,
        class: &str,
        language: &str,
        system: bool,
        if_not_exists: bool,
    ) -> Result<StatementResult, StatementError> {
        let name = object_name_last(name);
        if self.catalog.function(&name).is_some() {
            if system && !if_not_exists {
                return Err(position_error(
                    parsed,
                    format!(
                        "Could not register temporary system function. A function named '{name}' does already exist."
                    ),
                ));
            }
            return Ok(StatementResult::Done);
        }
        Err(position_error(
            parsed,
            format!(
                "cannot create function '{name}' from the {language} class '{class}': Tideline runs no JVM or Python code.\nRegister a Rust implementation under this name with StreamTableEnvironment::create_temporary_function; calls to '{name}' then find it, and this statement leaves it in place."
            ),
        ))
    }

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
        let (plan, names) = self.plan_select(query, parsed)?;
        self.planned_query(&plan, &names)
    }

    /// The stream plan of a `SELECT`, as `execute` plans it (for a consumer of its
    /// retractions).
    pub fn stream_plan(&self, parsed: &ParsedStatement) -> Result<StreamPlan, StatementError> {
        let Statement::Query(query) = &parsed.statement else {
            return Err(position_error(parsed, "expected a SELECT query"));
        };
        Ok(self.plan_select(query, parsed)?.0)
    }

    /// A query's stream plan, and its result columns as the logical plan names them.
    fn plan_select(
        &self,
        query: &sqlparser::ast::Query,
        parsed: &ParsedStatement,
    ) -> Result<(StreamPlan, Schema), StatementError> {
        let plan = self.binder(&parsed.hints).bind_query(query)?;
        let logical = output_names(plan);
        let plan = translate(&logical, &self.planner_options(), RootConsumer::Retractions)
            .map_err(SqlError::from)?;
        Ok((plan, logical.schema().clone()))
    }
}

fn position_error(parsed: &ParsedStatement, message: impl Into<String>) -> StatementError {
    StatementError::Sql(SqlError::new(
        message,
        parsed.position.line,
        parsed.position.column,
    ))
}

/// The first name written twice in a view's column list.
fn repeated_column(names: &[String]) -> Option<&str> {
    (1..names.len())
        .find(|&i| names[..i].contains(&names[i]))
        .map(|i| names[i].as_str())
}

/// A query's result columns: the stream plan's root, named as the logical plan names them.
fn result_schema(plan: &StreamPlan, logical: &Schema) -> Schema {
    let mut schema = plan.schema().clone();
    for (field, named) in schema.fields.iter_mut().zip(&logical.fields) {
        field.name = named.name.clone();
    }
    schema
}

/// Beyond Flink, which drops late rows silently: says how many were dropped, and where.
fn report_late_rows(options: &RunOptions) {
    for (task, late) in options.metrics.late_rows() {
        eprintln!("[WARNING] {late} late row(s) dropped by {task}");
    }
}

/// An INSERT's job, ready to run ([`Session::launch`]).
pub(super) struct Launch {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) options: RunOptions,
}

impl Launch {
    /// Runs the job into its sinks (one per INSERT) until it ends or `cancel` is set; a job
    /// with checkpoints that stopped before its end says where a restart can go on from.
    pub(super) fn run(
        self,
        graph: JobGraph,
        sinks: &mut [&mut dyn Sink],
        cancel: Arc<AtomicBool>,
    ) -> Result<(), ExecError> {
        let result = run::run_sinks(graph, sinks, cancel, &self.options);
        report_late_rows(&self.options);
        if result.is_err()
            && let Some(config) = &self.options.checkpoint
        {
            let dir = config.dir.join(&self.id);
            match crate::runtime::checkpoint::storage::completed_checkpoints(&dir).last() {
                Some((_, path)) => eprintln!(
                    "[INFO] job {} stopped; its last checkpoint is {}",
                    self.id,
                    path.display()
                ),
                None => eprintln!("[INFO] job {} stopped before its first checkpoint", self.id),
            }
        }
        result
    }
}
