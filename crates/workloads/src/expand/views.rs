//! View operations with paths: sub-box and raw views, slices, reshape, transpose, version,
//! manual_dep, each checked against its buffer before the run.

use simpler_core::{Tensor, TensorError, TensorParts};

use super::{err, Expander, MAX_START_OFFSET};
use crate::error::{WResult, WorkloadError};
use crate::program::SymTensor;
use crate::schema::{ViewOps, ViewSpec};

impl Expander {
    pub(super) fn apply_ops(&self, mut t: SymTensor, ops: &ViewOps<'_>, path: &str) -> WResult<SymTensor> {
        if let Some(v) = ops.view {
            t.view = self.view(t.view, v, &format!("{path}.view"))?;
        }
        if let Some(s) = ops.slice {
            let many = s.as_slice().len() > 1 || matches!(s, crate::schema::Slices::Many(_));
            for (j, sl) in s.as_slice().iter().enumerate() {
                let p = if many {
                    format!("{path}.slice[{j}]")
                } else {
                    format!("{path}.slice")
                };
                if sl.dim >= t.view.ndims() {
                    return Err(err(
                        &format!("{p}.dim"),
                        format!(
                            "dimension {} does not exist; the view has {}",
                            sl.dim,
                            t.view.ndims()
                        ),
                    ));
                }
                let extent = t.view.shape()[sl.dim];
                let start = match &sl.start {
                    Some(e) => self.u32_at(e, &format!("{p}.start"))?,
                    None => 0,
                };
                let end = match &sl.end {
                    Some(e) => self.u32_at(e, &format!("{p}.end"))?,
                    None => extent,
                };
                let step = match &sl.step {
                    Some(e) => self.u32_at(e, &format!("{p}.step"))?,
                    None => 1,
                };
                t.view = t
                    .view
                    .slice(sl.dim, start, end, step)
                    .map_err(|e| view_error(&p, e))?;
            }
        }
        if let Some(r) = ops.reshape {
            let p = format!("{path}.reshape");
            let shape = self.dims(r, &p)?;
            t.view = t.view.reshape(&shape).map_err(|e| view_error(&p, e))?;
        }
        if let Some([d0, d1]) = ops.transpose {
            let p = format!("{path}.transpose");
            t.view = t.view.transpose(d0, d1).map_err(|e| view_error(&p, e))?;
        }
        if let Some(v) = ops.version {
            t.view = t.view.with_version(v);
        }
        if let Some(m) = ops.manual_dep {
            t.view = t.view.with_manual_dep(m);
        }
        Ok(t)
    }

    pub(super) fn view(&self, parent: Tensor, v: &ViewSpec, path: &str) -> WResult<Tensor> {
        let shape = self.dims(&v.shape, &format!("{path}.shape"))?;
        let n = parent.ndims();
        match (&v.offsets, &v.strides) {
            (Some(_), Some(_)) => Err(err(
                path,
                "give `offsets` (a sub-box of the parent) or `strides` with `start_offset` (a raw view), not both",
            )),
            (offsets, None) => {
                if v.start_offset.is_some() {
                    return Err(err(
                        &format!("{path}.start_offset"),
                        "`start_offset` belongs to a raw view with `strides`; a sub-box uses `offsets`",
                    ));
                }
                if shape.len() != n {
                    return Err(err(
                        &format!("{path}.shape"),
                        format!("{} values for a {n}-dimensional tensor", shape.len()),
                    ));
                }
                let offsets = match offsets {
                    Some(o) => self.dims(o, &format!("{path}.offsets"))?,
                    None => vec![0; n],
                };
                if offsets.len() != n {
                    return Err(err(
                        &format!("{path}.offsets"),
                        format!("{} values for a {n}-dimensional tensor", offsets.len()),
                    ));
                }
                parent
                    .view(&shape, &offsets)
                    .map_err(|e| view_error(&format!("{path}.offsets"), e))
            }
            (None, Some(strides)) => {
                let strides = self.dims(strides, &format!("{path}.strides"))?;
                let start_offset = match &v.start_offset {
                    Some(e) => self.ranged(e, &format!("{path}.start_offset"), 0, MAX_START_OFFSET)? as u64,
                    None => 0,
                };
                let parts = TensorParts {
                    shape,
                    strides,
                    start_offset,
                    ..parent.to_parts()
                };
                Tensor::from_parts(&parts).map_err(|e| match e {
                    TensorError::RankMismatch { .. } | TensorError::ZeroStride(_) => {
                        view_error(&format!("{path}.strides"), e)
                    }
                    e => view_error(path, e),
                })
            }
        }
    }
}

/// Maps a view error to its rule.
fn view_error(path: &str, e: TensorError) -> WorkloadError {
    match e {
        TensorError::OutOfBounds { .. } | TensorError::OutsideBuffer { .. } => {
            err(path, format!("view outside its buffer: {e}"))
        }
        e => err(path, format!("bad view: {e}")),
    }
}
