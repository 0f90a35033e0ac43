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

/// Asks the CPU to start loading the cache line of `p`, for reading. A no-op off x86_64.
#[inline(always)]
pub(crate) fn line_for_read(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` needs SSE, which every x86_64 target has; a prefetch only hints
    // the cache: it never faults (an address that is not mapped is dropped, so any `p` will
    // do), reads into a register or writes.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks the CPU to move the cache line of `p` from this core's private caches to the shared
/// last level (`CLDEMOTE`): for a line this core wrote (or the kernel zeroed for it) and
/// another core writes next, which then finds it there instead of waiting for this core to
/// give it up. A no-op off x86_64. Only for lines this core is done with: a line demoted and
/// then touched again by the same core costs more than it saved (`tmr`'s slots, demoted when
/// their task completed or retired, ran 2–2.6× slower, `docs/performance.md` item 95).
#[inline(always)]
pub(crate) fn line_demote(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: CLDEMOTE only hints the cache: it modifies no architectural state, raises no
    // exception but #UD for a LOCK prefix (so it never faults, whatever `p`, mapped or not,
    // as a prefetch), reads into no register and writes no memory the program can see, and
    // leaves the flags and the stack alone, as the options declare (`readonly` keeps it after
    // the stores before it). It is written as bytes (NP 0F 1C /0, ModRM 00: `[rax]`) because
    // the assembler wants the `cldemote` feature for the mnemonic; a CPU without the
    // instruction runs that encoding, in the hint-NOP space 0F 18–0F 1F, as a NOP (Intel SDM).
    unsafe {
        std::arch::asm!(".byte 0x0f, 0x1c, 0x00", in("rax") p, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`line_demote`] for every line of the `bytes` bytes from `start`, the last one included.
#[inline]
pub(crate) fn range_demote(start: *const u8, bytes: usize) {
    each_line(start, bytes, line_demote);
}

/// [`line_for_write`] for every line of the `bytes` bytes from `start`, the last one included.
#[inline(always)]
pub(crate) fn range_for_write(start: *const u8, bytes: usize) {
    each_line(start, bytes, line_for_write);
}

/// [`line_for_read`] for every line of the `bytes` bytes from `start`, the last one included.
#[inline(always)]
pub(crate) fn range_for_read(start: *const u8, bytes: usize) {
    each_line(start, bytes, line_for_read);
}

/// `hint` for an address in every line of the `bytes` bytes from `start`, the last one
/// included (steps of 64 from an unaligned start would miss it). Addresses are computed with
/// `wrapping_add`: they are only hinted, never dereferenced.
#[inline(always)]
fn each_line(start: *const u8, bytes: usize, hint: impl Fn(*const u8)) {
    if bytes == 0 {
        return;
    }
    let mut off = 0;
    while off < bytes {
        hint(start.wrapping_add(off));
        off += 64;
    }
    hint(start.wrapping_add(bytes - 1));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prefetch never faults and changes nothing, for writing or reading, whatever the
    /// address (the SAFETY arguments of `line_for_write` and `line_for_read`): a live buffer,
    /// null, and past the end of everything.
    #[test]
    fn prefetching_leaves_memory_as_it_was() {
        type Hints = (fn(*const u8, usize), fn(*const u8));
        let hints: [Hints; 2] = [(range_for_write, line_for_write), (range_for_read, line_for_read)];
        for (range, line) in hints {
            let buf: Vec<u8> = (0..=255).collect();
            range(buf.as_ptr(), buf.len());
            range(buf.as_ptr().wrapping_add(3), 0);
            assert!(buf.iter().enumerate().all(|(i, &b)| b == i as u8));
            line(std::ptr::null());
            line(usize::MAX as *const u8);
            range(usize::MAX as *const u8, 200);
        }
    }

    /// Demoting lines changes no byte and never faults (the SAFETY argument of
    /// `line_demote`): a live buffer at any start and length, null, and past the end of
    /// everything.
    #[test]
    fn demoting_leaves_memory_as_it_was() {
        let buf: Vec<u8> = (0..=255).collect();
        for (start, end) in [(0, 256), (3, 200), (64, 64), (255, 256)] {
            range_demote(buf.as_ptr().wrapping_add(start), end - start);
        }
        assert!(buf.iter().enumerate().all(|(i, &b)| b == i as u8));
        line_demote(std::ptr::null());
        line_demote(usize::MAX as *const u8);
        range_demote(usize::MAX as *const u8, 200);
    }
}
