//! `simpler run FILE.json` (a workload file, `docs/workloads.md`) and
//! `simpler run --from-deps deps.json` (re-run a captured graph): settings from the file, then
//! the command line; a one-screen summary like `simpler run <example>`.

use std::path::Path;

use anyhow::{bail, Result};
use simpler_runtime::config::Settings;
use simpler_runtime::RuntimeKind;
use simpler_workloads::{load, run_from_deps, run_workload, Outcome, Overrides};

use crate::exit::workload_error;
use crate::run_cmd::{default_folder, finish_diagnostics, record_failed_check, report_stopped, RunArgs};

/// The command line as overrides of a workload file or a captured graph.
fn overrides(args: &RunArgs) -> Result<Overrides> {
    Ok(Overrides {
        settings: args.settings()?,
        params: args.params.clone(),
        allow_incomplete: args.allow_incomplete,
    })
}

/// Picks the artifact folder when a diagnostic is on (in `file`'s layer or the command
/// line's) and neither names one: a new `outputs/<name>_<stamp>/` (the run claims it).
fn prepare_prefix(o: &mut Overrides, file: &Settings, name: &str, input: &Path) -> Result<()> {
    let merged = file.clone().overlaid(&o.settings);
    if o.settings.output_prefix.is_none() {
        if let Some(p) = &file.output_prefix {
            refuse_leaving_prefix(input, p)?;
        }
    }
    if merged.any_diagnostic() {
        match &merged.output_prefix {
            None => o.settings.output_prefix = Some(default_folder(name)?),
            Some(folder) => refuse_input_in(folder, input)?,
        }
    }
    crate::run_cmd::note_unused_prefix(&merged);
    Ok(())
}

/// Refuses a workload file's `output_prefix` that leads out of the folder the run starts in
/// (absolute, or climbing with `..`): found by a review, a file could send its run's output,
/// and the claim's removal of an earlier run's files, to any folder the user can write.
/// `--output-prefix` on the command line may name any folder.
fn refuse_leaving_prefix(file: &Path, prefix: &Path) -> Result<()> {
    if prefix.has_root() || prefix.components().any(|c| c == std::path::Component::ParentDir) {
        bail!(
            "{}: diagnostics.output_prefix: {:?} leads out of the folder the run starts in: a \
             workload file names only a folder under it (a relative path without `..`); give \
             --output-prefix for any other",
            file.display(),
            prefix.display().to_string()
        );
    }
    Ok(())
}

/// Refuses an output folder whose claim would remove the run's own input as an earlier run's
/// file (found by a review: `run --from-deps FE/deps.json --output-prefix FE` deleted the
/// graph it was re-running, saying an earlier run had left it).
fn refuse_input_in(folder: &Path, input: &Path) -> Result<()> {
    if let Some(name) = simpler_artifacts::output_folder::would_remove(folder, input) {
        bail!(
            "{} is this run's input, but the run's output folder {} would remove it: a run \
             claiming a folder removes the files an earlier run left there, {name} among them; \
             copy the input elsewhere or choose another --output-prefix",
            input.display(),
            folder.display()
        );
    }
    Ok(())
}

fn summary(title: &str, outcome: &mut Outcome) -> Result<()> {
    let r = &outcome.report;
    let cfg = &outcome.config;
    crate::diagnostics::print_run_header(title, r, cfg.clusters);
    if outcome.checks.is_empty() && outcome.from_deps.is_none() {
        simpler_artifacts::outln!("  checks     none in the file");
    }
    for c in &outcome.checks {
        simpler_artifacts::outln!("  check      {}", c.describe());
    }
    if let Some(fd) = &outcome.from_deps {
        simpler_artifacts::outln!(
            "  buffers    {} external, {} re-created as outputs of their creator",
            fd.external_buffers,
            fd.output_buffers
        );
        let e = &fd.edges;
        simpler_artifacts::outln!(
            "  edges      {} of {} captured (pred, succ) pairs wired; {} missing, {} extra",
            e.captured - e.missing.len(),
            e.captured,
            e.missing.len(),
            e.extra.len()
        );
        if !e.missing.is_empty() && r.runtime == RuntimeKind::Tmr {
            simpler_artifacts::outln!(
                "             (tmr wires no edge to a producer that retired before the consumer's submit; \
                 --runtime hbg wires the whole logical graph)"
            );
        }
        for (p, s) in e.missing.iter().take(5) {
            simpler_artifacts::outln!("    missing  {p} -> {s}");
        }
        for (p, s) in e.extra.iter().take(5) {
            simpler_artifacts::outln!("    extra    {p} -> {s}");
        }
        for n in &fd.not_reproduced {
            simpler_artifacts::outln!("  NOT REPRODUCED  {n}");
        }
        for n in &fd.approximations {
            simpler_artifacts::outln!("  approximated    {n}");
        }
    }
    if let Some(failed) = outcome.checks.iter().find(|c| !c.passed()) {
        record_failed_check(&mut outcome.report, failed.describe());
    }
    finish_diagnostics(&mut outcome.report)
}

fn run_file(args: &RunArgs, path: &Path) -> Result<()> {
    let w = load(path)?;
    let mut o = overrides(args)?;
    prepare_prefix(&mut o, w.settings(), w.name(), path)?;
    let mut outcome = run_workload(&w, &o).map_err(|e| {
        let mut e = workload_error(e);
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
    let mut o = overrides(args)?;
    prepare_prefix(&mut o, &Settings::default(), "from_deps", path)?;
    let mut outcome = run_from_deps(path, &o).map_err(|e| {
        for a in e.approximations() {
            simpler_artifacts::errln!("{}: approximated: {a}", path.display());
        }
        let mut e = workload_error(e);
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
