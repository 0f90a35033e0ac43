//! What `simpler run` does after a run with diagnostics on: say what the folder's claim
//! removed, list every artifact that exists and every withheld or failed one with its reason,
//! render the reports of the artifacts that exist, and record them in the run manifest.

use std::path::Path;

use simpler_artifacts::manifest::{DiagnosticEntry, Outcome};
use simpler_runtime::{RunOutput, RunReport};

/// Prints the first lines of a run summary: title, tasks per ring, wall and orchestration time.
pub fn print_run_header(title: &str, r: &RunReport, clusters: usize) {
    simpler_artifacts::outln!("{title} on {}", r.runtime.name());
    let rings: Vec<String> = r
        .tasks_per_ring
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(i, n)| format!("ring {i}: {n}"))
        .collect();
    simpler_artifacts::outln!("  tasks      {} ({})", r.tasks, rings.join(", "));
    simpler_artifacts::outln!(
        "  wall time  {:.3} ms (orchestration {:.3} ms, {} scheduler thread(s), {clusters} clusters)",
        r.wall.as_secs_f64() * 1e3,
        r.orchestration.as_secs_f64() * 1e3,
        r.scheduler_threads,
    );
    if let Some(b) = &r.build {
        let ms = |d: std::time::Duration| format!("{:.3} ms", d.as_secs_f64() * 1e3);
        let inference = match b.inference {
            Some(d) => format!("dependency inference {}", ms(d)),
            None => "dependency inference not timed (with --enable-l2-swimlane)".into(),
        };
        simpler_artifacts::outln!(
            "  hbg build  submit {}, {inference}, finalise {}, launch {}",
            ms(b.submit),
            ms(b.finalise),
            ms(b.launch)
        );
    }
}

/// What a requested diagnostic of `report` lost: `"<name> <outcome>: <reason>"`, or nothing
/// when it was fully written (the lines `post_run` returns, before any view's). Scope stats
/// queued for a background writer are not lost (yet): its flush says whether they were
/// (`Worker::flush_diagnostics`).
pub fn unwritten(report: &RunReport, entry: &DiagnosticEntry) -> Option<String> {
    let queued = report.scope_stats.as_ref().is_some_and(|s| s.background);
    if queued && entry.name == simpler_runtime::collectors::scope_stats::NAME {
        return None;
    }
    match entry.outcome {
        Outcome::Written => None,
        o => Some(format!(
            "{} {}: {}",
            entry.name,
            o.as_str(),
            entry.reason.as_deref().unwrap_or("no reason recorded")
        )),
    }
}

/// Reports the artifacts of a finished run, renders their views and rewrites the manifest
/// with them. Returns what was lost (a diagnostic withheld, partial or failed, a view or the
/// manifest that could not be written), one line each; empty when everything was written.
pub fn post_run(report: &mut RunReport) -> Vec<String> {
    let Some(mut output) = report.output.take() else {
        return Vec::new();
    };
    let interrupted = simpler_artifacts::interrupt::requested();
    simpler_artifacts::outln!(
        "  artifacts  {} (run {})",
        output.path().display(),
        output.manifest().run_id
    );
    if let Some(note) = output.moved() {
        simpler_artifacts::outln!("  folder     {note}");
    }
    let removed = output.removed_earlier();
    if !removed.is_empty() {
        simpler_artifacts::outln!(
            "  removed    {} file(s) an earlier run left in this folder: {}",
            removed.len(),
            removed.join(", ")
        );
    }
    // The views read run.json for what to warn of: a failed result check or an incomplete
    // input, recorded after the run closed, goes to disk before they are rendered (found by a
    // review: the run's own views of a wrong result showed it as clean). A failed write is
    // said by the last one below.
    let m = output.manifest();
    if m.failed_check.is_some() || m.incomplete_input.is_some() {
        let _ = output.write_manifest();
    }
    let mut lost = Vec::new();
    let mut not_rendered = Vec::new();
    for entry in report.diagnostics.clone() {
        describe(&output.path(), report, &entry);
        lost.extend(unwritten(report, &entry));
        if entry.files.is_empty() || !has_view(&entry.name) {
            continue;
        }
        if interrupted {
            not_rendered.push(entry.name.clone());
            continue;
        }
        let file = output.path().join(&entry.files[0].name);
        if let Err(e) = render_view(&entry.name, &file, &mut output) {
            simpler_artifacts::outln!("  view       FAILED: {e:#}");
            lost.push(format!("view of {}: {e:#}", entry.name));
        }
    }
    if !not_rendered.is_empty() {
        // Found by a review: an interrupt after the run skipped the views without a word.
        simpler_artifacts::outln!(
            "  views      not rendered (interrupted): those of {}; the tools render them from the artifacts",
            not_rendered.join(", ")
        );
    }
    if let Some(e) = output.write_manifest() {
        simpler_artifacts::outln!("  manifest   FAILED: {e}");
        lost.push(format!("run manifest: {e}"));
    } else {
        simpler_artifacts::outln!(
            "  manifest   {} ({})",
            output
                .path()
                .join(simpler_artifacts::manifest::FILE_NAME)
                .display(),
            match output.manifest() {
                m if m.failed_check.is_some() => format!("{}, result check failed", m.status.as_str()),
                m => m.status.as_str().to_string(),
            }
        );
    }
    report.output = Some(output);
    lost
}

/// One summary line for a diagnostic's outcome.
fn describe(folder: &Path, report: &RunReport, entry: &DiagnosticEntry) {
    let label = match entry.name.as_str() {
        "scope_stats" => "scope stats",
        "l2_swimlane" => "swimlane",
        "name_map" => "name map",
        "args_dump" => "args dump",
        other => other,
    };
    let file = entry
        .files
        .first()
        .map(|f| folder.join(&f.name).display().to_string())
        .unwrap_or_default();
    let detail = match (entry.name.as_str(), entry.outcome) {
        (_, Outcome::Withheld) => format!("WITHHELD: {}", entry.reason.as_deref().unwrap_or("")),
        (_, Outcome::Failed) => format!("FAILED: {}", entry.reason.as_deref().unwrap_or("")),
        ("scope_stats", _) => match &report.scope_stats {
            Some(s) => format!("{file} ({}, {} samples)", s.verdict, s.retained),
            None => file,
        },
        ("dep_gen", _) => match report.dep_gen.as_ref().and_then(|d| d.counts) {
            Some(c) => format!(
                "{file} ({} tasks, {} tensors, {} edges)",
                c.tasks, c.tensors, c.edges
            ),
            None => file,
        },
        ("l2_swimlane", _) => match &report.swimlane {
            Some(l) => format!(
                "{file} (level {}: {} task rows, {} scheduler phases, {} submit spans)",
                l.level.number(),
                l.rows.tasks,
                l.rows.phases,
                l.rows.submits
            ),
            None => file,
        },
        ("args_dump", _) => match &report.args_dump {
            Some(a) => format!(
                "{file} ({} entries, {} payload bytes; dropped {} records / {} bytes, truncated {} entries / {} bytes)",
                a.records, a.bin_bytes, a.dropped_records, a.dropped_bytes, a.truncated_args, a.truncated_bytes
            ),
            None => file,
        },
        _ => file,
    };
    simpler_artifacts::outln!("  {label:<10} {detail}");
    if entry.outcome == Outcome::Partial {
        simpler_artifacts::outln!(
            "             PARTIAL: {}",
            entry.reason.as_deref().unwrap_or("records were lost")
        );
    }
}

/// Whether the diagnostic `name` has a view that [`render_view`] renders after the run.
fn has_view(name: &str) -> bool {
    matches!(name, "scope_stats" | "dep_gen" | "l2_swimlane")
}

/// Renders the view of one diagnostic's artifact and records it in the manifest.
fn render_view(name: &str, file: &Path, output: &mut RunOutput) -> anyhow::Result<()> {
    let view = match name {
        "scope_stats" => {
            let html = simpler_scope_stats_plot::render_report(file, None)?;
            simpler_artifacts::outln!("  report     {}", html.display());
            html
        }
        "dep_gen" => {
            let txt = simpler_deps_viewer::write_text_view(file)?;
            simpler_artifacts::outln!("  deps view  {}", txt.display());
            txt
        }
        "l2_swimlane" => {
            let summary = simpler_swimlane::convert(file, None, None, None)?;
            simpler_artifacts::outln!(
                "  trace      {} ({} dependency flows, {} hb_violation in the Worker View)",
                summary.output.display(),
                summary.flows.worker.dependency,
                summary.flows.worker.hb_violation
            );
            let mut table = Vec::new();
            summary.write_statistics(&mut table)?;
            for line in String::from_utf8_lossy(&table).lines() {
                simpler_artifacts::outln!("             {line}");
            }
            summary.output
        }
        _ => return Ok(()),
    };
    let bytes = std::fs::metadata(&view)?.len();
    output.add_view(&view, bytes);
    Ok(())
}
