//! Functions a program registers (Flink's user-defined scalar functions, written in Rust):
//! `StreamTableEnvironment::create_temporary_function` makes one a temporary system
//! function of the session, which SQL calls by name before the built-ins (as Flink resolves a
//! temporary system function first). A registered function gets a [`FunctionDef`] like a
//! built-in's, so plans, EXPLAIN and evaluation treat its calls as any other call; the
//! definition lives as long as the program (one per registration).

use std::sync::Arc;

use arrow_array::{Array, ArrayRef};

use super::{EvalContext, EvalError, Evaluation, FunctionDef, Signature};
use crate::types::DataType;

/// A scalar function computed a column at a time.
pub trait ScalarFunction: Send + Sync {
    /// The types the call's arguments are cast to and the type it returns, for the types it
    /// is called with (Flink's type inference); an error refuses the call, its message shown
    /// after Flink's "Cannot apply" line.
    fn signature(&self, args: &[DataType]) -> Result<Signature, String>;

    /// The results of one batch: `args` holds one array per argument, each `rows` long and
    /// of the signature's type; the result must be `rows` long and of the return type. An
    /// error fails the job with its message.
    fn eval(&self, args: &[ArrayRef], rows: usize) -> Result<ArrayRef, String>;

    /// Whether the same arguments always give the same result (Flink's `isDeterministic`).
    fn deterministic(&self) -> bool {
        true
    }
}

/// A table function computed a batch at a time (Flink's user-defined table function): each
/// input row gives zero or more rows of the function's columns, which `LATERAL TABLE(f(…))`
/// joins with it.
pub trait TableFunction: Send + Sync {
    /// The types the call's arguments are cast to and the columns each result row has, for
    /// the types it is called with; an error refuses the call.
    fn signature(&self, args: &[DataType]) -> Result<TableSignature, String>;

    /// The rows of one batch: `args` holds one array per argument, each `rows` long. The
    /// result lists, for each row it makes, the input row it belongs to (in input order)
    /// and the columns of all of them. An error fails the job with its message.
    fn eval(&self, args: &[ArrayRef], rows: usize) -> Result<TableRows, String>;
}

/// A table function's typing for one call: its arguments' types and its columns.
pub struct TableSignature {
    pub args: Vec<DataType>,
    pub columns: Vec<crate::types::Field>,
}

/// The rows a table function made for a batch: per row its input row (non-decreasing),
/// and one array per column.
pub struct TableRows {
    pub input_rows: Vec<u32>,
    pub columns: Vec<ArrayRef>,
}

/// A registered table function with its name (lower-cased, as plans show it).
#[derive(Clone)]
pub struct UserTableFunction {
    pub name: String,
    pub function: Arc<dyn TableFunction>,
}

impl std::fmt::Debug for UserTableFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UserTableFunction({})", self.name)
    }
}

/// An aggregate function written in Rust (Flink's user-defined aggregate function): its
/// typing, and an accumulator per aggregate call that holds the state of many groups at once.
pub trait UserAggregateFunction: Send + Sync {
    /// The types the call's arguments are cast to and its result type, for the types it is
    /// called with; an error refuses the call.
    fn signature(&self, args: &[DataType]) -> Result<Signature, String>;

    /// A new, empty accumulator.
    fn accumulator(&self) -> Box<dyn UserAccumulator>;

    /// Whether its accumulators take rows back ([`UserAccumulator::retract`]), which an
    /// updating input needs (Flink's `retract` method).
    fn takes_retractions(&self) -> bool {
        false
    }
}

/// The state of one aggregate call for many groups, each a number from 0 the operator hands
/// out (Flink's accumulator, one per group, kept side by side).
pub trait UserAccumulator: Send {
    /// Makes room for groups `0..groups`, new ones empty.
    fn resize(&mut self, groups: usize);
    /// Adds row `rows[i]` (of `args`, one array per argument, of the signature's types) to
    /// group `groups[i]`, for every `i`.
    fn update(&mut self, args: &[ArrayRef], rows: &[u32], groups: &[u32]) -> Result<(), String>;
    /// Takes those rows back out (only if the function takes retractions).
    fn retract(
        &mut self,
        _args: &[ArrayRef],
        _rows: &[u32],
        _groups: &[u32],
    ) -> Result<(), String> {
        Err("it takes no retractions".into())
    }
    /// Folds group `from` into `into` (merged session windows).
    fn merge(&mut self, into: u32, from: u32);
    /// The results of `groups`, in that order, of the signature's result type.
    fn evaluate(&self, groups: &[u32]) -> Result<ArrayRef, String>;
    /// Empties `group` for reuse.
    fn free(&mut self, group: u32);
    /// `group`'s state for a checkpoint.
    fn save(&self, group: u32) -> Vec<u8>;
    /// Reads back into the empty `group` what [`UserAccumulator::save`] gave.
    fn load(&mut self, group: u32, state: &[u8]) -> Result<(), String>;
}

/// A registered aggregate function with its name (lower-cased, as plans show it).
pub struct UserAggregate {
    pub name: &'static str,
    pub function: Arc<dyn UserAggregateFunction>,
}

/// A registered aggregate function as a plan's aggregate calls name it: compared by identity.
#[derive(Clone, Copy)]
pub struct UserAggregateRef(pub &'static UserAggregate);

impl UserAggregateRef {
    /// Registers `function` as `name` for the program's life (as scalar functions are).
    pub fn define(name: &str, function: Arc<dyn UserAggregateFunction>) -> Self {
        UserAggregateRef(Box::leak(Box::new(UserAggregate {
            name: Box::leak(name.to_lowercase().into_boxed_str()),
            function,
        })))
    }
}

impl PartialEq for UserAggregateRef {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for UserAggregateRef {}

impl std::hash::Hash for UserAggregateRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::hash(self.0, state)
    }
}

impl std::fmt::Debug for UserAggregateRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UserAggregate({})", self.0.name)
    }
}

/// A registered function, as a [`FunctionDef`] holds it.
#[derive(Clone)]
pub struct UserFunction(pub Arc<dyn ScalarFunction>);

impl std::fmt::Debug for UserFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UserFunction")
    }
}

/// The definition of a function registered as `name` (lower-cased, as Flink normalizes a
/// function's name, and as EXPLAIN shows its calls).
pub fn define(name: &str, function: Arc<dyn ScalarFunction>) -> &'static FunctionDef {
    let evaluation = if function.deterministic() {
        Evaluation::Deterministic
    } else {
        Evaluation::NonDeterministic
    };
    Box::leak(Box::new(FunctionDef {
        name: Box::leak(name.to_lowercase().into_boxed_str()),
        resolve: |_| Err("a registered function types its calls itself".into()),
        kernel: |_, _, _| {
            Err(EvalError::Internal(
                "a registered function computes itself".into(),
            ))
        },
        evaluation,
        user: Some(UserFunction(function)),
    }))
}

impl FunctionDef {
    /// How a call with arguments of `types` is typed.
    pub fn signature(&self, types: &[DataType]) -> Result<Signature, String> {
        match &self.user {
            Some(user) => user.0.signature(types),
            None => (self.resolve)(types),
        }
    }

    /// The call's results over argument arrays of the batch's length.
    pub fn evaluate(
        &self,
        args: &[ArrayRef],
        ctx: &EvalContext,
        return_type: &DataType,
    ) -> Result<ArrayRef, EvalError> {
        let Some(user) = &self.user else {
            return (self.kernel)(args, ctx, return_type);
        };
        let rows = ctx.num_rows;
        let result = user
            .0
            .eval(args, rows)
            .map_err(|m| EvalError::Invalid(format!("{}: {m}", self.name)))?;
        // A wrong result would be wrong rows downstream: it fails the job, naming the function.
        let expected = return_type.to_arrow();
        if result.len() != rows || result.data_type() != &expected {
            return Err(EvalError::Invalid(format!(
                "function {} returned {} values of Arrow type {} for {rows} rows of {} ({expected})",
                self.name,
                result.len(),
                result.data_type(),
                return_type.kind
            )));
        }
        if !return_type.nullable && result.null_count() > 0 {
            return Err(EvalError::Invalid(format!(
                "function {} returned NULL, but its return type is {} NOT NULL",
                self.name, return_type.kind
            )));
        }
        Ok(result)
    }
}
