//! Sources: the connector option names of Flink, each producing source splits.

pub mod datagen;
pub mod filesystem;
pub mod jdbc;
pub mod kafka;
pub mod legacy_filesystem;
pub mod nexmark;
pub mod socket;
pub mod split;
pub mod stream;
pub mod values;
