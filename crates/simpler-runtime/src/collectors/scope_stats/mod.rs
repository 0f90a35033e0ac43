//! Scope stats: a begin and an end sample of the scope's ring at every scope boundary.
//!
//! - `probe` (device side): the orchestrator's producer; fixed-size records, no allocation
//!   per record, one branch when disabled.
//! - `collector` (host side): a thread that drains full buffers during the run and streams
//!   sample lines to a body file on disk.
//! - `export`: the close paths (proven, unproven, background) and the metadata line.
//! - `background`: the worker's background writer, admission and `flush_diagnostics`.
//!
//! Memory bound: [`BUFFERS`] × [`RECORDS_PER_BUFFER`] records in flight plus one 64 KiB write
//! buffer, whatever the run length.

pub(crate) mod background;
pub(crate) mod collector;
pub(crate) mod export;
pub(crate) mod probe;

pub use export::{ScopeStatsOutcome, NAME};

/// Records per buffer.
pub const RECORDS_PER_BUFFER: usize = 512;
/// Buffers in the pool of one run.
pub const BUFFERS: usize = 8;
/// Relative path of the artifact under the output prefix.
pub const ARTIFACT: &str = "scope_stats/scope_stats.jsonl";
/// The artifact's file name (the last component of [`ARTIFACT`]).
pub(crate) const ARTIFACT_NAME: &str = "scope_stats.jsonl";

use std::path::Path;
use std::sync::Arc;

use super::channel::{BufferChannel, CollectorThread};
use super::output::PendingManifest;
use super::{Collector, Finals, Outcomes, Probes, RunFacts, StartCtx};
use background::BackgroundWriter;
use collector::Collected;
use export::{close_run, Capacities};
use probe::{RecordBuffer, ScopeStatsProducer};

/// Starts scope stats when enabled: a producer and a collector thread, on both runtimes (`hbg`
/// samples the growth of its graph build, all on ring 0, at the same scope boundaries). A
/// background-mode run that cannot be admitted is refused.
pub(crate) fn start<'a>(
    ctx: &StartCtx<'a>,
    probes: &mut Probes,
) -> Result<Option<Box<dyn Collector + 'a>>, crate::collectors::DiagnosticsError> {
    let cfg = ctx.cfg;
    if !cfg.enable_scope_stats {
        return Ok(None);
    }
    let caps = Capacities {
        task_window: ctx.sizes.task_window.map(u64::from),
        heap: ctx.sizes.heap,
        dep_pool: ctx.sizes.dep_pool.map(u64::from),
        tensormap: cfg.tensormap_capacity as u64,
    };
    if let Some(bg) = ctx.background {
        bg.admit()?;
    }
    let f = &cfg.faults;
    let buffers = (0..BUFFERS).map(|_| Box::new(RecordBuffer::new())).collect();
    let channel = Arc::new(BufferChannel::new(buffers, f.into()));
    probes.scope_stats = Some(ScopeStatsProducer::new(
        channel.clone(),
        ctx.run_epoch,
        ctx.buf_seq.clone(),
        f.saturate_counters,
        ctx.wait,
    ));
    let dir = ctx
        .prefix
        .join(ARTIFACT)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    Ok(Some(Box::new(ScopeStats {
        thread: collector::spawn(channel, dir, ctx.run_epoch, f.host_storage_limit),
        caps,
        background: ctx.background,
        pending: ctx.background.and(ctx.manifest.clone()),
        run_epoch: ctx.run_epoch,
    })))
}

/// `tmr` scope stats between start and close.
struct ScopeStats<'a> {
    thread: CollectorThread<RecordBuffer, Collected>,
    caps: Capacities,
    background: Option<&'a BackgroundWriter>,
    /// In background mode: the run's folder and manifest, which the publication keeps claimed
    /// and records its outcome in.
    pending: Option<PendingManifest>,
    run_epoch: u64,
}

impl Collector for ScopeStats<'_> {
    fn close(self: Box<Self>, prefix: &Path, run: &RunFacts, finals: &mut Finals, out: &mut Outcomes) {
        let ScopeStats {
            thread,
            caps,
            background,
            pending,
            run_epoch,
        } = *self;
        let mut collected = thread.stop();
        collected.relocate(|p| run.now_at(p));
        let fin = finals.scope_stats.take();
        let o = close_run(
            prefix,
            &caps,
            collected,
            fin,
            run.fatal,
            background.map(|bg| (bg, pending)),
            run_epoch,
        );
        out.entries.push(o.manifest_entry(prefix));
        out.scope_stats = Some(o);
    }
}
