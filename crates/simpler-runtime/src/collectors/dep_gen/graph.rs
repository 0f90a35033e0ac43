//! Streaming `deps.json` writer with the annotation rules shared by the replay and `hbg`.
//!
//! `tasks[]`, `tensors[]` and `edges[]` grow together while records stream in, so each section
//! goes to its own part file; [`GraphWriter::finish`] concatenates them into one `deps.json`.
//! Memory holds only the set of distinct tensors and the current task's producers.
//!
//! Annotation (per consumer): an explicit edge for the first occurrence of each producer; a
//! creator edge only when that producer was not seen yet for this task; every tensor-map hit
//! (it marks the producer seen). The `overlap` annotation says whether the producer's slice
//! contains the consumer's slice (`covered`) or not (`other`).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use rustc_hash::FxHashSet;
use simpler_artifacts::deps::{self as json, tensor_id};
use simpler_artifacts::publish::{publish_with, Options, PublishError};
use simpler_core::{check_overlap, ArgTag, DepFlags, Overlap, TaskId, Tensor};

fn arg_type(tag: ArgTag) -> json::ArgType {
    match tag {
        ArgTag::Input => json::ArgType::Input,
        ArgTag::Output => json::ArgType::Output,
        ArgTag::Inout => json::ArgType::Inout,
        ArgTag::OutputExisting => json::ArgType::OutputExisting,
        ArgTag::NoDep => json::ArgType::NoDep,
    }
}

/// `covered` when the producer's slice contains the consumer's (same version), else `other`.
pub(crate) fn annotate_overlap(producer: &Tensor, consumer: &Tensor) -> json::Overlap {
    if producer.version() == consumer.version() && check_overlap(consumer, producer) == Overlap::Covered {
        json::Overlap::Covered
    } else {
        json::Overlap::Other
    }
}

/// Counts of a finished graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphCounts {
    /// Entries of `tasks[]`.
    pub tasks: u64,
    /// Entries of `tensors[]`.
    pub tensors: u64,
    /// Entries of `edges[]`.
    pub edges: u64,
}

struct Part {
    path: PathBuf,
    out: BufWriter<File>,
    count: u64,
}

impl Part {
    fn create(path: PathBuf) -> io::Result<Part> {
        let out = BufWriter::with_capacity(256 << 10, File::create(&path)?);
        Ok(Part { path, out, count: 0 })
    }
    fn push_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.count > 0 {
            self.out.write_all(b",")?;
        }
        self.count += 1;
        self.out.write_all(bytes)
    }
}

/// Appends JSON fragments to a byte buffer, producing exactly what serde_json writes for the
/// `simpler_artifacts::deps` types (compact, fields in declaration order, u64 as strings) but
/// without building those values: no allocation per element.
struct Json<'a>(&'a mut Vec<u8>);

impl Json<'_> {
    #[inline]
    fn raw(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }
    #[inline]
    fn int(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        self
    }
    #[inline]
    fn u64_str(&mut self, v: u64) -> &mut Self {
        self.0.push(b'"');
        self.0.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        self.0.push(b'"');
        self
    }
    /// A plain ASCII name (dtype, enum names): no escaping needed.
    #[inline]
    fn name(&mut self, s: &str) -> &mut Self {
        self.0.push(b'"');
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(b'"');
        self
    }
    fn u32s(&mut self, v: &[u32]) -> &mut Self {
        self.0.push(b'[');
        for (i, x) in v.iter().enumerate() {
            if i > 0 {
                self.0.push(b',');
            }
            self.0
                .extend_from_slice(itoa::Buffer::new().format(*x).as_bytes());
        }
        self.0.push(b']');
        self
    }
}

/// See the module docs.
pub(crate) struct GraphWriter {
    parts: [Part; 3],
    tensors_seen: FxHashSet<(u64, i32)>,
    task: TaskId,
    preds: FxHashSet<u64>,
    with_flags: bool,
    error: Option<io::Error>,
    scratch: Vec<u8>,
}

impl GraphWriter {
    /// Part files go into `dir` (named after `tag`); `with_flags` adds the `flags` field.
    pub fn create(dir: &Path, tag: &str, with_flags: bool) -> io::Result<GraphWriter> {
        std::fs::create_dir_all(dir)?;
        let part = |s: &str| Part::create(Self::part_path(dir, tag, s));
        Ok(GraphWriter {
            parts: [part("tasks")?, part("tensors")?, part("edges")?],
            tensors_seen: FxHashSet::default(),
            task: TaskId::INVALID,
            preds: FxHashSet::default(),
            with_flags,
            error: None,
            scratch: Vec::with_capacity(4096),
        })
    }

    fn note(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            self.error.get_or_insert(e);
        }
    }

    /// Starts a consumer: its `tasks[]` entry and its tensors.
    pub fn begin_task(
        &mut self,
        id: TaskId,
        manual: bool,
        early: bool,
        kernel_ids: [i32; 3],
        block_num: u32,
        args: &[(ArgTag, Option<Tensor>)],
    ) {
        self.task = id;
        self.preds.clear();
        let mut buf = std::mem::take(&mut self.scratch);
        for &(tag, t) in args {
            if let (Some(t), false) = (t, tag == ArgTag::Output) {
                if self.tensors_seen.insert((t.addr(), t.version())) {
                    buf.clear();
                    Json(&mut buf)
                        .raw(b"{\"tensor_id\":")
                        .u64_str(tensor_id(t.addr(), t.version()))
                        .raw(b",\"buffer_addr\":")
                        .u64_str(t.addr())
                        .raw(b",\"version\":")
                        .int(i64::from(t.version()))
                        .raw(b",\"dtype\":")
                        .name(t.dtype().name())
                        .raw(b",\"buffer_numel\":")
                        .u64_str(t.buffer_numel())
                        .raw(b"}");
                    let r = self.parts[1].push_raw(&buf);
                    self.note(r);
                }
            }
        }
        buf.clear();
        let mut j = Json(&mut buf);
        j.raw(b"{\"task_id\":").u64_str(id.raw());
        j.raw(if manual {
            b",\"scope\":\"manual\""
        } else {
            b",\"scope\":\"auto\""
        });
        j.raw(if early {
            b",\"early_dispatch\":true"
        } else {
            b",\"early_dispatch\":false"
        });
        j.raw(b",\"kernel_ids\":[")
            .int(i64::from(kernel_ids[0]))
            .raw(b",")
            .int(i64::from(kernel_ids[1]));
        j.raw(b",")
            .int(i64::from(kernel_ids[2]))
            .raw(b"],\"block_num\":")
            .int(i64::from(block_num));
        j.raw(b",\"args\":[");
        for (i, &(tag, t)) in args.iter().enumerate() {
            if i > 0 {
                j.raw(b",");
            }
            j.raw(b"{\"idx\":")
                .int(i as i64)
                .raw(b",\"type\":")
                .name(arg_type(tag).as_str());
            if let (Some(t), false) = (t, tag == ArgTag::Output) {
                j.raw(b",\"tensor_id\":")
                    .u64_str(tensor_id(t.addr(), t.version()));
                j.raw(b",\"dtype\":").name(t.dtype().name());
                j.raw(b",\"shape\":").u32s(t.shape());
                j.raw(b",\"start_offset\":").u64_str(t.start_offset());
                j.raw(b",\"strides\":").u32s(t.strides());
            }
            j.raw(b"}");
        }
        j.raw(b"]}");
        let r = self.parts[0].push_raw(&buf);
        self.note(r);
        self.scratch = buf;
    }

    /// Writes one edge: the common fields, then `more` appends the source-specific ones.
    fn edge(
        &mut self,
        pred: TaskId,
        arg: i32,
        source: json::EdgeSource,
        flags: DepFlags,
        more: impl FnOnce(&mut Json<'_>),
    ) {
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let mut j = Json(&mut buf);
        j.raw(b"{\"pred\":")
            .u64_str(pred.raw())
            .raw(b",\"succ\":")
            .u64_str(self.task.raw());
        j.raw(b",\"arg\":")
            .int(i64::from(arg))
            .raw(b",\"source\":")
            .name(source.as_str());
        if self.with_flags {
            j.raw(
                match (flags.contains(DepFlags::WAIT), flags.contains(DepFlags::RETAIN)) {
                    (true, true) => b",\"flags\":[\"wait\",\"retain\"]",
                    (true, false) => b",\"flags\":[\"wait\"]",
                    (false, true) => b",\"flags\":[\"retain\"]",
                    (false, false) => b",\"flags\":[]",
                },
            );
        }
        more(&mut j);
        j.raw(b"}");
        let r = self.parts[2].push_raw(&buf);
        self.note(r);
        self.scratch = buf;
    }

    fn consumer_fields(j: &mut Json<'_>, consumer: &Tensor, id_of: &Tensor) {
        j.raw(b",\"tensor_id\":")
            .u64_str(tensor_id(id_of.addr(), id_of.version()));
        j.raw(b",\"consumer_dtype\":").name(consumer.dtype().name());
        j.raw(b",\"consumer_shape\":").u32s(consumer.shape());
        j.raw(b",\"consumer_start_offset\":")
            .u64_str(consumer.start_offset());
        j.raw(b",\"consumer_strides\":").u32s(consumer.strides());
    }

    /// An explicit dependency (first occurrence per producer only).
    pub fn explicit(&mut self, pred: TaskId, flags: DepFlags) {
        if self.preds.insert(pred.raw()) {
            self.edge(pred, -1, json::EdgeSource::Explicit, flags, |_| {});
        }
    }

    /// A creator edge (only when the producer was not seen yet for this task).
    pub fn creator(&mut self, pred: TaskId, arg: usize, consumer: &Tensor) {
        if self.preds.insert(pred.raw()) {
            self.edge(
                pred,
                arg as i32,
                json::EdgeSource::Creator,
                DepFlags::WAIT_RETAIN,
                |j| Self::consumer_fields(j, consumer, consumer),
            );
        }
    }

    /// A tensor-map hit (always recorded).
    pub fn tensormap(&mut self, pred: TaskId, arg: usize, consumer: &Tensor, producer: &Tensor) {
        self.preds.insert(pred.raw());
        let overlap = match annotate_overlap(producer, consumer) {
            json::Overlap::Covered => &b",\"overlap\":\"covered\""[..],
            json::Overlap::Other => &b",\"overlap\":\"other\""[..],
        };
        self.edge(
            pred,
            arg as i32,
            json::EdgeSource::Tensormap,
            DepFlags::WAIT,
            |j| {
                j.raw(overlap);
                Self::consumer_fields(j, consumer, producer);
                j.raw(b",\"producer_shape\":").u32s(producer.shape());
                j.raw(b",\"producer_start_offset\":")
                    .u64_str(producer.start_offset());
                j.raw(b",\"producer_strides\":").u32s(producer.strides());
            },
        );
    }

    fn part_path(dir: &Path, tag: &str, section: &str) -> PathBuf {
        dir.join(format!(".deps.{tag}.{section}.part"))
    }

    /// Removes the part files of the writer `tag` in `dir` when the writer itself is gone.
    pub fn remove_parts(dir: &Path, tag: &str) {
        for s in ["tasks", "tensors", "edges"] {
            let _ = std::fs::remove_file(Self::part_path(dir, tag, s));
        }
    }

    /// Removes the part files (nothing will be published).
    pub fn abort(self) {
        for p in self.parts {
            drop(p.out);
            let _ = std::fs::remove_file(&p.path);
        }
    }

    /// Publishes `dest` from the parts (through the publish path), then removes them.
    pub fn finish(mut self, dest: &Path) -> Result<(GraphCounts, u64), PublishError> {
        if let Some(e) = self.error.take() {
            self.abort();
            return Err(PublishError {
                path: dest.to_path_buf(),
                source: e,
            });
        }
        let counts = GraphCounts {
            tasks: self.parts[0].count,
            tensors: self.parts[1].count,
            edges: self.parts[2].count,
        };
        let mut paths = Vec::new();
        let mut flushed = Ok(());
        for p in self.parts {
            let Part { path, out, .. } = p;
            if flushed.is_ok() {
                flushed = out.into_inner().map_err(|e| e.into_error()).map(drop);
            }
            paths.push(path);
        }
        let result = flushed
            .map_err(|source| PublishError {
                path: dest.to_path_buf(),
                source,
            })
            .and_then(|()| {
                publish_with(dest, Options::closing(true), |out| {
                    for (i, (name, path)) in ["tasks", "tensors", "edges"].iter().zip(&paths).enumerate() {
                        write!(out, "{}\"{name}\":[", if i == 0 { "{" } else { "," })?;
                        io::copy(&mut File::open(path)?, out)?;
                        out.write_all(b"]")?;
                    }
                    out.write_all(b"}\n")
                })
            });
        for p in &paths {
            let _ = std::fs::remove_file(p);
        }
        result.map(|p| (counts, p.bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simpler_core::DType;

    /// The hand-written writer produces exactly what serde writes for the artifact types.
    #[test]
    fn output_is_byte_identical_to_the_serde_form() {
        let dir = tempfile::tempdir().unwrap();
        let x = Tensor::contiguous(1 << 32, 256, &[8, 8], DType::Float32, TaskId::INVALID).unwrap();
        let v = x.view(&[4, 4], &[2, 2]).unwrap().with_version(-3);
        let owned = Tensor::contiguous(5 << 40, 1024, &[16], DType::BFloat16, TaskId::new(1, 7)).unwrap();
        for with_flags in [true, false] {
            let mut g = GraphWriter::create(dir.path(), "t", with_flags).unwrap();
            g.begin_task(
                TaskId::new(0, 0),
                false,
                true,
                [-1, 3, -1],
                1,
                &[(ArgTag::OutputExisting, Some(x))],
            );
            g.begin_task(
                TaskId::new(2, u32::MAX),
                true,
                false,
                [1, 2, 3],
                4,
                &[
                    (ArgTag::Input, Some(v)),
                    (ArgTag::Output, None),
                    (ArgTag::NoDep, Some(owned)),
                ],
            );
            g.explicit(TaskId::new(0, 0), DepFlags::WAIT);
            g.creator(TaskId::new(1, 7), 2, &owned);
            g.tensormap(TaskId::new(0, 0), 0, &v, &x);
            let dest = dir.path().join("deps.json");
            g.finish(&dest).unwrap();
            let text = std::fs::read_to_string(&dest).unwrap();
            let parsed = simpler_artifacts::deps::read_deps_file(&dest).unwrap();
            assert_eq!(text, serde_json::to_string(&parsed).unwrap() + "\n");
            assert_eq!(
                (parsed.tasks.len(), parsed.tensors.len(), parsed.edges.len()),
                (2, 3, 3)
            );
        }
    }
}
