//! One input of a regular join and its state: per join key, the side's distinct rows with
//! how many times each is there, how many rows of the other side each joins with (an outer
//! side's, or a semi or anti join's left), and when it was written (for the state TTL).
//!
//! What a key costs is what a join's state costs, so it is kept small:
//! - Both sides share one key table ([`JoinState`]): a key held by both pays for its bytes
//!   and its table slot once.
//! - A key's records on a side are 8 bytes in the key's slot ([`KeyRows`]): the record
//!   itself when there is one, else the index of a list of the side's.
//! - A row is stored without its join key (the key's bytes are the key table's), as
//!   `arrow-row` bytes of its other columns in the side's [`RowStore`], side by side while
//!   they have one width; [`Side::decode`] puts the columns back together.
//! - Matches and write times are vectors by row id, kept only when they are used (an outer
//!   side, a TTL).
//!
//! `exec/join.rs` and `exec/semi_anti_join.rs` keep their inputs here; they and the window
//! join evaluate residual conditions over pairs of rows with [`verdicts_in_rounds`].

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_row::{RowConverter, Rows};
use arrow_schema::SchemaRef;

use super::byte_store::RowStore;
use super::key::{KeyEncoder, null_row, optional_encoder, whole_row_converter};
use super::key_table::KeyTable;
use super::ttl::StateTtl;
use crate::exec::aggregate::{StateReader, put_bytes, put_i64, put_u32};
use crate::exec::chunk::batch_with_rows;
use crate::exec::eval::evaluate;
use crate::exec::operator::{ExecError, OperatorContext};
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;

/// Pairs whose residual is evaluated at once.
const ROUND: usize = 16 * 1024;

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

/// One distinct row of a side (its id in the side's row store) and how many times it is
/// there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    pub row: u32,
    pub count: u32,
}

/// A key's records on one side as [`KeyRows`] holds them, to read.
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

    fn position(self, mut found: impl FnMut(&Record) -> bool) -> Option<usize> {
        self.iter().position(|r| found(&r))
    }
}

/// [`KeyRows`] of a key holding no record on a side.
const NO_RECORDS: u32 = u32::MAX;
/// The bit that marks [`KeyRows`] as the index of a list.
const LIST: u32 = 1 << 31;

/// A key's records on one side, in 4 bytes. Most keys of a join hold one row a side, once:
/// the slot is then that row's id. Otherwise it is the index of a list of the side's
/// [`Lists`] (marked by [`LIST`]), or [`NO_RECORDS`].
#[derive(Clone, Copy)]
pub(crate) struct KeyRows(u32);

impl Default for KeyRows {
    fn default() -> Self {
        KeyRows(NO_RECORDS)
    }
}

impl KeyRows {
    pub fn is_empty(&self) -> bool {
        self.0 == NO_RECORDS
    }

    /// The index of its list, when it has one.
    fn list(&self) -> Option<usize> {
        (self.0 & LIST != 0 && !self.is_empty()).then_some((self.0 & !LIST) as usize)
    }

    /// The record a slot can hold itself: a row there once, whose id leaves [`LIST`] clear.
    fn single(record: Record) -> Option<KeyRows> {
        (record.count == 1 && record.row & LIST == 0).then_some(KeyRows(record.row))
    }
}

/// The records of a side's keys that [`KeyRows`] cannot hold itself, a list per key; a
/// freed list's index goes to the next.
#[derive(Default)]
struct Lists {
    lists: Vec<Vec<Record>>,
    free: Vec<u32>,
}

impl Lists {
    fn get<'a>(&'a self, rows: &KeyRows) -> Records<'a> {
        match rows.list() {
            Some(list) => Records::Many(&self.lists[list]),
            None if rows.is_empty() => Records::Many(&[]),
            None => Records::One(Record {
                row: rows.0,
                count: 1,
            }),
        }
    }

    /// Makes `rows` a list of `records`.
    fn make_list(&mut self, rows: &mut KeyRows, records: Vec<Record>) {
        let index = match self.free.pop() {
            Some(index) => {
                self.lists[index as usize] = records;
                index
            }
            None => {
                self.lists.push(records);
                self.lists.len() as u32 - 1
            }
        };
        assert!(index < LIST, "more than 2^31 keys with several rows");
        *rows = KeyRows(index | LIST);
    }

    fn push(&mut self, rows: &mut KeyRows, record: Record) {
        if let Some(list) = rows.list() {
            self.lists[list].push(record);
        } else if rows.is_empty() {
            match KeyRows::single(record) {
                Some(single) => *rows = single,
                None => self.make_list(rows, vec![record]),
            }
        } else {
            let first = self.get(rows).get(0);
            self.make_list(rows, vec![first, record]);
        }
    }

    /// Sets the count of the record at `at` (at least 1).
    fn set_count(&mut self, rows: &mut KeyRows, at: usize, count: u32) {
        debug_assert!(count > 0, "a record of count 0 is removed instead");
        match rows.list() {
            Some(list) => self.lists[list][at].count = count,
            None if count == 1 => {}
            None => self.make_list(rows, vec![Record { row: rows.0, count }]),
        }
    }

    /// Back to the record itself (or none) from list `list` when the slot can hold it; the
    /// list is then freed.
    fn shrink(&mut self, rows: &mut KeyRows, list: usize) {
        *rows = match self.lists[list][..] {
            [] => KeyRows::default(),
            [one] => match KeyRows::single(one) {
                Some(single) => single,
                None => return,
            },
            _ => return,
        };
        self.lists[list] = Vec::new();
        self.free.push(list as u32);
    }

    /// Removes the record at `at`, the last taking its place.
    fn swap_remove(&mut self, rows: &mut KeyRows, at: usize) -> Record {
        match rows.list() {
            Some(list) => {
                let record = self.lists[list].swap_remove(at);
                self.shrink(rows, list);
                record
            }
            None => {
                debug_assert!(!rows.is_empty() && at == 0, "no record {at} to remove");
                let record = self.get(rows).get(0);
                *rows = KeyRows::default();
                record
            }
        }
    }

    /// Keeps the records `keep` accepts, in their order.
    fn retain(&mut self, rows: &mut KeyRows, mut keep: impl FnMut(&Record) -> bool) {
        match rows.list() {
            Some(list) => {
                self.lists[list].retain(|r| keep(r));
                self.shrink(rows, list);
            }
            None if rows.is_empty() => {}
            None => {
                if !keep(&self.get(rows).get(0)) {
                    *rows = KeyRows::default();
                }
            }
        }
    }
}

/// Whether the state TTL has expired row `row`, written when `written` says, at `now`.
fn expired(written: &[i64], row: u32, now: i64, ttl: StateTtl) -> bool {
    ttl.is_on() && ttl.expired(written.get(row as usize).copied().unwrap_or(0), now)
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
    stored: RowStore,
    lists: Lists,
    /// Per row id, how many rows of the other side the row joins with (only once one
    /// does).
    associations: Vec<u32>,
    /// Per row id, when the row was last written (processing time, milliseconds), while a
    /// state TTL is on.
    written: Vec<i64>,
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
            stored: RowStore::default(),
            lists: Lists::default(),
            associations: Vec::new(),
            written: Vec::new(),
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

    /// How many rows of the other side row `row` joins with.
    pub fn associations(&self, row: u32) -> u32 {
        self.associations.get(row as usize).copied().unwrap_or(0)
    }

    pub fn set_associations(&mut self, row: u32, associations: u32) {
        let at = row as usize;
        if at >= self.associations.len() {
            if associations == 0 {
                return;
            }
            self.associations.resize(self.stored.capacity(), 0);
        }
        self.associations[at] = associations;
    }

    /// Notes that row `row` was written at `now` (while a TTL is on).
    fn touch(&mut self, row: u32, now: i64, ttl: StateTtl) {
        if ttl.is_on() {
            let row = row as usize;
            if self.written.len() <= row {
                self.written.resize(self.stored.capacity(), 0);
            }
            self.written[row] = now;
        }
    }
}

/// Both inputs of a join: one key table, each key with both sides' records (a key held by
/// both sides pays for its bytes and its table slot once, and a row probes the other side
/// and finds its own in one lookup).
pub(crate) struct JoinState {
    pub keys: KeyTable<[KeyRows; 2]>,
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
        self.sides[s].lists.get(&self.keys.value(id)[s])
    }

    pub fn record(&self, s: usize, at: RecordAt) -> Record {
        self.records(s, at.0).get(at.1 as usize)
    }

    /// The row of a record of side `s`: its key's bytes and its own.
    pub fn row(&self, s: usize, at: RecordAt) -> KeyedRow<'_> {
        let record = self.record(s, at);
        (self.keys.bytes(at.0), self.sides[s].stored.get(record.row))
    }

    /// Side `s`'s records with their rows, every key.
    pub fn all_records(&self, s: usize) -> impl Iterator<Item = (Record, KeyedRow<'_>)> {
        let side = &self.sides[s];
        self.keys.iter().flat_map(move |(_, key)| {
            side.lists
                .get(&key.value[s])
                .iter()
                .map(move |r| (r, (key.bytes, side.stored.get(r.row))))
        })
    }

    /// Forgets key `id` once neither side holds a row under it.
    fn forget_if_empty(&mut self, id: u32) {
        if self.keys.value(id).iter().all(KeyRows::is_empty) {
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
        let slot = &mut self.keys.value_mut(id)[s];
        let records = side.lists.get(slot);
        let at = match records.position(|r| side.stored.get(r.row) == row) {
            Some(at) => {
                let r = records.get(at);
                let expired = expired(&side.written, r.row, now, ttl);
                side.lists
                    .set_count(slot, at, if expired { 1 } else { r.count + 1 });
                r.row
            }
            None => {
                let at = side.stored.insert(row);
                side.lists.push(slot, Record { row: at, count: 1 });
                at
            }
        };
        side.set_associations(at, associations);
        side.touch(at, now, ttl);
    }

    /// Takes one copy of `row` (its stored bytes) from under `key` on side `s` (nothing when
    /// it is not there, or expired, as Flink's state view does).
    pub fn retract(&mut self, s: usize, key: &[u8], row: &[u8], now: i64, ttl: StateTtl) {
        let Some(id) = self.keys.find(key) else {
            return;
        };
        let side = &mut self.sides[s];
        let slot = &mut self.keys.value_mut(id)[s];
        let records = side.lists.get(slot);
        if let Some(at) = records.position(|r| side.stored.get(r.row) == row) {
            let record = records.get(at);
            if expired(&side.written, record.row, now, ttl) || record.count == 1 {
                side.lists.swap_remove(slot, at);
                side.stored.remove(record.row);
            } else {
                side.lists.set_count(slot, at, record.count - 1);
                side.touch(record.row, now, ttl);
            }
        }
        self.forget_if_empty(id);
    }

    /// Drops every row of side `s` the state TTL expired.
    pub fn sweep(&mut self, s: usize, now: i64, ttl: StateTtl) {
        let ids: Vec<u32> = self.keys.iter().map(|(id, _)| id).collect();
        for id in ids {
            let side = &mut self.sides[s];
            let (written, stored) = (&side.written, &mut side.stored);
            side.lists.retain(&mut self.keys.value_mut(id)[s], |r| {
                let expired = expired(written, r.row, now, ttl);
                if expired {
                    stored.remove(r.row);
                }
                !expired
            });
            self.forget_if_empty(id);
        }
    }

    /// Per key group: for each side (a byte), each key with its rows (stored bytes, count,
    /// associations, when written).
    pub fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        let mut groups: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
        for (s, side) in self.sides.iter().enumerate() {
            for (_, key) in self.keys.iter() {
                let records = side.lists.get(&key.value[s]);
                if records.is_empty() {
                    continue;
                }
                let out = groups.entry(key.key_group()).or_default();
                out.push(s as u8);
                put_bytes(out, key.bytes);
                put_u32(out, records.len() as u32);
                for record in records.iter() {
                    put_bytes(out, side.stored.get(record.row));
                    put_u32(out, record.count);
                    put_u32(out, side.associations(record.row));
                    put_i64(
                        out,
                        side.written.get(record.row as usize).copied().unwrap_or(0),
                    );
                }
            }
        }
        groups.into_iter().collect()
    }

    /// Reads back one key group of what [`JoinState::snapshot`] wrote.
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
                let at = side.stored.insert(row);
                side.lists
                    .push(&mut self.keys.value_mut(id)[s], Record { row: at, count });
                side.set_associations(at, associations);
                let at = at as usize;
                if side.written.len() <= at {
                    side.written.resize(side.stored.capacity(), 0);
                }
                side.written[at] = written;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::state::key::key_bytes;
    use crate::exec::test_harness::{chunk, schema};
    use crate::types::TypeKind;

    fn record(row: u32, count: u32) -> Record {
        Record { row, count }
    }

    fn records(lists: &Lists, slot: &KeyRows) -> Vec<Record> {
        lists.get(slot).iter().collect()
    }

    /// A row there once lies in the slot; a second row, a second copy or a row id the slot
    /// cannot mark makes a list, and removals bring the slot back, freeing the list.
    #[test]
    fn a_slot_holds_one_row_and_a_list_holds_the_rest() {
        let mut lists = Lists::default();
        let mut slot = KeyRows::default();
        assert!(slot.is_empty() && lists.get(&slot).is_empty());
        lists.push(&mut slot, record(3, 1));
        assert_eq!(
            (slot.list(), records(&lists, &slot)),
            (None, vec![record(3, 1)])
        );
        lists.set_count(&mut slot, 0, 2);
        assert_eq!(slot.list(), Some(0));
        assert_eq!(records(&lists, &slot), vec![record(3, 2)]);
        lists.push(&mut slot, record(5, 1));
        lists.push(&mut slot, record(7, 1));
        assert_eq!(lists.swap_remove(&mut slot, 0), record(3, 2));
        assert_eq!(records(&lists, &slot), vec![record(7, 1), record(5, 1)]);
        lists.retain(&mut slot, |r| r.row == 5);
        assert_eq!(
            (slot.list(), records(&lists, &slot)),
            (None, vec![record(5, 1)])
        );
        assert_eq!(lists.free, vec![0]);

        // A row id with the list bit set goes to a list (the freed one), as does a row there
        // twice; a list of one such record stays a list.
        let mut other = KeyRows::default();
        lists.push(&mut other, record(LIST | 9, 1));
        assert_eq!(other.list(), Some(0));
        lists.push(&mut other, record(4, 1));
        lists.swap_remove(&mut other, 1);
        assert_eq!(
            (other.list(), records(&lists, &other)),
            (Some(0), vec![record(LIST | 9, 1)])
        );
        lists.retain(&mut other, |_| false);
        assert!(other.is_empty());
        assert_eq!(lists.swap_remove(&mut slot, 0), record(5, 1));
        assert!(slot.is_empty());
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
        let runtime = crate::job::runtime_schema(&shape);
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
