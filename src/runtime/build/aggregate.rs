//! Aggregates: the group aggregate, the group window and window aggregates (the slicing
//! operator where the plan says the windows share slices), and changelog normalization.

use super::*;

pub(super) fn changelog_normalize(
    n: &StreamChangelogNormalize,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut AlignmentGroups,
) -> Result<Built, BuildError> {
    let built = build(&n.input, ctx, options, graph, groups)?;
    let schema = runtime_schema(&n.schema);
    keyed_task(built, graph, "ChangelogNormalize", &|| {
        Ok(Box::new(ChangelogNormalizeOperator::new(
            schema.clone(),
            n.keys.clone(),
            n.update_before,
            options.state_ttl > 0,
            n.condition.clone(),
            ctx.clone(),
        )?))
    })
}

pub(super) fn group_aggregate(
    g: &StreamGroupAggregate,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut AlignmentGroups,
) -> Result<Built, BuildError> {
    let Built::Task(t) = build(&g.input, ctx, options, graph, groups)? else {
        return Err(BuildError::Internal(
            "a group aggregate needs an exchange below it".into(),
        ));
    };
    let input = runtime_schema(g.input.schema());
    let output = runtime_schema(&g.schema);
    let task = &mut graph.tasks[t];
    task.name = "GroupAggregate".into();
    for chain in &mut task.instances {
        let operator = GroupAggregateOperator::new(
            &input,
            g.grouping.clone(),
            &g.aggregates,
            output.clone(),
            g.input_retracts(),
            g.update_before,
            ctx.batch_mode,
        )
        .map_err(BuildError::operator)?
        .with_state_ttl(g.state_ttl.as_ref().map_or(options.state_ttl, |t| t.millis));
        chain.push(Box::new(operator));
    }
    Ok(Built::Task(t))
}

pub(super) fn window_aggregate(
    g: &StreamGroupWindowAggregate,
    sliced: bool,
    name: &str,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut AlignmentGroups,
) -> Result<Built, BuildError> {
    let Built::Task(t) = build(&g.input, ctx, options, graph, groups)? else {
        return Err(BuildError::Internal(
            "a group window aggregate needs an exchange below it".into(),
        ));
    };
    let input = runtime_schema(g.input.schema());
    let output = runtime_schema(&g.schema);
    let task = &mut graph.tasks[t];
    task.name = name.into();
    for chain in &mut task.instances {
        let (grouping, window, aggregates, properties) = (
            g.grouping.clone(),
            g.window.clone(),
            g.aggregates.clone(),
            g.properties.clone(),
        );
        let retracting = g.input.changelog_mode().retracts();
        let operator: Box<dyn Operator> = if sliced {
            Box::new(
                SlicingWindowAggregateOperator::new(
                    &input,
                    grouping,
                    window,
                    aggregates,
                    properties,
                    output.clone(),
                    ctx.zone.clone(),
                    retracting,
                )
                .map_err(BuildError::operator)?,
            )
        } else {
            Box::new(
                GroupWindowAggregateOperator::new(
                    &input,
                    grouping,
                    window,
                    aggregates,
                    properties,
                    output.clone(),
                    ctx.zone.clone(),
                    retracting,
                )
                .map_err(BuildError::operator)?,
            )
        };
        chain.push(operator);
    }
    Ok(Built::Task(t))
}
