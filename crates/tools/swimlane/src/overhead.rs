//! `--overhead`: the original converter's eight scheduler-overhead counter tracks
//! (`../shared/reference/timing-analysis.md` §4), in the AICPU Scheduler process (pid 2).
//!
//! Per engine (`aic`, `aiv`, those with rows), at every instant of the run's window (earliest
//! kernel start to latest end):
//! - `oh_<engine>_idle` (tid 9101 / 9111): its cores not running a kernel (cores with rows −
//!   running);
//! - `oh_<engine>_ready` (9102 / 9112): its tasks ready but not dispatched, between the latest
//!   end of their predecessors that have rows (else their own dispatch) and their first
//!   dispatch; a MIX task counts for both engines;
//! - `oh_<engine>_overhead` (9103 / 9113): 1 when it has an idle core and ready work;
//! - `oh_all_overhead` (9121): 1 when every engine is in overhead;
//! - `oh_has_overhead` (9122): 1 when the engines with ready work are not none and all have an
//!   idle core.
//!
//! A sample (`ph:"C"`, category `overhead`, args `{<name>: value}`) is written only when a
//! value changes. Nothing is drawn without deps.json.

use std::io::{self, Write};

use rustc_hash::FxHashMap;
use simpler_artifacts::swimlane::CoreType;

use crate::layout::SCHED_PID;
use crate::model::Run;
use crate::trace::{Arg, TraceWriter, Track};

/// Track of a counter name.
fn tid(name: &str) -> u32 {
    match name {
        "oh_aic_idle" => 9101,
        "oh_aic_ready" => 9102,
        "oh_aic_overhead" => 9103,
        "oh_aiv_idle" => 9111,
        "oh_aiv_ready" => 9112,
        "oh_aiv_overhead" => 9113,
        "oh_all_overhead" => 9121,
        _ => 9122,
    }
}

/// `+1`/`-1` steps of running kernels and ready-undispatched tasks per engine, by time.
#[derive(Default)]
struct Steps {
    running: [FxHashMap<u64, i64>; 2],
    ready: [FxHashMap<u64, i64>; 2],
    times: Vec<u64>,
}

impl Steps {
    fn add(map: &mut FxHashMap<u64, i64>, times: &mut Vec<u64>, from: u64, to: u64) {
        *map.entry(from).or_default() += 1;
        *map.entry(to).or_default() -= 1;
        times.extend([from, to]);
    }
}

/// Writes the overhead counters of `run`; returns the number of samples.
pub fn write_overhead<W: Write>(out: &mut TraceWriter<W>, run: &Run) -> io::Result<usize> {
    if run.deps.pairs.is_empty() || run.rows.is_empty() {
        return Ok(0);
    }
    let engine = |t: CoreType| usize::from(t == CoreType::Aiv);
    let mut cores: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    for r in &run.rows {
        cores[engine(r.core_type)].push(r.core_id);
    }
    for c in &mut cores {
        c.sort_unstable();
        c.dedup();
    }
    let engines: Vec<usize> = (0..2).filter(|&e| !cores[e].is_empty()).collect();
    let w0 = run.rows.iter().map(|r| r.start_ns).min().unwrap_or(0);
    let w1 = run.rows.iter().map(|r| r.end_ns).max().unwrap_or(0);
    let clamp = |t: u64| t.clamp(w0, w1.max(w0));

    let mut steps = Steps::default();
    steps.times.extend([w0, w1]);
    for r in &run.rows {
        let (s, e) = (clamp(r.start_ns), clamp(r.end_ns));
        if e > s {
            Steps::add(&mut steps.running[engine(r.core_type)], &mut steps.times, s, e);
        }
    }
    // Per task: first dispatch, latest end, engines.
    for &(task, ref t) in &run.ordered {
        let rows = &run.rows[t.start as usize..(t.start + t.len) as usize];
        let Some(dispatch) = rows.iter().filter_map(|r| r.dispatch_ns).min() else {
            continue;
        };
        let ends_of_preds = run
            .deps
            .preds(task)
            .filter(|&p| p != task)
            .filter_map(|p| run.rows_of(p).iter().map(|r| r.end_ns).max());
        let ready = ends_of_preds.max().unwrap_or(dispatch);
        let (r, d) = (clamp(ready), clamp(dispatch));
        if d > r {
            for e in 0..2 {
                if rows.iter().any(|row| engine(row.core_type) == e) {
                    Steps::add(&mut steps.ready[e], &mut steps.times, r, d);
                }
            }
        }
    }
    steps.times.sort_unstable();
    steps.times.dedup();

    let mut running = [0i64; 2];
    let mut ready = [0i64; 2];
    let mut last: FxHashMap<&'static str, i64> = FxHashMap::default();
    let mut samples = 0;
    let names: [[&str; 3]; 2] = [
        ["oh_aic_idle", "oh_aic_ready", "oh_aic_overhead"],
        ["oh_aiv_idle", "oh_aiv_ready", "oh_aiv_overhead"],
    ];
    for &t in &steps.times[..steps.times.len().saturating_sub(1)] {
        for &e in &engines {
            running[e] += steps.running[e].get(&t).copied().unwrap_or(0);
            ready[e] += steps.ready[e].get(&t).copied().unwrap_or(0);
        }
        let idle = |e: usize| cores[e].len() as i64 - running[e];
        let overhead = |e: usize| i64::from(idle(e) > 0 && ready[e] > 0);
        let mut values: Vec<(&'static str, i64)> = Vec::with_capacity(8);
        for &e in &engines {
            values.push((names[e][0], idle(e)));
            values.push((names[e][1], ready[e]));
            values.push((names[e][2], overhead(e)));
        }
        values.push((
            "oh_all_overhead",
            i64::from(engines.iter().all(|&e| overhead(e) == 1)),
        ));
        let with_work: Vec<usize> = engines.iter().copied().filter(|&e| ready[e] > 0).collect();
        let has = !with_work.is_empty() && with_work.iter().all(|&e| idle(e) > 0);
        values.push(("oh_has_overhead", i64::from(has)));
        for (name, v) in values {
            if last.get(name) != Some(&v) {
                let track = Track {
                    pid: SCHED_PID,
                    tid: tid(name),
                };
                out.counter(name, "overhead", track, t, &[(name, Arg::Int(v))])?;
                last.insert(name, v);
                samples += 1;
            }
        }
    }
    Ok(samples)
}
