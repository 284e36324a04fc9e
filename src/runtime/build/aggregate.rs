//! Aggregates: the group aggregate, the group window and window aggregates (the slicing
//! operator where the plan says the windows share slices), and changelog normalization.

use super::*;

pub(super) fn changelog_normalize(
    n: &StreamChangelogNormalize,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
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
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let built = build(&g.input, ctx, options, graph, groups)?;
    let input = runtime_schema(g.input.schema());
    let output = runtime_schema(&g.schema);
    let ttl = g.state_ttl.as_ref().map_or(options.state_ttl, |t| t.millis);
    keyed_task(built, graph, "GroupAggregate", &|| {
        Ok(Box::new(
            GroupAggregateOperator::new(
                &input,
                g.grouping.clone(),
                &g.aggregates,
                output.clone(),
                g.input_retracts(),
                g.update_before,
                ctx.batch_mode,
            )?
            .with_state_ttl(ttl),
        ))
    })
}

pub(super) fn window_aggregate(
    g: &StreamGroupWindowAggregate,
    sliced: bool,
    name: &str,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let built = build(&g.input, ctx, options, graph, groups)?;
    let input = runtime_schema(g.input.schema());
    let output = runtime_schema(&g.schema);
    let retracting = g.input.changelog_mode().retracts();
    keyed_task(built, graph, name, &|| {
        let (grouping, window, aggregates, properties) = (
            g.grouping.clone(),
            g.window.clone(),
            g.aggregates.clone(),
            g.properties.clone(),
        );
        let (output, zone) = (output.clone(), ctx.zone.clone());
        Ok(if sliced {
            Box::new(SlicingWindowAggregateOperator::new(
                &input, grouping, window, aggregates, properties, output, zone, retracting,
            )?)
        } else {
            let mut operator = GroupWindowAggregateOperator::new(
                &input, grouping, window, aggregates, properties, output, zone, retracting,
            )?;
            if let Some(w) = g.attached {
                operator = operator.with_attached_windows(w.start, w.end);
            }
            if g.emit.is_set() && !ctx.batch_mode {
                Box::new(operator.with_emit(g.emit, g.update_before)?)
            } else {
                Box::new(operator)
            }
        })
    })
}

pub(super) fn over_aggregate(
    o: &StreamOverAggregate,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let built = build(&o.input, ctx, options, graph, groups)?;
    let input = runtime_schema(o.input.schema());
    let output = runtime_schema(&o.schema);
    let frame = Frame {
        rows: o.frame.rows,
        preceding: o.frame.preceding,
    };
    let time = match (o.rowtime(), ctx.batch_mode) {
        (false, _) => OverTime::Proctime,
        (true, false) => OverTime::Rowtime,
        (true, true) => OverTime::Batch,
    };
    // Flink's batch LAG lags row by row where rows share their time; this operator's lags
    // by time, as Flink's streaming one does: refused rather than different.
    if time == OverTime::Batch
        && o.calls.iter().any(|c| {
            matches!(
                c.function,
                crate::plan::aggregate::AggregateFunction::Lag { .. }
            )
        })
    {
        return Err(BuildError::Unsupported(
            "LAG … OVER in batch mode is not supported yet (Flink's batch LAG takes the previous row even among rows of the same time; Tideline's, the streaming one's, does not)".into(),
        ));
    }
    keyed_task(built, graph, "OverAggregate", &|| {
        Ok(Box::new(OverAggregateOperator::new(
            input.clone(),
            output.clone(),
            o.partition.clone(),
            o.order,
            time,
            frame,
            o.calls.clone(),
        )?))
    })
}
