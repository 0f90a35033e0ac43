//! Views as a template number and a start offset: 12 bytes where a [`Tensor`] is 80.
//!
//! The views of one graph differ from each other mostly in their start offset (the slices of a
//! vector, the tiles of a matrix), so a store that keeps views for the whole of a graph (a
//! host-built graph's task arguments, its tensor map's producer views) keeps each distinct
//! [`ViewTemplate`] once, in a [`TemplateTable`], and each view as a [`PackedView`].
//!
//! Two kinds of view are not templated, and the store keeps them whole instead, indexing them
//! with [`PackedView::whole`]:
//! - views of a buffer the runtime allocated (an owner task): each such buffer has its own
//!   address and owner, so each of its views would be a template of its own, 88 bytes in the
//!   table and more in its index, where the whole view takes 80;
//! - views past [`TEMPLATE_LIMIT`] templates (a graph of ever new shapes), so the table stays
//!   small.

use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

use crate::{Tensor, ViewTemplate};

/// Distinct templates a table keeps at most; views of further ones are stored whole.
pub const TEMPLATE_LIMIT: usize = 1 << 16;

/// Set in [`PackedView`]'s template number: the rest indexes a view its store keeps whole.
const WHOLE: u32 = 1 << 31;

/// Templates remembered, by the caller's hint, before the table is searched.
const RECENT: usize = 8;

/// One view: the number of its template and its start offset (split in two halves so that
/// lists of them pack at 4-byte alignment: 12 bytes, not 16), or the index of a view its store
/// keeps whole.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PackedView {
    template: u32,
    start_lo: u32,
    start_hi: u32,
}

impl PackedView {
    /// Makes this view template `template` at `start`, field by field.
    #[inline]
    fn set(&mut self, template: u32, start: u64) {
        self.template = template;
        self.start_lo = start as u32;
        self.start_hi = (start >> 32) as u32;
    }

    /// A view the store keeps whole, at `index` of its own.
    ///
    /// # Panics
    /// When `index` is 2^31 or more.
    pub fn whole(index: usize) -> PackedView {
        let index = u32::try_from(index)
            .ok()
            .filter(|&i| i < WHOLE)
            .expect("2^31 views stored whole in one store");
        PackedView {
            template: WHOLE | index,
            ..PackedView::default()
        }
    }

    /// The index given to [`PackedView::whole`], for a view kept whole.
    #[inline]
    pub fn whole_index(&self) -> Option<usize> {
        (self.template & WHOLE != 0).then_some((self.template & !WHOLE) as usize)
    }

    fn start(&self) -> u64 {
        u64::from(self.start_hi) << 32 | u64::from(self.start_lo)
    }
}

/// The distinct templates of one store, and the ones met last.
#[derive(Default)]
pub struct TemplateTable {
    templates: IndexSet<ViewTemplate, FxBuildHasher>,
    /// The template last met per hint (modulo [`RECENT`]).
    recent: [u32; RECENT],
}

impl TemplateTable {
    /// `t` as a template number and its start offset, the template added when new; `None`
    /// when `t` is to be kept whole (see the module documentation).
    ///
    /// `hint` picks the cache entry to try first: what makes consecutive calls likely to meet
    /// the same template (an argument's position in its list, a hash of the buffer address).
    /// It changes only how fast the answer comes, never the answer.
    #[inline]
    pub fn pack(&mut self, t: &Tensor, hint: usize) -> Option<PackedView> {
        let mut v = PackedView::default();
        self.pack_into(t, hint, &mut v).then_some(v)
    }

    /// [`TemplateTable::pack`], written into `dst` (false, `dst` unchanged: to be kept whole).
    /// Its fields are written in place: a `PackedView` returned and then copied was written as
    /// 4 + 8 bytes and read back as 8 + 4, a store-forwarding stall that waited for every
    /// older store of the submit (two thirds of an hbg submit's packing, `docs/performance.md`,
    /// item 76).
    #[inline]
    pub fn pack_into(&mut self, t: &Tensor, hint: usize, dst: &mut PackedView) -> bool {
        let recent = &mut self.recent[hint % RECENT];
        // Compared field by field on `t`: building its template first and comparing that
        // stalled on the stores that had just built it (a third of packing's time).
        if let Some(known) = self.templates.get_index(*recent as usize) {
            if known.matches(t) {
                dst.set(*recent, t.start_offset());
                return true;
            }
        }
        if t.owner().is_valid() {
            return false;
        }
        let (template, start) = t.split_template();
        let id = match self.templates.get_index_of(&template) {
            Some(id) => id,
            None if self.templates.len() < TEMPLATE_LIMIT => self.templates.insert_full(template).0,
            None => return false,
        };
        *recent = id as u32;
        dst.set(*recent, start);
        true
    }

    /// The view `v` packs, bit for bit; `whole` gives the views kept whole by index.
    ///
    /// # Panics
    /// When `v` was not packed by this table.
    #[inline]
    pub fn unpack(&self, v: &PackedView, whole: impl FnOnce(usize) -> Tensor) -> Tensor {
        if let Some(i) = v.whole_index() {
            return whole(i);
        }
        self.templates
            .get_index(v.template as usize)
            .and_then(|t| t.at(v.start()))
            .expect("a packed view names a template of its table and an offset it fits")
    }

    /// Distinct templates kept.
    pub fn len(&self) -> usize {
        self.templates.len()
    }

    /// True when no template is kept yet.
    pub fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, TaskId};

    #[test]
    fn external_views_share_templates_and_owned_ones_are_kept_whole() {
        let ext = Tensor::contiguous(0x1000, 1 << 16, &[64, 256], DType::Float32, TaskId::INVALID).unwrap();
        let own = Tensor::contiguous(0x9000, 1 << 12, &[1024], DType::Float32, TaskId::new(1, 7)).unwrap();
        let mut table = TemplateTable::default();
        let mut whole = Vec::new();
        let mut packed = Vec::new();
        for i in 0..100u32 {
            for (hint, t) in [
                ext.view(&[2, 8], &[i % 60, i % 200]).unwrap(),
                own.view(&[4], &[i]).unwrap(),
                ext.view(&[1, 1 + i % 5], &[i % 64, 0]).unwrap(),
            ]
            .into_iter()
            .enumerate()
            {
                // Hints that miss the cache as often as they hit it give the same answers.
                let v = table.pack(&t, hint * (i as usize % 3)).unwrap_or_else(|| {
                    whole.push(t);
                    PackedView::whole(whole.len() - 1)
                });
                packed.push((v, t));
            }
        }
        assert_eq!(table.len(), 6, "1 + 5 templates of the external buffer");
        assert_eq!(whole.len(), 100, "the owned views");
        for (v, t) in &packed {
            assert_eq!(table.unpack(v, |i| whole[i]), *t);
        }
    }

    #[test]
    fn offsets_past_32_bits_come_back() {
        let big = Tensor::contiguous(0, 1 << 40, &[1 << 30, 256], DType::Int8, TaskId::INVALID).unwrap();
        let t = big.view(&[1, 256], &[(1 << 30) - 1, 0]).unwrap();
        assert!(t.start_offset() > u64::from(u32::MAX));
        let mut table = TemplateTable::default();
        let v = table.pack(&t, 0).unwrap();
        assert_eq!(table.unpack(&v, |_| unreachable!()), t);
    }
}
