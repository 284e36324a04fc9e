//! Connectors: sources and sinks by Flink's option names, and the formats they share.
//!
//! Formats (`format/`) turn bytes into Arrow columns and back; transports (`source/`,
//! `sink/`) move bytes. A format never knows where its bytes come from.

pub mod format;
