//! Our counter tracks, in their own process ([`COUNTERS_PID`], `simpler counters`) so the
//! original's pids and tids stay as the original draws them:
//!
//! - `busy_cores` (args `AIC`, `AIV`): cores running a kernel (start → end of every row);
//! - `tasks_in_flight` (args `ring0` … `ring3`, level 4): tasks submitted but not yet
//!   finished, per ring, from the end of each task's submit span to its last finish (a dummy
//!   task's marker end).
//!
//! A sample is written only when a value changes.

use rustc_hash::FxHashMap as HashMap;
use std::io::{self, Write};

use simpler_artifacts::swimlane::CoreType;

use crate::layout::{Layout, MarkerKind, COUNTERS_PID};
use crate::model::Run;
use crate::trace::{Arg, TraceWriter, Track};

/// Rings of a task id (`MAX_RINGS` of the runtime).
const RINGS: usize = 4;

const TRACK: Track = Track {
    pid: COUNTERS_PID,
    tid: 0,
};

/// The counter tracks' samples, worked out before any is written: they depend only on the
/// run and its layout, so [`CounterPlan::new`] can run while the slices are written.
pub struct CounterPlan {
    series: Vec<Series>,
}

/// One counter track's samples: at `times[i]`, the values `values[i * keys.len()..][..keys.len()]`.
struct Series {
    name: &'static str,
    keys: &'static [&'static str],
    times: Vec<u64>,
    values: Vec<i64>,
}

impl CounterPlan {
    /// The samples of `run`'s counter tracks; `None` without rows (no counters process).
    pub fn new(run: &Run, layout: &Layout) -> Option<CounterPlan> {
        if run.rows.is_empty() {
            return None;
        }
        let mut steps: Vec<(u64, usize, i64)> = Vec::with_capacity(2 * run.rows.len());
        for r in &run.rows {
            let kind = usize::from(r.core_type == CoreType::Aiv);
            steps.push((r.start_ns, kind, 1));
            steps.push((r.end_ns.max(r.start_ns), kind, -1));
        }
        let mut series = vec![sweep("busy_cores", &["AIC", "AIV"], steps)];
        if run.header.level.has_orch_phases() && !run.orch.is_empty() {
            series.push(sweep(
                "tasks_in_flight",
                &["ring0", "ring1", "ring2", "ring3"],
                in_flight(run, layout),
            ));
        }
        Some(CounterPlan { series })
    }
}

/// Writes the counter tracks `plan` holds; returns the number of samples.
pub fn write_counters<W: Write>(out: &mut TraceWriter<W>, plan: Option<&CounterPlan>) -> io::Result<usize> {
    let Some(plan) = plan else {
        return Ok(0);
    };
    out.process(COUNTERS_PID, "simpler counters", COUNTERS_PID)?;
    let mut samples = 0;
    for s in &plan.series {
        for (&t, values) in s.times.iter().zip(s.values.chunks_exact(s.keys.len())) {
            let args: Vec<(&str, Arg<'_>)> = s
                .keys
                .iter()
                .zip(values)
                .map(|(k, v)| (*k, Arg::Int(*v)))
                .collect();
            out.counter(s.name, "simpler", TRACK, t, &args)?;
        }
        samples += s.times.len();
    }
    Ok(samples)
}

/// `+1` at each task's submit end and `-1` at its last finish, per ring.
fn in_flight(run: &Run, layout: &Layout) -> Vec<(u64, usize, i64)> {
    let mut last_finish: HashMap<u64, u64> =
        HashMap::with_capacity_and_hasher(run.ordered.len(), Default::default());
    for r in &run.rows {
        if let Some(f) = r.finish_ns {
            let e = last_finish.entry(r.task_id).or_insert(f);
            *e = (*e).max(f);
        }
    }
    for m in layout.markers.iter().filter(|m| m.kind == MarkerKind::Dummy) {
        if let Some(t) = m.task {
            last_finish.entry(t).or_insert(m.start_ns + m.dur_ns);
        }
    }
    let mut steps = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for o in run.orch.iter().flatten() {
        let Some(&finish) = last_finish.get(&o.task_id) else {
            continue;
        };
        if !seen.insert(o.task_id) {
            continue;
        }
        let ring = ((o.task_id >> 32) as usize & 0xFF).min(RINGS - 1);
        steps.push((o.submit_end_ns, ring, 1));
        steps.push((finish.max(o.submit_end_ns), ring, -1));
    }
    steps
}

/// Sorts the steps (decrements first at equal times) and keeps a sample at every time the
/// values change.
fn sweep(name: &'static str, keys: &'static [&'static str], mut steps: Vec<(u64, usize, i64)>) -> Series {
    steps.sort_unstable_by_key(|&(t, k, d)| (t, d, k));
    let mut values = vec![0i64; keys.len()];
    let mut series = Series {
        name,
        keys,
        times: Vec::new(),
        values: Vec::new(),
    };
    let mut i = 0;
    while i < steps.len() {
        let t = steps[i].0;
        while i < steps.len() && steps[i].0 == t {
            values[steps[i].1] += steps[i].2;
            i += 1;
        }
        let last = series
            .values
            .len()
            .checked_sub(keys.len())
            .map(|at| &series.values[at..]);
        if last != Some(&values[..]) {
            series.times.push(t);
            series.values.extend_from_slice(&values);
        }
    }
    series
}
