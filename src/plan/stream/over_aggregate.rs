//! `OverAggregate`: aggregates over each row's preceding rows in its partition, ordered by a
//! time attribute, as Flink's `StreamPhysicalOverAggregate` (one window per node). Its input
//! arrives through an exchange on the partition keys (all to one instance without keys) and
//! must be insert-only; it emits each input row once, with the calls' values appended, when
//! the watermark passes it (rowtime) or at once (proctime) (`exec/over_aggregate.rs` runs
//! it).

use super::{ChangelogMode, StreamPlan};
use crate::plan::aggregate::{AggregateCall, AggregateFunction, call_text};
use crate::plan::logical::OverFrame;
use crate::types::{Schema, TimeAttribute};

#[derive(Debug, Clone)]
pub struct StreamOverAggregate {
    pub input: Box<StreamPlan>,
    /// Input columns.
    pub partition: Vec<usize>,
    /// The time attribute (an input column) ordering the window, ascending.
    pub order: usize,
    pub frame: OverFrame,
    /// Over input columns; SUM stands for Calcite's `$SUM0`.
    pub calls: Vec<AggregateCall>,
    /// The input's columns, then one per call.
    pub schema: Schema,
}

impl StreamOverAggregate {
    pub fn changelog_mode(&self) -> ChangelogMode {
        ChangelogMode::INSERT_ONLY
    }

    /// Whether the window is ordered by event time (else processing time).
    pub fn rowtime(&self) -> bool {
        self.input.schema().fields[self.order].time_attribute == Some(TimeAttribute::Rowtime)
    }

    /// `OverAggregate(partitionBy=[k], orderBy=[ts ASC], window=[ RANGE BETWEEN UNBOUNDED
    /// PRECEDING AND CURRENT ROW], select=[k, v, ts, COUNT(v) AS w0$o0, $SUM0(v) AS w0$o1])`.
    pub fn explain(&self) -> String {
        let input = &self.input.schema().fields;
        let name = |i: usize| input[i].name.clone();
        let mut attributes = Vec::new();
        if !self.partition.is_empty() {
            let keys: Vec<String> = self.partition.iter().map(|&k| name(k)).collect();
            attributes.push(format!("partitionBy=[{}]", keys.join(", ")));
        }
        attributes.push(format!("orderBy=[{} ASC]", name(self.order)));
        attributes.push(format!("window=[{}]", self.frame.plan_text()));
        let mut select: Vec<String> = input.iter().map(|f| f.name.clone()).collect();
        for (i, call) in self.calls.iter().enumerate() {
            let function = match call.function {
                AggregateFunction::Sum => "$SUM0",
                f => f.name(),
            };
            select.push(call_text(call, function, &format!("w0$o{i}"), &name));
        }
        attributes.push(format!("select=[{}]", select.join(", ")));
        format!("OverAggregate({})", attributes.join(", "))
    }
}
