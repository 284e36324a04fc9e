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

    /// `INSERT INTO table …` as the sink takes it: the query placed on the table's persisted
    /// columns in table order (physical, and metadata not declared VIRTUAL; the static
    /// partitions left out), then reordered into the physical columns followed by the
    /// metadata columns, whose keys come back in order. `writable`: the metadata keys the
    /// sink writes; persisted metadata it does not write is refused as Flink refuses it.
    pub fn bind_insert_into(
        &mut self,
        query: &Query,
        table: &TableDef,
        columns: &[String],
        static_partitions: &[(String, String)],
        writable: &[(&str, crate::types::DataType)],
    ) -> Result<(LogicalPlan, Vec<String>), SqlError> {
        let qualified = format!("default_catalog.default_database.{}", table.name);
        let persisted: Vec<(Field, Option<String>)> = table
            .persisted_columns()
            .into_iter()
            .filter(|(f, key)| {
                key.is_some() || !static_partitions.iter().any(|(k, _)| k == &f.name)
            })
            .collect();
        let mut keys = Vec::new();
        for (field, key) in &persisted {
            let Some(key) = key else { continue };
            if writable.is_empty() {
                return Err(SqlError::without_position(format!(
                    "Table '{qualified}' declares persistable metadata columns, but the underlying DynamicTableSink doesn't implement the SupportsWritingMetadata interface. If the column should not be persisted, it can be declared with the VIRTUAL keyword."
                )));
            }
            if !writable.iter().any(|(k, _)| k == key) {
                let known: Vec<&str> = writable.iter().map(|(k, _)| *k).collect();
                return Err(SqlError::without_position(format!(
                    "Invalid metadata key '{key}' in column '{}' of table '{qualified}'. The DynamicTableSink supports the following metadata keys for writing:\n{}",
                    field.name,
                    known.join("\n")
                )));
            }
            keys.push(key.clone());
        }
        let sink = Schema::new(persisted.iter().map(|(f, _)| f.clone()).collect());
        let plan = self.bind_insert(query, &table.name, &sink, columns)?;
        if keys.is_empty() {
            return Ok((plan, keys));
        }
        // Physical columns first, then the metadata ones.
        let order: Vec<usize> = (0..persisted.len())
            .filter(|&i| persisted[i].1.is_none())
            .chain((0..persisted.len()).filter(|&i| persisted[i].1.is_some()))
            .collect();
        let exprs: Vec<ScalarExpr> = order
            .iter()
            .map(|&i| ScalarExpr::Column {
                index: i,
                data_type: plan.schema().fields[i].data_type.clone(),
            })
            .collect();
        let schema = Schema::new(
            order
                .iter()
                .map(|&i| plan.schema().fields[i].clone())
                .collect(),
        );
        Ok((
            LogicalPlan::Calc(LogicalCalc {
                input: Box::new(plan),
                filter: None,
                exprs,
                schema,
            }),
            keys,
        ))
    }

    /// A sink table with the `OPTIONS` hint written right after its name in an `INSERT`
    /// applied, as Flink applies sink hints.
    pub fn sink_table(&self, table: &Arc<TableDef>, name: Span) -> Result<Arc<TableDef>, SqlError> {
        with_hint(table, self.hint_after(name))
    }
}
