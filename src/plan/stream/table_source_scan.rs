//! `TableSourceScan`: a table's connector reading its physical columns (and metadata
//! columns), with the columns the query does not use pruned where the connector can.

use std::sync::Arc;

use crate::catalog::TableDef;
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamTableSourceScan {
    pub table: Arc<TableDef>,
    /// What the connector produces: the physical columns, then one per metadata key.
    pub source_schema: Schema,
    /// The metadata keys read (`file.path`, …), in the order their columns follow.
    pub metadata: Vec<String>,
    /// The columns of `source_schema` the scan emits, when not all of them (projection
    /// push-down, for connectors that support it).
    pub projection: Option<Vec<usize>>,
    /// What the scan emits.
    pub schema: Schema,
}

impl StreamTableSourceScan {
    /// Whether the connector reads only the columns it is asked for, as Flink's
    /// `SupportsProjectionPushDown` sources do (the filesystem source; not datagen).
    pub fn can_project(&self) -> bool {
        crate::connector::registry::source_abilities(&self.table).projection
    }

    /// Whether the table's format is a changelog format (Debezium, Canal, Maxwell): then its
    /// rows are inserted, updated and deleted.
    pub fn reads_changelog(&self) -> bool {
        crate::connector::registry::source_abilities(&self.table).changelog
    }

    pub fn changelog_mode(&self) -> super::ChangelogMode {
        if self.reads_changelog() {
            super::ChangelogMode {
                insert: true,
                update_before: true,
                update_after: true,
                delete: true,
            }
        } else {
            super::ChangelogMode::INSERT_ONLY
        }
    }

    /// The physical columns, as the format decodes them.
    pub fn physical_schema(&self) -> Schema {
        let n = self.source_schema.len() - self.metadata.len();
        Schema::new(self.source_schema.fields[..n].to_vec())
    }

    /// `filter`: the filter a Calc right above offered it (see `StreamCalc::offered_filter`).
    pub fn explain(&self, filter: Option<&str>) -> String {
        let mut table = format!("default_catalog, default_database, {}", self.table.name);
        if let Some(filter) = filter {
            table.push_str(&format!(", filter=[{filter}]"));
        }
        if let Some(projection) = &self.projection {
            let physical = self.source_schema.len() - self.metadata.len();
            let project: Vec<&str> = projection
                .iter()
                .filter(|&&i| i < physical)
                .map(|&i| self.source_schema.fields[i].name.as_str())
                .collect();
            let metadata: Vec<&str> = projection
                .iter()
                .filter(|&&i| i >= physical)
                .map(|&i| self.metadata[i - physical].as_str())
                .collect();
            table.push_str(&format!(
                ", project=[{}], metadata=[{}]",
                project.join(", "),
                metadata.join(", ")
            ));
        }
        format!(
            "TableSourceScan(table=[[{table}]], fields=[{}])",
            super::names(&self.schema)
        )
    }
}
