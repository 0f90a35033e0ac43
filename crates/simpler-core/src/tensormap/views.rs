//! The producer views of a tensor map's entries, in a column beside the entries.
//!
//! A map whose entries retire (`tmr`'s) keeps each view whole, 80 bytes. A bounded map that
//! never retires (a host-built graph's, one entry per registered output of the whole graph:
//! 1M entries at 1M tasks) keeps each as a template number and a start offset, 12 bytes: the
//! views of one graph differ mostly in their start offset, and each distinct [`ViewTemplate`]
//! is stored once. A view that would only make a template of its own (a runtime-allocated
//! buffer's: its address and owner are its own), and every view past [`TEMPLATE_LIMIT`]
//! templates, is stored whole beside the column instead. Either way [`Views::get`] gives the
//! view back bit for bit.

use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

use crate::{Tensor, ViewTemplate};

/// Distinct templates a packed column keeps at most.
pub const TEMPLATE_LIMIT: usize = 1 << 16;

/// Set in a packed view's template number: the rest indexes a view stored whole.
const WHOLE: u32 = 1 << 31;

/// Templates remembered by buffer address before the table is searched.
const RECENT: usize = 8;

/// One packed view: a template number (or [`WHOLE`] and an index) and the start offset in two
/// halves (12 bytes at 4-byte alignment).
#[derive(Clone, Copy, Default)]
struct PackedView {
    template: u32,
    start_lo: u32,
    start_hi: u32,
}

/// See the module documentation.
pub(super) enum Views {
    /// One view per entry, whole.
    Whole(Vec<Tensor>),
    /// One packed view per entry.
    Packed(Box<Packed>),
}

/// The packed column and what it refers to.
#[derive(Default)]
pub(super) struct Packed {
    column: Vec<PackedView>,
    templates: IndexSet<ViewTemplate, FxBuildHasher>,
    /// The template last met per buffer address hash.
    recent: [u32; RECENT],
    whole: Vec<Tensor>,
    /// Indexes into `whole` of views whose entries were overwritten by templated ones.
    whole_free: Vec<u32>,
}

impl Views {
    /// An empty column, packed or whole.
    pub fn new(packed: bool) -> Views {
        if packed {
            Views::Packed(Box::default())
        } else {
            Views::Whole(Vec::new())
        }
    }

    /// Stores `t` as the view of entry `e` (at most one past the last entry set so far).
    #[inline]
    pub fn set(&mut self, e: u32, t: &Tensor) {
        match self {
            Views::Whole(column) => put(column, e, *t),
            Views::Packed(p) => p.set(e, t),
        }
    }

    /// The view of entry `e`, as it was set.
    #[inline]
    pub fn get(&self, e: u32) -> Tensor {
        match self {
            Views::Whole(column) => column[e as usize],
            Views::Packed(p) => p.get(e),
        }
    }

    /// Distinct templates and views stored whole (packed columns; for tests).
    #[cfg(test)]
    pub fn stored(&self) -> Option<(usize, usize)> {
        match self {
            Views::Whole(_) => None,
            Views::Packed(p) => Some((p.templates.len(), p.whole.len() - p.whole_free.len())),
        }
    }
}

/// Writes `v` at `at` in `column`, which holds `at` elements or more.
#[inline]
fn put<T>(column: &mut Vec<T>, at: u32, v: T) {
    let at = at as usize;
    if at == column.len() {
        column.push(v);
    } else {
        column[at] = v;
    }
}

impl Packed {
    #[inline]
    fn set(&mut self, e: u32, t: &Tensor) {
        let old = self.column.get(e as usize).map(|v| v.template);
        let packed = match self.template_of(t) {
            Some(id) => {
                if let Some(old) = old.filter(|&o| o & WHOLE != 0) {
                    self.whole_free.push(old & !WHOLE);
                }
                let start = t.start_offset();
                PackedView {
                    template: id,
                    start_lo: start as u32,
                    start_hi: (start >> 32) as u32,
                }
            }
            None => {
                let index = match old.filter(|&o| o & WHOLE != 0) {
                    Some(o) => o & !WHOLE,
                    None => match self.whole_free.pop() {
                        Some(i) => i,
                        None => u32::try_from(self.whole.len())
                            .ok()
                            .filter(|&i| i < WHOLE)
                            .expect("2^31 views stored whole in one map"),
                    },
                };
                put(&mut self.whole, index, *t);
                PackedView {
                    template: WHOLE | index,
                    ..PackedView::default()
                }
            }
        };
        put(&mut self.column, e, packed);
    }

    /// The number of `t`'s template, added when new; `None` when `t` is to be stored whole.
    #[inline]
    fn template_of(&mut self, t: &Tensor) -> Option<u32> {
        let slot = (t.addr().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61) as usize % RECENT;
        if let Some(known) = self.templates.get_index(self.recent[slot] as usize) {
            if known.matches(t) {
                return Some(self.recent[slot]);
            }
        }
        if t.owner().is_valid() {
            return None;
        }
        let (template, _) = t.split_template();
        let id = match self.templates.get_index_of(&template) {
            Some(id) => id,
            None if self.templates.len() < TEMPLATE_LIMIT => self.templates.insert_full(template).0,
            None => return None,
        };
        self.recent[slot] = id as u32;
        Some(id as u32)
    }

    #[inline]
    fn get(&self, e: u32) -> Tensor {
        let v = self.column[e as usize];
        if v.template & WHOLE != 0 {
            return self.whole[(v.template & !WHOLE) as usize];
        }
        let start = u64::from(v.start_hi) << 32 | u64::from(v.start_lo);
        self.templates
            .get_index(v.template as usize)
            .and_then(|t| t.at(start))
            .expect("a packed view names a template and an offset it fits")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, TaskId};

    #[test]
    fn every_view_comes_back_and_overwrites_reuse_whole_room() {
        let ext = Tensor::contiguous(0x1000, 1 << 16, &[64, 256], DType::Float32, TaskId::INVALID).unwrap();
        let own = Tensor::contiguous(0x9000, 1 << 12, &[1024], DType::Float32, TaskId::new(1, 7)).unwrap();
        let views: Vec<Tensor> = (0..200u32)
            .map(|i| match i % 3 {
                0 => ext.view(&[2, 8], &[i % 60, i % 200]).unwrap(),
                1 => own.view(&[4], &[i]).unwrap().with_owner(TaskId::new(0, i)),
                _ => ext.view(&[1, 1 + i % 5], &[i % 64, 0]).unwrap(),
            })
            .collect();
        for packed in [false, true] {
            let mut v = Views::new(packed);
            for (e, t) in views.iter().enumerate() {
                v.set(e as u32, t);
            }
            for (e, t) in views.iter().enumerate() {
                assert_eq!(v.get(e as u32), *t, "entry {e}");
            }
            if packed {
                // 1 + 5 templates of the external buffer; the owned views stored whole.
                assert_eq!(v.stored(), Some((6, 67)));
            }
            // Entries reused for other views (the map's free list): whole room is reused too.
            let mut now = views.clone();
            for e in 0..100usize {
                now[e] = views[e + 1];
                v.set(e as u32, &now[e]);
            }
            for (e, t) in now.iter().enumerate() {
                assert_eq!(v.get(e as u32), *t, "entry {e}");
            }
            if packed {
                let owned = now.iter().filter(|t| t.owner().is_valid()).count();
                assert_eq!(owned, 68, "view 100 is in two entries now");
                assert_eq!(v.stored(), Some((6, owned)));
            }
        }
    }

    #[test]
    fn views_past_the_template_limit_are_stored_whole() {
        let ext = Tensor::contiguous(0x1000, 1 << 20, &[1 << 18], DType::Float32, TaskId::INVALID).unwrap();
        let mut v = Views::new(true);
        let n = TEMPLATE_LIMIT as u32 + 5;
        for len in 1..=n {
            v.set(len - 1, &ext.view(&[len], &[0]).unwrap());
        }
        assert_eq!(v.stored(), Some((TEMPLATE_LIMIT, 5)));
        for len in [1, n - 5, n] {
            assert_eq!(v.get(len - 1), ext.view(&[len], &[0]).unwrap());
        }
    }
}
