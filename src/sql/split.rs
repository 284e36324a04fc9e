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
/// dropped. The last statement may lack its `;`: `complete` tells whether it had one.
pub fn split_statements(script: &str) -> (Vec<StatementText>, bool) {
    let bytes = script.as_bytes();
    let mut out = Vec::new();
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
            b';' => {
                if meaningful {
                    out.push(statement(script, start, i));
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
        out.push(statement(script, start, script.len()));
    }
    (out, complete)
}

fn statement(script: &str, start: usize, end: usize) -> StatementText {
    let end = end.min(script.len());
    let raw = &script[start..end];
    let skipped = raw.len() - raw.trim_start().len();
    let begin = start + skipped;
    let before = &script[..begin];
    let line = before.matches('\n').count() as u64 + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u64 + 1;
    StatementText {
        text: script[begin..end].trim_end().to_string(),
        line,
        column,
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
    }
}
