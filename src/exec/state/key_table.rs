//! `KeyTable`: the keys an operator holds state for, each found by its `arrow-row` bytes and
//! given a small dense id (its state lives in vectors indexed by the id, as accumulator slots
//! do). Each key remembers its key group, which snapshots are cut by. A removed key's id and
//! buffers are reused by the next new key.

use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};

use super::key_group::key_group_of;

pub struct KeyTable<V> {
    ids: HashTable<u32>,
    hasher: DefaultHashBuilder,
    entries: Vec<Entry<V>>,
    free: Vec<u32>,
    max_parallelism: u32,
}

/// A key's bytes, inline up to 16 (a BIGINT or INT key, a short string: no allocation per
/// key).
pub type KeyBytes = smallvec::SmallVec<[u8; 16]>;

/// A key's bytes, key group and the operator's value for it.
pub struct Entry<V> {
    pub bytes: KeyBytes,
    pub key_group: u32,
    pub value: V,
    live: bool,
}

impl<V: Default> KeyTable<V> {
    /// Keys spread over the key groups of `max_parallelism`.
    pub fn new(max_parallelism: u32) -> Self {
        KeyTable {
            ids: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
            entries: Vec::new(),
            free: Vec::new(),
            max_parallelism,
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
            .find(hash, |&id| *self.entries[id as usize].bytes == *bytes)
            .copied()
    }

    /// The id of the key, and whether it is new (then its value is the default).
    pub fn intern(&mut self, bytes: &[u8]) -> (u32, bool) {
        let hash = self.hasher.hash_one(bytes);
        let entries = &self.entries;
        if let Some(&id) = self
            .ids
            .find(hash, |&id| *entries[id as usize].bytes == *bytes)
        {
            return (id, false);
        }
        let key_group = key_group_of(bytes, self.max_parallelism);
        let id = match self.free.pop() {
            Some(id) => {
                let entry = &mut self.entries[id as usize];
                entry.bytes.clear();
                entry.bytes.extend_from_slice(bytes);
                entry.key_group = key_group;
                entry.value = V::default();
                entry.live = true;
                id
            }
            None => {
                self.entries.push(Entry {
                    bytes: KeyBytes::from_slice(bytes),
                    key_group,
                    value: V::default(),
                    live: true,
                });
                (self.entries.len() - 1) as u32
            }
        };
        let (entries, hasher) = (&self.entries, &self.hasher);
        self.ids.insert_unique(hash, id, |&id| {
            hasher.hash_one(&entries[id as usize].bytes[..])
        });
        (id, true)
    }

    pub fn entry(&self, id: u32) -> &Entry<V> {
        &self.entries[id as usize]
    }

    pub fn value_mut(&mut self, id: u32) -> &mut V {
        &mut self.entries[id as usize].value
    }

    /// Forgets a live key; its id goes to the next new key.
    pub fn remove(&mut self, id: u32) {
        let entry = &mut self.entries[id as usize];
        debug_assert!(entry.live, "key {id} removed twice");
        let hash = self.hasher.hash_one(&entry.bytes[..]);
        if let Ok(found) = self.ids.find_entry(hash, |&i| i == id) {
            found.remove();
        }
        entry.live = false;
        self.free.push(id);
    }

    /// Forgets every live key whose value `keep` refuses, in one pass over the table (cheaper
    /// than a probe per key when many go at once).
    pub fn retain(&mut self, mut keep: impl FnMut(&V) -> bool) {
        let entries = &mut self.entries;
        let free = &mut self.free;
        self.ids.retain(|&mut id| {
            let entry = &mut entries[id as usize];
            if keep(&entry.value) {
                return true;
            }
            entry.live = false;
            free.push(id);
            false
        });
    }

    /// Ids ever handed out (live or free): the length state vectors indexed by id need.
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Live keys.
    pub fn len(&self) -> usize {
        self.entries.len() - self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The live keys with their ids, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &Entry<V>)> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.live)
            .map(|(id, e)| (id as u32, e))
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
        assert_eq!(
            table.entry(c).value,
            0,
            "a reused id starts from the default"
        );
        assert_eq!(table.entry(c).key_group, key_group_of(b"c", 128));
        *table.value_mut(b) = 1;
        table.retain(|&v| v == 0);
        assert_eq!(table.find(b"b"), None);
        assert_eq!(table.find(b"c"), Some(c));
        assert_eq!(table.len(), 1);
        assert_eq!(table.iter().map(|(id, _)| id).collect::<Vec<_>>(), [c]);
    }
}
