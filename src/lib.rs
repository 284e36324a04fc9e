//! Tideline: Flink SQL in one Rust binary.
pub mod catalog;
pub mod client;
pub mod clock;
pub mod connector;
pub mod exec;
pub mod function;
pub mod job;
pub mod plan;
pub mod sql;
pub mod types;
