//! Tensor views over device buffers, and create-infos for runtime-allocated outputs.
//!
//! A [`Tensor`] is a strided view (shape, strides and start offset in *elements*) of one buffer
//! identified by its base address. Views made with [`Tensor::view`], [`Tensor::slice`],
//! [`Tensor::reshape`] and [`Tensor::transpose`] keep the buffer, the owner task and the version
//! of their parent, so dependency inference treats them as the same tensor.

use std::fmt;

use crate::{DType, TaskId};

/// Maximum number of dimensions of a tensor.
pub const MAX_DIMS: usize = 5;

/// Alignment of every runtime-allocated output buffer, in bytes.
pub const OUTPUT_ALIGN: u64 = 1024;

/// A strided view of a device buffer.
#[derive(Clone, Copy, Eq)]
pub struct Tensor {
    addr: u64,
    size_bytes: u64,
    owner: TaskId,
    start_offset: u64,
    version: i32,
    ndims: u8,
    dtype: DType,
    manual_dep: bool,
    shape: [u32; MAX_DIMS],
    strides: [u32; MAX_DIMS],
}

/// Every field of a [`Tensor`], for building one from raw parts (replays, workload files).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorParts {
    /// Base address of the buffer.
    pub addr: u64,
    /// Size of the whole buffer in bytes.
    pub size_bytes: u64,
    /// The task that created the buffer, or [`TaskId::INVALID`] for external tensors.
    pub owner: TaskId,
    /// Offset of the first element of the view, in elements.
    pub start_offset: u64,
    /// User-chosen version (see the overlap rules).
    pub version: i32,
    /// Element type.
    pub dtype: DType,
    /// When true, the view takes no part in tensor-map lookups and inserts.
    pub manual_dep: bool,
    /// Elements per dimension (1 to 5 dimensions).
    pub shape: Vec<u32>,
    /// Stride per dimension, in elements; every stride > 0.
    pub strides: Vec<u32>,
}

/// Why a tensor or view could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TensorError {
    /// More than [`MAX_DIMS`] or zero dimensions.
    BadRank(usize),
    /// `shape`, `strides` or `offsets` lengths disagree.
    RankMismatch {
        /// Rank of the tensor.
        expected: usize,
        /// Length that was given.
        got: usize,
    },
    /// A dimension index (of `slice` or `transpose`) the tensor does not have.
    NoSuchDim {
        /// The index given.
        dim: usize,
        /// Rank of the tensor.
        ndims: usize,
    },
    /// A stride of zero.
    ZeroStride(usize),
    /// A view or slice that reaches past its parent.
    OutOfBounds {
        /// Dimension that overflows.
        dim: usize,
        /// One past the last index requested.
        end: u64,
        /// Extent of the parent in that dimension.
        limit: u64,
    },
    /// A slice with step 0 or start > end.
    BadSlice,
    /// `reshape` of a non-contiguous view, or to a different element count.
    BadReshape(&'static str),
    /// The view's elements reach past the end of the buffer.
    OutsideBuffer {
        /// One past the last byte the view touches (`u128`: a hostile shape reaches past `u64`).
        end_byte: u128,
        /// Size of the buffer in bytes.
        size_bytes: u64,
    },
    /// A value does not fit the 32-bit shape/stride fields.
    TooLarge,
    /// The view's element count (the product of its shape) does not fit in 64 bits: a view
    /// whose strides revisit the same elements can name more of them than any buffer holds.
    TooManyElements,
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorError::BadRank(n) => write!(f, "a tensor has 1 to {MAX_DIMS} dimensions, got {n}"),
            TensorError::RankMismatch { expected, got } => {
                write!(f, "expected {expected} values (one per dimension), got {got}")
            }
            TensorError::NoSuchDim { dim, ndims } => write!(
                f,
                "dimension {dim} does not exist: the tensor has {ndims} (0 to {})",
                ndims - 1
            ),
            TensorError::ZeroStride(d) => write!(f, "stride of dimension {d} is 0; strides must be > 0"),
            TensorError::OutOfBounds { dim, end, limit } => {
                write!(
                    f,
                    "dimension {dim}: index range ends at {end}, past the parent's extent {limit}"
                )
            }
            TensorError::BadSlice => f.write_str("slice needs start <= end and step >= 1"),
            TensorError::BadReshape(why) => write!(f, "cannot reshape: {why}"),
            TensorError::OutsideBuffer { end_byte, size_bytes } => write!(
                f,
                "view reaches byte {end_byte}, past the end of its {size_bytes}-byte buffer"
            ),
            TensorError::TooLarge => f.write_str("shape or stride does not fit in 32 bits"),
            TensorError::TooManyElements => {
                f.write_str("the view has 2^64 elements or more (the product of its shape)")
            }
        }
    }
}

impl std::error::Error for TensorError {}

fn to_u32(v: u64) -> Result<u32, TensorError> {
    u32::try_from(v).map_err(|_| TensorError::TooLarge)
}

/// Elements a view of `shape` and `strides` spans, `1 + Σ(shape−1)·stride` (0 when a dimension
/// is empty), in `u128`: five `u32` dimensions pass `u64`. For views not yet checked (a file's);
/// a built [`Tensor`]'s is [`Tensor::extent_elems`].
pub fn view_extent(shape: &[u32], strides: &[u32]) -> u128 {
    if shape.contains(&0) {
        return 0;
    }
    1 + (shape.iter().zip(strides))
        .map(|(&n, &s)| u128::from(n - 1) * u128::from(s))
        .sum::<u128>()
}

fn row_major(shape: &[u32]) -> Result<[u32; MAX_DIMS], TensorError> {
    let mut strides = [0u32; MAX_DIMS];
    let mut acc: u64 = 1;
    for d in (0..shape.len()).rev() {
        strides[d] = to_u32(acc)?;
        acc = acc.saturating_mul(u64::from(shape[d]).max(1));
    }
    Ok(strides)
}

impl Tensor {
    /// A contiguous row-major tensor covering a whole buffer (`start_offset` 0).
    pub fn contiguous(
        addr: u64,
        size_bytes: u64,
        shape: &[u32],
        dtype: DType,
        owner: TaskId,
    ) -> Result<Tensor, TensorError> {
        if shape.is_empty() || shape.len() > MAX_DIMS {
            return Err(TensorError::BadRank(shape.len()));
        }
        let mut s = [0u32; MAX_DIMS];
        s[..shape.len()].copy_from_slice(shape);
        let t = Tensor {
            addr,
            size_bytes,
            owner,
            start_offset: 0,
            version: 0,
            ndims: shape.len() as u8,
            dtype,
            manual_dep: false,
            shape: s,
            strides: row_major(shape)?,
        };
        t.check_inside_buffer()?;
        Ok(t)
    }

    /// Builds a tensor from raw parts, checking rank, strides and that it fits its buffer.
    pub fn from_parts(p: &TensorParts) -> Result<Tensor, TensorError> {
        let n = p.shape.len();
        if n == 0 || n > MAX_DIMS {
            return Err(TensorError::BadRank(n));
        }
        if p.strides.len() != n {
            return Err(TensorError::RankMismatch {
                expected: n,
                got: p.strides.len(),
            });
        }
        if let Some(d) = p.strides.iter().position(|&s| s == 0) {
            return Err(TensorError::ZeroStride(d));
        }
        let mut shape = [0u32; MAX_DIMS];
        let mut strides = [0u32; MAX_DIMS];
        shape[..n].copy_from_slice(&p.shape);
        strides[..n].copy_from_slice(&p.strides);
        let t = Tensor {
            addr: p.addr,
            size_bytes: p.size_bytes,
            owner: p.owner,
            start_offset: p.start_offset,
            version: p.version,
            ndims: n as u8,
            dtype: p.dtype,
            manual_dep: p.manual_dep,
            shape,
            strides,
        };
        t.check_inside_buffer()?;
        Ok(t)
    }

    /// The raw parts of this tensor.
    pub fn to_parts(&self) -> TensorParts {
        TensorParts {
            addr: self.addr,
            size_bytes: self.size_bytes,
            owner: self.owner,
            start_offset: self.start_offset,
            version: self.version,
            dtype: self.dtype,
            manual_dep: self.manual_dep,
            shape: self.shape().to_vec(),
            strides: self.strides().to_vec(),
        }
    }

    /// Checks that the view's elements lie inside its buffer and that it has fewer than 2^64
    /// of them. The sums are taken in `u128`: five dimensions of `u32` extents and strides
    /// reach past `u64`, and a sum that wrapped would let a view 8 GiB past a 64-byte buffer
    /// through (or count 2^80 elements as 0). Once this holds, [`Tensor::extent_elems`],
    /// [`Tensor::numel`] and the end byte fit in `u64`.
    fn check_inside_buffer(&self) -> Result<(), TensorError> {
        let extent = view_extent(self.shape(), self.strides());
        if extent == 0 {
            return Ok(());
        }
        let end_byte = (u128::from(self.start_offset) + extent) * u128::from(self.dtype.size());
        if end_byte > u128::from(self.size_bytes) {
            return Err(TensorError::OutsideBuffer {
                end_byte,
                size_bytes: self.size_bytes,
            });
        }
        if self
            .shape()
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(u64::from(n)))
            .is_none()
        {
            return Err(TensorError::TooManyElements);
        }
        Ok(())
    }

    /// Base address of the buffer (the tensor map key).
    #[inline]
    pub fn addr(&self) -> u64 {
        self.addr
    }
    /// Size of the whole buffer in bytes (padded to 1024 for runtime outputs).
    #[inline]
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }
    /// Number of elements of the whole buffer.
    #[inline]
    pub fn buffer_numel(&self) -> u64 {
        self.size_bytes / self.dtype.size()
    }
    /// The task that created the buffer ([`TaskId::INVALID`] for external tensors).
    #[inline]
    pub fn owner(&self) -> TaskId {
        self.owner
    }
    /// Offset of the first element, in elements.
    #[inline]
    pub fn start_offset(&self) -> u64 {
        self.start_offset
    }
    /// User-chosen version.
    #[inline]
    pub fn version(&self) -> i32 {
        self.version
    }
    /// Element type.
    #[inline]
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    /// True when this view skips tensor-map lookups and inserts.
    #[inline]
    pub fn manual_dep(&self) -> bool {
        self.manual_dep
    }
    /// Number of dimensions.
    #[inline]
    pub fn ndims(&self) -> usize {
        self.ndims as usize
    }
    /// Elements per dimension.
    #[inline]
    pub fn shape(&self) -> &[u32] {
        &self.shape[..self.ndims as usize]
    }
    /// Strides per dimension, in elements.
    #[inline]
    pub fn strides(&self) -> &[u32] {
        &self.strides[..self.ndims as usize]
    }
    /// Number of elements of the view.
    pub fn numel(&self) -> u64 {
        self.shape().iter().map(|&s| u64::from(s)).product()
    }
    /// True when the view is row-major without gaps.
    pub fn is_contiguous(&self) -> bool {
        row_major(self.shape())
            .map(|s| s[..self.ndims()] == *self.strides())
            .unwrap_or(false)
    }
    /// Elements spanned from the first to one past the last element: `1 + Σ(shape−1)·stride`
    /// (equal to `numel` for a contiguous view), or 0 for an empty view.
    pub fn extent_elems(&self) -> u64 {
        if self.shape().contains(&0) {
            return 0;
        }
        1 + self
            .shape()
            .iter()
            .zip(self.strides())
            .map(|(&n, &s)| u64::from(n - 1) * u64::from(s))
            .sum::<u64>()
    }

    /// The same view with another version.
    pub fn with_version(mut self, version: i32) -> Tensor {
        self.version = version;
        self
    }
    /// The same view with the `manual_dep` flag set or cleared.
    pub fn with_manual_dep(mut self, manual_dep: bool) -> Tensor {
        self.manual_dep = manual_dep;
        self
    }
    /// The same view owned by `owner` (used when the runtime materializes an output).
    pub fn with_owner(mut self, owner: TaskId) -> Tensor {
        self.owner = owner;
        self
    }

    /// A sub-box: `shape[d]` elements from `offsets[d]` in every dimension.
    #[inline]
    pub fn view(&self, shape: &[u32], offsets: &[u32]) -> Result<Tensor, TensorError> {
        let n = self.ndims();
        for len in [shape.len(), offsets.len()] {
            if len != n {
                return Err(TensorError::RankMismatch {
                    expected: n,
                    got: len,
                });
            }
        }
        let mut start_offset = self.start_offset;
        for d in 0..n {
            let end = u64::from(offsets[d]) + u64::from(shape[d]);
            if end > u64::from(self.shape[d]) {
                return Err(TensorError::OutOfBounds {
                    dim: d,
                    end,
                    limit: u64::from(self.shape[d]),
                });
            }
            start_offset += u64::from(offsets[d]) * u64::from(self.strides[d]);
        }
        // The view is built whole, its shape a value chosen per dimension, not as a copy of
        // `self` patched field by field: the caller copies the view on at once (into its
        // argument list), and loads spanning a patched copy's narrower stores stalled on store
        // forwarding (a quarter of an `hbg` build's orchestration loop).
        let shape = std::array::from_fn(|d| if d < n { shape[d] } else { self.shape[d] });
        Ok(Tensor {
            start_offset,
            shape,
            ..*self
        })
    }

    /// Elements `start, start+step, ... < end` of dimension `dim`.
    pub fn slice(&self, dim: usize, start: u32, end: u32, step: u32) -> Result<Tensor, TensorError> {
        if dim >= self.ndims() {
            return Err(TensorError::NoSuchDim {
                dim,
                ndims: self.ndims(),
            });
        }
        if step == 0 || start > end {
            return Err(TensorError::BadSlice);
        }
        if end > self.shape[dim] {
            return Err(TensorError::OutOfBounds {
                dim,
                end: u64::from(end),
                limit: u64::from(self.shape[dim]),
            });
        }
        let mut out = *self;
        out.start_offset += u64::from(start) * u64::from(self.strides[dim]);
        out.shape[dim] = (end - start).div_ceil(step);
        out.strides[dim] = to_u32(u64::from(self.strides[dim]) * u64::from(step))?;
        Ok(out)
    }

    /// The same elements with another row-major shape; only for contiguous views.
    pub fn reshape(&self, shape: &[u32]) -> Result<Tensor, TensorError> {
        if shape.is_empty() || shape.len() > MAX_DIMS {
            return Err(TensorError::BadRank(shape.len()));
        }
        if !self.is_contiguous() {
            return Err(TensorError::BadReshape("the view is not contiguous"));
        }
        let count = (shape.iter()).try_fold(1u64, |acc, &n| acc.checked_mul(u64::from(n)));
        if count != Some(self.numel()) {
            return Err(TensorError::BadReshape("the element count differs"));
        }
        let mut out = *self;
        out.ndims = shape.len() as u8;
        out.shape = [0; MAX_DIMS];
        out.shape[..shape.len()].copy_from_slice(shape);
        out.strides = row_major(shape)?;
        Ok(out)
    }

    /// Swaps two dimensions (shape and strides).
    pub fn transpose(&self, d0: usize, d1: usize) -> Result<Tensor, TensorError> {
        let n = self.ndims();
        if let Some(dim) = [d0, d1].into_iter().find(|&d| d >= n) {
            return Err(TensorError::NoSuchDim { dim, ndims: n });
        }
        let mut out = *self;
        out.shape.swap(d0, d1);
        out.strides.swap(d0, d1);
        Ok(out)
    }

    /// Element offset (from the buffer base, in elements) of the element at `index`.
    #[inline]
    pub fn element_offset(&self, index: &[u32]) -> u64 {
        self.start_offset
            + index
                .iter()
                .zip(self.strides())
                .map(|(&i, &s)| u64::from(i) * u64::from(s))
                .sum::<u64>()
    }
}

/// A view without its start offset: everything the views of one buffer at one shape share.
///
/// A host-built graph keeps every task's arguments until it runs, and most of those views
/// differ from each other in their start offset alone (the tiles of a matrix, the slices of a
/// vector): it stores each distinct template once and a task's argument as a template number
/// and an offset (`crates/simpler-runtime/src/ring/arg_arena.rs`). [`ViewTemplate::at`] gives
/// the view back bit for bit.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ViewTemplate {
    /// The view at start offset 0.
    base: Tensor,
    /// The largest start offset at which the view still fits its buffer.
    max_start: u64,
}

impl Tensor {
    /// This view's template and its start offset: `template.at(offset)` is `self` again.
    #[inline]
    pub fn split_template(&self) -> (ViewTemplate, u64) {
        let mut base = *self;
        base.start_offset = 0;
        let extent = self.extent_elems();
        let max_start = if extent == 0 {
            u64::MAX
        } else {
            // Every view was checked to fit (`check_inside_buffer`), so this does not wrap.
            (self.size_bytes / self.dtype.size()).saturating_sub(extent)
        };
        (ViewTemplate { base, max_start }, self.start_offset)
    }
}

/// Two shapes or stride lists compared one `u32` at a time. `==` on slices calls `memcmp`
/// (their length is not known at compile time: 3 % of a tmr tiled GEMM's orchestrator), and
/// on whole `[u32; MAX_DIMS]` arrays loads 16 bytes of a view the caller had just built one
/// entry at a time, a store-forwarding stall (half of an hbg submit's argument packing).
#[inline]
pub(crate) fn dims_eq(a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

impl ViewTemplate {
    /// True when `t` is a view of this template (`t.split_template().0 == *self`), checked
    /// field by field on `t` without building its template.
    #[inline]
    pub fn matches(&self, t: &Tensor) -> bool {
        let b = &self.base;
        b.addr == t.addr
            && b.size_bytes == t.size_bytes
            && b.owner == t.owner
            && b.version == t.version
            && b.ndims == t.ndims
            && b.dtype == t.dtype
            && b.manual_dep == t.manual_dep
            && dims_eq(&b.shape, &t.shape)
            && dims_eq(&b.strides, &t.strides)
    }

    /// The view at `start` elements from the buffer's base, or `None` when it would reach past
    /// the buffer's end (a start no view of this template had).
    #[inline]
    pub fn at(&self, start: u64) -> Option<Tensor> {
        (start <= self.max_start).then_some(Tensor {
            start_offset: start,
            ..self.base
        })
    }
}

impl fmt::Debug for ViewTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ViewTemplate")
            .field("base", &self.base)
            .field("max_start", &self.max_start)
            .finish()
    }
}

/// Every field, as the derived form would, in another order: the start offset and the address
/// first (what differs between two views of one graph), then the shape and strides as whole
/// arrays. The derived order compared them last, element by element after the scalars: about
/// 60 instructions where two views of one tile are compared (`TensorMap::lookup`'s last-writer
/// memo, `docs/performance.md`, item 86).
impl PartialEq for Tensor {
    #[inline]
    fn eq(&self, other: &Tensor) -> bool {
        self.start_offset == other.start_offset
            && self.addr == other.addr
            && self.shape == other.shape
            && self.strides == other.strides
            && self.size_bytes == other.size_bytes
            && self.owner == other.owner
            && self.version == other.version
            && self.ndims == other.ndims
            && self.dtype == other.dtype
            && self.manual_dep == other.manual_dep
    }
}

/// Every field [`PartialEq`] compares, so that equal views hash alike.
impl std::hash::Hash for Tensor {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.start_offset.hash(state);
        self.addr.hash(state);
        self.shape.hash(state);
        self.strides.hash(state);
        self.size_bytes.hash(state);
        self.owner.hash(state);
        self.version.hash(state);
        self.ndims.hash(state);
        self.dtype.hash(state);
        self.manual_dep.hash(state);
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tensor")
            .field("addr", &format_args!("{:#x}", self.addr))
            .field("size_bytes", &self.size_bytes)
            .field("owner", &self.owner)
            .field("start_offset", &self.start_offset)
            .field("version", &self.version)
            .field("dtype", &self.dtype)
            .field("manual_dep", &self.manual_dep)
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .finish()
    }
}

/// Describes an output the runtime allocates from the ring heap at submit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorCreateInfo {
    shape: [u32; MAX_DIMS],
    ndims: u8,
    dtype: DType,
    manual_dep: bool,
    initial_value: Option<f64>,
}

impl TensorCreateInfo {
    /// A contiguous output of `shape` elements of `dtype`.
    pub fn new(shape: &[u32], dtype: DType) -> Result<TensorCreateInfo, TensorError> {
        if shape.is_empty() || shape.len() > MAX_DIMS {
            return Err(TensorError::BadRank(shape.len()));
        }
        let mut s = [0u32; MAX_DIMS];
        s[..shape.len()].copy_from_slice(shape);
        Ok(TensorCreateInfo {
            shape: s,
            ndims: shape.len() as u8,
            dtype,
            manual_dep: false,
            initial_value: None,
        })
    }
    /// Sets the `manual_dep` flag of the materialized tensor.
    pub fn with_manual_dep(mut self, manual_dep: bool) -> Self {
        self.manual_dep = manual_dep;
        self
    }
    /// Fills the buffer with `value` (converted to the dtype) at submit.
    pub fn with_initial_value(mut self, value: f64) -> Self {
        self.initial_value = Some(value);
        self
    }
    /// The fill value, if any.
    #[inline]
    pub fn initial_value(&self) -> Option<f64> {
        self.initial_value
    }
    /// Element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    /// Elements per dimension.
    pub fn shape(&self) -> &[u32] {
        &self.shape[..self.ndims as usize]
    }
    /// Bytes the runtime reserves: `numel · elem` rounded up to [`OUTPUT_ALIGN`], and at
    /// least that for an empty output, so that every allocation has its own address (an empty
    /// one shared the next allocation's, and with it a tensor-map key and a deps.json id).
    #[inline]
    pub fn buffer_size_bytes(&self) -> u64 {
        // Saturating: an absurd shape yields a size no heap can hold (a clear exhaustion error),
        // never a wrapped-around small one.
        let raw = (self.shape().iter()).fold(self.dtype.size(), |acc, &s| acc.saturating_mul(u64::from(s)));
        raw.max(1).div_ceil(OUTPUT_ALIGN).saturating_mul(OUTPUT_ALIGN)
    }
    /// The tensor this create-info materializes to at `addr`, owned by `owner`.
    #[inline]
    pub fn materialize(&self, addr: u64, owner: TaskId) -> Tensor {
        let strides = row_major(self.shape()).unwrap_or([1; MAX_DIMS]);
        Tensor {
            addr,
            size_bytes: self.buffer_size_bytes(),
            owner,
            start_offset: 0,
            version: 0,
            ndims: self.ndims,
            dtype: self.dtype,
            manual_dep: self.manual_dep,
            shape: self.shape,
            strides,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two views are equal only when every field is: the comparison is written out (its order
    /// chosen for speed), so each field is checked to be in it, and equal views hash alike.
    #[test]
    fn views_differing_in_any_one_field_are_unequal() {
        use std::hash::{BuildHasher, RandomState};
        let t = Tensor::contiguous(0x1000, 64 * 4, &[4, 16], DType::Float32, TaskId::INVALID)
            .unwrap()
            .view(&[2, 8], &[1, 4])
            .unwrap();
        let p = t.to_parts();
        let mut variants: Vec<TensorParts> = Vec::new();
        let mut vary = |f: &dyn Fn(&mut TensorParts)| {
            let mut q = p.clone();
            f(&mut q);
            variants.push(q);
        };
        vary(&|q| q.addr += 64);
        vary(&|q| q.size_bytes += 64);
        vary(&|q| q.owner = TaskId::new(0, 1));
        vary(&|q| q.start_offset += 1);
        vary(&|q| q.version = 1);
        vary(&|q| q.dtype = DType::Int32);
        vary(&|q| q.manual_dep = true);
        vary(&|q| q.shape[1] = 7);
        vary(&|q| q.strides[0] = 32);
        vary(&|q| {
            q.shape = vec![2, 1, 8];
            q.strides = vec![16, 16, 1];
        });
        for q in &variants {
            let u = Tensor::from_parts(q).unwrap();
            assert_ne!(u, t, "{q:?}");
        }
        let same = Tensor::from_parts(&p).unwrap();
        let h = RandomState::new();
        assert_eq!(same, t);
        assert_eq!(h.hash_one(same), h.hash_one(t));
    }

    fn t2(rows: u32, cols: u32) -> Tensor {
        Tensor::contiguous(
            0x1000,
            u64::from(rows * cols) * 4,
            &[rows, cols],
            DType::Float32,
            TaskId::INVALID,
        )
        .unwrap()
    }

    #[test]
    fn views_keep_identity_and_move_offsets() {
        let t = t2(8, 16).with_version(3);
        let v = t.view(&[2, 4], &[1, 8]).unwrap();
        assert_eq!(v.start_offset(), 16 + 8);
        assert_eq!((v.addr(), v.version(), v.owner()), (t.addr(), 3, TaskId::INVALID));
        assert_eq!(v.extent_elems(), 1 + 16 + 3);
        assert!(!v.is_contiguous());
        let s = t.slice(1, 1, 16, 4).unwrap();
        assert_eq!(
            (s.shape(), s.strides(), s.start_offset()),
            (&[8, 4][..], &[16, 4][..], 1)
        );
        let tr = t.transpose(0, 1).unwrap();
        assert_eq!((tr.shape(), tr.strides()), (&[16, 8][..], &[1, 16][..]));
        let r = t.reshape(&[128]).unwrap();
        assert_eq!((r.shape(), r.strides()), (&[128][..], &[1][..]));
        assert_eq!(
            tr.reshape(&[128]),
            Err(TensorError::BadReshape("the view is not contiguous"))
        );
    }

    #[test]
    fn bad_views_are_errors() {
        let t = t2(8, 16);
        assert_eq!(
            t.view(&[2, 4], &[7, 0]),
            Err(TensorError::OutOfBounds {
                dim: 0,
                end: 9,
                limit: 8
            })
        );
        assert_eq!(t.slice(0, 3, 2, 1), Err(TensorError::BadSlice));
        assert_eq!(t.slice(0, 0, 2, 0), Err(TensorError::BadSlice));
        assert!(matches!(
            t.view(&[1], &[0]),
            Err(TensorError::RankMismatch { .. })
        ));
        assert_eq!(
            Tensor::contiguous(0, 10, &[4], DType::Float32, TaskId::INVALID),
            Err(TensorError::OutsideBuffer {
                end_byte: 16,
                size_bytes: 10
            })
        );
        assert_eq!(
            Tensor::contiguous(0, 10, &[1, 1, 1, 1, 1, 1], DType::Int8, TaskId::INVALID),
            Err(TensorError::BadRank(6))
        );
    }

    #[test]
    fn create_info_pads_to_1024() {
        let ci = TensorCreateInfo::new(&[16384], DType::Float32).unwrap();
        assert_eq!(ci.buffer_size_bytes(), 65536);
        let small = TensorCreateInfo::new(&[3], DType::Float16).unwrap();
        assert_eq!(small.buffer_size_bytes(), 1024);
        let t = small.materialize(4096, TaskId::new(1, 2));
        assert_eq!(
            (t.owner(), t.size_bytes(), t.version(), t.start_offset()),
            (TaskId::new(1, 2), 1024, 0, 0)
        );
    }

    #[test]
    fn views_that_differ_only_in_their_offset_share_a_template_that_gives_each_back() {
        let m = t2(8, 16);
        let (a, b) = (
            m.view(&[2, 4], &[0, 0]).unwrap(),
            m.view(&[2, 4], &[6, 12]).unwrap(),
        );
        let ((ta, oa), (tb, ob)) = (a.split_template(), b.split_template());
        assert_eq!(ta, tb);
        assert_eq!((oa, ob), (0, 6 * 16 + 12));
        assert!(ta.matches(&a) && ta.matches(&b));
        assert_eq!((ta.at(oa), tb.at(ob)), (Some(a), Some(b)));
        // Another shape, version or owner is another template.
        for other in [
            m.view(&[2, 3], &[0, 0]).unwrap(),
            a.with_version(1),
            a.with_owner(TaskId::new(0, 1)),
            a.transpose(0, 1).unwrap(),
        ] {
            assert_ne!(other.split_template().0, ta, "{other:?}");
            assert!(!ta.matches(&other), "{other:?}");
        }
        // The last start at which the 2x4 view still fits the 8x16 buffer, and one past it.
        let last = 8 * 16 - (16 + 4);
        assert_eq!(ta.at(last).map(|t| t.start_offset()), Some(last));
        assert_eq!(ta.at(last + 1), None);
        // An empty view fits anywhere.
        let empty = m.view(&[0, 4], &[8, 0]).unwrap();
        let (te, oe) = empty.split_template();
        assert_eq!(te.at(oe), Some(empty));
        assert!(te.at(u64::MAX).is_some());
    }

    proptest::proptest! {
        #[test]
        fn every_view_comes_back_from_its_template(
            rows in 1u32..40, cols in 1u32..40, r0 in 0u32..40, c0 in 0u32..40,
            h in 0u32..40, w in 0u32..40, step in 1u32..4, transpose: bool,
        ) {
            let m = t2(rows, cols);
            let (r0, c0) = (r0 % rows, c0 % cols);
            let (h, w) = (h % (rows - r0 + 1), w % (cols - c0 + 1));
            let mut v = m.view(&[h, w], &[r0, c0]).unwrap();
            if w > 0 {
                v = v.slice(1, 0, w, step).unwrap();
            }
            if transpose {
                v = v.transpose(0, 1).unwrap();
            }
            let (t, off) = v.split_template();
            proptest::prop_assert_eq!(t.at(off), Some(v));
            proptest::prop_assert!(t.matches(&v));
            // A view of another shape or start matches exactly when its template is equal.
            let w = m.view(&[h.min(1), w.min(1)], &[0, 0]).unwrap();
            proptest::prop_assert_eq!(t.matches(&w), w.split_template().0 == t);
        }
    }
}
