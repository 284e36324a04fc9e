//! Deep expressions: long operator chains, long IN lists, deep nesting and view cycles.
//! Each once overflowed a thread's stack and aborted the process (losing a REPL session).
//! Flink 2.3 itself fails on most of them (a StackOverflowError near 1,000 levels, see
//! docs/flink-2.3-oracle-findings.md, "Binder and evaluation"); Tideline runs them up
//! to `MAX_EXPR_DEPTH` levels and refuses deeper ones with an error.
//!
//! The SQL is generated, and runs through the same entry point as the client (`run_script`)
//! on the test harness's thread, whose stack (2 MiB) is smaller than the client's; the
//! refusals run the binary itself, which must exit with an error rather than a signal.

use std::process::Command;

use tideline::client::{Session, run_script};

/// The rows a script prints in batch mode, or `None` when it failed.
fn run(sql: &str) -> Option<String> {
    let mut session = Session::default();
    let script = format!("SET 'execution.runtime-mode' = 'batch';\n{sql}");
    let mut out = Vec::new();
    run_script(&mut session, &script, &mut out).then(|| String::from_utf8_lossy(&out).into_owned())
}

fn chain(term: &str, op: &str, n: usize) -> String {
    vec![term; n].join(op)
}

const TWO_ROWS: &str =
    "CREATE TEMPORARY VIEW t AS SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(a, s);\n";

#[test]
fn long_constant_sum_binds_and_runs() {
    let out = run(&format!("SELECT {} AS x;", chain("1", "+", 5_000))).expect("runs");
    assert!(out.contains("| 5000 |"), "{out}");
}

#[test]
fn long_sum_over_a_column_runs() {
    let out = run(&format!(
        "{TWO_ROWS}SELECT a, {} AS x FROM t;",
        chain("a", "+", 19_000)
    ))
    .expect("runs");
    assert!(out.contains("| 1 | 19000 |"), "{out}");
    assert!(out.contains("| 2 | 38000 |"), "{out}");
}

#[test]
fn long_in_lists_are_one_lookup() {
    for n in [1_600, 100_000] {
        let items: Vec<String> = (2..n + 2).map(|i| i.to_string()).collect();
        let out = run(&format!(
            "{TWO_ROWS}SELECT a FROM t WHERE a IN ({});",
            items.join(", ")
        ))
        .expect("runs");
        assert!(out.contains("| 2 |") && !out.contains("| 1 |"), "{out}");
        let out = run(&format!(
            "{TWO_ROWS}SELECT a FROM t WHERE a NOT IN ({});",
            items.join(", ")
        ))
        .expect("runs");
        assert!(out.contains("| 1 |") && !out.contains("| 2 |"), "{out}");
    }
}

#[test]
fn long_and_or_concat_chains_are_flat() {
    let conjuncts: Vec<String> = (3..20_003).map(|i| format!("a <> {i}")).collect();
    let out = run(&format!(
        "{TWO_ROWS}SELECT a FROM t WHERE {};",
        conjuncts.join(" AND ")
    ))
    .expect("runs");
    assert!(out.contains("2 rows in set"), "{out}");
    let disjuncts: Vec<String> = (2..20_002).map(|i| format!("a = {i}")).collect();
    let out = run(&format!(
        "{TWO_ROWS}SELECT a FROM t WHERE {};",
        disjuncts.join(" OR ")
    ))
    .expect("runs");
    assert!(
        out.contains("| 2 |") && out.contains("1 row in set"),
        "{out}"
    );
    let out = run(&format!(
        "{TWO_ROWS}SELECT CHAR_LENGTH({}) AS n FROM t;",
        chain("s", " || ", 5_000)
    ))
    .expect("runs");
    assert!(out.contains("| 5000 |"), "{out}");
}

#[test]
fn deep_nesting_parses() {
    let parens = format!("SELECT {}1{} AS x;", "(".repeat(300), ")".repeat(300));
    assert!(run(&parens).expect("runs").contains("| 1 |"));
    let calls = format!(
        "{TWO_ROWS}SELECT {}a{} AS x FROM t;",
        "ABS(".repeat(300),
        ")".repeat(300)
    );
    assert!(run(&calls).expect("runs").contains("| 2 |"));
    let cases = format!(
        "{TWO_ROWS}SELECT {}1{} AS x FROM t;",
        "CASE WHEN a > 0 THEN ".repeat(300),
        " END".repeat(300)
    );
    assert!(run(&cases).expect("runs").contains("2 rows in set"));
}

#[test]
fn deep_expressions_explain_and_survive_a_view() {
    let sum = chain("a", "+", 10_000);
    let out = run(&format!(
        "{TWO_ROWS}EXPLAIN SELECT {sum} AS x FROM t;\n\
         CREATE VIEW deep AS SELECT a, {sum} AS x FROM t;\n\
         SELECT * FROM deep;\nSHOW CREATE VIEW deep;"
    ))
    .expect("runs");
    assert!(out.contains("+(+(+("), "{out}");
    assert!(out.contains("| 2 | 20000 |"), "{out}");
}

/// Runs `sql` through the binary; returns its exit code (None: killed by a signal) and stderr.
fn run_binary(name: &str, sql: &str) -> (Option<i32>, String) {
    let dir = std::env::temp_dir().join(format!("tideline-deep-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("script.sql");
    std::fs::write(&path, sql).expect("script written");
    let out = Command::new(env!("CARGO_BIN_EXE_tideline"))
        .arg("-f")
        .arg(&path)
        .output()
        .expect("the binary runs");
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn past_the_limit_is_an_error_not_an_abort() {
    let (code, err) = run_binary(
        "limit",
        &format!("SELECT {} AS x;", chain("1", "+", 20_001)),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("expression is nested too deeply"), "{err}");
    assert!(err.contains("at line 1, column 8"), "{err}");
    // Far past it: the statement is refused before anything recurses over it.
    let (code, err) = run_binary("far", &format!("SELECT {} AS x;", chain("1", "+", 300_000)));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("expression is nested too deeply"), "{err}");
    let (code, err) = run_binary(
        "parens",
        &format!("SELECT {}1{};", "(".repeat(5_000), ")".repeat(5_000)),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("statement is nested too deeply"), "{err}");
    assert!(err.contains("at line 1, column"), "{err}");
}

#[test]
fn a_view_reading_itself_through_a_temporary_view_is_an_error() {
    let (code, err) = run_binary(
        "cycle",
        "CREATE VIEW v1 AS SELECT 1 AS x;\n\
         CREATE VIEW v2 AS SELECT * FROM v1;\n\
         CREATE TEMPORARY VIEW v1 AS SELECT * FROM v2;\n\
         SELECT * FROM v1;",
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("View 'v1' is defined through itself: v1 -> v2 -> v1"),
        "{err}"
    );
}
