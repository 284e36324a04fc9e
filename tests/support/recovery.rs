//! Jobs killed with SIGKILL and restored (docs/design/0008 §10), for the tests that need it
//! (`tests/recovery.rs`, `tests/kafka.rs`): a job with 100 ms checkpoints runs as a real
//! process, is killed at seeded random moments once it has completed a checkpoint of its
//! own, and is restarted from the newest completed checkpoint, at another parallelism each
//! time, until it finishes.

// Each test crate that includes this module uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A small deterministic generator for the kill moments (the seed is printed on failure).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % bound
    }
}

pub fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tideline-recovery-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `script` (with the options of `settings` first); killed, if `kill` says when: once
/// its condition holds (a checkpoint of this run completed), after its extra time.
pub type Kill<'a> = (&'a dyn Fn() -> bool, Duration);

pub fn run(dir: &Path, settings: &str, script: &str, kill: Option<Kill<'_>>) -> String {
    run_with(dir, settings, script, kill, &[])
}

pub fn run_with(
    dir: &Path,
    settings: &str,
    script: &str,
    kill: Option<Kill<'_>>,
    args: &[&str],
) -> String {
    run_process(dir, settings, script, kill, args).0
}

/// `run_with`, also saying whether the job ended by itself before it could be killed.
fn run_process(
    dir: &Path,
    settings: &str,
    script: &str,
    kill: Option<Kill<'_>>,
    args: &[&str],
) -> (String, bool) {
    let path = dir.join("job.sql");
    std::fs::write(&path, format!("{settings}{script}")).unwrap();
    // Into a file: a pipe nobody reads until the end would hold the job back.
    let printed = dir.join("stdout");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tideline"))
        .arg("-f")
        .arg(&path)
        .args(args)
        .env("TZ", "UTC")
        .stdout(std::fs::File::create(&printed).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut ended = false;
    if let Some((ready, extra)) = kill {
        let started = Instant::now();
        while !ready() && started.elapsed() < Duration::from_secs(20) {
            if child.try_wait().unwrap().is_some() {
                ended = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let ready_at = Instant::now();
        while !ended && ready_at.elapsed() < extra {
            ended = child.try_wait().unwrap().is_some();
            std::thread::sleep(Duration::from_millis(5));
        }
        // SIGKILL: nothing is flushed or cleaned up.
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    if kill.is_none() || ended {
        assert!(
            out.status.success(),
            "the job failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    (std::fs::read_to_string(&printed).unwrap(), ended)
}

/// The newest completed checkpoint under `checkpoints` (any job id).
pub fn newest_checkpoint(checkpoints: &Path) -> Option<PathBuf> {
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for job in std::fs::read_dir(checkpoints).ok()?.flatten() {
        for chk in std::fs::read_dir(job.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let metadata = chk.path().join("_metadata");
            if let Ok(m) = std::fs::metadata(&metadata) {
                found.push((m.modified().unwrap(), chk.path()));
            }
        }
    }
    found.into_iter().max().map(|(_, p)| p)
}

/// Runs `query` killed at random moments and restored each time, then to its end; returns
/// every run's output in order.
pub fn killed_and_restored(
    name: &str,
    query: &str,
    seed: u64,
    parallelisms: &[u32],
) -> Vec<String> {
    killed_and_restarted(name, query, seed, parallelisms, false)
}

/// The same, restarted either from the newest checkpoint's path or by `--resume`.
pub fn killed_and_restarted(
    name: &str,
    query: &str,
    seed: u64,
    parallelisms: &[u32],
    resume: bool,
) -> Vec<String> {
    let dir = workdir(name);
    let checkpoints = dir.join("chk");
    let mut rng = Lcg(seed);
    let mut outputs = Vec::new();
    let mut restore_from: Option<PathBuf> = None;
    for (i, parallelism) in parallelisms.iter().enumerate() {
        let mut settings = format!(
            "SET 'execution.checkpointing.interval' = '100 ms';\n\
             SET 'execution.checkpointing.dir' = '{}';\n\
             SET 'parallelism.default' = '{parallelism}';\n",
            checkpoints.display()
        );
        if let Some(path) = restore_from.as_ref().filter(|_| !resume) {
            settings += &format!(
                "SET 'execution.state-recovery.path' = '{}';\n",
                path.display()
            );
        }
        let last = i + 1 == parallelisms.len();
        // Killed once it has completed a checkpoint of its own, a random time later.
        let before = restore_from.clone();
        let ready = || newest_checkpoint(&checkpoints).is_some_and(|c| Some(&c) != before.as_ref());
        let kill = (!last).then(|| {
            (
                &ready as &dyn Fn() -> bool,
                Duration::from_millis(rng.next(600)),
            )
        });
        if std::env::var_os("TIDELINE_KEEP").is_some() {
            eprintln!("run {i}: {settings}");
        }
        let args: &[&str] = if resume { &["--resume"] } else { &[] };
        let (printed, ended) = run_process(&dir, &settings, query, kill, args);
        outputs.push(printed);
        if ended {
            // Finished before the kill: its output is whole, and a restore from an earlier
            // checkpoint would only repeat what it committed at its end.
            break;
        }
        if !last {
            let newest = newest_checkpoint(&checkpoints);
            assert!(
                newest.is_some() && newest != restore_from,
                "seed {seed}: run {i} completed no checkpoint before it was killed"
            );
            restore_from = newest;
        }
    }
    if std::env::var_os("TIDELINE_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    outputs
}

/// The lines of the visible files under `dir` (hidden and in-progress parts are not output).
pub fn committed_lines(dir: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name.starts_with('_') {
                continue;
            }
            if entry.path().is_dir() {
                dirs.push(entry.path());
            } else {
                let text = std::fs::read_to_string(entry.path()).unwrap();
                lines.extend(text.lines().map(str::to_string));
            }
        }
    }
    lines.sort();
    lines
}
