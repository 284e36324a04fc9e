//! The SQL client's printing of statement results, as `sql-client.sh` prints them: `[INFO]`
//! lines, listings as tables, and query results in the session's result mode.

use std::io::Write;

use super::result_sink::{MaterializeSink, StreamingTableauSink};
use super::tableau;
use crate::exec::error::ExecError;
use crate::session::{
    DEPRECATED_MAX_COLUMN_WIDTH, MAX_COLUMN_WIDTH, MAX_TABLE_RESULT_ROWS, PlannedQuery,
    RESULT_MODE, Session, StatementError, StatementResult,
};
use crate::sql::ast::ParsedStatement;

/// Executes one statement and prints its result to `out`; a query or INSERT runs here, its
/// rows printed as they arrive (or at the end, as the result mode says).
pub fn execute(
    session: &mut Session,
    parsed: &ParsedStatement,
    out: &mut dyn Write,
) -> Result<(), StatementError> {
    match session.execute(parsed)? {
        StatementResult::Done => succeeded(out),
        StatementResult::Rows { header, rows } => {
            let header: Vec<&str> = header.iter().map(String::as_str).collect();
            print_rows(out, &header, rows, None)
        }
        StatementResult::Explain(text) => write!(out, "{text}").map_err(write_failed),
        StatementResult::Query(query) => run_query(session, *query, out),
        StatementResult::Insert(insert) => {
            writeln!(
                out,
                "[INFO] Submitting SQL update statement to the cluster..."
            )
            .map_err(write_failed)?;
            out.flush().map_err(write_failed)?;
            if session.inserts_in_background() {
                let id = session.submit(insert)?;
                return writeln!(
                    out,
                    "[INFO] SQL update statement has been successfully submitted to the cluster:\nJob ID: {id}\n"
                )
                .map_err(write_failed);
            }
            insert.run(session, out)?;
            writeln!(
                out,
                "[INFO] Complete execution of the SQL update statement."
            )
            .map_err(write_failed)
        }
    }
}

/// Runs a query, printing its rows as the result mode asks: streaming tableau and changelog
/// mode print every change as it arrives, batch tableau and table mode the final result.
fn run_query(
    session: &Session,
    query: PlannedQuery,
    out: &mut dyn Write,
) -> Result<(), StatementError> {
    let PlannedQuery {
        graph,
        schema,
        zone,
        ..
    } = query;
    let cap = max_column_width(session)?;
    let mode = session
        .option(RESULT_MODE)
        .map_or("tableau".to_string(), |m| m.to_ascii_lowercase());
    if mode == "changelog" && session.batch_mode() {
        return Err(StatementError::Job(
            "Results of batch queries can only be served in table or tableau mode.".into(),
        ));
    }
    // Batch tableau and table mode print the final, materialized result; streaming
    // tableau and changelog mode print every change as it arrives.
    if session.batch_mode() || mode == "table" {
        let mut sink = MaterializeSink::new(schema.clone(), zone.clone());
        // Flink bounds the table view (keeping the newest rows), not batch tableau.
        if mode == "table" {
            let max = session
                .option(MAX_TABLE_RESULT_ROWS)
                .map_or(1_000_000, |v| v.parse::<i64>().unwrap_or(1_000_000));
            sink.limit = usize::try_from(max).ok().filter(|&m| m > 0);
        }
        // Nothing was printed yet: Flink reports a cancelled batch result as 0 rows.
        session
            .run_job(graph, &mut sink)
            .map_err(|e| terminated(e, 0, out))?;
        let names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
        return print_rows(out, &names, sink.rows(), Some(cap));
    }
    let mut sink = StreamingTableauSink::new(schema, zone.clone(), cap, out);
    let result = session.run_job(graph, &mut sink);
    let rows = sink.rows;
    result.map_err(|e| terminated(e, rows, out))
}

/// `table.display.max-column-width` (or the deprecated key it falls back to), read when a
/// result is printed (as Flink reads it: a
/// bad value is accepted by SET and fails the query that would print).
fn max_column_width(session: &Session) -> Result<usize, StatementError> {
    let set = [MAX_COLUMN_WIDTH, DEPRECATED_MAX_COLUMN_WIDTH]
        .into_iter()
        .find_map(|key| session.option(key).map(|value| (key, value)));
    let Some((key, value)) = set else {
        return Ok(tableau::MAX_COLUMN_WIDTH);
    };
    let width: i32 = value.trim().parse().map_err(|_| {
        StatementError::Job(format!("Could not parse value '{value}' for key '{key}'."))
    })?;
    if width <= 0 {
        return Err(StatementError::Job(
            "maxColumnWidth should be greater than 0".into(),
        ));
    }
    Ok(width as usize)
}

/// A query's failure; a cancel (the user's Ctrl-C) ends the printed rows with Flink's line.
fn terminated(e: ExecError, rows: u64, out: &mut dyn Write) -> StatementError {
    match e {
        ExecError::Cancelled => {
            let unit = if rows > 1 { "rows" } else { "row" };
            let _ = writeln!(out, "Query terminated, received a total of {rows} {unit}");
            let _ = out.flush();
            StatementError::Interrupted
        }
        e => e.into(),
    }
}

fn write_failed(e: std::io::Error) -> StatementError {
    StatementError::Job(format!("cannot write output: {e}"))
}

fn succeeded(out: &mut dyn Write) -> Result<(), StatementError> {
    writeln!(out, "[INFO] Execute statement succeeded.").map_err(write_failed)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A materialized result: `Empty set`, or the table and `N row(s) in set`.
fn print_rows(
    out: &mut dyn Write,
    header: &[&str],
    rows: Vec<Vec<String>>,
    cap: Option<usize>,
) -> Result<(), StatementError> {
    if rows.is_empty() {
        return writeln!(out, "Empty set").map_err(write_failed);
    }
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    write!(out, "{}", tableau::table(&header, &rows, cap)).map_err(write_failed)?;
    writeln!(out, "{} row{} in set", rows.len(), plural(rows.len())).map_err(write_failed)
}
