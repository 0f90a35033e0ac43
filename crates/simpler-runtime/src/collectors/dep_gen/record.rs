//! The capture record: fixed-size slots in fixed-size buffers.
//!
//! A submit takes one base slot (task id, flags, kernels, block_num, up to 32 tensor arguments,
//! up to [`INLINE_DEPS`] explicit deps) plus, when it has more explicit deps, overflow slots of
//! [`OVERFLOW_DEPS`] deps each. A chain is written into one buffer and published with it, so the
//! host never sees half a chain.

use crate::huge_pages::HugeSlice;
use simpler_core::{DType, DepKind, TaskId, TensorArg, TensorCreateInfo, MAX_TENSOR_ARGS};

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

/// One slot, a base record or an overflow chunk of deps (told apart by `flags`), of one fixed
/// size for both. What every record writes comes first: the header, then the arguments, so a
/// base record with few arguments and no explicit deps writes the slot's first lines only
/// (nothing is read back, cleared or tagged elsewhere in it), and those are the lines
/// [`DepGenSlot::prefetch_base`] asks for. The deps follow, a base record using the first
/// [`INLINE_DEPS`] of them. Unlike the original's 4672-byte slot, where the overflow view
/// overlays the tensors, both views have their own fields (≈ 7.5 KB a slot): an overlay would
/// need unsafe reinterpretation for memory that only the pool of [`BUFFERS`] buffers holds.
#[repr(C)]
pub(crate) struct DepGenSlot {
    pub task_id: TaskId,
    pub flags: u32,
    pub kernel_ids: [i32; 3],
    pub block_num: u32,
    /// Arguments held (0 in an overflow slot).
    arg_count: u8,
    /// Deps held.
    dep_count: u16,
    /// The submit's tensor arguments as it passed them (an OUTPUT carries its create-info:
    /// nothing exists at submit time), so the replay hands them to the dependency function
    /// as they are.
    args: [TensorArg; MAX_TENSOR_ARGS],
    /// Bit `i % 64` of word `i / 64` set: `deps[i]` is WAIT-only (else WAIT|RETAIN); only the
    /// words of held deps are written.
    wait_only: [u64; OVERFLOW_DEPS.div_ceil(64)],
    deps: [TaskId; OVERFLOW_DEPS],
}

impl DepGenSlot {
    fn empty() -> Self {
        DepGenSlot {
            task_id: TaskId::INVALID,
            flags: 0,
            kernel_ids: [-1; 3],
            block_num: 1,
            arg_count: 0,
            dep_count: 0,
            args: [TensorArg::Output(
                TensorCreateInfo::new(&[1], DType::Float32).expect("a valid create-info"),
            ); MAX_TENSOR_ARGS],
            wait_only: [0; OVERFLOW_DEPS.div_ceil(64)],
            deps: [TaskId::INVALID; OVERFLOW_DEPS],
        }
    }

    /// Makes this a base slot holding `args` and up to [`INLINE_DEPS`] `deps`.
    pub fn set_base(&mut self, args: &[TensorArg], deps: impl Iterator<Item = (TaskId, DepKind)>) {
        let n = args.len().min(MAX_TENSOR_ARGS);
        // Each argument copied whole into its place. (Until issue 15 the slot held a `(tag,
        // view)` pair per argument, written field by field: a pair built on the stack and
        // copied stalled on store forwarding.)
        self.args[..n].copy_from_slice(&args[..n]);
        self.arg_count = n as u8;
        self.set_deps(deps, INLINE_DEPS);
    }

    /// Makes this an overflow slot holding up to [`OVERFLOW_DEPS`] `deps`.
    pub fn set_overflow(&mut self, deps: impl Iterator<Item = (TaskId, DepKind)>) {
        self.arg_count = 0;
        self.set_deps(deps, OVERFLOW_DEPS);
    }

    /// Stores up to `cap` deps and their kinds, each kind word written once, whole.
    fn set_deps(&mut self, deps: impl Iterator<Item = (TaskId, DepKind)>, cap: usize) {
        let (mut n, mut word) = (0, 0u64);
        for (id, kind) in deps.take(cap) {
            self.deps[n] = id;
            if kind == DepKind::Wait {
                word |= 1 << (n % 64);
            }
            n += 1;
            if n % 64 == 0 {
                self.wait_only[n / 64 - 1] = word;
                word = 0;
            }
        }
        if n % 64 != 0 {
            self.wait_only[n / 64] = word;
        }
        self.dep_count = n as u16;
    }

    /// Asks for the lines a base record of `args` arguments without explicit deps writes, for
    /// writing (`crate::prefetch`): the capture's stores to a slot last written a whole pool
    /// of buffers earlier waited for its lines, and every later store of the submit with them.
    #[inline]
    pub fn prefetch_base(&self, args: usize) {
        let bytes = std::mem::offset_of!(DepGenSlot, args)
            + args.min(MAX_TENSOR_ARGS) * std::mem::size_of::<TensorArg>();
        crate::prefetch::range_for_write((self as *const Self).cast(), bytes);
    }

    /// Asks for the line of this slot's header (where its argument count is), for reading:
    /// for the replay, two records ahead of the one it replays, so that
    /// [`DepGenSlot::prefetch_record`] can read the count without waiting a record later.
    #[inline]
    pub fn prefetch_header(&self) {
        crate::prefetch::range_for_read((self as *const Self).cast(), 1);
    }

    /// Asks for the lines of this slot's header and arguments, for reading: for the replay, a
    /// record ahead of the one it replays. The orchestrator's core wrote them, and their
    /// first loads (turning the record into arguments) were a sixth of the live replay's time.
    #[inline]
    pub fn prefetch_record(&self) {
        let bytes = std::mem::offset_of!(DepGenSlot, args)
            + usize::from(self.arg_count).min(MAX_TENSOR_ARGS) * std::mem::size_of::<TensorArg>();
        crate::prefetch::range_for_read((self as *const Self).cast(), bytes);
    }

    /// The arguments (empty for an overflow slot).
    pub fn args(&self) -> &[TensorArg] {
        &self.args[..usize::from(self.arg_count)]
    }

    /// Number of deps in this slot.
    #[cfg(test)]
    pub fn dep_count(&self) -> usize {
        usize::from(self.dep_count)
    }

    /// The slot's deps with their kinds.
    pub fn deps(&self) -> impl Iterator<Item = (TaskId, DepKind)> + '_ {
        let bits = &self.wait_only;
        self.deps[..usize::from(self.dep_count)]
            .iter()
            .enumerate()
            .map(move |(i, &id)| {
                let wait = bits[i / 64] & (1 << (i % 64)) != 0;
                (id, if wait { DepKind::Wait } else { DepKind::WaitRetain })
            })
    }
}

/// A buffer of slots; `count` slots are valid.
pub(crate) struct SlotBuffer {
    /// On 2 MB pages: a submit writes a new slot of several KB (`crate::huge_pages`).
    pub slots: HugeSlice<DepGenSlot>,
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
            slots: HugeSlice::new(capacity, DepGenSlot::empty),
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
        // Back to a base slot with fewer deps: the kinds of the first 64 are its own.
        let fewer: Vec<_> = (0..5u32)
            .map(|i| (TaskId::new(1, i), DepKind::WaitRetain))
            .collect();
        s.set_base(&[], fewer.iter().copied());
        assert_eq!(s.deps().collect::<Vec<_>>(), fewer);
        assert!(s.args().is_empty());
    }
}
