//! Python callables as kernels: `Worker.register_kernel(func_id, name, fn, core="aiv")`.
//!
//! The kernel body takes the GIL on the scheduler thread that runs the block and calls `fn`
//! with a `KernelContext` lent the block's `KernelCtx` for the call (`crate::lend`). Only these
//! kernels pay for Python; a worker with any of them also releases the GIL in every submit
//! (`KernelTable::python_kernels`), so an orchestration waiting for room lets them run. The
//! Rust kernels and the runtime's own paths are unchanged.
//!
//! Each call runs in a copy of the context (`contextvars`) of the `w.run` that runs it
//! (`crate::runs`). A kernel's exception fails its task with its text and the location of the
//! innermost frame outside the package, and is kept for the run's `FatalError` to chain; a
//! kernel's results go through `ctx.write`, so a return other than `None` fails the task too.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use simpler_runtime::{KernelCtx, KernelError};

use crate::errors::TensorError;
use crate::lend::{Lending, Lent};
use crate::pyerr::python_error_text;
use crate::ranged::{check_range, write_range};
use crate::runs::Runs;
use crate::tensor::PyTensor;

/// What a Python kernel sees (the native side of `simpler.KernelContext`).
#[pyclass(name = "NativeKernelContext", module = "simpler._native", frozen)]
pub struct PyKernelCtx {
    ctx: Lent<&'static KernelCtx<'static>>,
    /// The kernel's name and func id, for the errors.
    kernel: Arc<str>,
}

/// A kernel error as the Python exception.
fn kernel_err(e: KernelError) -> PyErr {
    crate::errors::SimplerError::new_err(e.0)
}

impl PyKernelCtx {
    /// Refuses a write into tensor argument `i` when the task declared it an INPUT: the
    /// dependency graph has no writer there, so a later task that reads it would not wait
    /// for this one, and one that writes it could race it (found by a review: the write was
    /// taken). `how` is the rest of the call as written (`, offset=8`).
    fn writable(&self, i: usize, how: &str) -> PyResult<()> {
        let tag = self.ctx.with(|c| c.tag(i))?;
        if tag != Some(simpler_core::ArgTag::Input) {
            return Ok(());
        }
        Err(TensorError::new_err(format!(
            "kernel {}: ctx.write({i}, values{how}) of argument {i}, an INPUT: a kernel writes \
             only its OUTPUT, INOUT and OUTPUT_EXISTING arguments (declare this one INOUT)",
            self.kernel
        )))
    }
}

#[pymethods]
impl PyKernelCtx {
    /// Number of tensor arguments.
    #[getter]
    fn tensor_count(&self) -> PyResult<usize> {
        self.ctx.with(|c| c.tensor_count())
    }
    /// Number of scalar arguments.
    #[getter]
    fn scalar_count(&self) -> PyResult<usize> {
        self.ctx.with(|c| c.scalar_count())
    }
    /// This block's index in `0..block_num`.
    #[getter]
    fn block_idx(&self) -> PyResult<u32> {
        self.ctx.with(|c| c.block_idx())
    }
    /// The task's SPMD block count.
    #[getter]
    fn block_num(&self) -> PyResult<u32> {
        self.ctx.with(|c| c.block_num())
    }
    /// Tensor argument `i` (its view: shape, strides, dtype).
    fn tensor(&self, i: usize) -> PyResult<PyTensor> {
        let t = self.ctx.with(|c| c.tensor(i).copied())?.map_err(kernel_err)?;
        Ok(PyTensor { inner: t })
    }
    /// Scalar argument `i`, its raw 64 bits.
    fn scalar(&self, i: usize) -> PyResult<u64> {
        self.ctx.with(|c| c.scalar(i))?.map_err(kernel_err)
    }
    /// Scalar argument `i` as an f32 (its low 32 bits).
    fn scalar_f32(&self, i: usize) -> PyResult<f32> {
        self.ctx.with(|c| c.scalar_f32(i))?.map_err(kernel_err)
    }
    /// Tensor argument `i`'s elements as little-endian bytes, row-major.
    fn read_bytes<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyBytes>> {
        let v = self.ctx.with(|c| c.read_bytes(i))?.map_err(kernel_err)?;
        Ok(PyBytes::new(py, &v))
    }
    /// Writes tensor argument `i`'s elements from little-endian bytes, row-major.
    fn write_bytes(&self, i: usize, data: &[u8]) -> PyResult<()> {
        self.writable(i, "")?;
        self.ctx.with(|c| c.write_bytes(i, data))?.map_err(kernel_err)
    }
    /// Writes the elements `offset .. offset + n` of tensor argument `i`'s view (row-major)
    /// from `data`, the little-endian bytes of `n` elements of its dtype; no other element.
    fn write_range(&self, i: usize, offset: i64, data: &[u8]) -> PyResult<()> {
        self.writable(i, &format!(", offset={offset}"))?;
        let t = self.ctx.with(|c| c.tensor(i).copied())?.map_err(kernel_err)?;
        let size = t.dtype().size();
        let count = data.len() as u64 / size;
        let bad = match data.len() as u64 % size {
            0 => check_range(offset, count, t.numel()),
            _ => Some(format!("{} bytes are not whole {size}-byte elements", data.len())),
        };
        if let Some(why) = bad {
            return Err(TensorError::new_err(format!(
                "kernel {}: ctx.write({i}, values, offset={offset}) of argument {i}: {why}",
                self.kernel
            )));
        }
        let start = offset as u64; // checked: not negative
        self.ctx
            .with(|c| write_range(c, i, start, data))?
            .map_err(kernel_err)
    }
    /// The kernel's name and func id (`halve (func_id 21)`).
    #[getter]
    fn kernel(&self) -> String {
        self.kernel.to_string()
    }
}

/// Calls the Python kernel `func` for one block: `func(NativeKernelContext)`, in a copy of the
/// latest run's context. A Python exception fails the task (KERNEL_FAILED) with its text and is
/// kept in `runs` for the run's `FatalError`; so does a return other than `None`.
pub fn call_kernel(
    func: &Py<PyAny>,
    kernel: &Arc<str>,
    runs: &Runs,
    ctx: &KernelCtx<'_>,
) -> Result<(), KernelError> {
    Python::attach(|py| {
        let mut held: &KernelCtx<'_> = ctx;
        // The lent value's lifetimes are erased to make a Python class of it; `Lending` ends
        // the loan before `held` (and `ctx`) go out of scope, and every method returns owned
        // values only, so nothing borrowed from `ctx` outlives this call.
        let target = (&mut held as *mut &KernelCtx<'_>).cast::<&'static KernelCtx<'static>>();
        let obj = Bound::new(
            py,
            PyKernelCtx {
                ctx: Lent::new(target, "kernel context", "a kernel call"),
                kernel: kernel.clone(),
            },
        )
        .map_err(|e| KernelError(e.to_string()))?;
        let result = {
            let _loan = Lending(&obj.get().ctx);
            match runs.context(py) {
                Some(c) => c
                    .call_method0(py, "copy")
                    .and_then(|copy| copy.call_method1(py, "run", (func, obj.clone()))),
                None => func.call1(py, (obj.clone(),)),
            }
        };
        match result {
            Ok(r) if r.is_none(py) => Ok(()),
            Ok(r) => Err(KernelError(format!(
                "the kernel returned {}: a kernel's results go through ctx.write, and its return must be None",
                type_name(r.bind(py))
            ))),
            Err(e) => {
                let text = python_error_text(py, &e);
                runs.record(text.clone(), e);
                Err(KernelError(text))
            }
        }
    })
}

/// `"a value of type ndarray"`, for a returned value.
fn type_name(v: &Bound<'_, PyAny>) -> String {
    match v.get_type().qualname() {
        Ok(name) => format!("a value of type {name}"),
        Err(_) => "a value".into(),
    }
}

/// Adds the class to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyKernelCtx>()?;
    Ok(())
}
