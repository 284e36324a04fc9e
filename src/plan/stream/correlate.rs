//! `Correlate`: an UNNEST joined with the rows it is computed from (Flink's
//! `StreamPhysicalCorrelate` over its `$UNNEST_ROWS$1` table function): each input row once
//! per element of its collection, the element's columns (and ordinality) appended; an inner
//! correlate drops a row whose collection is empty or NULL, a left one keeps it once with
//! NULL elements. A condition on the element's columns alone (a WHERE above an inner
//! correlate) is evaluated here, as Flink fuses it. Stateless; the changelog passes
//! through, each row's kind on its elements. `exec/correlate.rs` runs it.

use super::StreamPlan;
use crate::plan::explain::{Spelling, calcite_row_type, expr_text};
use crate::plan::expr::ScalarExpr;
use crate::plan::logical::{Generator, JoinType};
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamCorrelate {
    pub input: Box<StreamPlan>,
    /// The collection or the table function's call, over the input's columns.
    pub generator: Generator,
    pub with_ordinality: bool,
    /// Inner or left.
    pub join_type: JoinType,
    /// Over the element's columns (`$0` its first).
    pub condition: Option<ScalarExpr>,
    /// Calcite's correlation id.
    pub correlation: u32,
    /// The input's columns, then the element's as the table function names them.
    pub schema: Schema,
}

impl StreamCorrelate {
    /// `Correlate(invocation=[$UNNEST_ROWS$1($cor0.tags)], correlate=[table(…)],
    /// select=[id,tags,f0], rowType=[RecordType(…)], joinType=[INNER])`.
    pub fn explain(&self) -> String {
        let names: Vec<String> = self
            .input
            .schema()
            .fields
            .iter()
            .map(|f| format!("$cor{}.{}", self.correlation, f.name))
            .collect();
        let invocation =
            self.generator
                .invocation(self.with_ordinality, &names, Spelling::Physical);
        let select: Vec<&str> = self.schema.fields.iter().map(|f| f.name.as_str()).collect();
        let mut attributes = vec![
            format!("invocation=[{invocation}]"),
            format!("correlate=[table({invocation})]"),
            format!("select=[{}]", select.join(",")),
            format!("rowType=[{}]", calcite_row_type(&self.schema)),
            format!(
                "joinType=[{}]",
                self.join_type.calcite_name().to_uppercase()
            ),
        ];
        // Calcite's text of a condition over the element's columns: by position.
        if let Some(condition) = &self.condition {
            attributes.push(format!(
                "condition=[{}]",
                expr_text(condition, &[], Spelling::Ast)
            ));
        }
        format!("Correlate({})", attributes.join(", "))
    }
}
