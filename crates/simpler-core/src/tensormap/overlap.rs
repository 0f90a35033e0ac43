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

use crate::tensor::dims_eq;
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
    if same_view(entry, input) {
        return same_view_overlap(input);
    }
    check_overlap_of_boxes(entry, input)
}

/// Whether two views of one buffer are the same view: start, dtype, shape and strides.
#[inline]
fn same_view(a: &Tensor, b: &Tensor) -> bool {
    a.start_offset() == b.start_offset()
        && a.dtype() == b.dtype()
        && dims_eq(a.shape(), b.shape())
        && same_strides(a, b)
}

/// [`check_overlap`] of a view with itself (no newer version): what steps 2–6 answer when both
/// boxes are one. An empty view overlaps nothing; otherwise the element ranges meet, dtype and
/// strides agree, and the boxes are equal, so the answer is `Covered` when the L2 test applies
/// (nested strides, the consumer's buffer whole outer rows, the view inside its reference box:
/// `box_position`) and `Other` when it does not. The common case of a chain of INOUT tasks on
/// one tensor and of readers after its writer, answered without the per-dimension walk (about
/// 200 instructions of a chain's 1,900 per submit, `docs/performance.md`, item 83).
#[inline]
pub(super) fn same_view_overlap(t: &Tensor) -> Overlap {
    if t.shape().contains(&0) {
        Overlap::None
    } else if box_position(t).is_some() && whole_outer_rows(t) {
        Overlap::Covered
    } else {
        Overlap::Other
    }
}

/// Steps 2–6 of [`check_overlap`] (the version rule already applied), for any two views.
fn check_overlap_of_boxes(entry: &Tensor, input: &Tensor) -> Overlap {
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
    let (mut fits, mut disjoint, mut covered) = (true, false, true);
    let mut dimension = |d: usize, i0: u64, e0: u64| {
        let (i1, e1) = (i0 + u64::from(in_shape[d]), e0 + u64::from(en_shape[d]));
        if d > 0 {
            let a = u64::from(strides[d - 1] / strides[d]);
            fits &= i1 <= a && e1 <= a;
        }
        disjoint |= i1 <= e0 || e1 <= i0;
        covered &= i0 <= e0 && e1 <= i1;
    };
    let (mut in_rem, mut en_rem) = (in_start, en_start);
    for (d, &s) in outer_strides(strides).iter().enumerate() {
        let s = u64::from(s);
        dimension(d, in_rem / s, en_rem / s);
        (in_rem, en_rem) = (in_rem % s, en_rem % s);
    }
    // The innermost stride is 1 (`nested`): what remains is the offset there.
    dimension(n - 1, in_rem, en_rem);
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
    dims_eq(a.strides(), b.strides())
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
    let mut outer = [0, 0];
    let mut fits = true;
    let mut dimension = |d: usize, off: u64| {
        if d > 0 && off + u64::from(shape[d]) > u64::from(strides[d - 1] / strides[d]) {
            fits = false;
        }
        if let Some(o) = outer.get_mut(d) {
            *o = off;
        }
    };
    let mut rem = t.start_offset();
    for (d, &s) in outer_strides(strides).iter().enumerate() {
        let s = u64::from(s);
        dimension(d, rem / s);
        rem %= s;
    }
    // The innermost stride is 1 (`nested`): what remains is the offset there.
    dimension(strides.len() - 1, rem);
    fits.then_some(outer)
}

/// Every stride but the innermost: the dimensions whose offset a division finds. Split off
/// without arithmetic (an `n - 1` bound or a `d + 1 == n` test of the innermost dimension is
/// the same as dividing by its stride of 1, so no test could tell such a mutant apart).
#[inline]
fn outer_strides(strides: &[u32]) -> &[u32] {
    strides.split_last().map_or(&[], |(_, outer)| outer)
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

    /// A view of a buffer of 5 × 6 × 7 f32 with that buffer's strides (42, 7, 1), built from
    /// its parts: its shape may run past a row (it then wraps into the next one).
    fn strided(start: u64, shape: &[u32]) -> Tensor {
        let strides = [42, 7, 1];
        Tensor::from_parts(&crate::TensorParts {
            addr: 0x4000,
            size_bytes: 5 * 6 * 7 * 4,
            owner: TaskId::INVALID,
            start_offset: start,
            version: 0,
            dtype: DType::Float32,
            manual_dep: false,
            shape: shape.to_vec(),
            strides: strides[3 - shape.len()..].to_vec(),
        })
        .unwrap()
    }

    #[test]
    fn box_position_places_views_inside_the_reference_box() {
        // Start 2 * 42 + 3 * 7 + 4: offsets (2, 3, 4); the two outer ones are the position.
        assert_eq!(box_position(&strided(109, &[1, 3, 3])), Some([2, 3]));
        assert_eq!(box_position(&strided(109, &[3, 3, 3])), Some([2, 3]));
        // A 2-D view of rows of 7: start 3 * 7 + 2 is (3, 2).
        assert_eq!(box_position(&strided(23, &[2, 5])), Some([3, 2]));
        // A 1-D view: its offset, then 0.
        assert_eq!(box_position(&strided(23, &[4])), Some([23, 0]));
        // Strides that do not nest (a step of 2 innermost): not placeable.
        let every_other = rows(0, 4).slice(1, 0, 64, 2).unwrap();
        assert_eq!(box_position(&every_other), None);
    }

    #[test]
    fn box_position_refuses_a_view_that_runs_past_its_row() {
        // Dimension 1 holds 42 / 7 = 6 rows of 7: offset 3 and 4 rows end at 7 > 6.
        assert_eq!(box_position(&strided(2 * 42 + 3 * 7, &[1, 4, 2])), None);
        assert_eq!(box_position(&strided(2 * 42 + 3 * 7, &[1, 3, 2])), Some([2, 3]));
        // Innermost: offset 4 and 4 columns end at 8 > 7.
        assert_eq!(box_position(&strided(4, &[1, 1, 4])), None);
        assert_eq!(box_position(&strided(3, &[1, 1, 4])), Some([0, 0]));
        // A 2-D view wider than its row of 7.
        assert_eq!(box_position(&strided(0, &[2, 8])), None);
    }

    /// A producer whose rows run past the row length shares elements with a consumer in a
    /// row the box test would call disjoint: the test does not apply, the answer is `Other`.
    #[test]
    fn a_view_running_past_its_row_is_not_boxed() {
        // Rows 0-1, 9 columns each: elements 0..9 and 7..16, reaching into row 2 (14, 15).
        let wide = strided(0, &[2, 9]);
        let row2 = strided(14, &[1, 2]);
        assert_eq!(check_overlap(&wide, &row2), Overlap::Other);
        assert_eq!(check_overlap(&row2, &wide), Overlap::Other);
        // The same consumer against a producer that fits its rows: disjoint boxes, no overlap.
        assert_eq!(check_overlap(&strided(0, &[2, 7]), &row2), Overlap::None);
        // 3-D: dimension 1 runs past its 6 rows (offset 5, 2 rows) into the next block.
        let spill = strided(5 * 7, &[1, 2, 7]);
        let next = strided(42, &[1, 1, 7]);
        assert_eq!(check_overlap(&spill, &next), Overlap::Other);
        assert_eq!(check_overlap(&next, &spill), Overlap::Other);
    }

    /// The same-view answer is the box walk's answer for a view against itself, whatever the
    /// view: empty or not, nested strides or not, inside its rows or running past them, its
    /// buffer whole outer rows or not; a newer consumer version still comes first, and the
    /// same geometry in another dtype is not the same view.
    #[test]
    fn a_view_against_itself_answers_as_the_box_walk_does() {
        use proptest::prelude::*;
        let strides = prop::sample::select(vec![
            vec![42u32, 7, 1],
            vec![8, 1],
            vec![7, 1],
            vec![1],
            vec![2],
            vec![1, 7],
            vec![14, 2],
            vec![36, 6, 1],
        ]);
        let view = (strides, prop::collection::vec(0u32..9, 3), 0u64..240, 1u64..300);
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(4000));
        let counts = std::cell::Cell::new([0u32; 3]);
        runner
            .run(&view, |(strides, shape, start, elems)| {
                let n = strides.len();
                let parts = crate::TensorParts {
                    addr: 0x4000,
                    size_bytes: elems * 4,
                    owner: TaskId::INVALID,
                    start_offset: start,
                    version: 0,
                    dtype: DType::Float32,
                    manual_dep: false,
                    shape: shape[..n].to_vec(),
                    strides,
                };
                let Ok(t) = Tensor::from_parts(&parts) else {
                    return Ok(()); // runs past its buffer
                };
                let general = check_overlap_of_boxes(&t, &t);
                let mut c = counts.get();
                c[general as usize] += 1;
                counts.set(c);
                prop_assert_eq!(check_overlap(&t, &t), general);
                prop_assert_eq!(check_overlap(&t.with_version(1), &t), general);
                prop_assert_eq!(check_overlap(&t, &t.with_version(1)), Overlap::Other);
                // The same geometry read as another dtype of the same size is another view:
                // the L2 test does not apply, so it overlaps as `Other` (unless empty).
                let mut as_ints = parts.clone();
                as_ints.dtype = DType::Int32;
                let u = Tensor::from_parts(&as_ints).expect("the same geometry and element size");
                let other = check_overlap(&t, &u);
                prop_assert_eq!(other, check_overlap_of_boxes(&t, &u));
                prop_assert_ne!(other, Overlap::Covered);
                Ok(())
            })
            .unwrap();
        let [none, covered, other] = counts.get();
        assert!(
            covered > 100 && other > 100 && none > 10,
            "every answer is exercised: {covered} covered, {other} other, {none} none"
        );
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
