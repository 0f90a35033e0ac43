//! Where everything goes: the original converter's processes and thread ids
//! (`../shared/reference/swimlane-format.md` §6), the Scheduler View's overlap lanes, the
//! Worker View's AICPU markers, and the event ids flows bind to.
//!
//! | pid | process | tids |
//! |---|---|---|
//! | 1 | `AICPU Orchestrator` / `AICPU <orchestrator_name>` / `Host Orchestrator` | 4000+i `Orch_i` (`Host_i`) |
//! | 2 | `AICPU Scheduler` (level ≥ 3) | 30000+10·t `Sched_t`, +1 its `resolve` lane; 3999 `shared_ready_queue (global)` |
//! | 3 | `Scheduler View` | 10000+10·core, overlap lanes +k |
//! | 4 | `Worker View` | 10000+10·core `AIC_n`/`AIV_n`; 19000+n `AICPU_n` |
//! | 10 | `simpler counters` (ours) | counter tracks only |
//! | 11 | `simpler hbg build` (ours) | 0 `graph build` |
//! | 12 | `simpler: WARNING` (ours; only when the run manifest warns or there is no deps.json) | 0, 1, ...: one per warning |
//!
//! Event ids: row `i` (in [`Run::rows`] order) is event `i` in the Worker View and `n + i` in
//! the Scheduler View (`n` rows); the AICPU markers follow from `2n`.

use rustc_hash::FxHashMap as HashMap;

use crate::deps::Deps;
use simpler_artifacts::swimlane::TaskRow;

use crate::model::{Run, TaskRows};
use crate::trace::Track;

/// The orchestrator's process.
pub const ORCH_PID: u32 = 1;
/// The scheduler threads' loop phases.
pub const SCHED_PID: u32 = 2;
/// Dispatch → finish per row, as the scheduler saw it.
pub const SCHED_VIEW_PID: u32 = 3;
/// Receive → end per row on its core, and the AICPU markers.
pub const WORKER_PID: u32 = 4;
/// Our counter tracks, apart from the original's processes.
pub const COUNTERS_PID: u32 = 10;
/// Our `hbg` graph-build steps, apart from the original's processes.
pub const BUILD_PID: u32 = 11;
/// The run manifest's warnings about the converted files (ours), sorted above every other
/// process; absent when there is nothing to warn about.
pub const WARNINGS_PID: u32 = 12;

/// The shared ready queue's counter track in [`SCHED_PID`].
pub const QUEUE_TID: u32 = 3999;
/// First `AICPU_<n>` track in the Worker View.
pub const AICPU_TID_BASE: u32 = 19_000;
/// Width of an AICPU marker whose start and end coincide, ns (the original's 0.02 µs).
pub const MARKER_MIN_NS: u64 = 20;
/// How far inside a slice's end a `complete` flow starts, ns (the original's 0.01 µs).
pub const FLOW_EPSILON_NS: u64 = 10;

/// Track of core `core` in the Worker View (lane 0 in the Scheduler View).
pub fn core_track(pid: u32, core: u32) -> Track {
    Track {
        pid,
        tid: 10_000 + 10 * core,
    }
}

/// Track of scheduler thread `thread` (`lane` 1 is its `resolve` lane).
pub fn sched_track(thread: u32, lane: u32) -> Track {
    Track {
        pid: SCHED_PID,
        tid: 30_000 + 10 * thread + lane,
    }
}

/// Track of orchestrator thread `i`.
pub fn orch_track(i: u32) -> Track {
    Track {
        pid: ORCH_PID,
        tid: 4000 + i,
    }
}

/// Track `AICPU_<n>` of the Worker View.
pub fn aicpu_track(n: u32) -> Track {
    Track {
        pid: WORKER_PID,
        tid: AICPU_TID_BASE + n,
    }
}

/// What an AICPU marker stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerKind {
    /// A task without kernels completed by a scheduler thread (`dummy_task` phase).
    Dummy,
    /// A task skipped by its predicate (`predicated_skip` phase).
    PredicatedSkip,
    /// A submit that created no running task (`alloc_tensors`).
    Alloc,
}

/// A Worker View marker on an `AICPU_<n>` track; it anchors its task's flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// Which kind.
    pub kind: MarkerKind,
    /// The task, when the record names one.
    pub task: Option<u64>,
    /// Its track.
    pub track: Track,
    /// Start, ns.
    pub start_ns: u64,
    /// Width, ns (at least [`MARKER_MIN_NS`]).
    pub dur_ns: u64,
    /// The record's loop iteration (phases; 0 for alloc).
    pub loop_iter: u64,
    /// Its event id.
    pub id: u64,
}

/// One flow anchor: a slice a flow starts or ends at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchor {
    /// The slice's track.
    pub track: Track,
    /// Its start, ns.
    pub start_ns: u64,
    /// Its end, ns.
    pub end_ns: u64,
    /// Its event id.
    pub id: u64,
    /// The row's core, for SPMD tie-breaks (`u32::MAX` for a marker).
    pub core: u32,
}

/// Placement of every row and marker.
#[derive(Debug)]
pub struct Layout {
    /// Scheduler View track of each row, `None` without both scheduler stamps.
    pub sched_view: Vec<Option<Track>>,
    /// Every AICPU marker, in the order they are written.
    pub markers: Vec<Marker>,
    /// Markers by task.
    pub markers_of: HashMap<u64, Vec<usize>>,
    /// `AICPU_<n>` tracks in the Worker View.
    pub aicpu_tracks: u32,
}

impl Layout {
    /// Places the rows and markers of `run`, its rows' Scheduler View lanes worked out
    /// before the run was resolved ([`scheduler_view_lanes`] of the rows in
    /// [`crate::model::sort_rows`]'s order, which is the run's).
    ///
    /// Panics if `sched_view` does not have one lane per row.
    pub fn new(run: &Run, sched_view: Vec<Option<Track>>) -> Layout {
        assert_eq!(sched_view.len(), run.rows.len(), "one Scheduler View lane a row");
        let sched_threads = run.aicpu_scheduler_threads();
        let mut markers = Vec::new();
        let mut next_id = 2 * run.rows.len() as u64;
        for (thread, list) in run.phases.iter().enumerate() {
            for p in list {
                let kind = match p.kind.as_str() {
                    "dummy_task" => MarkerKind::Dummy,
                    "predicated_skip" => MarkerKind::PredicatedSkip,
                    _ => continue,
                };
                markers.push(Marker {
                    kind,
                    task: p.task_id,
                    track: aicpu_track(thread as u32),
                    start_ns: p.start_ns,
                    dur_ns: p.end_ns.saturating_sub(p.start_ns).max(MARKER_MIN_NS),
                    loop_iter: p.loop_iter,
                    id: next_id,
                });
                next_id += 1;
            }
        }
        let marked: std::collections::HashSet<u64> = markers.iter().filter_map(|m| m.task).collect();
        for (i, list) in run.orch.iter().enumerate() {
            for o in list {
                if o.task_id == u64::MAX || !is_alloc(o.task_id, run, &run.deps, &marked) {
                    continue;
                }
                markers.push(Marker {
                    kind: MarkerKind::Alloc,
                    task: Some(o.task_id),
                    track: aicpu_track(sched_threads + i as u32),
                    start_ns: o.submit_start_ns,
                    dur_ns: o
                        .submit_end_ns
                        .saturating_sub(o.submit_start_ns)
                        .max(MARKER_MIN_NS),
                    loop_iter: 0,
                    id: next_id,
                });
                next_id += 1;
            }
        }
        let mut markers_of: HashMap<u64, Vec<usize>> = HashMap::default();
        for (i, m) in markers.iter().enumerate() {
            if let Some(t) = m.task {
                markers_of.entry(t).or_default().push(i);
            }
        }
        Layout {
            sched_view,
            markers,
            markers_of,
            aicpu_tracks: sched_threads + run.orch.len() as u32,
        }
    }

    /// Appends the Worker View anchors of `task`, whose rows are `rows` (`None`: it has
    /// none): every row of a plain task; for an SPMD task the row with the earliest receive
    /// per kernel (smaller core on ties); a task without rows, its AICPU markers.
    pub fn push_worker_anchors(&self, run: &Run, task: u64, rows: Option<&TaskRows>, out: &mut Vec<Anchor>) {
        let Some(t) = rows else {
            out.extend(self.markers_of.get(&task).into_iter().flatten().map(|&i| {
                let m = &self.markers[i];
                Anchor {
                    track: m.track,
                    start_ns: m.start_ns,
                    end_ns: m.start_ns + m.dur_ns,
                    id: m.id,
                    core: u32::MAX,
                }
            }));
            return;
        };
        let rows = t.start as usize..(t.start + t.len) as usize;
        let all = rows.map(|i| {
            let r = &run.rows[i];
            let a = Anchor {
                track: core_track(WORKER_PID, r.core_id),
                start_ns: r.receive_ns,
                end_ns: r.end_ns,
                id: i as u64,
                core: r.core_id,
            };
            (r.receive_ns, r.func_id, a)
        });
        collapse_into(t.spmd, all, out);
    }

    /// Appends the Scheduler View anchors of the task whose rows are `rows` (`None`: it has
    /// none, and so no anchors): as [`Layout::push_worker_anchors`] by dispatch, over the rows
    /// that have a Scheduler View slice (`end_ns` is the finish).
    pub fn push_scheduler_anchors(&self, run: &Run, rows: Option<&TaskRows>, out: &mut Vec<Anchor>) {
        let Some(t) = rows else {
            return;
        };
        let n = run.rows.len() as u64;
        let rows = t.start as usize..(t.start + t.len) as usize;
        let all = rows.filter_map(|i| {
            let r = &run.rows[i];
            let track = self.sched_view[i]?;
            let (dispatch, finish) = (r.dispatch_ns?, r.finish_ns?);
            let a = Anchor {
                track,
                start_ns: dispatch,
                end_ns: finish,
                id: n + i as u64,
                core: r.core_id,
            };
            Some((dispatch, r.func_id, a))
        });
        collapse_into(t.spmd, all, out);
    }
}

/// Appends all anchors of a plain task; of an SPMD one, the earliest per kernel (by the key,
/// then the core).
fn collapse_into(spmd: bool, anchors: impl Iterator<Item = (u64, i32, Anchor)>, out: &mut Vec<Anchor>) {
    if !spmd {
        out.extend(anchors.map(|(_, _, a)| a));
        return;
    }
    let mut best: Vec<(u64, i32, Anchor)> = Vec::new();
    for (key, func, a) in anchors {
        match best.iter_mut().find(|b| b.1 == func) {
            Some(b) if (key, a.core) < (b.0, b.2.core) => *b = (key, func, a),
            Some(_) => {}
            None => best.push((key, func, a)),
        }
    }
    out.extend(best.into_iter().map(|(_, _, a)| a));
}

/// Whether a submitted task is neither a regular, a dummy nor a predicated task: the
/// original's `alloc` (deps.json decides first: all kernel ids inactive means dummy).
fn is_alloc(task: u64, run: &Run, deps: &Deps, marked: &std::collections::HashSet<u64>) -> bool {
    if marked.contains(&task) {
        return false;
    }
    match deps.tasks.get(&task) {
        Some(t) if t.kernel_ids.is_some() => false,
        _ => !run.tasks().contains_key(&task),
    }
}

/// The Scheduler View track of each row: per core, rows in dispatch order go to the first
/// lane whose last slice finished by their dispatch (lane `k` is tid base + k).
pub fn scheduler_view_lanes(rows: &[TaskRow]) -> Vec<Option<Track>> {
    // Sorted by (core, dispatch, row): the row breaks ties as a stable sort by (core,
    // dispatch) would, and the keys travel with the sort instead of being looked up in the
    // rows at every comparison.
    let mut order: Vec<(u32, u64, u64, u32)> = rows
        .iter()
        .zip(0u32..)
        .filter_map(|(r, i)| Some((r.core_id, r.dispatch_ns?, r.finish_ns?, i)))
        .collect();
    order.sort_unstable_by_key(|&(core, dispatch, _, i)| (core, dispatch, i));
    let mut tracks = vec![None; rows.len()];
    let mut lane_finish: Vec<u64> = Vec::new();
    let mut core = None;
    for (core_id, d, finish, i) in order {
        if core != Some(core_id) {
            core = Some(core_id);
            lane_finish.clear();
        }
        let lane = match lane_finish.iter().position(|&f| f <= d) {
            Some(l) => l,
            None => {
                lane_finish.push(0);
                lane_finish.len() - 1
            }
        };
        lane_finish[lane] = finish;
        let base = core_track(SCHED_VIEW_PID, core_id);
        tracks[i as usize] = Some(Track {
            pid: SCHED_VIEW_PID,
            tid: base.tid + lane as u32,
        });
    }
    tracks
}
