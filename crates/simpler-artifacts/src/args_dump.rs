//! The args dump: `args_dump/args_dump.json` (one entry per captured argument) and
//! `args_dump/args.bin` (the payloads, back to back, little-endian, logical-contiguous order).
//!
//! The layout is the original's (`docs/args-dump.md`), so files from either side read here
//! and in the original's `dump_viewer.py`. Our files add three top-level counters the original
//! does not write (`truncated_bytes`, `dropped_bytes`, `complete`); files without them read as
//! 0 / unknown. A manifest is input like any other: its `bin_file` must be a plain file name
//! beside it and every payload must lie inside `args.bin` ([`ReadError::Invalid`] otherwise). Also here: element decoding for the viewer and the `.npy` writer.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The folder of the dump inside a run's output folder.
pub const DIR: &str = "args_dump";
/// The manifest's file name.
pub const JSON_FILE: &str = "args_dump.json";
/// The payload file's name.
pub const BIN_FILE: &str = "args.bin";

/// `bin_format` of the manifest.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct BinFormat {
    /// Always `logical_contiguous`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Always `little_endian`.
    pub byte_order: String,
}

impl Default for BinFormat {
    fn default() -> Self {
        BinFormat {
            kind: "logical_contiguous".into(),
            byte_order: "little_endian".into(),
        }
    }
}

/// One captured argument (an `args[]` entry), keys in the original's order.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ArgEntry {
    /// `0x%016x`: ring in bits 63..32, local id in 31..0.
    pub task_id: String,
    /// The task's active kernel ids (−1 = unknown).
    #[serde(default)]
    pub func_id: Vec<i64>,
    /// Tensors first, then scalars.
    pub arg_index: u32,
    /// `input`, `output` or `inout`.
    pub role: String,
    /// `before_dispatch` or `after_completion`.
    pub stage: String,
    /// `tensor` or `scalar`.
    #[serde(default = "tensor_kind")]
    pub kind: String,
    /// Upper-case dtype name (`FLOAT32`, ...), `UNKNOWN` otherwise.
    pub dtype: String,
    /// A scalar's value (decoded by dtype).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
    /// Row-major strides (a scalar counts as contiguous).
    #[serde(default)]
    pub is_contiguous: bool,
    /// Elements per dimension.
    #[serde(default)]
    pub shape: Vec<u64>,
    /// Strides in elements.
    #[serde(default)]
    pub strides: Vec<u64>,
    /// Offset of the first element in its buffer, in elements.
    #[serde(default)]
    pub start_offset: u64,
    /// Elements (Π shape; 1 for a scalar).
    #[serde(default)]
    pub numel: Option<u64>,
    /// Set when a scalar selection matched more than one scalar.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub arg_index_ambiguous: bool,
    /// Offset of the payload in `args.bin`. An entry with a payload must give it (the
    /// original always writes it); one without may leave it out.
    #[serde(default)]
    pub bin_offset: Option<u64>,
    /// Payload bytes kept (0: none).
    #[serde(default)]
    pub bin_size: u64,
    /// Only the first `bin_size` bytes were kept.
    #[serde(default)]
    pub truncated: bool,
    /// The payload was overwritten before the host read it (never in this runtime).
    #[serde(default)]
    pub overwritten: bool,
}

fn tensor_kind() -> String {
    "tensor".into()
}

impl ArgEntry {
    /// Elements of the argument (`numel`, else Π shape; `u64::MAX` when the product does not
    /// fit, which no payload can match).
    pub fn elements(&self) -> u64 {
        self.numel.unwrap_or_else(|| {
            self.shape
                .iter()
                .try_fold(1u64, |acc, &n| acc.checked_mul(n))
                .unwrap_or(u64::MAX)
        })
    }
    /// True for a scalar.
    pub fn is_scalar(&self) -> bool {
        self.kind == "scalar"
    }
    /// The task id as a number (`None` when it does not parse).
    pub fn task_number(&self) -> Option<u64> {
        parse_task_id(&self.task_id)
    }
}

/// Parses a task id written as hex (`0x…` or bare hex digits).
pub fn parse_task_id(s: &str) -> Option<u64> {
    let t = s.trim();
    let t = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).unwrap_or(t);
    u64::from_str_radix(t, 16).ok()
}

/// The whole manifest.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ArgsDumpManifest {
    /// `args_dump`.
    #[serde(default)]
    pub run_dir: String,
    /// How `args.bin` is laid out.
    #[serde(default)]
    pub bin_format: BinFormat,
    /// The level the run dumped at (0..=3).
    #[serde(default)]
    pub dump_args_level: u8,
    /// Entries in `args`.
    #[serde(default)]
    pub total_args: u64,
    /// Entries captured before dispatch.
    #[serde(default)]
    pub before_dispatch: u64,
    /// Entries captured after completion.
    #[serde(default)]
    pub after_completion: u64,
    /// Entries with role `input`.
    #[serde(default)]
    pub input_args: u64,
    /// Entries with role `output`.
    #[serde(default)]
    pub output_args: u64,
    /// Entries with role `inout`.
    #[serde(default)]
    pub inout_args: u64,
    /// Entries whose payload was truncated.
    #[serde(default)]
    pub truncated_args: u64,
    /// Records lost (no buffer in time): not in `args`.
    #[serde(default)]
    pub dropped_records: u64,
    /// Payloads overwritten before the host read them (always 0 here).
    #[serde(default)]
    pub dropped_overwrite: u64,
    /// `args.bin`, or `null` when no payload was written at level 3.
    #[serde(default = "default_bin")]
    pub bin_file: Option<String>,
    /// Ours: payload bytes cut from truncated entries.
    #[serde(default)]
    pub truncated_bytes: u64,
    /// Ours: payload bytes of the dropped records.
    #[serde(default)]
    pub dropped_bytes: u64,
    /// Ours: every record and byte selected was kept (`None` in the original's files).
    #[serde(default)]
    pub complete: Option<bool>,
    /// One entry per captured argument (the original's older files call it `tensors`).
    #[serde(alias = "tensors")]
    pub args: Vec<ArgEntry>,
}

fn default_bin() -> Option<String> {
    Some(BIN_FILE.into())
}

/// A dump read from disk: its folder, manifest and payload file.
#[derive(Clone, Debug)]
pub struct ArgsDump {
    /// The folder (`…/args_dump`).
    pub dir: PathBuf,
    /// The manifest.
    pub manifest: ArgsDumpManifest,
    /// The payload file, when the manifest names one.
    pub bin: Option<PathBuf>,
}

/// Why a dump could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The manifest is not valid JSON of this layout.
    Json {
        /// The file.
        path: PathBuf,
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The manifest is valid JSON but names something it may not: a `bin_file` that is not a
    /// plain file name beside it, a payload past the end of `args.bin`.
    Invalid {
        /// The manifest.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            ReadError::Json {
                path,
                line,
                column,
                message,
            } => write!(f, "{}:{line}:{column}: {message}", path.display()),
            ReadError::Invalid { path, message } => write!(f, "{}: {message}", path.display()),
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads the dump in `dir` (the folder holding `args_dump.json`).
pub fn read_dir(dir: &Path) -> Result<ArgsDump, ReadError> {
    let path = dir.join(JSON_FILE);
    regular_file(&path)?;
    let bytes = std::fs::read(&path).map_err(|source| ReadError::Io {
        path: path.clone(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = crate::input::Utf8Stop::of(&e);
        ReadError::Json {
            path: path.clone(),
            line: at.line,
            column: at.column,
            message: format!(
                "not valid UTF-8 at byte offset {}: a manifest is UTF-8 JSON",
                at.offset
            ),
        }
    })?;
    let mut manifest: ArgsDumpManifest = serde_json::from_str(&text).map_err(|e| ReadError::Json {
        path: path.clone(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    for (i, e) in manifest.args.iter_mut().enumerate() {
        // Upper-case, as the field promises: the original's tools read `float32` too, and a
        // reader that compared the name as written decoded such a scalar as 0.
        e.dtype.make_ascii_uppercase();
        // `numel` is the shape's product; one that is not would describe the payload with
        // a shape it does not have (a `.npy` of 65,536 bytes under a 1000 × 1000 header).
        let product = e.shape.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n));
        if let Some(numel) = e.numel.filter(|&n| Some(n) != product) {
            return Err(ReadError::Invalid {
                path,
                message: format!(
                    "args[{i}]: numel {numel} is not the product of its shape {:?}",
                    e.shape
                ),
            });
        }
        if let Err(message) = check_bin_size(i, e, product) {
            return Err(ReadError::Invalid { path, message });
        }
        // Found by a review: taken as 0, a missing offset showed the first payload's bytes as
        // this entry's, and `--expect` checked them.
        if e.bin_size > 0 && e.bin_offset.is_none() {
            return Err(ReadError::Invalid {
                path,
                message: format!(
                    "args[{i}]: bin_size {} but no bin_offset: where its payload starts in the \
                     payload file is unknown",
                    e.bin_size
                ),
            });
        }
        // Found by a review: an entry whose task id is not one could be listed but never
        // selected, and a shape past NumPy's 64 dimensions was exported to a `.npy` nothing
        // loads.
        // A task id without its `0x` was read as hex but listed as written (found by a
        // review: `12` was task 0x12, and `-t 0xc` suggested `12`): the format writes "0x%016x".
        if e.task_number().is_none() || !e.task_id.trim().starts_with("0x") {
            return Err(ReadError::Invalid {
                path,
                message: format!(
                    "args[{i}]: task_id `{}` is not a task id (hex, `0x0000000100000002`)",
                    e.task_id
                ),
            });
        }
        // Found by a review: an unknown role or stage was listed and compared as data, and
        // only an export, later, refused it without saying where.
        let known = [
            ("role", e.role.as_str(), &["input", "output", "inout"][..]),
            (
                "stage",
                e.stage.as_str(),
                &["before_dispatch", "after_completion"][..],
            ),
        ];
        if let Some((field, value, allowed)) = known.iter().find(|(_, v, allowed)| !allowed.contains(v)) {
            return Err(ReadError::Invalid {
                path,
                message: format!(
                    "args[{i}].{field}: `{value}` is not one of {}",
                    allowed.join(", ")
                ),
            });
        }
        if e.shape.len() > MAX_NPY_DIMS {
            return Err(ReadError::Invalid {
                path,
                message: format!(
                    "args[{i}]: a shape of {} dimensions; at most {MAX_NPY_DIMS}",
                    e.shape.len()
                ),
            });
        }
    }
    // The payload file sits beside the manifest: a plain file name, never a path (a hostile
    // manifest must not make the viewer read, and export, any file of the machine).
    let bin = match manifest.bin_file.as_deref() {
        None => None,
        Some(b)
            if !b.is_empty() && Path::new(b).file_name() == Some(std::ffi::OsStr::new(b)) && b != ".." =>
        {
            Some(dir.join(b))
        }
        Some(b) => {
            return Err(ReadError::Invalid {
                path,
                message: format!("bin_file {b:?} is not a file name beside the manifest"),
            })
        }
    };
    if bin.is_none() {
        if let Some((i, e)) = manifest.args.iter().enumerate().find(|(_, e)| e.bin_size > 0) {
            return Err(ReadError::Invalid {
                path,
                message: format!(
                    "args[{i}]: bin_size {} but bin_file is null: an entry of a dump without a payload \
                     file has bin_size 0",
                    e.bin_size
                ),
            });
        }
    }
    Ok(ArgsDump {
        dir: dir.to_path_buf(),
        manifest,
        bin,
    })
}

/// Refuses a path that is not a regular file (after symbolic links) before it is opened: a
/// FIFO named `args.bin` blocked the viewer in `open` forever, and a device is no dump
/// ([`crate::input::check_regular`], shared by every reader).
fn regular_file(path: &Path) -> Result<(), ReadError> {
    crate::input::check_regular(path).map_err(|source| open_error(path, source))
}

/// The error of [`crate::input`]'s check or open of `path`: a path that is not a regular file
/// is invalid input (`<path>: is a named pipe (FIFO), expected a regular file`).
fn open_error(path: &Path, source: std::io::Error) -> ReadError {
    match crate::input::not_regular(&source) {
        Some(what) => ReadError::Invalid {
            path: path.to_path_buf(),
            message: what.to_string(),
        },
        None => ReadError::Io {
            path: path.to_path_buf(),
            source,
        },
    }
}

/// A tensor entry's `bin_size` against its element count (`product`, the shape's; `None` when
/// it overflows) and its dtype's size: 0 (no payload), the whole tensor, or less when the entry
/// says `truncated`. A dtype without a known size is not checked; a scalar carries no payload.
fn check_bin_size(i: usize, e: &ArgEntry, product: Option<u64>) -> Result<(), String> {
    if e.is_scalar() {
        return Ok(());
    }
    let Some(size) = dtype_size(&e.dtype) else {
        return Ok(());
    };
    let Some(numel) = product else {
        return Err(format!(
            "args[{i}]: the element count of shape {:?} overflows u64",
            e.shape
        ));
    };
    let Some(full) = numel.checked_mul(size as u64) else {
        return Err(format!(
            "args[{i}]: numel {numel} × {size} bytes ({}) overflows u64",
            e.dtype
        ));
    };
    let b = e.bin_size;
    if b == 0 || b == full || (b < full && e.truncated) {
        return Ok(());
    }
    Err(format!(
        "args[{i}]: bin_size {b} does not match numel {numel} × {size} bytes ({}) = {full}: \
         expected 0, {full}, or less with truncated: true{}",
        e.dtype,
        if e.truncated { "" } else { " (truncated is false)" }
    ))
}

/// An empty buffer able to hold `n` payload bytes of `e`, or an error naming the entry and the
/// size when the memory cannot be had (a manifest's size is input: a huge `bin_size` over a
/// sparse file must not abort the process).
fn payload_buffer(bin: &Path, e: &ArgEntry, n: u64) -> Result<Vec<u8>, ReadError> {
    let mut out = Vec::new();
    let why = match usize::try_from(n) {
        Ok(n) => match out.try_reserve_exact(n) {
            Ok(()) => return Ok(out),
            Err(err) => err.to_string(),
        },
        Err(_) => "more than the address space".to_string(),
    };
    Err(ReadError::Invalid {
        path: bin.to_path_buf(),
        message: format!(
            "the payload of task {} arg {} ({n} bytes) cannot be held in memory: {why}",
            e.task_id, e.arg_index
        ),
    })
}

impl ArgsDump {
    /// The top-level counts that disagree with the entries, one message each naming both
    /// numbers (`total_args`, the stage, role and truncation counts). Warnings, not errors: a
    /// file whose counts are off still reads, and the entries are what the viewer shows.
    pub fn count_mismatches(&self) -> Vec<String> {
        let m = &self.manifest;
        let count = |f: &dyn Fn(&ArgEntry) -> bool| m.args.iter().filter(|e| f(e)).count() as u64;
        let counts = [
            ("total_args", m.total_args, m.args.len() as u64, "entries"),
            (
                "before_dispatch",
                m.before_dispatch,
                count(&|e| e.stage == "before_dispatch"),
                "entries with stage before_dispatch",
            ),
            (
                "after_completion",
                m.after_completion,
                count(&|e| e.stage == "after_completion"),
                "entries with stage after_completion",
            ),
            (
                "input_args",
                m.input_args,
                count(&|e| e.role == "input"),
                "entries with role input",
            ),
            (
                "output_args",
                m.output_args,
                count(&|e| e.role == "output"),
                "entries with role output",
            ),
            (
                "inout_args",
                m.inout_args,
                count(&|e| e.role == "inout"),
                "entries with role inout",
            ),
            (
                "truncated_args",
                m.truncated_args,
                count(&|e| e.truncated),
                "entries with truncated: true",
            ),
        ];
        counts
            .into_iter()
            .filter(|(_, said, found, _)| said != found)
            .map(|(key, said, found, what)| {
                format!(
                    "{}: {key} is {said} but args has {found} {what}",
                    self.dir.join(JSON_FILE).display()
                )
            })
            .collect()
    }

    /// The payload bytes of `e` (empty when it has none).
    pub fn payload(&self, e: &ArgEntry) -> Result<Vec<u8>, ReadError> {
        self.payload_range(e, 0, e.bin_size)
    }

    /// How many payload bytes `e` has to read: its `bin_size`, or 0 when the dump has no
    /// payload file.
    pub fn payload_len(&self, e: &ArgEntry) -> u64 {
        if self.bin.is_some() {
            e.bin_size
        } else {
            0
        }
    }

    /// `len` bytes of `e`'s payload from byte `start` on (cut at the payload's end; empty when
    /// it has none), read alone: a viewer showing one element or a payload's ends does not
    /// hold the whole payload (found by a review: one element of a 2 GB payload took 5.9 GB).
    /// The whole entry is checked against the file first, as [`ArgsDump::payload`] does.
    pub fn payload_range(&self, e: &ArgEntry, start: u64, len: u64) -> Result<Vec<u8>, ReadError> {
        use std::io::{Read, Seek, SeekFrom};
        if e.bin_size == 0 {
            return Ok(Vec::new());
        }
        let Some(bin) = &self.bin else {
            return Ok(Vec::new());
        };
        let io = |source| ReadError::Io {
            path: bin.clone(),
            source,
        };
        // Checked before the open and on the open file (a pipe put in its place blocks neither).
        let mut f = crate::input::open_regular(bin).map_err(|e| open_error(bin, e))?;
        // Sizes come from the manifest: check them against the file before allocating.
        let file_len = f.metadata().map_err(io)?.len();
        let bin_offset = e.bin_offset.unwrap_or(0);
        if bin_offset
            .checked_add(e.bin_size)
            .is_none_or(|end| end > file_len)
        {
            return Err(ReadError::Invalid {
                path: bin.clone(),
                message: format!(
                    "the payload of task {} arg {} ({} bytes at offset {}) lies past the end of the {file_len}-byte file",
                    e.task_id, e.arg_index, e.bin_size, bin_offset
                ),
            });
        }
        let len = len.min(e.bin_size.saturating_sub(start));
        if len == 0 {
            return Ok(Vec::new());
        }
        f.seek(SeekFrom::Start(bin_offset + start)).map_err(io)?;
        let mut out = payload_buffer(bin, e, len)?;
        f.take(len).read_to_end(&mut out).map_err(io)?;
        if out.len() as u64 != len {
            return Err(io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the payload of task {} arg {} ends after {} of its {} bytes",
                    e.task_id,
                    e.arg_index,
                    start + out.len() as u64,
                    e.bin_size
                ),
            )));
        }
        Ok(out)
    }
}

/// Bytes per element of a dtype name (`None` for an unknown one, and for FP4E2M1, whose
/// elements may be packed two to a byte). FP8 (the original's FP8E4M3FN, FP8E8M0) are one byte.
pub fn dtype_size(dtype: &str) -> Option<usize> {
    Some(match dtype.to_ascii_uppercase().as_str() {
        "FLOAT32" | "INT32" | "UINT32" => 4,
        "FLOAT16" | "BFLOAT16" | "INT16" | "UINT16" => 2,
        "INT8" | "UINT8" | "BOOL" | "FP8E4M3FN" | "FP8E8M0" => 1,
        "INT64" | "UINT64" => 8,
        _ => return None,
    })
}

/// True when the elements of a dtype decode to numbers ([`element`]): not for an unknown
/// dtype nor for the original's FP8/FP4 ones, which the viewers show as bytes.
pub fn decodes(dtype: &str) -> bool {
    matches!(
        dtype.to_ascii_uppercase().as_str(),
        "FLOAT32"
            | "FLOAT16"
            | "BFLOAT16"
            | "INT8"
            | "INT16"
            | "INT32"
            | "INT64"
            | "UINT8"
            | "UINT16"
            | "UINT32"
            | "UINT64"
            | "BOOL"
    )
}

fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = (h >> 10) & 0x1f;
    let frac = f64::from(h & 0x3ff);
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        0x1f if frac == 0.0 => sign * f64::INFINITY,
        0x1f => f64::NAN,
        e => sign * (1.0 + frac / 1024.0) * 2f64.powi(i32::from(e) - 15),
    }
}

/// A decoded element or scalar: integer dtypes (and BOOL, 0/1) exactly, float dtypes as f64.
/// Integers are never compared through f64 (which cannot tell 2^53 from 2^53 + 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    /// An integer dtype's value.
    Int(i128),
    /// A float dtype's value.
    Float(f64),
}

impl Number {
    /// The value as f64 (rounded for integers beyond 2^53).
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::Float(x) => write!(f, "{x}"),
        }
    }
}

impl std::str::FromStr for Number {
    type Err = String;
    /// An integer when the text is one (exactly, up to i128), a float otherwise.
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if let Ok(i) = t.parse::<i128>() {
            return Ok(Number::Int(i));
        }
        t.parse::<f64>()
            .map(Number::Float)
            .map_err(|_| format!("{s:?} is not a number"))
    }
}

/// Decodes the `size`-byte little-endian value `u` (its low bytes) of a decodable `dtype`.
fn number_of_bits(dtype: &str, u: u64) -> Option<Number> {
    use Number::{Float, Int};
    Some(match dtype.to_ascii_uppercase().as_str() {
        "FLOAT32" => Float(f64::from(f32::from_bits(u as u32))),
        "FLOAT16" => Float(f16_to_f64(u as u16)),
        "BFLOAT16" => Float(f64::from(f32::from_bits((u as u32) << 16))),
        "INT8" => Int(i128::from(u as u8 as i8)),
        "INT16" => Int(i128::from(u as u16 as i16)),
        "INT32" => Int(i128::from(u as u32 as i32)),
        "INT64" => Int(i128::from(u as i64)),
        "UINT8" | "BOOL" => Int(i128::from(u as u8)),
        "UINT16" => Int(i128::from(u as u16)),
        "UINT32" => Int(i128::from(u as u32)),
        "UINT64" => Int(i128::from(u)),
        _ => return None,
    })
}

/// Decodes element `k` of little-endian `bytes` holding `dtype` (`None` when the dtype does
/// not decode, see [`decodes`], or the bytes end before it).
pub fn number(dtype: &str, bytes: &[u8], k: usize) -> Option<Number> {
    if !decodes(dtype) {
        return None;
    }
    let size = dtype_size(dtype)?;
    let b = bytes.get(k.checked_mul(size)?..(k + 1).checked_mul(size)?)?;
    let mut a = [0u8; 8];
    a[..size].copy_from_slice(b);
    number_of_bits(dtype, u64::from_le_bytes(a))
}

/// Decodes element `k` of little-endian `bytes` holding `dtype` as f64 (`None` when the dtype
/// does not decode, see [`decodes`], or the bytes end before it).
pub fn element(dtype: &str, bytes: &[u8], k: usize) -> Option<f64> {
    number(dtype, bytes, k).map(Number::as_f64)
}

/// The most dimensions a shape may have: NumPy's limit, so that every entry exports to a
/// `.npy` that loads.
pub const MAX_NPY_DIMS: usize = 64;

/// A scalar entry's `value` decoded by its dtype: FLOAT32 as a float (the original writes NaN
/// as `null`, ±inf as `"$Inf"` / `"-$Inf"`), integer dtypes exactly (a negative value or the
/// raw u64 the original writes for the narrower ones, cut to the dtype's width), BOOL as 0/1,
/// FLOAT16 / BFLOAT16 from their raw bits. `Ok(None)`: the entry has no value; `Err`: the value
/// is not one of its dtype (or the dtype does not decode), with what was expected.
pub fn scalar_number(e: &ArgEntry) -> Result<Option<Number>, String> {
    use serde_json::Value;
    let Some(v) = &e.value else {
        return Ok(None);
    };
    let dtype = e.dtype.to_ascii_uppercase();
    if !decodes(&dtype) {
        return Err(format!("dtype {} of the scalar cannot be decoded", e.dtype));
    }
    let bad = |expected: &str| format!("value {v} is not a {dtype} value: expected {expected}");
    match (dtype.as_str(), v) {
        ("FLOAT32", Value::Null) => Ok(Some(Number::Float(f64::NAN))),
        ("FLOAT32", Value::String(t)) if t == "$Inf" => Ok(Some(Number::Float(f64::INFINITY))),
        ("FLOAT32", Value::String(t)) if t == "-$Inf" => Ok(Some(Number::Float(f64::NEG_INFINITY))),
        // A finite value beyond f32's range is not one a FLOAT32 scalar can hold (it was shown
        // as written and exported as inf).
        ("FLOAT32", Value::Number(n)) => match n.as_f64() {
            Some(f) if f.abs() > f64::from(f32::MAX) => Err(bad("a number within FLOAT32's range")),
            f => Ok(f.map(Number::Float)),
        },
        ("FLOAT32", _) => Err(bad("a number, null (NaN), \"$Inf\" or \"-$Inf\"")),
        ("BOOL", Value::Bool(b)) => Ok(Some(Number::Int(i128::from(*b)))),
        (_, Value::Null) => Ok(None),
        ("FLOAT16" | "BFLOAT16", Value::Number(n)) => match n.as_u64() {
            Some(u) => Ok(number_of_bits(&dtype, u)),
            None => n
                .as_f64()
                .map(|f| Some(Number::Float(f)))
                .ok_or_else(|| bad("its raw bits or a number")),
        },
        (_, Value::Number(n)) => {
            let bits = n.as_u64().or_else(|| n.as_i64().map(|i| i as u64));
            match bits {
                Some(u) => Ok(number_of_bits(&dtype, u)),
                None => Err(bad("an integer")),
            }
        }
        ("BOOL", _) => Err(bad("true, false or an integer")),
        _ => Err(bad("an integer")),
    }
}

/// The NumPy `descr` of a dtype name (`None` for the ones NumPy has no type for: bf16, fp8,
/// fp4, which export as raw bytes `|u1`).
pub fn npy_descr(dtype: &str) -> Option<&'static str> {
    Some(match dtype.to_ascii_uppercase().as_str() {
        "FLOAT32" => "<f4",
        "FLOAT16" => "<f2",
        "INT8" => "|i1",
        "INT16" => "<i2",
        "INT32" => "<i4",
        "INT64" => "<i8",
        "UINT8" => "|u1",
        "UINT16" => "<u2",
        "UINT32" => "<u4",
        "UINT64" => "<u8",
        "BOOL" => "|b1",
        _ => return None,
    })
}

/// Writes a `.npy` file (format version 1.0): magic, version, header length, the header dict
/// padded with spaces to a multiple of 64 bytes and ending in `\n`, then `data`. `descr` is a
/// NumPy type string (`<f4`, ...); `shape` may be empty (a 0-d array).
pub fn write_npy(w: &mut impl Write, descr: &str, shape: &[u64], data: &[u8]) -> io::Result<()> {
    let dims = match shape {
        [] => String::new(),
        [n] => format!("{n},"),
        more => more.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({dims}), }}");
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let len = u16::try_from(header.len()).map_err(|_| io::Error::other("npy header too long"))?;
    w.write_all(b"\x93NUMPY\x01\x00")?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(header.as_bytes())?;
    w.write_all(data)
}

/// Whether `name` is one `simpler dump-viewer --export` gives (`task_0x<16 hex digits>_<before|after>_
/// <in|out|inout><arg>.<npy|bin>`): the files an export replaces.
pub fn is_export_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("task_0x") else {
        return false;
    };
    let (hex, rest) = rest.split_at(rest.len().min(16));
    if hex.len() != 16 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return false;
    }
    let Some(rest) = rest
        .strip_prefix("_before_")
        .or_else(|| rest.strip_prefix("_after_"))
    else {
        return false;
    };
    let Some(rest) = ["inout", "in", "out"].iter().find_map(|r| rest.strip_prefix(r)) else {
        return false;
    };
    let Some(digits) = rest.strip_suffix(".npy").or_else(|| rest.strip_suffix(".bin")) else {
        return false;
    };
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_header_is_padded_to_64() {
        let mut v = Vec::new();
        write_npy(&mut v, "<f4", &[3], &[0u8; 12]).unwrap();
        let hlen = u16::from_le_bytes([v[8], v[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        assert_eq!(v[10 + hlen - 1], b'\n');
        let h = std::str::from_utf8(&v[10..10 + hlen]).unwrap();
        assert!(
            h.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"),
            "{h}"
        );
        assert_eq!(v.len(), 10 + hlen + 12);
    }

    #[test]
    fn elements_decode_by_dtype() {
        assert_eq!(element("FLOAT32", &47.0f32.to_le_bytes(), 0), Some(47.0));
        assert_eq!(element("FLOAT16", &[0x00, 0x3c], 0), Some(1.0));
        assert_eq!(element("BFLOAT16", &[0x40, 0x40], 0), Some(3.0));
        assert_eq!(element("INT8", &[0xff], 0), Some(-1.0));
        assert_eq!(element("FLOAT32", &[0; 4], 1), None);
        // The original's FP8/FP4 are bytes, not numbers; FP4's size is not known (packed).
        assert_eq!(element("FP8E4M3FN", &[0x38], 0), None);
        assert_eq!(element("FP8E8M0", &[0x7f], 0), None);
        assert_eq!(element("FP4E2M1", &[0x38], 0), None);
        assert_eq!(dtype_size("FP8E4M3FN"), Some(1));
        assert_eq!(dtype_size("FP4E2M1"), None);
        assert_eq!(parse_task_id("0x0000000100000002"), Some(0x1_0000_0002));
    }

    fn scalar(dtype: &str, value: serde_json::Value) -> Result<Option<Number>, String> {
        let mut e: ArgEntry = serde_json::from_str(
            r#"{"task_id":"0x0","arg_index":0,"role":"input","stage":"before_dispatch","kind":"scalar",
            "dtype":"UINT64"}"#,
        )
        .unwrap();
        e.dtype = dtype.into();
        e.value = Some(value);
        scalar_number(&e)
    }

    /// Found by a review: scalars were compared as raw bits (FLOAT32 2.0 vs 2.25 printed
    /// "this 1073741800 vs other 1074790400") and "$Inf" read as NaN.
    #[test]
    fn scalars_decode_by_dtype() {
        use serde_json::json;
        use Number::{Float, Int};
        assert_eq!(scalar("FLOAT32", json!(2.25)), Ok(Some(Float(2.25))));
        assert_eq!(scalar("FLOAT32", json!("$Inf")), Ok(Some(Float(f64::INFINITY))));
        assert_eq!(
            scalar("FLOAT32", json!("-$Inf")),
            Ok(Some(Float(f64::NEG_INFINITY)))
        );
        assert!(matches!(scalar("FLOAT32", json!(null)), Ok(Some(Float(f))) if f.is_nan()));
        assert_eq!(
            scalar("FLOAT32", json!(1e308)),
            Err("value 1e+308 is not a FLOAT32 value: expected a number within FLOAT32's range".into())
        );
        assert_eq!(
            scalar("FLOAT32", json!(f64::from(f32::MAX))),
            Ok(Some(Float(f64::from(f32::MAX))))
        );
        assert_eq!(
            scalar("FLOAT32", json!("abc")),
            Err(
                "value \"abc\" is not a FLOAT32 value: expected a number, null (NaN), \"$Inf\" or \"-$Inf\""
                    .into()
            )
        );
        assert_eq!(
            scalar("UINT64", json!(4607182418800017409u64)),
            Ok(Some(Int(4607182418800017409)))
        );
        assert_ne!(
            scalar("UINT64", json!(4607182418800017408u64)),
            scalar("UINT64", json!(4607182418800017409u64))
        );
        assert_eq!(scalar("INT32", json!(-7)), Ok(Some(Int(-7))));
        assert_eq!(scalar("INT8", json!(255)), Ok(Some(Int(-1))));
        assert_eq!(scalar("INT64", json!(u64::MAX)), Ok(Some(Int(-1))));
        assert_eq!(scalar("BOOL", json!(true)), Ok(Some(Int(1))));
        assert_eq!(scalar("FLOAT16", json!(0x3c00)), Ok(Some(Float(1.0))));
        assert_eq!(scalar("UINT32", json!(null)), Ok(None));
        assert_eq!(
            scalar("UINT32", json!(1.5)),
            Err("value 1.5 is not a UINT32 value: expected an integer".into())
        );
        assert_eq!(
            scalar("FP8E4M3FN", json!(56)),
            Err("dtype FP8E4M3FN of the scalar cannot be decoded".into())
        );
        assert_eq!("47".parse::<Number>(), Ok(Int(47)));
        assert_eq!("0.5".parse::<Number>(), Ok(Float(0.5)));
    }

    #[test]
    fn a_payload_buffer_too_large_for_memory_is_an_error() {
        let e: ArgEntry = serde_json::from_str(
            r#"{"task_id":"0x0000000000000001","arg_index":3,"role":"input","stage":"before_dispatch",
            "dtype":"UINT8"}"#,
        )
        .unwrap();
        let err = payload_buffer(Path::new("d/args.bin"), &e, 1 << 63).unwrap_err();
        assert!(
            err.to_string().starts_with(
                "d/args.bin: the payload of task 0x0000000000000001 arg 3 (9223372036854775808 bytes) \
                 cannot be held in memory: memory allocation failed"
            ),
            "{err}"
        );
        assert_eq!(payload_buffer(Path::new("x"), &e, 16).unwrap().capacity(), 16);
    }

    /// Found by a review: an entry whose task id is not one was listed but could never be
    /// selected, and a shape of 1001 dimensions was exported to a `.npy` NumPy cannot load.
    #[test]
    fn a_task_id_that_is_not_one_and_a_shape_past_numpys_limit_are_refused() {
        let entry = |task: &str, dims: usize| {
            format!(
                r#"{{"run_dir":"args_dump","bin_file":null,"args":[{{"task_id":"{task}","arg_index":0,
                "role":"input","stage":"before_dispatch","kind":"scalar","dtype":"INT32","value":1,
                "shape":{:?},"numel":1}}]}}"#,
                vec![1u64; dims]
            )
        };
        let dir = tempfile::tempdir().unwrap();
        let read = |text: String| {
            std::fs::write(dir.path().join(JSON_FILE), text).unwrap();
            read_dir(dir.path()).map(drop).map_err(|e| e.to_string())
        };
        assert_eq!(read(entry("0x0000000100000002", 64)), Ok(()));
        let err = read(entry("../../x", 1)).unwrap_err();
        assert!(
            err.ends_with("args[0]: task_id `../../x` is not a task id (hex, `0x0000000100000002`)"),
            "{err}"
        );
        let err = read(entry("0x1", 65)).unwrap_err();
        assert!(
            err.ends_with("args[0]: a shape of 65 dimensions; at most 64"),
            "{err}"
        );
        // Found by a review: `12` was read as task 0x12 but listed as `12`, and an unknown
        // role or stage was listed and compared as data.
        let err = read(entry("12", 1)).unwrap_err();
        assert!(
            err.ends_with("args[0]: task_id `12` is not a task id (hex, `0x0000000100000002`)"),
            "{err}"
        );
        let err = read(entry("0x1", 1).replace("\"input\"", "\"sideways\"")).unwrap_err();
        assert!(
            err.ends_with("args[0].role: `sideways` is not one of input, output, inout"),
            "{err}"
        );
        let err = read(entry("0x1", 1).replace("before_dispatch", "whenever")).unwrap_err();
        assert!(
            err.ends_with("args[0].stage: `whenever` is not one of before_dispatch, after_completion"),
            "{err}"
        );
    }

    #[test]
    fn the_originals_manifest_reads() {
        let text = r#"{"run_dir":"args_dump","bin_format":{"type":"logical_contiguous","byte_order":"little_endian"},
        "dump_args_level":3,"total_args":1,"before_dispatch":1,"after_completion":0,"input_args":1,
        "output_args":0,"inout_args":0,"truncated_args":0,"dropped_records":0,"dropped_overwrite":0,
        "bin_file":null,"args":[{"task_id":"0x0000000100000000","func_id":[0],"arg_index":2,
        "role":"input","stage":"before_dispatch","kind":"scalar","dtype":"FLOAT32","value":5.0,
        "is_contiguous":true,"shape":[],"strides":[],"start_offset":0,"numel":1,
        "arg_index_ambiguous":true,"bin_offset":0,"bin_size":0,"truncated":false,"overwritten":false}]}"#;
        let m: ArgsDumpManifest = serde_json::from_str(text).unwrap();
        assert_eq!(m.bin_file, None);
        assert_eq!(m.complete, None);
        assert!(m.args[0].arg_index_ambiguous && m.args[0].is_scalar());
        assert_eq!(m.args[0].value, Some(serde_json::json!(5.0)));
    }
}
