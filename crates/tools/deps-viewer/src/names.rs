//! Kernel id → function name maps (`--func-names`, or a sibling `name_map*.json`).
//!
//! Two shapes are accepted: a flat `{"<id>": "<name>"}` object, or an object whose
//! `callable_id_to_name` member is such a map (the form `simpler run` writes). Entries whose
//! value is not a string are ignored.

use std::path::Path;

pub use simpler_artifacts::name_map::{discover, NameMap, NameMapError};

/// Loads `explicit` if given (an error if it cannot be read), else the discovered sibling of
/// `deps_json` (a warning on stderr if it cannot be read, and no map).
pub fn resolve(explicit: Option<&Path>, deps_json: &Path) -> Result<Option<NameMap>, NameMapError> {
    let dir = deps_json
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (map, from) = simpler_artifacts::name_map::resolve(explicit, dir)?;
    Ok(from.map(|_| map))
}
