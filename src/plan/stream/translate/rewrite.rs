//! Rewrites over stream nodes: Calcs merged, time attributes materialized below regular joins, keyed exchanges placed.

use super::super::StreamPlan;
use super::super::calc::StreamCalc;
use super::super::exchange::{Distribution, StreamExchange};
use crate::plan::expr::ScalarExpr;
use crate::types::Field;
use crate::types::{DataType, Schema, TypeKind};

/// The operands of a chain of ANDs, in order.
pub(crate) fn conjuncts(e: &ScalarExpr) -> Vec<ScalarExpr> {
    match e {
        ScalarExpr::Call { function, args, .. } if function.name == "AND" => {
            args.iter().flat_map(conjuncts).collect()
        }
        other => vec![other.clone()],
    }
}

/// A Calc over a Calc becomes one, unless that would compute one of the lower Calc's
/// expressions twice (it is read more than once and is more than a column or a literal).
pub(super) fn merge(outer: StreamCalc) -> StreamCalc {
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
    // (A ROW's field is as cheap as a column: Calcite's field access, merged by Flink.)
    let repeated = inner.exprs.iter().zip(&reads).any(|(e, &n)| {
        n > 1
            && !matches!(e, ScalarExpr::Column { .. } | ScalarExpr::Literal { .. })
            && !matches!(e, ScalarExpr::Field { expr, .. } if matches!(**expr, ScalarExpr::Column { .. }))
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

/// `e` with every column shifted by `by` (a right-side condition moved onto the right input,
/// or back onto the join's columns).
pub(super) fn shifted(e: &ScalarExpr, by: isize) -> ScalarExpr {
    e.map_columns(&mut |i, t| ScalarExpr::Column {
        index: (i as isize + by) as usize,
        data_type: t.clone(),
    })
}

/// A column of `schema` as an expression.
pub(super) fn column_of(schema: &Schema, i: usize) -> ScalarExpr {
    ScalarExpr::Column {
        index: i,
        data_type: schema.fields[i].data_type.clone(),
    }
}

/// Calcite's names for a join's columns: a name met before gets the first free suffix.
pub(in crate::plan::stream) fn uniquify(fields: &mut [Field]) {
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
pub(super) fn materialized(input: StreamPlan) -> StreamPlan {
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
                    implicit: false,
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
pub(in crate::plan::stream) fn keyed_exchange(
    input: StreamPlan,
    keys: &[usize],
) -> Box<StreamPlan> {
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
