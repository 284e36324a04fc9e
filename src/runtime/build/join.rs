//! The joins: regular (inner, outer, semi and anti), interval, window and temporal.

use super::*;

/// One task reading both inputs' exchanges, each edge marked with its side.
pub(super) fn semi_anti_join(
    j: &StreamJoin,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let output = runtime_schema(&j.schema);
    let make = |left: &SchemaRef, right: &SchemaRef| -> Result<Box<dyn Operator>, ExecError> {
        Ok(Box::new(SemiAntiJoinOperator::new(
            left,
            right,
            output.clone(),
            (j.left_keys.clone(), j.right_keys.clone()),
            j.join_type == JoinType::Anti,
            j.residual.clone(),
            ctx.clone(),
            ctx.batch_mode,
        )?))
    };
    join_task(
        "Join",
        [&j.left, &j.right],
        &make,
        ctx,
        options,
        graph,
        groups,
    )
}

pub(super) fn join(
    j: &StreamJoin,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let output = runtime_schema(&j.schema);
    let make = |left: &SchemaRef, right: &SchemaRef| -> Result<Box<dyn Operator>, ExecError> {
        Ok(Box::new(
            JoinOperator::new(
                left,
                right,
                output.clone(),
                j.left_keys.clone(),
                j.right_keys.clone(),
                j.join_type,
                j.residual.clone(),
                ctx.clone(),
                ctx.batch_mode,
            )?
            .with_state_ttls(
                j.state_ttl
                    .clone()
                    .map(|t| t.map_or(options.state_ttl, |t| t.millis)),
            ),
        ))
    };
    join_task(
        "Join",
        [&j.left, &j.right],
        &make,
        ctx,
        options,
        graph,
        groups,
    )
}

pub(super) fn interval_join(
    j: &StreamIntervalJoin,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let output = runtime_schema(&j.schema);
    let make = |left: &SchemaRef, right: &SchemaRef| -> Result<Box<dyn Operator>, ExecError> {
        Ok(Box::new(IntervalJoinOperator::new(
            left,
            right,
            output.clone(),
            (j.left_keys.clone(), j.right_keys.clone()),
            (j.bounds.left_time, j.bounds.right_time),
            (j.bounds.lower, j.bounds.upper),
            j.join_type,
            j.residual.clone(),
            ctx.clone(),
        )?))
    };
    join_task(
        "IntervalJoin",
        [&j.left, &j.right],
        &make,
        ctx,
        options,
        graph,
        groups,
    )
}

pub(super) fn window_join(
    j: &StreamWindowJoin,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let output = runtime_schema(&j.schema);
    let make = |left: &SchemaRef, right: &SchemaRef| -> Result<Box<dyn Operator>, ExecError> {
        Ok(Box::new(WindowJoinOperator::new(
            left,
            right,
            output.clone(),
            (j.left_keys.clone(), j.right_keys.clone()),
            (j.windows[0].window_end, j.windows[1].window_end),
            j.join_type,
            j.residual.clone(),
            &j.windows[0].time_type,
            ctx.zone.clone(),
            ctx.clone(),
        )?))
    };
    join_task(
        "WindowJoin",
        [&j.left, &j.right],
        &make,
        ctx,
        options,
        graph,
        groups,
    )
}

pub(super) fn temporal_join(
    j: &StreamTemporalJoin,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let output = runtime_schema(&j.schema);
    let make = |left: &SchemaRef, right: &SchemaRef| -> Result<Box<dyn Operator>, ExecError> {
        Ok(Box::new(TemporalJoinOperator::new(
            left,
            right,
            output.clone(),
            (j.left_keys.clone(), j.right_keys.clone()),
            (j.left_time, j.right_time),
            j.join_type.left_outer(),
            j.residual.clone(),
            ctx.clone(),
        )?))
    };
    join_task(
        "TemporalJoin",
        [&j.left, &j.right],
        &make,
        ctx,
        options,
        graph,
        groups,
    )
}
