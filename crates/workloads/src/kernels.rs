//! The built-in kernel library: fixed func ids, names and core types, dtype-generic through
//! [`KernelCtx::view_any`]. Elementwise kernels split their output across SPMD blocks; `matmul`
//! splits rows.
//!
//! | id | name | core | tensors | scalars |
//! | -- | ---- | ---- | ------- | ------- |
//! | 0 | `add` | aiv | IN a, IN b, OUT c | |
//! | 1 | `add_scalar` | aiv | IN x, OUT y | f32 s |
//! | 2 | `mul` | aiv | IN a, IN b, OUT c | |
//! | 3 | `copy` | aiv | IN x, OUT y | |
//! | 4 | `fill` | aiv | OUT y | f32 v |
//! | 5 | `matmul` | aic | IN a (M×K), IN b (K×N), OUT or INOUT c (M×N) | |
//! | 6 | `noop` | aiv | any | ignored |
//! | 7 | `noop_aic` | aic | any | ignored |
//! | 8 | `busy` | aiv | any | u64 duration in µs (a no-op that takes that long) |
//! | 9 | `busy_aic` | aic | any | u64 duration in µs |
//!
//! The duration is a separate kernel, not an optional scalar of `noop`, because the subslots of
//! a mixed task share their scalars: a `noop` next to `add_scalar` would otherwise sleep for
//! the bits of the f32 addend. `busy` occupies its virtual core for the duration
//! (`KernelCtx::occupy`): it neither sleeps nor spins, so the scheduler keeps dispatching to the
//! other cores meanwhile and the simulated chip's cores really run side by side.
//!
//! Ids 0–2 are the vector example's, so a workload of it has the same `kernel_ids`.

use std::ops::Range;
use std::time::Duration;

use simpler_core::ArgTag;
use simpler_runtime::platform::kernel::AnyView;
use simpler_runtime::{CoreType, KernelCtx, KernelError, Worker};

/// The body of a library kernel.
type Body = fn(&KernelCtx<'_>) -> Result<(), KernelError>;

/// How a kernel reads a scalar argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarType {
    /// The low 32 bits are an f32.
    F32,
    /// An unsigned 64-bit integer.
    U64,
}

/// One library kernel.
#[derive(Clone, Copy, Debug)]
pub struct KernelInfo {
    /// Its func id.
    pub func_id: u32,
    /// Its name in workload files.
    pub name: &'static str,
    /// The core type it runs on.
    pub core: CoreType,
    /// Tensor arguments it needs (at least).
    pub min_tensors: usize,
    /// Scalar arguments it needs (at least).
    pub min_scalars: usize,
    /// Human signature for errors and docs.
    pub signature: &'static str,
    /// How the kernel reads its leading scalars; a bare JSON number in that position is
    /// encoded this way (typed scalars are taken as written).
    pub scalar_types: &'static [ScalarType],
    /// What it needs of its tensor arguments' shapes ([`KernelInfo::check_shapes`]).
    shapes: ShapeRule,
    body: Body,
}

/// What a kernel needs of its tensor arguments' shapes: checked where a workload is expanded,
/// with the submit's place in the file, and again by the kernel when it runs (a Rust caller
/// of the library has no file).
#[derive(Clone, Copy, Debug)]
enum ShapeRule {
    /// Nothing.
    Any,
    /// Each named input has the element count of the output, the argument after them.
    Elementwise(&'static [&'static str]),
    /// `a` (M×K), `b` (K×N), `c` (M×N), all 2-D.
    Matmul,
}

/// `add` and `mul`: `a`, `b`, then the output.
const AB_TO_C: ShapeRule = ShapeRule::Elementwise(&["input a", "input b"]);
/// `add_scalar` and `copy`: `x`, then the output.
const X_TO_Y: ShapeRule = ShapeRule::Elementwise(&["input x"]);

impl ShapeRule {
    /// Checks the shapes of a task's tensor arguments, in order; the error says which
    /// argument and both sizes.
    fn check(self, shapes: &[&[u32]]) -> Result<(), String> {
        // Saturating: an output's shape is not bounded at load (found by a review: five
        // dimensions of 65536 overflowed the product).
        let numel = |s: &[u32]| s.iter().fold(1u64, |n, &d| n.saturating_mul(u64::from(d)));
        match self {
            ShapeRule::Any => Ok(()),
            ShapeRule::Elementwise(inputs) => {
                let said = |n: u64| match n {
                    u64::MAX => "2^64 or more".to_string(),
                    n => n.to_string(),
                };
                let want = numel(shapes[inputs.len()]);
                for (what, shape) in inputs.iter().zip(shapes) {
                    let got = numel(shape);
                    if got != want {
                        return Err(format!(
                            "{what} has {} elements but the output has {}",
                            said(got),
                            said(want)
                        ));
                    }
                }
                Ok(())
            }
            ShapeRule::Matmul => {
                let dims = |i: usize, name: &str| match *shapes[i] {
                    [r, c] => Ok((r, c)),
                    _ => Err(format!("{name} must be 2-D, not {:?}", shapes[i])),
                };
                let ((m, k), (k2, n), (m2, n2)) = (dims(0, "a")?, dims(1, "b")?, dims(2, "c")?);
                if k != k2 || m != m2 || n != n2 {
                    return Err(format!("shapes {m}x{k} · {k2}x{n} -> {m2}x{n2} do not agree"));
                }
                Ok(())
            }
        }
    }
}

impl KernelInfo {
    /// Checks what the kernel needs of its tensor arguments' shapes, given in argument order
    /// (at least [`KernelInfo::min_tensors`] of them): an elementwise kernel's inputs have its
    /// output's element count, `matmul`'s three matrices agree.
    pub fn check_shapes(&self, shapes: &[&[u32]]) -> Result<(), String> {
        if shapes.len() < self.min_tensors {
            return Err(format!(
                "kernel `{}` takes {}; got {} tensor arguments",
                self.name,
                self.signature,
                shapes.len()
            ));
        }
        self.shapes.check(shapes)
    }
}

/// Every library kernel, by func id.
pub const LIBRARY: [KernelInfo; 10] = [
    KernelInfo {
        func_id: 0,
        name: "add",
        core: CoreType::Aiv,
        min_tensors: 3,
        min_scalars: 0,
        signature: "[IN a, IN b, OUT c]",
        scalar_types: &[],
        shapes: AB_TO_C,
        body: add,
    },
    KernelInfo {
        func_id: 1,
        name: "add_scalar",
        core: CoreType::Aiv,
        min_tensors: 2,
        min_scalars: 1,
        signature: "[IN x, OUT y], scalars [f32 s]",
        scalar_types: &[ScalarType::F32],
        shapes: X_TO_Y,
        body: add_scalar,
    },
    KernelInfo {
        func_id: 2,
        name: "mul",
        core: CoreType::Aiv,
        min_tensors: 3,
        min_scalars: 0,
        signature: "[IN a, IN b, OUT c]",
        scalar_types: &[],
        shapes: AB_TO_C,
        body: mul,
    },
    KernelInfo {
        func_id: 3,
        name: "copy",
        core: CoreType::Aiv,
        min_tensors: 2,
        min_scalars: 0,
        signature: "[IN x, OUT y]",
        scalar_types: &[],
        shapes: X_TO_Y,
        body: copy,
    },
    KernelInfo {
        func_id: 4,
        name: "fill",
        core: CoreType::Aiv,
        min_tensors: 1,
        min_scalars: 1,
        signature: "[OUT y], scalars [f32 v]",
        scalar_types: &[ScalarType::F32],
        shapes: ShapeRule::Any,
        body: fill,
    },
    KernelInfo {
        func_id: 5,
        name: "matmul",
        core: CoreType::Aic,
        min_tensors: 3,
        min_scalars: 0,
        signature: "[IN a (MxK), IN b (KxN), OUT or INOUT c (MxN)]",
        scalar_types: &[],
        shapes: ShapeRule::Matmul,
        body: matmul,
    },
    KernelInfo {
        func_id: 6,
        name: "noop",
        core: CoreType::Aiv,
        min_tensors: 0,
        min_scalars: 0,
        signature: "[any]",
        scalar_types: &[],
        shapes: ShapeRule::Any,
        body: noop,
    },
    KernelInfo {
        func_id: 7,
        name: "noop_aic",
        core: CoreType::Aic,
        min_tensors: 0,
        min_scalars: 0,
        signature: "[any]",
        scalar_types: &[],
        shapes: ShapeRule::Any,
        body: noop,
    },
    KernelInfo {
        func_id: 8,
        name: "busy",
        core: CoreType::Aiv,
        min_tensors: 0,
        min_scalars: 1,
        signature: "[any], scalars [u64 duration_us]",
        scalar_types: &[ScalarType::U64],
        shapes: ShapeRule::Any,
        body: busy,
    },
    KernelInfo {
        func_id: 9,
        name: "busy_aic",
        core: CoreType::Aic,
        min_tensors: 0,
        min_scalars: 1,
        signature: "[any], scalars [u64 duration_us]",
        scalar_types: &[ScalarType::U64],
        shapes: ShapeRule::Any,
        body: busy,
    },
];

/// The library kernel called `name`.
pub fn by_name(name: &str) -> Option<&'static KernelInfo> {
    LIBRARY.iter().find(|k| k.name == name)
}

/// The library kernel with func id `id`.
pub fn by_id(id: u32) -> Option<&'static KernelInfo> {
    LIBRARY.get(id as usize)
}

/// The names of all library kernels, for error messages.
pub fn names() -> String {
    LIBRARY.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

/// Registers the whole library on `w`.
pub fn register_library(w: &mut Worker) -> Result<(), KernelError> {
    for k in &LIBRARY {
        w.register_kernel(k.func_id, k.name, k.core, k.body)?;
    }
    Ok(())
}

/// Registers an empty kernel under each (func id, core type).
pub fn register_noops(w: &mut Worker, ids: &[(u32, CoreType)]) -> Result<(), KernelError> {
    for &(id, core) in ids {
        w.register_kernel(id, &format!("noop_{id}"), core, |_| Ok(()))?;
    }
    Ok(())
}

/// The part of `0..len` that this SPMD block handles.
fn block_range(ctx: &KernelCtx<'_>, len: u64) -> Range<u64> {
    let n = u64::from(ctx.block_num().max(1));
    let chunk = len.div_ceil(n);
    let b = u64::from(ctx.block_idx());
    (b * chunk).min(len)..((b + 1) * chunk).min(len)
}

/// Checks `rule` on the kernel's views when it runs: an elementwise kernel's input must have
/// the output's element count (a longer one's first elements were taken without a word, found
/// by a review; a shorter one would be read past).
fn check<const N: usize>(name: &str, rule: ShapeRule, views: [&AnyView<'_>; N]) -> Result<(), KernelError> {
    rule.check(&views.map(|v| v.tensor().shape()))
        .map_err(|e| KernelError(format!("{name}: {e}")))
}

fn binary(ctx: &KernelCtx<'_>, name: &str, op: fn(f64, f64) -> f64) -> Result<(), KernelError> {
    let (a, b, c) = (ctx.view_any(0)?, ctx.view_any(1)?, ctx.view_any(2)?);
    check(name, AB_TO_C, [&a, &b, &c])?;
    for k in block_range(ctx, c.len()) {
        c.set(k, op(a.get(k), b.get(k)));
    }
    Ok(())
}

fn add(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    binary(ctx, "add", |a, b| a + b)
}

fn mul(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    binary(ctx, "mul", |a, b| a * b)
}

fn add_scalar(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (x, y, s) = (ctx.view_any(0)?, ctx.view_any(1)?, f64::from(ctx.scalar_f32(0)?));
    check("add_scalar", X_TO_Y, [&x, &y])?;
    for k in block_range(ctx, y.len()) {
        y.set(k, x.get(k) + s);
    }
    Ok(())
}

fn copy(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (x, y) = (ctx.view_any(0)?, ctx.view_any(1)?);
    check("copy", X_TO_Y, [&x, &y])?;
    for k in block_range(ctx, y.len()) {
        y.set(k, x.get(k));
    }
    Ok(())
}

fn fill(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (y, v) = (ctx.view_any(0)?, f64::from(ctx.scalar_f32(0)?));
    for k in block_range(ctx, y.len()) {
        y.set(k, v);
    }
    Ok(())
}

fn matmul(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (a, b, c) = (ctx.view_any(0)?, ctx.view_any(1)?, ctx.view_any(2)?);
    check("matmul", ShapeRule::Matmul, [&a, &b, &c])?;
    let (m, k, n) = (
        u64::from(a.tensor().shape()[0]),
        u64::from(a.tensor().shape()[1]),
        u64::from(b.tensor().shape()[1]),
    );
    let accumulate = ctx.tag(2) == Some(ArgTag::Inout);
    for i in block_range(ctx, m) {
        for j in 0..n {
            let mut acc = if accumulate { c.get(i * n + j) } else { 0.0 };
            for p in 0..k {
                acc += a.get(i * k + p) * b.get(p * n + j);
            }
            c.set(i * n + j, acc);
        }
    }
    Ok(())
}

fn noop(_: &KernelCtx<'_>) -> Result<(), KernelError> {
    Ok(())
}

/// Longest `busy` duration: a typo should not park a core for hours.
const MAX_BUSY_US: u64 = 60_000_000;

fn busy(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let us = ctx.scalar(0)?;
    if us > MAX_BUSY_US {
        return Err(KernelError(format!(
            "busy: duration {us} us is over the limit of {MAX_BUSY_US} us"
        )));
    }
    ctx.occupy(Duration::from_micros(us));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_positions_and_names_are_unique() {
        for (i, k) in LIBRARY.iter().enumerate() {
            assert_eq!(k.func_id as usize, i);
            assert_eq!(by_name(k.name).unwrap().func_id, k.func_id);
        }
        assert_eq!(by_name("add").unwrap().func_id, 0);
        assert_eq!(by_name("mul").unwrap().func_id, 2);
        assert!(by_id(10).is_none());
    }
}
