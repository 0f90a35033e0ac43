//! Kernels: Rust functions registered by func id, and the context they run with.

use std::cell::{Cell, OnceCell};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};

use simpler_core::{ArgTag, DType, Tensor};

use super::{CoreId, CoreType};
use crate::memory::{
    load_as_f64, read_view_bytes, store_from_f64, write_view_bytes, Buffer, Element, MemoryError, RunMemory,
};
use crate::ring::arg_arena::{ArgArena, PackedArgs};
use crate::slot::ArgTags;

/// Highest func id + 1.
pub const MAX_FUNC_ID: u32 = 1024;

/// A kernel's failure; the run stops with KERNEL_FAILED (104).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelError(pub String);

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KernelError {}

impl From<MemoryError> for KernelError {
    fn from(e: MemoryError) -> Self {
        KernelError(e.to_string())
    }
}

/// The body of a kernel.
pub type KernelFn = Arc<dyn Fn(&KernelCtx<'_>) -> Result<(), KernelError> + Send + Sync>;

/// A registered kernel.
#[derive(Clone)]
pub struct KernelDef {
    /// Its func id.
    pub func_id: u32,
    /// Human name (trace slices, viewers).
    pub name: String,
    /// The core type it runs on.
    pub core_type: CoreType,
    /// The body.
    pub body: KernelFn,
}

impl fmt::Debug for KernelDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelDef")
            .field("func_id", &self.func_id)
            .field("name", &self.name)
            .field("core_type", &self.core_type)
            .finish()
    }
}

/// Kernels by func id.
#[derive(Clone, Default, Debug)]
pub struct KernelRegistry {
    defs: Vec<Option<KernelDef>>,
}

impl KernelRegistry {
    /// Registers (or replaces) a kernel.
    pub fn register(
        &mut self,
        func_id: u32,
        name: &str,
        core_type: CoreType,
        body: impl Fn(&KernelCtx<'_>) -> Result<(), KernelError> + Send + Sync + 'static,
    ) -> Result<(), KernelError> {
        if func_id >= MAX_FUNC_ID {
            return Err(KernelError(format!(
                "func_id {func_id} is out of range; func ids are below {MAX_FUNC_ID}"
            )));
        }
        let i = func_id as usize;
        if self.defs.len() <= i {
            self.defs.resize(i + 1, None);
        }
        self.defs[i] = Some(KernelDef {
            func_id,
            name: name.to_string(),
            core_type,
            body: Arc::new(body),
        });
        Ok(())
    }
    /// The kernel with this id.
    #[inline]
    pub fn get(&self, func_id: i32) -> Option<&KernelDef> {
        usize::try_from(func_id)
            .ok()
            .and_then(|i| self.defs.get(i))
            .and_then(Option::as_ref)
    }
    /// Every registered kernel.
    pub fn iter(&self) -> impl Iterator<Item = &KernelDef> {
        self.defs.iter().flatten()
    }
}

/// A kernel's tensor arguments: a `tmr` slot's in place, or a host-built graph's packed
/// views, unpacked on the first access only (a kernel that reads no tensor, a dummy-like or
/// an empty one, costs no unpacking; the block's subtasks share one unpacking).
pub(crate) enum ArgTensors<'a> {
    /// In the slot, ready to lend.
    InPlace(&'a [Tensor]),
    /// Packed in the argument arena (`crates/simpler-runtime/src/ring/arg_arena.rs`).
    Packed {
        arena: &'a ArgArena,
        list: &'a PackedArgs,
        /// The unpacked tensors, once a kernel of the block asked for one.
        unpacked: &'a OnceCell<Vec<Tensor>>,
        /// The scheduler thread's buffer to unpack into (its capacity is reused task to task).
        spare: &'a Cell<Vec<Tensor>>,
    },
}

impl ArgTensors<'_> {
    /// Number of tensor arguments (without unpacking).
    #[inline]
    fn len(&self) -> usize {
        match self {
            ArgTensors::InPlace(t) => t.len(),
            ArgTensors::Packed { list, .. } => list.len(),
        }
    }

    /// Every tensor argument, unpacking them on the first call.
    #[inline]
    fn all(&self) -> &[Tensor] {
        match self {
            ArgTensors::InPlace(t) => t,
            ArgTensors::Packed {
                arena,
                list,
                unpacked,
                spare,
            } => unpacked.get_or_init(|| {
                let mut out = spare.take();
                arena.unpack(list, &mut out);
                out
            }),
        }
    }
}

/// What a kernel sees: its arguments, its block, its core, and device memory.
pub struct KernelCtx<'a> {
    pub(crate) tensors: ArgTensors<'a>,
    pub(crate) tags: ArgTags,
    pub(crate) scalars: &'a [u64],
    pub(crate) memory: &'a RunMemory,
    pub(crate) block_idx: u32,
    pub(crate) block_num: u32,
    pub(crate) core: CoreId,
    /// Set by [`KernelCtx::occupy`]: the core is busy until then.
    pub(crate) busy_until: Cell<Option<Instant>>,
}

impl<'a> KernelCtx<'a> {
    /// Number of tensor arguments.
    pub fn tensor_count(&self) -> usize {
        self.tensors.len()
    }
    /// Tensor argument `i` (outputs already allocated).
    pub fn tensor(&self, i: usize) -> Result<&Tensor, KernelError> {
        self.tensors.all().get(i).ok_or_else(|| {
            KernelError(format!(
                "tensor argument {i} does not exist ({} given)",
                self.tensors.len()
            ))
        })
    }
    /// The tag of tensor argument `i`.
    pub fn tag(&self, i: usize) -> Option<ArgTag> {
        (i < self.tensors.len()).then(|| self.tags.get(i))
    }
    /// Scalar argument `i` (raw bits).
    pub fn scalar(&self, i: usize) -> Result<u64, KernelError> {
        self.scalars.get(i).copied().ok_or_else(|| {
            KernelError(format!(
                "scalar argument {i} does not exist ({} given)",
                self.scalars.len()
            ))
        })
    }
    /// Scalar argument `i` as an f32 (its low 32 bits).
    pub fn scalar_f32(&self, i: usize) -> Result<f32, KernelError> {
        Ok(f32::from_bits(self.scalar(i)? as u32))
    }
    /// Number of scalar arguments.
    pub fn scalar_count(&self) -> usize {
        self.scalars.len()
    }
    /// This block's index in `0..block_num`.
    pub fn block_idx(&self) -> u32 {
        self.block_idx
    }
    /// The task's SPMD block count.
    pub fn block_num(&self) -> u32 {
        self.block_num
    }
    /// The virtual core running this block.
    pub fn core(&self) -> CoreId {
        self.core
    }
    /// Keeps this kernel's core busy for `duration` from this call, as a device kernel of that
    /// length would, without holding the scheduler thread: the kernel returns at once, the
    /// scheduler dispatches other ready work to the other virtual cores meanwhile, and the task
    /// completes (its consumers become ready) once the time has passed. The kernel's writes to
    /// memory are made before it returns, as usual. Calling it again extends to the later end.
    ///
    /// A kernel that computes for real occupies its scheduler thread instead (and with it that
    /// thread's other cores): such kernels are bounded by the host's cores, not the chip's.
    pub fn occupy(&self, duration: Duration) {
        let until = Instant::now() + duration;
        let later = self.busy_until.get().map_or(until, |u| u.max(until));
        self.busy_until.set(Some(later));
    }
    /// Typed access to tensor argument `i`; its dtype must be `T`'s.
    pub fn view<T: Element>(&self, i: usize) -> Result<View<'a, T>, KernelError> {
        let t = *self.tensor(i)?;
        if t.dtype() != T::DTYPE {
            return Err(MemoryError::DTypeMismatch {
                tensor: t.dtype(),
                requested: T::DTYPE,
            }
            .into());
        }
        let buf = self.memory.buffer(&t)?;
        Ok(View {
            buf,
            tensor: t,
            contiguous: t.is_contiguous(),
            _t: PhantomData,
        })
    }
    /// The elements of tensor argument `i` as little-endian bytes, row-major (for kernels
    /// written in another language: the Python binding's).
    pub fn read_bytes(&self, i: usize) -> Result<Vec<u8>, KernelError> {
        let t = *self.tensor(i)?;
        Ok(read_view_bytes(&self.memory.buffer(&t)?, &t))
    }
    /// Writes tensor argument `i`'s elements from little-endian bytes, row-major.
    pub fn write_bytes(&self, i: usize, data: &[u8]) -> Result<(), KernelError> {
        let t = *self.tensor(i)?;
        Ok(write_view_bytes(&self.memory.buffer(&t)?, &t, data)?)
    }
    /// Dtype-generic access to tensor argument `i` through f64 values.
    pub fn view_any(&self, i: usize) -> Result<AnyView<'a>, KernelError> {
        let t = *self.tensor(i)?;
        let buf = self.memory.buffer(&t)?;
        Ok(AnyView {
            buf,
            tensor: t,
            contiguous: t.is_contiguous(),
        })
    }
}

#[inline]
fn flat_offset(t: &Tensor, contiguous: bool, k: u64) -> u64 {
    if contiguous {
        return t.start_offset() + k;
    }
    let mut rem = k;
    let mut off = t.start_offset();
    for d in (0..t.ndims()).rev() {
        let n = u64::from(t.shape()[d]);
        off += (rem % n) * u64::from(t.strides()[d]);
        rem /= n;
    }
    off
}

/// Typed element access to a tensor view, by flat row-major index over the view's shape.
pub struct View<'a, T> {
    buf: Buffer<'a>,
    tensor: Tensor,
    contiguous: bool,
    _t: PhantomData<T>,
}

impl<T: Element> View<'_, T> {
    /// Number of elements of the view.
    pub fn len(&self) -> u64 {
        self.tensor.numel()
    }
    /// True for an empty view.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The view.
    pub fn tensor(&self) -> &Tensor {
        &self.tensor
    }
    /// Element `k`.
    #[inline]
    pub fn get(&self, k: u64) -> T {
        let at = flat_offset(&self.tensor, self.contiguous, k) * self.tensor.dtype().size();
        T::load(&self.buf, at as usize)
    }
    /// Sets element `k`.
    #[inline]
    pub fn set(&self, k: u64, v: T) {
        let at = flat_offset(&self.tensor, self.contiguous, k) * self.tensor.dtype().size();
        T::store(&self.buf, at as usize, v)
    }
}

/// Dtype-generic element access (values widened to f64).
pub struct AnyView<'a> {
    buf: Buffer<'a>,
    tensor: Tensor,
    contiguous: bool,
}

impl AnyView<'_> {
    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.tensor.numel()
    }
    /// True for an empty view.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The element type.
    pub fn dtype(&self) -> DType {
        self.tensor.dtype()
    }
    /// The view.
    pub fn tensor(&self) -> &Tensor {
        &self.tensor
    }
    /// Element `k` as f64.
    #[inline]
    pub fn get(&self, k: u64) -> f64 {
        let at = flat_offset(&self.tensor, self.contiguous, k) * self.tensor.dtype().size();
        load_as_f64(self.tensor.dtype(), &self.buf, at as usize)
    }
    /// Sets element `k` (converted to the dtype).
    #[inline]
    pub fn set(&self, k: u64, v: f64) {
        let at = flat_offset(&self.tensor, self.contiguous, k) * self.tensor.dtype().size();
        store_from_f64(self.tensor.dtype(), &self.buf, at as usize, v)
    }
}
