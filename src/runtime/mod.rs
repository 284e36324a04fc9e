//! The dataflow runtime of docs/design/0003-stream-runtime.md, built up step by step: its
//! pieces land here as they are made, and the job runs on `exec::runtime` until the task
//! graph replaces it.

pub mod partitioner;
pub mod watermark_valve;
