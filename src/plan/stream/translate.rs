//! From the logical plan to the stream plan, doing what Flink's optimizer visibly does to
//! these nodes: adjacent Calcs merge, Calcs that change nothing go, and columns nobody reads
//! are pruned down to the scan (into it, for connectors that read only what they are asked).

use super::calc::StreamCalc;
use super::changelog_normalize::StreamChangelogNormalize;
use super::drop_update_before::StreamDropUpdateBefore;
use super::exchange::{Distribution, StreamExchange};
use super::expand::StreamExpand;
use super::group_aggregate::StreamGroupAggregate;
use super::group_window_aggregate::StreamGroupWindowAggregate;
use super::interval_join::{StreamIntervalJoin, WindowBounds, window_bounds};
use super::join::StreamJoin;
use super::limit::StreamLimit;
use super::rank::{Deduplication, StreamRank};
use super::sink::StreamSink;
use super::table_source_scan::StreamTableSourceScan;
use super::temporal_join::StreamTemporalJoin;
use super::temporal_sort::StreamTemporalSort;
use super::union::StreamUnion;
use super::values::StreamValues;
use super::watermark_assigner::StreamWatermarkAssigner;
use super::window_aggregate::StreamWindowAggregate;
use super::window_deduplicate::StreamWindowDeduplicate;
use super::window_join::{StreamWindowJoin, WindowedInput};
use super::window_rank::StreamWindowRank;
use super::window_table_function::StreamWindowTableFunction;
use super::{PlanError, StreamPlan};
use crate::plan::aggregate::GroupWindowKind;
use crate::plan::aggregate::WindowProperty;
use crate::plan::aggregate::{AggregateCall, AggregateFunction};
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::{
    JoinType, LogicalAggregate, LogicalCalc, LogicalJoin, LogicalOver, LogicalPlan, RankFunction,
};
use crate::types::Field;
use crate::types::value::Value;
use crate::types::{DataType, Schema, TimeAttribute, TypeKind};

/// The stream plan of a query.
pub fn translate(plan: &LogicalPlan, options: &PlannerOptions) -> Result<StreamPlan, PlanError> {
    let mut plan = convert(plan)?;
    if options.cdc_events_duplicate {
        normalize_changelogs(&mut plan);
    }
    let all = vec![true; plan.schema().len()];
    let mut plan = prune(plan, &all).0;
    super::require_update_before(&mut plan, true);
    Ok(plan)
}

/// The stream plan of an `INSERT INTO table` whose query, bound against the sink's
/// columns, is `plan`.
pub fn translate_insert(
    plan: &LogicalPlan,
    table: &str,
    options: &PlannerOptions,
) -> Result<StreamPlan, PlanError> {
    let input = translate(plan, options)?;
    Ok(StreamPlan::Sink(StreamSink {
        schema: input.schema().clone(),
        input: Box::new(input),
        table: table.to_string(),
    }))
}

/// What the session's configuration changes in planning.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlannerOptions {
    /// `table.exec.source.cdc-events-duplicate`: a changelog source with a primary key may
    /// repeat events, so its rows are normalized by key.
    pub cdc_events_duplicate: bool,
}

/// Each changelog source with a primary key under a ChangelogNormalize (through an exchange
/// on the key, its `-U` rows dropped), as Flink's scan rule plans it when events may repeat;
/// a filter right above is taken into the normalization.
fn normalize_changelogs(plan: &mut StreamPlan) {
    let normalized = |scan: StreamPlan, condition: Option<ScalarExpr>| {
        let StreamPlan::TableSourceScan(s) = &scan else {
            return scan;
        };
        let Some(keys) = scan.unique_keys().into_iter().next() else {
            return scan;
        };
        let schema = s.schema.clone();
        StreamPlan::ChangelogNormalize(StreamChangelogNormalize {
            input: keyed_exchange(
                StreamPlan::DropUpdateBefore(StreamDropUpdateBefore::over(scan)),
                &keys,
            ),
            keys,
            condition,
            update_before: true,
            schema,
        })
    };
    let normalizes = |p: &StreamPlan| matches!(p, StreamPlan::TableSourceScan(s) if s.reads_changelog() && s.table.primary_key.is_some());
    if normalizes(plan) {
        let scan = std::mem::replace(plan, StreamPlan::placeholder());
        *plan = normalized(scan, None);
        return;
    }
    if let StreamPlan::Calc(calc) = plan
        && calc.filter.is_some()
        && normalizes(&calc.input)
    {
        let scan = std::mem::replace(calc.input.as_mut(), StreamPlan::placeholder());
        *calc.input = normalized(scan, calc.filter.take());
        return;
    }
    for input in plan.inputs_mut() {
        normalize_changelogs(input);
    }
}

/// One stream node per logical node, Calcs merged where they meet.
fn convert(plan: &LogicalPlan) -> Result<StreamPlan, PlanError> {
    Ok(match plan {
        LogicalPlan::Scan(s) => StreamPlan::TableSourceScan(StreamTableSourceScan {
            table: s.table.clone(),
            source_schema: s.schema.clone(),
            metadata: s.metadata.clone(),
            projection: None,
            schema: s.schema.clone(),
        }),
        LogicalPlan::Values(v) => StreamPlan::Values(StreamValues {
            rows: v.rows.clone(),
            schema: v.schema.clone(),
        }),
        LogicalPlan::Calc(c) if c.renames_values() => {
            let LogicalPlan::Values(v) = c.input.as_ref() else {
                unreachable!("renames_values checks the input")
            };
            StreamPlan::Values(StreamValues {
                rows: v.rows.clone(),
                schema: c.schema.clone(),
            })
        }
        LogicalPlan::Calc(c) if having_on_keys(c).is_some() => {
            let (calc, aggregate) = having_on_keys(c).expect("checked by the guard");
            let calc = StreamCalc {
                input: Box::new(group_window_aggregate(&aggregate)?),
                filter: calc.filter,
                exprs: calc.exprs,
                schema: calc.schema,
            };
            StreamPlan::Calc(merge(calc))
        }
        LogicalPlan::Calc(c) if over_below(c).is_some() => {
            let (calc, over) = over_below(c).expect("checked by the guard");
            ranked(&calc, &over)?
        }
        LogicalPlan::Over(o) => return Err(unsupported_over(o)),
        // A WHERE over a join: what the join can take goes into it or below it.
        LogicalPlan::Calc(c)
            if c.filter.is_some() && matches!(c.input.as_ref(), LogicalPlan::Join(_)) =>
        {
            let LogicalPlan::Join(j) = c.input.as_ref() else {
                unreachable!("checked by the guard")
            };
            let above = c.filter.as_ref().map(conjuncts).unwrap_or_default();
            let (input, remaining) = join(j, above)?;
            let calc = StreamCalc {
                input: Box::new(input),
                filter: remaining.into_iter().reduce(and),
                exprs: c.exprs.clone(),
                schema: c.schema.clone(),
            };
            StreamPlan::Calc(merge(calc))
        }
        LogicalPlan::Join(j) => join(j, Vec::new())?.0,
        LogicalPlan::Sort(n) => sort(n)?,
        LogicalPlan::Calc(c) => {
            let calc = StreamCalc {
                input: Box::new(convert(&c.input)?),
                filter: c.filter.clone(),
                exprs: c.exprs.clone(),
                schema: c.schema.clone(),
            };
            StreamPlan::Calc(merge(calc))
        }
        LogicalPlan::Union(u) => StreamPlan::Union(StreamUnion {
            inputs: u.inputs.iter().map(convert).collect::<Result<_, _>>()?,
            schema: u.schema.clone(),
        }),
        LogicalPlan::WatermarkAssigner(w) => {
            StreamPlan::WatermarkAssigner(StreamWatermarkAssigner {
                input: Box::new(convert(&w.input)?),
                rowtime: w.rowtime,
                watermark: w.watermark.clone(),
                schema: w.schema.clone(),
            })
        }
        LogicalPlan::Aggregate(a) => group_window_aggregate(a)?,
        LogicalPlan::WindowTableFunction(w) => {
            let input = convert(&w.input)?;
            // Sessions are kept per partition key: the rows of one go to one instance.
            let input = if matches!(w.window.kind, GroupWindowKind::Session { .. }) {
                keyed_exchange(input, &w.partition)
            } else {
                Box::new(input)
            };
            StreamPlan::WindowTableFunction(StreamWindowTableFunction {
                input,
                window: w.window.clone(),
                partition: w.partition.clone(),
                schema: w.schema.clone(),
            })
        }
    })
}

/// `GROUP BY window_start, window_end [, window_time] [, keys]` right over a window TVF: a
/// window aggregate over the TVF's input (the TVF folds into it), under a Calc putting its
/// columns in the logical aggregate's order. `None` when the aggregate is not of that shape.
fn window_aggregate(a: &LogicalAggregate) -> Option<Result<StreamPlan, PlanError>> {
    if a.window.is_some() {
        return None;
    }
    let LogicalPlan::Calc(below) = a.input.as_ref() else {
        return None;
    };
    let LogicalPlan::WindowTableFunction(tvf) = below.input.as_ref() else {
        return None;
    };
    let columns = tvf.window_columns();
    let window_column = |e: &ScalarExpr| match e {
        ScalarExpr::Column { index, .. } if columns.contains(index) => Some(index - columns.start),
        _ => None,
    };
    // Each grouping item: a key, or a window column (0 start, 1 end, 2 time).
    let mut keys = Vec::new();
    let mut properties: Vec<(usize, usize)> = Vec::new();
    for (k, &g) in a.grouping.iter().enumerate() {
        match window_column(&below.exprs[g]) {
            Some(w) => properties.push((k, w)),
            None => keys.push((k, g)),
        }
    }
    let has = |w: usize| properties.iter().any(|&(_, p)| p == w);
    let unsupported = |message: &str| {
        Some(Err(PlanError::Unsupported {
            message: message.into(),
            line: a.position.0,
            column: a.position.1,
        }))
    };
    if !(has(0) && has(1)) {
        return unsupported(
            "a GROUP BY over a window table function without both window_start and window_end is not supported yet",
        );
    }
    // Window columns read anywhere but as grouping items.
    let mut reads_window = false;
    for (i, e) in below.exprs.iter().enumerate() {
        if a.grouping.contains(&i) && window_column(e).is_some() {
            continue;
        }
        e.for_each_column(&mut |c| reads_window |= columns.contains(&c));
    }
    if let Some(f) = &below.filter {
        f.for_each_column(&mut |c| reads_window |= columns.contains(&c));
    }
    if reads_window {
        return unsupported(
            "a window aggregate reading the window columns other than as GROUP BY items is not supported yet",
        );
    }
    // Sessions are per partition key; the aggregate groups by exactly those keys.
    if matches!(tvf.window.kind, GroupWindowKind::Session { .. }) {
        let mut grouped: Vec<usize> = Vec::new();
        for &(_, g) in &keys {
            match &below.exprs[g] {
                ScalarExpr::Column { index, .. } => grouped.push(*index),
                _ => {
                    return unsupported(
                        "a SESSION window aggregate grouped by an expression is not supported yet",
                    );
                }
            }
        }
        let mut partition = tvf.partition.clone();
        grouped.sort_unstable();
        grouped.dedup();
        partition.sort_unstable();
        partition.dedup();
        if grouped != partition {
            return unsupported(
                "a SESSION window aggregate must group by exactly its PARTITION BY keys (besides window_start and window_end), for now",
            );
        }
    }
    if let GroupWindowKind::Hop { slide, size } = tvf.window.kind
        && size % slide != 0
    {
        return Some(Err(PlanError::Refused {
            message: format!(
                "HOP table function based aggregate requires size must be an integral multiple of slide, but got size {size} ms and slide {slide} ms"
            ),
            line: a.position.0,
            column: a.position.1,
        }));
    }
    // The Calc below, over the TVF's input, with the time column appended.
    let input_schema = tvf.input.schema();
    let time = tvf.window.time_column;
    let mut new_below = below.clone();
    new_below.input = tvf.input.clone();
    // The window items read nothing once the TVF is folded in (pruning drops them).
    let time_ref = ScalarExpr::Column {
        index: time,
        data_type: input_schema.fields[time].data_type.clone(),
    };
    for e in &mut new_below.exprs {
        if window_column(e).is_some() {
            *e = time_ref.clone();
        }
    }
    new_below.exprs.push(ScalarExpr::Column {
        index: time,
        data_type: input_schema.fields[time].data_type.clone(),
    });
    new_below
        .schema
        .fields
        .push(input_schema.fields[time].clone());
    let time_below = new_below.exprs.len() - 1;
    let mut names: Vec<String> = new_below
        .exprs
        .iter()
        .enumerate()
        .map(|(i, e)| match e {
            ScalarExpr::Column { index, .. } => input_schema.fields[*index].name.clone(),
            _ => format!("$f{i}"),
        })
        .collect();
    let _ = &names;
    // Computed keys keep the name the binder gave them.
    for (i, f) in below.schema.fields.iter().enumerate() {
        if !matches!(below.exprs[i], ScalarExpr::Column { .. }) && !f.name.starts_with("$f") {
            names[i] = f.name.clone();
        }
    }
    for (field, name) in new_below.schema.fields.iter_mut().zip(names) {
        field.name = name;
    }
    let input = match convert(&LogicalPlan::Calc(new_below)) {
        Ok(input) => input,
        Err(e) => return Some(Err(e)),
    };
    let mut window = tvf.window.clone();
    window.time_column = time_below;
    let mut window_properties = vec![WindowProperty::Start, WindowProperty::End];
    if has(2) {
        window_properties.push(WindowProperty::Rowtime);
    }
    let mut fields: Vec<Field> = keys
        .iter()
        .map(|&(_, g)| input.schema().fields[g].clone())
        .collect();
    for call in &a.aggregates {
        fields.push(Field::new(&call.name, call.data_type.clone()));
    }
    for (w, name) in ["window_start", "window_end", "window_time"]
        .iter()
        .enumerate()
        .take(window_properties.len())
    {
        let mut field = tvf.schema.fields[columns.start + w].clone();
        field.name = name.to_string();
        fields.push(field);
    }
    let aggregate = StreamGroupWindowAggregate {
        input: Box::new(input),
        grouping: keys.iter().map(|&(_, g)| g).collect(),
        window,
        aggregates: a.aggregates.clone(),
        properties: window_properties,
        schema: Schema::new(fields),
    };
    // The logical aggregate's columns: grouping items in order, then the aggregates.
    let first_property = keys.len() + a.aggregates.len();
    let exprs: Vec<ScalarExpr> = (0..a.schema.len())
        .map(|i| {
            let index = if i < a.grouping.len() {
                match properties.iter().find(|&&(k, _)| k == i) {
                    Some(&(_, w)) => first_property + w,
                    None => keys.iter().position(|&(k, _)| k == i).unwrap_or(0),
                }
            } else {
                keys.len() + (i - a.grouping.len())
            };
            ScalarExpr::Column {
                index,
                data_type: aggregate.schema.fields[index].data_type.clone(),
            }
        })
        .collect();
    let mut schema = a.schema.clone();
    for (f, e) in schema.fields.iter_mut().zip(&exprs) {
        if let ScalarExpr::Column { index, .. } = e {
            f.time_attribute = aggregate.schema.fields[*index].time_attribute;
        }
    }
    Some(Ok(StreamPlan::Calc(StreamCalc {
        input: Box::new(StreamPlan::WindowAggregate(StreamWindowAggregate {
            aggregate,
        })),
        filter: None,
        exprs,
        schema,
    })))
}

/// A HAVING over a group window aggregate with conditions on keys alone: those conditions
/// move into the Calc below, after its WHERE (Flink's filter transpose), and the Calc above
/// keeps the others. `None` when there is nothing to move.
fn having_on_keys(calc: &LogicalCalc) -> Option<(LogicalCalc, LogicalAggregate)> {
    let LogicalPlan::Aggregate(aggregate) = calc.input.as_ref() else {
        return None;
    };
    let LogicalPlan::Calc(below) = aggregate.input.as_ref() else {
        return None;
    };
    let filter = calc.filter.as_ref()?;
    aggregate.window.as_ref()?;
    let keys = aggregate.grouping.len();
    let (on_keys, others): (Vec<ScalarExpr>, Vec<ScalarExpr>) =
        conjuncts(filter).into_iter().partition(|c| {
            let mut only_keys = true;
            c.for_each_column(&mut |i| only_keys &= i < keys);
            only_keys
        });
    if on_keys.is_empty() {
        return None;
    }
    let mut below = below.clone();
    for condition in on_keys {
        let pushed = condition.map_columns(&mut |k, _| below.exprs[aggregate.grouping[k]].clone());
        below.filter = Some(match below.filter.take() {
            Some(filter) => and(filter, pushed),
            None => pushed,
        });
    }
    let mut aggregate = aggregate.clone();
    aggregate.input = Box::new(LogicalPlan::Calc(below));
    let mut calc = calc.clone();
    calc.filter = others.into_iter().reduce(and);
    Some((calc, aggregate))
}

/// The operands of a chain of ANDs, in order.
pub(crate) fn conjuncts(e: &ScalarExpr) -> Vec<ScalarExpr> {
    match e {
        ScalarExpr::Call { function, args, .. } if function.name == "AND" => {
            args.iter().flat_map(conjuncts).collect()
        }
        other => vec![other.clone()],
    }
}

/// A group window aggregate over the Calc below it, whose columns are named as Flink's
/// window rewrite names them (a column reference after the column, anything computed
/// `$f<i>`). The exchange below comes with pruning, once the input's columns are settled.
fn group_window_aggregate(a: &LogicalAggregate) -> Result<StreamPlan, PlanError> {
    if !a.grouping_sets.is_empty() {
        return grouping_sets_aggregate(a);
    }
    if let Some(plan) = window_aggregate(a) {
        return plan;
    }
    let Some(window) = &a.window else {
        return group_aggregate(a);
    };
    let input = match a.input.as_ref() {
        LogicalPlan::Calc(below) => {
            let mut below = below.clone();
            let names = window_rewrite_names(&below, a);
            for (field, name) in below.schema.fields.iter_mut().zip(names) {
                field.name = name;
            }
            convert(&LogicalPlan::Calc(below))?
        }
        other => convert(other)?,
    };
    let mut schema = a.schema.clone();
    for (k, &g) in a.grouping.iter().enumerate() {
        schema.fields[k].name = input.schema().fields[g].name.clone();
    }
    Ok(StreamPlan::GroupWindowAggregate(
        StreamGroupWindowAggregate {
            input: Box::new(input),
            grouping: a.grouping.clone(),
            window: window.clone(),
            aggregates: a.aggregates.clone(),
            properties: a.properties.clone(),
            schema,
        },
    ))
}

/// A GROUP BY of grouping sets (GROUPING SETS, ROLLUP, CUBE) as Flink plans it: an Expand
/// below the aggregate repeats each row once per set — the keys the set leaves out NULL, and
/// the set's number in a `$e` column (a bit per key left out, the first key's highest) — and
/// the aggregate groups by the keys and `$e`; a Calc above drops `$e` and reads GROUPING and
/// GROUPING_ID off it.
fn grouping_sets_aggregate(a: &LogicalAggregate) -> Result<StreamPlan, PlanError> {
    let LogicalPlan::Calc(below) = a.input.as_ref() else {
        return Err(PlanError::Unsupported {
            message: "internal error: grouping sets over no Calc".into(),
            line: a.position.0,
            column: a.position.1,
        });
    };
    let n = a.grouping.len();
    let bigint = DataType::not_null(TypeKind::BigInt);
    let number = |value: i64| ScalarExpr::Literal {
        value: Value::Int(value),
        data_type: bigint.clone(),
    };
    let set_ids: Vec<i64> = a
        .grouping_sets
        .iter()
        .map(|set| {
            (0..n)
                .filter(|&i| !set.contains(&a.grouping[i]))
                .map(|i| 1i64 << (n - 1 - i))
                .sum()
        })
        .collect();
    // The aggregate without the grouping sets: `$e` a key (a placeholder below, which the
    // Expand sets), GROUPING calls left for the Calc above.
    let e_slot = below.exprs.len();
    let mut with_e = below.clone();
    with_e.exprs.push(number(0));
    with_e.schema.fields.push(Field::new("$e", bigint.clone()));
    let is_grouping = |c: &AggregateCall| {
        matches!(
            c.function,
            AggregateFunction::Grouping | AggregateFunction::GroupingId
        )
    };
    let others: Vec<AggregateCall> = a
        .aggregates
        .iter()
        .filter(|c| !is_grouping(c))
        .cloned()
        .collect();
    let mut fields: Vec<Field> = a.schema.fields[..n].to_vec();
    fields.push(Field::new("$e", bigint.clone()));
    fields.extend(
        others
            .iter()
            .map(|c| Field::new(&c.name, c.data_type.clone())),
    );
    fields.extend(a.schema.fields[n + a.aggregates.len()..].iter().cloned());
    let mut plain = a.clone();
    *plain.input = LogicalPlan::Calc(with_e);
    plain.grouping.push(e_slot);
    plain.grouping_sets = Vec::new();
    plain.aggregates = others.clone();
    plain.schema = Schema::new(fields);
    let mut converted = group_window_aggregate(&plain)?;
    // The Expand, between the aggregate and its input.
    let aggregate = match &mut converted {
        StreamPlan::GroupAggregate(g) => Some((&mut g.input, &mut g.schema, &g.grouping)),
        StreamPlan::Calc(c) => match c.input.as_mut() {
            StreamPlan::WindowAggregate(w) => Some((
                &mut w.aggregate.input,
                &mut w.aggregate.schema,
                &w.aggregate.grouping,
            )),
            _ => None,
        },
        _ => None,
    };
    let Some((input, schema, grouping)) = aggregate else {
        return Err(PlanError::Unsupported {
            message: "GROUPING SETS, ROLLUP or CUBE over this aggregate is not supported yet"
                .into(),
            line: a.position.0,
            column: a.position.1,
        });
    };
    let below_schema = input.schema().clone();
    let mut expanded = below_schema.clone();
    let left_out =
        |c: usize| a.grouping.contains(&c) && a.grouping_sets.iter().any(|set| !set.contains(&c));
    for (c, field) in expanded.fields.iter_mut().enumerate() {
        if left_out(c) {
            field.data_type.nullable = true;
        }
    }
    let projects: Vec<Vec<ScalarExpr>> = a
        .grouping_sets
        .iter()
        .zip(&set_ids)
        .map(|(set, &id)| {
            (0..below_schema.len())
                .map(|c| {
                    if c == e_slot {
                        number(id)
                    } else if a.grouping.contains(&c) && !set.contains(&c) {
                        ScalarExpr::Literal {
                            value: Value::Null,
                            data_type: expanded.fields[c].data_type.clone(),
                        }
                    } else {
                        ScalarExpr::Column {
                            index: c,
                            data_type: below_schema.fields[c].data_type.clone(),
                        }
                    }
                })
                .collect()
        })
        .collect();
    for (k, &g) in grouping.iter().enumerate() {
        schema.fields[k].data_type = expanded.fields[g].data_type.clone();
    }
    let inner = std::mem::replace(input.as_mut(), StreamPlan::placeholder());
    **input = StreamPlan::Expand(StreamExpand {
        input: Box::new(inner),
        projects,
        schema: expanded,
    });
    // The logical aggregate's columns: keys, the calls in order (a GROUPING call a CASE
    // over `$e`), then the window properties.
    let e = ScalarExpr::Column {
        index: n,
        data_type: bigint.clone(),
    };
    let equals = crate::function::lookup("=");
    let mut exprs: Vec<ScalarExpr> = (0..n)
        .map(|i| ScalarExpr::Column {
            index: i,
            data_type: converted.schema().fields[i].data_type.clone(),
        })
        .collect();
    let mut other = 0;
    for call in &a.aggregates {
        if !is_grouping(call) {
            let index = n + 1 + other;
            other += 1;
            exprs.push(ScalarExpr::Column {
                index,
                data_type: converted.schema().fields[index].data_type.clone(),
            });
            continue;
        }
        let value = |set: &Vec<usize>| -> i64 {
            let k = call.args.len();
            (0..k)
                .filter(|&j| !set.contains(&call.args[j]))
                .map(|j| 1i64 << (k - 1 - j))
                .sum()
        };
        let mut branches = Vec::new();
        for (set, &id) in a.grouping_sets.iter().zip(&set_ids) {
            if let Some(function) = equals {
                branches.push((
                    ScalarExpr::Call {
                        function,
                        args: vec![e.clone(), number(id)],
                        data_type: DataType::not_null(TypeKind::Boolean),
                    },
                    number(value(set)),
                ));
            }
        }
        let otherwise = branches.pop().map(|(_, v)| Box::new(v));
        exprs.push(ScalarExpr::Case {
            branches,
            otherwise,
            data_type: bigint.clone(),
        });
    }
    let first_property = n + 1 + others.len();
    for p in 0..a.schema.len() - n - a.aggregates.len() {
        exprs.push(ScalarExpr::Column {
            index: first_property + p,
            data_type: converted.schema().fields[first_property + p]
                .data_type
                .clone(),
        });
    }
    let mut schema = a.schema.clone();
    for (f, e) in schema.fields.iter_mut().zip(&exprs) {
        if let ScalarExpr::Column { index, .. } = e {
            f.time_attribute = converted.schema().fields[*index].time_attribute;
            f.name = converted.schema().fields[*index].name.clone();
        }
    }
    Ok(StreamPlan::Calc(merge(StreamCalc {
        input: Box::new(converted),
        filter: None,
        exprs,
        schema,
    })))
}

/// An unbounded GROUP BY (or global aggregate): its columns are the keys, then the
/// aggregates, as the logical aggregate's. The exchange below comes with pruning.
fn group_aggregate(a: &LogicalAggregate) -> Result<StreamPlan, PlanError> {
    let input = convert(&a.input)?;
    let mut schema = a.schema.clone();
    for (k, &g) in a.grouping.iter().enumerate() {
        schema.fields[k].name = input.schema().fields[g].name.clone();
        // A key stays what it was, but no longer a time attribute (Flink materializes it).
        schema.fields[k].time_attribute = None;
    }
    Ok(StreamPlan::GroupAggregate(StreamGroupAggregate {
        input: Box::new(input),
        grouping: a.grouping.clone(),
        aggregates: a.aggregates.clone(),
        update_before: true,
        schema,
        state_ttl: a.state_ttl.clone(),
    }))
}

/// The names of the Calc below an aggregate after Flink's window rewrite, which builds it
/// anew without names. A window over a window's rowtime is a call of the lower window's
/// property when the rewrite runs, so its column is `$f<i>` too.
fn window_rewrite_names(below: &LogicalCalc, a: &LogicalAggregate) -> Vec<String> {
    let input = below.input.schema();
    let property_of_lower_window = |index: usize| match below.input.as_ref() {
        LogicalPlan::Calc(c) => match (c.input.as_ref(), &c.exprs[index]) {
            (LogicalPlan::Aggregate(lower), ScalarExpr::Column { index, .. }) => {
                *index >= lower.grouping.len() + lower.aggregates.len()
            }
            _ => false,
        },
        _ => false,
    };
    let window = a.window_call.as_ref().map(|w| w.position);
    below
        .exprs
        .iter()
        .enumerate()
        .map(|(i, e)| match e {
            ScalarExpr::Column { index, .. }
                if !(Some(i) == window && property_of_lower_window(*index)) =>
            {
                input.fields[*index].name.clone()
            }
            _ => format!("$f{i}"),
        })
        .collect()
}

/// A Calc over a Calc becomes one, unless that would compute one of the lower Calc's
/// expressions twice (it is read more than once and is more than a column or a literal).
fn merge(outer: StreamCalc) -> StreamCalc {
    let StreamPlan::Calc(inner) = outer.input.as_ref() else {
        return outer;
    };
    // A Calc passing its input through (renaming at most) goes, as Calcite's trivial
    // projects do: the names are the lower Calc's (a query's result is named apart).
    if outer.filter.is_none()
        && outer.exprs.len() == inner.exprs.len()
        && outer
            .exprs
            .iter()
            .enumerate()
            .all(|(i, e)| matches!(e, ScalarExpr::Column { index, .. } if *index == i))
    {
        return inner.clone();
    }
    let mut reads = vec![0usize; inner.exprs.len()];
    for e in outer.exprs.iter().chain(&outer.filter) {
        e.for_each_column(&mut |i| reads[i] += 1);
    }
    let repeated = inner.exprs.iter().zip(&reads).any(|(e, &n)| {
        n > 1 && !matches!(e, ScalarExpr::Column { .. } | ScalarExpr::Literal { .. })
    });
    if repeated {
        return outer;
    }
    let inline = |e: &ScalarExpr| e.map_columns(&mut |i, _| inner.exprs[i].clone());
    let filter = match (&inner.filter, outer.filter.as_ref().map(inline)) {
        (None, outer) => outer,
        (Some(inner), None) => Some(inner.clone()),
        (Some(inner), Some(outer)) => Some(and(inner.clone(), outer)),
    };
    StreamCalc {
        filter,
        exprs: outer.exprs.iter().map(inline).collect(),
        schema: outer.schema.clone(),
        input: inner.input.clone(),
    }
}

/// A Calc (or two, the query's and its subquery's) right over an Over node, as one Calc
/// over the Over's columns, and the Over. `None` when there is no Over below.
fn over_below(calc: &LogicalCalc) -> Option<(LogicalCalc, LogicalOver)> {
    match calc.input.as_ref() {
        LogicalPlan::Over(over) => Some((calc.clone(), over.clone())),
        LogicalPlan::Calc(inner) => {
            let LogicalPlan::Over(over) = inner.input.as_ref() else {
                return None;
            };
            let inline = |e: &ScalarExpr| e.map_columns(&mut |i, _| inner.exprs[i].clone());
            let filter = match (&inner.filter, calc.filter.as_ref().map(inline)) {
                (None, f) => f,
                (Some(f), None) => Some(f.clone()),
                (Some(a), Some(b)) => Some(and(a.clone(), b)),
            };
            Some((
                LogicalCalc {
                    input: inner.input.clone(),
                    filter,
                    exprs: calc.exprs.iter().map(inline).collect(),
                    schema: calc.schema.clone(),
                },
                over.clone(),
            ))
        }
        _ => None,
    }
}

fn unsupported_over(over: &LogicalOver) -> PlanError {
    PlanError::Unsupported {
        message: format!(
            "{}() OVER a windowing TVF is supported as ROW_NUMBER partitioned by window_start and window_end and kept within ranks (a window Top-N or deduplication) for now",
            over.function.name()
        ),
        line: over.position.0,
        column: over.position.1,
    }
}

/// A rank filter's bound on the rank column: `rank <= n`, `rank < n`, `rank = n` (or the
/// same written the other way round), as (first, last) ranks kept.
fn rank_bound(e: &ScalarExpr, rank: usize) -> Option<(i64, i64)> {
    let ScalarExpr::Call { function, args, .. } = e else {
        return None;
    };
    let literal = |e: &ScalarExpr| match e {
        ScalarExpr::Literal {
            value: Value::Int(n),
            ..
        } => Some(*n),
        ScalarExpr::Cast { expr, .. } => match expr.as_ref() {
            ScalarExpr::Literal {
                value: Value::Int(n),
                ..
            } => Some(*n),
            _ => None,
        },
        _ => None,
    };
    let is_rank = |e: &ScalarExpr| matches!(e, ScalarExpr::Column { index, .. } if *index == rank);
    let (op, n) = match args.as_slice() {
        [a, b] if is_rank(a) => (function.name, literal(b)?),
        [a, b] if is_rank(b) => (
            match function.name {
                "<" => ">",
                ">" => "<",
                "<=" => ">=",
                ">=" => "<=",
                other => other,
            },
            literal(a)?,
        ),
        _ => return None,
    };
    match op {
        "<=" => Some((1, n)),
        "<" => Some((1, n - 1)),
        "=" => Some((n, n)),
        _ => None,
    }
}

/// A Calc over a ranking Over: the conjuncts bounding the rank pick the rows kept; with
/// ROW_NUMBER over a window TVF, partitioned by its bounds, ordered by its time attribute
/// and kept at rank 1, it is a window deduplication, the rank column then the literal 1.
fn ranked(calc: &LogicalCalc, over: &LogicalOver) -> Result<StreamPlan, PlanError> {
    let rank = over.schema.len() - 1;
    let mut bound: Option<(i64, i64)> = None;
    let mut rest = Vec::new();
    for c in calc.filter.iter().flat_map(conjuncts) {
        match (rank_bound(&c, rank), bound) {
            (Some(b), None) => bound = Some(b),
            _ => rest.push(c),
        }
    }
    let dedup = match over.input.as_ref() {
        LogicalPlan::WindowTableFunction(tvf) => {
            let columns = tvf.window_columns();
            let (start, end) = (columns.start, columns.start + 1);
            match over.order.as_slice() {
                [o] if over.function == RankFunction::RowNumber
                    && bound == Some((1, 1))
                    && over.partition.contains(&start)
                    && over.partition.contains(&end)
                    && over.schema.fields[o.column].time_attribute
                        == Some(TimeAttribute::Rowtime) =>
                {
                    Some((tvf, start, end, *o))
                }
                _ => None,
            }
        }
        _ => None,
    };
    let Some((tvf, window_start, window_end, order)) = dedup else {
        // ROW_NUMBER over a TVF, partitioned by its bounds and kept within ranks: a window
        // Top-N.
        if let LogicalPlan::WindowTableFunction(tvf) = over.input.as_ref() {
            let columns = tvf.window_columns();
            let (start, end) = (columns.start, columns.start + 1);
            let by_window = over.partition.contains(&start) && over.partition.contains(&end);
            if by_window && bound.is_some() && over.function != RankFunction::RowNumber {
                return Err(PlanError::Refused {
                    message: format!(
                        "{}() function is not supported on Window TopN currently, only ROW_NUMBER() is supported.",
                        over.function.name()
                    ),
                    line: over.position.0,
                    column: over.position.1,
                });
            }
            if by_window && let Some((first, last)) = bound {
                let input = convert(&over.input)?;
                let time_type = tvf.schema.fields[end + 1].data_type.clone();
                let window = (tvf.window.clone(), start, end, time_type);
                return window_rank(calc, over, input, window, (first, last), rest);
            }
            if over.partition.len() >= 2 {
                return Err(unsupported_over(over));
            }
        }
        // Over a window aggregate partitioned by its window's bounds: a window Top-N too.
        if over.function == RankFunction::RowNumber
            && let Some((first, last)) = bound
        {
            let input = convert(&over.input)?;
            let property = |c: usize| window_property_of(&input, c);
            let start = over
                .partition
                .iter()
                .copied()
                .find(|&c| property(c).is_some_and(|w| w.property == WindowProperty::Start));
            let end = over
                .partition
                .iter()
                .copied()
                .find(|&c| property(c).is_some_and(|w| w.property == WindowProperty::End));
            if let (Some(start), Some(end)) = (start, end)
                && let Some(w) = property(end)
            {
                let window = (w.window, start, end, w.time_type);
                return window_rank(calc, over, input, window, (first, last), rest);
            }
        }
        return top_n(calc, over, bound, rest);
    };
    let keys: Vec<usize> = over
        .partition
        .iter()
        .copied()
        .filter(|&k| k != window_start && k != window_end)
        .collect();
    let dedup = StreamWindowDeduplicate {
        input: Box::new(convert(&over.input)?),
        window: tvf.window.clone(),
        window_start,
        window_end,
        keys,
        order_key: order.column,
        keep_last: order.descending,
        schema: tvf.schema.clone(),
    };
    // The rank of every row kept is 1.
    let one = ScalarExpr::Literal {
        value: Value::Int(1),
        data_type: DataType::not_null(TypeKind::BigInt),
    };
    let inline = |e: &ScalarExpr| {
        e.map_columns(&mut |i, data_type| {
            if i == rank {
                one.clone()
            } else {
                ScalarExpr::Column {
                    index: i,
                    data_type: data_type.clone(),
                }
            }
        })
    };
    Ok(StreamPlan::Calc(StreamCalc {
        input: Box::new(StreamPlan::WindowDeduplicate(dedup)),
        filter: rest.iter().map(inline).reduce(and),
        exprs: calc.exprs.iter().map(inline).collect(),
        schema: calc.schema.clone(),
    }))
}

/// A column that is a window property: which property, of which windows, their time
/// attribute's type, and (SESSION) the partition keys, their columns in the TVF's input and
/// names.
pub(crate) struct WindowColumn {
    pub property: WindowProperty,
    pub window: crate::plan::aggregate::GroupWindow,
    pub time_type: DataType,
    pub partition: Vec<(usize, String)>,
}

/// The window property a column of `plan` is, through Calcs that pass it on, exchanges, and
/// the window Top-N and deduplication (which keep their input's columns), down to a window
/// aggregate or a windowing TVF.
fn window_property_of(plan: &StreamPlan, column: usize) -> Option<WindowColumn> {
    match plan {
        StreamPlan::Calc(c) => match c.exprs.get(column)? {
            ScalarExpr::Column { index, .. } => window_property_of(&c.input, *index),
            _ => None,
        },
        StreamPlan::Exchange(e) => window_property_of(&e.input, column),
        StreamPlan::WindowRank(w) if column < w.input.schema().len() => {
            window_property_of(&w.input, column)
        }
        StreamPlan::WindowDeduplicate(w) => window_property_of(&w.input, column),
        StreamPlan::WindowTableFunction(t) => {
            let first = t.input.schema().len();
            let property = match column.checked_sub(first)? {
                0 => WindowProperty::Start,
                1 => WindowProperty::End,
                2 => WindowProperty::Rowtime,
                _ => return None,
            };
            let input = &t.input.schema().fields;
            Some(WindowColumn {
                property,
                window: t.window.clone(),
                time_type: t.schema.fields.get(first + 2)?.data_type.clone(),
                partition: t
                    .partition
                    .iter()
                    .map(|&k| (k, input[k].name.clone()))
                    .collect(),
            })
        }
        StreamPlan::WindowAggregate(w) => {
            let a = &w.aggregate;
            let first = a.grouping.len() + a.aggregates.len();
            let property = *a.properties.get(column.checked_sub(first)?)?;
            let time_type = a
                .input
                .schema()
                .fields
                .get(a.window.time_column)?
                .data_type
                .clone();
            Some(WindowColumn {
                property,
                window: a.window.clone(),
                time_type,
                partition: Vec::new(),
            })
        }
        _ => None,
    }
}

/// A window Top-N: a WindowRank over `input` (a TVF or a window aggregate, the Over's input;
/// `window`: its windows, its `window_start` and `window_end` columns, the time type), the
/// Calc above reading the rank where the Over had it. Over processing time, Flink's refusal
/// (of a window deduplication when the rank is 1 by the time attribute).
fn window_rank(
    calc: &LogicalCalc,
    over: &LogicalOver,
    input: StreamPlan,
    (window, window_start, window_end, time_type): (
        crate::plan::aggregate::GroupWindow,
        usize,
        usize,
        DataType,
    ),
    (first, last): (i64, i64),
    rest: Vec<ScalarExpr>,
) -> Result<StreamPlan, PlanError> {
    if window.time_attribute == TimeAttribute::Proctime {
        let by_time = matches!(over.order.as_slice(), [o]
            if over.schema.fields[o.column].time_attribute == Some(TimeAttribute::Proctime));
        let what = if by_time && first <= 1 && last == 1 {
            "Window Deduplication"
        } else {
            "Window TopN"
        };
        return Err(PlanError::Refused {
            message: format!("Processing time {what} is not supported yet."),
            line: over.position.0,
            column: over.position.1,
        });
    }
    let rank = over.schema.len() - 1;
    let mut with_rank = false;
    for e in calc.exprs.iter().chain(&rest) {
        e.for_each_column(&mut |i| with_rank |= i == rank);
    }
    let mut fields = input.schema().fields.clone();
    if with_rank {
        fields.push(Field::new("w0$o0", DataType::not_null(TypeKind::BigInt)));
    }
    let node = StreamPlan::WindowRank(StreamWindowRank {
        input: Box::new(input),
        window,
        window_start,
        window_end,
        keys: over
            .partition
            .iter()
            .copied()
            .filter(|&k| k != window_start && k != window_end)
            .collect(),
        order: over.order.clone(),
        range: (first.max(1) as u64, last.max(0) as u64),
        with_rank,
        time_type,
        schema: Schema::new(fields),
    });
    Ok(StreamPlan::Calc(StreamCalc {
        input: Box::new(node),
        filter: rest.into_iter().reduce(and),
        exprs: calc.exprs.clone(),
        schema: calc.schema.clone(),
    }))
}

/// A Top-N (or, in batch mode, any ranking OVER): a Rank over the Over's input, the Calc
/// above reading the rank where the Over had it (the input's width).
fn top_n(
    calc: &LogicalCalc,
    over: &LogicalOver,
    bound: Option<(i64, i64)>,
    rest: Vec<ScalarExpr>,
) -> Result<StreamPlan, PlanError> {
    let rank = over.schema.len() - 1;
    let mut with_rank = false;
    for e in calc.exprs.iter().chain(&rest) {
        e.for_each_column(&mut |i| with_rank |= i == rank);
    }
    let input = convert(&over.input)?;
    // Rank 1 by a time attribute over inserts is a deduplication (keep-first on event time
    // is not built: it stays a Top-N, which updates where Flink's waits and inserts).
    let deduplicate = match over.order.as_slice() {
        [o] if over.function == RankFunction::RowNumber
            && bound == Some((1, 1))
            && input.changelog_mode().is_insert_only() =>
        {
            match input.schema().fields[o.column].time_attribute {
                Some(TimeAttribute::Proctime) => Some(Deduplication {
                    keep_last: o.descending,
                    rowtime: false,
                }),
                Some(TimeAttribute::Rowtime) if o.descending => Some(Deduplication {
                    keep_last: true,
                    rowtime: true,
                }),
                _ => None,
            }
        }
        _ => None,
    };
    // A deduplication's rank is the literal 1, in the Calc above (as Flink's plan has it).
    let one = ScalarExpr::Literal {
        value: Value::Int(1),
        data_type: DataType::not_null(TypeKind::BigInt),
    };
    let exprs: Vec<ScalarExpr> = if deduplicate.is_some() {
        let rank_is_one = |e: &ScalarExpr| {
            e.map_columns(&mut |i, data_type| {
                if i == rank {
                    one.clone()
                } else {
                    ScalarExpr::Column {
                        index: i,
                        data_type: data_type.clone(),
                    }
                }
            })
        };
        with_rank = false;
        calc.exprs.iter().map(rank_is_one).collect()
    } else {
        calc.exprs.clone()
    };
    let mut fields = input.schema().fields.clone();
    if with_rank {
        fields.push(Field::new("w0$o0", DataType::not_null(TypeKind::BigInt)));
    }
    let rank_node = StreamPlan::Rank(StreamRank {
        input: Box::new(input),
        function: over.function,
        partition: over.partition.clone(),
        order: over.order.clone(),
        range: bound.map(|(first, last)| (first.max(1) as u64, last.max(0) as u64)),
        with_rank,
        update_before: true,
        deduplicate,
        sort: false,
        schema: Schema::new(fields),
    });
    Ok(StreamPlan::Calc(StreamCalc {
        input: Box::new(rank_node),
        filter: rest.into_iter().reduce(and),
        exprs,
        schema: calc.schema.clone(),
    }))
}

/// A query's ORDER BY (a Top-N over one partition of everything, Flink's `SortLimit`; every
/// rank in batch mode without a LIMIT) or a LIMIT alone (the first rows to arrive).
fn sort(n: &crate::plan::logical::LogicalSort) -> Result<StreamPlan, PlanError> {
    let input = convert(&n.input)?;
    if n.order.is_empty() {
        return Ok(StreamPlan::Limit(StreamLimit {
            input: keyed_exchange(input, &[]),
            offset: n.offset,
            fetch: n.fetch,
            schema: n.schema.clone(),
        }));
    }
    // On a time attribute, ascending, without a limit: Flink's temporal sort.
    let on_time = n
        .order
        .first()
        .is_some_and(|o| !o.descending && input.schema().fields[o.column].time_attribute.is_some());
    if on_time && n.fetch.is_none() && n.offset == 0 {
        return Ok(StreamPlan::TemporalSort(StreamTemporalSort {
            input: keyed_exchange(input, &[]),
            order: n.order.clone(),
            schema: n.schema.clone(),
        }));
    }
    let first = n.offset + 1;
    let range = match n.fetch {
        Some(0) => Some((first, first - 1)),
        Some(fetch) => Some((first, n.offset + fetch)),
        None if n.offset > 0 => Some((first, u64::MAX)),
        None => None,
    };
    Ok(StreamPlan::Rank(StreamRank {
        schema: n.schema.clone(),
        input: Box::new(input),
        function: RankFunction::RowNumber,
        partition: Vec::new(),
        order: n.order.clone(),
        range,
        with_rank: false,
        update_before: true,
        deduplicate: None,
        sort: true,
    }))
}

/// Which sides of a join a condition reads: (left, right), by column index against the
/// left's width.
fn sides_read(e: &ScalarExpr, left_width: usize) -> (bool, bool) {
    let (mut left, mut right) = (false, false);
    e.for_each_column(&mut |i| {
        if i < left_width {
            left = true;
        } else {
            right = true;
        }
    });
    (left, right)
}

/// `e` with every column shifted by `by` (a right-side condition moved onto the right input,
/// or back onto the join's columns).
fn shifted(e: &ScalarExpr, by: isize) -> ScalarExpr {
    e.map_columns(&mut |i, t| ScalarExpr::Column {
        index: (i as isize + by) as usize,
        data_type: t.clone(),
    })
}

/// A join's stream plan, doing what Flink's join rules visibly do: conditions that read one
/// side only go below the join where that keeps the result (onto an inner side), equalities
/// between the sides become the keys (an operand that is not a column is computed below, as
/// `$f<i>`, or named after its column for a cast, both sides cast to a common type), the rest
/// is the residual. `above`: the conjuncts of a WHERE over the join, which an inner join
/// takes in and an outer join takes where they read only its preserved side; the others come
/// back, to stay above. The plan's columns are the logical join's.
fn join(
    j: &LogicalJoin,
    above: Vec<ScalarExpr>,
) -> Result<(StreamPlan, Vec<ScalarExpr>), PlanError> {
    let left = convert(&j.left)?;
    let right = convert(&j.right)?;
    let nl = left.schema().len();
    let nr = right.schema().len();
    let (mut left_filters, mut right_filters) = (Vec::new(), Vec::new());
    let mut conditions = Vec::new();
    let mut remaining = Vec::new();
    let is_true = |c: &ScalarExpr| {
        matches!(
            c,
            ScalarExpr::Literal {
                value: Value::Boolean(true),
                ..
            }
        )
    };
    let on = conjuncts(&j.condition).into_iter().map(|c| (c, true));
    let where_ = above.into_iter().map(|c| (c, false));
    for (c, in_on) in on.chain(where_) {
        if is_true(&c) {
            continue;
        }
        let inner = j.join_type == JoinType::Inner;
        // A temporal join's ON stays whole (a filter below the versions would change which
        // version is current); a WHERE over an inner one filters the left below.
        if j.temporal.is_some() {
            match sides_read(&c, nl) {
                (true, false) if !in_on && inner => left_filters.push(c),
                _ if in_on => conditions.push(c),
                _ => remaining.push(c),
            }
            continue;
        }
        // An anti join keeps the left rows that match nothing: a condition on them is part
        // of the match.
        let left_kept = j.join_type.left_outer() || (in_on && j.join_type == JoinType::Anti);
        match sides_read(&c, nl) {
            // A condition on one side filters it where its rows are not kept regardless.
            (true, false) if (in_on || inner) && !left_kept => left_filters.push(c),
            (false, true) if (in_on || inner) && !j.join_type.right_outer() => {
                right_filters.push(shifted(&c, -(nl as isize)))
            }
            // A WHERE over an outer join keeps what only its preserved side filters.
            (true, false) if !in_on && !inner && !j.join_type.right_outer() => left_filters.push(c),
            (false, true) if !in_on && !inner && !j.join_type.left_outer() => {
                right_filters.push(shifted(&c, -(nl as isize)))
            }
            _ if in_on || inner => conditions.push(c),
            _ => remaining.push(c),
        }
    }
    // Keys: equalities of a left operand and a right one.
    let mut left_exprs: Vec<(ScalarExpr, String)> = (0..nl)
        .map(|i| {
            (
                column_of(left.schema(), i),
                left.schema().fields[i].name.clone(),
            )
        })
        .collect();
    let mut right_exprs: Vec<(ScalarExpr, String)> = (0..nr)
        .map(|i| {
            (
                column_of(right.schema(), i),
                right.schema().fields[i].name.clone(),
            )
        })
        .collect();
    // Between insert-only inputs, bounds on their event times make an interval join.
    let insert_only =
        left.changelog_mode().is_insert_only() && right.changelog_mode().is_insert_only();
    let attributes: Vec<Option<TimeAttribute>> = left
        .schema()
        .fields
        .iter()
        .chain(&right.schema().fields)
        .map(|f| f.time_attribute)
        .collect();
    let interval = (insert_only && j.temporal.is_none())
        .then(|| window_bounds(&conditions, nl, &attributes))
        .flatten();
    // Both inputs windowed alike and joined on equal window starts and ends: a window join.
    let windowed = (j.temporal.is_none() && interval.is_none())
        .then(|| window_equalities(&left, &right, &conditions))
        .flatten();
    // Each conjunct: a key pair (left slot, right slot), a time bound of an interval join, or
    // a residual over the join's columns.
    enum Part {
        /// Left slot, right slot, and whether the right operand was written first.
        Key(usize, usize, bool),
        Bound(ScalarExpr),
        Residual(ScalarExpr),
    }
    let mut parts = Vec::new();
    for (i, c) in conditions.into_iter().enumerate() {
        if interval.as_ref().is_some_and(|(_, used)| used.contains(&i)) {
            parts.push(Part::Bound(c));
            continue;
        }
        if windowed.as_ref().is_some_and(|(_, used)| used.contains(&i)) {
            continue;
        }
        let pair = match &c {
            ScalarExpr::Call { function, args, .. } if function.name == "=" && args.len() == 2 => {
                match (sides_read(&args[0], nl), sides_read(&args[1], nl)) {
                    ((true, false), (false, true)) => {
                        Some((args[0].clone(), args[1].clone(), false))
                    }
                    ((false, true), (true, false)) => {
                        Some((args[1].clone(), args[0].clone(), true))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let Some((l, r, swapped)) = pair else {
            parts.push(Part::Residual(c));
            continue;
        };
        let r = shifted(&r, -(nl as isize));
        let (l, r) = common_key_types(l, r);
        let slot = |e: ScalarExpr, exprs: &mut Vec<(ScalarExpr, String)>| {
            if let ScalarExpr::Column { index, .. } = e {
                return index;
            }
            let name = match &e {
                ScalarExpr::Cast { expr, .. } => match expr.as_ref() {
                    ScalarExpr::Column { index, .. } => exprs[*index].1.clone(),
                    _ => format!("$f{}", exprs.len()),
                },
                _ => format!("$f{}", exprs.len()),
            };
            exprs.push((e, name));
            exprs.len() - 1
        };
        let l = slot(l, &mut left_exprs);
        let r = slot(r, &mut right_exprs);
        parts.push(Part::Key(l, r, swapped));
    }
    let nl2 = left_exprs.len();
    let side_input =
        |input: StreamPlan, exprs: Vec<(ScalarExpr, String)>, filters: Vec<ScalarExpr>| {
            let width = input.schema().len();
            if exprs.len() == width && filters.is_empty() {
                return input;
            }
            let mut fields: Vec<Field> = Vec::new();
            for (e, name) in &exprs {
                let mut field = match e {
                    ScalarExpr::Column { index, .. } if *index < width => {
                        input.schema().fields[*index].clone()
                    }
                    _ => Field::new(name, e.data_type().clone()),
                };
                field.name = name.clone();
                fields.push(field);
            }
            uniquify(&mut fields);
            StreamPlan::Calc(merge(StreamCalc {
                input: Box::new(input),
                filter: filters.into_iter().reduce(and),
                exprs: exprs.into_iter().map(|(e, _)| e).collect(),
                schema: Schema::new(fields),
            }))
        };
    let left = side_input(left, left_exprs, left_filters);
    let right = side_input(right, right_exprs, right_filters);
    // The join's columns: the right's shift past the left's computed keys.
    let onto_join = |e: &ScalarExpr| {
        e.map_columns(&mut |i, t| ScalarExpr::Column {
            index: if i < nl { i } else { i - nl + nl2 },
            data_type: t.clone(),
        })
    };
    let keep_time = interval.is_some() || j.temporal.is_some() || windowed.is_some();
    let schema = join_schema(left.schema(), right.schema(), j.join_type, keep_time);
    // The condition reads both sides' columns, whatever the output keeps.
    let pairs = join_schema(left.schema(), right.schema(), JoinType::Inner, keep_time);
    let column = |i: usize| column_of(&pairs, i);
    let equals = crate::function::lookup("=");
    let (mut left_keys, mut right_keys) = (Vec::new(), Vec::new());
    let mut printed = Vec::new();
    let mut residual = Vec::new();
    for part in parts {
        match part {
            Part::Key(l, r, swapped) => {
                left_keys.push(l);
                right_keys.push(r);
                if let Some(function) = equals {
                    // A temporal join prints the equality as written (Calcite keeps it in
                    // the correlate's filter); a regular join left operand first.
                    let mut args = vec![column(l), column(nl2 + r)];
                    if swapped && (j.temporal.is_some() || !j.join_type.keeps_right()) {
                        args.reverse();
                    }
                    printed.push(ScalarExpr::Call {
                        function,
                        args,
                        data_type: DataType {
                            kind: TypeKind::Boolean,
                            nullable: pairs.fields[l].data_type.nullable
                                || pairs.fields[nl2 + r].data_type.nullable,
                        },
                    });
                }
            }
            Part::Bound(c) => printed.push(onto_join(&c)),
            Part::Residual(c) => {
                let c = onto_join(&c);
                printed.push(c.clone());
                residual.push(c);
            }
        }
    }
    let width = schema.len();
    let plan = if let Some((left_time, position)) = j.temporal {
        StreamPlan::TemporalJoin(temporal_join(
            left,
            right,
            j.join_type,
            left_keys,
            right_keys,
            left_time,
            printed,
            residual,
            schema,
            position,
        )?)
    } else if let Some((windows, _)) = windowed {
        if windows[0].window.time_attribute == TimeAttribute::Proctime {
            return Err(PlanError::Refused {
                message: "Processing time Window Join is not supported yet.".into(),
                line: 0,
                column: 0,
            });
        }
        StreamPlan::WindowJoin(StreamWindowJoin {
            left: Box::new(left),
            right: Box::new(right),
            join_type: j.join_type,
            windows: Box::new(windows),
            left_keys,
            right_keys,
            condition: printed.into_iter().reduce(and),
            residual: residual.into_iter().reduce(and),
            schema,
        })
    } else {
        match (interval, printed.into_iter().reduce(and)) {
            (Some((bounds, _)), Some(condition)) => StreamPlan::IntervalJoin(StreamIntervalJoin {
                left: Box::new(left),
                right: Box::new(right),
                join_type: j.join_type,
                left_keys,
                right_keys,
                bounds,
                condition,
                residual: residual.into_iter().reduce(and),
                schema,
            }),
            (_, condition) => StreamPlan::Join(StreamJoin {
                left: Box::new(left),
                right: Box::new(right),
                join_type: j.join_type,
                left_keys,
                right_keys,
                condition,
                residual: residual.into_iter().reduce(and),
                update_before: false,
                schema,
                state_ttl: j.state_ttl.clone(),
            }),
        }
    };
    // Back to the logical join's columns, without the computed keys.
    let logical_width = if j.join_type.keeps_right() {
        nl + nr
    } else {
        nl
    };
    let exprs: Vec<ScalarExpr> = (0..logical_width)
        .map(|i| ScalarExpr::Column {
            index: if i < nl { i } else { i - nl + nl2 },
            data_type: j.schema.fields[i].data_type.clone(),
        })
        .collect();
    if exprs.len() == width {
        return Ok((plan, remaining));
    }
    // Named as the join names them (the result is named apart).
    let mut schema = j.schema.clone();
    for (field, e) in schema.fields.iter_mut().zip(&exprs) {
        if let ScalarExpr::Column { index, .. } = e {
            field.name = plan.schema().fields[*index].name.clone();
        }
    }
    let calc = StreamCalc {
        input: Box::new(plan),
        filter: None,
        exprs,
        schema,
    };
    Ok((StreamPlan::Calc(calc), remaining))
}

/// Whether a join of `left` and `right` on `condition` is a window join (its output keeps
/// the time attributes, as the binder must know).
pub(crate) fn joins_windows(
    left: &LogicalPlan,
    right: &LogicalPlan,
    condition: &ScalarExpr,
) -> bool {
    let (Ok(left), Ok(right)) = (convert(left), convert(right)) else {
        return false;
    };
    window_equalities(&left, &right, &conjuncts(condition)).is_some()
}

/// When both inputs are windowed alike (the same windows over the same kind of time) and
/// `conditions` (conjuncts over the left's columns, then the right's) equate their window
/// starts and their window ends: each input's windows, and the conjuncts doing so (Flink's
/// `WindowJoinUtil.satisfyWindowJoin`; otherwise the join is a regular one).
fn window_equalities(
    left: &StreamPlan,
    right: &StreamPlan,
    conditions: &[ScalarExpr],
) -> Option<([WindowedInput; 2], Vec<usize>)> {
    let nl = left.schema().len();
    let mut found: [Option<(usize, usize, usize)>; 2] = [None, None];
    let mut sides: Option<[WindowColumn; 2]> = None;
    for (i, c) in conditions.iter().enumerate() {
        let ScalarExpr::Call { function, args, .. } = c else {
            continue;
        };
        if function.name != "=" || args.len() != 2 {
            continue;
        }
        let (ScalarExpr::Column { index: a, .. }, ScalarExpr::Column { index: b, .. }) =
            (&args[0], &args[1])
        else {
            continue;
        };
        let (l, r) = match (*a < nl, *b < nl) {
            (true, false) => (*a, *b - nl),
            (false, true) => (*b, *a - nl),
            _ => continue,
        };
        let (Some(lw), Some(rw)) = (window_property_of(left, l), window_property_of(right, r))
        else {
            continue;
        };
        let slot = match (lw.property, rw.property) {
            (WindowProperty::Start, WindowProperty::Start) => 0,
            (WindowProperty::End, WindowProperty::End) => 1,
            _ => continue,
        };
        if found[slot].is_none() {
            found[slot] = Some((i, l, r));
            sides = Some([lw, rw]);
        }
    }
    let ([Some(start), Some(end)], Some([lw, rw])) = (found, sides) else {
        return None;
    };
    let windowed = |w: WindowColumn, start: usize, end: usize| WindowedInput {
        window: w.window,
        window_start: start,
        window_end: end,
        time_type: w.time_type,
        partition: w.partition,
    };
    let windows = [windowed(lw, start.1, end.1), windowed(rw, start.2, end.2)];
    windows[0]
        .same_windows(&windows[1])
        .then(|| (windows, vec![start.0, end.0]))
}

/// An event-time temporal join, checked as Flink's rules check it: a versioned right — a primary key the key equalities cover, and a rowtime.
#[allow(clippy::too_many_arguments)]
fn temporal_join(
    left: StreamPlan,
    right: StreamPlan,
    join_type: JoinType,
    left_keys: Vec<usize>,
    right_keys: Vec<usize>,
    left_time: usize,
    conditions: Vec<ScalarExpr>,
    residual: Vec<ScalarExpr>,
    schema: Schema,
    (line, column): (u64, u64),
) -> Result<StreamTemporalJoin, PlanError> {
    let refused = |message: String| PlanError::Refused {
        message,
        line,
        column,
    };
    let unique = right.unique_keys();
    let Some(primary_key) = unique
        .iter()
        .find(|key| key.iter().all(|c| right_keys.contains(c)))
        .cloned()
    else {
        let nl = left.schema().len();
        return Err(refused(match unique.first() {
            Some(key) => format!(
                "Temporal table's primary key [{}] must be included in the equivalence condition of temporal join, but current temporal join condition is [{}].",
                key.iter()
                    .map(|&c| schema.fields[nl + c].name.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
                conditions
                    .iter()
                    .map(|c| crate::plan::explain::expr_text(
                        c,
                        &schema.fields.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
                        crate::plan::explain::Spelling::Physical
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "Temporal Table Join requires primary key in versioned table, but no primary key can be found.".into(),
        }));
    };
    let Some(right_time) = right
        .schema()
        .fields
        .iter()
        .position(|f| f.time_attribute == Some(TimeAttribute::Rowtime))
    else {
        return Err(refused(
            "Event-Time Temporal Table Join requires both primary key and row time attribute in versioned table, but no row time attribute can be found.".into(),
        ));
    };
    Ok(StreamTemporalJoin {
        left: Box::new(left),
        right: Box::new(right),
        join_type,
        left_keys,
        right_keys,
        left_time,
        right_time,
        primary_key,
        conditions,
        residual: residual.into_iter().reduce(and),
        schema,
    })
}

/// A column of `schema` as an expression.
fn column_of(schema: &Schema, i: usize) -> ScalarExpr {
    ScalarExpr::Column {
        index: i,
        data_type: schema.fields[i].data_type.clone(),
    }
}

/// The two operands of a key equality cast to one type where they differ, so that equal
/// values have equal key bytes on both sides.
fn common_key_types(l: ScalarExpr, r: ScalarExpr) -> (ScalarExpr, ScalarExpr) {
    if l.data_type().kind == r.data_type().kind {
        return (l, r);
    }
    let Some(common) =
        crate::types::coercion::common_type_of(&[l.data_type().clone(), r.data_type().clone()])
    else {
        return (l, r);
    };
    let cast = |e: ScalarExpr| {
        if e.data_type().kind == common.kind {
            return e;
        }
        let data_type = DataType {
            kind: common.kind.clone(),
            nullable: e.data_type().nullable,
        };
        ScalarExpr::Cast {
            expr: Box::new(e),
            data_type,
            try_cast: false,
        }
    };
    (cast(l), cast(r))
}

/// A join's output columns over inputs `left` and `right`: the left's, then the right's,
/// named apart as Calcite names a join's row type, a side that may be missing nullable,
/// time attributes materialized unless `keep_time` (an interval join).
fn join_schema(left: &Schema, right: &Schema, join_type: JoinType, keep_time: bool) -> Schema {
    if !join_type.keeps_right() {
        // A semi or anti join's output is its left input's rows.
        let mut fields = left.fields.clone();
        if !keep_time {
            for f in &mut fields {
                f.time_attribute = None;
            }
        }
        return Schema::new(fields);
    }
    let side = |schema: &Schema, nullable: bool| {
        schema.fields.clone().into_iter().map(move |mut f| {
            if !keep_time {
                f.time_attribute = None;
            }
            f.data_type.nullable |= nullable;
            f
        })
    };
    let mut fields: Vec<Field> = side(left, join_type.right_outer())
        .chain(side(right, join_type.left_outer()))
        .collect();
    uniquify(&mut fields);
    Schema::new(fields)
}

/// Calcite's names for a join's columns: a name met before gets the first free suffix.
pub(super) fn uniquify(fields: &mut [Field]) {
    for i in 1..fields.len() {
        if fields[..i].iter().any(|f| f.name == fields[i].name) {
            let base = fields[i].name.clone();
            let mut n = 0;
            while fields.iter().any(|f| f.name == format!("{base}{n}")) {
                n += 1;
            }
            fields[i].name = format!("{base}{n}");
        }
    }
}

/// `input` with its time attributes materialized (a regular join's inputs: Flink's plan
/// casts a rowtime to a plain timestamp in the Calc below).
fn materialized(input: StreamPlan) -> StreamPlan {
    if input
        .schema()
        .fields
        .iter()
        .all(|f| f.time_attribute.is_none())
    {
        return input;
    }
    let n = input.schema().len();
    let mut schema = input.schema().clone();
    for f in &mut schema.fields {
        f.time_attribute = None;
    }
    let exprs = (0..n)
        .map(|i| {
            let field = &input.schema().fields[i];
            let column = column_of(input.schema(), i);
            match field.time_attribute {
                Some(_) => ScalarExpr::Cast {
                    expr: Box::new(column),
                    data_type: field.data_type.clone(),
                    try_cast: false,
                },
                None => column,
            }
        })
        .collect();
    StreamPlan::Calc(merge(StreamCalc {
        exprs,
        input: Box::new(input),
        filter: None,
        schema,
    }))
}

/// The exchange a keyed node reads through: by hash of its keys, or all rows to one instance
/// without keys.
fn keyed_exchange(input: StreamPlan, keys: &[usize]) -> Box<StreamPlan> {
    let distribution = if keys.is_empty() {
        Distribution::Single
    } else {
        Distribution::Hash(keys.to_vec())
    };
    Box::new(StreamPlan::Exchange(StreamExchange {
        schema: input.schema().clone(),
        input: Box::new(input),
        distribution,
    }))
}

/// A ranking node's columns over its pruned `input`: the input's, then the rank `rank` when
/// the query reads it (its place recorded in `remap`).
fn with_rank_column(
    input: &StreamPlan,
    rank: Option<&Field>,
    remap: &mut Vec<Option<usize>>,
) -> Schema {
    let mut fields = input.schema().fields.clone();
    if let Some(rank) = rank {
        fields.push(rank.clone());
        remap.push(Some(input.schema().len()));
    }
    Schema::new(fields)
}

/// The input of a node pruned again (the exchange below comes anew).
fn below_exchange(input: StreamPlan) -> StreamPlan {
    match input {
        StreamPlan::Exchange(e) => *e.input,
        other => other,
    }
}

/// A sort's input (below its exchange) pruned to what the consumer and the sort keys read,
/// the pick moved above (`below_picking`); `order` follows the columns.
fn prune_sorted(
    input: StreamPlan,
    order: &mut [crate::plan::logical::OrderKey],
    needed: &[bool],
) -> (StreamPlan, Vec<Option<usize>>) {
    let mut used = needed.to_vec();
    for o in order.iter() {
        used[o.column] = true;
    }
    let (input, remap) = below_picking(prune(below_exchange(input), &used));
    for o in order.iter_mut() {
        o.column = remap[o.column].unwrap_or(o.column);
    }
    (input, remap)
}

/// A pruned input without the Calc on top that only picks columns (Flink's sort and limit
/// take the rows below it, the pick moving above them), and where each column went.
fn below_picking(pruned: (StreamPlan, Vec<Option<usize>>)) -> (StreamPlan, Vec<Option<usize>>) {
    let (plan, remap) = pruned;
    let StreamPlan::Calc(calc) = plan else {
        return (plan, remap);
    };
    let picks: Option<Vec<usize>> = calc
        .exprs
        .iter()
        .zip(&calc.schema.fields)
        .map(|(e, f)| match e {
            ScalarExpr::Column { index, .. }
                if calc.input.schema().fields[*index].time_attribute == f.time_attribute =>
            {
                Some(*index)
            }
            _ => None,
        })
        .collect();
    match (calc.filter.is_none(), picks) {
        (true, Some(picks)) => {
            let remap = remap.iter().map(|m| m.map(|i| picks[i])).collect();
            (*calc.input, remap)
        }
        _ => (StreamPlan::Calc(calc), remap),
    }
}

/// `plan` (`remap` saying where each of some earlier columns went in it) under a Calc
/// picking the `needed` ones of those, unless it has just those; and where each went.
fn picked_above(
    plan: StreamPlan,
    needed: &[bool],
    remap: Vec<Option<usize>>,
) -> (StreamPlan, Vec<Option<usize>>) {
    let keep: Vec<usize> = (0..needed.len())
        .filter(|&i| needed[i])
        .map(|i| remap[i].unwrap_or(i))
        .collect();
    let (plan, narrowing) = narrowed(plan, &keep);
    let remap = (0..needed.len())
        .map(|i| {
            if needed[i] {
                narrowing[remap[i].unwrap_or(i)]
            } else {
                None
            }
        })
        .collect();
    (plan, remap)
}

/// `input` narrowed to its columns `keep` (ascending) by a Calc, unless those are all of
/// them, and where each of its columns went: for a node whose input kept more than asked (a
/// scan that cannot project, a TVF that keeps its input whole), as Flink's plan has it.
fn narrowed(input: StreamPlan, keep: &[usize]) -> (StreamPlan, Vec<Option<usize>>) {
    let n = input.schema().len();
    if keep.len() == n {
        return (input, identity(n));
    }
    let exprs = keep
        .iter()
        .map(|&i| ScalarExpr::Column {
            index: i,
            data_type: input.schema().fields[i].data_type.clone(),
        })
        .collect();
    let schema = select(input.schema(), keep);
    let calc = merge(StreamCalc {
        input: Box::new(input),
        filter: None,
        exprs,
        schema,
    });
    (StreamPlan::Calc(calc), positions(keep, n))
}

/// `a AND b`, as the binder would have bound it.
pub(crate) fn and(a: ScalarExpr, b: ScalarExpr) -> ScalarExpr {
    let nullable = a.data_type().nullable || b.data_type().nullable;
    match crate::function::lookup("AND") {
        Some(function) => ScalarExpr::Call {
            function,
            args: vec![a, b],
            data_type: DataType {
                kind: TypeKind::Boolean,
                nullable,
            },
        },
        // The registry always has AND; without it the filters stay apart.
        None => a,
    }
}

/// The plan reduced to the output columns marked in `needed`, and where each old output
/// column went (`None`: pruned). A node may keep more than asked (a scan that cannot
/// project); its parent then picks.
fn prune(plan: StreamPlan, needed: &[bool]) -> (StreamPlan, Vec<Option<usize>>) {
    match plan {
        StreamPlan::TableSourceScan(mut scan) => {
            let keep = kept(needed);
            if !scan.can_project() || keep.len() == scan.schema.len() {
                return (StreamPlan::TableSourceScan(scan), identity(needed.len()));
            }
            let remap = positions(&keep, needed.len());
            scan.schema = select(&scan.schema, &keep);
            scan.projection = Some(keep);
            (StreamPlan::TableSourceScan(scan), remap)
        }
        StreamPlan::Values(v) => {
            let n = v.schema.len();
            (StreamPlan::Values(v), identity(n))
        }
        StreamPlan::Calc(calc) => {
            let keep = kept(needed);
            let mut used = vec![false; calc.input.schema().len()];
            for &i in &keep {
                calc.exprs[i].mark_columns(&mut used);
            }
            if let Some(filter) = &calc.filter {
                filter.mark_columns(&mut used);
            }
            let (input, input_remap) = prune(*calc.input, &used);
            let pruned = StreamCalc {
                filter: calc.filter.as_ref().map(|e| remapped(e, &input_remap)),
                exprs: keep
                    .iter()
                    .map(|&i| remapped(&calc.exprs[i], &input_remap))
                    .collect(),
                schema: select(&calc.schema, &keep),
                input: Box::new(input),
            };
            let remap = positions(&keep, needed.len());
            if pruned.is_identity() {
                return (*pruned.input, remap);
            }
            (StreamPlan::Calc(merge(pruned)), remap)
        }
        StreamPlan::Expand(x) => {
            let keep = kept(needed);
            let mut used = vec![false; x.input.schema().len()];
            for project in &x.projects {
                for &i in &keep {
                    project[i].mark_columns(&mut used);
                }
            }
            let (input, input_remap) = prune(*x.input, &used);
            let expand = StreamExpand {
                projects: x
                    .projects
                    .iter()
                    .map(|p| {
                        keep.iter()
                            .map(|&i| remapped(&p[i], &input_remap))
                            .collect()
                    })
                    .collect(),
                schema: select(&x.schema, &keep),
                input: Box::new(input),
            };
            (StreamPlan::Expand(expand), positions(&keep, needed.len()))
        }
        StreamPlan::WatermarkAssigner(w) => {
            let mut used = needed.to_vec();
            used[w.rowtime] = true;
            w.watermark.mark_columns(&mut used);
            let (input, remap) = prune(*w.input, &used);
            let mut schema = input.schema().clone();
            let rowtime = remap[w.rowtime].unwrap_or(w.rowtime);
            schema.fields[rowtime].time_attribute = w.schema.fields[w.rowtime].time_attribute;
            let assigner = StreamWatermarkAssigner {
                input: Box::new(input),
                rowtime,
                watermark: remapped(&w.watermark, &remap),
                schema,
            };
            (StreamPlan::WatermarkAssigner(assigner), remap)
        }
        StreamPlan::Union(u) => {
            let keep = kept(needed);
            let schema = select(&u.schema, &keep);
            let inputs = u
                .inputs
                .into_iter()
                .map(|input| {
                    let (input, remap) = prune(input, needed);
                    // An input that kept more than asked gets a Calc that picks.
                    let picked: Vec<usize> = keep.iter().map(|&i| remap[i].unwrap_or(i)).collect();
                    if picked.iter().enumerate().all(|(new, &old)| new == old)
                        && input.schema().len() == keep.len()
                    {
                        return input;
                    }
                    let exprs = picked
                        .iter()
                        .map(|&i| ScalarExpr::Column {
                            index: i,
                            data_type: input.schema().fields[i].data_type.clone(),
                        })
                        .collect();
                    StreamPlan::Calc(StreamCalc {
                        schema: select(input.schema(), &picked),
                        input: Box::new(input),
                        filter: None,
                        exprs,
                    })
                })
                .collect();
            let remap = positions(&keep, needed.len());
            (StreamPlan::Union(StreamUnion { inputs, schema }), remap)
        }
        StreamPlan::Exchange(mut exchange) => {
            let (input, remap) = prune(*exchange.input, needed);
            if let Distribution::Hash(keys) = &mut exchange.distribution {
                for k in keys.iter_mut() {
                    *k = remap[*k].unwrap_or(*k);
                }
            }
            exchange.schema = input.schema().clone();
            exchange.input = Box::new(input);
            (StreamPlan::Exchange(exchange), remap)
        }
        StreamPlan::GroupAggregate(agg) => {
            let n = agg.schema.len();
            (
                StreamPlan::GroupAggregate(prune_group_aggregate(agg)),
                identity(n),
            )
        }
        StreamPlan::GroupWindowAggregate(agg) => {
            let n = agg.schema.len();
            (
                StreamPlan::GroupWindowAggregate(prune_group_window_aggregate(agg, true)),
                identity(n),
            )
        }
        StreamPlan::WindowAggregate(w) => {
            let n = w.aggregate.schema.len();
            let aggregate = prune_group_window_aggregate(w.aggregate, false);
            (
                StreamPlan::WindowAggregate(StreamWindowAggregate { aggregate }),
                identity(n),
            )
        }
        StreamPlan::WindowTableFunction(mut w) => {
            let width = w.input.schema().len();
            let mut used: Vec<bool> = needed[..width].to_vec();
            used[w.window.time_column] = true;
            for &k in &w.partition {
                used[k] = true;
            }
            let session = w.is_session();
            let (input, remap) = prune(below_exchange(*w.input), &used);
            w.window.time_column = remap[w.window.time_column].unwrap_or(w.window.time_column);
            for k in &mut w.partition {
                *k = remap[*k].unwrap_or(*k);
            }
            let input = if session {
                *keyed_exchange(input, &w.partition)
            } else {
                input
            };
            let mut fields = input.schema().fields.clone();
            fields.extend(w.schema.fields[width..].iter().cloned());
            let mut remap = remap;
            remap.extend((0..3).map(|i| Some(input.schema().len() + i)));
            w.schema = Schema::new(fields);
            w.input = Box::new(input);
            (StreamPlan::WindowTableFunction(w), remap)
        }
        // A sort or limit takes its input's rows whole; a Calc above picks what is read, as
        // Flink's plan has it.
        StreamPlan::Limit(mut l) => {
            let (input, remap) = below_picking(prune(below_exchange(*l.input), needed));
            l.schema = input.schema().clone();
            l.input = keyed_exchange(input, &[]);
            picked_above(StreamPlan::Limit(l), needed, remap)
        }
        // Normalization compares whole rows: it keeps what the consumer reads, its key and
        // its condition's columns.
        StreamPlan::ChangelogNormalize(mut n) => {
            let mut used = needed.to_vec();
            for &k in &n.keys {
                used[k] = true;
            }
            if let Some(c) = &n.condition {
                c.mark_columns(&mut used);
            }
            let (input, remap) = prune(below_exchange(*n.input), &used);
            for k in &mut n.keys {
                *k = remap[*k].unwrap_or(*k);
            }
            n.condition = n.condition.as_ref().map(|c| remapped(c, &remap));
            n.schema = input.schema().clone();
            n.input = keyed_exchange(input, &n.keys);
            picked_above(StreamPlan::ChangelogNormalize(n), needed, remap)
        }
        StreamPlan::DropUpdateBefore(n) => {
            let (input, remap) = prune(*n.input, needed);
            (
                StreamPlan::DropUpdateBefore(StreamDropUpdateBefore::over(input)),
                remap,
            )
        }
        StreamPlan::TemporalSort(mut r) => {
            let (input, remap) = prune_sorted(*r.input, &mut r.order, needed);
            r.schema = input.schema().clone();
            r.input = keyed_exchange(input, &[]);
            picked_above(StreamPlan::TemporalSort(r), needed, remap)
        }
        StreamPlan::Rank(mut r) if r.sort => {
            let (input, remap) = prune_sorted(*r.input, &mut r.order, needed);
            r.schema = input.schema().clone();
            r.input = keyed_exchange(input, &[]);
            picked_above(StreamPlan::Rank(r), needed, remap)
        }
        StreamPlan::Rank(mut r) => {
            let width = r.input.schema().len();
            let mut used = needed[..width].to_vec();
            for &k in r.partition.iter().chain(r.order.iter().map(|o| &o.column)) {
                used[k] = true;
            }
            let (input, remap) = prune(*r.input, &used);
            // An input that kept more than asked (a scan that cannot project) is narrowed by
            // a Calc, as Flink's plan has it.
            let keep: Vec<usize> = (0..width)
                .filter(|&i| used[i])
                .map(|i| remap[i].unwrap_or(i))
                .collect();
            let (input, narrowing) = narrowed(input, &keep);
            let mut remap: Vec<Option<usize>> =
                remap.iter().map(|m| m.and_then(|i| narrowing[i])).collect();
            let at = |i: usize| remap[i].unwrap_or(i);
            for k in &mut r.partition {
                *k = at(*k);
            }
            for o in &mut r.order {
                o.column = at(o.column);
            }
            r.schema = with_rank_column(
                &input,
                r.with_rank.then(|| &r.schema.fields[width]),
                &mut remap,
            );
            r.input = keyed_exchange(input, &r.partition);
            (StreamPlan::Rank(r), remap)
        }
        StreamPlan::WindowDeduplicate(mut d) => {
            let mut used = needed.to_vec();
            for &k in d
                .keys
                .iter()
                .chain(&[d.order_key, d.window_start, d.window_end])
            {
                used[k] = true;
            }
            // Flink prunes above the TVF, which keeps its input whole.
            let input = match *d.input {
                StreamPlan::WindowTableFunction(w) => {
                    let all = vec![true; w.schema.len()];
                    prune(StreamPlan::WindowTableFunction(w), &all).0
                }
                other => other,
            };
            let (input, remap) = narrowed(input, &kept(&used));
            let at = |i: usize| remap[i].unwrap_or(i);
            for k in &mut d.keys {
                *k = at(*k);
            }
            d.order_key = at(d.order_key);
            d.window_start = at(d.window_start);
            d.window_end = at(d.window_end);
            d.schema = input.schema().clone();
            d.input = keyed_exchange(input, &d.keys);
            (StreamPlan::WindowDeduplicate(d), remap)
        }
        StreamPlan::Join(j) => prune_join(j, needed),
        StreamPlan::IntervalJoin(j) => prune_interval_join(j, needed),
        StreamPlan::WindowJoin(j) => prune_window_join(j, needed),
        StreamPlan::TemporalJoin(j) => prune_temporal_join(j, needed),

        StreamPlan::WindowRank(mut w) => {
            let width = w.input.schema().len();
            let mut used = needed[..width].to_vec();
            for &k in w.keys.iter().chain(&[w.window_start, w.window_end]) {
                used[k] = true;
            }
            for o in &w.order {
                used[o.column] = true;
            }
            // Flink prunes above the TVF, which keeps its input whole.
            let (input, pruned) = match below_exchange(*w.input) {
                StreamPlan::WindowTableFunction(t) => {
                    let all = vec![true; t.schema.len()];
                    (
                        prune(StreamPlan::WindowTableFunction(t), &all).0,
                        identity(width),
                    )
                }
                other => prune(other, &used),
            };
            let (input, remap) = picked_above(input, &used, pruned);
            let at = |i: usize| remap[i].unwrap_or(i);
            for k in &mut w.keys {
                *k = at(*k);
            }
            for o in &mut w.order {
                o.column = at(o.column);
            }
            w.window_start = at(w.window_start);
            w.window_end = at(w.window_end);
            let mut remap = remap;
            w.schema = with_rank_column(
                &input,
                w.with_rank.then(|| &w.schema.fields[width]),
                &mut remap,
            );
            w.input = keyed_exchange(input, &w.keys);
            (StreamPlan::WindowRank(w), remap)
        }
        StreamPlan::Sink(mut sink) => {
            let all = vec![true; sink.input.schema().len()];
            sink.input = Box::new(prune(*sink.input, &all).0);
            let n = sink.schema.len();
            (StreamPlan::Sink(sink), identity(n))
        }
    }
}

/// A join's two inputs pruned to the columns marked in `used` (the left's, then the right's;
/// an input that kept more is narrowed by a Calc, as Flink's plan has it), time attributes
/// materialized unless `keep_time` (an interval join keeps them), and where each old column
/// of the join went.
fn prune_sides(
    left: StreamPlan,
    right: StreamPlan,
    used: &[bool],
    keep_time: bool,
) -> (StreamPlan, StreamPlan, Vec<Option<usize>>) {
    let nl = left.schema().len();
    let side = |input: StreamPlan, used: &[bool]| {
        // Pruned again (below a window deduplication): the exchanges come anew.
        let input = match input {
            StreamPlan::Exchange(e) => *e.input,
            other => other,
        };
        let (input, remap) = prune(input, used);
        let (input, remap) = picked_above(input, used, remap);
        let input = if keep_time {
            input
        } else {
            materialized(input)
        };
        (input, remap)
    };
    let (left, left_remap) = side(left, &used[..nl]);
    let (right, right_remap) = side(right, &used[nl..]);
    let nl2 = left.schema().len();
    let remap = left_remap
        .iter()
        .copied()
        .chain(right_remap.iter().map(|m| m.map(|x| x + nl2)))
        .collect();
    (left, right, remap)
}

/// The columns a join reads itself: its keys and its condition's.
fn join_reads(
    needed: &[bool],
    (nl, nr): (usize, usize),
    left_keys: &[usize],
    right_keys: &[usize],
    conditions: &[&ScalarExpr],
) -> Vec<bool> {
    // A semi or anti join's consumer reads the left's columns only.
    let mut used = needed.to_vec();
    used.resize(nl + nr, false);
    for &k in left_keys {
        used[k] = true;
    }
    for &k in right_keys {
        used[nl + k] = true;
    }
    for c in conditions {
        c.mark_columns(&mut used);
    }
    used
}

/// Where a join's output columns went, from where its inputs' went (`remap`, the left's
/// `nl` then the right's): a semi or anti join outputs the left's only.
fn join_output(join_type: JoinType, nl: usize, remap: &[Option<usize>]) -> Vec<Option<usize>> {
    let width = if join_type.keeps_right() {
        remap.len()
    } else {
        nl
    };
    remap[..width].to_vec()
}

/// A join over the input columns it and its consumer read, time attributes materialized,
/// each input through an exchange on its keys.
fn prune_join(j: StreamJoin, needed: &[bool]) -> (StreamPlan, Vec<Option<usize>>) {
    let nl = j.left.schema().len();
    let conditions: Vec<&ScalarExpr> = j.condition.iter().chain(&j.residual).collect();
    let used = join_reads(
        needed,
        (nl, j.right.schema().len()),
        &j.left_keys,
        &j.right_keys,
        &conditions,
    );
    let (left, right, remap) = prune_sides(*j.left, *j.right, &used, false);
    let nl2 = left.schema().len();
    let at = |i: usize| remap[i].unwrap_or(i);
    let onto = |e: &ScalarExpr| remapped(e, &remap);
    let left_keys: Vec<usize> = j.left_keys.iter().map(|&k| at(k)).collect();
    let right_keys: Vec<usize> = j.right_keys.iter().map(|&k| at(nl + k) - nl2).collect();
    let schema = join_schema(left.schema(), right.schema(), j.join_type, false);
    let output_remap = join_output(j.join_type, nl, &remap);
    let join = StreamJoin {
        condition: j.condition.as_ref().map(onto),
        residual: j.residual.as_ref().map(onto),
        left: keyed_exchange(left, &left_keys),
        right: keyed_exchange(right, &right_keys),
        left_keys,
        right_keys,
        schema,
        ..j
    };
    (StreamPlan::Join(join), output_remap)
}

/// An interval join over the input columns it and its consumer read (its time columns
/// among them), time attributes kept.
fn prune_interval_join(j: StreamIntervalJoin, needed: &[bool]) -> (StreamPlan, Vec<Option<usize>>) {
    let nl = j.left.schema().len();
    let conditions: Vec<&ScalarExpr> = std::iter::once(&j.condition).chain(&j.residual).collect();
    let mut used = join_reads(
        needed,
        (nl, j.right.schema().len()),
        &j.left_keys,
        &j.right_keys,
        &conditions,
    );
    used[j.bounds.left_time] = true;
    used[nl + j.bounds.right_time] = true;
    let (left, right, remap) = prune_sides(*j.left, *j.right, &used, true);
    let nl2 = left.schema().len();
    let at = |i: usize| remap[i].unwrap_or(i);
    let onto = |e: &ScalarExpr| remapped(e, &remap);
    let left_keys: Vec<usize> = j.left_keys.iter().map(|&k| at(k)).collect();
    let right_keys: Vec<usize> = j.right_keys.iter().map(|&k| at(nl + k) - nl2).collect();
    let bounds = WindowBounds {
        left_time: at(j.bounds.left_time),
        right_time: at(nl + j.bounds.right_time) - nl2,
        ..j.bounds
    };
    let schema = join_schema(left.schema(), right.schema(), j.join_type, true);
    let join = StreamIntervalJoin {
        condition: onto(&j.condition),
        residual: j.residual.as_ref().map(onto),
        left: keyed_exchange(left, &left_keys),
        right: keyed_exchange(right, &right_keys),
        left_keys,
        right_keys,
        bounds,
        schema,
        join_type: j.join_type,
    };
    (StreamPlan::IntervalJoin(join), remap)
}

/// A window join over the input columns it and its consumer read (each side's window
/// bounds among them), time attributes kept, each input through an exchange on its keys.
fn prune_window_join(j: StreamWindowJoin, needed: &[bool]) -> (StreamPlan, Vec<Option<usize>>) {
    let nl = j.left.schema().len();
    let conditions: Vec<&ScalarExpr> = j.condition.iter().chain(&j.residual).collect();
    let mut used = join_reads(
        needed,
        (nl, j.right.schema().len()),
        &j.left_keys,
        &j.right_keys,
        &conditions,
    );
    for (s, w) in j.windows.iter().enumerate() {
        used[s * nl + w.window_start] = true;
        used[s * nl + w.window_end] = true;
    }
    let (left, right, remap) = prune_sides(*j.left, *j.right, &used, true);
    let nl2 = left.schema().len();
    let at = |i: usize| remap[i].unwrap_or(i);
    let onto = |e: &ScalarExpr| remapped(e, &remap);
    let left_keys: Vec<usize> = j.left_keys.iter().map(|&k| at(k)).collect();
    let right_keys: Vec<usize> = j.right_keys.iter().map(|&k| at(nl + k) - nl2).collect();
    let [lw, rw] = *j.windows;
    let windows = [
        WindowedInput {
            window_start: at(lw.window_start),
            window_end: at(lw.window_end),
            ..lw
        },
        WindowedInput {
            window_start: at(nl + rw.window_start) - nl2,
            window_end: at(nl + rw.window_end) - nl2,
            ..rw
        },
    ];
    let schema = join_schema(left.schema(), right.schema(), j.join_type, true);
    let output_remap = join_output(j.join_type, nl, &remap);
    let join = StreamWindowJoin {
        condition: j.condition.as_ref().map(onto),
        residual: j.residual.as_ref().map(onto),
        left: keyed_exchange(left, &left_keys),
        right: keyed_exchange(right, &right_keys),
        left_keys,
        right_keys,
        windows: Box::new(windows),
        schema,
        join_type: j.join_type,
    };
    (StreamPlan::WindowJoin(join), output_remap)
}

/// A temporal join over the input columns it and its consumer read (both time columns and
/// the right's primary key among them), time attributes kept.
fn prune_temporal_join(j: StreamTemporalJoin, needed: &[bool]) -> (StreamPlan, Vec<Option<usize>>) {
    let nl = j.left.schema().len();
    let conditions: Vec<&ScalarExpr> = j.conditions.iter().chain(&j.residual).collect();
    let mut used = join_reads(
        needed,
        (nl, j.right.schema().len()),
        &j.left_keys,
        &j.right_keys,
        &conditions,
    );
    used[j.left_time] = true;
    used[nl + j.right_time] = true;
    for &k in &j.primary_key {
        used[nl + k] = true;
    }
    let (left, right, remap) = prune_sides(*j.left, *j.right, &used, true);
    let nl2 = left.schema().len();
    let at = |i: usize| remap[i].unwrap_or(i);
    let onto = |e: &ScalarExpr| remapped(e, &remap);
    let on_right = |k: usize| at(nl + k) - nl2;
    let left_keys: Vec<usize> = j.left_keys.iter().map(|&k| at(k)).collect();
    let right_keys: Vec<usize> = j.right_keys.iter().map(|&k| on_right(k)).collect();
    let join = StreamTemporalJoin {
        conditions: j.conditions.iter().map(onto).collect(),
        residual: j.residual.as_ref().map(onto),
        schema: join_schema(left.schema(), right.schema(), j.join_type, true),
        left: keyed_exchange(left, &left_keys),
        right: keyed_exchange(right, &right_keys),
        left_time: at(j.left_time),
        right_time: on_right(j.right_time),
        primary_key: j.primary_key.iter().map(|&k| on_right(k)).collect(),
        left_keys,
        right_keys,
        join_type: j.join_type,
    };
    (StreamPlan::TemporalJoin(join), remap)
}

/// A group window aggregate over the input columns it reads (all of its own columns stay,
/// as Flink keeps them), with the exchange its keys call for. A proctime window reads no
/// column. The input then settles as Flink's rules leave it: a Calc over a scan that can
/// project hands the scan the columns in the order it reads them, and a Calc that only
/// reorders all its input's columns goes (the aggregate reads them by name).
/// `settle`: as a legacy group window's input settles (a window TVF's aggregate keeps the
/// Calc that orders its input's columns, as Flink's plan does).
fn prune_group_window_aggregate(
    mut agg: StreamGroupWindowAggregate,
    settle: bool,
) -> StreamGroupWindowAggregate {
    let mut used = vec![false; agg.input.schema().len()];
    for &k in &agg.grouping {
        used[k] = true;
    }
    for call in &agg.aggregates {
        for &arg in call.args.iter().chain(&call.filter) {
            used[arg] = true;
        }
    }
    // A legacy proctime group window reads no column; a TVF's window aggregate keeps its
    // proctime column, as Flink's plan does.
    let rowtime = agg.window.time_attribute == TimeAttribute::Rowtime || !settle;
    if rowtime {
        used[agg.window.time_column] = true;
    }
    let nothing_read = !used.contains(&true);
    let (mut input, remap) = prune(*agg.input, &used);
    // A proctime window that counts rows reads no column: the Calc left below computes only
    // the proctime, which Flink does not materialize.
    if nothing_read
        && settle
        && let StreamPlan::Calc(calc) = &input
        && calc.filter.is_none()
    {
        let StreamPlan::Calc(calc) = input else {
            unreachable!("matched above")
        };
        input = *calc.input;
    }
    let (input, moved) = if settle {
        settle_below_aggregate(input)
    } else {
        let n = input.schema().len();
        (input, (0..n).collect())
    };
    let at = |i: usize| moved[remap[i].unwrap_or(i)];
    for k in &mut agg.grouping {
        *k = at(*k);
    }
    for call in &mut agg.aggregates {
        for arg in call.args.iter_mut().chain(call.filter.iter_mut()) {
            *arg = at(*arg);
        }
    }
    agg.window.time_column = if rowtime {
        at(agg.window.time_column)
    } else {
        input.schema().len()
    };
    agg.input = keyed_exchange(input, &agg.grouping);
    agg
}

/// A group aggregate over the input columns it reads, with the exchange its keys call for.
fn prune_group_aggregate(mut agg: StreamGroupAggregate) -> StreamGroupAggregate {
    let mut used = vec![false; agg.input.schema().len()];
    for &k in &agg.grouping {
        used[k] = true;
    }
    for call in &agg.aggregates {
        for &arg in call.args.iter().chain(&call.filter) {
            used[arg] = true;
        }
    }
    let (mut input, remap) = prune(*agg.input, &used);
    let mut moved: Vec<usize> = (0..input.schema().len()).collect();
    // A Calc that only picks columns of an updating input merges into the aggregate, which
    // reads them where they are (Flink's AggregateProjectMergeRule); over an insert-only
    // input it stays, as Flink's plan keeps it above the scan, and above a changelog
    // normalization (which the projection cannot pass).
    if let StreamPlan::Calc(calc) = &input
        && calc.filter.is_none()
        && calc.input.changelog_mode().retracts()
        && !matches!(calc.input.as_ref(), StreamPlan::ChangelogNormalize(_))
        && let Some(columns) = calc
            .exprs
            .iter()
            .map(|e| match e {
                ScalarExpr::Column { index, .. } => Some(*index),
                _ => None,
            })
            .collect::<Option<Vec<usize>>>()
    {
        moved = columns;
        let StreamPlan::Calc(calc) = input else {
            unreachable!("matched above")
        };
        input = *calc.input;
    }
    let at = |i: usize| moved[remap[i].unwrap_or(i)];
    for k in &mut agg.grouping {
        *k = at(*k);
    }
    for call in &mut agg.aggregates {
        for arg in call.args.iter_mut().chain(call.filter.iter_mut()) {
            *arg = at(*arg);
        }
    }
    agg.input = keyed_exchange(input, &agg.grouping);
    agg
}

/// The input of an aggregate as Flink's rules leave it, and where each of its columns went.
fn settle_below_aggregate(input: StreamPlan) -> (StreamPlan, Vec<usize>) {
    let StreamPlan::Calc(mut calc) = input else {
        let n = input.schema().len();
        return (input, (0..n).collect());
    };
    let n = calc.exprs.len();
    if calc.filter.is_none() {
        let width = calc.input.schema().len();
        let mut order = Vec::new();
        for e in &calc.exprs {
            e.for_each_column(&mut |i| {
                if !order.contains(&i) {
                    order.push(i);
                }
            });
        }
        let rest: Vec<usize> = (0..width).filter(|i| !order.contains(i)).collect();
        order.extend(rest);
        match reorder_source(*calc.input, &order) {
            Ok(source) => {
                let mut position = vec![0; width];
                for (new, &old) in order.iter().enumerate() {
                    position[old] = new;
                }
                let remap: Vec<Option<usize>> = position.into_iter().map(Some).collect();
                calc.exprs = calc.exprs.iter().map(|e| remapped(e, &remap)).collect();
                calc.input = Box::new(source);
                if calc.is_identity() {
                    return (*calc.input, (0..n).collect());
                }
            }
            Err(source) => calc.input = source,
        }
    }
    // A Calc that reads every input column once, as it is: the aggregate reads them where
    // they are, and only the filter stays.
    let width = calc.input.schema().len();
    let mut columns = Vec::new();
    for e in &calc.exprs {
        match e {
            ScalarExpr::Column { index, .. } if !columns.contains(index) => columns.push(*index),
            _ => break,
        }
    }
    if columns.len() == n && n == width {
        let input = match calc.filter {
            None => *calc.input,
            Some(filter) => StreamPlan::Calc(StreamCalc {
                schema: calc.input.schema().clone(),
                exprs: (0..width)
                    .map(|i| ScalarExpr::Column {
                        index: i,
                        data_type: calc.input.schema().fields[i].data_type.clone(),
                    })
                    .collect(),
                filter: Some(filter),
                input: calc.input,
            }),
        };
        return (input, columns);
    }
    (StreamPlan::Calc(calc), (0..n).collect())
}

/// A scan that can project (under its watermark assigner, if any) emitting its columns in
/// `order` (a permutation of its output columns); any other plan comes back unchanged.
fn reorder_source(plan: StreamPlan, order: &[usize]) -> Result<StreamPlan, Box<StreamPlan>> {
    match plan {
        StreamPlan::TableSourceScan(mut scan) if scan.can_project() => {
            let projection = scan
                .projection
                .clone()
                .unwrap_or_else(|| (0..scan.source_schema.len()).collect());
            let projection: Vec<usize> = order.iter().map(|&i| projection[i]).collect();
            scan.schema = select(&scan.source_schema, &projection);
            scan.projection = Some(projection);
            Ok(StreamPlan::TableSourceScan(scan))
        }
        StreamPlan::WatermarkAssigner(mut w) => match reorder_source(*w.input, order) {
            Ok(input) => {
                let mut position = vec![None; order.len()];
                for (new, &old) in order.iter().enumerate() {
                    position[old] = Some(new);
                }
                w.rowtime = position[w.rowtime].unwrap_or(w.rowtime);
                w.watermark = remapped(&w.watermark, &position);
                w.schema = select(&w.schema, order);
                w.input = Box::new(input);
                Ok(StreamPlan::WatermarkAssigner(w))
            }
            Err(input) => {
                w.input = input;
                Err(Box::new(StreamPlan::WatermarkAssigner(w)))
            }
        },
        other => Err(Box::new(other)),
    }
}

/// The columns marked in `needed`, or the first when none is: a batch needs a column to
/// carry its row count.
fn kept(needed: &[bool]) -> Vec<usize> {
    let keep: Vec<usize> = (0..needed.len()).filter(|&i| needed[i]).collect();
    if keep.is_empty() && !needed.is_empty() {
        vec![0]
    } else {
        keep
    }
}

/// Where each of `n` columns went when only `keep` (in order) stayed.
fn positions(keep: &[usize], n: usize) -> Vec<Option<usize>> {
    let mut remap = vec![None; n];
    for (new, &old) in keep.iter().enumerate() {
        remap[old] = Some(new);
    }
    remap
}

/// `e` over an input whose columns moved as `remap` says.
fn remapped(e: &ScalarExpr, remap: &[Option<usize>]) -> ScalarExpr {
    e.map_columns(&mut |i, data_type| ScalarExpr::Column {
        index: remap[i].unwrap_or(i),
        data_type: data_type.clone(),
    })
}

fn identity(n: usize) -> Vec<Option<usize>> {
    (0..n).map(Some).collect()
}

fn select(schema: &Schema, columns: &[usize]) -> Schema {
    Schema::new(columns.iter().map(|&i| schema.fields[i].clone()).collect())
}
