//! The SQL client: the REPL, the script runner and the printing of results, like Flink's
//! `sql-client.sh`.

pub mod background;
mod result;
mod result_sink;
pub mod tableau;

use std::io::Write;

use crate::sql::parser::parse_statement;
use crate::sql::split::split_statements;

pub use crate::session::{Session, StatementError};
pub use result::execute;

/// Runs every statement of a script in order; stops at the first error, which is printed to
/// stderr with its position, or at a cancel (the session's flag: Ctrl-C). Returns whether all
/// statements succeeded.
pub fn run_script(session: &mut Session, script: &str, out: &mut dyn Write) -> bool {
    let (statements, _) = split_statements(script);
    for stmt in &statements {
        if session.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return false;
        }
        // Parsing, binding and dropping a statement recurse as deep as its expressions nest,
        // which only the statement's length bounds (`1+1+…` nests once per two characters);
        // sqlparser's own code recurses without growing the stack. So each statement runs
        // on a stack sized by its length, allocated as it is touched.
        let stack = STATEMENT_STACK + stmt.text.len().saturating_mul(STACK_PER_BYTE);
        let result = stacker::maybe_grow(stack, stack, || {
            parse_statement(stmt)
                .map_err(StatementError::from)
                .and_then(|parsed| execute(session, &parsed, out))
        });
        if let Err(e) = result {
            let _ = out.flush();
            // A cancelled query has said so on `out` already.
            if !matches!(e, StatementError::Interrupted) {
                eprintln!("{}", render_error(&e, script));
            }
            return false;
        }
        let _ = out.flush();
    }
    true
}

/// A script's bytes as text: a leading UTF-8 byte-order mark is skipped (as the CSV and JSON
/// readers skip it); invalid UTF-8 is an error naming its line, column and byte offset.
pub fn decode_script(mut bytes: Vec<u8>) -> Result<String, String> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let valid = e.utf8_error().valid_up_to();
        // The prefix is valid: count its lines and characters.
        let before = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!("at line {line}, column {column} (byte {valid})")
    })
}

/// The stack every statement starts with, whatever its length.
const STATEMENT_STACK: usize = 64 << 20;
/// Stack per byte of statement text: a level of nesting takes at least two bytes of text and
/// less than 1 KiB of stack in the recursive code that does not grow the stack itself.
const STACK_PER_BYTE: usize = 512;

pub fn render_error(e: &StatementError, script: &str) -> String {
    let detail = match e {
        StatementError::Sql(sql) => sql.render(script),
        StatementError::Job(message) => message.clone(),
        StatementError::Interrupted => e.to_string(),
    };
    format!("[ERROR] Could not execute SQL statement. Reason:\n{detail}")
}
