//! Writes a synthetic, well-formed `scope_stats.jsonl` of any size: a root scope (ring 0) around
//! a stream of nested scopes at depths 1..=4 (rings 1..=3), with monotonic per-ring counters
//! that allocate and release like a busy orchestration. Shared by the scale test and the bench.

use std::io::{BufWriter, Write};
use std::path::Path;

/// Ring capacities written to the metadata line.
pub const TASK_WINDOW_MAX: [u64; 4] = [8192, 16384, 131072, 524288];
/// Heap capacities in bytes.
pub const HEAP_MAX: [u64; 4] = [134217728, 268435456, 402653184, 536870912];
/// Dependency-pool capacities.
pub const DEP_POOL_MAX: [u64; 4] = [4096, 8192, 16384, 32768];

#[derive(Default, Clone, Copy)]
struct Ring {
    tw: (i64, i64),
    heap: (u64, u64),
    dp: (i64, i64),
}

struct Gen<W: Write> {
    out: W,
    rings: [Ring; 4],
    tensormap: i64,
    rng: u64,
    written: u64,
}

impl<W: Write> Gen<W> {
    fn next(&mut self, bound: u64) -> u64 {
        self.rng = self
            .rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.rng >> 33) % bound.max(1)
    }

    fn sample(&mut self, site: u32, phase: &str, depth: u32) -> std::io::Result<()> {
        let ring = depth.min(3);
        let r = self.rings[ring as usize];
        self.written += 1;
        writeln!(
            self.out,
            "{{\"site\": \"bench_orchestration.rs:{site}\", \"phase\": \"{phase}\", \"depth\": {depth}, \
             \"ring\": {ring}, \"task_window_start\": {}, \"task_window_end\": {}, \"heap_start\": {}, \
             \"heap_end\": {}, \"dep_pool_start\": {}, \"dep_pool_end\": {}, \"tensormap\": {}, \
             \"run_epoch\": 7, \"buf_seq\": {}}}",
            r.tw.0,
            r.tw.1,
            r.heap.0,
            r.heap.1,
            r.dp.0,
            r.dp.1,
            self.tensormap,
            self.written / 512
        )
    }

    /// Work inside a scope on `ring`: allocate some tasks, bytes and dep entries, and release
    /// part of what is outstanding.
    fn work(&mut self, ring: usize) {
        let tasks = self.next(6) as i64;
        let bytes = self.next(1 << 16);
        let deps = self.next(9) as i64;
        let r = &mut self.rings[ring];
        r.tw.1 += tasks;
        r.heap.1 += bytes;
        r.dp.1 += deps;
        let release = self.next(4) as i64 + 1;
        let r = &mut self.rings[ring];
        r.tw.0 = (r.tw.0 + release).min(r.tw.1);
        r.heap.0 = (r.heap.0 + release as u64 * 20_000).min(r.heap.1);
        r.dp.0 = (r.dp.0 + release * 2).min(r.dp.1);
        self.tensormap = (self.tensormap + tasks - release).clamp(0, 60_000);
    }

    fn scope(&mut self, depth: u32, budget: &mut u64) -> std::io::Result<()> {
        let site = 100 + depth * 10 + self.next(3) as u32;
        *budget -= 2;
        self.sample(site, "begin", depth)?;
        let ring = depth.min(3) as usize;
        self.work(ring);
        if depth < 4 {
            let children = self.next(3);
            for _ in 0..children {
                if *budget < 2 {
                    break;
                }
                self.scope(depth + 1, budget)?;
            }
        }
        self.work(ring);
        self.sample(site, "end", depth)
    }
}

/// Writes `samples` sample lines (rounded down to even) plus the metadata line to `path`.
pub fn write_jsonl(path: &Path, samples: u64) -> std::io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut g = Gen {
        out: BufWriter::with_capacity(1 << 20, file),
        rings: [Ring {
            tw: (0, 0),
            heap: (0, 0),
            dp: (1, 1),
        }; 4],
        tensormap: 0,
        rng: 0x5eed,
        written: 0,
    };
    let samples = samples & !1;
    writeln!(
        g.out,
        "{{\"fatal\": false, \"dropped\": 0, \"total\": {samples}, \"task_window_max\": {:?}, \
         \"heap_max\": {:?}, \"dep_pool_max\": {:?}, \"tensormap_max\": 65536}}",
        TASK_WINDOW_MAX, HEAP_MAX, DEP_POOL_MAX
    )?;
    if samples == 0 {
        return g.out.flush();
    }
    let mut budget = samples - 2;
    g.sample(1, "begin", 0)?;
    while budget >= 2 {
        g.scope(1, &mut budget)?;
    }
    g.work(0);
    g.sample(1, "end", 0)?;
    g.out.flush()
}
