//! `simpler critical-path` at scale: 1M tasks and 3M edges, end to end from the files
//! (streaming both readers, building the graph, both paths) and the analysis alone.
//!
//! Task `i` runs 25 ns from `10·i` on core `i mod 72` and depends on `i − 1`, `i − 2` and
//! `i − 3` (so some edges are happens-before and some are not). Target: ≤ 5 s end to end.
//! `cargo bench -p simpler-critical-path`.

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use simpler_artifacts::name_map::NameMap;
use simpler_critical_path::{analyze, load_graph};

const TASKS: u64 = 1_000_000;
const CORES: u64 = 72;

fn write_inputs(dir: &Path) {
    support::write_records(
        &dir.join("l2_swimlane_records.json"),
        24,
        (0..TASKS).map(|i| (i, (i % CORES) as u32, 10 * i, 10 * i + 25)),
    );
    support::write_deps(
        &dir.join("deps.json"),
        (0..TASKS).map(|i| (i, [-1, 0, -1])),
        (3..TASKS).flat_map(|i| [(i - 1, i), (i - 2, i), (i - 3, i)]),
    );
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    let records = dir.path().join("l2_swimlane_records.json");
    let deps = dir.path().join("deps.json");
    let names = NameMap::default();
    let mut group = c.benchmark_group("critical_path_1m_tasks_3m_edges");
    group.sample_size(10).measurement_time(Duration::from_secs(30));
    group.bench_function("end_to_end_from_files", |b| {
        b.iter(|| {
            let (graph, hz) = load_graph(&records, &deps, &names, 2).unwrap();
            let a = analyze("bench".into(), hz, graph, dir.path()).unwrap().unwrap();
            assert_eq!(a.graph.len(), TASKS as usize);
            a.static_path.length
        })
    });
    let (graph, hz) = load_graph(&records, &deps, &names, 2).unwrap();
    group.bench_function("paths_only", |b| {
        b.iter(|| {
            analyze("bench".into(), hz, graph.clone(), dir.path())
                .unwrap()
                .unwrap()
                .observed
                .segments
                .len()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
