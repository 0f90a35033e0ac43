//! A ring's task slots, built a chunk at a time when first used.
//!
//! An `hbg` run keeps every task of the graph in its window (2^20 slots for 1M tasks, about
//! 170 MB, 160 bytes a slot with its packed arguments). Building them all before the first
//! submit cost a third of such a run's CPU time, most of it page faults, on the critical path,
//! and wrote every slot twice: once empty, once
//! by its submit, long after the empty write had left the caches. Slots are built in chunks of
//! [`CHUNK_SLOTS`] (a few hundred KB, in the core's L2) by the first access, which is the
//! orchestrator's allocation; the submit that follows writes lines still in the cache. A
//! window larger than the run needs is never touched past its last used chunk. Small windows
//! (`tmr`'s default) are one or a few chunks.
//!
//! A chunk's memory is faulted in before its slots are written: by one
//! `madvise(MADV_POPULATE_WRITE)` instead of a page fault per 4 KB page. While an `hbg` graph
//! is built the scheduler's core is idle, so a prefault thread ([`SlotStore::prefault_ahead`])
//! keeps [`SPARE_CHUNKS`] chunks faulted in and built (their empty slots written) ahead of the
//! orchestrator, whose submits then only fill them: the kernel's page zeroing and the empty
//! slots' writes move off the critical path.
//!
//! Every slot is built ready for its first task (`Slot::new`: its fan as that task starts it),
//! so a submit takes no fan lock, into a fresh slot as into a reused one (`Slot::consume`).
//! A spare is built for the chunk it is expected to fill; one that lands elsewhere is made
//! ready for its place when installed (`Chunk::ready_for`). The thread parks while it has
//! them all and the orchestrator wakes it once it has taken half. Once the orchestrator has
//! asked for a block of the argument arena (`arg_arena.rs`, tasks with more tensor arguments
//! than a slot holds), the thread keeps [`SPARE_ARG_BLOCKS`] of those ready too: measured
//! with no arena memory at all, a 1M-task tiled GEMM graph ran in 0.82 of the time, most of
//! the difference the kernel zeroing the arena's 240 MB on the orchestrator's core.

use std::cell::{Cell, OnceCell};
use std::sync::OnceLock;
use std::time::Duration;

use crossbeam_queue::ArrayQueue;

use super::arg_arena::BLOCK_TENSORS;
use crate::platform::kernel::ArgTensors;
use crate::slot::{ArgsRead, ArgsWrite, InPlaceArgs, RingSlot, Slot, SlotRef};
use simpler_core::view_pack::PackedView;
use simpler_core::Tensor;

use super::arg_arena::{ArgArena, PackedArgs};
use super::frontiers::{Frontiers, STORAGES};
use crate::sync::{AtomicBool, AtomicU32, AtomicU64, Ordering, Sleep};

/// Slots built together (1024 × 160 bytes in a host-built graph: 160 KB; 320 bytes a slot on
/// `tmr`).
pub(crate) const CHUNK_SLOTS: usize = 1024;

/// Built chunks the prefault thread keeps ready (8 × 160 KB).
pub(crate) const SPARE_CHUNKS: usize = 8;

/// Empty argument-arena blocks the prefault thread keeps ready once one was asked for
/// (8 × 192 KB).
pub(crate) const SPARE_ARG_BLOCKS: usize = 8;

/// The prefault thread's longest park before it re-checks whether to stop.
const PREFAULT_TICK: Duration = Duration::from_millis(20);

/// The slots of one ring's window; see the module docs.
pub(crate) struct SlotStore {
    chunks: Box<[OnceLock<Chunk>]>,
    /// A bit per slot of a host-built graph (none on `tmr`): the slot may own heap memory (a
    /// spilled consumer list, scalars, an args-dump selection; [`SlotStore::note_heap`]). A
    /// host-built graph's slots are freed without a visit except those (`Drop for SlotStore`).
    heap: Box<[AtomicU64]>,
    /// The slots keep packed arguments (a host-built graph's) rather than tensors in place.
    packed: bool,
    /// `log2` of the chunk length.
    shift: u32,
    /// Chunk length − 1.
    within: u32,
    /// Chunks of empty slots built ahead by the prefault thread, each with the index of its
    /// first slot, for which it was built ([`Slot::new`](crate::slot::Slot::new)).
    spare: ArrayQueue<(u32, Chunk)>,
    /// One past the last chunk installed: the prefault thread builds its next spare for the
    /// chunk after this one and the spares it holds.
    installed: AtomicU32,
    /// Empty argument-arena blocks ([`BLOCK_TENSORS`] tensors), their pages faulted in.
    spare_arg_blocks: ArrayQueue<Vec<PackedView>>,
    /// Set when the orchestrator first takes an argument block: a build whose tasks all fit
    /// their slots gets no spare blocks.
    arg_blocks_wanted: AtomicBool,
    /// Where the prefault thread parks while it has every spare it keeps.
    prefault: Sleep,
    /// Where the build writes next beside the slots (the tensor map), for the prefault thread
    /// to fault in ahead (`frontiers.rs`).
    pub frontiers: Frontiers,
}

impl SlotStore {
    /// A store of `len` slots (a power of two), none built yet; `packed`: their tasks' tensor
    /// arguments are packed ([`PackedArgs`], a host-built graph) rather than in place.
    pub fn new(len: u32, packed: bool) -> SlotStore {
        debug_assert!(len.is_power_of_two());
        let chunk = (len as usize).min(CHUNK_SLOTS) as u32;
        let store = SlotStore {
            chunks: (0..len / chunk).map(|_| OnceLock::new()).collect(),
            // Only a host-built graph's slots are freed without a visit (`Drop for SlotStore`).
            heap: (0..if packed { len.div_ceil(64) } else { 0 })
                .map(|_| AtomicU64::new(0))
                .collect(),
            packed,
            shift: chunk.trailing_zeros(),
            within: chunk - 1,
            spare: ArrayQueue::new(SPARE_CHUNKS),
            installed: AtomicU32::new(0),
            spare_arg_blocks: ArrayQueue::new(SPARE_ARG_BLOCKS),
            arg_blocks_wanted: AtomicBool::new(false),
            prefault: Sleep::new(),
            frontiers: Frontiers::default(),
        };
        // Under loom every slot exists before the model's threads start: a slot's model locks
        // and atomics built lazily by one thread and published through `OnceLock` (std
        // atomics, which loom cannot see) would look unsynchronised to the other threads.
        #[cfg(feature = "loom")]
        for c in 0..store.chunks.len() as u32 {
            store.get(c << store.shift);
        }
        store
    }

    /// The chunk of the slot at `index` (< `len`), built if this is its first use, and the
    /// slot's place in it.
    #[inline]
    fn chunk(&self, index: u32) -> (&Chunk, usize) {
        let c = (index >> self.shift) as usize;
        let chunk = self.chunks[c].get_or_init(|| self.build_chunk(c));
        (chunk, (index & self.within) as usize)
    }

    /// The slot at `index` (< `len`), found once: a scheduler that runs a task reads its
    /// shared part and its payload from one lookup instead of one each.
    #[inline]
    pub fn entry(&self, index: u32) -> SlotEntry<'_> {
        match self.chunk(index) {
            (Chunk::InPlace(c), i) => SlotEntry::InPlace(&c[i]),
            (Chunk::Packed(c), i) => SlotEntry::Packed(&c[i]),
        }
    }

    /// The slot at `index` (< `len`).
    #[inline]
    pub fn get(&self, index: u32) -> &Slot {
        // Matched here rather than through `entry`: that form was no longer inlined into the
        // orchestrator's callers (`RunShared::slot` became a call, +68 instructions a task).
        match self.chunk(index) {
            (Chunk::InPlace(c), i) => &c[i].core,
            (Chunk::Packed(c), i) => &c[i].core,
        }
    }

    /// The slot at `index` (< `len`), after asking for every line of the slot at `ahead` for
    /// writing ([`SlotStore::prefetch_for_write`]) when one is given: a submit takes its slot
    /// and readies the one a few tasks on with one chunk lookup while both are in one chunk.
    #[inline]
    pub fn get_prefetching(&self, index: u32, ahead: Option<u32>) -> &Slot {
        let (chunk, i) = self.chunk(index);
        if let Some(a) = ahead {
            if a >> self.shift == index >> self.shift {
                let j = (a & self.within) as usize;
                match chunk {
                    Chunk::InPlace(c) => c[j].prefetch_for_write(),
                    Chunk::Packed(c) => c[j].prefetch_for_write(),
                }
            } else {
                self.prefetch_for_write(a);
            }
        }
        match chunk {
            Chunk::InPlace(c) => &c[i].core,
            Chunk::Packed(c) => &c[i].core,
        }
    }

    /// Asks the CPU to start loading the slot at `index`, payload and arguments included
    /// ([`RingSlot::prefetch`]).
    #[inline]
    pub fn prefetch(&self, index: u32) {
        match self.chunk(index) {
            (Chunk::InPlace(c), i) => c[i].prefetch(),
            (Chunk::Packed(c), i) => c[i].prefetch(),
        }
    }

    /// Asks for every line of the slot at `index` for writing ([`RingSlot::prefetch_for_write`]);
    /// nothing when its chunk is not built yet (its first use builds it, in the cache).
    #[inline]
    pub fn prefetch_for_write(&self, index: u32) {
        match self.chunks[(index >> self.shift) as usize].get() {
            Some(Chunk::InPlace(c)) => c[(index & self.within) as usize].prefetch_for_write(),
            Some(Chunk::Packed(c)) => c[(index & self.within) as usize].prefetch_for_write(),
            None => {}
        }
    }

    /// The slot at `index`: its shared part, and its payload and tensor arguments for writing,
    /// from one lookup (the orchestrator writes the payload, drops the writer, then makes the
    /// fanin's final count on the shared part).
    ///
    /// # Safety
    ///
    /// As [`RingSlot::write`]: the payload protocol's rule 1.
    ///
    /// [`RingSlot::write`]: crate::slot::RingSlot::write
    #[inline]
    pub unsafe fn write_entry(&self, index: u32) -> (&Slot, PayloadWrite<'_>) {
        // SAFETY: the caller's guarantee, passed on.
        unsafe {
            match self.chunk(index) {
                (Chunk::InPlace(c), i) => (&c[i].core, PayloadWrite::InPlace(c[i].write())),
                (Chunk::Packed(c), i) => (&c[i].core, PayloadWrite::Packed(c[i].write())),
            }
        }
    }

    /// Records that the slot at `index` may own heap memory now (its consumer list spilled, or
    /// its payload holds scalars or an args-dump selection), so that it is dropped when the
    /// store is. Whoever gives a slot heap memory calls this (nothing is kept on `tmr`, whose
    /// slots are all dropped).
    #[inline]
    pub fn note_heap(&self, index: u32) {
        let (word, bit) = heap_bit(index as usize);
        let Some(word) = self.heap.get(word) else {
            return; // a `tmr` store: its slots are dropped one by one
        };
        if word.load(Ordering::Relaxed) & bit == 0 {
            word.fetch_or(bit, Ordering::Relaxed);
        }
    }

    /// Whether the slot at `index` is the first of its chunk (where an `hbg` orchestrator
    /// publishes its [`frontiers`](Self::frontiers)).
    #[inline]
    pub fn starts_chunk(&self, index: u32) -> bool {
        index & self.within == 0
    }

    /// The window's length in slots.
    fn window(&self) -> u32 {
        (self.chunks.len() as u32) << self.shift
    }

    /// Chunk `c`'s empty slots, each ready for its first task: a spare when the prefault
    /// thread has one ready. Chunks are installed in order (the orchestrator takes slots in
    /// order), and the spares are built for the chunks after those installed; a spare built
    /// for another chunk (one the orchestrator built itself meanwhile) is made ready for this
    /// one, slot by slot, rather than dropped.
    fn build_chunk(&self, c: usize) -> Chunk {
        let first = (c as u32) << self.shift;
        self.installed.fetch_max(c as u32 + 1, Ordering::Relaxed);
        match self.spare.pop() {
            Some((built_for, mut chunk)) => {
                self.took_spare(self.spare.len(), SPARE_CHUNKS);
                if built_for != first {
                    chunk.ready_for(first, self.window());
                }
                chunk
            }
            None => built_chunk(self.within as usize + 1, self.packed, first, self.window()),
        }
    }

    /// An empty argument-arena block of [`BLOCK_TENSORS`] tensors, its pages faulted in: a
    /// spare when the prefault thread has one ready. The first call makes the thread keep
    /// spares from then on.
    pub fn take_arg_block(&self) -> Vec<PackedView> {
        if !self.arg_blocks_wanted.load(Ordering::Relaxed) {
            self.arg_blocks_wanted.store(true, Ordering::Release);
            self.prefault.notify_one();
        }
        match self.spare_arg_blocks.pop() {
            Some(b) => {
                self.took_spare(self.spare_arg_blocks.len(), SPARE_ARG_BLOCKS);
                b
            }
            None => faulted_in(BLOCK_TENSORS),
        }
    }

    /// Wakes the prefault thread after a spare was taken, once half of the `keep` it keeps
    /// (`left` now) are gone: it refills them all before it parks again, so a wake (a futex
    /// call and an interrupt to the other core, paid by the orchestrator) comes once per
    /// `keep / 2` spares instead of once per spare.
    #[inline]
    fn took_spare(&self, left: usize, keep: usize) {
        if left <= keep / 2 {
            self.prefault.notify_one();
        }
    }

    /// The prefault thread's body (`hbg`, while the graph is built): keeps [`SPARE_CHUNKS`]
    /// faulted-in chunk allocations ready (one per chunk of the window at most), and
    /// [`SPARE_ARG_BLOCKS`] argument blocks once one was taken, parking while it has them
    /// all; whenever awake, it also faults in the memory past the published
    /// [`frontiers`](Self::frontiers). Returns when `stop()`.
    pub fn prefault_ahead(&self, stop: impl Fn() -> bool) {
        let n = self.within as usize + 1;
        let mut chunks_left = self.chunks.len();
        let chunk_due = |left: usize| left > 0 && !self.spare.is_full();
        // The chunk the next spare is for: the first after those installed and spare.
        let next_chunk = || {
            let c = self.installed.load(Ordering::Relaxed) as usize + self.spare.len();
            (c.min(self.chunks.len() - 1) as u32) << self.shift
        };
        let block_due = || self.arg_blocks_wanted.load(Ordering::Acquire) && !self.spare_arg_blocks.is_full();
        let mut faulted = [0; STORAGES];
        while !stop() {
            self.frontiers.fault_ahead(&mut faulted);
            // Chunks first: every task needs a slot; only some need an argument block.
            if chunk_due(chunks_left) {
                let first = next_chunk();
                let chunk = built_chunk(n, self.packed, first, self.window());
                chunk.demote();
                if self.spare.push((first, chunk)).is_err() {
                    return; // only this thread pushes: unreachable
                }
                chunks_left -= 1;
            } else if block_due() {
                if self.spare_arg_blocks.push(faulted_in(BLOCK_TENSORS)).is_err() {
                    return; // as above
                }
            } else {
                self.prefault
                    .sleep_unless(PREFAULT_TICK, || stop() || chunk_due(chunks_left) || block_due());
            }
        }
    }

    /// Wakes a parked prefault thread (after its stop condition became true).
    pub fn wake_prefault(&self) {
        self.prefault.notify_one();
    }

    /// Chunks built so far.
    #[cfg(test)]
    fn built(&self) -> usize {
        self.chunks.iter().filter(|c| c.get().is_some()).count()
    }
}

/// `n` empty slots in memory faulted in by one system call. Built by the prefault thread
/// when it keeps up: writing a chunk's empty slots was the build's own work before (a
/// `memmove` per slot, 17–30 ns a task of an `hbg` build's profile, on lines the prefault
/// thread had just zeroed on its core).
///
/// Its slots are ready for their first tasks, `first` and on, in a window of `window` slots.
fn built_chunk(n: usize, packed: bool, first: u32, window: u32) -> Chunk {
    fn slots<A: Default>(n: usize, first: u32, window: u32) -> Box<[RingSlot<A>]> {
        let mut v = faulted_in(n);
        v.extend((0..n as u32).map(|i| RingSlot::new(first + i, window)));
        v.into_boxed_slice()
    }
    if packed {
        Chunk::Packed(slots(n, first, window))
    } else {
        Chunk::InPlace(slots(n, first, window))
    }
}

/// The word of [`SlotStore::heap`] that holds slot `index`'s bit, and the bit.
#[inline]
fn heap_bit(index: usize) -> (usize, u64) {
    (index / 64, 1 << (index % 64))
}

/// A host-built graph's slots are freed without a visit, but for those noted as owning heap
/// memory ([`SlotStore::note_heap`]), which are dropped: dropping every slot read two or three
/// cold lines a slot to learn, mostly, that there was nothing to free, ≈ 13 ns a slot, about
/// 10 ms after an `hbg` run of 1M tasks that its caller waited for (`docs/performance.md`,
/// item 98). `tmr`'s few chunks are dropped with the store, slot by slot. The drop takes no
/// lock and no atomic read-modify-write: the threads that noted are gone (`&mut self`).
#[cfg(not(feature = "loom"))]
impl Drop for SlotStore {
    fn drop(&mut self) {
        if !self.packed {
            return; // `tmr`: its chunks are dropped with the store, slot by slot
        }
        let shift = self.shift;
        for (c, chunk) in self.chunks.iter_mut().enumerate() {
            let Some(Chunk::Packed(slots)) = chunk.take() else {
                continue; // not built
            };
            let mut slots = slots.into_vec();
            let first = c << shift;
            let noted = |i: usize| {
                let (word, bit) = heap_bit(first + i);
                self.heap[word].load(Ordering::Relaxed) & bit != 0
            };
            if cfg!(any(test, debug_assertions)) {
                let unnoted = (0..slots.len()).find(|&i| !noted(i) && slots[i].owns_heap());
                assert_eq!(unnoted, None, "a slot owns heap memory nobody noted");
            }
            let (at, len) = (slots.as_mut_ptr(), slots.len());
            // SAFETY: the length only shrinks, so no element is exposed that is not
            // initialized. From here the vector owns no slot: each is dropped below at most
            // once, or not at all, which leaks at worst and is never undefined behaviour, and
            // leaks nothing here: a slot that was never noted owns no heap memory (`note_heap`;
            // asserted above in test and debug builds), so its drop would free nothing. The
            // allocation itself is freed when `slots` drops, after the loop.
            unsafe { slots.set_len(0) };
            // The chunk's words of bits (a chunk of 64 slots or more starts on a word).
            for w in first / 64..(first + len).div_ceil(64) {
                let mut bits = self.heap[w].load(Ordering::Relaxed);
                while bits != 0 {
                    let i = (w * 64 + bits.trailing_zeros() as usize).wrapping_sub(first);
                    bits &= bits - 1;
                    if i < len {
                        // SAFETY: `i < len`, within the allocation `slots` still holds; the
                        // slot there is initialized, and dropped here only (each bit once).
                        unsafe { std::ptr::drop_in_place(at.add(i)) };
                    }
                }
            }
        }
    }
}

/// A chunk of slots, of the kind its store keeps.
enum Chunk {
    /// `tmr`: tensor arguments in place.
    InPlace(Box<[RingSlot<InPlaceArgs>]>),
    /// A host-built graph: packed arguments.
    Packed(Box<[RingSlot<PackedArgs>]>),
}

impl Chunk {
    /// Moves its slots' lines out of this core's private caches into the shared last level,
    /// for a chunk the prefault thread built and the build's thread writes next
    /// ([`crate::prefetch::range_demote`]).
    fn demote(&self) {
        fn each<A>(slots: &[RingSlot<A>]) {
            crate::prefetch::range_demote(slots.as_ptr().cast(), std::mem::size_of_val(slots));
        }
        match self {
            Chunk::InPlace(c) => each(c),
            Chunk::Packed(c) => each(c),
        }
    }

    /// Makes its slots, which never held a task, ready for their first tasks, `first` and on
    /// ([`Slot::new`]); exclusive access, so without a lock or an atomic read-modify-write.
    fn ready_for(&mut self, first: u32, window: u32) {
        fn each<A>(slots: &mut [RingSlot<A>], first: u32, window: u32) {
            for (local, slot) in (first..).zip(slots) {
                slot.core = Slot::new(local, window);
            }
        }
        match self {
            Chunk::InPlace(c) => each(c, first, window),
            Chunk::Packed(c) => each(c, first, window),
        }
    }
}

/// One slot of a store ([`SlotStore::entry`]): its shared part, and its payload for the
/// thread its task was published to.
#[derive(Clone, Copy)]
pub(crate) enum SlotEntry<'a> {
    /// A `tmr` slot.
    InPlace(&'a RingSlot<InPlaceArgs>),
    /// A host-built graph's.
    Packed(&'a RingSlot<PackedArgs>),
}

impl<'a> SlotEntry<'a> {
    /// The slot's shared part (fan, counters, shape).
    #[inline]
    pub fn core(self) -> &'a Slot {
        match self {
            SlotEntry::InPlace(r) => &r.core,
            SlotEntry::Packed(r) => &r.core,
        }
    }

    /// The payload and tensor arguments, for reading.
    ///
    /// # Safety
    ///
    /// As [`RingSlot::read`]: the payload protocol's rule 2.
    ///
    /// [`RingSlot::read`]: crate::slot::RingSlot::read
    #[inline]
    pub unsafe fn read(self) -> PayloadRead<'a> {
        // SAFETY: the caller's guarantee, passed on.
        unsafe {
            match self {
                SlotEntry::InPlace(r) => PayloadRead::InPlace(r.read()),
                SlotEntry::Packed(r) => PayloadRead::Packed(r.read()),
            }
        }
    }
}

/// A slot's payload and tensor arguments, for reading ([`SlotEntry::read`]).
pub(crate) enum PayloadRead<'a> {
    /// A `tmr` slot's.
    InPlace(ArgsRead<'a, InPlaceArgs>),
    /// A host-built graph's.
    Packed(ArgsRead<'a, PackedArgs>),
}

impl PayloadRead<'_> {
    /// Number of tensor arguments.
    #[inline]
    pub fn arg_count(&self) -> usize {
        match self {
            PayloadRead::InPlace(r) => r.args().tensors.len(),
            PayloadRead::Packed(r) => r.args().len(),
        }
    }

    /// The producers the task holds a RETAIN pin on (none in a host-built graph, which keeps
    /// no pins).
    #[inline]
    pub fn retained(&self) -> &[SlotRef] {
        match self {
            PayloadRead::InPlace(r) => &r.args().retained,
            PayloadRead::Packed(_) => &[],
        }
    }

    /// The tensor arguments: a `tmr` slot's in place, a host-built graph's unpacked from
    /// `arena` into `scratch`.
    #[inline]
    pub fn tensors<'s>(&'s self, arena: &ArgArena, scratch: &'s mut Vec<Tensor>) -> &'s [Tensor] {
        match self {
            PayloadRead::InPlace(r) => &r.args().tensors,
            PayloadRead::Packed(r) => {
                arena.unpack(r.args(), scratch);
                scratch
            }
        }
    }

    /// The tensor arguments as a kernel sees them: a `tmr` slot's in place, a host-built
    /// graph's packed, unpacked from `arena` into `unpacked` (from the buffer `spare`) when a
    /// kernel first reads one.
    #[inline]
    pub fn arg_tensors<'s>(
        &'s self,
        arena: &'s ArgArena,
        unpacked: &'s OnceCell<Vec<Tensor>>,
        spare: &'s Cell<Vec<Tensor>>,
    ) -> ArgTensors<'s> {
        match self {
            PayloadRead::InPlace(r) => ArgTensors::InPlace(&r.args().tensors),
            PayloadRead::Packed(r) => ArgTensors::Packed {
                arena,
                list: r.args(),
                unpacked,
                spare,
            },
        }
    }
}

impl std::ops::Deref for PayloadRead<'_> {
    type Target = crate::slot::Payload;
    #[inline]
    fn deref(&self) -> &crate::slot::Payload {
        match self {
            PayloadRead::InPlace(r) => r,
            PayloadRead::Packed(r) => r,
        }
    }
}

/// A slot's payload and tensor arguments, for writing ([`SlotStore::write`]).
pub(crate) enum PayloadWrite<'a> {
    /// A `tmr` slot's.
    InPlace(ArgsWrite<'a, InPlaceArgs>),
    /// A host-built graph's.
    Packed(ArgsWrite<'a, PackedArgs>),
}

impl PayloadWrite<'_> {
    /// The payload and the arguments, both writable.
    #[inline]
    pub fn parts(&mut self) -> (&mut crate::slot::Payload, ArgsMut<'_>) {
        match self {
            PayloadWrite::InPlace(w) => {
                let (p, a) = w.parts();
                (p, ArgsMut::InPlace(a))
            }
            PayloadWrite::Packed(w) => {
                let (p, a) = w.parts();
                (p, ArgsMut::Packed(a))
            }
        }
    }
}

/// A slot's tensor arguments, writable ([`PayloadWrite::parts`]).
pub(crate) enum ArgsMut<'a> {
    /// A `tmr` slot's, in place.
    InPlace(&'a mut InPlaceArgs),
    /// A host-built graph's, packed.
    Packed(&'a mut PackedArgs),
}

/// An empty allocation for `n` elements, its memory faulted in by one system call.
pub(crate) fn faulted_in<T>(n: usize) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    populate_for_write(v.spare_capacity_mut());
    v
}

/// Faults in the whole pages of `buf` writable with one `madvise(MADV_POPULATE_WRITE)` (Linux
/// 5.14+) instead of one page fault per 4 KB page as the slots are written. Best effort: an
/// older kernel's error leaves the pages to fault in as before.
fn populate_for_write<T>(buf: &mut [std::mem::MaybeUninit<T>]) {
    const PAGE: usize = 4096;
    let start = buf.as_mut_ptr() as usize;
    let end = start + std::mem::size_of_val(buf);
    let (first, last) = (start.next_multiple_of(PAGE), end / PAGE * PAGE);
    if last > first {
        super::frontiers::populate_range(first..last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slot::TaskState;
    use std::sync::atomic::Ordering;

    /// A host-built graph whose slots own heap memory, each way a slot can (a consumer list
    /// spilled by five readers in the first chunk, scalars in the second, an args-dump
    /// selection in another run), notes each, so that the store's drop at the end of the run
    /// drops those slots: in test builds the drop asserts that no slot it frees without a
    /// visit owns any (the test fails when any one of the three is not noted, checked once
    /// each). The numbers the kernels computed come back too.
    #[test]
    fn every_slot_that_owns_heap_memory_is_noted_in_a_host_built_graph() {
        use crate::config::DumpArgsLevel;
        use crate::{CallConfig, CoreType, RuntimeKind, Worker};
        use simpler_core::{DType, TaskArgs};
        const READERS: u32 = 5;
        let mut w = Worker::new();
        w.register_kernel(0, "fill", CoreType::Aiv, |ctx| {
            ctx.view::<f32>(0)?.set(0, 2.0);
            Ok(())
        })
        .unwrap();
        // out = x + scalar 0 (0 without scalars)
        w.register_kernel(1, "add_scalar", CoreType::Aiv, |ctx| {
            let (x, out) = (ctx.view::<f32>(0)?, ctx.view::<f32>(1)?);
            let add = if ctx.scalar_count() > 0 {
                ctx.scalar_f32(0)?
            } else {
                0.0
            };
            out.set(0, x.get(0) + add);
            Ok(())
        })
        .unwrap();
        w.register_kernel(2, "noop", CoreType::Aiv, |_| Ok(())).unwrap();
        let x = w.alloc_tensor(&[1], DType::Float32).unwrap();
        let y = w.alloc_tensor(&[READERS + 1], DType::Float32).unwrap();
        w.fill_with(&y, |_| 0.0).unwrap();
        let hbg = CallConfig {
            runtime: RuntimeKind::Hbg,
            ..Default::default()
        };
        w.run(&hbg, move |o| {
            let mut a = TaskArgs::new();
            a.output_existing(x);
            o.submit_aiv(0, &a)?;
            for j in 0..READERS {
                let mut a = TaskArgs::new();
                a.input(x).output_existing(y.view(&[1], &[j])?);
                o.submit_aiv(1, &a)?;
            }
            for _ in 1 + READERS..CHUNK_SLOTS as u32 {
                o.submit_aiv(2, &TaskArgs::new())?;
            }
            // The first task of the second chunk: scalars.
            let mut a = TaskArgs::new();
            a.input(x)
                .output_existing(y.view(&[1], &[READERS])?)
                .scalar_f32(0.5);
            o.submit_aiv(1, &a)?;
            Ok(())
        })
        .unwrap();
        assert_eq!(w.read::<f32>(&y).unwrap(), [2.0, 2.0, 2.0, 2.0, 2.0, 2.5]);
        // An args-dump selection, in a run with nothing else owning heap memory.
        let dir = tempfile::tempdir().unwrap();
        let dump = CallConfig {
            dump_args: DumpArgsLevel::Full,
            output_prefix: Some(dir.path().to_path_buf()),
            ..hbg
        };
        w.fill_with(&x, |_| 0.0).unwrap();
        w.run(&dump, move |o| {
            let mut a = TaskArgs::new();
            a.output_existing(x);
            o.submit_aiv(0, &a)?;
            Ok(())
        })
        .unwrap();
        assert_eq!(w.read::<f32>(&x).unwrap(), [2.0]);
    }

    #[test]
    fn a_chunk_is_built_by_its_first_use_and_only_then() {
        let store = SlotStore::new(4 * CHUNK_SLOTS as u32, true);
        assert_eq!(store.built(), 0);
        assert_eq!(store.get(0).fan.lock().state, TaskState::Pending);
        assert_eq!(store.built(), 1);
        store.get(CHUNK_SLOTS as u32 - 1);
        assert_eq!(store.built(), 1, "the same chunk");
        store.get(3 * CHUNK_SLOTS as u32 + 5);
        assert_eq!(store.built(), 2);
    }

    #[test]
    fn a_slot_is_the_same_object_on_every_access() {
        let store = SlotStore::new(2 * CHUNK_SLOTS as u32, true);
        let i = CHUNK_SLOTS as u32 + 7;
        store.get(i).fan.lock().local = 42;
        assert_eq!(store.get(i).fan.lock().local, 42);
        assert_eq!(store.get(i - 1).fan.lock().local, i - 1);
        assert!(std::ptr::eq(store.get(i), store.get(i)));
    }

    #[test]
    fn the_prefault_thread_stays_spare_chunks_ahead_and_its_allocations_are_used() {
        let store = SlotStore::new(64 * CHUNK_SLOTS as u32, true);
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let t = s.spawn(|| store.prefault_ahead(|| stop.load(Ordering::SeqCst)));
            let full = || {
                let t0 = std::time::Instant::now();
                while !store.spare.is_full() && t0.elapsed() < std::time::Duration::from_secs(10) {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                store.spare.len()
            };
            assert_eq!(full(), SPARE_CHUNKS);
            // A chunk built now takes a spare allocation, and the thread makes another
            // (at its tick: one taken of eight does not wake it).
            store.get(0);
            assert_eq!(store.built(), 1);
            assert_eq!(full(), SPARE_CHUNKS);
            stop.store(true, Ordering::SeqCst);
            store.wake_prefault();
            t.join().unwrap();
        });
        assert_eq!(
            store.get(5).fan.lock().local,
            5,
            "a slot of a spare chunk is ready for its first task"
        );
    }

    /// Every slot is built ready for its first task (its index: the window's first pass),
    /// whether its chunk was a spare built for it, a spare built for another chunk, or built
    /// on first use; and in any order of first use.
    #[test]
    fn every_slot_is_built_ready_for_its_first_task() {
        const CHUNKS: u32 = 32; // a window is a power of two (`SlotStore::new`)
        let window = CHUNKS * CHUNK_SLOTS as u32;
        let store = SlotStore::new(window, true);
        let stop = std::sync::atomic::AtomicBool::new(false);
        let ready = |i: u32| {
            let slot = store.get(i);
            let fan = slot.fan.lock();
            (
                fan.local,
                fan.state,
                fan.fanout_count,
                slot.fan_ready_for(i, window),
            )
        };
        let want = |i: u32| (i, TaskState::Pending, crate::slot::SCOPE_BIT, true);
        /// Stops the prefault thread however the scope ends (a failed assertion included,
        /// which would otherwise wait for the thread forever).
        struct Stop<'a>(&'a std::sync::atomic::AtomicBool, &'a SlotStore);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
                self.1.wake_prefault();
            }
        }
        std::thread::scope(|s| {
            s.spawn(|| store.prefault_ahead(|| stop.load(Ordering::SeqCst)));
            let _stop = Stop(&stop, &store);
            let t0 = std::time::Instant::now();
            while !store.spare.is_full() && t0.elapsed() < std::time::Duration::from_secs(10) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            // Chunk 3 first: it takes the spare built for chunk 0 and makes it its own.
            let c = CHUNK_SLOTS as u32;
            for i in [3 * c + 5, 3 * c, 4 * c - 1, 0, c + 1, 2 * c + 2] {
                assert_eq!(ready(i), want(i), "slot {i}");
            }
            // Then in order, as an orchestrator takes them, beside the prefault thread.
            for i in (0..window).step_by(97) {
                assert_eq!(ready(i), want(i), "slot {i}");
            }
        });
        for i in 0..window {
            assert_eq!(ready(i), want(i), "slot {i}");
        }
    }

    /// Argument blocks are made only once the orchestrator asked for one, then kept ready.
    #[test]
    fn the_prefault_thread_keeps_argument_blocks_once_one_was_taken() {
        let store = SlotStore::new(2 * CHUNK_SLOTS as u32, true);
        let stop = std::sync::atomic::AtomicBool::new(false);
        let wait_for = |what: &dyn Fn() -> bool| {
            let t0 = std::time::Instant::now();
            while !what() && t0.elapsed() < std::time::Duration::from_secs(10) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        };
        std::thread::scope(|s| {
            let t = s.spawn(|| store.prefault_ahead(|| stop.load(Ordering::SeqCst)));
            // Both chunks of the window made, and no argument block while none was asked for.
            wait_for(&|| store.spare.len() == 2);
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert_eq!(store.spare.len(), 2, "one allocation per chunk of the window");
            assert_eq!(store.spare_arg_blocks.len(), 0);
            let first = store.take_arg_block();
            assert!(first.is_empty() && first.capacity() >= BLOCK_TENSORS);
            wait_for(&|| store.spare_arg_blocks.is_full());
            assert_eq!(store.spare_arg_blocks.len(), SPARE_ARG_BLOCKS);
            // A block taken now is a spare one, and the thread makes another (at its tick).
            store.take_arg_block();
            wait_for(&|| store.spare_arg_blocks.is_full());
            assert_eq!(store.spare_arg_blocks.len(), SPARE_ARG_BLOCKS);
            stop.store(true, Ordering::SeqCst);
            store.wake_prefault();
            t.join().unwrap();
        });
    }

    #[test]
    fn a_window_smaller_than_a_chunk_is_one_chunk_of_its_size() {
        let store = SlotStore::new(8, true);
        store.get(7).fan.lock().local = 7;
        assert_eq!(store.built(), 1);
        assert_eq!(store.get(7).fan.lock().local, 7);
    }
}
