//! `GroupWindowAggregateOperator`: a legacy group window aggregate (`GROUP BY key,
//! TUMBLE|HOP|SESSION(time, …)`), as Flink's table-runtime group window `WindowOperator`
//! computes it, and the window aggregate over a windowing TVF (`GROUP BY window_start,
//! window_end, key` over `TUMBLE|HOP|CUMULATE(TABLE t, …)`), whose results are the same:
//! each window's rows aggregated once, emitted when the watermark passes its end, a late row
//! skipped only for the windows that have fired. (Flink computes HOP and CUMULATE per slice
//! and merges slices when a window fires; here a row is added to each of its windows.)
//!
//! Rows enter as insert-only chunks. Once per batch the key columns are encoded with
//! `arrow-row` and each row's windows computed from its time (the rowtime column, or the
//! clock for proctime); each (key, window) pair owns a *slot*, and every accumulator then
//! walks the batch once with the list of (row, slot) pairs. A window is late, and the row
//! skipped for it, once its trigger time (end − 1 ms) is not after the current watermark; a
//! row late for every window it belongs to is counted in [`late_rows`].
//!
//! Windows leave when they fire: on a watermark (rowtime) or a processing time (proctime) at
//! or past their trigger time, in order of trigger time, then key bytes. Each fired window
//! becomes one insert row — grouping keys, aggregates, window properties, the planner's
//! layout — and its state is freed; then the watermark passes on. A bounded input's final
//! watermark (`i64::MAX`) fires every rowtime window; proctime windows never fire at the end
//! of input, as in Flink, whose processing-time timers die with the job.
//!
//! On a TIMESTAMP_LTZ time attribute, windows are aligned in the session zone's wall clock
//! (Flink's `toUtcTimestampMills`): window start and end are wall-clock TIMESTAMP(3) values,
//! and the trigger time is the UTC instant of wall-clock end − 1, DST-correct as Flink's
//! `TimeWindowUtil.toEpochMillsForTimer` (the first instant after a skipped hour, the later
//! of a repeated one). On TIMESTAMP the zone plays no part.
//!
//! With an emit strategy (`table.exec.emit.*`, Flink's `WindowEmitStrategy`; never over
//! sessions or TVFs, which Flink refuses) a window fires more than once: early, before its
//! end, on every row or a processing-time delay after a row (Flink's `ElementTriggers.every`
//! and `ProcessingTimeTriggers.every`); on time, as above; and late, for rows up to the
//! allowed lateness after its end, which keeps it until then. Its first firing is an insert,
//! each later one that changes its aggregates an update (`-U` when the consumer asks, then
//! `+U`); the last emitted values are kept per window to tell (Flink's `previousState`). A row
//! that fires its window at once flushes the batch's pending rows first, so that each row's
//! firing sees exactly the rows before it, as Flink's per-row trigger does.
//!
//! State is keyed by the key's bytes and snapshotted per key group; `open` must come before
//! `restore` (it says which key groups the instance owns and whether the zone observes DST,
//! which restored trigger times depend on). The late-row count is instance state.
//!
//! [`late_rows`]: GroupWindowAggregateOperator::late_rows

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampNanosecondType;
use arrow_array::{Array, ArrayRef, PrimitiveArray, RecordBatch};
use arrow_row::{RowConverter, SortField};
use arrow_schema::{Schema as ArrowSchema, SchemaRef};
use arrow_select::interleave::interleave;
use hashbrown::HashMap;

use super::aggregate::{
    GroupsAccumulator, StateReader, create_accumulator_for, put_bytes, put_i64, put_u32,
};
use super::state::instance::{LateRows, restore_late_rows, snapshot_late_rows};
use super::state::key::{KeyEncoder, key_bytes, optional_encoder};
use super::state::key_group::GroupBuffers;
use super::state::key_group::KeyGroupRange;
use super::state::key_table::KeyTable;
use super::window_assigner::WindowClock;
use super::window_assigner::{restored_window_time, windows_of};
use crate::clock::Clock;
use crate::exec::error::ExecError;
use crate::exec::operator::{Operator, OperatorContext, Output};
use crate::plan::aggregate::{AggregateCall, GroupWindow, GroupWindowKind, WindowProperty};
use crate::plan::stream::group_window_aggregate::EmitStrategy;
use crate::types::TimeAttribute;
use crate::types::chunk::{RowKind, StreamChunk, batch_with_rows};
use crate::types::time::SessionZone;

const NANOS_PER_MILLI: i64 = 1_000_000;

/// A live window: whose it is, where it lies (wall clock for LTZ), when it fires (UTC).
#[derive(Clone, Copy)]
struct Window {
    key: u32,
    start: i64,
    end: i64,
    trigger: i64,
    /// Where its entry in `timers` is: its trigger time, or with an emit strategy its cleanup
    /// time (trigger + lateness) once it fired or if it opened late.
    timer: i64,
    /// It fired on time (an emit strategy keeps it for late rows after that).
    fired: bool,
    /// Rows accumulated less rows retracted (kept only over a retracting input): a window
    /// left with none emits nothing.
    rows: i64,
}

pub struct GroupWindowAggregateOperator {
    window: GroupWindow,
    properties: Vec<WindowProperty>,
    output: SchemaRef,
    /// The clock windows are laid out on (the session zone's wall clock for LTZ).
    window_clock: WindowClock,
    /// Whether the zone observes daylight saving time (Java's `TimeZone.useDaylightTime`):
    /// Flink corrects trigger times around transitions only then.
    daylight_time: bool,
    encoder: Option<KeyEncoder>,
    accumulators: Vec<Box<dyn GroupsAccumulator>>,
    key_groups: KeyGroupRange,
    clock: Arc<dyn Clock>,
    watermark: i64,
    late_rows: LateRows,
    /// The keys with live windows, each with the slots of its windows.
    keys: KeyTable<Vec<u32>>,
    /// (key id, window end) to slot, for HOP and CUMULATE (a TUMBLE key has a window or two
    /// open, found in its own list; sessions search that list too); a key's windows of these
    /// kinds differ in their ends.
    fixed: HashMap<(u32, i64), u32>,
    slots: Vec<Window>,
    free_slots: Vec<u32>,
    /// The slots of the live windows by trigger time.
    timers: BTreeMap<i64, Vec<u32>>,
    /// The last window end whose trigger time was computed, and that time: the windows of
    /// all keys share their ends.
    last_trigger: Cell<(i64, i64)>,
    /// This batch's (row, slot) pairs, not yet given to the accumulators.
    pending: PendingRows,
    /// Over a retracting input: whether the row being assigned takes its row back.
    retract_row: bool,
    retracting: bool,
    /// Early and late firings, when the plan asks for them.
    emit: Option<Emit>,
    /// The input's window start and end columns, when rows carry their window.
    attached: Option<(usize, usize)>,
}

impl Emit {
    /// Drops the pending delayed firing of `slot`, if any.
    fn cancel_firing(&mut self, slot: u32) {
        if let Some(at) = self.next_firing[slot as usize].take()
            && let Some(slots) = self.firings.get_mut(&at)
        {
            slots.retain(|&s| s != slot);
            if slots.is_empty() {
                self.firings.remove(&at);
            }
        }
    }
}

/// What an emit strategy keeps beside the windows: per slot the aggregates it emitted last
/// (`arrow-row` bytes) and its pending processing-time firing; those firings by time; and
/// the slots the row being assigned went to.
struct Emit {
    strategy: EmitStrategy,
    /// Whether an update emits `-U` before `+U`.
    update_before: bool,
    converter: RowConverter,
    previous: Vec<Option<Box<[u8]>>>,
    next_firing: Vec<Option<i64>>,
    firings: BTreeMap<i64, Vec<u32>>,
    assigned: Vec<u32>,
}

impl GroupWindowAggregateOperator {
    /// The aggregate of `aggregates` per `grouping` key and `window` over batches shaped
    /// like `input`, emitting rows of `output`: the grouping columns, the aggregates, then
    /// `properties`. `zone` is the session zone (`table.local-time-zone`); `retracting`:
    /// the input updates or deletes rows (Flink's group windows take them back).
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
        let expected = grouping.len() + aggregates.len() + properties.len();
        if output.fields().len() != expected {
            return Err(ExecError::Internal(format!(
                "a group window aggregate of {expected} columns given an output of {}",
                output.fields().len()
            )));
        }
        let accumulators = aggregates
            .iter()
            .map(|call| create_accumulator_for(call, input, retracting))
            .collect::<Result<_, _>>()?;
        let window_clock = WindowClock::new(&window.time_type, zone);
        let encoder = optional_encoder(input, grouping)?;
        let ctx = OperatorContext::default();
        Ok(GroupWindowAggregateOperator {
            window,
            properties,
            output,
            daylight_time: window_clock.zone().is_some(),
            window_clock,
            encoder,
            accumulators,
            key_groups: ctx.key_groups,
            clock: ctx.clock,
            watermark: i64::MIN,
            late_rows: LateRows::default(),
            keys: KeyTable::new(ctx.max_parallelism),
            fixed: HashMap::new(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            timers: BTreeMap::new(),
            last_trigger: Cell::new((i64::MIN, i64::MIN)),
            pending: PendingRows::new(retracting),
            retract_row: false,
            retracting,
            emit: None,
            attached: None,
        })
    }

    /// The operator over rows that carry their window (a cascading window aggregate): each
    /// row goes to the one window its `start` and `end` columns name, wall clock for a
    /// TIMESTAMP_LTZ time as the aggregate below made them.
    pub fn with_attached_windows(mut self, start: usize, end: usize) -> Self {
        self.attached = Some((start, end));
        self
    }

    /// The operator with Flink's emit strategy `strategy` (see the module's documentation);
    /// `update_before`: updates emit their old row first.
    pub fn with_emit(
        mut self,
        strategy: EmitStrategy,
        update_before: bool,
    ) -> Result<Self, ExecError> {
        let first = self.encoder.as_ref().map_or(0, |_| {
            self.output.fields().len() - self.accumulators.len() - self.properties.len()
        });
        let fields = self.output.fields()[first..first + self.accumulators.len()]
            .iter()
            .map(|f| SortField::new(f.data_type().clone()))
            .collect();
        self.emit = Some(Emit {
            strategy,
            update_before,
            converter: RowConverter::new(fields)?,
            previous: vec![None; self.slots.len()],
            next_firing: vec![None; self.slots.len()],
            firings: BTreeMap::new(),
            assigned: Vec::new(),
        });
        Ok(self)
    }

    /// How long after its end a fired window takes late rows (ms).
    fn lateness(&self) -> i64 {
        self.emit.as_ref().map_or(0, |e| e.strategy.allow_lateness)
    }

    fn is_rowtime(&self) -> bool {
        self.window.time_attribute == TimeAttribute::Rowtime
    }

    /// When a window ending at `end` fires: Flink's `toEpochMillsForTimer(end - 1)`.
    fn trigger_time(&self, end: i64) -> i64 {
        let (last_end, last) = self.last_trigger.get();
        if last_end == end {
            return last;
        }
        let trigger = self.compute_trigger_time(end);
        self.last_trigger.set((end, trigger));
        trigger
    }

    fn compute_trigger_time(&self, end: i64) -> i64 {
        self.window_clock.trigger_time(end, self.daylight_time)
    }

    /// HOP and CUMULATE find a key's window by a map probe: a key has many open at once.
    fn uses_fixed_map(&self) -> bool {
        matches!(
            self.window.kind,
            GroupWindowKind::Hop { .. } | GroupWindowKind::Cumulate { .. }
        )
    }

    /// Whether a window firing at `trigger` takes no more rows (its cleanup time passed).
    fn is_late(&self, trigger: i64) -> bool {
        self.is_rowtime() && trigger.saturating_add(self.lateness()) <= self.watermark
    }

    /// The id of a live key.
    fn key_id(&self, bytes: &[u8]) -> Option<u32> {
        self.keys.find(bytes)
    }

    fn intern(&mut self, bytes: &[u8]) -> u32 {
        self.keys.intern(bytes).0
    }

    /// A new window of `key`, with its slot and timer.
    fn open_window(&mut self, key: u32, start: i64, end: i64) -> u32 {
        let trigger = self.trigger_time(end);
        // A window opening late (within the lateness) never fires on time: only its rows
        // fire it, and it goes at its cleanup time.
        let timer = if self.emit.is_some() && self.is_rowtime() && trigger <= self.watermark {
            trigger.saturating_add(self.lateness())
        } else {
            trigger
        };
        let window = Window {
            key,
            start,
            end,
            trigger,
            timer,
            fired: false,
            rows: 0,
        };
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.slots[slot as usize] = window;
                slot
            }
            None => {
                self.slots.push(window);
                let slots = self.slots.len();
                for a in &mut self.accumulators {
                    a.resize(slots);
                }
                if let Some(emit) = &mut self.emit {
                    emit.previous.resize(slots, None);
                    emit.next_firing.resize(slots, None);
                }
                (slots - 1) as u32
            }
        };
        self.keys.value_mut(key).push(slot);
        self.timers.entry(window.timer).or_default().push(slot);
        if self.uses_fixed_map() {
            self.fixed.insert((key, end), slot);
        }
        slot
    }

    /// Takes a window's timer away (it merged, or its trigger time moved).
    fn remove_timer(&mut self, trigger: i64, slot: u32) {
        if let Some(slots) = self.timers.get_mut(&trigger) {
            slots.retain(|&s| s != slot);
            if slots.is_empty() {
                self.timers.remove(&trigger);
            }
        }
    }

    /// Forgets a window (fired, its timer gone already, or merged into another) and, with
    /// its last window, its key. `in_bulk`: the caller sweeps `fixed` and `key_ids` itself
    /// afterwards (one pass over each beats a probe per window when most of them go).
    fn close_window(&mut self, slot: u32, fired: bool, in_bulk: bool) {
        let window = self.slots[slot as usize];
        if !fired {
            self.remove_timer(window.timer, slot);
        }
        if let Some(emit) = &mut self.emit {
            emit.previous[slot as usize] = None;
            emit.cancel_firing(slot);
        }
        if !in_bulk && self.uses_fixed_map() {
            self.fixed.remove(&(window.key, window.end));
        }
        for a in &mut self.accumulators {
            a.free(slot);
        }
        self.free_slots.push(slot);
        let windows = self.keys.value_mut(window.key);
        windows.retain(|&s| s != slot);
        if windows.is_empty() && !in_bulk {
            self.keys.remove(window.key);
        }
    }

    /// The rows of fired windows (see [`WindowRows::batch`]).
    fn window_batch<'k>(
        &self,
        keys: impl Iterator<Item = &'k [u8]>,
        slots: &[u32],
        bounds: &[(i64, i64)],
    ) -> Result<RecordBatch, ExecError> {
        self.window_rows().batch(keys, slots, bounds)
    }

    /// What fired windows' rows are made from (see [`WindowRows`]).
    fn window_rows(&self) -> WindowRows<'_> {
        WindowRows {
            encoder: self.encoder.as_ref(),
            accumulators: &self.accumulators,
            properties: &self.properties,
            output: &self.output,
            window_clock: &self.window_clock,
            clock: self.clock.as_ref(),
        }
    }

    /// The rows of windows `slots` (by their keys and bounds) with aggregate values `aggregates`.
    fn rows_of(&self, slots: &[u32], aggregates: Vec<ArrayRef>) -> Result<RecordBatch, ExecError> {
        let bounds: Vec<(i64, i64)> = slots
            .iter()
            .map(|&s| (self.slots[s as usize].start, self.slots[s as usize].end))
            .collect();
        self.window_rows().batch_of(
            slots
                .iter()
                .map(|&s| self.keys.bytes(self.slots[s as usize].key)),
            aggregates,
            slots.len(),
            &bounds,
        )
    }

    /// Fires windows `slots` under the emit strategy: each emits its aggregates as an insert
    /// the first time, and as an update (`-U` old, `+U` new) when they changed since.
    fn emit_updates(&mut self, slots: &[u32], out: &mut dyn Output) -> Result<(), ExecError> {
        if slots.is_empty() {
            return Ok(());
        }
        let aggregates = self
            .accumulators
            .iter()
            .map(|a| a.evaluate(slots))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(emit) = &mut self.emit else {
            return Err(ExecError::Internal(
                "a window fired as updates without an emit strategy".into(),
            ));
        };
        let rows = emit.converter.convert_columns(&aggregates)?;
        let mut kinds = Vec::new();
        let mut picks: Vec<(usize, usize)> = Vec::new();
        let (mut old_slots, mut old_rows) = (Vec::new(), Vec::new());
        for (i, &slot) in slots.iter().enumerate() {
            let row = rows.row(i);
            let previous = &mut emit.previous[slot as usize];
            match previous {
                Some(p) if p.as_ref() == row.data() => continue,
                Some(p) => {
                    if emit.update_before {
                        picks.push((1, old_slots.len()));
                        kinds.push(RowKind::UpdateBefore);
                        old_slots.push(slot);
                        old_rows.push(p.clone());
                    }
                    kinds.push(RowKind::UpdateAfter);
                }
                None => kinds.push(RowKind::Insert),
            }
            picks.push((0, i));
            *previous = Some(row.data().into());
        }
        if kinds.is_empty() {
            return Ok(());
        }
        let parser = emit.converter.parser();
        let old_aggregates = emit
            .converter
            .convert_rows(old_rows.iter().map(|r| parser.parse(r)))?;
        let new = self.rows_of(slots, aggregates)?;
        let old = self.rows_of(&old_slots, old_aggregates)?;
        let columns = (0..new.num_columns())
            .map(|c| interleave(&[new.column(c).as_ref(), old.column(c).as_ref()], &picks))
            .collect::<Result<Vec<_>, _>>()?;
        let batch = batch_with_rows(self.output.clone(), columns, kinds.len())?;
        out.emit(StreamChunk {
            batch,
            kinds: Some(kinds),
        })
    }

    /// The windows the row just assigned went to that fire at once (Flink's element
    /// trigger: no delay, or a window late that never fired); the others with a delayed
    /// trigger get a processing-time firing `delay` from `now` unless one is pending.
    fn fired_by_row(&mut self, now: i64) -> Vec<u32> {
        let rowtime = self.is_rowtime();
        let watermark = self.watermark;
        let Some(emit) = &mut self.emit else {
            return Vec::new();
        };
        let mut at_once = Vec::new();
        for &slot in &emit.assigned {
            let w = &self.slots[slot as usize];
            let delay = if !rowtime {
                emit.strategy.early
            } else if w.fired {
                emit.strategy.late
            } else if w.trigger <= watermark {
                Some(0)
            } else {
                emit.strategy.early
            };
            match delay {
                Some(0) => at_once.push(slot),
                Some(d) if emit.next_firing[slot as usize].is_none() => {
                    let at = now.saturating_add(d);
                    emit.next_firing[slot as usize] = Some(at);
                    emit.firings.entry(at).or_default().push(slot);
                }
                _ => {}
            }
        }
        emit.assigned.clear();
        at_once
    }

    /// Fires the windows whose delayed (processing-time) firing is due at `now`.
    fn fire_delayed(&mut self, now: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        let Some(emit) = &mut self.emit else {
            return Ok(());
        };
        let later = emit.firings.split_off(&now.saturating_add(1));
        let due = std::mem::replace(&mut emit.firings, later);
        let mut slots = Vec::new();
        for (at, list) in due {
            for slot in list {
                if emit.next_firing[slot as usize] == Some(at) {
                    emit.next_firing[slot as usize] = None;
                    slots.push(slot);
                }
            }
        }
        self.emit_updates(&slots, out)
    }

    /// Hands this batch's pending (row, slot) pairs to the accumulators.
    fn flush(&mut self, batch: &RecordBatch) -> Result<(), ExecError> {
        let slots = &mut self.slots;
        self.pending
            .flush(&mut self.accumulators, batch, &mut |slot, by| {
                slots[slot as usize].rows += by
            })
    }

    /// TUMBLE, HOP and CUMULATE: every window holding `ts` (`window_assigner`). Returns how
    /// many were not late.
    fn assign_fixed(&mut self, key: &mut Option<u32>, bytes: &[u8], row: u32, ts: i64) -> usize {
        let windows = windows_of(self.window.kind, self.window.offset, ts);
        self.assign_windows(key, bytes, row, windows)
    }

    /// Adds row `row` of key `bytes` to each of `windows` (start, end) that is not late.
    /// Returns how many were not late.
    fn assign_windows(
        &mut self,
        key: &mut Option<u32>,
        bytes: &[u8],
        row: u32,
        windows: impl IntoIterator<Item = (i64, i64)>,
    ) -> usize {
        let mut assigned = 0;
        let tumble = matches!(self.window.kind, GroupWindowKind::Tumble { .. });
        for (start, end) in windows {
            let open = key.and_then(|k| {
                if tumble {
                    // The key's few open windows, without a probe into a big map.
                    let slots = &self.slots;
                    self.keys
                        .value(k)
                        .iter()
                        .copied()
                        .find(|&s| slots[s as usize].end == end)
                } else {
                    self.fixed.get(&(k, end)).copied()
                }
            });
            let slot = match open {
                Some(slot) => Some(slot),
                None => {
                    let trigger = self.trigger_time(end);
                    if self.is_late(trigger) {
                        None
                    } else {
                        let k = *key.get_or_insert_with(|| self.intern(bytes));
                        Some(self.open_window(k, start, end))
                    }
                }
            };
            if let Some(slot) = slot
                && !self.is_late(self.slots[slot as usize].trigger)
            {
                self.pending.push(row, slot, self.retract_row);
                if let Some(emit) = &mut self.emit {
                    emit.assigned.push(slot);
                }
                assigned += 1;
            }
        }
        assigned
    }

    /// SESSION: the row's window `[ts, ts + gap)` merged with every window of the key it
    /// touches (Flink's `TimeWindow.intersects` counts windows that only meet). Returns
    /// whether the merged window was not late.
    fn assign_session(
        &mut self,
        batch: &RecordBatch,
        key: &mut Option<u32>,
        bytes: &[u8],
        row: u32,
        ts: i64,
        gap: i64,
    ) -> Result<bool, ExecError> {
        let (mut start, mut end) = (ts, ts.saturating_add(gap));
        let mut touched: Vec<u32> = Vec::new();
        if let Some(k) = *key {
            for &slot in self.keys.value(k) {
                let w = self.slots[slot as usize];
                if w.start <= end && w.end >= start {
                    touched.push(slot);
                }
            }
            for &slot in &touched {
                let w = self.slots[slot as usize];
                start = start.min(w.start);
                end = end.max(w.end);
            }
        }
        let trigger = self.trigger_time(end);
        if self.is_late(trigger) {
            return Ok(false);
        }
        let target = match touched.split_first() {
            None => {
                let k = *key.get_or_insert_with(|| self.intern(bytes));
                self.open_window(k, start, end)
            }
            Some((&target, others)) => {
                if !others.is_empty() {
                    // Pending rows may point at the windows about to merge away.
                    self.flush(batch)?;
                    for &other in others {
                        for a in &mut self.accumulators {
                            a.merge(target, other);
                        }
                        self.slots[target as usize].rows += self.slots[other as usize].rows;
                        self.close_window(other, false, false);
                    }
                }
                let old = self.slots[target as usize];
                self.remove_timer(old.timer, target);
                self.slots[target as usize] = Window {
                    start,
                    end,
                    trigger,
                    timer: trigger,
                    ..old
                };
                self.timers.entry(trigger).or_default().push(target);
                target
            }
        };
        self.pending.push(row, target, self.retract_row);
        Ok(true)
    }

    /// Sorts windows in the order they fire: by trigger time, then key bytes, then start.
    fn in_firing_order(&self, slots: &mut [u32]) {
        slots.sort_by(|&a, &b| {
            let (wa, wb) = (&self.slots[a as usize], &self.slots[b as usize]);
            (wa.trigger, &self.keys.bytes(wa.key), wa.start).cmp(&(
                wb.trigger,
                &self.keys.bytes(wb.key),
                wb.start,
            ))
        });
    }

    /// Fires every window whose trigger time is at or before `progress`.
    fn fire(&mut self, progress: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        let fired = if progress == i64::MAX {
            std::mem::take(&mut self.timers)
        } else {
            let later = self.timers.split_off(&(progress + 1));
            std::mem::replace(&mut self.timers, later)
        };
        if fired.is_empty() {
            return Ok(());
        }
        if self.emit.is_some() {
            return self.fire_with_emit(fired, progress, out);
        }
        let mut due: Vec<u32> = fired.into_values().flatten().collect();
        self.in_firing_order(&mut due);
        // Over a retracting input a window whose rows were all taken back emits nothing.
        let closing = due.clone();
        if self.retracting {
            due.retain(|&s| self.slots[s as usize].rows > 0);
        }
        let bounds: Vec<(i64, i64)> = due
            .iter()
            .map(|&s| (self.slots[s as usize].start, self.slots[s as usize].end))
            .collect();
        let batch = self.window_batch(
            due.iter()
                .map(|&s| self.keys.bytes(self.slots[s as usize].key)),
            &due,
            &bounds,
        )?;
        let in_bulk = closing.len() * 2 >= self.slots.len() - self.free_slots.len();
        for &slot in &closing {
            self.close_window(slot, true, in_bulk);
        }
        if in_bulk {
            let mut closed = vec![false; self.slots.len()];
            for &slot in &closing {
                closed[slot as usize] = true;
            }
            self.fixed.retain(|_, &mut slot| !closed[slot as usize]);
            self.keys.retain(|_, windows| !windows.is_empty());
        }
        if due.is_empty() {
            return Ok(());
        }
        out.emit(StreamChunk::inserts(batch))
    }
}

impl GroupWindowAggregateOperator {
    /// [`fire`] under an emit strategy: a window due at its trigger time fires (an insert, or
    /// an update if an early firing emitted before), and stays for late rows until its
    /// cleanup time if it has a lateness; one due at its cleanup time goes without a row.
    ///
    /// [`fire`]: GroupWindowAggregateOperator::fire
    fn fire_with_emit(
        &mut self,
        due: BTreeMap<i64, Vec<u32>>,
        progress: i64,
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        let mut firing = Vec::new();
        let mut closing = Vec::new();
        for (at, slots) in due {
            for slot in slots {
                let w = &self.slots[slot as usize];
                if w.fired || at != w.trigger {
                    closing.push(slot);
                } else {
                    firing.push(slot);
                }
            }
        }
        self.in_firing_order(&mut firing);
        let lateness = self.lateness();
        let rowtime = self.is_rowtime();
        let mut kept = Vec::new();
        for &slot in &firing {
            let w = &mut self.slots[slot as usize];
            w.fired = true;
            let cleanup = w.trigger.saturating_add(lateness);
            if rowtime && lateness > 0 && cleanup > progress {
                w.timer = cleanup;
                kept.push((cleanup, slot));
            } else {
                closing.push(slot);
            }
            // Its early firing, if pending, is over (Flink clears the early trigger).
            if let Some(emit) = &mut self.emit {
                emit.cancel_firing(slot);
            }
        }
        // Over a retracting input a window whose rows were all taken back emits nothing.
        if self.retracting {
            firing.retain(|&s| self.slots[s as usize].rows > 0);
        }
        self.emit_updates(&firing, out)?;
        for slot in closing {
            self.close_window(slot, true, false);
        }
        for (at, slot) in kept {
            self.timers.entry(at).or_default().push(slot);
        }
        Ok(())
    }
}

/// A batch's (row, slot) pairs not yet given to a window aggregate's accumulators, and over
/// a retracting input whether each takes its row back.
pub(crate) struct PendingRows {
    rows: Vec<u32>,
    slots: Vec<u32>,
    retract: Option<Vec<bool>>,
}

impl PendingRows {
    /// `retracting`: the input takes rows back (each pair then says whether it does).
    pub fn new(retracting: bool) -> Self {
        PendingRows {
            rows: Vec::new(),
            slots: Vec::new(),
            retract: retracting.then(Vec::new),
        }
    }

    /// Row `row` goes to slot `slot`; `retract`: it takes the row back (over a retracting
    /// input; ignored otherwise).
    pub fn push(&mut self, row: u32, slot: u32, retract: bool) {
        self.rows.push(row);
        self.slots.push(slot);
        if let Some(taken_back) = &mut self.retract {
            taken_back.push(retract);
        }
    }

    /// Hands the pairs to `accumulators` (rows of `batch`), then forgets them. Over a
    /// retracting input the pairs go to `update` or `retract`, and `count` moves each slot's
    /// row count by one either way.
    pub fn flush(
        &mut self,
        accumulators: &mut [Box<dyn GroupsAccumulator>],
        batch: &RecordBatch,
        count: &mut dyn FnMut(u32, i64),
    ) -> Result<(), ExecError> {
        accumulate(
            accumulators,
            batch,
            (&self.rows, &self.slots),
            self.retract.as_deref(),
            count,
        )?;
        self.rows.clear();
        self.slots.clear();
        if let Some(taken_back) = &mut self.retract {
            taken_back.clear();
        }
        Ok(())
    }
}

/// Hands a batch's (row, slot) pairs to `accumulators`; see [`PendingRows::flush`].
fn accumulate(
    accumulators: &mut [Box<dyn GroupsAccumulator>],
    batch: &RecordBatch,
    (rows, slots): (&[u32], &[u32]),
    retract: Option<&[bool]>,
    count: &mut dyn FnMut(u32, i64),
) -> Result<(), ExecError> {
    if rows.is_empty() {
        return Ok(());
    }
    let Some(retract) = retract else {
        for a in accumulators.iter_mut() {
            a.update(batch, rows, slots)?;
        }
        return Ok(());
    };
    for taken_back in [false, true] {
        let (rows, slots): (Vec<u32>, Vec<u32>) = rows
            .iter()
            .zip(slots)
            .zip(retract)
            .filter(|(_, r)| **r == taken_back)
            .map(|((&row, &slot), _)| (row, slot))
            .unzip();
        for &slot in &slots {
            count(slot, if taken_back { -1 } else { 1 });
        }
        for a in accumulators.iter_mut() {
            if taken_back {
                a.retract(batch, &rows, &slots)?;
            } else {
                a.update(batch, &rows, &slots)?;
            }
        }
    }
    Ok(())
}

/// What a window aggregate emits a fired window's row from: its key columns' encoder, its
/// accumulators, the properties it appends, its output, its window clock and clock.
pub(crate) struct WindowRows<'a> {
    pub encoder: Option<&'a KeyEncoder>,
    pub accumulators: &'a [Box<dyn GroupsAccumulator>],
    pub properties: &'a [WindowProperty],
    pub output: &'a SchemaRef,
    pub window_clock: &'a WindowClock,
    pub clock: &'a dyn Clock,
}

impl WindowRows<'_> {
    /// The rows of fired windows: each window's key (`keys`, bytes), its accumulators'
    /// results (`slots`), then its properties (`bounds`: start and end on the window clock).
    pub fn batch<'k>(
        &self,
        keys: impl Iterator<Item = &'k [u8]>,
        slots: &[u32],
        bounds: &[(i64, i64)],
    ) -> Result<RecordBatch, ExecError> {
        let aggregates = self
            .accumulators
            .iter()
            .map(|a| a.evaluate(slots))
            .collect::<Result<Vec<_>, _>>()?;
        self.batch_of(keys, aggregates, slots.len(), bounds)
    }

    /// The same rows (`rows` of them) with the aggregate values `aggregates` given.
    pub fn batch_of<'k>(
        &self,
        keys: impl Iterator<Item = &'k [u8]>,
        aggregates: Vec<ArrayRef>,
        rows: usize,
        bounds: &[(i64, i64)],
    ) -> Result<RecordBatch, ExecError> {
        let mut columns: Vec<ArrayRef> = match self.encoder {
            Some(encoder) => encoder.decode(keys)?,
            None => Vec::new(),
        };
        columns.extend(aggregates);
        let now = self.clock.now_nanos().div_euclid(NANOS_PER_MILLI);
        let first = columns.len();
        columns.extend(property_columns(
            self.properties,
            self.output,
            first,
            bounds,
            self.window_clock,
            now,
        ));
        Ok(batch_with_rows(self.output.clone(), columns, rows)?)
    }
}

/// The window property columns of emitted windows (`bounds`: start and end on the window
/// clock), in `properties`' order, typed as `output`'s fields from `first` on. `now`: the
/// firing time (ms), which a proctime property carries.
fn property_columns(
    properties: &[WindowProperty],
    output: &SchemaRef,
    first: usize,
    bounds: &[(i64, i64)],
    window_clock: &WindowClock,
    now: i64,
) -> Vec<ArrayRef> {
    // The windows of all keys share their ends.
    let mut last_rowtime = (i64::MIN, i64::MIN);
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(properties.len());
    for (i, property) in properties.iter().enumerate() {
        let field = output.field(first + i);
        let millis = bounds.iter().map(|&(start, end)| match property {
            WindowProperty::Start => start,
            WindowProperty::End => end,
            // Flink's `toEpochMills(window.maxTimestamp())`.
            WindowProperty::Rowtime => {
                if last_rowtime.0 != end {
                    last_rowtime = (end, window_clock.to_instant(end - 1));
                }
                last_rowtime.1
            }
            // Flink emits a placeholder that the PROCTIME_MATERIALIZE above turns into the
            // clock's time as the row passes; nothing above us materializes it, so the row
            // carries the firing time itself (the same instant: the row leaves as the window
            // fires).
            WindowProperty::Proctime => now,
        });
        let nanos = PrimitiveArray::<TimestampNanosecondType>::from_iter_values(
            millis.map(|m| m.saturating_mul(NANOS_PER_MILLI)),
        )
        .with_data_type(field.data_type().clone());
        columns.push(Arc::new(nanos));
    }
    columns
}

impl Operator for GroupWindowAggregateOperator {
    /// Rows dropped because every window they belong to had fired (Flink's
    /// `numLateRecordsDropped`).
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
        out: &mut dyn Output,
    ) -> Result<(), ExecError> {
        if !self.retracting && !chunk.is_insert_only() {
            return Err(ExecError::Internal(
                "a group window aggregate made for inserts was given updates".into(),
            ));
        }
        let batch = &chunk.batch;
        let rows = batch.num_rows();
        if rows == 0 {
            return Ok(());
        }
        let keys = self.encoder.as_ref().map(|e| e.encode(batch)).transpose()?;
        let rowtime = self.is_rowtime();
        let times = if rowtime {
            let column = batch.column(self.window.time_column);
            if column.null_count() > 0 {
                return Err(ExecError::Source(
                    "RowTime field should not be null, please convert it to a non-null long value."
                        .into(),
                ));
            }
            Some(
                column
                    .as_primitive_opt::<TimestampNanosecondType>()
                    .ok_or_else(|| {
                        ExecError::Internal("the time attribute is not a timestamp".into())
                    })?
                    .clone(),
            )
        } else {
            None
        };
        let now = self
            .window_clock
            .to_window_time(self.clock.now_nanos().div_euclid(NANOS_PER_MILLI));
        // Rows that carry their window: its start and end columns (window clock already).
        let attached = match self.attached {
            Some((start, end)) => {
                let millis = |c: usize| {
                    batch
                        .column(c)
                        .as_primitive_opt::<TimestampNanosecondType>()
                        .cloned()
                        .ok_or_else(|| {
                            ExecError::Internal("a window column is not a timestamp".into())
                        })
                };
                Some((millis(start)?, millis(end)?))
            }
            None => None,
        };
        let kind = self.window.kind;
        let mut previous: Option<(usize, Option<u32>)> = None;
        for row in 0..rows {
            let bytes = key_bytes(keys.as_ref(), row);
            let mut key = match previous {
                Some((p, key)) if keys.as_ref().is_none_or(|k| k.row(p).data() == bytes) => key,
                _ => self.key_id(bytes),
            };
            let ts = match &times {
                Some(t) => self
                    .window_clock
                    .to_window_time(t.value(row).div_euclid(NANOS_PER_MILLI)),
                None => now,
            };
            self.retract_row = matches!(
                chunk.kind(row),
                crate::types::chunk::RowKind::UpdateBefore | crate::types::chunk::RowKind::Delete
            );
            let assigned = match (kind, &attached) {
                (_, Some((start, end))) => {
                    let window = (
                        start.value(row).div_euclid(NANOS_PER_MILLI),
                        end.value(row).div_euclid(NANOS_PER_MILLI),
                    );
                    self.assign_windows(&mut key, bytes, row as u32, [window]) > 0
                }
                (GroupWindowKind::Session { gap }, None) => {
                    self.assign_session(batch, &mut key, bytes, row as u32, ts, gap)?
                }
                (_, None) => self.assign_fixed(&mut key, bytes, row as u32, ts) > 0,
            };
            if !assigned && rowtime {
                self.late_rows.add();
            }
            if self.emit.is_some() {
                let at_once = self.fired_by_row(self.clock.now_nanos().div_euclid(NANOS_PER_MILLI));
                if !at_once.is_empty() {
                    self.flush(batch)?;
                    self.emit_updates(&at_once, out)?;
                }
            }
            previous = Some((row, key));
        }
        self.flush(batch)
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        if watermark > self.watermark {
            self.watermark = watermark;
        }
        if self.is_rowtime() {
            self.fire(watermark, out)?;
        }
        out.emit_watermark(watermark)
    }

    fn next_processing_time(&self) -> Option<i64> {
        let delayed = self
            .emit
            .as_ref()
            .and_then(|e| e.firings.first_key_value().map(|(&t, _)| t));
        if self.is_rowtime() {
            return delayed;
        }
        let on_time = self.timers.first_key_value().map(|(&t, _)| t);
        delayed.into_iter().chain(on_time).min()
    }

    fn on_processing_time(&mut self, now: i64, out: &mut dyn Output) -> Result<(), ExecError> {
        self.fire_delayed(now, out)?;
        if self.is_rowtime() {
            return Ok(());
        }
        self.fire(now, out)
    }

    /// Per key group: for each key, its bytes, its windows' count, and per window its start,
    /// end and every accumulator's state.
    fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        let mut groups = GroupBuffers::default();
        for (_, key) in self.keys.iter() {
            let out = groups.group(key.key_group());
            put_bytes(out, key.bytes);
            put_u32(out, key.value.len() as u32);
            for &slot in key.value {
                let w = &self.slots[slot as usize];
                put_i64(out, w.start);
                put_i64(out, w.end);
                put_i64(out, w.rows);
                for a in &self.accumulators {
                    a.write_slot(slot, out);
                }
                if let Some(emit) = &self.emit {
                    put_i64(out, w.timer);
                    out.push(u8::from(w.fired));
                    put_i64(out, emit.next_firing[slot as usize].unwrap_or(i64::MIN));
                    match &emit.previous[slot as usize] {
                        Some(p) => {
                            out.push(1);
                            put_bytes(out, p);
                        }
                        None => out.push(0),
                    }
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
            let key = self.intern(bytes);
            for _ in 0..input.u32()? {
                let start = restored_window_time(input.i64()?)?;
                let end = restored_window_time(input.i64()?)?;
                let slot = self.open_window(key, start, end);
                self.slots[slot as usize].rows = input.i64()?;
                for a in &mut self.accumulators {
                    a.read_slot(slot, &mut input)?;
                }
                if self.emit.is_some() {
                    let timer = input.i64()?;
                    let fired = input.u8()? != 0;
                    let next_firing = input.i64()?;
                    let previous = match input.u8()? {
                        0 => None,
                        _ => Some(Box::<[u8]>::from(input.bytes()?)),
                    };
                    let w = self.slots[slot as usize];
                    self.remove_timer(w.timer, slot);
                    self.timers.entry(timer).or_default().push(slot);
                    self.slots[slot as usize].timer = timer;
                    self.slots[slot as usize].fired = fired;
                    if let Some(emit) = &mut self.emit {
                        emit.previous[slot as usize] = previous;
                        if next_firing != i64::MIN {
                            emit.next_firing[slot as usize] = Some(next_firing);
                            emit.firings.entry(next_firing).or_default().push(slot);
                        }
                    }
                }
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
#[path = "group_window_aggregate_tests.rs"]
mod tests;
