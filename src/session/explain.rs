//! `EXPLAIN`: the abstract syntax tree, the optimized physical plan and the execution plan,
//! as Flink prints them; for an INSERT with checkpointing on, then the state of each
//! stateful operator in its job's last checkpoint (beyond Flink).

use super::{Session, StatementError, StatementResult, position_error};
use crate::catalog::CatalogEntry;
use crate::plan::bind::output_names;
use crate::plan::explain::Spelling;
use crate::plan::logical::LogicalPlan;
use crate::plan::stream::changelog::RootConsumer;
use crate::plan::stream::translate;
use crate::plan::stream::translate::translate_insert;
use crate::sql::SqlError;
use crate::sql::ast::{ParsedStatement, Statement};
use crate::sql::parser::session_object_name;

impl Session {
    /// `EXPLAIN [CHANGELOG_MODE]` of a query or an INSERT: the text Flink prints.
    pub(super) fn explain(
        &self,
        parsed: &ParsedStatement,
        statement: &Statement,
        changelog_mode: &bool,
    ) -> Result<StatementResult, StatementError> {
        let binder = || self.binder(&parsed.hints);
        let mut state = None;
        let (ast, plan) = match statement {
            Statement::Query(q) => {
                let logical = output_names(binder().bind_query(q)?);
                // An explained query has no consumer asking for `-U` (Flink plans it for
                // a sink that takes updates as upserts).
                let plan = translate(&logical, &self.planner_options(), RootConsumer::Upserts)
                    .map_err(SqlError::from)?;
                (logical.explain_ast(), plan)
            }
            Statement::Insert(insert) => {
                let name =
                    session_object_name(&insert.table).map_err(|m| position_error(parsed, m))?;
                let Some(CatalogEntry::Table(table)) = self.catalog.get(&name) else {
                    return Err(position_error(
                        parsed,
                        format!("table '{name}' does not exist"),
                    ));
                };
                let writable = crate::connector::registry::sink(table)
                    .map(|f| f.writable_metadata())
                    .unwrap_or_default();
                let (logical, _) = binder().bind_insert_into(
                    &insert.query,
                    table,
                    &insert.columns,
                    &insert.static_partitions,
                    &writable,
                )?;
                let plan = translate_insert(&logical, &name, &self.planner_options())
                    .map_err(SqlError::from)?;
                state = self.state_in_last_checkpoint(&name, &plan)?;
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
        let mut text = format!(
            "== Abstract Syntax Tree ==\n{ast}\n== Optimized Physical Plan ==\n{}\n== Optimized Execution Plan ==\n{}\n",
            plan.explain(Spelling::Physical, *changelog_mode),
            plan.explain(Spelling::Execution, false)
        );
        if let Some(state) = state {
            text.push('\n');
            text += &state;
        }
        Ok(StatementResult::Explain(text))
    }
}
