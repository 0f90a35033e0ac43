//! The `simpler` runtime: rings, orchestrator, scheduler, the simulated AIC/AIV platform, the
//! `tmr` and `hbg` runtimes, and the [`Worker`] API.
//!
//! ```
//! use simpler_core::{DType, TaskArgs, TensorCreateInfo};
//! use simpler_runtime::{CallConfig, CoreType, Worker};
//!
//! let mut w = Worker::new();
//! w.register_kernel(0, "add_one", CoreType::Aiv, |ctx| {
//!     let (x, y) = (ctx.view::<f32>(0)?, ctx.view::<f32>(1)?);
//!     for k in 0..x.len() {
//!         y.set(k, x.get(k) + 1.0);
//!     }
//!     Ok(())
//! })
//! .unwrap();
//! let x = w.alloc_tensor(&[4], DType::Float32).unwrap();
//! let y = w.alloc_tensor(&[4], DType::Float32).unwrap();
//! w.write(&x, &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
//! w.run(&CallConfig::default(), move |orch| {
//!     orch.scope(|o| {
//!         let mut a = TaskArgs::new();
//!         a.input(x).output_existing(y);
//!         o.submit_aiv(0, &a)?;
//!         Ok(())
//!     })
//! })
//! .unwrap();
//! assert_eq!(w.read::<f32>(&y).unwrap(), vec![2.0, 3.0, 4.0, 5.0]);
//! ```

pub mod collectors;
pub mod config;
pub mod fatal;
mod huge_pages;
pub mod memory;
pub mod orchestrator;
pub mod platform;
mod prefetch;
pub mod ring;
mod run;
mod scheduler;
mod shared;
mod site;
mod slot;
pub(crate) mod sync;
mod worker;

pub use collectors::args_dump::ArgsDumpOutcome;
pub use collectors::dep_gen::DepGenOutcome;
pub use collectors::output::RunOutput;
pub use collectors::scope_stats::ScopeStatsOutcome;
pub use collectors::swimlane::SwimlaneOutcome;
pub use collectors::{DiagnosticsError, DiagnosticsErrorKind};
pub use config::{CallConfig, RingSizes, RuntimeEnv, RuntimeKind};
pub use fatal::{Fatal, FatalCode, FatalContext, Stopped};
pub use orchestrator::{FaninRecord, OrchResult, Orchestrator, ScopeMode, Site, TaskOutputs};
pub use platform::kernel::{KernelCtx, KernelError};
pub use platform::{CoreType, MixedKernels};
pub use run::{BuildPhases, RunError, RunReport};
pub use worker::Worker;
