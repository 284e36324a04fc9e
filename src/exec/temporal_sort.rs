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

use std::collections::BTreeMap;

use arrow_array::{Array, RecordBatch};
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;

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
    late: u64,
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
            late: 0,
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
                self.late += 1;
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
        self.late
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
