//! `--edge-mode reduced_dataflow` / `omitted_dataflow`: creator edges that byte ranges prove
//! redundant.
//!
//! The structural reduction ([`crate::reduce`]) never drops a pair that carries a `creator`
//! row, because a creator edge says more than ordering: the consumer works on the producer's
//! buffer. The dataflow modes drop such a pair too, but only when the file proves that every
//! one of its creator rows adds nothing, as the original viewer does:
//!
//! A creator row `u → v` on tensor `T` (the consumer's argument `a`, slice `R`) is redundant
//! when `v` is a middle link of an in-place chain over `T`:
//!
//! 1. `v` writes `T` in place: its argument `a` is `INOUT` (an `INPUT` or `OUTPUT_EXISTING`
//!    argument keeps the edge: `OUTPUT_EXISTING` starts a new use of the buffer);
//! 2. every element of `R` was handed to `v` by direct tensor-map rows on `T` from earlier
//!    tasks that wrote `T` in place (`INOUT`): the union of their producer slices contains `R`;
//! 3. every element of `R` is handed on by direct tensor-map rows on `T` into later tasks that
//!    read `T` in place (`INOUT`): the union of their consumer slices contains `R`;
//! 4. all slices are in the buffer's own element type (`consumer_dtype` equals the tensor's
//!    `dtype`), and each expands to at most [`MAX_INTERVALS`] contiguous runs.
//!
//! Anything the file does not say (an absent `arg`, `dtype` or slice, a tensor missing from
//! `tensors[]`, a source of `"unknown"`) keeps the edge: the mode removes an edge only on proof.
//! The pair must also be implied by a longer path, as in `reduced`. Only the candidate pairs'
//! rows and the tensor-map rows touching their consumers are kept in memory; the file is
//! streamed once more.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use simpler_artifacts::deps::{self, ArgType, DepsSink, Edge, EdgeSource, Task, Tensor};

use crate::graph::Graph;
use crate::reduce::Reduction;
use crate::Error;

/// Most contiguous runs one slice may expand to before the proof gives up (and keeps the edge).
pub const MAX_INTERVALS: usize = 10_000;

/// The elements of a slice as sorted, disjoint, non-adjacent half-open runs `[start, end)`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Region(Vec<(u64, u64)>);

impl Region {
    /// The elements `start + Σ i_d·strides[d]` for `0 ≤ i_d < shape[d]`, or `None` if the
    /// slice is malformed (ranks differ, arithmetic overflows) or needs more than
    /// [`MAX_INTERVALS`] runs. An empty shape (rank 0) is one element; a zero extent is empty.
    pub fn of_slice(shape: &[u32], strides: &[u32], start: u64) -> Option<Region> {
        if shape.len() != strides.len() {
            return None;
        }
        if shape.contains(&0) {
            return Some(Region::default());
        }
        // The innermost dimension of stride 1 is one run; the rest are enumerated.
        let (outer, run) = match (shape.split_last(), strides.last()) {
            (Some((&n, rest)), Some(&1)) => (rest.len(), u64::from(n)),
            _ => (shape.len(), 1),
        };
        let count = shape[..outer]
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(u64::from(n)))?;
        if count > MAX_INTERVALS as u64 {
            return None;
        }
        let mut runs = Vec::with_capacity(count as usize);
        let mut index = vec![0u32; outer];
        for _ in 0..count {
            let mut at = start;
            for (d, &i) in index.iter().enumerate() {
                at = at.checked_add(u64::from(i).checked_mul(u64::from(strides[d]))?)?;
            }
            runs.push((at, at.checked_add(run)?));
            for d in (0..outer).rev() {
                index[d] += 1;
                if index[d] < shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        Some(Region::from_runs(runs))
    }

    /// Sorts and merges `runs` (overlapping or adjacent runs become one).
    pub fn from_runs(mut runs: Vec<(u64, u64)>) -> Region {
        runs.retain(|(a, b)| a < b);
        runs.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(runs.len());
        for (a, b) in runs {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        Region(merged)
    }

    /// The union of `regions`.
    pub fn union<'a>(regions: impl IntoIterator<Item = &'a Region>) -> Region {
        Region::from_runs(regions.into_iter().flat_map(|r| r.0.iter().copied()).collect())
    }

    /// Returns true if and only if every element of `self` is in `other`.
    pub fn within(&self, other: &Region) -> bool {
        let mut j = 0;
        for &(a, b) in &self.0 {
            while j < other.0.len() && other.0[j].1 <= a {
                j += 1;
            }
            match other.0.get(j) {
                Some(&(c, d)) if c <= a && b <= d => {}
                _ => return false,
            }
        }
        true
    }
}

/// Refines `structural` (the plain reduction of `graph`, read from `path`): also drops the
/// implied pairs whose every creator row is proven redundant (module docs).
pub fn refine(path: &Path, graph: &Graph, mut structural: Reduction) -> Result<Reduction, Error> {
    if !structural.is_dag {
        return Ok(structural);
    }
    let candidates: HashSet<(u64, u64)> = graph
        .pairs()
        .iter()
        .enumerate()
        .filter(|&(i, p)| {
            structural.implied[i]
                && !structural.dropped[i]
                && p.has_source(EdgeSource::Creator)
                && !p.has_source(EdgeSource::Unknown)
        })
        .map(|(_, p)| (graph.id(p.pred as usize), graph.id(p.succ as usize)))
        .collect();
    if candidates.is_empty() {
        return Ok(structural);
    }
    let mut facts = Facts::new(candidates);
    deps::read_deps(path, &mut facts)?;
    for (i, p) in graph.pairs().iter().enumerate() {
        let key = (graph.id(p.pred as usize), graph.id(p.succ as usize));
        if facts.candidates.contains(&key) && facts.proven(key) {
            structural.dropped[i] = true;
        }
    }
    Ok(structural)
}

/// What the proof needs from one streaming pass.
struct Facts {
    candidates: HashSet<(u64, u64)>,
    consumers: HashSet<u64>,
    /// `(task, tensor)` pairs written in place (an `INOUT` argument on that tensor).
    inout_tensor: HashSet<(u64, u64)>,
    /// `(task, argument slot)` pairs that are `INOUT`.
    inout_slot: HashSet<(u64, i32)>,
    /// Element type of each tensor.
    dtype: HashMap<u64, String>,
    /// Creator rows of candidate pairs, by pair.
    creator_rows: HashMap<(u64, u64), Vec<Edge>>,
    /// Tensor-map rows into a candidate consumer, by consumer.
    into: HashMap<u64, Vec<Edge>>,
    /// Tensor-map rows out of a candidate consumer, by that consumer.
    out_of: HashMap<u64, Vec<Edge>>,
}

impl Facts {
    fn new(candidates: HashSet<(u64, u64)>) -> Facts {
        Facts {
            consumers: candidates.iter().map(|&(_, s)| s).collect(),
            candidates,
            inout_tensor: HashSet::new(),
            inout_slot: HashSet::new(),
            dtype: HashMap::new(),
            creator_rows: HashMap::new(),
            into: HashMap::new(),
            out_of: HashMap::new(),
        }
    }

    /// Every creator row of the pair is redundant (and there is at least one).
    fn proven(&self, pair: (u64, u64)) -> bool {
        self.creator_rows
            .get(&pair)
            .is_some_and(|rows| !rows.is_empty() && rows.iter().all(|r| self.creator_row_redundant(r)))
    }

    fn creator_row_redundant(&self, row: &Edge) -> bool {
        let (Some(arg), Some(tensor)) = (row.arg, row.tensor_id) else {
            return false;
        };
        let v = row.succ;
        if !self.inout_slot.contains(&(v, arg)) {
            return false;
        }
        let Some(dtype) = self.dtype.get(&tensor) else {
            return false;
        };
        let Some(region) = consumer_region(row, dtype) else {
            return false;
        };
        let on_tensor = |rows: Option<&Vec<Edge>>| -> Vec<Edge> {
            rows.into_iter()
                .flatten()
                .filter(|r| r.tensor_id == Some(tensor))
                .cloned()
                .collect()
        };
        // 2: handed in by earlier in-place writers of the tensor.
        let mut handed_in = Vec::new();
        for r in on_tensor(self.into.get(&v)) {
            if r.pred == row.pred || !self.inout_tensor.contains(&(r.pred, tensor)) {
                continue;
            }
            match (&r.producer_shape, &r.producer_strides, r.producer_start_offset) {
                (Some(shape), Some(strides), Some(start)) if r.consumer_dtype.as_ref() == Some(dtype) => {
                    if let Some(p) = Region::of_slice(shape, strides, start) {
                        handed_in.push(p);
                    }
                }
                _ => {}
            }
        }
        if !region.within(&Region::union(&handed_in)) {
            return false;
        }
        // 3: handed on to later in-place readers of the tensor.
        let handed_on: Vec<Region> = on_tensor(self.out_of.get(&v))
            .iter()
            .filter(|r| r.arg.is_some_and(|a| self.inout_slot.contains(&(r.succ, a))))
            .filter_map(|r| consumer_region(r, dtype))
            .collect();
        region.within(&Region::union(&handed_on))
    }
}

/// The consumer slice of `row`, if it is given in the buffer's element type `dtype`.
fn consumer_region(row: &Edge, dtype: &str) -> Option<Region> {
    if row.consumer_dtype.as_deref() != Some(dtype) {
        return None;
    }
    Region::of_slice(
        row.consumer_shape.as_deref()?,
        row.consumer_strides.as_deref()?,
        row.consumer_start_offset?,
    )
}

impl DepsSink for Facts {
    type Task = Task;
    type Tensor = Tensor;
    type Edge = Edge;

    fn task(&mut self, task: Task) {
        for a in task.args.iter().filter(|a| a.arg_type == ArgType::Inout) {
            self.inout_slot.insert((task.task_id, a.idx));
            if let Some(t) = a.tensor_id {
                self.inout_tensor.insert((task.task_id, t));
            }
        }
    }

    fn tensor(&mut self, tensor: Tensor) {
        self.dtype.insert(tensor.tensor_id, tensor.dtype);
    }

    fn edge(&mut self, edge: Edge) {
        match edge.source {
            EdgeSource::Creator if self.candidates.contains(&(edge.pred, edge.succ)) => {
                self.creator_rows
                    .entry((edge.pred, edge.succ))
                    .or_default()
                    .push(edge);
            }
            EdgeSource::Tensormap => {
                if self.consumers.contains(&edge.pred) {
                    self.out_of.entry(edge.pred).or_default().push(edge.clone());
                }
                if self.consumers.contains(&edge.succ) {
                    self.into.entry(edge.succ).or_default().push(edge);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(r: &Region) -> &[(u64, u64)] {
        &r.0
    }

    #[test]
    fn slices_expand_to_merged_runs() {
        let r = Region::of_slice(&[2, 3], &[8, 1], 4).unwrap();
        assert_eq!(runs(&r), &[(4, 7), (12, 15)]);
        // Adjacent rows merge: a whole 4x8 block is one run.
        let r = Region::of_slice(&[4, 8], &[8, 1], 0).unwrap();
        assert_eq!(runs(&r), &[(0, 32)]);
        // A transposed view: stride 1 is not innermost, every element is its own run.
        let r = Region::of_slice(&[2, 2], &[1, 2], 0).unwrap();
        assert_eq!(runs(&r), &[(0, 4)]);
        let r = Region::of_slice(&[3], &[2], 1).unwrap();
        assert_eq!(runs(&r), &[(1, 2), (3, 4), (5, 6)]);
        assert_eq!(Region::of_slice(&[0, 4], &[4, 1], 0), Some(Region::default()));
        assert_eq!(runs(&Region::of_slice(&[], &[], 9).unwrap()), &[(9, 10)]);
        assert_eq!(Region::of_slice(&[2], &[1, 1], 0), None, "ranks differ");
    }

    #[test]
    fn expansion_is_capped() {
        assert!(Region::of_slice(&[MAX_INTERVALS as u32, 2], &[4, 1], 0).is_some());
        assert_eq!(Region::of_slice(&[MAX_INTERVALS as u32 + 1, 2], &[4, 1], 0), None);
        assert_eq!(
            Region::of_slice(&[2, u32::MAX], &[u32::MAX, 1], u64::MAX - 4),
            None
        );
    }

    #[test]
    fn containment_is_exact() {
        let whole = Region::of_slice(&[4, 8], &[8, 1], 0).unwrap();
        let top = Region::of_slice(&[2, 8], &[8, 1], 0).unwrap();
        let bottom = Region::of_slice(&[2, 8], &[8, 1], 16).unwrap();
        assert!(top.within(&whole));
        assert!(!whole.within(&top));
        assert!(whole.within(&Region::union([&top, &bottom])));
        let gap = Region::of_slice(&[2, 8], &[8, 1], 17).unwrap();
        assert!(!whole.within(&Region::union([&top, &gap])));
        assert!(Region::default().within(&Region::default()));
    }
}
