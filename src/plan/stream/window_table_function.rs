//! `WindowTableFunction`: a windowing TVF on its own (`TABLE(TUMBLE(TABLE t, …))` not
//! followed by a window aggregation): each input row once per window holding its time, with
//! `window_start`, `window_end` and `window_time` appended. Insert-only. TUMBLE, HOP and
//! CUMULATE are stateless (`exec/window_table_function.rs`); SESSION keeps rows per
//! partition key, through an exchange on it, until their session closes
//! (`exec/session_window_table_function.rs`).

use super::StreamPlan;
use crate::plan::aggregate::{GroupWindow, GroupWindowKind};
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamWindowTableFunction {
    pub input: Box<StreamPlan>,
    /// The windows; `time_column` is an input column.
    pub window: GroupWindow,
    /// SESSION's partition keys, input columns.
    pub partition: Vec<usize>,
    /// The input's columns, then the three window columns.
    pub schema: Schema,
}

/// A duration as Flink's `TimeUtils.formatWithHighestUnit` writes it: `10 s`, `5 min`, `1 h`.
pub fn duration_text(millis: i64) -> String {
    const UNITS: [(i64, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "min"),
        (1_000, "s"),
    ];
    for (size, unit) in UNITS {
        if millis != 0 && millis % size == 0 {
            return format!("{} {unit}", millis / size);
        }
    }
    format!("{millis} ms")
}

/// A window as Flink's window specs print it: `TUMBLE(time_col=[ts], size=[10 s])`,
/// `HOP(…, size=[…], slide=[…])`, `CUMULATE(…, max_size=[…], step=[…])`, `offset=[…]` last
/// when there is one. `time`: the attribute naming the time (`time_col=[ts]`).
pub fn window_text(window: &GroupWindow, time: &str) -> String {
    let (function, mut parts) = match window.kind {
        GroupWindowKind::Tumble { size } => {
            ("TUMBLE", vec![format!("size=[{}]", duration_text(size))])
        }
        GroupWindowKind::Hop { slide, size } => (
            "HOP",
            vec![
                format!("size=[{}]", duration_text(size)),
                format!("slide=[{}]", duration_text(slide)),
            ],
        ),
        GroupWindowKind::Cumulate { step, size } => (
            "CUMULATE",
            vec![
                format!("max_size=[{}]", duration_text(size)),
                format!("step=[{}]", duration_text(step)),
            ],
        ),
        GroupWindowKind::Session { gap } => {
            ("SESSION", vec![format!("gap=[{}]", duration_text(gap))])
        }
    };
    if window.offset != 0 {
        parts.push(format!("offset=[{}]", duration_text(window.offset)));
    }
    format!("{function}({time}, {})", parts.join(", "))
}

impl StreamWindowTableFunction {
    /// `WindowTableFunction(window=[TUMBLE(time_col=[ts], size=[10 s])])`.
    pub fn explain(&self) -> String {
        let fields = &self.input.schema().fields;
        let time = &fields[self.window.time_column].name;
        let mut window = window_text(&self.window, &format!("time_col=[{time}]"));
        if !self.partition.is_empty() {
            let keys: Vec<&str> = self
                .partition
                .iter()
                .map(|&k| fields[k].name.as_str())
                .collect();
            window.pop();
            window.push_str(&format!(", partition keys=[{}])", keys.join(", ")));
        }
        format!("WindowTableFunction(window=[{window}])")
    }

    pub fn is_session(&self) -> bool {
        matches!(self.window.kind, GroupWindowKind::Session { .. })
    }
}
