//! Values found by key through a hash map, or directly by slot: a value keeps its slot until it
//! is dropped, so whoever holds the slot (a tensor-map entry, for its hot index and its grid
//! bucket) reaches the value without hashing its key. Dropped slots are reused. The hot
//! addresses' indexes (`hot_set.rs`) and a grid's buckets (`buckets.rs`) are both kept so.

use std::hash::Hash;

use rustc_hash::FxHashMap;

/// A value's place in a [`KeyedSlab`]: stable until the value is dropped.
pub(super) type SlabSlot = u32;

/// See the module documentation.
#[derive(Debug)]
pub(super) struct KeyedSlab<K, V> {
    /// Key → slot, for every value kept.
    index: FxHashMap<K, SlabSlot>,
    /// Each slot's key and value; a free slot holds `V::default()` and is listed in `free`
    /// (its key is stale).
    slots: Vec<(K, V)>,
    free: Vec<SlabSlot>,
}

impl<K: Copy + Eq + Hash, V: Default> KeyedSlab<K, V> {
    /// No value.
    pub fn new() -> Self {
        KeyedSlab {
            index: FxHashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Values kept.
    #[inline]
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// The slot of `key`'s value, if it is kept.
    #[inline]
    pub fn slot_of(&self, key: &K) -> Option<SlabSlot> {
        self.index.get(key).copied()
    }

    /// The key and the value in `slot` (a free slot's key is stale, its value the default).
    #[inline]
    pub fn slot(&self, slot: SlabSlot) -> &(K, V) {
        &self.slots[slot as usize]
    }

    /// The key last given to `slot` (stale for a free slot); `None` past the slots there are.
    #[inline]
    pub fn key_of(&self, slot: SlabSlot) -> Option<K> {
        self.slots.get(slot as usize).map(|&(k, _)| k)
    }

    /// The value in `slot`, writable; `None` past the slots there are.
    #[inline]
    pub fn value_mut(&mut self, slot: SlabSlot) -> Option<&mut V> {
        self.slots.get_mut(slot as usize).map(|(_, v)| v)
    }

    /// Every slot's value, free ones (the default) included.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.slots.iter().map(|(_, v)| v)
    }

    /// Every kept key.
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.index.keys()
    }

    /// The slot of `key`'s value, a default one added (in a free slot if there is one) when
    /// it is not kept.
    pub fn find_or_add(&mut self, key: K) -> SlabSlot {
        let (slots, free) = (&mut self.slots, &mut self.free);
        *self.index.entry(key).or_insert_with(|| match free.pop() {
            Some(s) => {
                slots[s as usize].0 = key;
                s
            }
            None => {
                slots.push((key, V::default()));
                (slots.len() - 1) as SlabSlot
            }
        })
    }

    /// Drops the values `keep` refuses: their slots hold the default again and are reused.
    pub fn retain(&mut self, keep: impl Fn(&V) -> bool) {
        let (slots, free) = (&mut self.slots, &mut self.free);
        self.index.retain(|_, &mut s| {
            let kept = keep(&slots[s as usize].1);
            if !kept {
                slots[s as usize].1 = V::default();
                free.push(s);
            }
            kept
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value keeps its slot while kept, whatever else is added and dropped; a dropped value's
    /// slot is reused for the next key, whose value starts as the default.
    #[test]
    fn values_keep_their_slots_and_dropped_slots_are_reused() {
        let mut s: KeyedSlab<u64, Vec<u32>> = KeyedSlab::new();
        let (a, b) = (s.find_or_add(10), s.find_or_add(20));
        assert_ne!(a, b);
        assert_eq!(s.find_or_add(10), a, "found, not added again");
        s.value_mut(b).unwrap().push(7);
        s.retain(|v| !v.is_empty());
        assert_eq!((s.len(), s.slot_of(&10), s.slot_of(&20)), (1, None, Some(b)));
        assert_eq!(s.find_or_add(30), a, "the dropped slot, reused");
        assert_eq!(s.slot(a), &(30, vec![]));
        assert_eq!(s.slot(b), &(20, vec![7]));
        let mut keys: Vec<_> = s.keys().copied().collect();
        keys.sort();
        assert_eq!(keys, [20, 30]);
        assert_eq!(s.values().map(Vec::len).sum::<usize>(), 1);
        assert!(s.value_mut(2).is_none());
        assert_eq!((s.key_of(a), s.key_of(2)), (Some(30), None));
    }
}
