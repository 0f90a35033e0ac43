//! The `simpler` binary: parses the command line and hands each subcommand to its crate.

mod bench_cmd;
mod diagnostics;
mod run_cmd;
mod timestamp;
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run_cmd::run(args),
        Command::Bench(args) => bench_cmd::run(args),
        Command::ScopeStatsPlot(args) => simpler_scope_stats_plot::run(args),
        Command::DepsViewer(args) => simpler_deps_viewer::run(args),
        Command::Swimlane(args) => simpler_swimlane::run(args),
    };
    report(result)
}

/// Maps a command's result to the process exit code: clap usage errors keep clap's code (2),
/// everything else prints its cause chain and exits 1.
fn report(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if let Some(clap_err) = err.downcast_ref::<clap::Error>() {
                let _ = clap_err.print();
                return ExitCode::from(clap_err.exit_code() as u8);
            }
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
