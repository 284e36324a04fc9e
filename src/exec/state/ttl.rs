//! `StateTtl`: `table.exec.state.ttl` as the keyed operators apply it, Flink's state TTL
//! for SQL: processing time, refreshed when state is created or written, expired state never
//! returned (each operator checks it where it reads), and a sweep every TTL frees what
//! expired.

use super::pages::{FrozenVec, PagedVec};

/// An operator's state TTL and when its next sweep is due.
#[derive(Debug, Clone, Copy, Default)]
pub struct StateTtl {
    /// Milliseconds; `None`: state is kept for ever.
    ttl: Option<i64>,
    next_sweep: Option<i64>,
}

impl StateTtl {
    /// A TTL of `ttl` milliseconds (0 or less: none).
    pub fn new(ttl: i64) -> Self {
        StateTtl {
            ttl: (ttl > 0).then_some(ttl),
            next_sweep: None,
        }
    }

    pub fn is_on(&self) -> bool {
        self.ttl.is_some()
    }

    /// Whether state last written at `written` has expired at `now` (milliseconds).
    pub fn expired(&self, written: i64, now: i64) -> bool {
        self.ttl
            .is_some_and(|ttl| now.saturating_sub(written) >= ttl)
    }

    /// Schedules the first sweep, one TTL after `now` (when the operator opens).
    pub fn start(&mut self, now: i64) {
        self.next_sweep = self.ttl.map(|ttl| now.saturating_add(ttl));
    }

    /// When the next sweep is due (for `Operator::next_processing_time`).
    pub fn next_sweep(&self) -> Option<i64> {
        self.next_sweep
    }

    /// Whether a sweep is due at `now`; if so the next one is scheduled a TTL later.
    pub fn sweep_due(&mut self, now: i64) -> bool {
        let Some(ttl) = self.ttl else {
            return false;
        };
        self.next_sweep = Some(now.saturating_add(ttl));
        true
    }
}

/// A write time in a snapshot: `i64::MIN` for never (a TTL that is off writes none).
pub const NEVER_WRITTEN: i64 = i64::MIN;

/// When each key id was last written, for operators whose state lives in vectors indexed by
/// key id (an id reused by a new key is written anew). Kept in pages, to freeze for a
/// checkpoint.
#[derive(Default)]
pub struct WrittenAt(PagedVec<i64>);

impl WrittenAt {
    pub fn touch(&mut self, id: usize, now: i64) {
        if self.0.len() <= id {
            self.0.grow(id + 1, now);
        }
        self.0[id] = now;
    }

    /// When id `id` was last written, if ever.
    pub fn get(&self, id: usize) -> Option<i64> {
        self.0.get(id).copied()
    }

    /// Whether id `id` has outlived `ttl` at `now` (an id never written has not).
    pub fn expired(&self, ttl: &StateTtl, id: usize, now: i64) -> bool {
        self.0.get(id).is_some_and(|&w| ttl.expired(w, now))
    }

    /// The write times as they are now.
    pub fn freeze(&self) -> FrozenWrittenAt {
        FrozenWrittenAt(self.0.freeze())
    }
}

/// [`WrittenAt`] as it was when frozen.
pub struct FrozenWrittenAt(FrozenVec<i64>);

impl FrozenWrittenAt {
    /// When id `id` had last been written, as a snapshot records it.
    pub fn get(&self, id: usize) -> i64 {
        self.0.get(id).copied().unwrap_or(NEVER_WRITTEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_and_sweeps_follow_the_ttl() {
        let mut ttl = StateTtl::new(1_000);
        ttl.start(500);
        assert_eq!(ttl.next_sweep(), Some(1_500));
        assert!(!ttl.expired(0, 999) && ttl.expired(0, 1_000));
        assert!(ttl.sweep_due(1_500));
        assert_eq!(ttl.next_sweep(), Some(2_500));
        let mut none = StateTtl::new(0);
        none.start(0);
        assert!(!none.is_on() && none.next_sweep().is_none() && !none.expired(0, i64::MAX));
        assert!(!none.sweep_due(10));
    }
}
