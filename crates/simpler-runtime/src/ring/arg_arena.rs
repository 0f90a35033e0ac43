//! A host-built graph's tensor arguments: one template per distinct view, 12 bytes per argument.
//!
//! An `hbg` run keeps every task of its graph until the graph runs, and a task's tensor
//! arguments were most of its slot: two inline `Tensor`s, 160 of a slot's 336 bytes, and 80
//! bytes more in an arena per argument past two. Yet the views of one graph differ from each
//! other mostly in their start offset (the slices of a vector, the tiles of a matrix): a 1M-task
//! graph of the `simpler bench` workloads has 1 to 4 distinct [`ViewTemplate`]s. So the
//! orchestrator of an `hbg` run stores each argument as a [`PackedView`], a template number
//! and a start offset ([`ArenaWriter::begin`]): the first [`INLINE_ARGS`] in the slot
//! ([`PackedArgs`]), the rest in blocks of [`BLOCK_TENSORS`] (each block's pages faulted in by
//! one system call, by the prefault thread when it keeps ahead). The packing is
//! [`simpler_core::view_pack`]'s, whose rules say which views are stored whole instead (a
//! runtime-allocated buffer's, views past its template limit). When the build ends
//! the orchestrator hands the templates, the whole tensors and the blocks over
//! ([`ArgArena::publish`]), before any scheduler thread starts, and a thread that runs a task
//! reads its arguments back, bit for bit, into a list of its own ([`ArgArena::unpack`]) when
//! the task's kernel first asks for one (`ArgTensors` in
//! `crates/simpler-runtime/src/platform/kernel.rs`).
//!
//! `tmr` reuses its slots, and each keeps its tensors in place (`InlineArgs`, in
//! `crates/simpler-runtime/src/slot.rs`): a template table would grow with every
//! runtime-allocated output of an unbounded run.

use std::sync::OnceLock;

use simpler_core::view_pack::{PackedView, TemplateTable};
use simpler_core::{Tensor, MAX_TENSOR_ARGS};

use super::slots::SlotStore;
use crate::slot::INLINE_ARGS;

/// Packed tensors per block (16384 × 12 bytes: 192 KB).
pub(crate) const BLOCK_TENSORS: usize = 16384;

const _: () = assert!(MAX_TENSOR_ARGS <= BLOCK_TENSORS, "a task's list fits one block");
const _: () = assert!(MAX_TENSOR_ARGS <= u8::MAX as usize, "list lengths fit a u8");

/// Tensors stored whole per chunk (4096 × 80 bytes: 320 KB).
const WHOLE_CHUNK: usize = 4096;

/// A task's packed argument list, as its slot keeps it: the first [`INLINE_ARGS`] in place,
/// the rest at `tail` in the blocks (32 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PackedArgs {
    head: [PackedView; INLINE_ARGS],
    /// Index of the tail's first tensor over all blocks (`block · BLOCK_TENSORS + start`).
    tail: u32,
    tail_len: u8,
    head_len: u8,
}

impl PackedArgs {
    /// Tensors in the list.
    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.head_len) + usize::from(self.tail_len)
    }
}

/// The orchestrator's side: the templates met so far, the tensors stored whole and the blocks
/// filled so far.
#[derive(Default)]
pub(crate) struct ArenaWriter {
    templates: TemplateTable,
    /// Tensors stored whole, in chunks of [`WHOLE_CHUNK`].
    whole: Vec<Vec<Tensor>>,
    blocks: Vec<Vec<PackedView>>,
}

impl ArenaWriter {
    /// Starts packing a list of exactly `n` tensors (at most [`MAX_TENSOR_ARGS`]) into
    /// `list`, in place, pushed through [`ListPacker::push`]. A tail never straddles two
    /// blocks; a new block comes from `store` (faulted in ahead by the prefault thread when it
    /// can).
    ///
    /// In place: a list built on the stack and copied into the slot was written one field at
    /// a time and read back whole, a store-forwarding stall (13 % of an hbg submit's samples).
    pub fn begin<'a>(&'a mut self, store: &SlotStore, n: usize, list: &'a mut PackedArgs) -> ListPacker<'a> {
        assert!(n <= MAX_TENSOR_ARGS, "{n} tensors in one list");
        let tail_len = n.saturating_sub(INLINE_ARGS);
        if tail_len > 0
            && self
                .blocks
                .last()
                .is_none_or(|b| b.capacity() - b.len() < tail_len)
        {
            let b = store.take_arg_block();
            debug_assert!(b.is_empty() && b.capacity() >= BLOCK_TENSORS);
            self.blocks.push(b);
        }
        let tail =
            self.blocks.len().saturating_sub(1) * BLOCK_TENSORS + self.blocks.last().map_or(0, Vec::len);
        list.tail = u32::try_from(tail).expect("2^32 arguments in one graph");
        list.tail_len = tail_len as u8;
        list.head_len = n.min(INLINE_ARGS) as u8;
        ListPacker {
            list,
            pushed: 0,
            writer: self,
        }
    }

    /// Distinct templates met so far, and tensors stored whole.
    #[cfg(test)]
    fn stored(&self) -> (usize, usize) {
        (self.templates.len(), self.whole.iter().map(Vec::len).sum())
    }
}

/// `t` as a template number and an offset in `dst`, the template added when it is new, or
/// stored whole in `whole`. The template last met at the same argument position is tried
/// first: a graph's tasks mostly name the same buffers in the same positions.
#[inline]
fn pack_into(
    templates: &mut TemplateTable,
    whole: &mut Vec<Vec<Tensor>>,
    t: &Tensor,
    position: usize,
    dst: &mut PackedView,
) {
    if !templates.pack_into(t, position, dst) {
        *dst = stored_whole(whole, t);
    }
}

/// `t` stored whole.
#[cold]
fn stored_whole(whole: &mut Vec<Vec<Tensor>>, t: &Tensor) -> PackedView {
    if whole.last().is_none_or(|c| c.len() == WHOLE_CHUNK) {
        whole.push(Vec::with_capacity(WHOLE_CHUNK));
    }
    let chunk = whole.len() - 1;
    let c = whole.last_mut().expect("pushed above");
    c.push(*t);
    PackedView::whole(chunk * WHOLE_CHUNK + c.len() - 1)
}

/// One list being packed ([`ArenaWriter::begin`]).
pub(crate) struct ListPacker<'w> {
    writer: &'w mut ArenaWriter,
    list: &'w mut PackedArgs,
    pushed: usize,
}

impl ListPacker<'_> {
    /// Appends the list's next tensor.
    #[inline]
    pub fn push(&mut self, t: Tensor) {
        let w = &mut *self.writer;
        let dst = if self.pushed < INLINE_ARGS {
            &mut self.list.head[self.pushed]
        } else {
            let block = w.blocks.last_mut().expect("a block was taken for the tail");
            block.push(PackedView::default());
            block.last_mut().expect("pushed above")
        };
        pack_into(&mut w.templates, &mut w.whole, &t, self.pushed, dst);
        self.pushed += 1;
    }

    /// Checks the list is whole (written in place, [`ArenaWriter::begin`]). By reference: the
    /// packer moved into a by-value `finish` was a 16-byte load of its two pointers, stored
    /// 8 bytes at a time just before, a store-forwarding failure (`docs/performance.md`,
    /// item 78).
    ///
    /// # Panics
    /// When another number of tensors than announced was pushed.
    #[inline]
    pub fn finish(&self) {
        assert_eq!(
            self.pushed,
            self.list.len(),
            "the list pushed another length than announced"
        );
    }
}

/// What the readers get once the build has ended.
struct Published {
    templates: TemplateTable,
    whole: Vec<Vec<Tensor>>,
    blocks: Vec<Vec<PackedView>>,
}

/// The readers' side: the templates and every block, once the build has ended.
#[derive(Default)]
pub(crate) struct ArgArena {
    published: OnceLock<Published>,
}

impl ArgArena {
    /// Hands the writer's templates and blocks to the readers (once per run, before the graph
    /// launches).
    pub fn publish(&self, w: ArenaWriter) {
        let p = Published {
            templates: w.templates,
            whole: w.whole,
            blocks: w.blocks,
        };
        if self.published.set(p).is_err() {
            panic!("the argument arena was published twice");
        }
    }

    /// Replaces `out` with the tensors of `list`, as they were packed.
    ///
    /// # Panics
    /// When the arena was not published yet (a task of a host-built graph runs only after the
    /// build that packed its arguments ended), or `list` was not packed by the writer published.
    pub fn unpack(&self, list: &PackedArgs, out: &mut Vec<Tensor>) {
        let p = self
            .published
            .get()
            .expect("an hbg graph's argument arena is published before the graph launches");
        let tensor = |packed: &PackedView| -> Tensor {
            p.templates
                .unpack(packed, |i| p.whole[i / WHOLE_CHUNK][i % WHOLE_CHUNK])
        };
        out.clear();
        out.extend(list.head[..usize::from(list.head_len)].iter().map(tensor));
        if list.tail_len > 0 {
            let (block, start) = (
                list.tail as usize / BLOCK_TENSORS,
                list.tail as usize % BLOCK_TENSORS,
            );
            out.extend(
                p.blocks[block][start..][..usize::from(list.tail_len)]
                    .iter()
                    .map(tensor),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simpler_core::view_pack::TEMPLATE_LIMIT;
    use simpler_core::{DType, TaskId};

    fn tile(i: u32) -> Tensor {
        Tensor::contiguous(0x1000, 1 << 20, &[1 << 18], DType::Float32, TaskId::INVALID)
            .unwrap()
            .view(&[4], &[4 * i])
            .unwrap()
    }

    fn other(i: u32) -> Tensor {
        Tensor::contiguous(
            0x9000,
            1 << 20,
            &[1 << 9, 1 << 9],
            DType::Float32,
            TaskId::new(0, i),
        )
        .unwrap()
        .view(&[2, 2], &[i % 256, 2 * (i % 256)])
        .unwrap()
    }

    fn pack(w: &mut ArenaWriter, store: &SlotStore, list: &[Tensor]) -> PackedArgs {
        let mut packed = PackedArgs::default();
        let mut p = w.begin(store, list.len(), &mut packed);
        list.iter().for_each(|&t| p.push(t));
        p.finish();
        packed
    }

    #[test]
    fn lists_come_back_as_written_and_tails_never_straddle_a_block() {
        let store = SlotStore::new(8, true);
        let mut w = ArenaWriter::default();
        let mut written = Vec::new();
        // 5 tensors per list, 3 of them in the tail: a block holds 5461 tails and 1 tensor of
        // room, which the 5462nd tail does not fit.
        for k in 0..(BLOCK_TENSORS / 3 + 5) as u32 {
            let list: Vec<Tensor> = (0..5)
                .map(|j| if j % 2 == 0 { tile(5 * k + j) } else { other(k) })
                .collect();
            let at = pack(&mut w, &store, &list);
            written.push((at, list));
        }
        // One short list and one empty one, between long ones.
        for list in [vec![other(7)], vec![]] {
            let at = pack(&mut w, &store, &list);
            written.push((at, list));
        }
        assert_eq!(w.blocks.len(), 2);
        assert_eq!(w.blocks[0].len(), BLOCK_TENSORS / 3 * 3);
        // One template for the vector's slices; the matrix's views (each list's own owner, as a
        // runtime-allocated output's) are stored whole, one per list and one more.
        assert_eq!(w.stored(), (1, 2 * (BLOCK_TENSORS / 3 + 5) + 1));
        let arena = ArgArena::default();
        arena.publish(w);
        let mut out = vec![tile(99)];
        for (at, list) in &written {
            assert_eq!(at.len(), list.len());
            arena.unpack(at, &mut out);
            assert_eq!(out, *list);
        }
        assert_eq!(written[BLOCK_TENSORS / 3].0.tail as usize, BLOCK_TENSORS);
    }

    #[test]
    fn views_alternating_between_buffers_share_their_templates() {
        let store = SlotStore::new(8, true);
        let mut w = ArenaWriter::default();
        let a = Tensor::contiguous(0x1000, 1 << 12, &[1 << 10], DType::Float32, TaskId::INVALID).unwrap();
        let b = Tensor::contiguous(0x8000, 1 << 12, &[1 << 10], DType::Float32, TaskId::INVALID).unwrap();
        let lists: Vec<Vec<Tensor>> = (0..100)
            .map(|s| vec![a.view(&[1], &[s]).unwrap(), b.view(&[1], &[s]).unwrap()])
            .collect();
        let packed: Vec<PackedArgs> = lists.iter().map(|l| pack(&mut w, &store, l)).collect();
        assert_eq!(w.stored(), (2, 0));
        assert!(w.blocks.is_empty(), "two arguments fit the slot");
        let arena = ArgArena::default();
        arena.publish(w);
        let mut out = Vec::new();
        for (p, l) in packed.iter().zip(&lists) {
            arena.unpack(p, &mut out);
            assert_eq!(&out, l);
        }
    }

    #[test]
    fn views_of_templates_past_the_limit_are_stored_whole() {
        let store = SlotStore::new(8, true);
        let mut w = ArenaWriter::default();
        let v = Tensor::contiguous(0x1000, 1 << 20, &[1 << 18], DType::Float32, TaskId::INVALID).unwrap();
        // Every length its own shape, so its own template: the last 10 find the table full.
        let lists: Vec<Vec<Tensor>> = (1..=TEMPLATE_LIMIT as u32 + 10)
            .map(|n| vec![v.view(&[n], &[0]).unwrap()])
            .collect();
        let packed: Vec<PackedArgs> = lists.iter().map(|l| pack(&mut w, &store, l)).collect();
        assert_eq!(w.stored(), (TEMPLATE_LIMIT, 10));
        // A view of a template already there still finds it.
        let again = pack(&mut w, &store, &lists[0]);
        assert_eq!(w.stored(), (TEMPLATE_LIMIT, 10));
        let arena = ArgArena::default();
        arena.publish(w);
        let mut out = Vec::new();
        for (p, l) in packed.iter().chain([&again]).zip(lists.iter().chain([&lists[0]])) {
            arena.unpack(p, &mut out);
            assert_eq!(&out, l);
        }
    }

    #[test]
    fn an_offset_past_32_bits_comes_back_whole() {
        let big = Tensor::contiguous(0, 1 << 40, &[1 << 30, 256], DType::Int8, TaskId::INVALID).unwrap();
        let v = big.view(&[1, 256], &[(1 << 30) - 1, 0]).unwrap();
        assert!(v.start_offset() > u64::from(u32::MAX));
        let store = SlotStore::new(8, true);
        let mut w = ArenaWriter::default();
        let at = pack(&mut w, &store, &[v]);
        let arena = ArgArena::default();
        arena.publish(w);
        let mut out = Vec::new();
        arena.unpack(&at, &mut out);
        assert_eq!(out, [v]);
    }

    #[test]
    #[should_panic(expected = "published before the graph launches")]
    fn reading_before_publication_is_refused() {
        let mut w = ArenaWriter::default();
        let at = pack(&mut w, &SlotStore::new(8, true), &[tile(0)]);
        ArgArena::default().unpack(&at, &mut Vec::new());
    }

    #[test]
    #[should_panic(expected = "another length than announced")]
    fn a_list_of_another_length_than_announced_is_refused() {
        let mut w = ArenaWriter::default();
        let mut packed = PackedArgs::default();
        let mut p = w.begin(&SlotStore::new(8, true), 2, &mut packed);
        p.push(tile(0));
        p.finish();
    }
}
