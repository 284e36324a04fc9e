//! `SlicingWindowAggregateOperator`: the window aggregate over a HOP or CUMULATE windowing
//! TVF, computed per slice as Flink's `SlicingWindowOperator` does: a row is accumulated
//! once, into its key's *slice* (HOP: `gcd(size, slide)` long; CUMULATE: one step), and a
//! window, when it fires, merges the slices it covers. A row is not copied into each of the
//! size/slide windows it belongs to; the slices are shared by them.
//!
//! Each live slice knows the first and last window end that cover it. A key has a timer
//! at the next window end that covers one of its slices (Flink's `nextTriggerWindow`): when
//! it fires, the window's slices are merged (one slice is read as it is), the result is
//! emitted when the window holds rows, the slices whose last window this was are freed, and
//! the key's next window is timed. Windows fire in trigger-time order; those of one trigger
//! time in the order their keys were timed (Flink leaves that order open too: its timers
//! are a heap).
//!
//! Lateness is judged per window, as the group window operator judges it: a row counts in
//! the windows that have not fired; a row for which every window covering its slice has fired is late, dropped and
//! counted. On TIMESTAMP_LTZ the windows lie on the session zone's wall clock and fire at
//! the DST-corrected instant of their end's last millisecond (`WindowClock`).
//!
//! A key's slices are kept inline in its entry of the key table (bounds and slot), so a
//! row finds its slice and a firing window its slices without a second lookup.
//!
//! State is snapshotted per key group: per key its bytes, its slices (bounds, rows, every
//! accumulator's state) and the window end it is timed at. The late-row count is instance
//! state.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema as ArrowSchema, SchemaRef};
use smallvec::SmallVec;

use super::aggregate::{
    GroupsAccumulator, StateReader, create_accumulator_for, put_bytes, put_i64, put_u32,
};
use super::group_window_aggregate::{PendingRows, WindowRows};
use super::state::instance::{LateRows, restore_late_rows, snapshot_late_rows};
use super::state::key::{KeyEncoder, key_bytes, optional_encoder};
use super::state::key_group::KeyGroupRange;
use super::state::key_table::KeyTable;
use super::window_assigner::{WindowClock, restored_window_time, window_end_range, window_start};
use crate::clock::Clock;
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, OperatorContext, Output};
use crate::plan::aggregate::{AggregateCall, GroupWindow, GroupWindowKind, WindowProperty};
use crate::types::TimeAttribute;
use crate::types::chunk::{RowKind, StreamChunk};
use crate::types::time::SessionZone;

const NANOS_PER_MILLI: i64 = 1_000_000;

/// A key's slice: its accumulators' slot, its bounds, and the first and last end of the
/// windows covering it.
#[derive(Clone, Copy)]
struct Slice {
    slot: u32,
    start: i64,
    end: i64,
    first_window: i64,
    last_window: i64,
}

impl Slice {
    /// The end of the first window covering the slice that ends after `after`, windows
    /// ending `spacing` apart.
    fn window_after(&self, after: i64, spacing: i64) -> Option<i64> {
        let mut end = self.first_window;
        if end <= after {
            // Mostly the window right after the one that fired: no division then.
            let gap = after - end;
            let behind = if gap < spacing { 1 } else { gap / spacing + 1 };
            end = end.saturating_add(behind.saturating_mul(spacing));
        }
        (end <= self.last_window).then_some(end)
    }
}

/// A key's live slices (inline: a key has a few at most) and the end of the window it is
/// timed at (`i64::MAX`: none).
struct KeyState {
    slices: SmallVec<[Slice; 2]>,
    timed: i64,
}

impl Default for KeyState {
    fn default() -> Self {
        KeyState {
            slices: SmallVec::new(),
            timed: i64::MAX,
        }
    }
}

pub struct SlicingWindowAggregateOperator {
    window: GroupWindow,
    /// A slice's length.
    slice: i64,
    /// The distance between the ends of consecutive windows (HOP's slide, CUMULATE's step).
    spacing: i64,
    properties: Vec<WindowProperty>,
    output: SchemaRef,
    window_clock: WindowClock,
    daylight_time: bool,
    encoder: Option<KeyEncoder>,
    accumulators: Vec<Box<dyn GroupsAccumulator>>,
    key_groups: KeyGroupRange,
    clock: Arc<dyn Clock>,
    watermark: i64,
    late_rows: LateRows,
    /// The keys with live slices.
    keys: KeyTable<KeyState>,
    /// Per slot, rows accumulated less rows retracted (counted over a retracting input only:
    /// a window whose rows were all taken back emits nothing).
    rows: Vec<i64>,
    free_slots: Vec<u32>,
    /// By trigger time, the (key id, window end) of each key's next window, in the order
    /// they were timed. An entry whose key is now timed elsewhere is stale and skipped.
    timers: BTreeMap<i64, Vec<(u32, i64)>>,
    /// The last window end whose trigger time was computed, and that time.
    last_trigger: Cell<(i64, i64)>,
    /// This batch's (row, slot) pairs, not yet given to the accumulators.
    pending: PendingRows,
    retracting: bool,
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl SlicingWindowAggregateOperator {
    /// The aggregate of `aggregates` per `grouping` key and HOP or CUMULATE `window` over
    /// batches shaped like `input`, emitting rows of `output`: the grouping columns, the
    /// aggregates, then `properties`. `zone`: the session zone; `retracting`: the input
    /// updates or deletes rows.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        input: &ArrowSchema,
        grouping: Vec<usize>,
        window: GroupWindow,
        aggregates: Vec<AggregateCall>,
        properties: Vec<WindowProperty>,
        output: SchemaRef,
        zone: SessionZone,
        retracting: bool,
    ) -> Result<Self, ExecError> {
        let (slice, spacing) = match window.kind {
            GroupWindowKind::Hop { slide, size } => (gcd(size, slide), slide),
            GroupWindowKind::Cumulate { step, .. } => (step, step),
            _ => {
                return Err(ExecError::Internal(
                    "a slicing window aggregate is for HOP and CUMULATE windows".into(),
                ));
            }
        };
        let expected = grouping.len() + aggregates.len() + properties.len();
        if output.fields().len() != expected {
            return Err(ExecError::Internal(format!(
                "a window aggregate of {expected} columns given an output of {}",
                output.fields().len()
            )));
        }
        let accumulators = aggregates
            .iter()
            .map(|call| create_accumulator_for(call, input, retracting))
            .collect::<Result<_, _>>()?;
        let window_clock = WindowClock::new(&window.time_type, zone);
        let ctx = OperatorContext::default();
        Ok(SlicingWindowAggregateOperator {
            slice,
            spacing,
            properties,
            output,
            daylight_time: window_clock.zone().is_some(),
            window_clock,
            encoder: optional_encoder(input, grouping)?,
            accumulators,
            key_groups: ctx.key_groups,
            clock: ctx.clock,
            watermark: i64::MIN,
            late_rows: LateRows::default(),
            keys: KeyTable::new(ctx.max_parallelism),
            rows: Vec::new(),
            free_slots: Vec::new(),
            timers: BTreeMap::new(),
            last_trigger: Cell::new((i64::MIN, i64::MIN)),
            pending: PendingRows::new(retracting),
            retracting,
            window,
        })
    }

    fn is_rowtime(&self) -> bool {
        self.window.time_attribute == TimeAttribute::Rowtime
    }

    /// When a window ending at `end` fires (Flink's `toEpochMillsForTimer(end - 1)`).
    fn trigger_time(&self, end: i64) -> i64 {
        let (last_end, last) = self.last_trigger.get();
        if last_end == end {
            return last;
        }
        let trigger = self.window_clock.trigger_time(end, self.daylight_time);
        self.last_trigger.set((end, trigger));
        trigger
    }

    fn has_fired(&self, end: i64) -> bool {
        self.is_rowtime() && self.trigger_time(end) <= self.watermark
    }

    /// Where a window ending at `end` starts.
    fn window_start_of(&self, end: i64) -> i64 {
        match self.window.kind {
            GroupWindowKind::Hop { size, .. } => end - size,
            GroupWindowKind::Cumulate { size, .. } => {
                window_start(end - 1, self.window.offset, size)
            }
            _ => end,
        }
    }

    /// A new slice's first window that has not fired (none when all have: its row is
    /// late). While windows fire, a key's next one is `Slice::window_after` the fired one:
    /// those the watermark passed are still to fire in the same call.
    fn first_unfired_window(&self, slice: &Slice) -> Option<i64> {
        if !self.has_fired(slice.first_window) {
            return Some(slice.first_window);
        }
        // Fired windows come first (trigger times grow with the end): a binary search over
        // the ends, `spacing` apart, finds the first that has not (a late row of a long
        // CUMULATE may be covered by millions of windows).
        let (mut fired, mut unfired) = (
            0,
            (slice.last_window - slice.first_window) / self.spacing + 1,
        );
        while unfired - fired > 1 {
            let middle = fired + (unfired - fired) / 2;
            if self.has_fired(slice.first_window + middle * self.spacing) {
                fired = middle;
            } else {
                unfired = middle;
            }
        }
        let end = slice.first_window + unfired * self.spacing;
        (end <= slice.last_window).then_some(end)
    }

    /// Times `key` at the window ending at `end`, unless it is timed at an earlier one
    /// already (which, when it fires, times the next).
    fn set_timer(&mut self, key: u32, end: i64) {
        let state = self.keys.value_mut(key);
        if state.timed <= end {
            return;
        }
        state.timed = end;
        let trigger = self.trigger_time(end);
        self.timers.entry(trigger).or_default().push((key, end));
    }

    /// A new slice of `key`, with its slot and the key's timer; `None` when every window
    /// covering it has fired.
    fn open_slice(&mut self, key: u32, start: i64, end: i64) -> Option<u32> {
        let (first_window, last_window) =
            window_end_range(self.window.kind, self.window.offset, start)?;
        let mut slice = Slice {
            slot: 0,
            start,
            end,
            first_window,
            last_window,
        };
        let next = self.first_unfired_window(&slice)?;
        slice.slot = self.allocate();
        self.keys.value_mut(key).slices.push(slice);
        self.set_timer(key, next);
        Some(slice.slot)
    }

    /// An empty slot for accumulators.
    fn allocate(&mut self) -> u32 {
        match self.free_slots.pop() {
            Some(slot) => slot,
            None => {
                self.rows.push(0);
                let n = self.rows.len();
                for a in &mut self.accumulators {
                    a.resize(n);
                }
                (n - 1) as u32
            }
        }
    }

    fn release(&mut self, slot: u32) {
        for a in &mut self.accumulators {
            a.free(slot);
        }
        self.rows[slot as usize] = 0;
        self.free_slots.push(slot);
    }

    /// Hands this batch's pending (row, slot) pairs to the accumulators.
    fn flush(&mut self, batch: &RecordBatch) -> Result<(), ExecError> {
        let counts = &mut self.rows;
        self.pending
            .flush(&mut self.accumulators, batch, &mut |slot, by| {
                counts[slot as usize] += by
            })
    }

    /// Fires the windows whose trigger time is at or before `progress`, one trigger time at
    /// a time (a key's next window may fall due in the same call).
    fn fire(&mut self, progress: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        while let Some(entry) = self.timers.first_entry() {
            if *entry.key() > progress {
                break;
            }
            let due = entry.remove();
            self.fire_windows(&due, out)?;
        }
        Ok(())
    }

    /// Emits the windows `(key, end)` (of one trigger time), frees the slices whose last
    /// window they were, and times each key's next window. An entry whose key is timed at
    /// another window (stale), or that repeats one already fired, is skipped.
    fn fire_windows(&mut self, due: &[(u32, i64)], out: &mut dyn Output) -> Result<(), ExecError> {
        // Each window's result slot: its one slice, or a scratch slot merging its slices.
        // One pass per key also finds its expired slices (freed once the results are out)
        // and its next window.
        let mut emitted: Vec<u32> = Vec::with_capacity(due.len());
        let mut keys: Vec<u32> = Vec::with_capacity(due.len());
        let mut bounds: Vec<(i64, i64)> = Vec::with_capacity(due.len());
        let mut released: Vec<u32> = Vec::new();
        let mut gone: Vec<u32> = Vec::new();
        let mut covered: Vec<u32> = Vec::new();
        let mut timed: Vec<(u32, i64)> = Vec::with_capacity(due.len());
        for &(key, end) in due {
            let start = self.window_start_of(end);
            let spacing = self.spacing;
            let state = self.keys.value_mut(key);
            if state.timed != end {
                continue;
            }
            state.timed = i64::MAX;
            covered.clear();
            let mut rows = 0;
            let mut next: Option<i64> = None;
            let slices = &mut state.slices;
            let mut i = 0;
            while i < slices.len() {
                let s = slices[i];
                if s.start >= start && s.end <= end {
                    covered.push(s.slot);
                    if self.retracting {
                        rows += self.rows[s.slot as usize];
                    }
                }
                if s.last_window <= end {
                    released.push(s.slot);
                    slices.swap_remove(i);
                    continue;
                }
                if let Some(w) = s.window_after(end, spacing) {
                    next = Some(next.map_or(w, |n| n.min(w)));
                }
                i += 1;
            }
            if slices.is_empty() {
                gone.push(key);
            }
            // Timed at its next window (it has none now: its timer fired).
            if let Some(next) = next {
                state.timed = next;
                timed.push((key, next));
            }
            if covered.is_empty() || (self.retracting && rows <= 0) {
                continue;
            }
            let result = match covered.as_slice() {
                [one] => *one,
                [first, rest @ ..] => {
                    let merged = self.allocate();
                    released.push(merged);
                    for a in &mut self.accumulators {
                        a.merge(merged, *first);
                        for &other in rest {
                            a.merge(merged, other);
                        }
                    }
                    merged
                }
                [] => continue,
            };
            emitted.push(result);
            keys.push(key);
            bounds.push((start, end));
        }
        if !emitted.is_empty() {
            let batch = WindowRows {
                encoder: self.encoder.as_ref(),
                accumulators: &self.accumulators,
                properties: &self.properties,
                output: &self.output,
                window_clock: &self.window_clock,
                clock: self.clock.as_ref(),
            }
            .batch(keys.iter().map(|&k| self.keys.bytes(k)), &emitted, &bounds)?;
            out.emit(StreamChunk::inserts(batch))?;
        }
        for slot in released {
            self.release(slot);
        }
        for key in gone {
            self.keys.remove(key);
        }
        // The keys' next windows, mostly one end for all: a bucket looked up per run.
        let mut run = 0;
        while run < timed.len() {
            let end = timed[run].1;
            let len = timed[run..].iter().take_while(|t| t.1 == end).count();
            let trigger = self.trigger_time(end);
            self.timers
                .entry(trigger)
                .or_default()
                .extend_from_slice(&timed[run..run + len]);
            run += len;
        }
        Ok(())
    }
}

impl Operator for SlicingWindowAggregateOperator {
    /// Rows dropped because every window covering them had fired.
    fn late_rows(&self) -> u64 {
        self.late_rows.count()
    }

    fn open(&mut self, ctx: &OperatorContext) -> Result<(), ExecError> {
        self.keys.set_max_parallelism(ctx.max_parallelism);
        self.key_groups = ctx.key_groups;
        self.late_rows.open(ctx);
        self.clock = ctx.clock.clone();
        self.daylight_time = self.window_clock.observes_daylight_time(ctx.now_millis());
        Ok(())
    }

    fn process(
        &mut self,
        _input: usize,
        chunk: StreamChunk,
        _out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        if !self.retracting && !chunk.is_insert_only() {
            return Err(ExecError::Internal(
                "a window aggregate made for inserts was given updates".into(),
            ));
        }
        let batch = &chunk.batch;
        let rows = batch.num_rows();
        if rows == 0 {
            return Ok(());
        }
        let keys = self.encoder.as_ref().map(|e| e.encode(batch)).transpose()?;
        let times = if self.is_rowtime() {
            Some(crate::exec::time_column::rowtime_column(batch, self.window.time_column)?.clone())
        } else {
            None
        };
        let now = self
            .window_clock
            .to_window_time(self.clock.now_nanos().div_euclid(NANOS_PER_MILLI));
        let mut previous: Option<(usize, Option<u32>)> = None;
        for row in 0..rows {
            let bytes = key_bytes(keys.as_ref(), row);
            let mut key = match previous {
                Some((p, key)) if keys.as_ref().is_none_or(|k| k.row(p).data() == bytes) => key,
                _ => self.keys.find(bytes),
            };
            let ts = match &times {
                Some(t) => self
                    .window_clock
                    .to_window_time(t.value(row).div_euclid(NANOS_PER_MILLI)),
                None => now,
            };
            let start = window_start(ts, self.window.offset, self.slice);
            let end = start.saturating_add(self.slice);
            let open = key.and_then(|k| {
                let slices = &self.keys.value(k).slices;
                slices.iter().find(|s| s.end == end).map(|s| s.slot)
            });
            let slot = match open {
                Some(slot) => Some(slot),
                None => {
                    let k = match key {
                        Some(k) => k,
                        None => {
                            let k = self.keys.intern(bytes).0;
                            key = Some(k);
                            k
                        }
                    };
                    let slot = self.open_slice(k, start, end);
                    if self.keys.value(k).slices.is_empty() {
                        self.keys.remove(k);
                        key = None;
                    }
                    slot
                }
            };
            match slot {
                Some(slot) => {
                    self.pending.push(
                        row as u32,
                        slot,
                        matches!(chunk.kind(row), RowKind::UpdateBefore | RowKind::Delete),
                    );
                }
                None => self.late_rows.add(),
            }
            previous = Some((row, key));
        }
        self.flush(batch)
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        self.watermark = self.watermark.max(watermark);
        if self.is_rowtime() {
            self.fire(watermark, out)?;
        }
        out.emit_watermark(watermark)
    }

    fn next_processing_time(&self) -> Option<i64> {
        if self.is_rowtime() {
            return None;
        }
        self.timers.first_key_value().map(|(&t, _)| t)
    }

    fn on_processing_time(&mut self, now: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        if self.is_rowtime() {
            return Ok(());
        }
        self.fire(now, out)
    }

    /// Per key group: for each key, its bytes, its slices (start, end, rows, every
    /// accumulator's state), then the window ends it is timed at.
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        let mut groups: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
        for (_, key) in self.keys.iter() {
            let out = groups.entry(key.key_group()).or_default();
            put_bytes(out, key.bytes);
            put_u32(out, key.value.slices.len() as u32);
            for s in &key.value.slices {
                put_i64(out, s.start);
                put_i64(out, s.end);
                put_i64(out, self.rows[s.slot as usize]);
                for a in &self.accumulators {
                    a.write_slot(s.slot, out);
                }
            }
            put_i64(out, key.value.timed);
        }
        groups.into_iter().collect()
    }

    fn restore(&mut self, key_group: u32, state: &[u8]) -> Result<(), ExecError> {
        self.key_groups.check_owned(key_group)?;
        let mut input = StateReader::new(state);
        while !input.is_empty() {
            let key = self.keys.intern(input.bytes()?).0;
            for _ in 0..input.u32()? {
                let start = restored_window_time(input.i64()?)?;
                let end = restored_window_time(input.i64()?)?;
                let rows = input.i64()?;
                let (first_window, last_window) =
                    window_end_range(self.window.kind, self.window.offset, start)
                        .unwrap_or((end, end));
                let slot = self.allocate();
                self.rows[slot as usize] = rows;
                for a in &mut self.accumulators {
                    a.read_slot(slot, &mut input)?;
                }
                self.keys.value_mut(key).slices.push(Slice {
                    slot,
                    start,
                    end,
                    first_window,
                    last_window,
                });
            }
            let timed = input.i64()?;
            if timed != i64::MAX {
                self.set_timer(key, restored_window_time(timed)?);
            }
        }
        Ok(())
    }

    /// The late-row count (see `state::instance`).
    fn snapshot_instance(&self) -> Option<Vec<u8>> {
        Some(snapshot_late_rows(&self.late_rows))
    }

    fn restore_instance(&mut self, parts: &[&[u8]]) -> Result<(), ExecError> {
        restore_late_rows(&mut self.late_rows, parts)
    }
}

#[cfg(test)]
#[path = "slicing_window_aggregate_tests.rs"]
mod tests;
