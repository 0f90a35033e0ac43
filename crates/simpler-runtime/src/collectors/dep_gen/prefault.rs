//! The replay's tensor maps, faulted in ahead of it on a thread of their own.
//!
//! The replay's two maps never retire anything (`replay.rs`), so every registered output of
//! the trace adds an entry and a packed view to each: about 240 bytes of fresh memory a
//! 4-argument record, whose pages the kernel zeroed on the replay's thread one page fault at a
//! time as the maps grew into them: with those pages made resident before the replay ran, it
//! read 3.7–3.9 M records/s against 2.9–3.0. So the replay
//! publishes where each map writes next ([`MapPrefault::publish`], once per buffer of
//! records) and this thread faults in the next megabyte of each
//! ([`Frontiers::fault_ahead`](crate::ring::frontiers::Frontiers::fault_ahead), the same
//! mechanism as an `hbg` build's prefault thread), parking until the next publication.
//! Faulting pages in changes no byte of memory, so a stale range costs only the call. The
//! replay alone went from 2.84–2.96 to 3.40–3.57 M records/s (`docs/performance.md`, item 90).

use std::ops::Range;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::ring::frontiers::Frontiers;
use crate::sync::{AtomicBool, AtomicU64, Ordering, Sleep};

/// Storages faulted in: each of the two maps' entries and view column
/// ([`simpler_core::TensorMap::unwritten_storage`]).
pub(crate) const MAP_STORAGES: usize = 4;

/// The longest park before the thread re-checks whether to stop.
const TICK: Duration = Duration::from_millis(20);

/// What the replay and the thread share.
#[derive(Default)]
struct Shared {
    frontiers: Frontiers<MAP_STORAGES>,
    /// Publications so far: the thread works once per new one.
    published: AtomicU64,
    stop: AtomicBool,
    sleep: Sleep,
}

/// The faulting thread and what it reads; stopped and joined when dropped.
pub(crate) struct MapPrefault {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl MapPrefault {
    /// Starts the thread; `None` when it cannot be started (the replay then faults its pages
    /// in itself, as before).
    pub fn spawn() -> Option<MapPrefault> {
        let shared = Arc::new(Shared::default());
        let theirs = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("simpler-dg-fault".into())
            .spawn(move || fault_ahead_until_stopped(&theirs))
            .ok()?;
        Some(MapPrefault {
            shared,
            thread: Some(thread),
        })
    }

    /// Replay: where each map storage writes next (its unused capacity), for the thread to
    /// fault in ahead.
    pub fn publish(&self, ranges: [Range<usize>; MAP_STORAGES]) {
        self.shared.frontiers.publish(ranges);
        self.shared.published.fetch_add(1, Ordering::Release);
        self.shared.sleep.notify_one();
    }
}

impl Drop for MapPrefault {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.sleep.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The thread's body: after each publication, faults in what it newly covers; parks between.
fn fault_ahead_until_stopped(shared: &Shared) {
    let mut done = [0; MAP_STORAGES];
    let mut seen = 0;
    while !shared.stop.load(Ordering::Acquire) {
        let now = shared.published.load(Ordering::Acquire);
        if now != seen {
            seen = now;
            shared.frontiers.fault_ahead(&mut done);
            continue;
        }
        shared.sleep.sleep_unless(TICK, || {
            shared.stop.load(Ordering::Acquire) || shared.published.load(Ordering::Acquire) != seen
        });
    }
}

#[cfg(all(test, target_os = "linux", not(feature = "loom")))]
mod tests {
    use super::*;
    use crate::ring::frontiers::tests::Fresh;
    use crate::ring::frontiers::AHEAD_BYTES;
    use std::time::Instant;

    /// A publication gets the storage's next megabyte faulted in by the thread, and no more;
    /// a storage published empty gets nothing; dropping the prefaulter stops and joins the
    /// thread.
    #[test]
    fn a_published_frontier_is_faulted_in_by_the_thread() {
        let m = Fresh::new(4 << 20);
        assert_eq!(m.resident_pages(), 0, "fresh memory is not resident");
        let p = MapPrefault::spawn().expect("the thread starts");
        p.publish([0..0, m.addr..m.addr + m.len, 0..0, 0..0]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while m.resident_pages() < AHEAD_BYTES / 4096 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(p);
        assert_eq!(
            m.resident_pages(),
            AHEAD_BYTES / 4096,
            "the next megabyte, no more"
        );
    }
}
