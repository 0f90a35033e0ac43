//! The `simpler` command as a library: parses a command line and hands each subcommand to its
//! crate. The `simpler` binary (`src/main.rs`) and the Python package (`python -m simpler`,
//! `python -m simpler.tools.<tool>`, `crates/python`) both call [`main_with`], so each gives
//! the same output and exit status for the same arguments.

mod bench_cmd;
mod diagnostics;
mod exit;
mod run_cmd;
mod workload_cmd;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "simpler",
    version,
    about = "Task-graph runtime on a simulated AIC/AIV accelerator, with scope stats and dep_gen diagnostics"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a built-in example or a workload file (FILE.json) end to end and check its golden;
    /// --from-deps re-runs a captured deps.json.
    Run(run_cmd::RunArgs),
    /// Synthetic workloads on both runtimes (ns per submit, ns per task, tasks/s), or the cost
    /// of each diagnostic (--compare-diagnostics).
    Bench(bench_cmd::BenchArgs),
    /// Render scope_stats.jsonl into a self-contained HTML report.
    ScopeStatsPlot(simpler_scope_stats_plot::Args),
    /// Text or HTML view of a deps.json dependency graph.
    DepsViewer(simpler_deps_viewer::Args),
    /// Convert l2_swimlane_records.json (+ deps.json) into a Perfetto trace.
    Swimlane(simpler_swimlane::Args),
    /// How big each ring must be: structural minimum, observed peak and verified minimum per
    /// ring and resource, a ready-to-paste runtime_env; --check predicts whether sizes deadlock.
    Plan(simpler_plan::Args),
    /// List, show, export (.npy, raw) and diff the task arguments of an args dump.
    DumpViewer(simpler_dump_viewer::Args),
    /// Which chain of tasks sets the makespan: static (CPM) and observed critical paths,
    /// compute vs stall, a Markdown report and CPM_static.json / CPM_observed.json traces.
    CriticalPath(simpler_critical_path::Args),
    /// Is the scheduler the bottleneck? Per-engine overhead (idle cores next to ready work),
    /// core switches, head/tail overhead, scheduler loop and critical-path attribution.
    SchedOverhead(simpler_sched_overhead::Args),
}

/// Runs the command line `args` (the first is the program name) and returns the exit status.
/// `handle_interrupts` installs the SIGINT/SIGTERM handler (the binary does; an embedding
/// process that owns its signals, like the Python interpreter, does not). Usage errors, `--help`
/// and `--version` print as clap prints them and return its status instead of exiting.
pub fn main_with<I, T>(args: I, handle_interrupts: bool) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code() as u8;
        }
    };
    if handle_interrupts {
        install_interrupt_handler(cli.command.runs());
    }
    let result = match cli.command {
        Command::Run(args) if args.runs_a_file() => workload_cmd::run(&args),
        Command::Run(args) => run_cmd::run(args),
        Command::Bench(args) => bench_cmd::run(args),
        Command::ScopeStatsPlot(args) => simpler_scope_stats_plot::run(args).map_err(Into::into),
        Command::DepsViewer(args) => simpler_deps_viewer::run(args).map_err(Into::into),
        Command::Swimlane(args) => simpler_swimlane::run(args).map_err(Into::into),
        // `--check` answers on stdout and tells a predicted or unproven deadlock by its status.
        Command::Plan(args) => simpler_plan::run(args)
            .map_err(Into::into)
            .and_then(|status| match status {
                0 => Ok(()),
                code => Err(exit::Exit {
                    code,
                    message: String::new(),
                }
                .into()),
            }),
        Command::DumpViewer(args) => simpler_dump_viewer::run(args).map_err(Into::into),
        Command::CriticalPath(args) => simpler_critical_path::run(args).map_err(Into::into),
        Command::SchedOverhead(args) => simpler_sched_overhead::run(args).map_err(Into::into),
    };
    report(result)
}

impl Command {
    /// Whether the command runs orchestrations (a run, a benchmark, a plan's trials), whose
    /// close after an interrupt writes what was collected and may take its time; the other
    /// commands are tools that read files and write one output.
    fn runs(&self) -> bool {
        matches!(self, Command::Run(_) | Command::Bench(_) | Command::Plan(_))
    }
}

/// How long a tool may take to stop after an interrupt before it exits anyway: a write it is
/// making stops at its next block (removing its temporary) far sooner, but a read blocked on
/// its input (a pipe no one writes, a stalled network file) never returns.
const TOOL_STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// SIGINT/SIGTERM: the first stops the run through its unproven close (and stops any file a
/// tool is writing, removing its temporary); a second exits at once, and so does a tool (not
/// `runs`) still running [`TOOL_STOP_GRACE`] after the first. Either way no partial file ever
/// sits under a final name (every file is published by rename).
fn install_interrupt_handler(runs: bool) {
    let installed = ctrlc::set_handler(move || {
        if simpler_artifacts::interrupt::request() > 1 {
            simpler_artifacts::errln!("simpler: interrupted again; exiting now");
            std::process::exit(i32::from(exit::INTERRUPTED));
        }
        if runs {
            simpler_artifacts::errln!("simpler: interrupted; stopping and closing what was collected (interrupt again to exit at once)");
            return;
        }
        simpler_artifacts::errln!("simpler: interrupted; stopping (interrupt again to exit at once)");
        // Found by a review: a tool blocked reading a pipe ignored SIGTERM until SIGKILL.
        std::thread::spawn(|| {
            std::thread::sleep(TOOL_STOP_GRACE);
            simpler_artifacts::errln!(
                "simpler: still running {} s after the interrupt (blocked reading its input?); exiting now",
                TOOL_STOP_GRACE.as_secs()
            );
            std::process::exit(i32::from(exit::INTERRUPTED));
        });
    });
    if let Err(e) = installed {
        simpler_artifacts::errln!(
            "warning: no SIGINT/SIGTERM handler ({e}); an interrupt kills the process at once"
        );
    }
}

/// Maps a command's result to the process exit status (`exit.rs`): clap usage errors (a
/// deps-viewer's too) keep clap's code (2); an interrupted command exits 130; other errors
/// print their cause chain.
fn report(result: anyhow::Result<()>) -> u8 {
    match result {
        Ok(()) if simpler_artifacts::interrupt::requested() => exit::INTERRUPTED,
        Ok(()) => 0,
        Err(err) => {
            let usage = err.downcast_ref::<clap::Error>().or_else(|| {
                err.downcast_ref::<simpler_deps_viewer::Error>()
                    .and_then(simpler_deps_viewer::Error::usage)
            });
            if let Some(clap_err) = usage {
                let _ = clap_err.print();
                return clap_err.exit_code() as u8;
            }
            // An exit without a message: the command has said everything on stdout.
            if !err
                .downcast_ref::<exit::Exit>()
                .is_some_and(|e| e.message.is_empty())
            {
                simpler_artifacts::errln!("error: {err:#}");
            }
            exit::status_of(&err)
        }
    }
}

/// What `simpler run` does after a run with diagnostics: prints the artifact summary, renders
/// the views of the artifacts that exist (`scope_stats.html`, `deps_viewer.txt`,
/// `merged_swimlane.json`) and records them in the run manifest. Returns what was lost, one
/// line each (empty when everything was written). The Python package calls it after a run
/// (its pytest plugin, as the original's scene tests do).
pub fn render_views(report: &mut simpler_runtime::RunReport) -> Vec<String> {
    diagnostics::post_run(report)
}

/// What a run's requested diagnostics lost, one line each (`"dep_gen failed: <reason>"`): the
/// lines [`render_views`] returns for the diagnostics, for a caller that renders no view.
/// Scope stats queued for a background writer are not lost (yet): its flush says whether
/// they were (`Worker::flush_diagnostics`).
pub fn unwritten_diagnostics(report: &simpler_runtime::RunReport) -> Vec<String> {
    report
        .diagnostics
        .iter()
        .filter_map(|d| diagnostics::unwritten(report, d))
        .collect()
}
