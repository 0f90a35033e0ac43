//! What a worker's runs in flight share with its Python kernels, which are registered once
//! and called by every later run: the context (`contextvars`) each kernel call runs in, and the
//! exceptions the kernels raise, kept until the run that failed on one chains it to its
//! `FatalError`.
//!
//! A kernel call cannot tell which run it belongs to (the runtime hands it only its arguments),
//! so with overlapping runs of one worker a kernel runs in the context of the latest run, and a
//! run takes the kept exception whose text its KERNEL_FAILED message ends with. Exceptions no
//! run took (a second failing block of a run already stopped) are dropped once no run is in
//! flight.

use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;

/// See the module docs.
#[derive(Default)]
pub struct Runs {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next: u64,
    /// Each run in flight and the context its kernels run in (a copy each call), latest last.
    active: Vec<(u64, Py<PyAny>)>,
    /// Exceptions of kernels, with the text their KernelError carried.
    raised: Vec<(String, PyErr)>,
}

/// A run in flight; it ends when dropped.
pub struct InFlight<'a> {
    runs: &'a Runs,
    token: u64,
}

impl Runs {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts a run whose kernels run in copies of `context` (a `contextvars.Context`).
    pub fn begin(&self, context: Py<PyAny>) -> InFlight<'_> {
        let mut inner = self.lock();
        inner.next += 1;
        let token = inner.next;
        inner.active.push((token, context));
        InFlight { runs: self, token }
    }

    /// True while a run is in flight.
    pub fn in_flight(&self) -> bool {
        !self.lock().active.is_empty()
    }

    /// The context a kernel call runs a copy of: the latest run's.
    pub fn context(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.lock().active.last().map(|(_, c)| c.clone_ref(py))
    }

    /// Keeps a kernel's exception, `text` being what its KernelError says.
    pub fn record(&self, text: String, err: PyErr) {
        self.lock().raised.push((text, err));
    }

    /// The kept exception whose text the fatal `message` ends with, if any.
    pub fn take(&self, message: &str) -> Option<PyErr> {
        let mut inner = self.lock();
        let i = inner
            .raised
            .iter()
            .position(|(t, _)| message.ends_with(t.as_str()))?;
        Some(inner.raised.remove(i).1)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let (context, dropped) = {
            let mut inner = self.runs.lock();
            let i = inner.active.iter().position(|(t, _)| *t == self.token);
            let context = i.map(|i| inner.active.remove(i));
            let dropped = match inner.active.is_empty() {
                true => std::mem::take(&mut inner.raised),
                false => Vec::new(),
            };
            (context, dropped)
        };
        // Dropped after the lock: releasing a Python object may run Python code.
        drop((context, dropped));
    }
}
