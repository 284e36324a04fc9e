//! What the `kafka` and `upsert-kafka` connectors share (docs/design/0009): a table's options
//! checked once for its source and its sink, and how its physical columns divide between a
//! record's key and its value, by Flink's rules:
//!
//! - `kafka`: `format` or `value.format` for the value; `key.format` with `key.fields` (a
//!   `;`-list of physical columns) for the key, or no key at all.
//! - `upsert-kafka`: `key.format` and `value.format` both required; the key is the PRIMARY
//!   KEY's columns, which the table must have.
//! - `key.fields-prefix`: the key columns' names carry it in the table and lose it in the key
//!   format; it needs `value.fields-include` = `EXCEPT_KEY`.
//! - `value.fields-include`: `ALL` (default) puts every physical column in the value too;
//!   `EXCEPT_KEY` leaves the key's columns out of it.
//! - A format's own options are `key.<format>.*` for the key and `value.<format>.*` (or
//!   `<format>.*` beside `format`) for the value. A key format must be insert-only.

use std::time::Duration;

use crate::catalog::TableDef;
use crate::connector::ConnectorError;
use crate::connector::format::changelog::Flavor;
use crate::types::{Field, Schema};

/// Which of the two connectors a table names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    Kafka,
    Upsert,
}

impl Connector {
    pub fn name(self) -> &'static str {
        match self {
            Connector::Kafka => "kafka",
            Connector::Upsert => "upsert-kafka",
        }
    }
}

/// The key or the value of a record: its format and the table's columns it holds.
#[derive(Debug, Clone)]
pub struct Part {
    /// The format's options, `format` (its name) first, as `new_decoder`/`new_encoder` take
    /// them.
    pub format: Vec<(String, String)>,
    /// Indices of the table's physical columns the part holds, in the part's order.
    pub columns: Vec<usize>,
    /// Those columns as the format sees them (a key prefix taken off their names).
    pub schema: Schema,
}

impl Part {
    pub fn format_name(&self) -> &str {
        &self.format[0].1
    }
}

/// A `kafka` or `upsert-kafka` table's options, checked.
#[derive(Debug, Clone)]
pub struct KafkaTable {
    pub connector: Connector,
    pub topics: Vec<String>,
    /// `topic-pattern`: the topics whose whole names it matches, when the job starts.
    pub pattern: Option<fancy_regex::Regex>,
    /// `properties.*`, without the prefix: the client's configuration.
    pub properties: Vec<(String, String)>,
    pub key: Option<Part>,
    pub value: Part,
}

pub fn error(message: impl Into<String>) -> ConnectorError {
    ConnectorError(message.into())
}

/// `properties.*` that are Flink's, not the Kafka client's.
const FLINK_PROPERTIES: &[&str] = &[
    "commit.offsets.on.checkpoint",
    "partition.discovery.interval.ms",
    "client.id.prefix",
    "register.consumer.metrics",
    "key.deserializer",
    "value.deserializer",
    "key.serializer",
    "value.serializer",
];

/// Options either connector's source or sink reads (besides `properties.*`, the formats' own
/// and `scan.watermark.*`): a table read and written takes both.
const KAFKA_OPTIONS: &[&str] = &[
    "connector",
    "topic",
    "topic-pattern",
    "format",
    "key.format",
    "key.fields",
    "key.fields-prefix",
    "value.format",
    "value.fields-include",
    "scan.startup.mode",
    "scan.startup.timestamp-millis",
    "scan.startup.specific-offsets",
    "scan.bounded.mode",
    "scan.bounded.timestamp-millis",
    "scan.bounded.specific-offsets",
    "scan.topic-partition-discovery.interval",
    "sink.partitioner",
    "sink.parallelism",
    "sink.delivery-guarantee",
    "sink.transactional-id-prefix",
];

const UPSERT_OPTIONS: &[&str] = &[
    "connector",
    "topic",
    "key.format",
    "key.fields-prefix",
    "value.format",
    "value.fields-include",
    "scan.bounded.mode",
    "scan.bounded.timestamp-millis",
    "scan.bounded.specific-offsets",
    "sink.parallelism",
    "sink.buffer-flush.max-rows",
    "sink.buffer-flush.interval",
    "sink.delivery-guarantee",
    "sink.transactional-id-prefix",
];

impl KafkaTable {
    pub fn parse(table: &TableDef) -> Result<Self, ConnectorError> {
        let connector = match table.option("connector").map(str::trim) {
            Some("upsert-kafka") => Connector::Upsert,
            _ => Connector::Kafka,
        };
        let name = connector.name();
        let options = &table.options;
        let get = |k: &str| {
            options
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.trim())
        };
        let value_format = match connector {
            Connector::Kafka => get("value.format").or_else(|| get("format")),
            Connector::Upsert => get("value.format"),
        }
        .ok_or_else(|| {
            error(format!(
                "Could not find required scan format 'value.format' for connector '{name}'."
            ))
        })?
        .to_string();
        let key_format = get("key.format").map(str::to_string);
        if connector == Connector::Upsert && key_format.is_none() {
            return Err(error(
                "Could not find required scan format 'key.format' for connector 'upsert-kafka'.",
            ));
        }
        let known = match connector {
            Connector::Kafka => KAFKA_OPTIONS,
            Connector::Upsert => UPSERT_OPTIONS,
        };
        // Each part's own format options.
        let mut value_options = vec![("format".to_string(), value_format.clone())];
        let mut key_options = key_format
            .iter()
            .map(|f| ("format".to_string(), f.clone()))
            .collect::<Vec<_>>();
        let mut unsupported = Vec::new();
        for (key, value) in options {
            if let Some(k) = &key_format
                && let Some(own) = key.strip_prefix("key.")
                && own.starts_with(&format!("{k}."))
            {
                key_options.push((own.to_string(), value.clone()));
                continue;
            }
            let own = match key.strip_prefix("value.") {
                Some(own) => Some(own),
                None if connector == Connector::Kafka && get("format").is_some() => {
                    Some(key.as_str())
                }
                None => None,
            };
            if let Some(own) = own.filter(|o| o.starts_with(&format!("{value_format}."))) {
                value_options.push((own.to_string(), value.clone()));
            } else if !(known.contains(&key.as_str())
                || key.starts_with("properties.")
                || key.starts_with("scan.watermark."))
            {
                unsupported.push(key.as_str());
            }
        }
        if get("scan.topic-partition-discovery.interval")
            .is_some_and(|v| !matches!(v, "0" | "0 ms" | "0ms" | "0 s"))
        {
            return Err(error(
                "'scan.topic-partition-discovery.interval' is not supported yet: a job reads the partitions there are when it starts (set it to '0' to say so)",
            ));
        }
        if !unsupported.is_empty() {
            unsupported.sort_unstable();
            return Err(error(format!(
                "Unsupported options found for '{name}'.\n\nUnsupported options:\n\n{}",
                unsupported.join("\n")
            )));
        }
        let pattern = get("topic-pattern").map(str::to_string);
        let topics: Vec<String> = match (get("topic"), &pattern) {
            (Some(_), Some(_)) => {
                return Err(error(
                    "Option 'topic' and 'topic-pattern' shouldn't be set together.",
                ));
            }
            (None, None) => {
                return Err(match connector {
                    Connector::Kafka => error(
                        "Either 'topic' or 'topic-pattern' must be set for connector 'kafka'.",
                    ),
                    Connector::Upsert => {
                        error("Missing required option 'topic' for connector 'upsert-kafka'.")
                    }
                });
            }
            (Some(list), None) => list
                .split(';')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(String::from)
                .collect(),
            (None, Some(_)) => Vec::new(),
        };
        let pattern = pattern
            .map(|p| {
                // Java's `Pattern.matches`: the whole name.
                fancy_regex::Regex::new(&format!("^(?:{p})$")).map_err(|e| {
                    error(format!(
                        "Invalid value for option 'topic-pattern': '{p}': {e}"
                    ))
                })
            })
            .transpose()?;
        let properties: Vec<(String, String)> = options
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("properties.")?.to_string(), v.clone())))
            .collect();
        if !properties.iter().any(|(k, _)| k == "bootstrap.servers") {
            return Err(error(format!(
                "Missing required option 'properties.bootstrap.servers' for connector '{name}'."
            )));
        }
        let physical = table.physical_schema();
        let (key_columns, prefix) = key_columns(table, connector, &physical, key_format.is_some())?;
        let except_key = match get("value.fields-include").unwrap_or("ALL") {
            v if v.eq_ignore_ascii_case("ALL") => false,
            v if v.eq_ignore_ascii_case("EXCEPT_KEY") => true,
            other => {
                return Err(error(format!(
                    "Invalid value for option 'value.fields-include': '{other}' (ALL, EXCEPT_KEY)"
                )));
            }
        };
        if !prefix.is_empty() && !except_key {
            return Err(error(
                "A key prefix is not allowed when option 'value.fields-include' is set to 'ALL'. Set it to 'EXCEPT_KEY' instead to avoid field overlaps.",
            ));
        }
        let key = match key_format {
            Some(format) => {
                if Flavor::of_format(&format).is_some() {
                    return Err(error(format!(
                        "A key format should only deal with INSERT-only records. But {format} has a changelog mode of [INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE]."
                    )));
                }
                let fields = key_columns
                    .iter()
                    .map(|&i| {
                        let f = &physical.fields[i];
                        Field::new(
                            f.name.strip_prefix(prefix.as_str()).unwrap_or(&f.name),
                            f.data_type.clone(),
                        )
                    })
                    .collect();
                Some(Part {
                    format: key_options,
                    columns: key_columns.clone(),
                    schema: Schema::new(fields),
                })
            }
            None => None,
        };
        if connector == Connector::Upsert && Flavor::of_format(&value_format).is_some() {
            return Err(error(format!(
                "'upsert-kafka' connector doesn't support '{value_format}' as value format, because '{value_format}' is not in insert-only mode."
            )));
        }
        let value_columns: Vec<usize> = (0..physical.len())
            .filter(|i| !except_key || !key_columns.contains(i))
            .collect();
        let value = Part {
            format: value_options,
            schema: Schema::new(
                value_columns
                    .iter()
                    .map(|&i| physical.fields[i].clone())
                    .collect(),
            ),
            columns: value_columns,
        };
        Ok(KafkaTable {
            connector,
            topics,
            pattern,
            properties,
            key,
            value,
        })
    }

    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The properties the client (librdkafka) is given: all but Flink's own source options
    /// and the Java (de)serializers, which Flink sets itself.
    pub fn client_properties(&self) -> impl Iterator<Item = (&str, &str)> {
        self.properties
            .iter()
            .filter(|(k, _)| !FLINK_PROPERTIES.contains(&k.as_str()))
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether a source commits its positions to the group when a checkpoint completes:
    /// with a `group.id`, unless `properties.commit.offsets.on.checkpoint` is false.
    pub fn commits_offsets(&self) -> bool {
        self.property("group.id").is_some()
            && !self
                .property("commit.offsets.on.checkpoint")
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("false"))
    }

    pub fn bootstrap_servers(&self) -> &str {
        self.property("bootstrap.servers").unwrap_or_default()
    }

    /// How long a request to the brokers may take (`properties.request.timeout.ms`, 30 s).
    pub fn timeout(&self) -> Duration {
        self.property("request.timeout.ms")
            .and_then(|v| v.trim().parse().ok())
            .map_or(Duration::from_secs(30), Duration::from_millis)
    }
}

/// The physical columns the key holds and the prefix their names carry.
fn key_columns(
    table: &TableDef,
    connector: Connector,
    physical: &Schema,
    key_format: bool,
) -> Result<(Vec<usize>, String), ConnectorError> {
    let prefix = table
        .option("key.fields-prefix")
        .unwrap_or_default()
        .to_string();
    let names: Vec<String> = match connector {
        Connector::Upsert => table.primary_key.clone().ok_or_else(|| {
            error(
                "'upsert-kafka' tables require to define a PRIMARY KEY constraint. The PRIMARY KEY specifies which columns should be read from or write to the Kafka message key. The PRIMARY KEY also defines records in the 'upsert-kafka' table should update or delete on which keys.",
            )
        })?,
        Connector::Kafka => {
            let fields = table.option("key.fields").map(str::trim);
            match (fields, key_format) {
                (None, false) => return Ok((Vec::new(), prefix)),
                (Some(_), false) => {
                    return Err(error(
                        "The option 'key.fields' can only be declared if a key format is defined using 'key.format'.",
                    ));
                }
                (None, true) => {
                    return Err(error(
                        "A key format 'key.format' requires the declaration of one or more of key fields using 'key.fields'.",
                    ));
                }
                (Some(list), true) => list
                    .split(';')
                    .map(str::trim)
                    .filter(|f| !f.is_empty())
                    .map(String::from)
                    .collect(),
            }
        }
    };
    let mut columns = Vec::new();
    for name in &names {
        if !name.starts_with(prefix.as_str()) {
            return Err(error(format!(
                "All fields in 'key.fields' must be prefixed with '{prefix}' when option 'key.fields-prefix' is set but field '{name}' is not prefixed."
            )));
        }
        let index = physical.index_of(name).ok_or_else(|| {
            error(format!(
                "Could not find the field '{name}' in the table schema for usage in the key format. A key field must be a regular, physical column. The following columns can be selected in the 'key.fields' option:\n[{}]",
                physical
                    .fields
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        columns.push(index);
    }
    Ok((columns, prefix))
}
