//! What the `jdbc` connector's source and sink share: the table's server (`url` =
//! `jdbc:postgresql://host[:port]/database`, `username`, `password`) and `table-name`, a
//! connection whose session runs in UTC, and the server's error messages.

use std::time::Duration;

use super::ConnectorError;
use crate::catalog::TableDef;

/// A `jdbc` table's server and table, checked.
pub struct JdbcTarget {
    /// The table's name in Tideline, for messages.
    pub name: String,
    pub url: String,
    config: postgres::Config,
    /// `table-name`, quoted for SQL (`"public"."counts"`).
    pub target: String,
}

/// A name quoted for SQL.
pub fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl JdbcTarget {
    /// `name`: the table's name in Tideline.
    pub fn of(table: &TableDef, name: &str) -> Result<Self, ConnectorError> {
        let fail = |m: String| ConnectorError(format!("table '{name}': {m}"));
        let required = |key: &str| {
            table
                .option(key)
                .ok_or_else(|| fail(format!("the 'jdbc' connector needs the option '{key}'")))
        };
        let url = required("url")?.to_string();
        let rest = url.strip_prefix("jdbc:postgresql://").ok_or_else(|| {
            fail(format!(
                "'{url}' is not a PostgreSQL URL (jdbc:postgresql://host[:port]/database); Tideline's 'jdbc' connector speaks to PostgreSQL"
            ))
        })?;
        let (address, database) = rest.split_once('/').unwrap_or((rest, ""));
        let database = database.split('?').next().unwrap_or_default();
        let (host, port) = match address.rsplit_once(':') {
            Some((host, port)) => (
                host,
                port.parse::<u16>()
                    .map_err(|_| fail(format!("'{url}' has no valid port")))?,
            ),
            None => (address, 5432),
        };
        if host.is_empty() {
            return Err(fail(format!("'{url}' names no host")));
        }
        let mut config = postgres::Config::new();
        config
            .host(host)
            .port(port)
            .connect_timeout(Duration::from_secs(10));
        if !database.is_empty() {
            config.dbname(database);
        }
        if let Some(user) = table.option("username") {
            config.user(user);
        }
        if let Some(password) = table.option("password") {
            config.password(password);
        }
        let target = required("table-name")?
            .split('.')
            .map(quoted)
            .collect::<Vec<_>>()
            .join(".");
        Ok(JdbcTarget {
            name: name.to_string(),
            url,
            config,
            target,
        })
    }

    /// A connection whose session runs in UTC.
    pub fn connect(&self) -> Result<postgres::Client, String> {
        let mut client = self.config.connect(postgres::NoTls).map_err(|e| {
            format!(
                "table '{}': cannot connect to '{}': {}",
                self.name,
                self.url,
                error_text(&e)
            )
        })?;
        client
            .batch_execute("SET TIME ZONE 'UTC'")
            .map_err(|e| format!("table '{}': {}", self.name, error_text(&e)))?;
        Ok(client)
    }
}

/// The server's message (and its detail) rather than the client library's summary.
pub fn error_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_string(),
        },
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                text.push_str(&format!(": {s}"));
                source = s.source();
            }
            text
        }
    }
}
