//! The resources, the three per-scope metrics, their series, peaks, capacities and usage
//! percentages (spec §1 "Reading the report", the metric table).
//!
//! For task_window, heap and dep_pool, `start` is the ring's tail and `end` its head at a scope
//! boundary; all counters are monotonic, so each metric is one exact subtraction:
//!
//! | metric | formula |
//! |---|---|
//! | `scope_high_water` | `end.head − begin.tail` |
//! | `real_occupancy` | `end.head − end.tail` |
//! | `scope_alloc` | `end.head − begin.head` |
//!
//! TensorMap has one in-use value, so only `real_occupancy` (the end sample's `tensormap`).

use simpler_artifacts::scope_stats::{Metadata, Sample};

/// One of the four measured resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Resource {
    TaskWindow,
    Heap,
    DepPool,
    TensorMap,
}

/// The three ring resources, in report order (also the index into [`RingSeries::values`]).
pub(crate) const RING_RESOURCES: [Resource; 3] = [Resource::TaskWindow, Resource::Heap, Resource::DepPool];

impl Resource {
    /// The resource's name as the spec writes it.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Resource::TaskWindow => "task_window",
            Resource::Heap => "heap",
            Resource::DepPool => "dep_pool",
            Resource::TensorMap => "tensormap",
        }
    }

    /// Display label.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Resource::TaskWindow => "task_window",
            Resource::Heap => "heap",
            Resource::DepPool => "dep_pool",
            Resource::TensorMap => "TensorMap",
        }
    }

    /// Accent colour of the resource.
    pub(crate) fn color(self) -> &'static str {
        match self {
            Resource::TaskWindow => "#2563eb",
            Resource::Heap => "#059669",
            Resource::DepPool => "#d97706",
            Resource::TensorMap => "#7c3aed",
        }
    }

    /// Unit of its values.
    pub(crate) fn unit(self) -> Unit {
        match self {
            Resource::TaskWindow => Unit::Count("slots"),
            Resource::Heap => Unit::Bytes,
            Resource::DepPool | Resource::TensorMap => Unit::Count("entries"),
        }
    }

    /// One-line definition for the Formula Guide.
    pub(crate) fn description(self) -> &'static str {
        match self {
            Resource::TaskWindow => {
                "Task-window slots of a ring: head = next task id allocated, tail = oldest task \
                 still alive. Exhausting it stalls task submission on that ring."
            }
            Resource::Heap => {
                "Ring heap bytes for task outputs: head = cumulative bytes allocated, tail = \
                 cumulative bytes reclaimed (monotonic, never wrapping)."
            }
            Resource::DepPool => {
                "Dependency-list pool entries of a ring, as published by the orchestrator after \
                 wiring each task's fan-in: head = pool top, tail = released boundary."
            }
            Resource::TensorMap => {
                "Global tensormap entries in use (producer lookup for dependency tracking). Not \
                 per ring: one in-use value, sampled at each scope exit."
            }
        }
    }

    /// The metric whose peak decides how close the resource is to capacity.
    pub(crate) fn risk_metric(self) -> Metric {
        match self {
            Resource::TensorMap => Metric::Live,
            _ => Metric::HighWater,
        }
    }
}

/// How a resource's values are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Bytes, shown with binary prefixes.
    Bytes,
    /// Whole items, with the item's name.
    Count(&'static str),
}

/// One of the three per-scope metrics (also the index into a resource's series).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    HighWater,
    Live,
    Alloc,
}

/// The metrics of a ring resource, in series order.
pub(crate) const METRICS: [Metric; 3] = [Metric::HighWater, Metric::Live, Metric::Alloc];

impl Metric {
    /// The spec's metric name.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Metric::HighWater => "scope_high_water",
            Metric::Live => "real_occupancy",
            Metric::Alloc => "scope_alloc",
        }
    }

    /// Chart label.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Metric::HighWater => "High water",
            Metric::Live => "Live at exit",
            Metric::Alloc => "Alloc per scope",
        }
    }

    /// Line colour.
    pub(crate) fn color(self) -> &'static str {
        match self {
            Metric::HighWater => "#dc2626",
            Metric::Live => "#059669",
            Metric::Alloc => "#2563eb",
        }
    }

    /// The formula, as in the spec's metric table.
    pub(crate) fn formula(self) -> &'static str {
        match self {
            Metric::HighWater => "end.head − begin.tail",
            Metric::Live => "end.head − end.tail",
            Metric::Alloc => "end.head − begin.head",
        }
    }

    /// What the metric tells you.
    pub(crate) fn meaning(self) -> &'static str {
        match self {
            Metric::HighWater => {
                "Upper bound on the occupancy this scope reached: entry backlog plus everything \
                 it allocated, without subtracting mid-scope releases. Not bounded by capacity."
            }
            Metric::Live => {
                "What is still occupied at scope exit (the live level on leaving). Always within \
                 [0, capacity]."
            }
            Metric::Alloc => {
                "How far the allocation frontier advanced over the scope: its total allocation \
                 throughput (can exceed capacity)."
            }
        }
    }
}

/// The metrics of one paired scope: `ring[resource][metric]` (`None` when the samples do not
/// carry the resource: dep_pool in schema version 4) plus tensormap live entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScopeMetrics {
    pub(crate) ring: [Option<[i64; 3]>; 3],
    pub(crate) tensormap_live: i64,
}

/// `a − b` on wide integers, saturated into `i64`.
fn delta(a: i128, b: i128) -> i64 {
    i64::try_from(a - b).unwrap_or(if a > b { i64::MAX } else { i64::MIN })
}

fn triple(begin_tail: i128, begin_head: i128, end_tail: i128, end_head: i128) -> [i64; 3] {
    [
        delta(end_head, begin_tail),
        delta(end_head, end_tail),
        delta(end_head, begin_head),
    ]
}

/// Computes the metrics of the scope bounded by `begin` and `end`.
pub(crate) fn scope_metrics(begin: &Sample, end: &Sample) -> ScopeMetrics {
    let w = |v: i64| i128::from(v);
    let u = |v: u64| i128::from(v);
    let dep_pool = match (
        begin.dep_pool_start,
        begin.dep_pool_end,
        end.dep_pool_start,
        end.dep_pool_end,
    ) {
        (Some(bt), Some(bh), Some(et), Some(eh)) => Some(triple(w(bt), w(bh), w(et), w(eh))),
        _ => None,
    };
    ScopeMetrics {
        ring: [
            Some(triple(
                w(begin.task_window_start),
                w(begin.task_window_end),
                w(end.task_window_start),
                w(end.task_window_end),
            )),
            Some(triple(
                u(begin.heap_start),
                u(begin.heap_end),
                u(end.heap_start),
                u(end.heap_end),
            )),
            dep_pool,
        ],
        tensormap_live: end.tensormap,
    }
}

/// The metric series of one ring, one entry per paired scope in completion order.
#[derive(Debug, Clone, Default)]
pub(crate) struct RingSeries {
    /// Site id of each scope.
    pub(crate) sites: Vec<u32>,
    /// `values[resource][metric][scope]`.
    pub(crate) values: [[Vec<i64>; 3]; 3],
}

impl RingSeries {
    /// Appends one scope. A resource the scope's samples do not carry gets no value (the
    /// report then shows that resource as unknown and draws none of its series).
    pub(crate) fn push(&mut self, site: u32, m: &ScopeMetrics) {
        self.sites.push(site);
        for (r, row) in m.ring.iter().enumerate() {
            for (k, v) in row.iter().flatten().enumerate() {
                self.values[r][k].push(*v);
            }
        }
    }

    /// Number of paired scopes.
    pub(crate) fn len(&self) -> usize {
        self.sites.len()
    }
}

/// The global tensormap series: live entries at each scope exit, in completion order.
#[derive(Debug, Clone, Default)]
pub(crate) struct TensorMapSeries {
    pub(crate) sites: Vec<u32>,
    pub(crate) rings: Vec<u32>,
    pub(crate) values: Vec<i64>,
}

impl TensorMapSeries {
    /// Appends one scope.
    pub(crate) fn push(&mut self, site: u32, ring: u32, live: i64) {
        self.sites.push(site);
        self.rings.push(ring);
        self.values.push(live);
    }

    /// Number of paired scopes.
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }
}

/// The largest value of a series and where it first occurs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Peak {
    pub(crate) value: i64,
    pub(crate) index: usize,
}

/// The first maximum of `values`, or `None` for an empty series.
pub(crate) fn peak(values: &[i64]) -> Option<Peak> {
    let mut best: Option<Peak> = None;
    for (index, &value) in values.iter().enumerate() {
        if best.is_none_or(|b| value > b.value) {
            best = Some(Peak { value, index });
        }
    }
    best
}

/// A resource capacity from the metadata line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Capacity {
    /// Not in the metadata: null, missing, or no entry for this ring.
    Unknown,
    /// A configured capacity; zero is a real capacity.
    Known(u64),
}

/// The capacity of `resource` on `ring` (ignored for TensorMap).
pub(crate) fn capacity(meta: &Metadata, resource: Resource, ring: u32) -> Capacity {
    let per_ring = match resource {
        Resource::TaskWindow => &meta.task_window_max,
        Resource::Heap => &meta.heap_max,
        Resource::DepPool => &meta.dep_pool_max,
        Resource::TensorMap => {
            return meta.tensormap_max.map_or(Capacity::Unknown, Capacity::Known);
        }
    };
    per_ring
        .as_ref()
        .and_then(|caps| caps.get(ring as usize))
        .map_or(Capacity::Unknown, |c| Capacity::Known(*c))
}

/// How much of a capacity a peak uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Usage {
    /// No capacity: no percentage.
    UnknownCapacity,
    /// `peak / capacity` for a positive capacity (may exceed 1).
    Ratio(f64),
    /// The capacity is zero; `used` is true when the peak is above zero.
    ZeroCapacity { used: bool },
}

/// The usage of `peak` against `cap`.
pub(crate) fn usage(peak: i64, cap: Capacity) -> Usage {
    match cap {
        Capacity::Unknown => Usage::UnknownCapacity,
        Capacity::Known(0) => Usage::ZeroCapacity { used: peak > 0 },
        Capacity::Known(c) => Usage::Ratio(peak as f64 / c as f64),
    }
}

impl Usage {
    /// The text shown in Use columns: a two-decimal percentage, or what is unknown.
    pub(crate) fn text(self) -> String {
        match self {
            Usage::UnknownCapacity => "unknown capacity".to_string(),
            Usage::Ratio(r) => format!("{:.2}%", r * 100.0),
            Usage::ZeroCapacity { used: false } => "0.00% (capacity 0)".to_string(),
            Usage::ZeroCapacity { used: true } => "over capacity 0".to_string(),
        }
    }

    /// The risk class: `danger` ≥ 80 %, `warn` ≥ 50 %, `ok` below, `muted` when unknown.
    pub(crate) fn class(self) -> &'static str {
        match self {
            Usage::UnknownCapacity => "muted",
            Usage::ZeroCapacity { used } => {
                if used {
                    "danger"
                } else {
                    "ok"
                }
            }
            Usage::Ratio(r) if r >= 0.8 => "danger",
            Usage::Ratio(r) if r >= 0.5 => "warn",
            Usage::Ratio(_) => "ok",
        }
    }

    /// How full the Use bar is drawn, in `[0, 1]`.
    pub(crate) fn fill(self) -> f64 {
        match self {
            Usage::UnknownCapacity => 0.0,
            Usage::ZeroCapacity { used } => f64::from(u8::from(used)),
            Usage::Ratio(r) => r.clamp(0.0, 1.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simpler_artifacts::scope_stats::Phase;

    fn s(tw: (i64, i64), heap: (u64, u64), dp: (i64, i64), tm: i64) -> Sample {
        Sample {
            site: "x:1".into(),
            phase: Phase::Begin,
            depth: 0,
            ring: 0,
            task_window_start: tw.0,
            task_window_end: tw.1,
            heap_start: heap.0,
            heap_end: heap.1,
            dep_pool_start: Some(dp.0),
            dep_pool_end: Some(dp.1),
            tensormap: tm,
            run_epoch: None,
            buf_seq: None,
        }
    }

    #[test]
    fn metrics_follow_the_spec_formulas() {
        // The spec's own example: begin 0/0, 0/0, 1/1; end 0/4, 0/8192, 1/6, tensormap 5.
        let m = scope_metrics(&s((0, 0), (0, 0), (1, 1), 0), &s((0, 4), (0, 8192), (1, 6), 5));
        assert_eq!(m.ring[0], Some([4, 4, 4]));
        assert_eq!(m.ring[1], Some([8192, 8192, 8192]));
        assert_eq!(m.ring[2], Some([5, 5, 5]));
        let mut old = s((0, 0), (0, 0), (1, 1), 0);
        old.dep_pool_start = None;
        old.dep_pool_end = None;
        assert_eq!(scope_metrics(&old, &old).ring[2], None);
        assert_eq!(m.tensormap_live, 5);
        // Reference UT MultiWrap: end heap 8000/10000 → alloc 10000, live 2000, high water 10000.
        let m = scope_metrics(
            &s((0, 0), (0, 0), (1, 1), 0),
            &s((0, 0), (8000, 10000), (1, 1), 0),
        );
        assert_eq!(m.ring[1], Some([10000, 2000, 10000]));
    }

    #[test]
    fn peak_is_the_first_maximum() {
        assert_eq!(peak(&[]), None);
        assert_eq!(peak(&[1, 5, 5, 2]), Some(Peak { value: 5, index: 1 }));
    }

    #[test]
    fn capacity_zero_is_real_and_missing_is_unknown() {
        let meta = Metadata {
            heap_max: Some(vec![0, 100]),
            ..Metadata::default()
        };
        assert_eq!(capacity(&meta, Resource::Heap, 0), Capacity::Known(0));
        assert_eq!(capacity(&meta, Resource::Heap, 1), Capacity::Known(100));
        assert_eq!(capacity(&meta, Resource::Heap, 2), Capacity::Unknown);
        assert_eq!(capacity(&meta, Resource::TaskWindow, 0), Capacity::Unknown);
        assert_eq!(capacity(&meta, Resource::TensorMap, 0), Capacity::Unknown);
        assert_eq!(usage(5, Capacity::Unknown).text(), "unknown capacity");
        assert_eq!(usage(5, Capacity::Known(0)).text(), "over capacity 0");
        assert_eq!(usage(0, Capacity::Known(0)).text(), "0.00% (capacity 0)");
        assert_eq!(usage(1, Capacity::Known(3)).text(), "33.33%");
        assert_eq!(usage(150, Capacity::Known(100)).fill(), 1.0);
    }
}
