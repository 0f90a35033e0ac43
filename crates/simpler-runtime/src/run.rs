//! Drives one run: threads, the root scope, completion, timeout and the report.
//!
//! `tmr`: the orchestration runs on its own thread while the scheduler threads execute.
//! `hbg`: the orchestration runs to completion on the calling thread, then the schedulers
//! execute the finished graph. Either way the calling thread waits (parked) until every thread
//! of the run has exited, or the run timeout passes; then it latches SCHEDULER_TIMEOUT (100),
//! gives the threads a grace period, and abandons those that still do not stop (the run then
//! closes without producer-stop proof).

use crate::sync::{AtomicBool, Ordering};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use simpler_artifacts::manifest::DiagnosticEntry;
use simpler_artifacts::output_folder::ClaimError;

use crate::collectors::dep_gen::DepGenOutcome;
use crate::collectors::output::RunOutput;
use crate::collectors::scope_stats::ScopeStatsOutcome;
use crate::collectors::swimlane::SwimlaneOutcome;
use crate::collectors::{Finals, Probes};
use crate::config::{CallConfig, ConfigError, Faults, RingSizes, RuntimeKind};
use crate::fatal::{panic_message, Fatal, FatalCode, Stopped};
use crate::orchestrator::{FaninRecord, OrchResult, OrchStats, Orchestrator, ScopeMode};
use crate::scheduler::scheduler_loop;
use crate::shared::{RunShared, PARK_TICK};
use crate::site::Site;

/// How long threads get to stop after a timeout before they are abandoned.
const ABANDON_GRACE: Duration = Duration::from_secs(2);

/// What a finished run reports.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The runtime that ran.
    pub runtime: RuntimeKind,
    /// Tasks submitted (dummies and allocs included).
    pub tasks: u64,
    /// Tasks per ring.
    pub tasks_per_ring: [u32; 4],
    /// Tasks that completed.
    pub completed: u64,
    /// Wall time from start to the last thread's exit.
    pub wall: Duration,
    /// Time spent in the orchestration function.
    pub orchestration: Duration,
    /// Batches of scope-end releases the orchestrator handed to the schedulers (`tmr`; 0 when
    /// every scope end released its tasks itself: `hbg`, small task windows, or no batch
    /// filled before a wait or the end).
    pub scope_release_batches: u64,
    /// Where an `hbg` run's graph-build time went (`None` under `tmr`, whose orchestration
    /// overlaps execution).
    pub build: Option<BuildPhases>,
    /// Effective ring sizes.
    pub sizes: RingSizes,
    /// The root scope's site.
    pub root_site: String,
    /// Scheduler threads used.
    pub scheduler_threads: usize,
    /// True when every device thread was joined (producer-stop proof).
    pub stop_proven: bool,
    /// Wired fanin per task (with `CallConfig::record_fanin`).
    pub fanin_log: Option<Vec<FaninRecord>>,
    /// What became of this run's scope stats (with `enable_scope_stats`).
    pub scope_stats: Option<ScopeStatsOutcome>,
    /// What became of this run's dep_gen (with `enable_dep_gen`).
    pub dep_gen: Option<DepGenOutcome>,
    /// What became of this run's swimlane records (with `enable_l2_swimlane`).
    pub swimlane: Option<SwimlaneOutcome>,
    /// What became of this run's args dump (with `dump_args` above 0).
    pub args_dump: Option<crate::collectors::args_dump::ArgsDumpOutcome>,
    /// Every requested diagnostic's outcome and files, as the run manifest lists them.
    pub diagnostics: Vec<DiagnosticEntry>,
    /// The claimed output folder and its manifest (with any diagnostic on). The folder stays
    /// claimed while this value (or a clone) lives: a caller rendering views keeps it.
    pub output: Option<RunOutput>,
}

impl RunReport {
    /// The wired edges as sorted (producer, consumer, flags) triples; `None` without
    /// `CallConfig::record_fanin`.
    pub fn wired_edges(
        &self,
    ) -> Option<Vec<(simpler_core::TaskId, simpler_core::TaskId, simpler_core::DepFlags)>> {
        let mut v: Vec<_> = (self.fanin_log.as_ref()?.iter())
            .flat_map(|r| r.producers.iter().map(move |&(p, f)| (p, r.task, f)))
            .collect();
        v.sort();
        Some(v)
    }
}

/// Why a run failed.
#[derive(Debug)]
pub enum RunError {
    /// The configuration was rejected before the run started.
    Config(ConfigError),
    /// A diagnostic refused to start the run (e.g. too many unpublished background exports).
    Refused(crate::collectors::DiagnosticsError),
    /// The output folder could not be claimed (another run holds it, or it is not writable).
    OutputFolder(ClaimError),
    /// An interrupt (SIGINT/SIGTERM, with `stop_on_interrupt`) came before the run claimed its
    /// output folder: nothing ran, and the folder was left as it was.
    Interrupted,
    /// The run stopped on a fatal.
    Fatal {
        /// The latched fatal.
        fatal: Fatal,
        /// What the run did before it stopped.
        report: Box<RunReport>,
    },
}

impl RunError {
    /// The fatal code, when the run stopped on one.
    pub fn code(&self) -> Option<FatalCode> {
        match self {
            RunError::Fatal { fatal, .. } => Some(fatal.code),
            RunError::Interrupted => Some(FatalCode::Interrupted),
            RunError::Config(_) | RunError::Refused(_) | RunError::OutputFolder(_) => None,
        }
    }
    /// The run's report, when it started.
    pub fn report(&self) -> Option<&RunReport> {
        match self {
            RunError::Fatal { report, .. } => Some(report),
            RunError::Config(_)
            | RunError::Refused(_)
            | RunError::OutputFolder(_)
            | RunError::Interrupted => None,
        }
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Config(e) => write!(f, "invalid configuration: {e}"),
            RunError::Refused(why) => write!(f, "run refused before it started: {why}"),
            RunError::OutputFolder(e) => write!(f, "run refused before it started: {e}"),
            RunError::Interrupted => f.write_str(
                "interrupted before the run started: nothing ran, and its output folder was left as it was",
            ),
            RunError::Fatal { fatal, .. } => fatal.fmt(f),
        }
    }
}

impl std::error::Error for RunError {}

impl From<ConfigError> for RunError {
    fn from(e: ConfigError) -> Self {
        RunError::Config(e)
    }
}

/// The orchestration function a run executes.
pub type OrchFn = Box<dyn FnOnce(&mut Orchestrator) -> OrchResult + Send + 'static>;

/// Runs the orchestration inside the root scope and records how it ended.
fn orchestrate(
    shared: &Arc<RunShared>,
    cfg: &CallConfig,
    root: Site,
    f: OrchFn,
    probes: Probes,
) -> (OrchStats, Finals) {
    let mut orch = Orchestrator::new(
        shared.clone(),
        cfg.tensormap_capacity,
        cfg.record_fanin,
        probes.scope_stats,
    );
    orch.dep_gen = probes.dep_gen;
    orch.dep_graph = probes.dep_graph;
    orch.skip_dep_gen_flush = cfg.faults.skip_dep_gen_flush;
    orch.panic_in_alloc_tensors = cfg.faults.panic_in_alloc_tensors;
    // Submit spans are level 4 (`aicpu_orchestrator_phases`).
    orch.lane = (shared.swimlane.as_ref())
        .filter(|s| s.level.has_orch_phases())
        .map(|s| s.producer());
    if shared.kind == RuntimeKind::Hbg && shared.swimlane.is_some() {
        // hbg's build phases: split the orchestration into submit and dependency inference.
        orch.inference_ns = Some(0);
    }
    orch.begin_scope(ScopeMode::Auto, root);
    let t0 = Instant::now();
    let outcome = catch_unwind(AssertUnwindSafe(|| f(&mut orch)));
    let returned = Instant::now();
    let elapsed = returned - t0;
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            if e.downcast_ref::<Stopped>().is_none() {
                orch.raise(
                    FatalCode::ExplicitOrchFatal,
                    format!("orchestration returned an error: {e}"),
                );
            }
        }
        Err(panic) => match orch.inside.take() {
            // Inside a call into the runtime: the runtime's bug, not the orchestration's.
            Some(call) => {
                orch.raise(
                    FatalCode::InternalPanic,
                    format!(
                        "the runtime panicked inside {}, called by the orchestration function: \
                         {}; this is a bug in simpler (please report it with the run's settings)",
                        call.name(),
                        panic_message(panic.as_ref())
                    ),
                );
            }
            None => {
                orch.raise(
                    FatalCode::ExplicitOrchFatal,
                    format!("orchestration panicked: {}", panic_message(panic.as_ref())),
                );
            }
        },
    }
    if cfg.faults.panic_in_orchestrator {
        panic!("injected orchestrator panic (Faults::panic_in_orchestrator)");
    }
    while orch.depth() > 0 {
        orch.close_scope();
    }
    orch.close_scope(); // the root
    orch.publish_arg_arena();
    let mut stats = orch.stats();
    stats.orchestration_ns = elapsed.as_nanos() as u64;
    stats.timeline = Some([t0, returned, Instant::now()]);
    drop(orch.lane.take()); // hands its last rows over
    let outputs = Finals {
        scope_stats: orch.take_scope_stats(),
        dep_gen: orch.take_dep_gen(),
        dep_graph: orch.dep_graph.take(),
    };
    shared.total_tasks.store(stats.tasks, Ordering::Release);
    shared.orch_done.store(true, Ordering::Release);
    shared.wake_all();
    (stats, outputs)
}

/// A finished (or abandoned) run, before diagnostics are closed.
pub(crate) struct Executed {
    pub report: RunReport,
    pub fatal: Option<Fatal>,
    /// The producers' final states; only present with producer-stop proof.
    pub finals: Finals,
    /// When an `hbg` run built and launched its graph.
    pub build: Option<BuildTimeline>,
}

/// Where an `hbg` run's graph-build time went, in the run summary and the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildPhases {
    /// The orchestration function's submits, dependency inference excluded when it was timed.
    pub submit: Duration,
    /// Dependency inference (tensor-map lookups and inserts) within the submits; timed only
    /// with swimlane timing on (two clock reads per submit).
    pub inference: Option<Duration>,
    /// Graph finalisation: closing the scopes the function left open and the root scope,
    /// handing the graph to the schedulers.
    pub finalise: Duration,
    /// Launch: from starting the scheduler threads to the first one running.
    pub launch: Duration,
}

/// The instants behind [`BuildPhases`], for the swimlane records.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BuildTimeline {
    pub begun: Instant,
    pub returned: Instant,
    pub finalised: Instant,
    pub launch: Instant,
    pub launched: Instant,
    pub inference_ns: Option<u64>,
}

impl BuildTimeline {
    pub fn phases(&self) -> BuildPhases {
        let inference = self.inference_ns.map(Duration::from_nanos);
        let orchestration = self.returned.saturating_duration_since(self.begun);
        BuildPhases {
            submit: orchestration.saturating_sub(inference.unwrap_or_default()),
            inference,
            finalise: self.finalised.saturating_duration_since(self.returned),
            launch: self.launched.saturating_duration_since(self.launch),
        }
    }
}

impl Executed {
    /// The run's result.
    pub fn into_result(self) -> Result<RunReport, RunError> {
        match self.fatal {
            Some(fatal) => Err(RunError::Fatal {
                fatal,
                report: Box::new(self.report),
            }),
            None => Ok(self.report),
        }
    }
}

/// Starts the `n` scheduler threads. When one cannot start, the run stops with
/// THREAD_START_FAILED and the ones after it are not started.
fn spawn_schedulers(shared: &Arc<RunShared>, n: usize, faults: &Faults) -> Vec<JoinHandle<()>> {
    let mut started = Vec::with_capacity(n);
    for i in 0..n {
        let s = shared.clone();
        let name = format!("simpler-sched-{i}");
        let thread = start_thread(&name, faults, move || {
            let watch = s.clone();
            let run = catch_unwind(AssertUnwindSafe(|| scheduler_loop(s, i as u32, n as u32)));
            if let Err(panic) = run {
                let who = format!("scheduler thread {i} panicked outside any kernel");
                internal_panic(&watch, &who, panic.as_ref());
            }
        });
        match thread {
            Ok(t) => started.push(t),
            Err(e) => {
                thread_start_failed(shared, &name, &e, n - i);
                break;
            }
        }
    }
    started
}

/// Starts run thread `name` running `f`, or says why it could not (the system's refusal, or
/// the test fault `Faults::refuse_thread_start` naming it).
fn start_thread<T: Send + 'static>(
    name: &str,
    faults: &Faults,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<JoinHandle<T>> {
    if faults.refuse_thread_start.as_deref() == Some(name) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::WouldBlock,
            "refused by a test fault",
        ));
    }
    std::thread::Builder::new().name(name.into()).spawn(f)
}

/// Run thread `name` could not start (e.g. the process is at its limit of threads): stops the
/// run with THREAD_START_FAILED, instead of the panic that `spawn(..).expect(..)` was, and
/// counts the `missing` threads that will never run as exited, so the run closes with proof.
#[cold]
fn thread_start_failed(shared: &RunShared, name: &str, e: &std::io::Error, missing: usize) {
    shared.fatal.raise(
        FatalCode::ThreadStartFailed,
        format!(
            "could not start thread {name}: {e}; the process may be at its limit of threads \
             (ulimit -u, or a container's pids limit)"
        ),
    );
    shared.wake_all();
    for _ in 0..missing {
        shared.thread_exited();
    }
}

/// A runtime thread panicked outside the user's code (a kernel's or the orchestration
/// function's panic is caught where it runs and stops the run with its own code): stops the
/// run at once with INTERNAL_PANIC and counts the thread as exited, instead of leaving the
/// run unfinished until its timeout blamed a kernel. The thread's diagnostics producers were
/// dropped while it unwound, which hands their rows over as a normal exit does. `who` says
/// which thread and where, e.g. "scheduler thread 0 panicked outside any kernel".
#[cold]
fn internal_panic(shared: &RunShared, who: &str, panic: &(dyn std::any::Any + Send)) {
    shared.fatal.raise(
        FatalCode::InternalPanic,
        format!(
            "{who} after {} tasks completed: {}; this is a bug in simpler (please report it \
             with the run's settings)",
            shared.completions.total(),
            panic_message(panic)
        ),
    );
    shared.wake_all();
    shared.thread_exited();
}

/// Runs `orchestrate` (a call of [`orchestrate`]) with a panic outside the orchestration
/// function (a bug in the runtime) turned into INTERNAL_PANIC; the orchestrator counts as
/// exited either way.
fn guarded(shared: &RunShared, orchestrate: impl FnOnce() -> (OrchStats, Finals)) -> (OrchStats, Finals) {
    match catch_unwind(AssertUnwindSafe(orchestrate)) {
        Ok(out) => {
            shared.thread_exited();
            out
        }
        Err(panic) => {
            let who = "the orchestrator panicked outside the orchestration function";
            internal_panic(shared, who, panic.as_ref());
            Default::default()
        }
    }
}

/// Runs `build` (an `hbg` orchestration, the graph build) while a thread on the otherwise idle
/// scheduler core faults in the memory of the window's next slots and argument-arena blocks
/// (`ring/slots.rs`).
/// A prefault thread that cannot start (the system refused it, or the test fault
/// `Faults::refuse_thread_start` named `simpler-prefault`) only costs the build its help.
fn with_prefault<R>(shared: &RunShared, faults: &Faults, build: impl FnOnce() -> R) -> R {
    /// Stops the prefault thread when the build ends, by return or by unwinding (the scope
    /// joins the thread, so a build that never said "done" would never return).
    struct Done<'a>(&'a AtomicBool, &'a crate::ring::slots::SlotStore);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
            self.1.wake_prefault();
        }
    }
    let done = AtomicBool::new(false);
    let slots = &shared.rings[0].slots;
    const NAME: &str = "simpler-prefault";
    std::thread::scope(|s| {
        if faults.refuse_thread_start.as_deref() != Some(NAME) {
            // Best effort: without the thread the build faults its pages in itself.
            let _ = std::thread::Builder::new().name(NAME.into()).spawn_scoped(s, || {
                slots.prefault_ahead(|| done.load(Ordering::Acquire) || shared.fatal.is_set())
            });
        }
        let _done = Done(&done, slots);
        build()
    })
}

/// What the run loop saw when it stopped the run from outside: the tasks completed then, and
/// whether the orchestration had ended.
#[derive(Clone, Copy)]
struct AtStop {
    completed: u64,
    orch_done: bool,
}

impl AtStop {
    fn now(shared: &RunShared) -> AtStop {
        AtStop {
            completed: shared.completions.total(),
            orch_done: shared.orch_done.load(Ordering::Acquire),
        }
    }
}

/// The message of a fatal the run loop raises when it stops the run from outside: an
/// interrupt, or the timeout, as the loop saw the run `then`. `at_end` is the count once the
/// threads stopped: a kernel that ended in the grace period adds to it, and the message says
/// so (the run's summary counts it).
fn stop_message(code: FatalCode, then: AtStop, at_end: u64, shared: &RunShared, cfg: &CallConfig) -> String {
    let at_stop = then.completed;
    let later = match at_end.saturating_sub(at_stop) {
        0 => String::new(),
        n => format!(" (and {n} more while the run stopped)"),
    };
    if code == FatalCode::Interrupted {
        return format!(
            "the run was interrupted (SIGINT/SIGTERM) after {at_stop} tasks completed{later}; \
             diagnostics were closed without producer-stop proof"
        );
    }
    format!(
        "the run did not finish within {:?}: {}{later}; a kernel may never return, or raise the \
         timeout (--timeout-secs; CallConfig::timeout in Rust)",
        cfg.timeout,
        if then.orch_done {
            format!(
                "{at_stop} of {} tasks completed",
                shared.total_tasks.load(Ordering::Acquire)
            )
        } else {
            format!("{at_stop} tasks completed, the orchestration still running")
        },
    )
}

/// Executes one run to its end (or abandonment) and builds the report.
pub(crate) fn execute(
    shared: Arc<RunShared>,
    cfg: &CallConfig,
    root: Site,
    f: OrchFn,
    probes: Probes,
) -> Executed {
    let start = Instant::now();
    let threads = shared.scheduler_threads;
    let mut launch_start = None;
    let (mut handles, orch_handle, hbg_stats) = match shared.kind {
        RuntimeKind::Tmr => {
            let scheds = spawn_schedulers(&shared, threads, &cfg.faults);
            let (s, c) = (shared.clone(), cfg.clone());
            const NAME: &str = "simpler-orch";
            let orch = start_thread(NAME, &cfg.faults, move || {
                guarded(&s, || orchestrate(&s, &c, root, f, probes))
            });
            let orch = match orch {
                Ok(t) => Some(t),
                Err(e) => {
                    thread_start_failed(&shared, NAME, &e, 1);
                    None
                }
            };
            (scheds, orch, None)
        }
        RuntimeKind::Hbg => {
            let out = with_prefault(&shared, &cfg.faults, || {
                guarded(&shared, || orchestrate(&shared, cfg, root, f, probes))
            });
            launch_start = Some(Instant::now());
            (spawn_schedulers(&shared, threads, &cfg.faults), None, Some(out))
        }
    };
    let all = threads as u32 + 1;
    // A timeout past what the clock can represent means no timeout (about 30 years is plenty).
    let deadline = start
        .checked_add(cfg.timeout)
        .unwrap_or_else(|| start + Duration::from_secs(1 << 30));
    let exited = || shared.threads_exited.load(Ordering::Acquire) >= all;
    // Latches `code`, wakes every thread, and gives them the grace period to exit.
    let stop = |code: FatalCode, message: String| {
        shared.fatal.raise(code, message);
        shared.wake_all();
        let grace = Instant::now() + cfg.faults.abandon_grace.unwrap_or(ABANDON_GRACE);
        while !exited() && Instant::now() < grace {
            shared.done_sleep.sleep_unless(PARK_TICK, exited);
        }
    };
    let mut interrupted = false;
    // The fatal this loop raised (an interrupt or the timeout) and the tasks completed then;
    // its message is restated below with the count at the end.
    let mut stopped_by = None;
    // A zero timeout has passed before anything ran: it stops the run even when every thread
    // exited before this loop first looked (a small run on a fast machine), instead of racing it.
    while !exited() || cfg.timeout.is_zero() {
        let now = Instant::now();
        if cfg.stop_on_interrupt && simpler_artifacts::interrupt::requested() {
            // Stopped from outside: whatever the threads do now, the close is unproven.
            interrupted = true;
            let then = AtStop::now(&shared);
            stopped_by = Some((FatalCode::Interrupted, then));
            let message = stop_message(FatalCode::Interrupted, then, then.completed, &shared, cfg);
            stop(FatalCode::Interrupted, message);
            break;
        }
        if now >= deadline {
            let then = AtStop::now(&shared);
            stopped_by = Some((FatalCode::SchedulerTimeout, then));
            let message = stop_message(FatalCode::SchedulerTimeout, then, then.completed, &shared, cfg);
            stop(FatalCode::SchedulerTimeout, message);
            break;
        }
        shared
            .done_sleep
            .sleep_unless((deadline - now).min(PARK_TICK * 5), exited);
    }
    let stop_proven = exited() && !interrupted;
    let (stats, finals) = if exited() {
        for h in handles.drain(..) {
            let _ = h.join();
        }
        let (stats, finals) = match orch_handle {
            Some(h) => h.join().unwrap_or_default(),
            None => hbg_stats.unwrap_or_default(),
        };
        // An interrupted run closes without proof: nothing the producers held is read.
        (stats, if interrupted { Finals::default() } else { finals })
    } else {
        // Without proof nothing the producer still holds may be read.
        (hbg_stats.map(|s| s.0).unwrap_or_default(), Finals::default())
    };
    let build = match (launch_start, stats.timeline, shared.first_scheduler_start.get()) {
        (Some(launch), Some([begun, returned, finalised]), Some(&launched)) => Some(BuildTimeline {
            begun,
            returned,
            finalised,
            launch,
            launched,
            inference_ns: stats.inference_ns,
        }),
        _ => None,
    };
    let report = RunReport {
        build: build.map(|b| b.phases()),
        runtime: shared.kind,
        tasks: stats.tasks.max(shared.total_tasks.load(Ordering::Acquire)),
        tasks_per_ring: stats.tasks_per_ring,
        completed: shared.completions.total(),
        wall: start.elapsed(),
        orchestration: Duration::from_nanos(stats.orchestration_ns),
        scope_release_batches: stats.scope_release_batches,
        sizes: shared.sizes,
        root_site: root.to_string(),
        scheduler_threads: threads,
        stop_proven,
        fanin_log: stats.fanin_log,
        scope_stats: None,
        dep_gen: None,
        swimlane: None,
        args_dump: None,
        diagnostics: Vec::new(),
        output: None,
    };
    let mut fatal = shared.fatal.get();
    // Found by a review: kernels that ended in the grace period were counted by the summary
    // ("stopped after 35 of 200") but not by the fatal raised before it ("after 34 tasks"). The
    // message is restated with the count at the end too.
    if let (Some(f), Some((code, then))) = (fatal.as_mut(), stopped_by) {
        if f.code == code {
            f.message = stop_message(code, then, report.completed, &shared, cfg);
        }
    }
    Executed {
        report,
        fatal,
        finals,
        build,
    }
}
