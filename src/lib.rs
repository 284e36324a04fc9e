//! Tideline: Flink SQL in one Rust binary.
//!
//! The path of a query (docs/architecture.md follows one through it):
//!
//! ```text
//! SQL text ─sql─▶ AST ─plan::bind─▶ logical plan ─plan::stream─▶ stream plan ─job─▶ job graph
//!                       (catalog)                                              │ runtime::run
//!                                      connector::source splits ▶ exec operators (tasks) ▶ sink
//! ```
//!
//! `session` runs each statement to a typed result; `client` (the SQL client) prints it, and
//! `api` embeds the same path in a Rust program: its own streams as tables, results read as
//! changelog streams.
pub mod api;
pub mod catalog;
pub mod client;
pub mod clock;
pub mod connector;
pub mod exec;
pub mod function;
pub mod plan;
pub mod runtime;
pub mod session;
pub mod sql;
pub mod types;
