//! Scalar values: the literals of bound expressions.

use super::interval::IntervalQualifier;

/// One SQL value. Integers of every width are held as `Int`, the owning [`super::DataType`]
/// says which width they are.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Boolean(bool),
    Int(i64),
    Float(f64),
    /// Unscaled value; the scale is in the type.
    Decimal(i128),
    String(String),
    Bytes(Vec<u8>),
    /// Days since 1970-01-01.
    Date(i32),
    /// Nanoseconds of the day.
    Time(i64),
    /// Nanoseconds since the epoch (wall clock for TIMESTAMP, instant for TIMESTAMP_LTZ).
    Timestamp(i64),
    /// Months, with the qualifier the literal was written with (EXPLAIN prints it, as
    /// Calcite: `14:INTERVAL YEAR TO MONTH`).
    IntervalMonths(i32, IntervalQualifier),
    /// Milliseconds, with the literal's qualifier (`300000:INTERVAL MINUTE`).
    IntervalMillis(i64, IntervalQualifier),
}
