//! Parallelism does not change results: a query over a directory of several files gives the
//! same rows (as a multiset) at parallelism 1, 2 and 4 — stateless queries and group windows
//! alike, in streaming mode (watermarks per file split, the minimum over splits at each task
//! instance) and in batch mode. Random rows with random event times in several CSV files.

use proptest::prelude::*;

use tideline::client::{Session, run_script};

#[derive(Debug, Clone)]
struct Row {
    key: Option<String>,
    v: Option<i32>,
    /// Seconds after 2024-03-10 00:00:00.
    at: u32,
}

fn row() -> impl Strategy<Value = Row> {
    (
        proptest::option::weighted(0.9, "[a-e]"),
        proptest::option::weighted(0.85, -100..100i32),
        0..7_200u32,
    )
        .prop_map(|(key, v, at)| Row { key, v, at })
}

fn csv_line(r: &Row) -> String {
    let key = r.key.clone().unwrap_or_else(|| "NULL".to_string());
    let v = r.v.map_or("NULL".to_string(), |v| v.to_string());
    let (h, m, s) = (r.at / 3600, r.at / 60 % 60, r.at % 60);
    format!("{key},{v},2024-03-10 {h:02}:{m:02}:{s:02}\n")
}

/// Queries and their column counts.
const QUERIES: &[(&str, usize)] = &[
    ("SELECT key, CAST(v * 2 AS STRING) FROM src WHERE v > 0", 2),
    (
        "SELECT key, CAST(COUNT(*) AS STRING), CAST(TUMBLE_START(ts, INTERVAL '10' MINUTE) AS STRING) FROM src GROUP BY key, TUMBLE(ts, INTERVAL '10' MINUTE)",
        3,
    ),
    (
        "SELECT CAST(SUM(v) AS STRING), CAST(MIN(v) AS STRING), CAST(TUMBLE_END(ts, INTERVAL '15' MINUTE) AS STRING) FROM src GROUP BY TUMBLE(ts, INTERVAL '15' MINUTE)",
        3,
    ),
    (
        "SELECT key, CAST(COUNT(DISTINCT v) AS STRING), CAST(MAX(v) AS STRING), CAST(HOP_START(ts, INTERVAL '5' MINUTE, INTERVAL '20' MINUTE) AS STRING) FROM src GROUP BY HOP(ts, INTERVAL '5' MINUTE, INTERVAL '20' MINUTE), key",
        4,
    ),
    (
        "SELECT key, CAST(AVG(v) AS STRING), CAST(SESSION_START(ts, INTERVAL '3' MINUTE) AS STRING), CAST(SESSION_END(ts, INTERVAL '3' MINUTE) AS STRING) FROM src GROUP BY key, SESSION(ts, INTERVAL '3' MINUTE)",
        4,
    ),
    (
        "SELECT key, CAST(COUNT(*) AS STRING), CAST(SUM(v) AS STRING), CAST(window_end AS STRING) FROM TABLE(CUMULATE(TABLE src, DESCRIPTOR(ts), INTERVAL '5' MINUTE, INTERVAL '15' MINUTE)) GROUP BY key, window_start, window_end",
        4,
    ),
    (
        "SELECT key, CAST(v AS STRING), CAST(window_start AS STRING) FROM TABLE(HOP(TABLE src, DESCRIPTOR(ts), INTERVAL '5' MINUTE, INTERVAL '10' MINUTE))",
        3,
    ),
    // Window deduplication by key (ties in time keep the later row: only rows of distinct
    // times per key and window make the result independent of arrival order).
    (
        "SELECT key, CAST(ts AS STRING), CAST(window_end AS STRING) FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, key ORDER BY ts DESC) AS rn FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' MINUTE))) WHERE rn = 1",
        3,
    ),
    // A window Top-N: the two largest values per key and window (ties print alike).
    (
        "SELECT key, CAST(v AS STRING), CAST(window_end AS STRING) FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, key ORDER BY v DESC) AS rn FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' MINUTE))) WHERE rn <= 2",
        3,
    ),
    // A regular inner join (insert-only over inserts): each side through its own exchange.
    (
        "SELECT a.key, CAST(a.v AS STRING), CAST(b.ts AS STRING) FROM src a JOIN src b ON a.key = b.key AND a.v < b.v - 150",
        3,
    ),
];

/// Runs a query of `width` columns into a CSV sink and returns its lines, sorted.
fn run(
    dir: &std::path::Path,
    (sql, width): (&str, usize),
    mode: &str,
    parallelism: u32,
) -> Result<Vec<String>, String> {
    let out = dir.join(format!("out-{mode}-{parallelism}"));
    let columns: Vec<String> = (0..width).map(|i| format!("o{i} STRING")).collect();
    let script = format!(
        "SET 'execution.runtime-mode' = '{mode}';
         SET 'parallelism.default' = '{parallelism}';
         CREATE TABLE src (key STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE) WITH ('connector' = 'filesystem', 'path' = '{input}', 'format' = 'csv', 'csv.null-literal' = 'NULL');
         CREATE TABLE snk ({columns}) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv', 'csv.null-literal' = 'NULL');
         INSERT INTO snk {sql};",
        input = dir.join("in").display(),
        columns = columns.join(", "),
        out = out.display(),
    );
    let mut session = Session::new(tideline::clock::ManualClock::new(0));
    let mut printed = Vec::new();
    if !run_script(&mut session, &script, &mut printed) {
        return Err(format!(
            "{mode} run at parallelism {parallelism} failed for {sql}: {}",
            String::from_utf8_lossy(&printed)
        ));
    }
    let mut lines = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&out) {
        for e in entries.flatten() {
            let text = std::fs::read_to_string(e.path()).map_err(|e| e.to_string())?;
            lines.extend(text.lines().map(str::to_string));
        }
    }
    lines.sort();
    Ok(lines)
}

fn write_files(dir: &std::path::Path, files: &[Vec<Row>]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("in")).unwrap();
    for (i, rows) in files.iter().enumerate() {
        // In time order within a file: then no row is ever behind its own split's watermark,
        // and whether a row is late cannot depend on how the splits' reads interleave.
        let mut rows = rows.clone();
        rows.sort_by_key(|r| r.at);
        let text: String = rows.iter().map(csv_line).collect();
        std::fs::write(dir.join("in").join(format!("part-{i}.csv")), text).unwrap();
    }
}

proptest! {
    // PROPTEST_CASES raises the count for a longer hunt; CI runs the default.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(12),
        ..ProptestConfig::default()
    })]

    #[test]
    fn parallelism_does_not_change_results(
        files in proptest::collection::vec(proptest::collection::vec(row(), 0..60), 1..5),
        query in 0..QUERIES.len(),
        batch in any::<bool>(),
    ) {
        let sql = QUERIES[query];
        let mode = if batch { "batch" } else { "streaming" };
        let dir = std::env::temp_dir().join(format!(
            "tideline-par-{}-{query}-{}",
            std::process::id(),
            files.iter().map(Vec::len).sum::<usize>()
        ));
        write_files(&dir, &files);
        let one = run(&dir, sql, mode, 1);
        for p in [2, 4] {
            let other = run(&dir, sql, mode, p);
            prop_assert_eq!(&one, &other, "{} at parallelism {}", sql.0, p);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The property is not vacuous: a windowed count over known files, at each parallelism.
#[test]
fn a_tumbling_count_over_several_files_at_each_parallelism() {
    let dir = std::env::temp_dir().join(format!("tideline-par-fixed-{}", std::process::id()));
    let at = |key: &str, v: i32, at: u32| Row {
        key: Some(key.into()),
        v: Some(v),
        at,
    };
    // File 1 starts behind where file 0 ends: its rows are not late, whatever the order.
    write_files(
        &dir,
        &[
            vec![at("a", 1, 10), at("b", 2, 20), at("a", 3, 700)],
            vec![at("b", 6, 30), at("a", 4, 1300), at("b", 5, 1310)],
        ],
    );
    let sql = QUERIES[1];
    for p in [1, 2, 4] {
        assert_eq!(
            run(&dir, sql, "streaming", p).unwrap(),
            [
                "a,1,\"2024-03-10 00:00:00.000\"",
                "a,1,\"2024-03-10 00:10:00.000\"",
                "a,1,\"2024-03-10 00:20:00.000\"",
                "b,1,\"2024-03-10 00:20:00.000\"",
                "b,2,\"2024-03-10 00:00:00.000\"",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .tap_sort(),
            "parallelism {p}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

trait TapSort {
    fn tap_sort(self) -> Self;
}

impl TapSort for Vec<String> {
    fn tap_sort(mut self) -> Self {
        self.sort();
        self
    }
}
