//! The virtual cores a scheduler thread serves, and which of them a timed kernel still holds.
//!
//! Each scheduler thread owns a round-robin share of the clusters (cluster `c` belongs to
//! thread `c % threads`). A kernel that returns at once leaves its core free; a kernel that
//! called `KernelCtx::occupy` holds its core until a deadline, and the thread places new work
//! only on free cores. While nothing is held (the common case) placement is the plain
//! round-robin without any bookkeeping.

use std::time::Instant;

use crate::platform::{CoreId, CoreType, Platform, TaskShape};

/// The clusters of one scheduler thread and the deadlines of its held cores.
pub(crate) struct Cores {
    pub platform: Platform,
    owned: Vec<u32>,
    next: usize,
    /// Held cores' deadlines, by global core index (only owned cores are ever set).
    held_until: Vec<Option<Instant>>,
    /// How many cores are held.
    held: usize,
}

/// Where one block runs: a core per active subslot `[aic, aiv0, aiv1]` (the subslot gives
/// the core's type). Three plain indices: an `ArrayVec<(usize, CoreId), 3>` was built with
/// stores of three widths and read back with wider loads (a store-forwarding stall in
/// `execute`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Placement {
    /// Global core index by subslot; [`Placement::UNUSED`] for an inactive one.
    index: [u32; 3],
}

impl Placement {
    /// The index of a subslot without a core.
    const UNUSED: u32 = u32::MAX;

    fn new() -> Self {
        Placement {
            index: [Self::UNUSED; 3],
        }
    }

    /// How many subslots are placed.
    pub fn len(self) -> usize {
        self.index.iter().filter(|&&i| i != Self::UNUSED).count()
    }

    /// The placed subslots with their cores, in subslot order.
    pub fn cores(self) -> impl Iterator<Item = (usize, CoreId)> {
        (0..3).filter_map(move |sub| {
            let index = self.index[sub];
            (index != Self::UNUSED).then(|| {
                let core_type = if sub == 0 { CoreType::Aic } else { CoreType::Aiv };
                (sub, CoreId { index, core_type })
            })
        })
    }
}

impl Cores {
    pub fn new(platform: Platform, thread_index: u32, thread_count: u32) -> Self {
        let mut owned: Vec<u32> = (0..platform.clusters)
            .filter(|c| c % thread_count == thread_index)
            .collect();
        if owned.is_empty() {
            owned.push(thread_index % platform.clusters);
        }
        Cores {
            platform,
            owned,
            next: 0,
            held_until: vec![None; (platform.clusters * 3) as usize],
            held: 0,
        }
    }

    /// True when some core is held by a timed kernel.
    #[inline]
    pub fn any_held(&self) -> bool {
        self.held > 0
    }

    /// Whether `core` is free (no lookup while nothing is held: the common case).
    #[inline]
    fn is_free(&self, core: CoreId) -> bool {
        self.held == 0 || self.held_until[core.index as usize].is_none()
    }

    /// The cores of cluster `c` for the active subslots of `kernels`; `None` when one of them
    /// is held. A non-MIX AIV block prefers AIV `(block + c) % 2` and takes the other one when
    /// that is held.
    #[inline(always)]
    fn try_cluster(&self, c: u32, shape: TaskShape, kernels: &[i32; 3], block: u32) -> Option<Placement> {
        let mut out = Placement::new();
        for (sub, &kid) in kernels.iter().enumerate() {
            if kid < 0 {
                continue;
            }
            let core = match sub {
                0 => self.platform.aic(c),
                k if shape == TaskShape::Mix => self.platform.aiv(c, k as u32 - 1),
                _ => {
                    let preferred = self.platform.aiv(c, (block + c) % 2);
                    if self.is_free(preferred) {
                        preferred
                    } else {
                        self.platform.aiv(c, (block + c + 1) % 2)
                    }
                }
            };
            if !self.is_free(core) {
                return None;
            }
            out.index[sub] = core.index;
        }
        Some(out)
    }

    /// Places one block: the next owned cluster (round robin) whose needed cores are free.
    /// `None` only while cores are held and no owned cluster has room. Inlined, with
    /// [`Cores::try_cluster`]: the placement returned through memory was copied back with
    /// loads wider than the stores that built it (a store-forwarding stall in `execute`).
    /// The round robin wraps by comparison: two `%` by the owned count were two integer
    /// divisions per block on the scheduler's path.
    #[inline(always)]
    pub fn place(&mut self, shape: TaskShape, kernels: &[i32; 3], block: u32) -> Option<Placement> {
        let n = self.owned.len();
        let mut at = self.next;
        for _ in 0..n {
            let c = self.owned[at];
            at += 1;
            if at == n {
                at = 0;
            }
            if let Some(p) = self.try_cluster(c, shape, kernels, block) {
                self.next = at;
                return Some(p);
            }
            if !self.any_held() {
                break;
            }
        }
        None
    }

    /// Whether a task of `shape` could be placed now (MIX: a cluster with all three cores
    /// free, since which subslots it uses is only known once popped).
    pub fn can_place(&self, shape: TaskShape) -> bool {
        if !self.any_held() || shape == TaskShape::Dummy {
            return true;
        }
        let all = [0, 0, 0];
        let kernels = match shape {
            TaskShape::Aic => [0, -1, -1],
            TaskShape::Aiv => [-1, 0, -1],
            _ => all,
        };
        self.owned
            .iter()
            .any(|&c| self.try_cluster(c, shape, &kernels, 0).is_some())
    }

    /// Holds `core` until `until`.
    pub fn hold(&mut self, core: CoreId, until: Instant) {
        let slot = &mut self.held_until[core.index as usize];
        if slot.is_none() {
            self.held += 1;
        }
        *slot = Some(until);
    }

    /// Frees `core`.
    pub fn release(&mut self, core: CoreId) {
        if self.held_until[core.index as usize].take().is_some() {
            self.held -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_held_core_is_skipped_and_shapes_wait_for_room() {
        let platform = Platform { clusters: 1 };
        let mut cores = Cores::new(platform, 0, 1);
        let aiv = [-1, 7, -1];
        let first = cores.place(TaskShape::Aiv, &aiv, 0).unwrap();
        assert_eq!(first.cores().next().unwrap().1, platform.aiv(0, 0));
        let until = Instant::now() + Duration::from_secs(1);
        cores.hold(first.cores().next().unwrap().1, until);
        // The other AIV takes the next block; with both held, AIV work waits.
        let second = cores.place(TaskShape::Aiv, &aiv, 0).unwrap();
        assert_eq!(second.cores().next().unwrap().1, platform.aiv(0, 1));
        cores.hold(second.cores().next().unwrap().1, until);
        assert!(cores.place(TaskShape::Aiv, &aiv, 0).is_none());
        assert!(!cores.can_place(TaskShape::Aiv));
        assert!(!cores.can_place(TaskShape::Mix));
        assert!(cores.can_place(TaskShape::Aic));
        assert!(cores.can_place(TaskShape::Dummy));
        cores.release(first.cores().next().unwrap().1);
        assert!(cores.can_place(TaskShape::Aiv));
        cores.release(second.cores().next().unwrap().1);
        assert!(!cores.any_held());
    }
}
