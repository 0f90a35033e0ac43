//! The capture record: fixed-size slots in fixed-size buffers.
//!
//! A submit takes one base slot (task id, flags, kernels, block_num, up to 32 tagged tensors,
//! up to [`INLINE_DEPS`] explicit deps) plus, when it has more explicit deps, overflow slots of
//! [`OVERFLOW_DEPS`] deps each. A chain is written into one buffer and published with it, so the
//! host never sees half a chain.

use arrayvec::ArrayVec;
use simpler_core::{ArgTag, DepKind, TaskId, Tensor, MAX_TENSOR_ARGS};

/// Explicit deps held by a base slot.
pub const INLINE_DEPS: usize = 64;
/// Explicit deps held by one overflow slot.
pub const OVERFLOW_DEPS: usize = 582;
/// Slots per buffer.
pub const SLOTS_PER_BUFFER: usize = 512;
/// Buffers in the pool of one run.
pub const BUFFERS: usize = 4;

/// The submit happened inside a manual scope.
pub const FLAG_MANUAL: u32 = 1 << 0;
/// A base slot followed by overflow slots.
pub const FLAG_HAS_OVERFLOW: u32 = 1 << 1;
/// An overflow slot.
pub const FLAG_OVERFLOW: u32 = 1 << 2;
/// The last overflow slot of a chain.
pub const FLAG_LAST_OVERFLOW: u32 = 1 << 3;
/// The submit allowed early dispatch.
pub const FLAG_EARLY_DISPATCH: u32 = 1 << 4;

/// Slots a submit with `deps` explicit deps needs: `1 + ceil((deps − 64) / 582)`.
pub const fn slots_for(deps: usize) -> usize {
    if deps <= INLINE_DEPS {
        1
    } else {
        1 + (deps - INLINE_DEPS).div_ceil(OVERFLOW_DEPS)
    }
}

/// One slot (base or overflow, told apart by `flags`).
pub(crate) struct DepGenSlot {
    pub task_id: TaskId,
    pub flags: u32,
    pub kernel_ids: [i32; 3],
    pub block_num: u32,
    /// Tags and views; OUTPUT arguments carry no view (nothing exists at submit time).
    pub args: ArrayVec<(ArgTag, Option<Tensor>), MAX_TENSOR_ARGS>,
    pub deps: ArrayVec<TaskId, OVERFLOW_DEPS>,
    /// Bit `i` set: `deps[i]` is WAIT-only (else WAIT|RETAIN).
    pub wait_only: [u64; OVERFLOW_DEPS.div_ceil(64)],
}

impl DepGenSlot {
    fn empty() -> Self {
        DepGenSlot {
            task_id: TaskId::INVALID,
            flags: 0,
            kernel_ids: [-1; 3],
            block_num: 1,
            args: ArrayVec::new(),
            deps: ArrayVec::new(),
            wait_only: [0; OVERFLOW_DEPS.div_ceil(64)],
        }
    }

    /// Replaces the slot's deps with `deps`.
    pub fn set_deps(&mut self, deps: impl Iterator<Item = (TaskId, DepKind)>) {
        self.deps.clear();
        self.wait_only = [0; OVERFLOW_DEPS.div_ceil(64)];
        for (i, (id, kind)) in deps.enumerate() {
            self.deps.push(id);
            if kind == DepKind::Wait {
                self.wait_only[i / 64] |= 1 << (i % 64);
            }
        }
    }

    /// The slot's deps with their kinds.
    pub fn deps(&self) -> impl Iterator<Item = (TaskId, DepKind)> + '_ {
        self.deps.iter().enumerate().map(|(i, &id)| {
            let wait = self.wait_only[i / 64] & (1 << (i % 64)) != 0;
            (id, if wait { DepKind::Wait } else { DepKind::WaitRetain })
        })
    }
}

/// A buffer of slots; `count` slots are valid.
pub(crate) struct SlotBuffer {
    pub slots: Box<[DepGenSlot]>,
    pub count: usize,
}

impl SlotBuffer {
    pub fn new(capacity: usize) -> Self {
        SlotBuffer {
            slots: (0..capacity).map(|_| DepGenSlot::empty()).collect(),
            count: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_counts_follow_the_chain_rule() {
        for (deps, slots) in [
            (0, 1),
            (64, 1),
            (65, 2),
            (646, 2),
            (647, 3),
            (1228, 3),
            (1229, 4),
            (5000, 10),
        ] {
            assert_eq!(slots_for(deps), slots, "{deps} deps");
        }
    }

    #[test]
    fn dep_kinds_round_trip() {
        let mut s = DepGenSlot::empty();
        let deps: Vec<_> = (0..200u32)
            .map(|i| {
                (
                    TaskId::new(0, i),
                    if i % 3 == 0 {
                        DepKind::Wait
                    } else {
                        DepKind::WaitRetain
                    },
                )
            })
            .collect();
        s.set_deps(deps.iter().copied());
        assert_eq!(s.deps().collect::<Vec<_>>(), deps);
    }
}
