//! Tideline: Flink SQL in one Rust binary.
pub mod sql;
pub mod types;
