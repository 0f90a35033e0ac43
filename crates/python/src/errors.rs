//! The Python exceptions and how each Rust error becomes one, with the Rust message as is.
//!
//! ```text
//! SimplerError
//! ├── ConfigError         an invalid CallConfig or runtime_env (the run never started)
//! ├── RunRefusedError     the output folder is busy or a diagnostic refused the run
//! ├── FatalError          the run stopped on a fatal: code, name, message, resource, ring,
//! │                       capacity, site, key, report
//! ├── StoppedError        an orchestrator call after the run went fatal (inside the
//! │                       orchestration; let it propagate)
//! ├── DiagnosticsError    flush_diagnostics(): a background export was lost
//! ├── TensorError         a bad view, dtype or buffer access
//! └── WorkloadError       a workload file, example or deps.json that cannot run
//! ```

use pyo3::create_exception;
use pyo3::exceptions::{PyBaseException, PyException};
use pyo3::prelude::*;
use simpler_runtime::{Fatal, RunError, Stopped};

create_exception!(
    simpler,
    SimplerError,
    PyException,
    "Base of every error of `simpler`."
);
create_exception!(simpler, ConfigError, SimplerError, "An invalid configuration.");
create_exception!(
    simpler,
    RunRefusedError,
    SimplerError,
    "The run was refused before it started."
);
create_exception!(
    simpler,
    FatalError,
    SimplerError,
    "The run stopped on a coded fatal."
);
create_exception!(
    simpler,
    StoppedError,
    SimplerError,
    "The run is stopped by a fatal."
);
create_exception!(simpler, DiagnosticsError, SimplerError, "A diagnostic was lost.");
create_exception!(
    simpler,
    TensorError,
    SimplerError,
    "A bad tensor, view or access."
);
create_exception!(
    simpler,
    WorkloadError,
    SimplerError,
    "A workload that cannot run."
);

/// Adds the exception types to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SimplerError", py.get_type::<SimplerError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("RunRefusedError", py.get_type::<RunRefusedError>())?;
    m.add("FatalError", py.get_type::<FatalError>())?;
    m.add("StoppedError", py.get_type::<StoppedError>())?;
    m.add("DiagnosticsError", py.get_type::<DiagnosticsError>())?;
    m.add("TensorError", py.get_type::<TensorError>())?;
    m.add("WorkloadError", py.get_type::<WorkloadError>())?;
    Ok(())
}

/// A [`FatalError`] whose attributes hold the fatal's facts and, when the run started, its
/// report (`report`, a `Report`). `call` names the orchestrator call that raised the fatal
/// (`"o.submit at e12.py:7"`), appended to the text; `message` stays the runtime's.
pub fn fatal_error(py: Python<'_>, fatal: &Fatal, report: Option<Py<PyAny>>, call: Option<&str>) -> PyErr {
    let err = FatalError::new_err(match call {
        Some(call) => format!("{fatal} (raised by {call})"),
        None => fatal.to_string(),
    });
    let ctx = fatal.context.as_ref();
    let set = |value: &Bound<'_, PyBaseException>| -> PyResult<()> {
        value.setattr("code", fatal.code.code())?;
        value.setattr("name", fatal.code.name())?;
        value.setattr("message", &fatal.message)?;
        value.setattr("resource", ctx.map(|c| c.resource))?;
        value.setattr("ring", ctx.and_then(|c| c.ring))?;
        value.setattr("capacity", ctx.map(|c| c.capacity))?;
        value.setattr("site", ctx.map(|c| c.site.as_str()))?;
        value.setattr("key", ctx.and_then(|c| c.key))?;
        value.setattr("report", report)
    };
    match set(err.value(py)) {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// A [`StoppedError`] carrying the latched code (`code`, `name`).
pub fn stopped_error(py: Python<'_>, stopped: Stopped) -> PyErr {
    let err = StoppedError::new_err(stopped.to_string());
    let value = err.value(py);
    let set = || -> PyResult<()> {
        value.setattr("code", stopped.0.code())?;
        value.setattr("name", stopped.0.name())
    };
    match set() {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// The exception for a run that did not start: an invalid configuration, a busy output
/// folder or a refusing diagnostic. (A fatal run has a report: see `worker::finish`.)
pub fn run_error(e: &RunError) -> PyErr {
    let message = e.to_string();
    match e {
        RunError::Config(_) => ConfigError::new_err(message),
        RunError::Refused(_) | RunError::OutputFolder(_) | RunError::Interrupted => {
            RunRefusedError::new_err(message)
        }
        RunError::Fatal { .. } => FatalError::new_err(message),
    }
}
