//! The producer views of a tensor map's entries, in a column beside the entries.
//!
//! A map whose entries retire (`tmr`'s) keeps each view whole, 80 bytes. A bounded map that
//! never retires (a host-built graph's, one entry per registered output of the whole graph:
//! 1M entries at 1M tasks) keeps each as a template number and a start offset, 12 bytes: the
//! views of one graph differ mostly in their start offset ([`crate::view_pack`], whose rules
//! also say which views are stored whole beside the column instead). Either way [`Views::get`]
//! gives the view back bit for bit.

use crate::view_pack::{PackedView, TemplateTable};
use crate::Tensor;

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
    templates: TemplateTable,
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

    /// The address range of the column's capacity past its last view
    /// ([`super::TensorMap::unwritten_storage`]).
    pub fn unwritten(&self) -> std::ops::Range<usize> {
        match self {
            Views::Whole(column) => super::unwritten(column),
            Views::Packed(p) => super::unwritten(&p.column),
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
        let at = e as usize;
        if at == self.column.len() {
            self.column.push(PackedView::default());
        }
        let old_whole = self.column[at].whole_index();
        // The template last met for the buffer's address is tried first. Written in place
        // (`TemplateTable::pack_into`), not returned and copied.
        let hint = (t.addr().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61) as usize;
        if self.templates.pack_into(t, hint, &mut self.column[at]) {
            if let Some(old) = old_whole {
                self.whole_free.push(old as u32);
            }
            return;
        }
        let index = match old_whole {
            Some(o) => o,
            None => match self.whole_free.pop() {
                Some(i) => i as usize,
                None => self.whole.len(),
            },
        };
        self.column[at] = PackedView::whole(index);
        put(&mut self.whole, index as u32, *t);
    }

    #[inline]
    fn get(&self, e: u32) -> Tensor {
        self.templates.unpack(&self.column[e as usize], |i| self.whole[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view_pack::TEMPLATE_LIMIT;
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
