//! `simpler bench`: synthetic workloads on both runtimes, with the figures users care about.

use anyhow::Result;
use simpler_examples::bench::{bench_config, bench_worker, run_workload, Figures, Workload};
use simpler_runtime::RuntimeKind;

/// Arguments of `simpler bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Tasks per workload.
    #[arg(long, default_value_t = 100_000)]
    pub tasks: u64,
    /// Workloads to run (default: all).
    #[arg(long = "workload", value_name = "NAME")]
    pub workloads: Vec<Workload>,
    /// Runtimes to run (default: both).
    #[arg(long = "runtime", value_parser = ["tmr", "hbg"])]
    pub runtimes: Vec<String>,
}

fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Runs the command.
pub fn run(args: BenchArgs) -> Result<()> {
    let workloads = if args.workloads.is_empty() {
        Workload::ALL.to_vec()
    } else {
        args.workloads
    };
    let runtimes: Vec<RuntimeKind> = if args.runtimes.is_empty() {
        vec![RuntimeKind::Tmr, RuntimeKind::Hbg]
    } else {
        args.runtimes
            .iter()
            .filter_map(|r| RuntimeKind::from_name(r))
            .collect()
    };
    let w = bench_worker()?;
    println!(
        "{:<14} {:<4} {:>10} {:>14} {:>13} {:>13} {:>13}",
        "workload", "rt", "tasks", "ns/submit", "ns/task e2e", "tasks/s", "peak RSS MiB"
    );
    for wl in workloads {
        for &kind in &runtimes {
            let r = run_workload(&w, &bench_config(kind, args.tasks), wl, args.tasks)?;
            let f = Figures::of(&r);
            println!(
                "{:<14} {:<4} {:>10} {:>14.1} {:>13.1} {:>13.0} {:>13.1}",
                wl.name(),
                kind.name(),
                f.tasks,
                f.ns_per_submit,
                f.ns_per_task,
                f.tasks_per_sec,
                peak_rss_mib().unwrap_or(f64::NAN)
            );
        }
    }
    println!("ns/submit: orchestration time per task (submit + dependency inference, concurrent with execution on tmr)");
    println!("ns/task e2e: wall time per task from run start to the last thread's exit; kernels are empty");
    Ok(())
}
