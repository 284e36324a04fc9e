//! The partitions of a ranking operator, each its rows in order. Each entry is a row's
//! order-key bytes followed by its row bytes (arrow-row encodings are prefix-free, so the
//! concatenation sorts as the pair would), with the length of the order key and how many
//! times the row is there.
//!
//! Small bounded partitions (a Top-N over inserts keeps at most N rows) are packed: a
//! partition's entries are one string, each after a header of three varints (usually three
//! bytes), and the strings of all partitions are one [`IdStore`] by partition id: side by
//! side while they are as long, which they are when rows have one width, since a new
//! partition gets room for all the rows it will keep. Such a partition then costs its bytes
//! and nothing else: no pointer, no block of the allocator's. A full partition takes a row
//! and lets its last go within its string when the two are as long. Other partitions are a
//! B-tree each, so that inserting into a big partition stays cheap.

use std::collections::BTreeMap;

use std::sync::Arc;

use super::byte_store::{FrozenIdStore, IdStore};
use super::pages::{FrozenVec, PagedVec};

/// A big partition: its entries (bytes to order key's length and count), and how many rows
/// they hold together.
#[derive(Default, Clone)]
pub struct Many {
    entries: BTreeMap<Box<[u8]>, (u32, u64)>,
    total: u64,
}

/// A packed partition's entries in order, one after another: the count, the order key's
/// length and the entry's length (each a LEB128 varint), then its bytes. A small partition
/// holds at most a few dozen entries, so a walk from the start is as quick as a search.
/// Zeros may follow the entries (a count is never 0): room for rows to come, or padding to
/// the width of the partitions beside it.
#[derive(Clone, Copy)]
pub struct Packed<'a>(&'a [u8]);

/// An entry of a packed partition: where it starts and its parts.
struct Slot<'a> {
    start: usize,
    /// Where the next entry starts.
    end: usize,
    count: u32,
    order_len: usize,
    bytes: &'a [u8],
}

/// An entry's header: its count, order key length and length as LEB128 varints, and how
/// many of the 15 bytes they take.
fn header(count: u32, order_len: usize, len: usize) -> ([u8; 15], usize) {
    let mut out = [0u8; 15];
    let mut n = 0;
    for mut value in [u64::from(count), order_len as u64, len as u64] {
        while value >= 0x80 {
            out[n] = value as u8 | 0x80;
            value >>= 7;
            n += 1;
        }
        out[n] = value as u8;
        n += 1;
    }
    (out, n)
}

/// The varint at `*at`, moving past it.
fn varint_at(bytes: &[u8], at: &mut usize) -> u64 {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let byte = bytes[*at];
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return value;
        }
        shift += 7;
    }
}

/// Appends an entry: its header and bytes (`order` then `row`).
fn put_entry(out: &mut Vec<u8>, count: u32, order: &[u8], row: &[u8]) {
    let (header, n) = header(count, order.len(), order.len() + row.len());
    out.extend_from_slice(&header[..n]);
    out.extend_from_slice(order);
    out.extend_from_slice(row);
}

/// Writes an entry of count 1 at the start of `out`, which is its size.
fn write_entry(out: &mut [u8], order: &[u8], row: &[u8]) {
    let (header, n) = header(1, order.len(), order.len() + row.len());
    out[..n].copy_from_slice(&header[..n]);
    out[n..n + order.len()].copy_from_slice(order);
    out[n + order.len()..].copy_from_slice(row);
}

/// The size of an entry of `order` and `row` with its header.
fn entry_size(order: &[u8], row: &[u8]) -> usize {
    let len = order.len() + row.len();
    header(1, order.len(), len).1 + len
}

/// How `bytes` sorts against `order` followed by `row` (without joining them).
fn cmp_joined(bytes: &[u8], order: &[u8], row: &[u8]) -> std::cmp::Ordering {
    let n = bytes.len().min(order.len());
    match bytes[..n].cmp(&order[..n]) {
        std::cmp::Ordering::Equal if bytes.len() < order.len() => std::cmp::Ordering::Less,
        std::cmp::Ordering::Equal => bytes[n..].cmp(row),
        other => other,
    }
}

impl<'a> Packed<'a> {
    fn slots(self) -> impl Iterator<Item = Slot<'a>> {
        let bytes = self.0;
        let mut at = 0;
        std::iter::from_fn(move || {
            if at >= bytes.len() || bytes[at] == 0 {
                return None;
            }
            let start = at;
            // Most headers are three one-byte varints.
            let (count, order_len, len) = match bytes.get(at..at + 3) {
                Some(&[c, o, l]) if (c | o | l) < 0x80 => {
                    at += 3;
                    (u32::from(c), usize::from(o), usize::from(l))
                }
                _ => (
                    varint_at(bytes, &mut at) as u32,
                    varint_at(bytes, &mut at) as usize,
                    varint_at(bytes, &mut at) as usize,
                ),
            };
            let slot = Slot {
                start,
                end: at + len,
                count,
                order_len,
                bytes: &bytes[at..at + len],
            };
            at += len;
            Some(slot)
        })
    }

    /// Where the entries end.
    fn used(self) -> usize {
        self.slots().last().map_or(0, |s| s.end)
    }

    /// The entries, with the entry of `order` and `row` counted `count` times at `position`
    /// (`replace`: in place of the entry there; `count` 0: none), without room to spare.
    fn rebuilt(
        self,
        position: usize,
        (order, row): (&[u8], &[u8]),
        count: u32,
        replace: bool,
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.used() + order.len() + row.len() + 6);
        let mut placed = false;
        for (i, slot) in self.slots().enumerate() {
            if i == position {
                if count > 0 {
                    put_entry(&mut out, count, order, row);
                }
                placed = true;
                if replace {
                    continue;
                }
            }
            let (o, r) = slot.bytes.split_at(slot.order_len);
            put_entry(&mut out, slot.count, o, r);
        }
        if !placed && count > 0 {
            put_entry(&mut out, count, order, row);
        }
        out
    }

    /// Where the entry of `order` and `row` is: `Ok(position)` when held, `Err(position)`
    /// where it would go.
    fn search(self, order: &[u8], row: &[u8]) -> Result<usize, usize> {
        let mut position = 0;
        for slot in self.slots() {
            match cmp_joined(slot.bytes, order, row) {
                std::cmp::Ordering::Less => position += 1,
                std::cmp::Ordering::Equal => return Ok(position),
                std::cmp::Ordering::Greater => return Err(position),
            }
        }
        Err(position)
    }

    fn slot(self, position: usize) -> Option<Slot<'a>> {
        self.slots().nth(position)
    }

    /// The entries with the count of the entry at `position` set (0: the entry goes).
    fn with_count(self, position: usize, count: u32) -> Option<Vec<u8>> {
        let slot = self.slot(position)?;
        Some(self.rebuilt(position, slot.bytes.split_at(slot.order_len), count, true))
    }
}

/// The entry a full partition let go: its order key, then its row, and the order key's
/// length.
#[derive(Debug, PartialEq)]
pub struct Evicted {
    pub entry: Box<[u8]>,
    pub order_len: u32,
}

/// One row as the iteration sees it: its order-key bytes, its row bytes, its count.
pub type RowRef<'a> = (&'a [u8], &'a [u8], u64);

/// One partition's rows, to read.
#[derive(Clone, Copy)]
pub enum SortedRows<'a> {
    Few(Packed<'a>),
    Many(&'a Many),
}

impl<'a> SortedRows<'a> {
    pub fn is_empty(self) -> bool {
        match self {
            SortedRows::Few(p) => p.0.first().is_none_or(|&b| b == 0),
            SortedRows::Many(m) => m.entries.is_empty(),
        }
    }

    /// Rows held, each as many times as it is there.
    pub fn total(self) -> u64 {
        match self {
            SortedRows::Few(p) => p.slots().map(|s| u64::from(s.count)).sum(),
            SortedRows::Many(m) => m.total,
        }
    }

    /// Distinct rows held.
    pub fn len(self) -> usize {
        match self {
            SortedRows::Few(p) => p.slots().count(),
            SortedRows::Many(m) => m.entries.len(),
        }
    }

    /// A small partition's entry at `position` (its order key, then its row) and the order
    /// key's length, when each is there once.
    pub fn entry_at(self, position: usize) -> Option<(&'a [u8], u32)> {
        match self {
            SortedRows::Few(p) => p.slot(position).map(|s| (s.bytes, s.order_len as u32)),
            SortedRows::Many(_) => None,
        }
    }

    /// Whether every row is there once (positions are then entries).
    pub fn all_single(self) -> bool {
        match self {
            SortedRows::Few(p) => p.slots().all(|s| s.count == 1),
            SortedRows::Many(m) => m.entries.values().all(|&(_, c)| c == 1),
        }
    }

    /// Whether a row would sort at or after the last one held.
    pub fn at_or_after_last(self, order: &[u8], row: &[u8]) -> bool {
        let last: Option<(&[u8], &[u8])> = match self {
            SortedRows::Few(p) => p.slots().last().map(|s| s.bytes.split_at(s.order_len)),
            SortedRows::Many(m) => m
                .entries
                .iter()
                .next_back()
                .map(|(k, &(order_len, _))| k.split_at(order_len as usize)),
        };
        last.is_some_and(|last| (order, row) >= last)
    }

    /// Calls `f` with each row in order (as [`iter`](Self::iter) gives them, without its
    /// boxed iterator: a checkpoint writes every partition).
    pub fn for_each(self, mut f: impl FnMut(RowRef<'a>)) {
        match self {
            SortedRows::Few(p) => p.slots().for_each(|s| {
                let (order, row) = s.bytes.split_at(s.order_len);
                f((order, row, u64::from(s.count)))
            }),
            SortedRows::Many(m) => m.entries.iter().for_each(|(k, &(order_len, count))| {
                let (order, row) = k.split_at(order_len as usize);
                f((order, row, count))
            }),
        }
    }

    /// The rows in order.
    pub fn iter(self) -> Box<dyn Iterator<Item = RowRef<'a>> + 'a> {
        match self {
            SortedRows::Few(p) => Box::new(p.slots().map(|s| {
                let (order, row) = s.bytes.split_at(s.order_len);
                (order, row, u64::from(s.count))
            })),
            SortedRows::Many(m) => Box::new(m.entries.iter().map(|(k, &(order_len, count))| {
                let (order, row) = k.split_at(order_len as usize);
                (order, row, count)
            })),
        }
    }
}

/// Packed partitions by id in one store (see the module's notes).
#[derive(Default)]
pub struct PackedStore {
    strings: IdStore,
    /// Where a partition's new string is put together.
    scratch: Vec<u8>,
}

impl PackedStore {
    fn get(&self, p: usize) -> Packed<'_> {
        Packed(self.strings.get(p as u32))
    }

    /// Partition `p`'s string, to change in place (its length stays).
    fn get_mut(&mut self, p: usize) -> &mut [u8] {
        self.strings.get_mut(p as u32)
    }

    /// Sets partition `p`'s string to `scratch`; in the side-by-side form a shorter string
    /// is padded with zeros.
    fn set_scratch(&mut self, p: usize) {
        if self.scratch.is_empty() && self.strings.get(p as u32).is_empty() {
            // Nothing changes (and an empty first string would fix the width at 0).
            return;
        }
        if let Some(width) = self.strings.fixed_width()
            && self.scratch.len() < width
        {
            self.scratch.resize(width, 0);
        }
        self.strings.set(p as u32, &self.scratch);
    }

    fn set(&mut self, p: usize, string: &[u8]) {
        self.scratch.clear();
        self.scratch.extend_from_slice(string);
        self.set_scratch(p);
    }
}

/// Partitions as they were when frozen ([`Partitions::freeze`]).
pub enum FrozenPartitions {
    Few(FrozenIdStore),
    Many(FrozenVec<Arc<Many>>),
}

impl FrozenPartitions {
    /// Partition `p`'s rows at the freeze.
    pub fn get(&self, p: usize) -> SortedRows<'_> {
        match self {
            FrozenPartitions::Few(strings) => SortedRows::Few(Packed(strings.get(p as u32))),
            FrozenPartitions::Many(many) => match many.get(p) {
                Some(m) => SortedRows::Many(m),
                None => SortedRows::Few(Packed(&[])),
            },
        }
    }
}

/// The partitions of a ranking operator by id.
pub enum Partitions {
    /// Small bounded partitions.
    Few(PackedStore),
    /// A B-tree per partition, behind an `Arc` in pages: a checkpoint freezes the pages, and
    /// the first write into a partition a frozen view still shares copies that partition.
    Many(PagedVec<Arc<Many>>),
}

impl Partitions {
    /// No partitions yet; `few`: every partition stays small.
    pub fn new(few: bool) -> Self {
        if few {
            Partitions::Few(PackedStore::default())
        } else {
            Partitions::Many(PagedVec::new())
        }
    }

    /// The partitions as they are now, for a checkpoint's writer (docs/design/0008 §7).
    pub fn freeze(&self) -> FrozenPartitions {
        match self {
            Partitions::Few(store) => FrozenPartitions::Few(store.strings.freeze()),
            Partitions::Many(many) => FrozenPartitions::Many(many.freeze()),
        }
    }

    /// Partition `p`'s rows (none for a partition never written).
    pub fn get(&self, p: usize) -> SortedRows<'_> {
        match self {
            Partitions::Few(store) => SortedRows::Few(store.get(p)),
            Partitions::Many(many) => match many.get(p) {
                Some(m) => SortedRows::Many(m),
                // Empty either way.
                None => SortedRows::Few(Packed(&[])),
            },
        }
    }

    /// Partition `p` of the B-tree form, to write: made (empty) when it was not, copied
    /// when a frozen view shares it.
    fn many(many: &mut PagedVec<Arc<Many>>, p: usize) -> &mut Many {
        if many.len() <= p {
            many.grow(p + 1, Arc::default());
        }
        Arc::make_mut(&mut many[p])
    }

    /// Empties partition `p`.
    pub fn clear(&mut self, p: usize) {
        match self {
            Partitions::Few(store) => store.set(p, &[]),
            Partitions::Many(many) => {
                if let Some(m) = many.get_mut(p) {
                    *m = Arc::default();
                }
            }
        }
    }

    /// Adds `count` of the row whose order key is `order` and bytes `row` to partition `p`.
    pub fn add(&mut self, p: usize, order: &[u8], row: &[u8], count: u64) {
        match self {
            Partitions::Few(store) => {
                let count = u32::try_from(count).unwrap_or(u32::MAX);
                let packed = store.get(p);
                let string = match packed.search(order, row) {
                    Ok(i) => {
                        let held = packed.slot(i).map_or(0, |s| s.count);
                        packed.with_count(i, held.saturating_add(count))
                    }
                    Err(i) => Some(packed.rebuilt(i, (order, row), count, false)),
                };
                if let Some(string) = string {
                    store.set(p, &string);
                }
            }
            Partitions::Many(many) => {
                let m = Self::many(many, p);
                let key = joined(order, row);
                m.entries.entry(key).or_insert((order.len() as u32, 0)).1 += count;
                m.total += count;
            }
        }
    }

    /// Adds a row to small partition `p`, which does not hold it yet: the position it
    /// takes. `None`, and nothing changed, when the row is there already or the partitions
    /// are not few. An empty partition makes room for `room` rows as long as this one.
    pub fn insert_new(&mut self, p: usize, order: &[u8], row: &[u8], room: usize) -> Option<usize> {
        let Partitions::Few(store) = self else {
            return None;
        };
        let packed = store.get(p);
        let at = packed.search(order, row).err()?;
        let (used, size) = (packed.used(), entry_size(order, row));
        if packed.0.len() - used >= size {
            let start = packed.slot(at).map_or(used, |s| s.start);
            let bytes = store.get_mut(p);
            bytes.copy_within(start..used, start + size);
            write_entry(&mut bytes[start..start + size], order, row);
        } else if used == 0 {
            store.scratch.clear();
            store.scratch.resize(size * room.max(1), 0);
            write_entry(&mut store.scratch[..size], order, row);
            store.set_scratch(p);
        } else {
            let string = packed.rebuilt(at, (order, row), 1, false);
            store.set(p, &string);
        }
        Some(at)
    }

    /// Adds a row to small full partition `p`, which does not hold it yet, letting its last
    /// row go: the position the row takes and the row that went. `None`, and nothing
    /// changed, when the row is there already, would sort last, or the partitions are not
    /// few. Where the new entry is as long as the last (fixed-width rows), the entries move
    /// within the partition's string.
    pub fn insert_evicting_last(
        &mut self,
        p: usize,
        order: &[u8],
        row: &[u8],
    ) -> Option<(usize, Evicted)> {
        let Partitions::Few(store) = self else {
            return None;
        };
        let packed = store.get(p);
        let at = packed.search(order, row).err()?;
        let (last_position, last) = packed.slots().enumerate().last()?;
        if at > last_position {
            return None;
        }
        let evicted = Evicted {
            entry: last.bytes.into(),
            order_len: last.order_len as u32,
        };
        let (last_start, last_end) = (last.start, last.end);
        let size = entry_size(order, row);
        if last_end - last_start == size {
            let start = packed.slot(at)?.start;
            let bytes = store.get_mut(p);
            bytes.copy_within(start..last_start, start + size);
            write_entry(&mut bytes[start..start + size], order, row);
        } else {
            let string = Packed(&packed.0[..last_start]).rebuilt(at, (order, row), 1, false);
            store.set(p, &string);
        }
        Some((at, evicted))
    }

    /// Takes one of the row away from partition `p`; false when it is not there.
    pub fn remove_one(&mut self, p: usize, order: &[u8], row: &[u8]) -> bool {
        match self {
            Partitions::Few(store) => {
                let packed = store.get(p);
                let Ok(i) = packed.search(order, row) else {
                    return false;
                };
                let held = packed.slot(i).map_or(0, |s| s.count);
                if let Some(string) = packed.with_count(i, held.saturating_sub(1)) {
                    store.set(p, &string);
                }
                true
            }
            Partitions::Many(many) => {
                if p >= many.len() {
                    return false;
                }
                let m = Self::many(many, p);
                let key = joined(order, row);
                match m.entries.get_mut(&key) {
                    Some((_, count)) => {
                        *count -= 1;
                        if *count == 0 {
                            m.entries.remove(&key);
                        }
                        m.total -= 1;
                        true
                    }
                    None => false,
                }
            }
        }
    }

    /// Takes one of the last row of partition `p` away.
    pub fn remove_last_one(&mut self, p: usize) {
        match self {
            Partitions::Few(store) => {
                let packed = store.get(p);
                let last = packed.slots().enumerate().last().map(|(i, s)| (i, s.count));
                if let Some((i, count)) = last
                    && let Some(string) = packed.with_count(i, count - 1)
                {
                    store.set(p, &string);
                }
            }
            Partitions::Many(many) => {
                if p >= many.len() {
                    return;
                }
                let m = Self::many(many, p);
                if let Some(mut tail) = m.entries.last_entry() {
                    if tail.get().1 > 1 {
                        tail.get_mut().1 -= 1;
                    } else {
                        tail.remove();
                    }
                    m.total -= 1;
                }
            }
        }
    }
}

fn joined(order: &[u8], row: &[u8]) -> Box<[u8]> {
    let mut key = Vec::with_capacity(order.len() + row.len());
    key.extend_from_slice(order);
    key.extend_from_slice(row);
    key.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The partition the tests fill: not the first, so that the ones before it are made
    /// empty.
    const P: usize = 2;

    /// The row bytes of a small partition's entry at `position`.
    fn row_at(rows: SortedRows<'_>, position: usize) -> Option<&[u8]> {
        rows.entry_at(position)
            .map(|(entry, order_len)| &entry[order_len as usize..])
    }

    #[test]
    fn both_forms_hold_the_same_rows_in_the_same_order() {
        for few in [true, false] {
            let mut rows = Partitions::new(few);
            rows.add(P, b"b", b"2", 1);
            rows.add(P, b"a", b"9", 1);
            rows.add(P, b"b", b"1", 2);
            assert!(rows.remove_one(P, b"b", b"1"));
            assert!(!rows.remove_one(P, b"z", b"z"));
            let all: Vec<(Vec<u8>, Vec<u8>, u64)> = rows
                .get(P)
                .iter()
                .map(|(o, r, c)| (o.to_vec(), r.to_vec(), c))
                .collect();
            assert_eq!(
                all,
                [
                    (b"a".to_vec(), b"9".to_vec(), 1),
                    (b"b".to_vec(), b"1".to_vec(), 1),
                    (b"b".to_vec(), b"2".to_vec(), 1)
                ]
            );
            assert!(rows.get(P).at_or_after_last(b"b", b"2"));
            assert!(!rows.get(P).at_or_after_last(b"b", b"1"));
            assert_eq!(rows.get(P).total(), 3);
            rows.remove_last_one(P);
            assert_eq!((rows.get(P).len(), rows.get(P).total()), (2, 2));
            rows.add(P, b"a", b"9", 3);
            assert_eq!(rows.get(P).total(), 5);
            assert_eq!(rows.get(P).iter().next().map(|r| r.2), Some(4));
            assert!(!rows.get(P).all_single());
            rows.clear(P);
            assert!(rows.get(P).is_empty());
        }
    }

    /// The packed form keeps order, counts and positions as rows come and go; a full
    /// partition takes a row and lets its last go, in place when the entries are as long.
    #[test]
    fn packed_rows_take_inserts_anywhere() {
        let mut rows = Partitions::new(true);
        assert_eq!(rows.insert_new(P, b"m", b"1", 4), Some(0));
        assert_eq!(rows.insert_new(P, b"a", b"22", 4), Some(0));
        assert_eq!(rows.insert_new(P, b"z", b"333", 4), Some(2));
        assert_eq!(rows.insert_new(P, b"m", b"1", 4), None);
        assert_eq!(rows.insert_new(P, b"m", b"0", 4), Some(1));
        assert_eq!(row_at(rows.get(P), 0), Some(&b"22"[..]));
        assert_eq!(row_at(rows.get(P), 1), Some(&b"0"[..]));
        assert_eq!(row_at(rows.get(P), 3), Some(&b"333"[..]));
        assert_eq!(row_at(rows.get(P), 4), None);
        assert!(rows.get(P).all_single());
        assert!(rows.get(P).at_or_after_last(b"z", b"333"));
        rows.remove_last_one(P);
        assert_eq!(rows.get(P).len(), 3);
        assert!(rows.remove_one(P, b"a", b"22"));
        assert_eq!(row_at(rows.get(P), 0), Some(&b"0"[..]));
        let order = |rows: &Partitions| -> Vec<Vec<u8>> {
            rows.get(P)
                .iter()
                .map(|(o, r, _)| [o, r].concat())
                .collect()
        };
        assert_eq!(order(&rows), [b"m0".to_vec(), b"m1".to_vec()]);
        assert_eq!(rows.insert_evicting_last(P, b"z", b"9"), None);
        assert_eq!(rows.insert_evicting_last(P, b"m", b"1"), None);
        let (at, evicted) = rows.insert_evicting_last(P, b"a", b"5").unwrap();
        assert_eq!(
            (at, &evicted.entry[..], evicted.order_len),
            (0, &b"m1"[..], 1)
        );
        assert_eq!(order(&rows), [b"a5".to_vec(), b"m0".to_vec()]);
        let (at, evicted) = rows.insert_evicting_last(P, b"b", b"long").unwrap();
        assert_eq!((at, &evicted.entry[..]), (1, &b"m0"[..]));
        assert_eq!(order(&rows), [b"a5".to_vec(), b"blong".to_vec()]);
        let (at, evicted) = rows.insert_evicting_last(P, b"a", b"6").unwrap();
        assert_eq!((at, &evicted.entry[..]), (1, &b"blong"[..]));
        assert_eq!(rows.get(P).entry_at(1), Some((&b"a6"[..], 1)));
        assert_eq!(order(&rows), [b"a5".to_vec(), b"a6".to_vec()]);
        assert!(rows.get(P).all_single());
        // Lengths and counts past one varint byte.
        let long = vec![7u8; 300];
        let (at, _) = rows.insert_evicting_last(P, b"a", &long).unwrap();
        assert_eq!((at, row_at(rows.get(P), 0)), (0, Some(&long[..])));
        rows.add(P, b"a", &long, 199);
        assert_eq!(
            rows.get(P).iter().next().map(|r| (r.1.len(), r.2)),
            Some((300, 200))
        );
        assert_eq!(row_at(rows.get(P), 1), Some(&b"5"[..]));
    }

    /// Packed partitions of fixed-width rows lie side by side, each with room for its rows;
    /// emptied ones are zeros; a longer partition moves every one to its own string, and
    /// all read back.
    #[test]
    fn packed_partitions_lie_side_by_side_until_one_is_longer() {
        let mut rows = Partitions::new(true);
        let rows_of = |rows: &Partitions, p| -> Vec<Vec<u8>> {
            rows.get(p)
                .iter()
                .map(|(o, r, _)| [o, r].concat())
                .collect()
        };
        for p in [0, 1, 3] {
            let key = [p as u8];
            assert_eq!(rows.insert_new(p, b"o", &key, 3), Some(0));
            assert_eq!(rows.insert_new(p, b"a", &key, 3), Some(0));
        }
        let Partitions::Few(store) = &rows else {
            unreachable!("few partitions")
        };
        // Three 3-byte headers and 2-byte entries: room for three.
        assert_eq!(store.strings.fixed_width(), Some(15));
        assert!(rows.get(2).is_empty());
        assert_eq!(rows_of(&rows, 3), [b"a\x03".to_vec(), b"o\x03".to_vec()]);
        rows.clear(1);
        assert!(rows.get(1).is_empty());
        assert_eq!(rows.insert_new(1, b"z", b"9", 3), Some(0));
        assert!(rows.remove_one(3, b"o", b"\x03"));
        let Partitions::Few(store) = &rows else {
            unreachable!("few partitions")
        };
        assert_eq!(
            store.strings.fixed_width(),
            Some(15),
            "shorter ones are padded"
        );
        rows.add(0, b"a longer order key", b"", 1);
        let Partitions::Few(store) = &rows else {
            unreachable!("few partitions")
        };
        assert_eq!(store.strings.fixed_width(), None);
        assert_eq!(
            rows_of(&rows, 0),
            [
                b"a\x00".to_vec(),
                b"a longer order key".to_vec(),
                b"o\x00".to_vec()
            ]
        );
        assert_eq!(rows_of(&rows, 1), [b"z9".to_vec()]);
        assert_eq!(rows_of(&rows, 3), [b"a\x03".to_vec()]);
        assert!(rows.get(2).is_empty() && rows.get(7).is_empty());
    }
}
