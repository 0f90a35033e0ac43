//! Scopes: the stack of open scopes, their sites and the tasks each one pins.

use simpler_core::MAX_RINGS;

use crate::config::RuntimeKind;
use crate::site::Site;
use crate::slot::SlotRef;

/// Maximum nesting depth of scopes (the root included).
pub const MAX_SCOPE_DEPTH: usize = 64;

/// How dependencies are found inside a scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeMode {
    /// Creator retention and tensor-map lookups, plus explicit deps.
    Auto,
    /// Explicit deps only.
    Manual,
}

/// A task pinned by the scope it was submitted in.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScopedTask {
    pub slot: SlotRef,
    pub local: u32,
}

/// One open scope.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScopeFrame {
    pub site: Site,
    pub ring: u8,
    /// Index of its first task in the scope-task stack.
    pub first_task: usize,
}

pub use crate::site::site_string;

/// The ring a scope at `depth` uses: `min(depth, 3)` under `tmr`, always 0 under `hbg`.
pub(crate) fn ring_for_depth(kind: RuntimeKind, depth: usize) -> u8 {
    match kind {
        RuntimeKind::Tmr => depth.min(MAX_RINGS - 1) as u8,
        RuntimeKind::Hbg => 0,
    }
}
