//! Scheduler threads: pop ready tasks, run their kernels on virtual cores, complete them.
//!
//! Each scheduler thread owns a round-robin share of the clusters and runs the kernels of its
//! own virtual cores itself (virtual cores are multiplexed onto these threads). An SPMD task is
//! re-queued while blocks remain, so several threads can run its blocks at once. Dummy tasks
//! complete inline without a core. Idle threads spin briefly, then park on the run's
//! [`Sleep`](crate::sync::Sleep) until a task is pushed or the run ends.

mod dispatch;

use crate::sync::Ordering;
use std::sync::Arc;

use crate::shared::{AdvanceBatch, RunShared, PARK_TICK};

pub(crate) use dispatch::CoreCursor;

/// Rounds of `yield_now` an idle scheduler makes before it parks.
const IDLE_YIELDS: u32 = 64;

/// The body of one scheduler thread.
pub(crate) fn scheduler_loop(shared: Arc<RunShared>, thread_index: u32, thread_count: u32) {
    let mut cursor = CoreCursor::new(shared.platform, thread_index, thread_count);
    let mut scratch = Vec::new();
    let mut batch = AdvanceBatch::default();
    let mut probes = dispatch::ThreadProbes {
        lane: shared.swimlane.as_ref().map(|s| s.producer()),
        dump: shared.args_dump.as_ref().map(|s| s.producer()),
    };
    let mut idle = 0u32;
    loop {
        if shared.fatal.is_set() {
            break;
        }
        if let Some(task) = shared.pop_ready() {
            idle = 0;
            dispatch::execute(
                &shared,
                task,
                &mut cursor,
                &mut scratch,
                &mut batch,
                &mut probes,
                thread_index,
            );
            continue;
        }
        shared.flush_advances(&mut batch);
        if shared.finished() {
            break;
        }
        idle += 1;
        if idle < IDLE_YIELDS {
            std::thread::yield_now();
            continue;
        }
        shared
            .sched_sleep
            .sleep_unless(PARK_TICK, || shared.has_ready() || shared.finished());
    }
    drop(probes); // hands its last rows and records over
    shared.threads_exited.fetch_add(1, Ordering::AcqRel);
    shared.done_sleep.notify_all();
}
