//! `TemporalSortOperator`: `ORDER BY` a time attribute in streaming mode, as Flink's
//! `RowTimeSortOperator` and `ProcTimeSortOperator` run it, on one instance:
//!
//! - rowtime: a row at or behind the watermark is dropped (and counted); the others wait by
//!   time, and a watermark emits every row at or before it in time order, ties sorted by the
//!   other keys (stably: then in arrival order);
//! - proctime: rows wait for the next processing-time tick, then leave sorted by the other
//!   keys (stably).
//!
//! At the end of input (batch mode, or a bounded stream) every waiting row leaves in the same
//! order. Rows wait as `arrow-row` bytes with their sort key's bytes.
//!
//! Its rows belong to no key (it runs on one instance, after a single exchange), so the
//! waiting rows and the late-row count are instance state. Should it ever be restored at
//! more instances, each takes the parts `LateRows` assigns it, so no row is emitted twice.

use std::collections::BTreeMap;

use arrow_array::{Array, RecordBatch};
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;

use super::aggregate::{put_bytes, put_i64, put_u32};
use super::state::instance::{INSTANCE_STATE_VERSION, LateRows, finished, instance_part};
use super::state::key::{order_converter, whole_row_converter};
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, OperatorContext, Output};
use crate::exec::time_column::timestamp_column;
use crate::plan::logical::OrderKey;
use crate::types::chunk::StreamChunk;

/// A waiting row: its sort key's bytes and its own.
type Waiting = (Box<[u8]>, Box<[u8]>);

pub struct TemporalSortOperator {
    schema: SchemaRef,
    time_column: usize,
    rowtime: bool,
    /// The sort key: all the keys on rowtime, those after the time attribute on proctime.
    keys: Option<RowConverter>,
    order: Vec<OrderKey>,
    rows: RowConverter,
    /// By event time (milliseconds), in arrival order; proctime rows all at 0.
    waiting: BTreeMap<i64, Vec<Waiting>>,
    watermark: i64,
    late: LateRows,
    ctx: OperatorContext,
}

impl TemporalSortOperator {
    /// `order`: the time attribute first (ascending), then the other keys; `rowtime`: the
    /// time attribute is a rowtime (else a proctime).
    pub fn new(schema: SchemaRef, order: Vec<OrderKey>, rowtime: bool) -> Result<Self, ExecError> {
        let time_column = order
            .first()
            .ok_or_else(|| ExecError::Internal("a temporal sort has no time key".into()))?
            .column;
        let sorted = if rowtime { &order[..] } else { &order[1..] };
        Ok(TemporalSortOperator {
            keys: if sorted.is_empty() {
                None
            } else {
                Some(order_converter(&schema, sorted)?)
            },
            rows: whole_row_converter(&schema)?,
            schema,
            time_column,
            rowtime,
            order,
            waiting: BTreeMap::new(),
            watermark: i64::MIN,
            late: LateRows::default(),
            ctx: OperatorContext::default(),
        })
    }

    /// Emits `rows` in the order of their key bytes (stably).
    fn emit(&self, mut rows: Vec<Waiting>, out: &mut dyn Output) -> Result<(), ExecError> {
        if rows.is_empty() {
            return Ok(());
        }
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        let parser = self.rows.parser();
        let columns = self
            .rows
            .convert_rows(rows.iter().map(|(_, r)| parser.parse(r)))?;
        out.emit(StreamChunk::inserts(RecordBatch::try_new(
            self.schema.clone(),
            columns,
        )?))
    }

    /// Every waiting row at or before `time`, in time order.
    fn take_until(&mut self, time: i64) -> Vec<Waiting> {
        let rest = match time.checked_add(1) {
            Some(after) => self.waiting.split_off(&after),
            None => BTreeMap::new(),
        };
        std::mem::replace(&mut self.waiting, rest)
            .into_values()
            .flatten()
            .collect()
    }
}

impl Operator for TemporalSortOperator {
    fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.ctx = ctx.clone();
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
                "a temporal sort takes inserts only".into(),
            ));
        }
        let batch = &chunk.batch;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let rows = self.rows.convert_columns(batch.columns())?;
        // The sort key of a row: all keys on rowtime (the time ties), the others on proctime.
        let columns: Vec<_> = self
            .order
            .iter()
            .skip(usize::from(!self.rowtime))
            .map(|o| batch.column(o.column).clone())
            .collect();
        let keys = self
            .keys
            .as_ref()
            .map(|c| c.convert_columns(&columns))
            .transpose()?;
        let times = timestamp_column(batch, self.time_column, "a temporal sort's time")?;
        for i in 0..batch.num_rows() {
            // A NULL time (batch mode) sorts first.
            let time = if !self.rowtime {
                0
            } else if times.is_valid(i) {
                times.value(i).div_euclid(1_000_000)
            } else {
                i64::MIN
            };
            if self.rowtime && time <= self.watermark {
                self.late.add();
                continue;
            }
            let key: Box<[u8]> = keys
                .as_ref()
                .map_or(Box::default(), |k| k.row(i).as_ref().into());
            self.waiting
                .entry(time)
                .or_default()
                .push((key, rows.row(i).as_ref().into()));
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        if self.rowtime && watermark > self.watermark {
            self.watermark = watermark;
            let rows = self.take_until(watermark);
            self.emit(rows, out)?;
        }
        out.emit_watermark(watermark)
    }

    fn next_processing_time(&self) -> Option<i64> {
        (!self.rowtime && !self.waiting.is_empty()).then(|| self.ctx.now_millis() + 1)
    }

    fn on_processing_time(&mut self, _now: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        if self.rowtime {
            return Ok(());
        }
        let rows = self.take_until(i64::MAX);
        self.emit(rows, out)
    }

    /// The end of input: every waiting row (batch mode's sort).
    fn finish(&mut self, out: &mut dyn Output) -> Result<(), ExecError> {
        let rows = self.take_until(i64::MAX);
        self.emit(rows, out)
    }

    fn late_rows(&self) -> u64 {
        self.late.count()
    }

    /// The late-row count, the count of times rows wait at, and per time the time, the
    /// count of rows and per row (in arrival order) its sort key's bytes and its own.
    fn snapshot_instance(&self) -> Option<Vec<u8>> {
        let mut out = vec![INSTANCE_STATE_VERSION];
        self.late.write(&mut out);
        put_u32(&mut out, self.waiting.len() as u32);
        for (&time, rows) in &self.waiting {
            put_i64(&mut out, time);
            put_u32(&mut out, rows.len() as u32);
            for (key, row) in rows {
                put_bytes(&mut out, key);
                put_bytes(&mut out, row);
            }
        }
        Some(out)
    }

    /// Takes the rows and late-row counts of the parts this instance takes over (all of
    /// them on the one instance); rows of one time from several parts wait in part order.
    fn restore_instance(&mut self, parts: &[&[u8]]) -> Result<(), ExecError> {
        let mut late = LateRows::default();
        late.open(&self.ctx);
        let mut waiting: BTreeMap<i64, Vec<Waiting>> = BTreeMap::new();
        for (old, part) in parts.iter().enumerate() {
            let mut input = instance_part(part)?;
            late.read(old, &mut input)?;
            let mut rows: Vec<(i64, Waiting)> = Vec::new();
            for _ in 0..input.u32()? {
                let time = input.i64()?;
                for _ in 0..input.u32()? {
                    let key = input.bytes()?.into();
                    rows.push((time, (key, input.bytes()?.into())));
                }
            }
            finished(&input)?;
            if late.takes(old) {
                for (time, row) in rows {
                    waiting.entry(time).or_default().push(row);
                }
            }
        }
        self.late = late;
        self.waiting = waiting;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::test_harness::ScriptRng;
    use crate::exec::test_harness::{run_script, schema};
    use crate::types::TypeKind;

    fn rows() -> crate::types::Schema {
        schema(&[
            ("id", TypeKind::Int),
            ("s", TypeKind::VarChar(5)),
            ("ts", TypeKind::Timestamp(3)),
        ])
    }

    fn key(column: usize, descending: bool) -> OrderKey {
        OrderKey {
            column,
            descending,
            nulls_first: !descending,
        }
    }

    fn unopened(order: Vec<OrderKey>, rowtime: bool) -> TemporalSortOperator {
        TemporalSortOperator::new(crate::types::chunk::runtime_schema(&rows()), order, rowtime)
            .unwrap()
    }

    /// Rows over a few seconds, the watermark behind them, some rows late.
    fn random_script(seed: u64) -> String {
        let mut rng = ScriptRng::new(seed);
        let mut next = |n: u64| rng.next(n);
        let time = |ms: u64| format!("2024-01-01 10:00:{:02}.{:03}", ms / 1000, ms % 1000);
        let (mut now, mut watermark, mut lines) = (0u64, 0u64, Vec::new());
        for i in 0..40 {
            if next(5) == 0 && now > watermark + 100 {
                watermark = now - 100;
                lines.push(format!("WM {}", time(watermark)));
                continue;
            }
            now += next(500);
            let at = now.saturating_sub(if next(4) == 0 { next(600) } else { 0 });
            let s = ["a", "b", "c"][next(3) as usize];
            lines.push(format!("+I {i} | {s} | {}", time(at)));
        }
        lines.join("\n")
    }

    #[test]
    fn restored_equals_uninterrupted() {
        for order in [vec![key(2, false)], vec![key(2, false), key(1, true)]] {
            let build = || Box::new(unopened(order.clone(), true)) as Box<dyn Operator>;
            let check = crate::exec::test_harness::RestoreCheck {
                build: &build,
                inputs: &[&rows()],
                output: &rows(),
                keys: None,
                exact_order: true,
            };
            for seed in 0..4 {
                check.check(&random_script(seed));
            }
        }
    }

    /// Two parts (as if two instances had run) restored at one instance: all of their rows
    /// and late rows; at two, each takes its own.
    #[test]
    fn parts_go_to_one_instance_each() {
        let mut parts = Vec::new();
        for script in [
            "+I 1 | a | 2024-01-01 10:00:03\nWM 2024-01-01 10:00:02\n+I 2 | b | 2024-01-01 10:00:01",
            "+I 3 | c | 2024-01-01 10:00:04",
        ] {
            let mut op = unopened(vec![key(2, false)], true);
            op.open(&OperatorContext::default()).unwrap();
            run_script(&mut op, &rows(), &rows(), script).unwrap();
            parts.push(op.snapshot_instance().unwrap());
        }
        let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        let restored = |index: u32, parallelism: u32| {
            let mut op = unopened(vec![key(2, false)], true);
            let clock = std::sync::Arc::new(crate::clock::SystemClock);
            op.open(&OperatorContext::instance(index, parallelism, 128, clock))
                .unwrap();
            op.restore_instance(&parts).unwrap();
            let out = run_script(&mut op, &rows(), &rows(), "WM MAX").unwrap();
            (
                out.lines().filter(|l| l.starts_with("+I")).count(),
                op.late_rows(),
            )
        };
        assert_eq!(restored(0, 1), (2, 1));
        assert_eq!((restored(0, 2), restored(1, 2)), ((1, 1), (1, 0)));
    }

    #[test]
    fn corrupt_state_is_an_error() {
        let mut op = unopened(vec![key(2, false)], true);
        op.open(&OperatorContext::default()).unwrap();
        run_script(
            &mut op,
            &rows(),
            &rows(),
            &format!("{ROWS}\nWM 2024-01-01 10:00:01"),
        )
        .unwrap();
        let part = op.snapshot_instance().unwrap();
        let build = || Box::new(unopened(vec![key(2, false)], true)) as Box<dyn Operator>;
        crate::exec::test_harness::check_corrupt_state_fails(&build, &[], Some(&part));
    }

    fn run(order: Vec<OrderKey>, rowtime: bool, script: &str) -> String {
        let mut op =
            TemporalSortOperator::new(crate::types::chunk::runtime_schema(&rows()), order, rowtime)
                .unwrap();
        op.open(&OperatorContext::default()).unwrap();
        run_script(&mut op, &rows(), &rows(), script).unwrap()
    }

    /// The oracle's input (Flink 2.3 printed these orders).
    const ROWS: &str = "
        +I 1 | b | 2024-01-01 10:00:03
        +I 2 | a | 2024-01-01 10:00:01
        +I 3 | c | 2024-01-01 10:00:03
        +I 4 | a | 2024-01-01 10:00:02
        +I 5 | z | 2024-01-01 10:00:00
        +I 6 | y | 2024-01-01 10:00:03";

    #[test]
    fn rows_leave_in_time_order_ties_in_arrival_or_by_the_other_keys() {
        let script = format!("{ROWS}\nWM MAX");
        assert_eq!(
            run(vec![key(2, false)], true, &script),
            "+I 5 | z | 2024-01-01 10:00:00.000\n+I 2 | a | 2024-01-01 10:00:01.000\n\
             +I 4 | a | 2024-01-01 10:00:02.000\n+I 1 | b | 2024-01-01 10:00:03.000\n\
             +I 3 | c | 2024-01-01 10:00:03.000\n+I 6 | y | 2024-01-01 10:00:03.000\n\
             WM 9223372036854775807"
        );
        assert_eq!(
            run(vec![key(2, false), key(1, true)], true, &script),
            "+I 5 | z | 2024-01-01 10:00:00.000\n+I 2 | a | 2024-01-01 10:00:01.000\n\
             +I 4 | a | 2024-01-01 10:00:02.000\n+I 6 | y | 2024-01-01 10:00:03.000\n\
             +I 3 | c | 2024-01-01 10:00:03.000\n+I 1 | b | 2024-01-01 10:00:03.000\n\
             WM 9223372036854775807"
        );
    }

    #[test]
    fn a_watermark_releases_what_it_passed_and_later_rows_behind_it_are_dropped() {
        let script = "
            +I 1 | b | 2024-01-01 10:00:03
            +I 2 | a | 2024-01-01 10:00:01
            WM 2024-01-01 10:00:02
            +I 3 | c | 2024-01-01 10:00:02
            +I 4 | d | 2024-01-01 10:00:04
            WM MAX";
        let mut op = TemporalSortOperator::new(
            crate::types::chunk::runtime_schema(&rows()),
            vec![key(2, false)],
            true,
        )
        .unwrap();
        op.open(&OperatorContext::default()).unwrap();
        assert_eq!(
            run_script(&mut op, &rows(), &rows(), script).unwrap(),
            "+I 2 | a | 2024-01-01 10:00:01.000\nWM 1704103202000\n\
             +I 1 | b | 2024-01-01 10:00:03.000\n+I 4 | d | 2024-01-01 10:00:04.000\n\
             WM 9223372036854775807"
        );
        assert_eq!(op.late_rows(), 1);
    }

    #[test]
    fn proctime_rows_leave_at_the_next_tick_sorted_by_the_other_keys() {
        assert_eq!(
            run(
                vec![key(2, false), key(1, false)],
                false,
                &format!("{ROWS}\nPT 5")
            ),
            "+I 2 | a | 2024-01-01 10:00:01.000\n+I 4 | a | 2024-01-01 10:00:02.000\n\
             +I 1 | b | 2024-01-01 10:00:03.000\n+I 3 | c | 2024-01-01 10:00:03.000\n\
             +I 6 | y | 2024-01-01 10:00:03.000\n+I 5 | z | 2024-01-01 10:00:00.000"
        );
    }

    #[test]
    fn the_end_of_input_releases_what_waits_in_order() {
        assert_eq!(
            run(
                vec![key(2, false), key(1, true)],
                true,
                &format!("{ROWS}\nEND")
            ),
            "+I 5 | z | 2024-01-01 10:00:00.000\n+I 2 | a | 2024-01-01 10:00:01.000\n\
             +I 4 | a | 2024-01-01 10:00:02.000\n+I 6 | y | 2024-01-01 10:00:03.000\n\
             +I 3 | c | 2024-01-01 10:00:03.000\n+I 1 | b | 2024-01-01 10:00:03.000"
        );
    }
}
