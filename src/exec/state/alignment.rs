//! Watermark alignment (`scan.watermark.alignment.*`): the splits of one alignment group stop
//! reading while their watermark is more than `max-drift` ahead of the group's slowest split,
//! so that window state stays bounded when one split is far behind.
//!
//! A split counts from the moment it starts reading until it ends or goes idle, so splits
//! queued behind the running ones never hold the group back (they could not start while the
//! ones ahead waited for them).

use std::sync::{Arc, Mutex};

#[derive(Debug)]
pub struct AlignmentGroup {
    /// `scan.watermark.alignment.max-drift`, in milliseconds.
    max_drift: i64,
    /// `scan.watermark.alignment.update-interval`, in milliseconds: how often a paused split
    /// looks again.
    pub update_interval: i64,
    members: Mutex<Vec<Member>>,
}

#[derive(Debug, Clone, Copy)]
struct Member {
    watermark: i64,
    /// Started, not ended, not idle.
    counts: bool,
}

impl AlignmentGroup {
    pub fn new(max_drift: i64, update_interval: i64) -> Arc<Self> {
        Arc::new(AlignmentGroup {
            max_drift,
            update_interval,
            members: Mutex::new(Vec::new()),
        })
    }

    /// A new member of the group, not counting until it starts.
    pub fn join(self: &Arc<Self>) -> AlignmentMember {
        let mut members = self.members.lock().unwrap_or_else(|e| e.into_inner());
        members.push(Member {
            watermark: i64::MIN,
            counts: false,
        });
        AlignmentMember {
            group: self.clone(),
            index: members.len() - 1,
        }
    }

    fn update(&self, index: usize, change: impl FnOnce(&mut Member)) {
        let mut members = self.members.lock().unwrap_or_else(|e| e.into_inner());
        change(&mut members[index]);
    }
}

/// One split's place in its alignment group.
#[derive(Debug)]
pub struct AlignmentMember {
    group: Arc<AlignmentGroup>,
    index: usize,
}

impl AlignmentMember {
    /// The split started reading (or came back from idle).
    pub fn start(&self) {
        self.group.update(self.index, |m| m.counts = true);
    }

    /// The split ended or went idle: it no longer holds the group back.
    pub fn leave(&self) {
        self.group.update(self.index, |m| m.counts = false);
    }

    /// The split emitted a watermark.
    pub fn report(&self, watermark: i64) {
        self.group
            .update(self.index, |m| m.watermark = m.watermark.max(watermark));
    }

    /// Whether the split must stop reading for now: its watermark is more than the maximum
    /// drift ahead of the slowest counting split.
    pub fn must_pause(&self) -> bool {
        let members = self.group.members.lock().unwrap_or_else(|e| e.into_inner());
        let own = members[self.index];
        if !own.counts {
            return false;
        }
        let slowest = members
            .iter()
            .filter(|m| m.counts)
            .map(|m| m.watermark)
            .min()
            .unwrap_or(own.watermark);
        own.watermark > slowest.saturating_add(self.group.max_drift)
    }

    pub fn update_interval(&self) -> i64 {
        self.group.update_interval
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_ahead_of_the_slowest_by_more_than_the_drift_pauses() {
        let group = AlignmentGroup::new(60_000, 1_000);
        let (a, b, queued) = (group.join(), group.join(), group.join());
        a.start();
        b.start();
        a.report(100_000);
        b.report(10_000);
        assert!(a.must_pause());
        assert!(!b.must_pause());
        // Within the drift: reading again.
        b.report(40_000);
        assert!(!a.must_pause());
        // A split that has not started holds nobody back; one that started without a
        // watermark yet does.
        assert!(!queued.must_pause());
        queued.start();
        assert!(a.must_pause() && b.must_pause());
        // Ended (or idle) splits do not count.
        queued.leave();
        b.leave();
        assert!(!a.must_pause());
    }
}
