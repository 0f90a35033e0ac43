//! The process-wide interrupt request: set by the CLI's SIGINT/SIGTERM handler, read by every
//! publish (a write in progress stops and removes its temporary) and by runs configured to stop
//! on it (`CallConfig::stop_on_interrupt`).
//!
//! One flag for the process, because a signal is one event for the process. Library users that
//! never call [`request`] never see it set.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicU32 = AtomicU32::new(0);

/// Records an interrupt request; returns how many have been made so far (1 on the first).
pub fn request() -> u32 {
    REQUESTED.store(true, Ordering::SeqCst);
    SIGNALS.fetch_add(1, Ordering::SeqCst) + 1
}

/// How many interrupts were requested so far.
pub fn count() -> u32 {
    SIGNALS.load(Ordering::SeqCst)
}

/// True once an interrupt was requested.
#[inline]
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// The error a write returns when it stops for an interrupt.
pub fn error() -> std::io::Error {
    std::io::Error::other(Interrupted)
}

/// True when `e` (or what it wraps) is the interrupt error of [`error`].
pub fn is_interrupt(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Interrupted>())
}

/// The payload of [`error`]: a write stopped because the process was interrupted.
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}
