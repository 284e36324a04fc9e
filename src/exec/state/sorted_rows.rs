//! `SortedRows`: a partition's rows in order, for ranking operators. Each entry is a row's
//! order-key bytes followed by its row bytes, in one allocation (arrow-row encodings are
//! prefix-free, so the concatenation sorts as the pair would), with the length of the order
//! key and how many times the row is there. Small bounded partitions (a Top-N over inserts
//! keeps at most N rows) are a sorted vector: a B-tree's node alone would cost more than the
//! rows; others are a B-tree, so that inserting into a big partition stays cheap.

use std::collections::BTreeMap;

pub enum SortedRows {
    Few(Vec<Entry>),
    Many(BTreeMap<Box<[u8]>, (u32, u64)>),
}

pub struct Entry {
    bytes: Box<[u8]>,
    order_len: u32,
    count: u64,
}

/// One row as the iteration sees it: its order-key bytes, its row bytes, its count.
pub type RowRef<'a> = (&'a [u8], &'a [u8], u64);

impl SortedRows {
    /// Empty rows; `few`: the partition stays small.
    pub fn new(few: bool) -> Self {
        if few {
            SortedRows::Few(Vec::new())
        } else {
            SortedRows::Many(BTreeMap::new())
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            SortedRows::Few(v) => v.is_empty(),
            SortedRows::Many(m) => m.is_empty(),
        }
    }

    /// Distinct rows held.
    pub fn len(&self) -> usize {
        match self {
            SortedRows::Few(v) => v.len(),
            SortedRows::Many(m) => m.len(),
        }
    }

    pub fn clear(&mut self) {
        match self {
            SortedRows::Few(v) => v.clear(),
            SortedRows::Many(m) => m.clear(),
        }
    }

    /// Adds `count` of the row whose order key is `order` and bytes `row`.
    pub fn add(&mut self, order: &[u8], row: &[u8], count: u64) {
        let key = joined(order, row);
        match self {
            SortedRows::Few(v) => match v.binary_search_by(|e| e.bytes[..].cmp(&key[..])) {
                Ok(i) => v[i].count += count,
                Err(i) => v.insert(
                    i,
                    Entry {
                        bytes: key,
                        order_len: order.len() as u32,
                        count,
                    },
                ),
            },
            SortedRows::Many(m) => {
                m.entry(key).or_insert((order.len() as u32, 0)).1 += count;
            }
        }
    }

    /// Adds a row to a small partition that does not hold it yet: the position it takes.
    /// `None`, and nothing changed, when the row is there already or the rows are not few.
    pub fn insert_new(&mut self, order: &[u8], row: &[u8]) -> Option<usize> {
        let SortedRows::Few(v) = self else {
            return None;
        };
        let key = joined(order, row);
        match v.binary_search_by(|e| e.bytes[..].cmp(&key[..])) {
            Ok(_) => None,
            Err(i) => {
                v.insert(
                    i,
                    Entry {
                        bytes: key,
                        order_len: order.len() as u32,
                        count: 1,
                    },
                );
                Some(i)
            }
        }
    }

    /// The row bytes of a small partition's entry at `position`, when each is there once.
    pub fn row_at(&self, position: usize) -> Option<&[u8]> {
        match self {
            SortedRows::Few(v) => v.get(position).map(|e| &e.bytes[e.order_len as usize..]),
            SortedRows::Many(_) => None,
        }
    }

    /// Whether every row is there once (positions are then entries).
    pub fn all_single(&self) -> bool {
        match self {
            SortedRows::Few(v) => v.iter().all(|e| e.count == 1),
            SortedRows::Many(m) => m.values().all(|&(_, c)| c == 1),
        }
    }

    /// Takes one of the row away; false when it is not there.
    pub fn remove_one(&mut self, order: &[u8], row: &[u8]) -> bool {
        let key = joined(order, row);
        match self {
            SortedRows::Few(v) => match v.binary_search_by(|e| e.bytes[..].cmp(&key[..])) {
                Ok(i) => {
                    v[i].count -= 1;
                    if v[i].count == 0 {
                        v.remove(i);
                    }
                    true
                }
                Err(_) => false,
            },
            SortedRows::Many(m) => match m.get_mut(&key) {
                Some((_, count)) => {
                    *count -= 1;
                    if *count == 0 {
                        m.remove(&key);
                    }
                    true
                }
                None => false,
            },
        }
    }

    /// Whether a row would sort at or after the last one held.
    pub fn at_or_after_last(&self, order: &[u8], row: &[u8]) -> bool {
        let last: Option<&[u8]> = match self {
            SortedRows::Few(v) => v.last().map(|e| &e.bytes[..]),
            SortedRows::Many(m) => m.keys().next_back().map(|k| &k[..]),
        };
        last.is_some_and(|last| {
            let (lo, lr) = last.split_at(order_len_of(self, last));
            (order, row) >= (lo, lr)
        })
    }

    /// Takes one of the last row away.
    pub fn remove_last_one(&mut self) {
        match self {
            SortedRows::Few(v) => {
                if let Some(e) = v.last_mut() {
                    e.count -= 1;
                    if e.count == 0 {
                        v.pop();
                    }
                }
            }
            SortedRows::Many(m) => {
                if let Some(mut tail) = m.last_entry() {
                    if tail.get().1 > 1 {
                        tail.get_mut().1 -= 1;
                    } else {
                        tail.remove();
                    }
                }
            }
        }
    }

    /// The rows in order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = RowRef<'_>> + '_> {
        match self {
            SortedRows::Few(v) => Box::new(v.iter().map(|e| {
                let (order, row) = e.bytes.split_at(e.order_len as usize);
                (order, row, e.count)
            })),
            SortedRows::Many(m) => Box::new(m.iter().map(|(k, &(order_len, count))| {
                let (order, row) = k.split_at(order_len as usize);
                (order, row, count)
            })),
        }
    }
}

fn joined(order: &[u8], row: &[u8]) -> Box<[u8]> {
    let mut key = Vec::with_capacity(order.len() + row.len());
    key.extend_from_slice(order);
    key.extend_from_slice(row);
    key.into_boxed_slice()
}

/// The order-key length of an entry held (found by its bytes).
fn order_len_of(rows: &SortedRows, bytes: &[u8]) -> usize {
    match rows {
        SortedRows::Few(v) => v
            .last()
            .filter(|e| &e.bytes[..] == bytes)
            .map_or(0, |e| e.order_len as usize),
        SortedRows::Many(m) => m.get(bytes).map_or(0, |&(len, _)| len as usize),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_hold_the_same_rows_in_the_same_order() {
        for few in [true, false] {
            let mut rows = SortedRows::new(few);
            rows.add(b"b", b"2", 1);
            rows.add(b"a", b"9", 1);
            rows.add(b"b", b"1", 2);
            assert!(rows.remove_one(b"b", b"1"));
            assert!(!rows.remove_one(b"z", b"z"));
            let all: Vec<(Vec<u8>, Vec<u8>, u64)> = rows
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
            assert!(rows.at_or_after_last(b"b", b"2"));
            assert!(!rows.at_or_after_last(b"b", b"1"));
            rows.remove_last_one();
            assert_eq!(rows.len(), 2);
        }
    }
}
