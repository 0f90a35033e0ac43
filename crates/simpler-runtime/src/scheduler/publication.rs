//! [`PublicationRing`]: the orchestrator's ready batches on their way to the scheduler
//! threads, with no atomic read-modify-write on the orchestrator's side.
//!
//! A bounded ring of one producer and any number of consumers: D. Vyukov's bounded queue, in
//! which each entry's stamp says whose turn it is, with the producer's compare-and-swap on the
//! tail dropped because there is one producer, whose tail is its own ([`Publisher`]). A batch
//! published through `crossbeam`'s `SegQueue` cost the orchestrator two locked instructions on
//! lines the spinning scheduler reads (the tail's compare-and-swap and the slot's state) and a
//! third for the depth counter; here it writes the entry and stores its stamp, which the store
//! buffer absorbs. A consumer takes an entry with one compare-and-swap on the head, a line
//! only consumers write.

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicBool, AtomicU64, HandoffCell, Ordering};

/// The next ring's id: every ring of the process gets its own, never reused (a ring's address
/// can be, once it is freed), so a publisher can be matched to its ring.
static NEXT_RING_ID: crate::sync::unmodeled::AtomicU64 = crate::sync::unmodeled::AtomicU64::new(0);

/// One entry: its stamp and the value it holds when full.
struct Entry<T> {
    /// For position `p` of the ring (`p & mask` is this entry): `p` while the entry is empty
    /// and the producer may fill it, `p + 1` once it holds position `p`'s value, then
    /// `p + capacity` once a consumer took it (position `p + capacity`'s turn).
    stamp: AtomicU64,
    value: HandoffCell<T>,
}

/// A bounded single-producer, multi-consumer ring (see the module documentation).
pub(crate) struct PublicationRing<T> {
    entries: Box<[Entry<T>]>,
    mask: u64,
    /// The next position a consumer takes.
    head: CachePadded<AtomicU64>,
    /// Whether the one [`Publisher`] was handed out.
    claimed: AtomicBool,
    /// This ring's id (`NEXT_RING_ID`).
    id: u64,
}

/// The ring's one producer: the next position it fills. Only [`PublicationRing::publisher`]
/// makes one, once per ring, so no two threads ever fill entries of one ring.
pub(crate) struct Publisher {
    tail: u64,
    /// The id of the ring this publisher fills: any other ring refuses it.
    ring: u64,
}

impl<T: Default> PublicationRing<T> {
    /// An empty ring of `capacity` entries (a power of two).
    pub fn new(capacity: usize) -> Self {
        assert!(
            capacity.is_power_of_two(),
            "a publication ring's capacity is a power of two"
        );
        PublicationRing {
            entries: (0..capacity as u64)
                .map(|p| Entry {
                    stamp: AtomicU64::new(p),
                    value: HandoffCell::new(T::default()),
                })
                .collect(),
            mask: capacity as u64 - 1,
            head: CachePadded::new(AtomicU64::new(0)),
            claimed: AtomicBool::new(false),
            id: NEXT_RING_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The ring's producer, the first time it is asked for; `None` after.
    pub fn publisher(&self) -> Option<Publisher> {
        let first = !self.claimed.swap(true, Ordering::Relaxed);
        first.then_some(Publisher {
            tail: 0,
            ring: self.id,
        })
    }

    /// Publishes `value`, or gives it back when the ring is full (its oldest value not yet
    /// taken).
    ///
    /// # Panics
    ///
    /// When `p` is another ring's publisher.
    #[inline]
    pub fn push(&self, p: &mut Publisher, value: T) -> Result<(), T> {
        assert_eq!(p.ring, self.id, "another ring's publisher");
        let entry = &self.entries[(p.tail & self.mask) as usize];
        // Acquire: the consumer that took the entry's last value did so before its stamp
        // said it was this position's turn.
        if entry.stamp.load(Ordering::Acquire) != p.tail {
            return Err(value);
        }
        // SAFETY: the entry is position `p.tail`'s and empty: consumers touch an entry only
        // while its stamp is `position + 1` (`pop`), which only this store below sets, and this
        // ring has no other producer (`Publisher` is made once per ring and checked above); the
        // last consumer's take happens before this access (the Acquire load above).
        unsafe { *entry.value.write() = value };
        // Release: the value is written before a consumer sees the stamp.
        entry.stamp.store(p.tail + 1, Ordering::Release);
        p.tail += 1;
        Ok(())
    }

    /// Takes the oldest value published and not yet taken, if any.
    #[inline]
    pub fn pop(&self) -> Option<T> {
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            let entry = &self.entries[(head & self.mask) as usize];
            // Acquire: pairs with `push`'s Release store, so the value is visible.
            let stamp = entry.stamp.load(Ordering::Acquire);
            if stamp == head + 1 {
                match (self.head).compare_exchange_weak(head, head + 1, Ordering::Relaxed, Ordering::Relaxed)
                {
                    Ok(_) => {
                        // SAFETY: this consumer won position `head`, whose value the producer
                        // wrote before its Release store of `head + 1` (seen above by an
                        // Acquire load); the producer writes the entry again only once its
                        // stamp is `head + capacity`, stored below after this access, and no
                        // other consumer touches it: the head moved past `head` once, here.
                        let value = std::mem::take(unsafe { &mut *entry.value.write() });
                        // Release: the take is done before the producer refills the entry.
                        entry.stamp.store(head + self.mask + 1, Ordering::Release);
                        return Some(value);
                    }
                    Err(now) => head = now,
                }
            } else if stamp < head + 1 {
                // Position `head` not published yet (the stamp is `head`), or the last lap's
                // take of this entry not finished (`head + 1 - capacity`): nothing to take.
                return None;
            } else {
                // Another consumer took position `head` (and the producer may have refilled
                // the entry since): look again from the current head.
                head = self.head.load(Ordering::Relaxed);
            }
        }
    }

    /// Whether nothing published is left to take (a snapshot).
    #[inline]
    pub fn is_empty(&self) -> bool {
        let head = self.head.load(Ordering::Relaxed);
        self.entries[(head & self.mask) as usize]
            .stamp
            .load(Ordering::Acquire)
            != head + 1
    }
}

#[cfg(all(test, not(feature = "loom")))]
mod tests {
    use super::*;

    #[test]
    fn values_come_out_in_order_and_a_full_ring_gives_the_value_back() {
        let ring = PublicationRing::<u32>::new(4);
        let mut p = ring.publisher().expect("the first publisher");
        assert!(ring.publisher().is_none(), "one publisher per ring");
        assert!(ring.is_empty());
        for v in 1..=4 {
            assert_eq!(ring.push(&mut p, v), Ok(()));
        }
        assert_eq!(ring.push(&mut p, 5), Err(5));
        assert_eq!(ring.pop(), Some(1));
        assert_eq!(ring.push(&mut p, 5), Ok(()));
        let got: Vec<u32> = std::iter::from_fn(|| ring.pop()).collect();
        assert_eq!(got, [2, 3, 4, 5]);
        assert!(ring.is_empty());
        assert_eq!(ring.pop(), None);
    }

    #[test]
    #[should_panic(expected = "another ring's publisher")]
    fn a_publisher_fills_only_its_own_ring() {
        let (a, b) = (PublicationRing::<u32>::new(2), PublicationRing::<u32>::new(2));
        let mut pa = a.publisher().unwrap();
        let _ = b.push(&mut pa, 1);
    }

    #[test]
    fn every_value_is_taken_once_by_concurrent_consumers() {
        use std::sync::Arc;
        const N: u32 = 200_000;
        let ring = Arc::new(PublicationRing::<u32>::new(8));
        let consumers: Vec<_> = (0..2)
            .map(|_| {
                let ring = ring.clone();
                std::thread::spawn(move || {
                    let mut got = Vec::new();
                    while got.last() != Some(&0) {
                        match ring.pop() {
                            Some(v) => got.push(v),
                            None => std::thread::yield_now(),
                        }
                    }
                    got.pop();
                    got
                })
            })
            .collect();
        let mut p = ring.publisher().unwrap();
        for v in (1..=N).chain([0, 0]) {
            let mut v = v;
            while let Err(back) = ring.push(&mut p, v) {
                v = back;
                std::thread::yield_now();
            }
        }
        let mut all: Vec<u32> = Vec::new();
        for c in consumers {
            let got = c.join().unwrap();
            assert!(
                got.windows(2).all(|w| w[0] < w[1]),
                "each consumer sees the order"
            );
            all.extend(got);
        }
        all.sort_unstable();
        assert_eq!(all, (1..=N).collect::<Vec<_>>());
    }
}
