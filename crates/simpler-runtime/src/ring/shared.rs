//! A ring's shared side: its slots, the marks each task's submit leaves for its retirement,
//! and the reclaim counters every thread reads, advanced in order as the head task retires.
//!
//! One thread at a time walks a ring's head (`advance`). Every caller first announces its
//! work by setting a pending bit; the one that finds nobody walking becomes the walker, and the
//! walker walks again while the bit was set behind it, so no advance is lost. The running and
//! pending bits share one atomic, so each announcement and the walk that takes it over are
//! read-modify-writes of that one variable, which orders the announcer's consumed slots before
//! the walk (the loom model `ring_advance_is_never_lost` in `src/sync/loom_models.rs` checks
//! it). A try-lock with a separate pending flag did the same with locks; once a slot's consumed
//! state was read without its fan lock, the flag alone no longer ordered it and the model lost
//! an advance.

use crossbeam_utils::CachePadded;

use super::slots::SlotStore;
use crate::slot::{Slot, SlotRef};
use crate::sync::{AtomicU32, AtomicU64, AtomicU8, Ordering};

/// One ring's shared side.
pub(crate) struct RingShared {
    /// `window − 1`: a local id's slot index is `local & mask`.
    pub mask: u32,
    /// The task window's slots.
    pub slots: SlotStore,
    /// One per slot when the ring reclaims (`tmr`), none otherwise (see [`ReclaimMarks`]); built
    /// with the ring (24 bytes a slot), where the slots are built a chunk at a time.
    marks: Box<[ReclaimMarks]>,
    /// Oldest unretired local id.
    pub last_alive: CachePadded<AtomicU32>,
    /// Virtual heap tail (packed end of the newest retired task).
    pub heap_tail: AtomicU64,
    /// Dep-pool tail.
    pub dep_tail: AtomicU64,
    /// Fanin-spill tail.
    pub spill_tail: AtomicU64,
    /// [`WALKING`] while a thread walks the head, | [`PENDING`] when another asked for a walk.
    advance_state: AtomicU8,
}

/// `advance_state`: a thread is walking the ring's head.
const WALKING: u8 = 1;
/// `advance_state`: a walk was asked for that no walk has taken over yet.
const PENDING: u8 = 2;

impl RingShared {
    /// A ring of `window` empty slots whose dep pool counts from `dep_origin`; with `reclaims`
    /// false (a host-built graph, whose tasks never retire) it keeps no [`ReclaimMarks`] and its
    /// slots keep packed tensor arguments (`crates/simpler-runtime/src/ring/arg_arena.rs`).
    pub fn new(window: u32, dep_origin: u64, reclaims: bool) -> RingShared {
        let marks = if reclaims { window as usize } else { 0 };
        RingShared {
            mask: window - 1,
            slots: SlotStore::new(window, !reclaims),
            marks: (0..marks).map(|_| ReclaimMarks::default()).collect(),
            last_alive: CachePadded::new(AtomicU32::new(0)),
            heap_tail: AtomicU64::new(0),
            dep_tail: AtomicU64::new(dep_origin),
            spill_tail: AtomicU64::new(0),
            advance_state: AtomicU8::new(0),
        }
    }

    /// The slot of local id `local`.
    #[inline]
    pub fn slot_of(&self, local: u32) -> &Slot {
        self.slots.get(local & self.mask)
    }

    /// The retirement marks of the task in slot `s`, when the ring reclaims.
    #[inline]
    pub fn marks(&self, s: SlotRef) -> Option<&ReclaimMarks> {
        self.marks.get(s.index as usize)
    }

    /// Advances `last_alive` over consecutive consumed slots and publishes the new heap,
    /// dep-pool and spill tails. True when this call moved the ring (the caller then signals
    /// progress); a call that finds another thread walking leaves its work to that walker.
    pub fn advance(&self) -> bool {
        let st = &self.advance_state;
        // Announce; leave it to the walker, if there is one (it sees the bit before it stops).
        if st.fetch_or(PENDING, Ordering::AcqRel) & WALKING != 0 {
            return false;
        }
        // Become the walker, taking over every announcement so far; failing, another thread
        // took them over (and walks after reading them) or walked already since.
        if st
            .compare_exchange(PENDING, WALKING, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        let mut moved = false;
        loop {
            let start = self.last_alive.load(Ordering::Relaxed);
            let mut la = start;
            // A slot's `consumed` is `la` only once task `la` is consumed: the slot is not
            // reused for `la + window` before `last_alive` has passed `la`. Acquire pairs with
            // `Slot::consume`'s release.
            while self.slot_of(la).consumed.load(Ordering::Acquire) == la {
                la = la.wrapping_add(1);
            }
            if la != start {
                // A ring without marks never reclaims: its callers advance only `tmr` rings.
                if let Some(last) = self.marks.get((la.wrapping_sub(1) & self.mask) as usize) {
                    self.heap_tail
                        .fetch_max(last.heap_end.load(Ordering::Relaxed), Ordering::Release);
                    self.dep_tail
                        .fetch_max(last.dep_mark.load(Ordering::Relaxed), Ordering::Release);
                    self.spill_tail
                        .fetch_max(last.spill_mark.load(Ordering::Relaxed), Ordering::Release);
                }
                self.last_alive.store(la, Ordering::Release);
                moved = true;
            }
            // Stop unless a walk was asked for meanwhile; then take that over and walk again.
            if st
                .compare_exchange(WALKING, 0, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return moved;
            }
            st.fetch_and(!PENDING, Ordering::AcqRel);
        }
    }
}

/// Host bytes a reclaiming ring's window takes per slot beside the slot itself.
pub(crate) const MARK_BYTES: usize = std::mem::size_of::<ReclaimMarks>();

/// What a task's submit leaves for its retirement: where the ring's heap, dep-pool and
/// fanin-spill tails move once it is the newest task retired. Kept beside the slots rather
/// than in them, and only by rings that reclaim: a host-built graph keeps a slot per task and
/// never retires one, so these 24 bytes were 7 % of its memory per task.
#[derive(Default)]
pub(crate) struct ReclaimMarks {
    /// Virtual heap end of the task's packed outputs (the heap tail once it retires).
    pub heap_end: AtomicU64,
    /// Dep-pool top after the task was wired (the dep-pool tail once it retires).
    pub dep_mark: AtomicU64,
    /// Fanin-spill top after the task was wired.
    pub spill_mark: AtomicU64,
}
