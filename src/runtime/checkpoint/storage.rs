//! Checkpoint directories (docs/design/0008 §3): `<dir>/<job-id>/chk-<n>/` holds one state
//! file per participant (`split-<group>-<index>`, `task-<vertex>-<instance>`, `sink`) and
//! `_metadata`, a JSON index written last and atomically (a temporary name, synced, renamed,
//! the directory synced): a checkpoint without `_metadata` never completed and is never read.
//! Every state file is named in `_metadata` with its length and CRC-32, and every piece of
//! state with its offset and length in its file, so a reader at another parallelism finds the
//! key groups it owns, and a truncated or altered file is refused before anything restores.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::{
    OperatorSnapshot, Participant, ParticipantState, RestoredOperator, RestoredState,
    SplitSnapshot, SplitStatus, operator_key, vertex_key,
};
use crate::exec::error::ExecError;
use crate::plan::stream::uid::NodeUid;
use crate::runtime::graph::SourceUids;

/// The layout `_metadata` describes; a later one is refused.
const FORMAT: u64 = 1;

pub const METADATA: &str = "_metadata";

/// A state file read for a restore. On Unix it is mapped, not read: reading 1 GB into memory
/// of its own took 3.3 s here, nearly all in the kernel making room for the new pages, where
/// mapping the file shares the page cache's pages. Checkpoint files are written once and
/// never changed after their checkpoint completed (a file cut short under the mapping would
/// end the process with SIGBUS: nothing in Tideline does that).
pub struct StateFile {
    #[cfg(unix)]
    map: Option<(std::ptr::NonNull<u8>, usize)>,
    #[cfg(not(unix))]
    bytes: Vec<u8>,
}

// SAFETY: the mapping is read-only and private to this value, which unmaps it when dropped.
#[cfg(unix)]
unsafe impl Send for StateFile {}
// SAFETY: as above: shared references only read it.
#[cfg(unix)]
unsafe impl Sync for StateFile {}

impl StateFile {
    #[cfg(unix)]
    fn open(path: &Path) -> std::io::Result<Self> {
        use std::os::fd::AsRawFd;
        let file = File::open(path)?;
        let len = file.metadata()?.len() as usize;
        if len == 0 {
            return Ok(StateFile { map: None });
        }
        // SAFETY: a private read-only mapping of a file open for reading, of its length;
        // the result is checked before use.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let at =
            std::ptr::NonNull::new(at.cast::<u8>()).ok_or_else(std::io::Error::last_os_error)?;
        Ok(StateFile {
            map: Some((at, len)),
        })
    }

    #[cfg(not(unix))]
    fn open(path: &Path) -> std::io::Result<Self> {
        Ok(StateFile {
            bytes: std::fs::read(path)?,
        })
    }
}

impl std::ops::Deref for StateFile {
    type Target = [u8];

    #[cfg(unix)]
    fn deref(&self) -> &[u8] {
        match self.map {
            // SAFETY: the mapping lives as long as `self` and is `len` bytes long.
            Some((at, len)) => unsafe { std::slice::from_raw_parts(at.as_ptr(), len) },
            None => &[],
        }
    }

    #[cfg(not(unix))]
    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

#[cfg(unix)]
impl Drop for StateFile {
    fn drop(&mut self) {
        if let Some((at, len)) = self.map {
            // SAFETY: the mapping made in `open`, unmapped once.
            unsafe {
                libc::munmap(at.as_ptr().cast(), len);
            }
        }
    }
}

/// A piece of a state file read for a restore, sharing the file's bytes.
#[derive(Clone)]
pub struct Segment {
    file: Arc<StateFile>,
    start: usize,
    end: usize,
}

impl std::ops::Deref for Segment {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.file[self.start..self.end]
    }
}

impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Segment({} bytes)", self.end - self.start)
    }
}

/// What the writer knows of the job's graph: the uids state is stored under.
#[derive(Debug, Clone, Default)]
pub struct GraphUids {
    /// Per task vertex, its name and the uids of its chain.
    pub tasks: Vec<(String, Vec<NodeUid>)>,
    pub sources: Vec<SourceUids>,
    pub max_parallelism: u32,
}

/// A checkpoint's identity, written into its metadata.
#[derive(Debug, Clone)]
pub struct CheckpointInfo {
    pub job_id: String,
    pub job_name: String,
    pub id: u64,
    pub triggered_at_ms: i64,
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> ExecError {
    ExecError::Checkpoint(format!("cannot {what} '{}': {e}", path.display()))
}

/// Appends segments to one state file, remembering where each went and the file's CRC.
struct SegmentWriter {
    file: std::io::BufWriter<File>,
    path: PathBuf,
    offset: u64,
    crc: crc32fast::Hasher,
}

impl SegmentWriter {
    fn create(path: PathBuf) -> Result<Self, ExecError> {
        let file = File::create(&path).map_err(|e| io_error("create", &path, e))?;
        Ok(SegmentWriter {
            file: std::io::BufWriter::with_capacity(1 << 20, file),
            path,
            offset: 0,
            crc: crc32fast::Hasher::new(),
        })
    }

    /// Writes `bytes`, returning `[offset, length]`.
    fn segment(&mut self, bytes: &[u8]) -> Result<Value, ExecError> {
        self.file
            .write_all(bytes)
            .map_err(|e| io_error("write", &self.path, e))?;
        self.crc.update(bytes);
        let at = self.offset;
        self.offset += bytes.len() as u64;
        Ok(json!([at, bytes.len()]))
    }

    fn operators(
        &mut self,
        chain: &[OperatorSnapshot],
        uids: &[NodeUid],
    ) -> Result<Value, ExecError> {
        let mut out = Vec::new();
        for (position, op) in chain.iter().enumerate() {
            if op.is_empty() || position >= uids.len() {
                continue;
            }
            let mut keyed = Vec::new();
            for (group, bytes) in &op.keyed {
                let at = self.segment(bytes)?;
                keyed.push(json!([group, at[0], at[1]]));
            }
            if let Some(frozen) = &op.frozen {
                frozen.write(&mut |group, bytes| {
                    let at = self.segment(bytes)?;
                    keyed.push(json!([group, at[0], at[1]]));
                    Ok(())
                })?;
            }
            let instance = match &op.instance {
                Some(bytes) => self.segment(bytes)?,
                None => Value::Null,
            };
            out.push(json!({
                "key": operator_key(uids, position),
                "line": uids[position].line,
                "keyed": keyed,
                "instance": instance,
            }));
        }
        Ok(Value::Array(out))
    }

    /// Flushes and syncs the file: its name, length and CRC for the metadata.
    fn finish(self) -> Result<(String, Value), ExecError> {
        let file = self
            .file
            .into_inner()
            .map_err(|e| io_error("write", &self.path, e.into_error()))?;
        file.sync_all()
            .map_err(|e| io_error("sync", &self.path, e))?;
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok((
            name,
            json!({"length": self.offset, "crc32": self.crc.finalize()}),
        ))
    }
}

fn sync_dir(dir: &Path) -> Result<(), ExecError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error("sync", dir, e))
}

/// Writes checkpoint `info.id` into `dir` (`<job dir>/chk-<n>`, or a savepoint's directory):
/// the state files, then `_metadata`. Returns the directory once it is durable.
pub fn write_checkpoint(
    dir: &Path,
    info: &CheckpointInfo,
    states: &BTreeMap<Participant, ParticipantState>,
    graph: &GraphUids,
    savepoint: bool,
) -> Result<PathBuf, ExecError> {
    let dir = dir.to_path_buf();
    std::fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, e))?;
    if let Some(parent) = dir.parent() {
        sync_dir(parent)?;
    }
    let mut files = serde_json::Map::new();
    let mut tasks: BTreeMap<usize, Vec<Value>> = BTreeMap::new();
    let mut sources: BTreeMap<usize, Vec<Value>> = BTreeMap::new();
    let mut sink = Value::Null;
    for (participant, state) in states {
        match (participant, state) {
            (Participant::Task { vertex, instance }, ParticipantState::Task(task)) => {
                let uids = graph.tasks.get(*vertex).map_or(&[][..], |(_, u)| u);
                let mut w = SegmentWriter::create(dir.join(format!("task-{vertex}-{instance}")))?;
                let operators = w.operators(&task.chain, uids)?;
                let (name, file) = w.finish()?;
                files.insert(name.clone(), file);
                tasks.entry(*vertex).or_default().push(json!({
                    "instance": instance,
                    "file": name,
                    "watermark": task.watermark,
                    "sync_ms": task.sync_micros as f64 / 1000.0,
                    "operators": operators,
                }));
            }
            (Participant::Split { group, index }, ParticipantState::Split(split)) => {
                let uids = graph
                    .sources
                    .get(*group)
                    .map(|u| u.all())
                    .unwrap_or_default();
                let uids = uids.as_slice();
                let mut w = SegmentWriter::create(dir.join(format!("split-{group}-{index}")))?;
                let position = match &split.position {
                    Some(bytes) => w.segment(bytes)?,
                    None => Value::Null,
                };
                let operators = w.operators(&split.chain, uids)?;
                let (name, file) = w.finish()?;
                files.insert(name.clone(), file);
                sources.entry(*group).or_default().push(json!({
                    "name": split.name,
                    "status": split.status.name(),
                    "file": name,
                    "position": position,
                    "watermark": split.watermark,
                    "idle": split.idle,
                    "operators": operators,
                }));
            }
            (Participant::Sink, ParticipantState::Sink(bytes)) => {
                let mut w = SegmentWriter::create(dir.join("sink"))?;
                let at = w.segment(bytes)?;
                let (name, file) = w.finish()?;
                files.insert(name.clone(), file);
                sink = json!({"file": name, "state": at});
            }
            _ => {
                return Err(ExecError::Internal(format!(
                    "checkpoint {}: {participant:?} handed in another participant's state",
                    info.id
                )));
            }
        }
    }
    let tasks: Vec<Value> = tasks
        .into_iter()
        .map(|(vertex, instances)| {
            let (name, uids) = graph
                .tasks
                .get(vertex)
                .map_or(("", &[][..]), |(n, u)| (n.as_str(), u.as_slice()));
            json!({
                "name": name,
                "key": vertex_key(uids, vertex),
                "instances": instances,
            })
        })
        .collect();
    let sources: Vec<Value> = sources
        .into_iter()
        .map(|(group, splits)| {
            let scan = graph.sources.get(group).map(|u| &u.scan);
            json!({
                "scan": scan.map(|u| u.uid.to_string()),
                "line": scan.map(|u| u.line.clone()),
                "splits": splits,
            })
        })
        .collect();
    let metadata = json!({
        "format": FORMAT,
        "tideline": env!("CARGO_PKG_VERSION"),
        "job_id": info.job_id,
        "job_name": info.job_name,
        "checkpoint": info.id,
        "kind": if savepoint { "savepoint" } else { "checkpoint" },
        "triggered_at": info.triggered_at_ms,
        "max_parallelism": graph.max_parallelism,
        "files": files,
        "tasks": tasks,
        "sources": sources,
        "sink": sink,
    });
    let temporary = dir.join("._metadata.inprogress");
    let text = serde_json::to_vec_pretty(&metadata)
        .map_err(|e| ExecError::Internal(format!("checkpoint metadata: {e}")))?;
    let mut file = File::create(&temporary).map_err(|e| io_error("create", &temporary, e))?;
    file.write_all(&text)
        .and_then(|()| file.sync_all())
        .map_err(|e| io_error("write", &temporary, e))?;
    drop(file);
    let target = dir.join(METADATA);
    std::fs::rename(&temporary, &target).map_err(|e| io_error("rename", &temporary, e))?;
    sync_dir(&dir)?;
    Ok(dir)
}

/// The completed checkpoints under `job_dir`, oldest first.
pub fn completed_checkpoints(job_dir: &Path) -> Vec<(u64, PathBuf)> {
    let mut found: Vec<(u64, PathBuf)> = std::fs::read_dir(job_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let id = name.to_str()?.strip_prefix("chk-")?.parse().ok()?;
            let path = entry.path();
            path.join(METADATA).is_file().then_some((id, path))
        })
        .collect();
    found.sort();
    found
}

/// Deletes the completed checkpoints beyond the newest `retained`, and every incomplete one
/// older than `latest` (a checkpoint the job gave up or a crash left).
pub fn apply_retention(job_dir: &Path, latest: u64, retained: usize) {
    let completed = completed_checkpoints(job_dir);
    let keep: Vec<u64> = completed
        .iter()
        .rev()
        .take(retained.max(1))
        .map(|(id, _)| *id)
        .collect();
    for entry in std::fs::read_dir(job_dir).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let Some(id) = name
            .to_str()
            .and_then(|n| n.strip_prefix("chk-"))
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        if id <= latest && !keep.contains(&id) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// One operator's state in a checkpoint, as its `_metadata` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorSize {
    /// Its uid (what a restore matches it by).
    pub uid: String,
    /// Its line in the plan it was taken from.
    pub line: String,
    /// Bytes of keyed and instance state, over every instance.
    pub bytes: u64,
    /// Key groups holding state.
    pub key_groups: usize,
}

/// The stateful operators of the checkpoint in `dir`, in the order of its tasks, read from
/// its `_metadata` alone (EXPLAIN's state section, docs/design/0008 §7).
pub fn operator_sizes(dir: &Path) -> Result<Vec<OperatorSize>, ExecError> {
    let path = dir.join(METADATA);
    let text = std::fs::read(&path).map_err(|e| io_error("read", &path, e))?;
    let metadata: Value = serde_json::from_slice(&text)
        .map_err(|e| ExecError::Checkpoint(format!("'{}' does not parse: {e}", path.display())))?;
    let mut sizes: Vec<(OperatorSize, std::collections::BTreeSet<u64>)> = Vec::new();
    let instances = metadata["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["instances"].as_array().into_iter().flatten());
    for instance in instances {
        for op in instance["operators"].as_array().into_iter().flatten() {
            let key = op["key"].as_str().unwrap_or_default();
            // The key is `<uid>-<occurrence in the chain>`.
            let uid = key.rsplit_once('-').map_or(key, |(uid, _)| uid);
            let at = match sizes.iter().position(|(s, _)| s.uid == uid) {
                Some(at) => at,
                None => {
                    sizes.push((
                        OperatorSize {
                            uid: uid.to_string(),
                            line: op["line"].as_str().unwrap_or_default().to_string(),
                            bytes: 0,
                            key_groups: 0,
                        },
                        Default::default(),
                    ));
                    sizes.len() - 1
                }
            };
            let (size, groups) = &mut sizes[at];
            for part in op["keyed"].as_array().into_iter().flatten() {
                size.bytes += part[2].as_u64().unwrap_or(0);
                groups.insert(part[0].as_u64().unwrap_or(0));
            }
            size.bytes += op["instance"][1].as_u64().unwrap_or(0);
        }
    }
    Ok(sizes
        .into_iter()
        .map(|(mut size, groups)| {
            size.key_groups = groups.len();
            size
        })
        .collect())
}

/// Reads the checkpoint at `path` (its directory or its `_metadata`, `file://` allowed):
/// every state file checked against its length and CRC before any state is handed out.
pub fn read_checkpoint(path: &str) -> Result<RestoredState, ExecError> {
    let given = PathBuf::from(path.strip_prefix("file://").unwrap_or(path));
    let dir = if given.file_name().is_some_and(|n| n == METADATA) {
        given.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        given
    };
    let refuse = |why: String| {
        ExecError::Checkpoint(format!("cannot restore from '{}': {why}", dir.display()))
    };
    if !dir.is_dir() {
        return Err(refuse("no such directory".into()));
    }
    let text = std::fs::read(dir.join(METADATA)).map_err(|_| {
        refuse("it has no _metadata (the checkpoint was not complete when its job stopped)".into())
    })?;
    let metadata: Value = serde_json::from_slice(&text)
        .map_err(|e| refuse(format!("its _metadata does not parse: {e}")))?;
    let bad = |what: &str| refuse(format!("its _metadata is malformed ({what})"));
    let format = metadata["format"].as_u64().ok_or_else(|| bad("format"))?;
    if format > FORMAT {
        return Err(refuse(format!(
            "it was written in layout {format} by a later Tideline ({}); this one reads up to {FORMAT}",
            metadata["tideline"].as_str().unwrap_or("?")
        )));
    }
    // Every file, checked whole.
    let mut files: BTreeMap<String, Arc<StateFile>> = BTreeMap::new();
    for (name, entry) in metadata["files"].as_object().ok_or_else(|| bad("files"))? {
        if name.contains('/') || name.starts_with('.') {
            return Err(bad("a file name"));
        }
        let bytes = StateFile::open(&dir.join(name))
            .map_err(|e| refuse(format!("its state file {name} cannot be read: {e}")))?;
        let length = entry["length"].as_u64().ok_or_else(|| bad("a length"))?;
        if bytes.len() as u64 != length {
            return Err(refuse(format!(
                "its state file {name} holds {} bytes where {length} were written (truncated or altered)",
                bytes.len()
            )));
        }
        if u64::from(crc32fast::hash(&bytes)) != entry["crc32"].as_u64().unwrap_or(u64::MAX) {
            return Err(refuse(format!(
                "its state file {name} does not match its checksum (altered)"
            )));
        }
        files.insert(name.clone(), Arc::new(bytes));
    }
    // A piece of a file, shared, not copied: a large state is held once, as read.
    let shared = |file: &str, at: &Value| -> Result<Segment, ExecError> {
        let bytes = files.get(file).ok_or_else(|| bad("a state file"))?;
        let (offset, len) = (at[0].as_u64(), at[1].as_u64());
        let (Some(offset), Some(len)) = (offset, len) else {
            return Err(bad("a segment"));
        };
        let (start, end) = (offset as usize, offset.saturating_add(len) as usize);
        if start > end || end > bytes.len() {
            return Err(bad("a segment beyond its file"));
        }
        Ok(Segment {
            file: Arc::clone(bytes),
            start,
            end,
        })
    };
    let segment = |file: &str, at: &Value| shared(file, at).map(|s| s.to_vec());
    let mut restored = RestoredState {
        path: dir.clone(),
        checkpoint: metadata["checkpoint"]
            .as_u64()
            .ok_or_else(|| bad("checkpoint"))?,
        max_parallelism: metadata["max_parallelism"]
            .as_u64()
            .ok_or_else(|| bad("max_parallelism"))? as u32,
        ..RestoredState::default()
    };
    // A task's operators go `into` the operators by key; a split's chain (`split_chain`)
    // is its own, returned.
    let read_operators = |file: &str,
                          operators: &Value,
                          into: &mut BTreeMap<String, RestoredOperator>,
                          split_chain: bool|
     -> Result<Vec<OperatorSnapshot>, ExecError> {
        let mut chain = Vec::new();
        for op in operators.as_array().ok_or_else(|| bad("operators"))? {
            let key = op["key"].as_str().ok_or_else(|| bad("an operator key"))?;
            let entry = into.entry(key.to_string()).or_default();
            entry.line = op["line"].as_str().unwrap_or_default().to_string();
            let mut snapshot = OperatorSnapshot::default();
            for g in op["keyed"].as_array().ok_or_else(|| bad("keyed"))? {
                let group = g[0].as_u64().ok_or_else(|| bad("a key group"))? as u32;
                let bytes = shared(file, &json!([g[1], g[2]]))?;
                if split_chain {
                    snapshot.keyed.push((group, bytes.to_vec()));
                } else {
                    entry.keyed.push((group, bytes));
                }
            }
            if !op["instance"].is_null() {
                let bytes = segment(file, &op["instance"])?;
                entry.instance_parts.push(bytes.clone());
                snapshot.instance = Some(bytes);
            }
            chain.push(snapshot);
        }
        Ok(chain)
    };
    let mut operators = BTreeMap::new();
    for task in metadata["tasks"].as_array().ok_or_else(|| bad("tasks"))? {
        let key = task["key"].as_str().ok_or_else(|| bad("a task key"))?;
        let mut watermark = i64::MAX;
        for instance in task["instances"]
            .as_array()
            .ok_or_else(|| bad("instances"))?
        {
            let file = instance["file"].as_str().ok_or_else(|| bad("a file"))?;
            read_operators(file, &instance["operators"], &mut operators, false)?;
            // Instances saw the same watermarks; the least is the safe one.
            watermark = watermark.min(instance["watermark"].as_i64().unwrap_or(i64::MIN));
        }
        restored.watermarks.insert(key.to_string(), watermark);
    }
    for source in metadata["sources"]
        .as_array()
        .ok_or_else(|| bad("sources"))?
    {
        let scan = source["scan"].as_str().unwrap_or_default().to_string();
        for split in source["splits"].as_array().ok_or_else(|| bad("splits"))? {
            let file = split["file"].as_str().ok_or_else(|| bad("a file"))?;
            let name = split["name"].as_str().ok_or_else(|| bad("a split name"))?;
            let status = split["status"]
                .as_str()
                .and_then(SplitStatus::parse)
                .ok_or_else(|| bad("a split status"))?;
            let position = match &split["position"] {
                Value::Null => None,
                at => Some(segment(file, at)?),
            };
            // A split's chain is its own (every split has one): not shared by uid.
            let chain = read_operators(file, &split["operators"], &mut BTreeMap::new(), true)?;
            restored.splits.insert(
                (scan.clone(), name.to_string()),
                SplitSnapshot {
                    name: name.to_string(),
                    status,
                    position,
                    watermark: split["watermark"].as_i64().unwrap_or(i64::MIN),
                    idle: split["idle"].as_bool().unwrap_or(false),
                    chain,
                },
            );
        }
    }
    if !metadata["sink"].is_null() {
        let file = metadata["sink"]["file"]
            .as_str()
            .ok_or_else(|| bad("the sink's file"))?;
        restored.sink = Some(segment(file, &metadata["sink"]["state"])?);
    }
    restored.operators = operators.into_iter().collect();
    Ok(restored)
}
