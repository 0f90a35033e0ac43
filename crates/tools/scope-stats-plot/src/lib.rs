//! Placeholder: replaced by the tool's implementation.

use std::path::PathBuf;

/// Command-line arguments of this tool (flattened into the `simpler` CLI).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Input file.
    pub input: Option<PathBuf>,
}

/// Runs the tool.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("not implemented yet")
}
