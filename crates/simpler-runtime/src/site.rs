//! Call sites as the diagnostics print them: `"<file>:<line>"`. Shared by the orchestrator
//! (scope sites, error messages) and the collectors (scope-stats samples), so that neither
//! depends on the other for it.

use std::panic::Location;

/// `"<file>:<line>"` for a call site (the file's base name, as scope stats reports it).
pub fn site_string(loc: &Location<'_>) -> String {
    let file = loc.file();
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    format!("{base}:{}", loc.line())
}
