//! File formats written by `simpler` runs and read by its tools.
//!
//! Each module owns one artifact: its serde types, a streaming reader and (where the runtime
//! writes it) a streaming writer. Tools depend on this crate, never on the runtime.

pub mod deps;
pub mod find;
pub mod name_map;
pub mod read_error;
pub mod scope_stats;
pub mod swimlane;
