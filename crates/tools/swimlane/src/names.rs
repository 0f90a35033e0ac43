//! Kernel names: `--func-names`, else the newest sibling `name_map*.json`, else `func_<id>`.
//!
//! A map is a flat `{"<id>": "<name>"}` object or an object whose `callable_id_to_name` member
//! is one (the form `simpler run` writes). Entries whose value is not a string are ignored.

pub use simpler_artifacts::name_map::{discover, resolve, NameMap as Names};
