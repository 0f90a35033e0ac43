//! What `simpler run` does after a run with diagnostics on: say where each artifact went and
//! render the reports of the artifacts that exist.

use std::path::Path;

use anyhow::Result;
use simpler_runtime::{CallConfig, RunReport};

/// Prints the first lines of a run summary: title, tasks per ring, wall and orchestration time.
pub fn print_run_header(title: &str, r: &RunReport, clusters: usize) {
    println!("{title} on {}", r.runtime.name());
    let rings: Vec<String> = r
        .tasks_per_ring
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(i, n)| format!("ring {i}: {n}"))
        .collect();
    println!("  tasks      {} ({})", r.tasks, rings.join(", "));
    println!(
        "  wall time  {:.3} ms (orchestration {:.3} ms, {} scheduler thread(s), {clusters} clusters)",
        r.wall.as_secs_f64() * 1e3,
        r.orchestration.as_secs_f64() * 1e3,
        r.scheduler_threads,
    );
}

/// Reports the artifacts of a finished run and renders their reports.
pub fn post_run(cfg: &CallConfig, prefix: &Path, report: &RunReport) -> Result<()> {
    println!("  artifacts  {}", prefix.display());
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
    if cfg.enable_l2_swimlane {
        match &report.swimlane {
            Some(l) => {
                if let Some(path) = &l.path {
                    println!(
                        "  swimlane    {} ({} task rows, {} dummy rows, {} submit spans)",
                        path.display(),
                        l.rows[0],
                        l.rows[1],
                        l.rows[2]
                    );
                    let summary = simpler_swimlane::convert(path, None, None, None)?;
                    println!(
                        "  trace       {} ({} dependency flows, {} hb_violation)",
                        summary.output.display(),
                        summary.flows.dependency,
                        summary.flows.hb_violation
                    );
                }
                if let Some(p) = &l.problem {
                    println!("  swimlane    warning: {p}");
                }
            }
            None => println!("  swimlane    not collected"),
        }
    }
    Ok(())
}
