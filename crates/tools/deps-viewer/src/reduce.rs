//! Edge modes: the transitive reduction of the task graph, and its complement.
//!
//! A pair `u → v` is *redundant* when `v` is also reachable from `u` through a path of two or
//! more pairs. `reduced` drops every redundant pair except those carrying a `creator` row: a
//! creator edge keeps the producer's tensor alive, so it says more than ordering. A row whose
//! source is `"unknown"` (the original's files) might be a creator row, so it keeps its pair too.
//! `omitted` shows exactly the pairs `reduced` drops. In a DAG the reduction is unique, so
//! each pair's verdict does not depend on which other pairs are dropped. A graph with a cycle
//! (never produced by a runtime) is left unreduced with a warning.
//!
//! Cost: one depth-first walk per node over its descendants, pruned to the nodes that come no
//! later in topological order than the node's last direct successor (nothing later can lead
//! back to it). Dependencies in real runs are mostly local, so the walks stay short; the worst
//! case is still O(V·E), so the walks share a budget of [`REDUCTION_STEP_BUDGET`] steps, past
//! which the reduction is abandoned with an error suggesting `--focus`. Scratch memory is
//! O(V).

use simpler_artifacts::deps::EdgeSource;

use crate::cli::EdgeMode;
use crate::graph::{Adjacency, Graph};
use crate::{Error, ErrorKind};

/// The verdict of the reduction for every pair of a graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reduction {
    /// Per pair (same index as [`Graph::pairs`]): true if `reduced` drops it.
    pub dropped: Vec<bool>,
    /// Per pair: true if a longer path implies it (whether or not it is dropped).
    pub implied: Vec<bool>,
    /// False if the graph has a cycle; then nothing is dropped.
    pub is_dag: bool,
}

impl Reduction {
    /// Number of dropped pairs.
    pub fn dropped_count(&self) -> usize {
        self.dropped.iter().filter(|&&d| d).count()
    }
}

/// How many walk steps (edge visits) all nodes together may take, about a minute of work.
pub const REDUCTION_STEP_BUDGET: u64 = 20_000_000_000;

/// Computes which pairs the reduction drops ([`ErrorKind::ReductionTooCostly`] past
/// [`REDUCTION_STEP_BUDGET`] steps).
pub fn reduce(graph: &Graph) -> Result<Reduction, Error> {
    reduce_with_budget(graph, REDUCTION_STEP_BUDGET)
}

/// [`reduce`] with an explicit step budget.
pub fn reduce_with_budget(graph: &Graph, budget: u64) -> Result<Reduction, Error> {
    let n = graph.len();
    let pairs = graph.pairs();
    let adj = Adjacency::new(graph, |_| true);
    let Some(position) = topological_positions(&adj, n) else {
        return Ok(Reduction {
            dropped: vec![false; pairs.len()],
            implied: vec![false; pairs.len()],
            is_dag: false,
        });
    };
    let mut steps = 0u64;
    // `direct[w] == u + 1`: w is a direct successor of u. `seen[w] == u + 1`: w was reached
    // from u by a path of length ≥ 2. Stamping with u + 1 avoids clearing between nodes.
    let mut direct = vec![0usize; n];
    let mut seen = vec![0usize; n];
    let mut implied = vec![false; pairs.len()];
    let mut stack: Vec<u32> = Vec::new();
    let mut pair_index = 0usize;
    for u in 0..n {
        let succs = adj.fanout(u);
        let stamp = u + 1;
        for &v in succs {
            direct[v as usize] = stamp;
        }
        if succs.len() > 1 {
            let limit = succs.iter().map(|&v| position[v as usize]).max().unwrap_or(0);
            for &v in succs {
                stack.extend_from_slice(adj.fanout(v as usize));
            }
            while let Some(w) = stack.pop() {
                let w = w as usize;
                if seen[w] == stamp || position[w] > limit {
                    continue;
                }
                seen[w] = stamp;
                let next = adj.fanout(w);
                steps += next.len() as u64;
                stack.extend_from_slice(next);
            }
            if steps > budget {
                return Err(ErrorKind::ReductionTooCostly {
                    budget,
                    tasks: n,
                    edges: pairs.len(),
                }
                .into());
            }
        }
        // Pairs of u are contiguous and in the same order as `succs`.
        for &v in succs {
            debug_assert_eq!(pairs[pair_index].pred as usize, u);
            debug_assert_eq!(pairs[pair_index].succ, v);
            implied[pair_index] = succs.len() > 1 && seen[v as usize] == stamp;
            pair_index += 1;
        }
    }
    let dropped = implied
        .iter()
        .zip(pairs)
        .map(|(&implied, p)| {
            implied && !p.has_source(EdgeSource::Creator) && !p.has_source(EdgeSource::Unknown)
        })
        .collect();
    Ok(Reduction {
        dropped,
        implied,
        is_dag: true,
    })
}

/// Returns the per-pair "shown" mask for `mode`. `reduction` is needed for every mode but
/// `full`.
pub fn select(mode: EdgeMode, pairs: usize, reduction: Option<&Reduction>) -> Vec<bool> {
    match (mode, reduction) {
        (EdgeMode::Full, _) | (_, None) => vec![true; pairs],
        (EdgeMode::Reduced | EdgeMode::ReducedDataflow, Some(r)) => r.dropped.iter().map(|d| !d).collect(),
        (EdgeMode::Omitted | EdgeMode::OmittedDataflow, Some(r)) => r.dropped.clone(),
    }
}

/// Kahn's algorithm: each node's position in a topological order, or `None` if the graph
/// has a cycle.
fn topological_positions(adj: &Adjacency, n: usize) -> Option<Vec<u32>> {
    let mut indegree: Vec<u32> = (0..n).map(|v| adj.fanin(v).len() as u32).collect();
    let mut ready: Vec<usize> = (0..n).filter(|&v| indegree[v] == 0).collect();
    let mut position = vec![0u32; n];
    let mut ordered = 0usize;
    while let Some(v) = ready.pop() {
        position[v] = ordered as u32;
        ordered += 1;
        for &w in adj.fanout(v) {
            let d = &mut indegree[w as usize];
            *d -= 1;
            if *d == 0 {
                ready.push(w as usize);
            }
        }
    }
    (ordered == n).then_some(position)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::TaskInfo;

    const T: TaskInfo = TaskInfo {
        kernels: crate::graph::Kernels::Slots([-1, 0, -1]),
        block_num: Some(1),
        early_dispatch: false,
    };

    fn graph(edges: &[(u64, u64, EdgeSource)]) -> Graph {
        Graph::from_parts(std::iter::empty::<(u64, TaskInfo)>(), edges.iter().copied(), 0)
    }

    /// The (pred id, succ id) pairs that `reduced` drops.
    fn dropped(g: &Graph) -> Vec<(u64, u64)> {
        let r = reduce(g).unwrap();
        g.pairs()
            .iter()
            .zip(&r.dropped)
            .filter(|(_, &d)| d)
            .map(|(p, _)| (g.id(p.pred as usize), g.id(p.succ as usize)))
            .collect()
    }

    use EdgeSource::{Creator, Explicit, Tensormap};

    #[test]
    fn diamond_is_kept_whole() {
        let g = graph(&[
            (0, 1, Tensormap),
            (0, 2, Tensormap),
            (1, 3, Tensormap),
            (2, 3, Tensormap),
        ]);
        assert_eq!(dropped(&g), vec![]);
        assert!(reduce(&g).unwrap().is_dag);
    }

    #[test]
    fn multi_hop_shortcut_is_dropped() {
        let g = graph(&[
            (0, 1, Tensormap),
            (1, 2, Explicit),
            (2, 3, Tensormap),
            (0, 3, Tensormap),
        ]);
        assert_eq!(dropped(&g), vec![(0, 3)]);
    }

    #[test]
    fn shortcut_carrying_a_creator_row_survives() {
        let g = graph(&[
            (0, 1, Tensormap),
            (1, 2, Tensormap),
            (0, 2, Tensormap),
            (0, 2, Creator),
            (1, 3, Tensormap),
            (2, 3, Tensormap),
            (0, 3, Explicit),
        ]);
        // (0, 2) is implied by 0 -> 1 -> 2 but carries a creator row.
        assert_eq!(dropped(&g), vec![(0, 3), (1, 3)]);
    }

    #[test]
    fn vector_example_keeps_every_creator_edge() {
        // t0 -> t4 is implied by t0 -> t1 -> t3 -> t4 but is a creator edge.
        let (a, b, c, d, e) = (0, 1 << 32, (1 << 32) + 1, (1 << 32) + 2, (1 << 32) + 3);
        let g = graph(&[
            (a, b, Creator),
            (a, c, Creator),
            (b, d, Creator),
            (c, d, Creator),
            (d, e, Creator),
            (a, e, Creator),
        ]);
        assert_eq!(dropped(&g), vec![]);
        let g = graph(&[
            (a, b, Creator),
            (a, c, Creator),
            (b, d, Creator),
            (c, d, Creator),
            (d, e, Creator),
            (a, e, Tensormap),
        ]);
        assert_eq!(dropped(&g), vec![(a, e)]);
    }

    #[test]
    fn a_shortcut_of_unknown_source_survives() {
        // The original may write source "unknown": it could be a creator row, so it is kept.
        let g = graph(&[(0, 1, Explicit), (1, 2, Explicit), (0, 2, EdgeSource::Unknown)]);
        assert_eq!(dropped(&g), vec![]);
        let g = graph(&[(0, 1, Explicit), (1, 2, Explicit), (0, 2, Explicit)]);
        assert_eq!(dropped(&g), vec![(0, 2)]);
    }

    #[test]
    fn cycle_leaves_the_graph_unchanged() {
        let g = graph(&[
            (0, 1, Tensormap),
            (1, 2, Tensormap),
            (2, 0, Tensormap),
            (0, 2, Tensormap),
        ]);
        let r = reduce(&g).unwrap();
        assert!(!r.is_dag);
        assert_eq!(r.dropped_count(), 0);
    }

    #[test]
    fn long_chains_reduce_within_a_small_budget_and_the_budget_is_enforced() {
        // A chain of 10,000 tasks where each also feeds the task two ahead: every shortcut
        // i -> i+2 is implied by i -> i+1 -> i+2. Pruning by topological position keeps each
        // walk to a few steps.
        let n = 10_000u64;
        let edges: Vec<(u64, u64, EdgeSource)> = (0..n - 1)
            .map(|i| (i, i + 1, Tensormap))
            .chain((0..n - 2).map(|i| (i, i + 2, Tensormap)))
            .collect();
        let g = graph(&edges);
        let r = reduce_with_budget(&g, 10 * n).unwrap();
        assert_eq!(r.dropped_count(), (n - 2) as usize);
        let err = reduce_with_budget(&g, 100).unwrap_err().to_string();
        assert!(
            err.starts_with("--edge-mode needs the transitive reduction, which takes more than 100 steps"),
            "{err}"
        );
    }

    #[test]
    fn modes_select_complementary_pairs() {
        let g = Graph::from_parts(
            [(0, T), (1, T), (2, T)],
            [(0, 1, Tensormap), (1, 2, Tensormap), (0, 2, Tensormap)],
            0,
        );
        let r = reduce(&g).unwrap();
        assert_eq!(select(EdgeMode::Full, 3, Some(&r)), vec![true, true, true]);
        // Pairs sorted: (0,1), (0,2), (1,2).
        assert_eq!(select(EdgeMode::Reduced, 3, Some(&r)), vec![true, false, true]);
        assert_eq!(select(EdgeMode::Omitted, 3, Some(&r)), vec![false, true, false]);
    }
}
