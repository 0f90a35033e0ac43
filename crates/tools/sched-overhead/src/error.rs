//! The crate's error: an opaque [`Error`] whose [`ErrorKind`] says which input failed and why.

use std::path::PathBuf;

use simpler_artifacts::read_error::JsonReadError;

simpler_artifacts::opaque_error! {
    /// Why `simpler sched-overhead` failed.
    ///
    /// `{}` shows the message; `{:#}` appends every cause, `: `-separated, as `anyhow` does.
    pub struct Error(ErrorKind);
}

/// What went wrong, with the values the message names.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The path given does not exist, or the folder holds no records; with why, as the
    /// folder's run.json tells it, else how to record them.
    #[error("{}: no l2_swimlane_records.json, chip_swimlane_records.json or l2_perf_records.json ({})", .0.display(), .1)]
    NoRecords(PathBuf, String),
    /// There is no deps.json to tell which task waited for which.
    #[error(
        "no deps.json beside {} (pass --deps-json): the overhead model needs the dependencies; \
         capture them with --enable-dep-gen, in a separate run if its capture cost must stay out of the timing",
        .0.display()
    )]
    NoDeps(PathBuf),
    /// The records or deps.json could not be read (the error names the file, line and field).
    #[error(transparent)]
    Read(#[from] JsonReadError),
    /// The records hold no task row.
    #[error("{}: no task rows (an empty or failed timing run?)", .0.display())]
    NoTasks(PathBuf),
    /// A row has no dispatch or finish time.
    #[error(
        "{}: task {task} has no dispatch/finish time (the records are below level 2, which records no \
         scheduler stamps); the overhead model needs both for every task",
        .path.display()
    )]
    NoSchedulerStamps {
        /// The records file.
        path: PathBuf,
        /// The first such row's task.
        task: u64,
    },
}
