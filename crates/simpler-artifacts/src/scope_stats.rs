//! `scope_stats/scope_stats.jsonl`: metadata line + one line per scope sample
//! (`../shared/spec/scope-stats.md` §3).
//!
//! # Layout
//!
//! NDJSON. Line 1 is a [`Metadata`] object; every later non-blank line is one [`Sample`], oldest
//! first. Field order in both types is the spec's order, so serializing them with `serde_json`
//! writes the file exactly as the spec lays it out. [`Writer`] does that for the runtime;
//! [`Reader`] streams a file back for the tools.
//!
//! # Metadata forms
//!
//! - **Seven keys** (an ordinary, proven export): `fatal`, `dropped`, `total`, `task_window_max`,
//!   `heap_max`, `dep_pool_max`, `tensormap_max`. Any of them may be `null` (unknown).
//! - **Eleven keys** (background collection and unproven ordinary closes): the seven plus
//!   `collection_verdict`, `counts_unknown`, `host_received_records`, `host_retained_records`.
//!   The four extra fields are `Option`s that are left out of the output when `None`, so one type
//!   writes both forms.
//! - **Older schemas** of the original tool: a leading `"version"` key (4, 5 or 6) and samples
//!   without `run_epoch`/`buf_seq`. Version 4 predates the dependency pool: no `dep_pool_max`
//!   and samples without `dep_pool_start`/`dep_pool_end`. Read, and written back unchanged
//!   when `version` is `Some`.
//!
//! `null` and a missing key both read as `None`. Without `version` (the spec's form) the
//! reader requires the seven keys to be present, so a sample on line 1 is rejected as "not
//! metadata"; with `version` the keys that schema lacks may be absent ([`Metadata::absent`]
//! names them). A sample's `dep_pool_start`/`dep_pool_end` may be absent in any file (`None`:
//! unknown, never zero); every other sample field is required.
//!
//! # Errors
//!
//! Every [`ReadError`] carries the 1-based line number it concerns. A final line without its
//! newline that does not parse is reported as [`ReadErrorKind::TruncatedFinalLine`], so a tool
//! can render everything before it and say the file was cut off mid-write. A line longer than
//! [`MAX_LINE_BYTES`] (1 MiB) is an error after a read of that much: a record is one short
//! line, and `read_line` of `/dev/zero` or a sparse file grew until the allocation aborted.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::error::Category;

use crate::input::Line;

/// The counting limit of the device counters: a `total` or `dropped` at this value is saturated
/// and means "unknown", never a count (spec §3).
pub const COUNTER_SATURATED: u64 = u32::MAX as u64;

/// The longest line the reader takes, its newline left out: 1 MiB. A record is one short line
/// (a few hundred bytes; the metadata line grows with the ring count, never near this).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The keys every metadata line carries (possibly as `null`), in spec order.
pub const METADATA_KEYS: [&str; 7] = [
    "fatal",
    "dropped",
    "total",
    "task_window_max",
    "heap_max",
    "dep_pool_max",
    "tensormap_max",
];

/// Line 1 of `scope_stats.jsonl`: run-level counts and per-ring capacities.
///
/// Every field may be unknown (`None`, written as `null`). The last four fields exist only in
/// the eleven-key form and are omitted from the output when `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    /// Schema version of the original tool's older format (6); `None` in the spec's format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// `true` iff a fatal was latched during the run; records past it are diagnostic-only.
    pub fatal: Option<bool>,
    /// Records dropped on device; `0` on a healthy run.
    pub dropped: Option<u64>,
    /// Total records the device attempted (collected + dropped).
    pub total: Option<u64>,
    /// Per-ring task-window capacity, indexed by `ring`.
    pub task_window_max: Option<Vec<u64>>,
    /// Per-ring heap capacity in bytes, indexed by `ring`.
    pub heap_max: Option<Vec<u64>>,
    /// Per-ring dependency-list pool capacity, indexed by `ring`.
    pub dep_pool_max: Option<Vec<u64>>,
    /// Tensormap entry capacity.
    pub tensormap_max: Option<u64>,
    /// Collection quality (eleven-key form only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection_verdict: Option<CollectionVerdict>,
    /// `true` only when the counts themselves cannot be trusted (eleven-key form only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts_unknown: Option<bool>,
    /// Records the host took delivery of (eleven-key form only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_received_records: Option<u64>,
    /// Of those, how many host storage kept (eleven-key form only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_retained_records: Option<u64>,
    /// The [`METADATA_KEYS`] the line does not have at all (an older schema; `null` keys are
    /// present). Filled by the reader; not part of the file.
    #[serde(skip)]
    pub absent: Vec<&'static str>,
}

impl Metadata {
    /// Why a file of `samples` sample lines under this metadata does not hold every sample the
    /// run took, as far as the metadata can tell: samples dropped on the device, host storage
    /// that kept fewer than it received, or a sample count that is not `total − dropped` (the
    /// file was cut or edited). `None` when nothing is known to be missing (or the counts are
    /// unknown). Peaks read from such a file can be understated.
    pub fn missing_samples(&self, samples: u64) -> Option<String> {
        if let (Some(rx), Some(kept)) = (self.host_received_records, self.host_retained_records) {
            if kept < rx {
                return Some(format!(
                    "host storage kept {kept} of the {rx} samples it received"
                ));
            }
        }
        let (Some(total), Some(dropped)) = (self.total, self.dropped) else {
            return None;
        };
        if dropped > 0 {
            return Some(format!("{dropped} of the run's {total} samples were dropped"));
        }
        let expected = total.saturating_sub(dropped);
        (samples != expected).then(|| {
            format!(
                "the file has {samples} samples where its metadata line says the run took {expected}: \
                 the file was cut or edited"
            )
        })
    }
}

/// `collection_verdict` of the eleven-key metadata line.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CollectionVerdict {
    /// Everything collected; counts known.
    Published,
    /// Loss, host refusal or a latched fatal; counts still known.
    PartialSafe,
    /// Unproved producer stop, a saturated counter or an accounting mismatch; counts unknown.
    PartialCutUnknown,
    /// A verdict this version does not know, kept verbatim.
    Other(String),
}

impl CollectionVerdict {
    /// The verdict as written in the file.
    pub fn as_str(&self) -> &str {
        match self {
            CollectionVerdict::Published => "published",
            CollectionVerdict::PartialSafe => "partial_safe",
            CollectionVerdict::PartialCutUnknown => "partial_cut_unknown",
            CollectionVerdict::Other(s) => s,
        }
    }

    fn parse(s: &str) -> Self {
        match s {
            "published" => CollectionVerdict::Published,
            "partial_safe" => CollectionVerdict::PartialSafe,
            "partial_cut_unknown" => CollectionVerdict::PartialCutUnknown,
            other => CollectionVerdict::Other(other.to_string()),
        }
    }
}

impl Serialize for CollectionVerdict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for CollectionVerdict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Ok(CollectionVerdict::parse(&s))
    }
}

/// Whether a sample was taken at scope entry or exit (`Begin` orders first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Scope entry.
    Begin,
    /// Scope exit.
    End,
}

/// One scope-boundary sample (lines 2..). `*_start` is the ring's tail (released boundary) and
/// `*_end` its head (allocation frontier) at the boundary; all are monotonic, non-wrapping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// `"basename:line"` of the scope's call site.
    pub site: String,
    /// Entry or exit.
    pub phase: Phase,
    /// Nesting depth (0 = root scope).
    pub depth: u32,
    /// Ring this scope used; indexes the metadata capacity arrays.
    pub ring: u32,
    /// Task-window tail.
    pub task_window_start: i64,
    /// Task-window head.
    pub task_window_end: i64,
    /// Heap reclaim boundary, cumulative bytes.
    pub heap_start: u64,
    /// Heap allocation frontier, cumulative bytes.
    pub heap_end: u64,
    /// Dependency-list pool tail; `None` in files that predate the pool (schema version 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dep_pool_start: Option<i64>,
    /// Dependency-list pool top; `None` in files that predate the pool (schema version 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dep_pool_end: Option<i64>,
    /// Tensormap entries in use.
    pub tensormap: i64,
    /// Run that produced the record (`0` = no run identity). `None` in the older schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_epoch: Option<u64>,
    /// Producer buffer generation (meaningful only with `run_epoch`). `None` in the older schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buf_seq: Option<u64>,
}

/// Rings a sample may name: the metadata's per-ring arrays are indexed 0..3 (the spec), and a
/// report draws a panel per ring, so 5,000 made-up rings made a 67 MB page.
pub const RINGS: u32 = 4;

impl Sample {
    /// The first resource whose tail is past its head (`*_start > *_end`), or a negative
    /// count: counters that cannot come from a run, so the sample is invalid input. A ring past
    /// [`RINGS`] is invalid too.
    pub fn invalid(&self) -> Option<String> {
        if self.ring >= RINGS {
            return Some(format!(
                "ring {} is not one of the {RINGS} rings (0 to {})",
                self.ring,
                RINGS - 1
            ));
        }
        let mut pairs = vec![
            (
                "task_window",
                self.task_window_start as i128,
                self.task_window_end as i128,
            ),
            ("heap", self.heap_start as i128, self.heap_end as i128),
        ];
        match (self.dep_pool_start, self.dep_pool_end) {
            (Some(start), Some(end)) => pairs.push(("dep_pool", start as i128, end as i128)),
            (None, None) => {}
            (Some(_), None) => return Some("dep_pool_start is given without dep_pool_end".into()),
            (None, Some(_)) => return Some("dep_pool_end is given without dep_pool_start".into()),
        }
        for (name, start, end) in pairs {
            if start > end {
                return Some(format!(
                    "{name}_start {start} is past {name}_end {end} (a tail cannot pass its head)"
                ));
            }
            if start < 0 {
                return Some(format!("{name}_start is negative ({start})"));
            }
        }
        (self.tensormap < 0).then(|| format!("tensormap is negative ({})", self.tensormap))
    }
}

impl Sample {
    /// The first resource this sample holds more of than the metadata's capacity for its ring
    /// says the run had (`heap_end − heap_start` over `heap_max[ring]`, ...): counters that
    /// cannot come from that run (found by a review: a heap of 2^63 bytes in use was planned
    /// from and rendered without a word). Capacities the metadata does not give are not
    /// checked.
    pub fn beyond(&self, meta: &Metadata) -> Option<String> {
        let ring = self.ring as usize;
        let cap = |v: &Option<Vec<u64>>| v.as_ref().and_then(|v| v.get(ring).copied());
        let held = [
            (
                "task_window",
                (self.task_window_end as i128) - (self.task_window_start as i128),
                cap(&meta.task_window_max),
            ),
            (
                "heap",
                i128::from(self.heap_end) - i128::from(self.heap_start),
                cap(&meta.heap_max),
            ),
            (
                "dep_pool",
                self.dep_pool_end
                    .zip(self.dep_pool_start)
                    .map_or(0, |(e, s)| (e as i128) - (s as i128)),
                cap(&meta.dep_pool_max),
            ),
        ];
        for (name, held, max) in held {
            if let Some(max) = max.filter(|&m| held > i128::from(m)) {
                return Some(format!(
                    "{name}_end − {name}_start is {held}, more than {name}_max[{ring}] = {max}, the ring's \
                     capacity in the metadata line"
                ));
            }
        }
        meta.tensormap_max
            .filter(|&m| i128::from(self.tensormap) > i128::from(m))
            .map(|m| {
                format!(
                    "tensormap is {}, more than tensormap_max = {m}, the capacity in the metadata line",
                    self.tensormap
                )
            })
    }
}

// === impl ReadError ===

/// What went wrong while reading a `scope_stats.jsonl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadErrorKind {
    /// The file could not be opened or read.
    Io,
    /// The file has no metadata line (it is empty or blank).
    Empty,
    /// Line 1 is not a metadata object.
    NotMetadata,
    /// A sample line is not valid JSON or not a valid sample.
    Malformed,
    /// The final line has no newline and does not parse: the writer was cut off mid-line.
    TruncatedFinalLine,
}

/// An error reading `scope_stats.jsonl`, with the 1-based line number it concerns (if any).
#[derive(Debug)]
pub struct ReadError {
    kind: ReadErrorKind,
    line: Option<u64>,
    message: String,
}

impl ReadError {
    fn new(kind: ReadErrorKind, line: Option<u64>, message: impl Into<String>) -> Self {
        ReadError {
            kind,
            line,
            message: message.into(),
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ReadErrorKind {
        self.kind
    }

    /// The 1-based line number, when the error concerns one line.
    pub fn line(&self) -> Option<u64> {
        self.line
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(n) => write!(f, "line {n}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ReadError {}

// === impl Reader ===

/// Streams a `scope_stats.jsonl`: the metadata is read on construction, then samples one line
/// at a time through [`Iterator`]. Blank lines are skipped. After an error the iterator ends.
pub struct Reader<R> {
    inner: R,
    metadata: Metadata,
    line_no: u64,
    buf: Vec<u8>,
    done: bool,
}

impl Reader<BufReader<File>> {
    /// Opens `path` and reads its metadata line. A path that is not a regular file (a named
    /// pipe, a device) is refused before it is opened ([`crate::input::open_regular`]).
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        let file = crate::input::open_regular(path).map_err(|e| {
            ReadError::new(
                ReadErrorKind::Io,
                None,
                format!("cannot open {}: {e}", path.display()),
            )
        })?;
        Reader::new(BufReader::with_capacity(1 << 20, file))
    }
}

impl<R: BufRead> Reader<R> {
    /// Reads the metadata line from `inner`; fails if the input is empty or line 1 is not
    /// metadata (for instance a sample, or a line cut off mid-write).
    pub fn new(mut inner: R) -> Result<Self, ReadError> {
        let mut buf = Vec::new();
        let mut line_no = 0u64;
        let line = loop {
            let read = crate::input::read_line_at_most(&mut inner, &mut buf, MAX_LINE_BYTES)
                .map_err(|e| io_error(line_no + 1, &e))?;
            line_no += 1;
            match read {
                Line::End => {
                    return Err(ReadError::new(
                        ReadErrorKind::Empty,
                        None,
                        "empty file: expected a metadata line first",
                    ))
                }
                Line::TooLong => return Err(too_long(ReadErrorKind::NotMetadata, line_no)),
                Line::Read => {}
            }
            let line = utf8(&buf, line_no)?;
            if !line.trim().is_empty() {
                break line;
            }
        };
        let metadata = parse_metadata(line, line_no)?;
        Ok(Reader {
            inner,
            metadata,
            line_no,
            buf,
            done: false,
        })
    }

    /// The metadata line.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The number of the last line read (1-based).
    pub fn line_number(&self) -> u64 {
        self.line_no
    }

    /// Reads the next sample, skipping blank lines; `None` at end of input.
    pub fn next_sample(&mut self) -> Option<Result<Sample, ReadError>> {
        if self.done {
            return None;
        }
        loop {
            let read = crate::input::read_line_at_most(&mut self.inner, &mut self.buf, MAX_LINE_BYTES);
            let line = match read {
                Ok(Line::Read) => utf8(&self.buf, self.line_no + 1),
                Ok(Line::End) => {
                    self.done = true;
                    return None;
                }
                Ok(Line::TooLong) => Err(too_long(ReadErrorKind::Malformed, self.line_no + 1)),
                Err(e) => Err(io_error(self.line_no + 1, &e)),
            };
            self.line_no += 1;
            let line = match line {
                Ok(line) => line,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            };
            let text = line.trim();
            if text.is_empty() {
                continue;
            }
            // Only a line that does not parse pays for naming its field (`describe`).
            return Some(match serde_json::from_str::<Sample>(text) {
                Ok(s) => match s.invalid().or_else(|| s.beyond(&self.metadata)) {
                    None => Ok(s),
                    Some(what) => {
                        self.done = true;
                        Err(ReadError::new(
                            ReadErrorKind::Malformed,
                            Some(self.line_no),
                            format!("invalid sample: {what}"),
                        ))
                    }
                },
                Err(e) => {
                    self.done = true;
                    let what = describe_sample(line, e);
                    if line.ends_with('\n') {
                        Err(ReadError::new(
                            ReadErrorKind::Malformed,
                            Some(self.line_no),
                            format!("malformed sample: {what}"),
                        ))
                    } else {
                        Err(ReadError::new(
                            ReadErrorKind::TruncatedFinalLine,
                            Some(self.line_no),
                            format!("final line is incomplete (no newline; cut off mid-write?): {what}"),
                        ))
                    }
                }
            });
        }
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Sample, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_sample()
    }
}

fn io_error(line: u64, e: &io::Error) -> ReadError {
    ReadError::new(ReadErrorKind::Io, Some(line), format!("read failed: {e}"))
}

/// Line `line` is longer than [`MAX_LINE_BYTES`]: only its first bytes were read.
fn too_long(kind: ReadErrorKind, line: u64) -> ReadError {
    ReadError::new(
        kind,
        Some(line),
        "a line longer than 1 MiB (a scope_stats.jsonl record is one short line)",
    )
}

/// The line in `buf` as text; `read_line`'s error (the reader's before lines were capped) if
/// it is not UTF-8.
fn utf8(buf: &[u8], line: u64) -> Result<&str, ReadError> {
    std::str::from_utf8(buf).map_err(|_| {
        let e = io::Error::new(io::ErrorKind::InvalidData, "stream did not contain valid UTF-8");
        io_error(line, &e)
    })
}

/// [`describe`] for a sample line, compiled here, once. `describe::<Sample>` called from the
/// generic [`Reader`] is compiled into each crate that reads recordings, beside the per-line
/// parse it shares code with, and LLVM then stopped inlining part of that parse: 3% more
/// instructions per line on a 1M-line recording. (`#[cold]` here moved that loop's code about:
/// the same instructions, 6% slower.)
#[inline(never)]
fn describe_sample(line: &str, error: serde_json::Error) -> String {
    describe::<Sample>(line, error)
}

/// Why `line` (a whole line, parsed without its surrounding whitespace) is not a `T`, given
/// serde_json's `error` for it: the message without serde_json's own "at line 1 column N" (every
/// line is parsed on its own), after the field it concerns when it names one
/// (`task_window_max[2]: invalid type: ...`), with the column in the line: `(column 57)`.
///
/// The field comes from parsing the line again with path tracking, so only a line that failed
/// pays for it; a syntax error names no field (the column says where). That parse also gives
/// the column of an `error` that has none (column 0: the metadata line is read from a JSON
/// tree).
fn describe<T: DeserializeOwned>(line: &str, error: serde_json::Error) -> String {
    let text = line.trim();
    let lead = line.len() - line.trim_start().len();
    let mut de = serde_json::Deserializer::from_str(text);
    let (error, field) = match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Err(again) if again.inner().classify() == Category::Data => {
            let field = Some(again.path().to_string()).filter(|p| p != ".");
            // The metadata line's `error` (from its JSON tree) has no column; this one has.
            let error = if error.column() == 0 {
                again.into_inner()
            } else {
                error
            };
            (error, field)
        }
        _ => (error, None),
    };
    let message = error.to_string();
    let base = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(b, _)| b);
    let at = match error.column() {
        0 => String::new(),
        column => format!(" (column {})", lead + column),
    };
    match field {
        Some(field) => format!("{field}: {base}{at}"),
        None => format!("{base}{at}"),
    }
}

fn parse_metadata(line: &str, line_no: u64) -> Result<Metadata, ReadError> {
    let not_meta = |msg: String| ReadError::new(ReadErrorKind::NotMetadata, Some(line_no), msg);
    let crate::unique_keys::UniqueKeys(value) = serde_json::from_str(line.trim()).map_err(|e| {
        let cut = if line.ends_with('\n') {
            ""
        } else {
            " (the line is incomplete)"
        };
        not_meta(format!(
            "expected the metadata line, found invalid JSON{cut}: {}",
            describe::<crate::unique_keys::UniqueKeys>(line, e)
        ))
    })?;
    let Some(obj) = value.as_object() else {
        return Err(not_meta(
            "expected the metadata line (a JSON object), found another JSON value".into(),
        ));
    };
    if obj.contains_key("phase") || obj.contains_key("site") {
        return Err(not_meta(
            "expected the metadata line first, found a scope sample (it has \"site\"/\"phase\")".into(),
        ));
    }
    let absent: Vec<&'static str> = METADATA_KEYS
        .iter()
        .copied()
        .filter(|k| !obj.contains_key(*k))
        .collect();
    let older_schema = obj.contains_key("version");
    if let (Some(missing), false) = (absent.first(), older_schema) {
        return Err(not_meta(format!(
            "not a metadata line: missing key \"{missing}\" (expected {})",
            METADATA_KEYS.join(", ")
        )));
    }
    if absent.len() == METADATA_KEYS.len() {
        return Err(not_meta(format!(
            "not a metadata line: it has \"version\" but none of {}",
            METADATA_KEYS.join(", ")
        )));
    }
    let mut meta: Metadata = serde_json::from_value(value).map_err(|e| {
        not_meta(format!(
            "invalid metadata line: {}",
            describe::<Metadata>(line, e)
        ))
    })?;
    meta.absent = absent;
    Ok(meta)
}

// === impl Writer ===

/// Writes a `scope_stats.jsonl`: the metadata line on construction, then one line per sample.
/// The caller flushes or drops the underlying writer; errors are returned, never swallowed.
pub struct Writer<W: Write> {
    inner: W,
}

impl<W: Write> Writer<W> {
    /// Writes the metadata line.
    pub fn new(mut inner: W, metadata: &Metadata) -> io::Result<Self> {
        write_line(&mut inner, metadata)?;
        Ok(Writer { inner })
    }

    /// Appends one sample line.
    pub fn sample(&mut self, sample: &Sample) -> io::Result<()> {
        write_line(&mut self.inner, sample)
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.inner.flush()?;
        Ok(self.inner)
    }
}

fn write_line<W: Write, T: Serialize>(w: &mut W, value: &T) -> io::Result<()> {
    serde_json::to_writer(&mut *w, value)?;
    w.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by a review: a sample holding more than its ring's capacity (a heap of 2^63
    /// bytes in use, a task window of 99999 in a 16384-slot ring) was read as data.
    #[test]
    fn a_sample_holding_more_than_its_capacity_is_invalid() {
        let meta = format!("{META7}\n");
        let sample = |extra: &str| {
            format!(
                "{meta}{{\"site\":\"a.rs:1\",\"phase\":\"begin\",\"depth\":0,\"ring\":1,\"task_window_start\":0,\
                 \"task_window_end\":4,\"heap_start\":0,\"heap_end\":1024,\"tensormap\":64{extra}}}\n"
            )
        };
        let read = |text: String| {
            let mut r = Reader::new(std::io::Cursor::new(text)).unwrap();
            r.next_sample().unwrap().map(|_| ()).map_err(|e| e.to_string())
        };
        assert_eq!(read(sample("")), Ok(()), "at the capacities");
        assert_eq!(
            read(sample("").replace("\"heap_end\":1024", "\"heap_end\":1025")),
            Err("line 2: invalid sample: heap_end − heap_start is 1025, more than heap_max[1] = 1024, the ring's \
                 capacity in the metadata line"
                .into())
        );
        assert_eq!(
            read(sample("").replace("\"task_window_end\":4", "\"task_window_end\":5")),
            Err("line 2: invalid sample: task_window_end − task_window_start is 5, more than task_window_max[1] = 4, \
                 the ring's capacity in the metadata line"
                .into())
        );
        assert!(read(sample(",\"dep_pool_start\":0,\"dep_pool_end\":17"))
            .unwrap_err()
            .contains("dep_pool_max[1] = 16"));
        assert!(read(sample("").replace("\"tensormap\":64", "\"tensormap\":65"))
            .unwrap_err()
            .contains("tensormap_max = 64"));
    }

    const META7: &str = r#"{"fatal": false, "dropped": 0, "total": 2, "task_window_max": [8, 4, 4, 4], "heap_max": [1024, 1024, 1024, 1024], "dep_pool_max": [16, 16, 16, 16], "tensormap_max": 64}"#;
    const BEGIN: &str = r#"{"site": "a.rs:7", "phase": "begin", "depth": 1, "ring": 1, "task_window_start": 0, "task_window_end": 0, "heap_start": 0, "heap_end": 0, "dep_pool_start": 1, "dep_pool_end": 1, "tensormap": 0, "run_epoch": 7, "buf_seq": 0}"#;

    fn read_all(text: &str) -> Result<(Metadata, Vec<Result<Sample, ReadError>>), ReadError> {
        let r = Reader::new(text.as_bytes())?;
        let m = r.metadata().clone();
        Ok((m, r.collect()))
    }

    #[test]
    fn round_trips_seven_key_form_in_spec_order() {
        let (meta, samples) = read_all(&format!("{META7}\n{BEGIN}\n")).unwrap();
        assert_eq!(meta.fatal, Some(false));
        assert_eq!(meta.collection_verdict, None);
        let s = samples[0].as_ref().unwrap();
        assert_eq!(s.phase, Phase::Begin);
        assert_eq!(s.run_epoch, Some(7));
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out, &meta).unwrap();
        w.sample(s).unwrap();
        w.finish().unwrap();
        let text = String::from_utf8(out).unwrap();
        let first = text.lines().next().unwrap();
        assert!(first.starts_with(r#"{"fatal":false,"dropped":0,"total":2,"task_window_max""#));
        assert!(first.ends_with(r#""tensormap_max":64}"#), "{first}");
        assert!(text
            .lines()
            .nth(1)
            .unwrap()
            .ends_with(r#""run_epoch":7,"buf_seq":0}"#));
    }

    #[test]
    fn reads_eleven_key_null_form() {
        let line = r#"{"fatal": null, "dropped": null, "total": null, "task_window_max": null, "heap_max": null, "dep_pool_max": null, "tensormap_max": null, "collection_verdict": "partial_cut_unknown", "counts_unknown": true, "host_received_records": 2, "host_retained_records": 2}"#;
        let (meta, _) = read_all(line).unwrap();
        assert_eq!(meta.fatal, None);
        assert_eq!(meta.heap_max, None);
        assert_eq!(
            meta.collection_verdict,
            Some(CollectionVerdict::PartialCutUnknown)
        );
        assert_eq!(meta.counts_unknown, Some(true));
        let out = serde_json::to_string(&meta).unwrap();
        assert!(out.starts_with(r#"{"fatal":null,"#), "{out}");
        assert!(out.ends_with(r#""host_received_records":2,"host_retained_records":2}"#));
    }

    #[test]
    fn reads_older_schema() {
        let meta = r#"{"version": 6, "fatal": false, "dropped": 0, "total": 1, "task_window_max": [8], "heap_max": [8], "dep_pool_max": [8], "tensormap_max": 8}"#;
        let sample = r#"{"site": "a.rs:7", "phase": "end", "depth": 0, "ring": 0, "task_window_start": 0, "task_window_end": 0, "heap_start": 0, "heap_end": 0, "dep_pool_start": 1, "dep_pool_end": 1, "tensormap": 0}"#;
        let (m, s) = read_all(&format!("{meta}\n{sample}\n")).unwrap();
        assert_eq!(m.version, Some(6));
        let s = s[0].as_ref().unwrap();
        assert_eq!((s.run_epoch, s.buf_seq), (None, None));
        assert!(serde_json::to_string(&m).unwrap().starts_with(r#"{"version":6,"#));
    }

    /// Schema version 4 predates the dependency pool: no `dep_pool_max`, no `dep_pool_*` in
    /// samples. Both read as unknown, and written back as absent.
    #[test]
    fn reads_schema_version_4_without_dep_pool() {
        let meta = r#"{"version": 4, "fatal": false, "dropped": 0, "total": 1, "task_window_max": [8], "heap_max": [8], "tensormap_max": 8}"#;
        let sample = r#"{"site": "a.rs:7", "phase": "end", "depth": 0, "ring": 0, "task_window_start": 0, "task_window_end": 2, "heap_start": 0, "heap_end": 0, "tensormap": 0}"#;
        let (m, s) = read_all(&format!("{meta}\n{sample}\n")).unwrap();
        assert_eq!((m.version, m.dep_pool_max.clone()), (Some(4), None));
        assert_eq!(m.absent, vec!["dep_pool_max"]);
        let s = s[0].as_ref().unwrap();
        assert_eq!((s.dep_pool_start, s.dep_pool_end), (None, None));
        assert!(!serde_json::to_string(s).unwrap().contains("dep_pool"));
        // The spec's form still needs every key.
        let e = read_all(&meta.replace("\"version\": 4, ", "")).err().unwrap();
        assert!(e.to_string().contains("missing key \"dep_pool_max\""), "{e}");
        let e = read_all("{\"version\": 4}\n").err().unwrap();
        assert!(
            e.to_string().contains("it has \"version\" but none of fatal"),
            "{e}"
        );
        let half = sample.replace("\"tensormap\": 0", "\"dep_pool_end\": 3, \"tensormap\": 0");
        let (_, s) = read_all(&format!("{meta}\n{half}\n")).unwrap();
        let e = s[0].as_ref().unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: invalid sample: dep_pool_end is given without dep_pool_start"
        );
        let far = sample.replace("\"ring\": 0", "\"ring\": 4");
        assert!(far != sample, "the sample names its ring");
        let (_, s) = read_all(&format!("{meta}\n{far}\n")).unwrap();
        assert_eq!(
            s[0].as_ref().unwrap_err().to_string(),
            "line 2: invalid sample: ring 4 is not one of the 4 rings (0 to 3)"
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = read_all("").err().unwrap();
        assert_eq!(e.kind(), ReadErrorKind::Empty);
        let e = read_all(&format!("{BEGIN}\n")).err().unwrap();
        assert_eq!((e.kind(), e.line()), (ReadErrorKind::NotMetadata, Some(1)));
        assert!(e.to_string().starts_with("line 1: "), "{e}");
        let e = read_all("{\"fatal\": false}\n").err().unwrap();
        assert!(e.to_string().contains("missing key \"dropped\""), "{e}");

        let (_, s) = read_all(&format!("{META7}\n\n{BEGIN}\n{{oops\n{BEGIN}\n")).unwrap();
        assert_eq!(s.len(), 2, "iteration stops at the error");
        let e = s[1].as_ref().unwrap_err();
        assert_eq!((e.kind(), e.line()), (ReadErrorKind::Malformed, Some(4)));
        assert!(e.to_string().starts_with("line 4: malformed sample"), "{e}");
    }

    /// A line that does not parse is named by its line, the field at fault (when it is one
    /// field's value) and the column in the line, whitespace before the value counted: the
    /// metadata line's error had `(column 0)` (it was parsed from a JSON tree) and no line
    /// named its field.
    #[test]
    fn errors_name_the_field_and_the_column() {
        let message = |text: String| {
            let (_, s) = read_all(&text).unwrap();
            s.last().unwrap().as_ref().unwrap_err().to_string()
        };
        let bad = BEGIN.replace("\"heap_end\": 0", "\"heap_end\": \"x\"");
        assert_eq!(
            message(format!("{META7}\n{BEGIN}\n{bad}\n")),
            "line 3: malformed sample: heap_end: invalid type: string \"x\", expected u64 (column 138)"
        );
        assert_eq!(
            message(format!("{META7}\n  {bad}\n")),
            "line 2: malformed sample: heap_end: invalid type: string \"x\", expected u64 (column 140)"
        );
        let bad = BEGIN.replace("\"begin\"", "\"middle\"");
        assert_eq!(
            message(format!("{META7}\n{bad}\n")),
            "line 2: malformed sample: phase: unknown variant `middle`, expected `begin` or `end` (column 36)"
        );
        let bad = BEGIN.replace("\"ring\": 1", "\"ring\": -1");
        assert_eq!(
            message(format!("{META7}\n{bad}")),
            "line 2: final line is incomplete (no newline; cut off mid-write?): ring: invalid value: \
             integer `-1`, expected u32 (column 59)"
        );
        // A missing field is the sample's, and the message names it; a syntax error has no field.
        let bad = BEGIN.replace("\"tensormap\": 0, ", "");
        assert_eq!(
            message(format!("{META7}\n{bad}\n")),
            "line 2: malformed sample: missing field `tensormap` (column 207)"
        );
        assert_eq!(
            message(format!("{META7}\n{{\"site\": \"x\", oops}}\n")),
            "line 2: malformed sample: key must be a string (column 15)"
        );

        let bad = META7.replace("[8, 4, 4, 4]", "[8, \"x\", 4, 4]");
        let e = read_all(&format!("{bad}\n")).err().unwrap();
        assert_eq!((e.kind(), e.line()), (ReadErrorKind::NotMetadata, Some(1)));
        assert_eq!(
            e.to_string(),
            "line 1: invalid metadata line: task_window_max[1]: invalid type: string \"x\", expected u64 \
             (column 69)"
        );
        let e = read_all(&format!(
            "\n\t{}\n",
            META7.replace("\"fatal\": false", "\"fatal\": 0")
        ))
        .err()
        .unwrap();
        assert_eq!(
            e.to_string(),
            "line 2: invalid metadata line: fatal: invalid type: integer `0`, expected a boolean (column 12)"
        );
        let e = read_all(&format!(
            "{}\n",
            META7.replace("\"total\": 2", "\"total\": 2, \"fatal\": true")
        ))
        .err()
        .unwrap();
        assert_eq!(
            e.to_string(),
            "line 1: expected the metadata line, found invalid JSON: duplicate key `fatal` (column 50)"
        );
        let e = read_all("  {\"fatal\" false}\n").err().unwrap();
        assert_eq!(
            e.to_string(),
            "line 1: expected the metadata line, found invalid JSON: expected `:` (column 12)"
        );
    }

    #[test]
    fn truncated_final_line_is_its_own_kind() {
        let cut = &BEGIN[..BEGIN.len() - 20];
        let (_, s) = read_all(&format!("{META7}\n{BEGIN}\n{cut}")).unwrap();
        let e = s[1].as_ref().unwrap_err();
        assert_eq!((e.kind(), e.line()), (ReadErrorKind::TruncatedFinalLine, Some(3)));
    }

    #[test]
    fn unknown_verdict_is_kept() {
        let v: CollectionVerdict = serde_json::from_str("\"quarantined\"").unwrap();
        assert_eq!(v, CollectionVerdict::Other("quarantined".into()));
        assert_eq!(serde_json::to_string(&v).unwrap(), "\"quarantined\"");
    }
}
