//! The slices of the trace, one pass per kind of row.

use std::collections::HashMap;
use std::io::{self, Write};

use simpler_artifacts::swimlane::SwimlaneFile;

use crate::anchors::Anchors;
use crate::layout::{Layout, MARKER_NS};
use crate::names::Names;
use crate::trace::{Arg, Slice, TraceWriter};

/// How many slices of each kind were written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SliceCounts {
    /// Kernel slices in the Worker View (one per task row).
    pub task: usize,
    /// Dispatch → finish slices on scheduler tracks (one per task row).
    pub dispatch: usize,
    /// Dummy-task markers on scheduler tracks.
    pub dummy: usize,
    /// Submit spans on the orchestrator track.
    pub submit: usize,
}

/// Writes every slice: submits, scheduler dispatches, dummy markers, then kernel slices.
///
/// Kernel slices carry `task_id`, `task`, `func_id`, `block_idx`, `block_num`,
/// `sched_thread`, `duration_us` and, when deps.json was read, `fanin` and `fanout`.
pub fn write_slices<W: Write>(
    out: &mut TraceWriter<W>,
    file: &SwimlaneFile,
    layout: &Layout,
    anchors: &Anchors,
    names: &Names,
    with_degrees: bool,
) -> io::Result<SliceCounts> {
    let mut kernel_names: HashMap<i32, String> = HashMap::new();
    for r in &file.tasks {
        kernel_names
            .entry(r.func_id)
            .or_insert_with(|| names.name(r.func_id));
    }
    let mut counts = SliceCounts::default();

    for (r, &track) in file.orchestrator.iter().zip(&layout.orchestrator) {
        out.slice(&Slice {
            name: "submit",
            cat: "submit",
            track,
            ts_ns: r.submit_start_ns,
            dur_ns: r.submit_end_ns.saturating_sub(r.submit_start_ns),
            args: &[("task_id", Arg::Id(r.task_id)), ("task", Arg::Task(r.task_id))],
        })?;
        counts.submit += 1;
    }

    for (r, &track) in file.tasks.iter().zip(&layout.scheduler) {
        out.slice(&Slice {
            name: &kernel_names[&r.func_id],
            cat: "dispatch",
            track,
            ts_ns: r.dispatch_ns.unwrap_or(r.start_ns),
            dur_ns: r
                .finish_ns
                .unwrap_or(r.end_ns)
                .saturating_sub(r.dispatch_ns.unwrap_or(r.start_ns)),
            args: &[
                ("task_id", Arg::Id(r.task_id)),
                ("task", Arg::Task(r.task_id)),
                ("core", Arg::Str(&layout.core_names[&r.core_id])),
                ("block_idx", Arg::Int(r.block_idx.into())),
                (
                    "dispatch_to_finish_us",
                    Arg::Us(
                        r.finish_ns
                            .unwrap_or(r.end_ns)
                            .saturating_sub(r.dispatch_ns.unwrap_or(r.start_ns)),
                    ),
                ),
            ],
        })?;
        counts.dispatch += 1;
    }

    for (r, &track) in file.dummy_tasks.iter().zip(&layout.dummy) {
        out.slice(&Slice {
            name: "dummy",
            cat: "dummy",
            track,
            ts_ns: r.finish_ns,
            dur_ns: MARKER_NS,
            args: &[("task_id", Arg::Id(r.task_id)), ("task", Arg::Task(r.task_id))],
        })?;
        counts.dummy += 1;
    }

    for (r, &track) in file.tasks.iter().zip(&layout.worker) {
        let dur_ns = r.end_ns.saturating_sub(r.start_ns);
        let (fanin, fanout) = anchors.get(r.task_id).map_or((0, 0), |a| (a.fanin, a.fanout));
        let all = [
            ("task_id", Arg::Id(r.task_id)),
            ("task", Arg::Task(r.task_id)),
            ("func_id", Arg::Int(r.func_id.into())),
            ("block_idx", Arg::Int(r.block_idx.into())),
            ("block_num", Arg::Int(r.block_num.into())),
            ("sched_thread", Arg::Int(r.sched_thread.unwrap_or(0).into())),
            ("duration_us", Arg::Us(dur_ns)),
            ("fanin", Arg::Int(fanin.into())),
            ("fanout", Arg::Int(fanout.into())),
        ];
        let args = if with_degrees {
            &all[..]
        } else {
            &all[..all.len() - 2]
        };
        out.slice(&Slice {
            name: &kernel_names[&r.func_id],
            cat: "task",
            track,
            ts_ns: r.start_ns,
            dur_ns,
            args,
        })?;
        counts.task += 1;
    }
    Ok(counts)
}
