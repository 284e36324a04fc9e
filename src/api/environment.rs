//! `StreamTableEnvironment`: a session that takes a program's streams as tables and runs
//! queries whose results the program reads.

use std::io::Write;
use std::sync::Arc;

use super::ApiError;
use super::data_stream::DataStream;
use super::expression::Expression;
use super::from_data_stream::resolve;
use super::table_result::TableResult;
use crate::catalog::TableDef;
use crate::connector::source::stream::ProvidedStream;
use crate::session::{Session, StatementError};
use crate::sql::parser::parse_statement;
use crate::sql::split::split_statements;

/// A session for a program: SQL statements, and streams registered as tables.
#[derive(Default)]
pub struct StreamTableEnvironment {
    session: Session,
}

impl StreamTableEnvironment {
    pub fn new() -> Self {
        Self::default()
    }

    /// Over a session of the caller's (its clock, its options).
    pub fn with_session(session: Session) -> Self {
        StreamTableEnvironment { session }
    }

    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// Registers `stream` as the temporary table `name`, its columns declared by `fields`
    /// as in Flink's `createTemporaryView(name, stream, $("a"), $("t").rowtime(), …)`. The
    /// stream's own watermarks are the table's: no WATERMARK clause is involved.
    pub fn create_temporary_view(
        &mut self,
        name: &str,
        stream: DataStream,
        fields: &[Expression],
    ) -> Result<(), ApiError> {
        let (columns, layout) = resolve(&stream.schema, fields)?;
        let source = ProvidedStream::new(name.to_string(), layout, stream.receiver);
        self.session.register_temporary_table(TableDef {
            name: name.to_string(),
            columns,
            watermark: None,
            primary_key: None,
            comment: None,
            partition_keys: Vec::new(),
            options: Vec::new(),
            provided_source: Some(Arc::new(source)),
        })?;
        Ok(())
    }

    /// Registers a scalar function written in Rust as the temporary system function
    /// `name` (Flink's `createTemporarySystemFunction`): SQL calls it by name, before any
    /// built-in of that name, and a script's `CREATE FUNCTION name AS '…'` leaves it in
    /// place, so a Flink script that declares its Java function runs unchanged.
    pub fn create_temporary_function(
        &mut self,
        name: &str,
        function: impl crate::function::user::ScalarFunction + 'static,
    ) -> Result<(), ApiError> {
        self.session.register_function(name, Arc::new(function))?;
        Ok(())
    }

    /// Registers a table function written in Rust as the temporary system function `name`:
    /// `FROM t, LATERAL TABLE(name(…)) [AS] u(a, b)`, `[LEFT] JOIN LATERAL TABLE(…) ON TRUE`.
    pub fn create_temporary_table_function(
        &mut self,
        name: &str,
        function: impl crate::function::user::TableFunction + 'static,
    ) -> Result<(), ApiError> {
        self.session
            .register_table_function(name, Arc::new(function))?;
        Ok(())
    }

    /// Registers an aggregate function written in Rust as the temporary system function
    /// `name`, which SQL calls as any aggregate.
    pub fn create_temporary_aggregate_function(
        &mut self,
        name: &str,
        function: impl crate::function::user::UserAggregateFunction + 'static,
    ) -> Result<(), ApiError> {
        self.session
            .register_aggregate_function(name, Arc::new(function))?;
        Ok(())
    }

    /// Runs a script of statements (DDL, SET, DESC, SHOW, …; queries print as the SQL
    /// client prints them) and returns what they printed.
    pub fn execute_sql(&mut self, script: &str) -> Result<String, ApiError> {
        let mut out = Vec::new();
        let (statements, _) = split_statements(script);
        for statement in &statements {
            let parsed = parse_statement(statement).map_err(StatementError::from)?;
            crate::client::execute(&mut self.session, &parsed, &mut out)?;
        }
        let _ = out.flush();
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// Starts a `SELECT` on a background thread; its result is read as a changelog stream.
    pub fn execute_query(&mut self, query: &str) -> Result<TableResult, ApiError> {
        let (statements, _) = split_statements(query);
        let [statement] = statements.as_slice() else {
            return Err(ApiError::Validation(format!(
                "expected one query, got {} statements",
                statements.len()
            )));
        };
        let parsed = parse_statement(statement).map_err(StatementError::from)?;
        let planned = self.session.plan_query(&parsed)?;
        TableResult::start(planned)
    }
}
