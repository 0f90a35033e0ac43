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
/// inferred), so the edge can leave from that slot's port.
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
            slots[only].tensor_id = Some(id);
            slots[only].inferred = true;
        }
    }
}
