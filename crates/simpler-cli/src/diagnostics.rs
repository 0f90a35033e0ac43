//! What `simpler run` does after a run with diagnostics on: say where each artifact went and
//! render the reports of the artifacts that exist.

use std::path::Path;

use anyhow::Result;
use simpler_runtime::{CallConfig, RunReport};

/// Reports the artifacts of a finished run and renders their reports.
pub fn post_run(cfg: &CallConfig, prefix: &Path, report: &RunReport) -> Result<()> {
    if cfg.enable_scope_stats {
        match &report.scope_stats {
            Some(s) => match &s.path {
                Some(path) => {
                    println!(
                        "  scope stats {} ({}, {} samples)",
                        path.display(),
                        s.verdict,
                        s.retained
                    );
                    let html = simpler_scope_stats_plot::render_report(path, None)?;
                    println!("  report      {}", html.display());
                }
                None => println!(
                    "  scope stats not written: {}",
                    s.note.as_deref().unwrap_or(&s.verdict)
                ),
            },
            None => println!("  scope stats not collected"),
        }
    }
    if cfg.enable_dep_gen {
        match &report.dep_gen {
            Some(d) => match (&d.path, &d.counts) {
                (Some(path), Some(c)) => {
                    println!(
                        "  dep_gen     {} ({} tasks, {} tensors, {} edges)",
                        path.display(),
                        c.tasks,
                        c.tensors,
                        c.edges
                    );
                    let txt = simpler_deps_viewer::write_text_view(path)?;
                    println!("  deps view   {}", txt.display());
                }
                _ => println!("  dep_gen     {}", d.problem.as_deref().unwrap_or("not written")),
            },
            None => println!("  dep_gen     not collected"),
        }
    }
    let mut items = Vec::new();
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
