//! Cache hints for the hot paths: fetch a line for writing before the store that needs it, or
//! for reading before the loads that need it.
//!
//! A store to a line another core last wrote (or one that left this core's caches) waits for
//! the line, and x86 commits stores in order, so every younger store waits with it. Asked for
//! a few tasks ahead, the line is owned by the time the store comes. A load of such a line
//! waits too; a read hint asked for before the work that precedes the load lets the line
//! arrive meanwhile.

/// Asks the CPU to fetch the cache line of `p` for writing (`PREFETCHW`): the line arrives
/// owned, so the store or lock that follows does not wait for another core to give it up. A
/// no-op off x86_64. (`_mm_prefetch::<_MM_HINT_ET0>` compiles to a read prefetch unless the
/// crate is built for `prfchw`, and a line fetched for reading must still be taken over.)
#[inline(always)]
pub(crate) fn line_for_write(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHW only hints the cache: it never faults (an address that is not mapped
    // is dropped, so any `p` will do), reads into a register or writes memory, and leaves the
    // flags and the stack alone, as the options declare; a CPU without it runs the encoding
    // (0F 0D /1) as a NOP.
    unsafe {
        std::arch::asm!("prefetchw [{p}]", p = in(reg) p, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`line_for_write`] for every line of the `bytes` bytes from `start`, the last one included
/// (steps of 64 from an unaligned start would miss it).
#[inline(always)]
pub(crate) fn range_for_write(start: *const u8, bytes: usize) {
    if bytes == 0 {
        return;
    }
    let mut off = 0;
    while off < bytes {
        line_for_write(start.wrapping_add(off));
        off += 64;
    }
    line_for_write(start.wrapping_add(bytes - 1));
}

/// Asks the CPU to start loading every cache line of the `bytes` bytes from `start` (the last
/// one included), for reading. A no-op off x86_64.
#[inline(always)]
pub(crate) fn range_for_read(start: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        if bytes == 0 {
            return;
        }
        let p = start.cast::<i8>();
        let mut off = 0;
        while off < bytes {
            // SAFETY: `_mm_prefetch` needs SSE, which every x86_64 target has; a prefetch only
            // hints the cache: it never faults (an address that is not mapped is dropped, so
            // any address will do, hence `wrapping_add`), reads into a register or writes.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off)) };
            off += 64;
        }
        // SAFETY: as above; the range's last byte, whose line the steps of 64 from an
        // unaligned start can miss.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(bytes - 1)) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (start, bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A write prefetch never faults and changes nothing, whatever the address (the SAFETY
    /// argument of `line_for_write`): a live buffer, null, and past the end of everything.
    #[test]
    fn prefetching_for_write_leaves_memory_as_it_was() {
        let buf: Vec<u8> = (0..=255).collect();
        range_for_write(buf.as_ptr(), buf.len());
        range_for_write(buf.as_ptr().wrapping_add(3), 0);
        assert!(buf.iter().enumerate().all(|(i, &b)| b == i as u8));
        line_for_write(std::ptr::null());
        line_for_write(usize::MAX as *const u8);
        range_for_write(usize::MAX as *const u8, 200);
    }

    /// A read prefetch never faults and changes nothing either, whatever the address (the
    /// SAFETY argument of `range_for_read`).
    #[test]
    fn prefetching_for_read_leaves_memory_as_it_was() {
        let buf: Vec<u8> = (0..=255).collect();
        range_for_read(buf.as_ptr(), buf.len());
        range_for_read(buf.as_ptr().wrapping_add(3), 0);
        assert!(buf.iter().enumerate().all(|(i, &b)| b == i as u8));
        range_for_read(std::ptr::null(), 1);
        range_for_read(usize::MAX as *const u8, 200);
    }
}
