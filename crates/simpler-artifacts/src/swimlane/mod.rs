//! Swimlane records: per-task timing of a run, in the original runtime's raw layout
//! (`../shared/reference/swimlane-format.md` §3; field-by-field reference in `docs/swimlane.md`).
//!
//! # The file
//!
//! `l2_swimlane_records.json` (the spec's name; a run also links it as
//! `chip_swimlane_records.json`, the name the original's tools look for since it renamed the
//! feature). One JSON object, the original's layout, so either side's converter reads either
//! side's files:
//!
//! - `chip_swimlane_level` (and the same value as `l2_swimlane_level`, the pre-rename key);
//! - `metadata`: `clock_freq_hz` (1 GHz here: one cycle is one nanosecond of the run clock),
//!   `num_cores`, `core_types`, `core_to_thread` (level ≥ 3), and our own `simpler` object
//!   (clusters, scheduler threads);
//! - `aicore_tasks`: `[core_id, task_token, reg_task_id, start, end, receive_to_start]` per
//!   kernel execution (level ≥ 1);
//! - `aicpu_tasks`: `[core_id, reg_task_id, dispatch, finish]` per execution (level ≥ 2);
//! - `aicpu_scheduler_phases`: one list per scheduler thread of phase objects (level ≥ 3);
//! - `aicpu_orchestrator_phases`: the orchestrator's submit spans (level 4);
//! - `simpler_task_info`: our addition, one `[func_id, block_idx, block_num, aic, aiv0, aiv1,
//!   sched_thread]` per `aicore_tasks` row, in the same order (the original's tools ignore it
//!   and take kernel ids from deps.json instead).
//!
//! # The model
//!
//! Readers never see the raw rows: [`read_swimlane`] joins `aicore_tasks` with `aicpu_tasks`
//! on `(core_id, reg_task_id)` as the original's reader does, converts cycles to nanoseconds
//! since the earliest timestamp, and hands over [`TaskRow`]s, [`DummyRow`]s, [`OrchRow`]s and
//! [`SchedPhase`]s. What a file does not record is `None` (dispatch and finish below level 2)
//! or the original's "unknown" value (`func_id` −1, `block_num` 0), and [`Header::notes`] says
//! so in words.
//!
//! Modules: [`write`](mod@write) (the streaming writer the runtime uses), `read` (the reader of ours and
//! the original's files, every level, both file names).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod join;
mod read;
#[cfg(test)]
mod tests;
pub mod write;

pub use read::{read_swimlane, read_swimlane_file, read_swimlane_from};
pub use write::{
    write_rows, AicoreRecord, AicpuRecord, BuildPhaseRecord, OrchRecord, PhaseRecord, SwimlaneWriter,
    TaskInfo, WriteHeader,
};

/// File name of the records, inside the run's output prefix (the spec's name).
pub const FILE_NAME: &str = "l2_swimlane_records.json";

/// The original's name of the same file since it renamed the feature "chip swimlane".
pub const CHIP_FILE_NAME: &str = "chip_swimlane_records.json";

/// The original's name before "l2 swimlane" (read, never written).
pub const PERF_FILE_NAME: &str = "l2_perf_records.json";

/// Every name a records file may have, in the order readers look for them.
pub const FILE_NAMES: [&str; 3] = [FILE_NAME, CHIP_FILE_NAME, PERF_FILE_NAME];

/// Clock frequency of the files this runtime writes: one cycle per nanosecond.
pub const CLOCK_FREQ_HZ: u64 = 1_000_000_000;

/// Kernel id of an inactive subslot in [`TaskRow::kernel_ids`], and of an unknown kernel.
pub const NO_KERNEL: i32 = -1;

/// The records file in `dir`, under any of [`FILE_NAMES`]: the first of them the folder holds.
/// Every tool that picks a folder's records by itself uses this rule (and
/// [`differing_copies`] to warn when the folder's copies disagree).
pub fn find_in(dir: &Path) -> Option<PathBuf> {
    FILE_NAMES.iter().map(|n| dir.join(n)).find(|p| p.is_file())
}

/// A warning when the folder of `records` (one of [`FILE_NAMES`]) holds the records under
/// another of those names too and the two differ in size or content. A run writes one file
/// under both names (hard links); a copy (`cp -r` breaks the links) later edited or replaced
/// makes them differ, and a tool reads one of them: the warning names the one read.
/// Copies that are one file (the same inode) are not compared.
pub fn differing_copies(records: &Path) -> Option<String> {
    let name = records.file_name()?;
    if !FILE_NAMES.iter().any(|n| name == *n) {
        return None;
    }
    let dir = match records.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let differing: Vec<&str> = FILE_NAMES
        .iter()
        .copied()
        .filter(|n| name != *n)
        .filter(|n| {
            let other = dir.join(n);
            other.is_file() && !same_content(records, &other)
        })
        .collect();
    let first = differing.first()?;
    let others = match differing.as_slice() {
        [_] => first.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
        [] => unreachable!(),
    };
    Some(format!(
        "{} holds {} and {others}, which differ (a run writes one file under these names; \
         one was edited or replaced since): using {}",
        dir.display(),
        name.to_string_lossy(),
        records.display()
    ))
}

/// Whether the files at `a` and `b` are one file or hold the same bytes (unreadable: not).
fn same_content(a: &Path, b: &Path) -> bool {
    use std::io::Read;
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if (ma.dev(), ma.ino()) == (mb.dev(), mb.ino()) {
            return true;
        }
    }
    if ma.len() != mb.len() {
        return false;
    }
    let (Ok(fa), Ok(fb)) = (crate::input::open_regular(a), crate::input::open_regular(b)) else {
        return false;
    };
    let (mut ra, mut rb) = (std::io::BufReader::new(fa), std::io::BufReader::new(fb));
    let (mut ba, mut bb) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let n = match ra.read(&mut ba) {
            Ok(n) => n,
            Err(_) => return false,
        };
        if n == 0 {
            // Equal lengths: `b` is at its end too, unless it grew meanwhile.
            return matches!(rb.read(&mut bb[..1]), Ok(0));
        }
        if rb.read_exact(&mut bb[..n]).is_err() || ba[..n] != bb[..n] {
            return false;
        }
    }
}

/// How much a run recorded (`--enable-l2-swimlane=LEVEL`); the original's levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// 1: kernel start and end per execution.
    AicoreTiming = 1,
    /// 2: plus the scheduler's dispatch and finish per execution.
    AicpuTiming = 2,
    /// 3: plus scheduler loop phases and the core-to-thread map.
    SchedPhases = 3,
    /// 4: plus the orchestrator's submit spans.
    OrchPhases = 4,
}

impl Level {
    /// Every level, lowest first.
    pub const ALL: [Level; 4] = [
        Level::AicoreTiming,
        Level::AicpuTiming,
        Level::SchedPhases,
        Level::OrchPhases,
    ];

    /// The level numbered `n` (1–4).
    pub fn from_number(n: u64) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.number() as u64 == n)
    }

    /// Its number, as written in the file.
    pub fn number(self) -> u32 {
        self as u32
    }

    /// What the level records, as the original's statistics print it.
    pub fn description(self) -> &'static str {
        match self {
            Level::AicoreTiming => "AICore timing only",
            Level::AicpuTiming => "AICore + AICPU timing",
            Level::SchedPhases => "AICore + AICPU timing + scheduler phases",
            Level::OrchPhases => "full collection with orchestrator phases",
        }
    }

    /// Whether dispatch and finish times are recorded.
    pub fn has_dispatch(self) -> bool {
        self >= Level::AicpuTiming
    }

    /// Whether scheduler phases (and dummy-task completions) are recorded.
    pub fn has_sched_phases(self) -> bool {
        self >= Level::SchedPhases
    }

    /// Whether the orchestrator's submit spans are recorded.
    pub fn has_orch_phases(self) -> bool {
        self >= Level::OrchPhases
    }
}

/// The kind of a virtual core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CoreType {
    /// Cube core (matrix unit).
    Aic,
    /// Vector core.
    Aiv,
}

impl CoreType {
    /// `"aic"` or `"aiv"`, as written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            CoreType::Aic => "aic",
            CoreType::Aiv => "aiv",
        }
    }

    /// `"AIC"` or `"AIV"`.
    pub fn upper(self) -> &'static str {
        match self {
            CoreType::Aic => "AIC",
            CoreType::Aiv => "AIV",
        }
    }

    /// The track name of core `core_id` of this type: `AIC_<id>` or `AIV_<id>`.
    pub fn core_name(self, core_id: u32) -> String {
        format!("{}_{core_id}", self.upper())
    }
}

/// One core of the run (an entry of `metadata.core_types`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Core {
    /// Global core index (the `core_id` rows refer to).
    pub core_id: u32,
    /// AIC or AIV.
    pub core_type: CoreType,
    /// Display name, `AIC_<core_id>` or `AIV_<core_id>`.
    pub name: String,
}

/// Where the orchestrator ran, as the file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrchestratorSource {
    /// On the device's AICPU (or, here, the orchestrator thread on the run clock).
    Aicpu,
    /// On the host (host_build_graph): its spans are on the host clock.
    Host,
}

/// The run-level facts of a records file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The level the run recorded.
    pub level: Level,
    /// Cycles per second of the file's timestamps (1 GHz for this runtime's files).
    pub clock_freq_hz: u64,
    /// The cycle value that became 0 ns (the earliest timestamp, as the original's reader
    /// takes it).
    pub base_cycles: u64,
    /// Every core, by `metadata.core_types`.
    pub cores: Vec<Core>,
    /// Scheduler thread of each core (−1 = unassigned); level ≥ 3.
    pub core_to_thread: Option<Vec<i32>>,
    /// Clusters of the run (this runtime's files only).
    pub clusters: Option<u32>,
    /// Scheduler threads of the run (this runtime's files only).
    pub scheduler_threads: Option<u32>,
    /// Where the orchestrator ran.
    pub orchestrator_source: OrchestratorSource,
    /// True when the file carries this runtime's `simpler_task_info` (kernel ids, blocks and
    /// scheduler thread per row).
    pub has_task_info: bool,
    /// What the reader could not know or had to leave out, in words (for the tools to say).
    pub notes: Vec<String>,
}

impl Header {
    /// The core with id `core_id`, if listed.
    pub fn core(&self, core_id: u32) -> Option<&Core> {
        self.cores.get(core_id as usize).filter(|c| c.core_id == core_id)
    }
}

/// The platform's core numbering for `clusters` clusters: AIC cores `0..clusters`, then
/// cluster `c`'s two AIV cores `clusters + 2c` and `clusters + 2c + 1`.
pub fn core_types_for_clusters(clusters: u32) -> Vec<CoreType> {
    (0..clusters.saturating_mul(3))
        .map(|id| {
            if id < clusters {
                CoreType::Aic
            } else {
                CoreType::Aiv
            }
        })
        .collect()
}

/// One kernel execution: one block of one subslot of a task, as it ran on one core.
///
/// A plain task has one row; an SPMD task (`block_num > 1`) has one row per block; a MIX task
/// (several active subslots) has one row per active subslot and block. Times are nanoseconds
/// since the file's earliest timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskRow {
    /// Raw task id (the task token), `(ring << 32) | local`, as in deps.json.
    pub task_id: u64,
    /// Per-core dispatch sequence number (the join key with the dispatch record).
    pub reg_task_id: u32,
    /// The task's kernel per subslot `[aic, aiv0, aiv1]`; [`NO_KERNEL`] when inactive or
    /// not recorded (the original's files: take them from deps.json).
    pub kernel_ids: [i32; 3],
    /// The kernel this row ran; [`NO_KERNEL`] when not recorded.
    pub func_id: i32,
    /// Block index of this row, `0..block_num` (0 when not recorded).
    pub block_idx: u32,
    /// SPMD logical block count; 1 for a normal task, 0 when not recorded.
    pub block_num: u32,
    /// The core the block ran on.
    pub core_id: u32,
    /// Type of that core.
    pub core_type: CoreType,
    /// The scheduler thread that dispatched the block, when recorded.
    pub sched_thread: Option<u32>,
    /// When the scheduler handed the block to the core (level ≥ 2).
    pub dispatch_ns: Option<u64>,
    /// When the core received the block (`start − receive_to_start`).
    pub receive_ns: u64,
    /// When the kernel started.
    pub start_ns: u64,
    /// When the kernel returned.
    pub end_ns: u64,
    /// When the scheduler saw the block complete (level ≥ 2).
    pub finish_ns: Option<u64>,
}

/// A task without kernels, completed by a scheduler thread (a `dummy_task` phase; level ≥ 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DummyRow {
    /// Raw task id.
    pub task_id: u64,
    /// The scheduler thread that completed it.
    pub sched_thread: u32,
    /// When it completed.
    pub finish_ns: u64,
}

/// The orchestrator's submit call for one task (level 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrchRow {
    /// Raw task id given to the submitted task.
    pub task_id: u64,
    /// Position of the call among the orchestrator's submits.
    pub submit_idx: u64,
    /// The orchestrator thread (0 here; several in the original's multi-threaded builds).
    pub thread: u32,
    /// When the submit call began.
    pub submit_start_ns: u64,
    /// When the submit call returned.
    pub submit_end_ns: u64,
}

/// One scheduler loop phase of one scheduler thread (level ≥ 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedPhase {
    /// The scheduler thread.
    pub sched_thread: u32,
    /// The phase (`dispatch`, `complete`, `release`, `dummy_task`, `idle`, ...).
    pub kind: String,
    /// When the phase began.
    pub start_ns: u64,
    /// When it ended.
    pub end_ns: u64,
    /// The scheduler loop iteration it belongs to.
    pub loop_iter: u64,
    /// Tasks (or blocks) it handled.
    pub tasks_processed: u64,
    /// Ready-queue pops that found work since the previous dispatch record (`dispatch`).
    pub pop_hit: Option<u64>,
    /// Ready-queue pops that found none since the previous dispatch record (`dispatch`).
    pub pop_miss: Option<u64>,
    /// The task, for per-task phases (`dummy_task`, `predicated_skip`, `graph_prepare`).
    pub task_id: Option<u64>,
    /// Ready-queue depth per shape `[aic, aiv, mix]` when the phase began.
    pub shared_at_start: Option<[i64; 3]>,
    /// Ready-queue depth per shape `[aic, aiv, mix]` when it ended.
    pub shared_at_end: Option<[i64; 3]>,
}

/// A step of an `hbg` run's graph build (this runtime's `simpler_build_phases`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildPhase {
    /// `orchestration` (the submits), `finalise` or `launch`.
    pub phase: String,
    /// When it began.
    pub start_ns: u64,
    /// When it ended.
    pub end_ns: u64,
    /// Of `orchestration`: dependency inference within it, ns, when timed.
    pub inference_ns: Option<u64>,
}

/// A whole records file in memory; see [`read_swimlane_file`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwimlaneFile {
    /// The run-level facts.
    pub header: Header,
    /// Every kernel execution.
    pub tasks: Vec<TaskRow>,
    /// Every dummy-task completion.
    pub dummy_tasks: Vec<DummyRow>,
    /// Every submit span.
    pub orchestrator: Vec<OrchRow>,
    /// Every scheduler phase, thread by thread.
    pub phases: Vec<SchedPhase>,
    /// The graph-build steps of an `hbg` run.
    pub build_phases: Vec<BuildPhase>,
}

/// Receives the rows of a records file as [`read_swimlane`] produces them.
pub trait SwimlaneSink {
    /// Called once per kernel execution.
    fn task(&mut self, row: TaskRow);
    /// Called once per dummy-task completion.
    fn dummy(&mut self, _row: DummyRow) {}
    /// Called once per submit span.
    fn orch(&mut self, _row: OrchRow) {}
    /// Called once per scheduler phase.
    fn sched_phase(&mut self, _phase: SchedPhase) {}
    /// Called once per graph-build step of an `hbg` run.
    fn build_phase(&mut self, _phase: BuildPhase) {}
    /// Whether an AICore start or end of 0 is a time. `false` (the default) is the original
    /// reader's rule, which the converter keeps for traces that cross over: 0 means "absent"
    /// and times count from the smallest nonzero timestamp. `true` is for a tool that, like
    /// the original `critical_path`, works on raw ticks: a row that starts at tick 0 makes the
    /// base 0 instead of being pulled onto the next timestamp.
    fn zero_is_a_time(&self) -> bool {
        false
    }
}

/// Why a records file could not be read. The message names the file and, for malformed or
/// incomplete content, the 1-based line and column, the row and the problem:
/// `<path>:<line>:<column>: invalid l2_swimlane_records.json: aicore_tasks[1]: ...`, the file
/// called by its own name when it is one of [`FILE_NAMES`] (`invalid l2_perf_records.json`).
pub type SwimlaneReadError = crate::read_error::JsonReadError;
