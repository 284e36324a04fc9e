//! Sources: table scans (a connector's splits, a changelog format's row kinds, projection),
//! and the watermark assigner with its emission options and alignment group.

use super::*;

/// Each split generates its own watermarks (docs/design/0003).
pub(super) fn watermark_assigner(
    w: &StreamWatermarkAssigner,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
    groups: &mut BuildState,
) -> Result<Built, BuildError> {
    let mut built = build(&w.input, ctx, options, graph, groups)?;
    let emission = watermark_emission(&w.input, options)?;
    let group = alignment_group(&w.input, groups)?;
    built.push(graph, &|| {
        let assigner =
            WatermarkAssignerOperator::new(w.rowtime, w.watermark.clone(), emission, ctx.clone());
        Box::new(match &group {
            Some(group) => assigner.with_alignment(group.join()),
            None => assigner,
        })
    });
    Ok(built)
}

pub(super) fn table_source_scan(
    scan: &StreamTableSourceScan,
    ctx: &EvalContext,
    options: &JobOptions,
    graph: &mut JobGraph,
) -> Result<Built, BuildError> {
    let pipelines = scan_pipelines(scan, ctx, options.parallelism)?;
    let mut built = Built::Splits(pipelines, graph.source_uids_here());
    // A changelog format's rows carry their kinds in a last column (after the metadata).
    if scan.reads_changelog() {
        if !scan.table.partition_keys.is_empty() {
            return Err(BuildError::Unsupported(format!(
                "table '{}': a changelog format cannot be read with partition columns yet",
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
    crate::types::option_value::parse_duration(text)
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
    groups: &mut BuildState,
) -> Result<Option<Arc<AlignmentGroup>>, BuildError> {
    let table = scanned_table(input);
    let Some(name) = table.and_then(|t| t.option("scan.watermark.alignment.group")) else {
        return Ok(None);
    };
    let Some(max_drift) = duration_option(table, "scan.watermark.alignment.max-drift")? else {
        return Err(BuildError::Unsupported(format!(
            "table '{}': 'scan.watermark.alignment.group' needs 'scan.watermark.alignment.max-drift'",
            table.map_or("", |t| t.name.as_str())
        )));
    };
    // Flink's default update interval: 1 s.
    let interval =
        duration_option(table, "scan.watermark.alignment.update-interval")?.unwrap_or(1_000);
    Ok(Some(
        groups
            .alignment
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
) -> Result<WatermarkEmission, BuildError> {
    let table = scanned_table(input);
    let option = |key: &str| table.and_then(|t| t.option(key));
    let on_event = match option("scan.watermark.emit.strategy") {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("on-periodic") => false,
        Some(v) if v.eq_ignore_ascii_case("on-event") => true,
        Some(v) => {
            return Err(BuildError::Unsupported(format!(
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
pub(super) fn needs_exact_watermarks(plan: &StreamPlan) -> bool {
    if let StreamPlan::GroupWindowAggregate(g) = plan
        && g.input.changelog_mode().retracts()
    {
        return true;
    }
    plan.inputs().into_iter().any(needs_exact_watermarks)
}

/// The splits of a table's source, each producing the table's physical and metadata columns.
pub(super) fn scan_pipelines(
    scan: &StreamTableSourceScan,
    ctx: &EvalContext,
    parallelism: u32,
) -> Result<Vec<Pipeline>, BuildError> {
    let table = &scan.table;
    // A stream a program provides (`api::StreamTableEnvironment`): one unbounded split.
    if let Some(source) = &table.provided_source {
        return provided_stream_pipelines(source, scan, ctx);
    }
    let factory = registry::source(table)?;
    // Unbounded sources are refused in batch mode before they connect.
    if ctx.batch_mode && !factory.is_bounded(table) {
        return Err(BuildError::Unsupported(format!(
            "Querying an unbounded table 'default_catalog.default_database.{}' in batch mode is not allowed. The table source is unbounded.",
            table.name
        )));
    }
    if ctx.batch_mode && scan.reads_changelog() {
        return Err(BuildError::Unsupported(format!(
            "Querying a table in batch mode is currently only possible for INSERT-only table sources. But the source for table 'default_catalog.default_database.{}' produces other changelog messages than just INSERT.",
            table.name
        )));
    }
    let physical = scan.physical_schema();
    factory
        .splits(
            &ScanRequest {
                table,
                physical: &physical,
                metadata: &scan.metadata,
                parallelism,
            },
            ctx,
        )
        .map_err(BuildError::from)
}

/// The one split of a table whose rows a program pushes (`connector/source/stream.rs`).
fn provided_stream_pipelines(
    source: &crate::catalog::ProvidedSource,
    scan: &StreamTableSourceScan,
    ctx: &EvalContext,
) -> Result<Vec<Pipeline>, BuildError> {
    let table = &scan.table;
    if ctx.batch_mode {
        return Err(BuildError::Unsupported(format!(
            "Querying an unbounded table 'default_catalog.default_database.{}' in batch mode is not allowed. The table source is unbounded.",
            table.name
        )));
    }
    let stream = crate::connector::source::stream::provided_stream(source).ok_or_else(|| {
        BuildError::Internal(format!(
            "table '{}' has a provided source of an unknown kind",
            table.name
        ))
    })?;
    let split = stream
        .open(runtime_schema(&scan.source_schema))
        .map_err(ConnectorError)?;
    Ok(vec![Pipeline {
        branches: Vec::new(),
        split: Box::new(split),
        operators: vec![],
    }])
}
