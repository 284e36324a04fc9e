//! `WindowJoin`: a join of two windowed inputs — each a windowing TVF, a window aggregate,
//! or a window Top-N or deduplication over one — on equal `window_start` and `window_end`
//! (and keys), as Flink's `StreamPhysicalWindowJoin`: both sides' rows of a window kept until
//! the watermark passes its end, joined once, then freed. Insert-only; the output keeps both
//! sides' columns and time attributes. INNER, LEFT, RIGHT and FULL OUTER; each input arrives
//! through an exchange on its keys, the window bounds left out (one instance without keys).
//! `exec/window_join.rs` runs it.

use super::window_table_function::window_text;
use super::{ChangelogMode, StreamPlan};
use crate::plan::aggregate::GroupWindow;
use crate::plan::explain::{Spelling, expr_text};
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::JoinType;
use crate::types::{DataType, Schema};

/// A windowed input's windows: their spec, the columns holding a row's window bounds, the
/// windows' time type (TIMESTAMP or TIMESTAMP_LTZ) and, for SESSION, the partition keys (their
/// columns in the TVF's input, and names).
#[derive(Debug, Clone)]
pub struct WindowedInput {
    pub window: GroupWindow,
    pub window_start: usize,
    pub window_end: usize,
    pub time_type: DataType,
    pub partition: Vec<(usize, String)>,
}

impl WindowedInput {
    /// Whether the two inputs' windows are the same windows (Flink's window spec equality):
    /// kind, sizes, offset, time type and partition keys.
    pub fn same_windows(&self, other: &WindowedInput) -> bool {
        self.window.kind == other.window.kind
            && self.window.offset == other.window.offset
            && self.window.time_attribute == other.window.time_attribute
            && std::mem::discriminant(&self.time_type.kind)
                == std::mem::discriminant(&other.time_type.kind)
            && self
                .partition
                .iter()
                .map(|p| p.0)
                .eq(other.partition.iter().map(|p| p.0))
    }

    /// `TUMBLE(win_start=[window_start], win_end=[window_end], size=[10 min])`, with
    /// `partition keys=[…]` for SESSION.
    fn text(&self, input: &Schema) -> String {
        let name = |i: usize| input.fields[i].name.as_str();
        let mut text = window_text(
            &self.window,
            &format!(
                "win_start=[{}], win_end=[{}]",
                name(self.window_start),
                name(self.window_end)
            ),
        );
        if !self.partition.is_empty() {
            text.pop();
            let keys: Vec<&str> = self.partition.iter().map(|p| p.1.as_str()).collect();
            text.push_str(&format!(", partition keys=[{}])", keys.join(", ")));
        }
        text
    }
}

#[derive(Debug, Clone)]
pub struct StreamWindowJoin {
    pub left: Box<StreamPlan>,
    pub right: Box<StreamPlan>,
    pub join_type: JoinType,
    /// Each side's windows (boxed: the plan's nodes stay small).
    pub windows: Box<[WindowedInput; 2]>,
    /// Equal keys besides the window bounds: `left_keys[i]` = `right_keys[i]`.
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    /// The condition over the output's columns without the window equalities, as Flink's
    /// plan prints it (`None`: TRUE).
    pub condition: Option<ScalarExpr>,
    /// The part of the condition that is not a key equality, evaluated per pair.
    pub residual: Option<ScalarExpr>,
    pub schema: Schema,
}

impl StreamWindowJoin {
    pub fn changelog_mode(&self) -> ChangelogMode {
        ChangelogMode::INSERT_ONLY
    }

    /// `WindowJoin(leftWindow=[TUMBLE(win_start=[window_start], win_end=[window_end],
    /// size=[10 min])], rightWindow=[…], joinType=[InnerJoin], where=[=(id, id0)],
    /// select=[…])`.
    pub fn explain(&self, spelling: Spelling) -> String {
        let names = super::join::pair_names(self.left.schema(), self.right.schema());
        let condition = match &self.condition {
            Some(c) => expr_text(c, &names, spelling),
            None => "true".into(),
        };
        let names: Vec<String> = self.schema.fields.iter().map(|f| f.name.clone()).collect();
        format!(
            "WindowJoin(leftWindow=[{}], rightWindow=[{}], joinType=[{}], where=[{condition}], select=[{}])",
            self.windows[0].text(self.left.schema()),
            self.windows[1].text(self.right.schema()),
            self.join_type.flink_name(),
            names.join(", "),
        )
    }
}
