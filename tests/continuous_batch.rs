//! One engine for batch and streaming: a stateless query over bounded input produces the same
//! rows (as a multiset) whether it runs continuously (streaming mode, one split per file, rows
//! arriving in any order) or in batch mode. Random data in several CSV files, random
//! filters and projections; both runs write through the same filesystem sink and the sorted
//! lines are compared.

use proptest::prelude::*;

use tideline::client::{Session, run_script};

#[derive(Debug, Clone)]
struct Row {
    a: Option<i32>,
    b: Option<String>,
    c: Option<f64>,
}

fn row() -> impl Strategy<Value = Row> {
    (
        proptest::option::weighted(0.85, -50..50i32),
        proptest::option::weighted(0.85, "[a-z]{0,4}"),
        proptest::option::weighted(0.85, (-1000..1000i32).prop_map(|v| v as f64 / 8.0)),
    )
        .prop_map(|(a, b, c)| Row { a, b, c })
}

fn csv_line(r: &Row) -> String {
    let a = r.a.map_or("NULL".to_string(), |v| v.to_string());
    let b = r.b.clone().unwrap_or_else(|| "NULL".to_string());
    let c = r.c.map_or("NULL".to_string(), |v| v.to_string());
    format!("{a},{b},{c}\n")
}

const PREDICATES: &[&str] = &[
    "a > {k}",
    "a BETWEEN {k} AND {k} + 20",
    "b LIKE '{s}%'",
    "a IS NULL OR c < {k}",
    "MOD(a, 3) = 0 AND b IS NOT NULL",
    "c * 2 >= a",
    "a IN (1, 2, 3, {k})",
    "NOT (b = '{s}') OR b IS NULL",
];

const EXPRESSIONS: &[&str] = &[
    "a",
    "b",
    "c",
    "a + {k}",
    "UPPER(b)",
    "CASE WHEN c > 0 THEN 'p' WHEN c < 0 THEN 'n' ELSE 'z' END",
    "COALESCE(b, 'none')",
    "ROUND(c, 1)",
    "CONCAT(b, CAST(a AS STRING))",
    "a / 7",
    "ABS(a) % 5",
    "CHAR_LENGTH(b)",
];

fn fill(template: &str, k: i32, s: &str) -> String {
    template.replace("{k}", &k.to_string()).replace("{s}", s)
}

/// A random stateless query whose every column is cast to STRING, and its column count.
fn query() -> impl Strategy<Value = (String, usize)> {
    (
        proptest::collection::vec(proptest::sample::select(EXPRESSIONS.to_vec()), 1..4),
        proptest::option::of(proptest::sample::select(PREDICATES.to_vec())),
        proptest::option::of(proptest::sample::select(PREDICATES.to_vec())),
        -40..40i32,
        "[a-z]{0,2}",
    )
        .prop_map(|(exprs, filter, union_filter, k, s)| {
            let select: Vec<String> = exprs
                .iter()
                .map(|e| format!("CAST({} AS STRING)", fill(e, k, &s)))
                .collect();
            let width = select.len();
            let mut sql = format!("SELECT {} FROM src", select.join(", "));
            if let Some(f) = filter {
                sql.push_str(&format!(" WHERE {}", fill(f, k, &s)));
            }
            if let Some(f) = union_filter {
                let more: Vec<String> = (0..width).map(|_| "CAST(b AS STRING)".into()).collect();
                sql.push_str(&format!(
                    " UNION ALL SELECT {} FROM src WHERE {}",
                    more.join(", "),
                    fill(f, k + 3, &s)
                ));
            }
            (sql, width)
        })
}

/// Runs `sql` into a CSV sink in the given mode and returns the sink's lines, sorted.
fn run(dir: &std::path::Path, sql: &str, width: usize, mode: &str) -> Result<Vec<String>, String> {
    let out = dir.join(format!("out-{mode}"));
    let columns: Vec<String> = (0..width).map(|i| format!("o{i} STRING")).collect();
    let script = format!(
        "SET 'execution.runtime-mode' = '{mode}';
         CREATE TABLE src (a INT, b STRING, c DOUBLE) WITH ('connector' = 'filesystem', 'path' = '{input}', 'format' = 'csv', 'csv.null-literal' = 'NULL');
         CREATE TABLE snk ({columns}) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv', 'csv.null-literal' = 'NULL');
         INSERT INTO snk {sql};",
        input = dir.join("in").display(),
        columns = columns.join(", "),
        out = out.display(),
    );
    let mut session = Session::new(tideline::clock::ManualClock::new(0));
    let mut printed = Vec::new();
    if !run_script(&mut session, &script, &mut printed) {
        return Err(format!("{mode} run failed for {sql}"));
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

proptest! {
    // PROPTEST_CASES raises the count for a longer hunt; CI runs the default.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]

    #[test]
    fn continuous_equals_batch(
        files in proptest::collection::vec(proptest::collection::vec(row(), 0..40), 1..4),
        (sql, width) in query(),
    ) {
        let dir = std::env::temp_dir().join(format!(
            "tideline-cb-{}-{:x}",
            std::process::id(),
            rand_suffix(&sql, &files)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("in")).unwrap();
        for (i, rows) in files.iter().enumerate() {
            let text: String = rows.iter().map(csv_line).collect();
            std::fs::write(dir.join("in").join(format!("part-{i}.csv")), text).unwrap();
        }
        let streaming = run(&dir, &sql, width, "streaming");
        let batch = run(&dir, &sql, width, "batch");
        let _ = std::fs::remove_dir_all(&dir);
        // A query may fail (say, on a runtime error); then it must fail in both modes.
        prop_assert_eq!(streaming.is_ok(), batch.is_ok(), "{}", sql);
        if let (Ok(s), Ok(b)) = (streaming, batch) {
            prop_assert_eq!(s, b, "{}", sql);
        }
    }
}

fn rand_suffix(sql: &str, files: &[Vec<Row>]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    sql.hash(&mut h);
    files.len().hash(&mut h);
    for rows in files {
        for r in rows {
            csv_line(r).hash(&mut h);
        }
    }
    h.finish()
}

/// The property is not vacuous: a query over known data writes the expected rows.
#[test]
fn both_modes_write_the_expected_rows() {
    let dir = std::env::temp_dir().join(format!("tideline-cb-fixed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("in")).unwrap();
    std::fs::write(dir.join("in/part-0.csv"), "1,x,0.5\n2,NULL,-1.0\n").unwrap();
    std::fs::write(dir.join("in/part-1.csv"), "3,y,NULL\n").unwrap();
    let sql =
        "SELECT CAST(a + 1 AS STRING), CAST(COALESCE(b, 'none') AS STRING) FROM src WHERE a > 1";
    for mode in ["streaming", "batch"] {
        assert_eq!(
            run(&dir, sql, 2, mode).unwrap(),
            vec!["3,none".to_string(), "4,y".to_string()]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
