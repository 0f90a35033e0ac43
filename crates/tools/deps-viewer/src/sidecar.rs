//! The perf sidecar: the swimlane records file next to deps.json, under any of its names
//! (`simpler_artifacts::swimlane::find_in`: `l2_swimlane_records.json`,
//! `chip_swimlane_records.json`, `l2_perf_records.json`).
//!
//! "Loaded" means the file is a records file the swimlane reader accepts (ours or the
//! original's, any level), read through `simpler_artifacts::swimlane::read_swimlane` with
//! nothing kept. A sidecar that exists but cannot be read is reported as a warning on stderr
//! and counts as not loaded.

use std::path::Path;

use simpler_artifacts::swimlane::{find_in, read_swimlane, SwimlaneSink, TaskRow};

/// Keeps nothing: the viewer only says whether the sidecar loaded.
struct Discard;

impl SwimlaneSink for Discard {
    fn task(&mut self, _: TaskRow) {}
}

/// Returns true if and only if a records file next to `deps_json` exists and reads.
pub fn perf_sidecar_loaded(deps_json: &Path) -> bool {
    let dir = match deps_json.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Some(path) = find_in(dir) else {
        return false;
    };
    match read_swimlane(&path, &mut Discard) {
        Ok(_) => true,
        Err(e) => {
            simpler_artifacts::errln!("warning: ignoring perf sidecar: {e}");
            false
        }
    }
}
