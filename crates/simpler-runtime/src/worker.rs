//! The `Worker`: kernels, external device memory, and runs.

use std::panic::Location;
use std::sync::Arc;

use simpler_core::{DType, Tensor, MAX_RINGS};

use crate::config::{CallConfig, RuntimeKind};
use crate::memory::{
    load_as_f64, store_from_f64, view_offsets, Element, ExternalMemory, HeapMemory, MemoryError, RunMemory,
};
use crate::orchestrator::{OrchResult, Orchestrator};
use crate::platform::kernel::{KernelCtx, KernelError, KernelRegistry};
use crate::platform::{CoreType, Platform};
use crate::run::{execute, RunError, RunReport};
use crate::shared::RunShared;

/// Owns the registered kernels and the external device buffers; runs orchestrations.
#[derive(Default)]
pub struct Worker {
    kernels: KernelRegistry,
    external: Arc<ExternalMemory>,
}

impl Worker {
    /// A worker with no kernels and no buffers.
    pub fn new() -> Worker {
        Worker::default()
    }

    /// Registers a kernel under `func_id`.
    pub fn register_kernel(
        &mut self,
        func_id: u32,
        name: &str,
        core_type: CoreType,
        body: impl Fn(&KernelCtx<'_>) -> Result<(), KernelError> + Send + Sync + 'static,
    ) -> Result<(), KernelError> {
        self.kernels.register(func_id, name, core_type, body)
    }

    /// The registered kernels.
    pub fn kernels(&self) -> &KernelRegistry {
        &self.kernels
    }

    /// Allocates a zeroed external tensor.
    pub fn alloc_tensor(&self, shape: &[u32], dtype: DType) -> Result<Tensor, MemoryError> {
        self.external.alloc(shape, dtype)
    }

    /// Frees an external tensor's buffer.
    pub fn free_tensor(&self, t: &Tensor) -> Result<(), MemoryError> {
        self.external.free(t.addr())
    }

    fn buffer(&self, t: &Tensor) -> Result<Arc<crate::memory::Bytes>, MemoryError> {
        let b = self
            .external
            .get(t.addr())
            .ok_or(MemoryError::UnknownAddress(t.addr()))?;
        let end = (t.start_offset() + t.extent_elems()) * t.dtype().size();
        if end > b.len() as u64 {
            return Err(MemoryError::OutOfRange {
                addr: t.addr(),
                end,
                size: b.len() as u64,
            });
        }
        Ok(b)
    }

    /// Copies `data` into the elements of view `t` (row-major order).
    pub fn write<T: Element>(&self, t: &Tensor, data: &[T]) -> Result<(), MemoryError> {
        if t.dtype() != T::DTYPE {
            return Err(MemoryError::DTypeMismatch {
                tensor: t.dtype(),
                requested: T::DTYPE,
            });
        }
        if data.len() as u64 != t.numel() {
            return Err(MemoryError::LengthMismatch {
                expected: t.numel(),
                got: data.len() as u64,
            });
        }
        let b = self.buffer(t)?;
        let es = t.dtype().size();
        for (off, &v) in view_offsets(t).zip(data) {
            T::store(b.as_slice(), (off * es) as usize, v);
        }
        Ok(())
    }

    /// Reads the elements of view `t` (row-major order).
    pub fn read<T: Element>(&self, t: &Tensor) -> Result<Vec<T>, MemoryError> {
        if t.dtype() != T::DTYPE {
            return Err(MemoryError::DTypeMismatch {
                tensor: t.dtype(),
                requested: T::DTYPE,
            });
        }
        let b = self.buffer(t)?;
        let es = t.dtype().size();
        Ok(view_offsets(t)
            .map(|off| T::load(b.as_slice(), (off * es) as usize))
            .collect())
    }

    /// Fills view `t` with values produced by `f(k)` for element `k`, converted to its dtype.
    pub fn fill_with(&self, t: &Tensor, mut f: impl FnMut(u64) -> f64) -> Result<(), MemoryError> {
        let b = self.buffer(t)?;
        let es = t.dtype().size();
        for (k, off) in view_offsets(t).enumerate() {
            store_from_f64(t.dtype(), b.as_slice(), (off * es) as usize, f(k as u64));
        }
        Ok(())
    }

    /// Reads view `t` as f64 values, whatever its dtype.
    pub fn read_f64(&self, t: &Tensor) -> Result<Vec<f64>, MemoryError> {
        let b = self.buffer(t)?;
        let es = t.dtype().size();
        Ok(view_offsets(t)
            .map(|off| load_as_f64(t.dtype(), b.as_slice(), (off * es) as usize))
            .collect())
    }

    /// Runs `orchestration` with `cfg`. The root scope's site is the caller's location.
    #[track_caller]
    pub fn run<F>(&self, cfg: &CallConfig, orchestration: F) -> Result<RunReport, RunError>
    where
        F: FnOnce(&mut Orchestrator) -> OrchResult + Send + 'static,
    {
        self.run_at(cfg, Location::caller(), orchestration)
    }

    /// [`Worker::run`] with an explicit root-scope site.
    pub fn run_at<F>(
        &self,
        cfg: &CallConfig,
        root: &'static Location<'static>,
        orchestration: F,
    ) -> Result<RunReport, RunError>
    where
        F: FnOnce(&mut Orchestrator) -> OrchResult + Send + 'static,
    {
        let sizes = cfg.validate()?;
        let heap_sizes = match cfg.runtime {
            RuntimeKind::Tmr => sizes.heap,
            RuntimeKind::Hbg => {
                let mut h = [0; MAX_RINGS];
                h[0] = sizes.heap[0];
                h
            }
        };
        let memory = RunMemory {
            heaps: HeapMemory::new(heap_sizes),
            external: self.external.clone(),
        };
        let platform = Platform {
            clusters: cfg.clusters as u32,
        };
        let shared = Arc::new(RunShared::new(
            cfg.runtime,
            sizes,
            memory,
            self.kernels.clone(),
            platform,
        ));
        execute(shared, cfg, root, Box::new(orchestration))
    }
}
