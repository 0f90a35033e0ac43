//! The host replay (`tmr`): every captured submit runs twice through the runtime's own
//! dependency function ([`compute_fanin`]), against two tensor maps that never retire
//! anything: the oracle pass collects the producer set, the annotated pass writes each edge
//! core reports (source, argument, both views) to the graph. The two producer sets (with OR-ed
//! flags) must agree record by record; the first disagreement stops the graph (no deps.json is
//! written). The dependency rule itself lives in `simpler-core` only ([`ArgTag::rule`]), so the
//! gate checks the replay's own plumbing: the capture decoding, the two maps' histories, the
//! annotation sink's de-duplication.
//!
//! The replay streams: it consumes buffers as the collector receives them and keeps only the
//! two maps, the set of distinct tensors and the current record.
//!
//! [`ArgTag::rule`]: simpler_core::ArgTag::rule

use std::path::Path;
use std::sync::Arc;

use simpler_core::{
    compute_fanin, register_outputs, DType, DepFlags, DepKind, Edge, FaninSet, FaninSink, TaskId, TensorArg,
    TensorCreateInfo, TensorMap, TensorMapConfig,
};

use super::capture::record_args;
use super::graph::GraphWriter;
use super::record::{
    DepGenSlot, SlotBuffer, FLAG_EARLY_DISPATCH, FLAG_HAS_OVERFLOW, FLAG_LAST_OVERFLOW, FLAG_MANUAL,
    FLAG_OVERFLOW,
};
use crate::collectors::channel::{BufferChannel, CollectorThread};

/// Replay state; see the module docs.
pub(crate) struct Replay {
    oracle: TensorMap,
    annot: TensorMap,
    pub graph: Option<GraphWriter>,
    oracle_set: FaninSet,
    annot_set: FaninSet,
    args: Vec<TensorArg>,
    deps: Vec<(TaskId, DepKind)>,
    /// The two passes' producer sets, sorted for the comparison (reused per record).
    want: Vec<(TaskId, DepFlags)>,
    got: Vec<(TaskId, DepFlags)>,
    placeholder: TensorCreateInfo,
    /// Slots received (base and overflow).
    pub collected: u64,
    /// Submits replayed.
    pub records: u64,
    /// The first oracle/annotation disagreement (or structural problem).
    pub problem: Option<String>,
    corrupt: bool,
    /// Count slots only (see `Faults::skip_dep_gen_replay`).
    pub skip: bool,
    /// Time spent replaying (both passes and the graph writes), for throughput figures.
    pub busy: std::time::Duration,
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
            oracle: TensorMap::new(TensorMapConfig::unbounded()),
            annot: TensorMap::new(TensorMapConfig::unbounded()),
            graph,
            oracle_set: FaninSet::new(),
            annot_set: FaninSet::new(),
            args: Vec::with_capacity(32),
            deps: Vec::new(),
            want: Vec::new(),
            got: Vec::new(),
            placeholder: TensorCreateInfo::new(&[1], DType::Float32).expect("a valid create-info"),
            collected: 0,
            records: 0,
            problem,
            corrupt,
            skip: false,
            busy: std::time::Duration::ZERO,
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
        let mut i = 0;
        while i < buf.count {
            let base = &buf.slots[i];
            self.collected += 1;
            i += 1;
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
        record_args(rec.args(), self.placeholder, &mut self.args);
        let Replay {
            oracle,
            annot,
            graph,
            oracle_set,
            annot_set,
            args,
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
            rec.args(),
        );

        // Oracle: the runtime's dependency function.
        oracle_set.clear();
        if let Err(e) = compute_fanin(id, manual, args, deps.iter().copied(), oracle, oracle_set) {
            self.problem = Some(format!("task {id}: {}", e));
            return;
        }

        // Annotated pass: the same dependency function against the second map, every edge
        // written to the graph with its geometry as core reports it.
        annot_set.clear();
        let mut sink = Annotator {
            set: annot_set,
            graph,
        };
        if let Err(e) = compute_fanin(id, manual, args, deps.iter().copied(), annot, &mut sink) {
            self.problem = Some(format!("task {id} (annotated pass): {}", e));
            return;
        }
        let (want, got) = (&mut self.want, &mut self.got);
        want.clear();
        want.extend_from_slice(oracle_set.edges());
        got.clear();
        got.extend_from_slice(annot_set.edges());
        if self.corrupt && !got.is_empty() {
            got.pop();
            self.corrupt = false;
        }
        want.sort_unstable();
        got.sort_unstable();
        if want != got {
            self.problem = Some(format!(
                "oracle and annotated passes disagree on task {id}: oracle {:?}, annotated {:?}",
                want.iter()
                    .map(|(p, f)| (p.to_string(), f.names()))
                    .collect::<Vec<_>>(),
                got.iter()
                    .map(|(p, f)| (p.to_string(), f.names()))
                    .collect::<Vec<_>>()
            ));
            return;
        }
        let _ = register_outputs(id, manual, args, oracle);
        let _ = register_outputs(id, manual, args, annot);
    }
}

/// The annotated pass's sink: de-duplicates like the oracle's [`FaninSet`] and writes every
/// edge to the graph.
struct Annotator<'a> {
    set: &'a mut FaninSet,
    graph: &'a mut GraphWriter,
}

impl FaninSink for Annotator<'_> {
    type Error = std::convert::Infallible;
    fn edge(&mut self, e: &Edge<'_>) -> Result<(), Self::Error> {
        self.set.add(e.producer, e.flags);
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
