//! Aggregate calls and group windows as the planner hands them to aggregate operators: what
//! is computed, over which input columns, with which result type. The binder makes them; the
//! stream plan's aggregate nodes carry them; the operators in `exec/aggregate/` run them.

use crate::types::{DataType, TimeAttribute};

/// An aggregate function (Flink's built-ins of the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AggregateFunction {
    /// `COUNT(*)` when the call has no arguments, else the rows where every argument is
    /// not NULL.
    Count,
    Sum,
    Min,
    Max,
    Avg,
    /// The first non-NULL value, in arrival order.
    FirstValue,
    /// The last non-NULL value, in arrival order.
    LastValue,
    /// The non-NULL values joined by a separator (`,`, or the second argument).
    ListAgg,
    /// The sum of squared deviations from the mean, a DOUBLE (Flink 2.3's
    /// `$WELFORD_M2$1`): STDDEV_POP, STDDEV_SAMP, VAR_POP and VAR_SAMP divide it by COUNT.
    WelfordM2,
    /// `GROUPING(k)`, `GROUPING_ID(k1, k2, …)`: which of the keys (its arguments) the row's
    /// grouping set leaves out, a bit each (1: left out), the first argument highest. Read
    /// off the grouping set's number (`$e`) above the aggregate, never accumulated.
    Grouping,
    GroupingId,
    /// ROW_NUMBER, RANK and DENSE_RANK as OVER aggregates (streaming, ordered by time).
    RowNumber,
    Rank,
    DenseRank,
    /// The one value of a group (Calcite's `SINGLE_VALUE` under a scalar subquery that may
    /// have more than one row); a second row fails the job.
    SingleValue,
    /// `JSON_ARRAYAGG(v [ABSENT | NULL ON NULL])`: the values' JSON texts (its argument is
    /// `JSON_STRING(v)`) in arrival order, NULLs left out or written as `null`.
    JsonArrayAgg {
        null_on_null: bool,
    },
    /// `JSON_OBJECTAGG(k VALUE v [NULL | ABSENT ON NULL])`: an object of key and JSON text
    /// pairs, keys in order; a key twice in a group fails the job.
    JsonObjectAgg {
        null_on_null: bool,
    },
    /// An aggregate function a program registered (written in Rust).
    User(crate::function::user::UserAggregateRef),
    /// `LAG(x [, offset])` OVER a window from the partition's first row: the value `offset`
    /// rows before (1 when not written, which plans then do not print).
    Lag {
        offset: Option<u32>,
    },
}

impl AggregateFunction {
    /// The name as Flink's plans print it (`COUNT`, `SUM`, …).
    pub fn name(self) -> &'static str {
        match self {
            AggregateFunction::Count => "COUNT",
            AggregateFunction::Sum => "SUM",
            AggregateFunction::Min => "MIN",
            AggregateFunction::Max => "MAX",
            AggregateFunction::Avg => "AVG",
            AggregateFunction::FirstValue => "FIRST_VALUE",
            AggregateFunction::LastValue => "LAST_VALUE",
            AggregateFunction::ListAgg => "LISTAGG",
            AggregateFunction::Grouping => "GROUPING",
            AggregateFunction::GroupingId => "GROUPING_ID",
            AggregateFunction::RowNumber => "ROW_NUMBER",
            AggregateFunction::Rank => "RANK",
            AggregateFunction::DenseRank => "DENSE_RANK",
            AggregateFunction::SingleValue => "SINGLE_VALUE",
            AggregateFunction::WelfordM2 => "$WELFORD_M2$1",
            AggregateFunction::JsonArrayAgg {
                null_on_null: false,
            } => "JSON_ARRAYAGG_ABSENT_ON_NULL",
            AggregateFunction::JsonArrayAgg { null_on_null: true } => "JSON_ARRAYAGG_NULL_ON_NULL",
            AggregateFunction::JsonObjectAgg {
                null_on_null: false,
            } => "JSON_OBJECTAGG_ABSENT_ON_NULL",
            AggregateFunction::JsonObjectAgg { null_on_null: true } => {
                "JSON_OBJECTAGG_NULL_ON_NULL"
            }
            AggregateFunction::User(u) => u.0.name,
            AggregateFunction::Lag { .. } => "LAG",
        }
    }
}

/// An aggregate call as Flink's plan nodes print it: `COUNT(DISTINCT url) FILTER $f3 AS c`,
/// `*` for no arguments, `function` the name to print, `alias` after `AS`, `name` the input
/// columns' names.
pub fn call_text(
    call: &AggregateCall,
    function: &str,
    alias: &str,
    name: &dyn Fn(usize) -> String,
) -> String {
    let args = if call.args.is_empty() {
        "*".to_string()
    } else {
        let mut args: Vec<String> = call.args.iter().map(|&a| name(a)).collect();
        // LAG's offset is a constant of the call, printed as written.
        if let AggregateFunction::Lag {
            offset: Some(offset),
        } = call.function
        {
            args.push(offset.to_string());
        }
        args.join(", ")
    };
    let distinct = if call.distinct { "DISTINCT " } else { "" };
    let filter = call
        .filter
        .map(|f| format!(" FILTER {}", name(f)))
        .unwrap_or_default();
    format!("{function}({distinct}{args}){filter} AS {alias}")
}

/// One aggregate of a GROUP BY, over columns of the aggregate node's input.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregateCall {
    pub function: AggregateFunction,
    /// Input column indices (empty: `COUNT(*)`).
    pub args: Vec<usize>,
    /// `COUNT(DISTINCT x)`: each distinct argument value counts once per group.
    pub distinct: bool,
    /// `FILTER (WHERE …)`: an input column of type BOOLEAN; only rows where it is TRUE count.
    pub filter: Option<usize>,
    /// The result type, as Flink derives it (`COUNT` is `BIGINT NOT NULL`, `SUM(INT)` is
    /// `INT`, `AVG(INT)` is `INT`, …).
    pub data_type: DataType,
    /// The output column's name (`EXPR$1`, or the alias).
    pub name: String,
}

/// The windows of a legacy group window (`GROUP BY TUMBLE(ts, INTERVAL …)`) or of a windowing
/// table-valued function (`TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), …))`). Sizes are in
/// milliseconds and always positive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupWindowKind {
    /// `TUMBLE(ts, size)`: windows `[k·size, (k+1)·size)`.
    Tumble { size: i64 },
    /// `HOP(ts, slide, size)`: windows of `size` starting every `slide`.
    Hop { slide: i64, size: i64 },
    /// `SESSION(ts, gap)`: rows closer than `gap` share a window, which ends `gap` after its
    /// last row.
    Session { gap: i64 },
    /// `CUMULATE(…, step, size)` (TVF only): windows `[s, s + k·step)` for `k = 1 …
    /// size/step`, `s` a multiple of `size`; `size` is a multiple of `step`.
    Cumulate { step: i64, size: i64 },
}

/// A group window over a time attribute of the aggregate's input.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupWindow {
    pub kind: GroupWindowKind,
    /// The time attribute column, an input column index.
    pub time_column: usize,
    /// Rowtime (fires on watermarks) or proctime (fires on the clock).
    pub time_attribute: TimeAttribute,
    /// `TIMESTAMP(3)` (windows ignore the zone) or `TIMESTAMP_LTZ(3)` (windows are aligned
    /// in the session zone's wall clock, DST-correct).
    pub time_type: DataType,
    /// A TVF's `offset`: window starts are shifted by it (0 for legacy group windows).
    pub offset: i64,
}

/// A window property a group window aggregate appends after its keys and aggregates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowProperty {
    /// `TUMBLE_START` …: the window's start, `TIMESTAMP(3) NOT NULL`, wall clock.
    Start,
    /// `TUMBLE_END` …: the window's end (exclusive), `TIMESTAMP(3) NOT NULL`.
    End,
    /// `TUMBLE_ROWTIME` …: end − 1 ms, a rowtime attribute of the time column's type.
    Rowtime,
    /// `TUMBLE_PROCTIME` …: a proctime attribute, `TIMESTAMP_LTZ(3)`.
    Proctime,
}
