//! The `filesystem` source: `path` is a file or a directory (one split per file, hidden
//! files and directories skipped, subdirectories read too), read line by line through the
//! table's format. Of a partitioned table the format decodes the other columns; the partition
//! columns come from the file's `k=v/` directories (`connector/partition.rs`).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray, TimestampNanosecondArray};

use super::super::{BatchLimit, ConnectorError, LineDecoder};
use crate::catalog::TableDef;
use crate::connector::format::changelog::ROW_KIND_COLUMN;
use crate::connector::format::new_decoder;
use crate::connector::registry::{ScanRequest, SourceFactory};
use crate::connector::source::split::SourceSplit;
use crate::connector::source::split::{DeferredSplit, Pipeline, position_words, words_position};
use crate::exec::error::ExecError;
use crate::function::EvalContext;
use crate::types::chunk::batch_with_rows;
use crate::types::{DataType, Schema, TypeKind};

/// Lines per batch.
const BATCH_LINES: usize = 8192;

/// Text bytes per column per batch, at most: Arrow's string columns address `i32::MAX`
/// bytes. A batch ends early rather than let a line take a column past it.
const BATCH_BYTES: usize = i32::MAX as usize;

/// The files under `path`, sorted, one split each.
/// The options Flink 2.3's `filesystem` factory knows (its own; the format's keys, under the
/// format's name, are the format's to read).
const FILESYSTEM_OPTIONS: &[&str] = &[
    "auto-compaction",
    "compaction.file-size",
    "connector",
    "format",
    "partition.default-name",
    "partition.time-extractor.class",
    "partition.time-extractor.kind",
    "partition.time-extractor.timestamp-formatter",
    "partition.time-extractor.timestamp-pattern",
    "path",
    "property-version",
    "scan.watermark.alignment.group",
    "scan.watermark.alignment.max-drift",
    "scan.watermark.alignment.update-interval",
    "scan.watermark.emit.strategy",
    "scan.watermark.idle-timeout",
    "sink.parallelism",
    "sink.partition-commit.delay",
    "sink.partition-commit.policy.class",
    "sink.partition-commit.policy.class.parameters",
    "sink.partition-commit.policy.kind",
    "sink.partition-commit.success-file.name",
    "sink.partition-commit.trigger",
    "sink.partition-commit.watermark-time-zone",
    "sink.rolling-policy.check-interval",
    "sink.rolling-policy.file-size",
    "sink.rolling-policy.inactivity-interval",
    "sink.rolling-policy.rollover-interval",
    "sink.shuffle-by-partition.enable",
    "source.monitor-interval",
    "source.path.regex-pattern",
    "source.report-statistics",
];

/// Flink's check of a `filesystem` table's options: every key is the connector's or starts
/// with the format's name (`csv.…`); another format's keys are unsupported too.
pub fn check_options(options: &[(String, String)]) -> Result<(), ConnectorError> {
    let format = options
        .iter()
        .find(|(k, _)| k == "format")
        .map(|(_, v)| format!("{v}."));
    let unsupported: Vec<&str> = options
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| {
            !FILESYSTEM_OPTIONS.contains(k) && format.as_deref().is_none_or(|f| !k.starts_with(f))
        })
        .collect();
    if unsupported.is_empty() {
        return Ok(());
    }
    Err(crate::connector::unsupported_options(
        "filesystem",
        unsupported,
        FILESYSTEM_OPTIONS,
    ))
}

pub fn list_files(path: &str) -> Result<Vec<PathBuf>, ConnectorError> {
    let p = Path::new(path.strip_prefix("file://").unwrap_or(path));
    let meta = std::fs::metadata(p)
        .map_err(|e| ConnectorError(format!("cannot read path '{path}': {e}")))?;
    if meta.is_file() {
        return Ok(vec![p.to_path_buf()]);
    }
    let mut files = Vec::new();
    let mut stack = vec![p.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| ConnectorError(format!("cannot list '{}': {e}", dir.display())))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name.starts_with('_') {
                continue;
            }
            let path = entry.path();
            if path.is_dir() {
                stack.push(path)
            } else {
                files.push(path)
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Reads the lines of a file into batches of `BATCH_LINES`.
///
/// The file is read in large blocks; the complete lines of a block are checked as UTF-8 once
/// and go to the decoder in one call, and a line cut by the block's end waits for the next
/// read.
pub struct LineSplit<R: Read + Send> {
    reader: R,
    decoder: Box<dyn LineDecoder>,
    name: String,
    /// Lines decoded so far.
    line_number: u64,
    done: bool,
    /// Complete lines read; `text[start..]` is not decoded yet.
    text: String,
    start: usize,
    /// Bytes read after the last complete line (not checked as UTF-8 yet: a character may
    /// be cut by the end of the read).
    tail: Vec<u8>,
    /// The reader has nothing more.
    at_end: bool,
    read_size: usize,
    batch_lines: usize,
    batch_bytes: usize,
    /// Bytes of the file handed to the decoder so far.
    decoded_bytes: u64,
    /// Where a checkpoint puts the split: the byte offset and line number after the last
    /// complete record (before a record still open across lines).
    resume_at: (u64, u64),
}

/// Bytes asked of the reader at a time: enough that a read costs little per line.
const READ_SIZE: usize = 1 << 18;

impl<R: Read + Send> LineSplit<R> {
    pub fn new(reader: R, decoder: Box<dyn LineDecoder>, name: String) -> Self {
        LineSplit {
            reader,
            decoder,
            name,
            line_number: 0,
            done: false,
            text: String::new(),
            start: 0,
            tail: Vec::new(),
            at_end: false,
            read_size: READ_SIZE,
            batch_lines: BATCH_LINES,
            batch_bytes: BATCH_BYTES,
            decoded_bytes: 0,
            resume_at: (0, 0),
        }
    }

    /// Lines read per batch (tests move the batch boundary with it).
    pub fn with_batch_lines(mut self, lines: usize) -> Self {
        self.batch_lines = lines.max(1);
        self
    }

    /// Text bytes per column per batch (tests lower it from `i32::MAX`).
    pub fn with_batch_bytes(mut self, bytes: usize) -> Self {
        self.batch_bytes = bytes;
        self
    }

    /// Bytes per read (tests put the end of a read at every offset with it).
    pub fn with_read_size(mut self, bytes: usize) -> Self {
        self.read_size = bytes.max(1);
        self
    }

    /// Once every line read is decoded: reads on, and moves the complete lines read (all the
    /// rest at the end of the input) into `text`.
    fn fill(&mut self) -> Result<(), ExecError> {
        self.text.clear();
        self.start = 0;
        let len = self.tail.len();
        self.tail.resize(len + self.read_size, 0);
        let read = loop {
            match self.reader.read(&mut self.tail[len..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.tail.truncate(len);
                    return Err(ExecError::Source(format!(
                        "{}: read failed after line {}: {e}",
                        self.name, self.line_number
                    )));
                }
            }
        };
        self.tail.truncate(len + read);
        self.at_end = read == 0;
        let complete = if self.at_end {
            self.tail.len()
        } else {
            // Only the new bytes can hold the first line end.
            memchr::memrchr(b'\n', &self.tail[len..]).map_or(0, |p| len + p + 1)
        };
        // A `\n` byte is never part of a multi-byte character: whole lines are whole text.
        match std::str::from_utf8(&self.tail[..complete]) {
            Ok(lines) => self.text.push_str(lines),
            Err(e) => {
                let bad = &self.tail[..e.valid_up_to()];
                let line = self.line_number + 1 + memchr::memchr_iter(b'\n', bad).count() as u64;
                let column = bad.len() - memchr::memrchr(b'\n', bad).map_or(0, |p| p + 1);
                return Err(ExecError::Source(format!(
                    "{}, line {line}: invalid UTF-8 at byte {column} of the line",
                    self.name
                )));
            }
        }
        self.tail.drain(..complete);
        Ok(())
    }
}

impl<R: Read + Send> LineSplit<R> {
    /// The decoder took `bytes` of the text from `start`, lines from `first_line` on: the
    /// resume point moves past the records it completed, up to the start of one it left open.
    fn note_decoded(&mut self, bytes: usize, first_line: u64) {
        let text = &self.text[self.start..self.start + bytes];
        let before = self.decoded_bytes;
        self.decoded_bytes += text.len() as u64;
        match self.decoder.open_record_line() {
            None => {
                let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
                // A last line without its `\n` (the end of the input) counts as well.
                let partial = u64::from(!text.is_empty() && !text.ends_with('\n'));
                self.resume_at = (self.decoded_bytes, first_line - 1 + lines + partial);
            }
            // Opened by this text: the resume point is that line's start.
            Some(open) if open >= first_line => {
                let skip = (open - first_line) as usize;
                let offset = if skip == 0 {
                    0
                } else {
                    memchr::memchr_iter(b'\n', text.as_bytes())
                        .nth(skip - 1)
                        .map_or(text.len(), |p| p + 1)
                };
                self.resume_at = (before + offset as u64, open - 1);
            }
            // Still the record opened before.
            Some(_) => {}
        }
    }
}

impl<R: Read + Seek + Send> SourceSplit for LineSplit<R> {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
        if self.done {
            return Ok(None);
        }
        let mut lines = 0;
        while lines < self.batch_lines {
            let first_line = self.line_number + 1;
            let limit = BatchLimit {
                lines: self.batch_lines - lines,
                bytes: self.batch_bytes,
                started: lines > 0,
            };
            if self.start == self.text.len() {
                if self.at_end {
                    self.done = true;
                    self.decoder
                        .end_of_input()
                        .map_err(|e| ExecError::Source(format!("{}: {e}", self.name)))?;
                    break;
                }
                self.fill()?;
                continue;
            }
            let text = &self.text[self.start..];
            let whole = text.len();
            let decoded = self
                .decoder
                .decode(text, first_line, limit)
                .map_err(|e| ExecError::Source(format!("{}, {e}", self.name)))?;
            self.note_decoded(decoded.bytes, first_line);
            self.start += decoded.bytes;
            self.line_number += decoded.lines as u64;
            lines += decoded.lines;
            if decoded.bytes < whole {
                // The batch is full.
                break;
            }
        }
        let batch = self
            .decoder
            .flush()
            .map_err(|e| ExecError::Source(format!("{}: {e}", self.name)))?;
        if self.done && self.decoder.rows_skipped() > 0 {
            eprintln!(
                "[WARNING] {}: skipped {} malformed row(s) (ignore-parse-errors)",
                self.name,
                self.decoder.rows_skipped()
            );
        }
        Ok(Some(batch))
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn replayable(&self) -> bool {
        true
    }

    /// The byte offset and line number to go on from (16 bytes).
    fn position(&self) -> Option<Vec<u8>> {
        Some(words_position(&[self.resume_at.0, self.resume_at.1]))
    }

    fn seek(&mut self, position: &[u8]) -> Result<(), ExecError> {
        let Some([offset, line]) = position_words::<2>(position) else {
            return Err(ExecError::Checkpoint(format!(
                "{}: a checkpointed position does not read back",
                self.name
            )));
        };
        let end = self
            .reader
            .seek(SeekFrom::End(0))
            .map_err(|e| ExecError::Source(format!("{}: {e}", self.name)))?;
        if offset > end {
            return Err(ExecError::Checkpoint(format!(
                "{}: the checkpoint read it up to byte {offset}, but it now holds {end} bytes (the file changed)",
                self.name
            )));
        }
        self.reader
            .seek(SeekFrom::Start(offset))
            .map_err(|e| ExecError::Source(format!("{}: {e}", self.name)))?;
        self.line_number = line;
        self.decoded_bytes = offset;
        self.resume_at = (offset, line);
        self.text.clear();
        self.start = 0;
        self.tail.clear();
        self.at_end = false;
        self.done = false;
        Ok(())
    }
}

/// A file's split with the file's metadata columns (`file.path`, `file.name`, `file.size`,
/// `file.modification-time`) after the decoded ones, the same value on every row.
pub struct WithFileMetadata<S> {
    inner: S,
    values: Vec<ScalarValue>,
}

enum ScalarValue {
    Text(String),
    Long(i64),
    /// Milliseconds since the epoch, as TIMESTAMP_LTZ(3).
    Instant(i64),
}

impl<S: SourceSplit> WithFileMetadata<S> {
    pub fn new(inner: S, path: &Path, keys: &[String]) -> Result<Self, ConnectorError> {
        let meta = std::fs::metadata(path)
            .map_err(|e| ConnectorError(format!("cannot read '{}': {e}", path.display())))?;
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let values = keys
            .iter()
            .map(|key| match key.as_str() {
                "file.path" => Ok(ScalarValue::Text(absolute.display().to_string())),
                "file.name" => Ok(ScalarValue::Text(
                    path.file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                )),
                "file.size" => Ok(ScalarValue::Long(
                    i64::try_from(meta.len()).unwrap_or(i64::MAX),
                )),
                "file.modification-time" => {
                    let millis = meta
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
                    Ok(ScalarValue::Instant(millis))
                }
                other => Err(ConnectorError(format!(
                    "the filesystem connector has no metadata key '{other}'"
                ))),
            })
            .collect::<Result<_, _>>()?;
        Ok(WithFileMetadata { inner, values })
    }
}

impl<S: SourceSplit> SourceSplit for WithFileMetadata<S> {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
        let Some(batch) = self.inner.next_batch()? else {
            return Ok(None);
        };
        let n = batch.num_rows();
        let mut fields: Vec<arrow_schema::FieldRef> = batch.schema().fields().to_vec();
        let mut columns = batch.columns().to_vec();
        // A changelog format's kinds stay the last column.
        let kinds = (fields.last().is_some_and(|f| f.name() == ROW_KIND_COLUMN))
            .then(|| (fields.pop().unwrap(), columns.pop().unwrap()));
        for (i, value) in self.values.iter().enumerate() {
            let column: arrow_array::ArrayRef = match value {
                ScalarValue::Text(s) => Arc::new(StringArray::from(vec![s.as_str(); n])),
                ScalarValue::Long(v) => Arc::new(Int64Array::from(vec![*v; n])),
                ScalarValue::Instant(ms) => Arc::new(
                    TimestampNanosecondArray::from(vec![ms.saturating_mul(1_000_000); n])
                        .with_timezone("UTC"),
                ),
            };
            fields.push(Arc::new(arrow_schema::Field::new(
                format!("metadata{i}"),
                column.data_type().clone(),
                true,
            )));
            columns.push(column);
        }
        if let Some((field, column)) = kinds {
            fields.push(field);
            columns.push(column);
        }
        Ok(Some(batch_with_rows(
            Arc::new(arrow_schema::Schema::new(fields)),
            columns,
            n,
        )?))
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn replayable(&self) -> bool {
        self.inner.replayable()
    }

    fn position(&self) -> Option<Vec<u8>> {
        self.inner.position()
    }

    fn seek(&mut self, position: &[u8]) -> Result<(), ExecError> {
        self.inner.seek(position)
    }

    fn position_completed(&mut self, position: &[u8]) {
        self.inner.position_completed(position)
    }
}

/// A file's split of a partitioned table: the decoded columns with the partition columns put
/// back at their places, each the value its directory names (NULL for the default name, or
/// for a key the path does not name).
pub struct WithPartitionValues<S> {
    inner: S,
    /// The table's physical columns: a partition value, or the next decoded column.
    columns: Vec<PartitionedColumn>,
    schema: arrow_schema::SchemaRef,
    describe: String,
}

enum PartitionedColumn {
    Decoded,
    Partition(Option<String>, crate::types::DataType),
}

impl<S: SourceSplit> WithPartitionValues<S> {
    /// `physical` is the table's physical schema, `keys` its partition keys, `relative_dir`
    /// the file's directory below the table's path.
    pub fn new(
        inner: S,
        physical: &crate::types::Schema,
        keys: &[String],
        relative_dir: &Path,
        default_name: &str,
    ) -> Self {
        let spec = crate::connector::partition::spec_of_path(relative_dir);
        let columns = physical
            .fields
            .iter()
            .map(|f| {
                if keys.contains(&f.name) {
                    let value = spec
                        .iter()
                        .rev()
                        .find(|(k, _)| k == &f.name)
                        .map(|(_, v)| v.clone())
                        .filter(|v| v != default_name);
                    PartitionedColumn::Partition(value, f.data_type.clone())
                } else {
                    PartitionedColumn::Decoded
                }
            })
            .collect();
        WithPartitionValues {
            describe: inner.describe(),
            inner,
            columns,
            // Nullable like every column operators see (a NOT NULL column may read NULL here
            // and is then caught where Flink catches it, not by Arrow).
            schema: std::sync::Arc::new(arrow_schema::Schema::new(
                physical
                    .fields
                    .iter()
                    .map(|f| f.data_type.with_nullable(true).to_arrow_field(&f.name))
                    .collect::<Vec<_>>(),
            )),
        }
    }
}

impl<S: SourceSplit> SourceSplit for WithPartitionValues<S> {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
        let Some(batch) = self.inner.next_batch()? else {
            return Ok(None);
        };
        let n = batch.num_rows();
        let mut decoded = batch.columns().iter();
        let mut columns = Vec::with_capacity(self.columns.len());
        for column in &self.columns {
            match column {
                PartitionedColumn::Decoded => columns.push(
                    decoded
                        .next()
                        .cloned()
                        .ok_or_else(|| ExecError::Internal("a decoded column is missing".into()))?,
                ),
                PartitionedColumn::Partition(value, data_type) => columns.push(
                    crate::connector::partition::value_column(value.as_deref(), n, data_type)
                        .map_err(|e| ExecError::Source(format!("{}: {e}", self.describe)))?,
                ),
            }
        }
        Ok(Some(batch_with_rows(self.schema.clone(), columns, n)?))
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn replayable(&self) -> bool {
        self.inner.replayable()
    }

    fn position(&self) -> Option<Vec<u8>> {
        self.inner.position()
    }

    fn seek(&mut self, position: &[u8]) -> Result<(), ExecError> {
        self.inner.seek(position)
    }

    fn position_completed(&mut self, position: &[u8]) {
        self.inner.position_completed(position)
    }
}

pub fn open_file(
    path: &Path,
    decoder: Box<dyn LineDecoder>,
) -> Result<LineSplit<File>, ConnectorError> {
    let file = File::open(path)
        .map_err(|e| ConnectorError(format!("cannot open '{}': {e}", path.display())))?;
    Ok(LineSplit::new(
        file,
        decoder,
        format!("file {}", path.display()),
    ))
}

/// The metadata keys of the `filesystem` connector, and their types.
pub fn file_metadata() -> Vec<(&'static str, DataType)> {
    [
        ("file.path", TypeKind::VarChar(crate::types::MAX_LENGTH)),
        ("file.name", TypeKind::VarChar(crate::types::MAX_LENGTH)),
        ("file.size", TypeKind::BigInt),
        ("file.modification-time", TypeKind::TimestampLtz(3)),
    ]
    .into_iter()
    .map(|(key, kind)| (key, DataType::not_null(kind)))
    .collect()
}

/// The `filesystem` connector's source: a split per file under `path`.
pub struct FilesystemFactory;

impl SourceFactory for FilesystemFactory {
    fn identifier(&self) -> &'static str {
        "filesystem"
    }

    fn is_bounded(&self, _table: &TableDef) -> bool {
        true
    }

    fn supports_projection(&self) -> bool {
        true
    }

    fn metadata_keys(&self) -> Vec<(&'static str, DataType)> {
        file_metadata()
    }

    fn splits(
        &self,
        scan: &ScanRequest,
        ctx: &EvalContext,
    ) -> Result<Vec<Pipeline>, ConnectorError> {
        let table = scan.table;
        check_options(&table.options)?;
        let path = table.option("path").ok_or_else(|| {
            ConnectorError(format!(
                "table '{}': option 'path' is required for connector 'filesystem'",
                table.name
            ))
        })?;
        let physical = scan.physical.clone();
        // Of a partitioned table the files hold the other columns; the format's
        // options are checked now, and each file is opened (with a decoder of its
        // own) only when its split is first read.
        let keys = table.partition_keys.clone();
        let decoded = Schema::new(
            physical
                .fields
                .iter()
                .filter(|f| !keys.contains(&f.name))
                .cloned()
                .collect(),
        );
        new_decoder(&table.options, &decoded, &ctx.zone)?;
        let root = std::path::PathBuf::from(path.strip_prefix("file://").unwrap_or(path));
        let default_name = table
            .option("partition.default-name")
            .unwrap_or(crate::connector::partition::DEFAULT_PARTITION_NAME)
            .to_string();
        let mut pipelines = Vec::new();
        for file in list_files(path)? {
            let (options, decoded, physical, zone) = (
                table.options.clone(),
                decoded.clone(),
                physical.clone(),
                ctx.zone.clone(),
            );
            let (keys, root, default_name) = (keys.clone(), root.clone(), default_name.clone());
            let metadata = scan.metadata.to_vec();
            let name = format!("file {}", file.display());
            let open = move || -> Result<Box<dyn SourceSplit>, ExecError> {
                let failed = |e: ConnectorError| ExecError::Source(e.0);
                let decoder = new_decoder(&options, &decoded, &zone).map_err(failed)?;
                let split = open_file(&file, decoder).map_err(failed)?;
                let split: Box<dyn SourceSplit> = if keys.is_empty() {
                    Box::new(split)
                } else {
                    let dir = file.parent().unwrap_or(&root);
                    let relative = dir.strip_prefix(&root).unwrap_or(dir);
                    Box::new(WithPartitionValues::new(
                        split,
                        &physical,
                        &keys,
                        relative,
                        &default_name,
                    ))
                };
                Ok(if metadata.is_empty() {
                    split
                } else {
                    Box::new(WithFileMetadata::new(split, &file, &metadata).map_err(failed)?)
                })
            };
            pipelines.push(Pipeline {
                branches: Vec::new(),
                split: Box::new(DeferredSplit::new(name, open).replayable()),
                operators: vec![],
            });
        }
        Ok(pipelines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connector::format::new_decoder;
    use crate::types::time::SessionZone;
    use crate::types::{DataType, Field, Schema, TypeKind};
    use arrow_array::cast::AsArray;

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("id", DataType::nullable(TypeKind::Int)),
            Field::new("s", DataType::string()),
        ])
    }

    fn split(format: &str, text: &str) -> LineSplit<std::io::Cursor<Vec<u8>>> {
        let options = vec![("format".to_string(), format.to_string())];
        let decoder = new_decoder(&options, &schema(), &SessionZone::utc()).unwrap();
        LineSplit::new(
            std::io::Cursor::new(text.as_bytes().to_vec()),
            decoder,
            "test".into(),
        )
    }

    /// The rows of a batch as `(id, s)`.
    fn pairs(b: &RecordBatch) -> Vec<(i32, String)> {
        let ids = b.column(0).as_primitive::<arrow_array::types::Int32Type>();
        let s = b.column(1).as_string::<i32>();
        (0..b.num_rows())
            .map(|i| (ids.value(i), s.value(i).to_string()))
            .collect()
    }

    /// A split stopped after any batch and sought anew from its position reads on to the
    /// same rows as one never stopped: at every batch and read boundary, a CSV record open
    /// across lines (its quoted field holds line breaks, CRLF too) and a last line without
    /// its line break included.
    #[test]
    fn a_split_sought_to_its_position_reads_on_as_if_never_stopped() {
        let text = "1,a\n2,\"two\nlines\"\n3,c\r\n4,\"x\r\ny\nz\"\n5,e\n6,\"\"\n7,g";
        let all: Vec<(i32, String)> = batches(split("csv", text)).unwrap().concat();
        assert_eq!(all.len(), 7);
        for batch_lines in 1..=4 {
            for read_size in [1, 3, 7, 64] {
                let make = || {
                    split("csv", text)
                        .with_batch_lines(batch_lines)
                        .with_read_size(read_size)
                };
                for stop_after in 0..8 {
                    let mut first = make();
                    let mut rows = Vec::new();
                    for _ in 0..stop_after {
                        if let Some(b) = first.next_batch().unwrap() {
                            rows.extend(pairs(&b));
                        }
                    }
                    let position = first.position().unwrap();
                    let mut rest = make();
                    rest.seek(&position).unwrap();
                    while let Some(b) = rest.next_batch().unwrap() {
                        rows.extend(pairs(&b));
                    }
                    assert_eq!(
                        rows, all,
                        "{batch_lines} lines, reads of {read_size}, stopped after {stop_after}"
                    );
                }
            }
        }
        // A position past the file's end (the file changed) is refused.
        let mut short = split("csv", "1,a\n");
        let err = short.seek(&words_position(&[100, 3])).unwrap_err();
        assert!(err.to_string().contains("the file changed"), "{err}");
    }

    /// Every batch's rows as `(id, s)`.
    fn batches(
        mut split: LineSplit<std::io::Cursor<Vec<u8>>>,
    ) -> Result<Vec<Vec<(i32, String)>>, ExecError> {
        let mut out = Vec::new();
        while let Some(b) = split.next_batch()? {
            let ids = b.column(0).as_primitive::<arrow_array::types::Int32Type>();
            let s = b.column(1).as_string::<i32>();
            out.push(
                (0..b.num_rows())
                    .map(|i| (ids.value(i), s.value(i).to_string()))
                    .collect(),
            );
        }
        Ok(out)
    }

    #[test]
    fn csv_records_over_line_breaks_cross_every_batch_boundary() {
        let text = "1,\"a\r\nb\"\r\n2,c\r\n3,\"x\n\ny\"\n4,\"\n\"\n";
        let expected = vec![
            (1, "a\r\nb".to_string()),
            (2, "c".into()),
            (3, "x\n\ny".into()),
            (4, "\n".into()),
        ];
        for lines in 1..=9 {
            let rows: Vec<_> = batches(split("csv", text).with_batch_lines(lines))
                .unwrap()
                .concat();
            assert_eq!(rows, expected, "{lines} lines a batch");
        }
        let e = batches(split("csv", "1,a\n2,\"open\n").with_batch_lines(1)).unwrap_err();
        assert!(
            e.to_string()
                .contains("line 2, column 's': Missing closing quote"),
            "{e}"
        );
    }

    #[test]
    fn lines_cut_by_the_end_of_a_read_decode_whole_at_every_offset() {
        // Quoted line breaks (CRLF kept inside the quotes), multi-byte characters (two, three
        // and four bytes), CRLF line ends, blank lines (JSON skips them; inside a quoted CSV
        // field they are text) and a last line without its newline.
        let csv = "1,\"a\r\nb\"\r\n2,é€😀\r\n3,\"x\n\ny\"\n4,\"\"\n5,last";
        let json = "{\"id\": 1, \"s\": \"é€😀\"}\r\n\n{\"id\": 2, \"s\": \"a\\nb\"}\r\n  \r\n\
                    {\"id\": 3, \"s\": \"\"}\n\n{\"id\": 4, \"s\": \"last\"}";
        let csv_rows = vec![
            (1, "a\r\nb".to_string()),
            (2, "é€😀".into()),
            (3, "x\n\ny".into()),
            (4, "".into()),
            (5, "last".into()),
        ];
        let json_rows = vec![
            (1, "é€😀".to_string()),
            (2, "a\nb".into()),
            (3, "".into()),
            (4, "last".into()),
        ];
        for (format, text, expected) in [("csv", csv, csv_rows), ("json", json, json_rows)] {
            for read_size in 1..=text.len() + 1 {
                for lines in [1, 2, 3, BATCH_LINES] {
                    let got = batches(
                        split(format, text)
                            .with_read_size(read_size)
                            .with_batch_lines(lines),
                    )
                    .unwrap_or_else(|e| panic!("{format}, reads of {read_size}: {e}"));
                    assert_eq!(
                        got.concat(),
                        expected,
                        "{format}, reads of {read_size}, {lines} lines a batch"
                    );
                }
            }
        }
    }

    #[test]
    fn invalid_utf8_names_its_line_whatever_the_reads() {
        let mut bytes = b"1,a\n2,b\n3,c\xff\n4,d\n".to_vec();
        for read_size in 1..=bytes.len() {
            let options = vec![("format".to_string(), "csv".to_string())];
            let decoder = new_decoder(&options, &schema(), &SessionZone::utc()).unwrap();
            let split = LineSplit::new(std::io::Cursor::new(bytes.clone()), decoder, "test".into())
                .with_read_size(read_size);
            let e = batches(split).unwrap_err().to_string();
            assert!(
                e.contains("test, line 3: invalid UTF-8 at byte 3 of the line"),
                "reads of {read_size}: {e}"
            );
        }
        // A character cut at the end of the input is invalid too, not dropped.
        bytes = b"1,a\n2,b".to_vec();
        bytes.push("é".as_bytes()[0]);
        let options = vec![("format".to_string(), "csv".to_string())];
        let decoder = new_decoder(&options, &schema(), &SessionZone::utc()).unwrap();
        let split = LineSplit::new(std::io::Cursor::new(bytes), decoder, "test".into());
        let e = batches(split).unwrap_err().to_string();
        assert!(e.contains("line 2: invalid UTF-8 at byte 3"), "{e}");
    }

    #[test]
    fn a_batch_ends_before_a_column_passes_the_byte_limit() {
        let values: Vec<String> = (0..40).map(|i| "x".repeat(i % 13)).collect();
        let csv: String = values
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{i},{v}\n"))
            .collect();
        let json: String = values
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{{\"id\": {i}, \"s\": \"{v}\"}}\n"))
            .collect();
        for (format, text) in [("csv", csv), ("json", json)] {
            for limit in [1, 12, 16, 30, 100] {
                let got = batches(split(format, &text).with_batch_bytes(limit)).unwrap();
                for b in &got {
                    let bytes: usize = b.iter().map(|(_, s)| s.len()).sum();
                    assert!(
                        bytes <= limit || b.len() == 1,
                        "{format}, limit {limit}: {bytes} bytes in {} rows",
                        b.len()
                    );
                }
                let rows: Vec<String> = got.concat().into_iter().map(|(_, s)| s).collect();
                assert_eq!(rows, values, "{format}, limit {limit}");
            }
        }
    }
}
