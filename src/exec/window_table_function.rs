//! `WindowTableFunctionOperator`: a windowing TVF on its own, as Flink's
//! `WindowTableFunctionOperator` runs it. Each input row comes out once per window holding
//! its rowtime (`window_assigner`), in Flink's order, with `window_start` and `window_end`
//! (wall clock in the session zone for a TIMESTAMP_LTZ time column) and `window_time` (the
//! UTC instant of end − 1 ms for LTZ, end − 1 ms otherwise) appended. Stateless: nothing is
//! dropped, watermarks pass through.

use std::sync::Arc;

use arrow_array::types::TimestampNanosecondType;
use arrow_array::{ArrayRef, PrimitiveArray, UInt32Array};
use arrow_schema::SchemaRef;
use arrow_select::take::take;

use super::window_assigner::{WindowClock, windows_of};
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, Output, PIECE_ROWS};
use crate::exec::time_column::rowtime_column;
use crate::plan::aggregate::GroupWindow;
use crate::types::TimeAttribute;
use crate::types::chunk::{StreamChunk, batch_with_rows};
use crate::types::time::SessionZone;

const NANOS_PER_MILLI: i64 = 1_000_000;

pub struct WindowTableFunctionOperator {
    window: GroupWindow,
    output: SchemaRef,
    clock: WindowClock,
}

impl WindowTableFunctionOperator {
    /// Windows of `window` over batches whose columns are `output`'s but the last three.
    pub fn new(window: GroupWindow, output: SchemaRef, zone: SessionZone) -> Self {
        WindowTableFunctionOperator {
            clock: WindowClock::new(&window.time_type, zone),
            window,
            output,
        }
    }
}

/// Output rows of one chunk: the input row each copies and its window's columns (nanos).
#[derive(Default)]
struct Piece {
    rows: Vec<u32>,
    starts: Vec<i64>,
    ends: Vec<i64>,
    window_times: Vec<i64>,
}

impl WindowTableFunctionOperator {
    /// Emits `piece`'s rows: its input rows of `batch` with their windows appended.
    fn emit(
        &self,
        batch: &arrow_array::RecordBatch,
        piece: Piece,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let indices = UInt32Array::from(piece.rows);
        let mut columns: Vec<ArrayRef> = batch
            .columns()
            .iter()
            .map(|c| take(c.as_ref(), &indices, None))
            .collect::<Result<_, _>>()
            .map_err(|e| ExecError::Internal(e.to_string()))?;
        let width = columns.len();
        for (i, values) in [piece.starts, piece.ends, piece.window_times]
            .into_iter()
            .enumerate()
        {
            let field = self.output.field(width + i);
            columns.push(Arc::new(
                PrimitiveArray::<TimestampNanosecondType>::from(values)
                    .with_data_type(field.data_type().clone()),
            ));
        }
        let rows = indices.len();
        out.emit(StreamChunk::inserts(batch_with_rows(
            self.output.clone(),
            columns,
            rows,
        )?))
    }
}

impl Operator for WindowTableFunctionOperator {
    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
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
        let times = rowtime_column(batch, self.window.time_column)?;
        let mut piece = Piece::default();
        for row in 0..batch.num_rows() {
            let ts = self
                .clock
                .to_window_time(times.value(row).div_euclid(NANOS_PER_MILLI));
            for (start, end) in windows_of(self.window.kind, self.window.offset, ts) {
                piece.rows.push(row as u32);
                piece.starts.push(start.saturating_mul(NANOS_PER_MILLI));
                piece.ends.push(end.saturating_mul(NANOS_PER_MILLI));
                // Over processing time, the row's own time (Flink materializes the
                // proctime attribute); over event time, the window's last millisecond.
                piece.window_times.push(match self.window.time_attribute {
                    TimeAttribute::Proctime => times.value(row),
                    TimeAttribute::Rowtime => self
                        .clock
                        .to_instant(end - 1)
                        .saturating_mul(NANOS_PER_MILLI),
                });
                if piece.rows.len() == PIECE_ROWS {
                    self.emit(batch, std::mem::take(&mut piece), out)?;
                }
            }
        }
        if !piece.rows.is_empty() {
            self.emit(batch, piece, out)?;
        }
        Ok(())
    }
}
