//! Part 5, the scheduler loop per thread, from its phase records (swimlane level ≥ 3;
//! `../shared/reference/timing-analysis.md` §3, "Part 5"): time per phase and idle (the gaps
//! between work records), loops, finishes, logical tasks, ready-queue pops, and the fan-out and
//! fan-in each thread handled.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::adapter::{Phase, TimedTask};

/// The phases that count as work; the gaps between them are idle.
pub const WORK_PHASES: [&str; 3] = ["complete", "async_poll", "dispatch"];

/// A sum of values from the records that says when it passed `u64::MAX`, instead of
/// saturating or wrapping into a figure that reads as measured (a hit count of 2^64 − 1 and a
/// hit rate of 100.0 % from counters of 2^64 − 1 each). Shown as the number, or `overflowed`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sum(Option<u64>);

impl Sum {
    /// The empty sum.
    pub const ZERO: Sum = Sum(Some(0));

    /// A sum of one value.
    pub fn of(v: u64) -> Sum {
        Sum(Some(v))
    }

    /// Adds `v`.
    pub fn add(&mut self, v: u64) {
        self.0 = self.0.and_then(|s| s.checked_add(v));
    }

    /// This sum plus `other`.
    pub fn plus(self, other: Sum) -> Sum {
        Sum(self.0.zip(other.0).and_then(|(a, b)| a.checked_add(b)))
    }

    /// The value; `None` when the sum overflowed.
    pub fn get(self) -> Option<u64> {
        self.0
    }

    /// The value, an overflowed sum taken as larger than any (to find the largest).
    pub fn rank(self) -> u128 {
        self.0.map_or(u128::MAX, u128::from)
    }
}

impl std::fmt::Display for Sum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(v) => std::fmt::Display::fmt(&v, f),
            None => f.pad("overflowed"),
        }
    }
}

impl std::iter::Sum for Sum {
    fn sum<I: Iterator<Item = Sum>>(iter: I) -> Sum {
        iter.fold(Sum::ZERO, Sum::plus)
    }
}

/// One scheduler thread's loop.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadLoop {
    /// The thread.
    pub thread: u32,
    /// ns per work phase, in [`WORK_PHASES`] order.
    pub phase_ns: [Sum; 3],
    /// ns between work records.
    pub idle_ns: Sum,
    /// Largest `loop_iter`.
    pub loops: u64,
    /// Σ `tasks_processed` over `complete` records.
    pub finishes: Sum,
    /// Tasks whose final finish was on a core this thread serves.
    pub logical_tasks: Sum,
    /// Σ `pop_hit` over `dispatch` records.
    pub pop_hit: Sum,
    /// Σ `pop_miss` over `dispatch` records.
    pub pop_miss: Sum,
    /// Dependency pairs out of the tasks billed to this thread.
    pub fanout: u64,
    /// Dependency pairs into the tasks billed to this thread.
    pub fanin: u64,
}

impl ThreadLoop {
    /// Work + idle.
    pub fn total_ns(&self) -> Sum {
        self.phase_ns.iter().copied().sum::<Sum>().plus(self.idle_ns)
    }

    /// Mean loop iteration, ns (0 without loops); `None` when the time overflowed.
    pub fn ns_per_loop(&self) -> Option<f64> {
        let total = self.total_ns().get()?;
        Some(if self.loops == 0 {
            0.0
        } else {
            total as f64 / self.loops as f64
        })
    }

    /// The phase (or idle) with the most time (an overflowed time counts as the most).
    pub fn dominant(&self) -> &'static str {
        let mut best = ("idle", self.idle_ns.rank());
        for (name, ns) in WORK_PHASES.iter().zip(self.phase_ns) {
            if ns.rank() > best.1 {
                best = (name, ns.rank());
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
                phase_ns: [Sum::ZERO; 3],
                idle_ns: Sum::ZERO,
                loops: 0,
                finishes: Sum::ZERO,
                logical_tasks: Sum::ZERO,
                pop_hit: Sum::ZERO,
                pop_miss: Sum::ZERO,
                fanout: fanout.get(&thread).copied().unwrap_or(0),
                fanin: fanin.get(&thread).copied().unwrap_or(0),
            };
            let mut prev_end: Option<u64> = None;
            for p in records {
                if let Some(pe) = prev_end {
                    l.idle_ns.add(p.start_ns.saturating_sub(pe));
                }
                let kind = WORK_PHASES
                    .iter()
                    .position(|k| *k == p.kind)
                    .expect("retained work phases");
                l.phase_ns[kind].add(p.end_ns.saturating_sub(p.start_ns));
                // Checked: the counters are the file's, and a sum that wrapped or saturated
                // would print a count and a rate as if they were measured.
                match p.kind.as_str() {
                    "complete" => l.finishes.add(p.tasks_processed),
                    "dispatch" => {
                        l.pop_hit.add(p.pop_hit);
                        l.pop_miss.add(p.pop_miss);
                    }
                    _ => {}
                }
                l.loops = l.loops.max(p.loop_iter);
                prev_end = Some(prev_end.map_or(p.end_ns, |pe| pe.max(p.end_ns)));
            }
            l.logical_tasks = if any_mapped {
                Sum::of(logical.get(&thread).copied().unwrap_or(0))
            } else {
                l.finishes
            };
            Some(l)
        })
        .collect()
}
