//! Element-set containment of two views of one buffer: does every byte one view addresses lie
//! inside the bytes another view addresses, whatever their ranks, strides, offsets, steps and
//! dtypes? This is what deps.json's `overlap: "covered"` means (the producer's view contains
//! the consumer's); the tensor map's own box test ([`check_overlap`](crate::check_overlap))
//! answers a narrower question for same-layout views and keeps its meaning.
//!
//! A view is normalized to *blocks*: dimensions of size 1 are dropped, dimensions are sorted
//! by stride and merged where one continues the other (`stride = inner stride × inner size`),
//! and an innermost dimension whose stride is the element size becomes one contiguous block
//! (two views of the same geometry contain each other at once, without blocks). Then:
//!
//! 1. byte extents: the inner view's first and last bytes must lie inside the outer's extent;
//! 2. a dense outer view (one block) contains everything inside its extent: the common case of
//!    a whole-buffer or contiguous write read back through any view, O(rank);
//! 3. otherwise, when the outer view's levels nest (each stride beyond the span of the
//!    levels below it, so its blocks are disjoint and ordered), each of the inner view's blocks
//!    is located by a greedy mixed-radix division in O(rank): exact;
//! 4. an outer view whose levels do not nest (interleaved or self-overlapping strides) is
//!    expanded into its sorted, merged blocks, up to [`MAX_EXPANDED_BLOCKS`], and searched.
//!
//! Past [`MAX_EXPANDED_BLOCKS`] outer blocks (case 4) or [`MAX_INNER_BLOCKS`] inner blocks
//! (cases 3 and 4) the answer is `false`: a conservative "not shown covered", never a wrong
//! "covered".

use crate::tensor::dims_eq;
use crate::{Tensor, MAX_DIMS};

/// The most blocks a non-nesting outer view is expanded into.
pub const MAX_EXPANDED_BLOCKS: u64 = 1 << 22;
/// The most blocks of the inner view checked one by one.
pub const MAX_INNER_BLOCKS: u64 = 1 << 24;

/// One level of a normalized view: `count` repetitions `stride` bytes apart.
#[derive(Clone, Copy, Debug)]
struct Level {
    count: u64,
    stride: u64,
}

/// A view as byte blocks: `block` contiguous bytes at `base + Σ i·stride` for every index.
#[derive(Clone, Debug)]
struct Blocks {
    base: u64,
    block: u64,
    /// Ascending by stride.
    levels: [Level; MAX_DIMS],
    n: usize,
}

impl Blocks {
    /// `None` for an empty view.
    fn of(t: &Tensor) -> Option<Blocks> {
        let es = t.dtype().size();
        let mut dims: Vec<Level> = Vec::with_capacity(MAX_DIMS);
        for (&count, &stride) in t.shape().iter().zip(t.strides()) {
            match count {
                0 => return None,
                1 => {}
                _ => dims.push(Level {
                    count: u64::from(count),
                    stride: u64::from(stride) * es,
                }),
            }
        }
        dims.sort_by_key(|l| l.stride);
        let mut block = es;
        let mut levels = [Level { count: 0, stride: 0 }; MAX_DIMS];
        let mut n = 0;
        for l in dims {
            if n == 0 && l.stride == block {
                block *= l.count; // contiguous innermost run
            } else if n > 0 && l.stride == levels[n - 1].stride * levels[n - 1].count {
                levels[n - 1].count *= l.count; // continues the level below
            } else {
                levels[n] = l;
                n += 1;
            }
        }
        Some(Blocks {
            base: t.start_offset() * es,
            block,
            levels,
            n,
        })
    }

    fn levels(&self) -> &[Level] {
        &self.levels[..self.n]
    }

    /// One past the last byte.
    fn end(&self) -> u64 {
        self.base
            + self.block
            + self
                .levels()
                .iter()
                .map(|l| (l.count - 1) * l.stride)
                .sum::<u64>()
    }

    fn block_count(&self) -> u64 {
        self.levels().iter().map(|l| l.count).product()
    }

    /// True when blocks never overlap or touch and are ordered by index: each level's stride
    /// exceeds the span of everything below it. (A stride equal to that span makes the last
    /// block of one repetition touch the first of the next: a contiguous run made of two
    /// blocks, which an inner block may straddle, so the one-block search would miss it; such
    /// a view is expanded and its touching blocks merged instead.)
    fn nests(&self) -> bool {
        let mut span = self.block;
        for l in self.levels() {
            if l.stride <= span {
                return false;
            }
            span += l.stride * (l.count - 1);
        }
        true
    }

    /// Visits every block start in index order (not sorted when levels do not nest); stops
    /// and returns false as soon as `f` does.
    fn for_each_block(&self, mut f: impl FnMut(u64) -> bool) -> bool {
        let levels = self.levels();
        let mut idx = [0u64; MAX_DIMS];
        loop {
            let start = self.base + levels.iter().zip(&idx).map(|(l, &i)| i * l.stride).sum::<u64>();
            if !f(start) {
                return false;
            }
            let mut k = 0;
            loop {
                if k == levels.len() {
                    return true;
                }
                idx[k] += 1;
                if idx[k] < levels[k].count {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
        }
    }

    /// For a nesting view: whether `[a, a + len)` lies inside one of its blocks.
    fn nested_contains(&self, a: u64, len: u64) -> bool {
        let Some(mut r) = a.checked_sub(self.base) else {
            return false;
        };
        for l in self.levels().iter().rev() {
            r -= (r / l.stride).min(l.count - 1) * l.stride;
        }
        r + len <= self.block
    }
}

/// True when every byte `inner` addresses is also addressed by `outer` (both views of the same
/// buffer; addresses and versions are the caller's business). An empty `inner` is contained in
/// anything; nothing non-empty is contained in an empty `outer`. See the module docs for the
/// method and its bounds.
pub fn contains(outer: &Tensor, inner: &Tensor) -> bool {
    if same_elements(outer, inner) {
        // The common case of a tensor-map hit: an INOUT tile read back as it was written.
        return true;
    }
    let Some(i) = Blocks::of(inner) else {
        return true;
    };
    let Some(o) = Blocks::of(outer) else {
        return false;
    };
    if i.base < o.base || i.end() > o.end() {
        return false;
    }
    if o.n == 0 {
        return true; // dense: one block spanning the whole extent
    }
    if i.block_count() > MAX_INNER_BLOCKS {
        return false;
    }
    if o.nests() {
        return i.for_each_block(|a| o.nested_contains(a, i.block));
    }
    if o.block_count() > MAX_EXPANDED_BLOCKS {
        return false;
    }
    let mut runs: Vec<(u64, u64)> = Vec::with_capacity(o.block_count() as usize);
    o.for_each_block(|s| {
        runs.push((s, s + o.block));
        true
    });
    runs.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(runs.len());
    for (s, e) in runs {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    i.for_each_block(|a| {
        let k = merged.partition_point(|&(s, _)| s <= a);
        k > 0 && a + i.block <= merged[k - 1].1
    })
}

/// True when `a` and `b` address the same bytes by construction: the same start, element type,
/// shape and strides (every view contains itself, the empty one included).
fn same_elements(a: &Tensor, b: &Tensor) -> bool {
    a.start_offset() == b.start_offset()
        && a.dtype() == b.dtype()
        && dims_eq(a.shape(), b.shape())
        && dims_eq(a.strides(), b.strides())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, TaskId};

    fn whole(shape: &[u32]) -> Tensor {
        let bytes = shape.iter().map(|&s| u64::from(s)).product::<u64>() * 4;
        Tensor::contiguous(0x1000, bytes, shape, DType::Float32, TaskId::INVALID).unwrap()
    }

    #[test]
    fn a_whole_write_covers_every_view_of_it() {
        let w = whole(&[8, 16]);
        assert!(contains(&w, &w.transpose(0, 1).unwrap()));
        assert!(contains(&w, &w.reshape(&[4, 32]).unwrap()));
        assert!(contains(&w, &w.slice(1, 1, 15, 3).unwrap()));
        assert!(contains(&w, &w.view(&[2, 2], &[3, 5]).unwrap()));
    }

    #[test]
    fn every_view_contains_itself() {
        let w = whole(&[8, 16]);
        for v in [
            w,
            w.transpose(0, 1).unwrap(),
            w.slice(1, 1, 15, 3).unwrap(),
            w.view(&[2, 2], &[3, 5]).unwrap(),
        ] {
            assert!(contains(&v, &v), "{v:?}");
        }
    }

    #[test]
    fn a_stepped_write_covers_only_its_own_elements() {
        let w = whole(&[8, 16]);
        let even = w.slice(1, 0, 16, 2).unwrap();
        assert!(contains(&even, &even.slice(0, 2, 6, 1).unwrap()));
        assert!(contains(&even, &w.slice(1, 4, 16, 4).unwrap()));
        assert!(!contains(&even, &w.slice(1, 1, 16, 2).unwrap()));
        assert!(!contains(&even, &w.view(&[1, 2], &[0, 0]).unwrap()));
        // Rows 0..4 do not contain row 4.
        let top = w.view(&[4, 16], &[0, 0]).unwrap();
        assert!(!contains(&top, &w.view(&[1, 16], &[4, 0]).unwrap()));
        assert!(contains(&top, &w.view(&[1, 16], &[3, 0]).unwrap()));
    }
}
