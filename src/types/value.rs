//! Scalar values: literals in plans and single cells read back from Arrow arrays.

use arrow_array::{Array, ArrayRef, cast::AsArray, types::*};
use arrow_schema::{DataType as ArrowType, TimeUnit};

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
    IntervalMonths(i32),
    IntervalMillis(i64),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Reads row `i` of an array built from a Tideline type.
    pub fn from_array(array: &ArrayRef, i: usize) -> Value {
        if array.is_null(i) {
            return Value::Null;
        }
        match array.data_type() {
            ArrowType::Boolean => Value::Boolean(array.as_boolean().value(i)),
            ArrowType::Int8 => Value::Int(array.as_primitive::<Int8Type>().value(i) as i64),
            ArrowType::Int16 => Value::Int(array.as_primitive::<Int16Type>().value(i) as i64),
            ArrowType::Int32 => Value::Int(array.as_primitive::<Int32Type>().value(i) as i64),
            ArrowType::Int64 => Value::Int(array.as_primitive::<Int64Type>().value(i)),
            ArrowType::Float32 => Value::Float(array.as_primitive::<Float32Type>().value(i) as f64),
            ArrowType::Float64 => Value::Float(array.as_primitive::<Float64Type>().value(i)),
            ArrowType::Decimal128(..) => {
                Value::Decimal(array.as_primitive::<Decimal128Type>().value(i))
            }
            ArrowType::Utf8 => Value::String(array.as_string::<i32>().value(i).to_string()),
            ArrowType::Binary => Value::Bytes(array.as_binary::<i32>().value(i).to_vec()),
            ArrowType::Date32 => Value::Date(array.as_primitive::<Date32Type>().value(i)),
            ArrowType::Time64(TimeUnit::Nanosecond) => {
                Value::Time(array.as_primitive::<Time64NanosecondType>().value(i))
            }
            ArrowType::Timestamp(TimeUnit::Nanosecond, _) => {
                Value::Timestamp(array.as_primitive::<TimestampNanosecondType>().value(i))
            }
            ArrowType::Interval(_) => {
                Value::IntervalMonths(array.as_primitive::<IntervalYearMonthType>().value(i))
            }
            ArrowType::Duration(_) => {
                Value::IntervalMillis(array.as_primitive::<DurationMillisecondType>().value(i))
            }
            _ => Value::Null,
        }
    }
}
