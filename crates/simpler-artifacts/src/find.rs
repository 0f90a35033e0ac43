//! Finding the latest run's artifact under `./outputs/`.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The newest file called `name` under `root`, searched recursively (by modification time,
/// then path): how the tools find the latest run's artifact under `./outputs/`.
pub fn newest_named(root: &Path, name: &str) -> Option<PathBuf> {
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
            } else if kind.is_file() && entry.file_name() == name {
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
