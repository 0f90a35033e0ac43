//! Property test: the overlap decision against a brute-force element-by-element oracle on
//! random strided views of one buffer.

use std::collections::BTreeSet;

use proptest::prelude::*;
use simpler_core::{check_overlap as check, DType, Overlap, TaskId, Tensor};

/// Element offsets a view touches.
fn elements(t: &Tensor) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    let shape = t.shape().to_vec();
    let n: u64 = shape.iter().map(|&s| u64::from(s)).product();
    let mut idx = vec![0u32; shape.len()];
    for _ in 0..n {
        out.insert(t.element_offset(&idx));
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

/// (shape, offsets, optional (dim, step) slice, transpose?) of a view.
type ViewSpec = (Vec<u32>, Vec<u32>, Option<(usize, u32)>, bool);

/// A random view of a 3-d base [d0, d1, d2]: a sub-box, optionally sliced with a step,
/// optionally transposed.
fn view_strategy() -> impl Strategy<Value = ViewSpec> {
    (
        prop::collection::vec(1u32..5, 3),
        prop::collection::vec(0u32..5, 3),
        prop::option::of((0usize..3, 1u32..3)),
        any::<bool>(),
    )
}

fn make(base: &Tensor, (shape, off, step, tr): &ViewSpec) -> Tensor {
    let dims = base.shape();
    let off: Vec<u32> = off.iter().zip(dims).map(|(&o, &d)| o % d).collect();
    let shape: Vec<u32> = shape
        .iter()
        .zip(dims)
        .zip(&off)
        .map(|((&s, &d), &o)| s.min(d - o))
        .collect();
    let mut v = base.view(&shape, &off).unwrap();
    if let Some((dim, st)) = *step {
        v = v.slice(dim, 0, v.shape()[dim], st).unwrap();
    }
    if *tr {
        v = v.transpose(0, 2).unwrap();
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn overlap_matches_brute_force(a in view_strategy(), b in view_strategy()) {
        let base = Tensor::contiguous(0x1000, 5 * 6 * 7 * 4, &[5, 6, 7], DType::Float32, TaskId::INVALID).unwrap();
        let (p, c) = (make(&base, &a), make(&base, &b));
        let (pe, ce) = (elements(&p), elements(&c));
        let disjoint = pe.is_disjoint(&ce);
        let consumer_covers = pe.is_subset(&ce);
        match check(&p, &c) {
            // Never a missed dependency.
            Overlap::None => prop_assert!(disjoint, "said none, but they share elements"),
            // COVERED is exact: the consumer's elements contain the producer's.
            Overlap::Covered => prop_assert!(consumer_covers && !disjoint),
            // OTHER may be conservative, but never for views the L2 test can decide.
            Overlap::Other => {
                let decidable = p.strides() == c.strides() && !a.3 && !b.3 && a.2.is_none() && b.2.is_none();
                if decidable {
                    prop_assert!(!disjoint && !consumer_covers, "decidable views must be exact");
                }
            }
        }
    }
}
