//! `Calc`: a projection and an optional filter, evaluated a column at a time.

use super::StreamPlan;
use crate::plan::explain::{Spelling, calcite_type_name, expr_text};
use crate::plan::expr::ScalarExpr;
use crate::types::{Schema, TimeAttribute, TypeKind};

#[derive(Debug, Clone)]
pub struct StreamCalc {
    pub input: Box<StreamPlan>,
    pub filter: Option<ScalarExpr>,
    pub exprs: Vec<ScalarExpr>,
    pub schema: Schema,
}

impl StreamCalc {
    /// A Calc that passes its input through unchanged (renaming at most), which Flink's
    /// plans leave out: a query's result is named apart from its plan.
    pub fn is_identity(&self) -> bool {
        let input = self.input.schema();
        self.filter.is_none()
            && self.exprs.len() == input.len()
            && self
                .exprs
                .iter()
                .enumerate()
                .all(|(i, e)| matches!(e, ScalarExpr::Column { index, .. } if *index == i))
            && self
                .schema
                .fields
                .iter()
                .zip(&input.fields)
                .all(|(a, b)| a.data_type == b.data_type && a.time_attribute == b.time_attribute)
    }

    /// The conjuncts of the filter, which a filesystem scan right below is offered (Flink's
    /// filter push-down: the source takes them all and keeps them all for the Calc, so they
    /// show in the scan's digest and change nothing else).
    pub fn offered_filter(&self) -> Option<String> {
        let filter = self.filter.as_ref()?;
        let StreamPlan::TableSourceScan(scan) = self.input.as_ref() else {
            return None;
        };
        if !scan.can_project() {
            return None;
        }
        let names: Vec<String> = scan.schema.fields.iter().map(|f| f.name.clone()).collect();
        Some(scan_filter_text(filter, &names))
    }

    pub fn explain(&self, spelling: Spelling) -> String {
        let fields = &self.input.schema().fields;
        let names: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
        // A time attribute computed on is materialized into a plain timestamp first, which
        // Flink's plan shows as a cast (rowtime) or PROCTIME_MATERIALIZE (proctime).
        let computed: Vec<String> = fields
            .iter()
            .map(|f| match f.time_attribute {
                Some(TimeAttribute::Rowtime) => format!(
                    "CAST({} AS {})",
                    f.name,
                    calcite_type_name(&f.data_type.kind)
                ),
                Some(TimeAttribute::Proctime) => format!("PROCTIME_MATERIALIZE({})", f.name),
                None => f.name.clone(),
            })
            .collect();
        let rank_literal = matches!(self.input.as_ref(), StreamPlan::WindowDeduplicate(_));
        let select: Vec<String> = self
            .exprs
            .iter()
            .zip(&self.schema.fields)
            .map(|(e, f)| match e {
                // A time attribute cast to its own type is materialized (before a join).
                ScalarExpr::Cast {
                    expr, data_type, ..
                } if matches!(expr.as_ref(), ScalarExpr::Column { index, .. }
                        if fields[*index].time_attribute.is_some()
                            && fields[*index].data_type.kind == data_type.kind) =>
                {
                    let ScalarExpr::Column { index, .. } = expr.as_ref() else {
                        unreachable!("checked by the guard")
                    };
                    format!("{} AS {}", computed[*index], f.name)
                }
                ScalarExpr::Column { index, .. } if names[*index] == f.name => f.name.clone(),
                ScalarExpr::Column { index, .. } => format!("{} AS {}", names[*index], f.name),
                // Over a window deduplication the rank is the literal 1, which Flink's plan
                // names after the OVER call.
                ScalarExpr::Literal { data_type, .. }
                    if rank_literal && data_type.kind == TypeKind::BigInt =>
                {
                    format!("{} AS w0$o0", expr_text(e, &computed, spelling))
                }
                _ => format!("{} AS {}", expr_text(e, &computed, spelling), f.name),
            })
            .collect();
        match &self.filter {
            Some(filter) => format!(
                "Calc(select=[{}], where=[{}])",
                select.join(", "),
                expr_text(filter, &computed, spelling)
            ),
            None => format!("Calc(select=[{}])", select.join(", ")),
        }
    }
}

/// A filter as a scan's digest shows it when pushed into the source (`and(…)` for a
/// conjunction, as Flink's `filter=[…]` writes it).
pub fn scan_filter_text(filter: &ScalarExpr, names: &[String]) -> String {
    let text = expr_text(filter, names, Spelling::Physical);
    let conjunct = matches!(filter, ScalarExpr::Call { function, .. } if function.name == "AND");
    if conjunct {
        format!("and{}", &text["AND".len()..])
    } else {
        text
    }
}
