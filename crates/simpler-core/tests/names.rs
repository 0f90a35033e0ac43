//! What users and artifacts read: dtype names and classes, task-id and error messages.

use simpler_core::{DType, TaskId, Tensor, TensorError, MAX_DIMS};

#[test]
fn dtypes_print_their_names_and_know_their_class() {
    for d in DType::ALL {
        assert_eq!(d.to_string(), d.name());
        assert_eq!(DType::from_name(&d.name().to_lowercase()), Some(d));
        let float = matches!(d, DType::Float32 | DType::Float16 | DType::BFloat16);
        assert_eq!(d.is_float(), float, "{d}");
    }
}

#[test]
fn task_ids_debug_print_their_ring_and_local_or_invalid() {
    assert_eq!(format!("{:?}", TaskId::new(2, 7)), "TaskId(2, 7)");
    assert_eq!(format!("{:?}", TaskId::INVALID), "TaskId(invalid)");
    assert_eq!(TaskId::new(2, 7).to_string(), "(2, 7)");
}

#[test]
fn tensor_errors_say_what_is_wrong() {
    let cases = [
        (TensorError::BadRank(6), "a tensor has 1 to 5 dimensions, got 6"),
        (
            TensorError::RankMismatch { expected: 2, got: 3 },
            "expected 2 values (one per dimension), got 3",
        ),
        (
            TensorError::NoSuchDim { dim: 5, ndims: 2 },
            "dimension 5 does not exist: the tensor has 2 (0 to 1)",
        ),
        (
            TensorError::ZeroStride(1),
            "stride of dimension 1 is 0; strides must be > 0",
        ),
        (
            TensorError::OutOfBounds {
                dim: 0,
                end: 9,
                limit: 8,
            },
            "dimension 0: index range ends at 9, past the parent's extent 8",
        ),
        (TensorError::BadSlice, "slice needs start <= end and step >= 1"),
        (
            TensorError::BadReshape("the element count differs"),
            "cannot reshape: the element count differs",
        ),
        (
            TensorError::OutsideBuffer {
                end_byte: 68,
                size_bytes: 64,
            },
            "view reaches byte 68, past the end of its 64-byte buffer",
        ),
        (TensorError::TooLarge, "shape or stride does not fit in 32 bits"),
    ];
    for (e, msg) in cases {
        assert_eq!(e.to_string(), msg);
    }
}

#[test]
fn contiguous_tensors_take_one_to_five_dimensions() {
    let five = [1u32; MAX_DIMS];
    assert!(Tensor::contiguous(0x1000, 4, &five, DType::Float32, TaskId::INVALID).is_ok());
    let six = [1u32; MAX_DIMS + 1];
    assert_eq!(
        Tensor::contiguous(0x1000, 4, &six, DType::Float32, TaskId::INVALID).unwrap_err(),
        TensorError::BadRank(MAX_DIMS + 1)
    );
    assert_eq!(
        Tensor::contiguous(0x1000, 4, &[], DType::Float32, TaskId::INVALID).unwrap_err(),
        TensorError::BadRank(0)
    );
}

#[test]
fn a_tensor_debug_prints_its_view_not_its_padding() {
    let t = Tensor::contiguous(0x1000, 96, &[4, 6], DType::Float32, TaskId::new(1, 2))
        .unwrap()
        .view(&[2, 3], &[1, 2])
        .unwrap();
    assert_eq!(
        format!("{t:?}"),
        "Tensor { addr: 0x1000, size_bytes: 96, owner: TaskId(1, 2), start_offset: 8, version: 0, \
         dtype: Float32, manual_dep: false, shape: [2, 3], strides: [6, 1] }"
    );
}
