//! `INSERT INTO`: static partitions, the NOT NULL enforcer spliced before the sink, and
//! what the sink refuses, checked before the job is submitted.

use super::result::SinkTarget;
use super::{PlannedInsert, Session, StatementError, StatementResult, position_error};
use crate::catalog::CatalogEntry;
use crate::exec::not_null::NotNullEnforcer;
use crate::plan::stream::translate::translate_insert;
use crate::runtime::build::build_job;
use crate::sql::SqlError;
use crate::sql::ast::{Insert, ParsedStatement};
use crate::sql::parser::session_object_name;

impl Session {
    /// An INSERT, planned and checked against its sink, ready to submit.
    pub(super) fn insert(
        &self,
        parsed: &ParsedStatement,
        insert: &Insert,
    ) -> Result<StatementResult, StatementError> {
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
        let ctx = self.eval_context();
        let stream =
            translate_insert(&plan, &name, &self.planner_options()).map_err(SqlError::from)?;
        self.wait_for_writers(&stream.scanned_tables());
        let mut graph = build_job(&stream, &ctx, &self.job_options()?)?;
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
        if !not_null.is_empty() {
            let drop = self.not_null_enforcer_drops()?;
            graph.push_before_sink(&|| Box::new(NotNullEnforcer::new(not_null.clone(), drop)));
        }
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
        if !factory.accepts_updates(&request)
            && let Some(message) = stream.append_only_refusal(&target.name)
        {
            return Err(position_error(parsed, message));
        }
        factory.validate(&request)?;
        Ok(StatementResult::Insert(PlannedInsert { graph, target }))
    }

    /// `CREATE TABLE t WITH (…) AS SELECT …`: a table of the query's columns (their names and
    /// types, time attributes plain), and the INSERT job filling it. A query or sink that
    /// cannot be planned leaves no table behind.
    pub(super) fn create_table_as(
        &mut self,
        parsed: &ParsedStatement,
        create: &crate::sql::ast::CreateTable,
        query: &sqlparser::ast::Query,
    ) -> Result<StatementResult, StatementError> {
        let name = session_object_name(&create.name).map_err(|m| position_error(parsed, m))?;
        if !self.is_new(&name, create.temporary, create.if_not_exists, parsed)? {
            return Ok(StatementResult::Done);
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
        let planned = self.insert(parsed, &insert);
        if planned.is_err() {
            self.catalog.remove(&name, create.temporary);
        }
        planned
    }
}
