//! Operator tests: keep-first and keep-last per key, on processing and event time.

use super::*;
use crate::exec::test_harness::{run_script, schema};
use crate::types::TypeKind;

fn clicks() -> crate::types::Schema {
    schema(&[
        ("user", TypeKind::VarChar(10)),
        ("url", TypeKind::VarChar(10)),
        ("ts", TypeKind::Timestamp(3)),
    ])
}

fn operator(keep_last: bool, rowtime: bool) -> DeduplicateOperator {
    let mut op = DeduplicateOperator::new(
        crate::job::runtime_schema(&clicks()),
        vec![0],
        keep_last,
        rowtime.then_some(2),
        true,
    )
    .unwrap();
    op.open(&OperatorContext::default()).unwrap();
    op
}

const CLICKS: &str = "
+I Mary | a | 2020-04-15 12:00:00
+I Bob | b | 2020-04-15 12:00:00
--
+I Mary | c | 2020-04-15 12:05:00
+I Mary | d | 2020-04-15 12:01:00";

#[test]
fn keep_first_inserts_each_keys_first_row_only() {
    let out = run_script(&mut operator(false, false), &clicks(), &clicks(), CLICKS).unwrap();
    assert_eq!(
        out,
        "+I Mary | a | 2020-04-15 12:00:00.000\n+I Bob | b | 2020-04-15 12:00:00.000"
    );
}

#[test]
fn keep_last_on_processing_time_replaces_with_every_row() {
    let out = run_script(&mut operator(true, false), &clicks(), &clicks(), CLICKS).unwrap();
    assert_eq!(
        out,
        "+I Mary | a | 2020-04-15 12:00:00.000\n+I Bob | b | 2020-04-15 12:00:00.000\n\
         -U Mary | a | 2020-04-15 12:00:00.000\n+U Mary | c | 2020-04-15 12:05:00.000\n\
         -U Mary | c | 2020-04-15 12:05:00.000\n+U Mary | d | 2020-04-15 12:01:00.000"
    );
}

/// On event time an earlier row changes nothing.
#[test]
fn keep_last_on_event_time_keeps_the_latest_row() {
    let out = run_script(&mut operator(true, true), &clicks(), &clicks(), CLICKS).unwrap();
    assert_eq!(
        out,
        "+I Mary | a | 2020-04-15 12:00:00.000\n+I Bob | b | 2020-04-15 12:00:00.000\n\
         -U Mary | a | 2020-04-15 12:00:00.000\n+U Mary | c | 2020-04-15 12:05:00.000"
    );
}

#[test]
fn restored_equals_uninterrupted() {
    let first: String = CLICKS.lines().take(3).collect::<Vec<_>>().join("\n");
    let second = "+I Mary | e | 2020-04-15 12:09:00\n+I Bob | f | 2020-04-15 11:00:00";
    let mut whole = operator(true, true);
    run_script(&mut whole, &clicks(), &clicks(), &first).unwrap();
    let snapshot = whole.snapshot();
    let expected = run_script(&mut whole, &clicks(), &clicks(), second).unwrap();
    let mut restored = operator(true, true);
    for (kg, state) in snapshot {
        restored.restore(kg, &state).unwrap();
    }
    assert_eq!(
        run_script(&mut restored, &clicks(), &clicks(), second).unwrap(),
        expected
    );
}
