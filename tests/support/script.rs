//! A script run in-process by a test: the client's statements one by one on a fresh
//! session with a manual clock (`tests/jdbc.rs`, and through `support/kafka.rs` the Kafka
//! tests).

// Each test crate that includes this module uses part of it.
#![allow(dead_code)]

use tideline::client::{Session, render_error};
use tideline::sql::parser::parse_statement;
use tideline::sql::split::split_statements;

/// Runs a script: whether it succeeded, and its output (then its first error, if one).
pub fn run(script: &str) -> (bool, String) {
    let mut session = Session::new(tideline::clock::ManualClock::new(0));
    let mut out = Vec::new();
    let (statements, _) = split_statements(script);
    for stmt in &statements {
        let result = parse_statement(stmt)
            .map_err(|e| e.render(script))
            .and_then(|parsed| {
                tideline::client::execute(&mut session, &parsed, &mut out)
                    .map_err(|e| render_error(&e, script))
            });
        if let Err(e) = result {
            return (false, format!("{}{e}", String::from_utf8_lossy(&out)));
        }
    }
    (true, String::from_utf8_lossy(&out).into_owned())
}

/// Runs a script that must succeed: its output.
pub fn ok(script: &str) -> String {
    let (ok, out) = run(script);
    assert!(ok, "{script}\nfailed:\n{out}");
    out
}
