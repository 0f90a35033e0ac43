//! Every edge source and overlap class in one small graph:
//!
//! ```text
//! t0  fill X[0:16]    = 1   OUTPUT_EXISTING (tensor-map entry)
//! t1  copy X[0:16]  -> A    INPUT: tensor-map edge t0→t1, producer ⊇ consumer (covered)
//! t2  fill X[16:48]   = 2   OUTPUT_EXISTING (second entry)
//! t3  copy X[0:32]  -> B    INPUT: hits t2 and t0 (partial: other)
//! t4  fill C          = 3   OUTPUT (runtime-allocated)
//! t5  copy C        -> D    INPUT: creator edge t4→t5, plus an explicit dep on t1
//! ```
//! Golden: A = 1×16, B = 1×16 ++ 2×16, D = 3×64.
//!
//! The two fills write disjoint parts of X. OUTPUT_EXISTING registers a writer without
//! waiting for earlier ones (no write-after-write edge), so when t0 filled all of X, t0 and t2
//! were unordered writers of `X[16:32]`: B's second half depended on which ran last, and with
//! several scheduler threads t0 sometimes did (about 3 runs in 100 on three threads). Its
//! edge into t3 was then `Covered`; it is `Other` now, and t0→t1 is the covered case.

use simpler_core::{DType, TaskArgs, TensorCreateInfo};
use simpler_runtime::{CallConfig, CoreType, KernelCtx, KernelError, Worker};

use crate::{Error, Example, Golden, Outcome, ParamSpec, Params};

/// func id of `fill` (every element of arg 0 = scalar 0).
pub const KERNEL_FILL: u32 = 0;
/// func id of `copy` (arg 1 = arg 0).
pub const KERNEL_COPY: u32 = 1;

fn fill(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (x, v) = (ctx.view::<f32>(0)?, ctx.scalar_f32(0)?);
    for k in 0..x.len() {
        x.set(k, v);
    }
    Ok(())
}

fn copy(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (i, o) = (ctx.view::<f32>(0)?, ctx.view::<f32>(1)?);
    for k in 0..o.len() {
        o.set(k, i.get(k));
    }
    Ok(())
}

/// See the module docs.
pub struct EdgeSources;

impl Example for EdgeSources {
    fn name(&self) -> &'static str {
        "edge_sources"
    }
    fn about(&self) -> &'static str {
        "explicit, creator and tensor-map edges with covered and other overlaps"
    }
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }
    fn run(&self, cfg: &CallConfig, _params: &Params) -> Result<Outcome, Error> {
        let mut w = Worker::new();
        w.register_kernel(KERNEL_FILL, "fill", CoreType::Aiv, fill)?;
        w.register_kernel(KERNEL_COPY, "copy", CoreType::Aiv, copy)?;
        let x = w.alloc_tensor(&[64], DType::Float32)?;
        let a = w.alloc_tensor(&[16], DType::Float32)?;
        let b = w.alloc_tensor(&[32], DType::Float32)?;
        let d = w.alloc_tensor(&[64], DType::Float32)?;
        let report = w.run(cfg, move |o| {
            o.scope(|o| {
                let mut t0 = TaskArgs::new();
                t0.output_existing(x.view(&[16], &[0])?).scalar_f32(1.0);
                o.submit_aiv(KERNEL_FILL, &t0)?;
                let mut t1 = TaskArgs::new();
                t1.input(x.view(&[16], &[0])?).output_existing(a);
                let t1_id = o.submit_aiv(KERNEL_COPY, &t1)?.id();
                let mut t2 = TaskArgs::new();
                t2.output_existing(x.view(&[32], &[16])?).scalar_f32(2.0);
                o.submit_aiv(KERNEL_FILL, &t2)?;
                let mut t3 = TaskArgs::new();
                t3.input(x.view(&[32], &[0])?).output_existing(b);
                o.submit_aiv(KERNEL_COPY, &t3)?;
                let mut t4 = TaskArgs::new();
                t4.output(TensorCreateInfo::new(&[64], DType::Float32)?)
                    .scalar_f32(3.0);
                let c = o.submit_aiv(KERNEL_FILL, &t4)?.output(0);
                let mut t5 = TaskArgs::new();
                t5.input(c).output_existing(d).dep(t1_id);
                o.submit_aiv(KERNEL_COPY, &t5)?;
                Ok(())
            })
        })?;
        let mut got = w.read::<f32>(&a)?;
        got.extend(w.read::<f32>(&b)?);
        got.extend(w.read::<f32>(&d)?);
        let golden = Golden::compare(&got, |k| match k {
            0..16 => 1.0,
            16..32 => 1.0,
            32..48 => 2.0,
            _ => 3.0,
        });
        Ok(Outcome { report, golden })
    }
}
