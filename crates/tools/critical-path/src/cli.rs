//! Command-line flags of `simpler critical-path`.

use std::path::{Path, PathBuf};

/// Default report file name, written beside each records file.
pub const DEFAULT_REPORT: &str = "critical_path_report.md";

/// Default rows in the kernel-family table.
pub const DEFAULT_TOP: usize = 25;

/// Default tolerance when deciding "finished before", in clock ticks (ns for this runtime).
pub const DEFAULT_TOL: u64 = 2;

/// `simpler critical-path`: which chain of tasks sets the makespan, and how much of it is
/// compute and how much stall. Writes `<run>/critical_path_report.md` and, when the run has a
/// `merged_swimlane.json`, `CPM_static.json` and `CPM_observed.json` beside each records file.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// A run folder (searched recursively for l2_swimlane_records.json or
    /// chip_swimlane_records.json with a deps.json beside it), or a file in one (deps.json).
    #[arg(value_name = "RUN")]
    pub input: PathBuf,
    /// Report file name, written beside each records file (a bare name, not a path, not
    /// another of the run's files such as deps.json, not a view run.json lists, not a hidden
    /// name).
    #[arg(long, value_name = "NAME", default_value = DEFAULT_REPORT, value_parser = bare_file_name)]
    pub report: String,
    /// Rows in the kernel-family table.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TOP)]
    pub top: usize,
    /// Tolerance in clock ticks (ns here) when deciding that a task finished before another
    /// started.
    #[arg(long, value_name = "TICKS", default_value_t = DEFAULT_TOL)]
    pub tol: u64,
    /// Also print the full report.
    #[arg(long)]
    pub stdout: bool,
}

/// Accepts a plain file name only: the report goes beside each records file. Never the name
/// of another of the run's files (`--report deps.json` replaced the run's own input), nor a
/// hidden one (`.simpler.lock`, the folder's lock, was replaced). A view the run manifest
/// lists is refused per folder, when the command runs.
fn bare_file_name(s: &str) -> Result<String, String> {
    let p = Path::new(s);
    if s.is_empty() || p.is_absolute() || p.file_name().is_none_or(|n| n != s) {
        Err(format!("--report must be a file name, not a path: {s:?}"))
    } else if s.starts_with('.') {
        // The folder's lock (`.simpler.lock`) and the publish path's temporaries.
        Err(format!(
            "--report {s:?} is a hidden name, kept for the run folder's lock and temporaries; choose another name"
        ))
    } else if s != DEFAULT_REPORT && simpler_artifacts::output_folder::RUN_FILES.contains(&s) {
        Err(format!(
            "--report {s:?} names another of the run's files; choose another name"
        ))
    } else {
        Ok(s.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_must_be_a_bare_name() {
        assert_eq!(bare_file_name("cp.md"), Ok("cp.md".to_owned()));
        for bad in ["", "a/cp.md", "/tmp/cp.md", "..", "."] {
            assert_eq!(
                bare_file_name(bad),
                Err(format!("--report must be a file name, not a path: {bad:?}")),
                "{bad}"
            );
        }
        // Found by a review: the report replaced the run's deps.json.
        for taken in [
            "deps.json",
            "l2_swimlane_records.json",
            "run.json",
            "CPM_static.json",
        ] {
            assert_eq!(
                bare_file_name(taken),
                Err(format!(
                    "--report {taken:?} names another of the run's files; choose another name"
                ))
            );
        }
        assert_eq!(bare_file_name(DEFAULT_REPORT), Ok(DEFAULT_REPORT.to_owned()));
        // Found by a review: `--report .simpler.lock` replaced the folder's lock.
        assert_eq!(
            bare_file_name(".simpler.lock"),
            Err("--report \".simpler.lock\" is a hidden name, kept for the run folder's lock and temporaries; choose another name".to_owned())
        );
    }
}
