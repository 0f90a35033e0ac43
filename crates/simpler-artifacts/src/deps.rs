//! `deps.json`: the tensor-annotated dependency graph (`../shared/spec/dep-gen.md` §4).
//!
//! # Layout
//!
//! One JSON object with three arrays, always in this order: `tasks`, `tensors`, `edges`.
//!
//! - [`Task`]: one per submitted task, in submit order.
//! - [`Tensor`]: one per distinct `(buffer_addr, version)` read by some task; its id is
//!   [`tensor_id`] of that pair.
//! - [`Edge`]: one per annotated dependency row, grouped by consumer. A `(pred, succ)` pair may
//!   repeat (several args, sources or slices).
//!
//! Every 64-bit unsigned field (`task_id`, `tensor_id`, `pred`, `succ`, `buffer_addr`,
//! `buffer_numel`, every `*start_offset`) is written as a decimal JSON string so JavaScript
//! readers keep full precision; the reader also accepts plain numbers. Optional fields are
//! omitted when absent. Field order in the structs is the order they are written in: the spec's
//! order, with the two additive fields placed where the original writer puts them
//! (`early_dispatch` after `scope`, `flags` after `source`).
//!
//! # Reading
//!
//! [`read_deps`] streams a file through a [`DepsSink`]: each task, tensor and edge is
//! deserialized on its own and handed over, so a file with millions of edges never becomes a
//! JSON tree in memory. The sink chooses the element types, so a tool that needs only the edge
//! endpoints can deserialize a three-field struct instead of a full [`Edge`]. Errors name the
//! file and, for bad JSON, the line and column, the element and, for a value of the wrong type,
//! its field in the element (`edges[2].succ`; [`DepsReadError`]).
//!
//! # Writing
//!
//! [`DepsWriter`] writes the same compact one-line form the original runtime writes, one element
//! at a time, and refuses to go back to an earlier section. The bytes come from [`encode`], the
//! only formatter of deps.json: it writes what serde_json would write for these types (a
//! proptest checks that), without serde, and from borrowed views, so the runtime's dep_gen
//! writer uses it too.

use std::cell::Cell;
use std::fmt;
use std::io::{self, BufReader, Read, Write};
use std::marker::PhantomData;
use std::path::Path;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess};
use serde::{Deserialize, Deserializer, Serialize};

pub mod canonical;
mod chunked;
pub mod cycle;
pub mod encode;
pub mod gaps;

pub use gaps::{DepsElement, DepsGaps, Gap};

// === tensor identity ===

/// FNV-1a 64-bit offset basis.
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a 64-bit prime.
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Returns the stable id of the tensor `(buffer_addr, version)`.
///
/// 64-bit FNV-1a over the 8 little-endian bytes of `buffer_addr`, then the 4 little-endian
/// bytes of `version` reinterpreted as `u32` — the same 12 bytes the original runtime hashes,
/// so ids match across implementations and runs.
///
/// ```
/// use simpler_artifacts::deps::tensor_id;
/// assert_eq!(tensor_id(29_204_938_752, 0), 13_451_765_318_376_212_391);
/// ```
pub fn tensor_id(buffer_addr: u64, version: i32) -> u64 {
    let mut hash = FNV_OFFSET_BASIS;
    let version_bytes = (version as u32).to_le_bytes();
    for byte in buffer_addr.to_le_bytes().iter().chain(version_bytes.iter()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// Splits a raw task id into `(ring, local)`: `ring = (raw >> 32) & 0xFF`,
/// `local = raw & 0xFFFF_FFFF` (the layout of the original's `PTO2TaskId::raw`).
pub fn split_task_id(raw: u64) -> (u8, u32) {
    (((raw >> 32) & 0xFF) as u8, (raw & 0xFFFF_FFFF) as u32)
}

/// A raw task id as the traces and reports show it: `t<local>` on ring 0, else
/// `r<ring>t<local>` (the original converter's label).
pub fn task_label(raw: u64) -> String {
    match split_task_id(raw) {
        (0, local) => format!("t{local}"),
        (ring, local) => format!("r{ring}t{local}"),
    }
}

/// Builds a raw task id from `(ring, local)`; the inverse of [`split_task_id`].
pub fn make_task_id(ring: u8, local: u32) -> u64 {
    (u64::from(ring) << 32) | u64::from(local)
}

// === schema ===

/// Whether a task was submitted inside a manual scope (explicit dependencies only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Automatic dependency wiring (creator retention and tensor-map lookup).
    Auto,
    /// Manual scope: only the declared explicit dependencies.
    Manual,
}

/// How a task uses one tensor argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ArgType {
    /// Read only.
    #[serde(rename = "INPUT")]
    Input,
    /// A fresh output allocated by the runtime; no tensor identity at submit time.
    #[serde(rename = "OUTPUT")]
    Output,
    /// Read and written in place.
    #[serde(rename = "INOUT")]
    Inout,
    /// Written into an existing (external) buffer.
    #[serde(rename = "OUTPUT_EXISTING")]
    OutputExisting,
    /// Excluded from dependency tracking (the original writes `"UNKNOWN"` for it).
    #[serde(rename = "NO_DEP", alias = "UNKNOWN")]
    NoDep,
}

impl ArgType {
    /// The name written in deps.json (`"INPUT"`, `"OUTPUT_EXISTING"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ArgType::Input => "INPUT",
            ArgType::Output => "OUTPUT",
            ArgType::Inout => "INOUT",
            ArgType::OutputExisting => "OUTPUT_EXISTING",
            ArgType::NoDep => "NO_DEP",
        }
    }

    /// Returns true if and only if the task reads the argument (`INPUT` or `INOUT`).
    pub fn is_read(self) -> bool {
        matches!(self, ArgType::Input | ArgType::Inout)
    }

    /// Returns true if and only if the task writes the argument (`OUTPUT`, `INOUT` or
    /// `OUTPUT_EXISTING`).
    pub fn is_write(self) -> bool {
        matches!(self, ArgType::Output | ArgType::Inout | ArgType::OutputExisting)
    }
}

/// Where an edge came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeSource {
    /// A declared dependency (`explicit_deps[]`); carries no tensor annotation.
    Explicit,
    /// Creator retention: the consumer reads a tensor the producer allocated.
    Creator,
    /// A tensor-map hit: the producer's written slice overlaps the consumer's slice.
    Tensormap,
    /// `"unknown"`: written by the original when it could not tell (never by this runtime).
    Unknown,
}

impl EdgeSource {
    /// The name written in deps.json.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeSource::Explicit => "explicit",
            EdgeSource::Creator => "creator",
            EdgeSource::Tensormap => "tensormap",
            EdgeSource::Unknown => "unknown",
        }
    }
}

/// How a tensor-map edge's producer slice relates to the consumer slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Overlap {
    /// The producer's slice fully contains the consumer's slice.
    Covered,
    /// Any other overlap (partial, differently strided, or a newer version).
    Other,
    /// `"no_overlap"`: the original's writer can spell it (its lookup never reports it); this
    /// runtime never writes it.
    #[serde(rename = "no_overlap")]
    NoOverlap,
    /// `"unknown"`: the original's writer could not tell; this runtime never writes it.
    Unknown,
}

impl Overlap {
    /// The name written in deps.json.
    pub fn as_str(self) -> &'static str {
        match self {
            Overlap::Covered => "covered",
            Overlap::Other => "other",
            Overlap::NoOverlap => "no_overlap",
            Overlap::Unknown => "unknown",
        }
    }
}

/// A dependency flag carried by device-replay edges (additive field `flags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DepFlag {
    /// The consumer waits for the producer to complete.
    Wait,
    /// The consumer keeps the producer's outputs alive.
    Retain,
}

/// One entry of `tasks[]`.
///
/// This runtime always writes `scope`, `kernel_ids` (three entries) and `block_num`; the
/// original's writers may leave them out or write `kernel_ids` of another length, so they read
/// as `None` / the list as written, and [`gaps`] counts each such task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// Raw task id, `(ring << 32) | local`.
    #[serde(with = "u64_string")]
    pub task_id: u64,
    /// Auto or manual scope; `None` when the file does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Additive: the submit allowed early dispatch. Omitted when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub early_dispatch: Option<bool>,
    /// Kernel id per subslot `[aic, aiv0, aiv1]` (`-1` marks an inactive subslot), as
    /// written; `None` when absent. [`Task::kernel_slots`] gives the three slots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_ids: Option<Vec<i32>>,
    /// SPMD logical block count (1 for a normal task); `None` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_num: Option<u32>,
    /// One entry per tensor argument, in slot order.
    #[serde(default)]
    pub args: Vec<TaskArg>,
}

impl Task {
    /// The `[aic, aiv0, aiv1]` slots, when `kernel_ids` is present with exactly three entries.
    pub fn kernel_slots(&self) -> Option<[i32; 3]> {
        self.kernel_ids
            .as_deref()
            .and_then(|k| <[i32; 3]>::try_from(k).ok())
    }
}

/// One tensor argument of a [`Task`]. `OUTPUT` slots carry only `idx` and `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskArg {
    /// Argument slot index.
    pub idx: i32,
    /// How the task uses the argument.
    #[serde(rename = "type")]
    pub arg_type: ArgType,
    /// Identity of the tensor (see [`tensor_id`]); absent for `OUTPUT`.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_u64_string")]
    pub tensor_id: Option<u64>,
    /// Element type name (`FLOAT32`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    /// Per-dimension element count of the slice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<u32>>,
    /// Element offset of the slice into its buffer.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_u64_string")]
    pub start_offset: Option<u64>,
    /// Per-dimension stride in elements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strides: Option<Vec<u32>>,
}

/// One entry of `tensors[]`: a distinct `(buffer_addr, version)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tensor {
    /// [`tensor_id`]`(buffer_addr, version)`.
    #[serde(with = "u64_string")]
    pub tensor_id: u64,
    /// Device address of the underlying buffer.
    #[serde(with = "u64_string")]
    pub buffer_addr: u64,
    /// Caller-supplied generation tag; `None` when the file does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i32>,
    /// Element type name.
    pub dtype: String,
    /// Element count of the whole buffer (not of any slice).
    #[serde(with = "u64_string")]
    pub buffer_numel: u64,
}

/// One entry of `edges[]`: an annotated dependency row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    /// Producer task id.
    #[serde(with = "u64_string")]
    pub pred: u64,
    /// Consumer task id.
    #[serde(with = "u64_string")]
    pub succ: u64,
    /// Consumer argument slot; `-1` for explicit edges; `None` when the file does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arg: Option<i32>,
    /// Where the edge came from.
    pub source: EdgeSource,
    /// Additive: dependency flags (`["wait","retain"]`, `["wait"]`); device replay only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<Vec<DepFlag>>,
    /// Tensor-map edges only: how the slices overlap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap: Option<Overlap>,
    /// Non-explicit edges: the tensor, cross-referencing `tensors[]`.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_u64_string")]
    pub tensor_id: Option<u64>,
    /// Non-explicit edges: element type the consumer reads as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer_dtype: Option<String>,
    /// Non-explicit edges: consumer slice shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer_shape: Option<Vec<u32>>,
    /// Non-explicit edges: consumer slice element offset.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_u64_string")]
    pub consumer_start_offset: Option<u64>,
    /// Non-explicit edges: consumer slice strides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer_strides: Option<Vec<u32>>,
    /// Tensor-map edges: producer slice shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producer_shape: Option<Vec<u32>>,
    /// Tensor-map edges: producer slice element offset.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_u64_string")]
    pub producer_start_offset: Option<u64>,
    /// Tensor-map edges: producer slice strides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producer_strides: Option<Vec<u32>>,
}

impl Edge {
    /// A bare explicit edge `pred → succ`: no argument, flags or tensor annotation.
    pub fn explicit(pred: u64, succ: u64) -> Edge {
        Edge {
            pred,
            succ,
            arg: Some(-1),
            source: EdgeSource::Explicit,
            flags: None,
            overlap: None,
            tensor_id: None,
            consumer_dtype: None,
            consumer_shape: None,
            consumer_start_offset: None,
            consumer_strides: None,
            producer_shape: None,
            producer_start_offset: None,
            producer_strides: None,
        }
    }
}

/// The endpoints of an `edges[]` entry, every other field skipped: the cheap [`DepsSink::Edge`]
/// of a tool that needs only the graph's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
pub struct EdgeEnds {
    /// Producer task id.
    #[serde(with = "u64_string")]
    pub pred: u64,
    /// Consumer task id.
    #[serde(with = "u64_string")]
    pub succ: u64,
}

/// The fields of a `tasks[]` entry a tool that draws or times tasks keeps (its id, its
/// dispatch flag, its kernel per subslot, its SPMD block count), every other field skipped:
/// the cheap [`DepsSink::Task`] of such a tool. Our writer's tasks are read by a shortcut
/// ([`canonical::task_head`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TaskHead {
    /// Raw task id, `(ring << 32) | local`.
    #[serde(with = "u64_string")]
    pub task_id: u64,
    /// The additive `early_dispatch` flag, when given.
    #[serde(default)]
    pub early_dispatch: Option<bool>,
    /// Kernel per subslot, when given: `[aic, aiv0, aiv1]` (−1 = inactive) in the files of
    /// this runtime and of the original; any length is accepted.
    #[serde(default)]
    pub kernel_ids: Option<Vec<i32>>,
    /// SPMD block count, when given.
    #[serde(default)]
    pub block_num: Option<u32>,
}

/// A whole deps.json held in memory; see [`read_deps_file`]. Large files should be streamed
/// with [`read_deps`] instead.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepsFile {
    /// `tasks[]`.
    #[serde(default)]
    pub tasks: Vec<Task>,
    /// `tensors[]`.
    #[serde(default)]
    pub tensors: Vec<Tensor>,
    /// `edges[]`.
    #[serde(default)]
    pub edges: Vec<Edge>,
    /// What the file left unsaid ([`read_deps_file`] fills it; not part of the file).
    #[serde(skip)]
    pub gaps: DepsGaps,
}

// === u64 as decimal strings ===

/// Serde helper: a `u64` written as a decimal JSON string, read from a string or a number.
///
/// Use as `#[serde(with = "simpler_artifacts::deps::u64_string")]`.
pub mod u64_string {
    use serde::{Deserializer, Serializer};

    /// Writes `value` as a decimal string.
    pub fn serialize<S: Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(value)
    }

    /// Reads a decimal string or a non-negative integer.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        deserializer.deserialize_any(super::U64Visitor)
    }
}

/// Serde helper: an optional `u64` written as a decimal JSON string (see [`u64_string`]).
///
/// Pair it with `#[serde(default, skip_serializing_if = "Option::is_none")]`.
pub mod opt_u64_string {
    use serde::{Deserializer, Serializer};

    /// Writes `Some(v)` as a decimal string and `None` as `null`.
    pub fn serialize<S: Serializer>(value: &Option<u64>, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => serializer.collect_str(v),
            None => serializer.serialize_none(),
        }
    }

    /// Reads `null`, a decimal string or a non-negative integer.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
        deserializer.deserialize_option(super::OptU64Visitor)
    }
}

struct U64Visitor;

impl<'de> de::Visitor<'de> for U64Visitor {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an unsigned 64-bit integer as a decimal string")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        Ok(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        u64::try_from(v).map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
        v.parse()
            .map_err(|_| E::invalid_value(de::Unexpected::Str(v), &self))
    }
}

struct OptU64Visitor;

impl<'de> de::Visitor<'de> for OptU64Visitor {
    type Value = Option<u64>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("null or an unsigned 64-bit integer as a decimal string")
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<u64>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<u64>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<u64>, D::Error> {
        d.deserialize_any(U64Visitor).map(Some)
    }
}

// === streaming reader ===

/// Receives the elements of a deps.json as [`read_deps`] parses them, one at a time.
///
/// The associated types choose what each element is deserialized into: the full [`Task`],
/// [`Tensor`] and [`Edge`], or any smaller `Deserialize` type (unknown fields are skipped), or
/// [`IgnoredAny`] to skip a section cheaply.
pub trait DepsSink {
    /// What each `tasks[]` entry is deserialized into.
    type Task: DepsElement;
    /// What each `tensors[]` entry is deserialized into.
    type Tensor: DepsElement;
    /// What each `edges[]` entry is deserialized into.
    type Edge: DepsElement;

    /// Called once per `tasks[]` entry, in file order.
    fn task(&mut self, task: Self::Task);
    /// Called once per `tensors[]` entry, in file order.
    fn tensor(&mut self, tensor: Self::Tensor);
    /// Called once per `edges[]` entry, in file order.
    fn edge(&mut self, edge: Self::Edge);
}

/// The sink behind [`read_deps_file`]: collects everything into a [`DepsFile`].
impl DepsSink for DepsFile {
    type Task = Task;
    type Tensor = Tensor;
    type Edge = Edge;

    fn task(&mut self, task: Task) {
        self.tasks.push(task);
    }

    fn tensor(&mut self, tensor: Tensor) {
        self.tensors.push(tensor);
    }

    fn edge(&mut self, edge: Edge) {
        self.edges.push(edge);
    }
}

/// Reading buffer size: large enough that the parser rarely waits on a read call.
const READ_BUFFER_BYTES: usize = 1 << 20;

/// Streams the deps.json at `path` into `sink` and returns what the file left unsaid.
///
/// Each element is parsed on its own and handed over before the next one is read, so memory
/// stays at what the sink keeps. Sections may come in any order and any of them may be absent
/// (the original can write an edges-only file), but at least one must be there; each absent
/// section and each element field left unknown is counted in the returned [`DepsGaps`].
/// Unknown top-level keys are skipped.
///
/// A valid file is parsed from memory a chunk at a time; anything else is read again with the
/// streaming parser of [`read_deps_from`], so errors are exactly its errors.
pub fn read_deps<S: DepsSink>(path: &Path, sink: &mut S) -> Result<DepsGaps, DepsReadError> {
    // A named pipe (or a device) is refused before it is opened: its `open` blocked for ever.
    let open = || crate::input::open_regular(path).map_err(|e| DepsReadError::io(path, "deps.json", e));
    crate::input::check_regular(path).map_err(|e| DepsReadError::io(path, "deps.json", e))?;
    let stop = match chunked::read_path(path, sink) {
        Ok(gaps) => return Ok(gaps),
        Err(stop) => stop,
    };
    let mut discard = Discard(PhantomData::<fn() -> S>);
    read_deps_from(BufReader::with_capacity(READ_BUFFER_BYTES, open()?), &mut discard)
        .map_err(|e| e.with_path(path))?;
    // Only a file that changed between the two reads gets here.
    Err(DepsReadError::invalid(
        path,
        "deps.json",
        format!(
            "reading stopped at byte {} but a second read found no error (did the file change?)",
            stop.at
        ),
    ))
}

/// A sink with the element types of `S` that keeps nothing: the second read of [`read_deps`],
/// for its error.
struct Discard<S>(PhantomData<fn() -> S>);

impl<S: DepsSink> DepsSink for Discard<S> {
    type Task = S::Task;
    type Tensor = S::Tensor;
    type Edge = S::Edge;

    fn task(&mut self, _: S::Task) {}
    fn tensor(&mut self, _: S::Tensor) {}
    fn edge(&mut self, _: S::Edge) {}
}

/// Streams a deps.json from any reader into `sink`; see [`read_deps`]. Errors name the file
/// as `<input>`, and a bad value the element and its field in it
/// (`edges[2].succ: invalid value: ...`). This is the reader of [`read_deps`]'s errors, not its
/// fast path: it takes 2 to 4 times as long.
pub fn read_deps_from<R: Read, S: DepsSink>(reader: R, sink: &mut S) -> Result<DepsGaps, DepsReadError> {
    let mut de = serde_json::Deserializer::from_reader(reader);
    let mut gaps = DepsGaps::default();
    // The element a parse error stopped in, and the field in it, for the message.
    let failed = Cell::new(None);
    let result = TopLevelSeed {
        sink,
        gaps: &mut gaps,
        failed: &failed,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    result.map_err(|e| {
        // A value of the wrong type names its field (`edges[2].succ`); malformed JSON, or a
        // field missing from the element, only the element (the column, or the message, says
        // the rest).
        let data = e.classify() == serde_json::error::Category::Data;
        let context = failed.take().map(|f: Failed| match f.field {
            Some(field) if data => f.element + &field,
            _ => f.element,
        });
        DepsReadError::json(Path::new("<input>"), "deps.json", e, context)
    })?;
    Ok(gaps)
}

/// Where a parse error stopped in a section: the element (`edges[2]`) and the path in it of the
/// value being read (`.succ`, `.args[0].type`; `None` at the element itself).
struct Failed {
    element: String,
    field: Option<String>,
}

/// Deserializes one element as a `T`, recording in `track` where in it an error stops (the
/// path a message names).
struct Tracked<'a, T> {
    track: &'a mut serde_path_to_error::Track,
    element: PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for Tracked<'_, T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        T::deserialize(serde_path_to_error::Deserializer::new(deserializer, self.track))
    }
}

/// Reads a whole deps.json into memory, with its [`DepsGaps`] in [`DepsFile::gaps`]. Fine for
/// small files and tests; use [`read_deps`] for large ones.
pub fn read_deps_file(path: &Path) -> Result<DepsFile, DepsReadError> {
    let mut file = DepsFile::default();
    file.gaps = read_deps(path, &mut file)?;
    Ok(file)
}

struct TopLevelSeed<'a, S> {
    sink: &'a mut S,
    gaps: &'a mut DepsGaps,
    failed: &'a Cell<Option<Failed>>,
}

impl<'de, S: DepsSink> DeserializeSeed<'de> for TopLevelSeed<'_, S> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, S: DepsSink> de::Visitor<'de> for TopLevelSeed<'_, S> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a deps.json object with \"tasks\", \"tensors\" and \"edges\" arrays")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        const SECTIONS: [&str; 3] = ["tasks", "tensors", "edges"];
        const ABSENT: [Gap; 3] = [Gap::NoTasksSection, Gap::NoTensorsSection, Gap::NoEdgesSection];
        let mut seen = [false; 3];
        while let Some(key) = map.next_key::<String>()? {
            let Some(section) = SECTIONS.iter().position(|s| *s == key) else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            if std::mem::replace(&mut seen[section], true) {
                return Err(de::Error::duplicate_field(SECTIONS[section]));
            }
            let gaps = &mut *self.gaps;
            let (name, failed) = (SECTIONS[section], self.failed);
            match section {
                0 => map.next_value_seed(SectionSeed::new(&mut *self.sink, gaps, S::task, name, failed))?,
                1 => map.next_value_seed(SectionSeed::new(&mut *self.sink, gaps, S::tensor, name, failed))?,
                _ => map.next_value_seed(SectionSeed::new(&mut *self.sink, gaps, S::edge, name, failed))?,
            }
        }
        if !seen.contains(&true) {
            return Err(de::Error::custom(
                "not a deps.json: none of the arrays \"tasks\", \"tensors\", \"edges\" is present",
            ));
        }
        for (present, gap) in seen.iter().zip(ABSENT) {
            self.gaps.add_if(!present, gap);
        }
        Ok(())
    }
}

/// Deserializes one array, handing each element to `push` as soon as it is parsed and
/// counting its gaps.
struct SectionSeed<'a, S, T> {
    sink: &'a mut S,
    gaps: &'a mut DepsGaps,
    push: fn(&mut S, T),
    element: PhantomData<T>,
    /// The section's name, and where to say which element a parse error stopped in.
    name: &'static str,
    failed: &'a Cell<Option<Failed>>,
}

impl<'a, S, T> SectionSeed<'a, S, T> {
    fn new(
        sink: &'a mut S,
        gaps: &'a mut DepsGaps,
        push: fn(&mut S, T),
        name: &'static str,
        failed: &'a Cell<Option<Failed>>,
    ) -> Self {
        Self {
            sink,
            gaps,
            push,
            element: PhantomData,
            name,
            failed,
        }
    }
}

impl<'de, S, T: DepsElement> DeserializeSeed<'de> for SectionSeed<'_, S, T> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, S, T: DepsElement> de::Visitor<'de> for SectionSeed<'_, S, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0usize;
        loop {
            // Every element pays for tracking its path (a key copied per field): this reader
            // costs about 1.6 times the instructions it did without, but `read_deps` reads a
            // valid file by its shortcut (`chunked`, untouched) and this one only for an error.
            let mut track = serde_path_to_error::Track::new();
            let tracked = Tracked {
                track: &mut track,
                element: PhantomData::<T>,
            };
            match seq.next_element_seed(tracked) {
                Ok(Some(element)) => {
                    element.note_gaps(self.gaps);
                    (self.push)(self.sink, element);
                    index += 1;
                }
                Ok(None) => return Ok(()),
                Err(e) => {
                    let path = track.path().to_string();
                    let field = match path.as_str() {
                        "." => None,
                        p if p.starts_with('[') => Some(p.to_string()),
                        p => Some(format!(".{p}")),
                    };
                    self.failed.set(Some(Failed {
                        element: format!("{}[{index}]", self.name),
                        field,
                    }));
                    return Err(e);
                }
            }
        }
    }
}

// === errors ===

/// Why a deps.json could not be read. Its message names the file and, for malformed JSON,
/// the 1-based line and column: `<path>:<line>:<column>: invalid deps.json: <what>`, where
/// `<what>` names the element it stopped in and the field of a bad value
/// (`edges[2].succ: invalid value: ...`).
pub type DepsReadError = crate::read_error::JsonReadError;

// === streaming writer ===

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    Tasks,
    Tensors,
    Edges,
}

impl Section {
    fn key(self) -> &'static str {
        match self {
            Section::Tasks => "tasks",
            Section::Tensors => "tensors",
            Section::Edges => "edges",
        }
    }

    fn next(self) -> Option<Section> {
        match self {
            Section::Tasks => Some(Section::Tensors),
            Section::Tensors => Some(Section::Edges),
            Section::Edges => None,
        }
    }
}

/// Writes a deps.json element by element in the original's compact one-line form:
/// `{"tasks":[...],"tensors":[...],"edges":[...]}` plus a trailing newline.
///
/// Sections are written in order; adding a task after a tensor (or a tensor after an edge) is
/// an `InvalidInput` error. Sections with no elements are written as `[]`. Call
/// [`DepsWriter::finish`] to close the object; the output is incomplete until then. Each
/// element is encoded by [`encode`] into a reused buffer and handed to `out` in one
/// `write_all`.
pub struct DepsWriter<W: Write> {
    out: W,
    section: Section,
    first_in_section: bool,
    scratch: Vec<u8>,
}

impl<W: Write> DepsWriter<W> {
    /// Starts a deps.json on `out` (writes `{"tasks":[`).
    pub fn new(mut out: W) -> io::Result<Self> {
        out.write_all(encode::SECTION_OPENINGS[Section::Tasks as usize])?;
        Ok(Self {
            out,
            section: Section::Tasks,
            first_in_section: true,
            scratch: Vec::with_capacity(1024),
        })
    }

    /// Appends one `tasks[]` entry.
    pub fn task(&mut self, task: &Task) -> io::Result<()> {
        self.element(Section::Tasks, |buf| {
            encode::task(buf, encode::TaskView::from(task))
        })
    }

    /// Appends one `tensors[]` entry.
    pub fn tensor(&mut self, tensor: &Tensor) -> io::Result<()> {
        self.element(Section::Tensors, |buf| encode::tensor(buf, &tensor.into()))
    }

    /// Appends one `edges[]` entry.
    pub fn edge(&mut self, edge: &Edge) -> io::Result<()> {
        self.element(Section::Edges, |buf| encode::edge(buf, &edge.into()))
    }

    /// Closes every remaining section and the object, flushes, and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.advance_to(Section::Edges)?;
        self.out.write_all(encode::CLOSING)?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn element(&mut self, section: Section, encode_into: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        self.advance_to(section)?;
        self.scratch.clear();
        if !self.first_in_section {
            self.scratch.push(encode::SEPARATOR);
        }
        self.first_in_section = false;
        encode_into(&mut self.scratch);
        self.out.write_all(&self.scratch)
    }

    fn advance_to(&mut self, section: Section) -> io::Result<()> {
        if section < self.section {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "deps.json sections are written in order tasks, tensors, edges: cannot add \
                     to \"{}\" after \"{}\"",
                    section.key(),
                    self.section.key()
                ),
            ));
        }
        while self.section < section {
            let next = self.section.next().expect("a later section exists");
            self.out.write_all(encode::SECTION_OPENINGS[next as usize])?;
            self.section = next;
            self.first_in_section = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> DepsFile {
        DepsFile {
            tasks: vec![
                Task {
                    task_id: 0,
                    scope: Some(Scope::Auto),
                    early_dispatch: None,
                    kernel_ids: Some(vec![-1, -1, -1]),
                    block_num: Some(1),
                    args: vec![],
                },
                Task {
                    task_id: 4_294_967_296,
                    scope: Some(Scope::Manual),
                    early_dispatch: Some(true),
                    kernel_ids: Some(vec![7, -1, -1]),
                    block_num: Some(4),
                    args: vec![
                        TaskArg {
                            idx: 0,
                            arg_type: ArgType::Input,
                            tensor_id: Some(13_451_765_318_376_212_391),
                            dtype: Some("FLOAT32".into()),
                            shape: Some(vec![16384]),
                            start_offset: Some(0),
                            strides: Some(vec![1]),
                        },
                        TaskArg {
                            idx: 1,
                            arg_type: ArgType::Output,
                            tensor_id: None,
                            dtype: None,
                            shape: None,
                            start_offset: None,
                            strides: None,
                        },
                    ],
                },
            ],
            tensors: vec![Tensor {
                tensor_id: 13_451_765_318_376_212_391,
                buffer_addr: 29_204_938_752,
                version: Some(0),
                dtype: "FLOAT32".into(),
                buffer_numel: 16384,
            }],
            edges: vec![
                Edge {
                    flags: Some(vec![DepFlag::Wait, DepFlag::Retain]),
                    ..Edge::explicit(0, 4_294_967_296)
                },
                Edge {
                    pred: 4_294_967_296,
                    succ: 4_294_967_298,
                    arg: Some(0),
                    source: EdgeSource::Tensormap,
                    flags: None,
                    overlap: Some(Overlap::Covered),
                    tensor_id: Some(9_514_117_477_438_350_967),
                    consumer_dtype: Some("FLOAT32".into()),
                    consumer_shape: Some(vec![16384]),
                    consumer_start_offset: Some(0),
                    consumer_strides: Some(vec![1]),
                    producer_shape: Some(vec![16384]),
                    producer_start_offset: Some(u64::MAX),
                    producer_strides: Some(vec![1]),
                },
            ],
            gaps: DepsGaps::default(),
        }
    }

    #[test]
    fn tensor_id_matches_the_original_fnv1a() {
        assert_eq!(tensor_id(29_204_938_752, 0), 13_451_765_318_376_212_391);
        assert_eq!(tensor_id(0, 0), 6_082_024_272_624_116_885);
        assert_eq!(tensor_id(0x1000, 0), 5_247_134_848_181_355_493);
        assert_eq!(tensor_id(0x1000, -1), 5_893_050_575_565_054_273);
    }

    #[test]
    fn task_ids_split_into_ring_and_local() {
        assert_eq!(split_task_id(4_294_967_298), (1, 2));
        assert_eq!(make_task_id(1, 2), 4_294_967_298);
        assert_eq!(split_task_id(0xFFFF_0003_0000_0007), (3, 7));
    }

    #[test]
    fn writer_output_is_compact_spec_ordered_and_round_trips() {
        let file = sample();
        let mut w = DepsWriter::new(Vec::new()).unwrap();
        for t in &file.tasks {
            w.task(t).unwrap();
        }
        for t in &file.tensors {
            w.tensor(t).unwrap();
        }
        for e in &file.edges {
            w.edge(e).unwrap();
        }
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        let expected = concat!(
            r#"{"tasks":[{"task_id":"0","scope":"auto","kernel_ids":[-1,-1,-1],"block_num":1,"args":[]},"#,
            r#"{"task_id":"4294967296","scope":"manual","early_dispatch":true,"kernel_ids":[7,-1,-1],"block_num":4,"args":["#,
            r#"{"idx":0,"type":"INPUT","tensor_id":"13451765318376212391","dtype":"FLOAT32","shape":[16384],"start_offset":"0","strides":[1]},"#,
            r#"{"idx":1,"type":"OUTPUT"}]}],"#,
            r#""tensors":[{"tensor_id":"13451765318376212391","buffer_addr":"29204938752","version":0,"dtype":"FLOAT32","buffer_numel":"16384"}],"#,
            r#""edges":[{"pred":"0","succ":"4294967296","arg":-1,"source":"explicit","flags":["wait","retain"]},"#,
            r#"{"pred":"4294967296","succ":"4294967298","arg":0,"source":"tensormap","overlap":"covered","tensor_id":"9514117477438350967","#,
            r#""consumer_dtype":"FLOAT32","consumer_shape":[16384],"consumer_start_offset":"0","consumer_strides":[1],"#,
            r#""producer_shape":[16384],"producer_start_offset":"18446744073709551615","producer_strides":[1]}]}"#,
            "\n"
        );
        assert_eq!(text, expected);
        let mut back = DepsFile::default();
        read_deps_from(text.as_bytes(), &mut back).unwrap();
        assert_eq!(back, file);
    }

    #[test]
    fn writer_closes_empty_sections_and_rejects_going_back() {
        let w = DepsWriter::new(Vec::new()).unwrap();
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(text, "{\"tasks\":[],\"tensors\":[],\"edges\":[]}\n");

        let mut w = DepsWriter::new(Vec::new()).unwrap();
        w.tensor(&sample().tensors[0]).unwrap();
        let err = w.task(&sample().tasks[0]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err
            .to_string()
            .contains("cannot add to \"tasks\" after \"tensors\""));
    }

    #[test]
    fn reader_accepts_numbers_for_u64_and_skips_unknown_keys() {
        let text = r#"{"version":3,"edges":[{"pred":1,"succ":"2","arg":0,"source":"creator","extra":[1]}],
            "tasks":[],"tensors":[]}"#;
        let file = {
            let mut f = DepsFile::default();
            read_deps_from(text.as_bytes(), &mut f).unwrap();
            f
        };
        assert_eq!(file.edges.len(), 1);
        assert_eq!((file.edges[0].pred, file.edges[0].succ), (1, 2));
        assert_eq!(file.edges[0].source, EdgeSource::Creator);
    }

    /// A sink that keeps only counts: proves elements arrive one by one with custom types.
    #[derive(Default)]
    struct Counter {
        tasks: usize,
        edges: Vec<(u64, u64)>,
    }

    #[derive(Deserialize)]
    struct Ends {
        #[serde(with = "u64_string")]
        pred: u64,
        #[serde(with = "u64_string")]
        succ: u64,
    }

    impl DepsElement for Ends {}

    impl DepsSink for Counter {
        type Task = IgnoredAny;
        type Tensor = IgnoredAny;
        type Edge = Ends;

        fn task(&mut self, _: IgnoredAny) {
            self.tasks += 1;
        }

        fn tensor(&mut self, _: IgnoredAny) {}

        fn edge(&mut self, e: Ends) {
            self.edges.push((e.pred, e.succ));
        }
    }

    #[test]
    fn reader_streams_into_custom_element_types() {
        let text = r#"{"tasks":[{"a":1},{"b":2}],"tensors":[],"edges":[
            {"pred":"3","succ":"4","arg":0,"source":"creator"},{"pred":"5","succ":"6"}]}"#;
        let mut c = Counter::default();
        read_deps_from(text.as_bytes(), &mut c).unwrap();
        assert_eq!(c.tasks, 2);
        assert_eq!(c.edges, vec![(3, 4), (5, 6)]);
    }

    #[test]
    fn malformed_json_reports_line_and_column() {
        let text = "{\"tasks\":[],\n\"tensors\":[],\n\"edges\":[{\"pred\":\"1\",}]}";
        let mut f = DepsFile::default();
        let err = read_deps_from(text.as_bytes(), &mut f).unwrap_err();
        assert_eq!((err.line(), err.column()), (Some(3), Some(22)));
        assert_eq!(
            err.to_string(),
            "<input>:3:22: invalid deps.json: edges[0]: trailing comma"
        );
        // Found by a review: on a one-line file of 100 MB the column was the only clue to
        // which element was wrong; the message now names it.
        let text =
            r#"{"tasks":[{"task_id":"1"},{"task_id":"x"}],"edges":[{"pred":"0","succ":"1"},{"pred":"0"}]}"#;
        let err = read_deps_from(text.as_bytes(), &mut DepsFile::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "<input>:1:40: invalid deps.json: tasks[1].task_id: invalid value: string \"x\", expected an \
             unsigned 64-bit integer as a decimal string"
        );
        let text = r#"{"tasks":[],"edges":[{"pred":"0","succ":"1"},{"pred":"0"}]}"#;
        let err = read_deps_from(text.as_bytes(), &mut Counter::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "<input>:1:57: invalid deps.json: edges[1]: missing field `succ`"
        );
    }

    /// A value of the wrong type is named down to its field in the element, by `read_deps`
    /// (whose shortcut stops, and whose second read gives the error) as by `read_deps_from`,
    /// whatever the sink's element types: the message said `edges[2]` and left the field to
    /// the column.
    #[test]
    fn a_bad_value_names_its_field_in_the_element() {
        let edges = r#"{"tasks":[],"edges":[{"pred":"0","succ":"1","source":"creator"},
{"pred":"0","succ":"2","source":"creator"},{"pred":"0","succ":"x","source":"creator"}]}"#;
        let tasks = r#"{"tasks":[{"task_id":"1","args":[{"idx":0,"type":"INPUT"},{"idx":1,"type":"IN"}]}]}"#;
        let optional = r#"{"edges":[{"pred":"0","succ":"1","source":"creator","tensor_id":true}]}"#;
        let expected_edges =
            "2:65: invalid deps.json: edges[2].succ: invalid value: string \"x\", expected an \
             unsigned 64-bit integer as a decimal string";
        let expected_tasks =
            "1:78: invalid deps.json: tasks[0].args[1].type: unknown variant `IN`, expected one of \
             `INPUT`, `OUTPUT`, `INOUT`, `OUTPUT_EXISTING`, `NO_DEP`, `UNKNOWN`";
        let expected_optional =
            "1:68: invalid deps.json: edges[0].tensor_id: invalid type: boolean `true`, expected \
             an unsigned 64-bit integer as a decimal string";
        let streamed = |text: &str| read_deps_from(text.as_bytes(), &mut DepsFile::default()).unwrap_err();
        assert_eq!(streamed(edges).to_string(), format!("<input>:{expected_edges}"));
        assert_eq!(
            read_deps_from(edges.as_bytes(), &mut Counter::default())
                .unwrap_err()
                .to_string(),
            format!("<input>:{expected_edges}")
        );
        assert_eq!(streamed(tasks).to_string(), format!("<input>:{expected_tasks}"));
        assert_eq!(
            streamed(optional).to_string(),
            format!("<input>:{expected_optional}")
        );

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deps.json");
        for (text, expected) in [
            (edges, expected_edges.to_string()),
            (tasks, expected_tasks.to_string()),
            (optional, expected_optional.to_string()),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = read_deps(&path, &mut DepsFile::default()).unwrap_err();
            assert_eq!(err.to_string(), format!("{}:{expected}", path.display()));
        }
        std::fs::write(&path, edges).unwrap();
        let err = read_deps(&path, &mut Counter::default()).unwrap_err();
        assert_eq!(err.to_string(), format!("{}:{expected_edges}", path.display()));
    }

    #[test]
    fn schema_errors_and_missing_sections_are_reported() {
        let mut f = DepsFile::default();
        let gaps = read_deps_from(&b"{\"tasks\":[],\"edges\":[]}"[..], &mut f).unwrap();
        assert_eq!(gaps.iter().collect::<Vec<_>>(), vec![(Gap::NoTensorsSection, 1)]);
        assert_eq!(
            gaps.notes(),
            vec!["deps.json has no tensors[]: tensors and buffer sizes are unknown".to_string()]
        );
        let err = read_deps_from(&b"{\"version\":1}"[..], &mut f).unwrap_err();
        assert_eq!(
            err.to_string(),
            "<input>:1:13: invalid deps.json: not a deps.json: none of the arrays \"tasks\", \"tensors\", \"edges\" is present"
        );
        let bad = br#"{"tasks":[{"task_id":"-3","scope":"auto","kernel_ids":[-1,-1,-1],"block_num":1}],"tensors":[],"edges":[]}"#;
        let err = read_deps_from(&bad[..], &mut f).unwrap_err();
        assert_eq!(err.line(), Some(1));
        assert!(
            err.to_string().contains(
                "invalid value: string \"-3\", expected an unsigned 64-bit integer as a decimal string"
            ),
            "{err}"
        );
        let err = read_deps_from(&b"{\"tasks\":[]} x"[..], &mut f).unwrap_err();
        assert!(err.to_string().starts_with("<input>:1:"), "{err}");
    }

    /// Everything the original's writers can leave out or spell differently is read, and
    /// counted.
    #[test]
    fn the_originals_liberties_are_read_and_counted() {
        let text = r#"{"edges":[
            {"pred":"1","succ":"2","source":"unknown"},
            {"pred":"1","succ":"3","arg":0,"source":"tensormap","overlap":"no_overlap"},
            {"pred":"1","succ":"3","arg":1,"source":"tensormap","overlap":"unknown"}],
          "tasks":[{"task_id":"2"},{"task_id":"3","scope":"auto","kernel_ids":[-1,4],"block_num":2}],
          "tensors":[{"tensor_id":"5","buffer_addr":"4096","dtype":"INT8","buffer_numel":"16"}]}"#;
        let mut f = DepsFile::default();
        let gaps = read_deps_from(text.as_bytes(), &mut f).unwrap();
        assert_eq!(f.edges[0].source, EdgeSource::Unknown);
        assert_eq!(f.edges[0].arg, None);
        assert_eq!(f.edges[1].overlap, Some(Overlap::NoOverlap));
        assert_eq!(f.edges[2].overlap, Some(Overlap::Unknown));
        assert_eq!((f.tasks[0].scope, f.tasks[0].kernel_slots()), (None, None));
        assert_eq!(f.tasks[1].kernel_ids.as_deref(), Some(&[-1, 4][..]));
        assert_eq!(f.tasks[1].kernel_slots(), None);
        assert_eq!(f.tensors[0].version, None);
        assert_eq!(
            gaps.iter().collect::<Vec<_>>(),
            vec![
                (Gap::TaskWithoutScope, 1),
                (Gap::TaskWithoutKernelIds, 1),
                (Gap::KernelIdsOfOtherLength, 1),
                (Gap::TaskWithoutBlockNum, 1),
                (Gap::TensorWithoutVersion, 1),
                (Gap::EdgeWithoutArg, 1),
                (Gap::UnknownSource, 1),
                (Gap::UnknownOverlap, 1),
            ]
        );
        assert_eq!(
            gaps.notes()[1],
            "deps.json has no kernel_ids for 1 task(s): their kernels and task names are unknown"
        );
        // Written back, the file says no more than it did.
        let mut w = DepsWriter::new(Vec::new()).unwrap();
        w.task(&f.tasks[0]).unwrap();
        w.tensor(&f.tensors[0]).unwrap();
        w.edge(&f.edges[0]).unwrap();
        let back = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(
            back,
            concat!(
                r#"{"tasks":[{"task_id":"2","args":[]}],"#,
                r#""tensors":[{"tensor_id":"5","buffer_addr":"4096","dtype":"INT8","buffer_numel":"16"}],"#,
                r#""edges":[{"pred":"1","succ":"2","source":"unknown"}]}"#,
                "\n"
            )
        );
    }

    #[test]
    fn an_edges_only_file_reads_with_two_absent_sections() {
        let mut f = DepsFile::default();
        let gaps = read_deps_from(
            &br#"{"edges":[{"pred":"0","succ":"1","arg":-1,"source":"explicit"}]}"#[..],
            &mut f,
        )
        .unwrap();
        assert_eq!(f.edges.len(), 1);
        assert!(gaps.has(Gap::NoTasksSection) && gaps.has(Gap::NoTensorsSection));
        assert!(!gaps.has(Gap::NoEdgesSection));
    }

    #[test]
    fn missing_file_error_names_the_path() {
        let path = Path::new("/nonexistent/dir/deps.json");
        let err = read_deps_file(path).unwrap_err();
        assert_eq!(err.path(), path);
        assert!(err.io_error().is_some());
        assert!(err
            .to_string()
            .starts_with("/nonexistent/dir/deps.json: cannot read deps.json: "));
    }
}
