//! The orchestration API: scopes, submits, allocations, explicit fatals.
//!
//! An [`Orchestrator`] is handed to the user's orchestration function already inside the root
//! scope (depth 0, ring 0), so submitting outside a scope is impossible by construction. Every
//! call returns [`Stopped`] once the run is fatal; propagate it with `?`.

mod backpressure;
pub use backpressure::DEADLOCK_TIMEOUT;
mod scope;
pub(crate) mod scope_release;
mod submit;
use submit::KernelIds;

use crate::sync::Ordering;
use std::cell::RefCell;
use std::panic::Location;
use std::sync::Arc;

use simpler_artifacts::swimlane::OrchRow;
use simpler_core::{
    DepFlags, TaskArgs, TaskId, Tensor, TensorCreateInfo, TensorMap, TensorMapConfig, MAX_RINGS,
};

pub use crate::site::Site;
pub use scope::{site_string, ScopeMode, MAX_SCOPE_DEPTH};

use crate::collectors::dep_gen::capture::{CaptureFinal, DepGenCapture};
use crate::collectors::dep_gen::graph::GraphWriter;
use crate::collectors::scope_stats::probe::{Phase, ProducerFinal, ScopeRecord, ScopeStatsProducer};
use crate::collectors::swimlane::{Row, SwimlaneProducer};
use crate::config::RuntimeKind;
use crate::fatal::{FatalCode, FatalContext, Stopped};
use crate::platform::{MixedKernels, Platform, TaskShape};
use crate::ring::alloc::RingAllocator;
use crate::ring::arg_arena::ArenaWriter;
use crate::scheduler::ready::{ReadyBatch, ReadyPublisher, LAUNCH_RUN};
use crate::shared::{RunShared, DEP_POOL_ORIGIN};
use crate::slot::SlotRef;
use scope::{ScopeFrame, ScopedTask};

/// What a submit returns: the task id and its runtime-allocated outputs, in argument order.
#[derive(Clone, Debug)]
pub struct TaskOutputs {
    id: TaskId,
    outputs: Outputs,
}

/// A submit's outputs: two inline (most tasks have at most two OUTPUT arguments), more on the
/// heap. Inline room for all `MAX_TENSOR_ARGS` would make every submit return 2.5 KB.
pub(crate) type Outputs = smallvec::SmallVec<[Tensor; 2]>;

impl TaskOutputs {
    /// The task id.
    pub fn id(&self) -> TaskId {
        self.id
    }
    /// Output `i` (the i-th OUTPUT argument).
    pub fn get(&self, i: usize) -> Option<Tensor> {
        self.outputs.get(i).copied()
    }
    /// Output `i`; panics when the task has fewer outputs (a bug in the orchestration).
    pub fn output(&self, i: usize) -> Tensor {
        self.outputs[i]
    }
    /// All outputs.
    pub fn outputs(&self) -> &[Tensor] {
        &self.outputs
    }
}

/// What an orchestration function returns; any error other than [`Stopped`] stops the run
/// with EXPLICIT_ORCH_FATAL (9) and its message.
pub type OrchResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// Counters the run report shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OrchStats {
    /// Tasks per ring (submits, dummies and allocs).
    pub tasks_per_ring: [u32; MAX_RINGS],
    /// Total tasks.
    pub tasks: u64,
    /// Nanoseconds spent inside the orchestration function.
    pub orchestration_ns: u64,
    /// Nanoseconds of dependency inference (tensor-map lookups and inserts) within it, when
    /// timed (`hbg` with swimlane timing on).
    pub inference_ns: Option<u64>,
    /// Wired fanin per task, when recorded.
    pub fanin_log: Option<Vec<FaninRecord>>,
    /// Batches of scope-end releases handed to the schedulers (`tmr`,
    /// `crates/simpler-runtime/src/orchestrator/scope_release.rs`).
    pub scope_release_batches: u64,
    /// When the orchestration function began and returned, and when the orchestrator had
    /// closed every scope (the end of graph finalisation).
    pub timeline: Option<[std::time::Instant; 3]>,
}

/// The device-side orchestrator of one run; see the module docs.
pub struct Orchestrator {
    pub(crate) shared: Arc<RunShared>,
    kind: RuntimeKind,
    /// The orchestrator's side of each ring: its resources' allocators (`src/ring/alloc.rs`).
    rings: [RingAllocator; MAX_RINGS],
    tmap: TensorMap,
    scopes: Vec<ScopeFrame>,
    /// The tasks of the open scopes, whose ends release their scope bit (`hbg`: its alloc
    /// tasks only, see `Orchestrator::allocate`).
    scope_tasks: Vec<ScopedTask>,
    /// `tmr`: the tasks of closed scopes whose releases wait for their hand-over to the
    /// schedulers, once they number `release_batch`
    /// (`crates/simpler-runtime/src/orchestrator/scope_release.rs`).
    released: Vec<crate::slot::SlotRef>,
    /// Tasks a batch of scope releases gathers before its hand-over; 0 releases at each scope
    /// end (`hbg`, and small task windows).
    release_batch: usize,
    /// Batches handed over so far.
    release_batches: u64,
    manual_depth: Option<usize>,
    scratch: submit::Scratch,
    /// The last kernel ids admitted, checked ([`submit::CheckedKernels`]).
    checked_kernels: submit::CheckedKernels,
    total_tasks: u64,
    fanin_log: Option<Vec<FaninRecord>>,
    /// The scope-stats producer; `None` when disabled (a probe is then one load and a branch).
    scope_stats: Option<RefCell<ScopeStatsProducer>>,
    /// dep_gen capture (`tmr`) or direct graph (`hbg`).
    pub(crate) dep_gen: Option<DepGenCapture>,
    pub(crate) dep_graph: Option<GraphWriter>,
    pub(crate) skip_dep_gen_flush: bool,
    /// The runtime call the orchestration function is inside (`submit`, `alloc_tensors`,
    /// `begin_scope`, `end_scope`, a scope's end), `None` while its own code runs: a panic
    /// caught with this set is the runtime's, INTERNAL_PANIC, not the orchestration's
    /// (`run.rs`). Two stores a call.
    pub(crate) inside: Option<RuntimeCall>,
    /// Test fault: `alloc_tensors` panics inside the runtime (`Faults::panic_in_alloc_tensors`).
    pub(crate) panic_in_alloc_tensors: bool,
    /// Swimlane submit spans.
    pub(crate) lane: Option<SwimlaneProducer>,
    /// Submit spans recorded so far (the next span's `submit_idx`).
    submits_timed: u64,
    /// Time spent inferring dependencies, when timed (see [`OrchStats::inference_ns`]).
    pub(crate) inference_ns: Option<u64>,
    /// Ready tasks not yet published, per shape (`TaskShape as usize`): handed to the schedulers
    /// [`READY_BATCH`] at a time in all (or once the oldest has waited [`READY_HOLD`] submits,
    /// when a scheduler sleeps, before any wait, and at the end), so a burst of submits moves
    /// the ready-queue cache lines once instead of once per task. Kept by shape as they come
    /// (the submit knows it), so publishing them reads no slot back.
    ready_batches: [ReadyBatch; TaskShape::ALL.len()],
    /// `hbg`: the tasks its build found ready, per shape, published a run of [`LAUNCH_RUN`]
    /// at a time and the rest at the root's end (`ready_batches` stays empty).
    launch_runs: [Vec<SlotRef>; TaskShape::ALL.len()],
    /// `tmr`: the ready queues' ring publisher (`crates/simpler-runtime/src/scheduler/publication.rs`).
    publisher: Option<ReadyPublisher>,
    /// Tasks in `ready_batches`.
    ready_pending: usize,
    /// `total_tasks` when the oldest task in `ready_batches` was queued (see [`READY_HOLD`]).
    ready_held_since: u64,
    /// `hbg`: argument lists longer than a slot holds, published when the build ends
    /// (`crates/simpler-runtime/src/ring/arg_arena.rs`); `None` on `tmr`, whose slots keep their own.
    arg_arena: Option<ArenaWriter>,
    /// The domain bits of this run's heap addresses and of its worker's external ones
    /// (`crates/simpler-runtime/src/memory.rs`), which every tensor argument must carry.
    domains: submit::Domains,
}

pub use crate::scheduler::ready::{READY_BATCH, READY_HOLD};

/// One task's wired fanin, as recorded with `CallConfig::record_fanin`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaninRecord {
    /// The consumer.
    pub task: TaskId,
    /// Its producers with the OR-ed flags of their edges, in discovery order.
    pub producers: Vec<(TaskId, DepFlags)>,
}

/// A call of the orchestration function into the runtime ([`Orchestrator::inside`]): one
/// byte, so marking a submit costs two byte stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RuntimeCall {
    Submit,
    AllocTensors,
    BeginScope,
    EndScope,
    ScopeEnd,
}

impl RuntimeCall {
    /// The call as a fatal message names it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            RuntimeCall::Submit => "submit",
            RuntimeCall::AllocTensors => "alloc_tensors",
            RuntimeCall::BeginScope => "begin_scope",
            RuntimeCall::EndScope => "end_scope",
            RuntimeCall::ScopeEnd => "the end of a scope",
        }
    }
}

impl Orchestrator {
    pub(crate) fn new(
        shared: Arc<RunShared>,
        tensormap_capacity: usize,
        record_fanin: bool,
        scope_stats: Option<ScopeStatsProducer>,
    ) -> Orchestrator {
        let sizes = shared.sizes;
        let kind = shared.kind;
        let windows = match kind {
            RuntimeKind::Tmr => sizes.task_window,
            RuntimeKind::Hbg => [sizes.task_window[0], 4, 4, 4],
        };
        Orchestrator {
            domains: submit::Domains::of(&shared.memory),
            kind,
            rings: std::array::from_fn(|r| {
                RingAllocator::new(
                    windows[r],
                    sizes.heap[r],
                    u64::from(sizes.dep_pool[r]),
                    DEP_POOL_ORIGIN,
                )
            }),
            tmap: TensorMap::new(match kind {
                RuntimeKind::Tmr => TensorMapConfig::bounded(tensormap_capacity, windows),
                // hbg advances no watermark while it builds the graph.
                RuntimeKind::Hbg => TensorMapConfig::bounded_never_retiring(tensormap_capacity),
            }),
            scopes: Vec::with_capacity(MAX_SCOPE_DEPTH),
            scope_tasks: Vec::with_capacity(1024),
            released: Vec::new(),
            release_batch: match kind {
                RuntimeKind::Tmr => scope_release::batch_for(&windows),
                RuntimeKind::Hbg => 0,
            },
            release_batches: 0,
            manual_depth: None,
            scratch: submit::Scratch::new(&windows),
            checked_kernels: submit::CheckedKernels::default(),
            total_tasks: 0,
            fanin_log: record_fanin.then(Vec::new),
            scope_stats: scope_stats.map(RefCell::new),
            dep_gen: None,
            dep_graph: None,
            skip_dep_gen_flush: false,
            inside: None,
            panic_in_alloc_tensors: false,
            lane: None,
            submits_timed: 0,
            inference_ns: None,
            ready_batches: Default::default(),
            launch_runs: Default::default(),
            // A host-built graph publishes every ready task before a scheduler runs: its
            // batches would overflow the rings.
            publisher: match kind {
                RuntimeKind::Tmr => shared.ready.publisher(),
                RuntimeKind::Hbg => None,
            },
            ready_pending: 0,
            ready_held_since: 0,
            arg_arena: (kind == RuntimeKind::Hbg).then(ArenaWriter::default),
            shared,
        }
    }

    /// Hands the argument lists written into the arena to the schedulers (`hbg`, once the
    /// graph is built and before it launches; nothing on `tmr`).
    pub(crate) fn publish_arg_arena(&mut self) {
        if let Some(w) = self.arg_arena.take() {
            self.shared.arg_arena.publish(w);
        }
    }

    /// Runs `f` inside a nested AUTO scope; the scope records the caller's site.
    #[track_caller]
    pub fn scope<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        self.scope_with(ScopeMode::Auto, Location::caller(), f)
    }

    /// Runs `f` inside a nested MANUAL scope (explicit deps only).
    #[track_caller]
    pub fn manual_scope<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        self.scope_with(ScopeMode::Manual, Location::caller(), f)
    }

    /// Runs `f` inside a scope of `mode` whose site is `site`.
    pub fn scope_with<R>(
        &mut self,
        mode: ScopeMode,
        site: impl Into<Site>,
        f: impl FnOnce(&mut Self) -> R,
    ) -> R {
        self.begin_scope(mode, site);
        let depth = self.scopes.len();
        let r = f(self);
        // Close whatever `f` left open, then this scope (an unbalanced manual `end_scope` inside
        // `f` was already reported).
        self.inside = Some(RuntimeCall::ScopeEnd);
        while self.scopes.len() >= depth && self.scopes.len() > 1 {
            self.close_scope();
        }
        self.inside = None;
        r
    }

    /// Opens a scope (prefer [`Orchestrator::scope`], which cannot be left unbalanced).
    pub fn begin_scope(&mut self, mode: ScopeMode, site: impl Into<Site>) {
        self.inside = Some(RuntimeCall::BeginScope);
        self.open_scope(mode, site.into());
        self.inside = None;
    }

    fn open_scope(&mut self, mode: ScopeMode, site: Site) {
        let depth = self.scopes.len();
        let ring = scope::ring_for_depth(self.kind, depth);
        if !self.shared.fatal.is_set() {
            if depth >= MAX_SCOPE_DEPTH {
                self.raise(
                    FatalCode::InvalidArgs,
                    format!("scopes nest deeper than {MAX_SCOPE_DEPTH}"),
                );
            } else if mode == ScopeMode::Auto && self.manual_depth.is_some() {
                self.raise(
                    FatalCode::InvalidArgs,
                    format!(
                        "auto scope at {} nested inside a manual scope is not supported",
                        site
                    ),
                );
            }
        }
        if mode == ScopeMode::Manual && self.manual_depth.is_none() {
            self.manual_depth = Some(depth);
        }
        self.scopes.push(ScopeFrame {
            site,
            ring,
            first_task: self.scope_tasks.len(),
        });
        if let Some(p) = &self.scope_stats {
            self.probe(p, Phase::Begin);
        }
    }

    /// Samples the innermost scope's ring (skipped once the run is fatal: open scopes then
    /// keep begin samples without ends). Out of line, so a run without scope stats pays one
    /// load and a branch per boundary; not `#[cold]`, which made it (and the record it
    /// inlines) several ns slower per boundary when scope stats are on.
    #[inline(never)]
    fn probe(&self, producer: &RefCell<ScopeStatsProducer>, phase: Phase) {
        if self.shared.fatal.is_set() {
            return;
        }
        let Some(frame) = self.scopes.last() else { return };
        let ring = usize::from(frame.ring);
        let r = &self.shared.rings[ring];
        let alloc = &self.rings[ring];
        let dep_top = alloc.dep_pool.top();
        let rec = ScopeRecord {
            site: frame.site,
            phase,
            depth: (self.scopes.len() - 1) as u16,
            ring: frame.ring,
            task_start: r.last_alive.load(Ordering::Acquire),
            task_end: alloc.window.next_local(),
            heap_start: alloc.heap.tail(r.heap_tail.load(Ordering::Acquire)),
            heap_end: alloc.heap.top(),
            dep_start: r.dep_tail.load(Ordering::Acquire).min(dep_top),
            dep_end: dep_top,
            tensormap: self.tmap.in_use() as u32,
        };
        producer.borrow_mut().record(rec);
    }

    /// Flushes and hands over the dep_gen capture (at the end of orchestration).
    pub(crate) fn take_dep_gen(&mut self) -> Option<CaptureFinal> {
        let mut c = self.dep_gen.take()?;
        if !self.skip_dep_gen_flush {
            c.flush();
        }
        Some(c.finish())
    }

    /// Hands the scope-stats producer's partial buffer to the host and its final state over
    /// (at the end of orchestration, after the root scope closed).
    pub(crate) fn take_scope_stats(&mut self) -> Option<ProducerFinal> {
        self.scope_stats.take().map(|p| {
            let mut p = p.into_inner();
            p.on_exit();
            p.finish()
        })
    }

    /// Closes the innermost scope, releasing the scope pin of every task submitted in it.
    /// Closing more scopes than were opened (the root belongs to the runtime) is INVALID_ARGS.
    pub fn end_scope(&mut self) {
        if self.scopes.len() <= 1 {
            if !self.shared.fatal.is_set() {
                self.raise(
                    FatalCode::InvalidArgs,
                    "end_scope without a matching begin_scope".into(),
                );
            }
            return;
        }
        self.inside = Some(RuntimeCall::EndScope);
        self.close_scope();
        self.inside = None;
    }

    /// Closes the innermost scope (the root too: the runtime's own end of orchestration).
    pub(crate) fn close_scope(&mut self) {
        // A host-built graph runs once it is whole, so its ready tasks wait for the root's end
        // in full runs (a batch per scope end cost a queue element per ready task, 136 bytes,
        // in a tiled GEMM whose tiles each have a scope). A tmr scope end publishes only what
        // is overdue ([`READY_HOLD`]).
        if self.scopes.len() <= 1 {
            self.publish_ready();
            for shape in TaskShape::ALL {
                let run = std::mem::take(&mut self.launch_runs[shape as usize]);
                self.shared.ready.publish_run(shape, run);
            }
        } else if self.kind == RuntimeKind::Tmr && self.ready_overdue() {
            self.publish_ready();
        }
        if let Some(p) = &self.scope_stats {
            self.probe(p, Phase::End);
        }
        let Some(frame) = self.scopes.pop() else { return };
        if self.manual_depth == Some(self.scopes.len()) {
            self.manual_depth = None;
        }
        let first = frame.first_task;
        if self.release_batch == 0 || self.scopes.is_empty() {
            if self.release_batch > 0 {
                // The root's end: nothing is left queued or gathered (without batching,
                // nothing ever is).
                self.apply_scope_releases();
            }
            self.shared
                .release_scope_batch(self.scope_tasks[first..].iter().map(|t| t.slot));
        } else {
            self.released
                .extend(self.scope_tasks[first..].iter().map(|t| t.slot));
            if self.released.len() >= self.release_batch {
                self.hand_over_scope_releases();
            }
        }
        self.scope_tasks.truncate(first);
    }

    /// Hands the gathered scope releases to the schedulers; past
    /// [`scope_release::QUEUED_BATCHES`] queued, applies the oldest itself.
    fn hand_over_scope_releases(&mut self) {
        self.release_batches += 1;
        if self.shared.scope_releases.hand_over(&mut self.released) > scope_release::QUEUED_BATCHES {
            self.shared.run_scope_release();
        }
    }

    /// Applies every scope release not applied yet, queued or gathered; whether there was
    /// any. Before a wait for room, and at the root scope's end.
    pub(crate) fn apply_scope_releases(&mut self) -> bool {
        let mut any = false;
        while self.shared.run_scope_release() {
            any = true;
        }
        if !self.released.is_empty() {
            self.shared.release_scope_batch(self.released.iter().copied());
            self.released.clear();
            any = true;
        }
        any
    }

    /// Hands the ready tasks this orchestrator still holds (see [`READY_HOLD`]) to the
    /// schedulers now. Submits and scope ends publish them in batches, so call this before
    /// long host work between submits: a task held then waits for the next submit or scope
    /// end, even once every scheduler is idle. Cheap when nothing is held. Under `hbg` it does
    /// nothing: no scheduler runs before the graph is built, and its ready tasks wait for the
    /// root's end in runs (`LAUNCH_RUN`, `crates/simpler-runtime/src/scheduler/ready.rs`).
    pub fn publish_ready(&mut self) {
        if self.ready_pending > 0 {
            self.shared.publish_ready(
                &mut self.ready_batches,
                self.ready_pending,
                self.publisher.as_mut(),
            );
            self.ready_pending = 0;
        }
    }

    /// Current scope depth (0 = root).
    pub fn depth(&self) -> usize {
        self.scopes.len().saturating_sub(1)
    }

    /// True inside a manual scope.
    pub fn in_manual_scope(&self) -> bool {
        self.manual_depth.is_some()
    }

    /// Submits a task to one AIV core.
    pub fn submit_aiv(&mut self, kernel: u32, args: &TaskArgs<'_>) -> Result<TaskOutputs, Stopped> {
        self.submit(MixedKernels::aiv(kernel as i32), args)
    }

    /// Submits a task to one AIC core.
    pub fn submit_aic(&mut self, kernel: u32, args: &TaskArgs<'_>) -> Result<TaskOutputs, Stopped> {
        self.submit(MixedKernels::aic(kernel as i32), args)
    }

    /// Submits a dependency-only task (no core); it may still carry outputs.
    pub fn submit_dummy(&mut self, args: &TaskArgs<'_>) -> Result<TaskOutputs, Stopped> {
        self.submit(MixedKernels::NONE, args)
    }

    /// Submits a task with kernels on any mix of the cluster's subslots.
    pub fn submit(&mut self, kernels: MixedKernels, args: &TaskArgs<'_>) -> Result<TaskOutputs, Stopped> {
        self.timed_submit(kernels, args, false)
    }

    /// The submit, marked as the runtime's code ([`Orchestrator::inside`]).
    #[inline]
    fn timed_submit(
        &mut self,
        kernels: MixedKernels,
        args: &TaskArgs<'_>,
        alloc: bool,
    ) -> Result<TaskOutputs, Stopped> {
        self.inside = Some(if alloc {
            RuntimeCall::AllocTensors
        } else {
            RuntimeCall::Submit
        });
        if alloc && self.panic_in_alloc_tensors {
            panic!("injected runtime panic (Faults::panic_in_alloc_tensors)");
        }
        let out = self.spanned_submit(kernels, args, alloc);
        self.inside = None;
        out
    }

    /// The submit, with its span recorded when swimlane is on.
    #[inline]
    fn spanned_submit(
        &mut self,
        kernels: MixedKernels,
        args: &TaskArgs<'_>,
        alloc: bool,
    ) -> Result<TaskOutputs, Stopped> {
        let Some(start) = self.lane.as_ref().map(|l| l.clock.now()) else {
            return self.submit_task(KernelIds::of(kernels), args, alloc);
        };
        let out = self.submit_task(KernelIds::of(kernels), args, alloc)?;
        if let Some(l) = self.lane.as_mut() {
            let end = l.clock.now();
            let submit_idx = self.submits_timed;
            self.submits_timed += 1;
            l.push(Row::Orch(OrchRow {
                task_id: out.id().raw(),
                submit_idx,
                thread: 0,
                submit_start_ns: start,
                submit_end_ns: end,
            }));
        }
        Ok(out)
    }

    /// Allocates buffers through a hidden allocation task (completed at once); the outputs'
    /// owner is that task, so readers depend on it through their creator edge.
    pub fn alloc_tensors(&mut self, infos: &[TensorCreateInfo]) -> Result<TaskOutputs, Stopped> {
        let mut args = TaskArgs::new();
        for ci in infos {
            args.output(*ci);
        }
        self.timed_submit(MixedKernels::NONE, &args, true)
    }

    /// Stops the run with EXPLICIT_ORCH_FATAL (9).
    pub fn report_fatal(&mut self, message: impl Into<String>) -> Stopped {
        let msg = message.into();
        Stopped(self.raise(
            FatalCode::ExplicitOrchFatal,
            format!("orchestration reported: {msg}"),
        ))
    }

    /// True once the run is fatal.
    pub fn is_fatal(&self) -> bool {
        self.shared.fatal.is_set()
    }

    /// Clusters of this run.
    pub fn available_cluster_count(&self) -> u32 {
        self.shared.platform.clusters
    }

    /// AIV cores of this run.
    pub fn available_aiv_count(&self) -> u32 {
        self.platform().aiv_count()
    }

    fn platform(&self) -> Platform {
        self.shared.platform
    }

    /// The innermost open scope's site, as `"<file>:<line>"`.
    pub fn current_site(&self) -> String {
        self.scopes
            .last()
            .map_or_else(|| "<no scope>".into(), |f| f.site.to_string())
    }

    /// Latches a fatal (first wins) and wakes everyone; returns the latched code.
    #[cold]
    pub(crate) fn raise(&self, code: FatalCode, message: String) -> FatalCode {
        self.raise_with(code, message, None)
    }

    /// [`Orchestrator::raise`] with the facts of a resource fatal.
    #[cold]
    pub(crate) fn raise_with(
        &self,
        code: FatalCode,
        message: String,
        context: Option<FatalContext>,
    ) -> FatalCode {
        let c = self.shared.fatal.raise_with(code, message, context);
        if let Some(p) = &self.scope_stats {
            p.borrow_mut().on_fatal();
        }
        self.shared.wake_all();
        c
    }

    #[inline]
    fn check_live(&self) -> Result<(), Stopped> {
        match self.shared.fatal.code() {
            Some(c) => Err(Stopped(c)),
            None => Ok(()),
        }
    }

    pub(crate) fn stats(&mut self) -> OrchStats {
        OrchStats {
            tasks_per_ring: std::array::from_fn(|r| self.rings[r].window.next_local()),
            tasks: self.total_tasks,
            orchestration_ns: 0,
            inference_ns: self.inference_ns,
            fanin_log: self.fanin_log.take(),
            scope_release_batches: self.release_batches,
            timeline: None,
        }
    }
}
