//! The native side of `simpler.Worker`: external tensors (bytes in and out; the Python layer
//! converts NumPy arrays), runs of Python orchestrations, background diagnostics and the flush
//! barrier. Every worker has the built-in kernel library of the workload files registered
//! (`crates/workloads/src/kernels.rs`).

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use simpler_runtime::config::Settings;
use simpler_runtime::{CoreType, RunError, RunReport, Worker};

use crate::errors::{fatal_error, run_error, DiagnosticsError, SimplerError, TensorError};
use crate::kernel::call_kernel;
use crate::orchestrator::{call_orchestration, KernelTable};
use crate::report::PyReport;
use crate::tensor::{dtype, PyTensor};

/// See the module docs.
#[pyclass(name = "NativeWorker", module = "simpler._native")]
pub struct PyWorker {
    worker: Worker,
    /// True once a Python callable is registered as a kernel.
    python_kernels: bool,
}

/// A memory error as the Python exception.
fn memory_err(e: simpler_runtime::memory::MemoryError) -> PyErr {
    TensorError::new_err(e.to_string())
}

#[pymethods]
impl PyWorker {
    #[new]
    #[pyo3(signature = (collect_across_runs = false))]
    fn new(collect_across_runs: bool) -> PyResult<PyWorker> {
        let mut worker = Worker::new();
        simpler_workloads::kernels::register_library(&mut worker)
            .map_err(|e| SimplerError::new_err(e.to_string()))?;
        worker.set_collect_across_runs(collect_across_runs);
        Ok(PyWorker {
            worker,
            python_kernels: false,
        })
    }

    /// Background mode for diagnostics (see `Worker.flush_diagnostics`).
    fn set_collect_across_runs(&mut self, on: bool) {
        self.worker.set_collect_across_runs(on);
    }

    /// Publishes every background export so far; raises `DiagnosticsError`, for the worker's
    /// life, once any run's scope stats were lost.
    fn flush_diagnostics(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.worker.flush_diagnostics())
            .map_err(|e| DiagnosticsError::new_err(e.to_string()))
    }

    /// Test hook: holds (or releases) the background writer.
    fn hold_background_writer(&self, hold: bool) {
        self.worker.hold_background_writer(hold);
    }

    /// Allocates a zeroed external tensor.
    fn alloc(&self, shape: Vec<u32>, dtype_name: &str) -> PyResult<PyTensor> {
        let inner = self
            .worker
            .alloc_tensor(&shape, dtype(dtype_name)?)
            .map_err(memory_err)?;
        Ok(PyTensor { inner })
    }

    /// Frees an external tensor's buffer.
    fn free(&self, t: PyTensor) -> PyResult<()> {
        self.worker.free_tensor(&t.inner).map_err(memory_err)
    }

    /// Writes the view's elements from little-endian bytes (row-major).
    fn write_bytes(&self, t: PyTensor, data: &[u8]) -> PyResult<()> {
        self.worker.write_bytes(&t.inner, data).map_err(memory_err)
    }

    /// Reads the view's elements as little-endian bytes (row-major).
    fn read_bytes<'py>(&self, py: Python<'py>, t: PyTensor) -> PyResult<Bound<'py, PyBytes>> {
        let v = self.worker.read_bytes(&t.inner).map_err(memory_err)?;
        Ok(PyBytes::new(py, &v))
    }

    /// Registers the Python callable `body` as kernel `func_id` named `name` on `core`
    /// (`"aiv"` or `"aic"`), replacing any kernel of that id; `body(ctx)` runs once per block.
    fn register_kernel(&mut self, func_id: u32, name: &str, core: &str, body: Py<PyAny>) -> PyResult<()> {
        let core = match core {
            "aiv" => CoreType::Aiv,
            "aic" => CoreType::Aic,
            other => {
                return Err(SimplerError::new_err(format!(
                    "unknown core type {other:?}; core types: aiv, aic"
                )))
            }
        };
        self.worker
            .register_kernel(func_id, name, core, move |ctx| call_kernel(&body, ctx))
            .map_err(|e| SimplerError::new_err(e.0))?;
        self.python_kernels = true;
        Ok(())
    }

    /// `(func_id, name, core)` of every registered kernel.
    fn kernels(&self) -> Vec<(u32, String, &'static str)> {
        self.worker
            .kernels()
            .iter()
            .map(|k| (k.func_id, k.name.clone(), core_name(k.core_type)))
            .collect()
    }

    /// Runs `orchestration(o)` with the settings of `config` over `base` (the worker's
    /// runtime and clusters); `site` is the root scope's site. With `render_views` the views
    /// of the artifacts are rendered after the run, as `simpler run` does.
    #[pyo3(signature = (orchestration, config, base, site, render_views))]
    fn run(
        &self,
        py: Python<'_>,
        orchestration: Py<PyAny>,
        config: &Bound<'_, PyAny>,
        base: &Bound<'_, PyAny>,
        site: &str,
        render_views: bool,
    ) -> PyResult<Py<PyReport>> {
        let mut under = crate::config::settings(base)?;
        under.record_fanin = under.record_fanin.or(Some(true));
        let settings: Settings = under.overlaid(&crate::config::settings(config)?);
        let cfg = settings.into_config();
        let kernels = Arc::new(KernelTable::of(self.worker.kernels(), self.python_kernels));
        let raised: Arc<Mutex<Option<PyErr>>> = Arc::default();
        let root = simpler_runtime::Site::interned(site);
        let slot = raised.clone();
        let result = py.detach(|| {
            self.worker.run_at(&cfg, root, move |orch| {
                call_orchestration(orch, orchestration, kernels, slot)
            })
        });
        let cause = raised.lock().unwrap_or_else(|p| p.into_inner()).take();
        finish(py, result, render_views, cause)
    }
}

/// The report of a run, or its exception (with `cause` chained to a fatal).
pub fn finish(
    py: Python<'_>,
    result: Result<RunReport, RunError>,
    render_views: bool,
    cause: Option<PyErr>,
) -> PyResult<Py<PyReport>> {
    let render = |r: &mut RunReport| {
        if render_views {
            simpler::render_views(r)
        } else {
            simpler::unwritten_diagnostics(r)
        }
    };
    match result {
        Ok(mut r) => {
            let lost = render(&mut r);
            Py::new(py, PyReport::new(&r, None, lost))
        }
        Err(RunError::Fatal { fatal, mut report }) => {
            let lost = render(&mut report);
            let obj = Py::new(py, PyReport::new(&report, Some(&fatal), lost))?;
            let err = fatal_error(py, &fatal, Some(obj.into_any()));
            if let Some(c) = cause {
                err.set_cause(py, Some(c));
            }
            Err(err)
        }
        Err(e) => Err(run_error(&e)),
    }
}

fn core_name(c: simpler_runtime::CoreType) -> &'static str {
    match c {
        simpler_runtime::CoreType::Aic => "aic",
        simpler_runtime::CoreType::Aiv => "aiv",
    }
}

/// Adds the class to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyWorker>()?;
    Ok(())
}
