//! Throughput benchmarks: `cargo run --release --bin bench`; the Nexmark benchmark with
//! `cargo run --release --bin bench -- nexmark` (`nexmark.rs`).
//!
//! `BENCH_ONLY=json` runs only the workloads whose name holds `json` (and the baseline).
//! Each workload is timed in the same run as a baseline, datagen → blackhole (generation and
//! the runtime with no operator), and reported both in rows/s and as a ratio to it:
//! 1. datagen → filter → project → blackhole (the stateless pipeline on one core), and the
//!    same with a CASE and an AND whose later operands can fail (a division), which are
//!    evaluated only on the rows that reach them;
//! 2. CSV decoding: a generated 3-column file → blackhole;
//! 3. CSV encoding: datagen → filesystem sink in CSV;
//! 4. JSON decoding: a generated file of 4-field objects (~80 bytes a line) → blackhole;
//! 5. JSON encoding: datagen → filesystem sink in JSON;
//! 6. watermark generation: datagen with a computed event time → blackhole, with and without
//!    a WATERMARK (the difference is the per-row cost of generating watermarks);
//! 7. a group window: TUMBLE(1 min) COUNT and SUM grouped by 10,000 keys over 10 M rows 10 ms
//!    apart (about one row per key and window) and 1 ms apart (six), at parallelism 1 and 2;
//! 8. updating operators: GROUP BY over 1 M keys, top-3 per key, window deduplication, and a
//!    regular inner join of two 1 M-row inputs;
//! 9. windowing TVFs: TUMBLE(1 s) and HOP(10 s, slide 1 s) COUNT by 10,000 keys over the same
//!    10 M rows (HOP's cost as a multiple of TUMBLE's), and a window Top-3;
//! 10. checkpoints (docs/design/0008 §7): the GROUP BY over 1 M keys without and with 1 s
//!     checkpoints, alternating, and the checkpoints' sizes and durations (trigger to
//!     `_metadata`);
//! 11. Kafka, when `TIDELINE_KAFKA_BOOTSTRAP` names a broker (`scripts/kafka-broker.sh`):
//!     datagen → a topic in JSON (4 fields), and the topic read back → blackhole. The CPU
//!     is this process's (Tideline's and librdkafka's threads), not the broker's.

mod nexmark;

use std::io::Write;
use std::time::Instant;

use tideline::client::Session;

/// The allocator the `tideline` binary uses, so the numbers are its.
#[global_allocator]
static ALLOCATOR: tideline::runtime::allocator::Allocator = tideline::runtime::allocator::Allocator;

const ROWS: u64 = 20_000_000;

/// CPU seconds this process has used, all threads (Linux `/proc/self/stat`, in clock ticks
/// of 10 ms); `None` elsewhere. The machine may be shared, so CPU time, not wall time, is the
/// measure: rows per CPU-second.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let user: f64 = fields.get(11)?.parse().ok()?;
    let system: f64 = fields.get(12)?.parse().ok()?;
    Some((user + system) / 100.0)
}

/// `measure` for a keyed operator, which also reports its state's peak memory per key
/// against `raw` bytes of key and values per key. `job(keys)` is the workload over `keys`
/// keys. For the memory it runs in processes of its own (this binary with `--script`), over
/// a tenth of the keys and over all, [`PEAK_RUNS`] times each. A process's peak is the
/// state's plus what any job holds (the binary, batches in flight, the allocator's own
/// pages, which vary by megabytes from run to run with the threads' timing), so the
/// difference of the two median peaks per key of difference is the state's cost.
fn measure_state(
    session: &mut Session,
    what: &str,
    job: impl Fn(u64) -> String,
    rows: impl Fn(u64) -> u64,
    keys: u64,
    raw: u64,
) -> f64 {
    let rate = measure(session, &job(keys), what, rows(keys));
    if rate.is_nan() {
        return rate;
    }
    let few = keys / 10;
    if let (Some(small), Some(large)) = (median_peak(&job(few)), median_peak(&job(keys))) {
        let per_key = large.1.saturating_sub(small.1) as f64 / (keys - few) as f64;
        let mb = |(low, median, high): (u64, u64, u64)| {
            format!(
                "{:.1} MB ({:.1}-{:.1})",
                median as f64 / 1e6,
                low as f64 / 1e6,
                high as f64 / 1e6
            )
        };
        println!(
            "  peak memory, median of {PEAK_RUNS}: {} over all keys, {} over a tenth: \
             {per_key:.1} bytes per key, {:.2}x the {raw} raw bytes",
            mb(large),
            mb(small),
            per_key / raw as f64
        );
    }
    rate
}

/// A datagen table `name` of `rows` rows (id BIGINT in sequence, v INT in 0..=`v_max`) with
/// a computed key `k` of `keys` values.
fn keyed_source(name: &str, keys: u64, rows: u64, v_max: u64) -> String {
    format!(
        "CREATE TABLE {name} (id BIGINT, v INT, k AS id % {keys}) WITH ('connector' = 'datagen', \
         'rows-per-second' = '1000000000000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', \
         'fields.id.end' = '{}', 'fields.v.min' = '0', 'fields.v.max' = '{v_max}');\n",
        rows - 1
    )
}

/// The GROUP BY over 1 M keys without and with 1 s checkpoints into `dir`, two runs each,
/// alternating; prints the checkpoints' sizes and durations. Returns the better rate of each.
fn checkpoints(session: &mut Session, dir: &std::path::Path, rows: u64) -> [f64; 2] {
    let mut best = [f64::NAN; 2];
    for round in 0..2 {
        for (i, with) in [false, true].into_iter().enumerate() {
            let name = format!("ckpt_{round}_{i}");
            let settings = if with {
                format!(
                    "SET 'execution.checkpointing.interval' = '1 s';
                     SET 'execution.checkpointing.dir' = '{}';
                     SET 'execution.checkpointing.num-retained' = '1000';
",
                    dir.display()
                )
            } else {
                String::new()
            };
            let sql = format!(
                "{settings}{}CREATE TABLE {name}_sink (k BIGINT, c BIGINT, s INT) WITH ('connector' = 'blackhole');
                 INSERT INTO {name}_sink SELECT k, COUNT(*), SUM(v) FROM {name}_src GROUP BY k;
                 RESET 'execution.checkpointing.interval';",
                keyed_source(&format!("{name}_src"), 1_000_000, rows, 100)
            );
            let what = if with {
                "checkpoint: GROUP BY 1 M keys with 1 s checkpoints"
            } else {
                "checkpoint: GROUP BY 1 M keys without checkpoints"
            };
            let rate = measure(session, &sql, what, rows);
            if best[i].is_nan() || rate > best[i] {
                best[i] = rate;
            }
        }
    }
    // Each completed checkpoint: its bytes, and from its trigger to its `_metadata`.
    let mut found = Vec::new();
    for job in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        for chk in std::fs::read_dir(job.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let metadata = chk.path().join("_metadata");
            let (Ok(text), Ok(meta)) = (std::fs::read(&metadata), std::fs::metadata(&metadata))
            else {
                continue;
            };
            let json: serde_json::Value = serde_json::from_slice(&text).unwrap_or_default();
            let triggered = json["triggered_at"].as_i64().unwrap_or(0);
            let written = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_millis() as i64);
            let bytes: u64 = std::fs::read_dir(chk.path())
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum();
            found.push((written - triggered, bytes));
        }
    }
    if !found.is_empty() {
        found.sort();
        let (fastest, slowest) = (found[0].0, found[found.len() - 1].0);
        let largest = found.iter().map(|f| f.1).max().unwrap_or(0);
        println!(
            "checkpoints: {} completed, {fastest}-{slowest} ms from trigger to _metadata, up to {:.1} MB",
            found.len(),
            largest as f64 / 1e6
        );
    }
    let _ = std::fs::remove_dir_all(dir);
    best
}

/// Datagen → a new topic in JSON, then that topic → blackhole, `rows` rows each way: the
/// rates of both, NaN without a broker. The rows go to partition 0 (`fixed`), so the read is
/// bounded by that partition's offset `rows`.
fn kafka(session: &mut Session, rows: u64) -> [f64; 2] {
    let Ok(server) = std::env::var("TIDELINE_KAFKA_BOOTSTRAP") else {
        println!("kafka: skipped (no TIDELINE_KAFKA_BOOTSTRAP)");
        return [f64::NAN; 2];
    };
    let topic = format!("bench-{}-{}", std::process::id(), rows);
    let columns = "id BIGINT, name STRING, price DOUBLE, qty INT";
    let table = |name: &str, extra: &str| {
        format!(
            "CREATE TABLE {name} ({columns}) WITH ('connector' = 'kafka', 'topic' = '{topic}', \
             'properties.bootstrap.servers' = '{server}', 'format' = 'json'{extra});\n"
        )
    };
    let write = measure(
        session,
        &format!(
            "CREATE TABLE kafka_src ({columns}) WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000000', \
             'number-of-rows' = '{rows}', 'fields.name.length' = '10', 'fields.qty.min' = '0', 'fields.qty.max' = '100');\n\
             {}INSERT INTO kafka_out SELECT * FROM kafka_src;",
            table("kafka_out", ", 'sink.partitioner' = 'fixed'")
        ),
        "kafka: datagen → topic in json",
        rows,
    );
    let read = measure(
        session,
        &format!(
            "{}CREATE TABLE kafka_sink ({columns}) WITH ('connector' = 'blackhole');\n\
             INSERT INTO kafka_sink SELECT * FROM kafka_in;",
            table(
                "kafka_in",
                &format!(
                    ", 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'specific-offsets', \
                     'scan.bounded.specific-offsets' = 'partition:0,offset:{rows}'"
                )
            )
        ),
        "kafka: topic in json → blackhole",
        rows,
    );
    [write, read]
}

/// Runs of each memory measurement.
const PEAK_RUNS: usize = 3;

/// The lowest, median and highest of [`PEAK_RUNS`] peaks of `sql` ([`peak_of`]).
fn median_peak(sql: &str) -> Option<(u64, u64, u64)> {
    let mut peaks = (0..PEAK_RUNS)
        .map(|_| peak_of(sql))
        .collect::<Option<Vec<u64>>>()?;
    peaks.sort_unstable();
    Some((peaks[0], peaks[PEAK_RUNS / 2], peaks[PEAK_RUNS - 1]))
}

/// The peak resident memory of a process of this binary running `sql`, as it reports it.
fn peak_of(sql: &str) -> Option<u64> {
    let output = std::process::Command::new(std::env::current_exe().ok()?)
        .arg("--script")
        .arg(sql)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout).ok()?.trim().parse().ok()
}

/// This process's peak resident memory in bytes (`VmHWM` of `/proc/self/status`: the peak of
/// its own address space, which a parent's pages before `exec` are not part of), Linux only.
fn own_peak() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Runs `sql` and returns the rate, in rows per CPU-second (per wall second where CPU time is
/// not available), at which it moved `rows` rows.
/// `BENCH_ONLY=<text>` runs only the workloads whose name holds the text (and the baseline),
/// for profiling one of them.
fn measure(session: &mut Session, sql: &str, what: &str, rows: u64) -> f64 {
    if let Ok(only) = std::env::var("BENCH_ONLY")
        && !what.contains(&only)
        && !what.starts_with("baseline")
    {
        return f64::NAN;
    }
    let start = Instant::now();
    let cpu_start = cpu_seconds();
    assert!(tideline::client::run_script(
        session,
        sql,
        &mut std::io::sink()
    ));
    let secs = start.elapsed().as_secs_f64();
    let cpu = cpu_start.zip(cpu_seconds()).map(|(a, b)| b - a);
    let rate = rows as f64 / cpu.unwrap_or(secs).max(1e-3);
    println!(
        "{what}: {rows} rows in {secs:.2} s wall, {:.2} s CPU = {:.2} M rows per CPU-second",
        cpu.unwrap_or(f64::NAN),
        rate / 1e6
    );
    rate
}

fn main() {
    // A child of `peak_of`: one script, then its peak memory, and out.
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("nexmark") {
        nexmark::main(&args[2..]);
        return;
    }
    if let [_, flag, sql] = &args[..]
        && flag == "--script"
    {
        let ok = tideline::client::run_script(&mut Session::default(), sql, &mut std::io::sink());
        match own_peak() {
            Some(peak) if ok => println!("{peak}"),
            _ => std::process::exit(1),
        }
        return;
    }
    let mut session = Session::default();
    let source = |name: &str, rows: u64| {
        format!(
            "CREATE TABLE {name} (id BIGINT, price DOUBLE, qty INT) WITH ('connector' = 'datagen', \
             'rows-per-second' = '1000000000000', 'number-of-rows' = '{rows}', 'fields.qty.min' = '0', 'fields.qty.max' = '100');\n"
        )
    };
    let baseline = measure(
        &mut session,
        &format!(
            "{}CREATE TABLE base_sink (id BIGINT, price DOUBLE, qty INT) WITH ('connector' = 'blackhole');\n\
             INSERT INTO base_sink SELECT * FROM base_src;",
            source("base_src", ROWS)
        ),
        "baseline datagen → blackhole",
        ROWS,
    );

    let pipeline = measure(
        &mut session,
        &format!(
            "{}CREATE TABLE sink (id BIGINT, total DOUBLE) WITH ('connector' = 'blackhole');\n\
             INSERT INTO sink SELECT id, price * qty FROM src WHERE qty > 50;",
            source("src", ROWS)
        ),
        "datagen → filter → project → blackhole",
        ROWS,
    );

    let guarded = measure(
        &mut session,
        &format!(
            "{}CREATE TABLE guarded_sink (id BIGINT, ratio BIGINT) WITH ('connector' = 'blackhole');\n\
             INSERT INTO guarded_sink SELECT id, CASE WHEN qty < 5 THEN -1 ELSE id / qty END \
             FROM guarded_src WHERE qty > 2 AND id / qty > 1;",
            source("guarded_src", ROWS).replace("'fields.qty.min' = '0'", "'fields.qty.min' = '1'")
        ),
        "datagen → filter with a division → CASE with a division → blackhole",
        ROWS,
    );

    let lines: u64 = 2_000_000;
    let dir = std::env::temp_dir().join(format!("tideline-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("input.csv");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("temp file"));
    for i in 0..lines {
        writeln!(file, "{i},user_{},{}.{:02}", i % 1000, i % 500, i % 100).expect("write");
    }
    drop(file);
    let decode = measure(
        &mut session,
        &format!(
            "CREATE TABLE csv_src (id BIGINT, name STRING, amount DECIMAL(10, 2)) WITH ('connector' = 'filesystem', \
             'path' = '{}', 'format' = 'csv');\n\
             CREATE TABLE sink2 (id BIGINT, name STRING, amount DECIMAL(10, 2)) WITH ('connector' = 'blackhole');\n\
             INSERT INTO sink2 SELECT * FROM csv_src;",
            path.display()
        ),
        "csv file → blackhole",
        lines,
    );

    let encode = measure(
        &mut session,
        &format!(
            "{}CREATE TABLE csv_out (id BIGINT, price DOUBLE, qty INT) WITH ('connector' = 'filesystem', \
             'path' = '{}', 'format' = 'csv');\n\
             INSERT INTO csv_out SELECT * FROM enc_src;",
            source("enc_src", lines),
            dir.join("out").display()
        ),
        "datagen → csv file",
        lines,
    );

    let json_path = dir.join("input.json");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&json_path).expect("temp file"));
    for i in 0..lines {
        writeln!(
            file,
            r#"{{"id":{},"user":"user_{}","amount":{}.{:02},"ts":"2024-01-{:02} 12:34:56.{:03}"}}"#,
            1_000_000 + i,
            i % 1000,
            i % 500,
            i % 100,
            1 + i % 28,
            i % 1000
        )
        .expect("write");
    }
    drop(file);
    let json_decode = measure(
        &mut session,
        &format!(
            "CREATE TABLE json_src (id BIGINT, `user` STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', \
             'path' = '{}', 'format' = 'json');\n\
             CREATE TABLE sink3 (id BIGINT, `user` STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3)) WITH ('connector' = 'blackhole');\n\
             INSERT INTO sink3 SELECT * FROM json_src;",
            json_path.display()
        ),
        "json file → blackhole",
        lines,
    );

    let json_encode = measure(
        &mut session,
        &format!(
            "{}CREATE TABLE json_out (id BIGINT, price DOUBLE, qty INT) WITH ('connector' = 'filesystem', \
             'path' = '{}', 'format' = 'json');\n\
             INSERT INTO json_out SELECT * FROM json_enc_src;",
            source("json_enc_src", lines),
            dir.join("out-json").display()
        ),
        "datagen → json file",
        lines,
    );
    let _ = std::fs::remove_dir_all(&dir);

    // Event time: 10,000 keys, rows `spacing` ms apart: at 10 ms a 1-minute window holds
    // 6,000 rows (about one per key and window: every row opens and closes a group), at 1 ms
    // 60,000 (six per key and window).
    let window_rows: u64 = 10_000_000;
    let timed_source = |name: &str, watermark: bool, spacing: u32| {
        format!(
            "CREATE TABLE {name} (id BIGINT, v INT, k AS id % 10000, ts AS TO_TIMESTAMP_LTZ(id * {spacing}, 3){}) \
             WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000000', 'fields.id.kind' = 'sequence', \
             'fields.id.start' = '0', 'fields.id.end' = '{}', 'fields.v.min' = '0', 'fields.v.max' = '100');\n",
            if watermark {
                ", WATERMARK FOR ts AS ts - INTERVAL '1' SECOND"
            } else {
                ""
            },
            window_rows - 1
        )
    };
    let unwatermarked = measure(
        &mut session,
        &format!(
            "{}CREATE TABLE ts_sink (k BIGINT, ts TIMESTAMP_LTZ(3)) WITH ('connector' = 'blackhole');\n\
             INSERT INTO ts_sink SELECT k, ts FROM nowm_src;",
            timed_source("nowm_src", false, 10)
        ),
        "watermark: datagen with a computed time → blackhole",
        window_rows,
    );
    let watermarked = measure(
        &mut session,
        &format!(
            "{}CREATE TABLE wm_sink (k BIGINT, ts TIMESTAMP_LTZ(3)) WITH ('connector' = 'blackhole');\n\
             INSERT INTO wm_sink SELECT k, ts FROM wm_src;",
            timed_source("wm_src", true, 10)
        ),
        "watermark: the same with a WATERMARK → blackhole",
        window_rows,
    );
    let mut tumble = Vec::new();
    for (spacing, parallelism) in [(10, 1), (10, 2), (1, 1), (1, 2)] {
        let name = format!("tumble_{spacing}_{parallelism}");
        tumble.push(measure(
            &mut session,
            &format!(
                "SET 'parallelism.default' = '{parallelism}';\n{}\
                 CREATE TABLE {name}_sink (k BIGINT, w TIMESTAMP(3), c BIGINT, s INT) WITH ('connector' = 'blackhole');\n\
                 INSERT INTO {name}_sink SELECT k, TUMBLE_START(ts, INTERVAL '1' MINUTE), COUNT(*), SUM(v) \
                 FROM {name}_src GROUP BY k, TUMBLE(ts, INTERVAL '1' MINUTE);\n\
                 SET 'parallelism.default' = '1';",
                timed_source(&format!("{name}_src"), true, spacing)
            ),
            &format!(
                "window: TUMBLE(1 min) COUNT, SUM by 10 K keys, rows {spacing} ms apart, at parallelism {parallelism}"
            ),
            window_rows,
        ));
    }
    // An updating aggregate: 10 M rows over 1 M keys (ten rows a key, so most rows update
    // a group: -U and +U out), into a sink that takes updates.
    let group_rows: u64 = 10_000_000;
    let group_aggregate = measure_state(
        &mut session,
        "group aggregate: COUNT(*), SUM(v) by 1 M keys (updating) → blackhole",
        |keys| {
            format!(
                "{}CREATE TABLE group_sink (k BIGINT, c BIGINT, s INT) WITH ('connector' = 'blackhole');\n\
                 INSERT INTO group_sink SELECT k, COUNT(*), SUM(v) FROM group_src GROUP BY k;",
                keyed_source("group_src", keys, group_rows, 100)
            )
        },
        |_| group_rows,
        1_000_000,
        // k BIGINT, COUNT(*) BIGINT, SUM(v) INT.
        20,
    );
    // Top-3 per key over inserts: 10 M rows, 1 M keys.
    let top_n = measure_state(
        &mut session,
        "top-N: the 3 largest v per key, 1 M keys (updating) → blackhole",
        |keys| {
            format!(
                "{}CREATE TABLE topn_sink (k BIGINT, v INT, rk BIGINT) WITH ('connector' = 'blackhole');\n\
                 INSERT INTO topn_sink SELECT k, v, rk FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rk FROM topn_src) WHERE rk <= 3;",
                keyed_source("topn_src", keys, group_rows, 1_000_000)
            )
        },
        |_| group_rows,
        1_000_000,
        // Three rows of k BIGINT, v INT.
        36,
    );
    // Window deduplication: the last row per key and 1-minute window, rows 1 ms apart.
    let dedup = measure(
        &mut session,
        &format!(
            "{}CREATE TABLE dedup_sink (k BIGINT, v INT) WITH ('connector' = 'blackhole');\n\
             INSERT INTO dedup_sink SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY ts DESC) AS rn \
             FROM TABLE(TUMBLE(TABLE dedup_src, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) WHERE rn = 1;",
            timed_source("dedup_src", true, 1)
        ),
        "window dedup: last row per key and 1-minute TUMBLE, 10 K keys, rows 1 ms apart",
        window_rows,
    );
    // Windowing TVFs over the same 10 M rows, 10 K keys, 1 ms apart: TUMBLE(1 s) COUNT and
    // HOP(10 s, slide 1 s) COUNT (each row in ten windows, aggregated once per slice), and
    // a window Top-3 per 1-second TUMBLE.
    let tvf = |name: &str, window: &str| {
        format!(
            "{}CREATE TABLE {name}_sink (k BIGINT, ws TIMESTAMP(3), c BIGINT) WITH ('connector' = 'blackhole');\n\
             INSERT INTO {name}_sink SELECT k, window_start, COUNT(*) FROM TABLE({window}) \
             GROUP BY window_start, window_end, k;",
            timed_source(&format!("{name}_src"), true, 1)
        )
    };
    let tvf_tumble = measure(
        &mut session,
        &tvf(
            "tvf_tumble",
            "TUMBLE(TABLE tvf_tumble_src, DESCRIPTOR(ts), INTERVAL '1' SECOND)",
        ),
        "window TVF: TUMBLE(1 s) COUNT by 10 K keys, rows 1 ms apart",
        window_rows,
    );
    let tvf_hop = measure(
        &mut session,
        &tvf(
            "tvf_hop",
            "HOP(TABLE tvf_hop_src, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '10' SECOND)",
        ),
        "window TVF: HOP(10 s, slide 1 s) COUNT by 10 K keys, rows 1 ms apart",
        window_rows,
    );
    let window_top_n = measure(
        &mut session,
        &format!(
            "{}CREATE TABLE wtopn_sink (k BIGINT, v INT, rn BIGINT) WITH ('connector' = 'blackhole');\n\
             INSERT INTO wtopn_sink SELECT k, v, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) AS rn \
             FROM TABLE(TUMBLE(TABLE wtopn_src, DESCRIPTOR(ts), INTERVAL '1' SECOND))) WHERE rn <= 3;",
            timed_source("wtopn_src", true, 1)
        ),
        "window top-N: the 3 largest v per 1-second TUMBLE, rows 1 ms apart",
        window_rows,
    );
    // A regular inner join of two 1 M-row inputs, each key once on each side (2 M rows in,
    // 1 M pairs out).
    let join_rows: u64 = 1_000_000;
    let join = measure_state(
        &mut session,
        "inner join: two 1 M-row inputs on a unique key (2 M rows in)",
        // Every run moves the same rows; over fewer keys, the rows past them have a NULL key,
        // which an inner join does not keep (so the runs differ in the state only, as the
        // aggregate's and Top-N's do).
        |keys| {
            let key = match keys {
                k if k == join_rows => "raw".to_string(),
                k => format!("CASE WHEN raw < {k} THEN raw END"),
            };
            format!(
                "CREATE TABLE join_left (raw BIGINT, v INT, id AS {key}) WITH ('connector' = 'datagen', \
                 'rows-per-second' = '1000000000000', 'fields.raw.kind' = 'sequence', 'fields.raw.start' = '0', \
                 'fields.raw.end' = '{end}');\n\
                 CREATE TABLE join_right (raw BIGINT, w INT, id AS {key}) WITH ('connector' = 'datagen', \
                 'rows-per-second' = '1000000000000', 'fields.raw.kind' = 'sequence', 'fields.raw.start' = '0', \
                 'fields.raw.end' = '{end}');\n\
                 CREATE TABLE join_sink (id BIGINT, v INT, w INT) WITH ('connector' = 'blackhole');\n\
                 INSERT INTO join_sink SELECT l.id, v, w FROM join_left l JOIN join_right r ON l.id = r.id;",
                end = join_rows - 1
            )
        },
        |_| 2 * join_rows,
        join_rows,
        // A row of each side: id BIGINT, v INT and id BIGINT, w INT.
        24,
    );
    if unwatermarked.is_finite() && watermarked.is_finite() {
        println!(
            "watermark generation: {:.1} ns per row",
            (1e9 / watermarked - 1e9 / unwatermarked).max(0.0)
        );
    }

    // Four times the rows, so that each run lasts several 1 s checkpoints.
    let checkpointed = checkpoints(&mut session, &dir.join("checkpoints"), 4 * group_rows);

    let kafka = kafka(&mut session, 2_000_000);

    if tvf_tumble.is_finite() && tvf_hop.is_finite() {
        println!(
            "HOP(10 s, 1 s) costs {:.2}x TUMBLE(1 s) per row",
            tvf_tumble / tvf_hop
        );
    }
    println!("ratios to the baseline (1.00 = as fast as generating rows):");
    for (what, rate) in [
        ("filter+project", pipeline),
        ("guarded division", guarded),
        ("csv decode", decode),
        ("csv encode", encode),
        ("json decode", json_decode),
        ("json encode", json_encode),
        ("watermark", watermarked),
        ("tumble, 10 ms apart, p1", tumble[0]),
        ("tumble, 10 ms apart, p2", tumble[1]),
        ("tumble, 1 ms apart, p1", tumble[2]),
        ("tumble, 1 ms apart, p2", tumble[3]),
        ("group aggregate, 1 M keys", group_aggregate),
        ("top-3 per key, 1 M keys", top_n),
        ("window dedup, 10 K keys", dedup),
        ("TVF TUMBLE(1 s) COUNT, 10 K keys", tvf_tumble),
        ("TVF HOP(10 s, 1 s) COUNT, 10 K keys", tvf_hop),
        ("window top-3 per TUMBLE(1 s)", window_top_n),
        ("inner join, 2 x 1 M rows", join),
        ("group aggregate, 1 M keys, no checkpoints", checkpointed[0]),
        (
            "group aggregate, 1 M keys, 1 s checkpoints",
            checkpointed[1],
        ),
        ("kafka write, json", kafka[0]),
        ("kafka read, json", kafka[1]),
    ] {
        println!("  {what}: {:.2}", rate / baseline);
    }
}
