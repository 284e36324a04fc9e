//! FROM items: tables, views, CTE names, subqueries, hints and the scan of a catalog table
//! with its computed and metadata columns.

use super::*;
use std::sync::Arc;

use sqlparser::ast::{self, Expr, Spanned, TableFactor};
use sqlparser::tokenizer::Span;

use super::super::expr::ScalarExpr;
use super::unnest::{LateralTable, UnnestItem};
use crate::catalog::{CatalogEntry, ColumnSource, TableDef};
use crate::sql::SqlError;
use crate::sql::ast::TableHint;
use crate::sql::parser::{object_name_last, session_object_name};
use crate::types::{DataType, Field, Schema, TimeAttribute};

impl<'a> Binder<'a> {
    /// The FROM items: each a table with its joins, items separated by commas joined as a
    /// cross join (Calcite's `condition=[true]`, the WHERE staying above).
    pub(super) fn bind_from(
        &mut self,
        from: &[ast::TableWithJoins],
    ) -> Result<(LogicalPlan, Vec<ScopeColumn>), SqlError> {
        let mut bound: Option<(LogicalPlan, Vec<ScopeColumn>)> = None;
        for item in from {
            // An UNNEST or LATERAL TABLE after a comma reads the items before it.
            let mut side = if let Some(unnest) = UnnestItem::of(&item.relation) {
                self.bind_unnest(bound.take(), &unnest, JoinType::Inner)?
            } else if let Some(lateral) = LateralTable::of(&item.relation) {
                self.bind_lateral_table(bound.take(), &lateral, JoinType::Inner)?
            } else {
                self.bind_table_factor(&item.relation)?
            };
            for join in &item.joins {
                if let Some(lateral) = LateralTable::of(&join.relation) {
                    let (join_type, on) = unnest_join_type(join)?;
                    let (plan, scope) = self.bind_lateral_table(Some(side), &lateral, join_type)?;
                    side = match on {
                        Some(on) => {
                            let condition = self.bind_expr(on, &scope)?;
                            (filtered(plan, &scope, Some(condition)), scope)
                        }
                        None => (plan, scope),
                    };
                    continue;
                }
                side = match UnnestItem::of(&join.relation) {
                    Some(unnest) => {
                        let (join_type, on) = unnest_join_type(join)?;
                        let (plan, scope) = self.bind_unnest(Some(side), &unnest, join_type)?;
                        match on {
                            // An inner join's condition filters the joined rows.
                            Some(on) => {
                                let condition = self.bind_expr(on, &scope)?;
                                (filtered(plan, &scope, Some(condition)), scope)
                            }
                            None => (plan, scope),
                        }
                    }
                    None => {
                        let right = self.bind_table_factor(&join.relation)?;
                        self.bind_join(side, right, join)?
                    }
                };
            }
            bound = Some(match bound {
                None => side,
                Some(left) => joined(left, side, JoinType::Inner, true_literal(), None),
            });
        }
        Ok(bound.expect("a FROM clause has an item"))
    }

    pub(super) fn bind_table_factor(
        &mut self,
        factor: &TableFactor,
    ) -> Result<(LogicalPlan, Vec<ScopeColumn>), SqlError> {
        match factor {
            TableFactor::Table {
                name, alias, args, ..
            } => {
                if args.is_some() {
                    return Err(error(name.span(), "table functions are not supported yet"));
                }
                let (table_name, plan) = self.bind_relation_name(name)?;
                let qualifier = alias
                    .as_ref()
                    .map_or(table_name.clone(), |a| a.name.value.clone());
                let plan = renamed_by_alias(plan, alias.as_ref())?;
                Ok(scoped(plan, Some(qualifier)))
            }
            TableFactor::Derived {
                subquery,
                alias,
                lateral,
                ..
            } => {
                if *lateral {
                    return Err(error(factor.span(), "LATERAL is not supported yet"));
                }
                let plan = self.bind_query(subquery)?;
                let plan = renamed_by_alias(plan, alias.as_ref())?;
                Ok(scoped(plan, alias.as_ref().map(|a| a.name.value.clone())))
            }
            TableFactor::TableFunction {
                expr: Expr::Function(f),
                alias,
            } if matches!(
                object_name_last(&f.name).to_uppercase().as_str(),
                "TUMBLE" | "HOP" | "CUMULATE" | "SESSION"
            ) =>
            {
                let plan = self.bind_window_table_function(f, factor.span())?;
                let plan = renamed_by_alias(plan, alias.as_ref())?;
                Ok(scoped(plan, alias.as_ref().map(|a| a.name.value.clone())))
            }
            TableFactor::TableFunction { expr, .. } => {
                let name = match expr {
                    Expr::Function(f) => object_name_last(&f.name).to_uppercase(),
                    _ => "TABLE".to_string(),
                };
                Err(error(
                    factor.span(),
                    format!("table function {name} is not supported yet"),
                ))
            }
            // `(b JOIN c ON …)`: the joined tables keep their names unless the parentheses
            // are named.
            TableFactor::NestedJoin {
                table_with_joins,
                alias,
            } => {
                let (plan, scope) =
                    self.bind_from(std::slice::from_ref(table_with_joins.as_ref()))?;
                match alias {
                    None => Ok((plan, scope)),
                    Some(alias) => {
                        let plan = renamed_by_alias(plan, Some(alias))?;
                        Ok(scoped(plan, Some(alias.name.value.clone())))
                    }
                }
            }
            other => Err(error(
                other.span(),
                "this kind of FROM item is not supported yet",
            )),
        }
    }

    /// A table, view or CTE by name: its name as the session resolves it, and its plan.
    pub(super) fn bind_relation_name(
        &mut self,
        name: &ast::ObjectName,
    ) -> Result<(String, LogicalPlan), SqlError> {
        // A catalog or database other than the session's: not found.
        let table_name = session_object_name(name)
            .map_err(|_| error(name.span(), format!("Object '{name}' not found")))?;
        let plan = if let Some(plan) = self.ctes.get(&table_name) {
            plan.clone()
        } else {
            match self.catalog.get(&table_name) {
                Some(CatalogEntry::Table(table)) => {
                    let hint = self.hint_after(name.span());
                    self.scan_table(table, hint)?
                }
                Some(CatalogEntry::View(view)) => {
                    if self.expanding.iter().any(|(v, _)| v == &table_name) {
                        return Err(view_cycle(&self.expanding, &table_name));
                    }
                    let mut binder = Binder::new(self.catalog, &[]);
                    binder.correlations = self.correlations;
                    binder.expanding = self.expanding.clone();
                    binder.expanding.push((table_name.clone(), name.span()));
                    let plan = binder.bind_query(&view.query)?;
                    rename(
                        plan,
                        &view
                            .schema
                            .fields
                            .iter()
                            .map(|f| f.name.clone())
                            .collect::<Vec<_>>(),
                        name.span(),
                    )?
                }
                None => {
                    return Err(error(
                        name.span(),
                        format!("Object '{table_name}' not found"),
                    ));
                }
            }
        };
        Ok((table_name, plan))
    }

    /// The `/*+ OPTIONS(…) */` hint written right after a table name.
    pub(super) fn hint_after(&self, name: Span) -> Option<&'a TableHint> {
        self.hints.iter().find(|h| {
            h.name == "OPTIONS"
                && (h.follows.line, h.follows.column) == (name.end.line, name.end.column)
        })
    }

    /// A table as a query sees it: the connector's physical columns, then the computed
    /// columns evaluated over them, in declared order.
    pub(super) fn scan_table(
        &self,
        table: &Arc<TableDef>,
        hint: Option<&TableHint>,
    ) -> Result<LogicalPlan, SqlError> {
        let table = with_hint(table, hint)?;
        let physical = table.physical_schema();
        let physical_scope = scope_of(&physical, None);
        // Metadata columns read their key's value after the physical columns.
        let mut metadata: Vec<String> = Vec::new();
        let mut scan_fields = physical.fields.clone();
        for column in &table.columns {
            if let ColumnSource::Metadata { key, .. } = &column.source {
                let key = key.clone().unwrap_or_else(|| column.name.clone());
                if !metadata.contains(&key) {
                    let ty = metadata_kind(&table, &key, &column.name)?;
                    scan_fields.push(Field::new(&key, ty));
                    metadata.push(key);
                }
            }
        }
        let scan = LogicalPlan::Scan(LogicalScan {
            table: table.clone(),
            schema: Schema::new(scan_fields.clone()),
            metadata: metadata.clone(),
        });
        let plan = if table
            .columns
            .iter()
            .all(|c| matches!(c.source, ColumnSource::Physical))
        {
            scan
        } else {
            self.computed_columns(
                &table,
                scan,
                &physical,
                &physical_scope,
                &metadata,
                &scan_fields,
            )?
        };
        let Some(spec) = &table.watermark else {
            return Ok(with_provided_rowtime(plan, &table));
        };
        // The watermark sees the table's columns; the rowtime attribute starts at the
        // assigner (the columns below it are plain timestamps).
        let scope = scope_of(plan.schema(), None);
        let watermark = Binder::new(self.catalog, &[]).bind_expr(&spec.expr, &scope)?;
        let mut schema = plan.schema().clone();
        let rowtime = schema.index_of(&spec.column).ok_or_else(|| {
            SqlError::new(
                format!("watermark column '{}' does not exist", spec.column),
                0,
                0,
            )
        })?;
        schema.fields[rowtime].time_attribute = Some(TimeAttribute::Rowtime);
        Ok(LogicalPlan::WatermarkAssigner(LogicalWatermarkAssigner {
            input: Box::new(plan),
            rowtime,
            watermark,
            schema,
        }))
    }

    /// The Calc that evaluates a table's computed and metadata columns over its physical
    /// ones, every column in declared order.
    pub(super) fn computed_columns(
        &self,
        table: &TableDef,
        scan: LogicalPlan,
        physical: &Schema,
        physical_scope: &[ScopeColumn],
        metadata: &[String],
        scan_fields: &[Field],
    ) -> Result<LogicalPlan, SqlError> {
        let mut exprs = Vec::new();
        let mut fields = Vec::new();
        let mut binder = Binder::new(self.catalog, &[]);
        for column in &table.columns {
            let expr = match &column.source {
                ColumnSource::Physical => {
                    let index = physical.index_of(&column.name).unwrap_or(0);
                    ScalarExpr::Column {
                        index,
                        data_type: column.data_type.clone(),
                    }
                }
                ColumnSource::Computed { expr, .. } => binder.bind_expr(expr, physical_scope)?,
                ColumnSource::Metadata { key, .. } => {
                    let key = key.as_deref().unwrap_or(&column.name);
                    let at = metadata.iter().position(|k| k == key).unwrap_or(0);
                    let index = physical.len() + at;
                    coerce(
                        ScalarExpr::Column {
                            index,
                            data_type: scan_fields[index].data_type.clone(),
                        },
                        &column.data_type,
                    )
                }
            };
            exprs.push(expr);
            fields.push(Field {
                name: column.name.clone(),
                data_type: column.data_type.clone(),
                time_attribute: column
                    .time_attribute
                    .filter(|a| *a == TimeAttribute::Proctime),
            });
        }
        Ok(LogicalPlan::Calc(LogicalCalc {
            input: Box::new(scan),
            filter: None,
            exprs,
            schema: Schema::new(fields),
        }))
    }
}

/// Flink's planner overflows its stack on a view that reads itself and reports it as a
/// failed parse; Tideline names the cycle instead.
/// The error points at the statement's reference to the outermost view.
/// `table` with an `OPTIONS` hint's pairs over its own options.
pub(super) fn with_hint(
    table: &Arc<TableDef>,
    hint: Option<&TableHint>,
) -> Result<Arc<TableDef>, SqlError> {
    let Some(h) = hint else {
        return Ok(table.clone());
    };
    if h.options.is_empty() {
        return Err(SqlError::new(
            "Hint [OPTIONS] only support non empty key value options",
            h.position.line,
            h.position.column,
        ));
    }
    let mut t = (**table).clone();
    for (k, v) in &h.options {
        match t.options.iter_mut().find(|(key, _)| key == k) {
            Some(entry) => entry.1 = v.clone(),
            None => t.options.push((k.clone(), v.clone())),
        }
    }
    Ok(Arc::new(t))
}

pub(super) fn view_cycle(expanding: &[(String, Span)], name: &str) -> SqlError {
    let start = expanding.iter().position(|(v, _)| v == name).unwrap_or(0);
    let mut path: Vec<&str> = expanding[start..].iter().map(|(v, _)| v.as_str()).collect();
    path.push(name);
    let message = format!(
        "View '{name}' is defined through itself: {}",
        path.join(" -> ")
    );
    match expanding.first() {
        Some((_, span)) => error(*span, message),
        None => SqlError::without_position(message),
    }
}

/// The type of metadata `key` of `table`'s connector.
pub(super) fn metadata_kind(
    table: &TableDef,
    key: &str,
    column: &str,
) -> Result<DataType, SqlError> {
    let known = crate::connector::registry::source_abilities(table).metadata;
    match known.iter().find(|(k, _)| *k == key) {
        Some((_, ty)) => Ok(ty.clone()),
        None if known.is_empty() => Err(SqlError::without_position(format!(
            "metadata column '{column}' of table '{}' is not supported by its connector",
            table.name
        ))),
        None => {
            let keys: Vec<&str> = known.iter().map(|(k, _)| *k).collect();
            Err(SqlError::without_position(format!(
                "Invalid metadata key '{key}' in column '{column}' of table 'default_catalog.default_database.{}'. The connector supports the following metadata keys for reading:\n{}",
                table.name,
                keys.join("\n")
            )))
        }
    }
}

/// The name a FROM item's columns are qualified by: its alias, or its table's name.
pub(super) fn factor_name(factor: &TableFactor) -> Option<String> {
    match factor {
        TableFactor::Table { alias: Some(a), .. } | TableFactor::Derived { alias: Some(a), .. } => {
            Some(a.name.value.clone())
        }
        TableFactor::Table { name, .. } => Some(object_name_last(name)),
        _ => None,
    }
}

/// A table whose rows a program provides (`api::StreamTableEnvironment`) has no WATERMARK:
/// its rowtime column carries the stream's own event timestamps and watermarks, so it is a
/// rowtime attribute from the scan up, as in Flink's `fromDataStream(…, $("t").rowtime())`.
pub(super) fn with_provided_rowtime(mut plan: LogicalPlan, table: &TableDef) -> LogicalPlan {
    if table.provided_source.is_none() {
        return plan;
    }
    let rowtime = table
        .columns
        .iter()
        .filter(|c| c.time_attribute == Some(TimeAttribute::Rowtime))
        .map(|c| c.name.as_str());
    for name in rowtime {
        let mut node = &mut plan;
        loop {
            let (schema, input) = match node {
                LogicalPlan::Scan(s) => (&mut s.schema, None),
                LogicalPlan::Calc(c) => (&mut c.schema, Some(&mut c.input)),
                _ => break,
            };
            if let Some(i) = schema.index_of(name) {
                schema.fields[i].time_attribute = Some(TimeAttribute::Rowtime);
            }
            match input {
                Some(input) => node = input,
                None => break,
            }
        }
    }
    plan
}

/// The join of an UNNEST with what comes before it: CROSS JOIN, INNER JOIN with its
/// condition (unless TRUE), or LEFT JOIN ON TRUE.
fn unnest_join_type(join: &ast::Join) -> Result<(JoinType, Option<&Expr>), SqlError> {
    use ast::{JoinConstraint, JoinOperator};
    let span = join.relation.span();
    let (join_type, constraint) = match &join.join_operator {
        JoinOperator::CrossJoin(JoinConstraint::None) => return Ok((JoinType::Inner, None)),
        JoinOperator::Join(c) | JoinOperator::Inner(c) => (JoinType::Inner, c),
        JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (JoinType::Left, c),
        _ => {
            return Err(error(
                span,
                "an UNNEST joins by CROSS JOIN, or by INNER or LEFT JOIN ON TRUE",
            ));
        }
    };
    match constraint {
        JoinConstraint::On(Expr::Value(v)) if matches!(v.value, ast::Value::Boolean(true)) => {
            Ok((join_type, None))
        }
        JoinConstraint::On(on) if join_type == JoinType::Inner => Ok((join_type, Some(on))),
        _ => Err(error(
            span,
            "an UNNEST joined by LEFT JOIN takes the condition ON TRUE only",
        )),
    }
}
