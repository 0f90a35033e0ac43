//! `simpler bench`: synthetic workloads on both runtimes, with the figures users care about.

use anyhow::Result;
use simpler_examples::bench::{bench_config, bench_worker, run_workload, Figures, Workload};
use simpler_runtime::RuntimeKind;

use crate::exit::example_error;

/// Arguments of `simpler bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Tasks per workload.
    #[arg(long, default_value_t = 100_000)]
    pub tasks: u64,
    /// Workloads to run (default: all; also independent4 and scopes, the comparison's defaults).
    #[arg(long = "workload", value_name = "NAME")]
    pub workloads: Vec<Workload>,
    /// Runtimes to run (default: both).
    #[arg(long = "runtime", value_enum)]
    pub runtimes: Vec<RuntimeKind>,
    /// Instead: on tmr, run each workload (default: independent4 and scopes) with every
    /// diagnostic off, then each one on, then all on, and print the overhead ratios.
    #[arg(long)]
    pub compare_diagnostics: bool,
    /// With --compare-diagnostics: run only these settings (after `off`, the base of the
    /// ratios), e.g. `--diagnostic ss_probe` to profile one probe alone.
    #[arg(long = "diagnostic", value_name = "SETTING", requires = "compare_diagnostics",
          value_parser = clap::builder::PossibleValuesParser::new(SETTING_NAMES))]
    pub diagnostics: Vec<String>,
}

/// The settings' names, in [`SETTINGS`] order.
const SETTING_NAMES: [&str; 8] = [
    "off",
    "scope_stats",
    "ss_probe",
    "dep_gen",
    "dg_capture",
    "swimlane",
    "args_dump",
    "all",
];

fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// One diagnostics setting of the comparison.
struct Setting {
    name: &'static str,
    scope_stats: bool,
    dep_gen: bool,
    swimlane: bool,
    /// Args dump at level 2 (every argument with its payload).
    dump_args: bool,
    /// The host does no work per record (scope stats: keeps none; dep_gen: no replay):
    /// measures the device-side probe or capture and the hand-off alone.
    probe_only: bool,
}

const fn setting(name: &'static str, flags: [bool; 5]) -> Setting {
    Setting {
        name,
        scope_stats: flags[0],
        dep_gen: flags[1],
        swimlane: flags[2],
        dump_args: flags[3],
        probe_only: flags[4],
    }
}

/// (scope_stats, dep_gen, swimlane, dump_args, probe_only) per row.
const SETTINGS: [Setting; 8] = [
    setting(SETTING_NAMES[0], [false, false, false, false, false]),
    setting(SETTING_NAMES[1], [true, false, false, false, false]),
    setting(SETTING_NAMES[2], [true, false, false, false, true]),
    setting(SETTING_NAMES[3], [false, true, false, false, false]),
    setting(SETTING_NAMES[4], [false, true, false, false, true]),
    setting(SETTING_NAMES[5], [false, false, true, false, false]),
    setting(SETTING_NAMES[6], [false, false, false, true, false]),
    setting(SETTING_NAMES[7], [true, true, true, false, false]),
];

fn compare(args: &BenchArgs, w: &simpler_runtime::Worker) -> Result<()> {
    let workloads = if args.workloads.is_empty() {
        vec![Workload::Independent4, Workload::Scopes]
    } else {
        args.workloads.clone()
    };
    let dir = std::env::temp_dir().join(format!("simpler-bench-{}", std::process::id()));
    simpler_artifacts::outln!(
        "{:<13} {:<12} {:>10} {:>13} {:>12} {:>9}  notes",
        "workload",
        "diagnostics",
        "units",
        "ns/unit e2e",
        "ns/submit",
        "vs off"
    );
    for wl in workloads {
        let mut base = None;
        let chosen = |s: &Setting| {
            args.diagnostics.is_empty() || s.name == "off" || args.diagnostics.iter().any(|d| d == s.name)
        };
        for s in SETTINGS.iter().filter(|s| chosen(s)) {
            let mut cfg = bench_config(RuntimeKind::Tmr, args.tasks);
            cfg.enable_scope_stats = s.scope_stats;
            cfg.enable_dep_gen = s.dep_gen;
            cfg.enable_l2_swimlane = s.swimlane;
            if s.dump_args {
                cfg.dump_args = simpler_runtime::config::DumpArgsLevel::Full;
            }
            if s.probe_only {
                cfg.faults.host_storage_limit = Some(0);
                cfg.faults.skip_dep_gen_replay = true;
            }
            cfg.output_prefix = Some(dir.join(format!("{}_{}", wl.name(), s.name)));
            let r = run_workload(w, &cfg, wl, args.tasks).map_err(example_error)?;
            let units = if wl == Workload::Scopes {
                args.tasks
            } else {
                r.tasks
            };
            let per = r.wall.as_nanos() as f64 / units.max(1) as f64;
            let submit = r.orchestration.as_nanos() as f64 / units.max(1) as f64;
            let b = *base.get_or_insert(per);
            let mut notes = Vec::new();
            if let Some(d) = r.dep_gen.as_ref().filter(|_| !s.probe_only) {
                if let Some(p) = &d.problem {
                    notes.push(format!("dep_gen: {p}"));
                }
                if d.replay_ns > 0 {
                    notes.push(format!(
                        "replay {:.2} M records/s",
                        d.total as f64 / d.replay_ns as f64 * 1e3
                    ));
                }
                if d.write_ns > 0 {
                    notes.push(format!(
                        "deps.json ({:.0} MB) finished {:.0} ms after the run",
                        d.bytes as f64 / 1e6,
                        d.write_ns as f64 / 1e6
                    ));
                }
            }
            if let Some(path) = r.swimlane.as_ref().and_then(|l| l.path.as_ref()) {
                if let Some(ns) = mean_submit_span(path) {
                    notes.push(format!("mean submit call {ns:.0} ns (orchestrator spans)"));
                }
            }
            if let Some(a) = &r.args_dump {
                let secs = r.wall.as_secs_f64().max(1e-9);
                notes.push(format!(
                    "args dump level 2: {} entries, {:.1} MB payload + {:.1} MB manifest, {:.0} MB/s of payload ({:.0} MB/s with the manifest){}",
                    a.records,
                    a.bin_bytes as f64 / 1e6,
                    a.bytes as f64 / 1e6,
                    a.bin_bytes as f64 / secs / 1e6,
                    (a.bin_bytes + a.bytes) as f64 / secs / 1e6,
                    if a.dropped_records > 0 || a.truncated_args > 0 {
                        format!("; LOST {} records, {} truncated", a.dropped_records, a.truncated_args)
                    } else {
                        String::new()
                    }
                ));
            }
            if let Some(sc) = &r.scope_stats {
                if !s.probe_only && (sc.dropped.unwrap_or(0) > 0 || sc.verdict != "published") {
                    notes.push(format!("scope stats {}", sc.verdict));
                }
            }
            simpler_artifacts::outln!(
                "{:<13} {:<12} {:>10} {:>13.1} {:>12.1} {:>8.3}x  {}",
                wl.name(),
                s.name,
                units,
                per,
                submit,
                per / b,
                notes.join("; ")
            );
        }
    }
    // The replay alone (unless the settings were chosen without dep_gen).
    if args.diagnostics.is_empty() || args.diagnostics.iter().any(|d| d == "dep_gen") {
        replay_alone(args.tasks, &dir)?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    simpler_artifacts::outln!("units: tasks (scopes for the scopes workload); ns/unit e2e = wall time / units; one run each, same process");
    simpler_artifacts::outln!(
        "ss_probe: scope stats with the host keeping no record (probe + hand-off, no disk writer)"
    );
    simpler_artifacts::outln!("dg_capture: dep_gen capture and hand-off with the host replay switched off");
    simpler_artifacts::outln!("args_dump: --dump-args=2 (every argument of every task with its data)");
    Ok(())
}

/// Times the dep_gen replay alone, on a RAM disk when there is one (the disk's write-back
/// speed is not the replay's), and prints its throughput.
fn replay_alone(tasks: u64, dir: &std::path::Path) -> Result<()> {
    let shm = std::path::Path::new("/dev/shm");
    let replay_dir = if shm.is_dir() {
        shm.join(format!("simpler-bench-replay-{}", std::process::id()))
    } else {
        dir.join("replay")
    };
    std::fs::create_dir_all(&replay_dir)?;
    let n = tasks.min(2_000_000) as usize;
    let (replay, write) = simpler_runtime::collectors::dep_gen::bench_replay(n, &replay_dir)?;
    let bytes = std::fs::metadata(replay_dir.join("deps.json")).map_or(0, |m| m.len());
    simpler_artifacts::outln!(
        "dep_gen replay alone (its thread and the deps.json writer's, {n} 4-argument records): {:.2} M records/s; deps.json ({:.0} MB) finished in {:.0} ms",
        n as f64 / replay.as_secs_f64() / 1e6,
        bytes as f64 / 1e6,
        write.as_secs_f64() * 1e3
    );
    let _ = std::fs::remove_dir_all(&replay_dir);
    Ok(())
}

/// The mean duration of the orchestrator's submit calls in a swimlane records file.
fn mean_submit_span(path: &std::path::Path) -> Option<f64> {
    use simpler_artifacts::swimlane::{read_swimlane, DummyRow, OrchRow, SwimlaneSink, TaskRow};
    #[derive(Default)]
    struct Spans(u64, u64);
    impl SwimlaneSink for Spans {
        fn task(&mut self, _: TaskRow) {}
        fn dummy(&mut self, _: DummyRow) {}
        fn orch(&mut self, row: OrchRow) {
            self.0 += row.submit_end_ns.saturating_sub(row.submit_start_ns);
            self.1 += 1;
        }
    }
    let mut spans = Spans::default();
    read_swimlane(path, &mut spans).ok()?;
    (spans.1 > 0).then(|| spans.0 as f64 / spans.1 as f64)
}

/// Runs the command.
pub fn run(args: BenchArgs) -> Result<()> {
    if args.compare_diagnostics {
        let w = bench_worker().map_err(example_error)?;
        return compare(&args, &w);
    }
    let workloads = if args.workloads.is_empty() {
        Workload::ALL.to_vec()
    } else {
        args.workloads
    };
    let runtimes: Vec<RuntimeKind> = if args.runtimes.is_empty() {
        vec![RuntimeKind::Tmr, RuntimeKind::Hbg]
    } else {
        args.runtimes.clone()
    };
    let w = bench_worker().map_err(example_error)?;
    simpler_artifacts::outln!(
        "{:<14} {:<4} {:>10} {:>14} {:>13} {:>13} {:>13}",
        "workload",
        "rt",
        "tasks",
        "ns/submit",
        "ns/task e2e",
        "tasks/s",
        "peak RSS MiB"
    );
    for wl in workloads {
        for &kind in &runtimes {
            let r =
                run_workload(&w, &bench_config(kind, args.tasks), wl, args.tasks).map_err(example_error)?;
            let f = Figures::of(&r);
            simpler_artifacts::outln!(
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
    simpler_artifacts::outln!("ns/submit: orchestration time per task (submit + dependency inference, concurrent with execution on tmr)");
    simpler_artifacts::outln!(
        "ns/task e2e: wall time per task from run start to the last thread's exit; kernels are empty"
    );
    Ok(())
}
