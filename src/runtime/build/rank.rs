//! Ranking and ordering: Top-N, the sort on a time attribute, and LIMIT.

use super::*;

pub(super) fn rank(
    r: &StreamRank,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    // Flink's refusals: an OVER without a Top-N filter is an unbounded OVER
    // aggregate, then RANK and DENSE_RANK are batch-only.
    if !ctx.batch_mode {
        if r.sort && r.range.is_none_or(|(_, end)| end == u64::MAX) {
            return Err(BuildError::Unsupported(
                "Sort on a non-time-attribute field is not supported.".into(),
            ));
        }
        if r.range.is_none() {
            return Err(BuildError::Unsupported(
                "OVER windows' ordering in stream mode must be defined on a time attribute.".into(),
            ));
        }
        if r.function != RankFunction::RowNumber {
            return Err(BuildError::Unsupported(format!(
                "{}() on streaming table is not supported currently",
                r.function.name()
            )));
        }
    }
    let built = build(&r.input, ctx, options, graph, groups)?;
    let input = runtime_schema(r.input.schema());
    let output = runtime_schema(&r.schema);
    if let (Some(d), false) = (r.deduplicate, ctx.batch_mode) {
        let rowtime = d.rowtime.then(|| r.order[0].column);
        return keyed_task(built, graph, "Deduplicate", &|| {
            Ok(Box::new(
                DeduplicateOperator::new(
                    input.clone(),
                    r.partition.clone(),
                    d.keep_last,
                    rowtime,
                    r.update_before,
                )?
                .with_state_ttl(options.state_ttl),
            ))
        });
    }
    keyed_task(built, graph, "Rank", &|| {
        Ok(Box::new(
            RankOperator::new(
                input.clone(),
                output.clone(),
                r.partition.clone(),
                &r.order,
                r.function,
                r.range.unwrap_or((1, u64::MAX)),
                r.with_rank,
                r.update_before,
                r.input.changelog_mode().retracts(),
                ctx.batch_mode,
            )?
            .with_state_ttl(options.state_ttl),
        ))
    })
}

pub(super) fn temporal_sort(
    r: &StreamTemporalSort,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let built = build(&r.input, ctx, options, graph, groups)?;
    let schema = runtime_schema(&r.schema);
    let rowtime = r
        .order
        .first()
        .is_some_and(|o| r.schema.fields[o.column].time_attribute == Some(TimeAttribute::Rowtime));
    keyed_task(built, graph, "TemporalSort", &|| {
        Ok(Box::new(TemporalSortOperator::new(
            schema.clone(),
            r.order.clone(),
            rowtime,
        )?))
    })
}

pub(super) fn limit(
    l: &StreamLimit,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let built = build(&l.input, ctx, options, graph, groups)?;
    keyed_task(built, graph, "Limit", &|| {
        Ok(Box::new(LimitOperator::new(l.offset, l.fetch)))
    })
}
