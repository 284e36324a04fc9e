//! Flink's logical types, as Tideline understands them.
//!
//! A [`DataType`] is a [`TypeKind`] plus nullability, exactly as Flink's `LogicalType`: `DESC`
//! prints both. Every kind maps to one Arrow type ([`DataType::to_arrow`]); the planner decides
//! with these types and the executor only ever sees the Arrow side. Time attributes
//! (`*ROWTIME*`, `*PROCTIME*`) are not types: they ride on a [`Field`] of a [`Schema`].

pub mod cell_writer;
pub mod chunk;
pub mod coercion;
pub mod decimal;
pub mod floating_decimal;
pub mod interval;
pub mod java_hash;
pub mod java_text;
pub mod json_text;
pub mod option_value;
pub mod pattern;
pub mod text;
pub mod time;
pub mod value;

use std::fmt;
use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Field as ArrowField, IntervalUnit, TimeUnit};

/// Flink's `VARCHAR(2147483647)`, which it prints as `STRING`.
pub const MAX_LENGTH: u32 = i32::MAX as u32;
/// `sql-client`'s default precision for TIMESTAMP and TIMESTAMP_LTZ without one.
pub const DEFAULT_TIMESTAMP_PRECISION: u8 = 6;

/// The kind of a Flink type, without nullability.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeKind {
    /// The type of an untyped `NULL` literal; it adopts the type of its context.
    Null,
    Boolean,
    TinyInt,
    SmallInt,
    Int,
    BigInt,
    Float,
    Double,
    Decimal {
        precision: u8,
        scale: u8,
    },
    Char(u32),
    VarChar(u32),
    Binary(u32),
    VarBinary(u32),
    Date,
    Time(u8),
    Timestamp(u8),
    TimestampLtz(u8),
    IntervalYearMonth,
    IntervalDayTime,
    Array(Box<DataType>),
    Map(Box<DataType>, Box<DataType>),
    Row(Vec<(String, DataType)>),
}

/// A Flink logical type: a kind and whether it admits NULL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DataType {
    pub kind: TypeKind,
    pub nullable: bool,
}

impl DataType {
    pub fn nullable(kind: TypeKind) -> Self {
        DataType {
            kind,
            nullable: true,
        }
    }
    pub fn not_null(kind: TypeKind) -> Self {
        DataType {
            kind,
            nullable: false,
        }
    }
    pub fn with_nullable(&self, nullable: bool) -> Self {
        DataType {
            kind: self.kind.clone(),
            nullable,
        }
    }
    pub fn string() -> Self {
        Self::nullable(TypeKind::VarChar(MAX_LENGTH))
    }

    pub fn is_numeric(&self) -> bool {
        self.kind.is_numeric()
    }

    /// The Arrow type that carries values of this type.
    pub fn to_arrow(&self) -> ArrowType {
        self.kind.to_arrow()
    }

    /// Arrow field for a column of this type.
    pub fn to_arrow_field(&self, name: &str) -> ArrowField {
        ArrowField::new(name, self.to_arrow(), self.nullable)
    }
}

impl TypeKind {
    /// Whether a cast from this kind to `to` keeps distinct values distinct (an integer
    /// widened, a string or timestamp given more room, the same kind).
    pub fn widens_to(&self, to: &TypeKind) -> bool {
        use TypeKind::*;
        let rank = |k: &TypeKind| match k {
            TinyInt => Some(1),
            SmallInt => Some(2),
            Int => Some(3),
            BigInt => Some(4),
            _ => None,
        };
        match (self, to) {
            (a, b) if a == b => true,
            (Char(a) | VarChar(a), VarChar(b)) => a <= b,
            (Timestamp(a), Timestamp(b)) | (TimestampLtz(a), TimestampLtz(b)) => a <= b,
            (a, b) => matches!((rank(a), rank(b)), (Some(x), Some(y)) if x <= y),
        }
    }

    pub fn is_numeric(&self) -> bool {
        matches!(
            self,
            TypeKind::TinyInt
                | TypeKind::SmallInt
                | TypeKind::Int
                | TypeKind::BigInt
                | TypeKind::Float
                | TypeKind::Double
                | TypeKind::Decimal { .. }
        )
    }
    pub fn is_integer(&self) -> bool {
        matches!(
            self,
            TypeKind::TinyInt | TypeKind::SmallInt | TypeKind::Int | TypeKind::BigInt
        )
    }
    pub fn is_string(&self) -> bool {
        matches!(self, TypeKind::Char(_) | TypeKind::VarChar(_))
    }
    pub fn is_binary(&self) -> bool {
        matches!(self, TypeKind::Binary(_) | TypeKind::VarBinary(_))
    }
    pub fn is_timestamp(&self) -> bool {
        matches!(self, TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_))
    }

    /// The kind a column of Arrow type `arrow` holds, for kernels that see only their input
    /// arrays. The inverse of [`TypeKind::to_arrow`] up to what Arrow does not record:
    /// string and binary lengths (STRING, BYTES) and fractional-second precision (9).
    pub fn from_arrow(arrow: &ArrowType) -> TypeKind {
        let field = |f: &ArrowField| DataType {
            kind: TypeKind::from_arrow(f.data_type()),
            nullable: f.is_nullable(),
        };
        match arrow {
            ArrowType::Boolean => TypeKind::Boolean,
            ArrowType::Int8 => TypeKind::TinyInt,
            ArrowType::Int16 => TypeKind::SmallInt,
            ArrowType::Int32 => TypeKind::Int,
            ArrowType::Int64 => TypeKind::BigInt,
            ArrowType::Float32 => TypeKind::Float,
            ArrowType::Float64 => TypeKind::Double,
            ArrowType::Decimal128(p, s) => TypeKind::Decimal {
                precision: *p,
                scale: (*s).max(0) as u8,
            },
            ArrowType::Utf8 => TypeKind::VarChar(MAX_LENGTH),
            ArrowType::Binary => TypeKind::VarBinary(MAX_LENGTH),
            ArrowType::Date32 => TypeKind::Date,
            ArrowType::Time64(_) => TypeKind::Time(9),
            ArrowType::Timestamp(_, None) => TypeKind::Timestamp(9),
            ArrowType::Timestamp(_, Some(_)) => TypeKind::TimestampLtz(9),
            ArrowType::Interval(_) => TypeKind::IntervalYearMonth,
            ArrowType::Duration(_) => TypeKind::IntervalDayTime,
            ArrowType::List(element) => TypeKind::Array(Box::new(field(element))),
            ArrowType::Map(entries, _) => match entries.data_type() {
                ArrowType::Struct(kv) if kv.len() == 2 => {
                    TypeKind::Map(Box::new(field(&kv[0])), Box::new(field(&kv[1])))
                }
                _ => TypeKind::Null,
            },
            ArrowType::Struct(fields) => TypeKind::Row(
                fields
                    .iter()
                    .map(|f| (f.name().clone(), field(f)))
                    .collect(),
            ),
            _ => TypeKind::Null,
        }
    }

    /// Storage: integers, floats and booleans as their Arrow primitives; DECIMAL as Decimal128;
    /// strings as Utf8; TIME as nanoseconds of the day; TIMESTAMP and TIMESTAMP_LTZ as
    /// nanoseconds since the epoch (LTZ tagged "UTC": it is an instant); day-time intervals as
    /// milliseconds (Flink's own representation), year-month intervals as months.
    pub fn to_arrow(&self) -> ArrowType {
        match self {
            TypeKind::Null => ArrowType::Null,
            TypeKind::Boolean => ArrowType::Boolean,
            TypeKind::TinyInt => ArrowType::Int8,
            TypeKind::SmallInt => ArrowType::Int16,
            TypeKind::Int => ArrowType::Int32,
            TypeKind::BigInt => ArrowType::Int64,
            TypeKind::Float => ArrowType::Float32,
            TypeKind::Double => ArrowType::Float64,
            TypeKind::Decimal { precision, scale } => {
                ArrowType::Decimal128(*precision, *scale as i8)
            }
            TypeKind::Char(_) | TypeKind::VarChar(_) => ArrowType::Utf8,
            TypeKind::Binary(_) | TypeKind::VarBinary(_) => ArrowType::Binary,
            TypeKind::Date => ArrowType::Date32,
            TypeKind::Time(_) => ArrowType::Time64(TimeUnit::Nanosecond),
            TypeKind::Timestamp(_) => ArrowType::Timestamp(TimeUnit::Nanosecond, None),
            TypeKind::TimestampLtz(_) => {
                ArrowType::Timestamp(TimeUnit::Nanosecond, Some(Arc::from("UTC")))
            }
            TypeKind::IntervalYearMonth => ArrowType::Interval(IntervalUnit::YearMonth),
            TypeKind::IntervalDayTime => ArrowType::Duration(TimeUnit::Millisecond),
            TypeKind::Array(element) => {
                ArrowType::List(Arc::new(element.to_arrow_field("element")))
            }
            TypeKind::Map(key, value) => {
                let entries = ArrowField::new(
                    "entries",
                    ArrowType::Struct(
                        vec![
                            key.with_nullable(false).to_arrow_field("key"),
                            value.to_arrow_field("value"),
                        ]
                        .into(),
                    ),
                    false,
                );
                ArrowType::Map(Arc::new(entries), false)
            }
            TypeKind::Row(fields) => ArrowType::Struct(
                fields
                    .iter()
                    .map(|(name, ty)| ty.to_arrow_field(name))
                    .collect::<Vec<_>>()
                    .into(),
            ),
        }
    }
}

impl fmt::Display for TypeKind {
    /// Flink's summary string, as `DESC` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeKind::Null => write!(f, "NULL"),
            TypeKind::Boolean => write!(f, "BOOLEAN"),
            TypeKind::TinyInt => write!(f, "TINYINT"),
            TypeKind::SmallInt => write!(f, "SMALLINT"),
            TypeKind::Int => write!(f, "INT"),
            TypeKind::BigInt => write!(f, "BIGINT"),
            TypeKind::Float => write!(f, "FLOAT"),
            TypeKind::Double => write!(f, "DOUBLE"),
            TypeKind::Decimal { precision, scale } => write!(f, "DECIMAL({precision}, {scale})"),
            TypeKind::Char(n) => write!(f, "CHAR({n})"),
            TypeKind::VarChar(n) if *n == MAX_LENGTH => write!(f, "STRING"),
            TypeKind::VarChar(n) => write!(f, "VARCHAR({n})"),
            TypeKind::Binary(n) => write!(f, "BINARY({n})"),
            TypeKind::VarBinary(n) if *n == MAX_LENGTH => write!(f, "BYTES"),
            TypeKind::VarBinary(n) => write!(f, "VARBINARY({n})"),
            TypeKind::Date => write!(f, "DATE"),
            TypeKind::Time(p) => write!(f, "TIME({p})"),
            TypeKind::Timestamp(p) => write!(f, "TIMESTAMP({p})"),
            TypeKind::TimestampLtz(p) => write!(f, "TIMESTAMP_LTZ({p})"),
            // How Flink 2.3 shows an interval-typed expression (DESC, TYPEOF), whatever its
            // qualifier: every day-time interval is INTERVAL SECOND(3).
            TypeKind::IntervalYearMonth => write!(f, "INTERVAL MONTH"),
            TypeKind::IntervalDayTime => write!(f, "INTERVAL SECOND(3)"),
            TypeKind::Array(element) => write!(f, "ARRAY<{element}>"),
            TypeKind::Map(key, value) => write!(f, "MAP<{key}, {value}>"),
            TypeKind::Row(fields) => {
                write!(f, "ROW<")?;
                for (i, (name, ty)) in fields.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "`{name}` {ty}")?;
                }
                write!(f, ">")
            }
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if !self.nullable {
            write!(f, " NOT NULL")?;
        }
        Ok(())
    }
}

/// Flink's time attributes: a property of a column the planner tracks, not a physical type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeAttribute {
    Rowtime,
    Proctime,
}

/// A column of a table, view or query result.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub data_type: DataType,
    pub time_attribute: Option<TimeAttribute>,
}

impl Field {
    pub fn new(name: impl Into<String>, data_type: DataType) -> Self {
        Field {
            name: name.into(),
            data_type,
            time_attribute: None,
        }
    }

    /// The type as `DESC` prints it: no NOT NULL (that is the `null` column), and the time
    /// attribute marker.
    pub fn describe_type(&self) -> String {
        match self.time_attribute {
            None => self.data_type.kind.to_string(),
            Some(TimeAttribute::Rowtime) => format!("{} *ROWTIME*", self.data_type.kind),
            Some(TimeAttribute::Proctime) => format!("{} *PROCTIME*", self.data_type.kind),
        }
    }
}

/// The columns of a relation, in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Schema {
    pub fields: Vec<Field>,
}

impl Schema {
    pub fn new(fields: Vec<Field>) -> Self {
        Schema { fields }
    }
    pub fn len(&self) -> usize {
        self.fields.len()
    }
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
    /// Flink resolves column names case-sensitively.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
    /// The same columns under new names (a view's column list, `AS t(a, b)`); no names keeps
    /// the schema as it is.
    pub fn renamed(&self, names: &[String]) -> Result<Schema, String> {
        if names.is_empty() {
            return Ok(self.clone());
        }
        if names.len() != self.len() {
            return Err(format!(
                "{} column names given for {} columns",
                names.len(),
                self.len()
            ));
        }
        let fields = self
            .fields
            .iter()
            .zip(names)
            .map(|(f, n)| Field {
                name: n.clone(),
                ..f.clone()
            })
            .collect();
        Ok(Schema::new(fields))
    }

    pub fn to_arrow(&self) -> arrow_schema::SchemaRef {
        Arc::new(arrow_schema::Schema::new(
            self.fields
                .iter()
                .map(|f| f.data_type.to_arrow_field(&f.name))
                .collect::<Vec<_>>(),
        ))
    }
}

/// Nanoseconds in one millisecond, second, minute, hour and day.
pub const NANOS_PER_MILLI: i64 = 1_000_000;
pub const NANOS_PER_SECOND: i64 = 1_000_000_000;
pub const MILLIS_PER_DAY: i64 = 86_400_000;
pub const NANOS_PER_DAY: i64 = 86_400 * NANOS_PER_SECOND;

/// A type summary in Flink's serializable form (TYPEOF's `force_serializable`, SHOW CREATE
/// TABLE): STRING and BYTES spelled out, TIMESTAMP_LTZ(p) as TIMESTAMP(p) WITH LOCAL TIME ZONE;
/// field names in backquotes are left alone.
pub fn serializable_type_text(summary: &str) -> String {
    let mut out = String::with_capacity(summary.len() + 16);
    let mut word = String::new();
    let mut quoted = false;
    let flush = |word: &mut String, out: &mut String| {
        match word.as_str() {
            "STRING" => out.push_str(&format!("VARCHAR({MAX_LENGTH})")),
            "BYTES" => out.push_str(&format!("VARBINARY({MAX_LENGTH})")),
            w => out.push_str(w),
        }
        word.clear();
    };
    for c in summary.chars() {
        if c == '`' {
            flush(&mut word, &mut out);
            quoted = !quoted;
            out.push(c);
        } else if !quoted && (c.is_ascii_alphanumeric() || c == '_') {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    // `TIMESTAMP_LTZ(p)` → `TIMESTAMP(p) WITH LOCAL TIME ZONE`.
    let mut rest = out.as_str();
    let mut spelled = String::with_capacity(out.len());
    while let Some(at) = rest.find("TIMESTAMP_LTZ(") {
        let (before, after) = rest.split_at(at);
        spelled.push_str(before);
        let after = &after["TIMESTAMP_LTZ".len()..];
        let close = after.find(')').map_or(after.len(), |c| c + 1);
        spelled.push_str("TIMESTAMP");
        spelled.push_str(&after[..close]);
        spelled.push_str(" WITH LOCAL TIME ZONE");
        rest = &after[close..];
    }
    spelled.push_str(rest);
    spelled
}
