//! The session catalog: tables and views by name, as `CREATE` left them.
//!
//! Names resolve case-sensitively, as Flink's default catalog does; a qualified name
//! `catalog.db.t` resolves by its last part (there is one catalog and one database,
//! `default_catalog.default_database`).

use std::collections::BTreeMap;
use std::sync::Arc;

use sqlparser::ast::{Expr, Query};

use crate::types::{DataType, Field, Schema, TimeAttribute};

// Built once per statement or column, never on a hot path: boxing would only add noise.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum ColumnSource {
    Physical,
    /// `name AS expr`; `text` is the expression as Flink prints it.
    Computed {
        expr: Expr,
        text: String,
    },
    Metadata {
        key: Option<String>,
        is_virtual: bool,
    },
}

#[derive(Debug, Clone)]
pub struct TableColumn {
    pub name: String,
    pub data_type: DataType,
    pub source: ColumnSource,
    pub time_attribute: Option<TimeAttribute>,
    pub comment: Option<String>,
}

#[derive(Debug, Clone)]
pub struct WatermarkSpec {
    pub column: String,
    pub expr: Expr,
    /// The expression as Flink prints it (`` `ts` - INTERVAL '5' SECOND ``).
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct TableDef {
    pub name: String,
    pub columns: Vec<TableColumn>,
    pub watermark: Option<WatermarkSpec>,
    pub primary_key: Option<Vec<String>>,
    pub comment: Option<String>,
    /// `WITH` options in the order written.
    pub options: Vec<(String, String)>,
}

impl TableDef {
    /// All columns, as a query over the table sees them.
    pub fn schema(&self) -> Schema {
        Schema::new(
            self.columns
                .iter()
                .map(|c| Field {
                    name: c.name.clone(),
                    data_type: c.data_type.clone(),
                    time_attribute: c.time_attribute,
                })
                .collect(),
        )
    }

    /// The columns the connector produces.
    pub fn physical_schema(&self) -> Schema {
        Schema::new(
            self.columns
                .iter()
                .filter(|c| matches!(c.source, ColumnSource::Physical))
                .map(|c| Field::new(c.name.clone(), c.data_type.clone()))
                .collect(),
        )
    }

    pub fn option(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `SHOW CREATE TABLE`, formatted as Flink prints it.
    pub fn show_create(&self) -> String {
        let mut lines = Vec::new();
        for c in &self.columns {
            let mut line = format!("  `{}` ", c.name);
            match &c.source {
                ColumnSource::Computed { text, .. } => line.push_str(&format!("AS {text}")),
                ColumnSource::Physical => line.push_str(&c.data_type.to_string()),
                ColumnSource::Metadata { key, is_virtual } => {
                    line.push_str(&format!("{} METADATA", c.data_type));
                    if let Some(k) = key {
                        line.push_str(&format!(" FROM '{k}'"));
                    }
                    if *is_virtual {
                        line.push_str(" VIRTUAL");
                    }
                }
            }
            if let Some(comment) = &c.comment {
                line.push_str(&format!(" COMMENT '{}'", comment.replace('\'', "''")));
            }
            lines.push(line);
        }
        if let Some(wm) = &self.watermark {
            lines.push(format!("  WATERMARK FOR `{}` AS {}", wm.column, wm.text));
        }
        if let Some(pk) = &self.primary_key {
            let cols: Vec<String> = pk.iter().map(|c| format!("`{c}`")).collect();
            lines.push(format!(
                "  CONSTRAINT `PK_{}` PRIMARY KEY ({}) NOT ENFORCED",
                pk.join("_"),
                cols.join(", ")
            ));
        }
        let mut out = format!(
            "CREATE TABLE `default_catalog`.`default_database`.`{}` (\n{}\n)",
            self.name,
            lines.join(",\n")
        );
        if let Some(comment) = &self.comment {
            out.push_str(&format!("\nCOMMENT '{}'", comment.replace('\'', "''")));
        }
        let options: Vec<String> = self
            .options
            .iter()
            .map(|(k, v)| {
                format!(
                    "  '{}' = '{}'",
                    k.replace('\'', "''"),
                    v.replace('\'', "''")
                )
            })
            .collect();
        out.push_str(&format!(" WITH (\n{}\n)\n", options.join(",\n")));
        out
    }
}

#[derive(Debug, Clone)]
pub struct ViewDef {
    pub name: String,
    pub query: Box<Query>,
    pub schema: Schema,
}

#[derive(Debug, Clone)]
pub enum CatalogEntry {
    Table(Arc<TableDef>),
    View(Arc<ViewDef>),
}

#[derive(Debug, Clone, Default)]
pub struct Catalog {
    entries: BTreeMap<String, CatalogEntry>,
}

impl Catalog {
    pub fn get(&self, name: &str) -> Option<&CatalogEntry> {
        self.entries.get(name)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    pub fn insert(&mut self, name: String, entry: CatalogEntry) {
        self.entries.insert(name, entry);
    }

    pub fn remove(&mut self, name: &str) -> Option<CatalogEntry> {
        self.entries.remove(name)
    }

    /// Tables and views, sorted by name (Flink's `SHOW TABLES` lists both).
    pub fn names(&self) -> impl Iterator<Item = (&String, &CatalogEntry)> {
        self.entries.iter()
    }
}
