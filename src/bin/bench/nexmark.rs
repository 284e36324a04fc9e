//! The Nexmark benchmark (issue 24): `cargo run --release --bin bench -- nexmark
//! [--events N] [--only q5,q7] [--parallelism 1,2] [--queries DIR]`.
//!
//! Each query of the benchmark's directory (`../shared/nexmark/queries/` by default) runs
//! unchanged, its placeholders substituted as Flink's runner substitutes them (the V1 suite:
//! 10 M events a second of event time, proportions 1/3/46), on the built-in `nexmark` source
//! into the query's own sink, at each parallelism asked. `count_char`, q14's user function,
//! is registered in Rust before the script's `CREATE FUNCTION` names its Java class. The
//! generator alone (every column into blackhole) is measured first: the limit of every
//! other figure. Figures are events per CPU-second of this process (all its threads).

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use arrow_array::cast::AsArray;
use arrow_array::{ArrayRef, Int64Array};
use tideline::api::{ScalarFunction, Signature};
use tideline::client::Session;
use tideline::types::{DataType, TypeKind};

use super::cpu_seconds;

/// Nexmark's `count_char(s, c)`: how many bytes of `s` equal the first byte of `c` (0 for a
/// NULL `s`), as the benchmark's Java function counts.
struct CountChar;

impl ScalarFunction for CountChar {
    fn signature(&self, args: &[DataType]) -> Result<Signature, String> {
        if args.len() != 2 || !args.iter().all(|a| a.kind.is_string()) {
            return Err("count_char(STRING, STRING)".into());
        }
        Ok(Signature::new(
            vec![DataType::string(), DataType::string()],
            DataType::not_null(TypeKind::BigInt),
        ))
    }

    fn eval(&self, args: &[ArrayRef], _rows: usize) -> Result<ArrayRef, String> {
        let (text, character) = (args[0].as_string::<i32>(), args[1].as_string::<i32>());
        let counts: Int64Array = text
            .iter()
            .zip(character.iter())
            .map(|(s, c)| {
                let wanted = c.and_then(|c| c.bytes().next());
                match (s, wanted) {
                    (Some(s), Some(b)) => s.bytes().filter(|&x| x == b).count() as i64,
                    _ => 0,
                }
            })
            .collect();
        Ok(Arc::new(counts))
    }
}

/// The benchmark's options.
struct Options {
    events: u64,
    only: Option<Vec<String>>,
    parallelism: Vec<u32>,
    queries: std::path::PathBuf,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        events: 10_000_000,
        only: None,
        parallelism: vec![1, 2],
        queries: std::path::PathBuf::from("../shared/nexmark/queries"),
    };
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--events" => {
                options.events = value()?.parse().map_err(|e| format!("--events: {e}"))?
            }
            "--only" => options.only = Some(value()?.split(',').map(str::to_string).collect()),
            "--parallelism" => {
                options.parallelism = value()?
                    .split(',')
                    .map(|p| p.parse().map_err(|e| format!("--parallelism: {e}")))
                    .collect::<Result<_, _>>()?
            }
            "--queries" => options.queries = value()?.into(),
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(options)
}

/// The script of query `name`: the table, the views, the query, placeholders substituted.
fn script(
    dir: &std::path::Path,
    name: &str,
    events: u64,
    work: &std::path::Path,
) -> Result<String, String> {
    let read = |file: &str| {
        std::fs::read_to_string(dir.join(file))
            .map_err(|e| format!("{}: {e}", dir.join(file).display()))
    };
    let text = format!(
        "{};\n{};\n{}",
        read("ddl_gen.sql")?.trim().trim_end_matches(';'),
        read("ddl_views.sql")?.trim().trim_end_matches(';'),
        read(&format!("{name}.sql"))?
    );
    let work = work.display().to_string();
    Ok(text
        .replace("${TPS}", "10000000")
        .replace("${EVENTS_NUM}", &events.to_string())
        .replace("${PERSON_PROPORTION}", "1")
        .replace("${AUCTION_PROPORTION}", "3")
        .replace("${BID_PROPORTION}", "46")
        .replace("${NEXMARK_TABLE}", "datagen")
        .replace("${FLINK_HOME}", &work)
        .replace("${NEXMARK_DIR}", &work)
        .replace("${SUBMIT_TIME}", "run"))
}

/// Runs `script` in a session of its own with `count_char` registered: CPU seconds, or what
/// failed.
fn run(script: &str, parallelism: u32) -> Result<(f64, f64), String> {
    let mut session = Session::default();
    session
        .register_function("count_char", Arc::new(CountChar))
        .map_err(|e| e.to_string())?;
    let script = format!(
        "SET 'table.dml-sync' = 'true';\nSET 'parallelism.default' = '{parallelism}';\n{script}"
    );
    let start = Instant::now();
    let cpu_start = cpu_seconds();
    let (statements, _) = tideline::sql::split::split_statements(&script);
    for statement in &statements {
        tideline::sql::parser::parse_statement(statement)
            .map_err(tideline::session::StatementError::from)
            .and_then(|parsed| {
                tideline::client::execute(&mut session, &parsed, &mut std::io::sink())
            })
            .map_err(|e| {
                // The message's first line is the reason.
                e.to_string().lines().next().unwrap_or_default().to_string()
            })?;
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu = cpu_start.zip(cpu_seconds()).map_or(wall, |(a, b)| b - a);
    Ok((cpu, wall))
}

pub fn main(args: &[String]) {
    let options = match options(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("bench nexmark: {e}");
            std::process::exit(2);
        }
    };
    let work = std::env::temp_dir().join(format!("tideline-nexmark-{}", std::process::id()));
    let data = work.join("data");
    std::fs::create_dir_all(&data).expect("a working directory");
    // q13's side input: 10,000 lines `i,i`.
    let side: String = (0..10_000).map(|i| format!("{i},{i}\n")).collect();
    std::fs::write(data.join("side_input.txt"), side).expect("q13's side input");

    let mut names: Vec<String> = std::fs::read_dir(&options.queries)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter_map(|f| f.strip_suffix(".sql").map(str::to_string))
                .filter(|f| f.starts_with('q') && f[1..].parse::<u32>().is_ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort_by_key(|n| n[1..].parse::<u32>().unwrap_or(0));
    if let Some(only) = &options.only {
        names.retain(|n| only.contains(n));
    }
    let generator = "CREATE TABLE generated (event_type INT, person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>, auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>, bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>) WITH ('connector' = 'blackhole');\nINSERT INTO generated SELECT event_type, person, auction, bid FROM datagen;";
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let queries = std::iter::once(("generator".to_string(), None))
        .chain(names.iter().map(|n| (n.clone(), Some(n.clone()))));
    for (label, query) in queries {
        let text = match &query {
            None => script(&options.queries, "q0", options.events, &work).map(|s| {
                // The table and views of q0's script, then every column into blackhole.
                let ddl = s[..s.find("CREATE TABLE nexmark_q0").unwrap_or(s.len())].to_string();
                format!("{ddl}\n{generator}")
            }),
            Some(name) => script(&options.queries, name, options.events, &work),
        };
        let mut cells = Vec::new();
        for &p in &options.parallelism {
            let cell = match text.as_ref().map_err(String::clone).and_then(|t| run(t, p)) {
                Ok((cpu, wall)) => format!(
                    "{:.2} M/CPU-s ({cpu:.1} CPU-s, {wall:.1} s)",
                    options.events as f64 / cpu.max(1e-3) / 1e6
                ),
                Err(e) => format!("fails: {e}"),
            };
            println!("{label} p={p}: {cell}");
            let _ = std::io::stdout().flush();
            cells.push(cell);
        }
        rows.push((label, cells));
    }
    println!();
    println!(
        "| query | {} |",
        options
            .parallelism
            .iter()
            .map(|p| format!("parallelism {p}"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|{}", "---|".repeat(options.parallelism.len()));
    for (label, cells) in rows {
        println!("| {label} | {} |", cells.join(" | "));
    }
    let _ = std::fs::remove_dir_all(&work);
}
