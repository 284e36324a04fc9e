//! Operator tests: the changelogs of Flink's `StreamingJoinOperator`, row by row, for inner
//! and outer joins over inserts and retractions; NULL keys; the residual condition; batch
//! mode's final rows; restored == uninterrupted.

use super::*;
use crate::exec::state::join_side::INDEXED_LIST;
use crate::exec::test_harness::{Recorder, chunk, run_script_on, schema};
use crate::plan::expr::ScalarExpr;
use crate::types::{DataType, Schema, TypeKind};

fn left() -> Schema {
    schema(&[("k", TypeKind::Int), ("v", TypeKind::VarChar(10))])
}

fn right() -> Schema {
    schema(&[("k", TypeKind::Int), ("w", TypeKind::VarChar(10))])
}

fn output() -> Schema {
    schema(&[
        ("k", TypeKind::Int),
        ("v", TypeKind::VarChar(10)),
        ("k0", TypeKind::Int),
        ("w", TypeKind::VarChar(10)),
    ])
}

/// `v < w`, over the output's columns.
fn v_before_w() -> ScalarExpr {
    let column = |index| ScalarExpr::Column {
        index,
        data_type: DataType::nullable(TypeKind::VarChar(10)),
    };
    ScalarExpr::Call {
        function: crate::function::lookup("<").unwrap(),
        args: vec![column(1), column(3)],
        data_type: DataType::nullable(TypeKind::Boolean),
    }
}

fn operator(join_type: JoinType, residual: Option<ScalarExpr>, final_only: bool) -> JoinOperator {
    let runtime = crate::types::chunk::runtime_schema;
    let mut op = JoinOperator::new(
        &runtime(&left()),
        &runtime(&right()),
        runtime(&output()),
        vec![0],
        vec![0],
        join_type,
        residual,
        crate::function::EvalContext::for_tests(0),
        final_only,
    )
    .unwrap();
    op.open(&OperatorContext::default()).unwrap();
    op
}

fn run(op: &mut JoinOperator, script: &str) -> String {
    run_script_on(op, &[&left(), &right()], &output(), script).unwrap()
}

#[test]
fn inner_join_pairs_each_row_with_the_other_sides_rows() {
    let script = "
        +I 1 | a
        @1
        +I 1 | x
        +I 2 | y
        @0
        +I 2 | b
        +I 1 | c
        +I 3 | d";
    assert_eq!(
        run(&mut operator(JoinType::Inner, None, false), script),
        "+I 1 | a | 1 | x\n+I 2 | b | 2 | y\n+I 1 | c | 1 | x"
    );
}

#[test]
fn inner_join_forwards_the_arriving_kind() {
    let script = "
        @1
        +I 1 | x
        +I 1 | x
        @0
        +I 1 | a
        -U 1 | a
        +U 1 | b
        @1
        -D 1 | x";
    assert_eq!(
        run(&mut operator(JoinType::Inner, None, false), script),
        "+I 1 | a | 1 | x\n+I 1 | a | 1 | x\n\
         -U 1 | a | 1 | x\n-U 1 | a | 1 | x\n\
         +U 1 | b | 1 | x\n+U 1 | b | 1 | x\n\
         -D 1 | b | 1 | x"
    );
}

#[test]
fn left_join_pads_then_retracts_the_padding() {
    let script = "
        +I 1 | a
        @1
        +I 1 | x
        +I 1 | z
        -D 1 | x
        -D 1 | z
        @0
        -D 1 | a";
    assert_eq!(
        run(&mut operator(JoinType::Left, None, false), script),
        "+I 1 | a | NULL | NULL\n\
         -D 1 | a | NULL | NULL\n+I 1 | a | 1 | x\n\
         +I 1 | a | 1 | z\n\
         -D 1 | a | 1 | x\n\
         -D 1 | a | 1 | z\n+I 1 | a | NULL | NULL\n\
         -D 1 | a | NULL | NULL"
    );
}

#[test]
fn left_join_row_arriving_on_the_outer_side_deletes_as_it_retracts() {
    let script = "
        @1
        +I 1 | x
        @0
        +I 1 | a
        -U 1 | a
        +U 1 | b";
    assert_eq!(
        run(&mut operator(JoinType::Left, None, false), script),
        "+I 1 | a | 1 | x\n-D 1 | a | 1 | x\n+I 1 | b | 1 | x"
    );
}

#[test]
fn full_join_pads_both_sides_and_duplicates_count() {
    let script = "
        +I 1 | a
        +I 1 | a
        @1
        +I 2 | y
        +I 1 | x
        @0
        -D 1 | a
        -D 1 | a";
    assert_eq!(
        run(&mut operator(JoinType::Full, None, false), script),
        "+I 1 | a | NULL | NULL\n+I 1 | a | NULL | NULL\n\
         +I NULL | NULL | 2 | y\n\
         -D 1 | a | NULL | NULL\n-D 1 | a | NULL | NULL\n+I 1 | a | 1 | x\n+I 1 | a | 1 | x\n\
         -D 1 | a | 1 | x\n\
         -D 1 | a | 1 | x\n+I NULL | NULL | 1 | x"
    );
}

#[test]
fn a_null_key_matches_nothing() {
    let script = "
        +I NULL | a
        @1
        +I NULL | x
        @0
        -D NULL | a";
    assert_eq!(
        run(&mut operator(JoinType::Full, None, false), script),
        "+I NULL | a | NULL | NULL\n+I NULL | NULL | NULL | x\n-D NULL | a | NULL | NULL"
    );
    assert_eq!(run(&mut operator(JoinType::Inner, None, false), script), "");
}

#[test]
fn the_residual_condition_decides_each_pair() {
    let script = "
        @1
        +I 1 | m
        +I 1 | c
        @0
        +I 1 | b
        +I 1 | z
        @1
        -D 1 | m";
    assert_eq!(
        run(
            &mut operator(JoinType::Left, Some(v_before_w()), false),
            script
        ),
        "+I 1 | b | 1 | m\n+I 1 | b | 1 | c\n+I 1 | z | NULL | NULL\n\
         -D 1 | b | 1 | m"
    );
}

#[test]
fn batch_mode_emits_pairs_then_rows_that_never_matched() {
    let script = "
        +I 1 | a
        +I 2 | b
        +I NULL | n
        @1
        +I 1 | x
        +I 3 | z
        END";
    assert_eq!(
        run(&mut operator(JoinType::Full, None, true), script),
        "+I NULL | n | NULL | NULL\n+I 1 | a | 1 | x\n\
         +I 2 | b | NULL | NULL\n+I NULL | NULL | 3 | z"
    );
}

#[test]
fn restored_state_continues_as_uninterrupted() {
    let first = "
        +I 1 | a
        +I 2 | b
        @1
        +I 1 | x";
    let rest = "
        @1
        +I 2 | y
        -D 1 | x
        @0
        -D 2 | b";
    let mut whole = operator(JoinType::Full, None, false);
    run(&mut whole, first);
    let uninterrupted = run(&mut whole, rest);
    let mut before = operator(JoinType::Full, None, false);
    run(&mut before, first);
    let mut restored = operator(JoinType::Full, None, false);
    for (group, state) in before.snapshot() {
        restored.restore(group, &state).unwrap();
    }
    assert_eq!(run(&mut restored, rest), uninterrupted);
    assert!(!uninterrupted.is_empty());
}

/// At every cut, from 1 or 2 instances to 1 or 2: the state frozen at the cut, while the
/// operator goes on writing into the pages it shares, restores into operators that go on as
/// the uninterrupted one (single rows, a row there twice, lists long enough to be indexed,
/// removals, outer sides' matches).
#[test]
fn frozen_at_every_cut_restores_as_uninterrupted() {
    let build = || Box::new(operator(JoinType::Full, None, false)) as Box<dyn Operator>;
    let (l, r, o) = (left(), right(), output());
    let many: String = (0..INDEXED_LIST + 2)
        .map(|i| format!("+I 5 | m{i}\n"))
        .collect();
    let script = format!(
        "+I 1 | a
         +I 2 | b
         +I 1 | a
         @1
         +I 1 | x
         +I 3 | y
         -D 1 | x
         +I 2 | z
         {many}
         @0
         -D 1 | a
         +I 4 | c
         +I 5 | p
         -D 2 | b
         @1
         +I 4 | w
         +I 4 | w
         -D 5 | m3
         -D 3 | y
         @0
         -D 1 | a
         -D 5 | p"
    );
    crate::exec::test_harness::RestoreCheck {
        build: &build,
        inputs: &[&l, &r],
        output: &o,
        keys: Some(&[vec![0], vec![0]]),
        exact_order: false,
    }
    .check(&script);
}

#[test]
fn many_matches_are_emitted_in_rounds() {
    let mut op = operator(JoinType::Inner, None, false);
    let mut out = Recorder::new(&output());
    let rows: String = (0..40_000).map(|i| format!("+I 7 | r{i}\n")).collect();
    op.process(1, chunk(&right(), &rows), &mut out).unwrap();
    op.process(0, chunk(&left(), "+I 7 | a\n+I 7 | b"), &mut out)
        .unwrap();
    let lines = out.take();
    assert_eq!(lines.lines().count(), 80_000);
    assert!(lines.starts_with("+I 7 | a | 7 | r0\n"));
    assert!(lines.ends_with("+I 7 | b | 7 | r39999"));
}

/// What `op` emits for `rows` arriving on `side` at `ms` milliseconds of the test clock.
fn arrive(
    op: &mut JoinOperator,
    clock: &crate::clock::ManualClock,
    out: &mut Recorder,
    ms: i64,
    side: usize,
    rows: &str,
) -> String {
    clock.set(ms * 1_000_000);
    let schema = if side == 0 { left() } else { right() };
    op.process(side, chunk(&schema, rows), out).unwrap();
    out.take()
}

/// `table.exec.state.ttl`: a row not written for the TTL no longer joins, and a sweep drops
/// it; an outer side's expired row is not padded again.
#[test]
fn state_ttl_drops_rows_not_written_for_its_duration() {
    let clock = crate::clock::ManualClock::new(0);
    let mut op = operator(JoinType::Inner, None, false).with_state_ttl(1_000);
    op.open(&OperatorContext::instance(0, 1, 128, clock.clone()))
        .unwrap();
    let mut out = Recorder::new(&output());
    let mut at = |op: &mut JoinOperator, ms: i64, side: usize, rows: &str| {
        arrive(op, &clock, &mut out, ms, side, rows)
    };
    assert_eq!(at(&mut op, 0, 0, "+I 1 | a"), "");
    assert_eq!(at(&mut op, 999, 1, "+I 1 | x"), "+I 1 | a | 1 | x");
    // The left row was written at 0: gone at 1,000; the right one (999) is not.
    assert_eq!(at(&mut op, 1_000, 1, "+I 1 | y"), "");
    assert_eq!(
        at(&mut op, 1_500, 0, "+I 1 | b"),
        "+I 1 | b | 1 | x\n+I 1 | b | 1 | y"
    );
    op.on_processing_time(10_000, &mut out).unwrap();
    assert!(op.state.keys.is_empty(), "the sweep drops expired rows");
}

/// A STATE_TTL hint per input: the left's rows expire after 1 s, the right's are kept.
#[test]
fn each_side_keeps_its_own_state_ttl() {
    let clock = crate::clock::ManualClock::new(0);
    let mut op = operator(JoinType::Inner, None, false).with_state_ttls([1_000, 0]);
    op.open(&OperatorContext::instance(0, 1, 128, clock.clone()))
        .unwrap();
    let mut out = Recorder::new(&output());
    let mut at = |op: &mut JoinOperator, ms: i64, side: usize, rows: &str| {
        arrive(op, &clock, &mut out, ms, side, rows)
    };
    assert_eq!(at(&mut op, 0, 0, "+I 1 | a"), "");
    assert_eq!(at(&mut op, 0, 1, "+I 1 | x"), "+I 1 | a | 1 | x");
    // At 5 s the left row is gone, the right one still joins.
    assert_eq!(at(&mut op, 5_000, 1, "+I 1 | y"), "");
    assert_eq!(
        at(&mut op, 5_000, 0, "+I 1 | b"),
        "+I 1 | b | 1 | x\n+I 1 | b | 1 | y"
    );
    op.on_processing_time(10_000, &mut out).unwrap();
    assert!(op.state.all_records(0).next().is_none());
    assert_eq!(op.state.all_records(1).count(), 2);
}

#[test]
fn a_key_with_many_distinct_rows_counts_copies_through_its_index() {
    // One key holding far more distinct rows than a list is walked for: copies are counted
    // and retracted through the index, whatever order the list's records were moved into.
    let mut op = operator(JoinType::Inner, None, false);
    let mut held = std::collections::BTreeMap::<u32, u32>::new();
    let mut script = String::from("@0\n");
    let mut seed = 17u64;
    for _ in 0..2_000 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let value = (seed >> 33) as u32 % 60;
        let retract = (seed >> 20).is_multiple_of(3);
        match held.get_mut(&value) {
            Some(n) if retract => {
                script.push_str(&format!("-D 1 | v{value}\n"));
                *n -= 1;
                if *n == 0 {
                    held.remove(&value);
                }
            }
            _ if retract => {}
            _ => {
                script.push_str(&format!("+I 1 | v{value}\n"));
                *held.entry(value).or_insert(0) += 1;
            }
        }
    }
    assert!(held.len() > INDEXED_LIST, "the key's list is indexed");
    run(&mut op, &script);
    let mut got: Vec<String> = run(&mut op, "@1\n+I 1 | x")
        .lines()
        .map(str::to_string)
        .collect();
    got.sort();
    let mut want: Vec<String> = held
        .iter()
        .flat_map(|(v, &n)| (0..n).map(move |_| format!("+I 1 | v{v} | 1 | x")))
        .collect();
    want.sort();
    assert_eq!(got, want);
}
