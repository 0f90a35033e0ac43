//! A ring's shared side: its slots, the marks each task's submit leaves for its retirement,
//! and the reclaim counters every thread reads, advanced in order as the head task retires.
//!
//! `advance` runs under a per-ring try-lock; a thread that loses the lock leaves a pending flag
//! that the holder re-checks before it leaves, so no advance is lost (the loom model
//! `ring_advance_is_never_lost` in `src/sync/loom_models.rs` checks it).

use crossbeam_utils::CachePadded;

use super::slots::SlotStore;
use crate::slot::{Slot, SlotRef, TaskState};
use crate::sync::{AtomicBool, AtomicU32, AtomicU64, Mutex, Ordering};

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
    advance_lock: Mutex<()>,
    advance_pending: AtomicBool,
}

impl RingShared {
    /// A ring of `window` empty slots whose dep pool counts from `dep_origin`; with `reclaims`
    /// false (a host-built graph, whose tasks never retire) it keeps no [`ReclaimMarks`].
    pub fn new(window: u32, dep_origin: u64, reclaims: bool) -> RingShared {
        let marks = if reclaims { window as usize } else { 0 };
        RingShared {
            mask: window - 1,
            slots: SlotStore::new(window),
            marks: (0..marks).map(|_| ReclaimMarks::default()).collect(),
            last_alive: CachePadded::new(AtomicU32::new(0)),
            heap_tail: AtomicU64::new(0),
            dep_tail: AtomicU64::new(dep_origin),
            spill_tail: AtomicU64::new(0),
            advance_lock: Mutex::new(()),
            advance_pending: AtomicBool::new(false),
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
    /// progress); a call that finds the lock taken leaves the work to the holder.
    pub fn advance(&self) -> bool {
        let mut moved = false;
        self.advance_pending.store(true, Ordering::SeqCst);
        while self.advance_pending.load(Ordering::SeqCst) {
            let Some(_guard) = self.advance_lock.try_lock() else {
                return moved;
            };
            self.advance_pending.store(false, Ordering::SeqCst);
            let start = self.last_alive.load(Ordering::Relaxed);
            let mut la = start;
            loop {
                let fan = self.slot_of(la).fan.lock();
                if fan.state != TaskState::Consumed || fan.local != la {
                    break;
                }
                drop(fan);
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
        }
        moved
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
