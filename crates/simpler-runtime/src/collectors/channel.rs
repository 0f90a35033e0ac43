//! The bounded hand-off between a device-side producer and its host collector: a fixed pool
//! of buffers circulating through a free queue and a ready queue.
//!
//! The producer takes an empty buffer from `free`, fills it, and publishes it on `ready`; the
//! collector drains `ready`, writes the records out, and recycles the buffer into `free`. Host
//! memory for a collection is therefore bounded by the pool, whatever the run length. Both
//! waits are bounded: a producer that finds no free buffer (or a full ready queue) parks for at
//! most its back-pressure budget, then drops and counts.

use crate::sync::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;

use crate::sync::Sleep;

/// Park tick of the collector and of a producer waiting for a buffer.
const TICK: Duration = Duration::from_millis(5);

/// Test-only faults of one channel.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ChannelFaults {
    /// The ready queue refuses every buffer.
    pub refuse_ready: bool,
    /// The free queue never yields a buffer.
    pub starve_free: bool,
}

/// See the module docs.
pub(crate) struct BufferChannel<B> {
    free: ArrayQueue<Box<B>>,
    ready: ArrayQueue<Box<B>>,
    producer_sleep: Sleep,
    consumer_sleep: Sleep,
    closed: AtomicBool,
    faults: ChannelFaults,
}

impl<B> BufferChannel<B> {
    /// A channel whose free queue holds `buffers`.
    pub fn new(buffers: Vec<Box<B>>, faults: ChannelFaults) -> Self {
        let n = buffers.len().max(1);
        let free = ArrayQueue::new(n);
        for b in buffers {
            let _ = free.push(b);
        }
        BufferChannel {
            free,
            ready: ArrayQueue::new(n),
            producer_sleep: Sleep::new(),
            consumer_sleep: Sleep::new(),
            closed: AtomicBool::new(false),
            faults,
        }
    }

    /// Producer: an empty buffer, waiting at most `budget` for one.
    pub fn acquire(&self, budget: Duration) -> Option<Box<B>> {
        if self.faults.starve_free {
            return None;
        }
        let deadline = Instant::now() + budget;
        loop {
            if let Some(b) = self.free.pop() {
                return Some(b);
            }
            let now = Instant::now();
            if now >= deadline || self.closed.load(Ordering::Acquire) {
                return None;
            }
            self.producer_sleep
                .sleep_unless((deadline - now).min(TICK), || !self.free.is_empty());
        }
    }

    /// Producer: hands a full buffer to the collector, waiting at most `budget` for room;
    /// gives the buffer back when the ready queue stays full.
    pub fn publish(&self, mut b: Box<B>, budget: Duration) -> Result<(), Box<B>> {
        if self.faults.refuse_ready {
            return Err(b);
        }
        let deadline = Instant::now() + budget;
        loop {
            match self.ready.push(b) {
                Ok(()) => {
                    self.consumer_sleep.notify_one();
                    return Ok(());
                }
                Err(back) => b = back,
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(b);
            }
            self.producer_sleep
                .sleep_unless((deadline - now).min(TICK), || !self.ready.is_full());
        }
    }

    /// Collector: the next published buffer, parking until one arrives or the channel closes.
    /// `None` once closed and drained.
    pub fn take(&self) -> Option<Box<B>> {
        loop {
            if let Some(b) = self.ready.pop() {
                self.producer_sleep.notify_one();
                return Some(b);
            }
            if self.closed.load(Ordering::Acquire) {
                return self.ready.pop();
            }
            self.consumer_sleep.sleep_unless(TICK, || {
                !self.ready.is_empty() || self.closed.load(Ordering::Acquire)
            });
        }
    }

    /// Collector: returns a drained buffer to the free queue.
    pub fn recycle(&self, b: Box<B>) {
        let _ = self.free.push(b);
        self.producer_sleep.notify_one();
    }

    /// Ends collection: the collector drains what was published, then `take` returns `None`.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.consumer_sleep.notify_all();
        self.producer_sleep.notify_all();
    }
}

/// A buffer of records a [`Producer`] fills.
pub(crate) trait Records {
    /// Records in the buffer.
    fn count(&self) -> usize;
    /// Empties the buffer for reuse.
    fn clear(&mut self);
}

/// The device side of a channel, one per producing thread: the buffer being filled, taken from
/// the free queue when needed and handed to the collector when full. Every collector's producer
/// is built on it; what a record is and when a buffer is full stay with the collector.
pub(crate) struct Producer<B> {
    channel: std::sync::Arc<BufferChannel<B>>,
    current: Option<Box<B>>,
    wait: Duration,
}

impl<B: Records> Producer<B> {
    /// A producer on `channel` that waits at most `wait` for a buffer or for room to hand one over.
    pub fn new(channel: std::sync::Arc<BufferChannel<B>>, wait: Duration) -> Self {
        Producer {
            channel,
            current: None,
            wait,
        }
    }

    /// The buffer being filled, if any (without taking one).
    #[inline]
    pub fn current(&self) -> Option<&B> {
        self.current.as_deref()
    }

    /// The buffer to append to: the current one, or a fresh one from the free queue (cleared,
    /// then prepared by `fresh`). `None` when no buffer can be had in time: the caller drops the
    /// record and counts it.
    #[inline]
    pub fn buffer(&mut self, fresh: impl FnOnce(&mut B)) -> Option<&mut B> {
        if self.current.is_none() {
            self.current = self.channel.acquire(self.wait).map(|mut b| {
                b.clear();
                fresh(&mut b);
                b
            });
        }
        self.current.as_deref_mut()
    }

    /// Hands the current buffer to the collector. When the ready queue stays full its records
    /// are dropped and the emptied buffer is kept; returns how many records were dropped.
    pub fn hand_over(&mut self) -> usize {
        let Some(b) = self.current.take() else { return 0 };
        match self.channel.publish(b, self.wait) {
            Ok(()) => 0,
            Err(mut b) => {
                let lost = b.count();
                b.clear();
                self.current = Some(b);
                lost
            }
        }
    }

    /// The buffer still held with records in it, for a proven close to recover.
    pub fn into_held(mut self) -> Option<Box<B>> {
        self.current.take().filter(|b| b.count() > 0)
    }

    /// Returns an empty held buffer to the free queue (a producer that is done).
    pub fn release_empty(&mut self) {
        if let Some(b) = self.current.take_if(|b| b.count() == 0) {
            self.channel.recycle(b);
        }
    }
}

/// A host collector thread: drains a channel's ready buffers into a state `S` while the run goes
/// on, recycling each buffer; [`CollectorThread::stop`] closes the channel, lets the thread drain
/// what was already handed over, and returns the state. Every diagnostic's host side is one of
/// these.
pub(crate) struct CollectorThread<B, S> {
    channel: std::sync::Arc<BufferChannel<B>>,
    thread: std::thread::JoinHandle<S>,
}

impl<B: Send + Sync + 'static, S: Send + 'static> CollectorThread<B, S> {
    /// Starts thread `name`: `init` builds the state on the thread, `consume` takes each buffer.
    pub fn spawn(
        name: &str,
        channel: std::sync::Arc<BufferChannel<B>>,
        init: impl FnOnce() -> S + Send + 'static,
        mut consume: impl FnMut(&mut S, &B) + Send + 'static,
    ) -> Self {
        let ch = channel.clone();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut state = init();
                while let Some(buf) = ch.take() {
                    consume(&mut state, &buf);
                    ch.recycle(buf);
                }
                state
            })
            .expect("spawning a collector thread");
        CollectorThread { channel, thread }
    }

    /// Stops chasing publications, drains what the host already owns and joins the thread.
    pub fn stop(self) -> S {
        self.channel.close();
        self.thread.join().expect("a collector thread does not panic")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn every_published_buffer_is_taken_exactly_once() {
        let ch = Arc::new(BufferChannel::new(
            (0..4).map(|_| Box::new(0u64)).collect(),
            ChannelFaults::default(),
        ));
        let c2 = ch.clone();
        let consumer = std::thread::spawn(move || {
            let mut sum = 0u64;
            let mut n = 0;
            while let Some(b) = c2.take() {
                sum += *b;
                n += 1;
                c2.recycle(b);
            }
            (n, sum)
        });
        let mut expect = 0;
        for i in 1..=10_000u64 {
            let mut b = ch.acquire(Duration::from_secs(10)).expect("a buffer comes back");
            *b = i;
            expect += i;
            ch.publish(b, Duration::from_secs(10)).map_err(|_| ()).unwrap();
        }
        ch.close();
        assert_eq!(consumer.join().unwrap(), (10_000, expect));
    }

    #[test]
    fn faults_refuse_and_starve() {
        let ch = BufferChannel::new(
            vec![Box::new(1u8)],
            ChannelFaults {
                refuse_ready: true,
                starve_free: false,
            },
        );
        let b = ch.acquire(Duration::ZERO).unwrap();
        assert!(
            ch.publish(b, Duration::from_secs(5)).is_err(),
            "refused without waiting"
        );
        let ch = BufferChannel::new(
            vec![Box::new(1u8)],
            ChannelFaults {
                refuse_ready: false,
                starve_free: true,
            },
        );
        assert!(ch.acquire(Duration::from_secs(5)).is_none());
    }
}
