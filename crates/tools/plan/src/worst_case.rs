//! The dependency pool's worst case on a runtime that reclaims (tmr), from the recorded graph.
//!
//! On tmr a consumer takes a dep-pool entry of its own ring for each producer still pending
//! when it is wired, and gives them back when it retires. How many producers are still pending
//! depends on how far the schedulers got, so a measured minimum holds only for runs as fast as
//! the ones measured (a loaded machine needed more: `docs/sizing-rings.md`, Limits). The worst
//! case does not depend on timing: no producer has completed yet.
//!
//! # The bound
//!
//! A ring with task window `W` has at most `W − 1` tasks in flight, the newest included, and
//! retires them in order. When task `t` of ring `r` is wired, everything of ring `r` older than
//! `t − (W − 2)` has retired, so it is complete: only a producer of ring `r` at most `W − 2`
//! behind `t`, or a producer of another ring, can still be pending. The entries in use are
//! those of the tasks in flight. So the pool needs at most, over every `t`, the sum over the
//! `W − 1` tasks ending at `t` of their producers that can be pending; a run whose schedulers
//! complete nothing until the window stops the orchestration needs exactly that.
//! [`DepPoolWorstCase::at`] computes it for any window, in one pass over the edges.
//!
//! The fanin spill pool (sized by the same key) takes, per task, the producers beyond 64 that
//! the tensor map still holds, never more than the producers counted here.

use std::collections::BTreeMap;
use std::path::Path;

use serde::de::IgnoredAny;
use simpler_artifacts::deps::{read_deps, split_task_id, DepsReadError, DepsSink, EdgeEnds};

use crate::analysis::RINGS;

/// A producer in another ring than its consumer: it can be pending whatever the window.
const OTHER_RING: u32 = u32::MAX;

/// Per ring, every consumer's producers as distances back in the ring: what
/// [`DepPoolWorstCase::at`] needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepPoolWorstCase {
    /// Per ring: `(consumer local id, distances of its distinct producers)`, in local-id
    /// order; a producer of another ring has distance [`OTHER_RING`].
    rings: [Vec<(u32, Vec<u32>)>; RINGS],
}

impl DepPoolWorstCase {
    /// Reads the edges of the deps.json at `path`.
    pub fn read(path: &Path) -> Result<DepPoolWorstCase, DepsReadError> {
        let mut sink = EdgeCollector::default();
        read_deps(path, &mut sink)?;
        Ok(DepPoolWorstCase::from_edges(sink.edges))
    }

    /// The worst case of the graph with these `(producer, consumer)` edges (raw task ids;
    /// duplicates count once).
    pub fn from_edges(edges: impl IntoIterator<Item = (u64, u64)>) -> DepPoolWorstCase {
        // Consumer (ring, local) -> distinct producers.
        let mut fanin: BTreeMap<(u8, u32), Vec<u64>> = BTreeMap::new();
        for (pred, succ) in edges {
            fanin.entry(split_task_id(succ)).or_default().push(pred);
        }
        let mut rings: [Vec<(u32, Vec<u32>)>; RINGS] = Default::default();
        for ((ring, local), mut preds) in fanin {
            let Some(out) = rings.get_mut(usize::from(ring)) else {
                continue; // not a ring of this runtime: read_deps' consumers refuse such ids
            };
            preds.sort_unstable();
            preds.dedup();
            let distances = preds
                .into_iter()
                .map(|p| match split_task_id(p) {
                    (r, l) if r == ring && l < local => local - l,
                    _ => OTHER_RING,
                })
                .collect();
            out.push((local, distances));
        }
        DepPoolWorstCase { rings }
    }

    /// The most entries ring `ring` can have in use with task window `window`, whatever the
    /// timing (see the module's documentation).
    pub fn at(&self, ring: usize, window: u64) -> u64 {
        let Some(consumers) = self.rings.get(ring) else {
            return 0;
        };
        // In flight at once: at most window − 1 tasks, so local ids t − span ..= t.
        let span = window.saturating_sub(2);
        let pending = |distances: &[u32]| -> u64 {
            distances
                .iter()
                .filter(|&&d| d == OTHER_RING || u64::from(d) <= span)
                .count() as u64
        };
        let (mut first, mut sum, mut most) = (0usize, 0u64, 0u64);
        for (i, (local, distances)) in consumers.iter().enumerate() {
            sum += pending(distances);
            while u64::from(*local) - u64::from(consumers[first].0) > span {
                sum -= pending(&consumers[first].1);
                first += 1;
            }
            most = most.max(sum);
            debug_assert!(first <= i);
        }
        most
    }
}

/// Keeps the ends of every edge; skips tasks and tensors.
#[derive(Default)]
struct EdgeCollector {
    edges: Vec<(u64, u64)>,
}

impl DepsSink for EdgeCollector {
    type Task = IgnoredAny;
    type Tensor = IgnoredAny;
    type Edge = EdgeEnds;

    fn task(&mut self, _: IgnoredAny) {}
    fn tensor(&mut self, _: IgnoredAny) {}
    fn edge(&mut self, edge: EdgeEnds) {
        self.edges.push((edge.pred, edge.succ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simpler_artifacts::deps::make_task_id;

    fn id(ring: u8, local: u32) -> u64 {
        make_task_id(ring, local)
    }

    #[test]
    fn a_chain_needs_one_entry_per_task_in_flight() {
        // 0 <- 1 <- 2 <- ... <- 99 on ring 0.
        let w = DepPoolWorstCase::from_edges((1..100).map(|t| (id(0, t - 1), id(0, t))));
        // Window 4: three tasks in flight, each but the oldest waiting on the one before.
        assert_eq!(w.at(0, 4), 3);
        assert_eq!(w.at(0, 8), 7);
        // Larger than the graph: every edge at once.
        assert_eq!(w.at(0, 1024), 99);
        assert_eq!(w.at(1, 1024), 0);
    }

    #[test]
    fn producers_too_far_back_in_the_ring_have_retired() {
        // Task 10 reads task 0 (distance 10) and task 9 (distance 1); task 11 reads task 0.
        let w = DepPoolWorstCase::from_edges([
            (id(0, 0), id(0, 10)),
            (id(0, 9), id(0, 10)),
            (id(0, 0), id(0, 11)),
        ]);
        // Window 8: at most 7 in flight, so task 0 has retired when 10 and 11 are wired.
        assert_eq!(w.at(0, 8), 1);
        // Window 16: it may still be pending for both.
        assert_eq!(w.at(0, 16), 3);
        // Window 12: span 10 reaches task 0 from task 10, not from task 11.
        assert_eq!(w.at(0, 12), 2);
    }

    #[test]
    fn producers_of_other_rings_always_count_and_duplicates_once() {
        // Ring 1's tasks 5 and 500 each read ring 0's task 3, named twice.
        let w = DepPoolWorstCase::from_edges([
            (id(0, 3), id(1, 5)),
            (id(0, 3), id(1, 5)),
            (id(0, 3), id(1, 500)),
        ]);
        assert_eq!(w.at(1, 4), 1);
        assert_eq!(w.at(1, 1024), 2);
        assert_eq!(w.at(0, 1024), 0);
    }

    #[test]
    fn the_window_slides_over_gaps_in_the_local_ids() {
        // Consumers at locals 2 and 6, two producers each (other ring): window 4 (span 2)
        // never holds both; window 8 (span 6) does.
        let edges = [2u32, 6]
            .into_iter()
            .flat_map(|t| [(id(0, 0), id(1, t)), (id(0, 1), id(1, t))]);
        let w = DepPoolWorstCase::from_edges(edges);
        assert_eq!(w.at(1, 4), 2);
        assert_eq!(w.at(1, 8), 4);
    }
}
