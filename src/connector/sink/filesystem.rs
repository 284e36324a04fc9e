//! Flink's `filesystem` connector as an append-only sink: rows are encoded by the table's
//! format into part files inside the directory `path` (of a partitioned table, inside its
//! `k=v/` partition directories, without the partition columns). No reader of the directory
//! sees a file before it is complete, and a failed job leaves nothing that looks like output:
//!
//! - **Batch mode** (Flink's `FileSystemOutputFormat`): parts are written into a hidden
//!   staging directory `path/.staging_<millis>_<uuid>`, one per partition, and moved into place
//!   only when every split has ended. `INSERT OVERWRITE` deletes, at that moment, the visible
//!   entries of the table (unpartitioned) or of each partition that received rows. A failed
//!   job drops the staging directory; a killed process leaves it behind, hidden, as Flink does.
//! - **Streaming mode** (Flink's `StreamingFileSink`): a part is written under a hidden
//!   in-progress name and renamed when it rolls — on `sink.rolling-policy.file-size`, on
//!   `rollover-interval` since it was opened, on `inactivity-interval` since its last row
//!   (both checked every `check-interval`) — and at the end of the input.
//!
//! - **Streaming mode with checkpoints** (Flink's two-phase commit): a part that rolls is
//!   only *pending* — synced, still hidden — until the checkpoint whose barrier follows it
//!   completes ([`Sink::commit`]); at a barrier ([`Sink::pre_commit`]) the open parts are
//!   synced and their lengths recorded. A job restored from that checkpoint renames its
//!   pending parts (again: idempotent), cuts each part open at the barrier back to its
//!   recorded length and commits it, and deletes the hidden parts the dead run wrote after
//!   the barrier. So after `kill -9` a reader sees exactly what completed checkpoints cover.
//!
//! Every part is fsynced before the rename that makes it visible. Names follow Flink's:
//! `part-<uuid>-<subtask>-<n>` in streaming mode, `part-<uuid>-task-<subtask>-file-<n>` in
//! batch mode.
//!
//! The sink is called only when a chunk arrives (or the input ends), so the time-based rolls
//! happen at the first write after they are due, not while the input is quiet.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{RecordBatch, UInt32Array};

use crate::clock::Clock;
use crate::connector::ConnectorError;
use crate::connector::format::{LineEncoder, new_encoder};
use crate::connector::partition::{self, DEFAULT_PARTITION_NAME};
use crate::connector::registry::{SinkFactory, SinkRequest};
use crate::connector::sink::Sink;
use crate::exec::error::ExecError;
use crate::function::math::random_uuid;
use crate::types::chunk::batch_with_rows;
use crate::types::chunk::{RowKind, StreamChunk};
use crate::types::option_value::{parse_duration, parse_memory_size};
use crate::types::{DataType, Schema};

/// Flink's defaults for `sink.rolling-policy.*`: 128 MB, 30 min, 30 min, 1 min.
const DEFAULT_ROLL_SIZE: u64 = 128 * 1024 * 1024;
const DEFAULT_ROLLOVER_NANOS: i64 = 30 * 60 * 1_000_000_000;
const DEFAULT_INACTIVITY_NANOS: i64 = 30 * 60 * 1_000_000_000;
const DEFAULT_CHECK_NANOS: i64 = 60 * 1_000_000_000;

/// Open parts at most, one per partition being written. Flink's batch sink sorts the rows by
/// partition and so keeps one open; rows arrive here unsorted, and a table with thousands of
/// partitions would exhaust the process's file descriptors. Past the limit the part written
/// least recently is closed (finished, in streaming mode), and its partition's next rows go
/// into a new part.
const MAX_OPEN_PARTS: usize = 256;

/// When a streaming part is finished (Flink's `TableRollingPolicy`).
#[derive(Debug, Clone, Copy)]
struct RollingPolicy {
    file_size: u64,
    rollover: i64,
    inactivity: i64,
    check_interval: i64,
}

/// Where the value of a partition key comes from.
#[derive(Debug, Clone)]
enum PartitionValue {
    /// A column of the incoming chunks.
    Column(usize, DataType),
    /// `INSERT … PARTITION (k = 'v')`.
    Static(String),
}

#[derive(Debug, Clone)]
struct Partitioning {
    keys: Vec<String>,
    values: Vec<PartitionValue>,
    default_name: String,
}

/// The table-level description of one INSERT into a filesystem table.
pub struct FileSinkTarget<'a> {
    pub table: &'a str,
    pub options: &'a [(String, String)],
    /// The table's physical columns, in order.
    pub schema: &'a Schema,
    pub partition_keys: &'a [String],
    /// `PARTITION (k = 'v', …)`: these columns are not in the incoming chunks.
    pub static_partitions: &'a [(String, String)],
    pub batch: bool,
    pub overwrite: bool,
}

pub struct FileSink {
    dir: PathBuf,
    table: String,
    /// The columns written into the files, by their position in the incoming chunks.
    data_columns: Vec<usize>,
    data_schema: Schema,
    encoder: LineEncoder,
    partitioning: Option<Partitioning>,
    prefix: String,
    batch: bool,
    overwrite: bool,
    rolling: RollingPolicy,
    clock: Arc<dyn Clock>,
    next_part: u64,
    /// Batch mode: the hidden directory the parts are written into until the commit.
    staging: Option<PathBuf>,
    /// The open part of each partition directory (`""` when the table is unpartitioned).
    parts: BTreeMap<String, PartFile>,
    /// Batch mode: the partition directories that received rows.
    written: BTreeSet<String>,
    /// The last time the time-based rolls were checked.
    last_check: i64,
    done: bool,
    buffer: Vec<u8>,
    /// Streaming with checkpoints: parts commit with the checkpoints (module doc).
    two_phase: bool,
    /// Parts rolled since the last barrier (hidden, synced).
    pending: Vec<Committable>,
    /// Parts staged by each checkpoint's barrier, committed when it completes.
    staged: BTreeMap<u64, Vec<Committable>>,
}

/// A hidden part and the visible name it commits to.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Committable {
    writing: PathBuf,
    finished: PathBuf,
}

struct PartFile {
    /// Where it is written (hidden: in progress, or in the staging directory).
    writing: PathBuf,
    /// Where it goes when it is complete (streaming mode; batch parts move at the commit).
    finished: PathBuf,
    out: BufWriter<File>,
    bytes: u64,
    opened_at: i64,
    written_at: i64,
}

fn option<'a>(options: &'a [(String, String)], key: &str) -> Option<&'a str> {
    options
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn parse_error(key: &str, text: &str) -> ConnectorError {
    ConnectorError(format!(
        "Invalid value for option '{key}'.\nCould not parse value '{text}' for key '{key}'."
    ))
}

impl RollingPolicy {
    fn from_options(options: &[(String, String)]) -> Result<Self, ConnectorError> {
        let size_key = "sink.rolling-policy.file-size";
        let file_size = match option(options, size_key) {
            Some(text) => parse_memory_size(text).ok_or_else(|| parse_error(size_key, text))?,
            None => DEFAULT_ROLL_SIZE,
        };
        let duration = |key: &str, default: i64| -> Result<i64, ConnectorError> {
            match option(options, key) {
                Some(text) => parse_duration(text).ok_or_else(|| parse_error(key, text)),
                None => Ok(default),
            }
        };
        let policy = RollingPolicy {
            file_size,
            rollover: duration(
                "sink.rolling-policy.rollover-interval",
                DEFAULT_ROLLOVER_NANOS,
            )?,
            inactivity: duration(
                "sink.rolling-policy.inactivity-interval",
                DEFAULT_INACTIVITY_NANOS,
            )?,
            check_interval: duration("sink.rolling-policy.check-interval", DEFAULT_CHECK_NANOS)?,
        };
        Ok(policy)
    }

    /// Flink checks its arguments only when it builds the streaming writer: a zero size or
    /// interval fails the job there (a bare `IllegalArgumentException`).
    fn check_streaming(&self, table: &str) -> Result<(), ConnectorError> {
        for (key, positive) in [
            ("file-size", self.file_size > 0),
            ("rollover-interval", self.rollover > 0),
            ("inactivity-interval", self.inactivity > 0),
        ] {
            if !positive {
                return Err(ConnectorError(format!(
                    "java.lang.IllegalArgumentException: option 'sink.rolling-policy.{key}' of table '{table}' must be positive"
                )));
            }
        }
        Ok(())
    }
}

impl FileSink {
    pub fn new(target: FileSinkTarget<'_>, clock: Arc<dyn Clock>) -> Result<Self, ConnectorError> {
        let table = target.table;
        crate::connector::source::filesystem::check_options(target.options)?;
        let path = option(target.options, "path").ok_or_else(|| {
            ConnectorError(format!(
                "table '{table}': option 'path' is required for connector 'filesystem'"
            ))
        })?;
        let dir = PathBuf::from(path.strip_prefix("file://").unwrap_or(path));
        if dir.is_file() {
            return Err(ConnectorError(format!(
                "table '{table}': path '{}' is a file; the filesystem sink writes part files into a directory",
                dir.display()
            )));
        }
        let rolling = RollingPolicy::from_options(target.options)?;
        if !target.batch {
            rolling.check_streaming(table)?;
        }
        // The incoming chunks carry the table's columns except the statically given ones.
        let incoming: Vec<&crate::types::Field> = target
            .schema
            .fields
            .iter()
            .filter(|f| !target.static_partitions.iter().any(|(k, _)| k == &f.name))
            .collect();
        let position = |name: &str| incoming.iter().position(|f| f.name == name);
        let partitioning = if target.partition_keys.is_empty() {
            None
        } else {
            let mut values = Vec::new();
            for key in target.partition_keys {
                let value = match target.static_partitions.iter().find(|(k, _)| k == key) {
                    Some((_, v)) => {
                        let column = target.schema.fields.iter().find(|f| &f.name == key);
                        let text = match column {
                            Some(f) => partition::static_value_text(v, &f.data_type)
                                .map_err(|e| ConnectorError(format!("table '{table}': {e}")))?,
                            None => v.clone(),
                        };
                        PartitionValue::Static(text)
                    }
                    None => {
                        let i = position(key).ok_or_else(|| {
                            ConnectorError(format!(
                                "table '{table}': partition column '{key}' is not a column"
                            ))
                        })?;
                        let data_type = incoming[i].data_type.clone();
                        if !partition::is_partition_type(&data_type.kind) {
                            return Err(ConnectorError(format!(
                                "table '{table}': partition column '{key}' has type {}, whose values cannot name a directory",
                                data_type.kind
                            )));
                        }
                        PartitionValue::Column(i, data_type)
                    }
                };
                values.push(value);
            }
            Some(Partitioning {
                keys: target.partition_keys.to_vec(),
                values,
                default_name: option(target.options, "partition.default-name")
                    .unwrap_or(DEFAULT_PARTITION_NAME)
                    .to_string(),
            })
        };
        let data_columns: Vec<usize> = incoming
            .iter()
            .enumerate()
            .filter(|(_, f)| !target.partition_keys.contains(&f.name))
            .map(|(i, _)| i)
            .collect();
        let data_schema = Schema::new(data_columns.iter().map(|&i| incoming[i].clone()).collect());
        let encoder = new_encoder(target.options, &data_schema)?;
        let now = clock.now_nanos();
        Ok(FileSink {
            dir,
            table: table.to_string(),
            data_columns,
            data_schema,
            encoder,
            partitioning,
            prefix: format!("part-{}", random_uuid()),
            batch: target.batch,
            overwrite: target.overwrite,
            rolling,
            clock,
            next_part: 0,
            staging: None,
            parts: BTreeMap::new(),
            written: BTreeSet::new(),
            last_check: now,
            done: false,
            buffer: Vec::new(),
            two_phase: false,
            pending: Vec::new(),
            staged: BTreeMap::new(),
        })
    }

    /// Streaming parts commit with the job's checkpoints.
    pub fn with_two_phase_commit(mut self) -> Self {
        self.two_phase = !self.batch;
        self
    }

    fn io_error(&self, path: &Path, e: std::io::Error) -> ExecError {
        ExecError::Sink(format!(
            "filesystem sink of table '{}': {}: {e}",
            self.table,
            path.display()
        ))
    }

    fn staging_dir(&mut self) -> Result<PathBuf, ExecError> {
        if let Some(staging) = &self.staging {
            return Ok(staging.clone());
        }
        let millis = self.clock.now_nanos().div_euclid(1_000_000);
        let staging = self
            .dir
            .join(format!(".staging_{millis}_{}", random_uuid()));
        std::fs::create_dir_all(&staging).map_err(|e| self.io_error(&staging, e))?;
        self.staging = Some(staging.clone());
        Ok(staging)
    }

    fn open_part(&mut self, partition: &str) -> Result<(), ExecError> {
        if self.parts.len() >= MAX_OPEN_PARTS
            && let Some(idle) = self
                .parts
                .iter()
                .min_by_key(|(_, p)| p.written_at)
                .map(|(k, _)| k.clone())
        {
            self.close_part(&idle)?;
        }
        let (writing, finished) = if self.batch {
            let name = format!("{}-task-0-file-{}", self.prefix, self.next_part);
            let dir = self.staging_dir()?.join(partition);
            (dir.join(&name), self.dir.join(partition).join(&name))
        } else {
            let name = format!("{}-0-{}", self.prefix, self.next_part);
            let dir = self.dir.join(partition);
            (dir.join(format!(".{name}.inprogress")), dir.join(&name))
        };
        let parent = writing.parent().unwrap_or(&self.dir).to_path_buf();
        std::fs::create_dir_all(&parent).map_err(|e| self.io_error(&parent, e))?;
        self.next_part += 1;
        let file = File::create(&writing).map_err(|e| self.io_error(&writing, e))?;
        let now = self.clock.now_nanos();
        self.parts.insert(
            partition.to_string(),
            PartFile {
                writing,
                finished,
                out: BufWriter::new(file),
                bytes: 0,
                opened_at: now,
                written_at: now,
            },
        );
        Ok(())
    }

    /// Flushes and fsyncs a part; in streaming mode also renames it to its visible name (and
    /// fsyncs the directory, so the rename survives a crash).
    fn close_part(&mut self, partition: &str) -> Result<(), ExecError> {
        let Some(part) = self.parts.remove(partition) else {
            return Ok(());
        };
        let file = part
            .out
            .into_inner()
            .map_err(|e| self.io_error(&part.writing, e.into_error()))?;
        file.sync_all()
            .map_err(|e| self.io_error(&part.writing, e))?;
        drop(file);
        let part = Committable {
            writing: part.writing,
            finished: part.finished,
        };
        if self.two_phase {
            self.pending.push(part);
        } else if !self.batch {
            self.publish(&part)?;
        }
        Ok(())
    }

    /// Renames a synced hidden part to its visible name, durably; a part renamed before
    /// (a commit repeated after a restore) is left as it is.
    fn publish(&self, part: &Committable) -> Result<(), ExecError> {
        if !part.writing.exists() && part.finished.exists() {
            return Ok(());
        }
        std::fs::rename(&part.writing, &part.finished)
            .map_err(|e| self.io_error(&part.finished, e))?;
        sync_dir(part.finished.parent().unwrap_or(&self.dir))
            .map_err(|e| self.io_error(&part.finished, e))
    }

    /// Streaming mode: finishes the parts whose time is up, at most once per check interval
    /// (Flink's processing-time timer).
    fn roll_on_time(&mut self) -> Result<(), ExecError> {
        if self.batch {
            return Ok(());
        }
        let now = self.clock.now_nanos();
        if now.saturating_sub(self.last_check) < self.rolling.check_interval {
            return Ok(());
        }
        self.last_check = now;
        let due: Vec<String> = self
            .parts
            .iter()
            .filter(|(_, p)| {
                now.saturating_sub(p.opened_at) >= self.rolling.rollover
                    || now.saturating_sub(p.written_at) >= self.rolling.inactivity
            })
            .map(|(k, _)| k.clone())
            .collect();
        for partition in due {
            self.close_part(&partition)?;
        }
        Ok(())
    }

    /// The partition directory of each row, and the rows of each directory in input order.
    fn group_rows(&self, batch: &RecordBatch) -> Vec<(String, Vec<u32>)> {
        let Some(p) = &self.partitioning else {
            return vec![(String::new(), (0..batch.num_rows() as u32).collect())];
        };
        let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        for row in 0..batch.num_rows() {
            let values: Vec<Option<String>> = p
                .values
                .iter()
                .map(|v| match v {
                    PartitionValue::Static(s) => Some(s.clone()),
                    PartitionValue::Column(i, t) => {
                        partition::value_text(batch.column(*i).as_ref(), row, t)
                    }
                })
                .collect();
            let dir = partition::directory_of(&p.keys, &values, &p.default_name);
            match index.get(&dir) {
                Some(&g) => groups[g].1.push(row as u32),
                None => {
                    index.insert(dir.clone(), groups.len());
                    groups.push((dir, vec![row as u32]));
                }
            }
        }
        groups
    }

    /// Writes rows of one partition, rolling by size between rows as Flink does.
    fn write_rows(
        &mut self,
        partition: &str,
        rows: &RecordBatch,
        kinds: Option<&[RowKind]>,
    ) -> Result<(), ExecError> {
        self.buffer.clear();
        // When every column is a partition key the rows leave only their directory, and an
        // empty file (Flink writes no line for them).
        if self.data_schema.fields.is_empty() {
            return self.append(partition, b"");
        }
        self.encoder
            .encode_batch(rows, kinds, &self.data_schema, &mut self.buffer);
        let fits = self.batch
            || self
                .parts
                .get(partition)
                .map_or(0, |p| p.bytes)
                .saturating_add(self.buffer.len() as u64)
                <= self.rolling.file_size;
        if fits {
            let text = std::mem::take(&mut self.buffer);
            let result = self.append(partition, &text);
            self.buffer = text;
            return result;
        }
        // The chunk crosses the size limit: row by row, a part ends once it is past the limit.
        let mut line = Vec::new();
        for row in 0..rows.num_rows() {
            line.clear();
            let kind = kinds.map(|k| &k[row..row + 1]);
            self.encoder
                .encode_batch(&rows.slice(row, 1), kind, &self.data_schema, &mut line);
            self.append(partition, &line)?;
        }
        Ok(())
    }

    fn append(&mut self, partition: &str, text: &[u8]) -> Result<(), ExecError> {
        if !self.parts.contains_key(partition) {
            self.open_part(partition)?;
        }
        let now = self.clock.now_nanos();
        let part = self.parts.get_mut(partition).expect("opened above");
        if let Err(e) = part.out.write_all(text) {
            let path = part.writing.clone();
            return Err(self.io_error(&path, e));
        }
        part.bytes += text.len() as u64;
        part.written_at = now;
        if !self.batch && part.bytes > self.rolling.file_size {
            self.close_part(partition)?;
        }
        Ok(())
    }

    /// Batch mode: moves the staged parts into place, after deleting what INSERT OVERWRITE
    /// replaces (Flink's `PartitionLoader`).
    fn commit(&mut self) -> Result<(), ExecError> {
        std::fs::create_dir_all(&self.dir).map_err(|e| self.io_error(&self.dir, e))?;
        if self.overwrite {
            if self.partitioning.is_none() {
                self.remove_visible(&self.dir.clone())?;
            } else {
                for partition in self.written.clone() {
                    self.remove_visible(&self.dir.join(&partition))?;
                }
            }
        }
        let Some(staging) = self.staging.clone() else {
            return Ok(());
        };
        for partition in self.written.clone() {
            let from = staging.join(&partition);
            let to = self.dir.join(&partition);
            std::fs::create_dir_all(&to).map_err(|e| self.io_error(&to, e))?;
            let entries = std::fs::read_dir(&from).map_err(|e| self.io_error(&from, e))?;
            for entry in entries {
                let entry = entry.map_err(|e| self.io_error(&from, e))?;
                let target = to.join(entry.file_name());
                std::fs::rename(entry.path(), &target).map_err(|e| self.io_error(&target, e))?;
            }
            sync_dir(&to).map_err(|e| self.io_error(&to, e))?;
        }
        std::fs::remove_dir_all(&staging).map_err(|e| self.io_error(&staging, e))?;
        self.staging = None;
        Ok(())
    }

    /// The entries of `dir` a reader sees (not starting with `.` or `_`), directories too.
    fn remove_visible(&self, dir: &Path) -> Result<(), ExecError> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name.starts_with('_') {
                continue;
            }
            let path = entry.path();
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.map_err(|e| self.io_error(&path, e))?;
        }
        Ok(())
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

impl Sink for FileSink {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        if let Some(kinds) = &chunk.kinds
            && !self.encoder.writes_changes()
            && kinds.iter().any(|k| *k != RowKind::Insert)
        {
            return Err(ExecError::Sink(format!(
                "table '{}' (connector 'filesystem') is append-only and cannot consume update or delete changes",
                self.table
            )));
        }
        self.roll_on_time()?;
        if chunk.num_rows() == 0 {
            return Ok(());
        }
        let data = chunk.batch.project(&self.data_columns)?;
        for (partition, rows) in self.group_rows(&chunk.batch) {
            let kinds: Option<Vec<RowKind>> = chunk
                .kinds
                .as_ref()
                .map(|k| rows.iter().map(|&r| k[r as usize]).collect());
            let rows = if rows.len() == data.num_rows() {
                data.clone()
            } else {
                let indices = UInt32Array::from(rows);
                let columns = data
                    .columns()
                    .iter()
                    .map(|c| arrow_select::take::take(c.as_ref(), &indices, None))
                    .collect::<Result<Vec<_>, _>>()?;
                batch_with_rows(data.schema(), columns, indices.len())?
            };
            if self.batch {
                self.written.insert(partition.clone());
            }
            self.write_rows(&partition, &rows, kinds.as_deref())?;
        }
        Ok(())
    }

    fn on_idle(&mut self) -> Result<(), ExecError> {
        self.roll_on_time()
    }

    fn finish(&mut self) -> Result<(), ExecError> {
        self.roll_on_time()?;
        let open: Vec<String> = self.parts.keys().cloned().collect();
        for partition in open {
            self.close_part(&partition)?;
        }
        if self.batch {
            self.commit()?;
        }
        // The input ended: everything written is the job's output.
        let staged: Vec<Committable> = std::mem::take(&mut self.staged)
            .into_values()
            .flatten()
            .chain(std::mem::take(&mut self.pending))
            .collect();
        for part in &staged {
            self.publish(part)?;
        }
        self.done = true;
        Ok(())
    }

    fn end_input(&mut self) -> Result<(), ExecError> {
        let open: Vec<String> = self.parts.keys().cloned().collect();
        for partition in open {
            self.close_part(&partition)?;
        }
        Ok(())
    }

    /// Syncs the open parts and stages the rolled ones for checkpoint `checkpoint`; the
    /// state lists every part not committed yet and each open part's length.
    fn pre_commit(&mut self, checkpoint: u64) -> Result<Vec<u8>, ExecError> {
        if !self.two_phase {
            return Ok(Vec::new());
        }
        let mut open = Vec::new();
        let paths: Vec<String> = self.parts.keys().cloned().collect();
        for partition in paths {
            let part = self.parts.get_mut(&partition).expect("listed above");
            let synced = part
                .out
                .flush()
                .and_then(|()| part.out.get_ref().sync_data());
            if let Err(e) = synced {
                let path = part.writing.clone();
                return Err(self.io_error(&path, e));
            }
            let part = &self.parts[&partition];
            open.push((
                Committable {
                    writing: part.writing.clone(),
                    finished: part.finished.clone(),
                },
                part.bytes,
            ));
        }
        let rolled = std::mem::take(&mut self.pending);
        self.staged.entry(checkpoint).or_default().extend(rolled);
        let staged: Vec<&Committable> = self.staged.values().flatten().collect();
        Ok(encode_commit_state(&self.prefix, &staged, &open))
    }

    fn commit(&mut self, checkpoint: u64) -> Result<(), ExecError> {
        let later = self.staged.split_off(&(checkpoint + 1));
        let due = std::mem::replace(&mut self.staged, later);
        for part in due.into_values().flatten() {
            self.publish(&part)?;
        }
        Ok(())
    }

    /// Commits what the checkpoint staged (again, idempotently), cuts the parts open at its
    /// barrier back to their lengths and commits them, and deletes the hidden parts of that
    /// run written after the barrier.
    fn restore(&mut self, state: &[u8]) -> Result<(), ExecError> {
        if state.is_empty() {
            return Ok(());
        }
        let (prefix, staged, open) = decode_commit_state(state).ok_or_else(|| {
            ExecError::Checkpoint(format!(
                "filesystem sink of table '{}': its checkpointed state does not read back",
                self.table
            ))
        })?;
        let mut named = BTreeSet::new();
        for part in &staged {
            if !part.writing.exists() && !part.finished.exists() {
                return Err(ExecError::Checkpoint(format!(
                    "filesystem sink of table '{}': the part {} the checkpoint staged is gone (its rows are lost)",
                    self.table,
                    part.writing.display()
                )));
            }
            self.publish(part)?;
            named.insert(part.writing.clone());
        }
        for (part, length) in &open {
            named.insert(part.writing.clone());
            if !part.writing.exists() && part.finished.exists() {
                continue;
            }
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&part.writing)
                .map_err(|e| self.io_error(&part.writing, e))?;
            file.set_len(*length)
                .and_then(|()| file.sync_all())
                .map_err(|e| self.io_error(&part.writing, e))?;
            drop(file);
            self.publish(part)?;
        }
        // What the dead run wrote after the barrier: hidden parts of its prefix.
        let hidden = format!(".{prefix}-");
        let mut dirs = vec![self.dir.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().into_owned();
                if path.is_dir() {
                    if !name.starts_with('.') {
                        dirs.push(path);
                    }
                } else if name.starts_with(&hidden)
                    && name.ends_with(".inprogress")
                    && !named.contains(&path)
                {
                    std::fs::remove_file(&path).map_err(|e| self.io_error(&path, e))?;
                }
            }
        }
        Ok(())
    }
}

/// The filesystem sink's checkpointed state: its part-name prefix, the parts staged and not
/// yet committed, and the parts open at the barrier with their lengths.
fn encode_commit_state(
    prefix: &str,
    staged: &[&Committable],
    open: &[(Committable, u64)],
) -> Vec<u8> {
    fn text(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    fn part(out: &mut Vec<u8>, p: &Committable) {
        text(out, &p.writing.to_string_lossy());
        text(out, &p.finished.to_string_lossy());
    }
    let mut out = Vec::new();
    text(&mut out, prefix);
    out.extend_from_slice(&(staged.len() as u64).to_le_bytes());
    for p in staged {
        part(&mut out, p);
    }
    out.extend_from_slice(&(open.len() as u64).to_le_bytes());
    for (p, length) in open {
        part(&mut out, p);
        out.extend_from_slice(&length.to_le_bytes());
    }
    out
}

type CommitState = (String, Vec<Committable>, Vec<(Committable, u64)>);

fn decode_commit_state(mut bytes: &[u8]) -> Option<CommitState> {
    fn number(bytes: &mut &[u8]) -> Option<u64> {
        let (head, rest) = bytes.split_at_checked(8)?;
        *bytes = rest;
        Some(u64::from_le_bytes(head.try_into().ok()?))
    }
    fn text(bytes: &mut &[u8]) -> Option<String> {
        let len = usize::try_from(number(bytes)?).ok()?;
        let (head, rest) = bytes.split_at_checked(len)?;
        *bytes = rest;
        String::from_utf8(head.to_vec()).ok()
    }
    fn part(bytes: &mut &[u8]) -> Option<Committable> {
        Some(Committable {
            writing: PathBuf::from(text(bytes)?),
            finished: PathBuf::from(text(bytes)?),
        })
    }
    let prefix = text(&mut bytes)?;
    let mut staged = Vec::new();
    for _ in 0..number(&mut bytes)? {
        staged.push(part(&mut bytes)?);
    }
    let mut open = Vec::new();
    for _ in 0..number(&mut bytes)? {
        let p = part(&mut bytes)?;
        open.push((p, number(&mut bytes)?));
    }
    bytes.is_empty().then_some((prefix, staged, open))
}

impl Drop for FileSink {
    /// A job that did not finish leaves no trace a reader would take for output: the staging
    /// directory (batch) or the in-progress parts (streaming) go.
    fn drop(&mut self) {
        // With checkpoints, a hidden part may be named by the last checkpoint: a restore
        // commits or deletes it.
        if self.done || self.two_phase {
            return;
        }
        for part in std::mem::take(&mut self.parts).into_values() {
            drop(part.out);
            let _ = std::fs::remove_file(&part.writing);
        }
        if let Some(staging) = self.staging.take() {
            let _ = std::fs::remove_dir_all(staging);
        }
    }
}

/// The `filesystem` connector's sink.
pub struct FileSinkFactory;

impl SinkFactory for FileSinkFactory {
    fn identifier(&self) -> &'static str {
        "filesystem"
    }

    /// Files are append-only: a row once written stays; a changelog format writes each
    /// change as a line of its own.
    fn accepts_updates(&self, request: &SinkRequest) -> bool {
        crate::connector::format::is_changelog_format(&request.table.options)
    }

    fn check(&self, request: &SinkRequest) -> Result<(), String> {
        if request.overwrite && !request.batch {
            return Err("Streaming mode not support overwrite.".into());
        }
        Ok(())
    }

    fn validate(&self, request: &SinkRequest) -> Result<(), ConnectorError> {
        self.create(request, &mut std::io::sink()).map(drop)
    }

    fn create<'a>(
        &self,
        request: &SinkRequest,
        _out: &'a mut dyn std::io::Write,
    ) -> Result<Box<dyn Sink + 'a>, ConnectorError> {
        let sink = FileSink::new(
            FileSinkTarget {
                table: request.name,
                options: &request.table.options,
                schema: request.physical,
                partition_keys: &request.table.partition_keys,
                static_partitions: request.static_partitions,
                batch: request.batch,
                overwrite: request.overwrite,
            },
            request.clock.clone(),
        )?;
        Ok(Box::new(if request.checkpointing {
            sink.with_two_phase_commit()
        } else {
            sink
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::types::{Field, TypeKind};
    use arrow_array::Int32Array;

    const SECOND: i64 = 1_000_000_000;

    fn int_schema() -> Schema {
        Schema::new(vec![Field::new("a", DataType::nullable(TypeKind::Int))])
    }

    fn chunk(values: &[i32]) -> StreamChunk {
        let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
            "a",
            arrow_schema::DataType::Int32,
            true,
        )]));
        StreamChunk::inserts(
            RecordBatch::try_new(schema, vec![Arc::new(Int32Array::from(values.to_vec()))])
                .unwrap(),
        )
    }

    fn sink(dir: &Path, extra: &[(&str, &str)], batch: bool, clock: Arc<ManualClock>) -> FileSink {
        let mut options = vec![
            ("connector".to_string(), "filesystem".to_string()),
            ("path".to_string(), dir.display().to_string()),
            ("format".to_string(), "csv".to_string()),
        ];
        options.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        FileSink::new(
            FileSinkTarget {
                table: "t",
                options: &options,
                schema: &int_schema(),
                partition_keys: &[],
                static_partitions: &[],
                batch,
                overwrite: false,
            },
            clock,
        )
        .unwrap()
    }

    /// (visible files, hidden entries) of a directory, files with their contents, sorted.
    fn listing(dir: &Path) -> (Vec<String>, Vec<String>) {
        let mut visible = Vec::new();
        let mut hidden = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                hidden.push(name);
            } else {
                visible.push(std::fs::read_to_string(entry.path()).unwrap());
            }
        }
        visible.sort();
        (visible, hidden)
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("tideline-file-sink-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn streaming_parts_roll_over_after_the_interval() {
        let dir = temp_dir("rollover");
        let clock = ManualClock::new(0);
        let mut s = sink(
            &dir,
            &[
                ("sink.rolling-policy.rollover-interval", "10 s"),
                ("sink.rolling-policy.check-interval", "1 s"),
            ],
            false,
            clock.clone(),
        );
        s.write(chunk(&[1, 2])).unwrap();
        clock.set(5 * SECOND);
        s.write(chunk(&[3])).unwrap();
        // Nothing is visible while the part is young.
        assert_eq!(listing(&dir).0.len(), 0);
        clock.set(11 * SECOND);
        s.write(chunk(&[4])).unwrap();
        assert_eq!(listing(&dir).0, vec!["1\n2\n3\n".to_string()]);
        s.finish().unwrap();
        let (visible, hidden) = listing(&dir);
        assert_eq!(visible, vec!["1\n2\n3\n".to_string(), "4\n".to_string()]);
        assert!(hidden.is_empty(), "{hidden:?}");
    }

    #[test]
    fn streaming_parts_roll_when_inactive_and_only_at_check_times() {
        let dir = temp_dir("inactivity");
        let clock = ManualClock::new(0);
        let mut s = sink(
            &dir,
            &[
                ("sink.rolling-policy.inactivity-interval", "2 s"),
                ("sink.rolling-policy.check-interval", "5 s"),
            ],
            false,
            clock.clone(),
        );
        s.write(chunk(&[1])).unwrap();
        // Inactive for 3 s, but the next check is at 5 s.
        clock.set(3 * SECOND);
        s.write(chunk(&[2])).unwrap();
        assert_eq!(listing(&dir).0.len(), 0);
        clock.set(6 * SECOND);
        s.write(chunk(&[3])).unwrap();
        // At 6 s the part was last written at 3 s: inactive for 3 s > 2 s.
        assert_eq!(listing(&dir).0, vec!["1\n2\n".to_string()]);
        s.finish().unwrap();
        assert_eq!(listing(&dir).0.len(), 2);
    }

    #[test]
    fn a_quiet_input_still_finishes_parts_whose_time_is_up() {
        let dir = temp_dir("idle");
        let clock = ManualClock::new(0);
        let mut s = sink(
            &dir,
            &[
                ("sink.rolling-policy.rollover-interval", "2 s"),
                ("sink.rolling-policy.check-interval", "1 s"),
            ],
            false,
            clock.clone(),
        );
        s.write(chunk(&[1, 2])).unwrap();
        s.on_idle().unwrap();
        assert_eq!(listing(&dir).0.len(), 0);
        // No row arrives again: the runtime's idle calls alone make the part visible.
        clock.set(3 * SECOND);
        s.on_idle().unwrap();
        assert_eq!(listing(&dir).0, vec!["1\n2\n".to_string()]);
        s.finish().unwrap();
        assert_eq!(listing(&dir).0.len(), 1);
    }

    #[test]
    fn streaming_parts_roll_on_size_between_rows() {
        let dir = temp_dir("size");
        let clock = ManualClock::new(0);
        let mut s = sink(
            &dir,
            &[("sink.rolling-policy.file-size", "3b")],
            false,
            clock,
        );
        s.write(chunk(&[1, 2, 3, 4, 5])).unwrap();
        s.finish().unwrap();
        // A part ends once it holds more than 3 bytes: two lines each, the rest in the last.
        assert_eq!(
            listing(&dir).0,
            vec![
                "1\n2\n".to_string(),
                "3\n4\n".to_string(),
                "5\n".to_string()
            ]
        );
    }

    #[test]
    fn a_batch_job_that_does_not_finish_leaves_nothing() {
        let dir = temp_dir("batch-fail");
        let clock = ManualClock::new(0);
        let mut s = sink(
            &dir,
            &[("sink.rolling-policy.file-size", "1b")],
            true,
            clock,
        );
        for i in 0..100 {
            s.write(chunk(&[i, i + 1])).unwrap();
        }
        // Before the commit only the hidden staging directory exists.
        let (visible, hidden) = listing(&dir);
        assert!(visible.is_empty());
        assert_eq!(hidden.len(), 1);
        assert!(hidden[0].starts_with(".staging_"), "{hidden:?}");
        drop(s);
        assert_eq!(listing(&dir), (vec![], vec![]));
    }

    #[test]
    fn a_streaming_job_that_fails_keeps_its_finished_parts_and_drops_the_one_in_progress() {
        let dir = temp_dir("streaming-fail");
        let mut s = sink(
            &dir,
            &[("sink.rolling-policy.file-size", "3b")],
            false,
            ManualClock::new(0),
        );
        s.write(chunk(&[1, 2, 3])).unwrap();
        // "1\n2\n" is finished, "3\n" in progress when the job fails.
        drop(s);
        assert_eq!(listing(&dir), (vec!["1\n2\n".to_string()], vec![]));
    }

    #[test]
    fn a_killed_batch_job_leaves_only_its_hidden_staging_directory() {
        let dir = temp_dir("batch-killed");
        let mut s = sink(&dir, &[], true, ManualClock::new(0));
        s.write(chunk(&[1])).unwrap();
        // A killed process runs no destructor.
        std::mem::forget(s);
        let (visible, hidden) = listing(&dir);
        assert!(visible.is_empty());
        assert_eq!(hidden.len(), 1);
        let files =
            crate::connector::source::filesystem::list_files(&dir.display().to_string()).unwrap();
        assert!(files.is_empty(), "a reader sees {files:?}");
    }

    #[test]
    fn a_batch_job_writes_one_file_whatever_the_size() {
        let dir = temp_dir("batch-one");
        let mut s = sink(
            &dir,
            &[("sink.rolling-policy.file-size", "1b")],
            true,
            ManualClock::new(0),
        );
        s.write(chunk(&[1, 2])).unwrap();
        s.write(chunk(&[3])).unwrap();
        s.finish().unwrap();
        assert_eq!(listing(&dir), (vec!["1\n2\n3\n".to_string()], vec![]));
    }

    #[test]
    fn many_partitions_keep_few_files_open() {
        let dir = temp_dir("many-partitions");
        let mut options = vec![
            ("connector".to_string(), "filesystem".to_string()),
            ("path".to_string(), dir.display().to_string()),
            ("format".to_string(), "csv".to_string()),
        ];
        options.push(("partition.default-name".into(), "none".into()));
        let schema = Schema::new(vec![
            Field::new("v", DataType::nullable(TypeKind::Int)),
            Field::new("k", DataType::nullable(TypeKind::Int)),
        ]);
        let mut s = FileSink::new(
            FileSinkTarget {
                table: "t",
                options: &options,
                schema: &schema,
                partition_keys: &["k".to_string()],
                static_partitions: &[],
                batch: true,
                overwrite: false,
            },
            ManualClock::new(0),
        )
        .unwrap();
        let arrow_schema = Arc::new(arrow_schema::Schema::new(vec![
            arrow_schema::Field::new("v", arrow_schema::DataType::Int32, true),
            arrow_schema::Field::new("k", arrow_schema::DataType::Int32, true),
        ]));
        let partitions = (MAX_OPEN_PARTS * 2) as i32;
        // Two rounds over every partition, so each partition's part is closed in between.
        for round in 0..2 {
            let keys: Vec<i32> = (0..partitions).collect();
            let values: Vec<i32> = keys.iter().map(|k| k * 10 + round).collect();
            let batch = RecordBatch::try_new(
                arrow_schema.clone(),
                vec![
                    Arc::new(Int32Array::from(values)),
                    Arc::new(Int32Array::from(keys)),
                ],
            )
            .unwrap();
            s.write(StreamChunk::inserts(batch)).unwrap();
            assert!(s.parts.len() <= MAX_OPEN_PARTS);
        }
        s.finish().unwrap();
        for k in [0, partitions - 1] {
            let mut lines: Vec<String> = std::fs::read_dir(dir.join(format!("k={k}")))
                .unwrap()
                .flatten()
                .flat_map(|e| {
                    std::fs::read_to_string(e.path())
                        .unwrap()
                        .lines()
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                })
                .collect();
            lines.sort();
            assert_eq!(
                lines,
                vec![format!("{}", k * 10), format!("{}", k * 10 + 1)]
            );
        }
    }

    #[test]
    fn bad_rolling_options() {
        let options = |k: &str, v: &str| {
            vec![
                ("connector".to_string(), "filesystem".to_string()),
                ("path".to_string(), "/nonexistent-dir-x".to_string()),
                (k.to_string(), v.to_string()),
            ]
        };
        let err =
            RollingPolicy::from_options(&options("sink.rolling-policy.rollover-interval", "abc"))
                .unwrap_err();
        assert!(
            err.0.contains(
                "Could not parse value 'abc' for key 'sink.rolling-policy.rollover-interval'."
            ),
            "{err}"
        );
        let zero =
            RollingPolicy::from_options(&options("sink.rolling-policy.rollover-interval", "0 s"))
                .unwrap();
        assert!(zero.check_streaming("t").is_err());
    }
}
