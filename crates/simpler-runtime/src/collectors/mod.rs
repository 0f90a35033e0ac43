//! Diagnostics collectors: device-side producers hand fixed-size buffers to host collectors
//! through bounded queues (`channel`); host code streams them to disk.
//!
//! - [`scope_stats`]: per-scope resource samples → `scope_stats/scope_stats.jsonl`.
//! - [`dep_gen`]: every submit captured and replayed → `deps.json`.
//! - [`swimlane`]: per-task timing → `l2_swimlane_records.json`.
//! - [`args_dump`]: task arguments' data → `args_dump/args_dump.json` + `args.bin`.
//! - `name_map`: kernel names → `name_map.json`.
//!
//! Every collector implements `Collector`: its `start` function (listed in `REGISTRY`)
//! returns `None` when the configuration does not enable it, or starts its host side and puts
//! its producers into the run's `Probes`; after the run, `close` turns what the host holds
//! (and, with producer-stop proof, the producers' `Finals`) into files and a manifest entry.
//! `session` runs the registry; `output` owns the output folder and the run manifest.

pub mod args_dump;
pub(crate) mod channel;
pub mod dep_gen;
mod error;
pub(crate) mod name_map;
pub(crate) mod output;
pub mod scope_stats;
pub(crate) mod session;
pub mod swimlane;

pub use crate::config::Faults;
pub use error::{DiagnosticsError, DiagnosticsErrorKind};

use crate::sync::AtomicU32;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use simpler_artifacts::manifest::{DiagnosticEntry, FileEntry};

use crate::config::{CallConfig, RingSizes};
use crate::platform::kernel::KernelRegistry;
use dep_gen::capture::{CaptureFinal, DepGenCapture};
use dep_gen::graph::GraphWriter;
use scope_stats::background::BackgroundWriter;
use scope_stats::probe::{ProducerFinal, ScopeStatsProducer};
use swimlane::SwimlaneShared;

/// The device-side producers of a run's enabled collectors, handed to the run threads.
#[derive(Default)]
pub(crate) struct Probes {
    /// The orchestrator's scope-stats producer.
    pub scope_stats: Option<ScopeStatsProducer>,
    /// The orchestrator's dep_gen capture (`tmr`).
    pub dep_gen: Option<DepGenCapture>,
    /// The orchestrator's direct graph writer (`hbg`).
    pub dep_graph: Option<GraphWriter>,
    /// What every run thread needs to record timing.
    pub swimlane: Option<SwimlaneShared>,
    /// What every scheduler thread needs to capture arguments.
    pub args_dump: Option<args_dump::ArgsDumpShared>,
}

/// What the producers leave behind; only present with producer-stop proof.
#[derive(Default)]
pub(crate) struct Finals {
    pub scope_stats: Option<ProducerFinal>,
    pub dep_gen: Option<CaptureFinal>,
    pub dep_graph: Option<GraphWriter>,
}

/// What a collector's `start` may look at.
pub(crate) struct StartCtx<'a> {
    pub cfg: &'a CallConfig,
    pub sizes: &'a RingSizes,
    /// The output folder.
    pub prefix: &'a Path,
    pub run_epoch: u64,
    /// The scope-stats producer's persistent buffer rotation counter.
    pub buf_seq: &'a Arc<AtomicU32>,
    /// The worker's background writer, in background mode.
    pub background: Option<&'a BackgroundWriter>,
    /// A hold on the run's claimed output folder and manifest, for a background publication.
    pub manifest: Option<output::PendingManifest>,
    pub kernels: &'a KernelRegistry,
    /// A producer's back-pressure wait for a buffer.
    pub wait: Duration,
}

/// What a collector's `close` may look at about the finished run.
pub(crate) struct RunFacts {
    /// Every run thread was joined (producer-stop proof).
    pub proven: bool,
    /// The run stopped on a fatal.
    pub fatal: bool,
    pub clusters: usize,
    pub scheduler_threads: usize,
    /// When an `hbg` run built and launched its graph.
    pub build: Option<crate::run::BuildTimeline>,
    /// Where the run's folder went, when it was moved while the run went on.
    pub moved: Option<Moved>,
}

impl RunFacts {
    /// Where a file a collector made under the run's folder before its close is now: under the
    /// folder's new path when it was moved while the run went on ([`Moved`]).
    pub fn now_at(&self, path: &Path) -> PathBuf {
        match &self.moved {
            Some(m) => m.at(path),
            None => path.to_path_buf(),
        }
    }
}

/// Makes `dir`, a subfolder of the run's folder, unless it is there. The run's folder itself
/// is not made again: it exists from the claim on, and one that is missing was moved or removed
/// while the run went on (found by a review: a file made after the move made the folder again
/// at its old name, and the run's files were split between the two).
pub(crate) fn make_subfolder(dir: &Path) -> std::io::Result<()> {
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        made => made,
    }
}

/// A run's folder moved while the run went on ([`output::RunOutput::follow_move`]): the files
/// the collectors made under `from` (the prefix they started with) are now under `to`, and
/// what they write at close goes there too.
#[derive(Clone, Debug)]
pub(crate) struct Moved {
    pub from: PathBuf,
    pub to: PathBuf,
}

impl Moved {
    /// `path` (under `from`) where it is now; a path not under `from`, as it is.
    pub fn at(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.from) {
            Ok(rel) => self.to.join(rel),
            Err(_) => path.to_path_buf(),
        }
    }
}

/// The typed outcomes of a run's collectors (for the `RunReport`) and their manifest entries.
#[derive(Default)]
pub(crate) struct Outcomes {
    pub scope_stats: Option<scope_stats::ScopeStatsOutcome>,
    pub dep_gen: Option<dep_gen::DepGenOutcome>,
    pub swimlane: Option<swimlane::SwimlaneOutcome>,
    pub args_dump: Option<args_dump::ArgsDumpOutcome>,
    /// One per enabled collector, in registry order.
    pub entries: Vec<DiagnosticEntry>,
}

/// The host side of one diagnostic between start and close.
pub(crate) trait Collector: Send {
    /// Closes after the run: writes (or withholds) the files, records the outcome.
    fn close(self: Box<Self>, prefix: &Path, run: &RunFacts, finals: &mut Finals, out: &mut Outcomes);
}

/// Starts one collector if `ctx` enables it; an `Err` refuses the run before it starts.
pub(crate) type StartFn =
    for<'a> fn(
        &StartCtx<'a>,
        &mut Probes,
    ) -> Result<Option<Box<dyn Collector + 'a>>, crate::collectors::DiagnosticsError>;

/// Every collector, in the order they start and close. Adding a collector: its own folder
/// with a `start` function and a [`Collector`] implementation, one line here, its flag. A
/// collector whose start can refuse the run comes before any that starts a thread.
pub(crate) const REGISTRY: &[StartFn] = &[
    scope_stats::start,
    dep_gen::start,
    swimlane::start,
    args_dump::start,
    name_map::start,
];

/// A collector's manifest entry: `written` is the file it left (path and size), `partial` says
/// that file lacks records, `write_failed` that writing failed (else a missing file was
/// withheld); `reason` explains anything but a complete file.
pub(crate) fn manifest_entry(
    name: &str,
    folder: &Path,
    written: Option<(&Path, u64)>,
    partial: bool,
    write_failed: bool,
    reason: Option<String>,
) -> DiagnosticEntry {
    use simpler_artifacts::manifest::Outcome;
    let outcome = match written {
        Some(_) if partial => Outcome::Partial,
        Some(_) => Outcome::Written,
        None if write_failed => Outcome::Failed,
        None => Outcome::Withheld,
    };
    DiagnosticEntry {
        name: name.into(),
        outcome,
        reason,
        files: written
            .map(|(p, bytes)| file_entry(folder, p, bytes))
            .into_iter()
            .collect(),
    }
}

/// The manifest entry of a file a collector wrote under `folder`.
pub(crate) fn file_entry(folder: &Path, path: &Path, bytes: u64) -> FileEntry {
    FileEntry {
        name: simpler_artifacts::manifest::relative_name(folder, path),
        bytes,
    }
}
