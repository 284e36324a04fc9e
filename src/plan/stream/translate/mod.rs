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
    if options.emit.early.is_some() || options.emit.late.is_some() {
        apply_emit_strategy(&mut plan, &options.emit)?;
    }
    refuse_updating_over_input(&plan)?;
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
    /// The `table.exec.emit.*` options of group windows.
    pub emit: EmitOptions,
}

/// The session's `table.exec.emit.*` options as set: early and late firing (`None`: off;
/// `Some(None)`: on without a valid delay), `allow-lateness`, and `table.exec.state.ttl`
/// (Flink's lateness when `allow-lateness` is not set), in ms.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmitOptions {
    pub early: Option<Option<i64>>,
    pub late: Option<Option<i64>>,
    pub allow_lateness: Option<i64>,
    pub state_ttl: i64,
}

/// Gives each group window the session's emit strategy, checked as Flink's
/// `WindowEmitStrategy` checks it (its messages). Flink refuses early and late firing on
/// window TVF aggregates.
fn apply_emit_strategy(plan: &mut StreamPlan, options: &EmitOptions) -> Result<(), PlanError> {
    let refused = |message: &str| PlanError::Refused {
        message: message.to_string(),
        line: 0,
        column: 0,
    };
    match plan {
        StreamPlan::WindowAggregate(_) => {
            return Err(refused(
                "Currently, window table function based aggregate doesn't support early-fire and late-fire configuration 'table.exec.emit.early-fire.enabled' and 'table.exec.emit.late-fire.enabled'.",
            ));
        }
        StreamPlan::GroupWindowAggregate(n) => {
            if matches!(
                n.window.kind,
                crate::plan::aggregate::GroupWindowKind::Session { .. }
            ) {
                return Err(refused(
                    "Session window doesn't support EMIT strategy currently.",
                ));
            }
            let rowtime = n.window.time_attribute == crate::types::TimeAttribute::Rowtime;
            let lateness = options.allow_lateness.unwrap_or(options.state_ttl);
            if rowtime && options.late.is_some() && lateness <= 0 {
                return Err(refused(
                    "The 'AFTER WATERMARK' emit strategy requires set 'allow-lateness' or 'minIdleStateRetentionTime' in table config.",
                ));
            }
            let delay = |setting: Option<Option<i64>>, which: &str| match setting {
                None => Ok(None),
                Some(Some(d)) if d >= 0 => Ok(Some(d)),
                Some(_) => Err(refused(&format!(
                    "{which}-fire delay should not be null or negative value whenenable {}-fire emit strategy.",
                    which.to_ascii_lowercase()
                ))),
            };
            n.emit = super::group_window_aggregate::EmitStrategy {
                early: delay(options.early, "Early")?,
                late: delay(options.late, "Late")?,
                allow_lateness: if rowtime && options.late.is_some() {
                    lateness
                } else {
                    0
                },
            };
        }
        _ => {}
    }
    plan.inputs_mut()
        .into_iter()
        .try_for_each(|input| apply_emit_strategy(input, options))
}
