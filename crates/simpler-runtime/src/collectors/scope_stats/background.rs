//! Background mode (`Worker::set_collect_across_runs(true)`): rendering and writing move to one
//! writer thread per worker, so `run()` can return before the file exists;
//! `Worker::flush_diagnostics()` is the barrier that publishes everything so far.
//!
//! Rules:
//! * at most two runs may be unpublished; a third run with scope stats is refused before it
//!   starts;
//! * a file already at the destination is never overwritten: that run's publication fails;
//! * loss, a fatal, unknown counts, a write failure or an unproven close make every later
//!   flush fail, for the worker's life (sticky), with a summary;
//! * an unproven close writes nothing and quarantines: later runs with scope stats are refused.

use std::collections::VecDeque;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::sync::{Condvar, Mutex};
use simpler_artifacts::scope_stats::CollectionVerdict;

use super::export::ExportJob;
use crate::collectors::{DiagnosticsError, DiagnosticsErrorKind};

/// Unpublished runs a worker may hold at once.
pub const MAX_UNPUBLISHED: usize = 2;

#[derive(Default)]
struct State {
    queue: VecDeque<ExportJob>,
    busy: bool,
    unpublished: usize,
    quarantine: Option<String>,
    published: u64,
    partial: u64,
    cut_unknown: u64,
    write_failed: u64,
    quarantined: u64,
    first_failure: Option<String>,
    hold: bool,
    shutdown: bool,
}

impl State {
    fn failed(&self) -> bool {
        self.partial + self.cut_unknown + self.write_failed + self.quarantined > 0
    }
    fn report(&self) -> String {
        let mut s = format!(
            "scope stats: published={} partial={} cut_unknown={} write_failed={} quarantined={}",
            self.published, self.partial, self.cut_unknown, self.write_failed, self.quarantined
        );
        if let Some(f) = &self.first_failure {
            s.push_str("; first failure: ");
            s.push_str(f);
        }
        s
    }
    fn fail(&mut self, what: String) {
        self.first_failure.get_or_insert(what);
    }
}

struct Inner {
    state: Mutex<State>,
    cv: Condvar,
}

/// See the module docs.
pub(crate) struct BackgroundWriter {
    inner: Arc<Inner>,
    thread: Option<JoinHandle<()>>,
}

impl BackgroundWriter {
    pub fn new() -> BackgroundWriter {
        let inner = Arc::new(Inner {
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
        });
        let i2 = inner.clone();
        let thread = std::thread::Builder::new()
            .name("simpler-scope-stats-writer".into())
            .spawn(move || writer_loop(&i2))
            .expect("spawning the background writer");
        BackgroundWriter {
            inner,
            thread: Some(thread),
        }
    }

    /// Reserves a publication slot for a run about to start, or says why it is refused.
    pub fn admit(&self) -> Result<(), DiagnosticsError> {
        let mut st = self.inner.state.lock();
        if let Some(q) = &st.quarantine {
            return Err(DiagnosticsError::new(
                DiagnosticsErrorKind::Quarantined,
                format!("scope stats are quarantined for this worker's life: {q}"),
            ));
        }
        if st.unpublished >= MAX_UNPUBLISHED {
            return Err(DiagnosticsError::new(
                DiagnosticsErrorKind::Backlog {
                    unpublished: st.unpublished,
                },
                format!(
                    "{MAX_UNPUBLISHED} runs' scope stats are not yet published; call Worker::flush_diagnostics() first"
                ),
            ));
        }
        st.unpublished += 1;
        Ok(())
    }

    /// Queues a proven run's export (its slot was reserved at admission).
    pub fn submit(&self, job: ExportJob) {
        let mut st = self.inner.state.lock();
        st.queue.push_back(job);
        self.inner.cv.notify_all();
    }

    /// Records an unproven close: nothing is written, later scope-stats runs are refused.
    pub fn quarantine(&self, run_epoch: u64, detail: &str) {
        let mut st = self.inner.state.lock();
        st.unpublished = st.unpublished.saturating_sub(1);
        st.quarantined += 1;
        st.quarantine.get_or_insert_with(|| detail.to_string());
        st.fail(format!("run {run_epoch} (quarantined): {detail}"));
        self.inner.cv.notify_all();
    }

    /// Waits until everything queued is published; fails (stickily) if anything ever failed.
    pub fn flush(&self, timeout: Duration) -> Result<(), DiagnosticsError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.inner.state.lock();
        if st.quarantine.is_some() {
            return Err(DiagnosticsError::new(
                DiagnosticsErrorKind::Quarantined,
                st.report(),
            ));
        }
        while !st.queue.is_empty() || st.busy {
            if self.inner.cv.wait_until(&mut st, deadline).timed_out() {
                return Err(DiagnosticsError::new(
                    DiagnosticsErrorKind::Timeout,
                    format!("publication did not finish within {timeout:?}; {}", st.report()),
                ));
            }
        }
        if st.failed() {
            Err(DiagnosticsError::new(DiagnosticsErrorKind::Failed, st.report()))
        } else {
            Ok(())
        }
    }

    /// Test-only: hold (or release) the writer thread.
    pub fn set_hold(&self, hold: bool) {
        self.inner.state.lock().hold = hold;
        self.inner.cv.notify_all();
    }
}

impl Drop for BackgroundWriter {
    fn drop(&mut self) {
        {
            let mut st = self.inner.state.lock();
            st.shutdown = true;
            st.hold = false;
        }
        self.inner.cv.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn writer_loop(inner: &Inner) {
    loop {
        let mut job = {
            let mut st = inner.state.lock();
            loop {
                if !st.hold {
                    if let Some(job) = st.queue.pop_front() {
                        st.busy = true;
                        break job;
                    }
                    if st.shutdown {
                        return;
                    }
                }
                inner.cv.wait(&mut st);
            }
        };
        let result = job.publish(false);
        // The run's run.json says what became of the file (it said `withheld`, queued), and
        // the folder stays claimed until here (`PendingManifest`).
        let recorded = job
            .manifest
            .as_ref()
            .map(|m| m.record(job.published_entry(&m.path(), &result)));
        // The claim goes before the run counts as published: `flush_diagnostics` returns once
        // it does, and its caller may claim the folder at once (found under load: the job,
        // dropped at the end of this loop, still held the folder when the next run came).
        drop(job.manifest.take());
        let mut st = inner.state.lock();
        if let Some(Err(e)) = recorded {
            st.fail(format!("run {} (run.json): {e}", job.run_epoch));
        }
        st.busy = false;
        st.unpublished = st.unpublished.saturating_sub(1);
        match result {
            Ok((path, _)) => match &job.verdict {
                CollectionVerdict::Published => st.published += 1,
                v => {
                    if *v == CollectionVerdict::PartialSafe {
                        st.partial += 1;
                    } else {
                        st.cut_unknown += 1;
                    }
                    st.fail(format!(
                        "run {} ({}): {}",
                        job.run_epoch,
                        v.as_str(),
                        path.display()
                    ));
                }
            },
            Err(e) => {
                st.write_failed += 1;
                st.fail(format!("run {} (write_failed): {e}", job.run_epoch));
            }
        }
        inner.cv.notify_all();
    }
}
