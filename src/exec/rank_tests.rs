//! Operator tests: Top-N over inserts and over a retracting input (seed 004's ranking of
//! users by their last action), and batch ranks.

use std::sync::Arc;

use super::*;
use crate::exec::test_harness::{run_script, schema};
use crate::types::{DataType, Field, Schema, TypeKind};

fn actions() -> Schema {
    schema(&[("user", TypeKind::VarChar(10)), ("last", TypeKind::Int)])
}

fn with_rank(input: &Schema) -> Schema {
    let mut fields = input.fields.clone();
    fields.push(Field::new("rk", DataType::not_null(TypeKind::BigInt)));
    Schema::new(fields)
}

fn operator(
    function: RankFunction,
    range: (u64, u64),
    rank: bool,
    final_only: bool,
) -> (RankOperator, Schema) {
    let input = actions();
    let output = if rank {
        with_rank(&input)
    } else {
        input.clone()
    };
    let mut op = RankOperator::new(
        Arc::new(crate::types::chunk::runtime_schema(&input).as_ref().clone()),
        crate::types::chunk::runtime_schema(&output),
        vec![],
        &[OrderKey {
            column: 1,
            descending: false,
            nulls_first: true,
        }],
        function,
        range,
        rank,
        true,
        !final_only,
        final_only,
    )
    .unwrap();
    op.open(&OperatorContext::default()).unwrap();
    (op, output)
}

/// The users ranked by their last action, fed the aggregate's changelog: each input row's
/// change to the ranks, position by position (Mary's -U leaves rank 1 to Bob and empties rank
/// 2; her +U fills it again).
#[test]
fn a_retracting_input_moves_rows_between_ranks() {
    let (mut op, output) = operator(RankFunction::RowNumber, (1, 10), true, false);
    let out = run_script(
        &mut op,
        &actions(),
        &output,
        "+I Mary | 1\n+I Bob | 2\n-U Mary | 1\n+U Mary | 3",
    )
    .unwrap();
    assert_eq!(
        out,
        "+I Mary | 1 | 1\n+I Bob | 2 | 2\n-U Mary | 1 | 1\n+U Bob | 2 | 1\n-D Bob | 2 | 2\n+I Mary | 3 | 2"
    );
}

#[test]
fn without_the_rank_rows_enter_and_leave_the_top() {
    let (mut op, output) = operator(RankFunction::RowNumber, (1, 2), false, false);
    let out = run_script(
        &mut op,
        &actions(),
        &output,
        "+I a | 5\n+I b | 3\n+I c | 1\n+I d | 9",
    )
    .unwrap();
    assert_eq!(out, "+I a | 5\n+I b | 3\n-D a | 5\n+I c | 1");
}

#[test]
fn batch_ranks_with_ties() {
    let input = "+I a | 1\n+I b | 2\n+I c | 2\n+I d | 3\nEND";
    let ranks = |function| {
        let (mut op, output) = operator(function, (1, u64::MAX), true, true);
        run_script(&mut op, &actions(), &output, input).unwrap()
    };
    assert_eq!(
        ranks(RankFunction::Rank),
        "+I a | 1 | 1\n+I b | 2 | 2\n+I c | 2 | 2\n+I d | 3 | 4"
    );
    assert_eq!(
        ranks(RankFunction::DenseRank),
        "+I a | 1 | 1\n+I b | 2 | 2\n+I c | 2 | 2\n+I d | 3 | 3"
    );
    assert_eq!(
        ranks(RankFunction::RowNumber),
        "+I a | 1 | 1\n+I b | 2 | 2\n+I c | 2 | 3\n+I d | 3 | 4"
    );
}

#[test]
fn restored_equals_uninterrupted() {
    let (mut whole, output) = operator(RankFunction::RowNumber, (1, 3), true, false);
    run_script(&mut whole, &actions(), &output, "+I a | 5\n+I b | 3").unwrap();
    let snapshot = whole.snapshot();
    let expected = run_script(&mut whole, &actions(), &output, "+I c | 1\n-D b | 3").unwrap();
    let (mut restored, _) = operator(RankFunction::RowNumber, (1, 3), true, false);
    for (kg, state) in snapshot {
        restored.restore(kg, &state).unwrap();
    }
    let out = run_script(&mut restored, &actions(), &output, "+I c | 1\n-D b | 3").unwrap();
    assert_eq!(out, expected);
}

/// Over inserts only, keeping just the top rows per partition (and skipping rows past them,
/// and a full partition's last row leaving as a row enters, in place or not) changes nothing
/// that is emitted: with and without the rank, for several ranges, rows of one width and of
/// several.
#[test]
fn append_fast_emits_what_keeping_every_row_emits() {
    for (range, rank, names) in [
        ((1, 2), true, ["a", "b", "c"]),
        ((1, 3), true, ["a", "bb", "ccc"]),
        ((2, 3), true, ["a", "b", "c"]),
        ((1, 3), false, ["a", "b", "c"]),
        ((1, 1), false, ["xyz", "b", "c"]),
    ] {
        append_fast_matches_keeping_every_row(range, rank, names);
    }
}

fn append_fast_matches_keeping_every_row(range: (u64, u64), rank: bool, names: [&str; 3]) {
    let input = actions();
    let output = if rank {
        with_rank(&input)
    } else {
        input.clone()
    };
    let build = |retracting: bool| {
        let mut op = RankOperator::new(
            crate::types::chunk::runtime_schema(&input),
            crate::types::chunk::runtime_schema(&output),
            vec![0],
            &[OrderKey {
                column: 1,
                descending: true,
                nulls_first: false,
            }],
            RankFunction::RowNumber,
            range,
            rank,
            true,
            retracting,
            false,
        )
        .unwrap();
        op.open(&OperatorContext::default()).unwrap();
        op
    };
    let mut script = String::new();
    let mut x: u64 = 7;
    for i in 0..300 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        // No two rows tie: over inserts ties rank in arrival order, over a retracting input
        // by their values (`ties_over_inserts_rank_in_arrival_order`).
        let v = (i * 37) % 300;
        let v = if i == 17 {
            "NULL".to_string()
        } else {
            v.to_string()
        };
        script.push_str(&format!("+I {} | {v}\n", names[(x >> 20) as usize % 3]));
        if i % 40 == 39 {
            script.push_str("--\n");
        }
    }
    let fast = run_script(&mut build(false), &input, &output, &script).unwrap();
    let full = run_script(&mut build(true), &input, &output, &script).unwrap();
    assert_eq!(fast, full, "range {range:?}, rank {rank}, names {names:?}");
}

/// `table.exec.state.ttl`: a partition not written for the TTL starts afresh (its old rows
/// are not retracted: they are gone), and the sweep frees it.
#[test]
fn state_ttl_forgets_an_idle_partition() {
    use crate::exec::test_harness::{Recorder, chunk};
    let (op, output) = operator(RankFunction::RowNumber, (1, 2), true, false);
    let clock = crate::clock::ManualClock::new(0);
    let mut op = op.with_state_ttl(1_000);
    op.open(&OperatorContext::instance(0, 1, 128, clock.clone()))
        .unwrap();
    let mut out = Recorder::new(&output);
    let mut at = |op: &mut RankOperator, ms: i64, rows: &str| {
        clock.set(ms * 1_000_000);
        op.process(0, chunk(&actions(), rows), &mut out).unwrap();
        out.take()
    };
    assert_eq!(at(&mut op, 0, "+I a | 5"), "+I a | 5 | 1");
    assert_eq!(
        at(&mut op, 900, "+I b | 3"),
        "-U a | 5 | 1\n+U b | 3 | 1\n+I a | 5 | 2"
    );
    assert_eq!(at(&mut op, 2_000, "+I c | 7"), "+I c | 7 | 1");
    op.on_processing_time(3_000, &mut out).unwrap();
    assert!(op.keyed.keys.is_empty());
}

/// A restored partition keeps its write time: written at 0, snapshotted at 900, it is gone
/// at 1,000 after a restore, as without one.
#[test]
fn a_restored_partition_keeps_its_ttl_write_time() {
    use crate::exec::test_harness::{Recorder, chunk};
    let clock = crate::clock::ManualClock::new(0);
    let ctx = OperatorContext::instance(0, 1, 128, clock.clone());
    let (op, output) = operator(RankFunction::RowNumber, (1, 2), true, false);
    let mut op = op.with_state_ttl(1_000);
    op.open(&ctx).unwrap();
    let mut out = Recorder::new(&output);
    op.process(0, chunk(&actions(), "+I a | 5"), &mut out)
        .unwrap();
    assert_eq!(out.take(), "+I a | 5 | 1");
    clock.set(900 * 1_000_000);
    let snapshot = op.snapshot();
    let (restored, _) = operator(RankFunction::RowNumber, (1, 2), true, false);
    let mut restored = restored.with_state_ttl(1_000);
    restored.open(&ctx).unwrap();
    for (kg, state) in snapshot {
        restored.restore(kg, &state).unwrap();
    }
    clock.set(1_000 * 1_000_000);
    restored
        .process(0, chunk(&actions(), "+I c | 7"), &mut out)
        .unwrap();
    assert_eq!(out.take(), "+I c | 7 | 1");
}

/// A ROW_NUMBER Top-N of `range` over an insert-only input, by `last` descending, the rank
/// in the output.
fn insert_only_top(range: (u64, u64)) -> RankOperator {
    let input = actions();
    let mut op = RankOperator::new(
        Arc::new(crate::types::chunk::runtime_schema(&input).as_ref().clone()),
        crate::types::chunk::runtime_schema(&with_rank(&input)),
        vec![],
        &[OrderKey {
            column: 1,
            descending: true,
            nulls_first: false,
        }],
        RankFunction::RowNumber,
        range,
        true,
        true,
        false,
        false,
    )
    .unwrap();
    op.open(&OperatorContext::default()).unwrap();
    op
}

#[test]
fn ties_over_inserts_rank_in_arrival_order() {
    // Flink lists a sort key's rows as they came: a later row with the same value ranks
    // after the earlier ones, whatever its other columns (Nexmark q19).
    let (input, output) = (actions(), with_rank(&actions()));
    let mut op = insert_only_top((1, 2));
    let got = run_script(
        &mut op,
        &input,
        &output,
        "+I b | 5\n+I a | 5\n+I c | 5\n+I d | 7",
    )
    .unwrap();
    assert_eq!(
        got,
        "+I b | 5 | 1\n+I a | 5 | 2\n-U b | 5 | 1\n+U d | 7 | 1\n-U a | 5 | 2\n+U b | 5 | 2"
    );
    // Restored, later rows still come after the restored ones.
    let mut restored = insert_only_top((1, 3));
    for (group, state) in op.snapshot() {
        restored.restore(group, &state).unwrap();
    }
    let got = run_script(&mut restored, &input, &output, "+I a0 | 5").unwrap();
    assert_eq!(got, "+I a0 | 5 | 3");
}

/// At every cut, from 1 or 2 instances to 1 or 2: a Top-2 per user restores as it would
/// have gone on, over inserts (packed partitions, frozen at the cut while the operator goes
/// on writing) and over retractions (B-trees, written at the cut).
#[test]
fn top_two_per_user_restores_at_every_cut() {
    for retracting in [false, true] {
        let input = actions();
        let output = with_rank(&input);
        let build = || {
            Box::new(
                RankOperator::new(
                    Arc::new(crate::types::chunk::runtime_schema(&input).as_ref().clone()),
                    crate::types::chunk::runtime_schema(&output),
                    vec![0],
                    &[OrderKey {
                        column: 1,
                        descending: false,
                        nulls_first: true,
                    }],
                    RankFunction::RowNumber,
                    (1, 2),
                    true,
                    true,
                    retracting,
                    false,
                )
                .unwrap(),
            ) as Box<dyn Operator>
        };
        let retractions = if retracting {
            "-D a | 3\n-D b | 1\n"
        } else {
            ""
        };
        let script = format!(
            "+I a | 5\n+I b | 4\n+I a | 3\n+I c | 9\n+I a | 4\n+I b | 1\n{retractions}\
             +I b | 2\n+I c | 8\n+I a | 1\n+I c | 7\n+I d | 6"
        );
        crate::exec::test_harness::RestoreCheck {
            build: &build,
            inputs: &[&input],
            output: &output,
            keys: Some(&[vec![0]]),
            exact_order: true,
        }
        .check(&script);
    }
}
