//! The `jdbc` sink against a real PostgreSQL: upserts of an updating query leave its final
//! result (deletes included), a table without a key takes appended rows of every type, and
//! the errors a user meets without a server or with an updating query into a keyless table.
//!
//! The server comes from `TIDELINE_PG_URL` (`jdbc:postgresql://127.0.0.1:54329/postgres`) and
//! `TIDELINE_PG_USER`, which `.ci/run` sets after starting one; each test makes its own
//! database and drops it. Without `TIDELINE_PG_URL` the tests that need a server say so and
//! pass.

#[path = "support/postgres.rs"]
mod postgres_support;
#[path = "support/script.rs"]
mod script_support;
use postgres_support::Database;
use script_support::run;

/// Seed 004's clicks, as a file.
fn clicks(dir: &std::path::Path) -> String {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("clicks.csv"),
        "Mary,./home,2020-04-15 12:00:00\nBob,./cart,2020-04-15 12:00:00\n\
         Mary,./prod?id=1,2020-04-15 12:00:05\nLiz,./home,2020-04-15 12:01:00\n\
         Bob,./prod?id=3,2020-04-15 12:01:30\nMary,./prod?id=7,2020-04-15 12:01:45\n",
    )
    .unwrap();
    format!(
        "CREATE TABLE clicks (`user` STRING, url STRING, cTime TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n",
        dir.join("clicks.csv").display()
    )
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("tideline-jdbc-{}-{name}", std::process::id()))
}

#[test]
fn upserts_of_an_updating_aggregate_leave_its_final_result() {
    let Some(db) = Database::create() else {
        return;
    };
    db.client(true)
        .batch_execute(
            "CREATE TABLE counts (user_name TEXT PRIMARY KEY, cnt BIGINT, last_click TIMESTAMP(3))",
        )
        .unwrap();
    let dir = temp_dir("upsert");
    for mode in ["streaming", "batch"] {
        db.client(true).batch_execute("TRUNCATE counts").unwrap();
        let script = format!(
            "SET 'execution.runtime-mode' = '{mode}';\n{}\
             CREATE TABLE pg (user_name STRING NOT NULL, cnt BIGINT, last_click TIMESTAMP(3), PRIMARY KEY (user_name) NOT ENFORCED) \
             WITH ('connector' = 'jdbc', 'url' = '{}', 'table-name' = 'counts', 'username' = '{}', 'sink.buffer-flush.max-rows' = '2');\n\
             INSERT INTO pg SELECT `user`, COUNT(*), MAX(cTime) FROM clicks GROUP BY `user`;",
            clicks(&dir),
            db.url(),
            db.user
        );
        let (ok, out) = run(&script);
        assert!(ok, "{mode}: {out}");
        assert_eq!(
            db.rows("SELECT user_name, cnt, last_click FROM counts"),
            [
                "Bob | 2 | 2020-04-15 12:01:30",
                "Liz | 1 | 2020-04-15 12:01:00",
                "Mary | 3 | 2020-04-15 12:01:45"
            ],
            "{mode}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn deletes_reach_the_table() {
    let Some(db) = Database::create() else {
        return;
    };
    db.client(true)
        .batch_execute("CREATE TABLE latest (url TEXT PRIMARY KEY, user_name TEXT)")
        .unwrap();
    let dir = temp_dir("delete");
    // The two latest clicks: every older one is deleted as newer ones come.
    let script = format!(
        "{}CREATE TABLE pg (url STRING NOT NULL, user_name STRING, PRIMARY KEY (url) NOT ENFORCED) \
         WITH ('connector' = 'jdbc', 'url' = '{}', 'table-name' = 'public.latest', 'username' = '{}', 'sink.buffer-flush.max-rows' = '1');\n\
         INSERT INTO pg SELECT url, `user` FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY cTime DESC) AS rn FROM clicks) WHERE rn <= 2;",
        clicks(&dir),
        db.url(),
        db.user
    );
    let (ok, out) = run(&script);
    assert!(ok, "{out}");
    assert_eq!(
        db.rows("SELECT url, user_name FROM latest"),
        ["./prod?id=3 | Bob", "./prod?id=7 | Mary"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_table_without_a_key_takes_appended_rows_of_every_type() {
    let Some(db) = Database::create() else {
        return;
    };
    db.client(true)
        .batch_execute(
            "CREATE TABLE things (name TEXT, n INT, big BIGINT, d DECIMAL(10, 2), x DOUBLE PRECISION, ok BOOLEAN, \
             day DATE, ts TIMESTAMP(3), ltz TIMESTAMPTZ, raw BYTEA)",
        )
        .unwrap();
    let script = format!(
        "SET 'table.local-time-zone' = 'Asia/Shanghai';\n\
         CREATE TABLE pg (name STRING, n INT, big BIGINT, d DECIMAL(10, 2), x DOUBLE, ok BOOLEAN, day DATE, ts TIMESTAMP(3), ltz TIMESTAMP_LTZ(3), raw BYTES) \
         WITH ('connector' = 'jdbc', 'url' = '{}', 'table-name' = 'things', 'username' = '{}');\n\
         INSERT INTO pg VALUES ('O''Brien \\ \"q\"', 1, 9007199254740993, 12.35, 0.1, TRUE, DATE '2024-02-29', TIMESTAMP '2024-03-10 02:30:00.123', TO_TIMESTAMP_LTZ(0, 3), x'00ff'), \
         (CAST(NULL AS STRING), CAST(NULL AS INT), CAST(NULL AS BIGINT), CAST(NULL AS DECIMAL(10, 2)), CAST(NULL AS DOUBLE), CAST(NULL AS BOOLEAN), CAST(NULL AS DATE), CAST(NULL AS TIMESTAMP(3)), CAST(NULL AS TIMESTAMP_LTZ(3)), CAST(NULL AS BYTES));",
        db.url(),
        db.user
    );
    let (ok, out) = run(&script);
    assert!(ok, "{out}");
    assert_eq!(
        db.rows(
            "SELECT name, n, big, d, x, ok, day, ts, to_char(ltz AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), encode(raw, 'hex') FROM things"
        ),
        [
            "NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL",
            "O'Brien \\ \"q\" | 1 | 9007199254740993 | 12.35 | 0.1 | t | 2024-02-29 | 2024-03-10 02:30:00.123 | 1970-01-01 00:00:00 | 00ff",
        ]
    );
    // The same table read back as a bounded source gives the values written.
    let (ok, out) = run(&format!(
        "SET 'table.local-time-zone' = 'Asia/Shanghai';\n\
         SET 'execution.runtime-mode' = 'batch';\n\
         CREATE TABLE pg (name STRING, n INT, big BIGINT, d DECIMAL(10, 2), x DOUBLE, ok BOOLEAN, day DATE, ts TIMESTAMP(3), ltz TIMESTAMP_LTZ(3), raw BYTES) \
         WITH ('connector' = 'jdbc', 'url' = '{}', 'table-name' = 'things', 'username' = '{}');\n\
         SELECT name, n, big, d, x, ok, day, ts, ltz, raw FROM pg WHERE n = 1;\n\
         SELECT COUNT(*), COUNT(name) FROM pg;",
        db.url(),
        db.user
    ));
    assert!(ok, "{out}");
    assert!(
        out.contains("| O'Brien \\ \"q\" | 1 | 9007199254740993 | 12.35 | 0.1 | TRUE | 2024-02-29 | 2024-03-10 02:30:00.123 | 1970-01-01 08:00:00.000 | x'00ff' |"),
        "{out}"
    );
    assert!(out.contains("|      2 |      1 |"), "{out}");
}

#[test]
fn a_refused_row_fails_the_job_naming_the_table() {
    let Some(db) = Database::create() else {
        return;
    };
    db.client(true)
        .batch_execute("CREATE TABLE strict (k INT PRIMARY KEY, v TEXT NOT NULL)")
        .unwrap();
    let script = format!(
        "CREATE TABLE pg (k INT NOT NULL, v STRING, PRIMARY KEY (k) NOT ENFORCED) \
         WITH ('connector' = 'jdbc', 'url' = '{}', 'table-name' = 'strict', 'username' = '{}');\n\
         INSERT INTO pg VALUES (1, 'a'), (2, CAST(NULL AS STRING));",
        db.url(),
        db.user
    );
    let (ok, out) = run(&script);
    assert!(!ok);
    assert!(
        out.contains("table 'pg'") && out.contains("null value"),
        "{out}"
    );
}

#[test]
fn an_unreachable_server_is_a_clear_error() {
    let (ok, out) = run(
        "CREATE TABLE pg (k INT NOT NULL, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://127.0.0.1:1/db', 'table-name' = 't');\n\
         INSERT INTO pg VALUES (1);",
    );
    assert!(!ok);
    assert!(
        out.contains("table 'pg': cannot connect to 'jdbc:postgresql://127.0.0.1:1/db'"),
        "{out}"
    );
}

#[test]
fn options_and_types_are_checked_before_the_job() {
    let (ok, out) = run(
        "CREATE TABLE pg (k INT) WITH ('connector' = 'jdbc', 'url' = 'jdbc:mysql://localhost/db', 'table-name' = 't');\n\
         INSERT INTO pg VALUES (1);",
    );
    assert!(!ok && out.contains("is not a PostgreSQL URL"), "{out}");
    let (ok, out) = run(
        "CREATE TABLE pg (k ARRAY<INT>) WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://localhost/db', 'table-name' = 't');\n\
         INSERT INTO pg VALUES (ARRAY[1]);",
    );
    assert!(
        !ok && out.contains("PostgreSQL cannot hold column 'k' of type ARRAY<INT>"),
        "{out}"
    );
}

#[test]
fn an_updating_query_into_a_table_without_a_key_is_refused() {
    let dir = temp_dir("refused");
    let (ok, out) = run(&format!(
        "{}CREATE TABLE pg (user_name STRING, cnt BIGINT) WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://127.0.0.1:1/db', 'table-name' = 'counts');\n\
         INSERT INTO pg SELECT `user`, COUNT(*) FROM clicks GROUP BY `user`;",
        clicks(&dir)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!ok);
    assert!(
        out.contains("Table sink 'default_catalog.default_database.pg' doesn't support consuming update changes which is produced by node GroupAggregate(groupBy=[user], select=[user, COUNT(*) AS EXPR$1])"),
        "{out}"
    );
}
