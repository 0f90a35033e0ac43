//! Parking for idle threads: spin a little elsewhere, then sleep here until notified.
//!
//! Protocol (the classic "register, re-check, sleep"): a sleeper takes the lock, counts itself
//! in `sleepers`, re-checks its wake condition, and waits on the condvar. A notifier publishes
//! its work first, then issues a SeqCst fence and reads `sleepers`; only when someone sleeps
//! does it take the lock and notify. Either the notifier sees the sleeper (and wakes it under
//! the lock, after the sleeper is waiting), or the sleeper's re-check sees the work. A notify
//! with no sleeper costs one fence and one load.
//!
//! Every wait has a timeout, so no thread can sleep forever on a lost wake-up; the callers use
//! the timeout as their progress/deadlock tick.

use std::time::Duration;

use super::{fence, AtomicUsize, Condvar, Mutex, Ordering};

/// A place where idle threads park; see the module docs.
#[derive(Default)]
pub struct Sleep {
    lock: Mutex<()>,
    cv: Condvar,
    sleepers: AtomicUsize,
}

impl Sleep {
    /// A new, empty parking place.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parks until notified or `timeout` passes, unless `ready()` is already true after
    /// registering. Returns `ready()`'s value at the re-check.
    pub fn sleep_unless(&self, timeout: Duration, ready: impl Fn() -> bool) -> bool {
        let mut guard = self.lock.lock();
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        // Orders the registration before the re-check's loads (which need not be SeqCst), the
        // counterpart of the notifier's fence.
        fence(Ordering::SeqCst);
        let was_ready = ready();
        if !was_ready {
            self.cv.wait_for(&mut guard, timeout);
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        was_ready
    }

    /// Whether any thread is parked here right now (a hint: it may change at once).
    #[inline]
    pub fn has_sleepers(&self) -> bool {
        self.sleepers.load(Ordering::Relaxed) > 0
    }

    /// Wakes one sleeper, if any (call after publishing the work).
    #[inline]
    pub fn notify_one(&self) {
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            self.notify_one_cold();
        }
    }

    #[cold]
    fn notify_one_cold(&self) {
        let _g = self.lock.lock();
        self.cv.notify_one();
    }

    /// Wakes up to `n` sleepers (after publishing `n` units of work).
    #[inline]
    pub fn notify_many(&self, n: usize) {
        fence(Ordering::SeqCst);
        let sleeping = self.sleepers.load(Ordering::SeqCst);
        if sleeping > 0 && n > 0 {
            let _g = self.lock.lock();
            for _ in 0..n.min(sleeping) {
                self.cv.notify_one();
            }
        }
    }

    /// Wakes every sleeper (shutdown, fatal).
    pub fn notify_all(&self) {
        fence(Ordering::SeqCst);
        let _g = self.lock.lock();
        self.cv.notify_all();
    }
}

#[cfg(all(test, not(feature = "loom")))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn a_notify_after_publish_is_never_lost() {
        // Many rounds of publish-then-notify racing a sleeper; with a lost wake-up the sleeper
        // would sit out its full 10 s timeout and the total would blow past the bound below.
        for _ in 0..200 {
            let sleep = Arc::new(Sleep::new());
            let flag = Arc::new(AtomicBool::new(false));
            let (s2, f2) = (sleep.clone(), flag.clone());
            let t = std::thread::spawn(move || {
                let start = Instant::now();
                while !f2.load(Ordering::SeqCst) {
                    s2.sleep_unless(Duration::from_secs(10), || f2.load(Ordering::SeqCst));
                }
                start.elapsed()
            });
            flag.store(true, Ordering::SeqCst);
            sleep.notify_one();
            let waited = t.join().unwrap();
            assert!(waited < Duration::from_secs(5), "lost wake-up: waited {waited:?}");
        }
    }
}
