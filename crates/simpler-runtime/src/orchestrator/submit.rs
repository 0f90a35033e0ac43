//! One submit: validate, allocate slot and heap, compute the fanin through the shared
//! dependency function, register outputs, write the payload, wire and publish.

use std::sync::atomic::Ordering;

use arrayvec::ArrayVec;
use simpler_core::{
    compute_fanin, register_outputs, registrable_outputs, ArgTag, DepFlags, Edge, FaninError, FaninSink,
    TaskArgs, TaskId, TensorArg, MAX_RINGS,
};

use super::backpressure::Exhausted;
use super::scope::ScopedTask;
use super::{Orchestrator, TaskOutputs};
use crate::collectors::dep_gen::graph::GraphWriter;
use crate::config::RuntimeKind;
use crate::fatal::{FatalCode, Stopped};
use crate::memory::{heap_vbase, store_from_f64, view_offsets};
use crate::platform::{CoreType, MixedKernels, TaskShape};
use crate::ring::{window_has_room, HeapRefusal};
use crate::shared::RunShared;
use crate::slot::{SlotRef, TaskState, SCOPE_BIT};

/// Fanin edges held inline in the payload; more spill into the ring's fanin spill pool.
pub const FANIN_INLINE_CAP: usize = 64;

/// Per-submit scratch reused across submits (no allocation in the steady state).
pub(super) struct Scratch {
    /// Claimed producers: slot, id, OR-ed flags.
    fanin: Vec<(SlotRef, TaskId, DepFlags)>,
    /// Per ring and slot: (epoch, index in `fanin`) for de-duplication.
    seen: [Vec<(u32, u32)>; MAX_RINGS],
    epoch: u32,
}

impl Scratch {
    pub fn new(windows: &[u32; MAX_RINGS]) -> Self {
        Scratch {
            fanin: Vec::with_capacity(64),
            seen: windows.map(|w| vec![(0, 0); w as usize]),
            epoch: 0,
        }
    }

    /// Starts a new submit's de-duplication epoch; on wrap-around (after 2^32 submits) the
    /// marks are cleared so that a mark from 2^32 submits ago cannot alias the new epoch.
    #[inline]
    fn next_epoch(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.seen.iter_mut().for_each(|v| v.fill((0, 0)));
            self.epoch = 1;
        }
    }
}

/// Why the live sink refused an edge.
enum SinkError {
    NotSubmitted(TaskId),
}

/// The runtime's fanin sink: drops producers that already retired, de-duplicates per producer
/// (flags OR-ed) and claims one pin (`fanout_count += 1`) per new live producer.
struct LiveSink<'a> {
    shared: &'a RunShared,
    scratch: &'a mut Scratch,
    next_local: &'a [u32; MAX_RINGS],
    /// `hbg` dep_gen: every discovered edge, annotated, as the runtime builds the graph.
    graph: Option<&'a mut GraphWriter>,
}

impl FaninSink for LiveSink<'_> {
    type Error = SinkError;

    #[inline]
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
        let seen = &mut self.scratch.seen[ring][index as usize];
        if seen.0 == self.scratch.epoch {
            let entry = &mut self.scratch.fanin[seen.1 as usize];
            entry.2 = entry.2 | e.flags;
            return Ok(());
        }
        let mut fan = r.slots[index as usize].fan.lock();
        if fan.local != pid.local() || fan.state == TaskState::Consumed {
            return Ok(()); // retired: no edge, no error
        }
        fan.fanout_count += 1;
        drop(fan);
        *seen = (self.scratch.epoch, self.scratch.fanin.len() as u32);
        self.scratch.fanin.push((
            SlotRef {
                ring: ring as u8,
                index,
            },
            pid,
            e.flags,
        ));
        Ok(())
    }
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

    /// Allocates the next slot and `bytes` of heap on `ring`, waiting for reclaim if needed.
    fn alloc_slot_and_heap(&mut self, ring: usize, bytes: u64) -> Result<u64, Stopped> {
        let window = match self.kind {
            RuntimeKind::Tmr => self.shared.sizes.task_window[ring],
            RuntimeKind::Hbg => self.shared.sizes.task_window[0],
        };
        let mut state = None;
        let mut fresh = false;
        loop {
            let r = &self.shared.rings[ring];
            if fresh {
                self.seen_last_alive[ring] = r.last_alive.load(Ordering::Acquire);
                self.seen_heap_tail[ring] = r.heap_tail.load(Ordering::Acquire);
            }
            let last_alive = self.seen_last_alive[ring];
            let what = if window_has_room(self.next_local[ring], last_alive, window) {
                match self.heaps[ring].try_alloc(bytes, self.seen_heap_tail[ring]) {
                    Ok(start) => {
                        self.done_waiting(state.is_some());
                        return Ok(start);
                    }
                    Err(HeapRefusal::TooLarge) => {
                        let cap = self.heaps[ring].size();
                        let detail =
                            format!("a task needs {bytes} bytes of outputs, more than the whole heap");
                        return Err(self.exhausted(Exhausted::Heap, ring, cap, &detail));
                    }
                    Err(HeapRefusal::Full) => Exhausted::Heap,
                }
            } else {
                Exhausted::TaskWindow
            };
            if !fresh {
                // The cached counters may be stale: re-read them before waiting.
                fresh = true;
                continue;
            }
            let (cap, detail) = match what {
                Exhausted::Heap => {
                    let h = &self.heaps[ring];
                    let used = h.top() - h.tail(self.seen_heap_tail[ring]);
                    (
                        h.size(),
                        format!("{bytes} bytes requested, {used} bytes in use by live tasks"),
                    )
                }
                _ => (
                    u64::from(window),
                    format!("{} tasks in flight", self.next_local[ring] - last_alive),
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
                Exhausted::FaninSpill => (&self.spill_pools[ring], r.spill_tail.load(Ordering::Acquire)),
                _ => (&self.dep_pools[ring], r.dep_tail.load(Ordering::Acquire)),
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

    /// How many of this submit's producers are still pending (only they take dep-pool entries),
    /// after waiting, while they complete, until that many can fit in `ring`'s pool at all.
    ///
    /// Counting costs a lock per producer, so `wire` asks only when the cheap bound (every
    /// producer) does not fit. The count can only shrink before linking: claimed producers never
    /// return to pending. `Err` when none of them completes for [`DEADLOCK_TIMEOUT`].
    ///
    /// [`DEADLOCK_TIMEOUT`]: super::backpressure::DEADLOCK_TIMEOUT
    fn pending_producers_within(&mut self, ring: usize) -> Result<u64, Stopped> {
        let cap = self.dep_pools[ring].capacity();
        let mut last = u64::MAX;
        let mut since = std::time::Instant::now();
        loop {
            // Producers held in this thread's publication batch must reach the schedulers.
            self.flush_ready();
            let shared = &*self.shared;
            let pending = (self.scratch.fanin.iter())
                .filter(|&&(p, _, _)| shared.slot(p).fan.lock().state == TaskState::Pending)
                .count() as u64;
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
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// The whole submit path; `is_alloc` makes the hidden allocation task of `alloc_tensors`.
    pub(super) fn submit_task(
        &mut self,
        kernels: MixedKernels,
        args: &TaskArgs<'_>,
        is_alloc: bool,
    ) -> Result<TaskOutputs, Stopped> {
        self.check_live()?;
        if let Some(e) = args.error() {
            return Err(self.invalid(e.to_string()));
        }
        let kernels = kernels.normalized();
        if let Err(why) = self.validate_kernels(kernels) {
            return Err(self.invalid(why));
        }
        let shape = kernels.shape();
        let launch = args.launch();
        let block_num = u32::from(launch.block_num);
        if launch.require_sync_start && block_num > 1 {
            let limit = if shape == TaskShape::Aiv {
                self.platform().aiv_count()
            } else {
                self.platform().clusters
            };
            if block_num > limit {
                return Err(Stopped(self.raise(
                    FatalCode::RequireSyncStartInvalid,
                    format!(
                        "require_sync_start with block_num {block_num} but only {limit} {} can start at once (scope at {})",
                        if shape == TaskShape::Aiv { "AIV cores" } else { "clusters" },
                        self.current_site()
                    ),
                )));
            }
        }
        let out_bytes: u64 = args
            .tensors()
            .iter()
            .map(|a| match a {
                TensorArg::Output(ci) => ci.buffer_size_bytes(),
                _ => 0,
            })
            .fold(0u64, u64::saturating_add);

        // Scope admission, then slot and heap.
        let frame = *self.scopes.last().expect("the root scope is always open");
        let ring = usize::from(frame.ring);
        if self.kind == RuntimeKind::Tmr {
            let window = self.shared.sizes.task_window[ring];
            let in_scope = self.scope_tasks.len() - frame.first_task;
            if in_scope as u64 + 1 >= u64::from(window) {
                let msg = format!(
                    "scope at {} already holds {in_scope} tasks on ring {ring}, whose task window is {window} slots \
                     (a scope holds at most window-1 tasks); raise runtime_env ring_task_window or split the scope",
                    super::site_string(frame.site)
                );
                return Err(Stopped(self.raise(FatalCode::ScopeDeadlock, msg)));
            }
        }
        let heap_start = self.alloc_slot_and_heap(ring, out_bytes)?;
        let local = self.next_local[ring];
        self.next_local[ring] += 1;
        self.total_tasks += 1;
        let id = TaskId::new(ring as u8, local);
        let sref = SlotRef {
            ring: ring as u8,
            index: local & self.shared.rings[ring].mask,
        };
        // The slot is re-derived from `self.shared` after every call that needs `&mut self`
        // (a field borrow costs nothing; cloning the `Arc` per submit costs two atomic RMWs).
        {
            let slot = self.shared.slot(sref);
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
            drop(fan);
            slot.next_block.store(0, Ordering::Relaxed);
            slot.remaining
                .store(block_num * kernels.active_count(), Ordering::Relaxed);
            slot.shape.store(shape as u8, Ordering::Relaxed);
            slot.heap_end.store(heap_start + out_bytes, Ordering::Relaxed);
        }
        self.scope_tasks.push(ScopedTask { slot: sref, local });

        // Dependencies (not for the hidden alloc task: it has no inputs).
        self.scratch.next_epoch();
        self.scratch.fanin.clear();
        let manual = self.manual_depth.is_some();
        if !is_alloc {
            if let Some(c) = &mut self.dep_gen {
                c.record(id, manual, kernels, args);
            }
            if let Some(g) = &mut self.dep_graph {
                let view: ArrayVec<
                    (ArgTag, Option<simpler_core::Tensor>),
                    { simpler_core::MAX_TENSOR_ARGS },
                > = args
                    .tensors()
                    .iter()
                    .map(|a| (a.tag(), a.tensor().copied()))
                    .collect();
                g.begin_task(
                    id,
                    manual,
                    args.early_resolve(),
                    kernels.as_array(),
                    block_num,
                    &view,
                );
            }
            if self.kind == RuntimeKind::Tmr
                && local.is_multiple_of(simpler_core::tensormap::CLEANUP_INTERVAL)
            {
                self.seen_last_alive[ring] = self.shared.rings[ring].last_alive.load(Ordering::Acquire);
            }
            self.tmap.set_watermark(ring as u8, self.seen_last_alive[ring]);
            self.tmap.sync(id);
            let found = {
                let mut sink = LiveSink {
                    shared: &self.shared,
                    scratch: &mut self.scratch,
                    next_local: &self.next_local,
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
            match found {
                Ok(()) => {}
                Err(FaninError::InvalidExplicitDep { index, id: bad }) => {
                    return Err(self.invalid(format!(
                        "explicit dependency #{index} is not a task id ({:#x})",
                        bad.raw()
                    )));
                }
                Err(FaninError::SelfDependency { arg }) => {
                    let e = FaninError::<std::convert::Infallible>::SelfDependency { arg };
                    return Err(self.invalid(e.to_string()));
                }
                Err(FaninError::Sink(SinkError::NotSubmitted(bad))) => {
                    return Err(
                        self.invalid(format!("dependency on task {bad}, which has not been submitted"))
                    );
                }
            }
            let n = registrable_outputs(manual, args.tensors());
            if n > 0 {
                self.ensure_tensormap(n)?;
                register_outputs(id, manual, args.tensors(), &mut self.tmap)
                    .expect("room was made by ensure_tensormap");
            }
        }

        // Payload: materialize outputs, copy arguments and the fanin.
        let mut outputs = ArrayVec::new();
        {
            let shared = &*self.shared;
            let mut p = shared.slot(sref).payload.write();
            p.id = id;
            p.kernels = kernels;
            p.block_num = block_num;
            p.args.clear();
            p.scalars.clear();
            p.scalars.extend(args.scalars().iter().copied());
            let mut offset = heap_start;
            for a in args.tensors() {
                match a {
                    TensorArg::Output(ci) => {
                        let t = ci.materialize(heap_vbase(ring) + offset, id);
                        offset += ci.buffer_size_bytes();
                        if let Some(v) = ci.initial_value() {
                            if let Ok(buf) = shared.memory.buffer(&t) {
                                let es = t.dtype().size();
                                for off in view_offsets(&t) {
                                    store_from_f64(t.dtype(), &buf, (off * es) as usize, v);
                                }
                            }
                        }
                        outputs.push(t);
                        p.args.push((ArgTag::Output, t));
                    }
                    other => p.args.push((
                        other.tag(),
                        *other.tensor().expect("non-output args carry a tensor"),
                    )),
                }
            }
            p.fanin.clear();
            p.fanin.extend(self.scratch.fanin.iter().map(|&(s, _, f)| (s, f)));
        }

        if is_alloc {
            let slot = self.shared.slot(sref);
            slot.dep_mark.store(self.dep_pools[ring].top(), Ordering::Relaxed);
            slot.spill_mark
                .store(self.spill_pools[ring].top(), Ordering::Relaxed);
            self.shared.task_finished();
            return Ok(TaskOutputs { id, outputs });
        }
        let spill = self.scratch.fanin.len().saturating_sub(FANIN_INLINE_CAP) as u64;
        if spill > 0 {
            self.reserve_pool(Exhausted::FaninSpill, ring, spill)?;
            self.spill_pools[ring].take(spill);
        }
        self.shared
            .slot(sref)
            .spill_mark
            .store(self.spill_pools[ring].top(), Ordering::Relaxed);
        self.wire(sref, ring)?;
        if let Some(log) = &mut self.fanin_log {
            log.push(super::FaninRecord {
                task: id,
                producers: self.scratch.fanin.iter().map(|&(_, p, f)| (p, f)).collect(),
            });
        }
        Ok(TaskOutputs { id, outputs })
    }

    /// Queues a ready task in the orchestrator's publication batch (see `READY_BATCH`).
    #[inline]
    fn ready_soon(&mut self, s: SlotRef) {
        if self.ready_batch.try_push(s).is_err() {
            self.flush_ready();
            self.ready_batch.push(s);
        }
        // A parked scheduler has nothing to do: publish now rather than hold the task back
        // while the orchestration does other work. Busy schedulers get whole batches.
        if self.ready_batch.is_full() || self.shared.sched_sleep.has_sleepers() {
            self.flush_ready();
        }
    }

    /// Wires the task into its producers' fanout lists and publishes it when ready.
    fn wire(&mut self, sref: SlotRef, ring: usize) -> Result<(), Stopped> {
        let n = self.scratch.fanin.len() as u32;
        if n == 0 {
            let slot = self.shared.slot(sref);
            slot.dep_mark.store(self.dep_pools[ring].top(), Ordering::Relaxed);
            slot.fanin_count.store(1, Ordering::Release);
            slot.fanin_refcount.store(1, Ordering::Release);
            self.ready_soon(sref);
            return Ok(());
        }
        let mut need = u64::from(n);
        if self.kind == RuntimeKind::Tmr {
            let tail = self.shared.rings[ring].dep_tail.load(Ordering::Acquire);
            if !self.dep_pools[ring].has_room(need, tail) {
                need = self.pending_producers_within(ring)?;
            }
        }
        self.reserve_pool(Exhausted::DepPool, ring, need)?;
        let ready = {
            let shared = &*self.shared;
            let slot = shared.slot(sref);
            slot.fanin_refcount.store(0, Ordering::Relaxed);
            slot.fanin_count.store(n + 1, Ordering::Release);
            let mut completed = 0u32;
            let mut linked = 0u64;
            for &(p, _, _) in &self.scratch.fanin {
                let mut fan = shared.slot(p).fan.lock();
                if fan.state == TaskState::Pending {
                    fan.consumers.push(sref);
                    linked += 1;
                } else {
                    completed += 1;
                }
            }
            if self.kind == RuntimeKind::Tmr {
                self.dep_pools[ring].take(linked);
            }
            slot.dep_mark.store(self.dep_pools[ring].top(), Ordering::Relaxed);
            for &(p, _, flags) in &self.scratch.fanin {
                if !flags.contains(DepFlags::RETAIN) {
                    shared.release_pin(p);
                }
            }
            slot.fanin_refcount.fetch_add(completed + 1, Ordering::AcqRel) + completed + 1 == n + 1
        };
        if ready {
            self.ready_soon(sref);
        }
        Ok(())
    }
}
