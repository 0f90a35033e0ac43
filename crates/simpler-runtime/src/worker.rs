//! The `Worker`: kernels, external device memory, and runs.

use crate::sync::{AtomicU32, AtomicU64, Ordering};
use std::panic::Location;
use std::sync::Arc;
use std::time::Duration;

use simpler_artifacts::manifest::Outcome;
use simpler_artifacts::output_folder::Whereabouts;
use simpler_core::{DType, Tensor, MAX_RINGS};

use crate::collectors::output::RunOutput;
use crate::collectors::scope_stats::background::BackgroundWriter;
use crate::collectors::scope_stats::probe::BACKPRESSURE_WAIT;
use crate::collectors::session::Session;
use crate::collectors::{DiagnosticsError, RunFacts, StartCtx};
use crate::config::{CallConfig, RuntimeKind};
use crate::memory::{
    load_as_f64, read_view_bytes, store_from_f64, view_offsets, write_view_bytes, Element, ExternalMemory,
    HeapMemory, MemoryError, RunMemory,
};
use crate::orchestrator::{OrchResult, Orchestrator, Site};
use crate::platform::kernel::{KernelCtx, KernelError, KernelRegistry};
use crate::platform::{CoreType, Platform};
use crate::run::{execute, RunError, RunReport};
use crate::shared::RunShared;

/// Owns the registered kernels and the external device buffers; runs orchestrations.
#[derive(Default)]
pub struct Worker {
    kernels: KernelRegistry,
    external: Arc<ExternalMemory>,
    /// Identifies each run in diagnostics (`run_epoch`), starting at 1.
    run_epoch: AtomicU64,
    /// The scope-stats producer's persistent buffer rotation counter (`buf_seq`).
    buf_seq: Arc<AtomicU32>,
    /// Present in background mode (`collect_across_runs`).
    background: Option<BackgroundWriter>,
    collect_across_runs_on: bool,
}

/// How long `flush_diagnostics` waits for the background writer.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(120);

impl Worker {
    /// A worker with no kernels and no buffers.
    pub fn new() -> Worker {
        Worker::default()
    }

    /// Registers a kernel under `func_id`.
    pub fn register_kernel(
        &mut self,
        func_id: u32,
        name: &str,
        core_type: CoreType,
        body: impl Fn(&KernelCtx<'_>) -> Result<(), KernelError> + Send + Sync + 'static,
    ) -> Result<(), KernelError> {
        self.kernels.register(func_id, name, core_type, body)
    }

    /// Background mode for diagnostics: `run()` hands rendering and writing to a background
    /// writer and may return before the files exist; [`Worker::flush_diagnostics`] is the
    /// barrier. Turning it off keeps the writer (and its sticky errors) alive.
    pub fn set_collect_across_runs(&mut self, on: bool) {
        if on && self.background.is_none() {
            self.background = Some(BackgroundWriter::new());
        }
        self.collect_across_runs_on = on;
    }

    /// Publishes every background export so far; fails, for the worker's life, once any run's
    /// scope stats were lost, fatal, of unknown counts, unwritable or unproven.
    pub fn flush_diagnostics(&self) -> Result<(), DiagnosticsError> {
        match &self.background {
            Some(bg) => bg.flush(FLUSH_TIMEOUT),
            None => Ok(()),
        }
    }

    #[doc(hidden)]
    /// Test-only: hold (or release) the background writer.
    pub fn hold_background_writer(&self, hold: bool) {
        if let Some(bg) = &self.background {
            bg.set_hold(hold);
        }
    }

    /// The registered kernels.
    pub fn kernels(&self) -> &KernelRegistry {
        &self.kernels
    }

    /// Allocates a zeroed external tensor.
    pub fn alloc_tensor(&self, shape: &[u32], dtype: DType) -> Result<Tensor, MemoryError> {
        self.external.alloc(shape, dtype)
    }

    /// Frees an external tensor's buffer.
    pub fn free_tensor(&self, t: &Tensor) -> Result<(), MemoryError> {
        self.external.free(t.addr())
    }

    fn buffer(&self, t: &Tensor) -> Result<Arc<crate::memory::Bytes>, MemoryError> {
        let b = self.external.get(t.addr())?;
        if t.numel() == 0 {
            return Ok(b); // an empty view touches no byte, wherever it starts
        }
        let end = (t.start_offset() + t.extent_elems()) * t.dtype().size();
        if end > b.len() as u64 {
            return Err(MemoryError::OutOfRange {
                addr: t.addr(),
                end,
                size: b.len() as u64,
            });
        }
        Ok(b)
    }

    /// Copies `data` into the elements of view `t` (row-major order).
    pub fn write<T: Element>(&self, t: &Tensor, data: &[T]) -> Result<(), MemoryError> {
        if t.dtype() != T::DTYPE {
            return Err(MemoryError::DTypeMismatch {
                tensor: t.dtype(),
                requested: T::DTYPE,
            });
        }
        if data.len() as u64 != t.numel() {
            return Err(MemoryError::LengthMismatch {
                expected: t.numel(),
                got: data.len() as u64,
            });
        }
        let b = self.buffer(t)?;
        let es = t.dtype().size();
        for (off, &v) in view_offsets(t).zip(data) {
            T::store(b.as_slice(), (off * es) as usize, v);
        }
        Ok(())
    }

    /// Reads the elements of view `t` (row-major order).
    pub fn read<T: Element>(&self, t: &Tensor) -> Result<Vec<T>, MemoryError> {
        if t.dtype() != T::DTYPE {
            return Err(MemoryError::DTypeMismatch {
                tensor: t.dtype(),
                requested: T::DTYPE,
            });
        }
        let b = self.buffer(t)?;
        let es = t.dtype().size();
        Ok(view_offsets(t)
            .map(|off| T::load(b.as_slice(), (off * es) as usize))
            .collect())
    }

    /// Copies raw little-endian element bytes into view `t` (row-major order of the view,
    /// `numel × element size` bytes): for callers that hold typed data as bytes (the Python
    /// binding's NumPy arrays).
    pub fn write_bytes(&self, t: &Tensor, data: &[u8]) -> Result<(), MemoryError> {
        write_view_bytes(self.buffer(t)?.as_slice(), t, data)
    }

    /// Reads the elements of view `t` as raw little-endian bytes (row-major order).
    pub fn read_bytes(&self, t: &Tensor) -> Result<Vec<u8>, MemoryError> {
        Ok(read_view_bytes(self.buffer(t)?.as_slice(), t))
    }

    /// Fills view `t` with values produced by `f(k)` for element `k`, converted to its dtype.
    pub fn fill_with(&self, t: &Tensor, mut f: impl FnMut(u64) -> f64) -> Result<(), MemoryError> {
        let b = self.buffer(t)?;
        let es = t.dtype().size();
        for (k, off) in view_offsets(t).enumerate() {
            store_from_f64(t.dtype(), b.as_slice(), (off * es) as usize, f(k as u64));
        }
        Ok(())
    }

    /// Reads view `t` as f64 values, whatever its dtype.
    pub fn read_f64(&self, t: &Tensor) -> Result<Vec<f64>, MemoryError> {
        let b = self.buffer(t)?;
        let es = t.dtype().size();
        Ok(view_offsets(t)
            .map(|off| load_as_f64(t.dtype(), b.as_slice(), (off * es) as usize))
            .collect())
    }

    /// Runs `orchestration` with `cfg`. The root scope's site is the caller's location.
    #[track_caller]
    pub fn run<F>(&self, cfg: &CallConfig, orchestration: F) -> Result<RunReport, RunError>
    where
        F: FnOnce(&mut Orchestrator) -> OrchResult + Send + 'static,
    {
        self.run_at(cfg, Location::caller(), orchestration)
    }

    /// [`Worker::run`] with an explicit root-scope site (a `Location`, or a [`Site`] named by
    /// a caller in another language).
    pub fn run_at<F>(
        &self,
        cfg: &CallConfig,
        root: impl Into<Site>,
        orchestration: F,
    ) -> Result<RunReport, RunError>
    where
        F: FnOnce(&mut Orchestrator) -> OrchResult + Send + 'static,
    {
        let root = root.into();
        let sizes = cfg.validate()?;
        let heap_sizes = match cfg.runtime {
            RuntimeKind::Tmr => sizes.heap,
            RuntimeKind::Hbg => {
                let mut h = [0; MAX_RINGS];
                h[0] = sizes.heap[0];
                h
            }
        };
        let run_epoch = self.run_epoch.fetch_add(1, Ordering::Relaxed) + 1;
        let background = self.background.as_ref().filter(|_| self.collect_across_runs_on);
        // Before the claim: a refused heap leaves an earlier run's folder as it was.
        let heaps = HeapMemory::try_new(heap_sizes).map_err(|(ring, bytes)| {
            let key = crate::config::RingResource::Heap.key();
            RunError::Config(crate::config::ConfigError::new(
                crate::config::ConfigErrorKind::HostMemory { key },
                format!(
                    "runtime_env {key}: the host refused the {} of ring {ring}'s heap (an address-space \
                     limit such as `ulimit -v`, or the kernel's overcommit rules); lower {key}",
                    simpler_artifacts::host::human_bytes(u128::from(bytes))
                ),
            ))
        })?;
        let prefix = cfg.output_prefix.clone().unwrap_or_default();
        // An interrupt while the caller prepared the run (a large workload or deps.json takes
        // a second to load) stops it here, before the claim removes an earlier run's files.
        if cfg.stop_on_interrupt && simpler_artifacts::interrupt::requested() {
            return Err(RunError::Interrupted);
        }
        let mut output = match cfg.any_diagnostic() {
            true => {
                let subject = cfg.subject.clone().unwrap_or_else(|| root.to_string());
                let claimed = RunOutput::claim(&prefix, cfg, subject, background.is_some());
                Some(claimed.map_err(RunError::OutputFolder)?)
            }
            false => None,
        };
        let memory = RunMemory {
            heaps,
            external: self.external.clone(),
        };
        let platform = Platform {
            clusters: cfg.clusters as u32,
        };
        let threads = cfg.effective_scheduler_threads().min(cfg.clusters).max(1);
        let mut run_shared = RunShared::new(
            cfg.runtime,
            sizes,
            memory,
            self.kernels.clone(),
            platform,
            threads,
        );
        let ctx = StartCtx {
            cfg,
            sizes: &sizes,
            prefix: &prefix,
            run_epoch,
            buf_seq: &self.buf_seq,
            background,
            manifest: output.as_ref().map(RunOutput::pending),
            kernels: &self.kernels,
            wait: cfg.faults.backpressure_wait.unwrap_or(BACKPRESSURE_WAIT),
        };
        let (session, mut probes) = match Session::start(&ctx) {
            Ok(started) => started,
            Err(why) => {
                // Nothing ran: no manifest may claim otherwise.
                if let Some(o) = output {
                    o.abandon();
                }
                return Err(RunError::Refused(why));
            }
        };
        run_shared.swimlane = probes.swimlane.take();
        run_shared.args_dump = probes.args_dump.take();
        run_shared.panic_in_scheduler = cfg.faults.panic_in_scheduler;
        let mut executed = execute(Arc::new(run_shared), cfg, root, Box::new(orchestration), probes);
        // A folder moved while the run went on is followed: what the run writes from here on
        // lands beside what it wrote before, and what it could not write says why.
        let whereabouts = output.as_mut().and_then(RunOutput::follow_move);
        let moved_to = match &whereabouts {
            Some(Whereabouts::Moved(to)) => Some(to.clone()),
            // Nothing more is written or removed: the collectors' paths lead nowhere (a folder
            // that does not exist, which no write makes), not to the old name, which may be
            // another folder's now.
            Some(Whereabouts::Gone) => Some(nowhere()),
            _ => None,
        };
        let facts = RunFacts {
            proven: executed.report.stop_proven,
            fatal: executed.fatal.is_some(),
            clusters: cfg.clusters,
            scheduler_threads: executed.report.scheduler_threads,
            build: executed.build,
            moved: moved_to.clone().map(|to| crate::collectors::Moved {
                from: prefix.clone(),
                to,
            }),
        };
        let mut outcomes = session.close(&facts, &mut executed.finals, moved_to.as_deref());
        if let Some(note) = output.as_ref().and_then(RunOutput::moved) {
            let gone = whereabouts == Some(Whereabouts::Gone);
            for e in &mut outcomes.entries {
                let reason = match (gone, e.outcome) {
                    // Written before the folder was removed: gone with it.
                    (true, Outcome::Written) => "written, then removed with the folder".to_string(),
                    (true, _) => "not written".to_string(),
                    // What failed after a move names it; what was written, partial or withheld
                    // for its own reasons keeps them.
                    (false, Outcome::Failed) => e.reason.take().unwrap_or_default(),
                    (false, _) => continue,
                };
                if gone {
                    e.outcome = Outcome::Failed;
                    e.files.clear();
                }
                e.reason = Some(format!("{reason} ({note})").trim_start().to_string());
            }
        }
        let report = &mut executed.report;
        report.scope_stats = outcomes.scope_stats;
        report.dep_gen = outcomes.dep_gen;
        report.swimlane = outcomes.swimlane;
        report.args_dump = outcomes.args_dump;
        if let Some(o) = output.as_mut() {
            o.finish(executed.fatal.as_ref(), outcomes.entries.clone());
        }
        report.diagnostics = outcomes.entries;
        report.output = output;
        executed.into_result()
    }
}

/// A path under a folder that does not exist: where the collectors of a run whose folder was
/// removed while it went on are told to write, so that every write fails (none makes its
/// folder) and every removal finds nothing.
fn nowhere() -> std::path::PathBuf {
    // Not a model's atomic: a name counter, outside every protocol loom checks.
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir()
        .join(format!(".simpler-removed-folder-{}-{n}", std::process::id()))
        .join("run")
}
