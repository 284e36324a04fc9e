//! The SQL front end: Flink SQL text in, statements out.
//!
//! A script is split into statements ([`split`]), each statement is tokenized by `sqlparser`
//! with our [`dialect::FlinkDialect`] and parsed by our own statement layer ([`parser`]) into
//! the Flink statements of [`ast`]. Query bodies and expressions stay `sqlparser` ASTs; Flink
//! DDL (watermarks, computed and metadata columns, `PRIMARY KEY … NOT ENFORCED`, `WITH`
//! options) and Flink's types are parsed here because no `sqlparser` dialect knows them.
//! Every error carries the line and column of the script it came from ([`error::SqlError`]).

pub mod ast;
pub mod dialect;
pub mod error;
pub mod json;
pub mod parser;
pub mod split;
pub mod types;
pub mod unparse;

pub use error::SqlError;
