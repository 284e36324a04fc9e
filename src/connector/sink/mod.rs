//! Sinks: `print`, `blackhole`, `filesystem`, `jdbc` (PostgreSQL), `kafka`.

pub mod filesystem;
pub mod jdbc;
pub mod kafka;

use arrow_array::RecordBatch;

use crate::connector::ConnectorError;
use crate::connector::registry::{SinkFactory, SinkRequest};
use crate::exec::error::ExecError;
use crate::types::Schema;
use crate::types::chunk::StreamChunk;
use crate::types::java_text::write_java_value;

/// Where the job's results go.
pub trait Sink {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError>;
    fn finish(&mut self) -> Result<(), ExecError>;
    /// Called while no chunk arrives (about every `POLL_INTERVAL`), so a sink can act on time
    /// alone: the filesystem sink finishes parts whose rollover or inactivity time is up.
    fn on_idle(&mut self) -> Result<(), ExecError> {
        Ok(())
    }
    /// The job stops with a drained savepoint (`STOP JOB … WITH DRAIN`, Flink's end of
    /// input): what is open is finished, so that the savepoint's `pre_commit` stages it and
    /// its commit makes it visible.
    fn end_input(&mut self) -> Result<(), ExecError> {
        Ok(())
    }
    /// Checkpoint `checkpoint`'s barrier has reached the sink: everything before it is
    /// written (flushed, or staged where the sink commits in two phases); returns what the
    /// sink needs to commit it, or to commit it again after a restore.
    fn pre_commit(&mut self, _checkpoint: u64) -> Result<Vec<u8>, ExecError> {
        Ok(Vec::new())
    }
    /// Checkpoint `checkpoint` is complete (durable): what its barrier staged becomes
    /// visible. Called in order, possibly skipping checkpoints (the newest covers them).
    fn commit(&mut self, _checkpoint: u64) -> Result<(), ExecError> {
        Ok(())
    }
    /// Before any row: the state of the checkpoint the job restores from (`pre_commit`'s),
    /// committed again if it was not yet, idempotently.
    fn restore(&mut self, _state: &[u8]) -> Result<(), ExecError> {
        Ok(())
    }
}

/// Flink's `print` connector: one `+I[a, b]` line per row on the client's output (the
/// process's stdout), prefixed by `print-identifier> ` when set.
pub struct PrintSink<'a> {
    schema: Schema,
    prefix: String,
    out: std::io::BufWriter<&'a mut dyn std::io::Write>,
}

impl<'a> PrintSink<'a> {
    pub fn new(schema: Schema, identifier: Option<&str>, out: &'a mut dyn std::io::Write) -> Self {
        let prefix = identifier.map_or(String::new(), |id| format!("{id}> "));
        PrintSink {
            schema,
            prefix,
            out: std::io::BufWriter::new(out),
        }
    }
}

/// `+I[1, a, null]`: Flink's `Row.toString` of the row's Java objects.
pub fn row_string(batch: &RecordBatch, row: usize, kind: &str, schema: &Schema) -> String {
    let mut line = format!("{kind}[");
    for (j, (column, field)) in batch.columns().iter().zip(&schema.fields).enumerate() {
        if j > 0 {
            line.push_str(", ");
        }
        write_java_value(&mut line, column.as_ref(), row, &field.data_type);
    }
    line.push(']');
    line
}

impl Sink for PrintSink<'_> {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        use std::io::Write;
        for row in 0..chunk.num_rows() {
            let line = row_string(
                &chunk.batch,
                row,
                chunk.kind(row).short_string(),
                &self.schema,
            );
            writeln!(self.out, "{}{line}", self.prefix)
                .map_err(|e| ExecError::Sink(e.to_string()))?;
        }
        // A chunk's lines appear as soon as it arrives, even on an endless stream.
        self.out.flush().map_err(|e| ExecError::Sink(e.to_string()))
    }
    fn finish(&mut self) -> Result<(), ExecError> {
        use std::io::Write;
        self.out.flush().map_err(|e| ExecError::Sink(e.to_string()))
    }
}

/// Flink's `blackhole` connector: swallows everything.
#[derive(Default)]
pub struct BlackholeSink {
    pub rows: u64,
}

impl Sink for BlackholeSink {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        self.rows += chunk.num_rows() as u64;
        Ok(())
    }
    fn finish(&mut self) -> Result<(), ExecError> {
        Ok(())
    }
}

/// Refuses what `print` and `blackhole` cannot do: overwrite, static partitions.
fn check_plain_sink(request: &SinkRequest, connector: &str) -> Result<(), String> {
    if request.overwrite {
        return Err(format!(
            "INSERT OVERWRITE requires that the underlying DynamicTableSink of table 'default_catalog.default_database.{}' implements the SupportsOverwrite interface.",
            request.name
        ));
    }
    if !request.static_partitions.is_empty() {
        // Flink prints the static values in the rows and a `k=v> ` prefix; the rows here
        // lack those columns.
        return Err(format!(
            "INSERT … PARTITION into a '{connector}' table is not supported yet"
        ));
    }
    Ok(())
}

/// The `print` connector's sink.
pub struct PrintSinkFactory;

impl SinkFactory for PrintSinkFactory {
    fn identifier(&self) -> &'static str {
        "print"
    }

    fn check(&self, request: &SinkRequest) -> Result<(), String> {
        check_plain_sink(request, self.identifier())
    }

    fn create<'a>(
        &self,
        request: &SinkRequest,
        out: &'a mut dyn std::io::Write,
    ) -> Result<Box<dyn Sink + 'a>, ConnectorError> {
        Ok(Box::new(PrintSink::new(
            request.written.clone(),
            request.table.option("print-identifier"),
            out,
        )))
    }
}

/// The `blackhole` connector's sink.
pub struct BlackholeSinkFactory;

impl SinkFactory for BlackholeSinkFactory {
    fn identifier(&self) -> &'static str {
        "blackhole"
    }

    fn check(&self, request: &SinkRequest) -> Result<(), String> {
        check_plain_sink(request, self.identifier())
    }

    fn create<'a>(
        &self,
        _request: &SinkRequest,
        _out: &'a mut dyn std::io::Write,
    ) -> Result<Box<dyn Sink + 'a>, ConnectorError> {
        Ok(Box::new(BlackholeSink::default()))
    }
}
