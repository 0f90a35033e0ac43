//! Part 6, critical-path latency attribution (`../shared/reference/timing-analysis.md` §3,
//! "Part 6"): from the task that finished last, step to the producer that ended last, and
//! split the path's span into kernel execution, scheduling gaps and the rest.

use rustc_hash::FxHashMap;

use crate::tasks::Tasks;

/// The attribution, ns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribution {
    /// The path's task ids, first to last.
    pub path: Vec<u64>,
    /// Steps from producer to consumer (`path.len() − 1`).
    pub hops: usize,
    /// Σ (end − start) over the path.
    pub exec: u64,
    /// Σ max(0, consumer start − producer end), plus the first task's start − dispatch.
    pub sched: u64,
    /// Last finish − earliest start on the path.
    pub span: u64,
}

impl Attribution {
    /// `span − exec − sched`: the path's time neither kernel nor scheduling. Negative when
    /// kernels of the path overlap, and whenever the first task's `start − dispatch` (counted
    /// in `sched`, but before `span` begins) is more than the last task's `finish − end` (in
    /// `span`, but in neither sum).
    pub fn other(&self) -> i128 {
        i128::from(self.span) - i128::from(self.exec) - i128::from(self.sched)
    }
}

/// Walks the path (see the module doc); a task already on it ends the walk.
pub fn attribute(tasks: &Tasks, edges: &[(u64, u64)]) -> Attribution {
    let index: FxHashMap<u64, usize> = tasks.spans.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); tasks.spans.len()];
    for (p, s) in edges {
        if let (Some(&pi), Some(&si)) = (index.get(p), index.get(s)) {
            preds[si].push(pi);
        }
    }
    let spans = &tasks.spans;
    let sink = (0..spans.len())
        .reduce(|a, b| if spans[b].finish > spans[a].finish { b } else { a })
        .expect("Tasks has at least one task");
    let mut path = vec![sink];
    let mut on_path = vec![false; spans.len()];
    on_path[sink] = true;
    let (mut exec, mut sched) = (0u64, 0u64);
    let mut v = sink;
    loop {
        // Saturating: no sum of the report wraps, whatever the input (the reader bounds each
        // time to 2^53 ns past the first).
        exec = exec.saturating_add(spans[v].end - spans[v].start);
        let producer = preds[v].iter().copied().filter(|&p| !on_path[p]).reduce(|a, b| {
            if spans[b].end > spans[a].end {
                b
            } else {
                a
            }
        });
        match producer {
            Some(p) => {
                sched = sched.saturating_add(spans[v].start.saturating_sub(spans[p].end));
                on_path[p] = true;
                path.push(p);
                v = p;
            }
            None => {
                sched = sched.saturating_add(spans[v].start.saturating_sub(spans[v].dispatch));
                break;
            }
        }
    }
    path.reverse();
    let first_start = path.iter().map(|&i| spans[i].start).min().unwrap_or(0);
    Attribution {
        hops: path.len() - 1,
        span: spans[sink].finish.saturating_sub(first_start),
        path: path.into_iter().map(|i| spans[i].id).collect(),
        exec,
        sched,
    }
}
