//! The error of a workload file: where in the JSON (a path such as
//! `body[3].submit.args[1].view.offsets`) and which rule was broken.

use std::fmt;

use simpler_artifacts::host::human_bytes;

/// A rejected workload file. Its message is `<file>: <json path>: <rule>`; the path and the
/// rule are also available on their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadError {
    file: String,
    path: String,
    rule: String,
    loops: Vec<String>,
}

impl WorkloadError {
    /// An error at `path` (empty for the whole file) breaking `rule`.
    pub(crate) fn new(path: impl Into<String>, rule: impl Into<String>) -> WorkloadError {
        WorkloadError {
            file: String::new(),
            path: path.into(),
            rule: rule.into(),
            loops: Vec::new(),
        }
    }

    /// The same error, naming the file it came from.
    pub(crate) fn in_file(mut self, file: impl Into<String>) -> WorkloadError {
        self.file = file.into();
        self
    }

    /// Records that the error happened with loop variable `var` = `value` (outer loops are
    /// added last and shown first).
    pub(crate) fn in_loop(mut self, var: &str, value: i64) -> WorkloadError {
        self.loops.insert(0, format!("{var}={value}"));
        self
    }

    /// The JSON path of the offending value (`body[3].submit.args[1]`); empty for the root.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The rule that was broken, e.g. ``unknown label `t9` ``.
    pub fn rule(&self) -> &str {
        &self.rule
    }
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.file.is_empty() {
            write!(f, "{}: ", self.file)?;
        }
        if self.path.is_empty() {
            f.write_str(&self.rule)?;
        } else {
            write!(f, "{}: {}", self.path, self.rule)?;
        }
        if !self.loops.is_empty() {
            write!(f, " (at {})", self.loops.join(", "))?;
        }
        Ok(())
    }
}

impl std::error::Error for WorkloadError {}

/// Shorthand for results carrying a [`WorkloadError`].
pub type WResult<T> = Result<T, WorkloadError>;

simpler_artifacts::opaque_error! {
    /// Why loading, re-running or running a workload failed. [`Error::kind`] says which step and
    /// carries what it names; the message is the kind's.
    pub struct Error(ErrorKind);
}

/// The kinds of [`Error`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The workload file could not be read.
    #[error("reading {path}")]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The workload file (or a value derived from it) breaks a rule.
    #[error(transparent)]
    Invalid(#[from] WorkloadError),
    /// A `--param NAME=VALUE` that is not of that form.
    #[error("--param `{pair}` is not NAME=VALUE")]
    ParamNotNameValue {
        /// What was given.
        pair: String,
    },
    /// A `--param` naming no constant of the workload.
    #[error("the workload has no constant `{name}`; constants: {constants}")]
    UnknownConstant {
        /// The name given.
        name: String,
        /// The workload's constants, comma-separated (`none` when it has none).
        constants: String,
    },
    /// A `--param` whose value is not an integer.
    #[error("--param {name}={value}: expected an integer")]
    ParamNotInteger {
        /// The constant.
        name: String,
        /// What was given.
        value: String,
        /// The parser's complaint.
        #[source]
        source: std::num::ParseIntError,
    },
    /// The run configuration was refused.
    #[error(transparent)]
    Config(#[from] simpler_runtime::config::ConfigError),
    /// The run stopped (a fatal, an unusable output folder, ...).
    #[error(transparent)]
    Run(#[from] simpler_runtime::RunError),
    /// A `--from-deps` re-run stopped, and the re-run had approximated the captured graph
    /// (`FromDepsReport::approximations`), which may be why: the caller says so.
    #[error("{run}")]
    RunApproximated {
        /// The runtime's error.
        run: simpler_runtime::RunError,
        /// What the re-run approximated.
        approximations: Vec<String>,
    },
    /// A kernel of the library could not be registered.
    #[error(transparent)]
    Kernel(#[from] simpler_runtime::KernelError),
    /// The external tensors cannot all fit in this machine's memory (`MemTotal`); none was
    /// allocated.
    #[error(
        "the {count} external tensor(s) need {} of host memory, more than this machine's {} (the largest, `{largest}`, takes {}); none was allocated",
        human_bytes(*.need),
        human_bytes(*.limit),
        human_bytes(*.largest_bytes)
    )]
    HostMemory {
        /// External tensors in the program.
        count: usize,
        /// Their bytes in all.
        need: u128,
        /// This machine's memory in bytes.
        limit: u128,
        /// The largest one's name.
        largest: String,
        /// The largest one's bytes.
        largest_bytes: u128,
    },
    /// An external tensor could not be allocated or filled, or a check could not read its view.
    #[error("{what}")]
    Memory {
        /// What was being done, e.g. ``allocating external tensor `a` ``.
        what: String,
        /// The memory error.
        #[source]
        source: simpler_runtime::memory::MemoryError,
    },
    /// A check's view does not describe a valid tensor.
    #[error("check of {label}: {message}")]
    CheckView {
        /// The checked tensor.
        label: String,
        /// Why the view is invalid.
        message: String,
    },
    /// The deps.json to re-run could not be read.
    #[error(transparent)]
    Deps(#[from] simpler_artifacts::deps::DepsReadError),
    /// The deps.json's run manifest says the graph may be incomplete (and `allow_incomplete`
    /// was not given). The message is `run --from-deps`'s, whose `--allow-incomplete` it names;
    /// `plan`, which has no such flag, refuses such a graph in its own words (found by a review:
    /// it passed this message on).
    #[error(
        "{why}\nrefusing to re-run a graph that may be incomplete; --allow-incomplete re-runs it anyway"
    )]
    Incomplete {
        /// What the manifest check found.
        why: String,
    },
    /// The captured graph cannot be re-run as it is.
    #[error("{0}")]
    NotReproducible(String),
}

impl Error {
    /// What a `--from-deps` re-run that stopped had approximated of its graph (empty for
    /// every other error).
    pub fn approximations(&self) -> &[String] {
        match &*self.kind {
            ErrorKind::RunApproximated { approximations, .. } => approximations,
            _ => &[],
        }
    }

    /// The runtime's error, when the run itself stopped; the error back otherwise.
    pub fn into_run_error(self) -> Result<simpler_runtime::RunError, Error> {
        match *self.kind {
            ErrorKind::Run(e) | ErrorKind::RunApproximated { run: e, .. } => Ok(e),
            kind => Err(Error { kind: Box::new(kind) }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The refusal of an incomplete graph names the flag of `run --from-deps`, the command
    /// that takes it (`plan` words its own refusal: `simpler_plan::ErrorKind::IncompleteGraph`).
    #[test]
    fn an_incomplete_graph_is_refused_naming_run_from_deps_flag() {
        let e = Error::from(ErrorKind::Incomplete {
            why: "V/deps.json comes from run r1 that did not complete: fatal".into(),
        });
        assert_eq!(
            e.to_string(),
            "V/deps.json comes from run r1 that did not complete: fatal\n\
             refusing to re-run a graph that may be incomplete; --allow-incomplete re-runs it anyway"
        );
    }
}
