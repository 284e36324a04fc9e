//! `ChangelogNormalize`: a changelog source made a proper changelog by its primary key, as
//! Flink inserts it over a source whose events may repeat
//! (`table.exec.source.cdc-events-duplicate`) — below it a `DropUpdateBefore` and an
//! exchange on the key. Each key keeps its current row: a repeated row changes nothing, a
//! delete of an absent key is dropped, `-U` is emitted when the consumer asks for it. A
//! filter over it is taken in (`condition`), as Flink's rule does, so that rows leaving the
//! filter become deletes (`exec/changelog_normalize.rs`).

use super::{ChangelogMode, StreamPlan};
use crate::plan::explain::{Spelling, expr_text};
use crate::plan::expr::ScalarExpr;
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamChangelogNormalize {
    pub input: Box<StreamPlan>,
    /// The primary key, in the input.
    pub keys: Vec<usize>,
    /// The filter taken in, over the input's columns.
    pub condition: Option<ScalarExpr>,
    /// Whether it emits `-U` (set by [`super::changelog::infer_update_kinds`]).
    pub update_before: bool,
    pub schema: Schema,
}

impl StreamChangelogNormalize {
    pub fn changelog_mode(&self) -> ChangelogMode {
        ChangelogMode {
            insert: true,
            update_before: self.update_before,
            update_after: true,
            delete: true,
        }
    }

    /// `ChangelogNormalize(key=[id], condition=[>(w, 1)])`.
    pub fn explain(&self, spelling: Spelling) -> String {
        let names: Vec<String> = self.schema.fields.iter().map(|f| f.name.clone()).collect();
        let keys: Vec<&str> = self.keys.iter().map(|&k| names[k].as_str()).collect();
        match &self.condition {
            Some(c) => format!(
                "ChangelogNormalize(key=[{}], condition=[{}])",
                keys.join(", "),
                expr_text(c, &names, spelling)
            ),
            None => format!("ChangelogNormalize(key=[{}])", keys.join(", ")),
        }
    }

    /// The filter as the source below is offered it (Flink's filter push-down shows it in
    /// the scan's digest).
    pub fn offered_filter(&self) -> Option<String> {
        let names: Vec<String> = self.schema.fields.iter().map(|f| f.name.clone()).collect();
        self.condition
            .as_ref()
            .map(|c| super::calc::scan_filter_text(c, &names))
    }
}
