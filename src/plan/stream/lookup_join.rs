//! `LookupJoin`: `left JOIN t FOR SYSTEM_TIME AS OF left.proctime ON left.k = t.k`
//! against a table whose source can be looked up (Flink's `StreamPhysicalLookupJoin` over a
//! `LookupTableSource`): each left row, as it arrives, is joined with the table's rows of its
//! key at that moment. The sources that look up here (the legacy CSV filesystem table) read
//! the whole table when the job starts, as Flink's `CsvLookupFunction` does, so the table is
//! not a stream input of the plan. Inner or left; stateless; the left's changelog passes
//! through. `exec/lookup_join.rs` runs it.

use super::StreamPlan;
use super::table_source_scan::StreamTableSourceScan;
use crate::plan::explain::{Spelling, expr_text};
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::JoinType;
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamLookupJoin {
    pub input: Box<StreamPlan>,
    /// The looked-up table, read whole when the job starts.
    pub table: StreamTableSourceScan,
    /// Inner or left.
    pub join_type: JoinType,
    /// Key columns of the input, and the table's columns they equal (pairwise).
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    /// What the condition holds besides the key equalities, over the output's columns.
    pub residual: Option<ScalarExpr>,
    /// The input's columns, then the table's.
    pub schema: Schema,
}

impl StreamLookupJoin {
    /// `LookupJoin(table=[default_catalog.default_database.t], joinType=[InnerJoin],
    /// lookup=[key=$f8], select=[…])`.
    pub fn explain(&self, spelling: Spelling) -> String {
        let names: Vec<String> = self.schema.fields.iter().map(|f| f.name.clone()).collect();
        let nl = self.input.schema().len();
        let lookup: Vec<String> = self
            .right_keys
            .iter()
            .zip(&self.left_keys)
            .map(|(&r, &l)| format!("{}={}", names[nl + r], names[l]))
            .collect();
        let mut parts = vec![
            format!(
                "table=[default_catalog.default_database.{}]",
                self.table.table.name
            ),
            format!("joinType=[{}]", self.join_type.flink_name()),
            format!("lookup=[{}]", lookup.join(", ")),
        ];
        if let Some(residual) = &self.residual {
            parts.push(format!("where=[{}]", expr_text(residual, &names, spelling)));
        }
        parts.push(format!("select=[{}]", names.join(", ")));
        format!("LookupJoin({})", parts.join(", "))
    }
}
