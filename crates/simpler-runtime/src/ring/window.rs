//! The task window: at most `window − 1` tasks of a ring are in flight.

/// True when a ring whose next local id is `next_local` and whose oldest unretired task is
/// `last_alive` can take one more task.
#[inline]
pub fn window_has_room(next_local: u32, last_alive: u32, window: u32) -> bool {
    next_local.wrapping_sub(last_alive) + 1 < window
}

/// The window's allocator: hands out local ids in order (orchestrator-owned).
#[derive(Clone, Copy, Debug)]
pub struct TaskWindow {
    size: u32,
    next_local: u32,
}

impl TaskWindow {
    /// An empty window of `size` slots.
    pub fn new(size: u32) -> TaskWindow {
        TaskWindow { size, next_local: 0 }
    }
    /// Slots in the window.
    pub fn size(&self) -> u32 {
        self.size
    }
    /// The local id the next task gets (also: tasks submitted on this ring so far).
    #[inline]
    pub fn next_local(&self) -> u32 {
        self.next_local
    }
    /// True when one more task fits, given the oldest unretired id.
    #[inline]
    pub fn has_room(&self, last_alive: u32) -> bool {
        window_has_room(self.next_local, last_alive, self.size)
    }
    /// Takes the next local id (call after [`TaskWindow::has_room`]).
    #[inline]
    pub fn take(&mut self) -> u32 {
        let local = self.next_local;
        self.next_local = local.wrapping_add(1);
        local
    }
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

    #[test]
    fn the_allocator_hands_out_ids_in_order_within_the_window() {
        let mut w = TaskWindow::new(4);
        let ids: Vec<u32> = (0..3)
            .map(|_| {
                assert!(w.has_room(0));
                w.take()
            })
            .collect();
        assert_eq!(ids, [0, 1, 2]);
        assert!(!w.has_room(0));
        assert!(w.has_room(1));
        assert_eq!(w.next_local(), 3);
    }
}
