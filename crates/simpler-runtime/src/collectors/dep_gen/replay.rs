//! The host replay (`tmr`): every captured submit runs twice through the runtime's own
//! dependency function ([`compute_fanin`]), each pass against its own tensor map that never
//! retires anything (the spec's dual-pass replay; the project's decisions: deps.json is
//! written only when both passes agree).
//!
//! - The **oracle pass** collects the producer set (a [`FaninSet`]: one entry per producer).
//! - The **annotated pass** writes every edge core reports to the graph, with its source,
//!   argument and both views.
//!
//! After each record the replay compares the oracle's producers with the producers that got
//! at least one edge into the task in `edges[]`, as the graph writer wrote them: they must be
//! the same set. The first disagreement stops the graph (no deps.json is written). The
//! dependency rule itself lives in `simpler-core` only ([`ArgTag::rule`]), so the gate checks
//! the replay's own plumbing: the capture decoding, the two maps' histories, and the
//! annotation (the graph writer's per-task de-duplication of explicit and creator edges, and
//! the mapping from [`Edge`] to `edges[]`), which must lose no producer and invent none.
//!
//! The comparison is of producers, not flags: `edges[]` writes each edge's own flags, and a
//! creator edge is skipped when the producer already has an edge, so the flags written for a
//! producer need not be the oracle's OR. (Until issue 15 the annotated pass filled a second
//! `FaninSet` in its sink, before the edge reached the graph writer, so a dropped edge went
//! unseen.)
//!
//! The replay streams: it consumes buffers as the collector receives them and keeps only the
//! two maps, the set of distinct tensors and the current record.
//!
//! [`ArgTag::rule`]: simpler_core::ArgTag::rule

use std::path::Path;
use std::sync::Arc;

use simpler_core::{
    compute_fanin, register_outputs, DepKind, Edge, FaninSet, FaninSink, TaskId, TensorMap, TensorMapConfig,
};

use super::graph::GraphWriter;
use super::prefault::MapPrefault;
use super::record::{
    DepGenSlot, SlotBuffer, FLAG_EARLY_DISPATCH, FLAG_HAS_OVERFLOW, FLAG_LAST_OVERFLOW, FLAG_MANUAL,
    FLAG_OVERFLOW,
};
use crate::collectors::channel::{BufferChannel, CollectorThread};

/// Replay state; see the module docs.
pub(crate) struct Replay {
    /// The oracle pass's map.
    oracle_map: TensorMap,
    /// The annotated pass's map.
    annot_map: TensorMap,
    pub graph: Option<GraphWriter>,
    oracle: FaninSet,
    deps: Vec<(TaskId, DepKind)>,
    /// The oracle's producers and the graph's, sorted for the comparison (reused per record).
    want: Vec<TaskId>,
    got: Vec<TaskId>,
    /// Slots received (base and overflow).
    pub collected: u64,
    /// Submits replayed.
    pub records: u64,
    /// The first oracle/annotation disagreement (or structural problem).
    pub problem: Option<String>,
    /// The graph files could not be created (`problem` says why): the graph is then not
    /// withheld for a bad trace, its writing failed.
    pub create_failed: bool,
    corrupt: bool,
    /// Count slots only (see `Faults::skip_dep_gen_replay`).
    pub skip: bool,
    /// Time spent replaying (both passes, the check and the graph writes), for throughput
    /// figures.
    pub busy: std::time::Duration,
    /// The thread that faults in the two maps' memory ahead of their writes (`prefault.rs`);
    /// `None` if it could not be started.
    prefault: Option<MapPrefault>,
}

impl Replay {
    /// A replay writing its graph parts into `dir`.
    pub fn new(dir: &Path, tag: &str, corrupt: bool) -> Replay {
        let (graph, problem) = match GraphWriter::create(dir, tag, true) {
            Ok(g) => (Some(g), None),
            Err(e) => (
                None,
                Some(format!("cannot create the graph files in {}: {e}", dir.display())),
            ),
        };
        Replay {
            oracle_map: TensorMap::new(replay_map()),
            annot_map: TensorMap::new(replay_map()),
            graph,
            oracle: FaninSet::new(),
            deps: Vec::new(),
            want: Vec::new(),
            got: Vec::new(),
            collected: 0,
            records: 0,
            create_failed: problem.is_some(),
            problem,
            corrupt,
            skip: false,
            busy: std::time::Duration::ZERO,
            prefault: MapPrefault::spawn(),
        }
    }

    /// Replays every record chain of a buffer.
    pub fn consume(&mut self, buf: &SlotBuffer) {
        if self.skip {
            self.collected += buf.count as u64;
            self.problem
                .get_or_insert_with(|| "the replay was skipped (measurement mode)".into());
            return;
        }
        // Where the maps write next, once a buffer: the prefault thread's megabyte ahead of
        // each covers thousands of records, a buffer a few hundred.
        if let Some(p) = &self.prefault {
            let [a, b] = self.oracle_map.unwritten_storage();
            let [c, d] = self.annot_map.unwritten_storage();
            p.publish([a, b, c, d]);
        }
        let mut i = 0;
        while i < buf.count {
            let base = &buf.slots[i];
            self.collected += 1;
            i += 1;
            // The next records' lines, which the orchestrator's core wrote (see
            // `DepGenSlot::prefetch_record`).
            let ahead = &buf.slots[i.min(buf.count)..buf.count];
            if let Some(next) = ahead.first() {
                next.prefetch_record();
            }
            if let Some(after) = ahead.get(1) {
                after.prefetch_header();
            }
            if base.flags & FLAG_OVERFLOW != 0 {
                self.problem
                    .get_or_insert_with(|| format!("an overflow slot of task {} has no base", base.task_id));
                continue;
            }
            self.deps.clear();
            self.deps.extend(base.deps());
            if base.flags & FLAG_HAS_OVERFLOW != 0 {
                let mut ended = false;
                while i < buf.count
                    && buf.slots[i].flags & FLAG_OVERFLOW != 0
                    && buf.slots[i].task_id == base.task_id
                {
                    let s = &buf.slots[i];
                    self.deps.extend(s.deps());
                    self.collected += 1;
                    i += 1;
                    if s.flags & FLAG_LAST_OVERFLOW != 0 {
                        ended = true;
                        break;
                    }
                }
                if !ended {
                    self.problem.get_or_insert_with(|| {
                        format!("the dep chain of task {} is incomplete", base.task_id)
                    });
                }
            }
            self.replay_one(base);
        }
    }

    fn replay_one(&mut self, rec: &DepGenSlot) {
        self.records += 1;
        if self.problem.is_some() {
            return;
        }
        let id = rec.task_id;
        let manual = rec.flags & FLAG_MANUAL != 0;
        let args = rec.args();
        let Replay {
            oracle_map,
            annot_map,
            graph,
            oracle,
            deps,
            ..
        } = self;
        let Some(graph) = graph.as_mut() else { return };
        graph.begin_task(
            id,
            manual,
            rec.flags & FLAG_EARLY_DISPATCH != 0,
            rec.kernel_ids,
            rec.block_num,
            args,
        );

        // Oracle pass: the producer set.
        oracle.clear();
        if let Err(e) = compute_fanin(id, manual, args, deps.iter().copied(), oracle_map, oracle) {
            self.problem = Some(format!("task {id}: {}", e));
            return;
        }
        // Annotated pass: every edge to the graph, against the second map.
        let mut sink = Annotator { graph };
        if let Err(e) = compute_fanin(id, manual, args, deps.iter().copied(), annot_map, &mut sink) {
            self.problem = Some(format!("task {id} (annotated pass): {}", e));
            return;
        }

        // The check: the producers `edges[]` got for this task are the oracle's.
        let (want, got) = (&mut self.want, &mut self.got);
        want.clear();
        want.extend(oracle.edges().iter().map(|&(p, _)| p));
        got.clear();
        got.extend_from_slice(graph.producers());
        if self.corrupt && !got.is_empty() {
            got.pop();
            self.corrupt = false;
        }
        if want.len() > 1 {
            want.sort_unstable();
            got.sort_unstable();
        }
        if want != got {
            self.problem = Some(format!(
                "oracle and annotated graph disagree on task {id}: oracle {:?}, producers in edges[] {:?}",
                oracle
                    .edges()
                    .iter()
                    .map(|(p, f)| (p.to_string(), f.names()))
                    .collect::<Vec<_>>(),
                got.iter().map(|p| p.to_string()).collect::<Vec<_>>()
            ));
            return;
        }
        let _ = register_outputs(id, manual, args, oracle_map);
        let _ = register_outputs(id, manual, args, annot_map);
    }
}

/// The configuration of each pass's map: it never retires (every writer of the run stays),
/// so it keeps an entry per registered output of the whole trace, and packs their views as a
/// host-built graph's map does (12 bytes a view instead of 80): the pages its growth touched
/// for the first time were a quarter of the live replay's time (`docs/performance.md`).
fn replay_map() -> TensorMapConfig {
    TensorMapConfig {
        packed_views: true,
        ..TensorMapConfig::unbounded()
    }
}

/// The annotated pass's sink: every edge goes to the graph.
struct Annotator<'a> {
    graph: &'a mut GraphWriter,
}

impl FaninSink for Annotator<'_> {
    type Error = std::convert::Infallible;
    fn edge(&mut self, e: &Edge<'_>) -> Result<(), Self::Error> {
        super::annotate(self.graph, e);
        Ok(())
    }
}

/// The host collector thread of `tmr` dep_gen: receives buffers and replays them at once.
pub(crate) fn spawn(
    channel: Arc<BufferChannel<SlotBuffer>>,
    replay: Replay,
) -> CollectorThread<SlotBuffer, Replay> {
    CollectorThread::spawn(
        "simpler-dep-gen",
        channel,
        move || replay,
        |replay, buf| {
            let t0 = std::time::Instant::now();
            replay.consume(buf);
            replay.busy += t0.elapsed();
        },
    )
}
