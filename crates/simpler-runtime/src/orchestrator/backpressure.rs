//! Waiting for room in a bounded resource, and the fatal when none will come.
//!
//! While a ring's reclaim makes progress the orchestrator waits (spinning briefly, then
//! parking until a ring advance wakes it). It gives up with a coded fatal when
//! * the request can never fit (larger than the whole resource), at once;
//! * `hbg`, at once: nothing is reclaimed before the graph is complete;
//! * the ring's head task is pinned by a scope that is still open (a structural deadlock:
//!   only this thread can end that scope), at once;
//! * [`DEADLOCK_TIMEOUT`] passes with no reclaim progress at all.

use crate::sync::Ordering;
use std::time::{Duration, Instant};

use super::Orchestrator;
use crate::config::{RingResource, RuntimeKind};
use crate::fatal::{FatalCode, FatalContext, Stopped};

/// How long the orchestrator waits without any reclaim progress before declaring a deadlock.
pub const DEADLOCK_TIMEOUT: Duration = Duration::from_millis(500);
/// Yields before the orchestrator parks while waiting for room.
const WAIT_YIELDS: u32 = 32;
/// Park tick while waiting for room.
pub(super) const WAIT_TICK: Duration = Duration::from_millis(2);

/// A resource the orchestrator can run out of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exhausted {
    TaskWindow,
    Heap,
    DepPool,
    FaninSpill,
    TensorMap,
}

impl Exhausted {
    fn code(self) -> FatalCode {
        match self {
            Exhausted::TaskWindow => FatalCode::FlowControlDeadlock,
            Exhausted::Heap => FatalCode::HeapRingDeadlock,
            Exhausted::DepPool | Exhausted::FaninSpill => FatalCode::DepPoolOverflow,
            Exhausted::TensorMap => FatalCode::TensorMapOverflow,
        }
    }
    fn what(self) -> String {
        match self {
            Exhausted::TaskWindow => "task window".into(),
            Exhausted::Heap => "heap".into(),
            Exhausted::DepPool => "dependency pool".into(),
            Exhausted::FaninSpill => format!("fanin spill pool (sized by {})", RingResource::DepPool.key()),
            Exhausted::TensorMap => "tensor map".into(),
        }
    }
    /// The resource's name in [`FatalContext`].
    fn resource(self) -> &'static str {
        match self {
            Exhausted::TaskWindow => "task_window",
            Exhausted::Heap => "heap",
            Exhausted::DepPool => "dep_pool",
            Exhausted::FaninSpill => "fanin_spill",
            Exhausted::TensorMap => "tensormap",
        }
    }
    /// The `runtime_env` key that sizes it.
    fn key(self) -> Option<&'static str> {
        match self {
            Exhausted::TaskWindow => Some(RingResource::TaskWindow.key()),
            Exhausted::Heap => Some(RingResource::Heap.key()),
            Exhausted::DepPool | Exhausted::FaninSpill => Some(RingResource::DepPool.key()),
            Exhausted::TensorMap => None,
        }
    }
    fn unit(self) -> &'static str {
        match self {
            Exhausted::TaskWindow => "slots",
            Exhausted::Heap => "bytes",
            _ => "entries",
        }
    }
    fn knob(self) -> String {
        match self {
            Exhausted::TaskWindow => format!("raise runtime_env {}", RingResource::TaskWindow.key()),
            Exhausted::Heap => format!("raise runtime_env {}", RingResource::Heap.key()),
            Exhausted::DepPool | Exhausted::FaninSpill => {
                format!("raise runtime_env {}", RingResource::DepPool.key())
            }
            Exhausted::TensorMap => "raise the tensor map's capacity (a workload's `tensormap_capacity`; CallConfig::tensormap_capacity in Rust)".to_string(),
        }
    }
}

/// Progress tracking across the iterations of one wait.
pub(crate) struct WaitState {
    progress: u64,
    since: Instant,
    rounds: u32,
    /// A head seen pinned by an open scope; the caller re-checks room once with counters read
    /// after that observation before the deadlock is declared (the head may have just moved).
    pinned_head: Option<u32>,
}

impl Orchestrator {
    /// Builds the fatal message for resource `what` on `ring`.
    pub(crate) fn exhaustion_message(
        &self,
        what: Exhausted,
        ring: usize,
        capacity: u64,
        detail: &str,
    ) -> String {
        let scope = self.scopes.last();
        let site = scope.map_or_else(|| "<none>".to_string(), |f| f.site.to_string());
        let place = if what == Exhausted::TensorMap {
            "(global)".to_string()
        } else {
            format!("of ring {ring}")
        };
        format!(
            "{} {place} exhausted (capacity {capacity} {}): {detail}; scope open at {site} (depth {}); {}",
            what.what(),
            what.unit(),
            self.depth(),
            what.knob()
        )
    }

    /// Raises the fatal for `what` and returns the [`Stopped`] to propagate.
    #[cold]
    pub(crate) fn exhausted(&self, what: Exhausted, ring: usize, capacity: u64, detail: &str) -> Stopped {
        let context = FatalContext {
            resource: what.resource(),
            ring: (what != Exhausted::TensorMap).then_some(ring as u8),
            capacity,
            site: self.current_site(),
            key: what.key(),
        };
        let message = self.exhaustion_message(what, ring, capacity, detail);
        Stopped(self.raise_with(what.code(), message, Some(context)))
    }

    /// The open scope pinning `ring`'s head task, if any: then no reclaim can ever come.
    fn head_pinned_by(&self, ring: usize) -> Option<(u32, String)> {
        let head = self.shared.rings[ring].last_alive.load(Ordering::Acquire);
        for (i, f) in self.scopes.iter().enumerate() {
            let end = self
                .scopes
                .get(i + 1)
                .map_or(self.scope_tasks.len(), |n| n.first_task);
            if usize::from(f.ring) == ring
                && f.first_task < end
                && self.scope_tasks[f.first_task].local == head
            {
                return Some((
                    head,
                    format!("{} (which holds {} tasks)", f.site, end - f.first_task),
                ));
            }
        }
        None
    }

    /// One round of waiting for reclaim; `Err` when the wait is hopeless (the fatal is latched).
    pub(crate) fn wait_for_room(
        &mut self,
        what: Exhausted,
        ring: usize,
        capacity: u64,
        detail: &str,
        state: &mut Option<WaitState>,
    ) -> Result<(), Stopped> {
        self.check_live()?;
        self.publish_ready();
        if self.apply_scope_releases() {
            // Room may have been made: the caller tries again before any wait.
            return Ok(());
        }
        self.shared.orch_waiting.store(true, Ordering::Relaxed);
        // Retire what is already consumed (a busy scheduler may hold it in its advance batch).
        if self.kind == RuntimeKind::Tmr {
            if what == Exhausted::TensorMap {
                (0..self.shared.rings.len()).for_each(|r| self.shared.advance(r));
            } else {
                self.shared.advance(ring);
            }
        }
        if self.kind == RuntimeKind::Hbg {
            let detail = format!("{detail}; hbg reclaims nothing while it builds the graph");
            return Err(self.exhausted(what, ring, capacity, &detail));
        }
        let progress = self.shared.reclaim_progress.load(Ordering::Acquire);
        let fresh = || WaitState {
            progress,
            since: Instant::now(),
            rounds: 0,
            pinned_head: None,
        };
        let st = state.get_or_insert_with(fresh);
        if what != Exhausted::TensorMap {
            if let Some((head, site)) = self.head_pinned_by(ring) {
                // Once pinned, the head can only move when this thread ends that scope, so a
                // second look, after the caller re-read its counters, is a proof.
                if st.pinned_head == Some(head) {
                    let detail =
                        format!("{detail}; the oldest task ({ring}, {head}) is held by the still-open scope at {site}");
                    return Err(self.exhausted(what, ring, capacity, &detail));
                }
                st.pinned_head = Some(head);
                return Ok(());
            }
        }
        if st.progress != progress {
            *st = fresh();
        } else if st.since.elapsed() >= DEADLOCK_TIMEOUT {
            let mut detail = format!(
                "{detail}; no task of any ring retired for {} ms",
                DEADLOCK_TIMEOUT.as_millis()
            );
            if let Some(head) = self.own_pinned_head() {
                detail.push_str(&format!(
                    "; the oldest task ({}, {}) of ring {} is held by a RETAIN pin of the task being submitted \
                     (an explicit dependency or an output it reads; a WAIT-only dependency takes no pin)",
                    head.ring(),
                    head.local(),
                    head.ring()
                ));
            }
            return Err(self.exhausted(what, ring, capacity, &detail));
        }
        st.rounds += 1;
        if st.rounds < WAIT_YIELDS {
            std::thread::yield_now();
        } else {
            let shared = &self.shared;
            shared.orch_sleep.sleep_unless(WAIT_TICK, || {
                shared.reclaim_progress.load(Ordering::Acquire) != progress || shared.fatal.is_set()
            });
        }
        Ok(())
    }

    /// Clears the "orchestrator waits" flag after a wait.
    #[inline]
    pub(crate) fn done_waiting(&self, waited: bool) {
        if waited {
            self.shared.orch_waiting.store(false, Ordering::Relaxed);
        }
    }

    /// Publishes every ring's watermark to the tensor map.
    pub(crate) fn refresh_watermarks(&mut self) {
        if self.kind == RuntimeKind::Tmr {
            for (r, ring) in self.shared.rings.iter().enumerate() {
                self.rings[r].seen_last_alive = ring.last_alive.load(Ordering::Acquire);
                self.tmap.set_watermark(r as u8, self.rings[r].seen_last_alive);
            }
        }
    }

    /// Makes room for `n` tensor-map inserts.
    pub(crate) fn ensure_tensormap(&mut self, n: usize) -> Result<(), Stopped> {
        let mut state = None;
        // `state` is reset when entries are reclaimed, so it cannot tell whether we ever waited.
        let mut waited = false;
        loop {
            if self.tmap.free_slots() >= n {
                self.done_waiting(waited);
                return Ok(());
            }
            self.refresh_watermarks();
            if self.tmap.reclaim_retired() > 0 {
                // Freed entries are progress of their own.
                state = None;
                continue;
            }
            let cap = self.tmap.capacity().unwrap_or(0) as u64;
            let detail = format!("{n} inserts needed, {} entries in use", self.tmap.in_use());
            waited = true;
            self.wait_for_room(Exhausted::TensorMap, 0, cap, &detail, &mut state)?;
        }
    }
}
