//! Tensor argument lists too long for a slot, in a host-built graph.
//!
//! A slot holds [`INLINE_ARGS`] tensor arguments in place; a task with more kept them in a
//! heap allocation of its own. `tmr` reuses its slots and with them that allocation's
//! capacity, but an `hbg` graph uses each slot once: a 1M-task tiled GEMM (three arguments a
//! task) made a million 240-byte allocations while its graph was built, faulted their pages in
//! one at a time and freed them one at a time when the run ended. The orchestrator of an `hbg`
//! run instead keeps the first [`INLINE_ARGS`] of such a list in the slot and appends the rest
//! to blocks of [`BLOCK_TENSORS`] tensors ([`ArenaWriter`]), each block's pages faulted in by
//! one system call, and hands the blocks over ([`ArgArena::publish`]) when the build ends,
//! before any scheduler thread starts; the slot keeps where its tail lies ([`ArenaRef`]).

use std::sync::OnceLock;

use simpler_core::{Tensor, MAX_TENSOR_ARGS};

use super::slots::SlotStore;
#[cfg(doc)]
use crate::slot::INLINE_ARGS;

/// Tensors per block (4096 × 80 bytes: 320 KB).
pub(crate) const BLOCK_TENSORS: usize = 4096;

const _: () = assert!(MAX_TENSOR_ARGS <= BLOCK_TENSORS, "a task's list fits one block");

/// Where one task's argument list lies in the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ArenaRef {
    block: u32,
    start: u32,
    len: u32,
}

impl ArenaRef {
    /// Tensors in the list.
    pub fn len(&self) -> usize {
        self.len as usize
    }
}

/// The orchestrator's side: the blocks filled so far.
#[derive(Default)]
pub(crate) struct ArenaWriter {
    blocks: Vec<Vec<Tensor>>,
}

impl ArenaWriter {
    /// Appends the list `fill` pushes (exactly `n` tensors, at most [`MAX_TENSOR_ARGS`]) and
    /// says where it lies. A list never straddles two blocks; a new block comes from `store`
    /// (faulted in ahead by the prefault thread when it can).
    pub fn append(&mut self, store: &SlotStore, n: usize, fill: impl FnOnce(&mut Vec<Tensor>)) -> ArenaRef {
        assert!(n <= MAX_TENSOR_ARGS, "{n} tensors in one list");
        if self.blocks.last().is_none_or(|b| b.capacity() - b.len() < n) {
            let b = store.take_arg_block();
            debug_assert!(b.is_empty() && b.capacity() >= BLOCK_TENSORS);
            self.blocks.push(b);
        }
        let block = self.blocks.len() - 1;
        let b = &mut self.blocks[block];
        let start = b.len();
        fill(b);
        assert_eq!(
            b.len() - start,
            n,
            "the list pushed another length than announced"
        );
        ArenaRef {
            block: block as u32,
            start: start as u32,
            len: n as u32,
        }
    }
}

/// The readers' side: every block, once the build has ended.
#[derive(Default)]
pub(crate) struct ArgArena {
    blocks: OnceLock<Vec<Vec<Tensor>>>,
}

impl ArgArena {
    /// Hands the writer's blocks to the readers (once per run, before the graph launches).
    pub fn publish(&self, w: ArenaWriter) {
        if self.blocks.set(w.blocks).is_err() {
            panic!("the argument arena was published twice");
        }
    }

    /// The list at `at`.
    ///
    /// # Panics
    /// When the arena was not published yet: a task whose list is here runs only after the
    /// build that wrote it ended.
    pub fn get(&self, at: ArenaRef) -> &[Tensor] {
        let blocks = self
            .blocks
            .get()
            .expect("an hbg graph's argument arena is published before the graph launches");
        &blocks[at.block as usize][at.start as usize..][..at.len as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simpler_core::{DType, TaskId};

    fn tile(i: u32) -> Tensor {
        Tensor::contiguous(0x1000, 1 << 20, &[1 << 18], DType::Float32, TaskId::INVALID)
            .unwrap()
            .view(&[4], &[4 * i])
            .unwrap()
    }

    #[test]
    fn lists_come_back_as_written_and_never_straddle_a_block() {
        let store = SlotStore::new(8);
        let mut w = ArenaWriter::default();
        let mut written = Vec::new();
        // 3 tensors per list: a block holds 1365 lists and 1 tensor of room, which the 1366th
        // list does not fit.
        for k in 0..(BLOCK_TENSORS / 3 + 5) as u32 {
            let list: Vec<Tensor> = (0..3).map(|j| tile(3 * k + j)).collect();
            let at = w.append(&store, 3, |b| b.extend_from_slice(&list));
            written.push((at, list));
        }
        assert_eq!(w.blocks.len(), 2);
        assert_eq!(w.blocks[0].len(), BLOCK_TENSORS / 3 * 3);
        let arena = ArgArena::default();
        arena.publish(w);
        for (at, list) in &written {
            assert_eq!(at.len(), 3);
            assert_eq!(arena.get(*at), &list[..]);
        }
        assert_eq!(written[BLOCK_TENSORS / 3].0.block, 1);
        assert_eq!(written[BLOCK_TENSORS / 3].0.start, 0);
    }

    #[test]
    #[should_panic(expected = "published before the graph launches")]
    fn reading_before_publication_is_refused() {
        let mut w = ArenaWriter::default();
        let at = w.append(&SlotStore::new(8), 1, |b| b.push(tile(0)));
        ArgArena::default().get(at);
    }

    #[test]
    #[should_panic(expected = "another length than announced")]
    fn a_list_of_another_length_than_announced_is_refused() {
        ArenaWriter::default().append(&SlotStore::new(8), 2, |b| b.push(tile(0)));
    }
}
