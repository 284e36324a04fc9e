//! Planning: statements bound against the catalog into typed logical plans.
//!
//! [`bind`] resolves names and types (Flink's rules: implicit widening, literal types,
//! time attributes) and produces a [`logical::LogicalPlan`] of [`expr::ScalarExpr`]s.
//! Stateless queries need no rewrite: the logical plan is what the job runs.

pub mod bind;
pub mod expr;
pub mod logical;
