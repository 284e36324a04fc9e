//! Planning: statements bound against the catalog into typed logical plans.
//!
//! [`bind`] resolves names and types (Flink's rules: implicit widening, literal types,
//! time attributes) and produces a [`logical::LogicalPlan`] of [`expr::ScalarExpr`]s.
//! [`stream`] lays the logical plan out as the stream plan the job runs, and [`explain`]
//! prints both as Flink's EXPLAIN does.

pub mod aggregate;
pub mod bind;
pub mod explain;
pub mod expr;
pub mod logical;
pub mod stream;
