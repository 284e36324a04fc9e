//! The one door to the wall clock. Everything that reads "now" (time functions, processing
//! time) asks a [`Clock`], so tests can pin time and the same query gives the same rows.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Nanoseconds since the epoch.
    fn now_nanos(&self) -> i64;
}

#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_nanos(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i64)
            .unwrap_or(0)
    }
}

/// A clock that shows a set time until moved; for tests.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(nanos: i64) -> Arc<Self> {
        Arc::new(ManualClock(AtomicI64::new(nanos)))
    }
    pub fn set(&self, nanos: i64) {
        self.0.store(nanos, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_nanos(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}
