//! `UNNEST`: `FROM t CROSS JOIN UNNEST(t.tags) [WITH ORDINALITY] AS u(tag [, pos])`, `FROM t,
//! UNNEST(…)`, `LEFT JOIN UNNEST(…) ON TRUE`, and `FROM UNNEST(ARRAY[…])` alone — the
//! collection bound against the columns before it (a correlation, as Calcite's). And a
//! registered table function, `FROM t, LATERAL TABLE(f(t.s)) [AS] u(a, b)` or `[LEFT] JOIN
//! LATERAL TABLE(…) ON TRUE`, correlated the same way.

use sqlparser::ast::{self, Expr, FunctionArg, FunctionArgExpr, Spanned, TableFactor};
use sqlparser::tokenizer::Span;

use super::*;
use crate::plan::logical::Generator;
use crate::sql::parser::object_name_last;

/// An UNNEST in a FROM clause, however the parser gave it.
pub(super) struct UnnestItem<'f> {
    collections: Vec<&'f Expr>,
    with_ordinality: bool,
    alias: Option<&'f ast::TableAlias>,
    span: Span,
}

impl<'f> UnnestItem<'f> {
    /// `factor` if it is an UNNEST.
    pub(super) fn of(factor: &'f TableFactor) -> Option<Self> {
        match factor {
            TableFactor::UNNEST {
                alias,
                array_exprs,
                with_offset: false,
                with_ordinality,
                ..
            } => Some(UnnestItem {
                collections: array_exprs.iter().collect(),
                with_ordinality: *with_ordinality,
                alias: alias.as_ref(),
                span: factor.span(),
            }),
            TableFactor::Table {
                name,
                alias,
                args: Some(args),
                with_ordinality,
                ..
            } if object_name_last(name).eq_ignore_ascii_case("UNNEST") => {
                let collections = args
                    .args
                    .iter()
                    .map(|a| match a {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(UnnestItem {
                    collections,
                    with_ordinality: *with_ordinality,
                    alias: alias.as_ref(),
                    span: factor.span(),
                })
            }
            _ => None,
        }
    }
}

/// The columns a correlate adds, renamed by its alias's column list (`AS u(a, b)`) when it
/// has one, which must name them all (Calcite's message).
fn renamed_by_alias_list(columns: &mut [Field], alias: &ast::TableAlias) -> Result<(), SqlError> {
    if alias.columns.is_empty() {
        return Ok(());
    }
    if alias.columns.len() != columns.len() {
        return Err(error(
            alias.name.span,
            format!(
                "List of column aliases must have same degree as table; table has {} columns {}, whereas alias list has {} columns",
                columns.len(),
                columns
                    .iter()
                    .map(|f| format!("('{}')", f.name))
                    .collect::<Vec<_>>()
                    .join(", "),
                alias.columns.len()
            ),
        ));
    }
    for (field, name) in columns.iter_mut().zip(&alias.columns) {
        field.name = name.name.value.clone();
    }
    Ok(())
}

/// A `LATERAL TABLE(f(…))` in a FROM clause.
pub(super) struct LateralTable<'f> {
    call: &'f ast::Function,
    alias: Option<&'f ast::TableAlias>,
    span: Span,
}

impl<'f> LateralTable<'f> {
    /// `factor` if it is a LATERAL TABLE.
    pub(super) fn of(factor: &'f TableFactor) -> Option<Self> {
        let TableFactor::Function {
            lateral: true,
            name,
            args,
            alias,
            ..
        } = factor
        else {
            return None;
        };
        if !object_name_last(name).eq_ignore_ascii_case("TABLE") {
            return None;
        }
        match args.as_slice() {
            [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Function(call)))] => {
                Some(LateralTable {
                    call,
                    alias: alias.as_ref(),
                    span: factor.span(),
                })
            }
            _ => None,
        }
    }
}

impl<'a> Binder<'a> {
    /// `left` joined (`join_type`: inner or left) with the rows a registered table function
    /// makes of each of its rows.
    pub(super) fn bind_lateral_table(
        &mut self,
        left: Option<(LogicalPlan, Vec<ScopeColumn>)>,
        item: &LateralTable<'_>,
        join_type: JoinType,
    ) -> Result<(LogicalPlan, Vec<ScopeColumn>), SqlError> {
        let Some((input, scope)) = left else {
            return Err(error(
                item.span,
                "LATERAL TABLE reads the tables before it in its FROM clause: there are none",
            ));
        };
        let name = object_name_last(&item.call.name);
        let mut args = Vec::new();
        if let ast::FunctionArguments::List(list) = &item.call.args {
            for arg in &list.args {
                let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = arg else {
                    return Err(error(
                        item.span,
                        "a table function takes positional arguments",
                    ));
                };
                args.push(self.bind_expr(e, &scope)?);
            }
        }
        let types: Vec<DataType> = args.iter().map(|a| a.data_type().clone()).collect();
        let shown = || {
            types
                .iter()
                .map(|t| format!("<{}>", crate::plan::explain::calcite_signature_type(t)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(function) = self.catalog.table_function(&name).cloned() else {
            return Err(error(
                item.span,
                format!("No match found for function signature {name}({})", shown()),
            ));
        };
        let signature = function.function.signature(&types).map_err(|m| {
            error(
                item.span,
                format!(
                    "Cannot apply '{name}' to arguments of type '{name}({})': {m}",
                    shown()
                ),
            )
        })?;
        if signature.args.len() != args.len() {
            return Err(error(
                item.span,
                format!(
                    "table function {name} typed {} arguments for a call with {}",
                    signature.args.len(),
                    args.len()
                ),
            ));
        }
        let args: Vec<ScalarExpr> = args
            .into_iter()
            .zip(&signature.args)
            .map(|(a, t)| super::aggregate::coerce(a, t))
            .collect();
        let mut columns = signature.columns;
        if join_type == JoinType::Left {
            for c in &mut columns {
                c.data_type.nullable = true;
            }
        }
        if let Some(alias) = item.alias {
            renamed_by_alias_list(&mut columns, alias)?;
        }
        let correlation = self.next_correlation();
        let qualifier = item.alias.map(|a| a.name.value.clone());
        let mut out_scope = scope;
        out_scope.extend(columns.iter().map(|f| ScopeColumn {
            qualifier: qualifier.clone(),
            field: f.clone(),
        }));
        let mut fields = input.schema().fields.clone();
        fields.extend(columns);
        let plan = LogicalPlan::Unnest(LogicalUnnest {
            input: Box::new(input),
            generator: Generator::Function { function, args },
            with_ordinality: false,
            join_type,
            correlation,
            schema: Schema::new(fields),
        });
        Ok((plan, out_scope))
    }

    /// `left` joined (`join_type`: inner or left) with the UNNEST of a collection computed
    /// from its rows; `None` for `left`: an UNNEST alone in its FROM clause.
    pub(super) fn bind_unnest(
        &mut self,
        left: Option<(LogicalPlan, Vec<ScopeColumn>)>,
        item: &UnnestItem<'_>,
        join_type: JoinType,
    ) -> Result<(LogicalPlan, Vec<ScopeColumn>), SqlError> {
        // Calcite draws a correlation id only when the UNNEST reads a table before it.
        let correlation = match left {
            Some(_) => self.next_correlation(),
            None => 0,
        };
        let (input, scope) = match left {
            Some(left) => left,
            None => scoped(
                LogicalPlan::Values(LogicalValues {
                    rows: vec![vec![]],
                    schema: Schema::new(vec![]),
                }),
                None,
            ),
        };
        let [collection] = item.collections[..] else {
            return Err(error(
                item.span,
                "UNNEST of several collections at once is not supported yet",
            ));
        };
        let bound = self.bind_expr(collection, &scope)?;
        let Some(mut elements) = LogicalUnnest::element_fields(
            bound.data_type(),
            item.with_ordinality,
            join_type == JoinType::Left,
        ) else {
            return Err(error(
                item.span,
                format!(
                    "Cannot apply 'UNNEST' to arguments of type 'UNNEST(<{}>)'. Supported form(s): 'UNNEST(<MULTISET>)'\n'UNNEST(<ARRAY>)'\n'UNNEST(<MAP>)'",
                    crate::plan::explain::calcite_type_name(&bound.data_type().kind)
                ),
            ));
        };
        // Calcite's names of the query's columns: an element is EXPR$0, a map's KEY and VALUE.
        let defaults: Vec<String> = match &bound.data_type().kind {
            TypeKind::Map(..) => vec!["KEY".into(), "VALUE".into()],
            TypeKind::Array(e) if matches!(e.kind, TypeKind::Row(_)) => {
                elements.iter().map(|f| f.name.clone()).collect()
            }
            _ => vec!["EXPR$0".into()],
        };
        for (field, name) in elements.iter_mut().zip(defaults) {
            field.name = name;
        }
        if let Some(alias) = item.alias {
            renamed_by_alias_list(&mut elements, alias)?;
        }
        let qualifier = item.alias.map(|a| a.name.value.clone());
        let mut out_scope = scope;
        out_scope.extend(elements.iter().map(|f| ScopeColumn {
            qualifier: qualifier.clone(),
            field: f.clone(),
        }));
        let mut fields = input.schema().fields.clone();
        fields.extend(elements);
        let plan = LogicalPlan::Unnest(LogicalUnnest {
            input: Box::new(input),
            generator: Generator::Unnest(bound),
            with_ordinality: item.with_ordinality,
            join_type,
            correlation,
            schema: Schema::new(fields),
        });
        Ok((plan, out_scope))
    }
}
