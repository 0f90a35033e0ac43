//! The orchestrator's side of one ring: one allocator per resource (task window, heap, dep
//! pool, fanin spill pool) and the reclaim counters it last read.
//!
//! The allocators are single-writer (the orchestrator thread); reclaim publishes tails in
//! [`RingShared`]. The cached copies are re-read only when a resource looks full, so the submit
//! path does not pull contended cache lines on every call.

use super::shared::RingShared;
use super::{HeapAllocator, HeapRefusal, PoolCounter, TaskWindow};
use crate::sync::Ordering;

/// Why a slot and its heap could not be taken now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotRefusal {
    /// `window − 1` tasks are in flight.
    Window,
    /// The heap cannot fit the request now (or ever, for [`HeapRefusal::TooLarge`]).
    Heap(HeapRefusal),
}

/// See the module docs.
pub(crate) struct RingAllocator {
    /// Task slots.
    pub window: TaskWindow,
    /// Output bytes.
    pub heap: HeapAllocator,
    /// Fanout-list entries (one per pending producer of a wired task).
    pub dep_pool: PoolCounter,
    /// Fanin entries beyond the inline capacity.
    pub spill_pool: PoolCounter,
    /// `last_alive` as last read.
    pub seen_last_alive: u32,
    /// The heap tail as last read.
    pub seen_heap_tail: u64,
}

impl RingAllocator {
    /// Empty allocators of the given sizes.
    pub fn new(window: u32, heap: u64, dep_pool: u64, dep_origin: u64) -> RingAllocator {
        RingAllocator {
            window: TaskWindow::new(window),
            heap: HeapAllocator::new(heap),
            dep_pool: PoolCounter::new(dep_pool, dep_origin),
            spill_pool: PoolCounter::new(dep_pool, 0),
            seen_last_alive: 0,
            seen_heap_tail: 0,
        }
    }

    /// Re-reads the reclaim counters the slot and heap checks use.
    #[inline]
    pub fn refresh(&mut self, shared: &RingShared) {
        self.seen_last_alive = shared.last_alive.load(Ordering::Acquire);
        self.seen_heap_tail = shared.heap_tail.load(Ordering::Acquire);
    }

    /// Takes the next slot and `bytes` of heap against the cached counters: the new task's
    /// local id and the virtual start of its outputs.
    #[inline]
    pub fn try_take(&mut self, bytes: u64) -> Result<(u32, u64), SlotRefusal> {
        if !self.window.has_room(self.seen_last_alive) {
            return Err(SlotRefusal::Window);
        }
        let start = self
            .heap
            .try_alloc(bytes, self.seen_heap_tail)
            .map_err(SlotRefusal::Heap)?;
        Ok((self.window.take(), start))
    }

    /// Whether the task `local` (at or past the next one) could take its slot now, by the
    /// cached `last_alive`: its slot's last task has retired.
    #[inline]
    pub fn slot_is_free(&self, local: u32) -> bool {
        super::window::window_has_room(local, self.seen_last_alive, self.window.size())
    }

    /// Heap bytes held by live tasks, by the cached tail.
    pub fn heap_in_use(&self) -> u64 {
        self.heap.top() - self.heap.tail(self.seen_heap_tail)
    }

    /// Tasks in flight, by the cached `last_alive`.
    pub fn in_flight(&self) -> u32 {
        self.window.next_local().wrapping_sub(self.seen_last_alive)
    }
}
