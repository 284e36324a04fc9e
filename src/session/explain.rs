//! `EXPLAIN`: the abstract syntax tree, the optimized physical plan and the execution plan,
//! as Flink prints them (of a query, an INSERT or a statement set); for an INSERT with
//! checkpointing on, then the state of each stateful operator in its job's last checkpoint
//! (beyond Flink).

use super::{Session, StatementError, StatementResult, position_error};
use crate::catalog::CatalogEntry;
use crate::plan::bind::output_names;
use crate::plan::explain::Spelling;
use crate::plan::logical::LogicalPlan;
use crate::plan::stream::StreamPlan;
use crate::plan::stream::changelog::RootConsumer;
use crate::plan::stream::scan_reuse::reuse_scans;
use crate::plan::stream::translate;
use crate::plan::stream::translate::translate_insert;
use crate::sql::SqlError;
use crate::sql::ast::{Insert, ParsedStatement, Statement};
use crate::sql::parser::session_object_name;

impl Session {
    /// `EXPLAIN [CHANGELOG_MODE]` of a query, an INSERT or a statement set: the text Flink
    /// prints (a statement set's INSERTs one after another in each section).
    pub(super) fn explain(
        &self,
        parsed: &ParsedStatement,
        statement: &Statement,
        changelog_mode: &bool,
    ) -> Result<StatementResult, StatementError> {
        let mut explained = Vec::new();
        match statement {
            Statement::Query(q) => {
                let logical = output_names(self.binder(&parsed.hints).bind_query(q)?);
                // An explained query has no consumer asking for `-U` (Flink plans it for
                // a sink that takes updates as upserts).
                let plan = translate(&logical, &self.planner_options(), RootConsumer::Upserts)
                    .map_err(SqlError::from)?;
                explained.push((logical.explain_ast(), plan, None));
            }
            Statement::Insert(insert) => explained.push(self.explain_insert(parsed, insert)?),
            Statement::StatementSet(inserts) => {
                for insert in inserts {
                    explained.push(self.explain_insert(parsed, insert)?);
                }
            }
            _ => {
                return Err(position_error(
                    parsed,
                    "EXPLAIN supports queries, INSERT statements and statement sets",
                ));
            }
        }
        let asts: Vec<&str> = explained.iter().map(|(ast, _, _)| ast.as_str()).collect();
        // Flink's physical optimization ends with its scan reuse.
        let planned: Vec<&StreamPlan> = explained.iter().map(|(_, p, _)| p).collect();
        let plans = reuse_scans(&planned);
        let plans: Vec<&StreamPlan> = plans.iter().collect();
        let mut text = format!(
            "== Abstract Syntax Tree ==\n{}\n== Optimized Physical Plan ==\n{}\n== Optimized Execution Plan ==\n{}\n",
            asts.join("\n"),
            StreamPlan::explain_all(&plans, Spelling::Physical, *changelog_mode),
            StreamPlan::explain_all(&plans, Spelling::Execution, false)
        );
        for (_, _, state) in explained {
            if let Some(state) = state {
                text.push('\n');
                text += &state;
            }
        }
        Ok(StatementResult::Explain(text))
    }

    /// An INSERT's abstract syntax tree, its stream plan, and (with checkpointing on) the
    /// state of its job's last checkpoint.
    fn explain_insert(
        &self,
        parsed: &ParsedStatement,
        insert: &Insert,
    ) -> Result<(String, StreamPlan, Option<String>), StatementError> {
        let name = session_object_name(&insert.table).map_err(|m| position_error(parsed, m))?;
        let Some(CatalogEntry::Table(table)) = self.catalog.get(&name) else {
            return Err(position_error(
                parsed,
                format!("table '{name}' does not exist"),
            ));
        };
        let writable = crate::connector::registry::sink(table)
            .map(|f| f.writable_metadata())
            .unwrap_or_default();
        let (logical, _) = self.binder(&parsed.hints).bind_insert_into(
            &insert.query,
            table,
            &insert.columns,
            &insert.static_partitions,
            &writable,
        )?;
        let plan =
            translate_insert(&logical, &name, &self.planner_options()).map_err(SqlError::from)?;
        let state = self.state_in_last_checkpoint(&name, &plan)?;
        let mut ast = format!(
            "LogicalSink(table=[default_catalog.default_database.{name}], fields=[{}])\n",
            plan.schema()
                .fields
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        // The query as written, without the Calc that fits it to the sink when that changes
        // nothing (Calcite's tree has none).
        let query = match &logical {
            LogicalPlan::Calc(c) if c.passes_columns_through() => &c.input,
            other => other,
        };
        for (i, line) in query.explain_ast().lines().enumerate() {
            ast.push_str(if i == 0 { "+- " } else { "   " });
            ast.push_str(line);
            ast.push('\n');
        }
        Ok((ast, plan, state))
    }
}
