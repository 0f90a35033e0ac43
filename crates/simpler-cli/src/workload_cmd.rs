//! `simpler run FILE.json` and `simpler run --from-deps deps.json` (issue 8; placeholder).

use anyhow::{bail, Result};

use crate::run_cmd::RunArgs;

/// Runs a workload file or re-runs a captured graph.
pub fn run(_args: &RunArgs) -> Result<()> {
    bail!("workload files and --from-deps are not implemented yet")
}
