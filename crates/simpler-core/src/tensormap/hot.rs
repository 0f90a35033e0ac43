//! The index of a "hot" buffer: one base address with many live entries (a tiled GEMM's C, a
//! KV cache written slice by slice). Its entries leave the bucket chain for two maps, so a
//! lookup visits only entries that can overlap the consumer, instead of every entry on the
//! buffer:
//!
//! - the **grid**: entries of the buffer's first placeable layout (dtype and strides that the
//!   L2 box test can place, see `overlap::box_position`) no larger than the first entry's box,
//!   hashed by bucket: their box's offsets in the two outer dimensions divided by that box's
//!   shape. A consumer of that layout probes the buckets its box can reach (an entry reaches
//!   at most one bucket back) and takes the entries whose boxes meet its own, so a tile of a
//!   2-D buffer costs a few hash probes instead of a visit of its whole tile row;
//! - the **loose** entries (any other layout or a larger box), ordered by start offset,
//!   visited when their element range can reach the consumer's.
//!
//! Both are conservative: every entry the overlap test would report is a candidate (the
//! skipped grid entries are exactly those the box test answers `None` for), and the caller
//! runs the test on each, unless the index already knows its answer: for a grid of at most two
//! dimensions an entry's two outer box dimensions are its whole box, so the verdict of
//! `check_overlap` for a placed consumer follows from the two boxes ([`Candidate::verdict`]).
//! Visiting order is restored by the caller (newest first).
//!
//! The grid remembers where it last placed a view ([`Placement`]): a tiled GEMM's INOUT tile is
//! looked up, its previous writer's entry (the same tile) removed and the tile inserted, and
//! each of the three placed the same box with the same divisions.

use std::collections::BTreeMap;

use std::cell::Cell as Memo;

use super::buckets::{Bucket, Buckets, Slot};
use super::overlap::{box_position, whole_outer_rows, Overlap};
use crate::tensor::dims_eq;
use crate::{DType, Tensor, MAX_DIMS};

/// Emptied grid buckets kept beyond twice the entries held (see [`HotIndex::remove`]).
const EMPTY_CELLS_KEPT: usize = 1024;
/// Emptied grid buckets an index keeps when its last entry goes: a tmr tiled GEMM whose
/// scheduler keeps up empties its C index between most submits, and dropping the buckets
/// then made the next writer allocate the map again (a `malloc` and a `free` per task). At
/// most this many buckets of at most a few cells each per hot address.
const EMPTY_INDEX_CELLS_KEPT: usize = 64;

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

/// Entries of one layout, bucketed by their box's offsets in the two outer dimensions.
#[derive(Debug)]
struct Grid {
    dtype: DType,
    strides: [u32; MAX_DIMS],
    ndims: usize,
    /// Bucket edge per outer dimension: the first entry's shape there. An entry larger than a
    /// bucket in either dimension stays loose, so a box reaches at most one bucket back.
    edge: [Edge; 2],
    /// (bucket in dim 0, bucket in dim 1) → its entries, unordered (`buckets.rs`).
    cells: Buckets<Cell>,
    /// Entries held.
    len: usize,
    /// Every entry ever inserted starts on a bucket boundary (a tiling by the first entry's
    /// box): then none reaches back into the next bucket, and a probe needs no step back.
    aligned: bool,
    /// The last view placed ([`Grid::place`]).
    last: Memo<Option<Placement>>,
    /// The last buffer size asked about and its answer ([`Grid::whole_outer_rows`]).
    whole_rows: Memo<Option<(u64, bool)>>,
}

/// Where the grid placed a view of its layout ([`Grid::place`]), with what the placement
/// depends on given the layout: the view's start offset and shape.
#[derive(Clone, Copy, Debug)]
struct Placement {
    start: u64,
    shape: [u32; MAX_DIMS],
    /// Offsets and sizes in the two outer dimensions; `None`: the box test cannot place it.
    outer: Option<([u64; 2], [u64; 2])>,
    /// Its bucket; `None` also when it is larger than a bucket (it stays loose).
    bucket: Option<Bucket>,
}

/// One entry that may overlap a consumer ([`HotIndex::candidates`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Candidate {
    /// Insert sequence (the caller visits newest first).
    pub seq: u64,
    /// Entry index.
    pub entry: u32,
    /// What `check_overlap(entry, consumer)` answers, when the index knows it (a grid entry
    /// of at most two dimensions and a placed consumer); `None`: run the test.
    pub verdict: Option<Overlap>,
    /// The entry's view is the consumer's (known with the verdict: the same box in the
    /// grid's layout).
    pub same_view: bool,
}

/// One grid entry: its box in the two outer dimensions, to test before it is a candidate.
#[derive(Clone, Copy, Debug)]
struct Cell {
    seq: u64,
    entry: u32,
    /// First offset and end (exclusive) in dims 0 and 1.
    lo: [u64; 2],
    hi: [u64; 2],
}

impl Cell {
    /// Whether the two boxes share an element in dims 0 and 1: their intersection is not
    /// empty. An empty box (no extent in a dimension) meets nothing, as an empty view overlaps
    /// nothing; compared end to end instead, a zero-width box inside the other one met it,
    /// and [`Cell::judged`] then gave the pair a verdict and an edge.
    fn meets(&self, lo: [u64; 2], hi: [u64; 2]) -> bool {
        self.lo[0].max(lo[0]) < self.hi[0].min(hi[0]) && self.lo[1].max(lo[1]) < self.hi[1].min(hi[1])
    }
    fn candidate(&self) -> Candidate {
        Candidate {
            seq: self.seq,
            entry: self.entry,
            verdict: None,
            same_view: false,
        }
    }
    /// The candidate with `check_overlap`'s verdict for a consumer whose box (`lo`, `hi`) this
    /// one meets, both boxes whole (at most two dimensions): the consumer's covers it, or not.
    fn judged(&self, lo: [u64; 2], hi: [u64; 2]) -> Candidate {
        let covered =
            lo[0] <= self.lo[0] && self.hi[0] <= hi[0] && lo[1] <= self.lo[1] && self.hi[1] <= hi[1];
        Candidate {
            verdict: Some(if covered { Overlap::Covered } else { Overlap::Other }),
            same_view: self.lo == lo && self.hi == hi,
            ..self.candidate()
        }
    }
}

impl Grid {
    /// [`whole_outer_rows`] for `t`, a view of the grid's layout: then its answer depends only
    /// on the buffer's size, so the last one is reused (it took two divisions a lookup).
    #[inline]
    fn whole_outer_rows(&self, t: &Tensor) -> bool {
        let size = t.size_bytes();
        if let Some((s, whole)) = self.whole_rows.get() {
            if s == size {
                return whole;
            }
        }
        let whole = whole_outer_rows(t);
        self.whole_rows.set(Some((size, whole)));
        whole
    }

    fn holds(&self, t: &Tensor) -> bool {
        t.dtype() == self.dtype && dims_eq(t.strides(), &self.strides[..self.ndims])
    }
    /// The bucket of a placed entry that fits one, `None` when it is larger than a bucket.
    fn bucket(&self, off: [u64; 2], shape: [u64; 2]) -> Option<Bucket> {
        let [e0, e1] = &self.edge;
        (shape[0] <= e0.len && shape[1] <= e1.len).then(|| (e0.div(off[0]), e1.div(off[1])))
    }
}

/// A bucket edge (at least 1), with the shift that divides by it when it is a power of two, as
/// tiles usually are: a fan-in's inserts and lookups divided offsets by edges 4–6 times each,
/// and a 64-bit division takes as long as the rest of the bucket's arithmetic.
#[derive(Clone, Copy, Debug)]
struct Edge {
    len: u64,
    /// `log2(len)` when `len` is a power of two.
    shift: Option<u32>,
}

impl Edge {
    fn new(len: u64) -> Edge {
        let len = len.max(1);
        Edge {
            len,
            shift: len.is_power_of_two().then(|| len.trailing_zeros()),
        }
    }
    #[inline]
    fn div(&self, x: u64) -> u64 {
        match self.shift {
            Some(s) => x >> s,
            None => x / self.len,
        }
    }
    /// Whether `x` is a multiple of the edge.
    #[inline]
    fn divides(&self, x: u64) -> bool {
        match self.shift {
            Some(_) => x & (self.len - 1) == 0,
            None => x.is_multiple_of(self.len),
        }
    }
}

impl Grid {
    /// Where the box test places `t`, a view of the grid's layout: its outer box and its
    /// bucket. The last answer is remembered and reused (a removal places nothing: its entry
    /// keeps its bucket's slot). Inlined: returned through memory, its copy was a
    /// store-forwarding stall in each caller.
    #[inline(always)]
    fn place(&self, t: &Tensor) -> Placement {
        let shape = t.shape();
        if let Some(p) = self.last.get() {
            if p.start == t.start_offset() && dims_eq(&p.shape[..shape.len()], shape) {
                return p;
            }
        }
        let outer_box = box_position(t).map(|pos| outer(pos, t));
        let mut p = Placement {
            start: t.start_offset(),
            shape: [0; MAX_DIMS],
            outer: outer_box,
            bucket: outer_box.and_then(|(off, shape)| self.bucket(off, shape)),
        };
        // Element by element: `copy_from_slice` of the variable-length shape called `memcpy`,
        // whose narrow stores the wider load of the copy into the memo then waited for (a
        // store-forwarding stall).
        for (k, &v) in p.shape.iter_mut().zip(shape) {
            *k = v;
        }
        self.last.set(Some(p));
        p
    }
}

/// Where the grid keeps `t`, if it does: its bucket and its outer box (first offsets, ends).
#[inline]
fn grid_bucket(grid: &Grid, t: &Tensor) -> Option<(Bucket, [u64; 2], [u64; 2])> {
    if !grid.holds(t) {
        return None;
    }
    let p = grid.place(t);
    let (key, (off, shape)) = (p.bucket?, p.outer?);
    Some((key, off, [off[0] + shape[0], off[1] + shape[1]]))
}

/// The grid key of a placed view: its offsets and sizes in the two outer dimensions.
fn outer(pos: [u64; 2], t: &Tensor) -> ([u64; 2], [u64; 2]) {
    let shape = |d: usize| t.shape().get(d).map_or(1, |&s| u64::from(s));
    (pos, [shape(0), shape(1)])
}

impl Default for HotIndex {
    fn default() -> HotIndex {
        HotIndex::new()
    }
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

    /// Adds entry `entry` (view `t`, insert sequence `seq`); returns its bucket's slot when it
    /// went into the grid, for [`HotIndex::remove_from_slot`].
    pub fn insert(&mut self, t: &Tensor, seq: u64, entry: u32) -> Option<Slot> {
        self.min_version = self.min_version.min(t.version());
        if self.grid.is_none() {
            if let Some(pos) = box_position(t) {
                let (_, shape) = outer(pos, t);
                let mut strides = [0; MAX_DIMS];
                strides[..t.ndims()].copy_from_slice(t.strides());
                self.grid = Some(Grid {
                    dtype: t.dtype(),
                    strides,
                    ndims: t.ndims(),
                    edge: [Edge::new(shape[0]), Edge::new(shape[1])],
                    aligned: true,
                    cells: Buckets::new(),
                    len: 0,
                    last: Memo::new(None),
                    whole_rows: Memo::new(None),
                });
            }
        }
        if let Some(grid) = &mut self.grid {
            if let Some((key, lo, hi)) = grid_bucket(grid, t) {
                let slot = grid.cells.push(key, Cell { seq, entry, lo, hi });
                grid.len += 1;
                grid.aligned &= grid.edge[0].divides(lo[0]) && grid.edge[1].divides(lo[1]);
                return Some(slot);
            }
        }
        self.loose.insert((t.start_offset(), seq), entry);
        self.loose_max_extent = self.loose_max_extent.max(t.extent_elems());
        None
    }

    /// Gives the grid entry with `seq` in the bucket in `slot` (as [`HotIndex::insert`]
    /// returned it) the sequence `new_seq`, when `t`, a view its entry is to hold from now on,
    /// has the same box: what [`HotIndex::remove_from_slot`] then [`HotIndex::insert`] of `t`
    /// would leave, without leaving the bucket. False (nothing changed) otherwise.
    pub fn take_over(&mut self, slot: Slot, seq: u64, t: &Tensor, new_seq: u64) -> bool {
        let Some(grid) = &mut self.grid else { return false };
        let Some((key, lo, hi)) = grid_bucket(grid, t) else {
            return false;
        };
        if !grid.cells.take_over(
            slot,
            key,
            |c| c.seq == seq && c.lo == lo && c.hi == hi,
            |c| c.seq = new_seq,
        ) {
            return false;
        }
        self.min_version = self.min_version.min(t.version());
        true
    }

    /// Gives the grid entry with `seq` in the bucket in `slot` the sequence `new_seq`, its view
    /// unchanged (what [`HotIndex::take_over`] does for the same view, without placing it);
    /// whether it was there.
    pub fn renew(&mut self, slot: Slot, seq: u64, new_seq: u64) -> bool {
        let Some(grid) = &mut self.grid else { return false };
        grid.cells.update(slot, |c| c.seq == seq, |c| c.seq = new_seq)
    }

    /// Removes the loose entry inserted as `t` with `seq` (one [`HotIndex::insert`] returned
    /// no bucket for; a grid entry is removed by its bucket, [`HotIndex::remove_from_slot`]).
    pub fn remove_loose(&mut self, t: &Tensor, seq: u64) {
        self.loose.remove(&(t.start_offset(), seq));
    }

    /// Removes the grid entry with `seq` from the bucket in `slot`, which [`HotIndex::insert`]
    /// returned for it: without its view, whose placement (a division per dimension) a fan-in
    /// that removes many entries paid for each, nor a hash probe for its bucket.
    pub fn remove_from_slot(&mut self, slot: Slot, seq: u64) {
        let Some(grid) = &mut self.grid else { return };
        if grid.cells.remove(slot, |c| c.seq == seq) {
            grid.len -= 1;
            if grid.len == 0 && grid.cells.len() > EMPTY_INDEX_CELLS_KEPT {
                // An empty index holds little (see `HOT_ADDRESS_LIMIT`).
                grid.cells.clear();
            } else if grid.cells.len() > 2 * grid.len + EMPTY_CELLS_KEPT {
                // Emptied buckets keep their place for the next writer of the same tile;
                // past this many, they are dropped (amortised O(1)).
                grid.cells.drop_empty();
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.loose.is_empty() && self.grid.as_ref().is_none_or(|g| g.len == 0)
    }

    /// Appends every entry that may overlap `consumer`, with its verdict when the index knows
    /// it (see the module docs).
    pub fn candidates(&self, consumer: &Tensor, out: &mut Vec<Candidate>) {
        let loose = |(&(_, seq), &entry): (&(u64, u64), &u32)| Candidate {
            seq,
            entry,
            verdict: None,
            same_view: false,
        };
        if consumer.version() > self.min_version {
            // The version rule makes every older entry overlap, wherever it lies.
            out.extend(self.loose.iter().map(loose));
            if let Some(g) = &self.grid {
                out.extend(g.cells.all().flatten().map(Cell::candidate));
            }
            return;
        }
        if !self.loose.is_empty() {
            let start = consumer.start_offset();
            let end = start + consumer.extent_elems();
            let lo = start.saturating_sub(self.loose_max_extent);
            out.extend(self.loose.range((lo, 0)..(end, 0)).map(loose));
        }
        let Some(g) = &self.grid else { return };
        let placed = (g.holds(consumer) && g.whole_outer_rows(consumer))
            .then(|| g.place(consumer).outer)
            .flatten();
        let Some((off, shape)) = placed else {
            // Another layout, or one the box test cannot place: every grid entry may overlap.
            out.extend(g.cells.all().flatten().map(Cell::candidate));
            return;
        };
        if shape[0] == 0 || shape[1] == 0 {
            // An empty box meets none (`check_overlap`'s answer too, the version rule not
            // applying here). Found by a review: its last bucket, `off + 0 - 1`, wrapped at
            // offset 0, and the walk over the buckets to u64::MAX never ended.
            return;
        }
        // Same layout: an entry overlaps only if its box meets the consumer's in dims 0 and 1.
        // Its offset there is then in [consumer's - edge + 1, consumer's end) (its shape is at
        // most a bucket edge), so only the buckets of that range can hold it; when every entry
        // starts on a bucket boundary, none from an earlier bucket reaches the consumer's.
        let span = |d: usize| {
            let edge = &g.edge[d];
            let back = if g.aligned { 0 } else { edge.len - 1 };
            let first = edge.div(off[d].saturating_sub(back));
            let last = edge.div(off[d] + shape[d] - 1);
            first..=last
        };
        let (rows, cols) = (span(0), span(1));
        let (lo, hi) = (off, [off[0] + shape[0], off[1] + shape[1]]);
        // The version rule cannot apply here (the consumer is no newer than any entry), and two
        // placed views of one layout overlap exactly when their boxes meet in every dimension:
        // with at most two, the cells' boxes give `check_overlap`'s answer.
        let whole = g.ndims <= 2;
        // A loop of pushes: `extend` from the filtered cells went through `extend_desugared`,
        // a call of ≈ 90 instructions to take a tiled GEMM tile's one candidate.
        let meeting = |out: &mut Vec<Candidate>, cell: &[Cell]| {
            for c in cell {
                if c.meets(lo, hi) {
                    out.push(if whole { c.judged(lo, hi) } else { c.candidate() });
                }
            }
        };
        let probes = (rows.end() - rows.start())
            .saturating_add(1)
            .saturating_mul((cols.end() - cols.start()).saturating_add(1));
        if probes > g.cells.len() as u64 {
            // A consumer wider than the occupied buckets: filtering them all is cheaper.
            g.cells.all().for_each(|cell| meeting(out, cell));
            return;
        }
        for r in rows {
            for c in cols.clone() {
                if let Some(cell) = g.cells.get((r, c)) {
                    meeting(out, cell);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TaskId;

    /// An index whose last writer retires keeps its few buckets for the next writer (no
    /// allocation per task in a tmr tiled GEMM), but not a large grid's worth of them.
    #[test]
    fn an_emptied_index_keeps_few_buckets_only() {
        let buf = Tensor::contiguous(0x1000, 1 << 24, &[1 << 22], DType::Float32, TaskId::INVALID).unwrap();
        let mut h = HotIndex::new();
        let tile = buf.view(&[1], &[7]).unwrap();
        let slot = h.insert(&tile, 0, 0).unwrap();
        h.remove_from_slot(slot, 0);
        assert!(h.is_empty());
        let g = h.grid.as_ref().unwrap();
        assert_eq!(g.cells.len(), 1);
        assert!(g.cells.all().all(|c| c.is_empty()));

        let many = EMPTY_INDEX_CELLS_KEPT as u32 + 1;
        let tiles: Vec<_> = (0..many).map(|i| buf.view(&[1], &[i]).unwrap()).collect();
        let slots: Vec<_> = (tiles.iter().enumerate())
            .map(|(i, t)| h.insert(t, i as u64 + 1, i as u32).unwrap())
            .collect();
        for (i, &slot) in slots.iter().enumerate() {
            h.remove_from_slot(slot, i as u64 + 1);
        }
        assert!(h.is_empty());
        assert_eq!(h.grid.as_ref().unwrap().cells.len(), 0);
    }

    /// A long-lived hot buffer whose writers move on (a KV cache written slice after slice)
    /// must not keep a bucket per slice it ever saw.
    #[test]
    fn emptied_buckets_are_dropped_past_the_bound() {
        let buf = Tensor::contiguous(0x1000, 1 << 24, &[1 << 22], DType::Float32, TaskId::INVALID).unwrap();
        let mut h = HotIndex::new();
        let live = buf.view(&[1], &[0]).unwrap();
        h.insert(&live, 0, 0); // one writer stays, so the grid never empties
        for i in 1..20_000u32 {
            let t = buf.view(&[1], &[i]).unwrap();
            let slot = h.insert(&t, u64::from(i), i).unwrap();
            h.remove_from_slot(slot, u64::from(i));
        }
        let g = h.grid.as_ref().unwrap();
        assert_eq!(g.len, 1);
        assert!(
            g.cells.len() <= 2 * g.len + EMPTY_CELLS_KEPT + 1,
            "{} buckets kept",
            g.cells.len()
        );
        let mut out = Vec::new();
        h.candidates(&buf.view(&[4], &[0]).unwrap(), &mut out);
        assert_eq!(out.iter().map(|c| (c.seq, c.entry)).collect::<Vec<_>>(), [(0, 0)]);
    }
}
