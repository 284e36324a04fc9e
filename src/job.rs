//! Building a job graph from a stream plan: sources split into splits, each split followed
//! by the stateless operators above it (they commute with UNION ALL, so each split gets its
//! own chain); an exchange starts a task vertex of `parallelism.default` instances.

use crate::types::chunk::runtime_schema;
use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::SchemaRef;

use crate::catalog::TableDef;
use crate::connector::ConnectorError;
use crate::connector::registry::{self, ScanRequest};
use crate::connector::source::split::Pipeline;
use crate::connector::source::values::ValuesSplit;
use crate::exec::calc::CalcOperator;
use crate::exec::changelog_kinds::ChangelogKindsOperator;
use crate::exec::changelog_normalize::ChangelogNormalizeOperator;
use crate::exec::deduplicate::DeduplicateOperator;
use crate::exec::drop_update_before::DropUpdateBeforeOperator;
use crate::exec::error::ExecError;
use crate::exec::expand::ExpandOperator;
use crate::exec::group_aggregate::GroupAggregateOperator;
use crate::exec::group_window_aggregate::GroupWindowAggregateOperator;
use crate::exec::interval_join::IntervalJoinOperator;
use crate::exec::join::JoinOperator;
use crate::exec::limit::LimitOperator;
use crate::exec::operator::Operator;
use crate::exec::rank::RankOperator;
use crate::exec::semi_anti_join::SemiAntiJoinOperator;
use crate::exec::session_window_table_function::SessionWindowTableFunctionOperator;
use crate::exec::slicing_window_aggregate::SlicingWindowAggregateOperator;
use crate::exec::state::alignment::AlignmentGroup;
use crate::exec::temporal_join::TemporalJoinOperator;
use crate::exec::temporal_sort::TemporalSortOperator;
use crate::exec::watermark_assigner::{WatermarkAssignerOperator, WatermarkEmission};
use crate::exec::window_deduplicate::WindowDeduplicateOperator;
use crate::exec::window_join::WindowJoinOperator;
use crate::exec::window_rank::WindowRankOperator;
use crate::exec::window_table_function::WindowTableFunctionOperator;
use crate::function::EvalContext;
use crate::plan::aggregate::GroupWindowKind;
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::JoinType;
use crate::plan::logical::RankFunction;
use crate::plan::stream::StreamPlan;
use crate::plan::stream::exchange::Distribution;
use crate::plan::stream::table_source_scan::StreamTableSourceScan;
use crate::plan::stream::window_aggregate::StreamWindowAggregate;
use crate::runtime::graph::{Edge, JobGraph, Partitioning, TaskVertex, Upstream};
use crate::types::TimeAttribute;

/// The session's options a job is built with.
#[derive(Debug, Clone)]
pub struct JobOptions {
    /// `pipeline.auto-watermark-interval`, in milliseconds (Flink's default: 200).
    pub auto_watermark_interval: i64,
    /// `table.exec.source.idle-timeout`, in milliseconds (0, Flink's default: never idle).
    pub idle_timeout: i64,
    /// `parallelism.default`: the instances of each vertex after an exchange (default 1).
    pub parallelism: u32,
    /// `pipeline.max-parallelism`: the number of key groups (Flink's default: 128).
    pub max_parallelism: u32,
    /// Watermarks at Flink's exact places (set by `build_job` for plans that need them).
    pub exact_watermarks: bool,
    /// `table.exec.state.ttl`, in milliseconds (0, Flink's default: state kept for ever).
    pub state_ttl: i64,
}

impl Default for JobOptions {
    fn default() -> Self {
        JobOptions {
            auto_watermark_interval: 200,
            idle_timeout: 0,
            parallelism: 1,
            max_parallelism: crate::exec::state::key_group::DEFAULT_MAX_PARALLELISM,
            exact_watermarks: false,
            state_ttl: 0,
        }
    }
}

/// What a stream plan node's rows come from while the graph is built: source splits whose
/// chains can still take stateless operators, a task whose chain can, or a union of those.
enum Built {
    Splits(Vec<Pipeline>),
    Task(usize),
    Union(Vec<Built>),
}

impl Built {
    /// Appends a stateless operator: to every split's chain, to every instance of a task,
    /// to every input of a union (stateless operators commute with UNION ALL).
    fn push(&mut self, graph: &mut JobGraph, make: &dyn Fn() -> Box<dyn Operator>) {
        match self {
            Built::Splits(pipelines) => {
                for p in pipelines {
                    p.operators.push(make());
                }
            }
            Built::Task(t) => {
                for chain in &mut graph.tasks[*t].instances {
                    chain.push(make());
                }
            }
            Built::Union(inputs) => {
                for input in inputs {
                    input.push(graph, make);
                }
            }
        }
    }

    /// The edges carrying these rows to a consumer, partitioned by `partitioning`.
    fn edges(
        self,
        graph: &mut JobGraph,
        input: usize,
        partitioning: &Partitioning,
        out: &mut Vec<Edge>,
    ) {
        match self {
            Built::Splits(pipelines) => {
                let from = graph.add_source(pipelines);
                out.push(Edge {
                    input,
                    from,
                    partitioning: partitioning.clone(),
                });
            }
            Built::Task(t) => out.push(Edge {
                input,
                from: Upstream::Task(t),
                partitioning: partitioning.clone(),
            }),
            Built::Union(inputs) => {
                for built in inputs {
                    built.edges(graph, input, partitioning, out);
                }
            }
        }
    }
}

/// The job graph of a stream plan: vertices cut at exchanges, stateless operators fused
/// into the chains below them, the sink reading the last.
pub fn build_job(
    plan: &StreamPlan,
    ctx: &EvalContext,
    options: &JobOptions,
) -> Result<JobGraph, ConnectorError> {
    let mut graph = JobGraph {
        max_parallelism: options.max_parallelism,
        ..JobGraph::default()
    };
    let options = &JobOptions {
        exact_watermarks: needs_exact_watermarks(plan),
        ..options.clone()
    };
    let built = build(plan, ctx, options, &mut graph, &mut HashMap::new())?;
    let mut sink_inputs = Vec::new();
    built.edges(&mut graph, 0, &Partitioning::Global, &mut sink_inputs);
    graph.sink_inputs = sink_inputs;
    Ok(graph)
}

/// The alignment groups of a job, by `scan.watermark.alignment.group` name.
type AlignmentGroups = HashMap<String, Arc<AlignmentGroup>>;

fn build(
    plan: &StreamPlan,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut AlignmentGroups,
) -> Result<Built, ConnectorError> {
    match plan {
        StreamPlan::Values(v) => Ok(Built::Splits(vec![Pipeline {
            split: Box::new(ValuesSplit::new(
                v.rows.clone(),
                runtime_schema(&v.schema),
                ctx.clone(),
            )),
            operators: vec![],
        }])),
        StreamPlan::Calc(c) => {
            let mut built = build(&c.input, ctx, options, graph, groups)?;
            let schema = runtime_schema(&c.schema);
            built.push(graph, &|| {
                Box::new(CalcOperator::new(
                    c.filter.clone(),
                    c.exprs.clone(),
                    schema.clone(),
                    ctx.clone(),
                ))
            });
            Ok(built)
        }
        StreamPlan::Expand(x) => {
            let mut built = build(&x.input, ctx, options, graph, groups)?;
            let schema = runtime_schema(&x.schema);
            built.push(graph, &|| {
                Box::new(ExpandOperator::new(
                    x.projects.clone(),
                    schema.clone(),
                    ctx.clone(),
                ))
            });
            Ok(built)
        }
        StreamPlan::DropUpdateBefore(d) => {
            let mut built = build(&d.input, ctx, options, graph, groups)?;
            built.push(graph, &|| Box::new(DropUpdateBeforeOperator));
            Ok(built)
        }
        StreamPlan::ChangelogNormalize(n) => {
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
        // Each split generates its own watermarks (docs/design/0003). A batch job has none
        // but the final one, as in Flink: no row of a bounded input is late.
        StreamPlan::WatermarkAssigner(w) if ctx.batch_mode => {
            build(&w.input, ctx, options, graph, groups)
        }
        StreamPlan::WatermarkAssigner(w) => {
            let mut built = build(&w.input, ctx, options, graph, groups)?;
            let emission = watermark_emission(&w.input, options)?;
            let group = alignment_group(&w.input, groups)?;
            built.push(graph, &|| {
                let assigner = WatermarkAssignerOperator::new(
                    w.rowtime,
                    w.watermark.clone(),
                    emission,
                    ctx.clone(),
                );
                Box::new(match &group {
                    Some(group) => assigner.with_alignment(group.join()),
                    None => assigner,
                })
            });
            Ok(built)
        }
        StreamPlan::Sink(s) => build(&s.input, ctx, options, graph, groups),
        // A new task vertex: `parallelism.default` instances for a hash exchange, one for
        // a single one.
        StreamPlan::Exchange(e) => {
            let input = build(&e.input, ctx, options, graph, groups)?;
            let (instances, partitioning) = match &e.distribution {
                Distribution::Hash(keys) => (
                    options.parallelism,
                    Partitioning::Hash {
                        columns: keys.clone(),
                        schema: runtime_schema(e.input.schema()),
                    },
                ),
                Distribution::Single | Distribution::Any => (1, Partitioning::Global),
            };
            let mut inputs = Vec::new();
            input.edges(graph, 0, &partitioning, &mut inputs);
            Ok(Built::Task(graph.add_task(TaskVertex {
                name: "Exchange".into(),
                instances: (0..instances).map(|_| Vec::new()).collect(),
                inputs,
            })))
        }
        // Keyed by the exchange below it: the task's chain starts with it.
        StreamPlan::WindowTableFunction(w) if w.is_session() => {
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
        StreamPlan::WindowTableFunction(w) => {
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
        StreamPlan::GroupAggregate(g) => {
            let Built::Task(t) = build(&g.input, ctx, options, graph, groups)? else {
                return Err(ConnectorError(
                    "internal error: a group aggregate needs an exchange below it".into(),
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
                .map_err(|e| ConnectorError(e.to_string()))?
                .with_state_ttl(g.state_ttl.as_ref().map_or(options.state_ttl, |t| t.millis));
                chain.push(Box::new(operator));
            }
            Ok(Built::Task(t))
        }
        StreamPlan::Rank(r) => {
            // Flink's refusals: an OVER without a Top-N filter is an unbounded OVER
            // aggregate, then RANK and DENSE_RANK are batch-only.
            if !ctx.batch_mode {
                if r.sort && r.range.is_none_or(|(_, end)| end == u64::MAX) {
                    return Err(ConnectorError(
                        "Sort on a non-time-attribute field is not supported.".into(),
                    ));
                }
                if r.range.is_none() {
                    return Err(ConnectorError(
                        "OVER windows' ordering in stream mode must be defined on a time attribute."
                            .into(),
                    ));
                }
                if r.function != RankFunction::RowNumber {
                    return Err(ConnectorError(format!(
                        "{}() on streaming table is not supported currently",
                        r.function.name()
                    )));
                }
            }
            let Built::Task(t) = build(&r.input, ctx, options, graph, groups)? else {
                return Err(ConnectorError(
                    "internal error: a rank needs an exchange below it".into(),
                ));
            };
            let input = runtime_schema(r.input.schema());
            let output = runtime_schema(&r.schema);
            let task = &mut graph.tasks[t];
            if let (Some(d), false) = (r.deduplicate, ctx.batch_mode) {
                task.name = "Deduplicate".into();
                let rowtime = d.rowtime.then(|| r.order[0].column);
                for chain in &mut task.instances {
                    let operator = DeduplicateOperator::new(
                        input.clone(),
                        r.partition.clone(),
                        d.keep_last,
                        rowtime,
                        r.update_before,
                    )
                    .map_err(|e| ConnectorError(e.to_string()))?
                    .with_state_ttl(options.state_ttl);
                    chain.push(Box::new(operator));
                }
                return Ok(Built::Task(t));
            }
            task.name = "Rank".into();
            for chain in &mut task.instances {
                let operator = RankOperator::new(
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
                )
                .map_err(|e| ConnectorError(e.to_string()))?
                .with_state_ttl(options.state_ttl);
                chain.push(Box::new(operator));
            }
            Ok(Built::Task(t))
        }
        StreamPlan::WindowDeduplicate(d) => {
            let Built::Task(t) = build(&d.input, ctx, options, graph, groups)? else {
                return Err(ConnectorError(
                    "internal error: a window deduplication needs an exchange below it".into(),
                ));
            };
            let schema = runtime_schema(&d.schema);
            let task = &mut graph.tasks[t];
            task.name = "WindowDeduplicate".into();
            for chain in &mut task.instances {
                let operator = WindowDeduplicateOperator::new(
                    schema.clone(),
                    d.keys.clone(),
                    d.window_end,
                    d.order_key,
                    d.keep_last,
                    &d.schema.fields[d.order_key].data_type,
                    ctx.zone.clone(),
                )
                .map_err(|e| ConnectorError(e.to_string()))?;
                chain.push(Box::new(operator));
            }
            Ok(Built::Task(t))
        }
        StreamPlan::WindowRank(w) => {
            let Built::Task(t) = build(&w.input, ctx, options, graph, groups)? else {
                return Err(ConnectorError(
                    "internal error: a window Top-N needs an exchange below it".into(),
                ));
            };
            let (input, output) = (runtime_schema(w.input.schema()), runtime_schema(&w.schema));
            let task = &mut graph.tasks[t];
            task.name = "WindowRank".into();
            for chain in &mut task.instances {
                let operator = WindowRankOperator::new(
                    input.clone(),
                    output.clone(),
                    w.keys.clone(),
                    w.window_end,
                    &w.order,
                    w.range,
                    w.with_rank,
                    &w.time_type,
                    ctx.zone.clone(),
                )
                .map_err(|e| ConnectorError(e.to_string()))?;
                chain.push(Box::new(operator));
            }
            Ok(Built::Task(t))
        }
        StreamPlan::GroupWindowAggregate(g)
        | StreamPlan::WindowAggregate(StreamWindowAggregate { aggregate: g }) => {
            let Built::Task(t) = build(&g.input, ctx, options, graph, groups)? else {
                return Err(ConnectorError(
                    "internal error: a group window aggregate needs an exchange below it".into(),
                ));
            };
            let input = runtime_schema(g.input.schema());
            let output = runtime_schema(&g.schema);
            let task = &mut graph.tasks[t];
            task.name = match plan {
                StreamPlan::WindowAggregate(_) => "WindowAggregate",
                _ => "GroupWindowAggregate",
            }
            .into();
            // HOP and CUMULATE windows of a TVF share slices (Flink's slicing operator).
            let sliced = matches!(plan, StreamPlan::WindowAggregate(_))
                && matches!(
                    g.window.kind,
                    GroupWindowKind::Hop { .. } | GroupWindowKind::Cumulate { .. }
                );
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
                        .map_err(|e| ConnectorError(e.to_string()))?,
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
                        .map_err(|e| ConnectorError(e.to_string()))?,
                    )
                };
                chain.push(operator);
            }
            Ok(Built::Task(t))
        }
        // One task reading both inputs' exchanges, each edge marked with its side.
        StreamPlan::Join(j) if !j.join_type.keeps_right() => {
            let output = runtime_schema(&j.schema);
            let make =
                |left: &SchemaRef, right: &SchemaRef| -> Result<Box<dyn Operator>, ExecError> {
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
        StreamPlan::Join(j) => {
            let output = runtime_schema(&j.schema);
            let make =
                |left: &SchemaRef, right: &SchemaRef| -> Result<Box<dyn Operator>, ExecError> {
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
        StreamPlan::IntervalJoin(j) => {
            let output = runtime_schema(&j.schema);
            let make =
                |left: &SchemaRef, right: &SchemaRef| -> Result<Box<dyn Operator>, ExecError> {
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
        StreamPlan::WindowJoin(j) => {
            let output = runtime_schema(&j.schema);
            let make =
                |left: &SchemaRef, right: &SchemaRef| -> Result<Box<dyn Operator>, ExecError> {
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
        StreamPlan::TemporalJoin(_) if ctx.batch_mode => Err(ConnectorError(
            "A temporal join (FOR SYSTEM_TIME AS OF) runs in streaming mode only: Flink 2.3's batch planner refuses it (unexpected correlate variable $cor0 in the plan)".into(),
        )),
        StreamPlan::TemporalJoin(j) => {
            let output = runtime_schema(&j.schema);
            let make =
                |left: &SchemaRef, right: &SchemaRef| -> Result<Box<dyn Operator>, ExecError> {
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
        StreamPlan::TemporalSort(r) => {
            let built = build(&r.input, ctx, options, graph, groups)?;
            let schema = runtime_schema(&r.schema);
            let rowtime = r.order.first().is_some_and(|o| {
                r.schema.fields[o.column].time_attribute == Some(TimeAttribute::Rowtime)
            });
            keyed_task(built, graph, "TemporalSort", &|| {
                Ok(Box::new(TemporalSortOperator::new(
                    schema.clone(),
                    r.order.clone(),
                    rowtime,
                )?))
            })
        }
        StreamPlan::Limit(l) => {
            let Built::Task(t) = build(&l.input, ctx, options, graph, groups)? else {
                return Err(ConnectorError(
                    "internal error: a limit needs an exchange below it".into(),
                ));
            };
            let task = &mut graph.tasks[t];
            task.name = "Limit".into();
            for chain in &mut task.instances {
                chain.push(Box::new(LimitOperator::new(l.offset, l.fetch)));
            }
            Ok(Built::Task(t))
        }
        StreamPlan::Union(u) => {
            let mut inputs = Vec::new();
            for input in &u.inputs {
                inputs.push(build(input, ctx, options, graph, groups)?);
            }
            Ok(Built::Union(inputs))
        }
        StreamPlan::TableSourceScan(scan) => {
            let mut built = Built::Splits(scan_pipelines(scan, ctx)?);
            // A changelog format's rows carry their kinds in a last column.
            if scan.reads_changelog() {
                if !scan.metadata.is_empty() || !scan.table.partition_keys.is_empty() {
                    return Err(ConnectorError(format!(
                        "table '{}': a changelog format cannot be read with metadata or partition columns yet",
                        scan.table.name
                    )));
                }
                built.push(graph, &|| Box::new(ChangelogKindsOperator));
            }
            // Columns the query does not read are dropped as soon as they are decoded.
            if let Some(projection) = &scan.projection {
                let exprs: Vec<ScalarExpr> = projection
                    .iter()
                    .map(|&i| ScalarExpr::Column {
                        index: i,
                        data_type: scan.source_schema.fields[i].data_type.clone(),
                    })
                    .collect();
                let schema = runtime_schema(&scan.schema);
                built.push(graph, &|| {
                    Box::new(CalcOperator::new(
                        None,
                        exprs.clone(),
                        schema.clone(),
                        ctx.clone(),
                    ))
                });
            }
            Ok(built)
        }
    }
}

/// Makes a join operator from its two inputs' schemas.
type MakeJoin<'a> = dyn Fn(&SchemaRef, &SchemaRef) -> Result<Box<dyn Operator>, ExecError> + 'a;

/// The task of a join: one instance per `parallelism.default` (one where an input goes to
/// a single instance), each with the operator `make` builds from the two inputs' schemas,
/// reading both inputs' exchanges, each edge marked with its side.
#[allow(clippy::too_many_arguments)]
/// The task of a node that reads an exchange (keyed, or all rows to one instance): the
/// exchange's task, named `name`, an operator from `make` appended to each instance.
fn keyed_task(
    built: Built,
    graph: &mut JobGraph,
    name: &str,
    make: &dyn Fn() -> Result<Box<dyn Operator>, ExecError>,
) -> Result<Built, ConnectorError> {
    let Built::Task(t) = built else {
        return Err(ConnectorError(format!(
            "internal error: {name} needs an exchange below it"
        )));
    };
    let task = &mut graph.tasks[t];
    task.name = name.into();
    for chain in &mut task.instances {
        chain.push(make().map_err(|e| ConnectorError(e.to_string()))?);
    }
    Ok(Built::Task(t))
}

fn join_task(
    name: &str,
    sides: [&StreamPlan; 2],
    make: &MakeJoin<'_>,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut AlignmentGroups,
) -> Result<Built, ConnectorError> {
    let mut inputs = Vec::new();
    let mut instances = options.parallelism;
    for (s, input) in sides.into_iter().enumerate() {
        let StreamPlan::Exchange(e) = input else {
            return Err(ConnectorError(
                "internal error: a join needs an exchange below each input".into(),
            ));
        };
        let built = build(&e.input, ctx, options, graph, groups)?;
        let partitioning = match &e.distribution {
            Distribution::Hash(keys) => Partitioning::Hash {
                columns: keys.clone(),
                schema: runtime_schema(e.input.schema()),
            },
            Distribution::Single | Distribution::Any => {
                instances = 1;
                Partitioning::Global
            }
        };
        built.edges(graph, s, &partitioning, &mut inputs);
    }
    let (left, right) = (
        runtime_schema(sides[0].schema()),
        runtime_schema(sides[1].schema()),
    );
    let chains = (0..instances)
        .map(|_| make(&left, &right).map(|operator| vec![operator]))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ConnectorError(e.to_string()))?;
    Ok(Built::Task(graph.add_task(TaskVertex {
        name: name.into(),
        instances: chains,
        inputs,
    })))
}

/// The table scanned below a watermark assigner (through the Calcs of computed columns).
fn scanned_table(input: &StreamPlan) -> Option<&TableDef> {
    let mut node = input;
    loop {
        match node {
            StreamPlan::TableSourceScan(scan) => return Some(&scan.table),
            other => match other.inputs().as_slice() {
                [only] => node = only,
                _ => return None,
            },
        }
    }
}

/// A duration option in milliseconds, with Flink's message when it does not parse.
fn duration_option(table: Option<&TableDef>, key: &str) -> Result<Option<i64>, ConnectorError> {
    let Some(text) = table.and_then(|t| t.option(key)) else {
        return Ok(None);
    };
    crate::connector::option_value::parse_duration(text)
        .map(|nanos| Some(nanos / 1_000_000))
        .ok_or_else(|| {
            ConnectorError(format!(
                "Invalid value for option '{key}'.\nCould not parse value '{text}' for key '{key}'."
            ))
        })
}

/// The alignment group the scanned table's splits join (`scan.watermark.alignment.group`,
/// with its `max-drift` and `update-interval`), shared by every table naming it.
fn alignment_group(
    input: &StreamPlan,
    groups: &mut AlignmentGroups,
) -> Result<Option<Arc<AlignmentGroup>>, ConnectorError> {
    let table = scanned_table(input);
    let Some(name) = table.and_then(|t| t.option("scan.watermark.alignment.group")) else {
        return Ok(None);
    };
    let Some(max_drift) = duration_option(table, "scan.watermark.alignment.max-drift")? else {
        return Err(ConnectorError(format!(
            "table '{}': 'scan.watermark.alignment.group' needs 'scan.watermark.alignment.max-drift'",
            table.map_or("", |t| t.name.as_str())
        )));
    };
    // Flink's default update interval: 1 s.
    let interval =
        duration_option(table, "scan.watermark.alignment.update-interval")?.unwrap_or(1_000);
    Ok(Some(
        groups
            .entry(name.to_string())
            .or_insert_with(|| AlignmentGroup::new(max_drift, interval))
            .clone(),
    ))
}

/// How the watermarks of the table scanned below a watermark assigner are emitted: its
/// `scan.watermark.*` options (an `OPTIONS` hint is already merged into them) over the
/// session's.
fn watermark_emission(
    input: &StreamPlan,
    options: &JobOptions,
) -> Result<WatermarkEmission, ConnectorError> {
    let table = scanned_table(input);
    let option = |key: &str| table.and_then(|t| t.option(key));
    let on_event = match option("scan.watermark.emit.strategy") {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("on-periodic") => false,
        Some(v) if v.eq_ignore_ascii_case("on-event") => true,
        Some(v) => {
            return Err(ConnectorError(format!(
                "Invalid value for option 'scan.watermark.emit.strategy'.\nCould not parse value '{v}' for key 'scan.watermark.emit.strategy'."
            )));
        }
    };
    let idle_timeout =
        duration_option(table, "scan.watermark.idle-timeout")?.unwrap_or(options.idle_timeout);
    Ok(WatermarkEmission {
        interval: options.auto_watermark_interval,
        on_event,
        idle_timeout,
        exact: options.exact_watermarks,
    })
}

/// Whether a group window takes a retracting input: a Top-N or deduplication before it
/// turns newer rows into retractions of older ones, which meet the watermark where Flink
/// emits it only if the sources emit it there.
fn needs_exact_watermarks(plan: &StreamPlan) -> bool {
    if let StreamPlan::GroupWindowAggregate(g) = plan
        && g.input.changelog_mode().retracts()
    {
        return true;
    }
    plan.inputs().into_iter().any(needs_exact_watermarks)
}

/// The splits of a table's source, each producing the table's physical and metadata columns.
fn scan_pipelines(
    scan: &StreamTableSourceScan,
    ctx: &EvalContext,
) -> Result<Vec<Pipeline>, ConnectorError> {
    let table = &scan.table;
    // A stream a program provides (`api::StreamTableEnvironment`): one unbounded split.
    if let Some(source) = &table.provided_source {
        return provided_stream_pipelines(source, scan, ctx);
    }
    let factory = registry::source(table)?;
    // Unbounded sources are refused in batch mode before they connect.
    if ctx.batch_mode && !factory.is_bounded(table) {
        return Err(ConnectorError(format!(
            "Querying an unbounded table 'default_catalog.default_database.{}' in batch mode is not allowed. The table source is unbounded.",
            table.name
        )));
    }
    if ctx.batch_mode && scan.reads_changelog() {
        return Err(ConnectorError(format!(
            "Querying a table in batch mode is currently only possible for INSERT-only table sources. But the source for table 'default_catalog.default_database.{}' produces other changelog messages than just INSERT.",
            table.name
        )));
    }
    let physical = scan.physical_schema();
    factory.splits(
        &ScanRequest {
            table,
            physical: &physical,
            metadata: &scan.metadata,
        },
        ctx,
    )
}

/// The one split of a table whose rows a program pushes (`connector/source/stream.rs`).
fn provided_stream_pipelines(
    source: &crate::catalog::ProvidedSource,
    scan: &StreamTableSourceScan,
    ctx: &EvalContext,
) -> Result<Vec<Pipeline>, ConnectorError> {
    let table = &scan.table;
    if ctx.batch_mode {
        return Err(ConnectorError(format!(
            "Querying an unbounded table 'default_catalog.default_database.{}' in batch mode is not allowed. The table source is unbounded.",
            table.name
        )));
    }
    let stream = crate::connector::source::stream::provided_stream(source).ok_or_else(|| {
        ConnectorError(format!(
            "internal error: table '{}' has a provided source of an unknown kind",
            table.name
        ))
    })?;
    let split = stream
        .open(runtime_schema(&scan.source_schema))
        .map_err(ConnectorError)?;
    Ok(vec![Pipeline {
        split: Box::new(split),
        operators: vec![],
    }])
}
