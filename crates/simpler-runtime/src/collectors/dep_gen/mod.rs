//! dep_gen: the complete, tensor-annotated dependency graph of a run, as `deps.json`.
//!
//! - `tmr`: `capture` writes one record chain per submit (before any lookup) into fixed-size
//!   buffers; the host `replay` re-runs them twice through the runtime's own dependency
//!   function (an oracle pass and an annotated pass, each with its own tensor map), `graph`
//!   streams `deps.json`, and every record's producers in `edges[]` are checked against the
//!   oracle's producer set.
//! - `hbg`: the orchestrator's own dependency calls feed `graph` directly (no records).
//!
//! `deps.json` is written only for a clean trace: nothing dropped, nothing left unflushed,
//! `collected + dropped == total + total_overflow`, and both replay passes agreeing on every
//! record's producers. Otherwise the run says why, with the counts, and no `deps.json` is left
//! behind.

pub(crate) mod capture;
pub(crate) mod graph;
mod prefault;
pub(crate) mod record;
pub(crate) mod replay;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use simpler_artifacts::manifest::DiagnosticEntry;

pub use graph::GraphCounts;
pub use record::{slots_for, INLINE_DEPS, OVERFLOW_DEPS, SLOTS_PER_BUFFER};

use super::channel::{BufferChannel, CollectorThread};
use super::{Collector, Finals, Outcomes, Probes, RunFacts, StartCtx};
use crate::config::RuntimeKind;
use capture::CaptureFinal;
use graph::GraphWriter;
use replay::Replay;

/// Writes one edge core's dependency function reported, annotated with its source and
/// geometry: the one mapping from [`simpler_core::Edge`] to `edges[]`, for the replay and hbg.
pub(crate) fn annotate(graph: &mut GraphWriter, e: &simpler_core::Edge<'_>) {
    use simpler_core::EdgeSource;
    match (e.source, e.arg, e.consumer_view, e.producer_view) {
        (EdgeSource::Explicit, ..) => graph.explicit(e.producer, e.flags),
        (EdgeSource::Creator, Some(arg), Some(c), _) => graph.creator(e.producer, arg, c),
        (EdgeSource::TensorMap, Some(arg), Some(c), Some(p)) => graph.tensormap(e.producer, arg, c, p),
        _ => {}
    }
}

/// File name of the artifact under the output prefix.
pub const ARTIFACT: &str = "deps.json";

/// What became of a run's dep_gen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepGenOutcome {
    /// The written `deps.json`, if the trace was clean.
    pub path: Option<PathBuf>,
    /// Entries written.
    pub counts: Option<GraphCounts>,
    /// Submits captured (tmr).
    pub total: u64,
    /// Extra chain slots captured (tmr).
    pub total_overflow: u64,
    /// Slots lost (tmr).
    pub dropped: u64,
    /// Slots the host received (tmr).
    pub collected: u64,
    /// Explicit deps cut because one chain exceeded a whole buffer.
    pub truncated_deps: u64,
    /// Why no deps.json was written, or what was lost.
    pub problem: Option<String>,
    /// Replay time (tmr) and the final deps.json write time, in nanoseconds.
    pub replay_ns: u64,
    /// Time from the run's end to deps.json in place: the tensors and edges appended after the
    /// tasks, the fsync and the rename.
    pub write_ns: u64,
    /// Size of deps.json in bytes.
    pub bytes: u64,
    /// True when writing deps.json failed (as opposed to it being withheld for an unclean trace).
    pub write_failed: bool,
}

/// The diagnostic's name in the run manifest.
pub const NAME: &str = "dep_gen";

impl DepGenOutcome {
    /// This outcome as a manifest entry.
    pub fn manifest_entry(&self, folder: &Path) -> DiagnosticEntry {
        let written = self.path.as_deref().map(|p| (p, self.bytes));
        super::manifest_entry(
            NAME,
            folder,
            written,
            false,
            self.write_failed,
            self.problem.clone(),
        )
    }
}

fn remove_stale(dest: &Path) -> String {
    match std::fs::remove_file(dest) {
        Ok(()) => format!("; removed the stale {}", dest.display()),
        Err(_) => String::new(),
    }
}

/// Closes `tmr` dep_gen: checks the trace, then writes or withholds deps.json.
pub(crate) fn close_tmr(prefix: &Path, replay: Replay, fin: Option<CaptureFinal>) -> DepGenOutcome {
    let dest = prefix.join(ARTIFACT);
    let mut out = DepGenOutcome {
        collected: replay.collected,
        replay_ns: replay.busy.as_nanos() as u64,
        ..Default::default()
    };
    let mut problems = Vec::new();
    match &fin {
        None => problems
            .push("the run ended without producer-stop proof, so the trace cannot be checked".to_string()),
        Some(f) => {
            out.total = f.total;
            out.total_overflow = f.total_overflow;
            out.dropped = f.dropped;
            out.truncated_deps = f.truncated_deps;
            if f.dropped > 0 {
                problems.push(format!("{} record slots were dropped", f.dropped));
            }
            if f.leftover > 0 {
                problems.push(format!(
                    "the last buffer was never flushed ({} slots left on the device)",
                    f.leftover
                ));
            }
            if replay.collected + f.dropped != f.total + f.total_overflow {
                problems.push(format!(
                    "collected {} + dropped {} != total {} + overflow {}",
                    replay.collected, f.dropped, f.total, f.total_overflow
                ));
            }
            if let Some(t) = &f.truncation {
                problems.push(format!(
                    "chain truncated: {t} ({} deps lost in all)",
                    f.truncated_deps
                ));
            }
        }
    }
    if let Some(p) = &replay.problem {
        problems.push(p.clone());
    }
    let graph = replay.graph;
    if problems.is_empty() {
        if let Some(g) = graph {
            let t0 = std::time::Instant::now();
            match g.finish() {
                Ok((c, bytes)) => {
                    out.write_ns = t0.elapsed().as_nanos() as u64;
                    out.bytes = bytes;
                    out.path = Some(dest);
                    out.counts = Some(c);
                }
                Err(e) => {
                    out.write_failed = true;
                    out.problem = Some(format!("no deps.json: {e}"));
                }
            }
            return out;
        }
    } else if let Some(g) = graph {
        g.abort();
    }
    let mut msg = format!("no deps.json: {}", problems.join("; "));
    msg.push_str(&remove_stale(&dest));
    out.problem = Some(msg);
    out.write_failed = replay.create_failed;
    out
}

/// Closes `hbg` dep_gen: the graph was captured as it was built (also after a fatal: it then
/// shows every task submitted before the run stopped).
pub(crate) fn close_hbg(prefix: &Path, graph: Option<GraphWriter>) -> DepGenOutcome {
    let dest = prefix.join(ARTIFACT);
    let mut out = DepGenOutcome::default();
    match graph {
        Some(g) => match g.finish() {
            Ok((c, bytes)) => {
                out.total = c.tasks;
                out.bytes = bytes;
                out.path = Some(dest);
                out.counts = Some(c);
            }
            Err(e) => {
                out.write_failed = true;
                out.problem = Some(format!("no deps.json: {e}{}", remove_stale(&dest)))
            }
        },
        None => {
            out.write_failed = true;
            out.problem = Some(format!(
                "no deps.json: the graph files could not be created{}",
                remove_stale(&dest)
            ))
        }
    }
    out
}

/// Starts dep_gen when enabled: `tmr` gets a capture and a replay thread; `hbg` a graph writer
/// the orchestrator feeds directly.
pub(crate) fn start<'a>(
    ctx: &StartCtx<'a>,
    probes: &mut Probes,
) -> Result<Option<Box<dyn Collector + 'a>>, crate::collectors::DiagnosticsError> {
    let cfg = ctx.cfg;
    if !cfg.enable_dep_gen {
        return Ok(None);
    }
    let tag = ctx.run_epoch.to_string();
    let f = &cfg.faults;
    Ok(Some(match cfg.runtime {
        RuntimeKind::Tmr => {
            let per = f.dep_gen_slots_per_buffer.unwrap_or(SLOTS_PER_BUFFER).max(1);
            let buffers = (0..record::BUFFERS)
                .map(|_| Box::new(record::SlotBuffer::new(per)))
                .collect();
            let channel = Arc::new(BufferChannel::new(buffers, f.into()));
            probes.dep_gen = Some(capture::DepGenCapture::new(channel.clone(), ctx.wait));
            let mut replay = Replay::new(ctx.prefix, &tag, f.corrupt_dep_gen_annotation);
            replay.skip = f.skip_dep_gen_replay;
            Box::new(TmrDepGen {
                thread: replay::spawn(channel, replay),
            })
        }
        RuntimeKind::Hbg => {
            probes.dep_graph = GraphWriter::create(ctx.prefix, &tag, false).ok();
            Box::new(HbgDepGen {
                created: probes.dep_graph.is_some(),
                tag,
            })
        }
    }))
}

/// `tmr` dep_gen between start and close.
struct TmrDepGen {
    thread: CollectorThread<record::SlotBuffer, Replay>,
}

impl Collector for TmrDepGen {
    fn close(self: Box<Self>, prefix: &Path, run: &RunFacts, finals: &mut Finals, out: &mut Outcomes) {
        let mut replay = self.thread.stop();
        if let Some(g) = replay.graph.as_mut() {
            g.relocate(run.moved.clone());
        }
        let o = close_tmr(prefix, replay, finals.dep_gen.take());
        out.entries.push(o.manifest_entry(prefix));
        out.dep_gen = Some(o);
    }
}

/// `hbg` dep_gen: the graph writer lives in the orchestrator until the run ends.
struct HbgDepGen {
    created: bool,
    tag: String,
}

impl Collector for HbgDepGen {
    fn close(self: Box<Self>, prefix: &Path, run: &RunFacts, finals: &mut Finals, out: &mut Outcomes) {
        let mut graph = finals.dep_graph.take();
        if let Some(g) = graph.as_mut() {
            g.relocate(run.moved.clone());
        }
        if graph.is_none() && self.created {
            // The writer was never handed back (an unproven stop): its parts are not read.
            graph::GraphWriter::remove_parts(prefix, &self.tag);
        }
        let o = if self.created && !run.proven && graph.is_none() {
            let dest = prefix.join(ARTIFACT);
            DepGenOutcome {
                problem: Some(format!(
                    "no deps.json: the run ended without producer-stop proof{}",
                    remove_stale(&dest)
                )),
                ..Default::default()
            }
        } else {
            close_hbg(prefix, graph)
        };
        out.entries.push(o.manifest_entry(prefix));
        out.dep_gen = Some(o);
    }
}

/// Measures the replay alone (no run; the graph's writer thread beside it): `records`
/// synthetic submits of 4-argument tasks (two INPUT one-element slices of two buffers no task
/// writes, and two OUTPUT_EXISTING one-element slices of two other buffers, over 4096
/// positions: no edges, one `tasks[]` entry per record, and two tensor-map writes per record
/// that are never superseded) replayed into a deps.json under `dir`. Returns the replay time
/// (both passes, the check, the encoding and any wait for the writer thread) and the finish
/// time (from the last record to deps.json in place). For `simpler bench` and `cargo bench`.
#[doc(hidden)]
pub fn bench_replay(
    records: usize,
    dir: &Path,
) -> std::io::Result<(std::time::Duration, std::time::Duration)> {
    use simpler_core::{DType, TaskArgs, TaskId, Tensor};

    use crate::platform::MixedKernels;

    let bufs: Vec<_> = (0..2)
        .map(|_| Box::new(record::SlotBuffer::new(record::SLOTS_PER_BUFFER)))
        .collect();
    let channel = std::sync::Arc::new(crate::collectors::channel::BufferChannel::new(
        bufs,
        Default::default(),
    ));
    let mut capture = capture::DepGenCapture::new(channel.clone(), std::time::Duration::from_secs(1));
    let t: Vec<Tensor> = (0..4u64)
        .map(|i| {
            Tensor::contiguous(
                (1 << 32) + (i << 20),
                4096 * 4,
                &[4096],
                DType::Float32,
                TaskId::INVALID,
            )
        })
        .collect::<Result<_, _>>()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut replay = Replay::new(dir, "bench", false);
    let mut busy = std::time::Duration::ZERO;
    for n in 0..records {
        let s = (n % 4096) as u32;
        let view = |k: usize| t[k].view(&[1], &[s]).expect("in bounds");
        let mut a = TaskArgs::new();
        a.input(view(0))
            .input(view(1))
            .output_existing(view(2))
            .output_existing(view(3));
        capture.record(TaskId::new(1, n as u32), false, MixedKernels::aiv(0), &a);
        if (n + 1) % record::SLOTS_PER_BUFFER == 0 || n + 1 == records {
            capture.flush();
            let buf = channel.take().expect("just published");
            let t0 = std::time::Instant::now();
            replay.consume(&buf);
            busy += t0.elapsed();
            channel.recycle(buf);
        }
    }
    let t0 = std::time::Instant::now();
    match replay.graph {
        Some(g) => g.finish().map_err(|e| e.source)?,
        None => return Err(std::io::Error::other("graph files could not be created")),
    };
    Ok((busy, t0.elapsed()))
}
