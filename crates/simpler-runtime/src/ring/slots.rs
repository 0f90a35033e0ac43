//! A ring's task slots, built a chunk at a time when first used.
//!
//! An `hbg` run keeps every task of the graph in its window (2^20 slots for 1M tasks, about
//! 360 MB). Building them all before the first submit cost a third of such a run's CPU time,
//! most of it page faults, on the critical path, and wrote every slot twice: once empty, once
//! by its submit, long after the empty write had left the caches. Slots are built in chunks of
//! [`CHUNK_SLOTS`] (a few hundred KB, in the core's L2) by the first access, which is the
//! orchestrator's allocation; the submit that follows writes lines still in the cache. A
//! window larger than the run needs is never touched past its last used chunk. Small windows
//! (`tmr`'s default) are one or a few chunks.

use std::sync::OnceLock;

use crate::slot::Slot;

/// Slots built together (1024 × 360 bytes: 360 KB).
pub(crate) const CHUNK_SLOTS: usize = 1024;

/// The slots of one ring's window; see the module docs.
pub(crate) struct SlotStore {
    chunks: Box<[OnceLock<Box<[Slot]>>]>,
    /// `log2` of the chunk length.
    shift: u32,
    /// Chunk length − 1.
    within: u32,
}

impl SlotStore {
    /// A store of `len` slots (a power of two), none built yet.
    pub fn new(len: u32) -> SlotStore {
        debug_assert!(len.is_power_of_two());
        let chunk = (len as usize).min(CHUNK_SLOTS) as u32;
        let store = SlotStore {
            chunks: (0..len / chunk).map(|_| OnceLock::new()).collect(),
            shift: chunk.trailing_zeros(),
            within: chunk - 1,
        };
        // Under loom every slot exists before the model's threads start: a slot's model locks
        // and atomics built lazily by one thread and published through `OnceLock` (std
        // atomics, which loom cannot see) would look unsynchronised to the other threads.
        #[cfg(feature = "loom")]
        for c in 0..store.chunks.len() as u32 {
            store.get(c << store.shift);
        }
        store
    }

    /// The slot at `index` (< `len`), building its chunk if this is the chunk's first use.
    #[inline]
    pub fn get(&self, index: u32) -> &Slot {
        let chunk =
            self.chunks[(index >> self.shift) as usize].get_or_init(|| build_chunk(self.within as usize + 1));
        &chunk[(index & self.within) as usize]
    }

    /// Chunks built so far.
    #[cfg(test)]
    fn built(&self) -> usize {
        self.chunks.iter().filter(|c| c.get().is_some()).count()
    }
}

/// `n` empty slots, their memory faulted in by one system call first.
fn build_chunk(n: usize) -> Box<[Slot]> {
    let mut v: Vec<Slot> = Vec::with_capacity(n);
    populate_for_write(v.spare_capacity_mut());
    v.extend((0..n).map(|_| Slot::new()));
    v.into_boxed_slice()
}

/// Faults in the whole pages of `buf` writable with one `madvise(MADV_POPULATE_WRITE)` (Linux
/// 5.14+) instead of one page fault per 4 KB page as the slots are written. Best effort: an
/// older kernel's error leaves the pages to fault in as before.
fn populate_for_write<T>(buf: &mut [std::mem::MaybeUninit<T>]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = buf.as_mut_ptr() as usize;
        let end = start + std::mem::size_of_val(buf);
        let (first, last) = (start.next_multiple_of(PAGE), end / PAGE * PAGE);
        if last > first {
            // SAFETY: [first, last) lies inside `buf`, memory this function borrows mutably and
            // that nothing else references. MADV_POPULATE_WRITE only populates page tables as a
            // write would: it never changes the bytes of mapped memory, the mapping, or any
            // memory outside the range; on failure it returns an error and changes nothing we
            // rely on. No Rust reference into the range is created or invalidated.
            let _ = unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_POPULATE_WRITE,
                )
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slot::TaskState;

    #[test]
    fn a_chunk_is_built_by_its_first_use_and_only_then() {
        let store = SlotStore::new(4 * CHUNK_SLOTS as u32);
        assert_eq!(store.built(), 0);
        assert_eq!(store.get(0).fan.lock().state, TaskState::Free);
        assert_eq!(store.built(), 1);
        store.get(CHUNK_SLOTS as u32 - 1);
        assert_eq!(store.built(), 1, "the same chunk");
        store.get(3 * CHUNK_SLOTS as u32 + 5);
        assert_eq!(store.built(), 2);
    }

    #[test]
    fn a_slot_is_the_same_object_on_every_access() {
        let store = SlotStore::new(2 * CHUNK_SLOTS as u32);
        let i = CHUNK_SLOTS as u32 + 7;
        store.get(i).fan.lock().local = 42;
        assert_eq!(store.get(i).fan.lock().local, 42);
        assert_eq!(store.get(i - 1).fan.lock().local, u32::MAX);
        assert!(std::ptr::eq(store.get(i), store.get(i)));
    }

    #[test]
    fn a_window_smaller_than_a_chunk_is_one_chunk_of_its_size() {
        let store = SlotStore::new(8);
        store.get(7).fan.lock().local = 7;
        assert_eq!(store.built(), 1);
        assert_eq!(store.get(7).fan.lock().local, 7);
    }
}
