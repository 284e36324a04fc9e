//! `FlinkDialect`: how `sqlparser` should read Flink SQL.
//!
//! Identifiers are quoted with backticks, types are Flink's (parsed by [`super::types`] and
//! handed to `sqlparser` as a custom type carrying their canonical text), and `TABLE t`
//! inside a table function call (`TUMBLE(TABLE t, …)`) becomes `Expr::Prefixed { prefix:
//! TABLE, value: t }`. Unicode literals (`U&'\0041' UESCAPE '…'`) are decoded here into plain
//! string literals.

use sqlparser::ast::{DataType as SqlDataType, Expr, Ident, ObjectName};
use sqlparser::dialect::Dialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// The name of the custom `sqlparser` type that carries a Flink type's canonical text (and,
/// for an interval type, its qualifier as written, second).
pub const FLINK_TYPE: &str = "$FLINK_TYPE";

#[derive(Debug, Default, Clone, Copy)]
pub struct FlinkDialect;

impl Dialect for FlinkDialect {
    fn is_identifier_start(&self, ch: char) -> bool {
        ch.is_alphabetic() || ch == '_' || ch == '$'
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        ch.is_alphanumeric() || ch == '_' || ch == '$'
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        ch == '`'
    }

    /// `JOIN r FOR SYSTEM_TIME AS OF l.rowtime` (a temporal join).
    fn supports_table_versioning(&self) -> bool {
        true
    }

    fn supports_filter_during_aggregation(&self) -> bool {
        true
    }

    /// `GROUP BY GROUPING SETS (…)`, `ROLLUP (…)`, `CUBE (…)`.
    fn supports_group_by_expr(&self) -> bool {
        true
    }

    fn supports_named_fn_args_with_rarrow_operator(&self) -> bool {
        true
    }

    fn supports_window_function_null_treatment_arg(&self) -> bool {
        true
    }

    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        if let Some(literal) = typed_literal(parser) {
            return Some(literal);
        }
        if let Some(literal) = unicode_literal(parser) {
            return Some(literal);
        }
        if let Some(difference) = datetime_difference(parser) {
            return Some(difference);
        }
        if let Some(json) = super::json::parse_json_call(parser) {
            return Some(json);
        }
        // Flink's map constructor `MAP[k, v, …]`: kept as `MAP` prefixing an array literal.
        let is_map = matches!(&parser.peek_token_ref().token,
            Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("MAP"));
        if is_map && parser.peek_nth_token_ref(1).token == Token::LBracket {
            let map = parser.next_token();
            let prefix = Ident::with_span(map.span, "MAP");
            return Some(parser.expect_token(&Token::LBracket).and_then(|_| {
                let elem = if parser.consume_token(&Token::RBracket) {
                    Vec::new()
                } else {
                    let elem = parser.parse_comma_separated(Parser::parse_expr)?;
                    parser.expect_token(&Token::RBracket)?;
                    elem
                };
                Ok(Expr::Prefixed {
                    prefix,
                    value: Box::new(Expr::Array(sqlparser::ast::Array { elem, named: true })),
                })
            }));
        }
        // `ARRAY[]`: sqlparser's node keeps no position; kept as `ARRAY` prefixing the empty
        // array literal so that the binder can point at it.
        let is_array = parser.peek_token_ref().token == Token::make_keyword("ARRAY");
        if is_array
            && parser.peek_nth_token_ref(1).token == Token::LBracket
            && parser.peek_nth_token_ref(2).token == Token::RBracket
        {
            let array = parser.next_token();
            parser.next_token();
            parser.next_token();
            return Some(Ok(Expr::Prefixed {
                prefix: Ident::with_span(array.span, "ARRAY"),
                value: Box::new(Expr::Array(sqlparser::ast::Array {
                    elem: Vec::new(),
                    named: true,
                })),
            }));
        }
        let is_table_arg = parser.peek_token_ref().token == Token::make_keyword("TABLE")
            && matches!(parser.peek_nth_token_ref(1).token, Token::Word(_));
        if !is_table_arg {
            return None;
        }
        let table = parser.next_token();
        let prefix = match table.token {
            Token::Word(w) => Ident::with_span(table.span, w.value),
            _ => return None,
        };
        Some(
            parser
                .parse_object_name(false)
                .and_then(|name: ObjectName| {
                    let table = object_name_expr(name);
                    // `TABLE t PARTITION BY k` or `PARTITION BY (k1, k2)` (SESSION's partition keys):
                    // kept as `PARTITION BY` prefixing the table and its keys.
                    let value = if parser.peek_keyword(Keyword::PARTITION)
                        && matches!(&parser.peek_nth_token_ref(1).token,
                    Token::Word(w) if w.keyword == Keyword::BY)
                    {
                        let partition = parser.next_token();
                        parser.next_token();
                        let mut items = vec![table];
                        if parser.consume_token(&Token::LParen) {
                            items.extend(parser.parse_comma_separated(Parser::parse_expr)?);
                            parser.expect_token(&Token::RParen)?;
                        } else {
                            items.push(parser.parse_expr()?);
                        }
                        Expr::Prefixed {
                            prefix: Ident::with_span(partition.span, "PARTITION BY"),
                            value: Box::new(Expr::Tuple(items)),
                        }
                    } else {
                        table
                    };
                    Ok(Expr::Prefixed {
                        prefix,
                        value: Box::new(value),
                    })
                }),
        )
    }

    /// `x [NOT] BETWEEN SYMMETRIC a AND b` (either order of the bounds) and `… ASYMMETRIC …`
    /// (the plain BETWEEN), which sqlparser does not know.
    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        _precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        let word_at = |parser: &Parser, n: usize, name: &str| {
            matches!(&parser.peek_nth_token_ref(n).token,
                Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(name))
        };
        let negated = word_at(parser, 0, "NOT");
        let at = usize::from(negated);
        if !word_at(parser, at, "BETWEEN") {
            return None;
        }
        let symmetric = word_at(parser, at + 1, "SYMMETRIC");
        if !symmetric && !word_at(parser, at + 1, "ASYMMETRIC") {
            return None;
        }
        for _ in 0..at + 2 {
            parser.next_token();
        }
        Some(parser.parse_between(expr.clone(), false).map(|between| {
            let either = match between {
                Expr::Between {
                    expr, low, high, ..
                } if symmetric => Expr::Nested(Box::new(Expr::BinaryOp {
                    left: Box::new(Expr::Between {
                        expr: expr.clone(),
                        negated: false,
                        low: low.clone(),
                        high: high.clone(),
                    }),
                    op: sqlparser::ast::BinaryOperator::Or,
                    right: Box::new(Expr::Between {
                        expr,
                        negated: false,
                        low: high,
                        high: low,
                    }),
                })),
                other => other,
            };
            if negated {
                Expr::UnaryOp {
                    op: sqlparser::ast::UnaryOperator::Not,
                    expr: Box::new(Expr::Nested(Box::new(either))),
                }
            } else {
                either
            }
        }))
    }

    fn parse_data_type(&self, parser: &mut Parser) -> Option<Result<SqlDataType, ParserError>> {
        let Token::Word(word) = &parser.peek_token_ref().token else {
            return None;
        };
        if word.quote_style.is_some() || !super::types::is_type_name(&word.value) {
            return None;
        }
        // Types in expressions (CAST, RETURNING) have no top-level NOT NULL in Flink. The
        // modifiers: the canonical type, its spelling as written (what a printed CAST shows)
        // and, for an interval, its qualifier.
        let start = parser.index();
        Some(
            super::types::parse_cast_type(parser).map(|(ty, qualifier)| {
                let spelling = written_spelling(parser, start);
                let mut modifiers = vec![
                    sqlparser::ast::TypeModifier::String(ty.to_string()),
                    sqlparser::ast::TypeModifier::String(spelling),
                ];
                if let Some(q) = qualifier {
                    modifiers.push(sqlparser::ast::TypeModifier::String(q.sql()));
                }
                SqlDataType::Custom(ObjectName::from(vec![Ident::new(FLINK_TYPE)]), modifiers)
            }),
        )
    }
}

/// The type the parser just read, spelled as Calcite prints a type it parsed (`CAST(x AS …)` in
/// `DESC`): the words as written, upper case, with the SQL names of Flink's aliases (`INT` →
/// `INTEGER`, `DEC` / `NUMERIC` → `DECIMAL`, `DOUBLE PRECISION` → `DOUBLE`), `WITHOUT TIME
/// ZONE` dropped, `DECIMAL(5, 1)` and `ARRAY< BIGINT >` spaced as Calcite spaces them.
fn written_spelling(parser: &mut Parser, start: usize) -> String {
    let end = parser.index();
    // Back to the type's first token: stepping back skips whitespace and may land on the
    // token before `start`, which stepping forward consumes again.
    while parser.index() > start {
        parser.prev_token();
    }
    while parser.index() < start {
        parser.next_token();
    }
    let mut words: Vec<String> = Vec::new();
    while parser.index() < end {
        let token = parser.next_token().token;
        words.push(match token {
            Token::Word(w) => w.value.to_ascii_uppercase(),
            other => other.to_string(),
        });
    }
    let mut out = String::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let next = words.get(i + 1).map(String::as_str);
        let piece = match (w, next) {
            ("DOUBLE", Some("PRECISION")) => {
                i += 1;
                "DOUBLE".to_string()
            }
            ("WITHOUT", _) => {
                i += 3;
                continue;
            }
            ("INT", _) => "INTEGER".to_string(),
            ("DEC" | "NUMERIC", _) => "DECIMAL".to_string(),
            _ => w.to_string(),
        };
        i += 1;
        match piece.as_str() {
            "(" | ")" => out.push_str(&piece),
            "," => out.push_str(", "),
            "<" => out.push_str("< "),
            ">" => out.push_str(" >"),
            ">>" => out.push_str(" > >"),
            _ => {
                if !out.is_empty() && !out.ends_with(['(', ' ']) {
                    out.push(' ');
                }
                out.push_str(&piece);
            }
        }
    }
    out
}

/// `TIMESTAMP '…'`, `DATE '…'`, `TIME '…'`, `TIMESTAMP_LTZ '…'`.
fn typed_literal(parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
    let Token::Word(word) = &parser.peek_token_ref().token else {
        return None;
    };
    let name = word.value.to_ascii_uppercase();
    if word.quote_style.is_some()
        || !matches!(
            name.as_str(),
            "TIMESTAMP" | "DATE" | "TIME" | "TIMESTAMP_LTZ"
        )
    {
        return None;
    }
    let literal = parser.peek_nth_token_ref(1).clone();
    let Token::SingleQuotedString(text) = &literal.token else {
        return None;
    };
    if name == "TIMESTAMP_LTZ" {
        // Flink's grammar has no TIMESTAMP_LTZ literal.
        let at = parser.peek_token_ref().span;
        return Some(Err(super::parser::error_at(
            at,
            "Incorrect syntax near the keyword 'TIMESTAMP_LTZ'",
        )));
    }
    if let Err(message) = check_datetime_literal(&name, text) {
        let at = parser.peek_token_ref().span;
        return Some(Err(super::parser::error_at(at, message)));
    }
    // Digits past nanoseconds are dropped, as Flink drops them.
    let text = &truncate_fraction(text, 9);
    parser.next_token();
    parser.next_token();
    let ty = match name.as_str() {
        "TIMESTAMP" => "TIMESTAMP(9)",
        "TIMESTAMP_LTZ" => "TIMESTAMP_LTZ(9)",
        "TIME" => "TIME(9)",
        _ => "DATE",
    };
    Some(Ok(Expr::TypedString(sqlparser::ast::TypedString {
        data_type: SqlDataType::Custom(
            ObjectName::from(vec![Ident::new(FLINK_TYPE)]),
            vec![sqlparser::ast::TypeModifier::String(ty.to_string())],
        ),
        value: sqlparser::ast::ValueWithSpan {
            value: sqlparser::ast::Value::SingleQuotedString(text.clone()),
            span: literal.span,
        },
        uses_odbc_syntax: false,
    })))
}

/// The units `(a - b) <unit>` takes, and whether they count months.
const DIFFERENCE_UNITS: &[(&str, bool)] = &[
    ("YEAR", true),
    ("MONTH", true),
    ("WEEK", false),
    ("DAY", false),
    ("HOUR", false),
    ("MINUTE", false),
    ("SECOND", false),
];

fn difference_unit(token: &Token) -> Option<bool> {
    match token {
        Token::Word(w) if w.quote_style.is_none() => DIFFERENCE_UNITS
            .iter()
            .find(|(u, _)| w.value.eq_ignore_ascii_case(u))
            .map(|(_, months)| *months),
        _ => None,
    }
}

/// `(a - b) DAY`, `(a - b) YEAR TO MONTH`, …: the difference of two datetimes as an interval
/// (Calcite's three-argument minus). Recognized when a parenthesized expression with a
/// top-level `-` is followed by an interval unit; it becomes a call of the internal
/// `DATETIME_MINUS_MILLIS` or `DATETIME_MINUS_MONTHS` (by the leading unit) with the
/// qualifier's text as a third argument.
fn datetime_difference(parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
    if parser.peek_token_ref().token != Token::LParen {
        return None;
    }
    // Look ahead to the matching `)` with `next_token` (each `peek_nth_token_ref` counts from
    // the current token, which made nested parentheses cubic), then rewind.
    let mut ahead: Option<(bool, Option<bool>)> = None;
    let _ = parser.try_parse(|p| -> Result<(), ParserError> {
        let (mut depth, mut minus) = (0usize, false);
        loop {
            match p.next_token().token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Token::Minus if depth == 1 => minus = true,
                Token::EOF => return Err(ParserError::ParserError(String::new())),
                _ => {}
            }
        }
        ahead = Some((minus, difference_unit(&p.peek_token_ref().token)));
        // Always rewind: this was only a look.
        Err(ParserError::ParserError(String::new()))
    });
    let (minus, months) = ahead?;
    let months = months?;
    if !minus {
        return None;
    }
    Some((|| {
        parser.expect_token(&Token::LParen)?;
        let inner = parser.parse_expr()?;
        parser.expect_token(&Token::RParen)?;
        let mut qualifier = parser.next_token().token.to_string().to_ascii_uppercase();
        let precision = |parser: &mut Parser| -> Result<String, ParserError> {
            if parser.consume_token(&Token::LParen) {
                let n = parser.parse_literal_uint()?;
                parser.expect_token(&Token::RParen)?;
                Ok(format!("({n})"))
            } else {
                Ok(String::new())
            }
        };
        qualifier.push_str(&precision(parser)?);
        let to = matches!(&parser.peek_token_ref().token,
            Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("TO"));
        if to {
            parser.next_token();
            let last = parser.next_token();
            if difference_unit(&last.token).is_none() {
                return Err(super::parser::error_at(
                    last.span,
                    format!("expected an interval unit after TO, found {}", last.token),
                ));
            }
            qualifier.push_str(&format!(
                " TO {}",
                last.token.to_string().to_ascii_uppercase()
            ));
            qualifier.push_str(&precision(parser)?);
        }
        let Expr::BinaryOp {
            left,
            op: sqlparser::ast::BinaryOperator::Minus,
            right,
        } = inner
        else {
            let at = parser.get_current_token().span;
            return Err(super::parser::error_at(
                at,
                format!("expected (datetime - datetime) before {qualifier}"),
            ));
        };
        let name = if months {
            "DATETIME_MINUS_MONTHS"
        } else {
            "DATETIME_MINUS_MILLIS"
        };
        Ok(super::json::call(
            name,
            vec![
                *left,
                *right,
                super::json::text(&format!("INTERVAL {qualifier}")),
            ],
        ))
    })())
}

/// `U&'…'` with an optional `UESCAPE 'c'` (default `\\`): a string literal whose escape
/// character followed by four hex digits is that UTF-16 unit, and doubled is itself.
/// The tokenizer sees `U`, `&` and a string; they form the literal only when adjacent.
fn unicode_literal(parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
    let (u, amp, string) = (
        parser.peek_nth_token_ref(0),
        parser.peek_nth_token_ref(1),
        parser.peek_nth_token_ref(2),
    );
    let is_u = matches!(&u.token,
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("U"));
    let Token::SingleQuotedString(text) = &string.token else {
        return None;
    };
    if !is_u
        || amp.token != Token::Ampersand
        || u.span.end != amp.span.start
        || amp.span.end != string.span.start
    {
        return None;
    }
    let (text, span) = (text.clone(), string.span);
    let start = u.span;
    for _ in 0..3 {
        parser.next_token();
    }
    let mut escape = '\\';
    let uescape = matches!(&parser.peek_token_ref().token,
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("UESCAPE"));
    if uescape {
        parser.next_token();
        let given = parser.next_token();
        let Token::SingleQuotedString(c) = &given.token else {
            return Some(Err(super::parser::error_at(
                given.span,
                format!(
                    "expected a quoted character after UESCAPE, found {}",
                    given.token
                ),
            )));
        };
        escape = match unicode_escape_char(c) {
            Ok(e) => e,
            Err(message) => return Some(Err(super::parser::error_at(given.span, message))),
        };
    }
    Some(
        unescape_unicode(&text, escape)
            .map_err(|message| super::parser::error_at(start, message))
            .map(|value| {
                Expr::Value(sqlparser::ast::ValueWithSpan {
                    value: sqlparser::ast::Value::SingleQuotedString(value),
                    span,
                })
            }),
    )
}

/// The character of `UESCAPE '…'`, refused as Calcite refuses it.
fn unicode_escape_char(text: &str) -> Result<char, String> {
    let mut chars = text.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return Err(format!("UESCAPE '{text}' must be exactly one character"));
    };
    if c.is_ascii_hexdigit() || c.is_whitespace() || c == '+' || c == '"' {
        return Err(format!(
            "UESCAPE '{text}' may not be hex digit, whitespace, plus sign, or double quote"
        ));
    }
    Ok(c)
}

/// Calcite's reading of a Unicode literal's body. The four characters after the escape go
/// through Java's `Integer.parseInt(…, 16)`, which also takes a leading sign (`\\+01F` is
/// U+001F), and become one UTF-16 unit; a surrogate pair becomes its character and a lone
/// surrogate the `?` Java's UTF-8 encoder writes for it. Errors name the escape's index in
/// UTF-16 units, as Java counts.
fn unescape_unicode(text: &str, escape: char) -> Result<String, String> {
    let units: Vec<u16> = text.encode_utf16().collect();
    let escape_unit = {
        let mut buf = [0u16; 2];
        let e = escape.encode_utf16(&mut buf);
        (e.len() == 1).then_some(e[0])
    };
    let mut out: Vec<u16> = Vec::with_capacity(units.len());
    let mut i = 0;
    while i < units.len() {
        if Some(units[i]) != escape_unit {
            out.push(units[i]);
            i += 1;
            continue;
        }
        if units.get(i + 1) == escape_unit.as_ref() {
            out.push(units[i]);
            i += 2;
            continue;
        }
        let malformed = || {
            format!(
                "Unicode escape sequence starting at character {i} is not exactly four hex digits"
            )
        };
        let digits = units.get(i + 1..i + 5).ok_or_else(malformed)?;
        let digits = String::from_utf16(digits).map_err(|_| malformed())?;
        let value = java_parse_hex(&digits).ok_or_else(malformed)?;
        out.push((value & 0xFFFF) as u16);
        i += 5;
    }
    Ok(char::decode_utf16(out).map(|c| c.unwrap_or('?')).collect())
}

/// `Integer.parseInt(s, 16)` for the short strings above: an optional sign, then hex digits.
fn java_parse_hex(s: &str) -> Option<i64> {
    let (negative, digits) = match s.as_bytes().first()? {
        b'+' => (false, &s[1..]),
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let v = i64::from_str_radix(digits, 16).ok()?;
    Some(if negative { -v } else { v })
}

/// Calcite's shape check of a DATE, TIME or TIMESTAMP literal, stricter than a CAST from a
/// string: `yyyy-MM-dd` (one or two digits for the month and day, a real calendar day),
/// `HH:mm:ss[.f…]` (in range) and `yyyy-MM-dd[ HH:mm:ss[.f…]]`, nothing else — no `T`, no
/// zone, no missing seconds.
fn check_datetime_literal(name: &str, text: &str) -> Result<(), String> {
    fn number(s: &str, max_digits: usize) -> Option<u32> {
        (!s.is_empty() && s.len() <= max_digits && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    }
    fn date(s: &str) -> bool {
        let mut parts = s.splitn(3, '-');
        let (Some(y), Some(m), Some(d)) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        let (Some(y), Some(m), Some(d)) = (number(y, 4), number(m, 2), number(d, 2)) else {
            return false;
        };
        let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        let days = match m {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return false,
        };
        (1..=days).contains(&d)
    }
    fn time(s: &str) -> bool {
        let (whole, fraction) = match s.split_once('.') {
            Some((w, f)) => (w, Some(f)),
            None => (s, None),
        };
        if fraction.is_some_and(|f| f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit())) {
            return false;
        }
        let mut parts = whole.splitn(3, ':');
        let (Some(h), Some(m), Some(sec)) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        matches!(
            (number(h, 2), number(m, 2), number(sec, 2)),
            (Some(h), Some(m), Some(sec)) if h < 24 && m < 60 && sec < 60
        )
    }
    let trimmed = text.trim();
    let (ok, format) = match name {
        "DATE" => (date(trimmed), "yyyy-MM-dd"),
        "TIME" => (time(trimmed), "HH:mm:ss"),
        _ => (
            match trimmed.split_once(' ') {
                Some((d, t)) => date(d) && time(t.trim_start()),
                None => date(trimmed),
            },
            "yyyy-MM-dd HH:mm:ss",
        ),
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "Illegal {name} literal '{text}': not in format '{format}'"
        ))
    }
}

/// The literal text with at most `digits` digits after the seconds' point.
fn truncate_fraction(text: &str, digits: usize) -> String {
    match text.rsplit_once('.') {
        Some((whole, fraction)) if fraction.trim_end().len() > digits && whole.contains(':') => {
            format!("{whole}.{}", &fraction.trim_end()[..digits])
        }
        _ => text.to_string(),
    }
}

fn object_name_expr(name: ObjectName) -> Expr {
    let mut idents: Vec<Ident> = name
        .0
        .into_iter()
        .filter_map(|part| part.as_ident().cloned())
        .collect();
    if idents.len() == 1 {
        Expr::Identifier(idents.remove(0))
    } else {
        Expr::CompoundIdentifier(idents)
    }
}
