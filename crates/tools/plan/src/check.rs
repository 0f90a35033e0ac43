//! `simpler plan --check KEY=VALUE[,..]`: predicts from the recorded data, without running,
//! whether a proposed configuration deadlocks, on which ring and at which scope site.
//!
//! The proposed values are laid over the capacities the recorded run used (a key or ring not
//! named keeps the recorded size). The first boundary, in run order, at which what open scopes
//! hold no longer fits is where the run stops:
//!
//! - task window `w`: the run stops once a ring holds `w − 1` tasks and needs one more. When
//!   everything held is the submitting scope's own tasks the scope-admission check fires first
//!   (SCOPE_DEADLOCK, naming that scope); otherwise the window wait finds the head pinned
//!   (FLOW_CONTROL_DEADLOCK, naming the pinning scope);
//! - heap `h` / dep pool `d`: held bytes > `h` (HEAP_RING_DEADLOCK) / held entries > `d`
//!   (DEP_POOL_OVERFLOW), naming the pinning scope. A value at or above the held amount can
//!   still fail (heap fragmentation at the wrap, timing of the dep pool): `--check` says it is
//!   not predicted to deadlock, the verified search says whether it runs.

use simpler_runtime::config::RingResource;
use simpler_runtime::{FatalCode, RuntimeEnv};

use crate::analysis::{amount, needed, Analysis, RINGS};

/// A predicted fatal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prediction {
    /// The fatal code the run would stop with.
    pub code: FatalCode,
    /// The ring.
    pub ring: usize,
    /// The resource.
    pub resource: RingResource,
    /// The capacity proposed for it.
    pub capacity: u64,
    /// What open scopes hold at that moment (tasks, bytes or entries).
    pub held: u64,
    /// The scope site the fatal names (the submitting scope for SCOPE_DEADLOCK, the pinning
    /// scope otherwise).
    pub site: String,
    /// Index of the sample at which the hold first exceeds the capacity.
    pub sample: usize,
}

impl std::fmt::Display for Prediction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = match self.resource {
            RingResource::TaskWindow => "tasks",
            RingResource::Heap => "bytes",
            RingResource::DepPool => "entries",
        };
        write!(
            f,
            "fatal {} ({}) on ring {}: {}={} but the open scopes pinned by the scope at {} come to hold {} {unit} (needs {})",
            self.code.code(),
            self.code.name(),
            self.ring,
            self.resource.key(),
            self.capacity,
            self.site,
            self.held,
            needed(self.resource, self.held),
        )
    }
}

/// The capacities to check: `proposed` over the recorded run's (a ring without a recorded
/// capacity uses the key's default).
pub fn effective(analysis: &Analysis, proposed: &RuntimeEnv) -> [[u64; RINGS]; RingResource::COUNT] {
    let mut out = [[0u64; RINGS]; RingResource::COUNT];
    for res in RingResource::ALL {
        let recorded = match res {
            RingResource::TaskWindow => analysis.metadata.task_window_max.as_ref(),
            RingResource::Heap => analysis.metadata.heap_max.as_ref(),
            RingResource::DepPool => analysis.metadata.dep_pool_max.as_ref(),
        };
        for (ring, slot) in out[res as usize].iter_mut().enumerate() {
            *slot = proposed
                .get(res, ring)
                .or_else(|| recorded.and_then(|c| c.get(ring).copied()))
                .unwrap_or(res.decl().default);
        }
    }
    out
}

/// Every predicted fatal (the first per ring and resource), earliest first: the first is the
/// one the run stops with. Empty when the configuration is not predicted to deadlock.
pub fn predict(analysis: &Analysis, proposed: &RuntimeEnv) -> Vec<Prediction> {
    let caps = effective(analysis, proposed);
    let mut out: Vec<Prediction> = Vec::new();
    for res in RingResource::ALL {
        for (ring, &cap) in caps[res as usize].iter().enumerate() {
            let hit = analysis
                .events
                .iter()
                .filter(|e| e.ring == ring)
                .find(|e| needed(res, amount(e, res)) > cap);
            let Some(e) = hit else { continue };
            let (code, site) = match res {
                // hbg: every exhaustion is at once, naming the scope that is submitting.
                RingResource::TaskWindow if !analysis.reclaims => {
                    (FatalCode::FlowControlDeadlock, e.current_site.clone())
                }
                RingResource::Heap if !analysis.reclaims => {
                    (FatalCode::HeapRingDeadlock, e.current_site.clone())
                }
                RingResource::DepPool if !analysis.reclaims => {
                    (FatalCode::DepPoolOverflow, e.current_site.clone())
                }
                RingResource::TaskWindow if e.direct_tasks >= e.tasks => {
                    (FatalCode::ScopeDeadlock, e.current_site.clone())
                }
                RingResource::TaskWindow => (FatalCode::FlowControlDeadlock, e.pinning_site.clone()),
                RingResource::Heap => (FatalCode::HeapRingDeadlock, e.pinning_site.clone()),
                RingResource::DepPool => (FatalCode::DepPoolOverflow, e.pinning_site.clone()),
            };
            out.push(Prediction {
                code,
                ring,
                resource: res,
                capacity: cap,
                held: amount(e, res),
                site,
                sample: e.sample,
            });
        }
    }
    // Within one boundary interval the task window is checked first (admission, then the
    // slot, then the heap; dep entries come later in the submit).
    out.sort_by_key(|p| (p.sample, p.resource as usize));
    out
}
