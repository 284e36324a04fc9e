//! The stateless nodes: Calc, Expand, Correlate (UNNEST), lookup joins, dropping `-U`,
//! exchanges and UNION ALL, fused into the chains below them.

use super::*;

pub(super) fn calc(
    c: &StreamCalc,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    // A correlate below fills only the columns this Calc reads.
    let mut built = match c.input.as_ref() {
        StreamPlan::Correlate(k) => {
            let mut read = vec![false; k.schema.len()];
            for e in c.exprs.iter().chain(&c.filter) {
                e.mark_columns(&mut read);
            }
            correlate_reading(k, Some(read), ctx, options, graph, groups)?
        }
        _ => build(&c.input, ctx, options, graph, groups)?,
    };
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

pub(super) fn expand(
    x: &StreamExpand,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
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

/// A lookup join: the table read whole now (once, shared by the chains), then an operator
/// in each chain of the input.
pub(super) fn lookup_join(
    j: &StreamLookupJoin,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let mut built = build(&j.input, ctx, options, graph, groups)?;
    let schema = runtime_schema(&j.table.schema);
    let mut batches = Vec::new();
    for mut pipeline in source::scan_pipelines(&j.table, ctx, 1)? {
        while let Some(batch) = pipeline.split.next_batch().map_err(BuildError::operator)? {
            batches.push(
                batch_with_rows(schema.clone(), batch.columns().to_vec(), batch.num_rows())
                    .map_err(BuildError::operator)?,
            );
        }
    }
    let rows =
        arrow_select::concat::concat_batches(&schema, &batches).map_err(BuildError::operator)?;
    let table = Arc::new(LookupTable::new(rows, &j.right_keys).map_err(BuildError::operator)?);
    let output = runtime_schema(&j.schema);
    // The key types were encoded when the table was indexed: an operator can be made.
    let make = || {
        LookupJoinOperator::new(
            table.clone(),
            j.left_keys.clone(),
            j.join_type == JoinType::Left,
            j.residual.clone(),
            output.clone(),
            ctx.clone(),
        )
    };
    make().map_err(BuildError::operator)?;
    built.push(graph, &|| {
        Box::new(make().expect("the lookup table's key types encode"))
    });
    Ok(built)
}

pub(super) fn correlate(
    c: &StreamCorrelate,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    correlate_reading(c, None, ctx, options, graph, groups)
}

/// A correlate whose consumer reads only the columns `read` (all when `None`): the input
/// columns it does not read are left NULL, not repeated per element.
fn correlate_reading(
    c: &StreamCorrelate,
    read: Option<Vec<bool>>,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let mut built = build(&c.input, ctx, options, graph, groups)?;
    let input_width = c.input.schema().len();
    let mut schema = c.schema.clone();
    let read = read.unwrap_or_else(|| vec![true; schema.len()]);
    for (field, &read) in schema.fields.iter_mut().zip(&read).take(input_width) {
        field.data_type.nullable |= !read;
    }
    let schema = runtime_schema(&schema);
    built.push(graph, &|| {
        Box::new(CorrelateOperator::new(
            c.generator.clone(),
            c.with_ordinality,
            c.join_type == JoinType::Left,
            c.condition.clone(),
            schema.clone(),
            read[..input_width].to_vec(),
            ctx.clone(),
        ))
    });
    Ok(built)
}

pub(super) fn drop_update_before(
    d: &StreamDropUpdateBefore,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let mut built = build(&d.input, ctx, options, graph, groups)?;
    built.push(graph, &|| Box::new(DropUpdateBeforeOperator));
    Ok(built)
}

/// A new task vertex: `parallelism.default` instances for a hash exchange, one for
/// a single one.
pub(super) fn exchange(
    e: &StreamExchange,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
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
        uids: Vec::new(),
        inputs,
    })))
}

pub(super) fn union(
    u: &StreamUnion,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let mut inputs = Vec::new();
    for input in &u.inputs {
        inputs.push(build(input, ctx, options, graph, groups)?);
    }
    Ok(Built::Union(inputs))
}
