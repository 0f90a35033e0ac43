//! The observed critical path: walking back from the task that ended last through the
//! predecessor that actually released each task (the data producer or the previous holder of
//! its core whose end came last, within the tolerance), then tiling the makespan into compute
//! and stall along it (`../shared/reference/timing-analysis.md` §2, "Observed path").

use std::fmt;

use crate::graph::{Graph, TaskIx};

/// Why a task on the observed path started when it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StallKind {
    /// Waiting for the assigned core to be freed by the previous task on it.
    CoreWait,
    /// Waiting for a producer (a deps.json edge).
    DataWait,
    /// No predecessor released it: launch or dispatch delay before the path's first task.
    FrontGap,
}

impl StallKind {
    /// Every kind, in the order the report lists them when their stalls tie.
    pub const ALL: [StallKind; 3] = [StallKind::DataWait, StallKind::CoreWait, StallKind::FrontGap];

    /// `data-wait`, `core-wait` or `front-gap`.
    pub fn as_str(self) -> &'static str {
        match self {
            StallKind::DataWait => "data-wait",
            StallKind::CoreWait => "core-wait",
            StallKind::FrontGap => "front-gap",
        }
    }
}

impl fmt::Display for StallKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One task of the observed path and the part of the makespan it accounts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// The task.
    pub task: TaskIx,
    /// Time it computed that no earlier path task already covered, ticks.
    pub compute: u64,
    /// Gap between the path's frontier and its start, ticks.
    pub stall: u64,
    /// What it waited for.
    pub kind: StallKind,
}

/// The observed path and its tiling of `[t0, t1]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedPath {
    /// The tasks, first to last.
    pub segments: Vec<Segment>,
    /// Σ compute, ticks.
    pub compute: u64,
    /// Σ stall, ticks.
    pub stall: u64,
}

impl ObservedPath {
    /// Σ stall of one kind, ticks.
    pub fn stall_of(&self, kind: StallKind) -> u64 {
        self.segments
            .iter()
            .filter(|s| s.kind == kind)
            .map(|s| s.stall)
            .sum()
    }
}

/// Walks back from the first task with the latest end. At each task `v` the candidates are its
/// happens-before predecessors (`data-wait`) and its same-core predecessor (`core-wait`), each
/// only if it ended by `start[v] + tol` (`Graph::tol`) and started before `v`; the one with the latest end
/// wins (ties: the larger task id, then `data-wait`). No candidate, or a task seen before, ends
/// the walk (`front-gap`). Then the frontier sweep from `t0`: `stall = max(0, start −
/// frontier)`, `compute = max(0, end − max(start, frontier))`, `frontier = max(frontier, end)`,
/// so Σcompute + Σstall = `end of the last task − t0`.
pub fn observed_path(g: &Graph) -> ObservedPath {
    let tol = g.tol;
    let mut walk: Vec<(TaskIx, StallKind)> = Vec::new();
    let Some(sink) = (0..g.len() as TaskIx).reduce(|a, b| {
        if g.end[b as usize] > g.end[a as usize] {
            b
        } else {
            a
        }
    }) else {
        return ObservedPath {
            segments: Vec::new(),
            compute: 0,
            stall: 0,
        };
    };
    let mut seen = vec![false; g.len()];
    let mut v = sink;
    while !std::mem::replace(&mut seen[v as usize], true) {
        let sv = g.start[v as usize];
        let released = |p: TaskIx, end: u64| end <= sv.saturating_add(tol) && g.start[p as usize] < sv;
        let data = g
            .preds(v)
            .iter()
            .filter(|&&p| released(p, g.end[p as usize]))
            .map(|&p| (g.end[p as usize], g.ids[p as usize], StallKind::DataWait, p));
        let core = g.core_prev[v as usize]
            .filter(|cp| released(cp.holder, cp.end))
            .map(|cp| (cp.end, g.ids[cp.holder as usize], StallKind::CoreWait, cp.holder));
        match data.chain(core).max_by_key(|&(end, id, kind, _)| (end, id, kind)) {
            Some((_, _, kind, p)) => {
                walk.push((v, kind));
                v = p;
            }
            None => {
                walk.push((v, StallKind::FrontGap));
                break;
            }
        }
    }
    walk.reverse();

    let mut frontier = g.t0;
    let (mut compute, mut stall) = (0, 0);
    let segments = walk
        .into_iter()
        .map(|(task, kind)| {
            let (s, e) = (g.start[task as usize], g.end[task as usize]);
            let seg = Segment {
                task,
                stall: s.saturating_sub(frontier),
                compute: e.saturating_sub(s.max(frontier)),
                kind,
            };
            compute += seg.compute;
            stall += seg.stall;
            frontier = frontier.max(e);
            seg
        })
        .collect();
    ObservedPath {
        segments,
        compute,
        stall,
    }
}
