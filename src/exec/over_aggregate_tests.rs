//! Operator tests: Flink's over functions row by row — the values of each frame, rows
//! released by the watermark, late rows (behind the watermark for UNBOUNDED, at or before
//! the key's last fired time for bounded frames), the bounded RANGE cleanup that forgets a
//! quiet key, processing time, and restored == uninterrupted. The expected values of the
//! first three are Flink 2.3's for the same rows (per-row watermarks one second behind).
use super::*;
use crate::exec::test_harness::{
    Chunks, RestoreCheck, ScriptRng, clock_text, run_script_on, schema,
};
use crate::plan::aggregate::AggregateFunction;
use crate::types::{DataType, Schema, TypeKind};

fn input() -> Schema {
    schema(&[
        ("k", TypeKind::Int),
        ("v", TypeKind::Int),
        ("ts", TypeKind::Timestamp(3)),
    ])
}

/// The input's columns, then COUNT(v), SUM(v) (Flink's `$SUM0`) and MIN(v).
fn output() -> Schema {
    let mut fields = input().fields;
    fields.push(crate::types::Field::new(
        "c",
        DataType::not_null(TypeKind::BigInt),
    ));
    fields.push(crate::types::Field::new(
        "s",
        DataType::nullable(TypeKind::Int),
    ));
    fields.push(crate::types::Field::new(
        "m",
        DataType::nullable(TypeKind::Int),
    ));
    Schema::new(fields)
}

fn call(function: AggregateFunction, data_type: DataType) -> AggregateCall {
    AggregateCall {
        function,
        args: vec![1],
        distinct: false,
        filter: None,
        data_type,
        name: String::new(),
    }
}

fn unopened(frame: Frame, time: OverTime) -> OverAggregateOperator {
    let runtime = crate::types::chunk::runtime_schema;
    OverAggregateOperator::new(
        runtime(&input()),
        runtime(&output()),
        vec![0],
        2,
        time,
        frame,
        vec![
            call(
                AggregateFunction::Count,
                DataType::not_null(TypeKind::BigInt),
            ),
            call(AggregateFunction::Sum, DataType::nullable(TypeKind::Int)),
            call(AggregateFunction::Min, DataType::nullable(TypeKind::Int)),
        ],
    )
    .unwrap()
}

fn run(frame: Frame, script: &str) -> String {
    let mut op = unopened(frame, OverTime::Rowtime);
    op.open(&OperatorContext::default()).unwrap();
    run_script_on(&mut op, &[&input()], &output(), script).unwrap()
}

/// Rows for two keys, a watermark one second behind each row; 60 and 70 come late.
const ROWS: &str = "
    +I 1 | 10 | 2024-01-01 10:00:00
    WM 2024-01-01 09:59:59
    +I 2 | 20 | 2024-01-01 10:00:01
    WM 2024-01-01 10:00:00
    +I 1 | 30 | 2024-01-01 10:00:02
    WM 2024-01-01 10:00:01
    +I 1 | 40 | 2024-01-01 10:00:02
    WM 2024-01-01 10:00:01
    +I 2 | 50 | 2024-01-01 10:00:05
    WM 2024-01-01 10:00:04
    +I 1 | 60 | 2024-01-01 10:00:03
    WM 2024-01-01 10:00:04
    +I 1 | 70 | 2024-01-01 10:00:01
    WM 2024-01-01 10:00:04
    +I 1 | 80 | 2024-01-01 10:00:09
    WM 2024-01-01 10:00:08
    +I 2 | NULL | 2024-01-01 10:00:09
    WM 2024-01-01 10:00:08
    WM MAX";

/// The emitted rows only, as `v: count sum min`.
fn values(emitted: &str) -> Vec<String> {
    emitted
        .lines()
        .filter(|l| l.starts_with("+I"))
        .map(|l| {
            let f: Vec<&str> = l.split('|').map(str::trim).collect();
            format!("{}: {} {} {}", f[1], f[3], f[4], f[5])
        })
        .collect()
}

#[test]
fn unbounded_range_shares_values_within_a_time_and_drops_rows_behind_the_watermark() {
    let frame = Frame {
        rows: false,
        preceding: None,
    };
    let mut op = unopened(frame, OverTime::Rowtime);
    op.open(&OperatorContext::default()).unwrap();
    let out = run_script_on(&mut op, &[&input()], &output(), ROWS).unwrap();
    assert_eq!(
        values(&out),
        [
            "10: 1 10 10",
            "20: 1 20 20",
            "30: 3 80 10",
            "40: 3 80 10",
            "50: 2 70 20",
            "80: 4 160 10",
            "NULL: 2 70 20",
        ]
    );
    assert_eq!(op.late_rows(), 2);
}

#[test]
fn rows_one_preceding_takes_the_oldest_back_and_judges_lateness_by_the_last_fired_time() {
    let frame = Frame {
        rows: true,
        preceding: Some(1),
    };
    assert_eq!(
        values(&run(frame, ROWS)),
        [
            "10: 1 10 10",
            "20: 1 20 20",
            "30: 2 40 10",
            "40: 2 70 30",
            "60: 2 100 40",
            "50: 2 70 20",
            "80: 2 140 60",
            "NULL: 1 50 50",
        ]
    );
}

#[test]
fn range_one_second_forgets_a_key_quiet_for_one_and_a_half_seconds() {
    let frame = Frame {
        rows: false,
        preceding: Some(1000),
    };
    // Flink's: the rows at 10:00:03 and 10:00:01 each come after the key's cleanup, alone.
    assert_eq!(
        values(&run(frame, ROWS)),
        [
            "10: 1 10 10",
            "20: 1 20 20",
            "30: 2 70 30",
            "40: 2 70 30",
            "70: 1 70 70",
            "60: 1 60 60",
            "50: 1 50 50",
            "80: 1 80 80",
            "NULL: 0 NULL NULL",
        ]
    );
}

#[test]
fn processing_time_rows_leave_at_once() {
    let frame = Frame {
        rows: true,
        preceding: Some(1),
    };
    let mut op = unopened(frame, OverTime::Proctime);
    op.open(&OperatorContext::default()).unwrap();
    let out = run_script_on(
        &mut op,
        &[&input()],
        &output(),
        "+I 1 | 1 | 2024-01-01 10:00:00
         +I 1 | 2 | 2024-01-01 10:00:00
         --
         +I 1 | 4 | 2024-01-01 10:00:00
         +I 2 | 8 | 2024-01-01 10:00:00",
    )
    .unwrap();
    assert_eq!(
        values(&out),
        ["1: 1 1 1", "2: 2 3 1", "4: 2 6 2", "8: 1 8 8"]
    );
}

/// Rows over three keys mostly in time order, some late, the watermark a few seconds
/// behind the rows.
fn random_script(seed: u64) -> String {
    let mut rng = ScriptRng::new(seed);
    let mut next = |n: u64| rng.next(n);
    let time = |seconds: u64| clock_text("2024-01-01", 10, seconds);
    let (mut now, mut watermark, mut lines) = (60u64, 0u64, Vec::new());
    for _ in 0..40 {
        if next(5) == 0 && now > watermark + 3 {
            watermark = now - 3;
            lines.push(format!("WM {}", time(watermark)));
        } else {
            now += next(3);
            let at = now.saturating_sub(if next(6) == 0 { next(10) } else { 0 });
            lines.push(format!("+I {} | {} | {}", next(3), next(100), time(at)));
        }
    }
    lines.push("WM MAX".into());
    lines.join("\n")
}

#[test]
fn restored_equals_uninterrupted() {
    let frames = [
        (false, None),
        (true, None),
        (false, Some(2_000)),
        (true, Some(2)),
    ];
    for (rows, preceding) in frames {
        let frame = Frame { rows, preceding };
        let build = || Box::new(unopened(frame, OverTime::Rowtime)) as Box<dyn Operator>;
        let check = RestoreCheck {
            build: &build,
            inputs: &[&input()],
            output: &output(),
            keys: Some(&[vec![0]]),
            exact_order: false,
        };
        for seed in 0..3 {
            check.check(&random_script(seed));
        }
    }
}

/// UNBOUNDED frames fire many timers at once in rounds: with every row fired by one
/// watermark (the rows in one chunk, or a chunk each), the values are the brute force's — per key in time
/// order (ties in arrival order), ROWS the running values after each row, RANGE after the
/// last row of its time.
#[test]
fn unbounded_rounds_equal_the_brute_force() {
    for rows_frame in [false, true] {
        let frame = Frame {
            rows: rows_frame,
            preceding: None,
        };
        for seed in 0..6 {
            let mut rng = ScriptRng::new(seed);
            let rows: Vec<(u64, u64, u64)> = (0..60)
                .map(|_| (rng.next(4), rng.next(50), rng.next(20)))
                .collect();
            let lines: Vec<String> = rows
                .iter()
                .map(|(k, v, t)| format!("+I {k} | {v} | {}", clock_text("2024-01-01", 10, *t)))
                .collect();
            let mut expected = Vec::new();
            for key in 0..4 {
                let mut mine: Vec<(usize, &(u64, u64, u64))> = rows
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.0 == key)
                    .collect();
                mine.sort_by_key(|(i, r)| (r.2, *i));
                for (j, (_, r)) in mine.iter().enumerate() {
                    let upto = if rows_frame {
                        j + 1
                    } else {
                        mine.iter().filter(|(_, o)| o.2 <= r.2).count()
                    };
                    let frame = &mine[..upto];
                    let sum: u64 = frame.iter().map(|(_, o)| o.1).sum();
                    let min = frame.iter().map(|(_, o)| o.1).min().unwrap();
                    expected.push(format!("{}: {} {sum} {min}", r.1, upto));
                }
            }
            expected.sort();
            for per_row in [false, true] {
                let script = if per_row {
                    lines.join("\n--\n") + "\nWM MAX"
                } else {
                    lines.join("\n") + "\nWM MAX"
                };
                let mut got = values(&run(frame, &script));
                got.sort();
                assert_eq!(got, expected, "rows {rows_frame}, seed {seed}");
            }
        }
    }
}

/// Batch mode: nothing is late (a NULL time first, times before 1970 kept by a bounded
/// frame), partitions leave in key order, and RANK / DENSE_RANK are true ranks — Flink
/// 2.3's batch results for the same rows (tests/slt/batch/over_aggregate.slt has them too).
#[test]
fn batch_ranks_truly_and_drops_nothing() {
    // ROW_NUMBER's frame is ROWS, RANK's and DENSE_RANK's RANGE: one operator each.
    let ranked = |functions: &[AggregateFunction]| {
        let mut fields = input().fields;
        for f in functions {
            fields.push(crate::types::Field::new(
                f.name(),
                DataType::not_null(TypeKind::BigInt),
            ));
        }
        let output = Schema::new(fields);
        let calls = functions
            .iter()
            .map(|&function| AggregateCall {
                function,
                args: vec![],
                distinct: false,
                filter: None,
                data_type: DataType::not_null(TypeKind::BigInt),
                name: String::new(),
            })
            .collect();
        let runtime = crate::types::chunk::runtime_schema;
        let frame = Frame {
            rows: functions == [AggregateFunction::RowNumber],
            preceding: None,
        };
        let mut op = OverAggregateOperator::new(
            runtime(&input()),
            runtime(&output),
            vec![0],
            2,
            OverTime::Batch,
            frame,
            calls,
        )
        .unwrap();
        op.open(&OperatorContext::default()).unwrap();
        let out = run_script_on(
            &mut op,
            &[&input()],
            &output,
            "+I 2 | 1 | 2024-01-01 10:00:01
             +I 2 | 2 | 2024-01-01 10:00:02
             +I 2 | 3 | 2024-01-01 10:00:02
             +I 2 | 4 | NULL
             +I 1 | 5 | 1969-12-31 23:59:59
             +I 1 | 6 | 2024-01-01 10:00:03
             +I 2 | 7 | 2024-01-01 10:00:03
             +I 1 | 8 | 1969-12-31 23:59:59
             WM MAX",
        )
        .unwrap();
        assert_eq!(op.late_rows(), 0);
        out.lines()
            .filter(|l| l.starts_with("+I"))
            .map(|l| {
                let f: Vec<&str> = l.split('|').map(str::trim).collect();
                format!("{}: {}", f[1], f[3..].join(" "))
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ranked(&[AggregateFunction::RowNumber]),
        [
            "5: 1", "8: 2", "6: 3", "4: 1", "1: 2", "2: 3", "3: 4", "7: 5"
        ]
    );
    assert_eq!(
        ranked(&[AggregateFunction::Rank, AggregateFunction::DenseRank]),
        [
            "5: 1 1", "8: 1 1", "6: 3 2", "4: 1 1", "1: 2 2", "2: 3 3", "3: 3 3", "7: 5 4"
        ]
    );

    // A bounded frame keeps rows before 1970 (streaming drops them, as Flink does).
    let frame = Frame {
        rows: true,
        preceding: Some(1),
    };
    let mut op = unopened(frame, OverTime::Batch);
    op.open(&OperatorContext::default()).unwrap();
    let out = run_script_on(
        &mut op,
        &[&input()],
        &output(),
        "+I 1 | 5 | 1969-12-31 23:59:59
         +I 1 | 8 | 1969-12-31 23:59:59
         +I 1 | 6 | 2024-01-01 10:00:03
         WM MAX",
    )
    .unwrap();
    assert_eq!(values(&out), ["5: 1 5 5", "8: 2 13 5", "6: 2 14 6"]);
}

/// A watermark that releases more rows than a chunk holds emits them in pieces, every row
/// once, for unbounded and bounded frames.
#[test]
fn a_watermark_releasing_many_rows_emits_pieces() {
    use arrow_array::{Int32Array, TimestampNanosecondArray};
    use std::sync::Arc;
    let n = PIECE_ROWS * 2 + 10;
    let runtime = crate::types::chunk::runtime_schema(&input());
    let batch = RecordBatch::try_new(
        runtime,
        vec![
            Arc::new(Int32Array::from_iter_values(
                (0..n as i32).map(|i| i % 1000),
            )),
            Arc::new(Int32Array::from_iter_values(0..n as i32)),
            Arc::new(TimestampNanosecondArray::from_iter_values(
                (0..n as i64).map(|i| (1_700_000_000_000 + i / 7) * 1_000_000),
            )),
        ],
    )
    .unwrap();
    for (rows, preceding) in [(false, None), (true, None), (true, Some(3))] {
        let mut op = unopened(Frame { rows, preceding }, OverTime::Rowtime);
        op.open(&OperatorContext::default()).unwrap();
        let mut out = Chunks::default();
        op.process(0, StreamChunk::inserts(batch.clone()), &mut out)
            .unwrap();
        op.on_watermark(i64::MAX - 1, &mut out).unwrap();
        let sizes = out.sizes();
        assert!(sizes.len() >= 3, "{sizes:?}");
        assert!(sizes.iter().all(|&s| s <= PIECE_ROWS), "{sizes:?}");
        assert_eq!(sizes.iter().sum::<usize>(), n);
    }
}
