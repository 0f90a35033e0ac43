//! The processes, tracks and slices of the trace, as the original converter draws them
//! (`../shared/reference/swimlane-format.md` §6; pids and tids in [`crate::layout`]).
//!
//! - Orchestrator (pid 1): `submit(<task>)` per submit span, category `orchestrator`, args
//!   `{phase, submit_idx, task_id}`.
//! - AICPU Scheduler (pid 2, level ≥ 3): every scheduler phase but the per-task markers, named
//!   `<phase>(<tasks_processed>)`, category `scheduler`, args `{phase, loop_iter,
//!   tasks_processed, "shared_at_start (aic,aiv,mix)", "shared_at_end (aic,aiv,mix)"}` plus
//!   `pop_hit`/`pop_miss` when recorded and, on `complete`, `finishes_processed` and
//!   `finish_rows_attributed`; the `shared_ready_queue` counter at the end of every
//!   `complete` and `dispatch` phase.
//! - Scheduler View (pid 3, when any row has both scheduler stamps): dispatch → finish per row.
//! - Worker View (pid 4): receive → end per row, and the AICPU markers `dummy(<task>)`,
//!   predicated skips and `alloc(<task>)`.

use std::io::{self, Write};

use simpler_artifacts::swimlane::{CoreType, OrchestratorSource, SchedPhase};

use crate::completes::Completes;
use crate::layout::{
    aicpu_track, core_track, orch_track, sched_track, Layout, MarkerKind, ORCH_PID, QUEUE_TID, SCHED_PID,
    SCHED_VIEW_PID, WORKER_PID,
};
use crate::model::Run;
use crate::names::{push_label, write_slice_name, Names, TaskLabel};
use crate::trace::{format_into, Arg, Slice, TraceWriter, Track};

/// How many slices of each kind were written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SliceCounts {
    /// Worker View slices (one per row).
    pub worker: usize,
    /// Scheduler View slices (one per row with both scheduler stamps).
    pub scheduler_view: usize,
    /// Scheduler phase slices.
    pub phases: usize,
    /// AICPU markers (dummy, predicated skip, alloc).
    pub markers: usize,
    /// Submit slices.
    pub submit: usize,
}

/// Rows formatted per chunk on one thread ([`TraceWriter::chunked`]): about a megabyte of
/// Worker View slices.
const ROWS_PER_CHUNK: usize = 2048;

/// Writes every process, track and slice of `run`.
pub fn write_slices<W: Write>(
    out: &mut TraceWriter<W>,
    run: &Run,
    layout: &Layout,
    completes: &Completes,
    names: &Names,
) -> io::Result<SliceCounts> {
    Ok(SliceCounts {
        submit: orchestrator(out, run, names.orchestrator_name())?,
        phases: scheduler_phases(out, run, completes)?,
        scheduler_view: scheduler_view(out, run, layout, names)?,
        worker: worker_view(out, run, names)?,
        markers: markers(out, run, layout, names)?,
    })
}

fn orchestrator<W: Write>(
    out: &mut TraceWriter<W>,
    run: &Run,
    orchestrator_name: Option<&str>,
) -> io::Result<usize> {
    if run.orch.is_empty() {
        return Ok(0);
    }
    let host = run.header.orchestrator_source == OrchestratorSource::Host;
    let process = match (host, orchestrator_name) {
        (true, _) => "Host Orchestrator".to_string(),
        (false, Some(name)) => format!("AICPU {name}"),
        (false, None) => "AICPU Orchestrator".to_string(),
    };
    out.process(ORCH_PID, &process, ORCH_PID)?;
    let thread_prefix = if host { "Host" } else { "Orch" };
    for i in 0..run.orch.len() as u32 {
        out.thread(orch_track(i), &format!("{thread_prefix}_{i}"))?;
    }
    let mut name = String::new();
    let mut n = 0;
    for (i, list) in run.orch.iter().enumerate() {
        for o in list {
            let known = o.task_id != u64::MAX;
            if known {
                format_into(&mut name, format_args!("submit({})", TaskLabel(o.task_id)));
            } else {
                format_into(&mut name, format_args!("submit({})", o.submit_idx));
            }
            out.slice(&Slice {
                name: &name,
                cat: "orchestrator",
                track: orch_track(i as u32),
                ts_ns: o.submit_start_ns,
                dur_ns: o.submit_end_ns.saturating_sub(o.submit_start_ns),
                id: None,
                args: &[
                    ("phase", Arg::Str("orch_submit")),
                    ("submit_idx", Arg::Uint(o.submit_idx)),
                    ("task_id", if known { Arg::Uint(o.task_id) } else { Arg::Int(-1) }),
                ],
            })?;
            n += 1;
        }
    }
    Ok(n)
}

/// Returns true if and only if the phase is drawn as a Worker View marker instead.
pub fn is_marker_phase(p: &SchedPhase) -> bool {
    matches!(p.kind.as_str(), "dummy_task" | "predicated_skip")
}

fn scheduler_phases<W: Write>(
    out: &mut TraceWriter<W>,
    run: &Run,
    completes: &Completes,
) -> io::Result<usize> {
    if !run.header.level.has_sched_phases() {
        return Ok(0);
    }
    out.process(SCHED_PID, "AICPU Scheduler", SCHED_PID)?;
    let mut name = String::new();
    let mut n = 0;
    for (thread, list) in run.phases.iter().enumerate() {
        let thread = thread as u32;
        let thread_name = format!("Sched_{thread}");
        out.thread(sched_track(thread, 0), &thread_name)?;
        if list.iter().any(|p| p.kind == "resolve") {
            out.thread(sched_track(thread, 1), &thread_name)?;
        }
        for (k, p) in list.iter().enumerate() {
            if is_marker_phase(p) {
                continue;
            }
            let mut args: Vec<(&str, Arg<'_>)> = vec![
                ("phase", Arg::Str(&p.kind)),
                ("loop_iter", Arg::Uint(p.loop_iter)),
                ("tasks_processed", Arg::Uint(p.tasks_processed)),
            ];
            let depths = p.shared_at_start.zip(p.shared_at_end);
            if let Some((start, end)) = depths {
                args.push(("shared_at_start (aic,aiv,mix)", Arg::Triple(start)));
                args.push(("shared_at_end (aic,aiv,mix)", Arg::Triple(end)));
            }
            if p.kind == "complete" {
                args.push(("finishes_processed", Arg::Uint(p.tasks_processed)));
                args.push((
                    "finish_rows_attributed",
                    Arg::Uint(completes.attributed(thread, k)),
                ));
            }
            for (key, value) in [("pop_hit", p.pop_hit), ("pop_miss", p.pop_miss)] {
                if let Some(v) = value {
                    args.push((key, Arg::Uint(v)));
                }
            }
            out.slice(&Slice {
                name: format_into(&mut name, format_args!("{}({})", p.kind, p.tasks_processed)),
                cat: "scheduler",
                track: sched_track(thread, u32::from(p.kind == "resolve")),
                ts_ns: p.start_ns,
                dur_ns: p.end_ns.saturating_sub(p.start_ns),
                id: None,
                args: &args,
            })?;
            n += 1;
            if let (true, Some((_, [aic, aiv, mix]))) =
                (matches!(p.kind.as_str(), "complete" | "dispatch"), depths)
            {
                out.counter(
                    "shared_ready_queue",
                    "queue",
                    Track {
                        pid: SCHED_PID,
                        tid: QUEUE_TID,
                    },
                    p.end_ns,
                    &[
                        ("AIC", Arg::Int(aic)),
                        ("AIV", Arg::Int(aiv)),
                        ("MIX", Arg::Int(mix)),
                    ],
                )?;
            }
        }
    }
    let queue = Track {
        pid: SCHED_PID,
        tid: QUEUE_TID,
    };
    out.thread(queue, "shared_ready_queue (global)")?;
    out.thread_sort(queue, 100)?;
    Ok(n)
}

/// `AIC_<n>` / `AIV_<n>`.
fn core_name(core_type: CoreType, core: u32) -> String {
    format!("{}_{core}", core_type.upper())
}

fn scheduler_view<W: Write>(
    out: &mut TraceWriter<W>,
    run: &Run,
    layout: &Layout,
    names: &Names,
) -> io::Result<usize> {
    if !run.has_aicpu_data() {
        return Ok(0);
    }
    out.process(SCHED_VIEW_PID, "Scheduler View", SCHED_VIEW_PID)?;
    let mut lanes: Vec<(u32, Track, CoreType)> = run
        .rows
        .iter()
        .zip(&layout.sched_view)
        .filter_map(|(r, t)| t.map(|t| (r.core_id, t, r.core_type)))
        .collect();
    lanes.sort_by_key(|&(core, t, _)| (core, t.tid));
    lanes.dedup_by_key(|&mut (_, t, _)| t);
    for (core, track, core_type) in lanes {
        out.thread(track, &core_name(core_type, core))?;
    }
    let n = run.rows.len() as u64;
    let counts = out.chunked(run.rows.len(), ROWS_PER_CHUNK, |chunk, out| {
        let mut name = String::new();
        let mut hint = String::new();
        let mut count = 0;
        for i in chunk.range {
            let (r, track) = (&run.rows[i], layout.sched_view[i]);
            let (Some(track), Some(dispatch), Some(finish)) = (track, r.dispatch_ns, r.finish_ns) else {
                continue;
            };
            write_slice_name(&mut name, names, r.func_id, r.task_id, run.spmd_rows[i]);
            let dur = finish.saturating_sub(dispatch);
            out.slice(&Slice {
                name: &name,
                cat: "event",
                track,
                ts_ns: dispatch,
                dur_ns: dur,
                id: Some(n + i as u64),
                args: &[
                    (
                        "event-hint",
                        Arg::Str(event_hint(&mut hint, r.task_id, r.func_id, r.core_id)),
                    ),
                    ("dispatch-time-us", Arg::Us(dispatch)),
                    ("finish-time-us", Arg::Us(finish)),
                    ("aicpu-duration-us", Arg::Us(dur)),
                    ("taskId", Arg::Uint(r.task_id)),
                ],
            })?;
            count += 1;
        }
        Ok(count)
    })?;
    Ok(counts.into_iter().sum())
}

/// `"Task:<task>, FuncId:<func>, CoreId:<core>"`.
fn event_hint(buf: &mut String, task: u64, func_id: i32, core: u32) -> &str {
    buf.clear();
    buf.push_str("Task:");
    push_label(buf, task);
    buf.push_str(", FuncId:");
    buf.push_str(itoa::Buffer::new().format(func_id));
    buf.push_str(", CoreId:");
    buf.push_str(itoa::Buffer::new().format(core));
    buf
}

/// `"<n>: [t1, r1t2]"`.
fn degree_hint<'b>(buf: &'b mut String, tasks: &[(u64, u64)]) -> &'b str {
    buf.clear();
    buf.push_str(itoa::Buffer::new().format(tasks.len()));
    buf.push_str(": [");
    for (k, &(_, t)) in tasks.iter().enumerate() {
        if k > 0 {
            buf.push_str(", ");
        }
        push_label(buf, t);
    }
    buf.push(']');
    buf
}

/// The run of `pairs` (sorted by their first member) whose first member is `task`, for
/// tasks asked in ascending order: `cursor` only moves forward.
fn run_of<'p>(pairs: &'p [(u64, u64)], cursor: &mut usize, task: u64) -> &'p [(u64, u64)] {
    while *cursor < pairs.len() && pairs[*cursor].0 < task {
        *cursor += 1;
    }
    let end = pairs[*cursor..]
        .iter()
        .position(|&(t, _)| t != task)
        .map_or(pairs.len(), |n| *cursor + n);
    &pairs[*cursor..end]
}

fn worker_view<W: Write>(out: &mut TraceWriter<W>, run: &Run, names: &Names) -> io::Result<usize> {
    out.process(WORKER_PID, "Worker View", WORKER_PID)?;
    let mut cores: Vec<(u32, CoreType)> = run.rows.iter().map(|r| (r.core_id, r.core_type)).collect();
    cores.sort_unstable();
    cores.dedup_by_key(|c| c.0);
    for (core, core_type) in cores {
        out.thread(core_track(WORKER_PID, core), &core_name(core_type, core))?;
    }
    let (succs, preds) = (&run.deps.pairs, run.deps.pairs_by_succ());
    out.chunked(run.rows.len(), ROWS_PER_CHUNK, |chunk, out| {
        let (mut name, mut hint, mut fanout, mut fanin) =
            (String::new(), String::new(), String::new(), String::new());
        // Rows are in ascending task order: the successor and predecessor lists are walked
        // along from the chunk's first row.
        let first = run.rows.get(chunk.range.start).map_or(0, |r| r.task_id);
        let mut succ_cursor = succs.partition_point(|&(t, _)| t < first);
        let mut pred_cursor = preds.partition_point(|&(t, _)| t < first);
        for i in chunk.range {
            let r = &run.rows[i];
            write_slice_name(&mut name, names, r.func_id, r.task_id, run.spmd_rows[i]);
            let dur = r.end_ns.saturating_sub(r.receive_ns);
            let fanout_list = run_of(succs, &mut succ_cursor, r.task_id);
            let fanin_list = run_of(preds, &mut pred_cursor, r.task_id);
            out.slice(&Slice {
                name: &name,
                cat: "event",
                track: core_track(WORKER_PID, r.core_id),
                ts_ns: r.receive_ns,
                dur_ns: dur,
                id: Some(i as u64),
                args: &[
                    (
                        "event-hint",
                        Arg::Str(event_hint(&mut hint, r.task_id, r.func_id, r.core_id)),
                    ),
                    ("fanout-hint", Arg::Str(degree_hint(&mut fanout, fanout_list))),
                    ("fanin-hint", Arg::Str(degree_hint(&mut fanin, fanin_list))),
                    ("duration-us", Arg::Us(dur)),
                    ("kernel-duration-us", Arg::Us(r.end_ns.saturating_sub(r.start_ns))),
                    ("local_setup_us", Arg::Us(r.start_ns.saturating_sub(r.receive_ns))),
                    ("taskId", Arg::Uint(r.task_id)),
                ],
            })?;
        }
        Ok(())
    })?;
    Ok(run.rows.len())
}

fn markers<W: Write>(
    out: &mut TraceWriter<W>,
    run: &Run,
    layout: &Layout,
    names: &Names,
) -> io::Result<usize> {
    for n in 0..layout.aicpu_tracks {
        out.thread(aicpu_track(n), &format!("AICPU_{n}"))?;
    }
    let mut name = String::new();
    for m in &layout.markers {
        let task = m.task.map_or(Arg::Null, Arg::Uint);
        let label = |name: &mut String, what: &str| match m.task {
            Some(t) => {
                format_into(name, format_args!("{what}({})", TaskLabel(t)));
            }
            None => {
                format_into(name, format_args!("{what}(unknown)"));
            }
        };
        let (extra_key, extra) = match m.kind {
            MarkerKind::Dummy => {
                label(&mut name, "dummy");
                ("phase", Arg::Str("dummy_task"))
            }
            MarkerKind::Alloc => {
                label(&mut name, "alloc");
                ("phase", Arg::Str("alloc"))
            }
            MarkerKind::PredicatedSkip => {
                let func = m.task.map_or(-1, |t| first_kernel(run, t));
                match m.task {
                    Some(t) => write_slice_name(
                        &mut name,
                        names,
                        func,
                        t,
                        run.tasks().get(&t).is_some_and(|x| x.spmd),
                    ),
                    None => label(&mut name, "task"),
                }
                ("predicated_pass", Arg::Bool(false))
            }
        };
        let args: &[(&str, Arg<'_>)] = if m.kind == MarkerKind::Alloc {
            &[
                (extra_key, extra),
                ("task_id", task),
                ("event-hint", Arg::Str(&name)),
            ]
        } else {
            &[
                ("loop_iter", Arg::Uint(m.loop_iter)),
                ("task_id", task),
                ("event-hint", Arg::Str(&name)),
                (extra_key, extra),
            ]
        };
        out.slice(&Slice {
            name: &name,
            cat: "event",
            track: m.track,
            ts_ns: m.start_ns,
            dur_ns: m.dur_ns,
            id: Some(m.id),
            args,
        })?;
    }
    Ok(layout.markers.len())
}

/// The first active kernel of `task` in deps.json (−1 when unknown).
fn first_kernel(run: &Run, task: u64) -> i32 {
    run.deps
        .tasks
        .get(&task)
        .and_then(|t| t.kernel_ids)
        .and_then(|k| k.into_iter().find(|&id| id >= 0))
        .unwrap_or(-1)
}
