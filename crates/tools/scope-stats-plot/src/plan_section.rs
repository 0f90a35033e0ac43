//! The "Capacity plan" section: shown when `simpler plan` wrote `plan.json` next to the
//! `scope_stats.jsonl` being rendered (`simpler_artifacts::plan`).

use std::fmt::Write as _;
use std::path::Path;

use simpler_artifacts::html::escape as html;
use simpler_artifacts::plan::{read_plan, PlanFile, PLAN_FILE};

/// The plan next to `jsonl`: `None` when there is none, `Err` (the reader's message, naming the
/// file, line and column) when there is one that cannot be read.
pub(crate) fn load_beside(jsonl: &Path) -> Option<Result<PlanFile, String>> {
    let dir = jsonl.parent()?;
    let path = if dir.as_os_str().is_empty() {
        Path::new(PLAN_FILE).to_path_buf()
    } else {
        dir.join(PLAN_FILE)
    };
    path.is_file()
        .then(|| read_plan(&path).map_err(|e| e.to_string()))
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| v.to_string())
}

/// Appends the section.
pub(crate) fn section(out: &mut String, plan: &Result<PlanFile, String>) {
    out.push_str("<section id=\"capacity-plan\"><h2>Capacity plan</h2>");
    let p = match plan {
        Ok(p) => p,
        Err(e) => {
            let _ = write!(
                out,
                "<p class=\"run-warning\">The plan could not be read: {}</p></section>",
                html(e)
            );
            return;
        }
    };
    let _ = write!(
        out,
        "<p>From <code>simpler plan</code> for {}. <em>Peak</em>: occupancy observed at the scope \
         boundaries (the size at which the run never waits); <em>structural</em>: what open scopes \
         hold at once (below it the run stops on a fatal); <em>verified</em>: the smallest size with \
         which every re-run passed; <em>suggested</em>: verified + {}% headroom.</p>",
        html(&p.subject),
        p.headroom_percent
    );
    out.push_str(
        "<table><thead><tr><th>Resource</th><th>ring</th><th>Capacity</th><th>Peak</th>\
         <th>Structural</th><th>Set by</th><th>Verified</th><th>Suggested</th></tr></thead><tbody>",
    );
    for r in &p.rows {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            html(&r.key),
            r.ring,
            opt(r.capacity),
            r.peak,
            r.structural_min,
            html(if r.structural_site.is_empty() { "–" } else { &r.structural_site }),
            opt(r.verified_min),
            r.suggested
        );
    }
    if let Some(t) = &p.tensormap {
        let _ = write!(
            out,
            "<tr><td>tensormap_capacity (global)</td><td>–</td><td>{}</td><td>{}</td><td>–</td><td>–</td><td>{}</td><td>{}</td></tr>",
            opt(t.capacity),
            t.peak,
            opt(t.verified_min),
            opt(t.suggested)
        );
    }
    out.push_str("</tbody></table>");
    match (p.runs, p.verify) {
        (Some(runs), Some(n)) => {
            let _ = write!(out, "<p>Verified by {runs} re-runs, {n} per candidate size.");
            if let (Some(a), Some(b)) = (p.wall_never_waits_s, p.wall_minimum_s) {
                let _ = write!(
                    out,
                    " Wall time {a:.3} s at the never-waits sizes, {b:.3} s at the verified minimums."
                );
            }
            out.push_str("</p>");
        }
        _ => out.push_str("<p>Not verified by re-running.</p>"),
    }
    let _ = write!(
        out,
        "<h3>runtime_env</h3><pre>{}{}</pre><pre>{}</pre></section>",
        html(&p.runtime_env_json),
        p.tensormap
            .as_ref()
            .and_then(|t| t.suggested)
            .map_or_else(String::new, |v| format!(",\n\"tensormap_capacity\": {v}")),
        html(&p.runtime_env_flags)
    );
}
