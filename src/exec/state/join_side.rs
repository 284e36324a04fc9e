//! One input of a regular join and its state: per join key, the side's distinct rows
//! (`arrow-row` bytes) with how many times each is there, how many rows of the other side
//! each joins with (an outer side's, or a semi or anti join's left), and when it was written
//! (for the state TTL). Both sides share one key table ([`JoinState`]); a key's records are
//! 12 bytes each; the rows' bytes are in the side's [`RowStore`] (side by side while they
//! have one width), and the write times in a vector kept only while a state TTL is on.
//! `exec/join.rs` and `exec/semi_anti_join.rs` keep their inputs here;
//! they and the window join decode pairs of stored rows for their residual conditions with
//! [`pairs_batch`] and [`pair_verdicts`].

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_row::RowConverter;
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

/// Whether `residual` holds for each pair (over `schema`, both sides' columns), appended to
/// `verdicts`, evaluated [`ROUND`] pairs at a time.
pub(crate) fn pair_verdicts(
    residual: &ScalarExpr,
    ctx: &EvalContext,
    decoders: Decoders<'_>,
    pairs: &[RowPair<'_>],
    schema: &SchemaRef,
    verdicts: &mut Vec<bool>,
) -> Result<(), ExecError> {
    for round in pairs.chunks(ROUND) {
        let batch = pairs_batch(decoders, round, schema, 2)?;
        let result = evaluate(residual, &batch, ctx)?;
        let result = result.as_boolean();
        verdicts.extend((0..round.len()).map(|i| result.is_valid(i) && result.value(i)));
    }
    Ok(())
}

/// A stored row: its key's id and its place among the key's rows.
pub(crate) type RecordAt = (u32, u32);

/// One distinct row of a side, with how many times it is there and (on an outer side) how
/// many rows of the other side it joins with.
pub(crate) struct Record {
    /// The row's id in its side's row store.
    pub row: u32,
    pub count: u32,
    pub associations: u32,
}

/// A key's rows on one side.
/// A key's records: most keys of a join hold one row a side, which then lies in the key's
/// 16-byte slot itself; more go to a vector of their own.
#[derive(Default)]
pub(crate) enum KeyRows {
    #[default]
    Empty,
    One(Record),
    // Boxed, the vector costs 8 bytes in every key's slot instead of 24.
    #[allow(clippy::box_collection)]
    Many(Box<Vec<Record>>),
}

impl KeyRows {
    pub fn push(&mut self, record: Record) {
        *self = match std::mem::take(self) {
            KeyRows::Empty => KeyRows::One(record),
            KeyRows::One(first) => KeyRows::Many(Box::new(vec![first, record])),
            KeyRows::Many(mut records) => {
                records.push(record);
                KeyRows::Many(records)
            }
        };
    }

    /// Removes the record at `at`, the last taking its place.
    pub fn swap_remove(&mut self, at: usize) -> Record {
        match std::mem::take(self) {
            KeyRows::Empty => unreachable!("a record removed from an empty key"),
            KeyRows::One(record) => record,
            KeyRows::Many(mut records) => {
                let record = records.swap_remove(at);
                *self = match records.len() {
                    1 => KeyRows::One(records.pop().expect("one record")),
                    _ => KeyRows::Many(records),
                };
                record
            }
        }
    }

    /// Keeps the records `keep` accepts, in their order.
    pub fn retain(&mut self, mut keep: impl FnMut(&Record) -> bool) {
        match self {
            KeyRows::Empty => {}
            KeyRows::One(record) => {
                if !keep(record) {
                    *self = KeyRows::Empty;
                }
            }
            KeyRows::Many(records) => {
                records.retain(|r| keep(r));
                match records.len() {
                    0 => *self = KeyRows::Empty,
                    1 => *self = KeyRows::One(records.pop().expect("one record")),
                    _ => {}
                }
            }
        }
    }
}

impl std::ops::Deref for KeyRows {
    type Target = [Record];

    fn deref(&self) -> &[Record] {
        match self {
            KeyRows::Empty => &[],
            KeyRows::One(record) => std::slice::from_ref(record),
            KeyRows::Many(records) => records,
        }
    }
}

impl std::ops::DerefMut for KeyRows {
    fn deref_mut(&mut self) -> &mut [Record] {
        match self {
            KeyRows::Empty => &mut [],
            KeyRows::One(record) => std::slice::from_mut(record),
            KeyRows::Many(records) => records,
        }
    }
}

/// One input of the join and its state.
pub(crate) struct Side {
    pub keys: Option<KeyEncoder>,
    pub key_columns: Vec<usize>,
    pub rows: RowConverter,
    /// The bytes of a row of NULLs, for padding when this side has no match.
    pub null_row: Box<[u8]>,
    pub outer: bool,
    /// The records' rows.
    pub stored: RowStore,
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
        let rows = whole_row_converter(schema)?;
        let null_row = null_row(&rows, schema)?;
        Ok(Side {
            keys: optional_encoder(schema, key_columns.clone())?,
            key_columns,
            rows,
            null_row,
            outer,
            stored: RowStore::default(),
            written: Vec::new(),
        })
    }

    /// A record's row bytes.
    pub fn row_of(&self, record: &Record) -> &[u8] {
        self.stored.get(record.row)
    }

    /// Whether the state TTL has expired a record at `now`.
    pub fn expired(&self, record: &Record, now: i64, ttl: StateTtl) -> bool {
        ttl.is_on() && ttl.expired(self.written[record.row as usize], now)
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
    pub fn records(&self, s: usize, id: u32) -> &KeyRows {
        &self.keys.value(id)[s]
    }

    pub fn record(&self, s: usize, at: RecordAt) -> &Record {
        &self.keys.value(at.0)[s][at.1 as usize]
    }

    pub fn record_mut(&mut self, s: usize, at: RecordAt) -> &mut Record {
        &mut self.keys.value_mut(at.0)[s][at.1 as usize]
    }

    /// Side `s`'s records (with their row bytes), every key.
    pub fn all_records(&self, s: usize) -> impl Iterator<Item = (&Record, &[u8])> {
        let side = &self.sides[s];
        self.keys
            .iter()
            .flat_map(move |(_, key)| key.value[s].iter().map(move |r| (r, side.row_of(r))))
    }

    /// Forgets key `id` once neither side holds a row under it.
    fn forget_if_empty(&mut self, id: u32) {
        if self.keys.value(id).iter().all(|rows| rows.is_empty()) {
            self.keys.remove(id);
        }
    }

    /// Adds one copy of `row` under `key` to side `s` at `now`; an outer side's row joins
    /// `associations` rows. An expired copy counts for nothing.
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        s: usize,
        key: &[u8],
        row: &[u8],
        associations: u32,
        now: i64,
        ttl: StateTtl,
    ) {
        let (id, _) = self.keys.intern(key);
        let side = &mut self.sides[s];
        let records = &mut self.keys.value_mut(id)[s];
        let at = match records.iter().position(|r| side.stored.get(r.row) == row) {
            Some(at) => {
                let expired = side.expired(&records[at], now, ttl);
                let r = &mut records[at];
                r.count = if expired { 1 } else { r.count + 1 };
                r.associations = associations;
                r.row
            }
            None => {
                let at = side.stored.insert(row);
                records.push(Record {
                    row: at,
                    count: 1,
                    associations,
                });
                at
            }
        };
        side.touch(at, now, ttl);
    }

    /// Takes one copy of `row` from under `key` on side `s` (nothing when it is not there,
    /// or expired, as Flink's state view does).
    pub fn retract(&mut self, s: usize, key: &[u8], row: &[u8], now: i64, ttl: StateTtl) {
        let Some(id) = self.keys.find(key) else {
            return;
        };
        let side = &mut self.sides[s];
        let records = &mut self.keys.value_mut(id)[s];
        if let Some(at) = records.iter().position(|r| side.stored.get(r.row) == row) {
            let (expired, row) = (side.expired(&records[at], now, ttl), records[at].row);
            if expired {
                records[at].count = 0;
            } else {
                records[at].count -= 1;
            }
            if records[at].count == 0 {
                records.swap_remove(at);
                side.stored.remove(row);
            } else {
                side.touch(row, now, ttl);
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
            self.keys.value_mut(id)[s].retain(|r| {
                let expired = ttl.is_on() && ttl.expired(written[r.row as usize], now);
                if expired {
                    stored.remove(r.row);
                }
                !expired
            });
            self.forget_if_empty(id);
        }
    }

    /// Per key group: for each side (a byte), each key with its rows (bytes, count,
    /// associations, when written).
    pub fn snapshot(&self) -> Vec<(u32, Vec<u8>)> {
        let mut groups: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
        for (s, side) in self.sides.iter().enumerate() {
            for (_, key) in self.keys.iter() {
                let records = &key.value[s];
                if records.is_empty() {
                    continue;
                }
                let out = groups.entry(key.key_group()).or_default();
                out.push(s as u8);
                put_bytes(out, key.bytes);
                put_u32(out, records.len() as u32);
                for record in records.iter() {
                    put_bytes(out, side.row_of(record));
                    put_u32(out, record.count);
                    put_u32(out, record.associations);
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
                let side = &mut self.sides[s];
                let at = side.stored.insert(row);
                self.keys.value_mut(id)[s].push(Record {
                    row: at,
                    count,
                    associations,
                });
                let row = at as usize;
                if side.written.len() <= row {
                    side.written.resize(side.stored.capacity(), 0);
                }
                side.written[row] = written;
            }
        }
        Ok(())
    }
}
