//! Seed 000's stream-to-table conversion, embedded: a producer thread pushes user actions
//! with event timestamps and watermarks; the table declares `user_action_time` as a rowtime
//! attribute (Flink's `fromDataStream(stream, $("user_name"), $("data"),
//! $("user_action_time").rowtime())`); a ten-minute tumbling window counts distinct users.
//! A second table declares a proctime attribute instead.
//!
//! Run with `cargo run --example stream_to_table`.

use tideline::api::{ApiError, DataStream, StreamTableEnvironment, col};
use tideline::types::value::Value;

const MINUTE: i64 = 60_000;

fn main() -> Result<(), ApiError> {
    let mut env = StreamTableEnvironment::new();

    // Option 1 of the seed: the rowtime attribute appended as a new column.
    let (writer, stream) = DataStream::channel(&[("user_name", "STRING"), ("data", "STRING")])?;
    env.create_temporary_view(
        "user_actions",
        stream,
        &[
            col("user_name"),
            col("data"),
            col("user_action_time").rowtime(),
        ],
    )?;
    print!("{}", env.execute_sql("DESC user_actions")?);

    let result = env.execute_query(
        "SELECT TUMBLE_START(user_action_time, INTERVAL '10' MINUTE), COUNT(DISTINCT user_name)
         FROM user_actions
         GROUP BY TUMBLE(user_action_time, INTERVAL '10' MINUTE)",
    )?;
    let producer = std::thread::spawn(move || -> Result<(), ApiError> {
        let actions = [
            (MINUTE, "alice", "login"),
            (2 * MINUTE, "bob", "click"),
            (4 * MINUTE, "alice", "click"),
            (9 * MINUTE, "carol", "logout"),
            (12 * MINUTE, "bob", "login"),
            (15 * MINUTE, "bob", "click"),
            // Out of order but not late: the watermark is still 5 seconds behind.
            (14 * MINUTE, "dave", "click"),
            (23 * MINUTE, "alice", "login"),
        ];
        for (ts, user, data) in actions {
            writer.send_row(
                ts,
                vec![Value::String(user.into()), Value::String(data.into())],
            )?;
            // Bounded out-of-orderness of five seconds, as the seed's DDL watermark.
            writer.send_watermark(ts - 5_000)?;
        }
        // Behind the watermark: dropped as late by the window operator.
        writer.send_row(
            3 * MINUTE,
            vec![Value::String("late".into()), Value::String("click".into())],
        )?;
        // Dropping the writer ends the stream; its final watermark fires the last window.
        Ok(())
    });
    println!("+----+-------------------------+--------+");
    println!("| op |                  EXPR$0 | EXPR$1 |");
    println!("+----+-------------------------+--------+");
    let mut result = result;
    for row in result.rows() {
        let row = row?;
        let field = |i: usize| row.fields[i].clone().unwrap_or_else(|| "<NULL>".into());
        println!(
            "| {} | {:>23} | {:>6} |",
            row.kind.short_string(),
            field(0),
            field(1)
        );
    }
    println!("+----+-------------------------+--------+");
    println!("late rows dropped: {}", result.late_rows());
    producer.join().expect("the producer thread")?;

    // The proctime variant: a processing-time attribute appended at the end.
    let (writer, stream) = DataStream::channel(&[("user_name", "STRING"), ("data", "STRING")])?;
    env.create_temporary_view(
        "user_clicks",
        stream,
        &[
            col("user_name"),
            col("data"),
            col("user_action_time").proctime(),
        ],
    )?;
    print!("{}", env.execute_sql("DESC user_clicks")?);
    let mut result = env.execute_query(
        "SELECT user_name, data, CAST(user_action_time AS STRING) IS NOT NULL FROM user_clicks",
    )?;
    for user in ["alice", "bob"] {
        writer.send_row(
            0,
            vec![Value::String(user.into()), Value::String("click".into())],
        )?;
    }
    drop(writer);
    for row in result.rows() {
        let row = row?;
        println!("{} {:?}", row.kind.short_string(), row.fields);
    }

    // Flink's rule: a proctime attribute cannot take a field's place.
    let (_writer, stream) = DataStream::channel(&[("f0", "STRING"), ("f1", "STRING")])?;
    let refused = env.create_temporary_view(
        "refused",
        stream,
        &[col("user_name"), col("pt").proctime(), col("data")],
    );
    if let Err(e) = refused {
        println!("{e}");
    }
    Ok(())
}
