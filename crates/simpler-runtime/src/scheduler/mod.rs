//! Scheduler threads: pop ready tasks, run their kernels on virtual cores, complete them.
//!
//! Each scheduler thread owns a round-robin share of the clusters and runs the kernels of its
//! own virtual cores itself (virtual cores are multiplexed onto these threads, [`cores`]). A
//! kernel that occupies its core (`KernelCtx::occupy`, e.g. the workload kernel `busy`) returns
//! at once and holds only that core until its deadline, so the thread keeps dispatching to its
//! other cores and the simulated cores run side by side ([`dispatch`]); the thread then pops
//! only shapes it has room for. An SPMD task is re-queued while blocks remain, so several
//! threads can run its blocks at once. Dummy tasks complete inline without a core. Idle threads
//! spin briefly, then park on the run's [`Sleep`](crate::sync::Sleep) until a task is pushed, a
//! held core's deadline comes, or the run ends. At swimlane level ≥ 3 the loop records its
//! phases ([`phases`]).

mod cores;
mod dispatch;
mod phases;
mod publication;
#[cfg(all(test, feature = "loom"))]
pub(crate) use publication::PublicationRing;
pub(crate) mod ready;

use std::sync::Arc;
use std::time::Instant;

use crate::collectors::swimlane::PhaseKind;
use crate::config::RuntimeKind;
use crate::shared::{AdvanceBatch, RunShared, PARK_TICK};
use crate::slot::shape_from_u8;
use crate::sync::Ordering;

pub(crate) use cores::Cores;
use dispatch::{ThreadProbes, ThreadState};
use phases::PhaseLog;

/// How many tasks ahead in its lane a scheduler thread of a host-built graph prefetches the
/// slot of (`RingSlot::prefetch`).
const PREFETCH_AHEAD: usize = 2;

/// Rounds of `yield_now` an idle scheduler makes before it parks.
const IDLE_YIELDS: u32 = 64;

/// The same for a lone scheduler thread while the orchestrator is still submitting (`tmr`):
/// its next ready tasks are moments away, and a parked scheduler costs the orchestrator a
/// wake (a futex call and an interrupt to the other core) on its own critical path. 64 rounds
/// parked a scheduler ≈ 1400 times in a 1M-task independent run, 512 rounds 25 times (tmr
/// 0.97–1.00 in 9 pairs; dep_gen's capture, beside its collector thread, +66 → +35 ns a
/// submit). Not beside other scheduler threads (a built graph's execution, `hbg`, always has
/// them): there an idle thread's rounds also take the work its busy peers hold
/// (`take_held_work`), and a chain's one ready task then moved between threads, up to 2.4
/// times as slow.
const IDLE_YIELDS_WHILE_SUBMITTING: u32 = 512;

/// An idle thread makes every other thread that holds ready tasks share them (publish them
/// to the shared queues, waking parked threads); true when some were. A thread holds its lock
/// only while it takes or readies a task, never while a kernel runs, so tasks a thread readied
/// or took in a batch wait at most until another thread goes idle (or its next park tick),
/// not until a long kernel on their holder returns.
fn take_held_work(shared: &RunShared, me: u32) -> bool {
    let mut shared_any = false;
    for (j, lane) in shared.lanes.iter().enumerate() {
        if j == me as usize {
            continue;
        }
        if let Some(mut held) = lane.try_lock() {
            if !held.is_empty() {
                held.share(&shared.ready, &shared.sched_sleep);
                shared_any = true;
            }
        }
    }
    shared_any
}

/// The body of one scheduler thread.
pub(crate) fn scheduler_loop(shared: Arc<RunShared>, thread_index: u32, thread_count: u32) {
    shared.first_scheduler_start.get_or_init(Instant::now);
    let lane = shared.swimlane.as_ref().map(|s| s.producer());
    let phases_on = lane.as_ref().is_some_and(|l| l.level.has_sched_phases());
    let mut st = ThreadState {
        thread: thread_index,
        cores: Cores::new(shared.platform, thread_index, thread_count),
        scratch: crate::slot::Consumers::new(),
        args: Vec::new(),
        batch: AdvanceBatch::default(),
        own: ready::LocalReady::default(),
        probes: ThreadProbes {
            lane,
            dump: shared.args_dump.as_ref().map(|s| s.producer()),
        },
        phases: PhaseLog::new(phases_on),
        held: Vec::new(),
        claimed: ready::Claimed::default(),
    };
    // A host-built graph's slots are cold when it runs; a tmr slot was written just before by
    // the orchestrator on the other core, and asking for it early only moved its lines sooner
    // (tmr independent 1.08x with it).
    let prefetch = shared.kind == RuntimeKind::Hbg;
    // Whether this thread claims tasks of its lane's runs to run without locking the lane for
    // each (`ready::Claimed`): only a host-built graph has runs, and only several scheduler
    // threads lock their lanes.
    let claims = prefetch && shared.lanes.len() > 1;
    let mut idle = 0u32;
    // Whether this thread passed on a wake-up it could not use since it last made progress
    // (at most once, so two threads with full cores cannot wake each other in a loop).
    let mut forwarded = false;
    loop {
        if shared.fatal.is_set() {
            break;
        }
        st.phases.tick();
        if !st.held.is_empty() && st.release_expired(&shared) {
            forwarded = false;
        }
        let popped_at = st.phases.on().then(|| {
            (
                st.probes.lane.as_ref().map_or(0, |l| l.clock.now()),
                st.phases.depths(&shared),
            )
        });
        let single = if shared.lanes.is_empty() {
            None
        } else {
            let cores = &st.cores;
            st.own.take_single(|shape| cores.can_place(shape))
        };
        // The task and its slot, looked up once for the prefetch and the dispatch.
        let task = if single.is_some() {
            single.map(|task| (task, shared.entry(task)))
        } else if let Some(task) = claims.then(|| st.take_claimed(&shared)).flatten() {
            if let Some(soon) = st.claimed.upcoming(PREFETCH_AHEAD) {
                shared.prefetch(soon);
            }
            Some((task, shared.entry(task)))
        } else {
            // Whether the last task readied consumers (staged, moved into the lane now).
            let readied = claims && !st.own.is_empty();
            let mut lane = dispatch::lane_of(&shared, thread_index, &mut st.own);
            if claims {
                lane.give_back(&mut st.claimed, &shared.ready, &shared.sched_sleep);
            }
            let task = if st.cores.any_held() {
                let cores = &st.cores;
                lane.next(&shared.ready, &shared.sched_sleep, |shape| cores.can_place(shape))
            } else {
                lane.next(&shared.ready, &shared.sched_sleep, |_| true)
            };
            task.map(|task| {
                let entry = shared.entry(task);
                if prefetch {
                    let shape = shape_from_u8(entry.core().shape.load(Ordering::Relaxed));
                    if let Some(soon) = lane.upcoming(shape, PREFETCH_AHEAD) {
                        shared.prefetch(soon);
                    }
                    if claims && !readied && !st.cores.any_held() {
                        lane.claim(shape, &mut st.claimed);
                    }
                }
                (task, entry)
            })
        };
        if let Some((now, _)) = popped_at {
            st.phases
                .popped(task.is_some(), now, &mut st.probes.lane, &shared, thread_index);
        }
        if let Some((task, entry)) = task {
            idle = 0;
            forwarded = false;
            dispatch::execute(&shared, task, entry, &mut st, popped_at);
            if shared.panic_in_scheduler {
                panic!("injected scheduler panic (Faults::panic_in_scheduler)");
            }
            continue;
        }
        // Nothing to run: reclaim work, timed as the advance phase (swimlane level >= 3): a
        // batch of scope-end releases the orchestrator handed over, else this thread's batched
        // ring advances.
        let releases = shared.scope_releases.has_queued();
        if releases || !st.batch.is_empty() {
            let start = popped_at.map(|_| {
                (
                    st.probes.lane.as_ref().map_or(0, |l| l.clock.now()),
                    st.phases.depths(&shared),
                )
            });
            let released = releases && shared.run_scope_release();
            if !released {
                shared.flush_advances(&mut st.batch);
            }
            if let (Some(l), Some(start)) = (st.probes.lane.as_mut(), start) {
                let end = l.clock.now();
                st.phases
                    .record(l, &shared, thread_index, PhaseKind::Advance, start, end, 1);
            }
            if released {
                idle = 0;
                continue;
            }
        }
        if shared.finished() {
            // Nothing is left to run: wake the parked threads and the run's monitor now, not at
            // their next tick (completions do not check for the run's end, `task_finished`).
            shared.sched_sleep.notify_all();
            shared.done_sleep.notify_all();
            break;
        }
        if let Some(deadline) = st.next_deadline() {
            // Cores are held: wait for the first deadline or for work this thread can place.
            if shared.has_ready() && !forwarded {
                // Ready work this thread has no room for: let another thread see it.
                shared.sched_sleep.notify_one();
                forwarded = true;
            }
            let wait = deadline.saturating_duration_since(Instant::now()).min(PARK_TICK);
            if !wait.is_zero() {
                let cores = &st.cores;
                shared.sched_sleep.sleep_unless(wait, || {
                    shared.finished() || shared.ready.has_for(|shape| cores.can_place(shape))
                });
            }
            continue;
        }
        if shared.scheduler_threads > 1 && take_held_work(&shared, thread_index) {
            continue;
        }
        idle += 1;
        let yields = if shared.scheduler_threads == 1 && !shared.orch_done.load(Ordering::Relaxed) {
            IDLE_YIELDS_WHILE_SUBMITTING
        } else {
            IDLE_YIELDS
        };
        if idle < yields {
            std::thread::yield_now();
            continue;
        }
        shared
            .sched_sleep
            .sleep_unless(PARK_TICK, || shared.has_ready() || shared.finished());
    }
    debug_assert!(
        st.claimed.is_empty() || shared.fatal.is_set(),
        "a run ends with every claimed task run"
    );
    st.count_unfinished_rows();
    drop(st); // hands its last rows and records over
    shared.thread_exited();
}
