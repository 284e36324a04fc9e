//! Operator tests: windows computed from shared slices equal windows computed one by one
//! (the group window operator, which adds a row to each of its windows) — the same rows
//! before each watermark — over random inputs with late rows, for HOP (slide dividing the size or
//! not, with an offset) and CUMULATE, COUNT(*), COUNT(DISTINCT), SUM, MIN and MAX; and
//! restored == uninterrupted.

use std::fmt::Write;

use super::*;
use crate::exec::group_window_aggregate::GroupWindowAggregateOperator;
use crate::exec::test_harness::{run_script, schema};
use crate::plan::aggregate::AggregateFunction;
use crate::types::{DataType, Field, Schema, TypeKind};

const MINUTE: i64 = 60_000;

fn input() -> Schema {
    schema(&[
        ("k", TypeKind::VarChar(10)),
        ("v", TypeKind::Int),
        ("ts", TypeKind::Timestamp(3)),
    ])
}

fn aggregates() -> Vec<AggregateCall> {
    let call = |function, args: &[usize], kind, distinct| AggregateCall {
        function,
        args: args.to_vec(),
        distinct,
        filter: None,
        data_type: DataType::nullable(kind),
        name: String::new(),
    };
    vec![
        AggregateCall {
            data_type: DataType::not_null(TypeKind::BigInt),
            ..call(AggregateFunction::Count, &[], TypeKind::BigInt, false)
        },
        AggregateCall {
            data_type: DataType::not_null(TypeKind::BigInt),
            ..call(AggregateFunction::Count, &[1], TypeKind::BigInt, true)
        },
        call(AggregateFunction::Sum, &[1], TypeKind::Int, false),
        call(AggregateFunction::Min, &[1], TypeKind::Int, false),
        call(AggregateFunction::Max, &[1], TypeKind::Int, false),
    ]
}

fn output() -> Schema {
    let mut fields = vec![input().fields[0].clone()];
    for (i, a) in aggregates().iter().enumerate() {
        fields.push(Field::new(format!("a{i}"), a.data_type.clone()));
    }
    fields.push(Field::new("ws", DataType::not_null(TypeKind::Timestamp(3))));
    fields.push(Field::new("we", DataType::not_null(TypeKind::Timestamp(3))));
    Schema::new(fields)
}

fn window(kind: GroupWindowKind, offset: i64) -> GroupWindow {
    GroupWindow {
        kind,
        time_column: 2,
        time_attribute: TimeAttribute::Rowtime,
        time_type: DataType::nullable(TypeKind::Timestamp(3)),
        offset,
    }
}

/// An operator of type `$op` over `input()`, grouped by `k`, with `aggregates()`.
macro_rules! opened {
    ($op:ty, $kind:expr, $offset:expr) => {{
        let mut op = <$op>::new(
            &crate::types::chunk::runtime_schema(&input()),
            vec![0],
            window($kind, $offset),
            aggregates(),
            vec![WindowProperty::Start, WindowProperty::End],
            crate::types::chunk::runtime_schema(&output()),
            SessionZone::new("UTC").unwrap(),
            false,
        )
        .unwrap();
        op.open(&OperatorContext::default()).unwrap();
        op
    }};
}

fn sliced(kind: GroupWindowKind, offset: i64) -> SlicingWindowAggregateOperator {
    opened!(SlicingWindowAggregateOperator, kind, offset)
}

fn per_window(kind: GroupWindowKind, offset: i64) -> GroupWindowAggregateOperator {
    opened!(GroupWindowAggregateOperator, kind, offset)
}

/// A random script: rows of 4 keys, mostly ascending in time with some out of order (late
/// for some windows or all), a watermark every few rows, the final one last.
fn random_script(seed: u64) -> String {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut script = String::new();
    let mut time = 0i64;
    for _ in 0..(20 + next(60)) {
        time += next(4) as i64 * MINUTE / 2;
        let at = (time - next(3) as i64 * next(12) as i64 * MINUTE).max(0);
        let seconds = at / 1000;
        writeln!(
            script,
            "+I k{} | {} | 2024-01-01 {:02}:{:02}:{:02}",
            next(4),
            next(10),
            10 + seconds / 3600,
            seconds / 60 % 60,
            seconds % 60
        )
        .unwrap();
        if next(4) == 0 {
            writeln!(script, "WM {}", 1_704_103_200_000 + time - MINUTE).unwrap();
        }
    }
    script.push_str("WM MAX\n");
    script
}

fn kinds() -> Vec<(GroupWindowKind, i64)> {
    vec![
        (
            GroupWindowKind::Hop {
                slide: 2 * MINUTE,
                size: 10 * MINUTE,
            },
            0,
        ),
        (
            GroupWindowKind::Hop {
                slide: 4 * MINUTE,
                size: 10 * MINUTE,
            },
            MINUTE,
        ),
        (
            GroupWindowKind::Cumulate {
                step: 3 * MINUTE,
                size: 12 * MINUTE,
            },
            0,
        ),
        (
            GroupWindowKind::Cumulate {
                step: 5 * MINUTE,
                size: 15 * MINUTE,
            },
            2 * MINUTE,
        ),
    ]
}

/// Output with the rows emitted before each watermark sorted (the windows of one trigger
/// time come in the order their keys were timed, not by key bytes as the other operator's).
fn by_watermark(output: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut rows: Vec<&str> = Vec::new();
    for line in output.lines() {
        if line.starts_with("WM ") {
            rows.sort_by_key(|r| {
                // By window end, then the row.
                let end = r.rsplit(" | ").next().unwrap_or("").to_string();
                (end, r.to_string())
            });
            lines.extend(rows.drain(..).map(str::to_string));
            lines.push(line.to_string());
        } else {
            rows.push(line);
        }
    }
    lines.extend(rows.into_iter().map(str::to_string));
    lines.join("\n")
}

#[test]
fn slices_give_the_windows_computed_one_by_one() {
    for seed in 0..150 {
        let script = random_script(seed);
        for (kind, offset) in kinds() {
            let mut a = sliced(kind, offset);
            let mut b = per_window(kind, offset);
            let got = by_watermark(&run_script(&mut a, &input(), &output(), &script).unwrap());
            let want = by_watermark(&run_script(&mut b, &input(), &output(), &script).unwrap());
            assert_eq!(got, want, "seed {seed}, {kind:?} offset {offset}\n{script}");
            assert_eq!(a.late_rows(), b.late_rows(), "seed {seed}, {kind:?}");
        }
    }
}

#[test]
fn state_is_freed_once_the_last_window_fires() {
    let (kind, offset) = kinds()[0];
    let mut op = sliced(kind, offset);
    run_script(&mut op, &input(), &output(), &random_script(7)).unwrap();
    assert!(op.keys.is_empty());
    assert!(op.timers.is_empty());
    assert_eq!(op.free_slots.len(), op.rows.len());
}

#[test]
fn restored_state_continues_as_uninterrupted() {
    for seed in 0..20 {
        let script = random_script(seed);
        for (kind, offset) in kinds() {
            let lines: Vec<&str> = script.lines().collect();
            let cut = lines.len() / 2;
            let (head, rest) = (lines[..cut].join("\n"), lines[cut..].join("\n"));
            let uninterrupted =
                run_script(&mut sliced(kind, offset), &input(), &output(), &script).unwrap();
            let mut before = sliced(kind, offset);
            let first = run_script(&mut before, &input(), &output(), &head).unwrap();
            let mut restored = sliced(kind, offset);
            // The watermark the first half reached, so lateness is judged alike.
            restored.watermark = before.watermark;
            for (group, state) in before.snapshot() {
                restored.restore(group, &state).unwrap();
            }
            let second = run_script(&mut restored, &input(), &output(), &rest).unwrap();
            let joined = [first, second]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("\n");
            assert_eq!(
                by_watermark(&joined),
                by_watermark(&uninterrupted),
                "seed {seed}, {kind:?}"
            );
        }
    }
}

#[test]
fn restored_equals_uninterrupted_late_rows_included() {
    for (kind, offset) in kinds() {
        let build = || Box::new(sliced(kind, offset)) as Box<dyn Operator>;
        let check = crate::exec::test_harness::RestoreCheck {
            build: &build,
            inputs: &[&input()],
            output: &output(),
            keys: Some(&[vec![0]]),
            exact_order: false,
        };
        for seed in 0..2 {
            let script = random_script(seed);
            check.check(script.trim_end().trim_end_matches("WM MAX"));
        }
    }
}

#[test]
fn corrupt_state_is_an_error() {
    let (kind, offset) = kinds()[0];
    let mut op = sliced(kind, offset);
    let script = random_script(4);
    let head: Vec<&str> = script.lines().take(30).collect();
    run_script(&mut op, &input(), &output(), &head.join("\n")).unwrap();
    let keyed = op.snapshot();
    assert!(!keyed.is_empty());
    let build = || Box::new(sliced(kind, offset)) as Box<dyn Operator>;
    crate::exec::test_harness::check_corrupt_state_fails(
        &build,
        &keyed,
        op.snapshot_instance().as_deref(),
    );
}
