//! The task graph every view is drawn from, loaded in one streaming pass.
//!
//! Only what the views need is kept: per task its kernel ids, block count and early-dispatch
//! flag; per unique `(pred, succ)` pair its number of annotated rows and which sources it
//! carries. Argument and slice details (HTML `--show-tensor-info`) are read in a second pass by
//! [`crate::detail`], for the shown tasks only.
//!
//! # Which tasks are nodes
//!
//! As in the original viewer: every task that appears as `pred` or `succ` of an edge, plus
//! every task in `tasks[]` with at least one active kernel id. A dummy task (all kernel ids
//! `-1`) with no edges is not shown. A task that appears in edges but not in `tasks[]` is an
//! `alloc` task (created by `alloc_tensors`, never submitted).
//!
//! # What the file does not say
//!
//! The original's writers may leave out `tasks[]`, `tensors[]`, `kernel_ids` or `block_num`
//! (`simpler_artifacts::deps::gaps`). The graph keeps the reader's [`DepsGaps`] and never
//! guesses: a task whose `kernel_ids` is absent is of [`Kind::Unknown`] and shown (it may have
//! kernels); without `tasks[]` every node is [`Kind::Unknown`] (not `alloc`: nothing says it
//! was not submitted); without `tensors[]` the tensor count is unknown.

use std::path::Path;
use std::sync::LazyLock;

use serde::Deserialize;
use simpler_artifacts::deps::canonical::{KeptKeys, Object};
use simpler_artifacts::deps::gaps::source_overlap_gaps;
use simpler_artifacts::deps::{
    self, u64_string, DepsElement, DepsGaps, DepsReadError, DepsSink, EdgeSource, Gap, Overlap, TaskHead,
};

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A submitted task with at least one active kernel.
    Submit,
    /// A submitted task with no kernel (a barrier).
    Dummy,
    /// Not in `tasks[]`: created by `alloc_tensors`, seen only through its edges.
    Alloc,
    /// The file does not say: the task has no `kernel_ids`, or the file has no `tasks[]`.
    Unknown,
}

impl Kind {
    /// The text view's `kind=` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Submit => "submit",
            Kind::Dummy => "dummy",
            Kind::Alloc => "alloc",
            Kind::Unknown => "unknown",
        }
    }
}

/// Which core types a task's kernels run on, from its active kernel slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreType {
    /// Only the AIC (cube) slot is active.
    Aic,
    /// Only AIV (vector) slots are active.
    Aiv,
    /// AIC and AIV slots are both active (`MixedKernels`).
    Mix,
}

/// A task's `kernel_ids`, as far as the file tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernels {
    /// `[aic, aiv0, aiv1]`, `-1` inactive.
    Slots([i32; 3]),
    /// A list of another length: which slot is which core is unknown; `active` says whether
    /// any entry is a kernel id (≥ 0).
    Other {
        /// Some entry is ≥ 0.
        active: bool,
    },
    /// No `kernel_ids`.
    Unknown,
}

impl Kernels {
    /// The kernels a `kernel_ids` list gives (`None`: the file has none, or `null`).
    fn from_list(list: Option<&[i32]>) -> Kernels {
        match list {
            None => Kernels::Unknown,
            Some(&[aic, aiv0, aiv1]) => Kernels::Slots([aic, aiv0, aiv1]),
            Some(other) => Kernels::Other {
                active: other.iter().any(|&k| k >= 0),
            },
        }
    }
}

/// The per-task fields of `tasks[]` that the views use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskInfo {
    /// The kernel slots.
    pub kernels: Kernels,
    /// SPMD block count (1 = normal task); `None` when the file does not say.
    pub block_num: Option<u32>,
    /// The additive `early_dispatch` flag (false when absent).
    pub early_dispatch: bool,
}

impl TaskInfo {
    /// A task with three known slots, `block_num` blocks and no early dispatch.
    pub fn new(kernel_ids: [i32; 3], block_num: u32) -> TaskInfo {
        TaskInfo {
            kernels: Kernels::Slots(kernel_ids),
            block_num: Some(block_num),
            early_dispatch: false,
        }
    }

    /// The `[aic, aiv0, aiv1]` slots, when the file gives them.
    pub fn slots(&self) -> Option<[i32; 3]> {
        match self.kernels {
            Kernels::Slots(s) => Some(s),
            _ => None,
        }
    }

    /// Returns true if and only if at least one kernel slot is known to be active.
    pub fn has_kernel(&self) -> bool {
        match self.kernels {
            Kernels::Slots(s) => s.iter().any(|&k| k >= 0),
            Kernels::Other { active } => active,
            Kernels::Unknown => false,
        }
    }

    /// The SPMD block count, when it is known and greater than 1.
    pub fn spmd_blocks(&self) -> Option<u32> {
        self.block_num.filter(|&b| b > 1)
    }

    /// The core type implied by the active slots, if the slots are known and one is active.
    pub fn core_type(&self) -> Option<CoreType> {
        let s = self.slots()?;
        let aic = s[0] >= 0;
        let aiv = s[1] >= 0 || s[2] >= 0;
        match (aic, aiv) {
            (true, true) => Some(CoreType::Mix),
            (true, false) => Some(CoreType::Aic),
            (false, true) => Some(CoreType::Aiv),
            (false, false) => None,
        }
    }
}

/// One unique `(pred, succ)` task pair, by node index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    /// Producer node index.
    pub pred: u32,
    /// Consumer node index.
    pub succ: u32,
    /// Number of annotated rows in `edges[]` for this pair.
    pub rows: u32,
    /// Bit set of the sources among those rows, plus [`OTHER_OVERLAP_BIT`].
    pub sources: u8,
}

/// Set in [`Pair::sources`] when some tensor-map row of the pair has overlap `other`.
pub const OTHER_OVERLAP_BIT: u8 = 8;
/// Set in [`Pair::sources`] when some row of the pair has source `"unknown"`.
const UNKNOWN_SOURCE_BIT: u8 = 16;
/// Set in [`Pair::sources`] when some row of the pair has overlap `"unknown"`.
pub const UNKNOWN_OVERLAP_BIT: u8 = 32;
/// Set in [`Pair::sources`] when some row of the pair has overlap `"no_overlap"`.
pub const NO_OVERLAP_BIT: u8 = 64;

impl Pair {
    /// Returns true if and only if at least one row of this pair has `source`.
    pub fn has_source(&self, source: EdgeSource) -> bool {
        self.sources & source_bit(source) != 0
    }

    /// Returns true if and only if some tensor-map row of this pair has overlap `other`.
    pub fn has_other_overlap(&self) -> bool {
        self.sources & OTHER_OVERLAP_BIT != 0
    }

    /// The overlap label of the pair: the names of its rows' overlaps other than `covered`
    /// (`other`, `unknown`, `no_overlap`), joined by `/`; empty if there are none.
    pub fn overlap_label(&self) -> String {
        [
            (OTHER_OVERLAP_BIT, Overlap::Other),
            (UNKNOWN_OVERLAP_BIT, Overlap::Unknown),
            (NO_OVERLAP_BIT, Overlap::NoOverlap),
        ]
        .iter()
        .filter(|(bit, _)| self.sources & bit != 0)
        .map(|(_, o)| o.as_str())
        .collect::<Vec<_>>()
        .join("/")
    }
}

fn source_bit(source: EdgeSource) -> u8 {
    match source {
        EdgeSource::Explicit => 1,
        EdgeSource::Creator => 2,
        EdgeSource::Tensormap => 4,
        EdgeSource::Unknown => UNKNOWN_SOURCE_BIT,
    }
}

fn overlap_bit(overlap: Option<Overlap>) -> u8 {
    match overlap {
        Some(Overlap::Other) => OTHER_OVERLAP_BIT,
        Some(Overlap::Unknown) => UNKNOWN_OVERLAP_BIT,
        Some(Overlap::NoOverlap) => NO_OVERLAP_BIT,
        Some(Overlap::Covered) | None => 0,
    }
}

/// The loaded graph. Nodes are indexed `0..len()` in ascending raw task id order; pairs are
/// sorted by `(pred, succ)`.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    ids: Vec<u64>,
    tasks: Vec<Option<TaskInfo>>,
    pairs: Vec<Pair>,
    tensors: u64,
    any_ring: bool,
    gaps: DepsGaps,
    /// Nodes (ascending) that `tasks[]` does not list yet that have a predecessor: not alloc
    /// tasks, which have none, but tasks the file left out ([`Kind::Unknown`]).
    unlisted_succs: Vec<u32>,
}

impl Graph {
    /// Streams `path` and builds the graph.
    pub fn load(path: &Path) -> Result<Graph, DepsReadError> {
        let mut sink = LoadSink::default();
        sink.gaps = deps::read_deps(path, &mut sink)?;
        if let Some((id, first, again)) = sink.duplicate_task() {
            return Err(DepsReadError::invalid(
                path,
                "deps.json",
                format!(
                    "tasks[{again}]: task_id {} ({}) is listed twice (first at tasks[{first}]); \
                     each task appears once",
                    id,
                    display_id(id, true)
                ),
            ));
        }
        Ok(sink.build())
    }

    /// Builds a graph from in-memory rows (used by tests and [`crate::detail`]).
    pub fn from_parts(
        tasks: impl IntoIterator<Item = (u64, TaskInfo)>,
        edges: impl IntoIterator<Item = (u64, u64, EdgeSource)>,
        tensors: u64,
    ) -> Graph {
        let mut sink = LoadSink {
            tensors,
            ..LoadSink::default()
        };
        sink.tasks.extend(tasks);
        sink.edges
            .extend(edges.into_iter().map(|(p, s, src)| (p, s, source_bit(src))));
        sink.build()
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Returns true if and only if the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Raw task id of node `n`.
    pub fn id(&self, n: usize) -> u64 {
        self.ids[n]
    }

    /// The node index of a raw task id, if it is a node.
    pub fn index_of(&self, id: u64) -> Option<usize> {
        self.ids.binary_search(&id).ok()
    }

    /// The `tasks[]` entry of node `n`, if it has one (alloc tasks do not).
    pub fn task(&self, n: usize) -> Option<&TaskInfo> {
        self.tasks[n].as_ref()
    }

    /// What node `n` is.
    pub fn kind(&self, n: usize) -> Kind {
        match &self.tasks[n] {
            None if self.gaps.has(Gap::NoTasksSection) => Kind::Unknown,
            // Found by a review: such a task was shown as an alloc task with a fan-in.
            None if self.unlisted_succs.binary_search(&(n as u32)).is_ok() => Kind::Unknown,
            None => Kind::Alloc,
            Some(t) if t.kernels == Kernels::Unknown => Kind::Unknown,
            Some(t) if t.has_kernel() => Kind::Submit,
            Some(_) => Kind::Dummy,
        }
    }

    /// The first node (by id) that `tasks[]` leaves out although it has a predecessor, and
    /// how many there are: a damaged or edited file (only alloc tasks are left out, and they
    /// have no predecessor).
    pub fn unlisted_succs(&self) -> Option<(u64, usize)> {
        let first = *self.unlisted_succs.first()?;
        Some((self.ids[first as usize], self.unlisted_succs.len()))
    }

    /// What the file left unsaid (the reader's record).
    pub fn gaps(&self) -> &DepsGaps {
        &self.gaps
    }

    /// All unique pairs, sorted by `(pred, succ)`.
    pub fn pairs(&self) -> &[Pair] {
        &self.pairs
    }

    /// Number of `tensors[]` entries; `None` when the file has no `tensors[]`.
    pub fn tensor_count(&self) -> Option<u64> {
        (!self.gaps.has(Gap::NoTensorsSection)).then_some(self.tensors)
    }

    /// Returns true if and only if some node is on a ring ≥ 1, in which case every task is
    /// displayed as `(ring, local)`.
    pub fn any_ring(&self) -> bool {
        self.any_ring
    }

    /// How node `n` is displayed: `(ring, local)` or just `local` (see [`Graph::any_ring`]).
    pub fn display(&self, n: usize) -> String {
        display_id(self.ids[n], self.any_ring)
    }
}

/// Formats a raw task id as `(ring, local)` when `ringed`, else as its local id.
pub fn display_id(id: u64, ringed: bool) -> String {
    let (ring, local) = deps::split_task_id(id);
    if ringed {
        format!("({ring}, {local})")
    } else {
        local.to_string()
    }
}

// === loading ===

#[derive(Debug, PartialEq, Deserialize)]
struct EdgeRow {
    #[serde(with = "u64_string")]
    pred: u64,
    #[serde(with = "u64_string")]
    succ: u64,
    source: EdgeSource,
    #[serde(default)]
    overlap: Option<Overlap>,
}

impl DepsElement for EdgeRow {
    fn note_gaps(&self, gaps: &mut DepsGaps) {
        source_overlap_gaps(gaps, self.source, self.overlap);
    }

    /// Our writer's edges: `pred`, `succ`, `arg` (passed over), `source`, `flags` (passed
    /// over), `overlap` when present, and the rest of the object skipped.
    fn parse_canonical(bytes: &mut [u8]) -> Option<(Self, usize)> {
        static KEPT: LazyLock<KeptKeys> =
            LazyLock::new(|| KeptKeys::new(&["pred", "succ", "source", "overlap"]));
        let mut object = Object::open(bytes)?;
        object.key("pred").then_some(())?;
        let pred = object.digit_string()?;
        object.key("succ").then_some(())?;
        let succ = object.digit_string()?;
        if object.key("arg") {
            object.skip_value()?;
        }
        object.key("source").then_some(())?;
        let source = object.string_as()?;
        if object.key("flags") {
            object.skip_value()?;
        }
        let overlap = match object.key("overlap") {
            true => Some(object.string_as()?),
            false => None,
        };
        let len = object.close(&KEPT)?;
        let edge = EdgeRow {
            pred,
            succ,
            source,
            overlap,
        };
        Some((edge, len))
    }
}

#[derive(Default)]
struct LoadSink {
    tasks: Vec<(u64, TaskInfo)>,
    edges: Vec<(u64, u64, u8)>,
    tensors: u64,
    gaps: DepsGaps,
}

impl DepsSink for LoadSink {
    type Task = TaskHead;
    type Tensor = serde::de::IgnoredAny;
    type Edge = EdgeRow;

    fn task(&mut self, t: TaskHead) {
        let info = TaskInfo {
            kernels: Kernels::from_list(t.kernel_ids.as_deref()),
            block_num: t.block_num,
            early_dispatch: t.early_dispatch.unwrap_or(false),
        };
        self.tasks.push((t.task_id, info));
    }

    fn tensor(&mut self, _: serde::de::IgnoredAny) {
        self.tensors += 1;
    }

    fn edge(&mut self, e: EdgeRow) {
        let bits = source_bit(e.source) | overlap_bit(e.overlap);
        self.edges.push((e.pred, e.succ, bits));
    }
}

impl LoadSink {
    /// The first task id listed twice: (id, first index, second index).
    fn duplicate_task(&self) -> Option<(u64, usize, usize)> {
        let mut order: Vec<(u64, usize)> = self
            .tasks
            .iter()
            .enumerate()
            .map(|(i, (id, _))| (*id, i))
            .collect();
        order.sort_unstable();
        order
            .windows(2)
            .filter(|w| w[0].0 == w[1].0)
            .map(|w| (w[0].0, w[0].1, w[1].1))
            .min_by_key(|&(_, _, again)| again)
    }

    fn build(self) -> Graph {
        let LoadSink {
            mut tasks,
            mut edges,
            tensors,
            gaps,
        } = self;
        // Ids are unique (`Graph::load` checked).
        tasks.sort_by_key(|(id, _)| *id);

        edges.sort_unstable_by_key(|&(p, s, _)| (p, s));
        // The nodes, ascending: shown tasks (sorted above), preds (sorted with the edges) and
        // succs, merged.
        let mut succs: Vec<u64> = edges.iter().map(|&(_, s, _)| s).collect();
        succs.sort_unstable();
        succs.dedup();
        // A task whose kernels are unknown may have some: shown, like one with a kernel.
        let shown = tasks
            .iter()
            .filter(|(_, t)| t.has_kernel() || t.kernels == Kernels::Unknown)
            .map(|(id, _)| *id);
        let preds = edges.iter().map(|&(p, _, _)| p);
        let mut ids: Vec<u64> = Vec::with_capacity(tasks.len() + succs.len());
        merge_into(&mut ids, merge_sorted(shown, preds), succs.iter().copied());
        drop(succs);
        ids.shrink_to_fit();

        let index_of: rustc_hash::FxHashMap<u64, u32> = ids
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, u32::try_from(i).expect("fewer than 2^32 nodes")))
            .collect();
        let index = |id: u64| -> u32 { *index_of.get(&id).expect("every edge endpoint is a node") };

        let mut pairs: Vec<Pair> = Vec::new();
        // Preds come in ascending order: their index only moves forward.
        let mut pred_index = 0usize;
        for &(p, s, bits) in &edges {
            match pairs.last_mut() {
                Some(last) if ids[last.pred as usize] == p && ids[last.succ as usize] == s => {
                    last.rows = last.rows.saturating_add(1);
                    last.sources |= bits;
                }
                _ => {
                    while ids[pred_index] != p {
                        pred_index += 1;
                    }
                    pairs.push(Pair {
                        pred: pred_index as u32,
                        succ: index(s),
                        rows: 1,
                        sources: bits,
                    })
                }
            }
        }
        drop(index_of);
        drop(edges);

        let mut task_of = vec![None; ids.len()];
        // Both ascending: walk them together.
        let mut i = 0;
        for (id, info) in tasks {
            while i < ids.len() && ids[i] < id {
                i += 1;
            }
            if ids.get(i) == Some(&id) {
                task_of[i] = Some(info);
            }
        }
        let any_ring = ids.iter().any(|&id| deps::split_task_id(id).0 >= 1);
        let mut unlisted_succs: Vec<u32> = if gaps.has(Gap::NoTasksSection) {
            Vec::new()
        } else {
            (pairs.iter().map(|p| p.succ))
                .filter(|&s| task_of[s as usize].is_none())
                .collect()
        };
        unlisted_succs.sort_unstable();
        unlisted_succs.dedup();
        Graph {
            ids,
            tasks: task_of,
            pairs,
            tensors,
            any_ring,
            gaps,
            unlisted_succs,
        }
    }
}

/// The ascending union of two ascending sequences (duplicates kept).
fn merge_sorted(a: impl Iterator<Item = u64>, b: impl Iterator<Item = u64>) -> impl Iterator<Item = u64> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(&x), Some(&y)) if x <= y => a.next(),
        (Some(_), Some(_)) => b.next(),
        (Some(_), None) => a.next(),
        (None, _) => b.next(),
    })
}

/// Appends the ascending union of two ascending sequences to `out`, each value once.
fn merge_into(out: &mut Vec<u64>, a: impl Iterator<Item = u64>, b: impl Iterator<Item = u64>) {
    for id in merge_sorted(a, b) {
        if out.last() != Some(&id) {
            out.push(id);
        }
    }
}

// === adjacency ===

/// Compressed fanin/fanout lists over a subset of pairs. Peers are in ascending node order
/// (= ascending raw id).
#[derive(Debug, Clone)]
pub struct Adjacency {
    out_start: Vec<u32>,
    out: Vec<u32>,
    in_start: Vec<u32>,
    inn: Vec<u32>,
}

impl Adjacency {
    /// Builds the lists from the pairs `keep` accepts (by pair index).
    pub fn new(graph: &Graph, keep: impl Fn(usize) -> bool) -> Adjacency {
        let n = graph.len();
        let mut out_deg = vec![0u32; n + 1];
        let mut in_deg = vec![0u32; n + 1];
        for (i, p) in graph.pairs.iter().enumerate() {
            if keep(i) {
                out_deg[p.pred as usize + 1] += 1;
                in_deg[p.succ as usize + 1] += 1;
            }
        }
        for i in 0..n {
            out_deg[i + 1] += out_deg[i];
            in_deg[i + 1] += in_deg[i];
        }
        let total = out_deg[n] as usize;
        let mut out = vec![0u32; total];
        let mut inn = vec![0u32; total];
        let mut out_fill = out_deg.clone();
        let mut in_fill = in_deg.clone();
        // Pairs are sorted by (pred, succ), so both lists come out sorted.
        for (i, p) in graph.pairs.iter().enumerate() {
            if keep(i) {
                let o = &mut out_fill[p.pred as usize];
                out[*o as usize] = p.succ;
                *o += 1;
                let k = &mut in_fill[p.succ as usize];
                inn[*k as usize] = p.pred;
                *k += 1;
            }
        }
        Adjacency {
            out_start: out_deg,
            out,
            in_start: in_deg,
            inn,
        }
    }

    /// Successors of node `n`.
    pub fn fanout(&self, n: usize) -> &[u32] {
        &self.out[self.out_start[n] as usize..self.out_start[n + 1] as usize]
    }

    /// Predecessors of node `n`.
    pub fn fanin(&self, n: usize) -> &[u32] {
        &self.inn[self.in_start[n] as usize..self.in_start[n + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What serde_json makes of the edge at the start of `text`: the value and its length.
    fn serde_edge(text: &[u8]) -> Option<(EdgeRow, usize)> {
        let mut values = serde_json::Deserializer::from_slice(text).into_iter::<EdgeRow>();
        let value = values.next()?.ok()?;
        Some((value, values.byte_offset()))
    }

    fn shortcut(text: &str) -> Option<(EdgeRow, usize)> {
        let mut bytes = text.as_bytes().to_vec();
        let got = EdgeRow::parse_canonical(&mut bytes);
        assert_eq!(bytes, text.as_bytes(), "the bytes are put back");
        got
    }

    /// Each of these is left to serde_json, which reads some and rejects others.
    #[test]
    fn other_edges_are_left_to_serde_json() {
        for text in [
            r#"{"pred":"1","succ":"2","arg":0}"#,
            r#"{"pred":"1","succ":"2","arg":0,"source":"Tensormap"}"#,
            r#"{"pred":"1","succ":"2","arg":0,"source":"t\u0065nsormap"}"#,
            r#"{"pred":"1","succ":"2","source":"creator","overlap":"most"}"#,
            r#"{"pred":"1","succ":"2","source":"creator","overlap":null}"#,
            r#"{"pred":"1","succ":"2","source":"creator","x":1,"source":"creator"}"#,
            r#"{"pred":"1","succ":"2","arg":,"source":"creator"}"#,
            r#"{"pred":"1","succ":"2","arg":0 ,"source":"creator"}"#,
        ] {
            assert_eq!(shortcut(text), None, "{text}");
        }
    }

    proptest! {
        /// Our writer's edges, whatever their fields, take the shortcut to serde_json's
        /// answer, unless a string needs an escape.
        #[test]
        fn our_writers_edges_read_as_serde_json_reads_them(
            pred in 0u64..1 << 40,
            succ in 0u64..1 << 40,
            arg in prop::option::of(-1i32..8),
            source in 0usize..4,
            overlap in prop::option::of(0usize..3),
            flags in any::<bool>(),
            dtype in "[A-Z\"]{0,4}",
        ) {
            use simpler_artifacts::deps::{DepFlag, Edge};
            let sources = [EdgeSource::Explicit, EdgeSource::Creator, EdgeSource::Tensormap, EdgeSource::Unknown];
            let overlaps = [Overlap::Covered, Overlap::Other, Overlap::NoOverlap];
            let edge = Edge {
                arg,
                source: sources[source],
                flags: flags.then(|| vec![DepFlag::Wait]),
                overlap: overlap.map(|o| overlaps[o]),
                consumer_dtype: Some(dtype.clone()),
                consumer_shape: Some(vec![4, 4]),
                ..Edge::explicit(pred, succ)
            };
            let mut text = serde_json::to_vec(&edge).unwrap();
            text.extend_from_slice(b",{}");
            let expected = serde_edge(&text);
            prop_assert!(expected.is_some());
            let mut bytes = text.clone();
            let takes = !dtype.contains('"');
            let got = EdgeRow::parse_canonical(&mut bytes);
            prop_assert_eq!(got, if takes { expected } else { None });
            prop_assert_eq!(bytes, text);
        }
    }
}
