//! `ALTER TABLE` and `ALTER VIEW`.

use super::{Session, StatementError, StatementResult, position_error};
use crate::catalog::CatalogEntry;
use crate::sql::ast::{AlterTableAction, CreateView, ParsedStatement};
use crate::sql::parser::session_object_name;
use sqlparser::ast::ObjectName;
use sqlparser::ast::Query;
use std::sync::Arc;

impl Session {
    /// `ALTER TABLE`: rename, options, and column changes (the table bound again).
    pub(super) fn alter_table(
        &mut self,
        parsed: &ParsedStatement,
        name: &ObjectName,
        if_exists: &bool,
        action: &AlterTableAction,
    ) -> Result<StatementResult, StatementError> {
        let name = session_object_name(name).map_err(|m| position_error(parsed, m))?;
        let table = match self.catalog.get_in(&name, false) {
            Some(CatalogEntry::Table(t)) => t.clone(),
            _ if *if_exists => return Ok(StatementResult::Done),
            _ => {
                return Err(position_error(
                    parsed,
                    format!(
                        "Table `default_catalog`.`default_database`.`{name}` doesn't exist or is a temporary table."
                    ),
                ));
            }
        };
        let mut altered = (*table).clone();
        match action {
            AlterTableAction::RenameTo(new_name) => {
                let new_name =
                    session_object_name(new_name).map_err(|m| position_error(parsed, m))?;
                if self.catalog.get_in(&new_name, false).is_some() {
                    return Err(position_error(
                        parsed,
                        format!(
                            "Could not execute ALTER TABLE default_catalog.default_database.{name} RENAME TO default_catalog.default_database.{new_name}: a table or view named {new_name} already exists"
                        ),
                    ));
                }
                self.catalog.remove(&name, false);
                altered.name = new_name.clone();
                self.catalog
                    .insert(new_name, CatalogEntry::Table(Arc::new(altered)), false);
                return Ok(StatementResult::Done);
            }
            AlterTableAction::SetOptions(options) => {
                for (key, value) in options {
                    match altered.options.iter_mut().find(|(k, _)| k == key) {
                        Some(existing) => existing.1 = value.clone(),
                        None => altered.options.push((key.clone(), value.clone())),
                    }
                }
            }
            AlterTableAction::ResetOptions(keys) => {
                altered.options.retain(|(k, _)| !keys.contains(k));
            }
            AlterTableAction::AddColumns(_)
            | AlterTableAction::ModifyColumns(_)
            | AlterTableAction::DropColumns(_)
            | AlterTableAction::RenameColumn { .. } => {
                // Column changes rebuild the table from its definition and bind it again,
                // so computed column types and the watermark are checked anew.
                let create = crate::catalog::ddl::alter_columns(&table, action, parsed.position)?;
                altered = self.binder(&parsed.hints).bind_create_table(&create)?;
            }
        }
        self.catalog
            .insert(name, CatalogEntry::Table(Arc::new(altered)), false);
        Ok(StatementResult::Done)
    }

    /// `ALTER VIEW … AS`.
    pub(super) fn alter_view_as(
        &mut self,
        parsed: &ParsedStatement,
        name: &ObjectName,
        query: &Query,
    ) -> Result<StatementResult, StatementError> {
        let view_name = session_object_name(name).map_err(|m| position_error(parsed, m))?;
        let Some(CatalogEntry::View(old)) = self.catalog.get_in(&view_name, false).cloned() else {
            return Err(position_error(
                parsed,
                format!(
                    "View `default_catalog`.`default_database`.`{view_name}` doesn't exist or is a temporary view."
                ),
            ));
        };
        let create = CreateView {
            name: name.clone(),
            temporary: false,
            if_not_exists: false,
            columns: Vec::new(),
            comment: old.comment.clone(),
            query: Box::new(query.clone()),
        };
        let view = self.define_view(&create, parsed)?;
        self.catalog
            .insert(view_name, CatalogEntry::View(Arc::new(view)), false);
        Ok(StatementResult::Done)
    }

    /// `ALTER VIEW … RENAME TO`.
    pub(super) fn alter_view_rename(
        &mut self,
        parsed: &ParsedStatement,
        name: &ObjectName,
        new_name: &ObjectName,
    ) -> Result<StatementResult, StatementError> {
        let name = session_object_name(name).map_err(|m| position_error(parsed, m))?;
        let new_name = session_object_name(new_name).map_err(|m| position_error(parsed, m))?;
        let Some(CatalogEntry::View(view)) = self.catalog.get_in(&name, false).cloned() else {
            return Err(position_error(
                parsed,
                format!(
                    "View `default_catalog`.`default_database`.`{name}` doesn't exist or is a temporary view."
                ),
            ));
        };
        if self.catalog.get_in(&new_name, false).is_some() {
            return Err(position_error(
                parsed,
                format!("a table or view named {new_name} already exists"),
            ));
        }
        self.catalog.remove(&name, false);
        let mut renamed = (*view).clone();
        renamed.name = new_name.clone();
        self.catalog
            .insert(new_name, CatalogEntry::View(Arc::new(renamed)), false);
        Ok(StatementResult::Done)
    }
}
