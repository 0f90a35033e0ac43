//! Dependency arrows, as the original converter draws them: for every unique `(pred, succ)`
//! pair of deps.json, one flow per pair of anchors ([`Layout::worker_anchors`],
//! [`Layout::scheduler_anchors`]), so a plain MIX task with 3 rows to another gives 9 flows
//! and an SPMD end contributes one anchor per kernel.
//!
//! - Worker View (pid 4): from the predecessor slice's start to the successor slice's start;
//!   [`HB_VIOLATION`] when the predecessor ends after the successor's slice starts.
//! - Scheduler View (pid 3): between the two dispatches, only when both tasks have rows with
//!   both scheduler stamps; [`HB_VIOLATION`] when the predecessor finishes after the
//!   successor's dispatch.
//!
//! Each flow carries `output_task_count` / `input_task_count`: the SPMD block count of the
//! predecessor / successor, else 1.

use rustc_hash::FxHashMap;
use std::io::{self, Write};

use crate::layout::{Anchor, Layout};
use crate::model::Run;
use crate::trace::{FlowEnd, Parallelism, TraceWriter};

/// Name of a flow whose order was respected.
pub const DEPENDENCY: &str = "dependency";
/// Name of a flow whose successor started before its predecessor ended.
pub const HB_VIOLATION: &str = "hb_violation";

/// Flows of one view by name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ViewFlows {
    /// Flows named `dependency`.
    pub dependency: usize,
    /// Flows named `hb_violation`.
    pub hb_violation: usize,
}

/// What [`write_dependency_flows`] drew and skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowCounts {
    /// Worker View flows.
    pub worker: ViewFlows,
    /// Scheduler View flows.
    pub scheduler: ViewFlows,
    /// Pairs not drawn because an endpoint has no row and no marker.
    pub without_row: usize,
    /// The first such pair, for the report.
    pub first_without_row: Option<(u64, u64)>,
}

/// No task number: the task has no rows and no markers.
const NONE: u32 = u32::MAX;

/// The tasks that can have anchors (those with rows or markers), ascending: a task's number
/// is its place in this list.
fn anchored_tasks(run: &Run, layout: &Layout) -> Vec<u64> {
    let mut ids: Vec<u64> = run
        .tasks
        .keys()
        .chain(layout.markers_of.keys())
        .copied()
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The deps.json pairs by task number ([`anchored_tasks`]): one hash lookup per pair end
/// instead of several per view.
struct Numbered {
    /// The flow's block count of each task (see [`task_counts`]).
    fan: Vec<u32>,
    /// `run.deps.pairs` by number ([`NONE`] for a task without rows and markers).
    pairs: Vec<(u32, u32)>,
}

impl Numbered {
    fn new(run: &Run, ids: &[u64]) -> Numbered {
        let index: FxHashMap<u64, u32> = ids.iter().enumerate().map(|(i, &t)| (t, i as u32)).collect();
        let number = |t: u64| index.get(&t).copied().unwrap_or(NONE);
        let fan = ids.iter().map(|&t| task_counts(run, t, t).0).collect();
        // Pairs are sorted by pred: look each pred up once.
        let mut last: Option<(u64, u32)> = None;
        let pairs = run
            .deps
            .pairs
            .iter()
            .map(|&(pred, succ)| {
                let p = match last {
                    Some((t, n)) if t == pred => n,
                    _ => {
                        let n = number(pred);
                        last = Some((pred, n));
                        n
                    }
                };
                (p, number(succ))
            })
            .collect();
        Numbered { fan, pairs }
    }
}

/// Anchors per numbered task, computed once.
struct AnchorTable {
    /// `(start, len)` in `anchors` by task number.
    spans: Vec<(u32, u32)>,
    anchors: Vec<Anchor>,
}

impl AnchorTable {
    /// `push_anchors(task, anchors)` appends the anchors of `task`.
    fn new(ids: &[u64], mut push_anchors: impl FnMut(u64, &mut Vec<Anchor>)) -> AnchorTable {
        let mut t = AnchorTable {
            spans: Vec::with_capacity(ids.len()),
            anchors: Vec::with_capacity(ids.len()),
        };
        for &task in ids {
            let start = t.anchors.len();
            push_anchors(task, &mut t.anchors);
            t.spans.push((start as u32, (t.anchors.len() - start) as u32));
        }
        t
    }

    /// The anchors of task number `n`; `None` when it has none.
    fn get(&self, n: u32) -> Option<&[Anchor]> {
        let &(s, len) = self.spans.get(n as usize)?;
        (len > 0).then(|| &self.anchors[s as usize..(s + len) as usize])
    }

    /// The anchors of both ends of a numbered pair; `None` when an end has none.
    fn pair(&self, (pred, succ): (u32, u32)) -> Option<(&[Anchor], &[Anchor])> {
        Some((self.get(pred)?, self.get(succ)?))
    }
}

/// The `(input_task_count, output_task_count)` of a flow from `pred` to `succ`.
fn task_counts(run: &Run, pred: u64, succ: u64) -> (u32, u32) {
    let fan = |t: u64| run.tasks.get(&t).map_or(1, |x| x.fan_count);
    (fan(succ), fan(pred))
}

/// What the flows of both views are drawn from, worked out before any is written: the
/// pairs by task number, each view's anchors and each chunk's first flow id. It depends only
/// on the run and its layout, so [`FlowPlan::new`] can run while the slices are written.
pub struct FlowPlan {
    /// The pairs per chunk the flow ids were counted for.
    chunk_len: usize,
    numbered: Numbered,
    worker: ViewPlan,
    scheduler: Option<ViewPlan>,
}

/// One view's anchors, and the flows drawn before each chunk of [`PAIRS_PER_CHUNK`] pairs
/// (cut by `chunk_len`).
struct ViewPlan {
    table: AnchorTable,
    flows_before: Vec<u64>,
}

impl ViewPlan {
    fn new(numbered: &Numbered, table: AnchorTable, chunk_len: usize) -> ViewPlan {
        let mut before = 0u64;
        let flows_before = numbered
            .pairs
            .chunks(chunk_len)
            .map(|chunk| {
                let start = before;
                before += chunk
                    .iter()
                    .filter_map(|&pair| table.pair(pair))
                    .map(|(p, s)| (p.len() * s.len()) as u64)
                    .sum::<u64>();
                start
            })
            .collect();
        ViewPlan { table, flows_before }
    }
}

impl FlowPlan {
    /// Plans the flows of `run` for chunks cut as `parallelism` cuts them; `None` without
    /// pairs.
    pub fn new(run: &Run, layout: &Layout, parallelism: Parallelism) -> Option<FlowPlan> {
        if run.deps.pairs.is_empty() {
            return None;
        }
        let chunk_len = parallelism.chunk_len(PAIRS_PER_CHUNK);
        // The pairs are numbered here while the anchors are found on another thread.
        let ids = anchored_tasks(run, layout);
        let (numbered, (worker, scheduler)) = std::thread::scope(|scope| {
            let tables = scope.spawn(|| {
                let worker = AnchorTable::new(&ids, |t, out| layout.push_worker_anchors(run, t, out));
                let scheduler = run
                    .has_aicpu_data()
                    .then(|| AnchorTable::new(&ids, |t, out| layout.push_scheduler_anchors(run, t, out)));
                (worker, scheduler)
            });
            let numbered = Numbered::new(run, &ids);
            let tables = tables
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (numbered, tables)
        });
        Some(FlowPlan {
            chunk_len,
            worker: ViewPlan::new(&numbered, worker, chunk_len),
            scheduler: scheduler.map(|table| ViewPlan::new(&numbered, table, chunk_len)),
            numbered,
        })
    }
}

/// Writes the dependency flows of both views as `plan` (from [`FlowPlan::new`] with this
/// writer's parallelism) lays them out.
pub fn write_dependency_flows<W: Write>(
    out: &mut TraceWriter<W>,
    run: &Run,
    plan: Option<&FlowPlan>,
) -> io::Result<FlowCounts> {
    let mut counts = FlowCounts::default();
    let Some(plan) = plan else {
        return Ok(counts);
    };
    // Flow ids counted for other chunks would be wrong ids, not an error anyone would see.
    assert_eq!(
        plan.chunk_len,
        out.chunk_len(PAIRS_PER_CHUNK),
        "the flows were planned for another parallelism"
    );
    let (worker_flows, missing) = view_flows(out, run, &plan.numbered, &plan.worker)?;
    counts.worker = worker_flows;
    counts.without_row = missing.pairs;
    counts.first_without_row = missing.first;
    if let Some(scheduler) = &plan.scheduler {
        counts.scheduler = view_flows(out, run, &plan.numbered, scheduler)?.0;
    }
    Ok(counts)
}

/// Pairs formatted per chunk on one thread ([`TraceWriter::chunked`]): about a megabyte of
/// flows when each end has one anchor.
const PAIRS_PER_CHUNK: usize = 4096;

/// Pairs of one view not drawn because an end has no anchors.
#[derive(Debug, Clone, Copy, Default)]
struct Missing {
    /// How many.
    pairs: usize,
    /// The first, in deps.json's order.
    first: Option<(u64, u64)>,
}

/// The flows of one view: every anchor pair of every deps.json pair whose ends both have
/// anchors, and the pairs without. An anchor's end is its slice's end (the finish in the
/// Scheduler View), so a flow is an `hb_violation` when it is after the successor's start.
///
/// The pairs are formatted in chunks on several threads; each chunk's first flow id is the
/// number of flows the pairs before it draw (one per anchor pair), counted first.
fn view_flows<W: Write>(
    out: &mut TraceWriter<W>,
    run: &Run,
    numbered: &Numbered,
    view: &ViewPlan,
) -> io::Result<(ViewFlows, Missing)> {
    let (table, flows_before) = (&view.table, &view.flows_before);
    let chunks = out.chunked(numbered.pairs.len(), PAIRS_PER_CHUNK, |chunk, out| {
        out.skip_flow_ids(flows_before[chunk.index]);
        let mut counts = ViewFlows::default();
        let mut missing = Missing::default();
        for i in chunk.range {
            let (pn, sn) = numbered.pairs[i];
            let Some((p, s)) = table.pair((pn, sn)) else {
                missing.pairs += 1;
                missing.first.get_or_insert(run.deps.pairs[i]);
                continue;
            };
            let task_counts = (numbered.fan[sn as usize], numbered.fan[pn as usize]);
            for pa in p {
                for sa in s {
                    draw(out, &mut counts, pa.end_ns > sa.start_ns, pa, sa, task_counts)?;
                }
            }
        }
        Ok((counts, missing))
    })?;
    let mut total = (ViewFlows::default(), Missing::default());
    for (counts, missing) in chunks {
        total.0.dependency += counts.dependency;
        total.0.hb_violation += counts.hb_violation;
        total.1.pairs += missing.pairs;
        total.1.first = total.1.first.or(missing.first);
    }
    Ok(total)
}

fn draw<W: Write>(
    out: &mut TraceWriter<W>,
    counts: &mut ViewFlows,
    hb: bool,
    from: &Anchor,
    to: &Anchor,
    task_counts: (u32, u32),
) -> io::Result<()> {
    let name = if hb {
        counts.hb_violation += 1;
        HB_VIOLATION
    } else {
        counts.dependency += 1;
        DEPENDENCY
    };
    out.flow(
        name,
        FlowEnd {
            track: from.track,
            ts_ns: from.start_ns,
            bind: Some(from.id),
        },
        FlowEnd {
            track: to.track,
            ts_ns: to.start_ns,
            bind: Some(to.id),
        },
        Some(task_counts),
    )?;
    Ok(())
}
