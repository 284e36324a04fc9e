//! `Values`: literal rows.

use crate::plan::explain::{Spelling, calcite_type_name, expr_text};
use crate::plan::expr::ScalarExpr;
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamValues {
    pub rows: Vec<Vec<ScalarExpr>>,
    pub schema: Schema,
}

impl StreamValues {
    pub fn explain(&self, spelling: Spelling) -> String {
        // `SELECT` without `FROM` reads one row of no columns, which Calcite shows as one
        // row of a column named ZERO.
        let no_columns = self.schema.fields.is_empty();
        let rows: Vec<String> = self
            .rows
            .iter()
            .map(|row| {
                if no_columns {
                    return "{ 0 }".to_string();
                }
                let items: Vec<String> = row
                    .iter()
                    .map(|e| expr_text(e, &[], Spelling::Physical))
                    .collect();
                format!("{{ {} }}", items.join(", "))
            })
            .collect();
        let tuples = format!("tuples=[[{}]]", rows.join(", "));
        if spelling == Spelling::Execution {
            return format!("Values({tuples})");
        }
        let record = if no_columns {
            "INTEGER ZERO".to_string()
        } else {
            self.schema
                .fields
                .iter()
                .map(|f| format!("{} {}", calcite_type_name(&f.data_type.kind), f.name))
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!("Values(type=[RecordType({record})], {tuples})")
    }
}
