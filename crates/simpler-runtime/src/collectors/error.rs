//! [`DiagnosticsError`]: why a diagnostic refused a run or a flush failed.

/// Background scope stats (`collect_across_runs`) refused a run or failed a flush; the message
/// says what was published, what failed and the first failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiagnosticsError {
    kind: DiagnosticsErrorKind,
    message: String,
}

/// The kinds of [`DiagnosticsError`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiagnosticsErrorKind {
    /// An earlier run closed unproven: later runs with scope stats are refused for the
    /// worker's life.
    Quarantined,
    /// Too many runs' scope stats wait for publication; `flush_diagnostics` first.
    Backlog {
        /// Runs not yet published (at the limit, `MAX_UNPUBLISHED`).
        unpublished: usize,
    },
    /// Publication did not finish within the flush's timeout.
    Timeout,
    /// Something was lost, partial or not written since the worker started (sticky).
    Failed,
}

impl DiagnosticsError {
    pub(crate) fn new(kind: DiagnosticsErrorKind, message: String) -> DiagnosticsError {
        DiagnosticsError { kind, message }
    }
    /// What went wrong.
    pub fn kind(&self) -> &DiagnosticsErrorKind {
        &self.kind
    }
    /// The message (the same as `to_string()`).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for DiagnosticsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DiagnosticsError {}
