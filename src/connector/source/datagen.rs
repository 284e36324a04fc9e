//! The `datagen` source, with Flink's options: `rows-per-second` (default 10000),
//! `number-of-rows` (unbounded when absent), and per field `fields.<f>.kind`
//! (`random` | `sequence`), `min`, `max`, `length`, `var-len`, `max-past`, `start`, `end`,
//! `null-rate`. A sequence field bounds the source: it ends when the sequence is exhausted.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::builder::*;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;

use crate::catalog::TableDef;
use crate::clock::Clock;
use crate::connector::ConnectorError;
use crate::connector::registry::{ScanRequest, SourceFactory};
use crate::connector::source::split::SourceSplit;
use crate::connector::source::split::{Pipeline, position_words, words_position};
use crate::exec::error::ExecError;
use crate::function::EvalContext;
use crate::types::chunk::batch_with_rows;
use crate::types::java_text::group_thousands;
use crate::types::option_value::parse_duration;
use crate::types::{DataType, NANOS_PER_DAY, Schema, TypeKind};

/// Rows per batch when the rate allows it.
const BATCH_ROWS: usize = 8192;

#[derive(Debug, Clone)]
enum FieldGen {
    Random {
        min: f64,
        max: f64,
        length: usize,
        /// `var-len`: strings of a random length from 1 to `length`.
        var_len: bool,
        /// `max-past` in nanoseconds: date-times up to this long before now.
        max_past: i64,
        null_rate: f64,
    },
    /// Values `start`, `start + 1`, … in wrapping long arithmetic, each then narrowed to the
    /// column's type as Java narrows (`(byte) 130` is -126).
    Sequence { start: i64 },
}

pub struct DatagenSplit {
    schema: SchemaRef,
    types: Vec<DataType>,
    gens: Vec<FieldGen>,
    rows_per_second: Option<u64>,
    remaining: Option<u64>,
    produced: u64,
    /// Rows produced before this run started (a restored position): the rate paces the rest.
    resumed_at: u64,
    started: Option<Instant>,
    rng: u64,
    clock: Arc<dyn Clock>,
}

/// The longest string or byte string datagen makes (1 MiB): longer ones only exhaust memory.
const MAX_LENGTH_OPTION: i64 = 1 << 20;

fn parse_num<T: std::str::FromStr>(key: &str, value: &str) -> Result<T, ConnectorError> {
    value
        .trim()
        .parse()
        .map_err(|_| ConnectorError(format!("Could not parse value '{value}' for key '{key}'.")))
}

/// The options a column may have, by its generator kind and type (Flink's datagen factory).
fn field_options(kind: &str, ty: &TypeKind) -> &'static [&'static str] {
    match (kind, ty) {
        ("sequence", _) => &["end", "kind", "start"],
        (_, k) if k.is_string() || k.is_binary() => &["kind", "length", "null-rate", "var-len"],
        (_, TypeKind::Boolean) => &["kind", "null-rate"],
        (
            _,
            TypeKind::Date | TypeKind::Time(_) | TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_),
        ) => &["kind", "max-past", "null-rate"],
        _ => &["kind", "max", "min", "null-rate"],
    }
}

/// Flink's message for options the connector does not take, listing those it does.
fn unsupported_options(
    unsupported: &[&str],
    schema: &Schema,
    get: impl Fn(&str) -> Option<String>,
) -> ConnectorError {
    let mut supported: Vec<String> = [
        "connector",
        "number-of-rows",
        "rows-per-second",
        "scan.parallelism",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for field in &schema.fields {
        let kind = get(&format!("fields.{}.kind", field.name)).unwrap_or_else(|| "random".into());
        for o in field_options(&kind, &field.data_type.kind) {
            supported.push(format!("fields.{}.{o}", field.name));
        }
    }
    crate::connector::unsupported_options("datagen", unsupported.to_vec(), &supported)
}

impl DatagenSplit {
    pub fn new(
        schema: &Schema,
        options: &[(String, String)],
        clock: Arc<dyn Clock>,
    ) -> Result<Self, ConnectorError> {
        let get = |k: &str| {
            options
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        let mut unknown = Vec::new();
        for (key, _) in options {
            let known = matches!(
                key.as_str(),
                "connector" | "rows-per-second" | "number-of-rows" | "scan.parallelism"
            ) || key.strip_prefix("fields.").is_some_and(|rest| {
                rest.rsplit_once('.').is_some_and(|(field, opt)| {
                    schema
                        .fields
                        .iter()
                        .find(|f| f.name == field)
                        .is_some_and(|f| {
                            let kind = get(&format!("fields.{field}.kind")).unwrap_or("random");
                            field_options(kind, &f.data_type.kind).contains(&opt)
                        })
                })
            });
            if !known {
                unknown.push(key.as_str());
            }
        }
        // Flink checks the sequence fields' bounds before it reports unknown options.
        for field in &schema.fields {
            if get(&format!("fields.{}.kind", field.name)) == Some("sequence") {
                for bound in ["start", "end"] {
                    let key = format!("fields.{}.{bound}", field.name);
                    if get(&key).is_none() {
                        return Err(ConnectorError(format!(
                            "Could not find required property '{key}' for sequence generator."
                        )));
                    }
                }
            }
        }
        if !unknown.is_empty() {
            return Err(unsupported_options(&unknown, schema, |k| {
                get(k).map(str::to_string)
            }));
        }
        let rows_per_second = match get("rows-per-second") {
            Some(v) => match parse_num::<i64>("rows-per-second", v)? {
                // Flink waits forever here; saying so is kinder.
                r if r <= 0 => {
                    return Err(ConnectorError(format!(
                        "option 'rows-per-second' must be positive, got {r} (Flink would never emit a row)"
                    )));
                }
                r => Some(r as u64),
            },
            None => Some(10_000),
        };
        let mut remaining = get("number-of-rows")
            .map(|v| parse_num::<i64>("number-of-rows", v).map(|n| n.max(0) as u64))
            .transpose()?;
        let mut gens = Vec::new();
        for field in &schema.fields {
            let opt = |o: &str| get(&format!("fields.{}.{o}", field.name));
            let key = |o: &str| format!("fields.{}.{o}", field.name);
            let kind = opt("kind").unwrap_or("random");
            let generator = match kind {
                "sequence" => {
                    let ty = &field.data_type.kind;
                    let start = parse_bound(ty, &key("start"), opt("start").unwrap_or(""))?;
                    let end = parse_bound(ty, &key("end"), opt("end").unwrap_or(""))?;
                    // Flink counts |end - start + 1| values up from start, even when end is
                    // below start, in wrapping long arithmetic; a split holds at most
                    // Integer.MAX_VALUE of them (`SequenceGenerator.safeDivide`).
                    let count = end.wrapping_sub(start).wrapping_add(1).wrapping_abs();
                    if !(0..=i32::MAX as i64).contains(&count) {
                        return Err(ConnectorError(format!(
                            "java.lang.IllegalArgumentException: the sequence '{}'..'{}' of field '{}' has more values than one datagen split emits ({})",
                            opt("start").unwrap_or_default(),
                            opt("end").unwrap_or_default(),
                            field.name,
                            i32::MAX
                        )));
                    }
                    let count = count as u64;
                    remaining = Some(remaining.map_or(count, |r| r.min(count)));
                    FieldGen::Sequence { start }
                }
                "random" => {
                    let ty = &field.data_type.kind;
                    let (dmin, dmax) = default_range(ty);
                    let min = opt("min")
                        .map(|v| parse_random_bound(ty, &key("min"), v))
                        .transpose()?
                        .unwrap_or(dmin);
                    let max = opt("max")
                        .map(|v| parse_random_bound(ty, &key("max"), v))
                        .transpose()?
                        .unwrap_or(dmax);
                    if min > max {
                        return Err(ConnectorError(format!(
                            "lower bound ({}) must be strictly less than upper bound ({})",
                            java_message_number(min),
                            java_message_number(max)
                        )));
                    }
                    if !min.is_finite() || !max.is_finite() {
                        return Err(ConnectorError("interval bounds must be finite".to_string()));
                    }
                    let declared = match ty {
                        TypeKind::Char(n) | TypeKind::VarChar(n) => Some(*n as i64),
                        _ => None,
                    };
                    if opt("length").is_some() && matches!(ty, TypeKind::Char(_)) {
                        return Err(ConnectorError(format!(
                            "Custom length for fixed-length type (CHAR/BINARY) field '{}' is not supported.",
                            field.name
                        )));
                    }
                    if opt("var-len").is_some() && matches!(ty, TypeKind::Char(_)) {
                        return Err(ConnectorError(format!(
                            "Only supports specifying 'fields.#.var-len' option for variable-length types (VARCHAR/STRING/VARBINARY/BYTES). The type of field '{}' is not within this range.",
                            field.name
                        )));
                    }
                    let custom: Option<i64> = opt("length")
                        .map(|v| parse_num(&key("length"), v))
                        .transpose()?;
                    if let (Some(custom), Some(n)) = (custom, declared)
                        && custom > n
                    {
                        return Err(ConnectorError(format!(
                            "Custom length '{custom}' for variable-length type (VARCHAR/STRING/VARBINARY/BYTES) field '{}' should be shorter than '{n}' defined in the schema.",
                            field.name
                        )));
                    }
                    // Without `length`: CHAR(n) and VARCHAR(n) are n characters, STRING
                    // (VARCHAR(2147483647)) is 100 (Flink 2.3: VARCHAR(4) 4, VARCHAR(150) 150).
                    let length = match (custom, declared) {
                        (Some(custom), _) => custom,
                        (None, Some(n)) if n < i32::MAX as i64 => n,
                        (None, _) => 100,
                    };
                    if length <= 0 {
                        return Err(ConnectorError(format!("length ({length})")));
                    }
                    if length > MAX_LENGTH_OPTION {
                        return Err(ConnectorError(format!(
                            "'{}' = {length} is larger than Tideline generates ({MAX_LENGTH_OPTION})",
                            key("length")
                        )));
                    }
                    let var_len = match opt("var-len") {
                        None => false,
                        Some(v) if v.eq_ignore_ascii_case("true") => true,
                        Some(v) if v.eq_ignore_ascii_case("false") => false,
                        Some(v) => {
                            return Err(ConnectorError(format!(
                                "Could not parse value '{v}' for key '{}'.",
                                key("var-len")
                            )));
                        }
                    };
                    let max_past = match opt("max-past") {
                        None => 0,
                        Some(v) => parse_duration(v).ok_or_else(|| {
                            ConnectorError(format!(
                                "Could not parse value '{v}' for key '{}'.",
                                key("max-past")
                            ))
                        })?,
                    };
                    FieldGen::Random {
                        min,
                        max,
                        length: length as usize,
                        var_len,
                        max_past,
                        null_rate: opt("null-rate")
                            .map(|v| parse_num(&key("null-rate"), v))
                            .transpose()?
                            .unwrap_or(0.0),
                    }
                }
                other => {
                    return Err(ConnectorError(format!(
                        "invalid value '{other}' for option '{}': expected random or sequence",
                        key("kind")
                    )));
                }
            };
            if !supported(&field.data_type.kind) {
                return Err(ConnectorError(format!(
                    "datagen cannot generate {} (column '{}')",
                    field.data_type.kind, field.name
                )));
            }
            gens.push(generator);
        }
        Ok(DatagenSplit {
            schema: Arc::new(arrow_schema::Schema::new(
                schema
                    .fields
                    .iter()
                    .map(|f| f.data_type.with_nullable(true).to_arrow_field(&f.name))
                    .collect::<Vec<_>>(),
            )),
            types: schema.fields.iter().map(|f| f.data_type.clone()).collect(),
            gens,
            rows_per_second,
            remaining,
            produced: 0,
            resumed_at: 0,
            started: None,
            rng: 0x9E37_79B9_7F4A_7C15,
            clock,
        })
    }

    fn next_random(&mut self) -> u64 {
        // splitmix64: fast, good enough for test data, no dependency.
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next_random() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn column(&mut self, col: usize, rows: usize, first_row: u64) -> ArrayRef {
        let ty = self.types[col].kind.clone();
        let generator = self.gens[col].clone();
        let mut nulls = Vec::with_capacity(rows);
        let mut ints = Vec::with_capacity(rows);
        let mut floats = Vec::with_capacity(rows);
        for r in 0..rows {
            match &generator {
                FieldGen::Sequence { start } => {
                    nulls.push(false);
                    let v = start.wrapping_add((first_row + r as u64) as i64);
                    ints.push(v);
                    floats.push(v as f64);
                }
                FieldGen::Random {
                    min,
                    max,
                    null_rate,
                    ..
                } => {
                    nulls.push(*null_rate > 0.0 && self.unit() < *null_rate);
                    let u = self.unit();
                    let f = min + (max - min) * u;
                    floats.push(f);
                    ints.push(if ty.is_integer() {
                        (min + ((max - min + 1.0) * u).floor()).min(*max) as i64
                    } else {
                        f as i64
                    });
                }
            }
        }
        let now = self.clock.now_nanos();
        macro_rules! prim {
            ($builder:ty, $vals:expr) => {{
                let mut b = <$builder>::with_capacity(rows);
                for (v, null) in $vals.zip(&nulls) {
                    if *null {
                        b.append_null()
                    } else {
                        b.append_value(v)
                    }
                }
                Arc::new(b.finish()) as ArrayRef
            }};
        }
        match ty {
            TypeKind::Boolean => prim!(BooleanBuilder, ints.iter().map(|v| v % 2 != 0)),
            TypeKind::TinyInt => prim!(Int8Builder, ints.iter().map(|v| *v as i8)),
            TypeKind::SmallInt => prim!(Int16Builder, ints.iter().map(|v| *v as i16)),
            TypeKind::Int => prim!(Int32Builder, ints.iter().map(|v| *v as i32)),
            TypeKind::BigInt => prim!(Int64Builder, ints.iter().copied()),
            TypeKind::Float => prim!(Float32Builder, floats.iter().map(|v| *v as f32)),
            TypeKind::Double => prim!(Float64Builder, floats.iter().copied()),
            TypeKind::Decimal { precision, scale } => {
                let factor = 10f64.powi(scale as i32);
                let limit = 10f64.powi(precision as i32);
                let mut b = Decimal128Builder::with_capacity(rows);
                for (v, null) in floats.iter().zip(&nulls) {
                    let unscaled = (v * factor).round().clamp(-limit + 1.0, limit - 1.0) as i128;
                    if *null {
                        b.append_null()
                    } else {
                        b.append_value(unscaled)
                    }
                }
                Arc::new(
                    b.finish()
                        .with_precision_and_scale(precision, scale as i8)
                        .unwrap_or_else(|_| arrow_array::Decimal128Array::new_null(rows)),
                )
            }
            TypeKind::Char(_) | TypeKind::VarChar(_) => {
                let (length, var_len) = match generator {
                    FieldGen::Random {
                        length, var_len, ..
                    } => (length, var_len),
                    FieldGen::Sequence { .. } => (0, false),
                };
                let mut b = StringBuilder::with_capacity(rows, rows * length.max(8));
                let mut buf = String::new();
                for (v, null) in ints.iter().zip(&nulls) {
                    if *null {
                        b.append_null();
                        continue;
                    }
                    buf.clear();
                    if matches!(generator, FieldGen::Sequence { .. }) {
                        buf.push_str(&v.to_string());
                    } else {
                        let length = if var_len {
                            1 + (self.next_random() % length as u64) as usize
                        } else {
                            length
                        };
                        while buf.len() < length {
                            let word = self.next_random();
                            for i in 0..16 {
                                if buf.len() == length {
                                    break;
                                }
                                buf.push(char::from(
                                    b"0123456789abcdef"[((word >> (i * 4)) & 15) as usize],
                                ));
                            }
                        }
                    }
                    b.append_value(&buf);
                }
                Arc::new(b.finish())
            }
            _ => {
                // Date-times: now, or up to `max-past` before it, in milliseconds.
                let max_past = match generator {
                    FieldGen::Random { max_past, .. } => max_past,
                    FieldGen::Sequence { .. } => 0,
                };
                let mut instants = Vec::with_capacity(rows);
                for null in &nulls {
                    let back = if max_past > 0 {
                        (self.next_random() % (max_past as u64 + 1)) as i64
                    } else {
                        0
                    };
                    let at = now - back;
                    instants.push((!null).then_some(at - at.rem_euclid(1_000_000)));
                }
                match &ty {
                    TypeKind::Date => Arc::new(
                        instants
                            .into_iter()
                            .map(|v| v.map(|n| n.div_euclid(NANOS_PER_DAY) as i32))
                            .collect::<arrow_array::Date32Array>(),
                    ),
                    TypeKind::Timestamp(_) => Arc::new(
                        instants
                            .into_iter()
                            .collect::<arrow_array::TimestampNanosecondArray>(),
                    ),
                    _ => Arc::new(
                        instants
                            .into_iter()
                            .collect::<arrow_array::TimestampNanosecondArray>()
                            .with_timezone("UTC"),
                    ),
                }
            }
        }
    }
}

/// A sequence bound as Flink reads it for the column's type: an int for TINYINT, SMALLINT,
/// INT, FLOAT, DOUBLE and DECIMAL (narrowed to a byte, a short, and for FLOAT a short too),
/// a long for BIGINT and the string types.
fn parse_bound(kind: &TypeKind, key: &str, text: &str) -> Result<i64, ConnectorError> {
    Ok(match kind {
        TypeKind::TinyInt => parse_num::<i32>(key, text)? as i8 as i64,
        TypeKind::SmallInt | TypeKind::Float => parse_num::<i32>(key, text)? as i16 as i64,
        TypeKind::Int | TypeKind::Double | TypeKind::Decimal { .. } => {
            parse_num::<i32>(key, text)? as i64
        }
        _ => parse_num::<i64>(key, text)?,
    })
}

/// A random generator's `min` / `max` as Flink reads it for the column's type: an int (then
/// narrowed) for TINYINT, SMALLINT and INT, a long for BIGINT, a float for FLOAT (so `1e50`
/// is infinite) and a double otherwise.
fn parse_random_bound(kind: &TypeKind, key: &str, text: &str) -> Result<f64, ConnectorError> {
    Ok(match kind {
        TypeKind::TinyInt => parse_num::<i32>(key, text)? as i8 as f64,
        TypeKind::SmallInt => parse_num::<i32>(key, text)? as i16 as f64,
        TypeKind::Int => parse_num::<i32>(key, text)? as f64,
        TypeKind::BigInt => parse_num::<i64>(key, text)? as f64,
        TypeKind::Float => parse_num::<f32>(key, text)? as f64,
        _ => parse_num::<f64>(key, text)?,
    })
}

/// A number as Java's `MessageFormat` puts it in commons-math's messages (`NumberFormat`'s
/// default pattern `#,##0.###`): grouped thousands, at most three fraction digits.
fn java_message_number(v: f64) -> String {
    if v.is_nan() {
        return "\u{FFFD}".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "∞" } else { "-∞" }.into();
    }
    let text = format!("{:.3}", v.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let frac = frac.trim_end_matches('0');
    let mut out = String::new();
    if v < 0.0 && (int != "0" || !frac.is_empty()) {
        out.push('-');
    }
    out.push_str(&group_thousands(int));
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

fn default_range(kind: &TypeKind) -> (f64, f64) {
    match kind {
        TypeKind::TinyInt => (i8::MIN as f64, i8::MAX as f64),
        TypeKind::SmallInt => (i16::MIN as f64, i16::MAX as f64),
        TypeKind::Int => (i32::MIN as f64, i32::MAX as f64),
        TypeKind::BigInt => (i64::MIN as f64, i64::MAX as f64),
        TypeKind::Decimal { precision, .. } => {
            let m = 10f64.powi(*precision as i32 - 1);
            (-m, m)
        }
        _ => (f32::MIN as f64, f32::MAX as f64),
    }
}

fn supported(kind: &TypeKind) -> bool {
    kind.is_numeric()
        || kind.is_string()
        || matches!(
            kind,
            TypeKind::Boolean | TypeKind::Date | TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_)
        )
}

impl SourceSplit for DatagenSplit {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
        let started = *self.started.get_or_insert_with(Instant::now);
        let mut rows = BATCH_ROWS as u64;
        if let Some(rps) = self.rows_per_second {
            rows = rows.min(rps.div_ceil(10).max(1));
            // Throttle: the rows produced so far may not run ahead of the rate.
            let due =
                Duration::from_secs_f64((self.produced - self.resumed_at) as f64 / rps as f64);
            let elapsed = started.elapsed();
            if due > elapsed {
                std::thread::sleep(due - elapsed);
            }
        }
        if let Some(remaining) = self.remaining {
            if remaining == 0 {
                return Ok(None);
            }
            rows = rows.min(remaining);
            self.remaining = Some(remaining - rows);
        }
        let first = self.produced;
        let columns = (0..self.types.len())
            .map(|c| self.column(c, rows as usize, first))
            .collect();
        self.produced += rows;
        Ok(Some(batch_with_rows(
            self.schema.clone(),
            columns,
            rows as usize,
        )?))
    }

    fn describe(&self) -> String {
        "datagen".into()
    }

    fn is_bounded(&self) -> bool {
        self.remaining.is_some()
    }

    fn replayable(&self) -> bool {
        true
    }

    /// Rows produced, rows remaining (`u64::MAX`: unbounded) and the random state: the
    /// sequences and random values go on as if the run had not stopped.
    fn position(&self) -> Option<Vec<u8>> {
        let remaining = self.remaining.unwrap_or(u64::MAX);
        Some(words_position(&[self.produced, remaining, self.rng]))
    }

    fn seek(&mut self, position: &[u8]) -> Result<(), ExecError> {
        let Some([produced, remaining, rng]) = position_words::<3>(position) else {
            return Err(ExecError::Checkpoint(
                "datagen: a checkpointed position does not read back".into(),
            ));
        };
        self.produced = produced;
        self.resumed_at = produced;
        self.remaining = (remaining != u64::MAX).then_some(remaining);
        self.rng = rng;
        Ok(())
    }
}

/// The `datagen` connector's source: one generating split, bounded by `number-of-rows`.
pub struct DatagenFactory;

impl SourceFactory for DatagenFactory {
    fn identifier(&self) -> &'static str {
        "datagen"
    }

    fn is_bounded(&self, table: &TableDef) -> bool {
        table.option("number-of-rows").is_some()
    }

    fn splits(
        &self,
        scan: &ScanRequest,
        ctx: &EvalContext,
    ) -> Result<Vec<Pipeline>, ConnectorError> {
        Ok(vec![Pipeline {
            branches: Vec::new(),
            split: Box::new(DatagenSplit::new(
                scan.physical,
                &scan.table.options,
                ctx.clock.clone(),
            )?),
            operators: vec![],
        }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_numbers_as_java_formats_them() {
        assert_eq!(java_message_number(-25536.0), "-25,536");
        assert_eq!(java_message_number(5.0), "5");
        assert_eq!(java_message_number(1234.5678), "1,234.568");
        assert_eq!(java_message_number(0.5), "0.5");
        assert_eq!(java_message_number(2147483647.0), "2,147,483,647");
        assert_eq!(java_message_number(f64::INFINITY), "∞");
    }

    #[test]
    fn bounds_are_read_in_the_column_type() {
        assert_eq!(parse_bound(&TypeKind::TinyInt, "k", "300").unwrap(), 44);
        assert_eq!(parse_bound(&TypeKind::Float, "k", "40000").unwrap(), -25536);
        assert!(parse_bound(&TypeKind::Int, "k", "3000000000").is_err());
        assert_eq!(
            parse_bound(&TypeKind::BigInt, "k", "3000000000").unwrap(),
            3_000_000_000
        );
        assert!(
            parse_random_bound(&TypeKind::Float, "k", "1e50")
                .unwrap()
                .is_infinite()
        );
    }
}
