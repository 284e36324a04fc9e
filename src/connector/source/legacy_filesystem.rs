//! Flink's legacy descriptor tables over files (`'connector.type' = 'filesystem'`,
//! `'connector.path'`, `'format.type' = 'csv'`), which Flink 2.3 still reads through its
//! `CsvTableSource` — the Nexmark benchmark's q13 side table is one. Scanned as the
//! `filesystem` connector scans CSV; unlike it, such a table can be looked up (the right of a
//! processing-time temporal join), by reading it whole when the job starts, as Flink's
//! `CsvLookupFunction` does.

use crate::catalog::TableDef;
use crate::connector::ConnectorError;
use crate::connector::registry::{ScanRequest, SourceFactory};
use crate::connector::source::filesystem::FilesystemFactory;
use crate::connector::source::split::Pipeline;
use crate::function::EvalContext;

/// The legacy options, as the `filesystem` connector's.
fn translated(table: &TableDef) -> Result<TableDef, ConnectorError> {
    let mut options = Vec::new();
    for (key, value) in &table.options {
        let option = match key.as_str() {
            "connector.type" => ("connector", value.clone()),
            "connector.path" => ("path", value.clone()),
            "format.type" if value == "csv" => ("format", value.clone()),
            "format.type" => {
                return Err(ConnectorError(format!(
                    "table '{}': the legacy filesystem table reads 'format.type' = 'csv' only, not '{value}'",
                    table.name
                )));
            }
            "format.field-delimiter" => ("csv.field-delimiter", value.clone()),
            "connector.property-version" | "format.property-version" => continue,
            other => {
                return Err(ConnectorError(format!(
                    "table '{}': the legacy filesystem table does not take option '{other}' (it takes connector.type, connector.path, format.type and format.field-delimiter)",
                    table.name
                )));
            }
        };
        options.push((option.0.to_string(), option.1));
    }
    Ok(TableDef {
        options,
        ..table.clone()
    })
}

pub struct LegacyFilesystemFactory;

impl SourceFactory for LegacyFilesystemFactory {
    fn identifier(&self) -> &'static str {
        "filesystem"
    }

    fn is_bounded(&self, _table: &TableDef) -> bool {
        true
    }

    fn supports_lookup(&self) -> bool {
        true
    }

    fn splits(
        &self,
        scan: &ScanRequest,
        ctx: &EvalContext,
    ) -> Result<Vec<Pipeline>, ConnectorError> {
        let table = translated(scan.table)?;
        FilesystemFactory.splits(
            &ScanRequest {
                table: &table,
                physical: scan.physical,
                metadata: scan.metadata,
                parallelism: scan.parallelism,
            },
            ctx,
        )
    }
}
