//! The test Kafka broker, for the tests that need one (`tests/kafka.rs`): its address comes
//! from `TIDELINE_KAFKA_BOOTSTRAP` (`127.0.0.1:9092`), which `.ci/run` sets after starting
//! the broker with `scripts/kafka-broker.sh start`. Without it a test says so and passes,
//! unless `TIDELINE_REQUIRE_KAFKA` is set (as `.ci/run` sets it): then it fails, so that a
//! CI run without a broker cannot pass quietly.

// Each test crate that includes this module uses part of it.
#![allow(dead_code)]

#[path = "script.rs"]
mod script;
pub use script::{ok, run};

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::ClientContext;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::message::DeliveryResult;
use rdkafka::producer::{BaseRecord, Producer, ProducerContext, ThreadedProducer};

/// The test broker's address, or None (the test is skipped) when there is none.
pub fn bootstrap() -> Option<String> {
    match std::env::var("TIDELINE_KAFKA_BOOTSTRAP") {
        Ok(address) => Some(address),
        Err(_) if std::env::var_os("TIDELINE_REQUIRE_KAFKA").is_some() => panic!(
            "TIDELINE_REQUIRE_KAFKA is set but TIDELINE_KAFKA_BOOTSTRAP is not: no broker to test against"
        ),
        Err(_) => {
            eprintln!(
                "skipped: no Kafka broker (TIDELINE_KAFKA_BOOTSTRAP is not set; \
                 `scripts/kafka-broker.sh start` starts one, .ci/run does)"
            );
            None
        }
    }
}

/// A topic name no other test (nor an earlier run on the same broker) uses.
pub fn topic_name(test: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{test}-{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Runs a future to its end on this thread (the admin client's calls are futures).
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut context) {
            return out;
        }
        std::thread::park_timeout(Duration::from_millis(50));
    }
}

/// Creates a topic of `partitions` partitions.
pub fn create_topic(bootstrap: &str, topic: &str, partitions: i32) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("an admin client");
    let results = block_on(admin.create_topics(
        &[NewTopic::new(topic, partitions, TopicReplication::Fixed(1))],
        &AdminOptions::new().operation_timeout(Some(Duration::from_secs(10))),
    ))
    .expect("create_topics");
    for result in results {
        result.unwrap_or_else(|(name, e)| panic!("creating topic {name}: {e}"));
    }
}

/// Counts the records the broker refused.
#[derive(Default)]
struct Failures(AtomicU32);

impl ClientContext for Failures {}

impl ProducerContext for Failures {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((e, _)) = result {
            eprintln!("a test record was not delivered: {e}");
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Writes records to partitions of a topic, one record per produce request: the test
/// broker reports a partition's end offset per batch, not per record (docs/design/0009),
/// and a bounded read stops at that end. `records` are (partition, key, value, timestamp in
/// epoch milliseconds; a negative one leaves the producer's clock to set it).
pub fn produce(bootstrap: &str, topic: &str, records: &[(i32, Option<&str>, Option<&str>, i64)]) {
    let with_headers: Vec<_> = records
        .iter()
        .map(|&(p, k, v, t)| (p, k, v, t, Vec::new()))
        .collect();
    produce_with_headers(bootstrap, topic, &with_headers);
}

/// A record to write: partition, key, value, timestamp (as `produce`), headers.
pub type Record<'a> = (
    i32,
    Option<&'a str>,
    Option<&'a str>,
    i64,
    Vec<(&'a str, Option<&'a str>)>,
);

/// `produce`, each record with its headers.
pub fn produce_with_headers(bootstrap: &str, topic: &str, records: &[Record<'_>]) {
    use rdkafka::message::{Header, OwnedHeaders};
    let producer: ThreadedProducer<Failures> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("linger.ms", "0")
        .set("batch.num.messages", "1")
        .set("max.in.flight.requests.per.connection", "1")
        .create_with_context(Failures::default())
        .expect("a producer");
    for (partition, key, value, timestamp, headers) in records {
        let mut record: BaseRecord<'_, str, str> = BaseRecord::to(topic)
            .partition(*partition)
            .timestamp(*timestamp);
        if let Some(key) = key {
            record = record.key(key);
        }
        if let Some(value) = value {
            record = record.payload(value);
        }
        if !headers.is_empty() {
            let mut owned = OwnedHeaders::new();
            for (key, value) in headers {
                owned = owned.insert(Header { key, value: *value });
            }
            record = record.headers(owned);
        }
        producer
            .send(record)
            .map_err(|(e, _)| e)
            .expect("queue a record");
    }
    producer
        .flush(Duration::from_secs(30))
        .expect("records delivered");
    assert_eq!(
        producer.context().0.load(Ordering::Relaxed),
        0,
        "records not delivered"
    );
}

/// Reads a topic from its start (read_committed) until `count` records have come (or 30 s
/// have passed), then any beyond them until none has come for a second: (partition, value) of
/// each, in each partition's order. It does not rely on the broker's end offsets
/// (docs/design/0009: the test broker's are per batch).
pub fn consume(bootstrap: &str, topic: &str, count: usize) -> Vec<(i32, Option<String>)> {
    consume_keyed(bootstrap, topic, count)
        .into_iter()
        .map(|(p, _, v)| (p, v))
        .collect()
}

/// `consume`: (partition, key, value) of each record.
pub fn consume_keyed(
    bootstrap: &str,
    topic: &str,
    count: usize,
) -> Vec<(i32, Option<String>, Option<String>)> {
    use rdkafka::Message;
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "tideline-test")
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_committed")
        .create()
        .expect("a consumer");
    let metadata = consumer
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .expect("metadata");
    let mut assignment = rdkafka::TopicPartitionList::new();
    for p in metadata.topics()[0].partitions() {
        assignment
            .add_partition_offset(topic, p.id(), rdkafka::Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&assignment).expect("assign");
    let mut records = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut quiet_until = None;
    loop {
        let now = std::time::Instant::now();
        if records.len() >= count {
            let until = *quiet_until.get_or_insert(now + Duration::from_secs(1));
            if now >= until {
                break;
            }
        } else if now >= deadline {
            break;
        }
        if let Some(message) = consumer.poll(Duration::from_millis(50)) {
            let message = message.expect("a record");
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            // Beyond `count`, reading goes on while records keep coming.
            if records.len() >= count {
                quiet_until = None;
            }
            records.push((
                message.partition(),
                message.key().map(text),
                message.payload().map(text),
            ));
        }
    }
    records
}

/// The table's DDL: `columns`, topic, format, and extra options.
pub fn table(name: &str, columns: &str, server: &str, topic: &str, options: &str) -> String {
    format!(
        "CREATE TABLE {name} ({columns}) WITH ('connector' = 'kafka', 'topic' = '{topic}', \
         'properties.bootstrap.servers' = '{server}', {options});\n"
    )
}

/// Rows of a batch-mode query's result, without the table's frame.
pub fn rows(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with("| ") || l.starts_with("|  "))
        .skip(1)
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

/// A table reading `topic` from its start up to `ends` (specific offsets) with `options`.
pub fn bounded_table(
    name: &str,
    columns: &str,
    server: &str,
    topic: &str,
    options: &str,
    ends: &str,
) -> String {
    table(
        name,
        columns,
        server,
        topic,
        &format!(
            "{options}, 'scan.startup.mode' = 'earliest-offset', \
             'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = '{ends}'"
        ),
    )
}

/// Specific offsets ending each partition after the records read from it.
pub fn ends(records: &[(i32, Option<String>)], partitions: i32) -> String {
    (0..partitions)
        .map(|p| {
            let n = records.iter().filter(|(q, _)| *q == p).count();
            format!("partition:{p},offset:{n}")
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// Writes `lines` as a CSV file; its table's DDL.
pub fn file_table(name: &str, columns: &str, lines: &[String], test: &str) -> String {
    let dir = std::env::temp_dir().join(format!("tideline-kafka-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.csv"));
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    format!(
        "CREATE TABLE {name} ({columns}) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n",
        file.display()
    )
}

/// The final rows of a printed changelog: +I/+U add a row, -U/-D take one away.
pub fn final_rows(out: &str) -> Vec<String> {
    let mut table: Vec<String> = Vec::new();
    for row in rows(out) {
        let (kind, values) = row.split_once(',').unwrap();
        match kind {
            "+I" | "+U" => table.push(values.to_string()),
            _ => {
                let at = table
                    .iter()
                    .position(|r| r == values)
                    .expect("retracted row was there");
                table.remove(at);
            }
        }
    }
    table.sort();
    table
}

/// Whether the broker hides an aborted transaction's records from a read_committed reader,
/// as Kafka does. Tansu 0.6.0 does not (docs/design/0009 §1): it shows them, and it commits a
/// transaction a dead producer left open with the next commit under the same id.
pub fn broker_hides_aborted_records(bootstrap: &str) -> bool {
    use rdkafka::producer::BaseProducer;
    let topic = topic_name("aborts");
    create_topic(bootstrap, &topic, 1);
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("transactional.id", &topic)
        .create()
        .expect("a transactional producer");
    let timeout = Duration::from_secs(10);
    producer.init_transactions(timeout).expect("init");
    for (value, commit) in [("aborted", false), ("committed", true)] {
        producer.begin_transaction().expect("begin");
        producer
            .send(
                BaseRecord::<str, str>::to(&topic)
                    .partition(0)
                    .payload(value),
            )
            .map_err(|(e, _)| e)
            .expect("send");
        producer.flush(timeout).expect("flush");
        if commit {
            producer.commit_transaction(timeout).expect("commit");
        } else {
            producer.abort_transaction(timeout).expect("abort");
        }
    }
    let seen = consume(bootstrap, &topic, 1);
    !seen.iter().any(|(_, v)| v.as_deref() == Some("aborted"))
}
