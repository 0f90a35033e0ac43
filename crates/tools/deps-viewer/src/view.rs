//! What one output shows: a subset of the graph's nodes (`--focus`) and pairs (`--edge-mode`).

use crate::graph::{Adjacency, Graph};

/// A selection of nodes and pairs of a [`Graph`]. A pair is shown when the edge mode keeps it
/// and both its ends are shown.
#[derive(Debug, Clone)]
pub struct View<'g> {
    graph: &'g Graph,
    nodes: Option<Vec<bool>>,
    pairs: Vec<bool>,
}

impl<'g> View<'g> {
    /// A view of `graph` keeping the pairs `pairs` accepts (per pair index) among the nodes
    /// `nodes` accepts (all nodes when `None`).
    pub fn new(graph: &'g Graph, nodes: Option<Vec<bool>>, mut pairs: Vec<bool>) -> View<'g> {
        if let Some(mask) = &nodes {
            for (keep, p) in pairs.iter_mut().zip(graph.pairs()) {
                *keep = *keep && mask[p.pred as usize] && mask[p.succ as usize];
            }
        }
        View { graph, nodes, pairs }
    }

    /// The whole graph.
    pub fn full(graph: &'g Graph) -> View<'g> {
        View::new(graph, None, vec![true; graph.pairs().len()])
    }

    /// The underlying graph.
    pub fn graph(&self) -> &'g Graph {
        self.graph
    }

    /// Returns true if and only if node `n` is shown.
    pub fn node_shown(&self, n: usize) -> bool {
        self.nodes.as_ref().is_none_or(|m| m[n])
    }

    /// Returns true if and only if pair `i` is shown.
    pub fn pair_shown(&self, i: usize) -> bool {
        self.pairs[i]
    }

    /// Shown nodes in ascending id order.
    pub fn nodes(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.graph.len()).filter(move |&n| self.node_shown(n))
    }

    /// Number of shown nodes.
    pub fn node_count(&self) -> usize {
        match &self.nodes {
            None => self.graph.len(),
            Some(m) => m.iter().filter(|&&k| k).count(),
        }
    }

    /// Number of shown pairs and of their annotated rows.
    pub fn edge_counts(&self) -> (u64, u64) {
        let mut unique = 0u64;
        let mut rows = 0u64;
        for (p, _) in self.graph.pairs().iter().zip(&self.pairs).filter(|(_, &k)| k) {
            unique += 1;
            rows += u64::from(p.rows);
        }
        (unique, rows)
    }

    /// Fanin/fanout lists over the shown pairs.
    pub fn adjacency(&self) -> Adjacency {
        Adjacency::new(self.graph, |i| self.pairs[i])
    }
}
