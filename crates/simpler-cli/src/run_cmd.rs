//! `simpler run <example>`: run a built-in example with its golden check and diagnostics.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use simpler_artifacts::output_folder::unique_folder;
use simpler_artifacts::time::utc_stamp;
use simpler_runtime::{CallConfig, RunError, RunReport, RuntimeEnv, RuntimeKind};

use crate::exit::{Exit, DIAGNOSTIC_LOST};

/// Arguments of `simpler run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Example to run (`simpler run --list` shows them), or a workload file `FILE.json`.
    #[arg(required_unless_present_any = ["list", "from_deps"])]
    pub example: Option<String>,
    /// Re-run the tasks of a captured deps.json (no-op kernels, same views and deps).
    #[arg(long, value_name = "DEPS_JSON", conflicts_with = "example")]
    pub from_deps: Option<PathBuf>,
    /// List the built-in examples and their parameters.
    #[arg(long)]
    pub list: bool,
    /// Runtime: tmr (orchestration concurrent with execution, the default) or hbg (host-built
    /// graph). A workload file may set it; this flag overrides the file.
    #[arg(long, value_parser = ["tmr", "hbg"])]
    pub runtime: Option<String>,
    /// Record per-scope resource samples (scope_stats/scope_stats.jsonl).
    #[arg(long)]
    pub enable_scope_stats: bool,
    /// Capture the dependency graph (deps.json).
    #[arg(long)]
    pub enable_dep_gen: bool,
    /// Record per-task timing (l2_swimlane_records.json).
    #[arg(long)]
    pub enable_l2_swimlane: bool,
    /// Ring size override KEY=VALUE; VALUE is one number or four comma-separated numbers.
    #[arg(long = "runtime-env", value_name = "KEY=VALUE")]
    pub runtime_env: Vec<String>,
    /// Example parameter KEY=VALUE (e.g. size=4096).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// Where diagnostics go (default: `outputs/<example>_<case>_<timestamp>/`).
    #[arg(long)]
    pub output_prefix: Option<PathBuf>,
    /// Number of clusters (1 AIC + 2 AIV each).
    #[arg(long, default_value_t = simpler_runtime::config::DEFAULT_CLUSTERS)]
    pub clusters: usize,
    /// Scheduler threads (0 = cores - 1, at least 1, at most `MAX_DEFAULT_SCHEDULER_THREADS` (3)).
    #[arg(long, default_value_t = 0)]
    pub scheduler_threads: usize,
    /// Stop the run with SCHEDULER_TIMEOUT after this many seconds.
    #[arg(long, default_value_t = simpler_runtime::config::DEFAULT_TIMEOUT.as_secs())]
    pub timeout_secs: u64,
    /// With --from-deps: re-run a deps.json even when its run manifest says the run did not
    /// complete or the file is not the one the run wrote.
    #[arg(long, requires = "from_deps")]
    pub allow_incomplete: bool,
}

/// The default output folder `outputs/<base>_<timestamp>[_N]`, created now (never shared).
pub fn default_folder(base: &str) -> Result<PathBuf> {
    let name = format!("{base}_{}", utc_stamp());
    unique_folder(std::path::Path::new("outputs"), &name).with_context(|| format!("creating outputs/{name}"))
}

/// The end of a run with diagnostics: the summary of its artifacts and views; an error with
/// the "diagnostic lost" status when something requested was not fully written.
pub fn finish_diagnostics(report: &mut RunReport) -> Result<()> {
    let lost = crate::diagnostics::post_run(report);
    if lost.is_empty() {
        return Ok(());
    }
    Err(Exit {
        code: DIAGNOSTIC_LOST,
        message: format!(
            "requested diagnostics were not fully written: {}",
            lost.join("; ")
        ),
    }
    .into())
}

/// Prints why a run stopped and closes its diagnostics (their views are rendered too: a
/// fatal run's scope stats are what tells which scope drove the resource out).
pub fn report_stopped(name: &str, e: &mut anyhow::Error) {
    if let Some(RunError::Fatal { report, .. }) = e.downcast_mut::<RunError>() {
        eprintln!(
            "{name} on {}: stopped after {} of {} tasks completed ({:.3} s)",
            report.runtime.name(),
            report.completed,
            report.tasks,
            report.wall.as_secs_f64()
        );
        let _ = crate::diagnostics::post_run(report);
    }
}

/// The longest run timeout accepted (about 31 years); larger values are clamped.
pub const MAX_TIMEOUT_SECS: u64 = 1 << 30;

fn list() {
    println!("built-in examples:");
    for ex in simpler_examples::all() {
        println!("  {:<16} {}", ex.name(), ex.about());
        for p in ex.params() {
            println!(
                "      --param {}=<{}>  {} (default {})",
                p.key, p.key, p.help, p.default
            );
        }
    }
}

/// Runs the command.
pub fn run(args: RunArgs) -> Result<()> {
    if args.list {
        list();
        return Ok(());
    }
    let name = args.example.clone().unwrap_or_default();
    if args.from_deps.is_some() || name.ends_with(".json") {
        return crate::workload_cmd::run(&args);
    }
    let Some(ex) = simpler_examples::find(&name) else {
        let names: Vec<_> = simpler_examples::all().iter().map(|e| e.name()).collect();
        bail!(
            "unknown example `{name}`; built-in examples: {}",
            names.join(", ")
        );
    };
    let params = simpler_examples::Params::parse(ex.name(), &args.params, ex.params())?;
    let mut env = RuntimeEnv::default();
    for pair in &args.runtime_env {
        env.set_pair(pair)?;
    }
    let runtime =
        RuntimeKind::from_name(args.runtime.as_deref().unwrap_or("tmr")).expect("clap checked the value");
    let mut cfg = CallConfig {
        runtime,
        clusters: args.clusters,
        scheduler_threads: args.scheduler_threads,
        runtime_env: env,
        enable_scope_stats: args.enable_scope_stats,
        enable_dep_gen: args.enable_dep_gen,
        enable_l2_swimlane: args.enable_l2_swimlane,
        output_prefix: args.output_prefix.clone(),
        timeout: Duration::from_secs(args.timeout_secs.min(MAX_TIMEOUT_SECS)),
        subject: Some(format!("{} ({})", ex.name(), params.case_name(ex.params()))),
        stop_on_interrupt: true,
        ..Default::default()
    };
    if cfg.any_diagnostic() && cfg.output_prefix.is_none() {
        let base = format!("{}_{}", ex.name(), params.case_name(ex.params()));
        cfg.output_prefix = Some(default_folder(&base)?);
    }
    cfg.validate()?;
    let mut outcome = match ex.run(&cfg, &params) {
        Ok(o) => o,
        Err(mut e) => {
            report_stopped(ex.name(), &mut e);
            return Err(e);
        }
    };
    let title = format!("{} ({})", ex.name(), params.case_name(ex.params()));
    crate::diagnostics::print_run_header(&title, &outcome.report, cfg.clusters);
    println!("  result     {}", outcome.golden.describe());
    let diagnostics = finish_diagnostics(&mut outcome.report);
    if !outcome.golden.passed() {
        bail!("{}: {}", ex.name(), outcome.golden.describe());
    }
    diagnostics
}
