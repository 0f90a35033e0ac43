//! `simpler plan`: the command line and what it does.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use simpler_artifacts::manifest::{self, RunManifest};
use simpler_artifacts::provenance::Provenance;
use simpler_runtime::{RuntimeEnv, RuntimeKind};

use crate::analysis::{analyze_file, manifest_of, Analysis, RINGS};
use crate::error::{Error, ErrorKind};
use crate::report::{self, PLAN_FILE};
use crate::search::{self, SearchResult};
use crate::target::{Target, Trial};

/// `simpler plan`: how big each ring must be.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// A run folder (with scope_stats/scope_stats.jsonl), a recording FILE.jsonl (one outside
    /// a scope_stats/ folder is planned on its own, without a run.json), a workload FILE.json,
    /// a deps.json or a built-in example name.
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,
    /// Runtime of the re-runs (and of the recording run) [default: the workload's, else tmr].
    #[arg(long, value_parser = parse_runtime)]
    pub runtime: Option<RuntimeKind>,
    /// Runs per candidate size in the verified search; 0 skips the search (recorded data only).
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub verify: usize,
    /// Predict, without running, whether KEY=VALUE[,KEY=VALUE..] deadlocks (VALUE one number
    /// or four `:`-separated numbers, one per ring), on which ring and at which scope site;
    /// exits 5 when a deadlock is predicted, 6 when none is but a size is not proven safe.
    #[arg(long, value_name = "KEY=VALUE[,..]", value_parser = check_arg)]
    pub check: Option<RuntimeEnv>,
    /// Keep the recording run (scope stats, its HTML report with the plan section, plan.json)
    /// in this folder [default: a temporary folder, removed].
    #[arg(long, value_name = "DIR")]
    pub output_prefix: Option<PathBuf>,
    /// A built-in example's parameter KEY=VALUE (repeatable; `simpler run --list` shows them).
    /// A run folder's example is re-run with the parameters its run.json recorded.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
}

fn parse_runtime(s: &str) -> Result<RuntimeKind, String> {
    RuntimeKind::from_name(s).ok_or_else(|| format!("unknown runtime `{s}` (tmr or hbg)"))
}

/// Parses `--check`: comma-separated `KEY=VALUE`, each VALUE one number or four numbers
/// separated by `:` (a `,` would end the pair). At least one pair, each key once (as in
/// `--runtime-env` and a workload file: the last one won without a word, found by a review);
/// an error quotes the pairs as given.
pub fn parse_check(spec: &str) -> Result<RuntimeEnv, Error> {
    let check = |why: String| Error::from(ErrorKind::Check(why));
    let pairs: Vec<&str> = spec.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
    if pairs.is_empty() {
        return Err(check(
            "give at least one KEY=VALUE (ring_task_window, ring_heap or ring_dep_pool)".into(),
        ));
    }
    let mut converted = Vec::with_capacity(pairs.len());
    let mut given: Vec<(&str, &str)> = Vec::with_capacity(pairs.len()); // (key, pair)
    for pair in pairs {
        let value = pair.split_once('=').map_or("", |(_, v)| v);
        let parts = value.split(':').count();
        if parts != 1 && parts != RINGS {
            return Err(check(format!(
                "`{pair}`: a value is one number or {RINGS} `:`-separated numbers (one per ring)"
            )));
        }
        let c = pair.replace(':', ",");
        RuntimeEnv::from_pairs([&c]).map_err(|e| check(format!("`{pair}`: {e}")))?;
        // The pair was accepted, so it has a key.
        let key = pair.split_once('=').map_or(pair, |(k, _)| k).trim();
        if let Some(&(_, first)) = given.iter().find(|(k, _)| *k == key) {
            return Err(check(
                simpler_runtime::config::runtime_env::duplicate_key(key, first, pair).to_string(),
            ));
        }
        given.push((key, pair));
        converted.push(c);
    }
    RuntimeEnv::from_pairs(&converted).map_err(|e| check(e.to_string()))
}

/// `--check`'s value parser: [`parse_check`], its message as clap shows it (a usage error).
fn check_arg(spec: &str) -> Result<RuntimeEnv, String> {
    parse_check(spec).map_err(|e| match e.kind() {
        ErrorKind::Check(why) => why.clone(),
        _ => e.to_string(),
    })
}

/// The scope_stats.jsonl of a run folder, if `input` is one, or the file itself: any
/// `*.jsonl` (a recording copied under another name is one too; no other input is JSON Lines).
fn recorded_file(input: &Path) -> Option<PathBuf> {
    if input.is_dir() {
        let f = input.join("scope_stats").join("scope_stats.jsonl");
        return f.is_file().then_some(f);
    }
    (input.extension()? == "jsonl").then(|| input.to_path_buf())
}

/// The `run.json` of the run folder that holds the recording `file` ([`manifest_of`]): the
/// plan takes the example, its parameters and the runtime from it. One that does not list the
/// file (a recording left over from another run, or copied in by hand) is refused
/// ([`ErrorKind::ForeignRecording`]): found by a review, the plan mixed the peaks of one run
/// with the subject, parameters and verified runs of another, with only a warning. A `running`
/// manifest lists nothing yet; how that run ended is said of it ([`stopped_recording`]).
fn recording_manifest(file: &Path) -> Result<Option<RunManifest>, Error> {
    let manifest = manifest_of(file)?;
    let (Some(m), Some(folder), Some(name)) =
        (&manifest, crate::analysis::run_folder_of(file), file.file_name())
    else {
        return Ok(manifest);
    };
    // `run_folder_of`: the file is `<folder>/scope_stats/<name>`.
    let listed = format!("scope_stats/{}", name.to_string_lossy());
    if m.status != manifest::RunStatus::Running && m.find(&listed).is_none() {
        return Err(ErrorKind::ForeignRecording {
            file: file.to_path_buf(),
            run_id: m.run_id.clone(),
            manifest: folder.join(manifest::FILE_NAME),
        }
        .into());
    }
    // A re-run of a graph that may be incomplete recorded only that part (found by a review:
    // `run --from-deps --allow-incomplete` and a plan of its folder bypassed the refusal of
    // the incomplete graph itself).
    if m.incomplete_input.is_some() {
        if let Some(why) = manifest::check_complete(file) {
            return Err(crate::target::incomplete_graph(file, why));
        }
    }
    Ok(manifest)
}

/// The re-run target of a run folder: the built-in example its manifest names, with the
/// parameters it recorded (real kernels and golden), else its deps.json (replay). An example
/// run whose manifest predates recorded parameters is re-run from its deps.json unless its
/// case was the default one: re-running the defaults verified sizes for another graph. A
/// recorded parameter the example refuses is an error naming the run.json and the field.
fn folder_target(folder: &Path, manifest: Option<&RunManifest>) -> Result<Option<Target>, Error> {
    let example = || -> Result<Option<Target>, Error> {
        let Some(m) = manifest else {
            return Ok(None);
        };
        let (name, case) = m.subject.split_once(' ').unwrap_or((&m.subject, ""));
        let Some(e) = simpler_examples::find(name) else {
            return Ok(None);
        };
        if m.params.is_empty() && !matches!(case, "" | "(default)") {
            return Ok(None);
        }
        Target::recorded_example(e, &m.params, &folder.join(manifest::FILE_NAME)).map(Some)
    };
    let deps = folder.join("deps.json");
    let target = example()?.or_else(|| deps.is_file().then_some(Target::Deps(deps)));
    if let (Some(Target::Deps(_)), Some(m)) = (&target, manifest) {
        if m.subject.starts_with("workload ") {
            simpler_artifacts::errln!(
                "note: {} holds a run of a {}; its deps.json is replayed, and a replay puts the consecutive \
                 sibling scopes of each depth into one scope (deps.json does not show where they began: \
                 docs/workloads.md, --from-deps), so the windows it verifies can be larger than the file's own \
                 scopes need; `simpler plan FILE.json` plans the file itself",
                folder.display(),
                m.subject
            );
        }
    }
    Ok(target)
}

/// How the run that wrote a run folder's recording stopped, when it did not complete (its
/// run.json's status and fatal): `stopped on fatal 1 (SCOPE_DEADLOCK): ...`. Its scope samples
/// end inside the scope that drove the fatal, whose end sample never came.
fn stopped_recording(m: &RunManifest) -> Option<String> {
    use simpler_artifacts::manifest::RunStatus;
    let fatal = m.fatal.as_ref().map_or_else(String::new, |f| {
        format!(" on fatal {} ({}): {}", f.code, f.name, f.message)
    });
    match m.status {
        RunStatus::Completed => None,
        RunStatus::Running => Some("did not end (its run.json still says running: the process died)".into()),
        RunStatus::Fatal => Some(format!("stopped{fatal}")),
        RunStatus::Timeout => Some(format!("timed out{fatal}")),
        RunStatus::Interrupted => Some("was interrupted".into()),
    }
}

/// Everything `plan` computed.
pub struct Plan {
    /// What was planned.
    pub subject: String,
    /// The recorded-data analysis.
    pub analysis: Analysis,
    /// The verified search, when made.
    pub search: Option<SearchResult>,
    /// Where the recorded scope_stats.jsonl is (gone when it was a temporary folder).
    pub recorded: PathBuf,
    /// Time the recorded-data analysis took (reading the file included).
    pub analysis_time: Duration,
    /// Time the verified search took (zero without one).
    pub search_time: Duration,
    /// The recording as it was before it was read: `plan.json` is not written beside it once
    /// it was replaced (another run claimed its folder meanwhile).
    pub made_from: Provenance,
    /// Why the figures may not be the planned program's ([`Target::caveats`]).
    pub caveats: Vec<String>,
}

/// Runs `target` once with scope stats into `dir` and returns the file, with the target's
/// caveats as that run reported them ([`Target::caveats_of`]).
pub fn record(target: &Target, runtime: RuntimeKind, dir: &Path) -> Result<(PathBuf, Vec<String>), Error> {
    let caveats = match target.run(runtime, &RuntimeEnv::default(), Some(dir)) {
        Trial::Passed { approximations, .. } => target.caveats_of(approximations),
        Trial::Fatal { code, message } => {
            return Err(ErrorKind::RecordingRun {
                subject: target.subject(),
                message: format!("fatal {} ({}): {message}", code.code(), code.name()),
            }
            .into())
        }
        Trial::Failed { message } => {
            return Err(ErrorKind::RecordingRun {
                subject: target.subject(),
                message,
            }
            .into())
        }
    };
    let f = dir.join("scope_stats").join("scope_stats.jsonl");
    if !f.is_file() {
        return Err(ErrorKind::NoRecording {
            subject: target.subject(),
            why: "no file".into(),
        }
        .into());
    }
    Ok((f, caveats))
}

/// Makes the plan for `args` (without printing it); `--check` is not handled here.
pub fn plan(args: &Args, keep: Option<&Path>) -> Result<(Plan, Option<tempfile::TempDir>), Error> {
    if let Some(file) = recorded_file(&args.input) {
        if !args.params.is_empty() {
            return Err(ErrorKind::ParamsNeedExample {
                path: args.input.clone(),
            }
            .into());
        }
        let folder = crate::analysis::run_folder_of(&file);
        let manifest = recording_manifest(&file)?;
        let target = match &folder {
            Some(f) => folder_target(f, manifest.as_ref())?,
            None => None,
        };
        let folder = folder.unwrap_or(std::borrow::Cow::Borrowed(&file));
        if let Some(stopped) = manifest.as_ref().and_then(stopped_recording) {
            // Found by a review: the samples of a run that stopped lack the scope that drove
            // it, and the plan suggested the very sizes that had failed.
            // A replay of its deps.json would re-run only what was submitted before the stop.
            let Some(target) = target.filter(|t| !matches!(t, Target::Deps(_))) else {
                return Err(ErrorKind::StoppedRecording {
                    folder: folder.to_path_buf(),
                    stopped,
                }
                .into());
            };
            // On the recorded run's runtime (found by a review: an hbg run that stopped was
            // recorded again, and sized, on tmr, and the sizes failed on hbg).
            let recorded = manifest.as_ref().and_then(|m| RuntimeKind::from_name(&m.runtime));
            let runtime = args.runtime.or(recorded).unwrap_or(target.default_runtime());
            simpler_artifacts::errln!(
                "note: {}: the recorded run {stopped}; its samples end inside the scope that drove it, so the plan \
                 records {} again on {} at the default sizes instead",
                folder.display(),
                target.subject(),
                runtime.name()
            );
            return plan_target(target, runtime, args, keep);
        }
        let made_from = Provenance::of(&[&file]);
        let t = Instant::now();
        let analysis = analyze_file(&file)?;
        let analysis_time = t.elapsed();
        let runtime = args.runtime.unwrap_or(if analysis.reclaims {
            RuntimeKind::Tmr
        } else {
            RuntimeKind::Hbg
        });
        let t = Instant::now();
        let search = match (&target, args.verify) {
            (Some(t), n) if n > 0 => Some(run_search(t, &analysis, runtime, n)?),
            _ => None,
        };
        let search_time = if search.is_some() {
            t.elapsed()
        } else {
            Duration::ZERO
        };
        // The samples are the recorded run's own; a search by replay verifies the replay's.
        let caveats = match (&target, &search) {
            (Some(t), Some(_)) => t.caveats(),
            _ => Vec::new(),
        };
        let subject = target.map_or_else(|| folder.display().to_string(), |t| t.subject());
        return Ok((
            Plan {
                subject,
                analysis,
                search,
                recorded: file,
                analysis_time,
                search_time,
                made_from,
                caveats,
            },
            None,
        ));
    }
    let target = Target::resolve(&args.input, &args.params)?;
    let runtime = args.runtime.unwrap_or(target.default_runtime());
    plan_target(target, runtime, args, keep)
}

/// The plan of `target` on `runtime`, recorded afresh (into `keep`, else a temporary folder).
fn plan_target(
    target: Target,
    runtime: RuntimeKind,
    args: &Args,
    keep: Option<&Path>,
) -> Result<(Plan, Option<tempfile::TempDir>), Error> {
    let (dir, tmp) = match keep {
        Some(d) => (d.to_path_buf(), None),
        None => {
            let t = tempfile::Builder::new()
                .prefix("simpler-plan-")
                .tempdir()
                .map_err(ErrorKind::TempDir)?;
            (t.path().join("run"), Some(t))
        }
    };
    let (file, caveats) = record(&target, runtime, &dir)?;
    let made_from = Provenance::of(&[&file]);
    let t = Instant::now();
    let analysis = analyze_file(&file)?;
    let analysis_time = t.elapsed();
    let t = Instant::now();
    let search = if args.verify > 0 {
        Some(run_search(&target, &analysis, runtime, args.verify)?)
    } else {
        None
    };
    let search_time = if search.is_some() {
        t.elapsed()
    } else {
        Duration::ZERO
    };
    Ok((
        Plan {
            subject: target.subject(),
            analysis,
            search,
            recorded: file,
            analysis_time,
            search_time,
            made_from,
            caveats,
        },
        tmp,
    ))
}

fn run_search(
    target: &Target,
    analysis: &Analysis,
    runtime: RuntimeKind,
    verify: usize,
) -> Result<SearchResult, Error> {
    search::search(target, analysis, runtime, verify).map_err(|b| {
        let message = match b.0 {
            Trial::Fatal { code, message } => format!("fatal {} ({}): {message}", code.code(), code.name()),
            Trial::Failed { message } => message,
            Trial::Passed { .. } => "passed".into(),
        };
        ErrorKind::RecordingRun {
            subject: format!("{} at the recorded sizes", target.subject()),
            message,
        }
        .into()
    })
}

/// `simpler plan`; returns the exit status (0, or with `--check` [`crate::check::EXIT_DEADLOCK`]
/// or [`crate::check::EXIT_UNPROVEN`]).
pub fn run(args: Args) -> Result<u8, Error> {
    let mut out = simpler_artifacts::stdout::Lossy(std::io::stdout().lock());
    if let Some(proposed) = args.check {
        let file = recorded_file(&args.input);
        let manifest = match &file {
            Some(f) => recording_manifest(f)?,
            None => None,
        };
        let mut caveats = Vec::new();
        let (analysis, _tmp) = match &file {
            Some(f) => (analyze_file(f)?, None),
            None => {
                let target = Target::resolve(&args.input, &args.params)?;
                let runtime = args.runtime.unwrap_or(target.default_runtime());
                let t = tempfile::Builder::new()
                    .prefix("simpler-plan-")
                    .tempdir()
                    .map_err(ErrorKind::TempDir)?;
                let (f, recorded_caveats) = record(&target, runtime, &t.path().join("run"))?;
                caveats = recorded_caveats;
                (analyze_file(&f)?, Some(t))
            }
        };
        let stopped = manifest.as_ref().and_then(stopped_recording);
        let (text, status) = match stopped {
            Some(stopped) => check_stopped_text(&analysis, &proposed, &stopped),
            None => check_text(&analysis, &proposed, &caveats),
        };
        return out.write_all(text.as_bytes()).map(|()| status).map_err(|source| {
            ErrorKind::Write {
                path: "<stdout>".into(),
                source,
            }
            .into()
        });
    }
    let (plan, _tmp) = plan(&args, args.output_prefix.as_deref())?;
    let mut text = report::text(&plan.subject, &plan.analysis, plan.search.as_ref());
    // Under the heading, before any figure: every figure below is the replay's.
    let at = text.find('\n').map_or(text.len(), |n| n + 1);
    let caveats: String = plan.caveats.iter().map(|c| format!("caveat: {c}\n")).collect();
    text.insert_str(at, &caveats);
    text.push_str(&format!(
        "\ntook: recorded-data analysis {:.3} ms, verified search {:.3} s\n",
        plan.analysis_time.as_secs_f64() * 1e3,
        plan.search_time.as_secs_f64()
    ));
    // Next to a kept recording, the plan's data and the report with its section.
    if _tmp.is_none() {
        write_plan_json(&plan)?;
    }
    out.write_all(text.as_bytes()).map(|()| 0).map_err(|source| {
        ErrorKind::Write {
            path: "<stdout>".into(),
            source,
        }
        .into()
    })
}

/// Writes `plan.json` next to the plan's `scope_stats.jsonl` and re-renders the HTML report
/// there, so it shows the plan section.
pub fn write_plan_json(plan: &Plan) -> Result<(), Error> {
    let Some(dir) = plan.recorded.parent() else {
        return Ok(());
    };
    let path = dir.join(PLAN_FILE);
    let v = report::plan_file(&plan.subject, &plan.analysis, plan.search.as_ref());
    let text = serde_json::to_string_pretty(&v).unwrap_or_default() + "\n";
    // Held through the report too, which reads the recording again: no run replaces it between.
    let hold = plan.made_from.hold(&path).map_err(ErrorKind::Publish)?;
    let options = simpler_artifacts::publish::Options::default().chosen_name();
    simpler_artifacts::publish::publish_bytes_with(&path, options, text.as_bytes())
        .map_err(ErrorKind::Publish)?;
    let html = simpler_scope_stats_plot::render_report(&plan.recorded, None).map_err(ErrorKind::Report)?;
    drop(hold);
    simpler_artifacts::errln!("wrote {} and {}", path.display(), html.display());
    Ok(())
}

/// The `--check` report on a recording whose run stopped before it completed: its samples end
/// inside the scope that drove the stop, so they cannot clear any size. At the recorded sizes
/// or below, the stop itself is the prediction (exit 5); with any size raised, what the
/// samples predict is printed, and no better than "not proven" (exit 6) can be said.
pub fn check_stopped_text(analysis: &Analysis, proposed: &RuntimeEnv, stopped: &str) -> (String, u8) {
    use crate::check::{effective, EXIT_DEADLOCK, EXIT_UNPROVEN};
    let recorded = effective(analysis, &RuntimeEnv::default());
    let raised = effective(analysis, proposed)
        .iter()
        .zip(&recorded)
        .any(|(p, r)| p.iter().zip(r).any(|(p, r)| p > r));
    let mut s = format!(
        "the recorded run {stopped}\n  (its samples end inside the scope that drove it, so they cannot show what that scope needs)\n"
    );
    if !raised {
        s.push_str("deadlock predicted: these sizes are at most the recorded run's, which stopped\n");
        return (s, EXIT_DEADLOCK);
    }
    let (text, status) = check_text(analysis, proposed, &[]);
    if status == EXIT_DEADLOCK {
        s.push_str(&text);
        return (s, EXIT_DEADLOCK);
    }
    s.push_str(
        "not proven: no deadlock predicted from the samples before the stop; record a run that completes to check these sizes\n",
    );
    for line in text.lines().skip(1) {
        s.push_str(line);
        s.push('\n');
    }
    (s, EXIT_UNPROVEN)
}

/// The `--check` report and its exit status ([`crate::check::Verdict::status`]).
pub fn check_text(analysis: &Analysis, proposed: &RuntimeEnv, caveats: &[String]) -> (String, u8) {
    let mut v = crate::check::verdict(analysis, proposed);
    // A replay's figures are the replay's: no size is proven for the captured program.
    v.unproven.extend(caveats.iter().cloned());
    let timing = |p: &crate::check::Prediction| {
        if p.timing_dependent {
            " [timing-dependent: what the recorded run held; a run whose schedulers keep up takes fewer]"
        } else {
            ""
        }
    };
    let mut s = String::new();
    match v.predictions.first() {
        None => {
            if v.unproven.is_empty() && v.waits.is_empty() {
                s.push_str("no deadlock predicted: every open scope's hold fits, and every size is at least what no wrap and no timing can exceed\n");
            } else if v.unproven.is_empty() {
                s.push_str("no deadlock predicted from the holds: every open scope's hold fits, and every size is at least what no wrap and no dependency timing can exceed\n");
            } else {
                s.push_str("no deadlock predicted from the holds, but not proven:\n");
                for u in &v.unproven {
                    s.push_str(&format!("  {u}\n"));
                }
            }
            if !v.waits.is_empty() {
                s.push_str(&format!(
                    "the run waits for reclaim at these sizes; one task that keeps a ring's oldest slot for {} ms while it waits \
                     stops the run (the deadlock timeout, as in the original; the recording holds no kernel durations to rule it out):\n",
                    simpler_runtime::orchestrator::DEADLOCK_TIMEOUT.as_millis()
                ));
                for w in &v.waits {
                    s.push_str(&format!("  {w}\n"));
                }
            }
        }
        Some(first) => {
            s.push_str(&format!("deadlock predicted: {first}{}\n", timing(first)));
            for p in &v.predictions[1..v.first] {
                s.push_str(&format!("  or first: {p}{}\n", timing(p)));
            }
            if v.first > 1 {
                s.push_str(&format!(
                    "  (the samples cannot tell which of these {} comes first: each ran out between the same scope boundaries, and a sample carries only its own ring's counters)\n",
                    v.first
                ));
            }
            for p in &v.predictions[v.first..] {
                s.push_str(&format!("  also: {p}{}\n", timing(p)));
            }
        }
    }
    (s, v.status())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by a review: `--check ring_heap=1024,ring_heap=2048` checked 2048 without a word,
    /// where `--runtime-env` and a workload file refuse a key given twice.
    #[test]
    fn check_refuses_a_key_given_twice_quoting_both_pairs() {
        assert_eq!(
            check_arg("ring_heap=1024,ring_heap=2048").unwrap_err(),
            "runtime_env: duplicate key `ring_heap` (`ring_heap=1024`, then `ring_heap=2048`); give each key once"
        );
        assert_eq!(
            check_arg("ring_heap=1024:2048:3072:4096, ring_dep_pool=64, ring_heap=8192").unwrap_err(),
            "runtime_env: duplicate key `ring_heap` (`ring_heap=1024:2048:3072:4096`, then `ring_heap=8192`); \
             give each key once"
        );
        let env = parse_check("ring_heap=1024:2048:3072:4096,ring_dep_pool=64").unwrap();
        assert_eq!(
            env.get(simpler_runtime::config::RingResource::Heap, 3),
            Some(4096)
        );
    }

    /// A sign or spaces in a value are refused through the shared parser, quoting the pair.
    #[test]
    fn check_refuses_a_number_not_written_plainly() {
        assert_eq!(
            check_arg("ring_heap=+1024").unwrap_err(),
            "`ring_heap=+1024`: runtime_env ring_heap: `+1024` is not written plainly: a number is decimal \
             digits only, without a sign or spaces"
        );
    }
}
