//! Operator tests: text chunks through the harness; the seed 004 changelogs where one covers
//! the case. A chunk holds the rows up to a `--`, so a test decides which rows share a batch
//! (and so a round).

use super::*;
use crate::exec::test_harness::{run_script, schema};
use crate::plan::aggregate::AggregateFunction;
use crate::types::{DataType, Field, Schema, TypeKind};

fn call(function: AggregateFunction, args: &[usize], data_type: TypeKind) -> AggregateCall {
    AggregateCall {
        function,
        args: args.to_vec(),
        distinct: false,
        filter: None,
        data_type: DataType::nullable(data_type),
        name: String::new(),
    }
}

fn count(args: &[usize]) -> AggregateCall {
    AggregateCall {
        data_type: DataType::not_null(TypeKind::BigInt),
        ..call(AggregateFunction::Count, args, TypeKind::BigInt)
    }
}

struct Spec {
    input: Schema,
    grouping: Vec<usize>,
    aggregates: Vec<AggregateCall>,
    retracts: bool,
    update_before: bool,
    final_only: bool,
}

impl Spec {
    fn new(input: Schema, grouping: &[usize], aggregates: Vec<AggregateCall>) -> Self {
        Spec {
            input,
            grouping: grouping.to_vec(),
            aggregates,
            retracts: false,
            update_before: true,
            final_only: false,
        }
    }

    fn output(&self) -> Schema {
        let mut fields: Vec<Field> = self
            .grouping
            .iter()
            .map(|&g| self.input.fields[g].clone())
            .collect();
        for (i, c) in self.aggregates.iter().enumerate() {
            fields.push(Field::new(format!("a{i}"), c.data_type.clone()));
        }
        Schema::new(fields)
    }

    fn build(&self) -> GroupAggregateOperator {
        let mut op = GroupAggregateOperator::new(
            &crate::types::chunk::runtime_schema(&self.input),
            self.grouping.clone(),
            &self.aggregates,
            crate::types::chunk::runtime_schema(&self.output()),
            self.retracts,
            self.update_before,
            self.final_only,
        )
        .unwrap();
        op.open(&OperatorContext::default()).unwrap();
        op
    }

    fn run(&self, script: &str) -> String {
        let mut op = self.build();
        run_script(&mut op, &self.input, &self.output(), script).unwrap()
    }
}

fn clicks() -> Schema {
    schema(&[
        ("user", TypeKind::VarChar(100)),
        ("url", TypeKind::VarChar(100)),
    ])
}

/// Seed 004's first continuous query, the clicks one batch each and all in one batch: the
/// same changelog (one batch means three rounds for Mary's two rows).
#[test]
fn count_per_user_emits_the_seed_changelog_whatever_the_batches() {
    let spec = Spec::new(clicks(), &[0], vec![count(&[1])]);
    let expected = "+I Mary | 1\n+I Bob | 1\n-U Mary | 1\n+U Mary | 2\n+I Liz | 1";
    let one_each = spec.run(
        "+I Mary | ./home\n--\n+I Bob | ./cart\n--\n+I Mary | ./prod?id=1\n--\n+I Liz | ./home",
    );
    assert_eq!(one_each, expected);
    let together =
        spec.run("+I Mary | ./home\n+I Bob | ./cart\n+I Mary | ./prod?id=1\n+I Liz | ./home");
    assert_eq!(together, expected);
}

#[test]
fn without_update_before_only_the_new_rows_show() {
    let mut spec = Spec::new(clicks(), &[0], vec![count(&[1])]);
    spec.update_before = false;
    let out = spec.run("+I Mary | a\n+I Mary | b");
    assert_eq!(out, "+I Mary | 1\n+U Mary | 2");
}

/// COUNT(url) does not change on a NULL url: Flink emits nothing for that row.
#[test]
fn an_unchanged_result_emits_nothing() {
    let spec = Spec::new(clicks(), &[0], vec![count(&[1])]);
    let out = spec.run("+I Mary | a\n+I Mary | NULL\n+I Mary | b");
    assert_eq!(out, "+I Mary | 1\n-U Mary | 1\n+U Mary | 2");
}

/// Seed 004's two-level count (users per click count), fed the inner aggregate's changelog:
/// a group that loses its last row is deleted, and comes back as an insert.
#[test]
fn retractions_update_and_delete_groups() {
    let input = schema(&[("user", TypeKind::VarChar(100)), ("cnt", TypeKind::BigInt)]);
    let mut spec = Spec::new(input, &[1], vec![count(&[0])]);
    spec.retracts = true;
    let out = spec.run(
        "+I Mary | 1\n+I Bob | 1\n-U Mary | 1\n+U Mary | 2\n-U Bob | 1\n+U Bob | 2\n+I Liz | 1",
    );
    assert_eq!(
        out,
        "+I 1 | 1\n-U 1 | 1\n+U 1 | 2\n-U 1 | 2\n+U 1 | 1\n+I 2 | 1\n-D 1 | 1\n-U 2 | 1\n+U 2 | 2\n+I 1 | 1"
    );
}

#[test]
fn a_retraction_of_an_unknown_group_is_ignored() {
    let input = schema(&[("k", TypeKind::Int), ("v", TypeKind::BigInt)]);
    let mut spec = Spec::new(
        input,
        &[0],
        vec![call(AggregateFunction::Sum, &[1], TypeKind::BigInt)],
    );
    spec.retracts = true;
    let out = spec.run("-D 1 | 5\n+I 1 | 5\n-D 1 | 5\n-D 1 | 5\n+I 1 | 7");
    assert_eq!(out, "+I 1 | 5\n-D 1 | 5\n+I 1 | 7");
}

/// `MIN(v), MAX(v), SUM(v), COUNT(*)` by `k` over a retracting input of `(k INT, v BIGINT)`.
fn retracting_min_max_sum_count() -> Spec {
    let input = schema(&[("k", TypeKind::Int), ("v", TypeKind::BigInt)]);
    let mut spec = Spec::new(
        input,
        &[0],
        vec![
            call(AggregateFunction::Min, &[1], TypeKind::BigInt),
            call(AggregateFunction::Max, &[1], TypeKind::BigInt),
            call(AggregateFunction::Sum, &[1], TypeKind::BigInt),
            count(&[]),
        ],
    );
    spec.retracts = true;
    spec
}

/// MIN and MAX over a retracting input fall back to the next value when the extreme goes;
/// SUM becomes NULL when its last value is retracted while the group lives on.
#[test]
fn min_max_and_sum_retract() {
    let spec = retracting_min_max_sum_count();
    let out = spec.run("+I 1 | 3\n+I 1 | 9\n+I 1 | NULL\n--\n-D 1 | 9\n--\n-D 1 | 3");
    assert_eq!(
        out,
        "+I 1 | 3 | 3 | 3 | 1\n-U 1 | 3 | 3 | 3 | 1\n+U 1 | 3 | 9 | 12 | 2\n\
         -U 1 | 3 | 9 | 12 | 2\n+U 1 | 3 | 9 | 12 | 3\n\
         -U 1 | 3 | 9 | 12 | 3\n+U 1 | 3 | 3 | 3 | 2\n\
         -U 1 | 3 | 3 | 3 | 2\n+U 1 | NULL | NULL | NULL | 1"
    );
}

/// Keys repeated within a batch make a round per repeat, each starting from the results the
/// last one ended with when the rounds hold the same keys: one hot key, two keys taking
/// turns, a group emptied and brought back, and retractions of an emptied group. The
/// changelog is the one a batch per row gives.
#[test]
fn repeated_keys_in_one_batch_change_as_one_row_a_batch() {
    let spec = retracting_min_max_sum_count();
    let rows = [
        "+I 1 | 4", "+I 1 | 2", "+I 1 | 7", "-D 1 | 2", "+I 2 | 5", "+I 1 | 1", "+I 2 | 3",
        "-D 1 | 4", "-D 2 | 5", "-D 1 | 7", "-D 1 | 1", "-D 1 | 1", "+I 1 | 9", "+I 2 | 3",
        "-D 2 | 3", "-D 2 | 3", "-D 2 | 3", "+I 2 | 8", "+I 1 | 9",
    ];
    let one_a_batch = spec.run(&rows.join("\n--\n"));
    assert_eq!(spec.run(&rows.join("\n")), one_a_batch);
    assert!(
        one_a_batch.contains("-D 1 | 1 | 1 | 1 | 1"),
        "{one_a_batch}"
    );
    // Two rounds of the same keys in another order start afresh.
    let turns = ["+I 3 | 1", "+I 4 | 2", "+I 4 | 5", "+I 3 | 6"];
    assert_eq!(spec.run(&turns.join("\n")), spec.run(&turns.join("\n--\n")));
}

#[test]
fn batch_mode_emits_final_rows_and_a_global_row_over_nothing() {
    let mut spec = Spec::new(clicks(), &[0], vec![count(&[1])]);
    spec.final_only = true;
    let out = spec.run("+I Mary | a\n+I Bob | b\n--\n+I Mary | c\nEND");
    assert_eq!(out, "+I Bob | 1\n+I Mary | 2");
    let mut global = Spec::new(
        clicks(),
        &[],
        vec![
            count(&[]),
            call(AggregateFunction::Max, &[1], TypeKind::VarChar(100)),
        ],
    );
    global.final_only = true;
    assert_eq!(global.run("END"), "+I 0 | NULL");
    global.final_only = false;
    assert_eq!(
        global.run("END"),
        "",
        "a streaming global aggregate waits for a row"
    );
}

/// A snapshot restored into two instances, each owning half the key groups, continues as
/// the uninterrupted operator does.
#[test]
fn restored_equals_uninterrupted() {
    let spec = Spec::new(clicks(), &[0], vec![count(&[1])]);
    let first = "+I Mary | a\n+I Bob | b\n+I Liz | c";
    let second = "+I Mary | d\n+I Bob | e\n+I Zoe | f";
    let mut whole = spec.build();
    run_script(&mut whole, &spec.input, &spec.output(), first).unwrap();
    let expected = run_script(&mut whole, &spec.input, &spec.output(), second).unwrap();
    let mut lines: Vec<String> = Vec::new();
    for index in 0..2 {
        let ctx = OperatorContext::instance(index, 2, 128, OperatorContext::default().clock);
        let mut op = spec.build();
        op.open(&ctx).unwrap();
        for (kg, state) in whole_snapshot(&spec, first) {
            if ctx.key_groups.contains(kg) {
                op.restore(kg, &state).unwrap();
            }
        }
        // Each instance sees only its keys' rows, as the exchange sends them.
        let mine: Vec<&str> = second
            .lines()
            .filter(|l| {
                let user = l[3..].split('|').next().unwrap().trim();
                let keys =
                    KeyEncoder::new(&crate::types::chunk::runtime_schema(&spec.input), vec![0])
                        .unwrap();
                let batch =
                    crate::exec::test_harness::chunk(&spec.input, &format!("+I {user} | x")).batch;
                let rows = keys.encode(&batch).unwrap();
                ctx.key_groups
                    .contains(crate::exec::state::key_group::key_group_of(
                        rows.row(0).data(),
                        128,
                    ))
            })
            .collect();
        if !mine.is_empty() {
            let out = run_script(&mut op, &spec.input, &spec.output(), &mine.join("\n")).unwrap();
            lines.extend(out.lines().map(String::from));
        }
    }
    let mut expected: Vec<&str> = expected.lines().collect();
    expected.sort_unstable();
    lines.sort_unstable();
    assert_eq!(lines, expected);
}

fn whole_snapshot(spec: &Spec, script: &str) -> Vec<(u32, Vec<u8>)> {
    let mut op = spec.build();
    run_script(&mut op, &spec.input, &spec.output(), script).unwrap();
    op.snapshot()
}

/// `table.exec.state.ttl`: a key not written for the TTL is gone (its next row starts it
/// afresh with `+I`, a retraction of it is ignored) even before a sweep frees it; a row
/// within the TTL keeps it, and the sweep frees what expired.
#[test]
fn state_ttl_forgets_keys_not_written_for_its_duration() {
    use crate::exec::test_harness::{Recorder, chunk};
    let spec = Spec {
        retracts: true,
        ..Spec::new(clicks(), &[0], vec![count(&[1])])
    };
    let clock = crate::clock::ManualClock::new(0);
    let mut op = spec.build().with_state_ttl(1_000);
    op.open(&OperatorContext::instance(0, 1, 128, clock.clone()))
        .unwrap();
    let mut out = Recorder::new(&spec.output());
    let mut at = |op: &mut GroupAggregateOperator, ms: i64, rows: &str| {
        clock.set(ms * 1_000_000);
        op.process(0, chunk(&spec.input, rows), &mut out).unwrap();
        out.take()
    };
    assert_eq!(at(&mut op, 0, "+I Mary | a"), "+I Mary | 1");
    assert_eq!(at(&mut op, 900, "+I Mary | b"), "-U Mary | 1\n+U Mary | 2");
    // Written at 900: still there at 1,800.
    assert_eq!(
        at(&mut op, 1_800, "+I Mary | c"),
        "-U Mary | 2\n+U Mary | 3"
    );
    assert_eq!(
        at(&mut op, 2_800, "+I Mary | d\n+I Mary | e"),
        "+I Mary | 1\n-U Mary | 1\n+U Mary | 2"
    );
    assert_eq!(at(&mut op, 3_900, "-D Mary | d"), "");
    assert_eq!(at(&mut op, 3_950, "+I Bob | x"), "+I Bob | 1");
    op.on_processing_time(5_000, &mut out).unwrap();
    assert_eq!(op.keyed.keys.len(), 0, "the sweep frees expired keys");
    assert_eq!(op.next_processing_time(), Some(6_000));
}

/// A restored key keeps its write time: the TTL runs on from where the snapshot left it
/// (written at 0, snapshotted at 900, expired at 1,000 after a restore as without one).
#[test]
fn a_restored_key_keeps_its_ttl_write_time() {
    use crate::exec::test_harness::{Recorder, chunk};
    let spec = Spec {
        retracts: true,
        ..Spec::new(clicks(), &[0], vec![count(&[1])])
    };
    let clock = crate::clock::ManualClock::new(0);
    let ctx = OperatorContext::instance(0, 1, 128, clock.clone());
    let mut op = spec.build().with_state_ttl(1_000);
    op.open(&ctx).unwrap();
    let mut out = Recorder::new(&spec.output());
    op.process(0, chunk(&spec.input, "+I Mary | a"), &mut out)
        .unwrap();
    assert_eq!(out.take(), "+I Mary | 1");
    clock.set(900 * 1_000_000);
    let snapshot = op.snapshot();
    let mut restored = spec.build().with_state_ttl(1_000);
    restored.open(&ctx).unwrap();
    for (kg, state) in snapshot {
        restored.restore(kg, &state).unwrap();
    }
    clock.set(1_000 * 1_000_000);
    restored
        .process(0, chunk(&spec.input, "+I Mary | b"), &mut out)
        .unwrap();
    assert_eq!(
        out.take(),
        "+I Mary | 1",
        "expired, as in an uninterrupted run"
    );
}

/// Restored == uninterrupted at every cut and between parallelisms 1 and 2, with the state
/// frozen at the cut while the operator goes on (its pages then copied on write): groups
/// growing, emptied and brought back (a freed id reused), over accumulators kept in pages
/// (COUNT, SUM, AVG, MIN, MAX, the M2 under STDDEV) and one that is not (MIN/MAX with
/// retraction), insert-only and retracting.
#[test]
fn frozen_state_restores_as_uninterrupted() {
    let insert_only = Spec::new(
        schema(&[("k", TypeKind::Int), ("v", TypeKind::BigInt)]),
        &[0],
        vec![
            count(&[]),
            call(AggregateFunction::Sum, &[1], TypeKind::BigInt),
            call(AggregateFunction::Avg, &[1], TypeKind::BigInt),
            call(AggregateFunction::Min, &[1], TypeKind::BigInt),
            call(AggregateFunction::Max, &[1], TypeKind::BigInt),
            call(AggregateFunction::WelfordM2, &[1], TypeKind::Double),
        ],
    );
    let scripts = [
        (
            insert_only,
            "+I 1 | 3\n+I 2 | 4\n--\n+I 1 | 5\n+I 3 | NULL\n--\n+I 2 | 6\n+I 4 | 1\n--\n+I 1 | 1\n+I 3 | 2",
        ),
        (
            retracting_min_max_sum_count(),
            "+I 1 | 3\n+I 2 | 4\n--\n+I 1 | 9\n-D 2 | 4\n--\n+I 3 | 7\n+I 2 | 8\n--\n-D 1 | 3\n+I 4 | 2\n--\n-D 1 | 9\n+I 1 | 5",
        ),
    ];
    for (spec, script) in scripts {
        let build = || {
            let op = GroupAggregateOperator::new(
                &crate::types::chunk::runtime_schema(&spec.input),
                spec.grouping.clone(),
                &spec.aggregates,
                crate::types::chunk::runtime_schema(&spec.output()),
                spec.retracts,
                spec.update_before,
                spec.final_only,
            )
            .unwrap();
            Box::new(op) as Box<dyn Operator>
        };
        crate::exec::test_harness::RestoreCheck {
            build: &build,
            inputs: &[&spec.input],
            output: &spec.output(),
            keys: Some(&[vec![0]]),
            exact_order: true,
        }
        .check(script);
    }
}
