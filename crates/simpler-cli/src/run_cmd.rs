//! `simpler run <example>`: run a built-in example with its golden check and diagnostics.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use simpler_artifacts::output_folder::unique_folder;
use simpler_artifacts::time::utc_stamp;
use simpler_runtime::config::{runtime_env, Settings, SwimlaneLevel};
use simpler_runtime::{RunError, RunReport, RuntimeEnv, RuntimeKind};

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
    #[arg(long, value_enum)]
    pub runtime: Option<RuntimeKind>,
    /// Record per-scope resource samples (scope_stats/scope_stats.jsonl).
    #[arg(long)]
    pub enable_scope_stats: bool,
    /// Capture the dependency graph (deps.json).
    #[arg(long)]
    pub enable_dep_gen: bool,
    /// Record per-task timing (l2_swimlane_records.json, also linked as
    /// chip_swimlane_records.json) at LEVEL: 1 kernel start/end, 2 + dispatch/finish, 3 +
    /// scheduler phases, 4 + submit spans (the bare flag); 0 off. `--enable-chip-swimlane` (the
    /// original's newer name) is the same flag. See docs/swimlane.md.
    #[arg(
        long,
        visible_alias = "enable-chip-swimlane",
        value_name = "LEVEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "4",
        value_parser = clap::value_parser!(u64).range(0..=4)
    )]
    pub enable_l2_swimlane: Option<u64>,
    /// Capture the data of task arguments (args_dump/args_dump.json + args.bin): 0 off,
    /// 1 partial (selected arguments only; the bare flag), 2 full, 3 hybrid (every record,
    /// payload of selected tensors only). See docs/args-dump.md.
    #[arg(long, value_name = "LEVEL", num_args = 0..=1, require_equals = true, default_missing_value = "1")]
    pub dump_args: Option<simpler_runtime::config::DumpArgsLevel>,
    /// Ring size override KEY=VALUE; VALUE is one number or four comma-separated numbers.
    #[arg(long = "runtime-env", value_name = "KEY=VALUE", long_help = runtime_env::help())]
    pub runtime_env: Vec<String>,
    /// Example parameter KEY=VALUE (e.g. size=4096).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// Where diagnostics go (default: `outputs/<example>_<case>_<timestamp>/`).
    #[arg(long)]
    pub output_prefix: Option<PathBuf>,
    /// Number of clusters (1 AIC + 2 AIV each); default `DEFAULT_CLUSTERS` (8). A workload file
    /// may set it; this flag overrides the file.
    #[arg(long)]
    pub clusters: Option<usize>,
    /// Scheduler threads (0 = the cores the run leaves free: cores - 1 under tmr, every core
    /// under hbg, at least 1, at most `MAX_DEFAULT_SCHEDULER_THREADS` (3)); default 0.
    #[arg(long)]
    pub scheduler_threads: Option<usize>,
    /// Stop the run with SCHEDULER_TIMEOUT after this many seconds (0 stops every run);
    /// default `DEFAULT_TIMEOUT` (300 s).
    #[arg(long)]
    pub timeout_secs: Option<u64>,
    /// With --from-deps: re-run a deps.json even when its run manifest says the run did not
    /// complete or the file is not the one the run wrote.
    #[arg(long, requires = "from_deps")]
    pub allow_incomplete: bool,
}

impl RunArgs {
    /// True when this runs a workload file (`FILE.json`) or re-runs a captured graph
    /// (`--from-deps`), which `workload_cmd` does, rather than a built-in example.
    pub fn runs_a_file(&self) -> bool {
        !self.list
            && (self.from_deps.is_some() || self.example.as_deref().is_some_and(|e| e.ends_with(".json")))
    }

    /// The command line's settings layer: what these flags set, nothing else. Workload files
    /// and `--from-deps` put it over their own layer; an example run uses it alone.
    pub fn settings(&self) -> Result<Settings> {
        let env = RuntimeEnv::from_pairs(&self.runtime_env)?;
        let on = |flag: bool| flag.then_some(true);
        Ok(Settings {
            runtime: self.runtime,
            clusters: self.clusters,
            scheduler_threads: self.scheduler_threads,
            runtime_env: env,
            enable_scope_stats: on(self.enable_scope_stats),
            enable_dep_gen: on(self.enable_dep_gen),
            enable_l2_swimlane: self.enable_l2_swimlane.map(|level| level > 0),
            l2_swimlane_level: self.enable_l2_swimlane.and_then(SwimlaneLevel::from_number),
            dump_args: self.dump_args,
            output_prefix: self.output_prefix.clone(),
            timeout: self
                .timeout_secs
                .map(|t| Duration::from_secs(t.min(MAX_TIMEOUT_SECS))),
            stop_on_interrupt: Some(true),
            ..Settings::default()
        })
    }
}

/// Says on stderr that a run without any diagnostic writes nothing to the `--output-prefix`
/// it was given (the folder is claimed only by a run that writes into it), so whatever is
/// there is an earlier run's and is left as it was.
pub fn note_unused_prefix(settings: &Settings) {
    if let (false, Some(prefix)) = (settings.any_diagnostic(), &settings.output_prefix) {
        simpler_artifacts::errln!(
            "note: no diagnostic is on (--enable-scope-stats, --enable-dep-gen, --enable-l2-swimlane, \
             --dump-args), so this run writes nothing to {}; any files there are an earlier run's",
            prefix.display()
        );
    }
}

/// The default output folder `outputs/<base>_<timestamp>[_N]`, created now (never shared).
pub fn default_folder(base: &str) -> Result<PathBuf> {
    let base = simpler_artifacts::output_folder::bounded_name(base);
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

/// Records in the run's manifest that its result check failed (written with its views by
/// [`finish_diagnostics`]): the artifacts stay, and every tool that reads them says so.
pub fn record_failed_check(report: &mut RunReport, detail: String) {
    if let Some(output) = report.output.as_mut() {
        output.record_failed_check(detail);
    }
}

/// Prints why a run stopped and closes its diagnostics (their views are rendered too: a
/// fatal run's scope stats are what tells which scope drove the resource out).
pub fn report_stopped(name: &str, e: &mut anyhow::Error) {
    if let Some(RunError::Fatal { report, .. }) = e.downcast_mut::<RunError>() {
        simpler_artifacts::errln!(
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
    simpler_artifacts::outln!("built-in examples:");
    for ex in simpler_examples::all() {
        simpler_artifacts::outln!("  {:<16} {}", ex.name(), ex.about());
        for p in ex.params() {
            simpler_artifacts::outln!(
                "      --param {}=<{}>  {} (default {})",
                p.key,
                p.key,
                p.help,
                p.default
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
    let Some(ex) = simpler_examples::find(&name) else {
        let names: Vec<_> = simpler_examples::all().iter().map(|e| e.name()).collect();
        bail!(
            "unknown example `{name}`; built-in examples: {}",
            names.join(", ")
        );
    };
    let params = simpler_examples::Params::parse(ex.name(), &args.params, ex.params())?;
    let mut settings = args.settings()?;
    settings.subject = Some(format!("{} ({})", ex.name(), params.case_name(ex.params())));
    settings.params = Some(params.values().clone());
    if settings.any_diagnostic() && settings.output_prefix.is_none() {
        let base = format!("{}_{}", ex.name(), params.case_name(ex.params()));
        settings.output_prefix = Some(default_folder(&base)?);
    }
    note_unused_prefix(&settings);
    let cfg = settings.into_config();
    cfg.validate()?;
    let mut outcome = match ex.run(&cfg, &params).map_err(crate::exit::example_error) {
        Ok(o) => o,
        Err(mut e) => {
            report_stopped(ex.name(), &mut e);
            return Err(e);
        }
    };
    let title = format!("{} ({})", ex.name(), params.case_name(ex.params()));
    crate::diagnostics::print_run_header(&title, &outcome.report, cfg.clusters);
    simpler_artifacts::outln!("  result     {}", outcome.golden.describe());
    if !outcome.golden.passed() {
        record_failed_check(&mut outcome.report, outcome.golden.describe());
    }
    let diagnostics = finish_diagnostics(&mut outcome.report);
    if !outcome.golden.passed() {
        bail!("{}: {}", ex.name(), outcome.golden.describe());
    }
    diagnostics
}
