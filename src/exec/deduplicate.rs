//! `DeduplicateOperator`: `ROW_NUMBER() OVER (PARTITION BY k ORDER BY <time attribute>)`
//! kept at rank 1 over an insert-only stream, as Flink's deduplicate functions run it:
//!
//! - keep the first row on processing time: the first row of each key is inserted and every
//!   later one dropped (insert-only output, Flink's `outputInsertOnly=[true]`);
//! - keep the first row on event time (Flink's `RowTimeDeduplicateKeepFirstRowFunction`): a
//!   row behind the watermark is late (dropped, counted); each key keeps the row of the
//!   smallest time (a tie keeps the earlier arrival) until the watermark reaches that time,
//!   then inserts it and ignores every later row of the key (insert-only output);
//! - keep the last row (processing or event time): each row that wins replaces the key's
//!   row, `-U` of the old (when asked for) and `+U` of the new, `+I` for a key's first row; on
//!   event time a row wins when its time is at or after the kept row's, so a tie goes to the
//!   later arrival and an earlier row changes nothing.
//!
//! Each key keeps one row, as `arrow-row` bytes of all its columns (keep-first on processing
//! time keeps none: a key seen is enough), in pages by key id with its time, write time and
//! emitted flag, which a checkpoint freezes. State is snapshotted per key group; on event
//! time keep-first's watermark and late-row count are instance state.

use std::collections::BTreeSet;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampNanosecondType;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;

use super::aggregate::{StateReader, put_bytes, put_i64};
use super::state::byte_store::{FrozenIdStore, IdStore};
use super::state::instance::{INSTANCE_STATE_VERSION, LateRows, finished, instance_part};
use super::state::key::{KeyEncoder, key_bytes, optional_encoder, whole_row_converter};
use super::state::key_table::FrozenKeys;
use super::state::keyed::Keyed;
use super::state::pages::{FrozenBits, FrozenVec, PagedBits, PagedVec};
use super::state::ttl::StateTtl;
use crate::exec::error::ExecError;
use crate::exec::operator::{FrozenState, Operator, OperatorContext, Output, PIECE_ROWS, PartSink};
use crate::types::chunk::{RowKind, StreamChunk, chunk_of_rows};

/// Per key id: its kept row (keep-last; keep-first on event time) and that row's event
/// time, when the key was last written, and whether its row was emitted. On pages, so that
/// a checkpoint freezes them (docs/design/0008 §7).
#[derive(Default)]
struct Kept {
    times: PagedVec<i64>,
    rows: IdStore,
    /// When each key was last written (processing time, milliseconds), for the state TTL.
    written: PagedVec<i64>,
    /// Keep-first on event time: the key's row has been emitted (later rows are ignored).
    emitted: PagedBits,
}

impl Kept {
    /// Key `id` is new (or new again): no time, written at `now`, not emitted. Its row is
    /// set before it is read.
    fn reset(&mut self, id: u32, now: i64) {
        let i = id as usize;
        self.times.grow(i + 1, 0);
        self.written.grow(i + 1, 0);
        self.emitted.grow(i + 1);
        self.times[i] = 0;
        self.written[i] = now;
        self.emitted.set(i, false);
    }

    fn time(&self, id: u32) -> i64 {
        self.times[id as usize]
    }

    fn written(&self, id: u32) -> i64 {
        self.written[id as usize]
    }

    fn emitted(&self, id: u32) -> bool {
        self.emitted.get(id as usize)
    }

    fn keep(&mut self, id: u32, time: i64, row: &[u8]) {
        self.times[id as usize] = time;
        self.rows.set(id, row);
    }

    fn freeze(&self) -> FrozenKept {
        FrozenKept {
            times: self.times.freeze(),
            rows: self.rows.freeze(),
            written: self.written.freeze(),
            emitted: self.emitted.freeze(),
        }
    }
}

/// [`Kept`] as it was at a barrier.
struct FrozenKept {
    times: FrozenVec<i64>,
    rows: FrozenIdStore,
    written: FrozenVec<i64>,
    emitted: FrozenBits,
}

/// A deduplication's keyed state as it was at a barrier.
struct FrozenDeduplicate {
    keys: FrozenKeys,
    kept: FrozenKept,
    /// Keep-first on event time: each key's emitted flag is written too.
    waits: bool,
}

impl FrozenState for FrozenDeduplicate {
    /// Per key group: each key's bytes, its row's time and bytes, and when it was last
    /// written (so that the state TTL goes on from where it was); keep-first on event time
    /// adds whether the row was emitted.
    fn write(&self, out: &mut PartSink<'_>) -> Result<(), ExecError> {
        let kept = &self.kept;
        self.keys.write_each(out, |id, key, bytes| {
            let i = id as usize;
            put_bytes(bytes, key);
            put_i64(bytes, kept.times[i]);
            put_bytes(bytes, kept.rows.get(id));
            put_i64(bytes, kept.written[i]);
            if self.waits {
                bytes.push(u8::from(kept.emitted.get(i)));
            }
        })
    }
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
    keyed: Keyed<()>,
    kept: Kept,
    /// Keep-first on event time: the kept rows waiting for the watermark, (time, key).
    timers: BTreeSet<(i64, u32)>,
    watermark: i64,
    late: LateRows,
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
            kept: Kept::default(),
            timers: BTreeSet::new(),
            watermark: i64::MIN,
            late: LateRows::default(),
            ctx,
        })
    }

    fn frozen(&self) -> FrozenDeduplicate {
        FrozenDeduplicate {
            keys: self.keyed.keys.freeze(),
            kept: self.kept.freeze(),
            waits: self.waits_for_watermark(),
        }
    }

    /// Keep-first on event time (else every row is handled as it comes).
    fn waits_for_watermark(&self) -> bool {
        !self.keep_last && self.rowtime.is_some()
    }

    /// Keep-first on event time: row `row` of key `key` at `time` is kept if it is the
    /// key's first or earlier than the one kept (and the key has emitted nothing yet).
    fn offer_first(&mut self, key: u32, new: bool, time: i64, row: &[u8]) {
        if self.kept.emitted(key) || (!new && time >= self.kept.time(key)) {
            return;
        }
        self.kept.keep(key, time, row);
        self.timers.insert((time, key));
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
        self.late.open(ctx);
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
            let waits = self.waits_for_watermark();
            let kept = &self.kept;
            self.keyed.keys.retain(|id, _| {
                (waits && !kept.emitted(id)) || !ttl.expired(kept.written(id), now)
            });
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
        let waits = self.waits_for_watermark();
        for i in 0..batch.num_rows() {
            let bytes = key_bytes(keys.as_ref(), i);
            let (key, mut new) = self.keyed.keys.intern(bytes);
            // An expired key is new again, whether or not a sweep has freed it yet.
            // (A row waiting for the watermark is not expired: Flink's TTL spares state
            // its timers still need.)
            if !new {
                let waiting = waits && !self.kept.emitted(key);
                new = !waiting && self.keyed.ttl.expired(self.kept.written(key), now);
            }
            // Flink writes a key's state when it keeps a row: keep-first only its first.
            if new {
                self.kept.reset(key, now);
            }
            if !self.keep_last && times.is_none() {
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
            if !self.keep_last {
                // A row behind the watermark is late (one at it is not).
                if time.div_euclid(1_000_000) < self.watermark {
                    self.late.add();
                    if new {
                        self.keyed.keys.remove(key);
                    }
                    continue;
                }
                self.offer_first(key, new, time, rows.row(i).as_ref());
                continue;
            }
            if !new && time < self.kept.time(key) {
                continue;
            }
            let row = rows.row(i);
            if new {
                emitted.push((RowKind::Insert, row.as_ref().into()));
            } else {
                if self.update_before {
                    emitted.push((RowKind::UpdateBefore, self.kept.rows.get(key).into()));
                }
                emitted.push((RowKind::UpdateAfter, row.as_ref().into()));
            }
            self.kept.keep(key, time, row.as_ref());
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

    /// Keep-first on event time: the kept rows the watermark reached leave, in time order,
    /// then the watermark passes on.
    fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        if self.waits_for_watermark() && watermark > self.watermark {
            self.watermark = watermark;
            let mut emitted: Vec<(RowKind, Box<[u8]>)> = Vec::new();
            while let Some(&(time, key)) = self.timers.first() {
                if time.div_euclid(1_000_000) > watermark {
                    break;
                }
                self.timers.pop_first();
                // A stale timer (a key the TTL forgot, its id since reused) emits nothing
                // before the kept row's own time.
                if !self.keyed.keys.is_live(key) {
                    continue;
                }
                if self.kept.emitted(key) || self.kept.time(key) > time {
                    continue;
                }
                self.kept.emitted.set(key as usize, true);
                emitted.push((RowKind::Insert, self.kept.rows.get(key).into()));
                if emitted.len() == PIECE_ROWS {
                    let piece = std::mem::take(&mut emitted);
                    if let Some(chunk) = chunk_of_rows(&self.rows, self.schema.clone(), piece)? {
                        out.emit(chunk)?;
                    }
                }
            }
            if let Some(chunk) = chunk_of_rows(&self.rows, self.schema.clone(), emitted)? {
                out.emit(chunk)?;
            }
        }
        out.emit_watermark(watermark)
    }

    fn late_rows(&self) -> u64 {
        self.late.count()
    }

    /// Per key group: what [`FrozenDeduplicate`] writes.
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        self.frozen()
            .to_snapshot()
            .expect("writing into memory does not fail")
    }

    fn freeze(&self) -> Option<Box<dyn FrozenState>> {
        Some(Box::new(self.frozen()))
    }

    /// Keep-first on event time: the late-row count and the watermark (a kept row at the
    /// watermark's time waits for the next one, not for the same one again after a restore).
    fn snapshot_instance(&self) -> Option<Vec<u8>> {
        if !self.waits_for_watermark() {
            return None;
        }
        let mut out = vec![INSTANCE_STATE_VERSION];
        self.late.write(&mut out);
        put_i64(&mut out, self.watermark);
        Some(out)
    }

    /// The late rows of the parts this instance takes over and the latest watermark of them
    /// (of all parts when it takes none).
    fn restore_instance(&mut self, parts: &[&[u8]]) -> Result<(), ExecError> {
        let (mut own, mut all) = (None::<i64>, None::<i64>);
        for (old, part) in parts.iter().enumerate() {
            let mut input = instance_part(part)?;
            self.late.read(old, &mut input)?;
            let watermark = input.i64()?;
            finished(&input)?;
            all = Some(all.map_or(watermark, |w| w.max(watermark)));
            if self.late.takes(old) {
                own = Some(own.map_or(watermark, |w| w.max(watermark)));
            }
        }
        self.watermark = own.or(all).unwrap_or(i64::MIN);
        Ok(())
    }

    fn restore(&mut self, key_group: u32, state: &[u8]) -> Result<(), ExecError> {
        self.keyed.check_owned(key_group)?;
        let mut input = StateReader::new(state);
        while !input.is_empty() {
            let (key, _) = self.keyed.keys.intern(input.bytes()?);
            let time = input.i64()?;
            let row = input.bytes()?;
            let written = input.i64()?;
            let emitted = match (self.waits_for_watermark(), input.is_empty()) {
                (false, _) => false,
                (true, true) => {
                    return Err(ExecError::Internal(
                        "a deduplication's snapshot ends early".into(),
                    ));
                }
                (true, false) => match input.u8()? {
                    0 => false,
                    1 => true,
                    other => {
                        return Err(ExecError::Internal(format!(
                            "a flag of {other} in a deduplication's snapshot"
                        )));
                    }
                },
            };
            if self.waits_for_watermark() && !emitted {
                self.timers.insert((time, key));
            }
            self.kept.reset(key, written);
            self.kept.keep(key, time, row);
            self.kept.emitted.set(key as usize, emitted);
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "deduplicate_tests.rs"]
mod tests;
