//! A database of its own on the test PostgreSQL server, for the tests that need one
//! (`tests/jdbc.rs`, `tests/recovery.rs`). The server comes from `TIDELINE_PG_URL`
//! (`jdbc:postgresql://127.0.0.1:54329/postgres`) and `TIDELINE_PG_USER`, which `.ci/run`
//! sets after starting one.

// Each test crate that includes this module uses part of it.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

/// A database of its own on the test server, dropped at the end.
pub struct Database {
    pub admin: String,
    pub user: String,
    pub name: String,
}

impl Database {
    pub fn create() -> Option<Database> {
        let Ok(url) = std::env::var("TIDELINE_PG_URL") else {
            eprintln!(
                "skipped: no PostgreSQL server (TIDELINE_PG_URL is not set; .ci/run starts one)"
            );
            return None;
        };
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "tideline_test_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let user = std::env::var("TIDELINE_PG_USER").unwrap_or_else(|_| "postgres".into());
        let db = Database {
            admin: url,
            user,
            name,
        };
        db.client(false)
            .batch_execute(&format!("CREATE DATABASE {}", db.name))
            .expect("create the test database");
        Some(db)
    }

    /// `jdbc:postgresql://host:port/<this database>`.
    pub fn url(&self) -> String {
        let base = self
            .admin
            .rsplit_once('/')
            .map_or(&self.admin[..], |(b, _)| b);
        format!("{base}/{}", self.name)
    }

    pub fn client(&self, own: bool) -> postgres::Client {
        let address = self
            .admin
            .strip_prefix("jdbc:postgresql://")
            .expect("a jdbc:postgresql:// URL");
        let (host_port, admin_db) = address.split_once('/').unwrap_or((address, "postgres"));
        let (host, port) = host_port.rsplit_once(':').unwrap_or((host_port, "5432"));
        let db = if own { self.name.as_str() } else { admin_db };
        postgres::Config::new()
            .host(host)
            .port(port.parse().expect("a port"))
            .user(&self.user)
            .dbname(db)
            .connect(postgres::NoTls)
            .expect("connect to the test server")
    }

    /// The table's rows as text, sorted.
    pub fn rows(&self, sql: &str) -> Vec<String> {
        let mut rows: Vec<String> = self
            .client(true)
            .simple_query(sql)
            .expect("query the test database")
            .into_iter()
            .filter_map(|m| match m {
                postgres::SimpleQueryMessage::Row(row) => Some(
                    (0..row.len())
                        .map(|i| row.get(i).unwrap_or("NULL").to_string())
                        .collect::<Vec<_>>()
                        .join(" | "),
                ),
                _ => None,
            })
            .collect();
        rows.sort();
        rows
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let _ = self.client(false).batch_execute(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ));
    }
}
