//! An OverAggregate from its logical node and the query's Calc above it (`over_calc`).

use super::super::calc::StreamCalc;
use super::super::over_aggregate::StreamOverAggregate;
use super::super::{PlanError, StreamPlan};
use super::*;
use crate::plan::aggregate::{AggregateCall, AggregateFunction};
use crate::plan::explain::Spelling;
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::{LogicalOverAggregate, OverCall, OverFrame, RankFunction};
use crate::types::value::Value;
use crate::types::{DataType, Field, Schema, TypeKind};

pub(super) fn over_aggregate(o: &LogicalOverAggregate) -> Result<StreamPlan, PlanError> {
    let exprs: Vec<ScalarExpr> = o
        .schema
        .fields
        .iter()
        .enumerate()
        .map(|(index, f)| ScalarExpr::Column {
            index,
            data_type: f.data_type.clone(),
        })
        .collect();
    over_calc(None, &exprs, &o.schema, o)
}

/// ROW_NUMBER, RANK or DENSE_RANK by one time attribute ascending, with no filter bounding
/// the rank (no Top-N): Flink's OverAggregate, ROW_NUMBER over ROWS and the others over
/// RANGE UNBOUNDED PRECEDING; `rest` filters above it. `None` for another order.
pub(super) fn ranking_over_time(
    calc: &crate::plan::logical::LogicalCalc,
    over: &crate::plan::logical::LogicalOver,
    rest: &[ScalarExpr],
) -> Option<Result<StreamPlan, PlanError>> {
    let [order] = over.order.as_slice() else {
        return None;
    };
    if order.descending
        || over.input.schema().fields[order.column]
            .time_attribute
            .is_none()
    {
        return None;
    }
    let function = match over.function {
        RankFunction::RowNumber => AggregateFunction::RowNumber,
        RankFunction::Rank => AggregateFunction::Rank,
        RankFunction::DenseRank => AggregateFunction::DenseRank,
    };
    let logical = LogicalOverAggregate {
        input: over.input.clone(),
        partition: over.partition.clone(),
        order: order.column,
        frame: OverFrame {
            rows: over.function == RankFunction::RowNumber,
            preceding: None,
            interval_text: String::new(),
        },
        calls: vec![OverCall {
            function,
            args: Vec::new(),
            distinct: false,
            data_type: DataType::not_null(TypeKind::BigInt),
        }],
        schema: over.schema.clone(),
    };
    let filter = rest.iter().cloned().reduce(and);
    Some(over_calc(
        filter.as_ref(),
        &calc.exprs,
        &calc.schema,
        &logical,
    ))
}

/// Flink's refusal of an OverAggregate over updates (known once changelogs are
/// normalized): the message names the node that makes them.
pub(super) fn refuse_updating_over_input(plan: &StreamPlan) -> Result<(), PlanError> {
    if let StreamPlan::OverAggregate(o) = plan
        && !o.input.changelog_mode().is_insert_only()
    {
        let mut node = o.input.as_ref();
        while let StreamPlan::Calc(StreamCalc { input, .. })
        | StreamPlan::Exchange(super::super::exchange::StreamExchange { input, .. }) = node
        {
            node = input;
        }
        return Err(PlanError::Refused {
            message: format!(
                "StreamPhysicalOverAggregate doesn't support consuming update and delete changes which is produced by node {}",
                node.line(Spelling::Physical, None)
            ),
            line: 0,
            column: 0,
        });
    }
    plan.inputs()
        .into_iter()
        .try_for_each(refuse_updating_over_input)
}

/// The query's Calc (`filter`, `exprs` over the logical node's columns, `schema`) over an
/// OverAggregate, as Calcite's ProjectToWindow splits them: the calls' arguments that are
/// not columns, and the SELECT items computed from input columns alone, are computed by a
/// Calc below (appended to the input's columns, named `$3`, … by position); the rows are
/// exchanged on the partition keys; the Calc above reads the rest. Calcite's rewrite of SUM
/// tests `COUNT(x) > 0` with an INTEGER zero that the optimized plan shows as a BIGINT one
/// (`>(w0$o0, 0:BIGINT)`; the abstract syntax tree keeps the INTEGER). A Calc above that
/// only picks columns names the calls' columns by position (`w0$o0 AS $1`), and goes when
/// it picks them all in order.
pub(super) fn over_calc(
    filter: Option<&ScalarExpr>,
    exprs: &[ScalarExpr],
    schema: &Schema,
    o: &LogicalOverAggregate,
) -> Result<StreamPlan, PlanError> {
    let input = convert(&o.input)?;
    let width = input.schema().len();
    let mut below: Vec<ScalarExpr> = input
        .schema()
        .fields
        .iter()
        .enumerate()
        .map(|(index, f)| ScalarExpr::Column {
            index,
            data_type: f.data_type.clone(),
        })
        .collect();
    let mut fields = input.schema().fields.clone();
    // The column of a computed expression below (the same expression once).
    let mut computed_at = |e: &ScalarExpr| -> usize {
        let text = format!("{e:?}");
        match below.iter().position(|b| format!("{b:?}") == text) {
            Some(i) => i,
            None => {
                fields.push(Field::new(
                    format!("${}", below.len()),
                    e.data_type().clone(),
                ));
                below.push(e.clone());
                below.len() - 1
            }
        }
    };
    let mut calls = Vec::new();
    for call in &o.calls {
        let args = call
            .args
            .iter()
            .map(|arg| match arg {
                ScalarExpr::Column { index, .. } => *index,
                computed => computed_at(computed),
            })
            .collect();
        calls.push(AggregateCall {
            function: call.function,
            args,
            distinct: call.distinct,
            filter: None,
            data_type: call.data_type.clone(),
            name: String::new(),
        });
    }
    let input_only = |e: &ScalarExpr| {
        let mut only = !matches!(e, ScalarExpr::Column { .. } | ScalarExpr::Literal { .. });
        e.for_each_column(&mut |i| only &= i < width);
        only
    };
    let pushed: Vec<Option<usize>> = exprs
        .iter()
        .map(|e| input_only(e).then(|| computed_at(e)))
        .collect();
    let computed = below.len() - width;
    let input = if computed == 0 {
        input
    } else {
        StreamPlan::Calc(merge(StreamCalc {
            input: Box::new(input),
            filter: None,
            exprs: below,
            schema: Schema::new(fields),
        }))
    };
    let mut node_fields = input.schema().fields.clone();
    node_fields.extend(o.schema.fields[width..].iter().cloned());
    let node = StreamPlan::OverAggregate(StreamOverAggregate {
        input: keyed_exchange(input, &o.partition),
        partition: o.partition.clone(),
        order: o.order,
        frame: o.frame.clone(),
        calls,
        schema: Schema::new(node_fields),
    });
    // The logical node's columns on the stream node's.
    let column = |i: usize, t: &crate::types::DataType| ScalarExpr::Column {
        index: if i < width { i } else { i + computed },
        data_type: t.clone(),
    };
    let above: Vec<ScalarExpr> = exprs
        .iter()
        .zip(&pushed)
        .map(|(e, pushed)| match pushed {
            Some(at) => ScalarExpr::Column {
                index: *at,
                data_type: e.data_type().clone(),
            },
            None => e
                .map_columns(&mut |i, t| column(i, t))
                .rewrite(&mut |e| bigint_zero(e, width + computed)),
        })
        .collect();
    let filter = filter.map(|f| f.map_columns(&mut |i, t| column(i, t)));
    let picks = filter.is_none() && above.iter().all(|e| matches!(e, ScalarExpr::Column { .. }));
    if picks
        && above.len() == node.schema().len()
        && above
            .iter()
            .enumerate()
            .all(|(i, e)| matches!(e, ScalarExpr::Column { index, .. } if *index == i))
    {
        return Ok(node);
    }
    let mut schema = schema.clone();
    if picks {
        for (i, (e, f)) in above.iter().zip(&mut schema.fields).enumerate() {
            if matches!(e, ScalarExpr::Column { index, .. } if *index >= width + computed) {
                f.name = format!("${i}");
            }
        }
    }
    Ok(StreamPlan::Calc(merge(StreamCalc {
        input: Box::new(node),
        filter,
        exprs: above,
        schema,
    })))
}

/// `COUNT(x) > 0` of Calcite's SUM rewrite with its zero a BIGINT (`calls`: where the
/// node's call columns start).
fn bigint_zero(e: &ScalarExpr, calls: usize) -> Option<ScalarExpr> {
    let ScalarExpr::Call {
        function,
        args,
        data_type,
    } = e
    else {
        return None;
    };
    // The zero comes widened to the count's type by a cast (`Binder::call`).
    let zero = |e: &ScalarExpr| match e {
        ScalarExpr::Cast { expr, .. } => matches!(
            expr.as_ref(),
            ScalarExpr::Literal {
                value: Value::Int(0),
                ..
            }
        ),
        _ => false,
    };
    match args.as_slice() {
        [count @ ScalarExpr::Column { index, .. }, z]
            if function.name == ">" && *index >= calls && zero(z) =>
        {
            Some(ScalarExpr::Call {
                function,
                args: vec![
                    count.clone(),
                    ScalarExpr::Literal {
                        value: Value::Int(0),
                        data_type: DataType::not_null(TypeKind::BigInt),
                    },
                ],
                data_type: data_type.clone(),
            })
        }
        _ => None,
    }
}
