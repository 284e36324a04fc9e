//! Queries as a whole: WITH, set operations (UNION), VALUES, ORDER BY / LIMIT / OFFSET, and the
//! output names of a bound query.

use super::*;

use sqlparser::ast::{self, Expr, Query, SetExpr, SetOperator, SetQuantifier, Spanned};
use sqlparser::tokenizer::Span;

use super::super::expr::ScalarExpr;
use crate::sql::SqlError;
use crate::types::coercion::common_type_of;
use crate::types::value::Value;
use crate::types::{DataType, Field, Schema};

impl<'a> Binder<'a> {
    pub fn bind_query(&mut self, query: &Query) -> Result<LogicalPlan, SqlError> {
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                let plan = self.bind_query(&cte.query)?;
                let plan = rename(
                    plan,
                    &cte.alias
                        .columns
                        .iter()
                        .map(|c| c.name.value.clone())
                        .collect::<Vec<_>>(),
                    cte.alias.name.span,
                )?;
                self.ctes.insert(cte.alias.name.value.clone(), plan);
            }
        }
        let plan = self.bind_set_expr(&query.body)?;
        if query.order_by.is_none() && query.limit_clause.is_none() {
            return Ok(plan);
        }
        self.bind_sort(plan, query)
    }

    /// `ORDER BY` (output columns, by name or position) and `LIMIT n [OFFSET m]` over a
    /// query's rows.
    pub(super) fn bind_sort(
        &mut self,
        mut plan: LogicalPlan,
        query: &Query,
    ) -> Result<LogicalPlan, SqlError> {
        let width = plan.schema().len();
        let mut order = Vec::new();
        if let Some(order_by) = &query.order_by {
            let ast::OrderByKind::Expressions(items) = &order_by.kind else {
                return Err(error(order_by.span(), "ORDER BY ALL is not supported"));
            };
            for item in items {
                let span = item.expr.span();
                let schema = plan.schema().clone();
                let column = match &item.expr {
                    Expr::Identifier(id) => {
                        let found: Vec<usize> = (0..width)
                            .filter(|&i| schema.fields[i].name == id.value)
                            .collect();
                        match found.as_slice() {
                            [i] => *i,
                            // A column of the SELECT's input it does not select: sorted on,
                            // then projected away (Calcite's plan of it).
                            [] => match hidden_sort_column(&mut plan, &id.value) {
                                Some(i) => i,
                                None => {
                                    return Err(error(
                                        span,
                                        format!("Column '{}' not found in any table", id.value),
                                    ));
                                }
                            },
                            _ => {
                                return Err(error(
                                    span,
                                    format!("Column '{}' is ambiguous", id.value),
                                ));
                            }
                        }
                    }
                    Expr::Value(v) => match &v.value {
                        ast::Value::Number(n, _) => match n.parse::<usize>() {
                            Ok(i) if i >= 1 && i <= width => i - 1,
                            _ => {
                                return Err(error(
                                    span,
                                    format!(
                                        "Ordinal out of range: {n} (the query has {width} columns)"
                                    ),
                                ));
                            }
                        },
                        _ => {
                            return Err(error(span, "ORDER BY needs a column"));
                        }
                    },
                    _ => {
                        return Err(error(
                            span,
                            "ORDER BY an expression is not supported yet: name an output column",
                        ));
                    }
                };
                let descending = matches!(item.options.sort, Some(ast::OrderBySort::Desc));
                order.push(OrderKey {
                    column,
                    descending,
                    // Flink's default: NULLs first ascending, last descending.
                    nulls_first: item.options.nulls_first.unwrap_or(!descending),
                });
            }
        }
        let count = |e: &Expr, what: &str| -> Result<u64, SqlError> {
            match e {
                Expr::Value(v) => match &v.value {
                    ast::Value::Number(n, _) => n.parse::<u64>().map_err(|_| {
                        error(e.span(), format!("{what} must be a non-negative integer"))
                    }),
                    _ => Err(error(
                        e.span(),
                        format!("{what} must be a non-negative integer"),
                    )),
                },
                _ => Err(error(
                    e.span(),
                    format!("{what} must be a non-negative integer"),
                )),
            }
        };
        let (mut offset, mut fetch) = (0, None);
        match &query.limit_clause {
            Some(ast::LimitClause::LimitOffset {
                limit,
                offset: o,
                limit_by,
            }) => {
                if let Some(first) = limit_by.first() {
                    return Err(error(first.span(), "LIMIT BY is not supported"));
                }
                if let Some(limit) = limit {
                    fetch = Some(count(limit, "LIMIT")?);
                }
                if let Some(o) = o {
                    offset = count(&o.value, "OFFSET")?;
                }
            }
            Some(ast::LimitClause::OffsetCommaLimit { offset: o, limit }) => {
                offset = count(o, "OFFSET")?;
                fetch = Some(count(limit, "LIMIT")?);
            }
            None => {}
        }
        let mut schema = plan.schema().clone();
        for f in &mut schema.fields {
            // A sorted query's rows carry no time attribute on (Flink materializes it).
            if fetch.is_some() {
                f.time_attribute = None;
            }
        }
        let sorted = LogicalPlan::Sort(LogicalSort {
            input: Box::new(plan),
            order,
            offset,
            fetch,
            schema: schema.clone(),
        });
        if schema.len() == width {
            return Ok(sorted);
        }
        // The columns sorted on but not selected go.
        Ok(LogicalPlan::Calc(LogicalCalc {
            exprs: column_refs(schema.fields[..width].iter().map(|f| &f.data_type)),
            schema: Schema::new(schema.fields[..width].to_vec()),
            input: Box::new(sorted),
            filter: None,
        }))
    }

    pub(super) fn bind_set_expr(&mut self, body: &SetExpr) -> Result<LogicalPlan, SqlError> {
        match body {
            SetExpr::Select(select) => self.bind_select(select),
            SetExpr::Query(query) => self.bind_query(query),
            SetExpr::Values(values) => self.bind_values(values),
            SetExpr::SetOperation {
                op,
                set_quantifier,
                left,
                right,
            } => {
                if *op != SetOperator::Union || *set_quantifier != SetQuantifier::All {
                    return Err(error(
                        body.span(),
                        format!("{op} {set_quantifier} is not supported yet; UNION ALL is"),
                    ));
                }
                let left = self.bind_set_expr(left)?;
                let right = self.bind_set_expr(right)?;
                union(vec![left, right], body.span())
            }
            other => Err(error(other.span(), "this kind of query is not supported")),
        }
    }

    pub(super) fn bind_values(&mut self, values: &ast::Values) -> Result<LogicalPlan, SqlError> {
        let mut rows = Vec::new();
        for row in &values.rows {
            let exprs = row
                .iter()
                .map(|e| self.bind_expr(e, &[]))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(first) = rows.first().map(|r: &Vec<ScalarExpr>| r.len())
                && first != exprs.len()
            {
                return Err(error(
                    values.span(),
                    "all VALUES rows must have the same number of columns",
                ));
            }
            rows.push(exprs);
        }
        let width = rows.first().map_or(0, Vec::len);
        let mut fields = Vec::new();
        for col in 0..width {
            let types: Vec<DataType> = rows.iter().map(|r| r[col].data_type().clone()).collect();
            let ty = common_type_of(&types).ok_or_else(|| {
                error(
                    values.span(),
                    format!("VALUES column {} has no common type", col + 1),
                )
            })?;
            fields.push(Field::new(format!("EXPR${col}"), ty));
        }
        for row in &mut rows {
            for (col, e) in row.iter_mut().enumerate() {
                *e = coerce(e.clone(), &fields[col].data_type);
            }
        }
        Ok(LogicalPlan::Values(LogicalValues {
            rows,
            schema: Schema::new(fields),
        }))
    }
}

/// A query's result with duplicate column names made unique as Calcite does (`a`, `a0`, …).
pub fn output_names(plan: LogicalPlan) -> LogicalPlan {
    let mut fields = plan.schema().fields.clone();
    uniquify(&mut fields);
    if fields
        .iter()
        .zip(&plan.schema().fields)
        .all(|(a, b)| a.name == b.name)
    {
        return plan;
    }
    // A Calc on top is renamed in place (Calcite's project names its columns uniquely).
    if let LogicalPlan::Calc(mut calc) = plan {
        calc.schema.fields = fields;
        return LogicalPlan::Calc(calc);
    }
    let names: Vec<String> = fields.into_iter().map(|f| f.name).collect();
    rename(plan, &names, Span::empty()).expect("as many names as columns")
}

/// The first name that two columns share.
pub fn repeated_name(schema: &Schema) -> Option<&str> {
    let fields = &schema.fields;
    (1..fields.len())
        .find(|&i| fields[..i].iter().any(|f| f.name == fields[i].name))
        .map(|i| fields[i].name.as_str())
}

pub(super) fn uniquify(fields: &mut [Field]) {
    for i in 1..fields.len() {
        if fields[..i].iter().any(|f| f.name == fields[i].name) {
            let base = fields[i].name.clone();
            let mut n = 0;
            while fields.iter().any(|f| f.name == format!("{base}{n}")) {
                n += 1;
            }
            fields[i].name = format!("{base}{n}");
        }
    }
}

/// An ORDER BY column a plain SELECT (a Calc over its FROM) does not select: appended to
/// the Calc, its index returned; `None` when the query is not one or has no such column.
pub(super) fn hidden_sort_column(plan: &mut LogicalPlan, name: &str) -> Option<usize> {
    let LogicalPlan::Calc(calc) = plan else {
        return None;
    };
    if matches!(
        calc.input.as_ref(),
        LogicalPlan::Aggregate(_) | LogicalPlan::Over(_) | LogicalPlan::OverAggregate(_)
    ) {
        return None;
    }
    let index = calc.input.schema().index_of(name)?;
    let field = calc.input.schema().fields[index].clone();
    calc.exprs.push(ScalarExpr::Column {
        index,
        data_type: field.data_type.clone(),
    });
    calc.schema.fields.push(field);
    Some(calc.exprs.len() - 1)
}

/// Renames a plan's output columns (view column lists, `AS t(a, b)` aliases).
pub(super) fn rename(
    plan: LogicalPlan,
    names: &[String],
    span: Span,
) -> Result<LogicalPlan, SqlError> {
    if names.is_empty() {
        return Ok(plan);
    }
    let schema = plan.schema().renamed(names).map_err(|m| error(span, m))?;
    let exprs = schema
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| ScalarExpr::Column {
            index: i,
            data_type: f.data_type.clone(),
        })
        .collect();
    Ok(LogicalPlan::Calc(LogicalCalc {
        input: Box::new(plan),
        filter: None,
        exprs,
        schema,
    }))
}

/// The query's columns moved to the sink positions `columns` names, NULL in the others.
pub(super) fn place_columns(
    plan: LogicalPlan,
    sink: &Schema,
    columns: &[String],
) -> Result<LogicalPlan, String> {
    let mut positions: Vec<usize> = Vec::with_capacity(columns.len());
    for name in columns {
        let at = sink
            .fields
            .iter()
            .position(|f| f.name == *name)
            .ok_or_else(|| format!("Unknown target column '{name}'"))?;
        if positions.contains(&at) {
            return Err(format!("Target column '{name}' is assigned more than once"));
        }
        positions.push(at);
    }
    if plan.schema().len() != columns.len() {
        return Err("Number of columns must match number of query columns".into());
    }
    let mut exprs = Vec::with_capacity(sink.len());
    let mut fields = Vec::with_capacity(sink.len());
    for (j, target) in sink.fields.iter().enumerate() {
        let expr = match positions.iter().position(|&p| p == j) {
            Some(k) => ScalarExpr::Column {
                index: k,
                data_type: plan.schema().fields[k].data_type.clone(),
            },
            None if !target.data_type.nullable => {
                return Err(format!(
                    "Column '{}' has no default value and does not allow NULLs",
                    target.name
                ));
            }
            None => ScalarExpr::Literal {
                data_type: target.data_type.clone(),
                value: Value::Null,
            },
        };
        fields.push(Field::new(&target.name, expr.data_type().clone()));
        exprs.push(expr);
    }
    Ok(LogicalPlan::Calc(LogicalCalc {
        input: Box::new(plan),
        filter: None,
        exprs,
        schema: Schema::new(fields),
    }))
}

/// A Calc over `plan` casting each column to the kind of the matching field of `targets`
/// (nullability kept from the input) and naming it after it.
pub(super) fn cast_columns(plan: LogicalPlan, targets: &[Field]) -> LogicalPlan {
    let exprs: Vec<ScalarExpr> = plan
        .schema()
        .fields
        .iter()
        .enumerate()
        .zip(targets)
        .map(|((i, f), target)| {
            coerce(
                ScalarExpr::Column {
                    index: i,
                    data_type: f.data_type.clone(),
                },
                &target.data_type,
            )
        })
        .collect();
    let fields = targets
        .iter()
        .zip(&exprs)
        .map(|(t, e)| Field {
            data_type: e.data_type().clone(),
            ..t.clone()
        })
        .collect();
    LogicalPlan::Calc(LogicalCalc {
        input: Box::new(plan),
        filter: None,
        exprs,
        schema: Schema::new(fields),
    })
}

pub(super) fn union(inputs: Vec<LogicalPlan>, span: Span) -> Result<LogicalPlan, SqlError> {
    let width = inputs[0].schema().len();
    if inputs.iter().any(|i| i.schema().len() != width) {
        return Err(error(
            span,
            "UNION ALL inputs must have the same number of columns",
        ));
    }
    let mut fields = inputs[0].schema().fields.clone();
    for (col, field) in fields.iter_mut().enumerate() {
        let types: Vec<DataType> = inputs
            .iter()
            .map(|i| i.schema().fields[col].data_type.clone())
            .collect();
        field.data_type = common_type_of(&types).ok_or_else(|| {
            error(
                span,
                format!("UNION ALL column {} has no common type", col + 1),
            )
        })?;
        if inputs
            .iter()
            .any(|i| i.schema().fields[col].time_attribute != field.time_attribute)
        {
            field.time_attribute = None;
        }
    }
    let inputs = inputs
        .into_iter()
        .map(|input| {
            if input
                .schema()
                .fields
                .iter()
                .zip(&fields)
                .all(|(a, b)| a.data_type.kind == b.data_type.kind)
            {
                return input;
            }
            cast_columns(input, &fields)
        })
        .collect();
    Ok(LogicalPlan::Union(LogicalUnion {
        inputs,
        schema: Schema::new(fields),
    }))
}
