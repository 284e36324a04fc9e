//! OVER aggregates of a SELECT list (`SUM(x) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN
//! 2 PRECEDING AND CURRENT ROW)`, a named `WINDOW w AS (…)`), bound as Calcite converts
//! them for Flink's streaming OverAggregate: every call over one window, ordered by one time
//! attribute ascending, the frame ending at the current row; SUM rewritten to `$SUM0` under a
//! COUNT test and AVG to their quotient. Each call is bound where it is met in the SELECT
//! list, into an [`OverAggregation`], and read back as a column of the node below.

use sqlparser::ast::{self, FunctionArguments, Spanned, WindowFrameBound, WindowFrameUnits};
use sqlparser::tokenizer::Span;

use super::aggregate::user_call_types;
use super::*;
use crate::plan::aggregate::AggregateFunction;

/// Flink's refusal of two windows in one query.
const ONE_WINDOW: &str = "Over Agg: Unsupported use of OVER windows. All aggregates must be computed on the same window. please re-check the over window statement.";

/// Flink's refusal of every frame but `… PRECEDING AND CURRENT ROW` (for ROWS too).
const FOLLOWING: &str = "OVER RANGE FOLLOWING windows are not supported yet.";

/// The OVER aggregate calls met so far in a SELECT list.
#[derive(Debug, Default)]
pub(super) struct OverAggregation {
    /// The input's width: call `i` is column `width + i` of the node.
    width: usize,
    /// The SELECT's `WINDOW w AS (…)` definitions.
    named: Vec<ast::NamedWindowDefinition>,
    /// The window every call shares, and where the first call is.
    window: Option<(OverWindow, Span)>,
    calls: Vec<OverCall>,
}

/// Calcite's refusal of a frame written for a ranking function.
pub(super) const RANKING_FRAME_REFUSED: &str =
    "ROW/RANGE not allowed with RANK, DENSE_RANK or ROW_NUMBER functions";

/// A bound window: partition keys, the time attribute ordering it, its frame, and whether
/// the frame was written (in the call's window or the named one it refers to).
#[derive(Debug, Clone)]
struct OverWindow {
    partition: Vec<usize>,
    order: usize,
    frame: OverFrame,
    written_frame: bool,
}

/// Two calls share a window when they partition, order and frame alike (however written).
impl PartialEq for OverWindow {
    fn eq(&self, other: &Self) -> bool {
        (&self.partition, self.order, &self.frame) == (&other.partition, other.order, &other.frame)
    }
}

impl OverAggregation {
    pub(super) fn new(width: usize, named: &[ast::NamedWindowDefinition]) -> Self {
        OverAggregation {
            width,
            named: named.to_vec(),
            ..OverAggregation::default()
        }
    }

    /// Where the first call is written, if any was met.
    pub(super) fn first_call(&self) -> Option<Span> {
        self.window.as_ref().map(|(_, span)| *span)
    }

    /// The column of a call (the same call twice is one column).
    fn add(&mut self, call: OverCall) -> ScalarExpr {
        // Equal calls print alike (their arguments are bound expressions).
        let same = |c: &OverCall| format!("{c:?}") == format!("{call:?}");
        let index = match self.calls.iter().position(same) {
            Some(i) => i,
            None => {
                self.calls.push(call);
                self.calls.len() - 1
            }
        };
        ScalarExpr::Column {
            index: self.width + index,
            data_type: self.calls[index].data_type.clone(),
        }
    }

    /// The node over `input` (the SELECT's filtered FROM, of `scope`'s columns); `None`
    /// when no call was met.
    pub(super) fn into_plan(
        self,
        input: LogicalPlan,
        scope: &[ScopeColumn],
    ) -> Option<LogicalPlan> {
        let (window, _) = self.window?;
        let mut fields: Vec<Field> = scope.iter().map(|c| c.field.clone()).collect();
        fields.extend(
            self.calls
                .iter()
                .enumerate()
                .map(|(i, c)| Field::new(format!("w0$o{i}"), c.data_type.clone())),
        );
        Some(LogicalPlan::OverAggregate(LogicalOverAggregate {
            input: Box::new(input),
            partition: window.partition,
            order: window.order,
            frame: window.frame,
            calls: self.calls,
            schema: Schema::new(fields),
        }))
    }
}

impl<'a> Binder<'a> {
    /// An aggregate call with OVER in the SELECT list being bound: its window checked against
    /// the other calls', its calls added, and the expression that reads them.
    pub(super) fn bind_over_aggregate_call(
        &mut self,
        f: &ast::Function,
        name: &str,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        if f.filter.is_some() {
            return Err(error(span, "OVER must be applied to aggregate function"));
        }
        let function = match name {
            "COUNT" => AggregateFunction::Count,
            "SUM" => AggregateFunction::Sum,
            "MIN" => AggregateFunction::Min,
            "MAX" => AggregateFunction::Max,
            "AVG" => AggregateFunction::Avg,
            "FIRST_VALUE" => AggregateFunction::FirstValue,
            "LAST_VALUE" => AggregateFunction::LastValue,
            "ROW_NUMBER" => AggregateFunction::RowNumber,
            "RANK" => AggregateFunction::Rank,
            "DENSE_RANK" => AggregateFunction::DenseRank,
            "LAG" => return self.bind_lag(f, scope, span),
            "LEAD" => {
                return Err(error(
                    span,
                    "LEAD Function is not supported in stream mode.",
                ));
            }
            _ => match self.catalog.aggregate_function(name) {
                Some(user) => AggregateFunction::User(user),
                None => {
                    return Err(error(span, format!("{name} … OVER is not supported yet")));
                }
            },
        };
        let mut window = self.bind_over_window(f, scope, span)?;
        if matches!(
            function,
            AggregateFunction::RowNumber | AggregateFunction::Rank | AggregateFunction::DenseRank
        ) {
            // Calcite's frames of the ranking functions: ROWS for ROW_NUMBER, RANGE for the
            // others, both from the partition's first row; none may be written.
            if window.written_frame {
                return Err(error(span, RANKING_FRAME_REFUSED));
            }
            window.frame.rows = function == AggregateFunction::RowNumber;
            let over = self.over_aggregation.as_mut().expect("called with one");
            match &over.window {
                None => over.window = Some((window, span)),
                Some((first, _)) if *first != window => return Err(error(span, ONE_WINDOW)),
                Some(_) => {}
            }
            return Ok(over.add(OverCall {
                function,
                args: Vec::new(),
                distinct: false,
                data_type: DataType::not_null(TypeKind::BigInt),
            }));
        }
        let (list, distinct) = match &f.args {
            FunctionArguments::List(list) => (
                list.args.as_slice(),
                matches!(
                    list.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                ),
            ),
            _ => (&[][..], false),
        };
        if distinct && function != AggregateFunction::Count && window.frame.preceding.is_some() {
            return Err(error(
                span,
                format!("{name}(DISTINCT …) over a bounded OVER window is not supported yet"),
            ));
        }
        let (args, _) = self.bind_aggregate_arguments(list, None, name, scope, span)?;
        let arg_types: Vec<DataType> = args.iter().map(|a| a.data_type().clone()).collect();
        let (args, data_type) = match function {
            AggregateFunction::User(user) => user_call_types(user, args, span)?,
            _ => (
                args,
                aggregate_type(function, name, &arg_types, true).map_err(|m| error(span, m))?,
            ),
        };
        let over = self.over_aggregation.as_mut().expect("called with one");
        match &over.window {
            None => over.window = Some((window, span)),
            Some((first, _)) if *first != window => return Err(error(span, ONE_WINDOW)),
            Some(_) => {}
        }
        let call = |function, data_type| OverCall {
            function,
            args: args.clone(),
            distinct,
            data_type,
        };
        if !matches!(function, AggregateFunction::Sum | AggregateFunction::Avg) {
            return Ok(over.add(call(function, data_type)));
        }
        // Calcite's rewrite: SUM(x) is CASE(COUNT(x) > 0, $SUM0(x), NULL), AVG(x) that over
        // COUNT(x), cast to AVG's type.
        let count = over.add(call(
            AggregateFunction::Count,
            DataType::not_null(TypeKind::BigInt),
        ));
        let sum_type = match function {
            AggregateFunction::Avg => {
                aggregate_type(AggregateFunction::Sum, "SUM", &arg_types, true)
                    .map_err(|m| error(span, m))?
            }
            _ => data_type.clone(),
        };
        let sum0 = over.add(call(
            AggregateFunction::Sum,
            DataType {
                nullable: false,
                ..sum_type.clone()
            },
        ));
        let zero = ScalarExpr::Literal {
            value: Value::Int(0),
            data_type: DataType::not_null(TypeKind::Int),
        };
        let positive = self.call(">", vec![count.clone(), zero], span)?;
        let nullable_sum = DataType {
            nullable: true,
            ..sum_type
        };
        let sum = ScalarExpr::Case {
            branches: vec![(positive, sum0)],
            otherwise: Some(Box::new(ScalarExpr::Literal {
                value: Value::Null,
                data_type: nullable_sum.clone(),
            })),
            data_type: nullable_sum,
            written_as_if: false,
        };
        if function == AggregateFunction::Sum {
            return Ok(sum);
        }
        let quotient = self.call("/", vec![sum, count], span)?;
        Ok(ScalarExpr::Cast {
            expr: Box::new(quotient),
            data_type,
            try_cast: false,
            implicit: false,
        })
    }

    /// `LAG(x [, offset])` OVER a window without a written frame (Calcite's, as for the
    /// ranking functions: RANGE from the partition's first row).
    fn bind_lag(
        &mut self,
        f: &ast::Function,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        let mut window = self.bind_over_window(f, scope, span)?;
        if window.written_frame {
            return Err(error(span, RANKING_FRAME_REFUSED));
        }
        window.frame.rows = false;
        window.frame.preceding = None;
        let list = match &f.args {
            FunctionArguments::List(list) => list.args.as_slice(),
            _ => &[][..],
        };
        let offset = match list.get(1) {
            None => None,
            Some(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))) => {
                match self.bind_expr(e, scope)? {
                    ScalarExpr::Literal {
                        value: Value::Int(n),
                        ..
                    } if (0..=i64::from(u32::MAX)).contains(&n) => Some(n as u32),
                    _ => {
                        return Err(error(
                            span,
                            "LAG's offset must be a non-negative integer literal",
                        ));
                    }
                }
            }
            Some(_) => return Err(error(span, "LAG takes positional arguments")),
        };
        if list.len() > 2 {
            return Err(error(span, "LAG with a default value is not supported yet"));
        }
        let Some(first) = list.first() else {
            return Err(error(
                span,
                "Invalid number of arguments to function 'LAG'. Was expecting 1 arguments",
            ));
        };
        let (args, _) =
            self.bind_aggregate_arguments(std::slice::from_ref(first), None, "LAG", scope, span)?;
        let data_type = DataType {
            nullable: true,
            ..args[0].data_type().clone()
        };
        let over = self.over_aggregation.as_mut().expect("called with one");
        match &over.window {
            None => over.window = Some((window, span)),
            Some((first, _)) if *first != window => return Err(error(span, ONE_WINDOW)),
            Some(_) => {}
        }
        Ok(over.add(OverCall {
            function: AggregateFunction::Lag { offset },
            args,
            distinct: false,
            data_type,
        }))
    }

    /// The window of an OVER call (its own or a named one) with Flink's streaming checks.
    fn bind_over_window(
        &mut self,
        f: &ast::Function,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<OverWindow, SqlError> {
        let spec = match &f.over {
            Some(ast::WindowType::WindowSpec(spec)) => spec.clone(),
            Some(ast::WindowType::NamedWindow(name)) => {
                let over = self.over_aggregation.as_ref().expect("called with one");
                let found = over
                    .named
                    .iter()
                    .find(|d| d.0.value.eq_ignore_ascii_case(&name.value));
                match found.map(|d| &d.1) {
                    Some(ast::NamedWindowExpr::WindowSpec(spec)) => spec.clone(),
                    _ => {
                        return Err(error(
                            name.span,
                            format!("Window '{}' not found", name.value),
                        ));
                    }
                }
            }
            None => unreachable!("an OVER call"),
        };
        let column = |binder: &mut Binder, e: &ast::Expr| -> Result<usize, SqlError> {
            match binder.bind_expr(e, scope)? {
                ScalarExpr::Column { index, .. } => Ok(index),
                _ => Err(error(
                    e.span(),
                    "OVER partitions and orders by columns only (for now)",
                )),
            }
        };
        let mut partition = Vec::new();
        for e in &spec.partition_by {
            partition.push(column(self, e)?);
        }
        let [order] = spec.order_by.as_slice() else {
            return Err(error(
                span,
                "The window can only be ordered by a single time column.",
            ));
        };
        if matches!(order.options.sort, Some(ast::OrderBySort::Desc)) {
            return Err(error(
                span,
                "The window can only be ordered in ASCENDING mode.",
            ));
        }
        let order_column = column(self, &order.expr)?;
        let frame = self.bind_over_frame(spec.window_frame.as_ref(), span)?;
        if scope[order_column].field.time_attribute.is_none() {
            return Err(error(
                span,
                if frame.preceding.is_some() {
                    "Non-time attribute sort is not supported for bounded OVER window."
                } else {
                    "OVER aggregates ordered by a column that is not a time attribute are not supported yet"
                },
            ));
        }
        Ok(OverWindow {
            partition,
            order: order_column,
            frame,
            written_frame: spec.window_frame.is_some(),
        })
    }

    /// A frame `[ROWS | RANGE] [BETWEEN] … PRECEDING [AND CURRENT ROW]`; none is Calcite's
    /// default with an ORDER BY, RANGE UNBOUNDED PRECEDING.
    fn bind_over_frame(
        &mut self,
        frame: Option<&ast::WindowFrame>,
        span: Span,
    ) -> Result<OverFrame, SqlError> {
        let Some(frame) = frame else {
            return Ok(OverFrame {
                rows: false,
                preceding: None,
                interval_text: String::new(),
            });
        };
        let rows = match frame.units {
            WindowFrameUnits::Rows => true,
            WindowFrameUnits::Range => false,
            WindowFrameUnits::Groups => {
                return Err(error(span, "GROUPS frames are not supported"));
            }
        };
        if !matches!(frame.end_bound, None | Some(WindowFrameBound::CurrentRow)) {
            return Err(error(span, FOLLOWING));
        }
        let bound = match &frame.start_bound {
            WindowFrameBound::Preceding(bound) => bound,
            _ => return Err(error(span, FOLLOWING)),
        };
        let Some(bound) = bound else {
            return Ok(OverFrame {
                rows,
                preceding: None,
                interval_text: String::new(),
            });
        };
        let bound_span = bound.span();
        let value = self.bind_expr(bound, &[])?;
        match (rows, value) {
            (
                true,
                ScalarExpr::Literal {
                    value: Value::Int(n),
                    ..
                },
            ) if n >= 0 => Ok(OverFrame {
                rows,
                preceding: Some(n),
                interval_text: String::new(),
            }),
            (
                false,
                ScalarExpr::Literal {
                    value: Value::IntervalMillis(ms, qualifier),
                    ..
                },
            ) if ms >= 0 => Ok(OverFrame {
                rows,
                preceding: Some(ms),
                interval_text: format!("{ms}:{}", qualifier.sql()),
            }),
            (false, ScalarExpr::Literal { value, .. })
                if !matches!(value, Value::IntervalMonths(..)) =>
            {
                Err(error(
                    bound_span,
                    "Data Type mismatch between ORDER BY and RANGE clause",
                ))
            }
            _ => Err(error(
                bound_span,
                if rows {
                    "ROWS value must be a non-negative integral constant"
                } else {
                    "RANGE value must be a non-negative day-time interval constant"
                },
            )),
        }
    }
}
