//! Scale benchmark of the text view: 1,000,000 tasks and 3,000,000 edges.
//!
//! ```text
//! cargo bench -p simpler-deps-viewer --bench text_view_scale            # generate + view
//! target/release/deps/text_view_scale-<hash> view <deps.json>           # view only
//! ```
//!
//! The file is generated once into `target/deps-viewer-bench/deps.json` (about 1.4 GB) with
//! realistic rows: every task has two INPUT args and one OUTPUT, every edge carries full
//! consumer (and for tensormap edges producer) geometry. Run the `view` form under
//! `/usr/bin/time -v` for the peak memory of the view alone. Prints wall times; asserts
//! nothing about them.

use std::fs::{self, File};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Instant;

use simpler_artifacts::deps::{
    make_task_id, tensor_id, ArgType, DepFlag, DepsWriter, Edge, EdgeSource, Overlap, Scope, Task, TaskArg,
    Tensor,
};

/// Any error, printed by `main` with its `Debug` form.
type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const TASKS: u64 = 1_000_000;
const EDGES_PER_TASK: u64 = 3;
const NUMEL: u64 = 16_384;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    match args.first().map(String::as_str) {
        Some("generate") => {
            let path = PathBuf::from(args.get(1).map_or("deps.json", String::as_str));
            generate(&path)
        }
        Some("view") => {
            let path = PathBuf::from(args.get(1).map_or("deps.json", String::as_str));
            view(&path)
        }
        _ => {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/deps-viewer-bench");
            fs::create_dir_all(&dir)?;
            let path = dir.join("deps.json");
            if !path.exists() {
                generate(&path)?;
            }
            view(&path)
        }
    }
}

fn view(path: &Path) -> Result<()> {
    let start = Instant::now();
    let out = simpler_deps_viewer::write_text_view(path)?;
    let secs = start.elapsed().as_secs_f64();
    let size = fs::metadata(path)?.len();
    let out_size = fs::metadata(&out)?.len();
    println!(
        "text view of {} ({:.0} MB) -> {} ({:.0} MB) in {secs:.2} s",
        path.display(),
        size as f64 / 1e6,
        out.display(),
        out_size as f64 / 1e6
    );
    Ok(())
}

fn addr(task: u64) -> u64 {
    0x1_0000_0000 + task * NUMEL * 4
}

fn task_id_of(i: u64) -> u64 {
    // Spread tasks over rings 0..4 like nested scopes do.
    make_task_id((i % 4) as u8, (i / 4) as u32)
}

fn input_arg(idx: i32, producer: u64) -> TaskArg {
    TaskArg {
        idx,
        arg_type: ArgType::Input,
        tensor_id: Some(tensor_id(addr(producer), 0)),
        dtype: Some("FLOAT32".into()),
        shape: Some(vec![128, 128]),
        start_offset: Some(0),
        strides: Some(vec![128, 1]),
    }
}

fn generate(path: &Path) -> Result<()> {
    let start = Instant::now();
    let mut w = DepsWriter::new(BufWriter::with_capacity(1 << 20, File::create(path)?))?;
    let producers = |i: u64| -> [u64; EDGES_PER_TASK as usize] {
        // Three distinct earlier tasks (for i >= 3): near, medium and far back.
        [i.saturating_sub(1), i.saturating_sub(7), i.saturating_sub(1000)]
    };
    for i in 0..TASKS {
        let [p0, p1, _] = producers(i);
        w.task(&Task {
            task_id: task_id_of(i),
            scope: Some(Scope::Auto),
            early_dispatch: None,
            kernel_ids: Some(vec![-1, (i % 5) as i32, -1]),
            block_num: Some(if i % 100 == 0 { 4 } else { 1 }),
            args: vec![
                input_arg(0, p0),
                input_arg(1, p1),
                TaskArg {
                    idx: 2,
                    arg_type: ArgType::Output,
                    tensor_id: None,
                    dtype: None,
                    shape: None,
                    start_offset: None,
                    strides: None,
                },
            ],
        })?;
    }
    for i in 0..TASKS {
        w.tensor(&Tensor {
            tensor_id: tensor_id(addr(i), 0),
            buffer_addr: addr(i),
            version: Some(0),
            dtype: "FLOAT32".into(),
            buffer_numel: NUMEL,
        })?;
    }
    let mut edges = 0u64;
    // The first tasks have no earlier task to depend on: their missing producers are alloc
    // tasks (ids absent from tasks[]), so the graph stays acyclic with exactly
    // TASKS * EDGES_PER_TASK rows.
    for i in 0..TASKS {
        for (k, p) in producers(i).into_iter().enumerate() {
            let pred = if p >= i {
                make_task_id(0, u32::MAX - k as u32)
            } else {
                task_id_of(p)
            };
            let tensormap = k == 2;
            let a = input_arg(k.min(1) as i32, p);
            w.edge(&Edge {
                pred,
                succ: task_id_of(i),
                arg: Some(a.idx),
                source: if tensormap {
                    EdgeSource::Tensormap
                } else {
                    EdgeSource::Creator
                },
                flags: Some(if tensormap {
                    vec![DepFlag::Wait]
                } else {
                    vec![DepFlag::Wait, DepFlag::Retain]
                }),
                overlap: tensormap.then_some(Overlap::Covered),
                tensor_id: a.tensor_id,
                consumer_dtype: a.dtype.clone(),
                consumer_shape: a.shape.clone(),
                consumer_start_offset: a.start_offset,
                consumer_strides: a.strides.clone(),
                producer_shape: tensormap.then(|| vec![128, 128]),
                producer_start_offset: tensormap.then_some(0),
                producer_strides: tensormap.then(|| vec![128, 1]),
            })?;
            edges += 1;
        }
    }
    w.finish()?;
    println!(
        "generated {} ({TASKS} tasks, {edges} edges, {:.0} MB) in {:.1} s",
        path.display(),
        fs::metadata(path)?.len() as f64 / 1e6,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
