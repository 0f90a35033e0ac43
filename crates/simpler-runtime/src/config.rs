//! Run configuration: runtime choice, platform size, ring sizes (`runtime_env`) and
//! diagnostics, with validation that names the key and the rule.
//!
//! Ring sizes resolve per ring and per resource: a non-zero `runtime_env` entry wins, then the
//! environment variable (`SIMPLER_RING_TASK_WINDOW`, `SIMPLER_RING_HEAP`,
//! `SIMPLER_RING_DEP_POOL`: one number for all rings or four comma-separated numbers), then the
//! default. Invalid values are errors, never silently ignored.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use simpler_core::MAX_RINGS;

/// Default task window per ring (a power of two).
pub const DEFAULT_TASK_WINDOW: u64 = 16384;
/// Default heap per ring, in bytes.
pub const DEFAULT_HEAP: u64 = 256 << 20;
/// Default dependency pool per ring, in entries.
pub const DEFAULT_DEP_POOL: u64 = 16384;
/// Default number of clusters (1 AIC + 2 AIV each).
pub const DEFAULT_CLUSTERS: usize = 8;
/// Most clusters a run may have.
pub const MAX_CLUSTERS: usize = 1024;
/// Default run timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// Most scheduler threads a run picks by itself (`scheduler_threads: 0`): one fewer than the
/// available cores, clamped to `1..=MAX_DEFAULT_SCHEDULER_THREADS`. An explicit count is used
/// as given.
pub const MAX_DEFAULT_SCHEDULER_THREADS: usize = 3;

/// Which runtime executes the orchestration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RuntimeKind {
    /// Tensor map and ring buffers: orchestration runs on its own thread concurrently with
    /// execution; per-ring resources are reclaimed as tasks retire.
    #[default]
    Tmr,
    /// Host-built graph: the orchestration runs to completion first (one ring, nothing
    /// reclaimed), then the graph executes.
    Hbg,
}

impl RuntimeKind {
    /// `"tmr"` or `"hbg"`.
    pub const fn name(self) -> &'static str {
        match self {
            RuntimeKind::Tmr => "tmr",
            RuntimeKind::Hbg => "hbg",
        }
    }
    /// Parses `"tmr"` / `"hbg"`.
    pub fn from_name(s: &str) -> Option<RuntimeKind> {
        match s {
            "tmr" => Some(RuntimeKind::Tmr),
            "hbg" => Some(RuntimeKind::Hbg),
            _ => None,
        }
    }
}

/// One of the three ring resources `runtime_env` sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingResource {
    /// Task slots per ring.
    TaskWindow,
    /// Heap bytes per ring.
    Heap,
    /// Dependency-pool entries per ring.
    DepPool,
}

impl RingResource {
    /// All three, in key order.
    pub const ALL: [RingResource; 3] = [
        RingResource::TaskWindow,
        RingResource::Heap,
        RingResource::DepPool,
    ];

    /// The `runtime_env` key.
    pub const fn key(self) -> &'static str {
        match self {
            RingResource::TaskWindow => "ring_task_window",
            RingResource::Heap => "ring_heap",
            RingResource::DepPool => "ring_dep_pool",
        }
    }
    /// The environment variable.
    pub const fn env_var(self) -> &'static str {
        match self {
            RingResource::TaskWindow => "SIMPLER_RING_TASK_WINDOW",
            RingResource::Heap => "SIMPLER_RING_HEAP",
            RingResource::DepPool => "SIMPLER_RING_DEP_POOL",
        }
    }
    const fn default_value(self) -> u64 {
        match self {
            RingResource::TaskWindow => DEFAULT_TASK_WINDOW,
            RingResource::Heap => DEFAULT_HEAP,
            RingResource::DepPool => DEFAULT_DEP_POOL,
        }
    }
    /// The rule a value must follow, as shown in errors.
    pub const fn rule(self) -> &'static str {
        match self {
            RingResource::TaskWindow => "a power of two in [4, 2147483647]",
            RingResource::Heap => "at least 1024 bytes",
            RingResource::DepPool => "in [4, 2147483647]",
        }
    }
    fn valid(self, v: u64) -> bool {
        match self {
            RingResource::TaskWindow => v.is_power_of_two() && (4..=i32::MAX as u64).contains(&v),
            RingResource::Heap => v >= 1024,
            RingResource::DepPool => (4..=i32::MAX as u64).contains(&v),
        }
    }
}

/// A configuration error: which key, which value, which rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Per-ring overrides of the three ring resources; an entry of 0 means "unset".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuntimeEnv {
    /// `ring_task_window` per ring.
    pub ring_task_window: [u64; MAX_RINGS],
    /// `ring_heap` per ring, in bytes.
    pub ring_heap: [u64; MAX_RINGS],
    /// `ring_dep_pool` per ring.
    pub ring_dep_pool: [u64; MAX_RINGS],
}

impl RuntimeEnv {
    fn slot(&mut self, r: RingResource) -> &mut [u64; MAX_RINGS] {
        match r {
            RingResource::TaskWindow => &mut self.ring_task_window,
            RingResource::Heap => &mut self.ring_heap,
            RingResource::DepPool => &mut self.ring_dep_pool,
        }
    }
    fn get(&self, r: RingResource) -> &[u64; MAX_RINGS] {
        match r {
            RingResource::TaskWindow => &self.ring_task_window,
            RingResource::Heap => &self.ring_heap,
            RingResource::DepPool => &self.ring_dep_pool,
        }
    }

    /// Sets `key` from `value`: one number for every ring, or four comma-separated numbers.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let Some(res) = RingResource::ALL.into_iter().find(|r| r.key() == key) else {
            let keys: Vec<_> = RingResource::ALL.iter().map(|r| r.key()).collect();
            return Err(ConfigError(format!(
                "unknown runtime_env key `{key}`; valid keys: {}",
                keys.join(", ")
            )));
        };
        *self.slot(res) = parse_ring_values(value, res, &format!("runtime_env {key}"))?;
        Ok(())
    }

    /// Parses `KEY=VALUE` (the `--runtime-env` form).
    pub fn set_pair(&mut self, pair: &str) -> Result<(), ConfigError> {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| ConfigError(format!("runtime_env `{pair}` is not KEY=VALUE")))?;
        self.set(k.trim(), v.trim())
    }

    /// Resolves every ring's sizes (override > environment > default), validating each.
    pub fn resolve(&self) -> Result<RingSizes, ConfigError> {
        self.resolve_with_env(|name| std::env::var(name).ok())
    }

    /// [`RuntimeEnv::resolve`] with an explicit environment lookup (for tests).
    pub fn resolve_with_env(&self, env: impl Fn(&str) -> Option<String>) -> Result<RingSizes, ConfigError> {
        let mut out = [[0u64; MAX_RINGS]; 3];
        for (i, res) in RingResource::ALL.into_iter().enumerate() {
            let from_env = match env(res.env_var()) {
                Some(v) => Some(parse_ring_values(
                    &v,
                    res,
                    &format!("environment variable {}", res.env_var()),
                )?),
                None => None,
            };
            for ring in 0..MAX_RINGS {
                let v = self.get(res)[ring];
                out[i][ring] = if v != 0 {
                    v
                } else {
                    from_env
                        .map(|e| e[ring])
                        .filter(|&e| e != 0)
                        .unwrap_or(res.default_value())
                };
            }
        }
        Ok(RingSizes {
            task_window: out[0].map(|v| v as u32),
            heap: out[1],
            dep_pool: out[2].map(|v| v as u32),
        })
    }
}

fn parse_ring_values(value: &str, res: RingResource, origin: &str) -> Result<[u64; MAX_RINGS], ConfigError> {
    let parts: Vec<&str> = value.split(',').map(str::trim).collect();
    if parts.len() != 1 && parts.len() != MAX_RINGS {
        return Err(ConfigError(format!(
            "{origin}: `{value}` must be one number or {MAX_RINGS} comma-separated numbers (one per ring)"
        )));
    }
    let mut vals = [0u64; MAX_RINGS];
    for (i, p) in parts.iter().enumerate() {
        let v: u64 = p
            .parse()
            .map_err(|_| ConfigError(format!("{origin}: `{p}` is not a non-negative integer")))?;
        if !res.valid(v) {
            return Err(ConfigError(format!(
                "{origin}: {v} is invalid; {} must be {}",
                res.key(),
                res.rule()
            )));
        }
        vals[i] = v;
    }
    if parts.len() == 1 {
        vals = [vals[0]; MAX_RINGS];
    }
    Ok(vals)
}

/// The effective per-ring sizes of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingSizes {
    /// Task slots per ring.
    pub task_window: [u32; MAX_RINGS],
    /// Heap bytes per ring.
    pub heap: [u64; MAX_RINGS],
    /// Dependency-pool entries per ring.
    pub dep_pool: [u32; MAX_RINGS],
}

/// Everything a run needs besides the orchestration itself.
#[derive(Clone, Debug)]
pub struct CallConfig {
    /// `tmr` or `hbg`.
    pub runtime: RuntimeKind,
    /// Number of clusters (1 AIC + 2 AIV each).
    pub clusters: usize,
    /// Scheduler threads; 0 picks one fewer than the available cores, clamped to
    /// `1..=`[`MAX_DEFAULT_SCHEDULER_THREADS`] (see [`CallConfig::effective_scheduler_threads`]).
    pub scheduler_threads: usize,
    /// Ring size overrides.
    pub runtime_env: RuntimeEnv,
    /// Tensor-map entry capacity (not a `runtime_env` key, as in the original).
    pub tensormap_capacity: usize,
    /// Record per-scope resource samples.
    pub enable_scope_stats: bool,
    /// Capture every submit and write deps.json.
    pub enable_dep_gen: bool,
    /// Record per-task timing.
    pub enable_l2_swimlane: bool,
    /// Where diagnostics are written; required when any diagnostic is on.
    pub output_prefix: Option<PathBuf>,
    /// A run still going after this long is stopped with SCHEDULER_TIMEOUT (100).
    pub timeout: Duration,
    /// Keep every task's wired fanin (producers and flags) and return it in the report.
    /// Memory grows with the task count: for tests and small graphs.
    pub record_fanin: bool,
    /// What runs, for the run manifest (`run.json`): an example and its case, a workload
    /// file, ... Default: the root scope's site.
    pub subject: Option<String>,
    /// Stop the run (unproven close, status `interrupted`) once the process-wide interrupt
    /// flag is set (`simpler_artifacts::interrupt`, set by the CLI's SIGINT/SIGTERM handler).
    pub stop_on_interrupt: bool,
    #[doc(hidden)]
    pub faults: crate::collectors::Faults,
}

impl Default for CallConfig {
    fn default() -> Self {
        CallConfig {
            runtime: RuntimeKind::Tmr,
            clusters: DEFAULT_CLUSTERS,
            scheduler_threads: 0,
            runtime_env: RuntimeEnv::default(),
            tensormap_capacity: simpler_core::tensormap::DEFAULT_TENSORMAP_CAPACITY,
            enable_scope_stats: false,
            enable_dep_gen: false,
            enable_l2_swimlane: false,
            output_prefix: None,
            timeout: DEFAULT_TIMEOUT,
            record_fanin: false,
            subject: None,
            stop_on_interrupt: false,
            faults: Default::default(),
        }
    }
}

impl CallConfig {
    /// True when any diagnostic is enabled.
    pub fn any_diagnostic(&self) -> bool {
        self.enable_scope_stats || self.enable_dep_gen || self.enable_l2_swimlane
    }

    /// Checks the configuration and resolves the ring sizes.
    pub fn validate(&self) -> Result<RingSizes, ConfigError> {
        if self.any_diagnostic()
            && self
                .output_prefix
                .as_ref()
                .is_none_or(|p| p.as_os_str().is_empty())
        {
            let mut on = Vec::new();
            for (flag, name) in [
                (self.enable_scope_stats, "enable_scope_stats"),
                (self.enable_dep_gen, "enable_dep_gen"),
                (self.enable_l2_swimlane, "enable_l2_swimlane"),
            ] {
                if flag {
                    on.push(name);
                }
            }
            return Err(ConfigError(format!(
                "{} needs an output_prefix to write its artifacts",
                on.join(", ")
            )));
        }
        if self.clusters == 0 || self.clusters > MAX_CLUSTERS {
            return Err(ConfigError(format!(
                "clusters is {}; it must be in [1, {MAX_CLUSTERS}]",
                self.clusters
            )));
        }
        if self.tensormap_capacity == 0 || self.tensormap_capacity > u32::MAX as usize / 2 {
            return Err(ConfigError(format!(
                "tensormap_capacity {} is out of range",
                self.tensormap_capacity
            )));
        }
        let sizes = self.runtime_env.resolve()?;
        self.check_host_memory(&sizes, simpler_artifacts::host::mem_total_bytes())?;
        Ok(sizes)
    }

    /// Refuses ring sizes whose buffers cannot fit in this machine's memory (`limit` bytes),
    /// before anything is allocated: the error names the key, the value and what it would take.
    fn check_host_memory(&self, sizes: &RingSizes, limit: Option<u64>) -> Result<(), ConfigError> {
        let Some(limit) = limit else { return Ok(()) };
        let rings = match self.runtime {
            RuntimeKind::Tmr => MAX_RINGS,
            RuntimeKind::Hbg => 1,
        };
        let heap: u128 = sizes.heap[..rings].iter().map(|&h| u128::from(h)).sum();
        let window: u128 = sizes.task_window[..rings]
            .iter()
            .map(|&w| u128::from(w) * crate::slot::SLOT_BYTES as u128)
            .sum();
        if heap + window <= u128::from(limit) {
            return Ok(());
        }
        let (key, values, need) = if heap >= window {
            ("ring_heap", sizes.heap[..rings].to_vec(), heap)
        } else {
            let w = sizes.task_window[..rings].iter().map(|&w| u64::from(w)).collect();
            ("ring_task_window", w, window)
        };
        let values: Vec<String> = values.iter().map(u64::to_string).collect();
        Err(ConfigError(format!(
            "runtime_env {key}={} needs {} of host memory for {rings} ring(s) ({} in all with the other \
             ring buffers), more than this machine's {}; lower {key}",
            values.join(","),
            human_bytes(need),
            human_bytes(heap + window),
            human_bytes(u128::from(limit)),
        )))
    }

    /// The number of scheduler threads this run uses: `scheduler_threads` when non-zero, else
    /// the available cores − 1 clamped to `1..=`[`MAX_DEFAULT_SCHEDULER_THREADS`] (1 when the
    /// core count is unknown).
    pub fn effective_scheduler_threads(&self) -> usize {
        if self.scheduler_threads > 0 {
            return self.scheduler_threads;
        }
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        cores.saturating_sub(1).clamp(1, MAX_DEFAULT_SCHEDULER_THREADS)
    }
}

/// Bytes with a binary prefix, e.g. `4.0 TiB`.
fn human_bytes(b: u128) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} bytes")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_sizes_that_cannot_fit_in_host_memory_are_refused_before_allocation() {
        let mut cfg = CallConfig::default();
        cfg.runtime_env
            .set_pair("ring_heap=18446744073709551615")
            .unwrap();
        let sizes = cfg.runtime_env.resolve_with_env(|_| None).unwrap();
        let e = cfg.check_host_memory(&sizes, Some(16 << 30)).unwrap_err();
        assert_eq!(
            e.0,
            "runtime_env ring_heap=18446744073709551615,18446744073709551615,18446744073709551615,\
             18446744073709551615 needs 64.0 EiB of host memory for 4 ring(s) (64.0 EiB in all with the \
             other ring buffers), more than this machine's 16.0 GiB; lower ring_heap"
        );
        let mut cfg = CallConfig::default();
        cfg.runtime_env.set_pair("ring_task_window=1073741824").unwrap();
        let sizes = cfg.runtime_env.resolve_with_env(|_| None).unwrap();
        let e = cfg.check_host_memory(&sizes, Some(16 << 30)).unwrap_err();
        assert!(
            e.0.starts_with(
                "runtime_env ring_task_window=1073741824,1073741824,1073741824,1073741824 needs "
            ),
            "{e}"
        );
        // The defaults fit a small machine; hbg uses one ring only.
        let sizes = CallConfig::default()
            .runtime_env
            .resolve_with_env(|_| None)
            .unwrap();
        CallConfig::default()
            .check_host_memory(&sizes, Some(2 << 30))
            .unwrap();
        let hbg = CallConfig {
            runtime: RuntimeKind::Hbg,
            ..Default::default()
        };
        let mut big = sizes;
        big.heap = [1 << 30, 64 << 30, 64 << 30, 64 << 30];
        hbg.check_host_memory(&big, Some(2 << 30)).unwrap();
    }

    #[test]
    fn scalar_and_list_values_with_precedence() {
        let mut env = RuntimeEnv::default();
        env.set_pair("ring_task_window=1024,2048,4096,8192").unwrap();
        env.set("ring_heap", "0,0,4096,0").unwrap_err();
        env.set("ring_dep_pool", "64").unwrap();
        let sizes = env
            .resolve_with_env(|k| (k == "SIMPLER_RING_HEAP").then(|| "2048".to_string()))
            .unwrap();
        assert_eq!(sizes.task_window, [1024, 2048, 4096, 8192]);
        assert_eq!(sizes.heap, [2048; 4]);
        assert_eq!(sizes.dep_pool, [64; 4]);
        let defaults = RuntimeEnv::default().resolve_with_env(|_| None).unwrap();
        assert_eq!(defaults.task_window, [16384; 4]);
        assert_eq!(defaults.heap, [256 << 20; 4]);
    }

    #[test]
    fn invalid_values_name_key_and_rule() {
        let mut env = RuntimeEnv::default();
        assert_eq!(
            env.set("ring_task_window", "1000").unwrap_err().0,
            "runtime_env ring_task_window: 1000 is invalid; ring_task_window must be a power of two in [4, 2147483647]"
        );
        assert_eq!(
            env.set("ring_heap", "512").unwrap_err().0,
            "runtime_env ring_heap: 512 is invalid; ring_heap must be at least 1024 bytes"
        );
        assert_eq!(
            env.set("ring_dep_pool", "1,2").unwrap_err().0,
            "runtime_env ring_dep_pool: `1,2` must be one number or 4 comma-separated numbers (one per ring)"
        );
        assert!(env
            .set("ring_heaps", "4096")
            .unwrap_err()
            .0
            .starts_with("unknown runtime_env key `ring_heaps`"));
        let err = RuntimeEnv::default()
            .resolve_with_env(|k| (k == "SIMPLER_RING_DEP_POOL").then(|| "x".to_string()))
            .unwrap_err();
        assert_eq!(
            err.0,
            "environment variable SIMPLER_RING_DEP_POOL: `x` is not a non-negative integer"
        );
    }

    #[test]
    fn diagnostics_need_an_output_prefix() {
        let cfg = CallConfig {
            enable_dep_gen: true,
            enable_scope_stats: true,
            ..Default::default()
        };
        assert_eq!(
            cfg.validate().unwrap_err().0,
            "enable_scope_stats, enable_dep_gen needs an output_prefix to write its artifacts"
        );
    }
}
