//! From the logical plan to the stream plan, doing what Flink's optimizer visibly does to
//! these nodes: adjacent Calcs merge, Calcs that change nothing go, and columns nobody reads
//! are pruned down to the scan (into it, for connectors that read only what they are asked).

use super::StreamPlan;
use super::calc::StreamCalc;
use super::sink::StreamSink;
use super::table_source_scan::StreamTableSourceScan;
use super::union::StreamUnion;
use super::values::StreamValues;
use super::watermark_assigner::StreamWatermarkAssigner;
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::LogicalPlan;
use crate::types::{DataType, Schema, TypeKind};

/// The stream plan of a query.
pub fn translate(plan: &LogicalPlan) -> StreamPlan {
    let plan = convert(plan);
    let all = vec![true; plan.schema().len()];
    prune(plan, &all).0
}

/// The stream plan of an `INSERT INTO table` whose query, bound against the sink's
/// columns, is `plan`.
pub fn translate_insert(plan: &LogicalPlan, table: &str) -> StreamPlan {
    let input = translate(plan);
    StreamPlan::Sink(StreamSink {
        schema: input.schema().clone(),
        input: Box::new(input),
        table: table.to_string(),
    })
}

/// One stream node per logical node, Calcs merged where they meet.
fn convert(plan: &LogicalPlan) -> StreamPlan {
    match plan {
        LogicalPlan::Scan(s) => StreamPlan::TableSourceScan(StreamTableSourceScan {
            table: s.table.clone(),
            source_schema: s.schema.clone(),
            metadata: s.metadata.clone(),
            projection: None,
            schema: s.schema.clone(),
        }),
        LogicalPlan::Values(v) => StreamPlan::Values(StreamValues {
            rows: v.rows.clone(),
            schema: v.schema.clone(),
        }),
        LogicalPlan::Calc(c) if c.renames_values() => {
            let LogicalPlan::Values(v) = c.input.as_ref() else {
                unreachable!("renames_values checks the input")
            };
            StreamPlan::Values(StreamValues {
                rows: v.rows.clone(),
                schema: c.schema.clone(),
            })
        }
        LogicalPlan::Calc(c) => {
            let calc = StreamCalc {
                input: Box::new(convert(&c.input)),
                filter: c.filter.clone(),
                exprs: c.exprs.clone(),
                schema: c.schema.clone(),
            };
            StreamPlan::Calc(merge(calc))
        }
        LogicalPlan::Union(u) => StreamPlan::Union(StreamUnion {
            inputs: u.inputs.iter().map(convert).collect(),
            schema: u.schema.clone(),
        }),
        LogicalPlan::WatermarkAssigner(w) => {
            StreamPlan::WatermarkAssigner(StreamWatermarkAssigner {
                input: Box::new(convert(&w.input)),
                rowtime: w.rowtime,
                watermark: w.watermark.clone(),
                schema: w.schema.clone(),
            })
        }
    }
}

/// A Calc over a Calc becomes one, unless that would compute one of the lower Calc's
/// expressions twice (it is read more than once and is more than a column or a literal).
fn merge(outer: StreamCalc) -> StreamCalc {
    let StreamPlan::Calc(inner) = outer.input.as_ref() else {
        return outer;
    };
    let mut reads = vec![0usize; inner.exprs.len()];
    for e in outer.exprs.iter().chain(&outer.filter) {
        e.for_each_column(&mut |i| reads[i] += 1);
    }
    let repeated = inner.exprs.iter().zip(&reads).any(|(e, &n)| {
        n > 1 && !matches!(e, ScalarExpr::Column { .. } | ScalarExpr::Literal { .. })
    });
    if repeated {
        return outer;
    }
    let inline = |e: &ScalarExpr| e.map_columns(&mut |i, _| inner.exprs[i].clone());
    let filter = match (&inner.filter, outer.filter.as_ref().map(inline)) {
        (None, outer) => outer,
        (Some(inner), None) => Some(inner.clone()),
        (Some(inner), Some(outer)) => Some(and(inner.clone(), outer)),
    };
    StreamCalc {
        filter,
        exprs: outer.exprs.iter().map(inline).collect(),
        schema: outer.schema.clone(),
        input: inner.input.clone(),
    }
}

/// `a AND b`, as the binder would have bound it.
fn and(a: ScalarExpr, b: ScalarExpr) -> ScalarExpr {
    let nullable = a.data_type().nullable || b.data_type().nullable;
    match crate::function::lookup("AND") {
        Some(function) => ScalarExpr::Call {
            function,
            args: vec![a, b],
            data_type: DataType {
                kind: TypeKind::Boolean,
                nullable,
            },
        },
        // The registry always has AND; without it the filters stay apart.
        None => a,
    }
}

/// The plan reduced to the output columns marked in `needed`, and where each old output
/// column went (`None`: pruned). A node may keep more than asked (a scan that cannot
/// project); its parent then picks.
fn prune(plan: StreamPlan, needed: &[bool]) -> (StreamPlan, Vec<Option<usize>>) {
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
            if pruned.is_identity() {
                return (*pruned.input, remap);
            }
            (StreamPlan::Calc(merge(pruned)), remap)
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
        StreamPlan::Sink(mut sink) => {
            let all = vec![true; sink.input.schema().len()];
            sink.input = Box::new(prune(*sink.input, &all).0);
            let n = sink.schema.len();
            (StreamPlan::Sink(sink), identity(n))
        }
    }
}

/// The columns marked in `needed`, or the first when none is: a batch needs a column to
/// carry its row count.
fn kept(needed: &[bool]) -> Vec<usize> {
    let keep: Vec<usize> = (0..needed.len()).filter(|&i| needed[i]).collect();
    if keep.is_empty() && !needed.is_empty() {
        vec![0]
    } else {
        keep
    }
}

/// Where each of `n` columns went when only `keep` (in order) stayed.
fn positions(keep: &[usize], n: usize) -> Vec<Option<usize>> {
    let mut remap = vec![None; n];
    for (new, &old) in keep.iter().enumerate() {
        remap[old] = Some(new);
    }
    remap
}

/// `e` over an input whose columns moved as `remap` says.
fn remapped(e: &ScalarExpr, remap: &[Option<usize>]) -> ScalarExpr {
    e.map_columns(&mut |i, data_type| ScalarExpr::Column {
        index: remap[i].unwrap_or(i),
        data_type: data_type.clone(),
    })
}

fn identity(n: usize) -> Vec<Option<usize>> {
    (0..n).map(Some).collect()
}

fn select(schema: &Schema, columns: &[usize]) -> Schema {
    Schema::new(columns.iter().map(|&i| schema.fields[i].clone()).collect())
}
