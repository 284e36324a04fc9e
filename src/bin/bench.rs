//! Throughput benchmarks: `cargo run --release --bin bench`.
//!
//! 1. datagen → filter → project → blackhole (the stateless pipeline on one core);
//! 2. CSV decoding of a generated 3-column file.

use std::io::Write;
use std::time::Instant;

use tideline::client::Session;

const ROWS: u64 = 20_000_000;

/// Runs `sql` and prints the rate at which it moved `rows` rows.
fn report(session: &mut Session, sql: &str, what: &str, rows: u64) {
    let start = Instant::now();
    assert!(tideline::client::run_script(
        session,
        sql,
        &mut std::io::sink()
    ));
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{what}: {rows} rows in {secs:.2} s = {:.1} M rows/s",
        rows as f64 / secs / 1e6
    );
}

fn main() {
    let sql = format!(
        "CREATE TABLE src (id BIGINT, price DOUBLE, qty INT) WITH ('connector' = 'datagen', \
         'rows-per-second' = '0', 'number-of-rows' = '{ROWS}', 'fields.qty.min' = '0', 'fields.qty.max' = '100');\n\
         CREATE TABLE sink (id BIGINT, total DOUBLE) WITH ('connector' = 'blackhole');\n\
         INSERT INTO sink SELECT id, price * qty FROM src WHERE qty > 50;"
    );
    let mut session = Session::default();
    report(&mut session, &sql, "datagen→filter→project→blackhole", ROWS);

    let lines: u64 = 2_000_000;
    let path = std::env::temp_dir().join("tideline-bench.csv");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("temp file"));
    for i in 0..lines {
        writeln!(file, "{i},user_{},{}.{:02}", i % 1000, i % 500, i % 100).expect("write");
    }
    drop(file);
    let sql = format!(
        "CREATE TABLE csv_src (id BIGINT, name STRING, amount DECIMAL(10, 2)) WITH ('connector' = 'filesystem', \
         'path' = '{}', 'format' = 'csv');\n\
         CREATE TABLE sink2 (id BIGINT, name STRING, amount DECIMAL(10, 2)) WITH ('connector' = 'blackhole');\n\
         INSERT INTO sink2 SELECT * FROM csv_src;",
        path.display()
    );
    report(&mut session, &sql, "csv → blackhole", lines);
    let _ = std::fs::remove_file(&path);
}
