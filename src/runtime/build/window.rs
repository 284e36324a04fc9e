//! The windowing TVFs and the operators over their windows: window deduplication and
//! window Top-N.

use super::*;

/// Keyed by the exchange below it: the task's chain starts with it.
pub(super) fn session_window_table_function(
    w: &StreamWindowTableFunction,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let built = build(&w.input, ctx, options, graph, groups)?;
    let GroupWindowKind::Session { gap } = w.window.kind else {
        unreachable!("checked by the guard")
    };
    let input = runtime_schema(w.input.schema());
    let output = runtime_schema(&w.schema);
    keyed_task(built, graph, "WindowTableFunction", &|| {
        Ok(Box::new(SessionWindowTableFunctionOperator::new(
            &input,
            output.clone(),
            w.partition.clone(),
            w.window.time_column,
            gap,
            &w.window.time_type,
            ctx.zone.clone(),
        )?))
    })
}

pub(super) fn window_table_function(
    w: &StreamWindowTableFunction,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let mut built = build(&w.input, ctx, options, graph, groups)?;
    let output = runtime_schema(&w.schema);
    built.push(graph, &|| {
        Box::new(WindowTableFunctionOperator::new(
            w.window.clone(),
            output.clone(),
            ctx.zone.clone(),
        ))
    });
    Ok(built)
}

pub(super) fn window_deduplicate(
    d: &StreamWindowDeduplicate,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let built = build(&d.input, ctx, options, graph, groups)?;
    let schema = runtime_schema(&d.schema);
    keyed_task(built, graph, "WindowDeduplicate", &|| {
        Ok(Box::new(WindowDeduplicateOperator::new(
            schema.clone(),
            d.keys.clone(),
            d.window_end,
            d.order_key,
            d.keep_last,
            &d.schema.fields[d.order_key].data_type,
            ctx.zone.clone(),
        )?))
    })
}

pub(super) fn window_rank(
    w: &StreamWindowRank,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let built = build(&w.input, ctx, options, graph, groups)?;
    let (input, output) = (runtime_schema(w.input.schema()), runtime_schema(&w.schema));
    keyed_task(built, graph, "WindowRank", &|| {
        Ok(Box::new(WindowRankOperator::new(
            input.clone(),
            output.clone(),
            w.keys.clone(),
            w.window_end,
            &w.order,
            w.range,
            w.with_rank,
            &w.time_type,
            ctx.zone.clone(),
        )?))
    })
}
