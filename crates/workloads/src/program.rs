//! The expanded, validated form of a workload: a flat list of scope and submit operations over
//! symbolic tensors, which the runner replays on a live orchestrator. Both workload files and
//! `--from-deps` compile to this.

use simpler_core::{ArgTag, DType, DepKind, Tensor, TensorCreateInfo};
use simpler_runtime::{CoreType, MixedKernels, ScopeMode, Site};

/// Where a symbolic tensor's buffer comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    /// External tensor `k` of [`Program::externals`].
    External(usize),
    /// Runtime output slot `k` (filled when its task is submitted).
    Output(usize),
}

/// A view of a base buffer, built against a placeholder buffer at address 0: the runner keeps
/// its shape, strides, offset, dtype, version and `manual_dep`, and takes address, size and
/// owner from the real buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SymTensor {
    pub base: Base,
    pub view: Tensor,
}

/// One tensor argument.
#[derive(Clone, Debug)]
pub(crate) enum ArgOp {
    /// A runtime-allocated output, stored into output slot `slot`.
    Output { ci: TensorCreateInfo, slot: usize },
    /// An existing tensor with its tag (never `Output`).
    Tensor { tag: ArgTag, t: SymTensor },
}

/// One submit (a dummy when `kernels` is all -1).
#[derive(Clone, Debug)]
pub(crate) struct SubmitOp {
    pub kernels: MixedKernels,
    pub args: Vec<ArgOp>,
    pub scalars: Vec<u64>,
    /// Explicit deps: index into the task table, and kind.
    pub deps: Vec<(usize, DepKind)>,
    pub block_num: u16,
    pub require_sync_start: bool,
    pub allow_early_resolve: bool,
    /// Args dump selection mask (bit i = argument i, tensors first).
    pub dump_mask: u64,
}

/// One operation of the flat program.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    /// Opens a scope, at the site scope stats and fatal messages name: the scope statement's
    /// place in the file (`<workload>:<path>.scope`), or a replay's depth.
    Begin(ScopeMode, Site),
    /// Closes the innermost scope.
    End,
    /// Submits a task; its id goes to the next entry of the task table.
    Submit(SubmitOp),
    /// `alloc_tensors`; its id goes to the next entry of the task table.
    Alloc(Vec<(TensorCreateInfo, usize)>),
}

/// How an external tensor is initialized.
#[derive(Clone, Debug)]
pub(crate) enum FillOp {
    /// Left zeroed.
    Zeros,
    /// `f(k)` per element.
    Constant(f64),
    /// `start + step·k`.
    Iota { start: f64, step: f64 },
    /// splitmix64 uniform in `[min, max)`.
    Random { seed: u64, min: f64, max: f64 },
    /// Precomputed values (formula fills).
    Values(Vec<f64>),
}

/// An external tensor to allocate before the run.
#[derive(Clone, Debug)]
pub(crate) struct External {
    pub name: String,
    /// Where the workload file declares it (`tensors[1]`), for a run-time error's message;
    /// `None` for a buffer a `--from-deps` re-run made.
    pub declared_at: Option<String>,
    pub shape: Vec<u32>,
    pub dtype: DType,
    pub fill: FillOp,
}

/// A golden check on an external tensor.
#[derive(Clone, Debug)]
pub(crate) struct Check {
    pub label: String,
    pub external: usize,
    /// The checked view, built on the placeholder buffer.
    pub view: Tensor,
    pub expected: Expected,
    pub tolerance: f64,
}

/// Expected values of a check.
#[derive(Clone, Debug)]
pub(crate) enum Expected {
    /// Every element equals this.
    Constant(f64),
    /// One value per element, row-major.
    Values(Vec<f64>),
}

/// Which kernels the run registers.
#[derive(Clone, Debug)]
pub(crate) enum KernelSet {
    /// The built-in library.
    Library,
    /// A no-op kernel per (func id, core type) (for `--from-deps`).
    Noops(Vec<(u32, CoreType)>),
}

/// A validated, expanded workload.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub externals: Vec<External>,
    pub ops: Vec<Op>,
    /// Number of output slots.
    pub outputs: usize,
    /// Number of tasks (submits, dummies and allocs).
    pub tasks: usize,
    /// Tensor-map inserts (arguments whose tag rule registers a writer).
    pub inserts: usize,
    /// Output bytes over the whole run.
    pub output_bytes: u64,
    pub checks: Vec<Check>,
    pub kernels: KernelSet,
    /// The root scope's site: the workload's name, or a replay's.
    pub root_site: Site,
}

impl Program {
    /// An empty program with the given kernel set, whose root scope is at `root_site`.
    pub fn new(kernels: KernelSet, root_site: Site) -> Program {
        Program {
            root_site,
            externals: Vec::new(),
            ops: Vec::new(),
            outputs: 0,
            tasks: 0,
            inserts: 0,
            output_bytes: 0,
            checks: Vec::new(),
            kernels,
        }
    }

    /// Appends a submit, counting what the runtime will need.
    pub fn push_submit(&mut self, op: SubmitOp, manual: bool) {
        for a in &op.args {
            match a {
                ArgOp::Output { ci, .. } => self.output_bytes += ci.buffer_size_bytes(),
                ArgOp::Tensor { tag, t } => {
                    if !manual && tag.rule().effective(t.view.manual_dep()).registers_writer {
                        self.inserts += 1;
                    }
                }
            }
        }
        self.tasks += 1;
        self.ops.push(Op::Submit(op));
    }

    /// Appends an `alloc_tensors`.
    pub fn push_alloc(&mut self, outs: Vec<(TensorCreateInfo, usize)>) {
        self.output_bytes += outs.iter().map(|(ci, _)| ci.buffer_size_bytes()).sum::<u64>();
        self.tasks += 1;
        self.ops.push(Op::Alloc(outs));
    }

    /// A fresh output slot.
    pub fn new_output(&mut self) -> usize {
        self.outputs += 1;
        self.outputs - 1
    }
}
