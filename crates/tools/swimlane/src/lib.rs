//! `simpler swimlane`: the Perfetto trace of a run, laid out as the original's converter lays
//! it out, so queries written against the original's traces keep working.
//!
//! Reads a records file (ours or the original's, every level, any of its names;
//! `simpler_artifacts::swimlane`, `docs/swimlane.md`), the sibling deps.json when there is one
//! (arrows, kernel ids, SPMD block counts) and a name map, and writes `merged_swimlane.json`:
//! Chrome trace-event JSON that Perfetto (ui.perfetto.dev) opens. Then it prints the
//! per-kernel statistics.
//!
//! # The trace
//!
//! Processes and tracks as in [`layout`]: the orchestrator's submits (pid 1), the scheduler
//! threads' loop phases (pid 2), each row from dispatch to finish (pid 3, Scheduler View) and
//! from receive to end on its core (pid 4, Worker View, with the AICPU markers of dummy and
//! alloc tasks), and our counter tracks (pid 10). Slices in [`slices`], dependency arrows in
//! [`flows`], the scheduler's arrows in [`sched_flows`], counters in [`counters`], and with
//! `--overhead` the original's scheduler-overhead counters in [`overhead`].
//!
//! Modules, one job each: [`cli`] (flags), [`input`] (paths), [`names`] (labels), [`deps`]
//! (what deps.json gives), [`model`] (the resolved rows), [`layout`] (tracks, lanes, markers,
//! anchors), [`completes`] (which `complete` phase saw a finish), [`trace`] (the streaming
//! JSON writer; a section's chunks are formatted on every core and written in order, so the
//! trace is the same bytes on any machine), [`stats`] (the statistics table), [`error`] (what can fail: [`Error`] and
//! its [`ErrorKind`]).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use simpler_artifacts::provenance::Provenance;
use simpler_artifacts::release::Release;
use simpler_artifacts::swimlane::read_swimlane_file;

pub mod build;
pub mod cli;
pub mod completes;
pub mod counters;
pub mod deps;
pub mod error;
pub mod flows;
pub mod input;
pub mod layout;
pub mod model;
pub mod names;
pub mod overhead;
pub mod sched_flows;
pub mod slices;
pub mod stats;
pub mod trace;
pub mod warnings;

pub use cli::Args;
pub use error::{Error, ErrorKind};
pub use stats::{KernelStats, Statistics};
pub use trace::Parallelism;

use completes::Completes;
use deps::Deps;
use flows::FlowCounts;
use layout::Layout;
use model::Run;
use names::TaskLabel;
use sched_flows::SchedFlowCounts;
use slices::SliceCounts;
use trace::TraceWriter;

/// What [`convert`] read, wrote and found.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvertSummary {
    /// The records file read.
    pub records: PathBuf,
    /// The trace written.
    pub output: PathBuf,
    /// True when an earlier file at `output` was removed as the conversion began
    /// ([`convert_parallel`]).
    pub replaced_earlier: bool,
    /// The deps.json the arrows came from; `None` means the trace has no arrows.
    pub deps: Option<PathBuf>,
    /// The name map used, if any.
    pub func_names: Option<PathBuf>,
    /// What the reader had to default or leave out, in words.
    pub notes: Vec<String>,
    /// Slices written, by kind.
    pub slices: SliceCounts,
    /// Unique `(pred, succ)` pairs in deps.json (0 without deps.json).
    pub unique_pairs: usize,
    /// Dependency flows drawn and pairs skipped.
    pub flows: FlowCounts,
    /// The scheduler's arrows.
    pub sched_flows: SchedFlowCounts,
    /// Counter samples of our tracks.
    pub counter_samples: usize,
    /// Samples of the `--overhead` tracks (0 without the flag).
    pub overhead_samples: usize,
    /// The per-kernel statistics.
    pub statistics: Statistics,
}

impl ConvertSummary {
    /// Writes the per-kernel statistics table, as the run summary shows it.
    pub fn write_statistics<W: Write>(&self, w: W) -> io::Result<()> {
        self.statistics.write(w)
    }

    /// Writes the report `simpler swimlane` prints: the statistics table, the flow counts
    /// and what was written.
    pub fn write_report<W: Write>(&self, mut w: W) -> io::Result<()> {
        self.write_statistics(&mut w)?;
        writeln!(w)?;
        let f = &self.flows;
        match &self.deps {
            Some(deps) => {
                writeln!(
                    w,
                    "Flows: Worker View {} dependency, {} hb_violation; Scheduler View {} dependency, {} hb_violation ({} unique pairs in {})",
                    f.worker.dependency,
                    f.worker.hb_violation,
                    f.scheduler.dependency,
                    f.scheduler.hb_violation,
                    self.unique_pairs,
                    deps.display()
                )?;
                if let Some((pred, succ)) = f.first_without_row {
                    writeln!(
                        w,
                        "Not drawn: {} pair(s) with an endpoint that has no timing row (first: {} -> {})",
                        f.without_row,
                        TaskLabel(pred),
                        TaskLabel(succ)
                    )?;
                }
            }
            None => writeln!(w, "Flows: no dependency arrows (no deps.json)")?,
        }
        let (s, sf) = (&self.slices, &self.sched_flows);
        writeln!(
            w,
            "Scheduler flows: {} complete, {} complete→ready, {} dispatch, {} submit→dispatch",
            sf.complete, sf.complete_ready, sf.dispatch, sf.submit_dispatch
        )?;
        writeln!(
            w,
            "Wrote {} ({} Worker View slices, {} Scheduler View slices, {} scheduler phases, {} AICPU markers, {} submit slices, {} counter samples)",
            self.output.display(),
            s.worker,
            s.scheduler_view,
            s.phases,
            s.markers,
            s.submit,
            self.counter_samples
        )?;
        if self.replaced_earlier {
            writeln!(
                w,
                "(The earlier {} was removed when the conversion began.)",
                self.output.display()
            )?;
        }
        if self.overhead_samples > 0 {
            writeln!(w, "Overhead tracks: {} samples", self.overhead_samples)?;
        }
        Ok(())
    }
}

/// Runs `simpler swimlane`: converts and prints the report on stdout. Warnings (what the
/// reader defaulted, no deps.json, unreadable sibling name map, pairs not drawn) go to stderr.
pub fn run(args: Args) -> Result<(), Error> {
    let records = input::resolve_records(args.records.as_deref())?;
    let summary = convert_with(&records, &args)?;
    summary
        .write_report(simpler_artifacts::stdout::Lossy(io::stdout().lock()))
        .map_err(ErrorKind::Report)?;
    Ok(())
}

/// Converts `records` into a trace at `out` (default: `merged_swimlane.json` next to it).
///
/// `deps`: the deps.json for arrows, kernel ids and SPMD block counts (default: the sibling
/// `deps.json`; without one, no arrows and a warning, on stderr and in the trace's
/// `simpler: WARNING` process, [`warnings::no_arrows`]). `func_names`: the name map
/// (default: the run's own sibling `name_map*.json`, else the newest; else `func_<id>_<letters>`); its
/// `orchestrator_name` names the orchestrator's process. An explicit `deps` or `func_names`
/// that cannot be read is an error; so is a sibling deps.json that does not parse. Errors name
/// the file and, for bad content, the line, column, row and field ([`ErrorKind`] tells which
/// input). What the reader had to default is printed as warnings on stderr (and kept in
/// [`ConvertSummary::notes`]). The trace is published through a temporary
/// (`simpler_artifacts::publish`), so a failed conversion leaves no half trace.
///
/// This is what `simpler run` calls after a run with `--enable-l2-swimlane`.
pub fn convert(
    records: &Path,
    out: Option<&Path>,
    deps: Option<&Path>,
    func_names: Option<&Path>,
) -> Result<ConvertSummary, Error> {
    let args = Args {
        records: None,
        output: out.map(Path::to_path_buf),
        deps_json: deps.map(Path::to_path_buf),
        func_names: func_names.map(Path::to_path_buf),
        overhead: false,
    };
    convert_with(records, &args)
}

/// [`convert`] with every option of `simpler swimlane` (`args.records` is not used):
/// `--overhead` adds the original's scheduler-overhead counter tracks ([`overhead`]).
pub fn convert_with(records: &Path, args: &Args) -> Result<ConvertSummary, Error> {
    convert_parallel(records, args, Parallelism::default())
}

/// [`convert_with`], the trace's sections formatted on the threads and in the chunks
/// `parallelism` gives ([`TraceWriter::chunked`]); the trace's bytes are the same whatever
/// it is. The default, one thread per core, is what [`convert`] and [`convert_with`] use.
///
/// An earlier file at the output is removed as the conversion begins, once the records file
/// is known to exist, unless it is a folder or one of the inputs ([`Release`]): its space is
/// freed while the inputs are read, and the new trace has its room. A conversion that fails
/// then leaves no trace there, and says on stderr that the earlier one was removed.
pub fn convert_parallel(
    records: &Path,
    args: &Args,
    parallelism: Parallelism,
) -> Result<ConvertSummary, Error> {
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| input::default_output(records));
    let deps_path = input::resolve_deps(args.deps_json.as_deref(), records);
    let read: Vec<&Path> = std::iter::once(records)
        .chain(deps_path.as_deref())
        .chain(args.func_names.as_deref())
        .collect();
    if let Some(why) = simpler_artifacts::manifest::output_conflict(&output, &read) {
        return Err(ErrorKind::OutputConflict(why).into());
    }
    // Noted before the read: the trace is refused if an input beside it is replaced meanwhile.
    let made_from = Provenance::of(&read);
    if let Some(w) = made_from.foreign_destination(&output) {
        simpler_artifacts::errln!("warning: {w}");
    }
    let inputs = read.iter().copied();
    let earlier = records
        .is_file()
        .then(|| Release::begin(&output, inputs))
        .flatten();
    let replaced_earlier = earlier.is_some();
    let converted = convert_into(
        records,
        args,
        parallelism,
        output.clone(),
        deps_path,
        earlier,
        &made_from,
    );
    match converted {
        Ok(summary) => Ok(ConvertSummary {
            replaced_earlier,
            ..summary
        }),
        Err(e) => {
            if replaced_earlier {
                simpler_artifacts::errln!(
                    "warning: the earlier {} was removed when the conversion began; no trace replaces it",
                    output.display()
                );
            }
            Err(e)
        }
    }
}

/// The conversion of [`convert_parallel`] once its output and deps.json are resolved and an
/// earlier trace is being freed (`earlier`, waited for before the trace is written).
fn convert_into(
    records: &Path,
    args: &Args,
    parallelism: Parallelism,
    output: PathBuf,
    deps_path: Option<PathBuf>,
    earlier: Option<Release>,
    made_from: &Provenance,
) -> Result<ConvertSummary, Error> {
    let func_names = args.func_names.as_deref();
    // deps.json is read on another thread while the records are read here, then put in task
    // order and given their Scheduler View lanes, which need nothing of deps.json; the
    // warnings come out in the same order as when one file is read after the other.
    let (file, deps) = std::thread::scope(|scope| {
        let loading = deps_path
            .as_deref()
            .map(|path| scope.spawn(move || Deps::read(path)));
        let file = read_swimlane_file(records).map(|mut file| {
            model::sort_rows(&mut file.tasks);
            let lanes = layout::scheduler_view_lanes(&file.tasks);
            (file, lanes)
        });
        let deps = loading.map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        (file, deps)
    });
    let (file, lanes) = file.map_err(ErrorKind::Records)?;
    let notes = file.header.notes.clone();
    for note in &notes {
        simpler_artifacts::errln!("warning: {}: {note}", records.display());
    }

    let mut warnings = untrusted(records, deps_path.as_deref());
    let run_id = simpler_artifacts::manifest::run_id_of(records);
    for w in &warnings {
        simpler_artifacts::errln!("warning: {w}");
    }
    let deps = match (deps, &deps_path) {
        (Some(read), Some(path)) => {
            let (deps, deps_notes) = read.map_err(ErrorKind::Deps)?;
            for note in deps_notes {
                simpler_artifacts::errln!("warning: {}: {note}", path.display());
            }
            deps
        }
        _ => {
            simpler_artifacts::errln!(
                "warning: no deps.json next to {} (pass --deps-json); the trace has no dependency arrows",
                records.display()
            );
            // Said in the trace too: opened later, a trace without arrows would otherwise
            // read as a run whose tasks had no dependencies.
            warnings.push(warnings::no_arrows(records));
            Deps::default()
        }
    };
    let (names, names_path) = names::resolve(func_names, input::parent_dir(records))?;

    let run = Run::new(file, deps);
    // The rows were sorted above, so the run keeps them in that order.
    let layout = Layout::new(&run, lanes);
    let completes = Completes::new(&run);
    // Gigabytes written once: past the page cache, the kernel copies none of them. Into the
    // room of an earlier trace, which is free by now unless the inputs were read quickly.
    if let Some(earlier) = earlier {
        earlier.wait();
    }
    let options = simpler_artifacts::publish::Options::default().direct();
    let _hold = made_from.hold(&output).map_err(ErrorKind::Publish)?;
    let written = simpler_artifacts::publish::publish_with(&output, options, |sink| {
        std::thread::scope(|scope| {
            // What the flows and the counters are drawn from is worked out while the slices
            // are written, so the disk is not left idle between the sections.
            let planning = scope.spawn(|| {
                (
                    flows::FlowPlan::new(&run, &layout, parallelism),
                    counters::CounterPlan::new(&run, &layout),
                )
            });
            // The write calls run on a second thread while the events are put together here.
            trace::pipelined(sink, |pipe| {
                let mut out = TraceWriter::piped(pipe)?;
                out.set_parallelism(parallelism);
                warnings::write_warnings(&mut out, &run, &warnings)?;
                let slices = slices::write_slices(&mut out, &run, &layout, &completes, &names)?;
                let (flow_plan, counter_plan) = planning
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                let flows = flows::write_dependency_flows(&mut out, &run, flow_plan.as_ref())?;
                let sched_flows = sched_flows::write_sched_flows(&mut out, &run, &layout, &completes)?;
                let counter_samples = counters::write_counters(&mut out, counter_plan.as_ref())?;
                build::write_build(&mut out, &run)?;
                let overhead_samples = match args.overhead {
                    true => overhead::write_overhead(&mut out, &run)?,
                    false => 0,
                };
                out.finish_with_run(run_id.as_deref())?;
                Ok((slices, flows, sched_flows, counter_samples, overhead_samples))
            })
        })
    })?;
    let (slices, flows, sched_flows, counter_samples, overhead_samples) = written.value;
    if args.overhead && run.deps.pairs.is_empty() {
        simpler_artifacts::errln!(
            "warning: --overhead needs the dependencies of deps.json for task readiness; no overhead tracks"
        );
    }

    if let Some((pred, succ)) = flows.first_without_row {
        simpler_artifacts::errln!(
            "warning: {} dependency pair(s) not drawn: an endpoint has no row in {} (first: {} -> {})",
            flows.without_row,
            records.display(),
            TaskLabel(pred),
            TaskLabel(succ)
        );
    }
    let source = records.file_name().map_or_else(
        || records.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    Ok(ConvertSummary {
        records: records.to_path_buf(),
        output,
        replaced_earlier: false,
        deps: deps_path,
        func_names: names_path,
        notes,
        slices,
        unique_pairs: run.deps.pairs.len(),
        flows,
        sched_flows,
        counter_samples,
        overhead_samples,
        statistics: Statistics::new(&run.rows, run.header.level, &names, &source),
    })
}

/// The run manifests' warnings about the inputs (a failed run, a stale or changed file), and
/// one when the timing and the dependencies come from two different runs.
fn untrusted(records: &Path, deps: Option<&Path>) -> Vec<String> {
    use simpler_artifacts::manifest::{check, mixed_runs};
    let mut warnings: Vec<String> = std::iter::once(records).chain(deps).filter_map(check).collect();
    warnings.extend(deps.and_then(|deps| mixed_runs(records, deps)));
    warnings
}
