//! A chunk's records handed to librdkafka in one call (`rd_kafka_produce_batch`), which
//! reads the clock and locks the topic once per call where `rd_kafka_producev` does both per
//! record (docs/design/0009 §7: most of the sink's time was there). It copies each record's
//! bytes, so the sink's buffers are free again when it returns. Records with a timestamp or
//! headers of their own cannot go this way (the batch call has no field for them): the sink
//! sends those one by one.

use std::ffi::CString;
use std::time::Duration;

use rdkafka::bindings as rd;
use rdkafka::producer::Producer;

use super::transactions::KafkaProducer;
use crate::exec::error::ExecError;

/// Records per call at most: a call that finds librdkafka's queue full part of the way
/// would leave its later records behind its earlier ones' retries, so the sink waits for
/// room for a whole piece first.
const PIECE: usize = 10_000;

/// librdkafka's queue bound (`queue.buffering.max.messages`) when the table leaves it.
pub(super) const QUEUE_MESSAGES: usize = 100_000;

/// librdkafka's "any partition" (`RD_KAFKA_PARTITION_UA`): the partitioner picks one.
const PARTITION_UA: i32 = -1;

/// One record: its key and value (none: absent) and its partition (none: the partitioner's).
pub(super) struct Outgoing<'a> {
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub partition: Option<i32>,
}

/// Queues `records` on `topic` in order, waiting for room in librdkafka's queue (bounded by
/// `queue_messages`); a refusal the broker already sent back fails it.
pub(super) fn send_all(
    producer: &KafkaProducer,
    topic: &str,
    records: &[Outgoing<'_>],
    queue_messages: usize,
) -> Result<(), ExecError> {
    let failed = |e: String| ExecError::Sink(format!("kafka topic '{topic}': {e}"));
    let name = CString::new(topic).map_err(|_| failed("a topic name with a NUL".into()))?;
    let piece = PIECE.min(queue_messages / 2).max(1);
    let per_record = records.iter().any(|r| r.partition.is_some());
    let mut messages: Vec<rd::rd_kafka_message_t> = Vec::with_capacity(piece);
    for part in records.chunks(piece) {
        // Room for the whole piece, so that none of it is refused for a full queue.
        while producer.in_flight_count() as usize + part.len() > queue_messages {
            producer.poll(Duration::from_millis(10));
            if let Some(refused) = producer.context().take_refusal() {
                return Err(ExecError::Sink(refused));
            }
        }
        messages.clear();
        messages.extend(part.iter().map(|r| {
            let (payload, len) = r.value.map_or((std::ptr::null_mut(), 0), |v| {
                (v.as_ptr() as *mut _, v.len())
            });
            let (key, key_len) = r.key.map_or((std::ptr::null_mut(), 0), |k| {
                (k.as_ptr() as *mut _, k.len())
            });
            rd::rd_kafka_message_t {
                err: rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR,
                rkt: std::ptr::null_mut(),
                partition: r.partition.unwrap_or(PARTITION_UA),
                payload,
                len,
                key,
                key_len,
                offset: 0,
                _private: std::ptr::null_mut(),
            }
        }));
        let flags = rd::RD_KAFKA_MSG_F_COPY
            | if per_record {
                rd::RD_KAFKA_MSG_F_PARTITION
            } else {
                0
            };
        // SAFETY: the producer's handle lives as long as `producer`; the topic handle is
        // released below; the messages point into `records`, which outlive the call, and
        // F_COPY makes librdkafka copy what they point to before it returns.
        let queued = unsafe {
            let rkt = rd::rd_kafka_topic_new(
                producer.client().native_ptr(),
                name.as_ptr(),
                std::ptr::null_mut(),
            );
            if rkt.is_null() {
                return Err(failed("librdkafka has no handle for the topic".into()));
            }
            let queued = rd::rd_kafka_produce_batch(
                rkt,
                PARTITION_UA,
                flags,
                messages.as_mut_ptr(),
                messages.len() as i32,
            );
            rd::rd_kafka_topic_destroy(rkt);
            queued
        };
        if queued as usize != messages.len() {
            let error = messages
                .iter()
                .find(|m| m.err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR)
                .map_or_else(
                    || format!("{queued} of {} records queued", messages.len()),
                    |m| rdkafka::error::RDKafkaErrorCode::from(m.err).to_string(),
                );
            return Err(failed(format!("records not queued: {error}")));
        }
    }
    Ok(())
}
