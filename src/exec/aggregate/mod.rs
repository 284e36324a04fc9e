//! Columnar accumulators for the built-in aggregate functions (COUNT, SUM, MIN, MAX, AVG,
//! FIRST_VALUE, LAST_VALUE, LISTAGG, the M2 under STDDEV/VAR, and ROW_NUMBER, RANK and
//! DENSE_RANK as OVER aggregates), one file per family.
//!
//! An accumulator holds the state of one [`AggregateCall`] for many groups at once, in typed
//! vectors indexed by a *slot* (`u32`) the operator hands out (DataFusion's
//! `GroupsAccumulator` is the model). A batch enters through [`GroupsAccumulator::update`]
//! as two parallel lists, the rows and the slot each row goes to: a row may appear several
//! times (a HOP row belongs to several windows) or not at all (late for its window). The
//! accumulator resolves its argument columns once per batch and then walks the pairs with no
//! per-row dispatch or allocation. Results leave through [`GroupsAccumulator::evaluate`] as
//! one Arrow column for the slots being emitted, in Flink's result type
//! ([`AggregateCall::data_type`]).
//!
//! Over an updating input, [`GroupsAccumulator::retract`] takes rows back out: COUNT, SUM
//! and AVG subtract, MIN and MAX keep every value with its count ([`min_max::RetractMinMax`],
//! Flink's `MinWithRetractAggFunction`), so that the next extreme is at hand when the current
//! one goes.

pub mod arrival;
pub mod avg;
pub mod count;
pub mod distinct;
pub mod encoded;
pub mod json_agg;
pub mod lag;
pub mod min_max;
pub mod ranking;
pub mod single_value;
pub mod sum;
pub mod user;
pub mod welford;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, Time64NanosecondType, TimestampNanosecondType,
};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch};
use arrow_schema::{DataType as ArrowType, Schema as ArrowSchema, TimeUnit};

use crate::exec::error::ExecError;
use crate::exec::state::pages::{FrozenBits, FrozenVec, PagedBits, PagedVec};
use crate::plan::aggregate::{AggregateCall, AggregateFunction};

/// The state of one aggregate call over many groups, each group a slot.
pub trait GroupsAccumulator: Send {
    /// Makes room for slots `0..slots` (new slots start empty).
    fn resize(&mut self, slots: usize);

    /// Accumulates row `rows[i]` of `batch` into slot `slots[i]`, for every `i`. Rows the
    /// call's FILTER rejects are skipped here.
    fn update(&mut self, batch: &RecordBatch, rows: &[u32], slots: &[u32])
    -> Result<(), ExecError>;

    /// Takes row `rows[i]` of `batch` back out of slot `slots[i]` (the input retracted it:
    /// `-U` or `-D`). Only accumulators made for a retracting input take retractions.
    fn retract(
        &mut self,
        _batch: &RecordBatch,
        _rows: &[u32],
        _slots: &[u32],
    ) -> Result<(), ExecError> {
        Err(ExecError::Internal(
            "this aggregate does not take retractions".into(),
        ))
    }

    /// Folds slot `from` into slot `into` (two session windows became one, or a slice joins
    /// the windows it is shared by); `from` is left as it was.
    fn merge(&mut self, into: u32, from: u32);

    /// The results of `slots`, in that order, as a column of the call's result type.
    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError>;

    /// Empties `slot` for reuse.
    fn free(&mut self, slot: u32);

    /// Appends `slot`'s state to a snapshot.
    fn write_slot(&self, slot: u32, out: &mut Vec<u8>);

    /// Reads back into `slot` (already empty) what `write_slot` wrote.
    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError>;

    /// The slots as they are now, for a checkpoint's writer to write on its own thread while
    /// this accumulator goes on (docs/design/0008 §7). Where the state is kept in pages
    /// the view shares them; otherwise (the default) every slot below `slots` that `live`
    /// holds is written now, at the barrier.
    fn freeze(&self, slots: usize, live: &dyn Fn(u32) -> bool) -> Box<dyn FrozenSlots> {
        let mut bytes = Vec::new();
        let mut ends = Vec::with_capacity(slots);
        for slot in 0..slots as u32 {
            if live(slot) {
                self.write_slot(slot, &mut bytes);
            }
            ends.push(bytes.len());
        }
        Box::new(WrittenSlots { bytes, ends })
    }
}

/// Slots written at the barrier, by the default [`GroupsAccumulator::freeze`].
struct WrittenSlots {
    bytes: Vec<u8>,
    /// Per slot, where its bytes end.
    ends: Vec<usize>,
}

impl FrozenSlots for WrittenSlots {
    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        let slot = slot as usize;
        let start = if slot == 0 { 0 } else { self.ends[slot - 1] };
        out.extend_from_slice(&self.bytes[start..self.ends[slot]]);
    }
}

/// An accumulator's slots as they were at a barrier ([`GroupsAccumulator::freeze`]).
pub trait FrozenSlots: Send + Sync {
    /// Appends `slot`'s state as the accumulator's `write_slot` would have then.
    fn write_slot(&self, slot: u32, out: &mut Vec<u8>);
}

/// The accumulator of `call` over batches shaped like `input`.
pub fn create_accumulator(
    call: &AggregateCall,
    input: &ArrowSchema,
) -> Result<Box<dyn GroupsAccumulator>, ExecError> {
    create_accumulator_for(call, input, false)
}

/// The accumulator of `call`; `retracts`: the input takes rows back (`-U`/`-D`), and the
/// accumulator must take them back too.
pub fn create_accumulator_for(
    call: &AggregateCall,
    input: &ArrowSchema,
    retracts: bool,
) -> Result<Box<dyn GroupsAccumulator>, ExecError> {
    let result = call.data_type.to_arrow();
    let argument = |i: usize| -> Result<(usize, ArrowType), ExecError> {
        let column = *call.args.get(i).ok_or_else(|| {
            ExecError::Internal(format!("{} takes an argument", call.function.name()))
        })?;
        Ok((column, input.field(column).data_type().clone()))
    };
    let filter = call.filter;
    if matches!(
        call.function,
        AggregateFunction::RowNumber | AggregateFunction::Rank | AggregateFunction::DenseRank
    ) {
        return Ok(Box::<ranking::RankingAccumulator>::default());
    }
    if call.function == AggregateFunction::SingleValue {
        let (column, argument) = argument(0)?;
        return Ok(Box::new(single_value::SingleValueAccumulator::new(
            column, &argument,
        )?));
    }
    if let AggregateFunction::JsonArrayAgg { null_on_null } = call.function {
        let (column, _) = argument(0)?;
        return Ok(Box::new(json_agg::JsonArrayAggAccumulator::new(
            column,
            filter,
            null_on_null,
        )));
    }
    if let AggregateFunction::JsonObjectAgg { null_on_null } = call.function {
        let ((key, _), (value, _)) = (argument(0)?, argument(1)?);
        return Ok(Box::new(json_agg::JsonObjectAggAccumulator::new(
            key,
            value,
            filter,
            null_on_null,
        )));
    }
    if call.function == AggregateFunction::Count {
        if call.distinct && !call.args.is_empty() {
            return Ok(Box::new(count::CountDistinctAccumulator::new(
                input,
                call.args.clone(),
                filter,
            )?));
        }
        return Ok(Box::new(count::CountAccumulator::new(
            call.args.clone(),
            filter,
        )));
    }
    if call.distinct && retracts {
        return Err(ExecError::Internal(format!(
            "{}(DISTINCT …) over an updating input is not supported yet",
            call.function.name()
        )));
    }
    if call.distinct && matches!(call.function, AggregateFunction::User(_)) && call.args.len() != 1
    {
        return Err(ExecError::Internal(format!(
            "{}(DISTINCT …) of {} arguments is not supported yet",
            call.function.name(),
            call.args.len()
        )));
    }
    if call.distinct
        && matches!(
            call.function,
            AggregateFunction::Sum
                | AggregateFunction::Avg
                | AggregateFunction::WelfordM2
                | AggregateFunction::User(_)
        )
    {
        let plain = AggregateCall {
            distinct: false,
            filter: None,
            ..call.clone()
        };
        let (column, _) = argument(0)?;
        return Ok(Box::new(distinct::DistinctAccumulator::new(
            create_accumulator(&plain, input)?,
            std::sync::Arc::new(input.clone()),
            column,
            filter,
        )?));
    }
    let arrival = match call.function {
        AggregateFunction::FirstValue => Some(arrival::Arrival::First),
        AggregateFunction::LastValue => Some(arrival::Arrival::Last),
        AggregateFunction::ListAgg => Some(arrival::Arrival::ListAgg),
        _ => None,
    };
    if let AggregateFunction::Lag { offset } = call.function {
        let (column, arg_type) = argument(0)?;
        return Ok(Box::new(lag::LagAccumulator::new(
            column,
            offset.unwrap_or(1),
            &arg_type,
        )?));
    }
    // After DISTINCT, which wraps it above; its arguments are its own affair.
    if let AggregateFunction::User(function) = call.function {
        return Ok(Box::new(user::UserAggregateAccumulator::new(
            function,
            call.args.clone(),
            filter,
            result,
            retracts,
        )?));
    }
    if let Some(kind) = arrival {
        let (column, arg_type) = argument(0)?;
        return Ok(Box::new(arrival::ArrivalAccumulator::new(
            kind,
            column,
            &arg_type,
            call.args.get(1).copied(),
            filter,
            retracts,
        )?));
    }
    let (column, arg_type) = argument(0)?;
    let unsupported = || {
        ExecError::Internal(format!(
            "{} of {arg_type} to {result} is not supported",
            call.function.name()
        ))
    };
    macro_rules! primitive {
        ($make:ident) => {
            match &arg_type {
                ArrowType::Int8 => $make!(Int8Type),
                ArrowType::Int16 => $make!(Int16Type),
                ArrowType::Int32 => $make!(Int32Type),
                ArrowType::Int64 => $make!(Int64Type),
                ArrowType::Float32 => $make!(Float32Type),
                ArrowType::Float64 => $make!(Float64Type),
                ArrowType::Decimal128(..) => $make!(Decimal128Type),
                ArrowType::Date32 => $make!(Date32Type),
                ArrowType::Time64(TimeUnit::Nanosecond) => $make!(Time64NanosecondType),
                ArrowType::Timestamp(TimeUnit::Nanosecond, _) => $make!(TimestampNanosecondType),
                _ => None,
            }
        };
    }
    let accumulator: Option<Box<dyn GroupsAccumulator>> = match call.function {
        AggregateFunction::Count
        | AggregateFunction::FirstValue
        | AggregateFunction::LastValue
        | AggregateFunction::ListAgg
        | AggregateFunction::RowNumber
        | AggregateFunction::Rank
        | AggregateFunction::DenseRank
        | AggregateFunction::SingleValue
        | AggregateFunction::JsonArrayAgg { .. }
        | AggregateFunction::JsonObjectAgg { .. }
        | AggregateFunction::User(_)
        | AggregateFunction::Lag { .. } => unreachable!("handled above"),
        // Read off the grouping set's number by the planner, never accumulated.
        AggregateFunction::Grouping | AggregateFunction::GroupingId => None,
        AggregateFunction::Min | AggregateFunction::Max if retracts => {
            Some(Box::new(min_max::RetractMinMax::new(
                column,
                filter,
                call.function == AggregateFunction::Max,
                input.field(column).data_type().clone(),
            )?) as Box<dyn GroupsAccumulator>)
        }
        AggregateFunction::Min | AggregateFunction::Max => {
            let max = call.function == AggregateFunction::Max;
            macro_rules! min_max {
                ($t:ty) => {
                    Some(if max {
                        Box::new(min_max::PrimitiveMinMax::<$t, true>::new(
                            column,
                            filter,
                            result.clone(),
                        )) as Box<dyn GroupsAccumulator>
                    } else {
                        Box::new(min_max::PrimitiveMinMax::<$t, false>::new(
                            column,
                            filter,
                            result.clone(),
                        ))
                    })
                };
            }
            match &arg_type {
                ArrowType::Boolean => {
                    Some(Box::new(min_max::BooleanMinMax::new(column, filter, max))
                        as Box<dyn GroupsAccumulator>)
                }
                ArrowType::Utf8 | ArrowType::Binary => Some(Box::new(min_max::BytesMinMax::new(
                    column,
                    filter,
                    max,
                    result.clone(),
                ))
                    as Box<dyn GroupsAccumulator>),
                _ => primitive!(min_max),
            }
        }
        AggregateFunction::Sum => {
            macro_rules! sum {
                ($t:ty) => {
                    Some(
                        Box::new(sum::SumAccumulator::<$t>::new(column, filter, retracts))
                            as Box<dyn GroupsAccumulator>,
                    )
                };
            }
            match (&arg_type, &result) {
                (ArrowType::Decimal128(..), ArrowType::Decimal128(p, _)) => Some(Box::new(
                    sum::DecimalSumAccumulator::new(column, filter, *p, result.clone()),
                )
                    as Box<dyn GroupsAccumulator>),
                (a, r) if a == r => match a {
                    ArrowType::Int8 => sum!(Int8Type),
                    ArrowType::Int16 => sum!(Int16Type),
                    ArrowType::Int32 => sum!(Int32Type),
                    ArrowType::Int64 => sum!(Int64Type),
                    ArrowType::Float32 => sum!(Float32Type),
                    ArrowType::Float64 => sum!(Float64Type),
                    _ => None,
                },
                _ => None,
            }
        }
        AggregateFunction::WelfordM2 => Some(Box::new(welford::WelfordM2Accumulator::new(
            column, filter, &arg_type,
        )?) as Box<dyn GroupsAccumulator>),
        AggregateFunction::Avg => match (&arg_type, &result) {
            (ArrowType::Decimal128(_, s), ArrowType::Decimal128(p, t)) => Some(Box::new(
                avg::DecimalAvgAccumulator::new(column, filter, *s, *p, *t),
            )
                as Box<dyn GroupsAccumulator>),
            (ArrowType::Int8, _) => {
                avg::IntegerAvgAccumulator::<Int8Type>::boxed(column, filter, &result)
            }
            (ArrowType::Int16, _) => {
                avg::IntegerAvgAccumulator::<Int16Type>::boxed(column, filter, &result)
            }
            (ArrowType::Int32, _) => {
                avg::IntegerAvgAccumulator::<Int32Type>::boxed(column, filter, &result)
            }
            (ArrowType::Int64, _) => {
                avg::IntegerAvgAccumulator::<Int64Type>::boxed(column, filter, &result)
            }
            (ArrowType::Float32, _) => {
                avg::FloatAvgAccumulator::<Float32Type>::boxed(column, filter, &result)
            }
            (ArrowType::Float64, _) => {
                avg::FloatAvgAccumulator::<Float64Type>::boxed(column, filter, &result)
            }
            _ => None,
        },
    };
    accumulator.ok_or_else(unsupported)
}

/// The FILTER column of a call in `batch`, resolved once per batch.
pub(crate) fn filter_column(
    batch: &RecordBatch,
    filter: Option<usize>,
) -> Result<Option<&BooleanArray>, ExecError> {
    filter
        .map(|c| {
            batch
                .column(c)
                .as_boolean_opt()
                .ok_or_else(|| ExecError::Internal(format!("the FILTER column {c} is not BOOLEAN")))
        })
        .transpose()
}

/// Whether a FILTER lets `row` through: only TRUE does.
#[inline]
pub(crate) fn passes(filter: Option<&BooleanArray>, row: usize) -> bool {
    filter.is_none_or(|f| f.is_valid(row) && f.value(row))
}

/// Calls `f(slot, value)` for every (row, slot) pair whose row the call's FILTER lets
/// through and whose argument (primitive column `column`) is not NULL: the walk every
/// single-argument accumulator makes, its columns resolved once per batch.
#[inline]
pub(crate) fn for_each_value<T: arrow_array::ArrowPrimitiveType>(
    batch: &RecordBatch,
    column: usize,
    filter: Option<usize>,
    rows: &[u32],
    slots: &[u32],
    mut f: impl FnMut(usize, T::Native),
) -> Result<(), ExecError> {
    let filter = filter_column(batch, filter)?;
    let values = primitive_column::<T>(batch, column)?;
    let raw = values.values();
    for (&row, &slot) in rows.iter().zip(slots) {
        let row = row as usize;
        if passes(filter, row) && values.is_valid(row) {
            f(slot as usize, raw[row]);
        }
    }
    Ok(())
}

/// Column `column` of `batch` as primitive `T`, resolved once per batch.
pub(crate) fn primitive_column<T: arrow_array::ArrowPrimitiveType>(
    batch: &RecordBatch,
    column: usize,
) -> Result<&arrow_array::PrimitiveArray<T>, ExecError> {
    batch.column(column).as_primitive_opt::<T>().ok_or_else(|| {
        ExecError::Internal(format!(
            "aggregate argument {column} is {}, not {}",
            batch.column(column).data_type(),
            T::DATA_TYPE
        ))
    })
}

/// Grows `v` to `len` with `fill`.
pub(crate) fn grow<T: Clone>(v: &mut Vec<T>, len: usize, fill: T) {
    if v.len() < len {
        v.resize(len, fill);
    }
}

/// How much a slot holds (values for SUM, rows for a group). A retracting input needs the
/// count added less the count retracted; where nothing is retracted, whether anything was
/// added is all there is to know, and a bit per slot says it (for a group aggregate's SUM(INT)
/// and its row count, 1 bit each where a count took 8 bytes).
pub(crate) enum HeldCount {
    Counted(PagedVec<i64>),
    Seen(PagedBits),
}

impl HeldCount {
    /// Counts for an input that retracts, bits for one that does not.
    pub(crate) fn new(retracts: bool) -> Self {
        if retracts {
            HeldCount::Counted(PagedVec::new())
        } else {
            HeldCount::Seen(PagedBits::default())
        }
    }

    pub(crate) fn resize(&mut self, slots: usize) {
        match self {
            HeldCount::Counted(counts) => counts.grow(slots, 0),
            HeldCount::Seen(seen) => seen.grow(slots),
        }
    }

    /// The values a slot holds (1 for "some" where they are not counted).
    #[inline]
    pub(crate) fn get(&self, slot: usize) -> i64 {
        match self {
            HeldCount::Counted(counts) => counts[slot],
            HeldCount::Seen(seen) => i64::from(seen.get(slot)),
        }
    }

    #[inline]
    pub(crate) fn set(&mut self, slot: usize, count: i64) {
        match self {
            HeldCount::Counted(counts) => counts[slot] = count,
            HeldCount::Seen(seen) => seen.set(slot, count > 0),
        }
    }

    /// Adds `delta` (negative: retracted) to a slot, giving what it then holds.
    #[inline]
    pub(crate) fn add(&mut self, slot: usize, delta: i64) -> i64 {
        match self {
            HeldCount::Counted(counts) => {
                counts[slot] += delta;
                counts[slot]
            }
            HeldCount::Seen(seen) => {
                debug_assert!(delta > 0, "a retraction counted in bits");
                seen.set(slot, true);
                1
            }
        }
    }

    /// The counts as they are now ([`GroupsAccumulator::freeze`]).
    pub(crate) fn freeze(&self) -> FrozenHeld {
        match self {
            HeldCount::Counted(counts) => FrozenHeld::Counted(counts.freeze()),
            HeldCount::Seen(seen) => FrozenHeld::Seen(seen.freeze()),
        }
    }
}

/// A [`HeldCount`] as it was when frozen.
pub(crate) enum FrozenHeld {
    Counted(FrozenVec<i64>),
    Seen(FrozenBits),
}

impl FrozenHeld {
    #[inline]
    pub(crate) fn get(&self, slot: usize) -> i64 {
        match self {
            FrozenHeld::Counted(counts) => counts[slot],
            FrozenHeld::Seen(seen) => i64::from(seen.get(slot)),
        }
    }
}

/// A null buffer from one validity flag per output row (`None` when all are valid).
pub(crate) fn nulls_of(valid: Vec<bool>) -> Option<arrow_buffer::NullBuffer> {
    if valid.iter().all(|v| *v) {
        None
    } else {
        Some(arrow_buffer::NullBuffer::from(valid))
    }
}

/// Reads a snapshot written with the `put_*` functions, failing on truncated input.
pub struct StateReader<'a> {
    bytes: &'a [u8],
}

impl<'a> StateReader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        StateReader { bytes }
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ExecError> {
        if self.bytes.len() < n {
            return Err(ExecError::Internal("truncated operator state".into()));
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }

    pub fn u8(&mut self) -> Result<u8, ExecError> {
        Ok(self.take(1)?[0])
    }

    pub fn u32(&mut self) -> Result<u32, ExecError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or([0; 4]),
        ))
    }

    pub fn i64(&mut self) -> Result<i64, ExecError> {
        Ok(i64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or([0; 8]),
        ))
    }

    pub fn i128(&mut self) -> Result<i128, ExecError> {
        Ok(i128::from_le_bytes(
            self.take(16)?.try_into().unwrap_or([0; 16]),
        ))
    }

    /// Bytes written by [`put_bytes`].
    pub fn bytes(&mut self) -> Result<&'a [u8], ExecError> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    /// A native value written by [`put_native`].
    pub fn native<N: arrow_buffer::ArrowNativeType>(&mut self) -> Result<N, ExecError> {
        let bytes = self.take(std::mem::size_of::<N>())?;
        // SAFETY: `bytes` holds exactly `size_of::<N>()` bytes, and `ArrowNativeType` is
        // sealed to plain numbers (integers, floats, intervals, i256) for which any bit
        // pattern is a value; an unaligned read copies them out of the state file.
        Ok(unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<N>()) })
    }
}

pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn put_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn put_i128(out: &mut Vec<u8>, v: i128) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn put_bytes(out: &mut Vec<u8>, v: &[u8]) {
    put_u32(out, v.len() as u32);
    out.extend_from_slice(v);
}

/// A native value's in-memory image (snapshots are read back on the same architecture).
pub fn put_native<N: arrow_buffer::ArrowNativeType>(out: &mut Vec<u8>, v: N) {
    out.extend_from_slice(arrow_buffer::ToByteSlice::to_byte_slice(&v));
}

/// Whether every one of `columns` is non-NULL at `row`.
pub(crate) fn all_valid(columns: &[&dyn Array], row: usize) -> bool {
    columns.iter().all(|c| c.is_valid(row))
}

/// Columns `columns` of `batch`.
pub(crate) fn columns_of(batch: &RecordBatch, columns: &[usize]) -> Vec<ArrayRef> {
    columns.iter().map(|&c| batch.column(c).clone()).collect()
}
