//! One split of the `nexmark` source: a generator over its own range of event ids, turning
//! the model's events into Arrow columns a batch at a time — the `event_type` column and the
//! three ROW columns, of which each row fills one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::TimestampNanosecondArray;
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, StructArray};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{Fields, SchemaRef};

use super::model::{
    AuctionOut, BidOut, Channel, EventKind, EventModel, HOT_CHANNELS, PersonOut, Pools, Rng,
};
use crate::connector::source::split::{SourceSplit, position_words, words_position};
use crate::exec::error::ExecError;
use crate::types::chunk::batch_with_rows;

/// The columns a nexmark table may declare, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventColumn {
    EventType,
    Person,
    Auction,
    Bid,
}

/// Where a split starts and how far it goes.
#[derive(Debug, Clone)]
pub struct SplitRange {
    /// Its index among the source's splits and their number.
    pub index: usize,
    pub splits: usize,
    /// The id its event number 0 would have: its first event's is one more.
    pub first_event_id: i64,
    /// The events it emits (before `stop-at`).
    pub events: u64,
}

/// How a split behaves once its events are out, and how fast it emits them.
#[derive(Debug, Clone, Copy)]
pub struct Emission {
    /// Stay open, idle, instead of ending (`keep-alive`).
    pub keep_alive: bool,
    /// Emit as fast as it can (`max-emit-speed`, Flink's default); otherwise each event waits
    /// until its event time has passed on the wall clock since the first.
    pub max_emit_speed: bool,
    /// Rows per batch (fewer when the rows are large).
    pub batch_rows: usize,
}

pub struct NexmarkSplit {
    model: Arc<EventModel>,
    pools: Arc<Pools>,
    columns: Vec<EventColumn>,
    schema: SchemaRef,
    range: SplitRange,
    emission: Emission,
    /// Whether it ends by itself.
    bounded: bool,
    /// Events emitted so far.
    emitted: u64,
    rng: Rng,
    /// The wall-clock instant of event time `base_time` (paced emission).
    wallclock_base: Option<Instant>,
    person: PersonOut,
    auction: AuctionOut,
    bid: BidOut,
}

impl NexmarkSplit {
    pub fn new(
        model: Arc<EventModel>,
        pools: Arc<Pools>,
        columns: Vec<EventColumn>,
        schema: SchemaRef,
        range: SplitRange,
        emission: Emission,
        bounded: bool,
    ) -> Self {
        let rng = Rng::new(split_seed(pools.seed, range.index));
        NexmarkSplit {
            model,
            pools,
            columns,
            schema,
            range,
            emission,
            bounded,
            emitted: 0,
            rng,
            wallclock_base: None,
            person: PersonOut::default(),
            auction: AuctionOut::default(),
            bid: BidOut::default(),
        }
    }

    /// How many of the next `rows` events are due on the wall clock (paced emission).
    fn due(&mut self, rows: u64) -> u64 {
        let base = *self.wallclock_base.get_or_insert_with(|| {
            // Resumed: the wall clock goes on from the event time reached.
            let reached = self.model.timestamp(self.emitted as i64) - self.model.base_time;
            Instant::now() - Duration::from_millis(reached.max(0) as u64)
        });
        let elapsed = base.elapsed().as_millis() as i64;
        let mut due = 0;
        while due < rows {
            let n = (self.emitted + due + 1) as i64;
            if self.model.timestamp(n) - self.model.base_time > elapsed {
                break;
            }
            due += 1;
        }
        due
    }

    fn generate(&mut self, rows: usize) -> Result<RecordBatch, ExecError> {
        let wants = |c| self.columns.contains(&c);
        let mut batch = Columns::new(
            rows,
            [EventColumn::Person, EventColumn::Auction, EventColumn::Bid].map(wants),
        );
        let model = &*self.model;
        let pools = &*self.pools;
        for k in 0..rows as u64 {
            // Flink numbers a split's events from 1, its ids from its first event id.
            let n = (self.emitted + k + 1) as i64;
            let id = self.range.first_event_id + n;
            let time = model.timestamp(n);
            let kind = model.kind(id);
            match kind {
                EventKind::Person => {
                    model.person(id, time, &mut self.rng, pools, &mut self.person);
                    batch.push_person(k as usize, &self.person, pools);
                }
                EventKind::Auction => {
                    model.auction(id, n, time, &mut self.rng, pools, &mut self.auction);
                    batch.push_auction(k as usize, &self.auction, pools);
                }
                EventKind::Bid => {
                    model.bid(id, time, &mut self.rng, pools, &mut self.bid);
                    batch.push_bid(k as usize, &self.bid, pools);
                }
            }
            batch.kinds.push(kind);
        }
        self.emitted += rows as u64;
        let fields = self.schema.fields().clone();
        let columns = self
            .columns
            .iter()
            .zip(fields.iter())
            .map(|(column, field)| batch.finish(*column, field.data_type()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(batch_with_rows(self.schema.clone(), columns, rows)?)
    }
}

/// A split's random seed: the source's, mixed with its index.
fn split_seed(seed: u64, index: usize) -> u64 {
    let mut rng = Rng::new(seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    rng.next_u64()
}

impl SourceSplit for NexmarkSplit {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
        let left = self.range.events.saturating_sub(self.emitted);
        if left == 0 {
            if !self.emission.keep_alive {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(50));
            return Ok(Some(RecordBatch::new_empty(self.schema.clone())));
        }
        let mut rows = left.min(self.emission.batch_rows as u64);
        if !self.emission.max_emit_speed {
            rows = self.due(rows);
            if rows == 0 {
                std::thread::sleep(Duration::from_millis(1));
                return Ok(Some(RecordBatch::new_empty(self.schema.clone())));
            }
        }
        self.generate(rows as usize).map(Some)
    }

    fn describe(&self) -> String {
        format!(
            "nexmark split {} of {}",
            self.range.index + 1,
            self.range.splits
        )
    }

    fn is_bounded(&self) -> bool {
        self.bounded
    }

    fn replayable(&self) -> bool {
        true
    }

    /// Events emitted, the random state, the source's seed and its base time: a restored
    /// split goes on with the events the run would have emitted next.
    fn position(&self) -> Option<Vec<u8>> {
        Some(words_position(&[
            self.emitted,
            self.rng.0,
            self.pools.seed,
            self.model.base_time as u64,
        ]))
    }

    fn seek(&mut self, position: &[u8]) -> Result<(), ExecError> {
        let Some([emitted, rng, seed, base_time]) = position_words::<4>(position) else {
            return Err(ExecError::Checkpoint(format!(
                "{}: a checkpointed position does not read back",
                self.describe()
            )));
        };
        self.emitted = emitted;
        self.rng = Rng(rng);
        if seed != self.pools.seed {
            self.pools = Arc::new(Pools::new(seed));
        }
        if base_time as i64 != self.model.base_time {
            self.model = Arc::new(EventModel {
                base_time: base_time as i64,
                ..(*self.model).clone()
            });
        }
        Ok(())
    }
}

/// A string column being built: the bytes of its rows in order, and where each row's
/// end is (set for the rows that hold a value; a NULL row's is its predecessor's, filled in
/// at the end so that a NULL costs nothing while the batch is built).
struct Strings {
    offsets: Vec<i32>,
    bytes: Vec<u8>,
}

impl Strings {
    fn new(rows: usize, bytes_per_row: usize) -> Self {
        Strings {
            offsets: vec![0; rows + 1],
            bytes: Vec::with_capacity(rows * bytes_per_row),
        }
    }

    /// Sets row `row`'s value; rows are set in increasing order.
    fn set(&mut self, row: usize, value: &[u8]) {
        self.bytes.extend_from_slice(value);
        self.offsets[row + 1] = self.bytes.len() as i32;
    }

    fn finish(mut self, valid: &[bool], nulls: &Option<NullBuffer>) -> Result<ArrayRef, ExecError> {
        for (row, &valid) in valid.iter().enumerate() {
            if !valid {
                self.offsets[row + 1] = self.offsets[row];
            }
        }
        let offsets = OffsetBuffer::new(ScalarBuffer::from(self.offsets));
        Ok(Arc::new(StringArray::try_new(
            offsets,
            Buffer::from_vec(self.bytes),
            nulls.clone(),
        )?))
    }
}

/// The rows of one ROW column: which rows hold one, and each field's values (a default
/// where the row is NULL), set by row.
struct RowColumn {
    /// Whether the table reads the column (otherwise nothing is appended).
    wanted: bool,
    valid: Vec<bool>,
    longs: Vec<Vec<i64>>,
    strings: Vec<Strings>,
    times: Vec<Vec<i64>>,
}

impl RowColumn {
    fn new(wanted: bool, rows: usize, longs: usize, strings: &[usize], times: usize) -> Self {
        let rows = if wanted { rows } else { 0 };
        RowColumn {
            wanted,
            valid: vec![false; rows],
            longs: (0..longs).map(|_| vec![0; rows]).collect(),
            strings: strings.iter().map(|&b| Strings::new(rows, b)).collect(),
            times: (0..times).map(|_| vec![0; rows]).collect(),
        }
    }

    /// The struct column, its fields in the declared order: `layout` says for each field
    /// which of the long, string and time vectors holds it.
    fn finish(&mut self, fields: &Fields, layout: &[Slot]) -> Result<ArrayRef, ExecError> {
        let valid = std::mem::take(&mut self.valid);
        let nulls = Some(NullBuffer::new(BooleanBuffer::from(valid.as_slice())));
        let mut longs = std::mem::take(&mut self.longs)
            .into_iter()
            .map(Some)
            .collect::<Vec<_>>();
        let mut strings = std::mem::take(&mut self.strings)
            .into_iter()
            .map(Some)
            .collect::<Vec<_>>();
        let mut times = std::mem::take(&mut self.times)
            .into_iter()
            .map(Some)
            .collect::<Vec<_>>();
        let mut children = Vec::with_capacity(layout.len());
        for slot in layout {
            let child: ArrayRef = match *slot {
                Slot::Long(i) => Arc::new(Int64Array::new(
                    ScalarBuffer::from(longs[i].take().unwrap_or_default()),
                    nulls.clone(),
                )),
                Slot::String(i) => strings[i]
                    .take()
                    .ok_or_else(|| {
                        ExecError::Internal("nexmark: a string field read twice".into())
                    })?
                    .finish(&valid, &nulls)?,
                Slot::Time(i) => Arc::new(TimestampNanosecondArray::new(
                    ScalarBuffer::from(
                        times[i]
                            .take()
                            .unwrap_or_default()
                            .into_iter()
                            .map(|ms| ms * 1_000_000)
                            .collect::<Vec<_>>(),
                    ),
                    nulls.clone(),
                )),
            };
            children.push(child);
        }
        Ok(Arc::new(StructArray::try_new(
            fields.clone(),
            children,
            nulls,
        )?))
    }
}

/// Where a ROW field's values are kept while a batch is built.
#[derive(Debug, Clone, Copy)]
pub enum Slot {
    Long(usize),
    String(usize),
    Time(usize),
}

/// The fields of the three ROW columns, in Flink's order, and where each is kept.
pub const PERSON_FIELDS: [(&str, Slot); 8] = [
    ("id", Slot::Long(0)),
    ("name", Slot::String(0)),
    ("emailAddress", Slot::String(1)),
    ("creditCard", Slot::String(2)),
    ("city", Slot::String(3)),
    ("state", Slot::String(4)),
    ("dateTime", Slot::Time(0)),
    ("extra", Slot::String(5)),
];
pub const AUCTION_FIELDS: [(&str, Slot); 10] = [
    ("id", Slot::Long(0)),
    ("itemName", Slot::String(0)),
    ("description", Slot::String(1)),
    ("initialBid", Slot::Long(1)),
    ("reserve", Slot::Long(2)),
    ("dateTime", Slot::Time(0)),
    ("expires", Slot::Time(1)),
    ("seller", Slot::Long(3)),
    ("category", Slot::Long(4)),
    ("extra", Slot::String(2)),
];
pub const BID_FIELDS: [(&str, Slot); 7] = [
    ("auction", Slot::Long(0)),
    ("bidder", Slot::Long(1)),
    ("price", Slot::Long(2)),
    ("channel", Slot::String(0)),
    ("url", Slot::String(1)),
    ("dateTime", Slot::Time(0)),
    ("extra", Slot::String(2)),
];

/// A batch's columns while its events are generated.
struct Columns {
    kinds: Vec<EventKind>,
    person: RowColumn,
    auction: RowColumn,
    bid: RowColumn,
}

impl Columns {
    fn new(rows: usize, [person, auction, bid]: [bool; 3]) -> Self {
        Columns {
            kinds: Vec::with_capacity(rows),
            person: RowColumn::new(person, rows, 1, &[4, 4, 1, 1, 1, 4], 1),
            auction: RowColumn::new(auction, rows, 5, &[2, 8, 8], 2),
            bid: RowColumn::new(bid, rows, 3, &[4, 32, 70], 1),
        }
    }

    fn push_person(&mut self, row: usize, p: &PersonOut, pools: &Pools) {
        let c = &mut self.person;
        if !c.wanted {
            return;
        }
        c.valid[row] = true;
        c.longs[0][row] = p.id;
        let (name, rest) = p.text.split_at(p.name);
        let (email, card) = rest.split_at(p.email);
        c.strings[0].set(row, name);
        c.strings[1].set(row, email);
        c.strings[2].set(row, card);
        c.strings[3].set(row, p.city.as_bytes());
        c.strings[4].set(row, p.state.as_bytes());
        c.times[0][row] = p.time;
        c.strings[5].set(row, &pools.extra[p.extra.0..p.extra.0 + p.extra.1]);
    }

    fn push_auction(&mut self, row: usize, a: &AuctionOut, pools: &Pools) {
        let c = &mut self.auction;
        if !c.wanted {
            return;
        }
        c.valid[row] = true;
        let (item, description) = a.text.split_at(a.item_name);
        c.longs[0][row] = a.id;
        c.strings[0].set(row, item);
        c.strings[1].set(row, description);
        c.longs[1][row] = a.initial_bid;
        c.longs[2][row] = a.reserve;
        c.times[0][row] = a.time;
        c.times[1][row] = a.expires;
        c.longs[3][row] = a.seller;
        c.longs[4][row] = a.category;
        c.strings[2].set(row, &pools.extra[a.extra.0..a.extra.0 + a.extra.1]);
    }

    fn push_bid(&mut self, row: usize, b: &BidOut, pools: &Pools) {
        let c = &mut self.bid;
        if !c.wanted {
            return;
        }
        c.valid[row] = true;
        c.longs[0][row] = b.auction;
        c.longs[1][row] = b.bidder;
        c.longs[2][row] = b.price;
        let (channel, url) = match b.channel {
            Channel::Hot(i) => (HOT_CHANNELS[i], pools.hot_urls[i].as_str()),
            Channel::Other(i) => (
                pools.channel_names[i].as_str(),
                pools.channel_urls[i].as_str(),
            ),
        };
        c.strings[0].set(row, channel.as_bytes());
        c.strings[1].set(row, url.as_bytes());
        c.times[0][row] = b.time;
        c.strings[2].set(row, &pools.extra[b.extra.0..b.extra.0 + b.extra.1]);
    }

    fn finish(
        &mut self,
        column: EventColumn,
        data_type: &arrow_schema::DataType,
    ) -> Result<ArrayRef, ExecError> {
        let (row, layout): (&mut RowColumn, Vec<Slot>) = match column {
            EventColumn::EventType => {
                return Ok(Arc::new(Int32Array::from_iter_values(
                    self.kinds.iter().map(|k| *k as i32),
                )));
            }
            EventColumn::Person => (&mut self.person, PERSON_FIELDS.map(|f| f.1).to_vec()),
            EventColumn::Auction => (&mut self.auction, AUCTION_FIELDS.map(|f| f.1).to_vec()),
            EventColumn::Bid => (&mut self.bid, BID_FIELDS.map(|f| f.1).to_vec()),
        };
        let arrow_schema::DataType::Struct(fields) = data_type else {
            return Err(ExecError::Internal(format!(
                "nexmark: column {column:?} is not a ROW"
            )));
        };
        row.finish(fields, &layout)
    }
}
