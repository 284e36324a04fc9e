//! The `kafka` connector against a real Kafka-protocol broker (`scripts/kafka-broker.sh`;
//! tests/support/kafka.rs says where it comes from): bounded reads of partitioned topics in
//! each format equal what was written, the startup and bounded modes, malformed records, a
//! window aggregate over a topic equal to the same over a file, per-partition watermarks
//! with an idle partition, checkpoints taken while it is idle, and the errors for a missing
//! topic or broker.

use std::io::Write;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, atomic::AtomicBool, atomic::Ordering};
use std::time::Duration;

use tideline::client::{Session, render_error};
use tideline::sql::parser::parse_statement;
use tideline::sql::split::split_statements;

#[path = "support/kafka.rs"]
mod kafka_support;
#[path = "support/recovery.rs"]
mod recovery_support;
use kafka_support::{
    bootstrap, bounded_table, consume, create_topic, ends, file_table, final_rows, ok, produce,
    rows, run, table, topic_name,
};

#[test]
fn a_bounded_read_of_a_partitioned_topic_equals_what_was_written() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("bounded");
    create_topic(&server, &topic, 3);
    // 3000 records over 3 partitions, one partition twice as full as another.
    let values: Vec<String> = (0..3000)
        .map(|i| format!(r#"{{"id": {i}, "k": "k{}", "v": {}}}"#, i % 7, i * 3))
        .collect();
    let records: Vec<_> = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            (
                [0, 1, 1, 2][i % 4],
                None,
                Some(v.as_str()),
                1_600_000_000_000,
            )
        })
        .collect();
    produce(&server, &topic, &records);
    let ddl = table(
        "t",
        "id BIGINT, k STRING, v BIGINT",
        &server,
        &topic,
        "'format' = 'json', 'scan.startup.mode' = 'earliest-offset', \
         'scan.bounded.mode' = 'latest-offset'",
    );
    let expected_sum: i64 = (0..3000).map(|i| i * 3).sum();
    for mode in ["batch", "streaming"] {
        for parallelism in [1, 2] {
            let out = ok(&format!(
                "SET 'execution.runtime-mode' = '{mode}';\n\
                 SET 'parallelism.default' = '{parallelism}';\n{ddl}\
                 SELECT COUNT(*) AS n, SUM(v) AS s, COUNT(DISTINCT id) AS d, MIN(id) AS lo, MAX(id) AS hi FROM t;"
            ));
            let last = rows(&out).last().cloned().unwrap_or_default();
            assert!(
                last.ends_with(&format!("3000,{expected_sum},3000,0,2999")),
                "{mode} at parallelism {parallelism}:\n{out}"
            );
        }
    }
    // Grouped by key: each key's count, as a batch query prints it.
    let out = ok(&format!(
        "SET 'execution.runtime-mode' = 'batch';\n{ddl}\
         SELECT k, COUNT(*) AS n FROM t GROUP BY k ORDER BY k;"
    ));
    let expected: Vec<String> = (0..7)
        .map(|k| format!("k{k},{}", (0..3000).filter(|i| i % 7 == k).count()))
        .collect();
    assert_eq!(rows(&out), expected, "{out}");
}

#[test]
fn each_format_reads_what_was_written() {
    let Some(server) = bootstrap() else { return };
    let cases: [(&str, &[&str], &str); 4] = [
        (
            "csv",
            &["1,a,2.5", "2,\"b,c\",0.5", "3,,-1"],
            "'format' = 'csv'",
        ),
        (
            "json",
            &[
                r#"{"id": 1, "s": "a", "d": 2.5}"#,
                r#"{"id": 2, "s": "b,c", "d": 0.5}"#,
                r#"{"id": 3, "d": -1}"#,
            ],
            "'format' = 'json'",
        ),
        (
            "debezium-json",
            &[
                r#"{"before": null, "after": {"id": 1, "s": "a", "d": 2.5}, "op": "c"}"#,
                r#"{"before": null, "after": {"id": 2, "s": "b,c", "d": 0.5}, "op": "c"}"#,
                r#"{"before": null, "after": {"id": 4, "s": "gone", "d": 0}, "op": "c"}"#,
                r#"{"before": {"id": 4, "s": "gone", "d": 0}, "after": null, "op": "d"}"#,
                r#"{"before": null, "after": {"id": 3, "s": null, "d": -1}, "op": "c"}"#,
            ],
            "'format' = 'debezium-json'",
        ),
        (
            "canal-json",
            &[
                r#"{"data": [{"id": 1, "s": "a", "d": 2.5}, {"id": 2, "s": "b,c", "d": 0.5}], "type": "INSERT"}"#,
                r#"{"data": [{"id": 3, "s": null, "d": -1}], "type": "INSERT"}"#,
            ],
            "'format' = 'canal-json'",
        ),
    ];
    for (format, values, options) in cases {
        let topic = topic_name(format);
        create_topic(&server, &topic, 1);
        let records: Vec<_> = values.iter().map(|v| (0, None, Some(*v), 0)).collect();
        produce(&server, &topic, &records);
        // A changelog format is read in streaming mode (Flink refuses it in batch mode).
        let changelog = format.ends_with("-json") && format != "json";
        let out = ok(&format!(
            "{}{}SELECT id, s, d FROM t{};",
            if changelog {
                ""
            } else {
                "SET 'execution.runtime-mode' = 'batch';\n"
            },
            table(
                "t",
                "id INT, s STRING, d DOUBLE",
                &server,
                &topic,
                &format!(
                    "{options}, 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'"
                )
            ),
            if changelog { "" } else { " ORDER BY id" }
        ));
        let empty = if format == "csv" { "" } else { "<NULL>" };
        let mut expected = vec!["1,a,2.5".to_string(), "2,b,c,0.5".to_string()];
        if format == "debezium-json" {
            expected.extend(["4,gone,0.0".to_string(), "4,gone,0.0".to_string()]);
        }
        expected.push(format!("3,{empty},-1.0"));
        if changelog {
            let mut kinds = vec!["+I"; expected.len()];
            if format == "debezium-json" {
                kinds[3] = "-D";
            }
            for (row, kind) in expected.iter_mut().zip(kinds) {
                *row = format!("{kind},{row}");
            }
        }
        assert_eq!(rows(&out), expected, "{format}:\n{out}");
    }
}

#[test]
fn startup_and_bounded_modes_pick_the_offsets_flink_picks() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("modes");
    create_topic(&server, &topic, 2);
    // Partition p holds ids p*100 .. p*100+9, written at times 1000*id.
    let values: Vec<(i32, String, i64)> = (0..2)
        .flat_map(|p| (0..10).map(move |i| (p, p * 100 + i)))
        .map(|(p, id)| (p, format!("{id}"), 1_000 * id as i64))
        .collect();
    let records: Vec<_> = values
        .iter()
        .map(|(p, v, t)| (*p, None, Some(v.as_str()), *t))
        .collect();
    produce(&server, &topic, &records);
    let read = |options: &str| {
        let out = ok(&format!(
            "SET 'execution.runtime-mode' = 'batch';\n{}SELECT id FROM t ORDER BY id;",
            table(
                "t",
                "id INT",
                &server,
                &topic,
                &format!("'format' = 'csv', {options}")
            )
        ));
        rows(&out).join(" ")
    };
    assert_eq!(
        read(
            "'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = 'partition:0,offset:7;partition:1,offset:9', 'scan.bounded.mode' = 'latest-offset'"
        ),
        "7 8 9 109"
    );
    assert_eq!(
        read(
            "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = 'partition:0,offset:2;partition:1,offset:1'"
        ),
        "0 1 100"
    );
    // Times: ids 0-4 written, a moment, then ids 5-9. The records carry the producer's
    // clock, and the test broker looks times up by when it wrote them (docs/design/0009):
    // the moment between the two parts is the same time for both.
    let timed = topic_name("times");
    create_topic(&server, &timed, 1);
    let ids: Vec<String> = (0..10).map(|i| i.to_string()).collect();
    let part = |range: std::ops::Range<usize>| -> Vec<(i32, Option<&str>, Option<&str>, i64)> {
        ids[range]
            .iter()
            .map(|v| (0, None, Some(v.as_str()), -1))
            .collect()
    };
    produce(&server, &timed, &part(0..5));
    std::thread::sleep(Duration::from_millis(200));
    let between = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    std::thread::sleep(Duration::from_millis(200));
    produce(&server, &timed, &part(5..10));
    let read_timed = |options: &str| {
        let out = ok(&format!(
            "SET 'execution.runtime-mode' = 'batch';\n{}SELECT id FROM t ORDER BY id;",
            table(
                "t",
                "id INT",
                &server,
                &timed,
                &format!("'format' = 'csv', {options}")
            )
        ));
        rows(&out).join(" ")
    };
    assert_eq!(
        read_timed(&format!(
            "'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '{between}', 'scan.bounded.mode' = 'latest-offset'"
        )),
        "5 6 7 8 9"
    );
    assert_eq!(
        read_timed(&format!(
            "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp-millis' = '{between}'"
        )),
        "0 1 2 3 4"
    );
    assert_eq!(
        read("'scan.startup.mode' = 'latest-offset', 'scan.bounded.mode' = 'latest-offset'"),
        ""
    );
    // group-offsets without a group.
    let (ok_, out) = run(&format!(
        "{}SELECT * FROM t;",
        table("t", "id INT", &server, &topic, "'format' = 'csv'")
    ));
    assert!(
        !ok_ && out.contains("'properties.group.id' is required"),
        "{out}"
    );
}

#[test]
fn a_malformed_record_names_its_topic_partition_and_offset() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("malformed");
    create_topic(&server, &topic, 1);
    produce(
        &server,
        &topic,
        &[
            (0, None, Some(r#"{"id": 1}"#), 0),
            (0, None, None, 0),
            (0, None, Some(r#"{"id": "x"}"#), 0),
            (0, None, Some(r#"{"id": 3}"#), 0),
        ],
    );
    let query = |options: &str| {
        run(&format!(
            "SET 'execution.runtime-mode' = 'batch';\n{}SELECT SUM(id) AS s, COUNT(*) AS n FROM t;",
            table(
                "t",
                "id INT",
                &server,
                &topic,
                &format!(
                    "'format' = 'json', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'{options}"
                )
            )
        ))
    };
    let (ok_, out) = query("");
    assert!(!ok_, "{out}");
    assert!(
        out.contains(&format!("kafka topic '{topic}' partition 0 offset 2")),
        "{out}"
    );
    // With ignore-parse-errors the field that does not parse is NULL, as Flink's json format
    // sets it; the tombstone (offset 1) is no row.
    let (ok_, out) = query(", 'json.ignore-parse-errors' = 'true'");
    assert!(ok_, "{out}");
    assert_eq!(rows(&out), vec!["4,3"], "{out}");
}

#[test]
fn a_window_aggregate_over_a_topic_equals_the_same_over_a_file() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("window");
    create_topic(&server, &topic, 4);
    // 4000 events over 200 s, out of order within each partition by up to 3 s.
    let lines: Vec<String> = (0..4000i64)
        .map(|i| {
            let ms = i * 50 + [0, 2900, 1200, 400][(i % 4) as usize] - 1500;
            let second = 1_700_000_000_000 + ms.max(0);
            format!("k{},{},{}", i % 5, i % 97, chrono_free_timestamp(second))
        })
        .collect();
    let records: Vec<_> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| ((i % 4) as i32, None, Some(l.as_str()), 0))
        .collect();
    produce(&server, &topic, &records);
    let dir = std::env::temp_dir().join(format!("tideline-kafka-window-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("events.csv");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let columns = "k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '3' SECOND";
    let query = "SELECT window_start, k, COUNT(*) AS n, SUM(v) AS s \
                 FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) \
                 GROUP BY window_start, window_end, k;";
    let sorted = |out: String| {
        let mut r = rows(&out);
        r.sort();
        r
    };
    let from_topic = sorted(ok(&format!(
        "{}{query}",
        table(
            "t",
            columns,
            &server,
            &topic,
            "'format' = 'csv', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'"
        )
    )));
    let from_file = sorted(ok(&format!(
        "CREATE TABLE t ({columns}) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n{query}",
        file.display()
    )));
    std::fs::remove_dir_all(&dir).ok();
    assert!(from_file.len() > 80, "{from_file:?}");
    assert_eq!(from_topic, from_file);
}

/// `yyyy-MM-dd HH:mm:ss.SSS` of epoch milliseconds in UTC (days from the civil calendar).
fn chrono_free_timestamp(millis: i64) -> String {
    let (days, ms) = (millis.div_euclid(86_400_000), millis.rem_euclid(86_400_000));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}.{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// What the session prints, as it prints it.
struct Forward(Sender<String>);

impl Write for Forward {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = self.0.send(String::from_utf8_lossy(buf).into_owned());
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Starts a script on its own thread: what it prints, its result, and its cancel flag.
fn start(
    script: String,
) -> (
    Receiver<String>,
    Receiver<Result<(), String>>,
    Arc<AtomicBool>,
) {
    let mut session = Session::default();
    let cancel = session.cancel.clone();
    let (out_tx, out_rx) = channel();
    let (done_tx, done_rx) = channel();
    std::thread::spawn(move || {
        let mut out = Forward(out_tx);
        let (stmts, _) = split_statements(&script);
        let mut result = Ok(());
        for stmt in &stmts {
            let parsed = parse_statement(stmt).unwrap();
            if let Err(e) = tideline::client::execute(&mut session, &parsed, &mut out) {
                result = Err(render_error(&e, &script));
                break;
            }
        }
        let _ = done_tx.send(result);
    });
    (out_rx, done_rx, cancel)
}

/// Collects what is printed until it holds every one of `texts` (white space runs read as
/// one space) or `wait` has passed; whether it holds them.
fn printed_within(
    out: &Receiver<String>,
    seen: &mut String,
    texts: &[&str],
    wait: Duration,
) -> bool {
    let until = std::time::Instant::now() + wait;
    loop {
        let flat = seen.split_whitespace().collect::<Vec<_>>().join(" ");
        if texts.iter().all(|t| flat.contains(t)) {
            return true;
        }
        let Some(left) = until.checked_duration_since(std::time::Instant::now()) else {
            return false;
        };
        match out.recv_timeout(left) {
            Ok(s) => seen.push_str(&s),
            Err(_) => return false,
        }
    }
}

#[test]
fn an_idle_partition_holds_the_watermark_back_until_its_idle_timeout() {
    let Some(server) = bootstrap() else { return };
    for idle in [false, true] {
        let topic = topic_name("idle");
        create_topic(&server, &topic, 2);
        // Partition 0 moves on through two 10 s windows; partition 1 stays empty.
        let lines: Vec<String> = (0..25)
            .map(|s| format!("a,2020-01-01 00:00:{s:02}"))
            .collect();
        let records: Vec<_> = lines
            .iter()
            .map(|l| (0, None, Some(l.as_str()), 0))
            .collect();
        produce(&server, &topic, &records);
        let idle_option = if idle {
            ", 'scan.watermark.idle-timeout' = '500 ms'"
        } else {
            ""
        };
        let (out, done, cancel) = start(format!(
            "SET 'pipeline.auto-watermark-interval' = '0 ms';\n{}\
             SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) \
             GROUP BY window_start, window_end;",
            table(
                "t",
                "k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts",
                &server,
                &topic,
                &format!("'format' = 'csv', 'scan.startup.mode' = 'earliest-offset'{idle_option}")
            )
        ));
        let mut seen = String::new();
        let windows = [
            "| +I | 2020-01-01 00:00:00.000 | 10 |",
            "| +I | 2020-01-01 00:00:10.000 | 10 |",
        ];
        if idle {
            // Both windows close once partition 1 is idle.
            assert!(
                printed_within(&out, &mut seen, &windows, Duration::from_secs(30)),
                "{seen}"
            );
        } else {
            // Partition 1 holds the watermark at its start: no window closes.
            assert!(
                !printed_within(&out, &mut seen, &windows[..1], Duration::from_secs(4)),
                "{seen}"
            );
        }
        cancel.store(true, Ordering::Relaxed);
        let result = done
            .recv_timeout(Duration::from_secs(20))
            .expect("the query stops when cancelled");
        assert!(
            matches!(&result, Err(e) if e.contains("the query was cancelled")),
            "{result:?}"
        );
    }
}

#[test]
fn a_missing_topic_or_broker_is_a_clear_error() {
    let Some(server) = bootstrap() else { return };
    let (ok_, out) = run(&format!(
        "{}SELECT * FROM t;",
        table(
            "t",
            "id INT",
            &server,
            "no-such-topic-here",
            "'format' = 'csv', 'scan.startup.mode' = 'earliest-offset'"
        )
    ));
    assert!(
        !ok_ && out.contains("topic 'no-such-topic-here' does not exist"),
        "{out}"
    );
    // Nothing listens on port 1.
    let (ok_, out) = run(&format!(
        "{}SELECT * FROM t;",
        table(
            "t",
            "id INT",
            "127.0.0.1:1",
            "x",
            "'format' = 'csv', 'scan.startup.mode' = 'earliest-offset', 'properties.request.timeout.ms' = '2000'"
        )
    ));
    assert!(
        !ok_ && out.contains("cannot read the metadata of topic 'x'"),
        "{out}"
    );
}

/// Records per partition, as `scan.bounded.specific-offsets` for reading exactly them back
/// (the test broker's end offsets are per batch: docs/design/0009).
#[test]
fn rows_written_to_a_topic_read_back_the_same_in_each_format() {
    let Some(server) = bootstrap() else { return };
    let columns = "id INT, s STRING, d DECIMAL(10, 2), ts TIMESTAMP(3), ok BOOLEAN";
    // Text with the characters each format escapes; a CSV field with a line break.
    let lines: Vec<String> = (0..1000)
        .map(|i| {
            let s = match i % 4 {
                0 => format!("plain {i}"),
                1 => format!("\"comma, and \"\"quote\"\" {i}\""),
                2 => format!("\"line\nbreak {i}\""),
                _ => String::new(),
            };
            format!(
                "{i},{s},{}.{:02},2024-02-29 23:59:{:02}.{:03},{}",
                i * 7 - 3000,
                i % 100,
                i % 60,
                i % 1000,
                i % 3 == 0
            )
        })
        .collect();
    let source = file_table("f", columns, &lines, "roundtrip");
    for format in ["json", "csv"] {
        // The CSV reader does not take a record holding a line break yet: those rows stay
        // out of its round trip.
        let filter = if format == "csv" {
            " WHERE id % 4 <> 2"
        } else {
            ""
        };
        let expected = rows(&ok(&format!(
            "SET 'execution.runtime-mode' = 'batch';\n{source}SELECT * FROM f{filter} ORDER BY id;"
        )));
        let count = expected.len();
        assert_eq!(count, if format == "csv" { 750 } else { 1000 });
        let topic = topic_name(&format!("write-{format}"));
        create_topic(&server, &topic, 3);
        let sink = table(
            "k",
            columns,
            &server,
            &topic,
            &format!("'format' = '{format}', 'sink.partitioner' = 'round-robin'"),
        );
        ok(&format!(
            "{source}{sink}INSERT INTO k SELECT * FROM f{filter};"
        ));
        let records = consume(&server, &topic, count);
        assert_eq!(records.len(), count, "{format}");
        // Round-robin: the partitions in turn.
        for p in 0..3 {
            let n = records.iter().filter(|(q, _)| *q == p).count();
            assert_eq!(
                n,
                count / 3 + usize::from((p as usize) < count % 3),
                "{format} partition {p}"
            );
        }
        if format == "json" {
            let first = records
                .iter()
                .find_map(|(_, v)| v.as_deref().filter(|v| v.starts_with("{\"id\":0,")));
            assert_eq!(
                first,
                Some(
                    // Flink writes a DECIMAL as Jackson normalizes it unless
                    // `json.encode.decimal-as-plain-number` is set.
                    r#"{"id":0,"s":"plain 0","d":-3E+3,"ts":"2024-02-29 23:59:00","ok":true}"#
                )
            );
        }
        let back = ok(&format!(
            "SET 'execution.runtime-mode' = 'batch';\n{}SELECT * FROM k ORDER BY id;",
            bounded_table(
                "k",
                columns,
                &server,
                &topic,
                &format!("'format' = '{format}'"),
                &ends(&records, 3)
            )
        ));
        assert_eq!(rows(&back), expected, "{format}");
    }
}

#[test]
fn an_updating_query_goes_through_a_changelog_format_and_is_refused_otherwise() {
    let Some(server) = bootstrap() else { return };
    let lines: Vec<String> = (0..500).map(|i| format!("k{},{}", i % 13, i)).collect();
    let source = file_table("f", "k STRING, v INT", &lines, "changelog");
    let topic = topic_name("changelog");
    create_topic(&server, &topic, 2);
    let columns = "k STRING, n BIGINT, s BIGINT";
    let (ok_, out) = run(&format!(
        "{source}{}INSERT INTO k SELECT k, COUNT(*), SUM(v) FROM f GROUP BY k;",
        table("k", columns, &server, &topic, "'format' = 'json'")
    ));
    assert!(
        !ok_ && out.contains(
            "doesn't support consuming update changes which is produced by node GroupAggregate"
        ),
        "{out}"
    );
    ok(&format!(
        "{source}{}INSERT INTO k SELECT k, COUNT(*), SUM(v) FROM f GROUP BY k;",
        table(
            "k",
            columns,
            &server,
            &topic,
            "'format' = 'debezium-json', 'sink.partitioner' = 'fixed'"
        )
    ));
    let records = consume(&server, &topic, 1);
    assert!(
        records.iter().all(|(p, _)| *p == 0),
        "fixed: partition 0 only"
    );
    let back = ok(&format!(
        "{}SELECT * FROM k;",
        table(
            "k",
            columns,
            &server,
            &topic,
            &format!(
                "'format' = 'debezium-json', 'scan.startup.mode' = 'earliest-offset', \
                 'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = '{}'",
                ends(&records, 2)
            )
        )
    ));
    let expected = rows(&ok(&format!(
        "SET 'execution.runtime-mode' = 'batch';\n{source}SELECT k, COUNT(*), SUM(v) FROM f GROUP BY k ORDER BY k;"
    )));
    assert_eq!(final_rows(&back), expected, "{back}");
}

#[test]
fn a_topic_read_killed_and_restored_commits_every_record_exactly_once() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("recovery");
    create_topic(&server, &topic, 3);
    // Written by Tideline's own sink, round-robin: exactly a third in each partition.
    let rows = 600_000u64;
    ok(&format!(
        "CREATE TABLE g (id BIGINT, k INT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000', \
         'number-of-rows' = '{rows}', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', \
         'fields.id.end' = '{}', 'fields.k.min' = '0', 'fields.k.max' = '6');\n{}\
         INSERT INTO k SELECT * FROM g;",
        rows - 1,
        table(
            "k",
            "id BIGINT, k INT",
            &server,
            &topic,
            "'format' = 'csv', 'sink.partitioner' = 'round-robin'"
        )
    ));
    let dir = recovery_support::workdir("kafka");
    let out = dir.join("out");
    let third = rows / 3;
    let query = format!(
        "{}CREATE TABLE out (id BIGINT, k INT) WITH ('connector' = 'filesystem', 'path' = '{}', \
         'format' = 'csv', 'sink.rolling-policy.file-size' = '256kb');\n\
         INSERT INTO out SELECT id, k FROM src WHERE k >= 0;\n",
        table(
            "src",
            "id BIGINT, k INT",
            &server,
            &topic,
            &format!(
                "'format' = 'csv', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'specific-offsets', \
                 'scan.bounded.specific-offsets' = 'partition:0,offset:{third};partition:1,offset:{third};partition:2,offset:{third}'"
            )
        ),
        out.display()
    );
    let runs = recovery_support::killed_and_restored("kafka-run", &query, 33, &[1, 2, 1]);
    assert!(runs.len() > 1, "the job ended before it could be killed");
    let mut ids: Vec<u64> = recovery_support::committed_lines(&out)
        .iter()
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids.len() as u64, rows, "records lost or repeated");
    assert_eq!(ids, (0..rows).collect::<Vec<u64>>());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Checkpoints taken while a partition is idle (docs/design/0008 §10): partition 1 has no
/// record while the job is killed and restored three times (its split waits, idle after
/// `scan.watermark.idle-timeout`, and must still take every barrier), partition 0 moves the
/// windows on; the last run finds partition 1's one record and both bounds. Every window is
/// committed once, with the sums of an uninterrupted run.
#[test]
fn checkpoints_while_a_partition_is_idle_restore_every_window_once() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("idle-recovery");
    create_topic(&server, &topic, 2);
    // Partition 0 ('fixed' at parallelism 1): ids 0.., one millisecond apart.
    let rows = 1_000_000u64;
    ok(&format!(
        "CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000', \
         'number-of-rows' = '{rows}', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', \
         'fields.id.end' = '{}');\n{}\
         INSERT INTO k SELECT id, id FROM g;",
        rows - 1,
        table(
            "k",
            "id BIGINT, ms BIGINT",
            &server,
            &topic,
            "'format' = 'csv', 'sink.partitioner' = 'fixed'"
        )
    ));
    let late = 2_000_000u64;
    let dir = recovery_support::workdir("kafka-idle");
    let checkpoints = dir.join("chk");
    let out = dir.join("out");
    let query = format!(
        "{}CREATE TABLE out (first_id BIGINT, n BIGINT, s BIGINT) WITH \
         ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         INSERT INTO out SELECT MIN(id), COUNT(*), SUM(id) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), \
         INTERVAL '10' SECOND)) GROUP BY window_start, window_end;\n",
        table(
            "src",
            "id BIGINT, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK FOR ts AS ts",
            &server,
            &topic,
            &format!(
                "'format' = 'csv', 'scan.startup.mode' = 'earliest-offset', 'scan.watermark.idle-timeout' = '200 ms', \
                 'scan.bounded.mode' = 'specific-offsets', \
                 'scan.bounded.specific-offsets' = 'partition:0,offset:{rows};partition:1,offset:1'"
            )
        ),
        out.display()
    );
    let mut rng = recovery_support::Lcg(71);
    let mut restore_from: Option<std::path::PathBuf> = None;
    for (run, parallelism) in [1, 2, 1, 2].into_iter().enumerate() {
        let mut settings = format!(
            "SET 'execution.checkpointing.interval' = '100 ms';\n\
             SET 'execution.checkpointing.dir' = '{}';\nSET 'parallelism.default' = '{parallelism}';\n",
            checkpoints.display()
        );
        if let Some(path) = &restore_from {
            settings += &format!(
                "SET 'execution.state-recovery.path' = '{}';\n",
                path.display()
            );
        }
        if run == 3 {
            // Partition 1's record comes only now: the killed runs never read it.
            let line = format!("{rows},{late}");
            produce(&server, &topic, &[(1, None, Some(line.as_str()), 0)]);
            recovery_support::run(&dir, &settings, &query, None);
            break;
        }
        let before = restore_from.clone();
        let ready = || {
            recovery_support::newest_checkpoint(&checkpoints)
                .is_some_and(|c| Some(&c) != before.as_ref())
        };
        let extra = Duration::from_millis(rng.next(600));
        recovery_support::run(&dir, &settings, &query, Some((&ready, extra)));
        let newest = recovery_support::newest_checkpoint(&checkpoints);
        assert!(
            newest.is_some() && newest != restore_from,
            "run {run} completed no checkpoint"
        );
        restore_from = newest;
    }
    let mut expected: Vec<String> = (0..rows / 10_000)
        .map(|w| {
            let first = w * 10_000;
            let sum: u64 = (first..first + 10_000).sum();
            format!("{first},10000,{sum}")
        })
        .collect();
    expected.push(format!("{rows},1,{rows}"));
    expected.sort();
    assert_eq!(recovery_support::committed_lines(&out), expected);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Ids of the committed records of a topic (read_committed), as numbers, sorted.
fn committed_ids(server: &str, topic: &str, expected: usize) -> Vec<u64> {
    let mut ids: Vec<u64> = consume(server, topic, expected)
        .into_iter()
        .map(|(_, v)| {
            let v = v.expect("a value");
            v.split(',').next().unwrap().parse().unwrap()
        })
        .collect();
    ids.sort_unstable();
    ids
}

#[test]
fn exactly_once_commits_a_transaction_per_checkpoint_and_at_the_end() {
    let Some(server) = bootstrap() else { return };
    let dir = recovery_support::workdir("kafka-exactly-once");
    for checkpoints in [true, false] {
        let topic = topic_name("exactly-once");
        create_topic(&server, &topic, 2);
        let rows = 50_000u64;
        let settings = if checkpoints {
            format!(
                "SET 'execution.checkpointing.interval' = '100 ms';\n\
                 SET 'execution.checkpointing.dir' = '{}';\n",
                dir.join(format!("chk-{topic}")).display()
            )
        } else {
            String::new()
        };
        ok(&format!(
            "{settings}CREATE TABLE g (id BIGINT, k INT) WITH ('connector' = 'datagen', 'rows-per-second' = '100000', \
             'number-of-rows' = '{rows}', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', \
             'fields.id.end' = '{}', 'fields.k.min' = '0', 'fields.k.max' = '6');\n{}\
             INSERT INTO k SELECT * FROM g;",
            rows - 1,
            table(
                "k",
                "id BIGINT, k INT",
                &server,
                &topic,
                "'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once', \
                 'sink.transactional-id-prefix' = 'eo-test'"
            )
        ));
        let ids = committed_ids(&server, &topic, rows as usize);
        assert_eq!(
            ids,
            (0..rows).collect::<Vec<u64>>(),
            "checkpoints: {checkpoints}"
        );
    }
    let (succeeded, out) = run(&format!(
        "CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\n{}\
         INSERT INTO k SELECT * FROM g;",
        table(
            "k",
            "id BIGINT",
            &server,
            "any",
            "'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once'"
        )
    ));
    assert!(
        !succeeded && out.contains("sink.transactional-id-prefix must be specified"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_exactly_once_topic_killed_and_restored_holds_every_row_once() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("exactly-once-recovery");
    create_topic(&server, &topic, 3);
    let rows = 400_000u64;
    let query = format!(
        "CREATE TABLE g (id BIGINT, k INT) WITH ('connector' = 'datagen', 'rows-per-second' = '100000', \
         'number-of-rows' = '{rows}', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', \
         'fields.id.end' = '{}', 'fields.k.min' = '0', 'fields.k.max' = '6');\n{}\
         INSERT INTO k SELECT * FROM g;",
        rows - 1,
        table(
            "k",
            "id BIGINT, k INT",
            &server,
            &topic,
            &format!(
                "'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once', \
                 'sink.transactional-id-prefix' = '{topic}'"
            )
        )
    );
    let runs = recovery_support::killed_and_restored("kafka-eo", &query, 41, &[1, 2, 1]);
    assert!(runs.len() > 1, "the job ended before it could be killed");
    let all: Vec<u64> = (0..rows).collect();
    if kafka_support::broker_hides_aborted_records(&server) {
        // What killed runs wrote after their last checkpoint was aborted: a read_committed
        // reader sees each row once, and is not held back by a transaction left open.
        let ids = committed_ids(&server, &topic, rows as usize);
        assert_eq!(ids.len() as u64, rows, "records lost or repeated");
        assert!(ids == all, "records lost or repeated");
    } else {
        // A broker that shows aborted records (the test broker, Tansu) can check only that
        // nothing was lost and that no transaction was left open to hold readers back.
        eprintln!(
            "the broker shows aborted transactions' records: checking no loss, not exactly once"
        );
        let mut ids = committed_ids(&server, &topic, rows as usize);
        ids.dedup();
        let missing: Vec<&u64> = all
            .iter()
            .filter(|i| ids.binary_search(i).is_err())
            .collect();
        assert!(
            missing.is_empty(),
            "{} of {rows} ids lost, the first {:?}",
            missing.len(),
            &missing[..missing.len().min(10)]
        );
    }
}

/// A broker of its own for a test that stops it: `scripts/kafka-broker.sh` on a free port.
struct OwnBroker(u16);

impl OwnBroker {
    fn start() -> OwnBroker {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let broker = OwnBroker(port);
        broker.script("start");
        broker
    }

    fn address(&self) -> String {
        format!("127.0.0.1:{}", self.0)
    }

    fn script(&self, command: &str) {
        let status = std::process::Command::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/kafka-broker.sh"
        ))
        .arg(command)
        .env("KAFKA_PORT", self.0.to_string())
        .stdout(std::process::Stdio::null())
        .status()
        .expect("the broker script runs");
        assert!(status.success(), "kafka-broker.sh {command} failed");
    }
}

impl Drop for OwnBroker {
    fn drop(&mut self) {
        let _ = std::process::Command::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/kafka-broker.sh"
        ))
        .arg("stop")
        .env("KAFKA_PORT", self.0.to_string())
        .stdout(std::process::Stdio::null())
        .status();
    }
}

/// Writes `values` as CSV records to partition 0.
fn produce_numbers(server: &str, topic: &str, values: std::ops::Range<i32>) {
    let values: Vec<String> = values.map(|i| i.to_string()).collect();
    let batch: Vec<_> = values
        .iter()
        .map(|v| (0, None, Some(v.as_str()), -1))
        .collect();
    produce(server, topic, &batch);
}

/// Starts a job printing the numbers of `topic` from its start, brokers waited for
/// `request_timeout_ms`.
fn print_numbers(
    server: &str,
    topic: &str,
    request_timeout_ms: u64,
) -> (
    Receiver<String>,
    Receiver<Result<(), String>>,
    Arc<AtomicBool>,
) {
    start(format!(
        "{}CREATE TABLE p (v INT) WITH ('connector' = 'print');\nINSERT INTO p SELECT * FROM t;",
        table(
            "t",
            "v INT",
            server,
            topic,
            &format!(
                "'format' = 'csv', 'scan.startup.mode' = 'earliest-offset', \
                 'properties.request.timeout.ms' = '{request_timeout_ms}'"
            )
        )
    ))
}

#[test]
fn a_broker_gone_longer_than_the_request_timeout_fails_the_job_clearly() {
    // The shared broker is there: the script has installed the broker this test starts.
    let Some(_) = bootstrap() else { return };
    let broker = OwnBroker::start();
    let server = broker.address();
    let topic = topic_name("gone");
    create_topic(&server, &topic, 1);
    produce_numbers(&server, &topic, 0..5);
    let (out, done, _cancel) = print_numbers(&server, &topic, 3000);
    let mut seen = String::new();
    assert!(
        printed_within(&out, &mut seen, &["+I[4]"], Duration::from_secs(30)),
        "{seen}"
    );
    let stopped = std::time::Instant::now();
    broker.script("stop");
    let result = done
        .recv_timeout(Duration::from_secs(60))
        .expect("the job ends once the broker is gone");
    let error = result.expect_err("the job fails");
    assert!(
        error.contains(&format!("kafka topic '{topic}' partition 0 offset 5"))
            && error.contains(
                "no broker has answered for longer than 3s (properties.request.timeout.ms)"
            ),
        "{error}"
    );
    // Not before the timeout (the stop itself takes the broker a few seconds).
    assert!(stopped.elapsed() >= Duration::from_secs(3));
}

#[test]
fn offsets_go_to_the_group_on_checkpoints_and_group_offsets_start_there() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("group-commit");
    create_topic(&server, &topic, 2);
    let first: Vec<String> = (0..40).map(|i| i.to_string()).collect();
    let records: Vec<_> = first
        .iter()
        .enumerate()
        .map(|(i, v)| ((i % 2) as i32, None, Some(v.as_str()), -1))
        .collect();
    produce(&server, &topic, &records);
    let dir = recovery_support::workdir("kafka-group");
    let group = format!("group-{topic}");
    let job = |startup: &str| {
        format!(
            "SET 'execution.checkpointing.interval' = '100 ms';\n\
             SET 'execution.checkpointing.dir' = '{}';\nSET 'table.dml-sync' = 'true';\n{}\
             CREATE TABLE p (v INT) WITH ('connector' = 'print');\nINSERT INTO p SELECT * FROM t;",
            dir.display(),
            table(
                "t",
                "v INT",
                &server,
                &topic,
                &format!(
                    "'format' = 'csv', 'properties.group.id' = '{group}', \
                     'scan.startup.mode' = '{startup}', 'properties.commit.offsets.on.checkpoint' = 'true'"
                )
            )
        )
    };
    let (out, done, cancel) = start(job("earliest-offset"));
    let mut seen = String::new();
    assert!(
        printed_within(
            &out,
            &mut seen,
            &["+I[38]", "+I[39]"],
            Duration::from_secs(30)
        ),
        "{seen}"
    );
    // A few checkpoints after the last record: its position is committed.
    std::thread::sleep(Duration::from_millis(800));
    cancel.store(true, Ordering::SeqCst);
    let _ = done.recv_timeout(Duration::from_secs(30));
    // The group's offsets are where the job was: a job from group-offsets reads only what
    // came after.
    let later: Vec<_> = [(0, None, Some("100"), -1), (1, None, Some("101"), -1)].to_vec();
    produce(&server, &topic, &later);
    let (out, done, cancel) = start(job("group-offsets"));
    let mut seen = String::new();
    assert!(
        printed_within(
            &out,
            &mut seen,
            &["+I[100]", "+I[101]"],
            Duration::from_secs(30)
        ),
        "{seen}"
    );
    std::thread::sleep(Duration::from_millis(300));
    cancel.store(true, Ordering::SeqCst);
    let _ = done.recv_timeout(Duration::from_secs(30));
    while let Ok(more) = out.try_recv() {
        seen.push_str(&more);
    }
    assert_eq!(seen.matches("+I[").count(), 2, "{seen}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_topic_pattern_reads_every_topic_whose_whole_name_it_matches() {
    let Some(server) = bootstrap() else { return };
    let base = topic_name("pattern");
    for (suffix, partitions) in [("a", 1), ("b", 2), ("a-other", 1)] {
        let topic = format!("{base}-{suffix}");
        create_topic(&server, &topic, partitions);
        let records: Vec<String> = (0..3).map(|i| format!("{suffix}{i}")).collect();
        let batch: Vec<_> = records
            .iter()
            .enumerate()
            .map(|(i, v)| ((i as i32) % partitions, None, Some(v.as_str()), -1))
            .collect();
        produce(&server, &topic, &batch);
    }
    // `-a` and `-b`, not `-a-other`: the pattern matches whole names, as Java's `matches`.
    let options = format!(
        "'topic-pattern' = '{}-[ab]', 'properties.bootstrap.servers' = '{server}', 'format' = 'raw', \
         'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'",
        base.replace('-', "\\-")
    );
    let out = ok(&format!(
        "SET 'execution.runtime-mode' = 'batch';\n\
         CREATE TABLE t (v STRING, tp STRING METADATA FROM 'topic' VIRTUAL) WITH ('connector' = 'kafka', {options});\n\
         SELECT v, tp = '{base}-a' OR tp = '{base}-b' FROM t ORDER BY v;"
    ));
    assert_eq!(
        rows(&out),
        [
            "a0,TRUE", "a1,TRUE", "a2,TRUE", "b0,TRUE", "b1,TRUE", "b2,TRUE"
        ],
        "{out}"
    );
    let (succeeded, out) = run(&format!(
        "CREATE TABLE t (v STRING) WITH ('connector' = 'kafka', 'topic' = 'x', {options});\nSELECT * FROM t;"
    ));
    assert!(
        !succeeded && out.contains("Option 'topic' and 'topic-pattern' shouldn't be set together."),
        "{out}"
    );
}

#[test]
fn a_quiet_topic_with_its_broker_up_keeps_the_job_running() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("quiet");
    create_topic(&server, &topic, 2);
    produce(&server, &topic, &[(0, None, Some("1"), -1)]);
    // The broker is asked whether it is there each quiet second; a check that cannot be
    // answered (as one waiting on a metadata update no thread serves) would fail the job
    // after the request timeout.
    let (out, done, cancel) = start(format!(
        "SET 'sql-client.execution.result-mode' = 'tableau';\n{}SELECT * FROM t;",
        table(
            "t",
            "v INT",
            &server,
            &topic,
            "'format' = 'csv', 'scan.startup.mode' = 'earliest-offset', \
             'properties.request.timeout.ms' = '1500'"
        )
    ));
    let mut seen = String::new();
    assert!(
        printed_within(&out, &mut seen, &["| +I | 1 |"], Duration::from_secs(30)),
        "{seen}"
    );
    std::thread::sleep(Duration::from_secs(5));
    assert!(done.try_recv().is_err(), "the job ended: {seen}");
    produce(&server, &topic, &[(1, None, Some("2"), -1)]);
    assert!(
        printed_within(&out, &mut seen, &["| +I | 2 |"], Duration::from_secs(30)),
        "{seen}"
    );
    cancel.store(true, Ordering::SeqCst);
    let _ = done.recv_timeout(Duration::from_secs(30));
}

#[test]
fn a_broker_restarted_mid_job_is_read_on_from_where_the_job_was() {
    let Some(_) = bootstrap() else { return };
    let broker = OwnBroker::start();
    let server = broker.address();
    let topic = topic_name("restart");
    create_topic(&server, &topic, 1);
    produce_numbers(&server, &topic, 0..5);
    let (out, done, cancel) = print_numbers(&server, &topic, 60_000);
    let mut seen = String::new();
    assert!(
        printed_within(&out, &mut seen, &["+I[4]"], Duration::from_secs(30)),
        "{seen}"
    );
    broker.script("stop");
    std::thread::sleep(Duration::from_secs(3));
    broker.script("start");
    // The test broker keeps its topics in memory: a restart empties it. What a Kafka broker
    // keeps on disk is written again, as it was, then five records more.
    create_topic(&server, &topic, 1);
    produce_numbers(&server, &topic, 0..10);
    assert!(
        printed_within(&out, &mut seen, &["+I[9]"], Duration::from_secs(60)),
        "the job reads on after the restart: {seen}"
    );
    assert!(done.try_recv().is_err(), "the job still runs");
    cancel.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = done.recv_timeout(Duration::from_secs(30));
    // Each record once: the five before the restart, the five after.
    let printed: Vec<&str> = seen
        .split_whitespace()
        .filter(|w| w.starts_with("+I["))
        .collect();
    let expected: Vec<String> = (0..10).map(|i| format!("+I[{i}]")).collect();
    assert_eq!(printed, expected, "{seen}");
}
