//! Which track every row goes on.
//!
//! - Task rows: a slice on their core's track in the Worker View (kernel start → end) and on
//!   their scheduler thread's track (dispatch → finish).
//! - Dummy rows: a [`MARKER_NS`] marker at `finish_ns` on their scheduler thread's track.
//! - Orchestrator rows: the submit span on the orchestrator track.
//!
//! Overlapping slices of one track are spread over lanes ([`crate::lanes`]).

use std::collections::HashMap;

use simpler_artifacts::swimlane::{SwimlaneFile, TaskRow};

use crate::lanes::{self, Interval};
use crate::tracks::{TrackId, Tracks, ORCHESTRATOR_PID, SCHEDULERS_PID, WORKERS_PID};

/// Length of a dummy task's marker slice, ns: dummies have no duration of their own, and a
/// marker needs some width to be clicked and to carry flow arrows.
pub const MARKER_NS: u64 = 20;

/// The track of every row, in row order, and the tracks themselves.
#[derive(Debug)]
pub struct Layout {
    /// Every track used.
    pub tracks: Tracks,
    /// Worker View track of each task row.
    pub worker: Vec<TrackId>,
    /// Scheduler track of each task row.
    pub scheduler: Vec<TrackId>,
    /// Scheduler track of each dummy row.
    pub dummy: Vec<TrackId>,
    /// Orchestrator track of each orchestrator row.
    pub orchestrator: Vec<TrackId>,
    /// Display name of each core that has rows.
    pub core_names: HashMap<u32, String>,
}

impl Layout {
    /// Places every row of `file`.
    pub fn new(file: &SwimlaneFile) -> Layout {
        let mut core_names: HashMap<u32, String> = file
            .header
            .cores
            .iter()
            .map(|c| (c.core_id, c.name.clone()))
            .collect();
        for r in &file.tasks {
            core_names
                .entry(r.core_id)
                .or_insert_with(|| r.core_type.core_name(r.core_id));
        }
        let mut tracks = Tracks::default();

        let orch_lanes = lanes::assign(
            &file
                .orchestrator
                .iter()
                .map(|r| Interval {
                    group: 0,
                    start: r.submit_start_ns,
                    end: r.submit_end_ns,
                })
                .collect::<Vec<_>>(),
        );
        let orchestrator = orch_lanes
            .iter()
            .map(|&lane| tracks.get(ORCHESTRATOR_PID, 0, lane, || "Orchestrator".into()))
            .collect();

        let sched_intervals: Vec<Interval> = file
            .tasks
            .iter()
            .map(|r| Interval {
                group: r.sched_thread.unwrap_or(0),
                start: r.dispatch_ns.unwrap_or(r.start_ns),
                end: r.finish_ns.unwrap_or(r.end_ns),
            })
            .chain(file.dummy_tasks.iter().map(|r| Interval {
                group: r.sched_thread,
                start: r.finish_ns,
                end: r.finish_ns.saturating_add(MARKER_NS),
            }))
            .collect();
        let sched_lanes = lanes::assign(&sched_intervals);
        drop(sched_intervals);
        let sched_name = |thread: u32| move || format!("Scheduler {thread}");
        let scheduler = file
            .tasks
            .iter()
            .zip(&sched_lanes)
            .map(|(r, &lane)| {
                tracks.get(
                    SCHEDULERS_PID,
                    r.sched_thread.unwrap_or(0),
                    lane,
                    sched_name(r.sched_thread.unwrap_or(0)),
                )
            })
            .collect();
        let dummy = file
            .dummy_tasks
            .iter()
            .zip(&sched_lanes[file.tasks.len()..])
            .map(|(r, &lane)| tracks.get(SCHEDULERS_PID, r.sched_thread, lane, sched_name(r.sched_thread)))
            .collect();
        drop(sched_lanes);

        let worker_lanes = lanes::assign(&file.tasks.iter().map(worker_interval).collect::<Vec<_>>());
        let worker = file
            .tasks
            .iter()
            .zip(&worker_lanes)
            .map(|(r, &lane)| tracks.get(WORKERS_PID, r.core_id, lane, || core_names[&r.core_id].clone()))
            .collect();

        Layout {
            tracks,
            worker,
            scheduler,
            dummy,
            orchestrator,
            core_names,
        }
    }
}

fn worker_interval(r: &TaskRow) -> Interval {
    Interval {
        group: r.core_id,
        start: r.start_ns,
        end: r.end_ns,
    }
}
