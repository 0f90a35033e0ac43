//! `simpler run FILE.json` (a workload file, `docs/workloads.md`) and
//! `simpler run --from-deps deps.json` (re-run a captured graph): settings from the file, then
//! the command line; a one-screen summary like `simpler run <example>`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};
use simpler_runtime::RuntimeKind;
use simpler_workloads::{load, run_from_deps, run_workload, Outcome, Overrides};

use crate::run_cmd::{default_folder, finish_diagnostics, report_stopped, RunArgs, MAX_TIMEOUT_SECS};

/// Turns the command line into overrides; `clusters` applies only when it differs from the
/// default (clap cannot tell "not given" from "given the default").
fn overrides(args: &RunArgs) -> Overrides {
    Overrides {
        runtime: args.runtime.as_deref().and_then(RuntimeKind::from_name),
        runtime_env: args.runtime_env.clone(),
        enable_scope_stats: args.enable_scope_stats,
        enable_dep_gen: args.enable_dep_gen,
        enable_l2_swimlane: args.enable_l2_swimlane,
        output_prefix: args.output_prefix.clone(),
        clusters: (args.clusters != simpler_runtime::config::DEFAULT_CLUSTERS).then_some(args.clusters),
        scheduler_threads: Some(args.scheduler_threads),
        timeout: Some(Duration::from_secs(args.timeout_secs.min(MAX_TIMEOUT_SECS))),
        record_fanin: false,
        params: args.params.clone(),
        subject: None,
        stop_on_interrupt: true,
        allow_incomplete: args.allow_incomplete,
    }
}

/// Picks the artifact folder when a diagnostic is on: the command line's, the file's, or a new
/// `outputs/<name>_<stamp>/` (the run claims and creates it).
fn prepare_prefix(o: &mut Overrides, file_prefix: Option<&str>, diagnostics: bool, name: &str) -> Result<()> {
    if !diagnostics {
        return Ok(());
    }
    let prefix = match o.output_prefix.clone().or_else(|| file_prefix.map(PathBuf::from)) {
        Some(p) => p,
        None => default_folder(name)?,
    };
    o.output_prefix = Some(prefix);
    Ok(())
}

fn summary(title: &str, outcome: &mut Outcome) -> Result<()> {
    let r = &outcome.report;
    let cfg = &outcome.config;
    crate::diagnostics::print_run_header(title, r, cfg.clusters);
    if outcome.checks.is_empty() && outcome.from_deps.is_none() {
        println!("  checks     none in the file");
    }
    for c in &outcome.checks {
        println!("  check      {}", c.describe());
    }
    if let Some(fd) = &outcome.from_deps {
        println!(
            "  buffers    {} external, {} re-created as outputs of their creator",
            fd.external_buffers, fd.output_buffers
        );
        let e = &fd.edges;
        println!(
            "  edges      {} of {} captured (pred, succ) pairs wired; {} missing, {} extra",
            e.captured - e.missing.len(),
            e.captured,
            e.missing.len(),
            e.extra.len()
        );
        if !e.missing.is_empty() && r.runtime == RuntimeKind::Tmr {
            println!(
                "             (tmr wires no edge to a producer that retired before the consumer's submit; \
                 --runtime hbg wires the whole logical graph)"
            );
        }
        for (p, s) in e.missing.iter().take(5) {
            println!("    missing  {p} -> {s}");
        }
        for (p, s) in e.extra.iter().take(5) {
            println!("    extra    {p} -> {s}");
        }
        for n in &fd.not_reproduced {
            println!("  NOT REPRODUCED  {n}");
        }
        for n in &fd.approximations {
            println!("  approximated    {n}");
        }
    }
    finish_diagnostics(&mut outcome.report)
}

fn run_file(args: &RunArgs, path: &Path) -> Result<()> {
    let w = load(path)?;
    let mut o = overrides(args);
    let d = &w.spec().diagnostics;
    let diagnostics = o.enable_scope_stats
        || o.enable_dep_gen
        || o.enable_l2_swimlane
        || d.enable_scope_stats
        || d.enable_dep_gen
        || d.enable_l2_swimlane;
    prepare_prefix(&mut o, d.output_prefix.as_deref(), diagnostics, w.name())?;
    let mut outcome = run_workload(&w, &o).map_err(|mut e| {
        report_stopped(w.name(), &mut e);
        e
    })?;
    let diagnostics = summary(&format!("{} ({})", w.name(), path.display()), &mut outcome);
    let failed: Vec<_> = outcome.checks.iter().filter(|c| !c.passed()).collect();
    if !failed.is_empty() {
        bail!("{}: {}", w.name(), failed[0].describe());
    }
    diagnostics
}

fn run_deps(args: &RunArgs, path: &Path) -> Result<()> {
    let mut o = overrides(args);
    let diagnostics = o.enable_scope_stats || o.enable_dep_gen || o.enable_l2_swimlane;
    prepare_prefix(&mut o, None, diagnostics, "from_deps")?;
    let mut outcome = run_from_deps(path, &o).map_err(|mut e| {
        report_stopped("from-deps", &mut e);
        e
    })?;
    summary(&format!("re-run of {}", path.display()), &mut outcome)
}

/// Runs a workload file or re-runs a captured graph.
pub fn run(args: &RunArgs) -> Result<()> {
    match (&args.from_deps, &args.example) {
        (Some(deps), _) => run_deps(args, deps),
        (None, Some(file)) => run_file(args, Path::new(file)),
        (None, None) => bail!("give a workload file FILE.json or --from-deps DEPS_JSON"),
    }
}
