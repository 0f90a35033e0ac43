//! The ready queues: tasks whose dependencies are met, by shape, on their way from the thread
//! that readied them to the scheduler thread that runs them, a batch at a time.
//!
//! Two levels, as in rayon's and crossbeam's work queues:
//!
//! - [`ReadyQueues`], shared by the run: per shape, a queue of [`ReadyBatch`]es of up to
//!   [`READY_BATCH`] tasks. Publishing a batch and taking one are one queue operation each
//!   (a compare-and-swap on a line the other side also writes), where a queue of single tasks
//!   paid that per task on both sides: 17 ns per push on the orchestrator and 41 ns per pop on
//!   the scheduler in a tmr profile of 1M independent tasks, the scheduler's largest item
//!   after the kernel call itself. A `tmr` orchestrator publishes through a ring of its own
//!   per shape instead ([`ReadyPublisher`], `publication.rs`), with no atomic
//!   read-modify-write on its side; a full ring's overflow goes to the queue.
//! - [`LocalReady`], one per scheduler thread: the batch it took, and the consumers its own
//!   completions readied (a chain's next task runs on the thread that finished its producer,
//!   with no queue in between). What a thread holds is given back to the shared queues as soon
//!   as it would wait instead (it pops nothing it can place), shared at once whenever another
//!   scheduler thread is parked, and shared on demand by an idle thread (with several
//!   scheduler threads the lanes sit behind a lock, `RunShared::lanes`, that their owner does
//!   not hold while a kernel runs; `scheduler_loop`'s `take_held_work`), so no task sits in a
//!   thread's hands while a core that could run it idles; a lane that fills is published
//!   whole. A thread of a host-built graph may also take a few tasks of its lane's run out
//!   of the lane, [`Claimed`], to run them without locking the lane for each; it gives back
//!   what is left of them when one readies a consumer, when it cannot place their shape, or
//!   when a peer is parked.
//!
//! The order: a thread runs what it holds first, by shape (dummies, MIX, AIC, AIV); within a
//! shape the consumers it readied come first, newest first (depth-first, as rayon's local
//! deques run), then the batch it took, in order; the shared queues are FIFO by batch, and a
//! shape's queue is taken before its ring (what schedulers gave back was taken once already;
//! the orchestrator's overflow, newer than the ring's batches, is there only while the
//! schedulers are a whole ring behind, 2048 tasks, and the task window bounds that). Depths (`ReadyQueues::depths`, for the
//! swimlane's scheduler phases) count the published tasks not yet taken.

use crate::sync::{AtomicU32, Ordering};

use arrayvec::ArrayVec;
use crossbeam_queue::SegQueue;
use crossbeam_utils::CachePadded;

use super::publication::{PublicationRing, Publisher};

use crate::platform::TaskShape;
use crate::slot::SlotRef;
use crate::sync::Sleep;

/// Ready tasks published or taken together: the orchestrator's publication batch, a
/// scheduler thread's lane, and what one pop hands over. 32 rather than 16 halves the queue
/// operations (and the shared depth counter's line moving between orchestrator and scheduler)
/// per task: tmr independent 0.86, hbg independent and fan-out 0.92–0.93 in 7 pairs, the
/// other workloads 0.98–1.01; 64 gained little more (0.96–0.97) and moved tmr tiled GEMM to 1.03.
pub const READY_BATCH: usize = 32;

/// How many submits a `tmr` orchestrator holds a ready task in its publication batch before
/// it publishes the batch unfilled. A batch is also published when it fills, when a scheduler
/// sleeps, before the orchestrator waits for room, and at the end of the orchestration; not at
/// every scope end, as before. A tiled GEMM readies one task per 8-task tile scope: published
/// at each scope end, the scheduler ran the tile's chain while the orchestrator was still
/// wiring its next tasks onto it, both sides taking the same fan locks and slot lines, and
/// paid a queue operation per ready task. Held for 256 submits, the scheduler works that far
/// behind: tmr tiled GEMM 0.71, chain 0.96, independent and fan-out 0.98–1.01 (7 pairs); 64
/// took fan-out to 1.14 (flushed halfway through its 66-task rounds, while their readers
/// were still being wired onto the writer), 512 and 1024 measured as 256.
pub const READY_HOLD: u64 = 256;

/// Up to [`READY_BATCH`] ready tasks of one shape.
pub(crate) type ReadyBatch = ArrayVec<SlotRef, READY_BATCH>;

/// Tasks of one shape that a host-built graph's build found ready, published and taken
/// together: a *run* ([`ReadyQueues::publish_run`]). Every task its build readies is ready at
/// launch (an independent workload's million), and taking them a batch of [`READY_BATCH`] at
/// a time cost a scheduler thread about half a microsecond a take beyond the queue operation
/// itself (the queue's cold block, the first slots of each batch without a prefetch): hbg
/// independent's execution phase took 0.85 of the time in runs of 512, tiled GEMM's 0.93, in
/// 9 pairs (`docs/performance.md`, item 99; 128 read 0.88, 2048 no better than 512 and 1.04
/// on tiled GEMM). `tmr` keeps its batches: its tasks become ready a few at a time.
pub(crate) const LAUNCH_RUN: usize = 512;

/// How many tasks of a run a scheduler thread of a host-built graph claims at once to run
/// without locking its lane for each ([`Claimed`]).
pub(crate) const CLAIM: usize = 8;

/// How many tasks a run must still hold after a claim: what peers can take from the lane
/// while its owner runs what it claimed.
pub(crate) const CLAIM_LEAVES: usize = 64;

/// What a scheduler thread takes from the shared queues.
// Returned by each take and moved into the lane at once, as the batch alone was before; a
// boxed batch would cost an allocation a take.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Taken {
    /// A batch (published by a `tmr` orchestrator, or given back by a scheduler thread).
    Batch(ReadyBatch),
    /// A host-built graph's run of tasks ready at launch ([`LAUNCH_RUN`]).
    Run(Vec<SlotRef>),
}

/// The order in which a scheduler takes shapes: dummies first (they are cheap), then MIX,
/// AIC, AIV.
const POP_ORDER: [TaskShape; 4] = [TaskShape::Dummy, TaskShape::Mix, TaskShape::Aic, TaskShape::Aiv];

/// Batches a `tmr` orchestrator's ring of each shape holds before it publishes through the
/// shape's queue instead: 2048 tasks, eight times what it holds back ([`READY_HOLD`]).
const PUBLICATION_RING: usize = 64;

/// The run's shared ready queues (see the module documentation).
pub(crate) struct ReadyQueues {
    /// Per shape (indexed by `TaskShape as usize`), batches in publication order. Unbounded:
    /// they grow in small blocks as tasks become ready (a queue sized to every slot in flight
    /// touched 16 bytes per slot per shape at construction, 64 MB for an hbg run of 1M tasks).
    queues: [SegQueue<ReadyBatch>; 4],
    /// Per shape, a host-built graph's runs of tasks ready at launch ([`LAUNCH_RUN`]), taken
    /// after the shape's batches. On the heap, as `orch`: held inline, their cache-line
    /// padding moved `RunShared`'s fields, and tmr tiled GEMM read 1.036 of before.
    runs: Box<[SegQueue<Vec<SlotRef>>; 4]>,
    /// Per shape, tasks published to `queues` and `runs` and not yet taken.
    depth: [AtomicU32; 4],
    /// A `tmr` orchestrator's rings, on the heap (their cache-line padding kept out of
    /// `RunShared`'s layout).
    orch: Box<OrchestratorRings>,
}

/// Per shape, a `tmr` orchestrator's batches ([`ReadyPublisher`]), taken after the shape's
/// queue (see the module documentation for the order).
struct OrchestratorRings {
    rings: [PublicationRing<ReadyBatch>; 4],
    /// Per shape, tasks published through the ring (stored by its publisher alone) and taken
    /// from it (by the schedulers), for [`ReadyQueues::depths`].
    ring_in: CachePadded<[AtomicU32; 4]>,
    ring_out: CachePadded<[AtomicU32; 4]>,
}

/// The one thread that publishes through the queues' rings: a `tmr` orchestrator.
pub(crate) struct ReadyPublisher {
    rings: [Publisher; 4],
    /// Per shape, tasks published through the ring.
    published: [u32; 4],
}

impl ReadyQueues {
    /// Empty queues.
    pub fn new() -> Self {
        ReadyQueues {
            queues: std::array::from_fn(|_| SegQueue::new()),
            runs: Box::new(std::array::from_fn(|_| SegQueue::new())),
            depth: std::array::from_fn(|_| AtomicU32::new(0)),
            orch: Box::new(OrchestratorRings {
                rings: std::array::from_fn(|_| PublicationRing::new(PUBLICATION_RING)),
                ring_in: CachePadded::new(std::array::from_fn(|_| AtomicU32::new(0))),
                ring_out: CachePadded::new(std::array::from_fn(|_| AtomicU32::new(0))),
            }),
        }
    }

    /// The rings' publisher, the first time it is asked for; `None` after.
    pub fn publisher(&self) -> Option<ReadyPublisher> {
        let [a, b, c, d] = &self.orch.rings;
        Some(ReadyPublisher {
            rings: [a.publisher()?, b.publisher()?, c.publisher()?, d.publisher()?],
            published: [0; 4],
        })
    }

    /// Publishes a batch of tasks of `shape` through `p`'s ring, or through the shape's queue
    /// when the ring is full (an empty batch is dropped).
    #[inline]
    pub fn publish_from(&self, p: &mut ReadyPublisher, shape: TaskShape, batch: ReadyBatch) {
        if batch.is_empty() {
            return;
        }
        let s = shape as usize;
        let n = batch.len() as u32;
        match self.orch.rings[s].push(&mut p.rings[s], batch) {
            Ok(()) => {
                p.published[s] = p.published[s].wrapping_add(n);
                self.orch.ring_in[s].store(p.published[s], Ordering::Relaxed);
            }
            Err(batch) => self.publish(shape, batch),
        }
    }

    /// Publishes a batch of tasks of `shape` (an empty one is dropped).
    #[inline]
    pub fn publish(&self, shape: TaskShape, batch: ReadyBatch) {
        if batch.is_empty() {
            return;
        }
        self.depth[shape as usize].fetch_add(batch.len() as u32, Ordering::Relaxed);
        self.queues[shape as usize].push(batch);
    }

    /// Publishes a host-built graph's run of tasks of `shape` ([`LAUNCH_RUN`]; an empty one is
    /// dropped).
    #[inline]
    pub fn publish_run(&self, shape: TaskShape, run: Vec<SlotRef>) {
        if run.is_empty() {
            return;
        }
        self.depth[shape as usize].fetch_add(run.len() as u32, Ordering::Relaxed);
        self.runs[shape as usize].push(run);
    }

    /// Takes the oldest batch (or else run) of the first shape in pop order that `can` accepts.
    #[inline]
    pub fn take(&self, can: impl Fn(TaskShape) -> bool) -> Option<(TaskShape, Taken)> {
        for shape in POP_ORDER {
            if can(shape) {
                let s = shape as usize;
                if let Some(b) = self.queues[s].pop() {
                    self.depth[s].fetch_sub(b.len() as u32, Ordering::Relaxed);
                    return Some((shape, Taken::Batch(b)));
                }
                if let Some(b) = self.orch.rings[s].pop() {
                    self.orch.ring_out[s].fetch_add(b.len() as u32, Ordering::Relaxed);
                    return Some((shape, Taken::Batch(b)));
                }
                // Asked first: a `tmr` run publishes none, and an empty queue's pop costs a
                // fence where asking costs two loads of lines nobody writes.
                if let Some(r) = (!self.runs[s].is_empty()).then(|| self.runs[s].pop()).flatten() {
                    self.depth[s].fetch_sub(r.len() as u32, Ordering::Relaxed);
                    return Some((shape, Taken::Run(r)));
                }
            }
        }
        None
    }

    /// Whether a task of a shape `can` accepts is published (a snapshot).
    pub fn has_for(&self, can: impl Fn(TaskShape) -> bool) -> bool {
        POP_ORDER.into_iter().any(|shape| {
            can(shape)
                && !(self.queues[shape as usize].is_empty()
                    && self.orch.rings[shape as usize].is_empty()
                    && self.runs[shape as usize].is_empty())
        })
    }

    /// Published tasks per shape `[aic, aiv, mix]` (a snapshot).
    pub fn depths(&self) -> [u32; 3] {
        [TaskShape::Aic, TaskShape::Aiv, TaskShape::Mix].map(|s| {
            let s = s as usize;
            let ring = (self.orch.ring_in[s].load(Ordering::Relaxed))
                .wrapping_sub(self.orch.ring_out[s].load(Ordering::Relaxed));
            // The two counters are read apart: a take counted before its publication is not
            // a negative depth.
            let ring = if ring > u32::MAX / 2 { 0 } else { ring };
            self.depth[s].load(Ordering::Relaxed) + ring
        })
    }
}

/// One shape's tasks in a scheduler thread's hands: a batch it took from the shared queue,
/// run in order, and the consumers its own completions readied, run first and newest first
/// (a chain then runs depth-first on one thread: the slot and the data its producer just
/// wrote are still in that core's cache; taking them after the rest of a batch of 16 roots,
/// the batch size then, ran the graph breadth-first, hbg tiled GEMM 1.07x).
#[derive(Default)]
struct Lane {
    /// Taken from the shared queue; those before `next` ran already.
    taken: ReadyBatch,
    next: usize,
    /// Readied by this thread, newest last.
    mine: ReadyBatch,
    /// A run taken from the shared queues (never beside a `taken` batch: a lane takes from the
    /// queues only when empty); those before `run_next` ran already.
    run: Vec<SlotRef>,
    run_next: usize,
}

impl Lane {
    #[inline]
    fn is_empty(&self) -> bool {
        self.mine.is_empty() && self.taken.is_empty() && self.run.is_empty()
    }

    /// The next task (the lane is not empty): the newest of its own, else the oldest of the
    /// batch or run; an emptied batch or run starts over.
    #[inline]
    fn take(&mut self) -> SlotRef {
        if let Some(s) = self.mine.pop() {
            return s;
        }
        if self.taken.is_empty() {
            let s = self.run[self.run_next];
            self.run_next += 1;
            if self.run_next == self.run.len() {
                self.run.clear();
                self.run_next = 0;
            }
            return s;
        }
        let s = self.taken[self.next];
        self.next += 1;
        if self.next == self.taken.len() {
            self.taken.clear();
            self.next = 0;
        }
        s
    }

    /// Publishes every task of the lane, the lane left empty; how many. What is left of a run
    /// goes out as batches, so that a peer takes a batch of it, not all of it: given back
    /// whole, the run went from thread to thread at the end of each of a fan-out's rounds,
    /// its rest copied each time (hbg fan-out's execution 1.26 of before).
    fn publish(&mut self, shape: TaskShape, queues: &ReadyQueues) -> usize {
        let rest: ReadyBatch = if self.next == 0 {
            std::mem::take(&mut self.taken)
        } else {
            self.taken[self.next..].iter().copied().collect()
        };
        self.taken.clear();
        self.next = 0;
        let run = &self.run[self.run_next..]; // `take` keeps `run_next` ≤ its length
        let n = rest.len() + self.mine.len() + run.len();
        for chunk in run.chunks(READY_BATCH) {
            queues.publish(shape, chunk.iter().copied().collect());
        }
        self.run.clear();
        self.run_next = 0;
        queues.publish(shape, rest);
        queues.publish(shape, std::mem::take(&mut self.mine));
        n
    }
}

/// Tasks a scheduler thread took out of its lane's run together, to run one by one without
/// locking the lane for each: with several scheduler threads (`hbg`) a lane is behind a lock
/// its owner took and released per task, and each of those two atomic read-modify-writes
/// waited for the stores of the task before it to reach their lines (the completion's, on
/// slots the build wrote long before): over a third of `scheduler_loop`'s samples in a
/// profile of hbg independent (`docs/performance.md`, item 100).
///
/// A thread claims only when its last task readied nothing and no core of its is held, and
/// only [`CLAIM`] tasks of a run that keeps [`CLAIM_LEAVES`] for its peers; it gives back
/// what is left as soon as a task of its readies a consumer (which runs first, as the lane
/// would run it), it cannot place the shape, or a peer is parked ([`LocalReady::give_back`]).
pub(crate) struct Claimed {
    /// The next task last.
    tasks: ArrayVec<SlotRef, CLAIM>,
    shape: TaskShape,
    /// The run's tasks after these, for the prefetch at the end of a claim.
    after: ArrayVec<SlotRef, { super::PREFETCH_AHEAD + 1 }>,
}

impl Default for Claimed {
    fn default() -> Self {
        Claimed {
            tasks: ArrayVec::new(),
            shape: TaskShape::Dummy,
            after: ArrayVec::new(),
        }
    }
}

impl Claimed {
    /// True when nothing is claimed.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// The shape of the claimed tasks.
    #[inline]
    pub fn shape(&self) -> TaskShape {
        self.shape
    }

    /// The next claimed task, taken.
    #[inline]
    pub fn take(&mut self) -> Option<SlotRef> {
        self.tasks.pop()
    }

    /// The task [`take`](Self::take) gives after `ahead` others (0: the next one), then the
    /// run's, for prefetching its slot (as [`LocalReady::upcoming`]).
    #[inline]
    pub fn upcoming(&self, ahead: usize) -> Option<SlotRef> {
        match self.tasks.len().checked_sub(ahead + 1) {
            Some(i) => Some(self.tasks[i]),
            None => self.after.get(ahead - self.tasks.len()).copied(),
        }
    }
}

/// One scheduler thread's ready tasks (see the module documentation).
#[derive(Default)]
pub(crate) struct LocalReady {
    /// Per shape (indexed by `TaskShape as usize`).
    lanes: [Lane; 4],
}

impl LocalReady {
    /// The next task of a shape `can` accepts: this thread's own first, else a batch from the
    /// shared queues. Lanes of shapes `can` refuses are given back first, so a thread that
    /// will wait for its cores holds nothing another thread could run; and when another
    /// scheduler thread is parked, what is left after the task taken is shared with it.
    #[inline]
    pub fn next(
        &mut self,
        queues: &ReadyQueues,
        sleep: &Sleep,
        can: impl Fn(TaskShape) -> bool,
    ) -> Option<SlotRef> {
        let mut task = None;
        for shape in POP_ORDER {
            let lane = &mut self.lanes[shape as usize];
            if lane.is_empty() {
                continue;
            }
            if can(shape) {
                task = Some(lane.take());
                break;
            }
            sleep.notify_many(lane.publish(shape, queues));
        }
        if task.is_none() {
            let (shape, taken) = queues.take(can)?;
            let lane = &mut self.lanes[shape as usize];
            match taken {
                Taken::Batch(batch) => (lane.taken, lane.next) = (batch, 0),
                Taken::Run(run) => (lane.run, lane.run_next) = (run, 0),
            }
            task = Some(lane.take());
        }
        if sleep.has_sleepers() && !self.is_empty() {
            self.share(queues, sleep);
        }
        task
    }

    /// Readies `s`, of `shape`, for this thread (it runs before the rest of the lane); when
    /// the thread already holds [`READY_BATCH`] tasks it readied, they are published first.
    #[inline]
    pub fn push(&mut self, shape: TaskShape, s: SlotRef, queues: &ReadyQueues, sleep: &Sleep) {
        let lane = &mut self.lanes[shape as usize];
        if lane.mine.is_full() {
            queues.publish(shape, std::mem::take(&mut lane.mine));
            sleep.notify_one();
        }
        lane.mine.push(s);
    }

    /// The one task staged here, when there is exactly one and `can` accepts its shape (see
    /// `lane_of` in `dispatch.rs`); taking it leaves nothing staged for peers not to see.
    #[inline]
    pub fn take_single(&mut self, can: impl Fn(TaskShape) -> bool) -> Option<SlotRef> {
        let mut found = None;
        for shape in POP_ORDER {
            match self.lanes[shape as usize].mine.len() {
                0 => {}
                1 if found.is_none() => found = Some(shape),
                _ => return None,
            }
        }
        let shape = found.filter(|&shape| can(shape))?;
        self.lanes[shape as usize].mine.pop()
    }

    /// Takes over the tasks `staged` readied (it took none from the queues), as if each had
    /// been [`pushed`](Self::push) here, oldest first; `staged` is left empty.
    #[inline]
    pub fn absorb(&mut self, staged: &mut LocalReady, queues: &ReadyQueues, sleep: &Sleep) {
        for shape in POP_ORDER {
            let from = &mut staged.lanes[shape as usize];
            debug_assert!(from.taken.is_empty(), "a staging lane takes no batch");
            for s in from.mine.drain(..) {
                self.push(shape, s, queues, sleep);
            }
        }
    }

    /// Publishes every task this thread holds, then wakes as many parked threads.
    #[cold]
    pub fn share(&mut self, queues: &ReadyQueues, sleep: &Sleep) {
        let mut shared = 0;
        for shape in POP_ORDER {
            shared += self.lanes[shape as usize].publish(shape, queues);
        }
        sleep.notify_many(shared);
    }

    /// Claims the next [`CLAIM`] tasks of `shape`'s lane into `out` (empty), when they are
    /// the front of a run that keeps [`CLAIM_LEAVES`] after them and the lane holds nothing
    /// of its own ([`Claimed`]); true if it did.
    #[inline]
    pub fn claim(&mut self, shape: TaskShape, out: &mut Claimed) -> bool {
        debug_assert!(out.is_empty(), "a claim is taken only when the last one ran");
        let lane = &mut self.lanes[shape as usize];
        let end = lane.run_next + CLAIM;
        if !lane.mine.is_empty() || !lane.taken.is_empty() || lane.run.len() < end + CLAIM_LEAVES {
            return false;
        }
        out.tasks
            .extend(lane.run[lane.run_next..end].iter().rev().copied());
        out.after.clear();
        out.after
            .extend(lane.run[end..].iter().take(super::PREFETCH_AHEAD + 1).copied());
        out.shape = shape;
        lane.run_next = end;
        true
    }

    /// Gives back what `claimed` still holds (left empty) to the front of its lane, as if it
    /// had never been claimed; when a peer made this lane share its run meanwhile, the tasks
    /// are published instead, in order, and a parked thread is woken.
    pub fn give_back(&mut self, claimed: &mut Claimed, queues: &ReadyQueues, sleep: &Sleep) {
        let n = claimed.tasks.len();
        if n == 0 {
            return;
        }
        let lane = &mut self.lanes[claimed.shape as usize];
        if lane.run.is_empty() {
            // Shared: the claim's run went out as batches (`Lane::publish`).
            queues.publish(claimed.shape, claimed.tasks.drain(..).rev().collect());
            sleep.notify_one();
            return;
        }
        // Only this thread takes from its run, and never while it holds a claim, so the claim
        // is still the part of the run just before `run_next`.
        lane.run_next -= n;
        debug_assert!(lane.run[lane.run_next..lane.run_next + n]
            .iter()
            .eq(claimed.tasks.iter().rev()));
        claimed.tasks.clear();
    }

    /// The task `shape`'s lane will give after `ahead` others (0: the next one), for
    /// prefetching its slot.
    // This form is measured: one that indexed `mine` as `len - 1 - ahead` after a
    // `checked_sub` of its length (the same answers) made hbg fan-out's execution phase 1.13
    // of this one's in 7 pairs, through the code around it (`docs/performance.md`, item 99).
    #[inline]
    pub fn upcoming(&self, shape: TaskShape, ahead: usize) -> Option<SlotRef> {
        let lane = &self.lanes[shape as usize];
        match lane.mine.len().checked_sub(ahead + 1) {
            Some(i) => Some(lane.mine[i]),
            None if lane.taken.is_empty() => lane.run.get(lane.run_next + ahead - lane.mine.len()).copied(),
            None => lane.taken.get(lane.next + ahead - lane.mine.len()).copied(),
        }
    }

    /// True when this thread holds no ready task.
    pub fn is_empty(&self) -> bool {
        self.lanes.iter().all(Lane::is_empty)
    }
}

#[cfg(all(test, not(feature = "loom")))]
mod tests {
    use super::*;

    fn s(index: u32) -> SlotRef {
        SlotRef { ring: 0, index }
    }

    fn batch(r: std::ops::Range<u32>) -> ReadyBatch {
        r.map(s).collect()
    }

    #[test]
    fn a_taken_batch_runs_in_order_then_the_next_one_is_taken() {
        let (q, sleep) = (ReadyQueues::new(), Sleep::new());
        q.publish(TaskShape::Aiv, batch(0..3));
        q.publish(TaskShape::Aiv, batch(3..5));
        assert_eq!(q.depths(), [0, 5, 0]);
        let mut local = LocalReady::default();
        let got: Vec<u32> = std::iter::from_fn(|| local.next(&q, &sleep, |_| true))
            .map(|t| t.index)
            .collect();
        assert_eq!(got, [0, 1, 2, 3, 4]);
        assert_eq!(q.depths(), [0, 0, 0]);
        assert!(local.is_empty());
    }

    #[test]
    fn an_orchestrators_batches_go_through_its_ring_then_the_queue_when_it_is_full() {
        let (q, sleep) = (ReadyQueues::new(), Sleep::new());
        let mut p = q.publisher().expect("the queues' first publisher");
        assert!(q.publisher().is_none(), "one publisher per run");
        for b in 0..=PUBLICATION_RING as u32 {
            q.publish_from(&mut p, TaskShape::Aiv, batch(b * 2..b * 2 + 2));
        }
        q.publish_from(&mut p, TaskShape::Aiv, ReadyBatch::new());
        q.publish(TaskShape::Aic, batch(1000..1001));
        let ring = 2 * PUBLICATION_RING as u32;
        assert_eq!(q.depths(), [1, ring + 2, 0]);
        assert!(q.has_for(|shape| shape == TaskShape::Aiv));
        // The queue first (the overflow, the ring's 65th batch), then the ring in order.
        let mut local = LocalReady::default();
        let got: Vec<u32> = std::iter::from_fn(|| local.next(&q, &sleep, |shape| shape == TaskShape::Aiv))
            .map(|t| t.index)
            .collect();
        let want: Vec<u32> = (ring..ring + 2).chain(0..ring).collect();
        assert_eq!(got, want);
        assert_eq!(q.depths(), [1, 0, 0]);
        assert!(!q.has_for(|shape| shape == TaskShape::Aiv));
        // A drained ring takes batches again.
        q.publish_from(&mut p, TaskShape::Aiv, batch(7..8));
        assert_eq!(
            local.next(&q, &sleep, |shape| shape == TaskShape::Aiv),
            Some(s(7))
        );
    }

    #[test]
    fn own_lanes_come_first_in_pop_order() {
        let (q, sleep) = (ReadyQueues::new(), Sleep::new());
        q.publish(TaskShape::Dummy, batch(100..101));
        let mut local = LocalReady::default();
        local.push(TaskShape::Aiv, s(1), &q, &sleep);
        local.push(TaskShape::Aic, s(2), &q, &sleep);
        local.push(TaskShape::Aiv, s(3), &q, &sleep);
        let got: Vec<u32> = std::iter::from_fn(|| local.next(&q, &sleep, |_| true))
            .map(|t| t.index)
            .collect();
        assert_eq!(got, [2, 3, 1, 100]);
    }

    #[test]
    fn a_consumer_this_thread_readied_runs_before_the_rest_of_its_batch() {
        let (q, sleep) = (ReadyQueues::new(), Sleep::new());
        q.publish(TaskShape::Aic, batch(0..3));
        let mut local = LocalReady::default();
        let mut got = Vec::new();
        while let Some(t) = local.next(&q, &sleep, |_| true) {
            got.push(t.index);
            if t.index < 3 {
                // Each root readies its consumer: a chain per root, run depth-first.
                local.push(TaskShape::Aic, s(10 + t.index), &q, &sleep);
            }
        }
        assert_eq!(got, [0, 10, 1, 11, 2, 12]);
    }

    #[test]
    fn upcoming_names_the_tasks_next_gives_in_its_order() {
        let (q, sleep) = (ReadyQueues::new(), Sleep::new());
        q.publish(TaskShape::Aiv, batch(0..4));
        let mut local = LocalReady::default();
        assert_eq!(local.next(&q, &sleep, |_| true), Some(s(0)));
        local.push(TaskShape::Aiv, s(20), &q, &sleep);
        local.push(TaskShape::Aiv, s(21), &q, &sleep);
        let ahead: Vec<Option<u32>> = (0..6)
            .map(|k| local.upcoming(TaskShape::Aiv, k).map(|t| t.index))
            .collect();
        assert_eq!(ahead, [Some(21), Some(20), Some(1), Some(2), Some(3), None]);
        let got: Vec<u32> = std::iter::from_fn(|| local.next(&q, &sleep, |_| true))
            .map(|t| t.index)
            .collect();
        assert_eq!(got, [21, 20, 1, 2, 3]);
    }

    #[test]
    fn a_run_is_taken_whole_after_the_shapes_batches_and_runs_in_order() {
        let (q, sleep) = (ReadyQueues::new(), Sleep::new());
        q.publish_run(TaskShape::Aiv, (0..40).map(s).collect());
        q.publish_run(TaskShape::Aiv, Vec::new()); // dropped
        q.publish(TaskShape::Aiv, batch(100..102));
        assert_eq!(q.depths(), [0, 42, 0]);
        assert!(q.has_for(|shape| shape == TaskShape::Aiv));
        let mut local = LocalReady::default();
        let first: Vec<u32> = (0..3)
            .map(|_| local.next(&q, &sleep, |_| true).unwrap().index)
            .collect();
        assert_eq!(first, [100, 101, 0], "the batch first, then the run");
        assert_eq!(q.depths(), [0, 0, 0], "the run was taken whole");
        assert!(!q.has_for(|_| true));
        // The prefetch's view of the lane reads on into the run, behind this thread's own.
        local.push(TaskShape::Aiv, s(200), &q, &sleep);
        let ahead: Vec<Option<u32>> = [0, 1, 2, 38, 39]
            .into_iter()
            .map(|k| local.upcoming(TaskShape::Aiv, k).map(|t| t.index))
            .collect();
        assert_eq!(ahead, [Some(200), Some(1), Some(2), Some(38), Some(39)]);
        assert_eq!(local.upcoming(TaskShape::Aiv, 40), None);
        let rest: Vec<u32> = std::iter::from_fn(|| local.next(&q, &sleep, |_| true))
            .map(|t| t.index)
            .collect();
        let want: Vec<u32> = std::iter::once(200).chain(1..40).collect();
        assert_eq!(rest, want);
        assert!(local.is_empty());
    }

    #[test]
    fn a_run_given_back_goes_out_as_batches_a_peer_takes_one_at_a_time() {
        let (q, sleep) = (ReadyQueues::new(), Sleep::new());
        let n = READY_BATCH as u32 * 2 + 5;
        q.publish_run(TaskShape::Aiv, (0..n).map(s).collect());
        let mut holder = LocalReady::default();
        assert_eq!(holder.next(&q, &sleep, |_| true), Some(s(0)));
        holder.share(&q, &sleep);
        assert!(holder.is_empty());
        assert_eq!(q.depths(), [0, n - 1, 0]);
        let mut peer = LocalReady::default();
        assert_eq!(peer.next(&q, &sleep, |_| true), Some(s(1)));
        assert_eq!(
            q.depths(),
            [0, n - 1 - READY_BATCH as u32, 0],
            "the peer took one batch of the run, not the rest of it"
        );
        let mut got = vec![1];
        got.extend(std::iter::from_fn(|| peer.next(&q, &sleep, |_| true)).map(|t| t.index));
        assert_eq!(got, (1..n).collect::<Vec<_>>(), "every task once, in order");
    }

    /// A run of `n` tasks taken into a fresh lane, its first task taken.
    fn lane_running(n: u32, q: &ReadyQueues, sleep: &Sleep) -> LocalReady {
        q.publish_run(TaskShape::Aiv, (0..n).map(s).collect());
        let mut lane = LocalReady::default();
        assert_eq!(lane.next(q, sleep, |_| true), Some(s(0)));
        lane
    }

    #[test]
    fn a_claim_takes_the_front_of_a_run_only_while_enough_is_left_for_peers() {
        let (q, sleep) = (ReadyQueues::new(), Sleep::new());
        let (claim, leaves) = (CLAIM as u32, CLAIM_LEAVES as u32);
        // After the first task, one short of a claim and what it must leave.
        let mut short = lane_running(claim + leaves, &q, &sleep);
        let mut claimed = Claimed::default();
        assert!(!short.claim(TaskShape::Aiv, &mut claimed));
        assert!(claimed.is_empty());
        assert_eq!(short.next(&q, &sleep, |_| true), Some(s(1)), "the lane untouched");

        let n = claim + leaves + 1;
        let mut lane = lane_running(n, &q, &sleep);
        assert!(!lane.claim(TaskShape::Aic, &mut claimed), "no run of that shape");
        lane.push(TaskShape::Aiv, s(500), &q, &sleep);
        assert!(
            !lane.claim(TaskShape::Aiv, &mut claimed),
            "a consumer it readied runs first"
        );
        assert_eq!(lane.next(&q, &sleep, |_| true), Some(s(500)));
        assert!(lane.claim(TaskShape::Aiv, &mut claimed));
        assert_eq!(claimed.shape(), TaskShape::Aiv);
        // The prefetch's view reads on past the claim into the run.
        let ahead: Vec<Option<u32>> = (0..=claim as usize + 2)
            .map(|k| claimed.upcoming(k).map(|t| t.index))
            .collect();
        let want: Vec<Option<u32>> = (1..=claim + 3).map(Some).collect();
        assert_eq!(ahead, want);
        assert_eq!(
            claimed.upcoming(claim as usize + 3),
            None,
            "three of the run at most"
        );
        let got: Vec<u32> = std::iter::from_fn(|| claimed.take()).map(|t| t.index).collect();
        assert_eq!(got, (1..=claim).collect::<Vec<_>>());
        let rest: Vec<u32> = std::iter::from_fn(|| lane.next(&q, &sleep, |_| true))
            .map(|t| t.index)
            .collect();
        assert_eq!(
            rest,
            (claim + 1..n).collect::<Vec<_>>(),
            "the lane goes on after the claim"
        );
    }

    #[test]
    fn a_claim_given_back_runs_next_from_the_lane_in_order() {
        let (q, sleep) = (ReadyQueues::new(), Sleep::new());
        let n = (CLAIM + CLAIM_LEAVES) as u32 + 10;
        let mut lane = lane_running(n, &q, &sleep);
        let mut claimed = Claimed::default();
        assert!(lane.claim(TaskShape::Aiv, &mut claimed));
        assert_eq!((claimed.take(), claimed.take()), (Some(s(1)), Some(s(2))));
        lane.give_back(&mut claimed, &q, &sleep);
        assert!(claimed.is_empty());
        assert_eq!(q.depths(), [0, 0, 0], "nothing published");
        let rest: Vec<u32> = std::iter::from_fn(|| lane.next(&q, &sleep, |_| true))
            .map(|t| t.index)
            .collect();
        assert_eq!(rest, (3..n).collect::<Vec<_>>());
        lane.give_back(&mut claimed, &q, &sleep); // nothing claimed: nothing happens
        assert!(lane.is_empty());
    }

    #[test]
    fn a_claim_given_back_after_its_run_was_shared_is_published_for_any_thread() {
        let (q, sleep) = (ReadyQueues::new(), Sleep::new());
        let n = (CLAIM + CLAIM_LEAVES) as u32 + 10;
        let mut lane = lane_running(n, &q, &sleep);
        let mut claimed = Claimed::default();
        assert!(lane.claim(TaskShape::Aiv, &mut claimed));
        assert_eq!(claimed.take(), Some(s(1)));
        lane.share(&q, &sleep); // an idle peer made it share (`take_held_work`)
        lane.give_back(&mut claimed, &q, &sleep);
        assert!(claimed.is_empty() && lane.is_empty());
        assert_eq!(q.depths(), [0, n - 2, 0]);
        let mut peer = LocalReady::default();
        let mut got: Vec<u32> = std::iter::from_fn(|| peer.next(&q, &sleep, |_| true))
            .map(|t| t.index)
            .collect();
        let claim_rest: Vec<u32> = got.split_off(got.len() - (CLAIM - 1));
        assert_eq!(
            claim_rest,
            (2..=CLAIM as u32).collect::<Vec<_>>(),
            "in order, last"
        );
        assert_eq!(got, (CLAIM as u32 + 1..n).collect::<Vec<_>>());
    }

    #[test]
    fn staged_consumers_join_the_lane_as_if_pushed_there() {
        let (q, sleep) = (ReadyQueues::new(), Sleep::new());
        q.publish(TaskShape::Aiv, batch(0..3));
        let mut lane = LocalReady::default();
        assert_eq!(lane.next(&q, &sleep, |_| true), Some(s(0)));
        lane.push(TaskShape::Aiv, s(20), &q, &sleep);
        let mut staged = LocalReady::default();
        staged.push(TaskShape::Aiv, s(21), &q, &sleep);
        staged.push(TaskShape::Aic, s(30), &q, &sleep);
        staged.push(TaskShape::Aiv, s(22), &q, &sleep);
        lane.absorb(&mut staged, &q, &sleep);
        assert!(staged.is_empty());
        let got: Vec<u32> = std::iter::from_fn(|| lane.next(&q, &sleep, |_| true))
            .map(|t| t.index)
            .collect();
        assert_eq!(got, [30, 22, 21, 20, 1, 2]);
        // A lane filled by the staged tasks is published whole, as a push publishes it.
        let mut lane = LocalReady::default();
        let mut staged = LocalReady::default();
        for i in 0..READY_BATCH as u32 {
            lane.push(TaskShape::Aiv, s(i), &q, &sleep);
        }
        staged.push(TaskShape::Aiv, s(99), &q, &sleep);
        lane.absorb(&mut staged, &q, &sleep);
        assert_eq!(q.depths(), [0, READY_BATCH as u32, 0]);
        assert_eq!(lane.next(&q, &sleep, |_| true), Some(s(99)));
    }

    #[test]
    fn only_a_lone_staged_task_of_a_placeable_shape_is_taken_without_the_lane() {
        let (q, sleep) = (ReadyQueues::new(), Sleep::new());
        let mut staged = LocalReady::default();
        assert_eq!(staged.take_single(|_| true), None);
        staged.push(TaskShape::Aic, s(1), &q, &sleep);
        assert_eq!(staged.take_single(|shape| shape != TaskShape::Aic), None);
        assert_eq!(staged.take_single(|_| true), Some(s(1)));
        assert!(staged.is_empty());
        // Two staged tasks, of one shape or of two, go through the lane (peers can see them).
        staged.push(TaskShape::Aiv, s(2), &q, &sleep);
        staged.push(TaskShape::Aiv, s(3), &q, &sleep);
        assert_eq!(staged.take_single(|_| true), None);
        let mut staged = LocalReady::default();
        staged.push(TaskShape::Aiv, s(4), &q, &sleep);
        staged.push(TaskShape::Dummy, s(5), &q, &sleep);
        assert_eq!(staged.take_single(|_| true), None);
        assert_eq!(q.depths(), [0, 0, 0]);
    }

    #[test]
    fn a_lane_the_thread_cannot_place_goes_back_to_the_shared_queue() {
        let (q, sleep) = (ReadyQueues::new(), Sleep::new());
        let mut local = LocalReady::default();
        local.push(TaskShape::Aic, s(1), &q, &sleep);
        local.push(TaskShape::Aic, s(2), &q, &sleep);
        // Its AIC cores are held: nothing for it, and another thread can take both.
        assert_eq!(local.next(&q, &sleep, |shape| shape != TaskShape::Aic), None);
        assert!(local.is_empty());
        assert_eq!(q.depths(), [2, 0, 0]);
        let mut other = LocalReady::default();
        assert_eq!(other.next(&q, &sleep, |_| true), Some(s(1)));
        assert_eq!(other.next(&q, &sleep, |_| true), Some(s(2)));
    }

    #[test]
    fn a_full_lane_is_published_whole_and_the_push_starts_a_new_one() {
        let (q, sleep) = (ReadyQueues::new(), Sleep::new());
        let mut local = LocalReady::default();
        for i in 0..=READY_BATCH as u32 {
            local.push(TaskShape::Aiv, s(i), &q, &sleep);
        }
        assert_eq!(q.depths(), [0, READY_BATCH as u32, 0]);
        let mut other = LocalReady::default();
        let theirs: Vec<u32> = std::iter::from_fn(|| other.next(&q, &sleep, |_| true))
            .map(|t| t.index)
            .collect();
        assert_eq!(theirs, (0..READY_BATCH as u32).collect::<Vec<_>>());
        assert_eq!(local.next(&q, &sleep, |_| true), Some(s(READY_BATCH as u32)));
    }

    #[test]
    fn what_is_left_after_a_take_is_shared_when_a_thread_is_parked() {
        use std::sync::Arc;
        use std::time::Duration;
        let q = Arc::new(ReadyQueues::new());
        let sleep = Arc::new(Sleep::new());
        // Four tasks this thread's own completions readied: nothing is published yet.
        let mut local = LocalReady::default();
        for i in 0..4 {
            local.push(TaskShape::Aiv, s(i), &q, &sleep);
        }
        let (q2, sleep2) = (q.clone(), sleep.clone());
        let parked = std::thread::spawn(move || {
            while !sleep2.sleep_unless(Duration::from_secs(10), || q2.has_for(|_| true)) {}
            let mut mine = LocalReady::default();
            std::iter::from_fn(|| mine.next(&q2, &sleep2, |_| true))
                .map(|t| t.index)
                .collect::<Vec<u32>>()
        });
        while !sleep.has_sleepers() {
            std::thread::yield_now();
        }
        // The newest first; the three older ones go to the parked thread, in order.
        assert_eq!(local.next(&q, &sleep, |_| true), Some(s(3)));
        assert!(local.is_empty(), "the other three went to the parked thread");
        assert_eq!(parked.join().unwrap(), [0, 1, 2]);
    }
}
