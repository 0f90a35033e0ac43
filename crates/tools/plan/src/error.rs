//! The crate's error: an opaque [`Error`] whose [`ErrorKind`] says which input failed and why.

use std::path::PathBuf;

use simpler_artifacts::scope_stats::ReadError;

simpler_artifacts::opaque_error! {
    /// Why a plan could not be made.
    ///
    /// `{}` shows the message; `{:#}` appends every cause, `: `-separated, as `anyhow` does.
    pub struct Error(ErrorKind);
}

/// What went wrong, with the values the message names.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input is neither a run folder, a workload file, a deps.json nor an example name.
    #[error(
        "{}: not a run folder (with scope_stats/scope_stats.jsonl), a workload FILE.json, a deps.json or a built-in example",
        .path.display()
    )]
    UnknownInput {
        /// What was given.
        path: PathBuf,
    },
    /// `--param` was given for an input that is not a built-in example.
    #[error(
        "{}: --param sets a built-in example's parameters; a file or run folder carries its own",
        .path.display()
    )]
    ParamsNeedExample {
        /// What was given.
        path: PathBuf,
    },
    /// An example's `--param` pairs (or the ones its run folder recorded) were refused.
    #[error("the example's parameters")]
    Params(#[source] simpler_examples::Error),
    /// `scope_stats.jsonl` could not be read or is invalid (the line is in the source).
    #[error("{}", .path.display())]
    ScopeStats {
        /// The file.
        path: PathBuf,
        /// The reader's error, with the line.
        #[source]
        source: ReadError,
    },
    /// The recording does not hold every sample its run took (see
    /// `Metadata::missing_samples`): a plan from it could understate every peak.
    #[error(
        "{}: {why}; a plan needs every sample (peaks read from the rest can be understated): record the run again",
        .path.display()
    )]
    IncompleteRecording {
        /// The file.
        path: PathBuf,
        /// What is missing.
        why: String,
    },
    /// The samples' begin/end pairs do not nest.
    #[error("{}: {why}", .path.display())]
    Unpaired {
        /// The file.
        path: PathBuf,
        /// Which line and why.
        why: String,
    },
    /// `--check` is empty or a pair is not a valid `runtime_env` setting (the message quotes
    /// the pair as given).
    #[error("--check: {0}")]
    Check(String),
    /// `--check` needs recorded data, which a fresh workload or deps.json does not have until
    /// it has been run once: the recording run failed.
    #[error("the recording run of {subject} failed: {message}")]
    RecordingRun {
        /// What was run.
        subject: String,
        /// Why it failed.
        message: String,
    },
    /// The recording run wrote no scope-stats file (for instance hbg before scope stats
    /// covered it).
    #[error("the recording run of {subject} wrote no scope_stats.jsonl ({why})")]
    NoRecording {
        /// What was run.
        subject: String,
        /// The collector's verdict.
        why: String,
    },
    /// The run folder's recording stopped before it completed and there is nothing to record
    /// it again from in full (no built-in example named in its run.json; its deps.json, if any,
    /// holds only what was submitted before the stop).
    #[error(
        "{}: the recorded run {stopped}; its samples end inside the scope that drove it, so they cannot show \
         what that scope needs, and the folder names nothing to run again in full (no built-in example in its \
         run.json; a deps.json holds only what was submitted before the stop): record a run that completes, \
         at larger sizes such as the defaults (docs/sizing-rings.md)",
        .folder.display()
    )]
    StoppedRecording {
        /// The run folder.
        folder: PathBuf,
        /// How the run ended (`stopped on fatal 1 (SCOPE_DEADLOCK): ...`).
        stopped: String,
    },
    /// A run folder's recording that its `run.json` does not list (left over from another
    /// run, or put there by hand): the folder's example, parameters and runtime are not the
    /// recording's, so the two are not planned together.
    #[error(
        "{} is not a file of run {run_id} (per {}): it is left over from an earlier run or was put there by \
         hand, so that run's example, parameters and runtime are not the recording's; refusing to plan the two \
         together. To plan from the recording alone, copy it out of its scope_stats/ folder and give the copy \
         (`simpler plan COPY.jsonl`)",
        .file.display(),
        .manifest.display()
    )]
    ForeignRecording {
        /// The recording.
        file: PathBuf,
        /// The run its folder's run.json is of.
        run_id: String,
        /// That run.json.
        manifest: PathBuf,
    },
    /// A deps.json whose run manifest says it may be incomplete (a run that did not complete, a
    /// file changed after it, records lost): a plan from it would size the rings for the part
    /// captured. `plan` has no `--allow-incomplete` (`run --from-deps` has).
    #[error("{why}\nrefusing to plan from a graph that may be incomplete: its sizes would be those of the part captured; {instead}")]
    IncompleteGraph {
        /// The deps.json.
        path: PathBuf,
        /// What its run manifest says.
        why: String,
        /// What to plan instead.
        instead: String,
    },
    /// The run folder's `run.json` is there but cannot be read (a folder, not JSON, a field of
    /// the wrong type, a schema this build does not read); the source names the file and where.
    #[error(
        "the run's manifest, from which the plan takes the runtime, how the run ended and the example's \
         parameters"
    )]
    Manifest(#[source] simpler_artifacts::read_error::JsonReadError),
    /// A parameter the run folder's `run.json` recorded for its example is refused by the
    /// example (`<run.json>: params.n = "9000": at most 8000 producers: ...`).
    #[error("{}: {why}", .path.display())]
    RecordedParam {
        /// The run.json.
        path: PathBuf,
        /// The field, its value and the example's rule.
        why: String,
    },
    /// The run folder's deps.json (read for the dep pool's worst case) is invalid; the source
    /// names the file and where.
    #[error("the recorded graph, read for the dependency pool's worst case")]
    Deps(#[source] simpler_artifacts::deps::DepsReadError),
    /// The temporary output folder could not be made.
    #[error("making a temporary output folder")]
    TempDir(#[source] std::io::Error),
    /// The workload file could not be loaded.
    #[error(transparent)]
    Workload(simpler_workloads::Error),
    /// `plan.json` could not be written (the error names the file).
    #[error(transparent)]
    Publish(#[from] simpler_artifacts::publish::PublishError),
    /// The scope-stats HTML report could not be re-rendered with the plan section.
    #[error("re-rendering the scope-stats report")]
    Report(#[source] simpler_scope_stats_plot::Error),
    /// An input file could not be read.
    #[error("reading {}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// An input `*.json` file is not JSON at all (so neither a deps.json nor a workload file).
    #[error("{}: not valid JSON: {error}", .path.display())]
    NotJson {
        /// The file.
        path: PathBuf,
        /// The parser's error, with the line and column.
        error: serde_json::Error,
    },
    /// The report could not be written.
    #[error("writing {}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}
