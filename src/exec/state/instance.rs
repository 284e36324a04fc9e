//! Instance state (what an operator instance holds that belongs to no key, docs/design/0008
//! §2): the layout every part starts with, and `LateRows`, a window operator's count of rows
//! dropped as late, kept as instance state so that the totals a job prints after a restore
//! equal an uninterrupted run's.
//!
//! A part is a version byte ([`INSTANCE_STATE_VERSION`]), then the operator's fields; a part
//! of another version, cut short, or longer than its layout is an error.
//!
//! Every new instance sees every old instance's part (union list state), so the count of an
//! old instance must be taken by exactly one new one: new instance `j` of `p` takes the parts
//! of the old instances `i` with `i % p == j` (its own at the same parallelism). That needs
//! the parts in old instance order and one part per old instance, so an operator counting
//! late rows always writes its part, a count of 0 too.

use crate::exec::aggregate::{StateReader, put_i64};
use crate::exec::error::ExecError;
use crate::exec::operator::OperatorContext;

#[derive(Debug, Clone, Copy)]
pub struct LateRows {
    count: u64,
    /// This instance's index and the parallelism, from `open`.
    index: u32,
    parallelism: u32,
}

impl Default for LateRows {
    fn default() -> Self {
        LateRows {
            count: 0,
            index: 0,
            parallelism: 1,
        }
    }
}

impl LateRows {
    /// Learns which instance this is (restoring needs it; `open` comes first).
    pub fn open(&mut self, ctx: &OperatorContext) {
        self.index = ctx.index;
        self.parallelism = ctx.parallelism.max(1);
    }

    /// One more row dropped.
    pub fn add(&mut self) {
        self.count += 1;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether this instance takes over the part of old instance `old` (see the module).
    pub fn takes(&self, old: usize) -> bool {
        old % self.parallelism as usize == self.index as usize
    }

    /// Appends the count to an instance part.
    pub fn write(&self, out: &mut Vec<u8>) {
        put_i64(out, self.count as i64);
    }

    /// Reads a count written by `write` (of old instance `old`), adding it when this
    /// instance takes that part over.
    pub fn read(&mut self, old: usize, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        let count = input.i64()?;
        if count < 0 {
            return Err(ExecError::Internal(format!(
                "a late-row count of {count} in a snapshot"
            )));
        }
        if self.takes(old) {
            self.count = self.count.saturating_add(count as u64);
        }
        Ok(())
    }
}

/// The first byte of every instance part: the layout of what follows. A part of another
/// version is refused rather than misread.
pub const INSTANCE_STATE_VERSION: u8 = 1;

/// A part holding the late-row count alone (the window operators without other instance
/// state).
pub fn snapshot_late_rows(late: &LateRows) -> Vec<u8> {
    let mut out = vec![INSTANCE_STATE_VERSION];
    late.write(&mut out);
    out
}

/// Takes back the late-row counts of `parts` (written by [`snapshot_late_rows`]): each is
/// checked whole, and added when this instance takes it over.
pub fn restore_late_rows(late: &mut LateRows, parts: &[&[u8]]) -> Result<(), ExecError> {
    late.count = 0;
    for (old, part) in parts.iter().enumerate() {
        let mut input = instance_part(part)?;
        late.read(old, &mut input)?;
        finished(&input)?;
    }
    Ok(())
}

/// A reader of an instance part after its version byte, which must be ours.
pub fn instance_part<'a>(part: &'a [u8]) -> Result<StateReader<'a>, ExecError> {
    let mut input = StateReader::new(part);
    let version = input.u8()?;
    if version != INSTANCE_STATE_VERSION {
        return Err(ExecError::Internal(format!(
            "instance state of version {version}, expected {INSTANCE_STATE_VERSION}"
        )));
    }
    Ok(input)
}

/// That a part or key group was read to its end: bytes left over mean another layout.
pub fn finished(input: &StateReader<'_>) -> Result<(), ExecError> {
    if input.is_empty() {
        return Ok(());
    }
    Err(ExecError::Internal(
        "operator state longer than its layout".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(index: u32, parallelism: u32) -> LateRows {
        let mut late = LateRows::default();
        let clock = crate::clock::ManualClock::new(0);
        late.open(&OperatorContext::instance(index, parallelism, 128, clock));
        late
    }

    /// Three old instances' counts, restored at two and at one: each counted exactly once.
    #[test]
    fn each_old_count_is_taken_by_one_new_instance() {
        let parts: Vec<Vec<u8>> = [5u64, 7, 11]
            .iter()
            .map(|&n| {
                let mut late = LateRows::default();
                (0..n).for_each(|_| late.add());
                snapshot_late_rows(&late)
            })
            .collect();
        let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        let (mut a, mut b, mut one) = (at(0, 2), at(1, 2), at(0, 1));
        for late in [&mut a, &mut b, &mut one] {
            restore_late_rows(late, &parts).unwrap();
        }
        assert_eq!((a.count(), b.count(), one.count()), (16, 7, 23));
        assert!(restore_late_rows(&mut one, &[&parts[0][..5]]).is_err());
        assert!(restore_late_rows(&mut one, &[&[2, 0, 0, 0, 0, 0, 0, 0, 0]]).is_err());
        assert!(restore_late_rows(&mut one, &[&[parts[0], &[0][..]].concat()]).is_err());
    }
}
