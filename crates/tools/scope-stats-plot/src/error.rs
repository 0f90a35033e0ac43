//! The crate's error: an opaque [`Error`] whose [`ErrorKind`] says what went wrong and
//! carries the file (and, for bad content, the line) it concerns.

use std::io;
use std::path::PathBuf;

use simpler_artifacts::publish::PublishError;
use simpler_artifacts::scope_stats::ReadError;

simpler_artifacts::opaque_error! {
    /// Why a report could not be rendered.
    ///
    /// `{}` shows the message; `{:#}` appends every cause, `: `-separated, as `anyhow` does.
    /// [`Error::kind`] tells what failed and with which values.
    pub struct Error(ErrorKind);
}

/// What went wrong, with the values the message names.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input could not be opened.
    #[error("cannot open {}", .path.display())]
    Open {
        /// The input.
        path: PathBuf,
        /// Why it could not be opened.
        source: io::Error,
    },
    /// The input does not start with a metadata line: it is empty or blank, or line 1 is not
    /// metadata (the source's [`ReadError::kind`] says which).
    #[error("{}: not a scope_stats.jsonl", .path.display())]
    NotScopeStats {
        /// The input.
        path: PathBuf,
        /// The 1-based line at fault, if any (none for an empty file).
        line: Option<u64>,
        /// What the reader found.
        source: ReadError,
    },
    /// A sample line is malformed, or reading stopped part way (the source's
    /// [`ReadError::kind`] says which). A final line cut off mid-write is not an error.
    #[error("{}", .path.display())]
    Sample {
        /// The input.
        path: PathBuf,
        /// The 1-based line at fault, if known.
        line: Option<u64>,
        /// What the reader found.
        source: ReadError,
    },
    /// The output directory could not be created.
    #[error("cannot create output directory {}", .dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// Why it could not be created.
        source: io::Error,
    },
    /// The report could not be written (the error names the output).
    #[error(transparent)]
    Publish(#[from] PublishError),
}

impl Error {
    /// The 1-based line of the input at fault, when the error is about one.
    pub fn line(&self) -> Option<u64> {
        match &*self.kind {
            ErrorKind::NotScopeStats { line, .. } | ErrorKind::Sample { line, .. } => *line,
            _ => None,
        }
    }
}
