//! Flink's scan reuse (`ScanReuser`), applied to the execution plan: scans of one table that
//! differ only in the columns they project — a self-join's two sides, a statement set's
//! INSERTs — become one scan of the union of their columns (in the table's order), each
//! reader picking its own columns in a Calc (the Calc above it when there is one). The
//! scans are then alike, so sub-plan reuse reads the table once (`reuse.rs`).
//!
//! Flink runs it at the end of its physical optimization, so EXPLAIN prints its result in
//! both plans (the physical one without reuse marks). Scans Flink's rule leaves apart stay
//! apart: a different filter offered (push-down), a watermark pushed
//! into the scan, other options (a hint), other metadata columns, or a changelog source.

use std::collections::HashMap;

use super::StreamPlan;
use super::calc::StreamCalc;
use super::table_source_scan::StreamTableSourceScan;
use crate::plan::expr::ScalarExpr;
use crate::types::Schema;

/// `plans` (the sinks of one job, or one query) with their scans merged as described above.
pub fn reuse_scans(plans: &[&StreamPlan]) -> Vec<StreamPlan> {
    let mut plans: Vec<StreamPlan> = plans.iter().map(|p| (*p).clone()).collect();
    merge_scans(&mut plans);
    plans
}

fn merge_scans(plans: &mut [StreamPlan]) {
    let mut groups: HashMap<String, Vec<Vec<usize>>> = HashMap::new();
    for plan in plans.iter() {
        collect(plan, &mut groups);
    }
    // Per group of scans with more than one projection, the union of their columns.
    let merged: HashMap<String, Vec<usize>> = groups
        .into_iter()
        .filter_map(|(key, mut projections)| {
            projections.sort();
            projections.dedup();
            if projections.len() < 2 {
                return None;
            }
            let mut union: Vec<usize> = projections.concat();
            union.sort_unstable();
            union.dedup();
            Some((key, union))
        })
        .collect();
    if merged.is_empty() {
        return;
    }
    for plan in plans.iter_mut() {
        rewrite(plan, &merged);
    }
}

/// What a scan's parent makes of it: a Calc offers it its filter; a watermark pushed into
/// it or a ChangelogNormalize above keeps it apart.
fn offered_by(parent: &StreamPlan) -> Option<Option<String>> {
    match parent {
        StreamPlan::Calc(calc) => Some(calc.offered_filter()),
        StreamPlan::WatermarkAssigner(_) | StreamPlan::ChangelogNormalize(_) => None,
        _ => Some(None),
    }
}

/// The group of a scan the rule may merge: its table, the table's options, its metadata
/// columns, and the filter offered to it.
fn group_of(scan: &StreamTableSourceScan, offered: Option<String>) -> Option<String> {
    if !scan.can_project() || scan.reads_changelog() {
        return None;
    }
    let mut key = format!("{}\u{0}{:?}\u{0}", scan.table.name, scan.metadata);
    for (k, v) in &scan.table.options {
        key.push_str(&format!("{k}={v}\u{0}"));
    }
    key.push_str(&offered.unwrap_or_default());
    Some(key)
}

/// The columns of the source a scan reads, in its output order.
fn projection_of(scan: &StreamTableSourceScan) -> Vec<usize> {
    scan.projection
        .clone()
        .unwrap_or_else(|| (0..scan.source_schema.len()).collect())
}

fn collect(plan: &StreamPlan, groups: &mut HashMap<String, Vec<Vec<usize>>>) {
    for input in plan.inputs() {
        if let StreamPlan::TableSourceScan(scan) = input
            && let Some(key) = offered_by(plan).and_then(|offered| group_of(scan, offered))
        {
            groups.entry(key).or_default().push(projection_of(scan));
        }
        collect(input, groups);
    }
}

fn rewrite(plan: &mut StreamPlan, merged: &HashMap<String, Vec<usize>>) {
    // A scan below a Calc: the Calc picks its columns from the merged scan.
    if let StreamPlan::Calc(calc) = plan
        && let StreamPlan::TableSourceScan(scan) = calc.input.as_ref()
    {
        let Some(union) = group_of(scan, calc.offered_filter()).and_then(|key| merged.get(&key))
        else {
            return;
        };
        let (wide, position) = widened(scan, union);
        let remap = |e: &ScalarExpr| {
            e.map_columns(&mut |i, data_type| ScalarExpr::Column {
                index: position[i],
                data_type: data_type.clone(),
            })
        };
        calc.exprs = calc.exprs.iter().map(remap).collect();
        calc.filter = calc.filter.as_ref().map(remap);
        *calc.input = StreamPlan::TableSourceScan(wide);
        return;
    }
    let offered = offered_by(plan);
    for input in plan.inputs_mut() {
        let StreamPlan::TableSourceScan(scan) = input else {
            rewrite(input, merged);
            continue;
        };
        let Some(union) = offered
            .clone()
            .and_then(|offered| group_of(scan, offered))
            .and_then(|key| merged.get(&key))
        else {
            continue;
        };
        let (wide, position) = widened(scan, union);
        if position.iter().copied().eq(0..union.len()) {
            // It reads the union already: nothing to pick.
            *scan = wide;
            continue;
        }
        let schema = scan.schema.clone();
        let exprs = position
            .iter()
            .zip(&schema.fields)
            .map(|(&index, f)| ScalarExpr::Column {
                index,
                data_type: f.data_type.clone(),
            })
            .collect();
        *input = StreamPlan::Calc(StreamCalc {
            input: Box::new(StreamPlan::TableSourceScan(wide)),
            filter: None,
            exprs,
            schema,
        });
    }
}

/// The scan reading the columns `union` instead of its own, and where each of its own
/// columns is in it.
fn widened(scan: &StreamTableSourceScan, union: &[usize]) -> (StreamTableSourceScan, Vec<usize>) {
    let own = projection_of(scan);
    let position = own
        .iter()
        .map(|c| union.iter().position(|u| u == c).unwrap_or(0))
        .collect();
    let fields = union
        .iter()
        .map(|&c| match own.iter().position(|&o| o == c) {
            Some(at) => scan.schema.fields[at].clone(),
            None => scan.source_schema.fields[c].clone(),
        })
        .collect();
    let mut wide = scan.clone();
    wide.projection = Some(union.to_vec());
    wide.schema = Schema::new(fields);
    (wide, position)
}
