//! `Expand`: each input row repeated once per projection (Flink's `StreamPhysicalExpand`),
//! as GROUPING SETS, ROLLUP and CUBE plan it below their aggregate: projection `s` keeps the
//! keys of grouping set `s`, sets the others NULL, and numbers the set in a `$e` column.
//! Stateless; the changelog passes through. `exec/expand.rs` runs it.

use super::StreamPlan;
use crate::plan::expr::ScalarExpr;
use crate::types::Schema;
use crate::types::value::Value;

#[derive(Debug, Clone)]
pub struct StreamExpand {
    pub input: Box<StreamPlan>,
    /// Per output row of an input row, its columns over the input's.
    pub projects: Vec<Vec<ScalarExpr>>,
    pub schema: Schema,
}

impl StreamExpand {
    /// `Expand(projects=[{supplier, item, price, 0 AS $e}, {supplier, null AS item, price,
    /// 1 AS $e}])`.
    pub fn explain(&self) -> String {
        let input = &self.input.schema().fields;
        let projects: Vec<String> = self
            .projects
            .iter()
            .map(|project| {
                let items: Vec<String> = project
                    .iter()
                    .zip(&self.schema.fields)
                    .map(|(e, field)| match e {
                        ScalarExpr::Column { index, .. } if input[*index].name == field.name => {
                            field.name.clone()
                        }
                        ScalarExpr::Column { index, .. } => {
                            format!("{} AS {}", input[*index].name, field.name)
                        }
                        ScalarExpr::Literal {
                            value: Value::Null, ..
                        } => format!("null AS {}", field.name),
                        ScalarExpr::Literal {
                            value: Value::Int(v),
                            ..
                        } => format!("{v} AS {}", field.name),
                        other => format!("{other:?} AS {}", field.name),
                    })
                    .collect();
                format!("{{{}}}", items.join(", "))
            })
            .collect();
        format!("Expand(projects=[{}])", projects.join(", "))
    }
}
