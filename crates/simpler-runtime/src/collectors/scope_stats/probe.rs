//! The device-side producer: one writer (the orchestrator thread), fixed-size records written
//! into the current buffer, buffers handed to the host through the bounded channel.

use crate::sync::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::RECORDS_PER_BUFFER;
use crate::collectors::channel::{BufferChannel, Producer, Records};

/// How long the producer waits for a free buffer or ready-queue room before it drops.
pub(crate) const BACKPRESSURE_WAIT: Duration = Duration::from_secs(2);

/// Begin or end of a scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Begin,
    End,
}

/// One sample: a fixed-size value (the site is a static pointer, not a string).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScopeRecord {
    pub site: crate::site::Site,
    pub phase: Phase,
    pub depth: u16,
    pub ring: u8,
    pub task_start: u32,
    pub task_end: u32,
    pub heap_start: u64,
    pub heap_end: u64,
    pub dep_start: u64,
    pub dep_end: u64,
    pub tensormap: u32,
}

/// A buffer of records stamped with the run and the producer's rotation counter.
pub(crate) struct RecordBuffer {
    pub records: Vec<ScopeRecord>,
    pub run_epoch: u64,
    pub seq: u32,
}

impl Records for RecordBuffer {
    fn count(&self) -> usize {
        self.records.len()
    }
    fn clear(&mut self) {
        self.records.clear();
    }
}

impl RecordBuffer {
    pub fn new() -> Self {
        RecordBuffer {
            records: Vec::with_capacity(RECORDS_PER_BUFFER),
            run_epoch: 0,
            seq: 0,
        }
    }
}

/// What the producer leaves behind; only read when its stop is proven.
pub(crate) struct ProducerFinal {
    pub total: u32,
    pub dropped: u32,
    pub fatal: bool,
    /// The buffer the producer still held (never handed over).
    pub held: Option<Box<RecordBuffer>>,
}

/// See the module docs.
pub(crate) struct ScopeStatsProducer {
    producer: Producer<RecordBuffer>,
    total: u32,
    dropped: u32,
    fatal: bool,
    run_epoch: u64,
    seq: Arc<AtomicU32>,
}

impl ScopeStatsProducer {
    pub fn new(
        channel: Arc<BufferChannel<RecordBuffer>>,
        run_epoch: u64,
        seq: Arc<AtomicU32>,
        saturate: bool,
        wait: Duration,
    ) -> Self {
        let start = if saturate { u32::MAX - 2 } else { 0 };
        ScopeStatsProducer {
            producer: Producer::new(channel, wait),
            total: start,
            dropped: 0,
            fatal: false,
            run_epoch,
            seq,
        }
    }

    /// Appends one record (drops and counts it when no buffer can be had in time).
    #[inline]
    pub fn record(&mut self, rec: ScopeRecord) {
        self.total = self.total.saturating_add(1);
        if self
            .producer
            .current()
            .is_some_and(|b| b.records.len() >= RECORDS_PER_BUFFER)
        {
            self.switch();
        }
        let (run_epoch, seq) = (self.run_epoch, &self.seq);
        let fresh = |b: &mut RecordBuffer| {
            b.run_epoch = run_epoch;
            b.seq = seq.fetch_add(1, Ordering::Relaxed);
        };
        match self.producer.buffer(fresh) {
            Some(b) => b.records.push(rec),
            None => self.dropped = self.dropped.saturating_add(1),
        }
    }

    /// Hands the current buffer over; on refusal its records are dropped and the buffer kept.
    fn switch(&mut self) {
        let lost = self.producer.hand_over();
        self.dropped = self.dropped.saturating_add(lost as u32);
    }

    /// A fatal: latch it and flush what was recorded.
    pub fn on_fatal(&mut self) {
        self.fatal = true;
        self.flush();
    }

    /// The orchestration returned (spec §4.5 "orch exit: flush remaining buffers"): hand the
    /// partial buffer over, so the host owns every sample even if execution never finishes.
    /// A refused hand-over is dropped and counted, as for a full buffer.
    pub fn on_exit(&mut self) {
        self.flush();
    }

    fn flush(&mut self) {
        if self.producer.current().is_some_and(|b| !b.records.is_empty()) {
            self.switch();
        }
    }

    /// The final state, handed to the host with the producer-stop proof.
    pub fn finish(self) -> ProducerFinal {
        ProducerFinal {
            total: self.total,
            dropped: self.dropped,
            fatal: self.fatal,
            held: self.producer.into_held(),
        }
    }
}
