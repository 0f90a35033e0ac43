//! Parts 1 and 2 of the model: when is an engine *in overhead*, i.e. it has an idle core while
//! a task that could run on it is ready but not yet dispatched
//! (`../shared/reference/timing-analysis.md` §3, "Model").
//!
//! A sweep over the window `[w0, w1]`: per engine, `running` counts rows in `[start, end)`,
//! `ready` counts tasks in `[ready, dispatch)` (a MIX task for both engines), and `k` is the
//! number of distinct cores of the engine. An engine is in overhead while `k − running > 0` and
//! `ready > 0`; the system is in *all* overhead while every present engine is, and *has*
//! overhead while the engines with ready work are a non-empty set all of which have an idle
//! core. Every share is a percentage of the makespan.

use crate::adapter::{Engine, TimedTask};
use crate::tasks::{engine_ix, Tasks};

/// What the sweep found, ns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overhead {
    /// `w1 − w0`.
    pub makespan: u64,
    /// Distinct cores per engine (`[aic, aiv]`); an engine with none is absent.
    pub cores: [u32; 2],
    /// Time each engine was in overhead.
    pub engine: [u64; 2],
    /// Time every present engine was in overhead.
    pub all: u64,
    /// Time the engines with ready work all had an idle core.
    pub has: u64,
    /// Per engine, the maximal intervals `[a, b)` during which it had ready, undispatched work.
    pub ready_intervals: [Vec<(u64, u64)>; 2],
}

/// The verdict on the `has` share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// `has` ≥ 25 % of the makespan.
    SchedulerBound,
    /// `has` ≥ 8 %.
    PartiallySchedulerLimited,
    /// Less.
    ComputeOrDependencyBound,
}

impl Verdict {
    /// The verdict for a `has` share in percent.
    pub fn of(has_percent: f64) -> Verdict {
        if has_percent >= 25.0 {
            Verdict::SchedulerBound
        } else if has_percent >= 8.0 {
            Verdict::PartiallySchedulerLimited
        } else {
            Verdict::ComputeOrDependencyBound
        }
    }

    /// The original's wording.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::SchedulerBound => "SCHEDULER-BOUND",
            Verdict::PartiallySchedulerLimited => "PARTIALLY SCHEDULER-LIMITED",
            Verdict::ComputeOrDependencyBound => "COMPUTE/DEPENDENCY-BOUND",
        }
    }
}

impl Overhead {
    /// `part` as a percentage of the makespan (0 for an empty one).
    pub fn percent(&self, part: u64) -> f64 {
        if self.makespan == 0 {
            0.0
        } else {
            part as f64 * 100.0 / self.makespan as f64
        }
    }

    /// The verdict on [`Overhead::has`].
    pub fn verdict(&self) -> Verdict {
        Verdict::of(self.percent(self.has))
    }

    /// Of `[a, b)`, the time engine `e` had ready, undispatched work.
    pub fn ready_within(&self, e: Engine, a: u64, b: u64) -> u64 {
        let iv = &self.ready_intervals[engine_ix(e)];
        let first = iv.partition_point(|&(_, end)| end <= a);
        iv[first..]
            .iter()
            .take_while(|&&(start, _)| start < b)
            .map(|&(start, end)| end.min(b).saturating_sub(start.max(a)))
            .sum()
    }
}

/// Sweeps `rows` and `tasks` (see the module doc).
pub fn sweep(rows: &[TimedTask], tasks: &Tasks) -> Overhead {
    let (w0, w1) = (tasks.w0, tasks.w1);
    let clamp = |t: u64| t.clamp(w0, w1);
    let mut cores = [Vec::new(), Vec::new()];
    // (time, engine, running delta, ready delta)
    let mut events: Vec<(u64, usize, i64, i64)> = Vec::with_capacity(rows.len() * 2 + tasks.spans.len() * 2);
    for r in rows {
        let e = engine_ix(r.engine);
        cores[e].push(r.core);
        let (a, b) = (clamp(r.start_ns), clamp(r.end_ns));
        if a < b {
            events.push((a, e, 1, 0));
            events.push((b, e, -1, 0));
        }
    }
    for s in &tasks.spans {
        let (a, b) = (clamp(s.ready), clamp(s.dispatch));
        if a < b {
            for e in 0..2 {
                if s.engines[e] {
                    events.push((a, e, 0, 1));
                    events.push((b, e, 0, -1));
                }
            }
        }
    }
    events.sort_unstable_by_key(|ev| ev.0);
    let k: [u32; 2] = cores.map(|mut c| {
        c.sort_unstable();
        c.dedup();
        c.len() as u32
    });
    let present: Vec<usize> = (0..2).filter(|&e| k[e] > 0).collect();
    let mut running = [0i64; 2];
    let mut ready = [0i64; 2];
    let mut out = Overhead {
        makespan: w1 - w0,
        cores: k,
        engine: [0; 2],
        all: 0,
        has: 0,
        ready_intervals: [Vec::new(), Vec::new()],
    };
    let mut ready_since: [Option<u64>; 2] = [None; 2];
    let mut i = 0;
    let mut t = w0;
    while i <= events.len() {
        let next = events.get(i).map_or(w1, |ev| ev.0);
        let len = next - t;
        if len > 0 {
            let idle = |e: usize| i64::from(k[e]) - running[e] > 0;
            let over: [bool; 2] = [0, 1].map(|e| k[e] > 0 && idle(e) && ready[e] > 0);
            for (total, _) in out.engine.iter_mut().zip(over).filter(|(_, o)| *o) {
                *total += len;
            }
            if !present.is_empty() && present.iter().all(|&e| over[e]) {
                out.all += len;
            }
            let with_ready: Vec<usize> = (0..2).filter(|&e| ready[e] > 0).collect();
            if !with_ready.is_empty() && with_ready.iter().all(|&e| k[e] > 0 && idle(e)) {
                out.has += len;
            }
        }
        if i == events.len() {
            break;
        }
        t = next;
        while i < events.len() && events[i].0 == t {
            let (_, e, dr, dq) = events[i];
            running[e] += dr;
            ready[e] += dq;
            i += 1;
        }
        for e in 0..2 {
            match (ready[e] > 0, ready_since[e]) {
                (true, None) => ready_since[e] = Some(t),
                (false, Some(since)) => {
                    out.ready_intervals[e].push((since, t));
                    ready_since[e] = None;
                }
                _ => {}
            }
        }
    }
    for (intervals, since) in out.ready_intervals.iter_mut().zip(ready_since) {
        if let Some(since) = since {
            intervals.push((since, w1));
        }
    }
    out
}
