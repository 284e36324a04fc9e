//! An INSERT job's checkpointing and restore options (docs/design/0008), read by Flink 2's
//! names with the 1.x names accepted: `execution.checkpointing.interval` turns checkpoints
//! on, `execution.state-recovery.path` restores the next jobs from a checkpoint.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::{Session, StatementError};
use crate::runtime::checkpoint::storage::read_checkpoint;
use crate::runtime::checkpoint::{CheckpointConfig, RestoredState, check_restore};
use crate::runtime::graph::JobGraph;

pub const CHECKPOINT_INTERVAL: &str = "execution.checkpointing.interval";
const CHECKPOINT_DIR: [&str; 2] = ["execution.checkpointing.dir", "state.checkpoints.dir"];
const NUM_RETAINED: [&str; 2] = [
    "execution.checkpointing.num-retained",
    "state.checkpoints.num-retained",
];
const TIMEOUT: &str = "execution.checkpointing.timeout";
const MIN_PAUSE: &str = "execution.checkpointing.min-pause";
const PIPELINE_NAME: &str = "pipeline.name";
const SAVEPOINT_DIR: [&str; 2] = [
    "execution.checkpointing.savepoint-dir",
    "state.savepoints.dir",
];
const RECOVERY_PATH: [&str; 2] = ["execution.state-recovery.path", "execution.savepoint.path"];
const IGNORE_UNCLAIMED: [&str; 2] = [
    "execution.state-recovery.ignore-unclaimed-state",
    "execution.savepoint.ignore-unclaimed-state",
];

impl Session {
    /// The first of `keys` that is set.
    fn option_of<'k>(&self, keys: &[&'k str]) -> Option<(&'k str, &str)> {
        keys.iter()
            .find_map(|k| self.options.get(*k).map(|v| (*k, v.as_str())))
    }

    fn duration_of(&self, key: &str) -> Result<Option<Duration>, StatementError> {
        self.options
            .get(key)
            .map(|text| {
                crate::types::option_value::parse_duration(text)
                    .filter(|nanos| *nanos >= 0)
                    .map(|nanos| Duration::from_nanos(nanos as u64))
                    .ok_or_else(|| {
                        StatementError::Job(format!(
                            "Could not parse value '{text}' for key '{key}'."
                        ))
                    })
            })
            .transpose()
    }

    /// `state.savepoints.dir` (Flink 2: `execution.checkpointing.savepoint-dir`), where
    /// `STOP JOB … WITH SAVEPOINT` writes; the name to set when neither is.
    pub(super) fn savepoint_dir(&self) -> Result<PathBuf, &'static str> {
        self.option_of(&SAVEPOINT_DIR)
            .map(|(_, dir)| local_path(dir))
            .ok_or(SAVEPOINT_DIR[0])
    }

    /// An INSERT job's name: `pipeline.name`, or Flink's `insert-into_<table's full name>`
    /// (the names of a statement set's tables after one another, comma-separated).
    pub(super) fn job_name(&self, tables: &[&str]) -> String {
        self.options.get(PIPELINE_NAME).cloned().unwrap_or_else(|| {
            let names: Vec<String> = tables
                .iter()
                .map(|t| format!("default_catalog.default_database.{t}"))
                .collect();
            format!("insert-into_{}", names.join(","))
        })
    }

    /// Checkpointing for the INSERT job `job_id` named `job_name`, when
    /// `execution.checkpointing.interval` is set (streaming mode only, as Flink's batch jobs
    /// take none).
    pub(super) fn checkpoint_config(
        &self,
        job_id: &str,
        job_name: &str,
    ) -> Result<Option<CheckpointConfig>, StatementError> {
        let Some(interval) = self.duration_of(CHECKPOINT_INTERVAL)? else {
            return Ok(None);
        };
        if self.batch_mode() || interval.is_zero() {
            return Ok(None);
        }
        let Some((_, dir)) = self.option_of(&CHECKPOINT_DIR) else {
            return Err(StatementError::Job(format!(
                "checkpointing is on ('{CHECKPOINT_INTERVAL}' = '{}') but no checkpoint directory is set: SET '{}' = '<path>'",
                self.options[CHECKPOINT_INTERVAL], CHECKPOINT_DIR[0]
            )));
        };
        let num_retained = match self.option_of(&NUM_RETAINED) {
            None => 1,
            Some((key, text)) => match text.trim().parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return Err(StatementError::Job(format!(
                        "Could not parse value '{text}' for key '{key}' (expected a positive integer)."
                    )));
                }
            },
        };
        Ok(Some(CheckpointConfig {
            interval,
            dir: local_path(dir),
            num_retained,
            timeout: self
                .duration_of(TIMEOUT)?
                .unwrap_or(Duration::from_secs(600)),
            min_pause: self.duration_of(MIN_PAUSE)?.unwrap_or_default(),
            job_name: job_name.to_string(),
            job_id: job_id.to_string(),
        }))
    }

    /// The checkpoint an INSERT's job restores from (`execution.state-recovery.path`), read
    /// and matched against the job's graph; a directory that is incomplete, corrupt or does
    /// not fit the plan is refused before anything runs.
    pub(super) fn restore_state(
        &self,
        graph: &JobGraph,
        checkpoint: Option<&CheckpointConfig>,
    ) -> Result<Option<Arc<RestoredState>>, StatementError> {
        let path = match (self.option_of(&RECOVERY_PATH), checkpoint) {
            (Some((_, path)), _) => PathBuf::from(path),
            (None, Some(config)) if self.resume => {
                match newest_checkpoint_of(&config.dir, &config.job_name) {
                    Some(path) => {
                        eprintln!(
                            "[INFO] --resume: job '{}' goes on from {}",
                            config.job_name,
                            path.display()
                        );
                        path
                    }
                    None => {
                        eprintln!(
                            "[INFO] --resume: no completed checkpoint of job '{}' under {}: it starts from the beginning",
                            config.job_name,
                            config.dir.display()
                        );
                        return Ok(None);
                    }
                }
            }
            _ => return Ok(None),
        };
        let restored = read_checkpoint(&path.to_string_lossy())?;
        let ignore = self
            .option_of(&IGNORE_UNCLAIMED)
            .is_some_and(|(_, v)| v.eq_ignore_ascii_case("true"));
        check_restore(graph, &restored, ignore)?;
        Ok(Some(Arc::new(restored)))
    }
}

impl Session {
    /// EXPLAIN's section beyond Flink's (docs/design/0008 §7): with checkpointing on, each
    /// stateful operator's state in the newest completed checkpoint of the INSERT's job (by
    /// its name), marked where the explained plan no longer has the operator. `None` when
    /// checkpointing is off.
    pub(super) fn state_in_last_checkpoint(
        &self,
        table: &str,
        plan: &crate::plan::stream::StreamPlan,
    ) -> Result<Option<String>, StatementError> {
        let job_name = self.job_name(&[table]);
        let Some(config) = self.checkpoint_config("", &job_name)? else {
            return Ok(None);
        };
        let mut text = String::from("== State in the Last Checkpoint ==\n");
        let Some(path) = newest_checkpoint_of(&config.dir, &job_name) else {
            text += &format!(
                "no completed checkpoint of job '{job_name}' under {}\n",
                config.dir.display()
            );
            return Ok(Some(text));
        };
        let sizes = crate::runtime::checkpoint::storage::operator_sizes(&path)?;
        // The job's uids: those of the plan it runs, after scan reuse (`build_sinks`).
        let executed = crate::plan::stream::scan_reuse::reuse_scans(&[plan]);
        let uids: std::collections::HashSet<String> =
            crate::plan::stream::uid::operator_uids(&executed[0])
                .iter()
                .map(|u| u.uid.to_string())
                .collect();
        text += &format!("{}\n", path.display());
        if sizes.is_empty() {
            text += "no operator holds state\n";
        }
        for size in sizes {
            text += &format!(
                "{}: {} in {} key group{}{}\n",
                size.line,
                human_bytes(size.bytes),
                size.key_groups,
                if size.key_groups == 1 { "" } else { "s" },
                if uids.contains(&size.uid) {
                    ""
                } else {
                    " (not in this plan: a restore would refuse it)"
                }
            );
        }
        Ok(Some(text))
    }
}

/// Bytes for people: `512 B`, `1.50 KB`, `1.26 GB` (units of 1024, as Flink's web UI).
fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

/// A directory option's path: a local path, or a `file://` URI.
pub(super) fn local_path(text: &str) -> PathBuf {
    PathBuf::from(text.strip_prefix("file://").unwrap_or(text))
}

/// The newest completed checkpoint under `dir` (any job id) whose job had the name
/// `job_name`, by the time it was triggered.
fn newest_checkpoint_of(dir: &std::path::Path, job_name: &str) -> Option<PathBuf> {
    use crate::runtime::checkpoint::storage::{METADATA, completed_checkpoints};
    let mut newest: Option<(i64, PathBuf)> = None;
    for job in std::fs::read_dir(dir).ok()?.flatten() {
        for (_, path) in completed_checkpoints(&job.path()) {
            let Ok(text) = std::fs::read(path.join(METADATA)) else {
                continue;
            };
            let Ok(metadata) = serde_json::from_slice::<serde_json::Value>(&text) else {
                continue;
            };
            if metadata["job_name"].as_str() != Some(job_name) {
                continue;
            }
            let at = metadata["triggered_at"].as_i64().unwrap_or(i64::MIN);
            if newest.as_ref().is_none_or(|(t, _)| at > *t) {
                newest = Some((at, path));
            }
        }
    }
    newest.map(|(_, p)| p)
}
