//! Which windows a row's time belongs to: TUMBLE, HOP and CUMULATE windows as Flink's
//! `TumblingWindowAssigner`, `SlidingWindowAssigner` and `CumulativeWindowAssigner` list
//! them. Times are milliseconds of the window clock (the wall clock for TIMESTAMP_LTZ); the
//! group window aggregate and the window table function both ask here, so a row lands in
//! the same windows whether it is aggregated or only windowed.

use crate::plan::aggregate::GroupWindowKind;

/// The start of the window of `size` holding `ts`, windows starting at `offset` modulo
/// `size` (Flink's `TimeWindow.getWindowStartWithOffset`, Java's `%` included, so a negative
/// remainder moves the start past `ts` exactly as Flink does).
pub fn window_start(ts: i64, offset: i64, size: i64) -> i64 {
    let remainder = ts.wrapping_sub(offset).wrapping_add(size) % size;
    ts.wrapping_sub(remainder)
}

/// Appends the windows `(start, end)` holding `ts`: TUMBLE's one, HOP's newest first,
/// CUMULATE's shortest first. SESSION windows depend on other rows; none are listed.
pub fn assign_windows(kind: GroupWindowKind, offset: i64, ts: i64, out: &mut Vec<(i64, i64)>) {
    match kind {
        GroupWindowKind::Tumble { size } => {
            let start = window_start(ts, offset, size);
            out.push((start, start.wrapping_add(size)));
        }
        GroupWindowKind::Hop { slide, size } => {
            let mut start = window_start(ts, offset, slide);
            while start > ts.wrapping_sub(size) {
                out.push((start, start.wrapping_add(size)));
                start = start.wrapping_sub(slide);
            }
        }
        GroupWindowKind::Cumulate { step, size } => {
            let start = window_start(ts, offset, size);
            let last_end = start.wrapping_add(size);
            let mut end = window_start(ts, offset, step).wrapping_add(step);
            while end <= last_end {
                out.push((start, end));
                end = end.wrapping_add(step);
            }
        }
        GroupWindowKind::Session { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(kind: GroupWindowKind, offset: i64, ts: i64) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        assign_windows(kind, offset, ts, &mut out);
        out
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
}
