//! `l2_swimlane_records.json`: per-task timing of a run (`../shared/spec/dep-gen.md` §3;
//! field-by-field reference in `docs/swimlane.md`).
//!
//! # Layout
//!
//! One JSON object. The run-level [`Header`] fields come first, then three arrays, always in
//! this order when written by [`SwimlaneWriter`]:
//!
//! - `tasks`: one [`TaskRow`] per `(task, block, subslot)` that ran on a virtual core;
//! - `dummy_tasks`: one [`DummyRow`] per dummy task (completed by a scheduler, no core);
//! - `orchestrator`: one [`OrchRow`] per submit (the orchestrator's submit span).
//!
//! Timestamps are JSON integers: nanoseconds of one monotonic clock since the run started
//! (`"clock": "monotonic_ns"`). Task ids are decimal strings (JavaScript-safe, as in deps.json);
//! the reader also accepts plain numbers. The writer puts every row on its own line, so a
//! reader error's line number points at the row.
//!
//! # Reading
//!
//! [`read_swimlane`] streams a file through a [`SwimlaneSink`]: rows are handed over one by one
//! and the [`Header`] is returned at the end, so a file with millions of rows never becomes a
//! JSON tree. The sections may appear in any order; unknown keys (top level or in rows) are
//! skipped, so fields can be added without breaking readers. Errors name the file, the JSON
//! line and column, the row (`tasks[3]`) and, for a row without a field, the field
//! ([`SwimlaneReadError`]).
//!
//! # Writing
//!
//! [`SwimlaneWriter`] streams: [`SwimlaneWriter::begin`] writes the header, then rows are
//! appended one at a time. A collector that receives kinds interleaved must hold back (or spill)
//! the dummy and orchestrator rows until the task rows are written: going back to an earlier
//! section is an `InvalidInput` error.

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess};
use serde::{Deserialize, Deserializer, Serialize};

use crate::deps::u64_string;

/// File name of the records, inside the run's output prefix.
pub const FILE_NAME: &str = "l2_swimlane_records.json";

/// The schema version this module reads and writes.
pub const SCHEMA_VERSION: u32 = 1;

/// The only clock the schema defines: nanoseconds of a monotonic clock since the run started.
pub const CLOCK_MONOTONIC_NS: &str = "monotonic_ns";

/// Kernel id of an inactive subslot in [`TaskRow::kernel_ids`].
pub const NO_KERNEL: i32 = -1;

// === schema ===

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

    /// The track name of core `core_id` of this type: `AIC_<id>` or `AIV_<id>`.
    pub fn core_name(self, core_id: u32) -> String {
        match self {
            CoreType::Aic => format!("AIC_{core_id}"),
            CoreType::Aiv => format!("AIV_{core_id}"),
        }
    }
}

/// One entry of the header's `cores` list: a virtual core of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Core {
    /// Global core index (the `core_id` task rows refer to).
    pub core_id: u32,
    /// AIC or AIV.
    pub core_type: CoreType,
    /// Display name, `AIC_<core_id>` or `AIV_<core_id>`.
    pub name: String,
}

/// The run-level fields at the top of the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Schema version; [`SCHEMA_VERSION`].
    pub version: u32,
    /// Clock of every `*_ns` field; [`CLOCK_MONOTONIC_NS`].
    pub clock: String,
    /// Number of clusters (1 AIC + 2 AIV each).
    pub clusters: u32,
    /// Every virtual core of the run, AIC cores first.
    pub cores: Vec<Core>,
    /// Number of scheduler threads (`sched_thread` is in `0..scheduler_threads`).
    pub scheduler_threads: u32,
}

impl Header {
    /// The header of a run with `clusters` clusters and `scheduler_threads` scheduler threads,
    /// with the platform's core numbering: AIC cores `0..clusters`, then cluster `c`'s two AIV
    /// cores `clusters + 2c` and `clusters + 2c + 1`.
    pub fn for_clusters(clusters: u32, scheduler_threads: u32) -> Header {
        let aic = (0..clusters).map(|id| (id, CoreType::Aic));
        let aiv = (clusters..clusters.saturating_mul(3)).map(|id| (id, CoreType::Aiv));
        let cores = aic
            .chain(aiv)
            .map(|(core_id, core_type)| Core {
                core_id,
                core_type,
                name: core_type.core_name(core_id),
            })
            .collect();
        Header {
            version: SCHEMA_VERSION,
            clock: CLOCK_MONOTONIC_NS.to_string(),
            clusters,
            cores,
            scheduler_threads,
        }
    }
}

/// One entry of `tasks[]`: one block of one subslot of a task, as it ran on one core.
///
/// A plain task has one row; an SPMD task (`block_num > 1`) has one row per block; a MIX task
/// (several active subslots) has one row per active subslot and block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRow {
    /// Raw task id, `(ring << 32) | local`, as in deps.json.
    #[serde(with = "u64_string")]
    pub task_id: u64,
    /// The task's kernel per subslot `[aic, aiv0, aiv1]`; [`NO_KERNEL`] when inactive.
    pub kernel_ids: [i32; 3],
    /// The kernel this row ran (one of the active `kernel_ids`).
    pub func_id: i32,
    /// Block index of this row, `0..block_num`.
    pub block_idx: u32,
    /// SPMD logical block count of the task; 1 for a normal task.
    pub block_num: u32,
    /// The core the block ran on (see [`Header::cores`]).
    pub core_id: u32,
    /// Type of that core.
    pub core_type: CoreType,
    /// The scheduler thread that dispatched the block.
    pub sched_thread: u32,
    /// When the scheduler handed the block to the core.
    pub dispatch_ns: u64,
    /// When the kernel started on the core.
    pub start_ns: u64,
    /// When the kernel returned.
    pub end_ns: u64,
    /// When the scheduler saw the block complete.
    pub finish_ns: u64,
}

/// One entry of `dummy_tasks[]`: a task without kernels, completed by a scheduler thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DummyRow {
    /// Raw task id.
    #[serde(with = "u64_string")]
    pub task_id: u64,
    /// The scheduler thread that completed it.
    pub sched_thread: u32,
    /// When it completed.
    pub finish_ns: u64,
}

/// One entry of `orchestrator[]`: the orchestrator's submit call for one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrchRow {
    /// Raw task id given to the submitted task.
    #[serde(with = "u64_string")]
    pub task_id: u64,
    /// When the submit call began.
    pub submit_start_ns: u64,
    /// When the submit call returned.
    pub submit_end_ns: u64,
}

/// A whole records file in memory; see [`read_swimlane_file`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwimlaneFile {
    /// The run-level fields.
    pub header: Header,
    /// `tasks[]`.
    pub tasks: Vec<TaskRow>,
    /// `dummy_tasks[]`.
    pub dummy_tasks: Vec<DummyRow>,
    /// `orchestrator[]`.
    pub orchestrator: Vec<OrchRow>,
}

// === sections ===

/// The three arrays, in the order they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    Tasks,
    Dummies,
    Orchestrator,
}

impl Section {
    const ALL: [Section; 3] = [Section::Tasks, Section::Dummies, Section::Orchestrator];

    fn key(self) -> &'static str {
        match self {
            Section::Tasks => "tasks",
            Section::Dummies => "dummy_tasks",
            Section::Orchestrator => "orchestrator",
        }
    }

    fn next(self) -> Option<Section> {
        match self {
            Section::Tasks => Some(Section::Dummies),
            Section::Dummies => Some(Section::Orchestrator),
            Section::Orchestrator => None,
        }
    }
}

// === streaming writer ===

/// Writes a records file row by row: the header, then `tasks`, `dummy_tasks`, `orchestrator`.
///
/// Every row goes on its own line. Rows must come in section order; adding a task row after a
/// dummy row (or a dummy row after an orchestrator row) is an `InvalidInput` error and writes
/// nothing. Empty sections are written as `[]`. Call [`SwimlaneWriter::finish`] to close the
/// object; the file is incomplete until then. Wrap files in a `BufWriter`.
pub struct SwimlaneWriter<W: Write> {
    out: W,
    section: Section,
    first_in_section: bool,
}

impl<W: Write> SwimlaneWriter<W> {
    /// Writes the header fields and opens `tasks`.
    pub fn begin(mut out: W, header: &Header) -> io::Result<Self> {
        write!(
            out,
            "{{\"version\":{},\"clock\":{},\"clusters\":{},\"cores\":[",
            header.version,
            serde_json::to_string(&header.clock).map_err(io::Error::from)?,
            header.clusters
        )?;
        for (i, core) in header.cores.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            serde_json::to_writer(&mut out, core).map_err(io::Error::from)?;
        }
        write!(
            out,
            "],\"scheduler_threads\":{},\n\"tasks\":[",
            header.scheduler_threads
        )?;
        Ok(Self {
            out,
            section: Section::Tasks,
            first_in_section: true,
        })
    }

    /// Appends one `tasks[]` row.
    pub fn task(&mut self, row: &TaskRow) -> io::Result<()> {
        self.row(Section::Tasks, row)
    }

    /// Appends one `dummy_tasks[]` row (closes `tasks`).
    pub fn dummy(&mut self, row: &DummyRow) -> io::Result<()> {
        self.row(Section::Dummies, row)
    }

    /// Appends one `orchestrator[]` row (closes `tasks` and `dummy_tasks`).
    pub fn orch(&mut self, row: &OrchRow) -> io::Result<()> {
        self.row(Section::Orchestrator, row)
    }

    /// Closes every remaining section and the object, flushes, and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.advance_to(Section::Orchestrator)?;
        self.close_section()?;
        self.out.write_all(b"}\n")?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn row<T: Serialize>(&mut self, section: Section, row: &T) -> io::Result<()> {
        self.advance_to(section)?;
        self.out
            .write_all(if self.first_in_section { b"\n" } else { b",\n" })?;
        self.first_in_section = false;
        serde_json::to_writer(&mut self.out, row).map_err(io::Error::from)
    }

    fn close_section(&mut self) -> io::Result<()> {
        self.out
            .write_all(if self.first_in_section { b"]" } else { b"\n]" })
    }

    fn advance_to(&mut self, section: Section) -> io::Result<()> {
        if section < self.section {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{FILE_NAME} sections are written in order tasks, dummy_tasks, orchestrator: \
                     cannot add to \"{}\" after \"{}\"",
                    section.key(),
                    self.section.key()
                ),
            ));
        }
        while self.section < section {
            let next = self.section.next().expect("a later section exists");
            self.close_section()?;
            write!(self.out, ",\n\"{}\":[", next.key())?;
            self.section = next;
            self.first_in_section = true;
        }
        Ok(())
    }
}

// === streaming reader ===

/// Receives the rows of a records file as [`read_swimlane`] parses them, in file order.
pub trait SwimlaneSink {
    /// Called once per `tasks[]` row.
    fn task(&mut self, row: TaskRow);
    /// Called once per `dummy_tasks[]` row.
    fn dummy(&mut self, row: DummyRow);
    /// Called once per `orchestrator[]` row.
    fn orch(&mut self, row: OrchRow);
}

/// Collects every row; the sink behind [`read_swimlane_file`].
#[derive(Default)]
struct CollectRows {
    tasks: Vec<TaskRow>,
    dummy_tasks: Vec<DummyRow>,
    orchestrator: Vec<OrchRow>,
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
}

/// Reading buffer size: large enough that the parser rarely waits on a read call.
const READ_BUFFER_BYTES: usize = 1 << 20;

/// Streams the records file at `path` into `sink` and returns its header.
///
/// Each row is parsed on its own and handed over before the next is read. Every header field
/// and all three sections must be present; `version` must be [`SCHEMA_VERSION`] and `clock`
/// [`CLOCK_MONOTONIC_NS`].
pub fn read_swimlane<S: SwimlaneSink>(path: &Path, sink: &mut S) -> Result<Header, SwimlaneReadError> {
    let file = File::open(path).map_err(|e| SwimlaneReadError::io(path, FILE_NAME, e))?;
    read_swimlane_from(BufReader::with_capacity(READ_BUFFER_BYTES, file), sink).map_err(|e| e.with_path(path))
}

/// Streams a records file from any reader into `sink`; see [`read_swimlane`]. Errors name the
/// file as `<input>`.
pub fn read_swimlane_from<R: Read, S: SwimlaneSink>(
    reader: R,
    sink: &mut S,
) -> Result<Header, SwimlaneReadError> {
    let mut de = serde_json::Deserializer::from_reader(reader);
    let mut failed_row = None;
    let top = TopLevel {
        sink,
        failed_row: &mut failed_row,
    };
    let result = top.deserialize(&mut de).and_then(|header| {
        de.end()?;
        Ok(header)
    });
    result.map_err(|e| {
        SwimlaneReadError::json(
            Path::new("<input>"),
            FILE_NAME,
            e,
            failed_row.map(|(section, index)| format!("{}[{index}]", section.key())),
        )
    })
}

/// Reads a whole records file into memory. Fine for small files and tests; stream large ones
/// with [`read_swimlane`].
pub fn read_swimlane_file(path: &Path) -> Result<SwimlaneFile, SwimlaneReadError> {
    let mut rows = CollectRows::default();
    let header = read_swimlane(path, &mut rows)?;
    Ok(SwimlaneFile {
        header,
        tasks: rows.tasks,
        dummy_tasks: rows.dummy_tasks,
        orchestrator: rows.orchestrator,
    })
}

/// The top-level object: header fields kept, rows streamed to the sink.
struct TopLevel<'a, S> {
    sink: &'a mut S,
    /// Set to the row whose parsing failed, so the error can name it.
    failed_row: &'a mut Option<(Section, usize)>,
}

impl<'de, S: SwimlaneSink> DeserializeSeed<'de> for TopLevel<'_, S> {
    type Value = Header;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Header, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, S: SwimlaneSink> de::Visitor<'de> for TopLevel<'_, S> {
    type Value = Header;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a {FILE_NAME} object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Header, A::Error> {
        let mut version = None;
        let mut clock = None;
        let mut clusters = None;
        let mut cores = None;
        let mut scheduler_threads = None;
        let mut seen = [false; 3];
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "version" => {
                    let v: u32 = map.next_value()?;
                    if v != SCHEMA_VERSION {
                        return Err(de::Error::custom(format!(
                            "unsupported version {v} (this reader understands version {SCHEMA_VERSION})"
                        )));
                    }
                    version = Some(v);
                }
                "clock" => {
                    let c: String = map.next_value()?;
                    if c != CLOCK_MONOTONIC_NS {
                        return Err(de::Error::custom(format!(
                            "unsupported clock {c:?} (expected \"{CLOCK_MONOTONIC_NS}\")"
                        )));
                    }
                    clock = Some(c);
                }
                "clusters" => clusters = Some(map.next_value()?),
                "cores" => cores = Some(map.next_value()?),
                "scheduler_threads" => scheduler_threads = Some(map.next_value()?),
                other => match Section::ALL.iter().position(|s| s.key() == other) {
                    Some(i) => {
                        if seen[i] {
                            return Err(de::Error::duplicate_field(Section::ALL[i].key()));
                        }
                        seen[i] = true;
                        let (sink, failed) = (&mut *self.sink, &mut *self.failed_row);
                        match Section::ALL[i] {
                            Section::Tasks => {
                                map.next_value_seed(Rows::new(Section::Tasks, sink, S::task, failed))?
                            }
                            Section::Dummies => {
                                map.next_value_seed(Rows::new(Section::Dummies, sink, S::dummy, failed))?
                            }
                            Section::Orchestrator => {
                                map.next_value_seed(Rows::new(Section::Orchestrator, sink, S::orch, failed))?
                            }
                        }
                    }
                    None => {
                        map.next_value::<IgnoredAny>()?;
                    }
                },
            }
        }
        for (section, present) in Section::ALL.iter().zip(seen) {
            if !present {
                return Err(de::Error::missing_field(section.key()));
            }
        }
        Ok(Header {
            version: version.ok_or_else(|| de::Error::missing_field("version"))?,
            clock: clock.ok_or_else(|| de::Error::missing_field("clock"))?,
            clusters: clusters.ok_or_else(|| de::Error::missing_field("clusters"))?,
            cores: cores.ok_or_else(|| de::Error::missing_field("cores"))?,
            scheduler_threads: scheduler_threads
                .ok_or_else(|| de::Error::missing_field("scheduler_threads"))?,
        })
    }
}

/// One section array: each row is handed to `push` as soon as it is parsed. A row that does
/// not parse is recorded in `failed_row` and its error passed on unchanged, so the error keeps
/// the row's own line and column.
struct Rows<'a, S, T> {
    section: Section,
    sink: &'a mut S,
    push: fn(&mut S, T),
    failed_row: &'a mut Option<(Section, usize)>,
}

impl<'a, S, T> Rows<'a, S, T> {
    fn new(
        section: Section,
        sink: &'a mut S,
        push: fn(&mut S, T),
        failed_row: &'a mut Option<(Section, usize)>,
    ) -> Self {
        Self {
            section,
            sink,
            push,
            failed_row,
        }
    }
}

impl<'de, S, T: DeserializeOwned> DeserializeSeed<'de> for Rows<'_, S, T> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, S, T: DeserializeOwned> de::Visitor<'de> for Rows<'_, S, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of rows")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0usize;
        loop {
            match seq.next_element::<T>() {
                Ok(Some(row)) => (self.push)(self.sink, row),
                Ok(None) => return Ok(()),
                Err(e) => {
                    *self.failed_row = Some((self.section, index));
                    return Err(e);
                }
            }
            index += 1;
        }
    }
}

// === errors ===

/// Why a records file could not be read. The message names the file and, for malformed or
/// incomplete content, the 1-based line and column, the row and the problem:
/// `<path>:<line>:<column>: invalid l2_swimlane_records.json: tasks[1]: missing field `end_ns``.
pub type SwimlaneReadError = crate::read_error::JsonReadError;

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SwimlaneFile {
        SwimlaneFile {
            header: Header::for_clusters(1, 2),
            tasks: vec![
                TaskRow {
                    task_id: 0,
                    kernel_ids: [-1, 0, -1],
                    func_id: 0,
                    block_idx: 0,
                    block_num: 1,
                    core_id: 1,
                    core_type: CoreType::Aiv,
                    sched_thread: 0,
                    dispatch_ns: 900,
                    start_ns: 1000,
                    end_ns: 3000,
                    finish_ns: 3100,
                },
                TaskRow {
                    task_id: 4_294_967_296,
                    kernel_ids: [5, 6, -1],
                    func_id: 5,
                    block_idx: 1,
                    block_num: 2,
                    core_id: 0,
                    core_type: CoreType::Aic,
                    sched_thread: 1,
                    dispatch_ns: 4000,
                    start_ns: 4100,
                    end_ns: 5000,
                    finish_ns: 5050,
                },
            ],
            dummy_tasks: vec![DummyRow {
                task_id: 7,
                sched_thread: 1,
                finish_ns: 6000,
            }],
            orchestrator: vec![OrchRow {
                task_id: u64::MAX,
                submit_start_ns: 10,
                submit_end_ns: 20,
            }],
        }
    }

    fn write(file: &SwimlaneFile) -> String {
        let mut w = SwimlaneWriter::begin(Vec::new(), &file.header).unwrap();
        for r in &file.tasks {
            w.task(r).unwrap();
        }
        for r in &file.dummy_tasks {
            w.dummy(r).unwrap();
        }
        for r in &file.orchestrator {
            w.orch(r).unwrap();
        }
        String::from_utf8(w.finish().unwrap()).unwrap()
    }

    fn read(text: &str) -> Result<SwimlaneFile, SwimlaneReadError> {
        let mut rows = CollectRows::default();
        let header = read_swimlane_from(text.as_bytes(), &mut rows)?;
        Ok(SwimlaneFile {
            header,
            tasks: rows.tasks,
            dummy_tasks: rows.dummy_tasks,
            orchestrator: rows.orchestrator,
        })
    }

    #[test]
    fn header_for_clusters_uses_the_platform_numbering() {
        let h = Header::for_clusters(2, 1);
        let names: Vec<&str> = h.cores.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["AIC_0", "AIC_1", "AIV_2", "AIV_3", "AIV_4", "AIV_5"]);
        assert_eq!((h.version, h.clock.as_str()), (1, "monotonic_ns"));
    }

    #[test]
    fn writer_puts_one_row_per_line_and_round_trips() {
        let file = sample();
        let text = write(&file);
        let expected = concat!(
            r#"{"version":1,"clock":"monotonic_ns","clusters":1,"cores":[{"core_id":0,"core_type":"aic","name":"AIC_0"},"#,
            r#"{"core_id":1,"core_type":"aiv","name":"AIV_1"},{"core_id":2,"core_type":"aiv","name":"AIV_2"}],"scheduler_threads":2,"#,
            "\n\"tasks\":[\n",
            r#"{"task_id":"0","kernel_ids":[-1,0,-1],"func_id":0,"block_idx":0,"block_num":1,"core_id":1,"core_type":"aiv","sched_thread":0,"dispatch_ns":900,"start_ns":1000,"end_ns":3000,"finish_ns":3100},"#,
            "\n",
            r#"{"task_id":"4294967296","kernel_ids":[5,6,-1],"func_id":5,"block_idx":1,"block_num":2,"core_id":0,"core_type":"aic","sched_thread":1,"dispatch_ns":4000,"start_ns":4100,"end_ns":5000,"finish_ns":5050}"#,
            "\n],\n\"dummy_tasks\":[\n",
            r#"{"task_id":"7","sched_thread":1,"finish_ns":6000}"#,
            "\n],\n\"orchestrator\":[\n",
            r#"{"task_id":"18446744073709551615","submit_start_ns":10,"submit_end_ns":20}"#,
            "\n]}\n"
        );
        assert_eq!(text, expected);
        assert_eq!(read(&text).unwrap(), file);
    }

    #[test]
    fn writer_closes_empty_sections_and_rejects_going_back() {
        let header = Header::for_clusters(0, 1);
        let w = SwimlaneWriter::begin(Vec::new(), &header).unwrap();
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(
            text,
            "{\"version\":1,\"clock\":\"monotonic_ns\",\"clusters\":0,\"cores\":[],\"scheduler_threads\":1,\n\
             \"tasks\":[],\n\"dummy_tasks\":[],\n\"orchestrator\":[]}\n"
        );
        let back = read(&text).unwrap();
        assert_eq!((back.header, back.tasks.len()), (header.clone(), 0));

        let mut w = SwimlaneWriter::begin(Vec::new(), &header).unwrap();
        w.orch(&sample().orchestrator[0]).unwrap();
        let err = w.task(&sample().tasks[0]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(
            err.to_string(),
            "l2_swimlane_records.json sections are written in order tasks, dummy_tasks, orchestrator: \
             cannot add to \"tasks\" after \"orchestrator\""
        );
    }

    #[test]
    fn reader_accepts_any_section_order_numbers_and_unknown_keys() {
        let text = r#"{"orchestrator":[],"extra":{"a":[1]},"dummy_tasks":[{"task_id":3,"sched_thread":0,"finish_ns":5,"new":1}],
            "tasks":[],"version":1,"clock":"monotonic_ns","clusters":0,"cores":[],"scheduler_threads":1}"#;
        let file = read(text).unwrap();
        assert_eq!(file.dummy_tasks[0].task_id, 3);
    }

    #[test]
    fn missing_row_field_names_row_field_and_line() {
        let good = write(&sample());
        let bad = good.replacen(r#","end_ns":5000"#, "", 1);
        let err = read(&bad).unwrap_err();
        assert_eq!(err.missing_field(), Some("end_ns"));
        assert_eq!(err.line(), Some(4));
        assert_eq!(
            err.to_string(),
            format!(
                "<input>:4:{}: invalid l2_swimlane_records.json: tasks[1]: missing field `end_ns`",
                err.column().unwrap()
            )
        );
    }

    #[test]
    fn header_problems_are_reported() {
        let good = write(&sample());
        let err = read(&good.replacen("\"scheduler_threads\":2,", "", 1)).unwrap_err();
        assert_eq!(err.missing_field(), Some("scheduler_threads"));
        let err = read(&good.replacen("\"version\":1", "\"version\":2", 1)).unwrap_err();
        assert!(
            err.to_string().ends_with(
                "invalid l2_swimlane_records.json: unsupported version 2 (this reader understands version 1)"
            ),
            "{err}"
        );
        let err = read(&good.replacen("monotonic_ns", "cycles", 1)).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("unsupported clock \"cycles\" (expected \"monotonic_ns\")"),
            "{err}"
        );
        let err = read(&good.replacen("\"aic\"", "\"gpu\"", 1)).unwrap_err();
        assert!(
            err.to_string()
                .contains("unknown variant `gpu`, expected `aic` or `aiv`"),
            "{err}"
        );
        let err = read(&good.replacen("\"dummy_tasks\":[", "\"tasks\":[", 1)).unwrap_err();
        assert!(err.to_string().ends_with("duplicate field `tasks`"), "{err}");
        assert_eq!(err.missing_field(), None);
    }

    #[test]
    fn malformed_json_and_missing_file_are_located() {
        let err = read("{\"version\":1,\n\"tasks\":[{\"task_id\":\"1\",}]}").unwrap_err();
        assert_eq!((err.line(), err.column()), (Some(2), Some(25)));
        assert!(
            err.to_string()
                .starts_with("<input>:2:25: invalid l2_swimlane_records.json: tasks[0]: "),
            "{err}"
        );
        let path = Path::new("/nonexistent/l2_swimlane_records.json");
        let err = read_swimlane_file(path).unwrap_err();
        assert!(err.io_error().is_some());
        assert!(err
            .to_string()
            .starts_with("/nonexistent/l2_swimlane_records.json: cannot read l2_swimlane_records.json: "));
    }
}
