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
//!   (DEP_POOL_OVERFLOW), naming the pinning scope. The dep pool's hold is the recorded run's:
//!   entries are taken only for producers still pending, so that prediction is
//!   timing-dependent and says so.
//!
//! A sample carries only its own ring's counters, so what a ring allocated between two of its
//! boundaries may have come anywhere in between: predictions are ordered by the earliest
//! moment each could happen, and when another could have come first ([`Verdict::first`]) the
//! report names them all rather than guess.
//!
//! A value at or above the held amount is not proven safe for the heap on tmr (an allocation
//! never straddles the heap's end, so a heap below three times the hold can deadlock where
//! the wrap falls, [`crate::analysis::heap_safe`]) nor for the dep pool below its worst case
//! (timing): [`Verdict::unproven`] says which, and the exit status tells a script apart
//! ([`EXIT_DEADLOCK`], [`EXIT_UNPROVEN`]).

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
    /// Index of the ring's boundary before `sample`: the capacity was exceeded after it.
    pub after: usize,
    /// Whether the prediction rests on the recorded run's timing (the dep pool on tmr).
    pub timing_dependent: bool,
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
                after: e.after,
                timing_dependent: res == RingResource::DepPool && analysis.reclaims,
            });
        }
    }
    // Earliest possible moment first; within one task the window is checked first
    // (admission, then the slot, then the heap; dep entries come later in the submit).
    out.sort_by_key(|p| (p.after, p.sample, p.resource as usize));
    out
}

/// `--check`'s exit status when a deadlock is predicted.
pub const EXIT_DEADLOCK: u8 = 5;
/// `--check`'s exit status when none is predicted but some size is not proven safe.
pub const EXIT_UNPROVEN: u8 = 6;

/// What `--check` concludes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Every predicted fatal, earliest possible first ([`predict`]).
    pub predictions: Vec<Prediction>,
    /// How many of the leading predictions could each be the one the run stops on: those
    /// whose stretch between boundaries overlaps the first's (1 when the order is certain, 0
    /// without a prediction).
    pub first: usize,
    /// Sizes not predicted to deadlock but not proven safe, one line each.
    pub unproven: Vec<String>,
    /// Sizes below what the recorded run never waited at (tmr), one line each: the run waits
    /// for reclaim there, so a task that holds the ring's oldest slot for the deadlock timeout
    /// (500 ms, the original's rule) stops it. Said, not counted in the exit status: the
    /// recording holds no kernel durations to prove or refute it.
    pub waits: Vec<String>,
}

impl Verdict {
    /// The exit status: 0 (no deadlock predicted, every size proven), [`EXIT_DEADLOCK`] or
    /// [`EXIT_UNPROVEN`].
    pub fn status(&self) -> u8 {
        if !self.predictions.is_empty() {
            EXIT_DEADLOCK
        } else if !self.unproven.is_empty() {
            EXIT_UNPROVEN
        } else {
            0
        }
    }
}

/// Predicts `proposed` on `analysis` and says which sizes are not proven safe.
pub fn verdict(analysis: &Analysis, proposed: &RuntimeEnv) -> Verdict {
    let predictions = predict(analysis, proposed);
    let first = predictions.first().map_or(0, |f| {
        predictions
            .iter()
            .take_while(|p| p.after < f.sample || *p == f)
            .count()
    });
    let caps = effective(analysis, proposed);
    let mut unproven = Vec::new();
    for ring in (0..RINGS).filter(|&r| analysis.rings_used[r]) {
        let heap = caps[RingResource::Heap as usize][ring];
        if let (Some(safe), Some(f)) = (
            analysis.heap_safe(ring),
            analysis.figure(RingResource::Heap, ring),
        ) {
            if heap < safe && heap >= f.held {
                unproven.push(format!(
                    "ring_heap ring {ring}: {heap} is at least the {} bytes open scopes hold, but below {safe} (3 x that) a heap can deadlock where the wrap falls; run `simpler plan` to try it",
                    f.held
                ));
            }
        }
        let dep = caps[RingResource::DepPool as usize][ring];
        let Some(f) = analysis.figure(RingResource::DepPool, ring) else {
            continue;
        };
        if !analysis.reclaims || dep < f.held {
            continue;
        }
        let window = caps[RingResource::TaskWindow as usize][ring];
        match &analysis.dep_pool_worst {
            Some(w) if dep >= w.at(ring, window) => {}
            Some(w) => unproven.push(format!(
                "ring_dep_pool ring {ring}: {dep} is at least the {} entries the recorded run held, but its need depends on timing and its worst case at ring_task_window={window} is {}",
                f.held,
                w.at(ring, window)
            )),
            None => unproven.push(format!(
                "ring_dep_pool ring {ring}: {dep} is at least the {} entries the recorded run held, but its need depends on timing and the recording has no deps.json for its worst case",
                f.held
            )),
        }
    }
    let mut waits = Vec::new();
    if analysis.reclaims {
        for f in &analysis.figures {
            if f.resource == RingResource::DepPool {
                continue; // its waits are the unproven lines' timing already
            }
            let size = caps[f.resource as usize][f.ring];
            if size < f.never_waits {
                waits.push(format!(
                    "{} ring {}: {size} is below {}, the size at which the recorded run never waited",
                    f.resource.key(),
                    f.ring,
                    f.never_waits
                ));
            }
        }
    }
    Verdict {
        predictions,
        first,
        unproven,
        waits,
    }
}
