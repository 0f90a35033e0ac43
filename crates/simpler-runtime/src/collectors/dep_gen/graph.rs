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

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use simpler_artifacts::deps::{self as json, tensor_id};
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

fn flags_json(f: DepFlags) -> Vec<json::DepFlag> {
    let mut v = Vec::with_capacity(2);
    if f.contains(DepFlags::WAIT) {
        v.push(json::DepFlag::Wait);
    }
    if f.contains(DepFlags::RETAIN) {
        v.push(json::DepFlag::Retain);
    }
    v
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
    fn push<T: serde::Serialize>(&mut self, v: &T) -> io::Result<()> {
        if self.count > 0 {
            self.out.write_all(b",")?;
        }
        self.count += 1;
        serde_json::to_writer(&mut self.out, v).map_err(io::Error::from)
    }
}

/// See the module docs.
pub(crate) struct GraphWriter {
    parts: [Part; 3],
    tensors_seen: HashSet<(u64, i32)>,
    task: TaskId,
    preds: HashSet<u64>,
    with_flags: bool,
    error: Option<io::Error>,
}

impl GraphWriter {
    /// Part files go into `dir` (named after `tag`); `with_flags` adds the `flags` field.
    pub fn create(dir: &Path, tag: &str, with_flags: bool) -> io::Result<GraphWriter> {
        std::fs::create_dir_all(dir)?;
        let part = |s: &str| Part::create(dir.join(format!(".deps.{tag}.{s}.part")));
        Ok(GraphWriter {
            parts: [part("tasks")?, part("tensors")?, part("edges")?],
            tensors_seen: HashSet::new(),
            task: TaskId::INVALID,
            preds: HashSet::new(),
            with_flags,
            error: None,
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
        let mut jargs = Vec::with_capacity(args.len());
        for (i, &(tag, t)) in args.iter().enumerate() {
            let mut a = json::TaskArg {
                idx: i as i32,
                arg_type: arg_type(tag),
                tensor_id: None,
                dtype: None,
                shape: None,
                start_offset: None,
                strides: None,
            };
            if let (Some(t), false) = (t, tag == ArgTag::Output) {
                a.tensor_id = Some(tensor_id(t.addr(), t.version()));
                a.dtype = Some(t.dtype().name().to_string());
                a.shape = Some(t.shape().to_vec());
                a.start_offset = Some(t.start_offset());
                a.strides = Some(t.strides().to_vec());
                if self.tensors_seen.insert((t.addr(), t.version())) {
                    let row = json::Tensor {
                        tensor_id: tensor_id(t.addr(), t.version()),
                        buffer_addr: t.addr(),
                        version: t.version(),
                        dtype: t.dtype().name().to_string(),
                        buffer_numel: t.buffer_numel(),
                    };
                    let r = self.parts[1].push(&row);
                    self.note(r);
                }
            }
            jargs.push(a);
        }
        let task = json::Task {
            task_id: id.raw(),
            scope: if manual {
                json::Scope::Manual
            } else {
                json::Scope::Auto
            },
            early_dispatch: Some(early),
            kernel_ids,
            block_num,
            args: jargs,
        };
        let r = self.parts[0].push(&task);
        self.note(r);
    }

    fn edge(&mut self, e: json::Edge) {
        let r = self.parts[2].push(&e);
        self.note(r);
    }

    fn base_edge(&self, pred: TaskId, arg: i32, source: json::EdgeSource, flags: DepFlags) -> json::Edge {
        json::Edge {
            pred: pred.raw(),
            succ: self.task.raw(),
            arg,
            source,
            flags: self.with_flags.then(|| flags_json(flags)),
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

    fn consumer_fields(e: &mut json::Edge, consumer: &Tensor, id_of: &Tensor) {
        e.tensor_id = Some(tensor_id(id_of.addr(), id_of.version()));
        e.consumer_dtype = Some(consumer.dtype().name().to_string());
        e.consumer_shape = Some(consumer.shape().to_vec());
        e.consumer_start_offset = Some(consumer.start_offset());
        e.consumer_strides = Some(consumer.strides().to_vec());
    }

    /// An explicit dependency (first occurrence per producer only).
    pub fn explicit(&mut self, pred: TaskId, flags: DepFlags) {
        if self.preds.insert(pred.raw()) {
            let e = self.base_edge(pred, -1, json::EdgeSource::Explicit, flags);
            self.edge(e);
        }
    }

    /// A creator edge (only when the producer was not seen yet for this task).
    pub fn creator(&mut self, pred: TaskId, arg: usize, consumer: &Tensor) {
        if self.preds.insert(pred.raw()) {
            let mut e = self.base_edge(pred, arg as i32, json::EdgeSource::Creator, DepFlags::WAIT_RETAIN);
            Self::consumer_fields(&mut e, consumer, consumer);
            self.edge(e);
        }
    }

    /// A tensor-map hit (always recorded).
    pub fn tensormap(&mut self, pred: TaskId, arg: usize, consumer: &Tensor, producer: &Tensor) {
        self.preds.insert(pred.raw());
        let mut e = self.base_edge(pred, arg as i32, json::EdgeSource::Tensormap, DepFlags::WAIT);
        e.overlap = Some(annotate_overlap(producer, consumer));
        Self::consumer_fields(&mut e, consumer, producer);
        e.producer_shape = Some(producer.shape().to_vec());
        e.producer_start_offset = Some(producer.start_offset());
        e.producer_strides = Some(producer.strides().to_vec());
        self.edge(e);
    }

    /// Removes the part files (nothing will be published).
    pub fn abort(self) {
        for p in self.parts {
            drop(p.out);
            let _ = std::fs::remove_file(&p.path);
        }
    }

    /// Writes `dest` (via a temporary file) from the parts, then removes them.
    pub fn finish(mut self, dest: &Path) -> io::Result<GraphCounts> {
        if let Some(e) = self.error.take() {
            self.abort();
            return Err(e);
        }
        let counts = GraphCounts {
            tasks: self.parts[0].count,
            tensors: self.parts[1].count,
            edges: self.parts[2].count,
        };
        let mut paths = Vec::new();
        for p in self.parts {
            let Part { path, out, .. } = p;
            out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            paths.push(path);
        }
        let tmp = dest.with_extension("json.tmp");
        let write = || -> io::Result<()> {
            let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
            for (i, (name, path)) in ["tasks", "tensors", "edges"].iter().zip(&paths).enumerate() {
                write!(out, "{}\"{name}\":[", if i == 0 { "{" } else { "," })?;
                io::copy(&mut File::open(path)?, &mut out)?;
                out.write_all(b"]")?;
            }
            out.write_all(b"}\n")?;
            out.into_inner().map_err(|e| e.into_error())?.sync_all()
        };
        let result = write().and_then(|()| std::fs::rename(&tmp, dest));
        let _ = std::fs::remove_file(&tmp);
        for p in &paths {
            let _ = std::fs::remove_file(p);
        }
        result.map(|()| counts)
    }
}
