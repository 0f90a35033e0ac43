//! Synthetic workloads for `simpler bench` and `cargo bench`: independent tasks, a chain,
//! fan-out/fan-in, and a tiled GEMM-like graph with nested scopes. Kernels are empty, so the
//! figures are the runtime's own overhead.

use std::fmt;
use std::str::FromStr;

use simpler_core::{DType, TaskArgs};
use simpler_runtime::config::RingResource;
use simpler_runtime::{
    CallConfig, CoreType, OrchResult, Orchestrator, RunReport, RuntimeEnv, RuntimeKind, Worker,
};

use crate::{Error, ErrorKind};

/// Tasks per scope in the flat workloads (well below the default window).
pub const TASKS_PER_SCOPE: u32 = 1000;

/// A synthetic workload shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Independent 2-argument tasks (INPUT slice, OUTPUT_EXISTING slice).
    Independent,
    /// One INOUT chain: every task depends on the previous one.
    Chain,
    /// One writer, 64 readers, one joiner reading all 64 results; repeated.
    FanOutFanIn,
    /// `C[i,j] += A[i,k]·B[k,j]` tiles on AIC, one scope per row and a nested one per tile.
    TiledGemm,
    /// Independent 4-argument tasks (two INPUT, two OUTPUT_EXISTING slices over 4096 slots).
    Independent4,
    /// Empty scopes only (two scope boundaries each, no tasks).
    Scopes,
}

impl Workload {
    /// All workloads.
    pub const ALL: [Workload; 4] = [
        Workload::Independent,
        Workload::Chain,
        Workload::FanOutFanIn,
        Workload::TiledGemm,
    ];

    /// Every workload, the diagnostics-comparison ones included.
    pub const EVERY: [Workload; 6] = [
        Workload::Independent,
        Workload::Chain,
        Workload::FanOutFanIn,
        Workload::TiledGemm,
        Workload::Independent4,
        Workload::Scopes,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Independent => "independent",
            Workload::Chain => "chain",
            Workload::FanOutFanIn => "fanout_fanin",
            Workload::TiledGemm => "tiled_gemm",
            Workload::Independent4 => "independent4",
            Workload::Scopes => "scopes",
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Workload {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Workload::EVERY
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Workload::EVERY.iter().map(|w| w.name()).collect();
                ErrorKind::UnknownWorkload {
                    name: s.to_string(),
                    valid: names.join(", "),
                }
                .into()
            })
    }
}

/// func id of the empty AIV kernel.
pub const NOOP_AIV: u32 = 0;
/// func id of the empty AIC kernel.
pub const NOOP_AIC: u32 = 1;

/// A worker with the two empty kernels.
pub fn bench_worker() -> Result<Worker, Error> {
    let mut w = Worker::new();
    w.register_kernel(NOOP_AIV, "noop_aiv", CoreType::Aiv, |_| Ok(()))?;
    w.register_kernel(NOOP_AIC, "noop_aic", CoreType::Aic, |_| Ok(()))?;
    Ok(w)
}

/// The configuration a workload needs on `kind` for `tasks` tasks (hbg keeps the whole graph,
/// so its window and tensor map must hold every task).
pub fn bench_config(kind: RuntimeKind, tasks: u64) -> CallConfig {
    let mut env = RuntimeEnv::default();
    let mut cfg = CallConfig {
        runtime: kind,
        ..Default::default()
    };
    if kind == RuntimeKind::Hbg {
        let window = RuntimeKind::hbg_task_window(tasks);
        env.set_ring(RingResource::TaskWindow, 0, window);
        cfg.tensormap_capacity = cfg.tensormap_capacity.max(2 * tasks as usize);
    }
    cfg.runtime_env = env;
    cfg
}

/// Runs `workload` with about `tasks` tasks on `w` with `cfg` ([`ErrorKind::NoTasks`] for 0,
/// [`ErrorKind::TooManyTasks`] past `u32::MAX`).
pub fn run_workload(
    w: &Worker,
    cfg: &CallConfig,
    workload: Workload,
    tasks: u64,
) -> Result<RunReport, Error> {
    if tasks == 0 {
        return Err(ErrorKind::NoTasks.into());
    }
    let n = u32::try_from(tasks).map_err(|_| ErrorKind::TooManyTasks { tasks })?;
    let report = match workload {
        Workload::Independent => {
            let width = n.min(1 << 20);
            let a = w.alloc_tensor(&[width], DType::Float32)?;
            let b = w.alloc_tensor(&[width], DType::Float32)?;
            w.run(cfg, move |o| {
                in_scopes(o, n, |o, i| {
                    let s = i % width;
                    let mut args = TaskArgs::new();
                    args.input(a.view(&[1], &[s])?)
                        .output_existing(b.view(&[1], &[s])?);
                    o.submit_aiv(NOOP_AIV, &args)?;
                    Ok(())
                })
            })?
        }
        Workload::Independent4 => {
            const SLOTS: u32 = 4096;
            let t: Vec<_> = (0..4)
                .map(|_| w.alloc_tensor(&[SLOTS], DType::Float32))
                .collect::<Result<_, _>>()?;
            let (a, b, c, d) = (t[0], t[1], t[2], t[3]);
            w.run(cfg, move |o| {
                in_scopes(o, n, |o, i| {
                    let s = i % SLOTS;
                    let mut args = TaskArgs::new();
                    args.input(a.view(&[1], &[s])?)
                        .input(b.view(&[1], &[s])?)
                        .output_existing(c.view(&[1], &[s])?)
                        .output_existing(d.view(&[1], &[s])?);
                    o.submit_aiv(NOOP_AIV, &args)?;
                    Ok(())
                })
            })?
        }
        Workload::Scopes => w.run(cfg, move |o| {
            for _ in 0..n {
                o.scope(|_| ());
            }
            Ok(())
        })?,
        Workload::Chain => {
            let x = w.alloc_tensor(&[16], DType::Float32)?;
            w.run(cfg, move |o| {
                in_scopes(o, n, |o, _| {
                    let mut args = TaskArgs::new();
                    args.inout(x);
                    o.submit_aiv(NOOP_AIV, &args)?;
                    Ok(())
                })
            })?
        }
        Workload::FanOutFanIn => {
            const FAN: u32 = 64;
            let x = w.alloc_tensor(&[16], DType::Float32)?;
            let y = w.alloc_tensor(&[FAN * 16], DType::Float32)?;
            let rounds = n.div_ceil(FAN + 2);
            w.run(cfg, move |o| {
                for _ in 0..rounds {
                    o.scope(|o| {
                        let mut wr = TaskArgs::new();
                        wr.inout(x);
                        o.submit_aiv(NOOP_AIV, &wr)?;
                        for j in 0..FAN {
                            let mut rd = TaskArgs::new();
                            rd.input(x).output_existing(y.view(&[16], &[j * 16])?);
                            o.submit_aiv(NOOP_AIV, &rd)?;
                        }
                        let mut join = TaskArgs::new();
                        join.inout(y);
                        o.submit_aiv(NOOP_AIV, &join)?;
                        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
                    })?;
                }
                Ok(())
            })?
        }
        Workload::TiledGemm => {
            const T: u32 = 16; // tile edge
            const K: u32 = 8; // k-steps per output tile
            let tiles = n.div_ceil(K).max(1);
            let side = (f64::from(tiles).sqrt().ceil() as u32).max(1);
            let a = w.alloc_tensor(&[side * T, K * T], DType::Float32)?;
            let b = w.alloc_tensor(&[K * T, side * T], DType::Float32)?;
            let c = w.alloc_tensor(&[side * T, side * T], DType::Float32)?;
            w.run(cfg, move |o| {
                let mut made = 0u32;
                for i in 0..side {
                    o.scope(|o| {
                        for j in 0..side {
                            if made >= tiles {
                                break;
                            }
                            made += 1;
                            o.scope(|o| {
                                let ct = c.view(&[T, T], &[i * T, j * T])?;
                                for k in 0..K {
                                    let mut args = TaskArgs::new();
                                    args.input(a.view(&[T, T], &[i * T, k * T])?)
                                        .input(b.view(&[T, T], &[k * T, j * T])?)
                                        .inout(ct);
                                    o.submit_aic(NOOP_AIC, &args)?;
                                }
                                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
                            })?;
                        }
                        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
                    })?;
                }
                Ok(())
            })?
        }
    };
    Ok(report)
}

/// Runs `submit(o, i)` for `i` in `0..n`, [`TASKS_PER_SCOPE`] tasks per nested scope.
fn in_scopes(
    o: &mut Orchestrator,
    n: u32,
    mut submit: impl FnMut(&mut Orchestrator, u32) -> OrchResult,
) -> OrchResult {
    let mut i = 0u32;
    while i < n {
        let end = (i + TASKS_PER_SCOPE).min(n);
        o.scope(|o| {
            while i < end {
                submit(o, i)?;
                i += 1;
            }
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
        })?;
    }
    Ok(())
}

/// The figures `simpler bench` prints for one run.
#[derive(Clone, Debug)]
pub struct Figures {
    /// Tasks run.
    pub tasks: u64,
    /// Orchestration time per task (submit with dependency inference), ns.
    pub ns_per_submit: f64,
    /// Wall time per task, ns.
    pub ns_per_task: f64,
    /// Tasks per second, end to end.
    pub tasks_per_sec: f64,
}

impl Figures {
    /// Derives the figures from a report.
    pub fn of(r: &RunReport) -> Figures {
        let t = r.tasks.max(1) as f64;
        Figures {
            tasks: r.tasks,
            ns_per_submit: r.orchestration.as_nanos() as f64 / t,
            ns_per_task: r.wall.as_nanos() as f64 / t,
            tasks_per_sec: t / r.wall.as_secs_f64().max(1e-9),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_workload_runs_on_both_runtimes() {
        let w = bench_worker().unwrap();
        for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
            for wl in Workload::ALL {
                let r = run_workload(&w, &bench_config(kind, 3000), wl, 3000).unwrap();
                assert!(r.tasks >= 3000 && r.completed == r.tasks, "{kind:?} {wl}: {r:?}");
            }
        }
    }
}
