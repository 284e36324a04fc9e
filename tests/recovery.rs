//! Recovery through `kill -9` (docs/design/0008 §10): a job with 100 ms checkpoints runs as
//! a real process, is killed with SIGKILL at seeded random moments, and is restarted each
//! time from the newest completed checkpoint (`execution.state-recovery.path`), at another
//! parallelism each time, until it finishes. What it printed must give the results of the
//! same job run uninterrupted.
//!
//! The `print` sink is at-least-once (rows after the last checkpoint print again), so the
//! comparison is on results that a repeat cannot change: the final value of each key of an
//! updating aggregate, and the set of window results. Exactly-once committed output is
//! checked through the filesystem sink's two-phase commit and PostgreSQL's upserts. The
//! harness is tests/support/recovery.rs (tests/kafka.rs kills a job reading a topic).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

#[path = "support/postgres.rs"]
mod postgres_support;
#[path = "support/recovery.rs"]
mod recovery_support;
use recovery_support::{
    committed_lines, killed_and_restarted, killed_and_restored, newest_checkpoint, run, workdir,
};

/// Two datagen tables of `rows` rows each (ids 1.., event time 1 ms apart), read as one
/// UNION ALL so that tasks align two channels.
fn tables(rows: u64, rate: u64) -> String {
    let table = |name: &str, keys: (u32, u32)| {
        format!(
            "CREATE TABLE {name} (id BIGINT, k INT, ts AS TO_TIMESTAMP_LTZ(id, 3), \
             WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ('connector' = 'datagen', \
             'rows-per-second' = '{rate}', 'number-of-rows' = '{rows}', \
             'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{rows}', \
             'fields.k.min' = '{}', 'fields.k.max' = '{}');\n",
            keys.0, keys.1
        )
    };
    table("a", (1, 6)) + &table("b", (4, 9))
}

/// A file sink named `out` of `columns` writing `format` into `path`, rolling its part
/// files at `rolls_at` (small, so that checkpoints meet parts being rolled).
fn file_sink(columns: &str, format: &str, rolls_at: &str, path: &Path) -> String {
    named_file_sink("out", columns, format, rolls_at, path)
}

/// [`file_sink`] named `name`.
fn named_file_sink(name: &str, columns: &str, format: &str, rolls_at: &str, path: &Path) -> String {
    format!(
        "CREATE TABLE {name} ({columns}) WITH ('connector' = 'filesystem', 'path' = '{}', \
         'format' = '{format}', 'sink.rolling-policy.file-size' = '{rolls_at}');\n",
        path.display()
    )
}

/// The last value printed for each key (the first column), over the runs in order.
fn final_values(outputs: &[String]) -> BTreeMap<String, String> {
    let mut last = BTreeMap::new();
    for line in outputs.iter().flat_map(|o| o.lines()) {
        if let Some(row) = line
            .strip_prefix("+I[")
            .or_else(|| line.strip_prefix("+U["))
            .and_then(|r| r.strip_suffix(']'))
        {
            let (key, value) = row.split_once(", ").unwrap();
            last.insert(key.to_string(), value.to_string());
        }
    }
    last
}

const SINK: &str = "CREATE TABLE out (k INT, c BIGINT, s BIGINT) WITH ('connector' = 'print');\n";

#[test]
fn an_updating_group_by_killed_and_restored_ends_as_uninterrupted() {
    let query = tables(6_000, 3_000)
        + SINK
        + "INSERT INTO out SELECT k, COUNT(*), SUM(id) FROM (SELECT * FROM a UNION ALL SELECT * FROM b) GROUP BY k;\n";
    let golden = final_values(&[run(&workdir("golden-agg"), "", &query, None)]);
    assert_eq!(golden.len(), 9);
    for seed in [7, 11] {
        let outputs = killed_and_restored("agg", &query, seed, &[1, 2, 1, 2]);
        assert_eq!(final_values(&outputs), golden, "seed {seed}");
    }
}

#[test]
fn a_nexmark_source_killed_and_restored_goes_on_with_the_same_events() {
    // Paced to the wall clock (two seconds of events), so that kills land mid-run; the sums
    // of the random prices and reserves equal the uninterrupted run's only if each restored
    // split went on from its count, its random state, its seed and its base time.
    let query = "CREATE TABLE nx (event_type INT, \
                 auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>, \
                 bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>) \
                 WITH ('connector' = 'nexmark', 'events.num' = '6000', 'first-event.rate' = '3000', \
                 'max-emit-speed' = 'false', 'seed' = '5', 'base-time' = '2024-01-01 00:00:00');\n\
                 CREATE TABLE out (t INT, c BIGINT, s BIGINT) WITH ('connector' = 'print');\n\
                 INSERT INTO out SELECT event_type, COUNT(*), SUM(COALESCE(bid.price, auction.reserve, 0) + CHAR_LENGTH(COALESCE(bid.url, auction.itemName, ''))) FROM nx GROUP BY event_type;\n";
    let golden = final_values(&[run(&workdir("golden-nexmark"), "", query, None)]);
    assert_eq!(golden.len(), 3, "{golden:?}");
    for seed in [3, 13] {
        let outputs = killed_and_restored("nexmark", query, seed, &[1, 1, 1]);
        assert_eq!(final_values(&outputs), golden, "seed {seed}");
    }
}

#[test]
fn a_window_aggregate_killed_and_restored_loses_no_window() {
    let query = tables(6_000, 3_000)
        + "CREATE TABLE out (k INT, w TIMESTAMP(3), c BIGINT, s BIGINT) WITH ('connector' = 'print');\n"
        + "INSERT INTO out SELECT k, window_start, COUNT(*), SUM(id) FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end;\n";
    let rows = |outputs: &[String]| -> BTreeSet<String> {
        outputs
            .iter()
            .flat_map(|o| o.lines())
            .filter(|l| l.starts_with("+I["))
            .map(str::to_string)
            .collect()
    };
    let golden = rows(&[run(&workdir("golden-window"), "", &query, None)]);
    assert!(golden.len() >= 6 * 6, "{golden:?}");
    let outputs = killed_and_restored("window", &query, 3, &[2, 1, 2]);
    // At-least-once printing repeats a window at most; none may be missing or differ.
    assert_eq!(rows(&outputs), golden);
}

#[test]
fn an_early_firing_group_window_killed_and_restored_ends_as_uninterrupted() {
    // Every row fires its window early (an update each); a restored window must go on from
    // its state and the values it emitted last, so that its final value is the
    // uninterrupted run's.
    let query = "SET 'table.exec.emit.early-fire.enabled' = 'true';\n\
                 SET 'table.exec.emit.early-fire.delay' = '0 s';\n"
        .to_string()
        + &tables(6_000, 3_000)
        + "CREATE TABLE out (w STRING, c BIGINT, s BIGINT) WITH ('connector' = 'print');\n"
        + "INSERT INTO out SELECT CONCAT(CAST(k AS STRING), '@', CAST(TUMBLE_START(ts, INTERVAL '1' SECOND) AS STRING)), \
           COUNT(*), SUM(id) FROM (SELECT * FROM a UNION ALL SELECT * FROM b) GROUP BY k, TUMBLE(ts, INTERVAL '1' SECOND);\n";
    let golden = final_values(&[run(&workdir("golden-early"), "", &query, None)]);
    assert!(golden.len() >= 6 * 9, "{golden:?}");
    let outputs = killed_and_restored("early", &query, 5, &[2, 1, 2]);
    assert_eq!(final_values(&outputs), golden);
}

#[test]
fn a_half_written_or_altered_checkpoint_is_refused_before_any_row() {
    let dir = workdir("corrupt");
    let checkpoints = dir.join("chk");
    let query = tables(6_000, 3_000)
        + SINK
        + "INSERT INTO out SELECT k, COUNT(*), SUM(id) FROM (SELECT * FROM a UNION ALL SELECT * FROM b) GROUP BY k;\n";
    let settings = format!(
        "SET 'execution.checkpointing.interval' = '100 ms';\nSET 'execution.checkpointing.dir' = '{}';\n",
        checkpoints.display()
    );
    let ready = || newest_checkpoint(&checkpoints).is_some();
    run(&dir, &settings, &query, Some((&ready, Duration::ZERO)));
    let chk = newest_checkpoint(&checkpoints).expect("a checkpoint completed");
    let restore = |path: &Path| -> (bool, String) {
        let script = dir.join("restore.sql");
        let text = format!(
            "{settings}SET 'execution.state-recovery.path' = '{}';\n{query}",
            path.display()
        );
        std::fs::write(&script, text).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_tideline"))
            .arg("-f")
            .arg(&script)
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(!printed.contains("+I["), "rows came out: {printed}");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // A state file cut short.
    let state = std::fs::read_dir(&chk)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("task-")
                && std::fs::metadata(p).unwrap().len() > 0
        })
        .expect("a task's state file");
    let bytes = std::fs::read(&state).unwrap();
    std::fs::write(&state, &bytes[..bytes.len() - 1]).unwrap();
    let (ok, err) = restore(&chk);
    assert!(!ok && err.contains("truncated or altered"), "{err}");
    // The same length, one byte changed.
    let mut altered = bytes.clone();
    altered[0] ^= 1;
    std::fs::write(&state, &altered).unwrap();
    let (ok, err) = restore(&chk);
    assert!(!ok && err.contains("does not match its checksum"), "{err}");
    // No _metadata: the checkpoint never completed.
    std::fs::remove_file(chk.join("_metadata")).unwrap();
    let (ok, err) = restore(&chk);
    assert!(!ok && err.contains("has no _metadata"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_pass_through_into_files_commits_every_row_exactly_once() {
    // The second restarts by `tideline --resume` alone.
    for (seed, parallelisms, resume) in [(5, [1, 2, 1], false), (9, [2, 1, 2], true)] {
        let out = workdir(&format!("files-{seed}")).join("out");
        // Small parts that roll often, so that barriers meet rolled and open parts alike.
        let query = tables(6_000, 3_000)
            + &file_sink("id BIGINT, k INT", "csv", "2kb", &out)
            + "INSERT INTO out SELECT id, k FROM a UNION ALL SELECT id + 1000000, k FROM b;\n";
        killed_and_restarted(
            &format!("files-run-{seed}"),
            &query,
            seed,
            &parallelisms,
            resume,
        );
        let lines = committed_lines(&out);
        let mut ids: Vec<u64> = lines
            .iter()
            .map(|l| l.split(',').next().unwrap().parse().unwrap())
            .collect();
        ids.sort_unstable();
        let expected: Vec<u64> = (1..=6_000).chain(1_000_001..=1_006_000).collect();
        assert_eq!(
            ids.len(),
            expected.len(),
            "seed {seed}: rows lost or repeated"
        );
        assert_eq!(ids, expected, "seed {seed}");
        // Each restore deleted what the run before it wrote after its last barrier.
        let leftovers: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".inprogress"))
            .collect();
        assert!(leftovers.is_empty(), "seed {seed}: {leftovers:?}");
        let _ = std::fs::remove_dir_all(out.parent().unwrap());
    }
}

/// Applies the debezium-json changes in `lines` (`c` adds `after`, `d` removes `before`):
/// the table they leave, as sorted rows.
fn applied(lines: &[String]) -> Vec<String> {
    let mut rows: BTreeMap<String, i64> = BTreeMap::new();
    for line in lines {
        let change: serde_json::Value = serde_json::from_str(line).unwrap();
        let (row, delta) = match change["op"].as_str() {
            Some("c") => (&change["after"], 1),
            Some("d") => (&change["before"], -1),
            other => panic!("unexpected op {other:?} in {line}"),
        };
        *rows.entry(row.to_string()).or_default() += delta;
    }
    let mut out = Vec::new();
    for (row, n) in rows {
        assert!(n >= 0, "{row} deleted more often than added");
        out.extend(std::iter::repeat_n(row, n as usize));
    }
    out
}

/// The table the changes of `query` (given its output directory) leave in its committed
/// files: run uninterrupted, then killed at random moments and restored at `parallelisms`.
fn uninterrupted_and_restored_tables(
    name: &str,
    query: &dyn Fn(&Path) -> String,
    seed: u64,
    parallelisms: &[u32],
) -> (Vec<String>, Vec<String>) {
    let golden = workdir(&format!("golden-{name}")).join("out");
    run(golden.parent().unwrap(), "", &query(&golden), None);
    let out = workdir(&format!("{name}-out")).join("out");
    killed_and_restored(name, &query(&out), seed, parallelisms);
    (
        applied(&committed_lines(&golden)),
        applied(&committed_lines(&out)),
    )
}

#[test]
fn a_top_n_into_debezium_files_leaves_the_uninterrupted_table() {
    let query = |out: &Path| {
        tables(6_000, 3_000)
            + &file_sink("k INT, id BIGINT, rn BIGINT", "debezium-json", "4kb", out)
            + "INSERT INTO out SELECT k, id, rn FROM (SELECT k, id, ROW_NUMBER() OVER \
               (PARTITION BY k ORDER BY id DESC) AS rn FROM (SELECT * FROM a UNION ALL SELECT * FROM b)) \
               WHERE rn <= 2;\n"
    };
    let (golden, restored) = uninterrupted_and_restored_tables("topn", &query, 13, &[1, 2, 1]);
    assert_eq!(golden.len(), 18, "{golden:?}");
    assert_eq!(restored, golden);
}

/// Deduplication keeping the last row (updates) and the first row on event time (rows
/// waiting for the watermark), over 1,000 keys, killed at random moments and restored at
/// 1/2/1: the committed changes apply to the uninterrupted run's table.
#[test]
fn a_deduplication_into_debezium_files_leaves_the_uninterrupted_table() {
    for (order, name) in [("DESC", "dedup-last"), ("ASC", "dedup-first")] {
        let query = |out: &Path| {
            tables(6_000, 3_000)
                + &file_sink("g BIGINT, id BIGINT", "debezium-json", "4kb", out)
                + &format!(
                    "INSERT INTO out SELECT g, id FROM (SELECT g, id, ROW_NUMBER() OVER \
                     (PARTITION BY g ORDER BY ts {order}) AS rn FROM (SELECT MOD(id, 1000) AS g, id, ts FROM a \
                     UNION ALL SELECT MOD(id, 1000) AS g, id, ts FROM b)) WHERE rn = 1;\n"
                )
        };
        let (golden, restored) = uninterrupted_and_restored_tables(name, &query, 29, &[1, 2, 1]);
        assert_eq!(golden.len(), 1_000, "{name}");
        assert_eq!(restored, golden, "{name}");
    }
}

#[test]
fn a_join_into_files_commits_every_match_exactly_once() {
    let out = workdir("join-out").join("out");
    let query = tables(6_000, 3_000)
        + &file_sink("id BIGINT, ka INT, kb INT", "csv", "2kb", &out)
        + "INSERT INTO out SELECT a.id, a.k, b.k FROM a JOIN b ON a.id = b.id;\n";
    killed_and_restored("join", &query, 17, &[2, 1, 2]);
    let mut ids: Vec<u64> = committed_lines(&out)
        .iter()
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=6_000).collect::<Vec<u64>>());
}

#[test]
fn a_source_read_once_for_two_consumers_commits_every_match_exactly_once() {
    // Both sides of the join read table `a` (one split per parallel instance, feeding both
    // sides through a fork): a restored fork must give each side exactly the rows after
    // the checkpoint's position, or matches would be lost or doubled.
    let out = workdir("fork-out").join("out");
    let query = tables(6_000, 3_000)
        + &file_sink("id BIGINT, ka INT, kb INT", "csv", "2kb", &out)
        + "INSERT INTO out SELECT x.id, x.k, y.k FROM (SELECT id, k FROM a WHERE MOD(id, 2) = 0) x \
           JOIN (SELECT id, k + 100 AS k FROM a) y ON x.id = y.id;\n";
    killed_and_restored("fork", &query, 19, &[2, 1, 2]);
    let mut rows: Vec<(u64, i64, i64)> = committed_lines(&out)
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect();
    rows.sort_unstable();
    let ids: Vec<u64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(ids, (1..=3_000).map(|i| i * 2).collect::<Vec<u64>>());
    assert!(rows.iter().all(|&(_, ka, kb)| kb == ka + 100), "{rows:?}");
}

#[test]
fn a_statement_set_commits_each_sink_exactly_once() {
    // Two INSERTs as one job: table `a` is read once for both (a fork across the sinks),
    // each sink stages its own parts, and a checkpoint holds both sinks' states.
    let dir = workdir("set-out");
    let (pass, joined) = (dir.join("pass"), dir.join("joined"));
    let query = tables(6_000, 3_000)
        + &named_file_sink("pass", "id BIGINT, k INT", "csv", "2kb", &pass)
        + &named_file_sink("joined", "id BIGINT, ka INT, kb INT", "csv", "2kb", &joined)
        + "EXECUTE STATEMENT SET BEGIN\n\
           INSERT INTO pass SELECT id, k FROM a;\n\
           INSERT INTO joined SELECT a.id, a.k, b.k FROM a JOIN b ON a.id = b.id;\n\
           END;\n";
    killed_and_restored("set", &query, 23, &[1, 2, 1]);
    let ids = |out: &Path| {
        let mut ids: Vec<u64> = committed_lines(out)
            .iter()
            .map(|l| l.split(',').next().unwrap().parse().unwrap())
            .collect();
        ids.sort_unstable();
        ids
    };
    let all: Vec<u64> = (1..=6_000).collect();
    assert_eq!(ids(&pass), all, "the pass-through sink");
    assert_eq!(ids(&joined), all, "the join's sink");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigterm_takes_a_final_checkpoint_that_a_restart_goes_on_from() {
    let dir = workdir("sigterm");
    let out = dir.join("out");
    let checkpoints = dir.join("chk");
    let query = tables(6_000, 3_000)
        + &file_sink("id BIGINT, k INT", "csv", "2kb", &out)
        + "INSERT INTO out SELECT id, k FROM a UNION ALL SELECT id + 1000000, k FROM b;\n";
    // No periodic checkpoint would come within the run: only the signal's.
    let settings = format!(
        "SET 'execution.checkpointing.interval' = '1 h';\nSET 'execution.checkpointing.dir' = '{}';\n",
        checkpoints.display()
    );
    let script = dir.join("job.sql");
    std::fs::write(&script, format!("{settings}{query}")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_tideline"))
        .arg("-f")
        .arg(&script)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let stopped = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&stopped.stderr);
    assert!(!stopped.status.success(), "{stderr}");
    assert!(stderr.contains("taking a final checkpoint"), "{stderr}");
    assert!(stderr.contains("its last checkpoint is"), "{stderr}");
    let checkpoint = newest_checkpoint(&checkpoints).expect("the final checkpoint");
    // What the final checkpoint covers is committed already, and only that.
    let before = committed_lines(&out).len();
    assert!(
        before > 0 && before < 12_000,
        "{before} rows committed at the signal"
    );
    let restore = format!(
        "{settings}SET 'execution.state-recovery.path' = '{}';\n",
        checkpoint.display()
    );
    run(&dir, &restore, &query, None);
    let mut ids: Vec<u64> = committed_lines(&out)
        .iter()
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    ids.sort_unstable();
    let expected: Vec<u64> = (1..=6_000).chain(1_000_001..=1_006_000).collect();
    assert_eq!(ids, expected);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_updating_group_by_into_postgres_killed_and_restored_leaves_the_uninterrupted_table() {
    let Some(db) = postgres_support::Database::create() else {
        return;
    };
    db.client(true)
        .batch_execute(
            "CREATE TABLE counts (k INT PRIMARY KEY, c BIGINT, s BIGINT); \
             CREATE TABLE golden (k INT PRIMARY KEY, c BIGINT, s BIGINT)",
        )
        .unwrap();
    let query = |table: &str| {
        tables(6_000, 3_000)
            + &format!(
                "CREATE TABLE pg (k INT NOT NULL, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) \
                 WITH ('connector' = 'jdbc', 'url' = '{}', 'table-name' = '{table}', 'username' = '{}', \
                 'sink.buffer-flush.max-rows' = '1000000', 'sink.buffer-flush.interval' = '1 h');\n",
                db.url(),
                db.user
            )
            + "INSERT INTO pg SELECT k, COUNT(*), SUM(id) FROM (SELECT * FROM a UNION ALL SELECT * FROM b) GROUP BY k;\n"
    };
    run(&workdir("golden-pg"), "", &query("golden"), None);
    let golden = db.rows("SELECT k, c, s FROM golden");
    assert_eq!(golden.len(), 9);
    // The buffer flushes on no count or time of its own here: what reaches the table before
    // the kill is what the checkpoint's barrier flushed.
    let dir = workdir("pg-flush");
    let checkpoints = dir.join("chk");
    let settings = format!(
        "SET 'execution.checkpointing.interval' = '100 ms';\nSET 'execution.checkpointing.dir' = '{}';\n",
        checkpoints.display()
    );
    let ready = || newest_checkpoint(&checkpoints).is_some();
    run(
        &dir,
        &settings,
        &query("counts"),
        Some((&ready, Duration::ZERO)),
    );
    assert!(
        !db.rows("SELECT k FROM counts").is_empty(),
        "no flush at the barrier"
    );
    db.client(true).batch_execute("TRUNCATE counts").unwrap();
    // Restored (state and positions) at another parallelism, the replayed upserts by key
    // leave what the uninterrupted run left.
    killed_and_restored("pg", &query("counts"), 23, &[2, 1, 2]);
    assert_eq!(db.rows("SELECT k, c, s FROM counts"), golden);
}

/// A directory of files, each a split (queued behind one another at parallelism 1, so
/// barriers meet splits queued, running and finished), killed at random moments and
/// restored at 1 → 2 → 1: every line is committed exactly once.
#[test]
fn a_directory_source_killed_mid_run_commits_every_line_exactly_once() {
    let dir = workdir("directory");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    // Enough lines that a run lasts seconds: checkpoints come every 100 ms.
    let (files, lines) = (8u64, 1_500_000u64);
    for f in 0..files {
        let text: String = (0..lines)
            .map(|i| format!("{},{}\n", f * lines + i, i % 7))
            .collect();
        std::fs::write(input.join(format!("part-{f}.csv")), text).unwrap();
    }
    let out = dir.join("out");
    let query = format!(
        "CREATE TABLE src (id BIGINT, k INT) WITH ('connector' = 'filesystem', 'path' = '{}', \
         'format' = 'csv');\n\
         CREATE TABLE out (id BIGINT, k INT) WITH ('connector' = 'filesystem', 'path' = '{}', \
         'format' = 'csv', 'sink.rolling-policy.file-size' = '256kb');\n\
         INSERT INTO out SELECT id, k FROM src WHERE k >= 0;\n",
        input.display(),
        out.display()
    );
    killed_and_restored("directory-run", &query, 21, &[1, 2, 1]);
    let mut ids: Vec<u64> = committed_lines(&out)
        .iter()
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids.len() as u64, files * lines, "lines lost or repeated");
    assert_eq!(ids, (0..files * lines).collect::<Vec<u64>>());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Checkpoints while watermark alignment pauses a split: two directories of files in one
/// alignment group (1 s of drift), `b`'s event time running ten times as fast as `a`'s, so
/// `b`'s split is paused at most barriers. Killed and restored at 2 → 1 → 2, the committed
/// windows are the uninterrupted run's.
#[test]
fn checkpoints_while_alignment_pauses_a_split_restore_the_same_windows() {
    let dir = workdir("aligned");
    // Enough lines that each run lasts seconds: checkpoints come every 100 ms.
    let lines = 6_000_000u64;
    for (name, stride) in [("a", 1), ("b", 10)] {
        let input = dir.join(name);
        std::fs::create_dir_all(&input).unwrap();
        let text: String = (0..lines)
            .map(|i| format!("{},{}\n", i * stride, i % 3))
            .collect();
        std::fs::write(input.join("part-0.csv"), text).unwrap();
    }
    let table = |name: &str| {
        format!(
            "CREATE TABLE {name} (t BIGINT, k INT, ts AS TO_TIMESTAMP_LTZ(t, 3), \
             WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', \
             'path' = '{}', 'format' = 'csv', 'scan.watermark.alignment.group' = 'g', \
             'scan.watermark.alignment.max-drift' = '1 s', \
             'scan.watermark.alignment.update-interval' = '20 ms');\n",
            dir.join(name).display()
        )
    };
    let query = |out: &Path| {
        table("a")
            + &table("b")
            + &format!(
                "CREATE TABLE out (k INT, w TIMESTAMP(3), c BIGINT, s BIGINT) WITH ('connector' = 'filesystem', \
                 'path' = '{}', 'format' = 'csv');\n",
                out.display()
            )
            + "CREATE TEMPORARY VIEW u AS SELECT * FROM a UNION ALL SELECT * FROM b;\n\
               INSERT INTO out SELECT k, window_start, COUNT(*), SUM(t) FROM TABLE(TUMBLE(TABLE u, \
               DESCRIPTOR(ts), INTERVAL '100' SECOND(3))) GROUP BY k, window_start, window_end;\n"
    };
    run(&dir, "", &query(&dir.join("golden")), None);
    let golden = committed_lines(&dir.join("golden"));
    // b's 60,000 s of event time in windows of 100 s, three keys each.
    assert_eq!(golden.len(), 3 * 600, "{golden:?}");
    let out = dir.join("out");
    killed_and_restored("aligned-run", &query(&out), 29, &[2, 1, 2]);
    assert_eq!(committed_lines(&out), golden);
    let _ = std::fs::remove_dir_all(&dir);
}
