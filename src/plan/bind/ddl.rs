//! `CREATE TABLE`: columns, computed and metadata columns, WATERMARK and PRIMARY KEY checked
//! and turned into a catalog TableDef.

use super::*;

use crate::catalog::{ColumnSource, TableColumn, TableDef, WatermarkSpec};
use crate::sql::SqlError;
use crate::sql::ast::{ColumnKind, CreateTable};
use crate::sql::parser::object_name_last;
use crate::sql::unparse::unparse;
use crate::types::{Field, TimeAttribute, TypeKind};

impl<'a> Binder<'a> {
    /// Validates a CREATE TABLE and derives the types of its computed columns.
    pub fn bind_create_table(&mut self, create: &CreateTable) -> Result<TableDef, SqlError> {
        let name = object_name_last(&create.name);
        let mut columns: Vec<TableColumn> = Vec::new();
        // Computed columns see the physical ones, primary key columns as NOT NULL.
        let in_key = |name: &str| {
            create
                .primary_key
                .as_ref()
                .is_some_and(|pk| pk.iter().any(|k| k == name))
        };
        let physical_scope: Vec<ScopeColumn> = create
            .columns
            .iter()
            .filter_map(|c| match &c.kind {
                ColumnKind::Physical(t) => Some(ScopeColumn {
                    qualifier: None,
                    field: Field::new(
                        c.name.clone(),
                        if in_key(&c.name) {
                            millisecond_time(t).with_nullable(false)
                        } else {
                            millisecond_time(t)
                        },
                    ),
                }),
                _ => None,
            })
            .collect();
        for column in &create.columns {
            if columns.iter().any(|c| c.name == column.name) {
                return Err(SqlError::new(
                    format!("duplicate column '{}'", column.name),
                    column.position.line,
                    column.position.column,
                ));
            }
            let (data_type, source, time_attribute) = match &column.kind {
                ColumnKind::Physical(t) => (millisecond_time(t), ColumnSource::Physical, None),
                ColumnKind::Computed(expr) => {
                    let bound = self.bind_expr(expr, &physical_scope)?;
                    let attr = bound.time_attribute(&[]);
                    (
                        bound.data_type().clone(),
                        ColumnSource::Computed {
                            expr: expr.clone(),
                            text: unparse(expr),
                        },
                        attr,
                    )
                }
                ColumnKind::Metadata {
                    data_type,
                    key,
                    is_virtual,
                } => (
                    data_type.clone(),
                    ColumnSource::Metadata {
                        key: key.clone(),
                        is_virtual: *is_virtual,
                    },
                    None,
                ),
            };
            columns.push(TableColumn {
                name: column.name.clone(),
                data_type,
                source,
                time_attribute,
                comment: column.comment.clone(),
            });
        }
        if let Some(pk) = &create.primary_key {
            // Flink's messages, each at the key column it is about.
            for (i, key) in pk.iter().enumerate() {
                let at = |message: String| match create.primary_key_at.get(i) {
                    Some(p) => SqlError::new(message, p.line, p.column),
                    None => SqlError::without_position(message),
                };
                match columns.iter_mut().find(|c| &c.name == key) {
                    Some(c) if matches!(c.source, ColumnSource::Physical) => {
                        c.data_type.nullable = false
                    }
                    Some(_) => {
                        return Err(at(format!(
                            "Could not create a PRIMARY KEY with column '{key}'"
                        )));
                    }
                    None => {
                        return Err(at(format!(
                            "Primary key column '{key}' is not defined in the schema"
                        )));
                    }
                }
            }
            let mut seen = std::collections::HashSet::new();
            let repeated: Vec<&str> = pk
                .iter()
                .filter(|k| !seen.insert(k.as_str()))
                .map(String::as_str)
                .collect();
            if !repeated.is_empty() {
                let mut repeated = repeated;
                repeated.dedup();
                return Err(SqlError::new(
                    format!(
                        "Invalid primary key 'PK_{}'. A primary key must not contain duplicate columns. Found: [{}]",
                        pk.join("_"),
                        repeated.join(", ")
                    ),
                    create.primary_key_at.first().map_or(0, |p| p.line),
                    create.primary_key_at.first().map_or(0, |p| p.column),
                ));
            }
        }
        let watermark = match &create.watermark {
            Some(wm) => {
                let at = |m: String| SqlError::new(m, wm.position.line, wm.position.column);
                let index = columns
                    .iter()
                    .position(|c| c.name == wm.column)
                    .ok_or_else(|| {
                        at(format!("watermark column '{}' does not exist", wm.column))
                    })?;
                if !matches!(columns[index].data_type.kind, TypeKind::Timestamp(p) | TypeKind::TimestampLtz(p) if p <= 3)
                {
                    return Err(at(format!(
                        "the rowtime attribute '{}' must be TIMESTAMP(p) or TIMESTAMP_LTZ(p) with p <= 3, got {}",
                        wm.column, columns[index].data_type.kind
                    )));
                }
                let scope: Vec<ScopeColumn> = columns
                    .iter()
                    .map(|c| ScopeColumn {
                        qualifier: None,
                        field: Field::new(c.name.clone(), c.data_type.clone()),
                    })
                    .collect();
                let bound = self.bind_expr(&wm.expr, &scope)?;
                if !bound.data_type().kind.is_timestamp() {
                    return Err(at(format!(
                        "the watermark expression must return a timestamp, got {}",
                        bound.data_type().kind
                    )));
                }
                columns[index].time_attribute = Some(TimeAttribute::Rowtime);
                Some(WatermarkSpec {
                    column: wm.column.clone(),
                    expr: wm.expr.clone(),
                    text: unparse(&wm.expr),
                })
            }
            None => None,
        };
        // Flink's two checks of `PARTITIONED BY`: the key names a column, and a physical one.
        for key in &create.partition_keys {
            match columns.iter().find(|c| &c.name == key) {
                None => {
                    let names: Vec<String> =
                        columns.iter().map(|c| format!("'{}'", c.name)).collect();
                    return Err(SqlError::without_position(format!(
                        "Partition column '{key}' not defined in the table schema. Available columns: [{}]",
                        names.join(", ")
                    )));
                }
                Some(c) if !matches!(c.source, ColumnSource::Physical) => {
                    let physical: Vec<&str> = columns
                        .iter()
                        .filter(|c| matches!(c.source, ColumnSource::Physical))
                        .map(|c| c.name.as_str())
                        .collect();
                    return Err(SqlError::without_position(format!(
                        "Invalid partition key '{key}'. A partition key must reference a physical column in the schema. Available columns are: [{}]",
                        physical.join(", ")
                    )));
                }
                Some(_) => {}
            }
        }
        Ok(TableDef {
            name,
            columns,
            watermark,
            primary_key: create.primary_key.clone(),
            comment: create.comment.clone(),
            partition_keys: create.partition_keys.clone(),
            options: create.options.clone(),
            provided_source: None,
        })
    }
}
