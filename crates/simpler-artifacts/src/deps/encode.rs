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
//! runtime's slices, and the encoder appends to a reused byte buffer through a stack stage
//! (see `Out`: the fill level stays in a register, integers are written in place).
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
    encode_task(out, task, None);
}

/// [`task`] through `templates`, which the encoder of a stream of tasks keeps from one task to
/// the next: the same bytes, copied where an argument matches the last one at its position.
pub fn task_with_templates<'a, A>(out: &mut Vec<u8>, task: TaskView<'_, A>, templates: &mut ArgTemplates)
where
    A: IntoIterator,
    A::Item: Into<ArgView<'a>>,
{
    encode_task(out, task, Some(templates));
}

#[inline(always)]
fn encode_task<'a, A>(out: &mut Vec<u8>, task: TaskView<'_, A>, mut templates: Option<&mut ArgTemplates>)
where
    A: IntoIterator,
    A::Item: Into<ArgView<'a>>,
{
    let mut j = Out::new(out);
    j.raw(b"{\"task_id\":").u64_str(task.task_id);
    if let Some(scope) = task.scope {
        scope_name(j.raw(b",\"scope\":"), scope);
    }
    if let Some(early) = task.early_dispatch {
        if early {
            j.raw(b",\"early_dispatch\":true");
        } else {
            j.raw(b",\"early_dispatch\":false");
        }
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
        match templates.as_deref_mut() {
            Some(t) => t.write(&mut j, i, &arg),
            None => {
                arg_head(&mut j, &arg);
                if let Some(v) = arg.start_offset {
                    j.int(v);
                }
                arg_tail(&mut j, &arg);
            }
        }
    }
    j.raw(b"]}");
}

/// An argument's bytes up to its start offset's digits: through `"start_offset":"` when it has
/// one, else through its shape.
#[inline(always)]
fn arg_head(j: &mut Out<'_>, arg: &ArgView<'_>) {
    j.raw(b"{\"idx\":").int(arg.idx);
    arg_type_name(j.raw(b",\"type\":"), arg.arg_type);
    if let Some(v) = arg.tensor_id {
        j.raw(b",\"tensor_id\":").u64_str(v);
    }
    if let Some(v) = arg.dtype {
        j.raw(b",\"dtype\":").str(v);
    }
    if let Some(v) = arg.shape {
        j.raw(b",\"shape\":").u32s(v);
    }
    if arg.start_offset.is_some() {
        j.raw(b",\"start_offset\":\"");
    }
}

/// An argument's bytes after its start offset's digits (see [`arg_head`]).
#[inline(always)]
fn arg_tail(j: &mut Out<'_>, arg: &ArgView<'_>) {
    if arg.start_offset.is_some() {
        j.raw(b"\"");
    }
    if let Some(v) = arg.strides {
        j.raw(b",\"strides\":").u32s(v);
    }
    j.raw(b"}");
}

/// The encoded form of the last argument seen at each argument position, split around its
/// start offset ([`task_with_templates`]): a task whose arguments differ from the previous
/// task's in their offsets only (the same tensors, sliced the same way, elsewhere: the usual
/// stream of a loop) copies their bytes instead of formatting them again. Formatting the 20-digit
/// tensor ids, the shapes and the strides was most of a task element's encoding.
#[derive(Debug, Default)]
pub struct ArgTemplates {
    slots: Vec<ArgTemplate>,
}

/// One position's last argument: what it was, and its bytes before and after the offset.
#[derive(Debug, Default)]
struct ArgTemplate {
    idx: i32,
    arg_type: Option<ArgType>,
    tensor_id: Option<u64>,
    dtype: Option<String>,
    shape: Option<Vec<u32>>,
    has_offset: bool,
    strides: Option<Vec<u32>>,
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl ArgTemplate {
    /// True when `arg` encodes as this template around its own start offset.
    #[inline]
    fn fits(&self, arg: &ArgView<'_>) -> bool {
        self.arg_type == Some(arg.arg_type)
            && self.idx == arg.idx
            && self.tensor_id == arg.tensor_id
            && self.has_offset == arg.start_offset.is_some()
            && self.dtype.as_deref() == arg.dtype
            && self.shape.as_deref() == arg.shape
            && self.strides.as_deref() == arg.strides
    }

    /// Becomes the template of `arg`.
    #[cold]
    fn learn(&mut self, arg: &ArgView<'_>) {
        self.idx = arg.idx;
        self.arg_type = Some(arg.arg_type);
        self.tensor_id = arg.tensor_id;
        self.dtype = arg.dtype.map(str::to_owned);
        self.shape = arg.shape.map(<[u32]>::to_vec);
        self.has_offset = arg.start_offset.is_some();
        self.strides = arg.strides.map(<[u32]>::to_vec);
        self.head.clear();
        arg_head(&mut Out::new(&mut self.head), arg);
        self.tail.clear();
        arg_tail(&mut Out::new(&mut self.tail), arg);
    }
}

impl ArgTemplates {
    /// No template yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes `arg`, the argument at `position`, through its template (learnt first when the
    /// last argument there was another).
    #[inline]
    fn write(&mut self, j: &mut Out<'_>, position: usize, arg: &ArgView<'_>) {
        if position >= self.slots.len() {
            self.slots.resize_with(position + 1, ArgTemplate::default);
        }
        let t = &mut self.slots[position];
        if !t.fits(arg) {
            t.learn(arg);
        }
        j.bytes(&t.head);
        if let Some(v) = arg.start_offset {
            j.int(v);
        }
        j.bytes(&t.tail);
    }
}

/// Appends one `tensors[]` element to `out`.
pub fn tensor(out: &mut Vec<u8>, t: &TensorView<'_>) {
    let mut j = Out::new(out);
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
    let mut j = Out::new(out);
    j.raw(b"{\"pred\":").u64_str(e.pred);
    j.raw(b",\"succ\":").u64_str(e.succ);
    if let Some(arg) = e.arg {
        j.raw(b",\"arg\":").int(arg);
    }
    source_name(j.raw(b",\"source\":"), e.source);
    if let Some(flags) = e.flags {
        j.raw(b",\"flags\":[");
        for (i, f) in flags.iter().enumerate() {
            if i > 0 {
                j.raw(b",");
            }
            flag_name(&mut j, *f);
        }
        j.raw(b"]");
    }
    if let Some(v) = e.overlap {
        overlap_name(j.raw(b",\"overlap\":"), v);
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

// Each writes its literal itself (a constant-size copy), not a slice of run-time length.

#[inline(always)]
fn scope_name<'o, 'a>(j: &'o mut Out<'a>, s: Scope) -> &'o mut Out<'a> {
    match s {
        Scope::Auto => j.raw(b"\"auto\""),
        Scope::Manual => j.raw(b"\"manual\""),
    }
}

#[inline(always)]
fn arg_type_name<'o, 'a>(j: &'o mut Out<'a>, t: ArgType) -> &'o mut Out<'a> {
    match t {
        ArgType::Input => j.raw(b"\"INPUT\""),
        ArgType::Output => j.raw(b"\"OUTPUT\""),
        ArgType::Inout => j.raw(b"\"INOUT\""),
        ArgType::OutputExisting => j.raw(b"\"OUTPUT_EXISTING\""),
        ArgType::NoDep => j.raw(b"\"NO_DEP\""),
    }
}

#[inline(always)]
fn source_name<'o, 'a>(j: &'o mut Out<'a>, s: EdgeSource) -> &'o mut Out<'a> {
    match s {
        EdgeSource::Explicit => j.raw(b"\"explicit\""),
        EdgeSource::Creator => j.raw(b"\"creator\""),
        EdgeSource::Tensormap => j.raw(b"\"tensormap\""),
        EdgeSource::Unknown => j.raw(b"\"unknown\""),
    }
}

#[inline(always)]
fn overlap_name<'o, 'a>(j: &'o mut Out<'a>, o: Overlap) -> &'o mut Out<'a> {
    match o {
        Overlap::Covered => j.raw(b"\"covered\""),
        Overlap::Other => j.raw(b"\"other\""),
        Overlap::NoOverlap => j.raw(b"\"no_overlap\""),
        Overlap::Unknown => j.raw(b"\"unknown\""),
    }
}

#[inline(always)]
fn flag_name<'o, 'a>(j: &'o mut Out<'a>, f: DepFlag) -> &'o mut Out<'a> {
    match f {
        DepFlag::Wait => j.raw(b"\"wait\""),
        DepFlag::Retain => j.raw(b"\"retain\""),
    }
}

// === byte appender ===

/// Bytes an [`Out`] collects before it appends them to the output vector.
const STAGE: usize = 512;

/// Appends JSON fragments to a byte buffer, through a stack stage of [`STAGE`] bytes that is
/// appended to the buffer when full and when the `Out` is dropped.
///
/// Why a stage: appending each fragment with `Vec::extend_from_slice` stored the vector's
/// length after every fragment and loaded it again for the next, so the ~100 fragments of a
/// task element formed one chain of store-to-load round trips through memory (about half of
/// the encoder's time). The stage's fill level stays in a register.
struct Out<'a> {
    out: &'a mut Vec<u8>,
    stage: [u8; STAGE],
    len: usize,
}

impl<'a> Out<'a> {
    fn new(out: &'a mut Vec<u8>) -> Self {
        Out {
            out,
            stage: [0; STAGE],
            len: 0,
        }
    }

    /// Appends the stage to the output. (The call out of line gets the fill level by value:
    /// a call that took the whole `Out` by reference would keep `len` in memory everywhere.)
    #[inline(always)]
    fn flush(&mut self) {
        append(self.out, &self.stage[..self.len]);
        self.len = 0;
    }

    /// A literal (its length is a constant, so the copy is a few moves).
    #[inline(always)]
    fn raw<const N: usize>(&mut self, b: &[u8; N]) -> &mut Self {
        const { assert!(N <= STAGE) };
        if self.len + N > STAGE {
            self.flush();
        }
        self.stage[self.len..self.len + N].copy_from_slice(b);
        self.len += N;
        self
    }

    /// Bytes of run-time length (a template's part): copied into the stage when they fit,
    /// else appended after it.
    #[inline(always)]
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        if self.len + b.len() > STAGE {
            self.flush();
            if b.len() > STAGE {
                append(self.out, b);
                return self;
            }
        }
        self.stage[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
        self
    }

    /// An integer in decimal, written straight into the stage.
    ///
    /// Not `itoa`: its API hands back a `&str` in its own buffer, and copying that run-time
    /// length into the output was a `memcpy` call per integer, which cost more than the
    /// formatting (a task element has about 25 integers).
    #[inline(always)]
    fn int<I: Int>(&mut self, v: I) -> &mut Self {
        let (negative, v) = v.split();
        if negative {
            self.raw(b"-");
        }
        self.uint(v)
    }

    #[inline(always)]
    fn uint(&mut self, mut v: u64) -> &mut Self {
        const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
            2021222324252627282930313233343536373839\
            4041424344454647484950515253545556575859\
            6061626364656667686970717273747576777879\
            8081828384858687888990919293949596979899";
        let n = decimal_digits(v);
        if self.len + n > STAGE {
            self.flush();
        }
        let digits = &mut self.stage[self.len..self.len + n];
        let mut i = n;
        while v >= 100 {
            let pair = (v % 100) as usize * 2;
            v /= 100;
            i -= 2;
            digits[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if v >= 10 {
            let pair = v as usize * 2;
            digits[i - 2..i].copy_from_slice(&PAIRS[pair..pair + 2]);
        } else {
            digits[i - 1] = b'0' + v as u8;
        }
        self.len += n;
        self
    }

    /// A `u64` as a decimal JSON string (what `u64_string` serializes).
    #[inline(always)]
    fn u64_str(&mut self, v: u64) -> &mut Self {
        self.raw(b"\"").int(v).raw(b"\"")
    }

    #[inline(always)]
    fn u32s(&mut self, v: &[u32]) -> &mut Self {
        self.raw(b"[");
        for (i, x) in v.iter().enumerate() {
            if i > 0 {
                self.raw(b",");
            }
            self.int(*x);
        }
        self.raw(b"]")
    }

    /// A JSON string, escaped exactly as serde_json escapes: `"`, `\` and the control
    /// characters below 0x20 (`\b \t \n \f \r` by name, the rest as `\u00xx`); everything else,
    /// non-ASCII included, is copied as is.
    #[inline(always)]
    fn str(&mut self, s: &str) -> &mut Self {
        let bytes = s.as_bytes();
        let n = bytes.len();
        if n + 2 <= STAGE {
            // Fast path: copy while checking that nothing needs escaping.
            if self.len + n + 2 > STAGE {
                self.flush();
            }
            let at = self.len;
            let mut clean = true;
            for (d, &b) in self.stage[at + 1..at + 1 + n].iter_mut().zip(bytes) {
                if b < 0x20 || b == b'"' || b == b'\\' {
                    clean = false;
                    break;
                }
                *d = b;
            }
            if clean {
                self.stage[at] = b'"';
                self.stage[at + 1 + n] = b'"';
                self.len = at + n + 2;
                return self;
            }
        }
        self.raw(b"\"");
        self.flush();
        escaped(self.out, bytes);
        self.raw(b"\"")
    }
}

/// Appends `bytes` to `out`, escaped as [`Out::str`] says.
#[cold]
fn escaped(out: &mut Vec<u8>, bytes: &[u8]) {
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
        out.extend_from_slice(&bytes[run..i]);
        run = i + 1;
        if short == b'u' {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xF)],
            ]);
        } else {
            out.extend_from_slice(&[b'\\', short]);
        }
    }
    out.extend_from_slice(&bytes[run..]);
}

/// Appends `bytes` to `out` (out of line: see [`Out::flush`]).
#[inline(never)]
fn append(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(bytes);
}

/// The number of decimal digits of `v` (1 for 0): the bit length times log10(2) (as
/// 1233 / 4096, never above it) is the digit count or one less, and one comparison with a power
/// of ten tells which. `checked_ilog10` took about 17 instructions of compares and branches a
/// number, and a task element writes about ten.
#[inline(always)]
fn decimal_digits(v: u64) -> usize {
    const POW10: [u64; 20] = {
        let mut p = [1u64; 20];
        let mut i = 1;
        while i < 20 {
            p[i] = p[i - 1] * 10;
            i += 1;
        }
        p
    };
    // `v | 1`: 0 has the digit count of 1, and setting the low bit of an even `v` never
    // crosses a power of ten (those are even, the numbers just below them odd).
    let v = v | 1;
    let guess = ((64 - v.leading_zeros() as usize) * 1233) >> 12;
    guess + usize::from(v >= POW10[guess])
}

/// The integer types deps.json writes, as sign and magnitude.
trait Int: Copy {
    fn split(self) -> (bool, u64);
}

impl Int for u64 {
    #[inline]
    fn split(self) -> (bool, u64) {
        (false, self)
    }
}

impl Int for u32 {
    #[inline]
    fn split(self) -> (bool, u64) {
        (false, u64::from(self))
    }
}

impl Int for i32 {
    #[inline]
    fn split(self) -> (bool, u64) {
        (self < 0, u64::from(self.unsigned_abs()))
    }
}

impl Drop for Out<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Integers are written as `to_string` writes them, at every digit count and on both
    /// sides of every power of ten.
    #[test]
    fn integers_match_to_string_at_every_digit_count() {
        let mut values = vec![0, u64::MAX, u64::MAX - 1, 12_345_678_901_234_567_890];
        for d in 0..20 {
            let p = 10u64.pow(d);
            values.extend([p - 1, p, p + 1, p.saturating_mul(7).saturating_add(3)]);
        }
        for b in 0..64 {
            let p = 1u64 << b;
            values.extend([p - 1, p, p + 1, p | (p - 1)]);
        }
        for v in values {
            let mut out = Vec::new();
            Out::new(&mut out).uint(v);
            assert_eq!(String::from_utf8(out).unwrap(), v.to_string());
            assert_eq!(decimal_digits(v), v.to_string().len(), "{v}");
        }
    }

    /// An argument that differs from the last one at its position in its start offset only
    /// is written from the template, which is not learnt again; another tensor is.
    #[test]
    fn an_argument_moved_elsewhere_reuses_its_template() {
        let arg = |tensor_id, start_offset| ArgView {
            start_offset: Some(start_offset),
            ..ArgView::with_slice(
                0,
                ArgType::Input,
                tensor_id,
                SliceView {
                    dtype: "FLOAT32",
                    shape: &[4, 4],
                    start_offset,
                    strides: &[64, 1],
                },
            )
        };
        let mut templates = ArgTemplates::new();
        let mut out = Vec::new();
        let mut write = |t: &mut ArgTemplates, a: &ArgView<'_>| {
            out.clear();
            t.write(&mut Out::new(&mut out), 0, a);
            String::from_utf8(out.clone()).unwrap()
        };
        let first = write(&mut templates, &arg(7, 0));
        assert!(
            templates.slots[0].fits(&arg(7, 1234)),
            "the same argument elsewhere fits"
        );
        assert!(!templates.slots[0].fits(&arg(8, 0)), "another tensor does not");
        // Nor the same tensor with any other field of its slice changed.
        let base = arg(7, 5);
        let changed = [
            ArgView { idx: 1, ..base },
            ArgView {
                arg_type: ArgType::Inout,
                ..base
            },
            ArgView {
                dtype: Some("FLOAT16"),
                ..base
            },
            ArgView {
                dtype: Some("FLOAT3"),
                ..base
            },
            ArgView { dtype: None, ..base },
            ArgView {
                shape: Some(&[4, 5]),
                ..base
            },
            ArgView {
                shape: Some(&[4]),
                ..base
            },
            ArgView {
                shape: Some(&[4, 4, 1]),
                ..base
            },
            ArgView { shape: None, ..base },
            ArgView {
                strides: Some(&[65, 1]),
                ..base
            },
            ArgView {
                strides: Some(&[64]),
                ..base
            },
            ArgView {
                strides: None,
                ..base
            },
            ArgView {
                start_offset: None,
                ..base
            },
            ArgView {
                tensor_id: None,
                ..base
            },
        ];
        for (i, a) in changed.iter().enumerate() {
            assert!(!templates.slots[0].fits(a), "change {i} fits");
        }
        let dtype = String::from("FLOAT32");
        let same = ArgView {
            dtype: Some(&dtype),
            shape: Some(&[4, 4]),
            strides: Some(&[64, 1]),
            ..base
        };
        assert!(
            templates.slots[0].fits(&same),
            "equal contents elsewhere in memory fit"
        );
        let moved = write(&mut templates, &arg(7, 1234));
        assert_eq!(
            moved,
            first.replace("\"start_offset\":\"0\"", "\"start_offset\":\"1234\"")
        );
        let other = write(&mut templates, &arg(8, 1234));
        assert!(other.contains("\"tensor_id\":\"8\""), "{other}");
    }

    /// An argument whose head is longer than the stage (a long dtype name) encodes the same
    /// through a template as without, learnt and reused.
    #[test]
    fn a_template_longer_than_the_stage_is_written_whole() {
        let dtype = "D".repeat(STAGE + 100);
        let task = |offset: u64| TaskView {
            task_id: 1,
            scope: None,
            early_dispatch: None,
            kernel_ids: None,
            block_num: None,
            args: [ArgView::with_slice(
                0,
                ArgType::Inout,
                9,
                SliceView {
                    dtype: &dtype,
                    shape: &[2],
                    start_offset: offset,
                    strides: &[1],
                },
            )],
        };
        let mut templates = ArgTemplates::new();
        for offset in [3, 4] {
            let (mut plain, mut templated) = (Vec::new(), Vec::new());
            super::task(&mut plain, task(offset));
            task_with_templates(&mut templated, task(offset), &mut templates);
            assert_eq!(
                String::from_utf8(templated).unwrap(),
                String::from_utf8(plain).unwrap()
            );
        }
    }

    /// A number that does not fit what is left of the stage is written whole after a flush.
    #[test]
    fn a_long_number_at_the_stage_end_is_written_whole() {
        let mut out = Vec::new();
        let mut j = Out::new(&mut out);
        for _ in 0..(STAGE - 5) {
            j.raw(b"x");
        }
        j.uint(u64::MAX);
        drop(j);
        assert_eq!(out.len(), STAGE - 5 + 20);
        assert_eq!(&out[STAGE - 5..], u64::MAX.to_string().as_bytes());
    }
}
