//! Logical nodes to stream nodes, one for one where Flink's plan has one: aggregates (group,
//! group window, window TVF, grouping sets), ranking (Top-N, deduplication, window Top-N) and sorts.

use super::super::calc::StreamCalc;
use super::super::expand::StreamExpand;
use super::super::group_aggregate::StreamGroupAggregate;
use super::super::group_window_aggregate::{AttachedWindow, StreamGroupWindowAggregate};
use super::super::limit::StreamLimit;
use super::super::rank::{Deduplication, StreamRank};
use super::super::table_source_scan::StreamTableSourceScan;
use super::super::temporal_sort::StreamTemporalSort;
use super::super::union::StreamUnion;
use super::super::values::StreamValues;
use super::super::watermark_assigner::StreamWatermarkAssigner;
use super::super::window_aggregate::StreamWindowAggregate;
use super::super::window_deduplicate::StreamWindowDeduplicate;
use super::super::window_rank::StreamWindowRank;
use super::super::window_table_function::StreamWindowTableFunction;
use super::super::{PlanError, StreamPlan};
use super::*;
use crate::plan::aggregate::GroupWindowKind;
use crate::plan::aggregate::WindowProperty;
use crate::plan::aggregate::{AggregateCall, AggregateFunction};
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::{
    Generator, JoinType, LogicalAggregate, LogicalCalc, LogicalOver, LogicalPlan, LogicalUnnest,
    RankFunction,
};
use crate::plan::stream::correlate::StreamCorrelate;
use crate::types::Field;
use crate::types::value::Value;
use crate::types::{DataType, Schema, TimeAttribute, TypeKind};

/// An UNNEST's correlate, with `condition` over the element's columns.
fn correlate(u: &LogicalUnnest, condition: Option<ScalarExpr>) -> Result<StreamPlan, PlanError> {
    let input = convert(&u.input)?;
    let left = u.join_type == JoinType::Left;
    let mut elements = match &u.generator {
        Generator::Unnest(collection) => {
            LogicalUnnest::element_fields(collection.data_type(), u.with_ordinality, left)
                .ok_or_else(|| PlanError::Unsupported {
                    message: format!("UNNEST of {}", collection.data_type().kind),
                    line: 0,
                    column: 0,
                })?
        }
        // The function's columns, as the query names them.
        Generator::Function { .. } => u.schema.fields[u.input.schema().len()..].to_vec(),
    };
    // The function's row type has a nullable ordinality (the query's is NOT NULL).
    if let Some(ordinality) = elements.last_mut().filter(|_| u.with_ordinality) {
        ordinality.data_type.nullable = true;
    }
    let mut fields = input.schema().fields.clone();
    fields.extend(elements);
    Ok(StreamPlan::Correlate(StreamCorrelate {
        input: Box::new(input),
        generator: u.generator.clone(),
        with_ordinality: u.with_ordinality,
        join_type: u.join_type,
        condition,
        correlation: u.correlation,
        schema: Schema::new(fields),
    }))
}

/// One stream node per logical node, Calcs merged where they meet.
pub(super) fn convert(plan: &LogicalPlan) -> Result<StreamPlan, PlanError> {
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
        LogicalPlan::Calc(c) if matches!(c.input.as_ref(), LogicalPlan::OverAggregate(_)) => {
            let LogicalPlan::OverAggregate(o) = c.input.as_ref() else {
                unreachable!("checked by the guard")
            };
            over_calc(c.filter.as_ref(), &c.exprs, &c.schema, o)?
        }
        LogicalPlan::Over(o) => return Err(unsupported_over(o)),
        LogicalPlan::OverAggregate(o) => over_aggregate(o)?,
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
        // A WHERE over an inner UNNEST: what reads only the element goes into the correlate.
        LogicalPlan::Calc(c)
            if c.filter.is_some()
                && matches!(c.input.as_ref(), LogicalPlan::Unnest(u) if u.join_type == JoinType::Inner) =>
        {
            let LogicalPlan::Unnest(u) = c.input.as_ref() else {
                unreachable!("checked by the guard")
            };
            // Conjuncts over the input's columns alone go below, over the element's alone
            // into the correlate; the others stay.
            let width = u.input.schema().len();
            let (mut below, mut inside, mut above) = (Vec::new(), Vec::new(), Vec::new());
            for e in c.filter.as_ref().map(conjuncts).unwrap_or_default() {
                let mut used = vec![false; u.schema.len()];
                e.mark_columns(&mut used);
                match (used[..width].contains(&true), used[width..].contains(&true)) {
                    (_, false) => below.push(e),
                    (false, true) => inside.push(e),
                    (true, true) => above.push(e),
                }
            }
            let mut u = u.clone();
            if let Some(filter) = below.into_iter().reduce(and) {
                let input = u.input.clone();
                *u.input = LogicalPlan::Calc(LogicalCalc {
                    exprs: (0..width)
                        .map(|index| ScalarExpr::Column {
                            index,
                            data_type: input.schema().fields[index].data_type.clone(),
                        })
                        .collect(),
                    schema: input.schema().clone(),
                    input,
                    filter: Some(filter),
                });
            }
            let inside = inside.into_iter().reduce(and).map(|e| {
                e.map_columns(&mut |i, data_type| ScalarExpr::Column {
                    index: i - width,
                    data_type: data_type.clone(),
                })
            });
            let calc = StreamCalc {
                input: Box::new(correlate(&u, inside)?),
                filter: above.into_iter().reduce(and).as_ref().map(simplified),
                exprs: c.exprs.iter().map(simplified).collect(),
                schema: c.schema.clone(),
            };
            StreamPlan::Calc(merge(calc))
        }
        LogicalPlan::Unnest(u) => correlate(u, None)?,
        LogicalPlan::Sort(n) => sort(n)?,
        LogicalPlan::Calc(c) => {
            let calc = StreamCalc {
                input: Box::new(convert(&c.input)?),
                filter: c.filter.as_ref().map(simplified),
                exprs: c.exprs.iter().map(simplified).collect(),
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

/// An expression as the optimizer's simplification leaves it (Calcite's `RexSimplify`, what
/// Flink's optimized plans show): a COALESCE ends at its first NOT NULL operand, and one
/// left with a single operand is that operand.
fn simplified(e: &ScalarExpr) -> ScalarExpr {
    e.rewrite(&mut |sub| {
        let ScalarExpr::Call {
            function,
            args,
            data_type,
        } = sub
        else {
            return None;
        };
        if function.name != "COALESCE" {
            return None;
        }
        let end = args.iter().position(|a| !a.data_type().nullable)? + 1;
        let args: Vec<ScalarExpr> = args[..end].iter().map(simplified).collect();
        Some(match <[ScalarExpr; 1]>::try_from(args) {
            Ok([only]) => only,
            Err(args) => ScalarExpr::Call {
                function,
                args,
                data_type: data_type.clone(),
            },
        })
    })
}

/// `GROUP BY window_start, window_end [, window_time] [, keys]` right over a window TVF: a
/// window aggregate over the TVF's input (the TVF folds into it), under a Calc putting its
/// columns in the logical aggregate's order. `None` when the aggregate is not of that shape.
pub(super) fn window_aggregate(a: &LogicalAggregate) -> Option<Result<StreamPlan, PlanError>> {
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
    let (window_properties, schema) =
        window_aggregate_schema(a, input.schema(), &keys, has(2), |w| {
            tvf.schema.fields[columns.start + w].clone()
        });
    let aggregate = StreamGroupWindowAggregate {
        input: Box::new(input),
        grouping: keys.iter().map(|&(_, g)| g).collect(),
        window,
        aggregates: a.aggregates.clone(),
        properties: window_properties,
        schema,
        emit: Default::default(),
        update_before: true,
        attached: None,
    };
    Some(Ok(in_logical_order(a, &keys, &properties, aggregate)))
}

/// A HAVING over a group window aggregate with conditions on keys alone: those conditions
/// move into the Calc below, after its WHERE (Flink's filter transpose), and the Calc above
/// keeps the others. `None` when there is nothing to move.
pub(super) fn having_on_keys(calc: &LogicalCalc) -> Option<(LogicalCalc, LogicalAggregate)> {
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

/// A group window aggregate over the Calc below it, whose columns are named as Flink's
/// window rewrite names them (a column reference after the column, anything computed
/// `$f<i>`). The exchange below comes with pruning, once the input's columns are settled.
pub(super) fn group_window_aggregate(a: &LogicalAggregate) -> Result<StreamPlan, PlanError> {
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
            emit: Default::default(),
            update_before: true,
            attached: None,
        },
    ))
}

/// A GROUP BY of grouping sets (GROUPING SETS, ROLLUP, CUBE) as Flink plans it: an Expand
/// below the aggregate repeats each row once per set — the keys the set leaves out NULL, and
/// the set's number in a `$e` column (a bit per key left out, the first key's highest) — and
/// the aggregate groups by the keys and `$e`; a Calc above drops `$e` and reads GROUPING and
/// GROUPING_ID off it.
pub(super) fn grouping_sets_aggregate(a: &LogicalAggregate) -> Result<StreamPlan, PlanError> {
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
            written_as_if: false,
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
pub(super) fn group_aggregate(a: &LogicalAggregate) -> Result<StreamPlan, PlanError> {
    let input = convert(&a.input)?;
    let input = match attached_window_aggregate(a, input) {
        Ok(plan) => return Ok(plan),
        Err(input) => *input,
    };
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

/// `GROUP BY window_start, window_end [, window_time] [, keys]` over rows whose window
/// columns a rowtime window aggregate or windowing TVF below made (a cascading window): a
/// window aggregate of those windows, each row aggregated into the one its columns name
/// (Flink's window-attached windowing strategy), insert-only where a group aggregate would
/// update; under a Calc putting its columns in the logical aggregate's order. The input back
/// when the aggregate is not of that shape.
fn attached_window_aggregate(
    a: &LogicalAggregate,
    input: StreamPlan,
) -> Result<StreamPlan, Box<StreamPlan>> {
    if !input.changelog_mode().is_insert_only() {
        return Err(Box::new(input));
    }
    // Each grouping item: a key, or a window column (0 start, 1 end, 2 time) of one window.
    let mut keys = Vec::new();
    let mut properties: Vec<(usize, usize, usize)> = Vec::new();
    let mut windows: Option<WindowColumn> = None;
    for (k, &g) in a.grouping.iter().enumerate() {
        let property = window_property_of(&input, g).filter(|w| {
            w.window.time_attribute == TimeAttribute::Rowtime
                && windows.as_ref().is_none_or(|first| {
                    first.window.kind == w.window.kind && first.window.offset == w.window.offset
                })
        });
        let slot = property.as_ref().and_then(|w| match w.property {
            WindowProperty::Start => Some(0),
            WindowProperty::End => Some(1),
            WindowProperty::Rowtime => Some(2),
            WindowProperty::Proctime => None,
        });
        match (property, slot) {
            (Some(w), Some(slot)) if !properties.iter().any(|&(_, p, _)| p == slot) => {
                properties.push((k, slot, g));
                windows.get_or_insert(w);
            }
            _ => keys.push((k, g)),
        }
    }
    let column = |slot: usize| properties.iter().find(|&&(_, p, _)| p == slot).map(|p| p.2);
    let (Some(window), Some(start), Some(end)) = (windows, column(0), column(1)) else {
        return Err(Box::new(input));
    };
    if matches!(window.window.kind, GroupWindowKind::Session { .. }) {
        return Err(Box::new(input));
    }
    let mut group_window = window.window.clone();
    group_window.time_column = end;
    let (window_properties, schema) =
        window_aggregate_schema(a, input.schema(), &keys, column(2).is_some(), |slot| {
            let mut field = input.schema().fields[column(slot).unwrap_or(end)].clone();
            field.time_attribute = (slot == 2).then_some(TimeAttribute::Rowtime);
            field
        });
    let aggregate = StreamGroupWindowAggregate {
        input: Box::new(input),
        grouping: keys.iter().map(|&(_, g)| g).collect(),
        window: group_window,
        aggregates: a.aggregates.clone(),
        properties: window_properties,
        schema,
        emit: Default::default(),
        update_before: true,
        attached: Some(AttachedWindow {
            start,
            end,
            time: column(2),
        }),
    };
    let slots: Vec<(usize, usize)> = properties.iter().map(|&(k, slot, _)| (k, slot)).collect();
    Ok(in_logical_order(a, &keys, &slots, aggregate))
}

/// A window aggregate's properties (start, end, and the time when `with_time`) and output
/// schema: the keys of `keys` ((item, input column)), the aggregates, then each property's
/// field (`property`: of slot 0 start, 1 end, 2 time) named `window_start`, ….
fn window_aggregate_schema(
    a: &LogicalAggregate,
    input: &Schema,
    keys: &[(usize, usize)],
    with_time: bool,
    property: impl Fn(usize) -> Field,
) -> (Vec<WindowProperty>, Schema) {
    let mut properties = vec![WindowProperty::Start, WindowProperty::End];
    if with_time {
        properties.push(WindowProperty::Rowtime);
    }
    let mut fields: Vec<Field> = keys.iter().map(|&(_, g)| input.fields[g].clone()).collect();
    for call in &a.aggregates {
        fields.push(Field::new(&call.name, call.data_type.clone()));
    }
    for (slot, name) in ["window_start", "window_end", "window_time"]
        .iter()
        .enumerate()
        .take(properties.len())
    {
        let mut field = property(slot);
        field.name = name.to_string();
        fields.push(field);
    }
    (properties, Schema::new(fields))
}

/// A window aggregate under a Calc putting its columns in the logical aggregate's order:
/// the grouping items (each a key of `keys`, (item, input column), or a window property of
/// `properties`, (item, slot: 0 start, 1 end, 2 time)), then the aggregates.
fn in_logical_order(
    a: &LogicalAggregate,
    keys: &[(usize, usize)],
    properties: &[(usize, usize)],
    aggregate: StreamGroupWindowAggregate,
) -> StreamPlan {
    let first_property = keys.len() + a.aggregates.len();
    let exprs: Vec<ScalarExpr> = (0..a.schema.len())
        .map(|i| {
            let index = if i < a.grouping.len() {
                match properties.iter().find(|&&(k, _)| k == i) {
                    Some(&(_, slot)) => first_property + slot,
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
    StreamPlan::Calc(StreamCalc {
        input: Box::new(StreamPlan::WindowAggregate(StreamWindowAggregate {
            aggregate,
        })),
        filter: None,
        exprs,
        schema,
    })
}

/// The names of the Calc below an aggregate after Flink's window rewrite, which builds it
/// anew without names. A window over a window's rowtime is a call of the lower window's
/// property when the rewrite runs, so its column is `$f<i>` too.
pub(super) fn window_rewrite_names(below: &LogicalCalc, a: &LogicalAggregate) -> Vec<String> {
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

/// A Calc (or two, the query's and its subquery's) right over an Over node, as one Calc
/// over the Over's columns, and the Over. `None` when there is no Over below.
pub(super) fn over_below(calc: &LogicalCalc) -> Option<(LogicalCalc, LogicalOver)> {
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

pub(super) fn unsupported_over(over: &LogicalOver) -> PlanError {
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
pub(super) fn rank_bound(e: &ScalarExpr, rank: usize) -> Option<(i64, i64)> {
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
pub(super) fn ranked(calc: &LogicalCalc, over: &LogicalOver) -> Result<StreamPlan, PlanError> {
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
        if bound.is_none()
            && let Some(plan) = ranking_over_time(calc, over, &rest)
        {
            return plan;
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
pub(super) fn window_property_of(plan: &StreamPlan, column: usize) -> Option<WindowColumn> {
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
pub(super) fn window_rank(
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
pub(super) fn top_n(
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
    // Rank 1 by a time attribute over inserts is a deduplication.
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
                Some(TimeAttribute::Rowtime) => Some(Deduplication {
                    keep_last: o.descending,
                    rowtime: true,
                }),
                _ => None,
            }
        }
        _ => None,
    };
    // A deduplication's rank is the literal 1, and any rank kept within one rank that
    // rank, in the Calc above (Flink's ConstantRankNumberColumnRemoveRule).
    let constant = match bound {
        _ if deduplicate.is_some() => Some(1),
        Some((first, last)) if first == last && first >= 1 => Some(first),
        _ => None,
    };
    let one = ScalarExpr::Literal {
        value: Value::Int(constant.unwrap_or(1)),
        data_type: DataType::not_null(TypeKind::BigInt),
    };
    let exprs: Vec<ScalarExpr> = if constant.is_some() {
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
    // Calcite keeps partition keys as a set: in column order, once each.
    let mut partition = over.partition.clone();
    partition.sort_unstable();
    partition.dedup();
    let rank_node = StreamPlan::Rank(StreamRank {
        input: Box::new(input),
        function: over.function,
        partition,
        order: over.order.clone(),
        range: bound.map(|(first, last)| (first.max(1) as u64, last.max(0) as u64)),
        with_rank,
        update_before: true,
        deduplicate,
        sort: false,
        schema: Schema::new(fields),
    });
    // The query's Calc only picking columns is one Calcite removes before the constant rank
    // comes above: the Calc then bears the Rank's names (`1:BIGINT AS w0$o0`).
    let mut schema = calc.schema.clone();
    if constant.is_some()
        && rest.is_empty()
        && calc
            .exprs
            .iter()
            .all(|e| matches!(e, ScalarExpr::Column { .. }))
    {
        for (e, f) in calc.exprs.iter().zip(&mut schema.fields) {
            if let ScalarExpr::Column { index, .. } = e {
                f.name = if *index == rank {
                    "w0$o0".to_string()
                } else {
                    over.schema.fields[*index].name.clone()
                };
            }
        }
    }
    Ok(StreamPlan::Calc(StreamCalc {
        input: Box::new(rank_node),
        filter: rest.into_iter().reduce(and),
        exprs,
        schema,
    }))
}

/// A query's ORDER BY (a Top-N over one partition of everything, Flink's `SortLimit`; every
/// rank in batch mode without a LIMIT) or a LIMIT alone (the first rows to arrive).
pub(super) fn sort(n: &crate::plan::logical::LogicalSort) -> Result<StreamPlan, PlanError> {
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
