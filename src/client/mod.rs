//! The SQL client: the REPL, the script runner and the printing of results, like Flink's
//! `sql-client.sh`.

pub mod session;
pub mod tableau;

use std::io::Write;

use crate::sql::parser::parse_statement;
use crate::sql::split::split_statements;

pub use session::{Session, StatementError};

/// Runs every statement of a script in order; stops at the first error, which is printed to
/// stderr with its position. Returns whether all statements succeeded.
pub fn run_script(session: &mut Session, script: &str, out: &mut dyn Write) -> bool {
    let (statements, _) = split_statements(script);
    for stmt in &statements {
        // Parsing, binding and dropping a statement recurse as deep as its expressions nest,
        // which only the statement's length bounds (`1+1+…` nests once per two characters);
        // sqlparser's own code recurses without growing the stack. So each statement runs
        // on a stack sized by its length, allocated as it is touched.
        let stack = STATEMENT_STACK + stmt.text.len().saturating_mul(STACK_PER_BYTE);
        let result = stacker::maybe_grow(stack, stack, || {
            parse_statement(stmt)
                .map_err(StatementError::from)
                .and_then(|parsed| session.execute(&parsed, out))
        });
        if let Err(e) = result {
            let _ = out.flush();
            eprintln!("{}", render_error(&e, script));
            return false;
        }
        let _ = out.flush();
    }
    true
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
    };
    format!("[ERROR] Could not execute SQL statement. Reason:\n{detail}")
}
