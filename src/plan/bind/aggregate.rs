//! GROUP BY, GROUPING SETS / ROLLUP / CUBE, legacy group windows, aggregate calls and window
//! properties: a Calc below the aggregate, the aggregate, and the calls placed on its output.

use super::*;

use sqlparser::ast::{
    self, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Select, Spanned,
};
use sqlparser::tokenizer::Span;

use super::super::aggregate::{
    AggregateCall, AggregateFunction, GroupWindow, GroupWindowKind, WindowProperty,
};
use super::super::explain::calcite_type_name;
use super::super::expr::ScalarExpr;
use super::super::stream::group_window_aggregate::{property_name, window_properties};
use crate::sql::SqlError;
use crate::sql::parser::object_name_last;
use crate::types::value::Value;
use crate::types::{DataType, Field, Schema, TimeAttribute, TypeKind};

impl<'a> Binder<'a> {
    /// The GROUP BY items: keys over the input, and at most one group window.
    pub(super) fn bind_group_by(
        &mut self,
        items: &[Expr],
        scope: &[ScopeColumn],
        input_attrs: &[Option<TimeAttribute>],
    ) -> Result<Aggregation, SqlError> {
        let mut aggregation = Aggregation {
            below: Vec::new(),
            below_names: Vec::new(),
            keys: Vec::new(),
            window: None,
            calls: Vec::new(),
            inside: None,
            properties_used: false,
            column_spans: Vec::new(),
            input_names: scope.iter().map(|c| c.field.name.clone()).collect(),
            sets: Vec::new(),
        };
        // Per GROUP BY item, the choices of slots it offers a grouping set: a plain item one
        // (itself), GROUPING SETS each listed set, ROLLUP its prefixes, CUBE its subsets.
        let mut choices: Vec<Vec<Vec<usize>>> = Vec::new();
        let has_sets = items
            .iter()
            .any(|i| matches!(i, Expr::GroupingSets(_) | Expr::Rollup(_) | Expr::Cube(_)));
        for item in items {
            let (elements, form): (&Vec<Vec<Expr>>, &str) = match item {
                Expr::GroupingSets(sets) => (sets, "GROUPING SETS"),
                Expr::Rollup(elements) => (elements, "ROLLUP"),
                Expr::Cube(elements) => (elements, "CUBE"),
                _ => {
                    let choice =
                        self.bind_group_item(&mut aggregation, item, has_sets, scope, input_attrs)?;
                    choices.push(choice);
                    continue;
                }
            };
            let mut bound: Vec<Vec<usize>> = Vec::new();
            for element in elements {
                let mut slots = Vec::new();
                for e in element {
                    let expr = self.bind_expr(e, scope)?;
                    let name = match &expr {
                        ScalarExpr::Column { index, .. } => Some(scope[*index].field.name.clone()),
                        _ => None,
                    };
                    let slot = aggregation.below_slot(expr, name);
                    if !aggregation.keys.contains(&slot) {
                        aggregation.keys.push(slot);
                    }
                    slots.push(slot);
                }
                bound.push(slots);
            }
            let offered: Vec<Vec<usize>> = match form {
                "GROUPING SETS" => bound,
                "ROLLUP" => (0..=bound.len())
                    .rev()
                    .map(|n| bound[..n].concat())
                    .collect(),
                _ => (0..1usize << bound.len())
                    .map(|mask| {
                        (0..bound.len())
                            .filter(|i| mask & (1 << i) != 0)
                            .flat_map(|i| bound[i].clone())
                            .collect()
                    })
                    .collect(),
            };
            choices.push(offered);
        }
        if has_sets {
            // The cross product of the items' choices, each set sorted and listed once,
            // enclosing sets before the sets they enclose (Calcite's order).
            let mut sets: Vec<Vec<usize>> = vec![Vec::new()];
            for choice in choices.iter().filter(|c| !c.is_empty()) {
                sets = sets
                    .iter()
                    .flat_map(|set| {
                        choice.iter().map(move |c| {
                            let mut s = set.clone();
                            s.extend(c);
                            s
                        })
                    })
                    .collect();
            }
            for set in &mut sets {
                set.sort_unstable();
                set.dedup();
            }
            sets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
            sets.dedup();
            aggregation.sets = sets;
        }
        Ok(aggregation)
    }

    /// A plain GROUP BY item (a key, or a group window call): its slot, as the one choice
    /// it offers a grouping set (none for the window).
    pub(super) fn bind_group_item(
        &mut self,
        aggregation: &mut Aggregation,
        item: &Expr,
        has_sets: bool,
        scope: &[ScopeColumn],
        input_attrs: &[Option<TimeAttribute>],
    ) -> Result<Vec<Vec<usize>>, SqlError> {
        if has_sets && matches!(item, Expr::Function(_)) {
            let name = match item {
                Expr::Function(f) => object_name_last(&f.name).to_uppercase(),
                _ => String::new(),
            };
            if matches!(name.as_str(), "TUMBLE" | "HOP" | "SESSION") {
                return Err(error(
                    item.span(),
                    "a group window function with GROUPING SETS, ROLLUP or CUBE is not supported yet",
                ));
            }
        }
        let position = aggregation.below.len();
        if let Expr::Function(f) = item {
            let name = object_name_last(&f.name).to_uppercase();
            let function = match name.as_str() {
                "TUMBLE" => Some("TUMBLE"),
                "HOP" => Some("HOP"),
                "SESSION" => Some("SESSION"),
                _ => None,
            };
            if let Some(function) = function {
                if aggregation.window.is_some() {
                    return Err(error(
                        item.span(),
                        "Only a single window group function may be used in GROUP BY",
                    ));
                }
                let window =
                    self.bind_group_window(function, f, item.span(), position, scope, input_attrs)?;
                aggregation.below.push(ScalarExpr::Column {
                    index: window.window.time_column,
                    data_type: scope[window.window.time_column].field.data_type.clone(),
                });
                aggregation.below_names.push(format!("$f{position}"));
                aggregation.window = Some(window);
                return Ok(Vec::new());
            }
        }
        let bound = self.bind_expr(item, scope)?;
        let name = match &bound {
            ScalarExpr::Column { index, .. } => Some(scope[*index].field.name.clone()),
            _ => None,
        };
        let slot = aggregation.below_slot(bound, name);
        if slot == position || (has_sets && !aggregation.keys.contains(&slot)) {
            aggregation.keys.push(slot);
        }
        Ok(vec![vec![slot]])
    }

    /// `TUMBLE(ts, size)`, `HOP(ts, slide, size)`, `SESSION(ts, gap)` over a time attribute,
    /// with positive intervals of days to milliseconds.
    pub(super) fn bind_group_window(
        &mut self,
        function: &'static str,
        f: &ast::Function,
        span: Span,
        position: usize,
        scope: &[ScopeColumn],
        input_attrs: &[Option<TimeAttribute>],
    ) -> Result<BoundWindow, SqlError> {
        let args: Vec<&Expr> = match &f.args {
            FunctionArguments::List(list) => list
                .args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e),
                    other => Err(error(
                        other.span(),
                        format!("unsupported argument to {function}"),
                    )),
                })
                .collect::<Result<_, _>>()?,
            _ => Vec::new(),
        };
        let expected = if function == "HOP" { 3 } else { 2 };
        if args.len() != expected {
            return Err(error(
                span,
                format!(
                    "Invalid number of arguments to function '${function}'. Was expecting {expected} arguments"
                ),
            ));
        }
        let time = self.bind_expr(args[0], scope)?;
        let mut intervals = Vec::new();
        let mut millis = Vec::new();
        let mut bound_args = vec![time.clone()];
        for arg in &args[1..] {
            let (ms, text, bound) = self.interval_argument(arg, scope, function)?;
            intervals.push(text);
            millis.push(ms);
            bound_args.push(bound);
        }
        let attribute = match &time {
            ScalarExpr::Column { index, .. } => input_attrs[*index].map(|a| (*index, a)),
            _ => None,
        };
        let Some((time_column, time_attribute)) = attribute else {
            let kind = &time.data_type().kind;
            if !matches!(kind, TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_)) {
                let shown: Vec<String> = std::iter::once(format!("<{}>", calcite_type_name(kind)))
                    .chain(args[1..].iter().map(|_| "<INTERVAL SECOND>".to_string()))
                    .collect();
                let intervals = if function == "HOP" {
                    "<DATETIME_INTERVAL>, <DATETIME_INTERVAL>"
                } else {
                    "<DATETIME_INTERVAL>"
                };
                return Err(error(
                    span,
                    format!(
                        "Cannot apply '${function}' to arguments of type '${function}({})'. Supported form(s): '${function}(<DATETIME>, {intervals})'\n'${function}(<DATETIME>, {intervals}, <TIME>)'",
                        shown.join(", ")
                    ),
                ));
            }
            return Err(error(
                span,
                format!(
                    "Window aggregate can only be defined over a time attribute column, but {} encountered.",
                    time.data_type().with_nullable(true)
                ),
            ));
        };
        let kind = match (function, millis.as_slice()) {
            ("TUMBLE", &[size]) => {
                if size <= 0 {
                    return Err(error(
                        span,
                        "TumblingWindowAssigner parameters must satisfy size > 0",
                    ));
                }
                GroupWindowKind::Tumble { size }
            }
            ("HOP", &[slide, size]) => {
                if slide <= 0 || size <= 0 {
                    return Err(error(
                        span,
                        "SlidingWindowAssigner parameters must satisfy slide > 0 and size > 0",
                    ));
                }
                GroupWindowKind::Hop { slide, size }
            }
            (_, &[gap]) => {
                if gap <= 0 {
                    return Err(error(
                        span,
                        "SessionWindowAssigner parameters must satisfy 0 < size",
                    ));
                }
                GroupWindowKind::Session { gap }
            }
            _ => return Err(error(span, format!("invalid arguments to {function}"))),
        };
        let time_type = time.data_type().clone();
        Ok(BoundWindow {
            function,
            window: GroupWindow {
                kind,
                time_column,
                time_attribute,
                time_type,
                offset: 0,
            },
            position,
            intervals,
            arguments: format!("{bound_args:?}"),
        })
    }

    /// `GROUPING(k, …)` and `GROUPING_ID(k, …)`: the keys (GROUP BY items) the row's grouping
    /// set leaves out, as Calcite types them (BIGINT NOT NULL).
    pub(super) fn bind_grouping_call(
        &mut self,
        f: &ast::Function,
        name: &str,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        let list = match &f.args {
            FunctionArguments::List(list) => list.args.as_slice(),
            _ => &[][..],
        };
        let mut args = Vec::new();
        for arg in list {
            let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = arg else {
                return Err(error(arg.span(), format!("unsupported argument to {name}")));
            };
            let bound = self.bind_expr(e, scope)?;
            let aggregation = self
                .aggregation
                .as_mut()
                .expect("called with an aggregation");
            let key = format!("{bound:?}");
            let Some(&slot) = aggregation
                .keys
                .iter()
                .find(|&&k| format!("{:?}", aggregation.below[k]) == key)
            else {
                return Err(error(
                    e.span(),
                    "Argument to GROUPING operator must be a grouped expression",
                ));
            };
            args.push(slot);
        }
        if args.is_empty() {
            return Err(error(
                span,
                format!(
                    "Invalid number of arguments to function '{name}'. Was expecting 1 arguments"
                ),
            ));
        }
        let aggregation = self
            .aggregation
            .as_mut()
            .expect("called with an aggregation");
        let function = if name == "GROUPING" && args.len() == 1 {
            AggregateFunction::Grouping
        } else {
            AggregateFunction::GroupingId
        };
        Ok(aggregation.add_call(AggregateCall {
            function,
            args,
            distinct: false,
            filter: None,
            data_type: DataType::not_null(TypeKind::BigInt),
            name: String::new(),
        }))
    }

    /// An aggregate call in the SELECT list or HAVING: its arguments (and filter) go to the
    /// Calc below; the call stands as a mark until placed.
    pub(super) fn bind_aggregate_call(
        &mut self,
        f: &ast::Function,
        name: &str,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        if matches!(name, "GROUPING" | "GROUPING_ID") {
            return self.bind_grouping_call(f, name, scope, span);
        }
        let function = match name {
            "COUNT" => AggregateFunction::Count,
            "SUM" => AggregateFunction::Sum,
            "MIN" => AggregateFunction::Min,
            "MAX" => AggregateFunction::Max,
            "AVG" => AggregateFunction::Avg,
            "FIRST_VALUE" => AggregateFunction::FirstValue,
            "LAST_VALUE" => AggregateFunction::LastValue,
            "LISTAGG" => AggregateFunction::ListAgg,
            "JSON_ARRAYAGG_ABSENT_ON_NULL" => AggregateFunction::JsonArrayAgg {
                null_on_null: false,
            },
            "JSON_ARRAYAGG_NULL_ON_NULL" => AggregateFunction::JsonArrayAgg { null_on_null: true },
            "JSON_OBJECTAGG_ABSENT_ON_NULL" => AggregateFunction::JsonObjectAgg {
                null_on_null: false,
            },
            "JSON_OBJECTAGG_NULL_ON_NULL" => {
                AggregateFunction::JsonObjectAgg { null_on_null: true }
            }
            "STDDEV_POP" | "STDDEV_SAMP" | "STDDEV" | "VAR_POP" | "VAR_SAMP" | "VARIANCE" => {
                AggregateFunction::WelfordM2
            }
            _ => match self.catalog.aggregate_function(name) {
                Some(function) => AggregateFunction::User(function),
                None => {
                    return Err(error(
                        span,
                        format!("aggregate function {name} is not supported yet"),
                    ));
                }
            },
        };
        let aggregation = self
            .aggregation
            .as_mut()
            .expect("called with an aggregation");
        if let Some(outer) = aggregation.inside {
            return Err(error(outer, "Aggregate expressions cannot be nested"));
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
        aggregation.inside = Some(span);
        let bound = self.bind_aggregate_arguments(list, f.filter.as_deref(), name, scope, span);
        let aggregation = self
            .aggregation
            .as_mut()
            .expect("called with an aggregation");
        aggregation.inside = None;
        let (args, filter) = bound?;
        let arg_types: Vec<DataType> = args.iter().map(|a| a.data_type().clone()).collect();
        let grouped = !aggregation.keys.is_empty() || aggregation.window.is_some();
        let (args, data_type) = match function {
            // A registered function types its calls itself; its arguments are cast to it.
            AggregateFunction::User(user) => user_call_types(user, args, span)?,
            _ => (
                args,
                aggregate_type(function, name, &arg_types, grouped).map_err(|m| error(span, m))?,
            ),
        };
        // COUNT of values that cannot be NULL counts rows, and Calcite writes it `COUNT(*)`.
        let counts_rows = !distinct && arg_types.iter().all(|t| !t.nullable);
        let args = if function == AggregateFunction::Count && counts_rows {
            Vec::new()
        } else {
            args
        };
        let args: Vec<usize> = args
            .into_iter()
            .map(|a| {
                let name = match &a {
                    ScalarExpr::Column { index, .. } => Some(scope[*index].field.name.clone()),
                    _ => None,
                };
                aggregation.below_slot(a, name)
            })
            .collect();
        let filter = filter.map(|f| aggregation.below_slot(f, None));
        let call = AggregateCall {
            function,
            args,
            distinct,
            filter,
            data_type: data_type.clone(),
            name: String::new(),
        };
        if function != AggregateFunction::WelfordM2 {
            return Ok(aggregation.add_call(call));
        }
        // STDDEV_POP(x) and its kin, as Flink 2.3 plans them: M2 and COUNT of x below,
        // the quotient (and its square root) above, cast to the type of AVG(x).
        let m2 = aggregation.add_call(AggregateCall {
            data_type: DataType::nullable(TypeKind::Double),
            ..call.clone()
        });
        let count = aggregation.add_call(AggregateCall {
            function: AggregateFunction::Count,
            args: if counts_rows { Vec::new() } else { call.args },
            data_type: DataType::not_null(TypeKind::BigInt),
            ..call
        });
        let sample = matches!(name, "STDDEV_SAMP" | "STDDEV" | "VAR_SAMP" | "VARIANCE");
        let denominator = if sample {
            let one = ScalarExpr::Literal {
                value: Value::Int(1),
                data_type: DataType::not_null(TypeKind::Int),
            };
            // Built after the optimizer's simplification: its literal keeps its own type
            // in every plan (an implicit widening).
            let single = match self.call("=", vec![count.clone(), one.clone()], span)? {
                ScalarExpr::Call {
                    function,
                    mut args,
                    data_type,
                } => {
                    for arg in &mut args {
                        if let ScalarExpr::Cast { implicit, .. } = arg {
                            *implicit = true;
                        }
                    }
                    ScalarExpr::Call {
                        function,
                        args,
                        data_type,
                    }
                }
                other => other,
            };
            let less = self.call("-", vec![count, one], span)?;
            let bigint = DataType::nullable(TypeKind::BigInt);
            ScalarExpr::Case {
                branches: vec![(
                    single,
                    ScalarExpr::Literal {
                        value: Value::Null,
                        data_type: bigint.clone(),
                    },
                )],
                otherwise: Some(Box::new(less)),
                data_type: bigint,
                written_as_if: false,
            }
        } else {
            count
        };
        // Flink's rewrite casts the count to DOUBLE itself (its plans show the cast).
        let denominator = coerce(denominator, &DataType::nullable(TypeKind::Double));
        let mut result = self.call("/", vec![m2, denominator], span)?;
        if name.starts_with("STDDEV") {
            let half = ScalarExpr::Literal {
                value: Value::Decimal(5),
                data_type: DataType::not_null(TypeKind::Decimal {
                    precision: 2,
                    scale: 1,
                }),
            };
            result = self.call("POWER", vec![result, half], span)?;
        }
        if result.data_type().kind == data_type.kind {
            return Ok(result);
        }
        Ok(ScalarExpr::Cast {
            expr: Box::new(result),
            data_type,
            try_cast: false,
            implicit: false,
        })
    }

    /// The arguments of an aggregate call (none for `COUNT(*)`) and its filter, `IS TRUE`
    /// of the condition as Calcite writes it.
    pub(super) fn bind_aggregate_arguments(
        &mut self,
        list: &[FunctionArg],
        filter: Option<&Expr>,
        name: &str,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<(Vec<ScalarExpr>, Option<ScalarExpr>), SqlError> {
        let mut args = Vec::new();
        for arg in list {
            match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Wildcard) if name == "COUNT" => {}
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => {
                    args.push(self.bind_expr(e, scope)?)
                }
                other => {
                    return Err(error(
                        other.span(),
                        format!("unsupported argument to {name}"),
                    ));
                }
            }
        }
        let filter = match filter {
            Some(condition) => {
                let bound = self.bind_expr(condition, scope)?;
                if !matches!(bound.data_type().kind, TypeKind::Boolean | TypeKind::Null) {
                    return Err(error(
                        condition.span(),
                        format!(
                            "FILTER needs a BOOLEAN condition, got {}",
                            bound.data_type().kind
                        ),
                    ));
                }
                let bound = coerce(bound, &DataType::nullable(TypeKind::Boolean));
                Some(self.call("IS TRUE", vec![bound], span)?)
            }
            None => None,
        };
        Ok((args, filter))
    }

    /// `TUMBLE_START(ts, …)` and the other window properties: they must name the window of
    /// the GROUP BY, as written there.
    pub(super) fn bind_window_property(
        &mut self,
        f: &ast::Function,
        function: &str,
        name: &str,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        let mut args = Vec::new();
        if let FunctionArguments::List(list) = &f.args {
            for arg in &list.args {
                match arg {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => {
                        let saved = self
                            .aggregation
                            .as_mut()
                            .and_then(|a| a.inside.replace(span));
                        let bound = self.bind_expr(e, scope);
                        if let Some(a) = self.aggregation.as_mut() {
                            a.inside = saved;
                        }
                        args.push(bound?);
                    }
                    other => {
                        return Err(error(
                            other.span(),
                            format!("unsupported argument to {name}"),
                        ));
                    }
                }
            }
        }
        let arguments = format!("{args:?}");
        let mismatch = || {
            error(
                span,
                format!(
                    "Call to auxiliary group function '{name}' must have matching call to group function '${function}' in GROUP BY clause"
                ),
            )
        };
        let Some(aggregation) = self.aggregation.as_mut() else {
            return Err(mismatch());
        };
        // Without GROUP BY the call reaches Flink's code generator, which has none.
        if aggregation.keys.is_empty() && aggregation.window.is_none() {
            let types: Vec<String> = args.iter().map(|a| a.data_type().to_string()).collect();
            return Err(error(
                span,
                format!(
                    "Unsupported call: {name}({}) \nIf you think this function should be supported, you can create an issue and start a discussion for it.",
                    types.join(", ")
                ),
            ));
        }
        let Some(window) = &aggregation.window else {
            return Err(mismatch());
        };
        if window.function != function || window.arguments != arguments {
            return Err(mismatch());
        }
        let rowtime = window.window.time_attribute == TimeAttribute::Rowtime;
        // Flink types `_ROWTIME` of a proctime window as its proctime, and `_PROCTIME` of an
        // event-time window as its rowtime.
        let property = match &name[function.len() + 1..] {
            "START" => WindowProperty::Start,
            "END" => WindowProperty::End,
            _ if rowtime => WindowProperty::Rowtime,
            _ => WindowProperty::Proctime,
        };
        let (data_type, _) = property_type(property, &window.window);
        aggregation.properties_used = true;
        Ok(ScalarExpr::Column {
            index: PROPERTY_MARK + PROPERTIES.iter().position(|p| *p == property).unwrap_or(0),
            data_type,
        })
    }

    /// The aggregate over the Calc below, and the Calc above projecting the SELECT list and
    /// filtering on HAVING.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn aggregate_plan(
        &mut self,
        input: LogicalPlan,
        filter: Option<ScalarExpr>,
        mut aggregation: Aggregation,
        (exprs, mut fields): (Vec<ScalarExpr>, Vec<Field>),
        having: Option<(ScalarExpr, &Expr)>,
        select: &Select,
        position: Span,
    ) -> Result<LogicalPlan, SqlError> {
        let properties = match (&aggregation.window, aggregation.properties_used) {
            (Some(w), true) => window_properties(w.window.time_attribute),
            _ => Vec::new(),
        };
        let keys = aggregation.keys.len();
        let mut placed = Vec::new();
        for (i, e) in exprs.iter().enumerate() {
            let span = select.projection.get(i).map_or(select.span(), |p| p.span());
            placed.push(place(e, &aggregation, &properties, span)?);
        }
        let mut having = match having {
            Some((e, written)) => {
                let placed = place(&e, &aggregation, &properties, written.span())?;
                let placed = if placed.data_type().kind == TypeKind::Null {
                    coerce(placed, &DataType::nullable(TypeKind::Boolean))
                } else {
                    placed
                };
                if placed.data_type().kind != TypeKind::Boolean {
                    return Err(error(
                        written.span(),
                        format!(
                            "HAVING needs a BOOLEAN condition, got {}",
                            placed.data_type().kind
                        ),
                    ));
                }
                Some(placed)
            }
            None => None,
        };
        // A key is named after the first SELECT item that is the key (Calcite names the
        // project below the aggregate so: `SELECT k AS kk … GROUP BY k` groups by `kk`).
        let mut named = vec![false; aggregation.below.len()];
        for (e, f) in placed.iter().zip(&fields) {
            if let ScalarExpr::Column { index, .. } = e
                && *index < keys
            {
                let slot = aggregation.keys[*index];
                let computed = !matches!(aggregation.below[slot], ScalarExpr::Column { .. });
                if !named[slot] && (!computed || aggregation.below_names[slot].starts_with("$f")) {
                    aggregation.below_names[slot] = f.name.clone();
                }
                named[slot] = true;
            }
        }
        for (j, call) in aggregation.calls.iter_mut().enumerate() {
            if call.name.is_empty() {
                call.name = format!("$f{}", keys + j);
            }
        }
        let input_attrs: Vec<Option<TimeAttribute>> = input
            .schema()
            .fields
            .iter()
            .map(|f| f.time_attribute)
            .collect();
        let below_fields: Vec<Field> = aggregation
            .below
            .iter()
            .zip(&aggregation.below_names)
            .map(|(e, name)| Field {
                name: name.clone(),
                data_type: e.data_type().clone(),
                time_attribute: e.time_attribute(&input_attrs),
            })
            .collect();
        // Grouped by a windowing TVF's bounds (a window aggregate), its `window_time` stays
        // a time attribute: a second window can follow (Flink's cascading windows).
        let window_time = window_aggregate_time(&input, &aggregation);
        let mut output: Vec<Field> = aggregation
            .keys
            .iter()
            .map(|&k| Field {
                time_attribute: if Some(k) == window_time {
                    below_fields[k].time_attribute
                } else {
                    None
                },
                ..Field::new(&below_fields[k].name, below_fields[k].data_type.clone())
            })
            .collect();
        output.extend(
            aggregation
                .calls
                .iter()
                .map(|c| Field::new(&c.name, c.data_type.clone())),
        );
        if let Some(w) = &aggregation.window {
            for &p in &properties {
                let (data_type, time_attribute) = property_type(p, &w.window);
                output.push(Field {
                    name: property_name(p).to_string(),
                    data_type,
                    time_attribute,
                });
            }
        }
        // A key some grouping set leaves out is NULL in that set's rows.
        if !aggregation.sets.is_empty() {
            for (i, &k) in aggregation.keys.iter().enumerate() {
                if aggregation.sets.iter().any(|set| !set.contains(&k)) {
                    output[i].data_type.nullable = true;
                }
            }
            let retyped = |e: &ScalarExpr| {
                e.map_columns(&mut |index, data_type| ScalarExpr::Column {
                    index,
                    data_type: if index < keys {
                        output[index].data_type.clone()
                    } else {
                        data_type.clone()
                    },
                })
            };
            placed = placed.iter().map(retyped).collect();
            having = having.as_ref().map(retyped);
        }
        let output_attrs: Vec<Option<TimeAttribute>> =
            output.iter().map(|f| f.time_attribute).collect();
        for (e, f) in placed.iter().zip(fields.iter_mut()) {
            f.data_type = e.data_type().clone();
            f.time_attribute = e.time_attribute(&output_attrs);
        }
        let window_call = aggregation.window.as_ref().map(|w| WindowCall {
            position: w.position,
            intervals: w.intervals.clone(),
        });
        let aggregate = LogicalAggregate {
            input: Box::new(LogicalPlan::Calc(LogicalCalc {
                input: Box::new(input),
                filter,
                exprs: aggregation.below,
                schema: Schema::new(below_fields),
            })),
            grouping: aggregation.keys,
            // The window reads its item of the Calc below.
            window: aggregation.window.map(|w| GroupWindow {
                time_column: w.position,
                ..w.window
            }),
            window_call,
            aggregates: aggregation.calls,
            properties,
            schema: Schema::new(output),
            position: (position.start.line, position.start.column),
            state_ttl: None,
            grouping_sets: aggregation.sets,
        };
        Ok(LogicalPlan::Calc(LogicalCalc {
            input: Box::new(LogicalPlan::Aggregate(aggregate)),
            filter: having,
            exprs: placed,
            schema: Schema::new(fields),
        }))
    }
}

pub(super) const AGGREGATES: &[&str] = &[
    "COUNT",
    "SUM",
    "MIN",
    "MAX",
    "AVG",
    "STDDEV_POP",
    "STDDEV_SAMP",
    "VAR_POP",
    "VAR_SAMP",
    "STDDEV",
    "VARIANCE",
    "COLLECT",
    "LISTAGG",
    "JSON_ARRAYAGG_ABSENT_ON_NULL",
    "JSON_ARRAYAGG_NULL_ON_NULL",
    "JSON_OBJECTAGG_ABSENT_ON_NULL",
    "JSON_OBJECTAGG_NULL_ON_NULL",
    "GROUPING",
    "GROUPING_ID",
    "FIRST_VALUE",
    "LAST_VALUE",
    "ARRAY_AGG",
    "ROW_NUMBER",
    "RANK",
    "DENSE_RANK",
    "LEAD",
    "LAG",
];

/// A registered aggregate function's call: its arguments cast to the types its signature
/// asks for, and its result type; its refusal in Flink's words, then its own.
pub(super) fn user_call_types(
    user: crate::function::user::UserAggregateRef,
    args: Vec<ScalarExpr>,
    span: Span,
) -> Result<(Vec<ScalarExpr>, DataType), SqlError> {
    let name = user.0.name;
    let arg_types: Vec<DataType> = args.iter().map(|a| a.data_type().clone()).collect();
    let signature = user
        .0
        .function
        .signature(&arg_types)
        .map_err(|m| super::expr::cannot_apply(name, &arg_types, &m, span))?;
    if signature.args.len() != args.len() {
        return Err(error(
            span,
            format!(
                "aggregate function {name} typed {} arguments for a call with {}",
                signature.args.len(),
                args.len()
            ),
        ));
    }
    let args = args
        .into_iter()
        .zip(&signature.args)
        .map(|(a, t)| coerce(a, t))
        .collect();
    Ok((args, signature.return_type))
}

/// Wraps an expression in a CAST when its kind differs from `target`'s.
pub(super) fn coerce(expr: ScalarExpr, target: &DataType) -> ScalarExpr {
    if expr.data_type().kind == target.kind {
        return expr;
    }
    if let ScalarExpr::Literal {
        value: Value::Null, ..
    } = expr
    {
        return ScalarExpr::Literal {
            value: Value::Null,
            data_type: target.with_nullable(true),
        };
    }
    let nullable = expr.data_type().nullable;
    ScalarExpr::Cast {
        expr: Box::new(expr),
        data_type: target.with_nullable(nullable),
        try_cast: false,
        implicit: false,
    }
}

/// An expression bound over a GROUP BY's input, over the aggregate's output instead: a
/// key's expression reads the key, a mark its aggregate or property; any other input column
/// is an error (at its place when it was written outside an aggregate call).
pub(super) fn place(
    e: &ScalarExpr,
    aggregation: &Aggregation,
    properties: &[WindowProperty],
    span: Span,
) -> Result<ScalarExpr, SqlError> {
    let keys: Vec<String> = aggregation
        .keys
        .iter()
        .map(|&k| format!("{:?}", aggregation.below[k]))
        .collect();
    let calls = aggregation.calls.len();
    let mut ungrouped = None;
    let placed = e.rewrite(&mut |sub| {
        if !keys.is_empty() {
            let text = format!("{sub:?}");
            if let Some(k) = keys.iter().position(|key| *key == text) {
                return Some(ScalarExpr::Column {
                    index: k,
                    data_type: sub.data_type().clone(),
                });
            }
        }
        match sub {
            ScalarExpr::Column { index, data_type } if *index >= PROPERTY_MARK => {
                let property = PROPERTIES[index - PROPERTY_MARK];
                let at = properties.iter().position(|p| *p == property)?;
                Some(ScalarExpr::Column {
                    index: aggregation.keys.len() + calls + at,
                    data_type: data_type.clone(),
                })
            }
            ScalarExpr::Column { index, data_type } if *index >= AGGREGATE_MARK => {
                Some(ScalarExpr::Column {
                    index: aggregation.keys.len() + index - AGGREGATE_MARK,
                    data_type: data_type.clone(),
                })
            }
            ScalarExpr::Column { index, .. } => {
                ungrouped.get_or_insert(*index);
                Some(sub.clone())
            }
            _ => None,
        }
    });
    if let Some(column) = ungrouped {
        let written = aggregation.column_spans.iter().find(|(i, _)| *i == column);
        return Err(error(
            written.map_or(span, |(_, s)| *s),
            format!(
                "Expression '{}' is not being grouped",
                aggregation.input_names[column]
            ),
        ));
    }
    Ok(placed)
}

/// The slot below of a window aggregate's `window_time` key: the aggregate groups a
/// windowing TVF's rows (`input`) by its `window_start` and `window_end`, and by its
/// `window_time`. `None` otherwise.
fn window_aggregate_time(input: &LogicalPlan, aggregation: &Aggregation) -> Option<usize> {
    let LogicalPlan::WindowTableFunction(tvf) = input else {
        return None;
    };
    let columns = tvf.window_columns();
    let key_of = |column: usize| {
        aggregation.keys.iter().copied().find(|&k| {
            matches!(aggregation.below[k], ScalarExpr::Column { index, .. } if index == column)
        })
    };
    key_of(columns.start)?;
    key_of(columns.start + 1)?;
    key_of(columns.start + 2)
}

/// A window property's type and time attribute: start and end are wall-clock timestamps;
/// the rowtime has the type of the window's time column (nullable, as Flink derives it); the
/// proctime is `TIMESTAMP_LTZ(3)`.
pub(super) fn property_type(
    property: WindowProperty,
    window: &GroupWindow,
) -> (DataType, Option<TimeAttribute>) {
    match property {
        WindowProperty::Start | WindowProperty::End => {
            (DataType::not_null(TypeKind::Timestamp(3)), None)
        }
        WindowProperty::Rowtime => {
            let kind = match window.time_type.kind {
                TypeKind::TimestampLtz(_) => TypeKind::TimestampLtz(3),
                _ => TypeKind::Timestamp(3),
            };
            (DataType::nullable(kind), Some(TimeAttribute::Rowtime))
        }
        WindowProperty::Proctime => (
            DataType::not_null(TypeKind::TimestampLtz(3)),
            Some(TimeAttribute::Proctime),
        ),
    }
}

/// The result type of an aggregate as Flink derives it: COUNT is `BIGINT NOT NULL`; SUM,
/// AVG, MIN and MAX keep their argument's type (SUM of a DECIMAL widens to precision 38,
/// AVG of one also to scale 6 at least), nullable when it is or when there is no group
/// (`grouped`: a GROUP BY item exists).
pub(super) fn aggregate_type(
    function: AggregateFunction,
    name: &str,
    args: &[DataType],
    grouped: bool,
) -> Result<DataType, String> {
    if function == AggregateFunction::Count {
        return Ok(DataType::not_null(TypeKind::BigInt));
    }
    // The JSON aggregates: a STRING NOT NULL of their values' JSON texts (and string keys).
    if let AggregateFunction::JsonArrayAgg { .. } | AggregateFunction::JsonObjectAgg { .. } =
        function
    {
        let string = |t: &DataType| matches!(t.kind, TypeKind::Char(_) | TypeKind::VarChar(_));
        let expected = if matches!(function, AggregateFunction::JsonObjectAgg { .. }) {
            2
        } else {
            1
        };
        if args.len() != expected || !args.iter().all(string) {
            return Err(format!(
                "Invalid function call:\n{name}({})",
                args.iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        return Ok(DataType::not_null(TypeKind::VarChar(i32::MAX as u32)));
    }
    // LISTAGG(x [, separator]) of strings, typed as its argument (Calcite's).
    if function == AggregateFunction::ListAgg {
        let string = |t: &DataType| matches!(t.kind, TypeKind::Char(_) | TypeKind::VarChar(_));
        return match args {
            [arg] | [arg, _] if string(arg) && args.iter().all(string) => Ok(DataType {
                kind: match arg.kind {
                    TypeKind::Char(n) => TypeKind::VarChar(n),
                    ref other => other.clone(),
                },
                nullable: true,
            }),
            [_] | [_, _] => Err(format!(
                "Cannot apply 'LISTAGG' to arguments of type 'LISTAGG({})'. Supported form(s): 'LISTAGG(<CHARACTER>)' 'LISTAGG(<CHARACTER>, <CHARACTER>)'",
                args.iter()
                    .map(|a| format!("<{}>", calcite_type_name(&a.kind)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            _ => Err(
                "Invalid number of arguments to function 'LISTAGG'. Was expecting 1 or 2 arguments"
                    .into(),
            ),
        };
    }
    let [arg] = args else {
        return Err(format!(
            "Invalid number of arguments to function '{name}'. Was expecting 1 arguments"
        ));
    };
    let nullable = arg.nullable || !grouped;
    // FIRST_VALUE and LAST_VALUE keep their argument's type; NULL without a value.
    if matches!(
        function,
        AggregateFunction::FirstValue | AggregateFunction::LastValue
    ) {
        return Ok(DataType {
            kind: arg.kind.clone(),
            nullable: true,
        });
    }
    let kind = match (function, &arg.kind) {
        (AggregateFunction::Min | AggregateFunction::Max, kind) => kind.clone(),
        (_, TypeKind::Decimal { scale, .. }) => TypeKind::Decimal {
            precision: 38,
            scale: if matches!(
                function,
                AggregateFunction::Avg | AggregateFunction::WelfordM2
            ) {
                (*scale).max(6)
            } else {
                *scale
            },
        },
        (
            _,
            kind @ (TypeKind::TinyInt
            | TypeKind::SmallInt
            | TypeKind::Int
            | TypeKind::BigInt
            | TypeKind::Float
            | TypeKind::Double),
        ) => kind.clone(),
        (_, kind) => {
            return Err(format!(
                "Cannot apply '{name}' to arguments of type '{name}(<{}>)'. Supported form(s): '{name}(<NUMERIC>)'",
                calcite_type_name(kind)
            ));
        }
    };
    Ok(DataType { kind, nullable })
}

/// Takes the expression out of `slot`, leaving a cheap placeholder behind.
pub(super) fn acc_placeholder(slot: &mut ScalarExpr) -> ScalarExpr {
    std::mem::replace(
        slot,
        ScalarExpr::Literal {
            value: Value::Null,
            data_type: DataType::nullable(TypeKind::Null),
        },
    )
}

/// The aggregate a SELECT's plan reads (under its SELECT list and HAVING).
pub(super) fn aggregate_of(plan: &mut LogicalPlan) -> Option<&mut LogicalAggregate> {
    match plan {
        LogicalPlan::Aggregate(a) => Some(a),
        LogicalPlan::Calc(c) => aggregate_of(&mut c.input),
        _ => None,
    }
}
