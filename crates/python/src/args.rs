//! Task arguments from Python: tagged tensors (`INPUT(t)`, `OUTPUT(shape, dtype)`, `INOUT(t)`,
//! `OUTPUT_EXISTING(t)`, `NO_DEP(t)`), scalars (a bare number, or `scalar(v, "f64")`), and how a
//! submit's Python arguments become a [`TaskArgs`].
//!
//! A bare number is encoded as the workload files encode it: the type the kernel reads at that
//! position (`add_scalar`'s first scalar is an f32, `busy`'s a u64), otherwise an integer is
//! its two's complement and a float its f32 bits.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyTuple};
use simpler_core::{ArgTag, DType, TaskArgs, TaskId, TensorArg};
use simpler_workloads::kernels::ScalarType;

use crate::errors::SimplerError;
use crate::tensor::{PyCreateInfo, PyTensor};

/// A tensor argument: a tag and a tensor (or, for `OUTPUT`, what to allocate).
#[pyclass(name = "Arg", module = "simpler", frozen, from_py_object)]
#[derive(Clone, Copy)]
pub struct PyArg {
    pub inner: TensorArg,
}

#[pymethods]
impl PyArg {
    /// The tag's name (`"INPUT"`, ...).
    #[getter]
    fn tag(&self) -> &'static str {
        self.inner.tag().name()
    }
    fn __repr__(&self) -> String {
        format!("{}({:?})", self.inner.tag().name(), self.inner)
    }
}

/// `t` tagged `tag`; anything but a `Tensor` is a `TypeError` that says what to pass.
fn tagged(tag: ArgTag, t: &Bound<'_, PyAny>) -> PyResult<PyArg> {
    let name = tag.name();
    let Ok(t) = t.cast::<PyTensor>() else {
        let ty = t.get_type().qualname().map(|n| n.to_string()).unwrap_or_default();
        let hint = match ty.as_str() {
            "ndarray" => "; wrap NumPy arrays with w.tensor(array) first",
            _ => "",
        };
        return Err(PyTypeError::new_err(format!(
            "{name}(t) takes a Tensor (from w.tensor, w.alloc, a view or a task's output), not a {ty}{hint}"
        )));
    };
    let inner = TensorArg::with_tag(tag, t.get().inner).expect("a tag that takes a tensor");
    Ok(PyArg { inner })
}

/// Read by the task; waits for earlier writers of overlapping views.
#[pyfunction(name = "INPUT")]
fn input(t: &Bound<'_, PyAny>) -> PyResult<PyArg> {
    tagged(ArgTag::Input, t)
}
/// Read and written in place; waits for earlier writers and readers' writers.
#[pyfunction(name = "INOUT")]
fn inout(t: &Bound<'_, PyAny>) -> PyResult<PyArg> {
    tagged(ArgTag::Inout, t)
}
/// Written into an existing buffer (no WAW edge).
#[pyfunction(name = "OUTPUT_EXISTING")]
fn output_existing(t: &Bound<'_, PyAny>) -> PyResult<PyArg> {
    tagged(ArgTag::OutputExisting, t)
}
/// Passed to the kernel without any dependency tracking.
#[pyfunction(name = "NO_DEP")]
fn no_dep(t: &Bound<'_, PyAny>) -> PyResult<PyArg> {
    tagged(ArgTag::NoDep, t)
}
/// A new buffer the runtime allocates: `OUTPUT((16384,), "float32")` (a shape and a dtype
/// name or NumPy dtype, float32 by default) or `OUTPUT(create_info)`.
#[pyfunction(name = "OUTPUT")]
#[pyo3(signature = (shape, dtype = None))]
fn output(shape: &Bound<'_, PyAny>, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<PyArg> {
    let ci = match shape.extract::<PyCreateInfo>() {
        // The create info has its dtype: another one given beside it was dropped without a word
        // (found by a review); the same one is harmless.
        Ok(ci) => match dtype.map(crate::tensor::dtype_arg).transpose()? {
            Some(d) if d != ci.inner.dtype() => {
                return Err(SimplerError::new_err(format!(
                    "OUTPUT: dtype {} given beside a TensorCreateInfo of {}: the create info's dtype is \
                     the output's; give one of the two",
                    crate::tensor::dtype_name(d),
                    crate::tensor::dtype_name(ci.inner.dtype())
                )))
            }
            _ => ci.inner,
        },
        Err(_) => crate::tensor::create_info(shape, dtype)?,
    };
    Ok(PyArg {
        inner: TensorArg::Output(ci),
    })
}

/// A typed scalar argument: `scalar(1.5, "f64")`; types `f32`, `f64`, `u32`, `u64`, `i64`.
#[pyclass(name = "Scalar", module = "simpler", frozen, from_py_object)]
#[derive(Clone, Copy)]
pub struct PyScalar {
    bits: u64,
    dtype: Option<DType>,
}

#[pyfunction]
fn scalar(value: &Bound<'_, PyAny>, kind: &str) -> PyResult<PyScalar> {
    // The dtype recorded in the args dump; f64 has none of its own (its bits go untyped).
    let (bits, dtype) = match kind {
        "f32" => (
            u64::from((value.extract::<f64>()? as f32).to_bits()),
            Some(DType::Float32),
        ),
        "f64" => (value.extract::<f64>()?.to_bits(), None),
        "u32" => (u64::from(value.extract::<u32>()?), Some(DType::UInt32)),
        "u64" => (value.extract::<u64>()?, Some(DType::UInt64)),
        "i64" => (value.extract::<i64>()? as u64, Some(DType::Int64)),
        other => {
            return Err(SimplerError::new_err(format!(
                "unknown scalar type {other:?}; types: f32, f64, u32, u64, i64"
            )))
        }
    };
    Ok(PyScalar { bits, dtype })
}

/// A submit's `block_num` (0 goes on to the runtime, which refuses it with INVALID_ARGS).
pub fn block_num(n: i128) -> PyResult<u16> {
    u16::try_from(n).map_err(|_| {
        SimplerError::new_err(format!(
            "block_num {n} is out of range: a task has 1 to {} blocks",
            u16::MAX
        ))
    })
}

/// What a submit's options say besides the positional arguments.
pub struct Options<'a, 'py> {
    /// The run submitting ([`crate::orchestrator::PyTask`]'s `run`).
    pub run: u64,
    /// Explicit dependencies: task ids (ints) or `Task` objects.
    pub deps: Option<&'a Bound<'py, PyAny>>,
    /// SPMD blocks.
    pub block_num: u16,
    /// Scalar types the kernel reads, by position.
    pub scalar_types: &'a [ScalarType],
}

/// Converts `items` (tagged tensors and scalars, in order) into task arguments, the explicit
/// dependencies collected in `deps` (any number: they are set as one list, not added one by
/// one, which stops at `INLINE_DEPS`). This runs before the orchestrator is touched: no
/// Python code runs while it is borrowed.
pub fn convert<'d>(
    items: &Bound<'_, PyAny>,
    opts: &Options<'_, '_>,
    deps: &'d mut Vec<TaskId>,
) -> PyResult<TaskArgs<'d>> {
    let mut args = TaskArgs::new();
    let mut scalars = 0usize;
    let mut add = |item: Bound<'_, PyAny>| -> PyResult<()> {
        if let Ok(a) = item.cast::<PyArg>() {
            args.arg(a.get().inner);
        } else if let Ok(s) = item.cast::<PyScalar>() {
            let s = s.get();
            args.scalar_typed(s.bits, s.dtype);
            scalars += 1;
        } else if let Ok(t) = item.cast::<PyTensor>() {
            return Err(SimplerError::new_err(format!(
                "argument {:?} is a bare tensor: tag it INPUT(t), INOUT(t), OUTPUT_EXISTING(t) or NO_DEP(t)",
                t.get().inner
            )));
        } else {
            let declared = opts.scalar_types.get(scalars).copied();
            args.scalar(number_bits(&item, declared)?);
            scalars += 1;
        }
        Ok(())
    };
    match items.cast::<PyTuple>() {
        Ok(t) => t.iter().try_for_each(&mut add)?,
        Err(_) => items.try_iter()?.try_for_each(|item| add(item?))?,
    }
    deps.clear();
    if let Some(given) = opts.deps {
        let not_a_list = |_| {
            SimplerError::new_err(format!(
                "deps: {} is not a list of tasks (what o.submit returned) or task ids",
                repr(given)
            ))
        };
        for (k, d) in given.try_iter().map_err(not_a_list)?.enumerate() {
            deps.push(TaskId(task_raw(&d?, k, opts.run)?));
        }
    }
    let deps: &'d [TaskId] = deps;
    if !deps.is_empty() {
        args.set_dependencies(deps);
    }
    if opts.block_num != 1 {
        args.block_num(opts.block_num);
    }
    Ok(args)
}

/// The raw id of `deps[k]`: a `Task`, an int, or an object with an int `id` attribute; a
/// `Task` of another run than `run` is refused (found by a review: it was wired to whatever
/// task of this run had its id). Anything else is refused naming its place in `deps` (found
/// by a review: `deps=[None]` raised a bare AttributeError).
fn task_raw(d: &Bound<'_, PyAny>, k: usize, run: u64) -> PyResult<u64> {
    if let Ok(t) = d.cast::<crate::orchestrator::PyTask>() {
        let t = t.get();
        if t.run != run {
            let id = TaskId(t.id);
            return Err(SimplerError::new_err(format!(
                "deps[{k}]: Task {}:{} is a task of an earlier run; task ids restart with each run, \
                 so it names another task in this one: depend on a task of this run",
                id.ring(),
                id.local()
            )));
        }
        return Ok(t.id);
    }
    let id = if d.is_instance_of::<PyInt>() {
        Some(d.clone())
    } else {
        d.getattr("id").ok()
    };
    id.and_then(|id| id.extract::<u64>().ok()).ok_or_else(|| {
        SimplerError::new_err(format!(
            "deps[{k}]: {} is neither a Task (what o.submit returned) nor a task id (an int from 0 \
             to 2**64-1)",
            repr(d)
        ))
    })
}

/// `v`'s Python repr, for an error message.
fn repr(v: &Bound<'_, PyAny>) -> String {
    v.repr().map(|r| r.to_string()).unwrap_or_default()
}

/// A bare Python number's bits, as the workload files encode a bare JSON number.
fn number_bits(v: &Bound<'_, PyAny>, declared: Option<ScalarType>) -> PyResult<u64> {
    let too_wide = || {
        let repr = v.repr().map(|r| r.to_string()).unwrap_or_default();
        SimplerError::new_err(format!("scalar {repr} does not fit in 64 bits"))
    };
    // A Python int too wide for i128 is still an int: an error, not a float's bits.
    let int = match v.extract::<i128>() {
        Ok(i) if !v.is_instance_of::<pyo3::types::PyFloat>() => Some(i),
        Err(_) if v.is_instance_of::<pyo3::types::PyInt>() => return Err(too_wide()),
        _ => None,
    };
    if let Some(i) = int {
        return Ok(match declared {
            Some(ScalarType::F32) => u64::from((i as f32).to_bits()),
            _ => i64::try_from(i)
                .map(|x| x as u64)
                .or_else(|_| u64::try_from(i))
                .map_err(|_| too_wide())?,
        });
    }
    let f: f64 = v.extract().map_err(|_| {
        SimplerError::new_err(format!(
            "argument {} is neither a tagged tensor nor a number",
            v.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })?;
    Ok(match declared {
        Some(ScalarType::U64) => {
            if f.fract() != 0.0 || f < 0.0 || f > u64::MAX as f64 {
                return Err(SimplerError::new_err(format!(
                    "{f} is not a valid u64 for this kernel's scalar"
                )));
            }
            f as u64
        }
        _ => u64::from((f as f32).to_bits()),
    })
}

/// Adds the tag functions and classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyArg>()?;
    m.add_class::<PyScalar>()?;
    m.add_function(wrap_pyfunction!(input, m)?)?;
    m.add_function(wrap_pyfunction!(output, m)?)?;
    m.add_function(wrap_pyfunction!(inout, m)?)?;
    m.add_function(wrap_pyfunction!(output_existing, m)?)?;
    m.add_function(wrap_pyfunction!(no_dep, m)?)?;
    m.add_function(wrap_pyfunction!(scalar, m)?)?;
    Ok(())
}
