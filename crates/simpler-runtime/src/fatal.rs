//! Fatal errors: numbered codes, the first-wins latch, and the error a run returns.

use crate::sync::{AtomicU32, Ordering};
use std::fmt;

use crate::sync::Mutex;

/// Fatal codes, numbered as in the original runtime (orchestrator 1..11, scheduler 100+).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum FatalCode {
    /// A scope holds as many tasks as its ring's window allows.
    ScopeDeadlock = 1,
    /// The ring heap cannot fit an allocation and nothing can be reclaimed.
    HeapRingDeadlock = 2,
    /// The task window is full and nothing can be reclaimed.
    FlowControlDeadlock = 3,
    /// The dependency pool (fanout lists or fanin spill) is exhausted.
    DepPoolOverflow = 4,
    /// Invalid submit arguments.
    InvalidArgs = 5,
    /// `require_sync_start` with more blocks than cores can start at once.
    RequireSyncStartInvalid = 7,
    /// The orchestration reported a fatal itself.
    ExplicitOrchFatal = 9,
    /// The tensor map's entry pool is exhausted.
    TensorMapOverflow = 11,
    /// The run made no progress before its timeout.
    SchedulerTimeout = 100,
    /// A kernel returned an error or panicked.
    KernelFailed = 104,
    /// A runtime thread panicked outside the user's code (a scheduler thread outside any
    /// kernel, the orchestrator outside the orchestration function): a bug in `simpler`
    /// itself. Not one of the original's codes (its scheduler codes start at 100; this is the
    /// top of that range, away from the ones it uses). Without it such a run waited for its
    /// timeout and then reported SCHEDULER_TIMEOUT, blaming a kernel.
    InternalPanic = 199,
    /// A run thread (a scheduler or the orchestrator) could not be started, e.g. the process
    /// is at its limit of threads. Not one of the original's codes (next to INTERNAL_PANIC);
    /// before it, such a run panicked out of `Worker::run`.
    ThreadStartFailed = 198,
    /// The process was interrupted (SIGINT/SIGTERM) and the run stopped without producer-stop
    /// proof. Not one of the original's codes: its value is the shell's exit status for SIGINT.
    Interrupted = 130,
}

impl FatalCode {
    /// The numeric code.
    pub const fn code(self) -> u32 {
        self as u32
    }
    /// The upper-case name, e.g. `HEAP_RING_DEADLOCK`.
    pub const fn name(self) -> &'static str {
        match self {
            FatalCode::ScopeDeadlock => "SCOPE_DEADLOCK",
            FatalCode::HeapRingDeadlock => "HEAP_RING_DEADLOCK",
            FatalCode::FlowControlDeadlock => "FLOW_CONTROL_DEADLOCK",
            FatalCode::DepPoolOverflow => "DEP_POOL_OVERFLOW",
            FatalCode::InvalidArgs => "INVALID_ARGS",
            FatalCode::RequireSyncStartInvalid => "REQUIRE_SYNC_START_INVALID",
            FatalCode::ExplicitOrchFatal => "EXPLICIT_ORCH_FATAL",
            FatalCode::TensorMapOverflow => "TENSORMAP_OVERFLOW",
            FatalCode::SchedulerTimeout => "SCHEDULER_TIMEOUT",
            FatalCode::KernelFailed => "KERNEL_FAILED",
            FatalCode::InternalPanic => "INTERNAL_PANIC",
            FatalCode::ThreadStartFailed => "THREAD_START_FAILED",
            FatalCode::Interrupted => "INTERRUPTED",
        }
    }
    fn from_u32(v: u32) -> Option<FatalCode> {
        [
            FatalCode::ScopeDeadlock,
            FatalCode::HeapRingDeadlock,
            FatalCode::FlowControlDeadlock,
            FatalCode::DepPoolOverflow,
            FatalCode::InvalidArgs,
            FatalCode::RequireSyncStartInvalid,
            FatalCode::ExplicitOrchFatal,
            FatalCode::TensorMapOverflow,
            FatalCode::SchedulerTimeout,
            FatalCode::KernelFailed,
            FatalCode::InternalPanic,
            FatalCode::ThreadStartFailed,
            FatalCode::Interrupted,
        ]
        .into_iter()
        .find(|c| c.code() == v)
    }
}

/// A latched fatal: code plus the full human message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fatal {
    /// The code.
    pub code: FatalCode,
    /// What happened, where, and what to change.
    pub message: String,
    /// The facts of a resource fatal (SCOPE_DEADLOCK and the exhaustions 2, 3, 4, 11) as
    /// values, for callers that act on them (the Python binding's exception attributes);
    /// `None` for every other fatal. The message says the same in words.
    pub context: Option<FatalContext>,
}

/// What ran out, where, and which knob sizes it (see [`Fatal::context`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FatalContext {
    /// The resource: `"task_window"`, `"heap"`, `"dep_pool"`, `"fanin_spill"` or `"tensormap"`.
    pub resource: &'static str,
    /// The ring, for a per-ring resource (the tensor map is global).
    pub ring: Option<u8>,
    /// The resource's capacity (slots, bytes or entries).
    pub capacity: u64,
    /// The innermost open scope's site (`"<file>:<line>"`).
    pub site: String,
    /// The `runtime_env` key that sizes the resource, when one does.
    pub key: Option<&'static str>,
}

impl fmt::Display for Fatal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fatal {} ({}): {}",
            self.code.code(),
            self.code.name(),
            self.message
        )
    }
}

impl std::error::Error for Fatal {}

/// Returned by orchestration API calls once the run is fatal; the orchestration should stop
/// (`?` propagates it). The details are in the run's error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stopped(pub FatalCode);

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the run is stopped by fatal {} ({})",
            self.0.code(),
            self.0.name()
        )
    }
}

impl std::error::Error for Stopped {}

/// The text of a caught panic's payload (a `&str` or `String` message, as `panic!` makes).
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(non-string payload)".into())
}

/// First-wins latch for a run's fatal. Reading the code is one relaxed load.
#[derive(Default)]
pub struct FatalLatch {
    code: AtomicU32,
    detail: Mutex<Option<Fatal>>,
}

impl FatalLatch {
    /// Latches `code` with `message` unless a fatal is already latched; returns the code that
    /// is latched afterwards.
    #[cold]
    pub fn raise(&self, code: FatalCode, message: String) -> FatalCode {
        self.raise_with(code, message, None)
    }
    /// [`FatalLatch::raise`] with the facts of a resource fatal.
    #[cold]
    pub fn raise_with(&self, code: FatalCode, message: String, context: Option<FatalContext>) -> FatalCode {
        match self
            .code
            .compare_exchange(0, code.code(), Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => {
                *self.detail.lock() = Some(Fatal {
                    code,
                    message,
                    context,
                });
                code
            }
            Err(prev) => FatalCode::from_u32(prev).unwrap_or(code),
        }
    }
    /// The latched code, if any.
    #[inline]
    pub fn code(&self) -> Option<FatalCode> {
        match self.code.load(Ordering::Relaxed) {
            0 => None,
            v => FatalCode::from_u32(v),
        }
    }
    /// True once a fatal is latched.
    #[inline]
    pub fn is_set(&self) -> bool {
        self.code.load(Ordering::Relaxed) != 0
    }
    /// The latched fatal with its message (a bare code when the latching thread never got to
    /// store its message, e.g. it was abandoned in between).
    pub fn get(&self) -> Option<Fatal> {
        let code = self.code()?;
        Some(self.detail.lock().clone().unwrap_or(Fatal {
            code,
            message: "(no detail was recorded)".into(),
            context: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fatal_wins() {
        let l = FatalLatch::default();
        assert_eq!(l.code(), None);
        assert_eq!(
            l.raise(FatalCode::HeapRingDeadlock, "a".into()),
            FatalCode::HeapRingDeadlock
        );
        assert_eq!(
            l.raise(FatalCode::InvalidArgs, "b".into()),
            FatalCode::HeapRingDeadlock
        );
        assert_eq!(l.get().unwrap().message, "a");
        assert_eq!(l.code(), Some(FatalCode::HeapRingDeadlock));
    }
}
