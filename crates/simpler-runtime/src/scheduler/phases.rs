//! The scheduler loop's phases, recorded at swimlane level ≥ 3 (`aicpu_scheduler_phases`).
//!
//! Phases of this runtime's loop: `dispatch` (pop a ready task, place it, hand it to its
//! cores; ends when the first kernel starts), `complete` (count a block off, complete the task
//! and release its consumers), `dummy_task` (a dummy completed inline), `advance` (ring
//! advance of a batch of consumed tasks; ours) and `idle` (from the first empty pop to the next
//! pop that finds work, yields and parks included; ours). A `dispatch` phase carries the pops
//! that hit and missed since the previous one; every phase the ready-queue depth per shape
//! `[aic, aiv, mix]` when it began and ended.

use super::super::collectors::swimlane::{Phase, PhaseKind, Row, SwimlaneProducer};
use crate::shared::RunShared;

/// Where a phase began: the run-clock time and the ready-queue depths `[aic, aiv, mix]` then.
pub(crate) type PhaseStart = (u64, [u32; 3]);

/// One scheduler thread's phase bookkeeping; inert unless phases are recorded.
pub(crate) struct PhaseLog {
    on: bool,
    loop_iter: u64,
    hits: u32,
    misses: u32,
    idle_since: Option<PhaseStart>,
}

impl PhaseLog {
    /// A log that records when `on`.
    pub fn new(on: bool) -> Self {
        PhaseLog {
            on,
            loop_iter: 0,
            hits: 0,
            misses: 0,
            idle_since: None,
        }
    }

    /// Whether phases are recorded.
    #[inline]
    pub fn on(&self) -> bool {
        self.on
    }

    /// A new loop iteration begins.
    #[inline]
    pub fn tick(&mut self) {
        self.loop_iter += u64::from(self.on);
    }

    /// The ready-queue depths now (`[0; 3]` when off).
    #[inline]
    pub fn depths(&self, shared: &RunShared) -> [u32; 3] {
        if self.on {
            shared.queue_depths()
        } else {
            [0; 3]
        }
    }

    /// A pop at `now_ns` found work (`hit`) or not; a hit after misses closes an idle phase.
    #[inline]
    pub fn popped(
        &mut self,
        hit: bool,
        now_ns: u64,
        lane: &mut Option<SwimlaneProducer>,
        shared: &RunShared,
        thread: u32,
    ) {
        if !self.on {
            return;
        }
        if !hit {
            self.misses += 1;
            if self.idle_since.is_none() {
                self.idle_since = Some((now_ns, shared.queue_depths()));
            }
            return;
        }
        self.hits += 1;
        if let (Some(since), Some(l)) = (self.idle_since.take(), lane.as_mut()) {
            self.push(l, shared, thread, PhaseKind::Idle, since, now_ns, 0, None);
        }
    }

    /// Records phase `kind` from `start` to `end_ns`, having handled `tasks` tasks.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        lane: &mut SwimlaneProducer,
        shared: &RunShared,
        thread: u32,
        kind: PhaseKind,
        start: PhaseStart,
        end_ns: u64,
        tasks: u32,
    ) {
        if self.on {
            self.push(lane, shared, thread, kind, start, end_ns, tasks, None);
        }
    }

    /// Records the inline completion of dummy task `task_id`, begun at `start`, ending now.
    pub fn record_dummy(
        &mut self,
        lane: &mut SwimlaneProducer,
        shared: &RunShared,
        thread: u32,
        task_id: u64,
        start: PhaseStart,
    ) {
        let end_ns = lane.clock.now();
        self.push(
            lane,
            shared,
            thread,
            PhaseKind::DummyTask,
            start,
            end_ns,
            1,
            Some(task_id),
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        lane: &mut SwimlaneProducer,
        shared: &RunShared,
        thread: u32,
        kind: PhaseKind,
        (start_ns, start_depths): PhaseStart,
        end_ns: u64,
        tasks: u32,
        task_id: Option<u64>,
    ) {
        let pops = (kind == PhaseKind::Dispatch).then(|| {
            let p = (self.hits, self.misses);
            (self.hits, self.misses) = (0, 0);
            p
        });
        lane.push(Row::Phase(
            thread,
            Phase {
                kind,
                start_ns,
                end_ns: end_ns.max(start_ns),
                loop_iter: self.loop_iter,
                tasks_processed: tasks,
                pops,
                task_id,
                shared_at_start: start_depths,
                shared_at_end: shared.queue_depths(),
            },
        ));
    }
}
