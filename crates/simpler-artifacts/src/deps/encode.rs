//! The one formatter of deps.json: element encoders and the bytes around the sections.
//!
//! Every deps.json any command writes is formatted here, by [`DepsWriter`](super::DepsWriter)
//! (from the owned [`Task`], [`Tensor`] and [`Edge`]) and by the runtime's dep_gen graph writer
//! (from its own tensors, through the borrowed views below). Reading stays with serde.
//!
//! # What it writes
//!
//! Exactly what `serde_json::to_writer` writes for the owned types: compact, fields in
//! declaration order, `None` fields omitted, 64-bit unsigned fields as decimal strings, strings
//! escaped as serde_json escapes them. The proptest in `tests/encode.rs` (of this crate) checks
//! that against serde_json for random values of every field and variant.
//!
//! # Why not serde_json
//!
//! The runtime encodes millions of elements straight from its own tensors. Building a `Task`
//! or `Edge` first would allocate several vectors per element; the views here borrow the
//! runtime's slices, and the encoder appends to a reused byte buffer with `itoa`.
//!
//! # Framing
//!
//! A file is [`SECTION_OPENINGS`]`[0]`, the task elements separated by `,`, then
//! [`SECTION_OPENINGS`]`[1]`, the tensors, [`SECTION_OPENINGS`]`[2]`, the edges, and
//! [`CLOSING`].

use super::{ArgType, DepFlag, Edge, EdgeSource, Overlap, Scope, Task, TaskArg, Tensor};

/// The bytes that open each section, in file order (`tasks`, `tensors`, `edges`). The first
/// also opens the object; the others also close the previous section.
pub const SECTION_OPENINGS: [&[u8]; 3] = [b"{\"tasks\":[", b"],\"tensors\":[", b"],\"edges\":["];

/// The bytes that close the last section and the object, with the trailing newline.
pub const CLOSING: &[u8] = b"]}\n";

/// The byte between two elements of one section.
pub const SEPARATOR: u8 = b',';

// === borrowed views ===

/// The geometry of one tensor slice as deps.json writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliceView<'a> {
    /// Element type name (`FLOAT32`, ...).
    pub dtype: &'a str,
    /// Per-dimension element count.
    pub shape: &'a [u32],
    /// Element offset into the buffer.
    pub start_offset: u64,
    /// Per-dimension stride in elements.
    pub strides: &'a [u32],
}

/// A borrowed [`TaskArg`]; the fields mean the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgView<'a> {
    /// Argument slot index.
    pub idx: i32,
    /// How the task uses the argument.
    pub arg_type: ArgType,
    /// Identity of the tensor; `None` is omitted.
    pub tensor_id: Option<u64>,
    /// Element type name; `None` is omitted.
    pub dtype: Option<&'a str>,
    /// Slice shape; `None` is omitted.
    pub shape: Option<&'a [u32]>,
    /// Slice element offset; `None` is omitted.
    pub start_offset: Option<u64>,
    /// Slice strides; `None` is omitted.
    pub strides: Option<&'a [u32]>,
}

impl<'a> ArgView<'a> {
    /// An argument with only `idx` and `type` (how `OUTPUT` slots are written).
    pub fn bare(idx: i32, arg_type: ArgType) -> Self {
        ArgView {
            idx,
            arg_type,
            tensor_id: None,
            dtype: None,
            shape: None,
            start_offset: None,
            strides: None,
        }
    }

    /// An argument with its tensor id and slice.
    pub fn with_slice(idx: i32, arg_type: ArgType, tensor_id: u64, slice: SliceView<'a>) -> Self {
        ArgView {
            idx,
            arg_type,
            tensor_id: Some(tensor_id),
            dtype: Some(slice.dtype),
            shape: Some(slice.shape),
            start_offset: Some(slice.start_offset),
            strides: Some(slice.strides),
        }
    }
}

impl<'a> From<&'a TaskArg> for ArgView<'a> {
    fn from(arg: &'a TaskArg) -> Self {
        // Destructured so that a new field does not compile until it is encoded.
        let TaskArg {
            idx,
            arg_type,
            tensor_id,
            dtype,
            shape,
            start_offset,
            strides,
        } = arg;
        ArgView {
            idx: *idx,
            arg_type: *arg_type,
            tensor_id: *tensor_id,
            dtype: dtype.as_deref(),
            shape: shape.as_deref(),
            start_offset: *start_offset,
            strides: strides.as_deref(),
        }
    }
}

/// A [`Task`] whose arguments come from an iterator of [`ArgView`]s; `None` fields are
/// omitted (this runtime always sets them; a task read from the original's file may not).
#[derive(Debug, Clone)]
pub struct TaskView<'k, A> {
    /// Raw task id.
    pub task_id: u64,
    /// Auto or manual scope.
    pub scope: Option<Scope>,
    /// Early dispatch.
    pub early_dispatch: Option<bool>,
    /// Kernel id per subslot (`[aic, aiv0, aiv1]` in every file this runtime writes).
    pub kernel_ids: Option<&'k [i32]>,
    /// SPMD logical block count.
    pub block_num: Option<u32>,
    /// The arguments, in slot order: anything that iterates over [`ArgView`]s or `&TaskArg`s.
    pub args: A,
}

impl<'k, A> TaskView<'k, A> {
    /// The same task with other arguments.
    pub fn with_args<B>(self, args: B) -> TaskView<'k, B> {
        TaskView {
            task_id: self.task_id,
            scope: self.scope,
            early_dispatch: self.early_dispatch,
            kernel_ids: self.kernel_ids,
            block_num: self.block_num,
            args,
        }
    }
}

impl<'a> From<&'a Task> for TaskView<'a, &'a [TaskArg]> {
    fn from(task: &'a Task) -> Self {
        let Task {
            task_id,
            scope,
            early_dispatch,
            kernel_ids,
            block_num,
            args,
        } = task;
        TaskView {
            task_id: *task_id,
            scope: *scope,
            early_dispatch: *early_dispatch,
            kernel_ids: kernel_ids.as_deref(),
            block_num: *block_num,
            args,
        }
    }
}

/// A borrowed [`Tensor`]; the fields mean the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorView<'a> {
    /// Tensor id.
    pub tensor_id: u64,
    /// Device address of the buffer.
    pub buffer_addr: u64,
    /// Generation tag; `None` is omitted.
    pub version: Option<i32>,
    /// Element type name.
    pub dtype: &'a str,
    /// Element count of the whole buffer.
    pub buffer_numel: u64,
}

impl<'a> From<&'a Tensor> for TensorView<'a> {
    fn from(t: &'a Tensor) -> Self {
        let Tensor {
            tensor_id,
            buffer_addr,
            version,
            dtype,
            buffer_numel,
        } = t;
        TensorView {
            tensor_id: *tensor_id,
            buffer_addr: *buffer_addr,
            version: *version,
            dtype,
            buffer_numel: *buffer_numel,
        }
    }
}

/// A borrowed [`Edge`]; the fields mean the same, and `None` fields are omitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeView<'a> {
    /// Producer task id.
    pub pred: u64,
    /// Consumer task id.
    pub succ: u64,
    /// Consumer argument slot; `-1` for explicit edges.
    pub arg: Option<i32>,
    /// Where the edge came from.
    pub source: EdgeSource,
    /// Dependency flags.
    pub flags: Option<&'a [DepFlag]>,
    /// How the slices overlap.
    pub overlap: Option<Overlap>,
    /// The tensor.
    pub tensor_id: Option<u64>,
    /// Consumer element type.
    pub consumer_dtype: Option<&'a str>,
    /// Consumer slice shape.
    pub consumer_shape: Option<&'a [u32]>,
    /// Consumer slice element offset.
    pub consumer_start_offset: Option<u64>,
    /// Consumer slice strides.
    pub consumer_strides: Option<&'a [u32]>,
    /// Producer slice shape.
    pub producer_shape: Option<&'a [u32]>,
    /// Producer slice element offset.
    pub producer_start_offset: Option<u64>,
    /// Producer slice strides.
    pub producer_strides: Option<&'a [u32]>,
}

impl<'a> EdgeView<'a> {
    /// An edge with only the four required fields.
    pub fn new(pred: u64, succ: u64, arg: i32, source: EdgeSource) -> Self {
        EdgeView {
            pred,
            succ,
            arg: Some(arg),
            source,
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

    /// Sets `flags`.
    pub fn with_flags(self, flags: &'a [DepFlag]) -> Self {
        EdgeView {
            flags: Some(flags),
            ..self
        }
    }

    /// Sets `tensor_id` and the four `consumer_*` fields.
    pub fn with_consumer(self, tensor_id: u64, consumer: SliceView<'a>) -> Self {
        EdgeView {
            tensor_id: Some(tensor_id),
            consumer_dtype: Some(consumer.dtype),
            consumer_shape: Some(consumer.shape),
            consumer_start_offset: Some(consumer.start_offset),
            consumer_strides: Some(consumer.strides),
            ..self
        }
    }

    /// Sets `overlap` and the three `producer_*` fields (deps.json has no producer dtype, so
    /// `producer.dtype` is not written).
    pub fn with_producer(self, overlap: Overlap, producer: SliceView<'a>) -> Self {
        EdgeView {
            overlap: Some(overlap),
            producer_shape: Some(producer.shape),
            producer_start_offset: Some(producer.start_offset),
            producer_strides: Some(producer.strides),
            ..self
        }
    }
}

impl<'a> From<&'a Edge> for EdgeView<'a> {
    fn from(e: &'a Edge) -> Self {
        let Edge {
            pred,
            succ,
            arg,
            source,
            flags,
            overlap,
            tensor_id,
            consumer_dtype,
            consumer_shape,
            consumer_start_offset,
            consumer_strides,
            producer_shape,
            producer_start_offset,
            producer_strides,
        } = e;
        EdgeView {
            pred: *pred,
            succ: *succ,
            arg: *arg,
            source: *source,
            flags: flags.as_deref(),
            overlap: *overlap,
            tensor_id: *tensor_id,
            consumer_dtype: consumer_dtype.as_deref(),
            consumer_shape: consumer_shape.as_deref(),
            consumer_start_offset: *consumer_start_offset,
            consumer_strides: consumer_strides.as_deref(),
            producer_shape: producer_shape.as_deref(),
            producer_start_offset: *producer_start_offset,
            producer_strides: producer_strides.as_deref(),
        }
    }
}

// === encoders ===

/// Appends one `tasks[]` element to `out`.
pub fn task<'a, A>(out: &mut Vec<u8>, task: TaskView<'_, A>)
where
    A: IntoIterator,
    A::Item: Into<ArgView<'a>>,
{
    let mut j = Out(out);
    j.raw(b"{\"task_id\":").u64_str(task.task_id);
    if let Some(scope) = task.scope {
        j.raw(b",\"scope\":").raw(scope_name(scope));
    }
    if let Some(early) = task.early_dispatch {
        j.raw(if early {
            b",\"early_dispatch\":true"
        } else {
            b",\"early_dispatch\":false"
        });
    }
    if let Some(ids) = task.kernel_ids {
        j.raw(b",\"kernel_ids\":[");
        for (i, k) in ids.iter().enumerate() {
            if i > 0 {
                j.raw(b",");
            }
            j.int(*k);
        }
        j.raw(b"]");
    }
    if let Some(blocks) = task.block_num {
        j.raw(b",\"block_num\":").int(blocks);
    }
    j.raw(b",\"args\":[");
    for (i, arg) in task.args.into_iter().enumerate() {
        let arg: ArgView<'a> = arg.into();
        if i > 0 {
            j.raw(b",");
        }
        j.raw(b"{\"idx\":").int(arg.idx);
        j.raw(b",\"type\":").raw(arg_type_name(arg.arg_type));
        if let Some(v) = arg.tensor_id {
            j.raw(b",\"tensor_id\":").u64_str(v);
        }
        if let Some(v) = arg.dtype {
            j.raw(b",\"dtype\":").str(v);
        }
        if let Some(v) = arg.shape {
            j.raw(b",\"shape\":").u32s(v);
        }
        if let Some(v) = arg.start_offset {
            j.raw(b",\"start_offset\":").u64_str(v);
        }
        if let Some(v) = arg.strides {
            j.raw(b",\"strides\":").u32s(v);
        }
        j.raw(b"}");
    }
    j.raw(b"]}");
}

/// Appends one `tensors[]` element to `out`.
pub fn tensor(out: &mut Vec<u8>, t: &TensorView<'_>) {
    let mut j = Out(out);
    j.raw(b"{\"tensor_id\":")
        .u64_str(t.tensor_id)
        .raw(b",\"buffer_addr\":")
        .u64_str(t.buffer_addr);
    if let Some(v) = t.version {
        j.raw(b",\"version\":").int(v);
    }
    j.raw(b",\"dtype\":")
        .str(t.dtype)
        .raw(b",\"buffer_numel\":")
        .u64_str(t.buffer_numel)
        .raw(b"}");
}

/// Appends one `edges[]` element to `out`.
pub fn edge(out: &mut Vec<u8>, e: &EdgeView<'_>) {
    let mut j = Out(out);
    j.raw(b"{\"pred\":").u64_str(e.pred);
    j.raw(b",\"succ\":").u64_str(e.succ);
    if let Some(arg) = e.arg {
        j.raw(b",\"arg\":").int(arg);
    }
    j.raw(b",\"source\":").raw(source_name(e.source));
    if let Some(flags) = e.flags {
        j.raw(b",\"flags\":[");
        for (i, f) in flags.iter().enumerate() {
            if i > 0 {
                j.raw(b",");
            }
            j.raw(flag_name(*f));
        }
        j.raw(b"]");
    }
    if let Some(v) = e.overlap {
        j.raw(b",\"overlap\":").raw(overlap_name(v));
    }
    if let Some(v) = e.tensor_id {
        j.raw(b",\"tensor_id\":").u64_str(v);
    }
    if let Some(v) = e.consumer_dtype {
        j.raw(b",\"consumer_dtype\":").str(v);
    }
    if let Some(v) = e.consumer_shape {
        j.raw(b",\"consumer_shape\":").u32s(v);
    }
    if let Some(v) = e.consumer_start_offset {
        j.raw(b",\"consumer_start_offset\":").u64_str(v);
    }
    if let Some(v) = e.consumer_strides {
        j.raw(b",\"consumer_strides\":").u32s(v);
    }
    if let Some(v) = e.producer_shape {
        j.raw(b",\"producer_shape\":").u32s(v);
    }
    if let Some(v) = e.producer_start_offset {
        j.raw(b",\"producer_start_offset\":").u64_str(v);
    }
    if let Some(v) = e.producer_strides {
        j.raw(b",\"producer_strides\":").u32s(v);
    }
    j.raw(b"}");
}

// === enum names, quoted ===

fn scope_name(s: Scope) -> &'static [u8] {
    match s {
        Scope::Auto => b"\"auto\"",
        Scope::Manual => b"\"manual\"",
    }
}

fn arg_type_name(t: ArgType) -> &'static [u8] {
    match t {
        ArgType::Input => b"\"INPUT\"",
        ArgType::Output => b"\"OUTPUT\"",
        ArgType::Inout => b"\"INOUT\"",
        ArgType::OutputExisting => b"\"OUTPUT_EXISTING\"",
        ArgType::NoDep => b"\"NO_DEP\"",
    }
}

fn source_name(s: EdgeSource) -> &'static [u8] {
    match s {
        EdgeSource::Explicit => b"\"explicit\"",
        EdgeSource::Creator => b"\"creator\"",
        EdgeSource::Tensormap => b"\"tensormap\"",
        EdgeSource::Unknown => b"\"unknown\"",
    }
}

fn overlap_name(o: Overlap) -> &'static [u8] {
    match o {
        Overlap::Covered => b"\"covered\"",
        Overlap::Other => b"\"other\"",
        Overlap::NoOverlap => b"\"no_overlap\"",
        Overlap::Unknown => b"\"unknown\"",
    }
}

fn flag_name(f: DepFlag) -> &'static [u8] {
    match f {
        DepFlag::Wait => b"\"wait\"",
        DepFlag::Retain => b"\"retain\"",
    }
}

// === byte appender ===

/// Appends JSON fragments to a byte buffer.
struct Out<'a>(&'a mut Vec<u8>);

impl Out<'_> {
    #[inline]
    fn raw(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }

    /// An integer. Single digits (most indices, shapes, strides and kernel ids) are one byte
    /// pushed; the rest go through `itoa` (whose variable-length copy is a `memcpy` call).
    #[inline]
    fn int<I: itoa::Integer + Copy>(&mut self, v: I) -> &mut Self
    where
        u8: TryFrom<I>,
    {
        match u8::try_from(v) {
            Ok(d) if d < 10 => self.0.push(b'0' + d),
            _ => self.0.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
        }
        self
    }

    /// A `u64` as a decimal JSON string (what `u64_string` serializes).
    #[inline]
    fn u64_str(&mut self, v: u64) -> &mut Self {
        self.0.push(b'"');
        self.int(v);
        self.0.push(b'"');
        self
    }

    fn u32s(&mut self, v: &[u32]) -> &mut Self {
        self.0.push(b'[');
        for (i, x) in v.iter().enumerate() {
            if i > 0 {
                self.0.push(b',');
            }
            self.int(*x);
        }
        self.0.push(b']');
        self
    }

    /// A JSON string, escaped exactly as serde_json escapes: `"`, `\` and the control
    /// characters below 0x20 (`\b \t \n \f \r` by name, the rest as `\u00xx`); everything else,
    /// non-ASCII included, is copied as is.
    #[inline]
    fn str(&mut self, s: &str) -> &mut Self {
        self.0.push(b'"');
        let bytes = s.as_bytes();
        if bytes.iter().all(|&b| b >= 0x20 && b != b'"' && b != b'\\') {
            self.0.extend_from_slice(bytes);
        } else {
            self.escaped(bytes);
        }
        self.0.push(b'"');
        self
    }

    #[cold]
    fn escaped(&mut self, bytes: &[u8]) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut run = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let short = match b {
                b'"' => b'"',
                b'\\' => b'\\',
                0x08 => b'b',
                0x09 => b't',
                0x0A => b'n',
                0x0C => b'f',
                0x0D => b'r',
                0x00..=0x1F => b'u',
                _ => continue,
            };
            self.0.extend_from_slice(&bytes[run..i]);
            run = i + 1;
            if short == b'u' {
                self.0.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xF)],
                ]);
            } else {
                self.0.extend_from_slice(&[b'\\', short]);
            }
        }
        self.0.extend_from_slice(&bytes[run..]);
    }
}
