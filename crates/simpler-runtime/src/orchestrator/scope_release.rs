//! Scope ends whose releases the schedulers apply (`tmr`).
//!
//! A scope end releases the scope bit of each of its tasks: a fan lock per task, on a line
//! the scheduler that completed the task holds. Done by the orchestrator at the scope end, it
//! was about a fifth of a `tmr` orchestrator's time per task (`add_and_check`, 17 ns a task of
//! independent's 110), while the schedulers of an orchestration-bound run sat yielding. So
//! the orchestrator gathers the tasks of the scopes it closes and hands them to a queue
//! ([`ScopeReleases`]) as one batch once they number the batch size ([`batch_for`]); a
//! scheduler with nothing to run applies the oldest batch (`RunShared::run_scope_release`),
//! with the same locked release the orchestrator used (`RunShared::release_scope_batch`).
//! Its swimlane phases (level ≥ 3) count that time as `advance`, reclaim work.
//!
//! A release applied later only holds the task's slot, heap and dep-pool entries longer
//! (nothing becomes ready or runs sooner or later for it), so the bounds keep that short:
//! - a batch is handed over once it holds an eighth of the smallest task window, at most
//!   [`SCOPE_RELEASE_BATCH`] tasks (a single larger scope makes a larger one), and a window
//!   under 8 × [`MIN_BATCH`] slots is not batched at all (each scope end releases at once);
//! - with more than [`QUEUED_BATCHES`] batches queued, the orchestrator applies the oldest
//!   itself at the hand-over (busy schedulers never let it grow);
//! - before any wait for room and at the root scope's end (the end of the orchestration),
//!   the orchestrator applies every queued and gathered release itself
//!   (`Orchestrator::apply_scope_releases`). A wait's proof that an open scope pins the
//!   oldest task (`head_pinned_by`) is thus never made while a closed scope still holds it.

use std::collections::VecDeque;

use crate::sync::{AtomicU32, Mutex, Ordering};

use crate::slot::SlotRef;

/// Tasks a batch gathers before its hand-over (fewer on small windows, see the module docs).
pub const SCOPE_RELEASE_BATCH: usize = 512;
/// The smallest batch worth a hand-over; smaller windows release at each scope end.
pub const MIN_BATCH: usize = 16;
/// Batches queued past which the orchestrator applies the oldest itself.
pub const QUEUED_BATCHES: u32 = 2;

/// The batch size for task windows `windows` (0: no batching).
pub fn batch_for(windows: &[u32]) -> usize {
    let smallest = windows.iter().copied().min().unwrap_or(0) as usize;
    let batch = (smallest / 8).min(SCOPE_RELEASE_BATCH);
    if batch < MIN_BATCH {
        0
    } else {
        batch
    }
}

/// The queue of handed-over batches, oldest first, with the emptied batches kept for reuse
/// (the orchestrator's next batch takes one instead of allocating).
pub(crate) struct ScopeReleases {
    queue: Mutex<Batches>,
    /// Batches in the queue, read without the lock by the schedulers' idle check.
    queued: AtomicU32,
}

#[derive(Default)]
struct Batches {
    full: VecDeque<Vec<SlotRef>>,
    spare: Vec<Vec<SlotRef>>,
}

impl ScopeReleases {
    /// An empty queue.
    pub fn new() -> Self {
        ScopeReleases {
            queue: Mutex::new(Batches::default()),
            queued: AtomicU32::new(0),
        }
    }

    /// Queues `batch`, leaving an empty one (a spare, or new) in its place; how many batches
    /// are queued now.
    pub fn hand_over(&self, batch: &mut Vec<SlotRef>) -> u32 {
        let mut q = self.queue.lock();
        let spare = q
            .spare
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(batch.capacity()));
        q.full.push_back(std::mem::replace(batch, spare));
        let n = q.full.len() as u32;
        self.queued.store(n, Ordering::Release);
        n
    }

    /// Whether a batch is queued (one being applied is not).
    #[inline]
    pub fn has_queued(&self) -> bool {
        self.queued.load(Ordering::Acquire) > 0
    }

    /// The oldest queued batch, if any (hand it back with [`ScopeReleases::give_back`]).
    #[inline]
    pub fn take(&self) -> Option<Vec<SlotRef>> {
        if self.queued.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut q = self.queue.lock();
        let batch = q.full.pop_front();
        self.queued.store(q.full.len() as u32, Ordering::Release);
        batch
    }

    /// Keeps an applied batch's storage for a later hand-over.
    pub fn give_back(&self, mut batch: Vec<SlotRef>) {
        batch.clear();
        self.queue.lock().spare.push(batch);
    }
}

#[cfg(all(test, not(feature = "loom")))]
mod tests {
    use super::*;

    fn slots(range: std::ops::Range<u32>) -> Vec<SlotRef> {
        range.map(|index| SlotRef { ring: 1, index }).collect()
    }

    #[test]
    fn batches_come_out_oldest_first_and_their_storage_is_reused() {
        let q = ScopeReleases::new();
        let mut batch = slots(0..3);
        assert_eq!(q.hand_over(&mut batch), 1);
        assert!(batch.is_empty(), "the orchestrator keeps an empty batch");
        batch.extend(slots(3..5));
        assert_eq!(q.hand_over(&mut batch), 2);
        assert!(q.has_queued());
        let first = q.take().expect("two queued");
        assert_eq!(first, slots(0..3));
        let at = first.as_ptr();
        q.give_back(first);
        batch.extend(slots(5..6));
        q.hand_over(&mut batch);
        assert_eq!(batch.as_ptr(), at, "the applied batch's storage came back");
        assert_eq!(q.take(), Some(slots(3..5)));
        assert_eq!(q.take(), Some(slots(5..6)));
        assert_eq!(q.take(), None);
        assert!(!q.has_queued());
    }

    #[test]
    fn batches_are_an_eighth_of_the_smallest_window_and_none_on_small_ones() {
        assert_eq!(batch_for(&[16384; 4]), SCOPE_RELEASE_BATCH);
        assert_eq!(batch_for(&[16384, 1024, 16384, 16384]), 128);
        assert_eq!(batch_for(&[128; 4]), MIN_BATCH);
        assert_eq!(batch_for(&[64; 4]), 0);
    }
}
