//! Building a running job from a stream plan: sources split into splits, each split
//! followed by the operators above it (stateless operators commute with UNION ALL, so each
//! split gets its own chain), and a sink.

use std::sync::Arc;

use crate::connector::ConnectorError;
use crate::connector::format::new_decoder;
use crate::connector::source::{datagen::DatagenSplit, filesystem, socket};
use crate::exec::calc::CalcOperator;
use crate::exec::operator::ExecError;
use crate::exec::runtime::{DeferredSplit, Pipeline, SourceSplit};
use crate::exec::values::ValuesSplit;
use crate::exec::watermark_assigner::WatermarkAssignerOperator;
use crate::function::EvalContext;
use crate::plan::expr::ScalarExpr;
use crate::plan::stream::StreamPlan;
use crate::types::Schema;

/// The Arrow schema operators produce: every field nullable, so that a type derivation that
/// is stricter than the data never fails a batch.
pub fn runtime_schema(schema: &Schema) -> arrow_schema::SchemaRef {
    Arc::new(arrow_schema::Schema::new(
        schema
            .fields
            .iter()
            .map(|f| f.data_type.with_nullable(true).to_arrow_field(&f.name))
            .collect::<Vec<_>>(),
    ))
}

/// The session's options a job is built with.
#[derive(Debug, Clone)]
pub struct JobOptions {
    /// `pipeline.auto-watermark-interval`, in milliseconds (Flink's default: 200).
    pub auto_watermark_interval: i64,
}

impl Default for JobOptions {
    fn default() -> Self {
        JobOptions {
            auto_watermark_interval: 200,
        }
    }
}

pub fn build_pipelines(
    plan: &StreamPlan,
    ctx: &EvalContext,
    options: &JobOptions,
) -> Result<Vec<Pipeline>, ConnectorError> {
    match plan {
        StreamPlan::Values(v) => Ok(vec![Pipeline {
            split: Box::new(ValuesSplit::new(
                v.rows.clone(),
                runtime_schema(&v.schema),
                ctx.clone(),
            )),
            operators: vec![],
        }]),
        StreamPlan::Calc(c) => {
            let mut pipelines = build_pipelines(&c.input, ctx, options)?;
            for p in &mut pipelines {
                p.operators.push(Box::new(CalcOperator::new(
                    c.filter.clone(),
                    c.exprs.clone(),
                    runtime_schema(&c.schema),
                    ctx.clone(),
                )));
            }
            Ok(pipelines)
        }
        // Each split generates its own watermarks (docs/design/0003).
        StreamPlan::WatermarkAssigner(w) => {
            let mut pipelines = build_pipelines(&w.input, ctx, options)?;
            for p in &mut pipelines {
                p.operators.push(Box::new(WatermarkAssignerOperator::new(
                    w.rowtime,
                    w.watermark.clone(),
                    options.auto_watermark_interval,
                    ctx.clone(),
                )));
            }
            Ok(pipelines)
        }
        StreamPlan::Sink(s) => build_pipelines(&s.input, ctx, options),
        StreamPlan::Exchange(_) | StreamPlan::GroupWindowAggregate(_) => Err(ConnectorError(
            "group window aggregation is not supported by this runtime yet".into(),
        )),
        StreamPlan::Union(u) => {
            let mut all = Vec::new();
            for input in &u.inputs {
                all.extend(build_pipelines(input, ctx, options)?);
            }
            Ok(all)
        }
        StreamPlan::TableSourceScan(scan) => {
            let mut pipelines = scan_pipelines(scan, ctx)?;
            // Columns the query does not read are dropped as soon as they are decoded.
            if let Some(projection) = &scan.projection {
                let exprs: Vec<ScalarExpr> = projection
                    .iter()
                    .map(|&i| ScalarExpr::Column {
                        index: i,
                        data_type: scan.source_schema.fields[i].data_type.clone(),
                    })
                    .collect();
                for p in &mut pipelines {
                    p.operators.push(Box::new(CalcOperator::new(
                        None,
                        exprs.clone(),
                        runtime_schema(&scan.schema),
                        ctx.clone(),
                    )));
                }
            }
            Ok(pipelines)
        }
    }
}

/// The splits of a table's source, each producing the table's physical and metadata columns.
fn scan_pipelines(
    scan: &crate::plan::stream::table_source_scan::StreamTableSourceScan,
    ctx: &EvalContext,
) -> Result<Vec<Pipeline>, ConnectorError> {
    let table = &scan.table;
    let connector = table.option("connector").unwrap_or_default();
    match connector {
        // Unbounded sources, refused in batch mode before they connect: datagen
        // without a row count, a socket.
        "datagen" | "socket"
            if ctx.batch_mode
                && (connector == "socket" || table.option("number-of-rows").is_none()) =>
        {
            Err(ConnectorError(format!(
                "Querying an unbounded table 'default_catalog.default_database.{}' in batch mode is not allowed. The table source is unbounded.",
                table.name
            )))
        }
        "datagen" => Ok(vec![Pipeline {
            split: Box::new(DatagenSplit::new(
                &scan.source_schema,
                &table.options,
                ctx.clock.clone(),
            )?),
            operators: vec![],
        }]),
        "filesystem" => {
            filesystem::check_options(&table.options)?;
            let path = table.option("path").ok_or_else(|| {
                ConnectorError(format!(
                    "table '{}': option 'path' is required for connector 'filesystem'",
                    table.name
                ))
            })?;
            let physical = scan.physical_schema();
            // Of a partitioned table the files hold the other columns; the format's
            // options are checked now, and each file is opened (with a decoder of its
            // own) only when its split is first read.
            let keys = table.partition_keys.clone();
            let decoded = Schema::new(
                physical
                    .fields
                    .iter()
                    .filter(|f| !keys.contains(&f.name))
                    .cloned()
                    .collect(),
            );
            new_decoder(&table.options, &decoded, &ctx.zone)?;
            let root = std::path::PathBuf::from(path.strip_prefix("file://").unwrap_or(path));
            let default_name = table
                .option("partition.default-name")
                .unwrap_or(crate::connector::partition::DEFAULT_PARTITION_NAME)
                .to_string();
            let mut pipelines = Vec::new();
            for file in filesystem::list_files(path)? {
                let (options, decoded, physical, zone) = (
                    table.options.clone(),
                    decoded.clone(),
                    physical.clone(),
                    ctx.zone.clone(),
                );
                let (keys, root, default_name) = (keys.clone(), root.clone(), default_name.clone());
                let metadata = scan.metadata.clone();
                let name = format!("file {}", file.display());
                let open = move || -> Result<Box<dyn SourceSplit>, ExecError> {
                    let failed = |e: ConnectorError| ExecError::Source(e.0);
                    let decoder = new_decoder(&options, &decoded, &zone).map_err(failed)?;
                    let split = filesystem::open_file(&file, decoder).map_err(failed)?;
                    let split: Box<dyn SourceSplit> = if keys.is_empty() {
                        Box::new(split)
                    } else {
                        let dir = file.parent().unwrap_or(&root);
                        let relative = dir.strip_prefix(&root).unwrap_or(dir);
                        Box::new(filesystem::WithPartitionValues::new(
                            split,
                            &physical,
                            &keys,
                            relative,
                            &default_name,
                        ))
                    };
                    Ok(if metadata.is_empty() {
                        split
                    } else {
                        Box::new(
                            filesystem::WithFileMetadata::new(split, &file, &metadata)
                                .map_err(failed)?,
                        )
                    })
                };
                pipelines.push(Pipeline {
                    split: Box::new(DeferredSplit::new(name, open)),
                    operators: vec![],
                });
            }
            Ok(pipelines)
        }
        "socket" => {
            let (options, physical, zone) = (
                table.options.clone(),
                scan.physical_schema(),
                ctx.zone.clone(),
            );
            let new_decoder: socket::DecoderFactory =
                Box::new(move || new_decoder(&options, &physical, &zone).map_err(|e| e.0));
            Ok(vec![Pipeline {
                split: Box::new(socket::connect(&table.options, new_decoder)?),
                operators: vec![],
            }])
        }
        "" => Err(ConnectorError(format!(
            "table '{}' has no 'connector' option",
            table.name
        ))),
        other => Err(ConnectorError(format!(
            "connector '{other}' of table '{}' is not supported as a source (supported: datagen, filesystem, socket)",
            table.name
        ))),
    }
}
