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
