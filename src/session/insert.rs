//! `INSERT INTO`: static partitions, the NOT NULL enforcer spliced before the sink, and
//! what the sink refuses, checked before the job is submitted; the job of one INSERT or of
//! a statement set's.

use super::result::SinkTarget;
use super::{PlannedInsert, Session, StatementError, StatementResult, position_error};
use crate::catalog::CatalogEntry;
use crate::exec::not_null::NotNullEnforcer;
use crate::plan::stream::StreamPlan;
use crate::plan::stream::translate::translate_insert;
use crate::runtime::build::build_sinks;
use crate::sql::SqlError;
use crate::sql::ast::{Insert, ParsedStatement, Statement};
use crate::sql::parser::session_object_name;

/// An INSERT planned and checked against its sink, before its job is built (alone, or
/// with the other INSERTs of a statement set).
pub(super) struct InsertPlan {
    stream: StreamPlan,
    target: SinkTarget,
    /// The sink's NOT NULL columns (position and name), which Flink's enforcer checks.
    not_null: Vec<(usize, String)>,
}

impl Session {
    /// An INSERT, planned and checked against its sink, ready to submit.
    pub(super) fn insert(
        &self,
        parsed: &ParsedStatement,
        insert: &Insert,
    ) -> Result<StatementResult, StatementError> {
        let plan = self.plan_insert(parsed, insert)?;
        self.insert_job(vec![plan])
    }

    /// The job of `plans` (one INSERT, or a statement set's): one graph reading what they
    /// share once, a sink per INSERT.
    pub(super) fn insert_job(
        &self,
        plans: Vec<InsertPlan>,
    ) -> Result<StatementResult, StatementError> {
        let mut scanned = Vec::new();
        for plan in &plans {
            scanned.extend(plan.stream.scanned_tables());
        }
        self.wait_for_writers(&scanned);
        let ctx = self.eval_context();
        let streams: Vec<&StreamPlan> = plans.iter().map(|p| &p.stream).collect();
        let mut graph = build_sinks(&streams, &ctx, &self.job_options()?)?;
        let mut targets = Vec::new();
        for (sink, plan) in plans.into_iter().enumerate() {
            if !plan.not_null.is_empty() {
                let drop = self.not_null_enforcer_drops()?;
                let not_null = plan.not_null;
                graph.push_before_sink(sink, &|| {
                    Box::new(NotNullEnforcer::new(not_null.clone(), drop))
                });
            }
            targets.push(plan.target);
        }
        Ok(StatementResult::Insert(PlannedInsert { graph, targets }))
    }

    /// A statement while `BEGIN STATEMENT SET` is open: an INSERT joins the set, `END`
    /// submits it (nothing when it is empty), anything else is refused, as Flink's SQL
    /// gateway refuses it.
    pub(super) fn in_statement_set(
        &mut self,
        parsed: &ParsedStatement,
    ) -> Result<StatementResult, StatementError> {
        match &parsed.statement {
            Statement::Insert(insert) => {
                let plan = self.plan_insert(parsed, insert)?;
                self.statement_set.get_or_insert_with(Vec::new).push(plan);
                Ok(StatementResult::Done)
            }
            Statement::CreateTableAs { table, query } => {
                if let Some(plan) = self.plan_create_table_as(parsed, table, query)? {
                    self.statement_set.get_or_insert_with(Vec::new).push(plan);
                }
                Ok(StatementResult::Done)
            }
            Statement::EndStatementSet => {
                let plans = self.statement_set.take().unwrap_or_default();
                if plans.is_empty() {
                    return Ok(StatementResult::Done);
                }
                self.insert_job(plans)
            }
            _ => Err(position_error(
                parsed,
                "Only 'INSERT/CREATE TABLE AS' statement is allowed in Statement Set or use 'END' statement to submit Statement Set.",
            )),
        }
    }

    /// An INSERT, planned and checked against its sink.
    pub(super) fn plan_insert(
        &self,
        parsed: &ParsedStatement,
        insert: &Insert,
    ) -> Result<InsertPlan, StatementError> {
        let name = session_object_name(&insert.table).map_err(|m| position_error(parsed, m))?;
        let table = match self.catalog.get(&name) {
            Some(CatalogEntry::Table(t)) => t.clone(),
            _ => {
                return Err(position_error(
                    parsed,
                    format!("table '{name}' does not exist"),
                ));
            }
        };
        let table = self
            .binder(&parsed.hints)
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
        let factory = crate::connector::registry::sink(&table)?;
        let (plan, metadata) = self.binder(&parsed.hints).bind_insert_into(
            &insert.query,
            &table,
            &insert.columns,
            &insert.static_partitions,
            &factory.writable_metadata(),
        )?;
        let sink_schema = plan.schema().clone();
        let stream =
            translate_insert(&plan, &name, &self.planner_options()).map_err(SqlError::from)?;
        // NULLs bound for NOT NULL sink columns: Flink's enforcer.
        let not_null: Vec<(usize, String)> = sink_schema
            .fields
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                // As the table declares the column (the query's type may admit NULL).
                table
                    .columns
                    .iter()
                    .any(|c| c.name == f.name && !c.data_type.nullable)
            })
            .map(|(i, f)| (i, f.name.clone()))
            .collect();
        // What the sink refuses, and its options, are checked before the job is
        // submitted.
        let target = SinkTarget {
            factory,
            written: plan.schema().clone(),
            metadata,
            name,
            table,
            physical,
            static_partitions: insert.static_partitions.clone(),
            overwrite: insert.overwrite,
        };
        let request = target.request(self.batch_mode(), self.clock.clone(), false);
        factory
            .check(&request)
            .map_err(|message| position_error(parsed, message))?;
        // A batch job's updating operators (aggregates, joins, Top-N) emit final rows only,
        // which any sink takes, as Flink's batch planner plans them.
        if !self.batch_mode()
            && !factory.accepts_updates(&request)
            && let Some(message) = stream.append_only_refusal(&target.name)
        {
            return Err(position_error(parsed, message));
        }
        factory.validate(&request)?;
        Ok(InsertPlan {
            stream,
            target,
            not_null,
        })
    }

    /// `CREATE TABLE t WITH (…) AS SELECT …`: a table of the query's columns (their names and
    /// types, time attributes plain), and the INSERT job filling it.
    pub(super) fn create_table_as(
        &mut self,
        parsed: &ParsedStatement,
        create: &crate::sql::ast::CreateTable,
        query: &sqlparser::ast::Query,
    ) -> Result<StatementResult, StatementError> {
        match self.plan_create_table_as(parsed, create, query)? {
            Some(plan) => self.insert_job(vec![plan]),
            None => Ok(StatementResult::Done),
        }
    }

    /// The table of a `CREATE TABLE … AS SELECT`, created, and its INSERT planned; `None`
    /// when the table exists and IF NOT EXISTS was written. A query or sink that cannot be
    /// planned leaves no table behind.
    fn plan_create_table_as(
        &mut self,
        parsed: &ParsedStatement,
        create: &crate::sql::ast::CreateTable,
        query: &sqlparser::ast::Query,
    ) -> Result<Option<InsertPlan>, StatementError> {
        let name = session_object_name(&create.name).map_err(|m| position_error(parsed, m))?;
        if !self.is_new(&name, create.temporary, create.if_not_exists, parsed)? {
            return Ok(None);
        }
        let plan = crate::plan::bind::output_names(self.binder(&parsed.hints).bind_query(query)?);
        let mut table = create.clone();
        table.columns = plan
            .schema()
            .fields
            .iter()
            .map(|f| crate::sql::ast::ColumnDef {
                name: f.name.clone(),
                kind: crate::sql::ast::ColumnKind::Physical(f.data_type.clone()),
                comment: None,
                position: Default::default(),
            })
            .collect();
        let def = self.binder(&parsed.hints).bind_create_table(&table)?;
        self.catalog.insert(
            name.clone(),
            CatalogEntry::Table(std::sync::Arc::new(def)),
            create.temporary,
        );
        let insert = Insert {
            table: create.name.clone(),
            static_partitions: Vec::new(),
            columns: Vec::new(),
            overwrite: false,
            query: Box::new(query.clone()),
        };
        let planned = self.plan_insert(parsed, &insert);
        if planned.is_err() {
            self.catalog.remove(&name, create.temporary);
        }
        planned.map(Some)
    }
}
