//! Logical plan nodes: what a query computes, before it is laid out as a stream job.

use std::sync::Arc;

use super::explain::{Spelling, TreeWriter, expr_text};
use super::expr::ScalarExpr;
use crate::catalog::TableDef;
use crate::types::Schema;

#[derive(Debug, Clone)]
pub enum LogicalPlan {
    /// Reads the physical columns of a table (in declared order).
    Scan(LogicalScan),
    /// Literal rows (`VALUES …`, or `SELECT` without `FROM`: one empty row).
    Values(LogicalValues),
    /// Computes `exprs` over each input row, keeping the rows where `filter` is TRUE.
    Calc(LogicalCalc),
    /// UNION ALL of inputs of the same schema.
    Union(LogicalUnion),
    /// A table's `WATERMARK FOR` clause: marks its rowtime column and says how watermarks
    /// are computed from each row; rows pass through unchanged.
    WatermarkAssigner(LogicalWatermarkAssigner),
}

#[derive(Debug, Clone)]
pub struct LogicalScan {
    pub table: Arc<TableDef>,
    /// The columns the source produces: the physical ones, then one per metadata key.
    pub schema: Schema,
    /// The metadata keys read (`file.path`, …), in the order their columns follow.
    pub metadata: Vec<String>,
}

impl LogicalScan {
    /// The physical columns alone, as the format decodes them.
    pub fn physical_schema(&self) -> Schema {
        let n = self.schema.len() - self.metadata.len();
        Schema::new(self.schema.fields[..n].to_vec())
    }
}

#[derive(Debug, Clone)]
pub struct LogicalValues {
    pub rows: Vec<Vec<ScalarExpr>>,
    pub schema: Schema,
}

#[derive(Debug, Clone)]
pub struct LogicalCalc {
    pub input: Box<LogicalPlan>,
    pub filter: Option<ScalarExpr>,
    pub exprs: Vec<ScalarExpr>,
    pub schema: Schema,
}

#[derive(Debug, Clone)]
pub struct LogicalWatermarkAssigner {
    pub input: Box<LogicalPlan>,
    /// The rowtime column, an index into the input (and output) columns.
    pub rowtime: usize,
    /// The watermark of a row, over the input columns.
    pub watermark: ScalarExpr,
    pub schema: Schema,
}

impl LogicalCalc {
    /// Whether the Calc passes every input column through in order (renaming at most).
    pub fn passes_columns_through(&self) -> bool {
        self.filter.is_none()
            && self.exprs.len() == self.input.schema().len()
            && self
                .exprs
                .iter()
                .enumerate()
                .all(|(i, e)| matches!(e, ScalarExpr::Column { index, .. } if *index == i))
    }

    /// Whether the Calc only names the columns of literal rows (`VALUES … AS v(x, y)`).
    pub fn renames_values(&self) -> bool {
        matches!(self.input.as_ref(), LogicalPlan::Values(_)) && self.passes_columns_through()
    }
}

#[derive(Debug, Clone)]
pub struct LogicalUnion {
    pub inputs: Vec<LogicalPlan>,
    pub schema: Schema,
}

impl LogicalPlan {
    pub fn schema(&self) -> &Schema {
        match self {
            LogicalPlan::Scan(s) => &s.schema,
            LogicalPlan::Values(v) => &v.schema,
            LogicalPlan::Calc(c) => &c.schema,
            LogicalPlan::Union(u) => &u.schema,
            LogicalPlan::WatermarkAssigner(w) => &w.schema,
        }
    }

    /// EXPLAIN's abstract syntax tree: the plan as Calcite's logical nodes, columns by
    /// position (a Calc is a `LogicalProject` over a `LogicalFilter`).
    pub fn explain_ast(&self) -> String {
        let mut tree = TreeWriter::new();
        self.ast_into(&mut tree, &mut Vec::new());
        tree.finish()
    }

    fn ast_into(&self, tree: &mut TreeWriter, prefix: &mut Vec<bool>) {
        let text = |e: &ScalarExpr| expr_text(e, &[], Spelling::Ast);
        match self {
            LogicalPlan::Scan(s) => tree.line(
                prefix,
                &format!(
                    "LogicalTableScan(table=[[default_catalog, default_database, {}]])",
                    s.table.name
                ),
            ),
            LogicalPlan::Values(v) => {
                let rows: Vec<String> = v
                    .rows
                    .iter()
                    .map(|row| {
                        if row.is_empty() {
                            "{ 0 }".to_string()
                        } else {
                            let items: Vec<String> = row.iter().map(text).collect();
                            format!("{{ {} }}", items.join(", "))
                        }
                    })
                    .collect();
                tree.line(
                    prefix,
                    &format!("LogicalValues(tuples=[[{}]])", rows.join(", ")),
                )
            }
            // Column names given to VALUES are the Values' own in Calcite's tree.
            LogicalPlan::Calc(c) if c.renames_values() => c.input.ast_into(tree, prefix),
            LogicalPlan::Calc(c) => {
                let exprs: Vec<String> = c
                    .exprs
                    .iter()
                    .zip(&c.schema.fields)
                    .map(|(e, f)| format!("{}=[{}]", f.name, text(e)))
                    .collect();
                tree.line(prefix, &format!("LogicalProject({})", exprs.join(", ")));
                prefix.push(true);
                if let Some(filter) = &c.filter {
                    tree.line(
                        prefix,
                        &format!("LogicalFilter(condition=[{}])", text(filter)),
                    );
                    prefix.push(true);
                    c.input.ast_into(tree, prefix);
                    prefix.pop();
                } else {
                    c.input.ast_into(tree, prefix);
                }
                prefix.pop();
            }
            LogicalPlan::Union(u) => {
                tree.line(prefix, "LogicalUnion(all=[true])");
                for (i, input) in u.inputs.iter().enumerate() {
                    prefix.push(i + 1 == u.inputs.len());
                    input.ast_into(tree, prefix);
                    prefix.pop();
                }
            }
            LogicalPlan::WatermarkAssigner(w) => {
                tree.line(
                    prefix,
                    &format!(
                        "LogicalWatermarkAssigner(rowtime=[{}], watermark=[{}])",
                        w.schema.fields[w.rowtime].name,
                        text(&w.watermark)
                    ),
                );
                prefix.push(true);
                w.input.ast_into(tree, prefix);
                prefix.pop();
            }
        }
    }
}
