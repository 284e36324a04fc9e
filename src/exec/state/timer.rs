//! `EventTimers`: the event-time timers of a keyed window operator, as Flink's
//! `InternalTimerService` keeps them for event time. A timer is (time, key, window end): the
//! key a handle of the operator's [`KeyTable`], the window end the namespace saying which of
//! the key's windows it is for. A timer is set once however often it is registered, and the
//! watermark takes the due ones in the order Flink's window operators fire them: by time,
//! then key bytes, then window end.
//!
//! The timers of the window operators using this service follow from their state (each kept
//! window has its timer), so a restore registers them again as it restores the windows.

use std::collections::BTreeSet;

use super::key_table::KeyTable;

#[derive(Debug, Default)]
pub struct EventTimers {
    timers: BTreeSet<(i64, u32, i64)>,
}

impl EventTimers {
    pub fn new() -> Self {
        EventTimers::default()
    }

    /// Sets a timer at `time` for `key`'s window ending at `end`.
    pub fn register(&mut self, time: i64, key: u32, end: i64) {
        self.timers.insert((time, key, end));
    }

    /// The earliest timer's time.
    pub fn next_time(&self) -> Option<i64> {
        self.timers.first().map(|&(time, _, _)| time)
    }

    pub fn len(&self) -> usize {
        self.timers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.timers.is_empty()
    }

    /// Takes the timers at or before `time`, in firing order: time, then the key's bytes in
    /// `keys`, then window end.
    pub fn take_due<V: Default>(&mut self, time: i64, keys: &KeyTable<V>) -> Vec<(i64, u32, i64)> {
        // At the end of time every timer is due, those set at `i64::MAX` too.
        let later = match time.checked_add(1) {
            Some(after) => self.timers.split_off(&(after, 0, i64::MIN)),
            None => BTreeSet::new(),
        };
        let due = std::mem::replace(&mut self.timers, later);
        let mut due: Vec<(i64, u32, i64)> = due.into_iter().collect();
        due.sort_by(|a, b| (a.0, keys.bytes(a.1), a.2).cmp(&(b.0, keys.bytes(b.1), b.2)));
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_timers_fire_by_time_then_key_bytes_then_end() {
        let mut keys: KeyTable<u32> = KeyTable::new(128);
        let (b, _) = keys.intern(b"b");
        let (a, _) = keys.intern(b"a");
        let mut timers = EventTimers::new();
        timers.register(20, b, 30);
        timers.register(10, b, 20);
        timers.register(10, a, 25);
        timers.register(10, a, 15);
        timers.register(10, a, 15);
        timers.register(i64::MAX, a, 0);
        assert_eq!((timers.len(), timers.next_time()), (5, Some(10)));
        assert_eq!(
            timers.take_due(10, &keys),
            vec![(10, a, 15), (10, a, 25), (10, b, 20)]
        );
        assert_eq!(timers.take_due(19, &keys), vec![]);
        assert_eq!(
            timers.take_due(i64::MAX, &keys),
            vec![(20, b, 30), (i64::MAX, a, 0)]
        );
        assert!(timers.is_empty());
    }
}
