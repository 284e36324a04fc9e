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

    /// Whether the table's rows carry kinds: a changelog format's (Debezium, Canal, Maxwell)
    /// are inserted, updated and deleted; an upsert source's (`upsert-kafka`) are upserted
    /// and deleted by key.
    pub fn reads_changelog(&self) -> bool {
        crate::connector::registry::source_abilities(&self.table).changelog
    }

    /// Whether the table's rows are upserts by its primary key (no `-U`; a `-D` may hold only
    /// the key), which a ChangelogNormalize after the scan makes a full changelog.
    pub fn reads_upserts(&self) -> bool {
        crate::connector::registry::source_abilities(&self.table).upsert
    }

    /// Whether the source computes the table's watermark itself, per split (Flink's
    /// watermark push-down): a WatermarkAssigner right above it shows in its digest.
    pub fn pushes_watermarks(&self) -> bool {
        crate::connector::registry::source_abilities(&self.table).watermarks
    }

    pub fn changelog_mode(&self) -> super::ChangelogMode {
        if self.reads_changelog() {
            super::ChangelogMode {
                insert: true,
                update_before: !self.reads_upserts(),
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

    /// `filter`: the filter a Calc or ChangelogNormalize above offered it (see
    /// `StreamCalc::offered_filter`).
    /// `watermark`: the watermark expression pushed into the source.
    pub fn explain(&self, filter: Option<&str>, watermark: Option<&str>) -> String {
        // Only a source that takes filters shows them (the filesystem's; not Kafka's).
        let filter = filter.filter(|_| self.can_project());
        let mut table = format!("default_catalog, default_database, {}", self.table.name);
        if let Some(filter) = filter {
            table.push_str(&format!(", filter=[{filter}]"));
        }
        if let Some(watermark) = watermark {
            table.push_str(&format!(", watermark=[{watermark}]"));
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
