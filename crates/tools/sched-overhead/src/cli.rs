//! Command-line flags of `simpler sched-overhead`.

use std::path::PathBuf;

/// `simpler sched-overhead`: is the scheduler the bottleneck (an idle core next to ready,
/// undispatched work), or is the run compute/dependency bound? Prints the original's overhead
/// model as text tables.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// A run folder with l2_swimlane_records.json (or chip_swimlane_records.json), or the
    /// records file itself.
    #[arg(value_name = "RUN")]
    pub run: PathBuf,
    /// deps.json of the run [default: deps.json beside the records; required].
    #[arg(long, value_name = "PATH")]
    pub deps_json: Option<PathBuf>,
}
