//! The perf sidecar: a `l2_swimlane_records.json` next to deps.json.
//!
//! Its schema is not fixed yet, so the viewer only reports whether it was loaded: "loaded"
//! means the file exists and is well-formed JSON (parsed in a streaming pass, nothing kept).
//! A sidecar that exists but does not parse is reported as a warning on stderr and counts as
//! not loaded.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use serde::de::IgnoredAny;
use serde::Deserialize;

/// The sidecar's file name.
pub const SIDECAR_FILE: &str = "l2_swimlane_records.json";

/// Returns true if and only if the sidecar next to `deps_json` exists and parses as JSON.
pub fn perf_sidecar_loaded(deps_json: &Path) -> bool {
    let path = deps_json.with_file_name(SIDECAR_FILE);
    let Ok(file) = File::open(&path) else {
        return false;
    };
    let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 20, file));
    match IgnoredAny::deserialize(&mut de).and_then(|_| de.end()) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("warning: ignoring perf sidecar {}: {e}", path.display());
            false
        }
    }
}
