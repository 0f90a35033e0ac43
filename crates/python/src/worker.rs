//! The native side of `simpler.Worker`: external tensors (bytes in and out; the Python layer
//! converts NumPy arrays), runs of Python orchestrations, background diagnostics and the flush
//! barrier. Every worker has the built-in kernel library of the workload files registered
//! (`crates/workloads/src/kernels.rs`).
//!
//! A run's `FatalError` chains the Python exception behind it (the orchestration's, a
//! `StoppedError` it let propagate, or a kernel's); an exception that is not an `Exception`
//! (`KeyboardInterrupt`, `SystemExit`) stops the run and is raised as itself.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use simpler_runtime::config::Settings;
use simpler_runtime::memory::{is_heap_addr, MemoryError};
use simpler_runtime::{CoreType, FatalCode, RunError, RunReport, Worker};

use crate::errors::{fatal_error, run_error, DiagnosticsError, SimplerError, TensorError};
use crate::kernel::call_kernel;
use crate::orchestrator::{call_orchestration, KernelTable, Raised};
use crate::report::PyReport;
use crate::runs::Runs;
use crate::tensor::{dtype_arg, shape_arg, PyTensor};

/// See the module docs.
#[pyclass(name = "NativeWorker", module = "simpler._native")]
pub struct PyWorker {
    worker: Worker,
    /// True once a Python callable is registered as a kernel.
    python_kernels: bool,
    /// The runs in flight, as the Python kernels see them.
    runs: Arc<Runs>,
}

/// A memory error of `w.read`/`w.write`/`w.free` on `t` as the Python exception; an output of
/// a run (a ring-heap address) is named as such.
fn memory_err(t: &PyTensor, e: MemoryError) -> PyErr {
    match e {
        MemoryError::UnknownAddress(a) if is_heap_addr(a) => TensorError::new_err(format!(
            "{} is an output of a run (a run's outputs live only while it runs, in its ring heap): \
             w.read, w.write and w.free take external tensors (w.tensor, w.alloc); write results \
             into one with OUTPUT_EXISTING or INOUT",
            t.text()
        )),
        e => TensorError::new_err(e.to_string()),
    }
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
            runs: Arc::default(),
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

    /// Allocates a zeroed external tensor: `shape` an int or a sequence of ints, `dtype` a
    /// name (`"float32"`) or a NumPy dtype (`np.float32`).
    fn alloc(&self, shape: &Bound<'_, PyAny>, dtype: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let shape = shape_arg(shape)?;
        let dtype = dtype_arg(dtype)?;
        let inner = self
            .worker
            .alloc_tensor(&shape, dtype)
            .map_err(|e| TensorError::new_err(e.to_string()))?;
        Ok(PyTensor { inner })
    }

    /// Frees an external tensor's buffer.
    fn free(&self, t: PyTensor) -> PyResult<()> {
        self.worker.free_tensor(&t.inner).map_err(|e| memory_err(&t, e))
    }

    /// Writes the view's elements from little-endian bytes (row-major).
    fn write_bytes(&self, t: PyTensor, data: &[u8]) -> PyResult<()> {
        self.worker
            .write_bytes(&t.inner, data)
            .map_err(|e| memory_err(&t, e))
    }

    /// Reads the view's elements as little-endian bytes (row-major).
    fn read_bytes<'py>(&self, py: Python<'py>, t: PyTensor) -> PyResult<Bound<'py, PyBytes>> {
        let v = self.worker.read_bytes(&t.inner).map_err(|e| memory_err(&t, e))?;
        Ok(PyBytes::new(py, &v))
    }

    /// Registers the Python callable `body` as kernel `func_id` named `name` on `core`
    /// (`"aiv"` or `"aic"`), replacing any kernel of that id; `body(ctx)` runs once per block.
    /// Refused while a run of this worker is in flight.
    fn register_kernel(
        slf: &Bound<'_, Self>,
        func_id: u32,
        name: &str,
        core: &str,
        body: Py<PyAny>,
    ) -> PyResult<()> {
        if slf.borrow().runs.in_flight() {
            return Err(SimplerError::new_err(
                "cannot register a kernel while a run of this worker is in flight; register kernels before w.run",
            ));
        }
        // Another call that holds the worker (a flush, a read from another thread) is brief.
        let mut this = slf.try_borrow_mut().map_err(|_| {
            SimplerError::new_err(
                "cannot register a kernel while another call uses this worker; retry after it returns",
            )
        })?;
        let core = match core {
            "aiv" => CoreType::Aiv,
            "aic" => CoreType::Aic,
            other => {
                return Err(SimplerError::new_err(format!(
                    "unknown core type {other:?}; core types: aiv, aic"
                )))
            }
        };
        // A kernel is submitted by its name too (`o.submit("add", ...)`): a name that another
        // func id holds would leave one of the two unreachable by name, and which one ran was
        // not said (found by a review: a no-op registered as "add" shadowed the built-in).
        if let Some(k) = this
            .worker
            .kernels()
            .iter()
            .find(|k| k.name == name && k.func_id != func_id)
        {
            return Err(SimplerError::new_err(format!(
                "kernel name {name:?} is taken by func_id {}; a kernel is submitted by its name, so each \
                 name is one kernel's: choose another name, or register func_id {} again to replace it",
                k.func_id, k.func_id
            )));
        }
        let runs = this.runs.clone();
        let kernel: Arc<str> = format!("{name} (func_id {func_id})").into();
        this.worker
            .register_kernel(func_id, name, core, move |ctx| {
                call_kernel(&body, &kernel, &runs, ctx)
            })
            .map_err(|e| SimplerError::new_err(e.0))?;
        this.python_kernels = true;
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
    /// runtime and clusters); `site` is the root scope's site. The orchestration runs in the
    /// `contextvars.Context` `context`, each Python kernel call in a copy of `kernel_context`.
    /// With `render_views` the views of the artifacts are rendered after the run, as
    /// `simpler run` does.
    #[pyo3(signature = (orchestration, config, base, site, render_views, context, kernel_context))]
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        py: Python<'_>,
        orchestration: Py<PyAny>,
        config: &Bound<'_, PyAny>,
        base: &Bound<'_, PyAny>,
        site: &str,
        render_views: bool,
        context: Py<PyAny>,
        kernel_context: Py<PyAny>,
    ) -> PyResult<Py<PyReport>> {
        let mut under = crate::config::settings(base)?;
        under.record_fanin = under.record_fanin.or(Some(true));
        let settings: Settings = under.overlaid(&crate::config::settings(config)?);
        let cfg = settings.into_config();
        let kernels = Arc::new(KernelTable::of(self.worker.kernels(), self.python_kernels));
        let raised: Arc<Mutex<Raised>> = Arc::default();
        let root = simpler_runtime::Site::interned(site);
        let slot = raised.clone();
        let in_flight = self.runs.begin(kernel_context);
        let result = py.detach(|| {
            self.worker.run_at(&cfg, root, move |orch| {
                call_orchestration(orch, orchestration, context, kernels, slot)
            })
        });
        let mut raised = std::mem::take(&mut *raised.lock().unwrap_or_else(|p| p.into_inner()));
        if let Err(RunError::Fatal { fatal, .. }) = &result {
            if fatal.code == FatalCode::KernelFailed {
                if let Some(e) = self.runs.take(&fatal.message) {
                    raised.cause = Some(e);
                }
            }
        }
        drop(in_flight);
        finish(py, result, render_views, raised)
    }
}

/// The report of a run, or its exception: the `FatalError` of a fatal run with the Python
/// exception behind it chained (and the orchestrator call that raised the fatal named), or that
/// exception itself when it is not an `Exception` (`KeyboardInterrupt`, `SystemExit`).
pub fn finish(
    py: Python<'_>,
    result: Result<RunReport, RunError>,
    render_views: bool,
    raised: Raised,
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
            let cause = match raised.cause {
                Some(c) if !c.is_instance_of::<PyException>(py) => return Err(c),
                c => c,
            };
            let obj = Py::new(py, PyReport::new(&report, Some(&fatal), lost))?;
            let err = fatal_error(py, &fatal, Some(obj.into_any()), raised.call_site.as_deref());
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
