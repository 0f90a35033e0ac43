//! The reader of records files: ours and the original's, every level, every file name.
//!
//! The whole file is parsed into compact raw rows first (the join and the time base need every
//! row), then normalised as the original's reader does (`../shared/reference/swimlane-format.md`
//! §4): `aicore_tasks` and `aicpu_tasks` are joined on `(core_id, reg_task_id)`; the time base
//! is the smallest nonzero timestamp (0 for this runtime's files, already nanoseconds since the
//! run started); cycles become nanoseconds since the base. Unknown keys
//! are skipped. Rows of this runtime's `simpler_task_info` fill kernel ids, blocks and
//! scheduler threads; without them those stay unknown and [`Header::notes`] says so.

use rustc_hash::FxHashMap as HashMap;
use std::cell::Cell;
use std::fmt;
use std::io::Read;
use std::path::Path;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess};
use serde::{Deserialize, Deserializer};

use super::join;
use super::{
    BuildPhase, Core, CoreType, DummyRow, Header, Level, OrchRow, OrchestratorSource, SchedPhase,
    SwimlaneFile, SwimlaneReadError, SwimlaneSink, TaskRow, FILE_NAME, FILE_NAMES, NO_KERNEL,
};

/// Reads the records file at `path` and hands its rows to `sink` (tasks, dummies, submit
/// spans, phases, in that order); returns the header.
///
/// The file is read into memory and parsed from there (serde_json's slice reader is several
/// times faster than its byte-by-byte `io::Read` reader; the rows it holds are about as large
/// as the file anyway).
pub fn read_swimlane<S: SwimlaneSink>(path: &Path, sink: &mut S) -> Result<Header, SwimlaneReadError> {
    let artifact = artifact_of(path);
    let io_error = |e| SwimlaneReadError::io(path, artifact, e);
    let mut file = crate::input::open_regular(path).map_err(io_error)?;
    let mut bytes = Vec::with_capacity(file.metadata().map_or(0, |m| m.len() as usize + 1));
    file.read_to_end(&mut bytes).map_err(io_error)?;
    let raw = parse_from(serde_json::Deserializer::from_slice(&bytes))
        .map_err(|e| e.with_path(path).with_artifact(artifact))?;
    drop(bytes);
    normalise(raw, sink).map_err(|m| SwimlaneReadError::invalid(path, artifact, m))
}

/// The name errors give the records file at `path`: its own, when it is one of
/// [`FILE_NAMES`] (the original's `l2_perf_records.json` is not called
/// `l2_swimlane_records.json`), else [`FILE_NAME`], what the file is.
fn artifact_of(path: &Path) -> &'static str {
    let name = path.file_name();
    FILE_NAMES
        .iter()
        .copied()
        .find(|f| name.is_some_and(|n| n == *f))
        .unwrap_or(FILE_NAME)
}

/// Reads a records file from any reader into `sink`; see [`read_swimlane`]. Errors name the
/// file as `<input>`.
pub fn read_swimlane_from<R: Read, S: SwimlaneSink>(
    reader: R,
    sink: &mut S,
) -> Result<Header, SwimlaneReadError> {
    let raw = parse(reader)?;
    normalise(raw, sink).map_err(|m| SwimlaneReadError::invalid(Path::new("<input>"), FILE_NAME, m))
}

/// Reads a whole records file into memory.
pub fn read_swimlane_file(path: &Path) -> Result<SwimlaneFile, SwimlaneReadError> {
    let mut rows = CollectRows::default();
    let header = read_swimlane(path, &mut rows)?;
    Ok(SwimlaneFile {
        header,
        tasks: rows.tasks,
        dummy_tasks: rows.dummy_tasks,
        orchestrator: rows.orchestrator,
        phases: rows.phases,
        build_phases: rows.build_phases,
    })
}

/// Collects every row; the sink behind [`read_swimlane_file`].
#[derive(Debug, Default)]
pub(super) struct CollectRows {
    pub tasks: Vec<TaskRow>,
    pub dummy_tasks: Vec<DummyRow>,
    pub orchestrator: Vec<OrchRow>,
    pub phases: Vec<SchedPhase>,
    pub build_phases: Vec<BuildPhase>,
}

impl SwimlaneSink for CollectRows {
    fn task(&mut self, row: TaskRow) {
        self.tasks.push(row);
    }
    fn dummy(&mut self, row: DummyRow) {
        self.dummy_tasks.push(row);
    }
    fn orch(&mut self, row: OrchRow) {
        self.orchestrator.push(row);
    }
    fn sched_phase(&mut self, phase: SchedPhase) {
        self.phases.push(phase);
    }
    fn build_phase(&mut self, phase: BuildPhase) {
        self.build_phases.push(phase);
    }
}

// === raw rows ===

/// `[core_id, token, reg_task_id, start, end, receive_to_start]` (5 columns: r2s = 0).
#[derive(Debug, Clone, Copy)]
struct AicoreRaw {
    core_id: u32,
    token: u64,
    reg: u32,
    start: u64,
    end: u64,
    r2s: u64,
}

/// `[core_id, reg_task_id, dispatch, finish]`.
#[derive(Debug, Clone, Copy)]
struct AicpuRaw {
    core_id: u32,
    reg: u32,
    dispatch: u64,
    finish: u64,
}

/// `[func_id, block_idx, block_num, aic, aiv0, aiv1, sched_thread]` (ours).
#[derive(Debug, Clone, Copy)]
struct InfoRaw {
    func_id: i32,
    block_idx: u32,
    block_num: u32,
    kernel_ids: [i32; 3],
    sched_thread: u32,
}

/// A row written as a JSON array of integers with a fixed set of accepted lengths.
trait ArrayRow: Sized {
    const WHAT: &'static str;
    const LENGTHS: &'static [usize];
    fn from_values(v: &[i128]) -> Result<Self, String>;
}

/// Core ids a records file may use: the trace numbers core `c`'s track `10000 + 10·c`, below
/// its AICPU tracks at 19000, so 900 cores; a chip has far fewer, and a core id of 2^31 wrapped
/// two cores onto one track.
pub const MAX_CORES: u32 = 900;

fn core_of(v: i128) -> Result<u32, String> {
    let core = u32_of(v, "core_id")?;
    if core >= MAX_CORES {
        return Err(format!(
            "core_id {core} is past the {MAX_CORES} cores a trace can show"
        ));
    }
    Ok(core)
}

fn u32_of(v: i128, field: &str) -> Result<u32, String> {
    u32::try_from(v).map_err(|_| format!("{field} {v} is out of range"))
}
fn u64_of(v: i128, field: &str) -> Result<u64, String> {
    u64::try_from(v).map_err(|_| format!("{field} {v} is out of range"))
}
fn i32_of(v: i128, field: &str) -> Result<i32, String> {
    i32::try_from(v).map_err(|_| format!("{field} {v} is out of range"))
}

impl ArrayRow for AicoreRaw {
    const WHAT: &'static str = "[core_id, task_token, reg_task_id, start, end, receive_to_start]";
    const LENGTHS: &'static [usize] = &[5, 6];
    fn from_values(v: &[i128]) -> Result<Self, String> {
        let row = AicoreRaw {
            core_id: core_of(v[0])?,
            token: u64_of(v[1], "task_token")?,
            reg: u32_of(v[2], "reg_task_id")?,
            start: u64_of(v[3], "start")?,
            end: u64_of(v[4], "end")?,
            r2s: match v.get(5) {
                Some(&r) => u64_of(r, "receive_to_start")?,
                None => 0,
            },
        };
        // A corrupt row, not a negative duration: every reader of the rows subtracts start
        // from end in `u64` (sched-overhead's window assertion fired on such a file).
        if row.end < row.start {
            return Err(format!("end {} is before start {}", row.end, row.start));
        }
        Ok(row)
    }
}

impl ArrayRow for AicpuRaw {
    const WHAT: &'static str = "[core_id, reg_task_id, dispatch, finish]";
    const LENGTHS: &'static [usize] = &[4];
    fn from_values(v: &[i128]) -> Result<Self, String> {
        let row = AicpuRaw {
            core_id: core_of(v[0])?,
            reg: u32_of(v[1], "reg_task_id")?,
            dispatch: u64_of(v[2], "dispatch")?,
            finish: u64_of(v[3], "finish")?,
        };
        if row.finish < row.dispatch {
            return Err(format!(
                "finish {} is before dispatch {}",
                row.finish, row.dispatch
            ));
        }
        Ok(row)
    }
}

impl ArrayRow for InfoRaw {
    const WHAT: &'static str = "[func_id, block_idx, block_num, aic, aiv0, aiv1, sched_thread]";
    const LENGTHS: &'static [usize] = &[7];
    fn from_values(v: &[i128]) -> Result<Self, String> {
        Ok(InfoRaw {
            func_id: i32_of(v[0], "func_id")?,
            block_idx: u32_of(v[1], "block_idx")?,
            block_num: u32_of(v[2], "block_num")?,
            kernel_ids: [
                i32_of(v[3], "kernel id")?,
                i32_of(v[4], "kernel id")?,
                i32_of(v[5], "kernel id")?,
            ],
            sched_thread: u32_of(v[6], "sched_thread")?,
        })
        .and_then(|row| {
            // Found by a review: a block past its task's block count was drawn as data.
            if row.block_num > 0 && row.block_idx >= row.block_num {
                return Err(format!(
                    "block_idx {} is not below block_num {} (blocks are numbered from 0)",
                    row.block_idx, row.block_num
                ));
            }
            Ok(row)
        })
    }
}

/// One integer column of a row; anything else is "invalid type: ..., expected an integer".
struct Int(i128);

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Int;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an integer")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int, E> {
                Ok(Int(i128::from(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int, E> {
                Ok(Int(i128::from(v)))
            }
        }
        d.deserialize_any(V)
    }
}

/// Deserialises an [`ArrayRow`] from a JSON array of integers.
struct ArrayRowDe<T>(T);

impl<'de, T: ArrayRow> Deserialize<'de> for ArrayRowDe<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: ArrayRow> de::Visitor<'de> for V<T> {
            type Value = ArrayRowDe<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an array {}", T::WHAT)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut values = [0i128; 8];
                let mut n = 0;
                while let Some(Int(v)) = seq.next_element::<Int>()? {
                    if n == values.len() {
                        return Err(de::Error::custom(format!(
                            "too many columns, expected {}",
                            T::WHAT
                        )));
                    }
                    values[n] = v;
                    n += 1;
                }
                if !T::LENGTHS.contains(&n) {
                    return Err(de::Error::custom(format!("{n} columns, expected {}", T::WHAT)));
                }
                T::from_values(&values[..n])
                    .map(ArrayRowDe)
                    .map_err(de::Error::custom)
            }
        }
        d.deserialize_seq(V(std::marker::PhantomData))
    }
}

/// A scheduler phase object as written.
#[derive(Debug, Deserialize)]
struct PhaseRaw {
    kind: PhaseKindRaw,
    start_cycles: u64,
    end_cycles: u64,
    #[serde(default)]
    loop_iter: u64,
    #[serde(default)]
    tasks_processed: u64,
    #[serde(default)]
    pop_hit: Option<u64>,
    #[serde(default)]
    pop_miss: Option<u64>,
    #[serde(default, deserialize_with = "task_id")]
    task_id: Option<u64>,
    #[serde(default)]
    shared_at_start: Option<[i64; 3]>,
    #[serde(default)]
    shared_at_end: Option<[i64; 3]>,
}

/// A task id written as a number or a decimal string; a negative number (the original's
/// "no task") reads as `None`.
fn task_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        Unsigned(u64),
        Negative(i64),
        Text(String),
    }
    match Option::<Id>::deserialize(d)? {
        None => Ok(None),
        Some(Id::Negative(v)) => {
            debug_assert!(v < 0, "non-negative ids parse as Unsigned");
            Ok(None)
        }
        Some(Id::Unsigned(v)) => Ok(Some(v)),
        Some(Id::Text(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| de::Error::custom(format!("task_id {s:?} is not a decimal u64"))),
    }
}

/// A phase `kind`: a name, or the original's enum number.
#[derive(Debug)]
struct PhaseKindRaw(String);

/// The original's phase enum, by value (`../shared/reference/swimlane-format.md` §3).
const PHASE_KINDS: [(u64, &str); 13] = [
    (0, "complete"),
    (1, "dispatch"),
    (2, "release"),
    (4, "dummy"),
    (5, "early_dispatch"),
    (6, "resolve"),
    (7, "dummy_task"),
    (8, "drain"),
    (9, "drain_prepare"),
    (10, "drain_publish"),
    (11, "async_poll"),
    (12, "predicated_skip"),
    (13, "graph_prepare"),
];

impl<'de> Deserialize<'de> for PhaseKindRaw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum K {
            Name(String),
            Number(u64),
        }
        match K::deserialize(d)? {
            K::Name(s) => Ok(PhaseKindRaw(s)),
            K::Number(n) => PHASE_KINDS
                .iter()
                .find(|(v, _)| *v == n)
                .map(|(_, s)| PhaseKindRaw((*s).to_string()))
                .ok_or_else(|| de::Error::custom(format!("unknown phase kind {n}"))),
        }
    }
}

/// An orchestrator phase object (device or host clock).
#[derive(Debug, Deserialize)]
struct OrchRaw {
    #[serde(default)]
    submit_idx: u64,
    #[serde(default, deserialize_with = "task_id")]
    task_id: Option<u64>,
    #[serde(alias = "start_host_ns")]
    start_cycles: u64,
    #[serde(alias = "end_host_ns")]
    end_cycles: u64,
}

/// A phase or span object whose start must not be after its end.
trait Span {
    /// `(start, end)` as written.
    fn start_end(&self) -> (u64, u64);
}

impl Span for PhaseRaw {
    fn start_end(&self) -> (u64, u64) {
        (self.start_cycles, self.end_cycles)
    }
}

impl Span for OrchRaw {
    fn start_end(&self) -> (u64, u64) {
        (self.start_cycles, self.end_cycles)
    }
}

/// Why a span of `section` is refused: its start is after its end. A corrupt record, as an
/// `aicore_tasks` row that ends before it starts is, not a span of no time: the tools
/// subtract start from end.
fn backwards<T: Span>(section: &str, span: &T) -> Option<String> {
    let (start, end) = span.start_end();
    let (start_key, end_key) = if section == "host_orchestrator_phases" {
        ("start_host_ns", "end_host_ns")
    } else {
        ("start_cycles", "end_cycles")
    };
    (start > end).then(|| format!("{start_key} {start} is after {end_key} {end}"))
}

/// A `simpler_build_phases` object (ours).
#[derive(Debug, Deserialize)]
struct BuildPhaseRaw {
    phase: String,
    start_cycles: u64,
    end_cycles: u64,
    #[serde(default)]
    inference_ns: Option<u64>,
}

/// The first object of per-thread `lists` with a time `too_late` says is: its thread, its
/// index and that time.
fn first_late<T: Span>(lists: &[Vec<T>], too_late: impl Fn(u64) -> bool) -> Option<(usize, usize, u64)> {
    lists.iter().enumerate().find_map(|(t, list)| {
        list.iter().enumerate().find_map(|(j, o)| {
            let (start, end) = o.start_end();
            (too_late(start) || too_late(end)).then_some((t, j, end))
        })
    })
}

/// `metadata`.
#[derive(Debug, Deserialize)]
struct MetadataRaw {
    clock_freq_hz: f64,
    #[serde(default)]
    core_types: Vec<String>,
    #[serde(default)]
    core_to_thread: Option<Vec<i32>>,
    #[serde(default)]
    orchestrator_source: Option<String>,
    #[serde(default)]
    simpler: Option<SimplerMetaRaw>,
}

/// `metadata.simpler` (ours).
#[derive(Debug, Deserialize)]
struct SimplerMetaRaw {
    clusters: u32,
    scheduler_threads: u32,
}

/// Everything the file holds, before normalisation.
#[derive(Default)]
struct Raw {
    level: Option<(String, u64)>,
    metadata: Option<MetadataRaw>,
    aicore: Vec<AicoreRaw>,
    aicpu: Vec<AicpuRaw>,
    info: Option<Vec<InfoRaw>>,
    sched_phases: Option<Vec<Vec<PhaseRaw>>>,
    aicpu_orch: Option<Vec<Vec<OrchRaw>>>,
    host_orch: Option<Vec<Vec<OrchRaw>>>,
    host_uploads: bool,
    build: Vec<BuildPhaseRaw>,
    /// This runtime's pre-raw layout (`"tasks"` at the top level).
    legacy: bool,
    /// A key of deps.json (`tensors`, `edges`) came before any level key.
    deps_like: bool,
}

/// Keys naming the level, newest first.
const LEVEL_KEYS: [&str; 3] = ["chip_swimlane_level", "l2_swimlane_level", "l2_perf_level"];

fn parse<R: Read>(reader: R) -> Result<Raw, SwimlaneReadError> {
    parse_from(serde_json::Deserializer::from_reader(reader))
}

/// [`parse`] with any of serde_json's readers.
fn parse_from<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
) -> Result<Raw, SwimlaneReadError> {
    let failed: Cell<Option<String>> = Cell::new(None);
    let result = TopLevel { failed: &failed }.deserialize(&mut de).and_then(|raw| {
        de.end()?;
        Ok(raw)
    });
    result.map_err(|e| SwimlaneReadError::json(Path::new("<input>"), FILE_NAME, e, failed.take()))
}

struct TopLevel<'a> {
    failed: &'a Cell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for TopLevel<'_> {
    type Value = Raw;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> de::Visitor<'de> for TopLevel<'_> {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a swimlane records object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut raw = Raw::default();
        let failed = self.failed;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                k if LEVEL_KEYS.contains(&k) => {
                    let n: u64 = map.next_value()?;
                    match &raw.level {
                        Some((other, m)) if *m != n => {
                            return Err(de::Error::custom(format!(
                                "{k} is {n} but {other} is {m}: the file names two levels"
                            )))
                        }
                        _ => raw.level = Some((k.to_string(), n)),
                    }
                }
                "metadata" => {
                    failed.set(Some("metadata".into()));
                    raw.metadata = Some(map.next_value()?);
                    failed.set(None);
                }
                "aicore_tasks" => {
                    raw.aicore = map.next_value_seed(Rows::new("aicore_tasks", failed))?;
                }
                "aicpu_tasks" => {
                    raw.aicpu = map.next_value_seed(Rows::new("aicpu_tasks", failed))?;
                }
                "simpler_task_info" => {
                    raw.info = Some(map.next_value_seed(Rows::new("simpler_task_info", failed))?);
                }
                "aicpu_scheduler_phases" => {
                    raw.sched_phases =
                        Some(map.next_value_seed(Lists::new("aicpu_scheduler_phases", failed))?);
                }
                "aicpu_orchestrator_phases" => {
                    raw.aicpu_orch =
                        Some(map.next_value_seed(Lists::new("aicpu_orchestrator_phases", failed))?);
                }
                "host_orchestrator_phases" => {
                    raw.host_orch =
                        Some(map.next_value_seed(Lists::new("host_orchestrator_phases", failed))?);
                }
                "simpler_build_phases" => {
                    failed.set(Some("simpler_build_phases".into()));
                    raw.build = map.next_value()?;
                    failed.set(None);
                }
                "host_device_uploads" => {
                    raw.host_uploads = true;
                    map.next_value::<IgnoredAny>()?;
                }
                "tensors" | "edges" if raw.level.is_none() => {
                    raw.deps_like = true;
                    map.next_value::<IgnoredAny>()?;
                }
                "tasks" | "dummy_tasks" | "orchestrator" if raw.level.is_none() => {
                    raw.legacy = true;
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(raw)
    }
}

/// An array of rows; a row that does not parse names itself (`aicore_tasks[3]`).
struct Rows<'a, T> {
    section: &'static str,
    failed: &'a Cell<Option<String>>,
    row: std::marker::PhantomData<T>,
}

impl<'a, T> Rows<'a, T> {
    fn new(section: &'static str, failed: &'a Cell<Option<String>>) -> Self {
        Rows {
            section,
            failed,
            row: std::marker::PhantomData,
        }
    }
}

/// How a row type is read inside [`Rows`].
trait RowDe: Sized {
    fn next<'de, A: SeqAccess<'de>>(seq: &mut A) -> Result<Option<Self>, A::Error>;
}

impl<T: ArrayRow> RowDe for T {
    fn next<'de, A: SeqAccess<'de>>(seq: &mut A) -> Result<Option<T>, A::Error> {
        Ok(seq.next_element::<ArrayRowDe<T>>()?.map(|r| r.0))
    }
}

impl<'de, T: RowDe> DeserializeSeed<'de> for Rows<'_, T> {
    type Value = Vec<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<T>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, T: RowDe> de::Visitor<'de> for Rows<'_, T> {
    type Value = Vec<T>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an array of {} rows", self.section)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut rows = Vec::new();
        loop {
            match T::next(&mut seq) {
                Ok(Some(r)) => rows.push(r),
                Ok(None) => return Ok(rows),
                Err(e) => {
                    self.failed.set(Some(format!("{}[{}]", self.section, rows.len())));
                    return Err(e);
                }
            }
        }
    }
}

/// A list of per-thread lists of objects (`aicpu_scheduler_phases[1][4]`).
struct Lists<'a, T> {
    section: &'static str,
    failed: &'a Cell<Option<String>>,
    row: std::marker::PhantomData<T>,
}

impl<'a, T> Lists<'a, T> {
    fn new(section: &'static str, failed: &'a Cell<Option<String>>) -> Self {
        Lists {
            section,
            failed,
            row: std::marker::PhantomData,
        }
    }
}

impl<'de, T: Deserialize<'de> + Span> DeserializeSeed<'de> for Lists<'_, T> {
    type Value = Vec<Vec<T>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Vec<T>>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, T: Deserialize<'de> + Span> de::Visitor<'de> for Lists<'_, T> {
    type Value = Vec<Vec<T>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an array of per-thread arrays of {} objects", self.section)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Vec<T>>, A::Error> {
        let mut lists: Vec<Vec<T>> = Vec::new();
        let (section, failed) = (self.section, self.failed);
        loop {
            let thread = lists.len();
            let inner = InnerList::<T> {
                section,
                thread,
                failed,
                row: std::marker::PhantomData,
            };
            match seq.next_element_seed(inner) {
                Ok(Some(l)) => lists.push(l),
                Ok(None) => return Ok(lists),
                Err(e) => {
                    // An inner row that failed has already named itself.
                    let named = failed.take();
                    failed.set(named.or_else(|| Some(format!("{section}[{thread}]"))));
                    return Err(e);
                }
            }
        }
    }
}

struct InnerList<'a, T> {
    section: &'static str,
    thread: usize,
    failed: &'a Cell<Option<String>>,
    row: std::marker::PhantomData<T>,
}

impl<'de, T: Deserialize<'de> + Span> DeserializeSeed<'de> for InnerList<'_, T> {
    type Value = Vec<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<T>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, T: Deserialize<'de> + Span> de::Visitor<'de> for InnerList<'_, T> {
    type Value = Vec<T>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an array of {} objects", self.section)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut rows = Vec::new();
        loop {
            let row = seq.next_element::<T>().and_then(|r| {
                match r.as_ref().and_then(|r| backwards(self.section, r)) {
                    Some(why) => Err(de::Error::custom(why)),
                    None => Ok(r),
                }
            });
            match row {
                Ok(Some(r)) => rows.push(r),
                Ok(None) => return Ok(rows),
                Err(e) => {
                    self.failed
                        .set(Some(format!("{}[{}][{}]", self.section, self.thread, rows.len())));
                    return Err(e);
                }
            }
        }
    }
}

// === normalisation ===

/// Refuses aicore row `i` (with its aicpu row `aicpu`, `(index, row)`) when its times are in an
/// order no run gives: the core received the task before the clock's zero or before the
/// scheduler dispatched it, or the kernel ended after the scheduler saw it finish. Each is a
/// corrupt row, not an overhead: the statistics would print a negative head overhead, an Exec%
/// above 100 and a negative propagation. `recorded` says which times the layout recorded (a 0
/// is "not recorded" in the original's; such a time is not compared).
fn check_order(
    i: usize,
    r: &AicoreRaw,
    aicpu: Option<(usize, AicpuRaw)>,
    recorded: impl Fn(u64) -> bool,
) -> Result<(), String> {
    if !recorded(r.start) {
        return Ok(());
    }
    if r.r2s > r.start {
        return Err(format!(
            "aicore_tasks[{i}]: receive_to_start {} is more than start {}: the core would have received \
             the task before the clock's zero",
            r.r2s, r.start
        ));
    }
    let Some((j, a)) = aicpu else {
        return Ok(());
    };
    let receive = r.start - r.r2s;
    if recorded(a.dispatch) && receive < a.dispatch {
        let what = if r.r2s == 0 {
            format!("start {}", r.start)
        } else {
            format!(
                "receive {receive} (start {} - receive_to_start {})",
                r.start, r.r2s
            )
        };
        return Err(format!(
            "aicore_tasks[{i}]: {what} is before its dispatch {} (aicpu_tasks[{j}]): a core receives a \
             task only after the scheduler dispatches it",
            a.dispatch
        ));
    }
    if recorded(a.finish) && r.end > a.finish {
        return Err(format!(
            "aicore_tasks[{i}]: end {} is after its finish {} (aicpu_tasks[{j}]): the scheduler sees a \
             kernel finish only after it ends",
            r.end, a.finish
        ));
    }
    Ok(())
}

/// The latest time a row may have, ns after the base: 2^53 ns, about 104 days. Sums of
/// thousands of such times still fit in a u64, and no run lasts that long.
const MAX_SPAN_NS: u64 = 1 << 53;

/// The fastest `metadata.clock_freq_hz` read: 100 GHz, a hundred times a chip's. Past it a
/// cycle is less than a hundredth of a nanosecond, and at 2^64 − 1 Hz every time read as 0.
const MAX_CLOCK_HZ: u64 = 100_000_000_000;

/// At most this many rows are named in a note about rows left out; the count says the rest.
const NAMED_ROWS: usize = 3;

/// `aicore_tasks[3], aicore_tasks[7], ...`: the first [`NAMED_ROWS`] of `rows`.
fn name_rows(section: &str, rows: &[usize]) -> String {
    let mut named: Vec<String> = rows
        .iter()
        .take(NAMED_ROWS)
        .map(|i| format!("{section}[{i}]"))
        .collect();
    if rows.len() > NAMED_ROWS {
        named.push("...".into());
    }
    named.join(", ")
}

/// Cycles → nanoseconds since the base, as the original's reader maps them to µs.
struct TimeBase {
    base: u64,
    freq: u64,
}

impl TimeBase {
    fn ns(&self, cycles: u64) -> u64 {
        if cycles == 0 {
            return 0;
        }
        let delta = u128::from(cycles.saturating_sub(self.base));
        u64::try_from(delta * 1_000_000_000 / u128::from(self.freq)).unwrap_or(u64::MAX)
    }
}

fn normalise<S: SwimlaneSink>(raw: Raw, sink: &mut S) -> Result<Header, String> {
    if raw.deps_like && raw.level.is_none() {
        return Err(
            "this is a deps.json (tasks, tensors, edges), not swimlane timing records: give the run's \
                    l2_swimlane_records.json (or chip_swimlane_records.json), or its folder"
                .into(),
        );
    }
    if raw.legacy {
        return Err("this is simpler's earlier swimlane layout (\"tasks\", \"dummy_tasks\", \"orchestrator\"), \
                    which this version no longer reads: re-run with --enable-l2-swimlane to record the raw layout"
            .into());
    }
    let (level_key, level_number) = raw
        .level
        .ok_or("missing field `chip_swimlane_level` (or `l2_swimlane_level`)")?;
    let level = Level::from_number(level_number)
        .ok_or_else(|| format!("{level_key} {level_number} is not a recorded level (1 to 4)"))?;
    let meta = raw.metadata.ok_or("missing field `metadata`")?;
    if !(meta.clock_freq_hz.is_finite() && meta.clock_freq_hz >= 1.0) {
        return Err(format!(
            "metadata.clock_freq_hz must be at least 1 cycle per second, not {}",
            meta.clock_freq_hz
        ));
    }
    if meta.clock_freq_hz.fract() != 0.0 || meta.clock_freq_hz > u64::MAX as f64 {
        return Err(format!(
            "metadata.clock_freq_hz must be a whole number of cycles per second, not {} \
             (every time is converted with it)",
            meta.clock_freq_hz
        ));
    }
    if meta.clock_freq_hz > MAX_CLOCK_HZ as f64 {
        return Err(format!(
            "metadata.clock_freq_hz {} is more than {MAX_CLOCK_HZ} cycles per second (100 GHz): \
             no device clock runs that fast, and every time would read as 0 ns",
            meta.clock_freq_hz
        ));
    }
    let freq = meta.clock_freq_hz as u64;
    let mut notes = Vec::new();

    let mut cores = Vec::with_capacity(meta.core_types.len());
    for (i, t) in meta.core_types.iter().enumerate() {
        let core_type = match t.to_ascii_lowercase().as_str() {
            "aic" => CoreType::Aic,
            "aiv" => CoreType::Aiv,
            other => {
                return Err(format!(
                    "metadata.core_types[{i}]: unknown core type {other:?} (aic or aiv)"
                ))
            }
        };
        cores.push(Core {
            core_id: i as u32,
            core_type,
            name: core_type.core_name(i as u32),
        });
    }
    // A scheduler thread serves at least one core, so its id is below the number of cores
    // mapped: the Worker View draws one `AICPU_<n>` track for each id up to the largest, and
    // one entry of 2^31 wrote tracks until the disk was full.
    let mapped = meta.core_to_thread.as_deref().unwrap_or_default();
    if let Some((i, t)) = mapped
        .iter()
        .enumerate()
        .find(|&(_, &t)| t >= mapped.len() as i32)
    {
        return Err(format!(
            "metadata.core_to_thread[{i}]: thread {t} is not below the {} cores it maps (a scheduler thread serves at least one core)",
            mapped.len()
        ));
    }
    // Likewise `metadata.simpler.scheduler_threads`: the converter keeps a list per thread and
    // draws a track for each, and a count of 2^31 aborted it on a 51 GB allocation.
    if let Some(s) = &meta.simpler {
        let n = s.scheduler_threads;
        if n > MAX_CORES {
            return Err(format!(
                "metadata.simpler.scheduler_threads: {n} is past the {MAX_CORES} threads a trace can show"
            ));
        }
        if n as usize > cores.len() {
            return Err(format!(
                "metadata.simpler.scheduler_threads: {n} is more than the {} cores of metadata.core_types (a scheduler thread serves at least one core)",
                cores.len()
            ));
        }
    }
    let core_type_of = |core: u32| cores.get(core as usize).map_or(CoreType::Aiv, |c| c.core_type);
    if let Some(c) = raw.aicore.iter().find(|r| r.core_id as usize >= cores.len()) {
        notes.push(format!(
            "core {} is not in metadata.core_types ({} cores): its type is taken as aiv, as the original does",
            c.core_id,
            cores.len()
        ));
    }

    let host_orch = raw.host_orch.is_some();
    if host_orch && raw.aicpu_orch.is_some() {
        return Err("the file holds both aicpu_orchestrator_phases and host_orchestrator_phases".into());
    }
    let source = match (meta.orchestrator_source.as_deref(), host_orch) {
        (Some("host"), _) | (_, true) => OrchestratorSource::Host,
        _ => OrchestratorSource::Aicpu,
    };

    // The base: the smallest nonzero device timestamp.
    let mut base = u64::MAX;
    let mut consider = |c: u64| {
        if c > 0 && c < base {
            base = c;
        }
    };
    for r in &raw.aicore {
        consider(r.start.saturating_sub(r.r2s));
        consider(r.end);
    }
    let zero_time = sink.zero_is_a_time() && raw.aicore.iter().any(|r| r.start == 0 || r.end == 0);
    for r in &raw.aicpu {
        consider(r.dispatch);
        consider(r.finish);
    }
    for b in &raw.build {
        consider(b.start_cycles);
        consider(b.end_cycles);
    }
    for p in raw.sched_phases.iter().flatten().flatten() {
        consider(p.start_cycles);
        consider(p.end_cycles);
    }
    if !host_orch {
        for o in raw.aicpu_orch.iter().flatten().flatten() {
            consider(o.start_cycles);
            consider(o.end_cycles);
        }
    }
    // This runtime's files are already nanoseconds since the run started: kept as they are.
    let base = if meta.simpler.is_some() || base == u64::MAX || zero_time {
        0
    } else {
        base
    };
    let time = TimeBase { base, freq };
    // Every later sum of times (busy time, a path's length) stays far from u64's end.
    let too_late = |c: u64| time.ns(c) > MAX_SPAN_NS;
    let late = |row: String, c: u64| {
        format!(
            "{row}: {c} cycles at {freq} Hz is more than 104 days after the earliest timestamp \
             ({base}): not a run's timing"
        )
    };
    if let Some((i, r)) = (raw.aicore.iter().enumerate()).find(|(_, r)| too_late(r.end) || too_late(r.start))
    {
        return Err(late(format!("aicore_tasks[{i}]"), r.end.max(r.start)));
    }
    if let Some((i, r)) =
        (raw.aicpu.iter().enumerate()).find(|(_, r)| too_late(r.dispatch) || too_late(r.finish))
    {
        return Err(late(format!("aicpu_tasks[{i}]"), r.dispatch.max(r.finish)));
    }
    // Phases and spans too: the tools sum their durations (sched-overhead's loop time).
    let late_phase = raw.sched_phases.as_deref().and_then(|l| first_late(l, too_late));
    if let Some((t, j, c)) = late_phase {
        return Err(late(format!("aicpu_scheduler_phases[{t}][{j}]"), c));
    }
    let late_submit = raw.aicpu_orch.as_deref().and_then(|l| first_late(l, too_late));
    if let Some((t, j, c)) = late_submit {
        return Err(late(format!("aicpu_orchestrator_phases[{t}][{j}]"), c));
    }
    if let Some((i, b)) = (raw.build.iter().enumerate())
        .find(|(_, b)| b.start_cycles > b.end_cycles || too_late(b.start_cycles) || too_late(b.end_cycles))
    {
        return Err(if b.start_cycles > b.end_cycles {
            format!(
                "simpler_build_phases[{i}]: start_cycles {} is after end_cycles {}",
                b.start_cycles, b.end_cycles
            )
        } else {
            late(format!("simpler_build_phases[{i}]"), b.end_cycles)
        });
    }

    // Join aicpu rows onto aicore rows by (core, reg).
    let joined = join::join(
        &raw.aicpu
            .iter()
            .map(|r| join::key(r.core_id, r.reg))
            .collect::<Vec<_>>(),
        &raw.aicore
            .iter()
            .map(|r| join::key(r.core_id, r.reg))
            .collect::<Vec<_>>(),
        level.has_dispatch(),
    );
    if joined.duplicate_keys > 0 {
        notes.push(format!(
            "{} aicpu_tasks rows repeat a (core_id, reg_task_id) key: the last one is used",
            joined.duplicate_keys
        ));
    }
    let info = match raw.info {
        Some(info) if info.len() == raw.aicore.len() => Some(info),
        Some(info) => {
            notes.push(format!(
                "simpler_task_info has {} rows for {} aicore_tasks rows: ignored",
                info.len(),
                raw.aicore.len()
            ));
            None
        }
        None => None,
    };
    // Found by a review: a row naming a scheduler thread the run did not have lost its flows
    // in the trace without a word (the converter keeps one list per thread).
    if let (Some(info), Some(simpler)) = (&info, &meta.simpler) {
        let threads = simpler.scheduler_threads;
        if let Some((i, x)) = info.iter().enumerate().find(|(_, x)| x.sched_thread >= threads) {
            return Err(format!(
                "simpler_task_info[{i}]: sched_thread {} is not one of the run's {threads} scheduler thread(s) \
                 (metadata.simpler.scheduler_threads)",
                x.sched_thread
            ));
        }
    }
    let core_to_thread = meta.core_to_thread.clone();
    let thread_of_core = |core: u32| {
        core_to_thread
            .as_ref()
            .and_then(|m| m.get(core as usize).copied())
            .and_then(|t| u32::try_from(t).ok())
    };
    // In the original's layout a 0 is "not recorded" (its reader maps it to 0 µs); in ours
    // every time is one (the writer never writes a 0, and a 0 it did write is a time).
    let ours = meta.simpler.is_some();
    let recorded = |c: u64| ours || c != 0;
    // A row without its start: its execution cannot be placed or timed. A tool that takes
    // tick 0 as a time (critical-path) keeps it there, as the original `critical_path` does.
    let keep_unstarted = sink.zero_is_a_time();
    let mut unstarted: Vec<usize> = Vec::new();
    let mut unstamped: Vec<usize> = Vec::new();
    let mut unmatched_aicore = 0usize;
    for (i, r) in raw.aicore.iter().enumerate() {
        let mut aicpu = match joined.matched[i] {
            join::Joined::NONE => None,
            j => Some((j as usize, raw.aicpu[j as usize])),
        };
        check_order(i, r, aicpu, recorded)?;
        if !recorded(r.start) && !keep_unstarted {
            unstarted.push(i);
            continue;
        }
        if aicpu.is_none() && level.has_dispatch() {
            unmatched_aicore += 1;
        }
        if let Some((j, a)) = aicpu {
            if !recorded(a.dispatch) || !recorded(a.finish) {
                unstamped.push(j);
                aicpu = None;
            }
        }
        let aicpu = aicpu.map(|(_, a)| a);
        let info = info.as_ref().map(|v| v[i]);
        sink.task(TaskRow {
            task_id: r.token,
            reg_task_id: r.reg,
            kernel_ids: info.map_or([NO_KERNEL; 3], |x| x.kernel_ids),
            func_id: info.map_or(NO_KERNEL, |x| x.func_id),
            block_idx: info.map_or(0, |x| x.block_idx),
            block_num: info.map_or(0, |x| x.block_num),
            core_id: r.core_id,
            core_type: core_type_of(r.core_id),
            sched_thread: info.map(|x| x.sched_thread).or_else(|| thread_of_core(r.core_id)),
            dispatch_ns: aicpu.map(|a| time.ns(a.dispatch)),
            receive_ns: time.ns(r.start.saturating_sub(r.r2s)),
            start_ns: time.ns(r.start),
            end_ns: time.ns(r.end),
            finish_ns: aicpu.map(|a| time.ns(a.finish)),
        });
    }
    if !unstarted.is_empty() {
        notes.push(format!(
            "{} aicore_tasks rows have a start of 0 (not recorded, in the original's layout) and are left out \
             of the trace and the statistics ({})",
            unstarted.len(),
            name_rows("aicore_tasks", &unstarted)
        ));
    }
    if !unstamped.is_empty() {
        notes.push(format!(
            "{} aicpu_tasks rows have a dispatch or finish of 0 (not recorded, in the original's layout): \
             their rows are kept without scheduler stamps ({})",
            unstamped.len(),
            name_rows("aicpu_tasks", &unstamped)
        ));
    }
    if !level.has_dispatch() {
        notes.push(format!(
            "level {}: no dispatch or finish times (recorded from level 2)",
            level.number()
        ));
    } else {
        if !joined.unmatched.is_empty() {
            let mut per_core: HashMap<u32, usize> = HashMap::default();
            for key in &joined.unmatched {
                *per_core.entry((key >> 32) as u32).or_default() += 1;
            }
            let mut top: Vec<(u32, usize)> = per_core.into_iter().collect();
            top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let top: Vec<String> = top
                .iter()
                .take(3)
                .map(|(c, n)| format!("core {c}: {n}"))
                .collect();
            notes.push(format!(
                "{} aicpu_tasks rows match no aicore_tasks row and were dropped ({})",
                joined.unmatched.len(),
                top.join(", ")
            ));
        }
        // A repeated aicore key takes no aicpu row (the original's rule): said as what it is.
        let repeated = joined.duplicate_core_keys;
        if repeated > 0 {
            notes.push(format!(
                "{repeated} aicore_tasks rows repeat a (core_id, reg_task_id) key: only the first of each takes its aicpu_tasks row, as the original's reader does"
            ));
        }
        let unmatched_aicore = unmatched_aicore.saturating_sub(repeated);
        if unmatched_aicore > 0 {
            notes.push(format!(
                "{unmatched_aicore} aicore_tasks rows have no aicpu_tasks row: their dispatch and finish are unknown"
            ));
        }
    }
    if info.is_none() && !raw.aicore.is_empty() {
        notes.push(
            "the records carry no kernel ids or blocks (the original's layout): they come from deps.json"
                .into(),
        );
    }

    // Scheduler phases; dummy completions are the `dummy_task` phases.
    let phases = raw.sched_phases.unwrap_or_default();
    if level.has_sched_phases() && phases.is_empty() {
        notes.push(format!("level {} but no aicpu_scheduler_phases", level.number()));
    }
    let mut dummies = Vec::new();
    let mut out_phases = Vec::new();
    for (thread, list) in phases.into_iter().enumerate() {
        for p in list {
            let sched_thread = thread as u32;
            if p.kind.0 == "dummy_task" {
                if let Some(task_id) = p.task_id {
                    dummies.push(DummyRow {
                        task_id,
                        sched_thread,
                        finish_ns: time.ns(p.end_cycles),
                    });
                }
            }
            out_phases.push(SchedPhase {
                sched_thread,
                kind: p.kind.0,
                start_ns: time.ns(p.start_cycles),
                end_ns: time.ns(p.end_cycles),
                loop_iter: p.loop_iter,
                tasks_processed: p.tasks_processed,
                pop_hit: p.pop_hit,
                pop_miss: p.pop_miss,
                task_id: p.task_id,
                shared_at_start: p.shared_at_start,
                shared_at_end: p.shared_at_end,
            });
        }
    }
    for d in dummies {
        sink.dummy(d);
    }

    // Orchestrator phases: the device clock, or the host clock from its own origin.
    let (orch_lists, host_base) = match (raw.aicpu_orch, raw.host_orch) {
        (Some(l), _) => (l, None),
        (None, Some(l)) => {
            let origin = l
                .iter()
                .flatten()
                .map(|o| o.start_cycles)
                .filter(|&t| t > 0)
                .min()
                .unwrap_or(0);
            notes.push(
                "host orchestration: submit spans are on the host clock, shown from their own origin \
                 (not aligned with device time)"
                    .into(),
            );
            (l, Some(origin))
        }
        (None, None) => (Vec::new(), None),
    };
    for (thread, list) in orch_lists.into_iter().enumerate() {
        for (j, o) in list.into_iter().enumerate() {
            let (start, end) = match host_base {
                Some(origin) => (
                    o.start_cycles.saturating_sub(origin),
                    o.end_cycles.saturating_sub(origin),
                ),
                None => (time.ns(o.start_cycles), time.ns(o.end_cycles)),
            };
            if host_base.is_some() && end > MAX_SPAN_NS {
                return Err(format!(
                    "host_orchestrator_phases[{thread}][{j}]: end_host_ns {} is more than 104 days after \
                     the earliest submit ({}): not a run's timing",
                    o.end_cycles,
                    o.end_cycles - end
                ));
            }
            sink.orch(OrchRow {
                task_id: o.task_id.unwrap_or(u64::MAX),
                submit_idx: o.submit_idx,
                thread: thread as u32,
                submit_start_ns: start,
                submit_end_ns: end,
            });
        }
    }
    if raw.host_uploads {
        notes.push("host_device_uploads are not shown".into());
    }
    for p in out_phases {
        sink.sched_phase(p);
    }
    for b in raw.build {
        sink.build_phase(BuildPhase {
            phase: b.phase,
            start_ns: time.ns(b.start_cycles),
            end_ns: time.ns(b.end_cycles),
            inference_ns: b.inference_ns,
        });
    }

    let (clusters, scheduler_threads) = match meta.simpler {
        Some(s) => (Some(s.clusters), Some(s.scheduler_threads)),
        None => (None, None),
    };
    Ok(Header {
        level,
        clock_freq_hz: freq,
        base_cycles: time.base,
        cores,
        core_to_thread: meta.core_to_thread,
        clusters,
        scheduler_threads,
        orchestrator_source: source,
        has_task_info: info.is_some(),
        notes,
    })
}
