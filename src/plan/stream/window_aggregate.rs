//! `WindowAggregate`: `GROUP BY window_start, window_end [, keys]` over a windowing TVF.
//! The TVF is folded into the aggregate (its input arrives through an exchange on the keys,
//! all to one instance without keys); it emits one row per key and window when the window
//! fires: the keys, the aggregates, then `window_start`, `window_end` and, when grouped by,
//! `window_time`. It computes what a group window aggregate computes and runs on the same
//! operator (`exec/group_window_aggregate.rs`).
//!
//! Flink plans it in two phases, a `LocalWindowAggregate` of slice accumulators below the
//! exchange and a `GlobalWindowAggregate` merging them above; EXPLAIN prints both, as Flink
//! does, but the job runs one phase after the exchange.

use super::group_window_aggregate::StreamGroupWindowAggregate;
use super::window_table_function::window_text;
use crate::plan::aggregate::{
    AggregateCall, AggregateFunction, GroupWindowKind, WindowProperty, call_text,
};

#[derive(Debug, Clone)]
pub struct StreamWindowAggregate {
    /// The keys, window, aggregates and properties (`Start`, `End`, then `Rowtime` for
    /// `window_time`), over the TVF's input; the schema names the properties `window_start`,
    /// `window_end`, `window_time`.
    pub aggregate: StreamGroupWindowAggregate,
}

/// The names of an aggregate's accumulator fields in Flink's local phase (`count1$0`,
/// `sum$1`, AVG's `sum$2, count$2`).
fn accumulators(call: &AggregateCall, j: usize) -> Vec<String> {
    if let AggregateFunction::User(function) = call.function {
        return vec![format!("{}${j}", function.0.name)];
    }
    let names: &[&str] = match call.function {
        AggregateFunction::Count if call.args.is_empty() => &["count1"],
        AggregateFunction::Count => &["count"],
        AggregateFunction::Sum => &["sum"],
        AggregateFunction::Min => &["min"],
        AggregateFunction::Max => &["max"],
        AggregateFunction::Avg => &["sum", "count"],
        // Flink runs these in one phase; the names only label the local phase here.
        AggregateFunction::FirstValue => &["first_value"],
        AggregateFunction::LastValue => &["last_value"],
        AggregateFunction::ListAgg => &["listagg"],
        AggregateFunction::WelfordM2 => &["$welford_m2$1"],
        AggregateFunction::SingleValue => &["single_value"],
        AggregateFunction::JsonArrayAgg { .. } => &["json_arrayagg"],
        AggregateFunction::JsonObjectAgg { .. } => &["json_objectagg"],
        AggregateFunction::User(_) | AggregateFunction::Lag { .. } => &[],
        AggregateFunction::Grouping
        | AggregateFunction::GroupingId
        | AggregateFunction::RowNumber
        | AggregateFunction::Rank
        | AggregateFunction::DenseRank => &[],
    };
    names.iter().map(|n| format!("{n}${j}")).collect()
}

impl StreamWindowAggregate {
    /// Whether the windows share slices, so that the slicing operator aggregates each slice
    /// once for all the windows it is part of (Flink's `SlicingWindowOperator`): HOP and
    /// CUMULATE; a TUMBLE window is its own slice and runs as a group window.
    pub fn slices(&self) -> bool {
        self.aggregate.attached.is_none()
            && matches!(
                self.aggregate.window.kind,
                GroupWindowKind::Hop { .. } | GroupWindowKind::Cumulate { .. }
            )
    }

    /// Whether Flink's two phases carry a `COUNT(*)` the query did not ask for: a HOP
    /// window's slices are merged by a count of rows (`count1$<n>`, after the query's
    /// aggregates), unless the query counts rows itself.
    fn hidden_count(&self) -> bool {
        let a = &self.aggregate;
        matches!(a.window.kind, GroupWindowKind::Hop { .. })
            && !a.aggregates.iter().any(|c| {
                c.function == AggregateFunction::Count
                    && c.args.is_empty()
                    && c.filter.is_none()
                    && !c.distinct
            })
    }

    /// An aggregate's function as Flink's phases name it: over a HOP window's attached
    /// windows, a SUM of a NOT NULL column is `$SUM0`.
    fn function_name(&self, call: &AggregateCall) -> &'static str {
        let a = &self.aggregate;
        let not_null = |&i: &usize| !a.input.schema().fields[i].data_type.nullable;
        if call.function == AggregateFunction::Sum
            && a.attached.is_some()
            && matches!(a.window.kind, GroupWindowKind::Hop { .. })
            && call.args.iter().all(not_null)
        {
            return "$SUM0";
        }
        call.function.name()
    }

    fn column(&self, i: usize) -> String {
        let input = &self.aggregate.input.schema().fields;
        match input.get(i) {
            Some(f) => f.name.clone(),
            None => format!("$f{i}"),
        }
    }

    fn group_by(&self) -> Option<String> {
        let a = &self.aggregate;
        (!a.grouping.is_empty()).then(|| {
            let keys: Vec<String> = a.grouping.iter().map(|&k| self.column(k)).collect();
            format!("groupBy=[{}]", keys.join(", "))
        })
    }

    /// `GlobalWindowAggregate(groupBy=[name], window=[TUMBLE(slice_end=[$slice_end], size=[10
    /// s])], select=[name, COUNT(count1$0) AS c, start('w$) AS window_start, …])`.
    pub fn explain_global(&self) -> String {
        let a = &self.aggregate;
        let mut attributes: Vec<String> = self.group_by().into_iter().collect();
        let slice = match a.attached {
            Some(_) => "win_end=[$window_end]",
            None => "slice_end=[$slice_end]",
        };
        attributes.push(format!("window=[{}]", window_text(&a.window, slice)));
        let mut select: Vec<String> = a.grouping.iter().map(|&k| self.column(k)).collect();
        // Each merged accumulator, then the window's properties, named by the output columns
        // in turn: a hidden count takes the first property's name, and the names run out
        // before the last property (as Flink prints it).
        let mut items: Vec<String> = Vec::new();
        for (j, call) in a.aggregates.iter().enumerate() {
            let accumulators = accumulators(call, j);
            let args = if accumulators.len() == 1 {
                accumulators[0].clone()
            } else {
                format!("({})", accumulators.join(", "))
            };
            items.push(format!("{}({args})", self.function_name(call)));
        }
        if self.hidden_count() {
            items.push(format!("COUNT(count1${})", a.aggregates.len()));
        }
        items.extend(
            a.properties
                .iter()
                .map(|&p| format!("{}('w$)", property_function(p))),
        );
        let names = a.schema.fields[a.grouping.len()..].iter().map(|f| &f.name);
        select.extend(
            items
                .into_iter()
                .zip(names)
                .map(|(item, name)| format!("{item} AS {name}")),
        );
        attributes.push(format!("select=[{}]", select.join(", ")));
        format!("GlobalWindowAggregate({})", attributes.join(", "))
    }

    /// The window properties as the select list ends: `start('w$) AS window_start`, ….
    fn properties_text(&self) -> Vec<String> {
        let a = &self.aggregate;
        let first_property = a.grouping.len() + a.aggregates.len();
        a.properties
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let name = &a.schema.fields[first_property + i].name;
                format!("{}('w$) AS {name}", property_function(p))
            })
            .collect()
    }

    /// Whether Flink plans it in one phase (a SESSION window: sessions merge, no slices).
    /// SESSION windows and processing-time windows aggregate in one phase, as Flink plans
    /// them.
    pub fn single_phase(&self) -> bool {
        matches!(self.aggregate.window.kind, GroupWindowKind::Session { .. })
            || self.aggregate.window.time_attribute == crate::types::TimeAttribute::Proctime
    }

    /// `WindowAggregate(groupBy=[k], window=[SESSION(time_col=[ts], gap=[5 min], partition
    /// keys=[k])], select=[k, SUM(v) AS s, start('w$) AS window_start, …])`, a SESSION
    /// window's one phase.
    pub fn explain_single(&self) -> String {
        let a = &self.aggregate;
        let mut attributes: Vec<String> = self.group_by().into_iter().collect();
        let time = self.column(a.window.time_column);
        let mut window = window_text(&a.window, &format!("time_col=[{time}]"));
        // Its keys are the partition keys (checked when planned).
        if !a.grouping.is_empty() && matches!(a.window.kind, GroupWindowKind::Session { .. }) {
            let keys: Vec<String> = a.grouping.iter().map(|&k| self.column(k)).collect();
            window.pop();
            window.push_str(&format!(", partition keys=[{}])", keys.join(", ")));
        }
        attributes.push(format!("window=[{window}]"));
        let mut select: Vec<String> = a.grouping.iter().map(|&k| self.column(k)).collect();
        for call in &a.aggregates {
            select.push(call_text(call, call.function.name(), &call.name, &|i| {
                self.column(i)
            }));
        }
        select.extend(self.properties_text());
        attributes.push(format!("select=[{}]", select.join(", ")));
        format!("WindowAggregate({})", attributes.join(", "))
    }

    /// `LocalWindowAggregate(groupBy=[name], window=[TUMBLE(time_col=[ts], size=[10 s])],
    /// select=[name, COUNT(*) AS count1$0, slice_end('w$) AS $slice_end])`, the line EXPLAIN
    /// prints below the exchange.
    pub fn explain_local(&self) -> String {
        let a = &self.aggregate;
        let mut attributes: Vec<String> = self.group_by().into_iter().collect();
        let windowed_by = match a.attached {
            Some(w) => format!(
                "win_start=[{}], win_end=[{}]",
                self.column(w.start),
                self.column(w.end)
            ),
            None => format!("time_col=[{}]", self.column(a.window.time_column)),
        };
        attributes.push(format!("window=[{}]", window_text(&a.window, &windowed_by)));
        let mut select: Vec<String> = a.grouping.iter().map(|&k| self.column(k)).collect();
        for (j, call) in a.aggregates.iter().enumerate() {
            let accumulators = accumulators(call, j);
            let alias = if accumulators.len() == 1 {
                accumulators[0].clone()
            } else {
                format!("({})", accumulators.join(", "))
            };
            select.push(call_text(call, self.function_name(call), &alias, &|i| {
                self.column(i)
            }));
        }
        if self.hidden_count() {
            select.push(format!("COUNT(*) AS count1${}", a.aggregates.len()));
        }
        select.push(match a.attached {
            Some(_) => "slice_end('w$) AS $window_end".to_string(),
            None => "slice_end('w$) AS $slice_end".to_string(),
        });
        attributes.push(format!("select=[{}]", select.join(", ")));
        format!("LocalWindowAggregate({})", attributes.join(", "))
    }
}

/// A window property's function in Flink's select lists: `start('w$)`, ….
fn property_function(p: WindowProperty) -> &'static str {
    match p {
        WindowProperty::Start => "start",
        WindowProperty::End => "end",
        WindowProperty::Rowtime => "rowtime",
        WindowProperty::Proctime => "proctime",
    }
}
