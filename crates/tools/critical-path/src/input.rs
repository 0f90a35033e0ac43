//! Which folders hold a run to analyse, and which files each one uses.
//!
//! A folder is a run when it holds timing records (`simpler_artifacts::swimlane::find_in`, the
//! rule every tool uses: `l2_swimlane_records.json`, else `chip_swimlane_records.json`, else
//! the original's older `l2_perf_records.json`; a warning when the folder's copies differ) and
//! a `deps.json`; a name map (`name_map*.json`, the newest) is
//! optional here (kernels without a name show as `cid<k>`), and the Perfetto trace
//! (`merged_swimlane*.json`, the newest) is needed only for the CPM traces. Folders are found
//! recursively under the given root; a file given as the root stands for its folder.

use std::path::{Path, PathBuf};

use crate::{Error, ErrorKind};

/// The dependency graph's file name.
pub const DEPS_FILE: &str = "deps.json";

/// Prefix of the Perfetto trace files.
pub const MERGED_PREFIX: &str = "merged_swimlane";

/// One folder to analyse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir {
    /// The folder.
    pub dir: PathBuf,
    /// Its label in the report: the path relative to the root, or the folder's name.
    pub label: String,
    /// The timing records.
    pub records: PathBuf,
    /// Its deps.json.
    pub deps: PathBuf,
}

impl RunDir {
    /// The newest `merged_swimlane*.json` in the folder, if any.
    pub fn merged_trace(&self) -> Option<PathBuf> {
        simpler_artifacts::find::newest_in(&self.dir, MERGED_PREFIX, ".json")
    }
}

/// The root the input names: the folder itself, or a file's folder.
pub fn root_of(input: &Path) -> Result<PathBuf, Error> {
    if !input.exists() {
        return Err(ErrorKind::NotFound(input.to_path_buf()).into());
    }
    if input.is_file() {
        return Ok(match input.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        });
    }
    Ok(input.to_path_buf())
}

/// Every run folder under `root` (itself included), sorted by path.
pub fn discover(root: &Path) -> Result<Vec<RunDir>, Error> {
    let mut runs = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|source| ErrorKind::Walk {
            path: dir.clone(),
            source,
        })?;
        for entry in entries.flatten() {
            // Symbolic links are not followed, so a link cannot make the walk loop.
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(entry.path());
            }
        }
        let records = simpler_artifacts::swimlane::find_in(&dir);
        let deps = dir.join(DEPS_FILE);
        if let Some(records) = records {
            if deps.is_file() {
                if let Some(w) = simpler_artifacts::swimlane::differing_copies(&records) {
                    simpler_artifacts::errln!("warning: {w}");
                }
                let label = match dir.strip_prefix(root) {
                    Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
                    _ => dir
                        .file_name()
                        .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned()),
                };
                runs.push(RunDir {
                    dir,
                    label,
                    records,
                    deps,
                });
            } else if deps.exists() {
                simpler_artifacts::errln!(
                    "warning: {} is not a file; {} skipped",
                    deps.display(),
                    records.display()
                );
            } else {
                simpler_artifacts::errln!(
                    "warning: {} has no deps.json beside it (run with --enable-dep-gen); skipped",
                    records.display()
                );
            }
        }
    }
    if runs.is_empty() {
        // A run folder's run.json says what became of the two diagnostics (found by a review:
        // a run whose dep_gen failed was asked whether it used --enable-dep-gen).
        let why: Vec<String> = ["l2_swimlane", "dep_gen"]
            .iter()
            .filter_map(|d| simpler_artifacts::manifest::why_missing(root, d))
            .collect();
        let why = (!why.is_empty()).then(|| why.join("; "));
        return Err(ErrorKind::NoRuns(root.to_path_buf(), why).into());
    }
    runs.sort_by(|a, b| a.dir.cmp(&b.dir));
    Ok(runs)
}
