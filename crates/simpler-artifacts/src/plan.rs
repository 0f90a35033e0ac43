//! `scope_stats/plan.json`: the capacity plan `simpler plan` computed for a run, next to its
//! `scope_stats.jsonl`; the scope-stats HTML report shows it as its "Capacity plan" section.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::read_error::JsonReadError;

/// The file name, next to `scope_stats.jsonl`.
pub const PLAN_FILE: &str = "plan.json";

/// One row of the plan's table: one resource of one ring.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanRow {
    /// The `runtime_env` key.
    pub key: String,
    /// The ring.
    pub ring: u32,
    /// The capacity the recorded run used (`null` when unknown).
    pub capacity: Option<u64>,
    /// Peak occupancy observed at the scope boundaries.
    pub peak: u64,
    /// The peak as a size the key accepts (the task window: peak + 1, a power of two).
    pub never_waits: u64,
    /// What open scopes hold at once, as a size the key accepts.
    pub structural_min: u64,
    /// The scope site that sets the structural minimum (empty when nothing is held).
    pub structural_site: String,
    /// The smallest size with which every re-run passed (`null` without a search).
    pub verified_min: Option<u64>,
    /// The suggested size.
    pub suggested: u64,
}

/// The tensor map's row: global, sized by a workload's `tensormap_capacity`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorMapRow {
    /// The capacity the recorded run used (`null` when unknown).
    pub capacity: Option<u64>,
    /// Most entries in use at a scope boundary.
    pub peak: u64,
    /// The smallest capacity with which every re-run passed (`null` without a search).
    pub verified_min: Option<u64>,
    /// The suggested capacity (`null` without a search).
    pub suggested: Option<u64>,
}

/// The whole plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    /// What was planned (the re-run target).
    pub subject: String,
    /// The table.
    pub rows: Vec<PlanRow>,
    /// Re-runs made by the verified search (`null`: not verified).
    pub runs: Option<u64>,
    /// Runs per candidate (`null`: not verified).
    pub verify: Option<u64>,
    /// Median wall time at the never-waits sizes, seconds.
    pub wall_never_waits_s: Option<f64>,
    /// Median wall time at the verified minimums, seconds.
    pub wall_minimum_s: Option<f64>,
    /// The tensor map's row.
    pub tensormap: Option<TensorMapRow>,
    /// Headroom of the suggested sizes over the verified minimums, percent.
    pub headroom_percent: u64,
    /// The suggested `runtime_env` block, as a workload file writes it.
    pub runtime_env_json: String,
    /// The same as `--runtime-env` flags.
    pub runtime_env_flags: String,
}

/// Reads a `plan.json`; the error names the file, line and column.
pub fn read_plan(path: &Path) -> Result<PlanFile, JsonReadError> {
    let text = std::fs::read_to_string(path).map_err(|e| JsonReadError::io(path, "plan.json", e))?;
    serde_json::from_str(&text).map_err(|e| JsonReadError::json(path, "plan.json", e, None))
}
