//! `simpler sched-overhead`: is the scheduler the bottleneck (an idle core next to ready,
//! undispatched work), or is the run compute/dependency bound? The original's overhead model
//! (`../shared/reference/timing-analysis.md` §3; `docs/why-slow.md`) over a run's timing
//! records and deps.json, as text tables whose first line states that question.
//!
//! Parts: 1 the verdict and 2 the per-engine overhead ([`overhead`]), 3 the aicore switch
//! ([`switch`]), 4 head/tail percentiles ([`head_tail`]), 5 the scheduler loop
//! ([`sched_loop`], from scheduler phase records: swimlane level ≥ 3), 6 critical-path latency
//! attribution ([`critical`]); [`report`] renders them. [`adapter`] is the only reader of the
//! artifact formats; [`tasks`] holds the per-task spans every part shares.

use std::path::{Path, PathBuf};

pub mod adapter;
pub mod cli;
pub mod critical;
pub mod error;
pub mod head_tail;
pub mod overhead;
pub mod report;
pub mod sched_loop;
pub mod switch;
pub mod tasks;

pub use cli::Args;
pub use error::{Error, ErrorKind};

use adapter::Input;
use critical::Attribution;
use head_tail::Distribution;
use overhead::Overhead;
use sched_loop::ThreadLoop;
use switch::{CoreSwitch, EngineSwitch};
use tasks::Tasks;

/// Every part of the model for one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// Rows read.
    pub rows: usize,
    /// Per-task spans and the window.
    pub tasks: Tasks,
    /// Parts 1 and 2.
    pub overhead: Overhead,
    /// Part 3, per core.
    pub switches: Vec<CoreSwitch>,
    /// Part 3, per engine.
    pub engine_switches: [Option<EngineSwitch>; 2],
    /// Part 3, the makespan bound `(lower, upper)`, ns.
    pub switch_bound: (u64, u64),
    /// Part 4, head overhead.
    pub head: Option<Distribution>,
    /// Part 4, tail overhead.
    pub tail: Option<Distribution>,
    /// Part 5 (empty without phase records).
    pub loops: Vec<ThreadLoop>,
    /// Part 6.
    pub critical: Attribution,
    /// What the reader of the report must know about the figures (tasks whose rows were
    /// merged): printed on stderr by [`run`] and at the top of the report.
    pub warnings: Vec<String>,
}

/// Runs the model on `input`. `records` names the file in errors.
pub fn analyze(input: &Input, records: &Path) -> Result<Analysis, Error> {
    let tasks = Tasks::new(input)
        .map_err(|m| ErrorKind::NoSchedulerStamps {
            path: records.to_path_buf(),
            task: m.task,
        })?
        .ok_or_else(|| ErrorKind::NoTasks(records.to_path_buf()))?;
    let overhead = overhead::sweep(&input.tasks, &tasks);
    let switches = switch::per_core(&input.tasks, &tasks, &overhead);
    let engine_switches = switch::per_engine(&switches);
    let switch_bound = switch::makespan_bound(&switches, &engine_switches);
    let (heads, tails) = head_tail::heads_and_tails(&input.tasks);
    let loops = sched_loop::per_thread(&input.phases, &input.tasks, &input.edges);
    let critical = critical::attribute(&tasks, &input.edges);
    let warnings = merged_rows_warning(records, &tasks.overfull)
        .into_iter()
        .collect();
    Ok(Analysis {
        rows: input.tasks.len(),
        tasks,
        overhead,
        switches,
        engine_switches,
        switch_bound,
        head: Distribution::of(heads),
        tail: Distribution::of(tails),
        loops,
        critical,
        warnings,
    })
}

/// The warning about tasks with more rows than their block count and kernels give: their
/// rows are merged into one task (another task's rows under its id, in a corrupt or edited
/// file), so the model has fewer tasks than the run. Worded as `simpler critical-path` words
/// it; the count and the first such task.
fn merged_rows_warning(records: &Path, overfull: &[tasks::OverfullTask]) -> Option<String> {
    let first = overfull.first()?;
    let task = report::task_label(first.task);
    let tail = "analysed as one task, so the analysis has fewer tasks than the run (another task's \
                rows under its token?)";
    Some(match overfull.len() {
        1 => format!(
            "{}: task {task} has {} rows where its block count and kernels give {}: its rows are {tail}",
            records.display(),
            first.rows,
            first.expected
        ),
        n => format!(
            "{}: {n} tasks have more rows than their block count and kernels give (first: task \
             {task} has {} rows where they give {}): each such task's rows are {tail}",
            records.display(),
            first.rows,
            first.expected
        ),
    })
}

/// The records file a run argument names: the file itself, or the records in the folder
/// (`simpler_artifacts::swimlane::find_in`, the rule every tool uses; a warning on stderr when
/// the folder's copies under the records' names differ).
pub fn records_of(run: &Path) -> Result<PathBuf, Error> {
    if run.is_file() {
        return Ok(run.to_path_buf());
    }
    let records = simpler_artifacts::swimlane::find_in(run).ok_or_else(|| {
        // Found by a review: "run with --enable-l2-swimlane" was said of a run that did,
        // and was killed (or still going).
        let why = simpler_artifacts::manifest::why_absent(run, "l2_swimlane")
            .unwrap_or_else(|| "run with --enable-l2-swimlane".into());
        ErrorKind::NoRecords(run.to_path_buf(), why)
    })?;
    if let Some(w) = simpler_artifacts::swimlane::differing_copies(&records) {
        simpler_artifacts::errln!("warning: {w}");
    }
    Ok(records)
}

/// Reads a run: its records and its deps.json (`deps`, else the one beside the records).
pub fn load(records: &Path, deps: Option<&Path>) -> Result<Input, Error> {
    let deps = match deps {
        Some(d) => d.to_path_buf(),
        None => {
            let sibling = records.with_file_name("deps.json");
            if !sibling.is_file() {
                return Err(ErrorKind::NoDeps(records.to_path_buf()).into());
            }
            sibling
        }
    };
    use simpler_artifacts::manifest::{check, few_timed_edges, mixed_runs, unlisted_timed_tasks};
    let mut warnings: Vec<String> = [records, &deps].into_iter().filter_map(check).collect();
    warnings.extend(mixed_runs(records, &deps));
    let mut input = Input::default();
    adapter::read_records(records, &mut input)?;
    adapter::read_edges(&deps, &mut input)?;
    // Edges between tasks with kernels: the ones the records should time.
    let timed: rustc_hash::FxHashSet<u64> = input.tasks.iter().map(|t| t.id).collect();
    let kernel_less = &input.kernel_less;
    let expected: Vec<(u64, u64)> = (input.edges.iter().copied())
        .filter(|(p, s)| !kernel_less.contains(p) && !kernel_less.contains(s))
        .collect();
    let joins = |&(p, s): &(u64, u64)| timed.contains(&p) && timed.contains(&s);
    let joined = expected.iter().filter(|e| joins(e)).count();
    let first_unjoined = expected.iter().copied().find(|e| !joins(e));
    warnings.extend(few_timed_edges(&deps, expected.len(), joined, first_unjoined));
    let (unlisted, first) = input.unlisted;
    warnings.extend(unlisted_timed_tasks(records, &deps, unlisted, first));
    for w in &warnings {
        simpler_artifacts::errln!("warning: {w}");
    }
    Ok(input)
}

/// Runs `simpler sched-overhead`: prints the report on stdout.
pub fn run(args: Args) -> Result<(), Error> {
    let records = records_of(&args.run)?;
    let input = load(&records, args.deps_json.as_deref())?;
    let analysis = analyze(&input, &records)?;
    for w in &analysis.warnings {
        simpler_artifacts::errln!("warning: {w}");
    }
    simpler_artifacts::out!("{}", report::render(&analysis));
    Ok(())
}
