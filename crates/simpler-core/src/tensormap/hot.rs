//! The index of a "hot" buffer: one base address with many live entries (a tiled GEMM's C, a
//! KV cache written slice by slice). Its entries leave the bucket chain and are kept ordered by
//! start offset, so a lookup visits only entries whose element range can reach the consumer's,
//! instead of every entry on the buffer.

use std::collections::BTreeMap;

/// Ordered entries of one hot address.
#[derive(Default, Debug)]
pub(super) struct HotIndex {
    /// (start offset, insert sequence) → entry index.
    by_start: BTreeMap<(u64, u64), u32>,
    /// Largest element extent ever inserted (never lowered: a conservative bound).
    max_extent: u64,
    /// Smallest version ever inserted (a consumer with a newer version overlaps everything).
    min_version: i32,
}

impl HotIndex {
    pub fn new() -> HotIndex {
        HotIndex {
            by_start: BTreeMap::new(),
            max_extent: 0,
            min_version: i32::MAX,
        }
    }
    pub fn insert(&mut self, start: u64, seq: u64, extent: u64, version: i32, entry: u32) {
        self.by_start.insert((start, seq), entry);
        self.max_extent = self.max_extent.max(extent);
        self.min_version = self.min_version.min(version);
    }
    pub fn remove(&mut self, start: u64, seq: u64) {
        self.by_start.remove(&(start, seq));
    }
    pub fn is_empty(&self) -> bool {
        self.by_start.is_empty()
    }
    /// Appends `(seq, entry)` of every entry that may overlap a consumer of `version` spanning
    /// elements `[start, end)`.
    pub fn candidates(&self, start: u64, end: u64, version: i32, out: &mut Vec<(u64, u32)>) {
        if version > self.min_version {
            // The version rule makes every older entry overlap, wherever it lies.
            out.extend(self.by_start.iter().map(|(&(_, seq), &e)| (seq, e)));
            return;
        }
        let lo = start.saturating_sub(self.max_extent);
        out.extend(
            self.by_start
                .range((lo, 0)..(end, 0))
                .map(|(&(_, seq), &e)| (seq, e)),
        );
    }
}
