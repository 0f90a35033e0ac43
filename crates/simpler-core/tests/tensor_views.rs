//! Tensor views at their edges: every validation error of `from_parts`, `view`, `slice`,
//! `reshape` and `transpose`, the boundaries that are still valid, and the exact layout each
//! operation produces (offset, shape, strides, extent, contiguity).

use simpler_core::{DType, TaskId, Tensor, TensorCreateInfo, TensorError, TensorParts, MAX_DIMS};

fn parts(shape: &[u32], strides: &[u32], start: u64, size_bytes: u64) -> TensorParts {
    TensorParts {
        addr: 0x1000,
        size_bytes,
        owner: TaskId::INVALID,
        start_offset: start,
        version: 0,
        dtype: DType::Float32,
        manual_dep: false,
        shape: shape.to_vec(),
        strides: strides.to_vec(),
    }
}

/// A 4 × 6 f32 matrix, row-major, in a 96-byte buffer.
fn m() -> Tensor {
    Tensor::contiguous(0x1000, 96, &[4, 6], DType::Float32, TaskId::INVALID).unwrap()
}

fn layout(t: &Tensor) -> (u64, Vec<u32>, Vec<u32>) {
    (t.start_offset(), t.shape().to_vec(), t.strides().to_vec())
}

#[test]
fn from_parts_validates_rank_strides_and_bounds() {
    assert_eq!(
        Tensor::from_parts(&parts(&[], &[], 0, 64)).unwrap_err(),
        TensorError::BadRank(0)
    );
    let six = [1u32; MAX_DIMS + 1];
    assert_eq!(
        Tensor::from_parts(&parts(&six, &six, 0, 64)).unwrap_err(),
        TensorError::BadRank(MAX_DIMS + 1)
    );
    let five = [1u32; MAX_DIMS];
    assert!(
        Tensor::from_parts(&parts(&five, &five, 0, 4)).is_ok(),
        "five dimensions are fine"
    );
    assert_eq!(
        Tensor::from_parts(&parts(&[2, 2], &[2], 0, 64)).unwrap_err(),
        TensorError::RankMismatch { expected: 2, got: 1 }
    );
    assert_eq!(
        Tensor::from_parts(&parts(&[2, 2], &[2, 0], 0, 64)).unwrap_err(),
        TensorError::ZeroStride(1)
    );
    assert_eq!(
        Tensor::from_parts(&parts(&[2, 2], &[0, 1], 0, 64)).unwrap_err(),
        TensorError::ZeroStride(0)
    );
    // The last element may sit on the buffer's last bytes, not one past.
    assert!(Tensor::from_parts(&parts(&[4], &[1], 12, 64)).is_ok());
    assert_eq!(
        Tensor::from_parts(&parts(&[4], &[1], 13, 64)).unwrap_err(),
        TensorError::OutsideBuffer {
            end_byte: 68,
            size_bytes: 64
        }
    );
    let t = Tensor::from_parts(&parts(&[3, 2], &[4, 1], 1, 64)).unwrap();
    assert_eq!(
        Tensor::from_parts(&t.to_parts()).unwrap(),
        t,
        "to_parts round trips"
    );
    assert_eq!(t.buffer_numel(), 16);
    assert_eq!((t.numel(), t.extent_elems()), (6, 10));
    assert!(!t.is_contiguous());
}

/// Hostile shapes whose sums and products pass `u64`: the extent of four dimensions of
/// 2^31 + 1 elements 2^31 apart is 2^64 + 1, which wrapped to 1 and let a view 8 GiB past a
/// 64-byte buffer through; 2^80 elements counted as 0 and a check of them passed having read
/// nothing.
#[test]
fn a_view_whose_extent_or_count_passes_u64_is_refused() {
    let wide = parts(&[1 << 31 | 1; 4], &[1 << 31; 4], 0, 64);
    assert_eq!(
        Tensor::from_parts(&wide).unwrap_err(),
        TensorError::OutsideBuffer {
            end_byte: ((1u128 << 64) + 1) * 4,
            size_bytes: 64
        }
    );
    let many = parts(&[1 << 16; 5], &[1; 5], 0, 4 << 20);
    assert_eq!(
        Tensor::from_parts(&many).unwrap_err(),
        TensorError::TooManyElements
    );
    assert_eq!(
        TensorError::TooManyElements.to_string(),
        "the view has 2^64 elements or more (the product of its shape)"
    );
    // The largest count that fits is still a view (its strides revisit the same elements).
    let most =
        Tensor::from_parts(&parts(&[1 << 16, 1 << 16, 1 << 16, 1 << 15], &[1; 4], 0, 4 << 20)).unwrap();
    assert_eq!((most.numel(), most.extent_elems()), (1 << 63, 229_373));
    // A reshape to a count past u64 differs from every view's count; it is not wrapped to one.
    let v = Tensor::contiguous(0x1000, 64, &[16], DType::Float32, TaskId::INVALID).unwrap();
    assert_eq!(
        v.reshape(&[1 << 16, 1 << 16, 1 << 16, 1 << 16, 16]).unwrap_err(),
        TensorError::BadReshape("the element count differs")
    );
}

#[test]
fn views_stay_inside_their_parent() {
    let v = m().view(&[2, 3], &[2, 3]).unwrap();
    assert_eq!(layout(&v), (15, vec![2, 3], vec![6, 1]));
    assert_eq!(v.extent_elems(), 9);
    assert!(!v.is_contiguous());
    assert!(m().view(&[1, 6], &[3, 0]).unwrap().is_contiguous());
    assert_eq!(
        m().view(&[2, 4], &[2, 3]).unwrap_err(),
        TensorError::OutOfBounds {
            dim: 1,
            end: 7,
            limit: 6
        }
    );
    assert_eq!(
        m().view(&[2], &[0]).unwrap_err(),
        TensorError::RankMismatch { expected: 2, got: 1 }
    );
    assert_eq!(
        m().view(&[2, 2], &[0]).unwrap_err(),
        TensorError::RankMismatch { expected: 2, got: 1 }
    );
    assert_eq!(
        m().view(&[0, 6], &[4, 0]).unwrap().extent_elems(),
        0,
        "an empty view at the end"
    );
}

#[test]
fn slices_with_steps_and_at_their_boundaries() {
    // Columns 1, 3, 5 of every row.
    let s = m().slice(1, 1, 6, 2).unwrap();
    assert_eq!(layout(&s), (1, vec![4, 3], vec![6, 2]));
    assert_eq!(s.element_offset(&[2, 1]), 1 + 12 + 2);
    // A step that does not divide the length rounds up: rows 0 and 3 of 0..4 step 3.
    assert_eq!(
        layout(&m().slice(0, 0, 4, 3).unwrap()),
        (0, vec![2, 6], vec![18, 1])
    );
    // start == end is an empty slice; end == shape is the last valid end.
    let empty = m().slice(0, 2, 2, 1).unwrap();
    assert_eq!((empty.shape()[0], empty.extent_elems()), (0, 0));
    assert_eq!(
        layout(&m().slice(0, 3, 4, 1).unwrap()),
        (18, vec![1, 6], vec![6, 1])
    );
    assert_eq!(
        m().slice(0, 3, 5, 1).unwrap_err(),
        TensorError::OutOfBounds {
            dim: 0,
            end: 5,
            limit: 4
        }
    );
    assert_eq!(m().slice(0, 3, 2, 1).unwrap_err(), TensorError::BadSlice);
    assert_eq!(m().slice(0, 0, 2, 0).unwrap_err(), TensorError::BadSlice);
    assert_eq!(
        m().slice(2, 0, 1, 1).unwrap_err(),
        TensorError::NoSuchDim { dim: 2, ndims: 2 }
    );
    assert_eq!(m().slice(0, 0, 4, u32::MAX).unwrap_err(), TensorError::TooLarge);
}

#[test]
fn reshape_and_transpose() {
    let r = m().reshape(&[2, 3, 4]).unwrap();
    assert_eq!(layout(&r), (0, vec![2, 3, 4], vec![12, 4, 1]));
    assert!(r.is_contiguous());
    assert_eq!(m().reshape(&[]).unwrap_err(), TensorError::BadRank(0));
    assert_eq!(
        m().reshape(&[1; MAX_DIMS + 1]).unwrap_err(),
        TensorError::BadRank(MAX_DIMS + 1)
    );
    assert_eq!(m().reshape(&[1, 1, 1, 4, 6]).unwrap().ndims(), MAX_DIMS);
    assert_eq!(
        m().reshape(&[5, 5]).unwrap_err(),
        TensorError::BadReshape("the element count differs")
    );
    assert_eq!(
        m().slice(1, 0, 6, 2).unwrap().reshape(&[12]).unwrap_err(),
        TensorError::BadReshape("the view is not contiguous")
    );
    let t = m().transpose(0, 1).unwrap();
    assert_eq!(layout(&t), (0, vec![6, 4], vec![1, 6]));
    assert_eq!(t.extent_elems(), 24);
    assert!(!t.is_contiguous());
    assert_eq!(m().transpose(1, 1).unwrap(), m());
    assert_eq!(
        m().transpose(0, 2).unwrap_err(),
        TensorError::NoSuchDim { dim: 2, ndims: 2 }
    );
    assert_eq!(
        m().transpose(5, 0).unwrap_err(),
        TensorError::NoSuchDim { dim: 5, ndims: 2 }
    );
}

#[test]
fn create_info_sizes_and_materialization() {
    let ci = TensorCreateInfo::new(&[3, 5], DType::Float16).unwrap();
    assert_eq!((ci.dtype(), ci.shape()), (DType::Float16, &[3, 5][..]));
    assert_eq!(ci.buffer_size_bytes(), 1024, "outputs are padded to 1024 bytes");
    let big = TensorCreateInfo::new(&[600], DType::Float32).unwrap();
    assert_eq!(big.buffer_size_bytes(), 3072);
    // An empty output still takes an aligned slot of the heap: every allocation has its own
    // address (`../shared/DECISIONS.md`), where it shared the next allocation's.
    let empty = TensorCreateInfo::new(&[0], DType::Float32).unwrap();
    assert_eq!(empty.buffer_size_bytes(), 1024);
    let t = ci.with_manual_dep(true).materialize(0x8000, TaskId::new(1, 2));
    assert_eq!(
        (t.addr(), t.owner(), t.manual_dep()),
        (0x8000, TaskId::new(1, 2), true)
    );
    assert_eq!(layout(&t), (0, vec![3, 5], vec![5, 1]));
    assert_eq!(ci.with_initial_value(1.5).initial_value(), Some(1.5));
    assert_eq!(ci.initial_value(), None);
    assert_eq!(
        TensorCreateInfo::new(&[], DType::Float32).unwrap_err(),
        TensorError::BadRank(0)
    );
}
