//! Renders a generated 2,000,000-sample `scope_stats.jsonl` (the issue's scale target: under
//! 10 s, HTML under 5 MB). Prints the input size, the HTML size and one cold wall-clock time
//! before criterion's measurement.
//!
//! ```text
//! cargo bench -p simpler-scope-stats-plot
//! ```

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};

#[path = "../tests/common/generate.rs"]
mod generate;

/// Samples in the benchmark input.
const SAMPLES: u64 = 2_000_000;

fn input() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("scope-stats-plot-bench");
    std::fs::create_dir_all(&dir).expect("bench dir");
    let path = dir.join("scope_stats_2m.jsonl");
    generate::write_jsonl(&path, SAMPLES).expect("generate bench input");
    path
}

fn render_2m(c: &mut Criterion) {
    let path = input();
    let out = path.with_file_name("out");
    let started = Instant::now();
    let html = simpler_scope_stats_plot::render_report(&path, Some(&out)).expect("render");
    let elapsed = started.elapsed();
    let in_size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let out_size = std::fs::metadata(&html).map(|m| m.len()).unwrap_or(0);
    println!(
        "scope-stats-plot 2M samples: input {:.1} MB, HTML {:.2} MB, first render {:.2} s",
        in_size as f64 / 1e6,
        out_size as f64 / 1e6,
        elapsed.as_secs_f64()
    );
    assert!(out_size < 5_000_000, "HTML must stay under 5 MB");

    let mut group = c.benchmark_group("scope_stats_plot");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(30));
    group.bench_function("render_2m_samples", |b| {
        b.iter(|| simpler_scope_stats_plot::render_report(&path, Some(&out)).expect("render"))
    });
    group.finish();
}

criterion_group!(benches, render_2m);
criterion_main!(benches);
