//! The job graph: what the runtime runs (docs/design/0003 §2).
//!
//! Sources are groups of splits, each split read on a thread with its fused stateless
//! operators. Tasks are vertices after an exchange: `instances` parallel copies of one
//! operator chain, each owning a range of key groups. Every task feeds exactly one consumer
//! (a task or the sink) through an [`Edge`]; a union is a consumer with several input edges.
//! The sink is the job's sinks: one per INSERT of a statement set, each edge marked with the
//! sink it feeds.
//! A source group feeds one consumer, or, when a sub-plan is reused, one per branch: each
//! branch has its own stateless operators after the group's and its own edge.

use arrow_schema::SchemaRef;

use crate::connector::source::split::Pipeline;
use crate::exec::operator::Operator;
use crate::plan::stream::uid::NodeUid;

pub struct JobGraph {
    pub sources: Vec<Vec<Pipeline>>,
    /// Per source group, its uids (every split of a group has the same chain).
    pub source_uids: Vec<SourceUids>,
    pub tasks: Vec<TaskVertex>,
    /// What the sinks read (each edge's `input` is the sink it feeds).
    pub sink_inputs: Vec<Edge>,
    /// `pipeline.max-parallelism`: the number of key groups keyed state and hash edges use.
    pub max_parallelism: u32,
    /// Per sink, its uid (its plan node's).
    pub sink_uids: Vec<NodeUid>,
    /// While the graph is built: the uid of the node whose operators are being added.
    pub(crate) building: Option<NodeUid>,
}

impl Default for JobGraph {
    fn default() -> Self {
        JobGraph {
            sources: Vec::new(),
            source_uids: Vec::new(),
            sink_uids: Vec::new(),
            building: None,
            tasks: Vec::new(),
            sink_inputs: Vec::new(),
            max_parallelism: crate::exec::state::key_group::DEFAULT_MAX_PARALLELISM,
        }
    }
}

/// The uids of a source group: its scan's (which its splits' positions are matched by) and
/// the plan node's each operator of its splits' chains was made for.
#[derive(Debug, Clone)]
pub struct SourceUids {
    pub scan: NodeUid,
    pub chain: Vec<NodeUid>,
    /// Per branch (see `Pipeline::branches`), the uids of its operators.
    pub branches: Vec<Vec<NodeUid>>,
}

impl SourceUids {
    /// The uids of every operator a split runs: its chain's, then each branch's in turn (the
    /// order its checkpointed state lists them in).
    pub fn all(&self) -> Vec<NodeUid> {
        let mut all = self.chain.clone();
        for branch in &self.branches {
            all.extend(branch.iter().cloned());
        }
        all
    }
}

impl Default for SourceUids {
    /// A source group no plan node made (a graph built by hand, in tests).
    fn default() -> Self {
        SourceUids {
            scan: NodeUid::unnamed(),
            chain: Vec::new(),
            branches: Vec::new(),
        }
    }
}

/// A vertex after an exchange.
pub struct TaskVertex {
    /// For error messages and thread names (`GroupWindowAggregate`).
    pub name: String,
    /// One operator chain per parallel instance.
    pub instances: Vec<Vec<Box<dyn Operator>>>,
    /// The uid of the plan node each chain position was made for.
    pub uids: Vec<NodeUid>,
    pub inputs: Vec<Edge>,
}

/// Where an upstream's rows go, and how they are spread over the consumer's instances.
pub struct Edge {
    /// Which input of the consumer the rows are (0 unless it has two, as a join does, or
    /// is one of several sinks).
    pub input: usize,
    pub from: Upstream,
    pub partitioning: Partitioning,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upstream {
    /// A source group (an index into `JobGraph::sources`); each split is one channel.
    Source(usize),
    /// A branch of a source group that several consumers read; each split is one channel.
    Branch { source: usize, branch: usize },
    /// A task (an index into `JobGraph::tasks`); each instance is one channel.
    Task(usize),
}

#[derive(Debug, Clone)]
pub enum Partitioning {
    /// Rows go to the instance owning their key's key group (key columns of `schema`).
    Hash {
        columns: Vec<usize>,
        schema: SchemaRef,
    },
    /// Every row to instance 0.
    Global,
    /// Whole chunks round robin over the instances.
    Rebalance,
}

impl JobGraph {
    /// Adds a source group (with the uids of its chains' operators), returning its upstream.
    pub fn add_source(&mut self, pipelines: Vec<Pipeline>, uids: SourceUids) -> Upstream {
        self.sources.push(pipelines);
        self.source_uids.push(uids);
        Upstream::Source(self.sources.len() - 1)
    }

    /// Adds a branch to every split of source group `source` (one more consumer reads it),
    /// returning its upstream.
    pub fn add_branch(&mut self, source: usize) -> Upstream {
        for p in &mut self.sources[source] {
            p.branches.push(Vec::new());
        }
        let uids = &mut self.source_uids[source];
        uids.branches.push(Vec::new());
        Upstream::Branch {
            source,
            branch: uids.branches.len() - 1,
        }
    }

    /// Appends a stateless operator to the chains of `upstream` (every split of a source
    /// group or branch, every instance of a task), made for the plan node of `uid`.
    pub fn push_to(
        &mut self,
        upstream: Upstream,
        uid: NodeUid,
        make: &dyn Fn() -> Box<dyn Operator>,
    ) {
        match upstream {
            Upstream::Source(s) => {
                for p in &mut self.sources[s] {
                    p.operators.push(make());
                }
                self.source_uids[s].chain.push(uid);
            }
            Upstream::Branch { source, branch } => {
                for p in &mut self.sources[source] {
                    p.branches[branch].push(make());
                }
                self.source_uids[source].branches[branch].push(uid);
            }
            Upstream::Task(t) => {
                for chain in &mut self.tasks[t].instances {
                    chain.push(make());
                }
                self.tasks[t].uids.push(uid);
            }
        }
    }

    /// Adds a task, returning its index.
    pub fn add_task(&mut self, task: TaskVertex) -> usize {
        self.tasks.push(task);
        self.tasks.len() - 1
    }

    /// Appends a stateless operator to every chain that feeds sink `sink` (a sink's own
    /// checks, such as the NOT NULL enforcer).
    pub fn push_before_sink(&mut self, sink: usize, make: &dyn Fn() -> Box<dyn Operator>) {
        let uid = self
            .sink_uids
            .get(sink)
            .cloned()
            .unwrap_or_else(NodeUid::unnamed);
        let upstreams: Vec<Upstream> = self
            .sink_inputs
            .iter()
            .filter(|e| e.input == sink)
            .map(|e| e.from)
            .collect();
        for upstream in upstreams {
            self.push_to(upstream, uid.clone(), make);
        }
    }

    /// How many channels an upstream feeds its consumer with.
    pub fn width(&self, upstream: Upstream) -> usize {
        match upstream {
            Upstream::Source(s) | Upstream::Branch { source: s, .. } => self.sources[s].len(),
            Upstream::Task(t) => self.tasks[t].instances.len(),
        }
    }
}
