//! Records taken from librdkafka many at a time (`rd_kafka_consume_batch_queue` on the
//! consumer's queue): one lock and one clock reading per call, where a poll through
//! `rdkafka`'s event API takes both, and an event, per record (docs/design/0009 §7).
//!
//! The batch call returns consumer errors as records with an error code, but hands generic
//! ones (a broker connection lost) to librdkafka's logger: the split asks the broker itself
//! whether it is there when nothing comes. Any other operation on that queue must be one
//! librdkafka's callbacks serve: one it passes on (an offset commit's result with no
//! callback, a rebalance) it cannot make a record of and aborts the process. The source
//! commits offsets with `rd_kafka_commit`, whose asynchronous form asks for no reply, and
//! never joins its group, so none comes (librdkafka 2.12.1, `rd_kafka_q_serve_rkmessages`).

use std::time::Duration;

use rdkafka::bindings as rd;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Timestamp;

/// The consumer's queue, held for batch calls.
pub(super) struct ConsumerQueue {
    queue: *mut rd::rd_kafka_queue_t,
    /// Records of the last call, destroyed at the next one (or on drop).
    taken: Vec<*mut rd::rd_kafka_message_t>,
}

// SAFETY: a librdkafka queue handle may be used from any thread; the split that owns this
// uses it from one at a time, and the records it holds are only read by that split.
unsafe impl Send for ConsumerQueue {}

impl ConsumerQueue {
    /// The queue of `consumer` (which must outlive it: the split owns both and drops this
    /// first).
    pub(super) fn of(consumer: &BaseConsumer) -> ConsumerQueue {
        // SAFETY: the client handle is valid while the consumer lives; the new reference
        // to its queue is released in `drop`.
        let queue = unsafe { rd::rd_kafka_queue_get_consumer(consumer.client().native_ptr()) };
        ConsumerQueue {
            queue,
            taken: Vec::new(),
        }
    }

    /// Up to `max` records, waiting up to `wait` for the first; those of the last call are
    /// released first.
    pub(super) fn take(&mut self, max: usize, wait: Duration) -> &[RawRecord] {
        self.release();
        if self.queue.is_null() {
            return &[];
        }
        self.taken.resize(max, std::ptr::null_mut());
        // SAFETY: the queue is valid; the array has room for `max` pointers, which the call
        // fills with records we own until `rd_kafka_message_destroy`.
        let n = unsafe {
            rd::rd_kafka_consume_batch_queue(
                self.queue,
                wait.as_millis().min(i32::MAX as u128) as i32,
                self.taken.as_mut_ptr(),
                max,
            )
        };
        self.taken.truncate(n.max(0) as usize);
        // SAFETY: `RawRecord` is a transparent wrapper of the record pointer.
        unsafe {
            std::slice::from_raw_parts(self.taken.as_ptr() as *const RawRecord, self.taken.len())
        }
    }

    fn release(&mut self) {
        for &message in &self.taken {
            if !message.is_null() {
                // SAFETY: each was returned by the batch call and is destroyed once.
                unsafe { rd::rd_kafka_message_destroy(message) };
            }
        }
        self.taken.clear();
    }
}

impl Drop for ConsumerQueue {
    fn drop(&mut self) {
        self.release();
        if !self.queue.is_null() {
            // SAFETY: the reference taken in `of`, released once.
            unsafe { rd::rd_kafka_queue_destroy(self.queue) };
        }
    }
}

/// One record of a batch call, valid until the next call.
#[repr(transparent)]
pub(super) struct RawRecord(*mut rd::rd_kafka_message_t);

impl RawRecord {
    fn message(&self) -> &rd::rd_kafka_message_t {
        // SAFETY: a record returned by the batch call, alive until the next one.
        unsafe { &*self.0 }
    }

    /// The error the record stands for (a consumer error), if any.
    pub(super) fn error(&self) -> Option<rdkafka::error::KafkaError> {
        let err = self.message().err;
        (err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR).then(|| {
            rdkafka::error::KafkaError::MessageConsumption(rdkafka::error::RDKafkaErrorCode::from(
                err,
            ))
        })
    }

    /// The partition's leader epoch when the record was fetched, if the broker said.
    pub(super) fn leader_epoch(&self) -> Option<i32> {
        // SAFETY: as `message`.
        let epoch = unsafe { rd::rd_kafka_message_leader_epoch(self.0) };
        (epoch >= 0).then_some(epoch)
    }

    fn bytes(&self, pointer: *mut std::ffi::c_void, len: usize) -> Option<&[u8]> {
        // SAFETY: librdkafka's pointer and length of the record's key or value, alive with
        // the record.
        (!pointer.is_null())
            .then(|| unsafe { std::slice::from_raw_parts(pointer as *const u8, len) })
    }
}

impl RawRecord {
    pub(super) fn offset(&self) -> i64 {
        self.message().offset
    }

    pub(super) fn key(&self) -> Option<&[u8]> {
        let m = self.message();
        self.bytes(m.key, m.key_len)
    }

    pub(super) fn payload(&self) -> Option<&[u8]> {
        let m = self.message();
        self.bytes(m.payload, m.len)
    }

    pub(super) fn timestamp(&self) -> Timestamp {
        let mut kind = rd::rd_kafka_timestamp_type_t::RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
        // SAFETY: as `message`.
        let millis = unsafe { rd::rd_kafka_message_timestamp(self.0, &mut kind) };
        match kind {
            rd::rd_kafka_timestamp_type_t::RD_KAFKA_TIMESTAMP_CREATE_TIME => {
                Timestamp::CreateTime(millis)
            }
            rd::rd_kafka_timestamp_type_t::RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME => {
                Timestamp::LogAppendTime(millis)
            }
            _ => Timestamp::NotAvailable,
        }
    }

    /// Each header in order, a repeated name each time.
    pub(super) fn for_each_header(&self, f: &mut dyn FnMut(&str, Option<&[u8]>)) {
        let mut headers = std::ptr::null_mut();
        // SAFETY: as `message`; the headers belong to the record.
        let found = unsafe { rd::rd_kafka_message_headers(self.0, &mut headers) };
        if found != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR || headers.is_null() {
            return;
        }
        // SAFETY: the record's headers, read by index below their count.
        let count = unsafe { rd::rd_kafka_header_cnt(headers) };
        for i in 0..count {
            let (mut name, mut value, mut size) = (std::ptr::null(), std::ptr::null(), 0usize);
            // SAFETY: as above; the name is a NUL-terminated string owned by the headers.
            let read = unsafe {
                rd::rd_kafka_header_get_all(headers, i, &mut name, &mut value, &mut size)
            };
            if read != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR || name.is_null() {
                continue;
            }
            let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy();
            let value = (!value.is_null())
                .then(|| unsafe { std::slice::from_raw_parts(value as *const u8, size) });
            f(&name, value);
        }
    }
}
