//! `INSERT INTO`: the query placed on the sink's columns, cast where Flink casts implicitly.

use super::*;
use std::sync::Arc;

use sqlparser::ast::{Query, Spanned};
use sqlparser::tokenizer::Span;

use crate::catalog::TableDef;
use crate::sql::SqlError;
use crate::types::coercion::can_assign;
use crate::types::{Field, Schema};

impl<'a> Binder<'a> {
    /// Binds the query of `INSERT INTO table …` and casts its columns to the sink's types,
    /// where Flink casts implicitly; other mismatches fail as Flink words them.
    /// `INSERT INTO table [(columns)] query`: the query's columns placed on the sink's (a
    /// column list names where each goes; the others get NULL), checked and cast as Flink does.
    pub fn bind_insert(
        &mut self,
        query: &Query,
        table: &str,
        sink: &Schema,
        columns: &[String],
    ) -> Result<LogicalPlan, SqlError> {
        let mut plan = self.bind_query(query)?;
        if !columns.is_empty() {
            plan = place_columns(plan, sink, columns).map_err(|m| error(query.span(), m))?;
        }
        let show = |schema: &Schema| {
            let fields: Vec<String> = schema
                .fields
                .iter()
                .map(|f| format!("{}: {}", f.name, f.data_type))
                .collect();
            format!("[{}]", fields.join(", "))
        };
        let mismatch = |cause: String| {
            error(
                query.span(),
                format!(
                    "Column types of query result and sink for 'default_catalog.default_database.{table}' do not match.\nCause: {cause}\n\nQuery schema: {}\nSink schema:  {}",
                    show(plan.schema()),
                    show(sink)
                ),
            )
        };
        if plan.schema().len() != sink.len() {
            return Err(mismatch("Different number of columns.".into()));
        }
        for (i, (from, to)) in plan.schema().fields.iter().zip(&sink.fields).enumerate() {
            if !can_assign(&from.data_type.kind, &to.data_type.kind) {
                return Err(mismatch(format!(
                    "Incompatible types for sink column '{}' at position {}.",
                    to.name,
                    i + 1
                )));
            }
        }
        let fields = sink
            .fields
            .iter()
            .map(|f| Field::new(&f.name, f.data_type.clone()))
            .collect::<Vec<_>>();
        Ok(cast_columns(plan, &fields))
    }

    /// A sink table with the `OPTIONS` hint written right after its name in an `INSERT`
    /// applied, as Flink applies sink hints.
    pub fn sink_table(&self, table: &Arc<TableDef>, name: Span) -> Result<Arc<TableDef>, SqlError> {
        with_hint(table, self.hint_after(name))
    }
}
