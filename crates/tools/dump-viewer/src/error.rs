//! What `simpler dump-viewer` can fail on: an opaque [`Error`] around an [`ErrorKind`] that
//! names the file, flag or value.

use std::io;
use std::path::PathBuf;

use simpler_artifacts::args_dump::ReadError;
use simpler_artifacts::publish::PublishError;

simpler_artifacts::opaque_error! {
    /// Why the viewer failed. `{}` shows the message; `{:#}` appends every cause.
    pub struct Error(ErrorKind);
}

/// What went wrong, with the values the message names.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// No dump in the given folder or its `args_dump/`.
    #[error("no args_dump.json in {} or its args_dump/ ({})", .0.display(), .1.as_deref().unwrap_or("run with --dump-args to produce one"))]
    NoDump(PathBuf, Option<String>),
    /// No folder was given and no dump is anywhere under `./outputs/` (searched recursively).
    #[error("no args_dump/args_dump.json found under {}; pass the folder of one (run with --dump-args to produce one)", .0.display())]
    NoneUnder(PathBuf),
    /// No folder was given and the newest run under `./outputs/` has no dump: the message
    /// names its folder, says why from its run.json and names the newest other dump, which is
    /// not read (`simpler_artifacts::find::newest_run_artifact`).
    #[error(transparent)]
    NotInNewestRun(#[from] simpler_artifacts::find::NotInNewestRun),
    /// The dump could not be read or is invalid (file, line and column in the message).
    #[error(transparent)]
    Read(ReadError),
    /// A flag's value is not valid.
    #[error("{flag} {value:?}: expected {expected}")]
    BadValue {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        expected: &'static str,
    },
    /// An entry of the manifest that the command cannot use as it is.
    #[error("args_dump.json entry {index}: {what}")]
    BadEntry {
        /// Its index in `args[]`.
        index: usize,
        /// What is wrong with it.
        what: String,
    },
    /// `--task` names a task the dump does not hold.
    #[error("task {task} is not in the dump; some that are: {}", .valid.join(", "))]
    UnknownTask {
        /// The task given.
        task: String,
        /// Up to five task ids of the dump.
        valid: Vec<String>,
    },
    /// `--index` is past the end.
    #[error("--index {index} is out of range: the dump has {len} entries")]
    IndexOutOfRange {
        /// The index given.
        index: usize,
        /// Entries in the dump.
        len: usize,
    },
    /// `--element` is past the end of the payload.
    #[error("element {element} is out of range: the payload holds {len} elements")]
    ElementOutOfRange {
        /// The flat index.
        element: u64,
        /// Elements kept.
        len: u64,
    },
    /// The filters matched nothing.
    #[error("no entry matches the filters")]
    NoMatch,
    /// A comparison (or `--element` of a dtype without a known element size) was asked of a
    /// dtype whose elements do not decode to numbers (unknown, or the original's FP8/FP4).
    #[error("dtype {dtype} cannot be decoded for {what}")]
    Undecodable {
        /// The dtype.
        dtype: String,
        /// What needed it decoded: `a comparison`, `--element`.
        what: &'static str,
    },
    /// A comparison found nothing to compare.
    #[error("{0}")]
    NothingToCompare(String),
    /// Comparisons found differences, incomplete (truncated) entries or entries missing in the
    /// other dump (the report says where).
    #[error("{count} compared entries differ, are incomplete or are missing{}", .note.as_ref().map(|n| format!("; {n}")).unwrap_or_default())]
    Differs {
        /// Entries that did not pass.
        count: u64,
        /// What explains some of them: `18 of them are only missing in the other dump, which
        /// is incomplete: see the warning above`.
        note: Option<String>,
    },
    /// The dump holds no entry at all (not a filter's doing).
    #[error("{} holds no entries: {why}", .file.display())]
    Empty {
        /// Its args_dump.json.
        file: PathBuf,
        /// Why, by its args_dump.json and its run's run.json.
        why: String,
    },
    /// An export file could not be written.
    #[error(transparent)]
    Publish(PublishError),
    /// An export failed after it had changed its folder (removed an earlier export's files or
    /// written some of its own): the files it wrote were removed, `left` names those that could
    /// not be.
    #[error(
        "export to {} failed after {written} of {total} file(s): {cause}; the export is incomplete: {}",
        .dir.display(),
        left_text(.dir, *.written, *.replaced, .left)
    )]
    ExportIncomplete {
        /// The export folder.
        dir: PathBuf,
        /// Files written before the failure.
        written: usize,
        /// Files the export was to write.
        total: usize,
        /// Files of an earlier export removed before writing.
        replaced: usize,
        /// Files written that could not be removed.
        left: Vec<PathBuf>,
        /// The failure.
        cause: Box<Error>,
    },
    /// A file of an earlier export could not be removed before an export (nothing written).
    #[error(
        "cannot remove {} (an earlier export's) before exporting to {}: {error}; {removed} earlier file(s) were removed, nothing was written",
        .path.display(),
        .dir.display()
    )]
    Replace {
        /// The export folder.
        dir: PathBuf,
        /// The file.
        path: PathBuf,
        /// Earlier files removed before it.
        removed: usize,
        /// The cause.
        error: io::Error,
    },
    /// Standard output could not be written.
    #[error(transparent)]
    Output(io::Error),
}

/// What [`ErrorKind::ExportIncomplete`] says is left in `dir`: the `written` files were
/// removed (or `left` names those that could not be), the `replaced` earlier ones too.
fn left_text(dir: &std::path::Path, written: usize, replaced: usize, left: &[PathBuf]) -> String {
    let earlier = match replaced {
        0 => String::new(),
        n => format!(", as were the {n} file(s) of the earlier export (before writing)"),
    };
    if left.is_empty() {
        let holds = if replaced == 0 {
            "no file of this export"
        } else {
            "no exported file"
        };
        return format!(
            "the {written} file(s) written were removed{earlier}: {} holds {holds}",
            dir.display()
        );
    }
    format!(
        "{} of the {written} file(s) written could not be removed and are left: {}{earlier}",
        left.len(),
        left.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}
