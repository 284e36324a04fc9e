//! Flink's `jdbc` connector as a bounded source, for PostgreSQL: one split reads the whole
//! table (`table-name`) through a server-side cursor, 8,192 rows a fetch, so a large table is
//! never held at once. Columns are found by name. Each value comes as the server's text of it
//! (booleans as `true`/`false`, instants in UTC, bytes in hex), read by Tideline's text
//! parser for the column's type, so a value it cannot hold fails the job with its row.

use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, RecordBatch, StringArray};
use arrow_schema::SchemaRef;

use crate::connector::ConnectorError;
use crate::connector::jdbc::{JdbcTarget, error_text, quoted};
use crate::connector::registry::{ScanRequest, SourceFactory};
use crate::connector::source::split::{DeferredSplit, Pipeline, SourceSplit};
use crate::exec::error::ExecError;
use crate::function::EvalContext;
use crate::types::chunk::batch_with_rows;
use crate::types::text::parse_column;
use crate::types::time::SessionZone;
use crate::types::{Schema, TypeKind};

/// Rows a fetch asks for.
const FETCH_ROWS: usize = 8192;

pub struct JdbcSourceFactory;

impl SourceFactory for JdbcSourceFactory {
    fn identifier(&self) -> &'static str {
        "jdbc"
    }

    fn is_bounded(&self, _table: &crate::catalog::TableDef) -> bool {
        true
    }

    fn splits(
        &self,
        scan: &ScanRequest,
        _ctx: &EvalContext,
    ) -> Result<Vec<Pipeline>, ConnectorError> {
        let server = JdbcTarget::of(scan.table, &scan.table.name)?;
        let schema = scan.physical.clone();
        for f in &schema.fields {
            if matches!(
                f.data_type.kind,
                TypeKind::Array(_) | TypeKind::Map(..) | TypeKind::Row(_)
            ) {
                return Err(ConnectorError(format!(
                    "table '{}': column '{}' of type {} cannot be read from PostgreSQL yet",
                    server.name, f.name, f.data_type
                )));
            }
        }
        let name = format!("table {} of {}", server.target, server.url);
        let split = DeferredSplit::new(name, move || {
            JdbcSplit::open(server, schema).map(|s| Box::new(s) as Box<dyn SourceSplit>)
        });
        Ok(vec![Pipeline {
            branches: Vec::new(),
            split: Box::new(split),
            operators: Vec::new(),
        }])
    }
}

struct JdbcSplit {
    client: postgres::Client,
    server: JdbcTarget,
    schema: Schema,
    arrow: SchemaRef,
    zone: SessionZone,
    /// Rows fetched so far, for messages.
    rows: usize,
    done: bool,
}

impl JdbcSplit {
    fn open(server: JdbcTarget, schema: Schema) -> Result<Self, ExecError> {
        let mut client = server.connect().map_err(ExecError::Source)?;
        let columns: Vec<String> = schema
            .fields
            .iter()
            .map(|f| {
                let c = quoted(&f.name);
                match f.data_type.kind {
                    TypeKind::TimestampLtz(_) => {
                        format!("to_char({c} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')")
                    }
                    TypeKind::Binary(_) | TypeKind::VarBinary(_) => format!("encode({c}, 'hex')"),
                    _ => format!("{c}::text"),
                }
            })
            .collect();
        let select = if columns.is_empty() {
            format!("SELECT FROM {}", server.target)
        } else {
            format!("SELECT {} FROM {}", columns.join(", "), server.target)
        };
        client
            .batch_execute(&format!(
                "BEGIN READ ONLY; DECLARE tideline_scan NO SCROLL CURSOR FOR {select}"
            ))
            .map_err(|e| {
                ExecError::Source(format!(
                    "table '{}': reading {} failed: {}",
                    server.name,
                    server.target,
                    error_text(&e)
                ))
            })?;
        Ok(JdbcSplit {
            client,
            arrow: crate::types::chunk::runtime_schema(&schema),
            schema,
            server,
            zone: SessionZone::utc(),
            rows: 0,
            done: false,
        })
    }
}

impl SourceSplit for JdbcSplit {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ExecError> {
        if self.done {
            return Ok(None);
        }
        let fail = |e: postgres::Error, server: &JdbcTarget| {
            ExecError::Source(format!(
                "table '{}': reading {} failed: {}",
                server.name,
                server.target,
                error_text(&e)
            ))
        };
        let messages = self
            .client
            .simple_query(&format!("FETCH {FETCH_ROWS} FROM tideline_scan"))
            .map_err(|e| fail(e, &self.server))?;
        let width = self.schema.len();
        let mut cells: Vec<Vec<Option<String>>> = vec![Vec::new(); width];
        let mut n = 0;
        for message in messages {
            if let postgres::SimpleQueryMessage::Row(row) = message {
                for (c, column) in cells.iter_mut().enumerate() {
                    column.push(row.get(c).map(str::to_string));
                }
                n += 1;
            }
        }
        if n < FETCH_ROWS {
            self.done = true;
            let _ = self.client.batch_execute("COMMIT");
        }
        if n == 0 {
            return Ok(None);
        }
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(width);
        for (c, values) in cells.into_iter().enumerate() {
            let field = &self.schema.fields[c];
            let array: ArrayRef = match field.data_type.kind {
                TypeKind::Binary(_) | TypeKind::VarBinary(_) => {
                    let bytes: Vec<Option<Vec<u8>>> =
                        values.iter().map(|v| v.as_deref().map(unhex)).collect();
                    Arc::new(BinaryArray::from_iter(bytes))
                }
                _ => {
                    let (array, errors) =
                        parse_column(&StringArray::from(values), &field.data_type, &self.zone);
                    if let Some((row, text)) = errors.first() {
                        return Err(ExecError::Source(format!(
                            "table '{}': row {} of {}: column '{}' cannot hold {text}",
                            self.server.name,
                            self.rows + row + 1,
                            self.server.target,
                            field.name
                        )));
                    }
                    array
                }
            };
            columns.push(array);
        }
        self.rows += n;
        Ok(Some(batch_with_rows(self.arrow.clone(), columns, n)?))
    }

    fn describe(&self) -> String {
        format!("table {} of {}", self.server.target, self.server.url)
    }
}

/// PostgreSQL's hex text of bytes, back to bytes.
fn unhex(text: &str) -> Vec<u8> {
    let digit = |b: u8| match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => b - b'A' + 10,
    };
    text.as_bytes()
        .chunks_exact(2)
        .map(|p| digit(p[0]) << 4 | digit(p[1]))
        .collect()
}
