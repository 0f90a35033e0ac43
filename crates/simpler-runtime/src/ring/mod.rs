//! Per-ring bounded resources: the task window, the heap and the dependency pools.
//!
//! Each ring is single-writer on the allocation side (the orchestrator) and reclaimed in order
//! by whichever scheduler thread retires its head task. See `README.md` beside this file for
//! the back-pressure and deadlock rules.

pub mod heap;
mod pool;
mod window;

pub use heap::{HeapAllocator, HeapRefusal};
pub use pool::PoolCounter;
pub use window::window_has_room;
