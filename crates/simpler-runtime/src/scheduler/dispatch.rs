//! Running one ready task: claim a block, place it on free virtual cores, call the kernels,
//! then complete it now or, when a kernel occupies its core, once the core is released.

use crate::sync::Ordering;
use std::cell::{Cell, OnceCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use arrayvec::ArrayVec;
use simpler_artifacts::swimlane::{self as lane_rows, TaskRow};
use simpler_core::Tensor;

use super::cores::Cores;
use super::phases::{PhaseLog, PhaseStart};
use super::ready::{Claimed, LocalReady};
use crate::collectors::args_dump::{ArgsDumpProducer, Stage};
use crate::collectors::swimlane::{PhaseKind, Row, SwimlaneProducer};
use crate::fatal::{panic_message, FatalCode};
use crate::platform::kernel::KernelCtx;
use crate::platform::{CoreId, CoreType, TaskShape};
use crate::ring::slots::SlotEntry;
use crate::shared::{AdvanceBatch, RunShared};
use crate::slot::{shape_from_u8, SlotRef};

/// A scheduler thread's diagnostics producers (each `None` when its diagnostic is off).
pub(crate) struct ThreadProbes {
    /// Swimlane timing.
    pub lane: Option<SwimlaneProducer>,
    /// Args dump.
    pub dump: Option<ArgsDumpProducer>,
}

/// A scheduler thread's ready tasks, borrowed ([`ThreadState::lane`]).
pub(crate) enum LaneGuard<'a> {
    /// The only scheduler thread's own.
    Own(&'a mut LocalReady),
    /// One of several threads': locked.
    Locked(crate::sync::MutexGuard<'a, LocalReady>),
}

impl std::ops::Deref for LaneGuard<'_> {
    type Target = LocalReady;
    fn deref(&self) -> &LocalReady {
        match self {
            LaneGuard::Own(l) => l,
            LaneGuard::Locked(g) => g,
        }
    }
}

impl std::ops::DerefMut for LaneGuard<'_> {
    fn deref_mut(&mut self) -> &mut LocalReady {
        match self {
            LaneGuard::Own(l) => l,
            LaneGuard::Locked(g) => g,
        }
    }
}

/// A block whose kernels occupy their cores past their return: completed at `until`.
pub(crate) struct Held {
    pub until: Instant,
    slot: SlotRef,
    subtasks: u32,
    /// The task has this block only.
    one_block: bool,
    cores: ArrayVec<CoreId, 3>,
    rows: ArrayVec<TaskRow, 3>,
}

/// What one scheduler thread keeps between tasks.
pub(crate) struct ThreadState {
    pub thread: u32,
    pub cores: Cores,
    pub scratch: crate::slot::Consumers,
    /// The running task's tensor arguments, when they are unpacked (`hbg`, `PayloadRead::Packed`).
    pub args: Vec<Tensor>,
    pub batch: AdvanceBatch,
    /// This thread's ready tasks when it is the run's only scheduler thread. With several,
    /// they are in `RunShared::lanes`, where an idle thread can make it share them, and this
    /// holds only the consumers its last completions readied, until its next pop moves them
    /// into its lane ([`lane_of`]): one lock of the lane per task instead of two (a
    /// completion locked it to ready its consumers, the pop right after locked it again).
    pub own: LocalReady,
    pub probes: ThreadProbes,
    pub phases: PhaseLog,
    /// Blocks waiting for their cores' deadlines, in no particular order.
    pub held: Vec<Held>,
    /// Tasks of its lane's run this thread claimed, to run without locking the lane for each.
    pub claimed: Claimed,
}

/// Scheduler thread `thread`'s ready tasks: `own` when it is the only scheduler thread
/// (nobody could take them: no lock), else its entry of `RunShared::lanes`, locked, with the
/// consumers staged in `own` since the last call moved into it.
#[inline]
pub(crate) fn lane_of<'a>(shared: &'a RunShared, thread: u32, own: &'a mut LocalReady) -> LaneGuard<'a> {
    match shared.lanes.get(thread as usize) {
        Some(lane) => {
            let mut lane = lane.lock();
            lane.absorb(own, &shared.ready, &shared.sched_sleep);
            LaneGuard::Locked(lane)
        }
        None => LaneGuard::Own(own),
    }
}

impl ThreadState {
    /// Counts the rows of the blocks still held on their cores when the thread stops (their
    /// kernels had not ended: a stopped run): they are never written, and the swimlane
    /// outcome says how many.
    pub(crate) fn count_unfinished_rows(&self) {
        if let Some(l) = self.probes.lane.as_ref() {
            l.unfinished(self.held.iter().map(|h| h.rows.len() as u64).sum());
        }
    }

    /// Completes task `s` (slot `entry`) with this thread's buffers ([`RunShared::complete`]).
    ///
    /// # Safety
    ///
    /// As [`RunShared::complete`]: this thread finished the task, which is not completed yet,
    /// and holds no access to its payload.
    #[inline]
    unsafe fn complete(&mut self, shared: &RunShared, s: SlotRef, entry: SlotEntry<'_>) {
        // SAFETY: the caller's guarantee, passed on.
        unsafe {
            shared.complete(
                s,
                entry,
                self.thread as usize,
                &mut self.scratch,
                &mut self.batch,
                &mut self.own,
            )
        };
    }

    /// The next task this thread claimed, when it may run it without its lane: no consumer
    /// its last task readied is staged (that runs first, from the lane), a core can take the
    /// shape, and no peer is parked (what is left of the claim then goes back to the lane,
    /// [`LocalReady::give_back`]).
    #[inline]
    pub fn take_claimed(&mut self, shared: &RunShared) -> Option<SlotRef> {
        if self.claimed.is_empty()
            || !self.own.is_empty()
            || !self.cores.can_place(self.claimed.shape())
            || shared.sched_sleep.has_sleepers()
        {
            return None;
        }
        self.claimed.take()
    }

    /// The earliest deadline of a held block.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.held.iter().map(|h| h.until).min()
    }

    /// Completes every held block whose deadline has passed; true if any did.
    pub fn release_expired(&mut self, shared: &RunShared) -> bool {
        let now = Instant::now();
        let mut any = false;
        let mut i = 0;
        while i < self.held.len() {
            if self.held[i].until > now {
                i += 1;
                continue;
            }
            let h = self.held.swap_remove(i);
            for &core in &h.cores {
                self.cores.release(core);
            }
            finish_block(
                shared,
                self,
                h.slot,
                shared.entry(h.slot),
                h.subtasks,
                h.one_block,
                h.rows,
            );
            any = true;
        }
        any
    }
}

/// Runs one claimed block (or completes a dummy) of task `s`, whose slot is `entry`
/// (`shared.entry(s)`: its shared part and its payload from one lookup, which the completion
/// reuses). `popped`: when phases are recorded, the run-clock time of the pop and the
/// ready-queue depths then.
pub(crate) fn execute(
    shared: &RunShared,
    s: SlotRef,
    entry: SlotEntry<'_>,
    st: &mut ThreadState,
    popped: Option<PhaseStart>,
) {
    let thread = st.thread;
    let dispatch_ns = st.probes.lane.as_ref().map_or(0, |l| l.clock.now());
    let slot = entry.core();
    let shape = shape_from_u8(slot.shape.load(Ordering::Relaxed));
    if shape == TaskShape::Dummy {
        let id = popped.map(|_| {
            // SAFETY: this thread popped the dummy task (it was published to it), which
            // completes only below, after this read.
            unsafe { entry.read() }.id
        });
        // SAFETY: this thread popped the dummy task and holds no access to its payload.
        unsafe { st.complete(shared, s, entry) };
        if let (Some(l), Some(id), Some(start)) = (st.probes.lane.as_mut(), id, popped) {
            st.phases.record_dummy(l, shared, thread, id.raw(), start);
        }
        return;
    }
    // SAFETY: this thread popped the task (it was published to it), and the task cannot
    // complete before this thread counts its block finished (`finish_block`, after the last
    // use of `payload`): the payload protocol's rule 2 (`RingSlot` in `slot.rs`).
    let payload = unsafe { entry.read() };
    // A one-block task is dispatched once, by this thread: its block is 0 and its last
    // subtasks are the ones placed here, with no atomic read-modify-write to find either out.
    let one_block = payload.block_num == 1;
    let block = if one_block {
        0
    } else {
        slot.next_block.fetch_add(1, Ordering::AcqRel)
    };
    if block == 0 {
        // Before any block runs: the other blocks are queued only after this capture.
        if let Some(d) = st.probes.dump.as_mut() {
            d.capture(Stage::BeforeDispatch, &payload, shared);
        }
    }
    if block + 1 < payload.block_num {
        shared.push_ready(s);
    }
    let kernels = payload.kernels.as_array();
    let Some(placement) = st.cores.place(shape, &kernels, block) else {
        // The loop pops only shapes it can place; this is a bug, not a user error.
        shared.fatal.raise(
            FatalCode::KernelFailed,
            format!(
                "task {} block {block}: no free core on scheduler thread {thread}",
                payload.id
            ),
        );
        shared.wake_all();
        return;
    };
    let mut rows: ArrayVec<TaskRow, 3> = ArrayVec::new();
    let mut held_until: Option<Instant> = None;
    let mut cores: ArrayVec<CoreId, 3> = ArrayVec::new();
    let mut first_start = None;
    // A host-built graph's tensors are unpacked only when a kernel of the block reads one.
    let unpacked = OnceCell::new();
    let spare = Cell::new(std::mem::take(&mut st.args));
    for (sub, core) in placement.cores() {
        let kid = kernels[sub];
        let Some(def) = shared.kernels.get(kid) else {
            shared.fatal.raise(
                FatalCode::KernelFailed,
                format!("task {} names unregistered kernel {kid}", payload.id),
            );
            shared.wake_all();
            return;
        };
        let ctx = KernelCtx {
            tensors: payload.arg_tensors(&shared.arg_arena, &unpacked, &spare),
            tags: payload.tags,
            scalars: &payload.scalars,
            memory: &shared.memory,
            block_idx: block,
            block_num: payload.block_num,
            core,
            busy_until: Default::default(),
        };
        let start_ns = st.probes.lane.as_ref().map_or(0, |l| l.clock.now());
        first_start.get_or_insert(start_ns);
        let outcome = catch_unwind(AssertUnwindSafe(|| (def.body)(&ctx)));
        let mut end_ns = st.probes.lane.as_ref().map_or(0, |l| l.clock.now());
        let failure = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e.0),
            Err(panic) => Some(format!("panicked: {}", panic_message(panic.as_ref()))),
        };
        let row = |end_ns| TaskRow {
            task_id: payload.id.raw(),
            reg_task_id: 0,
            kernel_ids: kernels,
            func_id: kid,
            block_idx: block,
            block_num: payload.block_num,
            core_id: core.index,
            core_type: match core.core_type {
                CoreType::Aic => lane_rows::CoreType::Aic,
                CoreType::Aiv => lane_rows::CoreType::Aiv,
            },
            sched_thread: Some(thread),
            dispatch_ns: Some(dispatch_ns),
            receive_ns: start_ns,
            start_ns,
            end_ns,
            finish_ns: None,
        };
        if let Some(why) = failure {
            // The failed kernel ran from start_ns to end_ns: its row, and its siblings' of this
            // block, are written, finished when the failure was seen (the timeline's last word
            // on the task that stopped the run; they were lost without a count).
            if let Some(l) = st.probes.lane.as_mut() {
                rows.push(row(end_ns));
                for mut r in rows {
                    r.finish_ns = Some(end_ns);
                    l.push(Row::Task(r));
                }
            }
            shared.fatal.raise(
                FatalCode::KernelFailed,
                format!(
                    "kernel {} (func_id {kid}) of task {} block {block} on {core}: {why}",
                    def.name, payload.id
                ),
            );
            shared.wake_all();
            return;
        }
        if let Some(until) = ctx.busy_until.get() {
            st.cores.hold(core, until);
            cores.push(core);
            held_until = Some(held_until.map_or(until, |h| h.max(until)));
            if let Some(l) = st.probes.lane.as_ref() {
                end_ns = end_ns.max(l.clock.ns_at(until));
            }
        }
        if st.probes.lane.is_some() {
            rows.push(row(end_ns));
        }
    }
    if let (Some(l), Some(start), Some(popped)) = (st.probes.lane.as_mut(), first_start, popped) {
        st.phases
            .record(l, shared, thread, PhaseKind::Dispatch, popped, start, 1);
    }
    st.args = unpacked.into_inner().unwrap_or_else(|| spare.into_inner());
    let subtasks = placement.len() as u32;
    // `payload` is not used past this point: once the block is counted finished, another
    // thread may complete the task and the orchestrator reuse its slot.
    match held_until {
        Some(until) => st.held.push(Held {
            until,
            slot: s,
            subtasks,
            one_block,
            cores,
            rows,
        }),
        None => finish_block(shared, st, s, entry, subtasks, one_block, rows),
    }
}

/// One block's kernels have ended: count them off the task, complete the task when it was the
/// last block, and write the block's rows with their finish time. `one_block`: the task has
/// no other block (nothing to count). The caller holds no access to the task's payload.
fn finish_block(
    shared: &RunShared,
    st: &mut ThreadState,
    s: SlotRef,
    entry: SlotEntry<'_>,
    subtasks: u32,
    one_block: bool,
    rows: ArrayVec<TaskRow, 3>,
) {
    let complete_start = st.probes.lane.as_ref().map_or(0, |l| l.clock.now());
    let start_depths = st.phases.depths(shared);
    let slot = entry.core();
    debug_assert!(!one_block || slot.remaining.load(Ordering::Relaxed) == subtasks);
    if one_block || slot.remaining.fetch_sub(subtasks, Ordering::AcqRel) == subtasks {
        // Every block has finished (blocks write disjoint slices): one capture of the whole
        // outputs, before completion lets consumers run and the slot be reused.
        if let Some(d) = st.probes.dump.as_mut() {
            // SAFETY: this thread ran the task's last block (every other block finished
            // before: `remaining`, AcqRel), so the task was published to it, and it completes
            // only below, after this access ended.
            let payload = unsafe { entry.read() };
            d.capture(Stage::AfterCompletion, &payload, shared);
        }
        // SAFETY: as above; this function holds no access to the payload now.
        unsafe { st.complete(shared, s, entry) };
    }
    if let Some(l) = st.probes.lane.as_mut() {
        let finish_ns = l.clock.now();
        for mut r in rows {
            r.finish_ns = Some(finish_ns);
            l.push(Row::Task(r));
        }
        st.phases.record(
            l,
            shared,
            st.thread,
            PhaseKind::Complete,
            (complete_start, start_depths),
            finish_ns,
            1,
        );
    }
}
