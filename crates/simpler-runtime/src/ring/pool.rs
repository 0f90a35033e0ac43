//! A counted pool (dependency-list entries, fanin spill entries): a monotonic `top` owned by
//! the orchestrator and a monotonic `tail` published by reclaim.

/// Counters of one pool; `top − tail` entries are in use.
#[derive(Clone, Copy, Debug)]
pub struct PoolCounter {
    capacity: u64,
    top: u64,
}

impl PoolCounter {
    /// An empty pool of `capacity` entries; counters start at `origin` (1 for the dep pool,
    /// whose entry 0 is the null link, as in the original).
    pub fn new(capacity: u64, origin: u64) -> Self {
        PoolCounter {
            capacity,
            top: origin,
        }
    }
    /// The pool's capacity.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// The allocation frontier.
    pub fn top(&self) -> u64 {
        self.top
    }
    /// True when `n` more entries fit, given the published tail.
    #[inline]
    pub fn has_room(&self, n: u64, tail: u64) -> bool {
        self.top - tail.min(self.top) + n <= self.capacity
    }
    /// Takes `n` entries (call after [`PoolCounter::has_room`]).
    #[inline]
    pub fn take(&mut self, n: u64) {
        self.top += n;
    }
}
