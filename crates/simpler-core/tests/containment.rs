//! `containment::contains` against a brute-force oracle: the byte sets of two random views of
//! one buffer (any rank, shape, strides, offsets and dtypes, overlapping strides included).

use std::collections::HashSet;

use proptest::prelude::*;
use simpler_core::containment::contains;
use simpler_core::{DType, TaskId, Tensor, TensorParts};

const DTYPES: [DType; 4] = [DType::Int8, DType::Float16, DType::Float32, DType::Int64];
const BUFFER: u64 = 1 << 12;

fn bytes(t: &Tensor) -> HashSet<u64> {
    let es = t.dtype().size();
    let mut out = HashSet::new();
    let (shape, strides) = (t.shape(), t.strides());
    if shape.contains(&0) {
        return out;
    }
    let mut idx = vec![0u32; shape.len()];
    loop {
        let off = t.start_offset()
            + idx
                .iter()
                .zip(strides)
                .map(|(&i, &s)| u64::from(i) * u64::from(s))
                .sum::<u64>();
        for b in 0..es {
            out.insert(off * es + b);
        }
        let mut k = shape.len();
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

fn view() -> impl Strategy<Value = Option<Tensor>> {
    (
        0..DTYPES.len(),
        prop::collection::vec((0u32..5, 1u32..9), 1..4),
        0u64..24,
    )
        .prop_map(|(d, dims, start)| {
            Tensor::from_parts(&TensorParts {
                addr: 0x10_0000,
                size_bytes: BUFFER,
                owner: TaskId::INVALID,
                start_offset: start,
                version: 0,
                dtype: DTYPES[d],
                manual_dep: false,
                shape: dims.iter().map(|d| d.0).collect(),
                strides: dims.iter().map(|d| d.1).collect(),
            })
            .ok()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]
    #[test]
    fn contains_is_byte_set_containment(outer in view(), inner in view()) {
        let (Some(outer), Some(inner)) = (outer, inner) else { return Ok(()) };
        let (o, i) = (bytes(&outer), bytes(&inner));
        prop_assert_eq!(contains(&outer, &inner), i.is_subset(&o), "outer {:?}\ninner {:?}", outer, inner);
    }

    /// Views derived from a whole write (reshape, transpose, steps, sub-boxes) are covered.
    #[test]
    fn derived_views_of_a_write_are_covered(rows in 1u32..9, cols in 1u32..9, step in 1u32..4, a in 0usize..2) {
        let bytes = u64::from(rows * cols) * 4;
        let w = Tensor::contiguous(0x2000, bytes, &[rows, cols], DType::Float32, TaskId::INVALID).unwrap();
        let stepped = w.slice(a, 0, if a == 0 { rows } else { cols }, step).unwrap();
        prop_assert!(contains(&w, &stepped));
        prop_assert!(contains(&w, &w.transpose(0, 1).unwrap()));
        prop_assert!(contains(&w, &w.reshape(&[rows * cols]).unwrap()));
        prop_assert!(contains(&stepped, &stepped.transpose(0, 1).unwrap()));
    }
}
