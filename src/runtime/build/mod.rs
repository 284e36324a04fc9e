//! Building a job graph from a stream plan: sources split into splits, each split followed
//! by the stateless operators above it (they commute with UNION ALL, so each split gets its
//! own chain); an exchange starts a task vertex of `parallelism.default` instances. Each
//! plan node is built by the file of its family (sources, stateless operators, aggregates,
//! windows, ranks, joins), which decides nothing the plan has not decided.

mod aggregate;
mod join;
mod rank;
mod source;
mod stateless;
mod window;

use crate::types::chunk::{batch_with_rows, runtime_schema};
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
use crate::exec::correlate::CorrelateOperator;
use crate::exec::deduplicate::DeduplicateOperator;
use crate::exec::drop_update_before::DropUpdateBeforeOperator;
use crate::exec::error::ExecError;
use crate::exec::expand::ExpandOperator;
use crate::exec::group_aggregate::GroupAggregateOperator;
use crate::exec::group_window_aggregate::GroupWindowAggregateOperator;
use crate::exec::interval_join::IntervalJoinOperator;
use crate::exec::join::JoinOperator;
use crate::exec::limit::LimitOperator;
use crate::exec::lookup_join::{LookupJoinOperator, LookupTable};
use crate::exec::operator::Operator;
use crate::exec::over_aggregate::{Frame, OverAggregateOperator, OverTime};
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
use crate::plan::stream::calc::StreamCalc;
use crate::plan::stream::changelog_normalize::StreamChangelogNormalize;
use crate::plan::stream::correlate::StreamCorrelate;
use crate::plan::stream::drop_update_before::StreamDropUpdateBefore;
use crate::plan::stream::exchange::Distribution;
use crate::plan::stream::exchange::StreamExchange;
use crate::plan::stream::expand::StreamExpand;
use crate::plan::stream::group_aggregate::StreamGroupAggregate;
use crate::plan::stream::group_window_aggregate::StreamGroupWindowAggregate;
use crate::plan::stream::interval_join::StreamIntervalJoin;
use crate::plan::stream::join::StreamJoin;
use crate::plan::stream::limit::StreamLimit;
use crate::plan::stream::lookup_join::StreamLookupJoin;
use crate::plan::stream::over_aggregate::StreamOverAggregate;
use crate::plan::stream::rank::StreamRank;
use crate::plan::stream::reuse::{Reuse, SubPlan};
use crate::plan::stream::scan_reuse::reuse_scans;
use crate::plan::stream::table_source_scan::StreamTableSourceScan;
use crate::plan::stream::temporal_join::StreamTemporalJoin;
use crate::plan::stream::temporal_sort::StreamTemporalSort;
use crate::plan::stream::uid::{NodeUid, uids_by_node};
use crate::plan::stream::union::StreamUnion;
use crate::plan::stream::watermark_assigner::StreamWatermarkAssigner;
use crate::plan::stream::window_deduplicate::StreamWindowDeduplicate;
use crate::plan::stream::window_join::StreamWindowJoin;
use crate::plan::stream::window_rank::StreamWindowRank;
use crate::plan::stream::window_table_function::StreamWindowTableFunction;
use crate::runtime::graph::{Edge, JobGraph, Partitioning, SourceUids, TaskVertex, Upstream};
use crate::types::TimeAttribute;

/// An error of building a job graph: a connector that cannot be created, what Flink's
/// planner refuses and the builder finds, an operator that cannot be created, or a plan in a
/// shape the builder cannot build (a bug: the planner should not make it).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Connector(#[from] ConnectorError),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    Operator(String),
    #[error("internal error: {0}")]
    Internal(String),
}

impl BuildError {
    fn operator(e: impl std::fmt::Display) -> Self {
        BuildError::Operator(e.to_string())
    }
}

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
    /// Splits, and the uids of their scan and of the operators their chains hold.
    Splits(Vec<Pipeline>, SourceUids),
    Task(usize),
    /// A branch of a source group that several consumers read (a reused sub-plan): its
    /// chains can still take stateless operators.
    Branch(Upstream),
    Union(Vec<Built>),
}

impl Built {
    /// Appends a stateless operator: to every split's chain, to every instance of a task,
    /// to every input of a union (stateless operators commute with UNION ALL).
    fn push(&mut self, graph: &mut JobGraph, make: &dyn Fn() -> Box<dyn Operator>) {
        match self {
            Built::Splits(pipelines, uids) => {
                for p in pipelines {
                    p.operators.push(make());
                }
                uids.chain.push(graph.building_uid());
            }
            Built::Task(t) => graph.push_to(Upstream::Task(*t), graph.building_uid(), make),
            Built::Branch(upstream) => graph.push_to(*upstream, graph.building_uid(), make),
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
            Built::Splits(pipelines, uids) => {
                let from = graph.add_source(pipelines, uids);
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
            Built::Branch(from) => out.push(Edge {
                input,
                from,
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
) -> Result<JobGraph, BuildError> {
    build_sinks(&[plan], ctx, options)
}

/// The job graph of several sink plans (a statement set's INSERTs) run as one job: a
/// sub-plan two of them hold (a scan of one table) is read once, as within one plan, and
/// each plan's rows go to its own sink (the sink edges' `input`). Scans of one table that
/// differ in their columns alone are first made one (Flink's scan reuse), in streaming
/// mode, where the builder shares sub-plans.
pub fn build_sinks(
    plans: &[&StreamPlan],
    ctx: &EvalContext,
    options: &JobOptions,
) -> Result<JobGraph, BuildError> {
    let owned: Vec<StreamPlan> = if ctx.batch_mode {
        plans.iter().map(|p| (*p).clone()).collect()
    } else {
        reuse_scans(plans)
    };
    let plans: Vec<&StreamPlan> = owned.iter().collect();
    let plans = plans.as_slice();
    let mut graph = JobGraph {
        max_parallelism: options.max_parallelism,
        ..JobGraph::default()
    };
    let options = &JobOptions {
        exact_watermarks: plans.iter().any(|p| source::needs_exact_watermarks(p)),
        ..options.clone()
    };
    let mut groups = BuildState {
        alignment: HashMap::new(),
        uids: uids_by_node(plans),
        reuse: Reuse::of(plans),
        shared: HashMap::new(),
    };
    let mut sink_inputs = Vec::new();
    for (sink, plan) in plans.iter().enumerate() {
        let uid = groups.uids.get(&(*plan as *const StreamPlan)).cloned();
        graph.sink_uids.push(uid.unwrap_or_else(NodeUid::unnamed));
        let built = build(plan, ctx, options, &mut graph, &mut groups)?;
        built.edges(&mut graph, sink, &Partitioning::Global, &mut sink_inputs);
    }
    graph.sink_inputs = sink_inputs;
    Ok(graph)
}

/// What building a job keeps beside the graph: the alignment groups, by
/// `scan.watermark.alignment.group` name, every plan node's uid, the plan's reused
/// sub-plans, and the source group each one built so far became (`None`: it is not read
/// by splits alone, and is built again for each consumer).
struct BuildState {
    alignment: HashMap<String, Arc<AlignmentGroup>>,
    uids: HashMap<*const StreamPlan, NodeUid>,
    reuse: Reuse,
    shared: HashMap<SubPlan, Option<usize>>,
}

/// Builds `plan`: the operators made for it carry its uid.
///
/// A sub-plan the plan holds more than once (two views of one table) is read once when
/// splits and their stateless operators make it: the first consumer builds it, and each
/// consumer gets a branch of it. Batch jobs build it for each consumer: their sink takes one
/// input after the other (`RunOptions::ordered`), which one reader cannot feed.
fn build(
    plan: &StreamPlan,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let reused = (!ctx.batch_mode)
        .then(|| groups.reuse.reused(plan))
        .flatten();
    if let Some(source) = reused.and_then(|sub| groups.shared.get(&sub).copied().flatten()) {
        return Ok(Built::Branch(graph.add_branch(source)));
    }
    let uid = groups.uids.get(&(plan as *const StreamPlan)).cloned();
    let outer = std::mem::replace(&mut graph.building, uid);
    let built = build_node(plan, ctx, options, graph, groups);
    graph.building = outer;
    let Some(sub) = reused else {
        return built;
    };
    match built? {
        Built::Splits(pipelines, uids) => {
            let Upstream::Source(source) = graph.add_source(pipelines, uids) else {
                return Err(BuildError::Internal(
                    "a source group is not a source".into(),
                ));
            };
            groups.shared.insert(sub, Some(source));
            Ok(Built::Branch(graph.add_branch(source)))
        }
        other => {
            groups.shared.insert(sub, None);
            Ok(other)
        }
    }
}

fn build_node(
    plan: &StreamPlan,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    match plan {
        StreamPlan::Values(v) => Ok(Built::Splits(
            vec![Pipeline {
                branches: Vec::new(),
                split: Box::new(ValuesSplit::new(
                    v.rows.clone(),
                    runtime_schema(&v.schema),
                    ctx.clone(),
                )),
                operators: vec![],
            }],
            graph.source_uids_here(),
        )),
        StreamPlan::Calc(c) => stateless::calc(c, ctx, options, graph, groups),
        StreamPlan::Expand(x) => stateless::expand(x, ctx, options, graph, groups),
        StreamPlan::Correlate(c) => stateless::correlate(c, ctx, options, graph, groups),
        StreamPlan::LookupJoin(j) => stateless::lookup_join(j, ctx, options, graph, groups),
        StreamPlan::DropUpdateBefore(d) => stateless::drop_update_before(d, ctx, options, graph, groups),
        StreamPlan::ChangelogNormalize(n) => aggregate::changelog_normalize(n, ctx, options, graph, groups),
        // A batch job has no watermark but the final one, as in Flink: no row of a bounded
        // input is late.
        StreamPlan::WatermarkAssigner(w) if ctx.batch_mode => {
            build(&w.input, ctx, options, graph, groups)
        }
        StreamPlan::WatermarkAssigner(w) => source::watermark_assigner(w, ctx, options, graph, groups),
        StreamPlan::Sink(s) => build(&s.input, ctx, options, graph, groups),
        StreamPlan::Exchange(e) => stateless::exchange(e, ctx, options, graph, groups),
        StreamPlan::WindowTableFunction(w) if w.is_session() => window::session_window_table_function(w, ctx, options, graph, groups),
        StreamPlan::WindowTableFunction(w) => window::window_table_function(w, ctx, options, graph, groups),
        StreamPlan::GroupAggregate(g) => aggregate::group_aggregate(g, ctx, options, graph, groups),
        StreamPlan::Rank(r) => rank::rank(r, ctx, options, graph, groups),
        StreamPlan::WindowDeduplicate(d) => window::window_deduplicate(d, ctx, options, graph, groups),
        StreamPlan::WindowRank(w) => window::window_rank(w, ctx, options, graph, groups),
        StreamPlan::GroupWindowAggregate(g) => aggregate::window_aggregate(
            g,
            false,
            "GroupWindowAggregate",
            ctx,
            options,
            graph,
            groups,
        ),
        StreamPlan::WindowAggregate(w) => aggregate::window_aggregate(
            &w.aggregate,
            w.slices(),
            "WindowAggregate",
            ctx,
            options,
            graph,
            groups,
        ),
        StreamPlan::Join(j) if !j.join_type.keeps_right() => join::semi_anti_join(j, ctx, options, graph, groups),
        StreamPlan::Join(j) => join::join(j, ctx, options, graph, groups),
        StreamPlan::IntervalJoin(j) => join::interval_join(j, ctx, options, graph, groups),
        StreamPlan::WindowJoin(j) => join::window_join(j, ctx, options, graph, groups),
        StreamPlan::TemporalJoin(_) if ctx.batch_mode => Err(BuildError::Unsupported(
            "A temporal join (FOR SYSTEM_TIME AS OF) runs in streaming mode only: Flink 2.3's batch planner refuses it (unexpected correlate variable $cor0 in the plan)".into(),
        )),
        StreamPlan::TemporalJoin(j) => join::temporal_join(j, ctx, options, graph, groups),
        StreamPlan::TemporalSort(r) => rank::temporal_sort(r, ctx, options, graph, groups),
        StreamPlan::OverAggregate(o) => aggregate::over_aggregate(o, ctx, options, graph, groups),
        StreamPlan::Limit(l) => rank::limit(l, ctx, options, graph, groups),
        StreamPlan::Union(u) => stateless::union(u, ctx, options, graph, groups),
        StreamPlan::TableSourceScan(scan) => source::table_source_scan(scan, ctx, options, graph),
    }
}

impl JobGraph {
    /// The uid of the node being built.
    fn building_uid(&self) -> NodeUid {
        self.building.clone().unwrap_or_else(NodeUid::unnamed)
    }

    /// The uids of a source group read by the node being built, before any operator.
    fn source_uids_here(&self) -> SourceUids {
        SourceUids {
            scan: self.building_uid(),
            chain: Vec::new(),
            branches: Vec::new(),
        }
    }
}

/// Makes a join operator from its two inputs' schemas.
type MakeJoin<'a> = dyn Fn(&SchemaRef, &SchemaRef) -> Result<Box<dyn Operator>, ExecError> + 'a;

/// The task of a node that reads an exchange (keyed, or all rows to one instance): the
/// exchange's task, named `name`, an operator from `make` appended to each instance.
fn keyed_task(
    built: Built,
    graph: &mut JobGraph,
    name: &str,
    make: &dyn Fn() -> Result<Box<dyn Operator>, ExecError>,
) -> Result<Built, BuildError> {
    let Built::Task(t) = built else {
        return Err(BuildError::Internal(format!(
            "{name} needs an exchange below it"
        )));
    };
    let uid = graph.building_uid();
    let task = &mut graph.tasks[t];
    task.name = name.into();
    for chain in &mut task.instances {
        chain.push(make().map_err(BuildError::operator)?);
    }
    task.uids.push(uid);
    Ok(Built::Task(t))
}

/// The task of a join: one instance per `parallelism.default` (one where an input goes to
/// a single instance), each with the operator `make` builds from the two inputs' schemas,
/// reading both inputs' exchanges, each edge marked with its side.
#[allow(clippy::too_many_arguments)]
fn join_task(
    name: &str,
    sides: [&StreamPlan; 2],
    make: &MakeJoin<'_>,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let mut inputs = Vec::new();
    let mut instances = options.parallelism;
    for (s, input) in sides.into_iter().enumerate() {
        let StreamPlan::Exchange(e) = input else {
            return Err(BuildError::Internal(
                "a join needs an exchange below each input".into(),
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
        .map_err(BuildError::operator)?;
    Ok(Built::Task(graph.add_task(TaskVertex {
        name: name.into(),
        instances: chains,
        uids: vec![graph.building_uid()],
        inputs,
    })))
}
