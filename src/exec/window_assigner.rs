//! Which windows a row's time belongs to: TUMBLE, HOP and CUMULATE windows as Flink's
//! `TumblingWindowAssigner`, `SlidingWindowAssigner` and `CumulativeWindowAssigner` list
//! them. Times are milliseconds of the window clock (the wall clock for TIMESTAMP_LTZ); the
//! group window aggregate and the window table function both ask here, so a row lands in
//! the same windows whether it is aggregated or only windowed.

use std::cell::Cell;

use crate::plan::aggregate::GroupWindowKind;
use crate::types::time::SessionZone;
use crate::types::{DataType, TypeKind};

const NANOS_PER_MILLI: i64 = 1_000_000;

/// The clock windows are laid out on: UTC milliseconds as they are, or, over a
/// TIMESTAMP_LTZ time attribute in a session zone other than UTC itself, that zone's wall
/// clock (Flink's shift; a zone of offset 0 named otherwise shifts by nothing).
#[derive(Debug, Clone)]
pub struct WindowClock {
    zone: Option<SessionZone>,
    /// The last second whose offset was looked up, and the offset (ms): rows of one second
    /// share it, and a tz lookup per row would cost more than the rest of the row.
    last_offset: Cell<(i64, i64)>,
}

const MILLIS_PER_HOUR: i64 = 3_600_000;

impl WindowClock {
    pub fn new(time_type: &DataType, zone: SessionZone) -> Self {
        let shifted = matches!(time_type.kind, TypeKind::TimestampLtz(_)) && zone.name() != "UTC";
        WindowClock {
            zone: shifted.then_some(zone),
            last_offset: Cell::new((i64::MIN, 0)),
        }
    }

    /// The zone windows are aligned in, if they are shifted at all.
    pub fn zone(&self) -> Option<&SessionZone> {
        self.zone.as_ref()
    }

    /// A UTC instant (ms) as the window clock shows it.
    pub fn to_window_time(&self, millis: i64) -> i64 {
        let Some(zone) = &self.zone else {
            return millis;
        };
        let second = millis.div_euclid(1000);
        let offset = match self.last_offset.get() {
            (s, o) if s == second => o,
            _ => {
                let o = zone.offset_seconds_at(second) * 1000;
                self.last_offset.set((second, o));
                o
            }
        };
        millis.saturating_add(offset)
    }

    /// Whether the zone observes daylight saving time around `now_millis` (Java's
    /// `TimeZone.useDaylightTime`: does its offset change within the year?). Flink corrects
    /// trigger times around transitions only then.
    pub fn observes_daylight_time(&self, now_millis: i64) -> bool {
        let Some(zone) = &self.zone else {
            return false;
        };
        let now = now_millis.div_euclid(1000);
        let year = 365 * 24 * 3600;
        let offsets: Vec<i64> = (0..12)
            .map(|m| zone.offset_seconds_at(now + m * year / 12))
            .collect();
        offsets.iter().any(|&o| o != offsets[0])
    }

    /// The UTC instant (ms) at which a window ending at window-clock time `end` fires: its
    /// last millisecond's instant, as Flink's `TimeWindowUtil.toEpochMillsForTimer` corrects
    /// it when the zone observes daylight time (`daylight_time`): the first instant after a
    /// skipped hour, the later pass of a repeated one.
    pub fn trigger_time(&self, end: i64, daylight_time: bool) -> i64 {
        let local = end - 1;
        let t1 = self.to_instant(local);
        if self.zone.is_none() || !daylight_time {
            return t1;
        }
        let t2 = self.to_instant(local + MILLIS_PER_HOUR);
        if t1 == t2 {
            // The hour after `local` was skipped: fire at the first instant after the gap.
            t1 - t1 % MILLIS_PER_HOUR
        } else if t2 - t1 > MILLIS_PER_HOUR {
            // The hour repeats: fire after its second pass.
            t1 + MILLIS_PER_HOUR
        } else {
            t1
        }
    }

    /// The UTC instant of a window-clock time (java.time's `atZone`: a time in a gap moves
    /// forward by the gap, a repeated time takes the earlier offset).
    pub fn to_instant(&self, local: i64) -> i64 {
        match &self.zone {
            None => local,
            Some(z) => z
                .from_local(local.saturating_mul(NANOS_PER_MILLI))
                .div_euclid(NANOS_PER_MILLI),
        }
    }
}

/// The largest window time (ms, either side of 1970) a snapshot may hold: far beyond any
/// TIMESTAMP(3) (year 9999 is 2.5e14), far enough from `i64`'s ends that trigger times,
/// DST corrections included, cannot overflow.
const MAX_RESTORED_WINDOW_TIME: i64 = 1 << 60;

/// A window bound read from a snapshot, or the error saying it is corrupt.
pub fn restored_window_time(time: i64) -> Result<i64, crate::exec::error::ExecError> {
    if time.unsigned_abs() <= MAX_RESTORED_WINDOW_TIME as u64 {
        return Ok(time);
    }
    Err(crate::exec::error::ExecError::Internal(format!(
        "a window time of {time} in a snapshot"
    )))
}

/// The start of the window of `size` holding `ts`, windows starting at `offset` modulo
/// `size` (Flink's `TimeWindow.getWindowStartWithOffset`, Java's `%` included, so a negative
/// remainder moves the start past `ts` exactly as Flink does).
pub fn window_start(ts: i64, offset: i64, size: i64) -> i64 {
    let remainder = ts.wrapping_sub(offset).wrapping_add(size) % size;
    ts.wrapping_sub(remainder)
}

/// The windows `(start, end)` holding `ts`: TUMBLE's one, HOP's newest first, CUMULATE's
/// shortest first, one at a time (a HOP or CUMULATE of a long size over a short slide puts
/// millions on a row). SESSION windows depend on other rows; none are listed.
pub fn windows_of(
    kind: GroupWindowKind,
    offset: i64,
    ts: i64,
) -> impl DoubleEndedIterator<Item = (i64, i64)> {
    // (first, step, count) of the windows' starts and ends.
    let (first, step, count) = match kind {
        GroupWindowKind::Tumble { size } => {
            let start = window_start(ts, offset, size);
            ((start, start.wrapping_add(size)), (0, 0), 1)
        }
        GroupWindowKind::Hop { slide, size } => {
            let newest = window_start(ts, offset, slide);
            let count = hop_count(newest, ts, slide, size);
            ((newest, newest.wrapping_add(size)), (-slide, -slide), count)
        }
        GroupWindowKind::Cumulate { step, size } => {
            let start = window_start(ts, offset, size);
            let first_end = window_start(ts, offset, step).wrapping_add(step);
            let last_end = start.wrapping_add(size);
            let count = if first_end > last_end {
                0
            } else {
                (last_end - first_end) / step + 1
            };
            ((start, first_end), (0, step), count)
        }
        GroupWindowKind::Session { .. } => ((0, 0), (0, 0), 0),
    };
    (0..count).map(move |i| {
        (
            first.0.wrapping_add(i.wrapping_mul(step.0)),
            first.1.wrapping_add(i.wrapping_mul(step.1)),
        )
    })
}

/// How many HOP windows hold `ts`: those starting at `newest` and every `slide` before it
/// while the start is after `ts − size`.
fn hop_count(newest: i64, ts: i64, slide: i64, size: i64) -> i64 {
    let room = i128::from(newest) - (i128::from(ts) - i128::from(size));
    if room <= 0 {
        0
    } else {
        ((room + i128::from(slide) - 1) / i128::from(slide)) as i64
    }
}

/// The ends of the first and the last window holding `ts` (ends come `spacing` apart
/// between them), without listing the windows; `None` when no window holds `ts`.
pub fn window_end_range(kind: GroupWindowKind, offset: i64, ts: i64) -> Option<(i64, i64)> {
    let mut windows = windows_of(kind, offset, ts);
    let first = windows.next()?.1;
    let last = windows.next_back().map_or(first, |w| w.1);
    Some((first.min(last), first.max(last)))
}

/// One of `key`'s open windows is done: the key goes with its last.
pub fn close_window(keys: &mut crate::exec::state::key_table::KeyTable<u32>, key: u32) {
    let open = keys.value_mut(key);
    *open -= 1;
    if *open == 0 {
        keys.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(kind: GroupWindowKind, offset: i64, ts: i64) -> Vec<(i64, i64)> {
        windows_of(kind, offset, ts).collect()
    }

    #[test]
    fn tumble_with_and_without_offset() {
        let kind = GroupWindowKind::Tumble { size: 10 };
        assert_eq!(windows(kind, 0, 21), vec![(20, 30)]);
        assert_eq!(windows(kind, 3, 21), vec![(13, 23)]);
        assert_eq!(windows(kind, 0, -1), vec![(-10, 0)]);
    }

    #[test]
    fn hop_newest_first() {
        let kind = GroupWindowKind::Hop {
            slide: 10,
            size: 20,
        };
        assert_eq!(windows(kind, 0, 21), vec![(20, 40), (10, 30)]);
        assert_eq!(windows(kind, 5, 21), vec![(15, 35), (5, 25)]);
    }

    #[test]
    fn cumulate_shortest_first() {
        let kind = GroupWindowKind::Cumulate { step: 10, size: 30 };
        assert_eq!(windows(kind, 0, 1), vec![(0, 10), (0, 20), (0, 30)]);
        assert_eq!(windows(kind, 0, 12), vec![(0, 20), (0, 30)]);
        assert_eq!(windows(kind, 5, 1), vec![(-25, 5)]);
    }

    #[test]
    fn end_range_is_the_listed_windows_ends_without_listing_them() {
        let kinds = [
            GroupWindowKind::Tumble { size: 10 },
            GroupWindowKind::Hop { slide: 3, size: 10 },
            GroupWindowKind::Hop {
                slide: 10,
                size: 10,
            },
            GroupWindowKind::Cumulate { step: 3, size: 12 },
            GroupWindowKind::Cumulate { step: 4, size: 12 },
        ];
        for kind in kinds {
            for offset in [-7, 0, 5] {
                for ts in -40..40 {
                    let listed = windows(kind, offset, ts);
                    let ends = listed.iter().map(|w| w.1);
                    let expected = ends.clone().min().zip(ends.max());
                    assert_eq!(window_end_range(kind, offset, ts), expected, "{ts}");
                }
            }
        }
        // A century of one-second steps: 3.15e9 windows, not listed.
        let day = 86_400_000;
        let kind = GroupWindowKind::Cumulate {
            step: 1_000,
            size: 36_500 * day,
        };
        let (first, last) = window_end_range(kind, 0, 1_500).unwrap();
        assert_eq!((first, last), (2_000, 36_500 * day));
        assert_eq!(windows_of(kind, 0, 1_500).size_hint().0, 3_153_599_999);
    }
}
