//! Changelog inference: which row kinds each node of a stream plan emits, as Flink's
//! `FlinkChangelogModeInferenceProgram` settles them. The kinds a node *can* emit (insert,
//! `-U`, `+U`, delete) follow from its inputs' (each node's `changelog_mode`); this program
//! then decides, from the root down, which nodes must emit `-U` — the root's consumer asks or
//! not ([`RootConsumer`]), a retracting aggregate or a filter over updates always asks its
//! input — and sets that on the nodes that can leave it out (Flink's second pass,
//! `SatisfyUpdateKindTraitVisitor`). A changelog source whose consumer takes upserts has its
//! `-U` rows dropped. Before that, where `table.exec.source.cdc-events-duplicate` says
//! events may repeat, changelog sources with a primary key are normalized by key.

use super::StreamPlan;
use super::changelog_normalize::StreamChangelogNormalize;
use super::drop_update_before::StreamDropUpdateBefore;
use super::table_source_scan::StreamTableSourceScan;
use crate::plan::expr::ScalarExpr;

/// The scan, or a watermark pushed into it (computed per split, before a normalization, as
/// Flink's source computes it).
fn scan_of(p: &StreamPlan) -> Option<&StreamTableSourceScan> {
    match p {
        StreamPlan::TableSourceScan(s) => Some(s),
        StreamPlan::WatermarkAssigner(w) => w.pushed_into(),
        _ => None,
    }
}

/// Each changelog source with a primary key under a ChangelogNormalize (through an exchange
/// on the key, its `-U` rows dropped), as Flink's scan rule plans it when events may repeat
/// (`duplicates`), and each upsert source always; a filter right above is taken into the
/// normalization.
pub fn normalize_changelogs(plan: &mut StreamPlan, duplicates: bool) {
    let normalized = |scan: StreamPlan, condition: Option<ScalarExpr>| {
        let Some(s) = scan_of(&scan) else {
            return scan;
        };
        let Some(keys) = scan.unique_keys().into_iter().next() else {
            return scan;
        };
        let schema = scan.schema().clone();
        let input = if s.reads_upserts() {
            scan
        } else {
            StreamPlan::DropUpdateBefore(StreamDropUpdateBefore::over(scan))
        };
        StreamPlan::ChangelogNormalize(StreamChangelogNormalize {
            input: super::translate::keyed_exchange(input, &keys),
            keys,
            condition,
            update_before: true,
            schema,
        })
    };
    let normalizes = |p: &StreamPlan| {
        scan_of(p).is_some_and(|s| {
            s.reads_changelog()
                && s.table.primary_key.is_some()
                && (duplicates || s.reads_upserts())
        })
    };
    if normalizes(plan) {
        let scan = std::mem::replace(plan, StreamPlan::placeholder());
        *plan = normalized(scan, None);
        return;
    }
    if let StreamPlan::Calc(calc) = plan
        && calc.filter.is_some()
        && normalizes(&calc.input)
    {
        let scan = std::mem::replace(calc.input.as_mut(), StreamPlan::placeholder());
        *calc.input = normalized(scan, calc.filter.take());
        return;
    }
    for input in plan.inputs_mut() {
        normalize_changelogs(input, duplicates);
    }
}

/// What the consumer of a plan's root takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootConsumer {
    /// `-U` before each `+U`: a sink or the client's result, which retract the old row.
    Retractions,
    /// A `+U` alone replaces its key's row: an explained query, which Flink plans for a sink
    /// that takes upserts.
    Upserts,
}

/// Settles which nodes of `plan` emit `-U`, for a root read by `root`.
pub fn infer_update_kinds(plan: &mut StreamPlan, root: RootConsumer) {
    require(plan, root == RootConsumer::Retractions);
}

/// Asks every updating node of `plan` for `-U` rows where its consumer needs them (`before`).
fn require(plan: &mut StreamPlan, before: bool) {
    if let StreamPlan::TableSourceScan(scan) = plan
        && !before
        && scan.changelog_mode().update_before
    {
        let scan = std::mem::replace(plan, StreamPlan::placeholder());
        *plan = StreamPlan::DropUpdateBefore(StreamDropUpdateBefore::over(scan));
        return;
    }
    match plan {
        // Below a ChangelogNormalize, over the scan: the scan's `-U` rows are dropped.
        StreamPlan::DropUpdateBefore(n) => {
            if !matches!(n.input.as_ref(), StreamPlan::TableSourceScan(_)) {
                require(&mut n.input, false)
            }
        }
        StreamPlan::ChangelogNormalize(n) => {
            n.update_before = before;
            require(&mut n.input, false);
        }
        StreamPlan::GroupAggregate(n) => {
            n.update_before = before;
            let retracts = n.input.changelog_mode().retracts();
            require(&mut n.input, retracts);
        }
        // A filter over updates must take back a row that stops passing it.
        StreamPlan::Calc(n) => {
            let filters = n.filter.is_some() && n.input.changelog_mode().retracts();
            require(&mut n.input, before || filters)
        }
        StreamPlan::Exchange(n) => require(&mut n.input, before),
        StreamPlan::Expand(n) => require(&mut n.input, before),
        StreamPlan::Correlate(n) => {
            let filters = n.condition.is_some() && n.input.changelog_mode().retracts();
            require(&mut n.input, before || filters)
        }
        StreamPlan::LookupJoin(n) => {
            let filters = n.residual.is_some() && n.input.changelog_mode().retracts();
            require(&mut n.input, before || filters)
        }
        StreamPlan::Sink(n) => require(&mut n.input, before),
        StreamPlan::WatermarkAssigner(n) => require(&mut n.input, before),
        StreamPlan::Union(n) => {
            for input in &mut n.inputs {
                require(input, before);
            }
        }
        // A group window over updates takes the old rows back (Flink's legacy windows do).
        StreamPlan::GroupWindowAggregate(n) => {
            n.update_before = before;
            let retracts = n.input.changelog_mode().retracts();
            require(&mut n.input, retracts)
        }
        StreamPlan::WindowTableFunction(n) => require(&mut n.input, false),
        StreamPlan::WindowAggregate(n) => require(&mut n.aggregate.input, false),
        StreamPlan::WindowDeduplicate(n) => require(&mut n.input, false),
        StreamPlan::WindowRank(n) => require(&mut n.input, false),
        StreamPlan::Rank(n) => {
            n.update_before = before;
            let retracts = n.input.changelog_mode().retracts();
            require(&mut n.input, retracts);
        }
        // Flink's join keeps `-U` unless nobody asks for it and each updating input is
        // unique by join key (then a `+U` replaces its key's row).
        StreamPlan::Join(n) => {
            let upserts_fail =
                (0..2).any(|s| n.input(s).changelog_mode().retracts() && !n.takes_upserts(s));
            let before = before || upserts_fail;
            n.update_before = before;
            require(&mut n.left, before);
            require(&mut n.right, before);
        }
        StreamPlan::Limit(n) => require(&mut n.input, false),
        StreamPlan::TemporalSort(n) => require(&mut n.input, false),
        StreamPlan::OverAggregate(n) => require(&mut n.input, false),
        // Its inputs are insert-only.
        StreamPlan::IntervalJoin(n) => {
            require(&mut n.left, false);
            require(&mut n.right, false);
        }
        StreamPlan::WindowJoin(n) => {
            require(&mut n.left, false);
            require(&mut n.right, false);
        }
        // The right is read as upserts: a version replaces its key's older ones. The left's
        // kinds pass through.
        StreamPlan::TemporalJoin(n) => {
            require(&mut n.left, before);
            require(&mut n.right, false);
        }
        StreamPlan::TableSourceScan(_) | StreamPlan::Values(_) => {}
    }
}
