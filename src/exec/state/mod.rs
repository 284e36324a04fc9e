//! State for operators (docs/design/0003-stream-runtime.md, section 4): keys spread over key
//! groups as Flink spreads them; keyed state and timers come next, per key group.

pub mod alignment;
pub mod key;
pub mod key_group;
