//! The crate's error: an opaque [`Error`] whose [`ErrorKind`] says which input failed and why;
//! the wrapped reader errors carry the file and, for bad content, the line, column and field.

use std::path::PathBuf;

use simpler_artifacts::name_map::NameMapError;
use simpler_artifacts::publish::PublishError;
use simpler_artifacts::read_error::JsonReadError;

simpler_artifacts::opaque_error! {
    /// Why `simpler critical-path` failed.
    ///
    /// `{}` shows the message; `{:#}` appends every cause, `: `-separated, as `anyhow` does.
    pub struct Error(ErrorKind);
}

/// What went wrong, with the values the message names.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The path given does not exist.
    #[error("path not found: {}", .0.display())]
    NotFound(PathBuf),
    /// No folder under the root holds timing records with a deps.json beside them.
    #[error(
        "no chip_swimlane_records.json, l2_swimlane_records.json or l2_perf_records.json with a deps.json beside it under {}; \
         {}",
        .0.display(),
        .1.as_deref().unwrap_or("did the run use --enable-l2-swimlane and --enable-dep-gen?")
    )]
    NoRuns(PathBuf, Option<String>),
    /// A folder could not be listed.
    #[error("cannot list {}", .path.display())]
    Walk {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The timing records or deps.json could not be read (the error names the file, and for
    /// bad content the line, column and field).
    #[error(transparent)]
    Read(#[from] JsonReadError),
    /// The name map could not be read.
    #[error(transparent)]
    NameMap(#[from] NameMapError),
    /// The records hold no task row.
    #[error("{}: no task rows (an empty or failed timing run?)", .0.display())]
    NoTasks(PathBuf),
    /// The happens-before graph has a cycle (a bug: its edges all go forward in time).
    #[error("{}: happens-before graph is cyclic ({ordered}/{total} tasks ordered)", .dir.display())]
    Cycle {
        /// The run folder.
        dir: PathBuf,
        /// Tasks a topological order reached.
        ordered: usize,
        /// Tasks in the graph.
        total: usize,
    },
    /// A report could not be written (the error names the file).
    #[error(transparent)]
    Report(#[from] PublishError),
    /// `--report` names a file of the run's that the report must not replace.
    #[error("{0}")]
    ReportConflict(String),
    /// Some run folders could not be analysed (each was reported on stderr); the others were.
    #[error("{failed} of {total} run folders could not be analysed (each is reported above); the others' reports were written")]
    FailedRuns {
        /// Folders that failed.
        failed: usize,
        /// Folders found.
        total: usize,
    },
    /// Some runs' merged traces were invalid; their CPM traces were not written (each was
    /// reported on stderr).
    #[error("{0} run(s) had an invalid merged_swimlane*.json; their CPM_*.json files were not written")]
    InvalidTraces(usize),
}
