//! `Report`: what a finished (or fatal) run reports, as plain Python values: counts, times,
//! how it ended, the output folder with every artifact and view, and the wired dependency
//! edges.

use std::collections::BTreeMap;

use pyo3::prelude::*;
use simpler_runtime::{Fatal, RunReport};

/// One wired edge: producer and consumer raw task ids and the edge's flags (`"wait"`,
/// `"retain"`).
type EdgeRow = (u64, u64, Vec<&'static str>);

/// What a run reports. Task ids are raw (`ring << 32 | local`; `simpler.task_id(raw)` splits
/// one).
#[pyclass(name = "Report", module = "simpler", frozen, get_all)]
pub struct PyReport {
    /// `"tmr"` or `"hbg"`.
    runtime: &'static str,
    /// `"completed"` or `"fatal"`.
    status: &'static str,
    /// Tasks submitted (dummies and allocations included).
    tasks: u64,
    /// Tasks that completed.
    completed: u64,
    /// Tasks per ring.
    tasks_per_ring: Vec<u32>,
    /// Wall time, seconds.
    wall: f64,
    /// Time inside the orchestration function, seconds.
    orchestration: f64,
    /// The root scope's site.
    root_site: String,
    /// Scheduler threads used.
    scheduler_threads: usize,
    /// True when every run thread was joined.
    stop_proven: bool,
    /// The fatal's code, name and message (`None` when completed).
    fatal_code: Option<u32>,
    fatal_name: Option<&'static str>,
    fatal_message: Option<String>,
    /// The output folder (with any diagnostic on).
    output_dir: Option<String>,
    /// Each diagnostic's files (absolute paths) by name (`scope_stats`, `dep_gen`,
    /// `l2_swimlane`, `args_dump`, `name_map`).
    artifacts: BTreeMap<String, Vec<String>>,
    /// Each diagnostic's outcome (`written`, `partial`, `withheld`, `failed`) by name.
    outcomes: BTreeMap<String, &'static str>,
    /// Why a diagnostic was not fully written, by name.
    reasons: BTreeMap<String, String>,
    /// Rendered views (absolute paths), when the run rendered them.
    views: Vec<String>,
    /// What was lost (a diagnostic or view not fully written), one line each.
    lost: Vec<String>,
    /// Files an earlier run left in the output folder, which this run's claim removed.
    removed: Vec<String>,
    /// The wired edges, sorted; `None` when the config turned `record_edges` off.
    edges: Option<Vec<EdgeRow>>,
}

#[pymethods]
impl PyReport {
    fn __repr__(&self) -> String {
        format!(
            "Report(runtime={}, status={}, tasks={}, completed={}, wall={:.6}s, output_dir={:?})",
            self.runtime, self.status, self.tasks, self.completed, self.wall, self.output_dir
        )
    }
}

impl PyReport {
    /// The report of `r`; `fatal` when the run stopped on one; `lost`, what its diagnostics
    /// (and views, when rendered) lost.
    pub fn new(r: &RunReport, fatal: Option<&Fatal>, lost: Vec<String>) -> PyReport {
        let dir = r.output.as_ref().map(|o| o.path());
        let abs = |name: &str| {
            dir.as_ref()
                .map_or_else(|| name.to_string(), |d| d.join(name).display().to_string())
        };
        let mut artifacts = BTreeMap::new();
        let mut outcomes = BTreeMap::new();
        let mut reasons = BTreeMap::new();
        for e in &r.diagnostics {
            artifacts.insert(e.name.clone(), e.files.iter().map(|f| abs(&f.name)).collect());
            outcomes.insert(e.name.clone(), e.outcome.as_str());
            if let Some(why) = &e.reason {
                reasons.insert(e.name.clone(), why.clone());
            }
        }
        let views = r
            .output
            .as_ref()
            .map(|o| o.manifest().views.iter().map(|v| abs(&v.name)).collect())
            .unwrap_or_default();
        let edges = r.wired_edges().map(|v| {
            v.into_iter()
                .map(|(p, c, f)| (p.raw(), c.raw(), f.names()))
                .collect()
        });
        PyReport {
            runtime: r.runtime.name(),
            status: if fatal.is_some() { "fatal" } else { "completed" },
            tasks: r.tasks,
            completed: r.completed,
            tasks_per_ring: r.tasks_per_ring.to_vec(),
            wall: r.wall.as_secs_f64(),
            orchestration: r.orchestration.as_secs_f64(),
            root_site: r.root_site.clone(),
            scheduler_threads: r.scheduler_threads,
            stop_proven: r.stop_proven,
            fatal_code: fatal.map(|f| f.code.code()),
            fatal_name: fatal.map(|f| f.code.name()),
            fatal_message: fatal.map(|f| f.message.clone()),
            output_dir: dir.map(|d| d.display().to_string()),
            artifacts,
            outcomes,
            reasons,
            views,
            lost,
            removed: r
                .output
                .as_ref()
                .map(|o| o.removed_earlier().to_vec())
                .unwrap_or_default(),
            edges,
        }
    }
}

/// `(ring, local)` of a raw task id.
#[pyfunction]
fn task_id(raw: u64) -> (u8, u32) {
    let t = simpler_core::TaskId(raw);
    (t.ring(), t.local())
}

/// Adds the class and helper to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyReport>()?;
    m.add_function(wrap_pyfunction!(task_id, m)?)?;
    Ok(())
}
