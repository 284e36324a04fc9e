//! Logical plan nodes: what a query computes, before it is laid out as a stream job.

use std::sync::Arc;

use super::aggregate::{AggregateCall, GroupWindow, GroupWindowKind, WindowProperty};
use super::explain::{Spelling, TreeWriter, calcite_type_name, expr_text};
use super::expr::ScalarExpr;
use crate::catalog::TableDef;
use crate::types::{DataType, Field, Schema, TimeAttribute, TypeKind};

#[derive(Debug, Clone)]
pub enum LogicalPlan {
    /// Reads the physical columns of a table (in declared order).
    Scan(LogicalScan),
    /// Literal rows (`VALUES …`, or `SELECT` without `FROM`: one empty row).
    Values(LogicalValues),
    /// Computes `exprs` over each input row, keeping the rows where `filter` is TRUE.
    Calc(LogicalCalc),
    /// UNION ALL of inputs of the same schema.
    Union(LogicalUnion),
    /// A table's `WATERMARK FOR` clause: marks its rowtime column and says how watermarks
    /// are computed from each row; rows pass through unchanged.
    WatermarkAssigner(LogicalWatermarkAssigner),
    /// GROUP BY: one row per group (and group window) with the aggregates over its rows.
    Aggregate(LogicalAggregate),
    /// A windowing table-valued function (`TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), …))`):
    /// each input row once per window holding its time, with the window's bounds appended.
    WindowTableFunction(LogicalWindowTableFunction),
    /// A ranking window function (`ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)`): the input's
    /// rows with their rank appended.
    Over(LogicalOver),
    /// Aggregates over a window of each row's preceding rows (`SUM(x) OVER (PARTITION BY …
    /// ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)`): the input's rows with the
    /// calls' values appended.
    OverAggregate(LogicalOverAggregate),
    /// A join of two inputs: the left's columns, then the right's.
    Join(LogicalJoin),
    /// `CROSS JOIN UNNEST(array)` / `LEFT JOIN UNNEST(array) ON TRUE`: each input row once
    /// per element of an array (or map, or array of rows) computed from it, with the
    /// element's columns appended.
    Unnest(LogicalUnnest),
    /// `ORDER BY … [LIMIT n] [OFFSET m]` (or a LIMIT alone) over a query's rows.
    Sort(LogicalSort),
}

/// A query's ORDER BY (output columns) and LIMIT / OFFSET.
#[derive(Debug, Clone)]
pub struct LogicalSort {
    pub input: Box<LogicalPlan>,
    pub order: Vec<OrderKey>,
    pub offset: u64,
    pub fetch: Option<u64>,
    pub schema: Schema,
}

/// How a join keeps rows without a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinType {
    Inner,
    Left,
    Right,
    Full,
    /// `EXISTS`/`IN (subquery)`: each left row that has a match, once; the left's columns.
    Semi,
    /// `NOT EXISTS`/`NOT IN (subquery)`: each left row without a match; the left's columns.
    Anti,
}

impl JoinType {
    /// Whether a left row without a match is kept (padded with NULLs on the right).
    pub fn left_outer(self) -> bool {
        matches!(self, JoinType::Left | JoinType::Full)
    }

    /// Whether a right row without a match is kept.
    pub fn right_outer(self) -> bool {
        matches!(self, JoinType::Right | JoinType::Full)
    }

    /// As Calcite's `LogicalJoin` writes it: `inner`, `left`, `right`, `full`.
    pub fn calcite_name(self) -> &'static str {
        match self {
            JoinType::Inner => "inner",
            JoinType::Left => "left",
            JoinType::Right => "right",
            JoinType::Full => "full",
            JoinType::Semi => "semi",
            JoinType::Anti => "anti",
        }
    }

    /// As Flink's physical `Join` writes it: `InnerJoin`, `LeftOuterJoin`, ….
    pub fn flink_name(self) -> &'static str {
        match self {
            JoinType::Inner => "InnerJoin",
            JoinType::Left => "LeftOuterJoin",
            JoinType::Right => "RightOuterJoin",
            JoinType::Full => "FullOuterJoin",
            JoinType::Semi => "LeftSemiJoin",
            JoinType::Anti => "LeftAntiJoin",
        }
    }

    /// Whether the output has the right's columns (not a semi or anti join's).
    pub fn keeps_right(self) -> bool {
        !matches!(self, JoinType::Semi | JoinType::Anti)
    }
}

/// `left [INNER | LEFT | RIGHT | FULL] JOIN right ON condition`, or a comma (a cross join,
/// condition TRUE, its WHERE in a Calc above). The output is the left's columns, then the
/// right's, those of a side that may be missing made nullable; time attributes do not pass
/// a regular join (Flink materializes them).
#[derive(Debug, Clone)]
pub struct LogicalJoin {
    pub left: Box<LogicalPlan>,
    pub right: Box<LogicalPlan>,
    pub join_type: JoinType,
    /// Over the left's columns, then the right's.
    pub condition: ScalarExpr,
    /// `right FOR SYSTEM_TIME AS OF left.c`: the left's rowtime column `c` (an event-time
    /// temporal join, whose output keeps both sides' time attributes), and where the right
    /// table is written (line, column), for errors.
    pub temporal: Option<(usize, (u64, u64))>,
    /// A STATE_TTL hint's TTL for the left and the right input's state.
    pub state_ttl: [Option<TtlHint>; 2],
    /// The right side is a scalar subquery's one row (Calcite's `$SCALAR_QUERY` in the
    /// abstract syntax tree, where the join is not a node).
    pub scalar_query: bool,
    pub schema: Schema,
}

/// What a correlate joins each input row with.
#[derive(Debug, Clone)]
pub enum Generator {
    /// The elements of an UNNEST's collection, computed over the input's columns.
    Unnest(ScalarExpr),
    /// The rows of a registered table function (`LATERAL TABLE(f(…))`), its arguments over
    /// the input's columns.
    Function {
        function: crate::function::user::UserTableFunction,
        args: Vec<ScalarExpr>,
    },
}

impl Generator {
    /// Marks the input columns it reads.
    pub fn mark_columns(&self, used: &mut [bool]) {
        match self {
            Generator::Unnest(collection) => collection.mark_columns(used),
            Generator::Function { args, .. } => {
                for a in args {
                    a.mark_columns(used);
                }
            }
        }
    }

    /// Its arguments remapped by `f` (a column's new position).
    pub fn map_columns(&self, f: &mut dyn FnMut(usize, &DataType) -> ScalarExpr) -> Generator {
        match self {
            Generator::Unnest(c) => Generator::Unnest(c.map_columns(f)),
            Generator::Function { function, args } => Generator::Function {
                function: function.clone(),
                args: args.iter().map(|a| a.map_columns(f)).collect(),
            },
        }
    }

    /// The call as plans print it (`$UNNEST_ROWS$1(tags)`, `split(s)`), its columns named
    /// by `names`.
    pub fn invocation(
        &self,
        with_ordinality: bool,
        names: &[String],
        spelling: Spelling,
    ) -> String {
        match self {
            Generator::Unnest(collection) => {
                let function = if with_ordinality {
                    "$UNNEST_ROWS_WITH_ORDINALITY$1"
                } else {
                    "$UNNEST_ROWS$1"
                };
                format!("{function}({})", expr_text(collection, names, spelling))
            }
            Generator::Function { function, args } => {
                let args: Vec<String> =
                    args.iter().map(|a| expr_text(a, names, spelling)).collect();
                format!("{}({})", function.name, args.join(", "))
            }
        }
    }
}

/// What an UNNEST makes of each element: an array's element, a map's key and value, or an
/// array of rows' fields, then its position from 1 `WITH ORDINALITY`; or what a table
/// function makes of each row (`LATERAL TABLE`).
#[derive(Debug, Clone)]
pub struct LogicalUnnest {
    pub input: Box<LogicalPlan>,
    /// The collection, or the table function's call.
    pub generator: Generator,
    pub with_ordinality: bool,
    /// Inner (a row with an empty or NULL collection leaves nothing) or Left (it leaves once,
    /// with NULL elements).
    pub join_type: JoinType,
    /// Calcite's correlation id (`$cor3`), drawn from the session as Flink's planner does.
    pub correlation: u32,
    /// The input's columns, then the element's as named by the query.
    pub schema: Schema,
}

impl LogicalUnnest {
    /// The element's columns (and the ordinality) an UNNEST of `collection` makes, named as
    /// Calcite's table function names them (`f0`; a row's fields; `EXPR$0` and `ORDINALITY`
    /// with the ordinality), all nullable for a `left` one, or `None` if it is no collection.
    pub fn element_fields(
        collection: &DataType,
        with_ordinality: bool,
        left: bool,
    ) -> Option<Vec<Field>> {
        let mut fields = match &collection.kind {
            TypeKind::Array(element) => match &element.kind {
                TypeKind::Row(row) => row
                    .iter()
                    .map(|(name, t)| {
                        let mut t = t.clone();
                        t.nullable |= element.nullable;
                        Field::new(name, t)
                    })
                    .collect(),
                _ => vec![Field::new("f0", element.as_ref().clone())],
            },
            TypeKind::Map(key, value) => vec![
                Field::new("f0", key.as_ref().clone()),
                Field::new("f1", value.as_ref().clone()),
            ],
            _ => return None,
        };
        if with_ordinality {
            if fields.len() == 1 && fields[0].name == "f0" {
                fields[0].name = "EXPR$0".into();
            }
            fields.push(Field::new("ORDINALITY", DataType::not_null(TypeKind::Int)));
        }
        for field in &mut fields {
            field.data_type.nullable |= left;
        }
        Some(fields)
    }
}

impl LogicalUnnest {
    /// Calcite's tree: the correlate over the input and, for its right side, the element
    /// columns projected from an `Uncollect` of the collection read through the correlation.
    fn ast_into(&self, tree: &mut TreeWriter, prefix: &mut Vec<bool>) {
        let cor = format!("$cor{}", self.correlation);
        let input = self.input.schema();
        let mut required = vec![false; input.len()];
        self.generator.mark_columns(&mut required);
        let required: Vec<String> = (0..input.len())
            .filter(|&i| required[i])
            .map(|i| i.to_string())
            .collect();
        tree.line(
            prefix,
            &format!(
                "LogicalCorrelate(correlation=[{cor}], joinType=[{}], requiredColumns=[{{{}}}])",
                self.join_type.calcite_name(),
                required.join(", ")
            ),
        );
        prefix.push(false);
        self.input.ast_into(tree, prefix);
        prefix.pop();
        prefix.push(true);
        let names: Vec<String> = input
            .fields
            .iter()
            .map(|f| format!("{cor}.{}", f.name))
            .collect();
        let collection = match &self.generator {
            Generator::Unnest(collection) => collection,
            // Calcite's scan of the function's rows.
            function @ Generator::Function { .. } => {
                let columns = Schema::new(self.schema.fields[input.len()..].to_vec());
                tree.line(
                    prefix,
                    &format!(
                        "LogicalTableFunctionScan(invocation=[{}], rowType=[{}])",
                        function.invocation(false, &names, Spelling::Ast),
                        crate::plan::explain::calcite_row_type(&columns)
                    ),
                );
                prefix.pop();
                return;
            }
        };
        let elements: Vec<String> = self.schema.fields[input.len()..]
            .iter()
            .enumerate()
            .map(|(i, f)| format!("{}=[${i}]", f.name))
            .collect();
        tree.line(prefix, &format!("LogicalProject({})", elements.join(", ")));
        prefix.push(true);
        tree.line(
            prefix,
            if self.with_ordinality {
                "Uncollect(withOrdinality=[true])"
            } else {
                "Uncollect"
            },
        );
        prefix.push(true);
        let name = match collection {
            ScalarExpr::Column { index, .. } => input.fields[*index].name.clone(),
            _ => "EXPR$0".into(),
        };
        tree.line(
            prefix,
            &format!(
                "LogicalProject({name}=[{}])",
                expr_text(collection, &names, Spelling::Ast)
            ),
        );
        prefix.push(true);
        tree.line(prefix, "LogicalValues(tuples=[[{ 0 }]])");
        for _ in 0..4 {
            prefix.pop();
        }
    }
}

/// The ranking functions of an OVER clause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankFunction {
    RowNumber,
    Rank,
    DenseRank,
}

impl RankFunction {
    pub fn name(self) -> &'static str {
        match self {
            RankFunction::RowNumber => "ROW_NUMBER",
            RankFunction::Rank => "RANK",
            RankFunction::DenseRank => "DENSE_RANK",
        }
    }
}

/// One ORDER BY item of an OVER clause: an input column, its direction and where NULLs go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderKey {
    pub column: usize,
    pub descending: bool,
    pub nulls_first: bool,
}

/// `ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)` (or RANK, DENSE_RANK) over the input: the
/// input's columns, then the rank (`BIGINT NOT NULL`). A query keeps only some ranks by a
/// filter above (`WHERE rownum <= N`), which the stream plan turns into a Top-N or a
/// deduplication.
#[derive(Debug, Clone)]
pub struct LogicalOver {
    pub input: Box<LogicalPlan>,
    pub function: RankFunction,
    /// Input columns.
    pub partition: Vec<usize>,
    pub order: Vec<OrderKey>,
    /// Where the call stands in the statement, for the errors of later stages.
    pub position: (u64, u64),
    pub schema: Schema,
}

/// The OVER aggregate calls of a SELECT list, all over one window (Flink's streaming
/// OverAggregate takes one): the input's columns, then one per call (`w0$o0`, …). The calls
/// are Calcite's after its rewrites: SUM is `$SUM0` under a COUNT test, AVG their quotient
/// (the binder builds those expressions in the project above).
#[derive(Debug, Clone)]
pub struct LogicalOverAggregate {
    pub input: Box<LogicalPlan>,
    /// Input columns.
    pub partition: Vec<usize>,
    /// The time attribute (an input column) ordering the window, ascending.
    pub order: usize,
    pub frame: OverFrame,
    pub calls: Vec<OverCall>,
    pub schema: Schema,
}

/// An OVER window's frame: the preceding rows each row's aggregates cover, up to the row
/// itself (`CURRENT ROW`; Flink runs no FOLLOWING frame in streaming).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverFrame {
    /// ROWS, else RANGE.
    pub rows: bool,
    /// `None`: UNBOUNDED PRECEDING; else how many rows (ROWS) or milliseconds (RANGE).
    pub preceding: Option<i64>,
    /// RANGE's bound as Calcite writes the literal (`1000:INTERVAL SECOND`).
    pub interval_text: String,
}

impl OverFrame {
    /// The frame as the abstract syntax tree writes it after the ORDER BY (nothing for
    /// Calcite's default, RANGE UNBOUNDED PRECEDING).
    pub fn ast_text(&self) -> String {
        match (self.rows, self.preceding) {
            (false, None) => String::new(),
            (true, None) => " ROWS UNBOUNDED PRECEDING".into(),
            (true, Some(n)) => format!(" ROWS {n} PRECEDING"),
            (false, Some(_)) => format!(" RANGE {} PRECEDING", self.interval_text),
        }
    }

    /// The frame as the physical plan writes it (` RANGE BETWEEN 1000 PRECEDING AND CURRENT
    /// ROW`, with Flink's leading space).
    pub fn plan_text(&self) -> String {
        let bound = self
            .preceding
            .map_or("UNBOUNDED".to_string(), |n| n.to_string());
        let unit = if self.rows { "ROWS" } else { "RANGE" };
        format!(" {unit} BETWEEN {bound} PRECEDING AND CURRENT ROW")
    }
}

/// One aggregate of an OVER window: its arguments are expressions over the input (a Calc
/// below computes those that are not columns).
#[derive(Debug, Clone)]
pub struct OverCall {
    pub function: super::aggregate::AggregateFunction,
    pub args: Vec<ScalarExpr>,
    pub distinct: bool,
    pub data_type: crate::types::DataType,
}

impl OverCall {
    /// The name a plan prints: SUM only comes from Calcite's rewrite, as `$SUM0`.
    pub fn function_name(&self) -> &'static str {
        match self.function {
            super::aggregate::AggregateFunction::Sum => "$SUM0",
            f => f.name(),
        }
    }
}

impl LogicalOverAggregate {
    /// Call `i` as Calcite writes it in a project: `COUNT($1) OVER (PARTITION BY $0 ORDER
    /// BY $2 NULLS FIRST ROWS 1 PRECEDING)`.
    pub fn call_text(&self, i: usize) -> String {
        let call = &self.calls[i];
        let mut args: Vec<String> = call
            .args
            .iter()
            .map(|a| expr_text(a, &[], Spelling::Ast))
            .collect();
        if let super::aggregate::AggregateFunction::Lag {
            offset: Some(offset),
        } = call.function
        {
            args.push(offset.to_string());
        }
        let distinct = if call.distinct { "DISTINCT " } else { "" };
        let mut window = Vec::new();
        if !self.partition.is_empty() {
            let keys: Vec<String> = self.partition.iter().map(|k| format!("${k}")).collect();
            window.push(format!("PARTITION BY {}", keys.join(", ")));
        }
        window.push(format!("ORDER BY ${} NULLS FIRST", self.order));
        format!(
            "{}({distinct}{}) OVER ({}{})",
            call.function_name(),
            args.join(", "),
            window.join(" "),
            self.frame.ast_text()
        )
    }
}

/// `TUMBLE`, `HOP` or `CUMULATE` over a table: the input's columns, then `window_start`,
/// `window_end` (wall-clock `TIMESTAMP(3) NOT NULL`) and `window_time` (end − 1 ms, a time
/// attribute of the time column's kind).
#[derive(Debug, Clone)]
pub struct LogicalWindowTableFunction {
    pub input: Box<LogicalPlan>,
    /// `TUMBLE`, `HOP`, `CUMULATE` or `SESSION`.
    pub function: &'static str,
    /// SESSION's `PARTITION BY` columns, input columns (sessions are per their values).
    pub partition: Vec<usize>,
    /// The windows; `time_column` is an input column.
    pub window: GroupWindow,
    /// The time column's name as written in DESCRIPTOR.
    pub column: String,
    /// The interval arguments as Calcite writes them (`10000:INTERVAL SECOND`).
    pub intervals: Vec<String>,
    pub schema: Schema,
}

impl LogicalOver {
    /// `ROW_NUMBER() OVER (PARTITION BY $4, $5 ORDER BY $0 DESC NULLS LAST)`, as Calcite
    /// writes the call.
    pub fn call_text(&self) -> String {
        let mut clauses = Vec::new();
        if !self.partition.is_empty() {
            let keys: Vec<String> = self.partition.iter().map(|k| format!("${k}")).collect();
            clauses.push(format!("PARTITION BY {}", keys.join(", ")));
        }
        let order: Vec<String> = self
            .order
            .iter()
            .map(|o| {
                let mut text = format!("${}", o.column);
                if o.descending {
                    text.push_str(" DESC");
                }
                text.push_str(if o.nulls_first {
                    " NULLS FIRST"
                } else {
                    " NULLS LAST"
                });
                text
            })
            .collect();
        if !order.is_empty() {
            clauses.push(format!("ORDER BY {}", order.join(", ")));
        }
        format!("{}() OVER ({})", self.function.name(), clauses.join(" "))
    }
}

impl LogicalWindowTableFunction {
    /// The columns the function appends: `window_start`, `window_end`, `window_time`.
    pub fn window_columns(&self) -> std::ops::Range<usize> {
        self.input.schema().len()..self.schema.len()
    }
}

#[derive(Debug, Clone)]
pub struct LogicalScan {
    pub table: Arc<TableDef>,
    /// The columns the source produces: the physical ones, then one per metadata key.
    pub schema: Schema,
    /// The metadata keys read (`file.path`, …), in the order their columns follow.
    pub metadata: Vec<String>,
}

impl LogicalScan {
    /// The physical columns alone, as the format decodes them.
    pub fn physical_schema(&self) -> Schema {
        let n = self.schema.len() - self.metadata.len();
        Schema::new(self.schema.fields[..n].to_vec())
    }
}

#[derive(Debug, Clone)]
pub struct LogicalValues {
    pub rows: Vec<Vec<ScalarExpr>>,
    pub schema: Schema,
}

#[derive(Debug, Clone)]
pub struct LogicalCalc {
    pub input: Box<LogicalPlan>,
    pub filter: Option<ScalarExpr>,
    pub exprs: Vec<ScalarExpr>,
    pub schema: Schema,
}

#[derive(Debug, Clone)]
pub struct LogicalWatermarkAssigner {
    pub input: Box<LogicalPlan>,
    /// The rowtime column, an index into the input (and output) columns.
    pub rowtime: usize,
    /// The watermark of a row, over the input columns.
    pub watermark: ScalarExpr,
    pub schema: Schema,
}

/// GROUP BY keys, at most one group window, and aggregate calls. The output columns are
/// Flink's `GroupWindowAggregate` layout: the keys in order, then the aggregates, then the
/// window properties; a Calc above projects the SELECT list (and filters on HAVING).
#[derive(Debug, Clone)]
pub struct LogicalAggregate {
    /// A Calc computing the GROUP BY items in order (a group window's item is its time
    /// column), then the aggregates' arguments and filters that are not among them, as
    /// Calcite's project below an aggregate does.
    pub input: Box<LogicalPlan>,
    /// The key columns, input column indices (every GROUP BY item but the window).
    pub grouping: Vec<usize>,
    /// `None`: a plain GROUP BY (an updating aggregate, refused by translation for now).
    pub window: Option<GroupWindow>,
    /// The group window as written, for EXPLAIN's abstract syntax tree.
    pub window_call: Option<WindowCall>,
    pub aggregates: Vec<AggregateCall>,
    /// All of the window's properties when the query reads any of them, else none (as
    /// Flink's plan lists them).
    pub properties: Vec<WindowProperty>,
    pub schema: Schema,
    /// Line and column of the GROUP BY (or of the first aggregate call), for errors of the
    /// later stages.
    pub position: (u64, u64),
    /// A STATE_TTL hint naming the aggregate's input.
    pub state_ttl: Option<TtlHint>,
    /// GROUPING SETS, ROLLUP or CUBE: the grouping sets, each the input columns it groups by
    /// (sorted), in Calcite's order; empty for a plain GROUP BY.
    pub grouping_sets: Vec<Vec<usize>>,
}

/// A TTL given by a `/*+ STATE_TTL('name' = '1d') */` hint: as written, and in milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct TtlHint {
    pub text: String,
    pub millis: i64,
}

/// A group window call as written in GROUP BY.
#[derive(Debug, Clone)]
pub struct WindowCall {
    /// Where it stands among the GROUP BY items (an input column of the aggregate).
    pub position: usize,
    /// Its interval arguments as Calcite writes them (`5000:INTERVAL SECOND`; `HOP`:
    /// slide, then size).
    pub intervals: Vec<String>,
}

impl LogicalAggregate {
    /// `TUMBLE`, `HOP` or `SESSION`.
    pub fn window_function(&self) -> Option<&'static str> {
        self.window.as_ref().map(|w| match w.kind {
            GroupWindowKind::Tumble { .. } => "TUMBLE",
            GroupWindowKind::Hop { .. } => "HOP",
            GroupWindowKind::Session { .. } => "SESSION",
            GroupWindowKind::Cumulate { .. } => "CUMULATE",
        })
    }

    /// The number of GROUP BY items, the window's included (Calcite's group set).
    fn group_items(&self) -> usize {
        self.grouping.len() + usize::from(self.window_call.is_some())
    }

    /// How the abstract syntax tree names each output column for the node above: Calcite's
    /// aggregate outputs its group items in order, then the aggregates, and a window
    /// property is a call on the window's group item (`TUMBLE_START($0)`).
    fn ast_output_names(&self) -> Vec<String> {
        let items = self.group_items();
        let mut names: Vec<String> = self.grouping.iter().map(|g| format!("${g}")).collect();
        names.extend((0..self.aggregates.len()).map(|j| format!("${}", items + j)));
        if let (Some(function), Some(call)) = (self.window_function(), &self.window_call) {
            names.extend(self.properties.iter().map(|p| {
                let suffix = match p {
                    WindowProperty::Start => "START",
                    WindowProperty::End => "END",
                    WindowProperty::Rowtime => "ROWTIME",
                    WindowProperty::Proctime => "PROCTIME",
                };
                format!("{function}_{suffix}(${})", call.position)
            }));
        }
        names
    }

    /// `LogicalAggregate(group=[{0, 1}], EXPR$1=[COUNT()], …)`.
    fn ast_line(&self) -> String {
        let group: Vec<String> = (0..self.group_items()).map(|i| i.to_string()).collect();
        let mut line = format!("LogicalAggregate(group=[{{{}}}]", group.join(", "));
        if !self.grouping_sets.is_empty() {
            let sets: Vec<String> = self
                .grouping_sets
                .iter()
                .map(|set| {
                    let items: Vec<String> = set.iter().map(|c| c.to_string()).collect();
                    format!("{{{}}}", items.join(", "))
                })
                .collect();
            line.push_str(&format!(", groups=[[{}]]", sets.join(", ")));
        }
        for (j, call) in self.aggregates.iter().enumerate() {
            // An aggregate only HAVING reads has no name of its own.
            let name = if call.name.starts_with("$f") {
                format!("agg#{j}")
            } else {
                call.name.clone()
            };
            let args: Vec<String> = call.args.iter().map(|a| format!("${a}")).collect();
            let distinct = if call.distinct { "DISTINCT " } else { "" };
            line.push_str(&format!(
                ", {name}=[{}({distinct}{})",
                call.function.name(),
                args.join(", ")
            ));
            if let Some(filter) = call.filter {
                line.push_str(&format!(" FILTER ${filter}"));
            }
            line.push(']');
        }
        line.push(')');
        line
    }
}

/// Below a chain of scalar-subquery joins: the outer input, and how Calcite writes each
/// column of the chain's output (`$0`, …, then `$SCALAR_QUERY({…})` per subquery, its plan
/// indented as `RelOptUtil.toString` writes it).
fn scalar_queries(plan: &LogicalPlan) -> Option<(&LogicalPlan, Vec<String>)> {
    let mut queries = Vec::new();
    let mut base = plan;
    while let LogicalPlan::Join(j) = base
        && j.scalar_query
    {
        queries.push(j.right.as_ref());
        base = &j.left;
    }
    if queries.is_empty() {
        return None;
    }
    let mut names: Vec<String> = (0..base.schema().len()).map(|i| format!("${i}")).collect();
    for query in queries.into_iter().rev() {
        // The SINGLE_VALUE the removal of the subquery adds is not in Calcite's tree yet.
        let query = match query {
            LogicalPlan::Aggregate(a)
                if a.aggregates.len() == 1
                    && a.aggregates[0].function
                        == crate::plan::aggregate::AggregateFunction::SingleValue =>
            {
                a.input.as_ref()
            }
            other => other,
        };
        // A correlated subquery's keys come first (decorrelated; Calcite's tree shows the
        // correlation instead).
        for _ in 1..query.schema().len() {
            names.push(format!("${}", names.len()));
        }
        let lines: Vec<String> = query
            .explain_ast()
            .lines()
            .map(|line| {
                let marks = line
                    .chars()
                    .take_while(|c| matches!(c, ' ' | ':' | '+' | '-'))
                    .count();
                format!("{}{}", "  ".repeat(marks / 3), &line[marks..])
            })
            .collect();
        names.push(format!("$SCALAR_QUERY({{\n{}\n}})", lines.join("\n")));
    }
    Some((base, names))
}

impl LogicalCalc {
    /// `LogicalProject` (over a `LogicalFilter`); `names`: how to write the input columns
    /// (empty: `$i`); `window`: the column of the project shown as a group window call.
    fn ast_into(
        &self,
        tree: &mut TreeWriter,
        prefix: &mut Vec<bool>,
        names: &[String],
        window: Option<(usize, String)>,
    ) {
        let exprs: Vec<String> = self
            .exprs
            .iter()
            .zip(&self.schema.fields)
            .enumerate()
            .map(|(i, (e, f))| match &window {
                Some((position, call)) if *position == i => format!("{}=[{call}]", f.name),
                _ => format!("{}=[{}]", f.name, expr_text(e, names, Spelling::Ast)),
            })
            .collect();
        tree.line(prefix, &format!("LogicalProject({})", exprs.join(", ")));
        prefix.push(true);
        if let Some(filter) = &self.filter {
            tree.line(
                prefix,
                &format!(
                    "LogicalFilter(condition=[{}])",
                    expr_text(filter, names, Spelling::Ast)
                ),
            );
            prefix.push(true);
            self.input.ast_into(tree, prefix);
            prefix.pop();
        } else {
            self.input.ast_into(tree, prefix);
        }
        prefix.pop();
    }

    /// Whether the Calc passes every input column through in order (renaming at most).
    pub fn passes_columns_through(&self) -> bool {
        self.filter.is_none()
            && self.exprs.len() == self.input.schema().len()
            && self
                .exprs
                .iter()
                .enumerate()
                .all(|(i, e)| matches!(e, ScalarExpr::Column { index, .. } if *index == i))
    }

    /// Whether the Calc only names the columns of literal rows (`VALUES … AS v(x, y)`).
    pub fn renames_values(&self) -> bool {
        matches!(self.input.as_ref(), LogicalPlan::Values(_)) && self.passes_columns_through()
    }
}

#[derive(Debug, Clone)]
pub struct LogicalUnion {
    pub inputs: Vec<LogicalPlan>,
    pub schema: Schema,
}

impl LogicalPlan {
    pub fn schema(&self) -> &Schema {
        match self {
            LogicalPlan::Scan(s) => &s.schema,
            LogicalPlan::Values(v) => &v.schema,
            LogicalPlan::Calc(c) => &c.schema,
            LogicalPlan::Union(u) => &u.schema,
            LogicalPlan::WatermarkAssigner(w) => &w.schema,
            LogicalPlan::Aggregate(a) => &a.schema,
            LogicalPlan::WindowTableFunction(w) => &w.schema,
            LogicalPlan::Over(o) => &o.schema,
            LogicalPlan::OverAggregate(o) => &o.schema,
            LogicalPlan::Join(j) => &j.schema,
            LogicalPlan::Unnest(u) => &u.schema,
            LogicalPlan::Sort(n) => &n.schema,
        }
    }

    /// EXPLAIN's abstract syntax tree: the plan as Calcite's logical nodes, columns by
    /// position (a Calc is a `LogicalProject` over a `LogicalFilter`).
    pub fn explain_ast(&self) -> String {
        let mut tree = TreeWriter::new();
        self.ast_into(&mut tree, &mut Vec::new());
        tree.finish()
    }

    fn ast_into(&self, tree: &mut TreeWriter, prefix: &mut Vec<bool>) {
        let text = |e: &ScalarExpr| expr_text(e, &[], Spelling::Ast);
        match self {
            LogicalPlan::Scan(s) => tree.line(
                prefix,
                &format!(
                    "LogicalTableScan(table=[[default_catalog, default_database, {}]])",
                    s.table.name
                ),
            ),
            LogicalPlan::Values(v) => {
                let rows: Vec<String> = v
                    .rows
                    .iter()
                    .map(|row| {
                        if row.is_empty() {
                            "{ 0 }".to_string()
                        } else {
                            let items: Vec<String> = row.iter().map(text).collect();
                            format!("{{ {} }}", items.join(", "))
                        }
                    })
                    .collect();
                tree.line(
                    prefix,
                    &format!("LogicalValues(tuples=[[{}]])", rows.join(", ")),
                )
            }
            // Scalar subqueries are calls in the expressions that read them.
            LogicalPlan::Calc(c) if scalar_queries(&c.input).is_some() => {
                let (base, names) = scalar_queries(&c.input).expect("checked by the guard");
                let calc = LogicalCalc {
                    input: Box::new(base.clone()),
                    ..c.clone()
                };
                calc.ast_into(tree, prefix, &names, None)
            }
            // Column names given to VALUES are the Values' own in Calcite's tree.
            LogicalPlan::Calc(c) if c.renames_values() => c.input.ast_into(tree, prefix),
            // Calcite has no project over an aggregate that passes its columns through.
            LogicalPlan::Calc(c)
                if matches!(c.input.as_ref(), LogicalPlan::Aggregate(a) if a.window.is_none())
                    && c.passes_columns_through()
                    && c.schema.fields == c.input.schema().fields =>
            {
                c.input.ast_into(tree, prefix)
            }
            LogicalPlan::Calc(c) => {
                let names = match c.input.as_ref() {
                    LogicalPlan::Aggregate(a) => a.ast_output_names(),
                    // The project over an OverAggregate shows each OVER call where it is read.
                    LogicalPlan::OverAggregate(o) => {
                        let width = o.input.schema().len();
                        let mut names: Vec<String> = (0..width).map(|i| format!("${i}")).collect();
                        names.extend((0..o.calls.len()).map(|i| o.call_text(i)));
                        names
                    }
                    _ => Vec::new(),
                };
                // The project over an Over shows the OVER call where its rank is read.
                let over = match c.input.as_ref() {
                    LogicalPlan::Over(o) => {
                        let rank = o.schema.len() - 1;
                        c.exprs
                            .iter()
                            .position(
                                |e| matches!(e, ScalarExpr::Column { index, .. } if *index == rank),
                            )
                            .map(|i| (i, o.call_text()))
                    }
                    _ => None,
                };
                c.ast_into(tree, prefix, &names, over)
            }
            LogicalPlan::Aggregate(a) => {
                tree.line(prefix, &a.ast_line());
                prefix.push(true);
                // The project below shows the window call where its time column stands.
                let window = a
                    .window_call
                    .as_ref()
                    .zip(a.window_function())
                    .map(|(call, f)| {
                        let LogicalPlan::Calc(below) = a.input.as_ref() else {
                            return (call.position, String::new());
                        };
                        let mut args = vec![text(&below.exprs[call.position])];
                        args.extend(call.intervals.iter().cloned());
                        (call.position, format!("${f}({})", args.join(", ")))
                    });
                match a.input.as_ref() {
                    // Calcite leaves out an empty project (COUNT(*) alone) and one that
                    // passes every column through as it is.
                    LogicalPlan::Calc(below)
                        if below.filter.is_none()
                            && window.is_none()
                            && (below.exprs.is_empty()
                                || (below.passes_columns_through()
                                    && below.schema.fields.iter().map(|f| &f.name).eq(below
                                        .input
                                        .schema()
                                        .fields
                                        .iter()
                                        .map(|f| &f.name)))) =>
                    {
                        below.input.ast_into(tree, prefix)
                    }
                    // A WHERE with scalar subqueries: Calcite's filter over the outer input,
                    // with no project when it passes that input's columns through.
                    LogicalPlan::Calc(below) if scalar_queries(&below.input).is_some() => {
                        let (base, names) =
                            scalar_queries(&below.input).expect("checked by the guard");
                        let width = base.schema().len();
                        let passes = below.exprs.len() == width
                            && below.exprs.iter().enumerate().all(
                                |(i, e)| matches!(e, ScalarExpr::Column { index, .. } if *index == i),
                            );
                        match &below.filter {
                            Some(filter) if passes && window.is_none() => {
                                tree.line(
                                    prefix,
                                    &format!(
                                        "LogicalFilter(condition=[{}])",
                                        expr_text(filter, &names, Spelling::Ast)
                                    ),
                                );
                                prefix.push(true);
                                base.ast_into(tree, prefix);
                                prefix.pop();
                            }
                            _ => LogicalCalc {
                                input: Box::new(base.clone()),
                                ..below.clone()
                            }
                            .ast_into(tree, prefix, &names, window),
                        }
                    }
                    LogicalPlan::Calc(below) => below.ast_into(tree, prefix, &[], window),
                    other => other.ast_into(tree, prefix),
                }
                prefix.pop();
            }
            LogicalPlan::Union(u) => {
                tree.line(prefix, "LogicalUnion(all=[true])");
                for (i, input) in u.inputs.iter().enumerate() {
                    prefix.push(i + 1 == u.inputs.len());
                    input.ast_into(tree, prefix);
                    prefix.pop();
                }
            }
            LogicalPlan::WindowTableFunction(w) => {
                let table = if w.partition.is_empty() {
                    "TABLE(#0)".to_string()
                } else {
                    let keys: Vec<String> = w.partition.iter().map(|k| format!("${k}")).collect();
                    format!("TABLE(#0) PARTITION BY({})", keys.join(", "))
                };
                let mut args = vec![table, format!("DESCRIPTOR(_UTF-16LE'{}')", w.column)];
                args.extend(w.intervals.iter().cloned());
                let row_type: Vec<String> = w
                    .schema
                    .fields
                    .iter()
                    .map(|f| {
                        let mut text = calcite_type_name(&f.data_type.kind);
                        if let Some(attribute) = f.time_attribute {
                            text.push_str(match attribute {
                                TimeAttribute::Rowtime => " *ROWTIME*",
                                TimeAttribute::Proctime => " *PROCTIME*",
                            });
                        }
                        // Calcite's row type of a table function leaves out NOT NULL.
                        format!("{text} {}", f.name)
                    })
                    .collect();
                tree.line(
                    prefix,
                    &format!(
                        "LogicalTableFunctionScan(invocation=[{}({})], rowType=[RecordType({})])",
                        w.function,
                        args.join(", "),
                        row_type.join(", ")
                    ),
                );
                prefix.push(true);
                // Calcite's TABLE argument is a project of every column of the table.
                if matches!(w.input.as_ref(), LogicalPlan::Calc(_)) {
                    w.input.ast_into(tree, prefix);
                } else {
                    let columns: Vec<String> = w
                        .input
                        .schema()
                        .fields
                        .iter()
                        .enumerate()
                        .map(|(i, f)| format!("{}=[${i}]", f.name))
                        .collect();
                    tree.line(prefix, &format!("LogicalProject({})", columns.join(", ")));
                    prefix.push(true);
                    w.input.ast_into(tree, prefix);
                    prefix.pop();
                }
                prefix.pop();
            }
            // Calcite's OVER is a call in the project above (see the Calc arm), not a node.
            LogicalPlan::Over(o) => o.input.ast_into(tree, prefix),
            // Likewise; a WHERE below is Calcite's filter alone.
            LogicalPlan::OverAggregate(o) => match o.input.as_ref() {
                LogicalPlan::Calc(c)
                    if c.filter.is_some()
                        && c.exprs.len() == c.input.schema().len()
                        && c.exprs.iter().enumerate().all(
                            |(i, e)| matches!(e, ScalarExpr::Column { index, .. } if *index == i),
                        ) =>
                {
                    let filter = c.filter.as_ref().expect("checked by the guard");
                    tree.line(
                        prefix,
                        &format!(
                            "LogicalFilter(condition=[{}])",
                            expr_text(filter, &[], Spelling::Ast)
                        ),
                    );
                    prefix.push(true);
                    c.input.ast_into(tree, prefix);
                    prefix.pop();
                }
                other => other.ast_into(tree, prefix),
            },
            LogicalPlan::Sort(n) => {
                let mut attributes: Vec<String> = n
                    .order
                    .iter()
                    .enumerate()
                    .map(|(i, o)| format!("sort{i}=[${}]", o.column))
                    .collect();
                attributes.extend(n.order.iter().enumerate().map(|(i, o)| {
                    format!(
                        "dir{i}=[{}-nulls-{}]",
                        if o.descending { "DESC" } else { "ASC" },
                        if o.nulls_first { "first" } else { "last" }
                    )
                }));
                if n.offset > 0 {
                    attributes.push(format!("offset=[{}]", n.offset));
                }
                if let Some(fetch) = n.fetch {
                    attributes.push(format!("fetch=[{fetch}]"));
                }
                tree.line(prefix, &format!("LogicalSort({})", attributes.join(", ")));
                prefix.push(true);
                n.input.ast_into(tree, prefix);
                prefix.pop();
            }
            LogicalPlan::Join(j) => {
                tree.line(
                    prefix,
                    &format!(
                        "LogicalJoin(condition=[{}], joinType=[{}])",
                        text(&j.condition),
                        j.join_type.calcite_name()
                    ),
                );
                prefix.push(false);
                j.left.ast_into(tree, prefix);
                prefix.pop();
                prefix.push(true);
                j.right.ast_into(tree, prefix);
                prefix.pop();
            }
            LogicalPlan::Unnest(u) => u.ast_into(tree, prefix),
            LogicalPlan::WatermarkAssigner(w) => {
                tree.line(
                    prefix,
                    &format!(
                        "LogicalWatermarkAssigner(rowtime=[{}], watermark=[{}])",
                        w.schema.fields[w.rowtime].name,
                        text(&w.watermark)
                    ),
                );
                prefix.push(true);
                w.input.ast_into(tree, prefix);
                prefix.pop();
            }
        }
    }
}
