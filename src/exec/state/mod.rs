//! State for operators (docs/design/0003-stream-runtime.md, section 4): keys spread over key
//! groups as Flink spreads them; the keys an operator holds state for in a [`key_table::KeyTable`].

pub mod alignment;
pub mod byte_store;
pub mod instance;
pub mod join_side;
pub mod key;
pub mod key_group;
pub mod key_table;
pub mod keyed;
pub mod pages;
pub mod sorted_rows;
pub mod timer;
pub mod ttl;
