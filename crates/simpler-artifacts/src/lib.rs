//! File formats written by `simpler` runs and read by its tools.
//!
//! Each module owns one artifact: its serde types, a streaming reader and (where the runtime
//! writes it) a streaming writer. Tools depend on this crate, never on the runtime.
//!
//! Every file any command writes goes through [`publish`] (temporary, fsync, rename); an output
//! folder is claimed by one run at a time ([`output_folder`]); [`manifest`] is the run's
//! `run.json`, which tools consult before trusting an artifact.

pub mod args_dump;
pub mod deps;
pub mod direct_file;
pub mod find;
pub mod host;
pub mod html;
pub mod input;
pub mod interrupt;
pub mod manifest;
pub mod name_map;
mod opaque_error;
pub mod output_folder;
pub mod plan;
pub mod provenance;
pub mod publish;
pub mod read_error;
pub mod release;
pub mod scope_stats;
pub mod stdout;
pub mod swimlane;
#[doc(hidden)]
pub mod testing;
pub mod time;
pub mod unique_keys;
