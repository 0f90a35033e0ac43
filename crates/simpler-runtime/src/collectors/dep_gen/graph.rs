//! Streaming `deps.json` writer with the annotation rules shared by the replay and `hbg`.
//!
//! `tasks[]`, `tensors[]` and `edges[]` grow together while records stream in. `tasks[]`, the
//! file's first section and most of its bytes, streams straight into the publication of
//! `deps.json` (its temporary, `.deps.<tag>.tasks.part`); the two others go to part files that
//! [`GraphWriter::finish`] appends after it before the publication's commit. (Until issue 15
//! the tasks went to a part file too, and the finish copied all three, the tasks' hundreds of
//! MB included.) Memory holds only the set of distinct tensors and the current task's
//! producers.
//!
//! Annotation (per consumer): an explicit edge for the first occurrence of each producer; a
//! creator edge only when that producer was not seen yet for this task; every tensor-map hit
//! (it marks the producer seen). The `overlap` annotation says whether the producer's view
//! contains every element the consumer's view reads (`covered`) or not (`other`).
//!
//! The bytes of each element come from `simpler_artifacts::deps::encode`, the one deps.json
//! formatter (the same one `DepsWriter` uses); this module only turns the runtime's tensors
//! into its borrowed views.

use std::collections::hash_map::Entry;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use rustc_hash::{FxHashMap, FxHashSet};
use simpler_artifacts::deps::encode::{
    self, ArgTemplates, ArgView, EdgeView, SliceView, TaskView, TensorView,
};
use simpler_artifacts::deps::{self as json, tensor_id};
use simpler_artifacts::publish::{Options, Publication, PublishError};
use simpler_core::{containment, ArgTag, DepFlags, TaskId, Tensor, TensorArg};

use super::writer::SectionWriter;
use crate::memory::local_addr;

fn arg_type(tag: ArgTag) -> json::ArgType {
    match tag {
        ArgTag::Input => json::ArgType::Input,
        ArgTag::Output => json::ArgType::Output,
        ArgTag::Inout => json::ArgType::Inout,
        ArgTag::OutputExisting => json::ArgType::OutputExisting,
        ArgTag::NoDep => json::ArgType::NoDep,
    }
}

/// `covered` when the producer's view contains every element the consumer's view reads, as
/// sets of elements whatever the two layouts ([`simpler_core::containment::contains`]), at the
/// same version; else `other`.
pub(crate) fn annotate_overlap(producer: &Tensor, consumer: &Tensor) -> json::Overlap {
    if producer.version() == consumer.version() && containment::contains(producer, consumer) {
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

/// Bytes a part collects before it hands them to the writer thread. A megabyte: each
/// hand-off to a parked writer costs the encoding thread a futex wake (an inter-processor
/// interrupt on a VM), and at 256 KiB those wakes were 5 % of the replay's thread; 4 MiB
/// buffers no longer fit a core's L2 with the kernel's copy of them and read slower
/// (`docs/performance.md`, item 102).
const PART_BUFFER: usize = 1 << 20;

/// One section's bytes being collected. Elements are encoded straight into `buf` (no staging
/// copy), which goes to the writer thread once it holds [`PART_BUFFER`] bytes.
struct Part {
    buf: Vec<u8>,
    count: u64,
}

impl Part {
    fn new() -> Part {
        Part {
            buf: Vec::with_capacity(PART_CAPACITY),
            count: 0,
        }
    }
}

/// A part buffer's capacity: [`PART_BUFFER`] and room for the element that crosses it.
const PART_CAPACITY: usize = PART_BUFFER + (16 << 10);

/// The `tasks[]` output: the publication of `deps.json` itself.
struct Tasks(Publication);

impl Write for Tasks {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.sink().write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        // A buffer at least as large as the sink's goes to the file directly (no second copy).
        self.0.sink().write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.sink().flush()
    }
}

/// The geometry of `t` as deps.json writes it.
fn slice(t: &Tensor) -> SliceView<'_> {
    SliceView {
        dtype: t.dtype().name(),
        shape: t.shape(),
        start_offset: t.start_offset(),
        strides: t.strides(),
    }
}

/// The `flags` list of `flags` (`wait` before `retain`).
fn flag_list(flags: DepFlags) -> &'static [json::DepFlag] {
    use json::DepFlag::{Retain, Wait};
    match (flags.contains(DepFlags::WAIT), flags.contains(DepFlags::RETAIN)) {
        (true, true) => &[Wait, Retain],
        (true, false) => &[Wait],
        (false, true) => &[Retain],
        (false, false) => &[],
    }
}

/// Removes `paths`, whichever exist.
fn remove_files(paths: &[PathBuf]) {
    for p in paths {
        let _ = std::fs::remove_file(p);
    }
}

/// Section indexes: `tasks[]`, `tensors[]`, `edges[]` (file order).
const TASKS: usize = 0;
const TENSORS: usize = 1;
const EDGES: usize = 2;

/// See the module docs.
pub(crate) struct GraphWriter {
    /// The bytes of each section being collected, by section index.
    sections: [Part; 3],
    /// Writes full section buffers to the publication (`tasks[]`) and the part files.
    writer: SectionWriter<Tasks, File>,
    /// deps.json.
    dest: PathBuf,
    /// The part files of `tensors[]` and `edges[]`.
    part_paths: [PathBuf; 2],
    /// The distinct tensors written to `tensors[]`, with their ids.
    tensors_seen: FxHashMap<(u64, i32), u64>,
    task: TaskId,
    /// Producers the current task has an edge from, as a set and in first-written order.
    preds: FxHashSet<u64>,
    written: Vec<TaskId>,
    with_flags: bool,
    error: Option<io::Error>,
    /// The current task's argument tensor ids (reused per task).
    ids: Vec<u64>,
    /// The last arguments' encoded forms, by position (a task like the last one copies them).
    templates: ArgTemplates,
    /// Where the run's folder went, when it was moved while the run went on
    /// ([`GraphWriter::relocate`]).
    moved: Option<crate::collectors::Moved>,
}

impl GraphWriter {
    /// A writer publishing `dir`/deps.json, its work files in `dir` (named after `tag`);
    /// `with_flags` adds the `flags` field.
    pub fn create(dir: &Path, tag: &str, with_flags: bool) -> io::Result<GraphWriter> {
        // `dir` exists (a run's folder, from its claim on): one that is gone was moved or
        // removed, and is not made again.
        let dest = dir.join(super::ARTIFACT);
        let temporary = Self::part_name(tag, "tasks");
        let options = Options::closing(true);
        let mut publication = Publication::begin_named(&dest, options, &temporary).map_err(|e| e.source)?;
        publication.sink().write_all(encode::SECTION_OPENINGS[0])?;
        let part_paths = ["tensors", "edges"].map(|s| dir.join(Self::part_name(tag, s)));
        // The publication's temporary goes with it.
        let remove_parts = || remove_files(&part_paths);
        let files = match (File::create(&part_paths[0]), File::create(&part_paths[1])) {
            (Ok(t), Ok(e)) => [t, e],
            _ => {
                remove_parts();
                return Err(io::Error::other(format!(
                    "cannot create the part files of {} in {}",
                    super::ARTIFACT,
                    dir.display()
                )));
            }
        };
        let writer = SectionWriter::spawn((Tasks(publication), files), PART_CAPACITY)
            .inspect_err(|_| remove_parts())?;
        Ok(GraphWriter {
            sections: [Part::new(), Part::new(), Part::new()],
            writer,
            dest,
            part_paths,
            tensors_seen: FxHashMap::default(),
            task: TaskId::INVALID,
            preds: FxHashSet::default(),
            written: Vec::new(),
            with_flags,
            error: None,
            ids: Vec::new(),
            templates: ArgTemplates::new(),
            moved: None,
        })
    }

    fn note(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            self.error.get_or_insert(e);
        }
    }

    /// Appends one element to `section`, after the separator when it is not the first,
    /// encoded by `encode`; a full buffer goes to the writer thread.
    fn push(&mut self, section: usize, encode: impl FnOnce(&mut Vec<u8>)) {
        let part = &mut self.sections[section];
        if part.count > 0 {
            part.buf.push(encode::SEPARATOR);
        }
        part.count += 1;
        encode(&mut part.buf);
        if part.buf.len() >= PART_BUFFER {
            let r = self.writer.write(section, &mut part.buf);
            self.note(r);
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
        args: &[TensorArg],
    ) {
        self.task = id;
        self.preds.clear();
        self.written.clear();
        // Each argument's tensor id, from the set of distinct tensors (hashing is done once per
        // tensor, when it first appears and gets its `tensors[]` entry).
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        for arg in args {
            // `OUTPUT` slots carry no tensor, and deps.json records none for them.
            let Some(t) = arg.tensor() else {
                ids.push(0);
                continue;
            };
            let id = match self.tensors_seen.entry((local_addr(t.addr()), t.version())) {
                Entry::Occupied(e) => *e.get(),
                Entry::Vacant(e) => {
                    let id = *e.insert(tensor_id(local_addr(t.addr()), t.version()));
                    self.push(TENSORS, |buf| {
                        encode::tensor(
                            buf,
                            &TensorView {
                                tensor_id: id,
                                buffer_addr: local_addr(t.addr()),
                                version: Some(t.version()),
                                dtype: t.dtype().name(),
                                buffer_numel: t.buffer_numel(),
                            },
                        )
                    });
                    id
                }
            };
            ids.push(id);
        }
        let args = args.iter().zip(&ids).enumerate().map(|(i, (arg, &tid))| {
            let (idx, arg_type) = (i as i32, arg_type(arg.tag()));
            match arg.tensor() {
                Some(t) => ArgView::with_slice(idx, arg_type, tid, slice(t)),
                None => ArgView::bare(idx, arg_type),
            }
        });
        let task = TaskView {
            task_id: id.raw(),
            scope: Some(if manual {
                json::Scope::Manual
            } else {
                json::Scope::Auto
            }),
            early_dispatch: Some(early),
            kernel_ids: Some(&kernel_ids),
            block_num: Some(block_num),
            args,
        };
        let mut templates = std::mem::take(&mut self.templates);
        self.push(TASKS, |buf| {
            encode::task_with_templates(buf, task, &mut templates)
        });
        self.templates = templates;
        self.ids = ids;
    }

    /// An edge into the current task with the four required fields and, with flags on, the
    /// `flags` list.
    fn edge_into(
        &self,
        pred: TaskId,
        arg: i32,
        source: json::EdgeSource,
        flags: DepFlags,
    ) -> EdgeView<'static> {
        let e = EdgeView::new(pred.raw(), self.task.raw(), arg, source);
        if self.with_flags {
            e.with_flags(flag_list(flags))
        } else {
            e
        }
    }

    /// Writes one edge.
    fn edge(&mut self, e: &EdgeView<'_>) {
        self.push(EDGES, |buf| encode::edge(buf, e));
    }

    /// Marks `pred` as having an edge into the current task; true when it is new.
    fn see(&mut self, pred: TaskId) -> bool {
        let new = self.preds.insert(pred.raw());
        if new {
            self.written.push(pred);
        }
        new
    }

    /// The producers the current task (the last [`GraphWriter::begin_task`]) has at least one
    /// edge from in `edges[]`, in first-written order.
    pub fn producers(&self) -> &[TaskId] {
        &self.written
    }

    /// An explicit dependency (first occurrence per producer only).
    pub fn explicit(&mut self, pred: TaskId, flags: DepFlags) {
        if self.see(pred) {
            let e = self.edge_into(pred, -1, json::EdgeSource::Explicit, flags);
            self.edge(&e);
        }
    }

    /// A creator edge (only when the producer was not seen yet for this task).
    pub fn creator(&mut self, pred: TaskId, arg: usize, consumer: &Tensor) {
        if self.see(pred) {
            let e = self
                .edge_into(pred, arg as i32, json::EdgeSource::Creator, DepFlags::WAIT_RETAIN)
                .with_consumer(
                    tensor_id(local_addr(consumer.addr()), consumer.version()),
                    slice(consumer),
                );
            self.edge(&e);
        }
    }

    /// A tensor-map hit (always recorded).
    pub fn tensormap(&mut self, pred: TaskId, arg: usize, consumer: &Tensor, producer: &Tensor) {
        self.see(pred);
        let e = self
            .edge_into(pred, arg as i32, json::EdgeSource::Tensormap, DepFlags::WAIT)
            .with_consumer(
                tensor_id(local_addr(producer.addr()), producer.version()),
                slice(consumer),
            )
            .with_producer(annotate_overlap(producer, consumer), slice(producer));
        self.edge(&e);
    }

    /// The file name of a section's work file (`tasks`: the publication's temporary).
    fn part_name(tag: &str, section: &str) -> String {
        format!(".deps.{tag}.{section}.part")
    }

    /// Removes the work files of the writer `tag` in `dir` when the writer itself is gone.
    pub fn remove_parts(dir: &Path, tag: &str) {
        for s in ["tasks", "tensors", "edges"] {
            let _ = std::fs::remove_file(dir.join(Self::part_name(tag, s)));
        }
    }

    /// Removes the work files (nothing will be published).
    pub fn abort(self) {
        // The publication removes its temporary as the outputs are dropped (where the folder
        // is now, when it moved).
        if let (Ok(((Tasks(publication), _), _)), Some(m)) = (self.writer.finish(), &self.moved) {
            let mut publication = publication;
            publication.relocate(|p| m.at(p));
        }
        remove_files(&self.part_paths);
    }

    /// Follows a move of the run's folder while the run went on: deps.json and its part files
    /// are where the folder is now (the publication, on the writer's thread, follows at
    /// [`GraphWriter::finish`]).
    pub fn relocate(&mut self, moved: Option<crate::collectors::Moved>) {
        let Some(m) = moved else { return };
        self.dest = m.at(&self.dest);
        self.part_paths = self.part_paths.clone().map(|p| m.at(&p));
        self.moved = Some(m);
    }

    /// Publishes deps.json: the last buffers written, then the tensors and the edges appended
    /// after the tasks, then the publication's commit; the part files are removed either way.
    pub fn finish(mut self) -> Result<(GraphCounts, u64), PublishError> {
        let [tasks, tensors, edges] = self.sections.each_ref().map(|p| p.count);
        let counts = GraphCounts {
            tasks,
            tensors,
            edges,
        };
        let mut handed = self.error.take().map_or(Ok(()), Err);
        for (section, part) in self.sections.iter_mut().enumerate() {
            if handed.is_ok() && !part.buf.is_empty() {
                handed = self.writer.write(section, &mut part.buf);
            }
        }
        let finished = self.writer.finish();
        let remove_parts = || remove_files(&self.part_paths);
        let ((Tasks(mut publication), files), written) = match finished {
            Ok(done) => done,
            Err(source) => {
                remove_parts();
                return Err(PublishError {
                    path: self.dest.clone(),
                    source,
                });
            }
        };
        drop(files);
        if let Some(m) = &self.moved {
            publication.relocate(|p| m.at(p));
        }
        let appended = handed.and(written).and_then(|()| {
            let out = publication.sink();
            for (opening, path) in encode::SECTION_OPENINGS[1..].iter().zip(&self.part_paths) {
                out.write_all(opening)?;
                io::copy(&mut File::open(path)?, out)?;
            }
            out.write_all(encode::CLOSING)
        });
        remove_parts();
        match appended {
            Ok(()) => publication.commit().map(|p| (counts, p.bytes)),
            Err(e) => Err(publication.fail(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simpler_core::{DType, TensorCreateInfo};

    /// The writer produces exactly what serde writes for the artifact types (the views carry
    /// every field the runtime knows to the shared encoder).
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
                &[TensorArg::OutputExisting(x)],
            );
            g.begin_task(
                TaskId::new(2, u32::MAX),
                true,
                false,
                [1, 2, 3],
                4,
                &[
                    TensorArg::Input(v),
                    TensorArg::Output(TensorCreateInfo::new(&[2], DType::Float32).unwrap()),
                    TensorArg::NoDep(owned),
                ],
            );
            g.explicit(TaskId::new(0, 0), DepFlags::WAIT);
            g.creator(TaskId::new(1, 7), 2, &owned);
            g.tensormap(TaskId::new(0, 0), 0, &v, &x);
            let dest = dir.path().join("deps.json");
            g.finish().unwrap();
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
