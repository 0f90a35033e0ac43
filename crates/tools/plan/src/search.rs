//! The verified search: re-runs the graph with candidate sizes, bisecting each resource of each
//! used ring independently (every other value held at its "never waits" size), then confirms
//! the combination of the minimums. A candidate passes only if all `verify` runs complete with
//! a correct result.

use std::time::Duration;

use simpler_runtime::config::RingResource;
use simpler_runtime::{FatalCode, RuntimeEnv, RuntimeKind};

use crate::analysis::{round_up, Analysis, RINGS};
use crate::target::{Target, Trial};

/// How many times a failing suggestion is raised before the search gives up.
pub const RAISES: usize = 3;

/// Headroom added to a verified minimum for the suggested size, in percent.
pub const HEADROOM_PERCENT: u64 = 25;

/// The verified minimum of one resource of one ring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// The resource.
    pub resource: RingResource,
    /// The ring.
    pub ring: usize,
    /// Smallest value (as the key accepts it) with which every run passed.
    pub min: u64,
    /// The fatal of the largest value that failed (just below `min`), if one was tried.
    pub below: Option<(u64, FatalCode, String)>,
    /// Sizes above `min` that failed, with how (the heap's pass/fail is not monotonic in its
    /// size: where the wrap falls decides; `docs/sizing-rings.md`). Only the heap's are tried.
    pub failed_above: Vec<(u64, String)>,
    /// The heap: the size no wrap and no timing can deadlock ([`crate::analysis::heap_safe`]);
    /// `None` for other resources.
    pub safe: Option<u64>,
    /// The heap: its suggestion, run on its own (the other values at their never-waits sizes)
    /// and raised by the headroom until it passed, never past `safe`; `None` for other
    /// resources.
    pub suggested: Option<u64>,
}

/// The verified tensor-map capacity (global, not per ring; a workload's `tensormap_capacity`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMapVerified {
    /// Smallest capacity with which every run passed.
    pub min: usize,
    /// The fatal of the largest capacity that failed, if one was tried.
    pub below: Option<(u64, FatalCode, String)>,
    /// The suggested capacity.
    pub suggested: usize,
}

/// What the search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// Runs per candidate.
    pub verify: usize,
    /// The runtime searched.
    pub runtime: RuntimeKind,
    /// The configuration every other value is held at while one is bisected.
    pub base: RuntimeEnv,
    /// One per used ring and resource.
    pub verified: Vec<Verified>,
    /// The minimums together (unused rings at the keys' smallest values).
    pub minimum_env: RuntimeEnv,
    /// The tensor map's verified capacity.
    pub tensormap: TensorMapVerified,
    /// Whether every run of the combination of minimums passed.
    pub combination_passed: bool,
    /// How the combination of minimums failed, when it did (on tmr the dep pool's and the
    /// tensor map's needs depend on how far the schedulers got, so their minimums together
    /// can fail where each alone passed).
    pub combination_failure: Option<Trial>,
    /// The suggested sizes (minimum + [`HEADROOM_PERCENT`], rounded to what the key accepts).
    pub suggested_env: RuntimeEnv,
    /// Whether every run with the suggested sizes passed.
    pub suggested_passed: bool,
    /// Resources whose suggestion was raised because a confirmation run failed, and why.
    pub raised: Vec<String>,
    /// How the last confirmation run failed, when the suggestion did not pass.
    pub suggested_failure: Option<Trial>,
    /// Median wall time at the base ("never waits") sizes.
    pub wall_never_waits: Duration,
    /// Median wall time at the minimums (when the combination passed).
    pub wall_minimum: Option<Duration>,
    /// Runs made.
    pub runs: usize,
}

impl SearchResult {
    /// The verified figure of one ring and resource, if it was searched.
    pub fn verified(&self, resource: RingResource, ring: usize) -> Option<&Verified> {
        self.verified
            .iter()
            .find(|v| v.resource == resource && v.ring == ring)
    }
}

/// Why the search could not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseFailed(pub Trial);

struct Runner<'a> {
    target: &'a Target,
    runtime: RuntimeKind,
    verify: usize,
    runs: usize,
    /// The tensor-map capacity of the runs (`None`: the target's own).
    tensormap: Option<usize>,
}

impl Runner<'_> {
    /// `verify` runs; `Ok(walls)` when all pass, the first failure otherwise.
    fn trial(&mut self, env: &RuntimeEnv) -> Result<Vec<Duration>, Trial> {
        let mut walls = Vec::with_capacity(self.verify);
        for _ in 0..self.verify {
            self.runs += 1;
            match self.target.run_with(self.runtime, env, self.tensormap, None) {
                Trial::Passed { wall, .. } => walls.push(wall),
                other => return Err(other),
            }
        }
        Ok(walls)
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// The suggested size for a verified minimum.
pub fn suggest(resource: RingResource, min: u64) -> u64 {
    // Sizes come from recorded files: saturate instead of wrapping (the key's rule refuses a
    // size that large with a clear message).
    let v = round_up(resource, with_headroom(min));
    match resource {
        RingResource::Heap => v.div_ceil(1024).saturating_mul(1024),
        _ => v,
    }
}

/// The suggested tensor-map capacity for a verified minimum.
pub fn suggest_tensormap(min: usize) -> usize {
    // The bisection starts from the recorded capacity, a file's value.
    usize::try_from(with_headroom(min as u64)).unwrap_or(usize::MAX)
}

/// `min` plus [`HEADROOM_PERCENT`] rounded up, saturated: sizes come from recorded files.
fn with_headroom(min: u64) -> u64 {
    let with = u128::from(min) + (u128::from(min) * u128::from(HEADROOM_PERCENT)).div_ceil(100);
    u64::try_from(with).unwrap_or(u64::MAX)
}

fn simpler_core_default_tensormap() -> usize {
    simpler_runtime::CallConfig::default().tensormap_capacity
}

/// The next candidate between a failing `lo` and a passing `hi` (`None` when they are adjacent
/// in what the key accepts).
fn midpoint(resource: RingResource, lo: u64, hi: u64) -> Option<u64> {
    match resource {
        RingResource::TaskWindow => {
            let (a, b) = (lo.trailing_zeros(), hi.trailing_zeros());
            (b > a + 1).then(|| 1u64 << ((a + b) / 2))
        }
        _ => (hi > lo + 1).then(|| lo + (hi - lo) / 2),
    }
}

/// Runs the search on `target` with the figures of `analysis`.
pub fn search(
    target: &Target,
    analysis: &Analysis,
    runtime: RuntimeKind,
    verify: usize,
) -> Result<SearchResult, BaseFailed> {
    let mut r = Runner {
        target,
        runtime,
        verify: verify.max(1),
        runs: 0,
        tensormap: None,
    };
    // Base: the "never waits" sizes on used rings, the recorded sizes elsewhere; if that does
    // not pass (the heap can need more than its peak at the wrap), the recorded sizes.
    let mut base = RuntimeEnv::default();
    let mut recorded = RuntimeEnv::default();
    let caps = crate::check::effective(analysis, &RuntimeEnv::default());
    for res in RingResource::ALL {
        for (ring, &cap) in caps[res as usize].iter().enumerate() {
            recorded.set_ring(res, ring, cap);
            let v = analysis
                .figure(res, ring)
                .map_or(cap, |f| f.never_waits.max(f.structural_min));
            base.set_ring(res, ring, v);
        }
    }
    let walls = match r.trial(&base) {
        Ok(w) => w,
        Err(_) => {
            base = recorded;
            r.trial(&base).map_err(BaseFailed)?
        }
    };
    let wall_never_waits = median(walls);

    let mut verified = Vec::new();
    for f in &analysis.figures {
        let (res, ring) = (f.resource, f.ring);
        let hi0 = base.get(res, ring).unwrap_or(f.never_waits);
        // The dep pool takes entries only for producers still pending at submit, so the
        // recorded hold is not a bound: search it from the key's smallest value.
        let lo0 = match res {
            RingResource::DepPool => round_up(res, 0),
            _ => f.structural_min,
        }
        .min(hi0);
        let with = |v: u64| {
            let mut e = base;
            e.set_ring(res, ring, v);
            e
        };
        let mut below = None;
        let min = if lo0 == hi0 {
            hi0
        } else {
            match r.trial(&with(lo0)) {
                Ok(_) => lo0,
                Err(t) => {
                    below = fatal_of(lo0, &t);
                    let (mut lo, mut hi) = (lo0, hi0);
                    while let Some(mid) = midpoint(res, lo, hi) {
                        match r.trial(&with(mid)) {
                            Ok(_) => hi = mid,
                            Err(t) => {
                                below = fatal_of(mid, &t);
                                lo = mid;
                            }
                        }
                    }
                    hi
                }
            }
        };
        // Confirm the minimum is one: the next smaller value the key accepts must fail.
        if below.is_none() {
            if let Some(prev) = previous(res, min) {
                if let Err(t) = r.trial(&with(prev)) {
                    below = fatal_of(prev, &t);
                }
            }
        }
        // The heap: a size above a passing one can fail where the wrap falls, so the
        // suggestion is run on its own too, and raised until it passes (at most up to the size
        // that cannot deadlock, a handful of raises).
        let mut failed_above = Vec::new();
        let (safe, suggested) = if res == RingResource::Heap {
            let safe = analysis.heap_safe(ring).unwrap_or(min).max(min);
            let mut s = suggest(res, min).min(safe);
            let passed = loop {
                match r.trial(&with(s)) {
                    Ok(_) => break Some(s),
                    Err(t) => {
                        failed_above.push((s, describe(&t)));
                        if s >= safe {
                            break None;
                        }
                        s = suggest(res, s).min(safe);
                    }
                }
            };
            (Some(safe), Some(passed.unwrap_or(safe)))
        } else {
            (None, None)
        };
        verified.push(Verified {
            resource: res,
            ring,
            min,
            below,
            failed_above,
            safe,
            suggested,
        });
    }

    // The tensor map: bisected between nothing and a passing size (twice its peak at the
    // boundaries when that passes, else the recorded capacity). Its entries are cleaned as
    // tasks retire, so there is no structural bound to start from.
    let recorded_tm = analysis
        .metadata
        .tensormap_max
        .map_or(simpler_core_default_tensormap(), |v| v as usize);
    let mut tm_hi = recorded_tm;
    let guess = usize::try_from(analysis.tensormap_peak.0)
        .ok()
        .and_then(|p| p.max(1).checked_next_power_of_two())
        .map_or(recorded_tm, |p| p.saturating_mul(2))
        .min(recorded_tm);
    if guess < tm_hi {
        r.tensormap = Some(guess);
        if r.trial(&base).is_ok() {
            tm_hi = guess;
        }
    }
    let (mut tm_lo, mut tm_below) = (0usize, None);
    while tm_hi - tm_lo > 1 {
        let mid = tm_lo + (tm_hi - tm_lo) / 2;
        r.tensormap = Some(mid);
        match r.trial(&base) {
            Ok(_) => tm_hi = mid,
            Err(t) => {
                tm_below = fatal_of(mid as u64, &t);
                tm_lo = mid;
            }
        }
    }
    let mut tensormap = TensorMapVerified {
        min: tm_hi,
        below: tm_below,
        suggested: suggest_tensormap(tm_hi),
    };

    let mut minimum_env = RuntimeEnv::default();
    let mut suggested_env = RuntimeEnv::default();
    for res in RingResource::ALL {
        for ring in 0..RINGS {
            let min = verified
                .iter()
                .find(|v| v.resource == res && v.ring == ring)
                .map_or(round_up(res, 0), |v| v.min);
            minimum_env.set_ring(res, ring, min);
            if res == RingResource::DepPool && !analysis.dep_pool_known {
                // Unknown occupancy: never searched, so neither minimum nor suggestion is
                // derived; the base (recorded or default) size stands.
                let keep = base.get(res, ring).unwrap_or(res.decl().default);
                minimum_env.set_ring(res, ring, keep);
                suggested_env.set_ring(res, ring, keep);
                continue;
            }
            let heap = verified
                .iter()
                .find(|v| v.resource == res && v.ring == ring)
                .and_then(|v| v.suggested);
            let s = if let Some(worst) = worst_case(analysis, runtime, &suggested_env, res, ring) {
                worst.max(min)
            } else if let Some(h) = heap {
                h
            } else if analysis.rings_used[ring] {
                // The dep pool's need varies from run to run (entries only for producers still
                // pending, so a run whose schedulers fall behind needs more): the headroom goes
                // on the largest of the verified minimum, what the recorded run's open scopes
                // held and the most it had in use at any boundary (its peak). A suggestion from
                // the minimum and the hold alone, recorded on a run whose schedulers kept up,
                // failed a re-run on CI (287 entries suggested, more needed).
                let recorded = match (res, analysis.figure(res, ring)) {
                    (RingResource::DepPool, Some(f)) => f.held.max(f.peak),
                    _ => 0,
                };
                suggest(res, min.max(recorded))
            } else {
                min
            };
            suggested_env.set_ring(res, ring, s);
        }
    }
    r.tensormap = Some(tensormap.min);
    let combo = r.trial(&minimum_env);
    let combination_passed = combo.is_ok();
    let (wall_minimum, combination_failure) = match combo {
        Ok(walls) => (Some(median(walls)), None),
        Err(t) => (None, Some(t)),
    };
    // Confirm the suggestion; a timing-dependent failure raises the failing resource on every
    // used ring by the headroom again (at most `RAISES` times), and says so.
    let mut suggested_passed = false;
    let mut suggested_failure = None;
    let mut raised = Vec::new();
    for attempt in 0..=RAISES {
        r.tensormap = Some(tensormap.suggested);
        match r.trial(&suggested_env) {
            Ok(_) => {
                suggested_passed = true;
                break;
            }
            Err(t) => {
                if attempt == RAISES {
                    suggested_failure = Some(t);
                    break;
                }
                if matches!(
                    t,
                    Trial::Fatal {
                        code: FatalCode::TensorMapOverflow,
                        ..
                    }
                ) {
                    raised.push(format!("tensormap_capacity raised after {}", describe(&t)));
                    tensormap.suggested = suggest_tensormap(tensormap.suggested);
                    continue;
                }
                let Some(res) = resource_of(&t) else {
                    suggested_failure = Some(t);
                    break;
                };
                raised.push(format!("{} raised after {}", res.key(), describe(&t)));
                for ring in (0..RINGS).filter(|&r| analysis.rings_used[r]) {
                    let v = suggested_env.get(res, ring).unwrap_or(res.decl().default);
                    let mut up = suggest(res, v);
                    if res == RingResource::Heap {
                        // A failing heap above its minimum is the wrap: noted on the ring, and
                        // never raised past the size that cannot deadlock.
                        let ringed = matches!(&t, Trial::Fatal { message, .. }
                            if message.contains(&format!("heap of ring {ring} ")));
                        if let Some(vf) = verified.iter_mut().find(|x| x.resource == res && x.ring == ring) {
                            if ringed {
                                vf.failed_above.push((v, describe(&t)));
                            }
                            up = up.min(vf.safe.unwrap_or(up).max(v));
                        }
                    }
                    suggested_env.set_ring(res, ring, up);
                    // A wider window lets more tasks be in flight: the dep pool's worst case
                    // follows it.
                    if let Some(w) =
                        worst_case(analysis, runtime, &suggested_env, RingResource::DepPool, ring)
                    {
                        let v = suggested_env.get(RingResource::DepPool, ring).unwrap_or(w);
                        suggested_env.set_ring(RingResource::DepPool, ring, w.max(v));
                    }
                }
            }
        }
    }
    Ok(SearchResult {
        verify: r.verify,
        runtime,
        base,
        verified,
        minimum_env,
        combination_passed,
        combination_failure,
        suggested_env,
        suggested_passed,
        suggested_failure,
        raised,
        tensormap,
        wall_never_waits,
        wall_minimum,
        runs: r.runs,
    })
}

/// On tmr, with the recorded graph: the dep pool's worst case on `ring` at the task window
/// `env` gives it ([`crate::worst_case`]), as the key accepts it. `None` for other resources,
/// on hbg (nothing completes while the graph is built, so its need is what the search saw), or
/// without a recorded graph (the suggestion is then the measured one, timing-dependent).
fn worst_case(
    analysis: &Analysis,
    runtime: RuntimeKind,
    env: &RuntimeEnv,
    resource: RingResource,
    ring: usize,
) -> Option<u64> {
    if resource != RingResource::DepPool || runtime != RuntimeKind::Tmr || !analysis.rings_used[ring] {
        return None;
    }
    let worst = analysis.dep_pool_worst.as_ref()?;
    let window = env
        .get(RingResource::TaskWindow, ring)
        .unwrap_or(RingResource::TaskWindow.decl().default);
    Some(round_up(resource, worst.at(ring, window)))
}

/// The next smaller value `resource`'s key accepts.
fn previous(resource: RingResource, v: u64) -> Option<u64> {
    let p = match resource {
        RingResource::TaskWindow => v / 2,
        _ => v.checked_sub(1)?,
    };
    (resource.decl().valid)(p).then_some(p)
}

/// The resource a ring fatal is about.
fn resource_of(t: &Trial) -> Option<RingResource> {
    match t {
        Trial::Fatal { code, .. } => match code {
            FatalCode::ScopeDeadlock | FatalCode::FlowControlDeadlock => Some(RingResource::TaskWindow),
            FatalCode::HeapRingDeadlock => Some(RingResource::Heap),
            FatalCode::DepPoolOverflow => Some(RingResource::DepPool),
            _ => None,
        },
        _ => None,
    }
}

/// One line for a failed trial.
pub fn describe(t: &Trial) -> String {
    match t {
        Trial::Fatal { code, message } => format!("fatal {} ({}): {message}", code.code(), code.name()),
        Trial::Failed { message } => message.clone(),
        Trial::Passed { .. } => "a pass".into(),
    }
}

fn fatal_of(v: u64, t: &Trial) -> Option<(u64, FatalCode, String)> {
    match t {
        Trial::Fatal { code, message } => Some((v, *code, message.clone())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bisection starts from a file's recorded capacity: a suggestion from the largest
    /// one saturates (it wrapped in release and panicked in debug builds).
    #[test]
    fn suggestions_add_their_headroom_and_saturate() {
        assert_eq!(suggest_tensormap(100), 125);
        assert_eq!(suggest_tensormap((1 << 62) - 1), (1 << 62) - 1 + (1 << 60)); // ceil((2^62 − 1) / 4) = 2^60
        assert_eq!(suggest_tensormap(usize::MAX - 1), usize::MAX);
        assert_eq!(suggest(RingResource::DepPool, 100), 125);
        assert_eq!(suggest(RingResource::DepPool, u64::MAX - 1), u64::MAX);
    }
}
