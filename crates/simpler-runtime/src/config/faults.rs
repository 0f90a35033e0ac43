//! Test-only fault injection for the diagnostics, carried by [`CallConfig`](super::CallConfig).

use std::time::Duration;

/// Test-only fault injection for the diagnostics paths. Not a user-facing option: it exists so
/// that every close path and verdict can be driven by a test.
#[doc(hidden)]
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// The ready queue refuses every buffer (records are dropped and counted).
    pub refuse_ready: bool,
    /// The free queue never yields a buffer (records are dropped and counted).
    pub starve_free: bool,
    /// Host storage keeps at most this many records of a run and refuses the rest.
    pub host_storage_limit: Option<u64>,
    /// Producer counters start two below `u32::MAX`, so they saturate.
    pub saturate_counters: bool,
    /// Overrides how long run threads get to stop after a timeout before they are abandoned.
    pub abandon_grace: Option<Duration>,
    /// Overrides the producer's back-pressure wait for a buffer.
    pub backpressure_wait: Option<Duration>,
    /// dep_gen: the orchestrator does not flush its last buffer.
    pub skip_dep_gen_flush: bool,
    /// dep_gen: the replay's check loses one producer the graph wrote for the first record that
    /// has any (so the oracle and the annotated graph disagree).
    pub corrupt_dep_gen_annotation: bool,
    /// dep_gen: the host receives and counts buffers but does not replay them (measures the
    /// capture alone).
    pub skip_dep_gen_replay: bool,
    /// dep_gen: slots per capture buffer (to exercise truncation with small buffers).
    pub dep_gen_slots_per_buffer: Option<usize>,
    /// args_dump: payload bytes per buffer (to exercise truncation with small buffers).
    pub args_dump_buffer_bytes: Option<usize>,
    /// A scheduler thread panics outside any kernel after it ran its first task (an internal
    /// error, which stops the run with INTERNAL_PANIC).
    pub panic_in_scheduler: bool,
    /// The orchestrator panics after the orchestration function returned, before it closes
    /// the root scope (an internal error, which stops the run with INTERNAL_PANIC).
    pub panic_in_orchestrator: bool,
    /// `alloc_tensors` panics inside the runtime, called by the orchestration function (an
    /// internal error, which stops the run with INTERNAL_PANIC, not EXPLICIT_ORCH_FATAL).
    pub panic_in_alloc_tensors: bool,
    /// The run thread of this name (`simpler-sched-N`, `simpler-orch`, `simpler-prefault`)
    /// cannot start, as when the process is at its limit of threads.
    pub refuse_thread_start: Option<String>,
}
