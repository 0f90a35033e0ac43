//! The vector example (reference §8): five AIV tasks over 16384 fp32 elements.
//!
//! ```text
//! root scope:   t0: c = a + b                 (ring 0, id (0,0))
//! inner scope:  t1: d = c + 1                 (ring 1, id (1,0))
//!               t2: e = c + 2                 (ring 1, id (1,1))
//!               t3: g = d * e                 (ring 1, id (1,2))
//!               t4: f = g + c  (OUTPUT_EXISTING into the external f)
//! ```
//! With a = 2 and b = 3 every element of f is (5+1)·(5+2) + 5 = 47. All intermediates are
//! runtime-allocated outputs, so every edge is a creator edge: exactly six of them.

use simpler_core::{DType, TaskArgs, TensorCreateInfo};
use simpler_runtime::{CallConfig, CoreType, KernelCtx, KernelError, Worker};

use crate::{Error, ErrorKind, Example, Golden, Outcome, ParamSpec, Params};

/// func id of `kernel_add`.
pub const KERNEL_ADD: u32 = 0;
/// func id of `kernel_add_scalar`.
pub const KERNEL_ADD_SCALAR: u32 = 1;
/// func id of `kernel_mul`.
pub const KERNEL_MUL: u32 = 2;
/// `kernel_add`: `out = a + b` (tensors 0, 1 in; 2 out).
pub fn add(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (a, b, out) = (ctx.view::<f32>(0)?, ctx.view::<f32>(1)?, ctx.view::<f32>(2)?);
    for k in 0..out.len() {
        out.set(k, a.get(k) + b.get(k));
    }
    Ok(())
}
/// `kernel_add_scalar`: `out = x + s` (tensor 0 in, 1 out; f32 scalar 0).
pub fn add_scalar(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (x, out, s) = (ctx.view::<f32>(0)?, ctx.view::<f32>(1)?, ctx.scalar_f32(0)?);
    for k in 0..out.len() {
        out.set(k, x.get(k) + s);
    }
    Ok(())
}
/// `kernel_mul`: `out = a · b` (tensors 0, 1 in; 2 out).
pub fn mul(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (a, b, out) = (ctx.view::<f32>(0)?, ctx.view::<f32>(1)?, ctx.view::<f32>(2)?);
    for k in 0..out.len() {
        out.set(k, a.get(k) * b.get(k));
    }
    Ok(())
}

/// Registers the three kernels of the example.
pub fn register_kernels(w: &mut Worker) -> Result<(), Error> {
    w.register_kernel(KERNEL_ADD, "kernel_add", CoreType::Aiv, add)?;
    w.register_kernel(KERNEL_ADD_SCALAR, "kernel_add_scalar", CoreType::Aiv, add_scalar)?;
    w.register_kernel(KERNEL_MUL, "kernel_mul", CoreType::Aiv, mul)?;
    Ok(())
}

/// See the module docs.
pub struct VectorExample;

const PARAMS: &[ParamSpec] = &[ParamSpec {
    key: "size",
    default: "16384",
    help: "elements per tensor",
}];

impl Example for VectorExample {
    fn name(&self) -> &'static str {
        "vector_example"
    }
    fn about(&self) -> &'static str {
        "5 AIV tasks (add, add_scalar, mul) in a root and one nested scope; golden f = 47"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn run(&self, cfg: &CallConfig, params: &Params) -> Result<Outcome, Error> {
        let size = params.u32_at_least("size", 1)?;
        let mut w = Worker::new();
        register_kernels(&mut w)?;
        let a = w.alloc_tensor(&[size], DType::Float32)?;
        let b = w.alloc_tensor(&[size], DType::Float32)?;
        let f = w.alloc_tensor(&[size], DType::Float32)?;
        w.fill_with(&a, |_| 2.0)?;
        w.fill_with(&b, |_| 3.0)?;
        let report = w.run(cfg, move |orch| {
            let ci = TensorCreateInfo::new(&[size], DType::Float32)?;
            let mut args = TaskArgs::new();
            args.input(a).input(b).output(ci);
            let c = orch.submit_aiv(KERNEL_ADD, &args)?.output(0);
            orch.scope(|o| {
                let mut t1 = TaskArgs::new();
                t1.input(c).output(ci).scalar_f32(1.0).scalar_u32(3);
                let d = o.submit_aiv(KERNEL_ADD_SCALAR, &t1)?.output(0);
                let mut t2 = TaskArgs::new();
                t2.input(c).output(ci).scalar_f32(2.0).scalar_u32(3);
                let e = o.submit_aiv(KERNEL_ADD_SCALAR, &t2)?.output(0);
                let mut t3 = TaskArgs::new();
                t3.input(d).input(e).output(ci).scalar_u32(3);
                let g = o.submit_aiv(KERNEL_MUL, &t3)?.output(0);
                let mut t4 = TaskArgs::new();
                t4.input(g).input(c).output_existing(f);
                o.submit_aiv(KERNEL_ADD, &t4)?;
                Ok(())
            })
        })?;
        let got = w.read::<f32>(&f)?;
        let golden = Golden::compare(&got, |_| 47.0);
        if got.len() != size as usize {
            return Err(ErrorKind::WrongLength {
                got: got.len(),
                expected: size,
            }
            .into());
        }
        Ok(Outcome { report, golden })
    }
}
