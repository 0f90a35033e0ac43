//! The static critical path (CPM): the longest duration-weighted path through the
//! happens-before graph, i.e. the makespan the dependencies alone would allow on unlimited
//! cores (`../shared/reference/timing-analysis.md` §2, "Static CPM").

use std::collections::VecDeque;

use crate::graph::{Graph, TaskIx};

/// The static critical path and its length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticPath {
    /// The tasks, first to last.
    pub tasks: Vec<TaskIx>,
    /// Σ duration over the path, ticks.
    pub length: u64,
}

/// The happens-before graph has a cycle (impossible for a graph built by
/// [`crate::graph::GraphBuilder`], whose edges all go strictly forward in start time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cycle {
    /// Tasks a topological order reached.
    pub ordered: usize,
    /// Tasks in the graph.
    pub total: usize,
}

/// The longest path over a Kahn order: `finish[v] = max(finish[p]) + dur[v]` (0 without a
/// predecessor); the first predecessor with the strictly largest finish is chosen, and the sink
/// is the first task (in that order) with the largest finish. `None` for an empty graph.
pub fn static_cpm(g: &Graph) -> Result<Option<StaticPath>, Cycle> {
    let order = topological_order(g)?;
    let n = g.len();
    let mut finish = vec![0u64; n];
    let mut choice = vec![TaskIx::MAX; n];
    let mut sink: Option<TaskIx> = None;
    for &v in &order {
        let (mut best_p, mut best_f) = (TaskIx::MAX, 0);
        for &p in g.preds(v) {
            if finish[p as usize] > best_f {
                (best_p, best_f) = (p, finish[p as usize]);
            }
        }
        finish[v as usize] = best_f.saturating_add(g.dur(v));
        choice[v as usize] = best_p;
        if sink.is_none_or(|s| finish[v as usize] > finish[s as usize]) {
            sink = Some(v);
        }
    }
    let Some(sink) = sink else { return Ok(None) };
    let mut tasks = Vec::new();
    let mut v = sink;
    while v != TaskIx::MAX {
        tasks.push(v);
        v = choice[v as usize];
    }
    tasks.reverse();
    Ok(Some(StaticPath {
        tasks,
        length: finish[sink as usize],
    }))
}

/// Kahn's order, seeded with the sources in task order.
fn topological_order(g: &Graph) -> Result<Vec<TaskIx>, Cycle> {
    let n = g.len();
    let mut indegree: Vec<u32> = (0..n as TaskIx).map(|v| g.preds(v).len() as u32).collect();
    // Successor lists (CSR) from the predecessor lists.
    let mut offsets = vec![0usize; n + 1];
    for &p in &g.hb_preds {
        offsets[p as usize + 1] += 1;
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut fill = offsets.clone();
    let mut succs = vec![0 as TaskIx; g.hb_preds.len()];
    for v in 0..n as TaskIx {
        for &p in g.preds(v) {
            succs[fill[p as usize]] = v;
            fill[p as usize] += 1;
        }
    }
    let mut queue: VecDeque<TaskIx> = (0..n as TaskIx).filter(|&v| indegree[v as usize] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(u) = queue.pop_front() {
        order.push(u);
        for &v in &succs[offsets[u as usize]..offsets[u as usize + 1]] {
            indegree[v as usize] -= 1;
            if indegree[v as usize] == 0 {
                queue.push_back(v);
            }
        }
    }
    if order.len() == n {
        Ok(order)
    } else {
        Err(Cycle {
            ordered: order.len(),
            total: n,
        })
    }
}
