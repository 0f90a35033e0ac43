//! Part 3, the aicore switch: on each core, the gap between the previous task's end and the
//! next task's start when the next task had already been dispatched before the previous one
//! ended (so the core was waiting on the switch, not on work), clamped to the window and split
//! into the part that overlaps ready, undispatched work of the engine (overhead) and the rest
//! (`../shared/reference/timing-analysis.md` §3, "aicore switch").

use crate::adapter::{Engine, TimedTask};
use crate::overhead::Overhead;
use crate::tasks::{rows_by_core, Tasks};

/// One core's switches, ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoreSwitch {
    /// The core.
    pub core: u32,
    /// Its engine.
    pub engine: Engine,
    /// Σ switch gaps.
    pub total: u64,
    /// Of which during ready, undispatched work of the engine.
    pub overhead: u64,
    /// Number of switches (gaps counted, zero-length ones included).
    pub events: u64,
}

/// Per engine: the spread of per-core switch time (never summed over cores).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EngineSwitch {
    /// Cores of the engine.
    pub cores: usize,
    /// Least per-core total.
    pub min: u64,
    /// Mean per-core total.
    pub mean: f64,
    /// Largest per-core total.
    pub max: u64,
    /// Switches over all its cores.
    pub events: u64,
    /// Σ over its cores, used only for the per-event cost and the overhead share.
    pub total: u64,
    /// Σ of the overhead part over its cores.
    pub overhead: u64,
}

/// Switch time per core, in core order.
pub fn per_core(rows: &[TimedTask], tasks: &Tasks, overhead: &Overhead) -> Vec<CoreSwitch> {
    let clamp = |t: u64| t.clamp(tasks.w0, tasks.w1);
    rows_by_core(rows)
        .into_iter()
        .map(|(core, rows)| {
            let engine = rows[0].engine;
            let mut sw = CoreSwitch {
                core,
                engine,
                total: 0,
                overhead: 0,
                events: 0,
            };
            for pair in rows.windows(2) {
                let (prev, next) = (pair[0], pair[1]);
                if next.dispatch_ns.is_some_and(|d| d < prev.end_ns) {
                    let (a, b) = (clamp(prev.end_ns), clamp(next.start_ns));
                    sw.events += 1;
                    if a < b {
                        sw.total += b - a;
                        sw.overhead += overhead.ready_within(engine, a, b);
                    }
                }
            }
            sw
        })
        .collect()
}

/// The spread per engine (`None` for an engine without cores).
pub fn per_engine(cores: &[CoreSwitch]) -> [Option<EngineSwitch>; 2] {
    Engine::ALL.map(|e| {
        let mine: Vec<&CoreSwitch> = cores.iter().filter(|c| c.engine == e).collect();
        if mine.is_empty() {
            return None;
        }
        let total: u64 = mine.iter().map(|c| c.total).sum();
        Some(EngineSwitch {
            cores: mine.len(),
            min: mine.iter().map(|c| c.total).min().unwrap_or(0),
            mean: total as f64 / mine.len() as f64,
            max: mine.iter().map(|c| c.total).max().unwrap_or(0),
            events: mine.iter().map(|c| c.events).sum(),
            total,
            overhead: mine.iter().map(|c| c.overhead).sum(),
        })
    })
}

/// How much of the makespan switches can explain: at least the least switch time of any core,
/// at most the per-core minimum summed over the engines.
pub fn makespan_bound(cores: &[CoreSwitch], engines: &[Option<EngineSwitch>; 2]) -> (u64, u64) {
    let lower = cores.iter().map(|c| c.total).min().unwrap_or(0);
    let upper = engines.iter().flatten().map(|e| e.min).sum();
    (lower, upper)
}
