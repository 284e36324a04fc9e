//! Flink's `json` format.
