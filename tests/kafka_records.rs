//! What a Kafka record holds besides one value's row, against the real broker
//! (`scripts/kafka-broker.sh`): key formats (`key.format`, `key.fields`, `key.fields-prefix`,
//! `value.fields-include`), the `raw` format, metadata columns, and the `upsert-kafka`
//! connector (tombstones written for deletes and read as deletes, the final table after
//! updates and deletes).

#[path = "support/kafka.rs"]
mod kafka_support;
use kafka_support::{
    bootstrap, bounded_table, consume_keyed, create_topic, ends, file_table, final_rows, ok,
    produce, produce_with_headers, rows, run, table, topic_name,
};

/// From the start: the startup option of a table read back in a test.
const READ_ALL: &str = "'scan.startup.mode' = 'earliest-offset'";

/// Specific offsets ending each partition after the keyed records read from it.
fn ends_of(records: &[(i32, Option<String>, Option<String>)], partitions: i32) -> String {
    let values: Vec<(i32, Option<String>)> =
        records.iter().map(|(p, _, v)| (*p, v.clone())).collect();
    ends(&values, partitions)
}

#[test]
fn key_fields_are_written_to_the_key_and_read_back_from_it() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("keys");
    create_topic(&server, &topic, 2);
    let lines: Vec<String> = (0..200)
        .map(|i| format!("{},user{},{}", i % 7, i % 5, i * 10))
        .collect();
    let source = file_table("f", "k INT, u STRING, v INT", &lines, "keys");
    // The key in JSON without its prefix, the value without the key's columns.
    let columns = "key_k INT, key_u STRING, v INT";
    let options = "'key.format' = 'json', 'key.fields' = 'key_k;key_u', \
                   'key.fields-prefix' = 'key_', 'value.format' = 'csv', \
                   'value.fields-include' = 'EXCEPT_KEY'";
    ok(&format!(
        "{source}{}INSERT INTO t SELECT * FROM f;",
        table("t", columns, &server, &topic, options)
    ));
    let records = consume_keyed(&server, &topic, lines.len());
    assert_eq!(records.len(), lines.len());
    let first = records
        .iter()
        .find(|(_, _, v)| v.as_deref() == Some("0"))
        .expect("the first row's record");
    assert_eq!(first.1.as_deref(), Some(r#"{"k":0,"u":"user0"}"#));
    // The same key always in the same partition (the default partitioner hashes the key).
    for (p, key, _) in &records {
        let other = records.iter().find(|(_, k, _)| k == key).unwrap();
        assert_eq!(*p, other.0, "{key:?}");
    }
    let back = ok(&format!(
        "SET 'execution.runtime-mode' = 'batch';\n{}SELECT * FROM t ORDER BY v;",
        bounded_table(
            "t",
            columns,
            &server,
            &topic,
            options,
            &ends_of(&records, 2)
        )
    ));
    let expected: Vec<String> = (0..200)
        .map(|i| format!("{},user{},{}", i % 7, i % 5, i * 10))
        .collect();
    assert_eq!(rows(&back), expected);
    // A record without a key leaves the key's columns NULL.
    let topic = topic_name("keys-all");
    create_topic(&server, &topic, 1);
    produce(
        &server,
        &topic,
        &[
            (0, Some("7"), Some(r#"{"v": 10}"#), -1),
            (0, None, Some(r#"{"v": 20}"#), -1),
            (0, Some("not a number"), Some(r#"{"v": 30}"#), -1),
        ],
    );
    // A raw INT key is 4 bytes: a 1-byte key fails the job, naming the record.
    let read_as = |columns: &str| {
        run(&format!(
            "SET 'execution.runtime-mode' = 'batch';\n{}SELECT * FROM a;",
            bounded_table(
                "a",
                columns,
                &server,
                &topic,
                "'key.format' = 'raw', 'key.fields' = 'k', 'value.format' = 'json', \
                 'value.fields-include' = 'EXCEPT_KEY'",
                "partition:0,offset:3"
            )
        ))
    };
    let (succeeded, out) = read_as("k INT, v INT");
    assert!(
        !succeeded
            && out.contains(&format!("kafka topic '{topic}' partition 0 offset 0"))
            && out.contains("(1)"),
        "{out}"
    );
    let (succeeded, out) = read_as("k STRING, v INT");
    assert!(succeeded, "{out}");
    assert_eq!(
        rows(&out),
        ["7,10", "<NULL>,20", "not a number,30"],
        "{out}"
    );
}

#[test]
fn key_options_are_checked_as_flink_checks_them() {
    let Some(server) = bootstrap() else { return };
    let cases = [
        (
            "'key.fields' = 'k', 'format' = 'json'",
            "can only be declared if a key format is defined",
        ),
        (
            "'key.format' = 'json', 'format' = 'json'",
            "requires the declaration of one or more of key fields",
        ),
        (
            "'key.format' = 'json', 'key.fields' = 'x', 'format' = 'json'",
            "Could not find the field 'x' in the table schema",
        ),
        (
            "'key.format' = 'json', 'key.fields' = 'k', 'key.fields-prefix' = 'p_', 'format' = 'json'",
            "must be prefixed with 'p_'",
        ),
        (
            "'key.format' = 'debezium-json', 'key.fields' = 'k', 'format' = 'json'",
            "A key format should only deal with INSERT-only records",
        ),
        (
            "'format' = 'raw'",
            "The 'raw' format only supports single physical column",
        ),
        (
            "'format' = 'json', 'key.json.fail-on-missing-field' = 'true', 'value.csv.x' = '1'",
            "Unsupported options found for 'kafka'",
        ),
    ];
    for (options, message) in cases {
        let (succeeded, out) = run(&format!(
            "{}SELECT * FROM t;",
            table(
                "t",
                "k INT, v INT",
                &server,
                "no-such-topic",
                &format!("{options}, {READ_ALL}")
            )
        ));
        assert!(!succeeded && out.contains(message), "{options}: {out}");
    }
    let (succeeded, out) = run(&format!(
        "{}SELECT * FROM t;",
        table(
            "t",
            "p_k INT, v INT",
            &server,
            "no-such-topic",
            &format!(
                "'key.format' = 'json', 'key.fields' = 'p_k', 'key.fields-prefix' = 'p_', 'format' = 'json', {READ_ALL}"
            )
        )
    ));
    assert!(
        !succeeded
            && out.contains(
                "A key prefix is not allowed when option 'value.fields-include' is set to 'ALL'"
            ),
        "{out}"
    );
}

#[test]
fn metadata_columns_read_each_record_s_own() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("metadata");
    create_topic(&server, &topic, 2);
    produce_with_headers(
        &server,
        &topic,
        &[
            (
                0,
                None,
                Some("a"),
                1_700_000_000_123,
                vec![("h", Some("x"))],
            ),
            (
                1,
                None,
                Some("b"),
                1_700_000_001_000,
                vec![("h", Some("y")), ("g", None), ("h", Some("z"))],
            ),
            (0, None, Some("c"), 1_700_000_002_000, vec![]),
        ],
    );
    let out = ok(&format!(
        "SET 'execution.runtime-mode' = 'batch';\nSET 'table.local-time-zone' = 'UTC';\n{}\
         SELECT v, tp = '{topic}', p, o, ts, tt, CAST(hs['h'] AS STRING), hs['g'] IS NULL, CARDINALITY(hs), e >= 0 OR e IS NULL \
         FROM m ORDER BY v;",
        bounded_table(
            "m",
            "v STRING, tp STRING METADATA FROM 'topic' VIRTUAL, p INT METADATA FROM 'partition' VIRTUAL, \
             o BIGINT METADATA FROM 'offset' VIRTUAL, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', \
             tt STRING METADATA FROM 'timestamp-type' VIRTUAL, hs MAP<STRING, BYTES> METADATA FROM 'headers' VIRTUAL, \
             e INT METADATA FROM 'leader-epoch' VIRTUAL",
            &server,
            &topic,
            "'format' = 'raw'",
            "partition:0,offset:2;partition:1,offset:1"
        )
    ));
    assert_eq!(
        rows(&out),
        [
            "a,TRUE,0,0,2023-11-14 22:13:20.123,CreateTime,x,TRUE,1,TRUE",
            "b,TRUE,1,0,2023-11-14 22:13:21.000,CreateTime,z,TRUE,2,TRUE",
            "c,TRUE,0,1,2023-11-14 22:13:22.000,CreateTime,<NULL>,TRUE,0,TRUE",
        ],
        "{out}"
    );
    // The record's timestamp as the rowtime: windows over a topic by its records' times.
    let out = ok(&format!(
        "SET 'execution.runtime-mode' = 'batch';\nSET 'table.local-time-zone' = 'UTC';\n{}\
         SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE m, DESCRIPTOR(ts), INTERVAL '2' SECOND)) \
         GROUP BY window_start, window_end ORDER BY window_start;",
        bounded_table(
            "m",
            "v STRING, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', WATERMARK FOR ts AS ts",
            &server,
            &topic,
            "'format' = 'raw'",
            "partition:0,offset:2;partition:1,offset:1"
        )
    ));
    assert_eq!(
        rows(&out),
        ["2023-11-14 22:13:20.000,2", "2023-11-14 22:13:22.000,1"],
        "{out}"
    );
}

#[test]
fn raw_values_round_trip_with_line_breaks_and_numbers() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("raw");
    create_topic(&server, &topic, 1);
    let lines: Vec<String> = (0..50).map(|i| format!("{i},\"line {i}\nnext\"")).collect();
    let source = file_table("f", "n BIGINT, s STRING", &lines, "raw");
    ok(&format!(
        "{source}{}INSERT INTO t SELECT n, s FROM f;",
        table(
            "t",
            "n BIGINT, s STRING",
            &server,
            &topic,
            "'key.format' = 'raw', 'key.fields' = 'n', 'value.format' = 'raw', \
             'value.fields-include' = 'EXCEPT_KEY', 'sink.partitioner' = 'fixed'"
        )
    ));
    let records = consume_keyed(&server, &topic, 50);
    assert_eq!(records.len(), 50);
    assert_eq!(records[3].2.as_deref(), Some("line 3\nnext"));
    let back = ok(&format!(
        "SET 'execution.runtime-mode' = 'batch';\n{}SELECT n, REPLACE(s, '\n', '~') FROM t ORDER BY n;",
        bounded_table(
            "t",
            "n BIGINT, s STRING",
            &server,
            &topic,
            "'key.format' = 'raw', 'key.fields' = 'n', 'value.format' = 'raw', \
             'value.fields-include' = 'EXCEPT_KEY'",
            &ends_of(&records, 1)
        )
    ));
    let expected: Vec<String> = (0..50).map(|i| format!("{i},line {i}~next")).collect();
    assert_eq!(rows(&back), expected);
    // A big-endian BIGINT key: 8 bytes.
    let (_, key, _) = &records[1];
    assert_eq!(key.as_ref().map(String::len), Some(8));
}

/// An upsert-kafka table over `topic`.
fn upsert_table(name: &str, columns: &str, server: &str, topic: &str, options: &str) -> String {
    format!(
        "CREATE TABLE {name} ({columns}) WITH ('connector' = 'upsert-kafka', 'topic' = '{topic}', \
         'properties.bootstrap.servers' = '{server}', 'key.format' = 'json', 'value.format' = 'json'{options});\n"
    )
}

#[test]
fn upsert_kafka_writes_tombstones_and_reads_the_final_table() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("upsert");
    create_topic(&server, &topic, 3);
    // A changelog with updates and deletes: the last state of each key is the table.
    let mut lines = Vec::new();
    let mut expected = std::collections::BTreeMap::new();
    for i in 0..300 {
        let id = i % 40;
        let (op, before) = match expected.get(&id) {
            None => ("c", "null".to_string()),
            Some(v) if i % 7 == 0 => ("d", format!(r#"{{"id":{id},"v":{v}}}"#)),
            Some(v) => ("u", format!(r#"{{"id":{id},"v":{v}}}"#)),
        };
        let after = if op == "d" {
            expected.remove(&id);
            "null".to_string()
        } else {
            expected.insert(id, i);
            format!(r#"{{"id":{id},"v":{i}}}"#)
        };
        lines.push(format!(
            r#"{{"before":{before},"after":{after},"op":"{op}"}}"#
        ));
    }
    let dir = std::env::temp_dir().join(format!("tideline-upsert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let changes = dir.join("changes.json");
    std::fs::write(&changes, lines.join("\n") + "\n").unwrap();
    let deletes = lines.iter().filter(|l| l.contains(r#""op":"d""#)).count();
    assert!(deletes > 5);
    ok(&format!(
        "CREATE TABLE changes (id INT, v INT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json');\n\
         {}INSERT INTO u SELECT * FROM changes;",
        changes.display(),
        upsert_table(
            "u",
            "id INT, v INT, PRIMARY KEY (id) NOT ENFORCED",
            &server,
            &topic,
            ""
        )
    ));
    // One record per insert and update (the `-U` rows are not written), a tombstone per delete.
    let records = consume_keyed(&server, &topic, lines.len());
    assert_eq!(records.len(), lines.len(), "{records:?}");
    assert_eq!(records.iter().filter(|r| r.2.is_none()).count(), deletes);
    assert!(
        records
            .iter()
            .all(|r| r.1.as_deref().is_some_and(|k| k.starts_with(r#"{"id":"#)))
    );
    // Read back as a table: each key's last value; deleted keys gone.
    let ends = ends_of(&records, 3);
    let out = ok(&format!(
        "{}SELECT * FROM u;",
        upsert_table(
            "u",
            "id INT, v INT, PRIMARY KEY (id) NOT ENFORCED",
            &server,
            &topic,
            &format!(
                ", 'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = '{ends}'"
            )
        )
    ));
    let want: Vec<String> = {
        let mut w: Vec<String> = expected.iter().map(|(k, v)| format!("{k},{v}")).collect();
        w.sort();
        w
    };
    assert_eq!(final_rows(&out), want, "{out}");
    // An aggregate over the upsert table sees the updates and deletes.
    let out = ok(&format!(
        "{}SELECT COUNT(*), SUM(v) FROM u;",
        upsert_table(
            "u",
            "id INT, v INT, PRIMARY KEY (id) NOT ENFORCED",
            &server,
            &topic,
            &format!(
                ", 'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = '{ends}'"
            )
        )
    ));
    let sum: i32 = expected.values().sum();
    assert_eq!(
        final_rows(&out),
        [format!("{},{sum}", expected.len())],
        "{out}"
    );
    // With the sink's buffer, a key's changes between flushes are reduced to its last: one
    // record per key touched (the end flushes), a tombstone for a key deleted last.
    let reduced = topic_name("upsert-reduced");
    create_topic(&server, &reduced, 3);
    ok(&format!(
        "CREATE TABLE changes (id INT, v INT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json');\n\
         {}INSERT INTO u SELECT * FROM changes;",
        changes.display(),
        upsert_table(
            "u",
            "id INT, v INT, PRIMARY KEY (id) NOT ENFORCED",
            &server,
            &reduced,
            ", 'sink.buffer-flush.max-rows' = '100000', 'sink.buffer-flush.interval' = '1 h'"
        )
    ));
    let records = consume_keyed(&server, &reduced, 40);
    assert_eq!(records.len(), 40, "{records:?}");
    assert_eq!(
        records.iter().filter(|r| r.2.is_some()).count(),
        expected.len()
    );
    let (succeeded, out) = run(&format!(
        "CREATE TABLE changes (id INT, v INT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json');\n\
         {}INSERT INTO u SELECT * FROM changes;",
        changes.display(),
        upsert_table(
            "u",
            "id INT, v INT, PRIMARY KEY (id) NOT ENFORCED",
            &server,
            &reduced,
            ", 'sink.buffer-flush.max-rows' = '10'"
        )
    ));
    assert!(
        !succeeded && out.contains("must be set to be greater than zero together"),
        "{out}"
    );
}

#[test]
fn upsert_kafka_is_planned_and_checked_as_flink_does() {
    let Some(server) = bootstrap() else { return };
    let out = ok(&format!(
        "{}EXPLAIN SELECT * FROM u WHERE v > 1;",
        upsert_table(
            "u",
            "id INT, v INT, PRIMARY KEY (id) NOT ENFORCED",
            &server,
            "t",
            ""
        )
    ));
    assert!(
        out.contains(
            "ChangelogNormalize(key=[id], condition=[>(v, 1)])\n+- Exchange(distribution=[hash[id]])\n   +- TableSourceScan(table=[[default_catalog, default_database, u]], fields=[id, v])"
        ),
        "{out}"
    );
    let cases = [
        (
            "id INT, v INT",
            "",
            "require to define a PRIMARY KEY constraint",
        ),
        (
            "id INT, v INT, PRIMARY KEY (id) NOT ENFORCED",
            ", 'scan.startup.mode' = 'latest-offset'",
            "Unsupported options found for 'upsert-kafka'",
        ),
    ];
    for (columns, options, message) in cases {
        let (succeeded, out) = run(&format!(
            "{}SELECT * FROM u;",
            upsert_table("u", columns, &server, "t", options)
        ));
        assert!(!succeeded && out.contains(message), "{out}");
    }
    let (succeeded, out) = run(&format!(
        "CREATE TABLE u (id INT, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', \
         'topic' = 't', 'properties.bootstrap.servers' = '{server}', 'key.format' = 'json', 'value.format' = 'debezium-json');\n\
         SELECT * FROM u;"
    ));
    assert!(
        !succeeded && out.contains("doesn't support 'debezium-json' as value format"),
        "{out}"
    );
}

#[test]
fn upsert_kafka_is_the_versioned_side_of_an_event_time_temporal_join() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("versioned");
    create_topic(&server, &topic, 2);
    // Each currency in its own partition, one partition's times ahead of the other's: the
    // watermark is each partition's, taken at the scan, so no version is late.
    let rate = |cur: &str, rate: i32, second: i32| {
        (
            format!(r#"{{"cur":"{cur}"}}"#),
            format!(r#"{{"cur":"{cur}","rate":{rate},"ts":"2024-01-01 00:00:{second:02}"}}"#),
        )
    };
    let usd = [rate("USD", 1, 0), rate("USD", 2, 30)];
    let eur = [rate("EUR", 10, 0), rate("EUR", 11, 10), rate("EUR", 12, 20)];
    let mut records = Vec::new();
    for (k, v) in &usd {
        records.push((1, Some(k.as_str()), Some(v.as_str()), -1));
    }
    for (k, v) in &eur {
        records.push((0, Some(k.as_str()), Some(v.as_str()), -1));
    }
    produce(&server, &topic, &records);
    let orders = file_table(
        "orders",
        "id STRING, cur STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts",
        &[
            "o1,EUR,2024-01-01 00:00:05".into(),
            "o2,EUR,2024-01-01 00:00:15".into(),
            "o3,USD,2024-01-01 00:00:31".into(),
            "o4,EUR,2024-01-01 00:00:25".into(),
        ],
        "versioned",
    );
    let rates = upsert_table(
        "rates",
        "cur STRING, rate INT, ts TIMESTAMP(3), PRIMARY KEY (cur) NOT ENFORCED, WATERMARK FOR ts AS ts",
        &server,
        &topic,
        ", 'scan.bounded.mode' = 'specific-offsets', \
         'scan.bounded.specific-offsets' = 'partition:0,offset:3;partition:1,offset:2'",
    );
    let query = "SELECT o.id, r.rate FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur";
    let plan = ok(&format!("{orders}{rates}EXPLAIN {query};"));
    // The watermark is the source's (pushed into the scan), below the normalization.
    assert!(
        plan.contains(
            "+- ChangelogNormalize(key=[cur])\n         +- Exchange(distribution=[hash[cur]])\n            +- TableSourceScan(table=[[default_catalog, default_database, rates, watermark=[ts]]], fields=[cur, rate, ts])"
        ),
        "{plan}"
    );
    let out = ok(&format!("{orders}{rates}{query};"));
    let mut got = rows(&out);
    got.sort();
    assert_eq!(
        got,
        ["+I,o1,10", "+I,o2,11", "+I,o3,2", "+I,o4,12"],
        "{out}"
    );
}

#[test]
fn timestamp_and_headers_are_written_from_persisted_metadata_columns() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("write-metadata");
    create_topic(&server, &topic, 1);
    let columns = "v STRING, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', \
                   hs MAP<STRING, BYTES> METADATA FROM 'headers'";
    // Flink's sink schema: the persisted metadata columns are written too.
    let (succeeded, out) = run(&format!(
        "{}INSERT INTO k SELECT 'x';",
        table("k", columns, &server, &topic, "'format' = 'raw'")
    ));
    assert!(
        !succeeded
            && out.contains(
                "Sink schema:  [v: STRING, ts: TIMESTAMP_LTZ(3), hs: MAP<STRING, BYTES>]"
            ),
        "{out}"
    );
    ok(&format!(
        "{}INSERT INTO k VALUES ('a', TO_TIMESTAMP_LTZ(1000, 3), MAP['h', CAST('x' AS BYTES), 'g', CAST(NULL AS BYTES)]), \
         ('b', CAST(NULL AS TIMESTAMP_LTZ(3)), CAST(NULL AS MAP<STRING, BYTES>));",
        table("k", columns, &server, &topic, "'format' = 'raw'")
    ));
    let out = ok(&format!(
        "SET 'execution.runtime-mode' = 'batch';\nSET 'table.local-time-zone' = 'UTC';\n{}\
         SELECT v, ts, CAST(hs['h'] AS STRING), CARDINALITY(hs), ts > TIMESTAMP '2020-01-01 00:00:00' FROM k ORDER BY v;",
        bounded_table(
            "k",
            columns,
            &server,
            &topic,
            "'format' = 'raw'",
            "partition:0,offset:2"
        )
    ));
    let got = rows(&out);
    assert_eq!(got[0], "a,1970-01-01 00:00:01.000,x,2,FALSE", "{out}");
    // No timestamp: the producer's clock; no headers: none.
    assert!(
        got[1].starts_with("b,") && got[1].ends_with(",<NULL>,0,TRUE"),
        "{out}"
    );
    // Other keys, and sinks that write no metadata, are refused as Flink refuses them.
    let (succeeded, out) = run(&format!(
        "{}INSERT INTO k VALUES ('a', 1);",
        table(
            "k",
            "v STRING, o BIGINT METADATA FROM 'offset'",
            &server,
            &topic,
            "'format' = 'raw'"
        )
    ));
    assert!(
        !succeeded && out.contains("Invalid metadata key 'offset' in column 'o'"),
        "{out}"
    );
    let (succeeded, out) = run(
        "CREATE TABLE f (v STRING, t TIMESTAMP_LTZ(3) METADATA FROM 'file.modification-time') \
         WITH ('connector' = 'blackhole');\nINSERT INTO f VALUES ('a', TO_TIMESTAMP_LTZ(0, 3));",
    );
    assert!(
        !succeeded && out.contains("declares persistable metadata columns"),
        "{out}"
    );
}

#[test]
fn records_past_a_batch_s_byte_bound_are_read_into_the_next_batch() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("big-records");
    create_topic(&server, &topic, 1);
    // 80 records of 900 KB: 72 MB, past a batch's 64 MB of record bytes.
    let values: Vec<String> = (0..80)
        .map(|i| format!("{i:03}{}", "x".repeat(900_000 - 3)))
        .collect();
    let records: Vec<_> = values
        .iter()
        .map(|v| (0, None, Some(v.as_str()), -1))
        .collect();
    produce(&server, &topic, &records);
    let out = ok(&format!(
        "SET 'execution.runtime-mode' = 'batch';\n{}\
         SELECT COUNT(*), COUNT(DISTINCT SUBSTRING(v, 1, 3)), SUM(CHAR_LENGTH(v)) FROM t;",
        bounded_table(
            "t",
            "v STRING",
            &server,
            &topic,
            "'format' = 'raw'",
            "partition:0,offset:80"
        )
    ));
    assert_eq!(rows(&out), ["80,80,72000000"], "{out}");
}

#[test]
fn a_changelog_value_takes_its_key_columns_from_the_value_when_all_fields_are_in_it() {
    let Some(server) = bootstrap() else { return };
    let topic = topic_name("keyed-changelog");
    create_topic(&server, &topic, 1);
    // Debezium values with a JSON key: an update is two rows of one record, both given the
    // record's key; with `ALL` the value's own `id` is the column's (here it differs from
    // the key's on purpose, to show which one is read).
    produce(
        &server,
        &topic,
        &[
            (
                0,
                Some(r#"{"id": 100}"#),
                Some(r#"{"before": null, "after": {"id": 1, "v": 10}, "op": "c"}"#),
                -1,
            ),
            (
                0,
                Some(r#"{"id": 100}"#),
                Some(r#"{"before": {"id": 1, "v": 10}, "after": {"id": 1, "v": 11}, "op": "u"}"#),
                -1,
            ),
        ],
    );
    let read = |include: &str, columns: &str| {
        ok(&format!(
            "SET 'sql-client.execution.result-mode' = 'tableau';\n{}SELECT * FROM t;",
            bounded_table(
                "t",
                columns,
                &server,
                &topic,
                &format!(
                    "'key.format' = 'json', 'key.fields' = 'id', 'value.format' = 'debezium-json', \
                     'value.fields-include' = '{include}'"
                ),
                "partition:0,offset:2"
            )
        ))
    };
    let all = read("ALL", "id INT, v INT");
    assert_eq!(rows(&all), ["+I,1,10", "-U,1,10", "+U,1,11"], "{all}");
    let except = read("EXCEPT_KEY", "id INT, v INT");
    assert_eq!(
        rows(&except),
        ["+I,100,10", "-U,100,10", "+U,100,11"],
        "{except}"
    );
}
