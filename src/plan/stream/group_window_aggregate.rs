//! `GroupWindowAggregate`: Flink's legacy group windows (`GROUP BY TUMBLE(ts, …)`, `HOP`,
//! `SESSION`), keyed by the GROUP BY keys. Its input arrives through an exchange on the keys
//! (all to one instance without keys); it emits one row per key and window when the window
//! fires: the keys, the aggregates, then the window properties (`exec/group_window_aggregate.rs`
//! runs it) — or, with early or late firings ([`EmitStrategy`]), an insert and then updates.

use super::StreamPlan;
use crate::plan::aggregate::{
    AggregateCall, GroupWindow, GroupWindowKind, WindowProperty, call_text,
};
use crate::types::{Schema, TimeAttribute};

#[derive(Debug, Clone)]
pub struct StreamGroupWindowAggregate {
    pub input: Box<StreamPlan>,
    /// The key columns, input column indices.
    pub grouping: Vec<usize>,
    /// The window. A proctime window reads no column (it fires on the clock), so its
    /// `time_column` is the input's width, past its last column, as Flink names it (`$f2`
    /// over two columns).
    pub window: GroupWindow,
    pub aggregates: Vec<AggregateCall>,
    /// All of the window's properties when the query reads any of them, else none.
    pub properties: Vec<WindowProperty>,
    /// The keys, the aggregates, then the properties.
    pub schema: Schema,
    /// Early and late firings (Flink's `WindowEmitStrategy`), from the session's
    /// `table.exec.emit.*` options; none by default.
    pub emit: EmitStrategy,
    /// Whether an update emits its old row first (`-U`), as the consumer asks (changelog
    /// inference); only with an emit strategy.
    pub update_before: bool,
    /// A window aggregate over rows that carry their windows already (Flink's
    /// `WindowAttachedWindowingStrategy`: a GROUP BY of the `window_start` and `window_end` a
    /// window aggregate or windowing TVF below made), each row aggregated into the one
    /// window its columns name. `window` is the windows below.
    pub attached: Option<AttachedWindow>,
}

/// The input columns naming each row's window, for a window aggregate over rows that carry
/// their windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttachedWindow {
    pub start: usize,
    pub end: usize,
    /// `window_time`, when grouped by too.
    pub time: Option<usize>,
}

impl AttachedWindow {
    pub fn columns(&self) -> impl Iterator<Item = usize> {
        [self.start, self.end].into_iter().chain(self.time)
    }

    pub fn map(&self, f: impl Fn(usize) -> usize) -> AttachedWindow {
        AttachedWindow {
            start: f(self.start),
            end: f(self.end),
            time: self.time.map(f),
        }
    }
}

/// Flink's emit strategy of a legacy group window: early firings before the window's end and
/// late firings for rows up to `allow_lateness` (ms) after it, each after a delay in ms (0:
/// on every row, Flink's "no delay"). With either, a window emits its first result as an
/// insert and each changed one after as an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EmitStrategy {
    pub early: Option<i64>,
    pub late: Option<i64>,
    pub allow_lateness: i64,
}

impl EmitStrategy {
    pub fn is_set(&self) -> bool {
        self.early.is_some() || self.late.is_some()
    }

    /// Whether a window of `time` fires more than once (a proctime window has no late rows).
    pub fn produces_updates(&self, time: TimeAttribute) -> bool {
        self.early.is_some() || (time == TimeAttribute::Rowtime && self.late.is_some())
    }

    /// Flink's text: `early no delay, late delay 2000 millisecond`.
    fn text(&self) -> String {
        let delay = |d: i64| {
            if d == 0 {
                "no delay".to_string()
            } else {
                format!("delay {d} millisecond")
            }
        };
        let mut parts = Vec::new();
        if let Some(d) = self.early {
            parts.push(format!("early {}", delay(d)));
        }
        if let Some(d) = self.late {
            parts.push(format!("late {}", delay(d)));
        }
        parts.join(", ")
    }
}

/// The name Flink gives a window property's column.
pub fn property_name(property: WindowProperty) -> &'static str {
    match property {
        WindowProperty::Start => "w$start",
        WindowProperty::End => "w$end",
        WindowProperty::Rowtime => "w$rowtime",
        WindowProperty::Proctime => "w$proctime",
    }
}

/// The properties a group window has: start, end, rowtime (event time only), proctime.
pub fn window_properties(time_attribute: TimeAttribute) -> Vec<WindowProperty> {
    match time_attribute {
        TimeAttribute::Rowtime => vec![
            WindowProperty::Start,
            WindowProperty::End,
            WindowProperty::Rowtime,
            WindowProperty::Proctime,
        ],
        TimeAttribute::Proctime => vec![
            WindowProperty::Start,
            WindowProperty::End,
            WindowProperty::Proctime,
        ],
    }
}

impl StreamGroupWindowAggregate {
    /// `GroupWindowAggregate(groupBy=[name], window=[TumblingGroupWindow('w$, ts, 5000)],
    /// properties=[w$start, …], select=[name, COUNT(*) AS EXPR$1, start('w$) AS w$start, …])`;
    /// the same in both plan sections.
    pub fn explain(&self) -> String {
        let input = &self.input.schema().fields;
        let name = |i: usize| match input.get(i) {
            Some(f) => f.name.clone(),
            None => format!("$f{i}"),
        };
        let mut attributes = Vec::new();
        if !self.grouping.is_empty() {
            let keys: Vec<String> = self.grouping.iter().map(|&k| name(k)).collect();
            attributes.push(format!("groupBy=[{}]", keys.join(", ")));
        }
        let time = name(self.window.time_column);
        let window = match self.window.kind {
            GroupWindowKind::Tumble { size } => format!("TumblingGroupWindow('w$, {time}, {size})"),
            GroupWindowKind::Hop { slide, size } => {
                format!("SlidingGroupWindow('w$, {time}, {size}, {slide})")
            }
            GroupWindowKind::Session { gap } => format!("SessionGroupWindow('w$, {time}, {gap})"),
            // Only a window TVF has cumulating windows; its node prints itself.
            GroupWindowKind::Cumulate { step, size } => {
                format!("CumulativeGroupWindow('w$, {time}, {size}, {step})")
            }
        };
        attributes.push(format!("window=[{window}]"));
        if !self.properties.is_empty() {
            let names: Vec<&str> = self.properties.iter().map(|&p| property_name(p)).collect();
            attributes.push(format!("properties=[{}]", names.join(", ")));
        }
        let mut select: Vec<String> = self.grouping.iter().map(|&k| name(k)).collect();
        for call in &self.aggregates {
            select.push(call_text(call, call.function.name(), &call.name, &name));
        }
        for &p in &self.properties {
            let function = property_name(p).trim_start_matches("w$");
            select.push(format!("{function}('w$) AS {}", property_name(p)));
        }
        attributes.push(format!("select=[{}]", select.join(", ")));
        if self.emit.is_set() {
            attributes.push(format!("emit=[{}]", self.emit.text()));
        }
        format!("GroupWindowAggregate({})", attributes.join(", "))
    }

    /// Insert-only, unless its emit strategy fires windows more than once.
    pub fn changelog_mode(&self) -> super::ChangelogMode {
        if !self.emit.produces_updates(self.window.time_attribute) {
            return super::ChangelogMode::INSERT_ONLY;
        }
        super::ChangelogMode {
            insert: true,
            update_before: self.update_before,
            update_after: true,
            delete: false,
        }
    }
}
