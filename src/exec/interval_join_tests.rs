//! Operator tests: Flink's interval join, row by row — pairs within the bounds; rows kept
//! until their cleanup timer (the bound plus half the window, Flink's `minCleanUpInterval`)
//! fires, so a late row may still meet them; outer rows padded when they expire or arrive
//! late; the held-back watermark.
use crate::exec::test_harness::{ScriptRng, clock_text};

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
    opened(join_type, (-1_200_000, 0))
}

fn unopened(join_type: JoinType) -> IntervalJoinOperator {
    with_bounds(join_type, (-1_200_000, 0))
}

fn with_bounds(join_type: JoinType, bounds: (i64, i64)) -> IntervalJoinOperator {
    let runtime = crate::types::chunk::runtime_schema;
    IntervalJoinOperator::new(
        &runtime(&side()),
        &runtime(&side()),
        runtime(&output()),
        (vec![0], vec![0]),
        (2, 2),
        bounds,
        join_type,
        None,
        crate::function::EvalContext::for_tests(0),
    )
    .unwrap()
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

/// A script of both sides' rows over four keys, mostly in time order, some late (several
/// minutes behind the watermark, a few beyond the whole interval), the watermark a minute
/// behind the rows.
fn random_script(seed: u64) -> String {
    let mut rng = ScriptRng::new(seed);
    let mut next = |n: u64| rng.next(n);
    let time = |seconds: u64| clock_text("2024-01-01", 10, seconds);
    let (mut now, mut watermark, mut lines) = (600u64, 0u64, Vec::new());
    for i in 0..48 {
        match next(8) {
            0 => lines.push(format!("@{}", next(2))),
            1 if now > watermark + 60 => {
                watermark = now - 60;
                lines.push(format!("WM {}", time(watermark)));
            }
            _ => {
                now += next(120);
                let behind = match next(10) {
                    0 => 300 + next(600),
                    1 | 2 => 1_200 + next(600),
                    _ => next(30),
                };
                let at = now.saturating_sub(behind);
                lines.push(format!("+I {} | r{i} | {}", next(4), time(at)));
            }
        }
    }
    lines.join("\n")
}

#[test]
fn restored_equals_uninterrupted() {
    for join_type in [JoinType::Inner, JoinType::Left, JoinType::Full] {
        let build = || Box::new(unopened(join_type)) as Box<dyn Operator>;
        let check = crate::exec::test_harness::RestoreCheck {
            build: &build,
            inputs: &[&side(), &side()],
            output: &output(),
            keys: Some(&[vec![0], vec![0]]),
            exact_order: false,
        };
        // A row whose bounds end before the expiration time last computed (for another key)
        // skips the join, though a row it would match is still kept (its cleanup lags).
        check.check(
            "@1
             +I 1 | x | 2024-01-01 10:30:00
             WM 2024-01-01 10:35:00
             @0
             +I 2 | a | 2024-01-01 10:34:00
             --
             +I 1 | late | 2024-01-01 10:10:00
             WM MAX",
        );
        for seed in 0..4 {
            check.check(&random_script(seed));
        }
    }
}

#[test]
fn corrupt_state_is_an_error() {
    let mut op = operator(JoinType::Full);
    run(&mut op, ROWS.split("WM MAX").next().unwrap());
    let keyed = op.snapshot();
    assert!(!keyed.is_empty());
    let part = op.snapshot_instance().unwrap();
    let build = || Box::new(unopened(JoinType::Full)) as Box<dyn Operator>;
    crate::exec::test_harness::check_corrupt_state_fails(&build, &keyed, Some(&part));
}

/// Bounds a property test draws from: i64's ends, around zero, and the window's size.
const BOUNDS: [i64; 11] = [
    i64::MIN,
    i64::MIN + 1,
    -86_400_000_000,
    -1_200_000,
    -1,
    0,
    1,
    1_200_000,
    86_400_000_000,
    i64::MAX - 1,
    i64::MAX,
];

/// Seconds of rows the brute force joins: `(key, seconds after 10:00)` per side.
type Rows = [Vec<(u64, u64)>; 2];

/// Any pair of bounds, in either order, over rows that all come before the final
/// watermark: every operator run ends, and its output is the brute-force join — each pair
/// with `left − right` within the bounds once, and under a FULL join each row that met
/// nothing once, padded. (Rows late against intermediate watermarks are the random
/// scripts' part; they must end without a panic or a hang too.)
#[test]
fn any_bounds_give_the_brute_force_join_and_never_panic_or_hang() {
    let mut rng = ScriptRng::new(7);
    for case in 0..64 {
        let (a, b) = (BOUNDS[rng.next(11) as usize], BOUNDS[rng.next(11) as usize]);
        let mut rows: Rows = [Vec::new(), Vec::new()];
        let mut lines = Vec::new();
        for i in 0..12 {
            let s = rng.next(2) as usize;
            let (key, at) = (rng.next(3), rng.next(3_600));
            rows[s].push((key, at));
            lines.push(format!("@{s}"));
            let time = clock_text("2024-01-01", 10, at);
            lines.push(format!("+I {key} | r{i} | {time}"));
        }
        lines.push("WM MAX".into());
        let script = lines.join("\n");
        let pairs = rows[0]
            .iter()
            .flat_map(|l| rows[1].iter().map(move |r| (l, r)))
            .filter(|(l, r)| {
                let gap = (l.1 as i64 - r.1 as i64) * 1_000;
                l.0 == r.0 && (a..=b).contains(&gap)
            })
            .collect::<Vec<_>>();
        let unmatched = |s: usize| {
            rows[s]
                .iter()
                .filter(|row| {
                    !pairs
                        .iter()
                        .any(|p| std::ptr::eq(if s == 0 { p.0 } else { p.1 }, *row))
                })
                .count()
        };
        for join_type in [JoinType::Inner, JoinType::Full] {
            let out = run(&mut opened(join_type, (a, b)), &script);
            let joined = out
                .lines()
                .filter(|l| l.starts_with("+I"))
                .collect::<Vec<_>>();
            let padded = joined.iter().filter(|l| l.contains("NULL")).count();
            let expected_padded = match join_type {
                JoinType::Full => unmatched(0) + unmatched(1),
                _ => 0,
            };
            assert_eq!(
                (joined.len() - padded, padded),
                (pairs.len(), expected_padded),
                "case {case}, bounds [{a}, {b}], {join_type:?}:\n{script}\n--\n{out}"
            );
        }
        for seed in 0..2 {
            for join_type in [JoinType::Left, JoinType::Right, JoinType::Full] {
                run(&mut opened(join_type, (a, b)), &random_script(seed));
            }
        }
    }
}

fn opened(join_type: JoinType, bounds: (i64, i64)) -> IntervalJoinOperator {
    let mut op = with_bounds(join_type, bounds);
    op.open(&OperatorContext::default()).unwrap();
    op
}
