//! The addresses that have their own index (`hot.rs`), and their indexes.
//!
//! Every lookup and insert asks whether its buffer's address is hot, and a tiled GEMM's hot
//! tile asked a hash map five times a submit (its lookup twice, the removal of its covered
//! writer, its insert twice), and each cold argument once more. Now a bit per tensor-map
//! bucket says whether any hot address falls in it, so a cold address is answered by that bit
//! alone, and an entry in an index keeps the index's slot (`TensorMap` stores it in the
//! entry), so its removal asks nothing: a hot tile's submit probes the map twice.

use super::hot::HotIndex;
use super::keyed_slab::{KeyedSlab, SlabSlot};

/// An index's place in the set: stable while its address is hot.
pub(super) type HotSlot = SlabSlot;

/// See the module documentation.
pub(super) struct HotSet {
    /// Address → its index.
    indexes: KeyedSlab<u64, HotIndex>,
    /// One bit per tensor-map bucket: set while a hot address falls in that bucket.
    marked: Vec<u64>,
}

impl HotSet {
    /// No hot address, for a map of `buckets` buckets.
    pub fn new(buckets: usize) -> HotSet {
        HotSet {
            indexes: KeyedSlab::new(),
            marked: vec![0; buckets.div_ceil(64)],
        }
    }

    /// Hot addresses.
    pub fn len(&self) -> usize {
        self.indexes.len()
    }

    /// The slot of `addr`'s index, when it is hot; `bucket` is its tensor-map bucket.
    #[inline]
    pub fn find(&self, addr: u64, bucket: usize) -> Option<HotSlot> {
        // No hot address at all (most maps, most of the time): no load of a mark.
        if self.indexes.len() == 0 || self.marked[bucket / 64] & (1 << (bucket % 64)) == 0 {
            return None;
        }
        self.indexes.slot_of(&addr)
    }

    /// The index in `slot`.
    #[inline]
    pub fn index(&self, slot: HotSlot) -> &HotIndex {
        &self.indexes.slot(slot).1
    }

    /// The index in `slot`, writable.
    #[inline]
    pub fn index_mut(&mut self, slot: HotSlot) -> &mut HotIndex {
        self.indexes.value_mut(slot).expect("the slot of a hot address")
    }

    /// Makes `addr` (in tensor-map bucket `bucket`) hot with an empty index; returns its slot.
    pub fn add(&mut self, addr: u64, bucket: usize) -> HotSlot {
        self.marked[bucket / 64] |= 1 << (bucket % 64);
        self.indexes.find_or_add(addr)
    }

    /// Drops the addresses whose index is empty (their slots are reused);
    /// `bucket_of` gives an address's tensor-map bucket.
    pub fn drop_empty(&mut self, bucket_of: impl Fn(u64) -> usize) {
        self.indexes.retain(|h| !h.is_empty());
        self.marked.iter_mut().for_each(|m| *m = 0);
        for &addr in self.indexes.keys() {
            let b = bucket_of(addr);
            self.marked[b / 64] |= 1 << (b % 64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, TaskId, Tensor};

    /// An address is found only once it is added, in its own bucket's mark, and a dropped
    /// (empty) index's address is no longer found while a held one keeps its slot; a freed
    /// slot is reused by the next address made hot.
    #[test]
    fn addresses_are_found_while_hot_and_slots_outlive_others_drops() {
        let bucket_of = |addr: u64| (addr % 128) as usize;
        let mut set = HotSet::new(128);
        let (a, b, c) = (0x1000, 0x2000 + 1, 0x3000 + 2);
        assert_eq!(set.find(a, bucket_of(a)), None);
        let sa = set.add(a, bucket_of(a));
        let sb = set.add(b, bucket_of(b));
        assert_eq!(
            (set.find(a, bucket_of(a)), set.find(b, bucket_of(b))),
            (Some(sa), Some(sb))
        );
        // Another address in a marked bucket is still not hot.
        assert_eq!(set.find(a + 128, bucket_of(a + 128)), None);
        // b's index holds an entry; a's is empty.
        let t = Tensor::contiguous(b, 64, &[16], DType::Float32, TaskId::INVALID).unwrap();
        set.index_mut(sb).insert(&t, 0, 0);
        set.drop_empty(bucket_of);
        assert_eq!(set.len(), 1);
        assert_eq!(
            (set.find(a, bucket_of(a)), set.find(b, bucket_of(b))),
            (None, Some(sb))
        );
        assert!(!set.index(sb).is_empty());
        assert_eq!(set.add(c, bucket_of(c)), sa, "a's freed slot, reused");
        assert!(set.index(sa).is_empty(), "with an empty index");
        assert_eq!(set.find(c, bucket_of(c)), Some(sa));
    }
}
