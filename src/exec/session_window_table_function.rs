//! `SessionWindowTableFunctionOperator`: the SESSION windowing TVF on its own (or under a
//! window Top-N or deduplication), as Flink's unaligned window table function runs it: rows
//! are kept per partition key in sessions — a row opens `[ts, ts + gap)`, and sessions it
//! overlaps merge into one — until the watermark passes a session's last millisecond; then
//! each of its rows comes out (in arrival order) with `window_start`, `window_end` (wall
//! clock in the session zone for a TIMESTAMP_LTZ time column) and `window_time` appended.
//! A row whose session (once merged) has closed already is late: dropped and counted. Sessions
//! close in the order of their ends. The end of input closes them all.

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::types::TimestampNanosecondType;
use arrow_array::{ArrayRef, PrimitiveArray};
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;

use super::state::key::{KeyEncoder, key_bytes, optional_encoder, whole_row_converter};
use super::state::key_table::KeyTable;
use super::window_assigner::WindowClock;
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
    late: u64,
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
            late: 0,
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
                self.late += 1;
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
        self.late
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
