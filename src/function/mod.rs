//! Built-in scalar functions: for each, how its type is derived from its arguments' types
//! (used by the binder) and the kernel that computes it a column at a time (used by the
//! executor). Operators (`+`, `=`, `AND`, `LIKE`, …) are functions here too, under their
//! symbol.
//!
//! A kernel receives one array per argument, already of the types its signature asked for
//! (the binder inserts the casts), all of the batch's length; literal arguments arrive as
//! arrays too. It returns an array of the resolved return type. Kernels never panic on data:
//! bad values give an [`EvalError`].

/// A [`FunctionDef`] table entry: `def!(name, resolver, kernel)` for a deterministic
/// function, `def!(name, resolver, kernel, evaluation)` otherwise.
macro_rules! def {
    ($name:expr, $resolve:expr, $kernel:expr) => {
        def!(
            $name,
            $resolve,
            $kernel,
            $crate::function::Evaluation::Deterministic
        )
    };
    ($name:expr, $resolve:expr, $kernel:expr, $eval:expr) => {
        $crate::function::FunctionDef {
            name: $name,
            resolve: $resolve,
            kernel: $kernel,
            evaluation: $eval,
            user: None,
        }
    };
}

pub mod array;
pub mod cast;
pub mod collection;
pub mod datetime;
pub mod json;
pub mod math;
pub mod operator;
pub mod string;
pub mod temporal;
pub mod user;

use std::sync::Arc;

use arrow_array::ArrayRef;

use crate::clock::Clock;
use crate::types::DataType;
use crate::types::time::SessionZone;

/// What a function resolves to for given argument types.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// The types the arguments must be cast to before the kernel sees them.
    pub args: Vec<DataType>,
    pub return_type: DataType,
}

impl Signature {
    pub fn new(args: Vec<DataType>, return_type: DataType) -> Self {
        Signature { args, return_type }
    }
}

/// How often a function's value is computed (the seed's rules on time functions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evaluation {
    /// Same arguments, same result.
    Deterministic,
    /// Reads the clock: per row in streaming mode, once per query in batch mode
    /// (CURRENT_TIMESTAMP, NOW(), LOCALTIME, …).
    QueryTime,
    /// Reads the clock for every row in both modes (PROCTIME(), CURRENT_ROW_TIMESTAMP()).
    RowTime,
    /// Differs per call without reading the clock (RAND, UUID).
    NonDeterministic,
}

pub type Resolver = fn(&[DataType]) -> Result<Signature, String>;
pub type Kernel = fn(&[ArrayRef], &EvalContext, &DataType) -> Result<ArrayRef, EvalError>;

/// One built-in function.
#[derive(Debug)]
pub struct FunctionDef {
    /// Upper-case SQL name, or the operator symbol.
    pub name: &'static str,
    pub resolve: Resolver,
    pub kernel: Kernel,
    pub evaluation: Evaluation,
    /// A function a program registered (`user.rs`): it types and computes its calls itself.
    pub user: Option<user::UserFunction>,
}

/// What kernels may read besides their arguments.
#[derive(Debug, Clone)]
pub struct EvalContext {
    pub zone: SessionZone,
    pub clock: Arc<dyn Clock>,
    /// The instant the query started (nanoseconds since the epoch); what `QueryTime`
    /// functions return in batch mode.
    pub query_start: i64,
    pub batch_mode: bool,
    /// Rows in the batch being evaluated (for functions without arguments).
    pub num_rows: usize,
}

impl EvalContext {
    /// A UTC, streaming-mode context over the system clock, for kernel tests.
    #[cfg(test)]
    pub fn for_tests(num_rows: usize) -> Self {
        EvalContext {
            zone: SessionZone::utc(),
            clock: Arc::new(crate::clock::SystemClock),
            query_start: 0,
            batch_mode: false,
            num_rows,
        }
    }

    pub fn with_rows(&self, num_rows: usize) -> Self {
        EvalContext {
            num_rows,
            ..self.clone()
        }
    }
}

/// A failure while computing a value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("{0}")]
    Invalid(String),
    #[error("internal error: {0}")]
    Internal(String),
    /// The results of a batch would pass what one Arrow column addresses (2 GiB of text): the
    /// caller evaluates fewer rows at a time.
    #[error("the results of one batch pass 2 GiB")]
    TooLarge,
}

/// `STRING` (VARCHAR of the maximum length), nullable or not.
pub fn string_type(nullable: bool) -> DataType {
    DataType {
        kind: crate::types::TypeKind::VarChar(crate::types::MAX_LENGTH),
        nullable,
    }
}

/// An Arrow failure inside a kernel: a bug, not bad data.
pub fn internal_error(e: impl std::fmt::Display) -> EvalError {
    EvalError::Internal(e.to_string())
}

/// Nullable if any argument is.
pub fn any_nullable(args: &[DataType]) -> bool {
    args.iter().any(|a| a.nullable)
}

/// Checks that `name` got between `min` and `max` arguments.
pub fn expect_arg_count(
    name: &str,
    args: &[DataType],
    min: usize,
    max: usize,
) -> Result<(), String> {
    if args.len() < min || args.len() > max {
        let expected = if min == max {
            min.to_string()
        } else {
            format!("{min} to {max}")
        };
        return Err(format!(
            "{name} expects {expected} arguments, got {}",
            args.len()
        ));
    }
    Ok(())
}

/// Looks a function up by name (case-insensitive).
pub fn lookup(name: &str) -> Option<&'static FunctionDef> {
    FAMILIES
        .iter()
        .flat_map(|family| family.iter())
        .find(|f| f.name.eq_ignore_ascii_case(name))
}

/// Every family of built-in functions.
const FAMILIES: &[&[FunctionDef]] = &[
    operator::FUNCTIONS,
    string::FUNCTIONS,
    string::REGEX_FUNCTIONS,
    string::URL_FUNCTIONS,
    string::CHARSET_FUNCTIONS,
    string::PRINTF_FUNCTIONS,
    temporal::FUNCTIONS,
    datetime::FUNCTIONS,
    collection::FUNCTIONS,
    array::FUNCTIONS,
    json::FUNCTIONS,
    math::FUNCTIONS,
];

/// Registry entries the binder calls for syntax (`FLOOR(x TO unit)`, `-x`, `a[i]`, the logical
/// operators, `LIKE`) rather
/// than functions a user can name.
const INTERNAL: &[&str] = &[
    "TIMESTAMPDIFF_NANOS",
    "DATETIME_MINUS_MILLIS",
    "DATETIME_MINUS_MONTHS",
    "FLOOR_TO",
    "CEIL_TO",
    "NEGATE",
    "ITEM",
    "AND",
    "OR",
    "NOT",
    "LIKE",
];

/// Functions the binder rewrites into other expressions, so they have no registry entry.
const BOUND_BY_BINDER: &[&str] = &[
    "IF",
    "NULLIF",
    "TYPEOF",
    "CURRENT_DATABASE",
    "CAST",
    "TRY_CAST",
    "YEAR",
    "QUARTER",
    "MONTH",
    "WEEK",
    "DAYOFYEAR",
    "DAYOFMONTH",
    "DAYOFWEEK",
    "HOUR",
    "MINUTE",
    "SECOND",
];

/// Names of all functions, for `SHOW FUNCTIONS` (operators and internal entries left out).
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<_> = FAMILIES
        .iter()
        .flat_map(|family| family.iter())
        .map(|f| f.name)
        .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .filter(|n| !INTERNAL.contains(n))
        .chain(BOUND_BY_BINDER.iter().copied())
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}
