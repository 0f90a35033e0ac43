//! `Orchestrator` from Python: scopes (`with o.scope():`, the site is the Python caller's
//! `file.py:LINE`), submits on the worker's kernels, dummies, allocations, a batch submit, and
//! explicit fatals.
//!
//! The Python object borrows the run's [`Orchestrator`] for exactly the duration of the
//! orchestration function (see [`call_orchestration`]); afterwards every call raises. The
//! function runs in the `contextvars.Context` that `w.run` copied from its caller.
//!
//! What the run's `FatalError` needs from here is kept in [`Raised`]: the exception the
//! function raised (a `StoppedError` it let propagate too) and the orchestrator call that
//! raised the fatal (`o.submit at e12.py:7`), when one did.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use simpler_core::{TaskArgs, Tensor, TensorArg, TensorCreateInfo};
use simpler_runtime::platform::kernel::KernelRegistry;
use simpler_runtime::{CoreType, MixedKernels, OrchResult, Orchestrator, ScopeMode, Stopped, TaskOutputs};
use simpler_workloads::kernels::{self, ScalarType};

use crate::args::{block_num, convert, Options};
use crate::errors::{stopped_error, SimplerError, StoppedError, TensorError};
use crate::lend::{Lending, Lent};
use crate::pyerr::python_error_text;
use crate::tensor::PyTensor;

/// A kernel as a submit resolves it.
#[derive(Clone, Copy)]
struct KernelEntry {
    id: u32,
    core: CoreType,
    /// How it reads bare numbers (the library's declaration; none for other kernels).
    scalar_types: &'static [ScalarType],
    /// Its operands, when it is one of the library's elementwise kernels.
    elementwise: Option<&'static Elementwise>,
}

/// The operands of one of the library's elementwise kernels: element k of the output is made
/// from element k of each input, so every input must have the output's element count. The
/// kernel refuses a shorter input only when it runs, and took a longer one's first elements
/// without a word (found by a review): a submit refuses both ([`Elementwise::check`]).
struct Elementwise {
    /// The kernel's name.
    kernel: &'static str,
    /// Each input's position among the task's tensor arguments, and its name in the signature.
    inputs: &'static [(usize, &'static str)],
    /// The output's position and name.
    output: (usize, &'static str),
}

/// The library's elementwise kernels (`crates/workloads/src/kernels.rs`).
const ELEMENTWISE: [Elementwise; 4] = [
    Elementwise {
        kernel: "add",
        inputs: &[(0, "a"), (1, "b")],
        output: (2, "c"),
    },
    Elementwise {
        kernel: "mul",
        inputs: &[(0, "a"), (1, "b")],
        output: (2, "c"),
    },
    Elementwise {
        kernel: "add_scalar",
        inputs: &[(0, "x")],
        output: (1, "y"),
    },
    Elementwise {
        kernel: "copy",
        inputs: &[(0, "x")],
        output: (1, "y"),
    },
];

impl Elementwise {
    /// A `TensorError` when an input of the task `args` has another element count than its
    /// output: `copy: input x (tensor argument 0) has 16 elements but output y (tensor
    /// argument 1) has 8; copy works element by element and needs them equal`. A task without
    /// the operand is the kernel's to refuse when it runs.
    fn check(&self, args: &TaskArgs<'_>) -> PyResult<()> {
        let numel = |i: usize| {
            args.tensors().get(i).map(|a| match a {
                TensorArg::Output(ci) => ci.shape().iter().map(|&d| u64::from(d)).product(),
                other => other.tensor().map_or(0, Tensor::numel),
            })
        };
        let (at, name) = self.output;
        let Some(want) = numel(at) else {
            return Ok(());
        };
        for &(i, input) in self.inputs {
            match numel(i) {
                Some(got) if got != want => {
                    return Err(TensorError::new_err(format!(
                        "{kernel}: input {input} (tensor argument {i}) has {got} elements but output {name} \
                         (tensor argument {at}) has {want}; {kernel} works element by element and needs them equal",
                        kernel = self.kernel
                    )))
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// The worker's kernels by name and id, taken when a run starts.
pub struct KernelTable {
    by_name: HashMap<String, KernelEntry>,
    by_id: HashMap<u32, KernelEntry>,
    /// True when a kernel is a Python callable: a submit then releases the GIL while it may
    /// wait for room (those kernels need it to complete).
    pub python_kernels: bool,
}

impl KernelTable {
    /// The table of `registry`; `python_kernels` says whether any kernel is a Python callable.
    pub fn of(registry: &KernelRegistry, python_kernels: bool) -> KernelTable {
        let mut t = KernelTable {
            by_name: HashMap::new(),
            by_id: HashMap::new(),
            python_kernels,
        };
        for d in registry.iter() {
            let library = kernels::by_id(d.func_id).filter(|k| k.name == d.name);
            let e = KernelEntry {
                id: d.func_id,
                core: d.core_type,
                scalar_types: library.map_or(&[][..], |k| k.scalar_types),
                elementwise: library.and_then(|k| ELEMENTWISE.iter().find(|e| e.kernel == k.name)),
            };
            t.by_name.insert(d.name.clone(), e);
            t.by_id.insert(d.func_id, e);
        }
        t
    }

    fn resolve(&self, kernel: &Bound<'_, PyAny>) -> PyResult<KernelEntry> {
        // A name is checked first: a failed integer extraction builds an exception (about a
        // microsecond), too much for every submit.
        let found = match kernel.cast::<PyString>() {
            Ok(name) => self.by_name.get(name.to_cow()?.as_ref()),
            Err(_) => self.by_id.get(&kernel.extract::<u32>()?),
        };
        found.copied().ok_or_else(|| {
            let mut names: Vec<_> = self.by_name.values().map(|e| e.id).collect();
            names.sort_unstable();
            let names: Vec<String> = names
                .iter()
                .filter_map(|id| {
                    self.by_name
                        .iter()
                        .find(|(_, e)| e.id == *id)
                        .map(|(n, _)| format!("{id} {n}"))
                })
                .collect();
            SimplerError::new_err(format!(
                "unknown kernel {}; registered kernels: {}",
                kernel.repr().map(|r| r.to_string()).unwrap_or_default(),
                names.join(", ")
            ))
        })
    }
}

/// A submitted task: its raw id (`ring << 32 | local`) and its runtime-allocated outputs.
#[pyclass(name = "Task", module = "simpler", frozen)]
pub struct PyTask {
    /// The raw task id.
    #[pyo3(get)]
    pub(crate) id: u64,
    /// The run it is a task of ([`PyOrchestrator::run`]): ids restart with each run, so a
    /// `Task` kept from an earlier run names another task in this one.
    pub(crate) run: u64,
    /// Empty (no allocation) for the common task without runtime-allocated outputs.
    outputs: Vec<Tensor>,
}

impl PyTask {
    fn of(t: &TaskOutputs, run: u64) -> PyTask {
        PyTask {
            id: t.id().raw(),
            run,
            outputs: t.outputs().to_vec(),
        }
    }
}

#[pymethods]
impl PyTask {
    /// The task's ring.
    #[getter]
    fn ring(&self) -> u8 {
        simpler_core::TaskId(self.id).ring()
    }
    /// The task's index in its ring.
    #[getter]
    fn local(&self) -> u32 {
        simpler_core::TaskId(self.id).local()
    }
    /// The runtime-allocated outputs, in argument order.
    #[getter]
    fn outputs(&self) -> Vec<PyTensor> {
        self.outputs.iter().map(|&inner| PyTensor { inner }).collect()
    }
    /// Output `i` (the i-th OUTPUT argument).
    #[pyo3(signature = (i = 0))]
    fn output(&self, i: usize) -> PyResult<PyTensor> {
        self.outputs
            .get(i)
            .map(|&inner| PyTensor { inner })
            .ok_or_else(|| {
                SimplerError::new_err(format!(
                    "the task has {} outputs, not {}",
                    self.outputs.len(),
                    i + 1
                ))
            })
    }
    fn __repr__(&self) -> String {
        format!(
            "Task(ring={}, local={}, outputs={})",
            self.ring(),
            self.local(),
            self.outputs.len()
        )
    }
}

/// The orchestrator handed to a Python orchestration function. The Python object may outlive
/// the function (a traceback or a list can keep it, and drop it on any thread); the run's
/// orchestrator is reachable through it only on the orchestration thread, during the call.
#[pyclass(name = "Orchestrator", module = "simpler", frozen)]
pub struct PyOrchestrator {
    /// The run's orchestrator, lent for the call of the orchestration function.
    orch: Lent<Orchestrator>,
    /// The last [`Stopped`] a call returned, handed back to the runtime when the function
    /// lets the `StoppedError` propagate.
    stopped: Mutex<Option<Stopped>>,
    /// The call that raised the run's fatal (`"o.submit at e12.py:7"`), when one of this
    /// orchestrator's calls did.
    origin: Mutex<Option<String>>,
    kernels: Arc<KernelTable>,
    /// This run's number in the process (from [`NEXT_RUN`]), which its `Task`s carry.
    run: u64,
}

/// The next [`PyOrchestrator::run`].
static NEXT_RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// What a run's `FatalError` gets from the Python side: the exception to chain and the
/// orchestrator call that raised the fatal.
#[derive(Default)]
pub struct Raised {
    /// The exception behind the fatal (the orchestration's, or a kernel's).
    pub cause: Option<PyErr>,
    /// `"o.submit at e12.py:7"`.
    pub call_site: Option<String>,
}

impl PyOrchestrator {
    /// Runs `f` on the lent orchestrator (see `Lent::with`); with Python kernels registered,
    /// without the GIL, so that a submit waiting for room lets them run.
    fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Orchestrator) -> R + Send) -> PyResult<R> {
        if self.kernels.python_kernels {
            py.detach(|| self.orch.with(f))
        } else {
            self.orch.with(f)
        }
    }

    fn set_stopped(&self, s: Stopped) {
        *self.stopped.lock().unwrap_or_else(|p| p.into_inner()) = Some(s);
    }

    /// Runs the orchestrator call `f` (named `call`, e.g. `"o.submit"`); when it stops a run
    /// that was not fatal before, keeps `call` and the Python caller's site as the fatal's
    /// origin. (One relaxed load per call.)
    fn call<R: Send>(
        &self,
        py: Python<'_>,
        call: &str,
        f: impl FnOnce(&mut Orchestrator) -> Result<R, Stopped> + Send,
    ) -> PyResult<Result<R, Stopped>> {
        let (was_fatal, r) = self.with(py, |o| (o.is_fatal(), f(o)))?;
        if let (false, Err(_)) = (was_fatal, &r) {
            let site = caller_site(py).unwrap_or_else(|_| "?".into());
            *self.origin.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!("{call} at {site}"));
        }
        Ok(r)
    }

    /// A submit's result as a Python `Task`, or the `StoppedError`.
    fn task(&self, py: Python<'_>, r: Result<TaskOutputs, Stopped>) -> PyResult<PyTask> {
        match r {
            Ok(t) => Ok(PyTask::of(&t, self.run)),
            Err(s) => {
                self.set_stopped(s);
                Err(stopped_error(py, s))
            }
        }
    }

    /// Submits `items` as one task of `kernel` (`None`: a dummy task).
    fn submit_one(
        &self,
        py: Python<'_>,
        call: &str,
        kernel: Option<KernelEntry>,
        items: &Bound<'_, PyAny>,
        deps: Option<&Bound<'_, PyAny>>,
        block_num: u16,
    ) -> PyResult<PyTask> {
        let opts = Options {
            run: self.run,
            deps,
            block_num,
            scalar_types: kernel.map_or(&[][..], |k| k.scalar_types),
        };
        let mut deps = Vec::new();
        let args = convert(items, &opts, &mut deps)?;
        if let Some(e) = kernel.and_then(|k| k.elementwise) {
            e.check(&args)?;
        }
        let kernels = kernel.map_or(MixedKernels::NONE, mixed);
        let r = self.call(py, call, |o| o.submit(kernels, &args))?;
        self.task(py, r)
    }
}

fn mixed(k: KernelEntry) -> MixedKernels {
    match k.core {
        CoreType::Aic => MixedKernels::aic(k.id as i32),
        CoreType::Aiv => MixedKernels::aiv(k.id as i32),
    }
}

#[pymethods]
impl PyOrchestrator {
    /// Submits `kernel` (a name or func id) with tagged tensors and scalars in order;
    /// `deps` are explicit dependencies (tasks or raw ids), `block_num` SPMD blocks.
    #[pyo3(signature = (kernel, *args, deps = None, block_num = 1))]
    fn submit(
        &self,
        py: Python<'_>,
        kernel: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        deps: Option<&Bound<'_, PyAny>>,
        block_num: i128,
    ) -> PyResult<PyTask> {
        let k = self.kernels.resolve(kernel)?;
        let b = self::block_num(block_num)?;
        self.submit_one(py, "o.submit", Some(k), args.as_any(), deps, b)
    }

    /// Submits a dependency-only task (no kernel); it may carry outputs.
    #[pyo3(signature = (*args, deps = None))]
    fn submit_dummy(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        deps: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTask> {
        self.submit_one(py, "o.submit_dummy", None, args.as_any(), deps, 1)
    }

    /// Submits `kernel` once per argument list in `batch` (each a list of tagged tensors and
    /// scalars) in one call: the batch API for many similar tasks. Returns the tasks. An error
    /// names the list that failed; the lists before it were submitted.
    #[pyo3(signature = (kernel, batch, block_num = 1))]
    fn submit_many(
        &self,
        py: Python<'_>,
        kernel: &Bound<'_, PyAny>,
        batch: &Bound<'_, PyAny>,
        block_num: i128,
    ) -> PyResult<Vec<PyTask>> {
        let k = self.kernels.resolve(kernel)?;
        let opts = Options {
            run: self.run,
            deps: None,
            block_num: self::block_num(block_num)?,
            scalar_types: k.scalar_types,
        };
        let mut tasks = Vec::new();
        let mut deps = Vec::new();
        for (i, items) in batch.try_iter()?.enumerate() {
            let one = |tasks: &mut Vec<PyTask>, deps: &mut Vec<_>| -> PyResult<()> {
                let args = convert(&items?, &opts, deps)?;
                if let Some(e) = k.elementwise {
                    e.check(&args)?;
                }
                let r = self.call(py, "o.submit_many", |o| o.submit(mixed(k), &args))?;
                tasks.push(self.task(py, r)?);
                Ok(())
            };
            one(&mut tasks, &mut deps).map_err(|e| in_batch(py, e, i))?;
        }
        Ok(tasks)
    }

    /// Allocates buffers (each a `TensorCreateInfo`, an `OUTPUT(...)` or a `(shape, dtype)`
    /// pair) through one hidden allocation task; returns their tensors.
    #[pyo3(signature = (*infos))]
    fn alloc_tensors(&self, py: Python<'_>, infos: &Bound<'_, PyTuple>) -> PyResult<Vec<PyTensor>> {
        let mut cis: Vec<TensorCreateInfo> = Vec::with_capacity(infos.len());
        for info in infos.iter() {
            cis.push(create_info(&info)?);
        }
        let r = self.call(py, "o.alloc_tensors", |o| o.alloc_tensors(&cis))?;
        Ok(self.task(py, r)?.outputs())
    }

    /// A scope for `with`: `with o.scope():` (auto) or `with o.scope(manual=True):`. Its site
    /// is the caller's `file.py:LINE` unless `site` names one.
    #[pyo3(signature = (manual = false, site = None))]
    fn scope(slf: Bound<'_, Self>, manual: bool, site: Option<String>) -> PyResult<ScopeGuard> {
        let site = match site {
            Some(s) => s,
            None => caller_site(slf.py())?,
        };
        Ok(ScopeGuard {
            orch: slf.unbind(),
            mode: if manual {
                ScopeMode::Manual
            } else {
                ScopeMode::Auto
            },
            site,
        })
    }

    /// `scope(manual=True)`.
    #[pyo3(signature = (site = None))]
    fn manual_scope(slf: Bound<'_, Self>, site: Option<String>) -> PyResult<ScopeGuard> {
        let site = match site {
            Some(s) => s,
            None => caller_site(slf.py())?,
        };
        Self::scope(slf, true, Some(site))
    }

    /// Stops the run with EXPLICIT_ORCH_FATAL (9) and `message`; raises the `StoppedError`.
    fn report_fatal(&self, py: Python<'_>, message: String) -> PyResult<()> {
        let s = self.with(py, |o| o.report_fatal(message))?;
        self.set_stopped(s);
        Err(stopped_error(py, s))
    }

    /// Current scope depth (0 = root).
    #[getter]
    fn depth(&self) -> PyResult<usize> {
        self.orch.with(|o| o.depth())
    }
    /// True once the run is fatal.
    #[getter]
    fn is_fatal(&self) -> PyResult<bool> {
        self.orch.with(|o| o.is_fatal())
    }
    /// Clusters of this run.
    #[getter]
    fn cluster_count(&self) -> PyResult<u32> {
        self.orch.with(|o| o.available_cluster_count())
    }
    /// The innermost open scope's site.
    #[getter]
    fn current_site(&self) -> PyResult<String> {
        self.orch.with(|o| o.current_site())
    }
}

/// `e`, the error of list `i` of a `submit_many` batch, as the same exception type with a text
/// that names the list and says the lists before it were submitted (and `e` as its cause);
/// a `StoppedError` keeps its `code` and `name`.
fn in_batch(py: Python<'_>, e: PyErr, i: usize) -> PyErr {
    let before = match i {
        0 => "none was submitted".to_string(),
        1 => "list 0 before it was submitted".to_string(),
        n => format!("the {n} lists before it were submitted"),
    };
    let text = format!(
        "submit_many: argument list {i} of the batch failed ({before}): {}",
        e.value(py)
    );
    let wrapped = (|| -> PyResult<PyErr> {
        let value = e.get_type(py).call1((text,))?;
        for attr in ["code", "name"] {
            if let Ok(v) = e.value(py).getattr(attr) {
                value.setattr(attr, v)?;
            }
        }
        Ok(PyErr::from_value(value))
    })();
    match wrapped {
        Ok(w) => {
            w.set_cause(py, Some(e));
            w
        }
        Err(_) => e,
    }
}

/// A create-info from a `TensorCreateInfo`, an `OUTPUT(...)` argument or `(shape, dtype)`.
fn create_info(info: &Bound<'_, PyAny>) -> PyResult<TensorCreateInfo> {
    if let Ok(ci) = info.extract::<crate::tensor::PyCreateInfo>() {
        return Ok(ci.inner);
    }
    if let Ok(a) = info.cast::<crate::args::PyArg>() {
        if let TensorArg::Output(ci) = a.get().inner {
            return Ok(ci);
        }
    }
    let (shape, dtype): (Bound<'_, PyAny>, Bound<'_, PyAny>) = info.extract().map_err(|_| {
        SimplerError::new_err(format!(
            "{} is not a TensorCreateInfo, an OUTPUT(...) or a (shape, dtype) pair",
            info.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })?;
    crate::tensor::create_info(&shape, Some(&dtype))
}

/// The Python caller's `"<file base name>:<line>"` (the innermost Python frame).
pub fn caller_site(py: Python<'_>) -> PyResult<String> {
    let frame = py.import("sys")?.call_method1("_getframe", (0,))?;
    let file: String = frame.getattr("f_code")?.getattr("co_filename")?.extract()?;
    let line: u32 = frame.getattr("f_lineno")?.extract()?;
    let base = file.rsplit(['/', '\\']).next().unwrap_or(&file);
    Ok(format!("{base}:{line}"))
}

/// `with o.scope():` — opens the scope on enter, closes it on exit (an exception too).
#[pyclass(module = "simpler", frozen)]
pub struct ScopeGuard {
    orch: Py<PyOrchestrator>,
    mode: ScopeMode,
    site: String,
}

#[pymethods]
impl ScopeGuard {
    fn __enter__(&self, py: Python<'_>) -> PyResult<Py<PyOrchestrator>> {
        let site = simpler_runtime::Site::interned(&self.site);
        let mode = self.mode;
        self.orch.get().orch.with(|o| o.begin_scope(mode, site))?;
        Ok(self.orch.clone_ref(py))
    }
    fn __exit__(
        &self,
        _ty: &Bound<'_, PyAny>,
        _value: &Bound<'_, PyAny>,
        _tb: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        // Published at the exit: the orchestration's Python code between scopes is host work
        // that the held ready tasks should overlap (`Orchestrator::publish_ready`).
        self.orch.get().orch.with(|o| {
            o.end_scope();
            o.publish_ready();
        })?;
        Ok(false)
    }
}

/// Calls the Python `func` with a Python orchestrator lent `orch`, on the run's orchestration
/// thread, in `context` (a `contextvars.Context`). A Python exception (a `StoppedError` too) is
/// kept in `raised` to chain it to the run's `FatalError`; one other than the `StoppedError`
/// of a fatal run ends the run with EXPLICIT_ORCH_FATAL (9) and its text, and so does a
/// returned generator or coroutine (the function ran none of its body).
pub fn call_orchestration(
    orch: &mut Orchestrator,
    func: Py<PyAny>,
    context: Py<PyAny>,
    kernels: Arc<KernelTable>,
    raised: Arc<Mutex<Raised>>,
) -> OrchResult {
    Python::attach(|py| {
        let lent = PyOrchestrator {
            orch: Lent::new(orch, "orchestrator", "an orchestration function"),
            stopped: Mutex::new(None),
            origin: Mutex::new(None),
            kernels,
            run: NEXT_RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        };
        let handle = Bound::new(py, lent).map_err(|e| e.to_string())?;
        let result = {
            let _loan = Lending(&handle.get().orch);
            context.call_method1(py, "run", (func, handle.clone()))
        };
        let origin = handle
            .get()
            .origin
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let keep = |cause: Option<PyErr>| {
            let mut slot = raised.lock().unwrap_or_else(|p| p.into_inner());
            (slot.cause, slot.call_site) = (cause, origin);
        };
        let err = match result {
            Ok(r) => {
                keep(None);
                return not_a_generator(r.bind(py)).map_err(Into::into);
            }
            Err(e) => e,
        };
        let stopped = *handle.get().stopped.lock().unwrap_or_else(|p| p.into_inner());
        if let (true, Some(s)) = (err.is_instance_of::<StoppedError>(py), stopped) {
            keep(Some(err));
            return Err(Box::new(s) as Box<dyn std::error::Error + Send + Sync>);
        }
        let text = python_error_text(py, &err);
        keep(Some(err));
        Err(text.into())
    })
}

/// `Ok` unless `r`, what the orchestration function returned, is a generator or a coroutine
/// (an `async def` or a function with `yield`, whose body did not run): then it is closed
/// and the error says so.
fn not_a_generator(r: &Bound<'_, PyAny>) -> Result<(), String> {
    if r.is_none() {
        return Ok(());
    }
    let kind = match r.get_type().qualname().map(|n| n.to_string()).as_deref() {
        Ok("generator") => "a generator (the function has a yield)",
        Ok("coroutine") => "a coroutine (the function is an async def)",
        Ok("async_generator") => "an async generator",
        _ => return Ok(()),
    };
    if let Ok(close) = r.getattr("close") {
        let _ = close.call0();
    }
    Err(format!(
        "the orchestration function returned {kind}: w.run calls it once and none of its body ran; \
         write it as a plain def without yield"
    ))
}

/// Adds the classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyOrchestrator>()?;
    m.add_class::<PyTask>()?;
    m.add_class::<ScopeGuard>()?;
    Ok(())
}
