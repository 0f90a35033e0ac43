//! Shared helpers: testdata paths, writing generated inputs with the artifact writers, and
//! converting.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use simpler_artifacts::deps::{DepsWriter, Edge};
use simpler_artifacts::swimlane::{
    core_types_for_clusters, AicoreRecord, AicpuRecord, CoreType, DummyRow, Level, OrchRecord, PhaseRecord,
    SwimlaneWriter, TaskInfo, TaskRow, WriteHeader, FILE_NAME,
};
use simpler_swimlane::ConvertSummary;

use crate::check::Trace;

/// `tests/testdata/<sub>` of this crate.
pub fn testdata(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/testdata")
        .join(sub)
}

/// A task row with the timing that matters to flows; dispatch/finish 50 ns around it.
#[allow(clippy::too_many_arguments)]
pub fn row(
    task_id: u64,
    kernel_ids: [i32; 3],
    func_id: i32,
    block: (u32, u32),
    core_id: u32,
    core_type: CoreType,
    start_ns: u64,
    end_ns: u64,
) -> TaskRow {
    TaskRow {
        task_id,
        kernel_ids,
        func_id,
        block_idx: block.0,
        block_num: block.1,
        core_id,
        core_type,
        sched_thread: Some(core_id % 2),
        reg_task_id: 0,
        dispatch_ns: Some(start_ns - 50),
        receive_ns: start_ns,
        start_ns,
        end_ns,
        finish_ns: Some(end_ns + 50),
    }
}

/// A plain AIV row (block 0 of 1, kernel in subslot aiv0).
pub fn aiv(task_id: u64, func_id: i32, core_id: u32, start_ns: u64, end_ns: u64) -> TaskRow {
    row(
        task_id,
        [-1, func_id, -1],
        func_id,
        (0, 1),
        core_id,
        CoreType::Aiv,
        start_ns,
        end_ns,
    )
}

/// Writes `l2_swimlane_records.json` into `dir` with the writer the runtime uses: the rows,
/// and a submit span for every task id in them and in `submit_only` (tasks that never ran).
pub fn write_records(
    dir: &Path,
    clusters: u32,
    tasks: &[TaskRow],
    dummies: &[DummyRow],
    submit_only: &[u64],
) -> PathBuf {
    let path = dir.join(FILE_NAME);
    let out = BufWriter::new(File::create(&path).unwrap());
    let header = WriteHeader {
        level: Level::OrchPhases,
        clusters,
        scheduler_threads: 2,
        core_types: core_types_for_clusters(clusters),
        core_to_thread: (0..clusters * 3).map(|c| (c % 2) as i32).collect(),
    };
    let mut w = SwimlaneWriter::begin(out, &header).unwrap();
    let reg = |i: usize| i as u32;
    for (i, t) in tasks.iter().enumerate() {
        w.aicore(&AicoreRecord {
            core_id: t.core_id,
            task_token: t.task_id,
            reg_task_id: reg(i),
            start: t.start_ns,
            end: t.end_ns,
            receive_to_start: 0,
        })
        .unwrap();
    }
    for (i, t) in tasks.iter().enumerate() {
        w.aicpu(&AicpuRecord {
            core_id: t.core_id,
            reg_task_id: reg(i),
            dispatch: t.dispatch_ns.unwrap(),
            finish: t.finish_ns.unwrap(),
        })
        .unwrap();
    }
    for t in tasks {
        w.task_info(&TaskInfo {
            func_id: t.func_id,
            block_idx: t.block_idx,
            block_num: t.block_num,
            kernel_ids: t.kernel_ids,
            sched_thread: t.sched_thread.unwrap(),
        })
        .unwrap();
    }
    let mut dummies: Vec<&DummyRow> = dummies.iter().collect();
    dummies.sort_by_key(|d| d.sched_thread);
    for d in dummies {
        w.phase(
            d.sched_thread,
            &PhaseRecord {
                kind: "dummy_task",
                start_cycles: d.finish_ns,
                end_cycles: d.finish_ns,
                loop_iter: 0,
                tasks_processed: 1,
                pop_hit: None,
                pop_miss: None,
                task_id: Some(d.task_id),
                shared_at_start: [0; 3],
                shared_at_end: [0; 3],
            },
        )
        .unwrap();
    }
    let mut ids: Vec<u64> = tasks
        .iter()
        .map(|t| t.task_id)
        .chain(submit_only.iter().copied())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    for (i, id) in ids.into_iter().enumerate() {
        let start = 10 * i as u64;
        w.orch(&OrchRecord {
            submit_idx: i as u64,
            task_id: id,
            start_cycles: start,
            end_cycles: start + 5,
        })
        .unwrap();
    }
    w.finish().unwrap();
    path
}

/// Writes a deps.json with only `edges[]` (explicit edges) into `dir`.
pub fn write_deps(dir: &Path, pairs: &[(u64, u64)]) -> PathBuf {
    let path = dir.join("deps.json");
    let mut w = DepsWriter::new(BufWriter::new(File::create(&path).unwrap())).unwrap();
    for &(pred, succ) in pairs {
        w.edge(&Edge::explicit(pred, succ)).unwrap();
    }
    w.finish().unwrap();
    path
}

/// Converts `records` with defaults into `out_dir` and loads the checked trace.
pub fn convert_into(records: &Path, out_dir: &Path) -> (ConvertSummary, Trace) {
    let out = out_dir.join("merged_swimlane.json");
    let summary = simpler_swimlane::convert(records, Some(&out), None, None).expect("convert");
    let trace = Trace::load(&out);
    (summary, trace)
}
