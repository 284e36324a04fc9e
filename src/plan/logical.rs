//! Logical plan nodes: what a query computes, before it is laid out as a stream job.

use std::fmt::Write;
use std::sync::Arc;

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
        }
    }

    /// An indented tree, one node a line, for EXPLAIN.
    pub fn explain(&self) -> String {
        let mut out = String::new();
        self.explain_into(&mut out, 0);
        out
    }

    fn explain_into(&self, out: &mut String, depth: usize) {
        let indent = "   ".repeat(depth);
        let names = |schema: &Schema| {
            schema
                .fields
                .iter()
                .map(|f| f.name.clone())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            LogicalPlan::Scan(s) => {
                let _ = writeln!(
                    out,
                    "{indent}TableSourceScan(table=[[{}]], fields=[{}])",
                    s.table.name,
                    names(&s.schema)
                );
            }
            LogicalPlan::Values(v) => {
                let _ = writeln!(
                    out,
                    "{indent}Values(tuples=[{} row(s)], fields=[{}])",
                    v.rows.len(),
                    names(&v.schema)
                );
            }
            LogicalPlan::Calc(c) => {
                let exprs: Vec<String> = c
                    .exprs
                    .iter()
                    .zip(&c.schema.fields)
                    .map(|(e, f)| format!("{e} AS {}", f.name))
                    .collect();
                let _ = match &c.filter {
                    Some(p) => writeln!(
                        out,
                        "{indent}Calc(select=[{}], where=[{p}])",
                        exprs.join(", ")
                    ),
                    None => writeln!(out, "{indent}Calc(select=[{}])", exprs.join(", ")),
                };
                c.input.explain_into(out, depth + 1);
            }
            LogicalPlan::Union(u) => {
                let _ = writeln!(
                    out,
                    "{indent}Union(all=[true], fields=[{}])",
                    names(&u.schema)
                );
                for input in &u.inputs {
                    input.explain_into(out, depth + 1);
                }
            }
        }
    }
}
