//! `DeduplicateOperator`: `ROW_NUMBER() OVER (PARTITION BY k ORDER BY <time attribute>)`
//! kept at rank 1 over an insert-only stream, as Flink's deduplicate functions run it:
//!
//! - keep the first row on processing time: the first row of each key is inserted and every
//!   later one dropped (insert-only output, Flink's `outputInsertOnly=[true]`);
//! - keep the last row (processing or event time): each row that wins replaces the key's
//!   row, `-U` of the old (when asked for) and `+U` of the new, `+I` for a key's first row; on
//!   event time a row wins when its time is at or after the kept row's, so a tie goes to the
//!   later arrival and an earlier row changes nothing.
//!
//! Each key keeps one row, as `arrow-row` bytes of all its columns (keep-first keeps none: a
//! key seen is enough). State is snapshotted per key group.

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampNanosecondType;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;

use super::aggregate::{StateReader, put_bytes, put_i64};
use super::state::key::{KeyEncoder, key_bytes, optional_encoder, whole_row_converter};
use super::state::key_group::GroupBuffers;
use super::state::keyed::Keyed;
use super::state::ttl::StateTtl;
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, OperatorContext, Output};
use crate::types::chunk::{RowKind, StreamChunk, chunk_of_rows};

/// A key's kept row (keep-last) and its event time.
#[derive(Default)]
struct Kept {
    time: i64,
    row: Box<[u8]>,
    /// When the key was last written (processing time, milliseconds), for the state TTL.
    written: i64,
}

pub struct DeduplicateOperator {
    schema: SchemaRef,
    keep_last: bool,
    /// The event-time column ordering keep-last rows (`None`: processing time, every row
    /// wins).
    rowtime: Option<usize>,
    update_before: bool,
    encoder: Option<KeyEncoder>,
    rows: RowConverter,
    keyed: Keyed<Kept>,
    ctx: OperatorContext,
}

impl DeduplicateOperator {
    /// Deduplication of rows of `schema` by `keys`; `rowtime`: the event-time column when
    /// rows are ordered by event time; `update_before`: a replaced row is retracted first.
    pub fn new(
        schema: SchemaRef,
        keys: Vec<usize>,
        keep_last: bool,
        rowtime: Option<usize>,
        update_before: bool,
    ) -> Result<Self, ExecError> {
        let encoder = optional_encoder(&schema, keys)?;
        let rows = whole_row_converter(&schema)?;
        let ctx = OperatorContext::default();
        Ok(DeduplicateOperator {
            schema,
            keep_last,
            rowtime,
            update_before,
            encoder,
            rows,
            keyed: Keyed::new(),
            ctx,
        })
    }

    /// Forgets keys not written for `ttl` milliseconds (0: never).
    pub fn with_state_ttl(mut self, ttl: i64) -> Self {
        self.keyed.ttl = StateTtl::new(ttl);
        self
    }
}

impl Operator for DeduplicateOperator {
    fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.keyed.open(ctx);
        self.ctx = ctx.clone();
        Ok(())
    }

    fn next_processing_time(&self) -> Option<i64> {
        self.keyed.ttl.next_sweep()
    }

    /// Sweeps out the keys the state TTL expired (they are already invisible).
    fn on_processing_time(&mut self, now: i64, _out: &mut dyn Output) -> Result<(), ExecError> {
        if self.keyed.ttl.sweep_due(now) {
            let ttl = self.keyed.ttl;
            self.keyed
                .keys
                .retain(|kept| !ttl.expired(kept.written, now));
        }
        Ok(())
    }

    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        if !chunk.is_insert_only() {
            return Err(ExecError::Internal(
                "a deduplication takes inserts only".into(),
            ));
        }
        let batch: &RecordBatch = &chunk.batch;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let keys = self.encoder.as_ref().map(|e| e.encode(batch)).transpose()?;
        let times = match self.rowtime {
            Some(c) => Some(
                batch
                    .column(c)
                    .as_primitive_opt::<TimestampNanosecondType>()
                    .ok_or_else(|| ExecError::Internal("the rowtime is not a timestamp".into()))?
                    .clone(),
            ),
            None => None,
        };
        let rows = self.rows.convert_columns(batch.columns())?;
        let mut emitted: Vec<(RowKind, Box<[u8]>)> = Vec::new();
        let mut firsts: Vec<u32> = Vec::new();
        let now = self.ctx.now_millis();
        for i in 0..batch.num_rows() {
            let bytes = key_bytes(keys.as_ref(), i);
            let (key, mut new) = self.keyed.keys.intern(bytes);
            // An expired key is new again, whether or not a sweep has freed it yet.
            if !new
                && self
                    .keyed
                    .ttl
                    .expired(self.keyed.keys.value(key).written, now)
            {
                *self.keyed.keys.value_mut(key) = Kept::default();
                new = true;
            }
            // Flink writes a key's state when it keeps a row: keep-first only its first.
            if new {
                self.keyed.keys.value_mut(key).written = now;
            }
            if !self.keep_last {
                if new {
                    firsts.push(i as u32);
                }
                continue;
            }
            let time = match &times {
                Some(t) if t.is_valid(i) => t.value(i),
                Some(_) => {
                    return Err(ExecError::Source(
                        "RowTime field should not be null, please convert it to a non-null long value."
                            .into(),
                    ));
                }
                None => 0,
            };
            let kept = self.keyed.keys.value_mut(key);
            if !new && time < kept.time {
                continue;
            }
            let row: Box<[u8]> = rows.row(i).as_ref().into();
            let old = std::mem::replace(&mut kept.row, row.clone());
            kept.time = time;
            if new {
                emitted.push((RowKind::Insert, row));
            } else {
                if self.update_before {
                    emitted.push((RowKind::UpdateBefore, old));
                }
                emitted.push((RowKind::UpdateAfter, row));
            }
        }
        if !firsts.is_empty() {
            let indices = arrow_array::UInt32Array::from(firsts);
            let columns: Vec<ArrayRef> = batch
                .columns()
                .iter()
                .map(|c| arrow_select::take::take(c.as_ref(), &indices, None))
                .collect::<Result<_, _>>()?;
            return out.emit(StreamChunk::inserts(RecordBatch::try_new(
                self.schema.clone(),
                columns,
            )?));
        }
        match chunk_of_rows(&self.rows, self.schema.clone(), emitted)? {
            Some(chunk) => out.emit(chunk),
            None => Ok(()),
        }
    }

    /// Per key group: each key's bytes, its row's time and bytes, and when it was last
    /// written (so that the state TTL goes on from where it was).
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        let mut groups = GroupBuffers::default();
        for (_, key) in self.keyed.keys.iter() {
            let out = groups.group(key.key_group());
            put_bytes(out, key.bytes);
            put_i64(out, key.value.time);
            put_bytes(out, &key.value.row);
            put_i64(out, key.value.written);
        }
        groups.into_snapshot()
    }

    fn restore(&mut self, key_group: u32, state: &[u8]) -> Result<(), ExecError> {
        self.keyed.check_owned(key_group)?;
        let mut input = StateReader::new(state);
        while !input.is_empty() {
            let (key, _) = self.keyed.keys.intern(input.bytes()?);
            let time = input.i64()?;
            let row = input.bytes()?.into();
            let written = input.i64()?;
            *self.keyed.keys.value_mut(key) = Kept { time, row, written };
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "deduplicate_tests.rs"]
mod tests;
