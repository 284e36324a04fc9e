//! Splitting a script into statements.

/// One statement of a script: its text (without the `;`) and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct StatementText {
    pub text: String,
    /// 1-based line and column of the first character of `text` in the script.
    pub line: u64,
    pub column: u64,
}

/// Splits on `;` outside quotes and comments. Comments stay in the statement text (hints
/// `/*+ … */` must reach the parser); statements that are only whitespace or comments are
/// dropped. A statement set (`EXECUTE STATEMENT SET BEGIN INSERT …; INSERT …; END`, or
/// EXPLAIN of one) is one statement: its INSERTs' `;` do not end it, the one after `END`
/// does. The last statement may lack its `;`: `complete` tells whether it had one.
pub fn split_statements(script: &str) -> (Vec<StatementText>, bool) {
    let bytes = script.as_bytes();
    let mut out = Vec::new();
    let mut cursor = Cursor::default();
    let mut start = 0;
    let mut i = 0;
    let mut meaningful = false;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\'' | b'"' | b'`' => {
                meaningful = true;
                i += 1;
                while i < bytes.len() {
                    if bytes[i] == c {
                        if i + 1 < bytes.len() && bytes[i + 1] == c {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                if bytes.get(i + 2) == Some(&b'+') {
                    meaningful = true;
                }
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
            }
            b';' if meaningful && in_statement_set(&script[start..i]) => i += 1,
            b';' => {
                if meaningful {
                    out.push(statement(script, start, i, &mut cursor));
                }
                meaningful = false;
                i += 1;
                start = i;
            }
            c => {
                if !c.is_ascii_whitespace() {
                    meaningful = true;
                }
                i += 1;
            }
        }
    }
    let complete = !meaningful;
    if meaningful {
        out.push(statement(script, start, script.len(), &mut cursor));
    }
    (out, complete)
}

/// A position in the script, moved forward only: statements are met in order, so counting
/// lines from the previous statement keeps splitting linear in the script's length.
struct Cursor {
    offset: usize,
    line: u64,
    column: u64,
}

impl Default for Cursor {
    fn default() -> Self {
        Cursor {
            offset: 0,
            line: 1,
            column: 1,
        }
    }
}

impl Cursor {
    fn advance_to(&mut self, script: &str, offset: usize) {
        for c in script[self.offset..offset].chars() {
            if c == '\n' {
                self.line += 1;
                self.column = 1;
            } else {
                self.column += 1;
            }
        }
        self.offset = offset;
    }
}

/// Whether `text` (a statement up to a `;`) opens a statement set that its last word, `END`,
/// has not closed: `EXECUTE STATEMENT SET BEGIN …` or `EXPLAIN [details] STATEMENT SET
/// BEGIN …`.
fn in_statement_set(text: &str) -> bool {
    let mut words = Words { text, at: 0 };
    match words.next().map(str::to_ascii_uppercase).as_deref() {
        Some("EXECUTE") => {}
        Some("EXPLAIN") => {
            // `EXPLAIN CHANGELOG_MODE, … STATEMENT SET`: the details before it.
            let mut rest = words.clone();
            while let Some(w) = rest.clone().next() {
                if w.eq_ignore_ascii_case("STATEMENT") {
                    break;
                }
                if !w.eq_ignore_ascii_case(",")
                    && !w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    return false;
                }
                rest.next();
            }
            words = rest;
        }
        _ => return false,
    }
    for expected in ["STATEMENT", "SET", "BEGIN"] {
        if !words
            .next()
            .is_some_and(|w| w.eq_ignore_ascii_case(expected))
        {
            return false;
        }
    }
    !words.last().is_some_and(|w| w.eq_ignore_ascii_case("END"))
}

/// The tokens of a statement's text as far as splitting needs them: words, quoted strings
/// and single other characters, without whitespace and comments.
#[derive(Clone)]
struct Words<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.text.as_bytes();
        loop {
            let c = *bytes.get(self.at)?;
            if c.is_ascii_whitespace() {
                self.at += 1;
            } else if c == b'-' && bytes.get(self.at + 1) == Some(&b'-') {
                while self.at < bytes.len() && bytes[self.at] != b'\n' {
                    self.at += 1;
                }
            } else if c == b'/' && bytes.get(self.at + 1) == Some(&b'*') {
                self.at += 2;
                while self.at < bytes.len()
                    && !(bytes[self.at] == b'*' && bytes.get(self.at + 1) == Some(&b'/'))
                {
                    self.at += 1;
                }
                self.at = (self.at + 2).min(bytes.len());
            } else {
                break;
            }
        }
        let start = self.at;
        let c = bytes[start];
        if c == b'\'' || c == b'"' || c == b'`' {
            self.at += 1;
            while self.at < bytes.len() {
                if bytes[self.at] == c {
                    if bytes.get(self.at + 1) == Some(&c) {
                        self.at += 2;
                        continue;
                    }
                    break;
                }
                self.at += 1;
            }
            self.at = (self.at + 1).min(bytes.len());
        } else if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
            while self.at < bytes.len()
                && (bytes[self.at].is_ascii_alphanumeric()
                    || bytes[self.at] == b'_'
                    || bytes[self.at] >= 0x80)
            {
                self.at += 1;
            }
        } else {
            self.at += 1;
        }
        Some(&self.text[start..self.at])
    }
}

fn statement(script: &str, start: usize, end: usize, cursor: &mut Cursor) -> StatementText {
    let end = end.min(script.len());
    let raw = &script[start..end];
    let skipped = raw.len() - raw.trim_start().len();
    let begin = start + skipped;
    cursor.advance_to(script, begin);
    StatementText {
        text: script[begin..end].trim_end().to_string(),
        line: cursor.line,
        column: cursor.column,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_outside_quotes_and_comments() {
        let (stmts, complete) =
            split_statements("SELECT ';' AS a; -- x;\n\n  SELECT 2 /* ; */;\n-- only a comment;\n");
        assert!(complete);
        assert_eq!(stmts.len(), 2);
        assert_eq!(stmts[0].text, "SELECT ';' AS a");
        assert_eq!(stmts[1].text, "-- x;\n\n  SELECT 2 /* ; */");
        assert_eq!((stmts[1].line, stmts[1].column), (1, 18));
        let (stmts, complete) = split_statements("SELECT 1;\nSELECT");
        assert!(!complete);
        assert_eq!((stmts[1].text.as_str(), stmts[1].line), ("SELECT", 2));
        let (stmts, _) = split_statements("SELECT 'é';\n  SELECT 2; SELECT 3;");
        let positions: Vec<_> = stmts.iter().map(|s| (s.line, s.column)).collect();
        assert_eq!(positions, [(1, 1), (2, 3), (2, 13)]);
    }

    #[test]
    fn a_statement_set_is_one_statement() {
        let script = "EXECUTE STATEMENT SET\nBEGIN\n  INSERT INTO a SELECT ';', 'end' FROM t;\n  -- END;\n  INSERT INTO b SELECT * FROM `end`;\nEND;\nSELECT 1;";
        let (stmts, complete) = split_statements(script);
        assert!(complete);
        assert_eq!(stmts.len(), 2, "{stmts:?}");
        assert!(
            stmts[0].text.ends_with("FROM `end`;\nEND"),
            "{}",
            stmts[0].text
        );
        assert_eq!((stmts[1].text.as_str(), stmts[1].line), ("SELECT 1", 7));
        let (stmts, _) = split_statements(
            "explain changelog_mode statement set begin insert into a select 1; end; SELECT 2;",
        );
        assert_eq!(stmts.len(), 2, "{stmts:?}");
        // Not a set: each `;` ends a statement; an open set without END runs to the end.
        let (stmts, _) =
            split_statements("EXECUTE INSERT INTO a SELECT 1; BEGIN STATEMENT SET; END;");
        assert_eq!(stmts.len(), 3, "{stmts:?}");
        let (stmts, complete) =
            split_statements("EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1;");
        assert_eq!((stmts.len(), complete), (1, false));
    }

    #[test]
    fn long_scripts_split_in_linear_time() {
        // 200,000 statements: counting lines from the start for each one took many minutes
        // (4·10^11 bytes scanned); counted forward, this is a fraction of a second.
        let script = "SELECT 1;\n".repeat(200_000);
        let (stmts, _) = split_statements(&script);
        assert_eq!(stmts.len(), 200_000);
        assert_eq!((stmts[199_999].line, stmts[199_999].column), (200_000, 1));
    }
}
