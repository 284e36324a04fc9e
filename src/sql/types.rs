//! Parsing Flink's type syntax: `DECIMAL(10, 2)`, `TIMESTAMP(3) WITH LOCAL TIME ZONE`,
//! `TIMESTAMP_LTZ(3)`, `ARRAY<INT NOT NULL>`, `MAP<STRING, INT>`, `ROW<a INT, b STRING>`,
//! `INTERVAL DAY TO SECOND`, each optionally followed by `NOT NULL` / `NULL`. Defaults are
//! Flink's: DECIMAL(10, 0), CHAR(1), VARCHAR(1), TIME(0), TIMESTAMP(6); lengths may be zero.

use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use crate::types::interval::IntervalQualifier;
use crate::types::{DEFAULT_TIMESTAMP_PRECISION, DataType, MAX_LENGTH, TypeKind};

const TYPE_NAMES: &[&str] = &[
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INT",
    "INTEGER",
    "BIGINT",
    "FLOAT",
    "REAL",
    "DOUBLE",
    "DECIMAL",
    "DEC",
    "NUMERIC",
    "CHAR",
    "CHARACTER",
    "VARCHAR",
    "STRING",
    "BINARY",
    "VARBINARY",
    "BYTES",
    "DATE",
    "TIME",
    "TIMESTAMP",
    "TIMESTAMP_LTZ",
    "INTERVAL",
    "ARRAY",
    "MAP",
    "ROW",
    "MULTISET",
    "RAW",
    "NULL",
];

/// Whether a word starts a Flink type.
pub fn is_type_name(word: &str) -> bool {
    TYPE_NAMES.iter().any(|t| t.eq_ignore_ascii_case(word))
}

/// Parses a Flink type with its optional `NOT NULL`.
pub fn parse_data_type(parser: &mut Parser) -> Result<DataType, ParserError> {
    let mut reader = TypeReader {
        parser,
        pending_gt: false,
        qualifier: None,
    };
    let ty = reader.data_type()?;
    if reader.pending_gt {
        return Err(reader.error("unmatched '>' in type"));
    }
    Ok(ty)
}

/// Parses the target type of `CAST(… AS type)`: Flink's grammar has no `NULL` / `NOT NULL`
/// after it (nested types may still say `ARRAY<INT NOT NULL>`), so a following `NOT` is left
/// for the caller to refuse. An interval type also returns its qualifier as written
/// (`DAY`, `DAY TO SECOND`), which decides what a number cast to it means.
pub fn parse_cast_type(
    parser: &mut Parser,
) -> Result<(DataType, Option<IntervalQualifier>), ParserError> {
    let mut reader = TypeReader {
        parser,
        pending_gt: false,
        qualifier: None,
    };
    let kind = reader.kind()?;
    if reader.pending_gt {
        return Err(reader.error("unmatched '>' in type"));
    }
    Ok((
        DataType {
            kind,
            nullable: true,
        },
        reader.qualifier,
    ))
}

/// Parses the canonical text of a type (as [`DataType`]'s `Display` writes it).
pub fn parse_type_text(text: &str) -> Result<DataType, ParserError> {
    let dialect = super::dialect::FlinkDialect;
    let mut parser = Parser::new(&dialect).try_with_sql(text)?;
    parse_data_type(&mut parser)
}

struct TypeReader<'a, 'b> {
    parser: &'a mut Parser<'b>,
    /// A `>>` token closed two nested types; the inner one consumed it.
    pending_gt: bool,
    /// The qualifier of the last INTERVAL type read.
    qualifier: Option<IntervalQualifier>,
}

impl TypeReader<'_, '_> {
    fn error(&self, message: &str) -> ParserError {
        let loc = self.parser.peek_token_ref().span.start;
        ParserError::ParserError(format!(
            "{message} at Line: {}, Column: {}",
            loc.line, loc.column
        ))
    }

    fn word(&mut self) -> Option<String> {
        match &self.parser.peek_token_ref().token {
            Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
            _ => None,
        }
    }

    fn keyword(&mut self, kw: &str) -> bool {
        if self.word().as_deref() == Some(kw) {
            self.parser.next_token();
            true
        } else {
            false
        }
    }

    fn keywords(&mut self, kws: &[&str]) -> bool {
        for (i, kw) in kws.iter().enumerate() {
            match &self.parser.peek_nth_token_ref(i).token {
                Token::Word(w) if w.value.eq_ignore_ascii_case(kw) => {}
                _ => return false,
            }
        }
        for _ in kws {
            self.parser.next_token();
        }
        true
    }

    fn data_type(&mut self) -> Result<DataType, ParserError> {
        let kind = self.kind()?;
        let nullable = if self.pending_gt {
            true
        } else if self.keywords(&["NOT", "NULL"]) {
            false
        } else {
            self.keyword("NULL");
            true
        };
        Ok(DataType { kind, nullable })
    }

    fn expect_gt(&mut self) -> Result<(), ParserError> {
        if self.pending_gt {
            self.pending_gt = false;
            return Ok(());
        }
        match self.parser.peek_token_ref().token {
            Token::Gt => {
                self.parser.next_token();
                Ok(())
            }
            Token::ShiftRight => {
                self.parser.next_token();
                self.pending_gt = true;
                Ok(())
            }
            _ => Err(self.error("expected '>' to close the type")),
        }
    }

    fn optional_length(&mut self, default: u32) -> Result<u32, ParserError> {
        if self.parser.consume_token(&Token::LParen) {
            let n = self.number()?;
            self.parser.expect_token(&Token::RParen)?;
            // Flink takes a zero length (`VARCHAR(0)`, `BINARY(0)`: only the empty value fits);
            // the length is a Java int.
            if n > MAX_LENGTH as u64 {
                return Err(self.error(&format!(
                    "Literal '{n}' can not be parsed to type 'java.lang.Integer'"
                )));
            }
            Ok(n as u32)
        } else {
            Ok(default)
        }
    }

    fn optional_precision(&mut self, default: u8, max: u8) -> Result<u8, ParserError> {
        if self.parser.consume_token(&Token::LParen) {
            let p = self.number()?;
            self.parser.expect_token(&Token::RParen)?;
            if p > max as u64 {
                return Err(self.error(&format!("precision must be between 0 and {max}")));
            }
            Ok(p as u8)
        } else {
            Ok(default)
        }
    }

    fn number(&mut self) -> Result<u64, ParserError> {
        let token = self.parser.next_token();
        match &token.token {
            Token::Number(n, _) => n.parse().map_err(|_| self.error("expected a number")),
            _ => {
                self.parser.prev_token();
                Err(self.error("expected a number"))
            }
        }
    }

    fn kind(&mut self) -> Result<TypeKind, ParserError> {
        let Some(name) = self.word() else {
            return Err(self.error("expected a data type"));
        };
        self.parser.next_token();
        Ok(match name.as_str() {
            "BOOLEAN" => TypeKind::Boolean,
            "TINYINT" => TypeKind::TinyInt,
            "SMALLINT" => TypeKind::SmallInt,
            "INT" | "INTEGER" => TypeKind::Int,
            "BIGINT" => TypeKind::BigInt,
            "FLOAT" | "REAL" => TypeKind::Float,
            "DOUBLE" => {
                self.keyword("PRECISION");
                TypeKind::Double
            }
            "DECIMAL" | "DEC" | "NUMERIC" => {
                let (mut precision, mut scale) = (10, 0);
                if self.parser.consume_token(&Token::LParen) {
                    precision = self.number()?;
                    if self.parser.consume_token(&Token::Comma) {
                        scale = self.number()?;
                    }
                    self.parser.expect_token(&Token::RParen)?;
                }
                if !(1..=38).contains(&precision) {
                    return Err(
                        self.error("Decimal precision must be between 1 and 38 (both inclusive).")
                    );
                }
                if scale > precision {
                    return Err(self.error("decimal scale must be between 0 and the precision"));
                }
                TypeKind::Decimal {
                    precision: precision as u8,
                    scale: scale as u8,
                }
            }
            "CHAR" | "CHARACTER" => {
                if self.keyword("VARYING") {
                    TypeKind::VarChar(self.optional_length(MAX_LENGTH)?)
                } else {
                    TypeKind::Char(self.optional_length(1)?)
                }
            }
            // Without a length VARCHAR and VARBINARY are STRING and BYTES, as in Flink.
            "VARCHAR" => TypeKind::VarChar(self.optional_length(MAX_LENGTH)?),
            "STRING" => TypeKind::VarChar(MAX_LENGTH),
            "BINARY" => TypeKind::Binary(self.optional_length(1)?),
            "VARBINARY" => TypeKind::VarBinary(self.optional_length(MAX_LENGTH)?),
            "BYTES" => TypeKind::VarBinary(MAX_LENGTH),
            "DATE" => TypeKind::Date,
            "TIME" => {
                let p = self.optional_precision(0, 9)?;
                self.keywords(&["WITHOUT", "TIME", "ZONE"]);
                TypeKind::Time(p)
            }
            "TIMESTAMP" => {
                let p = self.optional_precision(DEFAULT_TIMESTAMP_PRECISION, 9)?;
                if self.keywords(&["WITH", "LOCAL", "TIME", "ZONE"]) {
                    TypeKind::TimestampLtz(p)
                } else if self.keywords(&["WITH", "TIME", "ZONE"]) {
                    return Err(self.error(
                        "TIMESTAMP WITH TIME ZONE is not supported by Flink; use TIMESTAMP_LTZ",
                    ));
                } else {
                    self.keywords(&["WITHOUT", "TIME", "ZONE"]);
                    TypeKind::Timestamp(p)
                }
            }
            "TIMESTAMP_LTZ" => {
                TypeKind::TimestampLtz(self.optional_precision(DEFAULT_TIMESTAMP_PRECISION, 9)?)
            }
            "INTERVAL" => self.interval()?,
            "ARRAY" => {
                self.parser.expect_token(&Token::Lt)?;
                let element = self.data_type()?;
                self.expect_gt()?;
                TypeKind::Array(Box::new(element))
            }
            "MAP" => {
                self.parser.expect_token(&Token::Lt)?;
                let key = self.data_type()?;
                self.parser.expect_token(&Token::Comma)?;
                let value = self.data_type()?;
                self.expect_gt()?;
                TypeKind::Map(Box::new(key), Box::new(value))
            }
            "ROW" => self.row()?,
            "NULL" => TypeKind::Null,
            other => return Err(self.error(&format!("type {other} is not supported"))),
        })
    }

    fn row(&mut self) -> Result<TypeKind, ParserError> {
        let close = if self.parser.consume_token(&Token::Lt) {
            Token::Gt
        } else if self.parser.consume_token(&Token::LParen) {
            Token::RParen
        } else {
            return Err(self.error("expected '<' or '(' after ROW"));
        };
        let mut fields = Vec::new();
        loop {
            if close == Token::Gt
                && fields.is_empty()
                && self.parser.peek_token_ref().token == Token::Gt
            {
                break;
            }
            let name = self.parser.parse_identifier()?.value;
            let ty = self.data_type()?;
            if let Token::SingleQuotedString(_) = self.parser.peek_token_ref().token {
                self.parser.next_token(); // field description
            }
            fields.push((name, ty));
            if self.pending_gt || !self.parser.consume_token(&Token::Comma) {
                break;
            }
        }
        if close == Token::Gt {
            self.expect_gt()?;
        } else {
            self.parser.expect_token(&Token::RParen)?;
        }
        Ok(TypeKind::Row(fields))
    }

    fn interval(&mut self) -> Result<TypeKind, ParserError> {
        let Some(unit) = self.word() else {
            return Err(self.error("expected an interval unit"));
        };
        self.parser.next_token();
        let leading_precision = |reader: &mut Self| -> Result<Option<u64>, ParserError> {
            if reader.parser.peek_token_ref().token == Token::LParen {
                let default = if unit == "SECOND" { 6 } else { 2 };
                let max = if unit == "YEAR" { 4 } else { 9 };
                Ok(Some(u64::from(reader.optional_precision(default, max)?)))
            } else {
                Ok(None)
            }
        };
        let (kind, precision, last) = match unit.as_str() {
            "YEAR" => {
                let precision = leading_precision(self)?;
                let last = if self.keyword("TO") {
                    if !self.keyword("MONTH") {
                        return Err(self.error("expected MONTH"));
                    }
                    Some("MONTH")
                } else {
                    None
                };
                (TypeKind::IntervalYearMonth, precision, last)
            }
            "MONTH" => (TypeKind::IntervalYearMonth, None, None),
            "DAY" | "HOUR" | "MINUTE" | "SECOND" => {
                let precision = leading_precision(self)?;
                let last = if self.keyword("TO") {
                    let last = match self.word().as_deref() {
                        Some("HOUR") => "HOUR",
                        Some("MINUTE") => "MINUTE",
                        Some("SECOND") => "SECOND",
                        _ => return Err(self.error("expected HOUR, MINUTE or SECOND")),
                    };
                    self.parser.next_token();
                    self.optional_precision(6, 9)?;
                    Some(last)
                } else {
                    None
                };
                (TypeKind::IntervalDayTime, precision, last)
            }
            _ => return Err(self.error("expected an interval unit")),
        };
        self.qualifier =
            Some(IntervalQualifier::new(&unit, last, precision).map_err(|m| self.error(&m))?);
        Ok(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        parse_type_text(text).unwrap().to_string()
    }

    #[test]
    fn flink_types() {
        assert_eq!(round_trip("INT NOT NULL"), "INT NOT NULL");
        assert_eq!(
            round_trip("timestamp(3) with local time zone"),
            "TIMESTAMP_LTZ(3)"
        );
        assert_eq!(round_trip("TIMESTAMP"), "TIMESTAMP(6)");
        assert_eq!(round_trip("DECIMAL"), "DECIMAL(10, 0)");
        assert_eq!(round_trip("VARCHAR(2147483647)"), "STRING");
        assert_eq!(
            round_trip("ARRAY<ARRAY<INT NOT NULL>>"),
            "ARRAY<ARRAY<INT NOT NULL>>"
        );
        assert_eq!(round_trip("MAP<STRING, BIGINT>"), "MAP<STRING, BIGINT>");
        assert_eq!(
            round_trip("ROW<a INT, `b c` STRING>"),
            "ROW<`a` INT, `b c` STRING>"
        );
        assert!(parse_type_text("DECIMAL(40, 2)").is_err());
        assert!(parse_type_text("TIME(10)").is_err());
    }
}
