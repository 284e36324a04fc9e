//! `WatermarkAssignerOperator`: a table's `WATERMARK FOR rowtime AS expr`, generating the
//! watermarks of one source split as Flink's `WatermarkAssignerOperator` does.
//!
//! For each row the watermark expression is evaluated (a column at a time) and the largest
//! value kept, starting from 0 as in Flink (so watermarks before 1970 are never emitted). The
//! watermark is emitted eagerly when it has passed the last emitted one by more than
//! `pipeline.auto-watermark-interval` (0: whenever it advances), and periodically at that
//! interval of the clock. Upstream watermarks are ignored except the final one (`i64::MAX`,
//! the end of a bounded input), which is forwarded once.
//!
//! Flink emits an eager watermark right after the row that advanced it, which at interval 0
//! would cut every batch into rows of one. Only rows that come after a watermark and are not
//! newer than it can tell where it was emitted (a window operator drops such a row if its
//! window has closed), so a due watermark is held back until just before the first such
//! row, or the end of the batch: every row meets the watermark it would meet in Flink. When
//! an operator downstream makes changes of older rows out of newer ones (a Top-N feeding a
//! group window), the job asks for Flink's exact places instead (`WatermarkEmission::exact`).
//!
//! The generator's state is instance state, one part per split: the largest watermark seen
//! (`current`), the last emitted (`last`; one due but held back within a batch is emitted
//! before the batch's call returns, so between calls it is the last emitted), and whether the
//! split is idle. The clock readings (`last_row`, `last_periodic`) are not: a restored split
//! starts both at the clock, as a split starting to read does.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampNanosecondType;
use arrow_array::{Array, PrimitiveArray};

use super::aggregate::put_i64;
use super::eval::evaluate;
use super::state::alignment::AlignmentMember;
use super::state::instance::{INSTANCE_STATE_VERSION, finished, instance_part};
use crate::clock::Clock;
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, Output, WatermarkStatus};
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;
use crate::types::chunk::StreamChunk;

const NANOS_PER_MILLI: i64 = 1_000_000;

/// When a split's watermarks are emitted: `pipeline.auto-watermark-interval` and the table's
/// `scan.watermark.*` options (an `OPTIONS` hint over the table's own, over the session's
/// `table.exec.source.idle-timeout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatermarkEmission {
    /// `pipeline.auto-watermark-interval`, in milliseconds (0: no periodic emission).
    pub interval: i64,
    /// `scan.watermark.emit.strategy` = `on-event`: after every row that advances it.
    pub on_event: bool,
    /// Milliseconds without a row after which the split is idle (0: never).
    pub idle_timeout: i64,
    /// Emit a due watermark right after the row that made it due, as Flink does, instead of
    /// holding it back: needed when an operator downstream turns later rows into changes of
    /// earlier ones (a Top-N retracting an older row into a group window), where the rows
    /// meeting the watermark are no longer this split's.
    pub exact: bool,
}

pub struct WatermarkAssignerOperator {
    rowtime: usize,
    watermark: ScalarExpr,
    /// The eager threshold and the periodic schedule, in milliseconds.
    interval: i64,
    /// Flink's exact emission places (see `WatermarkEmission::exact`).
    exact: bool,
    /// Whether watermarks are also emitted on the clock.
    periodic: bool,
    idle_timeout: i64,
    /// When the last row came (clock milliseconds), and whether the split was declared idle.
    last_row: i64,
    idle: bool,
    ctx: EvalContext,
    clock: Arc<dyn Clock>,
    /// The largest watermark seen, and the last one emitted (Flink starts both at 0).
    current: i64,
    last: i64,
    /// When the watermark was last emitted on the periodic schedule (clock milliseconds).
    last_periodic: i64,
    /// The split's place in its `scan.watermark.alignment.group`.
    alignment: Option<AlignmentMember>,
}

impl WatermarkAssignerOperator {
    pub fn new(
        rowtime: usize,
        watermark: ScalarExpr,
        emission: WatermarkEmission,
        ctx: EvalContext,
    ) -> Self {
        let clock = ctx.clock.clone();
        let now = clock.now_nanos().div_euclid(NANOS_PER_MILLI);
        WatermarkAssignerOperator {
            rowtime,
            watermark,
            interval: if emission.on_event {
                0
            } else {
                emission.interval
            },
            periodic: !emission.on_event && emission.interval > 0,
            exact: emission.exact,
            idle_timeout: emission.idle_timeout.max(0),
            last_row: now,
            idle: false,
            ctx,
            clock,
            current: 0,
            last: 0,
            last_periodic: now,
            alignment: None,
        }
    }

    /// Aligns the split's reading with the other members of its group.
    pub fn with_alignment(mut self, member: AlignmentMember) -> Self {
        self.alignment = Some(member);
        self
    }

    fn emit_watermark(&self, out: &mut dyn Output, watermark: i64) -> Result<(), ExecError> {
        if let Some(member) = &self.alignment {
            if watermark == i64::MAX {
                member.leave();
            } else {
                member.report(watermark);
            }
        }
        out.emit_watermark(watermark)
    }

    /// An idle split leaves its alignment group until it is active again.
    fn emit_status(&self, out: &mut dyn Output, status: WatermarkStatus) -> Result<(), ExecError> {
        if let Some(member) = &self.alignment {
            match status {
                WatermarkStatus::Idle => member.leave(),
                WatermarkStatus::Active => member.start(),
            }
        }
        out.emit_watermark_status(status)
    }

    /// The periodic emission, due when the interval has passed on the clock.
    fn periodic(&mut self, out: &mut dyn Output) -> Result<(), ExecError> {
        if !self.periodic {
            return Ok(());
        }
        let now = self.clock.now_nanos().div_euclid(NANOS_PER_MILLI);
        if self.last_periodic + self.interval <= now {
            self.last_periodic = now;
            if self.current > self.last {
                self.last = self.current;
                self.emit_watermark(out, self.current)?;
            }
        }
        Ok(())
    }
}

/// A timestamp column's values, nanoseconds (read as milliseconds with `div_euclid`, floored
/// as Flink's `TimestampData.getMillisecond` is).
fn timestamps(array: &dyn Array) -> Option<&PrimitiveArray<TimestampNanosecondType>> {
    array.as_primitive_opt::<TimestampNanosecondType>()
}

impl Operator for WatermarkAssignerOperator {
    fn open(&mut self, _ctx: &crate::exec::operator::OperatorContext) -> Result<(), ExecError> {
        if let Some(member) = &self.alignment {
            member.start();
        }
        Ok(())
    }

    fn pauses_input(&self) -> Option<i64> {
        let member = self.alignment.as_ref()?;
        member.must_pause().then(|| member.update_interval())
    }

    fn finish(&mut self, _out: &mut dyn Output) -> Result<(), ExecError> {
        if let Some(member) = &self.alignment {
            member.leave();
        }
        Ok(())
    }

    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        self.periodic(out)?;
        if self.idle_timeout > 0 {
            self.on_input_active();
            if self.idle {
                self.idle = false;
                self.emit_status(out, WatermarkStatus::Active)?;
            }
        }
        let batch = &chunk.batch;
        let rows = batch.num_rows();
        if rows == 0 {
            return out.emit(chunk);
        }
        let rowtimes = batch.column(self.rowtime);
        if rowtimes.null_count() > 0 {
            return Err(ExecError::Source(
                "RowTime field should not be null, please convert it to a non-null long value."
                    .into(),
            ));
        }
        let watermarks = evaluate(&self.watermark, batch, &self.ctx)?;
        let (Some(rowtimes), Some(watermarks)) = (timestamps(rowtimes), timestamps(&watermarks))
        else {
            return Err(ExecError::Internal(
                "the rowtime and watermark columns must be timestamps".into(),
            ));
        };
        let mut start = 0;
        let mut due: Option<i64> = None;
        for i in 0..rows {
            if let Some(w) = due
                && (self.exact || rowtimes.value(i).div_euclid(NANOS_PER_MILLI) <= w)
            {
                out.emit(chunk.slice(start, i - start))?;
                self.emit_watermark(out, w)?;
                start = i;
                due = None;
            }
            if watermarks.is_valid(i) {
                self.current = self
                    .current
                    .max(watermarks.value(i).div_euclid(NANOS_PER_MILLI));
            }
            // Flink's test, in Java's wrapping arithmetic.
            if self.current.wrapping_sub(self.last) > self.interval && self.current > self.last {
                self.last = self.current;
                due = Some(self.current);
            }
        }
        if start < rows {
            out.emit(chunk.slice(start, rows - start))?;
        }
        if let Some(w) = due {
            self.emit_watermark(out, w)?;
        }
        Ok(())
    }

    /// The periodic emission's next turn (a quiet split still emits its watermark on time),
    /// or the moment a quiet split becomes idle.
    fn on_input_active(&mut self) {
        if self.idle_timeout > 0 {
            self.last_row = self.clock.now_nanos().div_euclid(NANOS_PER_MILLI);
        }
    }

    fn next_processing_time(&self) -> Option<i64> {
        let periodic =
            (self.periodic && self.current > self.last).then(|| self.last_periodic + self.interval);
        let idle = (self.idle_timeout > 0 && !self.idle && self.current != i64::MAX)
            .then(|| self.last_row + self.idle_timeout);
        periodic.into_iter().chain(idle).min()
    }

    fn on_processing_time(&mut self, now: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        self.periodic(out)?;
        if self.idle_timeout > 0 && !self.idle && now - self.last_row >= self.idle_timeout {
            self.idle = true;
            self.emit_status(out, WatermarkStatus::Idle)?;
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        if watermark == i64::MAX && self.current != i64::MAX {
            self.current = i64::MAX;
            self.emit_watermark(out, watermark)?;
        }
        Ok(())
    }

    /// `current`, `last`, and whether the split is idle.
    fn snapshot_instance(&self) -> Option<Vec<u8>> {
        let mut out = vec![INSTANCE_STATE_VERSION];
        put_i64(&mut out, self.current);
        put_i64(&mut out, self.last);
        out.push(u8::from(self.idle));
        Some(out)
    }

    /// A split's chain gets back its own part alone. Given several, the generator takes the
    /// smallest `current` and `last` of them and is idle only if all were: it never emits a
    /// watermark that one of them had not reached (which could make that split's rows late).
    /// No part leaves it as new. The clock readings restart at the clock, and a member of
    /// an alignment group reports the restored watermark (or leaves the group, idle).
    fn restore_instance(&mut self, parts: &[&[u8]]) -> Result<(), ExecError> {
        let mut restored: Option<(i64, i64, bool)> = None;
        for part in parts {
            let mut input = instance_part(part)?;
            let (current, last) = (input.i64()?, input.i64()?);
            let idle = match input.u8()? {
                0 => false,
                1 => true,
                other => {
                    return Err(ExecError::Internal(format!(
                        "an idle flag of {other} in a watermark generator's state"
                    )));
                }
            };
            finished(&input)?;
            restored = Some(match restored {
                None => (current, last, idle),
                Some((c, l, i)) => (c.min(current), l.min(last), i && idle),
            });
        }
        let Some((current, last, idle)) = restored else {
            return Ok(());
        };
        (self.current, self.last, self.idle) = (current, last, idle);
        let now = self.clock.now_nanos().div_euclid(NANOS_PER_MILLI);
        (self.last_row, self.last_periodic) = (now, now);
        if let Some(member) = &self.alignment {
            if idle {
                member.leave();
            } else if last > 0 {
                member.report(last);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::exec::test_harness::ScriptRng;
    use crate::exec::test_harness::{Recorder, chunk, schema};
    use crate::types::{DataType, TypeKind};

    const START: i64 = 1_700_000_000_000 * NANOS_PER_MILLI;

    fn table() -> crate::types::Schema {
        schema(&[("id", TypeKind::Int), ("ts", TypeKind::Timestamp(3))])
    }

    /// `WATERMARK FOR ts AS ts`, at the given interval, on a manual clock.
    fn assigner(interval: i64) -> (WatermarkAssignerOperator, Arc<ManualClock>) {
        let clock = ManualClock::new(START);
        let mut ctx = EvalContext::for_tests(0);
        ctx.clock = clock.clone();
        let ts = ScalarExpr::Column {
            index: 1,
            data_type: DataType::nullable(TypeKind::Timestamp(3)),
        };
        let emission = WatermarkEmission {
            interval,
            on_event: false,
            idle_timeout: 0,
            exact: false,
        };
        (WatermarkAssignerOperator::new(1, ts, emission, ctx), clock)
    }

    /// Rows mostly in time order, some behind, and processing times reached: a split idle
    /// for a second goes idle.
    fn random_script(seed: u64) -> String {
        let mut rng = ScriptRng::new(seed);
        let mut next = |n: u64| rng.next(n);
        let (mut now, mut lines) = (0u64, Vec::new());
        let start = START / NANOS_PER_MILLI;
        for i in 0..40 {
            match next(8) {
                0 => lines.push(format!("PT {}", start + 1_000 * next(2) as i64)),
                1 => lines.push("--".into()),
                _ => {
                    now += next(400);
                    let at = now.saturating_sub(if next(4) == 0 { next(1_000) } else { 0 });
                    lines.push(format!(
                        "+I {i} | 1970-01-01 00:00:{:02}.{:03}",
                        at / 1000 % 60,
                        at % 1000
                    ));
                }
            }
        }
        lines.join("\n")
    }

    #[test]
    fn restored_equals_uninterrupted() {
        for (interval, idle_timeout) in [(0, 0), (0, 1_000), (300, 1_000)] {
            let clock = ManualClock::new(START);
            let build = || {
                let (op, _) = assigner(0);
                let mut ctx = EvalContext::for_tests(0);
                ctx.clock = clock.clone();
                let emission = WatermarkEmission {
                    interval,
                    on_event: false,
                    idle_timeout,
                    exact: false,
                };
                Box::new(WatermarkAssignerOperator::new(
                    op.rowtime,
                    op.watermark,
                    emission,
                    ctx,
                )) as Box<dyn Operator>
            };
            let check = crate::exec::test_harness::RestoreCheck {
                build: &build,
                inputs: &[&table()],
                output: &table(),
                keys: None,
                exact_order: true,
            };
            for seed in 0..4 {
                check.check(&random_script(seed));
            }
        }
    }

    /// Two parts given to one generator: the smaller watermark, idle only if both were.
    #[test]
    fn of_several_parts_the_smallest_watermark() {
        let (mut a, _) = assigner(0);
        run(&mut a, "+I 1 | 1970-01-01 00:00:05");
        let (mut b, _) = assigner(0);
        run(&mut b, "+I 1 | 1970-01-01 00:00:03");
        let parts = [
            a.snapshot_instance().unwrap(),
            b.snapshot_instance().unwrap(),
        ];
        let (mut restored, _) = assigner(0);
        restored.restore_instance(&[&parts[0], &parts[1]]).unwrap();
        assert_eq!((restored.current, restored.last), (3_000, 3_000));
        assert_eq!(
            run(&mut restored, "+I 2 | 1970-01-01 00:00:04"),
            "+I 2 | 1970-01-01 00:00:04.000\nWM 4000"
        );
    }

    #[test]
    fn corrupt_state_is_an_error() {
        let (mut op, _) = assigner(0);
        run(&mut op, "+I 1 | 1970-01-01 00:00:05");
        let part = op.snapshot_instance().unwrap();
        let build = || Box::new(assigner(0).0) as Box<dyn Operator>;
        crate::exec::test_harness::check_corrupt_state_fails(&build, &[], Some(&part));
        let mut bad_flag = part.clone();
        *bad_flag.last_mut().unwrap() = 2;
        assert!(assigner(0).0.restore_instance(&[&bad_flag]).is_err());
    }

    fn run(op: &mut WatermarkAssignerOperator, rows: &str) -> String {
        let mut out = Recorder::new(&table());
        op.process(0, chunk(&table(), rows), &mut out).unwrap();
        out.take()
    }

    /// Interval 0 emits whenever the watermark advances. A row behind the watermark emitted
    /// before it sees that watermark first, as in Flink; rows ahead of it need no cut.
    #[test]
    fn interval_zero_puts_each_watermark_before_the_rows_it_makes_late() {
        let (mut op, _) = assigner(0);
        let out = run(
            &mut op,
            "+I 1 | 1970-01-01 00:00:05\n+I 2 | 1970-01-01 00:00:03\n+I 3 | 1970-01-01 00:00:06\n+I 4 | 1970-01-01 00:00:07",
        );
        assert_eq!(
            out,
            "+I 1 | 1970-01-01 00:00:05.000\nWM 5000\n+I 2 | 1970-01-01 00:00:03.000\n+I 3 | 1970-01-01 00:00:06.000\n+I 4 | 1970-01-01 00:00:07.000\nWM 7000"
        );
        // A row equal to the watermark also follows it (its window may have closed).
        let out = run(
            &mut op,
            "+I 5 | 1970-01-01 00:00:08\n+I 6 | 1970-01-01 00:00:08",
        );
        assert_eq!(
            out,
            "+I 5 | 1970-01-01 00:00:08.000\nWM 8000\n+I 6 | 1970-01-01 00:00:08.000"
        );
    }

    /// Above 0, a watermark is emitted at once only when it passed the last one by more than
    /// the interval; otherwise it waits for the clock.
    #[test]
    fn an_interval_emits_eagerly_past_it_and_periodically_on_the_clock() {
        let (mut op, clock) = assigner(200);
        assert_eq!(
            run(&mut op, "+I 1 | 1970-01-01 00:00:00.100"),
            "+I 1 | 1970-01-01 00:00:00.100"
        );
        assert_eq!(
            run(&mut op, "+I 2 | 1970-01-01 00:00:00.250"),
            "+I 2 | 1970-01-01 00:00:00.250\nWM 250"
        );
        assert_eq!(
            run(&mut op, "+I 3 | 1970-01-01 00:00:00.400"),
            "+I 3 | 1970-01-01 00:00:00.400"
        );
        clock.set(START + 200 * NANOS_PER_MILLI);
        assert_eq!(
            run(&mut op, "+I 4 | 1970-01-01 00:00:00.300"),
            "WM 400\n+I 4 | 1970-01-01 00:00:00.300"
        );
    }

    /// A split that falls quiet still emits its pending watermark when the interval is up:
    /// the runtime calls back at `next_processing_time` without a row arriving.
    #[test]
    fn a_quiet_split_emits_its_watermark_on_the_clock() {
        let (mut op, clock) = assigner(200);
        assert_eq!(op.next_processing_time(), None);
        run(&mut op, "+I 1 | 1970-01-01 00:00:00.100");
        let at = op.next_processing_time().unwrap();
        assert_eq!(at, START / NANOS_PER_MILLI + 200);
        clock.set(at * NANOS_PER_MILLI);
        let mut out = Recorder::new(&table());
        op.on_processing_time(at, &mut out).unwrap();
        assert_eq!(out.take(), "WM 100");
        // Nothing pending: no further call is wanted.
        assert_eq!(op.next_processing_time(), None);
    }

    fn assigner_with(emission: WatermarkEmission) -> (WatermarkAssignerOperator, Arc<ManualClock>) {
        let (op, clock) = assigner(0);
        let mut ctx = EvalContext::for_tests(0);
        ctx.clock = clock.clone();
        (
            WatermarkAssignerOperator::new(op.rowtime, op.watermark, emission, ctx),
            clock,
        )
    }

    /// `scan.watermark.emit.strategy` = `on-event` emits after each advancing row whatever
    /// the interval, and nothing on the clock.
    #[test]
    fn on_event_emits_per_row_and_not_on_the_clock() {
        let (mut op, clock) = assigner_with(WatermarkEmission {
            interval: 200,
            on_event: true,
            idle_timeout: 0,
            exact: false,
        });
        assert_eq!(
            run(
                &mut op,
                "+I 1 | 1970-01-01 00:00:00.100\n+I 2 | 1970-01-01 00:00:00.050"
            ),
            "+I 1 | 1970-01-01 00:00:00.100\nWM 100\n+I 2 | 1970-01-01 00:00:00.050"
        );
        clock.set(START + 1_000 * NANOS_PER_MILLI);
        assert_eq!(op.next_processing_time(), None);
    }

    /// A split without rows for the idle timeout says so; its next row makes it active
    /// again, before the row.
    #[test]
    fn a_silent_split_goes_idle_and_its_next_row_wakes_it() {
        let (mut op, clock) = assigner_with(WatermarkEmission {
            interval: 0,
            on_event: false,
            idle_timeout: 1_000,
            exact: false,
        });
        run(&mut op, "+I 1 | 1970-01-01 00:00:01");
        let at = op.next_processing_time().unwrap();
        assert_eq!(at, START / NANOS_PER_MILLI + 1_000);
        let mut out = Recorder::new(&table());
        op.on_processing_time(at - 1, &mut out).unwrap();
        assert_eq!(out.take(), "");
        clock.set(at * NANOS_PER_MILLI);
        op.on_processing_time(at, &mut out).unwrap();
        assert_eq!(out.take(), "IDLE");
        assert_eq!(op.next_processing_time(), None);
        assert_eq!(
            run(&mut op, "+I 2 | 1970-01-01 00:00:02"),
            "ACTIVE\n+I 2 | 1970-01-01 00:00:02.000\nWM 2000"
        );
    }

    /// Flink starts the watermark at 0: one before 1970 is never emitted, and the final
    /// watermark of a bounded input passes once.
    #[test]
    fn watermarks_before_1970_wait_for_the_final_one() {
        let (mut op, _) = assigner(0);
        assert_eq!(
            run(&mut op, "+I 1 | 1969-12-31 23:59:59"),
            "+I 1 | 1969-12-31 23:59:59.000"
        );
        let mut out = Recorder::new(&table());
        op.on_watermark(i64::MAX, &mut out).unwrap();
        op.on_watermark(i64::MAX, &mut out).unwrap();
        op.on_watermark(5, &mut out).unwrap();
        assert_eq!(out.take(), format!("WM {}", i64::MAX));
    }

    #[test]
    fn a_null_rowtime_fails_with_flinks_message() {
        let (mut op, _) = assigner(0);
        let mut out = Recorder::new(&table());
        let e = op
            .process(0, chunk(&table(), "+I 1 | NULL"), &mut out)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "RowTime field should not be null, please convert it to a non-null long value."
        );
    }
}
