//! The chain barrier (reference §6): N AIC producers each INOUT on X, one dummy barrier with
//! N explicit deps (64 inline, the rest in overflow slots of 582), and one consumer that waits
//! on the barrier and copies `X[0]` into `Y[0]`. Golden: `X[0] = Y[0] = 42`.

use simpler_core::{DType, TaskArgs, TaskId};
use simpler_runtime::{CallConfig, CoreType, KernelCtx, KernelError, Worker};

use crate::{Error, ErrorKind, Example, Golden, Outcome, ParamSpec, Params};

/// func id of the producer kernel (AIC).
pub const KERNEL_WRITE42: u32 = 0;
/// func id of the consumer kernel (AIV).
pub const KERNEL_COPY0: u32 = 1;

fn write42(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    ctx.view::<f32>(0)?.set(0, 42.0);
    Ok(())
}

fn copy0(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let (x, y) = (ctx.view::<f32>(0)?, ctx.view::<f32>(1)?);
    y.set(0, x.get(0));
    Ok(())
}

/// See the module docs.
pub struct ChainBarrier;

/// The most producers a run takes: each producer may hold two dep-pool entries (its chain
/// successor's and the barrier's) until it completes, and the default pool has
/// `DEFAULT_DEP_POOL` (16384) entries; past about 8190 the run can end in DEP_POOL_OVERFLOW
/// depending on timing.
pub const MAX_PRODUCERS: u32 = 8000;

const PARAMS: &[ParamSpec] = &[ParamSpec {
    key: "n",
    default: "64",
    help: "number of producers (1..=8000)",
}];

impl Example for ChainBarrier {
    fn name(&self) -> &'static str {
        "chain_barrier"
    }
    fn about(&self) -> &'static str {
        "N INOUT producers, a dummy barrier with N explicit deps, one consumer; golden 42"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn run(&self, cfg: &CallConfig, params: &Params) -> Result<Outcome, Error> {
        let n = params.u32_at_least("n", 1)?;
        if n > MAX_PRODUCERS {
            return Err(ErrorKind::TooManyProducers {
                n,
                max: MAX_PRODUCERS,
            }
            .into());
        }
        let mut w = Worker::new();
        w.register_kernel(KERNEL_WRITE42, "write42", CoreType::Aic, write42)?;
        w.register_kernel(KERNEL_COPY0, "copy0", CoreType::Aiv, copy0)?;
        let x = w.alloc_tensor(&[16], DType::Float32)?;
        let y = w.alloc_tensor(&[16], DType::Float32)?;
        let report = w.run(cfg, move |o| {
            o.scope(|o| {
                let mut ids: Vec<TaskId> = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    let mut a = TaskArgs::new();
                    a.inout(x);
                    ids.push(o.submit_aic(KERNEL_WRITE42, &a)?.id());
                }
                let mut b = TaskArgs::new();
                b.set_dependencies(&ids);
                let barrier = o.submit_dummy(&b)?.id();
                let mut c = TaskArgs::new();
                c.input(x).inout(y).dep(barrier);
                o.submit_aiv(KERNEL_COPY0, &c)?;
                Ok(())
            })
        })?;
        let got = [w.read::<f32>(&x)?[0], w.read::<f32>(&y)?[0]];
        Ok(Outcome {
            report,
            golden: Golden::compare(&got, |_| 42.0),
        })
    }
}
