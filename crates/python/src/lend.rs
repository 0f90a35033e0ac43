//! Lending a Rust borrow to Python objects for the duration of one call: the run's
//! `Orchestrator` to the orchestration function, a `KernelCtx` to a Python kernel.
//!
//! The Python object may outlive the call (a traceback or a list can keep it, and drop it on
//! any thread), so it holds the borrow as a pointer that is non-null only during the call and
//! usable only from the thread that lent it.

use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::thread::ThreadId;

use pyo3::prelude::*;

use crate::errors::SimplerError;

/// A lent `&mut T`; see the module docs.
pub struct Lent<T> {
    ptr: AtomicPtr<T>,
    /// The thread that lent it.
    owner: ThreadId,
    /// True while a call holds the borrow (no second one can start).
    busy: AtomicBool,
    /// What is lent and to which call, for the errors (`"orchestrator"`, `"orchestration
    /// function"`).
    what: &'static str,
    call: &'static str,
}

impl<T> Lent<T> {
    /// Lends `target`, on this thread, until the loan ends. The caller keeps the borrow that
    /// `target` comes from alive and unused until a [`Lending`] of this `Lent` is dropped.
    pub fn new(target: *mut T, what: &'static str, call: &'static str) -> Lent<T> {
        Lent {
            ptr: AtomicPtr::new(target),
            owner: std::thread::current().id(),
            busy: AtomicBool::new(false),
            what,
            call,
        }
    }

    /// Ends the loan: every later call raises.
    fn end(&self) {
        self.ptr.store(std::ptr::null_mut(), Ordering::Release);
    }

    /// Runs `f` on the lent value. `f` is plain Rust: the callers convert every Python value
    /// they need before, so no Python code (which could call back into the same object) runs
    /// while the value is borrowed.
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> PyResult<R> {
        let ptr = self.ptr.load(Ordering::Acquire);
        if ptr.is_null() {
            return Err(SimplerError::new_err(format!(
                "this {} belongs to {} that has returned; use it only inside it",
                self.what, self.call
            )));
        }
        if std::thread::current().id() != self.owner {
            return Err(SimplerError::new_err(format!(
                "the {} is used from another thread; use it only inside {}",
                self.what, self.call
            )));
        }
        if self.busy.swap(true, Ordering::Acquire) {
            return Err(SimplerError::new_err(format!(
                "the {} is already in use",
                self.what
            )));
        }
        // SAFETY: `ptr` comes from the `&mut T` that a `Lending` holds on this thread (`owner`,
        // checked above) for the whole call it wraps, and `Lending` ends the loan (nulls
        // `ptr`, on unwinding too) before that borrow ends; so while `ptr` is non-null the
        // pointee is alive and used by nothing but this thread's calls through this `Lent`.
        // `busy` makes a second `&mut` from this thread impossible while `f` runs, and `f`
        // runs no Python code that could try.
        let r = f(unsafe { &mut *ptr });
        self.busy.store(false, Ordering::Release);
        Ok(r)
    }
}

/// A loan in progress: ends the loan when dropped (at the end of the call, or on unwinding).
pub struct Lending<'a, T>(pub &'a Lent<T>);

impl<T> Drop for Lending<'_, T> {
    fn drop(&mut self) {
        self.0.end();
    }
}
