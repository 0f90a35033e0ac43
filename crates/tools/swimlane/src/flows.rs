//! Dependency arrows, as the original converter draws them: for every unique `(pred, succ)`
//! pair of deps.json, one flow per pair of anchors ([`Layout::push_worker_anchors`],
//! [`Layout::push_scheduler_anchors`]), so a plain MIX task with 3 rows to another gives 9 flows
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
use crate::model::{Run, TaskRows};
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

/// The tasks that can have anchors (those with rows or markers), ascending, each with its
/// rows: a task's number is its place in this list. Merged from the run's tasks in order and
/// the marked tasks, without a hash lookup per task.
fn anchored_tasks(run: &Run, layout: &Layout) -> Vec<(u64, Option<TaskRows>)> {
    let mut ids: Vec<u64> = run.ordered.iter().map(|&(t, _)| t).collect();
    if !layout.markers_of.is_empty() {
        ids.extend(layout.markers_of.keys());
        ids.sort_unstable();
        ids.dedup();
    }
    // Both lists ascend and every task with rows is in `ids`.
    let mut with_rows = run.ordered.iter().peekable();
    ids.into_iter()
        .map(|t| (t, with_rows.next_if(|&&(id, _)| id == t).map(|&(_, rows)| rows)))
        .collect()
}

/// Task id → number, from the ascending ids of [`anchored_tasks`]. Where each ring's local
/// ids are dense (this runtime's ids: ring in the high half, a count in the low), a table per
/// ring, a few megabytes that the caches mostly hold; otherwise (an original's file with
/// scattered ids) a hash map.
enum TaskNumbers {
    /// Per ring: its high half, its least local id, and each local id's number from there.
    Dense(Vec<(u32, u32, Vec<u32>)>),
    Sparse(FxHashMap<u64, u32>),
}

impl TaskNumbers {
    /// At most this many rings for the dense tables (this runtime has four).
    const MAX_DENSE_RINGS: usize = 16;

    /// Numbers `ids` (ascending) 0, 1, ...
    fn new(ids: impl Iterator<Item = u64> + Clone) -> TaskNumbers {
        let split = |t: u64| ((t >> 32) as u32, t as u32);
        // Runs of one ring (ids ascend, so each ring's ids are one run).
        let mut rings: Vec<(u32, u32, u32, u32)> = Vec::new(); // (ring, first local, last local, count)
        for t in ids.clone() {
            let (ring, local) = split(t);
            match rings.last_mut() {
                Some(r) if r.0 == ring => {
                    r.2 = local;
                    r.3 += 1;
                }
                _ => rings.push((ring, local, local, 1)),
            }
        }
        let dense = rings.len() <= Self::MAX_DENSE_RINGS
            && rings
                .iter()
                .all(|&(_, first, last, count)| u64::from(last - first) < 2 * u64::from(count) + 4096);
        if !dense {
            return TaskNumbers::Sparse(ids.zip(0u32..).collect());
        }
        let mut tables: Vec<(u32, u32, Vec<u32>)> = rings
            .iter()
            .map(|&(ring, first, last, _)| (ring, first, vec![NONE; (last - first) as usize + 1]))
            .collect();
        let mut table = 0;
        for (t, n) in ids.zip(0u32..) {
            let (ring, local) = split(t);
            while tables[table].0 != ring {
                table += 1;
            }
            let (_, first, numbers) = &mut tables[table];
            numbers[(local - *first) as usize] = n;
        }
        TaskNumbers::Dense(tables)
    }

    /// The number of task `t`, or [`NONE`].
    fn get(&self, t: u64) -> u32 {
        match self {
            TaskNumbers::Dense(tables) => {
                let (ring, local) = ((t >> 32) as u32, t as u32);
                tables
                    .iter()
                    .find(|table| table.0 == ring)
                    .and_then(|(_, first, numbers)| numbers.get(local.checked_sub(*first)? as usize))
                    .copied()
                    .unwrap_or(NONE)
            }
            TaskNumbers::Sparse(map) => map.get(&t).copied().unwrap_or(NONE),
        }
    }
}

/// The deps.json pairs by task number ([`anchored_tasks`]): one lookup per pair end instead
/// of several per view.
struct Numbered {
    /// Each task's block count as its flows carry it (`input_task_count` at a successor,
    /// `output_task_count` at a predecessor): the SPMD block count, else 1.
    fan: Vec<u32>,
    /// `run.deps.pairs` by number ([`NONE`] for a task without rows and markers).
    pairs: Vec<(u32, u32)>,
}

impl Numbered {
    fn new(run: &Run, tasks: &[(u64, Option<TaskRows>)]) -> Numbered {
        let numbers = TaskNumbers::new(tasks.iter().map(|&(t, _)| t));
        let fan = tasks
            .iter()
            .map(|(_, rows)| rows.map_or(1, |r| r.fan_count))
            .collect();
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
                        let n = numbers.get(pred);
                        last = Some((pred, n));
                        n
                    }
                };
                (p, numbers.get(succ))
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
    /// `push_anchors(task, rows, anchors)` appends the anchors of `task`.
    fn new(
        tasks: &[(u64, Option<TaskRows>)],
        mut push_anchors: impl FnMut(u64, Option<&TaskRows>, &mut Vec<Anchor>),
    ) -> AnchorTable {
        let mut t = AnchorTable {
            spans: Vec::with_capacity(tasks.len()),
            anchors: Vec::with_capacity(tasks.len()),
        };
        for (task, rows) in tasks {
            let start = t.anchors.len();
            push_anchors(*task, rows.as_ref(), &mut t.anchors);
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
        let tasks = anchored_tasks(run, layout);
        let (numbered, (worker, scheduler)) = std::thread::scope(|scope| {
            let tables = scope.spawn(|| {
                let worker = AnchorTable::new(&tasks, |t, rows, out| {
                    layout.push_worker_anchors(run, t, rows, out)
                });
                let scheduler = run.has_aicpu_data().then(|| {
                    AnchorTable::new(&tasks, |_, rows, out| {
                        layout.push_scheduler_anchors(run, rows, out)
                    })
                });
                (worker, scheduler)
            });
            let numbered = Numbered::new(run, &tasks);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every id's number and a few ids that are not there, by both kinds of table.
    fn numbers_of(numbers: &TaskNumbers, ids: &[u64], absent: &[u64]) -> (Vec<u32>, Vec<u32>) {
        (
            ids.iter().map(|&t| numbers.get(t)).collect(),
            absent.iter().map(|&t| numbers.get(t)).collect(),
        )
    }

    #[test]
    fn dense_rings_number_as_a_map_does() {
        let ring = |r: u64, local: u64| (r << 32) | local;
        let ids = [
            ring(0, 3),
            ring(0, 4),
            ring(0, 9),
            ring(1, 0),
            ring(1, 2),
            ring(3, 7),
        ];
        let absent = [
            ring(0, 2),
            ring(0, 5),
            ring(0, 10),
            ring(1, 1),
            ring(2, 0),
            ring(3, 8),
            u64::MAX,
        ];
        let dense = TaskNumbers::new(ids.iter().copied());
        assert!(matches!(dense, TaskNumbers::Dense(ref tables) if tables.len() == 3));
        let (found, missing) = numbers_of(&dense, &ids, &absent);
        assert_eq!(found, [0, 1, 2, 3, 4, 5]);
        assert_eq!(missing, [NONE; 7]);
    }

    #[test]
    fn scattered_ids_fall_back_to_a_map() {
        let ids = [1, 1 << 20, 1 << 40, u64::MAX - 1];
        let numbers = TaskNumbers::new(ids.iter().copied());
        assert!(matches!(numbers, TaskNumbers::Sparse(_)));
        let (found, missing) = numbers_of(&numbers, &ids, &[0, 2, u64::MAX]);
        assert_eq!(found, [0, 1, 2, 3]);
        assert_eq!(missing, [NONE; 3]);
        // Too many rings for dense tables, each of them dense.
        let many: Vec<u64> = (0..=TaskNumbers::MAX_DENSE_RINGS as u64)
            .map(|r| r << 32)
            .collect();
        assert!(matches!(
            TaskNumbers::new(many.iter().copied()),
            TaskNumbers::Sparse(_)
        ));
    }
}
