//! `cargo bench -p simpler-core`: the tensor map's lookup + insert per task argument, alone.
//!
//! - `tiled_c_inout`: the C of a tiled GEMM (354 × 354 tiles of 16 × 16 f32, the 1M-task
//!   `simpler bench` shape), every tile written once and then updated INOUT tile by tile with
//!   nothing retired (the host-built graph's case): each update looks its tile up (removing
//!   the covered entry) and inserts the new writer. The buffer is hot, so this measures the
//!   hot index's grid.
//! - `slices_1d`: one-element slices of a 4096-element buffer written in turn (the
//!   `independent` workload's OUTPUT_EXISTING), looked up then inserted, with a window's worth
//!   of writers live.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use simpler_core::{DType, TaskId, Tensor, TensorMap, TensorMapConfig};

const SIDE: u32 = 354;
const T: u32 = 16;

fn update(m: &mut TensorMap, t: &Tensor, id: TaskId) {
    m.lookup::<()>(t, true, |_, _, _| Ok(())).unwrap();
    m.insert(t, id).unwrap();
}

fn tensormap(c: &mut Criterion) {
    let mut g = c.benchmark_group("tensormap");
    g.sample_size(10);

    let cbuf = Tensor::contiguous(
        1 << 32,
        u64::from(SIDE * T) * u64::from(SIDE * T) * 4,
        &[SIDE * T, SIDE * T],
        DType::Float32,
        TaskId::INVALID,
    )
    .unwrap();
    let tiles: Vec<Tensor> = (0..SIDE * SIDE)
        .map(|k| cbuf.view(&[T, T], &[(k / SIDE) * T, (k % SIDE) * T]).unwrap())
        .collect();
    g.throughput(Throughput::Elements(tiles.len() as u64));
    g.bench_function("tiled_c_inout", |b| {
        b.iter_batched(
            || {
                let mut m = TensorMap::new(TensorMapConfig::unbounded());
                for (k, t) in tiles.iter().enumerate() {
                    update(&mut m, t, TaskId::new(0, k as u32));
                }
                m
            },
            |mut m| {
                for (k, t) in tiles.iter().enumerate() {
                    update(&mut m, t, TaskId::new(0, (tiles.len() + k) as u32));
                }
                m
            },
            BatchSize::LargeInput,
        )
    });

    const SLOTS: u32 = 4096;
    const WINDOW: u32 = 16384;
    const N: u32 = 1 << 17;
    let b1 = Tensor::contiguous(
        2 << 32,
        u64::from(SLOTS) * 4,
        &[SLOTS],
        DType::Float32,
        TaskId::INVALID,
    )
    .unwrap();
    let slices: Vec<Tensor> = (0..SLOTS).map(|s| b1.view(&[1], &[s]).unwrap()).collect();
    g.throughput(Throughput::Elements(u64::from(N)));
    g.bench_function("slices_1d", |b| {
        b.iter(|| {
            let mut m = TensorMap::new(TensorMapConfig::bounded(1 << 16, [WINDOW; 4]));
            for i in 0..N {
                let id = TaskId::new(0, i);
                m.set_watermark(0, i.saturating_sub(WINDOW - 1));
                m.sync(id);
                update(&mut m, &slices[(i % SLOTS) as usize], id);
            }
            m
        })
    });
    g.finish();
}

criterion_group!(benches, tensormap);
criterion_main!(benches);
