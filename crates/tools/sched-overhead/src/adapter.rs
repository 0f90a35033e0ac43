//! The one place this tool touches the artifact formats: the swimlane records (through
//! `simpler_artifacts::swimlane::read_swimlane`) and deps.json (through
//! `simpler_artifacts::deps::read_deps`) are streamed and turned at once into this tool's own
//! values, [`TimedTask`], [`Phase`] and the unique dependency pairs. Nothing else in the crate
//! names a record type.

use std::path::Path;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::de::IgnoredAny;
use simpler_artifacts::deps::{read_deps, DepsReadError, DepsSink, EdgeEnds, TaskHead};
use simpler_artifacts::swimlane::{
    self, read_swimlane, SchedPhase, SwimlaneReadError, SwimlaneSink, TaskRow,
};

/// The kind of core a row ran on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Engine {
    /// Cube core.
    Aic,
    /// Vector core.
    Aiv,
}

impl Engine {
    /// Both engines, in report order.
    pub const ALL: [Engine; 2] = [Engine::Aic, Engine::Aiv];

    /// `AIC` or `AIV`.
    pub fn label(self) -> &'static str {
        match self {
            Engine::Aic => "AIC",
            Engine::Aiv => "AIV",
        }
    }
}

/// One row of the timing: a block of a task on one core, times in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedTask {
    /// Raw task id.
    pub id: u64,
    /// The core.
    pub core: u32,
    /// Its kind.
    pub engine: Engine,
    /// When the scheduler handed it to the core (`None` when the level does not record it).
    pub dispatch_ns: Option<u64>,
    /// Kernel start.
    pub start_ns: u64,
    /// Kernel end.
    pub end_ns: u64,
    /// When the scheduler saw it complete (`None` when the level does not record it).
    pub finish_ns: Option<u64>,
    /// The kernel.
    pub func_id: i32,
    /// The scheduler thread that served the core, if known.
    pub sched_thread: Option<u32>,
    /// How many rows its task should have, when the records say: its SPMD block count times
    /// its active kernels (this runtime's `simpler_task_info`); `None` in the original's files.
    pub expected_rows: Option<u32>,
}

/// One scheduler loop phase record (swimlane level ≥ 3), times in ns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    /// Scheduler thread.
    pub thread: u32,
    /// The phase (`complete`, `dispatch`, `async_poll`, ...).
    pub kind: String,
    /// Start.
    pub start_ns: u64,
    /// End.
    pub end_ns: u64,
    /// The loop iteration it belongs to.
    pub loop_iter: u64,
    /// Tasks it handled (for `complete`: finishes).
    pub tasks_processed: u64,
    /// `dispatch` only: ready-queue pops that found a task since the previous record.
    pub pop_hit: u64,
    /// `dispatch` only: pops that found none.
    pub pop_miss: u64,
}

/// Everything the analysis reads from a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Input {
    /// Every row, in file order.
    pub tasks: Vec<TimedTask>,
    /// Scheduler phases (empty below level 3).
    pub phases: Vec<Phase>,
    /// Unique `(pred, succ)` pairs of deps.json, in first-seen order.
    pub edges: Vec<(u64, u64)>,
    /// The tasks deps.json lists without an active kernel (dummy and alloc tasks), which have
    /// no timing rows below level 4.
    pub kernel_less: FxHashSet<u64>,
    /// The rows each deps.json task should have (its `block_num` times its active
    /// `kernel_ids`), for the tasks whose entry gives both: what a task's rows are checked
    /// against when the records do not say (kept only when a row's records do not).
    pub expected_rows: FxHashMap<u64, u32>,
    /// Rows of a level-2+ file left out for want of a scheduler stamp (an `aicore_tasks` row
    /// without its `aicpu_tasks` row, or a kernel still running when the run stopped): the
    /// original's reader drops them too, and the model needs both stamps of every row.
    pub unstamped: usize,
    /// Timed tasks deps.json does not list, and the first of them in the records' order
    /// (`simpler_artifacts::manifest::unlisted_timed_tasks`).
    pub unlisted: (usize, Option<u64>),
}

/// Reads the rows of the records file at `path`.
pub fn read_records(path: &Path, input: &mut Input) -> Result<(), SwimlaneReadError> {
    struct Rows<'a>(&'a mut Input);
    impl SwimlaneSink for Rows<'_> {
        fn task(&mut self, row: TaskRow) {
            self.0.tasks.push(TimedTask {
                id: row.task_id,
                core: row.core_id,
                engine: match row.core_type {
                    swimlane::CoreType::Aic => Engine::Aic,
                    swimlane::CoreType::Aiv => Engine::Aiv,
                },
                dispatch_ns: row.dispatch_ns,
                start_ns: row.start_ns,
                end_ns: row.end_ns,
                finish_ns: row.finish_ns,
                func_id: row.func_id,
                sched_thread: row.sched_thread,
                expected_rows: expected_rows(row.block_num, &row.kernel_ids),
            });
        }
        fn sched_phase(&mut self, p: SchedPhase) {
            self.0.phases.push(Phase {
                thread: p.sched_thread,
                kind: p.kind,
                start_ns: p.start_ns,
                end_ns: p.end_ns,
                loop_iter: p.loop_iter,
                tasks_processed: p.tasks_processed,
                pop_hit: p.pop_hit.unwrap_or(0),
                pop_miss: p.pop_miss.unwrap_or(0),
            });
        }
    }
    let header = read_swimlane(path, &mut Rows(input))?;
    for note in &header.notes {
        simpler_artifacts::errln!("warning: {}: {note}", path.display());
    }
    // Below level 2 no row has stamps: they stay, and the model refuses the file by name.
    if header.level.has_dispatch() {
        let before = input.tasks.len();
        input
            .tasks
            .retain(|t| t.dispatch_ns.is_some() && t.finish_ns.is_some());
        input.unstamped = before - input.tasks.len();
        if input.unstamped > 0 {
            simpler_artifacts::errln!(
                "warning: {}: {} rows without a dispatch or finish time are left out of the model \
                 (the original's reader drops them too)",
                path.display(),
                input.unstamped
            );
        }
    }
    Ok(())
}

/// Reads the unique dependency pairs of the deps.json at `path`, and the rows its tasks should
/// have when a row read before does not say ([`Input::expected_rows`]). Edges with a cycle
/// are refused, naming the edge that closes it ([`simpler_artifacts::deps::cycle`]).
pub fn read_edges(path: &Path, input: &mut Input) -> Result<(), DepsReadError> {
    // This runtime's records give every row's count: the map would only cost memory.
    let counts_needed = input.tasks.iter().any(|t| t.expected_rows.is_none());
    struct Pairs<'a> {
        seen: FxHashSet<(u64, u64)>,
        out: &'a mut Vec<(u64, u64)>,
        /// The index in `edges[]` of each pair of `out` (its first edge).
        rows: Vec<usize>,
        read: usize,
        kernel_less: &'a mut FxHashSet<u64>,
        expected_rows: Option<&'a mut FxHashMap<u64, u32>>,
        /// The timed tasks not listed yet.
        unlisted: FxHashSet<u64>,
    }
    impl DepsSink for Pairs<'_> {
        type Task = TaskHead;
        type Tensor = IgnoredAny;
        type Edge = EdgeEnds;
        fn task(&mut self, t: TaskHead) {
            self.unlisted.remove(&t.task_id);
            if let (Some(map), Some(blocks), Some(kernels)) =
                (self.expected_rows.as_deref_mut(), t.block_num, &t.kernel_ids)
            {
                if let Some(rows) = expected_rows(blocks, kernels) {
                    map.insert(t.task_id, rows);
                }
            }
            if t.kernel_ids.is_some_and(|k| k.iter().all(|&k| k < 0)) {
                self.kernel_less.insert(t.task_id);
            }
        }
        fn tensor(&mut self, _: IgnoredAny) {}
        fn edge(&mut self, e: EdgeEnds) {
            if self.seen.insert((e.pred, e.succ)) {
                self.out.push((e.pred, e.succ));
                self.rows.push(self.read);
            }
            self.read += 1;
        }
    }
    let first = input.edges.len();
    let mut pairs = Pairs {
        seen: FxHashSet::default(),
        out: &mut input.edges,
        rows: Vec::new(),
        read: 0,
        kernel_less: &mut input.kernel_less,
        expected_rows: counts_needed.then_some(&mut input.expected_rows),
        unlisted: input.tasks.iter().map(|t| t.id).collect(),
    };
    read_deps(path, &mut pairs)?;
    let (rows, unlisted) = (pairs.rows, pairs.unlisted);
    let first_unlisted = input.tasks.iter().map(|t| t.id).find(|id| unlisted.contains(id));
    input.unlisted = (unlisted.len(), first_unlisted);
    match simpler_artifacts::deps::cycle::cycle_message(&input.edges[first..], |i| rows[i]) {
        Some(cycle) => Err(DepsReadError::invalid(path, "deps.json", cycle)),
        None => Ok(()),
    }
}

/// `block_num` × the active (non-negative) entries of `kernel_ids`: the rows a task should
/// have; `None` when either is 0 (not recorded).
fn expected_rows(block_num: u32, kernel_ids: &[i32]) -> Option<u32> {
    let active = kernel_ids.iter().filter(|&&k| k >= 0).count() as u32;
    let rows = block_num.saturating_mul(active);
    (rows > 0).then_some(rows)
}
