//! Aggregate functions a program registered (`UserAggregateFunction`): their accumulator
//! behind the columnar [`GroupsAccumulator`] the operators drive. The argument columns and
//! the FILTER are resolved here, the program sees only its arguments' rows; what it returns
//! is checked (length, type), and its errors fail the job naming the function.

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType as ArrowType;

use super::{GroupsAccumulator, StateReader, filter_column, passes, put_bytes};
use crate::exec::error::ExecError;
use crate::function::EvalError;
use crate::function::user::{UserAccumulator, UserAggregateRef};

pub struct UserAggregateAccumulator {
    function: UserAggregateRef,
    inner: Box<dyn UserAccumulator>,
    /// The argument columns of the operator's input.
    args: Vec<usize>,
    filter: Option<usize>,
    result: ArrowType,
}

impl UserAggregateAccumulator {
    pub fn new(
        function: UserAggregateRef,
        args: Vec<usize>,
        filter: Option<usize>,
        result: ArrowType,
        retracts: bool,
    ) -> Result<Self, ExecError> {
        if retracts && !function.0.function.takes_retractions() {
            return Err(ExecError::Eval(EvalError::Invalid(format!(
                "aggregate function {} takes no retractions, which its updating input or bounded OVER frame needs",
                function.0.name
            ))));
        }
        Ok(UserAggregateAccumulator {
            inner: function.0.function.accumulator(),
            function,
            args,
            filter,
            result,
        })
    }

    fn failed(&self, message: String) -> ExecError {
        ExecError::Eval(EvalError::Invalid(format!(
            "{}: {message}",
            self.function.0.name
        )))
    }

    /// The argument columns and the (row, group) pairs the FILTER lets through.
    fn picked(
        &self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<Picked, ExecError> {
        let args = self.args.iter().map(|&c| batch.column(c).clone()).collect();
        let Some(filter) = filter_column(batch, self.filter)? else {
            return Ok((args, rows.to_vec(), slots.to_vec()));
        };
        let (rows, slots) = rows
            .iter()
            .zip(slots)
            .filter(|(r, _)| passes(Some(filter), **r as usize))
            .map(|(r, s)| (*r, *s))
            .unzip();
        Ok((args, rows, slots))
    }
}

/// The argument columns, and the rows and groups of the pairs a FILTER lets through.
type Picked = (Vec<ArrayRef>, Vec<u32>, Vec<u32>);

impl GroupsAccumulator for UserAggregateAccumulator {
    fn resize(&mut self, slots: usize) {
        self.inner.resize(slots);
    }

    fn update(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let (args, rows, slots) = self.picked(batch, rows, slots)?;
        self.inner
            .update(&args, &rows, &slots)
            .map_err(|m| self.failed(m))
    }

    fn retract(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        slots: &[u32],
    ) -> Result<(), ExecError> {
        let (args, rows, slots) = self.picked(batch, rows, slots)?;
        self.inner
            .retract(&args, &rows, &slots)
            .map_err(|m| self.failed(m))
    }

    fn merge(&mut self, into: u32, from: u32) {
        self.inner.merge(into, from);
    }

    fn evaluate(&self, slots: &[u32]) -> Result<ArrayRef, ExecError> {
        let result = self.inner.evaluate(slots).map_err(|m| self.failed(m))?;
        if result.len() != slots.len() || result.data_type() != &self.result {
            return Err(self.failed(format!(
                "returned {} values of Arrow type {} for {} groups of {}",
                result.len(),
                result.data_type(),
                slots.len(),
                self.result
            )));
        }
        Ok(result)
    }

    fn free(&mut self, slot: u32) {
        self.inner.free(slot);
    }

    fn write_slot(&self, slot: u32, out: &mut Vec<u8>) {
        put_bytes(out, &self.inner.save(slot));
    }

    fn read_slot(&mut self, slot: u32, input: &mut StateReader<'_>) -> Result<(), ExecError> {
        let state = input.bytes()?;
        self.inner
            .load(slot, state)
            .map_err(|m| ExecError::Checkpoint(format!("{}: {m}", self.function.0.name)))
    }
}
