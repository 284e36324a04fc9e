//! Kafka records into rows of their table (docs/design/0009 §3), as Flink's
//! `DynamicKafkaDeserializationSchema` makes them:
//!
//! - the value's format decodes the value's columns (a changelog format may give two rows,
//!   `-U` and `+U`, for one record); the key's format, when there is one, the key's columns;
//!   a column in both (`value.fields-include` = `ALL`) takes the value's;
//! - a record without a value (a tombstone) is skipped, except by `upsert-kafka`, where it
//!   deletes its key: a `-D` row holding the key's columns only;
//! - a record whose value the format skipped (its ignore-parse-errors option) is no row; a
//!   key that does not parse, or a record without a key, leaves the key's columns NULL;
//! - the metadata columns read follow the physical ones: `topic`, `partition`, `offset`,
//!   `timestamp` (TIMESTAMP_LTZ(3)), `timestamp-type` (`CreateTime`, `LogAppendTime`,
//!   `NoTimestampType`), `headers` (MAP<STRING, BYTES>, a repeated key's last value),
//!   `leader-epoch` (INT, NULL when the broker gives none);
//! - rows with kinds (a changelog value format, or `upsert-kafka`) carry them in a last
//!   column, as the changelog formats' decoders do, for the scan's ChangelogKinds operator.
//!
//! A table whose records are only their values' rows (no key format, no metadata, not
//! upsert) takes the value format's batch as it is.

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, MapBuilder, MapFieldNames, StringBuilder};
use arrow_array::{
    Array, ArrayRef, Int8Array, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampNanosecondArray, new_null_array,
};
use rdkafka::message::Timestamp;

use super::fetch::RawRecord;

use crate::connector::format::changelog::ROW_KIND_COLUMN;
use crate::connector::format::csv::build_batch;
use crate::connector::format::new_decoder;
use crate::connector::format::raw::{RawDecoder, RawFormat};
use crate::connector::kafka::{Connector, KafkaTable, Part};
use crate::connector::{BatchLimit, ConnectorError, LineDecoder};
use crate::types::chunk::RowKind;
use crate::types::time::SessionZone;
use crate::types::{DataType, Field, MAX_LENGTH, Schema, TypeKind};

/// Text bytes of the records in one batch at most: a column's text never holds more than
/// its records' bytes, so no column comes near Arrow's `i32::MAX` offsets.
const BATCH_BYTES: usize = 64 << 20;

/// The metadata keys a kafka table reads, with their types.
pub fn metadata_keys() -> Vec<(&'static str, DataType)> {
    vec![
        ("topic", DataType::not_null(TypeKind::VarChar(MAX_LENGTH))),
        ("partition", DataType::not_null(TypeKind::Int)),
        (
            "headers",
            DataType::not_null(TypeKind::Map(
                Box::new(DataType::nullable(TypeKind::VarChar(MAX_LENGTH))),
                Box::new(DataType::nullable(TypeKind::VarBinary(MAX_LENGTH))),
            )),
        ),
        ("leader-epoch", DataType::nullable(TypeKind::Int)),
        ("offset", DataType::not_null(TypeKind::BigInt)),
        ("timestamp", DataType::not_null(TypeKind::TimestampLtz(3))),
        (
            "timestamp-type",
            DataType::not_null(TypeKind::VarChar(MAX_LENGTH)),
        ),
    ]
}

/// A record's key or value decoder.
enum PartDecoder {
    /// A text format: the record's bytes as one line.
    Text {
        decoder: Box<dyn LineDecoder>,
        /// JSON (plain or a changelog): line breaks in a value are white space.
        json: bool,
        /// Records queued as lines for one `decode` at the flush (`queue`), not yet checked
        /// as UTF-8, and their offsets, line by line.
        lines: Vec<u8>,
        offsets: Vec<i64>,
    },
    Raw(RawDecoder),
}

/// A record's value as one line for a text format (UTF-8, no line break; borrowed unless it
/// had to change). A JSON value may span lines (pretty-printed): outside its strings a line
/// break is white space, and inside them JSON forbids one, so each becomes a space. A CSV
/// record with a line break inside is refused rather than read as two rows.
pub(super) fn line_of(value: &[u8], json: bool) -> Result<Cow<'_, str>, String> {
    let text = std::str::from_utf8(value)
        .map_err(|e| format!("the value is not UTF-8 (at byte {})", e.valid_up_to()))?;
    let text = text.trim_end_matches(['\n', '\r']);
    if !text.contains(['\n', '\r']) {
        Ok(Cow::Borrowed(text))
    } else if json {
        Ok(Cow::Owned(text.replace(['\n', '\r'], " ")))
    } else {
        Err("a csv record holding a line break is not supported yet".into())
    }
}

impl PartDecoder {
    /// The decoder of `part`; every column nullable when the rows are put together here
    /// (NOT NULL is checked on the whole row).
    fn new(part: &Part, nullable: bool, zone: &SessionZone) -> Result<Self, ConnectorError> {
        let schema = if nullable {
            Schema::new(
                part.schema
                    .fields
                    .iter()
                    .map(|f| Field::new(&f.name, f.data_type.with_nullable(true)))
                    .collect(),
            )
        } else {
            part.schema.clone()
        };
        Ok(match part.format_name() {
            "raw" => PartDecoder::Raw(
                RawFormat::from_options(&part.format, &schema)
                    .map_err(ConnectorError)?
                    .decoder(),
            ),
            name => PartDecoder::Text {
                decoder: new_decoder(&part.format, &schema, zone)?,
                json: name != "csv",
                lines: Vec::new(),
                offsets: Vec::new(),
            },
        })
    }

    /// Decodes one record's bytes: how many rows they gave (none when the format skipped a
    /// malformed record). Errors name the offset as the format names a line.
    fn push(&mut self, offset: i64, bytes: &[u8]) -> Result<usize, String> {
        match self {
            PartDecoder::Raw(decoder) => {
                decoder
                    .push(Some(bytes))
                    .map_err(|e| format!("line {offset}: {e}"))?;
                Ok(1)
            }
            PartDecoder::Text { decoder, json, .. } => {
                let line = line_of(bytes, *json).map_err(|e| format!("line {offset}: {e}"))?;
                let before = decoder.buffered_rows();
                // Not `started`: the decoder never stops before the record (the batch's
                // byte bound keeps its columns far from their limit).
                let limit = BatchLimit {
                    lines: 1,
                    bytes: i32::MAX as usize,
                    started: false,
                };
                decoder.decode(&line, offset as u64, limit)?;
                Ok(decoder.buffered_rows() - before)
            }
        }
    }

    /// Queues one record's bytes, decoded with the others at the flush: one call into the
    /// format for the batch, where `push` makes one per record. For a part whose rows are
    /// not matched to records one by one (the value of a table that is only its values).
    fn queue(&mut self, offset: i64, bytes: &[u8]) -> Result<(), String> {
        match self {
            PartDecoder::Raw(decoder) => decoder
                .push(Some(bytes))
                .map_err(|e| format!("line {offset}: {e}")),
            PartDecoder::Text {
                json,
                lines,
                offsets,
                ..
            } => {
                let mut end = bytes.len();
                while end > 0 && matches!(bytes[end - 1], b'\n' | b'\r') {
                    end -= 1;
                }
                let bytes = &bytes[..end];
                if memchr::memchr2(b'\n', b'\r', bytes).is_none() {
                    // The common case: the bytes as they are, checked as UTF-8 with the
                    // batch's others at the flush.
                    lines.extend_from_slice(bytes);
                } else {
                    let line = line_of(bytes, *json).map_err(|e| format!("line {offset}: {e}"))?;
                    lines.extend_from_slice(line.as_bytes());
                }
                lines.push(b'\n');
                offsets.push(offset);
                Ok(())
            }
        }
    }

    fn flush(&mut self) -> Result<RecordBatch, String> {
        match self {
            PartDecoder::Text {
                decoder,
                lines,
                offsets,
                ..
            } if !offsets.is_empty() => {
                // Line numbers are the lines' indices, named by their records' offsets.
                let limit = BatchLimit {
                    lines: offsets.len(),
                    bytes: i32::MAX as usize,
                    started: false,
                };
                let text = match std::str::from_utf8(lines) {
                    Ok(text) => text,
                    Err(e) => {
                        let line = memchr::memchr_iter(b'\n', &lines[..e.valid_up_to()]).count();
                        let start = lines[..e.valid_up_to()]
                            .iter()
                            .rposition(|&b| b == b'\n')
                            .map_or(0, |p| p + 1);
                        let message = format!(
                            "line {}: the value is not UTF-8 (at byte {})",
                            offsets[line],
                            e.valid_up_to() - start
                        );
                        lines.clear();
                        offsets.clear();
                        return Err(message);
                    }
                };
                // The format names a row by its line's index: name its record's offset.
                let named = |e: String| {
                    e.strip_prefix("line ")
                        .and_then(|rest| {
                            let digits = rest.len()
                                - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                            let index: usize = rest[..digits].parse().ok()?;
                            Some(format!("line {}{}", offsets.get(index)?, &rest[digits..]))
                        })
                        .unwrap_or(e)
                };
                let decoded = decoder.decode(text, 0, limit).map_err(named);
                let batch = match decoded {
                    Ok(d) if d.lines == offsets.len() => decoder.flush().map_err(named),
                    Ok(_) => Err("a batch of records too large to decode".into()),
                    Err(e) => Err(e),
                };
                lines.clear();
                offsets.clear();
                batch
            }
            PartDecoder::Raw(decoder) => {
                let column = decoder.finish();
                let rows = column.len();
                let schema = arrow_schema::Schema::new(vec![arrow_schema::Field::new(
                    "raw",
                    column.data_type().clone(),
                    true,
                )]);
                crate::types::chunk::batch_with_rows(Arc::new(schema), vec![column], rows)
                    .map_err(|e| e.to_string())
            }
            PartDecoder::Text { decoder, .. } => decoder.flush(),
        }
    }

    fn rows_skipped(&self) -> u64 {
        match self {
            PartDecoder::Raw(_) => 0,
            PartDecoder::Text { decoder, .. } => decoder.rows_skipped(),
        }
    }
}

/// A metadata column.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Meta {
    Topic,
    Partition,
    Headers,
    LeaderEpoch,
    Offset,
    Timestamp,
    TimestampType,
}

/// The rows of one batch, being built from records.
pub(super) struct Records {
    value: PartDecoder,
    key: Option<PartDecoder>,
    /// The value's rows are the table's as they are (no key, no metadata, not upsert).
    direct: bool,
    upsert: bool,
    /// The value format is a changelog format: its batch ends with the kinds' column.
    changelog: bool,
    /// Per physical column: its position in the key's columns and in the value's.
    sources: Vec<(Option<usize>, Option<usize>)>,
    /// The batch's schema: physical columns, metadata, then the kinds when there are.
    schema: Schema,
    ignore_errors: bool,
    metadata: Vec<Meta>,
    topic: String,
    partition: i32,
    /// Per row: the key's row and the value's (`None`: NULL columns).
    key_rows: Vec<Option<u32>>,
    value_rows: Vec<Option<u32>>,
    offsets: Vec<u64>,
    timestamps: Vec<i64>,
    timestamp_types: Vec<&'static str>,
    epochs: Vec<Option<i32>>,
    headers: Option<MapBuilder<StringBuilder, BinaryBuilder>>,
    /// Upsert rows' kinds.
    kinds: Vec<RowKind>,
    key_count: u32,
    value_count: u32,
    /// Records taken into the batch (decoded or skipped) and their bytes.
    pub(super) records: usize,
    bytes: usize,
}

impl Records {
    pub(super) fn new(
        table: &KafkaTable,
        physical: &Schema,
        metadata: &[String],
        topic: &str,
        partition: i32,
        zone: &SessionZone,
    ) -> Result<Records, ConnectorError> {
        let upsert = table.connector == Connector::Upsert;
        let direct = table.key.is_none() && metadata.is_empty() && !upsert;
        let changelog = crate::connector::format::is_changelog_format(&table.value.format);
        let known = metadata_keys();
        let metadata = metadata
            .iter()
            .map(|key| match key.as_str() {
                "topic" => Ok(Meta::Topic),
                "partition" => Ok(Meta::Partition),
                "headers" => Ok(Meta::Headers),
                "leader-epoch" => Ok(Meta::LeaderEpoch),
                "offset" => Ok(Meta::Offset),
                "timestamp" => Ok(Meta::Timestamp),
                "timestamp-type" => Ok(Meta::TimestampType),
                other => Err(ConnectorError(format!(
                    "the kafka connector has no metadata key '{other}'"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let sources = (0..physical.len())
            .map(|i| {
                let key = table
                    .key
                    .as_ref()
                    .and_then(|k| k.columns.iter().position(|&c| c == i));
                (key, table.value.columns.iter().position(|&c| c == i))
            })
            .collect();
        let mut fields = physical.fields.clone();
        for key in metadata_names(&metadata) {
            let (name, ty) = known.iter().find(|(k, _)| *k == key).cloned().unwrap();
            fields.push(Field::new(name, ty));
        }
        if changelog || upsert {
            fields.push(Field::new(
                ROW_KIND_COLUMN,
                DataType::not_null(TypeKind::TinyInt),
            ));
        }
        let ignore_errors = table
            .value
            .format
            .iter()
            .any(|(k, v)| k.ends_with(".ignore-parse-errors") && v.trim() == "true");
        Ok(Records {
            value: PartDecoder::new(&table.value, !direct, zone)?,
            key: table
                .key
                .as_ref()
                .map(|k| PartDecoder::new(k, true, zone))
                .transpose()?,
            direct,
            upsert,
            changelog,
            sources,
            schema: Schema::new(fields),
            ignore_errors,
            headers: metadata.contains(&Meta::Headers).then(|| {
                MapBuilder::new(
                    Some(MapFieldNames {
                        entry: "entries".into(),
                        key: "key".into(),
                        value: "value".into(),
                    }),
                    StringBuilder::new(),
                    BinaryBuilder::new(),
                )
            }),
            metadata,
            topic: topic.to_string(),
            partition,
            key_rows: Vec::new(),
            value_rows: Vec::new(),
            offsets: Vec::new(),
            timestamps: Vec::new(),
            timestamp_types: Vec::new(),
            epochs: Vec::new(),
            kinds: Vec::new(),
            key_count: 0,
            value_count: 0,
            records: 0,
            bytes: 0,
        })
    }

    /// Takes one record into the batch; false when the batch is full (the record is not
    /// taken). Errors name the record's offset as a format names a line.
    pub(super) fn push(
        &mut self,
        message: &RawRecord,
        leader_epoch: Option<i32>,
    ) -> Result<bool, String> {
        let size = message.payload().map_or(0, <[u8]>::len) + message.key().map_or(0, <[u8]>::len);
        if self.records > 0 && self.bytes + size > BATCH_BYTES {
            return Ok(false);
        }
        self.records += 1;
        self.bytes += size;
        let offset = message.offset();
        if self.direct {
            if let Some(value) = message.payload() {
                self.value.queue(offset, value)?;
            }
            return Ok(true);
        }
        let value_rows = match message.payload() {
            Some(value) => {
                let n = self.value.push(offset, value)?;
                if n == 0 {
                    return Ok(true);
                }
                let first = self.value_count;
                self.value_count += n as u32;
                Some(first..first + n as u32)
            }
            // A tombstone deletes its key in an upsert table and is nothing otherwise.
            None if self.upsert => None,
            None => return Ok(true),
        };
        let key_row = match (&mut self.key, message.key()) {
            (Some(key), Some(bytes)) => {
                let n = key.push(offset, bytes)?;
                (n > 0).then(|| {
                    self.key_count += 1;
                    self.key_count - 1
                })
            }
            _ => None,
        };
        let (millis, timestamp_type) = match message.timestamp() {
            Timestamp::CreateTime(t) => (t, "CreateTime"),
            Timestamp::LogAppendTime(t) => (t, "LogAppendTime"),
            Timestamp::NotAvailable => (-1, "NoTimestampType"),
        };
        let rows: Vec<Option<u32>> = match value_rows {
            Some(range) => range.map(Some).collect(),
            None => vec![None],
        };
        for value_row in rows {
            self.key_rows.push(key_row);
            self.value_rows.push(value_row);
            self.offsets.push(offset as u64);
            if self.upsert {
                self.kinds.push(if value_row.is_some() {
                    RowKind::Insert
                } else {
                    RowKind::Delete
                });
            }
            if !self.metadata.is_empty() {
                self.timestamps.push(millis);
                self.timestamp_types.push(timestamp_type);
                self.epochs.push(leader_epoch);
                if let Some(builder) = &mut self.headers {
                    let mut all: Vec<(String, Option<Vec<u8>>)> = Vec::new();
                    message.for_each_header(&mut |key, value| {
                        all.push((key.to_string(), value.map(<[u8]>::to_vec)))
                    });
                    // A repeated key keeps its last value, as Flink's map.
                    for (i, (key, value)) in all.iter().enumerate() {
                        if all[i + 1..].iter().any(|(k, _)| k == key) {
                            continue;
                        }
                        builder.keys().append_value(key);
                        builder.values().append_option(value.as_deref());
                    }
                    builder
                        .append(true)
                        .map_err(|e| format!("line {offset}: {e}"))?;
                }
            }
        }
        Ok(true)
    }

    /// The batch of the records taken since the last flush.
    pub(super) fn flush(&mut self) -> Result<RecordBatch, String> {
        self.records = 0;
        self.bytes = 0;
        let value = self.value.flush()?;
        if self.direct {
            return Ok(value);
        }
        let key = match &mut self.key {
            Some(k) => Some(k.flush()?),
            None => None,
        };
        let key_rows = std::mem::take(&mut self.key_rows);
        let value_rows = std::mem::take(&mut self.value_rows);
        let offsets = std::mem::take(&mut self.offsets);
        let rows = offsets.len();
        self.key_count = 0;
        self.value_count = 0;
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.schema.len());
        for (i, &(in_key, in_value)) in self.sources.iter().enumerate() {
            let ty = self.schema.fields[i].data_type.to_arrow();
            let from_key = in_key.zip(key.as_ref()).map(|(p, k)| k.column(p));
            let from_value = in_value.map(|p| value.column(p));
            columns.push(gather(&ty, from_key, &key_rows, from_value, &value_rows)?);
        }
        let timestamps = std::mem::take(&mut self.timestamps);
        let timestamp_types = std::mem::take(&mut self.timestamp_types);
        let epochs = std::mem::take(&mut self.epochs);
        for meta in &self.metadata {
            columns.push(match meta {
                Meta::Topic => Arc::new(StringArray::from(vec![self.topic.as_str(); rows])),
                Meta::Partition => Arc::new(Int32Array::from(vec![self.partition; rows])),
                Meta::Offset => Arc::new(Int64Array::from_iter_values(
                    offsets.iter().map(|&o| o as i64),
                )),
                Meta::Timestamp => Arc::new(
                    TimestampNanosecondArray::from_iter_values(
                        timestamps.iter().map(|&ms| ms.saturating_mul(1_000_000)),
                    )
                    .with_timezone("UTC"),
                ),
                Meta::TimestampType => Arc::new(StringArray::from(timestamp_types.clone())),
                Meta::LeaderEpoch => Arc::new(Int32Array::from(epochs.clone())),
                Meta::Headers => Arc::new(
                    self.headers
                        .as_mut()
                        .expect("a headers column has its builder")
                        .finish(),
                ),
            });
        }
        if self.upsert {
            let kinds = std::mem::take(&mut self.kinds);
            columns.push(Arc::new(Int8Array::from_iter_values(
                kinds.iter().map(|k| k.to_byte() as i8),
            )));
        } else if self.changelog {
            let kinds = value.column(value.num_columns() - 1);
            columns.push(gather(
                kinds.data_type(),
                None,
                &key_rows,
                Some(kinds),
                &value_rows,
            )?);
        }
        // NOT NULL columns: a row with a NULL there fails, or is dropped when the value
        // format ignores parse errors (as a format's own batch does).
        build_batch(&self.schema, columns, &offsets, self.ignore_errors)
            .map(|(batch, _)| batch)
            .map_err(|e| e.to_string())
    }

    pub(super) fn rows_skipped(&self) -> u64 {
        self.value.rows_skipped() + self.key.as_ref().map_or(0, PartDecoder::rows_skipped)
    }
}

/// The metadata keys in the order their columns come.
fn metadata_names(metadata: &[Meta]) -> impl Iterator<Item = &'static str> + '_ {
    metadata.iter().map(|m| match m {
        Meta::Topic => "topic",
        Meta::Partition => "partition",
        Meta::Headers => "headers",
        Meta::LeaderEpoch => "leader-epoch",
        Meta::Offset => "offset",
        Meta::Timestamp => "timestamp",
        Meta::TimestampType => "timestamp-type",
    })
}

/// A column of the rows: each row's value from the value's row when it has one, else from
/// the key's, else NULL.
fn gather(
    ty: &arrow_schema::DataType,
    from_key: Option<&ArrayRef>,
    key_rows: &[Option<u32>],
    from_value: Option<&ArrayRef>,
    value_rows: &[Option<u32>],
) -> Result<ArrayRef, String> {
    // Every row its value's, in order: the value's column itself.
    if let Some(values) = from_value
        && values.len() == value_rows.len()
        && value_rows
            .iter()
            .enumerate()
            .all(|(i, r)| *r == Some(i as u32))
    {
        return Ok(values.clone());
    }
    let null = new_null_array(ty, 1);
    let sources: Vec<&dyn Array> = vec![
        from_key.map_or(null.as_ref(), |a| a.as_ref()),
        from_value.map_or(null.as_ref(), |a| a.as_ref()),
        null.as_ref(),
    ];
    let indices: Vec<(usize, usize)> = key_rows
        .iter()
        .zip(value_rows)
        .map(|(k, v)| match (from_value.and(*v), from_key.and(*k)) {
            (Some(v), _) => (1, v as usize),
            (None, Some(k)) => (0, k as usize),
            (None, None) => (2, 0),
        })
        .collect();
    arrow_select::interleave::interleave(&sources, &indices).map_err(|e| e.to_string())
}
