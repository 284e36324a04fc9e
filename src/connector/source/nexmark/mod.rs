//! The `nexmark` source: the Nexmark benchmark's auction events (persons, auctions, bids),
//! generated as Flink's `nexmark` connector generates them (../shared/nexmark/generator.md),
//! one wide row per event — `event_type` and three ROW columns, one of which is set — so
//! that the benchmark's `ddl_gen.sql` and views run unchanged.
//!
//! Options are Flink's (`first-event.rate`, `events.num`, the proportions, sizes and hot
//! ratios, `keep-alive`, `stop-at`, `max-emit-speed`; `next-event.rate` and the `rate.*`
//! shape options are read and ignored, as Flink ignores them), plus two of Tideline's:
//! `seed`, which makes the random fields the same on every run (Flink's are not seeded), and
//! `base-time`, the event time of the first event (Flink's is the time the job is planned).
//!
//! The source has one split per `parallelism.default`, each its own range of event ids on
//! the shared clock, as Flink's (`model.rs` has the arithmetic, `split.rs` the columns).

mod model;
mod split;

use std::sync::Arc;

use arrow_schema::Schema as ArrowSchema;

use self::model::{EXTRA_POOL_BYTES, EventModel, Pools};
use self::split::{
    AUCTION_FIELDS, BID_FIELDS, Emission, EventColumn, NexmarkSplit, PERSON_FIELDS, Slot,
    SplitRange,
};
use crate::catalog::TableDef;
use crate::connector::registry::{ScanRequest, SourceFactory};
use crate::connector::source::split::Pipeline;
use crate::connector::{ConnectorError, unsupported_options};
use crate::function::EvalContext;
use crate::types::TypeKind;
use crate::types::option_value::{parse_duration, parse_memory_size};
use crate::types::time::parse_timestamp;

/// Rows per batch when they are small.
const BATCH_ROWS: usize = 8192;
/// Bytes a batch's rows may take at most, so that large `*.avg-size` options make smaller
/// batches (and no string column nears Arrow's 2 GiB).
const BATCH_BYTES: usize = 64 << 20;

/// Flink's options, then Tideline's.
const OPTIONS: &[&str] = &[
    "auction.avg-size",
    "auction.hot-ratio.sellers",
    "auction.proportion",
    "base-time",
    "bid.avg-size",
    "bid.hot-ratio.auctions",
    "bid.hot-ratio.bidders",
    "bid.proportion",
    "connector",
    "events.num",
    "first-event.rate",
    "keep-alive",
    "max-emit-speed",
    "next-event.rate",
    "person.avg-size",
    "person.proportion",
    "rate.limited",
    "rate.period",
    "rate.shape",
    "seed",
    "stop-at",
];

/// A table's options, read and checked.
#[derive(Debug, Clone)]
struct NexmarkOptions {
    first_event_rate: i64,
    events_num: i64,
    proportions: [i64; 3],
    avg_sizes: [usize; 3],
    hot_ratios: [u64; 3],
    keep_alive: bool,
    stop_at: i64,
    max_emit_speed: bool,
    seed: Option<u64>,
    /// Milliseconds since the epoch.
    base_time: Option<i64>,
}

fn parse_error(key: &str, value: &str) -> ConnectorError {
    ConnectorError(format!("Could not parse value '{value}' for key '{key}'."))
}

impl NexmarkOptions {
    fn read(table: &TableDef) -> Result<Self, ConnectorError> {
        let unsupported: Vec<&str> = table
            .options
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| !OPTIONS.contains(k))
            .collect();
        if !unsupported.is_empty() {
            return Err(unsupported_options("nexmark", unsupported, OPTIONS));
        }
        let int = |key: &str, default: i64, min: i64| -> Result<i64, ConnectorError> {
            let Some(text) = table.option(key) else {
                return Ok(default);
            };
            let value: i64 = text.trim().parse().map_err(|_| parse_error(key, text))?;
            if value < min {
                return Err(ConnectorError(format!(
                    "option '{key}' must be at least {min}, got {value}"
                )));
            }
            Ok(value)
        };
        let boolean = |key: &str, default: bool| -> Result<bool, ConnectorError> {
            match table.option(key) {
                None => Ok(default),
                Some(v) if v.trim().eq_ignore_ascii_case("true") => Ok(true),
                Some(v) if v.trim().eq_ignore_ascii_case("false") => Ok(false),
                Some(v) => Err(parse_error(key, v)),
            }
        };
        let size = |key: &str, default: usize| -> Result<usize, ConnectorError> {
            let Some(text) = table.option(key) else {
                return Ok(default);
            };
            let bytes = parse_memory_size(text).ok_or_else(|| parse_error(key, text))?;
            if bytes >= EXTRA_POOL_BYTES as u64 {
                return Err(ConnectorError(format!(
                    "option '{key}' = '{text}' is larger than an event's padding can be (1 mb)"
                )));
            }
            Ok(bytes as usize)
        };
        // Read as Flink reads them, then ignored as Flink ignores them.
        int("next-event.rate", 10_000, i32::MIN as i64)?;
        boolean("rate.limited", false)?;
        if let Some(shape) = table.option("rate.shape")
            && !matches!(shape, "SQUARE" | "SINE")
        {
            return Err(parse_error("rate.shape", shape));
        }
        if let Some(period) = table.option("rate.period")
            && parse_duration(period).is_none()
        {
            return Err(parse_error("rate.period", period));
        }
        let proportions = [
            int("person.proportion", 1, 0)?,
            int("auction.proportion", 3, 0)?,
            int("bid.proportion", 46, 0)?,
        ];
        if proportions.iter().sum::<i64>() == 0 {
            return Err(ConnectorError(
                "the options 'person.proportion', 'auction.proportion' and 'bid.proportion' may not all be 0".into(),
            ));
        }
        let seed = table
            .option("seed")
            .map(|v| v.trim().parse::<i64>().map_err(|_| parse_error("seed", v)))
            .transpose()?;
        let base_time = match table.option("base-time") {
            None => None,
            Some(text) => Some(match text.trim().parse::<i64>() {
                Ok(millis) => millis,
                Err(_) => parse_timestamp(text)
                    .map(|nanos| nanos.div_euclid(1_000_000))
                    .ok_or_else(|| {
                        ConnectorError(format!(
                            "Could not parse value '{text}' for key 'base-time': milliseconds since the epoch or a UTC timestamp 'yyyy-MM-dd HH:mm:ss[.SSS]'"
                        ))
                    })?,
            }),
        };
        Ok(NexmarkOptions {
            first_event_rate: int("first-event.rate", 10_000, 1)?,
            events_num: int("events.num", 0, 0)?,
            proportions,
            avg_sizes: [
                size("person.avg-size", 200)?,
                size("auction.avg-size", 500)?,
                size("bid.avg-size", 100)?,
            ],
            hot_ratios: [
                int("bid.hot-ratio.auctions", 2, 1)? as u64,
                int("bid.hot-ratio.bidders", 4, 1)? as u64,
                int("auction.hot-ratio.sellers", 4, 1)? as u64,
            ],
            keep_alive: boolean("keep-alive", false)?,
            stop_at: int("stop-at", -1, i64::MIN)?,
            max_emit_speed: boolean("max-emit-speed", true)?,
            seed: seed.map(|s| s as u64),
            base_time,
        })
    }

    /// Whether the source ends by itself.
    fn bounded(&self) -> bool {
        !self.keep_alive && (self.events_num > 0 || self.stop_at >= 0)
    }

    /// The events of each of `splits` splits, and the id before each one's first: Flink
    /// divides `events.num` evenly, the last split taking the remainder (an unbounded
    /// source divides a number of events no run reaches).
    fn ranges(&self, splits: usize) -> Vec<SplitRange> {
        let total = self.proportions.iter().sum::<i64>();
        let largest = *self.avg_sizes.iter().max().unwrap_or(&1) as i64;
        let all = if self.events_num > 0 {
            self.events_num
        } else {
            i64::MAX / (total * largest.max(1))
        };
        let each = all / splits as i64;
        (0..splits)
            .map(|index| {
                let mut events = if index + 1 == splits {
                    all - each * (splits as i64 - 1)
                } else {
                    each
                } as u64;
                if self.stop_at >= 0 {
                    events = events.min(self.stop_at as u64);
                }
                SplitRange {
                    index,
                    splits,
                    first_event_id: 1 + index as i64 * each,
                    events,
                }
            })
            .collect()
    }
}

/// The column of a nexmark table named `name` if its type is the generator's.
fn event_column(name: &str, kind: &TypeKind) -> Option<EventColumn> {
    let row_matches = |expected: &[(&str, Slot)]| {
        let TypeKind::Row(fields) = kind else {
            return false;
        };
        fields.len() == expected.len()
            && fields
                .iter()
                .zip(expected)
                .all(|((name, ty), (want, slot))| {
                    name == want
                        && match slot {
                            Slot::Long(_) => ty.kind == TypeKind::BigInt,
                            Slot::String(_) => matches!(ty.kind, TypeKind::VarChar(_)),
                            Slot::Time(_) => matches!(ty.kind, TypeKind::Timestamp(_)),
                        }
                })
    };
    match name {
        "event_type" if *kind == TypeKind::Int => Some(EventColumn::EventType),
        "person" if row_matches(&PERSON_FIELDS) => Some(EventColumn::Person),
        "auction" if row_matches(&AUCTION_FIELDS) => Some(EventColumn::Auction),
        "bid" if row_matches(&BID_FIELDS) => Some(EventColumn::Bid),
        _ => None,
    }
}

fn expected_schema() -> String {
    let row = |fields: &[(&str, Slot)]| {
        fields
            .iter()
            .map(|(name, slot)| {
                let ty = match slot {
                    Slot::Long(_) => "BIGINT",
                    Slot::String(_) => "STRING",
                    Slot::Time(_) => "TIMESTAMP(3)",
                };
                format!("`{name}` {ty}")
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "event_type INT, person ROW<{}>, auction ROW<{}>, bid ROW<{}>",
        row(&PERSON_FIELDS),
        row(&AUCTION_FIELDS),
        row(&BID_FIELDS)
    )
}

/// The `nexmark` connector's source.
pub struct NexmarkFactory;

impl SourceFactory for NexmarkFactory {
    fn identifier(&self) -> &'static str {
        "nexmark"
    }

    fn is_bounded(&self, table: &TableDef) -> bool {
        NexmarkOptions::read(table).is_ok_and(|o| o.bounded())
    }

    fn splits(
        &self,
        scan: &ScanRequest,
        ctx: &EvalContext,
    ) -> Result<Vec<Pipeline>, ConnectorError> {
        let options = NexmarkOptions::read(scan.table)?;
        let columns = scan
            .physical
            .fields
            .iter()
            .map(|f| {
                event_column(&f.name, &f.data_type.kind).ok_or_else(|| {
                    ConnectorError(format!(
                        "table '{}': the nexmark source has no column {} {}; its columns are (any of) {}",
                        scan.table.name,
                        f.name,
                        f.data_type.kind,
                        expected_schema()
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let schema = Arc::new(ArrowSchema::new(
            scan.physical
                .fields
                .iter()
                .map(|f| f.data_type.with_nullable(true).to_arrow_field(&f.name))
                .collect::<Vec<_>>(),
        ));
        let splits = scan.parallelism.max(1) as usize;
        let now = ctx.clock.now_nanos();
        let model = Arc::new(EventModel {
            person_proportion: options.proportions[0],
            auction_proportion: options.proportions[1],
            bid_proportion: options.proportions[2],
            person_avg_size: options.avg_sizes[0],
            auction_avg_size: options.avg_sizes[1],
            bid_avg_size: options.avg_sizes[2],
            hot_auction_ratio: options.hot_ratios[0],
            hot_bidders_ratio: options.hot_ratios[1],
            hot_sellers_ratio: options.hot_ratios[2],
            // Flink's order of operations, for the same rounding.
            inter_event_delay_us: 1_000_000.0 / options.first_event_rate as f64 * splits as f64,
            base_time: options.base_time.unwrap_or(now.div_euclid(1_000_000)),
        });
        // Unseeded, a run draws its own seed (Flink's random fields differ between runs).
        let pools = Arc::new(Pools::new(options.seed.unwrap_or(now as u64)));
        let largest_row = options.avg_sizes.iter().max().copied().unwrap_or(0) * 6 / 5 + 256;
        let emission = Emission {
            keep_alive: options.keep_alive,
            max_emit_speed: options.max_emit_speed,
            batch_rows: (BATCH_BYTES / largest_row).clamp(1, BATCH_ROWS),
        };
        let bounded = options.bounded();
        Ok(options
            .ranges(splits)
            .into_iter()
            .map(|range| Pipeline {
                branches: Vec::new(),
                split: Box::new(NexmarkSplit::new(
                    model.clone(),
                    pools.clone(),
                    columns.clone(),
                    schema.clone(),
                    range,
                    emission,
                    bounded,
                )),
                operators: vec![],
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(events: i64, stop_at: i64) -> NexmarkOptions {
        NexmarkOptions {
            first_event_rate: 10_000,
            events_num: events,
            proportions: [1, 3, 46],
            avg_sizes: [200, 500, 100],
            hot_ratios: [2, 4, 4],
            keep_alive: false,
            stop_at,
            max_emit_speed: true,
            seed: None,
            base_time: None,
        }
    }

    #[test]
    fn events_divide_among_splits_as_flinks() {
        let ranges = options(10, -1).ranges(3);
        let got: Vec<(i64, u64)> = ranges
            .iter()
            .map(|r| (r.first_event_id, r.events))
            .collect();
        assert_eq!(got, [(1, 3), (4, 3), (7, 4)]);
        let stopped = options(10, 2).ranges(3);
        assert!(stopped.iter().all(|r| r.events == 2));
        assert!(options(0, 5).bounded());
        assert!(!options(0, -1).bounded());
        let endless = options(0, -1).ranges(2);
        assert!(endless[1].first_event_id > 1_000_000_000_000);
    }
}
