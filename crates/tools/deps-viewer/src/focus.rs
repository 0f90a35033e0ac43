//! `--focus TASK --depth K`: restrict a view to the dependency neighbourhood of one task.
//!
//! The neighbourhood is the task itself, its ancestors up to `K` hops upstream and its
//! descendants up to `K` hops downstream (following every edge, whatever the edge mode). Edges
//! are shown between any two shown tasks.

use simpler_artifacts::deps::make_task_id;

use crate::graph::{Adjacency, Graph};
use crate::{Error, ErrorKind};

/// Parses a task reference: a raw id (`4294967296`), or `RING,LOCAL` with optional
/// parentheses and spaces (`1,0`, `(1, 0)`). Anything else is [`ErrorKind::InvalidFocus`].
pub fn parse_task_ref(text: &str) -> Result<u64, Error> {
    let trimmed = text.trim();
    let inner = trimmed
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or(trimmed);
    let bad = |source| ErrorKind::InvalidFocus {
        text: text.to_string(),
        source,
    };
    match inner.split_once(',') {
        None => Ok(inner.trim().parse::<u64>().map_err(bad)?),
        Some((ring, local)) => {
            let ring: u8 = ring.trim().parse().map_err(bad)?;
            let local: u32 = local.trim().parse().map_err(bad)?;
            Ok(make_task_id(ring, local))
        }
    }
}

/// Returns the node mask of the neighbourhood of task `id` within `depth` hops
/// ([`ErrorKind::FocusNotInGraph`] if the graph has no such task).
pub fn neighbourhood(graph: &Graph, id: u64, depth: u32) -> Result<Vec<bool>, Error> {
    let Some(center) = graph.index_of(id) else {
        return Err(ErrorKind::FocusNotInGraph { id }.into());
    };
    let adj = Adjacency::new(graph, |_| true);
    let mut mask = vec![false; graph.len()];
    mask[center] = true;
    for upstream in [true, false] {
        let mut visited = vec![false; graph.len()];
        visited[center] = true;
        let mut frontier = vec![center as u32];
        for _ in 0..depth {
            let mut next = Vec::new();
            for &v in &frontier {
                let peers = if upstream {
                    adj.fanin(v as usize)
                } else {
                    adj.fanout(v as usize)
                };
                for &w in peers {
                    if !visited[w as usize] {
                        visited[w as usize] = true;
                        mask[w as usize] = true;
                        next.push(w);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
    }
    Ok(mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use simpler_artifacts::deps::EdgeSource::Creator;

    #[test]
    fn task_refs_parse_raw_and_ring_local_forms() {
        assert_eq!(parse_task_ref("4294967296").unwrap(), 4_294_967_296);
        assert_eq!(parse_task_ref("1,2").unwrap(), 4_294_967_298);
        assert_eq!(parse_task_ref("(1, 2)").unwrap(), 4_294_967_298);
        assert_eq!(parse_task_ref(" 7 ").unwrap(), 7);
        let err = parse_task_ref("t3").unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid --focus task 't3': expected a raw task id (e.g. 4294967296) or RING,LOCAL \
             (e.g. 1,0)"
        );
        assert!(parse_task_ref("300,1").is_err());
    }

    #[test]
    fn neighbourhood_follows_both_directions_up_to_depth() {
        // Chain 0 -> 1 -> 2 -> 3 -> 4 plus a side branch 5 -> 2 and 2 -> 6.
        let edges = [(0, 1), (1, 2), (2, 3), (3, 4), (5, 2), (2, 6)];
        let g = Graph::from_parts(std::iter::empty(), edges.iter().map(|&(p, s)| (p, s, Creator)), 0);
        let shown = |depth| -> Vec<u64> {
            let mask = neighbourhood(&g, 2, depth).unwrap();
            (0..g.len()).filter(|&n| mask[n]).map(|n| g.id(n)).collect()
        };
        assert_eq!(shown(0), vec![2]);
        assert_eq!(shown(1), vec![1, 2, 3, 5, 6]);
        assert_eq!(shown(2), vec![0, 1, 2, 3, 4, 5, 6]);
        let err = neighbourhood(&g, 99, 1).unwrap_err().to_string();
        assert_eq!(err, "--focus task (0, 99) (99) is not in the graph");
    }
}
