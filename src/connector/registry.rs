//! The connector registry: one place that maps a table's `connector` option to the factory
//! that makes its source splits or its sink (docs/design/0003 §6). A factory knows its
//! connector's abilities (bounded or not, projection, metadata keys), so the planner and the
//! job builder ask it instead of matching connector names.

use std::io::Write;
use std::sync::Arc;

use super::ConnectorError;
use super::kafka::Connector;
use super::sink::filesystem::FileSinkFactory;
use super::sink::jdbc::JdbcSinkFactory;
use super::sink::kafka::KafkaSinkFactory;
use super::sink::{BlackholeSinkFactory, PrintSinkFactory};
use super::source::datagen::DatagenFactory;
use super::source::filesystem::FilesystemFactory;
use super::source::jdbc::JdbcSourceFactory;
use super::source::kafka::KafkaFactory;
use super::source::nexmark::NexmarkFactory;
use super::source::socket::SocketFactory;
use crate::catalog::TableDef;
use crate::clock::Clock;
use crate::connector::sink::Sink;
use crate::connector::source::split::Pipeline;
use crate::function::EvalContext;
use crate::types::{DataType, Schema};

/// What a scan asks of a source: the table, and the columns it produces.
pub struct ScanRequest<'a> {
    pub table: &'a TableDef,
    /// The physical columns, as the format decodes them.
    pub physical: &'a Schema,
    /// The metadata keys read, in the order their columns follow the physical ones.
    pub metadata: &'a [String],
    /// `parallelism.default`, which a generating source's splits follow.
    pub parallelism: u32,
}

pub trait SourceFactory: Sync {
    /// The `connector` option's value.
    fn identifier(&self) -> &'static str;

    /// Whether a table of the connector ends by itself, given its options.
    fn is_bounded(&self, table: &TableDef) -> bool;

    /// Whether the source reads only the columns asked for (Flink's
    /// `SupportsProjectionPushDown`), so EXPLAIN shows `project=[…]` in the scan.
    fn supports_projection(&self) -> bool {
        false
    }

    /// The metadata keys the source can read, with their types.
    fn metadata_keys(&self) -> Vec<(&'static str, DataType)> {
        Vec::new()
    }

    /// Whether the source's rows are upserts by the table's primary key (`+I`, `+U`, and
    /// `-D` rows that may hold only the key): Flink's `ChangelogMode.upsert()`, normalized by
    /// key after the scan.
    fn emits_upserts(&self) -> bool {
        false
    }

    /// Whether the source generates watermarks itself, per split (Flink's
    /// `SupportsWatermarkPushDown`): the table's watermark is computed in the scan, before
    /// anything the planner puts after it, and EXPLAIN shows it in the scan.
    fn pushes_watermarks(&self) -> bool {
        false
    }

    /// Whether a processing-time temporal join can look the table up (Flink's
    /// `LookupTableSource`): its splits then give the whole table when the job starts.
    fn supports_lookup(&self) -> bool {
        false
    }

    /// The splits reading the table, each checked (its options, its format) now and opened
    /// when first read.
    fn splits(
        &self,
        scan: &ScanRequest,
        ctx: &EvalContext,
    ) -> Result<Vec<Pipeline>, ConnectorError>;
}

/// What an `INSERT` asks of a sink.
pub struct SinkRequest<'a> {
    pub name: &'a str,
    pub table: &'a TableDef,
    /// The table's physical columns.
    pub physical: &'a Schema,
    /// The columns the query writes: the physical ones but the static partitions, then the
    /// persisted metadata columns.
    pub written: &'a Schema,
    /// The metadata keys of the last columns of `written`, in order.
    pub metadata: &'a [String],
    pub static_partitions: &'a [(String, String)],
    pub batch: bool,
    pub overwrite: bool,
    pub clock: Arc<dyn Clock>,
    /// The job takes checkpoints: the sink commits what it writes with them (two-phase
    /// commit where it can).
    pub checkpointing: bool,
}

pub trait SinkFactory: Sync {
    fn identifier(&self) -> &'static str;

    /// Refuses what the sink cannot do for this statement (`INSERT OVERWRITE`, static
    /// partitions), with Flink's message, before the job is built.
    fn check(&self, request: &SinkRequest) -> Result<(), String>;

    /// The metadata keys the sink writes, with their types (`SupportsWritingMetadata`).
    fn writable_metadata(&self) -> Vec<(&'static str, DataType)> {
        Vec::new()
    }

    /// Whether the sink takes updates and deletes (`-U`/`+U`/`-D`) as well as inserts.
    fn accepts_updates(&self, _request: &SinkRequest) -> bool {
        true
    }

    /// Checks the table's options, as Flink does before it submits the job.
    fn validate(&self, _request: &SinkRequest) -> Result<(), ConnectorError> {
        Ok(())
    }

    /// The sink, writing to `out` where it prints (the client's output).
    fn create<'a>(
        &self,
        request: &SinkRequest,
        out: &'a mut dyn Write,
    ) -> Result<Box<dyn Sink + 'a>, ConnectorError>;
}

const SOURCES: &[&dyn SourceFactory] = &[
    &DatagenFactory,
    &NexmarkFactory,
    &FilesystemFactory,
    &SocketFactory,
    &JdbcSourceFactory,
    &KafkaFactory(Connector::Kafka),
    &KafkaFactory(Connector::Upsert),
];
const SINKS: &[&dyn SinkFactory] = &[
    &PrintSinkFactory,
    &BlackholeSinkFactory,
    &FileSinkFactory,
    &JdbcSinkFactory,
    &KafkaSinkFactory(Connector::Kafka),
    &KafkaSinkFactory(Connector::Upsert),
];

/// The source factory of `table`'s connector.
pub fn source(table: &TableDef) -> Result<&'static dyn SourceFactory, ConnectorError> {
    let connector = table.option("connector").unwrap_or_default();
    // Flink's legacy descriptor (`connector.type`) over files.
    if connector.is_empty() && table.option("connector.type") == Some("filesystem") {
        return Ok(&super::source::legacy_filesystem::LegacyFilesystemFactory);
    }
    if connector.is_empty() {
        return Err(ConnectorError(format!(
            "table '{}' has no 'connector' option",
            table.name
        )));
    }
    SOURCES
        .iter()
        .copied()
        .find(|f| f.identifier() == connector)
        .ok_or_else(|| {
            ConnectorError(format!(
                "connector '{connector}' of table '{}' is not supported as a source (supported: {})",
                table.name,
                SOURCES
                    .iter()
                    .map(|f| f.identifier())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
}

/// The sink factory of `table`'s connector.
pub fn sink(table: &TableDef) -> Result<&'static dyn SinkFactory, ConnectorError> {
    let connector = table.option("connector").unwrap_or_default();
    SINKS
        .iter()
        .copied()
        .find(|f| f.identifier() == connector)
        .ok_or_else(|| {
            ConnectorError(format!(
                "connector '{connector}' of table '{}' is not supported as a sink yet",
                table.name
            ))
        })
}

/// What a table's source can do, as the planner asks it (Flink's planner asks a
/// `DynamicTableSource` for its ability interfaces and its changelog mode).
#[derive(Debug, Clone)]
pub struct SourceAbilities {
    /// The source reads only the columns it is asked for (`SupportsProjectionPushDown`).
    pub projection: bool,
    /// The table's format is a changelog format (Debezium, Canal, Maxwell): its rows are
    /// inserted, updated and deleted.
    pub changelog: bool,
    /// The metadata keys the source can read, with their types (`SupportsReadingMetadata`).
    pub metadata: Vec<(&'static str, DataType)>,
    /// Its rows are upserts by the primary key (`upsert-kafka`): they carry kinds as a
    /// changelog format's do, without `-U`.
    pub upsert: bool,
    /// The source computes the watermark itself (`SupportsWatermarkPushDown`).
    pub watermarks: bool,
    /// A processing-time temporal join can look the table up (`LookupTableSource`).
    pub lookup: bool,
}

/// The abilities of `table`'s source; none for a connector that has no source (its scan
/// fails later with the connector's own error).
pub fn source_abilities(table: &TableDef) -> SourceAbilities {
    let factory = source(table).ok();
    SourceAbilities {
        projection: factory.is_some_and(|f| f.supports_projection()),
        changelog: crate::connector::format::is_changelog_format(&table.options)
            || factory.is_some_and(|f| f.emits_upserts()),
        metadata: factory.map_or_else(Vec::new, |f| f.metadata_keys()),
        upsert: factory.is_some_and(|f| f.emits_upserts()),
        watermarks: factory.is_some_and(|f| f.pushes_watermarks()),
        lookup: factory.is_some_and(|f| f.supports_lookup()),
    }
}
