//! Jobs in the background of the client (docs/design/0008 §8): with `table.dml-sync` false
//! an INSERT returns its job id at once; `SHOW JOBS` lists it; `STOP JOB … WITH SAVEPOINT
//! WITH DRAIN` leaves a savepoint that a new INSERT restores from, with every row committed
//! exactly once; a script's SELECT sees what its earlier INSERT wrote.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tideline::client::background::{Emit, background};
use tideline::client::{Session, run_script};

fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tideline-jobs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A session running INSERTs in the background, their printed rows kept in the returned
/// buffer.
fn session(in_order: bool) -> (Session, Arc<Mutex<Vec<u8>>>) {
    let printed = Arc::new(Mutex::new(Vec::new()));
    let sink = printed.clone();
    let emit: Emit = Arc::new(move |bytes| {
        sink.lock().unwrap().extend_from_slice(bytes);
        Ok(())
    });
    let mut session = Session::default();
    session.background = Some(background(emit, in_order));
    (session, printed)
}

fn run(session: &mut Session, script: &str) -> String {
    let mut out = Vec::new();
    assert!(
        run_script(session, script, &mut out),
        "{script} failed:\n{}",
        String::from_utf8_lossy(&out)
    );
    String::from_utf8(out).unwrap()
}

/// The lines of the visible files under `dir` (hidden and in-progress parts are not output).
fn committed_lines(dir: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with('.') && !name.starts_with('_') {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            lines.extend(text.lines().map(str::to_string));
        }
    }
    lines.sort();
    lines
}

fn ids(lines: &[String]) -> Vec<u64> {
    let mut ids: Vec<u64> = lines
        .iter()
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    ids.sort_unstable();
    ids
}

const ROWS: u64 = 30_000;

fn tables(dir: &Path) -> String {
    format!(
        "SET 'execution.checkpointing.interval' = '300 ms';
         SET 'execution.checkpointing.dir' = '{dir}/checkpoints';
         SET 'state.savepoints.dir' = 'file://{dir}/savepoints';
         CREATE TABLE src (id BIGINT, k INT) WITH ('connector' = 'datagen',
           'rows-per-second' = '10000', 'number-of-rows' = '{ROWS}',
           'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{ROWS}',
           'fields.k.min' = '1', 'fields.k.max' = '9');
         CREATE TABLE out (id BIGINT, k INT) WITH ('connector' = 'filesystem',
           'path' = '{dir}/out', 'format' = 'csv', 'sink.rolling-policy.file-size' = '4kb');",
        dir = dir.display()
    )
}

fn job_id(printed: &str) -> String {
    let line = printed
        .lines()
        .find_map(|l| l.strip_prefix("Job ID: "))
        .unwrap_or_else(|| panic!("no job id in:\n{printed}"));
    assert_eq!(line.len(), 32, "{line}");
    line.to_string()
}

#[test]
fn a_job_stopped_with_a_savepoint_goes_on_from_it_with_every_row_once() {
    let dir = workdir("savepoint");
    let (mut session, _) = session(false);
    run(&mut session, &tables(&dir));
    let submitted = run(&mut session, "INSERT INTO out SELECT id, k FROM src;");
    assert!(
        submitted.contains(
            "[INFO] SQL update statement has been successfully submitted to the cluster:"
        ),
        "{submitted}"
    );
    let id = job_id(&submitted);
    std::thread::sleep(Duration::from_millis(1200));
    let jobs = run(&mut session, "SHOW JOBS;");
    assert!(jobs.contains(&id) && jobs.contains("RUNNING"), "{jobs}");
    assert!(
        jobs.contains("insert-into_default_catalog.default_database.out"),
        "{jobs}"
    );

    let stopped = run(
        &mut session,
        &format!("STOP JOB '{id}' WITH SAVEPOINT WITH DRAIN;"),
    );
    assert!(stopped.contains("savepoint path"), "{stopped}");
    let path = stopped
        .lines()
        .find_map(|l| l.split("file:").nth(1))
        .map(|p| p.trim_end_matches(['|', ' ']).to_string())
        .unwrap_or_else(|| panic!("no savepoint path in:\n{stopped}"));
    let name = Path::new(&path).file_name().unwrap().to_string_lossy();
    assert!(
        name.starts_with(&format!("savepoint-{}-", &id[..6])),
        "{path}"
    );
    let metadata = std::fs::read_to_string(Path::new(&path).join("_metadata")).unwrap();
    assert!(metadata.contains("\"kind\": \"savepoint\""), "{metadata}");
    let jobs = run(&mut session, "SHOW JOBS;");
    assert!(jobs.contains("CANCELED"), "{jobs}");

    // What the savepoint covers is committed, and only once; the job was stopped midway.
    let first = ids(&committed_lines(&dir.join("out")));
    assert!(
        !first.is_empty() && (first.len() as u64) < ROWS,
        "{}",
        first.len()
    );
    assert_eq!(first, (1..=first.len() as u64).collect::<Vec<_>>());

    run(
        &mut session,
        &format!(
            "SET 'execution.state-recovery.path' = '{path}';
             INSERT INTO out SELECT id, k FROM src;"
        ),
    );
    assert!(session.wait_for_jobs().is_empty());
    let all = ids(&committed_lines(&dir.join("out")));
    assert_eq!(all, (1..=ROWS).collect::<Vec<_>>());
    let jobs = run(&mut session, "SHOW JOBS;");
    assert!(
        jobs.contains("FINISHED") && jobs.contains("CANCELED"),
        "{jobs}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stop_job_refuses_what_it_cannot_do() {
    let dir = workdir("refusals");
    let (mut session, _) = session(false);
    let mut out = Vec::new();
    assert!(!run_script(
        &mut session,
        "STOP JOB 'abc' WITH DRAIN;",
        &mut out
    ));
    assert!(!run_script(&mut session, "STOP JOB 'abc';", &mut out));
    // Without checkpoints there is no savepoint to take; the job runs on.
    run(
        &mut session,
        &format!(
            "SET 'state.savepoints.dir' = '{}';
             CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
             CREATE TABLE out (id BIGINT) WITH ('connector' = 'blackhole');",
            dir.display()
        ),
    );
    let id = job_id(&run(&mut session, "INSERT INTO out SELECT id FROM src;"));
    assert!(!run_script(
        &mut session,
        &format!("STOP JOB '{id}' WITH SAVEPOINT;"),
        &mut out
    ));
    assert!(run(&mut session, "SHOW JOBS;").contains("RUNNING"));
    run(&mut session, &format!("STOP JOB '{id}';"));
    assert!(run(&mut session, "SHOW JOBS;").contains("CANCELED"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_scripts_query_sees_what_its_earlier_insert_wrote() {
    let dir = workdir("in-order");
    let (mut session, printed) = session(true);
    let out = run(
        &mut session,
        &format!(
            "SET 'sql-client.execution.result-mode' = 'tableau';
             CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '5000',
               'rows-per-second' = '20000',
               'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '5000');
             CREATE TABLE files (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}',
               'format' = 'csv');
             CREATE TABLE shown (id BIGINT) WITH ('connector' = 'print');
             INSERT INTO files SELECT id FROM src;
             INSERT INTO shown SELECT id FROM src WHERE id <= 3;
             SET 'execution.runtime-mode' = 'batch';
             SELECT COUNT(*) AS c, SUM(id) AS s FROM files;
             SET 'execution.runtime-mode' = 'streaming';
             INSERT INTO files SELECT id FROM src;
             SET 'execution.runtime-mode' = 'batch';
             CREATE TABLE same_files (id BIGINT) WITH ('connector' = 'filesystem',
               'path' = 'file://{}/', 'format' = 'csv');
             SELECT COUNT(*) AS c2, SUM(id) AS s2 FROM same_files;",
            dir.join("files").display(),
            dir.join("files").display()
        ),
    );
    assert!(out.contains("| 5000 | 12502500 |"), "{out}");
    // A table over the same directory waits for the job that writes it through another.
    assert!(out.contains("| 10000 | 25005000 |"), "{out}");
    assert!(session.wait_for_jobs().is_empty());
    let shown = String::from_utf8(printed.lock().unwrap().clone()).unwrap();
    let mut rows: Vec<&str> = shown.lines().collect();
    rows.sort_unstable();
    assert_eq!(rows, ["+I[1]", "+I[2]", "+I[3]"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stopping_with_drain_fires_the_windows_still_open() {
    let dir = workdir("drain");
    let (mut session, _) = session(false);
    // Event time is the id in milliseconds, 2000 ids a second: the first 10 s window needs
    // 5 s of reading to close, so without the drain nothing would be emitted before the stop.
    run(
        &mut session,
        &format!(
            "SET 'execution.checkpointing.interval' = '200 ms';
             SET 'execution.checkpointing.dir' = '{dir}/checkpoints';
             SET 'state.savepoints.dir' = '{dir}/savepoints';
             CREATE TABLE src (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id, 3),
               WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen',
               'rows-per-second' = '2000', 'number-of-rows' = '100000',
               'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100000');
             CREATE TABLE out (c BIGINT, m BIGINT) WITH ('connector' = 'filesystem',
               'path' = '{dir}/out', 'format' = 'csv');",
            dir = dir.display()
        ),
    );
    let id = job_id(&run(
        &mut session,
        "INSERT INTO out SELECT COUNT(*), MAX(id) FROM TABLE(
           TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND))
         GROUP BY window_start, window_end;",
    ));
    std::thread::sleep(Duration::from_millis(1500));
    let stopped = run(
        &mut session,
        &format!("STOP JOB '{id}' WITH SAVEPOINT WITH DRAIN;"),
    );
    assert!(stopped.contains("savepoint path"), "{stopped}");
    // One window, fired by the drain, holding every id read: 1..m.
    let lines = committed_lines(&dir.join("out"));
    assert_eq!(lines.len(), 1, "{lines:?}");
    let (c, m) = lines[0].split_once(',').unwrap();
    let (c, m): (u64, u64) = (c.parse().unwrap(), m.parse().unwrap());
    assert!(c > 0 && c < 10_000 && c == m, "{lines:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// With checkpointing on, EXPLAIN of an INSERT ends with the state each stateful operator
/// held in the last checkpoint of the job of that name, and says which the explained plan
/// no longer has; before any checkpoint, it says there is none.
#[test]
fn explain_shows_the_state_in_the_jobs_last_checkpoint() {
    let dir = workdir("explain");
    let mut session = Session::default();
    let setup = format!(
        "SET 'execution.checkpointing.interval' = '100 ms';
         SET 'execution.checkpointing.dir' = '{}/checkpoints';
         CREATE TABLE src (id BIGINT, v INT, k AS id % 100) WITH ('connector' = 'datagen',
           'rows-per-second' = '20000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',
           'fields.id.end' = '6000', 'fields.v.min' = '0', 'fields.v.max' = '9');
         CREATE TABLE snk (k BIGINT, c BIGINT, s INT) WITH ('connector' = 'blackhole');",
        dir.display()
    );
    run(&mut session, &setup);
    let query = "INSERT INTO snk SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;";
    let before = run(&mut session, &format!("EXPLAIN {query}"));
    assert!(
        before.contains("== State in the Last Checkpoint ==\nno completed checkpoint of job 'insert-into_default_catalog.default_database.snk'"),
        "{before}"
    );
    run(&mut session, query);
    let after = run(&mut session, &format!("EXPLAIN {query}"));
    let section = after
        .split("== State in the Last Checkpoint ==\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{after}"));
    let line = section
        .lines()
        .find(|l| l.starts_with("GroupAggregate(groupBy=[k]"))
        .unwrap_or_else(|| panic!("{section}"));
    assert!(
        line.contains(" KB in ") && !line.contains("not in this plan"),
        "{line}"
    );
    let changed = run(
        &mut session,
        "EXPLAIN INSERT INTO snk SELECT k, COUNT(*), MAX(v) FROM src GROUP BY k;",
    );
    assert!(
        changed.contains("(not in this plan: a restore would refuse it)"),
        "{changed}"
    );
    // Off: no section.
    let off = run(
        &mut session,
        &format!("RESET 'execution.checkpointing.interval'; EXPLAIN {query}"),
    );
    assert!(!off.contains("State in the Last Checkpoint"), "{off}");
    let _ = std::fs::remove_dir_all(&dir);
}
