//! Operator tests: Flink's event-time temporal join, row by row — each left row joins the
//! version current at its time, emitted when the watermark passes it; versions before the
//! one current at the watermark are dropped, so a late left row may find none; a delete is a
//! version that matches nothing; `-U` is ignored; LEFT JOIN pads; restored == uninterrupted.

use super::*;
use crate::exec::test_harness::{run_script_on, schema};
use crate::types::{Schema, TypeKind};

fn orders() -> Schema {
    schema(&[
        ("id", TypeKind::VarChar(5)),
        ("cur", TypeKind::VarChar(5)),
        ("ts", TypeKind::Timestamp(3)),
    ])
}

fn rates() -> Schema {
    schema(&[
        ("cur", TypeKind::VarChar(5)),
        ("rate", TypeKind::Int),
        ("ut", TypeKind::Timestamp(3)),
    ])
}

fn output() -> Schema {
    schema(&[
        ("id", TypeKind::VarChar(5)),
        ("cur", TypeKind::VarChar(5)),
        ("ts", TypeKind::Timestamp(3)),
        ("cur0", TypeKind::VarChar(5)),
        ("rate", TypeKind::Int),
        ("ut", TypeKind::Timestamp(3)),
    ])
}

fn operator(left_outer: bool) -> TemporalJoinOperator {
    let runtime = crate::types::chunk::runtime_schema;
    let mut op = TemporalJoinOperator::new(
        &runtime(&orders()),
        &runtime(&rates()),
        runtime(&output()),
        (vec![1], vec![0]),
        (2, 2),
        left_outer,
        None,
        crate::function::EvalContext::for_tests(0),
    )
    .unwrap();
    op.open(&OperatorContext::default()).unwrap();
    op
}

fn run(op: &mut TemporalJoinOperator, script: &str) -> String {
    run_script_on(op, &[&orders(), &rates()], &output(), script).unwrap()
}

#[test]
fn each_order_joins_the_rate_current_at_its_time() {
    let script = "
        @1
        +I EUR | 110 | 2024-01-01 09:00:00
        +I EUR | 112 | 2024-01-01 10:04:00
        @0
        +I o1 | EUR | 2024-01-01 10:00:00
        +I o3 | EUR | 2024-01-01 10:05:00
        +I o0 | EUR | 2024-01-01 08:00:00
        WM MAX";
    assert_eq!(
        run(&mut operator(false), script),
        "+I o1 | EUR | 2024-01-01 10:00:00.000 | EUR | 110 | 2024-01-01 09:00:00.000\n\
         +I o3 | EUR | 2024-01-01 10:05:00.000 | EUR | 112 | 2024-01-01 10:04:00.000\n\
         WM 9223372036854775807"
    );
}

#[test]
fn rows_wait_for_the_watermark_and_old_versions_go() {
    // At 10:03 the order of 10:01 goes out; the 09:00 version is the one current at the
    // watermark and stays. At 10:10 it goes (10:04 is current), so the late order of 09:30
    // finds no version: dropped by an inner join, padded by a left join.
    let script = "
        @1
        +I USD | 100 | 2024-01-01 09:00:00
        +I USD | 101 | 2024-01-01 10:04:00
        @0
        +I o2 | USD | 2024-01-01 10:01:00
        WM 2024-01-01 10:03:00
        +I o6 | USD | 2024-01-01 09:59:00
        WM 2024-01-01 10:10:00
        +I o8 | USD | 2024-01-01 09:30:00
        WM MAX";
    assert_eq!(
        run(&mut operator(false), script),
        "+I o2 | USD | 2024-01-01 10:01:00.000 | USD | 100 | 2024-01-01 09:00:00.000\n\
         WM 1704103380000\n\
         +I o6 | USD | 2024-01-01 09:59:00.000 | USD | 100 | 2024-01-01 09:00:00.000\n\
         WM 1704103800000\n\
         WM 9223372036854775807"
    );
    assert_eq!(
        run(&mut operator(true), script),
        "+I o2 | USD | 2024-01-01 10:01:00.000 | USD | 100 | 2024-01-01 09:00:00.000\n\
         WM 1704103380000\n\
         +I o6 | USD | 2024-01-01 09:59:00.000 | USD | 100 | 2024-01-01 09:00:00.000\n\
         WM 1704103800000\n\
         +I o8 | USD | 2024-01-01 09:30:00.000 | NULL | NULL | NULL\n\
         WM 9223372036854775807"
    );
}

#[test]
fn a_delete_matches_nothing_and_update_befores_are_ignored() {
    let script = "
        @1
        +I JPY | 1 | 2024-01-01 09:00:00
        -U JPY | 1 | 2024-01-01 09:00:00
        +U JPY | 2 | 2024-01-01 10:00:00
        -D JPY | 2 | 2024-01-01 11:00:00
        @0
        +I a | JPY | 2024-01-01 09:30:00
        +I b | JPY | 2024-01-01 10:30:00
        +I c | JPY | 2024-01-01 11:30:00
        +I d | NULL | 2024-01-01 11:30:00
        END";
    assert_eq!(
        run(&mut operator(true), script),
        "+I a | JPY | 2024-01-01 09:30:00.000 | JPY | 1 | 2024-01-01 09:00:00.000\n\
         +I b | JPY | 2024-01-01 10:30:00.000 | JPY | 2 | 2024-01-01 10:00:00.000\n\
         +I c | JPY | 2024-01-01 11:30:00.000 | NULL | NULL | NULL\n\
         +I d | NULL | 2024-01-01 11:30:00.000 | NULL | NULL | NULL"
    );
}

#[test]
fn restored_state_continues_as_uninterrupted() {
    let first = "
        @1
        +I EUR | 110 | 2024-01-01 09:00:00
        @0
        +I o1 | EUR | 2024-01-01 10:00:00
        WM 2024-01-01 09:30:00";
    let second = "
        @1
        +I EUR | 112 | 2024-01-01 09:50:00
        @0
        +I o2 | EUR | 2024-01-01 09:40:00
        WM MAX";
    let mut whole = operator(false);
    let expected = run(&mut whole, &format!("{first}\n{second}"));
    let mut before = operator(false);
    let head = run(&mut before, first);
    let mut restored = operator(false);
    for (group, state) in before.snapshot() {
        restored.restore(group, &state).unwrap();
    }
    let tail = run(&mut restored, second);
    assert_eq!(format!("{head}\n{tail}"), expected);
}
