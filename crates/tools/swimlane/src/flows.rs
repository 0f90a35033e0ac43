//! Dependency arrows: one flow per unique `(pred, succ)` pair whose two tasks have anchors
//! ([`crate::anchors`]), from the predecessor's anchor start to the successor's anchor start.
//!
//! A flow is named [`HB_VIOLATION`] when the predecessor's end is later than the successor's
//! start (the successor started before everything it depends on had finished), else
//! [`DEPENDENCY`]. Flow ids are 1, 2, ... in pair order, one per pair.

use std::io::{self, Write};

use crate::anchors::{Anchor, Anchors};
use crate::trace::{FlowEnd, TraceWriter};

/// Name of a flow whose order was respected.
pub const DEPENDENCY: &str = "dependency";
/// Name of a flow whose successor started before its predecessor ended.
pub const HB_VIOLATION: &str = "hb_violation";

/// What [`write_flows`] drew and skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowCounts {
    /// Flows named `dependency`.
    pub dependency: usize,
    /// Flows named `hb_violation`.
    pub hb_violation: usize,
    /// Pairs not drawn because an endpoint has no row at all.
    pub without_row: usize,
    /// The first such pair, for the report.
    pub first_without_row: Option<(u64, u64)>,
}

/// The flow name for an arrow from `pred` to `succ`.
pub fn classify(pred: &Anchor, succ: &Anchor) -> &'static str {
    if pred.end_ns > succ.start_ns {
        HB_VIOLATION
    } else {
        DEPENDENCY
    }
}

/// Writes one flow per pair of `pairs` (unique, sorted) whose endpoints are anchored.
pub fn write_flows<W: Write>(
    out: &mut TraceWriter<W>,
    pairs: &[(u64, u64)],
    anchors: &Anchors,
) -> io::Result<FlowCounts> {
    let mut counts = FlowCounts::default();
    for &(pred, succ) in pairs {
        let (Some(p), Some(s)) = (anchors.get(pred), anchors.get(succ)) else {
            counts.without_row += 1;
            counts.first_without_row.get_or_insert((pred, succ));
            continue;
        };
        let name = classify(p, s);
        if name == HB_VIOLATION {
            counts.hb_violation += 1;
        } else {
            counts.dependency += 1;
        }
        let id = (counts.dependency + counts.hb_violation) as u64;
        let from = FlowEnd {
            track: p.track,
            ts_ns: p.start_ns,
        };
        let to = FlowEnd {
            track: s.track,
            ts_ns: s.start_ns,
        };
        out.flow(id, name, from, to)?;
    }
    Ok(counts)
}
