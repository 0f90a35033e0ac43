//! Lanes: slices on one Perfetto track must nest, so intervals of one group (a core, a
//! scheduler thread) that overlap without nesting are spread over extra lanes.
//!
//! Greedy interval partitioning: intervals are taken in start order and each goes to the
//! lowest-numbered lane that is free at its start, which uses the fewest lanes possible. An
//! interval `[start, end)` frees its lane at `end`, so back-to-back slices share a lane.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One interval to place: its group and `[start, end)` in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    /// Which track family it belongs to (core id, scheduler thread, ...).
    pub group: u32,
    /// First nanosecond.
    pub start: u64,
    /// End (exclusive); values below `start` are treated as `start`.
    pub end: u64,
}

/// Returns the lane of each interval (0 for the first lane of its group).
pub fn assign(intervals: &[Interval]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..intervals.len() as u32).collect();
    order.sort_unstable_by_key(|&i| {
        let v = intervals[i as usize];
        (v.group, v.start, v.end, i)
    });
    let mut lanes = vec![0u32; intervals.len()];
    let mut busy: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let mut free: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
    let mut next_lane = 0u32;
    let mut group = None;
    for i in order {
        let v = intervals[i as usize];
        if group != Some(v.group) {
            group = Some(v.group);
            busy.clear();
            free.clear();
            next_lane = 0;
        }
        while let Some(&Reverse((end, lane))) = busy.peek() {
            if end > v.start {
                break;
            }
            busy.pop();
            free.push(Reverse(lane));
        }
        let lane = match free.pop() {
            Some(Reverse(lane)) => lane,
            None => {
                next_lane += 1;
                next_lane - 1
            }
        };
        busy.push(Reverse((v.end.max(v.start), lane)));
        lanes[i as usize] = lane;
    }
    lanes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(group: u32, start: u64, end: u64) -> Interval {
        Interval { group, start, end }
    }

    #[test]
    fn back_to_back_intervals_share_a_lane() {
        assert_eq!(
            assign(&[iv(0, 10, 20), iv(0, 0, 10), iv(0, 20, 20), iv(0, 20, 30)]),
            [0, 0, 0, 0]
        );
    }

    #[test]
    fn overlaps_take_the_lowest_free_lane_per_group() {
        let v = [
            iv(0, 0, 100),
            iv(0, 10, 20),
            iv(0, 15, 30),
            iv(0, 25, 40),
            iv(1, 5, 50),
            iv(0, 100, 110),
        ];
        assert_eq!(assign(&v), [0, 1, 2, 1, 0, 0]);
    }

    #[test]
    fn inverted_intervals_do_not_panic() {
        assert_eq!(assign(&[iv(3, 50, 10), iv(3, 50, 60)]), [0, 0]);
    }
}
