//! The overlap test between a tensor-map entry (an earlier writer) and a consumer's view.
//!
//! Evaluation order matters and follows the reference exactly:
//! 1. a consumer with a *newer* version than the entry overlaps it (`Other`) unconditionally;
//! 2. L1: disjoint element ranges `[start, start + extent)` → no overlap;
//! 3. L2 needs equal dtype, rank and strides, unit innermost stride and nested strides, else
//!    `Other` (a conservative edge);
//! 4. the buffer must be whole outer rows (a multiple of the outer stride), else `Other`; the
//!    reference box `A`'s inner extents come from the strides (its outer extent bounds nothing
//!    a view inside its buffer can reach, so it is not computed);
//! 5. both start offsets decompose into per-dimension offsets inside `A`, else `Other`;
//! 6. per-dimension box intersection: disjoint → none; consumer box ⊇ entry box → `Covered`;
//!    otherwise `Other`.
//!
//! `Covered` here means *the reader's region contains the writer's region*: an INOUT consumer
//! then supersedes the entry, which is removed.

use crate::Tensor;

/// Result of [`check_overlap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    /// The views share no element: no edge.
    None,
    /// The consumer's box contains the entry's box.
    Covered,
    /// Any other overlap (or one that cannot be ruled out).
    Other,
}

/// Overlap of `entry` (the producer's view) with `input` (the consumer's view). Both are
/// assumed to have the same base address; the tensor map never compares different bases.
pub fn check_overlap(entry: &Tensor, input: &Tensor) -> Overlap {
    if input.version() > entry.version() {
        return Overlap::Other;
    }
    // L1: element ranges.
    let (in_start, in_ext) = (input.start_offset(), input.extent_elems());
    let (en_start, en_ext) = (entry.start_offset(), entry.extent_elems());
    if in_ext == 0 || en_ext == 0 || in_start + in_ext <= en_start || en_start + en_ext <= in_start {
        return Overlap::None;
    }
    // L2 prerequisites. `strides()` has one entry per dimension, so comparing strides also
    // compares ranks; a Tensor always has at least one dimension (`Tensor::from_parts`).
    let n = input.ndims();
    if input.dtype() != entry.dtype() || !same_strides(input, entry) {
        return Overlap::Other;
    }
    let strides = input.strides();
    if !nested(strides) || !whole_outer_rows(input) {
        return Overlap::Other;
    }
    // Steps 5 and 6 together, one dimension at a time (no offset arrays: built one element at
    // a time and copied whole, they were read back across their stores, a store-forwarding
    // stall): a start that does not decompose inside the reference box makes it `Other`,
    // whatever the boxes; otherwise the boxes decide.
    let (in_shape, en_shape) = (input.shape(), entry.shape());
    let (mut in_rem, mut en_rem) = (in_start, en_start);
    let (mut fits, mut disjoint, mut covered) = (true, false, true);
    for d in 0..n {
        let (i0, e0) = if d + 1 == n {
            // The innermost stride is 1: what remains is the offset.
            (in_rem, en_rem)
        } else {
            let s = u64::from(strides[d]);
            let offs = (in_rem / s, en_rem / s);
            (in_rem, en_rem) = (in_rem % s, en_rem % s);
            offs
        };
        let (i1, e1) = (i0 + u64::from(in_shape[d]), e0 + u64::from(en_shape[d]));
        if d > 0 {
            let a = u64::from(strides[d - 1] / strides[d]);
            fits &= i1 <= a && e1 <= a;
        }
        disjoint |= i1 <= e0 || e1 <= i0;
        covered &= i0 <= e0 && e1 <= i1;
    }
    match (fits, disjoint, covered) {
        (false, _, _) => Overlap::Other,
        (true, true, _) => Overlap::None,
        (true, false, true) => Overlap::Covered,
        (true, false, false) => Overlap::Other,
    }
}

/// Whether `a` and `b` have the same rank and strides.
#[inline]
pub(super) fn same_strides(a: &Tensor, b: &Tensor) -> bool {
    strides_eq(a.strides(), b.strides())
}

/// Two stride lists compared element by element: `==` on the slices called `memcmp` (their
/// length is not known at compile time), 3 % of a tmr tiled GEMM's orchestrator.
#[inline]
pub(super) fn strides_eq(a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Whether the L2 box test applies to views with these strides (L2 step 3): the innermost
/// stride is 1 and each stride a multiple of the next. The reference box's inner extents are
/// then `strides[d - 1] / strides[d]`; its outer extent (buffer elements / strides[0]) bounds
/// nothing, since a view lies inside its buffer (`Tensor::from_parts` checks it).
#[inline]
fn nested(strides: &[u32]) -> bool {
    let n = strides.len();
    strides[n - 1] == 1 && (1..n).all(|i| strides[i - 1].is_multiple_of(strides[i]))
}

/// Whether `t`'s buffer is whole outer rows (L2 step 4, asked of the consumer).
#[inline]
pub(super) fn whole_outer_rows(t: &Tensor) -> bool {
    let buf_elems = t.size_bytes() / t.dtype().size();
    buf_elems.is_multiple_of(u64::from(t.strides()[0]))
}

/// Where the L2 box test places `t` in the two outer dimensions (the second 0 for a 1-D
/// view): the first two of its per-dimension offsets inside the reference box of its own
/// strides, or `None` when the test cannot place it (then every overlap with a view of the
/// same layout is `Other` or decided by L1). Two views of one layout (dtype and strides) whose
/// boxes are disjoint in any dimension never overlap, provided the consumer's buffer is
/// [`whole_outer_rows`]: that is what lets the tensor map's hot index skip them.
#[inline]
pub(super) fn box_position(t: &Tensor) -> Option<[u64; 2]> {
    let (strides, shape) = (t.strides(), t.shape());
    if !nested(strides) {
        return None;
    }
    let n = strides.len();
    let mut rem = t.start_offset();
    let mut outer = (0, 0);
    for d in 0..n {
        let off = if d + 1 == n {
            rem
        } else {
            let s = u64::from(strides[d]);
            let off = rem / s;
            rem %= s;
            off
        };
        if d > 0 && off + u64::from(shape[d]) > u64::from(strides[d - 1] / strides[d]) {
            return None;
        }
        match d {
            0 => outer.0 = off,
            1 => outer.1 = off,
            _ => {}
        }
    }
    Some([outer.0, outer.1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, TaskId};

    fn rows(r0: u32, r1: u32) -> Tensor {
        let base =
            Tensor::contiguous(0x4000, 256 * 64 * 4, &[256, 64], DType::Float32, TaskId::INVALID).unwrap();
        base.view(&[r1 - r0, 64], &[r0, 0]).unwrap()
    }
    fn vec1(n: u32) -> Tensor {
        Tensor::contiguous(0x4000, 512 * 4, &[512], DType::Float32, TaskId::INVALID)
            .unwrap()
            .view(&[n], &[0])
            .unwrap()
    }

    /// The table of reference §2.4 (tests/ut/cpp/a2a3/test_tensormap.cpp).
    #[test]
    fn reference_overlap_table() {
        assert_eq!(check_overlap(&vec1(256), &vec1(512)), Overlap::Covered);
        assert_eq!(check_overlap(&vec1(512), &vec1(256)), Overlap::Other);
        assert_eq!(check_overlap(&rows(0, 128), &rows(128, 256)), Overlap::None);
        assert_eq!(check_overlap(&rows(0, 192), &rows(64, 256)), Overlap::Other);
        assert_eq!(check_overlap(&rows(64, 192), &rows(0, 256)), Overlap::Covered);
        assert_eq!(
            check_overlap(&vec1(512), &vec1(512).with_version(1)),
            Overlap::Other
        );
    }

    #[test]
    fn newer_version_overlaps_even_when_disjoint() {
        assert_eq!(
            check_overlap(&rows(0, 128), &rows(128, 256).with_version(1)),
            Overlap::Other
        );
        // An older consumer version follows the ordinary rules.
        assert_eq!(
            check_overlap(&rows(0, 128).with_version(1), &rows(128, 256)),
            Overlap::None
        );
    }

    /// One buffer seen as 16 rows of 16 and as 8 rows of 32: row 1 of the first is the second
    /// half of row 0 of the second, the same elements. The L2 box test of either layout alone
    /// would place them in different rows (no overlap); the strides differ, so it is not used.
    #[test]
    fn the_same_elements_under_two_row_lengths_overlap() {
        let narrow =
            Tensor::contiguous(0x4000, 16 * 16 * 4, &[16, 16], DType::Float32, TaskId::INVALID).unwrap();
        let wide = Tensor::contiguous(0x4000, 8 * 32 * 4, &[8, 32], DType::Float32, TaskId::INVALID).unwrap();
        let row1 = narrow.view(&[1, 16], &[1, 0]).unwrap();
        let half = wide.view(&[1, 16], &[0, 16]).unwrap();
        assert_eq!(check_overlap(&row1, &half), Overlap::Other);
        assert_eq!(check_overlap(&half, &row1), Overlap::Other);
        assert!(!same_strides(&row1, &half));
        assert!(same_strides(&row1, &narrow) && same_strides(&half, &wide));
    }

    #[test]
    fn column_boxes_use_the_l2_test() {
        let base =
            Tensor::contiguous(0x4000, 16 * 16 * 4, &[16, 16], DType::Float32, TaskId::INVALID).unwrap();
        let left = base.view(&[16, 8], &[0, 0]).unwrap();
        let right = base.view(&[16, 8], &[0, 8]).unwrap();
        // L1 ranges overlap (interleaved rows) but the boxes are disjoint.
        assert_eq!(check_overlap(&left, &right), Overlap::None);
        assert_eq!(check_overlap(&left, &base), Overlap::Covered);
        // Different strides: conservative.
        let t = base.transpose(0, 1).unwrap();
        assert_eq!(check_overlap(&left, &t), Overlap::Other);
        // Different dtype: conservative.
        let ints = Tensor::contiguous(0x4000, 16 * 16 * 4, &[16, 16], DType::Int32, TaskId::INVALID).unwrap();
        assert_eq!(check_overlap(&left, &ints), Overlap::Other);
    }
}
