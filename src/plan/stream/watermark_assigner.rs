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
            self.watermark_text(spelling)
        )
    }

    /// The watermark expression as the plan prints it.
    pub fn watermark_text(&self, spelling: Spelling) -> String {
        let names: Vec<String> = self.schema.fields.iter().map(|f| f.name.clone()).collect();
        expr_text(&self.watermark, &names, spelling)
    }

    /// The scan right below when it computes the watermark itself (Flink's watermark
    /// push-down: one node, the scan, in the plan).
    pub fn pushed_into(&self) -> Option<&super::table_source_scan::StreamTableSourceScan> {
        match self.input.as_ref() {
            StreamPlan::TableSourceScan(scan) if scan.pushes_watermarks() => Some(scan),
            _ => None,
        }
    }
}
