//! Finding the latest run's artifact under `./outputs/`.
//!
//! A tool given no input reads the newest run's file ([`newest_run_artifact`]): the run whose
//! `run.json` was written last, wherever it is under the root. If that run has no such file,
//! the tool fails and says why rather than reading an older run's file, which a user would
//! take for the latest run's. Only where no `run.json` exists at all (files of the original
//! runtime, or put there by hand) is the newest file of that name taken, wherever it is.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::manifest::{self, RunManifest};

/// The file a tool reads by default under `root` (`./outputs/`): one of `names`, paths
/// relative to a run folder (`deps.json`, `args_dump/args_dump.json`; the newest of them when
/// a folder holds several) that the diagnostic `diagnostic` (`dep_gen`, `l2_swimlane`,
/// `args_dump`) writes.
///
/// The rule:
/// - the newest run is the folder of the newest `run.json` under `root` (by modification
///   time, then path; a run writes it when it starts and, last, when it ends). Its file is
///   the answer; when it has none, [`NotInNewestRun`] names the folder, says why from its
///   `run.json`, and names the newest such file elsewhere under `root` as a hint. A newer file
///   in a folder without a `run.json` is not taken while a run exists: pass it by path.
/// - without any `run.json` under `root`, the newest file under `root` (recursively) whose
///   path ends with one of `names`, by modification time, then path.
///
/// `Ok(None)`: no `run.json` and no such file under `root` (nor `root` itself).
pub fn newest_run_artifact(
    root: &Path,
    names: &[&str],
    diagnostic: &str,
) -> Result<Option<PathBuf>, NotInNewestRun> {
    let Some(newest_manifest) = newest_named(root, manifest::FILE_NAME) else {
        return Ok(newest_artifact(root, names));
    };
    let folder = match newest_manifest.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let own = names
        .iter()
        .map(|n| folder.join(n))
        .filter(|p| p.is_file())
        .filter_map(|p| Some((modified(&p)?, p)))
        .max();
    if let Some((_, path)) = own {
        return Ok(Some(path));
    }
    Err(NotInNewestRun {
        why: why_absent(&folder, diagnostic),
        folder,
        names: names.iter().map(|n| n.to_string()).collect(),
        elsewhere: newest_artifact(root, names),
    })
}

/// The newest run under a root has none of the files a tool would read by default
/// ([`newest_run_artifact`]). The message names the run's folder, says why from its
/// `run.json`, and names the newest such file elsewhere, to pass explicitly:
/// `the newest run, outputs/b, has no deps.json: its run.json lists no dep_gen: the run did
/// not ask for it; the newest deps.json is outputs/a/deps.json: pass it to use it`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotInNewestRun {
    folder: PathBuf,
    names: Vec<String>,
    why: String,
    elsewhere: Option<PathBuf>,
}

impl NotInNewestRun {
    /// The newest run's folder.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Why it has no such file, from its `run.json` (`its run.json says dep_gen failed: ...`).
    pub fn why(&self) -> &str {
        &self.why
    }

    /// The newest such file elsewhere under the root (an earlier run's), if any.
    pub fn elsewhere(&self) -> Option<&Path> {
        self.elsewhere.as_deref()
    }
}

impl fmt::Display for NotInNewestRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.names.as_slice() {
            [one] => one.clone(),
            [first @ .., last] => format!("{} or {last}", first.join(", ")),
            [] => "such file".into(),
        };
        write!(
            f,
            "the newest run, {}, has no {what}: {}",
            self.folder.display(),
            self.why
        )?;
        if let Some(path) = &self.elsewhere {
            let newest = match self.names.as_slice() {
                [one] => format!("the newest {one}"),
                _ => "the newest of them".into(),
            };
            write!(f, "; {newest} is {}: pass it to use it", path.display())?;
        }
        Ok(())
    }
}

impl std::error::Error for NotInNewestRun {}

/// Why the run in `folder` left no file of `diagnostic`, from its `run.json`.
fn why_absent(folder: &Path, diagnostic: &str) -> String {
    let name = manifest::FILE_NAME;
    match RunManifest::read(&folder.join(name)) {
        Err(e) => format!("its {name} cannot be read ({e})"),
        // `why_missing` says what a `running` manifest means.
        Ok(_) => manifest::why_absent(folder, diagnostic).unwrap_or_default(),
    }
}

/// The newest file under `root` whose path ends with one of `names`.
fn newest_artifact(root: &Path, names: &[&str]) -> Option<PathBuf> {
    newest_where(root, |path| names.iter().any(|n| path.ends_with(n)))
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The newest file called `name` under `root`, searched recursively (by modification time,
/// then path). Tools find their default input with [`newest_run_artifact`], which uses this
/// only where no run has a `run.json`.
pub fn newest_named(root: &Path, name: &str) -> Option<PathBuf> {
    newest_where(root, |path| path.file_name().is_some_and(|n| n == name))
}

/// The newest file under `root` (recursively, symbolic links not followed) for which `wanted`
/// holds, by modification time, then path.
fn newest_where(root: &Path, wanted: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    let mut best: Option<(SystemTime, PathBuf)> = None;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && wanted(&path) {
                let Ok(modified) = entry.metadata().and_then(|m| m.modified()) else {
                    continue;
                };
                let candidate = (modified, path);
                if best.as_ref().is_none_or(|b| candidate > *b) {
                    best = Some(candidate);
                }
            }
        }
    }
    best.map(|(_, p)| p)
}

/// The newest file in `dir` (not below it) whose name starts with `prefix` and ends with
/// `suffix`, by (modification time, name): how a tool picks the sibling `name_map*.json` or
/// `merged_swimlane*.json` of an artifact.
pub fn newest_in(dir: &Path, prefix: &str, suffix: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(prefix) && name.ends_with(suffix) && e.file_type().is_ok_and(|t| t.is_file())
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.file_name(), e.path())))
        .max()
        .map(|(_, _, path)| path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{put, run_json};
    use std::fs;

    const DEP_GEN_WRITTEN: &str =
        r#"[{"name":"dep_gen","outcome":"written","files":[{"name":"deps.json","bytes":2}]}]"#;

    #[test]
    fn without_any_run_json_the_newest_file_anywhere_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(newest_run_artifact(root, &["deps.json"], "dep_gen"), Ok(None));
        assert_eq!(
            newest_run_artifact(&root.join("absent"), &["deps.json"], "dep_gen"),
            Ok(None)
        );
        put(&root.join("a/deep/deps.json"), "{}", 20);
        put(&root.join("b/deps.json"), "{}", 10);
        put(&root.join("b/other.json"), "{}", 30);
        assert_eq!(
            newest_run_artifact(root, &["deps.json"], "dep_gen"),
            Ok(Some(root.join("a/deep/deps.json")))
        );
        assert_eq!(
            newest_named(root, "deps.json"),
            Some(root.join("a/deep/deps.json"))
        );
        // A name with a folder matches that folder only.
        put(&root.join("c/args_dump.json"), "{}", 40);
        assert_eq!(
            newest_run_artifact(root, &["args_dump/args_dump.json"], "args_dump"),
            Ok(None)
        );
        put(&root.join("c/args_dump/args_dump.json"), "{}", 5);
        assert_eq!(
            newest_run_artifact(root, &["args_dump/args_dump.json"], "args_dump"),
            Ok(Some(root.join("c/args_dump/args_dump.json")))
        );
    }

    /// Found by a review: with no path, deps-viewer showed an older run's deps.json when the
    /// newest run had none (run without --enable-dep-gen), which a user reads as the latest
    /// run's graph. The newest run's file is taken, or none.
    #[test]
    fn the_newest_runs_file_is_taken_or_the_error_says_why_and_where_another_is() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let (a, b) = (root.join("run_a"), root.join("run_b"));
        put(&a.join("run.json"), &run_json("completed", DEP_GEN_WRITTEN), 10);
        put(&a.join("deps.json"), "{}", 9);
        put(&b.join("run.json"), &run_json("completed", "[]"), 20);
        put(&b.join("deps_viewer.txt"), "", 21);
        let err = newest_run_artifact(root, &["deps.json"], "dep_gen").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "the newest run, {}, has no deps.json: its run.json lists no dep_gen: the run did \
                 not ask for it; the newest deps.json is {}: pass it to use it",
                b.display(),
                a.join("deps.json").display()
            )
        );
        assert_eq!(
            (err.folder(), err.elsewhere()),
            (b.as_path(), Some(a.join("deps.json").as_path()))
        );

        // The newest run's own file, though an older run's and a hand-made one are newer files.
        put(&b.join("deps.json"), "{}", 19);
        put(&a.join("deps.json"), "{}", 30);
        put(&root.join("by_hand/deps.json"), "{}", 40);
        assert_eq!(
            newest_run_artifact(root, &["deps.json"], "dep_gen"),
            Ok(Some(b.join("deps.json")))
        );

        // What the newest run's run.json says, whatever it is; no hint without another file.
        fs::remove_file(b.join("deps.json")).unwrap();
        fs::remove_file(a.join("deps.json")).unwrap();
        fs::remove_file(root.join("by_hand/deps.json")).unwrap();
        let failed = r#"[{"name":"dep_gen","outcome":"withheld","reason":"12 records dropped"}]"#;
        put(&b.join("run.json"), &run_json("completed", failed), 20);
        assert_eq!(
            newest_run_artifact(root, &["deps.json"], "dep_gen")
                .unwrap_err()
                .to_string(),
            format!(
                "the newest run, {}, has no deps.json: its run.json says dep_gen withheld: 12 \
                 records dropped",
                b.display()
            )
        );
        put(&b.join("run.json"), &run_json("running", "[]"), 20);
        assert_eq!(
            newest_run_artifact(root, &["deps.json"], "dep_gen")
                .unwrap_err()
                .why(),
            "its run.json says running: still going, or its process died before it finished"
        );
        put(&b.join("run.json"), &run_json("completed", DEP_GEN_WRITTEN), 20);
        assert_eq!(
            newest_run_artifact(root, &["deps.json"], "dep_gen")
                .unwrap_err()
                .why(),
            "its run.json says dep_gen was written: the file was moved or removed since"
        );
        put(&b.join("run.json"), "{", 20);
        let why = newest_run_artifact(root, &["deps.json"], "dep_gen").unwrap_err();
        assert!(why.why().starts_with("its run.json cannot be read ("), "{why}");
    }

    #[test]
    fn several_names_are_listed_and_the_newest_of_them_is_taken() {
        let names = ["l2.json", "chip.json", "perf.json"];
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let (a, b) = (root.join("a"), root.join("b"));
        put(&a.join("run.json"), &run_json("completed", "[]"), 10);
        put(&a.join("perf.json"), "{}", 11);
        put(&a.join("l2.json"), "{}", 12);
        assert_eq!(
            newest_run_artifact(root, &names, "l2_swimlane"),
            Ok(Some(a.join("l2.json")))
        );
        put(&b.join("run.json"), &run_json("completed", "[]"), 20);
        assert_eq!(
            newest_run_artifact(root, &names, "l2_swimlane")
                .unwrap_err()
                .to_string(),
            format!(
                "the newest run, {}, has no l2.json, chip.json or perf.json: its run.json lists no \
                 l2_swimlane: the run did not ask for it; the newest of them is {}: pass it to use it",
                b.display(),
                a.join("l2.json").display()
            )
        );
    }
}
