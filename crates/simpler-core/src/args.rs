//! Task arguments: tagged tensors, scalars, explicit dependencies and the SPMD launch spec.
//!
//! Builder calls never panic: a violation (too many tensors, a tensor after a scalar, deps set
//! twice, ...) is remembered and surfaces at submit as an `INVALID_ARGS` fatal (code 5).

use std::fmt;

use arrayvec::ArrayVec;

use crate::{DType, DepFlags, TaskId, Tensor, TensorCreateInfo};

/// Maximum tensor arguments of one task.
pub const MAX_TENSOR_ARGS: usize = 32;
/// Maximum scalar arguments of one task.
pub const MAX_SCALAR_ARGS: usize = 16;
/// Explicit deps held inline by [`TaskArgs::dep`]; more need [`TaskArgs::set_dependencies`].
pub const INLINE_DEPS: usize = 16;

/// How a task uses a tensor argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgTag {
    /// Read.
    Input = 0,
    /// Written into a fresh buffer the runtime allocates from a [`TensorCreateInfo`].
    Output = 1,
    /// Read and written in place.
    Inout = 2,
    /// Written (not read) into an existing buffer.
    OutputExisting = 3,
    /// Passed without dependency tracking (creator edge only).
    NoDep = 4,
}

impl ArgTag {
    /// The artifact name, e.g. `"OUTPUT_EXISTING"`.
    pub const fn name(self) -> &'static str {
        match self {
            ArgTag::Input => "INPUT",
            ArgTag::Output => "OUTPUT",
            ArgTag::Inout => "INOUT",
            ArgTag::OutputExisting => "OUTPUT_EXISTING",
            ArgTag::NoDep => "NO_DEP",
        }
    }
    /// Parses an artifact name (case-insensitive).
    pub fn from_name(name: &str) -> Option<ArgTag> {
        [
            ArgTag::Input,
            ArgTag::Output,
            ArgTag::Inout,
            ArgTag::OutputExisting,
            ArgTag::NoDep,
        ]
        .into_iter()
        .find(|t| t.name().eq_ignore_ascii_case(name))
    }
    /// True for the tags a kernel may write through.
    pub const fn writes(self) -> bool {
        matches!(self, ArgTag::Output | ArgTag::Inout | ArgTag::OutputExisting)
    }

    /// The dependency rule of this tag: what an argument with it reads from and registers in
    /// the tensor map. This is the only place that says it; [`crate::compute_fanin`],
    /// [`crate::register_outputs`], the dep_gen replay and the workload tools all ask here.
    ///
    /// Every argument that carries a tensor also gets the creator edge (to the task that
    /// allocated its buffer), whatever the tag; `manual_dep` views and manual scopes turn the
    /// tensor-map part off (see [`TagRule::effective`]).
    pub const fn rule(self) -> TagRule {
        match self {
            ArgTag::Input => TagRule {
                waits_for_writers: true,
                supersedes_covered: false,
                registers_writer: false,
            },
            ArgTag::Inout => TagRule {
                waits_for_writers: true,
                supersedes_covered: true,
                registers_writer: true,
            },
            ArgTag::OutputExisting => TagRule {
                waits_for_writers: false,
                supersedes_covered: false,
                registers_writer: true,
            },
            // OUTPUT has no tensor until the runtime allocates one (nothing earlier can have
            // written it); NO_DEP is passed untracked.
            ArgTag::Output | ArgTag::NoDep => TagRule::UNTRACKED,
        }
    }
}

/// What one tagged tensor argument does in the tensor map; see [`ArgTag::rule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TagRule {
    /// Looks up earlier writers of overlapping views and waits for them (WAIT edges).
    pub waits_for_writers: bool,
    /// The lookup removes the entries this view covers: an in-place update supersedes them.
    pub supersedes_covered: bool,
    /// Registers the task as the latest writer of its view (one tensor-map entry).
    pub registers_writer: bool,
}

impl TagRule {
    /// Neither reads nor registers.
    pub const UNTRACKED: TagRule = TagRule {
        waits_for_writers: false,
        supersedes_covered: false,
        registers_writer: false,
    };

    /// The rule in force for a view with `manual_dep` set or not: `manual_dep` opts the view
    /// out of the tensor map entirely (the creator edge stays).
    pub const fn effective(self, manual_dep: bool) -> TagRule {
        if manual_dep {
            TagRule::UNTRACKED
        } else {
            self
        }
    }
}

/// One tensor argument with its tag.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TensorArg {
    /// See [`ArgTag::Input`].
    Input(Tensor),
    /// See [`ArgTag::Output`]; becomes a tensor when the runtime allocates it.
    Output(TensorCreateInfo),
    /// See [`ArgTag::Inout`].
    Inout(Tensor),
    /// See [`ArgTag::OutputExisting`].
    OutputExisting(Tensor),
    /// See [`ArgTag::NoDep`].
    NoDep(Tensor),
}

impl TensorArg {
    /// The tag.
    #[inline]
    pub fn tag(&self) -> ArgTag {
        match self {
            TensorArg::Input(_) => ArgTag::Input,
            TensorArg::Output(_) => ArgTag::Output,
            TensorArg::Inout(_) => ArgTag::Inout,
            TensorArg::OutputExisting(_) => ArgTag::OutputExisting,
            TensorArg::NoDep(_) => ArgTag::NoDep,
        }
    }
    /// The tensor, or `None` for a not-yet-allocated output.
    #[inline]
    pub fn tensor(&self) -> Option<&Tensor> {
        match self {
            TensorArg::Output(_) => None,
            TensorArg::Input(t)
            | TensorArg::Inout(t)
            | TensorArg::OutputExisting(t)
            | TensorArg::NoDep(t) => Some(t),
        }
    }
    /// The rule in force for this argument: its tag's, off for a `manual_dep` view.
    #[inline]
    pub fn rule(&self) -> TagRule {
        match self.tensor() {
            Some(t) => self.tag().rule().effective(t.manual_dep()),
            None => TagRule::UNTRACKED,
        }
    }
    /// Builds an argument from a tag and a tensor (`Output` is not accepted: it needs a
    /// create-info).
    pub fn with_tag(tag: ArgTag, tensor: Tensor) -> Option<TensorArg> {
        Some(match tag {
            ArgTag::Input => TensorArg::Input(tensor),
            ArgTag::Inout => TensorArg::Inout(tensor),
            ArgTag::OutputExisting => TensorArg::OutputExisting(tensor),
            ArgTag::NoDep => TensorArg::NoDep(tensor),
            ArgTag::Output => return None,
        })
    }
}

/// What an explicit dependency does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DepKind {
    /// Wait for the producer and keep its slot and heap until this task is released (default).
    #[default]
    WaitRetain,
    /// Only wait for the producer.
    Wait,
}

impl DepKind {
    /// The edge flags this kind produces.
    pub const fn flags(self) -> DepFlags {
        match self {
            DepKind::WaitRetain => DepFlags::WAIT_RETAIN,
            DepKind::Wait => DepFlags::WAIT,
        }
    }
}

/// SPMD launch: `block_num` logical blocks, optionally started all at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchSpec {
    /// Number of logical blocks (≥ 1); each runs the kernel with its own block index.
    pub block_num: u16,
    /// All blocks must start together (fatal 7 when more blocks than cores can hold).
    pub require_sync_start: bool,
}

impl Default for LaunchSpec {
    fn default() -> Self {
        LaunchSpec {
            block_num: 1,
            require_sync_start: false,
        }
    }
}

/// A builder-call violation, reported at submit as `INVALID_ARGS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgError {
    /// More than [`MAX_TENSOR_ARGS`] tensors.
    TooManyTensors,
    /// More than [`MAX_SCALAR_ARGS`] scalars.
    TooManyScalars,
    /// A tensor added after a scalar.
    TensorAfterScalar,
    /// More than [`INLINE_DEPS`] deps through [`TaskArgs::dep`].
    TooManyInlineDeps,
    /// A second non-empty `set_dependencies`, or mixing it with `dep`.
    DepsSetTwice,
    /// `kinds` and `ids` of different lengths.
    DepKindsMismatch {
        /// Number of ids.
        ids: usize,
        /// Number of kinds.
        kinds: usize,
    },
    /// `block_num` of 0.
    ZeroBlockNum,
    /// [`TaskArgs::dump_args`] before any argument was added.
    DumpNothing,
    /// [`TaskArgs::dump_arg`] names an argument that was not added.
    DumpArgUnknown {
        /// The index given (tensors first, then scalars).
        index: usize,
        /// Arguments added so far.
        args: usize,
    },
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgError::TooManyTensors => write!(f, "more than {MAX_TENSOR_ARGS} tensor arguments"),
            ArgError::TooManyScalars => write!(f, "more than {MAX_SCALAR_ARGS} scalar arguments"),
            ArgError::TensorAfterScalar => {
                f.write_str("a tensor was added after a scalar; add all tensors first")
            }
            ArgError::TooManyInlineDeps => {
                write!(
                    f,
                    "more than {INLINE_DEPS} deps through dep(); use set_dependencies for more"
                )
            }
            ArgError::DepsSetTwice => f.write_str("explicit dependencies were set twice"),
            ArgError::DepKindsMismatch { ids, kinds } => {
                write!(f, "{ids} dependency ids but {kinds} dependency kinds")
            }
            ArgError::ZeroBlockNum => f.write_str("block_num must be at least 1"),
            ArgError::DumpNothing => {
                f.write_str("dump_args() was called before any argument was added")
            }
            ArgError::DumpArgUnknown { index, args } => write!(
                f,
                "dump_arg({index}) names no argument: {args} argument(s) were added (tensors first, then scalars)"
            ),
        }
    }
}

impl std::error::Error for ArgError {}

/// Explicit deps held inline (from `dep`) or borrowed (from `set_dependencies`).
type InlineDeps = ArrayVec<(TaskId, DepKind), INLINE_DEPS>;

#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)] // inline storage is the point: no allocation per submit
enum ExplicitDeps<'a> {
    Inline(InlineDeps),
    Slice {
        ids: &'a [TaskId],
        kinds: Option<&'a [DepKind]>,
    },
}

/// The explicit dependencies of a [`TaskArgs`] in order, with their kinds
/// ([`TaskArgs::explicit_deps`]). One match per step: the chain of the inline list and the
/// slices it replaces cost every submit about 14 instructions to find both empty.
#[derive(Clone, Debug)]
pub struct ExplicitDepsIter<'a>(DepsCursor<'a>);

#[derive(Clone, Debug)]
enum DepsCursor<'a> {
    Inline(std::slice::Iter<'a, (TaskId, DepKind)>),
    Slice {
        ids: &'a [TaskId],
        kinds: Option<&'a [DepKind]>,
        at: usize,
    },
}

impl Iterator for ExplicitDepsIter<'_> {
    type Item = (TaskId, DepKind);

    #[inline]
    fn next(&mut self) -> Option<(TaskId, DepKind)> {
        match &mut self.0 {
            DepsCursor::Inline(it) => it.next().copied(),
            DepsCursor::Slice { ids, kinds, at } => {
                let id = *ids.get(*at)?;
                let kind = kinds.map_or(DepKind::WaitRetain, |k| k[*at]);
                *at += 1;
                Some((id, kind))
            }
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.0 {
            DepsCursor::Inline(it) => it.len(),
            DepsCursor::Slice { ids, at, .. } => ids.len() - at,
        };
        (n, Some(n))
    }
}

/// The arguments of one submit. Borrowed dependency slices live as long as `'a`.
#[derive(Clone, Debug)]
pub struct TaskArgs<'a> {
    tensors: ArrayVec<TensorArg, MAX_TENSOR_ARGS>,
    scalars: ArrayVec<u64, MAX_SCALAR_ARGS>,
    deps: ExplicitDeps<'a>,
    launch: LaunchSpec,
    early_resolve: bool,
    error: Option<ArgError>,
    dump_mask: u64,
    scalar_dtypes: [Option<DType>; MAX_SCALAR_ARGS],
}

impl Default for TaskArgs<'_> {
    fn default() -> Self {
        TaskArgs::new()
    }
}

impl<'a> TaskArgs<'a> {
    /// Empty arguments.
    pub fn new() -> Self {
        TaskArgs {
            tensors: ArrayVec::new(),
            scalars: ArrayVec::new(),
            deps: ExplicitDeps::Inline(ArrayVec::new()),
            launch: LaunchSpec::default(),
            early_resolve: false,
            error: None,
            dump_mask: 0,
            scalar_dtypes: [None; MAX_SCALAR_ARGS],
        }
    }

    fn fail(&mut self, e: ArgError) {
        self.error.get_or_insert(e);
    }

    /// Adds a tagged tensor argument.
    #[inline]
    pub fn arg(&mut self, arg: TensorArg) -> &mut Self {
        if !self.scalars.is_empty() {
            self.fail(ArgError::TensorAfterScalar);
        } else if self.tensors.try_push(arg).is_err() {
            self.fail(ArgError::TooManyTensors);
        }
        self
    }
    /// Adds an INPUT tensor.
    #[inline]
    pub fn input(&mut self, t: Tensor) -> &mut Self {
        self.arg(TensorArg::Input(t))
    }
    /// Adds a runtime-allocated OUTPUT.
    #[inline]
    pub fn output(&mut self, ci: TensorCreateInfo) -> &mut Self {
        self.arg(TensorArg::Output(ci))
    }
    /// Adds an INOUT tensor.
    #[inline]
    pub fn inout(&mut self, t: Tensor) -> &mut Self {
        self.arg(TensorArg::Inout(t))
    }
    /// Adds an OUTPUT_EXISTING tensor.
    #[inline]
    pub fn output_existing(&mut self, t: Tensor) -> &mut Self {
        self.arg(TensorArg::OutputExisting(t))
    }
    /// Adds a NO_DEP tensor.
    #[inline]
    pub fn no_dep(&mut self, t: Tensor) -> &mut Self {
        self.arg(TensorArg::NoDep(t))
    }
    /// Adds a raw 64-bit scalar (dumped as `UINT64`).
    pub fn scalar(&mut self, bits: u64) -> &mut Self {
        self.scalar_typed(bits, None)
    }
    /// Adds a raw 64-bit scalar whose dtype the args dump records (`None`: `UINT64`).
    pub fn scalar_typed(&mut self, bits: u64, dtype: Option<DType>) -> &mut Self {
        let j = self.scalars.len();
        if self.scalars.try_push(bits).is_err() {
            self.fail(ArgError::TooManyScalars);
        } else {
            self.scalar_dtypes[j] = dtype;
        }
        self
    }
    /// Adds an f32 scalar (its bits, zero-extended).
    pub fn scalar_f32(&mut self, v: f32) -> &mut Self {
        self.scalar_typed(u64::from(v.to_bits()), Some(DType::Float32))
    }
    /// Adds an f64 scalar (its bits; dumped as `UINT64`, there is no 64-bit float dtype).
    pub fn scalar_f64(&mut self, v: f64) -> &mut Self {
        self.scalar(v.to_bits())
    }
    /// Adds an unsigned scalar.
    pub fn scalar_u32(&mut self, v: u32) -> &mut Self {
        self.scalar_typed(u64::from(v), Some(DType::UInt32))
    }
    /// Adds a signed scalar (two's complement bits).
    pub fn scalar_i64(&mut self, v: i64) -> &mut Self {
        self.scalar_typed(v as u64, Some(DType::Int64))
    }

    /// Selects every argument added so far (tensors and scalars) for the args dump; a no-op
    /// unless the run dumps at level 1 (partial) or 3 (hybrid). An error (INVALID_ARGS at
    /// submit) when nothing was added yet.
    pub fn dump_args(&mut self) -> &mut Self {
        let n = self.tensors.len() + self.scalars.len();
        if n == 0 {
            self.fail(ArgError::DumpNothing);
        } else {
            self.dump_mask |= if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        }
        self
    }
    /// Selects argument `index` (tensors first, then scalars: scalar `j` is
    /// `tensors().len() + j`) for the args dump. An error when it was not added yet.
    pub fn dump_arg(&mut self, index: usize) -> &mut Self {
        let n = self.tensors.len() + self.scalars.len();
        if index >= n {
            self.fail(ArgError::DumpArgUnknown { index, args: n });
        } else {
            self.dump_mask |= 1u64 << index;
        }
        self
    }
    /// The args-dump selection: bit `i` selects argument `i` (tensors first, then scalars).
    #[inline]
    pub fn dump_mask(&self) -> u64 {
        self.dump_mask
    }
    /// The dtype of each scalar as the args dump records it (`None`: `UINT64`).
    #[inline]
    pub fn scalar_dtypes(&self) -> &[Option<DType>] {
        &self.scalar_dtypes[..self.scalars.len()]
    }

    fn push_dep(&mut self, id: TaskId, kind: DepKind) -> &mut Self {
        match &mut self.deps {
            ExplicitDeps::Inline(v) => {
                if v.try_push((id, kind)).is_err() {
                    self.fail(ArgError::TooManyInlineDeps);
                }
            }
            ExplicitDeps::Slice { .. } => self.fail(ArgError::DepsSetTwice),
        }
        self
    }
    /// Adds an explicit WAIT|RETAIN dependency on `id`.
    pub fn dep(&mut self, id: TaskId) -> &mut Self {
        self.push_dep(id, DepKind::WaitRetain)
    }
    /// Adds an explicit WAIT-only dependency on `id`.
    pub fn dep_wait(&mut self, id: TaskId) -> &mut Self {
        self.push_dep(id, DepKind::Wait)
    }
    /// Sets all explicit deps (WAIT|RETAIN) from a borrowed slice; an empty slice clears them.
    pub fn set_dependencies(&mut self, ids: &'a [TaskId]) -> &mut Self {
        self.set_deps(ids, None)
    }
    /// Sets all explicit deps with one kind per id.
    pub fn set_dependencies_with_kinds(&mut self, ids: &'a [TaskId], kinds: &'a [DepKind]) -> &mut Self {
        if ids.len() != kinds.len() {
            self.fail(ArgError::DepKindsMismatch {
                ids: ids.len(),
                kinds: kinds.len(),
            });
            return self;
        }
        self.set_deps(ids, Some(kinds))
    }
    fn set_deps(&mut self, ids: &'a [TaskId], kinds: Option<&'a [DepKind]>) -> &mut Self {
        if ids.is_empty() {
            self.deps = ExplicitDeps::Inline(ArrayVec::new());
        } else if self.explicit_dep_count() > 0 {
            self.fail(ArgError::DepsSetTwice);
        } else {
            self.deps = ExplicitDeps::Slice { ids, kinds };
        }
        self
    }
    /// Sets the SPMD block count.
    pub fn block_num(&mut self, n: u16) -> &mut Self {
        if n == 0 {
            self.fail(ArgError::ZeroBlockNum);
        } else {
            self.launch.block_num = n;
        }
        self
    }
    /// Requires all blocks to start at once.
    pub fn require_sync_start(&mut self, yes: bool) -> &mut Self {
        self.launch.require_sync_start = yes;
        self
    }
    /// Marks the task as a candidate for early dispatch (a hint; never changes dependencies).
    pub fn allow_early_resolve(&mut self) -> &mut Self {
        self.early_resolve = true;
        self
    }

    /// The tensor arguments in order.
    #[inline]
    pub fn tensors(&self) -> &[TensorArg] {
        &self.tensors
    }
    /// The scalar arguments in order.
    #[inline]
    pub fn scalars(&self) -> &[u64] {
        &self.scalars
    }
    /// Number of explicit deps.
    pub fn explicit_dep_count(&self) -> usize {
        match &self.deps {
            ExplicitDeps::Inline(v) => v.len(),
            ExplicitDeps::Slice { ids, .. } => ids.len(),
        }
    }
    /// Explicit deps in order, with their kinds.
    #[inline]
    pub fn explicit_deps(&self) -> ExplicitDepsIter<'_> {
        ExplicitDepsIter(match &self.deps {
            ExplicitDeps::Inline(v) => DepsCursor::Inline(v.iter()),
            ExplicitDeps::Slice { ids, kinds } => DepsCursor::Slice {
                ids,
                kinds: *kinds,
                at: 0,
            },
        })
    }
    /// The SPMD launch spec.
    #[inline]
    pub fn launch(&self) -> LaunchSpec {
        self.launch
    }
    /// True when early dispatch was allowed.
    #[inline]
    pub fn early_resolve(&self) -> bool {
        self.early_resolve
    }
    /// The first builder violation, if any.
    #[inline]
    pub fn error(&self) -> Option<&ArgError> {
        self.error.as_ref()
    }
    /// Replaces the output create-info at `idx` with its materialized tensor (runtime use).
    pub fn tensors_mut(&mut self) -> &mut [TensorArg] {
        &mut self.tensors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_selection_marks_added_args_only() {
        let mut a = TaskArgs::new();
        a.dump_args();
        assert_eq!(a.error(), Some(&ArgError::DumpNothing));
        let mut a = TaskArgs::new();
        a.input(t()).input(t()).scalar_f32(2.5).scalar(7);
        a.dump_arg(1).dump_arg(3);
        assert_eq!(a.dump_mask(), 0b1010);
        assert_eq!(a.scalar_dtypes(), &[Some(DType::Float32), None]);
        a.dump_arg(4);
        assert_eq!(a.error(), Some(&ArgError::DumpArgUnknown { index: 4, args: 4 }));
        let mut b = TaskArgs::new();
        b.input(t()).scalar_u32(1).dump_args();
        assert_eq!((b.dump_mask(), b.error()), (0b11, None));
    }

    fn t() -> Tensor {
        Tensor::contiguous(0x1000, 64, &[16], DType::Float32, TaskId::INVALID).unwrap()
    }

    #[test]
    fn caps_and_ordering_are_errors_not_panics() {
        let mut a = TaskArgs::new();
        a.input(t()).scalar(1).input(t());
        assert_eq!(a.error(), Some(&ArgError::TensorAfterScalar));
        let mut a = TaskArgs::new();
        for _ in 0..33 {
            a.input(t());
        }
        assert_eq!(a.tensors().len(), 32);
        assert_eq!(a.error(), Some(&ArgError::TooManyTensors));
        let mut a = TaskArgs::new();
        for i in 0..17 {
            a.scalar(i);
        }
        assert_eq!(a.error(), Some(&ArgError::TooManyScalars));
        let mut a = TaskArgs::new();
        a.block_num(0);
        assert_eq!(a.error(), Some(&ArgError::ZeroBlockNum));
    }

    #[test]
    fn explicit_deps_keep_order_and_kinds() {
        let ids = [TaskId::new(0, 1), TaskId::new(1, 2)];
        let kinds = [DepKind::Wait, DepKind::WaitRetain];
        let mut a = TaskArgs::new();
        a.set_dependencies_with_kinds(&ids, &kinds);
        let got: Vec<_> = a.explicit_deps().collect();
        assert_eq!(got, vec![(ids[0], DepKind::Wait), (ids[1], DepKind::WaitRetain)]);
        a.set_dependencies(&ids);
        assert_eq!(a.error(), Some(&ArgError::DepsSetTwice));

        let mut b = TaskArgs::new();
        b.dep(ids[0]).dep_wait(ids[1]);
        let got: Vec<_> = b.explicit_deps().collect();
        assert_eq!(got, vec![(ids[0], DepKind::WaitRetain), (ids[1], DepKind::Wait)]);
        b.set_dependencies(&[]);
        assert_eq!(b.explicit_dep_count(), 0);
        let mut c = TaskArgs::new();
        c.set_dependencies_with_kinds(&ids, &kinds[..1]);
        assert_eq!(c.error(), Some(&ArgError::DepKindsMismatch { ids: 2, kinds: 1 }));

        // Slices without kinds wait and retain; every form counts down what is left.
        let mut d = TaskArgs::new();
        d.set_dependencies(&ids);
        let mut e = TaskArgs::new();
        e.dep(ids[0]).dep_wait(ids[1]);
        let mut f = TaskArgs::new();
        f.set_dependencies_with_kinds(&ids, &kinds);
        for args in [&d, &e, &f] {
            let mut it = args.explicit_deps();
            assert_eq!(it.size_hint(), (2, Some(2)));
            it.next();
            assert_eq!(it.size_hint(), (1, Some(1)));
            assert_eq!(it.by_ref().count(), 1);
            assert_eq!((it.size_hint(), it.next()), ((0, Some(0)), None));
        }
        let got: Vec<_> = d.explicit_deps().collect();
        assert_eq!(
            got,
            vec![(ids[0], DepKind::WaitRetain), (ids[1], DepKind::WaitRetain)]
        );
        assert_eq!(TaskArgs::new().explicit_deps().size_hint(), (0, Some(0)));
    }
}
