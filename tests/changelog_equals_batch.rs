//! Seed 004's promise: a continuous query's result equals the same query run in batch mode
//! on a snapshot of the input — also when the input is itself a changelog (Debezium lines of
//! inserts, updates and deletes), whose snapshot is the table it leaves — and when that
//! changelog repeats events and deletes rows that never were, read through a ChangelogNormalize. Random rows in several CSV files; each updating query runs in
//! streaming mode at parallelism 1, 2 and 4, its printed changelog (`+I`/`-U`/`+U`/`-D`)
//! applied to an empty table, and the table compared with the batch result. Applying the
//! changelog also checks it: a `-U`/`-D` must take back a row that is there.

use std::collections::BTreeMap;

use proptest::prelude::*;

use tideline::client::{Session, run_script};

#[derive(Debug, Clone)]
struct Row {
    key: Option<String>,
    v: Option<i32>,
}

fn row() -> impl Strategy<Value = Row> {
    (
        proptest::option::weighted(0.9, "[a-f]"),
        proptest::option::weighted(0.85, -50..50i32),
    )
        .prop_map(|(key, v)| Row { key, v })
}

/// Updating queries: keyed and global aggregates of every function, HAVING, DISTINCT,
/// aggregates over an aggregate's changelog, Top-N over inserts and over updates, and joins
/// of every type over inserts and over updates (the two sides' rows arrive interleaved at
/// random), with residual conditions, computed keys, and an aggregate over a join.
const QUERIES: &[&str] = &[
    "SELECT key, COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v), AVG(v) FROM src GROUP BY key",
    "SELECT COUNT(*), SUM(v), MIN(key), MAX(v), COUNT(DISTINCT key) FROM src",
    "SELECT key, COUNT(DISTINCT v), SUM(v) FILTER (WHERE v > 0) FROM src GROUP BY key HAVING COUNT(*) > 2",
    "SELECT DISTINCT key, v > 0 FROM src",
    "SELECT c, COUNT(*), MIN(key), MAX(key), SUM(s), COUNT(DISTINCT key) FROM (SELECT key, COUNT(*) AS c, SUM(v) AS s FROM src GROUP BY key) GROUP BY c",
    "SELECT m, COUNT(*), SUM(c) FROM (SELECT key, MAX(v) AS m, COUNT(*) AS c FROM src GROUP BY key HAVING MIN(v) < 10) GROUP BY m",
    "SELECT COUNT(*), MIN(c), MAX(c), AVG(c) FROM (SELECT key, COUNT(*) AS c FROM src GROUP BY key)",
    "SELECT key, v, rk FROM (SELECT key, v, ROW_NUMBER() OVER (PARTITION BY key ORDER BY v DESC) AS rk FROM src) WHERE rk <= 2",
    "SELECT key, m FROM (SELECT key, m, ROW_NUMBER() OVER (ORDER BY m ASC) AS rk FROM (SELECT key, MAX(v) AS m FROM src GROUP BY key)) WHERE rk <= 3",
    "SELECT k, c, rk FROM (SELECT k, c, ROW_NUMBER() OVER (PARTITION BY c ORDER BY k) AS rk FROM (SELECT key AS k, COUNT(*) AS c FROM src GROUP BY key)) WHERE rk < 3",
    "SELECT a.key, a.v, b.v FROM src a JOIN src b ON a.key = b.key AND a.v < b.v",
    "SELECT a.key, a.v, b.v FROM src a LEFT JOIN src b ON a.key = b.key AND b.v > 10",
    "SELECT a.key, b.key, a.v FROM src a FULL JOIN src b ON a.v = b.v + 1",
    "SELECT * FROM (SELECT key, COUNT(*) AS c FROM src GROUP BY key) x RIGHT JOIN src y ON x.key = y.key AND x.c > 1",
    "SELECT x.key, x.c, y.m FROM (SELECT key, COUNT(*) AS c FROM src GROUP BY key) x FULL JOIN (SELECT key, MAX(v) AS m FROM src GROUP BY key) y ON x.key = y.key AND x.c < y.m",
    "SELECT a.key, COUNT(*), SUM(b.v), MAX(b.key) FROM src a, src b WHERE a.key = b.key AND a.v <> b.v GROUP BY a.key",
    "SELECT key, v FROM src a WHERE EXISTS (SELECT * FROM src b WHERE b.key = a.key AND b.v > a.v)",
    "SELECT key, v FROM src a WHERE v > 0 AND NOT EXISTS (SELECT * FROM src b WHERE b.v = a.v + 1)",
    "SELECT key, v FROM src WHERE v NOT IN (SELECT v FROM src WHERE v < 5)",
    "SELECT * FROM (SELECT key, COUNT(*) AS c FROM src GROUP BY key) t WHERE c IN (SELECT v FROM src)",
];

/// The rows a query's output leaves, as a multiset of their printed cells; the changelog's
/// kinds applied in order in streaming mode.
fn run(
    dir: &std::path::Path,
    sql: &str,
    mode: &str,
    parallelism: u32,
) -> Result<BTreeMap<Vec<String>, i64>, String> {
    let script = format!(
        "SET 'sql-client.execution.result-mode' = 'tableau';
         SET 'execution.runtime-mode' = '{mode}';
         SET 'parallelism.default' = '{parallelism}';
         CREATE TABLE src (key STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{input}', 'format' = 'csv', 'csv.null-literal' = 'NULL');
         {sql};",
        input = dir.join("in").display(),
    );
    let mut session = Session::new(tideline::clock::ManualClock::new(0));
    let mut printed = Vec::new();
    if !run_script(&mut session, &script, &mut printed) {
        return Err(format!(
            "{mode} run at parallelism {parallelism} failed for {sql}: {}",
            String::from_utf8_lossy(&printed)
        ));
    }
    let text = String::from_utf8_lossy(&printed);
    let mut table: BTreeMap<Vec<String>, i64> = BTreeMap::new();
    let mut header = true;
    for line in text.lines().filter(|l| l.starts_with('|')) {
        if header {
            header = false;
            continue;
        }
        let mut cells: Vec<String> = line
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect();
        let delta = if mode == "streaming" {
            match cells.remove(0).as_str() {
                "+I" | "+U" => 1,
                "-U" | "-D" => -1,
                other => return Err(format!("unknown row kind {other}")),
            }
        } else {
            1
        };
        let count = table.entry(cells.clone()).or_insert(0);
        *count += delta;
        if *count < 0 {
            return Err(format!(
                "{sql}: the changelog takes back {cells:?}, not there"
            ));
        }
        if *count == 0 {
            table.remove(&cells);
        }
    }
    Ok(table)
}

fn write_files(dir: &std::path::Path, files: &[Vec<Row>]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("in")).unwrap();
    for (i, rows) in files.iter().enumerate() {
        let text: String = rows
            .iter()
            .map(|r| {
                let key = r.key.clone().unwrap_or_else(|| "NULL".into());
                let v = r.v.map_or("NULL".into(), |v| v.to_string());
                format!("{key},{v}\n")
            })
            .collect();
        std::fs::write(dir.join("in").join(format!("part-{i}.csv")), text).unwrap();
    }
}

proptest! {
    // 1,000 cases in CI (the count); PROPTEST_CASES changes it.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(1000),
        ..ProptestConfig::default()
    })]

    #[test]
    fn continuous_result_equals_batch_result(
        files in proptest::collection::vec(proptest::collection::vec(row(), 0..40), 1..4),
        query in 0..QUERIES.len(),
        parallelism in prop_oneof![Just(1u32), Just(2), Just(4)],
    ) {
        let sql = QUERIES[query];
        // Over no rows at all a global aggregate's batch row has no streaming counterpart:
        // Flink's streaming aggregate emits nothing until a row comes.
        let global = sql.starts_with("SELECT COUNT(*)");
        prop_assume!(files.iter().any(|f| !f.is_empty()) || !global);
        let dir = std::env::temp_dir().join(format!(
            "tideline-cont-{}-{query}-{}",
            std::process::id(),
            files.iter().map(Vec::len).sum::<usize>()
        ));
        write_files(&dir, &files);
        let batch = run(&dir, sql, "batch", 1);
        let streaming = run(&dir, sql, "streaming", parallelism);
        let _ = std::fs::remove_dir_all(&dir);
        let batch = batch.map_err(TestCaseError::fail)?;
        let streaming = streaming.map_err(TestCaseError::fail)?;
        prop_assert_eq!(streaming, batch, "{} at parallelism {}", sql, parallelism);
    }
}

/// Queries over `cdc`, a table read from a Debezium changelog in streaming mode and from its
/// final snapshot in batch mode (joined with `src` where they read it).
const CDC_QUERIES: &[&str] = &[
    "SELECT key, COUNT(*), SUM(v), MIN(v), MAX(v) FROM cdc GROUP BY key",
    "SELECT c.key, c.v, s.v FROM cdc c JOIN src s ON c.key = s.key AND c.v < s.v",
    "SELECT key, v FROM src s WHERE NOT EXISTS (SELECT * FROM cdc c WHERE c.key = s.key AND c.v > s.v)",
    "SELECT key, v FROM cdc WHERE key IN (SELECT key FROM src WHERE v > 10)",
    "SELECT c.id, c.key, s.v FROM cdc c LEFT JOIN src s ON c.key = s.key AND s.v > 20",
    "SELECT key, v FROM (SELECT key, v, ROW_NUMBER() OVER (PARTITION BY key ORDER BY v DESC) AS rk FROM cdc) WHERE rk <= 2",
    "SELECT DISTINCT key FROM cdc WHERE v > 0",
];

/// A change to the `cdc` table: a new row, a new key and value for a row, or a row gone.
#[derive(Debug, Clone)]
enum Change {
    Insert(Row),
    Update(usize, Row),
    Delete(usize),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        3 => row().prop_map(Change::Insert),
        2 => (0..1000usize, row()).prop_map(|(i, r)| Change::Update(i, r)),
        1 => (0..1000usize).prop_map(Change::Delete),
    ]
}

fn json_row(id: u32, r: &Row) -> String {
    let key = r.key.as_ref().map_or("null".into(), |k| format!("\"{k}\""));
    let v = r.v.map_or("null".into(), |v| v.to_string());
    format!("{{\"id\":{id},\"key\":{key},\"v\":{v}}}")
}

/// The changes as Debezium lines (an update or delete picks a live row by index; none live:
/// nothing), and the table they leave as CSV lines.
fn changelog(changes: &[Change]) -> (String, String) {
    let mut live: Vec<(u32, Row)> = Vec::new();
    let mut next_id = 0;
    let mut lines = String::new();
    for c in changes {
        match c {
            Change::Insert(r) => {
                lines.push_str(&format!(
                    "{{\"before\":null,\"after\":{},\"op\":\"c\"}}\n",
                    json_row(next_id, r)
                ));
                live.push((next_id, r.clone()));
                next_id += 1;
            }
            Change::Update(i, r) if !live.is_empty() => {
                let at = i % live.len();
                let (id, old) = live[at].clone();
                lines.push_str(&format!(
                    "{{\"before\":{},\"after\":{},\"op\":\"u\"}}\n",
                    json_row(id, &old),
                    json_row(id, r)
                ));
                live[at].1 = r.clone();
            }
            Change::Delete(i) if !live.is_empty() => {
                let (id, old) = live.remove(i % live.len());
                lines.push_str(&format!(
                    "{{\"before\":{},\"after\":null,\"op\":\"d\"}}\n",
                    json_row(id, &old)
                ));
            }
            _ => {}
        }
    }
    let snapshot = live
        .iter()
        .map(|(id, r)| {
            let key = r.key.clone().unwrap_or_else(|| "NULL".into());
            let v = r.v.map_or("NULL".into(), |v| v.to_string());
            format!("{id},{key},{v}\n")
        })
        .collect();
    (lines, snapshot)
}

/// The changelog's lines with events repeated (`repeats[i]` more copies of line `i`) and
/// deletes of rows that never were (before line `g` for each `g` of `ghosts`), as a source
/// that delivers events at least once sends them.
fn with_duplicates(lines: &str, repeats: &[u8], ghosts: &[usize]) -> String {
    let mut out = String::new();
    for (i, line) in lines.lines().enumerate() {
        for _ in ghosts.iter().filter(|&&g| g == i) {
            out.push_str(&format!(
                "{{\"before\":{},\"after\":null,\"op\":\"d\"}}\n",
                json_row(
                    100_000 + i as u32,
                    &Row {
                        key: Some("z".into()),
                        v: Some(1),
                    }
                )
            ));
        }
        for _ in 0..=repeats.get(i).copied().unwrap_or(0) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A query over `cdc` (and `src`): streaming over the changelog, or batch over the snapshot.
/// `normalized`: the changelog may repeat events, and the table says so (a primary key and
/// `table.exec.source.cdc-events-duplicate`).
fn run_cdc(
    dir: &std::path::Path,
    sql: &str,
    mode: &str,
    parallelism: u32,
    normalized: bool,
) -> Result<BTreeMap<Vec<String>, i64>, String> {
    let cdc = if mode == "streaming" && normalized {
        format!(
            "SET 'table.exec.source.cdc-events-duplicate' = 'true';
             CREATE TABLE cdc (id INT, key STRING, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json');",
            dir.join("changes.json").display()
        )
    } else if mode == "streaming" {
        format!(
            "CREATE TABLE cdc (id INT, key STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json');",
            dir.join("changes.json").display()
        )
    } else {
        format!(
            "CREATE TABLE cdc (id INT, key STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv', 'csv.null-literal' = 'NULL');",
            dir.join("snapshot.csv").display()
        )
    };
    run(dir, &format!("{cdc}\n{sql}"), mode, parallelism)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(300),
        ..ProptestConfig::default()
    })]

    #[test]
    fn continuous_result_over_a_changelog_equals_batch_result_over_its_snapshot(
        changes in proptest::collection::vec(change(), 0..60),
        files in proptest::collection::vec(proptest::collection::vec(row(), 0..20), 1..3),
        query in 0..CDC_QUERIES.len(),
        parallelism in prop_oneof![Just(1u32), Just(2), Just(4)],
    ) {
        let sql = CDC_QUERIES[query];
        let dir = std::env::temp_dir().join(format!(
            "tideline-cdc-{}-{query}-{}",
            std::process::id(),
            changes.len()
        ));
        write_files(&dir, &files);
        let (lines, snapshot) = changelog(&changes);
        std::fs::write(dir.join("changes.json"), lines).unwrap();
        std::fs::write(dir.join("snapshot.csv"), snapshot).unwrap();
        let batch = run_cdc(&dir, sql, "batch", 1, false);
        let streaming = run_cdc(&dir, sql, "streaming", parallelism, false);
        let _ = std::fs::remove_dir_all(&dir);
        let batch = batch.map_err(TestCaseError::fail)?;
        let streaming = streaming.map_err(TestCaseError::fail)?;
        prop_assert_eq!(streaming, batch, "{} at parallelism {}", sql, parallelism);
    }

    /// With repeated events and deletes of rows that never were, the normalized changelog
    /// still leaves the snapshot's result.
    #[test]
    fn a_normalized_changelog_with_repeated_events_equals_batch_result_over_its_snapshot(
        changes in proptest::collection::vec(change(), 0..60),
        repeats in proptest::collection::vec(prop_oneof![4 => Just(0u8), 1 => Just(1), 1 => Just(2)], 60),
        ghosts in proptest::collection::vec(0..60usize, 0..4),
        files in proptest::collection::vec(proptest::collection::vec(row(), 0..20), 1..3),
        query in 0..CDC_QUERIES.len(),
        parallelism in prop_oneof![Just(1u32), Just(2), Just(4)],
    ) {
        let sql = CDC_QUERIES[query];
        let dir = std::env::temp_dir().join(format!(
            "tideline-norm-{}-{query}-{}",
            std::process::id(),
            changes.len()
        ));
        write_files(&dir, &files);
        let (lines, snapshot) = changelog(&changes);
        std::fs::write(dir.join("changes.json"), with_duplicates(&lines, &repeats, &ghosts)).unwrap();
        std::fs::write(dir.join("snapshot.csv"), snapshot).unwrap();
        let batch = run_cdc(&dir, sql, "batch", 1, true);
        let streaming = run_cdc(&dir, sql, "streaming", parallelism, true);
        let _ = std::fs::remove_dir_all(&dir);
        let batch = batch.map_err(TestCaseError::fail)?;
        let streaming = streaming.map_err(TestCaseError::fail)?;
        prop_assert_eq!(streaming, batch, "{} at parallelism {}", sql, parallelism);
    }
}

/// The property is not vacuous: a known input gives known rows in both modes.
#[test]
fn a_keyed_count_over_two_files() {
    let dir = std::env::temp_dir().join(format!("tideline-cont-known-{}", std::process::id()));
    let rows = |spec: &[(&str, i32)]| -> Vec<Row> {
        spec.iter()
            .map(|&(k, v)| Row {
                key: Some(k.into()),
                v: Some(v),
            })
            .collect()
    };
    write_files(
        &dir,
        &[
            rows(&[("a", 1), ("b", 2), ("a", 3)]),
            rows(&[("b", 4), ("c", 5)]),
        ],
    );
    let sql = "SELECT key, COUNT(*), SUM(v) FROM src GROUP BY key";
    let expected: BTreeMap<Vec<String>, i64> = [("a", "2", "4"), ("b", "2", "6"), ("c", "1", "5")]
        .iter()
        .map(|&(k, c, s)| (vec![k.to_string(), c.to_string(), s.to_string()], 1))
        .collect();
    for mode in ["batch", "streaming"] {
        for p in [1, 2, 4] {
            assert_eq!(run(&dir, sql, mode, p).unwrap(), expected, "{mode} at {p}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The changelog property is not vacuous either: a known changelog gives the table it leaves.
#[test]
fn a_keyed_count_over_a_known_changelog() {
    let dir = std::env::temp_dir().join(format!("tideline-cdc-known-{}", std::process::id()));
    let row = |k: &str, v: i32| Row {
        key: Some(k.into()),
        v: Some(v),
    };
    write_files(&dir, &[vec![row("a", 100)]]);
    let (lines, snapshot) = changelog(&[
        Change::Insert(row("a", 1)),
        Change::Insert(row("b", 2)),
        Change::Update(0, row("a", 5)),
        Change::Delete(1),
    ]);
    assert_eq!(snapshot, "0,a,5\n");
    std::fs::write(dir.join("changes.json"), lines).unwrap();
    std::fs::write(dir.join("snapshot.csv"), snapshot).unwrap();
    let expected: BTreeMap<Vec<String>, i64> =
        [(["a", "1", "5", "5", "5"].map(String::from).to_vec(), 1)]
            .into_iter()
            .collect();
    for (mode, p) in [("batch", 1), ("streaming", 1), ("streaming", 4)] {
        assert_eq!(
            run_cdc(&dir, CDC_QUERIES[0], mode, p, false).unwrap(),
            expected,
            "{mode} at {p}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
