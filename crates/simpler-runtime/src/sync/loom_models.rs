//! Loom models of the runtime's concurrent protocols: every interleaving (up to the preemption
//! bound) of a few threads is explored, with the real code built on loom's primitives
//! (`crate::sync` under the `loom` feature). A timed wait is untimed here, so a lost wake-up
//! shows as a deadlock, never as a slow test.
//!
//! Run: `cargo test -p simpler-runtime --features loom --lib loom_models` (`scripts/test.sh`
//! does). Bounded to keep the suite fast: 2–3 threads, preemption bound 3.
//!
//! What the models do not cover: the ready queues' `SegQueue`s (crossbeam's; the orchestrator's
//! publication ring beside them is modelled) and the collectors'
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
use crate::orchestrator::scope_release::ScopeReleases;
use crate::ring::shared::RingShared;
use crate::slot::{Slot, SlotRef, TaskState, SCOPE_BIT};

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

/// Consumes task `local` of `ring` (its fan as a completion leaves it), then advances.
fn consume_and_advance(ring: Arc<RingShared>, local: u32) -> impl FnOnce() {
    move || {
        {
            let slot = ring.slot_of(local);
            let mut fan = slot.fan.lock();
            fan.local = local;
            fan.state = TaskState::Completed;
            slot.consume(&mut fan, ring.mask + 1);
        }
        ring.advance();
    }
}

/// Two threads consume adjacent head tasks and advance the ring at once: whichever finds the
/// other walking leaves its pending bit, and the ring ends past both. (With the walk reading
/// each slot's consumed id without its fan lock, a try-lock beside a separate pending flag
/// failed this model: the walker could miss the second slot and the flag.)
#[test]
fn ring_advance_is_never_lost() {
    model(|| {
        let ring = Arc::new(RingShared::new(4, 1, true));
        let a = thread::spawn(consume_and_advance(ring.clone(), 0));
        let b = thread::spawn(consume_and_advance(ring.clone(), 1));
        a.join().unwrap();
        b.join().unwrap();
        assert_eq!(ring.last_alive.load(Ordering::Acquire), 2);
    });
}

/// The same with a third thread and the head consumed last: announcements that find nobody
/// walking, and a walker that stops, never strand a consumed slot.
#[test]
fn ring_advance_is_never_lost_with_three_threads() {
    model(|| {
        let ring = Arc::new(RingShared::new(4, 1, true));
        let b = thread::spawn(consume_and_advance(ring.clone(), 1));
        let c = thread::spawn(consume_and_advance(ring.clone(), 2));
        consume_and_advance(ring.clone(), 0)();
        b.join().unwrap();
        c.join().unwrap();
        assert_eq!(ring.last_alive.load(Ordering::Acquire), 3);
    });
}

/// Completes the task in `slots[p]` as `RunShared::complete` does: COMPLETED and its consumer
/// list taken under its fan lock, then each consumer counted down. How many it readied.
fn complete_producer(slots: &[Slot], p: usize) -> u32 {
    let consumers = {
        let mut fan = slots[p].fan.lock();
        fan.state = TaskState::Completed;
        std::mem::take(&mut fan.consumers)
    };
    (consumers.iter())
        .filter(|c| slots[c.index as usize].producer_completed())
        .count() as u32
}

/// A task whose slot last held another task (its count-down at 0) is linked to two producers while
/// both complete, as `LiveSink::edge` links and `RunShared::complete` readies: whatever the
/// order, it is made ready exactly once, by the orchestrator's final count or by the last
/// completion, and never before that count.
#[test]
fn a_task_linked_while_its_producers_complete_is_ready_exactly_once() {
    model(|| {
        let slots: Arc<Vec<Slot>> = Arc::new((0..3).map(|i| Slot::new(i, 4)).collect());
        const CONSUMER: u32 = 2;
        // As the slot's last task left it (ready: no count-down to go).
        slots[CONSUMER as usize].fanin_pending.store(0, Ordering::Relaxed);
        let ready = Arc::new(crate::sync::AtomicU32::new(0));
        let wired = Arc::new(AtomicBool::new(false));
        let completion = |p: usize| {
            let (slots, ready, wired) = (slots.clone(), ready.clone(), wired.clone());
            thread::spawn(move || {
                let readied = complete_producer(&slots, p);
                if readied > 0 {
                    assert!(wired.load(Ordering::Acquire), "ready before it was wired");
                    ready.fetch_add(readied, Ordering::AcqRel);
                }
            })
        };
        let producers = [completion(0), completion(1)];
        let mut linked = 0;
        for p in 0..2 {
            let mut fan = slots[p].fan.lock();
            if fan.state == TaskState::Pending {
                if linked == 0 {
                    slots[CONSUMER as usize].await_links();
                }
                fan.consumers.push(SlotRef {
                    ring: 0,
                    index: CONSUMER,
                });
                linked += 1;
            }
        }
        wired.store(true, Ordering::Release);
        let consumer = &slots[CONSUMER as usize];
        let now = if linked == 0 {
            consumer.fanin_complete();
            true
        } else {
            consumer.finish_fanin(linked)
        };
        if now {
            ready.fetch_add(1, Ordering::AcqRel);
        }
        producers.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(ready.load(Ordering::Acquire), 1);
    });
}

/// The payload handoff (`RingSlot` in `slot.rs`): the orchestrator writes task 0's payload and
/// publishes the task (a Release store standing in for the ready queue, whose own atomics
/// loom cannot see); a scheduler reads the payload, then completes and retires the task
/// (`Slot::consume`); the orchestrator writes task 1's payload into the same slot once it sees
/// the slot free (`Slot::fan_ready_for`). loom's cell fails the model if any two accesses
/// can overlap, or if one is not ordered after the write before it.
#[test]
fn a_payload_is_written_again_only_after_its_reader_is_done() {
    model(|| {
        let ring = Arc::new(RingShared::new(1, 1, true));
        let published = Arc::new(AtomicBool::new(false));
        let scheduler = {
            let (ring, published) = (ring.clone(), published.clone());
            thread::spawn(move || {
                while !published.load(Ordering::Acquire) {
                    thread::yield_now();
                }
                // SAFETY: task 0 was published to this thread and completes below, after the
                // read ends (the payload protocol's rule 2).
                let block_num = unsafe { ring.slots.entry(0).read() }.block_num;
                assert_eq!(block_num, 7);
                let slot = ring.slot_of(0);
                let mut fan = slot.fan.lock();
                fan.state = TaskState::Completed;
                slot.consume(&mut fan, 1);
            })
        };
        let write = |block_num| {
            // SAFETY: the model's orchestrator writes a slot no task used, or whose task it
            // saw retire, for a task not yet published (rule 1).
            let mut w = unsafe { ring.slots.write_entry(0) }.1;
            w.parts().0.block_num = block_num;
        };
        write(7);
        published.store(true, Ordering::Release);
        while !ring.slot_of(1).fan_ready_for(1, 1) {
            thread::yield_now();
        }
        write(9);
        scheduler.join().unwrap();
        // SAFETY: nothing else runs now.
        assert_eq!(unsafe { ring.slots.entry(0).read() }.block_num, 9);
    });
}

/// A slot's counters outlive nothing: task A, linked to producer P, is made ready by the
/// orchestrator's final count just after P's completion counted itself down; A runs and its
/// slot takes task B, which has no producer. P's completion, however late it looks at the slot
/// again, must not make B ready a second time: exactly one readiness per task.
#[test]
fn a_late_producer_completion_never_readies_the_next_task_of_the_slot() {
    model(|| {
        let slots: Arc<Vec<Slot>> = Arc::new((0..2).map(|i| Slot::new(i, 4)).collect());
        const P: usize = 0;
        const X: u32 = 1;
        let readied = Arc::new(crate::sync::AtomicU32::new(0));
        // The orchestrator links task A (slot X) to P, which is pending.
        slots[X as usize].await_links();
        slots[P].fan.lock().consumers.push(SlotRef { ring: 0, index: X });
        let completion = {
            let (slots, readied) = (slots.clone(), readied.clone());
            thread::spawn(move || {
                readied.fetch_add(complete_producer(&slots, P), Ordering::AcqRel);
            })
        };
        let x = &slots[X as usize];
        if x.finish_fanin(1) {
            readied.fetch_add(1, Ordering::AcqRel);
        }
        // A runs once ready (by either side) and retires; the slot then takes task B.
        while readied.load(Ordering::Acquire) == 0 {
            thread::yield_now();
        }
        x.fanin_complete();
        readied.fetch_add(1, Ordering::AcqRel);
        completion.join().unwrap();
        assert_eq!(readied.load(Ordering::Acquire), 2, "A and B each ready once");
    });
}

/// Releases one scope's pin on task `local` as `RunShared::release_scope_batch` does, then
/// advances the ring when that consumed the task; whether it did.
fn release_scope_pin(ring: &RingShared, local: u32) -> bool {
    let slot = ring.slot_of(local);
    let consumed =
        crate::shared::RunShared::release_locked(slot, &mut slot.fan.lock(), SCOPE_BIT, ring.mask + 1);
    if consumed {
        ring.advance();
    }
    consumed
}

/// A scope end handed to the schedulers (`crates/simpler-runtime/src/orchestrator/scope_release.rs`): the orchestrator
/// queues task 0's release, then applies whatever is still queued (as before a wait, or at the
/// root's end); a scheduler completes the task, then applies a queued batch if it finds one.
/// Whoever takes the batch, and in whatever order against the completion, the task is
/// consumed exactly once and the ring moves past it.
#[test]
fn a_scope_release_handed_over_races_the_completion_and_consumes_once() {
    model(|| {
        let ring = Arc::new(RingShared::new(4, 1, true));
        {
            // As the orchestrator's `allocate` leaves the slot for task 0.
            let mut fan = ring.slot_of(0).fan.lock();
            fan.local = 0;
            fan.state = TaskState::Pending;
            fan.fanout_count = SCOPE_BIT;
            fan.fanout_refcount = 0;
        }
        let releases = Arc::new(ScopeReleases::new());
        let consumed = Arc::new(crate::sync::AtomicU32::new(0));
        let scheduler = {
            let (ring, releases, consumed) = (ring.clone(), releases.clone(), consumed.clone());
            thread::spawn(move || {
                let slot = ring.slot_of(0);
                let done = {
                    let mut fan = slot.fan.lock();
                    fan.state = TaskState::Completed;
                    crate::shared::RunShared::release_locked(slot, &mut fan, 0, ring.mask + 1)
                };
                if done {
                    ring.advance();
                    consumed.fetch_add(1, Ordering::AcqRel);
                }
                if let Some(batch) = releases.take() {
                    for s in &batch {
                        if release_scope_pin(&ring, s.index) {
                            consumed.fetch_add(1, Ordering::AcqRel);
                        }
                    }
                    releases.give_back(batch);
                }
            })
        };
        let mut batch = vec![SlotRef { ring: 0, index: 0 }];
        releases.hand_over(&mut batch);
        while let Some(batch) = releases.take() {
            for s in &batch {
                if release_scope_pin(&ring, s.index) {
                    consumed.fetch_add(1, Ordering::AcqRel);
                }
            }
            releases.give_back(batch);
        }
        scheduler.join().unwrap();
        assert_eq!(consumed.load(Ordering::Acquire), 1);
        assert_eq!(ring.last_alive.load(Ordering::Acquire), 1);
    });
}

/// A host-built graph's fans without their locks (`Slot::fan_exclusive`, the single-owner
/// rule): the build links a consumer into a two-block producer's list, then two scheduler
/// threads each finish one block, and only the last to finish (counted by `remaining`, as
/// `finish_block` counts) touches the producer's fan. Under loom every access to a fan is
/// recorded in a cell loom checks (`sync::loom_shim::Mutex::touch`), so two accesses not ordered
/// by happens-before in any interleaving fail the model (as they do when every block's thread
/// takes the fan); the consumer is readied exactly once.
#[test]
fn a_host_built_graphs_fan_is_reached_by_one_thread_at_a_time() {
    model(|| {
        let slots: Arc<Vec<Slot>> = Arc::new((0..2).map(|i| Slot::new(i, 2)).collect());
        const CONSUMER: u32 = 1;
        // The build, before any scheduler thread exists.
        // SAFETY: the orchestrator while it builds the graph, the only thread there is yet.
        let linked = unsafe {
            slots[0].fan_exclusive(|fan| {
                fan.consumers.push(SlotRef {
                    ring: 0,
                    index: CONSUMER,
                });
                fan.state == TaskState::Pending
            })
        };
        assert!(linked);
        slots[CONSUMER as usize].await_links();
        assert!(!slots[CONSUMER as usize].finish_fanin(1));
        slots[0].remaining.store(2, Ordering::Relaxed);
        let ready = Arc::new(crate::sync::AtomicU32::new(0));
        let block = || {
            let (slots, ready) = (slots.clone(), ready.clone());
            thread::spawn(move || {
                if slots[0].remaining.fetch_sub(1, Ordering::AcqRel) != 1 {
                    return; // not the last block: the task is not this thread's to complete
                }
                // SAFETY: this thread completes the task (its last block): the single-owner rule.
                let consumers = unsafe { slots[0].fan_exclusive(|fan| fan.complete()) };
                for c in consumers {
                    if slots[c.index as usize].producer_completed() {
                        ready.fetch_add(1, Ordering::AcqRel);
                    }
                }
            })
        };
        let blocks = [block(), block()];
        blocks.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(ready.load(Ordering::Acquire), 1);
        assert_eq!(slots[0].fan.lock().state, TaskState::Completed);
    });
}

/// The orchestrator's publication ring (`crates/simpler-runtime/src/scheduler/publication.rs`): one producer filling a
/// two-entry ring with three values while two consumers take; every value reaches exactly one
/// consumer, each consumer sees them in publication order, and loom's cells fail the model if
/// a take could overlap the write of the same entry.
#[test]
fn a_publication_ring_hands_each_value_to_one_consumer() {
    use crate::scheduler::PublicationRing;
    model(|| {
        let ring = Arc::new(PublicationRing::<u32>::new(2));
        let mut publisher = ring.publisher().expect("the ring's first publisher");
        let producer = {
            let ring = ring.clone();
            thread::spawn(move || {
                // What the full ring gave back, published again below once it was drained.
                let left: Vec<u32> = (1..=3)
                    .filter(|&v| ring.push(&mut publisher, v).is_err())
                    .collect();
                (publisher, left)
            })
        };
        let consumer = {
            let ring = ring.clone();
            thread::spawn(move || (0..2).filter_map(|_| ring.pop()).collect::<Vec<u32>>())
        };
        let mine: Vec<u32> = (0..2).filter_map(|_| ring.pop()).collect();
        let (mut publisher, left) = producer.join().unwrap();
        let theirs = consumer.join().unwrap();
        let mut rest: Vec<u32> = std::iter::from_fn(|| ring.pop()).collect();
        for v in left {
            assert_eq!(ring.push(&mut publisher, v), Ok(()), "a drained ring has room");
        }
        rest.extend(std::iter::from_fn(|| ring.pop()));
        for got in [&mine, &theirs, &rest] {
            assert!(got.windows(2).all(|w| w[0] < w[1]), "out of order: {got:?}");
        }
        let mut all: Vec<u32> = [mine, theirs, rest].concat();
        all.sort_unstable();
        assert_eq!(all, [1, 2, 3]);
    });
}
