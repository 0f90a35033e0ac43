//! Args dump: the data of task arguments, captured on the scheduler threads before dispatch
//! (inputs, inouts, scalars) and after completion (outputs, inouts), written to
//! `args_dump/args_dump.json` + `args_dump/args.bin` (the original's layout, see
//! `docs/args-dump.md` and `simpler_artifacts::args_dump`).
//!
//! Every scheduler thread owns an `ArgsDumpProducer` that fills fixed-capacity buffers (at most
//! `RECORDS_PER_BUFFER` (256) records and `DATA_BYTES_PER_BUFFER` (1048576) payload bytes each,
//! both reserved up front: nothing is allocated per record) and hands them to one host
//! collector thread through the bounded buffer channel. The collector streams payloads to
//! `args.bin` and entries to a spill file while the run goes on; the close writes
//! `args_dump.json` around the spilled entries. Losses are counted, never silent: a record
//! that finds no buffer in time is dropped (records and payload bytes counted), a payload
//! larger than a buffer is truncated to its first `DATA_BYTES_PER_BUFFER` bytes (bytes counted).

use crate::sync::{AtomicU64, Ordering};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use simpler_artifacts::args_dump::{BIN_FILE, DIR, JSON_FILE};
use simpler_artifacts::manifest::{DiagnosticEntry, Outcome};
use simpler_artifacts::publish::{publish_with, Options, Publication};
use simpler_core::{ArgTag, DType, Tensor, MAX_DIMS};

use super::{Collector, Finals, Outcomes, Probes, RunFacts, StartCtx};
use crate::collectors::channel::{BufferChannel, CollectorThread, Producer, Records};
use crate::config::DumpArgsLevel;
use crate::memory::view_offsets;
use crate::ring::slots::PayloadRead;
use crate::shared::RunShared;

/// Records per buffer (the original's `records[256]`).
pub const RECORDS_PER_BUFFER: usize = 256;
/// Payload bytes per buffer; a larger tensor keeps its first this many bytes (truncated).
pub const DATA_BYTES_PER_BUFFER: usize = 1 << 20;

/// The diagnostic's name in the run manifest.
pub const NAME: &str = "args_dump";

/// When a record was captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    BeforeDispatch,
    AfterCompletion,
}

/// One captured argument; its payload is `data[data_start..data_start + data_len]` of its
/// buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ArgRecord {
    task_id: u64,
    func_ids: [i32; 3],
    func_count: u8,
    arg_index: u32,
    /// 0 input, 1 output, 2 inout.
    role: u8,
    stage: Stage,
    scalar: bool,
    dtype: Option<DType>,
    is_contiguous: bool,
    truncated: bool,
    ndims: u8,
    shape: [u32; MAX_DIMS],
    strides: [u32; MAX_DIMS],
    start_offset: u64,
    scalar_value: u64,
    data_start: u32,
    data_len: u32,
    /// Payload bytes cut by truncation.
    cut: u64,
}

/// A buffer of records and their payloads.
pub(crate) struct ArgBuffer {
    records: Vec<ArgRecord>,
    data: Vec<u8>,
    data_cap: usize,
}

impl Records for ArgBuffer {
    fn count(&self) -> usize {
        self.records.len()
    }
    fn clear(&mut self) {
        self.records.clear();
        self.data.clear();
    }
}

impl ArgBuffer {
    fn new(data_cap: usize) -> Self {
        ArgBuffer {
            records: Vec::with_capacity(RECORDS_PER_BUFFER),
            data: Vec::with_capacity(data_cap),
            data_cap,
        }
    }
    fn has_room(&self, bytes: usize) -> bool {
        self.records.len() < RECORDS_PER_BUFFER && self.data.len() + bytes <= self.data_cap
    }
}

/// Loss counters shared by the producers and read at close.
#[derive(Default)]
pub(crate) struct Losses {
    dropped_records: AtomicU64,
    dropped_bytes: AtomicU64,
}

/// What the scheduler threads share to capture arguments.
pub(crate) struct ArgsDumpShared {
    channel: Arc<BufferChannel<ArgBuffer>>,
    losses: Arc<Losses>,
    level: DumpArgsLevel,
    data_cap: usize,
    wait: std::time::Duration,
}

impl ArgsDumpShared {
    /// A producer for one scheduler thread.
    pub fn producer(&self) -> ArgsDumpProducer {
        ArgsDumpProducer {
            producer: Producer::new(self.channel.clone(), self.wait),
            losses: self.losses.clone(),
            level: self.level,
            data_cap: self.data_cap,
            args: Vec::new(),
        }
    }
}

/// One scheduler thread's capture.
pub(crate) struct ArgsDumpProducer {
    producer: Producer<ArgBuffer>,
    losses: Arc<Losses>,
    level: DumpArgsLevel,
    data_cap: usize,
    /// The captured task's tensor arguments, when they are unpacked (`hbg`).
    args: Vec<Tensor>,
}

fn role_of(tag: ArgTag) -> u8 {
    match tag {
        ArgTag::Input => 0,
        ArgTag::Output | ArgTag::OutputExisting => 1,
        // NO_DEP is untracked: the kernel may read or write it, so it is captured both times.
        ArgTag::Inout | ArgTag::NoDep => 2,
    }
}

impl ArgsDumpProducer {
    /// Captures the arguments of task `p` that `stage` covers, as the level and the task's
    /// selection say.
    pub fn capture(&mut self, stage: Stage, p: &PayloadRead<'_>, shared: &RunShared) {
        let memory = &shared.memory;
        let sel = p.dump.as_deref().copied().unwrap_or_default();
        let mask = sel.mask;
        if self.level == DumpArgsLevel::Partial && mask == 0 {
            return;
        }
        let mut func_ids = [-1i32; 3];
        let mut func_count = 0u8;
        for k in p.kernels.as_array() {
            if k >= 0 && (func_count as usize) < 3 {
                func_ids[func_count as usize] = k;
                func_count += 1;
            }
        }
        let selected = |i: usize| i < 64 && mask & (1u64 << i) != 0;
        let nt = p.arg_count();
        let mut scratch = std::mem::take(&mut self.args);
        for (i, &t) in p.tensors(&shared.arg_arena, &mut scratch).iter().enumerate() {
            let tag = p.tags.get(i);
            let role = role_of(tag);
            let covered = match stage {
                Stage::BeforeDispatch => role != 1,
                Stage::AfterCompletion => role != 0,
            };
            let sel = selected(i);
            if !covered || (self.level == DumpArgsLevel::Partial && !sel) {
                continue;
            }
            let want = self.level == DumpArgsLevel::Full || sel;
            let es = t.dtype().size() as usize;
            let bytes = if want { t.numel() as usize * es } else { 0 };
            let cap = self.data_cap / es.max(1) * es.max(1);
            let keep = bytes.min(cap);
            let mut rec = ArgRecord {
                task_id: p.id.raw(),
                func_ids,
                func_count,
                arg_index: i as u32,
                role,
                stage,
                scalar: false,
                dtype: Some(t.dtype()),
                is_contiguous: t.is_contiguous(),
                truncated: keep < bytes,
                ndims: t.ndims() as u8,
                shape: [0; MAX_DIMS],
                strides: [0; MAX_DIMS],
                start_offset: t.start_offset(),
                scalar_value: 0,
                data_start: 0,
                data_len: 0,
                cut: (bytes - keep) as u64,
            };
            rec.shape[..t.ndims()].copy_from_slice(t.shape());
            rec.strides[..t.ndims()].copy_from_slice(t.strides());
            let Some(b) = self.room(keep) else {
                self.drop_record(keep);
                continue;
            };
            rec.data_start = b.data.len() as u32;
            if keep > 0 {
                match memory.buffer(&t) {
                    Ok(buf) if rec.is_contiguous => {
                        let at = t.start_offset() as usize * es;
                        b.data
                            .extend(buf[at..at + keep].iter().map(|x| x.load(Ordering::Relaxed)));
                    }
                    Ok(buf) => {
                        for off in view_offsets(&t).take(keep / es) {
                            let at = off as usize * es;
                            b.data
                                .extend(buf[at..at + es].iter().map(|x| x.load(Ordering::Relaxed)));
                        }
                    }
                    // An unresolvable buffer cannot reach a kernel either; keep the record.
                    Err(_) => rec.cut = keep as u64,
                }
            }
            rec.data_len = b.data.len() as u32 - rec.data_start;
            rec.truncated |= rec.cut > 0;
            b.records.push(rec);
        }
        self.args = scratch;
        if stage == Stage::BeforeDispatch {
            for (j, &v) in p.scalars.iter().enumerate() {
                if self.level == DumpArgsLevel::Partial && !selected(nt + j) {
                    continue;
                }
                let Some(b) = self.room(0) else {
                    self.drop_record(0);
                    continue;
                };
                b.records.push(ArgRecord {
                    task_id: p.id.raw(),
                    func_ids,
                    func_count,
                    arg_index: (nt + j) as u32,
                    role: 0,
                    stage,
                    scalar: true,
                    dtype: crate::slot::unpack_dtype(sel.scalar_dtypes, j),
                    is_contiguous: true,
                    truncated: false,
                    ndims: 0,
                    shape: [0; MAX_DIMS],
                    strides: [0; MAX_DIMS],
                    start_offset: 0,
                    scalar_value: v,
                    data_start: 0,
                    data_len: 0,
                    cut: 0,
                });
            }
        }
    }

    /// A buffer with room for one record and `bytes` of payload (handing a full one over
    /// first); `None` when none can be had in time.
    #[inline]
    fn room(&mut self, bytes: usize) -> Option<&mut ArgBuffer> {
        if self.producer.current().is_some_and(|b| !b.has_room(bytes)) {
            self.flush();
        }
        self.producer.buffer(|_| {})
    }

    fn drop_record(&self, bytes: usize) {
        self.losses.dropped_records.fetch_add(1, Ordering::Relaxed);
        self.losses
            .dropped_bytes
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Hands the current buffer over (an empty one goes back to the free queue); a buffer the
    /// ready queue refuses counts its records and bytes as dropped.
    pub fn flush(&mut self) {
        self.producer.release_empty();
        let bytes: u64 = self
            .producer
            .current()
            .map_or(0, |b| b.records.iter().map(|r| u64::from(r.data_len)).sum());
        let lost = self.producer.hand_over();
        if lost > 0 {
            self.losses
                .dropped_records
                .fetch_add(lost as u64, Ordering::Relaxed);
            self.losses.dropped_bytes.fetch_add(bytes, Ordering::Relaxed);
        }
        self.producer.release_empty();
    }
}

impl Drop for ArgsDumpProducer {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Counts the collector keeps while it streams.
#[derive(Default, Debug, Clone, Copy)]
struct Counts {
    total: u64,
    before: u64,
    after: u64,
    roles: [u64; 3],
    truncated_args: u64,
    truncated_bytes: u64,
    bin_bytes: u64,
}

/// What the collector thread holds.
pub(crate) struct Streamed {
    /// The payloads, streamed straight into `args.bin`'s publication (its temporary is
    /// `bin_part`, renamed into place at the close: a copy took twice the dump's size on disk),
    /// and the entries, wrapped into `args_dump.json` at the close.
    files: Option<(Publication, BufWriter<File>)>,
    bin_part: PathBuf,
    entries_part: PathBuf,
    counts: Counts,
    /// Records (and their payload bytes) the collector received, written or not: what a
    /// failed dump lost.
    received: [u64; 2],
    error: Option<String>,
    /// One entry's text, reused.
    line: Vec<u8>,
}

impl Streamed {
    /// Follows a move of the run's folder ([`RunFacts::now_at`]) before the close reads its
    /// files by path.
    fn relocate(&mut self, now_at: impl Fn(&Path) -> PathBuf) {
        self.bin_part = now_at(&self.bin_part);
        self.entries_part = now_at(&self.entries_part);
        if let Some((bin, _)) = self.files.as_mut() {
            bin.relocate(&now_at);
        }
    }
}

fn dtype_name(d: Option<DType>) -> &'static str {
    d.map_or("UINT64", DType::name)
}

fn scalar_value(dtype: Option<DType>, v: u64) -> serde_json::Value {
    use serde_json::Value;
    match dtype {
        Some(DType::Float32) => {
            let f = f32::from_bits(v as u32);
            if f.is_nan() {
                Value::Null
            } else if f.is_infinite() {
                Value::String(if f > 0.0 { "$Inf" } else { "-$Inf" }.into())
            } else {
                // The shortest text that reads back as this f32 (0.1, not 0.10000000149011612).
                serde_json::json!(f.to_string().parse::<f64>().unwrap_or(f64::from(f)))
            }
        }
        Some(DType::Int32) => serde_json::json!(v as u32 as i32),
        Some(DType::UInt32) => serde_json::json!(v as u32),
        Some(DType::Int64) => serde_json::json!(v as i64),
        Some(DType::Bool) => Value::Bool(v != 0),
        _ => serde_json::json!(v),
    }
}

/// The entry of `r` as a value (the reference for [`write_entry`], which the tests hold to it).
#[cfg(test)]
fn entry(r: &ArgRecord, bin_offset: u64) -> simpler_artifacts::args_dump::ArgEntry {
    let nd = r.ndims as usize;
    simpler_artifacts::args_dump::ArgEntry {
        task_id: format!("0x{:016x}", r.task_id),
        func_id: if r.func_count == 0 {
            vec![-1]
        } else {
            r.func_ids[..r.func_count as usize]
                .iter()
                .map(|&k| i64::from(k))
                .collect()
        },
        arg_index: r.arg_index,
        role: ["input", "output", "inout"][r.role as usize].into(),
        stage: match r.stage {
            Stage::BeforeDispatch => "before_dispatch",
            Stage::AfterCompletion => "after_completion",
        }
        .into(),
        kind: if r.scalar { "scalar" } else { "tensor" }.into(),
        dtype: dtype_name(r.dtype).into(),
        value: r.scalar.then(|| scalar_value(r.dtype, r.scalar_value)),
        is_contiguous: r.is_contiguous,
        shape: r.shape[..nd].iter().map(|&x| u64::from(x)).collect(),
        strides: r.strides[..nd].iter().map(|&x| u64::from(x)).collect(),
        start_offset: r.start_offset,
        numel: Some(r.shape[..nd].iter().map(|&x| u64::from(x)).product()),
        arg_index_ambiguous: false,
        bin_offset: Some(if r.data_len > 0 { bin_offset } else { 0 }),
        bin_size: u64::from(r.data_len),
        truncated: r.truncated,
        overwritten: false,
    }
}

const ROLES: [&str; 3] = ["input", "output", "inout"];

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

fn put_list(out: &mut Vec<u8>, v: &[u32]) {
    out.push(b'[');
    for (k, &x) in v.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        put_u64(out, u64::from(x));
    }
    out.push(b']');
}

/// Appends the JSON entry of `r` (the original's keys, in its order) to `out`: written by hand
/// because the collector writes millions of them.
fn write_entry(out: &mut Vec<u8>, r: &ArgRecord, bin_offset: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let nd = r.ndims as usize;
    out.extend_from_slice(b"{\"task_id\":\"0x");
    for k in (0..16).rev() {
        out.push(HEX[((r.task_id >> (4 * k)) & 0xf) as usize]);
    }
    out.extend_from_slice(b"\",\"func_id\":[");
    if r.func_count == 0 {
        out.extend_from_slice(b"-1");
    }
    for k in 0..r.func_count as usize {
        if k > 0 {
            out.push(b',');
        }
        out.extend_from_slice(itoa::Buffer::new().format(r.func_ids[k]).as_bytes());
    }
    out.extend_from_slice(b"],\"arg_index\":");
    put_u64(out, u64::from(r.arg_index));
    out.extend_from_slice(b",\"role\":\"");
    out.extend_from_slice(ROLES[r.role as usize].as_bytes());
    out.extend_from_slice(match r.stage {
        Stage::BeforeDispatch => b"\",\"stage\":\"before_dispatch\",\"kind\":\"",
        Stage::AfterCompletion => b"\",\"stage\":\"after_completion\",\"kind\":\"",
    });
    out.extend_from_slice(if r.scalar { b"scalar" } else { b"tensor" });
    out.extend_from_slice(b"\",\"dtype\":\"");
    out.extend_from_slice(dtype_name(r.dtype).as_bytes());
    out.extend_from_slice(b"\",");
    if r.scalar {
        out.extend_from_slice(b"\"value\":");
        out.extend_from_slice(scalar_value(r.dtype, r.scalar_value).to_string().as_bytes());
        out.push(b',');
    }
    out.extend_from_slice(if r.is_contiguous {
        b"\"is_contiguous\":true,\"shape\":"
    } else {
        b"\"is_contiguous\":false,\"shape\":"
    });
    put_list(out, &r.shape[..nd]);
    out.extend_from_slice(b",\"strides\":");
    put_list(out, &r.strides[..nd]);
    out.extend_from_slice(b",\"start_offset\":");
    put_u64(out, r.start_offset);
    out.extend_from_slice(b",\"numel\":");
    put_u64(out, r.shape[..nd].iter().map(|&x| u64::from(x)).product());
    out.extend_from_slice(b",\"bin_offset\":");
    put_u64(out, if r.data_len > 0 { bin_offset } else { 0 });
    out.extend_from_slice(b",\"bin_size\":");
    put_u64(out, u64::from(r.data_len));
    out.extend_from_slice(if r.truncated {
        b",\"truncated\":true,\"overwritten\":false}"
    } else {
        b",\"truncated\":false,\"overwritten\":false}"
    });
}

fn consume(st: &mut Streamed, buf: &ArgBuffer) -> io::Result<()> {
    let Some((bin, entries)) = st.files.as_mut() else {
        return Ok(());
    };
    for r in &buf.records {
        let c = &mut st.counts;
        let d = &buf.data[r.data_start as usize..(r.data_start + r.data_len) as usize];
        st.line.clear();
        if c.total > 0 {
            st.line.extend_from_slice(b",\n");
        }
        write_entry(&mut st.line, r, c.bin_bytes);
        entries.write_all(&st.line)?;
        bin.sink().write_all(d)?;
        c.bin_bytes += d.len() as u64;
        c.total += 1;
        match r.stage {
            Stage::BeforeDispatch => c.before += 1,
            Stage::AfterCompletion => c.after += 1,
        }
        c.roles[r.role as usize] += 1;
        if r.truncated {
            c.truncated_args += 1;
            c.truncated_bytes += r.cut;
        }
    }
    Ok(())
}

/// The collector thread: streams payloads and entries into part files in `dir`.
fn spawn(
    channel: Arc<BufferChannel<ArgBuffer>>,
    dir: PathBuf,
    run_epoch: u64,
) -> CollectorThread<ArgBuffer, Streamed> {
    let init = move || {
        let bin_name = format!(".args.bin.{run_epoch}.part");
        let bin_part = dir.join(&bin_name);
        let entries_part = dir.join(format!(".args_entries.{run_epoch}.part"));
        let files = crate::collectors::make_subfolder(&dir).and_then(|()| {
            let options = Options::closing(true);
            let bin = Publication::begin_named(&dir.join(BIN_FILE), options, &bin_name)
                .map_err(|e| io::Error::new(e.source.kind(), e.to_string()))?;
            let entries = File::create(&entries_part).map(|f| BufWriter::with_capacity(1 << 20, f))?;
            Ok((bin, entries))
        });
        let (files, error) = match files {
            Ok(f) => (Some(f), None),
            Err(e) => (
                None,
                Some(format!(
                    "creating the args dump part files in {}: {e}",
                    dir.display()
                )),
            ),
        };
        Streamed {
            files,
            bin_part,
            entries_part,
            counts: Counts::default(),
            received: [0; 2],
            error,
            line: Vec::with_capacity(512),
        }
    };
    CollectorThread::spawn("simpler-args-dump", channel, init, |st, buf: &ArgBuffer| {
        st.received[0] += buf.records.len() as u64;
        st.received[1] += buf.records.iter().map(|r| u64::from(r.data_len)).sum::<u64>();
        if let Err(e) = consume(st, buf) {
            let dir = st.bin_part.parent().unwrap_or(Path::new("."));
            st.error
                .get_or_insert(format!("streaming the args dump into {}: {e}", dir.display()));
            st.files = None;
        }
    })
}

/// Starts the args dump when the level is not 0: a buffer pool sized for the scheduler
/// threads, the shared capture every scheduler thread records through, and the streaming
/// collector thread.
pub(crate) fn start<'a>(
    ctx: &StartCtx<'a>,
    probes: &mut Probes,
) -> Result<Option<Box<dyn Collector + 'a>>, crate::collectors::DiagnosticsError> {
    let cfg = ctx.cfg;
    if cfg.dump_args == DumpArgsLevel::Off {
        return Ok(None);
    }
    let data_cap = cfg
        .faults
        .args_dump_buffer_bytes
        .unwrap_or(DATA_BYTES_PER_BUFFER)
        .max(8);
    let threads = cfg.effective_scheduler_threads().min(cfg.clusters).max(1);
    let buffers = (0..2 * threads + 2)
        .map(|_| Box::new(ArgBuffer::new(data_cap)))
        .collect();
    let channel = Arc::new(BufferChannel::new(buffers, (&cfg.faults).into()));
    let losses = Arc::new(Losses::default());
    probes.args_dump = Some(ArgsDumpShared {
        channel: channel.clone(),
        losses: losses.clone(),
        level: cfg.dump_args,
        data_cap,
        wait: ctx.wait,
    });
    Ok(Some(Box::new(ArgsDump {
        thread: spawn(channel, ctx.prefix.join(DIR), ctx.run_epoch),
        losses,
        level: cfg.dump_args,
    })))
}

/// The args dump between start and close.
struct ArgsDump {
    thread: CollectorThread<ArgBuffer, Streamed>,
    losses: Arc<Losses>,
    level: DumpArgsLevel,
}

impl Collector for ArgsDump {
    fn close(self: Box<Self>, prefix: &Path, run: &RunFacts, _: &mut Finals, out: &mut Outcomes) {
        let mut streamed = self.thread.stop();
        streamed.relocate(|p| run.now_at(p));
        let dropped = [
            self.losses.dropped_records.load(Ordering::Relaxed),
            self.losses.dropped_bytes.load(Ordering::Relaxed),
        ];
        let o = close(prefix, streamed, dropped, self.level, [run.proven, run.fatal]);
        out.entries.push(o.manifest_entry(prefix));
        out.args_dump = Some(o);
    }
}

/// What became of a run's args dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgsDumpOutcome {
    /// The written `args_dump.json`.
    pub path: Option<PathBuf>,
    /// The written `args.bin` (none at level 3 without payload).
    pub bin: Option<PathBuf>,
    /// Entries written.
    pub records: u64,
    /// Payload bytes written.
    pub bin_bytes: u64,
    /// Records the scheduler threads could not hand over (counted, not written).
    pub dropped_records: u64,
    /// Payload bytes of the dropped records.
    pub dropped_bytes: u64,
    /// Entries whose payload was truncated.
    pub truncated_args: u64,
    /// Payload bytes cut by truncation.
    pub truncated_bytes: u64,
    /// Why the dump is missing or incomplete.
    pub problem: Option<String>,
    /// Size of the written manifest.
    pub bytes: u64,
    /// True when writing failed (as opposed to records being lost).
    pub write_failed: bool,
}

impl ArgsDumpOutcome {
    /// This outcome as a manifest entry (the JSON manifest first, then `args.bin`).
    pub fn manifest_entry(&self, folder: &Path) -> DiagnosticEntry {
        let mut e = super::manifest_entry(
            NAME,
            folder,
            self.path.as_deref().map(|p| (p, self.bytes)),
            self.problem.is_some(),
            self.write_failed,
            self.problem.clone(),
        );
        if let (Some(b), true) = (&self.bin, e.outcome != Outcome::Failed) {
            e.files.push(super::file_entry(folder, b, self.bin_bytes));
        }
        e
    }
}

/// Writes `<prefix>/args_dump/args_dump.json` around the streamed entries and moves the
/// streamed payloads to `args.bin`. A dump that fails is not kept at all (its part files go
/// with it), so its problem counts every record the collector received as lost.
fn close(
    prefix: &Path,
    st: Streamed,
    dropped: [u64; 2],
    level: DumpArgsLevel,
    proof: [bool; 2],
) -> ArgsDumpOutcome {
    let [records, bytes] = st.received;
    let mut out = write_dump(prefix, st, dropped, level, proof);
    if out.write_failed {
        out.records = 0;
        out.bin_bytes = 0;
        let lost =
            format!("no args dump was written ({records} captured records, {bytes} payload bytes lost)");
        out.problem = Some(match out.problem.take() {
            Some(p) => format!("{p}; {lost}"),
            None => lost,
        });
    }
    out
}

/// [`close`] up to the outcome of the writes.
fn write_dump(
    prefix: &Path,
    mut st: Streamed,
    [dropped_records, dropped_bytes]: [u64; 2],
    level: DumpArgsLevel,
    // Producer-stop proof, and whether the run stopped on a fatal (a timeout and an
    // interrupt included) before every task ran.
    [proven, stopped]: [bool; 2],
) -> ArgsDumpOutcome {
    let dir = prefix.join(DIR);
    let c = st.counts;
    let mut out = ArgsDumpOutcome {
        path: None,
        bin: None,
        records: c.total,
        bin_bytes: c.bin_bytes,
        dropped_records,
        dropped_bytes,
        truncated_args: c.truncated_args,
        truncated_bytes: c.truncated_bytes,
        problem: st.error.clone(),
        bytes: 0,
        write_failed: st.error.is_some(),
    };
    let remove_parts = |st: &Streamed| {
        let _ = std::fs::remove_file(&st.bin_part);
        let _ = std::fs::remove_file(&st.entries_part);
    };
    let (bin, entries) = match st.files.take() {
        Some((bin, entries)) => (Some(bin), Some(entries)),
        None => (None, None),
    };
    if let Some(Err(e)) = entries.map(|e| e.into_inner().map_err(|e| e.into_error())?.sync_all()) {
        out.write_failed = true;
        out.problem = Some(format!("finishing {}: {e}", st.entries_part.display()));
    }
    if out.write_failed {
        drop(bin);
        remove_parts(&st);
        return out;
    }
    // A stopped run's dump lacks the arguments of the tasks that never ran or never completed:
    // it says so itself, not only through run.json (the original's viewer reads it alone).
    let complete = dropped_records == 0 && c.truncated_bytes == 0 && proven && !stopped;
    let has_bin = !(level == DumpArgsLevel::Hybrid && c.bin_bytes == 0);
    // The payloads first, through the publish path like every artifact; the manifest that
    // names them last, so a manifest never points at a missing or an earlier run's args.bin.
    match bin.filter(|_| has_bin).map(Publication::commit) {
        Some(Ok(published)) => out.bin = Some(published.path),
        Some(Err(e)) => {
            out.write_failed = true;
            out.problem = Some(e.to_string());
            let _ = std::fs::remove_file(&st.entries_part);
            return out;
        }
        // No payloads (a hybrid dump of scalars only), or no part files: the temporary goes.
        None => {
            let _ = std::fs::remove_file(&st.bin_part);
        }
    }
    let dest = dir.join(JSON_FILE);
    let written = publish_with(&dest, Options::closing(true), |sink| {
        writeln!(
            sink,
            "{{\"run_dir\":\"{DIR}\",\"bin_format\":{{\"type\":\"logical_contiguous\",\"byte_order\":\"little_endian\"}},\
             \"dump_args_level\":{},\"total_args\":{},\"before_dispatch\":{},\"after_completion\":{},\
             \"input_args\":{},\"output_args\":{},\"inout_args\":{},\"truncated_args\":{},\
             \"dropped_records\":{dropped_records},\"dropped_overwrite\":0,\"bin_file\":{},\
             \"truncated_bytes\":{},\"dropped_bytes\":{dropped_bytes},\"complete\":{complete},\"args\":[",
            level.number(),
            c.total,
            c.before,
            c.after,
            c.roles[0],
            c.roles[1],
            c.roles[2],
            c.truncated_args,
            if has_bin { format!("\"{BIN_FILE}\"") } else { "null".into() },
            c.truncated_bytes,
        )?;
        let mut entries = File::open(&st.entries_part)?;
        io::copy(&mut entries, sink)?;
        sink.write_all(b"\n]}\n")
    });
    let _ = std::fs::remove_file(&st.entries_part);
    match written {
        Ok(p) => {
            out.bytes = p.bytes;
            out.path = Some(dest);
        }
        Err(e) => {
            out.write_failed = true;
            out.problem = Some(e.to_string());
            // The payloads without the manifest that describes them are unreadable: no
            // args.bin is left behind the failed dump (it was, unlisted by run.json).
            if let Some(bin) = out.bin.take() {
                let _ = std::fs::remove_file(bin);
            }
            return out;
        }
    }
    let mut notes = Vec::new();
    if dropped_records > 0 {
        notes.push(format!(
            "{dropped_records} records ({dropped_bytes} payload bytes) were dropped (no buffer in time)"
        ));
    }
    if c.truncated_bytes > 0 {
        notes.push(format!(
            "{} payloads were truncated ({} bytes not kept)",
            c.truncated_args, c.truncated_bytes
        ));
    }
    if !proven {
        notes.push(
            "the run ended without producer-stop proof; records still held by scheduler threads are missing"
                .into(),
        );
    } else if stopped {
        notes.push(
            "the run stopped before every task ran: the arguments of tasks that never ran or never completed were not captured"
                .into(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(scalar: bool, dtype: Option<DType>, data_len: u32) -> ArgRecord {
        let mut shape = [0; MAX_DIMS];
        let mut strides = [0; MAX_DIMS];
        shape[..2].copy_from_slice(&[4, 8]);
        strides[..2].copy_from_slice(&[16, 1]);
        ArgRecord {
            task_id: 0x0000_0001_0000_00ab,
            func_ids: [3, 7, -1],
            func_count: 2,
            arg_index: 5,
            role: 2,
            stage: Stage::AfterCompletion,
            scalar,
            dtype,
            is_contiguous: false,
            truncated: true,
            ndims: if scalar { 0 } else { 2 },
            shape,
            strides,
            start_offset: 12,
            scalar_value: u64::from(2.5f32.to_bits()),
            data_start: 0,
            data_len,
            cut: 3,
        }
    }

    #[test]
    fn the_hand_written_entry_is_the_serde_entry() {
        for r in [
            record(false, Some(DType::BFloat16), 64),
            record(true, Some(DType::Float32), 0),
            record(true, None, 0),
            ArgRecord {
                func_count: 0,
                is_contiguous: true,
                truncated: false,
                ..record(false, Some(DType::Int8), 0)
            },
        ] {
            let mut text = Vec::new();
            write_entry(&mut text, &r, 4096);
            let parsed: simpler_artifacts::args_dump::ArgEntry = serde_json::from_slice(&text).unwrap();
            assert_eq!(parsed, entry(&r, 4096), "{}", String::from_utf8_lossy(&text));
            let via_serde = serde_json::to_string(&entry(&r, 4096)).unwrap();
            assert_eq!(
                String::from_utf8(text).unwrap(),
                via_serde,
                "same text, same key order"
            );
        }
    }

    #[test]
    fn scalar_dtypes_pack_4_bits_each() {
        use crate::slot::{pack_dtypes, unpack_dtype};
        let mut d = [None; simpler_core::MAX_SCALAR_ARGS];
        for (j, t) in d.iter_mut().enumerate() {
            *t = (j % 13 != 0).then(|| DType::ALL[j % 12]);
        }
        let packed = pack_dtypes(&d);
        for (j, t) in d.iter().enumerate() {
            assert_eq!(unpack_dtype(packed, j), *t, "scalar {j}");
        }
    }

    #[test]
    fn scalar_values_decode_as_the_original_writes_them() {
        let f = |x: f32| scalar_value(Some(DType::Float32), u64::from(x.to_bits()));
        assert_eq!(f(0.1), json!(0.1));
        assert_eq!(f(5.0).to_string(), "5.0");
        assert_eq!(f(f32::NAN), serde_json::Value::Null);
        assert_eq!(
            (f(f32::INFINITY), f(f32::NEG_INFINITY)),
            (json!("$Inf"), json!("-$Inf"))
        );
        assert_eq!(
            scalar_value(Some(DType::Int32), u64::from((-3i32) as u32)),
            json!(-3)
        );
        assert_eq!(scalar_value(Some(DType::Int64), (-3i64) as u64), json!(-3));
        assert_eq!(scalar_value(Some(DType::Bool), 1), json!(true));
        assert_eq!(scalar_value(None, u64::MAX), json!(u64::MAX));
    }
}
