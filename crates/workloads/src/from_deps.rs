//! `simpler run --from-deps deps.json`: re-runs a captured graph.
//!
//! Every task of `tasks[]` is submitted in file order with a no-op kernel under its
//! `kernel_ids`, its `block_num`, its argument views and its explicit deps:
//!
//! - **Scopes**: a task of ring `r` runs inside scopes nested `r` deep (ring 3: depth 3); a
//!   `"manual"` task runs inside a manual scope (at depth `max(r, 1)`). Sibling scopes at the
//!   same depth cannot be told apart in deps.json, so consecutive tasks of one depth share a
//!   scope.
//! - **Buffers**: one per distinct `buffer_addr` of `tensors[]`. A buffer that some task
//!   reaches through a `creator` edge was that task's runtime output: it becomes the
//!   producer's OUTPUT argument (the k-th lowest address to the k-th OUTPUT), sized from
//!   `buffer_numel`, so readers get the same creator edges. Every other buffer is allocated
//!   as an external tensor of its `buffer_numel` (the largest of its tensors'). A view past that
//!   size is refused (below); only a buffer whose dtype this runtime does not know, and so whose
//!   size in bytes the file does not tell, grows to hold every view of it.
//! - **Views**: each argument's dtype, shape, start_offset, strides and the tensor's version;
//!   `manual_dep` is not in deps.json: it is inferred for an INPUT/INOUT argument of an
//!   auto-scope task that overlaps a live entry of a replayed tensor map but has no
//!   `tensormap` edge in the capture.
//!
//! What cannot be reproduced is reported, never silently dropped: tasks that appear only as
//! `pred` (alloc tasks, which dep_gen does not capture) and the edges from them, arguments whose
//! tensor is missing from `tensors[]`, arguments that read a buffer before its creator. After the
//! run, the wired (pred, succ) pairs are compared with the captured ones, ids mapped by submit
//! order.
//!
//! What no dep_gen writer produces is refused before anything runs, the message naming the file,
//! the element (`tasks[i] (task_id N)`, `tensors[i]`, `edges[i]`) and the field: a task id on a
//! ring the runtime does not have, a task or tensor id listed twice, a ring's local ids out of
//! order or an edge whose pred is not earlier in `tasks[]` (the re-run needs submit order, and
//! the interleaving of rings cannot be recovered), a negative kernel id other than -1, more than
//! 32 tensor arguments, an argument slot listed twice, a view that ends past the size its
//! buffer's `buffer_numel` states (`tasks[i] (task_id N) args[k]`, with both sizes). A dtype this
//! runtime does not know is approximated (a tensor's buffer as UINT8, grown to hold its views;
//! an argument's view in its buffer's dtype) and counted.
//!
//! Files from the original's writers may leave fields out ([`simpler_artifacts::deps::gaps`]).
//! The re-run fills each with a stated default and lists it among the approximations: no
//! `scope` → auto; no usable `kernel_ids` (absent, or not three slots) → a task without
//! kernels; no `block_num` → 1; no tensor `version` → 0; an edge without `arg` → manual_dep is
//! not inferred for its consumer; a `source` of `"unknown"` → the edge is only compared. A file
//! without `tasks[]` has nothing to re-run and is refused.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, ErrorKind};
use simpler_artifacts::deps::{
    read_deps, split_task_id, ArgType, DepFlag, DepsFile, DepsGaps, EdgeSource, Gap, Scope,
};
use simpler_core::{
    register_outputs, ArgTag, DType, DepKind, TaskId, Tensor, TensorArg, TensorCreateInfo, TensorMap,
    TensorMapConfig, TensorParts,
};
use simpler_runtime::config::{RingResource, Settings};
use simpler_runtime::platform::kernel::MAX_FUNC_ID;
use simpler_runtime::{CoreType, MixedKernels, RuntimeKind, ScopeMode};

use crate::expand::MAX_EXTERNAL_BYTES;
use crate::program::{ArgOp, Base, External, FillOp, KernelSet, Op, Program, SubmitOp, SymTensor};
use crate::{build_config, runner, Outcome, Overrides};

/// What a `--from-deps` re-run reproduced and what it could not.
#[derive(Clone, Debug, Default)]
pub struct FromDepsReport {
    /// Tasks re-run (the file's `tasks[]`).
    pub tasks: usize,
    /// External buffers allocated.
    pub external_buffers: usize,
    /// Buffers re-created as runtime outputs of their creator.
    pub output_buffers: usize,
    /// Things in the input that the re-run does not reproduce (edges lost).
    pub not_reproduced: Vec<String>,
    /// Things reproduced approximately (sizes, kernel ids, missing view fields).
    pub approximations: Vec<String>,
    /// (captured id, re-run id) per task, in submit order.
    pub id_map: Vec<(u64, u64)>,
    /// The wired edges compared with the captured ones.
    pub edges: EdgeComparison,
    /// Most tasks one scope of each ring holds in the re-run (under tmr).
    pub max_scope_tasks: [usize; simpler_core::MAX_RINGS],
}

/// Captured (pred, succ) pairs against the pairs the re-run wired, in captured ids. Pairs
/// whose pred is not a captured task are left out (see [`FromDepsReport::not_reproduced`]).
/// deps.json holds the logical graph; a live `tmr` run wires a subset of it (producers that
/// already retired get no edge), so `missing` under `tmr` is not by itself a failure to
/// reproduce; `extra` always is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EdgeComparison {
    /// Distinct captured pairs between captured tasks.
    pub captured: usize,
    /// Distinct pairs the re-run wired.
    pub wired: usize,
    /// Captured pairs the re-run did not wire.
    pub missing: Vec<(u64, u64)>,
    /// Wired pairs that were not captured.
    pub extra: Vec<(u64, u64)>,
}

impl FromDepsReport {
    /// True if and only if nothing was reported as not reproduced and the re-run wired no
    /// pair that was not captured. Captured pairs the live run did not wire are allowed: under
    /// `tmr` a producer that retired before its consumer's submit gets no edge (the re-run's own
    /// deps.json still holds the whole logical graph).
    pub fn complete(&self) -> bool {
        self.not_reproduced.is_empty() && self.edges.extra.is_empty()
    }

    /// Why the re-run is not [complete](FromDepsReport::complete), in one line (the first
    /// item not reproduced, else the wired pairs that were not captured); `None` when it is.
    pub fn shortfall(&self) -> Option<String> {
        if let Some(first) = self.not_reproduced.first() {
            return Some(match self.not_reproduced.len() - 1 {
                0 => format!("not reproduced: {first}"),
                more => format!("not reproduced: {first} (and {more} more)"),
            });
        }
        let (p, s) = self.edges.extra.first()?;
        Some(format!(
            "{} wired pair(s) that were not captured (first: {p} -> {s})",
            self.edges.extra.len()
        ))
    }
}

/// Largest start_offset taken from a capture (keeps byte arithmetic far from overflow).
const MAX_START_OFFSET: u64 = 1 << 40;

struct Buffer {
    bytes: u64,
    dtype: DType,
    /// The `tensors[]` entry (index) whose `buffer_numel` states the buffer's size (the largest
    /// of its tensors'), when every tensor of the buffer has a dtype this runtime knows; `None`
    /// when one does not (the size in bytes is then unknown and grows to hold every view).
    stated_by: Option<usize>,
    /// Creator task index (captured tasks only).
    creator: Option<usize>,
    base: Option<Base>,
    sym: Option<Tensor>,
}

fn dtype_of(name: Option<&str>) -> Option<DType> {
    name.and_then(DType::from_name)
}

fn describe_id(id: u64) -> String {
    let (r, l) = split_task_id(id);
    format!("{id} (ring {r}, local {l})")
}

/// The approximations a re-run makes for what the file left unsaid (see the module docs).
fn gap_approximations(gaps: &DepsGaps) -> Vec<String> {
    gaps.iter()
        .filter_map(|(gap, n)| {
            let what = match gap {
                Gap::TaskWithoutScope => format!("{n} task(s) have no scope: re-run in auto scopes"),
                Gap::TaskWithoutKernelIds | Gap::KernelIdsOfOtherLength => {
                    format!("{} — re-run without kernels (as dummy tasks)", gap.note(n))
                }
                Gap::TaskWithoutBlockNum => format!("{n} task(s) have no block_num: re-run with 1 block"),
                Gap::TensorWithoutVersion => format!("{n} tensor(s) have no version: re-run at version 0"),
                Gap::EdgeWithoutArg => format!(
                    "{n} edge(s) have no arg: manual_dep is not inferred for the arguments of their consumers"
                ),
                Gap::UnknownSource => format!(
                    "{n} edge(s) have source \"unknown\": not used to rebuild the graph, only compared"
                ),
                Gap::NoTensorsSection | Gap::NoEdgesSection | Gap::UnknownOverlap => gap.note(n),
                Gap::NoTasksSection => return None,
            };
            Some(what)
        })
        .collect()
}

/// The element count of a re-created buffer (at least 1): a one-dimensional tensor's shape is
/// a `u32`, so a capture naming a larger buffer is refused rather than re-created truncated
/// (2^32 + 16 elements re-created as 16).
fn buffer_numel(addr: u64, b: &Buffer) -> Result<u32, Error> {
    let numel = b.bytes.div_ceil(b.dtype.size()).max(1);
    u32::try_from(numel).map_err(|_| {
        ErrorKind::NotReproducible(format!(
            "buffer {addr:#x} needs {numel} elements of {}; a re-run buffer holds at most {} (its shape is one u32)",
            b.dtype,
            u32::MAX
        ))
        .into()
    })
}

/// `tasks[i] (task_id N)`: where a task is in the file, for errors.
fn task_at(i: usize, id: u64) -> String {
    format!("tasks[{i}] (task_id {id})")
}

/// Refuses what no dep_gen writer produces and the re-run cannot stand for: a task id on a ring
/// the runtime does not have, a task or tensor listed twice, a ring's tasks out of submit order
/// or an edge whose pred does not come before its succ, a negative kernel id other than -1, more
/// tensor arguments than a task takes, an argument slot listed twice. The message names the
/// element (its index and id) and the field.
fn check_capture(file: &DepsFile) -> Result<(), String> {
    let mut index: HashMap<u64, usize> = HashMap::with_capacity(file.tasks.len());
    // Per ring: the last task seen (its index in tasks[] and local id).
    let mut last: [Option<(usize, u32)>; simpler_core::MAX_RINGS] = [None; simpler_core::MAX_RINGS];
    for (i, task) in file.tasks.iter().enumerate() {
        let at = task_at(i, task.task_id);
        let high = task.task_id >> 32;
        if high >= simpler_core::MAX_RINGS as u64 {
            return Err(format!(
                "{at}: task_id: ring {high} (a task id is ring << 32 | local); the runtime has rings 0 to {}",
                simpler_core::MAX_RINGS - 1
            ));
        }
        if let Some(&j) = index.get(&task.task_id) {
            return Err(format!(
                "{at}: task_id: repeats tasks[{j}]'s; a capture lists each task once"
            ));
        }
        index.insert(task.task_id, i);
        let (ring, local) = split_task_id(task.task_id);
        let ring = usize::from(ring);
        if let Some((j, prev)) = last[ring] {
            if local < prev {
                return Err(format!(
                    "{at}: task_id: local id {local} of ring {ring} comes after tasks[{j}]'s {prev}; dep_gen \
                     writes tasks[] in submit order, in which a ring's local ids increase, and the re-run \
                     submits in file order, so a reordered tasks[] cannot be re-run"
                ));
            }
        }
        last[ring] = Some((i, local));
        for (k, &id) in task.kernel_ids.iter().flatten().enumerate() {
            if id < -1 {
                return Err(format!(
                    "{at}: kernel_ids[{k}]: {id}; a kernel id is -1 (an inactive subslot) or 0 and above"
                ));
            }
        }
        if task.args.len() > simpler_core::MAX_TENSOR_ARGS {
            return Err(format!(
                "{at}: args: {} tensor arguments; a task takes at most {}",
                task.args.len(),
                simpler_core::MAX_TENSOR_ARGS
            ));
        }
        let mut slots: HashMap<i32, usize> = HashMap::with_capacity(task.args.len());
        for (k, a) in task.args.iter().enumerate() {
            if let Some(j) = slots.insert(a.idx, k) {
                return Err(format!(
                    "{at}: args[{k}].idx: {} repeats args[{j}]'s; each argument slot is listed once",
                    a.idx
                ));
            }
        }
    }
    let mut tensors: HashMap<u64, usize> = HashMap::with_capacity(file.tensors.len());
    for (i, t) in file.tensors.iter().enumerate() {
        if let Some(j) = tensors.insert(t.tensor_id, i) {
            return Err(format!(
                "tensors[{i}] (tensor_id {}): tensor_id: repeats tensors[{j}]'s; a capture lists each tensor once",
                t.tensor_id
            ));
        }
    }
    for (k, e) in file.edges.iter().enumerate() {
        let (Some(&p), Some(&s)) = (index.get(&e.pred), index.get(&e.succ)) else {
            continue;
        };
        if p >= s {
            return Err(format!(
                "edges[{k}] ({} edge, pred {}, succ {}): its pred is tasks[{p}], not before its succ tasks[{s}]; \
                 a task depends only on tasks submitted before it, so tasks[] is not in submit order",
                e.source.as_str(),
                e.pred,
                e.succ
            ));
        }
    }
    Ok(())
}

/// The dtypes this runtime does not know (say, from a newer writer), each counted as approximated
/// with the first one's place: a tensor's buffer is re-run as UINT8 (`buffer_numel` bytes), an
/// argument's view in its buffer's dtype.
fn dtype_approximations(file: &DepsFile) -> Vec<String> {
    let mut notes = Vec::new();
    let unknown = |name: &str| DType::from_name(name).is_none();
    let mut tensors = file.tensors.iter().enumerate().filter(|(_, t)| unknown(&t.dtype));
    if let Some((i, t)) = tensors.next() {
        notes.push(format!(
            "{} tensor(s) have a dtype this runtime does not know: their buffers are re-run as UINT8, \
             one byte per element of buffer_numel (first: tensors[{i}] (tensor_id {}) dtype `{}`)",
            1 + tensors.count(),
            t.tensor_id,
            t.dtype
        ));
    }
    let mut args = file.tasks.iter().enumerate().flat_map(|(i, task)| {
        task.args
            .iter()
            .enumerate()
            .filter_map(move |(k, a)| Some((i, task.task_id, k, a.dtype.as_deref().filter(|d| unknown(d))?)))
    });
    if let Some((i, id, k, name)) = args.next() {
        notes.push(format!(
            "{} argument(s) have a dtype this runtime does not know: their views are re-run in their buffer's \
             dtype (first: {} args[{k}].dtype `{name}`)",
            1 + args.count(),
            task_at(i, id)
        ));
    }
    notes
}

/// Compiles a deps.json into a program of no-op tasks; see the module docs. Errors do not name
/// the file ([`run_from_deps`] adds it).
fn compile(file: &DepsFile, report: &mut FromDepsReport) -> Result<Program, Error> {
    if file.gaps.has(Gap::NoTasksSection) {
        return Err(ErrorKind::NotReproducible(format!(
            "{}: there is nothing to re-run",
            Gap::NoTasksSection.note(1)
        ))
        .into());
    }
    check_capture(file).map_err(ErrorKind::NotReproducible)?;
    report.approximations.extend(gap_approximations(&file.gaps));
    report.approximations.extend(dtype_approximations(file));
    let index: HashMap<u64, usize> = file
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.task_id, i))
        .collect();
    let tensors: HashMap<u64, &simpler_artifacts::deps::Tensor> =
        file.tensors.iter().map(|t| (t.tensor_id, t)).collect();

    // Buffers, sized by tensors[] and every view that reads them.
    let mut buffers: HashMap<u64, Buffer> = HashMap::new();
    for (i, t) in file.tensors.iter().enumerate() {
        let known = DType::from_name(&t.dtype);
        let dtype = known.unwrap_or(DType::UInt8);
        let b = buffers.entry(t.buffer_addr).or_insert(Buffer {
            bytes: 0,
            dtype,
            stated_by: Some(i),
            creator: None,
            base: None,
            sym: None,
        });
        let bytes = t.buffer_numel.saturating_mul(dtype.size());
        if known.is_none() {
            b.stated_by = None;
        } else if bytes > b.bytes {
            b.stated_by = b.stated_by.map(|_| i);
        }
        b.bytes = b.bytes.max(bytes);
    }
    for (ti, task) in file.tasks.iter().enumerate() {
        for (k, a) in task.args.iter().enumerate() {
            let Some(t) = a.tensor_id.and_then(|id| tensors.get(&id)) else {
                continue;
            };
            let (Some(shape), Some(strides), Some(start)) = (&a.shape, &a.strides, a.start_offset) else {
                continue;
            };
            // In u128: a sum that wrapped would pass a view past its buffer (or, for a buffer
            // of an unknown dtype, size it too small).
            let extent = simpler_core::view_extent(shape, strides);
            if start > MAX_START_OFFSET {
                continue; // reported below when the view is built
            }
            if extent == 0 {
                // An empty view holds no element, wherever it starts: one starting past the
                // buffer's end (a legal empty slice at its end) grew the buffer to reach it,
                // and a buffer no longer whole rows made disjoint writers overlap (found by a
                // review: a missing and a false edge in the replay).
                continue;
            }
            if let Some(b) = buffers.get_mut(&t.buffer_addr) {
                // The view is built in the same dtype.
                let dtype = dtype_of(a.dtype.as_deref()).unwrap_or(b.dtype);
                let end = (u128::from(start) + extent) * u128::from(dtype.size());
                match b.stated_by {
                    // A view past the size the file states: no capture holds one (a runtime
                    // view lies within its buffer). It was re-run on a buffer grown to fit it,
                    // without a word (found by a review).
                    Some(i) if end > u128::from(b.bytes) => {
                        let s = &file.tensors[i];
                        return Err(ErrorKind::NotReproducible(format!(
                            "{} args[{k}]: its view (start_offset {start}, shape {shape:?}, strides {strides:?}, \
                             {dtype}) ends at byte {end}, past the end of its buffer {:#x}: {} bytes \
                             (tensors[{i}] (tensor_id {}) buffer_numel {} of {}); a view lies within its buffer",
                            task_at(ti, task.task_id),
                            t.buffer_addr,
                            b.bytes,
                            s.tensor_id,
                            s.buffer_numel,
                            s.dtype
                        ))
                        .into());
                    }
                    Some(_) => {}
                    // A buffer of a dtype this runtime does not know: its size in bytes is
                    // unknown (counted in `dtype_approximations`), so it holds every view of it.
                    None => b.bytes = b.bytes.max(u64::try_from(end).unwrap_or(u64::MAX)),
                }
            }
        }
    }

    // Creators, from creator edges; preds that are not captured tasks.
    let mut uncaptured: HashMap<u64, (usize, usize)> = HashMap::new(); // pred -> (creator, explicit)
    for e in &file.edges {
        let captured = index.contains_key(&e.pred);
        if !captured {
            let c = uncaptured.entry(e.pred).or_default();
            if e.source == EdgeSource::Explicit {
                c.1 += 1;
            } else {
                c.0 += 1;
            }
            continue;
        }
        if e.source != EdgeSource::Creator {
            continue;
        }
        let Some(t) = e.tensor_id.and_then(|id| tensors.get(&id)) else {
            continue;
        };
        if let Some(b) = buffers.get_mut(&t.buffer_addr) {
            b.creator = Some(index[&e.pred]);
        }
    }
    let mut uncaptured: Vec<_> = uncaptured.into_iter().collect();
    uncaptured.sort_unstable();
    for (pred, (creator, explicit)) in &uncaptured {
        report.not_reproduced.push(format!(
            "task {} is not in tasks[] (an alloc_tensors task: dep_gen does not capture them): \
             its {creator} creator/tensormap edge(s) and {explicit} explicit dep(s) are not reproduced, \
             and its buffers were allocated as external tensors",
            describe_id(*pred)
        ));
    }

    // Match each creator's buffers (by address) to its OUTPUT args (in order).
    let mut created: HashMap<usize, Vec<u64>> = HashMap::new();
    for (&addr, b) in &buffers {
        if let Some(c) = b.creator {
            created.entry(c).or_default().push(addr);
        }
    }
    let mut out_buffer: HashMap<(usize, usize), u64> = HashMap::new(); // (task, k-th output) -> addr
    for (task, mut addrs) in created {
        addrs.sort_unstable();
        let outs = file.tasks[task]
            .args
            .iter()
            .filter(|a| a.arg_type == ArgType::Output)
            .count();
        if addrs.len() > outs {
            report.approximations.push(format!(
                "task {} created {} buffers but has {outs} OUTPUT args; the extra buffers were allocated as external tensors",
                describe_id(file.tasks[task].task_id),
                addrs.len()
            ));
        }
        for (k, addr) in addrs.into_iter().enumerate() {
            if k < outs {
                out_buffer.insert((task, k), addr);
            } else if let Some(b) = buffers.get_mut(&addr) {
                b.creator = None;
            }
        }
    }

    let mut prog = Program::new(
        KernelSet::Noops(Vec::new()),
        simpler_runtime::Site::interned("replay root"),
    );
    // External buffers, by address.
    let mut addrs: Vec<u64> = buffers.keys().copied().collect();
    addrs.sort_unstable();
    for addr in addrs {
        let b = buffers.get_mut(&addr).expect("key from the map");
        if b.creator.is_some() {
            continue;
        }
        if b.bytes > MAX_EXTERNAL_BYTES {
            return Err(ErrorKind::NotReproducible(format!(
                "buffer {addr:#x} needs {} bytes; the re-run allocates at most {MAX_EXTERNAL_BYTES} bytes per external buffer",
                b.bytes
            ))
            .into());
        }
        let numel = buffer_numel(addr, b)?;
        let bytes = u64::from(numel) * b.dtype.size();
        let k = prog.externals.len();
        prog.externals.push(External {
            name: format!("buffer_{addr:#x}"),
            declared_at: None,
            shape: vec![numel],
            dtype: b.dtype,
            fill: FillOp::Zeros,
        });
        b.base = Some(Base::External(k));
        b.sym = Tensor::contiguous(0, bytes, &[numel], b.dtype, TaskId::INVALID).ok();
        report.external_buffers += 1;
    }

    // Explicit deps per consumer, in file order.
    let mut explicit: HashMap<u64, Vec<(u64, DepKind)>> = HashMap::new();
    for e in &file.edges {
        if e.source == EdgeSource::Explicit {
            let kind = match &e.flags {
                Some(f) if !f.contains(&DepFlag::Retain) => DepKind::Wait,
                _ => DepKind::WaitRetain,
            };
            explicit.entry(e.succ).or_default().push((e.pred, kind));
        }
    }

    // Kernels: a no-op per (id, core type); ids used on both core types are split.
    let mut kernel_core: HashMap<i32, CoreType> = HashMap::new();
    let mut remap: HashMap<(i32, CoreType), i32> = HashMap::new();
    let mut next_free = MAX_FUNC_ID as i32 - 1;
    let mut used_ids: BTreeSet<i32> = file
        .tasks
        .iter()
        .filter_map(|t| t.kernel_slots())
        .flatten()
        .filter(|&k| k >= 0)
        .collect();
    let mut kernel = |id: i32, core: CoreType, report: &mut FromDepsReport| -> i32 {
        if id < 0 {
            return -1;
        }
        if let Some(&r) = remap.get(&(id, core)) {
            return r;
        }
        let fits = id < MAX_FUNC_ID as i32;
        let r = match kernel_core.get(&id) {
            _ if !fits => None,
            Some(&c) if c != core => None,
            _ => Some(id),
        };
        let r = r.unwrap_or_else(|| {
            while used_ids.contains(&next_free) {
                next_free -= 1;
            }
            used_ids.insert(next_free);
            report.approximations.push(format!(
                "kernel id {id} on {} cores re-runs as func id {next_free} ({})",
                core.name(),
                if fits {
                    "the id is also used on the other core type"
                } else {
                    "ids must be below 1024"
                }
            ));
            next_free
        });
        kernel_core.insert(r, core);
        remap.insert((id, core), r);
        r
    };

    // Tensor-map edges per (consumer, arg slot) in the capture, for inferring manual_dep; a
    // consumer with an edge whose slot is unknown gets no inference at all.
    let tensormap_args: std::collections::HashSet<(u64, i32)> = file
        .edges
        .iter()
        .filter(|e| e.source == EdgeSource::Tensormap)
        .filter_map(|e| Some((e.succ, e.arg?)))
        .collect();
    let unknown_slots: std::collections::HashSet<u64> = file
        .edges
        .iter()
        .filter(|e| e.source != EdgeSource::Explicit && e.arg.is_none())
        .map(|e| e.succ)
        .collect();
    let mut sim = TensorMap::new(TensorMapConfig::unbounded());
    let mut inferred_manual_dep = 0usize;
    let mut changed_block_num: Vec<(u64, u32, u16)> = Vec::new();

    // Tasks, with the scope structure their rings imply.
    let mut stack: Vec<ScopeMode> = Vec::new();
    // Tasks in the open scope instance at each depth (index 0 = root), and the most any one
    // scope instance of each ring holds under tmr.
    let mut in_scope: Vec<usize> = vec![0];
    let mut max_in_scope = [0usize; simpler_core::MAX_RINGS];
    let mut unknown_tensor_args = 0usize;
    // (first task index, its id, arguments) reading a buffer before its creator ran.
    let mut before_creator: Option<(usize, u64, usize)> = None;
    let mut approx_views = 0usize;
    // The first argument of each kind above: (task index, its id, the argument's idx).
    let (mut first_unknown, mut first_approx) = (None, None);
    let mut unsized_outputs = 0usize;
    for (ti, task) in file.tasks.iter().enumerate() {
        let (ring, _) = split_task_id(task.task_id);
        let manual = task.scope == Some(Scope::Manual);
        let target = if manual {
            usize::from(ring).max(1)
        } else {
            usize::from(ring)
        }
        .min(3);
        let has_manual = |s: &Vec<ScopeMode>| s.contains(&ScopeMode::Manual);
        if manual {
            while stack.len() > target {
                stack.pop();
                in_scope.pop();
                prog.ops.push(Op::End);
            }
            if !has_manual(&stack) && stack.len() == target {
                stack.pop();
                in_scope.pop();
                prog.ops.push(Op::End);
            }
        } else {
            while stack.len() > target || has_manual(&stack) {
                stack.pop();
                in_scope.pop();
                prog.ops.push(Op::End);
            }
        }
        while stack.len() < target {
            let m = if manual && (stack.len() + 1 == target || has_manual(&stack)) {
                ScopeMode::Manual
            } else {
                ScopeMode::Auto
            };
            stack.push(m);
            in_scope.push(0);
            let site = simpler_runtime::Site::interned(&format!("replay depth {}", stack.len()));
            prog.ops.push(Op::Begin(m, site));
        }
        let depth = stack.len();
        in_scope[depth] += 1;
        let ring = depth.min(simpler_core::MAX_RINGS - 1);
        max_in_scope[ring] = max_in_scope[ring].max(in_scope[depth]);

        let [aic, aiv0, aiv1] = task.kernel_slots().unwrap_or([-1; 3]);
        let kernels = MixedKernels {
            aic: kernel(aic, CoreType::Aic, report),
            aiv0: kernel(aiv0, CoreType::Aiv, report),
            aiv1: kernel(aiv1, CoreType::Aiv, report),
        };

        let mut args_sorted: Vec<_> = task.args.iter().collect();
        args_sorted.sort_by_key(|a| a.idx);
        let mut args = Vec::with_capacity(args_sorted.len());
        // Per pushed argument: its slot index and the captured buffer address (for the
        // inference pass, which keys buffers by their captured address).
        let mut arg_meta: Vec<(i32, u64)> = Vec::with_capacity(args_sorted.len());
        let mut out_k = 0usize;
        for a in args_sorted {
            if a.arg_type == ArgType::Output {
                let ci = match out_buffer
                    .get(&(ti, out_k))
                    .and_then(|addr| Some((*addr, buffers.get(addr)?)))
                {
                    Some((addr, b)) => TensorCreateInfo::new(&[buffer_numel(addr, b)?], b.dtype),
                    None => {
                        unsized_outputs += 1;
                        TensorCreateInfo::new(&[1], DType::Float32)
                    }
                }
                .expect("one dimension");
                let slot = prog.new_output();
                if let Some(addr) = out_buffer.get(&(ti, out_k)) {
                    if let Some(b) = buffers.get_mut(addr) {
                        b.base = Some(Base::Output(slot));
                        b.sym = Some(ci.materialize(0, TaskId::INVALID));
                        report.output_buffers += 1;
                    }
                }
                let addr = out_buffer.get(&(ti, out_k)).copied().unwrap_or(0);
                out_k += 1;
                args.push(ArgOp::Output { ci, slot });
                arg_meta.push((a.idx, addr));
                continue;
            }
            let tag = match a.arg_type {
                ArgType::Input => ArgTag::Input,
                ArgType::Inout => ArgTag::Inout,
                ArgType::OutputExisting => ArgTag::OutputExisting,
                ArgType::NoDep | ArgType::Output => ArgTag::NoDep,
            };
            let Some(b) = a
                .tensor_id
                .and_then(|id| tensors.get(&id))
                .and_then(|t| Some((t, buffers.get(&t.buffer_addr)?)))
            else {
                unknown_tensor_args += 1;
                first_unknown.get_or_insert((ti, task.task_id, a.idx));
                continue;
            };
            let (t, b) = b;
            let (Some(base), Some(sym)) = (b.base, b.sym) else {
                // The buffer's creator (a creator edge's pred, reached through another tensor
                // of the buffer) comes later in tasks[]: impossible in a real capture.
                before_creator.get_or_insert((ti, task.task_id, 0)).2 += 1;
                continue;
            };
            let whole = sym.with_version(t.version.unwrap_or(0));
            let view = match (&a.shape, &a.strides, a.start_offset) {
                (Some(shape), Some(strides), Some(start_offset)) if start_offset <= MAX_START_OFFSET => {
                    let parts = TensorParts {
                        dtype: dtype_of(a.dtype.as_deref()).unwrap_or(sym.dtype()),
                        shape: shape.clone(),
                        strides: strides.clone(),
                        start_offset,
                        ..whole.to_parts()
                    };
                    Tensor::from_parts(&parts).unwrap_or_else(|_| {
                        approx_views += 1;
                        first_approx.get_or_insert((ti, task.task_id, a.idx));
                        whole
                    })
                }
                _ => {
                    approx_views += 1;
                    first_approx.get_or_insert((ti, task.task_id, a.idx));
                    whole
                }
            };
            args.push(ArgOp::Tensor {
                tag,
                t: SymTensor { base, view },
            });
            arg_meta.push((a.idx, t.buffer_addr));
        }
        if !manual && !unknown_slots.contains(&task.task_id) {
            inferred_manual_dep +=
                infer_manual_dep(task.task_id, ti, &mut args, &arg_meta, &tensormap_args, &mut sim);
        }

        let mut deps = Vec::new();
        for &(pred, kind) in explicit.get(&task.task_id).into_iter().flatten() {
            // An uncaptured pred is reported with the others; a captured one comes earlier
            // (check_capture).
            if let Some(&p) = index.get(&pred) {
                deps.push((p, kind));
            }
        }
        prog.push_submit(
            SubmitOp {
                kernels,
                args,
                scalars: Vec::new(),
                deps,
                block_num: {
                    let blocks = task.block_num.unwrap_or(1);
                    let b = u16::try_from(blocks.max(1)).unwrap_or(u16::MAX);
                    if u64::from(b) != u64::from(blocks) {
                        changed_block_num.push((task.task_id, blocks, b));
                    }
                    b
                },
                require_sync_start: false,
                allow_early_resolve: task.early_dispatch == Some(true),
                dump_mask: 0,
            },
            manual,
        );
    }
    for _ in stack {
        prog.ops.push(Op::End);
    }
    if let Some(&(id, from, to)) = changed_block_num.first() {
        report.approximations.push(format!(
            "{} task(s) have a block_num the runtime cannot launch (it takes 1..={}): re-run with the \
             nearest one (first: task {} block_num {from} -> {to})",
            changed_block_num.len(),
            u16::MAX,
            describe_id(id)
        ));
    }
    if inferred_manual_dep > 0 {
        report.approximations.push(format!(
            "{inferred_manual_dep} argument(s) overlap an earlier writer but have no tensor-map edge in the capture: \
             re-run with manual_dep (deps.json does not record manual_dep)"
        ));
    }
    let arg_at = |(i, id, idx): (usize, u64, i32)| format!("{} argument idx {idx}", task_at(i, id));
    if let Some(first) = first_unknown {
        report.not_reproduced.push(format!(
            "{unknown_tensor_args} argument(s) name a tensor_id missing from tensors[] and were left out \
             (first: {})",
            arg_at(first)
        ));
    }
    if let Some((ti, id, n)) = before_creator {
        report.not_reproduced.push(format!(
            "{n} argument(s) read a buffer before the task that created it (the pred of its creator edge) \
             in tasks[] and were left out (first: {})",
            task_at(ti, id)
        ));
    }
    if let Some(first) = first_approx {
        report.approximations.push(format!(
            "{approx_views} argument(s) lack shape/start_offset/strides (or do not fit their buffer) and use the \
             whole buffer (first: {})",
            arg_at(first)
        ));
    }
    if unsized_outputs > 0 {
        report.approximations.push(format!(
            "{unsized_outputs} OUTPUT argument(s) are never read in the capture, so their sizes are unknown: \
             allocated as 1024-byte buffers (heap use may differ)"
        ));
    }
    let mut ids: Vec<(u32, CoreType)> = kernel_core.into_iter().map(|(k, c)| (k as u32, c)).collect();
    ids.sort_unstable_by_key(|&(k, _)| k);
    prog.kernels = KernelSet::Noops(ids);
    report.tasks = file.tasks.len();
    report.max_scope_tasks = max_in_scope;
    Ok(prog)
}

/// The argument as a tensor on its captured buffer address (distinct per buffer), for the
/// inference pass's tensor map.
fn sim_arg(a: &ArgOp, addr: u64) -> Option<TensorArg> {
    match a {
        ArgOp::Output { ci, .. } => Some(TensorArg::Output(*ci)),
        ArgOp::Tensor { tag, t } => {
            let parts = TensorParts {
                addr,
                ..t.view.to_parts()
            };
            TensorArg::with_tag(*tag, Tensor::from_parts(&parts).ok()?)
        }
    }
}

/// deps.json does not record `manual_dep`. An argument of an auto-scope task whose tag waits for
/// earlier writers ([`ArgTag::rule`])
/// and whose slice overlaps a live tensor-map entry, yet has no tensor-map edge in the capture,
/// must have been `manual_dep` (or read a `manual_dep` writer's buffer, which gives the same
/// edges): mark it so. The map is advanced argument by argument exactly as the runtime's
/// lookups advance it (`compute_fanin`), so an argument is judged against what the task's
/// earlier arguments left: an INOUT that covers an entry removes it before the next argument
/// looks (found by a review: judged against the map as it was before the task, such an
/// argument was marked, never registered, and a later reader's edge was lost). Then the
/// task's writers are registered. Returns the number of arguments marked.
fn infer_manual_dep(
    captured_id: u64,
    index: usize,
    args: &mut [ArgOp],
    meta: &[(i32, u64)],
    tensormap_args: &std::collections::HashSet<(u64, i32)>,
    sim: &mut TensorMap,
) -> usize {
    let mut marked = 0;
    for (a, &(idx, addr)) in args.iter_mut().zip(meta) {
        let Some(arg) = sim_arg(a, addr) else { continue };
        let (Some(probe), rule) = (arg.tensor().copied(), arg.rule()) else {
            continue;
        };
        if !rule.waits_for_writers {
            continue;
        }
        if !tensormap_args.contains(&(captured_id, idx)) {
            let mut hits = 0;
            let _ = sim.lookup(&probe, false, |_, _, _| {
                hits += 1;
                Ok::<(), ()>(())
            });
            if hits > 0 {
                if let ArgOp::Tensor { t, .. } = a {
                    t.view = t.view.with_manual_dep(true);
                    marked += 1;
                }
                continue;
            }
        }
        let _ = sim.lookup(&probe, rule.supersedes_covered, |_, _, _| Ok::<(), ()>(()));
    }
    let sim_args: Vec<TensorArg> = args
        .iter()
        .zip(meta)
        .filter_map(|(a, &(_, addr))| sim_arg(a, addr))
        .collect();
    let _ = register_outputs(TaskId::new(0, index as u32), false, &sim_args, sim);
    marked
}

/// The most producer edges any `span` consecutive tasks of `ring` (in `tasks[]` order) have:
/// the dependency entries they can hold at once when none of their producers has completed.
fn dep_pool_worst(file: &DepsFile, ring: usize, span: u64) -> u64 {
    let mut producers: HashMap<u64, u64> = HashMap::new();
    for e in &file.edges {
        *producers.entry(e.succ).or_default() += 1;
    }
    let counts: Vec<u64> = file
        .tasks
        .iter()
        .filter(|t| usize::from(split_task_id(t.task_id).0).min(3) == ring)
        .map(|t| producers.get(&t.task_id).copied().unwrap_or(0))
        .collect();
    let span = usize::try_from(span).unwrap_or(usize::MAX).max(1);
    let (mut sum, mut best) = (0u64, 0u64);
    for (i, &c) in counts.iter().enumerate() {
        sum += c;
        if i >= span {
            sum -= counts[i - span];
        }
        best = best.max(sum);
    }
    best
}

/// What a re-run of the deps.json at `path` would reproduce only approximately (the
/// [`FromDepsReport::approximations`] of [`run_from_deps`]), without running it: for a caller
/// that sizes rings from a replay (`simpler plan`), whose sizes are then the replay's.
pub fn replay_approximations(path: &Path) -> Result<Vec<String>, Error> {
    let mut file = DepsFile::default();
    file.gaps = read_deps(path, &mut file)?;
    let mut report = FromDepsReport::default();
    compile(&file, &mut report)?;
    Ok(report.approximations)
}

/// Re-runs the graph captured in the deps.json at `path` (see the module docs). The outcome's
/// [`FromDepsReport`] says what was reproduced; the run records the wired fanin to compare.
pub fn run_from_deps(path: &Path, overrides: &Overrides) -> Result<Outcome, Error> {
    let incomplete = simpler_artifacts::manifest::check_complete(path);
    if let Some(why) = &incomplete {
        if !overrides.allow_incomplete {
            return Err(ErrorKind::Incomplete { why: why.clone() }.into());
        }
        simpler_artifacts::errln!("warning: {why}");
    } else if let Some(note) = simpler_artifacts::manifest::check(path) {
        // A failed result check: the graph is whole, and re-running it is sound.
        simpler_artifacts::errln!("warning: {note}");
    }
    let mut file = DepsFile::default();
    file.gaps = read_deps(path, &mut file)?;
    let mut report = FromDepsReport::default();
    let prog = Arc::new(compile(&file, &mut report).map_err(|e| match e.into_kind() {
        ErrorKind::NotReproducible(why) => {
            ErrorKind::NotReproducible(format!("{}: {why}", path.display())).into()
        }
        other => Error::from(other),
    })?);
    let mut o = overrides.clone();
    o.settings.record_fanin = Some(true);
    let mut config = build_config(&Settings::default(), &prog, &o);
    if config.subject.is_none() {
        config.subject = Some(format!("re-run of {}", path.display()));
    }
    let user_window = o.settings.runtime_env.is_set(RingResource::TaskWindow);
    let user_dep_pool = o.settings.runtime_env.is_set(RingResource::DepPool);
    if config.runtime == RuntimeKind::Tmr && !user_window {
        // deps.json does not show sibling scopes, so one re-run scope may hold more tasks than
        // a window admits (window - 1): widen those rings' windows.
        let sizes = config.runtime_env.resolve()?;
        for (ring, &n) in report.max_scope_tasks.iter().enumerate() {
            let window = u64::from(sizes.task_window[ring]);
            if n as u64 + 1 >= window {
                let wider = (n as u64 + 2).next_power_of_two();
                config.runtime_env.set_ring(RingResource::TaskWindow, ring, wider);
                report.approximations.push(format!(
                    "ring {ring}'s task window raised from {window} to {wider}: one re-run scope holds {n} tasks \
                     (deps.json does not show where sibling scopes began; --runtime-env {}=... overrides)",
                    RingResource::TaskWindow.key()
                ));
                // The merged scope keeps every task of it from retiring, and with it every
                // dependency entry its tasks took: the pool must hold the most producers any
                // `wider - 1` consecutive tasks of the ring can have pending.
                let pool = u64::from(sizes.dep_pool[ring]);
                let need = dep_pool_worst(&file, ring, wider.saturating_sub(1));
                if !user_dep_pool && need > pool && (RingResource::DepPool.decl().valid)(need) {
                    config.runtime_env.set_ring(RingResource::DepPool, ring, need);
                    report.approximations.push(format!(
                        "ring {ring}'s dependency pool raised from {pool} to {need}: the merged scope's tasks \
                         can hold that many entries (their producers) until it ends; --runtime-env {}=... overrides",
                        RingResource::DepPool.key()
                    ));
                }
            }
        }
    }
    config.validate()?;
    let run = match runner::run_program(prog, &config) {
        Ok(mut run) => {
            // A stopped re-run says so itself; a completed one must not pass for a whole run's.
            if let (Some(why), Some(output)) = (incomplete, run.report.output.as_mut()) {
                output.record_incomplete_input(why);
            }
            run
        }
        // The run stopped: the error carries what the re-run approximated, which may be why
        // (a library does not print: `plan` runs many such trials).
        Err(e) if !report.approximations.is_empty() => {
            return Err(match e.into_run_error() {
                Ok(run) => ErrorKind::RunApproximated {
                    run,
                    approximations: report.approximations,
                }
                .into(),
                Err(other) => other,
            })
        }
        Err(e) => return Err(e),
    };

    // Map ids by submit order and compare the pairs.
    let log = run.report.fanin_log.as_deref().unwrap_or_default();
    report.id_map = file
        .tasks
        .iter()
        .zip(log)
        .map(|(t, r)| (t.task_id, r.task.raw()))
        .collect();
    let back: HashMap<u64, u64> = report.id_map.iter().map(|&(old, new)| (new, old)).collect();
    let captured_ids: BTreeSet<u64> = file.tasks.iter().map(|t| t.task_id).collect();
    let captured: BTreeSet<(u64, u64)> = file
        .edges
        .iter()
        .filter(|e| captured_ids.contains(&e.pred))
        .map(|e| (e.pred, e.succ))
        .collect();
    let wired: BTreeSet<(u64, u64)> = log
        .iter()
        .flat_map(|r| r.producers.iter().map(move |(p, _)| (p.raw(), r.task.raw())))
        .map(|(p, s)| {
            (
                back.get(&p).copied().unwrap_or(u64::MAX),
                back.get(&s).copied().unwrap_or(u64::MAX),
            )
        })
        .collect();
    report.edges = EdgeComparison {
        captured: captured.len(),
        wired: wired.len(),
        missing: captured.difference(&wired).copied().collect(),
        extra: wired.difference(&captured).copied().collect(),
    };
    let keep_fanin = overrides.settings.record_fanin.unwrap_or(false);
    config.record_fanin = keep_fanin;
    let mut run_report = run.report;
    if !keep_fanin {
        run_report.fanin_log = None;
    }
    Ok(Outcome {
        report: run_report,
        config,
        checks: run.checks,
        from_deps: Some(report),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shortfall_names_the_first_item_not_reproduced_else_the_first_extra_pair() {
        let mut r = FromDepsReport::default();
        assert_eq!(r.shortfall(), None);
        r.edges.extra = vec![(1, 2), (3, 4)];
        assert_eq!(
            r.shortfall().unwrap(),
            "2 wired pair(s) that were not captured (first: 1 -> 2)"
        );
        r.not_reproduced = vec!["edge 5 -> 6".into()];
        assert_eq!(r.shortfall().unwrap(), "not reproduced: edge 5 -> 6");
        r.not_reproduced.push("edge 7 -> 8".into());
        assert_eq!(r.shortfall().unwrap(), "not reproduced: edge 5 -> 6 (and 1 more)");
        assert!(!r.complete());
    }

    /// A one-task capture reading tensor 7 (buffer 0x1000 of `numel` elements of `tensor_dtype`)
    /// through a view of `shape` (strides 1) from `start` in `view_dtype`.
    fn capture(numel: &str, tensor_dtype: &str, view_dtype: &str, shape: u32, start: u64) -> String {
        format!(
            r#"{{"tasks": [
  {{"task_id": "0", "scope": "auto", "kernel_ids": [-1, 0, -1], "block_num": 1, "args": [
    {{"idx": 0, "type": "INPUT", "tensor_id": "7", "dtype": "{view_dtype}", "shape": [{shape}], "start_offset": "{start}", "strides": [1]}}]}}],
 "tensors": [{{"tensor_id": "7", "buffer_addr": "4096", "version": 0, "dtype": "{tensor_dtype}", "buffer_numel": "{numel}"}}],
 "edges": []}}"#
        )
    }

    fn re_run(dir: &Path, name: &str, text: &str) -> (std::path::PathBuf, Result<Outcome, Error>) {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let r = run_from_deps(&path, &Overrides::default());
        (path, r)
    }

    /// Found by a review: a view past the `buffer_numel` the file states re-ran on a buffer grown
    /// to fit it (the re-run's own deps.json then said 20000 where the input said 16384), exit 0,
    /// nothing reported.
    #[test]
    fn a_view_past_its_stated_buffer_is_refused_naming_the_argument() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                capture("16384", "FLOAT32", "FLOAT32", 20000, 0),
                "tasks[0] (task_id 0) args[0]: its view (start_offset 0, shape [20000], strides [1], FLOAT32) \
                 ends at byte 80000, past the end of its buffer 0x1000: 65536 bytes (tensors[0] (tensor_id 7) \
                 buffer_numel 16384 of FLOAT32); a view lies within its buffer",
            ),
            (
                capture("0", "FLOAT32", "FLOAT32", 16384, 0),
                "tasks[0] (task_id 0) args[0]: its view (start_offset 0, shape [16384], strides [1], FLOAT32) \
                 ends at byte 65536, past the end of its buffer 0x1000: 0 bytes (tensors[0] (tensor_id 7) \
                 buffer_numel 0 of FLOAT32); a view lies within its buffer",
            ),
            // By one element, through start_offset, in another dtype than the buffer's.
            (
                capture("16", "FLOAT32", "INT8", 60, 5),
                "tasks[0] (task_id 0) args[0]: its view (start_offset 5, shape [60], strides [1], INT8) \
                 ends at byte 65, past the end of its buffer 0x1000: 64 bytes (tensors[0] (tensor_id 7) \
                 buffer_numel 16 of FLOAT32); a view lies within its buffer",
            ),
        ];
        for (k, (text, want)) in cases.iter().enumerate() {
            let (path, r) = re_run(dir.path(), &format!("{k}.json"), text);
            let e = r.err().unwrap_or_else(|| panic!("case {k} re-ran"));
            assert!(matches!(e.kind(), ErrorKind::NotReproducible(_)), "{e}");
            assert_eq!(e.to_string(), format!("{}: {want}", path.display()), "case {k}");
        }
        // A view that ends exactly at the buffer's end, or an empty one past it, is fine.
        for (k, text) in [
            capture("16", "FLOAT32", "FLOAT32", 16, 0),
            capture("16", "FLOAT32", "INT8", 59, 5),
            capture("16", "FLOAT32", "FLOAT32", 0, 99),
        ]
        .iter()
        .enumerate()
        {
            let (_, r) = re_run(dir.path(), &format!("ok{k}.json"), text);
            let out = r.unwrap_or_else(|e| panic!("ok case {k}: {e}"));
            let fd = out.from_deps.as_ref().unwrap();
            assert_eq!(fd.external_buffers, 1);
            assert!(
                fd.approximations.is_empty(),
                "ok case {k}: {:?}",
                fd.approximations
            );
        }
    }

    /// Found by a review: these two lines of the report counted the arguments and named none.
    #[test]
    fn an_argument_without_its_view_or_its_tensor_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let no_view = capture("16", "FLOAT32", "FLOAT32", 16, 0).replace(r#", "strides": [1]"#, "");
        let (_, r) = re_run(dir.path(), "a.json", &no_view);
        let out = r.unwrap();
        assert_eq!(
            out.from_deps.as_ref().unwrap().approximations,
            ["1 argument(s) lack shape/start_offset/strides (or do not fit their buffer) and use the whole \
              buffer (first: tasks[0] (task_id 0) argument idx 0)"]
        );
        let no_tensor = capture("16", "FLOAT32", "FLOAT32", 16, 0)
            .replace(r#""tensor_id": "7", "dtype""#, r#""tensor_id": "8", "dtype""#);
        let (_, r) = re_run(dir.path(), "b.json", &no_tensor);
        let out = r.unwrap();
        let fd = out.from_deps.as_ref().unwrap();
        assert_eq!(
            fd.not_reproduced,
            [
                "1 argument(s) name a tensor_id missing from tensors[] and were left out (first: tasks[0] \
              (task_id 0) argument idx 0)"
            ]
        );
        assert!(!out.passed());
        assert_eq!(
            out.failure().unwrap(),
            format!("not reproduced: {}", fd.not_reproduced[0])
        );
    }

    /// A buffer whose dtype this runtime does not know has no size in bytes the file tells: it
    /// holds its views (4 bytes per element here, where UINT8 gave one), and the dtype is counted.
    #[test]
    fn a_buffer_of_an_unknown_dtype_holds_its_views() {
        let dir = tempfile::tempdir().unwrap();
        let (_, r) = re_run(
            dir.path(),
            "deps.json",
            &capture("16", "FLOAT77", "FLOAT32", 16, 0),
        );
        let out = r.unwrap();
        let fd = out.from_deps.as_ref().unwrap();
        assert_eq!(
            fd.approximations,
            vec![
                "1 tensor(s) have a dtype this runtime does not know: their buffers are re-run as UINT8, \
                  one byte per element of buffer_numel (first: tensors[0] (tensor_id 7) dtype `FLOAT77`)"
                    .to_string()
            ]
        );
    }
}
