//! Simulated device memory: external buffers (owned by the `Worker`, live across runs) and the
//! four ring heaps of a run, all byte-addressable by device address.
//!
//! Memory is made of `AtomicU8`s accessed with relaxed loads and stores, so kernels on
//! different threads may touch the same bytes (a graph with an untracked write-after-read is
//! the user's bug, but never undefined behaviour here).
//!
//! Addresses: external buffers start at [`EXTERNAL_BASE`], 1024-aligned and never reused. Ring
//! `r`'s heap has a monotonic virtual address space starting at [`heap_vbase`]`(r)`; a virtual
//! offset maps to the physical heap at `offset mod heap size` (an allocation never straddles
//! the end), so every allocation of a run has a unique address.
//!
//! Above bit [`DOMAIN_SHIFT`] an address names its domain: the worker whose external buffer it
//! is, or the run whose heap it is in, each numbered in the process from 0 (so a process's
//! first worker and first run have the addresses they would have without). A tensor kept past
//! its run, or handed to another worker, then finds no buffer, and a submit refuses it with a
//! message that says which (`Orchestrator::admit`), instead of reading what the other run or
//! worker keeps at the same place. The artifacts record the address below the domain
//! ([`local_addr`]), so that the same orchestration writes the same deps.json in every run.
//! Domains are 16 bits: a tensor kept across exactly 65,536 workers or runs would alias again.

use crate::sync::unmodeled::{AtomicU64, AtomicU8};
use crate::sync::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::sync::RwLock;
use half::{bf16, f16};
use simpler_core::{DType, TaskId, Tensor, TensorError, MAX_RINGS, OUTPUT_ALIGN};

/// First address handed out for external buffers.
pub const EXTERNAL_BASE: u64 = 1 << 32;
const HEAP_VBASE_SHIFT: u32 = 44;
/// The bit above which an address holds its domain (the module docs).
pub const DOMAIN_SHIFT: u32 = 48;

/// The next worker's external-memory domain.
static NEXT_WORKER_DOMAIN: AtomicU64 = AtomicU64::new(0);
/// The next run's heap domain.
static NEXT_RUN_DOMAIN: AtomicU64 = AtomicU64::new(0);

/// A fresh domain from `counter`, as the bits it sets in an address.
fn next_domain(counter: &AtomicU64) -> u64 {
    (counter.fetch_add(1, Ordering::Relaxed) & 0xFFFF) << DOMAIN_SHIFT
}

/// `addr` without its domain: the same in every worker and run (what the artifacts record).
pub const fn local_addr(addr: u64) -> u64 {
    addr & ((1 << DOMAIN_SHIFT) - 1)
}

/// The domain bits of `addr`.
pub const fn domain_of(addr: u64) -> u64 {
    addr & !((1 << DOMAIN_SHIFT) - 1)
}

/// Whether `addr` is in a ring heap (else an external buffer's).
pub const fn is_heap_addr(addr: u64) -> bool {
    local_addr(addr) >= heap_vbase(0)
}

/// Virtual base address of ring `ring`'s heap.
pub const fn heap_vbase(ring: usize) -> u64 {
    ((ring as u64) + 1) << HEAP_VBASE_SHIFT
}

/// A zero-initialized byte buffer that threads may read and write concurrently.
pub struct Bytes(Box<[AtomicU8]>);

impl Bytes {
    /// `len` zero bytes. Large buffers are mapped lazily by the allocator (calloc), so an
    /// untouched `DEFAULT_HEAP` (256 MiB) heap costs no resident memory.
    pub fn zeroed(len: usize) -> Bytes {
        let raw: Box<[u8]> = vec![0u8; len].into_boxed_slice();
        let ptr = Box::into_raw(raw) as *mut [AtomicU8];
        // SAFETY: `AtomicU8` has the same size, alignment and bit validity as `u8` (std docs of
        // `AtomicU8`), so a `[u8]` allocation of `len` bytes is a valid `[AtomicU8]` of `len`
        // elements with the same layout; the pointer comes from `Box::into_raw` of a box
        // allocated by the global allocator with that layout, and ownership moves into the new
        // box exactly once, so it is freed exactly once with the layout it was allocated with.
        Bytes(unsafe { Box::from_raw(ptr) })
    }
    /// `len` zero bytes as [`Bytes::zeroed`] maps them, or `None` when the allocator refuses
    /// them (more than the host will lend), where `zeroed` aborts the process.
    pub fn try_zeroed(len: usize) -> Option<Bytes> {
        if len == 0 {
            return Some(Bytes::zeroed(0));
        }
        let layout = std::alloc::Layout::array::<AtomicU8>(len).ok()?;
        // SAFETY: `layout` has a non-zero size (`len > 0` elements of one byte each), as
        // `alloc_zeroed` requires.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<AtomicU8>();
        if ptr.is_null() {
            return None;
        }
        // SAFETY: `ptr` is non-null and was allocated by the global allocator with
        // `Layout::array::<AtomicU8>(len)`, the layout `Box<[AtomicU8]>` of `len` elements
        // uses (std's `Box` memory-layout rules), and its bytes are zeroed: all-zero bytes are
        // valid `AtomicU8`s (the bit validity of `u8`). Ownership moves into the box exactly
        // once, so it is freed exactly once, with that layout.
        Some(Bytes(unsafe {
            Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len))
        }))
    }
    /// The bytes.
    #[inline]
    pub fn as_slice(&self) -> &[AtomicU8] {
        &self.0
    }
    /// Number of bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Errors of memory access.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemoryError {
    /// No buffer at this address.
    UnknownAddress(u64),
    /// An external tensor of another worker.
    OtherWorker(u64),
    /// An output of another run (a run's outputs live in their run's heap only).
    OtherRun(u64),
    /// The access reaches past the buffer.
    OutOfRange {
        /// Buffer address.
        addr: u64,
        /// One past the last byte accessed.
        end: u64,
        /// Buffer size.
        size: u64,
    },
    /// Typed access with the wrong dtype.
    DTypeMismatch {
        /// The tensor's dtype.
        tensor: DType,
        /// The dtype asked for.
        requested: DType,
    },
    /// Host data of the wrong length.
    LengthMismatch {
        /// Elements in the tensor.
        expected: u64,
        /// Elements given.
        got: u64,
    },
    /// Host bytes of the wrong length for the view's elements.
    ByteLengthMismatch {
        /// Bytes of the view's elements.
        expected: u64,
        /// Bytes given.
        got: u64,
    },
    /// A bad tensor description.
    Tensor(TensorError),
    /// The requested buffer cannot exist in this process's address space.
    TooLarge {
        /// The requested shape.
        shape: Vec<u32>,
        /// The requested dtype.
        dtype: DType,
    },
    /// The host's allocator refused the buffer's bytes (more than it will lend).
    HostRefused {
        /// The requested shape.
        shape: Vec<u32>,
        /// The requested dtype.
        dtype: DType,
        /// The bytes asked for.
        bytes: u64,
    },
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemoryError::UnknownAddress(a) => write!(f, "no device buffer at address {a:#x}"),
            MemoryError::OtherWorker(a) => write!(
                f,
                "the tensor at address {a:#x} belongs to another Worker (a worker reads, writes \
                 and runs on its own external tensors only)"
            ),
            MemoryError::OtherRun(a) => write!(
                f,
                "the tensor at address {a:#x} is an output of another run (a run's outputs live \
                 only while it runs: copy one into an external tensor to keep it)"
            ),
            MemoryError::OutOfRange { addr, end, size } => {
                write!(f, "access to byte {end} of the {size}-byte buffer at {addr:#x}")
            }
            MemoryError::DTypeMismatch { tensor, requested } => {
                write!(f, "tensor holds {tensor} but was accessed as {requested}")
            }
            MemoryError::LengthMismatch { expected, got } => {
                write!(f, "tensor has {expected} elements but {got} were given")
            }
            MemoryError::ByteLengthMismatch { expected, got } => {
                write!(
                    f,
                    "tensor has {expected} bytes of elements but {got} bytes were given"
                )
            }
            MemoryError::Tensor(e) => e.fmt(f),
            MemoryError::TooLarge { shape, dtype } => {
                write!(
                    f,
                    "a {dtype} buffer of shape {shape:?} exceeds the addressable size"
                )
            }
            MemoryError::HostRefused { shape, dtype, bytes } => {
                write!(
                    f,
                    "the host refused the {bytes} bytes of a {dtype} buffer of shape {shape:?}"
                )
            }
        }
    }
}

impl std::error::Error for MemoryError {}

/// External device buffers, created by the host and shared by every run of a worker.
pub struct ExternalMemory {
    buffers: RwLock<BTreeMap<u64, Arc<Bytes>>>,
    next: AtomicU64,
    /// This worker's domain bits (the module docs).
    domain: u64,
}

impl Default for ExternalMemory {
    /// No buffers, in a fresh domain.
    fn default() -> Self {
        ExternalMemory {
            buffers: RwLock::default(),
            next: AtomicU64::new(0),
            domain: next_domain(&NEXT_WORKER_DOMAIN),
        }
    }
}

impl ExternalMemory {
    /// This worker's domain bits, which every one of its external addresses carries.
    pub fn domain(&self) -> u64 {
        self.domain
    }

    /// Allocates a zeroed buffer and returns a contiguous tensor over all of it.
    pub fn alloc(&self, shape: &[u32], dtype: DType) -> Result<Tensor, MemoryError> {
        let too_large = || MemoryError::TooLarge {
            shape: shape.to_vec(),
            dtype,
        };
        let size = shape
            .iter()
            .try_fold(dtype.size(), |acc, &s| acc.checked_mul(u64::from(s)))
            .filter(|&b| b <= isize::MAX as u64 / 2)
            .ok_or_else(too_large)?;
        let reserve = size.max(1).div_ceil(OUTPUT_ALIGN) * OUTPUT_ALIGN;
        // The bytes first: a refusal then takes no address.
        let bytes = Bytes::try_zeroed(size as usize).ok_or_else(|| MemoryError::HostRefused {
            shape: shape.to_vec(),
            dtype,
            bytes: size,
        })?;
        // Every external address of the worker's life stays below the heaps' (never reused);
        // a buffer that would cross them takes none either.
        let room = heap_vbase(0) - EXTERNAL_BASE;
        let offset = self
            .next
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                n.checked_add(reserve).filter(|&end| end <= room)
            })
            .map_err(|_| too_large())?;
        let addr = self.domain | (EXTERNAL_BASE + offset);
        let t = Tensor::contiguous(addr, size, shape, dtype, TaskId::INVALID).map_err(MemoryError::Tensor)?;
        self.buffers.write().insert(addr, Arc::new(bytes));
        Ok(t)
    }
    /// Frees the buffer at `addr` (kernels still holding it keep it alive until they finish).
    pub fn free(&self, addr: u64) -> Result<(), MemoryError> {
        self.check_domain(addr)?;
        self.buffers
            .write()
            .remove(&addr)
            .map(|_| ())
            .ok_or(MemoryError::UnknownAddress(addr))
    }
    /// The buffer at `addr`.
    pub fn get(&self, addr: u64) -> Result<Arc<Bytes>, MemoryError> {
        self.check_domain(addr)?;
        self.buffers
            .read()
            .get(&addr)
            .cloned()
            .ok_or(MemoryError::UnknownAddress(addr))
    }
    /// `addr` is an external address of this worker's, or the error that says whose it is.
    fn check_domain(&self, addr: u64) -> Result<(), MemoryError> {
        match (is_heap_addr(addr), domain_of(addr) == self.domain) {
            (false, true) => Ok(()),
            (false, false) => Err(MemoryError::OtherWorker(addr)),
            (true, _) => Err(MemoryError::UnknownAddress(addr)),
        }
    }
}

/// The heaps of one run.
pub struct HeapMemory {
    heaps: [Bytes; MAX_RINGS],
    /// This run's domain bits (the module docs).
    domain: u64,
}

impl HeapMemory {
    /// Zeroed heaps of the given sizes (lazily mapped), in a fresh domain.
    pub fn new(sizes: [u64; MAX_RINGS]) -> HeapMemory {
        HeapMemory {
            heaps: sizes.map(|s| Bytes::zeroed(s as usize)),
            domain: next_domain(&NEXT_RUN_DOMAIN),
        }
    }
    /// [`HeapMemory::new`], or the first ring whose heap the host refused, with its size: an
    /// address-space limit (`ulimit -v`) refuses heaps the machine's memory would hold, and
    /// `new` then aborted the process (found by a review).
    pub fn try_new(sizes: [u64; MAX_RINGS]) -> Result<HeapMemory, (usize, u64)> {
        let mut heaps = Vec::with_capacity(MAX_RINGS);
        for (ring, &size) in sizes.iter().enumerate() {
            let bytes = usize::try_from(size).ok().and_then(Bytes::try_zeroed);
            heaps.push(bytes.ok_or((ring, size))?);
        }
        Ok(HeapMemory {
            heaps: heaps
                .try_into()
                .unwrap_or_else(|_| unreachable!("one heap per ring")),
            domain: next_domain(&NEXT_RUN_DOMAIN),
        })
    }
    /// This run's domain bits, which every one of its heap addresses carries.
    pub fn domain(&self) -> u64 {
        self.domain
    }
    /// The address of ring `ring`'s heap's virtual offset 0 in this run.
    pub fn base(&self, ring: usize) -> u64 {
        self.domain | heap_vbase(ring)
    }
    fn locate(&self, addr: u64, size: u64) -> Option<&[AtomicU8]> {
        if domain_of(addr) != self.domain {
            return None;
        }
        let addr = local_addr(addr);
        let ring = (addr >> HEAP_VBASE_SHIFT).checked_sub(1)? as usize;
        let heap = self.heaps.get(ring)?.as_slice();
        if heap.is_empty() {
            return None;
        }
        let phys = ((addr - heap_vbase(ring)) % heap.len() as u64) as usize;
        heap.get(phys..phys + size as usize)
    }
}

/// A resolved buffer: a heap range or an external buffer.
pub enum Buffer<'a> {
    /// A range of a ring heap.
    Heap(&'a [AtomicU8]),
    /// An external buffer.
    External(Arc<Bytes>),
}

impl std::ops::Deref for Buffer<'_> {
    type Target = [AtomicU8];
    fn deref(&self) -> &[AtomicU8] {
        match self {
            Buffer::Heap(s) => s,
            Buffer::External(b) => b.as_slice(),
        }
    }
}

/// Everything a kernel can address during one run.
pub struct RunMemory {
    /// The run's heaps.
    pub heaps: HeapMemory,
    /// The worker's external buffers.
    pub external: Arc<ExternalMemory>,
}

impl RunMemory {
    /// The whole buffer of `t`.
    pub fn buffer(&self, t: &Tensor) -> Result<Buffer<'_>, MemoryError> {
        if is_heap_addr(t.addr()) {
            if domain_of(t.addr()) != self.heaps.domain {
                return Err(MemoryError::OtherRun(t.addr()));
            }
            return self
                .heaps
                .locate(t.addr(), t.size_bytes())
                .map(Buffer::Heap)
                .ok_or(MemoryError::UnknownAddress(t.addr()));
        }
        let b = self.external.get(t.addr())?;
        if (b.len() as u64) < t.size_bytes() {
            return Err(MemoryError::OutOfRange {
                addr: t.addr(),
                end: t.size_bytes(),
                size: b.len() as u64,
            });
        }
        Ok(Buffer::External(b))
    }
}

/// A value type a tensor can hold, read and written as little-endian bytes.
pub trait Element: Copy + Send + Sync + 'static {
    /// The dtype of this element type.
    const DTYPE: DType;
    /// Reads one element at byte offset `at`.
    fn load(bytes: &[AtomicU8], at: usize) -> Self;
    /// Writes one element at byte offset `at`.
    fn store(bytes: &[AtomicU8], at: usize, v: Self);
}

#[inline]
fn load_n<const N: usize>(bytes: &[AtomicU8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    for (o, b) in out.iter_mut().zip(&bytes[at..at + N]) {
        *o = b.load(Ordering::Relaxed);
    }
    out
}

#[inline]
fn store_n<const N: usize>(bytes: &[AtomicU8], at: usize, v: [u8; N]) {
    for (b, x) in bytes[at..at + N].iter().zip(v) {
        b.store(x, Ordering::Relaxed);
    }
}

macro_rules! element {
    ($t:ty, $d:expr) => {
        impl Element for $t {
            const DTYPE: DType = $d;
            #[inline]
            fn load(bytes: &[AtomicU8], at: usize) -> Self {
                <$t>::from_le_bytes(load_n(bytes, at))
            }
            #[inline]
            fn store(bytes: &[AtomicU8], at: usize, v: Self) {
                store_n(bytes, at, v.to_le_bytes())
            }
        }
    };
}

element!(f32, DType::Float32);
element!(f16, DType::Float16);
element!(bf16, DType::BFloat16);
element!(i8, DType::Int8);
element!(i16, DType::Int16);
element!(i32, DType::Int32);
element!(i64, DType::Int64);
element!(u8, DType::UInt8);
element!(u16, DType::UInt16);
element!(u32, DType::UInt32);
element!(u64, DType::UInt64);

/// The elements of view `t` of `bytes` (its buffer) as little-endian bytes, row-major: for
/// callers that hold typed data as bytes (the Python binding's NumPy arrays).
pub fn read_view_bytes(bytes: &[AtomicU8], t: &Tensor) -> Vec<u8> {
    let es = t.dtype().size() as usize;
    let mut out = Vec::with_capacity(t.numel() as usize * es);
    for off in view_offsets(t) {
        let at = off as usize * es;
        out.extend(bytes[at..at + es].iter().map(|v| v.load(Ordering::Relaxed)));
    }
    out
}

/// Writes `data`, the little-endian bytes of view `t`'s elements in row-major order, into
/// `bytes` (its buffer); `data` must hold exactly `numel × element size` bytes.
pub fn write_view_bytes(bytes: &[AtomicU8], t: &Tensor, data: &[u8]) -> Result<(), MemoryError> {
    let es = t.dtype().size();
    if data.len() as u64 != t.numel() * es {
        return Err(MemoryError::ByteLengthMismatch {
            expected: t.numel() * es,
            got: data.len() as u64,
        });
    }
    for (off, elem) in view_offsets(t).zip(data.chunks_exact(es as usize)) {
        let at = (off * es) as usize;
        for (dst, &v) in bytes[at..at + elem.len()].iter().zip(elem) {
            dst.store(v, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// Reads the element at byte offset `at` of a buffer holding `dtype`, widened to f64.
pub fn load_as_f64(dtype: DType, bytes: &[AtomicU8], at: usize) -> f64 {
    match dtype {
        DType::Float32 => f64::from(f32::load(bytes, at)),
        DType::Float16 => f16::load(bytes, at).to_f64(),
        DType::BFloat16 => bf16::load(bytes, at).to_f64(),
        DType::Int8 => f64::from(i8::load(bytes, at)),
        DType::Int16 => f64::from(i16::load(bytes, at)),
        DType::Int32 => f64::from(i32::load(bytes, at)),
        DType::Int64 => i64::load(bytes, at) as f64,
        DType::UInt8 | DType::Bool => f64::from(u8::load(bytes, at)),
        DType::UInt16 => f64::from(u16::load(bytes, at)),
        DType::UInt32 => f64::from(u32::load(bytes, at)),
        DType::UInt64 => u64::load(bytes, at) as f64,
    }
}

/// Writes `v` converted to `dtype` (integers saturate, bool is `v != 0`) at byte offset `at`.
pub fn store_from_f64(dtype: DType, bytes: &[AtomicU8], at: usize, v: f64) {
    match dtype {
        DType::Float32 => f32::store(bytes, at, v as f32),
        DType::Float16 => f16::store(bytes, at, f16::from_f64(v)),
        DType::BFloat16 => bf16::store(bytes, at, bf16::from_f64(v)),
        DType::Int8 => i8::store(bytes, at, v as i8),
        DType::Int16 => i16::store(bytes, at, v as i16),
        DType::Int32 => i32::store(bytes, at, v as i32),
        DType::Int64 => i64::store(bytes, at, v as i64),
        DType::UInt8 => u8::store(bytes, at, v as u8),
        DType::Bool => u8::store(bytes, at, u8::from(v != 0.0)),
        DType::UInt16 => u16::store(bytes, at, v as u16),
        DType::UInt32 => u32::store(bytes, at, v as u32),
        DType::UInt64 => u64::store(bytes, at, v as u64),
    }
}

/// Element offsets (from the buffer base, in elements) of a view, in row-major order.
pub fn view_offsets(t: &Tensor) -> impl Iterator<Item = u64> + '_ {
    let shape = t.shape();
    let n = if shape.contains(&0) { 0 } else { t.numel() };
    let mut idx = [0u32; simpler_core::MAX_DIMS];
    let nd = shape.len();
    (0..n).map(move |k| {
        let off = t.element_offset(&idx[..nd]);
        if k + 1 < n {
            for d in (0..nd).rev() {
                idx[d] += 1;
                if idx[d] < shape[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        off
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_sizes_are_refused_not_aborted() {
        let m = ExternalMemory::default();
        let e = m
            .alloc(&[u32::MAX, u32::MAX, u32::MAX], DType::Float32)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "a FLOAT32 buffer of shape [4294967295, 4294967295, 4294967295] exceeds the addressable size"
        );
        assert!(matches!(
            m.alloc(&[1 << 31, 1 << 31], DType::Float32),
            Err(MemoryError::TooLarge { .. })
        ));
        assert_eq!(m.alloc(&[4], DType::Float32).unwrap().size_bytes(), 16);
        // 16 TiB: past the external address space (below the heaps'): refused, by the host
        // or by the address space, never an abort.
        assert!(matches!(
            m.alloc(&[1 << 30, 1 << 12], DType::Float32),
            Err(MemoryError::TooLarge { .. } | MemoryError::HostRefused { .. })
        ));
        // 4 TiB fits the address space, not this machine (nor any the suite runs on): the
        // allocator's refusal is an error, where it aborted the process.
        assert_eq!(
            m.alloc(&[1 << 30, 1 << 10], DType::Float32)
                .unwrap_err()
                .to_string(),
            "the host refused the 4398046511104 bytes of a FLOAT32 buffer of shape [1073741824, 1024]"
        );
        // The fallible path's buffers are zeroed and usable, empty ones included.
        let b = Bytes::try_zeroed(1 << 20).unwrap();
        assert!(b.as_slice().iter().all(|x| x.load(Ordering::Relaxed) == 0));
        b.as_slice()[(1 << 20) - 1].store(7, Ordering::Relaxed);
        assert_eq!(b.as_slice()[(1 << 20) - 1].load(Ordering::Relaxed), 7);
        assert!(Bytes::try_zeroed(0).unwrap().is_empty());
        // Refusals took no address: the next buffer follows the first two.
        assert_eq!(
            m.alloc(&[4], DType::Float32).unwrap().addr(),
            m.domain() | (EXTERNAL_BASE + 1024)
        );
    }

    #[test]
    fn zeroed_bytes_are_shared_safely() {
        let b = Arc::new(Bytes::zeroed(1 << 20));
        assert!(b
            .as_slice()
            .iter()
            .step_by(4096)
            .all(|x| x.load(Ordering::Relaxed) == 0));
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let b = b.clone();
                std::thread::spawn(move || {
                    for i in (t..1 << 20).step_by(4) {
                        b.as_slice()[i].store(t as u8 + 1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        for i in 0..1 << 20 {
            assert_eq!(b.as_slice()[i].load(Ordering::Relaxed), (i % 4) as u8 + 1);
        }
    }

    #[test]
    fn heap_virtual_addresses_wrap_onto_physical() {
        let heaps = HeapMemory::new([4096, 0, 0, 0]);
        let a = heaps.locate(heaps.base(0) + 1024, 1024).unwrap();
        let b = heaps.locate(heaps.base(0) + 4096 + 1024, 1024).unwrap();
        f32::store(a, 0, 3.5);
        assert_eq!(f32::load(b, 0), 3.5, "same physical bytes one lap later");
        assert!(
            heaps.locate(heaps.base(1), 16).is_none(),
            "ring 1 has no heap here"
        );
    }

    #[test]
    fn conversions_and_view_offsets() {
        let b = Bytes::zeroed(64);
        for d in DType::ALL {
            store_from_f64(d, b.as_slice(), 8, 3.0);
            assert_eq!(
                load_as_f64(d, b.as_slice(), 8),
                if d == DType::Bool { 1.0 } else { 3.0 },
                "{d}"
            );
        }
        let t = Tensor::contiguous(0, 4 * 12, &[3, 4], DType::Float32, TaskId::INVALID).unwrap();
        let v = t.view(&[2, 2], &[1, 1]).unwrap();
        assert_eq!(view_offsets(&v).collect::<Vec<_>>(), vec![5, 6, 9, 10]);
    }
}
