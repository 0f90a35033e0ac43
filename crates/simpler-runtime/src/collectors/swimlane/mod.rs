//! Swimlane timing: per (task, block, subslot) dispatch/start/end/finish timestamps from the
//! scheduler threads, dummy completions, and the orchestrator's submit spans, written to
//! `l2_swimlane_records.json` (schema: `docs/swimlane.md`).
//!
//! Every run thread owns a `SwimlaneProducer` that fills fixed-capacity row buffers and hands
//! them to one host collector through the bounded buffer channel; the collector spills rows to
//! per-section files while the run goes on, and the close writes the final file in section
//! order. Rows a producer could not hand over are counted and reported, never silently lost.

use crate::sync::{AtomicU64, Ordering};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use simpler_artifacts::manifest::DiagnosticEntry;
use simpler_artifacts::publish::{publish_with, Options};
use simpler_artifacts::swimlane::{CoreType, DummyRow, Header, OrchRow, SwimlaneWriter, TaskRow, FILE_NAME};

use super::{Collector, Finals, Outcomes, Probes, RunFacts, StartCtx};

use crate::collectors::channel::{BufferChannel, CollectorThread, Producer, Records};

/// Rows per buffer.
pub const ROWS_PER_BUFFER: usize = 4096;

/// One timing row.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Row {
    Task(TaskRow),
    Dummy(DummyRow),
    Orch(OrchRow),
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
}

/// What run threads share to record timing.
pub(crate) struct SwimlaneShared {
    pub channel: Arc<BufferChannel<RowBuffer>>,
    pub dropped: Arc<AtomicU64>,
    pub clock: RunClock,
    pub wait: Duration,
}

impl SwimlaneShared {
    /// A producer for one run thread.
    pub fn producer(&self) -> SwimlaneProducer {
        SwimlaneProducer::new(self.channel.clone(), self.dropped.clone(), self.clock, self.wait)
    }
}

/// One thread's producer.
pub(crate) struct SwimlaneProducer {
    producer: Producer<RowBuffer>,
    dropped: Arc<AtomicU64>,
    pub clock: RunClock,
}

impl SwimlaneProducer {
    pub fn new(
        channel: Arc<BufferChannel<RowBuffer>>,
        dropped: Arc<AtomicU64>,
        clock: RunClock,
        wait: Duration,
    ) -> Self {
        SwimlaneProducer {
            producer: Producer::new(channel, wait),
            dropped,
            clock,
        }
    }

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

impl Spill {
    fn create(path: PathBuf) -> io::Result<Spill> {
        Ok(Spill {
            out: BufWriter::with_capacity(256 << 10, File::create(&path)?),
            path,
            rows: 0,
        })
    }
    fn put(&mut self, words: &[u64]) -> io::Result<()> {
        self.rows += 1;
        for w in words {
            self.out.write_all(&w.to_le_bytes())?;
        }
        Ok(())
    }
    fn reopen(self) -> io::Result<(PathBuf, BufReader<File>, u64)> {
        self.out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        let f = File::open(&self.path)?;
        Ok((self.path, BufReader::with_capacity(256 << 10, f), self.rows))
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

fn core_code(c: CoreType) -> u64 {
    match c {
        CoreType::Aic => 0,
        _ => 1,
    }
}

fn encode_task(r: &TaskRow) -> [u64; 14] {
    [
        r.task_id,
        r.kernel_ids[0] as i64 as u64,
        r.kernel_ids[1] as i64 as u64,
        r.kernel_ids[2] as i64 as u64,
        r.func_id as i64 as u64,
        u64::from(r.block_idx),
        u64::from(r.block_num),
        u64::from(r.core_id),
        core_code(r.core_type),
        u64::from(r.sched_thread),
        r.dispatch_ns,
        r.start_ns,
        r.end_ns,
        r.finish_ns,
    ]
}

fn decode_task(w: [u64; 14]) -> TaskRow {
    TaskRow {
        task_id: w[0],
        kernel_ids: [w[1] as i64 as i32, w[2] as i64 as i32, w[3] as i64 as i32],
        func_id: w[4] as i64 as i32,
        block_idx: w[5] as u32,
        block_num: w[6] as u32,
        core_id: w[7] as u32,
        core_type: if w[8] == 0 { CoreType::Aic } else { CoreType::Aiv },
        sched_thread: w[9] as u32,
        dispatch_ns: w[10],
        start_ns: w[11],
        end_ns: w[12],
        finish_ns: w[13],
    }
}

/// What the collector thread holds at the end.
pub(crate) struct Spilled {
    parts: Option<[Spill; 3]>,
    error: Option<String>,
    pub received: u64,
}

/// The swimlane collector thread of one run: spills rows to per-section files in `dir`.
pub(crate) fn spawn(
    channel: Arc<BufferChannel<RowBuffer>>,
    dir: PathBuf,
    run_epoch: u64,
) -> CollectorThread<RowBuffer, Spilled> {
    let init = move || {
        let parts = std::fs::create_dir_all(&dir).and_then(|()| {
            let p = |s: &str| Spill::create(dir.join(format!(".swimlane.{run_epoch}.{s}.part")));
            Ok([p("tasks")?, p("dummies")?, p("orch")?])
        });
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
                Row::Task(t) => parts[0].put(&encode_task(t)),
                Row::Dummy(d) => parts[1].put(&[d.task_id, u64::from(d.sched_thread), d.finish_ns]),
                Row::Orch(o) => parts[2].put(&[o.task_id, o.submit_start_ns, o.submit_end_ns]),
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
    probes.swimlane = Some(SwimlaneShared {
        channel: channel.clone(),
        dropped: dropped.clone(),
        clock: RunClock(Instant::now()),
        wait: ctx.wait,
    });
    Ok(Some(Box::new(Swimlane {
        thread: spawn(channel, ctx.prefix.to_path_buf(), ctx.run_epoch),
        dropped,
    })))
}

/// Swimlane timing between start and close.
struct Swimlane {
    thread: CollectorThread<RowBuffer, Spilled>,
    dropped: Arc<AtomicU64>,
}

impl Collector for Swimlane {
    fn close(self: Box<Self>, prefix: &Path, run: &RunFacts, _: &mut Finals, out: &mut Outcomes) {
        let spilled = self.thread.stop();
        let header = Header::for_clusters(run.clusters as u32, run.scheduler_threads as u32);
        let dropped = self.dropped.load(Ordering::Relaxed);
        let o = close(prefix, spilled, dropped, &header, run.proven);
        out.entries.push(o.manifest_entry(prefix));
        out.swimlane = Some(o);
    }
}

/// What became of a run's swimlane records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwimlaneOutcome {
    /// The written records file.
    pub path: Option<PathBuf>,
    /// Task, dummy and orchestrator rows written.
    pub rows: [u64; 3],
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
        super::manifest_entry(
            NAME,
            folder,
            written,
            partial,
            self.write_failed,
            self.problem.clone(),
        )
    }
}

/// The diagnostic's name in the run manifest.
pub const NAME: &str = "l2_swimlane";

/// Writes `<prefix>/l2_swimlane_records.json` from the spilled rows.
pub(crate) fn close(
    prefix: &Path,
    spilled: Spilled,
    dropped: u64,
    header: &Header,
    proven: bool,
) -> SwimlaneOutcome {
    let dest = prefix.join(FILE_NAME);
    let mut out = SwimlaneOutcome {
        path: None,
        rows: [0; 3],
        dropped,
        problem: spilled.error.clone(),
        bytes: 0,
        write_failed: spilled.error.is_some(),
    };
    let Some(parts) = spilled.parts else { return out };
    if spilled.error.is_some() {
        // A failed spill write may have left a partial row behind: reading the spill back could
        // misalign every later row, so no timeline is written rather than a wrong one.
        for p in parts {
            let _ = std::fs::remove_file(&p.path);
        }
        let lost = spilled.received;
        out.problem =
            (out.problem).map(|p| format!("{p}; no timeline was written ({lost} received rows lost)"));
        return out;
    }
    let [tasks, dummies, orch] = parts;
    let mut spills = Vec::new();
    let written = publish_with(&dest, Options::closing(true), |sink| {
        let mut w = SwimlaneWriter::begin(sink, header)?;
        let mut counts = [0u64; 3];
        let (p0, mut r, n) = tasks.reopen()?;
        spills.push(p0);
        for _ in 0..n {
            w.task(&decode_task(read_words::<14>(&mut r)?))?;
        }
        counts[0] = n;
        let (p1, mut r, n) = dummies.reopen()?;
        spills.push(p1);
        for _ in 0..n {
            let x = read_words::<3>(&mut r)?;
            w.dummy(&DummyRow {
                task_id: x[0],
                sched_thread: x[1] as u32,
                finish_ns: x[2],
            })?;
        }
        counts[1] = n;
        let (p2, mut r, n) = orch.reopen()?;
        spills.push(p2);
        for _ in 0..n {
            let x = read_words::<3>(&mut r)?;
            w.orch(&OrchRow {
                task_id: x[0],
                submit_start_ns: x[1],
                submit_end_ns: x[2],
            })?;
        }
        counts[2] = n;
        w.finish()?;
        Ok(counts)
    });
    for p in spills {
        let _ = std::fs::remove_file(p);
    }
    match written {
        Ok(p) => {
            out.rows = p.value;
            out.bytes = p.bytes;
            out.path = Some(dest);
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
