//! The Nexmark event model: which event an event number is, the ids it carries, its
//! timestamp, and how its random fields are drawn — Flink's `nexmark` generator's arithmetic
//! (../shared/nexmark/generator.md §2–§9), with a seedable random source where Flink's is
//! not seeded. The split (`split.rs`) asks it for events; it knows nothing of Arrow.

/// The first ids of persons and auctions, and the first category.
pub const FIRST_PERSON_ID: i64 = 1000;
pub const FIRST_AUCTION_ID: i64 = 1000;
const FIRST_CATEGORY_ID: i64 = 10;
const NUM_CATEGORIES: u64 = 5;
/// Persons a random reference draws among (the newest), and how far past the newest it may
/// point (a person not created yet).
const NUM_ACTIVE_PEOPLE: i64 = 1000;
const PERSON_ID_LEAD: i64 = 10;
/// Auctions still open that a random bid draws among, and how far ahead it may point.
const NUM_IN_FLIGHT_AUCTIONS: i64 = 100;
const AUCTION_ID_LEAD: i64 = 10;
/// One person or auction in this many is the "hot" one the hot ratios pick.
const HOT_BATCH: i64 = 100;
/// Bid channels that are not one of the four hot ones.
pub const CHANNELS: usize = 10_000;
/// The text the `extra` padding is cut from (Flink builds 1 MiB of it once per JVM).
pub const EXTRA_POOL_BYTES: usize = 1 << 20;

const FIRST_NAMES: [&str; 11] = [
    "Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter",
];
const LAST_NAMES: [&str; 9] = [
    "Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris",
];
const CITIES: [&str; 10] = [
    "Phoenix",
    "Los Angeles",
    "San Francisco",
    "Boise",
    "Portland",
    "Bend",
    "Redmond",
    "Seattle",
    "Kent",
    "Cheyenne",
];
const STATES: [&str; 6] = ["AZ", "CA", "ID", "OR", "WA", "WY"];
pub const HOT_CHANNELS: [&str; 4] = ["Google", "Facebook", "Baidu", "Apple"];

/// The generator's options (`first-event.rate`, proportions, sizes, hot ratios).
#[derive(Debug, Clone, PartialEq)]
pub struct EventModel {
    pub person_proportion: i64,
    pub auction_proportion: i64,
    pub bid_proportion: i64,
    pub person_avg_size: usize,
    pub auction_avg_size: usize,
    pub bid_avg_size: usize,
    pub hot_auction_ratio: u64,
    pub hot_bidders_ratio: u64,
    pub hot_sellers_ratio: u64,
    /// Microseconds of event time between two events of one split: the rate is shared by
    /// the splits, so each advances `splits` times slower (a `double`, as Flink's).
    pub inter_event_delay_us: f64,
    /// Milliseconds since the epoch of event number 0.
    pub base_time: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Person = 0,
    Auction = 1,
    Bid = 2,
}

impl EventModel {
    pub fn total_proportion(&self) -> i64 {
        self.person_proportion + self.auction_proportion + self.bid_proportion
    }

    /// The kind of the event with id `id`: a fixed pattern in every block of
    /// `total_proportion` ids, persons first, then auctions, then bids.
    pub fn kind(&self, id: i64) -> EventKind {
        let offset = id % self.total_proportion();
        if offset < self.person_proportion {
            EventKind::Person
        } else if offset < self.person_proportion + self.auction_proportion {
            EventKind::Auction
        } else {
            EventKind::Bid
        }
    }

    /// The event time (milliseconds) of event number `n`: the delay product truncated to
    /// whole microseconds, then to whole milliseconds.
    pub fn timestamp(&self, n: i64) -> i64 {
        self.base_time + ((n as f64 * self.inter_event_delay_us) as i64) / 1000
    }

    /// The base-0 id of the newest person at event `id` (the person it creates, if a person).
    pub fn last_person(&self, id: i64) -> i64 {
        let total = self.total_proportion();
        let epoch = id / total;
        let offset = (id % total).min(self.person_proportion - 1);
        epoch * self.person_proportion + offset
    }

    /// The base-0 id of the newest auction at event `id` (the auction it creates, if one).
    pub fn last_auction(&self, id: i64) -> i64 {
        let total = self.total_proportion();
        let (mut epoch, mut offset) = (id / total, id % total);
        if offset < self.person_proportion {
            epoch -= 1;
            offset = self.auction_proportion - 1;
        } else if offset >= self.person_proportion + self.auction_proportion {
            offset = self.auction_proportion - 1;
        } else {
            offset -= self.person_proportion;
        }
        epoch * self.auction_proportion + offset
    }

    /// A person among the newest active ones, or up to `PERSON_ID_LEAD` past the newest.
    fn random_person(&self, id: i64, rng: &mut Rng) -> i64 {
        let people = self.last_person(id) + 1;
        let active = people.min(NUM_ACTIVE_PEOPLE);
        people - active + rng.below((active + PERSON_ID_LEAD) as u64) as i64
    }

    /// An auction among those in flight, or up to `AUCTION_ID_LEAD` past the newest.
    fn random_auction(&self, id: i64, rng: &mut Rng) -> i64 {
        let max = self.last_auction(id);
        let min = (max - NUM_IN_FLIGHT_AUCTIONS).max(0);
        min + rng.below((max - min + 1 + AUCTION_ID_LEAD) as u64) as i64
    }

    pub fn person(&self, id: i64, time: i64, rng: &mut Rng, pools: &Pools, out: &mut PersonOut) {
        out.id = self.last_person(id) + FIRST_PERSON_ID;
        out.text.clear();
        let start = 0;
        let first = FIRST_NAMES[rng.below(FIRST_NAMES.len() as u64) as usize];
        let last = LAST_NAMES[rng.below(LAST_NAMES.len() as u64) as usize];
        out.text.extend_from_slice(first.as_bytes());
        out.text.push(b' ');
        out.text.extend_from_slice(last.as_bytes());
        out.name = out.text.len() - start;
        let start = out.text.len();
        rng.string(7, b' ', &mut out.text);
        out.text.push(b'@');
        rng.string(5, b' ', &mut out.text);
        out.text.extend_from_slice(b".com");
        out.email = out.text.len() - start;
        for i in 0..4 {
            if i > 0 {
                out.text.push(b' ');
            }
            let number = rng.below(10_000);
            for divisor in [1000, 100, 10, 1] {
                out.text.push(b'0' + (number / divisor % 10) as u8);
            }
        }
        out.city = CITIES[rng.below(CITIES.len() as u64) as usize];
        out.state = STATES[rng.below(STATES.len() as u64) as usize];
        out.time = time;
        let size = 8 + out.name + out.email + 19 + out.city.len() + out.state.len();
        out.extra = pools.extra(size, self.person_avg_size, rng);
    }

    pub fn auction(
        &self,
        id: i64,
        n: i64,
        time: i64,
        rng: &mut Rng,
        pools: &Pools,
        out: &mut AuctionOut,
    ) {
        out.id = self.last_auction(id) + FIRST_AUCTION_ID;
        let seller = if rng.below(self.hot_sellers_ratio) > 0 {
            (self.last_person(id) / HOT_BATCH) * HOT_BATCH
        } else {
            self.random_person(id, rng)
        };
        out.seller = seller + FIRST_PERSON_ID;
        out.category = FIRST_CATEGORY_ID + rng.below(NUM_CATEGORIES) as i64;
        out.initial_bid = rng.price();
        // An auction lasts about until the auction `NUM_IN_FLIGHT_AUCTIONS` later is created.
        let ahead = NUM_IN_FLIGHT_AUCTIONS * self.total_proportion() / self.auction_proportion;
        let horizon = self.timestamp(n + ahead) - time;
        out.expires = time + 1 + rng.below((2 * horizon).max(1) as u64) as i64;
        out.time = time;
        out.text.clear();
        rng.string(20, b' ', &mut out.text);
        out.item_name = out.text.len();
        rng.string(100, b' ', &mut out.text);
        out.reserve = out.initial_bid + rng.price();
        let size = 8 + out.text.len() + 40;
        out.extra = pools.extra(size, self.auction_avg_size, rng);
    }

    pub fn bid(&self, id: i64, time: i64, rng: &mut Rng, pools: &Pools, out: &mut BidOut) {
        let auction = if rng.below(self.hot_auction_ratio) > 0 {
            (self.last_auction(id) / HOT_BATCH) * HOT_BATCH
        } else {
            self.random_auction(id, rng)
        };
        out.auction = auction + FIRST_AUCTION_ID;
        // Flink's generator adds the first person id twice to a bidder (generator.md §4):
        // kept, so that a bidder is what Flink's data holds.
        let bidder = if rng.below(self.hot_bidders_ratio) > 0 {
            (self.last_person(id) / HOT_BATCH) * HOT_BATCH + 1
        } else {
            self.random_person(id, rng)
        };
        out.bidder = bidder + 2 * FIRST_PERSON_ID;
        out.price = rng.price();
        out.channel = if rng.below(2) > 0 {
            Channel::Hot(rng.below(HOT_CHANNELS.len() as u64) as usize)
        } else {
            Channel::Other(rng.below(CHANNELS as u64) as usize)
        };
        out.time = time;
        out.extra = pools.extra(32, self.bid_avg_size, rng);
    }
}

/// A person's fields; its strings are consecutive in `text` (name, email, credit card).
#[derive(Debug, Default)]
pub struct PersonOut {
    pub id: i64,
    pub text: Vec<u8>,
    pub name: usize,
    pub email: usize,
    pub city: &'static str,
    pub state: &'static str,
    pub time: i64,
    pub extra: (usize, usize),
}

/// An auction's fields; `text` holds the item name, then the description.
#[derive(Debug, Default)]
pub struct AuctionOut {
    pub id: i64,
    pub text: Vec<u8>,
    pub item_name: usize,
    pub initial_bid: i64,
    pub reserve: i64,
    pub time: i64,
    pub expires: i64,
    pub seller: i64,
    pub category: i64,
    pub extra: (usize, usize),
}

#[derive(Debug, Clone, Copy)]
pub enum Channel {
    /// One of `HOT_CHANNELS`, with its hot URL.
    Hot(usize),
    /// `channel-<n>`, with its URL.
    Other(usize),
}

#[derive(Debug)]
pub struct BidOut {
    pub auction: i64,
    pub bidder: i64,
    pub price: i64,
    pub channel: Channel,
    pub time: i64,
    pub extra: (usize, usize),
}

impl Default for BidOut {
    fn default() -> Self {
        BidOut {
            auction: 0,
            bidder: 0,
            price: 0,
            channel: Channel::Hot(0),
            time: 0,
            extra: (0, 0),
        }
    }
}

/// What every event of a source shares, made once from the seed (Flink makes them once per
/// JVM, unseeded): the hot URLs, the channels' names and URLs, the padding text.
#[derive(Debug)]
pub struct Pools {
    pub seed: u64,
    pub hot_urls: [String; 4],
    pub channel_names: Vec<String>,
    pub channel_urls: Vec<String>,
    pub extra: Vec<u8>,
}

impl Pools {
    pub fn new(seed: u64) -> Self {
        let mut rng = Rng::new(seed ^ 0x005E_ED0F_9001_u64);
        let hot_urls = std::array::from_fn(|_| base_url(&mut rng));
        let channel_names = (0..CHANNELS).map(|c| format!("channel-{c}")).collect();
        let channel_urls = (0..CHANNELS)
            .map(|c| {
                let mut url = base_url(&mut rng);
                if rng.below(10) > 0 {
                    // Java's `Math.abs(Integer.reverse(c))`: channel 1 stays negative.
                    let id = (c as i32).reverse_bits().wrapping_abs();
                    url.push_str(&format!("&channel_id={id}"));
                }
                url
            })
            .collect();
        // Flink's padding: 'a' plus Java's signed remainder of random ints by 26, six
        // characters per int, so its alphabet runs from 'H' to 'z'.
        let mut extra = Vec::with_capacity(EXTRA_POOL_BYTES);
        while extra.len() < EXTRA_POOL_BYTES {
            let mut r = rng.next_u64() as i32;
            for _ in 0..6 {
                if extra.len() == EXTRA_POOL_BYTES {
                    break;
                }
                extra.push((b'a' as i32 + r % 26) as u8);
                r /= 26;
            }
        }
        Pools {
            seed,
            hot_urls,
            channel_names,
            channel_urls,
            extra,
        }
    }

    /// The padding of an event whose other fields take `size` bytes, to reach `target` on
    /// average: its offset and length in `extra`.
    fn extra(&self, size: usize, target: usize, rng: &mut Rng) -> (usize, usize) {
        if size > target {
            return (0, 0);
        }
        let missing = target - size;
        // Java's Math.round of a positive double: half up.
        let spread = (missing as f64 * 0.2 + 0.5).floor() as usize;
        let length = if spread == 0 {
            missing
        } else {
            missing - spread + rng.below(2 * spread as u64) as usize
        }
        .min(EXTRA_POOL_BYTES - 1);
        let offset = rng.below((EXTRA_POOL_BYTES - length) as u64) as usize;
        (offset, length)
    }
}

/// `https://www.nexmark.com/<s>/<s>/<s>/item.htm?query=1`, each `s` 3 or 4 of a–z and `_`.
fn base_url(rng: &mut Rng) -> String {
    let mut url = b"https://www.nexmark.com/".to_vec();
    for _ in 0..3 {
        rng.string(5, b'_', &mut url);
        url.push(b'/');
    }
    url.extend_from_slice(b"item.htm?query=1");
    String::from_utf8(url).expect("ASCII")
}

/// The generator's random source (wyrand: one multiply per draw, and a state of one word a
/// checkpoint records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rng(pub u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let product = (self.0 as u128) * ((self.0 ^ 0xe703_7ed1_a0b4_28db) as u128);
        ((product >> 64) as u64) ^ (product as u64)
    }

    /// Uniform in `0..bound` (0 for a bound of 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        ((self.next_u64() as u128 * bound as u128) >> 64) as u64
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A price in cents, log-uniform from 100 to 10^8.
    fn price(&mut self) -> i64 {
        (10f64.powf(self.unit() * 6.0) * 100.0).round() as i64
    }

    /// Appends 3 to `max - 1` characters, each `special` one time in 13 and a–z otherwise,
    /// then trims spaces from both ends of what it appended.
    fn string(&mut self, max: u64, special: u8, out: &mut Vec<u8>) {
        let start = out.len();
        let length = 3 + self.below(max - 3);
        for _ in 0..length {
            out.push(if self.below(13) == 0 {
                special
            } else {
                b'a' + self.below(26) as u8
            });
        }
        while out.len() > start && out[out.len() - 1] == b' ' {
            out.pop();
        }
        let leading = out[start..].iter().take_while(|&&b| b == b' ').count();
        out.drain(start..start + leading);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> EventModel {
        EventModel {
            person_proportion: 1,
            auction_proportion: 3,
            bid_proportion: 46,
            person_avg_size: 200,
            auction_avg_size: 500,
            bid_avg_size: 100,
            hot_auction_ratio: 2,
            hot_bidders_ratio: 4,
            hot_sellers_ratio: 4,
            inter_event_delay_us: 100.0,
            base_time: 0,
        }
    }

    #[test]
    fn ids_follow_flinks_worked_example() {
        let m = model();
        // Split 0 emits ids 2, 3, …: auctions 1001 and 1002, bids, then person 1001.
        assert_eq!(m.kind(2), EventKind::Auction);
        assert_eq!(m.last_auction(2) + FIRST_AUCTION_ID, 1001);
        assert_eq!(m.last_auction(3) + FIRST_AUCTION_ID, 1002);
        assert_eq!(m.kind(4), EventKind::Bid);
        assert_eq!(m.kind(49), EventKind::Bid);
        assert_eq!(m.kind(50), EventKind::Person);
        assert_eq!(m.last_person(50) + FIRST_PERSON_ID, 1001);
        assert_eq!(
            [51, 52, 53].map(|id| m.last_auction(id) + FIRST_AUCTION_ID),
            [1003, 1004, 1005]
        );
        assert_eq!(m.last_person(100) + FIRST_PERSON_ID, 1002);
    }

    #[test]
    fn timestamps_truncate_to_microseconds_then_milliseconds() {
        let mut m = model();
        m.inter_event_delay_us = 1_000_000.0 / 3.0;
        assert_eq!(m.timestamp(1), 333);
        assert_eq!(m.timestamp(3), 1000);
        m.base_time = 1_000;
        assert_eq!(m.timestamp(2), 1_666);
    }

    #[test]
    fn strings_are_trimmed_and_within_bounds() {
        let mut rng = Rng::new(7);
        for _ in 0..10_000 {
            let mut out = Vec::new();
            rng.string(7, b' ', &mut out);
            assert!(out.len() <= 6, "{out:?}");
            assert!(out.first() != Some(&b' ') && out.last() != Some(&b' '));
            assert!(out.iter().all(|b| *b == b' ' || b.is_ascii_lowercase()));
        }
    }

    #[test]
    fn padding_and_prices_keep_flinks_ranges() {
        let pools = Pools::new(1);
        assert!(pools.extra.iter().all(|b| (b'H'..=b'z').contains(b)));
        let url = &pools.channel_urls[1];
        assert!(url.ends_with("&channel_id=-2147483648") || !url.contains("channel_id"));
        let mut rng = Rng::new(3);
        for _ in 0..10_000 {
            let (offset, length) = pools.extra(32, 100, &mut rng);
            assert!((54..=81).contains(&length), "{length}");
            assert!(offset + length <= EXTRA_POOL_BYTES);
            let price = rng.price();
            assert!((100..=100_000_000).contains(&price), "{price}");
        }
        assert_eq!(pools.extra(300, 100, &mut rng), (0, 0));
    }
}
