//! The crate's error: an opaque [`Error`] whose [`ErrorKind`] says what went wrong and
//! carries the offending input (the path, the task, the limit that was passed).

use std::error::Error as StdError;
use std::io;
use std::num::ParseIntError;
use std::path::PathBuf;
use std::process::ExitStatus;

use simpler_artifacts::deps::DepsReadError;
use simpler_artifacts::find::NotInNewestRun;
use simpler_artifacts::name_map::NameMapError;
use simpler_artifacts::publish::PublishError;

use crate::graph::display_id;

simpler_artifacts::opaque_error! {
    /// Why a deps-viewer step failed.
    ///
    /// `{}` shows the message; `{:#}` appends every cause, `: `-separated, as `anyhow` does.
    /// [`Error::kind`] tells what failed and with which values.
    pub struct Error(ErrorKind);
}

/// What went wrong, with the values the message names.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An HTML-only flag in text mode: a clap usage error (exit code 2 in `simpler`).
    #[error(transparent)]
    Usage(clap::Error),
    /// No input was given and there is no `deps.json` under `dir`.
    #[error(
        "no deps.json found under ./{}/; pass the path of one (run with --enable-dep-gen to \
         produce it)",
        .dir.display()
    )]
    NoInput {
        /// The folder searched (relative to the working directory).
        dir: PathBuf,
    },
    /// No input was given and the newest run under `./outputs/` has no deps.json: the
    /// message names its folder, says why from its run.json and names the newest other
    /// deps.json, which is not read (`simpler_artifacts::find::newest_run_artifact`).
    #[error(transparent)]
    NotInNewestRun(#[from] NotInNewestRun),
    /// The input does not exist, and the run folder's run.json says why (dep_gen failed, was
    /// withheld, or the run did not ask for it).
    #[error("{}: no such file: {why}", .path.display())]
    Missing {
        /// The input named.
        path: PathBuf,
        /// What the run's manifest says.
        why: String,
    },
    /// `--focus` is neither a raw task id nor `RING,LOCAL`.
    #[error(
        "invalid --focus task '{text}': expected a raw task id (e.g. 4294967296) or RING,LOCAL \
         (e.g. 1,0)"
    )]
    InvalidFocus {
        /// The `--focus` value as given.
        text: String,
        /// Why a number in it did not parse.
        source: ParseIntError,
    },
    /// The `--focus` task is not a node of the graph.
    #[error("--focus task {} ({id}) is not in the graph", display_id(*.id, true))]
    FocusNotInGraph {
        /// The raw task id.
        id: u64,
    },
    /// `deps.json` could not be read or is invalid (the error has the path and, for malformed
    /// JSON, the line and column).
    #[error(transparent)]
    Read(#[from] DepsReadError),
    /// The `--func-names` map could not be read.
    #[error(transparent)]
    NameMap(#[from] NameMapError),
    /// `--edge-mode` needs a transitive reduction that would take more than `budget` steps.
    #[error(
        "--edge-mode needs the transitive reduction, which takes more than {budget} steps on \
         this graph of {tasks} tasks and {edges} edges; use the full edge mode, or view a \
         neighbourhood with --focus TASK --depth K"
    )]
    ReductionTooCostly {
        /// The step budget that was exceeded.
        budget: u64,
        /// Tasks in the graph.
        tasks: usize,
        /// Unique edges in the graph.
        edges: usize,
    },
    /// The HTML view would have more tasks or edges than a browser can draw.
    #[error(
        "the graph has {nodes} tasks and {edges} edges, more than an HTML page can draw \
         (limits: {max_nodes} tasks, {max_edges} edges). Show the neighbourhood of one task \
         with --focus TASK --depth K (e.g. --focus 1,0 --depth 2), or use the text view \
         (--format text)"
    )]
    TooLargeForBrowser {
        /// Tasks in the view.
        nodes: usize,
        /// Edges in the view.
        edges: usize,
        /// The task limit ([`crate::html::BROWSER_MAX_NODES`]).
        max_nodes: usize,
        /// The edge limit ([`crate::html::BROWSER_MAX_EDGES`]).
        max_edges: usize,
    },
    /// The HTML view has too many tasks for `--engine dot`.
    #[error(
        "the graph has {nodes} tasks; `dot` needs memory that grows with the square of the \
         graph (6.3 GB at 2,000 tasks), so it is refused past {max_nodes}. Use --engine sfdp, \
         or show one task's neighbourhood with --focus TASK --depth K"
    )]
    TooLargeForDot {
        /// Tasks in the view.
        nodes: usize,
        /// The limit ([`crate::html::DOT_MAX_NODES`]).
        max_nodes: usize,
    },
    /// The Graphviz program is not on `PATH`.
    #[error(
        "Graphviz `{program}` was not found on PATH; the HTML view needs it. Install Graphviz \
         (Debian/Ubuntu: `apt-get install graphviz`), or use the text view (--format text), \
         which needs no Graphviz"
    )]
    GraphvizNotFound {
        /// The program name (`dot`, `sfdp`, ...).
        program: String,
    },
    /// The Graphviz program could not be started.
    #[error("cannot start Graphviz `{program}`")]
    GraphvizStart {
        /// The program name.
        program: String,
        /// Why it could not be started.
        source: io::Error,
    },
    /// A pipe to or from the Graphviz program was not set up.
    #[error("Graphviz {stream}")]
    GraphvizPipe {
        /// The program name.
        program: String,
        /// Which pipe: `stdin`, `stdout` or `stderr`.
        stream: &'static str,
    },
    /// Writing the DOT input to the Graphviz program failed.
    #[error("writing DOT to Graphviz `{program}`")]
    GraphvizWrite {
        /// The program name.
        program: String,
        /// The write error.
        source: io::Error,
    },
    /// Reading the Graphviz program's output failed.
    #[error("reading the output of Graphviz `{program}`")]
    GraphvizRead {
        /// The program name.
        program: String,
        /// The read error.
        source: io::Error,
    },
    /// Waiting for the Graphviz program failed.
    #[error(transparent)]
    GraphvizWait(io::Error),
    /// The Graphviz program ran out of its address-space limit.
    #[error(
        "Graphviz `{program}` ran out of its memory limit ({} MiB, half of this machine's \
         memory) laying out the graph ({status}: {stderr}). Use --engine sfdp, or show one \
         task's neighbourhood with --focus TASK --depth K",
        .limit >> 20
    )]
    GraphvizOutOfMemory {
        /// The program name.
        program: String,
        /// The limit, in bytes.
        limit: u64,
        /// How the program ended.
        status: ExitStatus,
        /// What it wrote on stderr, trimmed.
        stderr: String,
    },
    /// The Graphviz program failed.
    #[error("Graphviz `{program}` failed ({status}): {stderr}")]
    GraphvizFailed {
        /// The program name.
        program: String,
        /// How the program ended.
        status: ExitStatus,
        /// What it wrote on stderr, trimmed.
        stderr: String,
    },
    /// The Graphviz program's output has no `<svg` element.
    #[error("Graphviz `{program}` produced no SVG")]
    GraphvizNoSvg {
        /// The program name.
        program: String,
    },
    /// The page's JSON data could not be serialised.
    #[error(transparent)]
    ScriptJson(#[from] serde_json::Error),
    /// The view could not be written (the error names the output).
    #[error(transparent)]
    Publish(#[from] PublishError),
}

impl Error {
    /// The clap usage error, if this is one ([`ErrorKind::Usage`]).
    pub fn usage(&self) -> Option<&clap::Error> {
        match &*self.kind {
            ErrorKind::Usage(e) => Some(e),
            _ => None,
        }
    }

    /// The first error of type `T` among the error this one wraps and its causes (e.g. the
    /// [`clap::Error`] of a usage error, or the `io::Error` of a failed Graphviz start).
    pub fn downcast_ref<T: StdError + 'static>(&self) -> Option<&T> {
        let wrapped: &(dyn StdError + 'static) = match &*self.kind {
            ErrorKind::Usage(e) => e,
            ErrorKind::Read(e) => e,
            ErrorKind::NameMap(e) => e,
            ErrorKind::GraphvizWait(e) => e,
            ErrorKind::ScriptJson(e) => e,
            ErrorKind::Publish(e) => e,
            other => other,
        };
        std::iter::successors(Some(wrapped), |&e| e.source()).find_map(|e| e.downcast_ref::<T>())
    }
}
