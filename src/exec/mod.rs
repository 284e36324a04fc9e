//! Execution: operators as synchronous state machines over
//! [`StreamChunk`](crate::types::chunk::StreamChunk)s, and their keyed state (`state/`).
//!
//! An operator ([`operator::Operator`]) reacts to chunks, watermarks and the end of input and
//! pushes what it emits into an [`operator::Output`]; it knows nothing of threads or I/O.
//! The runtime (`runtime/`, a layer above) runs them in chains on split and task threads.

pub mod aggregate;
pub mod calc;
pub mod changelog_kinds;
pub mod changelog_normalize;
pub mod correlate;
pub mod deduplicate;
pub mod drop_update_before;
pub mod error;
pub mod eval;
pub mod expand;
pub mod group_aggregate;
pub mod group_window_aggregate;
pub mod interval_join;
pub mod join;
pub mod limit;
pub mod lookup_join;
pub mod not_null;
pub mod operator;
pub mod over_aggregate;
pub mod rank;
pub mod semi_anti_join;
pub mod session_window_table_function;
pub mod slicing_window_aggregate;
pub mod state;
pub mod temporal_join;
pub mod temporal_sort;
#[cfg(test)]
pub mod test_harness;
pub mod time_column;
pub mod watermark_assigner;
pub mod window_assigner;
pub mod window_deduplicate;
pub mod window_join;
pub mod window_rank;
pub mod window_table_function;
