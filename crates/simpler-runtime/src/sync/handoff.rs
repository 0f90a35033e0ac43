//! [`HandoffCell`]: a value threads hand to each other through the runtime's own ordering
//! rather than through a lock (a task's payload, `slot.rs`).

#[cfg(feature = "loom")]
use std::marker::PhantomData;

#[cfg(feature = "loom")]
use loom::cell::{ConstPtr, MutPtr, UnsafeCell};
#[cfg(not(feature = "loom"))]
use std::cell::UnsafeCell;

/// A value written by one thread at a time and read by others only once its writer's work is
/// ordered before them by the runtime's own protocol (for a task's payload: written before the
/// task is published, read until it completes, written again only after its slot retired;
/// see `RingSlot` in `slot.rs`). It takes no lock: a reader-writer lock here cost two atomic
/// read-modify-writes a task on each side (`docs/performance.md`, item 57). Every access is
/// `unsafe`, its caller proving that no write overlaps another access. Built with the `loom`
/// feature it is loom's cell, which fails any model whose accesses can overlap.
pub(crate) struct HandoffCell<T>(UnsafeCell<T>);

// SAFETY: sharing a `HandoffCell` between threads only gives them the `unsafe` accessors
// below, whose callers guarantee that a write never overlaps another access, and that every
// access is ordered after the write before it (happens-before through the runtime's atomics
// and locks). That is exactly what `&T` from several threads (`T: Sync`) and `&mut T` handed
// over between threads (`T: Send`) need.
unsafe impl<T: Send + Sync> Sync for HandoffCell<T> {}

impl<T> HandoffCell<T> {
    /// A cell holding `v`.
    pub fn new(v: T) -> Self {
        HandoffCell(UnsafeCell::new(v))
    }

    /// Shared access to the value while the result lives.
    ///
    /// # Safety
    ///
    /// No [`HandoffCell::write`] access may be alive at any time while the result lives, and
    /// the last write must happen before this call (through an atomic or a lock).
    #[inline]
    pub unsafe fn read(&self) -> Shared<'_, T> {
        #[cfg(not(feature = "loom"))]
        {
            // SAFETY: the caller guarantees no write while the reference lives.
            unsafe { &*self.0.get() }
        }
        #[cfg(feature = "loom")]
        {
            tracked::Shared(self.0.get(), PhantomData)
        }
    }

    /// Exclusive access to the value while the result lives.
    ///
    /// # Safety
    ///
    /// No other access (read or write) may be alive at any time while the result lives, and
    /// every earlier access must happen before this call (through an atomic or a lock).
    #[inline]
    pub unsafe fn write(&self) -> Exclusive<'_, T> {
        #[cfg(not(feature = "loom"))]
        {
            // SAFETY: the caller guarantees no other access while the reference lives.
            unsafe { &mut *self.0.get() }
        }
        #[cfg(feature = "loom")]
        {
            tracked::Exclusive(self.0.get_mut(), PhantomData)
        }
    }
}

/// Shared access to a [`HandoffCell`]'s value ([`HandoffCell::read`]).
#[cfg(not(feature = "loom"))]
pub(crate) type Shared<'a, T> = &'a T;
/// Exclusive access to a [`HandoffCell`]'s value ([`HandoffCell::write`]).
#[cfg(not(feature = "loom"))]
pub(crate) type Exclusive<'a, T> = &'a mut T;
#[cfg(feature = "loom")]
pub(crate) use tracked::{Exclusive, Shared};

/// The accesses under loom, which tracks each while it lives.
#[cfg(feature = "loom")]
mod tracked {
    use super::{ConstPtr, MutPtr, PhantomData};
    use std::ops::{Deref, DerefMut};

    /// Shared access to a [`HandoffCell`](super::HandoffCell)'s value.
    pub(crate) struct Shared<'a, T>(pub(super) ConstPtr<T>, pub(super) PhantomData<&'a T>);

    /// Exclusive access to a [`HandoffCell`](super::HandoffCell)'s value.
    pub(crate) struct Exclusive<'a, T>(pub(super) MutPtr<T>, pub(super) PhantomData<&'a mut T>);

    impl<T> Deref for Shared<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            // SAFETY: `HandoffCell::read`'s caller guarantees no write while `self` lives,
            // and loom checks it.
            unsafe { self.0.deref() }
        }
    }

    impl<T> Deref for Exclusive<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            // SAFETY: `HandoffCell::write`'s caller guarantees no other access while `self`
            // lives, and loom checks it.
            unsafe { &*self.0.deref() }
        }
    }

    impl<T> DerefMut for Exclusive<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            // SAFETY: as for `deref`.
            unsafe { self.0.deref() }
        }
    }
}
