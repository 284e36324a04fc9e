//! The `kafka` source (docs/design/0009 §3): Flink's option names, each partition of each
//! topic a split with its own watermark, read with librdkafka (`rdkafka`'s synchronous
//! consumer, assigned its partition: no group membership, as Flink's source assigns
//! partitions itself).
//!
//! Where a split starts is resolved once, when the job is planned, into an offset per
//! partition (`scan.startup.mode`: `earliest-offset`, `latest-offset`, `group-offsets`,
//! `timestamp`, `specific-offsets`), and so is where a bounded one stops
//! (`scan.bounded.mode`: `latest-offset`, `timestamp`, `specific-offsets`; `unbounded` by
//! default): a checkpoint records the next offset to read, and a restored split goes on from
//! it; an offset gone from the partition (retention) restarts at its earliest record unless
//! `properties.auto.offset.reset` says otherwise. How a record becomes rows (its key and
//! value formats, metadata columns, `upsert-kafka`'s tombstones) is `record.rs`. A malformed
//! record fails the job naming its topic, partition and offset, unless the format ignores
//! parse errors. Brokers that go away are waited for as long as
//! `properties.request.timeout.ms` (30 s), by a new consumer once one answers. The same splits serve `upsert-kafka`, which
//! starts at the earliest offsets.
//!
//! With a `properties.group.id`, a split commits its position to the group when a checkpoint
//! that recorded it completes (Flink's `commit.offsets.on.checkpoint`, true by default), so
//! that `group-offsets` starts where a stopped job was.
//!
//! `topic-pattern` reads the topics whose whole names match it when the job starts. Not
//! built yet: partition discovery (topics and partitions made later are not read).

mod fetch;
mod record;

pub use record::metadata_keys;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use rdkafka::config::{ClientConfig, RDKafkaLogLevel};
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::{Offset, TopicPartitionList};

use super::split::{DeferredSplit, Pipeline, SourceSplit, position_words, words_position};
use crate::catalog::TableDef;
use crate::connector::ConnectorError;
use crate::connector::kafka::{Connector, KafkaTable, error};
use crate::connector::registry::{ScanRequest, SourceFactory};
use crate::exec::error::ExecError;
use crate::function::EvalContext;
use crate::types::DataType;
use fetch::ConsumerQueue;
use record::Records;

/// Records per batch at most.
const BATCH_RECORDS: usize = 8192;
/// Records taken from librdkafka per call at most.
const FETCH_RECORDS: usize = 1024;
/// How long a quiet partition goes before the broker is asked whether it is there.
const LIVENESS_CHECK: Duration = Duration::from_secs(1);
/// How long a read waits for the first record of a batch.
const QUIET_WAIT: Duration = Duration::from_millis(100);

/// Where a partition starts (`scan.startup.mode`).
#[derive(Debug, Clone, PartialEq)]
enum Startup {
    Earliest,
    Latest,
    GroupOffsets,
    Timestamp(i64),
    Specific(HashMap<i32, i64>),
}

/// Where a bounded partition stops (`scan.bounded.mode`), exclusive.
#[derive(Debug, Clone, PartialEq)]
enum Bounded {
    Unbounded,
    Latest,
    Timestamp(i64),
    Specific(HashMap<i32, i64>),
}

/// A `kafka` table's options, checked: the shared ones and where its splits start and stop.
#[derive(Debug, Clone)]
struct KafkaOptions {
    table: KafkaTable,
    startup: Startup,
    bounded: Bounded,
}

/// `partition:0,offset:42;partition:1,offset:300`, as Flink writes specific offsets.
fn specific_offsets(key: &str, text: &str) -> Result<HashMap<i32, i64>, ConnectorError> {
    let bad = || {
        error(format!(
            "Invalid properties for option '{key}': '{text}' (expected 'partition:0,offset:42;partition:1,offset:300')"
        ))
    };
    let mut offsets = HashMap::new();
    for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (partition, offset) = part.split_once(',').ok_or_else(bad)?;
        let partition = partition
            .trim()
            .strip_prefix("partition:")
            .and_then(|p| p.trim().parse::<i32>().ok())
            .ok_or_else(bad)?;
        let offset = offset
            .trim()
            .strip_prefix("offset:")
            .and_then(|o| o.trim().parse::<i64>().ok())
            .ok_or_else(bad)?;
        offsets.insert(partition, offset);
    }
    Ok(offsets)
}

impl KafkaOptions {
    fn parse(table: &TableDef) -> Result<Self, ConnectorError> {
        let shared = KafkaTable::parse(table)?;
        let get = |k: &str| table.option(k).map(str::trim);
        let millis = |key: &str| -> Result<i64, ConnectorError> {
            get(key)
                .ok_or_else(|| error(format!("'{key}' is required by its mode")))?
                .parse()
                .map_err(|_| error(format!("option '{key}' is not a number of milliseconds")))
        };
        let specific = |key: &str| -> Result<HashMap<i32, i64>, ConnectorError> {
            specific_offsets(
                key,
                get(key).ok_or_else(|| error(format!("'{key}' is required by its mode")))?,
            )
        };
        // upsert-kafka reads a topic from its start: the table is every key's last value.
        let default_startup = match shared.connector {
            Connector::Kafka => "group-offsets",
            Connector::Upsert => "earliest-offset",
        };
        let startup = match get("scan.startup.mode").unwrap_or(default_startup) {
            "earliest-offset" => Startup::Earliest,
            "latest-offset" => Startup::Latest,
            "group-offsets" => {
                if shared.property("group.id").is_none() {
                    return Err(error(
                        "'properties.group.id' is required when 'scan.startup.mode' is 'group-offsets' (the default)",
                    ));
                }
                Startup::GroupOffsets
            }
            "timestamp" => Startup::Timestamp(millis("scan.startup.timestamp-millis")?),
            "specific-offsets" => Startup::Specific(specific("scan.startup.specific-offsets")?),
            other => {
                return Err(error(format!(
                    "Invalid value for option 'scan.startup.mode': '{other}' (earliest-offset, latest-offset, group-offsets, timestamp, specific-offsets)"
                )));
            }
        };
        let bounded = match get("scan.bounded.mode").unwrap_or("unbounded") {
            "unbounded" => Bounded::Unbounded,
            "latest-offset" => Bounded::Latest,
            "timestamp" => Bounded::Timestamp(millis("scan.bounded.timestamp-millis")?),
            "specific-offsets" => Bounded::Specific(specific("scan.bounded.specific-offsets")?),
            other => {
                return Err(error(format!(
                    "Invalid value for option 'scan.bounded.mode': '{other}' (unbounded, latest-offset, timestamp, specific-offsets)"
                )));
            }
        };
        Ok(KafkaOptions {
            table: shared,
            startup,
            bounded,
        })
    }

    /// A consumer of the table's properties that never joins its group nor commits.
    fn consumer(&self) -> Result<BaseConsumer, ConnectorError> {
        let mut config = ClientConfig::new();
        for (key, value) in self.table.client_properties() {
            config.set(key, value);
        }
        if self.table.property("group.id").is_none() {
            // librdkafka's consumer needs one; nothing joins or commits under it.
            config.set("group.id", "tideline");
        }
        if self.table.property("auto.offset.reset").is_none() {
            // An offset gone from the partition (retention) restarts at its earliest record,
            // as Flink's source resets for its startup modes, rather than skip to the end.
            config.set("auto.offset.reset", "earliest");
        }
        if self.table.property("log_level").is_none() {
            // librdkafka writes a line to stderr for each failed connection attempt (its
            // logger serves the batch reads' queue); the split says once what is wrong and
            // fails the job with the reason, so only its critical lines are let through.
            config.set_log_level(RDKafkaLogLevel::Critical);
        }
        config
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .create()
            .map_err(|e| error(format!("cannot create a Kafka consumer: {e}")))
    }

    fn timeout(&self) -> Duration {
        self.table.timeout()
    }
}

/// One partition's range: the offset to start at and, when bounded, the offset to stop
/// before.
#[derive(Debug, Clone, Copy)]
struct Range {
    start: i64,
    stop: Option<i64>,
}

/// The topics read: those named, or those whose names `topic-pattern` matches now (sorted;
/// topics made later are not read: partition discovery is not built).
fn topics(options: &KafkaOptions, consumer: &BaseConsumer) -> Result<Vec<String>, ConnectorError> {
    let Some(pattern) = &options.table.pattern else {
        return Ok(options.table.topics.clone());
    };
    let metadata = consumer
        .fetch_metadata(None, options.timeout())
        .map_err(|e| error(format!("cannot list the topics: {e}")))?;
    let mut topics: Vec<String> = metadata
        .topics()
        .iter()
        .map(|t| t.name().to_string())
        .filter(|name| !name.starts_with("__") && pattern.is_match(name).unwrap_or(false))
        .collect();
    topics.sort();
    if topics.is_empty() && options.bounded == Bounded::Unbounded {
        return Err(error(format!(
            "no topic on {} matches 'topic-pattern' = '{}' (topics made later are not read: partition discovery is not supported yet)",
            options.table.bootstrap_servers(),
            pattern
                .as_str()
                .trim_start_matches("^(?:")
                .trim_end_matches(")$")
        )));
    }
    Ok(topics)
}

/// Resolves every partition's start and stop offsets, asking the brokers.
fn ranges(
    options: &KafkaOptions,
    consumer: &BaseConsumer,
) -> Result<Vec<(String, i32, Range)>, ConnectorError> {
    let timeout = options.timeout();
    let mut out = Vec::new();
    for topic in &topics(options, consumer)? {
        let metadata = consumer
            .fetch_metadata(Some(topic), timeout)
            .map_err(|e| error(format!("cannot read the metadata of topic '{topic}': {e}")))?;
        let found = metadata.topics().iter().find(|t| t.name() == topic);
        let partitions: Vec<i32> = match found {
            Some(t) if t.error().is_none() => t.partitions().iter().map(|p| p.id()).collect(),
            _ => Vec::new(),
        };
        if partitions.is_empty() {
            return Err(error(format!(
                "topic '{topic}' does not exist (or has no partitions) on {}",
                options.table.bootstrap_servers()
            )));
        }
        let watermarks = |p: i32| {
            consumer.fetch_watermarks(topic, p, timeout).map_err(|e| {
                error(format!(
                    "cannot read the offsets of topic '{topic}' partition {p}: {e}"
                ))
            })
        };
        let for_time = |millis: i64| -> Result<HashMap<i32, i64>, ConnectorError> {
            let mut query = TopicPartitionList::new();
            for &p in &partitions {
                query
                    .add_partition_offset(topic, p, Offset::Offset(millis))
                    .map_err(|e| error(e.to_string()))?;
            }
            let found = consumer
                .offsets_for_times(query, timeout)
                .map_err(|e| error(format!("cannot look up offsets by time in '{topic}': {e}")))?;
            let mut at = HashMap::new();
            for e in found.elements() {
                // No record at or after the time: the partition's end.
                let offset = match e.offset() {
                    Offset::Offset(o) => o,
                    _ => watermarks(e.partition())?.1,
                };
                at.insert(e.partition(), offset);
            }
            Ok(at)
        };
        let committed = if options.startup == Startup::GroupOffsets {
            let mut query = TopicPartitionList::new();
            for &p in &partitions {
                query
                    .add_partition(topic, p)
                    .set_offset(Offset::Invalid)
                    .map_err(|e| error(e.to_string()))?;
            }
            let found = consumer
                .committed_offsets(query, timeout)
                .map_err(|e| error(format!("cannot read the group's offsets of '{topic}': {e}")))?;
            found
                .elements()
                .iter()
                .filter_map(|e| match e.offset() {
                    Offset::Offset(o) => Some((e.partition(), o)),
                    _ => None,
                })
                .collect()
        } else {
            HashMap::new()
        };
        let started_at_time = match &options.startup {
            Startup::Timestamp(t) => for_time(*t)?,
            _ => HashMap::new(),
        };
        let stopped_at_time = match &options.bounded {
            Bounded::Timestamp(t) => for_time(*t)?,
            _ => HashMap::new(),
        };
        for &p in &partitions {
            let (low, high) = watermarks(p)?;
            let start = match &options.startup {
                Startup::Earliest => low,
                Startup::Latest => high,
                Startup::Timestamp(_) => started_at_time.get(&p).copied().unwrap_or(high),
                Startup::Specific(offsets) => offsets.get(&p).copied().unwrap_or(low),
                Startup::GroupOffsets => *committed.get(&p).ok_or_else(|| {
                    error(format!(
                        "the group has no committed offset for topic '{topic}' partition {p} ('scan.startup.mode' = 'group-offsets')"
                    ))
                })?,
            };
            let stop = match &options.bounded {
                Bounded::Unbounded => None,
                Bounded::Latest => Some(high),
                Bounded::Timestamp(_) => Some(stopped_at_time.get(&p).copied().unwrap_or(high)),
                Bounded::Specific(offsets) => Some(offsets.get(&p).copied().unwrap_or(high)),
            };
            out.push((topic.clone(), p, Range { start, stop }));
        }
    }
    Ok(out)
}

/// A split's consumer and its queue (dropped before the consumer).
struct Connection {
    queue: ConsumerQueue,
    consumer: BaseConsumer,
}

/// One partition of one topic.
pub struct KafkaSplit {
    name: String,
    topic: String,
    partition: i32,
    options: KafkaOptions,
    /// None while the brokers are away: the consumer is made anew once one answers.
    connection: Option<Connection>,
    /// The offset of the next record to read.
    next: i64,
    stop: Option<i64>,
    records: Records,
    /// When the broker last gave a record or answered; since when it has not answered, and
    /// how long it may not.
    heard: Instant,
    trouble: Option<Instant>,
    timeout: Duration,
    /// Positions go to the group when their checkpoint completes.
    commits_offsets: bool,
}

/// Whether a consumer's error is one librdkafka recovers from by itself (a broker gone for a
/// while, a leader moving).
fn transient(e: &KafkaError) -> bool {
    use rdkafka::types::RDKafkaErrorCode as Code;
    matches!(
        e.rdkafka_error_code(),
        Some(
            Code::BrokerTransportFailure
                | Code::AllBrokersDown
                | Code::Resolve
                | Code::OperationTimedOut
                | Code::RequestTimedOut
                | Code::NetworkException
                | Code::LeaderNotAvailable
                | Code::NotLeaderForPartition
                | Code::BrokerNotAvailable
                | Code::CoordinatorNotAvailable
                | Code::NotCoordinator
        )
    )
}

impl KafkaSplit {
    fn error(&self, offset: i64, message: impl std::fmt::Display) -> ExecError {
        ExecError::Source(format!(
            "kafka topic '{}' partition {} offset {offset}: {message}",
            self.topic, self.partition
        ))
    }

    /// A consumer assigned the partition from `self.next` on.
    fn assigned(&self, consumer: &BaseConsumer) -> Result<(), ExecError> {
        let mut list = TopicPartitionList::new();
        list.add_partition_offset(&self.topic, self.partition, Offset::Offset(self.next))
            .map_err(|e| self.error(self.next, e))?;
        consumer.assign(&list).map_err(|e| self.error(self.next, e))
    }

    /// The connection, made anew (a consumer of a fresh client) when the brokers were away
    /// and one answers now with the partition; None while none does, and the job's error
    /// once none has for longer than a request may take.
    ///
    /// A consumer is not kept through an outage: a broker that comes back empty (a test
    /// broker in memory, or a topic deleted and made again) gives the topic a new id, and
    /// librdkafka 2.12.1 crashes updating a client's metadata cache with the same topic
    /// under another id (librdkafka issues 4778, 4964). A new client has no cache.
    fn connection(&mut self) -> Result<Option<&mut Connection>, ExecError> {
        if self.connection.is_none() {
            let consumer = self
                .options
                .consumer()
                .map_err(|e| self.error(self.next, e))?;
            let found = consumer
                .fetch_metadata(Some(&self.topic), LIVENESS_CHECK)
                .map_err(|e| e.to_string())
                .and_then(|metadata| {
                    let topic = metadata.topics().iter().find(|t| t.name() == self.topic);
                    match topic {
                        Some(t) if t.partitions().iter().any(|p| p.id() == self.partition) => {
                            Ok(())
                        }
                        _ => Err(format!(
                            "the broker answers, but has no topic '{}' partition {}",
                            self.topic, self.partition
                        )),
                    }
                });
            if let Err(e) = found {
                broker_trouble(&mut self.trouble, &self.name, self.timeout, &e)
                    .map_err(|m| self.error(self.next, m))?;
                return Ok(None);
            }
            self.assigned(&consumer)?;
            if self.trouble.take().is_some() {
                eprintln!(
                    "[INFO] {}: the broker answers again; reading on from offset {}",
                    self.name, self.next
                );
            }
            self.heard = Instant::now();
            self.connection = Some(Connection {
                queue: ConsumerQueue::of(&consumer),
                consumer,
            });
        }
        Ok(self.connection.as_mut())
    }

    fn ended(&self) -> bool {
        self.stop.is_some_and(|stop| self.next >= stop)
    }
}

/// A broker that did not answer (`e`): since when the brokers have been away (warned about
/// once), and the job's error once that is longer than a request may take (`timeout`,
/// `properties.request.timeout.ms`).
fn broker_trouble(
    trouble: &mut Option<Instant>,
    name: &str,
    timeout: Duration,
    e: &dyn std::fmt::Display,
) -> Result<(), String> {
    let since = *trouble.get_or_insert_with(|| {
        eprintln!("[WARNING] {name}: {e}; retrying");
        Instant::now()
    });
    if since.elapsed() > timeout {
        return Err(format!(
            "no broker has answered for longer than {timeout:?} (properties.request.timeout.ms): {e}"
        ));
    }
    Ok(())
}

impl SourceSplit for KafkaSplit {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
        if self.connection()?.is_none() {
            // Nothing to read while no broker answers (each try waits for one a while).
            return self
                .records
                .flush()
                .map(Some)
                .map_err(|e| self.error(self.next, e));
        }
        let (topic, partition) = (&self.topic, self.partition);
        let failed = |offset: i64, e: &dyn std::fmt::Display| {
            ExecError::Source(format!(
                "kafka topic '{topic}' partition {partition} offset {offset}: {e}"
            ))
        };
        // The format's errors name the record's offset as its line.
        let malformed = |e: String| {
            ExecError::Source(match e.strip_prefix("line ") {
                Some(rest) => format!("kafka topic '{topic}' partition {partition} offset {rest}"),
                None => format!("kafka topic '{topic}' partition {partition}: {e}"),
            })
        };
        // The first record is waited for (a record at a time, so that one is read as soon as
        // it comes); then what is there, as many as the batch has room for.
        let mut wait = QUIET_WAIT;
        let mut room = 1;
        // The brokers went away: the connection is dropped after the loop.
        let mut lost = false;
        let stop = self.stop;
        let Some(Connection { queue, consumer }) = &mut self.connection else {
            return Err(ExecError::Internal(format!("{}: no consumer", self.name)));
        };
        'read: while self.records.records < BATCH_RECORDS && stop.is_none_or(|s| self.next < s) {
            let taken = queue.take(room, wait);
            wait = Duration::ZERO;
            room = (BATCH_RECORDS - self.records.records).min(FETCH_RECORDS);
            if taken.is_empty() {
                // Nothing came: whether the broker is there is asked of it now and then
                // (librdkafka tells a batch call nothing of a lost connection).
                if self.heard.elapsed() > LIVENESS_CHECK {
                    // A metadata request, answered on its own queue (a partition's offsets
                    // would wait for a metadata update that only this thread's batch calls
                    // serve, and time out).
                    match consumer.fetch_metadata(Some(topic), LIVENESS_CHECK) {
                        Ok(_) => self.heard = Instant::now(),
                        Err(e) => {
                            broker_trouble(&mut self.trouble, &self.name, self.timeout, &e)
                                .map_err(|m| failed(self.next, &m))?;
                            lost = true;
                        }
                    }
                }
                break;
            }
            self.heard = Instant::now();
            for record in taken {
                if let Some(e) = record.error() {
                    if transient(&e) {
                        broker_trouble(&mut self.trouble, &self.name, self.timeout, &e)
                            .map_err(|m| failed(self.next, &m))?;
                        lost = true;
                        break 'read;
                    }
                    if matches!(
                        e.rdkafka_error_code(),
                        Some(rdkafka::types::RDKafkaErrorCode::PartitionEOF)
                    ) {
                        continue;
                    }
                    return Err(failed(self.next, &e));
                }
                let offset = record.offset();
                if offset < self.next {
                    continue;
                }
                if stop.is_some_and(|stop| offset >= stop) {
                    self.next = offset;
                    break 'read;
                }
                if !self
                    .records
                    .push(record, record.leader_epoch())
                    .map_err(malformed)?
                {
                    // The batch is full of bytes: this record and those after it in the
                    // call are read again from the broker for the next batch.
                    self.next = offset;
                    let mut list = TopicPartitionList::new();
                    list.add_partition_offset(topic, partition, Offset::Offset(offset))
                        .map_err(|e| failed(offset, &e))?;
                    consumer.assign(&list).map_err(|e| failed(offset, &e))?;
                    break 'read;
                }
                self.next = offset + 1;
            }
        }
        if lost {
            // Read again from `self.next` by a new consumer once a broker answers.
            self.connection = None;
        }
        if self.records.records == 0 && self.ended() {
            if self.records.rows_skipped() > 0 {
                eprintln!(
                    "[WARNING] {}: skipped {} malformed record(s) (ignore-parse-errors)",
                    self.name,
                    self.records.rows_skipped()
                );
            }
            return Ok(None);
        }
        self.records.flush().map(Some).map_err(malformed)
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn is_bounded(&self) -> bool {
        self.stop.is_some()
    }

    fn replayable(&self) -> bool {
        true
    }

    fn position(&self) -> Option<Vec<u8>> {
        Some(words_position(&[self.next as u64]))
    }

    fn position_completed(&mut self, position: &[u8]) {
        let Some([next]) = position_words::<1>(position).filter(|_| self.commits_offsets) else {
            return;
        };
        // As Flink's source: the next offset to read, committed without joining the group;
        // a failure is only reported (the next checkpoint commits a later one).
        let Some(connection) = &self.connection else {
            // The brokers are away: a later checkpoint commits a later offset.
            return;
        };
        let mut list = TopicPartitionList::new();
        let committed = list
            .add_partition_offset(&self.topic, self.partition, Offset::Offset(next as i64))
            .and_then(|()| connection.consumer.commit(&list, CommitMode::Async));
        if let Err(e) = committed {
            eprintln!(
                "[WARNING] {}: cannot commit offset {next} to the group: {e}",
                self.name
            );
        }
    }

    fn seek(&mut self, position: &[u8]) -> Result<(), ExecError> {
        let [next] = position_words::<1>(position).ok_or_else(|| {
            ExecError::Checkpoint(format!("{}: a malformed checkpointed position", self.name))
        })?;
        self.next = next as i64;
        self.records.flush().map_err(|e| self.error(self.next, e))?;
        match &self.connection {
            Some(connection) => self.assigned(&connection.consumer),
            None => Ok(()),
        }
    }
}

/// The `kafka` and `upsert-kafka` connectors' source: the same splits; `upsert-kafka`'s rows
/// are upserts by the key.
pub struct KafkaFactory(pub Connector);

impl SourceFactory for KafkaFactory {
    fn identifier(&self) -> &'static str {
        self.0.name()
    }

    fn is_bounded(&self, table: &TableDef) -> bool {
        bounded(table)
    }

    fn metadata_keys(&self) -> Vec<(&'static str, DataType)> {
        metadata_keys()
    }

    fn pushes_watermarks(&self) -> bool {
        true
    }

    fn emits_upserts(&self) -> bool {
        self.0 == Connector::Upsert
    }

    fn splits(
        &self,
        scan: &ScanRequest,
        ctx: &EvalContext,
    ) -> Result<Vec<Pipeline>, ConnectorError> {
        splits(scan, ctx)
    }
}

fn bounded(table: &TableDef) -> bool {
    !matches!(
        table.option("scan.bounded.mode").map(str::trim),
        None | Some("unbounded")
    )
}

/// A split per partition of the table's topics.
fn splits(scan: &ScanRequest, ctx: &EvalContext) -> Result<Vec<Pipeline>, ConnectorError> {
    let options = KafkaOptions::parse(scan.table)?;
    // The formats are checked now, before any split opens.
    Records::new(
        &options.table,
        scan.physical,
        scan.metadata,
        "",
        0,
        &ctx.zone,
    )?;
    let consumer = options.consumer()?;
    let mut pipelines = Vec::new();
    for (topic, partition, range) in ranges(&options, &consumer)? {
        let name = format!("kafka {topic} partition {partition}");
        let (options, physical, zone) = (options.clone(), scan.physical.clone(), ctx.zone.clone());
        let metadata = scan.metadata.to_vec();
        let split_name = name.clone();
        let open = move || -> Result<Box<dyn SourceSplit>, ExecError> {
            let failed = |e: ConnectorError| ExecError::Source(format!("{split_name}: {e}"));
            let records = Records::new(
                &options.table,
                &physical,
                &metadata,
                &topic,
                partition,
                &zone,
            )
            .map_err(failed)?;
            let consumer = options.consumer().map_err(failed)?;
            let split = KafkaSplit {
                name: split_name.clone(),
                topic,
                partition,
                connection: None,
                next: range.start,
                stop: range.stop,
                records,
                heard: Instant::now(),
                trouble: None,
                timeout: options.timeout(),
                commits_offsets: options.table.commits_offsets(),
                options,
            };
            split.assigned(&consumer)?;
            let mut split = split;
            split.connection = Some(Connection {
                queue: ConsumerQueue::of(&consumer),
                consumer,
            });
            Ok(Box::new(split))
        };
        let split = DeferredSplit::new(name, open).replayable();
        pipelines.push(Pipeline {
            branches: Vec::new(),
            split: Box::new(if range.stop.is_some() {
                split
            } else {
                split.unbounded()
            }),
            operators: vec![],
        });
    }
    Ok(pipelines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specific_offsets_read_as_flink_writes_them() {
        let offsets = specific_offsets(
            "scan.startup.specific-offsets",
            "partition:0,offset:42;partition:1,offset:300",
        )
        .unwrap();
        assert_eq!(offsets, HashMap::from([(0, 42), (1, 300)]));
        let bad = specific_offsets("k", "partition:0;offset:1").unwrap_err();
        assert!(bad.0.contains("expected 'partition:0,offset:42"), "{bad}");
    }

    #[test]
    fn a_value_is_one_line() {
        use record::line_of;
        assert_eq!(line_of(b"{\"a\": 1}", true).unwrap(), "{\"a\": 1}");
        assert_eq!(
            line_of(b"{\n  \"a\": 1\r\n}\n", true).unwrap(),
            "{   \"a\": 1  }"
        );
        assert_eq!(line_of(b"x,y\r\n", false).unwrap(), "x,y");
        assert!(
            line_of(b"\"x\ny\",1", false)
                .unwrap_err()
                .contains("line break")
        );
        assert!(line_of(&[0xff], true).unwrap_err().contains("not UTF-8"));
    }
}
