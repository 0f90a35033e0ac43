//! The buckets of a hot index's grid (`hot.rs`): each bucket's entries in a slab, found by
//! key through a hash map, or directly by slab index, which stays the bucket's while it holds
//! entries.
//!
//! A tiled GEMM's INOUT tile looked its bucket up three times a task: to find the tile's last
//! writer, to remove that writer's entry, and to insert the new one; each hash probe a chain of
//! dependent loads. Now an entry keeps its bucket's slab index (`TensorMap` stores it in the
//! entry), so its removal probes nothing, and the bucket last used is tried first by the next
//! lookup and insert (the tile's next k-step), so a tile's probes come only when it changes.

use smallvec::SmallVec;

use super::keyed_slab::{KeyedSlab, SlabSlot};

/// A grid bucket: (offset in dim 0, offset in dim 1) divided by the bucket edges.
pub(super) type Bucket = (u64, u64);

/// A bucket's place: stable while the bucket holds an entry.
pub(super) type Slot = SlabSlot;

/// See the module documentation. `T` is one entry of a bucket.
#[derive(Debug)]
pub(super) struct Buckets<T> {
    /// The buckets kept (holding entries, or emptied and kept). A bucket of a tiling holds one
    /// entry (its tile's last writer), kept inline: a `Vec` cost a `malloc` per new tile and a
    /// second cache line per probe.
    slab: KeyedSlab<Bucket, SmallVec<[T; 1]>>,
    /// The slot last used (an entry pushed, removed or taken over; `None` after buckets were
    /// dropped): the first one [`Buckets::get`] and [`Buckets::push`] try. A tiled GEMM's
    /// tile is looked up, its writer taken over or removed and re-inserted, by each of its
    /// k-steps in turn, so the next step's lookup finds the tile's bucket without a probe.
    recent: Option<Slot>,
}

impl<T> Buckets<T> {
    /// No bucket.
    pub fn new() -> Self {
        Buckets {
            slab: KeyedSlab::new(),
            recent: None,
        }
    }

    /// Buckets kept, empty ones included.
    pub fn len(&self) -> usize {
        self.slab.len()
    }

    /// The slot of `key`'s bucket, if it is kept: the recent one, or through the key.
    #[inline]
    fn slot_of(&self, key: Bucket) -> Option<Slot> {
        match self.recent {
            Some(s) if self.slab.slot(s).0 == key => Some(s),
            _ => self.slab.slot_of(&key),
        }
    }

    /// The entries of bucket `key`, if it is kept.
    #[inline]
    pub fn get(&self, key: Bucket) -> Option<&[T]> {
        self.slot_of(key).map(|s| &self.slab.slot(s).1[..])
    }

    /// Every kept bucket's entries (empty ones too), in no particular order.
    pub fn all(&self) -> impl Iterator<Item = &[T]> {
        self.slab.values().map(|entries| &entries[..])
    }

    /// Appends `item` to bucket `key` (kept from now on); returns the bucket's slot.
    #[inline]
    pub fn push(&mut self, key: Bucket, item: T) -> Slot {
        let slot = match self.recent {
            Some(s) if self.slab.slot(s).0 == key => s,
            _ => self.slab.find_or_add(key),
        };
        if let Some(entries) = self.slab.value_mut(slot) {
            entries.push(item);
        }
        self.recent = Some(slot);
        slot
    }

    /// Removes the last entry of `slot`'s bucket that `is_it` picks; whether there was one.
    /// From the back: counted in a tmr fan-out run, the entry removed was its bucket's newest
    /// every time; its buckets held 33 entries on average, and a search from the front walked
    /// 31 of them (`docs/performance.md`, item 69). Any entry is still found, only later.
    #[inline]
    pub fn remove(&mut self, slot: Slot, is_it: impl Fn(&T) -> bool) -> bool {
        let Some(entries) = self.slab.value_mut(slot) else {
            return false;
        };
        let Some(i) = entries.iter().rposition(is_it) else {
            return false;
        };
        entries.swap_remove(i);
        self.recent = Some(slot);
        true
    }

    /// Changes with `update` the last entry of `slot`'s bucket that `is_it` picks, when the
    /// bucket is `key`'s; whether there was one.
    #[inline]
    pub fn take_over(
        &mut self,
        slot: Slot,
        key: Bucket,
        is_it: impl Fn(&T) -> bool,
        update: impl FnOnce(&mut T),
    ) -> bool {
        if self.slab.key_of(slot) != Some(key) {
            return false;
        }
        let entries = self.slab.value_mut(slot);
        let Some(entry) = entries.and_then(|e| e.iter_mut().rev().find(|e| is_it(e))) else {
            return false;
        };
        update(entry);
        self.recent = Some(slot);
        true
    }

    /// Changes with `update` the last entry of `slot`'s bucket that `is_it` picks; whether
    /// there was one.
    #[inline]
    pub fn update(&mut self, slot: Slot, is_it: impl Fn(&T) -> bool, update: impl FnOnce(&mut T)) -> bool {
        let entries = self.slab.value_mut(slot);
        let Some(entry) = entries.and_then(|e| e.iter_mut().rev().find(|e| is_it(e))) else {
            return false;
        };
        update(entry);
        self.recent = Some(slot);
        true
    }

    /// Drops every bucket.
    pub fn clear(&mut self) {
        *self = Buckets::new();
    }

    /// Drops the empty buckets (their slots are reused by later buckets).
    pub fn drop_empty(&mut self) {
        self.slab.retain(|entries| !entries.is_empty());
        self.recent = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bucket keeps its slot while it holds entries, whatever else comes and goes; an
    /// emptied bucket's slot is reused for another key only once empty buckets are dropped,
    /// and the key then finds the new bucket's entries, not the old one's.
    #[test]
    fn slots_stay_with_their_buckets() {
        let mut b = Buckets::new();
        let a = b.push((0, 0), 1);
        let c = b.push((0, 1), 2);
        assert_ne!(a, c);
        assert_eq!(b.push((0, 0), 3), a);
        assert!(b.remove(a, |&x| x == 1));
        assert!(!b.remove(a, |&x| x == 1), "removed once");
        assert_eq!(b.get((0, 0)), Some(&[3][..]));
        // The recent slot is tried first, and a key that is not its own still finds its own.
        assert_eq!(b.push((0, 1), 4), c);
        assert_eq!(b.get((0, 1)), Some(&[2, 4][..]));
        assert!(b.remove(a, |&x| x == 3));
        assert_eq!(
            (b.len(), b.get((0, 0))),
            (2, Some(&[][..])),
            "emptied, still kept"
        );
        b.drop_empty();
        assert_eq!((b.len(), b.get((0, 0)), b.slot_of((0, 1))), (1, None, Some(c)));
        assert_eq!(b.push((5, 5), 6), a, "the freed slot, reused");
        assert_eq!(b.get((5, 5)), Some(&[6][..]));
        assert_eq!(b.get((0, 1)), Some(&[2, 4][..]));
        let mut all: Vec<_> = b.all().flatten().copied().collect();
        all.sort();
        assert_eq!(all, [2, 4, 6]);
        b.clear();
        assert_eq!((b.len(), b.all().count()), (0, 0));
    }
}
