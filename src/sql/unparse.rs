//! Writing expressions back as Flink prints them in `DESC`, `SHOW CREATE TABLE` and `SHOW
//! CREATE VIEW`: Calcite's unparse of the validated expression, which is not the text the user
//! wrote. Identifiers are backquoted, functions of Calcite's and Flink's operator tables print
//! their keyword name (`UPPER(`s`)`) and the functions Flink resolves from its catalog of
//! built-ins print as a quoted identifier (`` `JSON_STRING`(`a`) ``), special syntax is
//! spelled in full (`TRIM(BOTH ' ' FROM …)`, `BETWEEN ASYMMETRIC`, the JSON clauses), a few
//! calls are shown as what the validator rewrote them to (`NULLIF` as `CASE`, `HOUR(x)` as
//! `EXTRACT`), and parentheses come from operator precedence, not from the source.
//!
//! Precedences are Calcite's: an operator has a left and a right binding power (`p` and `p + 1`
//! for a left-associative binary operator of precedence `p`); an operand is parenthesized when
//! the binding power of its context is stronger than its own.

use sqlparser::ast::{
    BinaryOperator, CastKind, CeilFloorKind, DataType, DateTimeField, Expr, FunctionArg,
    FunctionArgExpr, FunctionArguments, Ident, InTarget, Interval, TrimWhereField, UnaryOperator,
    Value,
};

/// The expression as Flink prints it, with names as written.
pub fn unparse(expr: &Expr) -> String {
    unparse_qualified(expr, &|_| None)
}

/// The expression with column names rewritten by `qualify` (a view's expanded query names
/// every column by its table: `` `t`.`a` ``). `qualify` returns `None` for names it leaves
/// alone.
pub fn unparse_qualified(expr: &Expr, qualify: &dyn Fn(&[Ident]) -> Option<Vec<String>>) -> String {
    let mut w = Writer {
        out: String::new(),
        qualify,
    };
    w.expr(expr, 0, 0);
    w.out
}

/// A name in backquotes, a backquote in it doubled.
pub fn quote_identifier(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// The text of a data type as the binder reads it: the canonical text our dialect stores.
pub fn type_text(data_type: &DataType) -> String {
    match data_type {
        DataType::Custom(name, modifiers)
            if name.to_string() == super::dialect::FLINK_TYPE && !modifiers.is_empty() =>
        {
            modifier_text(&modifiers[0])
        }
        other => other.to_string(),
    }
}

/// The interval qualifier an interval type was written with (`CAST(x AS INTERVAL DAY)`).
pub fn interval_qualifier(
    data_type: &DataType,
) -> Option<crate::types::interval::IntervalQualifier> {
    match data_type {
        DataType::Custom(name, modifiers)
            if name.to_string() == super::dialect::FLINK_TYPE && modifiers.len() == 3 =>
        {
            let text = modifiers[2].to_string();
            let dialect = super::dialect::FlinkDialect;
            let mut parser = sqlparser::parser::Parser::new(&dialect)
                .try_with_sql(text.trim_matches('\''))
                .ok()?;
            super::types::parse_cast_type(&mut parser).ok()?.1
        }
        _ => None,
    }
}

/// The text of a data type as Calcite prints it in a CAST: the type as written, in its SQL
/// spelling (`INTEGER`, `DECIMAL(5, 1)`, `VARCHAR`, `ARRAY< BIGINT >`).
pub fn type_spelling(data_type: &DataType) -> String {
    match data_type {
        DataType::Custom(name, modifiers)
            if name.to_string() == super::dialect::FLINK_TYPE && modifiers.len() >= 2 =>
        {
            modifier_text(&modifiers[1])
        }
        other => type_text(other),
    }
}

fn modifier_text(m: &sqlparser::ast::TypeModifier) -> String {
    m.to_string().trim_matches('\'').replace("''", "'")
}

/// Functions Flink resolves from its own catalog of built-ins (`BuiltInFunctionDefinitions`
/// without a counterpart in `FlinkSqlOperatorTable`): Calcite prints them as identifiers.
/// Checked one by one against Flink 2.3's `SHOW CREATE TABLE`.
const CATALOG_FUNCTIONS: &[&str] = &[
    "ARRAY_APPEND",
    "ARRAY_CONCAT",
    "ARRAY_CONTAINS",
    "ARRAY_DISTINCT",
    "ARRAY_EXCEPT",
    "ARRAY_INTERSECT",
    "ARRAY_JOIN",
    "ARRAY_MAX",
    "ARRAY_MIN",
    "ARRAY_POSITION",
    "ARRAY_PREPEND",
    "ARRAY_REMOVE",
    "ARRAY_REVERSE",
    "ARRAY_SLICE",
    "ARRAY_SORT",
    "ARRAY_UNION",
    "BTRIM",
    "ELT",
    "ENDSWITH",
    "GREATEST",
    "IFNULL",
    "INET_ATON",
    "INET_NTOA",
    "JSON_QUOTE",
    "JSON_STRING",
    "JSON_UNQUOTE",
    "LEAST",
    "MAP_ENTRIES",
    "MAP_FROM_ARRAYS",
    "MAP_KEYS",
    "MAP_UNION",
    "MAP_VALUES",
    "PRINTF",
    "REGEXP_COUNT",
    "REGEXP_EXTRACT_ALL",
    "REGEXP_INSTR",
    "REGEXP_SUBSTR",
    "SPLIT",
    "STARTSWITH",
    "TO_TIMESTAMP_LTZ",
    "TRANSLATE3",
    "TYPEOF",
    "UNHEX",
    "URL_DECODE",
    "URL_ENCODE",
];

/// Calcite's binding powers `(left, right)` of the operators that print infix, prefix or
/// postfix (`SqlStdOperatorTable`).
mod prec {
    pub const OR: (u32, u32) = (22, 23);
    pub const AND: (u32, u32) = (24, 25);
    pub const NOT: (u32, u32) = (0, 27);
    pub const POSTFIX: (u32, u32) = (28, 29);
    pub const COMPARISON: (u32, u32) = (30, 31);
    pub const BETWEEN: (u32, u32) = (32, 33);
    pub const IN: (u32, u32) = (32, 33);
    /// LIKE and SIMILAR TO: precedence 32, not left-associative.
    pub const LIKE: (u32, u32) = (33, 32);
    pub const ADDITIVE: (u32, u32) = (40, 41);
    pub const MULTIPLICATIVE: (u32, u32) = (60, 61);
    pub const UNARY: (u32, u32) = (0, 81);
}

struct Writer<'a> {
    out: String,
    qualify: &'a dyn Fn(&[Ident]) -> Option<Vec<String>>,
}

impl Writer<'_> {
    fn push(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn ident(&mut self, name: &str) {
        self.out.push_str(&quote_identifier(name));
    }

    fn name(&mut self, parts: &[Ident]) {
        let names: Vec<String> = match (self.qualify)(parts) {
            Some(names) => names,
            None => parts.iter().map(|p| p.value.clone()).collect(),
        };
        for (i, n) in names.iter().enumerate() {
            if i > 0 {
                self.push(".");
            }
            self.ident(n);
        }
    }

    /// Writes `expr` in a context binding with `left` / `right` power; an operator binding
    /// less strongly than its context is parenthesized (Calcite's `SqlCall.unparse`).
    fn expr(&mut self, expr: &Expr, left: u32, right: u32) {
        // Parentheses as written are dropped: precedence puts back those Calcite prints.
        if let Expr::Nested(inner) = expr {
            return self.expr(inner, left, right);
        }
        match operator_prec(expr) {
            Some((op_left, op_right)) if left > op_left || (op_right <= right && right != 0) => {
                self.push("(");
                self.operator(expr, 0, 0);
                self.push(")");
            }
            Some(_) => self.operator(expr, left, right),
            None => self.atom(expr),
        }
    }

    fn list(&mut self, exprs: &[Expr]) {
        for (i, e) in exprs.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.expr(e, 0, 0);
        }
    }

    fn binary(&mut self, l: &Expr, op: &str, r: &Expr, p: (u32, u32), left: u32, right: u32) {
        self.expr(l, left, p.0);
        self.push(" ");
        self.push(op);
        self.push(" ");
        self.expr(r, p.1, right);
    }

    fn postfix(&mut self, e: &Expr, keyword: &str, left: u32) {
        self.expr(e, left, prec::POSTFIX.0);
        self.push(" ");
        self.push(keyword);
    }

    /// An expression with operator syntax, already parenthesized if needed.
    fn operator(&mut self, expr: &Expr, left: u32, right: u32) {
        match expr {
            Expr::Nested(inner) => self.expr(inner, left, right),
            Expr::BinaryOp {
                left: l,
                op,
                right: r,
            } => {
                let p = binary_prec(op);
                let text = match op {
                    BinaryOperator::StringConcat => "||".to_string(),
                    BinaryOperator::NotEq => "<>".to_string(),
                    BinaryOperator::And => "AND".to_string(),
                    BinaryOperator::Or => "OR".to_string(),
                    other => other.to_string(),
                };
                self.binary(l, &text, r, p, left, right);
            }
            Expr::UnaryOp { op, expr: e } => {
                let keyword = match op {
                    UnaryOperator::Not => "NOT",
                    UnaryOperator::Minus => "-",
                    _ => "+",
                };
                self.push(keyword);
                self.push(" ");
                let p = operator_prec(expr).unwrap_or(prec::UNARY);
                self.expr(e, p.1, right);
            }
            Expr::IsNull(e) => self.postfix(e, "IS NULL", left),
            Expr::IsNotNull(e) => self.postfix(e, "IS NOT NULL", left),
            Expr::IsTrue(e) => self.postfix(e, "IS TRUE", left),
            Expr::IsNotTrue(e) => self.postfix(e, "IS NOT TRUE", left),
            Expr::IsFalse(e) => self.postfix(e, "IS FALSE", left),
            Expr::IsNotFalse(e) => self.postfix(e, "IS NOT FALSE", left),
            Expr::IsUnknown(e) => self.postfix(e, "IS UNKNOWN", left),
            Expr::IsNotUnknown(e) => self.postfix(e, "IS NOT UNKNOWN", left),
            Expr::IsDistinctFrom(l, r) => {
                self.binary(l, "IS DISTINCT FROM", r, prec::COMPARISON, left, right)
            }
            Expr::IsNotDistinctFrom(l, r) => {
                self.binary(l, "IS NOT DISTINCT FROM", r, prec::COMPARISON, left, right)
            }
            Expr::Between {
                expr: e,
                negated,
                low,
                high,
            } => {
                self.expr(e, prec::BETWEEN.0, 0);
                self.push(if *negated {
                    " NOT BETWEEN ASYMMETRIC "
                } else {
                    " BETWEEN ASYMMETRIC "
                });
                // A bound holding an AND is parenthesized so the AND cannot be read as
                // BETWEEN's own.
                let low_prec = if contains_and(low) { 100 } else { 0 };
                self.expr(low, low_prec, low_prec);
                self.push(" AND ");
                self.expr(high, 0, prec::BETWEEN.1);
            }
            Expr::Like {
                negated,
                expr: e,
                pattern,
                escape_char,
                ..
            } => self.like(
                e,
                "LIKE",
                *negated,
                pattern,
                escape_char.as_deref(),
                left,
                right,
            ),
            Expr::SimilarTo {
                negated,
                expr: e,
                pattern,
                escape_char,
            } => self.like(
                e,
                "SIMILAR TO",
                *negated,
                pattern,
                escape_char.as_deref(),
                left,
                right,
            ),
            Expr::In {
                expr: e,
                target: InTarget::List(list),
                negated,
                ..
            } => {
                self.expr(e, left, prec::IN.0);
                self.push(if *negated { " NOT IN (" } else { " IN (" });
                self.list(list);
                self.push(")");
            }
            other => self.atom(other),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn like(
        &mut self,
        e: &Expr,
        op: &str,
        negated: bool,
        pattern: &Expr,
        escape: Option<&Expr>,
        left: u32,
        right: u32,
    ) {
        self.expr(e, left, prec::LIKE.0);
        self.push(if negated { " NOT " } else { " " });
        self.push(op);
        self.push(" ");
        self.expr(pattern, prec::LIKE.1, right);
        if let Some(escape) = escape {
            self.push(" ESCAPE ");
            self.expr(escape, prec::LIKE.1, right);
        }
    }

    /// An expression that never needs parentheses: a name, a literal, a call.
    fn atom(&mut self, expr: &Expr) {
        match expr {
            Expr::Identifier(ident) => self.name(std::slice::from_ref(ident)),
            Expr::CompoundIdentifier(parts) => self.name(parts),
            Expr::Value(v) => self.value(&v.value, false),
            Expr::UnaryOp {
                op: UnaryOperator::Minus,
                expr: e,
            } => match e.as_ref() {
                // Calcite's parser folds the sign into a numeric literal.
                Expr::Value(v) => self.value(&v.value, true),
                _ => unreachable!("operator_prec routes other negations to operator()"),
            },
            Expr::TypedString(t) => {
                let keyword = match type_text(&t.data_type).as_str() {
                    s if s.starts_with("TIMESTAMP_LTZ") => "TIMESTAMP WITH LOCAL TIME ZONE",
                    s if s.starts_with("TIMESTAMP") => "TIMESTAMP",
                    s if s.starts_with("TIME") => "TIME",
                    _ => "DATE",
                };
                self.push(keyword);
                self.push(" ");
                self.value(&t.value.value, false);
            }
            Expr::Interval(Interval {
                value,
                leading_field,
                last_field,
                ..
            }) => {
                self.push("INTERVAL ");
                self.expr(value, 0, 0);
                if let Some(field) = leading_field {
                    self.push(" ");
                    self.push(&unit(field));
                }
                if let Some(field) = last_field {
                    self.push(" TO ");
                    self.push(&unit(field));
                }
            }
            Expr::Cast {
                kind,
                expr: e,
                data_type,
                ..
            } => {
                self.push(if matches!(kind, CastKind::TryCast | CastKind::SafeCast) {
                    "TRY_CAST("
                } else {
                    "CAST("
                });
                self.expr(e, 0, 0);
                self.push(" AS ");
                self.push(&type_spelling(data_type));
                self.push(")");
            }
            Expr::Extract { field, expr: e, .. } => {
                self.push("EXTRACT(");
                self.push(&unit(field));
                self.push(" FROM ");
                self.expr(e, 0, 0);
                self.push(")");
            }
            Expr::Ceil { expr: e, field } | Expr::Floor { expr: e, field } => {
                self.push(if matches!(expr, Expr::Ceil { .. }) {
                    "CEIL("
                } else {
                    "FLOOR("
                });
                self.expr(e, 0, 0);
                match field {
                    CeilFloorKind::DateTimeField(DateTimeField::NoDateTime) => {}
                    CeilFloorKind::DateTimeField(f) => {
                        self.push(" TO ");
                        self.push(&unit(f));
                    }
                    CeilFloorKind::Scale(v) => {
                        self.push(", ");
                        self.value(&v.value, false);
                    }
                }
                self.push(")");
            }
            Expr::Position { expr: e, r#in } => {
                self.push("POSITION(");
                self.expr(e, 0, 0);
                self.push(" IN ");
                self.expr(r#in, 0, 0);
                self.push(")");
            }
            Expr::Substring {
                expr: e,
                substring_from,
                substring_for,
                shorthand,
                ..
            } => {
                self.push(if *shorthand { "SUBSTR(" } else { "SUBSTRING(" });
                self.expr(e, 0, 0);
                for part in [substring_from, substring_for].into_iter().flatten() {
                    self.push(", ");
                    self.expr(part, 0, 0);
                }
                self.push(")");
            }
            Expr::Trim {
                trim_where,
                trim_what,
                expr: e,
                ..
            } => {
                self.push("TRIM(");
                self.push(match trim_where {
                    Some(TrimWhereField::Leading) => "LEADING ",
                    Some(TrimWhereField::Trailing) => "TRAILING ",
                    _ => "BOTH ",
                });
                match trim_what {
                    Some(what) => self.expr(what, 0, 0),
                    None => self.push("' '"),
                }
                self.push(" FROM ");
                self.expr(e, 0, 0);
                self.push(")");
            }
            Expr::Overlay {
                expr: e,
                overlay_what,
                overlay_from,
                overlay_for,
            } => {
                self.push("OVERLAY(");
                self.expr(e, 0, 0);
                self.push(" PLACING ");
                self.expr(overlay_what, 0, 0);
                self.push(" FROM ");
                self.expr(overlay_from, 0, 0);
                if let Some(n) = overlay_for {
                    self.push(" FOR ");
                    self.expr(n, 0, 0);
                }
                self.push(")");
            }
            Expr::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                // The validator turns `CASE x WHEN v …` into `CASE WHEN x = v …` and adds the
                // implicit `ELSE NULL`.
                self.push("CASE");
                for when in conditions {
                    self.push(" WHEN ");
                    match operand {
                        Some(x) => self.binary(x, "=", &when.condition, prec::COMPARISON, 0, 0),
                        None => self.expr(&when.condition, 0, 0),
                    }
                    self.push(" THEN ");
                    self.expr(&when.result, 0, 0);
                }
                self.push(" ELSE ");
                match else_result {
                    Some(e) => self.expr(e, 0, 0),
                    None => self.push("NULL"),
                }
                self.push(" END");
            }
            Expr::Array(array) => {
                self.push("ARRAY[");
                self.list(&array.elem);
                self.push("]");
            }
            Expr::Prefixed { prefix, value } if prefix.value == "MAP" => {
                self.push("MAP[");
                if let Expr::Array(array) = value.as_ref() {
                    self.list(&array.elem);
                }
                self.push("]");
            }
            Expr::CompoundFieldAccess { root, access_chain } => {
                self.expr(root, 0, 0);
                for access in access_chain {
                    match access {
                        sqlparser::ast::AccessExpr::Subscript(
                            sqlparser::ast::Subscript::Index { index },
                        ) => {
                            self.push("[");
                            self.expr(index, 0, 0);
                            self.push("]");
                        }
                        sqlparser::ast::AccessExpr::Dot(field) => {
                            self.push(".");
                            self.expr(field, 0, 0);
                        }
                        other => self.push(&other.to_string()),
                    }
                }
            }
            Expr::Tuple(items) => {
                self.push("ROW(");
                self.list(items);
                self.push(")");
            }
            Expr::Function(f) => self.function(f),
            other => self.push(&other.to_string()),
        }
    }

    fn value(&mut self, value: &Value, negative: bool) {
        let sign = if negative { "-" } else { "" };
        match value {
            Value::Number(n, _) => {
                self.push(sign);
                if n.contains(['e', 'E']) {
                    self.push(&scientific(n));
                } else {
                    self.push(n);
                }
            }
            Value::SingleQuotedString(s) => self.string(s),
            Value::HexStringLiteral(h) => {
                self.push("X'");
                self.push(&h.to_ascii_uppercase());
                self.push("'");
            }
            Value::Boolean(b) => self.push(if *b { "TRUE" } else { "FALSE" }),
            Value::Null => self.push("NULL"),
            other => self.push(&other.to_string()),
        }
    }

    /// A character literal as Calcite quotes it: `'it''s'`, or in Unicode escapes when it
    /// holds a character outside printable ASCII (`u&'h\00e9llo'`).
    fn string(&mut self, s: &str) {
        let plain = s.chars().all(|c| (' '..='~').contains(&c));
        if plain {
            self.push("'");
            self.push(&s.replace('\'', "''"));
            self.push("'");
            return;
        }
        self.push("u&'");
        let mut units = [0u16; 2];
        for c in s.chars() {
            for unit in c.encode_utf16(&mut units) {
                let u = *unit;
                if !(32..128).contains(&u) {
                    self.out.push_str(&format!("\\{u:04x}"));
                } else if u == u16::from(b'\'') || u == u16::from(b'\\') {
                    self.out.push(char::from(u as u8));
                    self.out.push(char::from(u as u8));
                } else {
                    self.out.push(char::from(u as u8));
                }
            }
        }
        self.push("'");
    }

    fn function(&mut self, f: &sqlparser::ast::Function) {
        let name = f.name.to_string().to_uppercase();
        let args: Vec<&Expr> = match &f.args {
            FunctionArguments::List(list) => list
                .args
                .iter()
                .filter_map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        match (name.as_str(), args.as_slice()) {
            (
                "JSON_VALUE",
                [
                    json,
                    path,
                    returning,
                    empty,
                    empty_default,
                    error,
                    error_default,
                ],
            ) => {
                self.json_call("JSON_VALUE(", json, path);
                if let Expr::Cast { data_type, .. } = returning
                    && !matches!(data_type, DataType::String(None))
                {
                    self.push(" RETURNING ");
                    self.push(&type_spelling(data_type));
                }
                self.json_behaviour(empty, empty_default, "EMPTY");
                self.json_behaviour(error, error_default, "ERROR");
                self.push(")");
            }
            ("JSON_QUERY", [json, path, wrapper, empty, error]) => {
                self.json_call("JSON_QUERY(", json, path);
                self.push(match literal_text(wrapper).as_deref() {
                    Some("CONDITIONAL") => " WITH CONDITIONAL ARRAY WRAPPER",
                    Some("UNCONDITIONAL") => " WITH UNCONDITIONAL ARRAY WRAPPER",
                    _ => " WITHOUT ARRAY WRAPPER",
                });
                for (mode, clause) in [(empty, "EMPTY"), (error, "ERROR")] {
                    self.push(" ");
                    self.push(literal_text(mode).as_deref().unwrap_or("NULL"));
                    self.push(" ON ");
                    self.push(clause);
                }
                self.push(")");
            }
            ("JSON_EXISTS", [json, path, error]) => {
                self.json_call("JSON_EXISTS(", json, path);
                if let Some(mode) = literal_text(error)
                    && !mode.is_empty()
                {
                    self.push(" ");
                    self.push(&mode);
                    self.push(" ON ERROR");
                }
                self.push(")");
            }
            ("JSON_OBJECT", [on_null, rest @ ..]) => {
                self.push("JSON_OBJECT(");
                for (i, pair) in rest.chunks(3).enumerate() {
                    if let [key, _nested, value] = pair {
                        if i > 0 {
                            self.push(", ");
                        }
                        self.push("KEY ");
                        self.expr(key, 0, 0);
                        self.push(" VALUE ");
                        self.expr(value, 0, 0);
                    }
                }
                if !rest.is_empty() {
                    self.push(" ");
                }
                self.push(literal_text(on_null).as_deref().unwrap_or("NULL"));
                self.push(" ON NULL)");
            }
            ("JSON_ARRAY", [on_null, rest @ ..]) => {
                // An empty JSON_ARRAY() prints without its (default) clause.
                self.push("JSON_ARRAY(");
                for (i, pair) in rest.chunks(2).enumerate() {
                    if let [_nested, value] = pair {
                        if i > 0 {
                            self.push(", ");
                        }
                        self.expr(value, 0, 0);
                    }
                }
                if !rest.is_empty() {
                    self.push(" ");
                    self.push(literal_text(on_null).as_deref().unwrap_or("ABSENT"));
                    self.push(" ON NULL");
                }
                self.push(")");
            }
            ("JSON_STRING", [value, _nested]) => {
                self.push("`JSON_STRING`(");
                self.expr(value, 0, 0);
                self.push(")");
            }
            // A JSON aggregate's value is wrapped in JSON_STRING by the parser (`sql/json.rs`).
            (
                "JSON_ARRAYAGG_ABSENT_ON_NULL"
                | "JSON_ARRAYAGG_NULL_ON_NULL"
                | "JSON_OBJECTAGG_ABSENT_ON_NULL"
                | "JSON_OBJECTAGG_NULL_ON_NULL",
                [.., Expr::Function(wrapped)],
            ) => {
                let (function, mode) = name
                    .trim_end_matches("_ON_NULL")
                    .rsplit_once('_')
                    .unwrap_or((name.as_str(), "NULL"));
                self.push(function);
                self.push("(");
                if let [key, _] = args.as_slice() {
                    self.push("KEY ");
                    self.expr(key, 0, 0);
                    self.push(" VALUE ");
                }
                if let FunctionArguments::List(list) = &wrapped.args
                    && let Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(value))) =
                        list.args.first()
                {
                    self.expr(value, 0, 0);
                }
                self.push(" ");
                self.push(mode);
                self.push(" ON NULL)");
            }
            ("NULLIF", [a, b]) => {
                self.push("CASE WHEN ");
                self.binary(a, "=", b, prec::COMPARISON, 0, 0);
                self.push(" THEN NULL ELSE ");
                self.expr(a, 0, 0);
                self.push(" END");
            }
            (
                "YEAR" | "QUARTER" | "MONTH" | "WEEK" | "DAYOFMONTH" | "DAYOFWEEK" | "DAYOFYEAR"
                | "HOUR" | "MINUTE" | "SECOND",
                [x],
            ) => {
                let unit = match name.as_str() {
                    "DAYOFMONTH" => "DAY",
                    "DAYOFWEEK" => "DOW",
                    "DAYOFYEAR" => "DOY",
                    other => other,
                };
                self.push("EXTRACT(");
                self.push(unit);
                self.push(" FROM ");
                self.expr(x, 0, 0);
                self.push(")");
            }
            ("TIMESTAMPADD" | "TIMESTAMPDIFF", [Expr::Identifier(u), rest @ ..]) => {
                self.push(&name);
                self.push("(");
                self.push(&singular(&u.value.to_uppercase()));
                for e in rest {
                    self.push(", ");
                    self.expr(e, 0, 0);
                }
                self.push(")");
            }
            _ => {
                let name = match name.as_str() {
                    "CEILING" => "CEIL",
                    "TRANSLATE" => "TRANSLATE3",
                    other => other,
                };
                if CATALOG_FUNCTIONS.contains(&name) {
                    self.ident(name);
                } else {
                    self.push(name);
                }
                if matches!(f.args, FunctionArguments::None) {
                    return;
                }
                self.push("(");
                let owned: Vec<Expr> = args.into_iter().cloned().collect();
                self.list(&owned);
                self.push(")");
            }
        }
    }

    fn json_call(&mut self, open: &str, json: &Expr, path: &Expr) {
        self.push(open);
        self.expr(json, 0, 0);
        self.push(", ");
        self.expr(path, 0, 0);
    }

    /// A JSON_VALUE `ON EMPTY` / `ON ERROR` clause, printed only when written (an unwritten
    /// clause is an empty behaviour, see `sql/json.rs`).
    fn json_behaviour(&mut self, mode: &Expr, default: &Expr, clause: &str) {
        let Some(mode) = literal_text(mode) else {
            return;
        };
        if mode.is_empty() {
            return;
        }
        self.push(" ");
        self.push(&mode);
        if mode == "DEFAULT" {
            self.push(" ");
            self.expr(default, 0, 0);
        }
        self.push(" ON ");
        self.push(clause);
    }
}

/// The binding powers of an expression that prints with operator syntax; `None` for atoms.
fn operator_prec(expr: &Expr) -> Option<(u32, u32)> {
    Some(match expr {
        Expr::Nested(inner) => return operator_prec(inner),
        Expr::BinaryOp { op, .. } => binary_prec(op),
        Expr::UnaryOp {
            op: UnaryOperator::Not,
            ..
        } => prec::NOT,
        Expr::UnaryOp { expr, .. }
            if matches!(expr.as_ref(), Expr::Value(v)
            if matches!(v.value, Value::Number(..))) =>
        {
            return None;
        }
        Expr::UnaryOp { .. } => prec::UNARY,
        Expr::IsNull(_)
        | Expr::IsNotNull(_)
        | Expr::IsTrue(_)
        | Expr::IsNotTrue(_)
        | Expr::IsFalse(_)
        | Expr::IsNotFalse(_)
        | Expr::IsUnknown(_)
        | Expr::IsNotUnknown(_) => prec::POSTFIX,
        Expr::IsDistinctFrom(..) | Expr::IsNotDistinctFrom(..) => prec::COMPARISON,
        Expr::Between { .. } => prec::BETWEEN,
        Expr::Like { .. } | Expr::SimilarTo { .. } => prec::LIKE,
        Expr::In {
            target: InTarget::List(_),
            ..
        } => prec::IN,
        _ => return None,
    })
}

fn binary_prec(op: &BinaryOperator) -> (u32, u32) {
    match op {
        BinaryOperator::Or => prec::OR,
        BinaryOperator::And => prec::AND,
        BinaryOperator::Eq
        | BinaryOperator::NotEq
        | BinaryOperator::Lt
        | BinaryOperator::LtEq
        | BinaryOperator::Gt
        | BinaryOperator::GtEq => prec::COMPARISON,
        BinaryOperator::Plus | BinaryOperator::Minus => prec::ADDITIVE,
        _ => prec::MULTIPLICATIVE,
    }
}

fn contains_and(expr: &Expr) -> bool {
    match expr {
        Expr::Nested(inner) => contains_and(inner),
        Expr::BinaryOp { left, op, right } => {
            *op == BinaryOperator::And || contains_and(left) || contains_and(right)
        }
        _ => false,
    }
}

fn literal_text(e: &Expr) -> Option<String> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// A time unit as Calcite names it (`MINUTES` → `MINUTE`, `DOW` stays).
fn unit(field: &DateTimeField) -> String {
    singular(&field.to_string().to_uppercase())
}

fn singular(unit: &str) -> String {
    match unit {
        "YEARS" => "YEAR",
        "MONTHS" => "MONTH",
        "WEEKS" => "WEEK",
        "DAYS" => "DAY",
        "HOURS" => "HOUR",
        "MINUTES" => "MINUTE",
        "SECONDS" => "SECOND",
        other => other,
    }
    .to_string()
}

/// An approximate numeric literal as Calcite prints it (`Util.toScientificNotation` of the
/// literal's `BigDecimal`): `15e-1` → `1.5E0`, `100e0` → `1E2`, `1.50e0` → `1.50E0`.
fn scientific(text: &str) -> String {
    let (mantissa, exponent) = text.split_once(['e', 'E']).unwrap_or((text, "0"));
    let exponent: i64 = exponent.trim_start_matches('+').parse().unwrap_or(0);
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // BigDecimal(mantissa e exponent): unscaled digits and scale.
    let digits = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    let scale = frac_part.len() as i64 - exponent;
    if digits.is_empty() {
        return "0E0".to_string();
    }
    let len = digits.len() as i64;
    let e = len - scale - 1;
    let mut unscaled = digits.to_string();
    if scale == 0 {
        // Trailing zeros of an integer value are not significant.
        let trimmed = unscaled.trim_end_matches('0');
        unscaled = if trimmed.is_empty() {
            "0".to_string()
        } else {
            trimmed.to_string()
        };
    }
    let mut out = unscaled[..1].to_string();
    if unscaled.len() > 1 {
        out.push('.');
        out.push_str(&unscaled[1..]);
    }
    out.push('E');
    out.push_str(&e.to_string());
    out
}

/// What the view writer needs from the catalog: the columns of a table or view by name.
pub trait ViewScope {
    fn columns(&self, table: &str) -> Option<Vec<String>>;
}

/// A view's query as Flink stores it (`SHOW CREATE VIEW`): the validated, expanded query,
/// every table fully qualified with an alias (`` FROM `default_catalog`.`default_database`.`t`
/// AS `t` ``), every column qualified by its table's alias, `*` expanded, a clause per line.
pub fn unparse_view_query(query: &sqlparser::ast::Query, scope: &dyn ViewScope) -> String {
    let mut out = String::new();
    write_query(&mut out, query, scope);
    out
}

/// A FROM item as the select list sees it: the alias and its columns.
struct Relation {
    alias: String,
    columns: Vec<String>,
}

fn write_query(out: &mut String, query: &sqlparser::ast::Query, scope: &dyn ViewScope) {
    write_set_expr(out, &query.body, scope);
    if let Some(order_by) = &query.order_by {
        out.push('\n');
        out.push_str(&order_by.to_string());
    }
}

fn write_set_expr(out: &mut String, body: &sqlparser::ast::SetExpr, scope: &dyn ViewScope) {
    use sqlparser::ast::{SetExpr, SetQuantifier};
    match body {
        SetExpr::Select(select) => write_select(out, select, scope),
        SetExpr::Query(q) => {
            out.push('(');
            write_query(out, q, scope);
            out.push(')');
        }
        SetExpr::SetOperation {
            left,
            op,
            set_quantifier,
            right,
        } => {
            write_set_expr(out, left, scope);
            out.push('\n');
            out.push_str(&op.to_string().to_uppercase());
            if matches!(set_quantifier, SetQuantifier::All) {
                out.push_str(" ALL");
            }
            out.push('\n');
            write_set_expr(out, right, scope);
        }
        SetExpr::Values(values) => {
            out.push_str("VALUES ");
            for (i, row) in values.rows.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                out.push_str("ROW(");
                for (j, e) in row.content.iter().enumerate() {
                    if j > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&unparse(e));
                }
                out.push(')');
            }
        }
        other => out.push_str(&other.to_string()),
    }
}

fn write_select(out: &mut String, select: &sqlparser::ast::Select, scope: &dyn ViewScope) {
    use sqlparser::ast::{SelectItem, SelectItemQualifiedWildcardKind};
    let mut relations = Vec::new();
    let mut from = String::new();
    for (i, table) in select.from.iter().enumerate() {
        if i > 0 {
            from.push_str(", ");
        }
        relations.push(write_relation(&mut from, &table.relation, scope));
    }
    let qualify = |parts: &[Ident]| qualify_name(parts, &relations);
    out.push_str("SELECT ");
    if select.distinct.is_some() {
        out.push_str("DISTINCT ");
    }
    let mut items = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::UnnamedExpr(e) => items.push(unparse_qualified(e, &qualify)),
            SelectItem::ExprWithAlias { expr, alias } => items.push(format!(
                "{} AS {}",
                unparse_qualified(expr, &qualify),
                quote_identifier(&alias.value)
            )),
            SelectItem::Wildcard(_) => {
                for r in &relations {
                    for c in &r.columns {
                        items.push(format!(
                            "{}.{}",
                            quote_identifier(&r.alias),
                            quote_identifier(c)
                        ));
                    }
                }
            }
            SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(name), _) => {
                let last = name
                    .0
                    .last()
                    .and_then(|p| p.as_ident())
                    .map(|i| i.value.clone());
                for r in relations.iter().filter(|r| Some(&r.alias) == last.as_ref()) {
                    for c in &r.columns {
                        items.push(format!(
                            "{}.{}",
                            quote_identifier(&r.alias),
                            quote_identifier(c)
                        ));
                    }
                }
            }
            other => items.push(other.to_string()),
        }
    }
    out.push_str(&items.join(", "));
    if !from.is_empty() {
        out.push_str("\nFROM ");
        out.push_str(&from);
    }
    if let Some(selection) = &select.selection {
        out.push_str("\nWHERE ");
        out.push_str(&unparse_qualified(selection, &qualify));
    }
}

/// Writes one FROM item and returns what its name and columns are to the select list.
fn write_relation(
    out: &mut String,
    relation: &sqlparser::ast::TableFactor,
    scope: &dyn ViewScope,
) -> Relation {
    use sqlparser::ast::TableFactor;
    let alias_columns = |alias: &Option<sqlparser::ast::TableAlias>| -> Vec<String> {
        alias
            .as_ref()
            .map(|a| a.columns.iter().map(|c| c.name.value.clone()).collect())
            .unwrap_or_default()
    };
    let write_alias = |out: &mut String, name: &str, columns: &[String]| {
        out.push_str(" AS ");
        out.push_str(&quote_identifier(name));
        if !columns.is_empty() {
            let cols: Vec<String> = columns.iter().map(|c| quote_identifier(c)).collect();
            out.push_str(&format!(" ({})", cols.join(", ")));
        }
    };
    match relation {
        TableFactor::Table { name, alias, .. } => {
            let table = name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .map(|i| i.value.clone())
                .unwrap_or_default();
            out.push_str("`default_catalog`.`default_database`.");
            out.push_str(&quote_identifier(&table));
            let alias_name = alias
                .as_ref()
                .map_or(table.clone(), |a| a.name.value.clone());
            let renamed = alias_columns(alias);
            write_alias(out, &alias_name, &renamed);
            let columns = if renamed.is_empty() {
                scope.columns(&table).unwrap_or_default()
            } else {
                renamed
            };
            Relation {
                alias: alias_name,
                columns,
            }
        }
        TableFactor::Derived {
            subquery, alias, ..
        } => {
            out.push('(');
            write_query(out, subquery, scope);
            out.push(')');
            let alias_name = alias
                .as_ref()
                .map_or("EXPR$0".to_string(), |a| a.name.value.clone());
            let renamed = alias_columns(alias);
            write_alias(out, &alias_name, &renamed);
            let columns = if renamed.is_empty() {
                output_columns(subquery, scope)
            } else {
                renamed
            };
            Relation {
                alias: alias_name,
                columns,
            }
        }
        other => {
            out.push_str(&other.to_string());
            Relation {
                alias: String::new(),
                columns: Vec::new(),
            }
        }
    }
}

/// The names a query's rows carry: aliases, column names, `EXPR$n` for other expressions.
fn output_columns(query: &sqlparser::ast::Query, scope: &dyn ViewScope) -> Vec<String> {
    use sqlparser::ast::{SelectItem, SetExpr};
    fn of(body: &SetExpr, scope: &dyn ViewScope) -> Vec<String> {
        match body {
            SetExpr::Select(select) => {
                let mut names = Vec::new();
                for item in &select.projection {
                    match item {
                        SelectItem::ExprWithAlias { alias, .. } => names.push(alias.value.clone()),
                        SelectItem::UnnamedExpr(Expr::Identifier(i)) => names.push(i.value.clone()),
                        SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => {
                            names.push(parts.last().map(|p| p.value.clone()).unwrap_or_default())
                        }
                        SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                            let mut sink = String::new();
                            for t in &select.from {
                                names.extend(write_relation(&mut sink, &t.relation, scope).columns);
                            }
                        }
                        _ => names.push(format!("EXPR${}", names.len())),
                    }
                }
                names
            }
            SetExpr::Query(q) => of(&q.body, scope),
            SetExpr::SetOperation { left, .. } => of(left, scope),
            SetExpr::Values(v) => (0..v.rows.first().map_or(0, |r| r.content.len()))
                .map(|i| format!("EXPR${i}"))
                .collect(),
            _ => Vec::new(),
        }
    }
    of(&query.body, scope)
}

/// A column reference qualified by the alias of the FROM item that has it: `a` and `t.a`
/// become `` `t`.`a` ``; a name no relation has is left as written.
fn qualify_name(parts: &[Ident], relations: &[Relation]) -> Option<Vec<String>> {
    let names: Vec<&str> = parts.iter().map(|p| p.value.as_str()).collect();
    for r in relations {
        // `alias.column…` and the fully qualified `catalog.db.table.column…`.
        if let Some(pos) = names.iter().position(|n| *n == r.alias)
            && names.len() > pos + 1
            && r.columns.iter().any(|c| c == names[pos + 1])
        {
            let mut out = vec![r.alias.clone()];
            out.extend(names[pos + 1..].iter().map(|s| s.to_string()));
            return Some(out);
        }
    }
    let first = names.first()?;
    let r = relations
        .iter()
        .find(|r| r.columns.iter().any(|c| c == first))?;
    let mut out = vec![r.alias.clone()];
    out.extend(names.iter().map(|s| s.to_string()));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approximate_literals_print_as_calcite_does() {
        assert_eq!(scientific("1.5e0"), "1.5E0");
        assert_eq!(scientific("15e-1"), "1.5E0");
        assert_eq!(scientific("100e0"), "1E2");
        assert_eq!(scientific("1.50e0"), "1.50E0");
        assert_eq!(scientific("1e10"), "1E10");
    }
}
