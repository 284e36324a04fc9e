//! `upsert-kafka`'s sink buffer, as Flink's `ReducingUpsertSink`: with
//! `sink.buffer-flush.max-rows` and `sink.buffer-flush.interval` both above zero, the
//! records of a key written since the last flush are reduced to the last one (an update then
//! a delete is the tombstone alone), and the buffer goes to the topic when it holds
//! `max-rows` keys, when `interval` has passed since its first record, at each checkpoint's
//! barrier and at the end. A key's order holds: one record per key per flush, flushes in
//! order.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::connector::ConnectorError;
use crate::types::option_value::parse_duration;

pub(super) struct UpsertBuffer {
    max_rows: usize,
    interval: Duration,
    /// When the first record since the last flush came.
    since: Option<Instant>,
    /// Each key's slot in `records`.
    slots: HashMap<Vec<u8>, usize>,
    /// Each key's last record (key, value; no value: a tombstone), keys in first-seen order.
    records: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl UpsertBuffer {
    /// The buffer the options ask for, if they ask for one.
    pub(super) fn of(
        max_rows: Option<&str>,
        interval: Option<&str>,
    ) -> Result<Option<UpsertBuffer>, ConnectorError> {
        let rows: u64 = match max_rows {
            None => 0,
            Some(v) => v.trim().parse().map_err(|_| {
                ConnectorError(format!(
                    "Invalid value for option 'sink.buffer-flush.max-rows': '{v}'"
                ))
            })?,
        };
        let interval = match interval {
            None => 0,
            Some(v) => parse_duration(v).filter(|n| *n >= 0).ok_or_else(|| {
                ConnectorError(format!(
                    "Invalid value for option 'sink.buffer-flush.interval': '{v}'"
                ))
            })?,
        };
        match (rows > 0, interval > 0) {
            (false, false) => Ok(None),
            (true, true) => Ok(Some(UpsertBuffer {
                max_rows: rows as usize,
                interval: Duration::from_nanos(interval as u64),
                since: None,
                slots: HashMap::new(),
                records: Vec::new(),
            })),
            _ => Err(ConnectorError(
                "'sink.buffer-flush.max-rows' and 'sink.buffer-flush.interval' must be set to be greater than zero together to enable sink buffer flushing."
                    .into(),
            )),
        }
    }

    /// Keeps `value` as `key`'s last record.
    pub(super) fn add(&mut self, key: &[u8], value: Option<&[u8]>) {
        self.since.get_or_insert_with(Instant::now);
        match self.slots.get(key) {
            Some(&slot) => self.records[slot].1 = value.map(<[u8]>::to_vec),
            None => {
                self.slots.insert(key.to_vec(), self.records.len());
                self.records.push((key.to_vec(), value.map(<[u8]>::to_vec)));
            }
        }
    }

    /// Whether the buffer is to be written now (full, or its interval has passed).
    pub(super) fn due(&self) -> bool {
        self.records.len() >= self.max_rows
            || self.since.is_some_and(|t| t.elapsed() >= self.interval)
    }

    /// The buffered records, each key's last, in the order the keys first came; empty after.
    pub(super) fn drain(&mut self) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
        self.since = None;
        self.slots.clear();
        std::mem::take(&mut self.records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_keeps_its_last_record_in_its_first_place() {
        let mut buffer = UpsertBuffer::of(Some("3"), Some("1 h")).unwrap().unwrap();
        buffer.add(b"a", Some(b"1"));
        buffer.add(b"b", Some(b"2"));
        buffer.add(b"a", None);
        assert!(!buffer.due());
        buffer.add(b"c", Some(b"3"));
        assert!(buffer.due());
        assert_eq!(
            buffer.drain(),
            vec![
                (b"a".to_vec(), None),
                (b"b".to_vec(), Some(b"2".to_vec())),
                (b"c".to_vec(), Some(b"3".to_vec()))
            ]
        );
        assert!(buffer.drain().is_empty() && !buffer.due());
        assert!(UpsertBuffer::of(None, None).unwrap().is_none());
        let one = UpsertBuffer::of(Some("10"), None).err().unwrap();
        assert!(one.0.contains("greater than zero together"), "{one}");
    }
}
