//! Operator tests: seed 002's bids, with their windows as the TVF upstream computes them.
use crate::exec::test_harness::{ScriptRng, clock_text};

use super::*;
use crate::exec::test_harness::{run_script, schema};
use crate::types::TypeKind;

fn bids() -> crate::types::Schema {
    schema(&[
        ("bidtime", TypeKind::Timestamp(3)),
        ("item", TypeKind::VarChar(10)),
        ("supplier", TypeKind::VarChar(10)),
        ("window_end", TypeKind::Timestamp(3)),
    ])
}

fn operator(keys: Vec<usize>, keep_last: bool) -> WindowDeduplicateOperator {
    let input = bids();
    let mut op = WindowDeduplicateOperator::new(
        crate::types::chunk::runtime_schema(&input),
        keys,
        3,
        0,
        keep_last,
        &input.fields[0].data_type,
        SessionZone::new("UTC").unwrap(),
    )
    .unwrap();
    op.open(&OperatorContext::default()).unwrap();
    op
}

const BIDS: &str = "
+I 2020-04-15 08:05:00 | C | supplier1 | 2020-04-15 08:10:00
+I 2020-04-15 08:07:00 | A | supplier2 | 2020-04-15 08:10:00
+I 2020-04-15 08:09:00 | D | supplier4 | 2020-04-15 08:10:00
+I 2020-04-15 08:11:00 | B | supplier2 | 2020-04-15 08:20:00
+I 2020-04-15 08:13:00 | E | supplier1 | 2020-04-15 08:20:00
+I 2020-04-15 08:17:00 | F | supplier5 | 2020-04-15 08:20:00";

#[test]
fn last_and_first_row_per_window_when_the_watermark_passes_its_end() {
    let script =
        format!("{BIDS}\nWM 2020-04-15 08:09:59\nWM 1586938200000\nWM 9223372036854775807");
    let input = bids();
    let last = run_script(&mut operator(vec![], true), &input, &input, &script).unwrap();
    assert_eq!(
        last,
        "WM 1586938199000\n\
         +I 2020-04-15 08:09:00.000 | D | supplier4 | 2020-04-15 08:10:00.000\n\
         WM 1586938200000\n\
         +I 2020-04-15 08:17:00.000 | F | supplier5 | 2020-04-15 08:20:00.000\n\
         WM 9223372036854775807"
    );
    let first = run_script(&mut operator(vec![], false), &input, &input, &script).unwrap();
    assert!(
        first.contains("08:05:00.000 | C") && first.contains("08:11:00.000 | B"),
        "{first}"
    );
}

#[test]
fn per_key_a_tie_goes_to_the_later_row_when_keeping_the_last() {
    let input = bids();
    let script = "
        +I 2020-04-15 08:05:00 | C | s1 | 2020-04-15 08:10:00
        +I 2020-04-15 08:05:00 | X | s1 | 2020-04-15 08:10:00
        +I 2020-04-15 08:01:00 | Y | s2 | 2020-04-15 08:10:00
        WM MAX";
    let last = run_script(&mut operator(vec![2], true), &input, &input, script).unwrap();
    assert_eq!(
        last,
        "+I 2020-04-15 08:05:00.000 | X | s1 | 2020-04-15 08:10:00.000\n\
         +I 2020-04-15 08:01:00.000 | Y | s2 | 2020-04-15 08:10:00.000\n\
         WM 9223372036854775807"
    );
    let first = run_script(&mut operator(vec![2], false), &input, &input, script).unwrap();
    assert!(
        first.starts_with("+I 2020-04-15 08:05:00.000 | C | s1"),
        "{first}"
    );
}

#[test]
fn a_row_of_a_fired_window_is_late() {
    let input = bids();
    let mut op = operator(vec![], true);
    let out = run_script(
        &mut op,
        &input,
        &input,
        "+I 2020-04-15 08:05:00 | C | s1 | 2020-04-15 08:10:00
         WM 2020-04-15 08:10:00
         +I 2020-04-15 08:09:00 | D | s1 | 2020-04-15 08:10:00
         WM MAX",
    )
    .unwrap();
    assert_eq!(
        out,
        "+I 2020-04-15 08:05:00.000 | C | s1 | 2020-04-15 08:10:00.000\nWM 1586938200000\nWM 9223372036854775807"
    );
    assert_eq!(op.late_rows(), 1);
}

#[test]
fn restored_equals_uninterrupted() {
    let input = bids();
    let mut whole = operator(vec![2], true);
    let first: String = BIDS.lines().take(4).collect::<Vec<_>>().join("\n");
    let second: String = BIDS.lines().skip(4).collect::<Vec<_>>().join("\n") + "\nWM MAX";
    run_script(&mut whole, &input, &input, &first).unwrap();
    let snapshot = whole.snapshot();
    let expected = run_script(&mut whole, &input, &input, &second).unwrap();
    let mut restored = operator(vec![2], true);
    for (kg, state) in snapshot {
        restored.restore(kg, &state).unwrap();
    }
    assert_eq!(
        run_script(&mut restored, &input, &input, &second).unwrap(),
        expected
    );
}

/// Bids of four suppliers over an hour in ten-minute windows, the watermark a minute
/// behind, some bids later than it (late when their window has fired).
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
        let item = ["A", "B", "C"][next(3) as usize];
        lines.push(format!(
            "+I {} | {item} | s{} | {}",
            time(at),
            next(4),
            time(end)
        ));
    }
    lines.join("\n")
}

fn unopened(keep_last: bool) -> WindowDeduplicateOperator {
    let input = bids();
    WindowDeduplicateOperator::new(
        crate::types::chunk::runtime_schema(&input),
        vec![2],
        3,
        0,
        keep_last,
        &input.fields[0].data_type,
        SessionZone::new("UTC").unwrap(),
    )
    .unwrap()
}

#[test]
fn restored_equals_uninterrupted_at_every_cut_late_rows_included() {
    for keep_last in [true, false] {
        let build = || Box::new(unopened(keep_last)) as Box<dyn Operator>;
        let check = crate::exec::test_harness::RestoreCheck {
            build: &build,
            inputs: &[&bids()],
            output: &bids(),
            keys: Some(&[vec![2]]),
            exact_order: true,
        };
        for seed in 0..3 {
            check.check(&random_script(seed));
        }
    }
}

#[test]
fn corrupt_state_is_an_error() {
    let mut op = operator(vec![2], true);
    let head = random_script(1)
        .lines()
        .take(20)
        .collect::<Vec<_>>()
        .join("\n");
    run_script(&mut op, &bids(), &bids(), &head).unwrap();
    let keyed = op.snapshot();
    assert!(!keyed.is_empty());
    let build = || Box::new(unopened(true)) as Box<dyn Operator>;
    crate::exec::test_harness::check_corrupt_state_fails(
        &build,
        &keyed,
        op.snapshot_instance().as_deref(),
    );
}
