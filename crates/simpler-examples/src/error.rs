//! The crate's error: an opaque [`Error`] whose [`ErrorKind`] says what went wrong: a bad
//! `--param` (with its key, value and rule), a bad workload size, or a runtime error.

use simpler_runtime::memory::MemoryError;
use simpler_runtime::{KernelError, RunError};

simpler_artifacts::opaque_error! {
    /// Why an example or a benchmark workload could not run.
    ///
    /// `{}` shows the message; `{:#}` appends every cause, `: `-separated, as `anyhow` does.
    /// [`Error::kind`] tells what failed and with which values.
    pub struct Error(ErrorKind);
}

/// What went wrong, with the values the message names.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A `--param` argument without `=`.
    #[error("--param `{pair}` is not KEY=VALUE")]
    ParamNotKeyValue {
        /// The argument as given.
        pair: String,
    },
    /// A `--param` key the example does not take.
    #[error(
        "{example} has no parameter `{key}`; valid parameters: {}",
        valid_list(.valid)
    )]
    UnknownParam {
        /// The example's name.
        example: String,
        /// The key as given.
        key: String,
        /// The keys the example takes.
        valid: Vec<&'static str>,
    },
    /// A parameter that has neither a value nor a default.
    #[error("missing parameter `{key}`")]
    MissingParam {
        /// The key.
        key: String,
    },
    /// A parameter whose value is not a non-negative integer.
    #[error("--param {key}={value}: expected a non-negative integer")]
    NotAnInteger {
        /// The key.
        key: String,
        /// The value as given.
        value: String,
    },
    /// A parameter whose value does not fit its type.
    #[error("--param {key}={value}: too large")]
    ParamTooLarge {
        /// The key.
        key: String,
        /// The value.
        value: u64,
    },
    /// A parameter below its minimum.
    #[error("--param {key}={value}: must be at least {min}")]
    ParamTooSmall {
        /// The key.
        key: String,
        /// The value.
        value: u32,
        /// The smallest value accepted.
        min: u32,
    },
    /// A benchmark workload name that does not exist.
    #[error("unknown workload `{name}`; valid: {valid}")]
    UnknownWorkload {
        /// The name given.
        name: String,
        /// The workloads there are, comma-separated.
        valid: String,
    },
    /// `chain_barrier` with more producers than the default dependency pool can hold.
    #[error(
        "--param n={n}: at most {max} producers: each may hold two entries of the default \
         dependency pool ({}) at once, its chain successor's and the barrier's",
        simpler_runtime::config::DEFAULT_DEP_POOL
    )]
    TooManyProducers {
        /// The `n` asked for.
        n: u32,
        /// The most accepted ([`crate::chain_barrier::MAX_PRODUCERS`]).
        max: u32,
    },
    /// An output tensor read back with the wrong number of elements.
    #[error("read {got} elements, expected {expected}")]
    WrongLength {
        /// Elements read.
        got: usize,
        /// Elements expected.
        expected: u32,
    },
    /// A benchmark workload of zero tasks.
    #[error("--tasks must be at least 1")]
    NoTasks,
    /// A benchmark workload of more tasks than a run can hold.
    #[error("--tasks {tasks} is too large")]
    TooManyTasks {
        /// The task count asked for.
        tasks: u64,
    },
    /// A kernel could not be registered.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// A tensor could not be allocated, filled or read.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The run was refused or stopped on a fatal ([`RunError::code`], [`RunError::report`]).
    #[error(transparent)]
    Run(#[from] RunError),
}

/// `a, b, c`, or `none`.
fn valid_list(valid: &[&str]) -> String {
    if valid.is_empty() {
        "none".to_string()
    } else {
        valid.join(", ")
    }
}

impl Error {
    /// The runtime's error, if the run was refused or stopped ([`ErrorKind::Run`]).
    pub fn run_error(&self) -> Option<&RunError> {
        match &*self.kind {
            ErrorKind::Run(e) => Some(e),
            _ => None,
        }
    }

    /// The runtime's error by value (to read or close a stopped run's report), or this error
    /// back if it is not one.
    pub fn into_run_error(self) -> Result<RunError, Error> {
        match *self.kind {
            ErrorKind::Run(e) => Ok(e),
            kind => Err(kind.into()),
        }
    }
}
