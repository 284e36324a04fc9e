//! The time columns operators read from a batch: timestamps, and rowtimes that may not be NULL.

use arrow_array::RecordBatch;

use super::error::ExecError;

/// Column `column` of `batch` as timestamps; `what` names it if it is not one.
pub fn timestamp_column<'a>(
    batch: &'a RecordBatch,
    column: usize,
    what: &str,
) -> Result<&'a arrow_array::TimestampNanosecondArray, ExecError> {
    use arrow_array::cast::AsArray;
    batch
        .column(column)
        .as_primitive_opt::<arrow_array::types::TimestampNanosecondType>()
        .ok_or_else(|| ExecError::Internal(format!("{what} is not a timestamp")))
}

/// A rowtime column of `batch`: timestamps, none NULL (Flink's error otherwise).
pub fn rowtime_column(
    batch: &RecordBatch,
    column: usize,
) -> Result<&arrow_array::TimestampNanosecondArray, ExecError> {
    use arrow_array::Array;
    let times = timestamp_column(batch, column, "the time attribute")?;
    if times.null_count() > 0 {
        return Err(ExecError::Source(
            "RowTime field should not be null, please convert it to a non-null long value.".into(),
        ));
    }
    Ok(times)
}
