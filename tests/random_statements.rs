//! Random statements through the whole client path (split, parse, bind, plan, run, print)
//! must never panic: every input ends in output or an error. Three kinds of input: token
//! soup from SQL's vocabulary and every built-in function name, valid statements with one
//! token mutated, and arbitrary text.

use proptest::prelude::*;

use tideline::client::Session;
use tideline::sql::parser::parse_statement;
use tideline::sql::split::split_statements;

/// Statements that run; the mutations start from these. Every source is bounded.
const SEEDS: &[&str] = &[
    "SELECT a, b, c FROM t WHERE a > 1 AND b LIKE 'x%'",
    "SELECT a + 1, a / 2, a % 3, -a, CAST(a AS STRING), TRY_CAST(b AS INT) FROM t",
    "SELECT CASE WHEN a IS NULL THEN 'n' WHEN a BETWEEN 1 AND 2 THEN 'b' ELSE b END FROM t",
    "SELECT COALESCE(a, 0), NULLIF(a, 1), IF(a > 1, b, 'z'), a IN (1, 2, 3) FROM t",
    "SELECT UPPER(b), SUBSTRING(b FROM 2 FOR 1), TRIM(BOTH 'x' FROM b), CONCAT_WS('-', b, b) FROM t",
    "SELECT REGEXP_EXTRACT(b, '(x)(y)?', 1), SPLIT_INDEX(b, ',', 0), LPAD(b, 5, '*') FROM t",
    "SELECT DATE_FORMAT(c, 'yyyy-MM-dd HH:mm:ss.SSS'), TO_TIMESTAMP(b, 'yyyy-MM-dd'), TO_DATE(b) FROM t",
    "SELECT UNIX_TIMESTAMP(b), FROM_UNIXTIME(a), CONVERT_TZ(b, 'UTC', 'Asia/Shanghai') FROM t",
    "SELECT TIMESTAMPADD(HOUR, a, c), TIMESTAMPDIFF(DAY, c, c + INTERVAL '1' DAY) FROM t",
    "SELECT EXTRACT(YEAR FROM c), FLOOR(c TO HOUR), CEIL(c TO MONTH), HOUR(c) FROM t",
    "SELECT TO_TIMESTAMP_LTZ(a, 3), CAST(c AS TIMESTAMP_LTZ(3)), c - INTERVAL '1-2' YEAR TO MONTH FROM t",
    "SELECT ROUND(a * 1.5, 1), POWER(a, 2), SQRT(a), LN(a + 1), MOD(a, 2), ABS(-a) FROM t",
    "SELECT * FROM (SELECT a AS x FROM t) AS s(y) WHERE y IS NOT DISTINCT FROM 2",
    "SELECT a FROM t UNION ALL SELECT a + 10 FROM t",
    "VALUES (1, 'a'), (2, CAST(NULL AS STRING))",
    "SELECT ARRAY[a, 2], ROW(a, b), CARDINALITY(ARRAY[b]) FROM t",
    "SELECT MAP['k', a]['k'], ARRAY[a, 2][a], SPLIT(b, ','), GREATEST(a, 2), IFNULL(b, 'z') FROM t",
    "SELECT JSON_VALUE(b, 'lax $.x' RETURNING INT DEFAULT 0 ON EMPTY NULL ON ERROR), JSON_QUERY(b, '$' WITH WRAPPER), b IS JSON FROM t",
    "SELECT JSON_OBJECT('a' VALUE a, 'b' VALUE b ABSENT ON NULL), JSON_ARRAY(a, b NULL ON NULL), JSON_STRING(a) FROM t",
    "CREATE TEMPORARY VIEW v2 AS SELECT a, b FROM t WHERE a < 3",
    "DESC t",
    "SHOW CREATE TABLE f",
    "SHOW TABLES",
    "SELECT x, y FROM f",
    "INSERT INTO out_csv SELECT a, b FROM t",
    "EXPLAIN SELECT a FROM t WHERE a = 1",
    "SET 'table.local-time-zone' = 'America/Los_Angeles'",
    "SET 'execution.runtime-mode' = 'batch'",
    "RESET 'table.local-time-zone'",
    "CREATE TABLE q (a INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', 'path' = 'PATH', 'format' = 'csv')",
    "SELECT * FROM TABLE(TUMBLE(TABLE f, DESCRIPTOR(x), INTERVAL '10' MINUTES))",
    "SELECT a, COUNT(*) FROM t GROUP BY a",
    "SELECT PROCTIME(), NOW(), CURRENT_DATE, LOCALTIMESTAMP, CURRENT_ROW_TIMESTAMP() FROM t",
];

const VOCABULARY: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "AS",
    "AND",
    "OR",
    "NOT",
    "NULL",
    "TRUE",
    "FALSE",
    "IS",
    "IN",
    "BETWEEN",
    "LIKE",
    "SIMILAR",
    "TO",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "CAST",
    "TRY_CAST",
    "INTERVAL",
    "DAY",
    "HOUR",
    "MINUTE",
    "SECOND",
    "YEAR",
    "MONTH",
    "TIMESTAMP",
    "DATE",
    "TIME",
    "TIMESTAMP_LTZ",
    "INT",
    "BIGINT",
    "STRING",
    "DOUBLE",
    "DECIMAL",
    "ARRAY",
    "MAP",
    "ROW",
    "UNION",
    "ALL",
    "VALUES",
    "CREATE",
    "TEMPORARY",
    "VIEW",
    "TABLE",
    "DROP",
    "IF",
    "EXISTS",
    "INSERT",
    "INTO",
    "DESC",
    "SHOW",
    "TABLES",
    "EXPLAIN",
    "SET",
    "RESET",
    "WITH",
    "WATERMARK",
    "FOR",
    "PRIMARY",
    "KEY",
    "ENFORCED",
    "DESCRIPTOR",
    "TUMBLE",
    "HOP",
    "GROUP",
    "BY",
    "ORDER",
    "t",
    "f",
    "a",
    "b",
    "c",
    "x",
    "y",
    "v2",
    "`a`",
    "(",
    ")",
    ",",
    ";",
    ".",
    "*",
    "+",
    "-",
    "/",
    "%",
    "=",
    "<>",
    "<",
    ">=",
    "||",
    "[",
    "]",
    "'",
    "''",
    "'x'",
    "'2021-01-01 00:00:00'",
    "'yyyy-MM-dd'",
    "'HH:mm:ss SSS'",
    "0",
    "1",
    "-1",
    "2147483647",
    "9223372036854775807",
    "1.5",
    "1e308",
    "'10'",
    "/*+ OPTIONS('k'='v') */",
    "--",
    "\n",
];

fn token_soup() -> impl Strategy<Value = String> {
    let names: Vec<&'static str> = tideline::function::names();
    let word = prop_oneof![
        4 => proptest::sample::select(VOCABULARY.to_vec()).prop_map(str::to_string),
        1 => proptest::sample::select(names).prop_map(|n| format!("{n}(")),
    ];
    proptest::collection::vec(word, 1..24).prop_map(|words| words.join(" "))
}

fn mutated_seed() -> impl Strategy<Value = String> {
    (
        proptest::sample::select(SEEDS.to_vec()),
        proptest::sample::select(VOCABULARY.to_vec()),
        any::<proptest::sample::Index>(),
        0..3u8,
    )
        .prop_map(|(seed, token, at, how)| {
            let words: Vec<&str> = seed.split(' ').collect();
            let i = at.index(words.len());
            let mut out: Vec<&str> = words.clone();
            match how {
                0 => out[i] = token,
                1 => out.insert(i, token),
                _ => {
                    out.remove(i);
                }
            }
            out.join(" ")
        })
}

/// A session with a view `t`, a CSV table `f` and a CSV sink `out_csv`, all in `dir`.
fn session(dir: &std::path::Path) -> Session {
    let input = dir.join("in.csv");
    std::fs::write(&input, "1,2021-01-01\n2,x\n,\n").unwrap();
    let mut s = Session::new(tideline::clock::ManualClock::new(1_600_000_000_000_000_000));
    let setup = format!(
        "CREATE TEMPORARY VIEW t AS SELECT * FROM (VALUES (1, '2021-01-01', TIMESTAMP '2021-01-01 10:00:00'), \
         (2, 'x,y', TIMESTAMP '1969-12-31 23:59:59.999'), (CAST(NULL AS INT), CAST(NULL AS STRING), CAST(NULL AS TIMESTAMP(3)))) AS v(a, b, c);
         CREATE TABLE f (x INT, y STRING) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv', 'csv.ignore-parse-errors' = 'true');
         CREATE TABLE out_csv (a INT, b STRING) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');",
        input.display(),
        dir.join("out").display()
    );
    assert_eq!(run(&mut s, &setup, dir), None);
    s
}

/// Runs every statement of `sql`; errors are fine, panics are not. Returns the first error.
fn run(session: &mut Session, sql: &str, dir: &std::path::Path) -> Option<String> {
    let sql = sql.replace("PATH", &dir.join("in.csv").display().to_string());
    let (statements, _) = split_statements(&sql);
    let mut first_error = None;
    for statement in &statements {
        let error = match parse_statement(statement) {
            Ok(parsed) => {
                let mut out = Vec::new();
                tideline::client::execute(session, &parsed, &mut out)
                    .err()
                    .map(|e| tideline::client::render_error(&e, &sql))
            }
            Err(e) => Some(e.render(&sql)),
        };
        first_error = first_error.or(error);
    }
    first_error
}

fn check(sql: &str) -> Option<String> {
    if std::env::var_os("TIDELINE_TRACE").is_some() {
        eprintln!("SQL: {sql}");
    }
    let dir = std::env::temp_dir().join(format!(
        "tideline-random-{}-{:x}",
        std::process::id(),
        sql.len() as u64 * 31 + sql.bytes().map(u64::from).sum::<u64>()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut s = session(&dir);
    let error = run(&mut s, sql, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    // A panic on a split's thread comes back as this error rather than unwinding here.
    if let Some(e) = &error {
        assert!(
            !e.contains("a split failed"),
            "a split panicked on {sql:?}: {e}"
        );
    }
    error
}

proptest! {
    // PROPTEST_CASES raises the count for a longer hunt; CI runs the default.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(300),
        ..ProptestConfig::default()
    })]

    #[test]
    fn token_soup_never_panics(sql in token_soup()) {
        let _ = check(&sql);
    }

    #[test]
    fn mutated_statements_never_panic(sql in mutated_seed()) {
        let _ = check(&sql);
    }

    #[test]
    fn arbitrary_text_never_panics(sql in "\\PC{0,80}") {
        let _ = check(&sql);
    }
}

/// The seeds must run, except the ones that need later features, so that the mutations
/// start from statements that reach execution.
#[test]
fn every_seed_statement_runs() {
    for seed in SEEDS {
        let error = check(seed);
        if seed.contains("TABLE(TUMBLE") {
            // f has no time attribute: Flink's error, from the binder.
            assert!(
                error.is_some_and(|e| e.contains("requires the timecol")),
                "{seed}"
            );
        } else {
            assert_eq!(error, None, "{seed}");
        }
    }
}

/// Inputs a review found to overflow or slice badly; each must end in a value or an error.
#[test]
fn edge_inputs_do_not_panic() {
    for sql in [
        "SELECT CONVERT_TZ('2021-01-01 00:00:00', 'GMT+é1', 'UTC')",
        "SELECT UNIX_TIMESTAMP('2021-01-01 00:00:00.99999999999999', 'yyyy-MM-dd HH:mm:ss.S')",
        "SELECT TO_TIMESTAMP('9223372036854775807 PM', 'h a')",
        "SELECT TO_TIMESTAMP('9000000000000000000-01-01', 'yyyy-MM-dd')",
        "SELECT DATE_FORMAT('700000000000000000-01-01 00:00:00', 'yyyy')",
        "SELECT TIMESTAMPADD(MONTH, 400000000000000000, TIMESTAMP '2021-01-01 00:00:00')",
        "SELECT UNIX_TIMESTAMP('2262-04-11 23:00:00 -0800', 'yyyy-MM-dd HH:mm:ss Z')",
        "SET 'table.local-time-zone' = 'America/Los_Angeles'; SELECT UNIX_TIMESTAMP('2262-04-11 20:00:00')",
        "SELECT TIMESTAMPADD(DAY, a, c), TIMESTAMPDIFF(DAY, c, c), EXTRACT(DAY FROM c) FROM t WHERE a > 100",
        // Bare NULL conditions (once a panic: the filter was a NullArray).
        "SELECT a FROM t WHERE NULL",
        "SELECT CASE WHEN NULL THEN 1 ELSE 2 END, IF(NULL, 1, 2), NULL IS TRUE, NOT NULL FROM t",
        "SELECT a FROM t WHERE NULL AND a > 0 OR NULL",
    ] {
        let _ = check(sql);
    }
}
