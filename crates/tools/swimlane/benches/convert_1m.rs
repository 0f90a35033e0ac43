//! Converts 1,000,000 task rows with a deps.json of 3,000,000 annotated edges.
//!
//! ```text
//! cargo bench -p simpler-swimlane                      # generate once, convert, measure
//! /usr/bin/time -v target/release/examples/swimlane \
//!     target/tmp/swimlane-bench/l2_swimlane_records.json   # peak memory of one conversion
//! ```
//!
//! The inputs are written once into `target/tmp/swimlane-bench/` with the artifact writers
//! (`SwimlaneWriter`, `DepsWriter`): a level-2 records file (dispatch and finish stamps, so
//! both the Worker View and the Scheduler View get a slice and a dependency mirror per pair)
//! of 1,000,000 single-block AIV tasks on 24 clusters and 4 scheduler threads, and a
//! deps.json with a `tasks[]` entry (two tensor args) and a tensor per task and three edges
//! per task with full consumer (and for tensormap edges producer) geometry. Prints the input
//! sizes and one cold wall-clock time before criterion's measurement; asserts the counts,
//! nothing about time.

use std::fs::{self, File};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use simpler_artifacts::deps::{
    make_task_id, ArgType, DepsWriter, Edge, EdgeSource, Overlap, Scope, Task, TaskArg, Tensor,
};
use simpler_artifacts::swimlane::{
    core_types_for_clusters, AicoreRecord, AicpuRecord, Level, SwimlaneWriter, TaskInfo, WriteHeader,
    FILE_NAME,
};

/// Task rows (one per task).
const TASKS: u64 = 1_000_000;
/// Edges per task: 3,000,000 in all.
const EDGES_PER_TASK: u64 = 3;
/// Clusters of the generated platform (48 AIV cores).
const CLUSTERS: u32 = 24;
/// Scheduler threads.
const SCHEDULERS: u32 = 4;
/// Elements per tensor.
const NUMEL: u64 = 16_384;
/// Bumped when the generated content changes, so a stale input is regenerated.
const INPUT_VERSION: &str = "2";

fn task_id(i: u64) -> u64 {
    make_task_id((i / 250_000) as u8, (i % 250_000) as u32)
}

/// Predecessors of task `i`: tasks of the previous waves (wrapping for the first tasks).
fn preds(i: u64) -> [u64; EDGES_PER_TASK as usize] {
    let aiv = u64::from(2 * CLUSTERS);
    [aiv, aiv + 1, 2 * aiv + 5].map(|back| (i + TASKS - back) % TASKS)
}

/// Start, end, dispatch and finish of task `i`, ns.
fn timing(i: u64) -> (u64, u64, u64, u64) {
    let wave = i / u64::from(2 * CLUSTERS);
    let start = 1_000 + wave * 2_000 + (i % 13) * 7;
    (start, start + 900 + (i % 7) * 100 / 7, start - 100, start + 1_950)
}

fn write_records(path: &Path) -> std::io::Result<()> {
    let out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let header = WriteHeader {
        level: Level::AicpuTiming,
        clusters: CLUSTERS,
        scheduler_threads: SCHEDULERS,
        core_types: core_types_for_clusters(CLUSTERS),
        core_to_thread: Vec::new(),
    };
    let mut w = SwimlaneWriter::begin(out, &header)?;
    let aiv = u64::from(2 * CLUSTERS);
    let core = |i: u64| CLUSTERS + (i % aiv) as u32;
    let reg = |i: u64| (i / aiv) as u32;
    for i in 0..TASKS {
        let (start, end, _, _) = timing(i);
        w.aicore(&AicoreRecord {
            core_id: core(i),
            task_token: task_id(i),
            reg_task_id: reg(i),
            start,
            end,
            receive_to_start: 0,
        })?;
    }
    for i in 0..TASKS {
        let (_, _, dispatch, finish) = timing(i);
        w.aicpu(&AicpuRecord {
            core_id: core(i),
            reg_task_id: reg(i),
            dispatch,
            finish,
        })?;
    }
    for i in 0..TASKS {
        let func = (i % 5) as i32;
        w.task_info(&TaskInfo {
            func_id: func,
            block_idx: 0,
            block_num: 1,
            kernel_ids: [-1, func, -1],
            sched_thread: (i % u64::from(SCHEDULERS)) as u32,
        })?;
    }
    w.finish()?;
    Ok(())
}

fn tensor_arg(idx: i32, arg_type: ArgType, tensor_id: u64) -> TaskArg {
    TaskArg {
        idx,
        arg_type,
        tensor_id: Some(tensor_id),
        dtype: Some("FLOAT32".into()),
        shape: Some(vec![NUMEL as u32]),
        start_offset: Some(0),
        strides: Some(vec![1]),
    }
}

fn write_deps(path: &Path) -> std::io::Result<()> {
    let mut w = DepsWriter::new(BufWriter::with_capacity(1 << 20, File::create(path)?))?;
    for i in 0..TASKS {
        let [a, b, _] = preds(i);
        w.task(&Task {
            task_id: task_id(i),
            scope: Some(Scope::Auto),
            early_dispatch: None,
            kernel_ids: Some(vec![-1, (i % 5) as i32, -1]),
            block_num: Some(1),
            args: vec![tensor_arg(0, ArgType::Input, a), tensor_arg(1, ArgType::Input, b)],
        })?;
    }
    for i in 0..TASKS {
        w.tensor(&Tensor {
            tensor_id: i,
            buffer_addr: i * NUMEL * 4,
            version: Some(0),
            dtype: "FLOAT32".into(),
            buffer_numel: NUMEL,
        })?;
    }
    for i in 0..TASKS {
        for (arg, pred) in preds(i).into_iter().enumerate() {
            let tensormap = arg == 2;
            w.edge(&Edge {
                pred: task_id(pred),
                succ: task_id(i),
                arg: Some(arg as i32),
                source: if tensormap {
                    EdgeSource::Tensormap
                } else {
                    EdgeSource::Creator
                },
                flags: None,
                overlap: tensormap.then_some(Overlap::Covered),
                tensor_id: Some(pred),
                consumer_dtype: Some("FLOAT32".into()),
                consumer_shape: Some(vec![NUMEL as u32]),
                consumer_start_offset: Some(0),
                consumer_strides: Some(vec![1]),
                producer_shape: tensormap.then(|| vec![NUMEL as u32]),
                producer_start_offset: tensormap.then_some(0),
                producer_strides: tensormap.then(|| vec![1]),
            })?;
        }
    }
    w.finish()?;
    Ok(())
}

/// Generates the inputs unless an up-to-date copy exists; returns the records path.
fn input() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("swimlane-bench");
    fs::create_dir_all(&dir).expect("bench dir");
    let records = dir.join(FILE_NAME);
    let stamp = dir.join("generated");
    if fs::read_to_string(&stamp).ok().as_deref() != Some(INPUT_VERSION) {
        let started = Instant::now();
        write_records(&records).expect("write records");
        write_deps(&dir.join("deps.json")).expect("write deps.json");
        fs::write(&stamp, INPUT_VERSION).expect("stamp");
        println!("generated inputs in {:.1} s", started.elapsed().as_secs_f64());
    }
    records
}

fn size_mb(path: &Path) -> f64 {
    fs::metadata(path).map(|m| m.len() as f64 / 1e6).unwrap_or(0.0)
}

fn convert_1m(c: &mut Criterion) {
    let records = input();
    let out = records.with_file_name("merged_swimlane.json");
    let started = Instant::now();
    let summary = simpler_swimlane::convert(&records, Some(&out), None, None).expect("convert");
    let elapsed = started.elapsed();
    assert_eq!(summary.slices.worker, TASKS as usize);
    assert_eq!(summary.slices.scheduler_view, TASKS as usize);
    assert_eq!(summary.unique_pairs, (TASKS * EDGES_PER_TASK) as usize);
    let (w, s) = (summary.flows.worker, summary.flows.scheduler);
    assert_eq!(w.dependency + w.hb_violation, (TASKS * EDGES_PER_TASK) as usize);
    println!(
        "swimlane 1M rows / 3M edges (level 2): records {:.0} MB, deps.json {:.0} MB, trace {:.0} MB, \
         {} Worker View + {} Scheduler View dependency flows ({} + {} hb_violation), first conversion {:.2} s",
        size_mb(&records),
        size_mb(&records.with_file_name("deps.json")),
        size_mb(&out),
        w.dependency + w.hb_violation,
        s.dependency + s.hb_violation,
        w.hb_violation,
        s.hb_violation,
        elapsed.as_secs_f64()
    );

    let mut group = c.benchmark_group("swimlane");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(60));
    group.bench_function("convert_1m_rows_3m_edges", |b| {
        b.iter(|| simpler_swimlane::convert(&records, Some(&out), None, None).expect("convert"))
    });
    group.finish();
}

criterion_group!(benches, convert_1m);
criterion_main!(benches);
