//! `simpler._native`: the PyO3 extension behind the Python package `simpler`
//! (`crates/python/simpler/`, `docs/python.md`).
//!
//! Every Python call lands on the same Rust code as the Rust API and the `simpler` command:
//! the [`Worker`](simpler_runtime::Worker) and its orchestrator, the kernel library of the
//! workload files, the workload runner, and the command line ([`simpler::main_with`]) that the
//! `python -m simpler.tools.<tool>` modules call. Nothing here is on the runtime's hot path;
//! what the binding needed from the runtime is public API there (`Site`, `Fatal::context`,
//! `Worker::write_bytes` / `read_bytes`).

mod args;
mod config;
mod errors;
mod files;
mod kernel;
mod lend;
mod orchestrator;
mod pyerr;
mod ranged;
mod report;
mod runs;
mod tensor;
mod worker;

use pyo3::prelude::*;

/// Runs the `simpler` command line `argv` (the program name first) in this process and returns
/// its exit status: `python -m simpler` and every `python -m simpler.tools.<tool>`.
#[pyfunction]
fn cli(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| simpler::main_with(argv, false))
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    errors::register(m)?;
    tensor::register(m)?;
    args::register(m)?;
    report::register(m)?;
    orchestrator::register(m)?;
    worker::register(m)?;
    files::register(m)?;
    kernel::register(m)?;
    Ok(())
}
