//! The read error shared by the JSON artifacts (`deps.json`, `l2_swimlane_records.json`).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why a JSON artifact could not be read. The message names the file and, for malformed or
/// incomplete content, the 1-based line and column and the problem:
/// `<path>:<line>:<column>: invalid <artifact>: <what>`.
#[derive(Debug)]
pub struct JsonReadError {
    path: PathBuf,
    artifact: &'static str,
    kind: ReadErrorKind,
}

#[derive(Debug)]
enum ReadErrorKind {
    Io(io::Error),
    Json {
        line: usize,
        column: usize,
        message: String,
    },
    /// Well-formed JSON whose content breaks a rule that spans entries (e.g. a duplicate id);
    /// the message names the entries.
    Invalid(String),
}

impl JsonReadError {
    /// The file `path` of kind `artifact` could not be opened or read.
    pub(crate) fn io(path: &Path, artifact: &'static str, error: io::Error) -> Self {
        Self {
            path: path.to_path_buf(),
            artifact,
            kind: ReadErrorKind::Io(error),
        }
    }

    /// The content is invalid; `context` (such as `tasks[1]`, or `edges[2].succ` for a field's
    /// value) prefixes the problem.
    pub(crate) fn json(
        path: &Path,
        artifact: &'static str,
        error: serde_json::Error,
        context: Option<String>,
    ) -> Self {
        if error.is_io() {
            return Self::io(path, artifact, io::Error::from(error));
        }
        let (line, column) = (error.line(), error.column());
        let what = strip_location(&error.to_string()).to_string();
        let message = match context {
            Some(c) => format!("{c}: {what}"),
            None => what,
        };
        Self {
            path: path.to_path_buf(),
            artifact,
            kind: ReadErrorKind::Json {
                line,
                column,
                message,
            },
        }
    }

    /// The content of `path` is well-formed but breaks a rule across entries; `message` names
    /// them (e.g. `tasks[7]: task_id 4294967297 is listed twice (first at tasks[2])`).
    pub fn invalid(path: &Path, artifact: &'static str, message: String) -> Self {
        Self {
            path: path.to_path_buf(),
            artifact,
            kind: ReadErrorKind::Invalid(message),
        }
    }

    /// The same error, naming `path` instead (readers parse without knowing the file).
    pub(crate) fn with_path(mut self, path: &Path) -> Self {
        self.path = path.to_path_buf();
        self
    }

    /// The same error, calling the file `artifact` (a records file read under another of its
    /// names, such as the original's `l2_perf_records.json`).
    pub(crate) fn with_artifact(mut self, artifact: &'static str) -> Self {
        self.artifact = artifact;
        self
    }

    /// The file that could not be read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The 1-based line of the problem, if the file was opened and its content is invalid.
    pub fn line(&self) -> Option<usize> {
        match &self.kind {
            ReadErrorKind::Json { line, .. } => Some(*line),
            ReadErrorKind::Io(_) | ReadErrorKind::Invalid(_) => None,
        }
    }

    /// The 1-based column of the problem, if the file was opened and its content is invalid.
    pub fn column(&self) -> Option<usize> {
        match &self.kind {
            ReadErrorKind::Json { column, .. } => Some(*column),
            ReadErrorKind::Io(_) | ReadErrorKind::Invalid(_) => None,
        }
    }

    /// The name of the missing field, if a row or the header lacks one.
    pub fn missing_field(&self) -> Option<&str> {
        let ReadErrorKind::Json { message, .. } = &self.kind else {
            return None;
        };
        let rest = &message[message.find("missing field `")? + "missing field `".len()..];
        rest.find('`').map(|end| &rest[..end])
    }

    /// The I/O error, if the file could not be opened or read.
    pub fn io_error(&self) -> Option<&io::Error> {
        match &self.kind {
            ReadErrorKind::Io(e) => Some(e),
            ReadErrorKind::Json { .. } | ReadErrorKind::Invalid(_) => None,
        }
    }
}

impl fmt::Display for JsonReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (path, artifact) = (self.path.display(), self.artifact);
        match &self.kind {
            ReadErrorKind::Io(e) => write!(f, "{path}: cannot read {artifact}: {e}"),
            ReadErrorKind::Json {
                line,
                column,
                message,
            } => write!(f, "{path}:{line}:{column}: invalid {artifact}: {message}"),
            ReadErrorKind::Invalid(message) => write!(f, "{path}: invalid {artifact}: {message}"),
        }
    }
}

/// The cause is part of the message (see `Display`), so `source()` is `None`.
impl std::error::Error for JsonReadError {}

/// Drops serde_json's trailing `" at line L column C"`; the location is reported separately.
fn strip_location(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(at) if message[at..].contains(" column ") => &message[..at],
        _ => message,
    }
}
