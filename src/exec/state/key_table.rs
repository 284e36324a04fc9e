//! `KeyTable`: the keys an operator holds state for, each found by its `arrow-row` bytes and
//! given a small dense id (its state lives in vectors indexed by the id, as accumulator slots
//! do). A removed key's id is reused by the next new key.
//!
//! Memory per key is what keyed state costs, so the table keeps no more than it must: the
//! hash table holds ids only; the keys' bytes are in a [`ByteStore`] (side by side while
//! they have one width); the values are a vector of their own; liveness is a bit; a key's
//! key group is computed from its bytes when a snapshot asks for it.

use std::hash::BuildHasher;

use hashbrown::hash_table::Entry;
use hashbrown::{DefaultHashBuilder, HashTable};

use super::byte_store::{ByteStore, FrozenByteStore};
use super::key::same_key;
use super::key_group::key_group_of;
use super::pages::{FrozenBits, PagedBits};
use crate::exec::error::ExecError;
use crate::exec::operator::PartSink;

pub struct KeyTable<V> {
    ids: HashTable<u32>,
    hasher: DefaultHashBuilder,
    keys: ByteStore,
    values: Vec<V>,
    /// A bit per id: set while the id holds a key (clear: on the free list).
    live: PagedBits,
    free: Vec<u32>,
    max_parallelism: u32,
    /// Keys added by [`add_unindexed`](Self::add_unindexed) and not indexed yet: the last
    /// ids handed out.
    unindexed: usize,
}

/// A live key as [`KeyTable::iter`] gives it.
pub struct KeyRef<'a, V> {
    pub bytes: &'a [u8],
    pub value: &'a V,
    max_parallelism: u32,
}

impl<V> KeyRef<'_, V> {
    /// The key's key group (what snapshots are cut by).
    pub fn key_group(&self) -> u32 {
        key_group_of(self.bytes, self.max_parallelism)
    }
}

impl<V: Default> KeyTable<V> {
    /// Keys spread over the key groups of `max_parallelism`.
    pub fn new(max_parallelism: u32) -> Self {
        KeyTable {
            ids: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
            keys: ByteStore::default(),
            values: Vec::new(),
            live: PagedBits::default(),
            free: Vec::new(),
            max_parallelism,
            unindexed: 0,
        }
    }

    /// Sets the key groups' count (`open` learns it after construction).
    pub fn set_max_parallelism(&mut self, max_parallelism: u32) {
        self.max_parallelism = max_parallelism;
    }

    /// The id of a live key.
    pub fn find(&self, bytes: &[u8]) -> Option<u32> {
        let hash = self.hasher.hash_one(bytes);
        self.ids
            .find(hash, |&id| same_key(self.keys.get(id), bytes))
            .copied()
    }

    /// The id of the key, and whether it is new (then its value is the default).
    pub fn intern(&mut self, bytes: &[u8]) -> (u32, bool) {
        let hash = self.hasher.hash_one(bytes);
        let keys = &self.keys;
        if let Some(&id) = self.ids.find(hash, |&id| same_key(keys.get(id), bytes)) {
            return (id, false);
        }
        let ids = self.values.len();
        let id = match self.free.pop() {
            Some(id) => {
                self.values[id as usize] = V::default();
                id
            }
            None => {
                self.values.push(V::default());
                self.live.grow(ids + 1);
                ids as u32
            }
        };
        self.keys.set(id, ids, bytes);
        self.live.set(id as usize, true);
        let (keys, hasher) = (&self.keys, &self.hasher);
        self.ids
            .insert_unique(hash, id, |&id| hasher.hash_one(keys.get(id)));
        (id, true)
    }

    /// Adds a key that is not in the table (a restore's: a snapshot holds each key once)
    /// without indexing it: [`index_added`](Self::index_added) indexes every key added so,
    /// and must come before the table is used again.
    pub fn add_unindexed(&mut self, bytes: &[u8]) -> u32 {
        let id = self.values.len();
        self.values.push(V::default());
        self.live.grow(id + 1);
        self.live.set(id, true);
        self.keys.set(id as u32, id, bytes);
        self.unindexed += 1;
        id as u32
    }

    /// Indexes the keys [`add_unindexed`](Self::add_unindexed) added. Inserting them in the
    /// order they come would jump at random through a table far larger than the caches (a
    /// miss or two per key, most of a restore's time): a few million at a time, they are
    /// sorted by the region of the table their probe starts in and inserted region by
    /// region, each region's inserts within the caches. A key added twice is refused (its
    /// id is returned).
    pub fn index_added(&mut self) -> Result<(), u32> {
        /// Keys sorted at a time (their hashes and ids: 64 MiB).
        const CHUNK: usize = 1 << 22;
        /// Regions of the table.
        const REGION_BITS: u32 = 12;
        let n = std::mem::take(&mut self.unindexed);
        let first = self.values.len() - n;
        let (keys, hasher) = (&self.keys, &self.hasher);
        self.ids.reserve(n, |&id| hasher.hash_one(keys.get(id)));
        // hashbrown's table: a power of two of buckets, 7/8 of them usable (`capacity`), a
        // probe starting at the hash's low bits. A region: the top bits of that start.
        let buckets = (self.ids.capacity() / 7 * 8).max(1).next_power_of_two();
        let shift = buckets.trailing_zeros().saturating_sub(REGION_BITS);
        let region = |hash: u64| (hash as usize & (buckets - 1)) >> shift;
        let mut hashed: Vec<(u64, u32)> = Vec::with_capacity(n.min(CHUNK));
        let mut sorted: Vec<(u64, u32)> = vec![(0, 0); n.min(CHUNK)];
        let mut starts = vec![0usize; (1 << REGION_BITS) + 1];
        for chunk in (first..first + n).step_by(CHUNK) {
            hashed.clear();
            starts.fill(0);
            for id in chunk..(chunk + CHUNK).min(first + n) {
                let hash = hasher.hash_one(keys.get(id as u32));
                starts[region(hash) + 1] += 1;
                hashed.push((hash, id as u32));
            }
            for r in 1..starts.len() {
                starts[r] += starts[r - 1];
            }
            for &(hash, id) in &hashed {
                let at = &mut starts[region(hash)];
                sorted[*at] = (hash, id);
                *at += 1;
            }
            for &(hash, id) in &sorted[..hashed.len()] {
                let bytes = keys.get(id);
                match self.ids.entry(
                    hash,
                    |&other| same_key(keys.get(other), bytes),
                    |&id| hasher.hash_one(keys.get(id)),
                ) {
                    Entry::Occupied(_) => return Err(id),
                    Entry::Vacant(slot) => {
                        slot.insert(id);
                    }
                }
            }
        }
        Ok(())
    }

    /// The bytes of key `id`.
    pub fn bytes(&self, id: u32) -> &[u8] {
        self.keys.get(id)
    }

    /// The key group of key `id`.
    pub fn key_group(&self, id: u32) -> u32 {
        key_group_of(self.keys.get(id), self.max_parallelism)
    }

    pub fn value(&self, id: u32) -> &V {
        &self.values[id as usize]
    }

    pub fn value_mut(&mut self, id: u32) -> &mut V {
        &mut self.values[id as usize]
    }

    /// Whether id `id` holds a key now.
    pub fn is_live(&self, id: u32) -> bool {
        self.live.get(id as usize)
    }

    /// Forgets a live key; its id goes to the next new key.
    pub fn remove(&mut self, id: u32) {
        debug_assert!(self.is_live(id), "key {id} removed twice");
        let hash = self.hasher.hash_one(self.keys.get(id));
        if let Ok(found) = self.ids.find_entry(hash, |&i| i == id) {
            found.remove();
        }
        self.live.set(id as usize, false);
        self.free.push(id);
    }

    /// Forgets every live key whose value `keep` refuses, in one pass over the table (cheaper
    /// than a probe per key when many go at once).
    pub fn retain(&mut self, mut keep: impl FnMut(u32, &V) -> bool) {
        let (values, live, free) = (&self.values, &mut self.live, &mut self.free);
        self.ids.retain(|&mut id| {
            if keep(id, &values[id as usize]) {
                return true;
            }
            live.set(id as usize, false);
            free.push(id);
            false
        });
    }

    /// Ids ever handed out (live or free): the length state vectors indexed by id need.
    pub fn capacity(&self) -> usize {
        self.values.len()
    }

    /// Live keys.
    pub fn len(&self) -> usize {
        self.values.len() - self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The live keys with their ids, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, KeyRef<'_, V>)> {
        (0..self.values.len() as u32)
            .filter(|&id| self.is_live(id))
            .map(|id| {
                (
                    id,
                    KeyRef {
                        bytes: self.keys.get(id),
                        value: &self.values[id as usize],
                        max_parallelism: self.max_parallelism,
                    },
                )
            })
    }

    /// A read-only view of the keys as they are now, for a checkpoint's writer
    /// (docs/design/0008 §7): their bytes and which ids are live, not the hash index.
    pub fn freeze(&self) -> FrozenKeys {
        FrozenKeys {
            keys: self.keys.freeze(),
            live: self.live.freeze(),
            max_parallelism: self.max_parallelism,
        }
    }
}

/// A [`KeyTable`]'s keys as they were when frozen.
pub struct FrozenKeys {
    keys: FrozenByteStore,
    live: FrozenBits,
    max_parallelism: u32,
}

impl FrozenKeys {
    /// The live ids, in id order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.live.len() as u32).filter(|&id| self.live.get(id as usize))
    }

    pub fn bytes(&self, id: u32) -> &[u8] {
        self.keys.get(id)
    }

    pub fn key_group(&self, id: u32) -> u32 {
        key_group_of(self.keys.get(id), self.max_parallelism)
    }

    /// Key groups: `0..max_parallelism`.
    pub fn max_parallelism(&self) -> u32 {
        self.max_parallelism
    }

    /// Writes a frozen state key group by key group: `each` appends live key `id`'s state
    /// (given its bytes) to its key group's buffer, the keys read once in id order.
    pub fn write_each(
        &self,
        out: &mut PartSink<'_>,
        mut each: impl FnMut(u32, &[u8], &mut Vec<u8>),
    ) -> Result<(), ExecError> {
        let mut parts = GroupParts::new(self.max_parallelism, out);
        for id in self.ids() {
            let group = self.key_group(id);
            each(id, self.bytes(id), parts.group(group));
            parts.written(group)?;
        }
        parts.finish()
    }
}

/// The bytes a key group's part reaches before it is handed to the writer.
const PART_BYTES: usize = 256 * 1024;

/// A frozen state's key groups on their way to a [`PartSink`]: keys are read once, in id
/// order (sequentially, where reading them key group by key group would jump through the
/// whole state for each), into a buffer per key group, each handed over as a part when it
/// fills.
struct GroupParts<'a, 'b> {
    parts: Vec<Vec<u8>>,
    out: &'a mut PartSink<'b>,
}

impl<'a, 'b> GroupParts<'a, 'b> {
    fn new(max_parallelism: u32, out: &'a mut PartSink<'b>) -> Self {
        GroupParts {
            parts: vec![Vec::new(); max_parallelism as usize],
            out,
        }
    }

    /// Key group `group`'s buffer, to append to; [`written`](Self::written) after.
    fn group(&mut self, group: u32) -> &mut Vec<u8> {
        &mut self.parts[group as usize]
    }

    /// Hands group `group`'s buffer over once it holds a part's worth.
    fn written(&mut self, group: u32) -> Result<(), ExecError> {
        let bytes = &mut self.parts[group as usize];
        if bytes.len() >= PART_BYTES {
            (self.out)(group, bytes)?;
            bytes.clear();
        }
        Ok(())
    }

    /// Hands over what every buffer still holds.
    fn finish(self) -> Result<(), ExecError> {
        for (group, bytes) in self.parts.iter().enumerate() {
            if !bytes.is_empty() {
                (self.out)(group as u32, bytes)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::state::key_group::key_group_of;

    #[test]
    fn ids_are_reused_and_found_by_bytes() {
        let mut table: KeyTable<u32> = KeyTable::new(128);
        let (a, new_a) = table.intern(b"a");
        let (b, _) = table.intern(b"b");
        assert!(new_a);
        assert_eq!(table.intern(b"a"), (a, false));
        *table.value_mut(a) = 7;
        table.remove(a);
        assert_eq!(table.find(b"a"), None);
        let (c, new_c) = table.intern(b"c");
        assert_eq!((c, new_c), (a, true));
        assert_eq!(*table.value(c), 0, "a reused id starts from the default");
        assert_eq!(table.key_group(c), key_group_of(b"c", 128));
        *table.value_mut(b) = 1;
        table.retain(|_, &v| v == 0);
        assert_eq!(table.find(b"b"), None);
        assert_eq!(table.find(b"c"), Some(c));
        assert_eq!(table.len(), 1);
        assert_eq!(table.iter().map(|(id, _)| id).collect::<Vec<_>>(), [c]);
    }

    /// Keys added unindexed and indexed at once are found as interned ones are, beside the
    /// keys the table held before; a key added twice is refused.
    #[test]
    fn keys_indexed_at_once_are_found() {
        let mut table: KeyTable<u8> = KeyTable::new(128);
        let (kept, _) = table.intern(b"kept");
        let keys: Vec<Vec<u8>> = (0..20_000u32).map(|i| i.to_le_bytes().to_vec()).collect();
        let ids: Vec<u32> = keys.iter().map(|k| table.add_unindexed(k)).collect();
        assert_eq!(table.index_added(), Ok(()));
        for (key, &id) in keys.iter().zip(&ids) {
            assert_eq!(table.find(key), Some(id));
            assert_eq!(table.bytes(id), key.as_slice());
        }
        assert_eq!(table.find(b"kept"), Some(kept));
        assert!(table.intern(b"new").1);
        assert_eq!(table.len(), 20_002);
        let twice = table.add_unindexed(&keys[7]);
        assert_eq!(table.index_added(), Err(twice));
    }

    /// Keys of one width lie side by side; the first of another width moves every key to
    /// its own bytes, and all of them are still found.
    #[test]
    fn keys_change_store_when_a_width_differs() {
        let mut table: KeyTable<()> = KeyTable::new(128);
        let fixed: Vec<[u8; 3]> = (0..200u8).map(|i| [i, i ^ 1, 9]).collect();
        for key in &fixed {
            table.intern(key);
        }
        assert!(table.keys.is_fixed());
        table.remove(table.find(&fixed[7]).unwrap());
        let (reused, _) = table.intern(b"\x01\x02\x03");
        assert_eq!(table.bytes(reused), b"\x01\x02\x03");
        let (long, new) = table.intern(b"a longer key, kept on its own");
        assert!(new);
        assert!(!table.keys.is_fixed());
        assert_eq!(table.bytes(long), b"a longer key, kept on its own");
        for key in fixed.iter().filter(|k| **k != fixed[7]) {
            let id = table.find(key).expect("a key kept across the change");
            assert_eq!(table.bytes(id), key);
        }
        assert_eq!(table.find(&fixed[7]), None);
        assert_eq!(table.len(), 201);
        let (empty, _) = table.intern(b"");
        assert_eq!(table.bytes(empty), b"");
        assert_eq!(table.iter().count(), 202);
    }
}
