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

use crate::{Tensor, MAX_DIMS};

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
    let Some(a) = reference_box(input.strides()) else {
        return Overlap::Other;
    };
    if !whole_outer_rows(input) {
        return Overlap::Other;
    }
    let (Some(in_off), Some(en_off)) = (decompose(input, &a), decompose(entry, &a)) else {
        return Overlap::Other;
    };
    let mut covered = true;
    for d in 0..n {
        let (i0, i1) = (in_off[d], in_off[d] + u64::from(input.shape()[d]));
        let (e0, e1) = (en_off[d], en_off[d] + u64::from(entry.shape()[d]));
        if i1 <= e0 || e1 <= i0 {
            return Overlap::None;
        }
        covered &= i0 <= e0 && e1 <= i1;
    }
    if covered {
        Overlap::Covered
    } else {
        Overlap::Other
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

/// The reference box's inner extents `a[1..]` for views with these strides, or `None` when
/// the L2 test does not apply (innermost stride not 1, or strides not nested). Its outer
/// extent (buffer elements / strides[0]) bounds nothing: a view lies inside its buffer
/// (`Tensor::from_parts` checks it), so its outer offset plus its outer size never exceeds it.
#[inline]
fn reference_box(strides: &[u32]) -> Option<[u64; MAX_DIMS]> {
    let n = strides.len();
    if strides[n - 1] != 1 || (1..n).any(|i| !strides[i - 1].is_multiple_of(strides[i])) {
        return None;
    }
    let mut a = [0u64; MAX_DIMS];
    for i in 1..n {
        a[i] = u64::from(strides[i - 1] / strides[i]);
    }
    Some(a)
}

/// Whether `t`'s buffer is whole outer rows (L2 step 4, asked of the consumer).
#[inline]
pub(super) fn whole_outer_rows(t: &Tensor) -> bool {
    let buf_elems = t.size_bytes() / t.dtype().size();
    buf_elems.is_multiple_of(u64::from(t.strides()[0]))
}

/// Where the L2 box test places `t`: its per-dimension offsets inside the reference box of its
/// own strides, or `None` when the test cannot place it (then every overlap with a view of the
/// same layout is `Other` or decided by L1). Two views of one layout (dtype and strides) whose
/// positions' boxes are disjoint in any dimension never overlap, provided the consumer's
/// buffer is [`whole_outer_rows`]: that is what lets the tensor map's hot index skip them.
pub(super) fn box_position(t: &Tensor) -> Option<[u64; MAX_DIMS]> {
    reference_box(t.strides()).and_then(|a| decompose(t, &a))
}

/// Per-dimension offsets of `t.start_offset` in the mixed radix given by its strides, or `None`
/// when the box does not fit the reference box's inner extents `a[1..]`.
#[inline]
fn decompose(t: &Tensor, a: &[u64; MAX_DIMS]) -> Option<[u64; MAX_DIMS]> {
    let mut rem = t.start_offset();
    let mut off = [0u64; MAX_DIMS];
    for (d, &s) in t.strides().iter().enumerate() {
        let s = u64::from(s);
        off[d] = rem / s;
        rem %= s;
        if d > 0 && off[d] + u64::from(t.shape()[d]) > a[d] {
            return None;
        }
    }
    // The innermost stride is 1 (checked by the caller), so nothing remains.
    Some(off)
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
