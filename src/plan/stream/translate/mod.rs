//! From the logical plan to the stream plan, doing what Flink's optimizer visibly does to
//! these nodes: adjacent Calcs merge, Calcs that change nothing go, and columns nobody reads
//! are pruned down to the scan (into it, for connectors that read only what they are asked).

use super::changelog::{RootConsumer, infer_update_kinds, normalize_changelogs};
use super::sink::StreamSink;
use super::{PlanError, StreamPlan};
use crate::plan::logical::LogicalPlan;

mod convert;
mod join;
mod over;
mod prune;
mod rewrite;
pub(crate) use convert::WindowColumn;
use convert::*;
pub(crate) use join::joins_windows;
use join::*;
use over::*;
use prune::*;
pub(crate) use rewrite::and;
pub(crate) use rewrite::conjuncts;
pub(super) use rewrite::keyed_exchange;
pub(super) use rewrite::uniquify;
use rewrite::*;

/// The stream plan of a query whose result is read by `root` (see
/// [`super::changelog::infer_update_kinds`]).
pub fn translate(
    plan: &LogicalPlan,
    options: &PlannerOptions,
    root: RootConsumer,
) -> Result<StreamPlan, PlanError> {
    let mut plan = convert(plan)?;
    normalize_changelogs(&mut plan, options.cdc_events_duplicate);
    refuse_updating_over_input(&plan)?;
    if let Some(key) = options.emit_fire {
        refuse_emit_strategy(&plan, key)?;
    }
    let all = vec![true; plan.schema().len()];
    let mut plan = prune(plan, &all).0;
    infer_update_kinds(&mut plan, root);
    Ok(plan)
}

/// The stream plan of an `INSERT INTO table` whose query, bound against the sink's
/// columns, is `plan`. Every sink is planned as one that retracts (an upsert sink takes the
/// `-U` rows as deletes of their key).
pub fn translate_insert(
    plan: &LogicalPlan,
    table: &str,
    options: &PlannerOptions,
) -> Result<StreamPlan, PlanError> {
    let input = translate(plan, options, RootConsumer::Retractions)?;
    Ok(StreamPlan::Sink(StreamSink {
        schema: input.schema().clone(),
        input: Box::new(input),
        table: table.to_string(),
    }))
}

/// What the session's configuration changes in planning.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlannerOptions {
    /// `table.exec.source.cdc-events-duplicate`: a changelog source with a primary key may
    /// repeat events, so its rows are normalized by key.
    pub cdc_events_duplicate: bool,
    /// The first of `table.exec.emit.early-fire.enabled` and `…late-fire.enabled` that is
    /// `true`, if any.
    pub emit_fire: Option<&'static str>,
}

/// Early or late firing asked for (`table.exec.emit.early-fire.enabled` / `late-fire.enabled`):
/// Flink refuses it on window TVF aggregates, with its message. Its legacy group windows fire
/// early and late, which Tideline does not do yet: refused by name rather than run without
/// the firings (the late rows Flink would fire would be dropped).
fn refuse_emit_strategy(plan: &StreamPlan, key: &str) -> Result<(), PlanError> {
    let refused = |message: String| PlanError::Refused {
        message,
        line: 0,
        column: 0,
    };
    match plan {
        StreamPlan::WindowAggregate(_) => return Err(refused(
            "Currently, window table function based aggregate doesn't support early-fire and late-fire configuration 'table.exec.emit.early-fire.enabled' and 'table.exec.emit.late-fire.enabled'.".into(),
        )),
        StreamPlan::GroupWindowAggregate(_) => {
            return Err(refused(format!(
                "'{key}' = 'true': early and late firing of group windows is not supported yet (Tideline fires each window once, when the watermark passes its end)"
            )));
        }
        _ => {}
    }
    plan.inputs()
        .into_iter()
        .try_for_each(|input| refuse_emit_strategy(input, key))
}
