//! The capture record: fixed-size slots in fixed-size buffers.
//!
//! A submit takes one base slot (task id, flags, kernels, block_num, up to 32 tagged tensors,
//! up to [`INLINE_DEPS`] explicit deps) plus, when it has more explicit deps, overflow slots of
//! [`OVERFLOW_DEPS`] deps each. A chain is written into one buffer and published with it, so the
//! host never sees half a chain.

use arrayvec::ArrayVec;
use simpler_core::{ArgTag, DepKind, TaskId, Tensor, TensorArg, MAX_TENSOR_ARGS};

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

/// What a slot holds: a base record's arguments and first deps, or an overflow chunk of deps.
/// The two share storage, so a slot is as large as its larger variant (about 4.7 KB, like the
/// original's 4672-byte slot).
#[allow(clippy::large_enum_variant)] // slots are fixed-size by design; boxing would defeat them
pub(crate) enum SlotBody {
    Base {
        /// Tags and views; OUTPUT arguments carry no view (nothing exists at submit time).
        args: ArrayVec<(ArgTag, Option<Tensor>), MAX_TENSOR_ARGS>,
        deps: ArrayVec<TaskId, INLINE_DEPS>,
        /// Bit `i` set: `deps[i]` is WAIT-only (else WAIT|RETAIN).
        wait_only: u64,
    },
    Overflow {
        deps: ArrayVec<TaskId, OVERFLOW_DEPS>,
        wait_only: [u64; OVERFLOW_DEPS.div_ceil(64)],
    },
}

/// One slot (base or overflow, told apart by `flags`).
pub(crate) struct DepGenSlot {
    pub task_id: TaskId,
    pub flags: u32,
    pub kernel_ids: [i32; 3],
    pub block_num: u32,
    body: SlotBody,
}

impl DepGenSlot {
    fn empty() -> Self {
        DepGenSlot {
            task_id: TaskId::INVALID,
            flags: 0,
            kernel_ids: [-1; 3],
            block_num: 1,
            body: SlotBody::Base {
                args: ArrayVec::new(),
                deps: ArrayVec::new(),
                wait_only: 0,
            },
        }
    }

    /// Makes this a base slot holding `args` and up to [`INLINE_DEPS`] `deps` (cleared in place
    /// when it already is one, so a record writes only what it uses).
    pub fn set_base(&mut self, args: &[TensorArg], deps: impl Iterator<Item = (TaskId, DepKind)>) {
        if !matches!(self.body, SlotBody::Base { .. }) {
            self.body = SlotBody::Base {
                args: ArrayVec::new(),
                deps: ArrayVec::new(),
                wait_only: 0,
            };
        }
        let SlotBody::Base {
            args: a,
            deps: d,
            wait_only,
        } = &mut self.body
        else {
            unreachable!()
        };
        a.clear();
        // One element at a time, the view copied into its place: extending from an iterator
        // of `(tag, view)` pairs built each pair on the stack at odd offsets and read it back
        // with loads that straddled those stores, a store-forwarding stall that was half of
        // the capture's time.
        for t in args.iter().take(MAX_TENSOR_ARGS) {
            a.push((t.tag(), None));
            if let (Some(view), Some(last)) = (t.tensor(), a.last_mut()) {
                last.1 = Some(*view);
            }
        }
        d.clear();
        *wait_only = 0;
        for (i, (id, kind)) in deps.take(INLINE_DEPS).enumerate() {
            d.push(id);
            if kind == DepKind::Wait {
                *wait_only |= 1 << i;
            }
        }
    }

    /// Makes this an overflow slot holding up to [`OVERFLOW_DEPS`] `deps`.
    pub fn set_overflow(&mut self, deps: impl Iterator<Item = (TaskId, DepKind)>) {
        if !matches!(self.body, SlotBody::Overflow { .. }) {
            self.body = SlotBody::Overflow {
                deps: ArrayVec::new(),
                wait_only: [0; OVERFLOW_DEPS.div_ceil(64)],
            };
        }
        let SlotBody::Overflow { deps: d, wait_only } = &mut self.body else {
            unreachable!()
        };
        d.clear();
        *wait_only = [0; OVERFLOW_DEPS.div_ceil(64)];
        for (i, (id, kind)) in deps.take(OVERFLOW_DEPS).enumerate() {
            d.push(id);
            if kind == DepKind::Wait {
                wait_only[i / 64] |= 1 << (i % 64);
            }
        }
    }

    /// The arguments (empty for an overflow slot).
    pub fn args(&self) -> &[(ArgTag, Option<Tensor>)] {
        match &self.body {
            SlotBody::Base { args, .. } => args,
            SlotBody::Overflow { .. } => &[],
        }
    }

    /// Number of deps in this slot.
    #[cfg(test)]
    pub fn dep_count(&self) -> usize {
        match &self.body {
            SlotBody::Base { deps, .. } => deps.len(),
            SlotBody::Overflow { deps, .. } => deps.len(),
        }
    }

    /// The slot's deps with their kinds.
    pub fn deps(&self) -> impl Iterator<Item = (TaskId, DepKind)> + '_ {
        let (ids, bits): (&[TaskId], &[u64]) = match &self.body {
            SlotBody::Base { deps, wait_only, .. } => (deps, std::slice::from_ref(wait_only)),
            SlotBody::Overflow { deps, wait_only } => (deps, wait_only),
        };
        ids.iter().enumerate().map(move |(i, &id)| {
            let wait = bits[i / 64] & (1 << (i % 64)) != 0;
            (id, if wait { DepKind::Wait } else { DepKind::WaitRetain })
        })
    }
}

/// A buffer of slots; `count` slots are valid.
pub(crate) struct SlotBuffer {
    pub slots: Box<[DepGenSlot]>,
    pub count: usize,
}

impl crate::collectors::channel::Records for SlotBuffer {
    fn count(&self) -> usize {
        self.count
    }
    fn clear(&mut self) {
        self.count = 0;
    }
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
    fn dep_kinds_round_trip_in_both_slot_kinds() {
        let mut s = DepGenSlot::empty();
        let kind = |i: u32| {
            if i.is_multiple_of(3) {
                DepKind::Wait
            } else {
                DepKind::WaitRetain
            }
        };
        let deps: Vec<_> = (0..200u32).map(|i| (TaskId::new(0, i), kind(i))).collect();
        s.set_overflow(deps.iter().copied());
        assert_eq!(s.deps().collect::<Vec<_>>(), deps);
        s.set_base(&[], deps.iter().copied());
        assert_eq!(
            (s.dep_count(), s.deps().collect::<Vec<_>>()),
            (64, deps[..64].to_vec())
        );
        assert!(
            std::mem::size_of::<DepGenSlot>() < 4800,
            "{}",
            std::mem::size_of::<DepGenSlot>()
        );
    }
}
