//! The stream plan: what a job runs, as Flink's physical nodes (one file each), between the
//! logical plan the binder makes and the job the runtime builds (docs/design/0003).
//!
//! Every node carries its output schema (with time attributes), its changelog mode and its
//! distribution. [`translate`] makes the plan from a logical one; EXPLAIN prints it.

pub mod calc;
pub mod changelog;
pub mod changelog_normalize;
pub mod correlate;
pub mod drop_update_before;
pub mod exchange;
pub mod expand;
pub mod group_aggregate;
pub mod group_window_aggregate;
pub mod interval_join;
pub mod join;
pub mod limit;
pub mod lookup_join;
pub mod over_aggregate;
pub mod rank;
pub mod reuse;
pub mod scan_reuse;
pub mod sink;
pub mod table_source_scan;
pub mod temporal_join;
pub mod temporal_sort;
pub mod translate;
pub mod uid;
pub mod union;
pub mod values;
pub mod watermark_assigner;
pub mod window_aggregate;
pub mod window_deduplicate;
pub mod window_join;
pub mod window_rank;
pub mod window_table_function;

use calc::StreamCalc;
use changelog_normalize::StreamChangelogNormalize;
use correlate::StreamCorrelate;
use drop_update_before::StreamDropUpdateBefore;
use exchange::{Distribution, StreamExchange};
use expand::StreamExpand;
use group_aggregate::StreamGroupAggregate;
use group_window_aggregate::StreamGroupWindowAggregate;
use interval_join::StreamIntervalJoin;
use join::StreamJoin;
use limit::StreamLimit;
use lookup_join::StreamLookupJoin;
use over_aggregate::StreamOverAggregate;
use rank::StreamRank;
use sink::StreamSink;
use table_source_scan::StreamTableSourceScan;
use temporal_join::StreamTemporalJoin;
use temporal_sort::StreamTemporalSort;
use union::StreamUnion;
use values::StreamValues;
use watermark_assigner::StreamWatermarkAssigner;
use window_aggregate::StreamWindowAggregate;
use window_deduplicate::StreamWindowDeduplicate;
use window_join::StreamWindowJoin;
use window_rank::StreamWindowRank;
use window_table_function::StreamWindowTableFunction;

use super::explain::{Spelling, TreeWriter};
use crate::plan::expr::ScalarExpr;
use crate::sql::SqlError;
use crate::types::Schema;

pub use translate::translate;

/// A logical plan that has no stream plan (yet).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// Bound, but not translated to stream nodes yet; at the position of the construct.
    #[error("{message}")]
    Unsupported {
        message: String,
        line: u64,
        column: u64,
    },
    /// Refused as Flink's planner refuses it (a TableException), at the construct.
    #[error("{message}")]
    Refused {
        message: String,
        line: u64,
        column: u64,
    },
}

impl From<PlanError> for SqlError {
    fn from(e: PlanError) -> Self {
        match e {
            PlanError::Unsupported {
                message,
                line,
                column,
            }
            | PlanError::Refused {
                message,
                line,
                column,
            } => SqlError::new(message, line, column),
        }
    }
}

#[derive(Debug, Clone)]
pub enum StreamPlan {
    TableSourceScan(StreamTableSourceScan),
    Values(StreamValues),
    Calc(StreamCalc),
    Expand(StreamExpand),
    Correlate(StreamCorrelate),
    WatermarkAssigner(StreamWatermarkAssigner),
    Union(StreamUnion),
    Exchange(StreamExchange),
    GroupAggregate(StreamGroupAggregate),
    GroupWindowAggregate(StreamGroupWindowAggregate),
    Rank(StreamRank),
    WindowTableFunction(StreamWindowTableFunction),
    WindowAggregate(StreamWindowAggregate),
    WindowDeduplicate(StreamWindowDeduplicate),
    WindowRank(StreamWindowRank),
    Join(StreamJoin),
    IntervalJoin(StreamIntervalJoin),
    WindowJoin(StreamWindowJoin),
    TemporalJoin(StreamTemporalJoin),
    LookupJoin(StreamLookupJoin),
    Limit(StreamLimit),
    TemporalSort(StreamTemporalSort),
    OverAggregate(StreamOverAggregate),
    DropUpdateBefore(StreamDropUpdateBefore),
    ChangelogNormalize(StreamChangelogNormalize),
    Sink(StreamSink),
}

/// The kinds of rows a node emits (Flink's `changelogMode`): inserts, and possibly update
/// pairs (`-U` only when the consumer asks for it), and deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangelogMode {
    pub insert: bool,
    pub update_before: bool,
    pub update_after: bool,
    pub delete: bool,
}

impl ChangelogMode {
    pub const INSERT_ONLY: ChangelogMode = ChangelogMode {
        insert: true,
        update_before: false,
        update_after: false,
        delete: false,
    };

    pub fn is_insert_only(self) -> bool {
        !(self.update_before || self.update_after || self.delete)
    }

    /// Whether rows are taken back (updated or deleted).
    pub fn retracts(self) -> bool {
        !self.is_insert_only()
    }

    /// The kinds of either mode (a union's).
    pub fn union(self, other: ChangelogMode) -> ChangelogMode {
        ChangelogMode {
            insert: self.insert || other.insert,
            update_before: self.update_before || other.update_before,
            update_after: self.update_after || other.update_after,
            delete: self.delete || other.delete,
        }
    }

    /// As EXPLAIN CHANGELOG_MODE prints it: `I,UB,UA,D`.
    pub fn text(self) -> String {
        let kinds = [
            (self.insert, "I"),
            (self.update_before, "UB"),
            (self.update_after, "UA"),
            (self.delete, "D"),
        ];
        let names: Vec<&str> = kinds
            .iter()
            .filter(|(on, _)| *on)
            .map(|&(_, n)| n)
            .collect();
        names.join(",")
    }
}

impl StreamPlan {
    /// An empty node, to stand in while a node is moved.
    pub(crate) fn placeholder() -> StreamPlan {
        StreamPlan::Values(StreamValues {
            rows: Vec::new(),
            schema: Schema::new(Vec::new()),
        })
    }

    pub fn schema(&self) -> &Schema {
        match self {
            StreamPlan::TableSourceScan(n) => &n.schema,
            StreamPlan::Values(n) => &n.schema,
            StreamPlan::Calc(n) => &n.schema,
            StreamPlan::Expand(n) => &n.schema,
            StreamPlan::Correlate(n) => &n.schema,
            StreamPlan::WatermarkAssigner(n) => &n.schema,
            StreamPlan::Union(n) => &n.schema,
            StreamPlan::Exchange(n) => &n.schema,
            StreamPlan::GroupAggregate(n) => &n.schema,
            StreamPlan::GroupWindowAggregate(n) => &n.schema,
            StreamPlan::WindowTableFunction(n) => &n.schema,
            StreamPlan::WindowAggregate(n) => &n.aggregate.schema,
            StreamPlan::WindowDeduplicate(n) => &n.schema,
            StreamPlan::WindowRank(n) => &n.schema,
            StreamPlan::Rank(n) => &n.schema,
            StreamPlan::Join(n) => &n.schema,
            StreamPlan::IntervalJoin(n) => &n.schema,
            StreamPlan::WindowJoin(n) => &n.schema,
            StreamPlan::TemporalJoin(n) => &n.schema,
            StreamPlan::LookupJoin(n) => &n.schema,
            StreamPlan::Limit(n) => &n.schema,
            StreamPlan::TemporalSort(n) => &n.schema,
            StreamPlan::OverAggregate(n) => &n.schema,
            StreamPlan::DropUpdateBefore(n) => &n.schema,
            StreamPlan::ChangelogNormalize(n) => &n.schema,
            StreamPlan::Sink(n) => &n.schema,
        }
    }

    /// How the node's output rows are spread over its instances: an exchange's by its
    /// distribution, a group window aggregate's as its exchange left them; others keep
    /// their input's when they have one input, else `Any`.
    pub fn distribution(&self) -> Distribution {
        match self {
            StreamPlan::Exchange(n) => n.distribution.clone(),
            StreamPlan::GroupAggregate(n) => {
                if n.grouping.is_empty() {
                    Distribution::Single
                } else {
                    Distribution::Hash((0..n.grouping.len()).collect())
                }
            }
            StreamPlan::GroupWindowAggregate(n)
            | StreamPlan::WindowAggregate(StreamWindowAggregate { aggregate: n }) => {
                if n.grouping.is_empty() {
                    Distribution::Single
                } else {
                    // The keys lead the output.
                    Distribution::Hash((0..n.grouping.len()).collect())
                }
            }
            // A Calc may drop or move its input's key columns.
            StreamPlan::Calc(_)
            | StreamPlan::Expand(_)
            | StreamPlan::Correlate(_)
            | StreamPlan::LookupJoin(_) => Distribution::Any,
            StreamPlan::WindowDeduplicate(n) => n.input.distribution(),
            StreamPlan::WindowRank(n) => n.input.distribution(),
            StreamPlan::Rank(n) => n.input.distribution(),
            StreamPlan::Limit(n) => n.input.distribution(),
            StreamPlan::TemporalSort(n) => n.input.distribution(),
            StreamPlan::OverAggregate(n) => n.input.distribution(),
            StreamPlan::DropUpdateBefore(n) => n.input.distribution(),
            StreamPlan::ChangelogNormalize(n) => n.input.distribution(),
            StreamPlan::WatermarkAssigner(n) => n.input.distribution(),
            // Rows stay where they are, but a key's rows may now be spread over windows.
            StreamPlan::WindowTableFunction(_) => Distribution::Any,
            StreamPlan::Sink(n) => n.input.distribution(),
            StreamPlan::TableSourceScan(_)
            | StreamPlan::Values(_)
            | StreamPlan::Union(_)
            | StreamPlan::Join(_)
            | StreamPlan::IntervalJoin(_)
            | StreamPlan::WindowJoin(_)
            | StreamPlan::TemporalJoin(_) => Distribution::Any,
        }
    }

    /// The kinds of rows the node emits (Flink's first changelog pass,
    /// `SatisfyModifyKindSetTraitVisitor`, with the second's `-U` decision folded in).
    pub fn changelog_mode(&self) -> ChangelogMode {
        match self {
            StreamPlan::TableSourceScan(n) => n.changelog_mode(),
            StreamPlan::Values(_) => ChangelogMode::INSERT_ONLY,
            StreamPlan::GroupAggregate(n) => n.changelog_mode(),
            StreamPlan::Rank(n) => n.changelog_mode(),
            StreamPlan::Join(n) => n.changelog_mode(),
            StreamPlan::IntervalJoin(n) => n.changelog_mode(),
            StreamPlan::WindowJoin(n) => n.changelog_mode(),
            StreamPlan::TemporalJoin(n) => n.changelog_mode(),
            StreamPlan::Limit(n) => n.changelog_mode(),
            StreamPlan::TemporalSort(n) => n.changelog_mode(),
            StreamPlan::OverAggregate(n) => n.changelog_mode(),
            StreamPlan::DropUpdateBefore(n) => n.changelog_mode(),
            StreamPlan::ChangelogNormalize(n) => n.changelog_mode(),
            StreamPlan::GroupWindowAggregate(n) => n.changelog_mode(),
            // Windows emit final rows; they take insert-only input.
            StreamPlan::WindowTableFunction(_)
            | StreamPlan::WindowAggregate(_)
            | StreamPlan::WindowDeduplicate(_)
            | StreamPlan::WindowRank(_) => ChangelogMode::INSERT_ONLY,
            StreamPlan::Union(n) => n
                .inputs
                .iter()
                .map(StreamPlan::changelog_mode)
                .reduce(ChangelogMode::union)
                .unwrap_or(ChangelogMode::INSERT_ONLY),
            StreamPlan::Calc(n) => n.input.changelog_mode(),
            StreamPlan::Expand(n) => n.input.changelog_mode(),
            StreamPlan::Correlate(n) => n.input.changelog_mode(),
            StreamPlan::LookupJoin(n) => n.input.changelog_mode(),
            StreamPlan::WatermarkAssigner(n) => n.input.changelog_mode(),
            StreamPlan::Exchange(n) => n.input.changelog_mode(),
            StreamPlan::Sink(n) => n.input.changelog_mode(),
        }
    }

    /// The names of the catalog tables the plan scans, each once.
    pub fn scanned_tables(&self) -> Vec<String> {
        let mut tables = Vec::new();
        let mut stack = vec![self];
        while let Some(node) = stack.pop() {
            if let StreamPlan::TableSourceScan(scan) = node
                && !tables.contains(&scan.table.name)
            {
                tables.push(scan.table.name.clone());
            }
            stack.extend(node.inputs());
        }
        tables
    }

    pub fn inputs(&self) -> Vec<&StreamPlan> {
        match self {
            StreamPlan::TableSourceScan(_) | StreamPlan::Values(_) => Vec::new(),
            StreamPlan::Calc(n) => vec![&n.input],
            StreamPlan::Expand(n) => vec![&n.input],
            StreamPlan::Correlate(n) => vec![&n.input],
            StreamPlan::LookupJoin(n) => vec![&n.input],
            StreamPlan::WatermarkAssigner(n) => vec![&n.input],
            StreamPlan::Union(n) => n.inputs.iter().collect(),
            StreamPlan::Exchange(n) => vec![&n.input],
            StreamPlan::GroupAggregate(n) => vec![&n.input],
            StreamPlan::GroupWindowAggregate(n) => vec![&n.input],
            StreamPlan::WindowTableFunction(n) => vec![&n.input],
            StreamPlan::WindowAggregate(n) => vec![&n.aggregate.input],
            StreamPlan::WindowDeduplicate(n) => vec![&n.input],
            StreamPlan::WindowRank(n) => vec![&n.input],
            StreamPlan::Rank(n) => vec![&n.input],
            StreamPlan::Join(n) => vec![&n.left, &n.right],
            StreamPlan::IntervalJoin(n) => vec![&n.left, &n.right],
            StreamPlan::WindowJoin(n) => vec![&n.left, &n.right],
            StreamPlan::TemporalJoin(n) => vec![&n.left, &n.right],
            StreamPlan::Limit(n) => vec![&n.input],
            StreamPlan::TemporalSort(n) => vec![&n.input],
            StreamPlan::OverAggregate(n) => vec![&n.input],
            StreamPlan::DropUpdateBefore(n) => vec![&n.input],
            StreamPlan::ChangelogNormalize(n) => vec![&n.input],
            StreamPlan::Sink(n) => vec![&n.input],
        }
    }

    /// The node's inputs, to rewrite.
    pub fn inputs_mut(&mut self) -> Vec<&mut StreamPlan> {
        match self {
            StreamPlan::TableSourceScan(_) | StreamPlan::Values(_) => Vec::new(),
            StreamPlan::Calc(n) => vec![&mut n.input],
            StreamPlan::Expand(n) => vec![&mut n.input],
            StreamPlan::Correlate(n) => vec![&mut n.input],
            StreamPlan::LookupJoin(n) => vec![&mut n.input],
            StreamPlan::WatermarkAssigner(n) => vec![&mut n.input],
            StreamPlan::Union(n) => n.inputs.iter_mut().collect(),
            StreamPlan::Exchange(n) => vec![&mut n.input],
            StreamPlan::GroupAggregate(n) => vec![&mut n.input],
            StreamPlan::GroupWindowAggregate(n) => vec![&mut n.input],
            StreamPlan::WindowTableFunction(n) => vec![&mut n.input],
            StreamPlan::WindowAggregate(n) => vec![&mut n.aggregate.input],
            StreamPlan::WindowDeduplicate(n) => vec![&mut n.input],
            StreamPlan::WindowRank(n) => vec![&mut n.input],
            StreamPlan::Rank(n) => vec![&mut n.input],
            StreamPlan::Join(n) => vec![&mut n.left, &mut n.right],
            StreamPlan::IntervalJoin(n) => vec![&mut n.left, &mut n.right],
            StreamPlan::WindowJoin(n) => vec![&mut n.left, &mut n.right],
            StreamPlan::TemporalJoin(n) => vec![&mut n.left, &mut n.right],
            StreamPlan::Limit(n) => vec![&mut n.input],
            StreamPlan::TemporalSort(n) => vec![&mut n.input],
            StreamPlan::OverAggregate(n) => vec![&mut n.input],
            StreamPlan::DropUpdateBefore(n) => vec![&mut n.input],
            StreamPlan::ChangelogNormalize(n) => vec![&mut n.input],
            StreamPlan::Sink(n) => vec![&mut n.input],
        }
    }

    /// Sets of output columns no two rows share values of (Flink's unique keys, as far as
    /// Tideline derives them): a table's primary key, an aggregate's keys, a deduplication's
    /// or rank-1 Top-N's partition keys, carried through Calcs that keep their columns.
    pub fn unique_keys(&self) -> Vec<Vec<usize>> {
        match self {
            StreamPlan::TableSourceScan(n) => {
                let Some(pk) = &n.table.primary_key else {
                    return Vec::new();
                };
                let key: Option<Vec<usize>> = pk.iter().map(|c| n.schema.index_of(c)).collect();
                key.into_iter().collect()
            }
            StreamPlan::GroupAggregate(n) => vec![(0..n.grouping.len()).collect()],
            StreamPlan::Rank(n) => {
                let first_only = n.range.is_some_and(|(start, end)| start == 1 && end == 1);
                if n.deduplicate.is_some() || (first_only && !n.with_rank) {
                    vec![n.partition.clone()]
                } else if n.with_rank && n.range.is_some() {
                    let mut key = n.partition.clone();
                    key.push(n.schema.len() - 1);
                    vec![key]
                } else {
                    Vec::new()
                }
            }
            StreamPlan::Calc(n) => {
                // Where each input column is passed on (plainly, or through a cast that
                // keeps distinct values distinct): a key holds wherever its columns went.
                let passed = |c: usize| -> Vec<usize> {
                    (0..n.exprs.len())
                        .filter(|&i| match &n.exprs[i] {
                            ScalarExpr::Column { index, .. } => *index == c,
                            ScalarExpr::Cast {
                                expr, data_type, ..
                            } => {
                                matches!(expr.as_ref(), ScalarExpr::Column { index, .. } if *index == c)
                                    && expr.data_type().kind.widens_to(&data_type.kind)
                            }
                            _ => false,
                        })
                        .collect()
                };
                let mut keys = Vec::new();
                for key in n.input.unique_keys() {
                    let mut variants: Vec<Vec<usize>> = vec![Vec::new()];
                    for &c in &key {
                        let places = passed(c);
                        variants = variants
                            .iter()
                            .flat_map(|v| {
                                places.iter().map(move |&p| {
                                    let mut v = v.clone();
                                    v.push(p);
                                    v
                                })
                            })
                            .take(16)
                            .collect();
                    }
                    keys.extend(variants);
                }
                keys
            }
            StreamPlan::ChangelogNormalize(n) => vec![n.keys.clone()],
            StreamPlan::DropUpdateBefore(n) => n.input.unique_keys(),
            StreamPlan::Exchange(n) => n.input.unique_keys(),
            StreamPlan::WatermarkAssigner(n) => n.input.unique_keys(),
            StreamPlan::Sink(n) => n.input.unique_keys(),
            _ => Vec::new(),
        }
    }

    /// Flink's refusal of updating input into an append-only sink: `None` when the sink's
    /// input is insert-only, else the message naming the node that makes the changes.
    pub fn append_only_refusal(&self, table: &str) -> Option<String> {
        let StreamPlan::Sink(sink) = self else {
            return None;
        };
        let mode = sink.input.changelog_mode();
        if mode.is_insert_only() {
            return None;
        }
        let changes = match (mode.update_after, mode.delete) {
            (true, true) => "update and delete changes",
            (true, false) => "update changes",
            _ => "delete changes",
        };
        // Flink's requirement passes through the nodes that forward their input's changes
        // (Calcs, exchanges) to the one that makes them.
        let mut node = sink.input.as_ref();
        loop {
            node = match node {
                StreamPlan::Calc(n) => &n.input,
                StreamPlan::Exchange(n) => &n.input,
                StreamPlan::Expand(n) => &n.input,
                StreamPlan::Correlate(n) => &n.input,
                StreamPlan::LookupJoin(n) => &n.input,
                StreamPlan::WatermarkAssigner(n) => &n.input,
                _ => break,
            };
        }
        Some(format!(
            "Table sink 'default_catalog.default_database.{table}' doesn't support consuming {changes} which is produced by node {}",
            node.line(Spelling::Physical, None)
        ))
    }

    /// The node's line in EXPLAIN (without its inputs); `offered`: a filter its parent
    /// pushed down to it.
    pub(crate) fn line(&self, spelling: Spelling, offered: Option<&str>) -> String {
        match self {
            StreamPlan::TableSourceScan(n) => n.explain(offered, None),
            StreamPlan::Values(n) => n.explain(spelling),
            StreamPlan::Calc(n) => n.explain(spelling),
            StreamPlan::Expand(n) => n.explain(),
            StreamPlan::Correlate(n) => n.explain(),
            StreamPlan::WatermarkAssigner(n) => match n.pushed_into() {
                Some(scan) => scan.explain(offered, Some(&n.watermark_text(spelling))),
                None => n.explain(spelling),
            },
            StreamPlan::Union(n) => n.explain(),
            StreamPlan::Exchange(n) => n.explain(),
            StreamPlan::GroupAggregate(n) => n.explain(spelling),
            StreamPlan::GroupWindowAggregate(n) => n.explain(),
            StreamPlan::WindowTableFunction(n) => n.explain(),
            StreamPlan::WindowAggregate(n) if n.single_phase() => n.explain_single(),
            StreamPlan::WindowAggregate(n) => n.explain_global(),
            StreamPlan::WindowDeduplicate(n) => n.explain(),
            StreamPlan::WindowRank(n) => n.explain(),
            StreamPlan::Rank(n) => n.explain(spelling),
            StreamPlan::Join(n) => n.explain(spelling),
            StreamPlan::IntervalJoin(n) => n.explain(spelling),
            StreamPlan::WindowJoin(n) => n.explain(spelling),
            StreamPlan::TemporalJoin(n) => n.explain(spelling),
            StreamPlan::LookupJoin(n) => n.explain(spelling),
            StreamPlan::Limit(n) => n.explain(),
            StreamPlan::TemporalSort(n) => n.explain(),
            StreamPlan::OverAggregate(n) => n.explain(),
            StreamPlan::DropUpdateBefore(n) => n.explain(),
            StreamPlan::ChangelogNormalize(n) => n.explain(spelling),
            StreamPlan::Sink(n) => n.explain(),
        }
    }

    /// The optimized physical plan (`changelog_mode`: with each node's changelog mode, as
    /// `EXPLAIN CHANGELOG_MODE` prints it) or, with [`Spelling::Execution`], the optimized
    /// execution plan, which marks reused sub-plans as Flink's does (see [`ReuseMarks`]).
    pub fn explain(&self, spelling: Spelling, changelog_mode: bool) -> String {
        StreamPlan::explain_all(&[self], spelling, changelog_mode)
    }

    /// [`StreamPlan::explain`] of several sink plans run as one job (a statement set's), one
    /// after another with a blank line between, reuse marks counted over them all.
    pub fn explain_all(plans: &[&StreamPlan], spelling: Spelling, changelog_mode: bool) -> String {
        let mut marks = ReuseMarks::default();
        if spelling == Spelling::Execution {
            marks.mode = MarkMode::Count;
            marks.next_id = 1;
            for plan in plans {
                let mut counted = TreeWriter::new();
                plan.explain_into(
                    &mut counted,
                    &mut Vec::new(),
                    spelling,
                    false,
                    None,
                    &mut marks,
                );
            }
            marks.mode = if plans.len() > 1 {
                MarkMode::PrintBlocks
            } else {
                MarkMode::Print
            };
        }
        let mut trees = Vec::new();
        for plan in plans {
            let mut tree = TreeWriter::new();
            plan.explain_into(
                &mut tree,
                &mut Vec::new(),
                spelling,
                changelog_mode,
                None,
                &mut marks,
            );
            trees.append(&mut marks.blocks);
            trees.push(tree.finish());
        }
        trees.join("\n")
    }

    fn explain_into(
        &self,
        tree: &mut TreeWriter,
        prefix: &mut Vec<bool>,
        spelling: Spelling,
        changelog_mode: bool,
        offered: Option<&str>,
        marks: &mut ReuseMarks,
    ) {
        // Flink's plan has no Calc that only renames an aggregate's columns (the names come
        // back at the result).
        if let StreamPlan::Calc(calc) = self
            && calc.filter.is_none()
            && matches!(
                calc.input.as_ref(),
                StreamPlan::GroupWindowAggregate(_) | StreamPlan::Rank(_)
            )
            && calc.exprs.len() == calc.input.schema().len()
            && calc
                .exprs
                .iter()
                .enumerate()
                .all(|(i, e)| matches!(e, ScalarExpr::Column { index, .. } if *index == i))
        {
            return calc
                .input
                .explain_into(tree, prefix, spelling, changelog_mode, offered, marks);
        }
        let mut reuse_id = None;
        if marks.mode != MarkMode::Off && !matches!(self, StreamPlan::Sink(_)) {
            // The sub-plan as printed (with the filter offered to its scan), and its types.
            let mut text = TreeWriter::new();
            self.explain_into(
                &mut text,
                &mut Vec::new(),
                spelling,
                false,
                offered,
                &mut ReuseMarks::default(),
            );
            let mut digest = text.finish();
            for f in &self.schema().fields {
                digest.push_str(&f.describe_type());
                digest.push(',');
            }
            let next = marks.next_id;
            let entry = marks.seen.entry(digest.clone()).or_default();
            match marks.mode {
                MarkMode::Count => {
                    entry.count += 1;
                    if entry.count == 2 {
                        entry.id = Some(next);
                        marks.next_id += 1;
                    }
                    if entry.count > 1 {
                        return;
                    }
                }
                MarkMode::Print => {
                    if let Some(id) = entry.id {
                        if entry.printed {
                            tree.line(prefix, &format!("Reused(reference_id=[{id}])"));
                            return;
                        }
                        entry.printed = true;
                        reuse_id = Some(id);
                    }
                }
                MarkMode::PrintBlocks => {
                    let (id, printed) = (entry.id, entry.printed);
                    if let Some(id) = id {
                        if marks.block_root.as_ref() == Some(&digest) {
                            // The root of the block being printed.
                            marks.block_root = None;
                            reuse_id = Some(id);
                        } else {
                            if !printed {
                                entry.printed = true;
                                let mut block = TreeWriter::new();
                                let outer = marks.block_root.replace(digest);
                                self.explain_into(
                                    &mut block,
                                    &mut Vec::new(),
                                    spelling,
                                    changelog_mode,
                                    offered,
                                    marks,
                                );
                                marks.block_root = outer;
                                marks.blocks.push(block.finish());
                            }
                            tree.line(prefix, &format!("Reused(reference_id=[{id}])"));
                            return;
                        }
                    }
                }
                MarkMode::Off => {}
            }
        }
        let mut line = self.line(spelling, offered);
        if changelog_mode {
            // A sink emits nothing downstream: Flink prints NONE.
            let mode = if matches!(self, StreamPlan::Sink(_)) {
                "NONE".to_string()
            } else {
                self.changelog_mode().text()
            };
            if line.ends_with(')') {
                line.pop();
                line.push_str(&format!(", changelogMode=[{mode}])"));
            } else {
                line.push_str(&format!("(changelogMode=[{mode}])"));
            }
        }
        if let Some(id) = reuse_id {
            line.push_str(&format!("(reuse_id=[{id}])"));
        }
        tree.line(prefix, &line);
        // A watermark pushed into the scan: the scan's line was this node's.
        if let StreamPlan::WatermarkAssigner(w) = self
            && w.pushed_into().is_some()
        {
            return;
        }
        // Flink's local phase stands between the exchange and its input.
        if let StreamPlan::WindowAggregate(w) = self
            && !w.single_phase()
            && let StreamPlan::Exchange(exchange) = w.aggregate.input.as_ref()
        {
            let with_mode = |mut line: String| {
                if changelog_mode && line.ends_with(')') {
                    line.pop();
                    line.push_str(&format!(
                        ", changelogMode=[{}])",
                        self.changelog_mode().text()
                    ));
                }
                line
            };
            prefix.push(true);
            tree.line(prefix, &with_mode(exchange.explain()));
            prefix.push(true);
            tree.line(prefix, &with_mode(w.explain_local()));
            prefix.push(true);
            exchange
                .input
                .explain_into(tree, prefix, spelling, changelog_mode, None, marks);
            prefix.truncate(prefix.len() - 3);
            return;
        }
        // A filter reaches the scan it is pushed into: through a ChangelogNormalize that
        // took it in, and the exchange and DropUpdateBefore below.
        let offer = match self {
            StreamPlan::Calc(calc) => calc.offered_filter(),
            StreamPlan::ChangelogNormalize(n) => n.offered_filter(),
            StreamPlan::Exchange(_) | StreamPlan::DropUpdateBefore(_) => offered.map(String::from),
            _ => None,
        };
        let inputs = self.inputs();
        for (i, input) in inputs.iter().enumerate() {
            prefix.push(i + 1 == inputs.len());
            input.explain_into(
                tree,
                prefix,
                spelling,
                changelog_mode,
                offer.as_deref(),
                marks,
            );
            prefix.pop();
        }
    }
}

/// Flink's reuse marks in the execution plan: a sub-plan printed more than once (the highest
/// node of a repeated subtree, its EXPLAIN text and types alike) is printed in full the first
/// time with `(reuse_id=[n])`, and as `Reused(reference_id=[n])` after. A first walk in the
/// printing order counts the sub-plans, not entering one already met, and numbers each when
/// it is met the second time (so the numbers follow the second meetings, as Flink's do).
///
/// Several sink plans (a statement set's) print as Flink's DAG: each reused sub-plan as a
/// tree of its own (`MarkMode::PrintBlocks`), before the first tree that reads it, and
/// `Reused(reference_id=[n])` wherever it is read.
#[derive(Debug, Default)]
struct ReuseMarks {
    mode: MarkMode,
    seen: std::collections::HashMap<String, Seen>,
    next_id: usize,
    /// The trees of reused sub-plans printed so far, inner ones first.
    blocks: Vec<String>,
    /// The digest of the reused sub-plan whose own tree is being printed.
    block_root: Option<String>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum MarkMode {
    #[default]
    Off,
    Count,
    Print,
    PrintBlocks,
}

#[derive(Debug, Default)]
struct Seen {
    count: usize,
    id: Option<usize>,
    printed: bool,
}

/// Column names of a schema, comma-separated, as node attributes list them.
fn names(schema: &Schema) -> String {
    schema
        .fields
        .iter()
        .map(|f| f.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
