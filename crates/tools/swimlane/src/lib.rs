//! `simpler swimlane`: the Perfetto trace of a run.
//!
//! Reads `l2_swimlane_records.json` (per-task timing; schema in
//! `simpler_artifacts::swimlane` and `docs/swimlane.md`) and, when present, `deps.json`, and
//! writes `merged_swimlane.json`: Chrome trace-event JSON that Perfetto (ui.perfetto.dev) and
//! `chrome://tracing` open.
//!
//! # The trace
//!
//! - Process "Orchestrator": one `submit` slice per submit call.
//! - Process "Schedulers": a track per scheduler thread (`Scheduler <n>`) with a
//!   dispatch → finish slice per block, and a short `dummy` marker per dummy task.
//! - Process "Worker View": a track per virtual core (`AIC_<n>`, `AIV_<n>`) with a slice per
//!   block, start → end, named by kernel (name map, else `func_<id>`); its args hold the task
//!   id, duration and the task's fanin/fanout in deps.json.
//! - One flow arrow per unique `(pred, succ)` pair of deps.json, from the predecessor's
//!   earliest-starting slice to the successor's earliest-starting slice (so an SPMD or MIX task
//!   has one arrow per pair, attached to its earliest block), named `hb_violation` when the
//!   predecessor's latest end is after the successor's start, else `dependency`
//!   ([`flows`], [`anchors`]).
//! - Metadata events naming every process and track.
//!
//! Modules, one job each: [`cli`] (flags), [`input`] (paths), [`names`] (kernel names),
//! [`graph`] (deps.json pairs), [`lanes`] and [`tracks`] (where slices go), [`layout`]
//! (track of every row), [`anchors`] (where arrows attach), [`trace`] (the streaming JSON
//! writer), [`slices`], [`flows`], [`stats`] (the statistics table), [`error`] (what can
//! fail: [`Error`] and its [`ErrorKind`]).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use simpler_artifacts::swimlane::read_swimlane_file;

pub mod anchors;
pub mod cli;
pub mod error;
pub mod flows;
pub mod graph;
pub mod input;
pub mod lanes;
pub mod layout;
pub mod names;
pub mod slices;
pub mod stats;
pub mod trace;
pub mod tracks;

pub use cli::Args;
pub use error::{Error, ErrorKind};
pub use stats::KernelStats;

use anchors::Anchors;
use flows::FlowCounts;
use graph::DepPairs;
use layout::Layout;
use slices::SliceCounts;
use trace::{TaskLabel, TraceWriter};

/// What [`convert`] read, wrote and found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertSummary {
    /// The records file read.
    pub records: PathBuf,
    /// The trace written.
    pub output: PathBuf,
    /// The deps.json the arrows came from; `None` means the trace has no arrows.
    pub deps: Option<PathBuf>,
    /// The name map used, if any.
    pub func_names: Option<PathBuf>,
    /// Slices written, by kind.
    pub slices: SliceCounts,
    /// Unique `(pred, succ)` pairs in deps.json (0 without deps.json).
    pub unique_pairs: usize,
    /// Flows drawn and pairs skipped.
    pub flows: FlowCounts,
    /// Per-kernel statistics, by kernel id.
    pub kernels: Vec<KernelStats>,
    /// Max finish − min dispatch over the task rows, ns.
    pub span_ns: u64,
}

impl ConvertSummary {
    /// Writes the per-kernel statistics table (`stats`), as the run summary shows it.
    pub fn write_statistics<W: Write>(&self, mut w: W) -> io::Result<()> {
        let source = self.records.file_name().map_or_else(
            || self.records.display().to_string(),
            |f| f.to_string_lossy().into_owned(),
        );
        stats::write_table(&mut w, &self.kernels, self.span_ns, &source)
    }

    /// Writes the report `simpler swimlane` prints: the statistics table, the flow counts
    /// (with `hb_violation` flows) and what was written.
    pub fn write_report<W: Write>(&self, mut w: W) -> io::Result<()> {
        self.write_statistics(&mut w)?;
        match &self.deps {
            Some(deps) => {
                writeln!(
                    w,
                    "Flows: {} dependency, {} hb_violation ({} unique pairs in {})",
                    self.flows.dependency,
                    self.flows.hb_violation,
                    self.unique_pairs,
                    deps.display()
                )?;
                if let Some((pred, succ)) = self.flows.first_without_row {
                    writeln!(
                        w,
                        "Not drawn: {} pair(s) with an endpoint that has no timing row (first: {} -> {})",
                        self.flows.without_row,
                        TaskLabel(pred),
                        TaskLabel(succ)
                    )?;
                }
            }
            None => writeln!(w, "Flows: none (no deps.json)")?,
        }
        let s = &self.slices;
        writeln!(
            w,
            "Wrote {} ({} task slices, {} dispatch slices, {} dummy markers, {} submit slices, {} flows)",
            self.output.display(),
            s.task,
            s.dispatch,
            s.dummy,
            s.submit,
            self.flows.dependency + self.flows.hb_violation
        )
    }
}

/// Runs `simpler swimlane`: converts and prints the report on stdout. Warnings (no deps.json,
/// unreadable sibling name map, pairs not drawn) go to stderr.
pub fn run(args: Args) -> Result<(), Error> {
    let records = input::resolve_records(args.records.as_deref())?;
    let summary = convert(
        &records,
        args.output.as_deref(),
        args.deps_json.as_deref(),
        args.func_names.as_deref(),
    )?;
    summary
        .write_report(io::stdout().lock())
        .map_err(ErrorKind::Report)?;
    Ok(())
}

/// Converts `records` into a trace at `out` (default: `merged_swimlane.json` next to it).
///
/// `deps`: the deps.json for arrows (default: the sibling `deps.json`; without one, a warning on
/// stderr and no arrows). `func_names`: the kernel name map (default: the newest sibling
/// `name_map*.json`; else `func_<id>`). An explicit `deps` or `func_names` that cannot be read
/// is an error; so is a sibling deps.json that does not parse. Errors name the file and, for
/// bad content, the line, column, row and missing field ([`ErrorKind`] tells which input). The trace is published through a
/// temporary (`simpler_artifacts::publish`), so a failed conversion leaves no half trace.
///
/// This is what `simpler run` calls after a run with `--enable-l2-swimlane`.
pub fn convert(
    records: &Path,
    out: Option<&Path>,
    deps: Option<&Path>,
    func_names: Option<&Path>,
) -> Result<ConvertSummary, Error> {
    let output = out.map_or_else(|| input::default_output(records), Path::to_path_buf);
    let file = read_swimlane_file(records).map_err(ErrorKind::Records)?;

    let deps_path = input::resolve_deps(deps, records);
    warn_if_untrusted(records, deps_path.as_deref());
    let pairs = match &deps_path {
        Some(path) => DepPairs::load(path).map_err(ErrorKind::Deps)?,
        None => {
            eprintln!(
                "warning: no deps.json next to {} (pass --deps-json); the trace has no dependency arrows",
                records.display()
            );
            DepPairs::default()
        }
    };
    let (names, names_path) = names::resolve(func_names, input::parent_dir(records))?;

    let layout = Layout::new(&file);
    let mut anchors = Anchors::new(&file, &layout);
    anchors.count_degrees(&pairs.pairs);

    let written = simpler_artifacts::publish::publish(&output, |sink| {
        write_trace(
            sink,
            &file,
            &layout,
            &anchors,
            &names,
            &pairs,
            deps_path.is_some(),
        )
    })?;
    let (slices, flows) = written.value;

    if let Some((pred, succ)) = flows.first_without_row {
        eprintln!(
            "warning: {} dependency pair(s) not drawn: an endpoint has no row in {} (first: {} -> {})",
            flows.without_row,
            records.display(),
            TaskLabel(pred),
            TaskLabel(succ)
        );
    }
    Ok(ConvertSummary {
        records: records.to_path_buf(),
        output,
        deps: deps_path,
        func_names: names_path,
        slices,
        unique_pairs: pairs.pairs.len(),
        flows,
        kernels: stats::kernel_stats(&file.tasks, &names),
        span_ns: stats::span_ns(&file.tasks),
    })
}

/// Prints the run manifests' warnings about the inputs (a failed run, a stale or changed file),
/// and warns when the timing and the dependencies come from two different runs.
fn warn_if_untrusted(records: &Path, deps: Option<&Path>) {
    use simpler_artifacts::manifest::{check, find_for, RunManifest};
    for path in std::iter::once(records).chain(deps) {
        if let Some(w) = check(path) {
            eprintln!("warning: {w}");
        }
    }
    let run_of = |p: &Path| {
        find_for(p)
            .and_then(|(m, _)| RunManifest::read(&m).ok())
            .map(|m| m.run_id)
    };
    if let Some(deps) = deps {
        if let (Some(a), Some(b)) = (run_of(records), run_of(deps)) {
            if a != b {
                eprintln!(
                    "warning: the timing ({}, run {a}) and the dependencies ({}, run {b}) come from different runs; \
                     arrows may join unrelated tasks",
                    records.display(),
                    deps.display()
                );
            }
        }
    }
}

fn write_trace(
    sink: &mut simpler_artifacts::publish::Sink,
    file: &simpler_artifacts::swimlane::SwimlaneFile,
    layout: &Layout,
    anchors: &Anchors,
    names: &names::Names,
    pairs: &DepPairs,
    with_degrees: bool,
) -> io::Result<(SliceCounts, FlowCounts)> {
    let mut out = TraceWriter::new(sink)?;
    layout.tracks.write_metadata(&mut out)?;
    let slices = slices::write_slices(&mut out, file, layout, anchors, names, with_degrees)?;
    let flows = flows::write_flows(&mut out, &pairs.pairs, anchors)?;
    out.finish()?;
    Ok((slices, flows))
}
