//! The error of a workload file: where in the JSON (a path such as
//! `body[3].submit.args[1].view.offsets`) and which rule was broken.

use std::fmt;

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
