//! Sizing from the recorded data alone: one pass over a run's scope samples gives, per ring and
//! resource, the observed peak (the "never waits" size) and the structural minimum (what open
//! scopes hold at once and cannot release), each with the scope site that sets it.
//!
//! # What a scope holds
//!
//! A task is reclaimed only once its scope has ended, and a ring retires its tasks in order, so
//! while a scope on ring `r` that has submitted a task is open, nothing of ring `r` from that
//! task on can be reclaimed. What ring `r` holds at a moment is therefore everything it
//! allocated since the first task of its oldest open scope that has one. Samples are taken at
//! every scope boundary, and between two boundaries of one ring only the innermost open scope of
//! that ring submits, so the held amount grows between boundaries and its maxima are at
//! boundaries: one event per boundary ([`HoldEvent`]) is exact.
//!
//! A sample carries the counters of its own ring only, so the held amounts are tracked per ring
//! (scopes of rings 0..2 never nest on their ring; ring 3 holds every scope of depth ≥ 3).
//!
//! # Minimums
//!
//! - task window: at most window−1 tasks of a ring are in flight, so window ≥ held + 1 (and a
//!   power of two ≥ 4);
//! - heap: held bytes (a lower bound: an allocation never straddles the end of the heap, so a
//!   run may need more; the verified search finds out);
//! - dep pool: held entries. Entries are taken only for producers still pending at submit, so
//!   this figure is this run's (a faster run could take fewer); the verified search decides.
//!
//! A file of the original's schema version 4 has no dep-pool fields: then nothing is said
//! about the dep pool ([`Analysis::dep_pool_known`] is false, no dep-pool figure), and the
//! suggestions keep the key's default instead of a size read from zeros.

use std::borrow::Cow;
use std::path::Path;

use simpler_artifacts::manifest::{self, RunManifest};
use simpler_artifacts::scope_stats::{Metadata, Phase, Reader, Sample};
use simpler_runtime::config::RingResource;

use crate::error::{Error, ErrorKind};
use crate::worst_case::DepPoolWorstCase;

/// Rings the runtime has (scope depth ≥ 3 uses ring 3).
pub const RINGS: usize = 4;

/// One boundary's view of one ring: what the ring held just then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoldEvent {
    /// The ring.
    pub ring: usize,
    /// Index of the sample (0-based, metadata excluded) at which this was observed.
    pub sample: usize,
    /// Index of the ring's previous boundary (`sample` for its first): what this event shows
    /// was allocated after that one. A sample carries only its own ring's counters, so the
    /// growth may have happened anywhere in between, while a scope of the ring was the
    /// innermost.
    pub after: usize,
    /// Tasks held (not reclaimable) by open scopes of the ring.
    pub tasks: u64,
    /// Heap bytes held.
    pub heap: u64,
    /// Dep-pool entries held.
    pub dep: u64,
    /// Tasks the innermost open scope of the ring submitted itself (its own, not its
    /// children's).
    pub direct_tasks: u64,
    /// The innermost open scope of the ring (the one submitting).
    pub current_site: String,
    /// The oldest open scope whose first task pins the ring.
    pub pinning_site: String,
}

/// Per ring and resource: the figures from the recorded data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Figure {
    /// The resource.
    pub resource: RingResource,
    /// The ring.
    pub ring: usize,
    /// The capacity the recorded run used (from the metadata line), when known.
    pub capacity: Option<u64>,
    /// Peak occupancy observed (tasks in flight, bytes, entries): the size at which the run
    /// never waits (for the task window, the window must be ≥ this + 1).
    pub peak: u64,
    /// Site of the scope whose boundary showed the peak.
    pub peak_site: String,
    /// Most held at once by open scopes (tasks, bytes, entries).
    pub held: u64,
    /// Site of the scope that pins what is held at that moment.
    pub held_site: String,
    /// The smallest value the key may take without a structural fatal (rounded up to what the
    /// key accepts).
    pub structural_min: u64,
    /// The smallest value the key may take without waiting (the peak, rounded up to what the
    /// key accepts).
    pub never_waits: u64,
}

/// Everything the recorded data says about sizing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// The metadata line.
    pub metadata: Metadata,
    /// Samples read.
    pub samples: usize,
    /// Rings with at least one scope sample.
    pub rings_used: [bool; RINGS],
    /// One figure per used ring and resource, in resource then ring order.
    pub figures: Vec<Figure>,
    /// Most tensor-map entries in use at a boundary, with the site.
    pub tensormap_peak: (u64, String),
    /// Every boundary's hold, in sample order (for `--check`).
    pub events: Vec<HoldEvent>,
    /// Whether the run's runtime reclaims while the orchestration runs (tmr); hbg builds the
    /// whole graph first, so everything it allocated is held.
    pub reclaims: bool,
    /// False when some sample has no dep-pool fields (the original's schema version 4): the
    /// dep pool's occupancy is unknown and has no figure.
    pub dep_pool_known: bool,
    /// The dep pool's worst case on tmr, from the run folder's deps.json when it has one
    /// ([`crate::worst_case`]); the search then suggests it instead of a measured size.
    pub dep_pool_worst: Option<DepPoolWorstCase>,
}

/// What the plan says when the file has no dep-pool fields.
pub const DEP_POOL_UNKNOWN: &str = "dep_pool: unknown (the scope-stats file has no dep-pool fields, \
     as in the original's schema version 4); its suggestion is the key's default";

impl Analysis {
    /// The figure of `resource` on `ring`, if the ring was used.
    pub fn figure(&self, resource: RingResource, ring: usize) -> Option<&Figure> {
        self.figures
            .iter()
            .find(|f| f.resource == resource && f.ring == ring)
    }

    /// The heap size of `ring` that no wrap and no timing can deadlock, when the ring was
    /// used: [`heap_safe`] of its structural minimum.
    pub fn heap_safe(&self, ring: usize) -> Option<u64> {
        let f = self.figure(RingResource::Heap, ring)?;
        Some(heap_safe(f.held, self.reclaims))
    }
}

/// The heap size that cannot deadlock for a ring whose open scopes hold at most `held` bytes.
///
/// Without reclaim (hbg) nothing wraps: `held`. With it (tmr) an allocation never straddles
/// the heap's end, so a heap of `held` bytes or a little more can deadlock where the wrap
/// falls (`docs/sizing-rings.md`, Limits). At a deadlock the oldest live task is pinned by an
/// open scope, so the live span is at most what is held before the request (`L`) plus one
/// wasted end gap `g` (smaller than the request that wrapped, `≤ A`, the largest task's
/// allocation); the request `r` fails only if both free pieces are `≤ r − 1`, i.e.
/// `size ≤ L + g + 2r − 1 ≤ held + 2A − 2` (`L + r ≤ held`). With `A ≤ held`: any size of at
/// least `3 × held` fits, rounded up to a multiple of 1024 (at least the key's smallest value;
/// a ring whose scopes hold nothing allocates nothing).
pub fn heap_safe(held: u64, reclaims: bool) -> u64 {
    let times = if reclaims { 3 } else { 1 };
    round_up(
        RingResource::Heap,
        held.saturating_mul(times).div_ceil(1024).saturating_mul(1024),
    )
}

/// Smallest value at least `v` that `resource`'s key accepts.
pub fn round_up(resource: RingResource, v: u64) -> u64 {
    let valid = resource.decl().valid;
    match resource {
        // A size past 2^63 (from a hostile file) saturates; the key's rule then refuses it.
        RingResource::TaskWindow => v.max(4).checked_next_power_of_two().unwrap_or(u64::MAX),
        RingResource::Heap => v.max(1024),
        RingResource::DepPool => {
            let v = v.max(4);
            debug_assert!(valid(v) || v > i32::MAX as u64);
            v
        }
    }
}

/// The capacity a hold of `held` needs (window: held + 1).
pub fn needed(resource: RingResource, held: u64) -> u64 {
    match resource {
        RingResource::TaskWindow => held.saturating_add(1),
        _ => held,
    }
}

#[derive(Clone, Copy, Default)]
struct Counters {
    task: u64,
    heap: u64,
    dep: u64,
}

impl Counters {
    fn head(s: &Sample) -> Counters {
        Counters {
            task: s.task_window_end.max(0) as u64,
            heap: s.heap_end,
            // Unknown (schema version 4) reads as 0 here, but then no dep-pool figure is made.
            dep: s.dep_pool_end.unwrap_or(0).max(0) as u64,
        }
    }
    fn tail(s: &Sample) -> Counters {
        Counters {
            task: s.task_window_start.max(0) as u64,
            heap: s.heap_start,
            dep: s.dep_pool_start.unwrap_or(0).max(0) as u64,
        }
    }
}

struct Frame {
    site: String,
    ring: usize,
    /// Counters at the scope's first task, once it has one.
    first: Option<Counters>,
    /// Counters at the last boundary of this ring inside the scope.
    cursor: Counters,
    /// Tail at the scope's begin (for the peak).
    begin_tail: Counters,
    direct_tasks: u64,
    begin_line: usize,
    begin: Counters,
}

/// Whether the run that wrote `scope_stats.jsonl` at `path` reclaims as it goes: its run
/// folder's `run.json` ([`manifest_of`]) names the runtime (`hbg` does not); tmr without a
/// manifest. A manifest that cannot be read is an error ([`manifest_of`]).
pub fn reclaims_of(path: &Path) -> Result<bool, Error> {
    let runtime = manifest_of(path)?.map(|m| m.runtime);
    Ok(runtime.as_deref() != Some(simpler_runtime::RuntimeKind::Hbg.name()))
}

/// The `run.json` of the run folder the recording `file` belongs to ([`run_folder_of`]);
/// `None` when there is none (a file of the original runtime's, or a copy elsewhere). One that
/// is there but cannot be read (a folder, not JSON, a schema this build does not read) is an
/// error naming it, not taken for none: the plan takes the runtime, how the run ended and the
/// example and its parameters from it.
pub fn manifest_of(file: &Path) -> Result<Option<RunManifest>, Error> {
    let Some(folder) = run_folder_of(file) else {
        return Ok(None);
    };
    RunManifest::read_if_present(&folder.join(manifest::FILE_NAME)).map_err(|e| ErrorKind::Manifest(e).into())
}

/// Reads `scope_stats.jsonl` at `path` and analyses it (the runtime from [`reclaims_of`]).
/// The run folder a recording belongs to: `<folder>` of `<folder>/scope_stats/<file>`; `None`
/// for a file anywhere else (a copy, whose folder's run.json and deps.json are not its run's).
/// A path whose folder has no name as spelled (`scope_stats.jsonl` or `./scope_stats.jsonl`
/// from inside `scope_stats/`) is judged by the real folder: found by a review, such a
/// recording was taken for a copy, and its run's manifest (the runtime, the example) unread.
pub fn run_folder_of(file: &Path) -> Option<Cow<'_, Path>> {
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if dir.file_name().is_none() {
        let real = std::fs::canonicalize(dir).ok()?;
        if real.file_name()? != "scope_stats" {
            return None;
        }
        return Some(Cow::Owned(real.parent()?.to_path_buf()));
    }
    if dir.file_name()? != "scope_stats" {
        return None;
    }
    Some(Cow::Borrowed(
        dir.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    ))
}

pub fn analyze_file(path: &Path) -> Result<Analysis, Error> {
    let reader = Reader::open(path).map_err(|source| ErrorKind::ScopeStats {
        path: path.to_path_buf(),
        source,
    })?;
    let metadata = reader.metadata().clone();
    let mut samples = Vec::new();
    for s in reader {
        let mut s = s.map_err(|source| ErrorKind::ScopeStats {
            path: path.to_path_buf(),
            source,
        })?;
        // A site is shown in the table's last column and in verdicts: one with a newline (or
        // a terminal's escape) made rows of its own (found by a review).
        if let std::borrow::Cow::Owned(shown) = simpler_artifacts::name_map::printable(&s.site) {
            s.site = shown;
        }
        samples.push(s);
    }
    // Found by a review: a cut file (and one whose samples were dropped) was planned from
    // without a word, and the plan suggested rings its run could not complete with.
    if let Some(why) = metadata.missing_samples(samples.len() as u64) {
        return Err(ErrorKind::IncompleteRecording {
            path: path.to_path_buf(),
            why,
        }
        .into());
    }
    let mut analysis = analyze_with(metadata, &samples, reclaims_of(path)?).map_err(|why| {
        Error::from(ErrorKind::Unpaired {
            path: path.to_path_buf(),
            why,
        })
    })?;
    // The run folder's graph, when dep_gen recorded it.
    let deps = run_folder_of(path).map(|d| d.join("deps.json"));
    if let Some(deps) = deps.filter(|d| d.is_file()) {
        analysis.dep_pool_worst = Some(DepPoolWorstCase::read(&deps).map_err(ErrorKind::Deps)?);
    }
    Ok(analysis)
}

/// Analyses `samples` (oldest first) of a tmr run under `metadata`; `Err` names the sample
/// (1-based line of the file) whose begin/end pairing is broken.
pub fn analyze(metadata: Metadata, samples: &[Sample]) -> Result<Analysis, String> {
    analyze_with(metadata, samples, true)
}

/// [`analyze`] for a runtime that reclaims (`reclaims`, tmr) or not (hbg: everything allocated
/// since the first sample is held).
pub fn analyze_with(metadata: Metadata, samples: &[Sample], reclaims: bool) -> Result<Analysis, String> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut events = Vec::new();
    let mut rings_used = [false; RINGS];
    // (value, site) per resource and ring.
    let mut peak: [[(u64, String); RINGS]; RingResource::COUNT] =
        std::array::from_fn(|_| std::array::from_fn(|_| (0u64, String::new())));
    let mut tensormap_peak = (0u64, String::new());
    let mut last: [Option<usize>; RINGS] = [None; RINGS];
    for (i, s) in samples.iter().enumerate() {
        let line = i + 2;
        let ring = s.ring as usize;
        if ring >= RINGS {
            return Err(format!(
                "line {line}: ring {ring} is not a ring (0..{})",
                RINGS - 1
            ));
        }
        rings_used[ring] = true;
        let after = last[ring].replace(i).unwrap_or(i);
        let head = Counters::head(s);
        if s.tensormap.max(0) as u64 > tensormap_peak.0 || tensormap_peak.1.is_empty() {
            tensormap_peak = (s.tensormap.max(0) as u64, s.site.clone());
        }
        match s.phase {
            Phase::Begin => {
                if let Some(p) = stack.iter_mut().rev().find(|f| f.ring == ring) {
                    advance(p, head);
                }
                events.push(hold(
                    &stack,
                    ring,
                    (head, Counters::tail(s)),
                    (after, i),
                    reclaims,
                ));
                stack.push(Frame {
                    site: s.site.clone(),
                    ring,
                    first: None,
                    cursor: head,
                    begin_tail: Counters::tail(s),
                    direct_tasks: 0,
                    begin_line: line,
                    begin: head,
                });
            }
            Phase::End => {
                let Some(top) = stack.last_mut() else {
                    return Err(format!(
                        "line {line}: end of scope {} that was never begun",
                        s.site
                    ));
                };
                if top.site != s.site || top.ring != ring {
                    return Err(format!(
                        "line {line}: end of scope {} (ring {ring}) while the innermost open scope is {} (ring {}, begun on line {})",
                        s.site, top.site, top.ring, top.begin_line
                    ));
                }
                advance(top, head);
                let bt = top.begin_tail;
                let e = hold(&stack, ring, (head, Counters::tail(s)), (after, i), reclaims);
                events.push(e);
                for (r, (h, t)) in [
                    (RingResource::TaskWindow, (head.task, bt.task)),
                    (RingResource::Heap, (head.heap, bt.heap)),
                    (RingResource::DepPool, (head.dep, bt.dep)),
                ] {
                    let v = h.saturating_sub(t);
                    let slot = &mut peak[r as usize][ring];
                    if v > slot.0 || slot.1.is_empty() {
                        *slot = (v, s.site.clone());
                    }
                }
                stack.pop();
                if let Some(p) = stack.iter_mut().rev().find(|f| f.ring == ring) {
                    p.cursor = head;
                }
            }
        }
    }
    let dep_pool_known = samples
        .iter()
        .all(|s| s.dep_pool_start.is_some() && s.dep_pool_end.is_some());
    let mut figures = Vec::new();
    for resource in RingResource::ALL {
        if resource == RingResource::DepPool && !dep_pool_known {
            continue;
        }
        let caps = match resource {
            RingResource::TaskWindow => metadata.task_window_max.as_ref(),
            RingResource::Heap => metadata.heap_max.as_ref(),
            RingResource::DepPool => metadata.dep_pool_max.as_ref(),
        };
        for ring in (0..RINGS).filter(|&r| rings_used[r]) {
            let (held, held_site) = events
                .iter()
                .filter(|e| e.ring == ring)
                .map(|e| (amount(e, resource), &e.pinning_site))
                .fold((0u64, String::new()), |acc, (v, site)| {
                    if v > acc.0 || (acc.1.is_empty() && !site.is_empty()) {
                        (v, site.clone())
                    } else {
                        acc
                    }
                });
            let (p, peak_site) = peak[resource as usize][ring].clone();
            figures.push(Figure {
                resource,
                ring,
                capacity: caps.and_then(|c| c.get(ring).copied()),
                peak: p,
                peak_site,
                held,
                held_site,
                structural_min: round_up(resource, needed(resource, held)),
                never_waits: round_up(resource, needed(resource, p)),
            });
        }
    }
    Ok(Analysis {
        metadata,
        samples: samples.len(),
        rings_used,
        figures,
        tensormap_peak,
        events,
        reclaims,
        dep_pool_known,
        dep_pool_worst: None,
    })
}

/// The held amount of `resource` in `e`.
pub fn amount(e: &HoldEvent, resource: RingResource) -> u64 {
    match resource {
        RingResource::TaskWindow => e.tasks,
        RingResource::Heap => e.heap,
        RingResource::DepPool => e.dep,
    }
}

/// Credits what `f`'s ring allocated since its cursor to `f` itself.
fn advance(f: &mut Frame, head: Counters) {
    if head.task > f.cursor.task {
        f.first.get_or_insert(f.cursor);
        f.direct_tasks += head.task - f.cursor.task;
    }
    f.cursor = head;
}

/// The hold at a boundary of `ring` whose counters are `head` and `tail`.
///
/// What is held runs from the pinning scope's first task on. Its counters before that task
/// are the last boundary's, so a heap that wrapped or rebased for that task (a new lap, the
/// bytes skipped at the end wasted, not held) counted the skip as held. The ring's tail is
/// never past the pinning scope's first task while it is held, and it is the first task's
/// start after a rebase, so the hold is taken from the later of the two.
fn hold(
    stack: &[Frame],
    ring: usize,
    (head, tail): (Counters, Counters),
    (after, sample): (usize, usize),
    reclaims: bool,
) -> HoldEvent {
    let pin = if reclaims {
        stack
            .iter()
            .filter(|f| f.ring == ring)
            .filter_map(|f| f.first.map(|c| (c, &f.site)))
            .min_by_key(|(c, _)| c.task)
    } else {
        // Nothing is reclaimed: the outermost scope of the ring holds all since it began.
        stack.iter().find(|f| f.ring == ring).map(|f| (f.begin, &f.site))
    };
    let current = stack.iter().rev().find(|f| f.ring == ring);
    let (tasks, heap, dep, pinning_site) = match pin {
        Some((c, site)) => (
            head.task.saturating_sub(c.task),
            head.heap
                .saturating_sub(if reclaims { c.heap.max(tail.heap) } else { c.heap }),
            head.dep.saturating_sub(c.dep),
            site.clone(),
        ),
        None => (0, 0, 0, String::new()),
    };
    HoldEvent {
        ring,
        sample,
        after,
        tasks,
        heap,
        dep,
        direct_tasks: current.map_or(0, |f| f.direct_tasks),
        current_site: current.map_or_else(String::new, |f| f.site.clone()),
        pinning_site,
    }
}
