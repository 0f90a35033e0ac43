//! Command-line flags of `simpler swimlane`.

use std::path::PathBuf;

/// `simpler swimlane`: a Perfetto trace (`merged_swimlane.json`) from the per-task timing of a
/// run, with dependency arrows from deps.json.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {
    /// The records to convert: ours or the original's, any level [default: the
    /// l2_swimlane_records.json, chip_swimlane_records.json or l2_perf_records.json of the
    /// newest run under ./outputs/ (the folder of the newest run.json); an error if it has
    /// none].
    #[arg(value_name = "RECORDS")]
    pub records: Option<PathBuf>,
    /// Output trace [default: merged_swimlane.json next to RECORDS]; never one of the inputs,
    /// the run.json beside it, or a file that run.json lists as the run's artifact.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// deps.json for the dependency arrows [default: deps.json next to RECORDS; without one
    /// the trace has no arrows].
    #[arg(long, value_name = "PATH")]
    pub deps_json: Option<PathBuf>,
    /// Kernel id → name map: the original's `{"level", "orchestrator_name",
    /// "callable_id_to_name": {...}}` or a flat `{"<id>": "<name>"}` [default: the run's own
    /// name_map*.json (per run.json), else the newest next to RECORDS; kernels without a name
    /// show as func_0_a, func_1_b, ...].
    #[arg(long, value_name = "PATH")]
    pub func_names: Option<PathBuf>,
    /// Add the original's eight scheduler-overhead counter tracks (oh_aic_idle, ...,
    /// oh_has_overhead) to the AICPU Scheduler process; needs deps.json.
    #[arg(long)]
    pub overhead: bool,
}
