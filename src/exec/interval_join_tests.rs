//! Operator tests: Flink's interval join, row by row — pairs within the bounds; rows kept
//! until their cleanup timer (the bound plus half the window, Flink's `minCleanUpInterval`)
//! fires, so a late row may still meet them; outer rows padded when they expire or arrive
//! late; the held-back watermark.

use super::*;
use crate::exec::test_harness::{run_script_on, schema};
use crate::types::{Schema, TypeKind};

fn side() -> Schema {
    schema(&[
        ("k", TypeKind::Int),
        ("v", TypeKind::VarChar(10)),
        ("ts", TypeKind::Timestamp(3)),
    ])
}

fn output() -> Schema {
    schema(&[
        ("k", TypeKind::Int),
        ("v", TypeKind::VarChar(10)),
        ("ts", TypeKind::Timestamp(3)),
        ("k0", TypeKind::Int),
        ("w", TypeKind::VarChar(10)),
        ("ts0", TypeKind::Timestamp(3)),
    ])
}

/// `s.ts BETWEEN o.ts AND o.ts + INTERVAL '20' MINUTE`: `left − right` in [−20 min, 0].
fn operator(join_type: JoinType) -> IntervalJoinOperator {
    let runtime = crate::types::chunk::runtime_schema;
    let mut op = IntervalJoinOperator::new(
        &runtime(&side()),
        &runtime(&side()),
        runtime(&output()),
        (vec![0], vec![0]),
        (2, 2),
        (-1_200_000, 0),
        join_type,
        None,
        crate::function::EvalContext::for_tests(0),
    )
    .unwrap();
    op.open(&OperatorContext::default()).unwrap();
    op
}

fn run(op: &mut IntervalJoinOperator, script: &str) -> String {
    run_script_on(op, &[&side(), &side()], &output(), script).unwrap()
}

const ROWS: &str = "
    +I 1 | a | 2024-01-01 10:00:00
    +I 2 | b | 2024-01-01 10:05:00
    @1
    +I 1 | x | 2024-01-01 10:10:00
    +I 1 | y | 2024-01-01 10:25:00
    @0
    WM 2024-01-01 10:29:00
    +I 1 | late | 2024-01-01 09:00:00
    @1
    +I 2 | z | 2024-01-01 10:06:00
    WM MAX";

#[test]
fn inner_pairs_within_the_bounds_and_a_late_row_meets_rows_not_yet_cleaned() {
    assert_eq!(
        run(&mut operator(JoinType::Inner), ROWS),
        "+I 1 | a | 2024-01-01 10:00:00.000 | 1 | x | 2024-01-01 10:10:00.000\n\
         WM 1704103740000\n\
         +I 2 | b | 2024-01-01 10:05:00.000 | 2 | z | 2024-01-01 10:06:00.000\n\
         WM 9223372036854775807"
    );
}

#[test]
fn outer_rows_are_padded_when_they_expire_or_come_late() {
    assert_eq!(
        run(&mut operator(JoinType::Full), ROWS),
        "+I 1 | a | 2024-01-01 10:00:00.000 | 1 | x | 2024-01-01 10:10:00.000\n\
         +I NULL | NULL | NULL | 1 | y | 2024-01-01 10:25:00.000\n\
         WM 1704103740000\n\
         +I 1 | late | 2024-01-01 09:00:00.000 | NULL | NULL | NULL\n\
         +I 2 | b | 2024-01-01 10:05:00.000 | 2 | z | 2024-01-01 10:06:00.000\n\
         WM 9223372036854775807"
    );
}
