//! Scalar expressions: columns, operators, CASE, CAST, function calls, with Flink's
//! implicit coercions and its errors.

use super::*;

use sqlparser::ast::{
    self, BinaryOperator, CastKind, CeilFloorKind, Expr, FunctionArg, FunctionArgExpr,
    FunctionArguments, Spanned, TrimWhereField, UnaryOperator,
};
use sqlparser::tokenizer::Span;

use super::super::expr::{STACK_RED_ZONE, STACK_SEGMENT, ScalarExpr};
use crate::function::{self, cast::can_cast, temporal};
use crate::sql::SqlError;
use crate::sql::parser::object_name_last;
use crate::sql::unparse::interval_qualifier;
use crate::types::coercion::common_type_of;
use crate::types::value::Value;
use crate::types::{DataType, MAX_LENGTH, TypeKind};

impl<'a> Binder<'a> {
    /// Binds an expression. The recursion follows the expression's nesting, which has no
    /// bound in the text, so the stack grows on the heap as needed (`stacker`); a bound
    /// expression deeper than [`MAX_EXPR_DEPTH`] is refused, as evaluating and printing it
    /// would recurse as deep again.
    pub(super) fn bind_expr(
        &mut self,
        expr: &Expr,
        scope: &[ScopeColumn],
    ) -> Result<ScalarExpr, SqlError> {
        self.nesting += 1;
        let bound = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            self.bind_expr_nested(expr, scope)
        });
        self.nesting -= 1;
        let bound = bound?;
        if self.nesting == 0 {
            let depth = bound.depth();
            if depth > MAX_EXPR_DEPTH {
                return Err(error(
                    expr.span(),
                    format!(
                        "expression is nested too deeply: {depth} levels, at most {MAX_EXPR_DEPTH} are supported"
                    ),
                ));
            }
        }
        Ok(bound)
    }

    pub(super) fn bind_expr_nested(
        &mut self,
        expr: &Expr,
        scope: &[ScopeColumn],
    ) -> Result<ScalarExpr, SqlError> {
        // Before `span()`, which recurses through the whole chain.
        if let Expr::BinaryOp { .. } = expr {
            return self.bind_operator_chain(expr, scope);
        }
        let span = expr.span();
        match expr {
            Expr::Identifier(ident) => {
                let column = resolve_column(scope, None, &ident.value, span)?;
                if let (Some(agg), ScalarExpr::Column { index, .. }) =
                    (&mut self.aggregation, &column)
                    && agg.inside.is_none()
                {
                    agg.column_spans.push((*index, span));
                }
                Ok(column)
            }
            Expr::CompoundIdentifier(parts) => {
                let names: Vec<&str> = parts.iter().map(|p| p.value.as_str()).collect();
                // The readings, in order: `t.c.f…` (a qualified column, then fields),
                // `c.f…` (a column, then fields), then `db.t.c…` and `cat.db.t.c…` (prefixes
                // before the table).
                let mut first_error = None;
                for skip in 0..names.len().saturating_sub(1) {
                    let (q, c, rest) = (names[skip], names[skip + 1], &names[skip + 2..]);
                    match resolve_column(scope, Some(q), c, span) {
                        Ok(column) => {
                            if let (Some(agg), ScalarExpr::Column { index, .. }) =
                                (&mut self.aggregation, &column)
                                && agg.inside.is_none()
                            {
                                agg.column_spans.push((*index, span));
                            }
                            return rest
                                .iter()
                                .try_fold(column, |value, name| field_access(value, name, span));
                        }
                        Err(e) => {
                            first_error.get_or_insert(e);
                        }
                    }
                    if skip == 0
                        && let Ok(column) = resolve_column(scope, None, q, span)
                    {
                        return names[1..]
                            .iter()
                            .try_fold(column, |value, name| field_access(value, name, span));
                    }
                }
                Err(first_error.unwrap_or_else(|| error(span, "invalid column reference")))
            }
            Expr::Value(v) => literal(&v.value, span),
            Expr::TypedString(ts) => {
                let text = match &ts.value.value {
                    ast::Value::SingleQuotedString(s) => s.clone(),
                    other => other.to_string(),
                };
                typed_literal(&ts.data_type, &text, span)
            }
            Expr::Interval(interval) => interval_literal(interval, span),
            Expr::Nested(inner) => self.bind_expr(inner, scope),
            // A minus written before a number is part of the literal, as in Calcite:
            // `-2147483648` is an INT, `-9223372036854775809` out of range.
            Expr::UnaryOp {
                op: UnaryOperator::Minus,
                expr: inner,
            } if unparenthesized_number(inner).is_some() => {
                let text = unparenthesized_number(inner).unwrap_or_default();
                number_literal(&format!("-{text}"), span)
            }
            Expr::UnaryOp { op, expr: inner } => {
                let arg = self.bind_expr(inner, scope)?;
                match op {
                    UnaryOperator::Not => self.call("NOT", vec![arg], span),
                    UnaryOperator::Plus => Ok(arg),
                    UnaryOperator::Minus => match arg {
                        ScalarExpr::Literal {
                            value: Value::Int(v),
                            data_type,
                        } => Ok(ScalarExpr::Literal {
                            value: Value::Int(v.wrapping_neg()),
                            data_type,
                        }),
                        ScalarExpr::Literal {
                            value: Value::Decimal(v),
                            data_type,
                        } => Ok(ScalarExpr::Literal {
                            value: Value::Decimal(-v),
                            data_type,
                        }),
                        ScalarExpr::Literal {
                            value: Value::Float(v),
                            data_type,
                        } => Ok(ScalarExpr::Literal {
                            // Flink's parser reads `-0.0e0` as one decimal literal, whose
                            // zero has no sign; a negated expression keeps Java's -0.0.
                            value: Value::Float(if v == 0.0 && matches!(**inner, Expr::Value(_)) {
                                0.0
                            } else {
                                -v
                            }),
                            data_type,
                        }),
                        other => self.call("NEGATE", vec![other], span),
                    },
                    other => Err(error(span, format!("operator {other} is not supported"))),
                }
            }
            Expr::IsNull(e) => self.unary_call("IS NULL", e, scope, span),
            Expr::IsNotNull(e) => self.unary_call("IS NOT NULL", e, scope, span),
            Expr::IsTrue(e) => self.unary_call("IS TRUE", e, scope, span),
            Expr::IsNotTrue(e) => self.unary_call("IS NOT TRUE", e, scope, span),
            Expr::IsFalse(e) => self.unary_call("IS FALSE", e, scope, span),
            Expr::IsNotFalse(e) => self.unary_call("IS NOT FALSE", e, scope, span),
            Expr::IsUnknown(e) => self.unary_call("IS NULL", e, scope, span),
            Expr::IsNotUnknown(e) => self.unary_call("IS NOT NULL", e, scope, span),
            Expr::IsDistinctFrom(a, b) => {
                let args = vec![self.bind_expr(a, scope)?, self.bind_expr(b, scope)?];
                self.call("IS DISTINCT FROM", args, span)
            }
            Expr::IsNotDistinctFrom(a, b) => {
                let args = vec![self.bind_expr(a, scope)?, self.bind_expr(b, scope)?];
                self.call("IS NOT DISTINCT FROM", args, span)
            }
            Expr::Between {
                expr: e,
                negated,
                low,
                high,
            } => {
                let value = self.bind_expr(e, scope)?;
                let low = self.bind_expr(low, scope)?;
                let high = self.bind_expr(high, scope)?;
                let ge = self.call(">=", vec![value.clone(), low], span)?;
                let le = self.call("<=", vec![value, high], span)?;
                let both = self.call("AND", vec![ge, le], span)?;
                self.negate_if(*negated, both, span)
            }
            Expr::In {
                expr: e,
                target,
                negated,
                ..
            } => {
                let ast::InTarget::List(list) = target else {
                    return Err(error(span, "IN with a subquery is not supported yet"));
                };
                let value = self.bind_expr(e, scope)?;
                let items = list
                    .iter()
                    .map(|item| self.bind_expr(item, scope))
                    .collect::<Result<Vec<_>, _>>()?;
                let test = self.in_list(value, items, span)?;
                self.negate_if(*negated, test, span)
            }
            Expr::Like {
                negated,
                expr: e,
                pattern,
                escape_char,
                any,
            } => {
                if *any {
                    return Err(error(span, "LIKE ANY is not supported"));
                }
                let like =
                    self.pattern_match("LIKE", e, pattern, escape_char.as_deref(), scope, span)?;
                self.negate_if(*negated, like, span)
            }
            Expr::SimilarTo {
                negated,
                expr: e,
                pattern,
                escape_char,
            } => {
                let similar = self.pattern_match(
                    "SIMILAR TO",
                    e,
                    pattern,
                    escape_char.as_deref(),
                    scope,
                    span,
                )?;
                self.negate_if(*negated, similar, span)
            }
            Expr::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let operand = operand
                    .as_ref()
                    .map(|o| self.bind_expr(o, scope))
                    .transpose()?;
                let mut branches = Vec::new();
                for when in conditions {
                    let cond = self.bind_expr(&when.condition, scope)?;
                    let cond = match &operand {
                        Some(op) => {
                            self.call("=", vec![op.clone(), cond], when.condition.span())?
                        }
                        None => cond,
                    };
                    if !matches!(cond.data_type().kind, TypeKind::Boolean | TypeKind::Null) {
                        return Err(error(
                            when.condition.span(),
                            "CASE WHEN needs a BOOLEAN condition",
                        ));
                    }
                    branches.push((cond, self.bind_expr(&when.result, scope)?));
                }
                let otherwise = else_result
                    .as_ref()
                    .map(|e| self.bind_expr(e, scope))
                    .transpose()?;
                let untyped = |e: &ScalarExpr| e.data_type().kind == TypeKind::Null;
                if branches.iter().all(|(_, r)| untyped(r))
                    && otherwise.as_ref().is_none_or(untyped)
                {
                    return Err(error(
                        span,
                        "ELSE clause or at least one THEN clause must be non-NULL",
                    ));
                }
                case(branches, otherwise, span, true)
            }
            Expr::Cast {
                kind,
                expr: e,
                data_type,
                ..
            } => {
                let value = self.bind_expr(e, scope)?;
                let target = flink_type(data_type, span)?;
                // Flink plans a cast to TIME(p) for p > 3 as one to TIME(3).
                let target = millisecond_time(&target);
                let try_cast = matches!(kind, CastKind::TryCast | CastKind::SafeCast);
                if let Some(qualifier) = interval_qualifier(data_type)
                    && value.data_type().kind != TypeKind::Null
                    && !matches!(
                        value.data_type().kind,
                        TypeKind::IntervalDayTime | TypeKind::IntervalYearMonth
                    )
                    && !value.data_type().kind.is_string()
                {
                    return cast_to_interval(
                        value,
                        is_number_literal(e),
                        qualifier,
                        try_cast,
                        span,
                    );
                }
                if !can_cast(&value.data_type().kind, &target.kind) {
                    return Err(error(
                        span,
                        format!("cannot cast {} to {}", value.data_type().kind, target.kind),
                    ));
                }
                let target = DataType {
                    nullable: value.data_type().nullable
                        || try_cast
                        || target.nullable && value.is_literal_null(),
                    ..target
                };
                if value.data_type().kind == target.kind {
                    return Ok(value);
                }
                Ok(ScalarExpr::Cast {
                    expr: Box::new(value),
                    data_type: target,
                    try_cast,
                    implicit: false,
                })
            }
            // `MAP[k, v, …]` arrives from the dialect as `MAP` prefixing an array literal.
            Expr::Prefixed { prefix, value } if prefix.value.eq_ignore_ascii_case("MAP") => {
                let Expr::Array(array) = value.as_ref() else {
                    return Err(error(span, "MAP expects [key, value, …]"));
                };
                let entries = array
                    .elem
                    .iter()
                    .map(|e| self.bind_expr(e, scope))
                    .collect::<Result<Vec<_>, _>>()?;
                self.call("MAP", entries, span)
            }
            Expr::CompoundFieldAccess { root, access_chain } => {
                let mut value = self.bind_expr(root, scope)?;
                for access in access_chain {
                    if let ast::AccessExpr::Dot(Expr::Identifier(name)) = access {
                        value = field_access(value, &name.value, span)?;
                        continue;
                    }
                    let ast::AccessExpr::Subscript(ast::Subscript::Index { index }) = access else {
                        return Err(error(span, format!("unsupported field access: {expr}")));
                    };
                    let index = self.bind_expr(index, scope)?;
                    if let (
                        TypeKind::Array(_),
                        ScalarExpr::Literal {
                            value: Value::Int(i),
                            ..
                        },
                    ) = (&value.data_type().kind, &index)
                        && *i < 1
                    {
                        return Err(error(
                            span,
                            format!(
                                "Array element access needs an index starting at 1 but was {i}."
                            ),
                        ));
                    }
                    value = self.call("ITEM", vec![value, index], span)?;
                }
                Ok(value)
            }
            Expr::IsJson {
                expr: e,
                kind,
                negated,
                ..
            } => {
                let value = self.bind_expr(e, scope)?;
                let kind = kind.map_or("VALUE".to_string(), |k| k.to_string());
                let test = self.call("IS JSON", vec![value, unit_literal(&kind)], span)?;
                if *negated {
                    self.call("NOT", vec![test], span)
                } else {
                    Ok(test)
                }
            }
            Expr::Array(array) => {
                let elements = array
                    .elem
                    .iter()
                    .map(|e| self.bind_expr(e, scope))
                    .collect::<Result<Vec<_>, _>>()?;
                // Elements all NULL: no type to give them (Calcite's refusal).
                if !elements.is_empty()
                    && elements
                        .iter()
                        .all(|e| e.data_type().kind == TypeKind::Null)
                {
                    return Err(error(span, "Parameters must be of the same type"));
                }
                self.call("ARRAY", elements, span)
            }
            Expr::Extract { field, expr: e, .. } => {
                let unit_name = field.to_string().to_ascii_uppercase();
                let unit = unit_literal(&unit_name);
                let value = self.bind_expr(e, scope)?;
                // A TIME has only the units of a time of day down to milliseconds (Flink's
                // validator says so, in two wordings).
                if matches!(value.data_type().kind, TypeKind::Time(_)) {
                    match unit_name.as_str() {
                        "HOUR" | "MINUTE" | "SECOND" | "MILLISECOND" => {}
                        "MICROSECOND" | "NANOSECOND" => {
                            return Err(error(
                                span,
                                format!(
                                    "unit {unit_name} can not be applied to {} variable",
                                    value.data_type()
                                ),
                            ));
                        }
                        _ => {
                            return Err(error(
                                span,
                                format!("unit {unit_name} can not be applied to time variable"),
                            ));
                        }
                    }
                }
                self.call("EXTRACT", vec![unit, value], span)
            }
            Expr::Floor { expr: e, field } | Expr::Ceil { expr: e, field } => {
                let is_floor = matches!(expr, Expr::Floor { .. });
                let value = self.bind_expr(e, scope)?;
                match field {
                    CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime) => {
                        self.call(if is_floor { "FLOOR" } else { "CEIL" }, vec![value], span)
                    }
                    CeilFloorKind::DateTimeField(unit) => {
                        let unit = unit_literal(&unit.to_string());
                        self.call(
                            if is_floor { "FLOOR_TO" } else { "CEIL_TO" },
                            vec![unit, value],
                            span,
                        )
                    }
                    CeilFloorKind::Scale(scale) => {
                        let scale = literal(&scale.value, span)?;
                        self.call(
                            if is_floor { "FLOOR" } else { "CEIL" },
                            vec![value, scale],
                            span,
                        )
                    }
                }
            }
            Expr::Overlay {
                expr: e,
                overlay_what,
                overlay_from,
                overlay_for,
            } => {
                let mut args = vec![
                    self.bind_expr(e, scope)?,
                    self.bind_expr(overlay_what, scope)?,
                    self.bind_expr(overlay_from, scope)?,
                ];
                if let Some(length) = overlay_for {
                    args.push(self.bind_expr(length, scope)?);
                }
                self.call("OVERLAY", args, span)
            }
            Expr::Position { expr: needle, r#in } => {
                let args = vec![self.bind_expr(needle, scope)?, self.bind_expr(r#in, scope)?];
                self.call("POSITION", args, span)
            }
            Expr::Substring {
                expr: e,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.bind_expr(e, scope)?];
                if let Some(from) = substring_from {
                    args.push(self.bind_expr(from, scope)?);
                }
                if let Some(len) = substring_for {
                    args.push(self.bind_expr(len, scope)?);
                }
                self.call("SUBSTRING", args, span)
            }
            Expr::Trim {
                trim_where,
                trim_what,
                expr: e,
                trim_characters,
            } => {
                let name = match trim_where {
                    Some(TrimWhereField::Leading) => "LTRIM",
                    Some(TrimWhereField::Trailing) => "RTRIM",
                    _ => "TRIM",
                };
                let mut args = vec![self.bind_expr(e, scope)?];
                if let Some(what) = trim_what {
                    args.push(self.bind_expr(what, scope)?);
                } else if let Some(chars) = trim_characters.as_ref().and_then(|c| c.first()) {
                    args.push(self.bind_expr(chars, scope)?);
                }
                self.call(name, args, span)
            }
            Expr::Function(f) => self.bind_function(f, scope, span),
            Expr::Prefixed { prefix, .. } if prefix.value == "ARRAY" => {
                Err(error(prefix.span, "Require at least 1 argument"))
            }
            Expr::Prefixed { prefix, .. } if prefix.value.eq_ignore_ascii_case("TABLE") => {
                Err(error(
                    span,
                    "TABLE arguments are only allowed in table function calls",
                ))
            }
            Expr::Subquery(query) => self.bind_scalar_subquery(query),
            Expr::Exists { .. } => Err(error(
                span,
                "subqueries in expressions are not supported yet",
            )),
            other => Err(error(span, format!("unsupported expression: {other}"))),
        }
    }

    /// A chain of binary operators (`a + b - c …`, `p AND q AND …`), which the parser nests
    /// to the left. Bound walking down the left spine in a loop, so that a chain of
    /// thousands of operands costs no recursion; runs of AND, OR and `||` become one call
    /// over all their operands, as Calcite flattens them.
    pub(super) fn bind_operator_chain(
        &mut self,
        expr: &Expr,
        scope: &[ScopeColumn],
    ) -> Result<ScalarExpr, SqlError> {
        let mut spine = Vec::new();
        let mut leftmost = expr;
        while let Expr::BinaryOp { left, op, right } = leftmost {
            spine.push((op, right.as_ref()));
            leftmost = left;
        }
        // `span()` of a node recurses over the chain below it: each node's span is built
        // from the leftmost operand's and its right operand's instead.
        let start = leftmost.span();
        // The levels the chain adds: one per operator, but one per run of a flattened one.
        let mut levels = 0;
        let mut previous = None;
        for (op, _) in spine.iter().rev() {
            let name = binary_operator_name(op);
            if !(matches!(name, Some("AND" | "OR" | "||")) && name == previous) {
                levels += 1;
            }
            previous = name;
        }
        if levels >= MAX_EXPR_DEPTH {
            return Err(error(
                start,
                format!(
                    "expression is nested too deeply: {levels} levels of operators, at most {} are supported",
                    MAX_EXPR_DEPTH - 1
                ),
            ));
        }
        let mut acc = self.bind_expr(leftmost, scope)?;
        // The operands of the run of one flattening operator being collected.
        let mut run: Option<(&'static str, Vec<ScalarExpr>, Span)> = None;
        for (op, right) in spine.into_iter().rev() {
            let span = start.union(&right.span());
            let name = binary_operator_name(op)
                .ok_or_else(|| error(span, format!("operator {op} is not supported")))?;
            let r = self.bind_expr(right, scope)?;
            if matches!(name, "AND" | "OR" | "||") {
                match &mut run {
                    Some((current, operands, run_span)) if *current == name => {
                        operands.push(r);
                        *run_span = span;
                    }
                    _ => {
                        if let Some((current, operands, run_span)) = run.take() {
                            acc = self.call(current, operands, run_span)?;
                        }
                        run = Some((name, vec![acc_placeholder(&mut acc), r], span));
                    }
                }
                continue;
            }
            if let Some((current, operands, run_span)) = run.take() {
                acc = self.call(current, operands, run_span)?;
            }
            // Flink folds constant expressions while planning: a constant division by zero
            // fails there; with a runtime operand it fails (or gives ±Infinity/NaN for
            // DOUBLE) when it runs.
            if (name == "/" || name == "%") && acc.is_constant() {
                check_constant_zero(&r, right.span())?;
            }
            let left = acc_placeholder(&mut acc);
            acc = self.call(name, vec![left, r], span)?;
        }
        if let Some((current, operands, run_span)) = run.take() {
            acc = self.call(current, operands, run_span)?;
        }
        Ok(acc)
    }

    /// `value IN (items)`: with constant items one lookup ([`ScalarExpr::InList`]); otherwise
    /// `value = i1 OR value = i2 …`, evaluated left to right as Flink does (an item is only
    /// computed for the rows no earlier item matched). The items are typed as each
    /// comparison `value = item` would type them.
    pub(super) fn in_list(
        &mut self,
        value: ScalarExpr,
        items: Vec<ScalarExpr>,
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        if items.is_empty() {
            return Err(error(span, "IN needs at least one value"));
        }
        let mut comparisons = items
            .into_iter()
            .map(|item| self.call("=", vec![value.clone(), item], span))
            .collect::<Result<Vec<_>, _>>()?;
        if comparisons.len() == 1 {
            return Ok(comparisons.remove(0));
        }
        // One lookup needs the value typed alike in every comparison and constant items.
        let mut lookup = Vec::with_capacity(comparisons.len());
        let mut probe: Option<ScalarExpr> = None;
        let mut nullable = false;
        for c in &comparisons {
            let ScalarExpr::Call {
                args, data_type, ..
            } = c
            else {
                break;
            };
            let [left, item] = args.as_slice() else { break };
            if !item.is_constant()
                || probe
                    .as_ref()
                    .is_some_and(|p| p.data_type().kind != left.data_type().kind)
            {
                break;
            }
            probe.get_or_insert_with(|| left.clone());
            nullable |= data_type.nullable;
            lookup.push(item.clone());
        }
        match probe {
            Some(probe) if lookup.len() == comparisons.len() => Ok(ScalarExpr::InList {
                expr: Box::new(probe),
                list: lookup,
                data_type: DataType {
                    kind: TypeKind::Boolean,
                    nullable,
                },
            }),
            _ => self.call("OR", comparisons, span),
        }
    }

    /// `value LIKE pattern [ESCAPE e]` and `value SIMILAR TO pattern [ESCAPE e]`.
    pub(super) fn pattern_match(
        &mut self,
        name: &str,
        value: &Expr,
        pattern: &Expr,
        escape: Option<&Expr>,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        let mut args = vec![
            self.bind_expr(value, scope)?,
            self.bind_expr(pattern, scope)?,
        ];
        if let Some(escape) = escape {
            args.push(self.bind_expr(escape, scope)?);
        }
        self.call(name, args, span)
    }

    pub(super) fn negate_if(
        &mut self,
        negated: bool,
        expr: ScalarExpr,
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        if negated {
            self.call("NOT", vec![expr], span)
        } else {
            Ok(expr)
        }
    }

    pub(super) fn unary_call(
        &mut self,
        name: &str,
        e: &Expr,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        let arg = self.bind_expr(e, scope)?;
        self.call(name, vec![arg], span)
    }

    pub(super) fn bind_function(
        &mut self,
        f: &ast::Function,
        scope: &[ScopeColumn],
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        let name = object_name_last(&f.name).to_uppercase();
        if f.over.is_some() {
            if let Some((at, column)) = self.over_column
                && at == span
            {
                return Ok(ScalarExpr::Column {
                    index: column,
                    data_type: DataType::not_null(TypeKind::BigInt),
                });
            }
            if self.over_aggregation.is_some() {
                return self.bind_over_aggregate_call(f, &name, scope, span);
            }
            return Err(error(
                span,
                format!("OVER windows ({name} … OVER) are not supported yet"),
            ));
        }
        if AGGREGATES.contains(&name.as_str()) || self.catalog.aggregate_function(&name).is_some() {
            if let Some(clause) = self.no_aggregates_in {
                return Err(error(
                    span,
                    format!("Aggregate expression is illegal in {clause} clause"),
                ));
            }
            if self.aggregation.is_some() {
                return self.bind_aggregate_call(f, &name, scope, span);
            }
            return Err(error(
                span,
                format!("aggregate function {name} is not supported yet"),
            ));
        }
        if let Some((function, _)) = name.rsplit_once('_')
            && matches!(function, "TUMBLE" | "HOP" | "SESSION")
            && matches!(
                &name[function.len() + 1..],
                "START" | "END" | "ROWTIME" | "PROCTIME"
            )
        {
            return self.bind_window_property(f, function, &name, scope, span);
        }
        let mut args = Vec::new();
        match &f.args {
            FunctionArguments::None => {}
            FunctionArguments::Subquery(_) => {
                return Err(error(span, "subqueries are not supported yet"));
            }
            FunctionArguments::List(list) => {
                let takes_unit = matches!(name.as_str(), "TIMESTAMPADD" | "TIMESTAMPDIFF");
                for (i, arg) in list.args.iter().enumerate() {
                    match arg {
                        // TIMESTAMPADD(DAY, …): the unit is a keyword, not a column.
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Identifier(unit)))
                            if takes_unit && i == 0 =>
                        {
                            let unit = unit.value.to_uppercase();
                            let unit = unit.strip_prefix("SQL_TSI_").unwrap_or(&unit);
                            if temporal::parse_unit(unit).is_none() {
                                return Err(error(
                                    arg.span(),
                                    format!("{name} does not know the time unit {unit}"),
                                ));
                            }
                            args.push(unit_literal(unit));
                        }
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => {
                            args.push(self.bind_expr(e, scope)?)
                        }
                        other => {
                            return Err(error(
                                other.span(),
                                format!("unsupported argument to {name}"),
                            ));
                        }
                    }
                }
            }
        }
        match name.as_str() {
            "IF" => {
                // A bare NULL result has no type for Flink's IF, whatever the other one's.
                if let FunctionArguments::List(list) = &f.args
                    && let Some(null) = list.args.iter().skip(1).find(|a| {
                        matches!(
                            a,
                            FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))
                                if matches!(v.value, ast::Value::Null)
                        )
                    })
                {
                    return Err(error(null.span(), "Illegal use of 'NULL'"));
                }
                let [cond, then, otherwise]: [ScalarExpr; 3] = args
                    .try_into()
                    .map_err(|_| error(span, "IF expects 3 arguments"))?;
                // Unlike CASE, Flink's IF is nullable when its condition is.
                let nullable_condition = cond.data_type().nullable;
                // Flink keeps IF a call of its own, its operands as written.
                let mut result = case(vec![(cond, then)], Some(otherwise), span, false)?;
                if let ScalarExpr::Case {
                    data_type,
                    written_as_if,
                    ..
                } = &mut result
                {
                    data_type.nullable |= nullable_condition;
                    *written_as_if = true;
                }
                Ok(result)
            }
            "COALESCE" | "IFNULL" => {
                if args.is_empty() || (name == "IFNULL" && args.len() != 2) {
                    let expected = if name == "IFNULL" {
                        "2"
                    } else {
                        "at least one"
                    };
                    return Err(error(span, format!("{name} expects {expected} arguments")));
                }
                self.call(&name, args, span)
            }
            // The session has one catalog and one database, named as Flink's defaults.
            "CURRENT_DATABASE" if args.is_empty() => Ok(ScalarExpr::Literal {
                data_type: DataType::not_null(TypeKind::VarChar(MAX_LENGTH)),
                value: Value::String("default_database".into()),
            }),
            "TYPEOF" => {
                let Some(value) = args.first().filter(|_| (1..=2).contains(&args.len())) else {
                    return Err(error(span, "TYPEOF expects (expr [, force_serializable])"));
                };
                let mut text = value.data_type().to_string();
                // The serializable form spells out what the summary abbreviates.
                if matches!(
                    args.get(1),
                    Some(ScalarExpr::Literal {
                        value: Value::Boolean(true),
                        ..
                    })
                ) {
                    text = crate::types::serializable_type_text(&text);
                }
                Ok(ScalarExpr::Literal {
                    data_type: DataType::nullable(TypeKind::VarChar(MAX_LENGTH)),
                    value: Value::String(text),
                })
            }
            "NULLIF" => {
                let [a, b]: [ScalarExpr; 2] = args
                    .try_into()
                    .map_err(|_| error(span, "NULLIF expects 2 arguments"))?;
                let eq = self.call("=", vec![a.clone(), b], span)?;
                let null = ScalarExpr::Literal {
                    value: Value::Null,
                    data_type: a.data_type().with_nullable(true),
                };
                case(vec![(eq, null)], Some(a), span, true)
            }
            "YEAR" | "QUARTER" | "MONTH" | "WEEK" | "DAYOFYEAR" | "DAYOFMONTH" | "DAYOFWEEK"
            | "HOUR" | "MINUTE" | "SECOND" => {
                let mut all = vec![unit_literal(&name)];
                all.extend(args);
                self.call("EXTRACT", all, span)
            }
            "CEILING" => self.call("CEIL", args, span),
            "TIMESTAMPADD" | "TIMESTAMPDIFF" => {
                let unit = match args.first() {
                    Some(ScalarExpr::Literal {
                        value: Value::String(u),
                        ..
                    }) => u.clone(),
                    _ => return Err(error(span, format!("{name} expects a time unit first"))),
                };
                if name == "TIMESTAMPADD" && matches!(unit.as_str(), "MICROSECOND" | "NANOSECOND") {
                    // Flink validates these and then fails to plan them.
                    return Err(error(
                        span,
                        format!("{name} with unit {unit} is not supported"),
                    ));
                }
                if name == "TIMESTAMPDIFF" && unit == "NANOSECOND" {
                    // The one unit whose difference is a BIGINT.
                    return self.call("TIMESTAMPDIFF_NANOS", args, span);
                }
                if name == "TIMESTAMPADD"
                    && let Some(value) = args.get(2)
                    && value.data_type().kind == TypeKind::Date
                {
                    match unit.as_str() {
                        // Flink types DATE plus a unit shorter than a day as TIMESTAMP(6).
                        "HOUR" | "MINUTE" | "SECOND" => {
                            let target = DataType::nullable(TypeKind::Timestamp(6));
                            args[2] = coerce(args[2].clone(), &target);
                        }
                        "MILLISECOND" => {
                            return Err(error(
                                span,
                                "TIMESTAMPADD cannot add MILLISECOND to a DATE",
                            ));
                        }
                        _ => {}
                    }
                }
                self.call(&name, args, span)
            }
            _ => self.call(&name, args, span),
        }
    }

    /// Resolves a built-in function and casts its arguments to the signature's types.
    pub(super) fn call(
        &mut self,
        name: &str,
        args: Vec<ScalarExpr>,
        span: Span,
    ) -> Result<ScalarExpr, SqlError> {
        let function = self
            .catalog
            .function(name)
            .or_else(|| function::lookup(name));
        let function = function.ok_or_else(|| {
            let shown: Vec<String> = args
                .iter()
                .map(|a| {
                    format!(
                        "<{}>",
                        crate::plan::explain::calcite_signature_type(a.data_type())
                    )
                })
                .collect();
            error(
                span,
                format!(
                    "No match found for function signature {name}({})",
                    shown.join(", ")
                ),
            )
        })?;
        let types: Vec<DataType> = args.iter().map(|a| a.data_type().clone()).collect();
        // A registered function is named as registered (built-ins as the call spells them).
        let name = if function.user.is_some() {
            function.name
        } else {
            name
        };
        let signature = function
            .signature(&types)
            .map_err(|m| cannot_apply(name, &types, &m, span))?;
        let mut data_type = signature.return_type;
        // ROUND/TRUNCATE(decimal, d) with a literal d: Flink types the result by d.
        if let (
            "ROUND" | "TRUNCATE",
            Some(TypeKind::Decimal { precision, scale }),
            Some(ScalarExpr::Literal {
                value: Value::Int(d),
                ..
            }),
        ) = (name, types.first().map(|t| &t.kind), args.get(1))
        {
            let (precision, scale) = function::math::round_decimal_type(
                *precision,
                *scale,
                i32::try_from(*d).unwrap_or(i32::MAX),
            );
            data_type.kind = TypeKind::Decimal { precision, scale };
        }
        let args = args
            .into_iter()
            .zip(&signature.args)
            .map(|(a, t)| {
                // COALESCE and IFNULL type an integer literal as their result, as Calcite
                // coerces its operands (`COALESCE($2, 0:BIGINT)`).
                if matches!(name, "COALESCE" | "IFNULL") {
                    return retyped_literal(a, t);
                }
                // (Only a cast `coerce` adds: an operand already of the type keeps its own.)
                let widening = a.data_type().kind != t.kind
                    && implicit_widening(name, &a.data_type().kind, &t.kind);
                match coerce(a, t) {
                    ScalarExpr::Cast {
                        expr,
                        data_type,
                        try_cast,
                        ..
                    } if widening => ScalarExpr::Cast {
                        expr,
                        data_type,
                        try_cast,
                        implicit: true,
                    },
                    other => other,
                }
            })
            .collect();
        Ok(ScalarExpr::Call {
            function,
            args,
            data_type,
        })
    }
}

/// Whether `function` widening an operand from `from` to `to` is a cast Calcite does not
/// write: numeric operands of arithmetic and of ordering comparisons (`=` and `<>` cast
/// to the common type, as Calcite's plans show: `=(CAST($0):BIGINT, $3)`).
fn implicit_widening(function: &str, from: &TypeKind, to: &TypeKind) -> bool {
    let numeric = |k: &TypeKind| {
        k.is_integer()
            || matches!(
                k,
                TypeKind::Decimal { .. } | TypeKind::Float | TypeKind::Double
            )
    };
    matches!(
        function,
        "+" | "-" | "*" | "/" | "%" | "<" | "<=" | ">" | ">="
    ) && numeric(from)
        && numeric(to)
}

/// How deep a bound expression may nest. The evaluator and EXPLAIN recurse once per level
/// (with the stack grown as needed); the limit keeps a runaway expression from taking
/// unbounded memory and time, and is far above what Flink itself plans (see
/// `tests/deep_expressions.rs`).
pub const MAX_EXPR_DEPTH: usize = 20_000;

pub(super) fn binary_operator_name(op: &BinaryOperator) -> Option<&'static str> {
    Some(match op {
        BinaryOperator::Plus => "+",
        BinaryOperator::Minus => "-",
        BinaryOperator::Multiply => "*",
        BinaryOperator::Divide => "/",
        BinaryOperator::Modulo => "%",
        BinaryOperator::StringConcat => "||",
        BinaryOperator::Eq => "=",
        BinaryOperator::NotEq => "<>",
        BinaryOperator::Lt => "<",
        BinaryOperator::LtEq => "<=",
        BinaryOperator::Gt => ">",
        BinaryOperator::GtEq => ">=",
        BinaryOperator::And => "AND",
        BinaryOperator::Or => "OR",
        _ => return None,
    })
}

/// A CASE of `branches` (condition, result) and `otherwise`, its results of their common
/// type; `retype`: an integer literal result is typed as that (Calcite's coercion of CASE
/// operands), else cast like any other.
pub(super) fn case(
    branches: Vec<(ScalarExpr, ScalarExpr)>,
    otherwise: Option<ScalarExpr>,
    span: Span,
    retype: bool,
) -> Result<ScalarExpr, SqlError> {
    let mut types: Vec<DataType> = branches
        .iter()
        .map(|(_, r)| r.data_type().clone())
        .collect();
    match &otherwise {
        Some(e) => types.push(e.data_type().clone()),
        None => types.push(DataType::nullable(TypeKind::Null)),
    }
    let mixes_date_and_timestamp = types.iter().any(|t| t.kind == TypeKind::Date)
        && types
            .iter()
            .any(|t| matches!(t.kind, TypeKind::Timestamp(_) | TypeKind::TimestampLtz(_)));
    let mut result = common_type_of(&types)
        .filter(|_| !mixes_date_and_timestamp)
        .ok_or_else(|| {
            error(
                span,
                "Illegal mixing of types in CASE or COALESCE statement",
            )
        })?;
    // Calcite's CASE keeps the first floating-point type it meets among FLOAT and DOUBLE
    // (`CASE … THEN f ELSE d END` is FLOAT, the other way round DOUBLE); a DECIMAL branch
    // still makes it DOUBLE.
    if result.kind == TypeKind::Double
        && !types
            .iter()
            .any(|t| matches!(t.kind, TypeKind::Decimal { .. }))
        && types
            .iter()
            .find(|t| matches!(t.kind, TypeKind::Float | TypeKind::Double))
            .is_some_and(|t| t.kind == TypeKind::Float)
    {
        result.kind = TypeKind::Float;
    }
    // A bare NULL condition is a BOOLEAN one, never true.
    let boolean = DataType::nullable(TypeKind::Boolean);
    let operand = |e: ScalarExpr| {
        if retype {
            retyped_literal(e, &result)
        } else {
            coerce(e, &result)
        }
    };
    let branches = branches
        .into_iter()
        .map(|(c, r)| {
            let c = if c.data_type().kind == TypeKind::Null {
                coerce(c, &boolean)
            } else {
                c
            };
            (c, operand(r))
        })
        .collect();
    let otherwise = otherwise.map(|e| Box::new(operand(e)));
    Ok(ScalarExpr::Case {
        branches,
        otherwise,
        data_type: result,
        written_as_if: false,
    })
}

/// `expr` as an operand of type `target` where Calcite coerces operands to a common type
/// (CASE branches, COALESCE): an integer literal becomes a literal of the numeric target
/// (`0:BIGINT`, `1:DOUBLE`), anything else is cast (`coerce`).
fn retyped_literal(expr: ScalarExpr, target: &DataType) -> ScalarExpr {
    match expr {
        ScalarExpr::Literal {
            value: Value::Int(i),
            data_type,
        } if data_type.kind.is_integer()
            && data_type.kind != target.kind
            && (target.kind.is_integer()
                || matches!(target.kind, TypeKind::Float | TypeKind::Double)) =>
        {
            ScalarExpr::Literal {
                value: Value::Int(i),
                data_type: target.with_nullable(data_type.nullable),
            }
        }
        other => coerce(other, target),
    }
}

pub(super) fn check_constant_zero(divisor: &ScalarExpr, span: Span) -> Result<(), SqlError> {
    // A numeric cast of a zero is a zero (`CAST(0 AS DOUBLE)`).
    let mut divisor = divisor;
    while let ScalarExpr::Cast {
        expr, data_type, ..
    } = divisor
        && (data_type.kind.is_integer()
            || matches!(
                data_type.kind,
                TypeKind::Decimal { .. } | TypeKind::Float | TypeKind::Double
            ))
    {
        divisor = expr;
    }
    let zero = match divisor {
        ScalarExpr::Literal {
            value: Value::Int(0) | Value::Decimal(0),
            ..
        } => true,
        ScalarExpr::Literal {
            value: Value::Float(f),
            ..
        } => *f == 0.0,
        _ => false,
    };
    if zero {
        Err(error(span, "Division by zero"))
    } else {
        Ok(())
    }
}

/// `value.name` for a ROW value: the field's type, nullable when the row is.
pub(super) fn field_access(
    value: ScalarExpr,
    name: &str,
    span: Span,
) -> Result<ScalarExpr, SqlError> {
    let TypeKind::Row(fields) = &value.data_type().kind else {
        return Err(error(
            span,
            format!("{} has no field '{name}'", value.data_type().kind),
        ));
    };
    let Some(index) = fields.iter().position(|(n, _)| n == name) else {
        return Err(error(
            span,
            format!("field '{name}' not found in {}", value.data_type().kind),
        ));
    };
    let field_type = fields[index].1.clone();
    let nullable = field_type.nullable || value.data_type().nullable;
    Ok(ScalarExpr::Field {
        expr: Box::new(value),
        index,
        name: name.to_string(),
        data_type: field_type.with_nullable(nullable),
    })
}

pub(super) fn resolve_column(
    scope: &[ScopeColumn],
    qualifier: Option<&str>,
    name: &str,
    span: Span,
) -> Result<ScalarExpr, SqlError> {
    let mut found = None;
    for (i, c) in scope.iter().enumerate() {
        if c.field.name == name && (qualifier.is_none() || c.qualifier.as_deref() == qualifier) {
            if found.is_some() {
                return Err(error(span, format!("Column '{name}' is ambiguous")));
            }
            found = Some(i);
        }
    }
    match found {
        Some(index) => Ok(ScalarExpr::Column {
            index,
            data_type: scope[index].field.data_type.clone(),
        }),
        None => {
            let shown = match qualifier {
                Some(q) => format!("{q}.{name}"),
                None => name.to_string(),
            };
            Err(error(
                span,
                format!("Column '{shown}' not found in any table"),
            ))
        }
    }
}

/// A function's refusal of its arguments: Flink's (Calcite's) wording, then what exactly is
/// wrong.
pub(super) fn cannot_apply(name: &str, types: &[DataType], message: &str, span: Span) -> SqlError {
    let shown: Vec<String> = types.iter().map(|t| format!("<{}>", t.kind)).collect();
    error(
        span,
        format!(
            "Cannot apply '{name}' to arguments of type '{name}({})': {message}",
            shown.join(", ")
        ),
    )
}
