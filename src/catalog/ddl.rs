//! DDL on catalog definitions: `CREATE TABLE … LIKE` merged under Flink's rules, the column
//! changes of `ALTER TABLE`, and a table's definition as the `CREATE TABLE` that makes it
//! again. The session binds the resulting statement (types, computed columns, watermark).

use sqlparser::ast::{Ident, ObjectName};

use super::{Catalog, CatalogEntry, ColumnSource, TableDef};
use crate::sql::SqlError;
use crate::sql::ast::{
    AlterTableAction, ColumnDef, ColumnKind, CreateTable, LikeMode, LikePart, Position, TableLike,
    WatermarkDef,
};
use crate::sql::parser::session_object_name;

/// `CREATE TABLE t (…) WITH (…) LIKE src (…)`: the source's columns, watermark, primary
/// key and options merged with the new ones under Flink's rules — by default everything
/// is included, a new option overwrites the source's, a new column or a second watermark
/// or primary key is an error.
pub fn merge_like(
    catalog: &Catalog,
    create: &CreateTable,
    like: &TableLike,
) -> Result<CreateTable, SqlError> {
    let at = |message: String| SqlError::new(message, like.position.line, like.position.column);
    let source_name = session_object_name(&like.source).map_err(at)?;
    let Some(CatalogEntry::Table(source)) = catalog.get(&source_name) else {
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
            ColumnSource::Physical => ColumnKind::Physical(c.data_type.clone()),
            ColumnSource::Computed { expr, .. } => {
                if generated == LikeMode::Excluding {
                    continue;
                }
                ColumnKind::Computed(expr.clone())
            }
            ColumnSource::Metadata { key, is_virtual } => {
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

/// A table's definition as the `CREATE TABLE` that would make it again.
pub fn table_as_create(table: &TableDef) -> CreateTable {
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
        name: ObjectName::from(vec![Ident::new(table.name.clone())]),
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

/// The `CREATE TABLE` of `table` with the column change of an `ALTER TABLE` applied (add,
/// modify, drop or rename columns), with Flink's errors at the statement's position `at`.
pub fn alter_columns(
    table: &TableDef,
    action: &AlterTableAction,
    at: Position,
) -> Result<CreateTable, SqlError> {
    let mut create = table_as_create(table);
    match action {
        AlterTableAction::AddColumns(added) => {
            for c in added {
                if create.columns.iter().any(|e| e.name == c.name) {
                    return Err(at_error(
                        at,
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
                let Some(slot) = create.columns.iter_mut().find(|e| e.name == c.name) else {
                    return Err(at_error(
                        at,
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
                    return Err(at_error(
                        at,
                        format!("The column `{n}` does not exist in the base table."),
                    ));
                }
                if create.watermark.as_ref().is_some_and(|w| &w.column == n)
                    || create.primary_key.as_ref().is_some_and(|k| k.contains(n))
                {
                    return Err(at_error(
                        at,
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
                return Err(at_error(
                    at,
                    format!("Try to rename to an existing column `{to}`."),
                ));
            }
            // Expressions keep the old name; a column they read is not renamed.
            let quoted = format!("`{}`", from.replace('`', "``"));
            let referenced = table.columns.iter().any(|c| {
                matches!(&c.source, ColumnSource::Computed { text, .. } if text.contains(&quoted))
            }) || table.watermark.as_ref().is_some_and(|w| w.text.contains(&quoted));
            if referenced {
                return Err(at_error(
                    at,
                    format!(
                        "The column `{from}` is referenced by a computed column or the watermark and cannot be renamed."
                    ),
                ));
            }
            let Some(slot) = create.columns.iter_mut().find(|e| &e.name == from) else {
                return Err(at_error(
                    at,
                    format!("The column `{from}` does not exist in the base table."),
                ));
            };
            slot.name = to.clone();
            if let Some(w) = create.watermark.as_mut().filter(|w| &w.column == from) {
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
    Ok(create)
}

fn at_error(at: Position, message: impl Into<String>) -> SqlError {
    SqlError::new(message, at.line, at.column)
}
