//! The test Kafka broker, for the tests that need one (`tests/kafka.rs`): its address comes
//! from `TIDELINE_KAFKA_BOOTSTRAP` (`127.0.0.1:9092`), which `.ci/run` sets after starting
//! the broker with `scripts/kafka-broker.sh start`. Without it a test says so and passes,
//! unless `TIDELINE_REQUIRE_KAFKA` is set (as `.ci/run` sets it): then it fails, so that a
//! CI run without a broker cannot pass quietly.

// Each test crate that includes this module uses part of it.
#![allow(dead_code)]

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
    let producer: ThreadedProducer<Failures> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("linger.ms", "0")
        .set("batch.num.messages", "1")
        .set("max.in.flight.requests.per.connection", "1")
        .create_with_context(Failures::default())
        .expect("a producer");
    for &(partition, key, value, timestamp) in records {
        let mut record: BaseRecord<'_, str, str> = BaseRecord::to(topic)
            .partition(partition)
            .timestamp(timestamp);
        if let Some(key) = key {
            record = record.key(key);
        }
        if let Some(value) = value {
            record = record.payload(value);
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

/// Reads a topic from its start until `count` records have come (or 30 s have passed), then
/// 300 ms more for any beyond them: (partition, value) of each, in each partition's order.
/// It does not rely on the broker's end offsets (docs/design/0009: the test broker's are per
/// batch).
pub fn consume(bootstrap: &str, topic: &str, count: usize) -> Vec<(i32, Option<String>)> {
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
            let until = *quiet_until.get_or_insert(now + Duration::from_millis(300));
            if now >= until {
                break;
            }
        } else if now >= deadline {
            break;
        }
        if let Some(message) = consumer.poll(Duration::from_millis(50)) {
            let message = message.expect("a record");
            records.push((
                message.partition(),
                message
                    .payload()
                    .map(|v| String::from_utf8_lossy(v).into_owned()),
            ));
        }
    }
    records
}
