//! `Tensor`: a view of a device buffer (shape, strides, offset, dtype), with the views the
//! runtime supports (sub-box, slice with a step, reshape, transpose, `t[a:b, ::2]`). Dtypes are
//! named as NumPy names them (`"float32"`, `"int64"`, `"bool"`, ...; `"bfloat16"` too, which
//! NumPy lacks).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PySlice, PyString, PyTuple};
use simpler_core::{DType, Tensor, TensorCreateInfo, TensorError};

use crate::errors::TensorError as PyTensorError;

/// A dtype from its NumPy name (`"float32"`) or artifact name (`"FLOAT32"`).
pub fn dtype(name: &str) -> PyResult<DType> {
    DType::from_name(name).ok_or_else(|| {
        let names: Vec<String> = DType::ALL.iter().map(|d| dtype_name(*d)).collect();
        PyTensorError::new_err(format!("unknown dtype {name:?}; dtypes: {}", names.join(", ")))
    })
}

/// A dtype from a name (`"float32"`) or anything `numpy.dtype` takes (`np.float32`,
/// `np.dtype(">f4")`: the byte order does not matter, the device is little-endian). `None` is
/// float32, the package's default everywhere (found by a review: `w.alloc(shape, None)` went
/// through `numpy.dtype(None)`, float64, where `OUTPUT(shape, None)` meant float32).
pub fn dtype_arg(v: &Bound<'_, PyAny>) -> PyResult<DType> {
    if v.is_none() {
        return Ok(DType::Float32);
    }
    if let Ok(name) = v.cast::<PyString>() {
        return dtype(&name.to_cow()?);
    }
    let name = v
        .py()
        .import("numpy")
        .and_then(|np| np.getattr("dtype")?.call1((v,)))
        .and_then(|d| d.getattr("name")?.extract::<String>())
        .map_err(|_| {
            PyTensorError::new_err(format!(
                "{} is neither a dtype name nor a NumPy dtype",
                v.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
    dtype(&name)
}

/// A shape from an int (one dimension, as NumPy takes it) or a sequence of ints; a negative
/// or too large dimension is a `TensorError` that says so.
pub fn shape_arg(v: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    let text = || v.repr().map(|r| r.to_string()).unwrap_or_default();
    let dims: Vec<i128> = if v.is_instance_of::<PyInt>() && !v.is_instance_of::<PyBool>() {
        vec![v.extract()?]
    } else {
        v.extract().map_err(|_| {
            PyTypeError::new_err(format!("a shape is an int or a sequence of ints, not {}", text()))
        })?
    };
    dims.iter()
        .map(|&d| match u32::try_from(d) {
            Ok(d) => Ok(d),
            Err(_) if d < 0 => Err(PyTensorError::new_err(format!(
                "negative dimension {d} in shape {}: dimensions are sizes, 0 or more (no -1 to infer one)",
                text()
            ))),
            Err(_) => Err(PyTensorError::new_err(format!(
                "dimension {d} in shape {} is larger than {}",
                text(),
                u32::MAX
            ))),
        })
        .collect()
}

/// An index argument of a view method (`Tensor.slice`'s `start`, ...) as an unsigned value up
/// to `max`: a negative or too large one is a `TensorError` that names the method and the
/// argument (PyO3's own conversion said only "can't convert negative int to unsigned").
fn index_arg(method: &str, name: &str, v: i128, max: u32) -> PyResult<u32> {
    u32::try_from(v).ok().filter(|&v| v <= max).ok_or_else(|| {
        PyTensorError::new_err(if v < 0 {
            format!("{method}: {name} {v} is negative (indices count from 0; no negative indexing)")
        } else {
            format!("{method}: {name} {v} is larger than {max}")
        })
    })
}

/// [`index_arg`] for each value of a sequence argument (`offsets[1]`, ...).
fn index_args(method: &str, name: &str, v: &[i128]) -> PyResult<Vec<u32>> {
    (v.iter().enumerate())
        .map(|(k, &x)| index_arg(method, &format!("{name}[{k}]"), x, u32::MAX))
        .collect()
}

/// The NumPy name of `d` (`"float32"`).
pub fn dtype_name(d: DType) -> String {
    d.name().to_ascii_lowercase()
}

/// A tensor error as the Python exception.
pub fn tensor_err(e: TensorError) -> PyErr {
    PyTensorError::new_err(e.to_string())
}

/// A view of a device buffer.
#[pyclass(name = "Tensor", module = "simpler", frozen, eq, from_py_object)]
#[derive(Clone, Copy, PartialEq)]
pub struct PyTensor {
    pub inner: Tensor,
}

impl PyTensor {
    fn wrap(r: Result<Tensor, TensorError>) -> PyResult<PyTensor> {
        r.map(|inner| PyTensor { inner }).map_err(tensor_err)
    }

    /// `Tensor(shape=[..], strides=[..], offset=.., dtype=.., addr=0x..)`.
    pub fn text(&self) -> String {
        format!(
            "Tensor(shape={:?}, strides={:?}, offset={}, dtype={}, addr={:#x})",
            self.inner.shape(),
            self.inner.strides(),
            self.inner.start_offset(),
            dtype_name(self.inner.dtype()),
            self.inner.addr()
        )
    }
}

#[pymethods]
impl PyTensor {
    /// The view's shape.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.shape())
    }
    /// The view's strides, in elements.
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.strides())
    }
    /// The element offset of the view's first element in its buffer.
    #[getter]
    fn offset(&self) -> u64 {
        self.inner.start_offset()
    }
    /// The dtype's NumPy name.
    #[getter]
    fn dtype(&self) -> String {
        dtype_name(self.inner.dtype())
    }
    /// Elements in the view.
    #[getter]
    fn numel(&self) -> u64 {
        self.inner.numel()
    }
    /// The buffer's device address (unique per allocation within a run).
    #[getter]
    fn addr(&self) -> u64 {
        self.inner.addr()
    }
    /// The raw id of the task that created the buffer (`None` for an external tensor).
    #[getter]
    fn owner(&self) -> Option<u64> {
        let o = self.inner.owner();
        o.is_valid().then(|| o.raw())
    }
    /// A sub-box: `shape[d]` elements from `offsets[d]` in every dimension.
    fn view(&self, shape: Vec<i128>, offsets: Vec<i128>) -> PyResult<PyTensor> {
        let shape = index_args("Tensor.view", "shape", &shape)?;
        let offsets = index_args("Tensor.view", "offsets", &offsets)?;
        PyTensor::wrap(self.inner.view(&shape, &offsets))
    }
    /// Elements `start, start+step, ... < end` of dimension `dim`.
    #[pyo3(signature = (dim, start, end, step = 1))]
    fn slice(&self, dim: i128, start: i128, end: i128, step: i128) -> PyResult<PyTensor> {
        let m = "Tensor.slice";
        let dim = index_arg(m, "dim", dim, u32::MAX)?;
        let [start, end, step] =
            [("start", start), ("end", end), ("step", step)].map(|(name, v)| index_arg(m, name, v, u32::MAX));
        PyTensor::wrap(self.inner.slice(dim as usize, start?, end?, step?))
    }
    /// The same elements with another row-major shape (contiguous views only):
    /// `t.reshape(6, 4)` or `t.reshape((6, 4))`.
    #[pyo3(signature = (*shape))]
    fn reshape(&self, shape: &Bound<'_, PyTuple>) -> PyResult<PyTensor> {
        let one = shape
            .get_item(0)
            .ok()
            .filter(|s| shape.len() == 1 && !s.is_instance_of::<PyInt>());
        let shape = match one {
            Some(sequence) => shape_arg(&sequence)?,
            None => shape_arg(shape.as_any())?,
        };
        PyTensor::wrap(self.inner.reshape(&shape))
    }
    /// Swaps dimensions `d0` and `d1`.
    #[pyo3(signature = (d0 = 0, d1 = 1))]
    fn transpose(&self, d0: i128, d1: i128) -> PyResult<PyTensor> {
        let m = "Tensor.transpose";
        let d0 = index_arg(m, "d0", d0, u32::MAX)?;
        let d1 = index_arg(m, "d1", d1, u32::MAX)?;
        PyTensor::wrap(self.inner.transpose(d0 as usize, d1 as usize))
    }
    /// The transpose of a 2-D view.
    #[getter(T)]
    fn t(&self) -> PyResult<PyTensor> {
        self.transpose(0, 1)
    }
    /// `t[a:b, ::2]`: one slice per leading dimension, steps positive. An integer index is
    /// refused (a view keeps its rank): write `t[i:i+1]`.
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let items: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
            Ok(t) => t.iter().collect(),
            Err(_) => vec![key.clone()],
        };
        if items.len() > self.inner.ndims() {
            return Err(PyTensorError::new_err(format!(
                "{} indices for a {}-D tensor",
                items.len(),
                self.inner.ndims()
            )));
        }
        let mut out = self.inner;
        for (dim, item) in items.iter().enumerate() {
            let Ok(slice) = item.cast::<PySlice>() else {
                return Err(PyTensorError::new_err(format!(
                    "index {dim} is not a slice: a view keeps its rank, write t[i:i+1] for one row"
                )));
            };
            let len = out.shape()[dim];
            let ix = slice.indices(len as isize)?;
            if ix.step <= 0 {
                return Err(PyTensorError::new_err(format!(
                    "index {dim}: step {} is not positive",
                    ix.step
                )));
            }
            let end = ix.stop.max(ix.start);
            // A step of at least the length selects the start alone, as NumPy's does; cut there
            // (found by a review: `as u32` kept a step's low 32 bits, so `::2**32+1` was step 1
            // and a write through it went to every element).
            let step = ix.step.min(len.max(1) as isize) as u32;
            out = out
                .slice(dim, ix.start as u32, end as u32, step)
                .map_err(tensor_err)?;
        }
        Ok(PyTensor { inner: out })
    }
    fn __repr__(&self) -> String {
        self.text()
    }
}

/// The description of a runtime-allocated output: shape and dtype (and optionally an initial
/// value); `OUTPUT(shape, dtype)` builds one.
#[pyclass(name = "TensorCreateInfo", module = "simpler", frozen, from_py_object)]
#[derive(Clone, Copy)]
pub struct PyCreateInfo {
    pub inner: TensorCreateInfo,
}

#[pymethods]
impl PyCreateInfo {
    #[new]
    #[pyo3(signature = (shape, dtype = None, initial_value = None))]
    fn new(
        shape: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        initial_value: Option<f64>,
    ) -> PyResult<PyCreateInfo> {
        let mut ci = create_info(shape, dtype)?;
        if let Some(v) = initial_value {
            ci = ci.with_initial_value(v);
        }
        Ok(PyCreateInfo { inner: ci })
    }
    /// The shape.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.shape())
    }
    /// The dtype's NumPy name.
    #[getter]
    fn dtype(&self) -> String {
        dtype_name(self.inner.dtype())
    }
    fn __repr__(&self) -> String {
        format!(
            "TensorCreateInfo(shape={:?}, dtype={})",
            self.inner.shape(),
            dtype_name(self.inner.dtype())
        )
    }
}

/// A create-info of `shape` (an int or a sequence) and `dtype` (a name or a NumPy dtype;
/// `None` is float32).
pub fn create_info(shape: &Bound<'_, PyAny>, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<TensorCreateInfo> {
    let dtype = match dtype {
        Some(d) => dtype_arg(d)?,
        None => DType::Float32,
    };
    TensorCreateInfo::new(&shape_arg(shape)?, dtype).map_err(tensor_err)
}

/// Adds the classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTensor>()?;
    m.add_class::<PyCreateInfo>()?;
    Ok(())
}
