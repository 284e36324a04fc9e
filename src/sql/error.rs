//! Errors that point into the SQL text.

use std::fmt;

/// A user-facing error about a statement, with the 1-based line and column it refers to
/// (0 when there is no position, e.g. a failing job).
#[derive(Debug, Clone, PartialEq)]
pub struct SqlError {
    pub message: String,
    pub line: u64,
    pub column: u64,
}

impl SqlError {
    pub fn new(message: impl Into<String>, line: u64, column: u64) -> Self {
        SqlError {
            message: message.into(),
            line,
            column,
        }
    }

    pub fn without_position(message: impl Into<String>) -> Self {
        SqlError {
            message: message.into(),
            line: 0,
            column: 0,
        }
    }

    /// The message, then (when the position is known) `at line L, column C:`, the line of
    /// `source` and a caret under the column.
    ///
    /// `column` counts characters; the column printed counts UTF-16 code units as Flink's
    /// (Java's) does, so that a character outside the BMP (an emoji) counts twice. The caret
    /// line copies the tabs of the source line and has a space for every other character,
    /// so that it lines up under the character whatever the tab width.
    pub fn render(&self, source: &str) -> String {
        let mut out = self.message.clone();
        if self.line == 0 {
            return out;
        }
        let text = source.lines().nth(self.line as usize - 1);
        let before: Vec<char> = text
            .map(|t| {
                t.chars()
                    .take(self.column.saturating_sub(1) as usize)
                    .collect()
            })
            .unwrap_or_default();
        let column = before.iter().map(|c| c.len_utf16() as u64).sum::<u64>()
            + self.column.saturating_sub(before.len() as u64).max(1);
        out.push_str(&format!("\n  at line {}, column {column}:", self.line));
        if let Some(text) = text {
            let pad: String = before
                .iter()
                .map(|&c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            out.push_str(&format!("\n  {text}\n  {pad}^"));
        }
        out
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(
                f,
                "{} (line {}, column {})",
                self.message, self.line, self.column
            )
        }
    }
}

impl std::error::Error for SqlError {}

/// Turns a `sqlparser` error, whose text ends in `at Line: L, Column: C`, into a positioned
/// error with a lower-case message.
pub fn from_parser_error(err: &sqlparser::parser::ParserError) -> SqlError {
    let text = match err {
        sqlparser::parser::ParserError::TokenizerError(s)
        | sqlparser::parser::ParserError::ParserError(s) => s.clone(),
        sqlparser::parser::ParserError::RecursionLimitExceeded => {
            "statement is nested too deeply".to_string()
        }
    };
    let (message, line, column) = match text.rfind(" at Line: ") {
        Some(at) => {
            let pos = &text[at + " at Line: ".len()..];
            let mut parts = pos.split(", Column: ");
            let line = parts
                .next()
                .and_then(|l| l.trim().parse().ok())
                .unwrap_or(0);
            let column = parts
                .next()
                .and_then(|c| c.trim().parse().ok())
                .unwrap_or(0);
            (text[..at].to_string(), line, column)
        }
        None => (text, 0, 0),
    };
    let message = message.replacen("sql parser error: ", "", 1);
    // Lower-case the first letter of a sentence, not of a keyword (`UESCAPE '+' may not …`).
    let keyword_first = message
        .split(' ')
        .next()
        .is_some_and(|w| w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase()));
    let mut chars = message.chars();
    let message = match chars.next() {
        Some(c) if !keyword_first => c.to_lowercase().chain(chars).collect(),
        _ => message,
    };
    SqlError::new(format!("syntax error: {message}"), line, column)
}
