//! Operator tests: text chunks and watermarks through the harness; inputs and expected rows
//! of the acceptance seeds where one covers the case.
use crate::exec::test_harness::ScriptRng;

use super::*;
use crate::clock::ManualClock;
use crate::exec::state::key_group::{DEFAULT_MAX_PARALLELISM, key_group_of};
use crate::exec::test_harness::{run_script, schema};
use crate::plan::aggregate::AggregateFunction;
use crate::types::TypeKind;
use crate::types::{DataType, Field, Schema};

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

fn count_star() -> AggregateCall {
    AggregateCall {
        data_type: DataType::not_null(TypeKind::BigInt),
        ..call(AggregateFunction::Count, &[], TypeKind::BigInt)
    }
}

fn distinct(mut c: AggregateCall) -> AggregateCall {
    c.distinct = true;
    c
}

/// What a test builds an operator from.
struct Spec {
    input: Schema,
    grouping: Vec<usize>,
    kind: GroupWindowKind,
    time_column: usize,
    attribute: TimeAttribute,
    aggregates: Vec<AggregateCall>,
    properties: Vec<WindowProperty>,
    zone: &'static str,
    /// The input retracts rows.
    retracting: bool,
    /// An emit strategy, and whether updates emit `-U`.
    emit: Option<(EmitStrategy, bool)>,
    /// Rows carry their window in these (start, end) columns.
    attached: Option<(usize, usize)>,
}

impl Spec {
    fn new(input: Schema, kind: GroupWindowKind, time_column: usize) -> Self {
        Spec {
            input,
            grouping: Vec::new(),
            kind,
            time_column,
            attribute: TimeAttribute::Rowtime,
            aggregates: Vec::new(),
            properties: Vec::new(),
            zone: "UTC",
            retracting: false,
            emit: None,
            attached: None,
        }
    }

    fn time_type(&self) -> DataType {
        self.input.fields[self.time_column].data_type.clone()
    }

    /// Grouping keys, aggregates, then properties, as the planner lays them out.
    fn output(&self) -> Schema {
        let mut fields: Vec<Field> = self
            .grouping
            .iter()
            .map(|&g| self.input.fields[g].clone())
            .collect();
        for (i, a) in self.aggregates.iter().enumerate() {
            fields.push(Field::new(format!("agg{i}"), a.data_type.clone()));
        }
        for (i, p) in self.properties.iter().enumerate() {
            let data_type = match p {
                WindowProperty::Start | WindowProperty::End => {
                    DataType::not_null(TypeKind::Timestamp(3))
                }
                WindowProperty::Rowtime => self.time_type(),
                WindowProperty::Proctime => DataType::nullable(TypeKind::TimestampLtz(3)),
            };
            fields.push(Field::new(format!("p{i}"), data_type));
        }
        Schema::new(fields)
    }

    fn build(&self) -> GroupWindowAggregateOperator {
        self.build_at(&OperatorContext::default())
    }

    fn build_at(&self, ctx: &OperatorContext) -> GroupWindowAggregateOperator {
        let input = crate::types::chunk::runtime_schema(&self.input);
        let mut op = GroupWindowAggregateOperator::new(
            &input,
            self.grouping.clone(),
            GroupWindow {
                kind: self.kind,
                time_column: self.time_column,
                time_attribute: self.attribute,
                time_type: self.time_type(),
                offset: 0,
            },
            self.aggregates.clone(),
            self.properties.clone(),
            crate::types::chunk::runtime_schema(&self.output()),
            SessionZone::new(self.zone).unwrap(),
            self.retracting,
        )
        .unwrap();
        if let Some((strategy, update_before)) = self.emit {
            op = op.with_emit(strategy, update_before).unwrap();
        }
        if let Some((start, end)) = self.attached {
            op = op.with_attached_windows(start, end);
        }
        op.open(ctx).unwrap();
        op
    }

    fn run(&self, script: &str) -> String {
        let mut op = self.build();
        run_script(&mut op, &self.input, &self.output(), script).unwrap()
    }
}

const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;

fn user_actions() -> Schema {
    schema(&[
        ("user_name", TypeKind::VarChar(100)),
        ("data", TypeKind::VarChar(100)),
        ("ts", TypeKind::Timestamp(3)),
    ])
}

/// ta_event_time_timestamp_tumble: COUNT(DISTINCT user_name) per 10-minute window, the
/// watermark 5 s behind; Erin arrives after the first window fired and is dropped, counted.
#[test]
fn tumble_count_distinct_drops_and_counts_a_late_row() {
    let mut spec = Spec::new(
        user_actions(),
        GroupWindowKind::Tumble { size: 10 * MINUTE },
        2,
    );
    spec.aggregates = vec![distinct(AggregateCall {
        data_type: DataType::not_null(TypeKind::BigInt),
        ..call(AggregateFunction::Count, &[0], TypeKind::BigInt)
    })];
    spec.properties = vec![WindowProperty::Start];
    let mut op = spec.build();
    let out = run_script(
        &mut op,
        &spec.input,
        &spec.output(),
        "+I Alice | click | 2020-04-15 20:01:00
         WM 2020-04-15 20:00:55
         +I Bob | view | 2020-04-15 20:03:30
         WM 2020-04-15 20:03:25
         +I Alice | buy | 2020-04-15 20:07:10
         WM 2020-04-15 20:07:05
         +I Carol | click | 2020-04-15 20:10:03
         WM 2020-04-15 20:09:58
         +I Dave | view | 2020-04-15 20:09:59
         +I Carol | buy | 2020-04-15 20:12:00
         WM 2020-04-15 20:11:55
         +I Erin | click | 2020-04-15 20:08:00
         +I Bob | click | 2020-04-15 20:14:59
         WM 2020-04-15 20:14:54
         +I Alice | view | 2020-04-15 20:25:00
         WM 2020-04-15 20:24:55
         WM MAX",
    )
    .unwrap();
    assert_eq!(
        out,
        "WM 1586980855000
WM 1586981005000
WM 1586981225000
WM 1586981398000
+I 3 | 2020-04-15 20:00:00.000
WM 1586981515000
WM 1586981694000
+I 2 | 2020-04-15 20:10:00.000
WM 1586982295000
+I 1 | 2020-04-15 20:20:00.000
WM 9223372036854775807"
    );
    assert_eq!(op.late_rows(), 1);
}

/// dyn_clicks_hourly_tumble: COUNT(url) per user and hour; a window's rows come out in key
/// order when one watermark fires several.
#[test]
fn tumble_per_key_fires_in_key_order() {
    let input = schema(&[
        ("user", TypeKind::VarChar(100)),
        ("url", TypeKind::VarChar(100)),
        ("cTime", TypeKind::Timestamp(3)),
    ]);
    let mut spec = Spec::new(input, GroupWindowKind::Tumble { size: HOUR }, 2);
    spec.grouping = vec![0];
    spec.aggregates = vec![AggregateCall {
        data_type: DataType::not_null(TypeKind::BigInt),
        ..call(AggregateFunction::Count, &[1], TypeKind::BigInt)
    }];
    spec.properties = vec![WindowProperty::End];
    let out = spec.run(
        "+I Mary | ./home | 2020-04-15 12:00:00
         +I Bob | ./cart | 2020-04-15 12:00:00
         +I Mary | ./prod?id=2 | 2020-04-15 12:02:00
         +I Mary | ./home | 2020-04-15 12:55:00
         +I Bob | ./prod?id=1 | 2020-04-15 13:01:00
         WM 2020-04-15 13:00:59
         +I Liz | ./home | 2020-04-15 13:30:00
         +I Liz | ./prod?id=4 | 2020-04-15 13:59:00
         +I Mary | ./cart | 2020-04-15 14:00:00
         +I Liz | ./home | 2020-04-15 14:02:00
         WM 2020-04-15 14:01:59
         +I Bob | ./prod?id=3 | 2020-04-15 14:30:00
         +I Bob | ./home | 2020-04-15 14:40:00
         +I Bob | NULL | 2020-04-15 14:41:00
         WM MAX",
    );
    assert_eq!(
        out,
        "+I Bob | 1 | 2020-04-15 13:00:00.000
+I Mary | 3 | 2020-04-15 13:00:00.000
WM 1586955659000
+I Bob | 1 | 2020-04-15 14:00:00.000
+I Liz | 2 | 2020-04-15 14:00:00.000
WM 1586959319000
+I Bob | 2 | 2020-04-15 15:00:00.000
+I Liz | 1 | 2020-04-15 15:00:00.000
+I Mary | 1 | 2020-04-15 15:00:00.000
WM 9223372036854775807"
    );
}

fn dst_input() -> Schema {
    schema(&[("v", TypeKind::Int), ("rowtime", TypeKind::TimestampLtz(3))])
}

fn dst_spec(zone: &'static str) -> Spec {
    let mut spec = Spec::new(dst_input(), GroupWindowKind::Tumble { size: 4 * HOUR }, 1);
    spec.aggregates = vec![
        count_star(),
        call(AggregateFunction::Sum, &[0], TypeKind::Int),
    ];
    spec.properties = vec![
        WindowProperty::Start,
        WindowProperty::End,
        WindowProperty::Rowtime,
    ];
    spec.zone = zone;
    spec
}

/// The four epochs of tz_dst_tumble_los_angeles (00:00 PST, 01:00 PST, 03:00 PDT, 04:00 PDT
/// on 2021-03-14), written in UTC, a watermark after each.
const DST_ROWS: &str = "+I 1 | 2021-03-14 08:00:00
    WM 1615708800000
    +I 2 | 2021-03-14 09:00:00
    WM 1615712400000
    +I 3 | 2021-03-14 10:00:00
    WM 1615716000000
    +I 4 | 2021-03-14 11:00:00
    WM 1615719600000
    WM MAX";

/// tz_dst_tumble_los_angeles: the window [00:00, 04:00) holds 3 hours, and fires as the
/// watermark passes 03:59:59.999 PDT (10:59:59.999 UTC, printed here in UTC).
#[test]
fn ltz_windows_follow_the_wall_clock_across_dst() {
    let out = dst_spec("America/Los_Angeles").run(DST_ROWS);
    assert_eq!(
        out,
        "WM 1615708800000
WM 1615712400000
WM 1615716000000
+I 3 | 6 | 2021-03-14 00:00:00.000 | 2021-03-14 04:00:00.000 | 2021-03-14 10:59:59.999
WM 1615719600000
+I 1 | 4 | 2021-03-14 04:00:00.000 | 2021-03-14 08:00:00.000 | 2021-03-14 14:59:59.999
WM 9223372036854775807"
    );
}

/// tz_dst_tumble_utc: the same epochs in UTC share one window.
#[test]
fn ltz_windows_in_utc_are_utc_windows() {
    let out = dst_spec("UTC").run(DST_ROWS);
    assert_eq!(
        out,
        "WM 1615708800000
WM 1615712400000
WM 1615716000000
WM 1615719600000
+I 4 | 10 | 2021-03-14 08:00:00.000 | 2021-03-14 12:00:00.000 | 2021-03-14 11:59:59.999
WM 9223372036854775807"
    );
}

/// A window ending inside the skipped hour (local 02:00–03:00) fires at the first instant
/// after it, 03:00 PDT, as Flink's `toEpochMillsForTimer`; and the repeated hour of November
/// fires after its second pass.
#[test]
fn trigger_times_around_transitions_are_flinks() {
    let mut spec = dst_spec("America/Los_Angeles");
    spec.kind = GroupWindowKind::Tumble { size: 30 * MINUTE };
    let op = spec.build();
    let local = |s: &str| crate::exec::test_harness::script_time(s);
    // [02:00, 02:30) local does not exist: fires at 10:00 UTC (03:00 PDT).
    assert_eq!(
        op.trigger_time(local("2021-03-14 02:30:00")),
        local("2021-03-14 10:00:00")
    );
    // [01:00, 01:30) on 2021-11-07 happens twice: fires after the second, 01:29:59.999 PST.
    assert_eq!(
        op.trigger_time(local("2021-11-07 01:30:00")),
        local("2021-11-07 09:29:59.999")
    );
    // An ordinary window fires at its end − 1 ms in UTC.
    assert_eq!(
        op.trigger_time(local("2021-06-01 12:00:00")),
        local("2021-06-01 18:59:59.999")
    );
}

fn events() -> Schema {
    schema(&[
        ("k", TypeKind::VarChar(10)),
        ("v", TypeKind::Int),
        ("ts", TypeKind::Timestamp(3)),
    ])
}

/// HOP(ts, 5 s, 10 s): a row belongs to two windows; one late for the first still counts
/// in the second, and is not counted as dropped.
#[test]
fn hop_a_row_late_for_one_window_counts_in_the_next() {
    let mut spec = Spec::new(
        events(),
        GroupWindowKind::Hop {
            slide: 5_000,
            size: 10_000,
        },
        2,
    );
    spec.grouping = vec![0];
    spec.aggregates = vec![
        count_star(),
        call(AggregateFunction::Sum, &[1], TypeKind::Int),
    ];
    spec.properties = vec![WindowProperty::Start, WindowProperty::End];
    let mut op = spec.build();
    let out = run_script(
        &mut op,
        &spec.input,
        &spec.output(),
        "+I a | 1 | 1970-01-01 00:00:03
         +I a | 2 | 1970-01-01 00:00:06
         WM 10000
         +I a | 4 | 1970-01-01 00:00:07
         +I a | 8 | 1970-01-01 00:00:01
         WM MAX",
    )
    .unwrap();
    assert_eq!(
        out,
        "+I a | 1 | 1 | 1969-12-31 23:59:55.000 | 1970-01-01 00:00:05.000
+I a | 2 | 3 | 1970-01-01 00:00:00.000 | 1970-01-01 00:00:10.000
WM 10000
+I a | 2 | 6 | 1970-01-01 00:00:05.000 | 1970-01-01 00:00:15.000
WM 9223372036854775807"
    );
    // The row at 7 s is late for [0, 10) but counts in [5, 15); the row at 1 s is late for
    // both its windows.
    assert_eq!(op.late_rows(), 1);
}

fn session_spec() -> Spec {
    let mut spec = Spec::new(events(), GroupWindowKind::Session { gap: 10_000 }, 2);
    spec.grouping = vec![0];
    spec.aggregates = vec![
        count_star(),
        call(AggregateFunction::Sum, &[1], TypeKind::Int),
        call(AggregateFunction::Max, &[1], TypeKind::Int),
    ];
    spec.properties = vec![
        WindowProperty::Start,
        WindowProperty::End,
        WindowProperty::Rowtime,
    ];
    spec
}

/// Two sessions bridged by a row of a later batch merge into one, whichever session came
/// first; windows that only meet merge too (Flink's `intersects`).
#[test]
fn sessions_merge_across_batches_in_either_order() {
    let expected = "+I b | 1 | 100 | 100 | 1970-01-01 00:00:00.000 | 1970-01-01 00:00:10.000 | 1970-01-01 00:00:09.999
+I a | 4 | 15 | 8 | 1970-01-01 00:00:00.000 | 1970-01-01 00:00:35.000 | 1970-01-01 00:00:34.999
WM 9223372036854775807";
    let spec = session_spec();
    let forward = spec.run(
        "+I a | 1 | 1970-01-01 00:00:00
         +I b | 100 | 1970-01-01 00:00:00
         --
         +I a | 2 | 1970-01-01 00:00:18
         --
         +I a | 4 | 1970-01-01 00:00:25
         --
         +I a | 8 | 1970-01-01 00:00:09
         WM MAX",
    );
    assert_eq!(forward, expected);
    let backward = spec.run(
        "+I a | 4 | 1970-01-01 00:00:25
         --
         +I a | 8 | 1970-01-01 00:00:09
         +I a | 2 | 1970-01-01 00:00:18
         +I b | 100 | 1970-01-01 00:00:00
         --
         +I a | 1 | 1970-01-01 00:00:00
         WM MAX",
    );
    assert_eq!(backward, expected);
    // [0, 10) and [10, 20) meet at 10: one session.
    let meeting = spec.run(
        "+I a | 1 | 1970-01-01 00:00:00
         +I a | 2 | 1970-01-01 00:00:10
         WM MAX",
    );
    assert_eq!(
        meeting,
        "+I a | 2 | 3 | 2 | 1970-01-01 00:00:00.000 | 1970-01-01 00:00:20.000 | 1970-01-01 00:00:19.999
WM 9223372036854775807"
    );
}

/// A row behind the watermark joins an open session it touches (the merged window is not
/// late), but alone it is dropped.
#[test]
fn a_late_row_joins_an_open_session_or_is_dropped() {
    let mut op = session_spec().build();
    let spec = session_spec();
    let out = run_script(
        &mut op,
        &spec.input,
        &spec.output(),
        "+I a | 1 | 1970-01-01 00:00:20
         WM 25000
         +I a | 2 | 1970-01-01 00:00:12
         +I a | 4 | 1970-01-01 00:00:01
         WM MAX",
    )
    .unwrap();
    assert_eq!(
        out,
        "WM 25000
+I a | 2 | 3 | 2 | 1970-01-01 00:00:12.000 | 1970-01-01 00:00:30.000 | 1970-01-01 00:00:29.999
WM 9223372036854775807"
    );
    assert_eq!(op.late_rows(), 1);
}

fn typed() -> Schema {
    schema(&[
        ("k", TypeKind::VarChar(10)),
        ("i", TypeKind::Int),
        ("ti", TypeKind::TinyInt),
        (
            "d",
            TypeKind::Decimal {
                precision: 10,
                scale: 2,
            },
        ),
        ("f", TypeKind::Float),
        ("g", TypeKind::Double),
        ("s", TypeKind::VarChar(10)),
        ("b", TypeKind::BigInt),
        ("ts", TypeKind::Timestamp(3)),
    ])
}

/// Every aggregate over the rows Flink 2.3 aggregated (see the report's oracle run): INT
/// and TINYINT sums wrap, integer averages sum in BIGINT and truncate, DECIMAL averages are
/// exact at scale 6, FLOAT averages sum in DOUBLE, NULLs are skipped, and a group of only
/// NULLs gives NULL (and COUNT 0).
#[test]
fn every_aggregate_matches_flink() {
    let mut spec = Spec::new(typed(), GroupWindowKind::Tumble { size: MINUTE }, 8);
    spec.grouping = vec![0];
    let decimal = |p, s| TypeKind::Decimal {
        precision: p,
        scale: s,
    };
    spec.aggregates = vec![
        call(AggregateFunction::Sum, &[1], TypeKind::Int),
        call(AggregateFunction::Sum, &[2], TypeKind::TinyInt),
        call(AggregateFunction::Avg, &[2], TypeKind::TinyInt),
        call(AggregateFunction::Avg, &[1], TypeKind::Int),
        call(AggregateFunction::Avg, &[3], decimal(38, 6)),
        call(AggregateFunction::Sum, &[3], decimal(38, 2)),
        call(AggregateFunction::Avg, &[4], TypeKind::Float),
        call(AggregateFunction::Avg, &[5], TypeKind::Double),
        call(AggregateFunction::Min, &[6], TypeKind::VarChar(10)),
        call(AggregateFunction::Max, &[6], TypeKind::VarChar(10)),
        AggregateCall {
            data_type: DataType::not_null(TypeKind::BigInt),
            ..call(AggregateFunction::Count, &[6], TypeKind::BigInt)
        },
        count_star(),
        distinct(AggregateCall {
            data_type: DataType::not_null(TypeKind::BigInt),
            ..call(AggregateFunction::Count, &[2], TypeKind::BigInt)
        }),
        call(AggregateFunction::Min, &[7], TypeKind::BigInt),
        call(AggregateFunction::Max, &[3], decimal(10, 2)),
        call(AggregateFunction::Min, &[8], TypeKind::Timestamp(3)),
        call(AggregateFunction::Sum, &[7], TypeKind::BigInt),
    ];
    let out = spec.run(
        "+I a | 2147483647 | 127 | 1.00 | 1.5 | 2.5 | x | 9223372036854775807 | 2020-01-01 00:00:01
         +I a | 1 | 1 | 2.00 | 2.25 | 3.5 | b | 1 | 2020-01-01 00:00:02
         --
         +I a | 5 | 127 | 2.00 | 1.0 | 1.0 | zz | -5 | 2020-01-01 00:00:03
         +I b | -3 | -128 | 0.01 | 1.0 | 1.0 | m | NULL | 2020-01-01 00:00:04
         +I b | NULL | -128 | 0.01 | NULL | NULL | NULL | NULL | 2020-01-01 00:00:05
         +I b | 1 | 1 | 0.02 | 1.0 | 1.0 | a | NULL | 2020-01-01 00:00:06
         +I c | NULL | NULL | NULL | NULL | NULL | NULL | NULL | 2020-01-01 00:00:07
         WM MAX",
    );
    assert_eq!(
        out,
        "+I a | -2147483643 | -1 | 85 | 715827884 | 1.666667 | 5.00 | 1.5833334 | 2.3333333333333335 | b | zz | 3 | 3 | 2 | -5 | 2.00 | 2020-01-01 00:00:01.000 | 9223372036854775803
+I b | -2 | 1 | -85 | -1 | 0.013333 | 0.04 | 1.0 | 1.0 | a | m | 2 | 3 | 2 | NULL | 0.02 | 2020-01-01 00:00:04.000 | NULL
+I c | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | 0 | 1 | 0 | NULL | NULL | 2020-01-01 00:00:07.000 | NULL
WM 9223372036854775807"
    );
}

/// FILTER (WHERE …) counts only the rows where the flag is TRUE (not NULL, not FALSE).
#[test]
fn filter_keeps_only_true_rows() {
    let input = schema(&[
        ("v", TypeKind::Int),
        ("keep", TypeKind::Boolean),
        ("ts", TypeKind::Timestamp(3)),
    ]);
    let mut spec = Spec::new(input, GroupWindowKind::Tumble { size: MINUTE }, 2);
    let mut sum = call(AggregateFunction::Sum, &[0], TypeKind::Int);
    sum.filter = Some(1);
    let mut count = count_star();
    count.filter = Some(1);
    spec.aggregates = vec![sum, count, count_star()];
    let out = spec.run(
        "+I 1 | true | 1970-01-01 00:00:01
         +I 2 | false | 1970-01-01 00:00:02
         +I 4 | NULL | 1970-01-01 00:00:03
         +I 8 | true | 1970-01-01 00:00:04
         WM MAX",
    );
    assert_eq!(out, "+I 9 | 2 | 4\nWM 9223372036854775807");
}

/// Proctime windows are assigned by the clock, fire when the clock passes end − 1, carry the
/// firing time as their proctime property (what Flink's PROCTIME_MATERIALIZE shows; seed 001's
/// MyView3), and never fire at the end of input.
#[test]
fn proctime_windows_fire_on_the_clock_not_at_the_end() {
    let input = schema(&[("k", TypeKind::VarChar(10)), ("v", TypeKind::Int)]);
    let mut spec = Spec::new(input, GroupWindowKind::Tumble { size: 10_000 }, 0);
    spec.attribute = TimeAttribute::Proctime;
    spec.grouping = vec![0];
    spec.aggregates = vec![call(AggregateFunction::Sum, &[1], TypeKind::Int)];
    spec.properties = vec![WindowProperty::Start, WindowProperty::Proctime];
    let clock = ManualClock::new(12_000 * NANOS_PER_MILLI);
    let ctx = OperatorContext::instance(0, 1, DEFAULT_MAX_PARALLELISM, clock.clone());
    let mut op = GroupWindowAggregateOperator::new(
        &crate::types::chunk::runtime_schema(&spec.input),
        vec![0],
        GroupWindow {
            kind: spec.kind,
            time_column: 0,
            time_attribute: TimeAttribute::Proctime,
            time_type: DataType::not_null(TypeKind::TimestampLtz(3)),
            offset: 0,
        },
        spec.aggregates.clone(),
        spec.properties.clone(),
        crate::types::chunk::runtime_schema(&spec.output()),
        SessionZone::utc(),
        false,
    )
    .unwrap();
    op.open(&ctx).unwrap();
    let output = spec.output();
    let run = |op: &mut GroupWindowAggregateOperator, script: &str| {
        run_script(op, &spec.input, &output, script).unwrap()
    };
    assert_eq!(run(&mut op, "+I a | 1\n+I b | 2\n+I a | 4"), "");
    assert_eq!(op.next_processing_time(), Some(19_999));
    clock.set(25_000 * NANOS_PER_MILLI);
    assert_eq!(run(&mut op, "+I a | 8"), "");
    assert_eq!(
        run(&mut op, "PT 19999"),
        "+I a | 5 | 1970-01-01 00:00:10.000 | 1970-01-01 00:00:25.000\n\
         +I b | 2 | 1970-01-01 00:00:10.000 | 1970-01-01 00:00:25.000"
    );
    assert_eq!(op.next_processing_time(), Some(29_999));
    // Watermarks pass through; the end of input fires nothing.
    assert_eq!(run(&mut op, "WM MAX\nEND"), "WM 9223372036854775807");
    assert_eq!(op.late_rows(), 0);
}

#[test]
fn retractions_and_null_rowtimes_are_refused() {
    let spec = session_spec();
    let mut op = spec.build();
    let e = run_script(
        &mut op,
        &spec.input,
        &spec.output(),
        "-D a | 1 | 1970-01-01 00:00:00",
    )
    .unwrap_err();
    assert!(matches!(e, ExecError::Internal(_)), "{e}");
    let e = run_script(&mut op, &spec.input, &spec.output(), "+I a | 1 | NULL").unwrap_err();
    assert_eq!(
        e.to_string(),
        "RowTime field should not be null, please convert it to a non-null long value."
    );
}

/// The rows of `events()` for many keys and windows, from a fixed pseudo-random sequence.
fn random_rows(seed: u64, rows: usize) -> Vec<(u32, i32, i64)> {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    (0..rows)
        .map(|_| {
            let key = (next() % 7) as u32;
            let v = (next() % 2000) as i32 - 1000;
            let ts = (next() % 120_000) as i64;
            (key, v, ts)
        })
        .collect()
}

fn script_of(rows: &[(u32, i32, i64)], batch: usize) -> String {
    let mut script = String::new();
    for (i, (k, v, ts)) in rows.iter().enumerate() {
        if i > 0 && i % batch == 0 {
            script.push_str("--\n");
        }
        script.push_str(&format!(
            "+I k{k} | {v} | {}\n",
            crate::types::time::format_timestamp(ts * NANOS_PER_MILLI, 3)
        ));
    }
    script.push_str("WM MAX\n");
    script
}

/// A naive reference: per row, per window, one map entry (sessions: per key, the rows in
/// time order, a row touching the open session extending it); output sorted as the operator
/// sorts (end, key, start).
fn reference(rows: &[(u32, i32, i64)], kind: GroupWindowKind) -> String {
    let mut windows: BTreeMap<(i64, String, i64), (i64, i32, i32)> = BTreeMap::new();
    let mut add = |key: u32, start: i64, end: i64, v: i32| {
        let e = windows
            .entry((end, format!("k{key}"), start))
            .or_insert((0, 0, i32::MAX));
        e.0 += 1;
        e.1 = e.1.wrapping_add(v);
        e.2 = e.2.min(v);
    };
    match kind {
        GroupWindowKind::Session { gap } => {
            let mut sorted = rows.to_vec();
            sorted.sort_by_key(|&(k, _, ts)| (k, ts));
            let mut i = 0;
            while i < sorted.len() {
                let (key, _, start) = sorted[i];
                let mut end = start + gap;
                let mut j = i;
                while j < sorted.len() && sorted[j].0 == key && sorted[j].2 <= end {
                    end = end.max(sorted[j].2 + gap);
                    j += 1;
                }
                for &(_, v, _) in &sorted[i..j] {
                    add(key, start, end, v);
                }
                i = j;
            }
        }
        GroupWindowKind::Tumble { size } | GroupWindowKind::Hop { size, .. } => {
            let slide = match kind {
                GroupWindowKind::Hop { slide, .. } => slide,
                _ => size,
            };
            for &(k, v, ts) in rows {
                let mut start = ts - ts.rem_euclid(slide);
                while start > ts - size {
                    add(k, start, start + size, v);
                    start -= slide;
                }
            }
        }
        GroupWindowKind::Cumulate { step, size } => {
            for &(k, v, ts) in rows {
                let start = ts - ts.rem_euclid(size);
                let mut end = start + step;
                while end <= start + size {
                    if end > ts {
                        add(k, start, end, v);
                    }
                    end += step;
                }
            }
        }
    }
    let mut lines: Vec<String> = windows
        .into_iter()
        .map(|((end, key, start), (count, sum, min))| {
            format!(
                "+I {key} | {count} | {sum} | {min} | {} | {}",
                crate::types::time::format_timestamp(start * NANOS_PER_MILLI, 3),
                crate::types::time::format_timestamp(end * NANOS_PER_MILLI, 3)
            )
        })
        .collect();
    lines.push(format!("WM {}", i64::MAX));
    lines.join("\n")
}

/// Batches spanning many keys and windows give the naive reference's rows, for TUMBLE, HOP
/// and SESSION (rows in random order, so sessions merge in every order) and batch sizes from
/// 1 to all rows.
#[test]
fn many_keys_and_windows_match_a_naive_reference() {
    let hop = |slide, size| GroupWindowKind::Hop { slide, size };
    for (seed, kind, batch) in [
        (1, GroupWindowKind::Tumble { size: 10_000 }, 1000),
        (2, GroupWindowKind::Tumble { size: 10_000 }, 7),
        (3, hop(2_500, 10_000), 1000),
        (4, hop(4_000, 9_000), 13),
        (5, hop(1_000, 60_000), 1),
        (6, GroupWindowKind::Session { gap: 2_000 }, 1000),
        (7, GroupWindowKind::Session { gap: 1_500 }, 1),
        (8, GroupWindowKind::Session { gap: 3_000 }, 17),
        (
            9,
            GroupWindowKind::Cumulate {
                step: 2_000,
                size: 10_000,
            },
            1000,
        ),
        (
            10,
            GroupWindowKind::Cumulate {
                step: 1_000,
                size: 3_000,
            },
            7,
        ),
    ] {
        let rows = random_rows(seed, 400);
        let mut spec = Spec::new(events(), kind, 2);
        spec.grouping = vec![0];
        spec.aggregates = vec![
            count_star(),
            call(AggregateFunction::Sum, &[1], TypeKind::Int),
            call(AggregateFunction::Min, &[1], TypeKind::Int),
        ];
        spec.properties = vec![WindowProperty::Start, WindowProperty::End];
        assert_eq!(
            spec.run(&script_of(&rows, batch)),
            reference(&rows, kind),
            "seed {seed}"
        );
    }
}

/// A snapshot at parallelism 1, restored into two instances by their key-group ranges,
/// gives the rows the uninterrupted operator gives.
#[test]
fn snapshot_and_restore_at_another_parallelism() {
    let rows = random_rows(9, 300);
    let (first, second) = rows.split_at(150);
    let mut spec = session_spec();
    spec.kind = GroupWindowKind::Session { gap: 3_000 };
    let script = |rows: &[(u32, i32, i64)]| {
        let s = script_of(rows, 20);
        s.trim_end_matches("WM MAX\n").to_string()
    };
    let sorted = |text: String| {
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        lines.sort();
        lines
    };
    let mut whole = spec.build();
    let mut expected = run_script(&mut whole, &spec.input, &spec.output(), &script(first)).unwrap();
    expected.push('\n');
    expected += &run_script(
        &mut whole,
        &spec.input,
        &spec.output(),
        &format!("{}WM MAX", script(second)),
    )
    .unwrap();

    let mut before = spec.build();
    let head = run_script(&mut before, &spec.input, &spec.output(), &script(first)).unwrap();
    let snapshot = before.snapshot();
    assert!(snapshot.len() > 1, "keys spread over several key groups");
    let mut restored = head;
    let mut parts = Vec::new();
    for index in 0..2 {
        let clock = Arc::new(crate::clock::SystemClock);
        let ctx = OperatorContext::instance(index, 2, DEFAULT_MAX_PARALLELISM, clock);
        let mut op = spec.build_at(&ctx);
        for (group, state) in &snapshot {
            if ctx.key_groups.contains(*group) {
                op.restore(*group, state).unwrap();
            }
        }
        parts.push((op, ctx));
    }
    // Each instance gets the rows of the keys it owns.
    let encoder =
        KeyEncoder::new(&crate::types::chunk::runtime_schema(&spec.input), vec![0]).unwrap();
    let batch =
        crate::exec::test_harness::chunk(&spec.input, &script(second).replace("--\n", "")).batch;
    let keys = encoder.encode(&batch).unwrap();
    for (op, ctx) in &mut parts {
        let owned: Vec<(u32, i32, i64)> = second
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                ctx.key_groups
                    .contains(key_group_of(keys.row(*i).as_ref(), DEFAULT_MAX_PARALLELISM))
            })
            .map(|(_, r)| *r)
            .collect();
        restored.push('\n');
        restored += &run_script(
            op,
            &spec.input,
            &spec.output(),
            &format!("{}WM MAX", script(&owned)),
        )
        .unwrap();
    }
    let strip_watermarks = |lines: Vec<String>| -> Vec<String> {
        lines.into_iter().filter(|l| !l.starts_with("WM")).collect()
    };
    let expected = strip_watermarks(sorted(expected));
    assert!(expected.len() > 10);
    assert_eq!(strip_watermarks(sorted(restored)), expected);
}

/// A rough rate, not an assertion: `cargo test --release -- --ignored rows_per_second
/// --nocapture`. 4 M rows of 10,000 keys in batches of 8,192, TUMBLE(1 min) and HOP(1 min,
/// 5 min) with COUNT(*), SUM and MIN.
#[test]
#[ignore]
fn rows_per_second() {
    use arrow_array::{Int32Array, StringArray, TimestampNanosecondArray};
    let keys: Vec<String> = (0..10_000).map(|k| format!("user_{k}")).collect();
    let ltz_events = schema(&[
        ("k", TypeKind::VarChar(10)),
        ("v", TypeKind::Int),
        ("ts", TypeKind::TimestampLtz(3)),
    ]);
    let batches_of = |input: SchemaRef| -> Vec<RecordBatch> {
        (0..500)
            .map(|b| {
                let rows = 8192;
                let names = StringArray::from_iter_values(
                    (0..rows).map(|i| keys[(i * 7919 + b * 13) % keys.len()].as_str()),
                );
                let values = Int32Array::from_iter_values((0..rows).map(|i| (i % 1000) as i32));
                let ts = TimestampNanosecondArray::from_iter_values(
                    (0..rows).map(|i| ((b * rows + i) as i64 / 100) * NANOS_PER_MILLI),
                )
                .with_data_type(input.field(2).data_type().clone());
                RecordBatch::try_new(
                    input.clone(),
                    vec![Arc::new(names), Arc::new(values), Arc::new(ts)],
                )
                .unwrap()
            })
            .collect()
    };
    let hop = GroupWindowKind::Hop {
        slide: MINUTE,
        size: 5 * MINUTE,
    };
    for (kind, table, zone) in [
        (GroupWindowKind::Tumble { size: MINUTE }, events(), "UTC"),
        (hop, events(), "UTC"),
        (
            GroupWindowKind::Tumble { size: MINUTE },
            ltz_events.clone(),
            "America/Los_Angeles",
        ),
    ] {
        let batches = batches_of(crate::types::chunk::runtime_schema(&table));
        let mut spec = Spec::new(table, kind, 2);
        spec.zone = zone;
        spec.grouping = vec![0];
        spec.aggregates = vec![
            count_star(),
            call(AggregateFunction::Sum, &[1], TypeKind::Int),
            call(AggregateFunction::Min, &[1], TypeKind::Int),
        ];
        spec.properties = vec![WindowProperty::Start];
        let mut op = spec.build();
        struct Count(usize);
        impl Output for Count {
            fn emit(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
                self.0 += chunk.num_rows();
                Ok(())
            }
            fn emit_watermark(&mut self, _: i64) -> Result<(), ExecError> {
                Ok(())
            }
            fn emit_watermark_status(
                &mut self,
                _: crate::exec::operator::WatermarkStatus,
            ) -> Result<(), ExecError> {
                Ok(())
            }
        }
        let mut out = Count(0);
        let started = std::time::Instant::now();
        for batch in &batches {
            let last = batch
                .column(2)
                .as_primitive::<TimestampNanosecondType>()
                .value(batch.num_rows() - 1)
                / NANOS_PER_MILLI;
            op.process(0, StreamChunk::inserts(batch.clone()), &mut out)
                .unwrap();
            op.on_watermark(last, &mut out).unwrap();
        }
        op.on_watermark(i64::MAX, &mut out).unwrap();
        let elapsed = started.elapsed().as_secs_f64();
        let rows = batches.len() * 8192;
        eprintln!(
            "{kind:?} in {zone}: {rows} rows in {elapsed:.3} s = {:.1} M rows/s, {} windows emitted",
            rows as f64 / elapsed / 1e6,
            out.0
        );
    }
}

/// Over a retracting input (a Top-N's changelog), a retracted row leaves its window, and a
/// window whose rows were all taken back emits nothing; a retraction of a fired window is
/// late, as Flink's legacy group windows treat it.
#[test]
fn a_retracting_input_takes_rows_back_out_of_their_windows() {
    let input = schema(&[
        ("k", TypeKind::VarChar(10)),
        ("v", TypeKind::Int),
        ("ts", TypeKind::Timestamp(3)),
    ]);
    let mut spec = Spec::new(input, GroupWindowKind::Tumble { size: 3_600_000 }, 2);
    spec.grouping = vec![0];
    spec.aggregates = vec![
        count_star(),
        call(AggregateFunction::Max, &[1], TypeKind::Int),
    ];
    spec.retracting = true;
    let out = spec.run(
        "+I a | 5 | 2020-04-15 12:00:00
         +I a | 9 | 2020-04-15 12:10:00
         +I b | 1 | 2020-04-15 12:20:00
         -U a | 9 | 2020-04-15 12:10:00
         -D b | 1 | 2020-04-15 12:20:00
         WM 2020-04-15 13:00:00
         -D a | 5 | 2020-04-15 12:00:00
         WM MAX",
    );
    assert_eq!(
        out,
        "+I a | 1 | 5\nWM 1586955600000\nWM 9223372036854775807"
    );
}

/// Rows of `events()` over seven keys, mostly in time order, some seconds behind (late for
/// windows that fired), a watermark every few rows a second behind them.
fn late_script(seed: u64) -> String {
    let mut rng = ScriptRng::new(seed);
    let mut next = |n: u64| rng.next(n);
    let (mut now, mut lines) = (0i64, Vec::new());
    for _ in 0..36 {
        now += next(1_500) as i64;
        let at = (now - if next(4) == 0 { next(8_000) as i64 } else { 0 }).max(0);
        lines.push(format!(
            "+I k{} | {} | {}",
            next(7),
            next(100),
            crate::types::time::format_timestamp(at * NANOS_PER_MILLI, 3)
        ));
        if next(4) == 0 {
            lines.push(format!("WM {}", (now - 1_000).max(0)));
        }
    }
    lines.join("\n")
}

#[test]
fn restored_equals_uninterrupted_late_rows_included() {
    let kinds = [
        GroupWindowKind::Tumble { size: 5_000 },
        GroupWindowKind::Hop {
            slide: 2_000,
            size: 6_000,
        },
        GroupWindowKind::Session { gap: 3_000 },
    ];
    for kind in kinds {
        let mut spec = session_spec();
        spec.kind = kind;
        let build = || Box::new(spec.build()) as Box<dyn Operator>;
        let check = crate::exec::test_harness::RestoreCheck {
            build: &build,
            inputs: &[&spec.input],
            output: &spec.output(),
            keys: Some(&[vec![0]]),
            exact_order: true,
        };
        for seed in 0..2 {
            check.check(&late_script(seed));
        }
    }
}

#[test]
fn corrupt_state_is_an_error() {
    let spec = session_spec();
    let mut op = spec.build();
    run_script(&mut op, &spec.input, &spec.output(), &late_script(3)).unwrap();
    let keyed = op.snapshot();
    assert!(!keyed.is_empty());
    let build = || Box::new(spec.build()) as Box<dyn Operator>;
    crate::exec::test_harness::check_corrupt_state_fails(
        &build,
        &keyed,
        op.snapshot_instance().as_deref(),
    );
}

fn values_at() -> Schema {
    schema(&[("v", TypeKind::Int), ("ts", TypeKind::Timestamp(3))])
}

/// COUNT(*) and SUM(v) per 10-second window with the emit strategy `strategy`.
fn emitting(strategy: EmitStrategy, kind: GroupWindowKind) -> Spec {
    let mut spec = Spec::new(values_at(), kind, 1);
    spec.aggregates = vec![
        count_star(),
        call(AggregateFunction::Sum, &[0], TypeKind::Int),
    ];
    spec.properties = vec![WindowProperty::Start];
    spec.emit = Some((strategy, true));
    spec
}

/// The rows of the oracle's late-firing case, each followed by the watermark it raises.
const LATE_ROWS: &str = "+I 1 | 2024-01-01 00:00:01
     WM 2024-01-01 00:00:01
     +I 2 | 2024-01-01 00:00:03
     WM 2024-01-01 00:00:03
     +I 3 | 2024-01-01 00:00:12
     WM 2024-01-01 00:00:12
     +I 4 | 2024-01-01 00:00:04
     +I 5 | 2024-01-01 00:00:25
     WM 2024-01-01 00:00:25
     +I 6 | 2024-01-01 00:00:05
     +I 7 | 2024-01-01 00:00:14
     +I 8 | 2024-01-01 00:00:41
     WM 2024-01-01 00:00:41
     +I 9 | 2024-01-01 00:00:02
     WM MAX";

fn without_watermarks(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("WM"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Flink 2.3's rows for `table.exec.emit.late-fire.enabled` with no delay and 20 s of
/// lateness: a fired window takes late rows until 20 s after its end, each an update; a row
/// later than that is dropped (and counted).
#[test]
fn late_firing_updates_a_fired_window_until_its_lateness_passes() {
    let strategy = EmitStrategy {
        early: None,
        late: Some(0),
        allow_lateness: 20_000,
    };
    let spec = emitting(strategy, GroupWindowKind::Tumble { size: 10_000 });
    let mut op = spec.build();
    let out = run_script(&mut op, &spec.input, &spec.output(), LATE_ROWS).unwrap();
    assert_eq!(
        without_watermarks(&out),
        "+I 2 | 3 | 2024-01-01 00:00:00.000
-U 2 | 3 | 2024-01-01 00:00:00.000
+U 3 | 7 | 2024-01-01 00:00:00.000
+I 1 | 3 | 2024-01-01 00:00:10.000
-U 3 | 7 | 2024-01-01 00:00:00.000
+U 4 | 13 | 2024-01-01 00:00:00.000
-U 1 | 3 | 2024-01-01 00:00:10.000
+U 2 | 10 | 2024-01-01 00:00:10.000
+I 1 | 5 | 2024-01-01 00:00:20.000
+I 1 | 8 | 2024-01-01 00:00:40.000"
    );
    assert_eq!(op.late_rows(), 1);
    // Without `-U` (an upsert consumer), updates are `+U` alone.
    let mut spec = spec;
    spec.emit = Some((strategy, false));
    let out = spec.run(LATE_ROWS);
    assert!(!out.contains("-U") && out.contains("+U 4 | 13"), "{out}");
}

/// Flink 2.3's rows for early firing with no delay: every row fires its window (an insert,
/// then updates); the on-time firing emits nothing when nothing changed since.
#[test]
fn early_firing_without_delay_fires_on_every_row() {
    let strategy = EmitStrategy {
        early: Some(0),
        late: None,
        allow_lateness: 0,
    };
    let spec = emitting(strategy, GroupWindowKind::Tumble { size: 10_000 });
    let out = spec.run(LATE_ROWS);
    assert_eq!(
        without_watermarks(&out),
        "+I 1 | 1 | 2024-01-01 00:00:00.000
-U 1 | 1 | 2024-01-01 00:00:00.000
+U 2 | 3 | 2024-01-01 00:00:00.000
+I 1 | 3 | 2024-01-01 00:00:10.000
+I 1 | 5 | 2024-01-01 00:00:20.000
+I 1 | 8 | 2024-01-01 00:00:40.000"
    );
}

/// A delay fires a window on the processing-time clock, `delay` after the first row since
/// its last delayed firing; the on-time firing then emits only what changed.
#[test]
fn delayed_early_firing_waits_for_the_clock() {
    let strategy = EmitStrategy {
        early: Some(1_000),
        late: None,
        allow_lateness: 0,
    };
    let spec = emitting(strategy, GroupWindowKind::Tumble { size: 10_000 });
    let clock = ManualClock::new(0);
    let ctx = OperatorContext::instance(0, 1, DEFAULT_MAX_PARALLELISM, clock.clone());
    let mut op = spec.build_at(&ctx);
    let output = spec.output();
    let run = |op: &mut GroupWindowAggregateOperator, script: &str| {
        run_script(op, &spec.input, &output, script).unwrap()
    };
    assert_eq!(run(&mut op, "+I 1 | 1970-01-01 00:00:01"), "");
    assert_eq!(op.next_processing_time(), Some(1_000));
    clock.set(500 * NANOS_PER_MILLI);
    // A second row before the firing waits for the same one.
    assert_eq!(run(&mut op, "+I 2 | 1970-01-01 00:00:02"), "");
    assert_eq!(op.next_processing_time(), Some(1_000));
    assert_eq!(
        run(&mut op, "PT 1000"),
        "+I 2 | 3 | 1970-01-01 00:00:00.000"
    );
    assert_eq!(op.next_processing_time(), None);
    clock.set(1_200 * NANOS_PER_MILLI);
    assert_eq!(run(&mut op, "+I 4 | 1970-01-01 00:00:03"), "");
    assert_eq!(op.next_processing_time(), Some(2_200));
    // On time before the delayed firing: the update, and the pending firing is dropped.
    assert_eq!(
        run(&mut op, "WM 1970-01-01 00:00:10"),
        "-U 2 | 3 | 1970-01-01 00:00:00.000\n+U 3 | 7 | 1970-01-01 00:00:00.000\nWM 10000"
    );
    assert_eq!(op.next_processing_time(), None);
    assert_eq!(run(&mut op, "PT 2200\nWM MAX"), "WM 9223372036854775807");
}

/// HOP with early and late firing (Flink 2.3's rows): a row fires each of its windows, the
/// newest first, as Flink's sliding assigner lists them.
#[test]
fn hop_fires_each_window_of_a_row_newest_first() {
    let strategy = EmitStrategy {
        early: Some(0),
        late: Some(0),
        allow_lateness: 15_000,
    };
    let spec = emitting(
        strategy,
        GroupWindowKind::Hop {
            slide: 5_000,
            size: 10_000,
        },
    );
    let out = spec.run(LATE_ROWS);
    assert_eq!(
        without_watermarks(&out),
        "+I 1 | 1 | 2024-01-01 00:00:00.000
+I 1 | 1 | 2023-12-31 23:59:55.000
-U 1 | 1 | 2024-01-01 00:00:00.000
+U 2 | 3 | 2024-01-01 00:00:00.000
-U 1 | 1 | 2023-12-31 23:59:55.000
+U 2 | 3 | 2023-12-31 23:59:55.000
+I 1 | 3 | 2024-01-01 00:00:10.000
+I 1 | 3 | 2024-01-01 00:00:05.000
-U 2 | 3 | 2024-01-01 00:00:00.000
+U 3 | 7 | 2024-01-01 00:00:00.000
-U 2 | 3 | 2023-12-31 23:59:55.000
+U 3 | 7 | 2023-12-31 23:59:55.000
+I 1 | 5 | 2024-01-01 00:00:25.000
+I 1 | 5 | 2024-01-01 00:00:20.000
-U 1 | 3 | 2024-01-01 00:00:05.000
+U 2 | 9 | 2024-01-01 00:00:05.000
-U 1 | 3 | 2024-01-01 00:00:10.000
+U 2 | 10 | 2024-01-01 00:00:10.000
-U 2 | 9 | 2024-01-01 00:00:05.000
+U 3 | 16 | 2024-01-01 00:00:05.000
+I 1 | 8 | 2024-01-01 00:00:40.000
+I 1 | 8 | 2024-01-01 00:00:35.000"
    );
}

/// Restored at every point of the late-firing case, the operator goes on as the
/// uninterrupted one: fired windows keep their lateness and their last emitted values.
#[test]
fn restored_emitting_windows_go_on_as_uninterrupted() {
    let strategy = EmitStrategy {
        early: Some(0),
        late: Some(0),
        allow_lateness: 20_000,
    };
    let spec = emitting(strategy, GroupWindowKind::Tumble { size: 10_000 });
    let lines: Vec<&str> = LATE_ROWS.lines().map(str::trim).collect();
    let expected = without_watermarks(&spec.run(LATE_ROWS));
    for cut in 1..lines.len() {
        let mut before = spec.build();
        let head = run_script(
            &mut before,
            &spec.input,
            &spec.output(),
            &lines[..cut].join("\n"),
        )
        .unwrap();
        let mut after = spec.build();
        for (group, state) in before.snapshot() {
            after.restore(group, &state).unwrap();
        }
        // The restored job's first watermark is the one the snapshot saw.
        let last_watermark = lines[..cut]
            .iter()
            .rev()
            .find(|l| l.starts_with("WM"))
            .map(|l| format!("{l}\n"))
            .unwrap_or_default();
        let tail = run_script(
            &mut after,
            &spec.input,
            &spec.output(),
            &format!("{last_watermark}{}", lines[cut..].join("\n")),
        )
        .unwrap();
        let restored = [without_watermarks(&head), without_watermarks(&tail)]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(restored, expected, "restored after line {cut}");
    }
}

/// A proctime window fires early on every row and on time on the clock (emitting only a
/// change); it has no late phase and goes when it fires.
#[test]
fn proctime_windows_fire_early_then_on_time() {
    let input = schema(&[("k", TypeKind::VarChar(10)), ("v", TypeKind::Int)]);
    let mut spec = Spec::new(input, GroupWindowKind::Tumble { size: 10_000 }, 2);
    spec.attribute = TimeAttribute::Proctime;
    spec.grouping = vec![0];
    spec.aggregates = vec![call(AggregateFunction::Sum, &[1], TypeKind::Int)];
    spec.emit = Some((
        EmitStrategy {
            early: Some(0),
            late: Some(0),
            allow_lateness: 0,
        },
        true,
    ));
    let clock = ManualClock::new(12_000 * NANOS_PER_MILLI);
    let ctx = OperatorContext::instance(0, 1, DEFAULT_MAX_PARALLELISM, clock.clone());
    let input = crate::types::chunk::runtime_schema(&spec.input);
    let mut op = GroupWindowAggregateOperator::new(
        &input,
        vec![0],
        GroupWindow {
            kind: spec.kind,
            time_column: 2,
            time_attribute: TimeAttribute::Proctime,
            time_type: DataType::not_null(TypeKind::TimestampLtz(3)),
            offset: 0,
        },
        spec.aggregates.clone(),
        Vec::new(),
        crate::types::chunk::runtime_schema(&spec.output()),
        SessionZone::utc(),
        false,
    )
    .unwrap()
    .with_emit(spec.emit.unwrap().0, true)
    .unwrap();
    op.open(&ctx).unwrap();
    let output = spec.output();
    let run = |op: &mut GroupWindowAggregateOperator, script: &str| {
        run_script(op, &spec.input, &output, script).unwrap()
    };
    assert_eq!(
        run(&mut op, "+I a | 1\n+I b | 2\n+I a | 4"),
        "+I a | 1\n+I b | 2\n-U a | 1\n+U a | 5"
    );
    assert_eq!(op.next_processing_time(), Some(19_999));
    assert_eq!(run(&mut op, "PT 19999"), "");
    clock.set(21_000 * NANOS_PER_MILLI);
    assert_eq!(run(&mut op, "+I a | 8"), "+I a | 8");
    assert_eq!(op.next_processing_time(), Some(29_999));
}

/// A cascading window aggregate: rows of a HOP window aggregate below (key, count, start,
/// end) summed per window they name, not per window their time falls in; two windows of one
/// start (CUMULATE's) stay apart; a row for a window the watermark has passed is late.
#[test]
fn attached_windows_aggregate_each_row_into_the_window_it_names() {
    let input = schema(&[
        ("k", TypeKind::BigInt),
        ("c", TypeKind::BigInt),
        ("ws", TypeKind::Timestamp(3)),
        ("we", TypeKind::Timestamp(3)),
    ]);
    let mut spec = Spec::new(
        input,
        GroupWindowKind::Hop {
            slide: 5_000,
            size: 10_000,
        },
        3,
    );
    spec.attached = Some((2, 3));
    spec.aggregates = vec![
        call(AggregateFunction::Sum, &[1], TypeKind::BigInt),
        count_star(),
    ];
    spec.properties = vec![WindowProperty::Start, WindowProperty::End];
    let mut op = spec.build();
    let out = run_script(
        &mut op,
        &spec.input,
        &spec.output(),
        "+I 1 | 2 | 2024-01-01 00:00:00 | 2024-01-01 00:00:10
         +I 2 | 3 | 2024-01-01 00:00:00 | 2024-01-01 00:00:10
         +I 1 | 4 | 2024-01-01 00:00:00 | 2024-01-01 00:00:05
         +I 1 | 1 | 2024-01-01 00:00:05 | 2024-01-01 00:00:15
         WM 2024-01-01 00:00:09.999
         +I 3 | 7 | 2024-01-01 00:00:00 | 2024-01-01 00:00:10
         +I 3 | 5 | 2024-01-01 00:00:10 | 2024-01-01 00:00:20
         WM MAX",
    )
    .unwrap();
    assert_eq!(
        out,
        "+I 4 | 1 | 2024-01-01 00:00:00.000 | 2024-01-01 00:00:05.000
+I 5 | 2 | 2024-01-01 00:00:00.000 | 2024-01-01 00:00:10.000
WM 1704067209999
+I 1 | 1 | 2024-01-01 00:00:05.000 | 2024-01-01 00:00:15.000
+I 5 | 1 | 2024-01-01 00:00:10.000 | 2024-01-01 00:00:20.000
WM 9223372036854775807"
    );
    assert_eq!(op.late_rows(), 1);
}
