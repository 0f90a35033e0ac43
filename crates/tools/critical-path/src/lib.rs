//! `simpler critical-path`: which chain of tasks sets a run's makespan, and how much of it is
//! compute and how much stall (`../shared/reference/timing-analysis.md` §2; `docs/why-slow.md`).
//!
//! For each run folder (timing records + deps.json) it builds the timed task graph
//! ([`graph`]), finds the static critical path ([`cpm`]: the longest duration-weighted chain of
//! happens-before edges, the floor the dependencies allow on unlimited cores) and the observed
//! one ([`observed`]: walked back from the last task to end through whatever actually released
//! each task, a producer or the previous holder of its core), and writes the Markdown report
//! ([`report`]) and, from the run's Perfetto trace, `CPM_static.json` / `CPM_observed.json`
//! ([`trace`]). Every time is in clock ticks (ns for this runtime's records).
//!
//! Modules, one job each: [`cli`] (flags), [`input`] (which folders and files), [`adapter`]
//! (the only reader of the artifact formats), [`graph`], [`cpm`], [`observed`], [`report`],
//! [`trace`], [`error`].

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use simpler_artifacts::name_map::NameMap;
use simpler_artifacts::provenance::Provenance;

pub mod adapter;
pub mod cli;
pub mod cpm;
pub mod error;
pub mod graph;
pub mod input;
pub mod observed;
pub mod report;
pub mod trace;

pub use cli::Args;
pub use error::{Error, ErrorKind};

use cpm::StaticPath;
use graph::{Graph, GraphBuilder};
use input::RunDir;
use observed::ObservedPath;

/// The analysis of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    /// The run's label in reports.
    pub label: String,
    /// Ticks per second of its times.
    pub clock_freq_hz: u64,
    /// The timed task graph.
    pub graph: Graph,
    /// The static critical path.
    pub static_path: StaticPath,
    /// The observed critical path.
    pub observed: ObservedPath,
    /// Why the run's files are not to be trusted as a finished run's (the run manifest's
    /// verdict, `simpler_artifacts::manifest::check`): printed on stderr and at the top of the
    /// run's section of the report, which outlives the terminal.
    pub warnings: Vec<String>,
}

impl Analysis {
    /// Latest end − earliest start, ticks.
    pub fn makespan(&self) -> u64 {
        self.graph.t1 - self.graph.t0
    }

    /// The static path's raw task ids, first to last.
    pub fn static_ids(&self) -> Vec<u64> {
        self.static_path
            .tasks
            .iter()
            .map(|&t| self.graph.ids[t as usize])
            .collect()
    }

    /// The observed path's raw task ids, first to last.
    pub fn observed_ids(&self) -> Vec<u64> {
        self.observed
            .segments
            .iter()
            .map(|s| self.graph.ids[s.task as usize])
            .collect()
    }
}

/// Both paths of `graph` (the observed one with the tolerance the graph was built with,
/// [`Graph::tol`]); `None` for a graph without tasks. `dir` names the run in a
/// [`ErrorKind::Cycle`] error.
pub fn analyze(
    label: String,
    clock_freq_hz: u64,
    graph: Graph,
    dir: &Path,
) -> Result<Option<Analysis>, Error> {
    let static_path = cpm::static_cpm(&graph).map_err(|c| ErrorKind::Cycle {
        dir: dir.to_path_buf(),
        ordered: c.ordered,
        total: c.total,
    })?;
    let Some(static_path) = static_path else {
        return Ok(None);
    };
    let observed = observed::observed_path(&graph);
    Ok(Some(Analysis {
        label,
        clock_freq_hz,
        graph,
        static_path,
        observed,
        warnings: Vec::new(),
    }))
}

/// Reads a run's records and deps.json (both streamed, each on its own thread: parsing is most
/// of the time) into its graph; returns the graph and the records' clock. A deps.json whose
/// edges have a cycle is refused (`simpler_artifacts::deps::cycle`).
pub fn load_graph(records: &Path, deps: &Path, names: &NameMap, tol: u64) -> Result<(Graph, u64), Error> {
    let mut builder = GraphBuilder::default();
    let mut tasks = Vec::new();
    let mut edges = Vec::new();
    let (timing, graph) = std::thread::scope(|s| {
        let deps_reader = s.spawn(|| adapter::read_graph(deps, |t| tasks.push(t), |e| edges.push(e)));
        let timing = adapter::read_slices(records, |s| builder.add_slice(s));
        (
            timing,
            deps_reader.join().expect("the deps.json reader does not panic"),
        )
    });
    let timing = timing?;
    graph?;
    let pairs: Vec<(u64, u64)> = edges.iter().map(|e| (e.pred, e.succ)).collect();
    if let Some(cycle) = simpler_artifacts::deps::cycle::cycle_message(&pairs, |i| i) {
        return Err(simpler_artifacts::deps::DepsReadError::invalid(deps, "deps.json", cycle).into());
    }
    drop(pairs);
    if builder.tasks() == 0 {
        return Err(ErrorKind::NoTasks(records.to_path_buf()).into());
    }
    for t in tasks {
        builder.add_task(t);
    }
    for e in edges {
        builder.add_edge(e);
    }
    Ok((builder.build(names, timing.file_ticks(tol)), timing.clock_freq_hz))
}

/// Analyses one run folder. Its warnings (printed on stderr and kept for the report): the run
/// manifests' verdicts on the records and deps.json, the two coming from different runs, and
/// few of deps.json's edges joining timed tasks.
pub fn analyze_run(run: &RunDir, tol: u64) -> Result<Analysis, Error> {
    use simpler_artifacts::manifest::{check, few_timed_edges, mixed_runs, unlisted_timed_tasks};
    let mut warnings: Vec<String> = [&run.records, &run.deps]
        .into_iter()
        .filter_map(|path| check(path))
        .collect();
    warnings.extend(mixed_runs(&run.records, &run.deps));
    let (names, _) = simpler_artifacts::name_map::resolve(None, &run.dir)?;
    let loaded = load_graph(&run.records, &run.deps, &names, tol);
    let (graph, freq) = loaded.inspect_err(|_| print_warnings(&warnings))?;
    let c = graph.coverage;
    warnings.extend(few_timed_edges(&run.deps, c.edges, c.joined, c.first_unjoined));
    warnings.extend(unlisted_timed_tasks(
        &run.records,
        &run.deps,
        c.unlisted,
        c.first_unlisted,
    ));
    warnings.extend(untimely_warning(&run.deps, c.untimely, c.first_untimely, tol));
    warnings.extend(overfull_warning(&run.records, &graph.overfull));
    print_warnings(&warnings);
    let mut analysis = analyze(run.label.clone(), freq, graph, &run.dir)?
        .ok_or_else(|| Error::from(ErrorKind::NoTasks(run.records.clone())))?;
    analysis.warnings = warnings;
    Ok(analysis)
}

/// The warning about deps.json's pairs of timed tasks that the timing does not bear out (the
/// succ started before the pred ended, beyond `--tol`, or before it started): they are left
/// out of the happens-before graph the static path is computed on. A run's own deps.json has
/// none; a deps.json of another run, or edited, may.
fn untimely_warning(deps: &Path, untimely: usize, first: Option<(u64, u64)>, tol: u64) -> Option<String> {
    let (p, s) = first?;
    let label = simpler_artifacts::deps::task_label;
    let (pairs, are) = match untimely {
        1 => ("1 dependency pair".to_owned(), "is"),
        n => (format!("{n} dependency pairs"), "are"),
    };
    Some(format!(
        "{}: {pairs} of two timed tasks {are} not borne out by the timing (the succ started before \
         the pred ended, beyond --tol {tol}, or before it started) and left out of the \
         happens-before graph (first: {} -> {}): a deps.json of another run?",
        deps.display(),
        label(p),
        label(s)
    ))
}

/// At most this many tasks are named in [`overfull_warning`]; the count says the rest.
const NAMED_OVERFULL: usize = 3;

/// The warning about tasks with more rows than their blocks and kernels give: their rows are
/// merged into one task (a task token another task's rows repeat, in a corrupt or edited
/// file), so the analysis has fewer tasks than the run.
fn overfull_warning(records: &Path, overfull: &[graph::OverfullTask]) -> Option<String> {
    overfull.first()?;
    let shown: Vec<String> = overfull
        .iter()
        .take(NAMED_OVERFULL)
        .map(|t| {
            let rows: Vec<String> = t.rows.iter().map(|r| format!("aicore_tasks[{r}]")).collect();
            format!(
                "task {} has {} rows ({}) where its block count and kernels give {}",
                trace::task_display(t.task),
                t.rows.len(),
                rows.join(", "),
                t.expected
            )
        })
        .collect();
    let more = match overfull.len() - shown.len() {
        0 => String::new(),
        n => format!(", and {n} more such tasks"),
    };
    let whose = if overfull.len() == 1 {
        "its"
    } else {
        "each such task's"
    };
    Some(format!(
        "{}: {}{more}: {whose} rows are analysed as one task, so the analysis has fewer tasks than \
         the run (another task's rows under its token?)",
        records.display(),
        shown.join("; ")
    ))
}

fn print_warnings(warnings: &[String]) {
    for w in warnings {
        simpler_artifacts::errln!("warning: {w}");
    }
}

/// What [`run`] wrote for one run folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The report.
    pub report: PathBuf,
    /// `CPM_static.json` and `CPM_observed.json`, when the run had a valid Perfetto trace.
    pub traces: Option<[PathBuf; 2]>,
}

/// Runs `simpler critical-path`: analyses every run folder under the input, writes each one's
/// report and CPM traces, and prints the summary (and the report with `--stdout`).
///
/// A folder that cannot be analysed (unreadable records, no task rows) is reported on stderr
/// and the others are still analysed; with a single folder its error is the command's. A run
/// whose Perfetto trace is invalid (lacks a path task, shows another run, does not parse) or
/// cannot be read, or whose CPM traces cannot be written, gets its report but no CPM traces;
/// each is said as what it is (an invalid trace, a file that cannot be read, one that cannot be
/// written). Either way the command fails at the end ([`ErrorKind::FailedRuns`],
/// [`ErrorKind::TracesNotWritten`]), after the summary. A folder that gets no pair of CPM traces
/// this time keeps none: those an earlier analysis left are removed (they may show another
/// path than this one's), and so is the static one this analysis wrote when the observed one
/// then failed (the two are kept only as a pair), each said as what it is.
pub fn run(args: Args) -> Result<(), Error> {
    run_logged(args, &mut io::stderr())
}

/// [`run`], with the per-folder errors and the removals of CPM traces written to `log`
/// (stderr for the command); the analyses' warnings still go to stderr.
pub fn run_logged(args: Args, log: &mut dyn Write) -> Result<(), Error> {
    let root = input::root_of(&args.input)?;
    let runs = input::discover(&root)?;
    for run in &runs {
        if let Some(why) = report_conflict(run, &run.dir.join(&args.report)) {
            return Err(ErrorKind::ReportConflict(why).into());
        }
    }
    let mut analyses = Vec::with_capacity(runs.len());
    let mut written = Vec::with_capacity(runs.len());
    let (mut invalid, mut unreadable, mut unwritable) = (0, 0, 0);
    let mut failed_runs = 0;
    for run in &runs {
        // Noted before the read: nothing is written beside an input replaced meanwhile.
        let mut made_from = Provenance::of(&[&run.records, &run.deps]);
        let analysis = match analyze_run(run, args.tol) {
            Ok(a) => a,
            Err(e) if runs.len() == 1 => return Err(e),
            Err(e) => {
                say(log, format_args!("error: {}: {e:#}", run.dir.display()));
                remove_stale_traces(&run.dir, &[], log);
                failed_runs += 1;
                continue;
            }
        };
        let report = run.dir.join(&args.report);
        let hold = made_from.hold(&report)?;
        // A name in the run's folder: a link there is replaced, not written through.
        simpler_artifacts::publish::publish_bytes_with(
            &report,
            simpler_artifacts::publish::Options::default().chosen_name(),
            report::render(std::slice::from_ref(&analysis), args.top).as_bytes(),
        )?;
        drop(hold);
        let mut fresh = Vec::new();
        let traces = match run.merged_trace() {
            None => {
                say(
                    log,
                    format_args!(
                        "warning: no merged_swimlane*.json in {}; skipped the Perfetto critical-path traces (run `simpler swimlane` first)",
                        run.dir.display()
                    ),
                );
                None
            }
            Some(merged) => {
                let records_run = simpler_artifacts::manifest::run_id_of(&run.records);
                made_from.add(&merged);
                match trace::write_cpm_traces(
                    &merged,
                    records_run.as_deref(),
                    &run.dir,
                    &analysis.static_ids(),
                    &analysis.observed_ids(),
                    &made_from,
                ) {
                    Ok(paths) => Some(paths),
                    Err(failure) => {
                        let e = &failure.error;
                        if e.is_invalid_trace() {
                            invalid += 1;
                            say(
                                log,
                                format_args!(
                                    "error: invalid {} in {}: {e}",
                                    merged.file_name().map_or_else(
                                        || merged.display().to_string(),
                                        |n| n.to_string_lossy().into_owned()
                                    ),
                                    run.dir.display()
                                ),
                            );
                        } else {
                            // "cannot read <trace>: ..." or "cannot write <CPM trace>: ...".
                            if matches!(e, trace::TraceError::Read { .. }) {
                                unreadable += 1;
                            } else {
                                unwritable += 1;
                            }
                            say(log, format_args!("error: {e}"));
                        }
                        fresh = failure.written;
                        None
                    }
                }
            }
        };
        if traces.is_none() {
            remove_stale_traces(&run.dir, &fresh, log);
        }
        written.push(Written { report, traces });
        analyses.push(analysis);
    }
    print_summary(
        simpler_artifacts::stdout::Lossy(io::stdout().lock()),
        &root,
        &analyses,
        &written,
        args.stdout.then_some(args.top),
    )
    .map_err(|e| ErrorKind::Walk {
        path: PathBuf::from("<stdout>"),
        source: e,
    })?;
    if failed_runs > 0 {
        return Err(ErrorKind::FailedRuns {
            failed: failed_runs,
            total: runs.len(),
        }
        .into());
    }
    if invalid + unreadable + unwritable > 0 {
        return Err(ErrorKind::TracesNotWritten {
            invalid,
            unreadable,
            unwritable,
        }
        .into());
    }
    Ok(())
}

/// Why the report may not be written at `report`: it would replace a file the analysis reads,
/// the run manifest, or a file the manifest lists (a diagnostic's artifact or a view: the
/// report is not a new rendering of any of them).
fn report_conflict(run: &RunDir, report: &Path) -> Option<String> {
    use simpler_artifacts::manifest::{find_for, output_conflict, Governing, RunManifest};
    let merged = run.merged_trace();
    let inputs: Vec<&Path> = [run.records.as_path(), run.deps.as_path()]
        .into_iter()
        .chain(merged.as_deref())
        .collect();
    let shown = report.display();
    if let Some(why) = output_conflict(report, &inputs) {
        return Some(why.replacen("--output", "--report", 1));
    }
    let Governing { manifest, name, .. } = find_for(report)?;
    let m = match RunManifest::read(&manifest) {
        Ok(m) => m,
        // Its views are unknown, but the report is not there (`output_conflict` refused it
        // otherwise), so writing it replaces nothing of the run's. Not silent: this run.json is
        // the one of the records and deps.json beside the report, and `analyze_run` warns
        // that it cannot be read, and why, for each (`manifest::check`).
        Err(_) => return None,
    };
    m.views.iter().any(|v| v.name == name).then(|| {
        format!(
            "--report {shown} is a view of run {} (per {}); choose another name",
            m.run_id,
            manifest.display()
        )
    })
}

/// Writes one line to `log`; a log that cannot be written (a closed stderr) loses it, as
/// `simpler_artifacts::errln!` would, without a panic.
fn say(log: &mut dyn Write, line: fmt::Arguments<'_>) {
    let _ = writeln!(log, "{line}");
}

/// Removes the CPM traces of `dir` when this analysis could not write the pair, saying so and
/// why: those in `fresh` were written by this analysis before its companion failed (kept only
/// as a pair); the others were left by an earlier analysis and may show another path. A
/// failure to remove one is said too.
fn remove_stale_traces(dir: &Path, fresh: &[PathBuf], log: &mut dyn Write) {
    let names = [trace::STATIC_TRACE, trace::OBSERVED_TRACE];
    for (name, companion) in names.into_iter().zip(names.into_iter().rev()) {
        let path = dir.join(name);
        if !path.is_file() {
            continue;
        }
        let shown = path.display();
        let companion = dir.join(companion);
        let companion = companion.display();
        let line = match (fresh.contains(&path), std::fs::remove_file(&path)) {
            (true, Ok(())) => format!(
                "warning: removed {shown}, which this analysis wrote: its companion {companion} was not \
                 written (see above), and the two are kept only as a pair"
            ),
            (true, Err(e)) => format!(
                "warning: {shown}, which this analysis wrote, could not be removed ({e}); its companion \
                 {companion} was not written (see above)"
            ),
            (false, Ok(())) => format!(
                "warning: removed {shown}, left by an earlier analysis: this analysis wrote none to replace \
                 it, and it may show another path than the files analysed now"
            ),
            (false, Err(e)) => format!(
                "warning: {shown} is left by an earlier analysis and could not be removed ({e}); it may \
                 show another path than the files analysed now"
            ),
        };
        say(log, format_args!("{line}"));
    }
}

/// The summary `run` prints: the runs, one line each with both paths, the files written, and
/// the whole report when `full_report` gives its family-table rows.
pub fn print_summary<W: Write>(
    mut w: W,
    root: &Path,
    analyses: &[Analysis],
    written: &[Written],
    full_report: Option<usize>,
) -> io::Result<()> {
    writeln!(w, "Analyzed {} run(s) under {}", analyses.len(), root.display())?;
    for a in analyses {
        writeln!(w, "{}", report::summary_line(a))?;
        writeln!(w, "  static path:   {}", report::path_line(&a.static_ids()))?;
        writeln!(w, "  observed path: {}", report::path_line(&a.observed_ids()))?;
    }
    for out in written {
        writeln!(w, "Report written to: {}", out.report.display())?;
    }
    for paths in written.iter().filter_map(|o| o.traces.as_ref()) {
        for p in paths {
            writeln!(w, "Perfetto trace written to: {}", p.display())?;
        }
    }
    if let Some(top) = full_report {
        writeln!(w, "\n{}", report::render(analyses, top))?;
    }
    Ok(())
}
