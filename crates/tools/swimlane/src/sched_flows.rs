//! The scheduler's arrows (level ≥ 3), as the original converter draws them:
//!
//! - `complete`: from each of a task's anchors in the Worker View (at its end − 0.01 µs) and
//!   the Scheduler View (its finish − 0.01 µs) to the `complete` phase that saw the task's
//!   last finish (at that finish when the phase contains it, else at the phase's start).
//! - `complete→ready`: from the `complete` phase whose completed task satisfied a consumer's
//!   last fanin (at its end − 0.01 µs) to the consumer's earliest dispatch, on the
//!   dispatching thread; skipped when that dispatch is before the phase's end.
//! - `dispatch`: from the dispatching thread at each row's dispatch to the Worker View at the
//!   kernel's start, and to the Scheduler View at the dispatch.
//! - `submit→dispatch`: from the end of the task's submit span to each of its dispatches
//!   (not for host orchestration, whose clock is not the device's).
//!
//! The thread of a row is the scheduler thread that dispatched it (ours), else its core's
//! `core_to_thread` entry (the original's files).

use rustc_hash::FxHashMap as HashMap;
use std::io::{self, Write};

use simpler_artifacts::swimlane::OrchestratorSource;

use crate::completes::Completes;
use crate::layout::{core_track, orch_track, sched_track, Layout, FLOW_EPSILON_NS, WORKER_PID};
use crate::model::Run;
use crate::trace::{FlowEnd, TraceWriter};

/// How many scheduler arrows of each kind were drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchedFlowCounts {
    /// `complete` flows.
    pub complete: usize,
    /// `complete→ready` flows.
    pub complete_ready: usize,
    /// `dispatch` flows.
    pub dispatch: usize,
    /// `submit→dispatch` flows.
    pub submit_dispatch: usize,
}

fn end(track: crate::trace::Track, ts_ns: u64, bind: Option<u64>) -> FlowEnd {
    FlowEnd { track, ts_ns, bind }
}

/// Writes every scheduler arrow of `run`.
pub fn write_sched_flows<W: Write>(
    out: &mut TraceWriter<W>,
    run: &Run,
    layout: &Layout,
    completes: &Completes,
) -> io::Result<SchedFlowCounts> {
    let mut counts = SchedFlowCounts::default();
    if !run.header.level.has_sched_phases() || run.phases.is_empty() {
        return Ok(counts);
    }
    let completed = complete_flows(out, run, layout, completes, &mut counts)?;
    complete_ready_flows(out, run, completes, &completed, &mut counts)?;
    if !run.has_aicpu_data() {
        return Ok(counts);
    }
    let n = run.rows.len() as u64;
    for (i, r) in run.rows.iter().enumerate() {
        let (Some(dispatch), Some(thread)) = (r.dispatch_ns, r.sched_thread) else {
            continue;
        };
        let from = end(sched_track(thread, 0), dispatch, None);
        out.flow(
            "dispatch",
            from,
            end(core_track(WORKER_PID, r.core_id), r.start_ns, None),
            None,
        )?;
        let view = layout.sched_view[i];
        let to = end(
            view.unwrap_or(core_track(crate::layout::SCHED_VIEW_PID, r.core_id)),
            dispatch,
            view.map(|_| n + i as u64),
        );
        out.flow("dispatch", from, to, None)?;
        counts.dispatch += 2;
    }
    if run.header.orchestrator_source == OrchestratorSource::Host {
        return Ok(counts);
    }
    let mut submit_of: HashMap<u64, (u32, u64)> = HashMap::default();
    for (i, list) in run.orch.iter().enumerate() {
        for o in list.iter().filter(|o| o.task_id != u64::MAX) {
            submit_of.entry(o.task_id).or_insert((i as u32, o.submit_end_ns));
        }
    }
    for r in &run.rows {
        let (Some(dispatch), Some(thread), Some(&(orch, submit_end))) =
            (r.dispatch_ns, r.sched_thread, submit_of.get(&r.task_id))
        else {
            continue;
        };
        out.flow(
            "submit→dispatch",
            end(orch_track(orch), submit_end, None),
            end(sched_track(thread, 0), dispatch, None),
            None,
        )?;
        counts.submit_dispatch += 1;
    }
    Ok(counts)
}

/// The `complete` flows; returns the tasks each `(thread, phase)` completed, in task order.
fn complete_flows<W: Write>(
    out: &mut TraceWriter<W>,
    run: &Run,
    layout: &Layout,
    completes: &Completes,
    counts: &mut SchedFlowCounts,
) -> io::Result<HashMap<(u32, usize), Vec<u64>>> {
    let mut completed: HashMap<(u32, usize), Vec<u64>> = HashMap::default();
    let mut anchors = Vec::new();
    for &(task, ref task_rows) in &run.ordered {
        let rows = &run.rows[task_rows.start as usize..(task_rows.start + task_rows.len) as usize];
        let mut last: Option<(u64, usize)> = None;
        for (k, r) in rows.iter().enumerate() {
            if let Some(f) = r.finish_ns {
                if last.is_none_or(|(best, _)| f > best) {
                    last = Some((f, k));
                }
            }
        }
        let Some((finish, k)) = last else { continue };
        let Some(thread) = rows[k].sched_thread else {
            continue;
        };
        let Some((phase, contains)) = completes.find(thread, finish) else {
            continue;
        };
        completed.entry((thread, phase.phase)).or_default().push(task);
        let to = end(
            sched_track(thread, 0),
            if contains { finish } else { phase.start_ns },
            None,
        );
        // Both views' anchors, the Worker View's first.
        anchors.clear();
        layout.push_worker_anchors(run, task, Some(task_rows), &mut anchors);
        layout.push_scheduler_anchors(run, Some(task_rows), &mut anchors);
        for a in &anchors {
            let from = end(a.track, a.end_ns.saturating_sub(FLOW_EPSILON_NS), Some(a.id));
            out.flow("complete", from, to, None)?;
            counts.complete += 1;
        }
    }
    Ok(completed)
}

/// The `complete→ready` flows: walks the `complete` phases by end, counting each consumer's
/// satisfied fanin.
fn complete_ready_flows<W: Write>(
    out: &mut TraceWriter<W>,
    run: &Run,
    completes: &Completes,
    completed: &HashMap<(u32, usize), Vec<u64>>,
    counts: &mut SchedFlowCounts,
) -> io::Result<()> {
    if run.deps.pairs.is_empty() {
        return Ok(());
    }
    let mut satisfied: HashMap<u64, usize> = HashMap::default();
    for (end_ns, thread, c) in completes.by_end() {
        let Some(tasks) = completed.get(&(thread, c.phase)) else {
            continue;
        };
        let mut ready = Vec::new();
        for &task in tasks {
            for consumer in run.deps.succs(task) {
                let n = satisfied.entry(consumer).or_default();
                *n += 1;
                if *n == run.deps.preds(consumer).count() {
                    ready.push(consumer);
                }
            }
        }
        for consumer in ready {
            let first = run
                .rows_of(consumer)
                .iter()
                .filter_map(|r| Some((r.dispatch_ns?, r.sched_thread)))
                .min_by_key(|&(d, _)| d);
            let Some((dispatch, Some(to_thread))) = first else {
                continue;
            };
            if dispatch < end_ns {
                continue;
            }
            out.flow(
                "complete→ready",
                end(
                    sched_track(thread, 0),
                    end_ns.saturating_sub(FLOW_EPSILON_NS),
                    None,
                ),
                end(sched_track(to_thread, 0), dispatch, None),
                None,
            )?;
            counts.complete_ready += 1;
        }
    }
    Ok(())
}
