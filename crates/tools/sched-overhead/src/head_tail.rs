//! Part 4, head and tail overhead per row (`../shared/reference/timing-analysis.md` §3,
//! "Head/Tail OH"): on each core in start order, `head = start − dispatch`, or
//! `min(start − dispatch, start − previous end)` after an earlier row, clamped at 0;
//! `tail = max(0, finish − end)`; and their distributions.

use crate::adapter::TimedTask;
use crate::tasks::rows_by_core;

/// The percentiles reported, in percent.
pub const PERCENTILES: [u32; 7] = [10, 25, 50, 75, 90, 95, 99];

/// A distribution of ns values.
#[derive(Debug, Clone, PartialEq)]
pub struct Distribution {
    /// The value at each of [`PERCENTILES`]: element `min(⌊n·p/100⌋, n − 1)` of the sorted
    /// values.
    pub percentiles: [u64; 7],
    /// Largest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
    /// Sum.
    pub total: u64,
    /// Values.
    pub count: usize,
}

impl Distribution {
    /// The distribution of `values` (`None` when empty).
    pub fn of(mut values: Vec<u64>) -> Option<Distribution> {
        if values.is_empty() {
            return None;
        }
        values.sort_unstable();
        let n = values.len();
        // Saturating: no input wraps the total (each value is at most 2^53 ns, the reader's bound).
        let total = values.iter().fold(0u64, |t, &v| t.saturating_add(v));
        let sum = values.iter().map(|&v| v as f64).sum::<f64>();
        Some(Distribution {
            percentiles: PERCENTILES.map(|p| values[(n * p as usize / 100).min(n - 1)]),
            max: values[n - 1],
            mean: sum / n as f64,
            total,
            count: n,
        })
    }
}

/// Head and tail of every row, core by core in start order.
pub fn heads_and_tails(rows: &[TimedTask]) -> (Vec<u64>, Vec<u64>) {
    let mut heads = Vec::with_capacity(rows.len());
    let mut tails = Vec::with_capacity(rows.len());
    for (_, core_rows) in rows_by_core(rows) {
        let mut prev_end: Option<u64> = None;
        for r in core_rows {
            let (Some(dispatch), Some(finish)) = (r.dispatch_ns, r.finish_ns) else {
                continue;
            };
            let start = i128::from(r.start_ns);
            let mut head = start - i128::from(dispatch);
            if let Some(pe) = prev_end {
                head = head.min(start - i128::from(pe));
            }
            heads.push(head.max(0) as u64);
            tails.push(finish.saturating_sub(r.end_ns));
            prev_end = Some(r.end_ns);
        }
    }
    (heads, tails)
}
