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
        "no l2_swimlane_records.json, chip_swimlane_records.json or l2_perf_records.json with a deps.json beside it under {}; \
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
    /// Some runs got no CPM traces (each was reported on stderr): their merged trace was
    /// invalid, could not be read, or a CPM trace could not be written.
    #[error("{}", traces_not_written(*.invalid, *.unreadable, *.unwritable))]
    TracesNotWritten {
        /// Runs whose merged_swimlane*.json is not a trace, lacks a path task or shows
        /// another run.
        invalid: usize,
        /// Runs whose merged_swimlane*.json could not be read.
        unreadable: usize,
        /// Runs whose CPM_*.json could not be written.
        unwritable: usize,
    },
}

fn traces_not_written(invalid: usize, unreadable: usize, unwritable: usize) -> String {
    let parts: Vec<String> = [
        (invalid, "had an invalid merged_swimlane*.json"),
        (unreadable, "had a merged_swimlane*.json that could not be read"),
        (unwritable, "had a CPM_*.json that could not be written"),
    ]
    .into_iter()
    .filter(|&(n, _)| n > 0)
    .map(|(n, what)| format!("{n} run(s) {what}"))
    .collect();
    format!("{}; their CPM_*.json files were not written", parts.join(", "))
}
