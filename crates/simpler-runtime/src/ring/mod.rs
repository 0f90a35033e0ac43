//! Per-ring bounded resources: the task window, the heap and the dependency pools.
//!
//! Each ring is single-writer on the allocation side (the orchestrator, `alloc`) and
//! reclaimed in order by whichever thread retires its head task (`shared`). See `README.md`
//! beside this file for the back-pressure and deadlock rules.

pub(crate) mod alloc;
pub(crate) mod arg_arena;
pub(crate) mod frontiers;
pub mod heap;
mod pool;
pub(crate) mod shared;
pub(crate) mod slots;
mod window;

pub use heap::{HeapAllocator, HeapRefusal};
pub use pool::PoolCounter;
pub use window::TaskWindow;
