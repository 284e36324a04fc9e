//! Operator tests: a regular SEMI and ANTI join row by row — left rows emitted as they gain
//! their first match (SEMI) or while they have none (ANTI), taken back as that changes; NULL
//! keys; the residual; batch mode's final rows; restored == uninterrupted.

use super::*;
use crate::exec::test_harness::{run_script_on, schema};
use crate::types::{DataType, Schema, TypeKind};

fn left() -> Schema {
    schema(&[("k", TypeKind::Int), ("v", TypeKind::Int)])
}

fn right() -> Schema {
    schema(&[("k", TypeKind::Int), ("w", TypeKind::Int)])
}

/// `w > v`, over the left's columns then the right's.
fn w_above_v() -> ScalarExpr {
    let column = |index| ScalarExpr::Column {
        index,
        data_type: DataType::nullable(TypeKind::Int),
    };
    ScalarExpr::Call {
        function: crate::function::lookup(">").unwrap(),
        args: vec![column(3), column(1)],
        data_type: DataType::nullable(TypeKind::Boolean),
    }
}

fn operator(anti: bool, residual: Option<ScalarExpr>, final_only: bool) -> SemiAntiJoinOperator {
    let runtime = crate::types::chunk::runtime_schema;
    let mut op = SemiAntiJoinOperator::new(
        &runtime(&left()),
        &runtime(&right()),
        runtime(&left()),
        (vec![0], vec![0]),
        anti,
        residual,
        crate::function::EvalContext::for_tests(0),
        final_only,
    )
    .unwrap();
    op.open(&OperatorContext::default()).unwrap();
    op
}

fn run(op: &mut SemiAntiJoinOperator, script: &str) -> String {
    run_script_on(op, &[&left(), &right()], &left(), script).unwrap()
}

const SCRIPT: &str = "
    +I 1 | 10
    +I 2 | 20
    +I NULL | 30
    @1
    +I 1 | 100
    +I 1 | 101
    +I 3 | 300
    @0
    +I 1 | 11
    +I 3 | 31
    @1
    -D 1 | 100
    -D 1 | 101
    END";

#[test]
fn semi_emits_left_rows_at_their_first_match_and_takes_them_back_at_their_last() {
    assert_eq!(
        run(&mut operator(false, None, false), SCRIPT),
        "+I 1 | 10\n+I 1 | 11\n+I 3 | 31\n-D 1 | 10\n-D 1 | 11"
    );
}

#[test]
fn anti_emits_left_rows_without_a_match_and_deletes_them_when_one_comes() {
    assert_eq!(
        run(&mut operator(true, None, false), SCRIPT),
        "+I 1 | 10\n+I 2 | 20\n+I NULL | 30\n-D 1 | 10\n+I 1 | 10\n+I 1 | 11"
    );
}

#[test]
fn the_residual_judges_each_pair() {
    // w > v: 100 and 101 exceed 10 and 11; 300 exceeds 31.
    let script = "
        +I 1 | 10
        +I 1 | 500
        @1
        +I 1 | 100
        END";
    assert_eq!(
        run(&mut operator(false, Some(w_above_v()), false), script),
        "+I 1 | 10"
    );
    assert_eq!(
        run(&mut operator(true, Some(w_above_v()), false), script),
        "+I 1 | 10\n+I 1 | 500\n-D 1 | 10"
    );
}

#[test]
fn batch_mode_emits_final_rows_only() {
    // Batch inputs insert only.
    let script = SCRIPT.split("@1\n    -D").next().unwrap();
    assert_eq!(
        run(&mut operator(false, None, true), &format!("{script}\nEND")),
        "+I 1 | 10\n+I 1 | 11\n+I 3 | 31"
    );
    let anti = run(&mut operator(true, None, true), &format!("{script}\nEND"));
    let mut lines: Vec<&str> = anti.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, vec!["+I 2 | 20", "+I NULL | 30"]);
}

#[test]
fn restored_state_continues_as_uninterrupted() {
    let (head, rest) = SCRIPT.split_at(SCRIPT.find("@0").unwrap());
    let uninterrupted = run(&mut operator(true, None, false), SCRIPT);
    let mut before = operator(true, None, false);
    let first = run(&mut before, head);
    let mut restored = operator(true, None, false);
    for (group, state) in before.snapshot() {
        restored.restore(group, &state).unwrap();
    }
    let second = run(&mut restored, rest);
    assert_eq!(format!("{first}\n{second}"), uninterrupted);
}
