//! Operator tests: a window join, window by window — each window's pairs when the watermark
//! passes its end, in Flink's order per join type; late rows dropped; NULL keys matching
//! nothing; the residual per pair; restored == uninterrupted.
use crate::exec::test_harness::{ScriptRng, clock_text};

use super::*;
use crate::exec::test_harness::{run_script_on, schema};
use crate::types::{Schema, TypeKind};

fn side() -> Schema {
    schema(&[
        ("k", TypeKind::Int),
        ("v", TypeKind::Int),
        ("window_start", TypeKind::Timestamp(3)),
        ("window_end", TypeKind::Timestamp(3)),
    ])
}

fn output() -> Schema {
    schema(&[
        ("k", TypeKind::Int),
        ("v", TypeKind::Int),
        ("window_start", TypeKind::Timestamp(3)),
        ("window_end", TypeKind::Timestamp(3)),
        ("k0", TypeKind::Int),
        ("v0", TypeKind::Int),
        ("window_start0", TypeKind::Timestamp(3)),
        ("window_end0", TypeKind::Timestamp(3)),
    ])
}

fn operator(join_type: JoinType, residual: Option<ScalarExpr>) -> WindowJoinOperator {
    let runtime = crate::types::chunk::runtime_schema;
    let mut op = WindowJoinOperator::new(
        &runtime(&side()),
        &runtime(&side()),
        runtime(&output()),
        (vec![0], vec![0]),
        (3, 3),
        join_type,
        residual,
        &DataType::nullable(TypeKind::Timestamp(3)),
        SessionZone::new("UTC").unwrap(),
        crate::function::EvalContext::for_tests(0),
    )
    .unwrap();
    op.open(&OperatorContext::default()).unwrap();
    op
}

fn run(op: &mut WindowJoinOperator, script: &str) -> String {
    run_script_on(op, &[&side(), &side()], &output(), script).unwrap()
}

const W1: &str = "2024-01-01 10:00:00 | 2024-01-01 10:10:00";
const W2: &str = "2024-01-01 10:10:00 | 2024-01-01 10:20:00";

fn rows() -> String {
    format!(
        "+I 1 | 10 | {W1}
         +I 2 | 20 | {W1}
         +I 1 | 11 | {W1}
         +I NULL | 99 | {W1}
         @1
         +I 1 | 100 | {W1}
         +I 3 | 300 | {W1}
         +I 1 | 101 | {W1}
         +I NULL | 98 | {W1}
         +I 2 | 200 | {W2}
         WM 2024-01-01 10:09:59.999
         +I 1 | 102 | {W1}
         @0
         +I 2 | 21 | {W2}
         WM MAX"
    )
}

const WM_1: &str = "WM 1704103799999";
const WM_MAX: &str = "WM 9223372036854775807";

#[test]
fn inner_pairs_per_window_left_rows_outer() {
    let expected = format!(
        "+I 1 | 10 | {a} | 1 | 100 | {a}\n\
         +I 1 | 10 | {a} | 1 | 101 | {a}\n\
         +I 1 | 11 | {a} | 1 | 100 | {a}\n\
         +I 1 | 11 | {a} | 1 | 101 | {a}\n\
         {WM_1}\n\
         +I 2 | 21 | {b} | 2 | 200 | {b}\n\
         {WM_MAX}",
        a = "2024-01-01 10:00:00.000 | 2024-01-01 10:10:00.000",
        b = "2024-01-01 10:10:00.000 | 2024-01-01 10:20:00.000",
    );
    let mut op = operator(JoinType::Inner, None);
    assert_eq!(run(&mut op, &rows()), expected);
    assert_eq!(op.late_rows(), 1);
}

#[test]
fn outer_joins_pad_per_window_in_flinks_order() {
    let a = "2024-01-01 10:00:00.000 | 2024-01-01 10:10:00.000";
    let null = "NULL | NULL | NULL | NULL";
    // Keys in byte order: NULL first, then 1, 2, 3.
    let left = run(&mut operator(JoinType::Left, None), &rows());
    assert_eq!(
        left.lines().take(6).collect::<Vec<_>>().join("\n"),
        format!(
            "+I NULL | 99 | {a} | {null}\n\
             +I 1 | 10 | {a} | 1 | 100 | {a}\n\
             +I 1 | 10 | {a} | 1 | 101 | {a}\n\
             +I 1 | 11 | {a} | 1 | 100 | {a}\n\
             +I 1 | 11 | {a} | 1 | 101 | {a}\n\
             +I 2 | 20 | {a} | {null}"
        )
    );
    let right = run(&mut operator(JoinType::Right, None), &rows());
    assert_eq!(
        right.lines().take(6).collect::<Vec<_>>().join("\n"),
        format!(
            "+I {null} | NULL | 98 | {a}\n\
             +I 1 | 10 | {a} | 1 | 100 | {a}\n\
             +I 1 | 11 | {a} | 1 | 100 | {a}\n\
             +I 1 | 10 | {a} | 1 | 101 | {a}\n\
             +I 1 | 11 | {a} | 1 | 101 | {a}\n\
             +I {null} | 3 | 300 | {a}"
        )
    );
    let full = run(&mut operator(JoinType::Full, None), &rows());
    assert_eq!(
        full.lines().take(8).collect::<Vec<_>>().join("\n"),
        format!(
            "+I NULL | 99 | {a} | {null}\n\
             +I {null} | NULL | 98 | {a}\n\
             +I 1 | 10 | {a} | 1 | 100 | {a}\n\
             +I 1 | 10 | {a} | 1 | 101 | {a}\n\
             +I 1 | 11 | {a} | 1 | 100 | {a}\n\
             +I 1 | 11 | {a} | 1 | 101 | {a}\n\
             +I 2 | 20 | {a} | {null}\n\
             +I {null} | 3 | 300 | {a}"
        )
    );
}

#[test]
fn a_residual_judges_each_pair_and_unmatched_rows_are_padded() {
    // v0 > 100: 100 meets no left row, so 10 and 11 each meet 101 only.
    let residual = ScalarExpr::Call {
        function: crate::function::lookup(">").unwrap(),
        args: vec![
            ScalarExpr::Column {
                index: 5,
                data_type: DataType::nullable(TypeKind::Int),
            },
            ScalarExpr::Literal {
                value: crate::types::value::Value::Int(100),
                data_type: DataType::not_null(TypeKind::Int),
            },
        ],
        data_type: DataType::nullable(TypeKind::Boolean),
    };
    let out = run(&mut operator(JoinType::Left, Some(residual)), &rows());
    let a = "2024-01-01 10:00:00.000 | 2024-01-01 10:10:00.000";
    let null = "NULL | NULL | NULL | NULL";
    assert_eq!(
        out.lines().take(4).collect::<Vec<_>>().join("\n"),
        format!(
            "+I NULL | 99 | {a} | {null}\n\
             +I 1 | 10 | {a} | 1 | 101 | {a}\n\
             +I 1 | 11 | {a} | 1 | 101 | {a}\n\
             +I 2 | 20 | {a} | {null}"
        )
    );
}

#[test]
fn restored_state_continues_as_uninterrupted() {
    let script = rows();
    let (head, rest) = script.split_at(script.find("WM 2024").unwrap());
    let uninterrupted = run(&mut operator(JoinType::Full, None), &script);
    let mut before = operator(JoinType::Full, None);
    assert_eq!(run(&mut before, head), "");
    let mut restored = operator(JoinType::Full, None);
    for (group, state) in before.snapshot() {
        restored.restore(group, &state).unwrap();
    }
    // The rest starts on input 1, where the head left off.
    assert_eq!(run(&mut restored, &format!("@1\n{rest}")), uninterrupted);
}

#[test]
fn semi_and_anti_emit_left_rows_by_whether_they_match() {
    let left = schema(&[
        ("k", TypeKind::Int),
        ("v", TypeKind::Int),
        ("window_start", TypeKind::Timestamp(3)),
        ("window_end", TypeKind::Timestamp(3)),
    ]);
    let runtime = crate::types::chunk::runtime_schema;
    let semi_anti = |join_type| {
        let mut op = WindowJoinOperator::new(
            &runtime(&side()),
            &runtime(&side()),
            runtime(&left),
            (vec![0], vec![0]),
            (3, 3),
            join_type,
            None,
            &DataType::nullable(TypeKind::Timestamp(3)),
            SessionZone::new("UTC").unwrap(),
            crate::function::EvalContext::for_tests(0),
        )
        .unwrap();
        op.open(&OperatorContext::default()).unwrap();
        run_script_on(&mut op, &[&side(), &side()], &left, &rows()).unwrap()
    };
    let a = "2024-01-01 10:00:00.000 | 2024-01-01 10:10:00.000";
    let b = "2024-01-01 10:10:00.000 | 2024-01-01 10:20:00.000";
    // Key 1 matches twice and is emitted once per left row; the NULL key never matches.
    assert_eq!(
        semi_anti(JoinType::Semi),
        format!("+I 1 | 10 | {a}\n+I 1 | 11 | {a}\n{WM_1}\n+I 2 | 21 | {b}\n{WM_MAX}")
    );
    assert_eq!(
        semi_anti(JoinType::Anti),
        format!("+I NULL | 99 | {a}\n+I 2 | 20 | {a}\n{WM_1}\n{WM_MAX}")
    );
}

/// Both sides' rows of four keys (one NULL) in ten-minute windows over an hour, the
/// watermark a minute behind, some rows later than it (late when their window has fired).
fn random_script(seed: u64) -> String {
    let mut rng = ScriptRng::new(seed);
    let mut next = |n: u64| rng.next(n);
    let time = |seconds: u64| clock_text("2024-01-01", 10, seconds);
    let (mut now, mut watermark, mut lines) = (0u64, 0u64, Vec::new());
    for i in 0..40 {
        match next(7) {
            0 => lines.push(format!("@{}", next(2))),
            1 if now > watermark + 60 => {
                watermark = now - 60;
                lines.push(format!("WM {}", time(watermark)));
            }
            _ => {
                now += next(150);
                let at = now.saturating_sub(if next(5) == 0 { next(900) } else { 0 });
                let start = at / 600 * 600;
                let key = ["1", "2", "3", "NULL"][next(4) as usize];
                lines.push(format!(
                    "+I {key} | {i} | {} | {}",
                    time(start),
                    time(start + 600)
                ));
            }
        }
    }
    lines.join("\n")
}

#[test]
fn restored_equals_uninterrupted_at_every_cut_late_rows_included() {
    for join_type in [JoinType::Inner, JoinType::Right, JoinType::Full] {
        let build = || Box::new(operator(join_type, None)) as Box<dyn Operator>;
        let check = crate::exec::test_harness::RestoreCheck {
            build: &build,
            inputs: &[&side(), &side()],
            output: &output(),
            keys: Some(&[vec![0], vec![0]]),
            exact_order: true,
        };
        for seed in 0..3 {
            check.check(&random_script(seed));
        }
    }
}

#[test]
fn corrupt_state_is_an_error() {
    let mut op = operator(JoinType::Full, None);
    let head = random_script(1)
        .lines()
        .take(20)
        .collect::<Vec<_>>()
        .join("\n");
    run(&mut op, &head);
    let keyed = op.snapshot();
    assert!(!keyed.is_empty());
    let build = || Box::new(operator(JoinType::Full, None)) as Box<dyn Operator>;
    crate::exec::test_harness::check_corrupt_state_fails(
        &build,
        &keyed,
        op.snapshot_instance().as_deref(),
    );
}
