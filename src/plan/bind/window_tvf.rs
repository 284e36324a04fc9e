//! Windowing table functions: `TABLE(TUMBLE | HOP | CUMULATE | SESSION (TABLE t, DESCRIPTOR(ts), …))`.

use super::*;

use sqlparser::ast::{self, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Spanned};
use sqlparser::tokenizer::Span;

use super::super::aggregate::{GroupWindow, GroupWindowKind};
use super::super::explain::calcite_type_name;
use super::super::expr::ScalarExpr;
use crate::sql::SqlError;
use crate::sql::parser::object_name_last;
use crate::types::value::Value;
use crate::types::{DataType, Field, Schema, TypeKind};

impl<'a> Binder<'a> {
    /// `TUMBLE(TABLE t, DESCRIPTOR(c), size [, offset])`, `HOP(…, slide, size [, offset])`,
    /// `CUMULATE(…, step, size [, offset])`, arguments by position or all by name: the input's
    /// columns plus `window_start`, `window_end` and `window_time`.
    pub(super) fn bind_window_table_function(
        &mut self,
        f: &ast::Function,
        span: Span,
    ) -> Result<LogicalPlan, SqlError> {
        let function: &'static str = match object_name_last(&f.name).to_uppercase().as_str() {
            "TUMBLE" => "TUMBLE",
            "HOP" => "HOP",
            "SESSION" => "SESSION",
            _ => "CUMULATE",
        };
        let (parameters, signature): (&[&str], &str) = match function {
            "TUMBLE" => (
                &["DATA", "TIMECOL", "SIZE", "OFFSET"],
                "TUMBLE(TABLE table_name, DESCRIPTOR(timecol), datetime interval[, datetime interval])",
            ),
            "HOP" => (
                &["DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"],
                "HOP(TABLE table_name, DESCRIPTOR(timecol), datetime interval, datetime interval[, datetime interval])",
            ),
            "SESSION" => (
                &["DATA", "TIMECOL", "GAP"],
                "SESSION(TABLE table_name [PARTITION BY (key, …)], DESCRIPTOR(timecol), datetime interval)",
            ),
            _ => (
                &["DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"],
                "CUMULATE(TABLE table_name, DESCRIPTOR(timecol), datetime interval, datetime interval[, datetime interval])",
            ),
        };
        // Every window but SESSION takes an optional offset last.
        let has_offset = parameters.last() == Some(&"OFFSET");
        let list: &[FunctionArg] = match &f.args {
            FunctionArguments::List(list) => &list.args,
            _ => &[],
        };
        let mut given: Vec<Option<&Expr>> = vec![None; parameters.len()];
        let named = list.iter().any(|a| !matches!(a, FunctionArg::Unnamed(_)));
        for (i, arg) in list.iter().enumerate() {
            let (slot, e) = match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) if !named => (Some(i), e),
                FunctionArg::Named {
                    name,
                    arg: FunctionArgExpr::Expr(e),
                    ..
                } => (
                    parameters
                        .iter()
                        .position(|p| p.eq_ignore_ascii_case(&name.value)),
                    e,
                ),
                other => {
                    return Err(error(
                        other.span(),
                        format!(
                            "the arguments of {function} are either all positional or all named"
                        ),
                    ));
                }
            };
            match slot {
                Some(slot) if slot < parameters.len() && given[slot].is_none() => {
                    given[slot] = Some(e)
                }
                _ => {
                    return Err(error(
                        arg.span(),
                        format!("Invalid arguments to {signature}"),
                    ));
                }
            }
        }
        let required = parameters.len() - usize::from(has_offset);
        if given[..required].iter().any(Option::is_none) {
            return Err(error(
                span,
                format!(
                    "Invalid number of arguments to function '{function}'. Was expecting {} arguments",
                    required
                ),
            ));
        }
        let mut partition_by: &[Expr] = &[];
        let table = match given[0] {
            Some(Expr::Prefixed { prefix, value })
                if prefix.value.eq_ignore_ascii_case("TABLE") =>
            {
                let mut value = value.as_ref();
                if let Expr::Prefixed {
                    prefix,
                    value: keyed,
                } = value
                    && prefix.value == "PARTITION BY"
                    && let Expr::Tuple(items) = keyed.as_ref()
                    && let [table, keys @ ..] = items.as_slice()
                {
                    if function != "SESSION" {
                        return Err(error(
                            prefix.span,
                            format!("{function} takes no PARTITION BY"),
                        ));
                    }
                    value = table;
                    partition_by = keys;
                }
                match value {
                    Expr::Identifier(ident) => ast::ObjectName::from(vec![ident.clone()]),
                    Expr::CompoundIdentifier(idents) => ast::ObjectName::from(idents.clone()),
                    other => return Err(error(other.span(), "expected a table name")),
                }
            }
            Some(other) => {
                return Err(error(
                    other.span(),
                    format!("the first argument of {function} must be TABLE name"),
                ));
            }
            None => unreachable!("checked above"),
        };
        let (_, input) = self.bind_relation_name(&table)?;
        let scope = scope_of(input.schema(), None);
        let mut partition = Vec::new();
        for key in partition_by {
            match self.bind_expr(key, &scope)? {
                ScalarExpr::Column { index, .. } => partition.push(index),
                _ => {
                    return Err(error(
                        key.span(),
                        "SESSION's PARTITION BY takes columns of its table",
                    ));
                }
            }
        }
        let descriptor = given[1].expect("checked above");
        let column = match descriptor {
            Expr::Function(d) if object_name_last(&d.name).eq_ignore_ascii_case("DESCRIPTOR") => {
                match &d.args {
                    FunctionArguments::List(l) => match l.args.as_slice() {
                        [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Identifier(c)))] => c,
                        _ => {
                            return Err(error(
                                descriptor.span(),
                                format!("{function} takes one column in DESCRIPTOR"),
                            ));
                        }
                    },
                    _ => {
                        return Err(error(
                            descriptor.span(),
                            format!("{function} takes one column in DESCRIPTOR"),
                        ));
                    }
                }
            }
            // Not a descriptor: Calcite resolves it as a column of no table.
            Expr::Identifier(c) => {
                return Err(error(
                    descriptor.span(),
                    format!("Column '{}' not found in any table", c.value),
                ));
            }
            other => {
                return Err(error(
                    other.span(),
                    format!("the time column of {function} must be given as DESCRIPTOR(column)"),
                ));
            }
        };
        let Some(time_column) = input.schema().index_of(&column.value) else {
            return Err(error(
                column.span,
                format!("Column '{}' not found in table", column.value),
            ));
        };
        let time_field = input.schema().fields[time_column].clone();
        if !matches!(
            time_field.data_type.kind,
            TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_)
        ) {
            return Err(error(
                span,
                format!(
                    "The window function {signature} requires the timecol to be TIMESTAMP or TIMESTAMP_LTZ, but is {}.",
                    calcite_type_name(&time_field.data_type.kind)
                ),
            ));
        }
        let Some(time_attribute) = time_field.time_attribute else {
            return Err(error(
                span,
                format!(
                    "The window function {signature} requires the timecol is a time attribute type, but is {}.",
                    time_field.data_type.with_nullable(true)
                ),
            ));
        };
        let mut millis = Vec::new();
        let mut intervals = Vec::new();
        for e in given[2..].iter().flatten() {
            let (ms, text, _) = self.interval_argument(e, &scope, function)?;
            millis.push(ms);
            intervals.push(text);
        }
        let offset = if has_offset && given[parameters.len() - 1].is_some() {
            millis[millis.len() - 1]
        } else {
            0
        };
        let kind = match (function, millis.as_slice()) {
            ("TUMBLE", &[size, ..]) => {
                if size <= 0 {
                    return Err(error(
                        span,
                        format!(
                            "TUMBLE table function based aggregate requires size to be positive, but got {size} ms."
                        ),
                    ));
                }
                GroupWindowKind::Tumble { size }
            }
            ("HOP", &[slide, size, ..]) => {
                if slide <= 0 || size <= 0 {
                    return Err(error(
                        span,
                        format!(
                            "HOP table function based aggregate requires slide and size to be positive, but got slide {slide} ms and size {size} ms."
                        ),
                    ));
                }
                GroupWindowKind::Hop { slide, size }
            }
            ("SESSION", &[gap]) => {
                if gap <= 0 {
                    return Err(error(
                        span,
                        format!(
                            "SESSION table function based aggregate requires gap to be positive, but got gap {gap} ms."
                        ),
                    ));
                }
                GroupWindowKind::Session { gap }
            }
            ("CUMULATE", &[step, size, ..]) => {
                if step <= 0 || size <= 0 {
                    return Err(error(
                        span,
                        format!(
                            "CUMULATE table function based aggregate requires maxSize and step to be positive, but got maxSize {size} ms and step {step} ms."
                        ),
                    ));
                }
                if size % step != 0 {
                    return Err(error(
                        span,
                        format!(
                            "CUMULATE table function based aggregate requires maxSize must be an integral multiple of step, but got maxSize {size} ms and step {step} ms."
                        ),
                    ));
                }
                GroupWindowKind::Cumulate { step, size }
            }
            _ => return Err(error(span, format!("invalid arguments to {function}"))),
        };
        let window = GroupWindow {
            kind,
            time_column,
            time_attribute,
            time_type: time_field.data_type.clone(),
            offset,
        };
        let mut fields = input.schema().fields.clone();
        fields.push(Field::new(
            "window_start",
            DataType::not_null(TypeKind::Timestamp(3)),
        ));
        fields.push(Field::new(
            "window_end",
            DataType::not_null(TypeKind::Timestamp(3)),
        ));
        let time_kind = match time_field.data_type.kind {
            TypeKind::TimestampLtz(_) => TypeKind::TimestampLtz(3),
            _ => TypeKind::Timestamp(3),
        };
        fields.push(Field {
            name: "window_time".into(),
            data_type: DataType::not_null(time_kind),
            time_attribute: Some(time_attribute),
        });
        Ok(LogicalPlan::WindowTableFunction(
            LogicalWindowTableFunction {
                input: Box::new(input),
                function,
                partition,
                window,
                column: column.value.clone(),
                intervals,
                schema: Schema::new(fields),
            },
        ))
    }

    /// An interval literal argument of a window function (a group window or a windowing
    /// TVF): its milliseconds, its text in the abstract syntax tree (`5000:INTERVAL SECOND`),
    /// and the bound literal.
    pub(super) fn interval_argument(
        &mut self,
        arg: &Expr,
        scope: &[ScopeColumn],
        function: &str,
    ) -> Result<(i64, String, ScalarExpr), SqlError> {
        let bound = self.bind_expr(arg, scope)?;
        match (&bound, arg) {
            (
                ScalarExpr::Literal {
                    value: Value::IntervalMillis(ms, qualifier),
                    ..
                },
                Expr::Interval(_),
            ) => {
                let text = format!("{ms}:{}", qualifier.sql());
                Ok((*ms, text, bound.clone()))
            }
            (
                ScalarExpr::Literal {
                    value: Value::IntervalMonths(..),
                    ..
                },
                _,
            ) => Err(error(
                arg.span(),
                "Window aggregate only support SECOND, MINUTE, HOUR, DAY as the time unit. MONTH and YEAR time unit are not supported yet.",
            )),
            _ => Err(error(
                arg.span(),
                format!("the size of a {function} window must be an interval literal"),
            )),
        }
    }
}
