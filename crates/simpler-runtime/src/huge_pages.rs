//! A fixed-length array on 2 MB pages ([`HugeSlice`]), for memory a hot path walks in strides
//! of kilobytes: dep_gen's capture writes one record slot of several KB per submit, so with
//! 4 KB pages every submit's first store missed the TLB and waited for a page walk (≈ 50 ns a
//! submit on this project's virtual machines, most of the capture's cost).
//!
//! The memory is aligned to 2 MB and advised `MADV_HUGEPAGE` before its first touch, so with
//! transparent huge pages enabled (`always` or `madvise`) the kernel backs it with 2 MB pages
//! as it faults in. Best effort: without them (or off Linux) it is ordinary memory.

use std::alloc::{self, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// The size and alignment of a huge page on x86_64 and aarch64 Linux.
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// `len` values of `T` on memory of its own, aligned to [`HUGE_PAGE`] and a whole number of
/// them long (see the module docs). Dereferences to `[T]`.
pub(crate) struct HugeSlice<T> {
    ptr: NonNull<T>,
    len: usize,
    layout: Layout,
}

// SAFETY: a `HugeSlice<T>` owns its `T`s exactly as a `Box<[T]>` does (no sharing, no interior
// pointer kept elsewhere), so sending or sharing it is sound whenever it is for `T`.
unsafe impl<T: Send> Send for HugeSlice<T> {}
// SAFETY: as above; `&HugeSlice<T>` only gives out `&[T]`.
unsafe impl<T: Sync> Sync for HugeSlice<T> {}

impl<T> HugeSlice<T> {
    /// `len` values, the `i`-th made by `make()` in order. Panics when the size overflows; a
    /// panic in `make` leaks what was allocated (it never frees or reads uninitialized values).
    pub fn new(len: usize, mut make: impl FnMut() -> T) -> Self {
        let bytes = std::mem::size_of::<T>()
            .checked_mul(len)
            .and_then(|b| b.max(1).checked_next_multiple_of(HUGE_PAGE))
            .expect("HugeSlice size overflows");
        let layout = Layout::from_size_align(bytes, HUGE_PAGE.max(std::mem::align_of::<T>()))
            .expect("HugeSlice layout");
        // SAFETY: `layout` has a nonzero size (at least one huge page).
        let raw = unsafe { alloc::alloc(layout) };
        let Some(ptr) = NonNull::new(raw.cast::<T>()) else {
            alloc::handle_alloc_error(layout)
        };
        advise_huge(raw, layout.size());
        for i in 0..len {
            // SAFETY: `i < len` and the allocation holds `len` values of `T` (its size is at
            // least `size_of::<T>() * len` and its alignment at least `align_of::<T>()`), so
            // `ptr.add(i)` is in bounds and aligned; the slot is uninitialized, so writing
            // without dropping is right.
            unsafe { ptr.as_ptr().add(i).write(make()) };
        }
        HugeSlice { ptr, len, layout }
    }
}

impl<T> Deref for HugeSlice<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` points to `len` initialized, aligned values that this owns (`new`), and
        // the borrow of `self` keeps them alive and unaliased by any `&mut`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for HugeSlice<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for HugeSlice<T> {
    fn drop(&mut self) {
        // SAFETY: the `len` values are initialized and dropped here once; then the memory is
        // freed with the layout it was allocated with, and never used again.
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len));
            alloc::dealloc(self.ptr.as_ptr().cast(), self.layout);
        }
    }
}

/// Advises `[start, start + bytes)` as huge-page memory (Linux); best effort, errors ignored.
fn advise_huge(start: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: the range is exactly the allocation `HugeSlice::new` just made, which nothing
    // else references. MADV_HUGEPAGE only marks the mapping as eligible for huge pages: it
    // never changes the bytes of the memory or anything outside the range, and on failure it
    // returns an error and changes nothing.
    let _ = unsafe { libc::madvise(start.cast(), bytes, libc::MADV_HUGEPAGE) };
    #[cfg(not(target_os = "linux"))]
    let _ = (start, bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn values_are_made_in_order_aligned_and_dropped_once() {
        let counter = Rc::new(());
        let mut n = 0u64;
        let mut s = HugeSlice::new(1000, || {
            n += 1;
            (n, Rc::clone(&counter))
        });
        assert_eq!(s.len(), 1000);
        assert_eq!(s.as_ptr() as usize % HUGE_PAGE, 0);
        assert!(s.iter().enumerate().all(|(i, v)| v.0 == i as u64 + 1));
        s[999].0 = 7;
        assert_eq!(s.last().map(|v| v.0), Some(7));
        assert_eq!(Rc::strong_count(&counter), 1001);
        drop(s);
        assert_eq!(Rc::strong_count(&counter), 1);
    }

    #[test]
    fn an_empty_slice_and_a_zero_sized_type_allocate_one_page() {
        let e: HugeSlice<u64> = HugeSlice::new(0, || 1);
        assert!(e.is_empty());
        let z = HugeSlice::new(5, || ());
        assert_eq!(z.len(), 5);
        assert_eq!(z.layout.size(), HUGE_PAGE);
    }
}
