//! Run configuration: runtime choice, platform size, ring sizes (`runtime_env`) and
//! diagnostics, with validation that names the key and the rule.
//!
//! - [`CallConfig`]: everything one run needs, complete and validated by [`CallConfig::validate`].
//! - [`Settings`]: the same as one layer of optional values; the command line, a workload file
//!   and `--from-deps` each make a layer, [`Settings::overlaid`] stacks them (default <
//!   environment < workload file < command line) and [`Settings::into_config`] is the one place
//!   a [`CallConfig`] is built from them.
//! - [`runtime_env`]: the ring-size keys, one declaration each.

mod faults;
pub mod runtime_env;
mod settings;

pub use faults::Faults;
pub use runtime_env::{
    KeyDecl, RingResource, RingSizes, RuntimeEnv, DEFAULT_DEP_POOL, DEFAULT_HEAP, DEFAULT_TASK_WINDOW,
    RUNTIME_ENV_KEYS,
};
pub use settings::Settings;
/// How much swimlane timing a run records (levels 1–4 of the original).
pub use simpler_artifacts::swimlane::Level as SwimlaneLevel;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use simpler_core::MAX_RINGS;

/// Default number of clusters (1 AIC + 2 AIV each).
pub const DEFAULT_CLUSTERS: usize = 8;
/// Most clusters a run may have.
pub const MAX_CLUSTERS: usize = 1024;
/// Largest `tensormap_capacity` (`u32::MAX / 2`: entry indices must fit in half a `u32`).
pub const MAX_TENSORMAP_CAPACITY: usize = i32::MAX as usize;
/// Default run timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// Most scheduler threads a run picks by itself (`scheduler_threads: 0`): the cores it leaves
/// free (one fewer than the available cores under `tmr`, all of them under `hbg`), clamped to
/// `1..=MAX_DEFAULT_SCHEDULER_THREADS`. An explicit count is used as given.
pub const MAX_DEFAULT_SCHEDULER_THREADS: usize = 3;

/// How much the args dump captures (`--dump-args[=LEVEL]`, the original's `DumpArgsLevel`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, PartialOrd, Ord)]
pub enum DumpArgsLevel {
    /// 0: nothing; no storage is allocated.
    #[default]
    Off = 0,
    /// 1: only the selected arguments of tasks that selected any (records and payload).
    Partial = 1,
    /// 2: every argument of every task, with its payload.
    Full = 2,
    /// 3: every argument's record; payload only for the selected tensors.
    Hybrid = 3,
}

impl DumpArgsLevel {
    /// The level of number `n` (0..=3).
    pub fn from_number(n: u64) -> Option<DumpArgsLevel> {
        Some(match n {
            0 => DumpArgsLevel::Off,
            1 => DumpArgsLevel::Partial,
            2 => DumpArgsLevel::Full,
            3 => DumpArgsLevel::Hybrid,
            _ => return None,
        })
    }
    /// The level's number, as written to `args_dump.json`.
    pub const fn number(self) -> u8 {
        self as u8
    }
}

impl std::str::FromStr for DumpArgsLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        s.trim()
            .parse::<u64>()
            .ok()
            .and_then(DumpArgsLevel::from_number)
            .ok_or_else(|| {
                format!("dump-args level {s:?} is not 0 (off), 1 (partial), 2 (full) or 3 (hybrid)")
            })
    }
}

/// Which runtime executes the orchestration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
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
    /// Both, in documentation order.
    pub const ALL: [RuntimeKind; 2] = [RuntimeKind::Tmr, RuntimeKind::Hbg];

    /// `"tmr"` or `"hbg"`.
    pub const fn name(self) -> &'static str {
        match self {
            RuntimeKind::Tmr => "tmr",
            RuntimeKind::Hbg => "hbg",
        }
    }
    /// Parses `"tmr"` / `"hbg"`.
    pub fn from_name(s: &str) -> Option<RuntimeKind> {
        RuntimeKind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// The size of ring 0's task window under hbg for a graph of `tasks` tasks: hbg keeps the
    /// whole graph and reclaims nothing, so every task needs a slot (at least the default).
    pub fn hbg_task_window(tasks: u64) -> u64 {
        (tasks + 2).next_power_of_two().max(DEFAULT_TASK_WINDOW)
    }
}

/// What kind of configuration error: the field or key, and what was wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// A `runtime_env` key that does not exist.
    UnknownKey {
        /// The key given.
        key: String,
    },
    /// A value that is not a number, or not one number per ring (or one for all).
    Malformed {
        /// The key (or `runtime_env` for a pair without `=`).
        key: String,
        /// The text given.
        value: String,
    },
    /// A number that breaks its key's rule.
    InvalidValue {
        /// The key.
        key: &'static str,
        /// The value given.
        value: String,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// A field outside its range (`clusters`, `tensormap_capacity`).
    OutOfRange {
        /// The field.
        field: &'static str,
        /// The value given.
        value: String,
    },
    /// Diagnostics are on but there is nowhere to write them.
    NoOutputPrefix,
    /// Ring buffers larger than this machine's memory.
    HostMemory {
        /// The key to lower.
        key: &'static str,
    },
}

/// A configuration error: which key, which value, which rule. Its message says all three.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    kind: ConfigErrorKind,
    message: String,
}

impl ConfigError {
    pub(crate) fn new(kind: ConfigErrorKind, message: String) -> ConfigError {
        ConfigError { kind, message }
    }
    /// What went wrong, for callers that match on it.
    pub fn kind(&self) -> &ConfigErrorKind {
        &self.kind
    }
    /// The message without a location prefix (the same as `to_string()`).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Everything a run needs besides the orchestration itself.
#[derive(Clone, Debug)]
pub struct CallConfig {
    /// `tmr` or `hbg`.
    pub runtime: RuntimeKind,
    /// Number of clusters (1 AIC + 2 AIV each).
    pub clusters: usize,
    /// Scheduler threads; 0 picks the cores the run leaves free (`tmr`: one fewer than the
    /// available cores; `hbg`: all of them), clamped to `1..=`[`MAX_DEFAULT_SCHEDULER_THREADS`]
    /// (see [`CallConfig::effective_scheduler_threads`]).
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
    /// How much swimlane timing records when enabled (the original's levels 1–4; default 4,
    /// everything). See `docs/swimlane.md`.
    pub l2_swimlane_level: SwimlaneLevel,
    /// Capture task arguments' data (`args_dump/`); see `docs/args-dump.md`.
    pub dump_args: DumpArgsLevel,
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
    /// An example's parameters (`--param`), every one, for the run manifest: what `simpler
    /// plan` re-runs a run folder with.
    pub params: std::collections::BTreeMap<String, String>,
    /// Stop the run (unproven close, status `interrupted`) once the process-wide interrupt
    /// flag is set (`simpler_artifacts::interrupt`, set by the CLI's SIGINT/SIGTERM handler).
    pub stop_on_interrupt: bool,
    #[doc(hidden)]
    pub faults: Faults,
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
            l2_swimlane_level: SwimlaneLevel::OrchPhases,
            dump_args: DumpArgsLevel::Off,
            output_prefix: None,
            timeout: DEFAULT_TIMEOUT,
            record_fanin: false,
            subject: None,
            params: Default::default(),
            stop_on_interrupt: false,
            faults: Default::default(),
        }
    }
}

impl CallConfig {
    /// True when any diagnostic is enabled.
    pub fn any_diagnostic(&self) -> bool {
        self.enable_scope_stats
            || self.enable_dep_gen
            || self.enable_l2_swimlane
            || self.dump_args != DumpArgsLevel::Off
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
                (self.dump_args != DumpArgsLevel::Off, "dump_args"),
            ] {
                if flag {
                    on.push(name);
                }
            }
            return Err(ConfigError::new(
                ConfigErrorKind::NoOutputPrefix,
                format!("{} needs an output_prefix to write its artifacts", on.join(", ")),
            ));
        }
        if self.clusters == 0 || self.clusters > MAX_CLUSTERS {
            return Err(ConfigError::new(
                ConfigErrorKind::OutOfRange {
                    field: "clusters",
                    value: self.clusters.to_string(),
                },
                format!("clusters is {}; it must be in [1, {MAX_CLUSTERS}]", self.clusters),
            ));
        }
        if self.tensormap_capacity == 0 || self.tensormap_capacity > MAX_TENSORMAP_CAPACITY {
            return Err(ConfigError::new(
                ConfigErrorKind::OutOfRange {
                    field: "tensormap_capacity",
                    value: self.tensormap_capacity.to_string(),
                },
                format!(
                    "tensormap_capacity {} is out of range; it must be in [1, {MAX_TENSORMAP_CAPACITY}]",
                    self.tensormap_capacity
                ),
            ));
        }
        let sizes = self.runtime_env.resolve()?;
        self.check_host_memory(&sizes, simpler_artifacts::host::mem_total_bytes())?;
        Ok(sizes)
    }

    /// Refuses ring sizes whose buffers cannot fit in this machine's memory (`limit` bytes),
    /// before anything is allocated: the error names the key, the value and what it would take.
    fn check_host_memory(&self, sizes: &RingSizes, limit: Option<u64>) -> Result<(), ConfigError> {
        let Some(limit) = limit else { return Ok(()) };
        let (rings, slot_bytes) = match self.runtime {
            RuntimeKind::Tmr => (
                MAX_RINGS,
                crate::slot::SLOT_BYTES + crate::ring::shared::MARK_BYTES,
            ),
            RuntimeKind::Hbg => (1, crate::slot::PACKED_SLOT_BYTES),
        };
        let heap: u128 = sizes.heap[..rings].iter().map(|&h| u128::from(h)).sum();
        let window: u128 = sizes.task_window[..rings]
            .iter()
            .map(|&w| u128::from(w) * slot_bytes as u128)
            .sum();
        if heap + window <= u128::from(limit) {
            return Ok(());
        }
        let (key, values, need) = if heap >= window {
            (RingResource::Heap.key(), sizes.heap[..rings].to_vec(), heap)
        } else {
            let w = sizes.task_window[..rings].iter().map(|&w| u64::from(w)).collect();
            (RingResource::TaskWindow.key(), w, window)
        };
        let values: Vec<String> = values.iter().map(u64::to_string).collect();
        Err(ConfigError::new(
            ConfigErrorKind::HostMemory { key },
            format!(
                "runtime_env {key}={} needs {} of host memory for {rings} ring(s) ({} in all with the other \
             ring buffers), more than this machine's {}; lower {key}",
                values.join(","),
                simpler_artifacts::host::human_bytes(need),
                simpler_artifacts::host::human_bytes(heap + window),
                simpler_artifacts::host::human_bytes(u128::from(limit)),
            ),
        ))
    }

    /// The number of scheduler threads this run uses: `scheduler_threads` when non-zero, else
    /// the cores the run leaves free, clamped to `1..=`[`MAX_DEFAULT_SCHEDULER_THREADS`]:
    /// the available cores − 1 under `tmr`, whose orchestrator runs beside the schedulers;
    /// every available core under `hbg`, whose graph is built before any scheduler starts
    /// (the core count taken as 2 when it is unknown).
    pub fn effective_scheduler_threads(&self) -> usize {
        if self.scheduler_threads > 0 {
            return self.scheduler_threads;
        }
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let free = match self.runtime {
            RuntimeKind::Tmr => cores.saturating_sub(1),
            RuntimeKind::Hbg => cores,
        };
        free.clamp(1, MAX_DEFAULT_SCHEDULER_THREADS)
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
            e.to_string(),
            "runtime_env ring_heap=18446744073709551615,18446744073709551615,18446744073709551615,\
             18446744073709551615 needs 64.0 EiB of host memory for 4 ring(s) (64.0 EiB in all with the \
             other ring buffers), more than this machine's 16.0 GiB; lower ring_heap"
        );
        let mut cfg = CallConfig::default();
        cfg.runtime_env.set_pair("ring_task_window=1073741824").unwrap();
        let sizes = cfg.runtime_env.resolve_with_env(|_| None).unwrap();
        let e = cfg.check_host_memory(&sizes, Some(16 << 30)).unwrap_err();
        assert!(
            e.to_string().starts_with(
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
            env.set("ring_task_window", "1000").unwrap_err().to_string(),
            "runtime_env ring_task_window: 1000 is invalid; ring_task_window must be a power of two in [4, 2147483647]"
        );
        assert_eq!(
            env.set("ring_heap", "512").unwrap_err().to_string(),
            "runtime_env ring_heap: 512 is invalid; ring_heap must be at least 1024 bytes"
        );
        assert_eq!(
            env.set("ring_dep_pool", "1,2").unwrap_err().to_string(),
            "runtime_env ring_dep_pool: `1,2` must be one number or 4 comma-separated numbers (one per ring)"
        );
        assert!(env
            .set("ring_heaps", "4096")
            .unwrap_err()
            .to_string()
            .starts_with("unknown runtime_env key `ring_heaps`"));
        let err = RuntimeEnv::default()
            .resolve_with_env(|k| (k == "SIMPLER_RING_DEP_POOL").then(|| "x".to_string()))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
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
            cfg.validate().unwrap_err().to_string(),
            "enable_scope_stats, enable_dep_gen needs an output_prefix to write its artifacts"
        );
    }
}
