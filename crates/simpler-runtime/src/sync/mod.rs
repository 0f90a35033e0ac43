//! Every atomic, lock and condition variable of the runtime, from one place.
//!
//! Normally these are `std`'s atomics and `parking_lot`'s locks. Built with the `loom` feature
//! they are [loom](https://docs.rs/loom)'s, so the concurrent protocols (the `Sleep`
//! park/notify, the collectors' buffer channel, ring advance, fanin linking, the payload
//! handoff, scope releases handed to a scheduler, a host-built graph's fans without their
//! locks) can be model-checked:
//! `cargo test -p simpler-runtime --features loom --lib loom_models` (see `loom_models.rs`).
//! A module that needs a new primitive adds it here, never imports `std::sync::atomic` or
//! `parking_lot` itself.

#[cfg(all(test, feature = "loom"))]
mod loom_models;
mod sleep;

pub(crate) use sleep::Sleep;

pub(crate) use std::sync::atomic::Ordering;

#[cfg(not(feature = "loom"))]
pub(crate) use parking_lot::{Condvar, Mutex, MutexGuard, RwLock};
#[cfg(not(feature = "loom"))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize};

#[cfg(feature = "loom")]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize};
#[cfg(feature = "loom")]
pub(crate) use loom_shim::{Condvar, Mutex, MutexGuard, RwLock};

/// Runs `f` on a mutex's value without taking the lock: for a value that, by the caller's
/// protocol, only one thread can reach at a time (a host-built graph's fans,
/// `Slot::fan_exclusive`), where a lock's two atomic read-modify-writes are pure cost.
///
/// # Safety
///
/// While `f` runs no other thread accesses the value, through the lock or otherwise, and
/// every earlier access by another thread happens before this call.
#[cfg(not(feature = "loom"))]
#[inline]
pub(crate) unsafe fn with_unlocked<T, R>(m: &Mutex<T>, f: impl FnOnce(&mut T) -> R) -> R {
    // SAFETY: the caller's guarantee: no other access overlaps this one and every earlier one
    // happens before it, so this is the value's only reference while it lives, as a guard's
    // would be.
    f(unsafe { &mut *m.data_ptr() })
}

/// Under loom, the access is recorded before the lock is taken (`loom_shim::Mutex::touch`), so
/// that the lock's own ordering cannot hide a race: loom fails a model in which this access is
/// not ordered by happens-before after every earlier access to the value.
///
/// # Safety
///
/// As the real one (nothing unsafe is done here).
#[cfg(feature = "loom")]
pub(crate) unsafe fn with_unlocked<T, R>(m: &Mutex<T>, f: impl FnOnce(&mut T) -> R) -> R {
    m.touch();
    f(&mut m.lock())
}

mod handoff;
pub(crate) use handoff::{Exclusive, HandoffCell, Shared};

/// Atomics that stay `std`'s under loom: process-wide counters in `static`s (loom's cannot be
/// built in a `static`), and the simulated device memory, whose `unsafe` byte-buffer cast
/// relies on `std::sync::atomic::AtomicU8` having `u8`'s layout (loom's does not); and the
/// lock of a run's manifest, shared by the run and the background writer thread, which live
/// outside every model. No model involves any of them.
pub(crate) mod unmodeled {
    pub(crate) use parking_lot::Mutex;
    pub(crate) use std::sync::atomic::{AtomicU64, AtomicU8};
}

/// `parking_lot`'s API over loom's std-like locks (poisoning cannot happen in a model that
/// does not panic; a timed wait is an untimed one, so a model never relies on a timeout).
#[cfg(feature = "loom")]
mod loom_shim {
    use std::ops::{Deref, DerefMut};
    use std::time::{Duration, Instant};

    /// A mutex with `parking_lot`'s `lock()`. Beside the lock, a loom cell that every access
    /// to the value touches (each lock taken, and `with_unlocked`): loom fails a model in
    /// which two of those accesses are not ordered by happens-before, so an access without
    /// the lock that can race another access shows.
    pub(crate) struct Mutex<T>(loom::sync::Mutex<T>, loom::cell::UnsafeCell<()>);

    // SAFETY: the lock is loom's `Mutex<T>`, `Sync` for `T: Send`; the cell beside it holds
    // `()`, which no access reads or writes (`touch` passes a closure that ignores its pointer):
    // loom's cell is only its access tracking, which is itself synchronised inside loom.
    unsafe impl<T: Send> Sync for Mutex<T> {}

    impl<T: Default> Default for Mutex<T> {
        fn default() -> Self {
            Mutex::new(T::default())
        }
    }

    impl<T> std::fmt::Debug for Mutex<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Mutex")
        }
    }

    /// Its guard; holds `None` only inside [`Condvar::wait_for`].
    pub(crate) struct MutexGuard<'a, T>(Option<loom::sync::MutexGuard<'a, T>>);

    impl<T> Mutex<T> {
        pub(crate) fn new(v: T) -> Self {
            Mutex(loom::sync::Mutex::new(v), loom::cell::UnsafeCell::new(()))
        }
        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            let g = self.0.lock().expect("no panics in a model");
            self.touch();
            MutexGuard(Some(g))
        }
        pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
            let g = self.0.try_lock().ok()?;
            self.touch();
            Some(MutexGuard(Some(g)))
        }
        /// Records an access to the value (loom's causality check, see the type's docs).
        pub(crate) fn touch(&self) {
            self.1.with_mut(|_| ());
        }
    }

    impl<T> Deref for MutexGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            self.0.as_ref().expect("guard held")
        }
    }
    impl<T> DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            self.0.as_mut().expect("guard held")
        }
    }

    /// A condition variable with `parking_lot`'s `wait_for`.
    #[derive(Debug, Default)]
    pub(crate) struct Condvar(loom::sync::Condvar);

    impl Condvar {
        pub(crate) fn new() -> Self {
            Condvar(loom::sync::Condvar::new())
        }
        pub(crate) fn wait_for<T>(&self, guard: &mut MutexGuard<'_, T>, _timeout: Duration) {
            let g = guard.0.take().expect("guard held");
            guard.0 = Some(self.0.wait(g).expect("no panics in a model"));
        }
        pub(crate) fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
            self.wait_for(guard, Duration::MAX);
        }
        pub(crate) fn wait_until<T>(&self, guard: &mut MutexGuard<'_, T>, _deadline: Instant) -> WaitResult {
            self.wait_for(guard, Duration::MAX);
            WaitResult
        }
        pub(crate) fn notify_one(&self) {
            self.0.notify_one();
        }
        pub(crate) fn notify_all(&self) {
            self.0.notify_all();
        }
    }

    /// The result of a timed wait: never timed out (waits are untimed in a model).
    pub(crate) struct WaitResult;

    impl WaitResult {
        pub(crate) fn timed_out(&self) -> bool {
            false
        }
    }

    /// A reader-writer lock with `parking_lot`'s `read()` / `write()`.
    #[derive(Debug, Default)]
    pub(crate) struct RwLock<T>(loom::sync::RwLock<T>);

    impl<T> RwLock<T> {
        pub(crate) fn read(&self) -> loom::sync::RwLockReadGuard<'_, T> {
            self.0.read().expect("no panics in a model")
        }
        pub(crate) fn write(&self) -> loom::sync::RwLockWriteGuard<'_, T> {
            self.0.write().expect("no panics in a model")
        }
    }
}
