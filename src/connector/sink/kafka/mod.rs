//! The `kafka` and `upsert-kafka` sinks (docs/design/0009 §4, §5): each row one record on
//! `topic`, its value in the value format and, when the table has a key format, its key in
//! that (`connector/kafka.rs` divides the columns), written by librdkafka's producer.
//!
//! - `kafka`: an updating query is refused unless the value format writes changes
//!   (`debezium-json`, `canal-json`, `maxwell-json`), as Flink's.
//! - `upsert-kafka`: the primary key is the record's key; `+I` and `+U` write the row,
//!   `-D` a tombstone (a record without a value), `-U` nothing. The same key goes to the
//!   same partition (the default partitioner hashes the key), so its order holds.
//!   `sink.buffer-flush.*` reduce a key's records between flushes to its last (`reduce.rs`).
//! - `sink.delivery-guarantee`: `at-least-once` (default) waits, at each checkpoint's barrier
//!   and at the end, until the broker has every record written before, and fails the job on a
//!   record it refused; `none` waits only at the end. Without a checkpoint a job's records are
//!   delivered when it ends or fails on the first refusal. `exactly-once` (with
//!   `sink.transactional-id-prefix`) writes a transaction per checkpoint, committed when the
//!   checkpoint completes (`transactions.rs`).
//! - `sink.partitioner` (`kafka`): `default` is Kafka's Java partitioner (`murmur2_random`:
//!   a key's hash, a random partition without a key); `fixed` writes every record to
//!   partition 0, the partition of Flink's sink instance 0 (Tideline's sink is one instance);
//!   `round-robin` cycles through the topic's partitions.
//!
//! The metadata columns `timestamp` (the record's timestamp; NULL: the producer's clock)
//! and `headers` are written when the table declares them persisted (not VIRTUAL).

use std::ops::Range;
use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampNanosecondType;
use arrow_array::{Array, RecordBatch};
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{BaseRecord, Producer};

use super::check_plain_sink;
use crate::connector::ConnectorError;
use crate::connector::format::raw::RawFormat;
use crate::connector::format::{LineEncoder, is_changelog_format, new_encoder};
use crate::connector::kafka::{Connector, KafkaTable, Part, error};
use crate::connector::registry::{SinkFactory, SinkRequest};
use crate::connector::sink::Sink;
use crate::exec::error::ExecError;
use crate::types::chunk::{RowKind, StreamChunk};
use crate::types::{DataType, MAX_LENGTH, Schema, TypeKind};
use batch::{Outgoing, QUEUE_MESSAGES, send_all};
use reduce::UpsertBuffer;
use transactions::{Deliveries, KafkaProducer, Transactions};

mod batch;
mod reduce;
mod transactions;

/// How `sink.partitioner` places a record.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Partitioner {
    Default,
    Fixed,
    RoundRobin,
}

/// `sink.delivery-guarantee`.
#[derive(Debug, Clone, PartialEq)]
enum Delivery {
    None,
    AtLeastOnce,
    /// Transactions, their ids starting with `sink.transactional-id-prefix`.
    ExactlyOnce(String),
}

/// A sink table's options, checked.
struct KafkaSinkOptions {
    table: KafkaTable,
    topic: String,
    partitioner: Partitioner,
    delivery: Delivery,
    /// `upsert-kafka`'s `sink.buffer-flush.*`, when they ask for a buffer.
    buffer: Option<UpsertBuffer>,
}

impl KafkaSinkOptions {
    fn of(request: &SinkRequest) -> Result<Self, ConnectorError> {
        let table = KafkaTable::parse(request.table)?;
        let get = |k: &str| request.table.option(k).map(str::trim);
        if table.pattern.is_some() {
            return Err(error(
                "a 'kafka' sink writes one topic: 'topic-pattern' is for reading",
            ));
        }
        let [topic] = &table.topics[..] else {
            return Err(error(
                "a 'kafka' sink writes one topic: 'topic' names several (writing a 'topic' metadata column is not supported yet)",
            ));
        };
        let partitioner = match get("sink.partitioner").unwrap_or("default") {
            "default" => Partitioner::Default,
            "fixed" => Partitioner::Fixed,
            "round-robin" => Partitioner::RoundRobin,
            other => {
                return Err(error(format!(
                    "Could not find and instantiate partitioner class '{other}' ('sink.partitioner' is default, fixed or round-robin here: Java classes cannot run)"
                )));
            }
        };
        let delivery = match get("sink.delivery-guarantee").unwrap_or("at-least-once") {
            "none" => Delivery::None,
            "at-least-once" => Delivery::AtLeastOnce,
            "exactly-once" => Delivery::ExactlyOnce(
                get("sink.transactional-id-prefix")
                    .filter(|p| !p.is_empty())
                    .ok_or_else(|| {
                        error(
                            "sink.transactional-id-prefix must be specified when using DeliveryGuarantee.EXACTLY_ONCE.",
                        )
                    })?
                    .to_string(),
            ),
            other => {
                return Err(error(format!(
                    "Invalid value for option 'sink.delivery-guarantee': '{other}' (none, at-least-once, exactly-once)"
                )));
            }
        };
        let buffer = match table.connector {
            Connector::Upsert => UpsertBuffer::of(
                get("sink.buffer-flush.max-rows"),
                get("sink.buffer-flush.interval"),
            )?,
            Connector::Kafka => None,
        };
        Ok(KafkaSinkOptions {
            topic: topic.clone(),
            table,
            partitioner,
            delivery,
            buffer,
        })
    }
}

/// How a key or a value is written.
enum PartEncoder {
    Text {
        encoder: LineEncoder,
        /// The part's columns as the format names them.
        schema: Schema,
        columns: Vec<usize>,
    },
    Raw {
        format: RawFormat,
        column: usize,
    },
}

impl PartEncoder {
    fn new(part: &Part) -> Result<Self, ConnectorError> {
        Ok(match part.format_name() {
            "raw" => PartEncoder::Raw {
                format: RawFormat::from_options(&part.format, &part.schema)
                    .map_err(ConnectorError)?,
                column: part.columns[0],
            },
            _ => PartEncoder::Text {
                encoder: new_encoder(&part.format, &part.schema)?,
                schema: part.schema.clone(),
                columns: part.columns.clone(),
            },
        })
    }

    /// Each row's bytes, appended to `out`: its range there, `None` for no bytes (a NULL
    /// raw value).
    fn encode(
        &self,
        batch: &RecordBatch,
        kinds: Option<&[RowKind]>,
        out: &mut Vec<u8>,
        spans: &mut Vec<Option<Range<usize>>>,
    ) -> Result<(), ExecError> {
        out.clear();
        spans.clear();
        let rows = batch.num_rows();
        match self {
            PartEncoder::Raw { format, column } => {
                let mut one = Vec::new();
                for row in 0..rows {
                    let start = out.len();
                    spans.push(
                        format
                            .encode(batch.column(*column).as_ref(), row, &mut one)
                            .map(|()| {
                                out.extend_from_slice(&one);
                                start..out.len()
                            }),
                    );
                }
            }
            PartEncoder::Text {
                encoder,
                schema,
                columns,
            } => {
                let batch = batch.project(columns).map_err(ExecError::from)?;
                encoder.encode_batch(&batch, kinds, schema, out);
                // One line per row, unless a CSV field held a line break: then row by row.
                if memchr::memchr_iter(b'\n', out).count() == rows {
                    let mut start = 0;
                    for end in memchr::memchr_iter(b'\n', out) {
                        spans.push(Some(start..end));
                        start = end + 1;
                    }
                } else {
                    out.clear();
                    for row in 0..rows {
                        let start = out.len();
                        let kinds = kinds.map(|k| &k[row..row + 1]);
                        encoder.encode_batch(&batch.slice(row, 1), kinds, schema, out);
                        if out.ends_with(b"\n") {
                            out.pop();
                        }
                        spans.push(Some(start..out.len()));
                    }
                }
            }
        }
        Ok(())
    }
}
/// The producer the records go to.
enum Sending {
    /// One producer for the job (`none`, `at-least-once`).
    Plain(KafkaProducer),
    /// A transaction per checkpoint (`exactly-once`).
    Transactions(Transactions),
}

impl Sending {
    /// The producer to write with (for `exactly-once`, the open transaction's, one begun
    /// if none is open).
    fn producer(&mut self, topic: &str) -> Result<&KafkaProducer, ExecError> {
        match self {
            Sending::Plain(p) => Ok(p),
            Sending::Transactions(t) => t
                .producer()
                .map_err(|e| ExecError::Sink(format!("kafka topic '{topic}': {e}"))),
        }
    }
}

pub struct KafkaSink {
    options: KafkaSinkOptions,
    sending: Sending,
    key: Option<PartEncoder>,
    value: PartEncoder,
    /// `upsert-kafka`: deletes are tombstones, `-U` rows are not written.
    upsert: bool,
    /// `upsert-kafka`'s `sink.buffer-flush.*`: each key's last record, written in turn.
    buffer: Option<UpsertBuffer>,
    /// The written columns of the `timestamp` and `headers` metadata.
    timestamp_column: Option<usize>,
    headers_column: Option<usize>,
    /// librdkafka's queue bound (`queue.buffering.max.messages`).
    queue_messages: usize,
    /// The topic's partitions, for `round-robin`.
    partitions: i32,
    /// The next partition `round-robin` writes.
    next_partition: i32,
    /// The encoded keys and values of a chunk, and each row's range in them.
    keys: Vec<u8>,
    key_spans: Vec<Option<Range<usize>>>,
    values: Vec<u8>,
    value_spans: Vec<Option<Range<usize>>>,
}

impl KafkaSink {
    fn failed(&self, message: impl std::fmt::Display) -> ExecError {
        ExecError::Sink(format!("kafka topic '{}': {message}", self.options.topic))
    }

    /// The producer that is writing, if any.
    fn writing(&self) -> Option<&KafkaProducer> {
        match &self.sending {
            Sending::Plain(p) => Some(p),
            Sending::Transactions(t) => t.open_producer(),
        }
    }

    /// The first refusal the broker sent back, as the job's error.
    fn check_refusals(&self) -> Result<(), ExecError> {
        match self.writing().and_then(|p| p.context().take_refusal()) {
            Some(message) => Err(ExecError::Sink(message)),
            None => Ok(()),
        }
    }

    /// Writes what the upsert buffer holds.
    fn write_buffer(&mut self) -> Result<(), ExecError> {
        let Some(buffer) = &mut self.buffer else {
            return Ok(());
        };
        let records = buffer.drain();
        if records.is_empty() {
            return Ok(());
        }
        let topic = &self.options.topic;
        let producer = self.sending.producer(topic)?;
        send_buffered(producer, topic, &records, self.queue_messages)
    }

    /// Waits until the broker has every record queued so far (the upsert buffer's too).
    fn flush(&mut self) -> Result<(), ExecError> {
        self.write_buffer()?;
        if let Some(producer) = self.writing() {
            producer
                .flush(self.options.table.timeout())
                .map_err(|e| self.failed(format!("records not delivered: {e}")))?;
        }
        self.check_refusals()
    }
}

/// What a record carries besides its key and value.
#[derive(Default)]
struct Envelope {
    partition: Option<i32>,
    /// Epoch milliseconds (the `timestamp` metadata column); none: the producer's clock.
    timestamp: Option<i64>,
    /// The `headers` metadata column.
    headers: Option<OwnedHeaders>,
}

/// Queues one record, waiting while librdkafka's queue is full.
fn send(
    producer: &KafkaProducer,
    topic: &str,
    envelope: &Envelope,
    key: Option<&[u8]>,
    payload: Option<&[u8]>,
) -> Result<(), ExecError> {
    loop {
        let mut record: BaseRecord<'_, [u8], [u8]> = BaseRecord::to(topic);
        if let Some(payload) = payload {
            record = record.payload(payload);
        }
        if let Some(key) = key {
            record = record.key(key);
        }
        if let Some(p) = envelope.partition {
            record = record.partition(p);
        }
        if let Some(t) = envelope.timestamp {
            record = record.timestamp(t);
        }
        if let Some(headers) = &envelope.headers {
            record = record.headers(headers.clone());
        }
        match producer.send(record) {
            Ok(()) => return Ok(()),
            Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => {
                // Deliveries free the queue; their callbacks run in poll.
                producer.poll(Duration::from_millis(10));
                if let Some(refused) = producer.context().take_refusal() {
                    return Err(ExecError::Sink(refused));
                }
            }
            Err((e, _)) => return Err(ExecError::Sink(format!("kafka topic '{topic}': {e}"))),
        }
    }
}

/// The upsert buffer's records, to the partitions of their keys.
fn send_buffered(
    producer: &KafkaProducer,
    topic: &str,
    records: &[(Vec<u8>, Option<Vec<u8>>)],
    queue_messages: usize,
) -> Result<(), ExecError> {
    let outgoing: Vec<Outgoing<'_>> = records
        .iter()
        .map(|(key, value)| Outgoing {
            key: Some(key),
            value: value.as_deref(),
            partition: None,
        })
        .collect();
    send_all(producer, topic, &outgoing, queue_messages)
}

/// The headers of row `row` of a `MAP<STRING, BYTES>` column, in the map's order.
fn headers_of(column: &dyn Array, row: usize) -> Option<OwnedHeaders> {
    let map = column.as_map_opt()?;
    if map.is_null(row) {
        return None;
    }
    let entries = map.value(row);
    let keys = entries.column(0).as_string_opt::<i32>()?;
    let values = entries.column(1).as_binary_opt::<i32>()?;
    let mut headers = OwnedHeaders::new_with_capacity(keys.len());
    for i in 0..keys.len() {
        headers = headers.insert(Header {
            key: keys.value(i),
            value: (!values.is_null(i)).then(|| values.value(i)),
        });
    }
    Some(headers)
}

impl Sink for KafkaSink {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        let rows = chunk.num_rows();
        if rows == 0 {
            return Ok(());
        }
        let kinds = chunk.kinds.as_deref();
        // A changelog value format writes the kinds; a plain one is written inserts only.
        let (mut values, mut value_spans) = (
            std::mem::take(&mut self.values),
            std::mem::take(&mut self.value_spans),
        );
        let (mut keys, mut key_spans) = (
            std::mem::take(&mut self.keys),
            std::mem::take(&mut self.key_spans),
        );
        let result: Result<(), ExecError> = (|| {
            self.value
                .encode(&chunk.batch, kinds, &mut values, &mut value_spans)?;
            if let Some(key) = &self.key {
                key.encode(&chunk.batch, None, &mut keys, &mut key_spans)?;
            }
            let topic = &self.options.topic;
            let producer = self.sending.producer(topic)?;
            let batched = self.timestamp_column.is_none() && self.headers_column.is_none();
            let mut outgoing = Vec::with_capacity(if batched { rows } else { 0 });
            for row in 0..rows {
                let kind = kinds.map_or(RowKind::Insert, |k| k[row]);
                let value = match kind {
                    RowKind::UpdateBefore if self.upsert => continue,
                    RowKind::Delete if self.upsert => None,
                    _ => value_spans[row].clone().map(|r| &values[r]),
                };
                let key = key_spans.get(row).cloned().flatten().map(|r| &keys[r]);
                if let (Some(buffer), Some(key)) = (&mut self.buffer, key) {
                    buffer.add(key, value);
                    continue;
                }
                if batched {
                    outgoing.push(Outgoing {
                        key,
                        value,
                        partition: match self.options.partitioner {
                            Partitioner::Default => None,
                            Partitioner::Fixed => Some(0),
                            Partitioner::RoundRobin => Some(self.next_partition),
                        },
                    });
                    if self.options.partitioner == Partitioner::RoundRobin {
                        self.next_partition = (self.next_partition + 1) % self.partitions;
                    }
                    continue;
                }
                let envelope = Envelope {
                    partition: match self.options.partitioner {
                        Partitioner::Default => None,
                        Partitioner::Fixed => Some(0),
                        Partitioner::RoundRobin => Some(self.next_partition),
                    },
                    timestamp: self.timestamp_column.and_then(|c| {
                        let times = chunk
                            .batch
                            .column(c)
                            .as_primitive::<TimestampNanosecondType>();
                        (!times.is_null(row)).then(|| times.value(row).div_euclid(1_000_000))
                    }),
                    headers: self
                        .headers_column
                        .and_then(|c| headers_of(chunk.batch.column(c).as_ref(), row)),
                };
                send(producer, topic, &envelope, key, value)?;
                if self.options.partitioner == Partitioner::RoundRobin {
                    self.next_partition = (self.next_partition + 1) % self.partitions;
                }
            }
            send_all(producer, topic, &outgoing, self.queue_messages)?;
            if self.buffer.as_ref().is_some_and(UpsertBuffer::due) {
                let records = self
                    .buffer
                    .as_mut()
                    .map(UpsertBuffer::drain)
                    .unwrap_or_default();
                send_buffered(producer, topic, &records, self.queue_messages)?;
            }
            Ok(())
        })();
        self.values = values;
        self.value_spans = value_spans;
        self.keys = keys;
        self.key_spans = key_spans;
        result?;
        if let Some(producer) = self.writing() {
            producer.poll(Duration::ZERO);
        }
        self.check_refusals()
    }

    fn on_idle(&mut self) -> Result<(), ExecError> {
        if self.buffer.as_ref().is_some_and(UpsertBuffer::due) {
            self.write_buffer()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), ExecError> {
        self.flush()?;
        if let Sending::Transactions(t) = &mut self.sending {
            t.commit_all().map_err(|e| self.failed(e))?;
        }
        Ok(())
    }

    fn pre_commit(&mut self, checkpoint: u64) -> Result<Vec<u8>, ExecError> {
        if self.options.delivery == Delivery::None {
            return Ok(Vec::new());
        }
        self.flush()?;
        match &mut self.sending {
            Sending::Plain(_) => Ok(Vec::new()),
            Sending::Transactions(t) => t.pre_commit(checkpoint).map_err(|e| self.failed(e)),
        }
    }

    fn commit(&mut self, checkpoint: u64) -> Result<(), ExecError> {
        match &mut self.sending {
            Sending::Plain(_) => Ok(()),
            Sending::Transactions(t) => t.commit(checkpoint).map_err(|e| self.failed(e)),
        }
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), ExecError> {
        match &mut self.sending {
            // A checkpoint of an at-least-once sink (or of another guarantee) has nothing.
            Sending::Transactions(t) if !state.is_empty() => {
                t.restore(state).map_err(|e| self.failed(e))
            }
            _ => Ok(()),
        }
    }
}

/// The `kafka` and `upsert-kafka` connectors' sink.
pub struct KafkaSinkFactory(pub Connector);

impl SinkFactory for KafkaSinkFactory {
    fn identifier(&self) -> &'static str {
        self.0.name()
    }

    fn check(&self, request: &SinkRequest) -> Result<(), String> {
        check_plain_sink(request, self.identifier())
    }

    fn writable_metadata(&self) -> Vec<(&'static str, DataType)> {
        writable_metadata()
    }

    /// `upsert-kafka` takes every change; `kafka` only through a changelog value format.
    fn accepts_updates(&self, request: &SinkRequest) -> bool {
        self.0 == Connector::Upsert
            || KafkaTable::parse(request.table).is_ok_and(|t| is_changelog_format(&t.value.format))
    }

    fn validate(&self, request: &SinkRequest) -> Result<(), ConnectorError> {
        encoders(&KafkaSinkOptions::of(request)?).map(|_| ())
    }

    fn create<'a>(
        &self,
        request: &SinkRequest,
        _out: &'a mut dyn std::io::Write,
    ) -> Result<Box<dyn Sink + 'a>, ConnectorError> {
        create(request)
    }
}

/// The metadata a record is written with, as Flink's Kafka sinks write it.
fn writable_metadata() -> Vec<(&'static str, DataType)> {
    vec![
        (
            "headers",
            DataType::nullable(TypeKind::Map(
                Box::new(DataType::not_null(TypeKind::VarChar(MAX_LENGTH))),
                Box::new(DataType::nullable(TypeKind::VarBinary(MAX_LENGTH))),
            )),
        ),
        ("timestamp", DataType::nullable(TypeKind::TimestampLtz(3))),
    ]
}

/// The key's encoder (when the table has a key format) and the value's.
fn encoders(
    options: &KafkaSinkOptions,
) -> Result<(Option<PartEncoder>, PartEncoder), ConnectorError> {
    let key = options
        .table
        .key
        .as_ref()
        .map(PartEncoder::new)
        .transpose()?;
    Ok((key, PartEncoder::new(&options.table.value)?))
}

fn create<'a>(request: &SinkRequest) -> Result<Box<dyn Sink + 'a>, ConnectorError> {
    let mut options = KafkaSinkOptions::of(request)?;
    let (key, value) = encoders(&options)?;
    let buffer = options.buffer.take();
    let mut config = ClientConfig::new();
    for (key, value) in options.table.client_properties() {
        config.set(key, value);
    }
    if options.table.property("partitioner").is_none() {
        // Java's partitioning of keys (librdkafka's own default hashes with CRC32).
        config.set("partitioner", "murmur2_random");
    }
    let producer: KafkaProducer = config
        .create_with_context(Deliveries::default())
        .map_err(|e| error(format!("cannot create a Kafka producer: {e}")))?;
    let topic = &options.topic;
    let metadata = producer
        .client()
        .fetch_metadata(Some(topic), options.table.timeout())
        .map_err(|e| error(format!("cannot read the metadata of topic '{topic}': {e}")))?;
    let partitions = metadata
        .topics()
        .iter()
        .find(|t| t.name() == topic && t.error().is_none())
        .map_or(0, |t| t.partitions().len() as i32);
    if partitions == 0 {
        return Err(error(format!(
            "topic '{topic}' does not exist (or has no partitions) on {}",
            options.table.bootstrap_servers()
        )));
    }
    let sending = match &options.delivery {
        Delivery::ExactlyOnce(prefix) => Sending::Transactions(Transactions::new(
            config,
            prefix,
            options.table.bootstrap_servers(),
            options.table.timeout(),
        )),
        _ => Sending::Plain(producer),
    };
    // The metadata columns follow the physical ones.
    let first_metadata = request.written.len() - request.metadata.len();
    let column_of = |key: &str| {
        request
            .metadata
            .iter()
            .position(|k| k == key)
            .map(|i| first_metadata + i)
    };
    Ok(Box::new(KafkaSink {
        buffer,
        timestamp_column: column_of("timestamp"),
        queue_messages: options
            .table
            .property("queue.buffering.max.messages")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(QUEUE_MESSAGES),
        headers_column: column_of("headers"),
        upsert: options.table.connector == Connector::Upsert,
        options,
        sending,
        key,
        value,
        partitions,
        next_partition: 0,
        keys: Vec::new(),
        key_spans: Vec::new(),
        values: Vec::new(),
        value_spans: Vec::new(),
    }))
}
