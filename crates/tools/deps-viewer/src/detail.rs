//! Argument and edge-row details for the HTML view, read in a second streaming pass and kept
//! only for the shown tasks.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use simpler_artifacts::deps::{self, ArgType, DepsReadError, DepsSink, Edge, EdgeSource, Task, Tensor};

use crate::view::View;

/// One argument slot of a shown task, ready to draw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// The argument as written in deps.json.
    pub arg: deps::TaskArg,
    /// The tensor id: from the file, or inferred for an `OUTPUT` slot from a creator edge.
    pub tensor_id: Option<u64>,
    /// True when `tensor_id` was inferred (drawn with a `?`).
    pub inferred: bool,
    /// For an inferred `OUTPUT` slot: the slice geometry inferred with it (see
    /// [`Geometry::of_output`]); `None` otherwise.
    pub geometry: Option<Geometry>,
}

/// A slice's shape, strides and element offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Geometry {
    /// Per-dimension element count.
    pub shape: Vec<u32>,
    /// Per-dimension stride in elements.
    pub strides: Vec<u32>,
    /// Element offset into the buffer.
    pub start_offset: u64,
}

impl Geometry {
    /// The geometry of a runtime `OUTPUT` that a creator edge names: a fresh buffer, so the
    /// output is the whole buffer from element 0. Its shape is the consumer's view of it when
    /// that view is the whole buffer, contiguous (`consumer_*` of the edge, `numel` elements);
    /// otherwise the flat `[numel]` / `[1]`. `None` without the buffer's size.
    pub fn of_output(row: &Edge, numel: Option<u64>) -> Option<Geometry> {
        let numel = numel?;
        let whole = match (
            &row.consumer_shape,
            &row.consumer_strides,
            row.consumer_start_offset,
        ) {
            (Some(shape), Some(strides), Some(0)) if is_contiguous(shape, strides, numel) => Some(Geometry {
                shape: shape.clone(),
                strides: strides.clone(),
                start_offset: 0,
            }),
            _ => None,
        };
        whole.or_else(|| {
            Some(Geometry {
                shape: vec![u32::try_from(numel).ok()?],
                strides: vec![1],
                start_offset: 0,
            })
        })
    }
}

/// Row-major contiguous strides over exactly `numel` elements.
fn is_contiguous(shape: &[u32], strides: &[u32], numel: u64) -> bool {
    if shape.len() != strides.len() || shape.is_empty() {
        return false;
    }
    let mut expected = 1u64;
    for (&n, &s) in shape.iter().zip(strides).rev() {
        if n > 1 && u64::from(s) != expected {
            return false;
        }
        expected = expected.saturating_mul(u64::from(n));
    }
    expected == numel
}

/// Details of the shown part of a deps.json.
#[derive(Debug, Clone, Default)]
pub struct Details {
    /// Argument slots per shown task id (tasks in `tasks[]` only).
    pub slots: HashMap<u64, Vec<Slot>>,
    /// Tensors referenced by shown tasks: id → (index in `tensors[]`, entry).
    pub tensors: HashMap<u64, (usize, Tensor)>,
    /// `edges[]` rows whose both ends are shown, in file order.
    pub rows: Vec<Edge>,
}

impl Details {
    /// The display name of a tensor: `T<index in tensors[]>`, or `T?` if it is not listed.
    pub fn tensor_name(&self, id: u64) -> String {
        match self.tensors.get(&id) {
            Some((index, _)) => format!("T{index}"),
            None => "T?".to_string(),
        }
    }
}

/// Reads the details of `view`'s shown tasks from `path`.
pub fn load(path: &Path, view: &View<'_>) -> Result<Details, DepsReadError> {
    let graph = view.graph();
    let shown = |id: u64| graph.index_of(id).is_some_and(|n| view.node_shown(n));
    let mut sink = DetailSink {
        shown: &shown,
        details: Details::default(),
        tensor_index: 0,
        referenced: None,
    };
    deps::read_deps(path, &mut sink)?;
    let mut details = sink.details;
    backfill_output_ids(&mut details);
    Ok(details)
}

struct DetailSink<'a> {
    shown: &'a dyn Fn(u64) -> bool,
    details: Details,
    tensor_index: usize,
    referenced: Option<HashSet<u64>>,
}

impl DepsSink for DetailSink<'_> {
    type Task = Task;
    type Tensor = Tensor;
    type Edge = Edge;

    fn task(&mut self, task: Task) {
        if (self.shown)(task.task_id) {
            let slots = task
                .args
                .into_iter()
                .map(|arg| Slot {
                    tensor_id: arg.tensor_id,
                    inferred: false,
                    geometry: None,
                    arg,
                })
                .collect();
            self.details.slots.insert(task.task_id, slots);
        }
    }

    fn tensor(&mut self, tensor: Tensor) {
        let index = self.tensor_index;
        self.tensor_index += 1;
        // tasks[] precedes tensors[] in every file the runtime writes; index the shown tasks'
        // tensor ids once, at the first tensor.
        let slots = &self.details.slots;
        let referenced = self
            .referenced
            .get_or_insert_with(|| slots.values().flatten().filter_map(|s| s.tensor_id).collect());
        if referenced.contains(&tensor.tensor_id) {
            self.details
                .tensors
                .entry(tensor.tensor_id)
                .or_insert((index, tensor));
        }
    }

    fn edge(&mut self, edge: Edge) {
        if (self.shown)(edge.pred) && (self.shown)(edge.succ) {
            self.details.rows.push(edge);
        }
    }
}

/// A creator edge names the tensor its producer created. If the producer has no written slot
/// with that id but exactly one `OUTPUT` slot without an id, that slot is the tensor (marked
/// inferred), so the edge can leave from that slot's port; its geometry is inferred with it
/// ([`Geometry::of_output`]).
fn backfill_output_ids(details: &mut Details) {
    for row in &details.rows {
        if row.source != EdgeSource::Creator {
            continue;
        }
        let (Some(id), Some(slots)) = (row.tensor_id, details.slots.get_mut(&row.pred)) else {
            continue;
        };
        let written = |s: &Slot| s.arg.arg_type.is_write() && s.tensor_id == Some(id);
        if slots.iter().any(written) {
            continue;
        }
        let open: Vec<usize> = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.arg.arg_type == ArgType::Output && s.tensor_id.is_none())
            .map(|(i, _)| i)
            .collect();
        if let [only] = open[..] {
            let numel = details.tensors.get(&id).map(|(_, t)| t.buffer_numel);
            slots[only].tensor_id = Some(id);
            slots[only].inferred = true;
            slots[only].geometry = Geometry::of_output(row, numel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creator(shape: &[u32], strides: &[u32], start: u64) -> Edge {
        Edge {
            source: EdgeSource::Creator,
            arg: Some(0),
            tensor_id: Some(7),
            consumer_dtype: Some("FLOAT32".into()),
            consumer_shape: Some(shape.to_vec()),
            consumer_start_offset: Some(start),
            consumer_strides: Some(strides.to_vec()),
            ..Edge::explicit(1, 2)
        }
    }

    #[test]
    fn an_outputs_geometry_is_the_consumers_whole_view_or_flat() {
        let g = Geometry::of_output(&creator(&[4, 8], &[8, 1], 0), Some(32)).unwrap();
        assert_eq!((g.shape, g.strides, g.start_offset), (vec![4, 8], vec![8, 1], 0));
        // A partial view (an offset, fewer elements, a transposed view) says nothing of the
        // output's shape: the flat whole buffer.
        for row in [
            creator(&[4, 8], &[8, 1], 8),
            creator(&[2, 8], &[8, 1], 0),
            creator(&[8, 4], &[1, 8], 0),
        ] {
            let g = Geometry::of_output(&row, Some(32)).unwrap();
            assert_eq!((g.shape, g.strides, g.start_offset), (vec![32], vec![1], 0));
        }
        assert_eq!(Geometry::of_output(&creator(&[4, 8], &[8, 1], 0), None), None);
    }
}
