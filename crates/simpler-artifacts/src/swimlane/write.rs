//! The streaming writer of a records file in the original's raw layout (see the module above).
//!
//! [`SwimlaneWriter::begin`] writes the level and `metadata`; rows follow section by section
//! (`aicore_tasks`, `aicpu_tasks`, `simpler_task_info`, `aicpu_scheduler_phases` thread by
//! thread, `aicpu_orchestrator_phases`), one row per line so a reader's error line points at
//! the row. Going back to an earlier section (or thread) is an `InvalidInput` error. Sections
//! the level does not record are not written; rows given for them are refused.
//!
//! Timestamps are cycles of [`CLOCK_FREQ_HZ`]: nanoseconds of the run clock, which starts
//! before the first event (the original's reader takes a timestamp of 0 as "not recorded"; a
//! run's events are never at 0).

use std::io::{self, Write};

use serde::Serialize;

use super::{CoreType, Level, CLOCK_FREQ_HZ, FILE_NAME};

/// Version of our `metadata.simpler` object.
pub const SIMPLER_METADATA_VERSION: u32 = 2;

/// What [`SwimlaneWriter::begin`] writes before the rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteHeader {
    /// The level the run recorded.
    pub level: Level,
    /// Clusters of the run.
    pub clusters: u32,
    /// Scheduler threads of the run.
    pub scheduler_threads: u32,
    /// Type of every core, by core id.
    pub core_types: Vec<CoreType>,
    /// Scheduler thread serving each core (written at level ≥ 3).
    pub core_to_thread: Vec<i32>,
}

/// One `aicore_tasks` row: a kernel execution on a core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AicoreRecord {
    /// The core.
    pub core_id: u32,
    /// The task token, `(ring << 32) | local`.
    pub task_token: u64,
    /// Per-core dispatch sequence number (join key with [`AicpuRecord`]).
    pub reg_task_id: u32,
    /// Kernel start, cycles.
    pub start: u64,
    /// Kernel end, cycles.
    pub end: u64,
    /// Start − receive, cycles (0 here: a virtual core starts the kernel as it receives it).
    pub receive_to_start: u32,
}

/// One `aicpu_tasks` row: the scheduler's side of an execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AicpuRecord {
    /// The core.
    pub core_id: u32,
    /// Per-core dispatch sequence number.
    pub reg_task_id: u32,
    /// Dispatch, cycles.
    pub dispatch: u64,
    /// Finish (completion seen by the scheduler), cycles.
    pub finish: u64,
}

/// One `simpler_task_info` row (ours): what the original's rows leave to deps.json.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskInfo {
    /// The kernel the row ran.
    pub func_id: i32,
    /// Block index.
    pub block_idx: u32,
    /// SPMD block count.
    pub block_num: u32,
    /// Kernel per subslot `[aic, aiv0, aiv1]`.
    pub kernel_ids: [i32; 3],
    /// The scheduler thread that dispatched it.
    pub sched_thread: u32,
}

/// One scheduler phase object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PhaseRecord {
    /// Phase name (`dispatch`, `complete`, `release`, `dummy_task`, `idle`, ...).
    pub kind: &'static str,
    /// Start, cycles.
    pub start_cycles: u64,
    /// End, cycles.
    pub end_cycles: u64,
    /// Scheduler loop iteration.
    pub loop_iter: u64,
    /// Tasks or blocks handled.
    pub tasks_processed: u64,
    /// Pops that found work since the previous dispatch record (`dispatch` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pop_hit: Option<u64>,
    /// Pops that found nothing since the previous dispatch record (`dispatch` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pop_miss: Option<u64>,
    /// The task of a per-task phase (`dummy_task`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<u64>,
    /// Ready-queue depth per shape `[aic, aiv, mix]` at the start.
    pub shared_at_start: [i64; 3],
    /// Ready-queue depth per shape at the end.
    pub shared_at_end: [i64; 3],
}

/// One orchestrator phase object: a submit span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OrchRecord {
    /// Position among the orchestrator's submits.
    pub submit_idx: u64,
    /// The task it created.
    pub task_id: u64,
    /// Start, cycles.
    pub start_cycles: u64,
    /// End, cycles.
    pub end_cycles: u64,
}

/// One `simpler_build_phases` object (ours): a step of an `hbg` run's graph build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BuildPhaseRecord {
    /// `orchestration` (the submits), `finalise` or `launch`.
    pub phase: &'static str,
    /// Start, cycles.
    pub start_cycles: u64,
    /// End, cycles.
    pub end_cycles: u64,
    /// Of `orchestration`: nanoseconds of dependency inference within it, when timed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inference_ns: Option<u64>,
}

/// The arrays, in the order they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    Aicore,
    Aicpu,
    TaskInfo,
    SchedPhases,
    OrchPhases,
    BuildPhases,
    Done,
}

impl Section {
    fn key(self) -> &'static str {
        match self {
            Section::Aicore => "aicore_tasks",
            Section::Aicpu => "aicpu_tasks",
            Section::TaskInfo => "simpler_task_info",
            Section::SchedPhases => "aicpu_scheduler_phases",
            Section::OrchPhases => "aicpu_orchestrator_phases",
            Section::BuildPhases => "simpler_build_phases",
            Section::Done => "(end)",
        }
    }

    fn next(self) -> Section {
        match self {
            Section::Aicore => Section::Aicpu,
            Section::Aicpu => Section::TaskInfo,
            Section::TaskInfo => Section::SchedPhases,
            Section::SchedPhases => Section::OrchPhases,
            Section::OrchPhases => Section::BuildPhases,
            Section::BuildPhases | Section::Done => Section::Done,
        }
    }

    fn recorded_at(self, level: Level) -> bool {
        match self {
            Section::SchedPhases => level.has_sched_phases(),
            Section::OrchPhases => level.has_orch_phases(),
            _ => true,
        }
    }

    /// Whether the section is a list of per-thread lists.
    fn nested(self) -> bool {
        matches!(self, Section::SchedPhases | Section::OrchPhases)
    }
}

/// Writes a records file row by row; see the module documentation. Wrap files in a
/// `BufWriter`; call [`SwimlaneWriter::finish`], the file is incomplete until then.
pub struct SwimlaneWriter<W: Write> {
    out: W,
    level: Level,
    scheduler_threads: u32,
    section: Section,
    /// Whether the current section is open (its `[` written).
    open: bool,
    first_in_list: bool,
    /// Current inner list of a nested section.
    thread: u32,
}

impl<W: Write> SwimlaneWriter<W> {
    /// Writes the level and `metadata`.
    pub fn begin(mut out: W, header: &WriteHeader) -> io::Result<Self> {
        let level = header.level.number();
        write!(
            out,
            "{{\"chip_swimlane_level\":{level},\"l2_swimlane_level\":{level},\n\"metadata\":{{\"clock_freq_hz\":{CLOCK_FREQ_HZ},\"num_cores\":{},\"core_types\":",
            header.core_types.len()
        )?;
        serde_json::to_writer(&mut out, &header.core_types).map_err(io::Error::from)?;
        if header.level.has_sched_phases() {
            out.write_all(b",\"core_to_thread\":")?;
            serde_json::to_writer(&mut out, &header.core_to_thread).map_err(io::Error::from)?;
        }
        write!(
            out,
            ",\"simpler\":{{\"version\":{SIMPLER_METADATA_VERSION},\"clock\":\"monotonic_ns\",\"clusters\":{},\"scheduler_threads\":{}}}}}",
            header.clusters, header.scheduler_threads
        )?;
        Ok(Self {
            out,
            level: header.level,
            scheduler_threads: header.scheduler_threads,
            section: Section::Aicore,
            open: false,
            first_in_list: true,
            thread: 0,
        })
    }

    /// Appends one `aicore_tasks` row.
    pub fn aicore(&mut self, r: &AicoreRecord) -> io::Result<()> {
        self.row(Section::Aicore, 0)?;
        write!(
            self.out,
            "[{},{},{},{},{},{}]",
            r.core_id, r.task_token, r.reg_task_id, r.start, r.end, r.receive_to_start
        )
    }

    /// Appends one `aicpu_tasks` row.
    pub fn aicpu(&mut self, r: &AicpuRecord) -> io::Result<()> {
        self.row(Section::Aicpu, 0)?;
        write!(
            self.out,
            "[{},{},{},{}]",
            r.core_id, r.reg_task_id, r.dispatch, r.finish
        )
    }

    /// Appends one `simpler_task_info` row (one per `aicore_tasks` row, same order).
    pub fn task_info(&mut self, r: &TaskInfo) -> io::Result<()> {
        self.row(Section::TaskInfo, 0)?;
        let [a, b, c] = r.kernel_ids;
        write!(
            self.out,
            "[{},{},{},{a},{b},{c},{}]",
            r.func_id, r.block_idx, r.block_num, r.sched_thread
        )
    }

    /// Writes the three per-execution sections from `tasks`: `aicore_tasks`, `aicpu_tasks` (their
    /// dispatch and finish, from level 2) and `simpler_task_info`, with per-core
    /// `reg_task_id`s in row order. `pass(visit)` must hand every row to `visit` in the same order
    /// each time it is called: one pass per section, so a caller can stream rows from disk. A row
    /// without a dispatch or finish time at level ≥ 2 is an `InvalidInput` error.
    pub fn task_sections(
        &mut self,
        mut pass: impl FnMut(&mut dyn FnMut(&super::TaskRow) -> io::Result<()>) -> io::Result<()>,
    ) -> io::Result<()> {
        let level = self.level;
        let mut reg = Vec::new();
        pass(&mut |t| {
            let reg_task_id = next_reg(&mut reg, t.core_id);
            self.aicore(&AicoreRecord {
                core_id: t.core_id,
                task_token: t.task_id,
                reg_task_id,
                start: t.start_ns,
                end: t.end_ns,
                receive_to_start: u32::try_from(t.start_ns.saturating_sub(t.receive_ns)).unwrap_or(u32::MAX),
            })
        })?;
        if level.has_dispatch() {
            reg.clear();
            pass(&mut |t| {
                let reg_task_id = next_reg(&mut reg, t.core_id);
                let (Some(dispatch), Some(finish)) = (t.dispatch_ns, t.finish_ns) else {
                    return Err(refused(format!(
                        "task {} on core {} has no dispatch or finish time, which level {} records",
                        t.task_id,
                        t.core_id,
                        level.number()
                    )));
                };
                self.aicpu(&AicpuRecord {
                    core_id: t.core_id,
                    reg_task_id,
                    dispatch,
                    finish,
                })
            })?;
        }
        pass(&mut |t| {
            self.task_info(&TaskInfo {
                func_id: t.func_id,
                block_idx: t.block_idx,
                block_num: t.block_num,
                kernel_ids: t.kernel_ids,
                sched_thread: t.sched_thread.unwrap_or(0),
            })
        })
    }

    /// Appends a phase of scheduler thread `thread` (threads in increasing order).
    pub fn phase(&mut self, thread: u32, r: &PhaseRecord) -> io::Result<()> {
        self.row(Section::SchedPhases, thread)?;
        let r = PhaseRecord {
            start_cycles: r.start_cycles,
            end_cycles: r.end_cycles,
            ..r.clone()
        };
        serde_json::to_writer(&mut self.out, &r).map_err(io::Error::from)
    }

    /// Appends a submit span of the orchestrator.
    pub fn orch(&mut self, r: &OrchRecord) -> io::Result<()> {
        self.row(Section::OrchPhases, 0)?;
        let r = OrchRecord {
            start_cycles: r.start_cycles,
            end_cycles: r.end_cycles,
            ..*r
        };
        serde_json::to_writer(&mut self.out, &r).map_err(io::Error::from)
    }

    /// Appends a graph-build phase of an `hbg` run.
    pub fn build_phase(&mut self, r: &BuildPhaseRecord) -> io::Result<()> {
        self.row(Section::BuildPhases, 0)?;
        let r = BuildPhaseRecord {
            start_cycles: r.start_cycles,
            end_cycles: r.end_cycles,
            ..*r
        };
        serde_json::to_writer(&mut self.out, &r).map_err(io::Error::from)
    }

    /// Closes every remaining section and the object, flushes, and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.advance_to(Section::Done, 0)?;
        self.out.write_all(b"}\n")?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn row(&mut self, section: Section, thread: u32) -> io::Result<()> {
        if !section.recorded_at(self.level) {
            return Err(refused(format!(
                "level {} does not record \"{}\"",
                self.level.number(),
                section.key()
            )));
        }
        self.advance_to(section, thread)?;
        self.out
            .write_all(if self.first_in_list { b"\n" } else { b",\n" })?;
        self.first_in_list = false;
        Ok(())
    }

    /// Moves to `section` (and, in a nested one, to inner list `thread`), closing and
    /// opening arrays on the way; sections the level does not record are skipped.
    fn advance_to(&mut self, section: Section, thread: u32) -> io::Result<()> {
        if section < self.section || (section == self.section && thread < self.thread) {
            return Err(refused(format!(
                "{FILE_NAME} sections are written in order aicore_tasks, aicpu_tasks, simpler_task_info, \
                 aicpu_scheduler_phases (thread by thread), aicpu_orchestrator_phases, simpler_build_phases: \
                 cannot add to \
                 \"{}\"{} after \"{}\"{}",
                section.key(),
                thread_suffix(section, thread),
                self.section.key(),
                thread_suffix(self.section, self.thread)
            )));
        }
        loop {
            // `simpler_build_phases` is written only when it has rows (an `hbg` run's).
            let wanted = self.section != Section::BuildPhases || section == Section::BuildPhases;
            if !self.open && self.section != Section::Done && self.section.recorded_at(self.level) && wanted {
                self.open_section()?;
            }
            if self.section == section {
                if section.nested() {
                    let last = self.last_inner(section, thread);
                    while self.thread < thread.min(last) {
                        self.next_inner()?;
                    }
                }
                return Ok(());
            }
            if self.open {
                self.close_section()?;
            }
            self.section = self.section.next();
            self.thread = 0;
        }
    }

    /// The last inner list a nested section gets: one per scheduler thread for phases, one
    /// orchestrator list.
    fn last_inner(&self, section: Section, thread: u32) -> u32 {
        match section {
            Section::SchedPhases => self.scheduler_threads.saturating_sub(1).max(thread),
            _ => 0,
        }
    }

    fn open_section(&mut self) -> io::Result<()> {
        write!(self.out, ",\n\"{}\":[", self.section.key())?;
        if self.section.nested() {
            self.out.write_all(b"\n[")?;
        }
        self.open = true;
        self.first_in_list = true;
        Ok(())
    }

    fn next_inner(&mut self) -> io::Result<()> {
        self.out
            .write_all(if self.first_in_list { b"],\n[" } else { b"\n],\n[" })?;
        self.thread += 1;
        self.first_in_list = true;
        Ok(())
    }

    fn close_section(&mut self) -> io::Result<()> {
        if self.section.nested() {
            let last = self.last_inner(self.section, self.thread);
            while self.thread < last {
                self.next_inner()?;
            }
            self.out
                .write_all(if self.first_in_list { b"]]" } else { b"\n]]" })?;
        } else {
            self.out
                .write_all(if self.first_in_list { b"]" } else { b"\n]" })?;
        }
        self.open = false;
        Ok(())
    }
}

/// The next `reg_task_id` of `core`: its executions numbered in row order.
fn next_reg(reg: &mut Vec<u32>, core: u32) -> u32 {
    let i = core as usize;
    if i >= reg.len() {
        reg.resize(i + 1, 0);
    }
    let seq = reg[i];
    reg[i] = seq.wrapping_add(1);
    seq
}

fn thread_suffix(section: Section, thread: u32) -> String {
    if section == Section::SchedPhases {
        format!(" (thread {thread})")
    } else {
        String::new()
    }
}

fn refused(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// Writes normalised rows as a records file: `tasks` through
/// [`SwimlaneWriter::task_sections`], `dummies` as `dummy_task` phases and `submits` as submit
/// spans, when the level records them. For tools and tests that synthesise records; the runtime
/// streams its rows from its spill files through [`SwimlaneWriter`] instead.
pub fn write_rows<W: Write>(
    out: W,
    header: &WriteHeader,
    tasks: &[super::TaskRow],
    dummies: &[super::DummyRow],
    submits: &[super::OrchRow],
) -> io::Result<W> {
    let mut w = SwimlaneWriter::begin(out, header)?;
    w.task_sections(|visit| tasks.iter().try_for_each(&mut *visit))?;
    if header.level.has_sched_phases() {
        let mut dummies: Vec<&super::DummyRow> = dummies.iter().collect();
        dummies.sort_by_key(|d| d.sched_thread);
        for d in dummies {
            w.phase(
                d.sched_thread,
                &PhaseRecord {
                    kind: "dummy_task",
                    start_cycles: d.finish_ns,
                    end_cycles: d.finish_ns,
                    loop_iter: 0,
                    tasks_processed: 1,
                    pop_hit: None,
                    pop_miss: None,
                    task_id: Some(d.task_id),
                    shared_at_start: [0; 3],
                    shared_at_end: [0; 3],
                },
            )?;
        }
    }
    if header.level.has_orch_phases() {
        for o in submits {
            w.orch(&OrchRecord {
                submit_idx: o.submit_idx,
                task_id: o.task_id,
                start_cycles: o.submit_start_ns,
                end_cycles: o.submit_end_ns,
            })?;
        }
    }
    w.finish()
}

impl WriteHeader {
    /// A header for `clusters` clusters served by `scheduler_threads` threads (cluster `c` by
    /// thread `c % threads`, as the runtime assigns them), at `level`.
    pub fn for_clusters(level: Level, clusters: u32, scheduler_threads: u32) -> WriteHeader {
        let threads = scheduler_threads.max(1);
        let aic = (0..clusters).map(|c| (c % threads) as i32);
        let aiv = (0..clusters).flat_map(|c| [(c % threads) as i32; 2]);
        WriteHeader {
            level,
            clusters,
            scheduler_threads,
            core_types: super::core_types_for_clusters(clusters),
            core_to_thread: aic.chain(aiv).collect(),
        }
    }
}
