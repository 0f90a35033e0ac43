//! A ranged write of a kernel's tensor argument: `ctx.write(i, values, offset=lo)` writes the
//! elements `lo .. lo + len(values)` of argument `i`'s view, in row-major order, and no other.
//!
//! The blocks of one SPMD task run concurrently on the scheduler threads; each must write only
//! its own part of an output. A whole-view write would also write the parts other blocks
//! computed (read back before they wrote them), and the last write-back would win.
//!
//! The runtime's typed views ([`KernelCtx::view`]) set one element by its flat row-major index;
//! the elements arrive as little-endian bytes of the view's dtype. The 16-bit floats and `bool`
//! go through the dtype-generic view ([`KernelCtx::view_any`]), exactly: every f16 and bf16
//! value is an f64, and a bool is 0 or 1.

use simpler_core::DType;
use simpler_runtime::memory::Element;
use simpler_runtime::{KernelCtx, KernelError};

/// An element type whose little-endian bytes the Python side sends.
trait FromLe: Element {
    fn from_le(b: &[u8]) -> Self;
}

macro_rules! from_le {
    ($($t:ty),*) => {$(
        impl FromLe for $t {
            #[inline]
            fn from_le(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
        }
    )*};
}

from_le!(f32, i8, i16, i32, i64, u8, u16, u32, u64);

/// Writes `data` (little-endian elements of the view's dtype, a whole number of them) to the
/// elements `offset ..` of tensor argument `i`'s view. The caller checked that they end within
/// the view ([`check_range`]).
pub fn write_range(ctx: &KernelCtx<'_>, i: usize, offset: u64, data: &[u8]) -> Result<(), KernelError> {
    let t = *ctx.tensor(i)?;
    match t.dtype() {
        DType::Float32 => typed::<f32>(ctx, i, offset, data),
        DType::Int8 => typed::<i8>(ctx, i, offset, data),
        DType::Int16 => typed::<i16>(ctx, i, offset, data),
        DType::Int32 => typed::<i32>(ctx, i, offset, data),
        DType::Int64 => typed::<i64>(ctx, i, offset, data),
        DType::UInt8 => typed::<u8>(ctx, i, offset, data),
        DType::UInt16 => typed::<u16>(ctx, i, offset, data),
        DType::UInt32 => typed::<u32>(ctx, i, offset, data),
        DType::UInt64 => typed::<u64>(ctx, i, offset, data),
        DType::Float16 => generic(ctx, i, offset, data, 2, |b| {
            f16_to_f64(u16::from_le_bytes([b[0], b[1]]))
        }),
        DType::BFloat16 => generic(ctx, i, offset, data, 2, |b| {
            f64::from(f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16))
        }),
        DType::Bool => generic(ctx, i, offset, data, 1, |b| f64::from(u8::from(b[0] != 0))),
    }
}

/// `None` when `count` elements from `offset` fit in a view of `numel` elements, else why not.
pub fn check_range(offset: i64, count: u64, numel: u64) -> Option<String> {
    let Ok(start) = u64::try_from(offset) else {
        return Some(format!("offset {offset} is negative"));
    };
    match start.checked_add(count) {
        Some(end) if end <= numel => None,
        _ => Some(format!(
            "{count} values from element {start} end at {}, past the view's {numel} elements",
            start.saturating_add(count)
        )),
    }
}

fn typed<T: FromLe>(ctx: &KernelCtx<'_>, i: usize, offset: u64, data: &[u8]) -> Result<(), KernelError> {
    let view = ctx.view::<T>(i)?;
    for (k, b) in data.chunks_exact(std::mem::size_of::<T>()).enumerate() {
        view.set(offset + k as u64, T::from_le(b));
    }
    Ok(())
}

fn generic(
    ctx: &KernelCtx<'_>,
    i: usize,
    offset: u64,
    data: &[u8],
    size: usize,
    value: impl Fn(&[u8]) -> f64,
) -> Result<(), KernelError> {
    let view = ctx.view_any(i)?;
    for (k, b) in data.chunks_exact(size).enumerate() {
        view.set(offset + k as u64, value(b));
    }
    Ok(())
}

/// The value of IEEE half-precision bits (exact: every f16 is an f64).
fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f64::from(h & 0x3ff);
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        0x1f if frac == 0.0 => sign * f64::INFINITY,
        0x1f => f64::NAN,
        e => sign * (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}
