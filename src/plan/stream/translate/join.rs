//! Joins to their stream nodes: regular, interval, window and temporal joins, with the key
//! types made common and the output schema Flink gives them.

use super::super::calc::StreamCalc;
use super::super::interval_join::{StreamIntervalJoin, window_bounds};
use super::super::join::StreamJoin;
use super::super::lookup_join::StreamLookupJoin;
use super::super::temporal_join::StreamTemporalJoin;
use super::super::window_join::{StreamWindowJoin, WindowedInput};
use super::super::{PlanError, StreamPlan};
use super::*;
use crate::plan::aggregate::WindowProperty;
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::{JoinType, LogicalCalc, LogicalJoin, LogicalPlan};
use crate::types::Field;
use crate::types::value::Value;
use crate::types::{DataType, Schema, TimeAttribute, TypeKind};

/// Which sides of a join a condition reads: (left, right), by column index against the
/// left's width.
pub(super) fn sides_read(e: &ScalarExpr, left_width: usize) -> (bool, bool) {
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

/// A join's stream plan, doing what Flink's join rules visibly do: conditions that read one
/// side only go below the join where that keeps the result (onto an inner side), equalities
/// between the sides become the keys (an operand that is not a column is computed below, as
/// `$f<i>`, or named after its column for a cast, both sides cast to a common type), the rest
/// is the residual. `above`: the conjuncts of a WHERE over the join, which an inner join
/// takes in and an outer join takes where they read only its preserved side; the others come
/// back, to stay above. The plan's columns are the logical join's.
pub(super) fn join(
    j: &LogicalJoin,
    above: Vec<ScalarExpr>,
) -> Result<(StreamPlan, Vec<ScalarExpr>), PlanError> {
    let mut left = convert(&j.left)?;
    let mut right = convert(&j.right)?;
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
    // A side that is itself a join takes the filters on it in turn (into its own inputs
    // where it can), as Calcite's FilterJoinRule takes them down a chain of joins.
    let into_join = |side: &LogicalPlan, filters: &mut Vec<ScalarExpr>| {
        if filters.is_empty()
            || !matches!(side, LogicalPlan::Join(below) if below.temporal.is_none())
        {
            return None;
        }
        let n = side.schema().len();
        Some(convert(&LogicalPlan::Calc(LogicalCalc {
            exprs: (0..n)
                .map(|index| ScalarExpr::Column {
                    index,
                    data_type: side.schema().fields[index].data_type.clone(),
                })
                .collect(),
            schema: side.schema().clone(),
            input: Box::new(side.clone()),
            filter: std::mem::take(filters).into_iter().reduce(and),
        })))
    };
    if let Some(below) = into_join(&j.left, &mut left_filters) {
        left = below?;
    }
    if let Some(below) = into_join(&j.right, &mut right_filters) {
        right = below?;
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
    pub(super) enum Part {
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
                    // Calcite keeps an equality as written; Flink's window join rebuilds
                    // its condition from the keys, the left operand first.
                    let mut args = vec![column(l), column(nl2 + r)];
                    if swapped && windowed.is_none() {
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
    let proctime = j.temporal.is_some_and(|(left_time, _)| {
        left.schema().fields[left_time].time_attribute == Some(TimeAttribute::Proctime)
    });
    let plan = if let (true, Some((_, position))) = (proctime, j.temporal) {
        StreamPlan::LookupJoin(lookup_join(
            left,
            right,
            j.join_type,
            left_keys,
            right_keys,
            residual,
            schema,
            position,
        )?)
    } else if let Some((left_time, position)) = j.temporal {
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
pub(super) fn window_equalities(
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

/// A processing-time temporal join against a table that can be looked up (the binder let
/// only those through): the table's columns as declared, joined on key equalities.
#[allow(clippy::too_many_arguments)]
fn lookup_join(
    left: StreamPlan,
    right: StreamPlan,
    join_type: JoinType,
    left_keys: Vec<usize>,
    right_keys: Vec<usize>,
    residual: Vec<ScalarExpr>,
    schema: Schema,
    (line, column): (u64, u64),
) -> Result<StreamLookupJoin, PlanError> {
    let refused = |message: String| PlanError::Refused {
        message,
        line,
        column,
    };
    let StreamPlan::TableSourceScan(table) = right else {
        return Err(refused(
            "Processing-time temporal join is not supported yet: a lookup join reads the table's columns as declared (a condition or a computed key on the table's side is not supported).".into(),
        ));
    };
    if left_keys.is_empty() {
        return Err(refused(format!(
            "Temporal table join requires an equality condition on fields of table [default_catalog.default_database.{}].",
            table.table.name
        )));
    }
    Ok(StreamLookupJoin {
        input: Box::new(left),
        table,
        join_type,
        left_keys,
        right_keys,
        residual: residual.into_iter().reduce(and),
        schema,
    })
}

/// An event-time temporal join, checked as Flink's rules check it: a versioned right — a primary key the key equalities cover, and a rowtime.
#[allow(clippy::too_many_arguments)]
pub(super) fn temporal_join(
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

/// The two operands of a key equality cast to one type where they differ, so that equal
/// values have equal key bytes on both sides.
pub(super) fn common_key_types(l: ScalarExpr, r: ScalarExpr) -> (ScalarExpr, ScalarExpr) {
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
            implicit: false,
        }
    };
    (cast(l), cast(r))
}

/// A join's output columns over inputs `left` and `right`: the left's, then the right's,
/// named apart as Calcite names a join's row type, a side that may be missing nullable,
/// time attributes materialized unless `keep_time` (an interval join).
pub(super) fn join_schema(
    left: &Schema,
    right: &Schema,
    join_type: JoinType,
    keep_time: bool,
) -> Schema {
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
