//! `check_overlap`, one row per branch and boundary: each row says which rule decides it, and
//! is built so that no later rule would decide it the same way (so breaking that rule changes
//! the answer). Mutation testing (`scripts/mutants.sh`) holds the table to that.

use simpler_core::{check_overlap, DType, Overlap, TaskId, Tensor, TensorParts};

const ADDR: u64 = 0x10_0000;

/// A view of a buffer of `buf_elems` elements of `dtype`.
fn view_of(dtype: DType, buf_elems: u64, shape: &[u32], strides: &[u32], start: u64) -> Tensor {
    Tensor::from_parts(&TensorParts {
        addr: ADDR,
        size_bytes: buf_elems * dtype.size(),
        owner: TaskId::INVALID,
        start_offset: start,
        version: 0,
        dtype,
        manual_dep: false,
        shape: shape.to_vec(),
        strides: strides.to_vec(),
    })
    .unwrap()
}

/// An f32 view.
fn v(buf_elems: u64, shape: &[u32], strides: &[u32], start: u64) -> Tensor {
    view_of(DType::Float32, buf_elems, shape, strides, start)
}

#[test]
fn every_rule_of_check_overlap_decides_its_row() {
    let rows: Vec<(&str, Tensor, Tensor, Overlap)> = vec![
        // 1. The version rule comes first.
        (
            "a newer consumer overlaps an older entry even when the ranges are disjoint",
            v(64, &[8], &[1], 0),
            v(64, &[8], &[1], 32).with_version(1),
            Overlap::Other,
        ),
        (
            "an equal version is no reason: disjoint ranges stay disjoint",
            v(64, &[8], &[1], 0).with_version(1),
            v(64, &[8], &[1], 32).with_version(1),
            Overlap::None,
        ),
        (
            "an older consumer is no reason either",
            v(64, &[8], &[1], 0).with_version(2),
            v(64, &[8], &[1], 32).with_version(1),
            Overlap::None,
        ),
        // 2. L1: element ranges. Layouts differ in these rows, so without L1 they would be Other.
        (
            "an empty consumer view overlaps nothing, even starting inside the entry's range",
            v(64, &[8], &[1], 0),
            v(64, &[0, 4], &[8, 1], 4),
            Overlap::None,
        ),
        (
            "an empty entry view overlaps nothing, even starting inside the consumer's range",
            v(64, &[0, 4], &[8, 1], 4),
            v(64, &[8], &[1], 0),
            Overlap::None,
        ),
        (
            "a consumer range ending where the entry's begins is disjoint",
            v(64, &[8], &[1], 12),
            v(64, &[2, 4], &[8, 1], 0),
            Overlap::None,
        ),
        (
            "an entry range ending where the consumer's begins is disjoint",
            v(64, &[2, 4], &[8, 1], 0),
            v(64, &[8], &[1], 12),
            Overlap::None,
        ),
        (
            "ranges sharing one element overlap (different layouts: conservative Other)",
            v(64, &[8], &[1], 11),
            v(64, &[2, 4], &[8, 1], 0),
            Overlap::Other,
        ),
        // 3. L2 prerequisites: each row meets every other prerequisite, and the consumer's box
        //    would cover the entry's, so a skipped prerequisite turns Other into Covered.
        (
            "different dtypes (of one size) are Other",
            view_of(DType::Float32, 64, &[4], &[1], 0),
            view_of(DType::Int32, 64, &[8], &[1], 0),
            Overlap::Other,
        ),
        (
            "different strides of one rank are Other",
            v(64, &[2, 4], &[8, 1], 0),
            v(64, &[2, 4], &[16, 1], 0),
            Overlap::Other,
        ),
        (
            "different ranks are Other",
            v(64, &[8], &[1], 0),
            v(64, &[2, 8], &[8, 1], 0),
            Overlap::Other,
        ),
        (
            "an innermost stride other than 1 (a stepped slice) is Other",
            v(64, &[4], &[2], 0),
            v(64, &[8], &[2], 0),
            Overlap::Other,
        ),
        (
            "strides that do not nest (6 is not a multiple of 4) are Other",
            v(48, &[2, 1, 4], &[6, 4, 1], 0),
            v(48, &[2, 1, 4], &[6, 4, 1], 0),
            Overlap::Other,
        ),
        // 4. The reference box.
        (
            "a buffer that is not a whole number of outer rows is Other",
            v(10, &[1, 4], &[4, 1], 0),
            v(10, &[2, 4], &[4, 1], 0),
            Overlap::Other,
        ),
        (
            "a middle dimension wider than the box (8 / 2 = 4 < 5) is Other",
            v(64, &[1, 5, 1], &[8, 2, 1], 0),
            v(64, &[1, 5, 1], &[8, 2, 1], 0),
            Overlap::Other,
        ),
        (
            "an inner dimension wider than its row (5 > 4) is Other",
            v(16, &[1, 5], &[4, 1], 0),
            v(16, &[1, 5], &[4, 1], 0),
            Overlap::Other,
        ),
        (
            "an offset whose innermost part pushes the box past its row (1 + 2 > 2) is Other",
            v(64, &[1, 1, 2], &[8, 2, 1], 1),
            v(64, &[1, 2, 2], &[8, 2, 1], 1),
            Overlap::Other,
        ),
        // 5. Per-dimension intersection.
        (
            "rows ending where the other rows begin are disjoint",
            v(64, &[2, 8], &[8, 1], 0),
            v(64, &[2, 8], &[8, 1], 16),
            Overlap::None,
        ),
        (
            "columns ending where the other columns begin are disjoint (ranges interleave)",
            v(64, &[8, 4], &[8, 1], 0),
            v(64, &[8, 4], &[8, 1], 4),
            Overlap::None,
        ),
        (
            "equal boxes: the consumer covers the entry",
            v(64, &[4, 4], &[8, 1], 9),
            v(64, &[4, 4], &[8, 1], 9),
            Overlap::Covered,
        ),
        (
            "a consumer box containing the entry's on every side covers it",
            v(64, &[2, 2], &[8, 1], 9),
            v(64, &[4, 4], &[8, 1], 0),
            Overlap::Covered,
        ),
        (
            "a consumer box missing the entry's last column does not cover it",
            v(64, &[2, 3], &[8, 1], 9),
            v(64, &[4, 3], &[8, 1], 8),
            Overlap::Other,
        ),
        (
            "a consumer box missing the entry's first row does not cover it",
            v(64, &[2, 2], &[8, 1], 1),
            v(64, &[4, 4], &[8, 1], 8),
            Overlap::Other,
        ),
        (
            "a consumer inside the entry overlaps without covering it",
            v(64, &[8], &[1], 0),
            v(64, &[4], &[1], 2),
            Overlap::Other,
        ),
    ];
    let mut wrong = Vec::new();
    for (why, entry, consumer, want) in &rows {
        let got = check_overlap(entry, consumer);
        if got != *want {
            wrong.push(format!("{why}: got {got:?}, want {want:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
