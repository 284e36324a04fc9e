//! The dataflow runtime of docs/design/0003-stream-runtime.md: a job graph of source splits
//! and tasks ([`graph`]), run with a thread per split reader and per task instance
//! ([`run`]), bounded queues between them ([`channel`]), operator chains fused on a thread
//! ([`chain`]), a split's fork when several consumers read it ([`fork`]), partitioners on the
//! edges, a watermark valve where channels meet, and the job's sinks ([`sinks`]).

pub mod allocator;
pub mod build;
pub mod chain;
pub mod channel;
pub mod checkpoint;
pub mod fork;
pub mod graph;
pub mod partitioner;
pub mod run;
pub mod sinks;
pub mod task;
pub mod watermark_valve;
