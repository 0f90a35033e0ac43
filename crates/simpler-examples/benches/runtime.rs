//! `cargo bench -p simpler-examples`: the runtime's hot paths (submit + dependency inference,
//! dispatch, completion, reclaim) on the synthetic workloads under both runtimes, and the
//! diagnostics' cost (scope stats, dep_gen, swimlane) against the same workload with them off.
//! `simpler bench` prints the same figures as ns/task and ratios.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use simpler_examples::bench::{bench_config, bench_worker, run_workload, Workload};
use simpler_runtime::RuntimeKind;

const TASKS: u64 = 100_000;

fn runtime_hot_paths(c: &mut Criterion) {
    let w = bench_worker().unwrap();
    let mut g = c.benchmark_group("runtime");
    g.sample_size(10).throughput(Throughput::Elements(TASKS));
    for wl in Workload::ALL {
        for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
            let cfg = bench_config(kind, TASKS);
            g.bench_function(BenchmarkId::new(wl.name(), kind.name()), |b| {
                b.iter(|| run_workload(&w, &cfg, wl, TASKS).unwrap())
            });
        }
    }
    g.finish();
}

fn diagnostics_cost(c: &mut Criterion) {
    let w = bench_worker().unwrap();
    let dir = std::env::temp_dir().join(format!("simpler-criterion-{}", std::process::id()));
    let mut g = c.benchmark_group("diagnostics");
    g.sample_size(10).throughput(Throughput::Elements(TASKS));
    for wl in [Workload::Independent4, Workload::Scopes] {
        for (name, scope_stats, dep_gen, swimlane) in [
            ("off", false, false, false),
            ("scope_stats", true, false, false),
            ("dep_gen", false, true, false),
            ("swimlane", false, false, true),
        ] {
            let mut cfg = bench_config(RuntimeKind::Tmr, TASKS);
            cfg.enable_scope_stats = scope_stats;
            cfg.enable_dep_gen = dep_gen;
            cfg.enable_l2_swimlane = swimlane;
            cfg.output_prefix = Some(dir.join(format!("{}_{name}", wl.name())));
            g.bench_function(BenchmarkId::new(wl.name(), name), |b| {
                b.iter(|| run_workload(&w, &cfg, wl, TASKS).unwrap())
            });
        }
    }
    // The scope-stats probe and hand-off alone: the host keeps no record (the disk writer is
    // out of the picture), so this is the device-side cost of an enabled scope boundary.
    let mut cfg = bench_config(RuntimeKind::Tmr, TASKS);
    cfg.enable_scope_stats = true;
    cfg.faults.host_storage_limit = Some(0);
    cfg.output_prefix = Some(dir.join("scopes_probe_only"));
    g.bench_function(
        BenchmarkId::new(Workload::Scopes.name(), "scope_stats_probe_only"),
        |b| b.iter(|| run_workload(&w, &cfg, Workload::Scopes, TASKS).unwrap()),
    );
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The dep_gen replay alone: the dependency function, the check and the streamed graph, one
/// thread.
fn replay_throughput(c: &mut Criterion) {
    // On a RAM disk when there is one: the disk's write-back speed is not the replay's.
    let shm = std::path::Path::new("/dev/shm");
    let root = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let dir = root.join(format!("simpler-criterion-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut g = c.benchmark_group("dep_gen");
    g.sample_size(10).throughput(Throughput::Elements(TASKS));
    g.bench_function("replay_4arg_records", |b| {
        b.iter(|| simpler_runtime::collectors::dep_gen::bench_replay(TASKS as usize, &dir).unwrap())
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, runtime_hot_paths, diagnostics_cost, replay_throughput);
criterion_main!(benches);
