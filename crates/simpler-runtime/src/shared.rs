//! State shared by the orchestrator and the scheduler threads of one run, and the task
//! lifecycle protocol both sides drive: ready routing, completion, pin release, the consumed
//! check and in-order ring reclaim.
//!
//! Reclaim rules (reference §3.4): a task becomes CONSUMED when it is COMPLETED, every pin a
//! consumer claimed was released (RETAIN pins, when the consumer completes) **and** its own
//! scope ended. (The reference also pins a producer for each WAIT-only edge, from inference to
//! wiring; here the consumer is linked as the edge is found, under the one lock, and needs no
//! such pin: `LiveSink` in `orchestrator/submit.rs`.) A ring's `last_alive` then advances over
//! consecutive CONSUMED head slots ([`RingShared::advance`], in `ring/shared.rs`). CONSUMED is
//! not a state a fan keeps: [`Slot::consume`] leaves it PENDING for the slot's next task.

use crate::sync::{AtomicBool, AtomicU32, AtomicU64, Mutex, Ordering};
use std::time::Duration;

use crossbeam_utils::CachePadded;
use simpler_core::MAX_RINGS;

use crate::collectors::swimlane::SwimlaneShared;
use crate::config::{RingSizes, RuntimeKind};
use crate::fatal::FatalLatch;
use crate::memory::RunMemory;
use crate::orchestrator::scope_release::ScopeReleases;
use crate::platform::kernel::KernelRegistry;
use crate::platform::{Platform, TaskShape};
use crate::ring::arg_arena::ArgArena;
use crate::ring::shared::RingShared;
use crate::ring::slots::SlotEntry;
use crate::scheduler::ready::{LocalReady, ReadyBatch, ReadyPublisher, ReadyQueues};
use crate::slot::{shape_from_u8, Consumers, Fan, Slot, SlotRef, TaskState, SCOPE_BIT};
use crate::sync::Sleep;

/// How long an idle thread parks before re-checking its exit and deadlock conditions.
pub(crate) const PARK_TICK: Duration = Duration::from_millis(20);

/// Tasks ahead whose fan lines a scope end asks for ([`RunShared::release_scope_batch`]).
const SCOPE_PREFETCH_AHEAD: usize = 6;

/// Everything the threads of one run share.
pub(crate) struct RunShared {
    pub kind: RuntimeKind,
    pub sizes: RingSizes,
    pub rings: Vec<RingShared>,
    /// Ready tasks per shape, published in batches (`crates/simpler-runtime/src/scheduler/ready.rs`).
    pub ready: ReadyQueues,
    /// With several scheduler threads, each one's own ready tasks, behind a lock its owner
    /// alone takes except when an idle thread makes it share them (`scheduler_loop`), so a
    /// thread that runs a long kernel cannot hold ready tasks back from the others. Empty
    /// when the run has one scheduler thread, which keeps its tasks without a lock.
    pub lanes: Box<[CachePadded<Mutex<LocalReady>>]>,
    pub sched_sleep: Sleep,
    pub orch_sleep: Sleep,
    pub done_sleep: Sleep,
    pub fatal: FatalLatch,
    /// Tasks submitted in total (alloc tasks included); valid once `orch_done`.
    pub total_tasks: AtomicU64,
    /// Scheduler threads of the run (`CallConfig::effective_scheduler_threads`, at most the
    /// clusters): thread `i` counts its completions in `completions` slot `i`, the orchestrator
    /// (alloc tasks) in the last one.
    pub scheduler_threads: usize,
    /// Tasks finished, counted per thread (see [`Completions`]).
    pub completions: Completions,
    pub orch_done: AtomicBool,
    /// Bumped on every ring advance (the orchestrator's progress signal).
    pub reclaim_progress: AtomicU64,
    pub threads_exited: AtomicU32,
    /// Set while the orchestrator waits for room: schedulers then advance rings at once.
    pub orch_waiting: AtomicBool,
    /// `tmr`: batches of scope ends whose releases a scheduler with nothing to run applies
    /// (`crates/simpler-runtime/src/orchestrator/scope_release.rs`).
    pub(crate) scope_releases: ScopeReleases,
    /// Set while the orchestrator waits for any task to complete (a fan-in wider than the dep
    /// pool): every completion then wakes it.
    pub orch_awaits_completion: AtomicBool,
    pub memory: RunMemory,
    pub kernels: KernelRegistry,
    pub platform: Platform,
    /// Swimlane timing, when enabled.
    pub swimlane: Option<SwimlaneShared>,
    /// Args dump, when enabled.
    pub args_dump: Option<crate::collectors::args_dump::ArgsDumpShared>,
    /// When the first scheduler thread began its loop (the end of an `hbg` launch).
    pub first_scheduler_start: std::sync::OnceLock<std::time::Instant>,
    /// `hbg`: the argument lists longer than a slot holds (`ring/arg_arena.rs`).
    pub arg_arena: ArgArena,
    /// Test fault: a scheduler thread panics after its first task (`Faults::panic_in_scheduler`).
    pub panic_in_scheduler: bool,
}

/// Consumed tasks a scheduler thread accumulates before it advances their rings (ring advance
/// is the costliest step of retirement; batching it is what the original's deferred release
/// list does). The batch is flushed early when the orchestrator waits for room, and before the
/// thread parks.
pub(crate) const ADVANCE_BATCH: u32 = 32;

/// Rings with newly consumed tasks, not yet advanced.
#[derive(Default, Debug)]
pub(crate) struct AdvanceBatch {
    rings: u8,
    count: u32,
}

impl AdvanceBatch {
    /// True when no consumed task waits for its ring's advance.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.rings == 0
    }

    #[inline]
    fn mark(&mut self, ring: u8) {
        self.rings |= 1 << ring;
        self.count += 1;
    }
}

/// Tasks finished, one counter per counting thread. A counter has one writer, which adds with
/// a load and a store on a line of its own: one shared counter took a locked read-modify-write
/// per task on a line every scheduler thread wrote (30 % of `complete`'s samples with two
/// scheduler threads, hbg). Readers sum the counters: the sum never exceeds the tasks
/// finished, and reaches it once every thread's last store is visible (every reader re-reads in
/// a loop or reports a count, as the fatal messages do, that was true a moment before).
pub(crate) struct Completions {
    per_thread: Box<[CachePadded<AtomicU64>]>,
}

impl Completions {
    /// `threads` counters at zero.
    pub fn new(threads: usize) -> Self {
        Completions {
            per_thread: (0..threads)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
        }
    }

    /// Counts one task on counter `who`. Only one thread ever counts on a given counter.
    #[inline]
    pub fn count(&self, who: usize) {
        let c = &self.per_thread[who];
        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Release);
    }

    /// Tasks finished, as far as this thread sees.
    pub fn total(&self) -> u64 {
        self.per_thread.iter().map(|c| c.load(Ordering::Acquire)).sum()
    }
}

/// Origin of the dep-pool counters (entry 0 is the null link).
pub(crate) const DEP_POOL_ORIGIN: u64 = 1;

impl RunShared {
    pub fn new(
        kind: RuntimeKind,
        sizes: RingSizes,
        memory: RunMemory,
        kernels: KernelRegistry,
        platform: Platform,
        scheduler_threads: usize,
    ) -> RunShared {
        let rings: Vec<RingShared> = match kind {
            RuntimeKind::Tmr => (0..MAX_RINGS)
                .map(|r| RingShared::new(sizes.task_window[r], DEP_POOL_ORIGIN, true))
                .collect(),
            RuntimeKind::Hbg => vec![RingShared::new(sizes.task_window[0], DEP_POOL_ORIGIN, false)],
        };
        RunShared {
            kind,
            sizes,
            rings,
            ready: ReadyQueues::new(),
            lanes: (0..scheduler_threads)
                .filter(|_| scheduler_threads > 1)
                .map(|_| CachePadded::new(Mutex::new(LocalReady::default())))
                .collect(),
            sched_sleep: Sleep::new(),
            orch_sleep: Sleep::new(),
            done_sleep: Sleep::new(),
            fatal: FatalLatch::default(),
            total_tasks: AtomicU64::new(0),
            scheduler_threads,
            completions: Completions::new(scheduler_threads + 1),
            orch_done: AtomicBool::new(false),
            reclaim_progress: AtomicU64::new(0),
            threads_exited: AtomicU32::new(0),
            orch_waiting: AtomicBool::new(false),
            scope_releases: ScopeReleases::new(),
            orch_awaits_completion: AtomicBool::new(false),
            memory,
            kernels,
            platform,
            swimlane: None,
            args_dump: None,
            first_scheduler_start: std::sync::OnceLock::new(),
            arg_arena: ArgArena::default(),
            panic_in_scheduler: false,
        }
    }

    #[inline]
    pub fn slot(&self, s: SlotRef) -> &Slot {
        self.rings[s.ring as usize].slots.get(s.index)
    }

    /// The slot `s`, found once for its shared part and its payload ([`SlotEntry`]).
    #[inline]
    pub(crate) fn entry(&self, s: SlotRef) -> SlotEntry<'_> {
        self.rings[s.ring as usize].slots.entry(s.index)
    }

    /// Asks the CPU to start loading the slot `s` (see `RingSlot::prefetch`).
    #[inline]
    pub fn prefetch(&self, s: SlotRef) {
        self.rings[s.ring as usize].slots.prefetch(s.index)
    }

    /// Publishes one ready task (an SPMD task's next block) and wakes a scheduler.
    #[inline]
    pub fn push_ready(&self, s: SlotRef) {
        let mut one = ReadyBatch::new();
        one.push(s);
        self.ready.publish(self.shape_of(s), one);
        self.sched_sleep.notify_one();
    }

    /// Publishes `tasks` ready tasks, batched by shape (`TaskShape as usize`; the batches are
    /// left empty), then wakes schedulers once.
    /// `publisher` is the queues' ring publisher (a `tmr` orchestrator's; `hbg`'s publishes
    /// the whole graph before any scheduler runs, through the queues).
    pub fn publish_ready(
        &self,
        by_shape: &mut [ReadyBatch; TaskShape::ALL.len()],
        tasks: usize,
        mut publisher: Option<&mut ReadyPublisher>,
    ) {
        for shape in TaskShape::ALL {
            let batch = std::mem::take(&mut by_shape[shape as usize]);
            match publisher.as_deref_mut() {
                Some(p) => self.ready.publish_from(p, shape, batch),
                None => self.ready.publish(shape, batch),
            }
        }
        self.sched_sleep.notify_many(tasks);
    }

    #[inline]
    /// Where task `s` is dispatched (its slot's stored shape).
    pub(crate) fn shape_of(&self, s: SlotRef) -> TaskShape {
        shape_from_u8(self.slot(s).shape.load(Ordering::Relaxed))
    }

    /// Ready tasks published per shape `[aic, aiv, mix]` (a snapshot).
    pub fn queue_depths(&self) -> [u32; 3] {
        self.ready.depths()
    }

    /// True when some task is published.
    pub fn has_ready(&self) -> bool {
        self.ready.has_for(|_| true)
    }

    /// True when the run is over (all tasks completed after orchestration ended) or fatal.
    pub fn finished(&self) -> bool {
        self.fatal.is_set()
            || (self.orch_done.load(Ordering::Acquire)
                && self.completions.total() >= self.total_tasks.load(Ordering::Acquire))
    }

    /// Marks a task COMPLETED, readies its waiting consumers (into the completing thread's own
    /// `local` lanes), releases its RETAIN pins and checks whether it is consumed; counts it
    /// for scheduler thread `thread`. `scratch` is the caller's reusable buffer. `entry` is
    /// `self.entry(s)`, which the caller found already. A host-built graph's task is not
    /// marked: its completion only reads the slot ([`RunShared::complete_built`]).
    ///
    /// # Safety
    ///
    /// The caller finished the task in `s` (its last block, or a dummy task it popped), which
    /// is not completed yet, and holds no access to its payload: this reads the payload (the
    /// payload protocol's rule 2, `RingSlot` in `slot.rs`), and once the task is COMPLETED
    /// the slot may retire and the orchestrator write the payload of the slot's next task.
    pub unsafe fn complete(
        &self,
        s: SlotRef,
        entry: SlotEntry<'_>,
        thread: usize,
        scratch: &mut Consumers,
        batch: &mut AdvanceBatch,
        local: &mut LocalReady,
    ) {
        debug_assert!(
            std::ptr::eq(entry.core(), self.slot(s)),
            "complete: another slot's entry"
        );
        let slot = entry.core();
        if self.kind == RuntimeKind::Hbg {
            // SAFETY: this thread completes the slot's task (the caller's guarantee), in a
            // host-built graph's ring.
            unsafe { self.complete_built(slot, local) };
            self.task_finished(thread);
            return;
        }
        // Release the RETAIN pins first: once the state below says COMPLETED, any thread may
        // consume this task and the orchestrator may reuse the slot, so its payload must not be
        // read after that point (the access ends with this block).
        {
            // SAFETY: the task was published to this thread (it ran it) and is not COMPLETED
            // before this access ends, at the end of this block (the caller's guarantee).
            let payload = unsafe { entry.read() };
            for &p in payload.retained() {
                if self.add_and_check(p, 1) {
                    batch.mark(p.ring);
                }
            }
        }
        // Completed, and consumed when every pin is already back, under one lock: the check
        // took the lock a second time, after the consumers were readied (two more atomic
        // read-modify-writes per task on the scheduler's critical path). Consuming the task
        // before its consumers are readied is safe: they are in `scratch` now, and readying
        // them touches only their own slots, never this one, which the orchestrator may reuse
        // from here on.
        let window = self.window_of(s.ring);
        let (consumed, consumers) = {
            let mut fan = slot.fan.lock();
            let consumers = fan.complete();
            (Self::release_locked(slot, &mut fan, 0, window), consumers)
        };
        // The last user of `scratch`'s buffer, if it spilled, frees it here, outside the lock.
        *scratch = consumers;
        if consumed {
            batch.mark(s.ring);
        }
        for c in scratch.drain(..) {
            if self.slot(c).producer_completed() {
                local.push(self.shape_of(c), c, &self.ready, &self.sched_sleep);
            }
        }
        self.task_finished(thread);
        self.maybe_flush(batch);
    }

    /// The completion of a host-built graph's task in `slot`: readies its consumers into
    /// `local`, and writes nothing into the slot. Nothing reads a host-built graph's fan once
    /// the graph is built (no link, retirement or reuse comes after), so the fan is left as
    /// the build left it, PENDING with its consumer list, instead of COMPLETED with the list
    /// taken: with no store to the slot, the completion no longer waits for its cold line to
    /// be taken over from memory (the execution phase 0.86 of the time on independent tasks,
    /// 0.90 on a chain; `docs/performance.md`, item 97).
    ///
    /// # Safety
    ///
    /// `slot` is in a host-built graph's ring, and the caller completes its task (the
    /// single-owner rule, [`Slot::fan_exclusive`]).
    #[inline]
    unsafe fn complete_built(&self, slot: &Slot, local: &mut LocalReady) {
        // SAFETY: the caller's guarantee, passed on.
        unsafe {
            slot.fan_exclusive(|fan| {
                for &c in fan.consumers.iter() {
                    // A host-built graph's slots are cold when it runs (written by the build
                    // long before): start loading the consumer's lines now, so that the
                    // misses overlap the readying and the dispatch instead of coming one by
                    // one when it executes. A chain (the next task known only now) ran its
                    // execution phase in 0.92 of the time.
                    self.prefetch(c);
                    if self.slot(c).producer_completed() {
                        local.push(self.shape_of(c), c, &self.ready, &self.sched_sleep);
                    }
                }
            })
        }
    }

    /// Advances the rings a scheduler marked, when its batch is full or the orchestrator waits
    /// for room.
    #[inline]
    pub fn maybe_flush(&self, batch: &mut AdvanceBatch) {
        if batch.count >= ADVANCE_BATCH || (batch.count > 0 && self.orch_waiting.load(Ordering::Relaxed)) {
            self.flush_advances(batch);
        }
    }

    /// Advances every ring the batch marked.
    pub fn flush_advances(&self, batch: &mut AdvanceBatch) {
        if self.kind == RuntimeKind::Tmr {
            for r in 0..MAX_RINGS {
                if batch.rings & (1 << r) != 0 {
                    self.advance(r);
                }
            }
        }
        *batch = AdvanceBatch::default();
    }

    /// Counts one finished task for counter `who` (a scheduler thread's index, or
    /// [`RunShared::orchestrator_counter`] for alloc tasks completed inline), and wakes an
    /// orchestrator that waits for a completion. The end of the run is noticed by the
    /// scheduler that finds nothing left to run (`scheduler_loop`), not here: checking it per
    /// task summed every thread's counter, lines the other threads keep writing.
    #[inline]
    pub fn task_finished(&self, who: usize) {
        self.completions.count(who);
        // The counter's store and this load are not a Dekker pair (that took a locked
        // read-modify-write per task): an orchestrator that set its flag just after this load
        // misses this wake and re-reads the counters after its wait tick (2 ms), not later.
        if self.orch_awaits_completion.load(Ordering::SeqCst) {
            self.orch_sleep.notify_one();
        }
    }

    /// The counter of the orchestrator's own completions (alloc tasks).
    #[inline]
    pub fn orchestrator_counter(&self) -> usize {
        self.scheduler_threads
    }

    /// The end of a scope releases the scope bit of every task in it; rings are advanced once
    /// at the end instead of once per task.
    pub fn release_scope_batch(&self, tasks: impl Iterator<Item = SlotRef> + Clone) {
        let mut touched = [false; MAX_RINGS];
        // The fans' lines come from the cores that completed the tasks: ask for them a few
        // tasks ahead, so that the misses overlap instead of coming one lock at a time.
        let mut ahead = tasks.clone();
        for s in ahead.by_ref().take(SCOPE_PREFETCH_AHEAD) {
            self.slot(s).prefetch_fan();
        }
        for s in tasks {
            if let Some(a) = ahead.next() {
                self.slot(a).prefetch_fan();
            }
            if self.add_and_check(s, SCOPE_BIT) {
                touched[s.ring as usize] = true;
            }
        }
        if self.kind == RuntimeKind::Tmr {
            for (r, &t) in touched.iter().enumerate() {
                if t {
                    self.advance(r);
                }
            }
        }
    }

    /// Applies the oldest batch of scope releases the orchestrator handed over, if any
    /// (`crates/simpler-runtime/src/orchestrator/scope_release.rs`); whether there was one.
    pub fn run_scope_release(&self) -> bool {
        let Some(batch) = self.scope_releases.take() else {
            return false;
        };
        self.release_scope_batch(batch.iter().copied());
        self.scope_releases.give_back(batch);
        true
    }

    /// Adds `release` to the refcount, then moves COMPLETED → CONSUMED when every pin is back;
    /// true when it did.
    #[inline]
    fn add_and_check(&self, s: SlotRef, release: u32) -> bool {
        let slot = self.slot(s);
        Self::release_locked(slot, &mut slot.fan.lock(), release, self.window_of(s.ring))
    }

    /// The task window of `ring`, in slots.
    #[inline]
    pub(crate) fn window_of(&self, ring: u8) -> u32 {
        self.rings[ring as usize].mask + 1
    }

    /// [`RunShared::add_and_check`] on the fan of `slot`, which its caller holds locked.
    #[inline]
    pub(crate) fn release_locked(slot: &Slot, fan: &mut Fan, release: u32, window: u32) -> bool {
        fan.fanout_refcount = fan.fanout_refcount.wrapping_add(release);
        let ok = fan.state == TaskState::Completed && fan.fanout_refcount == fan.fanout_count;
        if ok {
            slot.consume(fan, window);
        }
        ok
    }

    /// Advances `ring` over its consumed head slots; when it moved, counts the progress and
    /// wakes the orchestrator (which may be waiting for room).
    pub fn advance(&self, ring: usize) {
        if self.rings[ring].advance() {
            self.reclaim_progress.fetch_add(1, Ordering::Release);
            self.orch_sleep.notify_one();
        }
    }

    /// Counts a run thread (the orchestrator or a scheduler) as exited, for the run's monitor.
    pub fn thread_exited(&self) {
        self.threads_exited.fetch_add(1, Ordering::AcqRel);
        self.done_sleep.notify_all();
    }

    /// Wakes everyone (fatal, shutdown).
    pub fn wake_all(&self) {
        self.sched_sleep.notify_all();
        self.orch_sleep.notify_all();
        self.done_sleep.notify_all();
    }
}

#[cfg(all(test, not(feature = "loom")))]
mod tests {
    use super::*;

    #[test]
    fn completions_counted_on_separate_counters_sum_to_every_task() {
        let c = std::sync::Arc::new(Completions::new(4));
        let counters: Vec<_> = (0..4)
            .map(|who| {
                let c = c.clone();
                std::thread::spawn(move || (0..10_000 + who).for_each(|_| c.count(who)))
            })
            .collect();
        counters.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(c.total(), 4 * 10_000 + 6);
    }
}
