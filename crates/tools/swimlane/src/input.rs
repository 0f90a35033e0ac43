//! Which files a conversion reads and writes: the default records file (the newest under
//! `./outputs/` by any of its names, `simpler_artifacts::swimlane::FILE_NAMES`), its sibling
//! deps.json and the default output.

use std::path::{Path, PathBuf};

use simpler_artifacts::swimlane::{FILE_NAME, FILE_NAMES};

use crate::{Error, ErrorKind};

/// Where runs write their artifacts, relative to the working directory.
pub const OUTPUTS_DIR: &str = "outputs";

/// File name of the trace written next to the records by default.
pub const DEFAULT_OUTPUT: &str = "merged_swimlane.json";

/// File name of the dependency graph looked for next to the records.
pub const DEPS_FILE: &str = "deps.json";

/// Returns `explicit`, or the newest records file anywhere under `./outputs/`, by any of its
/// names ([`ErrorKind::NoRecords`] if there is none).
pub fn resolve_records(explicit: Option<&Path>) -> Result<PathBuf, Error> {
    if let Some(path) = explicit {
        return Ok(path.to_path_buf());
    }
    newest_records(Path::new(OUTPUTS_DIR)).ok_or_else(|| {
        ErrorKind::NoRecords {
            file: FILE_NAME,
            dir: PathBuf::from(OUTPUTS_DIR),
        }
        .into()
    })
}

/// The newest file under `root` named as a records file (by modification time, then path).
pub fn newest_records(root: &Path) -> Option<PathBuf> {
    FILE_NAMES
        .iter()
        .filter_map(|name| newest_named(root, name))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max()
        .map(|(_, p)| p)
}

pub use simpler_artifacts::find::newest_named;

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
    use std::fs;
    use std::time::SystemTime;

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
    fn newest_records_are_found_recursively() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(newest_named(dir.path(), FILE_NAME), None);
        let a = dir.path().join("a/deep");
        let b = dir.path().join("b");
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        fs::write(a.join(FILE_NAME), "{}").unwrap();
        fs::write(b.join(FILE_NAME), "{}").unwrap();
        fs::write(b.join("deps.json"), "{}").unwrap();
        let later = SystemTime::now() + std::time::Duration::from_secs(30);
        fs::File::options()
            .write(true)
            .open(a.join(FILE_NAME))
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert_eq!(newest_named(dir.path(), FILE_NAME), Some(a.join(FILE_NAME)));
        let chip = b.join(FILE_NAMES[1]);
        fs::write(&chip, "{}").unwrap();
        let latest = SystemTime::now() + std::time::Duration::from_secs(60);
        fs::File::options()
            .write(true)
            .open(&chip)
            .unwrap()
            .set_modified(latest)
            .unwrap();
        assert_eq!(newest_records(dir.path()), Some(chip));
    }
}
