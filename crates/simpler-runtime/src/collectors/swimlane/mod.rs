//! Swimlane timing: per (task, block, subslot) dispatch/start/end/finish timestamps from the
//! scheduler threads, their loop phases, and the orchestrator's submit spans, written to
//! `l2_swimlane_records.json` in the original's raw layout (linked as
//! `chip_swimlane_records.json`; schema: `docs/swimlane.md`), at the level the run asked for.
//!
//! Every run thread owns a `SwimlaneProducer` that fills fixed-capacity row buffers and hands
//! them to one host collector through the bounded buffer channel; the collector spills rows to
//! per-section files while the run goes on (phases one file per scheduler thread), and the
//! close writes the final file in section order. Rows a producer could not hand over are
//! counted and reported, never silently lost.

use crate::sync::{AtomicU64, Ordering};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use simpler_artifacts::manifest::DiagnosticEntry;
use simpler_artifacts::publish::{publish_with, Options};
use simpler_artifacts::swimlane::{
    BuildPhaseRecord, CoreType, Level, OrchRecord, OrchRow, PhaseRecord, SwimlaneWriter, TaskRow,
    WriteHeader, CHIP_FILE_NAME, FILE_NAME,
};

use super::{Collector, Finals, Outcomes, Probes, RunFacts, StartCtx};

use crate::collectors::channel::{BufferChannel, CollectorThread, Producer, Records};

/// Rows per buffer.
pub const ROWS_PER_BUFFER: usize = 4096;

/// One timing row.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Row {
    /// A kernel execution (every level).
    Task(TaskRow),
    /// A scheduler loop phase of thread `.0` (level ≥ 3).
    Phase(u32, Phase),
    /// A submit span (level 4).
    Orch(OrchRow),
}

/// The scheduler loop phases this runtime records (`docs/swimlane.md`); the names are the
/// original's where the step corresponds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PhaseKind {
    /// Pop a ready task, pick its cores, hand the block over (ends at kernel start).
    Dispatch,
    /// Completion: mark the task done, release its consumers (ends at finish).
    Complete,
    /// A dummy task completed inline (`task_id` set).
    DummyTask,
    /// Ring advance of a batch of consumed tasks (ours).
    Advance,
    /// Nothing to do: yielding or parked (ours).
    Idle,
}

impl PhaseKind {
    const ALL: [PhaseKind; 5] = [
        PhaseKind::Dispatch,
        PhaseKind::Complete,
        PhaseKind::DummyTask,
        PhaseKind::Advance,
        PhaseKind::Idle,
    ];

    /// The phase name written in the file.
    pub fn name(self) -> &'static str {
        match self {
            PhaseKind::Dispatch => "dispatch",
            PhaseKind::Complete => "complete",
            PhaseKind::DummyTask => "dummy_task",
            PhaseKind::Advance => "advance",
            PhaseKind::Idle => "idle",
        }
    }
}

/// One scheduler phase as recorded (compact; the collector writes it as a [`PhaseRecord`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Phase {
    pub kind: PhaseKind,
    pub start_ns: u64,
    pub end_ns: u64,
    pub loop_iter: u64,
    pub tasks_processed: u32,
    /// Pops that found work / found none since the previous dispatch phase (dispatch only).
    pub pops: Option<(u32, u32)>,
    /// The task of a `dummy_task` phase.
    pub task_id: Option<u64>,
    /// Ready-queue depth `[aic, aiv, mix]` at start and end.
    pub shared_at_start: [u32; 3],
    pub shared_at_end: [u32; 3],
}

/// A buffer of rows.
pub(crate) struct RowBuffer {
    pub rows: Vec<Row>,
}

impl Records for RowBuffer {
    fn count(&self) -> usize {
        self.rows.len()
    }
    fn clear(&mut self) {
        self.rows.clear();
    }
}

impl RowBuffer {
    pub fn new() -> Self {
        RowBuffer {
            rows: Vec::with_capacity(ROWS_PER_BUFFER),
        }
    }
}

/// The run's clock: nanoseconds since the run started.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunClock(pub Instant);

impl RunClock {
    #[inline]
    pub fn now(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }

    /// `at` on this clock (0 before the run started).
    pub fn ns_at(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.0).as_nanos() as u64
    }
}

/// What run threads share to record timing.
pub(crate) struct SwimlaneShared {
    pub channel: Arc<BufferChannel<RowBuffer>>,
    pub dropped: Arc<AtomicU64>,
    /// Rows of tasks whose kernels had not ended when the run stopped (never written).
    pub unfinished: Arc<AtomicU64>,
    pub clock: RunClock,
    pub wait: Duration,
    pub level: Level,
}

impl SwimlaneShared {
    /// A producer for one run thread.
    pub fn producer(&self) -> SwimlaneProducer {
        SwimlaneProducer {
            producer: Producer::new(self.channel.clone(), self.wait),
            dropped: self.dropped.clone(),
            unfinished: self.unfinished.clone(),
            clock: self.clock,
            level: self.level,
        }
    }
}

/// One thread's producer.
pub(crate) struct SwimlaneProducer {
    producer: Producer<RowBuffer>,
    dropped: Arc<AtomicU64>,
    unfinished: Arc<AtomicU64>,
    pub clock: RunClock,
    /// What to record: phases from level 3, submit spans at level 4.
    pub level: Level,
}

impl SwimlaneProducer {
    /// Appends a row (dropped and counted when no buffer can be had in time).
    pub fn push(&mut self, row: Row) {
        if self
            .producer
            .current()
            .is_some_and(|b| b.rows.len() >= ROWS_PER_BUFFER)
        {
            self.flush();
        }
        match self.producer.buffer(|_| {}) {
            Some(b) => b.rows.push(row),
            None => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Counts `rows` of tasks whose kernels had not ended when the run stopped: they are never
    /// written, and the outcome says how many.
    pub fn unfinished(&self, rows: u64) {
        if rows > 0 {
            self.unfinished.fetch_add(rows, Ordering::Relaxed);
        }
    }

    /// Hands the current buffer over (an empty one goes back to the free queue).
    pub fn flush(&mut self) {
        self.producer.release_empty();
        let lost = self.producer.hand_over();
        if lost > 0 {
            self.dropped.fetch_add(lost as u64, Ordering::Relaxed);
        }
        self.producer.release_empty();
    }
}

impl Drop for SwimlaneProducer {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Rows spilled to disk by the collector, one fixed-size binary record each.
struct Spill {
    path: PathBuf,
    out: BufWriter<File>,
    rows: u64,
}

/// `e` with the spill file's path in front (a full disk said only "No space left on device").
fn at(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

impl Spill {
    fn create(path: PathBuf) -> io::Result<Spill> {
        Ok(Spill {
            out: BufWriter::with_capacity(256 << 10, File::create(&path).map_err(|e| at(&path, e))?),
            path,
            rows: 0,
        })
    }

    fn put(&mut self, words: &[u64]) -> io::Result<()> {
        self.rows += 1;
        for w in words {
            self.out
                .write_all(&w.to_le_bytes())
                .map_err(|e| at(&self.path, e))?;
        }
        Ok(())
    }

    /// Flushes the file; rows are then read back with [`Spilled::rows`], as often as needed.
    fn seal(self) -> io::Result<Sealed> {
        let path = &self.path;
        let file = self.out.into_inner().map_err(|e| at(path, e.into_error()))?;
        file.sync_all().map_err(|e| at(path, e))?;
        Ok(Sealed {
            path: self.path,
            rows: self.rows,
        })
    }
}

/// A flushed spill file.
struct Sealed {
    path: PathBuf,
    rows: u64,
}

impl Sealed {
    /// Reads every record of `N` words back, in order.
    fn read<const N: usize>(&self, mut each: impl FnMut([u64; N]) -> io::Result<()>) -> io::Result<()> {
        let mut r = BufReader::with_capacity(256 << 10, File::open(&self.path)?);
        for _ in 0..self.rows {
            each(read_words::<N>(&mut r)?)?;
        }
        Ok(())
    }
}

fn read_words<const N: usize>(r: &mut impl Read) -> io::Result<[u64; N]> {
    let mut out = [0u64; N];
    let mut b = [0u8; 8];
    for w in out.iter_mut() {
        r.read_exact(&mut b)?;
        *w = u64::from_le_bytes(b);
    }
    Ok(out)
}

const TASK_WORDS: usize = 14;

fn encode_task(r: &TaskRow) -> [u64; TASK_WORDS] {
    [
        r.task_id,
        r.kernel_ids[0] as i64 as u64,
        r.kernel_ids[1] as i64 as u64,
        r.kernel_ids[2] as i64 as u64,
        r.func_id as i64 as u64,
        u64::from(r.block_idx),
        u64::from(r.block_num),
        u64::from(r.core_id),
        u64::from(r.sched_thread.unwrap_or(0)),
        r.dispatch_ns.unwrap_or(0),
        r.start_ns,
        r.end_ns,
        r.finish_ns.unwrap_or(0),
        u64::from(r.core_type == CoreType::Aiv),
    ]
}

/// A spilled task row back (every time recorded: the runtime records them all).
fn decode_task(w: [u64; TASK_WORDS]) -> TaskRow {
    TaskRow {
        task_id: w[0],
        reg_task_id: 0,
        kernel_ids: [w[1] as i64 as i32, w[2] as i64 as i32, w[3] as i64 as i32],
        func_id: w[4] as i64 as i32,
        block_idx: w[5] as u32,
        block_num: w[6] as u32,
        core_id: w[7] as u32,
        core_type: if w[13] == 0 { CoreType::Aic } else { CoreType::Aiv },
        sched_thread: Some(w[8] as u32),
        dispatch_ns: Some(w[9]),
        receive_ns: w[10],
        start_ns: w[10],
        end_ns: w[11],
        finish_ns: Some(w[12]),
    }
}

const PHASE_WORDS: usize = 14;
const NONE: u64 = u64::MAX;

fn encode_phase(p: &Phase) -> [u64; PHASE_WORDS] {
    let kind = PhaseKind::ALL.iter().position(|k| *k == p.kind).unwrap_or(0) as u64;
    let (hit, miss) = p.pops.map_or((NONE, NONE), |(h, m)| (u64::from(h), u64::from(m)));
    let s = p.shared_at_start.map(u64::from);
    let e = p.shared_at_end.map(u64::from);
    [
        kind,
        p.start_ns,
        p.end_ns,
        p.loop_iter,
        u64::from(p.tasks_processed),
        hit,
        miss,
        p.task_id.unwrap_or(NONE),
        s[0],
        s[1],
        s[2],
        e[0],
        e[1],
        e[2],
    ]
}

fn decode_phase(w: [u64; PHASE_WORDS]) -> PhaseRecord {
    let some = |v: u64| (v != NONE).then_some(v);
    PhaseRecord {
        kind: PhaseKind::ALL[(w[0] as usize).min(PhaseKind::ALL.len() - 1)].name(),
        start_cycles: w[1],
        end_cycles: w[2],
        loop_iter: w[3],
        tasks_processed: w[4],
        pop_hit: some(w[5]),
        pop_miss: some(w[6]),
        task_id: some(w[7]),
        shared_at_start: [w[8] as i64, w[9] as i64, w[10] as i64],
        shared_at_end: [w[11] as i64, w[12] as i64, w[13] as i64],
    }
}

/// The spill files of one run.
struct Parts {
    tasks: Spill,
    orch: Spill,
    /// One per scheduler thread.
    phases: Vec<Spill>,
}

/// What the collector thread holds at the end.
pub(crate) struct Spilled {
    parts: Option<Parts>,
    error: Option<String>,
    pub received: u64,
}

/// The swimlane collector thread of one run: spills rows to per-section files in `dir`.
pub(crate) fn spawn(
    channel: Arc<BufferChannel<RowBuffer>>,
    dir: PathBuf,
    run_epoch: u64,
    scheduler_threads: u32,
) -> CollectorThread<RowBuffer, Spilled> {
    let init = move || {
        // `dir` is the run's folder, which exists from its claim on: one that is gone was
        // moved or removed, and is not made again.
        let parts = (|| -> io::Result<Parts> {
            let p = |s: &str| Spill::create(dir.join(format!(".swimlane.{run_epoch}.{s}.part")));
            Ok(Parts {
                tasks: p("tasks")?,
                orch: p("orch")?,
                phases: (0..scheduler_threads)
                    .map(|t| p(&format!("phases{t}")))
                    .collect::<io::Result<_>>()?,
            })
        })();
        match parts {
            Ok(p) => Spilled {
                parts: Some(p),
                error: None,
                received: 0,
            },
            Err(e) => Spilled {
                parts: None,
                error: Some(format!("creating spill files: {e}")),
                received: 0,
            },
        }
    };
    CollectorThread::spawn("simpler-swimlane", channel, init, |st, buf: &RowBuffer| {
        st.received += buf.rows.len() as u64;
        let Some(parts) = st.parts.as_mut() else { return };
        for row in &buf.rows {
            let r = match row {
                Row::Task(t) => parts.tasks.put(&encode_task(t)),
                Row::Phase(thread, p) => match parts.phases.get_mut(*thread as usize) {
                    Some(spill) => spill.put(&encode_phase(p)),
                    None => Err(io::Error::other(format!(
                        "phase of unknown scheduler thread {thread}"
                    ))),
                },
                Row::Orch(o) => {
                    parts
                        .orch
                        .put(&[o.task_id, o.submit_idx, o.submit_start_ns, o.submit_end_ns])
                }
            };
            if let Err(e) = r {
                st.error.get_or_insert(format!("spilling rows: {e}"));
            }
        }
    })
}

/// Starts swimlane timing when enabled: a buffer pool sized for every run thread, the shared
/// hand-off every run thread records through, and the spilling collector thread.
pub(crate) fn start<'a>(
    ctx: &StartCtx<'a>,
    probes: &mut Probes,
) -> Result<Option<Box<dyn Collector + 'a>>, crate::collectors::DiagnosticsError> {
    let cfg = ctx.cfg;
    if !cfg.enable_l2_swimlane {
        return Ok(None);
    }
    let threads = cfg.effective_scheduler_threads().min(cfg.clusters).max(1);
    let buffers = (0..2 * (threads + 1) + 2)
        .map(|_| Box::new(RowBuffer::new()))
        .collect();
    let channel = Arc::new(BufferChannel::new(buffers, (&cfg.faults).into()));
    let dropped = Arc::new(AtomicU64::new(0));
    let unfinished = Arc::new(AtomicU64::new(0));
    let clock = RunClock(Instant::now());
    probes.swimlane = Some(SwimlaneShared {
        channel: channel.clone(),
        dropped: dropped.clone(),
        unfinished: unfinished.clone(),
        clock,
        wait: ctx.wait,
        level: cfg.l2_swimlane_level,
    });
    Ok(Some(Box::new(Swimlane {
        thread: spawn(channel, ctx.prefix.to_path_buf(), ctx.run_epoch, threads as u32),
        dropped,
        unfinished,
        level: cfg.l2_swimlane_level,
        clock,
    })))
}

/// Swimlane timing between start and close.
struct Swimlane {
    thread: CollectorThread<RowBuffer, Spilled>,
    dropped: Arc<AtomicU64>,
    unfinished: Arc<AtomicU64>,
    level: Level,
    clock: RunClock,
}

impl Collector for Swimlane {
    fn close(self: Box<Self>, prefix: &Path, run: &RunFacts, _: &mut Finals, out: &mut Outcomes) {
        let mut spilled = self.thread.stop();
        if let Some(parts) = spilled.parts.as_mut() {
            // Follows a move of the run's folder: the spills are read back by path.
            let Parts { tasks, orch, phases } = parts;
            for spill in [tasks, orch].into_iter().chain(phases) {
                spill.path = run.now_at(&spill.path);
            }
        }
        let clusters = run.clusters as u32;
        let threads = run.scheduler_threads as u32;
        let header = WriteHeader::for_clusters(self.level, clusters, threads);
        let dropped = self.dropped.load(Ordering::Relaxed);
        let build = run
            .build
            .map(|b| build_records(&b, self.clock))
            .unwrap_or_default();
        let unfinished = self.unfinished.load(Ordering::Relaxed);
        let o = close(
            prefix,
            spilled,
            [dropped, unfinished],
            &header,
            &build,
            run.proven,
        );
        out.entries.push(o.manifest_entry(prefix));
        out.swimlane = Some(o);
    }
}

/// An `hbg` run's graph-build steps on the run clock.
fn build_records(b: &crate::run::BuildTimeline, clock: RunClock) -> Vec<BuildPhaseRecord> {
    let span = |phase, from, to, inference_ns| BuildPhaseRecord {
        phase,
        start_cycles: clock.ns_at(from),
        end_cycles: clock.ns_at(to),
        inference_ns,
    };
    vec![
        span("orchestration", b.begun, b.returned, b.inference_ns),
        span("finalise", b.returned, b.finalised, None),
        span("launch", b.launch, b.launched, None),
    ]
}

/// Rows of each kind a run's records file holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SwimlaneRows {
    /// Kernel executions (`aicore_tasks`).
    pub tasks: u64,
    /// Scheduler loop phases (level ≥ 3).
    pub phases: u64,
    /// Submit spans (level 4).
    pub submits: u64,
}

/// What became of a run's swimlane records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwimlaneOutcome {
    /// The written records file.
    pub path: Option<PathBuf>,
    /// The same file under the original's name (`chip_swimlane_records.json`), when linked.
    pub chip_path: Option<PathBuf>,
    /// The level recorded.
    pub level: Level,
    /// Rows written.
    pub rows: SwimlaneRows,
    /// Rows the run threads could not hand over (counted, not written).
    pub dropped: u64,
    /// Why the file is missing or incomplete.
    pub problem: Option<String>,
    /// Size of the written file.
    pub bytes: u64,
    /// True when writing (or spilling) failed, as opposed to rows being lost.
    pub write_failed: bool,
}

impl SwimlaneOutcome {
    /// This outcome as a manifest entry.
    pub fn manifest_entry(&self, folder: &Path) -> DiagnosticEntry {
        let written = self.path.as_deref().map(|p| (p, self.bytes));
        let partial = self.problem.is_some();
        let mut entry = super::manifest_entry(
            NAME,
            folder,
            written,
            partial,
            self.write_failed,
            self.problem.clone(),
        );
        if let Some(chip) = &self.chip_path {
            entry.files.push(super::file_entry(folder, chip, self.bytes));
        }
        entry
    }
}

/// The diagnostic's name in the run manifest.
pub const NAME: &str = "l2_swimlane";

/// Writes the records from the spilled rows: every section from one pass over its spill.
fn write_records<W: Write>(
    w: &mut SwimlaneWriter<W>,
    tasks: &Sealed,
    phases: &[Sealed],
    orch: &Sealed,
    header: &WriteHeader,
    build: &[BuildPhaseRecord],
) -> io::Result<SwimlaneRows> {
    w.task_sections(|visit| tasks.read(|x| visit(&decode_task(x))))?;
    let mut rows = SwimlaneRows {
        tasks: tasks.rows,
        ..SwimlaneRows::default()
    };
    if header.level.has_sched_phases() {
        for (thread, spill) in phases.iter().enumerate() {
            spill.read(|x| w.phase(thread as u32, &decode_phase(x)))?;
            rows.phases += spill.rows;
        }
    }
    if header.level.has_orch_phases() {
        orch.read(|x: [u64; 4]| {
            w.orch(&OrchRecord {
                task_id: x[0],
                submit_idx: x[1],
                start_cycles: x[2],
                end_cycles: x[3],
            })
        })?;
        rows.submits = orch.rows;
    }
    for b in build {
        w.build_phase(b)?;
    }
    Ok(rows)
}

/// Writes `<prefix>/l2_swimlane_records.json` from the spilled rows and links it as
/// `chip_swimlane_records.json`.
fn close(
    prefix: &Path,
    spilled: Spilled,
    [dropped, unfinished]: [u64; 2],
    header: &WriteHeader,
    build: &[BuildPhaseRecord],
    proven: bool,
) -> SwimlaneOutcome {
    let dest = prefix.join(FILE_NAME);
    let mut out = SwimlaneOutcome {
        path: None,
        chip_path: None,
        level: header.level,
        rows: SwimlaneRows::default(),
        dropped,
        problem: spilled.error.clone(),
        bytes: 0,
        write_failed: spilled.error.is_some(),
    };
    let Some(parts) = spilled.parts else { return out };
    let Parts { tasks, orch, phases } = parts;
    let all_paths: Vec<PathBuf> = std::iter::once(&tasks)
        .chain(std::iter::once(&orch))
        .chain(&phases)
        .map(|s| s.path.clone())
        .collect();
    let remove_spills = || {
        for p in &all_paths {
            let _ = std::fs::remove_file(p);
        }
    };
    if spilled.error.is_some() {
        // A failed spill write may have left a partial row behind: reading the spill back could
        // misalign every later row, so no timeline is written rather than a wrong one.
        remove_spills();
        let lost = spilled.received;
        out.problem =
            (out.problem).map(|p| format!("{p}; no timeline was written ({lost} received rows lost)"));
        return out;
    }
    let written = (|| {
        let tasks = tasks.seal()?;
        let orch = orch.seal()?;
        let phases = phases
            .into_iter()
            .map(Spill::seal)
            .collect::<io::Result<Vec<_>>>()?;
        publish_with(&dest, Options::closing(true), |sink| {
            let mut w = SwimlaneWriter::begin(sink, header)?;
            let rows = write_records(&mut w, &tasks, &phases, &orch, header, build)?;
            w.finish()?;
            Ok(rows)
        })
        .map_err(io::Error::other)
    })();
    remove_spills();
    match written {
        Ok(p) => {
            out.rows = p.value;
            out.bytes = p.bytes;
            out.path = Some(dest.clone());
            let chip = prefix.join(CHIP_FILE_NAME);
            match link_chip_name(&dest, &chip) {
                Ok(()) => out.chip_path = Some(chip),
                Err(e) => out.problem = Some(format!("could not link {CHIP_FILE_NAME}: {e}")),
            }
        }
        Err(e) => {
            out.write_failed = true;
            out.problem = Some(e.to_string());
        }
    }
    let mut notes = Vec::new();
    if dropped > 0 {
        notes.push(format!(
            "{dropped} rows were dropped (no buffer in time); the timeline is incomplete"
        ));
    }
    if !proven {
        notes.push(
            "the run ended without producer-stop proof; rows still held by run threads are missing".into(),
        );
    } else if unfinished > 0 {
        notes.push(format!(
            "{unfinished} row(s) of tasks whose kernels had not ended when the run stopped were not written"
        ));
    }
    if !notes.is_empty() {
        let joined = notes.join("; ");
        out.problem = Some(match out.problem.take() {
            Some(p) => format!("{p}; {joined}"),
            None => joined,
        });
    }
    out
}

/// Makes `chip` the same file as `records` (a hard link; a copy where links are refused), so
/// the original's tools, which look for that name, find the run's records.
fn link_chip_name(records: &Path, chip: &Path) -> io::Result<()> {
    match std::fs::remove_file(chip) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    std::fs::hard_link(records, chip).or_else(|_| std::fs::copy(records, chip).map(|_| ()))
}
