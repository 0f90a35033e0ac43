//! The `simpler` binary: parses the command line and hands each subcommand to its crate.

mod bench_cmd;
mod diagnostics;
mod exit;
mod run_cmd;
mod workload_cmd;

use std::process::ExitCode;

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

fn main() -> ExitCode {
    let cli = Cli::parse();
    install_interrupt_handler();
    let result = match cli.command {
        Command::Run(args) if args.runs_a_file() => workload_cmd::run(&args),
        Command::Run(args) => run_cmd::run(args),
        Command::Bench(args) => bench_cmd::run(args),
        Command::ScopeStatsPlot(args) => simpler_scope_stats_plot::run(args).map_err(Into::into),
        Command::DepsViewer(args) => simpler_deps_viewer::run(args).map_err(Into::into),
        Command::Swimlane(args) => simpler_swimlane::run(args).map_err(Into::into),
        Command::Plan(args) => simpler_plan::run(args).map_err(Into::into),
        Command::DumpViewer(args) => simpler_dump_viewer::run(args).map_err(Into::into),
        Command::CriticalPath(args) => simpler_critical_path::run(args).map_err(Into::into),
        Command::SchedOverhead(args) => simpler_sched_overhead::run(args).map_err(Into::into),
    };
    report(result)
}

/// SIGINT/SIGTERM: the first stops the run through its unproven close (and stops any file a
/// tool is writing, removing its temporary); a second exits at once. Either way no partial file
/// ever sits under a final name (every file is published by rename).
fn install_interrupt_handler() {
    let installed = ctrlc::set_handler(|| {
        if simpler_artifacts::interrupt::request() == 1 {
            eprintln!("simpler: interrupted; stopping and closing what was collected (interrupt again to exit at once)");
        } else {
            eprintln!("simpler: interrupted again; exiting now");
            std::process::exit(i32::from(exit::INTERRUPTED));
        }
    });
    if let Err(e) = installed {
        eprintln!("warning: no SIGINT/SIGTERM handler ({e}); an interrupt kills the process at once");
    }
}

/// Maps a command's result to the process exit status (`exit.rs`): clap usage errors (a
/// deps-viewer's too) keep clap's code (2); an interrupted command exits 130; other errors
/// print their cause chain.
fn report(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) if simpler_artifacts::interrupt::requested() => ExitCode::from(exit::INTERRUPTED),
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let usage = err.downcast_ref::<clap::Error>().or_else(|| {
                err.downcast_ref::<simpler_deps_viewer::Error>()
                    .and_then(simpler_deps_viewer::Error::usage)
            });
            if let Some(clap_err) = usage {
                let _ = clap_err.print();
                return ExitCode::from(clap_err.exit_code() as u8);
            }
            eprintln!("error: {err:#}");
            ExitCode::from(exit::status_of(&err))
        }
    }
}
