//! Property: a tensor map that moves busy buffers into ordered "hot" indexes and answers a
//! lookup of the last view it registered from its last-writer memo gives exactly the same
//! lookups (producers, overlaps, order, removals) as one that only walks bucket chains; and a
//! map that packs its producer views (a host-built graph's) gives the same lookups and the same
//! views back as one that keeps them whole.

use proptest::prelude::*;
use simpler_core::{DType, Overlap, TaskId, Tensor, TensorMap, TensorMapConfig};

#[derive(Clone, Debug)]
enum Op {
    /// Insert a view written by the next task.
    Insert { view: View, other_buffer: bool },
    /// Look a view up (INOUT removes covered entries).
    Lookup {
        view: View,
        inout: bool,
        other_buffer: bool,
    },
    /// Retire every task below `fraction`% of those inserted so far, then clean up.
    Retire { fraction: u32 },
    /// The last registered view again (what the last-writer memo answers), or the last view
    /// a submit updated in place (`swept`: which it may have registered instead of another):
    /// a lookup of it, or a submit that updates it in place (an accumulator's next step).
    Again {
        swept: bool,
        submit: bool,
        inout: bool,
        read: View,
    },
    /// One submit that updates two views in place, the one registered before the last and the
    /// last one, in either order: two INOUT lookups, then the two registrations (in the same
    /// order, as the runtime makes them, or the other).
    TwoInOut { last_first: bool, reversed: bool },
    /// One submit of the next task, as the runtime makes it: an INOUT lookup of a view, an
    /// INPUT lookup of another (a later argument, which must not see what the first
    /// removed), then the registration of the first view, or of another.
    Submit {
        view: View,
        read: View,
        registers: Option<View>,
        other_buffer: bool,
    },
}

/// (first row, rows, first column, columns, version, layout).
type View = (u32, u32, u32, u32, i32, u8);

fn view_s() -> impl Strategy<Value = View> {
    // Layout 0 (the plain 2-D box) most often, so the hot index's grid fills up.
    let layout = prop_oneof![6 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8), 1 => Just(3u8), 1 => Just(4u8)];
    // Empty views too (no rows or no columns): found by a review, an empty box at offset 0
    // sent the hot index's bucket walk to u64::MAX.
    let extent = prop_oneof![12 => 1u32..17, 1 => Just(0u32)];
    (0u32..16, extent.clone(), 0u32..16, extent, 0i32..3, layout)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (view_s(), prop::bool::weighted(0.1)).prop_map(|(view, other_buffer)| Op::Insert { view, other_buffer }),
        4 => (view_s(), any::<bool>(), prop::bool::weighted(0.1))
            .prop_map(|(view, inout, other_buffer)| Op::Lookup { view, inout, other_buffer }),
        1 => (0u32..100).prop_map(|fraction| Op::Retire { fraction }),
        4 => (view_s(), view_s(), prop::option::weighted(0.2, view_s()), prop::bool::weighted(0.1))
            .prop_map(|(view, read, registers, other_buffer)| Op::Submit { view, read, registers, other_buffer }),
        4 => (prop::bool::weighted(0.3), any::<bool>(), any::<bool>(), view_s())
            .prop_map(|(swept, submit, inout, read)| Op::Again { swept, submit, inout, read }),
        2 => (any::<bool>(), any::<bool>()).prop_map(|(last_first, reversed)| Op::TwoInOut { last_first, reversed }),
    ]
}

/// A view of `base` (16×16 f32) in one of five layouts: a row-major box, the box transposed
/// (other strides), a 1-D range of the flattened buffer (another rank), a box of every other
/// column (innermost stride 2: the box test cannot place it), the box read as i32 (another
/// dtype at the same address).
fn make(base: &Tensor, (r0, rows, c0, cols, version, layout): View) -> Tensor {
    let rows = rows.min(16 - r0);
    let cols = cols.min(16 - c0);
    let boxed = base.view(&[rows, cols], &[r0, c0]).unwrap();
    let t = match layout {
        0 => boxed,
        1 => boxed.transpose(0, 1).unwrap(),
        2 => {
            let start = r0 * 16 + c0;
            let len = (rows * cols).min(256 - start);
            base.reshape(&[256]).unwrap().view(&[len], &[start]).unwrap()
        }
        3 => boxed.slice(1, 0, cols, 2).unwrap(),
        _ => {
            let mut p = boxed.to_parts();
            p.dtype = DType::Int32;
            Tensor::from_parts(&p).unwrap()
        }
    };
    t.with_version(version)
}

/// The buffer `b`'s views carry an owner task (as a runtime-allocated output's would), so a
/// packed map stores them whole.
fn owned(t: Tensor, other_buffer: bool) -> Tensor {
    if other_buffer {
        t.with_owner(TaskId::new(1, 3))
    } else {
        t
    }
}

/// The map under test (hot indexes past `hot_threshold` entries, the last-writer memo) or,
/// with `usize::MAX`, the reference: bucket chains only, no memo.
fn map(hot_threshold: usize, bounded: bool) -> TensorMap {
    let mut cfg = if bounded {
        TensorMapConfig::bounded(1 << 16, [1 << 12; 4])
    } else {
        TensorMapConfig::unbounded()
    };
    cfg.hot_threshold = hot_threshold;
    cfg.last_writer_memo = hot_threshold != usize::MAX;
    cfg.buckets = 4; // force different buffers to share buckets
    TensorMap::new(cfg)
}

/// What a lookup visits: each producer, its view and the overlap, in visiting order.
type Hits = Vec<(TaskId, Tensor, Overlap)>;

/// Appends what `m` visits for a lookup of `t` (INOUT when `inout`) to `got`.
fn look(m: &mut TensorMap, t: &Tensor, inout: bool, got: &mut Hits) {
    m.lookup::<()>(t, inout, |p, v, o| {
        got.push((p, *v, o));
        Ok(())
    })
    .unwrap();
}

/// One submit of task `id` on `m`, as the runtime makes it: the lookups `(view, inout)` in
/// argument order, then the registrations in order. What the lookups visited, and the
/// entries in use before and after the registrations.
fn submit(
    m: &mut TensorMap,
    id: TaskId,
    lookups: &[(&Tensor, bool)],
    registers: &[&Tensor],
) -> (Hits, usize, usize) {
    m.sync(id);
    let mut got = Vec::new();
    for &(t, inout) in lookups {
        look(m, t, inout, &mut got);
    }
    let used = m.in_use();
    for t in registers {
        m.insert(t, id).unwrap();
    }
    (got, used, m.in_use())
}

/// The maps compared: the map under test and the reference, and the packed map when nothing
/// retires (it never does).
fn maps<'m>(
    hot: &'m mut TensorMap,
    plain: &'m mut TensorMap,
    packed: &'m mut TensorMap,
    bounded: bool,
) -> Vec<&'m mut TensorMap> {
    let mut maps = vec![hot, plain];
    if !bounded {
        maps.push(packed);
    }
    maps
}

/// What each map showed, in `maps`' order, is the reference's.
fn agree<T: PartialEq + std::fmt::Debug>(seen: &[T]) -> Result<(), TestCaseError> {
    prop_assert_eq!(&seen[0], &seen[1]);
    if let Some(p) = seen.get(2) {
        prop_assert_eq!(p, &seen[1]);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn hot_indexes_change_nothing(ops in prop::collection::vec(op(), 1..400), bounded in any::<bool>()) {
        let a = Tensor::contiguous(0x10_0000, 16 * 16 * 4, &[16, 16], DType::Float32, TaskId::INVALID).unwrap();
        let b = Tensor::contiguous(0x20_0000, 16 * 16 * 4, &[16, 16], DType::Float32, TaskId::INVALID).unwrap();
        let (mut hot, mut plain) = (map(2, bounded), map(usize::MAX, bounded));
        // Never retires: compared with `plain` only when that does not either.
        let mut packed = {
            let mut cfg = TensorMapConfig::bounded_never_retiring(1 << 16);
            cfg.hot_threshold = 2;
            cfg.buckets = 4;
            TensorMap::new(cfg)
        };
        let mut next = 0u32;
        // The view last inserted or registered, and its buffer, and the view the last submit
        // looked up as INOUT (`Op::Again`).
        let mut last: Option<(Tensor, bool)> = None;
        let mut last_inout: Option<(Tensor, bool)> = None;
        // The view registered before `last` (`Op::TwoInOut`).
        let mut before_last: Option<(Tensor, bool)> = None;
        for op in ops {
            match op {
                Op::Insert { view, other_buffer } => {
                    let t = owned(make(if other_buffer { &b } else { &a }, view), other_buffer);
                    let id = TaskId::new(0, next);
                    next += 1;
                    hot.sync(id);
                    plain.sync(id);
                    prop_assert_eq!(hot.insert(&t, id), plain.insert(&t, id));
                    if !bounded {
                        prop_assert_eq!(packed.insert(&t, id), Ok(()));
                    }
                    (before_last, last) = (last, Some((t, other_buffer)));
                }
                Op::TwoInOut { last_first, reversed } => {
                    let (Some(x), Some(y)) = (before_last, last) else { continue };
                    let ((t1, b1), (t2, b2)) = if last_first { (y, x) } else { (x, y) };
                    let id = TaskId::new(0, next);
                    next += 1;
                    let order = if reversed { [&t2, &t1] } else { [&t1, &t2] };
                    let mut seen = Vec::new();
                    for m in maps(&mut hot, &mut plain, &mut packed, bounded) {
                        let (got, used, now) = submit(m, id, &[(&t1, true), (&t2, true)], &order);
                        let mut after = Vec::new();
                        for t in [&t1, &t2] {
                            look(m, t, false, &mut after);
                        }
                        seen.push((got, used, now, after));
                    }
                    agree(&seen)?;
                    (before_last, last, last_inout) = (Some((t1, b1)), Some((t2, b2)), Some((t2, b2)));
                }
                Op::Again { swept, submit: step, inout, read } => {
                    let Some((t, other_buffer)) = (if swept { last_inout } else { last }) else {
                        continue;
                    };
                    let mut seen = Vec::new();
                    if step {
                        // The accumulator's next step: an INOUT lookup of the view, a read (of
                        // the same view again when `inout`: a task that reads its accumulator
                        // twice), the registration of the same view.
                        let r = match inout {
                            true => t,
                            false => owned(make(if other_buffer { &b } else { &a }, read), other_buffer),
                        };
                        let id = TaskId::new(0, next);
                        next += 1;
                        for m in maps(&mut hot, &mut plain, &mut packed, bounded) {
                            seen.push(submit(m, id, &[(&t, true), (&r, false)], &[&t]));
                        }
                        before_last = last;
                        (last, last_inout) = (Some((t, other_buffer)), Some((t, other_buffer)));
                    } else {
                        for m in maps(&mut hot, &mut plain, &mut packed, bounded) {
                            let mut got = Vec::new();
                            look(m, &t, inout, &mut got);
                            seen.push((got, m.in_use(), m.in_use()));
                        }
                    }
                    agree(&seen)?;
                }
                Op::Lookup { view, inout, other_buffer } => {
                    let t = owned(make(if other_buffer { &b } else { &a }, view), other_buffer);
                    let mut seen = Vec::new();
                    for m in maps(&mut hot, &mut plain, &mut packed, bounded) {
                        let mut got = Vec::new();
                        look(m, &t, inout, &mut got);
                        seen.push(got);
                    }
                    agree(&seen)?;
                }
                Op::Submit { view, read, registers, other_buffer } => {
                    let base = if other_buffer { &b } else { &a };
                    let t = owned(make(base, view), other_buffer);
                    let r = owned(make(base, read), other_buffer);
                    let w = registers.map_or(t, |v| owned(make(base, v), other_buffer));
                    let id = TaskId::new(0, next);
                    next += 1;
                    let mut seen = Vec::new();
                    for m in maps(&mut hot, &mut plain, &mut packed, bounded) {
                        seen.push(submit(m, id, &[(&t, true), (&r, false)], &[&w]));
                    }
                    agree(&seen)?;
                    before_last = last;
                    (last, last_inout) = (Some((w, other_buffer)), Some((t, other_buffer)));
                }
                Op::Retire { fraction } => {
                    if bounded {
                        let w = next * fraction / 100;
                        hot.set_watermark(0, w);
                        plain.set_watermark(0, w);
                        prop_assert_eq!(hot.reclaim_retired(), plain.reclaim_retired());
                    }
                }
            }
            prop_assert_eq!(hot.in_use(), plain.in_use());
            if !bounded {
                prop_assert_eq!(packed.in_use(), plain.in_use());
            }
        }
    }
}
