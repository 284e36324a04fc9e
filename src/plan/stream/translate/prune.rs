//! Column pruning: columns nobody reads go, down to the scan (into it, for connectors that
//! project), each node telling where the columns it keeps went.

use super::super::StreamPlan;
use super::super::calc::StreamCalc;
use super::super::drop_update_before::StreamDropUpdateBefore;
use super::super::exchange::Distribution;
use super::super::expand::StreamExpand;
use super::super::group_aggregate::StreamGroupAggregate;
use super::super::group_window_aggregate::StreamGroupWindowAggregate;
use super::super::interval_join::{StreamIntervalJoin, WindowBounds};
use super::super::join::StreamJoin;
use super::super::lookup_join::StreamLookupJoin;
use super::super::temporal_join::StreamTemporalJoin;
use super::super::union::StreamUnion;
use super::super::watermark_assigner::StreamWatermarkAssigner;
use super::super::window_aggregate::StreamWindowAggregate;
use super::super::window_join::{StreamWindowJoin, WindowedInput};
use super::*;
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::JoinType;
use crate::types::Field;
use crate::types::{Schema, TimeAttribute};

/// A ranking node's columns over its pruned `input`: the input's, then the rank `rank` when
/// the query reads it (its place recorded in `remap`).
pub(super) fn with_rank_column(
    input: &StreamPlan,
    rank: Option<&Field>,
    remap: &mut Vec<Option<usize>>,
) -> Schema {
    let mut fields = input.schema().fields.clone();
    if let Some(rank) = rank {
        fields.push(rank.clone());
        remap.push(Some(input.schema().len()));
    }
    Schema::new(fields)
}

/// The input of a node pruned again (the exchange below comes anew).
pub(super) fn below_exchange(input: StreamPlan) -> StreamPlan {
    match input {
        StreamPlan::Exchange(e) => *e.input,
        other => other,
    }
}

/// A sort's input (below its exchange) pruned to what the consumer and the sort keys read,
/// the pick moved above (`below_picking`); `order` follows the columns.
pub(super) fn prune_sorted(
    input: StreamPlan,
    order: &mut [crate::plan::logical::OrderKey],
    needed: &[bool],
) -> (StreamPlan, Vec<Option<usize>>) {
    let mut used = needed.to_vec();
    for o in order.iter() {
        used[o.column] = true;
    }
    let (input, remap) = below_picking(prune(below_exchange(input), &used));
    for o in order.iter_mut() {
        o.column = remap[o.column].unwrap_or(o.column);
    }
    (input, remap)
}

/// A pruned input without the Calc on top that only picks columns (Flink's sort and limit
/// take the rows below it, the pick moving above them), and where each column went.
pub(super) fn below_picking(
    pruned: (StreamPlan, Vec<Option<usize>>),
) -> (StreamPlan, Vec<Option<usize>>) {
    let (plan, remap) = pruned;
    let StreamPlan::Calc(calc) = plan else {
        return (plan, remap);
    };
    let picks: Option<Vec<usize>> = calc
        .exprs
        .iter()
        .zip(&calc.schema.fields)
        .map(|(e, f)| match e {
            ScalarExpr::Column { index, .. }
                if calc.input.schema().fields[*index].time_attribute == f.time_attribute =>
            {
                Some(*index)
            }
            _ => None,
        })
        .collect();
    match (calc.filter.is_none(), picks) {
        (true, Some(picks)) => {
            let remap = remap.iter().map(|m| m.map(|i| picks[i])).collect();
            (*calc.input, remap)
        }
        _ => (StreamPlan::Calc(calc), remap),
    }
}

/// `plan` (`remap` saying where each of some earlier columns went in it) under a Calc
/// picking the `needed` ones of those, unless it has just those; and where each went.
pub(super) fn picked_above(
    plan: StreamPlan,
    needed: &[bool],
    remap: Vec<Option<usize>>,
) -> (StreamPlan, Vec<Option<usize>>) {
    let keep: Vec<usize> = (0..needed.len())
        .filter(|&i| needed[i])
        .map(|i| remap[i].unwrap_or(i))
        .collect();
    let (plan, narrowing) = narrowed(plan, &keep);
    let remap = (0..needed.len())
        .map(|i| {
            if needed[i] {
                narrowing[remap[i].unwrap_or(i)]
            } else {
                None
            }
        })
        .collect();
    (plan, remap)
}

/// `input` narrowed to its columns `keep` (ascending) by a Calc, unless those are all of
/// them, and where each of its columns went: for a node whose input kept more than asked (a
/// scan that cannot project, a TVF that keeps its input whole), as Flink's plan has it.
pub(super) fn narrowed(input: StreamPlan, keep: &[usize]) -> (StreamPlan, Vec<Option<usize>>) {
    let n = input.schema().len();
    if keep.len() == n {
        return (input, identity(n));
    }
    let exprs = keep
        .iter()
        .map(|&i| ScalarExpr::Column {
            index: i,
            data_type: input.schema().fields[i].data_type.clone(),
        })
        .collect();
    let schema = select(input.schema(), keep);
    let calc = merge(StreamCalc {
        input: Box::new(input),
        filter: None,
        exprs,
        schema,
    });
    (StreamPlan::Calc(calc), positions(keep, n))
}

/// The plan reduced to the output columns marked in `needed`, and where each old output
/// column went (`None`: pruned). A node may keep more than asked (a scan that cannot
/// project); its parent then picks.
pub(super) fn prune(plan: StreamPlan, needed: &[bool]) -> (StreamPlan, Vec<Option<usize>>) {
    match plan {
        StreamPlan::TableSourceScan(mut scan) => {
            let keep = kept(needed);
            if !scan.can_project() || keep.len() == scan.schema.len() {
                return (StreamPlan::TableSourceScan(scan), identity(needed.len()));
            }
            let remap = positions(&keep, needed.len());
            scan.schema = select(&scan.schema, &keep);
            scan.projection = Some(keep);
            (StreamPlan::TableSourceScan(scan), remap)
        }
        StreamPlan::Values(v) => {
            let n = v.schema.len();
            (StreamPlan::Values(v), identity(n))
        }
        StreamPlan::Calc(calc) => {
            let keep = kept(needed);
            let mut used = vec![false; calc.input.schema().len()];
            for &i in &keep {
                calc.exprs[i].mark_columns(&mut used);
            }
            if let Some(filter) = &calc.filter {
                filter.mark_columns(&mut used);
            }
            let (input, input_remap) = prune(*calc.input, &used);
            let pruned = StreamCalc {
                filter: calc.filter.as_ref().map(|e| remapped(e, &input_remap)),
                exprs: keep
                    .iter()
                    .map(|&i| remapped(&calc.exprs[i], &input_remap))
                    .collect(),
                schema: select(&calc.schema, &keep),
                input: Box::new(input),
            };
            let remap = positions(&keep, needed.len());
            let pruned = read_in_first_reference_order(pruned, true);
            if pruned.is_identity() {
                return (*pruned.input, remap);
            }
            (StreamPlan::Calc(merge(pruned)), remap)
        }
        StreamPlan::Expand(x) => {
            let keep = kept(needed);
            let mut used = vec![false; x.input.schema().len()];
            for project in &x.projects {
                for &i in &keep {
                    project[i].mark_columns(&mut used);
                }
            }
            let (input, input_remap) = prune(*x.input, &used);
            let expand = StreamExpand {
                projects: x
                    .projects
                    .iter()
                    .map(|p| {
                        keep.iter()
                            .map(|&i| remapped(&p[i], &input_remap))
                            .collect()
                    })
                    .collect(),
                schema: select(&x.schema, &keep),
                input: Box::new(input),
            };
            (StreamPlan::Expand(expand), positions(&keep, needed.len()))
        }
        StreamPlan::LookupJoin(j) => prune_lookup_join(j, needed),
        // Flink's correlate keeps every input column.
        StreamPlan::Correlate(mut c) => {
            let all = vec![true; c.input.schema().len()];
            let (input, _) = prune(*c.input, &all);
            c.input = Box::new(input);
            let width = c.schema.len();
            (StreamPlan::Correlate(c), identity(width))
        }
        StreamPlan::WatermarkAssigner(w) => {
            let mut used = needed.to_vec();
            used[w.rowtime] = true;
            w.watermark.mark_columns(&mut used);
            let (input, remap) = prune(*w.input, &used);
            let mut schema = input.schema().clone();
            let rowtime = remap[w.rowtime].unwrap_or(w.rowtime);
            schema.fields[rowtime].time_attribute = w.schema.fields[w.rowtime].time_attribute;
            let assigner = StreamWatermarkAssigner {
                input: Box::new(input),
                rowtime,
                watermark: remapped(&w.watermark, &remap),
                schema,
            };
            (StreamPlan::WatermarkAssigner(assigner), remap)
        }
        StreamPlan::Union(u) => {
            let keep = kept(needed);
            let schema = select(&u.schema, &keep);
            let inputs = u
                .inputs
                .into_iter()
                .map(|input| {
                    let (input, remap) = prune(input, needed);
                    // An input that kept more than asked gets a Calc that picks.
                    let picked: Vec<usize> = keep.iter().map(|&i| remap[i].unwrap_or(i)).collect();
                    if picked.iter().enumerate().all(|(new, &old)| new == old)
                        && input.schema().len() == keep.len()
                    {
                        return input;
                    }
                    let exprs = picked
                        .iter()
                        .map(|&i| ScalarExpr::Column {
                            index: i,
                            data_type: input.schema().fields[i].data_type.clone(),
                        })
                        .collect();
                    StreamPlan::Calc(StreamCalc {
                        schema: select(input.schema(), &picked),
                        input: Box::new(input),
                        filter: None,
                        exprs,
                    })
                })
                .collect();
            let remap = positions(&keep, needed.len());
            (StreamPlan::Union(StreamUnion { inputs, schema }), remap)
        }
        StreamPlan::Exchange(mut exchange) => {
            let (input, remap) = prune(*exchange.input, needed);
            if let Distribution::Hash(keys) = &mut exchange.distribution {
                for k in keys.iter_mut() {
                    *k = remap[*k].unwrap_or(*k);
                }
            }
            exchange.schema = input.schema().clone();
            exchange.input = Box::new(input);
            (StreamPlan::Exchange(exchange), remap)
        }
        // Calls nobody reads go (Calcite's ProjectAggregate pruning), but for a global
        // aggregate, whose row they make.
        StreamPlan::GroupAggregate(mut agg) => {
            let n = agg.schema.len();
            let keys = agg.grouping.len();
            let keep: Vec<usize> = (0..n).filter(|&i| i < keys || needed[i]).collect();
            if keys == 0 || keep.len() == n {
                return (
                    StreamPlan::GroupAggregate(prune_group_aggregate(agg, &[])),
                    identity(n),
                );
            }
            // Flink prunes the calls after the columns below: what a dropped call read is
            // still read.
            let dropped = drop_unread_calls(&mut agg.aggregates, keys, needed);
            agg.schema = select(&agg.schema, &keep);
            (
                StreamPlan::GroupAggregate(prune_group_aggregate(agg, &dropped)),
                positions(&keep, n),
            )
        }
        StreamPlan::GroupWindowAggregate(agg) => {
            let n = agg.schema.len();
            (
                StreamPlan::GroupWindowAggregate(prune_group_window_aggregate(agg, true, &[])),
                identity(n),
            )
        }
        // Calls nobody reads go, as from a group aggregate (what they read is still read).
        StreamPlan::WindowAggregate(mut w) => {
            let agg = &mut w.aggregate;
            let n = agg.schema.len();
            let keys = agg.grouping.len();
            let calls = keys..keys + agg.aggregates.len();
            let keep: Vec<usize> = (0..n)
                .filter(|i| !calls.contains(i) || needed[*i])
                .collect();
            let dropped = drop_unread_calls(&mut agg.aggregates, keys, needed);
            agg.schema = select(&agg.schema, &keep);
            let aggregate = prune_group_window_aggregate(w.aggregate, false, &dropped);
            (
                StreamPlan::WindowAggregate(StreamWindowAggregate { aggregate }),
                positions(&keep, n),
            )
        }
        StreamPlan::WindowTableFunction(mut w) => {
            let width = w.input.schema().len();
            let mut used: Vec<bool> = needed[..width].to_vec();
            used[w.window.time_column] = true;
            for &k in &w.partition {
                used[k] = true;
            }
            let session = w.is_session();
            let (input, remap) = prune(below_exchange(*w.input), &used);
            w.window.time_column = remap[w.window.time_column].unwrap_or(w.window.time_column);
            for k in &mut w.partition {
                *k = remap[*k].unwrap_or(*k);
            }
            let input = if session {
                *keyed_exchange(input, &w.partition)
            } else {
                input
            };
            let mut fields = input.schema().fields.clone();
            fields.extend(w.schema.fields[width..].iter().cloned());
            let mut remap = remap;
            remap.extend((0..3).map(|i| Some(input.schema().len() + i)));
            w.schema = Schema::new(fields);
            w.input = Box::new(input);
            (StreamPlan::WindowTableFunction(w), remap)
        }
        // A sort or limit takes its input's rows whole; a Calc above picks what is read, as
        // Flink's plan has it.
        StreamPlan::Limit(mut l) => {
            let (input, remap) = below_picking(prune(below_exchange(*l.input), needed));
            l.schema = input.schema().clone();
            l.input = keyed_exchange(input, &[]);
            picked_above(StreamPlan::Limit(l), needed, remap)
        }
        // Normalization compares whole rows: it keeps what the consumer reads, its key and
        // its condition's columns.
        StreamPlan::ChangelogNormalize(mut n) => {
            let mut used = needed.to_vec();
            for &k in &n.keys {
                used[k] = true;
            }
            if let Some(c) = &n.condition {
                c.mark_columns(&mut used);
            }
            let (input, remap) = prune(below_exchange(*n.input), &used);
            for k in &mut n.keys {
                *k = remap[*k].unwrap_or(*k);
            }
            n.condition = n.condition.as_ref().map(|c| remapped(c, &remap));
            n.schema = input.schema().clone();
            n.input = keyed_exchange(input, &n.keys);
            picked_above(StreamPlan::ChangelogNormalize(n), needed, remap)
        }
        StreamPlan::DropUpdateBefore(n) => {
            let (input, remap) = prune(*n.input, needed);
            (
                StreamPlan::DropUpdateBefore(StreamDropUpdateBefore::over(input)),
                remap,
            )
        }
        StreamPlan::TemporalSort(mut r) => {
            let (input, remap) = prune_sorted(*r.input, &mut r.order, needed);
            r.schema = input.schema().clone();
            r.input = keyed_exchange(input, &[]);
            picked_above(StreamPlan::TemporalSort(r), needed, remap)
        }
        StreamPlan::OverAggregate(mut o) => {
            let width = o.input.schema().len();
            let mut used = needed[..width].to_vec();
            let args = o.calls.iter().flat_map(|c| c.args.iter());
            for &k in o.partition.iter().chain([&o.order]).chain(args) {
                used[k] = true;
            }
            let (input, remap) = prune(below_exchange(*o.input), &used);
            let keep: Vec<usize> = (0..width)
                .filter(|&i| used[i])
                .map(|i| remap[i].unwrap_or(i))
                .collect();
            let (mut input, narrowing) = narrowed(input, &keep);
            // Computed columns below are named by their position (`$3`), which pruning moved.
            if let StreamPlan::Calc(below) = &mut input {
                for (i, f) in below.schema.fields.iter_mut().enumerate() {
                    let computed = f
                        .name
                        .strip_prefix('$')
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
                    if computed {
                        f.name = format!("${i}");
                    }
                }
            }
            let mut remap: Vec<Option<usize>> =
                remap.iter().map(|m| m.and_then(|i| narrowing[i])).collect();
            let at = |i: usize| remap[i].unwrap_or(i);
            for k in &mut o.partition {
                *k = at(*k);
            }
            o.order = at(o.order);
            for call in &mut o.calls {
                for a in &mut call.args {
                    *a = at(*a);
                }
            }
            let mut fields = input.schema().fields.clone();
            for call in &o.schema.fields[width..] {
                remap.push(Some(fields.len()));
                fields.push(call.clone());
            }
            o.schema = Schema::new(fields);
            o.input = keyed_exchange(input, &o.partition);
            (StreamPlan::OverAggregate(o), remap)
        }
        StreamPlan::Rank(mut r) if r.sort => {
            let (input, remap) = prune_sorted(*r.input, &mut r.order, needed);
            r.schema = input.schema().clone();
            r.input = keyed_exchange(input, &[]);
            picked_above(StreamPlan::Rank(r), needed, remap)
        }
        StreamPlan::Rank(mut r) => {
            let width = r.input.schema().len();
            let mut used = needed[..width].to_vec();
            for &k in r.partition.iter().chain(r.order.iter().map(|o| &o.column)) {
                used[k] = true;
            }
            let (input, remap) = prune(*r.input, &used);
            // An input that kept more than asked (a scan that cannot project) is narrowed by
            // a Calc, as Flink's plan has it.
            let keep: Vec<usize> = (0..width)
                .filter(|&i| used[i])
                .map(|i| remap[i].unwrap_or(i))
                .collect();
            let (input, narrowing) = narrowed(input, &keep);
            let mut remap: Vec<Option<usize>> =
                remap.iter().map(|m| m.and_then(|i| narrowing[i])).collect();
            let at = |i: usize| remap[i].unwrap_or(i);
            for k in &mut r.partition {
                *k = at(*k);
            }
            for o in &mut r.order {
                o.column = at(o.column);
            }
            r.schema = with_rank_column(
                &input,
                r.with_rank.then(|| &r.schema.fields[width]),
                &mut remap,
            );
            r.input = keyed_exchange(input, &r.partition);
            (StreamPlan::Rank(r), remap)
        }
        StreamPlan::WindowDeduplicate(mut d) => {
            let mut used = needed.to_vec();
            for &k in d
                .keys
                .iter()
                .chain(&[d.order_key, d.window_start, d.window_end])
            {
                used[k] = true;
            }
            // Flink prunes above the TVF, which keeps its input whole.
            let input = match *d.input {
                StreamPlan::WindowTableFunction(w) => {
                    let all = vec![true; w.schema.len()];
                    prune(StreamPlan::WindowTableFunction(w), &all).0
                }
                other => other,
            };
            let (input, remap) = narrowed(input, &kept(&used));
            let at = |i: usize| remap[i].unwrap_or(i);
            for k in &mut d.keys {
                *k = at(*k);
            }
            d.order_key = at(d.order_key);
            d.window_start = at(d.window_start);
            d.window_end = at(d.window_end);
            d.schema = input.schema().clone();
            d.input = keyed_exchange(input, &d.keys);
            (StreamPlan::WindowDeduplicate(d), remap)
        }
        StreamPlan::Join(j) => prune_join(j, needed),
        StreamPlan::IntervalJoin(j) => prune_interval_join(j, needed),
        StreamPlan::WindowJoin(j) => prune_window_join(j, needed),
        StreamPlan::TemporalJoin(j) => prune_temporal_join(j, needed),

        StreamPlan::WindowRank(mut w) => {
            let width = w.input.schema().len();
            let mut used = needed[..width].to_vec();
            for &k in w.keys.iter().chain(&[w.window_start, w.window_end]) {
                used[k] = true;
            }
            for o in &w.order {
                used[o.column] = true;
            }
            // Flink prunes above the TVF, which keeps its input whole.
            let (input, pruned) = match below_exchange(*w.input) {
                StreamPlan::WindowTableFunction(t) => {
                    let all = vec![true; t.schema.len()];
                    (
                        prune(StreamPlan::WindowTableFunction(t), &all).0,
                        identity(width),
                    )
                }
                other => prune(other, &used),
            };
            let (input, remap) = picked_above(input, &used, pruned);
            let at = |i: usize| remap[i].unwrap_or(i);
            for k in &mut w.keys {
                *k = at(*k);
            }
            for o in &mut w.order {
                o.column = at(o.column);
            }
            w.window_start = at(w.window_start);
            w.window_end = at(w.window_end);
            let mut remap = remap;
            w.schema = with_rank_column(
                &input,
                w.with_rank.then(|| &w.schema.fields[width]),
                &mut remap,
            );
            w.input = keyed_exchange(input, &w.keys);
            (StreamPlan::WindowRank(w), remap)
        }
        StreamPlan::Sink(mut sink) => {
            let all = vec![true; sink.input.schema().len()];
            sink.input = Box::new(prune(*sink.input, &all).0);
            let n = sink.schema.len();
            (StreamPlan::Sink(sink), identity(n))
        }
    }
}

/// A join's two inputs pruned to the columns marked in `used` (the left's, then the right's;
/// an input that kept more is narrowed by a Calc, as Flink's plan has it), time attributes
/// materialized unless `keep_time` (an interval join keeps them), and where each old column
/// of the join went.
pub(super) fn prune_sides(
    left: StreamPlan,
    right: StreamPlan,
    used: &[bool],
    keep_time: bool,
) -> (StreamPlan, StreamPlan, Vec<Option<usize>>) {
    let nl = left.schema().len();
    let side = |input: StreamPlan, used: &[bool]| {
        // Pruned again (below a window deduplication): the exchanges come anew.
        let input = match input {
            StreamPlan::Exchange(e) => *e.input,
            other => other,
        };
        let (input, remap) = prune(input, used);
        let (input, remap) = picked_above(input, used, remap);
        let input = if keep_time {
            input
        } else {
            materialized(input)
        };
        (input, remap)
    };
    let (left, left_remap) = side(left, &used[..nl]);
    let (right, right_remap) = side(right, &used[nl..]);
    let nl2 = left.schema().len();
    let remap = left_remap
        .iter()
        .copied()
        .chain(right_remap.iter().map(|m| m.map(|x| x + nl2)))
        .collect();
    (left, right, remap)
}

/// The columns a join reads itself: its keys and its condition's.
pub(super) fn join_reads(
    needed: &[bool],
    (nl, nr): (usize, usize),
    left_keys: &[usize],
    right_keys: &[usize],
    conditions: &[&ScalarExpr],
) -> Vec<bool> {
    // A semi or anti join's consumer reads the left's columns only.
    let mut used = needed.to_vec();
    used.resize(nl + nr, false);
    for &k in left_keys {
        used[k] = true;
    }
    for &k in right_keys {
        used[nl + k] = true;
    }
    for c in conditions {
        c.mark_columns(&mut used);
    }
    used
}

/// Where a join's output columns went, from where its inputs' went (`remap`, the left's
/// `nl` then the right's): a semi or anti join outputs the left's only.
pub(super) fn join_output(
    join_type: JoinType,
    nl: usize,
    remap: &[Option<usize>],
) -> Vec<Option<usize>> {
    let width = if join_type.keeps_right() {
        remap.len()
    } else {
        nl
    };
    remap[..width].to_vec()
}

/// A join over the input columns it and its consumer read, time attributes materialized,
/// each input through an exchange on its keys.
pub(super) fn prune_join(j: StreamJoin, needed: &[bool]) -> (StreamPlan, Vec<Option<usize>>) {
    let nl = j.left.schema().len();
    let conditions: Vec<&ScalarExpr> = j.condition.iter().chain(&j.residual).collect();
    let used = join_reads(
        needed,
        (nl, j.right.schema().len()),
        &j.left_keys,
        &j.right_keys,
        &conditions,
    );
    let (left, right, remap) = prune_sides(*j.left, *j.right, &used, false);
    let nl2 = left.schema().len();
    let at = |i: usize| remap[i].unwrap_or(i);
    let onto = |e: &ScalarExpr| remapped(e, &remap);
    let left_keys: Vec<usize> = j.left_keys.iter().map(|&k| at(k)).collect();
    let right_keys: Vec<usize> = j.right_keys.iter().map(|&k| at(nl + k) - nl2).collect();
    let schema = join_schema(left.schema(), right.schema(), j.join_type, false);
    let output_remap = join_output(j.join_type, nl, &remap);
    let join = StreamJoin {
        condition: j.condition.as_ref().map(onto),
        residual: j.residual.as_ref().map(onto),
        left: keyed_exchange(left, &left_keys),
        right: keyed_exchange(right, &right_keys),
        left_keys,
        right_keys,
        schema,
        ..j
    };
    (StreamPlan::Join(join), output_remap)
}

/// An interval join over the input columns it and its consumer read (its time columns
/// among them), time attributes kept.
pub(super) fn prune_interval_join(
    j: StreamIntervalJoin,
    needed: &[bool],
) -> (StreamPlan, Vec<Option<usize>>) {
    let nl = j.left.schema().len();
    let conditions: Vec<&ScalarExpr> = std::iter::once(&j.condition).chain(&j.residual).collect();
    let mut used = join_reads(
        needed,
        (nl, j.right.schema().len()),
        &j.left_keys,
        &j.right_keys,
        &conditions,
    );
    used[j.bounds.left_time] = true;
    used[nl + j.bounds.right_time] = true;
    let (left, right, remap) = prune_sides(*j.left, *j.right, &used, true);
    let nl2 = left.schema().len();
    let at = |i: usize| remap[i].unwrap_or(i);
    let onto = |e: &ScalarExpr| remapped(e, &remap);
    let left_keys: Vec<usize> = j.left_keys.iter().map(|&k| at(k)).collect();
    let right_keys: Vec<usize> = j.right_keys.iter().map(|&k| at(nl + k) - nl2).collect();
    let bounds = WindowBounds {
        left_time: at(j.bounds.left_time),
        right_time: at(nl + j.bounds.right_time) - nl2,
        ..j.bounds
    };
    let schema = join_schema(left.schema(), right.schema(), j.join_type, true);
    let join = StreamIntervalJoin {
        condition: onto(&j.condition),
        residual: j.residual.as_ref().map(onto),
        left: keyed_exchange(left, &left_keys),
        right: keyed_exchange(right, &right_keys),
        left_keys,
        right_keys,
        bounds,
        schema,
        join_type: j.join_type,
    };
    (StreamPlan::IntervalJoin(join), remap)
}

/// A window join over the input columns it and its consumer read (each side's window
/// bounds among them), time attributes kept, each input through an exchange on its keys.
pub(super) fn prune_window_join(
    j: StreamWindowJoin,
    needed: &[bool],
) -> (StreamPlan, Vec<Option<usize>>) {
    let nl = j.left.schema().len();
    let conditions: Vec<&ScalarExpr> = j.condition.iter().chain(&j.residual).collect();
    let mut used = join_reads(
        needed,
        (nl, j.right.schema().len()),
        &j.left_keys,
        &j.right_keys,
        &conditions,
    );
    for (s, w) in j.windows.iter().enumerate() {
        used[s * nl + w.window_start] = true;
        used[s * nl + w.window_end] = true;
    }
    let (left, right, remap) = prune_sides(*j.left, *j.right, &used, true);
    let nl2 = left.schema().len();
    let at = |i: usize| remap[i].unwrap_or(i);
    let onto = |e: &ScalarExpr| remapped(e, &remap);
    let left_keys: Vec<usize> = j.left_keys.iter().map(|&k| at(k)).collect();
    let right_keys: Vec<usize> = j.right_keys.iter().map(|&k| at(nl + k) - nl2).collect();
    let [lw, rw] = *j.windows;
    let windows = [
        WindowedInput {
            window_start: at(lw.window_start),
            window_end: at(lw.window_end),
            ..lw
        },
        WindowedInput {
            window_start: at(nl + rw.window_start) - nl2,
            window_end: at(nl + rw.window_end) - nl2,
            ..rw
        },
    ];
    let schema = join_schema(left.schema(), right.schema(), j.join_type, true);
    let output_remap = join_output(j.join_type, nl, &remap);
    let join = StreamWindowJoin {
        condition: j.condition.as_ref().map(onto),
        residual: j.residual.as_ref().map(onto),
        left: keyed_exchange(left, &left_keys),
        right: keyed_exchange(right, &right_keys),
        left_keys,
        right_keys,
        windows: Box::new(windows),
        schema,
        join_type: j.join_type,
    };
    (StreamPlan::WindowJoin(join), output_remap)
}

/// A temporal join over the input columns it and its consumer read (both time columns and
/// the right's primary key among them), time attributes kept.
/// A lookup join reads of its input what its output, its keys and its residual read; the
/// table keeps every column (it is read whole).
fn prune_lookup_join(j: StreamLookupJoin, needed: &[bool]) -> (StreamPlan, Vec<Option<usize>>) {
    let nl = j.input.schema().len();
    let width = j.schema.len();
    let mut read = needed.to_vec();
    if let Some(residual) = &j.residual {
        residual.mark_columns(&mut read);
    }
    let mut used = read[..nl].to_vec();
    for &k in &j.left_keys {
        used[k] = true;
    }
    let (input, input_remap) = prune(*j.input, &used);
    let nl2 = input.schema().len();
    let remap: Vec<Option<usize>> = (0..width)
        .map(|i| {
            if i < nl {
                input_remap[i]
            } else {
                Some(nl2 + i - nl)
            }
        })
        .collect();
    let join = StreamLookupJoin {
        residual: j.residual.as_ref().map(|e| remapped(e, &remap)),
        left_keys: j
            .left_keys
            .iter()
            .map(|&k| input_remap[k].unwrap_or(k))
            .collect(),
        schema: join_schema(input.schema(), &j.table.schema, j.join_type, true),
        input: Box::new(input),
        ..j
    };
    (StreamPlan::LookupJoin(join), remap)
}

pub(super) fn prune_temporal_join(
    j: StreamTemporalJoin,
    needed: &[bool],
) -> (StreamPlan, Vec<Option<usize>>) {
    let nl = j.left.schema().len();
    let conditions: Vec<&ScalarExpr> = j.conditions.iter().chain(&j.residual).collect();
    let mut used = join_reads(
        needed,
        (nl, j.right.schema().len()),
        &j.left_keys,
        &j.right_keys,
        &conditions,
    );
    used[j.left_time] = true;
    used[nl + j.right_time] = true;
    for &k in &j.primary_key {
        used[nl + k] = true;
    }
    let (left, right, remap) = prune_sides(*j.left, *j.right, &used, true);
    let nl2 = left.schema().len();
    let at = |i: usize| remap[i].unwrap_or(i);
    let onto = |e: &ScalarExpr| remapped(e, &remap);
    let on_right = |k: usize| at(nl + k) - nl2;
    let left_keys: Vec<usize> = j.left_keys.iter().map(|&k| at(k)).collect();
    let right_keys: Vec<usize> = j.right_keys.iter().map(|&k| on_right(k)).collect();
    let join = StreamTemporalJoin {
        conditions: j.conditions.iter().map(onto).collect(),
        residual: j.residual.as_ref().map(onto),
        schema: join_schema(left.schema(), right.schema(), j.join_type, true),
        left: keyed_exchange(left, &left_keys),
        right: keyed_exchange(right, &right_keys),
        left_time: at(j.left_time),
        right_time: on_right(j.right_time),
        primary_key: j.primary_key.iter().map(|&k| on_right(k)).collect(),
        left_keys,
        right_keys,
        join_type: j.join_type,
    };
    (StreamPlan::TemporalJoin(join), remap)
}

/// Drops the calls of an aggregate whose output columns (after `keys` key columns) nobody
/// reads; returns the input columns the dropped calls read.
fn drop_unread_calls(
    calls: &mut Vec<crate::plan::aggregate::AggregateCall>,
    keys: usize,
    needed: &[bool],
) -> Vec<usize> {
    let mut read = Vec::new();
    let mut i = keys;
    calls.retain(|call| {
        let keep = needed[i];
        i += 1;
        if !keep {
            read.extend(call.args.iter().chain(&call.filter).copied());
        }
        keep
    });
    read
}

/// A group window aggregate over the input columns it reads (all of its own columns stay,
/// as Flink keeps them), with the exchange its keys call for. A proctime window reads no
/// column. The input then settles as Flink's rules leave it: a Calc over a scan that can
/// project hands the scan the columns in the order it reads them, and a Calc that only
/// reorders all its input's columns goes (the aggregate reads them by name).
/// `settle`: as a legacy group window's input settles (a window TVF's aggregate keeps the
/// Calc that orders its input's columns, as Flink's plan does).
pub(super) fn prune_group_window_aggregate(
    mut agg: StreamGroupWindowAggregate,
    settle: bool,
    also_read: &[usize],
) -> StreamGroupWindowAggregate {
    let mut used = vec![false; agg.input.schema().len()];
    for &k in &agg.grouping {
        used[k] = true;
    }
    for call in &agg.aggregates {
        for &arg in call.args.iter().chain(&call.filter) {
            used[arg] = true;
        }
    }
    // A legacy proctime group window reads no column; a TVF's window aggregate keeps its
    // proctime column, as Flink's plan does.
    let rowtime = agg.window.time_attribute == TimeAttribute::Rowtime || !settle;
    if rowtime {
        used[agg.window.time_column] = true;
    }
    for c in agg.attached.iter().flat_map(|w| w.columns()) {
        used[c] = true;
    }
    for &c in also_read {
        used[c] = true;
    }
    let nothing_read = !used.contains(&true);
    let (mut input, remap) = prune(*agg.input, &used);
    // A proctime window that counts rows reads no column: the Calc left below computes only
    // the proctime, which Flink does not materialize.
    if nothing_read
        && settle
        && let StreamPlan::Calc(calc) = &input
        && calc.filter.is_none()
    {
        let StreamPlan::Calc(calc) = input else {
            unreachable!("matched above")
        };
        input = *calc.input;
    }
    let (input, moved) = if settle {
        settle_below_aggregate(input)
    } else {
        let n = input.schema().len();
        (input, (0..n).collect())
    };
    let at = |i: usize| moved[remap[i].unwrap_or(i)];
    for k in &mut agg.grouping {
        *k = at(*k);
    }
    for call in &mut agg.aggregates {
        for arg in call.args.iter_mut().chain(call.filter.iter_mut()) {
            *arg = at(*arg);
        }
    }
    agg.attached = agg.attached.map(|w| w.map(at));
    agg.window.time_column = if rowtime {
        at(agg.window.time_column)
    } else {
        input.schema().len()
    };
    agg.input = keyed_exchange(input, &agg.grouping);
    agg
}

/// A group aggregate over the input columns it reads, with the exchange its keys call for.
/// `also_read`: input columns kept for the plan's sake though no call reads them.
pub(super) fn prune_group_aggregate(
    mut agg: StreamGroupAggregate,
    also_read: &[usize],
) -> StreamGroupAggregate {
    let mut used = vec![false; agg.input.schema().len()];
    for &c in also_read {
        used[c] = true;
    }
    for &k in &agg.grouping {
        used[k] = true;
    }
    for call in &agg.aggregates {
        for &arg in call.args.iter().chain(&call.filter) {
            used[arg] = true;
        }
    }
    let nothing_read = !used.contains(&true);
    let (mut input, remap) = prune(*agg.input, &used);
    // COUNT(*) alone reads no column: the empty Calc left below goes (Calcite removes the
    // empty project; the scan keeps the one column it must read).
    if nothing_read
        && let StreamPlan::Calc(calc) = &input
        && calc.filter.is_none()
        && calc.exprs.is_empty()
    {
        let StreamPlan::Calc(calc) = input else {
            unreachable!("matched above")
        };
        input = *calc.input;
    }
    let mut moved: Vec<usize> = (0..input.schema().len()).collect();
    // A Calc that only picks columns of an aggregate below merges into this one, which
    // reads them where they are (Flink's AggregateProjectMergeRule); over anything else
    // (a scan, a join, a changelog normalization) it stays, as in Flink's plans.
    if let StreamPlan::Calc(calc) = &input
        && calc.filter.is_none()
        && matches!(calc.input.as_ref(), StreamPlan::GroupAggregate(_))
        && let Some(columns) = calc
            .exprs
            .iter()
            .map(|e| match e {
                ScalarExpr::Column { index, .. } => Some(*index),
                _ => None,
            })
            .collect::<Option<Vec<usize>>>()
    {
        moved = columns;
        let StreamPlan::Calc(calc) = input else {
            unreachable!("matched above")
        };
        input = *calc.input;
    }
    let at = |i: usize| moved[remap[i].unwrap_or(i)];
    for k in &mut agg.grouping {
        *k = at(*k);
    }
    for call in &mut agg.aggregates {
        for arg in call.args.iter_mut().chain(call.filter.iter_mut()) {
            *arg = at(*arg);
        }
    }
    agg.input = keyed_exchange(input, &agg.grouping);
    agg
}

/// A Calc without a filter right over a scan that can project (under its watermark
/// assigner, if any): the scan emits the columns in the order the Calc's expressions first
/// read them, as Flink's projection push-down lists them (`project=[price, auction]` for
/// `COALESCE(price, 0), auction`). Any other Calc comes back unchanged.
/// `projected_only`: only when the scan drops columns (Flink pushes no projection that
/// keeps every column, so the order stays the table's).
pub(super) fn read_in_first_reference_order(
    mut calc: StreamCalc,
    projected_only: bool,
) -> StreamCalc {
    if calc.filter.is_some() || (projected_only && !projects(&calc.input)) {
        return calc;
    }
    let width = calc.input.schema().len();
    let mut order = Vec::new();
    for e in &calc.exprs {
        e.for_each_column(&mut |i| {
            if !order.contains(&i) {
                order.push(i);
            }
        });
    }
    if order.iter().enumerate().all(|(new, &old)| new == old) {
        return calc;
    }
    let rest: Vec<usize> = (0..width).filter(|i| !order.contains(i)).collect();
    order.extend(rest);
    match reorder_source(*calc.input, &order) {
        Ok(source) => {
            let mut position = vec![0; width];
            for (new, &old) in order.iter().enumerate() {
                position[old] = new;
            }
            let remap: Vec<Option<usize>> = position.into_iter().map(Some).collect();
            calc.exprs = calc.exprs.iter().map(|e| remapped(e, &remap)).collect();
            calc.input = Box::new(source);
        }
        Err(source) => calc.input = source,
    }
    calc
}

/// The input of an aggregate as Flink's rules leave it, and where each of its columns went.
pub(super) fn settle_below_aggregate(input: StreamPlan) -> (StreamPlan, Vec<usize>) {
    let StreamPlan::Calc(mut calc) = input else {
        let n = input.schema().len();
        return (input, (0..n).collect());
    };
    let n = calc.exprs.len();
    calc = read_in_first_reference_order(calc, false);
    if calc.is_identity() {
        return (*calc.input, (0..n).collect());
    }
    // A Calc that reads every input column once, as it is: the aggregate reads them where
    // they are, and only the filter stays.
    let width = calc.input.schema().len();
    let mut columns = Vec::new();
    for e in &calc.exprs {
        match e {
            ScalarExpr::Column { index, .. } if !columns.contains(index) => columns.push(*index),
            _ => break,
        }
    }
    if columns.len() == n && n == width {
        let input = match calc.filter {
            None => *calc.input,
            Some(filter) => StreamPlan::Calc(StreamCalc {
                schema: calc.input.schema().clone(),
                exprs: (0..width)
                    .map(|i| ScalarExpr::Column {
                        index: i,
                        data_type: calc.input.schema().fields[i].data_type.clone(),
                    })
                    .collect(),
                filter: Some(filter),
                input: calc.input,
            }),
        };
        return (input, columns);
    }
    (StreamPlan::Calc(calc), (0..n).collect())
}

/// Whether `plan` is a scan (under its watermark assigner, if any) that drops columns.
fn projects(plan: &StreamPlan) -> bool {
    match plan {
        StreamPlan::TableSourceScan(scan) => scan
            .projection
            .as_ref()
            .is_some_and(|p| p.len() < scan.source_schema.len()),
        StreamPlan::WatermarkAssigner(w) => projects(&w.input),
        _ => false,
    }
}

/// A scan that can project (under its watermark assigner, if any) emitting its columns in
/// `order` (a permutation of its output columns); any other plan comes back unchanged.
pub(super) fn reorder_source(
    plan: StreamPlan,
    order: &[usize],
) -> Result<StreamPlan, Box<StreamPlan>> {
    match plan {
        StreamPlan::TableSourceScan(mut scan) if scan.can_project() => {
            let projection = scan
                .projection
                .clone()
                .unwrap_or_else(|| (0..scan.source_schema.len()).collect());
            let projection: Vec<usize> = order.iter().map(|&i| projection[i]).collect();
            scan.schema = select(&scan.source_schema, &projection);
            scan.projection = Some(projection);
            Ok(StreamPlan::TableSourceScan(scan))
        }
        StreamPlan::WatermarkAssigner(mut w) => match reorder_source(*w.input, order) {
            Ok(input) => {
                let mut position = vec![None; order.len()];
                for (new, &old) in order.iter().enumerate() {
                    position[old] = Some(new);
                }
                w.rowtime = position[w.rowtime].unwrap_or(w.rowtime);
                w.watermark = remapped(&w.watermark, &position);
                w.schema = select(&w.schema, order);
                w.input = Box::new(input);
                Ok(StreamPlan::WatermarkAssigner(w))
            }
            Err(input) => {
                w.input = input;
                Err(Box::new(StreamPlan::WatermarkAssigner(w)))
            }
        },
        other => Err(Box::new(other)),
    }
}

/// The columns marked in `needed`, or the first when none is: a batch needs a column to
/// carry its row count.
pub(super) fn kept(needed: &[bool]) -> Vec<usize> {
    let keep: Vec<usize> = (0..needed.len()).filter(|&i| needed[i]).collect();
    if keep.is_empty() && !needed.is_empty() {
        vec![0]
    } else {
        keep
    }
}

/// Where each of `n` columns went when only `keep` (in order) stayed.
pub(super) fn positions(keep: &[usize], n: usize) -> Vec<Option<usize>> {
    let mut remap = vec![None; n];
    for (new, &old) in keep.iter().enumerate() {
        remap[old] = Some(new);
    }
    remap
}

/// `e` over an input whose columns moved as `remap` says.
pub(super) fn remapped(e: &ScalarExpr, remap: &[Option<usize>]) -> ScalarExpr {
    e.map_columns(&mut |i, data_type| ScalarExpr::Column {
        index: remap[i].unwrap_or(i),
        data_type: data_type.clone(),
    })
}

pub(super) fn identity(n: usize) -> Vec<Option<usize>> {
    (0..n).map(Some).collect()
}

pub(super) fn select(schema: &Schema, columns: &[usize]) -> Schema {
    Schema::new(columns.iter().map(|&i| schema.fields[i].clone()).collect())
}
