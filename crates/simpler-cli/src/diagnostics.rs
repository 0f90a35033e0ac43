//! What `simpler run` does after a run with diagnostics on: report where each artifact went
//! and render the reports of the artifacts that exist.

use std::path::Path;

use anyhow::Result;
use simpler_runtime::CallConfig;

/// Lists the artifacts of a finished run.
pub fn post_run(cfg: &CallConfig, prefix: &Path) -> Result<()> {
    let mut items = Vec::new();
    if cfg.enable_scope_stats {
        items.push((
            "scope stats",
            prefix.join("scope_stats").join("scope_stats.jsonl"),
        ));
    }
    if cfg.enable_dep_gen {
        items.push(("dep_gen", prefix.join("deps.json")));
    }
    if cfg.enable_l2_swimlane {
        items.push(("swimlane", prefix.join("l2_swimlane_records.json")));
    }
    for (what, path) in items {
        if path.exists() {
            println!("  {what:<11} {}", path.display());
        } else {
            println!("  {what:<11} not written: this collector is not implemented yet");
        }
    }
    Ok(())
}
