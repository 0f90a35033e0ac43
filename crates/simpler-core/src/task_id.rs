//! Task ids: `(ring << 32) | local`, the layout deps.json and every tool use.

use std::fmt;

/// Number of rings (scope depths ≥ 3 share the last one).
pub const MAX_RINGS: usize = 4;

/// A task id: ring in the high 32 bits, the per-ring per-run local counter in the low 32 bits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub u64);

impl TaskId {
    /// The invalid id (`u64::MAX`): "no task", e.g. the owner of an external tensor.
    pub const INVALID: TaskId = TaskId(u64::MAX);

    /// Builds an id from its ring and local counter.
    #[inline]
    pub const fn new(ring: u8, local: u32) -> TaskId {
        TaskId(((ring as u64) << 32) | local as u64)
    }

    /// The raw u64 as written to artifacts.
    #[inline]
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// The ring (high 32 bits, narrowed to u8).
    #[inline]
    pub const fn ring(self) -> u8 {
        (self.0 >> 32) as u8
    }

    /// The per-ring local counter (low 32 bits).
    #[inline]
    pub const fn local(self) -> u32 {
        self.0 as u32
    }

    /// True unless this is [`TaskId::INVALID`] or names a ring that does not exist.
    #[inline]
    pub const fn is_valid(self) -> bool {
        self.0 != u64::MAX && (self.0 >> 32) < MAX_RINGS as u64
    }
}

impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == TaskId::INVALID {
            f.write_str("TaskId(invalid)")
        } else {
            write!(f, "TaskId({}, {})", self.ring(), self.local())
        }
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.ring(), self.local())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let id = TaskId::new(1, 3);
        assert_eq!(id.raw(), 4294967299);
        assert_eq!((id.ring(), id.local()), (1, 3));
        assert!(id.is_valid());
        assert!(!TaskId::INVALID.is_valid());
        assert!(!TaskId::new(4, 0).is_valid());
        assert_eq!(format!("{id}"), "(1, 3)");
    }
}
