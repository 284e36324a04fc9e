//! `Keyed`: what every keyed operator holds beside its own state — the keys it has state
//! for, the key groups its instance owns, and the state TTL — and opens the same way.

use super::key_group::KeyGroupRange;
use super::key_table::KeyTable;
use super::ttl::StateTtl;
use crate::exec::error::ExecError;
use crate::exec::operator::OperatorContext;

pub struct Keyed<V> {
    /// The keys with state, each with the operator's value for it.
    pub keys: KeyTable<V>,
    /// The key groups this instance owns (set when it opens).
    pub key_groups: KeyGroupRange,
    /// `table.exec.state.ttl` (or a hint's): a key not written for this long is forgotten.
    pub ttl: StateTtl,
}

impl<V: Default> Keyed<V> {
    /// No keys yet, the key groups of a lone instance, no TTL.
    pub fn new() -> Self {
        let ctx = OperatorContext::default();
        Keyed {
            keys: KeyTable::new(ctx.max_parallelism),
            key_groups: ctx.key_groups,
            ttl: StateTtl::default(),
        }
    }

    /// Takes the instance's key groups and max parallelism, and schedules the first TTL
    /// sweep.
    pub fn open(&mut self, ctx: &OperatorContext) {
        self.keys.set_max_parallelism(ctx.max_parallelism);
        self.key_groups = ctx.key_groups;
        self.ttl.start(ctx.now_millis());
    }

    /// That a restored key group is this instance's.
    pub fn check_owned(&self, key_group: u32) -> Result<(), ExecError> {
        self.key_groups.check_owned(key_group)
    }
}

impl<V: Default> Default for Keyed<V> {
    fn default() -> Self {
        Keyed::new()
    }
}
