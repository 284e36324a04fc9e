//! The session catalog: tables and views by name, as `CREATE` left them.
//!
//! Names resolve case-sensitively, as Flink's default catalog does; a qualified name
//! `catalog.db.t` resolves by its last part (there is one catalog and one database,
//! `default_catalog.default_database`).

pub mod ddl;

use std::collections::BTreeMap;
use std::sync::Arc;

use sqlparser::ast::{Expr, Query};

use crate::sql::unparse::quote_identifier;
use crate::types::{DataType, Field, Schema, TimeAttribute, serializable_type_text};

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
    /// `PARTITIONED BY` keys, physical columns, in the order written.
    pub partition_keys: Vec<String>,
    /// `WITH` options in the order written.
    pub options: Vec<(String, String)>,
    /// The rows' source when a program provides it instead of a connector (a stream
    /// registered through `api::StreamTableEnvironment`); `None` for tables made by DDL.
    pub provided_source: Option<ProvidedSource>,
}

/// A source a program provides. Opaque here (the catalog comes before the runtime): the job
/// builder knows the concrete type, `connector::source::stream::ProvidedStream`.
pub type ProvidedSource = Arc<dyn std::any::Any + Send + Sync>;

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

    /// The columns an INSERT writes, in table order: the physical ones and the metadata
    /// columns not declared VIRTUAL (Flink's persisted columns), each metadata column with
    /// its key.
    pub fn persisted_columns(&self) -> Vec<(Field, Option<String>)> {
        self.columns
            .iter()
            .filter_map(|c| {
                let key = match &c.source {
                    ColumnSource::Physical => None,
                    ColumnSource::Metadata {
                        key,
                        is_virtual: false,
                    } => Some(key.clone().unwrap_or_else(|| c.name.clone())),
                    _ => return None,
                };
                Some((Field::new(c.name.clone(), c.data_type.clone()), key))
            })
            .collect()
    }

    pub fn option(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `SHOW CREATE TABLE`, formatted as Flink prints it: names in backquotes (a backquote
    /// doubled), `CREATE TEMPORARY TABLE` for a temporary one, options sorted by key.
    pub fn show_create(&self, temporary: bool) -> String {
        let mut lines = Vec::new();
        for c in &self.columns {
            let mut line = format!("  {} ", quote_identifier(&c.name));
            match &c.source {
                ColumnSource::Computed { text, .. } => line.push_str(&format!("AS {text}")),
                ColumnSource::Physical => {
                    line.push_str(&serializable_type_text(&c.data_type.to_string()))
                }
                ColumnSource::Metadata { key, is_virtual } => {
                    line.push_str(&format!(
                        "{} METADATA",
                        serializable_type_text(&c.data_type.to_string())
                    ));
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
            lines.push(format!(
                "  WATERMARK FOR {} AS {}",
                quote_identifier(&wm.column),
                wm.text
            ));
        }
        if let Some(pk) = &self.primary_key {
            let cols: Vec<String> = pk.iter().map(|c| quote_identifier(c)).collect();
            lines.push(format!(
                "  CONSTRAINT {} PRIMARY KEY ({}) NOT ENFORCED",
                quote_identifier(&format!("PK_{}", pk.join("_"))),
                cols.join(", ")
            ));
        }
        let mut out = format!(
            "CREATE {}TABLE `default_catalog`.`default_database`.{} (\n{}\n)",
            if temporary { "TEMPORARY " } else { "" },
            quote_identifier(&self.name),
            lines.join(",\n")
        );
        if let Some(comment) = &self.comment {
            out.push_str(&format!("\nCOMMENT '{}'", comment.replace('\'', "''")));
        }
        if !self.partition_keys.is_empty() {
            let keys: Vec<String> = self
                .partition_keys
                .iter()
                .map(|k| format!("`{}`", k.replace('`', "``")))
                .collect();
            out.push_str(&format!("\nPARTITIONED BY ({})", keys.join(", ")));
        }
        // Flink prints the options sorted by key, whatever the order written.
        let mut sorted: Vec<&(String, String)> = self.options.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        let options: Vec<String> = sorted
            .into_iter()
            .map(|(k, v)| {
                format!(
                    "  '{}' = '{}'",
                    k.replace('\'', "''"),
                    v.replace('\'', "''")
                )
            })
            .collect();
        out.push_str(&format!("\nWITH (\n{}\n)\n", options.join(",\n")));
        out
    }
}

#[derive(Debug, Clone)]
pub struct ViewDef {
    pub name: String,
    pub query: Box<Query>,
    pub schema: Schema,
    pub comment: Option<String>,
    pub temporary: bool,
}

#[derive(Debug, Clone)]
pub enum CatalogEntry {
    Table(Arc<TableDef>),
    View(Arc<ViewDef>),
}

/// The session's tables and views. As in Flink, temporary objects live in their own namespace
/// and shadow permanent ones of the same name.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    permanent: BTreeMap<String, CatalogEntry>,
    temporary: BTreeMap<String, CatalogEntry>,
    /// Temporary system functions a program registered, by upper-case name.
    functions: BTreeMap<String, &'static crate::function::FunctionDef>,
    /// Table functions a program registered, by upper-case name.
    table_functions: BTreeMap<String, crate::function::user::UserTableFunction>,
    /// Aggregate functions a program registered, by upper-case name.
    aggregate_functions: BTreeMap<String, crate::function::user::UserAggregateRef>,
}

impl Catalog {
    /// Registers a temporary system function (replacing one of the same name).
    pub fn register_function(&mut self, function: &'static crate::function::FunctionDef) {
        self.functions
            .insert(function.name.to_uppercase(), function);
    }

    /// Registers a table function (replacing one of the same name).
    pub fn register_table_function(&mut self, function: crate::function::user::UserTableFunction) {
        self.table_functions
            .insert(function.name.to_uppercase(), function);
    }

    /// The registered table function called `name` (case-insensitive).
    pub fn table_function(&self, name: &str) -> Option<&crate::function::user::UserTableFunction> {
        self.table_functions.get(&name.to_uppercase())
    }

    /// Registers an aggregate function (replacing one of the same name).
    pub fn register_aggregate_function(
        &mut self,
        function: crate::function::user::UserAggregateRef,
    ) {
        self.aggregate_functions
            .insert(function.0.name.to_uppercase(), function);
    }

    /// The registered aggregate function called `name` (case-insensitive).
    pub fn aggregate_function(
        &self,
        name: &str,
    ) -> Option<crate::function::user::UserAggregateRef> {
        self.aggregate_functions.get(&name.to_uppercase()).copied()
    }

    /// The registered function called `name` (case-insensitive).
    pub fn function(&self, name: &str) -> Option<&'static crate::function::FunctionDef> {
        self.functions.get(&name.to_uppercase()).copied()
    }

    /// The registered functions' names.
    pub fn function_names(&self) -> impl Iterator<Item = &str> {
        self.functions.keys().map(String::as_str)
    }

    /// The object a query sees: the temporary one when both exist.
    pub fn get(&self, name: &str) -> Option<&CatalogEntry> {
        self.temporary
            .get(name)
            .or_else(|| self.permanent.get(name))
    }

    /// The object of one namespace.
    pub fn get_in(&self, name: &str, temporary: bool) -> Option<&CatalogEntry> {
        self.namespace(temporary).get(name)
    }

    pub fn insert(&mut self, name: String, entry: CatalogEntry, temporary: bool) {
        self.namespace_mut(temporary).insert(name, entry);
    }

    pub fn remove(&mut self, name: &str, temporary: bool) -> Option<CatalogEntry> {
        self.namespace_mut(temporary).remove(name)
    }

    /// Tables and views, sorted by name, each name once (Flink's `SHOW TABLES` lists both).
    pub fn names(&self) -> impl Iterator<Item = (&String, &CatalogEntry)> {
        let mut all: BTreeMap<&String, &CatalogEntry> = self.permanent.iter().collect();
        all.extend(self.temporary.iter());
        all.into_iter()
    }

    fn namespace(&self, temporary: bool) -> &BTreeMap<String, CatalogEntry> {
        if temporary {
            &self.temporary
        } else {
            &self.permanent
        }
    }

    fn namespace_mut(&mut self, temporary: bool) -> &mut BTreeMap<String, CatalogEntry> {
        if temporary {
            &mut self.temporary
        } else {
            &mut self.permanent
        }
    }
}

/// Column names for writing a view's query back (`SHOW CREATE VIEW`).
impl crate::sql::unparse::ViewScope for Catalog {
    fn columns(&self, table: &str) -> Option<Vec<String>> {
        let schema = match self.get(table)? {
            CatalogEntry::Table(t) => t.schema(),
            CatalogEntry::View(v) => v.schema.clone(),
        };
        Some(schema.fields.iter().map(|f| f.name.clone()).collect())
    }
}

impl ViewDef {
    /// `SHOW CREATE VIEW`, as Flink prints it: the column list, the comment, then the
    /// expanded query.
    pub fn show_create(&self, temporary: bool, catalog: &Catalog) -> String {
        let columns: Vec<String> = self
            .schema
            .fields
            .iter()
            .map(|f| format!("  {}", quote_identifier(&f.name)))
            .collect();
        let mut out = format!(
            "CREATE {}VIEW `default_catalog`.`default_database`.{} (\n{}\n)\n",
            if temporary { "TEMPORARY " } else { "" },
            quote_identifier(&self.name),
            columns.join(",\n"),
        );
        if let Some(comment) = &self.comment {
            out.push_str(&format!("COMMENT '{}'\n", comment.replace('\'', "''")));
        }
        out.push_str(&format!(
            "AS {}\n",
            crate::sql::unparse::unparse_view_query(&self.query, catalog)
        ));
        out
    }
}
