//! The embedded API over seed 000's stream-to-table conversion: a program's rows, event
//! timestamps and watermarks as a table with a rowtime or proctime attribute, queried with
//! SQL, the result read as a changelog stream. Expectations are Flink 2.3's (PyFlink's
//! `from_data_stream` and `DESC`).

use tideline::api::{ApiError, ChangelogRow, DataStream, StreamTableEnvironment, col};
use tideline::types::chunk::RowKind;
use tideline::types::value::Value;

const WINDOWED: &str = "SELECT TUMBLE_START(user_action_time, INTERVAL '10' MINUTE), COUNT(DISTINCT user_name) FROM user_actions GROUP BY TUMBLE(user_action_time, INTERVAL '10' MINUTE)";

fn text(s: &str) -> Value {
    Value::String(s.into())
}

fn insert(fields: &[&str]) -> ChangelogRow {
    ChangelogRow {
        kind: RowKind::Insert,
        fields: fields.iter().map(|f| Some(f.to_string())).collect(),
    }
}

fn user_actions(
    fields: &[tideline::api::Expression],
) -> (StreamTableEnvironment, tideline::api::StreamWriter) {
    let (writer, stream) =
        DataStream::channel(&[("user_name", "STRING"), ("data", "STRING")]).unwrap();
    let mut env = StreamTableEnvironment::new();
    env.create_temporary_view("user_actions", stream, fields)
        .unwrap();
    (env, writer)
}

#[test]
fn desc_shows_an_appended_rowtime_attribute() {
    let (mut env, _writer) = user_actions(&[
        col("user_name"),
        col("data"),
        col("user_action_time").rowtime(),
    ]);
    assert_eq!(
        env.execute_sql("DESC user_actions").unwrap(),
        "\
+------------------+------------------------+------+-----+--------+-----------+
|             name |                   type | null | key | extras | watermark |
+------------------+------------------------+------+-----+--------+-----------+
|        user_name |                 STRING | TRUE |     |        |           |
|             data |                 STRING | TRUE |     |        |           |
| user_action_time | TIMESTAMP(3) *ROWTIME* | TRUE |     |        |           |
+------------------+------------------------+------+-----+--------+-----------+
3 rows in set
"
    );
}

#[test]
fn desc_shows_a_replacing_rowtime_and_an_appended_proctime() {
    let (writer, stream) = DataStream::channel(&[
        ("ts", "BIGINT"),
        ("user_name", "STRING"),
        ("data", "STRING"),
    ])
    .unwrap();
    let mut env = StreamTableEnvironment::new();
    env.create_temporary_view(
        "t",
        stream,
        &[
            col("ts").rowtime(),
            col("user_name"),
            col("data"),
            col("pt").proctime(),
        ],
    )
    .unwrap();
    drop(writer);
    assert_eq!(
        env.execute_sql("DESC t").unwrap(),
        "\
+-----------+-----------------------------+------+-----+--------+-----------+
|      name |                        type | null | key | extras | watermark |
+-----------+-----------------------------+------+-----+--------+-----------+
|        ts |      TIMESTAMP(3) *ROWTIME* | TRUE |     |        |           |
| user_name |                      STRING | TRUE |     |        |           |
|      data |                      STRING | TRUE |     |        |           |
|        pt | TIMESTAMP_LTZ(3) *PROCTIME* | TRUE |     |        |           |
+-----------+-----------------------------+------+-----+--------+-----------+
4 rows in set
"
    );
}

#[test]
fn proctime_not_at_the_end_is_flinks_error() {
    let (_writer, stream) = DataStream::channel(&[("f0", "STRING"), ("f1", "STRING")]).unwrap();
    let mut env = StreamTableEnvironment::new();
    let err = env
        .create_temporary_view(
            "t",
            stream,
            &[col("user_name"), col("pt").proctime(), col("data")],
        )
        .unwrap_err();
    assert!(matches!(err, ApiError::Validation(_)));
    assert_eq!(
        err.to_string(),
        "The proctime attribute can only be appended to the table schema and not replace an existing field. Please move 'proctime(pt)' to the end of the schema."
    );
}

/// The pushed watermark fires the first window while the stream is still open; a row
/// behind it is dropped as late; the end of the stream fires the rest.
#[test]
fn windows_fire_on_pushed_watermarks_and_at_the_end_of_the_stream() {
    let (mut env, writer) = user_actions(&[
        col("user_name"),
        col("data"),
        col("user_action_time").rowtime(),
    ]);
    let mut result = env.execute_query(WINDOWED).unwrap();
    writer.send_row(0, vec![text("alice"), text("a")]).unwrap();
    writer
        .send_row(60_000, vec![text("bob"), text("b")])
        .unwrap();
    writer
        .send_row(120_000, vec![text("alice"), text("c")])
        .unwrap();
    writer
        .send_row(660_000, vec![text("carol"), text("d")])
        .unwrap();
    writer.send_watermark(660_000).unwrap();
    let mut rows = result.rows();
    // Only the pushed watermark can have fired this window: the writer is still open.
    assert_eq!(
        rows.next().unwrap().unwrap(),
        insert(&["1970-01-01 00:00:00.000", "2"])
    );
    // Behind the watermark: late, dropped (its window has fired).
    writer
        .send_row(30_000, vec![text("late"), text("e")])
        .unwrap();
    writer
        .send_row(1_300_000, vec![text("dave"), text("f")])
        .unwrap();
    drop(writer);
    let rest: Vec<ChangelogRow> = rows.map(Result::unwrap).collect();
    assert_eq!(
        rest,
        [
            insert(&["1970-01-01 00:10:00.000", "1"]),
            insert(&["1970-01-01 00:20:00.000", "1"]),
        ]
    );
}

#[test]
fn a_late_row_is_counted() {
    let (mut env, writer) = user_actions(&[
        col("user_name"),
        col("data"),
        col("user_action_time").rowtime(),
    ]);
    let result = env.execute_query(WINDOWED).unwrap();
    writer
        .send_row(660_000, vec![text("carol"), text("d")])
        .unwrap();
    writer.send_watermark(660_000).unwrap();
    writer
        .send_row(30_000, vec![text("late"), text("e")])
        .unwrap();
    drop(writer);
    let late = {
        let mut result = result;
        let mut rows = Vec::new();
        while let Some(chunk) = result.next_chunk() {
            rows.push(chunk.unwrap().num_rows());
        }
        assert_eq!(rows.iter().sum::<usize>(), 1);
        result.late_rows()
    };
    assert_eq!(late, 1);
}

/// Replacing a BIGINT field by the rowtime: the column holds the event timestamp, not the
/// field's value (Flink: "the event time timestamp field holds the value of the DataStream
/// event time timestamp").
#[test]
fn a_replacing_rowtime_holds_the_event_timestamp() {
    let (writer, stream) = DataStream::channel(&[
        ("ts", "BIGINT"),
        ("user_name", "STRING"),
        ("data", "STRING"),
    ])
    .unwrap();
    let mut env = StreamTableEnvironment::new();
    env.create_temporary_view(
        "user_actions",
        stream,
        &[
            col("user_action_time").rowtime(),
            col("user_name"),
            col("data"),
        ],
    )
    .unwrap();
    let result = env
        .execute_query("SELECT user_name, user_action_time FROM user_actions")
        .unwrap();
    writer
        .send_row(90_000, vec![Value::Int(7), text("alice"), text("a")])
        .unwrap();
    drop(writer);
    assert_eq!(
        result.collect_rows().unwrap(),
        [insert(&["alice", "1970-01-01 00:01:30.000"])]
    );
}

/// The proctime column is read from the session's clock as each row passes.
#[test]
fn an_appended_proctime_column_reads_the_clock() {
    let (writer, stream) =
        DataStream::channel(&[("user_name", "STRING"), ("data", "STRING")]).unwrap();
    let mut env = StreamTableEnvironment::new();
    env.create_temporary_view(
        "user_actions",
        stream,
        &[
            col("user_name"),
            col("data"),
            col("user_action_time").proctime(),
        ],
    )
    .unwrap();
    let result = env
        .execute_query(
            "SELECT user_name, EXTRACT(YEAR FROM CAST(user_action_time AS TIMESTAMP(3))) > 2020 FROM user_actions",
        )
        .unwrap();
    writer.send_row(0, vec![text("alice"), text("x")]).unwrap();
    drop(writer);
    assert_eq!(result.collect_rows().unwrap(), [insert(&["alice", "TRUE"])]);
}

#[test]
fn a_stream_is_read_by_one_query() {
    let (mut env, _writer) = user_actions(&[col("user_name"), col("data")]);
    let first = env
        .execute_query("SELECT user_name FROM user_actions")
        .unwrap();
    let err = env
        .execute_query("SELECT data FROM user_actions")
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("read by an earlier query"),
        "{err}"
    );
    drop(first);
}

#[test]
fn rows_without_timestamps_fail_a_rowtime_table() {
    use std::sync::Arc;
    let (mut env, writer) = user_actions(&[
        col("user_name"),
        col("data"),
        col("user_action_time").rowtime(),
    ]);
    let result = env.execute_query(WINDOWED).unwrap();
    let column = Arc::new(arrow_array::StringArray::from(vec!["a"])) as arrow_array::ArrayRef;
    let batch =
        arrow_array::RecordBatch::try_from_iter([("user_name", column.clone()), ("data", column)])
            .unwrap();
    writer.send_batch_without_timestamps(batch).unwrap();
    let err = result.collect_rows().unwrap_err();
    assert!(
        err.to_string().contains("Rowtime timestamp is not defined"),
        "{err}"
    );
}
