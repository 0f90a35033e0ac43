//! Which files a conversion reads and writes: the default records file (the newest run's under
//! `./outputs/`, by any of its names, `simpler_artifacts::swimlane::FILE_NAMES`), its sibling
//! deps.json and the default output.

use std::path::{Path, PathBuf};

use simpler_artifacts::find::newest_run_artifact;
use simpler_artifacts::swimlane::{differing_copies, find_in, FILE_NAME, FILE_NAMES};

use crate::{Error, ErrorKind};

/// Where runs write their artifacts, relative to the working directory.
pub const OUTPUTS_DIR: &str = "outputs";

/// File name of the trace written next to the records by default.
pub const DEFAULT_OUTPUT: &str = "merged_swimlane.json";

/// File name of the dependency graph looked for next to the records.
pub const DEPS_FILE: &str = "deps.json";

/// Returns `explicit`, or the newest run's records file under `./outputs/`
/// ([`resolve_records_under`]).
pub fn resolve_records(explicit: Option<&Path>) -> Result<PathBuf, Error> {
    resolve_records_under(explicit, Path::new(OUTPUTS_DIR))
}

/// Returns `explicit`, or the records file of the newest run under `root` (the folder of the
/// newest `run.json`, `simpler_artifacts::find::newest_run_artifact`). A newest run without one is
/// [`ErrorKind::NotInNewestRun`], which says why and names the newest other records file; an
/// older run's timing is never converted as if it were the latest's. Without any `run.json`
/// under `root` (the original runtime's files), the newest records file anywhere under it;
/// [`ErrorKind::NoRecords`] if there is none.
///
/// Within the folder found, the file (under any of its names) is the one every tool takes from a folder
/// (`simpler_artifacts::swimlane::find_in`: `l2_swimlane_records.json` first), with a warning
/// on stderr when the folder's copies under the records' names differ
/// (`simpler_artifacts::swimlane::differing_copies`).
pub fn resolve_records_under(explicit: Option<&Path>, root: &Path) -> Result<PathBuf, Error> {
    if let Some(path) = explicit {
        return Ok(path.to_path_buf());
    }
    let newest =
        newest_run_artifact(root, &FILE_NAMES, "l2_swimlane")?.ok_or_else(|| ErrorKind::NoRecords {
            file: FILE_NAME,
            dir: root.to_path_buf(),
        })?;
    let records = find_in(parent_dir(&newest)).unwrap_or(newest);
    if let Some(w) = differing_copies(&records) {
        simpler_artifacts::errln!("warning: {w}");
    }
    Ok(records)
}

/// `merged_swimlane.json` next to `records`.
pub fn default_output(records: &Path) -> PathBuf {
    records.with_file_name(DEFAULT_OUTPUT)
}

/// The deps.json to use: `explicit` (which must then exist), else the sibling `deps.json` of
/// `records` if there is one. `None` means no arrows; the caller warns.
pub fn resolve_deps(explicit: Option<&Path>, records: &Path) -> Option<PathBuf> {
    if let Some(path) = explicit {
        return Some(path.to_path_buf());
    }
    let sibling = records.with_file_name(DEPS_FILE);
    sibling.is_file().then_some(sibling)
}

/// The directory that holds `file` (`.` for a bare file name).
pub fn parent_dir(file: &Path) -> &Path {
    match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simpler_artifacts::testing::{put, run_json};
    use std::fs;

    #[test]
    fn defaults_sit_next_to_the_records() {
        let records = Path::new("outputs/run_1/l2_swimlane_records.json");
        assert_eq!(
            default_output(records),
            Path::new("outputs/run_1/merged_swimlane.json")
        );
        assert_eq!(
            default_output(Path::new(FILE_NAME)),
            Path::new("merged_swimlane.json")
        );
        assert_eq!(parent_dir(Path::new(FILE_NAME)), Path::new("."));
        assert_eq!(parent_dir(records), Path::new("outputs/run_1"));
    }

    #[test]
    fn sibling_deps_is_used_only_when_present() {
        let dir = tempfile::tempdir().unwrap();
        let records = dir.path().join(FILE_NAME);
        assert_eq!(resolve_deps(None, &records), None);
        fs::write(dir.path().join(DEPS_FILE), "{}").unwrap();
        assert_eq!(resolve_deps(None, &records), Some(dir.path().join(DEPS_FILE)));
        let explicit = Path::new("/elsewhere/deps.json");
        assert_eq!(
            resolve_deps(Some(explicit), &records),
            Some(explicit.to_path_buf())
        );
    }

    #[test]
    fn without_run_json_the_newest_records_anywhere_are_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve_records_under(None, dir.path()).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::NoRecords { .. }), "{err}");
        let (a, b) = (dir.path().join("a/deep"), dir.path().join("b"));
        put(&a.join(FILE_NAME), "{}", 20);
        put(&b.join(FILE_NAME), "{}", 10);
        put(&b.join("deps.json"), "{}", 30);
        assert_eq!(
            resolve_records_under(None, dir.path()).unwrap(),
            a.join(FILE_NAME)
        );
        // The newest file picks the folder; the folder's file is the one every tool takes.
        let chip = b.join(FILE_NAMES[1]);
        put(&chip, "{}", 40);
        assert_eq!(
            resolve_records_under(None, dir.path()).unwrap(),
            b.join(FILE_NAME)
        );
        fs::remove_file(b.join(FILE_NAME)).unwrap();
        assert_eq!(resolve_records_under(None, dir.path()).unwrap(), chip);
    }

    /// Found by a review: in a run folder whose two names of the records had come apart (a
    /// copy, then an edit), the newer file was converted while `sched-overhead` and
    /// `critical-path` read the other. Every tool now takes the folder's file by one rule,
    /// `l2_swimlane_records.json` first (and warns that they differ).
    #[test]
    fn the_newest_run_s_records_are_taken_by_the_shared_rule() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run_a");
        put(&run.join("run.json"), &run_json("completed", "[]"), 10);
        put(&run.join(FILE_NAMES[1]), "{\"edited\":1}", 30);
        assert_eq!(
            resolve_records_under(None, dir.path()).unwrap(),
            run.join(FILE_NAMES[1])
        );
        put(&run.join(FILE_NAME), "{}", 20);
        assert_eq!(
            resolve_records_under(None, dir.path()).unwrap(),
            run.join(FILE_NAME)
        );
        assert_eq!(find_in(&run), Some(run.join(FILE_NAME)));
    }

    /// Found by a review: with no path, a newest run without records (run without
    /// --enable-l2-swimlane) had an earlier run's records converted instead. It now fails,
    /// says why, and names the earlier file to pass.
    #[test]
    fn a_newest_run_without_records_is_an_error_naming_the_earlier_ones() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("run_a"), dir.path().join("run_b"));
        put(&a.join("run.json"), &run_json("completed", "[]"), 10);
        put(&a.join(FILE_NAME), "{}", 9);
        let failed = r#"[{"name":"l2_swimlane","outcome":"failed","reason":"disk full"}]"#;
        put(&b.join("run.json"), &run_json("completed", failed), 20);
        let err = resolve_records_under(None, dir.path()).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::NotInNewestRun(_)), "{err}");
        assert_eq!(
            err.to_string(),
            format!(
                "the newest run, {}, has no l2_swimlane_records.json, chip_swimlane_records.json or \
                 l2_perf_records.json: its run.json says l2_swimlane failed: disk full; the newest \
                 of them is {}: pass it to use it",
                b.display(),
                a.join(FILE_NAME).display()
            )
        );
        put(&b.join(FILE_NAMES[2]), "{}", 19);
        assert_eq!(
            resolve_records_under(None, dir.path()).unwrap(),
            b.join(FILE_NAMES[2])
        );
    }
}
