//! Loom models of the runtime's concurrent protocols: every interleaving (up to the preemption
//! bound) of a few threads is explored, with the real code built on loom's primitives
//! (`crate::sync` under the `loom` feature). A timed wait is untimed here, so a lost wake-up
//! shows as a deadlock, never as a slow test.
//!
//! Run: `cargo test -p simpler-runtime --features loom --lib loom_models` (`scripts/test.sh`
//! does). Bounded to keep the suite fast: 2–3 threads, preemption bound 3.
//!
//! What the models do not cover: the ready queues (crossbeam's `SegQueue`) and the collectors'
//! free queues (`ArrayQueue`) use std atomics loom cannot see, so a queue operation is one
//! indivisible step here and the
//! channel model checks the parking and closing around the queues, not the queues; a timed wait
//! never times out here, so the path where a wait returns on its tick with nothing to do is not
//! explored (every caller re-checks its condition in a loop, which the tests exercise).

use std::time::Duration;

use loom::sync::Arc;
use loom::thread;

use super::{AtomicBool, Ordering, Sleep};
use crate::collectors::channel::{BufferChannel, ChannelFaults};
use crate::ring::shared::RingShared;
use crate::slot::TaskState;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

/// "Register, re-check, sleep" against "publish, fence, notify": the sleeper always wakes.
#[test]
fn sleep_never_loses_a_notify() {
    model(|| {
        let sleep = Arc::new(Sleep::new());
        let flag = Arc::new(AtomicBool::new(false));
        let (s2, f2) = (sleep.clone(), flag.clone());
        let sleeper = thread::spawn(move || {
            while !f2.load(Ordering::SeqCst) {
                s2.sleep_unless(Duration::from_secs(3600), || f2.load(Ordering::SeqCst));
            }
        });
        flag.store(true, Ordering::SeqCst);
        sleep.notify_one();
        sleeper.join().unwrap();
    });
}

/// A producer with one buffer publishes two (the second waits for the recycle), then closes;
/// the collector receives both, in order, and then sees the end.
#[test]
fn buffer_channel_delivers_everything_then_ends() {
    model(|| {
        let ch = Arc::new(BufferChannel::new(vec![Box::new(0u32)], ChannelFaults::default()));
        let producer = {
            let ch = ch.clone();
            thread::spawn(move || {
                for v in [1u32, 2] {
                    let mut b = ch
                        .acquire(Duration::from_secs(3600))
                        .expect("a buffer comes back");
                    *b = v;
                    ch.publish(b, Duration::from_secs(3600)).expect("room on ready");
                }
                ch.close();
            })
        };
        let mut got = Vec::new();
        while let Some(b) = ch.take() {
            got.push(*b);
            ch.recycle(b);
        }
        producer.join().unwrap();
        assert_eq!(got, [1, 2]);
    });
}

/// Two threads consume adjacent head tasks and advance the ring at once: whichever loses the
/// try-lock leaves the pending flag, and the ring ends past both.
#[test]
fn ring_advance_is_never_lost() {
    model(|| {
        let ring = Arc::new(RingShared::new(4, 1, true));
        let consume = |ring: Arc<RingShared>, local: u32| {
            move || {
                {
                    let mut fan = ring.slot_of(local).fan.lock();
                    fan.local = local;
                    fan.state = TaskState::Consumed;
                }
                ring.advance();
            }
        };
        let a = thread::spawn(consume(ring.clone(), 0));
        let b = thread::spawn(consume(ring.clone(), 1));
        a.join().unwrap();
        b.join().unwrap();
        assert_eq!(ring.last_alive.load(Ordering::Acquire), 2);
    });
}
