//! What a deps.json left unsaid: the reader's record of every default it filled.
//!
//! This runtime writes every field of the spec. The original's writers do not always: an
//! edges-only file, tasks without `kernel_ids` or `block_num`, a `kernel_ids` list of another
//! length, `"unknown"` sources and overlaps. The reader accepts all of them
//! (`../shared/DECISIONS.md`: liberal in what it accepts from the original's writers) and counts
//! each [`Gap`] in a [`DepsGaps`], which [`read_deps`](super::read_deps) returns. Tools print
//! [`DepsGaps::notes`] so a value that is unknown is never shown as if it were known.
//!
//! Element types say what they leave unknown through [`DepsElement`]; a sink that skips a field
//! (or a whole section, with `IgnoredAny`) reports nothing about it.

use std::collections::BTreeMap;

use serde::de::{DeserializeOwned, IgnoredAny};

use super::{Edge, EdgeSource, Overlap, Task, Tensor};

/// One kind of missing or unknown value in a deps.json.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Gap {
    /// The file has no `tasks` array.
    NoTasksSection,
    /// The file has no `tensors` array.
    NoTensorsSection,
    /// The file has no `edges` array.
    NoEdgesSection,
    /// A task without `scope`.
    TaskWithoutScope,
    /// A task without `kernel_ids`.
    TaskWithoutKernelIds,
    /// A task whose `kernel_ids` does not have the three `[aic, aiv0, aiv1]` entries.
    KernelIdsOfOtherLength,
    /// A task without `block_num`.
    TaskWithoutBlockNum,
    /// A tensor without `version`.
    TensorWithoutVersion,
    /// An edge without `arg`.
    EdgeWithoutArg,
    /// An edge whose `source` is `"unknown"`.
    UnknownSource,
    /// An edge whose `overlap` is `"unknown"`.
    UnknownOverlap,
}

impl Gap {
    /// The sentence a tool prints for `count` occurrences.
    pub fn note(self, count: u64) -> String {
        match self {
            Gap::NoTasksSection => {
                "deps.json has no tasks[]: task kinds, kernels (and so task names) and block counts are unknown"
                    .into()
            }
            Gap::NoTensorsSection => "deps.json has no tensors[]: tensors and buffer sizes are unknown".into(),
            Gap::NoEdgesSection => "deps.json has no edges[]: dependencies are unknown".into(),
            Gap::TaskWithoutScope => format!("{count} task(s) have no scope: auto or manual is unknown"),
            Gap::TaskWithoutKernelIds => {
                format!("deps.json has no kernel_ids for {count} task(s): their kernels and task names are unknown")
            }
            Gap::KernelIdsOfOtherLength => format!(
                "{count} task(s) have kernel_ids with other than 3 entries ([aic, aiv0, aiv1]): their kernel slots \
                 and core types are unknown"
            ),
            Gap::TaskWithoutBlockNum => {
                format!("{count} task(s) have no block_num: whether they are SPMD is unknown (taken as 1 block)")
            }
            Gap::TensorWithoutVersion => format!("{count} tensor(s) have no version (taken as 0)"),
            Gap::EdgeWithoutArg => {
                format!("{count} edge(s) have no arg: the consumer's argument slot is unknown")
            }
            Gap::UnknownSource => format!("{count} edge(s) have source \"unknown\""),
            Gap::UnknownOverlap => format!("{count} edge(s) have overlap \"unknown\""),
        }
    }
}

/// How often each [`Gap`] occurred in one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DepsGaps {
    counts: BTreeMap<Gap, u64>,
}

impl DepsGaps {
    /// Counts one occurrence of `gap`.
    pub fn add(&mut self, gap: Gap) {
        *self.counts.entry(gap).or_default() += 1;
    }

    /// Counts one occurrence of `gap` if `missing`.
    pub fn add_if(&mut self, missing: bool, gap: Gap) {
        if missing {
            self.add(gap);
        }
    }

    /// How often `gap` occurred.
    pub fn count(&self, gap: Gap) -> u64 {
        self.counts.get(&gap).copied().unwrap_or(0)
    }

    /// Returns true if and only if `gap` occurred at least once.
    pub fn has(&self, gap: Gap) -> bool {
        self.count(gap) > 0
    }

    /// Returns true if and only if the file left nothing unsaid.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Adds the counts of `other` (gaps noted by another reader of the same file).
    pub(crate) fn absorb(&mut self, other: DepsGaps) {
        for (gap, n) in other.counts {
            *self.counts.entry(gap).or_default() += n;
        }
    }

    /// Each gap with its count, in [`Gap`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Gap, u64)> + '_ {
        self.counts.iter().map(|(&g, &n)| (g, n))
    }

    /// One sentence per gap, in [`Gap`] order.
    pub fn notes(&self) -> Vec<String> {
        self.iter().map(|(g, n)| g.note(n)).collect()
    }
}

/// An element type a [`DepsSink`](super::DepsSink) reads: it reports what it left unknown.
/// Elements are `Send`: the reader may parse part of a large section on another thread.
pub trait DepsElement: DeserializeOwned + Send {
    /// Adds this element's gaps to `gaps` (none by default).
    fn note_gaps(&self, gaps: &mut DepsGaps) {
        let _ = gaps;
    }

    /// The element at the start of `bytes` and its length, when it is in the exact layout our
    /// writer produces and the answer is sure to be serde_json's; `None` (the default) leaves
    /// it to serde_json. `bytes` may be changed during the call and is as it was after it.
    /// The chunked reader tries this first (see `canonical.rs`).
    fn parse_canonical(bytes: &mut [u8]) -> Option<(Self, usize)> {
        let _ = bytes;
        None
    }
}

/// Skipped elements report nothing.
impl DepsElement for IgnoredAny {}

/// An edge's endpoints are always present; our writer's edges are read by a shortcut.
impl DepsElement for super::EdgeEnds {
    fn parse_canonical(bytes: &mut [u8]) -> Option<(Self, usize)> {
        super::canonical::edge_ends(bytes)
    }
}

impl DepsElement for Task {
    fn note_gaps(&self, gaps: &mut DepsGaps) {
        gaps.add_if(self.scope.is_none(), Gap::TaskWithoutScope);
        if let Some(gap) = kernel_ids_gap(self.kernel_ids.as_ref().map(Vec::len)) {
            gaps.add(gap);
        }
        gaps.add_if(self.block_num.is_none(), Gap::TaskWithoutBlockNum);
    }
}

impl DepsElement for super::TaskHead {
    fn note_gaps(&self, gaps: &mut DepsGaps) {
        if let Some(gap) = kernel_ids_gap(self.kernel_ids.as_ref().map(Vec::len)) {
            gaps.add(gap);
        }
        gaps.add_if(self.block_num.is_none(), Gap::TaskWithoutBlockNum);
    }

    fn parse_canonical(bytes: &mut [u8]) -> Option<(Self, usize)> {
        super::canonical::task_head(bytes)
    }
}

impl DepsElement for Tensor {
    fn note_gaps(&self, gaps: &mut DepsGaps) {
        gaps.add_if(self.version.is_none(), Gap::TensorWithoutVersion);
    }
}

impl DepsElement for Edge {
    fn note_gaps(&self, gaps: &mut DepsGaps) {
        gaps.add_if(self.arg.is_none(), Gap::EdgeWithoutArg);
        source_overlap_gaps(gaps, self.source, self.overlap);
    }
}

/// The gap of a `kernel_ids` of length `len` (`None`: absent), if it is not three slots. For
/// element types other than [`Task`] that read the field.
pub fn kernel_ids_gap(len: Option<usize>) -> Option<Gap> {
    match len {
        None => Some(Gap::TaskWithoutKernelIds),
        Some(3) => None,
        Some(_) => Some(Gap::KernelIdsOfOtherLength),
    }
}

/// The gaps of an edge's `source` and `overlap`. For element types other than [`Edge`] that
/// read these fields.
pub fn source_overlap_gaps(gaps: &mut DepsGaps, source: EdgeSource, overlap: Option<Overlap>) {
    gaps.add_if(source == EdgeSource::Unknown, Gap::UnknownSource);
    gaps.add_if(overlap == Some(Overlap::Unknown), Gap::UnknownOverlap);
}
