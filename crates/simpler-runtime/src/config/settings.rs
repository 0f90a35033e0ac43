//! [`Settings`]: the run configuration as one layer of optional values.
//!
//! Every source of settings makes one layer: the command line (`simpler run`'s flags), a
//! workload file (its `runtime`, `runtime_env`, `clusters`, `diagnostics`, ...), a program
//! (the Rust API, the Python front). A value left `None` says "not given here", so a later
//! layer overrides only what it sets. [`Settings::into_config`] applies the defaults and is the
//! one place a [`CallConfig`] is built from settings; the environment layer (`SIMPLER_RING_*`)
//! goes under the `runtime_env` values when the run resolves its ring sizes
//! ([`RuntimeEnv::resolve`](super::RuntimeEnv::resolve)).

use std::path::PathBuf;
use std::time::Duration;

use super::{CallConfig, DumpArgsLevel, RuntimeEnv, RuntimeKind, SwimlaneLevel};

/// One layer of run settings; see the module docs.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// `tmr` or `hbg`.
    pub runtime: Option<RuntimeKind>,
    /// Clusters (1 AIC + 2 AIV each).
    pub clusters: Option<usize>,
    /// Scheduler threads (0 = automatic).
    pub scheduler_threads: Option<usize>,
    /// Ring sizes, per key and ring (each value set or not).
    pub runtime_env: RuntimeEnv,
    /// Tensor-map entry capacity.
    pub tensormap_capacity: Option<usize>,
    /// Record per-scope resource samples.
    pub enable_scope_stats: Option<bool>,
    /// Capture the dependency graph.
    pub enable_dep_gen: Option<bool>,
    /// Record per-task timing.
    pub enable_l2_swimlane: Option<bool>,
    /// Swimlane level.
    pub l2_swimlane_level: Option<SwimlaneLevel>,
    /// Args dump level.
    pub dump_args: Option<DumpArgsLevel>,
    /// Where diagnostics are written.
    pub output_prefix: Option<PathBuf>,
    /// Run timeout.
    pub timeout: Option<Duration>,
    /// Keep every task's wired fanin in the report.
    pub record_fanin: Option<bool>,
    /// What runs, for the run manifest.
    pub subject: Option<String>,
    /// An example's parameters, for the run manifest.
    pub params: Option<std::collections::BTreeMap<String, String>>,
    /// Stop the run when the process is interrupted.
    pub stop_on_interrupt: Option<bool>,
}

impl Settings {
    /// This layer with `over` on top: every value `over` sets wins (ring sizes per key and
    /// ring).
    pub fn overlaid(self, over: &Settings) -> Settings {
        fn pick<T: Clone>(mine: Option<T>, theirs: &Option<T>) -> Option<T> {
            theirs.clone().or(mine)
        }
        Settings {
            runtime: pick(self.runtime, &over.runtime),
            clusters: pick(self.clusters, &over.clusters),
            scheduler_threads: pick(self.scheduler_threads, &over.scheduler_threads),
            runtime_env: self.runtime_env.overlaid(&over.runtime_env),
            tensormap_capacity: pick(self.tensormap_capacity, &over.tensormap_capacity),
            enable_scope_stats: pick(self.enable_scope_stats, &over.enable_scope_stats),
            enable_dep_gen: pick(self.enable_dep_gen, &over.enable_dep_gen),
            enable_l2_swimlane: pick(self.enable_l2_swimlane, &over.enable_l2_swimlane),
            l2_swimlane_level: pick(self.l2_swimlane_level, &over.l2_swimlane_level),
            dump_args: pick(self.dump_args, &over.dump_args),
            output_prefix: pick(self.output_prefix, &over.output_prefix),
            timeout: pick(self.timeout, &over.timeout),
            record_fanin: pick(self.record_fanin, &over.record_fanin),
            subject: pick(self.subject, &over.subject),
            params: pick(self.params, &over.params),
            stop_on_interrupt: pick(self.stop_on_interrupt, &over.stop_on_interrupt),
        }
    }

    /// True when any diagnostic is switched on in this layer.
    pub fn any_diagnostic(&self) -> bool {
        [
            self.enable_scope_stats,
            self.enable_dep_gen,
            self.enable_l2_swimlane,
        ]
        .contains(&Some(true))
            || self.dump_args.is_some_and(|l| l != DumpArgsLevel::Off)
    }

    /// The run configuration: these settings over the defaults. Not yet validated (the run
    /// validates; ring sizes resolve against the environment then).
    pub fn into_config(self) -> CallConfig {
        let d = CallConfig::default();
        CallConfig {
            runtime: self.runtime.unwrap_or(d.runtime),
            clusters: self.clusters.unwrap_or(d.clusters),
            scheduler_threads: self.scheduler_threads.unwrap_or(d.scheduler_threads),
            runtime_env: self.runtime_env,
            tensormap_capacity: self.tensormap_capacity.unwrap_or(d.tensormap_capacity),
            enable_scope_stats: self.enable_scope_stats.unwrap_or(d.enable_scope_stats),
            enable_dep_gen: self.enable_dep_gen.unwrap_or(d.enable_dep_gen),
            enable_l2_swimlane: self.enable_l2_swimlane.unwrap_or(d.enable_l2_swimlane),
            l2_swimlane_level: self.l2_swimlane_level.unwrap_or(d.l2_swimlane_level),
            dump_args: self.dump_args.unwrap_or(d.dump_args),
            output_prefix: self.output_prefix.or(d.output_prefix),
            timeout: self.timeout.unwrap_or(d.timeout),
            record_fanin: self.record_fanin.unwrap_or(d.record_fanin),
            subject: self.subject.or(d.subject),
            params: self.params.unwrap_or(d.params),
            stop_on_interrupt: self.stop_on_interrupt.unwrap_or(d.stop_on_interrupt),
            faults: d.faults,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::RingResource;
    use super::*;

    #[test]
    fn a_later_layer_overrides_only_what_it_sets() {
        let mut file = Settings {
            runtime: Some(RuntimeKind::Hbg),
            clusters: Some(4),
            enable_dep_gen: Some(true),
            ..Default::default()
        };
        file.runtime_env.set("ring_heap", "4096").unwrap();
        file.runtime_env.set("ring_task_window", "64").unwrap();
        let mut cli = Settings {
            clusters: Some(2),
            enable_scope_stats: Some(true),
            ..Default::default()
        };
        cli.runtime_env.set("ring_task_window", "8,16,32,64").unwrap();
        let merged = file.overlaid(&cli);
        assert_eq!(merged.runtime, Some(RuntimeKind::Hbg));
        assert_eq!(merged.clusters, Some(2));
        assert!(merged.any_diagnostic());
        let cfg = merged.into_config();
        assert!(cfg.enable_dep_gen && cfg.enable_scope_stats && !cfg.enable_l2_swimlane);
        let sizes = cfg.runtime_env.resolve_with_env(|_| None).unwrap();
        assert_eq!(sizes.task_window, [8, 16, 32, 64]);
        assert_eq!(sizes.heap, [4096; 4]);
        assert!(cfg.runtime_env.is_set(RingResource::Heap));
        assert!(!cfg.runtime_env.is_set(RingResource::DepPool));
        // Nothing set: the defaults.
        let d = Settings::default().into_config();
        assert_eq!(d.clusters, super::super::DEFAULT_CLUSTERS);
        assert_eq!(d.runtime, RuntimeKind::Tmr);
        assert_eq!(d.dump_args, DumpArgsLevel::Off);
    }

    #[test]
    fn dump_args_layers_and_counts_as_a_diagnostic() {
        let file = Settings {
            dump_args: Some(DumpArgsLevel::Hybrid),
            ..Default::default()
        };
        assert!(file.any_diagnostic());
        let off = Settings {
            dump_args: Some(DumpArgsLevel::Off),
            ..Default::default()
        };
        assert!(!off.any_diagnostic());
        assert_eq!(
            file.clone()
                .overlaid(&Settings::default())
                .into_config()
                .dump_args,
            DumpArgsLevel::Hybrid
        );
        let cfg = file.overlaid(&off).into_config();
        assert_eq!(
            cfg.dump_args,
            DumpArgsLevel::Off,
            "the command line's 0 turns a file's level off"
        );
        assert!(!cfg.any_diagnostic());
        let on = CallConfig {
            dump_args: DumpArgsLevel::Full,
            ..CallConfig::default()
        };
        let e = on.validate().unwrap_err();
        assert_eq!(
            e.to_string(),
            "dump_args needs an output_prefix to write its artifacts"
        );
        assert_eq!("3".parse::<DumpArgsLevel>(), Ok(DumpArgsLevel::Hybrid));
        assert!("9"
            .parse::<DumpArgsLevel>()
            .unwrap_err()
            .contains("is not 0 (off)"));
    }
}
