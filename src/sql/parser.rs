//! The statement layer: Flink statements parsed by driving `sqlparser`'s `Parser`.

use sqlparser::ast::{Ident, ObjectName};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Tokenizer, Whitespace};

use super::ast::*;
use super::dialect::FlinkDialect;
use super::error::{SqlError, from_parser_error};
use super::split::StatementText;

/// Parses one statement of a script; positions in errors and in the AST are the script's.
pub fn parse_statement(stmt: &StatementText) -> Result<ParsedStatement, SqlError> {
    let dialect = FlinkDialect;
    let mut tokens = Tokenizer::new(&dialect, &stmt.text)
        .tokenize_with_location()
        .map_err(|e| {
            let at = shift(e.location, stmt);
            SqlError::new(
                format!("syntax error: {}", lower_first(&e.message)),
                at.line,
                at.column,
            )
        })?;
    for token in &mut tokens {
        token.span = Span::new(shift(token.span.start, stmt), shift(token.span.end, stmt));
    }
    reject_empty_identifiers(&tokens)?;
    let hints = collect_hints(&tokens)?;
    let position = Position {
        line: stmt.line,
        column: stmt.column,
    };
    // The last character of the statement: where Flink places an error at the end of input.
    let end = tokens
        .iter()
        .rev()
        .find(|t| !matches!(t.token, Token::Whitespace(_) | Token::EOF))
        .map(|t| last_character(t.span));
    let mut parser = Parser::new(&dialect)
        .with_recursion_limit(PARSER_RECURSION_LIMIT)
        .with_tokens_with_locations(tokens);
    let statement = StatementParser {
        parser: &mut parser,
    }
    .statement();
    let statement = statement.map_err(|e| {
        let mut error = from_parser_error(&e);
        if error.line == 0 {
            // sqlparser gives no position at the end of input, nor where nesting became too
            // deep: the token the parser stopped at, or the statement's last character.
            let at = match parser.peek_token_ref() {
                t if t.token != Token::EOF && t.span.start.line > 0 => Some(t.span.start),
                _ => end,
            };
            if let Some(at) = at {
                error.line = at.line;
                error.column = at.column;
            }
        }
        error
    })?;
    Ok(ParsedStatement {
        statement,
        hints,
        position,
    })
}

/// How deep sqlparser may recurse (its stack grows on the heap past that of the thread).
/// Its default, 50, refuses `ABS(ABS(…))` 50 deep, which Flink plans; Flink's own parser
/// overflows its stack near 1,000 levels.
const PARSER_RECURSION_LIMIT: usize = 2_000;

fn position_of(span: Span) -> Position {
    Position {
        line: span.start.line,
        column: span.start.column,
    }
}

/// The position of a token's last character (sqlparser's span ends after it).
fn last_character(span: Span) -> Location {
    if span.end.line == span.start.line && span.end.column > span.start.column {
        Location::new(span.end.line, span.end.column - 1)
    } else {
        span.start
    }
}

/// Flink's lexer has no empty quoted identifier: ``` `` ``` is a lexical error at the character
/// after it, reported as JavaCC reports one.
fn reject_empty_identifiers(tokens: &[TokenWithSpan]) -> Result<(), SqlError> {
    for (i, token) in tokens.iter().enumerate() {
        let Token::Word(w) = &token.token else {
            continue;
        };
        if w.quote_style != Some('`') || !w.value.is_empty() {
            continue;
        }
        let next = tokens
            .get(i + 1)
            .map(|t| t.token.to_string())
            .and_then(|t| t.chars().next());
        let encountered = match next {
            Some(c) => format!("\"{}\" ({}), ", javacc_escape(c), c as u32),
            None => "<EOF> ".to_string(),
        };
        let at = token.span.end;
        return Err(SqlError::new(
            format!(
                "SQL parse failed. Lexical error at line {}, column {}.  Encountered: {encountered}after : \"``\"",
                at.line, at.column
            ),
            at.line,
            at.column,
        ));
    }
    Ok(())
}

/// A character as JavaCC's `TokenMgrError.addEscapes` shows it.
fn javacc_escape(c: char) -> String {
    match c {
        '\u{8}' => "\\b".into(),
        '\t' => "\\t".into(),
        '\n' => "\\n".into(),
        '\u{c}' => "\\f".into(),
        '\r' => "\\r".into(),
        '"' => "\\\"".into(),
        '\'' => "\\'".into(),
        '\\' => "\\\\".into(),
        c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
            let mut units = [0u16; 2];
            c.encode_utf16(&mut units)
                .iter()
                .map(|u| format!("\\u{u:04x}"))
                .collect()
        }
        c => c.to_string(),
    }
}

fn shift(loc: Location, stmt: &StatementText) -> Location {
    if loc.line == 0 {
        return loc;
    }
    let column = if loc.line == 1 {
        loc.column + stmt.column - 1
    } else {
        loc.column
    };
    Location::new(loc.line + stmt.line - 1, column)
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

pub(crate) fn error_at(span: Span, message: impl Into<String>) -> ParserError {
    ParserError::ParserError(format!(
        "{} at Line: {}, Column: {}",
        message.into(),
        span.start.line,
        span.start.column
    ))
}

/// `/*+ OPTIONS('k' = 'v') */` comments, in order of appearance.
fn collect_hints(tokens: &[TokenWithSpan]) -> Result<Vec<TableHint>, SqlError> {
    let mut hints = Vec::new();
    // Where the last token that is not whitespace or a comment ended.
    let mut last_end = Position { line: 0, column: 0 };
    for token in tokens {
        let Token::Whitespace(Whitespace::MultiLineComment(text)) = &token.token else {
            if !matches!(token.token, Token::Whitespace(_)) {
                last_end = Position {
                    line: token.span.end.line,
                    column: token.span.end.column,
                };
            }
            continue;
        };
        let Some(body) = text.strip_prefix('+') else {
            continue;
        };
        let at = Position {
            line: token.span.start.line,
            column: token.span.start.column,
        };
        let bad =
            |what: &str| SqlError::new(format!("syntax error: {what} in hint"), at.line, at.column);
        let dialect = FlinkDialect;
        let mut parser = Parser::new(&dialect)
            .try_with_sql(body)
            .map_err(|_| bad("invalid text"))?;
        loop {
            let name = parser
                .parse_identifier()
                .map_err(|_| bad("expected a hint name"))?;
            let mut options = Vec::new();
            if parser.consume_token(&Token::LParen) && !parser.consume_token(&Token::RParen) {
                loop {
                    let key = parser
                        .parse_literal_string()
                        .map_err(|_| bad("expected 'key'"))?;
                    let value = if parser.consume_token(&Token::Eq) {
                        parser
                            .parse_literal_string()
                            .map_err(|_| bad("expected 'value'"))?
                    } else {
                        String::new()
                    };
                    options.push((key, value));
                    if parser.consume_token(&Token::RParen) {
                        break;
                    }
                    parser
                        .expect_token(&Token::Comma)
                        .map_err(|_| bad("expected ','"))?;
                }
            }
            hints.push(TableHint {
                name: name.value.to_ascii_uppercase(),
                options,
                position: at,
                follows: last_end,
            });
            if !parser.consume_token(&Token::Comma) {
                break;
            }
        }
        if parser.peek_token_ref().token != Token::EOF {
            return Err(bad("unexpected text"));
        }
    }
    Ok(hints)
}

struct StatementParser<'a, 'b> {
    parser: &'a mut Parser<'b>,
}

impl StatementParser<'_, '_> {
    fn peek_word(&self, n: usize) -> Option<String> {
        match &self.parser.peek_nth_token_ref(n).token {
            Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
            _ => None,
        }
    }

    fn keyword(&mut self, kw: &str) -> bool {
        if self.peek_word(0).as_deref() == Some(kw) {
            self.parser.next_token();
            true
        } else {
            false
        }
    }

    fn keywords(&mut self, kws: &[&str]) -> bool {
        if kws
            .iter()
            .enumerate()
            .all(|(i, kw)| self.peek_word(i).as_deref() == Some(kw))
        {
            for _ in kws {
                self.parser.next_token();
            }
            true
        } else {
            false
        }
    }

    fn expect_keyword(&mut self, kw: &str) -> Result<(), ParserError> {
        if self.keyword(kw) {
            Ok(())
        } else {
            let found = self.parser.peek_token_ref().clone();
            Err(error_at(
                found.span,
                format!("expected {kw}, found {}", found.token),
            ))
        }
    }

    fn statement(mut self) -> Result<Statement, ParserError> {
        let statement = self.statement_body()?;
        while self.parser.consume_token(&Token::SemiColon) {}
        let next = self.parser.peek_token_ref().clone();
        if next.token != Token::EOF {
            return Err(error_at(
                next.span,
                format!("unexpected {} after the statement", next.token),
            ));
        }
        Ok(statement)
    }

    /// `STOP JOB '<id>' [WITH SAVEPOINT] [WITH DRAIN]`, with Flink's refusal of a drain
    /// without a savepoint.
    fn stop_job(&mut self) -> Result<Statement, ParserError> {
        self.parser.next_token();
        self.expect_keyword("JOB")?;
        let id = self.parser.parse_literal_string()?;
        let mut savepoint = false;
        let mut drain = false;
        loop {
            let at = self.parser.peek_token_ref().span;
            if !savepoint && self.keywords(&["WITH", "SAVEPOINT"]) {
                savepoint = true;
            } else if !drain && self.keywords(&["WITH", "DRAIN"]) {
                if !savepoint {
                    return Err(error_at(
                        at,
                        "WITH DRAIN could only be used after WITH SAVEPOINT.",
                    ));
                }
                drain = true;
            } else {
                break;
            }
        }
        Ok(Statement::StopJob {
            id,
            savepoint,
            drain,
        })
    }

    fn statement_body(&mut self) -> Result<Statement, ParserError> {
        let first = self.parser.peek_token_ref().clone();
        let Some(word) = self.peek_word(0) else {
            if first.token == Token::LParen {
                return Ok(Statement::Query(self.parser.parse_query()?));
            }
            return Err(error_at(
                first.span,
                format!("expected a statement, found {}", first.token),
            ));
        };
        match word.as_str() {
            "SELECT" | "WITH" | "VALUES" => Ok(Statement::Query(self.parser.parse_query()?)),
            "CREATE" => self.create(),
            "DROP" => self.drop(),
            "SET" => self.set(),
            "RESET" => self.reset(),
            "SHOW" => self.show(),
            "STOP" => self.stop_job(),
            "DESC" | "DESCRIBE"
                if self.peek_word(1).as_deref() == Some("JOB")
                    && matches!(
                        self.parser.peek_nth_token_ref(2).token,
                        Token::SingleQuotedString(_)
                    ) =>
            {
                self.parser.next_token();
                self.parser.next_token();
                Ok(Statement::DescribeJob(self.parser.parse_literal_string()?))
            }
            "DESC" | "DESCRIBE" => {
                self.parser.next_token();
                self.keyword("EXTENDED");
                let name = self.parser.parse_object_name(false)?;
                Ok(Statement::Describe { name, like: None })
            }
            "EXPLAIN" => {
                self.parser.next_token();
                let mut changelog_mode = false;
                if !self.keywords(&["PLAN", "FOR"]) {
                    // Flink's explain details, comma-separated.
                    loop {
                        let at = self.parser.peek_token();
                        match self.peek_word(0).as_deref() {
                            Some("CHANGELOG_MODE") => changelog_mode = true,
                            Some(
                                detail @ ("ESTIMATED_COST" | "PLAN_ADVICE" | "JSON_EXECUTION_PLAN"),
                            ) => {
                                return Err(error_at(
                                    at.span,
                                    format!("EXPLAIN {detail} is not supported yet"),
                                ));
                            }
                            _ => break,
                        }
                        self.parser.next_token();
                        if !self.parser.consume_token(&Token::Comma) {
                            break;
                        }
                    }
                }
                let statement = if self.keywords(&["STATEMENT", "SET"]) {
                    self.statement_set()?
                } else {
                    self.statement_body()?
                };
                Ok(Statement::Explain {
                    statement: Box::new(statement),
                    changelog_mode,
                })
            }
            "INSERT" => self.insert(),
            "EXECUTE" => {
                self.parser.next_token();
                if self.keywords(&["STATEMENT", "SET"]) {
                    self.statement_set()
                } else if self.peek_word(0).as_deref() == Some("INSERT") {
                    self.insert()
                } else {
                    let found = self.parser.peek_token_ref().clone();
                    Err(error_at(
                        found.span,
                        format!("expected STATEMENT SET or INSERT, found {}", found.token),
                    ))
                }
            }
            "BEGIN" => {
                self.parser.next_token();
                self.expect_keyword("STATEMENT")?;
                self.expect_keyword("SET")?;
                Ok(Statement::BeginStatementSet)
            }
            "END" => {
                self.parser.next_token();
                Ok(Statement::EndStatementSet)
            }
            "ALTER" => self.alter(),
            "USE" => {
                self.parser.next_token();
                let catalog = self.keyword("CATALOG");
                let name = self.parser.parse_object_name(false)?;
                Ok(Statement::Use { catalog, name })
            }
            _ => Err(error_at(
                first.span,
                format!("unsupported statement {word}"),
            )),
        }
    }

    fn create(&mut self) -> Result<Statement, ParserError> {
        self.parser.next_token();
        self.keywords(&["OR", "REPLACE"])
            .then_some(())
            .map_or(Ok(()), |_| {
                Err(error_at(
                    self.parser.get_current_token().span,
                    "CREATE OR REPLACE is not supported",
                ))
            })?;
        let temporary = self.keyword("TEMPORARY");
        let system = temporary && self.keyword("SYSTEM");
        if self.keyword("FUNCTION") {
            self.create_function(system)
        } else if system {
            let found = self.parser.peek_token_ref().clone();
            Err(error_at(
                found.span,
                format!(
                    "expected FUNCTION after CREATE TEMPORARY SYSTEM, found {}",
                    found.token
                ),
            ))
        } else if self.keyword("TABLE") {
            self.create_table(temporary)
        } else if self.keyword("VIEW") {
            let if_not_exists = self.keywords(&["IF", "NOT", "EXISTS"]);
            let name = self.parser.parse_object_name(false)?;
            let mut columns = Vec::new();
            if self.parser.consume_token(&Token::LParen) {
                loop {
                    columns.push(self.parser.parse_identifier()?.value);
                    if !self.parser.consume_token(&Token::Comma) {
                        break;
                    }
                }
                self.parser.expect_token(&Token::RParen)?;
            }
            let comment = if self.keyword("COMMENT") {
                Some(self.parser.parse_literal_string()?)
            } else {
                None
            };
            self.expect_keyword("AS")?;
            let query = self.parser.parse_query()?;
            Ok(Statement::CreateView(CreateView {
                name,
                temporary,
                if_not_exists,
                columns,
                comment,
                query,
            }))
        } else {
            let found = self.parser.peek_token_ref().clone();
            Err(error_at(
                found.span,
                format!(
                    "expected TABLE, VIEW or FUNCTION after CREATE, found {}",
                    found.token
                ),
            ))
        }
    }

    fn create_function(&mut self, system: bool) -> Result<Statement, ParserError> {
        let if_not_exists = self.keywords(&["IF", "NOT", "EXISTS"]);
        let name = self.parser.parse_object_name(false)?;
        self.expect_keyword("AS")?;
        let class = self.parser.parse_literal_string()?;
        let language = if self.keyword("LANGUAGE") {
            self.parser.parse_identifier()?.value.to_uppercase()
        } else {
            "JAVA".to_string()
        };
        if self.keyword("USING") {
            loop {
                self.expect_keyword("JAR")?;
                self.parser.parse_literal_string()?;
                if !self.parser.consume_token(&Token::Comma) {
                    break;
                }
            }
        }
        Ok(Statement::CreateFunction {
            name,
            class,
            language,
            system,
            if_not_exists,
        })
    }

    fn create_table(&mut self, temporary: bool) -> Result<Statement, ParserError> {
        let if_not_exists = self.keywords(&["IF", "NOT", "EXISTS"]);
        let name = self.parser.parse_object_name(false)?;
        let mut table = CreateTable::named(name, temporary, if_not_exists);
        if self.keyword("AS") {
            let query = self.parser.parse_query()?;
            return Ok(Statement::CreateTableAs { table, query });
        }
        // The column list is optional when a LIKE clause gives the columns.
        if self.parser.consume_token(&Token::LParen) {
            loop {
                self.table_element(&mut table)?;
                if self.parser.consume_token(&Token::RParen) {
                    break;
                }
                self.parser.expect_token(&Token::Comma)?;
            }
        } else if !matches!(
            self.peek_word(0).as_deref(),
            Some("LIKE" | "WITH" | "COMMENT")
        ) {
            self.parser.expect_token(&Token::LParen)?;
        }
        if self.keyword("COMMENT") {
            table.comment = Some(self.parser.parse_literal_string()?);
        }
        if self.keywords(&["PARTITIONED", "BY"]) {
            self.parser.expect_token(&Token::LParen)?;
            loop {
                table
                    .partition_keys
                    .push(self.parser.parse_identifier()?.value);
                if !self.parser.consume_token(&Token::Comma) {
                    break;
                }
            }
            self.parser.expect_token(&Token::RParen)?;
        }
        if self.keyword("WITH") {
            table.options = self.options()?;
        }
        if self.peek_word(0).as_deref() == Some("AS") {
            let at = self.parser.peek_token_ref().span;
            if !table.columns.is_empty() || table.watermark.is_some() || table.primary_key.is_some()
            {
                return Err(error_at(
                    at,
                    "CREATE TABLE … AS SELECT with a column list, watermark or primary key is not supported yet",
                ));
            }
            self.parser.next_token();
            let query = self.parser.parse_query()?;
            return Ok(Statement::CreateTableAs { table, query });
        }
        if self.peek_word(0).as_deref() == Some("LIKE") {
            table.like = Some(self.table_like()?);
        } else if table.columns.is_empty() && table.watermark.is_none() {
            let at = self.parser.peek_token_ref().span;
            return Err(error_at(at, "expected a column list or LIKE"));
        }
        Ok(Statement::CreateTable(table))
    }

    /// `LIKE source [( {INCLUDING | EXCLUDING | OVERWRITING} {ALL | OPTIONS | …} , … )]`.
    fn table_like(&mut self) -> Result<TableLike, ParserError> {
        self.expect_keyword("LIKE")?;
        let source_at = self.parser.peek_token_ref().span;
        let source = self.parser.parse_object_name(false)?;
        let mut options = Vec::new();
        if self.parser.consume_token(&Token::LParen) {
            loop {
                let mode = if self.keyword("INCLUDING") {
                    LikeMode::Including
                } else if self.keyword("EXCLUDING") {
                    LikeMode::Excluding
                } else if self.keyword("OVERWRITING") {
                    LikeMode::Overwriting
                } else {
                    let found = self.parser.peek_token_ref().clone();
                    return Err(error_at(
                        found.span,
                        format!(
                            "expected INCLUDING, EXCLUDING or OVERWRITING, found {}",
                            found.token
                        ),
                    ));
                };
                let part = match self.peek_word(0).as_deref() {
                    Some("ALL") => LikePart::All,
                    Some("CONSTRAINTS") => LikePart::Constraints,
                    Some("GENERATED") => LikePart::Generated,
                    Some("METADATA") => LikePart::Metadata,
                    Some("OPTIONS") => LikePart::Options,
                    Some("PARTITIONS") => LikePart::Partitions,
                    Some("WATERMARKS") => LikePart::Watermarks,
                    _ => {
                        let found = self.parser.peek_token_ref().clone();
                        return Err(error_at(
                            found.span,
                            format!("expected a LIKE option, found {}", found.token),
                        ));
                    }
                };
                self.parser.next_token();
                options.push((mode, part));
                if self.parser.consume_token(&Token::RParen) {
                    break;
                }
                self.parser.expect_token(&Token::Comma)?;
            }
        }
        Ok(TableLike {
            source,
            options,
            position: Position {
                line: source_at.start.line,
                column: source_at.start.column,
            },
        })
    }

    fn options(&mut self) -> Result<Vec<(String, String)>, ParserError> {
        self.parser.expect_token(&Token::LParen)?;
        let mut options = Vec::new();
        if self.parser.consume_token(&Token::RParen) {
            return Ok(options);
        }
        loop {
            let key = self.parser.parse_literal_string()?;
            self.parser.expect_token(&Token::Eq)?;
            let value = self.parser.parse_literal_string()?;
            options.push((key, value));
            if self.parser.consume_token(&Token::RParen) {
                return Ok(options);
            }
            self.parser.expect_token(&Token::Comma)?;
        }
    }

    fn table_element(&mut self, table: &mut CreateTable) -> Result<(), ParserError> {
        let start = self.parser.peek_token_ref().span;
        let position = Position {
            line: start.start.line,
            column: start.start.column,
        };
        if self.peek_word(0).as_deref() == Some("WATERMARK")
            && self.peek_word(1).as_deref() == Some("FOR")
        {
            self.parser.next_token();
            self.parser.next_token();
            let column = self.parser.parse_identifier()?.value;
            self.expect_keyword("AS")?;
            let expr = self.parser.parse_expr()?;
            if table.watermark.is_some() {
                return Err(error_at(start, "only one WATERMARK definition is allowed"));
            }
            table.watermark = Some(WatermarkDef {
                column,
                expr,
                position,
            });
            return Ok(());
        }
        if self.keyword("CONSTRAINT") {
            self.parser.parse_identifier()?;
        }
        if self.keywords(&["PRIMARY", "KEY"]) {
            self.parser.expect_token(&Token::LParen)?;
            let mut columns = Vec::new();
            loop {
                let column = self.parser.parse_identifier()?;
                columns.push((column.value, position_of(column.span)));
                if !self.parser.consume_token(&Token::Comma) {
                    break;
                }
            }
            self.parser.expect_token(&Token::RParen)?;
            self.not_enforced(start)?;
            return self.set_primary_key(table, columns, start);
        }
        let name: Ident = self.parser.parse_identifier()?;
        let kind = if self.keyword("AS") {
            ColumnKind::Computed(self.parser.parse_expr()?)
        } else {
            let data_type = super::types::parse_data_type(self.parser)?;
            if self.keyword("METADATA") {
                let key = if self.keyword("FROM") {
                    Some(self.parser.parse_literal_string()?)
                } else {
                    None
                };
                let is_virtual = self.keyword("VIRTUAL");
                ColumnKind::Metadata {
                    data_type,
                    key,
                    is_virtual,
                }
            } else {
                if self.keywords(&["PRIMARY", "KEY"]) {
                    self.not_enforced(start)?;
                    let column = (name.value.clone(), position_of(name.span));
                    self.set_primary_key(table, vec![column], start)?;
                }
                ColumnKind::Physical(data_type)
            }
        };
        let comment = if self.keyword("COMMENT") {
            Some(self.parser.parse_literal_string()?)
        } else {
            None
        };
        table.columns.push(ColumnDef {
            name: name.value,
            kind,
            comment,
            position,
        });
        Ok(())
    }

    fn not_enforced(&mut self, at: Span) -> Result<(), ParserError> {
        if self.keywords(&["NOT", "ENFORCED"]) {
            Ok(())
        } else {
            Err(error_at(
                at,
                "Flink supports only PRIMARY KEY … NOT ENFORCED",
            ))
        }
    }

    fn set_primary_key(
        &mut self,
        table: &mut CreateTable,
        columns: Vec<(String, Position)>,
        at: Span,
    ) -> Result<(), ParserError> {
        if table.primary_key.is_some() {
            return Err(error_at(at, "Duplicate primary key definition"));
        }
        let (names, positions) = columns.into_iter().unzip();
        table.primary_key = Some(names);
        table.primary_key_at = positions;
        Ok(())
    }

    fn drop(&mut self) -> Result<Statement, ParserError> {
        self.parser.next_token();
        let temporary = self.keyword("TEMPORARY");
        let kind = if self.keyword("TABLE") {
            ObjectKind::Table
        } else if self.keyword("VIEW") {
            ObjectKind::View
        } else {
            let found = self.parser.peek_token_ref().clone();
            return Err(error_at(
                found.span,
                format!("expected TABLE or VIEW after DROP, found {}", found.token),
            ));
        };
        let if_exists = self.keywords(&["IF", "EXISTS"]);
        let name = self.parser.parse_object_name(false)?;
        Ok(Statement::Drop(Drop {
            kind,
            name,
            temporary,
            if_exists,
        }))
    }

    /// `SET 'key' = 'value'` (Flink also accepts the key and value unquoted).
    fn set(&mut self) -> Result<Statement, ParserError> {
        self.parser.next_token();
        if matches!(
            self.parser.peek_token_ref().token,
            Token::EOF | Token::SemiColon
        ) {
            return Ok(Statement::Set {
                key: None,
                value: None,
            });
        }
        let key = self.raw_until(|t| *t == Token::Eq)?;
        self.parser.expect_token(&Token::Eq)?;
        let value = self.raw_until(|t| matches!(t, Token::EOF | Token::SemiColon))?;
        Ok(Statement::Set {
            key: Some(key),
            value: Some(value),
        })
    }

    fn reset(&mut self) -> Result<Statement, ParserError> {
        self.parser.next_token();
        if matches!(
            self.parser.peek_token_ref().token,
            Token::EOF | Token::SemiColon
        ) {
            return Ok(Statement::Reset { key: None });
        }
        let key = self.raw_until(|t| matches!(t, Token::EOF | Token::SemiColon))?;
        Ok(Statement::Reset { key: Some(key) })
    }

    /// A quoted string, or the text of the unquoted tokens up to `stop`.
    fn raw_until(&mut self, stop: impl Fn(&Token) -> bool) -> Result<String, ParserError> {
        if let Token::SingleQuotedString(s) = &self.parser.peek_token_ref().token {
            let s = s.clone();
            self.parser.next_token();
            return Ok(s);
        }
        let mut text = String::new();
        while !stop(&self.parser.peek_token_ref().token)
            && self.parser.peek_token_ref().token != Token::EOF
        {
            text.push_str(&self.parser.next_token().token.to_string());
        }
        if text.is_empty() {
            let at = self.parser.peek_token_ref().span;
            return Err(error_at(at, "expected a quoted string"));
        }
        Ok(text)
    }

    /// `SHOW …`. Which statements take `FROM|IN`, `[NOT] LIKE` and `ILIKE` is Flink's grammar:
    /// TABLES, VIEWS and COLUMNS take LIKE only; FUNCTIONS, DATABASES and CATALOGS take
    /// ILIKE too.
    fn show(&mut self) -> Result<Statement, ParserError> {
        self.parser.next_token();
        if self.keyword("TABLES") {
            let database = self.show_from()?;
            let like = self.show_like(false)?;
            Ok(Statement::ShowTables { database, like })
        } else if self.keyword("VIEWS") {
            let database = self.show_from()?;
            let like = self.show_like(false)?;
            Ok(Statement::ShowViews { database, like })
        } else if self.peek_word(0).as_deref() == Some("FUNCTIONS")
            || self.peek_word(1).as_deref() == Some("FUNCTIONS")
                && self.peek_word(0).as_deref() == Some("USER")
        {
            let user_only = self.keyword("USER");
            self.expect_keyword("FUNCTIONS")?;
            let database = self.show_from()?;
            let like = self.show_like(true)?;
            Ok(Statement::ShowFunctions {
                user_only,
                database,
                like,
            })
        } else if self.keyword("CATALOGS") {
            let like = self.show_like(true)?;
            Ok(Statement::ShowSingle {
                header: "catalog name",
                value: "default_catalog",
                scope: None,
                like,
            })
        } else if self.keyword("DATABASES") {
            let scope = if self.keyword("FROM") || self.keyword("IN") {
                Some(self.parser.parse_object_name(false)?)
            } else {
                None
            };
            let like = self.show_like(true)?;
            Ok(Statement::ShowSingle {
                header: "database name",
                value: "default_database",
                scope,
                like,
            })
        } else if self.keywords(&["CURRENT", "CATALOG"]) {
            Ok(Statement::ShowSingle {
                header: "current catalog name",
                value: "default_catalog",
                scope: None,
                like: None,
            })
        } else if self.keywords(&["CURRENT", "DATABASE"]) {
            Ok(Statement::ShowSingle {
                header: "current database name",
                value: "default_database",
                scope: None,
                like: None,
            })
        } else if self.keyword("COLUMNS") {
            // SHOW COLUMNS FROM|IN t prints what DESC does, filtered by the LIKE.
            if !self.keyword("FROM") && !self.keyword("IN") {
                let at = self.parser.peek_token_ref().span;
                return Err(error_at(at, "expected FROM or IN after SHOW COLUMNS"));
            }
            let name = self.parser.parse_object_name(false)?;
            let like = self.show_like(false)?;
            Ok(Statement::Describe { name, like })
        } else if self.keyword("JOBS") {
            Ok(Statement::ShowJobs)
        } else if self.keyword("MODULES") {
            Ok(Statement::ShowFixed {
                header: &["module name"],
                rows: &[&["core"]],
            })
        } else if self.keywords(&["FULL", "MODULES"]) {
            Ok(Statement::ShowFixed {
                header: &["module name", "used"],
                rows: &[&["core", "TRUE"]],
            })
        } else if self.keyword("JARS") {
            Ok(Statement::ShowFixed {
                header: &["jars"],
                rows: &[],
            })
        } else if self.keywords(&["MATERIALIZED", "TABLES"]) {
            Ok(Statement::ShowFixed {
                header: &["materialized table name"],
                rows: &[],
            })
        } else if self.keywords(&["CREATE", "TABLE"]) {
            Ok(Statement::ShowCreateTable(
                self.parser.parse_object_name(false)?,
            ))
        } else if self.keywords(&["CREATE", "VIEW"]) {
            Ok(Statement::ShowCreateView(
                self.parser.parse_object_name(false)?,
            ))
        } else {
            let found = self.parser.peek_token_ref().clone();
            Err(error_at(
                found.span,
                format!("unsupported SHOW {}", found.token),
            ))
        }
    }

    /// The optional `FROM|IN [catalog.]database` of `SHOW TABLES|VIEWS|FUNCTIONS`.
    fn show_from(&mut self) -> Result<Option<ObjectName>, ParserError> {
        if self.keyword("FROM") || self.keyword("IN") {
            Ok(Some(self.parser.parse_object_name(false)?))
        } else {
            Ok(None)
        }
    }

    /// The optional `[NOT] LIKE 'pattern'` (and `[NOT] ILIKE` where `ilike` says Flink takes
    /// it) that ends a `SHOW` statement. The pattern must be a quoted string, as in Flink.
    fn show_like(&mut self, ilike: bool) -> Result<Option<ShowLike>, ParserError> {
        let negated = self.keyword("NOT");
        let case_insensitive = if self.keyword("LIKE") {
            false
        } else if ilike && self.keyword("ILIKE") {
            true
        } else if negated {
            let found = self.parser.peek_token_ref().clone();
            let expected = if ilike { "LIKE or ILIKE" } else { "LIKE" };
            return Err(error_at(
                found.span,
                format!("expected {expected} after NOT, found {}", found.token),
            ));
        } else {
            return Ok(None);
        };
        let next = self.parser.peek_token_ref().clone();
        let Token::SingleQuotedString(pattern) = next.token else {
            return Err(error_at(
                next.span,
                format!("expected a quoted LIKE pattern, found {}", next.token),
            ));
        };
        self.parser.next_token();
        Ok(Some(ShowLike {
            negated,
            case_insensitive,
            pattern,
        }))
    }

    /// `(k = literal, …)` after `INSERT … PARTITION`; a value is kept as the literal's text
    /// (`'x'` → `x`, `12` → `12`), which is what names the partition's directory.
    fn static_partitions(&mut self) -> Result<Vec<(String, String)>, ParserError> {
        use sqlparser::ast::{Expr, UnaryOperator, Value};
        self.parser.expect_token(&Token::LParen)?;
        let mut pairs = Vec::new();
        loop {
            let key = self.parser.parse_identifier()?.value;
            self.parser.expect_token(&Token::Eq)?;
            let at = self.parser.peek_token_ref().span;
            let literal = |v: &Value| match v {
                Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(s.clone()),
                Value::Number(n, _) => Some(n.clone()),
                Value::Boolean(b) => Some(b.to_string().to_ascii_uppercase()),
                _ => None,
            };
            let text = match self.parser.parse_expr()? {
                Expr::Value(v) => literal(&v.value),
                Expr::UnaryOp {
                    op: UnaryOperator::Minus,
                    expr,
                } => match *expr {
                    Expr::Value(v) => match &v.value {
                        Value::Number(n, _) => Some(format!("-{n}")),
                        _ => None,
                    },
                    _ => None,
                },
                _ => None,
            };
            let text = text.ok_or_else(|| {
                error_at(
                    at,
                    "not a literal: a static partition value must be a literal other than NULL",
                )
            })?;
            pairs.push((key, text));
            if !self.parser.consume_token(&Token::Comma) {
                break;
            }
        }
        self.parser.expect_token(&Token::RParen)?;
        Ok(pairs)
    }

    /// The `ALTER` forms Tideline keeps: renaming a table or view and a table's options.
    fn alter(&mut self) -> Result<Statement, ParserError> {
        self.parser.next_token();
        if self.keyword("VIEW") {
            let name = self.parser.parse_object_name(false)?;
            if self.keyword("AS") {
                let query = self.parser.parse_query()?;
                return Ok(Statement::AlterViewAs { name, query });
            }
            if !self.keywords(&["RENAME", "TO"]) {
                let at = self.parser.peek_token_ref().span;
                return Err(error_at(at, "expected RENAME TO or AS after ALTER VIEW"));
            }
            let new_name = self.parser.parse_object_name(false)?;
            return Ok(Statement::AlterViewRename { name, new_name });
        }
        self.expect_keyword("TABLE")?;
        let if_exists = self.keywords(&["IF", "EXISTS"]);
        let name = self.parser.parse_object_name(false)?;
        let action = if self.keywords(&["RENAME", "TO"]) {
            AlterTableAction::RenameTo(self.parser.parse_object_name(false)?)
        } else if self.keyword("RENAME") {
            let from = self.parser.parse_identifier()?.value;
            self.expect_keyword("TO")?;
            let to = self.parser.parse_identifier()?.value;
            AlterTableAction::RenameColumn { from, to }
        } else if self.keyword("SET") {
            AlterTableAction::SetOptions(self.options()?)
        } else if self.keyword("RESET") {
            self.parser.expect_token(&Token::LParen)?;
            let mut keys = Vec::new();
            loop {
                keys.push(self.parser.parse_literal_string()?);
                if self.parser.consume_token(&Token::RParen) {
                    break;
                }
                self.parser.expect_token(&Token::Comma)?;
            }
            AlterTableAction::ResetOptions(keys)
        } else if self.keyword("ADD") {
            AlterTableAction::AddColumns(self.alter_columns()?)
        } else if self.keyword("MODIFY") {
            AlterTableAction::ModifyColumns(self.alter_columns()?)
        } else if self.keyword("DROP") {
            let mut names = Vec::new();
            if self.parser.consume_token(&Token::LParen) {
                loop {
                    names.push(self.parser.parse_identifier()?.value);
                    if self.parser.consume_token(&Token::RParen) {
                        break;
                    }
                    self.parser.expect_token(&Token::Comma)?;
                }
            } else if matches!(
                self.peek_word(0).as_deref(),
                Some("PRIMARY" | "CONSTRAINT" | "WATERMARK")
            ) {
                let at = self.parser.peek_token_ref().span;
                return Err(error_at(
                    at,
                    "ALTER TABLE … DROP of a constraint or watermark is not supported",
                ));
            } else {
                names.push(self.parser.parse_identifier()?.value);
            }
            AlterTableAction::DropColumns(names)
        } else {
            let found = self.parser.peek_token_ref().clone();
            return Err(error_at(
                found.span,
                format!(
                    "unsupported ALTER TABLE {} (RENAME TO, SET and RESET are supported)",
                    found.token
                ),
            ));
        };
        Ok(Statement::AlterTable {
            name,
            if_exists,
            action,
        })
    }

    /// The column definitions of `ALTER TABLE … ADD|MODIFY`: one, or a parenthesized list.
    fn alter_columns(&mut self) -> Result<Vec<ColumnDef>, ParserError> {
        let at = self.parser.peek_token_ref().span;
        let mut scratch = CreateTable::named(ObjectName::from(Vec::<Ident>::new()), false, false);
        if self.parser.consume_token(&Token::LParen) {
            loop {
                self.table_element(&mut scratch)?;
                if self.parser.consume_token(&Token::RParen) {
                    break;
                }
                self.parser.expect_token(&Token::Comma)?;
            }
        } else {
            self.table_element(&mut scratch)?;
        }
        if scratch.watermark.is_some() || scratch.primary_key.is_some() {
            return Err(error_at(
                at,
                "ALTER TABLE … ADD|MODIFY of a watermark or primary key is not supported",
            ));
        }
        Ok(scratch.columns)
    }

    /// A statement set's body, after `STATEMENT SET`: `BEGIN`, INSERTs each ended by `;`,
    /// `END`.
    fn statement_set(&mut self) -> Result<Statement, ParserError> {
        self.expect_keyword("BEGIN")?;
        let mut inserts = Vec::new();
        loop {
            if !inserts.is_empty() && self.keyword("END") {
                return Ok(Statement::StatementSet(inserts));
            }
            if self.peek_word(0).as_deref() != Some("INSERT") {
                let found = self.parser.peek_token_ref().clone();
                let expected = if inserts.is_empty() {
                    "INSERT"
                } else {
                    "INSERT or END"
                };
                return Err(error_at(
                    found.span,
                    format!(
                        "expected {expected} in a statement set, found {}",
                        found.token
                    ),
                ));
            }
            inserts.push(self.insert_body()?);
            self.parser.expect_token(&Token::SemiColon)?;
        }
    }

    fn insert(&mut self) -> Result<Statement, ParserError> {
        Ok(Statement::Insert(self.insert_body()?))
    }

    fn insert_body(&mut self) -> Result<Insert, ParserError> {
        self.parser.next_token();
        let overwrite = if self.keyword("OVERWRITE") {
            true
        } else {
            self.expect_keyword("INTO")?;
            false
        };
        self.keyword("TABLE");
        let table = self.parser.parse_object_name(false)?;
        let static_partitions = if self.keyword("PARTITION") {
            self.static_partitions()?
        } else {
            Vec::new()
        };
        let mut columns = Vec::new();
        if self.parser.peek_token_ref().token == Token::LParen
            && !matches!(
                self.peek_word(1).as_deref(),
                Some("SELECT" | "WITH" | "VALUES")
            )
        {
            self.parser.next_token();
            loop {
                columns.push(self.parser.parse_identifier()?.value);
                if !self.parser.consume_token(&Token::Comma) {
                    break;
                }
            }
            self.parser.expect_token(&Token::RParen)?;
        }
        let query = self.parser.parse_query()?;
        Ok(Insert {
            table,
            static_partitions,
            columns,
            overwrite,
            query,
        })
    }
}

/// The object a `[catalog.][database.]name` reference names in the session, which has Flink's
/// one catalog and database (`default_catalog`.`default_database`); Flink's error otherwise.
pub fn session_object_name(name: &ObjectName) -> Result<String, String> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| p.as_ident().map(|i| i.value.clone()).unwrap_or_default())
        .collect();
    let (catalog, database) = match parts.as_slice() {
        [_] => (None, None),
        [db, _] => (None, Some(db)),
        [cat, db, _] => (Some(cat), Some(db)),
        _ => return Err(format!("invalid object name '{name}'")),
    };
    if let Some(cat) = catalog.filter(|c| *c != "default_catalog") {
        return Err(format!("Catalog {cat} does not exist."));
    }
    if let Some(db) = database.filter(|d| *d != "default_database") {
        return Err(format!(
            "Database {db} does not exist in Catalog default_catalog."
        ));
    }
    Ok(parts.last().cloned().unwrap_or_default())
}

/// The last identifier of a possibly qualified name (`cat.db.t` → `t`).
pub fn object_name_last(name: &ObjectName) -> String {
    name.0
        .last()
        .and_then(|p| p.as_ident())
        .map(|i| i.value.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::split::split_statements;

    fn parse_all(script: &str) -> Vec<Statement> {
        let (stmts, _) = split_statements(script);
        stmts
            .iter()
            .map(|s| parse_statement(s).unwrap().statement)
            .collect()
    }

    #[test]
    fn create_table_with_watermark_and_computed_column() {
        let stmts = parse_all(
            "CREATE TABLE user_actions (\n  user_name STRING,\n  ts BIGINT,\n  time_ltz AS TO_TIMESTAMP_LTZ(ts, 3),\n  \
             WATERMARK FOR time_ltz AS time_ltz - INTERVAL '5' SECOND,\n  PRIMARY KEY (user_name) NOT ENFORCED\n) \
             WITH ('connector' = 'datagen');",
        );
        let Statement::CreateTable(t) = &stmts[0] else {
            panic!("{stmts:?}")
        };
        assert_eq!(t.columns.len(), 3);
        assert!(matches!(t.columns[2].kind, ColumnKind::Computed(_)));
        assert_eq!(t.watermark.as_ref().unwrap().column, "time_ltz");
        assert_eq!(
            t.primary_key.as_deref(),
            Some(&["user_name".to_string()][..])
        );
        assert_eq!(t.options, vec![("connector".into(), "datagen".into())]);
    }

    #[test]
    fn window_tvf_hints_and_commands() {
        let script = "SET 'table.local-time-zone' = 'UTC';\nRESET;\nSHOW TABLES;\nDESC Bid;\n\
            SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES));\n\
            SELECT * FROM TABLE(HOP(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SLIDE => INTERVAL '5' MINUTES, SIZE => INTERVAL '10' MINUTES));\n\
            SELECT id FROM kafka_table /*+ OPTIONS('scan.startup.mode'='earliest-offset') */;\n\
            SELECT CAST(ts AS TIMESTAMP(3) WITH LOCAL TIME ZONE), CAST(x AS ROW<a INT, b ARRAY<STRING>>) FROM t;\n\
            EXPLAIN SELECT 1;\nINSERT INTO s SELECT * FROM t;";
        let (stmts, _) = split_statements(script);
        let parsed: Vec<_> = stmts.iter().map(|s| parse_statement(s).unwrap()).collect();
        assert_eq!(parsed.len(), 10);
        assert!(
            matches!(&parsed[0].statement, Statement::Set { key: Some(k), .. } if k == "table.local-time-zone")
        );
        assert_eq!(parsed[6].hints.len(), 1);
        assert_eq!(parsed[6].hints[0].options[0].1, "earliest-offset");
        assert_eq!(parsed[6].hints[0].position.line, 7);
    }

    #[test]
    fn errors_carry_script_positions() {
        let (stmts, _) = split_statements("SELECT 1;\n  SELECT FROM WHERE;");
        let err = parse_statement(&stmts[1]).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.column >= 3, "{err:?}");
    }
}
