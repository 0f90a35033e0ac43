//! Helpers shared by this crate's unit tests.

use std::path::Path;

/// The names of the entries of `dir`, sorted: what a test compares to say which files a step
/// left behind.
pub(crate) fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
