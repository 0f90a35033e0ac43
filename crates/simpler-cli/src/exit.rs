//! Exit statuses of `simpler` (documented in the README):
//!
//! | status | meaning |
//! |---|---|
//! | 0 | completed, every requested diagnostic written |
//! | 1 | an error: bad input, a failed golden check, a tool that could not write its output |
//! | 2 | a usage error (arguments, an invalid `--runtime-env`) |
//! | 3 | the run completed but a requested diagnostic was withheld, partial or failed (lost) |
//! | 4 | the output folder is in use by another run |
//! | 5 | `simpler plan --check`: a deadlock is predicted |
//! | 6 | `simpler plan --check`: none is predicted, but a size is not proven safe |
//! | 65–75 | the run stopped on orchestrator fatal 1–11 (64 + code) |
//! | 100, 104 | the run stopped on scheduler fatal 100 (timeout) or 104 (kernel failed) |
//! | 130 | interrupted (SIGINT/SIGTERM) |
//! | 198 | the run stopped on fatal 198 (a run thread could not be started) |
//! | 199 | the run stopped on fatal 199 (a runtime thread panicked outside the user's code) |

use std::fmt;

use simpler_runtime::{FatalCode, RunError};

/// Completed, but a requested diagnostic was lost.
pub const DIAGNOSTIC_LOST: u8 = 3;
/// The output folder is held by another run.
pub const FOLDER_BUSY: u8 = 4;
/// Interrupted by SIGINT or SIGTERM.
pub const INTERRUPTED: u8 = 130;

/// An error that ends the process with a specific status (carried through `anyhow`).
#[derive(Debug)]
pub struct Exit {
    /// The process exit status.
    pub code: u8,
    /// What to print on stderr.
    pub message: String,
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Exit {}

/// The exit status of a run that stopped on `code`.
pub fn fatal_status(code: FatalCode) -> u8 {
    match code.code() {
        c @ 1..=63 => 64 + c as u8,
        c => u8::try_from(c).unwrap_or(1),
    }
}

/// An example's (or a benchmark workload's) error as a command's error. A runtime error goes in
/// as the [`RunError`] itself, so [`status_of`] and `run_cmd::report_stopped` still find the
/// fatal, the configuration error or the busy folder it carries.
pub fn example_error(e: simpler_examples::Error) -> anyhow::Error {
    match e.into_run_error() {
        Ok(run) => run.into(),
        Err(other) => other.into(),
    }
}

/// A workload's (or `--from-deps`') error as a command's error, likewise: a runtime or
/// configuration error goes in as itself.
pub fn workload_error(e: simpler_workloads::Error) -> anyhow::Error {
    use simpler_workloads::ErrorKind;
    match e.into_kind() {
        ErrorKind::Run(run) | ErrorKind::RunApproximated { run, .. } => run.into(),
        ErrorKind::Config(config) => config.into(),
        other => simpler_workloads::Error::from(other).into(),
    }
}

/// The exit status for an error returned by a command.
pub fn status_of(err: &anyhow::Error) -> u8 {
    if simpler_artifacts::interrupt::requested() {
        return INTERRUPTED;
    }
    if let Some(e) = err.downcast_ref::<Exit>() {
        return e.code;
    }
    if err
        .downcast_ref::<simpler_runtime::config::ConfigError>()
        .is_some()
    {
        return 2;
    }
    match err.downcast_ref::<RunError>() {
        Some(RunError::Fatal { fatal, .. }) => fatal_status(fatal.code),
        Some(RunError::Config(_)) => 2,
        Some(RunError::OutputFolder(simpler_artifacts::output_folder::ClaimError::Busy { .. })) => {
            FOLDER_BUSY
        }
        // The run never started (its folder could not be claimed): an error, not a run that
        // completed and lost a diagnostic.
        Some(RunError::OutputFolder(_)) => 1,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fatal_codes_map_to_distinct_statuses() {
        assert_eq!(fatal_status(FatalCode::ScopeDeadlock), 65);
        assert_eq!(fatal_status(FatalCode::TensorMapOverflow), 75);
        assert_eq!(fatal_status(FatalCode::SchedulerTimeout), 100);
        assert_eq!(fatal_status(FatalCode::KernelFailed), 104);
        assert_eq!(fatal_status(FatalCode::Interrupted), 130);
        assert_eq!(fatal_status(FatalCode::ThreadStartFailed), 198);
        assert_eq!(fatal_status(FatalCode::InternalPanic), 199);
    }
}
