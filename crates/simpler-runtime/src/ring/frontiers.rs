//! Memory an `hbg` build writes beside its slots, faulted in ahead of it (and, with four
//! storages, the memory of the dep_gen replay's two tensor maps:
//! `crates/simpler-runtime/src/collectors/dep_gen/prefault.rs`).
//!
//! Besides the window's slots (`slots.rs`), a host-built graph's orchestrator writes the
//! tensor map's entries and producer views, one of each per registered output: at 1M tasks
//! ≈ 60 MB of fresh memory whose pages the kernel zeroed on the orchestrator's core, one page
//! fault at a time, as the map's storage grew into them. The orchestrator now publishes where
//! the map writes next ([`Frontiers::publish`], once per chunk of slots it starts), and the
//! prefault thread, on the core that is otherwise idle during the build, faults in the next
//! [`AHEAD_BYTES`] of each ([`Frontiers::fault_ahead`]) whenever it is awake, so the build's
//! writes find the pages ready. A publication is a hint: the thread only ever faults pages in,
//! which changes no byte of memory, so a stale or torn range costs nothing but the call.

use std::ops::Range;

use crate::sync::{AtomicUsize, Ordering};

/// How far past each frontier the prefault thread faults pages in: a few thousand tasks'
/// entries and views, more than the build writes between two of the thread's wakes (it wakes
/// once per half of its spare chunks, `slots.rs`), and a bounded addition to the peak RSS.
pub(crate) const AHEAD_BYTES: usize = 1 << 20;

/// Storages tracked: the tensor map's entries and its view column
/// ([`simpler_core::TensorMap::unwritten_storage`]).
pub(crate) const STORAGES: usize = 2;

/// The frontiers the writing thread last published: per storage (`N` of them, [`STORAGES`]
/// for an `hbg` build's tensor map; the dep_gen replay's two maps make four), the address
/// range it has not written yet.
pub(crate) struct Frontiers<const N: usize = STORAGES> {
    published: [[AtomicUsize; 2]; N],
}

impl<const N: usize> Default for Frontiers<N> {
    fn default() -> Self {
        Frontiers {
            published: std::array::from_fn(|_| [AtomicUsize::new(0), AtomicUsize::new(0)]),
        }
    }
}

impl<const N: usize> Frontiers<N> {
    /// Writing thread: where each storage writes next, `start..end` of its unused capacity.
    pub fn publish(&self, ranges: [Range<usize>; N]) {
        for (slot, r) in self.published.iter().zip(ranges) {
            slot[0].store(r.start, Ordering::Relaxed);
            slot[1].store(r.end, Ordering::Relaxed);
        }
    }

    /// Faulting thread: faults in the pages of each storage from its published start up to
    /// [`AHEAD_BYTES`] past it (within its end), skipping what `done` (per storage, the end of
    /// the last range this thread faulted in) says is already done. Returns the bytes asked for.
    pub fn fault_ahead(&self, done: &mut [usize; N]) -> usize {
        let mut asked = 0;
        for (slot, done) in self.published.iter().zip(done.iter_mut()) {
            let (start, end) = (slot[0].load(Ordering::Relaxed), slot[1].load(Ordering::Relaxed));
            let to = end.min(start.saturating_add(AHEAD_BYTES));
            // Within the published range, resume where the last call ended; a storage that
            // moved (a grown column) starts over from its new start.
            let from = if (start..=to).contains(done) { *done } else { start };
            if to > from {
                populate_range(from..to);
                asked += to - from;
                *done = to;
            }
        }
        asked
    }
}

/// Faults in the pages that `range` touches, writable, with one
/// `madvise(MADV_POPULATE_WRITE)` (Linux 5.14+); best effort, errors ignored.
///
/// Safe whatever the range: the call only populates page tables as a write would, without
/// the write. It never changes a byte of mapped memory, the mapping, or its protection (a
/// range that is not mapped, or not writable, gets an error and nothing happens), so memory
/// that another thread writes meanwhile, through a `&mut` or not, reads exactly as that thread
/// left it. Nothing is dereferenced here and no Rust reference is created or invalidated.
pub(crate) fn populate_range(range: Range<usize>) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let (first, last) = (range.start / PAGE * PAGE, range.end.next_multiple_of(PAGE));
        if range.end > range.start && first != 0 {
            // SAFETY: see the function's docs: MADV_POPULATE_WRITE changes no memory contents,
            // mapping or protection, for any address range, and only the return value (ignored)
            // says whether it did anything.
            let _ = unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_POPULATE_WRITE,
                )
            };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = range;
}

#[cfg(all(test, target_os = "linux", not(feature = "loom")))]
pub(crate) mod tests {
    use super::*;

    const PAGE: usize = 4096;

    /// Fresh anonymous memory, never touched (an allocator could hand back pages an earlier
    /// test made resident) and kept to 4 KB pages (a huge page would make a whole 2 MB
    /// resident); unmapped on drop. Also for the dep_gen replay's prefault thread's test.
    pub(crate) struct Fresh {
        pub addr: usize,
        pub len: usize,
    }

    impl Fresh {
        pub fn new(len: usize) -> Fresh {
            // SAFETY: an anonymous private mapping at an address of the kernel's choosing
            // touches no existing memory; the result is checked before use.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            assert_ne!(p, libc::MAP_FAILED);
            // SAFETY: advice on the mapping just made, which nothing else uses.
            unsafe { libc::madvise(p, len, libc::MADV_NOHUGEPAGE) };
            Fresh {
                addr: p as usize,
                len,
            }
        }

        /// Pages of the mapping resident in memory, by `mincore`.
        pub fn resident_pages(&self) -> usize {
            let mut vec = vec![0u8; self.len / PAGE];
            // SAFETY: `mincore` writes one byte per page of the page-aligned mapping into
            // `vec`, which holds exactly that many.
            let rc = unsafe { libc::mincore(self.addr as *mut libc::c_void, self.len, vec.as_mut_ptr()) };
            assert_eq!(rc, 0);
            vec.iter().filter(|&&b| b & 1 == 1).count()
        }
    }

    impl Drop for Fresh {
        fn drop(&mut self) {
            // SAFETY: the mapping `new` made, unmapped once; nothing refers to it any more.
            unsafe { libc::munmap(self.addr as *mut libc::c_void, self.len) };
        }
    }

    #[test]
    fn the_pages_ahead_of_a_frontier_are_faulted_in_once_and_no_further() {
        let m = Fresh::new(4 << 20);
        assert_eq!(m.resident_pages(), 0, "fresh memory is not resident");
        let f = Frontiers::default();
        f.publish([m.addr..m.addr + m.len, 0..0]);
        let mut done = [0; STORAGES];
        assert_eq!(f.fault_ahead(&mut done), AHEAD_BYTES);
        assert_eq!(m.resident_pages(), AHEAD_BYTES / PAGE);
        assert_eq!(f.fault_ahead(&mut done), 0, "nothing new was published");
        // The map wrote half of what was faulted in: the next call adds as much past the end.
        f.publish([m.addr + AHEAD_BYTES / 2..m.addr + m.len, 0..0]);
        assert_eq!(f.fault_ahead(&mut done), AHEAD_BYTES / 2);
        assert_eq!(m.resident_pages(), 3 * AHEAD_BYTES / 2 / PAGE);
        // A storage that moved (a grown column) starts over from its new start.
        f.publish([m.addr + 3 * AHEAD_BYTES..m.addr + m.len, 0..0]);
        assert_eq!(f.fault_ahead(&mut done), AHEAD_BYTES);
        assert_eq!(m.resident_pages(), 5 * AHEAD_BYTES / 2 / PAGE);
    }

    #[test]
    fn faulting_pages_in_under_a_writer_changes_none_of_its_bytes() {
        let mut v: Vec<u64> = Vec::with_capacity(2 << 20 >> 3);
        let f = Frontiers::default();
        let base = v.as_ptr() as usize;
        f.publish([base..base + v.capacity() * 8, 0..0]);
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..50 {
                    let mut done = [0; STORAGES];
                    f.fault_ahead(&mut done);
                }
            });
            for i in 0..v.capacity() as u64 {
                v.push(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            }
        });
        assert!(v
            .iter()
            .enumerate()
            .all(|(i, &x)| x == (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
    }
}
