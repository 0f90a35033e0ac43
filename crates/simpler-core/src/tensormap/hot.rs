//! The index of a "hot" buffer: one base address with many live entries (a tiled GEMM's C, a
//! KV cache written slice by slice). Its entries leave the bucket chain for two ordered maps,
//! so a lookup visits only entries that can overlap the consumer, instead of every entry on
//! the buffer:
//!
//! - the **grid**: entries of the buffer's first placeable layout (dtype and strides that the
//!   L2 box test can place, see `overlap::box_position`), keyed by their box's offsets in the
//!   two outer dimensions. A consumer of that layout visits only the entries whose boxes meet
//!   its own in both (a skip scan: one seek per outer offset in range), which is what makes a
//!   tile of a 2-D buffer cost O(log n) instead of a visit of its whole tile row;
//! - the **loose** entries (any other layout), keyed by start offset, visited when their
//!   element range can reach the consumer's.
//!
//! Both are conservative: every entry the overlap test would report is a candidate (the
//! skipped grid entries are exactly those the box test answers `None` for), and the caller
//! runs the test on each. Visiting order is restored by the caller (newest first).

use std::collections::BTreeMap;

use super::overlap::{box_position, whole_outer_rows};
use crate::{DType, Tensor, MAX_DIMS};

/// Ordered entries of one hot address.
#[derive(Debug)]
pub(super) struct HotIndex {
    /// Entries outside the grid: (start offset, insert sequence) → entry index.
    loose: BTreeMap<(u64, u64), u32>,
    /// Largest element extent ever inserted into `loose` (never lowered: a conservative bound).
    loose_max_extent: u64,
    /// Entries of the grid's layout; its layout is fixed for the index's lifetime.
    grid: Option<Grid>,
    /// Smallest version ever inserted (a consumer with a newer version overlaps everything).
    min_version: i32,
}

/// Entries of one layout, keyed by their box's outer offsets.
#[derive(Debug)]
struct Grid {
    dtype: DType,
    strides: [u32; MAX_DIMS],
    ndims: usize,
    /// (offset in dim 0, offset in dim 1 (0 for 1-D), insert sequence) → entry index.
    cells: BTreeMap<(u64, u64, u64), u32>,
    /// Largest shape ever inserted in dims 0 and 1 (never lowered).
    max_shape: [u64; 2],
}

impl Grid {
    fn holds(&self, t: &Tensor) -> bool {
        t.dtype() == self.dtype && t.strides() == &self.strides[..self.ndims]
    }
}

/// The grid key of a placed view: its offsets and sizes in the two outer dimensions.
fn outer(pos: &[u64; MAX_DIMS], t: &Tensor) -> ([u64; 2], [u64; 2]) {
    let shape = |d: usize| t.shape().get(d).map_or(1, |&s| u64::from(s));
    ([pos[0], pos[1]], [shape(0), shape(1)])
}

impl HotIndex {
    pub fn new() -> HotIndex {
        HotIndex {
            loose: BTreeMap::new(),
            loose_max_extent: 0,
            grid: None,
            min_version: i32::MAX,
        }
    }

    pub fn insert(&mut self, t: &Tensor, seq: u64, entry: u32) {
        self.min_version = self.min_version.min(t.version());
        if let Some(pos) = box_position(t) {
            let grid = self.grid.get_or_insert_with(|| {
                let mut strides = [0; MAX_DIMS];
                strides[..t.ndims()].copy_from_slice(t.strides());
                Grid {
                    dtype: t.dtype(),
                    strides,
                    ndims: t.ndims(),
                    cells: BTreeMap::new(),
                    max_shape: [0; 2],
                }
            });
            if grid.holds(t) {
                let (off, shape) = outer(&pos, t);
                grid.cells.insert((off[0], off[1], seq), entry);
                grid.max_shape[0] = grid.max_shape[0].max(shape[0]);
                grid.max_shape[1] = grid.max_shape[1].max(shape[1]);
                return;
            }
        }
        self.loose.insert((t.start_offset(), seq), entry);
        self.loose_max_extent = self.loose_max_extent.max(t.extent_elems());
    }

    /// Removes the entry inserted as `t` with `seq` (found where [`HotIndex::insert`] put it).
    pub fn remove(&mut self, t: &Tensor, seq: u64) {
        if let Some(grid) = self.grid.as_mut().filter(|g| g.holds(t)) {
            if let Some(pos) = box_position(t) {
                let (off, _) = outer(&pos, t);
                grid.cells.remove(&(off[0], off[1], seq));
                return;
            }
        }
        self.loose.remove(&(t.start_offset(), seq));
    }

    pub fn is_empty(&self) -> bool {
        self.loose.is_empty() && self.grid.as_ref().is_none_or(|g| g.cells.is_empty())
    }

    /// Appends `(seq, entry)` of every entry that may overlap `consumer`.
    pub fn candidates(&self, consumer: &Tensor, out: &mut Vec<(u64, u32)>) {
        if consumer.version() > self.min_version {
            // The version rule makes every older entry overlap, wherever it lies.
            out.extend(self.loose.iter().map(|(&(_, seq), &e)| (seq, e)));
            if let Some(g) = &self.grid {
                out.extend(g.cells.iter().map(|(&(_, _, seq), &e)| (seq, e)));
            }
            return;
        }
        let start = consumer.start_offset();
        let end = start + consumer.extent_elems();
        let lo = start.saturating_sub(self.loose_max_extent);
        out.extend(
            self.loose
                .range((lo, 0)..(end, 0))
                .map(|(&(_, seq), &e)| (seq, e)),
        );
        let Some(g) = &self.grid else { return };
        let placed = (g.holds(consumer) && whole_outer_rows(consumer))
            .then(|| box_position(consumer))
            .flatten();
        let Some(pos) = placed else {
            // Another layout, or one the box test cannot place: every grid entry may overlap.
            out.extend(g.cells.iter().map(|(&(_, _, seq), &e)| (seq, e)));
            return;
        };
        // Same layout: an entry overlaps only if its box meets the consumer's in dims 0 and 1,
        // i.e. its offset in each lies in [consumer's - (max shape - 1), consumer's end).
        let (off, shape) = outer(&pos, consumer);
        let lo = |d: usize| off[d].saturating_sub(g.max_shape[d].saturating_sub(1));
        let (hi0, lo1, hi1) = (off[0] + shape[0], lo(1), off[1] + shape[1]);
        let mut from = lo(0);
        // Each outer offset in range that holds an entry: one seek to find it, one range.
        while let Some((&(row, _, _), _)) = g.cells.range((from, 0, 0)..(hi0, 0, 0)).next() {
            out.extend(
                g.cells
                    .range((row, lo1, 0)..(row, hi1, 0))
                    .map(|(&(_, _, seq), &e)| (seq, e)),
            );
            from = row + 1;
        }
    }
}
