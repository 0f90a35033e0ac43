//! The timed task graph of one run: per task its first start and last end over all its slices,
//! its kernel name, its happens-before predecessors and its same-core predecessor
//! (`../shared/reference/timing-analysis.md` §2, "Graph").
//!
//! Built in one pass over the records and one over deps.json ([`GraphBuilder`]), in time
//! linear in slices + edges: edges are bucketed by consumer (a counting sort) and de-duplicated
//! with a per-task stamp; slices are bucketed by core and sorted only where a core's slices are
//! not already in start order.

use rustc_hash::FxHashMap;
use simpler_artifacts::name_map::NameMap;

use crate::adapter::{DepEdge, TaskKernels, TimedSlice};

/// Dense index of a task in a [`Graph`] (the order its first slice appeared in the records).
pub type TaskIx = u32;

/// The same-core predecessor of a task: the task whose slice freed the core it first ran on,
/// and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CorePrev {
    /// The task that held the core last.
    pub holder: TaskIx,
    /// The latest end over the slices before this task's on that core.
    pub end: u64,
}

/// One run's timed tasks and their predecessors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    /// Raw task id per task.
    pub ids: Vec<u64>,
    /// Earliest start over the task's slices, ticks.
    pub start: Vec<u64>,
    /// Latest end over the task's slices, ticks.
    pub end: Vec<u64>,
    /// Index into [`Graph::names`] per task.
    pub name: Vec<u32>,
    /// Distinct kernel names.
    pub names: Vec<String>,
    /// Slices (blocks) per task.
    pub blocks: Vec<u32>,
    /// Happens-before predecessors of task `v`: `hb_preds[hb_offsets[v]..hb_offsets[v + 1]]`.
    pub hb_offsets: Vec<usize>,
    /// See [`Graph::hb_offsets`].
    pub hb_preds: Vec<TaskIx>,
    /// Same-core predecessor per task.
    pub core_prev: Vec<Option<CorePrev>>,
    /// Earliest start of the run.
    pub t0: u64,
    /// Latest end of the run.
    pub t1: u64,
    /// How many of deps.json's edges joined two timed tasks.
    pub coverage: EdgeCoverage,
    /// Tasks with more rows than their block count and kernels give (rows of another task
    /// under its token?), each analysed as one task: said as a warning.
    pub overfull: Vec<OverfullTask>,
    /// The tolerance for "ended before" in the graph's unit (ns), as the happens-before
    /// edges and core predecessors were decided with it: the observed path's walk uses the
    /// same (`--tol` is in the file's ticks, converted once by [`crate::load_graph`]).
    pub tol: u64,
}

/// A task whose rows outnumber what its block count and kernels give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverfullTask {
    /// Raw task id (the rows' task token).
    pub task: u64,
    /// Its rows' indices in `aicore_tasks`, ascending.
    pub rows: Vec<u32>,
    /// The rows it should have.
    pub expected: u32,
}

/// How many of deps.json's edges (`edges[]` rows; self edges and edges of a task without a
/// kernel left out) joined two tasks the records time: few mean a deps.json of another run, or records of a run cut short.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EdgeCoverage {
    /// Edges read.
    pub edges: usize,
    /// Of those, the edges whose two ends are timed.
    pub joined: usize,
    /// The first edge with an untimed end, `(pred, succ)`.
    pub first_unjoined: Option<(u64, u64)>,
    /// Distinct pairs of two timed tasks that the timing does not bear out (the succ started
    /// before the pred ended, beyond the tolerance, or before the pred started): left out of
    /// the happens-before graph, and said in a warning.
    pub untimely: usize,
    /// The first such pair, `(pred, succ)`.
    pub first_untimely: Option<(u64, u64)>,
    /// Timed tasks deps.json's `tasks[]` does not list
    /// (`simpler_artifacts::manifest::unlisted_timed_tasks`).
    pub unlisted: usize,
    /// The first of them, in the records' order.
    pub first_unlisted: Option<u64>,
}

impl Graph {
    /// Number of tasks.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Returns true if and only if the graph has no task.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// `end − start` of task `v`.
    pub fn dur(&self, v: TaskIx) -> u64 {
        self.end[v as usize] - self.start[v as usize]
    }

    /// The happens-before predecessors of `v`.
    pub fn preds(&self, v: TaskIx) -> &[TaskIx] {
        &self.hb_preds[self.hb_offsets[v as usize]..self.hb_offsets[v as usize + 1]]
    }

    /// Number of happens-before edges kept.
    pub fn kept_edges(&self) -> usize {
        self.hb_preds.len()
    }

    /// The kernel name of `v`.
    pub fn name_of(&self, v: TaskIx) -> &str {
        &self.names[self.name[v as usize] as usize]
    }
}

/// Collects slices, then deps.json's tasks and edges, then builds the [`Graph`].
#[derive(Debug, Default)]
pub struct GraphBuilder {
    index: FxHashMap<u64, TaskIx>,
    ids: Vec<u64>,
    start: Vec<u64>,
    end: Vec<u64>,
    blocks: Vec<u32>,
    /// First active kernel id per task; `None` until deps.json names one.
    kernel: Vec<Option<i32>>,
    /// Rows each task should have (the records', else deps.json's), when known.
    expected: Vec<Option<u32>>,
    slices: Vec<CoreSlice>,
    /// `(succ, pred)` of every deps.json edge whose two ends are timed and differ.
    edges: Vec<(TaskIx, TaskIx)>,
    coverage: EdgeCoverage,
    /// Tasks deps.json lists without an active kernel (dummy and alloc tasks).
    kernel_less: rustc_hash::FxHashSet<u64>,
    /// Per timed task, whether deps.json's `tasks[]` lists it.
    listed: Vec<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct CoreSlice {
    core: u32,
    start: u64,
    end: u64,
    task: TaskIx,
    /// Its index in the records (`aicore_tasks[row]`).
    row: u32,
}

impl GraphBuilder {
    /// Adds one execution slice (records must come before deps.json).
    pub fn add_slice(&mut self, s: TimedSlice) {
        let next = self.ids.len() as TaskIx;
        let ix = *self.index.entry(s.task).or_insert(next);
        if ix == next {
            self.ids.push(s.task);
            self.start.push(s.start);
            self.end.push(s.end);
            self.blocks.push(0);
            self.kernel.push(None);
            self.expected.push(None);
        }
        let i = ix as usize;
        self.start[i] = self.start[i].min(s.start);
        self.end[i] = self.end[i].max(s.end);
        self.blocks[i] += 1;
        self.expected[i] = self.expected[i].max(s.expected_rows);
        let row = self.slices.len() as u32;
        self.slices.push(CoreSlice {
            core: s.core,
            start: s.start,
            end: s.end,
            task: ix,
            row,
        });
    }

    /// Records the kernel of a deps.json task: its first active kernel id.
    pub fn add_task(&mut self, t: TaskKernels) {
        if !t.kernel_ids.is_empty() && t.kernel_ids.iter().all(|&k| k < 0) {
            self.kernel_less.insert(t.task_id);
        }
        if let Some(&ix) = self.index.get(&t.task_id) {
            let i = ix as usize;
            self.listed.resize(self.ids.len(), false);
            self.listed[i] = true;
            self.kernel[i] = t.kernel_ids.iter().copied().find(|k| *k >= 0);
            self.expected[i] = self.expected[i].or(t.expected_rows());
        }
    }

    /// Records a deps.json edge; self edges and edges with an untimed end are dropped.
    pub fn add_edge(&mut self, e: DepEdge) {
        if e.pred == e.succ {
            return;
        }
        // An edge of a dummy or alloc task is not counted: such a task has no timing rows
        // below level 4.
        let counted = !self.kernel_less.contains(&e.pred) && !self.kernel_less.contains(&e.succ);
        self.coverage.edges += usize::from(counted);
        if let (Some(&p), Some(&s)) = (self.index.get(&e.pred), self.index.get(&e.succ)) {
            self.coverage.joined += usize::from(counted);
            self.edges.push((s, p));
        } else if counted && self.coverage.first_unjoined.is_none() {
            self.coverage.first_unjoined = Some((e.pred, e.succ));
        }
    }

    /// Number of timed tasks so far.
    pub fn tasks(&self) -> usize {
        self.ids.len()
    }

    /// Builds the graph: names from `names` (`cid<k>` for an unnamed kernel, `unknown` for a
    /// task without one), happens-before edges (a deps edge `p → s`, counted once, kept if and
    /// only if `end[p] ≤ start[s] + tol` and `start[p] < start[s]`) and same-core predecessors
    /// (the latest end over the earlier slices of the core a task first started on, if held by
    /// another task and `≤ start + tol`).
    pub fn build(self, names: &NameMap, tol: u64) -> Graph {
        let n = self.ids.len();
        let (name, names) = name_tasks(&self.kernel, names);
        let (hb_offsets, hb_preds, untimely) = hb_edges(n, &self.edges, &self.start, &self.end, tol);
        let mut coverage = self.coverage;
        let mut listed = self.listed;
        listed.resize(n, false);
        coverage.unlisted = listed.iter().filter(|&&l| !l).count();
        coverage.first_unlisted = listed.iter().position(|&l| !l).map(|i| self.ids[i]);
        coverage.untimely = untimely.0;
        coverage.first_untimely = untimely
            .1
            .map(|(p, s)| (self.ids[p as usize], self.ids[s as usize]));
        let overfull = overfull_tasks(&self.ids, &self.blocks, &self.expected, &self.slices);
        let core_prev = core_predecessors(n, self.slices, &self.start, tol);
        let t0 = self.start.iter().copied().min().unwrap_or(0);
        let t1 = self.end.iter().copied().max().unwrap_or(0);
        Graph {
            ids: self.ids,
            start: self.start,
            end: self.end,
            name,
            names,
            blocks: self.blocks,
            hb_offsets,
            hb_preds,
            core_prev,
            t0,
            t1,
            coverage,
            overfull,
            tol,
        }
    }
}

/// The tasks with more rows than `expected`, with their rows (found in `slices` only when
/// there is such a task).
fn overfull_tasks(
    ids: &[u64],
    blocks: &[u32],
    expected: &[Option<u32>],
    slices: &[CoreSlice],
) -> Vec<OverfullTask> {
    let over: FxHashMap<TaskIx, usize> = (0..ids.len())
        .filter(|&i| expected[i].is_some_and(|e| blocks[i] > e))
        .enumerate()
        .map(|(k, i)| (i as TaskIx, k))
        .collect();
    if over.is_empty() {
        return Vec::new();
    }
    let mut tasks: Vec<OverfullTask> = vec![
        OverfullTask {
            task: 0,
            rows: Vec::new(),
            expected: 0
        };
        over.len()
    ];
    for (&i, &k) in &over {
        tasks[k].task = ids[i as usize];
        tasks[k].expected = expected[i as usize].unwrap_or(0);
    }
    // Slices are in records order here.
    for s in slices {
        if let Some(&k) = over.get(&s.task) {
            tasks[k].rows.push(s.row);
        }
    }
    tasks
}

/// Interns one name per kernel id (and `unknown`).
fn name_tasks(kernel: &[Option<i32>], map: &NameMap) -> (Vec<u32>, Vec<String>) {
    let mut names = Vec::new();
    let mut by_kernel: FxHashMap<Option<i32>, u32> = FxHashMap::default();
    let name = kernel
        .iter()
        .map(|k| {
            *by_kernel.entry(*k).or_insert_with(|| {
                names.push(match k {
                    Some(id) => map.get(*id).map_or_else(|| format!("cid{id}"), str::to_owned),
                    None => "unknown".to_owned(),
                });
                (names.len() - 1) as u32
            })
        })
        .collect();
    (name, names)
}

/// The happens-before predecessors in CSR form, each unique pair once, in deps.json order; and
/// how many unique pairs the timing does not bear out, with the first of them `(pred, succ)`
/// (by succ, then deps.json order).
#[allow(clippy::type_complexity)]
fn hb_edges(
    n: usize,
    edges: &[(TaskIx, TaskIx)],
    start: &[u64],
    end: &[u64],
    tol: u64,
) -> (Vec<usize>, Vec<TaskIx>, (usize, Option<(TaskIx, TaskIx)>)) {
    // Counting sort by consumer, keeping file order within a consumer.
    let mut offsets = vec![0usize; n + 1];
    for &(s, _) in edges {
        offsets[s as usize + 1] += 1;
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut fill = offsets.clone();
    let mut bucketed = vec![0 as TaskIx; edges.len()];
    for &(s, p) in edges {
        bucketed[fill[s as usize]] = p;
        fill[s as usize] += 1;
    }
    // De-duplicate per consumer with a stamp per producer, filter, compact.
    let mut seen_by = vec![TaskIx::MAX; n];
    let mut kept_offsets = Vec::with_capacity(n + 1);
    kept_offsets.push(0);
    let mut kept = Vec::with_capacity(edges.len());
    let mut untimely = (0, None);
    for s in 0..n {
        for &p in &bucketed[offsets[s]..offsets[s + 1]] {
            let pi = p as usize;
            if seen_by[pi] == s as TaskIx {
                continue;
            }
            seen_by[pi] = s as TaskIx;
            if end[pi] <= start[s].saturating_add(tol) && start[pi] < start[s] {
                kept.push(p);
            } else {
                untimely.0 += 1;
                untimely.1.get_or_insert((p, s as TaskIx));
            }
        }
        kept_offsets.push(kept.len());
    }
    (kept_offsets, kept, untimely)
}

/// Cores with an id below this are bucketed by a counting sort; larger ids fall back to a sort.
const MAX_BUCKETED_CORE: u32 = 1 << 20;

/// The same-core predecessor of each task (see [`GraphBuilder::build`]).
fn core_predecessors(n: usize, mut slices: Vec<CoreSlice>, start: &[u64], tol: u64) -> Vec<Option<CorePrev>> {
    let max_core = slices.iter().map(|s| s.core).max().unwrap_or(0);
    if max_core < MAX_BUCKETED_CORE {
        let mut offsets = vec![0usize; max_core as usize + 2];
        for s in &slices {
            offsets[s.core as usize + 1] += 1;
        }
        for i in 0..=max_core as usize {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut bucketed = slices.clone();
        for s in &slices {
            bucketed[fill[s.core as usize]] = *s;
            fill[s.core as usize] += 1;
        }
        for core in 0..=max_core as usize {
            let run = &mut bucketed[offsets[core]..offsets[core + 1]];
            if !run.is_sorted() {
                run.sort_unstable();
            }
        }
        slices = bucketed;
    } else {
        slices.sort_unstable();
    }

    let mut prev: Vec<Option<CorePrev>> = vec![None; n];
    let mut i = 0;
    while i < slices.len() {
        let core = slices[i].core;
        let mut best: Option<CorePrev> = None;
        while i < slices.len() && slices[i].core == core {
            let s = slices[i];
            let t = s.task as usize;
            if let Some(b) = best {
                if b.holder != s.task
                    && b.end <= s.start.saturating_add(tol)
                    && s.start == start[t]
                    && prev[t].is_none_or(|cur| b.end > cur.end)
                {
                    prev[t] = Some(b);
                }
            }
            if best.is_none_or(|b| s.end > b.end) {
                best = Some(CorePrev {
                    holder: s.task,
                    end: s.end,
                });
            }
            i += 1;
        }
    }
    prev
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(task: u64, core: u32, start: u64, end: u64) -> TimedSlice {
        TimedSlice {
            task,
            core,
            start,
            end,
            expected_rows: None,
        }
    }

    #[test]
    fn tasks_span_their_slices_and_edges_are_filtered_once() {
        let mut b = GraphBuilder::default();
        b.add_slice(slice(7, 0, 10, 20));
        b.add_slice(slice(7, 1, 12, 25)); // second block of task 7
        b.add_slice(slice(8, 0, 26, 30));
        b.add_slice(slice(9, 1, 24, 40)); // starts before 7 ends: not happens-before
        for (p, s) in [(7, 8), (7, 8), (7, 9), (8, 8), (42, 8)] {
            b.add_edge(DepEdge { pred: p, succ: s });
        }
        b.add_task(TaskKernels {
            task_id: 7,
            kernel_ids: vec![-1, 3, -1],
            block_num: None,
        });
        b.add_task(TaskKernels {
            task_id: 8,
            kernel_ids: vec![5, -1, -1],
            block_num: None,
        });
        let names = NameMap::from_pairs([(3, "k_add".to_owned())]);
        let g = b.build(&names, 0);
        assert_eq!(g.ids, [7, 8, 9]);
        assert_eq!(
            (g.start.clone(), g.end.clone(), g.blocks.clone()),
            (vec![10, 26, 24], vec![25, 30, 40], vec![2, 1, 1])
        );
        assert_eq!(
            (g.name_of(0), g.name_of(1), g.name_of(2)),
            ("k_add", "cid5", "unknown")
        );
        assert_eq!((g.preds(0), g.preds(1), g.preds(2)), (&[][..], &[0][..], &[][..]));
        assert_eq!(g.kept_edges(), 1);
        // 7 → 9 is not borne out (9 started before 7 ended): counted, once.
        assert_eq!(
            (g.coverage.untimely, g.coverage.first_untimely),
            (1, Some((7, 9)))
        );
        // core 0: 7 [10,20] then 8 at 26; core 1: 7 [12,25] then 9 at 24 (25 > 24: not free).
        assert_eq!(
            g.core_prev,
            vec![None, Some(CorePrev { holder: 0, end: 20 }), None]
        );
        // With a tolerance of 1 tick, 7's end at 25 counts as before 9's start at 24 on core 1,
        // but the edge 7 → 9 still needs 7 to have started first (it did).
        let mut b = GraphBuilder::default();
        b.add_slice(slice(7, 1, 12, 25));
        b.add_slice(slice(9, 1, 24, 40));
        b.add_edge(DepEdge { pred: 7, succ: 9 });
        let g = b.build(&NameMap::default(), 1);
        assert_eq!(g.preds(1), &[0]);
        assert_eq!(g.core_prev[1], Some(CorePrev { holder: 0, end: 25 }));
        assert_eq!((g.t0, g.t1), (12, 40));
        assert!(g.overfull.is_empty());
    }

    /// Found by a review: two rows that share a task token (one block, one kernel) were
    /// merged into one task without a word; the task and its rows are now reported.
    #[test]
    fn rows_past_a_tasks_blocks_and_kernels_are_reported() {
        let mut b = GraphBuilder::default();
        let one = |task, core, start, end| TimedSlice {
            expected_rows: Some(1),
            ..slice(task, core, start, end)
        };
        b.add_slice(one(0, 0, 10, 20));
        b.add_slice(one(1, 1, 21, 30));
        b.add_slice(one(0, 2, 31, 40)); // another task's row under token 0
        b.add_slice(slice(2, 3, 41, 50)); // the original's layout: no count in the records...
        b.add_slice(slice(2, 4, 41, 50));
        b.add_slice(slice(3, 5, 41, 50)); // ...and deps.json says 4 blocks of 1 kernel
        b.add_task(TaskKernels {
            task_id: 2,
            kernel_ids: vec![-1, 7, -1],
            block_num: Some(1),
        });
        b.add_task(TaskKernels {
            task_id: 3,
            kernel_ids: vec![-1, 7, -1],
            block_num: Some(4),
        });
        let g = b.build(&NameMap::default(), 0);
        assert_eq!(
            g.overfull,
            [
                OverfullTask {
                    task: 0,
                    rows: vec![0, 2],
                    expected: 1
                },
                OverfullTask {
                    task: 2,
                    rows: vec![3, 4],
                    expected: 1
                },
            ]
        );
        assert_eq!(g.len(), 4);
    }
}
