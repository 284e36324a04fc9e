//! Operator tests: a window Top-N over bids in ten-minute windows — the top two per supplier
//! and window when the watermark passes its end, ties to the earlier arrival, late rows
//! dropped and counted; restored == uninterrupted.
use crate::exec::test_harness::{ScriptRng, clock_text};

use super::*;
use crate::exec::test_harness::{RestoreCheck, check_corrupt_state_fails, run_script, schema};
use crate::types::{Schema, TypeKind};

fn bids() -> Schema {
    schema(&[
        ("supplier", TypeKind::VarChar(10)),
        ("price", TypeKind::Int),
        ("bidtime", TypeKind::Timestamp(3)),
        ("window_end", TypeKind::Timestamp(3)),
    ])
}

fn ranked() -> Schema {
    schema(&[
        ("supplier", TypeKind::VarChar(10)),
        ("price", TypeKind::Int),
        ("bidtime", TypeKind::Timestamp(3)),
        ("window_end", TypeKind::Timestamp(3)),
        ("rownum", TypeKind::BigInt),
    ])
}

/// `ROW_NUMBER() OVER (PARTITION BY window_start, window_end, supplier ORDER BY price DESC)
/// <= 2`, the rank selected.
fn unopened() -> WindowRankOperator {
    let runtime = crate::types::chunk::runtime_schema;
    let descending = OrderKey {
        column: 1,
        descending: true,
        nulls_first: false,
    };
    WindowRankOperator::new(
        runtime(&bids()),
        runtime(&ranked()),
        vec![0],
        3,
        &[descending],
        (1, 2),
        true,
        &bids().fields[2].data_type,
        SessionZone::new("UTC").unwrap(),
    )
    .unwrap()
}

fn operator() -> WindowRankOperator {
    let mut op = unopened();
    op.open(&OperatorContext::default()).unwrap();
    op
}

#[test]
fn the_top_two_per_supplier_leave_when_their_window_fires() {
    let mut op = operator();
    let out = run_script(
        &mut op,
        &bids(),
        &ranked(),
        "+I s1 | 4 | 2020-04-15 08:05:00 | 2020-04-15 08:10:00
         +I s1 | 5 | 2020-04-15 08:06:00 | 2020-04-15 08:10:00
         +I s2 | 3 | 2020-04-15 08:07:00 | 2020-04-15 08:10:00
         +I s1 | 5 | 2020-04-15 08:08:00 | 2020-04-15 08:10:00
         +I s1 | 9 | 2020-04-15 08:11:00 | 2020-04-15 08:20:00
         WM 2020-04-15 08:10:00
         +I s1 | 7 | 2020-04-15 08:09:00 | 2020-04-15 08:10:00
         WM MAX",
    )
    .unwrap();
    assert_eq!(
        out,
        "+I s1 | 5 | 2020-04-15 08:06:00.000 | 2020-04-15 08:10:00.000 | 1\n\
         +I s1 | 5 | 2020-04-15 08:08:00.000 | 2020-04-15 08:10:00.000 | 2\n\
         +I s2 | 3 | 2020-04-15 08:07:00.000 | 2020-04-15 08:10:00.000 | 1\n\
         WM 1586938200000\n\
         +I s1 | 9 | 2020-04-15 08:11:00.000 | 2020-04-15 08:20:00.000 | 1\n\
         WM 9223372036854775807"
    );
    assert_eq!(op.late_rows(), 1);
}

/// Bids of five suppliers over an hour, the watermark a minute behind, some bids later than
/// it (late when their window has fired).
fn random_script(seed: u64) -> String {
    let mut rng = ScriptRng::new(seed);
    let mut next = |n: u64| rng.next(n);
    let time = |seconds: u64| clock_text("2020-04-15", 8, seconds);
    let (mut now, mut watermark, mut lines) = (0u64, 0u64, Vec::new());
    for _ in 0..40 {
        if next(6) == 0 && now > watermark + 60 {
            watermark = now - 60;
            lines.push(format!("WM {}", time(watermark)));
            continue;
        }
        now += next(150);
        let at = now.saturating_sub(if next(5) == 0 { next(900) } else { 0 });
        let end = (at / 600 + 1) * 600;
        lines.push(format!(
            "+I s{} | {} | {} | {}",
            next(5),
            next(6),
            time(at),
            time(end)
        ));
    }
    lines.join("\n")
}

#[test]
fn restored_equals_uninterrupted() {
    let build = || Box::new(unopened()) as Box<dyn Operator>;
    let check = RestoreCheck {
        build: &build,
        inputs: &[&bids()],
        output: &ranked(),
        keys: Some(&[vec![0]]),
        exact_order: true,
    };
    for seed in 0..4 {
        check.check(&random_script(seed));
    }
}

#[test]
fn corrupt_state_is_an_error() {
    let mut op = operator();
    let script = random_script(1);
    let head = script.lines().take(20).collect::<Vec<_>>().join("\n");
    run_script(&mut op, &bids(), &ranked(), &head).unwrap();
    let keyed = op.snapshot();
    assert!(!keyed.is_empty());
    let build = || Box::new(unopened()) as Box<dyn Operator>;
    check_corrupt_state_fails(&build, &keyed, op.snapshot_instance().as_deref());
}
