//! One submit, in five stages, each its own function:
//!
//! 1. [`admit`](Orchestrator::admit): check the arguments, kernels, launch and scope admission;
//! 2. [`allocate`](Orchestrator::allocate): a slot and the outputs' heap on the scope's ring,
//!    waiting for reclaim when full;
//! 3. [`infer`](Orchestrator::infer): the fanin through the shared dependency function
//!    (linking the task to each live producer, `LiveSink`) and the tensor-map registration of
//!    the outputs;
//! 4. [`reserve_links`](Orchestrator::reserve_links): the fanin spill beyond the inline
//!    capacity and the dep-pool entries of the links, waiting for reclaim when full;
//! 5. [`write_payload`](Orchestrator::write_payload): materialize outputs, copy arguments and
//!    the producers the task pins into the slot, leave its retirement marks and make its
//!    fanin's final count, from one lookup of the slot; the task is then published when
//!    ready (the hidden allocation task of `alloc_tensors`, which skips stages 3 and 4, is
//!    counted finished at once instead).

use crate::sync::Ordering;

use simpler_core::{
    compute_fanin, register_outputs, registrable_outputs, DepFlags, Edge, FaninError, FaninSink, TaskArgs,
    TaskId, Tensor, TensorArg, MAX_RINGS,
};

use super::backpressure::Exhausted;
use super::scope::ScopedTask;
use super::{Orchestrator, Outputs, TaskOutputs, LAUNCH_RUN, READY_BATCH, READY_HOLD};
use crate::collectors::dep_gen::graph::GraphWriter;
use crate::config::RingResource;
use crate::config::RuntimeKind;
use crate::fatal::{FatalCode, FatalContext, Stopped};
use crate::memory::{domain_of, heap_vbase, is_heap_addr, store_from_f64, view_offsets, RunMemory};
use crate::platform::{CoreType, MixedKernels, TaskShape};
use crate::ring::alloc::SlotRefusal;
use crate::ring::slots::ArgsMut;
use crate::ring::HeapRefusal;
use crate::shared::RunShared;
use crate::slot::{ArgTags, Fan, Slot, SlotRef, TaskState, SCOPE_BIT};

/// Fanin edges held inline in the payload; more spill into the ring's fanin spill pool.
pub const FANIN_INLINE_CAP: usize = 64;

/// Producers a submit de-duplicates by scanning its fanin list; a task with more indexes them
/// in [`Scratch::seen`].
const SCAN_DEDUP: usize = 8;

/// One live producer of the task being submitted, as the live sink linked it.
#[derive(Clone, Copy)]
struct Producer {
    slot: SlotRef,
    id: TaskId,
    /// Its edges' flags, OR-ed.
    flags: DepFlags,
    /// The task holds a RETAIN pin on it: claimed with its first RETAIN edge, unless it had
    /// retired by then (as if it had retired before the submit).
    pinned: bool,
}

/// Per-submit scratch reused across submits (no allocation in the steady state).
pub(super) struct Scratch {
    /// Live producers, each linked (the task joined its consumer list while it was PENDING)
    /// or found completed (nothing to wait for) as the sink first met it.
    fanin: Vec<Producer>,
    /// Producers of `fanin` found PENDING (the task is in their consumer lists).
    linked: u32,
    /// Per ring and slot: (epoch, index in `fanin`), the de-duplication of a task with more
    /// than [`SCAN_DEDUP`] producers. A ring's table is made on the first such task (most
    /// orchestrations never need one: an `hbg` window's table is 8 MB for 1M tasks).
    seen: [Vec<(u32, u32)>; MAX_RINGS],
    windows: [u32; MAX_RINGS],
    /// `fanin` is indexed in `seen` for this epoch.
    indexed: bool,
    epoch: u32,
    /// The OUTPUT arguments' tensors as the payload materializes them. Kept here rather than
    /// in the returned [`TaskOutputs`] so that a submit without outputs returns a value built
    /// by stores alone: copying a local `TaskOutputs` into the return slot read it back with
    /// 64-byte loads over the submit's narrower stores, and that load waited for the store
    /// buffer to drain: 15 % of tmr chain's orchestrator samples in session 46's profile.
    outputs: Outputs,
}

impl Scratch {
    pub fn new(windows: &[u32; MAX_RINGS]) -> Self {
        Scratch {
            fanin: Vec::with_capacity(64),
            linked: 0,
            seen: Default::default(),
            windows: *windows,
            indexed: false,
            epoch: 0,
            outputs: Outputs::new(),
        }
    }

    /// The outputs of the task just submitted, leaving none here (out of line: most tasks have
    /// none, and their submits return without a copy).
    #[cold]
    #[inline(never)]
    fn take_outputs(&mut self) -> Outputs {
        std::mem::take(&mut self.outputs)
    }

    /// Starts a new submit: an empty fanin and a new de-duplication epoch; on wrap-around
    /// (after 2^32 submits) the marks are cleared so that a mark from 2^32 submits ago cannot
    /// alias the new epoch.
    #[inline]
    fn next_submit(&mut self) {
        self.fanin.clear();
        self.linked = 0;
        self.indexed = false;
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.seen.iter_mut().for_each(|v| v.fill((0, 0)));
            self.epoch = 1;
        }
    }

    /// Where producer slot `s` is in this submit's fanin, if it is.
    #[inline]
    fn find(&self, s: SlotRef) -> Option<usize> {
        if !self.indexed {
            return self.fanin.iter().position(|e| e.slot == s);
        }
        // A ring without a table has no producer of this submit indexed yet.
        let &(epoch, at) = self.seen[s.ring as usize].get(s.index as usize)?;
        (epoch == self.epoch).then_some(at as usize)
    }

    /// Appends a newly linked producer, indexing the list once it outgrows a scan.
    #[inline]
    fn push(&mut self, p: Producer) {
        let s = p.slot;
        self.fanin.push(p);
        if self.indexed {
            self.mark(s, self.fanin.len() as u32 - 1);
        } else if self.fanin.len() == SCAN_DEDUP {
            self.index_fanin();
        }
    }

    /// Marks slot `s` as at `at` in this submit's fanin, making its ring's table on the ring's
    /// first indexed producer (one that joins after the list was indexed included: it used to
    /// index a ring without a table, a panic in `tmr` when a task's ninth producer was the
    /// first of its ring).
    #[inline]
    fn mark(&mut self, s: SlotRef, at: u32) {
        let ring = s.ring as usize;
        if self.seen[ring].is_empty() {
            self.make_table(ring);
        }
        self.seen[ring][s.index as usize] = (self.epoch, at);
    }

    #[cold]
    fn make_table(&mut self, ring: usize) {
        self.seen[ring] = written_marks(self.windows[ring] as usize);
    }

    #[cold]
    fn index_fanin(&mut self) {
        for i in 0..self.fanin.len() {
            self.mark(self.fanin[i].slot, i as u32);
        }
        self.indexed = true;
    }
}

/// `n` de-duplication marks, every page faulted in writable now (one system call) and
/// written. `vec![(0, 0); n]` takes zeroed pages that the first read maps to the kernel's
/// shared zero page; the first write to such a page then copies it and flushes the other
/// cores' TLBs, an inter-processor interrupt per 4 KB page on the orchestrator's critical
/// path: for `hbg`'s 2^20-slot window, 2048 of them, ≈ 28 ns per task of a 1M-task chain's
/// build (`smp_call_function_many_cond` under `do_wp_page`, `docs/performance.md` item 29).
fn written_marks(n: usize) -> Vec<(u32, u32)> {
    let mut v = crate::ring::slots::faulted_in(n);
    v.resize(n, (0, 0));
    v
}

/// What admission checked and worked out about one submit.
struct Admitted {
    kernels: MixedKernels,
    shape: TaskShape,
    /// Active subslots of the kernels.
    subslots: u32,
    block_num: u32,
    /// Bytes of the task's OUTPUT arguments, packed.
    out_bytes: u64,
    /// The ring of the innermost scope.
    ring: usize,
}

/// The domain bits a tensor argument's address must carry (`memory.rs`): the run's for a heap
/// address, its worker's for an external one.
#[derive(Clone, Copy)]
pub(crate) struct Domains {
    heap: u64,
    external: u64,
}

impl Domains {
    /// The domains of `memory`'s run and worker.
    pub fn of(memory: &RunMemory) -> Domains {
        Domains {
            heap: memory.heaps.domain(),
            external: memory.external.domain(),
        }
    }

    /// The address of ring `ring`'s heap's virtual offset 0 in this run
    /// ([`crate::memory::HeapMemory::base`]).
    #[inline(always)]
    pub fn heap_base(self, ring: usize) -> u64 {
        self.heap | heap_vbase(ring)
    }

    /// Non-zero when `addr` is not in this run's heap or its worker's external memory: a few
    /// instructions and no branch, OR-ed over a submit's arguments and checked once.
    #[inline(always)]
    pub fn foreign(self, addr: u64) -> u64 {
        let want = if is_heap_addr(addr) {
            self.heap
        } else {
            self.external
        };
        domain_of(addr ^ want)
    }
}

/// Why the live sink refused an edge.
enum SinkError {
    NotSubmitted(TaskId),
}

/// Tasks ahead of a submit whose slot it asks the CPU for ([`Orchestrator::allocate`]).
const SLOT_PREFETCH_AHEAD: u32 = 4;

/// A submit's kernel ids as two register-sized values, `aic` and `aiv0` in one, so that they
/// reach [`Orchestrator::submit_task`] in registers. A `MixedKernels` (three `i32`s) went
/// through memory: its caller stored it as three 4-byte values and the submit read it back
/// as 8 + 4 bytes, a store-forwarding failure that waited for every older store of the
/// submit before (`docs/performance.md`, item 78).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct KernelIds(u64, i32);

impl KernelIds {
    #[inline]
    pub(super) fn of(k: MixedKernels) -> KernelIds {
        KernelIds(u64::from(k.aic as u32) | u64::from(k.aiv0 as u32) << 32, k.aiv1)
    }
    #[inline]
    fn get(self) -> MixedKernels {
        MixedKernels {
            aic: self.0 as u32 as i32,
            aiv0: (self.0 >> 32) as u32 as i32,
            aiv1: self.1,
        }
    }
}

/// The kernel ids of the last submit that passed the registry check, with what admission made
/// of them. Orchestrations submit the same kernels over and over, and the registry does not
/// change while a run lasts, so a submit with the same ids skips the check (a lookup per
/// subslot) and the work of the shape and the subslot count.
#[derive(Clone, Copy, Default)]
pub(super) struct CheckedKernels(Option<(KernelIds, Kernels)>);

/// A submit's kernels as admission checked them.
#[derive(Clone, Copy)]
struct Kernels {
    /// Normalized (`MixedKernels::normalized`).
    kernels: MixedKernels,
    shape: TaskShape,
    /// Active subslots: each block of the task runs this many subtasks.
    subslots: u32,
}

/// The runtime's fanin sink: drops producers that already retired, de-duplicates per producer
/// (flags OR-ed) and links the task to each new live producer under that producer's fan lock,
/// the only lock the edge takes: into its consumer list while it is PENDING (a completed one
/// is nothing to wait for), with a pin claimed (`fanout_count += 1`) when an edge RETAINs it.
/// A WAIT-only edge claims nothing: once linked, the task needs nothing more of its producer
/// (a claim per edge, released when the task was wired, took a second lock and unlock per
/// edge).
///
/// Linking before the task is wired is safe: the task's fanin is opened before its first link
/// (`Slot::await_links`: more count-downs than it has producers), so a producer completing
/// meanwhile only counts itself down, and only the orchestrator's count-down in
/// [`Orchestrator::write_payload`] or a completion after it can make the task ready.
struct LiveSink<'a> {
    shared: &'a RunShared,
    scratch: &'a mut Scratch,
    next_local: &'a [u32; MAX_RINGS],
    /// The slot of the task being submitted.
    consumer: SlotRef,
    /// `hbg` dep_gen: every discovered edge, annotated, as the runtime builds the graph.
    graph: Option<&'a mut GraphWriter>,
}

impl FaninSink for LiveSink<'_> {
    type Error = SinkError;

    // Always inlined into each of the tensor map's visits (the chain walk, the hot index, the
    // last-writer memo): as a call of its own it cost a frame per edge.
    #[inline(always)]
    fn edge(&mut self, e: &Edge<'_>) -> Result<(), SinkError> {
        let pid = e.producer;
        let ring = pid.ring() as usize;
        if ring >= self.shared.rings.len() || pid.local() >= self.next_local[ring] {
            return Err(SinkError::NotSubmitted(pid));
        }
        if let Some(g) = self.graph.as_deref_mut() {
            crate::collectors::dep_gen::annotate(g, e);
        }
        let r = &self.shared.rings[ring];
        let index = pid.local() & r.mask;
        let sref = SlotRef {
            ring: ring as u8,
            index,
        };
        let retain = e.flags.contains(DepFlags::RETAIN);
        if let Some(at) = self.scratch.find(sref) {
            let known = &mut self.scratch.fanin[at];
            known.flags = known.flags | e.flags;
            if retain && !known.pinned {
                known.pinned = build_fan(self.shared, r.slots.get(index), |fan| {
                    let live = fan.local == pid.local();
                    if live {
                        fan.fanout_count += 1;
                    }
                    live
                });
            }
            return Ok(());
        }
        let (consumer, first_link) = (self.consumer, self.scratch.linked == 0);
        let linked = build_fan(self.shared, r.slots.get(index), |fan| {
            if fan.local != pid.local() {
                return None; // retired (its slot's fan is its successor's now): no edge, no error
            }
            let pending = fan.state == TaskState::Pending;
            if pending {
                if first_link {
                    self.shared.slot(consumer).await_links();
                }
                fan.consumers.push(consumer);
            }
            if retain {
                fan.fanout_count += 1;
            }
            Some((pending, fan.consumers.spilled()))
        });
        match linked {
            None => return Ok(()),
            Some((true, spilled)) => {
                self.scratch.linked += 1;
                if spilled {
                    r.slots.note_heap(index);
                }
            }
            Some((false, _)) => {}
        }
        self.scratch.push(Producer {
            slot: sref,
            id: pid,
            flags: e.flags,
            pinned: retain,
        });
        Ok(())
    }
}

/// Runs `f` on a producer's fan for the build: under its lock on `tmr`, where schedulers run
/// beside the orchestrator; without it in a host-built graph, whose fans only the orchestrator
/// reaches while it builds (`Slot::fan_exclusive`).
#[inline]
fn build_fan<R>(shared: &RunShared, slot: &Slot, f: impl FnOnce(&mut Fan) -> R) -> R {
    // SAFETY: without the lock only in a host-built graph (its run's only ring is the
    // graph's), whose fans the orchestrator reaches while it builds the graph (every submit
    // does, and a host-built graph's orchestration runs to its end before the scheduler
    // threads start, `run::execute`): the single-owner rule.
    unsafe { slot.with_fan(shared.kind == RuntimeKind::Hbg, f) }
}

impl Orchestrator {
    /// Checks the kernels against the registry and the subslots they were given.
    fn validate_kernels(&self, kernels: MixedKernels) -> Result<(), String> {
        for (sub, &kid) in kernels.as_array().iter().enumerate() {
            if kid < 0 {
                continue;
            }
            let want = if sub == 0 { CoreType::Aic } else { CoreType::Aiv };
            match self.shared.kernels.get(kid) {
                None => return Err(format!("kernel func_id {kid} is not registered")),
                Some(def) if def.core_type != want => {
                    return Err(format!(
                        "kernel {} (func_id {kid}) runs on {} cores but was submitted to an {} subslot",
                        def.name,
                        def.core_type.name(),
                        want.name()
                    ))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    #[cold]
    fn invalid(&self, why: String) -> Stopped {
        Stopped(self.raise(
            FatalCode::InvalidArgs,
            format!("invalid submit in scope at {}: {why}", self.current_site()),
        ))
    }

    /// Takes the next slot and `bytes` of heap on `ring`, waiting for reclaim if needed: the
    /// task's local id and the virtual start of its outputs.
    fn take_slot_and_heap(&mut self, ring: usize, bytes: u64) -> Result<(u32, u64), Stopped> {
        let mut state = None;
        let mut fresh = false;
        loop {
            if fresh {
                self.rings[ring].refresh(&self.shared.rings[ring]);
            }
            let refusal = match self.rings[ring].try_take(bytes) {
                Ok(taken) => {
                    self.done_waiting(state.is_some());
                    return Ok(taken);
                }
                Err(SlotRefusal::Heap(HeapRefusal::TooLarge)) => {
                    let cap = self.rings[ring].heap.size();
                    let detail = format!("a task needs {bytes} bytes of outputs, more than the whole heap");
                    return Err(self.exhausted(Exhausted::Heap, ring, cap, &detail));
                }
                Err(r) => r,
            };
            if !fresh {
                // The cached counters may be stale: re-read them before waiting.
                fresh = true;
                continue;
            }
            let alloc = &self.rings[ring];
            let (what, cap, detail) = match refusal {
                SlotRefusal::Heap(_) => (
                    Exhausted::Heap,
                    alloc.heap.size(),
                    format!(
                        "{bytes} bytes requested, {} bytes in use by live tasks; {}",
                        alloc.heap_in_use(),
                        alloc.heap.free_stretches(alloc.seen_heap_tail)
                    ),
                ),
                SlotRefusal::Window => (
                    Exhausted::TaskWindow,
                    u64::from(alloc.window.size()),
                    format!("{} tasks in flight", alloc.in_flight()),
                ),
            };
            self.wait_for_room(what, ring, cap, &detail, &mut state)?;
        }
    }

    /// Reserves `n` entries of a counted pool of `ring`, waiting for reclaim if needed.
    fn reserve_pool(&mut self, what: Exhausted, ring: usize, n: u64) -> Result<(), Stopped> {
        if self.kind == RuntimeKind::Hbg {
            return Ok(()); // hbg has no fanout lists or spill pool
        }
        let mut state = None;
        loop {
            let r = &self.shared.rings[ring];
            let (pool, tail) = match what {
                Exhausted::FaninSpill => (&self.rings[ring].spill_pool, r.spill_tail.load(Ordering::Acquire)),
                _ => (&self.rings[ring].dep_pool, r.dep_tail.load(Ordering::Acquire)),
            };
            let cap = pool.capacity();
            if pool.has_room(n, tail) {
                self.done_waiting(state.is_some());
                return Ok(());
            }
            let detail = format!(
                "one task needs {n} entries, {} in use",
                pool.top() - tail.min(pool.top())
            );
            if n > cap {
                return Err(self.exhausted(what, ring, cap, &detail));
            }
            self.wait_for_room(what, ring, cap, &detail, &mut state)?;
        }
    }

    /// Waits until `ring`'s dependency pool has room for this submit's pending producers
    /// (`need` of them at first) and returns how many it must take then.
    ///
    /// Unlike [`Self::reserve_pool`] it counts the producers again after each round of
    /// waiting, and a producer that completed is progress: the task waiting may itself hold
    /// its ring's head with a RETAIN pin taken as it was linked (an explicit dependency on the
    /// ring's oldest task), so the reclaim the wait hopes for may never come, while its
    /// producers still complete and then need no entry.
    fn reserve_dep_entries(&mut self, ring: usize, mut need: u64) -> Result<u64, Stopped> {
        let mut state = None;
        let mut waited = false;
        loop {
            let tail = self.shared.rings[ring].dep_tail.load(Ordering::Acquire);
            let pool = &self.rings[ring].dep_pool;
            if pool.has_room(need, tail) {
                self.done_waiting(waited);
                return Ok(need);
            }
            let cap = pool.capacity();
            let detail = format!(
                "one task needs {need} entries, {} in use",
                pool.top() - tail.min(pool.top())
            );
            waited = true;
            self.wait_for_room(Exhausted::DepPool, ring, cap, &detail, &mut state)?;
            let pending = self.pending_producers();
            if pending < need {
                need = pending;
                state = None;
            }
        }
    }

    /// A ring's oldest task that the task being submitted holds with a RETAIN pin, if any: while
    /// it waits for room, that ring reclaims nothing (named in the deadlock-timeout fatal).
    pub(super) fn own_pinned_head(&self) -> Option<TaskId> {
        self.scratch.fanin.iter().find_map(|p| {
            let head = self.shared.rings[usize::from(p.id.ring())]
                .last_alive
                .load(Ordering::Acquire);
            (p.pinned && p.id.local() == head).then_some(p.id)
        })
    }

    /// How many of this submit's producers are still PENDING as the task linked them (a slot
    /// that retired its task reads PENDING too, for its next task, so the task is compared).
    fn pending_producers(&self) -> u64 {
        let shared = &*self.shared;
        (self.scratch.fanin.iter())
            .filter(|p| {
                let fan = shared.slot(p.slot).fan.lock();
                fan.local == p.id.local() && fan.state == TaskState::Pending
            })
            .count() as u64
    }

    /// How many of this submit's producers are still pending (only they take dep-pool entries),
    /// after waiting, while they complete, until that many can fit in `ring`'s pool at all.
    ///
    /// Counting costs a lock per producer, so `reserve_links` asks only when the cheap bound
    /// (the producers linked) does not fit. The count can only shrink: a completed producer
    /// has taken the task off its list and never returns to pending. `Err` when none of them
    /// completes for [`DEADLOCK_TIMEOUT`].
    ///
    /// [`DEADLOCK_TIMEOUT`]: super::backpressure::DEADLOCK_TIMEOUT
    fn pending_producers_within(&mut self, ring: usize) -> Result<u64, Stopped> {
        let cap = self.rings[ring].dep_pool.capacity();
        let mut last = u64::MAX;
        let mut since = std::time::Instant::now();
        loop {
            // Producers held in this thread's publication batch must reach the schedulers.
            self.publish_ready();
            let completed = self.shared.completions.total();
            let pending = self.pending_producers();
            if pending <= cap {
                return Ok(pending);
            }
            if pending < last {
                (last, since) = (pending, std::time::Instant::now());
            } else if since.elapsed() >= super::backpressure::DEADLOCK_TIMEOUT {
                let detail = format!(
                    "one task needs {pending} entries for its pending producers; none of them completed for {} ms",
                    super::backpressure::DEADLOCK_TIMEOUT.as_millis()
                );
                return Err(self.exhausted(Exhausted::DepPool, ring, cap, &detail));
            }
            self.check_live()?;
            self.park_until_a_completion(completed);
        }
    }

    /// Parks until some task completes after `completed` was read (or the wait tick passes, the
    /// caller's deadlock clock): completions wake the orchestrator while
    /// `orch_awaits_completion` is set.
    fn park_until_a_completion(&self, completed: u64) {
        let shared = &*self.shared;
        shared.orch_awaits_completion.store(true, Ordering::SeqCst);
        shared
            .orch_sleep
            .sleep_unless(super::backpressure::WAIT_TICK, || {
                shared.completions.total() != completed || shared.fatal.is_set()
            });
        shared.orch_awaits_completion.store(false, Ordering::Relaxed);
    }

    /// The whole submit path (see the module docs); `is_alloc` makes the hidden allocation
    /// task of `alloc_tensors`, which has no inputs and completes at once.
    pub(super) fn submit_task(
        &mut self,
        kernels: KernelIds,
        args: &TaskArgs<'_>,
        is_alloc: bool,
    ) -> Result<TaskOutputs, Stopped> {
        let task = self.admit(kernels, args)?;
        let (id, sref, heap_start) = self.allocate(&task, is_alloc)?;
        self.scratch.next_submit();
        if !is_alloc {
            // One call site: `infer` is inlined here.
            let t0 = self.inference_ns.map(|_| std::time::Instant::now());
            let inferred = self.infer(id, sref, &task, args);
            if let (Some(t0), Some(spent)) = (t0, self.inference_ns) {
                self.inference_ns = Some(spent + t0.elapsed().as_nanos() as u64);
            }
            inferred?;
            self.reserve_links(task.ring)?;
        }
        let ready = self.write_payload(id, sref, &task, args, heap_start, is_alloc);
        if is_alloc {
            self.shared.task_finished(self.shared.orchestrator_counter());
        } else {
            if ready {
                self.ready_soon(sref, task.shape);
            }
            if let Some(log) = &mut self.fanin_log {
                log.push(super::FaninRecord {
                    task: id,
                    producers: self.scratch.fanin.iter().map(|p| (p.id, p.flags)).collect(),
                });
            }
            if self.kind == RuntimeKind::Tmr && self.ready_overdue() {
                self.publish_ready();
            }
        }
        if self.scratch.outputs.is_empty() {
            return Ok(TaskOutputs {
                id,
                outputs: Outputs::new(),
            });
        }
        Ok(TaskOutputs {
            id,
            outputs: self.scratch.take_outputs(),
        })
    }

    /// Stage 1: checks the arguments, the kernels, an SPMD sync start and the scope's room.
    #[inline]
    fn admit(&mut self, ids: KernelIds, args: &TaskArgs<'_>) -> Result<Admitted, Stopped> {
        self.check_live()?;
        if let Some(e) = args.error() {
            return Err(self.invalid(e.to_string()));
        }
        let checked = match self.checked_kernels.0 {
            Some((last, checked)) if last == ids => checked,
            _ => {
                let kernels = ids.get().normalized();
                if let Err(why) = self.validate_kernels(kernels) {
                    return Err(self.invalid(why));
                }
                let checked = Kernels {
                    kernels,
                    shape: kernels.shape(),
                    subslots: kernels.active_count(),
                };
                self.checked_kernels = CheckedKernels(Some((ids, checked)));
                checked
            }
        };
        let Kernels {
            kernels,
            shape,
            subslots,
        } = checked;
        let launch = args.launch();
        let block_num = u32::from(launch.block_num);
        if launch.require_sync_start && block_num > 1 {
            self.check_sync_start(shape, block_num)?;
        }
        let mut out_bytes = 0u64;
        let mut foreign = 0u64;
        for a in args.tensors() {
            match a {
                TensorArg::Output(ci) => out_bytes = out_bytes.saturating_add(ci.buffer_size_bytes()),
                TensorArg::Input(t)
                | TensorArg::Inout(t)
                | TensorArg::OutputExisting(t)
                | TensorArg::NoDep(t) => foreign |= self.domains.foreign(t.addr()),
            }
        }
        if foreign != 0 {
            return Err(self.foreign_tensor(args));
        }
        let frame = *self.scopes.last().expect("the root scope is always open");
        let ring = usize::from(frame.ring);
        if self.kind == RuntimeKind::Tmr {
            let window = self.shared.sizes.task_window[ring];
            let in_scope = self.scope_tasks.len() - frame.first_task;
            if in_scope as u64 + 1 >= u64::from(window) {
                let msg = format!(
                    "scope at {} already holds {in_scope} tasks on ring {ring}, whose task window is {window} slots \
                     (a scope holds at most window-1 tasks); raise runtime_env {} or split the scope",
                    frame.site,
                    RingResource::TaskWindow.key(),
                );
                let context = FatalContext {
                    resource: "task_window",
                    ring: Some(frame.ring),
                    capacity: u64::from(window),
                    site: frame.site.to_string(),
                    key: Some(RingResource::TaskWindow.key()),
                };
                return Err(Stopped(self.raise_with(
                    FatalCode::ScopeDeadlock,
                    msg,
                    Some(context),
                )));
            }
        }
        Ok(Admitted {
            kernels,
            shape,
            subslots,
            block_num,
            out_bytes,
            ring,
        })
    }

    /// The first tensor argument from another run's heap or another worker's memory (the
    /// domain bits of its address, `memory.rs`): its buffer is not this run's to read or write.
    #[cold]
    fn foreign_tensor(&self, args: &TaskArgs<'_>) -> Stopped {
        let (i, t) = args
            .tensors()
            .iter()
            .enumerate()
            .find_map(|(i, a)| {
                a.tensor()
                    .filter(|t| self.domains.foreign(t.addr()) != 0)
                    .map(|t| (i, t))
            })
            .expect("a foreign tensor argument was found");
        self.invalid(if is_heap_addr(t.addr()) {
            format!(
                "argument {i} is an output of an earlier run (a run's outputs live only while it \
                 runs: copy one into an external tensor to keep it)"
            )
        } else {
            format!(
                "argument {i} belongs to another Worker (a run reads and writes its own worker's \
                 external tensors only)"
            )
        })
    }

    /// A `require_sync_start` launch must fit the cores that can start at once.
    #[cold]
    fn check_sync_start(&self, shape: TaskShape, block_num: u32) -> Result<(), Stopped> {
        let limit = if shape == TaskShape::Aiv {
            self.platform().aiv_count()
        } else {
            self.platform().clusters
        };
        if block_num <= limit {
            return Ok(());
        }
        Err(Stopped(self.raise(
            FatalCode::RequireSyncStartInvalid,
            format!(
                "require_sync_start with block_num {block_num} but only {limit} {} can start at once (scope at {})",
                if shape == TaskShape::Aiv { "AIV cores" } else { "clusters" },
                self.current_site()
            ),
        )))
    }

    /// Stage 2: a slot and the outputs' heap on the task's ring, the slot reset for it, and the
    /// task counted in its scope.
    #[inline]
    fn allocate(&mut self, task: &Admitted, is_alloc: bool) -> Result<(TaskId, SlotRef, u64), Stopped> {
        let ring = task.ring;
        let (local, heap_start) = self.take_slot_and_heap(ring, task.out_bytes)?;
        self.total_tasks += 1;
        let id = TaskId::new(ring as u8, local);
        let sref = SlotRef {
            ring: ring as u8,
            index: local & self.shared.rings[ring].mask,
        };
        // The slot a few tasks on, when it is known free (by the cached `last_alive`, never
        // ahead of the real one): its lines are with the scheduler that ran its last task, so
        // ask for them now, for writing, and take them over while this task is submitted.
        let ahead = local.wrapping_add(SLOT_PREFETCH_AHEAD);
        let shared_ring = &self.shared.rings[ring];
        let ahead = self.rings[ring]
            .slot_is_free(ahead)
            .then_some(ahead & shared_ring.mask);
        // The slot is re-derived from `self.shared` after every call that needs `&mut self`
        // (a field borrow costs nothing; cloning the `Arc` per submit costs two atomic RMWs).
        let slot = shared_ring.slots.get_prefetching(sref.index, ahead);
        // The slot's fan is as this task starts it, left so by its last task's retirement
        // (`Slot::consume`) or, for its first task, by its build (`Slot::new`), unless this
        // is an alloc task (completed at once).
        if is_alloc || !slot.fan_ready_for(local, self.shared.window_of(ring as u8)) {
            let mut fan = slot.fan.lock();
            fan.local = local;
            fan.state = if is_alloc {
                TaskState::Completed
            } else {
                TaskState::Pending
            };
            fan.fanout_count = SCOPE_BIT;
            fan.fanout_refcount = 0;
            fan.consumers.clear();
        }
        slot.next_block.store(0, Ordering::Relaxed);
        slot.remaining
            .store(task.block_num * task.subslots, Ordering::Relaxed);
        slot.shape.store(task.shape as u8, Ordering::Relaxed);
        // A host-built graph's scope end matters only to its alloc tasks, completed at once: a
        // task still pending cannot be consumed by its scope's end, and nothing completes
        // while the graph is built (`RunShared::complete` skips the consumed check there).
        if self.kind == RuntimeKind::Tmr || is_alloc {
            self.scope_tasks.push(ScopedTask { slot: sref, local });
        }
        // Where the tensor map writes next, once per chunk of slots, for a host-built graph's
        // prefault thread to fault in ahead of it (`ring/frontiers.rs`).
        let slots = &self.shared.rings[ring].slots;
        if self.kind == RuntimeKind::Hbg && slots.starts_chunk(sref.index) {
            slots.frontiers.publish(self.tmap.unwritten_storage());
        }
        Ok((id, sref, heap_start))
    }

    /// Stage 3: the fanin (into `scratch.fanin`, the task linked to each live producer), dep_gen's
    /// view of the submit, and the tensor-map registration of the task's outputs.
    // Always inlined into its one caller: as a call, its prologue, epilogue and the moves of
    // its arguments were about 30 instructions a submit (`docs/performance.md`, item 82).
    #[inline(always)]
    fn infer(
        &mut self,
        id: TaskId,
        sref: SlotRef,
        task: &Admitted,
        args: &TaskArgs<'_>,
    ) -> Result<(), Stopped> {
        let ring = task.ring;
        let manual = self.manual_depth.is_some();
        if let Some(c) = &mut self.dep_gen {
            c.record(id, manual, task.kernels, args);
        }
        if let Some(g) = &mut self.dep_graph {
            g.begin_task(
                id,
                manual,
                args.early_resolve(),
                task.kernels.as_array(),
                task.block_num,
                args.tensors(),
            );
        }
        if self.kind == RuntimeKind::Tmr
            && id
                .local()
                .is_multiple_of(simpler_core::tensormap::CLEANUP_INTERVAL)
        {
            self.rings[ring].seen_last_alive = self.shared.rings[ring].last_alive.load(Ordering::Acquire);
        }
        self.tmap
            .set_watermark(ring as u8, self.rings[ring].seen_last_alive);
        self.tmap.sync(id);
        let next_local = std::array::from_fn(|r| self.rings[r].window.next_local());
        let found = {
            let mut sink = LiveSink {
                shared: &self.shared,
                scratch: &mut self.scratch,
                next_local: &next_local,
                consumer: sref,
                graph: self.dep_graph.as_mut(),
            };
            compute_fanin(
                id,
                manual,
                args.tensors(),
                args.explicit_deps(),
                &mut self.tmap,
                &mut sink,
            )
        };
        if let Err(e) = found {
            return Err(self.fanin_error(e));
        }
        if manual {
            return Ok(()); // a manual scope registers nothing
        }
        // A task registers at most one entry per argument: with that much room (nearly always)
        // the entries it registers need not be counted first.
        if self.tmap.free_slots() < args.tensors().len() {
            let n = registrable_outputs(false, args.tensors());
            if n > 0 {
                self.ensure_tensormap(n)?;
            }
        }
        register_outputs(id, false, args.tensors(), &mut self.tmap)
            .expect("room was made by ensure_tensormap");
        Ok(())
    }

    /// The fatal for a fanin the dependency function refused.
    #[cold]
    fn fanin_error(&self, e: FaninError<SinkError>) -> Stopped {
        match e {
            FaninError::InvalidExplicitDep { index, id: bad } => self.invalid(format!(
                "explicit dependency #{index} is not a task id ({:#x})",
                bad.raw()
            )),
            FaninError::SelfDependency { arg } => {
                let e = FaninError::<std::convert::Infallible>::SelfDependency { arg };
                self.invalid(e.to_string())
            }
            FaninError::Sink(SinkError::NotSubmitted(bad)) => {
                self.invalid(format!("dependency on task {bad}, which has not been submitted"))
            }
        }
    }

    /// Stage 5: materializes the outputs on the heap (with their initial values) and copies
    /// the arguments, scalars and fanin into the slot's payload; then leaves the task's
    /// retirement marks and, unless it is an alloc task (completed at once by the caller),
    /// makes its fanin's final count: whether the task is ready. One lookup of the slot serves
    /// both, which is why the links' pool entries are reserved before (`reserve_links`): a
    /// wait for them may need `&mut self`, and until the final count no thread reads the
    /// payload.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn write_payload(
        &mut self,
        id: TaskId,
        sref: SlotRef,
        task: &Admitted,
        args: &TaskArgs<'_>,
        heap_start: u64,
        is_alloc: bool,
    ) -> bool {
        let shared = &*self.shared;
        let slots = &shared.rings[sref.ring as usize].slots;
        // SAFETY: the payload protocol's rule 1 (`RingSlot` in `slot.rs`): this orchestrator
        // took the slot for the task it submits (`allocate`: the slot's last task retired, or
        // none used it), and publishes the task only after `w` is dropped.
        let (slot, w) = unsafe { slots.write_entry(sref.index) };
        {
            // The writer lives in this block: its writes end before the final count below.
            let mut w = w;
            let (p, place) = w.parts();
            p.id = id;
            p.kernels = task.kernels;
            p.block_num = task.block_num;
            // Most tasks have no scalars, and most slots' last tasks had none either.
            if !(p.scalars.is_empty() && args.scalars().is_empty()) {
                p.scalars.clear();
                p.scalars.reserve_exact(args.scalars().len());
                p.scalars.extend_from_slice(args.scalars());
                if p.scalars.capacity() > 0 {
                    slots.note_heap(sref.index);
                }
            }
            if shared.args_dump.is_some() {
                // Read only by the args dump's capture: not written when it is off.
                **p.dump.get_or_insert_with(Box::default) = crate::slot::DumpSelection {
                    mask: args.dump_mask(),
                    scalar_dtypes: crate::slot::pack_dtypes(args.scalar_dtypes()),
                };
                slots.note_heap(sref.index);
            }
            let n = args.tensors().len();
            let heap_at = self.domains.heap_base(task.ring) + heap_start;
            let memory = &shared.memory;
            let outputs = &mut self.scratch.outputs;
            let p = &mut *p;
            match (place, &mut self.arg_arena) {
                (ArgsMut::InPlace(a), _) => {
                    let list = &mut a.tensors;
                    list.clear();
                    list.reserve_exact(n);
                    fill_args(args, id, heap_at, memory, outputs, &mut p.tags, |t| list.push(t));
                    // Read only to release the RETAIN pins at completion, which a host-built graph
                    // (whose arguments are packed, below) skips: `RunShared::complete`.
                    a.retained.clear();
                    // Tensor-map edges only wait: most producers are not pinned, and an
                    // extend from an empty filter was still a call of 41 instructions.
                    let pinned = self.scratch.fanin.iter().filter(|p| p.pinned);
                    let pins = pinned.clone().count();
                    if pins > 0 {
                        a.retained.reserve_exact(pins);
                        a.retained.extend(pinned.map(|p| p.slot));
                    }
                }
                (ArgsMut::Packed(packed), Some(arena)) => {
                    let mut list = arena.begin(&shared.rings[task.ring].slots, n, packed);
                    fill_args(args, id, heap_at, memory, outputs, &mut p.tags, |t| list.push(t));
                    list.finish();
                }
                (ArgsMut::Packed(_), None) => {
                    unreachable!("a host-built graph's orchestrator packs its arguments")
                }
            }
        }
        self.mark_pools(sref, task.ring, heap_start + task.out_bytes);
        if is_alloc {
            return false;
        }
        if self.scratch.linked == 0 {
            slot.fanin_complete();
            true
        } else {
            slot.finish_fanin(self.scratch.linked)
        }
    }

    /// Leaves the retirement marks of the task in `sref`: the end of its outputs on the heap and
    /// the ring's dep-pool and fanin-spill tops once it took its entries (rings that reclaim
    /// keep marks, `ReclaimMarks`). Set once the task is wired, before it can be published:
    /// nothing reads a slot's marks before its task retires.
    #[inline]
    fn mark_pools(&self, sref: SlotRef, ring: usize, heap_end: u64) {
        if let Some(marks) = self.shared.rings[ring].marks(sref) {
            let alloc = &self.rings[ring];
            marks.heap_end.store(heap_end, Ordering::Relaxed);
            marks.dep_mark.store(alloc.dep_pool.top(), Ordering::Relaxed);
            marks.spill_mark.store(alloc.spill_pool.top(), Ordering::Relaxed);
        }
    }

    /// Stage 4: the fanin spill beyond the inline capacity, and the dep-pool entries of the
    /// task's links (the sink made them, `LiveSink`), waiting for reclaim when full.
    #[inline]
    fn reserve_links(&mut self, ring: usize) -> Result<(), Stopped> {
        let spill = self.scratch.fanin.len().saturating_sub(FANIN_INLINE_CAP) as u64;
        if spill > 0 {
            self.reserve_pool(Exhausted::FaninSpill, ring, spill)?;
            self.rings[ring].spill_pool.take(spill);
        }
        if self.kind == RuntimeKind::Tmr && self.scratch.linked > 0 {
            let mut need = u64::from(self.scratch.linked);
            let tail = self.shared.rings[ring].dep_tail.load(Ordering::Acquire);
            // With room now, the pool has room when taken (only this thread takes from it).
            if !self.rings[ring].dep_pool.has_room(need, tail) {
                need = self.pending_producers_within(ring)?;
                need = self.reserve_dep_entries(ring, need)?;
            }
            self.rings[ring].dep_pool.take(need);
        }
        Ok(())
    }

    /// Queues a ready task of `shape` in the orchestrator's publication batches (see
    /// `READY_BATCH`), or a host-built graph's in its runs (see `LAUNCH_RUN`).
    #[inline]
    fn ready_soon(&mut self, s: SlotRef, shape: TaskShape) {
        if self.kind == RuntimeKind::Hbg {
            let run = &mut self.launch_runs[shape as usize];
            if run.capacity() == 0 {
                run.reserve_exact(LAUNCH_RUN); // not grown a doubling at a time
            }
            run.push(s);
            if run.len() == LAUNCH_RUN {
                self.shared.ready.publish_run(shape, std::mem::take(run));
            }
            return;
        }
        // Never full: all batches together hold fewer than `READY_BATCH` between flushes.
        self.ready_batches[shape as usize].push(s);
        if self.ready_pending == 0 {
            self.ready_held_since = self.total_tasks;
        }
        self.ready_pending += 1;
        // A parked scheduler has nothing to do: publish now rather than hold the task back
        // while the orchestration does other work. Busy schedulers get whole batches.
        if self.ready_pending == READY_BATCH || self.shared.sched_sleep.has_sleepers() {
            self.publish_ready();
        }
    }

    /// Whether the oldest held ready task has waited [`READY_HOLD`] submits, or a scheduler
    /// sleeps while tasks are held.
    #[inline]
    pub(super) fn ready_overdue(&self) -> bool {
        self.ready_pending > 0
            && (self.total_tasks - self.ready_held_since >= READY_HOLD
                || self.shared.sched_sleep.has_sleepers())
    }
}

/// Pushes the task's tensor arguments through `push` (outputs materialized on the heap from
/// `heap_at` on, with their initial values, and added to `outputs`) and records their tags.
#[inline(always)]
fn fill_args(
    args: &TaskArgs<'_>,
    id: TaskId,
    mut heap_at: u64,
    memory: &RunMemory,
    outputs: &mut Outputs,
    tags: &mut ArgTags,
    mut push: impl FnMut(Tensor),
) {
    // Built in a register and stored once: set in the slot one by one, each tag was a load,
    // a mask and a store into the payload's line.
    let mut all_tags = ArgTags::default();
    for (i, a) in args.tensors().iter().enumerate() {
        all_tags.set(i, a.tag());
        match a {
            TensorArg::Output(ci) => {
                let t = ci.materialize(heap_at, id);
                heap_at += ci.buffer_size_bytes();
                if let Some(v) = ci.initial_value() {
                    if let Ok(buf) = memory.buffer(&t) {
                        let es = t.dtype().size();
                        for off in view_offsets(&t) {
                            store_from_f64(t.dtype(), &buf, (off * es) as usize, v);
                        }
                    }
                }
                outputs.push(t);
                push(t);
            }
            other => push(*other.tensor().expect("non-output args carry a tensor")),
        }
    }
    *tags = all_tags;
}
