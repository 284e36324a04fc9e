//! Tideline: Flink SQL in one Rust binary.
pub mod clock;
pub mod connector;
pub mod function;
pub mod sql;
pub mod types;
