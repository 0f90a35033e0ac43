//! The dependency function: which earlier tasks a submit must wait for.
//!
//! This is the single source of truth for edge semantics. The live `tmr` runtime, the `hbg`
//! runtime and the dep_gen replay all call [`compute_fanin`] and [`register_outputs`]; they
//! differ only in their [`FaninSink`] (what happens to each edge) and in their [`TensorMap`]
//! (whether anything ever retires).
//!
//! Order of discovery, per submit:
//! 1. explicit deps in array order (skipped when already retired by the map's watermark);
//! 2. unless the scope is manual, per tensor argument in order (OUTPUT skipped):
//!    a. the creator edge (`owner`, WAIT|RETAIN) for every tag, whatever `manual_dep` says;
//!    b. when the argument's [`TagRule`](crate::TagRule) waits for writers, every overlapping
//!    tensor-map entry, newest first (WAIT), removing the entries it covers when the rule
//!    supersedes them;
//! 3. (after the caller made room) [`register_outputs`] inserts one entry per argument whose
//!    rule registers a writer, unless the scope is manual.
//!
//! What each tag does is [`ArgTag::rule`](crate::ArgTag::rule), and only there.

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::ops::BitOr;

use crate::tensormap::{Overlap, TensorMap, TensorMapFull};
use crate::{DepKind, TaskId, Tensor, TensorArg};

/// Edge flags: WAIT gates readiness, RETAIN keeps the producer's slot and heap alive until the
/// consumer is released.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DepFlags(u8);

impl DepFlags {
    /// No flags.
    pub const NONE: DepFlags = DepFlags(0);
    /// Wait for the producer to complete.
    pub const WAIT: DepFlags = DepFlags(1);
    /// Keep the producer's resources until the consumer is released.
    pub const RETAIN: DepFlags = DepFlags(2);
    /// Both.
    pub const WAIT_RETAIN: DepFlags = DepFlags(3);

    /// True when every flag of `other` is set.
    #[inline]
    pub const fn contains(self, other: DepFlags) -> bool {
        self.0 & other.0 == other.0
    }
    /// The raw bits.
    #[inline]
    pub const fn bits(self) -> u8 {
        self.0
    }
    /// Flag names as written to deps.json (`["wait","retain"]`).
    pub fn names(self) -> Vec<&'static str> {
        let mut v = Vec::with_capacity(2);
        if self.contains(DepFlags::WAIT) {
            v.push("wait");
        }
        if self.contains(DepFlags::RETAIN) {
            v.push("retain");
        }
        v
    }
}

impl BitOr for DepFlags {
    type Output = DepFlags;
    #[inline]
    fn bitor(self, rhs: DepFlags) -> DepFlags {
        DepFlags(self.0 | rhs.0)
    }
}

/// Where an edge came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EdgeSource {
    /// An explicit dependency of the submit.
    Explicit,
    /// The creator (`owner`) of a tensor argument.
    Creator,
    /// A tensor-map hit: an earlier writer of an overlapping view.
    TensorMap,
}

impl EdgeSource {
    /// The deps.json name.
    pub const fn name(self) -> &'static str {
        match self {
            EdgeSource::Explicit => "explicit",
            EdgeSource::Creator => "creator",
            EdgeSource::TensorMap => "tensormap",
        }
    }
}

/// One discovered edge, with what dep_gen needs to annotate it.
#[derive(Clone, Copy, Debug)]
pub struct Edge<'a> {
    /// The producer the consumer depends on.
    pub producer: TaskId,
    /// WAIT, or WAIT|RETAIN.
    pub flags: DepFlags,
    /// Explicit, creator or tensor map.
    pub source: EdgeSource,
    /// The consumer's argument index; `None` for explicit edges.
    pub arg: Option<usize>,
    /// The consumer's view of the tensor (not for explicit edges).
    pub consumer_view: Option<&'a Tensor>,
    /// The producer's view, for tensor-map edges.
    pub producer_view: Option<&'a Tensor>,
    /// The overlap class, for tensor-map edges.
    pub overlap: Option<Overlap>,
}

/// Receives every edge [`compute_fanin`] discovers, in discovery order (duplicates included).
pub trait FaninSink {
    /// Error that aborts the submit (e.g. a full dependency pool).
    type Error;
    /// Called once per discovered edge.
    fn edge(&mut self, edge: &Edge<'_>) -> Result<(), Self::Error>;
}

/// Why [`compute_fanin`] stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaninError<E> {
    /// An explicit dependency that names no task (invalid id or ring ≥ 4) or the task itself.
    InvalidExplicitDep {
        /// Its index in the explicit-dep list.
        index: usize,
        /// The id given.
        id: TaskId,
    },
    /// Tensor argument `arg` is owned by the task being submitted (it would wait for itself).
    SelfDependency {
        /// The argument index.
        arg: usize,
    },
    /// The sink refused an edge.
    Sink(E),
}

impl<E: fmt::Display> fmt::Display for FaninError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaninError::InvalidExplicitDep { index, id } => {
                write!(
                    f,
                    "explicit dependency #{index} is not a task id ({:#x})",
                    id.raw()
                )
            }
            FaninError::SelfDependency { arg } => {
                write!(f, "tensor argument #{arg} is owned by the task being submitted, which cannot wait for itself")
            }
            FaninError::Sink(e) => e.fmt(f),
        }
    }
}

/// Discovers the fanin of `task` (steps 1–2 of the module doc) and hands each edge to `sink`.
/// An explicit dependency of `task` on itself is an error, like an invalid id.
pub fn compute_fanin<S: FaninSink>(
    task: TaskId,
    manual_scope: bool,
    args: &[TensorArg],
    explicit: impl IntoIterator<Item = (TaskId, DepKind)>,
    tmap: &mut TensorMap,
    sink: &mut S,
) -> Result<(), FaninError<S::Error>> {
    for (index, (id, kind)) in explicit.into_iter().enumerate() {
        if !id.is_valid() || id == task {
            return Err(FaninError::InvalidExplicitDep { index, id });
        }
        if id.local() < tmap.watermark(id.ring()) {
            continue;
        }
        let e = Edge {
            producer: id,
            flags: kind.flags(),
            source: EdgeSource::Explicit,
            arg: None,
            consumer_view: None,
            producer_view: None,
            overlap: None,
        };
        sink.edge(&e).map_err(FaninError::Sink)?;
    }
    if manual_scope {
        return Ok(());
    }
    for (i, arg) in args.iter().enumerate() {
        let Some(t) = arg.tensor() else { continue };
        if t.owner().is_valid() {
            if t.owner() == task {
                return Err(FaninError::SelfDependency { arg: i });
            }
            let e = Edge {
                producer: t.owner(),
                flags: DepFlags::WAIT_RETAIN,
                source: EdgeSource::Creator,
                arg: Some(i),
                consumer_view: Some(t),
                producer_view: None,
                overlap: None,
            };
            sink.edge(&e).map_err(FaninError::Sink)?;
        }
        let rule = arg.rule();
        if rule.waits_for_writers {
            tmap.lookup(t, rule.supersedes_covered, |producer, pv, ov| {
                sink.edge(&Edge {
                    producer,
                    flags: DepFlags::WAIT,
                    source: EdgeSource::TensorMap,
                    arg: Some(i),
                    consumer_view: Some(t),
                    producer_view: Some(pv),
                    overlap: Some(ov),
                })
                .map_err(FaninError::Sink)
            })?;
        }
    }
    Ok(())
}

#[inline]
fn registrable(arg: &TensorArg) -> Option<&Tensor> {
    arg.tensor().filter(|_| arg.rule().registers_writer)
}

/// How many entries [`register_outputs`] will insert (so the caller can make room first).
pub fn registrable_outputs(manual_scope: bool, args: &[TensorArg]) -> usize {
    if manual_scope {
        return 0;
    }
    args.iter().filter(|a| registrable(a).is_some()).count()
}

/// Step 3: records `task` as the latest writer of every view whose rule registers a writer.
#[inline]
pub fn register_outputs(
    task: TaskId,
    manual_scope: bool,
    args: &[TensorArg],
    tmap: &mut TensorMap,
) -> Result<(), TensorMapFull> {
    if manual_scope {
        return Ok(());
    }
    for t in args.iter().filter_map(registrable) {
        tmap.insert(t, task)?;
    }
    Ok(())
}

/// The de-duplicated fanin of one task: one entry per producer, flags OR-ed, in first-seen
/// order. The logical graph (replay, hbg) uses it as its sink.
#[derive(Clone, Debug, Default)]
pub struct FaninSet {
    edges: Vec<(TaskId, DepFlags)>,
    index: HashMap<TaskId, usize>,
}

/// Past this many producers a [`FaninSet`] indexes them in a hash map.
pub const FANIN_LINEAR_LIMIT: usize = 32;

impl FaninSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }
    /// Empties the set, keeping its storage.
    pub fn clear(&mut self) {
        self.edges.clear();
        self.index.clear();
    }
    /// Adds a producer; returns true when it is new.
    pub fn add(&mut self, producer: TaskId, flags: DepFlags) -> bool {
        let found = if self.edges.len() <= FANIN_LINEAR_LIMIT {
            self.edges.iter().position(|&(p, _)| p == producer)
        } else {
            if self.index.len() < self.edges.len() {
                self.index
                    .extend(self.edges.iter().enumerate().map(|(i, &(p, _))| (p, i)));
            }
            self.index.get(&producer).copied()
        };
        match found {
            Some(i) => {
                self.edges[i].1 = self.edges[i].1 | flags;
                false
            }
            None => {
                if !self.index.is_empty() {
                    self.index.insert(producer, self.edges.len());
                }
                self.edges.push((producer, flags));
                true
            }
        }
    }
    /// The producers with their OR-ed flags, in first-seen order.
    pub fn edges(&self) -> &[(TaskId, DepFlags)] {
        &self.edges
    }
    /// How many producers the hash index holds: 0 while the set scans linearly (at most
    /// [`FANIN_LINEAR_LIMIT`] producers), then every producer. For tests of the switch.
    #[doc(hidden)]
    pub fn indexed(&self) -> usize {
        self.index.len()
    }
}

impl FaninSink for FaninSet {
    type Error = Infallible;
    fn edge(&mut self, edge: &Edge<'_>) -> Result<(), Infallible> {
        self.add(edge.producer, edge.flags);
        Ok(())
    }
}
