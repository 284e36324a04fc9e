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
        crate::types::chunk::runtime_schema(&clicks()),
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

/// `table.exec.state.ttl`: a key not written for the TTL is new again (keep-first emits its
/// next row; it writes a key only when it keeps its first row), and the sweep frees it.
#[test]
fn state_ttl_makes_an_idle_key_new_again() {
    use crate::exec::test_harness::{Recorder, chunk};
    let clock = crate::clock::ManualClock::new(0);
    let mut op = operator(false, false).with_state_ttl(1_000);
    op.open(&OperatorContext::instance(0, 1, 128, clock.clone()))
        .unwrap();
    let mut out = Recorder::new(&clicks());
    let mut at = |op: &mut DeduplicateOperator, ms: i64, rows: &str| {
        clock.set(ms * 1_000_000);
        op.process(0, chunk(&clicks(), rows), &mut out).unwrap();
        out.take()
    };
    assert_eq!(
        at(&mut op, 0, "+I Mary | a | 2020-04-15 12:00:00"),
        "+I Mary | a | 2020-04-15 12:00:00.000"
    );
    assert_eq!(at(&mut op, 900, "+I Mary | b | 2020-04-15 12:00:01"), "");
    // Keep-first writes a key once, at its first row (0): gone at 1,000 though seen at 900.
    assert_eq!(
        at(&mut op, 1_000, "+I Mary | c | 2020-04-15 12:00:02"),
        "+I Mary | c | 2020-04-15 12:00:02.000"
    );
    assert_eq!(at(&mut op, 1_999, "+I Mary | d | 2020-04-15 12:00:03"), "");
    op.on_processing_time(2_000, &mut out).unwrap();
    assert!(op.keyed.keys.is_empty());
}

/// A restored key keeps its write time: keep-first's key written at 0 and snapshotted at 900
/// is new again at 1,000 after a restore, as without one.
#[test]
fn a_restored_key_keeps_its_ttl_write_time() {
    use crate::exec::test_harness::{Recorder, chunk};
    let clock = crate::clock::ManualClock::new(0);
    let ctx = OperatorContext::instance(0, 1, 128, clock.clone());
    let mut op = operator(false, false).with_state_ttl(1_000);
    op.open(&ctx).unwrap();
    let mut out = Recorder::new(&clicks());
    op.process(
        0,
        chunk(&clicks(), "+I Mary | a | 2020-04-15 12:00:00"),
        &mut out,
    )
    .unwrap();
    assert_eq!(out.take(), "+I Mary | a | 2020-04-15 12:00:00.000");
    clock.set(900 * 1_000_000);
    let snapshot = op.snapshot();
    let mut restored = operator(false, false).with_state_ttl(1_000);
    restored.open(&ctx).unwrap();
    for (kg, state) in snapshot {
        restored.restore(kg, &state).unwrap();
    }
    clock.set(1_000 * 1_000_000);
    restored
        .process(
            0,
            chunk(&clicks(), "+I Mary | c | 2020-04-15 12:00:02"),
            &mut out,
        )
        .unwrap();
    assert_eq!(out.take(), "+I Mary | c | 2020-04-15 12:00:02.000");
}

/// Keep-first on event time, as Flink's `RowTimeDeduplicateKeepFirstRowFunctionTest`: a row
/// behind the watermark is late; each key keeps its earliest row (a tie keeps the first to
/// come) until the watermark reaches it, inserts it, and ignores the key's later rows.
#[test]
fn keep_first_on_event_time_waits_for_the_watermark_and_inserts_only() {
    let mut op = operator(false, true);
    let out = run_script(
        &mut op,
        &clicks(),
        &clicks(),
        "WM 50
         +I key1 | late | 1970-01-01 00:00:00.001
         +I key1 | 14 | 1970-01-01 00:00:00.101
         +I key1 | 13 | 1970-01-01 00:00:00.099
         +I key1 | 15 | 1970-01-01 00:00:00.099
         +I key1 | 12 | 1970-01-01 00:00:00.100
         +I key2 | 11 | 1970-01-01 00:00:00.101
         WM 102
         +I key1 | 12 | 1970-01-01 00:00:00.300
         +I key2 | 11 | 1970-01-01 00:00:00.301
         +I key3 | 5 | 1970-01-01 00:00:00.299
         WM 302",
    )
    .unwrap();
    assert_eq!(
        out,
        "WM 50\n\
         +I key1 | 13 | 1970-01-01 00:00:00.099\n+I key2 | 11 | 1970-01-01 00:00:00.101\n\
         WM 102\n\
         +I key3 | 5 | 1970-01-01 00:00:00.299\n\
         WM 302"
    );
    assert_eq!(op.late_rows(), 1);
}

/// Every mode (keep-first and keep-last, on event and processing time), restored at every
/// cut from one or two instances to one or two: the state frozen at the cut while the
/// operator goes on writing into its pages gives what the uninterrupted run gives — rows
/// waiting for the watermark, late rows, the replayed watermark firing nothing again, and
/// rows of several widths, so that the kept rows change form on the way.
#[test]
fn every_mode_frozen_at_every_cut_restores_as_uninterrupted() {
    for (keep_last, rowtime) in [
        (false, Some(2)),
        (true, Some(2)),
        (true, None),
        (false, None),
    ] {
        let build = || {
            Box::new(
                DeduplicateOperator::new(
                    crate::types::chunk::runtime_schema(&clicks()),
                    vec![0],
                    keep_last,
                    rowtime,
                    true,
                )
                .unwrap(),
            ) as Box<dyn Operator>
        };
        crate::exec::test_harness::RestoreCheck {
            build: &build,
            inputs: &[&clicks()],
            output: &clicks(),
            keys: Some(&[vec![0]]),
            exact_order: false,
        }
        .check(
            "+I a | 1 | 1970-01-01 00:00:01
             +I b | 2 | 1970-01-01 00:00:02
             +I a | 3 | 1970-01-01 00:00:00.500
             WM 1000
             +I a | 4 | 1970-01-01 00:00:03
             +I b | 5 | 1970-01-01 00:00:01.500
             +I ccc | 6 | 1970-01-01 00:00:00.900
             +I ccc | 7 | 1970-01-01 00:00:04
             WM 3000
             +I ccc | 8 | 1970-01-01 00:00:05
             +I dddd | 9 | 1970-01-01 00:00:06
             WM MAX",
        );
    }
}
