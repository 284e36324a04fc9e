//! One input of a regular join and its state: per join key, the side's distinct rows with
//! how many times each is there, how many rows of the other side each joins with (an outer
//! side's, or a semi or anti join's left), and when it was written (for the state TTL).
//!
//! What a key costs is what a join's state costs, so it is kept small:
//! - Both sides share one key table ([`JoinState`]): a key held by both pays for its bytes
//!   and its table slot once.
//! - A row is stored without its join key (the key's bytes are the key table's), as
//!   `arrow-row` bytes of its other columns; [`Side::decode`] puts the columns back together.
//! - Most keys of a join hold one row a side, once: that row lies at the key's id in the
//!   side's single rows (an [`IdStore`], side by side while rows have one width), and two
//!   bits per key say what the side holds. A key holding more has a list of records, by key
//!   id, their rows in the side's [`RowStore`]. A record names its row by a handle: the key's
//!   id marked [`SINGLE`], or the row's id in the store.
//! - Matches and write times are vectors by handle, kept only when they are used (an outer
//!   side, a TTL).
//!
//! `exec/join.rs` and `exec/semi_anti_join.rs` keep their inputs here; they and the window
//! join evaluate residual conditions over pairs of rows with [`verdicts_in_rounds`].

use std::hash::BuildHasher;

use hashbrown::{HashMap, HashTable};
use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_row::{RowConverter, Rows};
use arrow_schema::SchemaRef;

use super::byte_store::{FrozenByteStore, FrozenIdStore, IdStore, RowStore};
use super::key::{KeyEncoder, null_row, optional_encoder, whole_row_converter};
use super::key_table::{FrozenKeys, KeyTable};
use super::pages::{FrozenVec, PagedVec};
use super::ttl::StateTtl;
use crate::exec::aggregate::{StateReader, put_bytes, put_i64, put_u32};
use crate::exec::error::ExecError;
use crate::exec::eval::evaluate;
use crate::exec::operator::{FrozenState, OperatorContext, PartSink};
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;
use crate::types::chunk::batch_with_rows;

/// Pairs whose residual is evaluated at once.
const ROUND: usize = 16 * 1024;

/// A key's list of records longer than this is indexed by its rows' hashes.
pub(crate) const INDEXED_LIST: usize = 16;

/// A pair of stored rows (whole-row bytes): the left's and the right's, `None` for a side
/// padded with NULLs.
pub(crate) type RowPair<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// How to decode each side's row bytes: its converter, and its row of NULLs.
pub(crate) type Decoders<'a> = [(&'a RowConverter, &'a [u8]); 2];

/// A row as a join side stores it: its key's bytes and the bytes of its other columns.
pub(crate) type KeyedRow<'a> = (&'a [u8], &'a [u8]);

/// Both inputs' columns, the left's then the right's: what a join's residual reads.
pub(crate) fn pair_schema(left: &SchemaRef, right: &SchemaRef) -> SchemaRef {
    Arc::new(arrow_schema::Schema::new(
        left.fields()
            .iter()
            .chain(right.fields().iter())
            .cloned()
            .collect::<Vec<_>>(),
    ))
}

/// Rows of `schema` from `pairs`: the left's columns, then (`sides` 2) the right's, NULL
/// where a pair has no row of a side.
pub(crate) fn pairs_batch(
    decoders: Decoders<'_>,
    pairs: &[RowPair<'_>],
    schema: &SchemaRef,
    sides: usize,
) -> Result<RecordBatch, ExecError> {
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for (s, (rows, nulls)) in decoders.iter().enumerate().take(sides) {
        let parser = rows.parser();
        columns.extend(rows.convert_rows(pairs.iter().map(|p| {
            let row = if s == 0 { p.0 } else { p.1 };
            parser.parse(row.unwrap_or(nulls))
        }))?);
    }
    Ok(batch_with_rows(schema.clone(), columns, pairs.len())?)
}

/// Whether `residual` holds for each of `n` pairs, appended to `verdicts`: `build` makes the
/// batch of a range of the pairs (both sides' columns), [`ROUND`] pairs at a time.
pub(crate) fn verdicts_in_rounds(
    residual: &ScalarExpr,
    ctx: &EvalContext,
    n: usize,
    mut build: impl FnMut(Range<usize>) -> Result<RecordBatch, ExecError>,
    verdicts: &mut Vec<bool>,
) -> Result<(), ExecError> {
    let mut start = 0;
    while start < n {
        let end = (start + ROUND).min(n);
        let batch = build(start..end)?;
        let result = evaluate(residual, &batch, ctx)?;
        let result = result.as_boolean();
        verdicts.extend((0..end - start).map(|i| result.is_valid(i) && result.value(i)));
        start = end;
    }
    Ok(())
}

/// [`verdicts_in_rounds`] over pairs of whole rows (over `schema`, both sides' columns).
pub(crate) fn pair_verdicts(
    residual: &ScalarExpr,
    ctx: &EvalContext,
    decoders: Decoders<'_>,
    pairs: &[RowPair<'_>],
    schema: &SchemaRef,
    verdicts: &mut Vec<bool>,
) -> Result<(), ExecError> {
    verdicts_in_rounds(
        residual,
        ctx,
        pairs.len(),
        |range| pairs_batch(decoders, &pairs[range], schema, 2),
        verdicts,
    )
}

/// A stored row: its key's id and its place among the key's records.
pub(crate) type RecordAt = (u32, u32);

/// One distinct row of a side and how many times it is there. `row` is the row's handle:
/// its key's id with [`SINGLE`] set for a row kept at its key's id in the side's single
/// rows, else its id in the side's row store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    pub row: u32,
    pub count: u32,
}

/// The mark of a single row's handle.
const SINGLE: u32 = 1 << 31;

/// A key's records on one side, to read.
#[derive(Clone, Copy)]
pub(crate) enum Records<'a> {
    One(Record),
    Many(&'a [Record]),
}

impl<'a> Records<'a> {
    pub fn len(&self) -> usize {
        match self {
            Records::One(_) => 1,
            Records::Many(records) => records.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, at: usize) -> Record {
        match self {
            Records::One(record) => *record,
            Records::Many(records) => records[at],
        }
    }

    pub fn iter(self) -> impl Iterator<Item = Record> + 'a {
        let (one, many) = match self {
            Records::One(record) => (Some(record), &[][..]),
            Records::Many(records) => (None, records),
        };
        one.into_iter().chain(many.iter().copied())
    }
}

/// What a side holds under a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holds {
    Nothing = 0,
    /// One row, there once: in the side's single rows at the key's id.
    Single = 1,
    /// A list of records (rows in the side's row store).
    List = 2,
}

/// A value per row handle: single rows' by key id, the row store's by row id. In pages, so
/// that a checkpoint can freeze them.
#[derive(Default)]
struct ByHandle<T> {
    single: PagedVec<T>,
    stored: PagedVec<T>,
}

/// A [`ByHandle`] as it was when frozen.
struct FrozenByHandle<T> {
    single: FrozenVec<T>,
    stored: FrozenVec<T>,
}

impl<T: Copy + Default> FrozenByHandle<T> {
    fn get(&self, handle: u32) -> T {
        let (single, at) = split(handle);
        let values = if single { &self.single } else { &self.stored };
        values.get(at).copied().unwrap_or_default()
    }
}

/// Whether a handle names a single row, and its index among the single rows (a key id) or
/// in the row store.
fn split(handle: u32) -> (bool, usize) {
    (handle & SINGLE != 0, (handle & !SINGLE) as usize)
}

impl<T: Copy + Default + PartialEq> ByHandle<T> {
    fn get(&self, handle: u32) -> T {
        let (single, at) = split(handle);
        let values = if single { &self.single } else { &self.stored };
        values.get(at).copied().unwrap_or_default()
    }

    /// Sets the value of `handle` (a default one only where values are kept already).
    fn set(&mut self, handle: u32, value: T) {
        let (single, at) = split(handle);
        let values = if single {
            &mut self.single
        } else {
            &mut self.stored
        };
        if at >= values.len() {
            if value == T::default() {
                return;
            }
            values.grow(at + 1, T::default());
        }
        values[at] = value;
    }

    fn freeze(&self) -> FrozenByHandle<T> {
        FrozenByHandle {
            single: self.single.freeze(),
            stored: self.stored.freeze(),
        }
    }
}

/// What key `id` holds, from its word of two-bit marks (`None`: beyond them, nothing).
fn holds_of(word: Option<u64>, id: u32) -> Holds {
    match word.map_or(0, |w| w >> (id % 32 * 2) & 3) {
        0 => Holds::Nothing,
        1 => Holds::Single,
        _ => Holds::List,
    }
}

/// The records under key `id`, which holds `holds`; its list (if any) in `lists`.
fn records_of(holds: Holds, id: u32, lists: &HashMap<u32, Vec<Record>>) -> Records<'_> {
    match holds {
        Holds::Nothing => Records::Many(&[]),
        Holds::Single => Records::One(Record {
            row: id | SINGLE,
            count: 1,
        }),
        Holds::List => Records::Many(&lists[&id]),
    }
}

/// Whether the state TTL has expired row `handle` at `now`, its write times in `written`.
fn expired(written: &ByHandle<i64>, handle: u32, now: i64, ttl: StateTtl) -> bool {
    ttl.is_on() && ttl.expired(written.get(handle), now)
}

/// One input of the join and its state.
pub(crate) struct Side {
    /// The encoder of the join key's columns (`None`: no equal keys, every row one key).
    pub keys: Option<KeyEncoder>,
    pub key_columns: Vec<usize>,
    /// The converter of the columns stored with a row: all but the key's (`None`: none).
    rest: Option<RowConverter>,
    rest_columns: Vec<usize>,
    /// Per column of the side, where a decoded row has it: a key column (`true`) or a
    /// stored one, and its place there.
    sources: Vec<(bool, usize)>,
    /// The key's and the stored bytes of a row of NULLs, for padding.
    null_key: Box<[u8]>,
    null_rest: Box<[u8]>,
    pub outer: bool,
    /// Two bits per key id: what the side holds under the key.
    holds: PagedVec<u64>,
    /// The rows of keys holding one row once, by key id.
    singles: IdStore,
    /// The records of keys holding more, by key id; their rows in `stored`.
    lists: HashMap<u32, Vec<Record>>,
    /// For keys with a long list: each record's place in it, by the hash of its row, so that
    /// finding a row (to count another copy of it) does not walk the list — a key holding
    /// many distinct rows (a window's bounds as the join key) would cost its length per row.
    index: HashMap<u32, HashTable<(u64, u32)>>,
    hasher: hashbrown::DefaultHashBuilder,
    stored: RowStore,
    /// Per row, how many rows of the other side it joins with (kept once one does).
    associations: ByHandle<u32>,
    /// Per row, when it was last written (processing time, milliseconds), while a state
    /// TTL is on.
    written: ByHandle<i64>,
}

impl Side {
    pub fn new(
        schema: &SchemaRef,
        key_columns: Vec<usize>,
        outer: bool,
    ) -> Result<Self, ExecError> {
        let rest_columns: Vec<usize> = (0..schema.fields().len())
            .filter(|c| !key_columns.contains(c))
            .collect();
        let sources = (0..schema.fields().len())
            .map(|c| match key_columns.iter().position(|&k| k == c) {
                Some(k) => (true, k),
                None => (
                    false,
                    rest_columns.iter().position(|&r| r == c).unwrap_or(0),
                ),
            })
            .collect();
        let key_schema = schema.project(&key_columns)?;
        let rest_schema = schema.project(&rest_columns)?;
        let (rest, null_rest) = match rest_columns.is_empty() {
            true => (None, Box::default()),
            false => {
                let rest = whole_row_converter(&rest_schema)?;
                let nulls = null_row(&rest, &rest_schema)?;
                (Some(rest), nulls)
            }
        };
        Ok(Side {
            keys: optional_encoder(schema, key_columns.clone())?,
            null_key: null_row(&whole_row_converter(&key_schema)?, &key_schema)?,
            key_columns,
            rest,
            rest_columns,
            sources,
            null_rest,
            outer,
            holds: PagedVec::new(),
            singles: IdStore::default(),
            lists: HashMap::new(),
            index: HashMap::new(),
            hasher: Default::default(),
            stored: RowStore::default(),
            associations: ByHandle::default(),
            written: ByHandle::default(),
        })
    }

    /// The stored bytes of `batch`'s rows (`None`: every row stores none).
    pub fn encode(&self, batch: &RecordBatch) -> Result<Option<Rows>, ExecError> {
        let Some(rest) = &self.rest else {
            return Ok(None);
        };
        let columns: Vec<ArrayRef> = self
            .rest_columns
            .iter()
            .map(|&c| batch.column(c).clone())
            .collect();
        Ok(Some(rest.convert_columns(&columns)?))
    }

    /// Row `i`'s stored bytes from what [`Side::encode`] gave (empty when the side stores
    /// no columns).
    pub fn stored_bytes(rows: Option<&Rows>, i: usize) -> &[u8] {
        rows.map_or(&[], |r| r.row(i).data())
    }

    /// The row of NULLs, for padding.
    pub fn nulls(&self) -> KeyedRow<'_> {
        (&self.null_key, &self.null_rest)
    }

    /// The side's columns of `rows`.
    pub fn decode(&self, rows: &[KeyedRow<'_>]) -> Result<Vec<ArrayRef>, ExecError> {
        let keys = match &self.keys {
            Some(keys) => keys.decode(rows.iter().map(|r| r.0))?,
            None => Vec::new(),
        };
        let rest = match &self.rest {
            Some(rest) => {
                let parser = rest.parser();
                rest.convert_rows(rows.iter().map(|r| parser.parse(r.1)))?
            }
            None => Vec::new(),
        };
        Ok(self
            .sources
            .iter()
            .map(|&(key, at)| if key { &keys[at] } else { &rest[at] }.clone())
            .collect())
    }

    /// Whether the state TTL has expired a record at `now`.
    pub fn expired(&self, record: &Record, now: i64, ttl: StateTtl) -> bool {
        expired(&self.written, record.row, now, ttl)
    }

    /// How many rows of the other side row `row` (a handle) joins with.
    pub fn associations(&self, row: u32) -> u32 {
        self.associations.get(row)
    }

    pub fn set_associations(&mut self, row: u32, associations: u32) {
        self.associations.set(row, associations);
    }

    /// Notes that row `row` was written at `now` (while a TTL is on).
    fn touch(&mut self, row: u32, now: i64, ttl: StateTtl) {
        if ttl.is_on() {
            self.written.set(row, now);
        }
    }

    fn holds(&self, id: u32) -> Holds {
        holds_of(self.holds.get(id as usize / 32).copied(), id)
    }

    fn set_holds(&mut self, id: u32, holds: Holds) {
        let (word, shift) = (id as usize / 32, id % 32 * 2);
        if word >= self.holds.len() {
            self.holds.grow(word + 1, 0);
        }
        self.holds[word] = self.holds[word] & !(3 << shift) | (holds as u64) << shift;
    }

    /// The records under key `id`.
    fn records(&self, id: u32) -> Records<'_> {
        records_of(self.holds(id), id, &self.lists)
    }

    /// The record under key `id` whose row is `row` (stored bytes), and its place.
    fn find(&self, id: u32, row: &[u8]) -> Option<(usize, Record)> {
        if let Some(table) = self.index.get(&id) {
            let list = &self.lists[&id];
            let hash = self.hasher.hash_one(row);
            let &(_, at) = table.find(hash, |&(h, at)| {
                h == hash && self.bytes(list[at as usize].row) == row
            })?;
            return Some((at as usize, list[at as usize]));
        }
        let records = self.records(id);
        let at = records.iter().position(|r| self.bytes(r.row) == row)?;
        Some((at, records.get(at)))
    }

    /// A row's stored bytes by its handle.
    fn bytes(&self, row: u32) -> &[u8] {
        match split(row) {
            (true, id) => self.singles.get(id as u32),
            (false, _) => self.stored.get(row),
        }
    }

    /// Makes key `id`'s single row (if it holds one) the first record of a list, its
    /// matches and write time going with it.
    fn make_list(&mut self, id: u32) {
        if self.holds(id) != Holds::Single {
            return;
        }
        let single = id | SINGLE;
        let row = self.stored.insert(self.singles.get(id));
        assert!(row < SINGLE, "more than 2^31 rows on a join side");
        self.associations.set(row, self.associations.get(single));
        self.written.set(row, self.written.get(single));
        self.lists.insert(id, vec![Record { row, count: 1 }]);
        self.set_holds(id, Holds::List);
    }

    /// Keeps a new row `row` (not held yet) under key `id` with `count`: its handle.
    fn put(&mut self, id: u32, row: &[u8], count: u32) -> u32 {
        assert!(id < SINGLE, "more than 2^31 keys in a join");
        if self.holds(id) == Holds::Nothing && count == 1 {
            self.singles.set(id, row);
            self.set_holds(id, Holds::Single);
            return id | SINGLE;
        }
        self.make_list(id);
        let handle = self.stored.insert(row);
        assert!(handle < SINGLE, "more than 2^31 rows on a join side");
        let record = Record { row: handle, count };
        match self.holds(id) {
            Holds::List => self.lists.get_mut(&id).expect("a listed key").push(record),
            _ => {
                self.lists.insert(id, vec![record]);
                self.set_holds(id, Holds::List);
            }
        }
        self.index_last(id);
        handle
    }

    /// Indexes the last record of key `id`'s list, or the whole list when it has just grown
    /// long enough.
    fn index_last(&mut self, id: u32) {
        let list = &self.lists[&id];
        if list.len() < INDEXED_LIST {
            return;
        }
        let hash_of = |r: &Record| match split(r.row) {
            (true, k) => self.hasher.hash_one(self.singles.get(k as u32)),
            (false, _) => self.hasher.hash_one(self.stored.get(r.row)),
        };
        match self.index.get_mut(&id) {
            Some(table) => {
                let at = list.len() - 1;
                table.insert_unique(hash_of(&list[at]), (hash_of(&list[at]), at as u32), |e| e.0);
            }
            None => {
                let mut table = HashTable::with_capacity(list.len());
                for (at, record) in list.iter().enumerate() {
                    let hash = hash_of(record);
                    table.insert_unique(hash, (hash, at as u32), |e| e.0);
                }
                self.index.insert(id, table);
            }
        }
    }

    /// Sets the count of record `at` under key `id` (at least 1).
    fn set_count(&mut self, id: u32, at: usize, count: u32) {
        if count > 1 {
            self.make_list(id);
        }
        if self.holds(id) == Holds::List {
            self.lists.get_mut(&id).expect("a listed key")[at].count = count;
        }
    }

    /// Drops the records under key `id` that `keep` refuses, and their rows.
    fn retain(&mut self, id: u32, mut keep: impl FnMut(&Side, &Record) -> bool) {
        match self.holds(id) {
            Holds::Nothing => {}
            Holds::Single => {
                let record = self.records(id).get(0);
                if !keep(self, &record) {
                    self.set_holds(id, Holds::Nothing);
                }
            }
            Holds::List => {
                let mut list = self.lists.remove(&id).expect("a listed key");
                self.index.remove(&id);
                let kept: Vec<bool> = list.iter().map(|r| keep(self, r)).collect();
                let mut kept = kept.into_iter();
                list.retain(|r| {
                    let keep = kept.next().unwrap_or(true);
                    if !keep {
                        self.stored.remove(r.row);
                    }
                    keep
                });
                if list.is_empty() {
                    self.set_holds(id, Holds::Nothing);
                } else {
                    let long = list.len() >= INDEXED_LIST;
                    self.lists.insert(id, list);
                    if long {
                        self.index_last(id);
                    }
                }
            }
        }
    }

    /// Removes record `at` under key `id` (the last taking its place), and its row.
    fn remove(&mut self, id: u32, at: usize) {
        match self.holds(id) {
            Holds::Nothing => {}
            Holds::Single => self.set_holds(id, Holds::Nothing),
            Holds::List => {
                if let Some(table) = self.index.get_mut(&id) {
                    // The removed record's entry goes; the last record's takes its place.
                    let list = &self.lists[&id];
                    let hash = self.hasher.hash_one(self.stored.get(list[at].row));
                    if let Ok(entry) = table.find_entry(hash, |e| e.1 == at as u32) {
                        entry.remove();
                    }
                    let last = list.len() - 1;
                    if at != last {
                        let hash = self.hasher.hash_one(self.stored.get(list[last].row));
                        if let Some(entry) = table.find_mut(hash, |e| e.1 == last as u32) {
                            entry.1 = at as u32;
                        }
                    }
                }
                let list = self.lists.get_mut(&id).expect("a listed key");
                let record = list.swap_remove(at);
                self.stored.remove(record.row);
                if list.is_empty() {
                    self.lists.remove(&id);
                    self.index.remove(&id);
                    self.set_holds(id, Holds::Nothing);
                }
            }
        }
    }
}

/// Both inputs of a join: one key table (a key held by both sides pays for its bytes and its
/// table slot once, and a row probes the other side and finds its own in one lookup); what
/// each side holds under a key is the side's, by the key's id.
pub(crate) struct JoinState {
    pub keys: KeyTable<()>,
    /// Left, right.
    pub sides: [Side; 2],
}

impl JoinState {
    pub fn new(sides: [Side; 2]) -> Self {
        JoinState {
            keys: KeyTable::new(OperatorContext::default().max_parallelism),
            sides,
        }
    }

    /// Side `s`'s records under key `id`.
    pub fn records(&self, s: usize, id: u32) -> Records<'_> {
        self.sides[s].records(id)
    }

    pub fn record(&self, s: usize, at: RecordAt) -> Record {
        self.records(s, at.0).get(at.1 as usize)
    }

    /// The row of a record of side `s`: its key's bytes and its own.
    pub fn row(&self, s: usize, at: RecordAt) -> KeyedRow<'_> {
        let record = self.record(s, at);
        (self.keys.bytes(at.0), self.sides[s].bytes(record.row))
    }

    /// Side `s`'s records with their rows, every key.
    pub fn all_records(&self, s: usize) -> impl Iterator<Item = (Record, KeyedRow<'_>)> {
        let side = &self.sides[s];
        self.keys.iter().flat_map(move |(id, key)| {
            side.records(id)
                .iter()
                .map(move |r| (r, (key.bytes, side.bytes(r.row))))
        })
    }

    /// Forgets key `id` once neither side holds a row under it.
    fn forget_if_empty(&mut self, id: u32) {
        if self
            .sides
            .iter()
            .all(|side| side.holds(id) == Holds::Nothing)
        {
            self.keys.remove(id);
        }
    }

    /// Adds one copy of `row` (its stored bytes) under `key` to side `s` at `now`; an outer
    /// side's row joins `associations` rows. An expired copy counts for nothing. `id` is
    /// the key's id when the caller found it and it cannot have gone since.
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        s: usize,
        key: &[u8],
        id: Option<u32>,
        row: &[u8],
        associations: u32,
        now: i64,
        ttl: StateTtl,
    ) {
        let id = id.unwrap_or_else(|| self.keys.intern(key).0);
        let side = &mut self.sides[s];
        let handle = match side.find(id, row) {
            Some((at, r)) => {
                let expired = expired(&side.written, r.row, now, ttl);
                side.set_count(id, at, if expired { 1 } else { r.count + 1 });
                // A single row made a list moved to the row store.
                side.records(id).get(at).row
            }
            None => side.put(id, row, 1),
        };
        side.set_associations(handle, associations);
        side.touch(handle, now, ttl);
    }

    /// Takes one copy of `row` (its stored bytes) from under `key` on side `s` (nothing when
    /// it is not there, or expired, as Flink's state view does).
    pub fn retract(&mut self, s: usize, key: &[u8], row: &[u8], now: i64, ttl: StateTtl) {
        let Some(id) = self.keys.find(key) else {
            return;
        };
        let side = &mut self.sides[s];
        if let Some((at, record)) = side.find(id, row) {
            if expired(&side.written, record.row, now, ttl) || record.count == 1 {
                side.remove(id, at);
            } else {
                side.set_count(id, at, record.count - 1);
                side.touch(record.row, now, ttl);
            }
        }
        self.forget_if_empty(id);
    }

    /// Drops every row of side `s` the state TTL expired.
    pub fn sweep(&mut self, s: usize, now: i64, ttl: StateTtl) {
        let ids: Vec<u32> = self.keys.iter().map(|(id, _)| id).collect();
        for id in ids {
            self.sides[s].retain(id, |side, r| !expired(&side.written, r.row, now, ttl));
            self.forget_if_empty(id);
        }
    }

    /// Per key group: for each key and side holding rows under it, the side (a byte), the
    /// key and its rows (stored bytes, count, associations, when written); what
    /// [`FrozenJoin`] writes.
    pub fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        self.freeze()
            .to_snapshot()
            .expect("writing into memory does not fail")
    }

    /// Both sides' state as it is now, for a checkpoint's writer (docs/design/0008 §7):
    /// their pages shared, the lists of keys holding several rows copied.
    pub fn freeze(&self) -> FrozenJoin {
        FrozenJoin {
            keys: self.keys.freeze(),
            sides: [&self.sides[0], &self.sides[1]].map(|side| FrozenSide {
                holds: side.holds.freeze(),
                singles: side.singles.freeze(),
                lists: side.lists.clone(),
                stored: side.stored.freeze(),
                associations: side.associations.freeze(),
                written: side.written.freeze(),
            }),
        }
    }

    /// Reads back one key group of what [`JoinState::snapshot`] (or [`FrozenJoin`]) wrote.
    pub fn restore(&mut self, state: &[u8]) -> Result<(), ExecError> {
        let mut input = StateReader::new(state);
        while !input.is_empty() {
            let s = input.u8()? as usize;
            if s > 1 {
                return Err(ExecError::Internal(format!("a join has no side {s}")));
            }
            let (id, _) = self.keys.intern(input.bytes()?);
            for _ in 0..input.u32()? {
                let row = input.bytes()?;
                let count = input.u32()?;
                let associations = input.u32()?;
                let written = input.i64()?;
                if count == 0 {
                    return Err(ExecError::Internal("a join row of count 0".into()));
                }
                let side = &mut self.sides[s];
                let handle = side.put(id, row, count);
                side.set_associations(handle, associations);
                side.written.set(handle, written);
            }
        }
        Ok(())
    }
}

/// One side of a join's state as it was at a barrier.
struct FrozenSide {
    holds: FrozenVec<u64>,
    singles: FrozenIdStore,
    lists: HashMap<u32, Vec<Record>>,
    stored: FrozenByteStore,
    associations: FrozenByHandle<u32>,
    written: FrozenByHandle<i64>,
}

impl FrozenSide {
    fn records(&self, id: u32) -> Records<'_> {
        records_of(
            holds_of(self.holds.get(id as usize / 32).copied(), id),
            id,
            &self.lists,
        )
    }

    fn bytes(&self, row: u32) -> &[u8] {
        match split(row) {
            (true, id) => self.singles.get(id as u32),
            (false, _) => self.stored.get(row),
        }
    }
}

/// A join's state as it was at a barrier ([`JoinState::freeze`]).
pub(crate) struct FrozenJoin {
    keys: FrozenKeys,
    sides: [FrozenSide; 2],
}

impl FrozenState for FrozenJoin {
    fn write(&self, out: &mut PartSink<'_>) -> Result<(), ExecError> {
        self.keys.write_each(out, |id, key, bytes| {
            for (s, side) in self.sides.iter().enumerate() {
                let records = side.records(id);
                if records.is_empty() {
                    continue;
                }
                bytes.push(s as u8);
                put_bytes(bytes, key);
                put_u32(bytes, records.len() as u32);
                for record in records.iter() {
                    put_bytes(bytes, side.bytes(record.row));
                    put_u32(bytes, record.count);
                    put_u32(bytes, side.associations.get(record.row));
                    put_i64(bytes, side.written.get(record.row));
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::state::key::key_bytes;
    use crate::exec::test_harness::{chunk, schema};
    use crate::types::TypeKind;

    fn rows_of(side: &Side, id: u32) -> Vec<(Vec<u8>, u32)> {
        side.records(id)
            .iter()
            .map(|r| (side.bytes(r.row).to_vec(), r.count))
            .collect()
    }

    /// A key's row there once lies at the key's id in the side's single rows; a second copy
    /// or a second row makes a list in the row store, the first row moving there with its
    /// matches; removals empty the key; single rows of one width lie side by side until one
    /// differs, and all read back.
    #[test]
    fn a_single_row_lies_at_its_key_and_more_make_a_list() {
        let shape = schema(&[("k", TypeKind::Int), ("v", TypeKind::Int)]);
        let mut side =
            Side::new(&crate::types::chunk::runtime_schema(&shape), vec![0], true).unwrap();
        assert_eq!(side.put(3, b"r1", 1), 3 | SINGLE);
        assert_eq!(side.holds(3), Holds::Single);
        side.set_associations(3 | SINGLE, 2);
        side.set_count(3, 0, 2);
        assert_eq!(side.holds(3), Holds::List);
        let moved = side.records(3).get(0);
        assert_eq!((moved.count, side.associations(moved.row)), (2, 2));
        assert_eq!(side.bytes(moved.row), b"r1");
        side.put(3, b"r22", 1);
        assert_eq!(
            rows_of(&side, 3),
            [(b"r1".to_vec(), 2), (b"r22".to_vec(), 1)]
        );
        side.remove(3, 0);
        assert_eq!(rows_of(&side, 3), [(b"r22".to_vec(), 1)]);
        side.remove(3, 0);
        assert_eq!(side.holds(3), Holds::Nothing);
        assert!(side.lists.is_empty() && side.records(3).is_empty());

        for (id, row) in [(40, &b"ab"[..]), (7, b"cd"), (64, b"ef")] {
            side.put(id, row, 1);
        }
        assert_eq!(side.singles.fixed_width(), Some(2));
        side.put(9, b"a longer row", 1);
        assert_eq!(side.singles.fixed_width(), None);
        for (id, row) in [
            (40, &b"ab"[..]),
            (7, b"cd"),
            (64, b"ef"),
            (9, b"a longer row"),
        ] {
            assert_eq!(rows_of(&side, id), [(row.to_vec(), 1)], "key {id}");
        }
        side.retain(40, |_, _| false);
        assert_eq!(side.holds(40), Holds::Nothing);
        // A restored row there twice starts as a list.
        side.put(50, b"x", 2);
        assert_eq!(
            (side.holds(50), rows_of(&side, 50)),
            (Holds::List, vec![(b"x".to_vec(), 2)])
        );
        assert_eq!(side.holds(64), Holds::Single);
    }

    /// A row stored without its key comes back whole from the key's bytes and its own,
    /// whichever columns the key takes (one twice, as `l.k = r.a AND l.k = r.b` asks), and
    /// padding is a row of NULLs.
    #[test]
    fn rows_stored_without_their_key_decode_whole() {
        let shape = schema(&[
            ("a", TypeKind::Int),
            ("k", TypeKind::BigInt),
            ("s", TypeKind::VarChar(10)),
        ]);
        let rows = chunk(
            &shape,
            "+I 1 | 10 | x\n+I NULL | 20 | a longer one\n+I 3 | 30 | NULL",
        );
        let runtime = crate::types::chunk::runtime_schema(&shape);
        for keys in [vec![1], vec![1, 1], vec![2, 0], vec![], vec![0, 1, 2]] {
            let side = Side::new(&runtime, keys.clone(), true).unwrap();
            let encoded = side.keys.as_ref().map(|k| k.encode(&rows.batch).unwrap());
            let stored = side.encode(&rows.batch).unwrap();
            let keyed: Vec<KeyedRow<'_>> = (0..3)
                .map(|i| {
                    (
                        key_bytes(encoded.as_ref(), i),
                        key_bytes(stored.as_ref(), i),
                    )
                })
                .collect();
            let decoded = side.decode(&keyed).unwrap();
            assert_eq!(&decoded[..], rows.batch.columns(), "key {keys:?}");
            let nulls = side.decode(&[side.nulls()]).unwrap();
            assert!(
                nulls.iter().all(|c| c.len() == 1 && c.is_null(0)),
                "key {keys:?}"
            );
        }
    }
}
