//! Task slots: per-ring storage for in-flight tasks (the task window is the slab).
//!
//! A slot is reused once its task is retired; nothing here allocates in the steady state
//! (vectors keep their capacity across reuse).

use crate::sync::{AtomicU32, AtomicU8, Ordering};

use crate::sync::{Exclusive, HandoffCell, Mutex, Shared};
use simpler_core::{ArgTag, DType, TaskId, Tensor, MAX_SCALAR_ARGS, MAX_TENSOR_ARGS};
use smallvec::SmallVec;
use thin_vec::ThinVec;

use crate::platform::{MixedKernels, TaskShape};
use crate::ring::arg_arena::PackedArgs;

/// Tensor arguments a host-built graph's slot keeps in place, packed (`PackedArgs`).
pub(crate) const INLINE_ARGS: usize = 2;

/// Tensor arguments a `tmr` slot keeps in place, whole ([`InlineArgs`]).
pub(crate) const IN_PLACE_ARGS: usize = 2;

/// A task's consumer list (see [`Fan::consumers`]).
pub(crate) type Consumers = SmallVec<[SlotRef; 2]>;

/// The producers a task holds a RETAIN pin on (`tmr` only): two inline, in the space the heap
/// pointer and length take, so the common task allocates nothing even in a fresh slot. (A
/// `ThinVec`, 8 bytes, would spare a host-built graph 16 bytes a slot; it cost `tmr`
/// 1.07–1.15 on fan-out and tiled GEMM, 11 pairs each: one more line to load per completion.)
pub(crate) type Retained = SmallVec<[SlotRef; 2]>;

/// Set in `fanout_count` at slot reset, released by the end of the task's own scope.
pub(crate) const SCOPE_BIT: u32 = 0x8000_0000;

/// Lifecycle of the task in a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TaskState {
    /// Submitted, not yet completed; also the state a slot keeps for its next task, before
    /// that task is submitted ([`Slot::new`], [`Slot::consume`]). A host-built graph's task
    /// keeps it once it ran: nothing reads its fan after the build, so its completion writes
    /// nothing into the slot (`RunShared::complete_built`).
    Pending,
    /// Ran (or was completed inline; in a host-built graph, only an alloc task, completed at
    /// its submit, reads so). Once every pin is back and its scope has ended, the
    /// task retires and its slot's fan is left PENDING for the slot's next task
    /// ([`Slot::consume`]).
    Completed,
}

/// A slot address: ring and index in that ring's window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SlotRef {
    pub ring: u8,
    pub index: u32,
}

/// The part of a slot guarded by its lock: state and fanout bookkeeping.
pub(crate) struct Fan {
    /// Local id of the task occupying the slot.
    pub local: u32,
    pub state: TaskState,
    /// `SCOPE_BIT` | consumers that claimed a pin.
    pub fanout_count: u32,
    /// `SCOPE_BIT` at scope end + 1 per consumer release.
    pub fanout_refcount: u32,
    /// Consumers waiting for this task to complete: two inline (as many as the heap pointer
    /// and length take), so the common task allocates nothing even in a fresh slot (`hbg`).
    pub consumers: Consumers,
}

impl Fan {
    /// Marks the task COMPLETED and hands over its consumers, leaving the fan an empty inline
    /// list, whatever the task's list took: the next link into this slot then writes the fan's
    /// own line, which the link's lock has just taken. Swapping the list for the completing
    /// thread's drained buffer left the fan with that thread's heap buffer instead, a line it
    /// last read, and a later task of the slot paid a miss inside its producer's lock: a third
    /// of a fan-out's join links did (`docs/performance.md`, item 72).
    #[inline]
    pub fn complete(&mut self) -> Consumers {
        self.state = TaskState::Completed;
        std::mem::take(&mut self.consumers)
    }

    /// The fan as task `local` starts it: PENDING, the scope's pin, no consumer.
    fn ready_for(local: u32) -> Fan {
        Fan {
            local,
            state: TaskState::Pending,
            fanout_count: SCOPE_BIT,
            fanout_refcount: 0,
            consumers: Consumers::new(),
        }
    }
}

/// What the orchestrator writes before publishing the task and the scheduler reads to run it.
pub(crate) struct Payload {
    pub id: TaskId,
    pub kernels: MixedKernels,
    /// The tag of each tensor argument (the arguments are beside the payload, under the same
    /// lock: [`Guarded`]).
    pub tags: ArgTags,
    /// Scalar arguments (most tasks have none: kept off the slot, which stays small).
    pub scalars: ThinVec<u64>,
    pub block_num: u32,
    /// What the args dump reads, written only while it is on: boxed, 8 bytes in a slot that
    /// would otherwise carry 16 for a diagnostic most runs leave off (a reused slot keeps it).
    pub dump: Option<Box<DumpSelection>>,
}

impl Payload {
    /// An empty payload.
    fn new() -> Payload {
        Payload {
            id: TaskId::INVALID,
            kernels: MixedKernels::NONE,
            tags: ArgTags::default(),
            scalars: ThinVec::new(),
            block_num: 1,
            dump: None,
        }
    }
}

/// A task's args-dump selection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DumpSelection {
    /// Bit i = argument i, tensors first.
    pub mask: u64,
    /// Scalar dtypes, 4 bits per scalar ([`pack_dtypes`]).
    pub scalar_dtypes: u64,
}

/// `tmr`'s tensor arguments: two in place (no allocation and no extra line to touch for the
/// common 1–2 argument task), more on the heap, whose capacity a reused slot keeps. (In a
/// vector of their own they cost a 2-argument tmr task 1.1–1.3× end to end: lines the
/// orchestrator writes away from the slot's. Three in place made the slot 400 bytes, not a
/// whole number of lines: a tiled GEMM's 3-argument tasks took 0.97 of the time, 1–2
/// argument tasks 1.03–1.04; `docs/performance.md`, session 21's tried and dropped.)
pub(crate) type InlineArgs = SmallVec<[Tensor; IN_PLACE_ARGS]>;

/// What a `tmr` slot keeps beside its payload: the tensor arguments in place and the producers
/// the task holds a RETAIN pin on. A host-built graph's slot has neither (its arguments are
/// packed, [`PackedArgs`], and it never reclaims, so it keeps no pins): 24 bytes of its slot
/// went to a pin list it never wrote (160 bytes a slot, 184 before; `docs/performance.md`,
/// item 68).
#[derive(Default)]
#[repr(C)]
pub(crate) struct InPlaceArgs {
    /// The tensor arguments.
    pub tensors: InlineArgs,
    /// Producers the task holds a RETAIN pin on, read to release the pins at completion.
    /// WAIT-only producers hold no pin and are not listed (`LiveSink` in
    /// `orchestrator/submit.rs`).
    pub retained: Retained,
}

/// A task-window slot: the [`Payload`] and the task's tensor arguments, then its [`Slot`] (fan
/// and counters, what every part of the runtime reads without knowing the ring's kind). The
/// arguments are [`InPlaceArgs`] (with the task's RETAIN pins) in a `tmr` ring and [`PackedArgs`]
/// (template numbers and offsets, 32 bytes where two whole tensors take 160) in a host-built
/// graph's, whose slots are most of its memory (160 bytes a slot, 336 before).
///
/// The order is measured, not incidental: with the fan and counters first, or the arguments
/// outside the lock after the counters, a tmr 2-argument task took 1.2–1.5× as long end to end
/// in 7–11 pairs against the earlier slot (its fan first, its counters last); in this order it
/// took 1.00 (`docs/performance.md`, item 36).
///
/// The payload takes no lock (a [`HandoffCell`]): who may touch it, and when, follows from
/// the task's life, the **payload protocol** every access proves itself against:
///
/// 1. the orchestrator writes it ([`RingSlot::write`]) for the task it submits, before it
///    publishes the task, in a slot no task has used (built before the orchestrator's thread
///    saw it) or whose last task retired ([`Slot::consume`], a Release store the orchestrator
///    read with Acquire, `Slot::fan_ready_for`, before it took the slot);
/// 2. it is read ([`RingSlot::read`]) only by a thread the task's publication reached (a ready
///    queue or lane, or the completion that readied it: Acquire of the orchestrator's
///    Release), and only until the task completes: the last thread to finish a block reads it
///    before it marks the task COMPLETED (`RunShared::complete`); the threads that ran the
///    other blocks finished theirs before (`remaining`, AcqRel); a dummy task's payload is
///    read before its completion too;
/// 3. the task retires only after it is COMPLETED, so every read ends before the retirement
///    that comes before the slot's next write.
///
/// A host-built graph's orchestrator writes every payload before the schedulers start, and
/// nothing retires while they run.
#[repr(C)]
pub(crate) struct RingSlot<A> {
    payload: HandoffCell<Guarded<A>>,
    pub core: Slot,
}

impl RingSlot<PackedArgs> {
    /// Whether anything in this host-built graph's slot owns heap memory: a spilled consumer
    /// list, scalars, an args-dump selection. Every field of the slot is named, so that a field
    /// added to it must be decided here: a slot not noted as owning heap memory is freed
    /// without being dropped (`SlotStore::note_heap` and `Drop for SlotStore` in
    /// `ring/slots.rs`, which checks this in test and debug builds).
    #[cfg(not(feature = "loom"))]
    pub fn owns_heap(&mut self) -> bool {
        const fn copy<T: Copy>() {}
        const _: () = copy::<PackedArgs>(); // owns nothing
        let RingSlot { payload, core } = self;
        let Slot {
            fan,
            fanin_pending: _,
            remaining: _,
            next_block: _,
            consumed: _,
            shape: _,
        } = core;
        let Fan {
            local: _,
            state: _,
            fanout_count: _,
            fanout_refcount: _,
            consumers,
        } = fan.get_mut();
        // SAFETY: `&mut self`: no other access to the payload is alive.
        let guarded = unsafe { payload.read() };
        let Guarded {
            args: _,
            payload:
                Payload {
                    id: _,
                    kernels: _,
                    tags: _,
                    scalars,
                    block_num: _,
                    dump,
                },
        } = guarded;
        consumers.spilled() || scalars.capacity() > 0 || dump.is_some()
    }
}

/// A slot's payload and tensor arguments, handed over together.
#[repr(C)]
pub(crate) struct Guarded<A> {
    args: A,
    payload: Payload,
}

impl<A: Default> RingSlot<A> {
    /// An empty slot, ready for its first task, `local`, of a ring of `window` slots
    /// ([`Slot::new`]).
    pub fn new(local: u32, window: u32) -> Self {
        RingSlot {
            core: Slot::new(local, window),
            payload: HandoffCell::new(Guarded {
                args: A::default(),
                payload: Payload::new(),
            }),
        }
    }
}

impl<A> RingSlot<A> {
    /// The payload and the arguments, for reading.
    ///
    /// # Safety
    ///
    /// The caller reads as the payload protocol's rule 2 says ([`RingSlot`]): the slot's task
    /// was published to its thread and has not completed, nor will while the result lives.
    #[inline]
    pub unsafe fn read(&self) -> ArgsRead<'_, A> {
        // SAFETY: by rule 2, the task's payload write happened before, and no write comes
        // before the task retires, which is after the caller's read ends (rule 3).
        ArgsRead(unsafe { self.payload.read() })
    }

    /// The payload and the arguments, for writing.
    ///
    /// # Safety
    ///
    /// The caller is the orchestrator, writing as the payload protocol's rule 1 says
    /// ([`RingSlot`]): for the task it is submitting, not yet published, in a slot whose last
    /// task retired (or that no task used).
    #[inline]
    pub unsafe fn write(&self) -> ArgsWrite<'_, A> {
        // SAFETY: by rule 1 the slot's last task retired before this call, so every read of
        // its payload ended before (rule 3), and no thread reads the new task's payload
        // before the orchestrator publishes it, after the result is dropped.
        ArgsWrite(unsafe { self.payload.write() })
    }

    /// Asks the CPU to start loading every cache line of the slot, for a scheduler thread that
    /// knows which task it runs next: a host-built graph's slots are cold when it executes (the
    /// build wrote them long before), and the first load of a task's slot was a quarter of
    /// `execute`'s samples. A no-op off x86_64.
    #[inline]
    pub fn prefetch(&self) {
        crate::prefetch::range_for_read((self as *const Self).cast(), std::mem::size_of::<Self>());
    }
}

impl<A> RingSlot<A> {
    /// Asks for every cache line of the slot, for writing: for the orchestrator, a few tasks
    /// before it reuses the slot, whose lines the scheduler that ran its last task holds.
    #[inline]
    pub fn prefetch_for_write(&self) {
        crate::prefetch::range_for_write((self as *const Self).cast(), std::mem::size_of::<Self>());
    }
}

/// A slot's payload and arguments, for reading ([`RingSlot::read`]).
pub(crate) struct ArgsRead<'a, A>(Shared<'a, Guarded<A>>);

impl<A> ArgsRead<'_, A> {
    /// The task's tensor arguments.
    #[inline]
    pub fn args(&self) -> &A {
        &self.0.args
    }
}

impl<A> std::ops::Deref for ArgsRead<'_, A> {
    type Target = Payload;
    #[inline]
    fn deref(&self) -> &Payload {
        &self.0.payload
    }
}

/// A slot's payload and arguments, for writing ([`RingSlot::write`]).
pub(crate) struct ArgsWrite<'a, A>(Exclusive<'a, Guarded<A>>);

impl<A> ArgsWrite<'_, A> {
    /// The payload and the arguments, both writable.
    #[inline]
    pub fn parts(&mut self) -> (&mut Payload, &mut A) {
        let g = &mut *self.0;
        (&mut g.payload, &mut g.args)
    }
}

/// The tags of a task's tensor arguments, 4 bits each: 16 bytes for up to
/// [`MAX_TENSOR_ARGS`], the padding two inline `(tag, tensor)` pairs took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ArgTags([u64; 2]);

const _: () = assert!(MAX_TENSOR_ARGS <= 32, "ArgTags packs 32 tags");

impl ArgTags {
    /// Sets the tag of argument `i` (< [`MAX_TENSOR_ARGS`]).
    #[inline]
    pub fn set(&mut self, i: usize, tag: ArgTag) {
        let shift = 4 * (i % 16);
        let with = |word: u64| (word & !(0xf << shift)) | ((tag as u64) << shift);
        // Constant indices: a local `ArgTags` stays in two registers. Indexed by `i / 16`, it
        // lived on the stack, and its copy into the payload, a 16-byte load over two 8-byte
        // stores, waited for the store buffer to drain (session 46).
        if i < 16 {
            self.0[0] = with(self.0[0]);
        } else {
            self.0[1] = with(self.0[1]);
        }
    }

    /// The tag of argument `i`, as last set.
    #[inline]
    pub fn get(&self, i: usize) -> ArgTag {
        let (word, shift) = (i / 16, 4 * (i % 16));
        match (self.0[word] >> shift) & 0xf {
            0 => ArgTag::Input,
            1 => ArgTag::Output,
            2 => ArgTag::Inout,
            3 => ArgTag::OutputExisting,
            _ => ArgTag::NoDep,
        }
    }
}

/// Packs scalar dtypes 4 bits each (0 = none, else `DType::ALL` index + 1): a slot carries 8
/// bytes for them instead of 16.
#[inline]
pub(crate) fn pack_dtypes(d: &[Option<DType>]) -> u64 {
    d.iter()
        .take(MAX_SCALAR_ARGS)
        .enumerate()
        .fold(0, |acc, (j, t)| acc | (t.map_or(0, |t| t as u64 + 1) << (4 * j)))
}

/// The dtype of scalar `j` packed by [`pack_dtypes`].
#[inline]
pub(crate) fn unpack_dtype(packed: u64, j: usize) -> Option<DType> {
    let code = (packed >> (4 * j)) & 0xf;
    code.checked_sub(1)
        .and_then(|i| DType::ALL.get(i as usize).copied())
}

/// Host bytes one `tmr` task-window slot takes before any task uses it (what a window size
/// costs): the slot with two tensor arguments in place.
pub(crate) const SLOT_BYTES: usize = std::mem::size_of::<RingSlot<InPlaceArgs>>();

/// Host bytes one slot of a host-built graph takes: the slot with its packed arguments.
pub(crate) const PACKED_SLOT_BYTES: usize = std::mem::size_of::<RingSlot<PackedArgs>>();

/// The most bytes a host-built graph's slot may take. It keeps one slot per task (1M tasks: a
/// 2^20-slot window), so the slot is most of its memory per task (`docs/performance.md`
/// accounts for it); it once carried 16 scalars inline (136 bytes) for tasks that mostly have
/// none, then a 24-byte `Vec` for the scalars (now a `ThinVec`, 8 bytes), then the reclaim
/// marks only `tmr` reads (now beside the slots, `ReclaimMarks`), 16 bytes of args-dump
/// selection (now boxed, [`DumpSelection`]) and two inline tensor arguments, 168 bytes (now
/// packed, [`PackedArgs`], 32), then a reader-writer lock over the payload, 8 bytes (now
/// none: the payload protocol, [`RingSlot`]), then the RETAIN pin list only `tmr` writes, 24
/// bytes (now beside `tmr`'s arguments, [`InPlaceArgs`]). The build fails when the slot
/// outgrows this (336 bytes before the arguments were packed).
#[cfg(not(feature = "loom"))]
pub(crate) const SLOT_BUDGET: usize = 160;
// (Not under loom, whose model locks and atomics are larger than the real ones.)
#[cfg(not(feature = "loom"))]
const _: () = assert!(
    PACKED_SLOT_BYTES <= SLOT_BUDGET,
    "a task slot outgrew SLOT_BUDGET"
);

/// A task's count-downs from its first link until the orchestrator's [`Slot::finish_fanin`]:
/// more than any task has producers.
pub(crate) const LINKS_OPEN: u32 = 1 << 31;

/// The part of a task slot every part of the runtime reads without knowing the ring's kind:
/// the fan and the counters ([`RingSlot`] adds the payload and the arguments after it).
#[repr(C)]
pub(crate) struct Slot {
    pub fan: Mutex<Fan>,
    /// Count-downs the task still waits for before it is ready: [`LINKS_OPEN`] from its first
    /// link, one per linked producer as it completes and the rest by the orchestrator once
    /// the task is wired ([`Slot::await_links`], [`Slot::finish_fanin`]).
    pub fanin_pending: AtomicU32,
    /// Subtasks (blocks × active subslots) not yet finished.
    pub remaining: AtomicU32,
    /// Next SPMD block index to dispatch.
    pub next_block: AtomicU32,
    /// The local id of the last task consumed in this slot ([`Slot::consume`]), for the
    /// ring's advance, which reads it without locking the fan (`u32::MAX` at first).
    pub consumed: AtomicU32,
    pub shape: AtomicU8,
}

impl Slot {
    /// A slot ready for its first task, `local`, of a ring of `window` slots: the fan as that
    /// task starts it (PENDING, the scope's pin, no consumer), and `consumed` as if task
    /// `local − window` had retired here, so the task's submit neither writes the fan nor
    /// takes its lock ([`Slot::fan_ready_for`]), as for every later task of the slot
    /// ([`Slot::consume`]). Nothing reads the fan before that submit: an edge to a task not
    /// yet submitted is refused by its local id first (`LiveSink::edge`), and the ring's
    /// advance never reaches a slot whose task was not submitted.
    pub fn new(local: u32, window: u32) -> Slot {
        Slot {
            fan: Mutex::new(Fan::ready_for(local)),
            fanin_pending: AtomicU32::new(0),
            remaining: AtomicU32::new(0),
            next_block: AtomicU32::new(0),
            consumed: AtomicU32::new(local.wrapping_sub(window)),
            shape: AtomicU8::new(TaskShape::Dummy as u8),
        }
    }
}

impl Slot {
    /// Asks for the line of the fan lock, for writing, for a thread that will lock it soon:
    /// the scheduler that completed the task last wrote it, so the lock's read-modify-write
    /// otherwise waits for the line.
    #[inline]
    pub fn prefetch_fan(&self) {
        crate::prefetch::line_for_write((&self.fan as *const Mutex<Fan>).cast());
    }

    /// Retires the task in this slot, whose fan the caller holds locked (COMPLETED, every pin
    /// back, its scope ended), and publishes that for the ring's advance
    /// (`RingShared::advance`), which then reads one atomic per slot instead of locking and
    /// unlocking its fan: that lock pair was most of the orchestrator's `advance` in a tmr
    /// profile (14 ns a task).
    ///
    /// The fan is left as the slot's next task starts it: that task is `window` on (the
    /// ring's window, the next local id with this slot), PENDING, with the scope's pin and no
    /// consumer. Its submit then neither writes the fan nor takes its lock
    /// ([`Slot::fan_ready_for`]); the lock pair was a fifth of a tmr submit's own samples.
    /// A lookup of this task still finds it retired: the fan's local id is no longer its own.
    #[inline]
    pub fn consume(&self, fan: &mut Fan, window: u32) {
        let local = fan.local;
        fan.local = local.wrapping_add(window);
        fan.state = TaskState::Pending;
        fan.fanout_count = SCOPE_BIT;
        fan.fanout_refcount = 0;
        fan.consumers.clear();
        // Release: whoever reads this local id here sees the task's completion and every
        // write before it (the fan's too), as it did through the fan lock.
        self.consumed.store(local, Ordering::Release);
    }

    /// Opens the task's fanin before its first link into a producer's consumer list (under
    /// that producer's fan lock, whose release publishes it): [`LINKS_OPEN`] count-downs to
    /// go, more than its producers can take, so that producers completing before the task is
    /// wired only count themselves down ([`Slot::producer_completed`]) and the orchestrator's
    /// [`Slot::finish_fanin`] takes the rest.
    #[inline]
    pub fn await_links(&self) {
        self.fanin_pending.store(LINKS_OPEN, Ordering::Relaxed);
    }

    /// The orchestrator's count-down for a task wired with `linked` producers in whose
    /// consumer lists it is ([`Slot::await_links`] first): true when they all completed
    /// already and the task is ready now; otherwise the last of them to complete readies it.
    ///
    /// Once, either way, and decided by each side's own read-modify-write alone: with a
    /// separate target read after the count, a completion that counted and then read late
    /// could find the target of the slot's next task and ready that one a second time (the
    /// loom model `a_late_producer_completion_never_readies_the_next_task_of_the_slot`).
    #[inline]
    pub fn finish_fanin(&self, linked: u32) -> bool {
        let rest = LINKS_OPEN - linked;
        self.fanin_pending.fetch_sub(rest, Ordering::AcqRel) == rest
    }

    /// The fanin of a task in no producer's consumer list (none pending when met, or none at
    /// all): complete, and ready now. Nothing but the orchestrator touches the count.
    #[inline]
    pub fn fanin_complete(&self) {
        self.fanin_pending.store(0, Ordering::Relaxed);
    }

    /// One linked producer of this slot's task completed: true when that made the task ready
    /// (it was the last count-down). Nothing is read of the slot after the count.
    #[inline]
    pub fn producer_completed(&self) -> bool {
        self.fanin_pending.fetch_sub(1, Ordering::AcqRel) == 1
    }

    /// Runs `f` on the fan without its lock, in a host-built graph, where one thread at a time
    /// can reach a fan (the **single-owner rule**):
    ///
    /// - while the graph is built, the orchestrator's thread alone touches slots that hold
    ///   tasks (the prefault thread builds spare chunks, which reach the orchestrator through
    ///   a queue before any of their slots is used, `ring/slots.rs`); no scheduler thread
    ///   exists yet, and alloc tasks complete on the orchestrator's thread;
    /// - once it runs, a task's fan is touched only by the completion of that task, which
    ///   reads it and writes nothing (`RunShared::complete_built`) and happens once (the last
    ///   block to finish, counted by `remaining`), on one thread; the build's writes happen
    ///   before it (the scheduler threads are spawned after the build returns), and no
    ///   completion touches another task's fan (a consumer is readied through its
    ///   `fanin_pending`, not its fan), nor does anything else (scope ends and ring advances
    ///   are `tmr`'s).
    ///
    /// The fan's two atomic read-modify-writes per lock pair were 84 % of a host-built graph's
    /// completions (`docs/performance.md`, item 67).
    ///
    /// # Safety
    ///
    /// The slot is in a host-built graph's ring, and the caller is the thread the single-owner
    /// rule names: the orchestrator while the graph is built, or the thread completing the
    /// slot's task once it runs.
    #[inline]
    pub unsafe fn fan_exclusive<R>(&self, f: impl FnOnce(&mut Fan) -> R) -> R {
        // SAFETY: by the single-owner rule, no other thread accesses this fan while `f` runs,
        // and every earlier access by another thread (the build's, for a completion) happens
        // before this one (the scheduler threads' spawn).
        unsafe { crate::sync::with_unlocked(&self.fan, f) }
    }

    /// Runs `f` on the fan: without its lock when `single_owner` (a host-built graph's slot,
    /// [`Slot::fan_exclusive`]), else under it (`tmr`, whose schedulers run beside the
    /// orchestrator). The one place that chooses between the two (the build's links,
    /// `LiveSink::edge`; a completion knows its ring's kind first, `RunShared::complete`).
    ///
    /// # Safety
    ///
    /// When `single_owner`, as [`Slot::fan_exclusive`]; otherwise none.
    #[inline]
    pub unsafe fn with_fan<R>(&self, single_owner: bool, f: impl FnOnce(&mut Fan) -> R) -> R {
        if single_owner {
            // SAFETY: the caller's guarantee, passed on.
            unsafe { self.fan_exclusive(f) }
        } else {
            f(&mut self.fan.lock())
        }
    }

    /// Whether the fan is as task `local` of a ring with `window` slots starts it: the slot's
    /// last task was `local − window` and retired ([`Slot::consume`]), or the slot was built
    /// for `local` as its first task ([`Slot::new`]).
    #[inline]
    pub fn fan_ready_for(&self, local: u32, window: u32) -> bool {
        self.consumed.load(Ordering::Acquire) == local.wrapping_sub(window)
    }
}

/// Decodes a stored shape.
pub(crate) fn shape_from_u8(v: u8) -> TaskShape {
    match v {
        0 => TaskShape::Aic,
        1 => TaskShape::Aiv,
        2 => TaskShape::Mix,
        _ => TaskShape::Dummy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetching_a_slot_for_reading_or_writing_leaves_it_as_it_was() {
        // Slots at every offset from a line boundary: the last line is asked for too.
        let slots: Vec<RingSlot<PackedArgs>> = (0..9).map(|i| RingSlot::new(i, 16)).collect();
        for (i, slot) in slots.iter().enumerate() {
            slot.core
                .remaining
                .store(i as u32, crate::sync::Ordering::Relaxed);
            slot.prefetch();
            slot.prefetch_for_write();
            slot.core.prefetch_fan();
        }
        for (i, slot) in slots.iter().enumerate() {
            assert_eq!(slot.core.remaining.load(crate::sync::Ordering::Relaxed), i as u32);
            assert_eq!(slot.core.fan.lock().local, i as u32);
            // SAFETY: one thread, no write.
            let payload = unsafe { slot.read() };
            assert_eq!((payload.id, payload.args().len()), (TaskId::INVALID, 0));
        }
    }

    /// A completion hands over every consumer, in order, and leaves the fan an inline list,
    /// however many consumers spilled it onto the heap (`Fan::complete`).
    #[test]
    fn a_completed_fan_hands_over_its_consumers_and_keeps_an_inline_list() {
        let mut fan = Fan::ready_for(3);
        let consumers: Vec<SlotRef> = (0..5).map(|index| SlotRef { ring: 0, index }).collect();
        fan.consumers.extend(consumers.iter().copied());
        assert!(fan.consumers.spilled());
        let taken = fan.complete();
        assert_eq!(taken.as_slice(), consumers.as_slice());
        assert_eq!(fan.state, TaskState::Completed);
        assert!(fan.consumers.is_empty() && !fan.consumers.spilled());
    }

    #[test]
    fn a_retired_task_leaves_its_fan_as_the_next_task_of_its_slot_starts_it() {
        const WINDOW: u32 = 8;
        let slot = Slot::new(3, WINDOW);
        // Built for its first task, 3: ready for it and for no other local id.
        assert!(slot.fan_ready_for(3, WINDOW));
        for other in [2, 4, 3 + WINDOW, 3 + 2 * WINDOW, u32::MAX] {
            assert!(!slot.fan_ready_for(other, WINDOW), "{other}");
        }
        // (local, state, fanout count, fanout refcount, consumers)
        let fan_of = |slot: &Slot| {
            let f = slot.fan.lock();
            (
                f.local,
                f.state,
                f.fanout_count,
                f.fanout_refcount,
                f.consumers.len(),
            )
        };
        assert_eq!(fan_of(&slot), (3, TaskState::Pending, SCOPE_BIT, 0, 0));
        {
            let mut fan = slot.fan.lock();
            fan.local = 3;
            fan.state = TaskState::Completed;
            fan.fanout_count = SCOPE_BIT | 2;
            fan.fanout_refcount = SCOPE_BIT | 2;
            fan.consumers.push(SlotRef { ring: 0, index: 4 });
            slot.consume(&mut fan, WINDOW);
        }
        assert_eq!(slot.consumed.load(crate::sync::Ordering::Relaxed), 3);
        // Only task 3 + WINDOW takes this slot next; no other local id finds it ready.
        assert!(slot.fan_ready_for(3 + WINDOW, WINDOW));
        for other in [3, 4, 2 + WINDOW, 4 + WINDOW, 3 + 2 * WINDOW] {
            assert!(!slot.fan_ready_for(other, WINDOW), "{other}");
        }
        assert_eq!(fan_of(&slot), (3 + WINDOW, TaskState::Pending, SCOPE_BIT, 0, 0));
    }

    #[test]
    #[cfg(not(feature = "loom"))]
    fn slots_take_the_bytes_the_docs_account_for() {
        // `docs/performance.md` (items 36 and 68) and `ring/slots.rs` count on these.
        assert_eq!((PACKED_SLOT_BYTES, SLOT_BYTES), (160, 320));
    }

    #[test]
    fn arg_tags_keep_each_of_32_tags_apart() {
        const ALL: [ArgTag; 5] = [
            ArgTag::Input,
            ArgTag::Output,
            ArgTag::Inout,
            ArgTag::OutputExisting,
            ArgTag::NoDep,
        ];
        let mut tags = ArgTags::default();
        for i in 0..MAX_TENSOR_ARGS {
            tags.set(i, ALL[i % 5]);
        }
        for i in 0..MAX_TENSOR_ARGS {
            assert_eq!(tags.get(i), ALL[i % 5], "argument {i}");
        }
        // A reused slot overwrites in place: the neighbours keep theirs.
        tags.set(17, ArgTag::Input);
        assert_eq!(tags.get(17), ArgTag::Input);
        assert_eq!((tags.get(16), tags.get(18)), (ALL[1], ALL[3]));
    }
}
