//! Writing crafted run folders: the records and deps.json formats appear only here (shared by
//! the tests and the benchmark through `#[path]`).
#![allow(dead_code)]

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use simpler_artifacts::deps::{DepsWriter, Edge, Scope, Task};
use simpler_artifacts::swimlane::{write_rows, CoreType, Level, TaskRow, WriteHeader};

/// Writes a records file of `(task, core, start, end)` slices (dispatched 1 tick before the
/// start, finished 1 tick after the end; cores `0..clusters` are AIC, the rest AIV).
pub fn write_records(path: &Path, clusters: u32, slices: impl IntoIterator<Item = (u64, u32, u64, u64)>) {
    let rows: Vec<TaskRow> = slices
        .into_iter()
        .map(|(task_id, core_id, start, end)| TaskRow {
            task_id,
            reg_task_id: 0,
            kernel_ids: [-1, 0, -1],
            func_id: 0,
            block_idx: 0,
            block_num: 1,
            core_id,
            core_type: if core_id < clusters {
                CoreType::Aic
            } else {
                CoreType::Aiv
            },
            sched_thread: Some(0),
            dispatch_ns: Some(start.saturating_sub(1)),
            receive_ns: start,
            start_ns: start,
            end_ns: end,
            finish_ns: Some(end + 1),
        })
        .collect();
    let out = BufWriter::new(File::create(path).unwrap());
    let header = WriteHeader::for_clusters(Level::AicpuTiming, clusters, 1);
    write_rows(out, &header, &rows, &[], &[]).unwrap();
}

/// Writes a deps.json of `(task, kernel_ids)` tasks and explicit `(pred, succ)` edges.
pub fn write_deps(
    path: &Path,
    tasks: impl IntoIterator<Item = (u64, [i32; 3])>,
    edges: impl IntoIterator<Item = (u64, u64)>,
) {
    let out = BufWriter::new(File::create(path).unwrap());
    let mut w = DepsWriter::new(out).unwrap();
    for (task_id, kernel_ids) in tasks {
        w.task(&Task {
            task_id,
            scope: Some(Scope::Auto),
            early_dispatch: None,
            kernel_ids: Some(kernel_ids.to_vec()),
            block_num: Some(1),
            args: Vec::new(),
        })
        .unwrap();
    }
    for (pred, succ) in edges {
        w.edge(&Edge::explicit(pred, succ)).unwrap();
    }
    w.finish().unwrap();
}
