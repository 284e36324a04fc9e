//! `sink.delivery-guarantee` = `exactly-once` (docs/design/0009 §4, §7): the records between
//! two checkpoints are one Kafka transaction, committed when the later checkpoint completes,
//! as Flink's `KafkaSink` commits them.
//!
//! - Each transaction has a transactional id of its own, `<prefix>-0-<n>`, n counting up
//!   (0 is the sink's one instance), and a producer of its own: one producer holds one open
//!   transaction, and the next starts writing while the last waits for its checkpoint.
//! - At a barrier the open transaction is flushed and set aside with its producer id and
//!   epoch (librdkafka reports them only in its statistics); the checkpoint records every
//!   transaction set aside and not yet committed, and the next n.
//! - `commit(c)` commits the transactions of checkpoints up to c.
//! - A restore commits the recorded transactions by hand — librdkafka cannot resume one,
//!   and initializing a producer with the id would abort it — with the two requests that
//!   take: `FindCoordinator` for the id, then `EndTxn` with the recorded producer id and
//!   epoch (a repeated commit is answered as a success). Then it aborts what the dead run
//!   left open after the checkpoint: it initializes producers with the ids from the recorded
//!   n upward, which fences and aborts each one's transaction, until an id that no producer
//!   had used (its epoch is 0). A job started afresh does the same from 1.
//! - Without checkpoints, everything a job writes is one transaction, committed at its end.
//!
//! The hand-made requests speak plain Kafka protocol over TCP: a restore with
//! `properties.security.protocol` other than PLAINTEXT is refused.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::message::DeliveryResult;
use rdkafka::producer::{BaseProducer, Producer, ProducerContext};
use rdkafka::{ClientContext, Statistics};

/// What a producer's callbacks report: the first record the broker refused, and the
/// producer's id and epoch once it has them.
#[derive(Default)]
pub(super) struct Deliveries {
    refused: Mutex<Option<String>>,
    identity: Mutex<Option<(i64, i16)>>,
}

impl Deliveries {
    /// The first refusal since the last call.
    pub(super) fn take_refusal(&self) -> Option<String> {
        self.refused.lock().ok().and_then(|mut first| first.take())
    }

    fn identity(&self) -> Option<(i64, i16)> {
        self.identity.lock().ok().and_then(|i| *i)
    }
}

impl ClientContext for Deliveries {
    fn stats(&self, statistics: Statistics) {
        if let Some(eos) = statistics.eos
            && eos.producer_id >= 0
            && let Ok(mut identity) = self.identity.lock()
        {
            *identity = Some((eos.producer_id, eos.producer_epoch as i16));
        }
    }
}

impl ProducerContext for Deliveries {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((e, message)) = result
            && let Ok(mut first) = self.refused.lock()
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

pub(super) type KafkaProducer = BaseProducer<Deliveries>;

/// A transaction set aside at a barrier, until its checkpoint completes.
struct Pending {
    checkpoint: u64,
    id: String,
    producer_id: i64,
    epoch: i16,
    /// Its producer (none after a restore: the dead run's).
    producer: Option<KafkaProducer>,
}

pub(super) struct Transactions {
    /// The table's client configuration, with the sink's defaults.
    config: ClientConfig,
    prefix: String,
    bootstrap: String,
    timeout: Duration,
    /// The n of the next transaction's id.
    next: u64,
    /// Whether ids from `next` on have been cleared of a dead run's transactions.
    cleared: bool,
    open: Option<(String, KafkaProducer)>,
    pending: Vec<Pending>,
}

/// Ids probed for a dead run's open transactions, at most (a run opens one per checkpoint).
const PROBES: u64 = 10_000;

impl Transactions {
    pub(super) fn new(
        mut config: ClientConfig,
        prefix: &str,
        bootstrap: &str,
        timeout: Duration,
    ) -> Transactions {
        // The producer's id and epoch come only with the statistics.
        config.set("statistics.interval.ms", "20");
        if config.get("transaction.timeout.ms").is_none() {
            // A transaction waits a checkpoint interval for its commit: 15 minutes, the
            // brokers' default `transaction.max.timeout.ms` (librdkafka's own is 1 minute).
            config.set("transaction.timeout.ms", "900000");
        }
        Transactions {
            config,
            prefix: prefix.to_string(),
            bootstrap: bootstrap.to_string(),
            timeout,
            next: 1,
            cleared: false,
            open: None,
            pending: Vec::new(),
        }
    }

    fn id(&self, n: u64) -> String {
        format!("{}-0-{n}", self.prefix)
    }

    /// A producer initialized with transactional id `id` (which aborts any transaction a
    /// producer with that id left open), and its producer id and epoch.
    fn initialized(&self, id: &str) -> Result<(KafkaProducer, (i64, i16)), String> {
        let mut config = self.config.clone();
        config.set("transactional.id", id);
        let producer: KafkaProducer = config
            .create_with_context(Deliveries::default())
            .map_err(|e| format!("cannot create a Kafka producer: {e}"))?;
        producer
            .init_transactions(self.timeout)
            .map_err(|e| format!("cannot initialize transactional id '{id}': {e}"))?;
        let identity = identity(&producer, self.timeout)
            .ok_or_else(|| format!("transactional id '{id}': no producer id from the broker"))?;
        Ok((producer, identity))
    }

    /// Aborts what producers with ids from `next` on left open, up to the first id no
    /// producer had used.
    fn clear(&mut self) -> Result<(), String> {
        for n in self.next..self.next + PROBES {
            let (_, (_, epoch)) = self.initialized(&self.id(n))?;
            if epoch == 0 {
                self.cleared = true;
                return Ok(());
            }
        }
        Err(format!(
            "more than {PROBES} transactional ids '{}-0-…' were in use",
            self.prefix
        ))
    }

    /// The open transaction's producer, beginning one if none is open.
    pub(super) fn producer(&mut self) -> Result<&KafkaProducer, String> {
        if !self.cleared {
            self.clear()?;
        }
        if self.open.is_none() {
            let id = self.id(self.next);
            let (producer, _) = self.initialized(&id)?;
            producer
                .begin_transaction()
                .map_err(|e| format!("cannot begin a transaction with id '{id}': {e}"))?;
            self.next += 1;
            self.open = Some((id, producer));
        }
        Ok(&self.open.as_ref().expect("opened above").1)
    }

    /// The open transaction's producer, if one is open.
    pub(super) fn open_producer(&self) -> Option<&KafkaProducer> {
        self.open.as_ref().map(|(_, p)| p)
    }

    /// Sets the open transaction (flushed by the caller) aside for checkpoint `checkpoint`;
    /// what the checkpoint records.
    pub(super) fn pre_commit(&mut self, checkpoint: u64) -> Result<Vec<u8>, String> {
        if let Some((id, producer)) = self.open.take() {
            let (producer_id, epoch) = identity(&producer, self.timeout).ok_or_else(|| {
                format!("transactional id '{id}': no producer id from the broker")
            })?;
            self.pending.push(Pending {
                checkpoint,
                id,
                producer_id,
                epoch,
                producer: Some(producer),
            });
        }
        let mut state = format!("next\t{}\n", self.next);
        for p in &self.pending {
            state.push_str(&format!(
                "transaction\t{}\t{}\t{}\t{}\n",
                p.checkpoint, p.id, p.producer_id, p.epoch
            ));
        }
        Ok(state.into_bytes())
    }

    /// Commits the transactions of checkpoints up to `checkpoint`.
    pub(super) fn commit(&mut self, checkpoint: u64) -> Result<(), String> {
        while self
            .pending
            .first()
            .is_some_and(|p| p.checkpoint <= checkpoint)
        {
            let p = self.pending.remove(0);
            match &p.producer {
                Some(producer) => producer
                    .commit_transaction(self.timeout)
                    .map_err(|e| format!("cannot commit transaction '{}': {e}", p.id))?,
                None => self.end_by_hand(&p)?,
            }
        }
        Ok(())
    }

    /// The job's end: the open transaction (flushed by the caller) and every one set aside
    /// are committed.
    pub(super) fn commit_all(&mut self) -> Result<(), String> {
        if let Some((id, producer)) = self.open.take() {
            self.commit(u64::MAX)?;
            return producer
                .commit_transaction(self.timeout)
                .map_err(|e| format!("cannot commit transaction '{id}': {e}"));
        }
        self.commit(u64::MAX)
    }

    /// A checkpoint's state: its transactions are committed (again, harmlessly, if they
    /// were), and what the dead run left open after it is aborted.
    pub(super) fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        let text = std::str::from_utf8(state).map_err(|_| "a malformed sink state".to_string())?;
        let bad = || format!("a malformed kafka sink state: {text:?}");
        let mut next = None;
        let mut pending = Vec::new();
        for line in text.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            match fields[..] {
                ["next", n] => next = Some(n.parse().map_err(|_| bad())?),
                ["transaction", checkpoint, id, producer_id, epoch] => pending.push(Pending {
                    checkpoint: checkpoint.parse().map_err(|_| bad())?,
                    id: id.to_string(),
                    producer_id: producer_id.parse().map_err(|_| bad())?,
                    epoch: epoch.parse().map_err(|_| bad())?,
                    producer: None,
                }),
                _ => return Err(bad()),
            }
        }
        self.next = next.ok_or_else(bad)?;
        for p in &pending {
            self.end_by_hand(p)?;
        }
        self.clear()
    }

    fn end_by_hand(&self, p: &Pending) -> Result<(), String> {
        if let Some(protocol) = self.config.get("security.protocol")
            && !protocol.eq_ignore_ascii_case("plaintext")
        {
            return Err(format!(
                "cannot commit transaction '{}' after a restore over '{protocol}' (PLAINTEXT only)",
                p.id
            ));
        }
        end_transaction(&self.bootstrap, &p.id, p.producer_id, p.epoch, self.timeout).map_err(|e| {
            format!(
                "cannot commit transaction '{}' (producer id {}, epoch {}) of checkpoint {}: {e}",
                p.id, p.producer_id, p.epoch, p.checkpoint
            )
        })
    }
}

/// The producer's id and epoch, polling for its statistics up to `timeout`.
fn identity(producer: &KafkaProducer, timeout: Duration) -> Option<(i64, i16)> {
    let started = Instant::now();
    loop {
        if let Some(identity) = producer.context().identity() {
            return Some(identity);
        }
        if started.elapsed() > timeout {
            return None;
        }
        producer.poll(Duration::from_millis(5));
    }
}

/// Kafka protocol error codes a coordinator answers while it is not ready.
const RETRIABLE: &[i16] = &[
    7,  // REQUEST_TIMED_OUT
    14, // COORDINATOR_LOAD_IN_PROGRESS
    15, // COORDINATOR_NOT_AVAILABLE
    16, // NOT_COORDINATOR
    51, // CONCURRENT_TRANSACTIONS
];

/// Commits transaction `id` of producer id and epoch: `FindCoordinator` (v1) at a bootstrap
/// server, then `EndTxn` (v1) at the coordinator, retried while the coordinator is not ready.
pub fn end_transaction(
    bootstrap: &str,
    id: &str,
    producer_id: i64,
    epoch: i16,
    timeout: Duration,
) -> Result<(), String> {
    let started = Instant::now();
    let mut last = String::new();
    while started.elapsed() < timeout {
        match try_end_transaction(bootstrap, id, producer_id, epoch, timeout) {
            Ok(0) => return Ok(()),
            Ok(code) if RETRIABLE.contains(&code) => last = format!("error code {code}"),
            Ok(code) => return Err(format!("EndTxn answered error code {code}")),
            Err(e) => last = e,
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("no answer within {timeout:?}: {last}"))
}

/// One try: the error code of the coordinator's answer to EndTxn.
fn try_end_transaction(
    bootstrap: &str,
    id: &str,
    producer_id: i64,
    epoch: i16,
    timeout: Duration,
) -> Result<i16, String> {
    let mut found = None;
    let mut failure = String::from("no bootstrap server");
    for server in bootstrap
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let server = server.rsplit("://").next().unwrap_or(server);
        // FindCoordinator v1: key, key type 1 (a transaction).
        let mut body = Vec::new();
        put_string(&mut body, id);
        body.push(1);
        match request(server, 10, 1, &body, timeout) {
            Ok(answer) => {
                let mut r = Reader(&answer);
                let _throttle = r.i32()?;
                let code = r.i16()?;
                let _message = r.nullable_string()?;
                let _node = r.i32()?;
                let host = r.string()?;
                let port = r.i32()?;
                if code != 0 {
                    return Ok(code);
                }
                found = Some(format!("{host}:{port}"));
                break;
            }
            Err(e) => failure = e,
        }
    }
    let coordinator = found.ok_or(failure)?;
    // EndTxn v1: transactional id, producer id, epoch, committed.
    let mut body = Vec::new();
    put_string(&mut body, id);
    body.extend_from_slice(&producer_id.to_be_bytes());
    body.extend_from_slice(&epoch.to_be_bytes());
    body.push(1);
    let answer = request(&coordinator, 26, 1, &body, timeout)?;
    let mut r = Reader(&answer);
    let _throttle = r.i32()?;
    r.i16()
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// Sends one request (header v1, client id `tideline`) and returns the response's body.
fn request(
    server: &str,
    api_key: i16,
    version: i16,
    body: &[u8],
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    use std::net::ToSocketAddrs;
    let failed = |e: std::io::Error| format!("{server}: {e}");
    let address = server
        .to_socket_addrs()
        .map_err(failed)?
        .next()
        .ok_or_else(|| format!("{server}: no address"))?;
    let mut stream = TcpStream::connect_timeout(&address, timeout).map_err(failed)?;
    stream.set_read_timeout(Some(timeout)).map_err(failed)?;
    stream.set_write_timeout(Some(timeout)).map_err(failed)?;
    let correlation = 1i32;
    let mut message = Vec::new();
    message.extend_from_slice(&api_key.to_be_bytes());
    message.extend_from_slice(&version.to_be_bytes());
    message.extend_from_slice(&correlation.to_be_bytes());
    put_string(&mut message, "tideline");
    message.extend_from_slice(body);
    let mut framed = (message.len() as i32).to_be_bytes().to_vec();
    framed.extend_from_slice(&message);
    stream.write_all(&framed).map_err(failed)?;
    let mut size = [0u8; 4];
    stream.read_exact(&mut size).map_err(failed)?;
    let size = i32::from_be_bytes(size);
    if !(4..=1 << 20).contains(&size) {
        return Err(format!("{server}: an answer of {size} bytes"));
    }
    let mut answer = vec![0u8; size as usize];
    stream.read_exact(&mut answer).map_err(failed)?;
    if answer[..4] != correlation.to_be_bytes() {
        return Err(format!("{server}: an answer to another request"));
    }
    Ok(answer.split_off(4))
}

/// Reads a response's fields.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        if self.0.len() < n {
            return Err("a truncated answer".into());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn i16(&mut self) -> Result<i16, String> {
        Ok(i16::from_be_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn i32(&mut self) -> Result<i32, String> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn nullable_string(&mut self) -> Result<Option<String>, String> {
        let n = self.i16()?;
        if n < 0 {
            return Ok(None);
        }
        Ok(Some(
            String::from_utf8_lossy(self.take(n as usize)?).into_owned(),
        ))
    }
    fn string(&mut self) -> Result<String, String> {
        self.nullable_string()?
            .ok_or_else(|| "a null string in an answer".to_string())
    }
}
