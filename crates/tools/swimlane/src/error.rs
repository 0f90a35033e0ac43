//! The crate's error: an opaque [`Error`] whose [`ErrorKind`] says which input or output
//! failed; the wrapped reader errors carry the path and, for bad content, the line, column and
//! missing field.

use std::io;
use std::path::PathBuf;

use simpler_artifacts::deps::DepsReadError;
use simpler_artifacts::find::NotInNewestRun;
use simpler_artifacts::name_map::NameMapError;
use simpler_artifacts::publish::PublishError;
use simpler_artifacts::swimlane::SwimlaneReadError;

simpler_artifacts::opaque_error! {
    /// Why a conversion failed.
    ///
    /// `{}` shows the message; `{:#}` appends every cause, `: `-separated, as `anyhow` does.
    /// [`Error::kind`] tells what failed and with which values.
    pub struct Error(ErrorKind);
}

/// What went wrong, with the values the message names.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// No records file was given and there is none under `dir`.
    #[error(
        "no {file} (or chip_swimlane_records.json, l2_perf_records.json) found under ./{}/; pass \
         the path of one (run with --enable-l2-swimlane to produce it)",
        .dir.display()
    )]
    NoRecords {
        /// The file name looked for.
        file: &'static str,
        /// The folder searched (relative to the working directory).
        dir: PathBuf,
    },
    /// No records file was given and the newest run under `./outputs/` has none: the message
    /// names its folder, says why from its run.json and names the newest other records file,
    /// which is not read (`simpler_artifacts::find::newest_run_artifact`).
    #[error(transparent)]
    NotInNewestRun(#[from] NotInNewestRun),
    /// `l2_swimlane_records.json` could not be read or is invalid (the path, line, column and
    /// missing field through [`SwimlaneReadError`]'s accessors).
    #[error(transparent)]
    Records(SwimlaneReadError),
    /// The `deps.json` for the arrows could not be read or is invalid.
    #[error(transparent)]
    Deps(DepsReadError),
    /// The kernel name map could not be read.
    #[error(transparent)]
    NameMap(#[from] NameMapError),
    /// The trace could not be written (the error names the output).
    #[error(transparent)]
    Publish(#[from] PublishError),
    /// The report could not be written to standard output.
    #[error(transparent)]
    Report(io::Error),
    /// `--output` names an input, the run manifest or one of the run's artifacts
    /// (`simpler_artifacts::manifest::output_conflict`); nothing was touched.
    #[error("{0}")]
    OutputConflict(String),
}

impl Error {}
