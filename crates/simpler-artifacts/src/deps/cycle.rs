//! A cycle among deps.json's edges. A task depends only on tasks submitted before it, so a
//! runtime never writes one; a file that has one was edited or corrupted, and the timing tools
//! (`simpler critical-path`, `simpler sched-overhead`) refuse it naming the edge that closes it
//! and the tasks around it, as `simpler run --from-deps` refuses such a file and
//! `simpler deps-viewer` warns of it. The check is on the file's edges, every one of them: a
//! happens-before graph keeps only edges borne out by the timing, which can never form a cycle.

use super::task_label;
use rustc_hash::FxHashMap;

/// At most this many tasks of a cycle are listed; a longer one shows its ends and its length.
const LISTED: usize = 10;

/// The message for a cycle among `edges` (`(pred, succ)` pairs; `row(i)` is the index of
/// `edges[i]` in the file's `edges[]`), or `None` when there is none:
/// `edges[6] (pred 4294967299, succ 0) closes a cycle: t0 → r1t0 → r1t3 → t0; ...`. The edge
/// named is the cycle's edge that comes last in the file; a task depending on itself is a cycle
/// of one task.
pub fn cycle_message(edges: &[(u64, u64)], row: impl Fn(usize) -> usize) -> Option<String> {
    let (cycle, closing) = find_cycle(edges)?;
    let (p, s) = edges[closing];
    let mut shown: Vec<String> = if cycle.len() > LISTED {
        let head = cycle[..LISTED / 2].iter().map(|&t| task_label(t));
        let tail = cycle[cycle.len() - LISTED / 2 + 1..]
            .iter()
            .map(|&t| task_label(t));
        head.chain(std::iter::once("…".to_owned())).chain(tail).collect()
    } else {
        cycle.iter().map(|&t| task_label(t)).collect()
    };
    shown.push(task_label(cycle[0]));
    let length = if cycle.len() > LISTED {
        format!(" ({} tasks)", cycle.len())
    } else {
        String::new()
    };
    Some(format!(
        "edges[{}] (pred {p}, succ {s}) closes a cycle: {}{length}; a task depends only on tasks \
         submitted before it, so a runtime never writes one",
        row(closing),
        shown.join(" → ")
    ))
}

/// A cycle of `edges`: its tasks, from the succ of its edge that comes last in `edges` round
/// to that edge's pred, and that edge's index.
fn find_cycle(edges: &[(u64, u64)]) -> Option<(Vec<u64>, usize)> {
    let mut dense: FxHashMap<u64, u32> = FxHashMap::default();
    let mut ids = Vec::new();
    let mut ix = |t: u64| {
        *dense.entry(t).or_insert_with(|| {
            ids.push(t);
            (ids.len() - 1) as u32
        })
    };
    let pairs: Vec<(u32, u32)> = edges.iter().map(|&(p, s)| (ix(p), ix(s))).collect();
    let n = ids.len();
    // Predecessors and successors (CSR), in file order.
    let csr = |key: fn(&(u32, u32)) -> (u32, u32)| {
        let mut offsets = vec![0usize; n + 1];
        for e in &pairs {
            offsets[key(e).0 as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut to = vec![0u32; pairs.len()];
        for e in &pairs {
            let (from, other) = key(e);
            to[fill[from as usize]] = other;
            fill[from as usize] += 1;
        }
        (offsets, to)
    };
    let (succ_at, succs) = csr(|&(p, s)| (p, s));
    let (pred_at, preds) = csr(|&(p, s)| (s, p));
    // Kahn: what is left unordered lies on or after a cycle, and each such task has a
    // predecessor left unordered too.
    let mut indegree: Vec<usize> = (0..n).map(|v| pred_at[v + 1] - pred_at[v]).collect();
    let mut ready: Vec<u32> = (0..n as u32).filter(|&v| indegree[v as usize] == 0).collect();
    let mut left = vec![true; n];
    while let Some(v) = ready.pop() {
        left[v as usize] = false;
        for &w in &succs[succ_at[v as usize]..succ_at[v as usize + 1]] {
            indegree[w as usize] -= 1;
            if indegree[w as usize] == 0 {
                ready.push(w);
            }
        }
    }
    let start = left.iter().position(|&l| l)?;
    // Walk back through unordered predecessors until a task repeats: the walk from its first
    // visit is a cycle, backwards.
    let mut seen_at = vec![usize::MAX; n];
    let mut walk = Vec::new();
    let mut v = start as u32;
    while seen_at[v as usize] == usize::MAX {
        seen_at[v as usize] = walk.len();
        walk.push(v);
        v = preds[pred_at[v as usize]..pred_at[v as usize + 1]]
            .iter()
            .copied()
            .find(|&p| left[p as usize])
            .expect("a task Kahn's order left has a predecessor it left");
    }
    let mut cycle: Vec<u32> = walk[seen_at[v as usize]..].to_vec();
    cycle.reverse();
    // The cycle's edges (each the first in the file of its pair); the last of them closes it.
    let k = cycle.len();
    let step: FxHashMap<(u32, u32), usize> = (0..k).map(|i| ((cycle[i], cycle[(i + 1) % k]), i)).collect();
    let mut first_index = vec![usize::MAX; k];
    for (j, e) in pairs.iter().enumerate() {
        if let Some(&i) = step.get(e) {
            first_index[i] = first_index[i].min(j);
        }
    }
    let last = (0..k)
        .max_by_key(|&i| first_index[i])
        .expect("a cycle has a task");
    // Start the listing at the closing edge's succ.
    cycle.rotate_left((last + 1) % k);
    Some((
        cycle.iter().map(|&v| ids[v as usize]).collect(),
        first_index[last],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_are_named_by_their_last_edge_in_the_file() {
        assert_eq!(cycle_message(&[(0, 1), (1, 2), (0, 2)], |i| i), None);
        assert_eq!(cycle_message(&[], |i| i), None);
        let tail = "; a task depends only on tasks submitted before it, so a runtime never writes one";
        // 3 → 0 closes 0 → 1 → 3 (2 hangs off the cycle).
        assert_eq!(
            cycle_message(&[(0, 1), (1, 3), (1, 2), (4294967299, 0), (3, 0)], |i| i + 10).unwrap(),
            format!("edges[14] (pred 3, succ 0) closes a cycle: t0 → t1 → t3 → t0{tail}")
        );
        assert_eq!(
            cycle_message(&[(0, 1), (5, 5)], |i| i).unwrap(),
            format!("edges[1] (pred 5, succ 5) closes a cycle: t5 → t5{tail}")
        );
        // A long one shows its ends and its length; a repeated edge counts at its first place.
        let mut ring: Vec<(u64, u64)> = (0..20).map(|i| (i, (i + 1) % 20)).collect();
        ring.insert(0, (7, 8));
        assert_eq!(
            cycle_message(&ring, |i| i).unwrap(),
            format!(
                "edges[20] (pred 19, succ 0) closes a cycle: t0 → t1 → t2 → t3 → t4 → … → t16 → t17 → \
                 t18 → t19 → t0 (20 tasks){tail}"
            )
        );
    }
}
