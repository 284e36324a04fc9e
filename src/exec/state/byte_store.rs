//! Byte strings by dense id, as keyed state stores its keys and a join its rows: side by
//! side at one width while every string has that width (fixed-width columns, and strings
//! within arrow-row's first block), each on its own once one differs. The side-by-side form
//! spends nothing per string beyond its bytes; a boxed or inline string spends 16 to 24 more.
//! [`KeyTable`](super::key_table::KeyTable) keeps its keys in a [`ByteStore`]; a
//! [`RowStore`] adds ids that are freed and reused; an [`IdStore`] takes ids from its owner
//! (a join's single rows and Top-N's partitions, by key id).

use super::pages::{FrozenVec, PagedVec, reserve_within};

/// A string's bytes, inline up to 16 (a BIGINT or INT key, a short string: no allocation).
pub type InlineBytes = smallvec::SmallVec<[u8; 16]>;

/// Strings per page while they lie side by side: a page holds `width << RECORD_SHIFT` bytes,
/// so no string crosses pages.
const RECORD_SHIFT: u32 = 12;
const RECORD_MASK: usize = (1 << RECORD_SHIFT) - 1;

/// Strings by id; the owner hands out the ids (`0..len`, freed ones reused). Kept in pages
/// ([`PagedVec`]) so that a checkpoint can freeze them ([`ByteStore::freeze`]).
pub enum ByteStore {
    /// Every string `width` bytes long, string `id` in page `id >> RECORD_SHIFT`.
    Fixed { width: usize, records: PagedVec<u8> },
    /// Strings of different lengths.
    Variable(PagedVec<InlineBytes>),
}

impl Default for ByteStore {
    fn default() -> Self {
        ByteStore::Fixed {
            width: 0,
            records: PagedVec::new(),
        }
    }
}

impl ByteStore {
    #[inline]
    pub fn get(&self, id: u32) -> &[u8] {
        match self {
            ByteStore::Fixed { width, records } => {
                let at = (id as usize & RECORD_MASK) * width;
                &records.page(id as usize >> RECORD_SHIFT)[at..at + width]
            }
            ByteStore::Variable(strings) => &strings[id as usize],
        }
    }

    /// Stores the string of `id`: the next id (`id == len`, the count handed out so far) or
    /// one handed out before.
    pub fn set(&mut self, id: u32, len: usize, string: &[u8]) {
        if let ByteStore::Fixed { width, records } = self {
            if len == 0 {
                *width = string.len();
            }
            if string.len() == *width {
                let p = id as usize >> RECORD_SHIFT;
                if id as usize == len {
                    if p == records.page_count() {
                        records.push_page();
                    }
                    let page = records.page_elements_mut(p);
                    reserve_within(page, string.len(), *width << RECORD_SHIFT);
                    page.extend_from_slice(string);
                } else {
                    let at = (id as usize & RECORD_MASK) * *width;
                    records.page_elements_mut(p)[at..at + *width].copy_from_slice(string);
                }
                return;
            }
            // The first string of another width: every string on its own from now on.
            let mut strings = PagedVec::new();
            for i in 0..len as u32 {
                strings.push(InlineBytes::from_slice(self.get(i)));
            }
            *self = ByteStore::Variable(strings);
        }
        let ByteStore::Variable(strings) = self else {
            unreachable!("the store was made variable above")
        };
        if id as usize == len {
            strings.push(InlineBytes::from_slice(string));
        } else {
            let stored = &mut strings[id as usize];
            stored.clear();
            stored.extend_from_slice(string);
        }
    }

    /// String `id`'s bytes, to change in place.
    pub fn get_mut(&mut self, id: u32) -> &mut [u8] {
        match self {
            ByteStore::Fixed { width, records } => {
                let at = (id as usize & RECORD_MASK) * *width;
                &mut records.page_elements_mut(id as usize >> RECORD_SHIFT)[at..at + *width]
            }
            ByteStore::Variable(strings) => &mut strings[id as usize],
        }
    }

    /// The width of every string while they lie side by side.
    pub fn fixed_width(&self) -> Option<usize> {
        match self {
            ByteStore::Fixed { width, .. } => Some(*width),
            ByteStore::Variable(_) => None,
        }
    }

    /// Whether strings lie side by side (for tests).
    pub fn is_fixed(&self) -> bool {
        matches!(self, ByteStore::Fixed { .. })
    }

    /// A read-only view of the strings as they are now (docs/design/0008 §7).
    pub fn freeze(&self) -> FrozenByteStore {
        match self {
            ByteStore::Fixed { width, records } => FrozenByteStore::Fixed {
                width: *width,
                records: records.freeze(),
            },
            ByteStore::Variable(strings) => FrozenByteStore::Variable(strings.freeze()),
        }
    }
}

/// A [`ByteStore`] as it was when frozen.
pub enum FrozenByteStore {
    Fixed {
        width: usize,
        records: FrozenVec<u8>,
    },
    Variable(FrozenVec<InlineBytes>),
}

impl FrozenByteStore {
    /// String `id`, one stored before the freeze.
    #[inline]
    pub fn get(&self, id: u32) -> &[u8] {
        match self {
            FrozenByteStore::Fixed { width, records } => {
                let at = (id as usize & RECORD_MASK) * width;
                &records.page(id as usize >> RECORD_SHIFT)[at..at + width]
            }
            FrozenByteStore::Variable(strings) => &strings[id as usize],
        }
    }
}

/// Strings by an id handed out here; a removed string's id goes to the next one.
#[derive(Default)]
pub struct RowStore {
    strings: ByteStore,
    len: usize,
    free: Vec<u32>,
}

impl RowStore {
    /// Stores a string, giving its id.
    pub fn insert(&mut self, string: &[u8]) -> u32 {
        let id = self.free.pop().unwrap_or(self.len as u32);
        self.strings.set(id, self.len, string);
        if id as usize == self.len {
            self.len += 1;
        }
        id
    }

    pub fn get(&self, id: u32) -> &[u8] {
        self.strings.get(id)
    }

    /// Forgets string `id`; its id goes to the next insert.
    pub fn remove(&mut self, id: u32) {
        self.free.push(id);
    }

    /// Ids handed out (live or free).
    pub fn capacity(&self) -> usize {
        self.len
    }

    /// A read-only view of the strings as they are now (docs/design/0008 §7): a string
    /// stored before it reads back by its id.
    pub fn freeze(&self) -> FrozenByteStore {
        self.strings.freeze()
    }
}

/// Strings by an id the owner gives (a key's id), any id at any time: an id never set reads
/// as empty. Ids skipped over hold zeros while strings lie side by side.
#[derive(Default)]
pub struct IdStore {
    strings: ByteStore,
    /// Ids stored (`0..len`).
    len: usize,
}

impl IdStore {
    pub fn get(&self, id: u32) -> &[u8] {
        if (id as usize) < self.len {
            self.strings.get(id)
        } else {
            &[]
        }
    }

    /// String `id`'s bytes, to change in place (an id set before).
    pub fn get_mut(&mut self, id: u32) -> &mut [u8] {
        self.strings.get_mut(id)
    }

    /// The width of every string while they lie side by side (`None` before the first).
    pub fn fixed_width(&self) -> Option<usize> {
        self.strings.fixed_width().filter(|_| self.len > 0)
    }

    pub fn set(&mut self, id: u32, string: &[u8]) {
        let id = id as usize;
        if self.len < id {
            let filler = vec![0; self.fixed_width().unwrap_or(string.len())];
            while self.len < id {
                self.strings.set(self.len as u32, self.len, &filler);
                self.len += 1;
            }
        }
        self.strings.set(id as u32, self.len, string);
        if id == self.len {
            self.len += 1;
        }
    }

    /// A read-only view of the strings as they are now (docs/design/0008 §7).
    pub fn freeze(&self) -> FrozenIdStore {
        FrozenIdStore {
            strings: self.strings.freeze(),
            len: self.len,
        }
    }
}

/// An [`IdStore`] as it was when frozen.
pub struct FrozenIdStore {
    strings: FrozenByteStore,
    len: usize,
}

impl FrozenIdStore {
    /// String `id` as [`IdStore::get`] gave it at the freeze.
    pub fn get(&self, id: u32) -> &[u8] {
        if (id as usize) < self.len {
            self.strings.get(id)
        } else {
            &[]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Strings of one width lie side by side; the first of another width moves every string
    /// to its own bytes, and all of them read back.
    #[test]
    fn strings_change_form_when_a_width_differs() {
        let mut rows = RowStore::default();
        let fixed: Vec<[u8; 3]> = (0..200u8).map(|i| [i, i ^ 1, 9]).collect();
        let ids: Vec<u32> = fixed.iter().map(|s| rows.insert(s)).collect();
        assert!(rows.strings.is_fixed());
        rows.remove(ids[7]);
        let reused = rows.insert(b"\x01\x02\x03");
        assert_eq!(reused, ids[7]);
        assert_eq!(rows.get(reused), b"\x01\x02\x03");
        let long = rows.insert(b"a longer string, kept on its own");
        assert!(!rows.strings.is_fixed());
        assert_eq!(rows.get(long), b"a longer string, kept on its own");
        for (i, s) in fixed.iter().enumerate().filter(|&(i, _)| i != 7) {
            assert_eq!(rows.get(ids[i]), s);
        }
        let empty = rows.insert(b"");
        assert_eq!(rows.get(empty), b"");
        assert_eq!(rows.capacity(), 202);
    }

    /// Ids come in any order: skipped ones read as zeros while strings lie side by side,
    /// ids never set as empty, and every string survives the change of form.
    #[test]
    fn ids_set_in_any_order_read_back() {
        let mut strings = IdStore::default();
        assert_eq!(strings.get(5), b"");
        strings.set(3, b"abc");
        strings.set(1, b"xyz");
        assert_eq!(strings.fixed_width(), Some(3));
        assert_eq!(
            (strings.get(0), strings.get(2)),
            (&[0u8; 3][..], &[0u8; 3][..])
        );
        strings.get_mut(3)[0] = b'A';
        strings.set(6, b"longer");
        assert_eq!(strings.fixed_width(), None);
        assert_eq!(
            [
                strings.get(1),
                strings.get(3),
                strings.get(5),
                strings.get(6)
            ],
            [&b"xyz"[..], b"Abc", &[0; 3], b"longer"]
        );
        assert_eq!(strings.get(9), b"");
    }
}
