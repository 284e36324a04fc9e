//! `WatermarkAssigner`: a table's `WATERMARK FOR` clause, marking the rowtime column and
//! computing each row's watermark; rows pass through unchanged.

use super::StreamPlan;
use crate::plan::explain::{Spelling, expr_text};
use crate::plan::expr::ScalarExpr;
use crate::types::Schema;

#[derive(Debug, Clone)]
pub struct StreamWatermarkAssigner {
    pub input: Box<StreamPlan>,
    /// The rowtime column (an index into the input and output columns).
    pub rowtime: usize,
    /// A row's watermark, over the input columns.
    pub watermark: ScalarExpr,
    pub schema: Schema,
}

impl StreamWatermarkAssigner {
    pub fn explain(&self, spelling: Spelling) -> String {
        let names: Vec<String> = self.schema.fields.iter().map(|f| f.name.clone()).collect();
        format!(
            "WatermarkAssigner(rowtime=[{}], watermark=[{}])",
            names[self.rowtime],
            expr_text(&self.watermark, &names, spelling)
        )
    }
}
