//! Core types of `simpler`: dtypes, tensor views, task arguments, task ids, the tensor map
//! and the one dependency function shared by the runtime, the dep_gen replay and `hbg`.
//!
//! Everything here is pure and single-threaded; the runtime crate adds rings and threads.

mod args;
pub mod containment;
mod deps;
mod dtype;
mod task_id;
mod tensor;
pub mod tensormap;
pub mod view_pack;

pub use args::{
    ArgError, ArgTag, DepKind, ExplicitDepsIter, LaunchSpec, TagRule, TaskArgs, TensorArg, INLINE_DEPS,
    MAX_SCALAR_ARGS, MAX_TENSOR_ARGS,
};
pub use deps::{
    compute_fanin, register_outputs, registrable_outputs, DepFlags, Edge, EdgeSource, FaninError, FaninSet,
    FaninSink, FANIN_LINEAR_LIMIT,
};
pub use dtype::DType;
pub use task_id::{TaskId, MAX_RINGS};
pub use tensor::{
    view_extent, Tensor, TensorCreateInfo, TensorError, TensorParts, ViewTemplate, MAX_DIMS, OUTPUT_ALIGN,
};
pub use tensormap::{check_overlap, Overlap, TensorMap, TensorMapConfig};
