//! Part 5, the scheduler loop per thread, from its phase records (swimlane level ≥ 3;
//! `../shared/reference/timing-analysis.md` §3, "Part 5"): time per phase and idle (the gaps
//! between work records), loops, finishes, logical tasks, ready-queue pops, and the fan-out and
//! fan-in each thread handled.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::adapter::{Phase, TimedTask};

/// The phases that count as work; the gaps between them are idle.
pub const WORK_PHASES: [&str; 3] = ["complete", "async_poll", "dispatch"];

/// One scheduler thread's loop.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadLoop {
    /// The thread.
    pub thread: u32,
    /// ns per work phase, in [`WORK_PHASES`] order.
    pub phase_ns: [u64; 3],
    /// ns between work records.
    pub idle_ns: u64,
    /// Largest `loop_iter`.
    pub loops: u64,
    /// Σ `tasks_processed` over `complete` records.
    pub finishes: u64,
    /// Tasks whose final finish was on a core this thread serves.
    pub logical_tasks: u64,
    /// Σ `pop_hit` over `dispatch` records.
    pub pop_hit: u64,
    /// Σ `pop_miss` over `dispatch` records.
    pub pop_miss: u64,
    /// Dependency pairs out of the tasks billed to this thread.
    pub fanout: u64,
    /// Dependency pairs into the tasks billed to this thread.
    pub fanin: u64,
}

impl ThreadLoop {
    /// Work + idle.
    pub fn total_ns(&self) -> u64 {
        self.phase_ns.iter().sum::<u64>() + self.idle_ns
    }

    /// Mean loop iteration, ns (0 without loops).
    pub fn ns_per_loop(&self) -> f64 {
        if self.loops == 0 {
            0.0
        } else {
            self.total_ns() as f64 / self.loops as f64
        }
    }

    /// The phase (or idle) with the most time.
    pub fn dominant(&self) -> &'static str {
        let mut best = ("idle", self.idle_ns);
        for (name, ns) in WORK_PHASES.iter().zip(self.phase_ns) {
            if ns > best.1 {
                best = (name, ns);
            }
        }
        best.0
    }
}

/// The loop of every thread that has phase records, by thread. Logical tasks go to the thread
/// of each task's row with the latest finish (when no row maps to a thread, `finishes` stands
/// in); fan-out and fan-in go to the thread of each task's first row.
pub fn per_thread(phases: &[Phase], rows: &[TimedTask], edges: &[(u64, u64)]) -> Vec<ThreadLoop> {
    let mut by_thread: BTreeMap<u32, Vec<&Phase>> = BTreeMap::new();
    for p in phases {
        by_thread.entry(p.thread).or_default().push(p);
    }
    // Per task: (latest finish, its thread) and the thread of its first row.
    let mut final_thread: FxHashMap<u64, (u64, Option<u32>)> = FxHashMap::default();
    let mut first_thread: FxHashMap<u64, Option<u32>> = FxHashMap::default();
    for r in rows {
        first_thread.entry(r.id).or_insert(r.sched_thread);
        let finish = r.finish_ns.unwrap_or(0);
        let e = final_thread.entry(r.id).or_insert((finish, r.sched_thread));
        if finish > e.0 {
            *e = (finish, r.sched_thread);
        }
    }
    let mut logical: FxHashMap<u32, u64> = FxHashMap::default();
    for (_, thread) in final_thread.values() {
        if let Some(t) = thread {
            *logical.entry(*t).or_default() += 1;
        }
    }
    let mut fanout: FxHashMap<u32, u64> = FxHashMap::default();
    let mut fanin: FxHashMap<u32, u64> = FxHashMap::default();
    for (p, s) in edges {
        if let Some(Some(t)) = first_thread.get(p) {
            *fanout.entry(*t).or_default() += 1;
        }
        if let Some(Some(t)) = first_thread.get(s) {
            *fanin.entry(*t).or_default() += 1;
        }
    }
    let any_mapped = !logical.is_empty();

    by_thread
        .into_iter()
        .filter_map(|(thread, mut records)| {
            records.retain(|p| WORK_PHASES.contains(&p.kind.as_str()));
            if records.is_empty() {
                return None;
            }
            records.sort_by_key(|p| p.start_ns);
            let mut l = ThreadLoop {
                thread,
                phase_ns: [0; 3],
                idle_ns: 0,
                loops: 0,
                finishes: 0,
                logical_tasks: 0,
                pop_hit: 0,
                pop_miss: 0,
                fanout: fanout.get(&thread).copied().unwrap_or(0),
                fanin: fanin.get(&thread).copied().unwrap_or(0),
            };
            let mut prev_end: Option<u64> = None;
            for p in records {
                if let Some(pe) = prev_end {
                    l.idle_ns += p.start_ns.saturating_sub(pe);
                }
                let kind = WORK_PHASES
                    .iter()
                    .position(|k| *k == p.kind)
                    .expect("retained work phases");
                l.phase_ns[kind] += p.end_ns.saturating_sub(p.start_ns);
                match p.kind.as_str() {
                    // Saturating: the counters are the file's, and a sum that wrapped would
                    // print a small rate as if it were measured.
                    "complete" => l.finishes = l.finishes.saturating_add(p.tasks_processed),
                    "dispatch" => {
                        l.pop_hit = l.pop_hit.saturating_add(p.pop_hit);
                        l.pop_miss = l.pop_miss.saturating_add(p.pop_miss);
                    }
                    _ => {}
                }
                l.loops = l.loops.max(p.loop_iter);
                prev_end = Some(prev_end.map_or(p.end_ns, |pe| pe.max(p.end_ns)));
            }
            l.logical_tasks = if any_mapped {
                logical.get(&thread).copied().unwrap_or(0)
            } else {
                l.finishes
            };
            Some(l)
        })
        .collect()
}
