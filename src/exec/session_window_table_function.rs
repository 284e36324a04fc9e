//! `SessionWindowTableFunctionOperator`: the SESSION windowing TVF on its own (or under a
//! window Top-N or deduplication), as Flink's unaligned window table function runs it: rows
//! are kept per partition key in sessions — a row opens `[ts, ts + gap)`, and sessions it
//! overlaps merge into one — until the watermark passes a session's last millisecond; then
//! each of its rows comes out (in arrival order) with `window_start`, `window_end` (wall
//! clock in the session zone for a TIMESTAMP_LTZ time column) and `window_time` appended.
//! A row whose session (once merged) has closed already is late: dropped and counted. Sessions
//! close in the order of their ends. The end of input closes them all.
//!
//! State is snapshotted per key group: per key its sessions, each with its rows' arrival
//! numbers (which order a session's rows) and bytes; the arrival counter is restored to one
//! past the largest restored, so later rows come after them. The late-row count is instance
//! state.

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::types::TimestampNanosecondType;
use arrow_array::{ArrayRef, PrimitiveArray};
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;

use super::aggregate::{StateReader, put_bytes, put_i64, put_u32};
use super::state::instance::{LateRows, restore_late_rows, snapshot_late_rows};
use super::state::key::{KeyEncoder, key_bytes, optional_encoder, whole_row_converter};
use super::state::key_group::GroupBuffers;
use super::state::key_group::KeyGroupRange;
use super::state::key_table::KeyTable;
use super::window_assigner::{WindowClock, restored_window_time};
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, OperatorContext, Output};
use crate::exec::time_column::rowtime_column;
use crate::types::chunk::{StreamChunk, batch_with_rows};
use crate::types::time::SessionZone;

const NANOS_PER_MILLI: i64 = 1_000_000;

/// An open session: `[start, end)` in window time, and its rows (arrival number, bytes).
struct Session {
    start: i64,
    end: i64,
    rows: Vec<(u64, Box<[u8]>)>,
}

pub struct SessionWindowTableFunctionOperator {
    gap: i64,
    time_column: usize,
    clock: WindowClock,
    encoder: Option<KeyEncoder>,
    rows: RowConverter,
    output: SchemaRef,
    keys: KeyTable<Vec<Session>>,
    /// Open sessions by the instant they close: (last millisecond, key, start).
    closing: BTreeSet<(i64, u32, i64)>,
    arrivals: u64,
    watermark: i64,
    late: LateRows,
    key_groups: KeyGroupRange,
}

impl SessionWindowTableFunctionOperator {
    /// Sessions of `gap` ms over the time column `time_column` of `input`, per the values
    /// of `partition`; `output`: the input's columns, then the three window columns.
    pub fn new(
        input: &SchemaRef,
        output: SchemaRef,
        partition: Vec<usize>,
        time_column: usize,
        gap: i64,
        time_type: &crate::types::DataType,
        zone: SessionZone,
    ) -> Result<Self, ExecError> {
        Ok(SessionWindowTableFunctionOperator {
            gap,
            time_column,
            clock: WindowClock::new(time_type, zone),
            encoder: optional_encoder(input, partition)?,
            rows: whole_row_converter(input)?,
            output,
            keys: KeyTable::new(OperatorContext::default().max_parallelism),
            closing: BTreeSet::new(),
            arrivals: 0,
            watermark: i64::MIN,
            late: LateRows::default(),
            key_groups: OperatorContext::default().key_groups,
        })
    }

    /// The instant a session ending at `end` (window time) closes: its last millisecond.
    fn closes_at(&self, end: i64) -> i64 {
        self.clock.to_instant(end - 1)
    }

    /// Adds a row at window time `ts` to `key`'s sessions, merging those it touches (Flink's
    /// `TimeWindow.intersects`: windows that only meet merge too); `false`, and nothing
    /// changes, when the merged session has closed already (the row is late).
    fn add(&mut self, key: u32, ts: i64, row: Box<[u8]>) -> bool {
        let (mut start, mut end) = (ts, ts.saturating_add(self.gap));
        let touches = |s: &Session, start: i64, end: i64| s.start <= end && start <= s.end;
        for s in self.keys.value_mut(key).iter() {
            if touches(s, ts, ts.saturating_add(self.gap)) {
                start = start.min(s.start);
                end = end.max(s.end);
            }
        }
        if self.closes_at(end) <= self.watermark {
            return false;
        }
        let arrival = self.arrivals;
        self.arrivals += 1;
        let mut rows = vec![(arrival, row)];
        let sessions = std::mem::take(self.keys.value_mut(key));
        let mut kept = Vec::with_capacity(sessions.len() + 1);
        for s in sessions {
            if touches(&s, ts, ts.saturating_add(self.gap)) {
                self.closing.remove(&(self.closes_at(s.end), key, s.start));
                rows.extend(s.rows);
            } else {
                kept.push(s);
            }
        }
        rows.sort_unstable_by_key(|(a, _)| *a);
        self.closing.insert((self.closes_at(end), key, start));
        kept.push(Session { start, end, rows });
        *self.keys.value_mut(key) = kept;
        true
    }

    /// Emits every session closing at or before `watermark`.
    fn close(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        let mut rows: Vec<Box<[u8]>> = Vec::new();
        let (mut starts, mut ends, mut times) = (Vec::new(), Vec::new(), Vec::new());
        while let Some(&(at, key, start)) = self.closing.first() {
            if at > watermark {
                break;
            }
            self.closing.pop_first();
            let sessions = self.keys.value_mut(key);
            let Some(i) = sessions.iter().position(|s| s.start == start) else {
                continue;
            };
            let session = sessions.swap_remove(i);
            if sessions.is_empty() {
                self.keys.remove(key);
            }
            for (_, row) in session.rows {
                rows.push(row);
                starts.push(session.start.saturating_mul(NANOS_PER_MILLI));
                ends.push(session.end.saturating_mul(NANOS_PER_MILLI));
                times.push(at.saturating_mul(NANOS_PER_MILLI));
            }
        }
        if rows.is_empty() {
            return Ok(());
        }
        let parser = self.rows.parser();
        let mut columns: Vec<ArrayRef> = self
            .rows
            .convert_rows(rows.iter().map(|r| parser.parse(r)))?;
        let width = columns.len();
        for (i, values) in [starts, ends, times].into_iter().enumerate() {
            let field = self.output.field(width + i);
            columns.push(Arc::new(
                PrimitiveArray::<TimestampNanosecondType>::from(values)
                    .with_data_type(field.data_type().clone()),
            ));
        }
        out.emit(StreamChunk::inserts(batch_with_rows(
            self.output.clone(),
            columns,
            rows.len(),
        )?))
    }
}

impl Operator for SessionWindowTableFunctionOperator {
    fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.keys.set_max_parallelism(ctx.max_parallelism);
        self.key_groups = ctx.key_groups;
        self.late.open(ctx);
        Ok(())
    }

    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        _out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        if !chunk.is_insert_only() {
            return Err(ExecError::Internal(
                "a window table function takes inserts only".into(),
            ));
        }
        let batch = &chunk.batch;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let times = rowtime_column(batch, self.time_column)?.clone();
        let keys = self.encoder.as_ref().map(|e| e.encode(batch)).transpose()?;
        let rows = self.rows.convert_columns(batch.columns())?;
        for i in 0..batch.num_rows() {
            let ts = self
                .clock
                .to_window_time(times.value(i).div_euclid(NANOS_PER_MILLI));
            let (key, _) = self.keys.intern(key_bytes(keys.as_ref(), i));
            if !self.add(key, ts, rows.row(i).as_ref().into()) {
                self.late.add();
                if self.keys.value(key).is_empty() {
                    self.keys.remove(key);
                }
            }
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        self.watermark = self.watermark.max(watermark);
        self.close(watermark, out)?;
        out.emit_watermark(watermark)
    }

    fn finish(&mut self, out: &mut dyn Output) -> Result<(), ExecError> {
        self.close(i64::MAX, out)
    }

    fn late_rows(&self) -> u64 {
        self.late.count()
    }

    /// Per key group: for each key its bytes and count of sessions, then per session its
    /// start, end and count of rows, and per row its arrival number and bytes.
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        let mut groups = GroupBuffers::default();
        for (_, key) in self.keys.iter() {
            let out = groups.group(key.key_group());
            put_bytes(out, key.bytes);
            put_u32(out, key.value.len() as u32);
            for session in key.value {
                put_i64(out, session.start);
                put_i64(out, session.end);
                put_u32(out, session.rows.len() as u32);
                for (arrival, row) in &session.rows {
                    put_i64(out, *arrival as i64);
                    put_bytes(out, row);
                }
            }
        }
        groups.into_snapshot()
    }

    fn restore(&mut self, key_group: u32, state: &[u8]) -> Result<(), ExecError> {
        self.key_groups.check_owned(key_group)?;
        let mut input = StateReader::new(state);
        while !input.is_empty() {
            let bytes = input.bytes()?;
            let mut sessions = Vec::new();
            for _ in 0..input.u32()? {
                let start = restored_window_time(input.i64()?)?;
                let end = restored_window_time(input.i64()?)?;
                let mut rows = Vec::new();
                for _ in 0..input.u32()? {
                    let arrival = u64::try_from(input.i64()?).map_err(|_| {
                        ExecError::Internal("a negative arrival number in a snapshot".into())
                    })?;
                    self.arrivals = self.arrivals.max(arrival.saturating_add(1));
                    rows.push((arrival, input.bytes()?.into()));
                }
                sessions.push(Session { start, end, rows });
            }
            let (key, new) = self.keys.intern(bytes);
            if !new {
                return Err(ExecError::Internal(
                    "a session window's snapshot holds a key twice".into(),
                ));
            }
            for session in &sessions {
                let at = self.closes_at(session.end);
                self.closing.insert((at, key, session.start));
            }
            *self.keys.value_mut(key) = sessions;
        }
        Ok(())
    }

    /// The late-row count (see `state::instance`).
    fn snapshot_instance(&self) -> Option<Vec<u8>> {
        Some(snapshot_late_rows(&self.late))
    }

    fn restore_instance(&mut self, parts: &[&[u8]]) -> Result<(), ExecError> {
        restore_late_rows(&mut self.late, parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::test_harness::{ScriptRng, clock_text};
    use crate::exec::test_harness::{run_script, schema};
    use crate::types::{DataType, Schema, TypeKind};

    fn input() -> Schema {
        schema(&[
            ("k", TypeKind::VarChar(3)),
            ("v", TypeKind::Int),
            ("ts", TypeKind::Timestamp(3)),
        ])
    }

    fn output() -> Schema {
        schema(&[
            ("k", TypeKind::VarChar(3)),
            ("v", TypeKind::Int),
            ("ts", TypeKind::Timestamp(3)),
            ("window_start", TypeKind::Timestamp(3)),
            ("window_end", TypeKind::Timestamp(3)),
            ("window_time", TypeKind::Timestamp(3)),
        ])
    }

    /// Sessions of 5 minutes per `k`, not yet opened.
    fn unopened() -> SessionWindowTableFunctionOperator {
        let runtime = crate::types::chunk::runtime_schema;
        SessionWindowTableFunctionOperator::new(
            &runtime(&input()),
            runtime(&output()),
            vec![0],
            2,
            300_000,
            &DataType::nullable(TypeKind::Timestamp(3)),
            SessionZone::utc(),
        )
        .unwrap()
    }

    /// Rows of four keys over an hour and a half, the watermark a minute behind, some rows
    /// minutes later than it (late when their session, once merged, has closed).
    fn random_script(seed: u64) -> String {
        let mut rng = ScriptRng::new(seed);
        let mut next = |n: u64| rng.next(n);
        let time = |seconds: u64| clock_text("2024-01-01", 10, seconds);
        let (mut now, mut watermark, mut lines) = (0u64, 0u64, Vec::new());
        for i in 0..40 {
            if next(5) == 0 && now > watermark + 60 {
                watermark = now - 60;
                lines.push(format!("WM {}", time(watermark)));
                continue;
            }
            now += next(240);
            let at = now.saturating_sub(if next(4) == 0 { next(600) } else { 0 });
            lines.push(format!("+I k{} | {i} | {}", next(4), time(at)));
        }
        lines.join("\n")
    }

    #[test]
    fn restored_equals_uninterrupted() {
        let build = || Box::new(unopened()) as Box<dyn Operator>;
        let check = crate::exec::test_harness::RestoreCheck {
            build: &build,
            inputs: &[&input()],
            output: &output(),
            keys: Some(&[vec![0]]),
            exact_order: false,
        };
        for seed in 0..4 {
            check.check(&random_script(seed));
        }
    }

    /// A restored instance numbers its new rows after the restored ones: a session merging
    /// both lists them in arrival order.
    #[test]
    fn rows_arriving_after_a_restore_follow_the_restored_ones() {
        let mut before = unopened();
        before.open(&OperatorContext::default()).unwrap();
        let head = "+I a | 1 | 2024-01-01 10:04:00\n+I a | 2 | 2024-01-01 10:00:00";
        run_script(&mut before, &input(), &output(), head).unwrap();
        let mut after = unopened();
        after.open(&OperatorContext::default()).unwrap();
        for (group, state) in before.snapshot() {
            after.restore(group, &state).unwrap();
        }
        let tail = "+I a | 3 | 2024-01-01 10:02:00\nWM MAX";
        let values: Vec<String> = run_script(&mut after, &input(), &output(), tail)
            .unwrap()
            .lines()
            .filter_map(|l| l.split(" | ").nth(1).map(String::from))
            .collect();
        assert_eq!(values, ["1", "2", "3"]);
    }

    #[test]
    fn corrupt_state_is_an_error() {
        let mut op = unopened();
        op.open(&OperatorContext::default()).unwrap();
        let head = random_script(2)
            .lines()
            .take(12)
            .collect::<Vec<_>>()
            .join("\n");
        run_script(&mut op, &input(), &output(), &head).unwrap();
        let keyed = op.snapshot();
        assert!(!keyed.is_empty());
        let build = || Box::new(unopened()) as Box<dyn Operator>;
        crate::exec::test_harness::check_corrupt_state_fails(
            &build,
            &keyed,
            op.snapshot_instance().as_deref(),
        );
    }

    /// The oracle's rows and watermarks (`ts - 1 s`, one per row): Flink 2.3 printed these
    /// sessions, b's row of 10:04 dropped as late.
    #[test]
    fn rows_come_out_with_their_session_when_it_closes() {
        let runtime = crate::types::chunk::runtime_schema;
        let mut op = SessionWindowTableFunctionOperator::new(
            &runtime(&input()),
            runtime(&output()),
            vec![0],
            2,
            300_000,
            &DataType::nullable(TypeKind::Timestamp(3)),
            SessionZone::utc(),
        )
        .unwrap();
        op.open(&OperatorContext::default()).unwrap();
        let script = "
            +I a | 1 | 2024-01-01 10:00:00
            +I b | 2 | 2024-01-01 10:01:00
            +I a | 3 | 2024-01-01 10:03:00
            +I a | 4 | 2024-01-01 10:10:00
            WM 2024-01-01 10:09:59
            +I b | 5 | 2024-01-01 10:04:00
            +I b | 6 | 2024-01-01 10:12:00
            +I a | 7 | 2024-01-01 10:14:30
            WM MAX";
        assert_eq!(
            run_script(&mut op, &input(), &output(), script).unwrap(),
            "+I b | 2 | 2024-01-01 10:01:00.000 | 2024-01-01 10:01:00.000 | 2024-01-01 10:06:00.000 | 2024-01-01 10:05:59.999\n\
             +I a | 1 | 2024-01-01 10:00:00.000 | 2024-01-01 10:00:00.000 | 2024-01-01 10:08:00.000 | 2024-01-01 10:07:59.999\n\
             +I a | 3 | 2024-01-01 10:03:00.000 | 2024-01-01 10:00:00.000 | 2024-01-01 10:08:00.000 | 2024-01-01 10:07:59.999\n\
             WM 1704103799000\n\
             +I b | 6 | 2024-01-01 10:12:00.000 | 2024-01-01 10:12:00.000 | 2024-01-01 10:17:00.000 | 2024-01-01 10:16:59.999\n\
             +I a | 4 | 2024-01-01 10:10:00.000 | 2024-01-01 10:10:00.000 | 2024-01-01 10:19:30.000 | 2024-01-01 10:19:29.999\n\
             +I a | 7 | 2024-01-01 10:14:30.000 | 2024-01-01 10:10:00.000 | 2024-01-01 10:19:30.000 | 2024-01-01 10:19:29.999\n\
             WM 9223372036854775807"
        );
        assert_eq!(op.late_rows(), 1);
    }

    #[test]
    fn a_row_between_two_sessions_merges_them() {
        let runtime = crate::types::chunk::runtime_schema;
        let mut op = SessionWindowTableFunctionOperator::new(
            &runtime(&input()),
            runtime(&output()),
            vec![],
            2,
            60_000,
            &DataType::nullable(TypeKind::Timestamp(3)),
            SessionZone::utc(),
        )
        .unwrap();
        op.open(&OperatorContext::default()).unwrap();
        let script = "
            +I a | 1 | 2024-01-01 10:00:00
            +I b | 2 | 2024-01-01 10:01:30
            +I c | 3 | 2024-01-01 10:00:50
            END";
        assert_eq!(
            run_script(&mut op, &input(), &output(), script).unwrap(),
            "+I a | 1 | 2024-01-01 10:00:00.000 | 2024-01-01 10:00:00.000 | 2024-01-01 10:02:30.000 | 2024-01-01 10:02:29.999\n\
             +I b | 2 | 2024-01-01 10:01:30.000 | 2024-01-01 10:00:00.000 | 2024-01-01 10:02:30.000 | 2024-01-01 10:02:29.999\n\
             +I c | 3 | 2024-01-01 10:00:50.000 | 2024-01-01 10:00:00.000 | 2024-01-01 10:02:30.000 | 2024-01-01 10:02:29.999"
        );
    }
}
