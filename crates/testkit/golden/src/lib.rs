//! Test-only golden files: compare each output with its expected file, or rewrite the file
//! when the environment says `UPDATE_GOLDEN=1` (then review the diff before committing it).
//!
//! A [`Goldens`] collects every mismatch of one test and reports them all at the end, each with
//! the first differing line and both texts.

use std::fs;
use std::path::{Path, PathBuf};

/// Returns true if and only if `UPDATE_GOLDEN=1`: expected files are rewritten, not compared.
pub fn blessing() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1")
}

/// Describes the first differing line between `expected` and `actual`, then both texts.
pub fn describe_mismatch(expected: &str, actual: &str) -> String {
    let first = expected
        .lines()
        .zip(actual.lines())
        .position(|(e, a)| e != a)
        .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
    format!(
        "first difference at line {}\n--- expected\n{expected}\n--- actual\n{actual}\n---",
        first + 1
    )
}

/// The case folders under `root` that hold a file `marker` (a relative path), sorted; panics
/// when there are fewer than `at_least` (the folder lost its cases).
pub fn case_dirs(root: &Path, marker: &str, at_least: usize) -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join(marker).is_file())
        .collect();
    cases.sort();
    assert!(
        cases.len() >= at_least,
        "{} has {} case(s) with {marker}, expected at least {at_least}",
        root.display(),
        cases.len()
    );
    cases
}

/// The golden comparisons of one test.
#[derive(Debug)]
pub struct Goldens {
    bless: bool,
    failures: Vec<String>,
    checked: usize,
}

impl Default for Goldens {
    fn default() -> Self {
        Goldens::new()
    }
}

impl Goldens {
    /// Starts a test's comparisons ([`blessing`] decides whether files are rewritten).
    pub fn new() -> Goldens {
        Goldens {
            bless: blessing(),
            failures: Vec::new(),
            checked: 0,
        }
    }

    /// Returns true if and only if expected files are being rewritten.
    pub fn blessing(&self) -> bool {
        self.bless
    }

    /// Compares `actual` with the file at `expected` (rewrites the file when blessing);
    /// `label` names the case in a failure.
    pub fn check(&mut self, label: &str, expected: &Path, actual: &str) {
        self.checked += 1;
        if self.bless {
            fs::write(expected, actual).unwrap_or_else(|e| panic!("{}: {e}", expected.display()));
            return;
        }
        match fs::read_to_string(expected) {
            Ok(text) if text == actual => {}
            Ok(text) => self.failures.push(format!(
                "{label} ({}): {}",
                expected.display(),
                describe_mismatch(&text, actual)
            )),
            Err(e) => self
                .failures
                .push(format!("{label}: {}: {e}", expected.display())),
        }
    }

    /// Records a failure that is not a mismatch (the tool failed on the case).
    pub fn fail(&mut self, what: String) {
        self.failures.push(what);
    }

    /// How many comparisons were made.
    pub fn checked(&self) -> usize {
        self.checked
    }

    /// Panics with every failure, if there was one.
    pub fn finish(self) {
        assert!(self.failures.is_empty(), "{}", self.failures.join("\n\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mismatches_name_the_first_differing_line() {
        let text = describe_mismatch("a\nb\nc\n", "a\nx\nc\n");
        assert!(text.starts_with("first difference at line 2\n"), "{text}");
        assert_eq!(
            describe_mismatch("a\n", "a\nb\n").lines().next(),
            Some("first difference at line 2")
        );
    }

    #[test]
    fn check_collects_mismatches_and_missing_files() {
        let dir = std::env::temp_dir().join(format!("golden-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("expected.txt");
        fs::write(&file, "same\n").unwrap();
        let mut g = Goldens {
            bless: false,
            failures: Vec::new(),
            checked: 0,
        };
        g.check("ok", &file, "same\n");
        g.check("bad", &file, "other\n");
        g.check("missing", &dir.join("absent.txt"), "x");
        assert_eq!(g.checked(), 3);
        assert_eq!(g.failures.len(), 2);
        assert!(g.failures[0].starts_with("bad ("), "{}", g.failures[0]);
        assert!(g.failures[1].starts_with("missing: "), "{}", g.failures[1]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
