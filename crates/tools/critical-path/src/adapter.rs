//! The one place this tool touches the artifact formats: the swimlane records (through
//! `simpler_artifacts::swimlane::read_swimlane`) and deps.json (through
//! `simpler_artifacts::deps::read_deps`) are streamed and turned at once into this tool's own
//! values, [`TimedSlice`], [`TaskKernels`] and [`DepEdge`]. Nothing else in the crate names a
//! record type, so a change of the records layout is a change of this file only.

use std::path::Path;

use serde::de::IgnoredAny;
use serde::Deserialize;
use simpler_artifacts::deps::{read_deps, u64_string, DepsReadError, DepsSink, EdgeEnds};
use simpler_artifacts::swimlane::{read_swimlane, SwimlaneReadError, SwimlaneSink, TaskRow};

/// The clock of the times the reader hands over: nanoseconds, whatever the file's clock (the
/// records reader converts the original's cycles).
pub const RUNTIME_CLOCK_HZ: u64 = 1_000_000_000;

/// One execution slice: a block of a task on one core, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedSlice {
    /// Raw task id, `(ring << 32) | local`.
    pub task: u64,
    /// The core it ran on.
    pub core: u32,
    /// When the kernel started.
    pub start: u64,
    /// When the kernel returned.
    pub end: u64,
    /// How many rows its task should have, when the records say: its SPMD block count times
    /// its active kernels (this runtime's `simpler_task_info`); `None` in the original's files.
    pub expected_rows: Option<u32>,
}

/// The run-level facts of a records file this tool needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Ticks per second of the times this adapter hands over ([`RUNTIME_CLOCK_HZ`]).
    pub clock_freq_hz: u64,
    /// Cycles per second of the file itself (`metadata.clock_freq_hz`): `--tol` is in its
    /// ticks, as in the original.
    pub file_clock_hz: u64,
}

impl Timing {
    /// `ticks` of the file's clock in the handed-over unit (rounded up, so a tolerance of one
    /// tick is never zero).
    pub fn file_ticks(&self, ticks: u64) -> u64 {
        let t = u128::from(ticks) * u128::from(self.clock_freq_hz);
        u64::try_from(t.div_ceil(u128::from(self.file_clock_hz.max(1)))).unwrap_or(u64::MAX)
    }
}

/// A deps.json task: its id and its kernel per subslot (`-1` inactive).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TaskKernels {
    /// Raw task id.
    #[serde(with = "u64_string")]
    pub task_id: u64,
    /// `[aic, aiv0, aiv1]` kernel ids; empty when the file does not say (the original's
    /// deps.json may omit them or list another number).
    #[serde(default)]
    pub kernel_ids: Vec<i32>,
    /// The SPMD block count, when the file gives it.
    #[serde(default)]
    pub block_num: Option<u32>,
}

impl TaskKernels {
    /// How many timing rows the task should have: its block count times its active kernels,
    /// when the file gives both.
    pub fn expected_rows(&self) -> Option<u32> {
        expected_rows(self.block_num?, &self.kernel_ids)
    }
}

/// `block_num` × the active (non-negative) entries of `kernel_ids`; `None` when either is 0
/// (not recorded).
fn expected_rows(block_num: u32, kernel_ids: &[i32]) -> Option<u32> {
    let active = kernel_ids.iter().filter(|&&k| k >= 0).count() as u32;
    let rows = block_num.saturating_mul(active);
    (rows > 0).then_some(rows)
}

impl simpler_artifacts::deps::DepsElement for TaskKernels {}

/// A deps.json edge, endpoints only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DepEdge {
    /// Producer.
    pub pred: u64,
    /// Consumer.
    pub succ: u64,
}

/// Streams the slices of the records file at `path` into `on_slice`, in file order.
pub fn read_slices(path: &Path, on_slice: impl FnMut(TimedSlice)) -> Result<Timing, SwimlaneReadError> {
    struct Slices<F>(F);
    impl<F: FnMut(TimedSlice)> SwimlaneSink for Slices<F> {
        fn task(&mut self, row: TaskRow) {
            (self.0)(TimedSlice {
                task: row.task_id,
                core: row.core_id,
                start: row.start_ns,
                end: row.end_ns,
                expected_rows: expected_rows(row.block_num, &row.kernel_ids),
            });
        }
        /// The original `critical_path` works on raw ticks: a row at tick 0 is at tick 0.
        fn zero_is_a_time(&self) -> bool {
            true
        }
    }
    let header = read_swimlane(path, &mut Slices(on_slice))?;
    for note in &header.notes {
        simpler_artifacts::errln!("warning: {}: {note}", path.display());
    }
    Ok(Timing {
        clock_freq_hz: RUNTIME_CLOCK_HZ,
        file_clock_hz: header.clock_freq_hz,
    })
}

/// Streams the tasks (id and kernels) and the edges (endpoints) of the deps.json at `path`.
pub fn read_graph(
    path: &Path,
    on_task: impl FnMut(TaskKernels),
    on_edge: impl FnMut(DepEdge),
) -> Result<(), DepsReadError> {
    struct Graph<T, E>(T, E);
    impl<T: FnMut(TaskKernels), E: FnMut(DepEdge)> DepsSink for Graph<T, E> {
        type Task = TaskKernels;
        type Tensor = IgnoredAny;
        type Edge = EdgeEnds;
        fn task(&mut self, task: TaskKernels) {
            (self.0)(task);
        }
        fn tensor(&mut self, _: IgnoredAny) {}
        fn edge(&mut self, e: EdgeEnds) {
            (self.1)(DepEdge {
                pred: e.pred,
                succ: e.succ,
            });
        }
    }
    read_deps(path, &mut Graph(on_task, on_edge)).map(|_| ())
}
