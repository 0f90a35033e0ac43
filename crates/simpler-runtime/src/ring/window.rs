//! The task window rule: at most `window − 1` tasks of a ring are in flight.

/// True when a ring whose next local id is `next_local` and whose oldest unretired task is
/// `last_alive` can take one more task.
#[inline]
pub fn window_has_room(next_local: u32, last_alive: u32, window: u32) -> bool {
    next_local.wrapping_sub(last_alive) + 1 < window
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_window_minus_one_in_flight() {
        assert!(window_has_room(0, 0, 4));
        assert!(window_has_room(2, 0, 4));
        assert!(!window_has_room(3, 0, 4));
        assert!(window_has_room(3, 1, 4));
        // Ids near the 32-bit limit still work.
        assert!(window_has_room(u32::MAX - 1, u32::MAX - 3, 4));
        assert!(!window_has_room(u32::MAX, u32::MAX - 3, 4));
    }
}
