//! The `kafka` sink (docs/design/0009 §4): each row one record of the table's `format`
//! (`value.format`) on `topic`, written by librdkafka's producer.
//!
//! - `sink.delivery-guarantee`: `at-least-once` (default) waits, at each checkpoint's barrier
//!   and at the end, until the broker has every record written before, and fails the job on a
//!   record it refused; `none` waits only at the end. Without a checkpoint a job's records are
//!   delivered when it ends or fails on the first refusal.
//! - `sink.partitioner`: `default` is Kafka's Java partitioner (`murmur2_random`: a record
//!   without a key goes to a random partition); `fixed` writes every record to partition 0,
//!   the partition of Flink's sink instance 0 (Tideline's sink is one instance); `round-robin`
//!   cycles through the topic's partitions.
//! - An updating query is refused unless the format writes changes (`debezium-json`,
//!   `canal-json`, `maxwell-json`), as Flink's.
//!
//! Not built yet (refused when asked): `exactly-once`, key formats (`key.format`,
//! `key.fields`), writing metadata columns.

use std::sync::Mutex;
use std::time::Duration;

use rdkafka::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::DeliveryResult;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer, ProducerContext};

use super::check_plain_sink;
use crate::connector::ConnectorError;
use crate::connector::format::{LineEncoder, new_encoder};
use crate::connector::registry::{SinkFactory, SinkRequest};
use crate::connector::sink::Sink;
use crate::exec::error::ExecError;
use crate::types::Schema;
use crate::types::chunk::StreamChunk;

/// How `sink.partitioner` places a record.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Partitioner {
    Default,
    Fixed,
    RoundRobin,
}

/// `sink.delivery-guarantee`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Delivery {
    None,
    AtLeastOnce,
}

/// A `kafka` sink table's options, checked.
struct KafkaSinkOptions {
    topic: String,
    properties: Vec<(String, String)>,
    format: Vec<(String, String)>,
    partitioner: Partitioner,
    delivery: Delivery,
    /// How long a flush may wait for the broker (`properties.request.timeout.ms`, 30 s),
    /// times the tries librdkafka makes.
    timeout: Duration,
}

fn error(message: impl Into<String>) -> ConnectorError {
    ConnectorError(message.into())
}

impl KafkaSinkOptions {
    fn of(request: &SinkRequest) -> Result<Self, ConnectorError> {
        let options = &request.table.options;
        let get = |k: &str| {
            options
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.trim())
        };
        let format_name = get("value.format")
            .or_else(|| get("format"))
            .ok_or_else(|| {
                error("Could not find required sink format 'value.format' for connector 'kafka'.")
            })?
            .to_string();
        for key in ["key.format", "key.fields", "topic-pattern"] {
            if get(key).is_some() {
                return Err(error(format!(
                    "option '{key}' of connector 'kafka' is not supported yet (docs/design/0009-kafka.md)"
                )));
            }
        }
        let mut unsupported = Vec::new();
        let mut format = vec![("format".to_string(), format_name.clone())];
        for (key, value) in options {
            let known = matches!(
                key.as_str(),
                "connector"
                    | "topic"
                    | "format"
                    | "value.format"
                    | "sink.partitioner"
                    | "sink.delivery-guarantee"
                    | "sink.transactional-id-prefix"
                    | "value.fields-include"
                    // A source's options, on a table that is read and written.
                    | "scan.startup.mode"
                    | "scan.startup.timestamp-millis"
                    | "scan.startup.specific-offsets"
                    | "scan.bounded.mode"
                    | "scan.bounded.timestamp-millis"
                    | "scan.bounded.specific-offsets"
            ) || key.starts_with("properties.")
                || key.starts_with("scan.watermark.");
            let format_key = key.strip_prefix("value.").unwrap_or(key);
            if format_key.starts_with(&format!("{format_name}.")) {
                format.push((format_key.to_string(), value.clone()));
            } else if !known {
                unsupported.push(key.as_str());
            }
        }
        if !unsupported.is_empty() {
            unsupported.sort_unstable();
            return Err(error(format!(
                "Unsupported options found for 'kafka'.\n\nUnsupported options:\n\n{}",
                unsupported.join("\n")
            )));
        }
        let topics: Vec<&str> = get("topic")
            .ok_or_else(|| error("'topic' is required for a 'kafka' sink table"))?
            .split(';')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect();
        let [topic] = topics[..] else {
            return Err(error(
                "a 'kafka' sink writes one topic: 'topic' names several (writing a 'topic' metadata column is not supported yet)",
            ));
        };
        let properties: Vec<(String, String)> = options
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("properties.")?.to_string(), v.clone())))
            .collect();
        if !properties.iter().any(|(k, _)| k == "bootstrap.servers") {
            return Err(error(
                "Missing required option 'properties.bootstrap.servers' for connector 'kafka'.",
            ));
        }
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
            "exactly-once" => {
                return Err(error(
                    "'sink.delivery-guarantee' = 'exactly-once' is not supported yet (docs/design/0009-kafka.md §4); use 'at-least-once'",
                ));
            }
            other => {
                return Err(error(format!(
                    "Invalid value for option 'sink.delivery-guarantee': '{other}' (none, at-least-once, exactly-once)"
                )));
            }
        };
        let timeout = properties
            .iter()
            .find(|(k, _)| k == "request.timeout.ms")
            .and_then(|(_, v)| v.parse().ok())
            .map_or(Duration::from_secs(30), Duration::from_millis);
        Ok(KafkaSinkOptions {
            topic: topic.to_string(),
            properties,
            format,
            partitioner,
            delivery,
            timeout,
        })
    }
}

/// The first record the broker refused, kept until the sink reports it.
#[derive(Default)]
struct Refusals(Mutex<Option<String>>);

impl ClientContext for Refusals {}

impl ProducerContext for Refusals {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((e, message)) = result
            && let Ok(mut first) = self.0.lock()
            && first.is_none()
        {
            use rdkafka::message::Message;
            *first = Some(format!(
                "the broker did not take a record for topic '{}' partition {}: {e}",
                message.topic(),
                message.partition()
            ));
        }
    }
}

pub struct KafkaSink {
    options: KafkaSinkOptions,
    producer: BaseProducer<Refusals>,
    encoder: LineEncoder,
    schema: Schema,
    /// The topic's partitions, for `round-robin`.
    partitions: i32,
    /// The next partition `round-robin` writes.
    next_partition: i32,
    buffer: Vec<u8>,
    line: Vec<u8>,
}

impl KafkaSink {
    fn failed(&self, message: impl std::fmt::Display) -> ExecError {
        ExecError::Sink(format!("kafka topic '{}': {message}", self.options.topic))
    }

    /// The first refusal the broker sent back, as the job's error.
    fn check_refusals(&self) -> Result<(), ExecError> {
        let refused = self
            .producer
            .context()
            .0
            .lock()
            .ok()
            .and_then(|mut first| first.take());
        match refused {
            Some(message) => Err(ExecError::Sink(message)),
            None => Ok(()),
        }
    }

    /// Queues one record, waiting while librdkafka's queue is full.
    fn send(&mut self, payload: &[u8]) -> Result<(), ExecError> {
        let partition = match self.options.partitioner {
            Partitioner::Default => None,
            Partitioner::Fixed => Some(0),
            Partitioner::RoundRobin => {
                let p = self.next_partition;
                self.next_partition = (p + 1) % self.partitions;
                Some(p)
            }
        };
        loop {
            let mut record: BaseRecord<'_, (), [u8]> =
                BaseRecord::to(&self.options.topic).payload(payload);
            if let Some(p) = partition {
                record = record.partition(p);
            }
            match self.producer.send(record) {
                Ok(()) => return Ok(()),
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => {
                    // Deliveries free the queue; their callbacks run in poll.
                    self.producer.poll(Duration::from_millis(10));
                    self.check_refusals()?;
                }
                Err((e, _)) => return Err(self.failed(e)),
            }
        }
    }

    /// Waits until the broker has every record queued so far.
    fn flush(&mut self) -> Result<(), ExecError> {
        self.producer
            .flush(self.options.timeout)
            .map_err(|e| self.failed(format!("records not delivered: {e}")))?;
        self.check_refusals()
    }
}

impl Sink for KafkaSink {
    fn write(&mut self, chunk: StreamChunk) -> Result<(), ExecError> {
        let rows = chunk.num_rows();
        if rows == 0 {
            return Ok(());
        }
        let mut buffer = std::mem::take(&mut self.buffer);
        buffer.clear();
        self.encoder.encode_batch(
            &chunk.batch,
            chunk.kinds.as_deref(),
            &self.schema,
            &mut buffer,
        );
        // One line per record, unless a CSV field held a line break: then row by row.
        let result = if memchr::memchr_iter(b'\n', &buffer).count() == rows {
            buffer
                .split(|&b| b == b'\n')
                .take(rows)
                .try_for_each(|line| self.send(line))
        } else {
            let mut line = std::mem::take(&mut self.line);
            let result = (0..rows).try_for_each(|row| {
                line.clear();
                let kinds = chunk.kinds.as_deref().map(|k| &k[row..row + 1]);
                self.encoder.encode_batch(
                    &chunk.batch.slice(row, 1),
                    kinds,
                    &self.schema,
                    &mut line,
                );
                let end = line.len() - usize::from(line.ends_with(b"\n"));
                self.send(&line[..end])
            });
            self.line = line;
            result
        };
        self.buffer = buffer;
        result?;
        self.producer.poll(Duration::ZERO);
        self.check_refusals()
    }

    fn finish(&mut self) -> Result<(), ExecError> {
        self.flush()
    }

    fn pre_commit(&mut self, _checkpoint: u64) -> Result<Vec<u8>, ExecError> {
        if self.options.delivery == Delivery::AtLeastOnce {
            self.flush()?;
        }
        Ok(Vec::new())
    }
}

/// The `kafka` connector's sink.
pub struct KafkaSinkFactory;

impl SinkFactory for KafkaSinkFactory {
    fn identifier(&self) -> &'static str {
        "kafka"
    }

    fn check(&self, request: &SinkRequest) -> Result<(), String> {
        check_plain_sink(request, self.identifier())
    }

    /// Only a changelog format writes updates and deletes.
    fn accepts_updates(&self, request: &SinkRequest) -> bool {
        let options = &request.table.options;
        let format = options
            .iter()
            .find(|(k, _)| k == "value.format")
            .or_else(|| options.iter().find(|(k, _)| k == "format"))
            .map(|(_, v)| v.trim());
        format.is_some_and(|f| f.ends_with("-json") && f != "json")
    }

    fn validate(&self, request: &SinkRequest) -> Result<(), ConnectorError> {
        let options = KafkaSinkOptions::of(request)?;
        new_encoder(&options.format, request.written)?;
        Ok(())
    }

    fn create<'a>(
        &self,
        request: &SinkRequest,
        _out: &'a mut dyn std::io::Write,
    ) -> Result<Box<dyn Sink + 'a>, ConnectorError> {
        let options = KafkaSinkOptions::of(request)?;
        let encoder = new_encoder(&options.format, request.written)?;
        let mut config = ClientConfig::new();
        for (key, value) in &options.properties {
            config.set(key, value);
        }
        if !options.properties.iter().any(|(k, _)| k == "partitioner") {
            // Java's partitioning of keys (librdkafka's own default hashes with CRC32).
            config.set("partitioner", "murmur2_random");
        }
        let producer: BaseProducer<Refusals> = config
            .create_with_context(Refusals::default())
            .map_err(|e| error(format!("cannot create a Kafka producer: {e}")))?;
        let topic = &options.topic;
        let metadata = producer
            .client()
            .fetch_metadata(Some(topic), options.timeout)
            .map_err(|e| error(format!("cannot read the metadata of topic '{topic}': {e}")))?;
        let partitions = metadata
            .topics()
            .iter()
            .find(|t| t.name() == topic && t.error().is_none())
            .map_or(0, |t| t.partitions().len() as i32);
        if partitions == 0 {
            return Err(error(format!(
                "topic '{topic}' does not exist (or has no partitions) on {}",
                options
                    .properties
                    .iter()
                    .find(|(k, _)| k == "bootstrap.servers")
                    .map_or("", |(_, v)| v.as_str())
            )));
        }
        Ok(Box::new(KafkaSink {
            options,
            producer,
            encoder,
            schema: request.written.clone(),
            partitions,
            next_partition: 0,
            buffer: Vec::new(),
            line: Vec::new(),
        }))
    }
}
