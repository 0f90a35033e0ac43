//! Python callables as kernels: `Worker.register_kernel(func_id, name, fn, core="aiv")`.
//!
//! The kernel body takes the GIL on the scheduler thread that runs the block and calls `fn`
//! with a `KernelContext` lent the block's `KernelCtx` for the call (`crate::lend`). Only these
//! kernels pay for Python; a worker with any of them also releases the GIL in every submit
//! (`KernelTable::python_kernels`), so an orchestration waiting for room lets them run. The
//! Rust kernels and the runtime's own paths are unchanged.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use simpler_runtime::{KernelCtx, KernelError};

use crate::lend::{Lending, Lent};
use crate::orchestrator::python_error_text;
use crate::tensor::PyTensor;

/// What a Python kernel sees (the native side of `simpler.KernelContext`).
#[pyclass(name = "NativeKernelContext", module = "simpler._native", frozen)]
pub struct PyKernelCtx {
    ctx: Lent<&'static KernelCtx<'static>>,
}

/// A kernel error as the Python exception.
fn kernel_err(e: KernelError) -> PyErr {
    crate::errors::SimplerError::new_err(e.0)
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
        self.ctx.with(|c| c.write_bytes(i, data))?.map_err(kernel_err)
    }
}

/// Calls the Python kernel `func` for one block: `func(NativeKernelContext)`; a Python
/// exception fails the task (KERNEL_FAILED) with its text.
pub fn call_kernel(func: &Py<PyAny>, ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
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
            },
        )
        .map_err(|e| KernelError(e.to_string()))?;
        let result = {
            let _loan = Lending(&obj.get().ctx);
            func.call1(py, (obj.clone(),))
        };
        result
            .map(|_| ())
            .map_err(|e| KernelError(python_error_text(py, &e)))
    })
}

/// Adds the class to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyKernelCtx>()?;
    Ok(())
}
