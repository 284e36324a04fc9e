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
        let result = parse_statement(stmt)
            .map_err(StatementError::from)
            .and_then(|parsed| session.execute(&parsed, out));
        if let Err(e) = result {
            let _ = out.flush();
            eprintln!("{}", render_error(&e, script));
            return false;
        }
        let _ = out.flush();
    }
    true
}

pub fn render_error(e: &StatementError, script: &str) -> String {
    let detail = match e {
        StatementError::Sql(sql) => sql.render(script),
        StatementError::Job(message) => message.clone(),
    };
    format!("[ERROR] Could not execute SQL statement. Reason:\n{detail}")
}
