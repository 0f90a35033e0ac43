//! The plan's output: a table (text), the ready-to-paste `runtime_env` blocks (JSON and
//! `--runtime-env` flags) and `plan.json`, the table as data, which the scope-stats HTML report
//! shows as its "Capacity plan" section when the file sits next to `scope_stats.jsonl`.

use std::fmt::Write as _;

use serde_json::{json, Value};
use simpler_artifacts::plan::{PlanFile, PlanRow, TensorMapRow};
use simpler_runtime::config::RingResource;
use simpler_runtime::RuntimeEnv;

use crate::analysis::{Analysis, RINGS};
use crate::search::{SearchResult, HEADROOM_PERCENT};

pub use simpler_artifacts::plan::PLAN_FILE;

/// The rows of a plan, as `plan.json` holds them: one per used ring and resource.
pub fn rows(analysis: &Analysis, search: Option<&SearchResult>) -> Vec<PlanRow> {
    analysis
        .figures
        .iter()
        .map(|f| {
            let verified_min = search.and_then(|s| s.verified(f.resource, f.ring)).map(|v| v.min);
            let suggested = match search {
                Some(s) => s.suggested_env.get(f.resource, f.ring).unwrap_or(f.never_waits),
                None => f.never_waits.max(f.structural_min),
            };
            PlanRow {
                key: f.resource.key().to_string(),
                ring: f.ring as u32,
                capacity: f.capacity,
                peak: f.peak,
                never_waits: f.never_waits,
                structural_min: f.structural_min,
                structural_site: f.held_site.clone(),
                verified_min,
                suggested,
            }
        })
        .collect()
}

/// The suggested configuration: the search's, or the never-waits sizes (unused rings at the
/// keys' smallest values) without one.
pub fn suggested_env(analysis: &Analysis, search: Option<&SearchResult>) -> RuntimeEnv {
    if let Some(s) = search {
        return s.suggested_env;
    }
    let mut env = RuntimeEnv::default();
    for res in RingResource::ALL {
        if res == RingResource::DepPool && !analysis.dep_pool_known {
            continue; // unknown: the key's default
        }
        for ring in 0..RINGS {
            let v = analysis
                .figure(res, ring)
                .map_or(crate::analysis::round_up(res, 0), |f| {
                    f.never_waits.max(f.structural_min)
                });
            env.set_ring(res, ring, v);
        }
    }
    env
}

/// The values of `env` per key, in declaration order, four rings each.
fn env_values(env: &RuntimeEnv) -> Vec<(&'static str, Vec<u64>)> {
    RingResource::ALL
        .iter()
        .map(|&res| {
            let vals = (0..RINGS)
                .map(|r| env.get(res, r).unwrap_or(res.decl().default))
                .collect();
            (res.key(), vals)
        })
        .collect()
}

/// `{"runtime_env": {...}}` as data.
pub fn env_json(env: &RuntimeEnv) -> Value {
    let mut m = serde_json::Map::new();
    for (key, vals) in env_values(env) {
        m.insert(key.to_string(), json!(vals));
    }
    json!({ "runtime_env": m })
}

/// The ready-to-paste `"runtime_env"` block for a workload file or a scene-test config (keys
/// in declaration order, one line each).
pub fn env_block(env: &RuntimeEnv) -> String {
    let lines: Vec<String> = env_values(env)
        .into_iter()
        .map(|(key, vals)| {
            let vals: Vec<String> = vals.iter().map(u64::to_string).collect();
            format!("    \"{key}\": [{}]", vals.join(", "))
        })
        .collect();
    format!("\"runtime_env\": {{\n{}\n}}", lines.join(",\n"))
}

/// The `--runtime-env` flags for `simpler run`.
pub fn env_flags(env: &RuntimeEnv) -> String {
    RingResource::ALL
        .iter()
        .map(|&res| {
            let vals: Vec<String> = (0..RINGS)
                .map(|r| env.get(res, r).unwrap_or(res.decl().default).to_string())
                .collect();
            format!("--runtime-env {}={}", res.key(), vals.join(","))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// The text report.
pub fn text(subject: &str, analysis: &Analysis, search: Option<&SearchResult>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "capacity plan for {subject} ({} scope samples)",
        analysis.samples
    );
    let _ = writeln!(
        s,
        "{:<18} {:>4} {:>11} {:>11} {:>11} {:>11} {:>11}  structural minimum set by",
        "resource", "ring", "capacity", "peak", "structural", "verified", "suggested"
    );
    for r in rows(analysis, search) {
        let _ = writeln!(
            s,
            "{:<18} {:>4} {:>11} {:>11} {:>11} {:>11} {:>11}  {}",
            r.key,
            r.ring,
            opt(r.capacity),
            r.peak,
            r.structural_min,
            opt(r.verified_min),
            r.suggested,
            if r.structural_site.is_empty() {
                "-"
            } else {
                &r.structural_site
            }
        );
    }
    let (tm, tm_site) = &analysis.tensormap_peak;
    let _ = writeln!(
        s,
        "{:<18} {:>4} {:>11} {:>11} {:>11} {:>11} {:>11}  (global; peak at {})",
        "tensormap_capacity",
        "-",
        opt(analysis.metadata.tensormap_max),
        tm,
        "-",
        opt(search.map(|s| s.tensormap.min as u64)),
        search.map_or_else(|| "-".to_string(), |s| s.tensormap.suggested.to_string()),
        if tm_site.is_empty() { "-" } else { tm_site }
    );
    if !analysis.dep_pool_known {
        let _ = writeln!(s, "{}", crate::analysis::DEP_POOL_UNKNOWN);
    }
    let _ = writeln!(
        s,
        "peak: the scopes' high water (a scope's end head − its begin tail: what was in use as it began plus \
         all it allocated, an upper bound on the occupancy; at or above it, the task window above it, the run \
         never waits); structural: what open scopes hold at once, below it the run must stop on a fatal"
    );
    for f in analysis
        .figures
        .iter()
        .filter(|f| f.capacity.is_some_and(|c| f.never_waits > c) && f.resource != RingResource::DepPool)
    {
        let _ = writeln!(
            s,
            "  {} ring {}: recorded at {}, below the size its peak asks never to wait ({}): back-pressure may \
             have held the occupancy down, so the run can need more than that never to wait (record at larger \
             sizes, such as the defaults, to see)",
            f.resource.key(),
            f.ring,
            f.capacity.unwrap_or(0),
            f.never_waits
        );
    }
    match search {
        Some(sr) => {
            let _ = writeln!(
                s,
                "verified: {} runs on {}, {} per candidate; suggested = verified minimum + {HEADROOM_PERCENT}% rounded up to what the key accepts",
                sr.runs,
                sr.runtime.name(),
                sr.verify
            );
            if sr.runtime == simpler_runtime::RuntimeKind::Tmr && analysis.dep_pool_known {
                let _ = writeln!(s, "{}", dep_pool_rule(analysis.dep_pool_worst.is_some()));
            }
            if let Some((val, code, msg)) = &sr.tensormap.below {
                let _ = writeln!(
                    s,
                    "  tensormap_capacity: {val} fails with fatal {} ({}): {msg}",
                    code.code(),
                    code.name()
                );
            }
            for v in &sr.verified {
                if let Some((val, code, msg)) = &v.below {
                    let _ = writeln!(
                        s,
                        "  {} ring {}: {val} fails with fatal {} ({}): {msg}",
                        v.resource.key(),
                        v.ring,
                        code.code(),
                        code.name()
                    );
                }
            }
            if analysis.reclaims && sr.verified.iter().any(|v| v.resource == RingResource::Heap) {
                let _ = writeln!(s, "{HEAP_RULE}");
            }
            for v in sr.verified.iter().filter(|v| !v.failed_above.is_empty()) {
                let failed: Vec<String> = v
                    .failed_above
                    .iter()
                    .map(|(size, how)| format!("{size} with {}", how.split(':').next().unwrap_or(how)))
                    .collect();
                let _ = writeln!(
                    s,
                    "  {} ring {}: NOT MONOTONIC: {} passed but larger sizes failed: {}; the suggestion {} passed its runs; {} and above cannot deadlock",
                    v.resource.key(),
                    v.ring,
                    v.min,
                    failed.join(", "),
                    sr.suggested_env.get(v.resource, v.ring).unwrap_or(v.min),
                    opt(v.safe),
                );
            }
            for why in &sr.raised {
                let _ = writeln!(s, "  suggestion {why}");
            }
            // A pass is what these runs did: the dependency pool's need (and, on tmr, where the
            // heap wraps) depends on timing, so a later run of the minimums may fail.
            let runs = if sr.verify == 1 {
                "its run".to_string()
            } else {
                format!("its {} runs", sr.verify)
            };
            let _ = writeln!(
                s,
                "all minimums together: {}; suggested sizes: {}",
                if sr.combination_passed {
                    format!(
                        "passed {runs} (minimums leave no margin: the dependency pool's need depends on timing, and a later run may fail)"
                    )
                } else {
                    "FAIL (use the suggested sizes)".to_string()
                },
                if sr.suggested_passed { "pass" } else { "FAIL" }
            );
            if let Some(t) = &sr.combination_failure {
                let _ = writeln!(s, "  minimums together: {}", crate::search::describe(t));
            }
            if let Some(t) = &sr.suggested_failure {
                let _ = writeln!(s, "  suggested sizes: {}", crate::search::describe(t));
            }
            let _ = writeln!(
                s,
                "wall time: {:.3} s at the never-waits sizes, {} at the minimums",
                sr.wall_never_waits.as_secs_f64(),
                sr.wall_minimum
                    .map_or_else(|| "-".to_string(), |w| format!("{:.3} s", w.as_secs_f64()))
            );
        }
        None => {
            let _ = writeln!(
                s,
                "not verified by re-running (suggested = the never-waits size, no headroom)"
            );
        }
    }
    let env = suggested_env(analysis, search);
    let _ = writeln!(s, "\nruntime_env (workload file / scene-test config):");
    let _ = writeln!(s, "{}", env_block(&env));
    if let Some(sr) = search {
        let _ = writeln!(
            s,
            "\"tensormap_capacity\": {}    (top level of a workload file; no command-line flag)",
            sr.tensormap.suggested
        );
    }
    let _ = writeln!(s, "\ncommand line:\n{}", env_flags(&env));
    s
}

/// How the heap's figures on tmr are made (printed after the table).
pub const HEAP_RULE: &str =
    "  ring_heap: verified = a size whose runs passed with the one below failing, not a \
     threshold: an allocation never straddles the heap's end, so a larger heap can fail where the \
     wrap falls; the suggestion is run on its own and raised until it passes; 3 x structural and \
     above cannot deadlock (docs/sizing-rings.md, Limits)";

/// How the dep pool's suggestion on tmr was made: from the recorded graph's worst case, or
/// from the measured needs when the run folder has no deps.json.
fn dep_pool_rule(worst_known: bool) -> &'static str {
    if worst_known {
        "  ring_dep_pool: suggested = its worst case at the suggested task window (every producer \
         still pending when its consumers are wired), which no timing exceeds; verified is what \
         these runs needed"
    } else {
        "  ring_dep_pool: suggested from what these runs needed (no deps.json beside the \
         recording, so no worst case): a run whose schedulers fall further behind can need more"
    }
}

/// `plan.json`: the table and the blocks, as data.
pub fn plan_file(subject: &str, analysis: &Analysis, search: Option<&SearchResult>) -> PlanFile {
    let rows = rows(analysis, search);
    let env = suggested_env(analysis, search);
    PlanFile {
        subject: subject.to_string(),
        rows,
        runs: search.map(|s| s.runs as u64),
        verify: search.map(|s| s.verify as u64),
        wall_never_waits_s: search.map(|s| s.wall_never_waits.as_secs_f64()),
        wall_minimum_s: search.and_then(|s| s.wall_minimum.map(|w| w.as_secs_f64())),
        headroom_percent: HEADROOM_PERCENT,
        tensormap: Some(TensorMapRow {
            capacity: analysis.metadata.tensormap_max,
            peak: analysis.tensormap_peak.0,
            verified_min: search.map(|s| s.tensormap.min as u64),
            suggested: search.map(|s| s.tensormap.suggested as u64),
        }),
        runtime_env_json: env_block(&env),
        runtime_env_flags: env_flags(&env),
    }
}
